#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Build (or reuse) the arm64 build image of the e2e build scenario: a
# Debian bookworm arm64 root filesystem owned by 0:0, as deployed to real
# arm64 machines, in an ext4 image file; and beside it the local file
# repository the container installs packages from.
#
#   images/arm64/build-image.sh BUILD_DIR
#
# Prints the image's directory on its last line of stdout:
#   DIR/arm64.img   raw ext4 image, label shiftfs-arm64 (sparse file)
#   DIR/repo/       arm64 .debs and their Packages index (a flat
#                   repository: deb [trusted=yes] file:/PATH ./)
#   DIR/info        what went in, how long each step took, and the logs
#
# Cached under BUILD_DIR/arm64/image-KEY, KEY a hash of this script, the
# package list and the second stage's init: only the first run pays.
#
# 1. debootstrap --foreign --arch=arm64 on the host: downloads and
#    unpacks, runs nothing of arm64.
# 2. The second stage, which runs the packages' arm64 maintainer scripts,
#    in an emulated arm64 machine (qemu-system-aarch64, TCG): Debian's
#    arm64 kernel, an initramfs of arm64 busybox and the modules that
#    reach the disk (stage2-init), the image as its disk.  Nothing is
#    registered with the host's binfmt_misc.  Not qemu-user in the x86
#    test guest: there, under TCG, each program start costs ~0.7 s (the
#    emulator emulated), against ~25 ms here, and a second stage starts
#    thousands of programs.
# 3. The local repository: apt-get download (scratch apt configuration,
#    images/cloud/fetch-foreign.sh) and dpkg-scanpackages.
set -eu

build=$(mkdir -p "$1" && cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
cloud=$here/../cloud
suite=bookworm

say() { echo "arm64-image: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, an image owned by 0:0)"
for t in debootstrap mke2fs qemu-system-aarch64 cpio modinfo dpkg-scanpackages; do
	command -v $t >/dev/null || die "$t is missing (images/setup-host.sh --e2e)"
done

key=$(cat "$here/build-image.sh" "$here/packages" "$here/stage2-init" |
	sha256sum | cut -c1-12)
cache=$build/arm64
out=$cache/image-$key
. "$here/../cache.sh"
cache_reuse "$cache" "$out" "arm64 image"

mirror=$("$cloud/mirrors.sh" $suite) ||
	die "no $suite mirror found in the host's apt sources"
# Package lists: --include (before "#--- repo"), the repository (after).
pkglist() {
	awk -v want="$1" '
		/^#--- repo/ { repo = 1; next }
		/^[ \t]*(#|$)/ { next }
		{ if (repo == (want == "repo")) print $1 }' "$here/packages"
}

work=$cache/work
rm -rf "$work"
mkdir -p "$work/out/repo" "$cache/debs" "$cache/kernel"
root=$work/root
t0=$(date +%s)

# ---- 1: first stage on the host -------------------------------------------
include=$(pkglist include | paste -sd, -)
say "debootstrap --foreign --arch=arm64 $suite (minbase + $include) ..."
rm -f "$cache/debs/"*.FAILED "$cache/debs/partial/"* 2>/dev/null || true
if ! debootstrap --foreign --arch=arm64 --variant=minbase --include="$include" \
	--cache-dir="$cache/debs" $suite "$root" "$mirror" \
	> "$work/debootstrap.log" 2>&1; then
	tail -n 30 "$work/debootstrap.log" >&2
	die "debootstrap (first stage) failed (log: $work/debootstrap.log)"
fi
used=$(du -sxm "$root" | cut -f1)
# Room for the second stage, the scenario's packages and builds; a sparse
# file, so the free space costs nothing.
size=$(( (used * 3 + 1024 + 511) / 512 * 512 ))
mke2fs -q -t ext4 -L shiftfs-arm64 -E root_owner=0:0 -d "$root" \
	"$work/arm64.img" "${size}M" > /dev/null
rm -rf "$root"
t1=$(date +%s)
say "first stage: $((t1 - t0))s, $used MiB in a $size MiB image"

# ---- 2: second stage in an arm64 guest ----------------------------------
"$cloud/fetch-foreign.sh" arm64 "$build" || die "no arm64 busybox"
kdeb=$(ls "$cache"/kernel/linux-image-*-arm64_*_arm64.deb 2>/dev/null | head -n 1)
if [ -z "$kdeb" ]; then
	"$cloud/fetch-foreign.sh" -o "$work/meta" arm64 "$build" linux-image-arm64 ||
		die "cannot download linux-image-arm64"
	kpkg=$(dpkg-deb -f "$work"/meta/linux-image-arm64_*.deb Depends |
		tr ',' '\n' | sed -n 's/^ *\(linux-image-[^ ]*-arm64\).*/\1/p' | head -n 1)
	[ -n "$kpkg" ] || die "linux-image-arm64 names no kernel package"
	rm -f "$cache"/kernel/*.deb
	"$cloud/fetch-foreign.sh" -o "$cache/kernel" arm64 "$build" "$kpkg" ||
		die "cannot download $kpkg"
	kdeb=$(ls "$cache"/kernel/linux-image-*-arm64_*_arm64.deb | head -n 1)
fi
kx=$work/kernel
mkdir -p "$kx"
dpkg-deb -x "$kdeb" "$kx"
kver=$(ls "$kx/lib/modules" | head -n 1)
mods=$kx/lib/modules/$kver

# The initramfs: busybox, stage2-init, and the modules for a virtio-mmio
# disk with ext4 (and crc32c, which ext4's and jbd2's checksums load by
# name), each after what it depends on.
ird=$work/initramfs
mkdir -p "$ird/modules"
cp "$build/cloud/foreign/arm64/busybox" "$ird/busybox"
cp "$here/stage2-init" "$ird/init"
: > "$ird/modules/order"
modpath() { find "$mods/kernel" -name "$1.ko" | head -n 1; }
addmod() {
	[ -n "$(modpath "$1")" ] || die "no module $1 in $(basename "$kdeb")"
	for _d in $(modinfo -F depends "$(modpath "$1")" | tr ',' ' '); do
		grep -qx "$_d.ko" "$ird/modules/order" || addmod "$_d"
	done
	grep -qx "$1.ko" "$ird/modules/order" && return 0
	cp "$(modpath "$1")" "$ird/modules/"
	echo "$1.ko" >> "$ird/modules/order"
}
for m in virtio_mmio virtio_blk crc32c_generic ext4; do addmod $m; done
(cd "$ird" && find . | cpio -o -H newc --quiet) > "$work/initramfs.cpio"

say "second stage in an arm64 guest (qemu-system-aarch64, TCG; log: $work/stage2.log) ..."
timeout -k 5 1800 qemu-system-aarch64 -M virt -cpu cortex-a57 -smp 2 -m 1024 \
	-nodefaults -display none -no-reboot \
	-accel tcg,thread=multi \
	-kernel "$kx/boot/vmlinuz-$kver" -initrd "$work/initramfs.cpio" \
	-append "console=ttyAMA0 panic=-1 loglevel=4" \
	-drive "if=none,id=d0,file=$work/arm64.img,format=raw,cache=unsafe" \
	-device virtio-blk-device,drive=d0 \
	-serial "file:$work/stage2.log" </dev/null > "$work/qemu.log" 2>&1 || true
rc=$(sed -n 's/^SHIFTFS-STAGE2-END rc=\([0-9]*\).*/\1/p' "$work/stage2.log" | tr -d '\r')
if [ "$rc" != 0 ]; then
	tail -n 30 "$work/stage2.log" >&2
	cat "$work/qemu.log" >&2
	die "the second stage failed (rc=${rc:-none}; log: $work/stage2.log)"
fi
e2fsck -fy "$work/arm64.img" > "$work/e2fsck.log" 2>&1 || {
	rcf=$?
	# 1: errors corrected; more is a broken image.
	[ $rcf -le 1 ] || die "e2fsck of the image failed ($rcf; log: $work/e2fsck.log)"
}
t2=$(date +%s)
say "second stage: $((t2 - t1))s"

# ---- 3: the local repository ------------------------------------------------
repo=$(pkglist repo | tr '\n' ' ')
"$cloud/fetch-foreign.sh" -o "$work/out/repo" arm64 "$build" $repo ||
	die "cannot download $repo"
(cd "$work/out/repo" && dpkg-scanpackages -m . > Packages 2> /dev/null)
t3=$(date +%s)

mv "$work/arm64.img" "$work/out/arm64.img"
cat > "$work/out/info" <<EOF
key=$key
suite=$suite
include=$include
repo=$repo
stage2_kernel=$(basename "$kdeb")
stage1_s=$((t1 - t0))
stage2_s=$((t2 - t1))
repo_s=$((t3 - t2))
total_s=$((t3 - t0))
image_mib=$size
stage2_du_mib=$(sed -n 's/^SHIFTFS-STAGE2-DU \([0-9]*\).*/\1/p' "$work/stage2.log" | tr -d '\r')
built=$(date -u +%Y-%m-%dT%H:%M:%SZ)
EOF
cp "$work/debootstrap.log" "$work/stage2.log" "$work/out/"
cache_publish "$work/out" "$out" "$cache"/image-*
rm -rf "$work"
say "arm64 image ready in $((t3 - t0))s: $out"
echo "$out"
