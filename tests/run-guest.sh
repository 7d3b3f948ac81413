#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Boot the busybox initramfs guest for one kernel, run the guest test
# programs, and judge the run.
#
#   tests/run-guest.sh [-i] [-M MIB] [-t PATTERN] [-s SELFTEST] [-c CMD] [-a ARG] [-K KARG] [-T SECS] KVER BUILD_DIR
#
#   -i          under TCG: one vCPU and a deterministic clock (QEMU -icount,
#               1 ns of guest time per guest instruction); the guest is told
#               with shiftfs.clock=icount.  Ignored under KVM.  Benchmarks.
#   -M MIB      guest memory (default 2048)
#   -t PATTERN  run only test programs whose name contains PATTERN (or
#               any of PATTERN,PATTERN...)
#   -s warn     load the self-test module that WARNs (runner self-test);
#   -s plant-B  the one that plants bug B (uaf, lockinv, leak: check-debug)
#   -s plant-mount  leave a shiftfs mount for the teardown to find; several
#               comma-separated (warn,plant-mount)
#   -c CMD      run CMD in the guest instead of the tests (benchmarks)
#   -a ARG      one more kernel argument for CMD to read (shiftfs.NAME=VALUE)
#   -K KARG     one more kernel argument for the kernel (slub_debug=FZ for
#               the debug kernels of make check-debug)
#   -T SECS     whole-guest timeout (default 1200)
#
# Failure is assumed until the guest says it finished: a guest that
# crashes, hangs or never reports counts as failed.  The kernel log is
# scanned (tests/scan-kernel-log.sh) and any WARN/BUG/Oops/lockdep/
# refcount report fails the run.  The last line is
# "N passed, N failed[, N skipped]".
set -u

usage="usage: $0 [-i] [-M MIB] [-t PATTERN] [-s SELFTEST] [-c CMD] [-a ARG] [-K KARG] [-T SECS] KVER BUILD_DIR"
icount=
extra=
mem=2048
tests=
selftest=
cmd=
limit=1200
while getopts iM:t:s:c:a:K:T: opt; do
	case $opt in
	i) icount=1 ;;
	M) mem=$OPTARG ;;
	t) tests=$OPTARG ;;
	s) selftest=$OPTARG ;;
	c) cmd=$OPTARG ;;
	a)
		case $OPTARG in
		shiftfs.*=*[!A-Za-z0-9_,.=-]*) echo "run-guest.sh: -a '$OPTARG': only shiftfs.NAME=VALUE, letters, digits and _,.=-" >&2; exit 2 ;;
		shiftfs.?*=*) extra="$extra $OPTARG" ;;
		*) echo "run-guest.sh: -a '$OPTARG': only shiftfs.NAME=VALUE" >&2; exit 2 ;;
		esac ;;
	K)
		case $OPTARG in
		*[!A-Za-z0-9_,.=-]*|'') echo "run-guest.sh: -K '$OPTARG': one kernel argument, letters, digits and _,.=-" >&2; exit 2 ;;
		*) extra="$extra $OPTARG" ;;
		esac ;;
	T) limit=$OPTARG ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
kver=$1
build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)

kernel=$build/$kver/kernel/boot/vmlinuz-$kver
initrd=$build/$kver/initramfs.cpio
logs=$build/$kver/logs
for f in "$kernel" "$initrd"; do
	[ -f "$f" ] || { echo "run-guest.sh: $f is missing" >&2; exit 1; }
done
mkdir -p "$logs"
console=$logs/console.log
tap=$logs/tap.log

# KVM if it works here, else TCG (tests/lib/kvm-probe.sh).
. "$here/lib/kvm-probe.sh"
accel=$(probe_accel "$build/accel" "$kernel")
smp=2
if [ "$accel" = kvm ]; then
	cpu="-accel kvm -cpu host"
	[ -n "$icount" ] && echo "run-guest.sh: -i ignored under KVM (its clock is real)"
	icount=
elif [ -n "$icount" ]; then
	# Guest time counts guest instructions: what the host is doing
	# meanwhile no longer shows in the guest's timings.  -icount runs
	# all vCPUs in one thread; a boot with two printed nothing in five
	# minutes here, with one it boots faster than multi-threaded TCG.
	cpu="-accel tcg -icount shift=0,sleep=off -cpu max"
	smp=1
else
	cpu="-accel tcg,thread=multi -cpu max"
fi

# no_timer_check: under TCG on a loaded host the IO-APIC timer check can
# fail and panic the guest before it runs anything.
append="console=ttyS0 panic=-1 oops=panic loglevel=4 rdinit=/init no_timer_check"
[ -n "$tests" ] && append="$append shiftfs.tests=$tests"
[ -n "$selftest" ] && append="$append shiftfs.selftest=$selftest"
[ -n "$cmd" ] && append="$append shiftfs.cmd=$cmd"
[ -n "$icount" ] && append="$append shiftfs.clock=icount"
append="$append$extra"

# boot: one guest boot, its TAP shown as it comes; qrc its exit status.
boot() {
	: > "$console"
	: > "$tap"
	start=$(date +%s)
	timeout -k 5 "$limit" qemu-system-x86_64 $cpu -m "$mem" -smp $smp \
		-nodefaults -display none -no-reboot \
		-kernel "$kernel" -initrd "$initrd" -append "$append" \
		-serial "file:$console" -serial "file:$tap" \
		</dev/null >"$logs/qemu.log" 2>&1 &
	qpid=$!
	tail -n +1 -f --pid=$qpid "$tap" 2>/dev/null | tr -d '\r'
	wait $qpid
	qrc=$?
	end=$(date +%s)
	echo "run-guest.sh: guest ran $((end - start))s (qemu exit $qrc)"
}

echo "run-guest.sh: booting $kver ($accel${icount:+, icount}), logs in $logs/"
rm -f "$logs/console.boot-crash.log"
boot
# A crash of the guest kernel itself while it boots, before its init
# and any module (tests/boot-crash.sh: the emulator, not us): once more,
# the first console kept.  Any other crash fails the run below.
if "$here/boot-crash.sh" "$console" "$tap"; then
	cp "$console" "$logs/console.boot-crash.log"
	echo "run-guest.sh: the guest kernel crashed while booting, before its init ran and before any module was loaded (an emulator fault: $logs/console.boot-crash.log); booting once more"
	boot
fi

failed_reasons=
if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	failed_reasons="guest TIMEOUT after ${limit}s"
fi
if ! grep -q '^SHIFTFS-GUEST-DONE' "$tap"; then
	failed_reasons="${failed_reasons:+$failed_reasons; }guest did not finish (crash or hang; see $console)"
fi
if ! grep -q '^SHIFTFS-DMESG-END' "$console"; then
	failed_reasons="${failed_reasons:+$failed_reasons; }guest kernel log incomplete"
fi
if ! kbad=$("$here/scan-kernel-log.sh" "$console"); then
	echo "run-guest.sh: kernel log reports:"
	echo "$kbad" | sed 's/^/  /' | head -n 40
	failed_reasons="${failed_reasons:+$failed_reasons; }kernel log shows WARN/BUG/Oops/lockdep/refcount reports"
fi

# Count TAP results per program (tests/tap-summary.awk).
awk -v reasons="$failed_reasons" -v cmdmode="$cmd" -f "$here/tap-summary.awk" "$tap"
