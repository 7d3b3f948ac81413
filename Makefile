# SPDX-License-Identifier: GPL-2.0
#
# shiftfs: the one entry point.  "make help" prints the "## " lines of
# this file and of tests/e2e/e2e.mk: one line for every target (a new
# target needs its line; tests/make-test.sh checks, in make check).
#
## Usage: make [TARGET] [KVER=SERIES|RELEASE (make kvers)] [TESTS=PATTERN] [DEBIAN=13|12] [E2E_TESTS=s1,...]
## Start with:
##   all               (the default) build the module for KVER, and shiftctl
##   check             host tests and lint-fast, runner self-test, then the guest suite on every kernel of KVER_SERIES (or KVER)
##   test              check, then e2e in full on Debian 13 and E2E_SHORT_12 on Debian 12, one summary
##   demo              the cover letter's scenes, narrated, in the cloud image guest (Debian 13; KVER=6.1: Debian 12)
##   install           shiftctl, man page, LXC hook, module source for DKMS
## Build:
##   module            shiftfs.ko for KVER, against linux-headers-KVER (KDIR=... is refused)
##   shiftctl          the shiftctl tool, in build/shiftctl/
##   guest-tests       the guest test programs, in build/tests/guest/
##   bench-helpers     the benchmark helpers, in build/tests/bench/
##   initramfs         the busybox guest's initramfs for KVER (module, shiftctl, tests)
##   module-one        (internal) shiftfs.ko for the release K=RELEASE
##   module-arm64      shiftfs.ko for the arm64 kernel of each of KVER_SERIES (or KVER), cross-built with W=1, none booted
##   initramfs-one     (internal) kernel and initramfs for the release K=RELEASE
##   deb               the shiftctl and shiftfs-dkms .debs (debian/, dpkg-buildpackage, lintian) for DEBIAN=12 (default) or 13, in build/deb/RELEASE/
## Tests and checks:
##   check-unit        the host unit tests only
##   check-guest       the guest suite on KVER only; TESTS=PATTERN narrows it
##   check-runner      the guest runner's own test (canned logs, a guest that WARNs)
##   check-debug       on a debug kernel (KASAN, lockdep, UBSAN, kmemleak...) built once from Debian's source for KVER (6.1, 6.12+deb13, 7.3): the guest suite, STRESS_SECS of races, planted bugs caught
##   lint              checkpatch, W=1, sparse on the module, W=1 on arm64; shellcheck on every shell file; lintian on the .debs of Debian 12 and 13
##   lint-fast         lint's parts that take seconds (in check): shellcheck on every shell file, the host's checkpatch on the module
##   demo-fast         the cover letter's scene alone, in the busybox guest (~30 s)
##   bench             benchmarks in a guest (not tests), in build/bench/
##   kvers             what KVER (and the kernels make check uses) resolve to
## Install:
##   install-userspace shiftctl, man page, completion, LXC hook and config
##   install-dkms-src  the module source and dkms.conf under /usr/src
##   uninstall         remove what install put there
##   dkms-install      register, build and install the module with DKMS for KVER
## Set-up (install missing Debian packages, as root):
##   setup             everything the tests need for the kernels in use
##   setup-userspace   compiler and libraries for shiftctl
##   setup-deb         setup-userspace, debhelper, dh-dkms and lintian
##   setup-module      setup-userspace and linux-headers-KVER
##   setup-dkms        setup-module and dkms
##   setup-lint        setup-module, setup-deb's packages, sparse, shellcheck, checkpatch's needs, mmdebstrap
## Other:
##   clean             remove build/ (kernels, images, everything built)
##   help              this list
#
# KVER selects the kernel: a series (6.1, 6.12+deb12, 6.12+deb13, 7.3,
# 7.2) or a release (6.1.0-57-cloud-amd64, 7.3.4+deb13-amd64).  Releases
# are resolved from apt, never hard-coded; the module is built in a chroot
# of the Debian release that ships the kernel (make kvers shows which).
# Everything built or downloaded goes under build/ (git-ignored).

SHELL := /bin/bash
TOP := $(CURDIR)
BUILD := $(TOP)/build

# Kernel releases are asked of apt lazily, the first time a recipe that
# needs one expands them, and then kept: "VAR = $(eval VAR := ...)$(VAR)"
# runs kver.sh once.  install, deb, shiftctl and the like never ask apt.
resolve_kver = $(or $(shell $(TOP)/images/kver.sh -b $(BUILD) $(1)),$(error could not resolve KVER '$(1)' from apt; see images/kver.sh))

# The kernel series make check and make test run on without KVER, one
# guest suite each: every kernel Debian ships today (make kvers).
# KVER_SERIES=... on the command line narrows a run.
KVER_SERIES_ALL := 6.1 6.12+deb12 6.12+deb13 7.3 7.2
KVER_SERIES ?= $(KVER_SERIES_ALL)
define lazy_kver
KVER_$(1) = $$(eval KVER_$(1) := $$$$(call resolve_kver,$(1)))$$(KVER_$(1))
endef
$(foreach s,$(KVER_SERIES_ALL) 6.12,$(eval $(call lazy_kver,$(s))))

ifeq ($(origin KVER),command line)
KVER_ASKED := $(KVER)
override KVER = $(eval override KVER := $$(call resolve_kver,$$(KVER_ASKED)))$(KVER)
KVERS = $(KVER)
else
KVER = $(KVER_6.1)
KVERS = $(foreach s,$(KVER_SERIES),$(KVER_$(s)))
endif

# The module is built against linux-headers-KVER: a KDIR given here would
# be ignored, so it is refused (module/Makefile takes KDIR, for a tree of
# one's own).
ifneq ($(filter command line environment,$(origin KDIR)),)
$(error KDIR=$(KDIR) is not used by this Makefile: the module is built against linux-headers-KVER (pick the kernel with KVER=6.1, 6.12 or a release); for another kernel tree: make -C module KDIR=$(KDIR))
endif
TESTS ?=

CC ?= cc
TEST_CFLAGS := -O2 -g -Wall -Wextra -Werror -std=gnu11 -I$(TOP)/tests
TEST_LDLIBS := -lcap -lpthread

GUEST_TEST_SRCS := $(wildcard tests/guest/*.c)
GUEST_TEST_SCRIPTS := $(wildcard tests/guest/*.sh)
GUEST_TEST_BINS := $(patsubst tests/guest/%.c,$(BUILD)/tests/guest/%,$(GUEST_TEST_SRCS)) \
		   $(patsubst tests/guest/%.sh,$(BUILD)/tests/guest/%,$(GUEST_TEST_SCRIPTS))
MODULE_SRCS := $(wildcard module/*.c module/*.h) module/Kbuild

.PHONY: all setup setup-userspace setup-deb setup-module setup-dkms setup-lint module module-arm64 shiftctl guest-tests initramfs check check-unit check-debug \
	check-guest check-runner test demo demo-fast bench install uninstall clean \
	lint lint-fast kvers bench-helpers install-userspace install-dkms-src dkms-install deb

all: module shiftctl

# Every supported series, the release apt resolves it to now, and the
# Debian release (suite) that ships it; then what this run would use.
kvers:
	@$(TOP)/images/kver.sh -b $(BUILD) -l $(KVER_SERIES_ALL)
	@echo "KVER=$(KVER)"; echo "KVERS=$(KVERS)"

.PHONY: help
help:
	@sed -n 's/^## \{0,1\}//p' $(MAKEFILE_LIST)

# Install what is missing (a no-op when all is there).  setup is
# everything the tests need, for every kernel this run uses; the others
# are what one target needs, so that installing the tools never pulls in
# QEMU, stress-ng or kernel headers (images/setup-host.sh).
setup:
	@$(TOP)/images/setup-host.sh $(KVERS)

setup-userspace:
	@$(TOP)/images/setup-host.sh --userspace

setup-deb:
	@$(TOP)/images/setup-host.sh --deb

setup-module:
	@$(TOP)/images/setup-host.sh --module $(KVER)

setup-dkms:
	@$(TOP)/images/setup-host.sh --dkms $(KVER)

setup-lint:
	@$(TOP)/images/setup-host.sh --lint $(KVERS)

# ---- module ---------------------------------------------------------------

# Built in a copy under build/KVER/module so that the source tree stays
# clean and each kernel keeps its own objects.
module: setup-module
	@$(MAKE) --no-print-directory module-one K=$(KVER)

module-one: $(BUILD)/$(K)/shiftfs.ko

# kbuild.sh builds on the host for bookworm's kernels and in the chroot
# of the Debian release that ships any other (build/chroots/RELEASE).
$(BUILD)/%/shiftfs.ko: $(MODULE_SRCS)
	@mkdir -p $(BUILD)/$*/module
	@cp -p $(MODULE_SRCS) $(BUILD)/$*/module/
	@$(TOP)/images/kbuild.sh $* M=$(BUILD)/$*/module modules || \
		{ echo "make: module/ did not build for $* (see the errors above)" >&2; exit 1; }
	cp $(BUILD)/$*/module/shiftfs.ko $@

# The module for the arm64 kernel of each kernel in KVERS (same Debian
# release, ABI and flavour: 7.3.4+deb13-cloud-amd64 -> -cloud-arm64),
# cross-compiled with W=1 in the chroot of that release, bookworm's too
# (images/cross.sh: its headers, the gcc-N-aarch64-linux-gnu the kernel
# was built with); any warning fails it.  Into build/RELEASE/shiftfs.ko.
# Never booted.
module-arm64:
	@$(TOP)/images/setup-host.sh --arm64
	@for k in $(KVERS); do \
		a=$$($(TOP)/images/cross.sh -r $$k) || exit 1; \
		d=$(BUILD)/$$a/module; rm -rf $$d; mkdir -p $$d; \
		cp -p $(MODULE_SRCS) $$d/; \
		$(TOP)/images/cross.sh $$k M=$$d W=1 modules > $$d/build.log 2>&1; rc=$$?; \
		grep -vE '^  (CC|LD|MODPOST|BTF)|^make(\[[0-9]+\])?: (Entering|Leaving)|^Skipping BTF' $$d/build.log; \
		[ $$rc -eq 0 ] || { echo "make: module/ did not build for $$a (see the errors above)" >&2; exit 1; }; \
		! grep -qiE '(warning|error):' $$d/build.log || \
			{ echo "make: W=1 warnings for $$a (above; log $$d/build.log)" >&2; exit 1; }; \
		cp $$d/shiftfs.ko $(BUILD)/$$a/shiftfs.ko; \
		echo "module-arm64: $(BUILD)/$$a/shiftfs.ko ($$(file -b $$d/shiftfs.ko | cut -d, -f1,2))"; \
	done

# The runner's self-test modules: one WARNs, one plants a bug for the
# debug kernels' detectors (make check-debug).  Never installed.
SELFTEST_SRCS := $(wildcard tests/selftest/*.c) tests/selftest/Kbuild
$(BUILD)/%/selftest/shiftfs_selftest_warn.ko: $(SELFTEST_SRCS)
	@mkdir -p $(BUILD)/$*/selftest
	@cp -p $^ $(BUILD)/$*/selftest/
	@$(TOP)/images/kbuild.sh $* M=$(BUILD)/$*/selftest modules

# checkpatch.pl, then W=1 and sparse on every kernel in KVERS: any
# warning not in module/lint-accept (each entry says why) fails it
# (tests/lint.sh; its own test is tests/lint-test.sh, run by make check).
# Then shellcheck on every shell file (tests/lint-shell.sh, accept list
# tests/shellcheck-accept), then the packages of every Debian release in
# DEB_RELEASES built and checked by that release's lintian (make deb);
# all run, any failing fails lint.  -A: W=1 on each kernel's arm64
# counterpart too (as make module-arm64).
lint: setup-lint
	@rc=0; $(TOP)/tests/lint.sh -A $(TOP)/module $(BUILD) $(KVERS) || rc=1; \
	$(TOP)/tests/lint-shell.sh $(TOP) || rc=1; \
	for r in $(DEB_RELEASES); do \
		$(TOP)/images/deb/build-debs.sh $$r $(TOP) $(BUILD) || rc=1; \
	done; exit $$rc

# The parts of lint that take seconds, each with its accept list; make
# check runs them too.  tests/lint-fast.sh installs its own tools
# (images/setup-host.sh --lint-fast: shellcheck, perl, xz-utils).
lint-fast:
	@$(TOP)/tests/lint-fast.sh $(TOP) $(BUILD)

# ---- userspace ------------------------------------------------------------

shiftctl: setup-userspace
	@if [ -f shiftctl/Makefile ]; then \
		$(MAKE) --no-print-directory -C shiftctl BUILD=$(BUILD)/shiftctl; \
	fi

$(BUILD)/tests/guest/%: tests/guest/%.c tests/harness.h $(wildcard tests/guest/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_LDLIBS)

$(BUILD)/tests/guest/%: tests/guest/%.sh
	@mkdir -p $(dir $@)
	install -m 755 $< $@

guest-tests: $(GUEST_TEST_BINS)

bench-helpers: setup-userspace
	@$(MAKE) --no-print-directory -C tests/bench BUILD=$(BUILD)/tests/bench

# ---- guest ----------------------------------------------------------------

initramfs: setup module shiftctl guest-tests bench-helpers
	@$(MAKE) --no-print-directory initramfs-one K=$(KVER)

initramfs-one:
	@$(TOP)/images/fetch-kernel.sh $(K) $(BUILD)
	@$(MAKE) --no-print-directory $(BUILD)/$(K)/shiftfs.ko \
		$(BUILD)/$(K)/selftest/shiftfs_selftest_warn.ko
	@$(TOP)/images/mkinitramfs.sh $(K) $(BUILD) $(BUILD)/$(K)/initramfs.cpio

# The guest suite on one kernel (KVER); TESTS=pattern narrows it.
check-guest: initramfs
	@$(TOP)/tests/run-guest.sh $(if $(TESTS),-t $(TESTS)) $(KVER) $(BUILD)

# ---- tests ----------------------------------------------------------------

check-unit: shiftctl
	@if [ -f tests/unit/Makefile ]; then \
		$(MAKE) --no-print-directory -C tests/unit BUILD=$(BUILD)/unit check; \
	fi

check-runner: initramfs
	@$(TOP)/tests/runner-selftest.sh $(KVER) $(BUILD)

# The kernel's own bug detectors: a kernel built from Debian's
# linux-source with them on (images/debug-kernel.sh; 20-35 minutes on
# 2 cores, once, cached in build/debug/), the module built against it,
# the whole guest suite, the race pass for STRESS_SECS seconds a race,
# and three planted bugs each caught (tests/check-debug.sh).  KVER is a
# series here: 6.1 (the default), 6.12+deb13 or 7.3.
STRESS_SECS ?= 600
check-debug: setup shiftctl guest-tests bench-helpers
	@$(TOP)/tests/check-debug.sh $(or $(KVER_ASKED),6.1) $(BUILD) $(STRESS_SECS)

# Fast tier: unit tests, the fast lint (lint-fast), the runner's own
# test, then the guest suite on every kernel in KVERS.  Each part prints
# "N passed, N failed"; the summary at the end adds them up.
check: setup
	@$(TOP)/tests/check.sh "$(KVERS)" $(BUILD) $(if $(TESTS),$(TESTS))

# Full run: the fast tier, then the end-to-end scenarios in the cloud
# image guests, E2E_RUNS (tests/e2e/e2e.mk): every one on Debian 13, a
# shorter list (E2E_SHORT_12) on Debian 12, each on its release's kernel
# (or KVER's, where KVER is of that release).  One summary at the end, a
# line per kernel and per Debian release; each part must pass.
test: setup
	@$(TOP)/tests/check.sh -e "$(E2E_RUNS)" "$(KVERS)" $(BUILD) $(if $(TESTS),$(TESTS))

# The narrated demo in the cloud image guest: the cover letter's scene, an
# unprivileged LXC container on a root-owned rootfs, and arch emulation;
# on Debian 13, the stable release (its 6.12), unless KVER names a kernel
# (KVER=6.1: Debian 12).
demo: setup
	@$(MAKE) --no-print-directory e2e-demo KVER=$(if $(KVER_ASKED),$(KVER),$(KVER_6.12+deb13))

# The cover letter's scene alone, in the fast busybox guest (~30 s).
demo-fast: setup
	@$(MAKE) --no-print-directory initramfs
	@$(TOP)/tests/run-guest.sh -c /usr/libexec/shiftfs/demo-cover-letter $(KVER) $(BUILD)

# Benchmarks (not tests): plain, shiftfs, idmapped, bindfs and chown -R
# side by side in one guest boot, then the parallel workers in a second
# (wall clock, 2 vCPUs); results in build/bench/<kernel>/.
bench: setup
	@$(MAKE) --no-print-directory initramfs
	@$(TOP)/tests/bench/run-bench.sh $(KVER) $(BUILD)

include tests/e2e/e2e.mk
include tests/fstests/fstests.mk

# ---- installation ---------------------------------------------------------

VERSION := $(shell cat $(TOP)/VERSION)
PREFIX ?= /usr/local
DESTDIR ?=
SBINDIR := $(PREFIX)/sbin
MANDIR := $(PREFIX)/share/man
COMPLETIONDIR := $(PREFIX)/share/bash-completion/completions
# Where LXC looks for hooks and config snippets of a given prefix
# (Debian's lxc package: /usr/share/lxc/{hooks,config}).
LXCHOOKDIR := $(PREFIX)/share/lxc/hooks
LXCCONFDIR := $(PREFIX)/share/lxc/config
# AppArmor loads profiles from /etc/apparmor.d only, whatever the prefix.
APPARMORDIR := /etc/apparmor.d
# The profiles' loader (lxc-hook/shiftfs-apparmor) and the rule it puts
# in place where apparmor_parser takes it.
SHIFTFSLIBDIR := $(PREFIX)/lib/shiftfs
# systemd's unit directory: Debian's own for PREFIX=/usr (the packages),
# else PREFIX/lib/systemd/system, which systemd reads too.
UNITDIR := $(if $(filter /usr,$(PREFIX)),$(or $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null),/lib/systemd/system),$(PREFIX)/lib/systemd/system)
SYSTEMD_LIVE := [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]
# debian/rules installs the unit with dh_installsystemd instead.
INSTALL_UNIT ?= yes
# DKMS only looks in /usr/src, whatever the prefix.
DKMSSRCDIR := /usr/src/shiftfs-$(VERSION)
DKMS_FILES := $(wildcard module/*.c module/*.h) module/Kbuild module/Makefile

INSTALLED_USERSPACE := $(SBINDIR)/shiftctl $(MANDIR)/man8/shiftctl.8 \
	$(COMPLETIONDIR)/shiftctl $(LXCHOOKDIR)/shiftfs $(LXCCONFDIR)/shiftfs.conf \
	$(APPARMORDIR)/shiftfs-lxc-hook $(APPARMORDIR)/lxc-container-shiftfs-user \
	$(SHIFTFSLIBDIR)/shiftfs-apparmor \
	$(SHIFTFSLIBDIR)/lxc-container-shiftfs-user.nosymfollow \
	$(UNITDIR)/shiftfs-marks.service

install: install-userspace install-dkms-src

install-userspace: shiftctl
	$(MAKE) --no-print-directory -C shiftctl install BUILD=$(BUILD)/shiftctl \
		PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	install -D -m 644 shiftctl/shiftctl.bash-completion $(DESTDIR)$(COMPLETIONDIR)/shiftctl
	install -D -m 755 lxc-hook/shiftfs $(DESTDIR)$(LXCHOOKDIR)/shiftfs
	install -d $(DESTDIR)$(LXCCONFDIR)
	sed 's|@LXCHOOKDIR@|$(LXCHOOKDIR)|g' lxc-hook/shiftfs.conf > $(DESTDIR)$(LXCCONFDIR)/shiftfs.conf
	chmod 644 $(DESTDIR)$(LXCCONFDIR)/shiftfs.conf
	install -D -m 644 lxc-hook/shiftfs-lxc-hook.apparmor $(DESTDIR)$(APPARMORDIR)/shiftfs-lxc-hook
	install -D -m 644 lxc-hook/lxc-container-shiftfs-user.apparmor $(DESTDIR)$(APPARMORDIR)/lxc-container-shiftfs-user
	install -D -m 755 lxc-hook/shiftfs-apparmor $(DESTDIR)$(SHIFTFSLIBDIR)/shiftfs-apparmor
	install -D -m 644 lxc-hook/lxc-container-shiftfs-user.nosymfollow \
		$(DESTDIR)$(SHIFTFSLIBDIR)/lxc-container-shiftfs-user.nosymfollow
	@if [ -z "$(DESTDIR)" ] && command -v apparmor_parser > /dev/null; then \
		echo "$(SHIFTFSLIBDIR)/shiftfs-apparmor load"; \
		$(SHIFTFSLIBDIR)/shiftfs-apparmor load || exit 1; \
	fi
ifeq ($(INSTALL_UNIT),yes)
	install -d $(DESTDIR)$(UNITDIR)
	sed 's|@SBINDIR@|$(SBINDIR)|g' shiftctl/shiftfs-marks.service > $(DESTDIR)$(UNITDIR)/shiftfs-marks.service
	chmod 644 $(DESTDIR)$(UNITDIR)/shiftfs-marks.service
endif
	@if [ "$(INSTALL_UNIT)" = yes ] && $(SYSTEMD_LIVE); then \
		echo "systemctl enable shiftfs-marks.service"; \
		systemctl daemon-reload && systemctl enable shiftfs-marks.service; \
	fi

install-dkms-src:
	install -d $(DESTDIR)$(DKMSSRCDIR)
	install -m 644 $(DKMS_FILES) $(DESTDIR)$(DKMSSRCDIR)/
	sed 's/#MODULE_VERSION#/$(VERSION)/g' module/dkms.conf > $(DESTDIR)$(DKMSSRCDIR)/dkms.conf
	chmod 644 $(DESTDIR)$(DKMSSRCDIR)/dkms.conf

# Removes exactly what install put there, then the directories install
# created if they are left empty.
uninstall:
	@if [ -z "$(DESTDIR)" ] && [ -x $(SHIFTFSLIBDIR)/shiftfs-apparmor ]; then \
		$(SHIFTFSLIBDIR)/shiftfs-apparmor unload; \
		$(SHIFTFSLIBDIR)/shiftfs-apparmor purge; \
	fi
	@if [ -f $(DESTDIR)$(UNITDIR)/shiftfs-marks.service ] && $(SYSTEMD_LIVE); then \
		systemctl disable --now shiftfs-marks.service || true; \
	fi
	rm -f $(addprefix $(DESTDIR),$(INSTALLED_USERSPACE))
	rm -f $(addprefix $(DESTDIR)$(DKMSSRCDIR)/,$(notdir $(DKMS_FILES)) dkms.conf)
	-rmdir $(DESTDIR)$(DKMSSRCDIR) 2>/dev/null
	@for d in $(SBINDIR) $(MANDIR)/man8 $(MANDIR) $(COMPLETIONDIR) \
		$(PREFIX)/share/bash-completion $(LXCHOOKDIR) $(LXCCONFDIR) \
		$(PREFIX)/share/lxc $(PREFIX)/share $(UNITDIR) $(PREFIX)/lib/systemd \
		$(SHIFTFSLIBDIR) \
		$(PREFIX)/lib $(PREFIX) /usr/src /usr $(APPARMORDIR) /etc; do \
		[ -n "$(DESTDIR)" ] || case $$d in /usr|/usr/src|/usr/local|/usr/share|/usr/local/share|/usr/sbin|/usr/local/sbin|/usr/lib|/usr/local/lib|/lib|/etc|/etc/apparmor.d) continue;; esac; \
		rmdir $(DESTDIR)$$d 2>/dev/null || true; \
	done

# Register, build and install the module with DKMS for KVER (run on the
# machine that will load it, never needed for the tests).
dkms-install: setup-dkms install-dkms-src
	dkms add -m shiftfs -v $(VERSION) || true
	dkms build -m shiftfs -v $(VERSION) -k $(KVER)
	dkms install -m shiftfs -v $(VERSION) -k $(KVER)

# The packages from debian/ (dpkg-buildpackage -b) for one Debian
# release: 12 on the host, 13 in its chroot (build/chroots/trixie), each
# checked by its release's lintian; in build/deb/RELEASE/.  DEBIAN
# from the command line picks the release (make e2e-one passes its own),
# else the host's, 12 (DEBIAN's default, 13, is the e2e tier's).
DEB_DEBIAN = $(if $(filter command line,$(origin DEBIAN)),$(DEBIAN),12)
DEB_RELEASE_12 := bookworm
DEB_RELEASE_13 := trixie
DEB_RELEASES := $(DEB_RELEASE_12) $(DEB_RELEASE_13)
deb: setup-deb
	@$(TOP)/images/deb/build-debs.sh $(or $(DEB_RELEASE_$(DEB_DEBIAN)),$(error DEBIAN=$(DEB_DEBIAN): 12 (bookworm) or 13 (trixie))) $(TOP) $(BUILD)

clean:
	rm -rf $(BUILD)
