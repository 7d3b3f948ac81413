#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The kernel's own idmapped mounts, measured on the booted kernel: the
# facts behind the README's "Why a module, when the kernel has idmapped
# mounts".  TAP output, run as root in the busybox guest.
#
# For each filesystem the guest can make (ext4, xfs, btrfs, tmpfs,
# overlayfs, FUSE as bindfs, and the read-only image formats squashfs
# and erofs), root in the initial namespaces tries
# to idmap a mount of it (bench-idmap-mount: open_tree(OPEN_TREE_CLONE),
# mount_setattr(MOUNT_ATTR_IDMAP), move_mount), and the result is printed
# as one "idmap-table:" line per kernel.  Which filesystems support it is
# a property of the kernel (FS_ALLOW_IDMAP), so it is reported, not
# asserted; what is asserted:
#   - root can idmap ext4 (every kernel since 5.12: the probe itself
#     works, or the table would be all "no" for a wrong reason);
#   - a user namespace's root, the unprivileged container's admin,
#     cannot idmap a mount of that same host-owned ext4 even in a mount
#     namespace of its own: can_idmap_mount() wants CAP_SYS_ADMIN over
#     the superblock's user namespace (EPERM).  This is the case shiftfs
#     marks exist for (tests/guest/mark_userns.c mounts shiftfs there).
set -u

IDMAP=${IDMAP_MOUNT:-/usr/libexec/shiftfs/bench-idmap-mount}
ROOT=$(mktemp -d /tmp/idmap-fs.XXXXXX)
chmod 755 "$ROOT"

tap_sh=$(dirname "$0")/lib/tap.sh
[ -f "$tap_sh" ] || tap_sh=$(dirname "$0")/../lib/tap.sh
# shellcheck source=../lib/tap.sh
. "$tap_sh"
tap_start

cleanup_all() {
	grep " $ROOT/" /proc/self/mountinfo | awk '{ print $5 }' | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
	for f in "$ROOT"/img.*; do
		for l in $(losetup -j "$f" 2>/dev/null | cut -d: -f1); do
			losetup -d "$l" 2>/dev/null
		done
	done
	rm -rf "$ROOT"
}
trap cleanup_all EXIT

[ -x "$IDMAP" ] || tap_skip_all "$IDMAP is missing (make bench-helpers)"

# mkfs_mount FS DIR: a fresh FS mounted on DIR (an image file on a loop
# device for the block filesystems); returns 1 if the guest cannot.
mkfs_mount() {
	fs=$1 dir=$2
	mkdir -p "$dir"
	case $fs in
	ext4 | xfs | btrfs)
		rm -f "$ROOT/img.$fs"
		truncate -s 320M "$ROOT/img.$fs" || return 1
		case $fs in
		ext4) mkfs.ext4 -q -F "$ROOT/img.$fs" ;;
		xfs) mkfs.xfs -q -f "$ROOT/img.$fs" ;;
		btrfs) mkfs.btrfs -q -f "$ROOT/img.$fs" ;;
		esac > "$ROOT/mkfs.log" 2>&1 || return 1
		mount -o loop -t "$fs" "$ROOT/img.$fs" "$dir"
		;;
	tmpfs) mount -t tmpfs tmpfs "$dir" ;;
	overlay)
		mkdir -p "$ROOT/ovl/lower" "$ROOT/ovl/upper" "$ROOT/ovl/work"
		mount -t overlay -o "lowerdir=$ROOT/ovl/lower,upperdir=$ROOT/ovl/upper,workdir=$ROOT/ovl/work" ovl "$dir"
		;;
	fuse)
		command -v bindfs > /dev/null || return 1
		mkdir -p "$ROOT/fuse-src"
		bindfs "$ROOT/fuse-src" "$dir"
		;;
	squashfs | erofs)
		mkdir -p "$ROOT/img-src"
		echo image > "$ROOT/img-src/f"
		rm -f "$ROOT/img.$fs"
		case $fs in
		squashfs) mksquashfs "$ROOT/img-src" "$ROOT/img.$fs" -quiet -no-progress ;;
		erofs) mkfs.erofs "$ROOT/img.$fs" "$ROOT/img-src" ;;
		esac > "$ROOT/mkfs.log" 2>&1 || return 1
		modprobe -q "$fs" 2> /dev/null
		mount -o loop,ro -t "$fs" "$ROOT/img.$fs" "$dir"
		;;
	*) return 1 ;;
	esac
}

kernel=$(uname -r)
table="idmap-table: $kernel"
idmap_ext4=n/a
for fs in ext4 xfs btrfs tmpfs overlay fuse squashfs erofs; do
	src=$ROOT/src-$fs dst=$ROOT/dst-$fs
	mkdir -p "$dst"
	if ! mkfs_mount "$fs" "$src" > "$ROOT/mount.log" 2>&1; then
		tap_diag "$fs: the guest cannot make or mount it:"
		tap_diag_file "$ROOT/mount.log"
		[ -f "$ROOT/mkfs.log" ] && tap_diag_file "$ROOT/mkfs.log"
		table="$table $fs=n/a"
		continue
	fi
	if "$IDMAP" "$src" "$dst" > "$ROOT/idmap.log" 2>&1; then
		got=yes
		umount "$dst"
	else
		got=no
		tap_diag "$fs: $(tail -n 1 "$ROOT/idmap.log")"
	fi
	table="$table $fs=$got"
	[ "$fs" = ext4 ] && idmap_ext4=$got
done
tap_diag "$table"
echo "$table"

tap_eq "root can idmap a mount of ext4 (the probe works)" "$idmap_ext4" yes

# The unprivileged admin: root of a user namespace (host uid 0 mapped,
# as "unshare -Ur" does for an ordinary user; here as the container's
# admin would be), with a mount namespace of its own, on the host-owned
# ext4 mounted above.  bench-idmap-mount makes the map's namespace as a
# child of this one, with a map this namespace can write (its own 0).
if [ -d "$ROOT/src-ext4/lost+found" ]; then
	unshare -U -m --map-root-user --propagation private \
		"$IDMAP" -u 0:0:1 -g 0:0:1 "$ROOT/src-ext4" "$ROOT/dst-ext4" > "$ROOT/userns.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ] && grep -q 'mount_setattr.*Operation not permitted' "$ROOT/userns.log"; then
		tap_ok "a user namespace's root cannot idmap a host-owned ext4 mount (EPERM)"
	else
		tap_not_ok "a user namespace's root cannot idmap a host-owned ext4 mount (EPERM)"
		tap_diag "exit $rc, want mount_setattr: Operation not permitted"
		tap_diag_file "$ROOT/userns.log"
	fi
else
	tap_not_ok "a user namespace's root cannot idmap a host-owned ext4 mount (EPERM)"
	tap_diag "no ext4 to try it on"
fi

tap_done
