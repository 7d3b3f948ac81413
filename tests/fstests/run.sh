#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fstests through shiftfs on one kernel, in one QEMU guest boot: for each
# base filesystem (ext4, xfs) fstests on the plain base fs (the baseline),
# then with shiftfs stacked on it by fstests' own harness (FSTYP=shiftfs,
# tests/fstests/shiftfs.patch) for each map configuration (identity;
# shifted: 0 kept, every other id moved), then the results judged
# against tests/fstests/expected-failures.
#
#   FSTESTS=DIR tests/fstests/run.sh KVER BUILD_DIR
#
# FSTESTS        a checkout of fstests at the commit in tests/fstests/PINNED
# FSTESTS_BASES  base filesystems (default "ext4 xfs")
# FSTESTS_MAPS   map configurations (default "identity shifted")
# FSTESTS_GROUPS fstests groups (-g) of generic/, e.g. "quick" or "perms acl"
# FSTESTS_TESTS  tests by name, e.g. "generic/001 generic/087"; with neither
#                this nor FSTESTS_GROUPS, tests/fstests/default-tests
# FSTESTS_TIMEOUT whole-guest timeout in seconds (default 14400)
# FSTESTS_CONFIG_TIMEOUT one configuration's, in seconds (default 3600):
#                a hung test fails, its stacks kept, the next one runs
# FSTESTS_MEM    guest memory in MiB (default 3072)
#
# Needs the kernel unpacked (images/fetch-kernel.sh) and BUILD_DIR/KVER/
# shiftfs.ko (make module KVER=...); the root image is built once
# (tests/fstests/build-rootfs.sh).  Results: BUILD_DIR/fstests/KVER/
# (CONFIG/summary, check.out and fstests' results/ per configuration,
# console.log, summary.txt).  Exit status 1 on a failure through shiftfs
# that passes on the base and is not in expected-failures, on an entry
# there that passed (stale), or on a guest that did not finish.
set -eu

say() { echo "fstests: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
[ $# -eq 2 ] || { echo "usage: FSTESTS=DIR $0 KVER BUILD_DIR" >&2; exit 2; }
kver=$1
[ -d "$2" ] || die "BUILD_DIR '$2' is not a directory"
build=$(cd "$2" && pwd)
bases=${FSTESTS_BASES:-ext4 xfs}
maps=${FSTESTS_MAPS:-identity shifted}
groups=${FSTESTS_GROUPS:-}
tests=${FSTESTS_TESTS:-}
limit=${FSTESTS_TIMEOUT:-14400}
climit=${FSTESTS_CONFIG_TIMEOUT:-3600}
mem=${FSTESTS_MEM:-3072}

# Input first: nothing is built or left behind for a bad one.
"$here/check-src.sh" "${FSTESTS:-}" || exit 1
src=$(cd "$FSTESTS" && pwd)
for b in $bases; do
	case $b in ext4|xfs) ;; *) die "FSTESTS_BASES: '$b' is not a base fs this runs (ext4, xfs)" ;; esac
done
[ -n "$bases" ] || die "FSTESTS_BASES is empty"
for m in $maps; do
	case $m in identity|shifted) ;; *) die "FSTESTS_MAPS: '$m' is not a map configuration (identity, shifted)" ;; esac
done
case "$groups $tests" in
*[!A-Za-z0-9_/.\ -]*) die "FSTESTS_GROUPS/FSTESTS_TESTS: only names like quick, generic/001" ;;
esac
for t in $tests; do
	[ -f "$src/tests/$t" ] || die "FSTESTS_TESTS: no test '$t' in $src/tests"
done
if [ -z "$groups$tests" ]; then
	tests=$(sed 's/#.*//' "$here/default-tests" | xargs)
fi
case $limit in ''|*[!0-9]*) die "FSTESTS_TIMEOUT '$limit' is not a number of seconds" ;; esac
case $mem in ''|*[!0-9]*) die "FSTESTS_MEM '$mem' is not a number of MiB" ;; esac
case $climit in ''|*[!0-9]*) die "FSTESTS_CONFIG_TIMEOUT '$climit' is not a number of seconds" ;; esac
kernel=$build/$kver/kernel
[ -f "$kernel/.unpacked" ] || die "no kernel unpacked in $kernel (images/fetch-kernel.sh $kver $build)"
[ -f "$build/$kver/shiftfs.ko" ] || die "$build/$kver/shiftfs.ko is missing (make module KVER=$kver)"
[ "$(id -u)" -eq 0 ] || die "must run as root (the root image is built with mmdebstrap)"
"$here/judge.sh" -l "$here/expected-failures" ||
	die "tests/fstests/expected-failures is malformed (see above)"

rootimg=$("$here/build-rootfs.sh" "$src" "$build" | tail -n 1)
[ -f "$rootimg" ] || die "no root image"

out=$build/fstests/$kver
work=$build/fstests/$kver.work
rm -rf "$out" "$work"
mkdir -p "$out" "$work/job"
trap 'rm -rf "$work"' EXIT

# The job disk: this runner's guest side, fstests' patched files, the
# kernel's modules (unpacked) and shiftfs.ko, the parameters.
job=$work/job
install -m 755 "$here/guest.sh" "$job/guest.sh"
mkdir -p "$work/patched"
git -C "$src" archive HEAD common | tar -x -C "$work/patched"
patch -s -d "$work/patched" -p1 < "$here/shiftfs.patch" ||
	die "tests/fstests/shiftfs.patch does not apply to fstests' common/"
mkdir -p "$job/fstests-patched"
cp -a "$work/patched/common" "$job/fstests-patched/"
{
	printf 'FT_BASES=%q\n' "$bases"
	printf 'FT_MAPS=%q\n' "$maps"
	printf 'FT_GROUPS=%q\n' "$groups"
	printf 'FT_TESTS=%q\n' "$tests"
	printf 'FT_CONFIG_TIMEOUT=%q\n' "$climit"
} > "$job/params"
mdir=$job/lib/modules/$kver
mkdir -p "$mdir/extra"
cp -a "$kernel/lib/modules/$kver/." "$mdir/"
find "$mdir" -name '*.ko.xz' -exec xz -d {} +
find "$mdir" -name '*.ko.zst' -exec zstd -q -d --rm {} +
cp "$build/$kver/shiftfs.ko" "$mdir/extra/"
depmod -b "$job" "$kver"
jmib=$(( $(du -sm "$job" | cut -f1) + 64 ))
mkfs.ext4 -q -F -L fstests-job -d "$job" "$work/job.img" "${jmib}M" > /dev/null ||
	die "mkfs.ext4 -d of the job disk failed"

# The initramfs: busybox, the virtio modules, tests/fstests/initramfs-init.
ird=$work/initramfs
mkdir -p "$ird/bin" "$ird/modules"
cp /bin/busybox "$ird/bin/busybox"
for a in sh mount insmod sleep cat mkdir switch_root poweroff; do
	ln -s busybox "$ird/bin/$a"
done
install -m 755 "$here/initramfs-init" "$ird/init"
: > "$ird/modules.list"
for m in virtio_pci virtio_blk; do
	modprobe -d "$job" -S "$kver" --show-depends "$m" ||
		die "no module $m for $kver"
done | awk '$1 == "insmod" { print $2 }' | while read -r ko; do
	grep -qx "${ko##*/}" "$ird/modules.list" && continue
	cp "$ko" "$ird/modules/"
	echo "${ko##*/}" >> "$ird/modules.list"
done
(cd "$ird" && find . -print0 | cpio --null -o -H newc --quiet) > "$work/initramfs.cpio"

for d in test scratch logw; do
	truncate -s 4G "$work/$d.img"
done
truncate -s 1G "$work/out.img"

. "$top/tests/lib/kvm-probe.sh"
accel=$(probe_accel "$build/accel" "$kernel/boot/vmlinuz-$kver")
if [ "$accel" = kvm ]; then
	cpu=(-accel kvm -cpu host)
else
	cpu=(-accel "tcg,thread=multi" -cpu max)
fi
# drive SERIAL FILE [,OPTS]: a virtio disk the guest finds by its serial.
disks=()
drive() {
	disks+=(-drive "file=$2,if=none,id=$1,format=raw,cache=unsafe${3:-}"
		-device "virtio-blk-pci,drive=$1,serial=$1")
}
drive root "$rootimg" ,snapshot=on
drive job "$work/job.img" ,readonly=on
for d in test scratch logw out; do
	drive $d "$work/$d.img"
done
console=$out/console.log
say "$kver: bases \"$bases\", maps \"$maps\", groups \"$groups\", tests \"$tests\" ($accel, ${mem} MiB, timeout ${limit}s)"
say "progress: tail -f $console"
t0=$(date +%s)
qrc=0
timeout -k 5 "$limit" qemu-system-x86_64 "${cpu[@]}" -m "$mem" -smp 2 \
	-nodefaults -display none -no-reboot \
	-kernel "$kernel/boot/vmlinuz-$kver" -initrd "$work/initramfs.cpio" \
	-append "console=ttyS0 panic=-1 loglevel=4 rdinit=/init no_timer_check" \
	"${disks[@]}" -serial "file:$console" < /dev/null > "$work/qemu.log" 2>&1 || qrc=$?
t1=$(date +%s)
say "$kver: guest ran $((t1 - t0))s (qemu exit $qrc)"

problems=
mkdir -p "$out/results"
tar -C "$out/results" -xf "$work/out.img" 2>/dev/null ||
	problems="the guest wrote no results"
grep -q '^SHIFTFS-GUEST-DONE' "$console" ||
	problems="${problems:+$problems; }guest did not finish (timeout $limit s, crash or hang; see $console)"
if [ -f "$out/results/ERROR" ]; then
	problems="${problems:+$problems; }$(cat "$out/results/ERROR")"
fi
if ! kbad=$("$top/tests/scan-kernel-log.sh" "$console"); then
	echo "$kbad" | head -n 40 | sed 's/^/  /' >&2
	problems="${problems:+$problems; }kernel log shows WARN/BUG/Oops/lockdep reports"
fi

rc=0
"$here/judge.sh" "$out/results" "$here/expected-failures" "$kver" "$((t1 - t0))" \
	> "$out/summary.txt" || rc=1
cat "$out/summary.txt"
if [ -n "$problems" ]; then
	echo "fstests $kver: $problems" | tee -a "$out/summary.txt"
	rc=1
fi
exit $rc
