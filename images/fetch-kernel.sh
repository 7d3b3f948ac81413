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
# does not need.  From 7.x on (trixie-backports, sid) linux-image-RELEASE
# is an empty package depending on linux-binary(-unsigned)-RELEASE (the
# kernel, as lib/modules/RELEASE/vmlinuz[.unsigned]), linux-modules-RELEASE
# and linux-base-RELEASE (modules.builtin, modules.order): those are
# fetched instead.  The packages come from the apt of the Debian release
# that ships the kernel (images/apt-suite.sh: the host's for bookworm).
here=$(cd "$(dirname "$0")" && pwd)
suite=$("$here/kver.sh" -b "$build" -s "$kver")
aptr() {
	"$here/apt-suite.sh" "$suite" "$build" "$@"
}
has() {
	aptr apt-cache show --no-all-versions "$1" 2>/dev/null | grep -qx "Package: $1"
}
dl=$build/$kver/debs
rm -rf "$dl" "$out" "$out.tmp"
mkdir -p "$dl"
pkgs=
if has "linux-image-$kver-unsigned"; then
	pkgs=linux-image-$kver-unsigned
else
	for b in "linux-binary-unsigned-$kver" "linux-binary-$kver"; do
		has "$b" || continue
		pkgs="$b linux-modules-$kver"
		if has "linux-base-$kver"; then
			pkgs="$pkgs linux-base-$kver"
		fi
		break
	done
	if [ -z "$pkgs" ] && has "linux-image-$kver"; then
		pkgs=linux-image-$kver
	fi
fi
if [ -z "$pkgs" ]; then
	echo "fetch-kernel.sh: $suite's apt has no linux-image-$kver(-unsigned) nor linux-binary-$kver; is the release right?" >&2
	rm -rf "$dl"
	exit 1
fi
echo "fetch-kernel.sh: downloading $pkgs ($suite)" >&2
if ! (cd "$dl" && aptr apt-get download -q -o APT::Sandbox::User=root $pkgs >&2); then
	echo "fetch-kernel.sh: apt-get download $pkgs failed; is the release right, and 'apt-get update' done?" >&2
	rm -rf "$dl"
	exit 1
fi
mkdir -p "$out.tmp"
for p in $pkgs; do
	dpkg-deb -x "$dl"/"$p"_*.deb "$out.tmp"
done
# Merged /usr: the package may put modules under usr/lib.
if [ -d "$out.tmp/usr/lib/modules" ] && [ ! -d "$out.tmp/lib/modules" ]; then
	mkdir -p "$out.tmp/lib"
	mv "$out.tmp/usr/lib/modules" "$out.tmp/lib/modules"
fi
# 7.x: the kernel beside its modules; the guest boots boot/vmlinuz-KVER.
for v in vmlinuz.unsigned vmlinuz; do
	if [ ! -f "$out.tmp/boot/vmlinuz-$kver" ] && [ -f "$out.tmp/lib/modules/$kver/$v" ]; then
		mkdir -p "$out.tmp/boot"
		mv "$out.tmp/lib/modules/$kver/$v" "$out.tmp/boot/vmlinuz-$kver"
	fi
done
if [ ! -f "$out.tmp/boot/vmlinuz-$kver" ]; then
	echo "fetch-kernel.sh: $pkgs: no boot/vmlinuz-$kver in it" >&2
	rm -rf "$out.tmp" "$dl"
	exit 1
fi
mv "$out.tmp" "$out"
rm -rf "$dl"
touch "$stamp"
