#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install what building and testing shiftfs needs on a Debian 12 host.
# A no-op (one dpkg query) when everything is already there.
#
#   images/setup-host.sh [--e2e] KVER...
#
# KVER: kernel releases whose headers are needed (see images/kver.sh).
# --e2e: also what the cloud-image guest needs (debootstrap, qemu-img, ...).
set -eu

e2e=0
if [ "${1:-}" = --e2e ]; then
	e2e=1
	shift
fi

# Build: compiler, kbuild, userspace libraries shiftctl links.
pkgs="gcc make libc6-dev pkg-config libmount-dev libcap-dev libblkid-dev"
# Guest: emulator, initramfs contents (tools the guest tests drive).
pkgs="$pkgs qemu-system-x86 busybox-static cpio kmod e2fsprogs xfsprogs
      btrfs-progs acl attr libcap2-bin stress-ng util-linux bindfs"
for kver in "$@"; do
	pkgs="$pkgs linux-headers-$kver"
done
if [ $e2e -eq 1 ]; then
	pkgs="$pkgs debootstrap qemu-utils cloud-image-utils dosfstools eatmydata mtools"
fi

missing=
for p in $pkgs; do
	st=$(dpkg-query -W -f '${Status}' "$p" 2>/dev/null || true)
	case $st in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "setup-host.sh: missing packages:$missing" >&2
	echo "setup-host.sh: run as root, or: apt-get install$missing" >&2
	exit 1
fi
# apt-get falls back to treating an unknown name as a regular expression
# (linux-headers-6.1 would pull in every 6.1 header package): insist on
# exact package names, refreshing the lists once if one is unknown.
exact() {
	apt-cache show --no-all-versions "$1" 2>/dev/null | grep -qx "Package: $1"
}
for p in $missing; do
	if ! exact "$p"; then
		apt-get update -q -o DPkg::Lock::Timeout=900 >&2
		exact "$p" || {
			echo "setup-host.sh: apt knows no package named '$p'" >&2
			exit 1
		}
	fi
done
echo "setup-host.sh: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# A missing candidate usually means stale lists (new ABI since last update).
# Wait for a concurrent apt/dpkg rather than failing on its lock.
apt="apt-get -y -q -o DPkg::Lock::Timeout=900 --no-install-recommends"
if ! $apt install $missing >&2; then
	$apt update >&2
	$apt install $missing >&2
fi
