# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# TAP for the shell tests, sourced (POSIX sh: busybox ash in the guest,
# dash or bash on the host).  The fast guest installs it as
# /tests/lib/tap.sh (images/mkinitramfs.sh), the e2e guest beside its
# scenarios (images/cloud/mkpayload.sh); host tests find it at
# tests/lib/tap.sh.
#
#   tap_start                 "TAP version 13", counters to zero
#   tap_plan N                "1..N" up front (else tap_done prints it)
#   tap_ok NAME               "ok N NAME"
#   tap_not_ok NAME           "not ok N NAME"
#   tap_skip NAME REASON      "ok N NAME # SKIP REASON"
#   tap_skip_all REASON       "1..0 # SKIP REASON", and exit 0: nothing here
#                             can run
#   tap_check NAME TEST       eval TEST: ok or not ok; returns 1 on not ok
#   tap_run NAME CMD [ARG]... run CMD: ok if it exits 0, else not ok with
#                             its output as diagnostics; returns 1 on not ok
#   tap_eq NAME GOT WANT      ok if GOT is WANT, else not ok with both as
#                             diagnostics; returns 1 on not ok
#   tap_result RC NAME LOG    a test run as a program (a subshell): exit 0
#                             is ok, 77 a skip whose reason is LOG's last
#                             line, anything else not ok; LOG follows as
#                             diagnostics except for a skip
#   tap_diag TEXT...          "# TEXT", each line of TEXT so
#   tap_diag_file FILE        FILE, each line as "# line"
#   tap_done                  the plan if not given yet, then
#                             "N passed, N failed[, N skipped]" (the line
#                             tests/check.sh adds up); returns 1 if any
#                             test failed
#
# Use: tap_start; tests; tap_done; exit $?  (or end the script with it).

tap_start() {
	TAP_N=0
	TAP_PASS=0
	TAP_FAIL=0
	TAP_SKIP=0
	TAP_PLANNED=
	echo "TAP version 13"
}

tap_plan() {
	TAP_PLANNED=$1
	echo "1..$1"
}

tap_ok() {
	TAP_N=$((TAP_N + 1))
	TAP_PASS=$((TAP_PASS + 1))
	echo "ok $TAP_N $1"
}

tap_not_ok() {
	TAP_N=$((TAP_N + 1))
	TAP_FAIL=$((TAP_FAIL + 1))
	echo "not ok $TAP_N $1"
}

tap_skip() {
	TAP_N=$((TAP_N + 1))
	TAP_SKIP=$((TAP_SKIP + 1))
	echo "ok $TAP_N $1 # SKIP $2"
}

tap_skip_all() {
	echo "1..0 # SKIP $1"
	exit 0
}

tap_check() {
	if eval "$2"; then
		tap_ok "$1"
	else
		tap_not_ok "$1"
		return 1
	fi
}

tap_run() {
	_tap_name=$1
	shift
	if _tap_out=$("$@" 2>&1); then
		tap_ok "$_tap_name"
	else
		tap_not_ok "$_tap_name"
		[ -z "$_tap_out" ] || tap_diag "$_tap_out"
		return 1
	fi
}

tap_eq() {
	if [ "$2" = "$3" ]; then
		tap_ok "$1"
	else
		tap_not_ok "$1"
		tap_diag "got '$2', want '$3'"
		return 1
	fi
}

tap_result() {
	case $1 in
	0)
		tap_ok "$2"
		tap_diag_file "$3"
		;;
	77)
		tap_skip "$2" "$(tail -n 1 "$3")"
		;;
	*)
		tap_not_ok "$2"
		tap_diag_file "$3"
		;;
	esac
}

tap_diag() {
	printf '%s\n' "$*" | sed 's/^/# /'
}

tap_diag_file() {
	sed 's/^/# /' "$1"
}

tap_done() {
	[ -n "$TAP_PLANNED" ] || echo "1..$TAP_N"
	if [ "$TAP_SKIP" -gt 0 ]; then
		echo "$TAP_PASS passed, $TAP_FAIL failed, $TAP_SKIP skipped"
	else
		echo "$TAP_PASS passed, $TAP_FAIL failed"
	fi
	[ "$TAP_FAIL" -eq 0 ]
}
