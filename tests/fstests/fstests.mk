# SPDX-License-Identifier: GPL-2.0
# make fstests: fstests through shiftfs (tests/fstests/run.sh), included
# from the Makefile.  Not part of make check or make test (hours under
# TCG); docs/testing.md, "fstests", says how it runs.
#
##   fstests           fstests (FSTESTS=DIR: a checkout at tests/fstests/PINNED) through shiftfs on ext4 and xfs, identity and shifted maps, baseline on the plain fs, on 6.1 and 7.3 (or KVER); FSTESTS_GROUPS=, FSTESTS_TESTS= pick the tests

FSTESTS ?=
FSTESTS_SERIES ?= 6.1 7.3
FSTESTS_KVERS = $(if $(KVER_ASKED),$(KVER),$(foreach s,$(FSTESTS_SERIES),$(KVER_$(s))))

.PHONY: fstests
fstests:
	@$(TOP)/tests/fstests/check-src.sh "$(FSTESTS)"
	@$(MAKE) --no-print-directory setup KVER_SERIES="$(FSTESTS_SERIES)"
	@missing=; for p in mmdebstrap patch cpio; do \
		command -v $$p >/dev/null || missing="$$missing $$p"; \
	done; [ -z "$$missing" ] || apt-get install -y -q --no-install-recommends $$missing
	@rc=0; for k in $(FSTESTS_KVERS); do \
		$(TOP)/images/fetch-kernel.sh $$k $(BUILD) && \
		$(MAKE) --no-print-directory module-one K=$$k && \
		FSTESTS="$(FSTESTS)" $(TOP)/tests/fstests/run.sh $$k $(BUILD) || rc=1; \
	done; \
	echo "make fstests: summaries in $(BUILD)/fstests/*/summary.txt"; \
	for k in $(FSTESTS_KVERS); do cat $(BUILD)/fstests/$$k/summary.txt 2>/dev/null; done; \
	exit $$rc
