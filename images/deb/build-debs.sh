#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the two Debian packages from a staged "make install":
#   shiftfs-dkms  the module source under /usr/src, built by DKMS
#   shiftctl      the helper, man page, bash completion, LXC hook, snippet
#
#   images/deb/build-debs.sh TOP BUILD_DIR
#
# Packed with dpkg-deb from staging trees rather than a debian/ tree at the
# top, so the repository layout stays as DESIGN.md fixes it.  Versions come
# from TOP/VERSION.  Output: BUILD_DIR/deb/*.deb
set -euo pipefail
top=$1
build=$2
here=$(cd "$(dirname "$0")" && pwd)
version=$(cat "$top/VERSION")
arch=$(dpkg --print-architecture)
out=$build/deb
stage=$out/stage
rm -rf "$out"
mkdir -p "$stage"

maintainer="shiftfs developers <shiftfs@packages.invalid>"

# Common files every package carries: copyright and changelog.
add_doc() {
	local root=$1 pkg=$2 doc
	doc=$root/usr/share/doc/$pkg
	mkdir -p "$doc"
	install -m 644 "$here/copyright" "$doc/copyright"
	sed -e "s/@PKG@/$pkg/g" -e "s/@VERSION@/$version/g" \
	    -e "s/@DATE@/$(date -R -d @"${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)}")/" \
	    "$here/changelog.in" | gzip -9n > "$doc/changelog.gz"
}

finish_pkg() {
	local root=$1 pkg=$2
	(cd "$root" && find . -path ./DEBIAN -prune -o -type f -print0 |
		sort -z | xargs -0 md5sum | sed 's| \./| |' > DEBIAN/md5sums)
	chmod 644 "$root/DEBIAN/md5sums" "$root/DEBIAN/control"
	find "$root" -type d -exec chmod 755 {} +
	dpkg-deb --root-owner-group -Zxz --build "$root" "$out/" >/dev/null
	echo "build-debs.sh: built $(ls "$out"/"${pkg}"_*.deb)"
}

# ---- shiftfs-dkms ----
root=$stage/shiftfs-dkms
make -s -C "$top" install-dkms-src DESTDIR="$root" >/dev/null
mkdir -p "$root/DEBIAN"
add_doc "$root" shiftfs-dkms
for s in postinst prerm; do
	sed "s/@VERSION@/$version/g" "$here/shiftfs-dkms.$s" > "$root/DEBIAN/$s"
	chmod 755 "$root/DEBIAN/$s"
done
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<EOT
Package: shiftfs-dkms
Version: $version
Architecture: all
Maintainer: $maintainer
Installed-Size: $size
Depends: dkms (>= 2.1.0.0)
Recommends: shiftctl
Section: kernel
Priority: optional
Homepage: https://shiftfs.invalid/
Description: uid/gid shifting filesystem for containers (DKMS source)
 shiftfs is a stacking filesystem that shows a directory tree with its
 user and group ids shifted, so that an unprivileged container can use a
 root-owned filesystem image without rewriting any inode.
 .
 This package provides the kernel module source, built for each installed
 kernel by DKMS.
EOT
finish_pkg "$root" shiftfs-dkms

# ---- shiftctl ----
root=$stage/shiftctl
# Built apart, with Debian's hardening flags, as dpkg-buildpackage would.
(
	eval "$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --export=sh)"
	make -s -C "$top" install-userspace DESTDIR="$root" PREFIX=/usr \
		BUILD="$out/build" >/dev/null
)
gzip -9n "$root/usr/share/man/man8/shiftctl.8"
# As dh_strip does: no debug info or notes in the shipped binary.
strip --remove-section=.comment --remove-section=.note --strip-unneeded \
	"$root/usr/sbin/shiftctl"
mkdir -p "$root/DEBIAN"
add_doc "$root" shiftctl
# Library dependencies from the binary itself, as dh_shlibdeps does.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/debian"
printf 'Source: shiftfs\n\nPackage: shiftctl\nArchitecture: any\n' > "$tmp/debian/control"
depends=$(cd "$tmp" && dpkg-shlibdeps -O "$root/usr/sbin/shiftctl" 2>/dev/null |
	sed -n 's/^shlibs:Depends=//p')
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<EOT
Package: shiftctl
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends
Recommends: shiftfs-dkms
Suggests: lxc
Section: admin
Priority: optional
Homepage: https://shiftfs.invalid/
Description: shift-mount root-owned trees and images into containers
 shiftctl derives uid/gid maps from a container's user namespace,
 shift-mounts directories and disk images with shiftfs, and attaches them
 into running containers.  It also ships an LXC hook that shifts a
 container's root filesystem at start.
EOT
finish_pkg "$root" shiftctl
rm -rf "$stage" "$out/build"
