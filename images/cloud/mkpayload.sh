#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The e2e guest's second disk: the project's files, which change with
# every commit and so are kept out of the cached base image.  A small
# ext4 filesystem labelled shiftfs-payload, made without mounting
# anything (mke2fs -d), mounted read-only in the guest by the seed.
#
#   images/cloud/mkpayload.sh KVER BUILD_DIR OUT.img
#
# Contents: shiftfs.ko (BUILD_DIR/KVER/shiftfs.ko), shiftctl
# (BUILD_DIR/shiftctl/shiftctl), lxc-hook/* as committed, the guest
# scripts (tests/e2e/guest/) and beside them the TAP library they source
# (tests/lib/tap.sh), the .debs of the guest's Debian release
# (BUILD_DIR/deb/RELEASE/, make deb), the foreign busybox
# (fetch-foreign.sh), the arm64 build image's repository
# (images/arm64/build-image.sh), and the container rootfs of $CTROOT
# (build-ctroot.sh's directory) as ctroot.tar.
# What is missing is left out; the guest says so and the scenarios that
# need it fail with the reason.
set -eu

kver=$1
build=$(cd "$2" && pwd)
out=$3
top=$(cd "$(dirname "$0")/../.." && pwd)
stage=$build/cloud/payload-$kver

rm -rf "$stage"
mkdir -p "$stage/e2e" "$stage/lxc-hook" "$stage/foreign"
[ -f "$build/$kver/shiftfs.ko" ] && cp "$build/$kver/shiftfs.ko" "$stage/"
[ -x "$build/shiftctl/shiftctl" ] && cp "$build/shiftctl/shiftctl" "$stage/"
cp "$top/shiftctl/shiftfs-marks.service" "$stage/"
for f in "$top"/lxc-hook/*; do
	[ -f "$f" ] && cp "$f" "$stage/lxc-hook/"
done
cp "$top"/tests/e2e/guest/* "$top"/tests/lib/tap.sh "$stage/e2e/"
# The Debian packages (make deb), for the packaging scenario (s5): the
# one place that picks them: those built in the guest's own Debian
# release (make deb DEBIAN=12|13, which make e2e-one runs for it).
deb_release=$("$top/images/kver.sh" -b "$build" -s "$kver")
debdir=$build/deb/$deb_release
if ls "$debdir"/*.deb >/dev/null 2>&1; then
	mkdir -p "$stage/deb"
	cp "$debdir"/*.deb "$stage/deb/"
fi
for a in "$build"/cloud/foreign/*/; do
	[ -x "$a/busybox" ] || continue
	mkdir -p "$stage/foreign/$(basename "$a")"
	cp "$a/busybox" "$stage/foreign/$(basename "$a")/"
done
# The arm64 build image's local repository (images/arm64/build-image.sh),
# for the build-container scenario; the image itself is a disk of its own.
for r in "$build"/arm64/image-*/repo; do
	[ -f "$r/Packages" ] && cp -r "$r" "$stage/arm64-repo"
done
# The Debian rootfs of the systemd containers (build-ctroot.sh).
if [ -n "${CTROOT:-}" ] && [ -f "$CTROOT/rootfs.tar" ]; then
	cp "$CTROOT/rootfs.tar" "$stage/ctroot.tar"
fi
{
	echo "kernel=$kver"
	echo "debs=$debdir"
	echo "commit=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "made=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$stage/info"

# Room for ext4's own metadata and journal: an eighth more, and 32 MiB.
kib=$(du -sk "$stage" | cut -f1)
rm -f "$out"
mke2fs -q -t ext4 -L shiftfs-payload -E root_owner=0:0 -d "$stage" "$out" \
	"$(( kib + kib / 8 + 32768 ))k" >/dev/null
