#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Fetch Debian's kernel image package for KVER and unpack it under
# build/KVER/kernel/ (boot/vmlinuz-KVER, lib/modules/KVER/...).  Nothing is
# installed on the host: the guest boots this kernel with QEMU.
#
#   images/fetch-kernel.sh KVER BUILD_DIR
set -eu

kver=$1
mkdir -p "$2"
build=$(cd "$2" && pwd)
out=$build/$kver/kernel
stamp=$out/.unpacked

[ -f "$stamp" ] && exit 0

# Debian's 6.12 backport ships only the -unsigned flavour with the kernel
# binary inside; 6.1 and trixie's 6.12 have both, and -unsigned is the
# same kernel without the Secure Boot signature, which QEMU's direct boot
# does not need; 7.x (trixie-backports, sid) ships only the signed one.
# The package comes from the apt of the Debian release that ships the
# kernel (images/apt-suite.sh: the host's for bookworm).
here=$(cd "$(dirname "$0")" && pwd)
suite=$("$here/kver.sh" -b "$build" -s "$kver")
dl=$build/$kver/debs
rm -rf "$dl" "$out"
mkdir -p "$dl"
pkg=
for p in "linux-image-$kver-unsigned" "linux-image-$kver"; do
	if "$here/apt-suite.sh" "$suite" "$build" apt-cache show --no-all-versions "$p" 2>/dev/null |
		grep -qx "Package: $p"; then
		pkg=$p
		break
	fi
done
if [ -z "$pkg" ]; then
	echo "fetch-kernel.sh: $suite's apt has no linux-image-$kver(-unsigned); is the release right?" >&2
	rm -rf "$dl"
	exit 1
fi
echo "fetch-kernel.sh: downloading $pkg ($suite)" >&2
if ! (cd "$dl" && "$here/apt-suite.sh" "$suite" "$build" apt-get download -q \
	-o APT::Sandbox::User=root "$pkg" >&2); then
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
