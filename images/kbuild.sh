#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run kbuild for an out-of-tree module against kernel KVER's headers,
# where that kernel lives: on the host for bookworm's kernels (6.1,
# 6.12+deb12; headers from images/setup-host.sh), in the chroot of the
# Debian release that ships it for the others (trixie: 6.12+deb13 and
# 7.3; sid: 7.2), made and given the headers on first use
# (images/chroot.sh; chroots and apt lists in the project's build/).
# The chroot sees the module directory (M=) at the same path.
#
#   images/kbuild.sh KVER MAKE-ARG...
#   e.g. images/kbuild.sh 7.3.4+deb13-cloud-amd64 M=$PWD/build/x modules
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$here/.." && pwd)/build
[ $# -ge 2 ] || { echo "usage: $0 KVER MAKE-ARG..." >&2; exit 2; }
kver=$1
shift
suite=$("$here/kver.sh" -b "$build" -s "$kver")
host=bookworm
[ -r /etc/os-release ] && host=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
kdir=/usr/src/linux-headers-$kver
if [ "$suite" = "$host" ]; then
	[ -f "$kdir/Makefile" ] || {
		echo "kbuild.sh: no headers in $kdir (make setup-module KVER=$kver)" >&2
		exit 1
	}
	exec make -C "$kdir" "$@"
fi
"$here/chroot.sh" ensure "$suite" "$build" "$kver"
echo "kbuild.sh: building for $kver in the $suite chroot" >&2
exec "$here/chroot.sh" run "$suite" "$build" -M make -C "$kdir" "$@"
