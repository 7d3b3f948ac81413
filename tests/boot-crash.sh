#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Did the guest kernel crash while booting, before its init ran and before
# any module was loaded?  Exit 0 if so, 1 if not.
#
#   tests/boot-crash.sh CONSOLE TAP
#
# Multi-threaded TCG once served a vCPU stale code while the kernel was
# patching its own text at boot (2026-12-07, 6.12.118+deb13, 15 s in:
# "Oops: int3" in sched_clock_cpu() from sched_init_debug(), with
# "Modules linked in:" empty).  That is the emulator, not anything of
# ours: the busybox init had not run, so neither shiftfs nor any other
# module was loaded, and no test had started.  run-guest.sh boots such
# a guest once more and says so; any other crash fails the run as
# before.  All of these must hold:
#   - the TAP port is empty: the init wrote nothing, no test started;
#   - the console has an Oops or a panic;
#   - every "Modules linked in:" line of it lists nothing;
#   - the console has no line of the init (shiftfs-init:) nor its end
#     marker.
set -u
console=$1
tap=$2
[ -r "$console" ] && [ -r "$tap" ] || exit 1
[ -s "$tap" ] && exit 1
grep -aqE 'Oops: |Kernel panic - not syncing' "$console" || exit 1
grep -aq 'Modules linked in:' "$console" || exit 1
grep -aE 'Modules linked in:' "$console" | grep -aqvE 'Modules linked in:[[:space:]]*$' && exit 1
grep -aqE 'shiftfs-init:|SHIFTFS-' "$console" && exit 1
exit 0
