#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Prove that the guest runner fails a run whose kernel log is not clean:
# first on canned logs (no guest), then with a real guest that loads a
# module which WARNs.  Prints TAP and "N passed, N failed".
#
#   tests/runner-selftest.sh KVER BUILD_DIR
set -u
kver=$1
build=$2
here=$(cd "$(dirname "$0")" && pwd)
n=0
pass=0
fail=0

check() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		pass=$((pass + 1))
		echo "ok $n $2"
	else
		fail=$((fail + 1))
		echo "not ok $n $2"
	fi
}

echo "TAP version 13"
echo "1..6"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '[    1.0] Linux version 6.1\n[    2.0] shiftfs-init: running x\n' > "$tmp/clean"
"$here/scan-kernel-log.sh" "$tmp/clean" >/dev/null
check $? "scan accepts a clean log"

for report in \
	'WARNING: CPU: 1 PID: 77 at fs/shiftfs/inode.c:12 shiftfs_x+0x1/0x2' \
	'BUG: kernel NULL pointer dereference, address: 0000000000000008' \
	'refcount_t: underflow; use-after-free.' \
	'WARNING: possible circular locking dependency detected'; do
	printf '[    1.0] boot\n[    3.0] %s\n' "$report" > "$tmp/bad"
	"$here/scan-kernel-log.sh" "$tmp/bad" >/dev/null
	[ $? -eq 1 ]
	check $? "scan rejects: ${report%%:*}"
done 2>/dev/null

# A real guest whose kernel WARNs while every test program passes must be
# reported as failed, and say why.
"$here/run-guest.sh" -s warn -t NO_SUCH_TEST_PROGRAM "$kver" "$build" > "$tmp/run" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q 'WARN' "$tmp/run" &&
   grep -q 'shiftfs_selftest_warn' "$tmp/run"; then
	check 0 "runner fails a guest run whose kernel WARNs"
else
	sed 's/^/# /' "$tmp/run"
	check 1 "runner fails a guest run whose kernel WARNs"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
