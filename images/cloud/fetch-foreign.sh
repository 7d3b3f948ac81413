#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Fetch Debian's busybox-static for a foreign architecture (arm64) and
# unpack its binary to BUILD_DIR/cloud/foreign/ARCH/busybox, for the
# arch-emulation scenario.  A scratch apt configuration under BUILD_DIR
# is used (its own sources, lists, cache and an empty dpkg status): the
# host's apt state and architectures are left untouched.
#
#   images/cloud/fetch-foreign.sh ARCH BUILD_DIR
set -eu

arch=$1
build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
dir=$build/cloud/foreign/$arch
[ -x "$dir/busybox" ] && exit 0

mirror=$("$here/mirrors.sh" bookworm) || {
	echo "fetch-foreign.sh: no bookworm mirror in the host's apt sources" >&2
	exit 1
}
apt=$dir/apt
rm -rf "$dir"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/etc/preferences.d" \
	"$apt/etc/apt.conf.d" "$apt/etc/sources.list.d" "$dir/deb"
: > "$apt/status"
echo "deb [arch=$arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm main" > "$apt/etc/sources.list"
set -- -q -o Dir::Etc="$apt/etc" -o Dir::State::Lists="$apt/lists" \
	-o Dir::Cache="$apt/cache" -o Dir::State::status="$apt/status" \
	-o APT::Architecture="$arch" -o APT::Architectures="$arch" \
	-o APT::Sandbox::User=root -o Debug::NoLocking=1
echo "fetch-foreign.sh: busybox-static:$arch from Debian ..." >&2
apt-get "$@" update >&2
(cd "$dir/deb" && apt-get "$@" download "busybox-static:$arch" >&2)
dpkg-deb -x "$dir"/deb/busybox-static_*_"$arch".deb "$dir/x"
cp "$dir/x/bin/busybox" "$dir/busybox.tmp"
rm -rf "$apt" "$dir/x" "$dir/deb"
mv "$dir/busybox.tmp" "$dir/busybox"
file "$dir/busybox" >&2 || true
