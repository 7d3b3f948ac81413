#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install what building and testing shiftfs needs on a Debian 12 host.
# A no-op (one dpkg query) when everything is already there.
#
#   images/setup-host.sh [--lint-fast|--userspace|--deb|--module|--dkms|--lint|--arm64|--e2e] KVER...
#
# What each asks for (each includes the ones above it in its line):
#   --lint-fast  shellcheck, and checkpatch's needs: perl, xz-utils to
#                unpack it (make check's fast lint, tests/lint-fast.sh);
#                alone, no compiler, headers or chroot tools
#   --userspace  compiler and the libraries shiftctl links (make install)
#   --deb        userspace + debhelper, dh-dkms, lintian (make deb: the
#                host is the Debian 12 that builds and checks the bookworm
#                packages; Debian 13's come from its chroot)
#   --module     userspace + linux-headers-KVER (make module)
#   --dkms       module + dkms (make dkms-install)
#   --lint       module + deb + sparse, shellcheck, mmdebstrap (make lint:
#                its arm64 builds are cross-compiled in the build chroots)
#   --arm64      mmdebstrap (make module-arm64, images/cross.sh: every
#                arm64 build runs in a chroot, the host gets no cross gcc)
#   (none)       lint + the guest: QEMU and what the initramfs carries
#                (make check, make test, make bench, make demo)
#   --e2e        guest + what the cloud-image guest build needs, and
#                qemu-system-arm for the arm64 build image's second stage
#
# KVER: kernel releases whose headers are needed (see images/kver.sh):
# bookworm's on the host, mmdebstrap for the chroots of the others.
# install, deb and shiftctl never pull in QEMU, stress-ng or kernel
# headers: an admin installing the tools needs none of them.
set -eu

mode=guest
case ${1:-} in
--lint-fast|--userspace|--deb|--module|--dkms|--lint|--arm64|--guest|--e2e)
	mode=${1#--}
	shift
	;;
--*)
	echo "setup-host.sh: unknown option '$1'" >&2
	exit 2
	;;
esac

# Build: compiler, kbuild, userspace libraries shiftctl links.
pkgs="gcc make libc6-dev pkg-config libmount-dev libcap-dev libblkid-dev
libsmartcols-dev"
# make deb: dpkg-buildpackage with debhelper and dh-dkms, then lintian.
debpkgs="dpkg-dev debhelper dh-dkms lintian"
# Headers of bookworm's kernels go on the host; the module is built for
# any other Debian release's kernel in a chroot of that release
# (images/chroot.sh, made with mmdebstrap), never on the host.
headers() {
	for kver in "$@"; do
		suite=$("$(dirname "$0")/kver.sh" -s "$kver") || exit 1
		case $suite in
		bookworm) pkgs="$pkgs linux-headers-$kver" ;;
		*) pkgs="$pkgs mmdebstrap" ;;
		esac
	done
}
case $mode in
lint-fast) pkgs="shellcheck perl xz-utils" ;;
userspace) ;;
deb) pkgs="$pkgs $debpkgs" ;;
module) headers "$@" ;;
dkms) headers "$@"; pkgs="$pkgs dkms" ;;
lint) headers "$@"; pkgs="$pkgs $debpkgs sparse shellcheck xz-utils perl mmdebstrap" ;;
arm64) pkgs="$pkgs mmdebstrap" ;;
guest|e2e)
	headers "$@"
	# Guest: emulator, initramfs contents (tools the guest tests drive);
	# make check's lint test (sparse, shellcheck; checkpatch needs perl,
	# xz-utils);
	# make test's e2e tier installs the .debs (make deb); the build
	# chroots of trixie's and sid's kernels (mmdebstrap).
	pkgs="$pkgs qemu-system-x86 busybox-static cpio kmod e2fsprogs xfsprogs
	      btrfs-progs acl attr libcap2-bin stress-ng util-linux bindfs
	      squashfs-tools erofs-utils sparse shellcheck perl xz-utils zstd $debpkgs mmdebstrap"
	;;
esac
if [ "$mode" = e2e ]; then
	pkgs="$pkgs debootstrap qemu-utils cloud-image-utils dosfstools eatmydata mtools
	      qemu-system-arm"
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
