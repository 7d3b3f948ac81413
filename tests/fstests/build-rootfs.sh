#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build (or reuse) the Debian 12 root filesystem the fstests guest boots:
# fstests' runtime needs (bash, perl, gawk, xfsprogs, e2fsprogs, attr,
# acl, quota, dmsetup, fio, util-linux...) and fstests itself, built in it
# from the checkout FSTESTS at the commit in tests/fstests/PINNED (our
# patch is applied at run time, not here: it is shell only).  The users
# fstests' non-root tests want (fsgqa, fsgqa2, 123456-fsgqa) are made.
#
#   tests/fstests/build-rootfs.sh FSTESTS BUILD_DIR
#
# Prints the image on its last line of stdout: a raw ext4 image of the
# tree, BUILD_DIR/fstests/rootfs-KEY/root.img, KEY a hash of this script
# and the pinned commit.  Made with mmdebstrap from the host's bookworm
# mirrors (images/cloud/mirrors.sh), once; older builds are removed.
# Needs root (chroot, mount); mounts only in a private mount namespace.
set -eu

say() { echo "fstests-rootfs: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

[ $# -eq 2 ] || { echo "usage: $0 FSTESTS BUILD_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$1" 2>/dev/null && pwd) || die "FSTESTS '$1' is not a directory"
mkdir -p "$2"
build=$(cd "$2" && pwd)
pinned=$(cat "$here/PINNED")
[ "$(id -u)" -eq 0 ] || die "must run as root (mmdebstrap, chroot)"
command -v mmdebstrap >/dev/null || die "mmdebstrap is missing (apt-get install mmdebstrap)"
head=$(git -C "$src" rev-parse HEAD 2>/dev/null) || die "FSTESTS '$src' is not a git checkout"
[ "$head" = "$pinned" ] || die "FSTESTS '$src' is at $head, not the pinned $pinned"

# Runtime: what fstests' README asks for on Debian, and what its tests
# call; build: what its configure checks for.
pkgs=bash,perl,gawk,bc,sed,grep,findutils,coreutils,util-linux,mount,procps,psmisc,kmod,hostname
pkgs=$pkgs,xfsprogs,e2fsprogs,attr,acl,quota,dmsetup,udev,fio,dbench,uuid-runtime,libcap2-bin
pkgs=$pkgs,bsdextrautils,file,xz-utils,keyutils,python3,time,man-db,sqlite3,busybox
pkgs=$pkgs,build-essential,autoconf,automake,libtool-bin,pkg-config,xfslibs-dev,uuid-dev
pkgs=$pkgs,libacl1-dev,libattr1-dev,libaio-dev,libgdbm-dev,liburing-dev,libcap-dev

key=$( { echo "$pinned"; cat "$here/build-rootfs.sh"; } | sha256sum | cut -c1-12)
cache=$build/fstests
out=$cache/rootfs-$key
mkdir -p "$cache"
if [ -f "$out/.done" ]; then
	say "cached $out"
	echo "$out/root.img"
	exit 0
fi
exec 9>"$cache/.rootfs-lock"
flock 9
if [ -f "$out/.done" ]; then
	echo "$out/root.img"
	exit 0
fi

work=$cache/rootfs-work
root=$work/root
no_mounts_under() {
	if findmnt -rn -o TARGET | grep -q "^$1/"; then
		die "something is still mounted under $1 (findmnt); unmount it first"
	fi
}
cleanup() {
	no_mounts_under "$work"
	rm -rf "$work"
}
no_mounts_under "$work"
rm -rf "$work"
mkdir -p "$work"
trap cleanup EXIT

srcs=$("$here/../../images/cloud/mirrors.sh" --sources bookworm) ||
	die "no bookworm mirror in the host's apt sources"
set --
while read -r line; do
	set -- "$@" "$line"
done <<EOS
$srcs
EOS
t0=$(date +%s)
say "mmdebstrap bookworm with fstests' needs into $root ..."
if ! unshare --mount --propagation private \
	mmdebstrap --variant=minbase --aptopt='Acquire::Languages "none"' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--include="$pkgs" bookworm "$root" "$@" > "$work/mmdebstrap.log" 2>&1; then
	tail -n 30 "$work/mmdebstrap.log" >&2
	die "mmdebstrap failed (log kept: $work/mmdebstrap.log)"
fi

# fstests at the pinned commit, its tree only (no .git), built in the
# root so that it links against the root's own libraries.
mkdir -p "$root/opt/fstests"
git -C "$src" archive --format=tar "$pinned" | tar -x -C "$root/opt/fstests"
say "building fstests $pinned in the root ..."
if ! unshare --mount --propagation private sh -c '
	mount -t proc proc "$1/proc" || exit 1
	exec chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LC_ALL=C.UTF-8 sh -c "cd /opt/fstests && make -j2"
' sh "$root" > "$work/make.log" 2>&1; then
	tail -n 30 "$work/make.log" >&2
	die "building fstests failed"
fi
chroot "$root" sh -e -c '
	groupadd -g 1000 fsgqa
	useradd -u 1000 -g fsgqa -m fsgqa
	useradd -u 1001 -g fsgqa -m fsgqa2
	useradd -u 1002 -m 123456-fsgqa
	passwd -d root >/dev/null
'
echo fstests > "$root/etc/hostname"
printf '127.0.0.1\tlocalhost fstests\n' > "$root/etc/hosts"
: > "$root/etc/fstab"
rm -rf "$root/var/lib/apt/lists/"* "$root/var/cache/apt/"*

mib=$(du -sm "$root" | cut -f1)
# Room for the kernel's modules (unpacked at boot) and fstests' results.
size=$(( mib + 1536 ))
mkfs.ext4 -q -F -L fstests-root -d "$root" "$work/root.img" "${size}M" ||
	die "mkfs.ext4 -d of the root failed"
mkdir -p "$work/out"
mv "$work/root.img" "$work/out/root.img"
{
	echo "fstests=$pinned"
	echo "key=$key"
	echo "tree_mib=$mib"
	echo "total_s=$(( $(date +%s) - t0 ))"
	echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$work/out/info"
touch "$work/out/.done"
for old in "$cache"/rootfs-*; do
	case $old in "$cache/rootfs-work"|"$cache/rootfs-lock") continue ;; esac
	[ -d "$old" ] && rm -rf "$old"
done
mv "$work/out" "$out"
say "root ready in $(( $(date +%s) - t0 ))s: $out"
echo "$out/root.img"
