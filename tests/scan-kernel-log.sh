#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scan a guest console/kernel log for reports that mean the kernel went
# wrong, whatever the tests said: WARN, BUG, Oops, lockdep, refcount,
# list corruption, hung tasks, UBSAN, panics.  A WARN reads "WARNING:
# CPU: N PID: N at FILE:LINE FUNC+0x..." up to 6.x and "WARNING: FILE:LINE
# at FUNC+0x... [MODULE], CPU#N: COMM/PID" since 7.x.
#
#   tests/scan-kernel-log.sh LOG
#
# Prints each offending line and exits 1 if there is one, else exits 0.
set -eu
log=$1
[ -r "$log" ] || { echo "scan-kernel-log.sh: cannot read $log" >&2; exit 2; }

# The debug kernels' detectors (make check-debug) add their own: KASAN,
# lockdep's and RCU's "WARNING: <what>" headers (any kernel-side line
# that starts with WARNING:), DEBUG_OBJECTS, DEBUG_ATOMIC_SLEEP ("BUG:
# sleeping function called"), kmemleak's report as the guest's teardown
# prints it.
pattern='(^|\] )WARNING: |KASAN: |suspicious RCU usage|ODEBUG: |unreferenced object 0x|WARNING: CPU:|WARNING: [^ ]+:[0-9]+ at [^ ]+\+0x|------------\[ cut here \]------------|BUG: |kernel BUG at|Oops:|general protection fault|Kernel panic|refcount_t: |possible circular locking|possible recursive locking|INFO: lockdep|inconsistent lock state|lockdep: |list_add corruption|list_del corruption|UBSAN: |blocked for more than [0-9]+ seconds|Unable to handle kernel|stack-protector|VFS: Busy inodes after unmount|kmemleak: [0-9]+ new suspected|Leaked (POSIX|FLOCK|LEASE) lock'

# Only kernel-side lines count: test programs echo their own names and
# messages on another port, but guard against a stray TAP line anyway.
hits=$(grep -aE "$pattern" "$log" | grep -avE '^(ok|not ok|#) ' || true)
if [ -n "$hits" ]; then
	echo "$hits"
	exit 1
fi
exit 0
