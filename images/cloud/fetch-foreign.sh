#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Download Debian packages of a foreign architecture (arm64) without
# touching the host's apt state or architectures: a scratch apt
# configuration under BUILD_DIR/cloud/foreign/ARCH-apt (its own sources,
# lists, cache and an empty dpkg status), from the mirror the host's apt
# uses.  Its lists are kept, so that a second call downloads little.
#
#   images/cloud/fetch-foreign.sh ARCH BUILD_DIR
#       Debian's busybox-static for ARCH, its binary unpacked to
#       BUILD_DIR/cloud/foreign/ARCH/busybox (the arch-emulation
#       scenario's rootfs, the arm64 image builder's initramfs)
#   images/cloud/fetch-foreign.sh -o DIR ARCH BUILD_DIR PKG...
#       the .debs of PKG... (not their dependencies) into DIR
set -eu

outdir=
if [ "${1:-}" = -o ]; then
	outdir=$(mkdir -p "$2" && cd "$2" && pwd)
	shift 2
fi
[ $# -ge 2 ] || {
	echo "usage: $0 [-o DIR] ARCH BUILD_DIR [PKG...]" >&2
	exit 2
}
arch=$1
build=$(cd "$2" && pwd)
shift 2
pkgs=$*
here=$(cd "$(dirname "$0")" && pwd)
dir=$build/cloud/foreign/$arch
if [ -z "$outdir" ]; then
	[ -x "$dir/busybox" ] && exit 0
	pkgs=busybox-static
fi
[ -n "$pkgs" ] || {
	echo "fetch-foreign.sh: -o DIR needs packages to download" >&2
	exit 2
}

mirror=$("$here/mirrors.sh" bookworm) || {
	echo "fetch-foreign.sh: no bookworm mirror in the host's apt sources" >&2
	exit 1
}
apt=$build/cloud/foreign/$arch-apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/etc/preferences.d" \
	"$apt/etc/apt.conf.d" "$apt/etc/sources.list.d"
exec 8>"$apt/.lock"
flock 8
: > "$apt/status"
echo "deb [arch=$arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm main" > "$apt/etc/sources.list"
set -- -q -o Dir::Etc="$apt/etc" -o Dir::State::Lists="$apt/lists" \
	-o Dir::Cache="$apt/cache" -o Dir::State::status="$apt/status" \
	-o APT::Architecture="$arch" -o APT::Architectures="$arch" \
	-o APT::Sandbox::User=root -o Debug::NoLocking=1
echo "fetch-foreign.sh: $pkgs ($arch) from Debian ..." >&2
apt-get "$@" update >&2
if [ -n "$outdir" ]; then
	(cd "$outdir" && apt-get "$@" download $pkgs >&2)
	exit 0
fi
rm -rf "$dir"
mkdir -p "$dir/deb"
(cd "$dir/deb" && apt-get "$@" download "busybox-static:$arch" >&2)
dpkg-deb -x "$dir"/deb/busybox-static_*_"$arch".deb "$dir/x"
cp "$dir/x/bin/busybox" "$dir/busybox.tmp"
rm -rf "$dir/x" "$dir/deb"
mv "$dir/busybox.tmp" "$dir/busybox"
file "$dir/busybox" >&2 || true
