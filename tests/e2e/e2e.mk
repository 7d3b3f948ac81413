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

E2E_TESTS ?=

.PHONY: cloud-image e2e e2e-demo

cloud-image:
	@$(TOP)/images/setup-host.sh --e2e $(KVER)
	@$(TOP)/images/cloud/build-image.sh $(KVER) $(BUILD)

e2e: module shiftctl deb
	@$(TOP)/tests/e2e/run-e2e.sh $(if $(E2E_TESTS),-t $(E2E_TESTS)) $(KVER) $(BUILD)

e2e-demo: module shiftctl
	@$(TOP)/tests/e2e/demo.sh $(KVER) $(BUILD)
