# SPDX-License-Identifier: GPL-2.0
# The e2e tier (Debian 12 cloud image guest), for the top-level Makefile:
#
#   include tests/e2e/e2e.mk
#
# The guest image is built by images/cloud/; the runner, the demo and the
# scenarios live here.
#
# Uses TOP, BUILD and KVER from the including Makefile, and its module,
# shiftctl and deb targets.
#
# (make help prints the "## " lines)
## End-to-end (the Debian 12 cloud image guest):
##   e2e               the end-to-end scenarios; E2E_TESTS=s1,s3 runs only those
##   e2e-demo          the narrated demo (scenarios 4, 1, 8)
##   cloud-image       build (or reuse) the cached base image for KVER
##   e2e-dkms-upgrade  Debian 13: .debs on 6.12, upgrade to 7.3, DKMS rebuilds, reboot, container (~30 min TCG)

E2E_TESTS ?=

.PHONY: cloud-image e2e e2e-demo e2e-dkms-upgrade

cloud-image:
	@$(TOP)/images/setup-host.sh --e2e $(KVER)
	@$(TOP)/images/cloud/build-image.sh $(KVER) $(BUILD)

e2e: module shiftctl deb
	@$(TOP)/tests/e2e/run-e2e.sh $(if $(E2E_TESTS),-t $(E2E_TESTS)) $(KVER) $(BUILD)

e2e-demo: module shiftctl
	@$(TOP)/tests/e2e/demo.sh $(KVER) $(BUILD)

# The DKMS kernel-upgrade scene (Debian 13, trixie's 6.12 to the 7.3
# backport); not part of make test: it takes two slow boots.  Its kernels
# come from images/kver.sh, not KVER; the Debian 13 .debs from
# $(BUILD)/deb/trixie, else those of make deb.
e2e-dkms-upgrade: deb
	@$(TOP)/tests/e2e/dkms-upgrade.sh $(BUILD)
