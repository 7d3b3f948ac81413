#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Host side of `make bench`: boot the fast guest once with the
# benchmark as its command, then save the tables it prints.
#
#   tests/bench/run-bench.sh [-T SECS] KVER BUILD_DIR
#
# BENCH_CLOCK=icount (the default) runs a TCG guest on one vCPU with QEMU's
# -icount clock: guest time is the guest's instruction count (1 ns each),
# so the figures are the same from run to run whatever else the host is
# doing, like callgrind's.  They count instructions, not cache misses or
# lock contention.  BENCH_CLOCK=wall gives the ordinary TCG clock, which
# on a shared host varies by tens of percent between repeats.  Under KVM
# the clock is real and BENCH_CLOCK is ignored.
#
# Needs BUILD_DIR/KVER/initramfs.cpio made with the bench helpers in it
# (images/mkinitramfs.sh copies BUILD_DIR/tests/bench/* and
# tests/bench/bench* to /usr/libexec/shiftfs/).  The guest runs in a
# private build tree, BUILD_DIR/bench/KVER/guest/, whose kernel and
# initramfs are links to BUILD_DIR/KVER/, so that its logs cannot be
# overwritten by a test run on the same kernel at the same time.
#
# Output: BUILD_DIR/bench/KVER/results.md, results.csv, and the guest's
# log (tap.log, console.log) next to them.  Exit status is the guest
# run's: the targets are reported, never enforced.
set -u

limit=3600
while getopts T: opt; do
	case $opt in
	T) limit=$OPTARG ;;
	*) echo "usage: $0 [-T SECS] KVER BUILD_DIR" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { echo "usage: $0 [-T SECS] KVER BUILD_DIR" >&2; exit 2; }
kver=$1
build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

out=$build/bench/$kver
guest=$out/guest
initrd=$build/$kver/initramfs.cpio
[ -f "$initrd" ] || { echo "run-bench.sh: $initrd is missing (make initramfs KVER=$kver)" >&2; exit 1; }
# (grep, not cpio -t: that stops at the first archive of a concatenation)
if ! grep -qa 'usr/libexec/shiftfs/bench-fs' "$initrd"; then
	echo "run-bench.sh: $initrd has no usr/libexec/shiftfs/bench-fs:" >&2
	echo "  build tests/bench (make -C tests/bench BUILD=$build/tests/bench) and remake the initramfs" >&2
	exit 1
fi

mkdir -p "$guest/$kver"
ln -sfn "$build/$kver/kernel" "$guest/$kver/kernel"
ln -sfn "$initrd" "$guest/$kver/initramfs.cpio"
[ -f "$build/accel" ] && cp "$build/accel" "$guest/accel"

case ${BENCH_CLOCK:-icount} in
icount) clock=-i ;;
wall) clock= ;;
*) echo "run-bench.sh: BENCH_CLOCK must be icount or wall, not '$BENCH_CLOCK'" >&2; exit 2 ;;
esac

echo "run-bench.sh: benchmark on $kver: one guest boot (limit ${limit}s)"
t0=$(date +%s)
# 3 GiB: the ext4 image (1200 MiB) is backed by tmpfs pages in full.
"$top/tests/run-guest.sh" $clock -M 3072 -T "$limit" -c /usr/libexec/shiftfs/bench "$kver" "$guest"
rc=$?

logs=$guest/$kver/logs
cp "$logs/tap.log" "$out/tap.log" 2>/dev/null
cp "$logs/console.log" "$out/console.log" 2>/dev/null
extract() {
	tr -d '\r' < "$logs/tap.log" |
		awk -v b="BENCH-RESULTS-$1-BEGIN" -v e="BENCH-RESULTS-$1-END" \
			'$0 == e { on = 0 } on { print } $0 == b { on = 1 }'
}
extract MD > "$out/results.md.tmp"
extract CSV > "$out/results.csv.tmp"
if [ -s "$out/results.md.tmp" ] && [ -s "$out/results.csv.tmp" ]; then
	how=$(cat "$guest/accel" 2>/dev/null)
	[ "$how" = kvm ] || how="tcg, ${BENCH_CLOCK:-icount} clock"
	printf '\nHost wall-clock time of the guest run: %d s (%s).\n' \
		"$(($(date +%s) - t0))" "$how" >> "$out/results.md.tmp"
	mv "$out/results.md.tmp" "$out/results.md"
	mv "$out/results.csv.tmp" "$out/results.csv"
	echo "run-bench.sh: results in $out/results.md and results.csv"
else
	rm -f "$out/results.md.tmp" "$out/results.csv.tmp"
	echo "run-bench.sh: the guest printed no results (see $out/tap.log, $out/console.log)" >&2
	[ $rc -eq 0 ] && rc=1
fi
exit $rc
