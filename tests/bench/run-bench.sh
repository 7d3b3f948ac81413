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
# Two boots: "main" runs every section but one on the chosen clock;
# "par" (the parallel workers) needs two vCPUs running at once, which an
# -icount guest cannot give, so it boots again with the wall clock and
# two vCPUs.  BENCH_PARTS="main par" (default) picks which.
# BENCH_SECTIONS=meta,mem and BENCH_COLS=plain,shiftfs,overlayfs narrow
# the main boot to those sections and columns (BENCH_META_PATHS=absolute:
# the metadata paths from "/", as before 2026-12-05), BENCH_REPS=1 to one repeat
# (for a before/after measurement of one change: under the icount clock
# repeats agree to 1 %; the full bench is the default).
#
# Output: BUILD_DIR/bench/KVER/results.md and results.csv (both boots),
# and each boot's own tables and guest log (tap.log, console.log) in
# BUILD_DIR/bench/KVER/main/ and par/.  Exit status: non-zero if a guest
# run failed; the targets are reported, never enforced.
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

# boot PART TCG-CLOCK FLAGS...: one guest run of the bench; its tables
# land in $out/PART/results.md and results.csv, with the host time and
# the clock (TCG-CLOCK unless the probe found KVM).  Returns the guest
# run's status.
boot() {
	part=$1 how=$2
	shift 2
	dir=$out/$part
	mkdir -p "$dir"
	rm -f "$dir/results.md" "$dir/results.csv"
	t0=$(date +%s)
	# 3 GiB: the ext4 image (1200 MiB) is backed by tmpfs pages in full.
	"$top/tests/run-guest.sh" "$@" -M 3072 -T "$limit" -c /usr/libexec/shiftfs/bench "$kver" "$guest"
	brc=$?
	[ "$(cat "$guest/accel" 2>/dev/null)" = kvm ] && how=kvm
	logs=$guest/$kver/logs
	cp "$logs/tap.log" "$dir/tap.log" 2>/dev/null
	cp "$logs/console.log" "$dir/console.log" 2>/dev/null
	tr -d '\r' < "$logs/tap.log" > "$dir/tap.txt"
	extract MD "$dir/tap.txt" > "$dir/results.md.tmp"
	extract CSV "$dir/tap.txt" > "$dir/results.csv.tmp"
	if [ -s "$dir/results.md.tmp" ] && [ -s "$dir/results.csv.tmp" ]; then
		printf '\nHost wall-clock time of the guest run: %d s (%s).\n' \
			"$(($(date +%s) - t0))" "$how" >> "$dir/results.md.tmp"
		mv "$dir/results.md.tmp" "$dir/results.md"
		mv "$dir/results.csv.tmp" "$dir/results.csv"
	else
		rm -f "$dir/results.md.tmp" "$dir/results.csv.tmp"
		echo "run-bench.sh: the $part run printed no results (see $dir/tap.log, $dir/console.log)" >&2
		[ $brc -eq 0 ] && brc=1
	fi
	return $brc
}
# extract MD|CSV TAP: the lines between the guest's markers
extract() {
	awk -v b="BENCH-RESULTS-$1-BEGIN" -v e="BENCH-RESULTS-$1-END" \
		'$0 == e { on = 0 } on { print } $0 == b { on = 1 }' "$2"
}

parts=${BENCH_PARTS:-main par}
for part in $parts; do
	case $part in
	main | par) ;;
	*) echo "run-bench.sh: BENCH_PARTS: unknown part '$part' (main, par)" >&2; exit 2 ;;
	esac
done
rc=0
rm -f "$out/results.md" "$out/results.csv"
for part in $parts; do
	case $part in
	main)
		# every section but the parallel one, on the chosen clock
		echo "run-bench.sh: benchmark on $kver: main boot (limit ${limit}s)"
		set --
		[ -n "${BENCH_SECTIONS:-}" ] && set -- "$@" -a "shiftfs.bench_sections=$BENCH_SECTIONS"
		[ -n "${BENCH_COLS:-}" ] && set -- "$@" -a "shiftfs.bench_cols=$BENCH_COLS"
		[ -n "${BENCH_REPS:-}" ] && set -- "$@" -a "shiftfs.bench_reps=$BENCH_REPS"
		[ -n "${BENCH_META_PATHS:-}" ] && set -- "$@" -a "shiftfs.bench_meta_paths=$BENCH_META_PATHS"
		boot main "tcg, ${BENCH_CLOCK:-icount} clock" $clock "$@" || rc=1
		;;
	par)
		# N workers need N vCPUs that really run at once: the wall
		# clock, two vCPUs (an -icount guest runs its vCPUs in turn).
		echo "run-bench.sh: benchmark on $kver: parallel workers, second boot, wall clock, 2 vCPUs (limit ${limit}s)"
		boot par "tcg, wall clock, 2 vCPUs" -a shiftfs.bench_sections=par || rc=1
		;;
	esac
	if [ -f "$out/$part/results.md" ]; then
		if [ "$part" = main ]; then
			cat "$out/$part/results.md" >> "$out/results.md"
		else
			printf '\n# Second boot: %s\n\n' "$how" >> "$out/results.md"
			sed 1d "$out/$part/results.md" >> "$out/results.md"
		fi
		if [ -f "$out/results.csv" ]; then
			sed 1d "$out/$part/results.csv" >> "$out/results.csv"
		else
			cat "$out/$part/results.csv" > "$out/results.csv"
		fi
	fi
done
[ -f "$out/results.md" ] && echo "run-bench.sh: results in $out/results.md and results.csv"
exit $rc
