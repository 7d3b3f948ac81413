# SPDX-License-Identifier: GPL-2.0
# Summary of a guest's TAP stream, for tests/run-guest.sh and
# tests/e2e/run-e2e.sh.  The stream holds several programs, each opened by
# "# program: NAME" and closed by "# exit: NAME RC".  A program that exits
# non-zero without a "not ok", reports fewer results than its plan, or
# prints no plan counts as one failure; so does a run in which no test
# ran.  Skips are listed.  The last line is "N passed, N failed[, N
# skipped]"; the exit status is 1 if anything failed.
#
#   awk -v reasons=TEXT -v cmdmode=CMD -f tests/tap-summary.awk TAP
#
# reasons: why the runner already failed the guest (crash, kernel log),
# or empty.  cmdmode: non-empty when the guest ran a command (a
# benchmark) instead of test programs: no plan or count is required.
function close_prog() {
	if (prog == "")
		return
	if (!cmdmode && plan >= 0 && seen < plan) {
		failed++
		fails[++nf] = prog ": " (plan - seen) " planned tests never reported"
	}
	if (!cmdmode && plan < 0) {
		failed++
		fails[++nf] = prog ": printed no TAP plan"
	}
	if (rc != 0 && progfail == 0) {
		failed++
		fails[++nf] = prog ": exited " rc
	}
	prog = ""
}
{ sub(/\r$/, "") }
/^# program: / { close_prog(); prog = $3; plan = -1; seen = 0; rc = 0; progfail = 0; next }
/^# exit: / { rc = $4; next }
/^1\.\.[0-9]+/ { plan = substr($1, 4) + 0; next }
/^ok / {
	seen++
	if ($0 ~ /# *SKIP/) {
		skipped++
		sub(/^ok [0-9]+ (- )?/, "")
		skips[++ns] = prog ": " $0
	} else {
		passed++
	}
	next
}
/^not ok / {
	seen++; failed++; progfail++
	sub(/^not ok [0-9]+ (- )?/, "")
	fails[++nf] = prog ": " $0
	next
}
END {
	close_prog()
	if (reasons != "") {
		failed++
		fails[++nf] = "guest: " reasons
	}
	if (passed + failed == 0 && !cmdmode) {
		failed++
		fails[++nf] = "guest: no test ran"
	}
	if (ns) {
		print "SKIPPED:"
		for (i = 1; i <= ns; i++) print "  " skips[i]
	}
	if (nf) {
		print "FAILED:"
		for (i = 1; i <= nf; i++) print "  " fails[i]
	}
	printf "%d passed, %d failed", passed, failed
	if (skipped) printf ", %d skipped", skipped
	printf "\n"
	exit failed ? 1 : 0
}
