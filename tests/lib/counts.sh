# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# The one reading of a part's result line, "N passed, N failed[, N
# skipped]" (tests/run-guest.sh, the unit tests, tests/lib/tap.sh), for
# tests/check.sh and tests/check-debug.sh.
#
#   part_counts LOG RC
#
# prints "PASSED FAILED SKIPPED" from LOG's last result line.  A part
# that printed none, or that exited non-zero (RC) without counting a
# failure, failed: it counts one.  Returns 1 when there was no line.
part_counts() {
	local log=$1 rc=$2 line p f s
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" 2>/dev/null | tail -n 1)
	if [ -z "$line" ]; then
		echo "0 1 0"
		return 1
	fi
	p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
	s=$(echo "$line" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p')
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	echo "$p $f ${s:-0}"
}
