#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The fast lint, part of "make check" (and "make lint-fast"): the parts of
# "make lint" that take seconds, so that a finding is seen before CI.
# Two tools, side by side: shellcheck on every shell file of TOP with
# tests/shellcheck-accept (tests/lint-shell.sh: unlisted findings, inline
# disables, entries without a reason or matching nothing), and
# checkpatch.pl on TOP/module with module/lint-accept (tests/lint.sh -C:
# unlisted findings, entries without a reason, a checkpatch that dies).
# The checkpatch.pl is the host release's newest linux-source's
# (images/fetch-checkpatch.sh, cached in BUILD_DIR/checkpatch/, the one
# make check's lint test uses too).  What stays in "make lint" (minutes):
# the checkpatch.pl of each kernel's own release, W=1 and sparse on every
# kernel, W=1 on arm64, lintian on the .debs.
#
# It installs what it needs first (images/setup-host.sh --lint-fast:
# the shellcheck, perl and xz-utils packages; no compiler, headers or
# chroots).  Prints TAP and "N passed, N failed"; exits 1 if any test
# failed.
#
#   tests/lint-fast.sh [-c CHECKPATCH] TOP BUILD_DIR
#
#   -c CHECKPATCH  the checkpatch.pl to use instead of fetching one (the
#                  lint's own test)
#
# Logs in BUILD_DIR/lint-fast/.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/tap.sh"

checkpatch=
while getopts c: opt; do
	case $opt in
	c) checkpatch=$OPTARG ;;
	*) echo "usage: $0 [-c CHECKPATCH] TOP BUILD_DIR" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { echo "usage: $0 [-c CHECKPATCH] TOP BUILD_DIR" >&2; exit 2; }
top=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" || exit 2
build=$(cd "$2" && pwd)
out=$build/lint-fast
rm -rf "$out"
mkdir -p "$out"

# diag_log LOG: its lines but the list of accepted findings
diag_log() {
	grep -v '^  accepted: ' "$1" | sed 's/^/# /'
}

tap_start
if "$here/../images/setup-host.sh" --lint-fast > "$out/setup.log" 2>&1; then
	tap_ok "shellcheck, perl, xz-utils installed (images/setup-host.sh --lint-fast)"
else
	tap_diag_file "$out/setup.log"
	tap_not_ok "shellcheck, perl, xz-utils installed (images/setup-host.sh --lint-fast)"
fi

# The shell lint runs in the background while checkpatch.pl is fetched
# and run.
"$here/lint-shell.sh" "$top" > "$out/shellcheck.out" 2>&1 &
sc_pid=$!

if [ -z "$checkpatch" ]; then
	if checkpatch=$("$here/../images/fetch-checkpatch.sh" "$build" 2> "$out/fetch.log"); then
		tap_ok "checkpatch.pl fetched ($(basename "$(dirname "$checkpatch")"))"
	else
		tap_diag_file "$out/fetch.log"
		tap_not_ok "checkpatch.pl fetched (images/fetch-checkpatch.sh)"
		checkpatch=
	fi
fi
cp_name="checkpatch: module/*.c *.h, accept list module/lint-accept"
if [ -n "$checkpatch" ]; then
	if "$here/lint.sh" -C -c "$checkpatch" "$top/module" "$out" > "$out/checkpatch.out" 2>&1; then
		tap_ok "$cp_name"
		tail -n 1 "$out/checkpatch.out" | sed 's/^/# /'
	else
		diag_log "$out/checkpatch.out"
		tap_not_ok "$cp_name"
	fi
else
	tap_not_ok "$cp_name: no checkpatch.pl"
fi

sc_name="shellcheck: every shell file, accept list tests/shellcheck-accept"
if wait "$sc_pid"; then
	tap_ok "$sc_name"
	tail -n 1 "$out/shellcheck.out" | sed 's/^/# /'
else
	diag_log "$out/shellcheck.out"
	tap_not_ok "$sc_name"
fi

tap_done
