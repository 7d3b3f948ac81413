#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Cross-build an out-of-tree module for the arm64 kernel of the same
# Debian release, ABI and flavour as the amd64 kernel KVER
# (6.1.0-57-cloud-amd64 -> 6.1.0-57-cloud-arm64), in the build chroot of
# the Debian release that ships it (images/chroot.sh; bookworm's kernels
# too, in build/chroots/bookworm, so that the host gets no arm64 package
# and no cross compiler).  Nothing is booted.
#
#   images/cross.sh KVER MAKE-ARG...    e.g. M=$PWD/build/x W=1 modules
#   images/cross.sh -r KVER             print the arm64 release only
#
# In the chroot, once per release: the amd64 headers of KVER are
# installed (chroot.sh ensure: they bring the arch-independent
# linux-headers-*-common, which the arm64 headers include, and the amd64
# linux-kbuild-* of the same version, whose host programs -- fixdep,
# modpost -- run here; the arm64 linux-kbuild's are arm64 programs);
# arm64 is added as a foreign architecture to its apt, the arm64 headers
# package is fetched with apt-get download and unpacked into the chroot's
# /usr/src (not installed: its linux-compiler-gcc-N-arm wants the arm64
# gcc itself), and the cross compiler the kernel was built with (its
# .config's CONFIG_CC_VERSION_TEXT: gcc-N-aarch64-linux-gnu of that
# release) is installed.  Then make -C the arm64 headers ARCH=arm64
# CROSS_COMPILE=aarch64-linux-gnu- MAKE-ARG... runs in the chroot, which
# sees the module directory (M=) at the same path.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$here/.." && pwd)/build
usage="usage: $0 KVER MAKE-ARG... | $0 -r KVER"

# arm64_of KVER: the arm64 release of the amd64 release KVER.
arm64_of() {
	case $1 in
	*[!A-Za-z0-9.+_-]*|-*) ;;
	[0-9]*.[0-9]*-amd64) echo "${1%-amd64}-arm64"; return 0 ;;
	esac
	echo "cross.sh: '$1' is not an amd64 kernel release (6.1.0-57-cloud-amd64, 7.3.4+deb13-amd64; make kvers)" >&2
	return 2
}

if [ "${1:-}" = -r ]; then
	[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
	arm64_of "$2"
	exit
fi
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
kver=$1
shift
arel=$(arm64_of "$kver") || exit 2
suite=$("$here/kver.sh" -b "$build" -s "$kver")
root=$build/chroots/$suite
hdr=/usr/src/linux-headers-$arel

"$here/chroot.sh" ensure "$suite" "$build" "$kver"

in_root() {
	"$here/chroot.sh" run "$suite" "$build" "$@"
}
aptget() {
	in_root apt-get -y -q -o DPkg::Lock::Timeout=900 --no-install-recommends "$@"
}
log=$build/chroots/$suite.cross.log

# The same lock as chroot.sh ensure: one changer of the chroot at a time.
exec 9>"$build/chroots/$suite.lock"
flock 9
if [ ! -f "$root$hdr/.cross-unpacked" ]; then
	echo "cross.sh: fetching linux-headers-$arel (arm64) into the $suite chroot" >&2
	t0=$(date +%s)
	if ! in_root dpkg --print-foreign-architectures | grep -qx arm64; then
		in_root dpkg --add-architecture arm64
	fi
	if ! aptget update > "$log" 2>&1; then
		sed 's/^/  /' "$log" | tail -n 20 >&2
		echo "cross.sh: apt-get update failed in the $suite chroot (log: $log)" >&2
		exit 1
	fi
	p=linux-headers-$arel
	if ! in_root apt-cache show --no-all-versions "$p:arm64" 2>/dev/null |
		grep -qx "Package: $p"; then
		echo "cross.sh: $suite's archive has no arm64 package $p" >&2
		exit 1
	fi
	dl=$build/cross/dl-$arel
	rm -rf "$dl" "$root$hdr"
	mkdir -p "$dl"
	# Unpacked aside and only its /usr/src tree moved in: unpacked into
	# the root, its /lib/modules would replace merged /usr's /lib link.
	if ! in_root sh -c 'cd "$1" && apt-get download -q -o APT::Sandbox::User=root "$2"' \
		sh "$dl" "$p:arm64" >> "$log" 2>&1 ||
	   ! dpkg-deb -x "$dl/${p}_"*_arm64.deb "$dl/x" ||
	   ! mv "$dl/x$hdr" "$root$hdr"; then
		sed 's/^/  /' "$log" | tail -n 20 >&2
		rm -rf "$dl" "$root$hdr"
		echo "cross.sh: could not fetch and unpack $p:arm64 (log: $log)" >&2
		exit 1
	fi
	rm -rf "$dl"
	# The -common it includes and the linux-kbuild its scripts/ points
	# at: the amd64 headers of the same version brought them.
	common=$(sed -n 's|^include \(/usr/src/[^ ]*\)/Makefile$|\1|p' "$root$hdr/Makefile")
	if [ -z "$common" ] || [ ! -f "$root$common/Makefile" ] ||
	   [ ! -x "$root$hdr/scripts/basic/fixdep" ]; then
		rm -rf "$root$hdr"
		echo "cross.sh: $p needs ${common:-its -common} and a linux-kbuild the amd64 headers of $kver did not bring" >&2
		exit 1
	fi
	touch "$root$hdr/.cross-unpacked"
	echo "cross.sh: arm64 headers unpacked in $(( $(date +%s) - t0 )) s" >&2
fi
# The cross compiler of the kernel's own gcc version: aarch64-linux-gnu-gcc-N.
n=$(sed -n 's/^CONFIG_GCC_VERSION=\([0-9]*\)[0-9][0-9][0-9][0-9]$/\1/p' "$root$hdr/.config")
if [ -z "$n" ]; then
	echo "cross.sh: $hdr/.config names no gcc version (CONFIG_GCC_VERSION)" >&2
	exit 1
fi
if [ ! -x "$root/usr/bin/aarch64-linux-gnu-gcc-$n" ]; then
	echo "cross.sh: installing gcc-$n-aarch64-linux-gnu in the $suite chroot" >&2
	t0=$(date +%s)
	if ! { aptget update && aptget install "gcc-$n-aarch64-linux-gnu"; } >> "$log" 2>&1; then
		sed 's/^/  /' "$log" | tail -n 20 >&2
		echo "cross.sh: could not install gcc-$n-aarch64-linux-gnu in the $suite chroot (log: $log)" >&2
		exit 1
	fi
	echo "cross.sh: cross compiler installed in $(( $(date +%s) - t0 )) s" >&2
fi
flock -u 9
echo "cross.sh: building for $arel (arm64, aarch64-linux-gnu-gcc-$n) in the $suite chroot" >&2
exec "$here/chroot.sh" run "$suite" "$build" -M \
	make -C "$hdr" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- "$@"
