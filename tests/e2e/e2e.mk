# SPDX-License-Identifier: GPL-2.0
# The e2e tier (a Debian cloud image guest), for the top-level Makefile:
#
#   include tests/e2e/e2e.mk
#
# The guest image is built by images/cloud/ for a Debian release, 13
# (trixie: systemd 257, LXC 6.0, cloud-init 25.1) or 12 (bookworm:
# systemd 252, LXC 5.0, cloud-init 22.4), with that release's kernel;
# the runner, the demo and the scenarios live here.
#
# Uses TOP, BUILD, KVER, KVER_ASKED and the lazy KVER_<series> from the
# including Makefile, and its module, shiftctl and deb targets.
#
# (make help prints the "## " lines)
## End-to-end (a Debian cloud image guest, DEBIAN=13 (trixie, the default) or 12 (bookworm)):
##   e2e               every scenario on DEBIAN=13|12; E2E_TESTS=s1,s3 runs only those; KVER= a kernel of that release
##   e2e-one           (internal) the scenarios on DEBIAN (a KVER of another release is ignored: make test)
##   e2e-prepare       (internal) build or find cached the images e2e-one needs on DEBIAN (make test, in the background)
##   e2e-kver          (internal) the kernel DEBIAN's e2e guest boots (make test waits for its module)
##   e2e-demo          the narrated demo (scenarios 4, 1, 8), on KVER's release (6.1: Debian 12)
##   cloud-image       build (or reuse) the cached base image for DEBIAN (and KVER)
##   e2e-dkms-upgrade  Debian 13: the .debs on 6.12, upgrade to 7.3, DKMS rebuilds, reboot, container (~15-30 min TCG)
##   e2e-cloud-init    the README's cloud-init snippet as user-data on Debian 13 and 12 (SNIPPET_DEBIAN="13 12"), shiftctl check green (~2-3 min a boot TCG)

E2E_TESTS ?=
DEBIAN ?= 13
# The kernel each release's image boots unless KVER names another of the
# same release: its cloud kernel (make kvers shows what they resolve to).
E2E_SERIES_12 := 6.1
E2E_SERIES_13 := 6.12+deb13
E2E_RELEASE_12 := bookworm
E2E_RELEASE_13 := trixie
# make test: every scenario on Debian 13, and on Debian 12 these (the
# two releases' guests run side by side, tests/check.sh), chosen from
# the measured times to keep a cold make test within 45 minutes on 2
# cores: the container with LXC 5.0's hook error path (s1), attach (s2),
# the arm64 chroot (s3), the cover letter (s4), the packages on the
# release make deb builds them on (s5): about 35 s + 155-176 s (s5)
# after a 47-50 s boot; and the user's own containers on LXC 5.0 and
# systemd 252 (s10, then a reboot for r10: some 360 s and a second
# boot).  s5 takes the project's files away: it stays last.  Left to
# make e2e DEBIAN=12: the lifecycle (s6, 195 s), the build clones (s7,
# ~40 s) and the arm64 build container (s8, ~400 s).
E2E_SHORT_12 ?= s1,s2,s3,s4,s10,s5
# What make test runs after the fast tier: "DEBIAN[:SCENARIOS]" each.
E2E_RUNS ?= 13 12:$(E2E_SHORT_12)

.PHONY: cloud-image e2e e2e-one e2e-prepare e2e-kver e2e-demo e2e-dkms-upgrade e2e-cloud-init

# e2e_release: DEBIAN's codename, or a clear error.
e2e_release = $(or $(E2E_RELEASE_$(DEBIAN)),$(error DEBIAN=$(DEBIAN): the e2e tier boots Debian 12 (bookworm) or 13 (trixie); make e2e DEBIAN=12|13))
# The Debian release (codename) of the KVER given on the command line
# (images/kver.sh -s: no apt asked), or nothing.
e2e_kver_release = $(if $(KVER_ASKED),$(or $(shell $(TOP)/images/kver.sh -s $(KVER_ASKED) 2>/dev/null),$(error could not tell which Debian release ships KVER=$(KVER_ASKED); see make kvers)))
# e2e_kver_check: refuses a KVER of another release than DEBIAN's.
e2e_kver_check = $(if $(filter-out $(e2e_release),$(e2e_kver_release)),$(error KVER=$(KVER_ASKED) is a kernel of $(e2e_kver_release), not of Debian $(DEBIAN) ($(e2e_release)): make e2e DEBIAN=$(if $(filter bookworm,$(e2e_kver_release)),12,13) KVER=$(KVER_ASKED), or leave KVER out))
# E2E_KVER: the kernel DEBIAN's guest boots: KVER if it is of that
# release, else the release's own series (resolved once, from apt).
E2E_KVER = $(eval E2E_KVER := $$(if $$(filter $$(e2e_release),$$(e2e_kver_release)),$$(KVER),$$(KVER_$$(E2E_SERIES_$$(DEBIAN)))))$(E2E_KVER)

cloud-image:
	@: $(e2e_kver_check)
	@$(TOP)/images/setup-host.sh --e2e $(E2E_KVER)
	@$(TOP)/images/cloud/build-image.sh $(E2E_KVER) $(BUILD)

# Checked before anything is built: DEBIAN, and a KVER of its release.
e2e:
	@: $(e2e_kver_check)
	@$(MAKE) --no-print-directory e2e-one DEBIAN=$(DEBIAN)

e2e-one: shiftctl deb
	@: $(e2e_release)
	@$(MAKE) --no-print-directory module KVER=$(E2E_KVER)
	@$(TOP)/tests/e2e/run-e2e.sh $(if $(E2E_TESTS),-t $(E2E_TESTS)) $(E2E_KVER) $(BUILD)

# The images alone (base, container rootfs, arm64 for s8): make test
# builds them in the background while its fast tier runs (tests/check.sh).
e2e-prepare:
	@: $(e2e_release)
	@$(TOP)/tests/e2e/run-e2e.sh -P $(if $(E2E_TESTS),-t $(E2E_TESTS)) $(E2E_KVER) $(BUILD)

e2e-kver:
	@: $(e2e_release)
	@echo $(E2E_KVER)

e2e-demo: module shiftctl
	@$(TOP)/tests/e2e/demo.sh $(KVER) $(BUILD)

# The DKMS kernel-upgrade scene (Debian 13, trixie's 6.12 to the 7.3
# backport); not part of make test: it takes two slow boots.  Its kernels
# come from images/kver.sh, not KVER; the Debian 13 .debs from
# $(BUILD)/deb/trixie (make deb DEBIAN=13).
e2e-dkms-upgrade: setup-deb
	@$(MAKE) --no-print-directory deb DEBIAN=13
	@$(TOP)/tests/e2e/dkms-upgrade.sh $(BUILD)

# The README's cloud-init snippet (images/cloud-init/shiftfs.yaml) booted
# as is on each release in SNIPPET_DEBIAN, the release's .debs on a disk;
# not part of make test (one slow boot per release).  Its kernels come
# from images/kver.sh (each release's cloud kernel), not KVER.
SNIPPET_DEBIAN ?= 13 12
e2e-cloud-init: setup-deb
	@for d in $(SNIPPET_DEBIAN); do \
		$(MAKE) --no-print-directory deb DEBIAN=$$d || exit 1; \
	done
	@$(TOP)/tests/e2e/cloud-init-snippet.sh $(BUILD) $(SNIPPET_DEBIAN)
