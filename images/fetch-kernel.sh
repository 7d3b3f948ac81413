#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Fetch Debian's kernel image package for KVER and unpack it under
# build/KVER/kernel/ (boot/vmlinuz-KVER, lib/modules/KVER/...).  Nothing is
# installed on the host: the guest boots this kernel with QEMU.
#
#   images/fetch-kernel.sh KVER BUILD_DIR
set -eu

kver=$1
out=$2/$kver/kernel
stamp=$out/.unpacked

[ -f "$stamp" ] && exit 0

# Debian's 6.12 backport ships only the -unsigned flavour with the kernel
# binary inside; 6.1 has both, and -unsigned is the same kernel without
# the Secure Boot signature, which QEMU's direct boot does not need.
pkg=linux-image-$kver-unsigned
dl=$2/$kver/debs
rm -rf "$dl" "$out"
mkdir -p "$dl"
echo "fetch-kernel.sh: downloading $pkg" >&2
if ! (cd "$dl" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >&2); then
	echo "fetch-kernel.sh: apt-get download $pkg failed; is the release right, and 'apt-get update' done?" >&2
	rm -rf "$dl"
	exit 1
fi
mkdir -p "$out.tmp"
dpkg-deb -x "$dl"/"$pkg"_*.deb "$out.tmp"
# Merged /usr: the package may put modules under usr/lib.
if [ -d "$out.tmp/usr/lib/modules" ] && [ ! -d "$out.tmp/lib/modules" ]; then
	mkdir -p "$out.tmp/lib"
	mv "$out.tmp/usr/lib/modules" "$out.tmp/lib/modules"
fi
if [ ! -f "$out.tmp/boot/vmlinuz-$kver" ]; then
	echo "fetch-kernel.sh: $pkg has no boot/vmlinuz-$kver" >&2
	rm -rf "$out.tmp" "$dl"
	exit 1
fi
mv "$out.tmp" "$out"
rm -rf "$dl"
touch "$stamp"
