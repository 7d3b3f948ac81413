#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Attacks on shiftctl run by root on paths, images and containers an
# unprivileged user chose (issue 22, the attacker's pass), and on the
# marks root declares for users (issue 38): a --path that
# goes through a symbolic link the container's user planted (attach runs
# as host root in the container's mount namespace, and the directories it
# makes are given to the container's root); an "image" that is a FIFO, a
# symbolic link to one, a directory, or holds a filesystem other than
# ext4, xfs or btrfs.  TAP output; every test runs in a subshell in its
# own directory under /tmp and fails at its first failed check.
# Declared marks: a declared path through a symbolic link or a directory
# a user may write is never marked; a user can neither mark, unmark nor
# make the declared marks; a mark made for a user (--user, from
# /etc/subuid) lets his namespaces mount from it and no one else's.
set -u

SC=${SHIFTCTL:-shiftctl}
# tests/lib: beside this program in the guest (/tests/lib), one directory
# up in the source tree.
lib=$(dirname "$0")/lib
[ -f "$lib/tap.sh" ] || lib=$(dirname "$0")/../lib
# shellcheck source=../lib/tap.sh
. "$lib/tap.sh"
# shellcheck source=../lib/guest-test.sh
. "$lib/guest-test.sh"
guest_test_init shiftctl-attack
# (the declared marks' tests write these)
cleanup_more() {
	rm -rf /etc/shiftfs
	[ -f /etc/passwd.attack ] && mv /etc/passwd.attack /etc/passwd
	rm -f /etc/subuid /etc/subgid
}
# userns_cont: an unprivileged container's process, root 100000.
userns_cont() { userns_child mntns '0 100000 65536\n'; }

# ---- attach --path through a planted symbolic link ------------------------

# The user owns $W/home and plants home/evil -> a host directory that only
# root may write ($W/etc, standing for /etc).  Root attaches an image to
# the user's container at --path home/evil/x: attach must not make x in
# the host directory, owned by the container's root (uid 100000, which
# the user is), nor mount anything there.
attach_path_through_symlink_refused() {
	kid=$(userns_cont) || fail "$kid"
	KIDS="$KIDS $kid"
	mkdir -p "$W/tree" "$W/etc" "$W/home"
	echo x > "$W/tree/file"
	chown 100000:100000 "$W/home"
	ln -s "$W/etc" "$W/home/evil"
	sc 1 attach --path "$W/home/evil/x" "$kid" "$W/tree"
	has err "$W/home/evil"
	has err "symbolic link"
	[ -e "$W/etc/x" ] && fail "attach made $W/etc/x ($(stat -c %u:%g "$W/etc/x")) through the link"
	in_ns "$kid" "grep -q ' $W/etc' /proc/self/mountinfo" &&
		fail "mounted through the link in the container"
	kill "$kid"
}

# The last component is the link: the mount would land on its target.
attach_path_is_symlink_refused() {
	kid=$(userns_cont) || fail "$kid"
	KIDS="$KIDS $kid"
	mkdir -p "$W/tree" "$W/etc" "$W/home"
	chown 100000:100000 "$W/home"
	ln -s "$W/etc" "$W/home/mnt"
	sc 1 attach --path "$W/home/mnt" "$kid" "$W/tree"
	has err "symbolic link"
	in_ns "$kid" "grep -q ' $W/etc ' /proc/self/mountinfo" &&
		fail "mounted on the link's target in the container"
	kill "$kid"
}

# A plain --path still works, and what attach makes is the container's.
attach_plain_path_still_works() {
	kid=$(userns_cont) || fail "$kid"
	KIDS="$KIDS $kid"
	mkdir -p "$W/tree" "$W/home"
	echo x > "$W/tree/file"
	sc 0 attach --path "$W/home/a/b" "$kid" "$W/tree"
	[ "$(stat -c %u:%g "$W/home/a/b")" = 100000:100000 ] ||
		fail "made directory owned by $(stat -c %u:%g "$W/home/a/b")"
	[ "$(in_ns "$kid" "cat $W/home/a/b/file")" = x ] || fail "not mounted"
	kill "$kid"
}

# A container whose init is gone (exited mid-attach, its pid free for
# reuse): refused by name, and nothing made or mounted.
attach_to_exited_container_refused() {
	kid=$(userns_cont) || fail "$kid"
	mkdir -p "$W/tree"
	kill "$kid"
	wait "$kid" 2>/dev/null
	sc 1 attach --path "$W/p" "$kid" "$W/tree"
	has err "pid $kid"
	[ -e "$W/p" ] && fail "made $W/p"
	same_mounts
}

# ---- images that are not what their names say ----------------------------

image_is_fifo_refused() {
	mkfifo "$W/disk.img"
	mkdir "$W/mnt"
	sc 1 mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/mnt"
	has err "$W/disk.img: not a directory, disk image file or block device"
	same_mounts
}

image_is_symlink_to_fifo_refused() {
	mkfifo "$W/fifo"
	ln -s "$W/fifo" "$W/disk.img"
	mkdir "$W/mnt"
	sc 1 mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/mnt"
	has err "not a directory, disk image file or block device"
	same_mounts
}

# A directory named like an image is shifted as the directory it is.
image_is_directory_mounts_as_directory() {
	mkdir -p "$W/disk.img" "$W/mnt"
	echo x > "$W/disk.img/file"
	sc 0 mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/mnt"
	[ "$(cat "$W/mnt/file")" = x ] || fail "not the directory"
	[ -z "$(loops_of "$W/disk.img")" ] || fail "loop device for a directory"
	umount "$W/mnt"
}

# Root mounting a user's image hands its bytes to a filesystem driver: only
# the five the project supports (a FAT image here: mkdosfs is in busybox).
image_other_filesystem_refused() {
	command -v mkdosfs > /dev/null || { echo "no mkdosfs"; exit 77; }
	dd if=/dev/zero of="$W/disk.img" bs=1024 count=4096 2>/dev/null
	mkdosfs "$W/disk.img" > /dev/null 2>&1 || fail "mkdosfs"
	mkdir "$W/mnt"
	sc 1 mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/mnt"
	has err "$W/disk.img: holds a vfat filesystem: only ext4, xfs, btrfs, squashfs and erofs are mounted"
	same_mounts
	no_loop "$W/disk.img"
}

# The user's "image" is a link to a block device (a loop device standing
# for the host's /dev/sda): root would mount and shift the host's disk.
# A block device must be named by itself, or by a link under /dev.
image_symlink_to_block_device_refused() {
	mkdir -p "$W/vsrc" "$W/mnt"
	echo victim > "$W/vsrc/victim-file"
	truncate -s 32M "$W/victim.img"
	mkfs.ext4 -q -F -d "$W/vsrc" "$W/victim.img" > /dev/null 2>&1 || fail "mkfs.ext4"
	dev=$(losetup -f) || fail "losetup -f"
	losetup "$dev" "$W/victim.img" || fail "losetup"
	echo "victim on $dev"
	ln -s "$dev" "$W/disk.img"
	timeout 60 "$SC" mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/mnt" > "$W/out" 2> "$W/err"
	rc=$?
	sed 's/^/  err: /' "$W/err"
	[ -e "$W/mnt/victim-file" ] && { umount "$W/mnt"; losetup -d "$dev"; fail "the block device behind the link was mounted"; }
	[ $rc = 1 ] || { losetup -d "$dev"; fail "exit $rc, want 1"; }
	grep -qF "$W/disk.img: a link to the block device $dev" "$W/err" || { losetup -d "$dev"; fail "no message naming the link"; }
	# named by itself, root's choice, it mounts
	"$SC" mount -u 0:100000:65536 -g 0:100000:65536 "$dev" "$W/mnt" || { losetup -d "$dev"; fail "the device by its name"; }
	[ -e "$W/mnt/victim-file" ] || fail "not the device's filesystem"
	umount "$W/mnt"
	losetup -d "$dev"
	same_mounts
}

[ "$(id -u)" = 0 ] || tap_skip_all "needs root"
command -v "$SC" > /dev/null || tap_skip_all "shiftctl not installed"

# ---- declared marks and marks for a user -----------------------------------

# Users jejb (1000, subids 165536:65536) and alice (1001, 100000:65536),
# as useradd leaves them; a root-owned image tree.
users() {
	[ -f /etc/passwd.attack ] || cp /etc/passwd /etc/passwd.attack
	cp /etc/passwd.attack /etc/passwd
	echo "jejb:x:1000:1000::/home/jejb:/bin/sh" >> /etc/passwd
	echo "alice:x:1001:1001::/home/alice:/bin/sh" >> /etc/passwd
	printf 'jejb:165536:65536\nalice:100000:65536\n' | tee /etc/subuid > /etc/subgid
	rm -rf /etc/shiftfs
	mkdir -p "$W/img/etc" "$W/mnt"
	echo image > "$W/img/etc/hostname"
	chown -R 0:0 "$W/img"
	chmod 755 "$W"
}
as_user() { /usr/bin/setpriv --reuid "$1" --regid "$1" --clear-groups --inh-caps=-all sh -c "$2"; }

# --user takes the maps from /etc/subuid; --own-ids keeps his 1000;
# list says whom the mark serves; his namespace (the cover letter's build
# map in his range) mounts from it and writes as 0 on disk; alice's
# namespace, another range, is refused by the kernel.
mark_for_user_from_subuid() {
	users
	sc 0 mark --user jejb --own-ids "$W/img"
	sc 0 list --raw --noheadings --output TARGET,MODE,USER,MAPS
	has out "$W/img mark jejb uidmap=0:165536:1000,uidmap=1000:1000:1,uidmap=1001:166537:64535,"
	kid=$(userns_child mntns '0 165536 1000\n1000 1000 1\n65534 231070 1\n') || fail "$kid"
	KIDS="$KIDS $kid"
	as_ns_root "$kid" "'$SC' mount '$W/img' '$W/mnt' && echo new > '$W/mnt/etc/new'" ||
		fail "jejb's namespace could not mount from his mark and write"
	kill "$kid"
	kid=$(userns_child mntns '0 100000 65536\n') || fail "$kid"
	KIDS="$KIDS $kid"
	as_ns_root "$kid" "'$SC' mount '$W/img' '$W/mnt'" > "$W/err" 2>&1 &&
		fail "alice's namespace mounted from jejb's mark"
	has err "not allowed by the mark"
	kill "$kid"
	sc 0 unmark "$W/img"
	[ "$(stat -c %u:%g "$W/img/etc/new")" = 0:0 ] || fail "written as $(stat -c %u:%g "$W/img/etc/new")"
}

# --declare writes /etc/shiftfs/marks; unmark --declared drops the mark
# and keeps the line; mark --declared makes it again (the boot unit);
# unmark DIR drops both; a user can do none of it.
declared_marks_come_back() {
	users
	sc 0 mark --declare --user jejb "$W/img"
	has out "marked and declared"
	grep -qxF "$W/img	user=jejb" /etc/shiftfs/marks || fail "not declared: $(cat /etc/shiftfs/marks)"
	[ "$(stat -c %u:%a /etc/shiftfs/marks)" = 0:644 ] || fail "marks file $(stat -c %u:%a /etc/shiftfs/marks)"
	as_user 1000 "'$SC' mark --declared" > "$W/err" 2>&1 && fail "a user made the declared marks"
	as_user 1000 "'$SC' unmark '$W/img'" > "$W/err" 2>&1 && fail "a user unmarked"
	as_user 1000 "'$SC' unmark --declared" > "$W/err" 2>&1 && fail "a user unmarked the declared marks"
	as_user 1000 "'$SC' mark --declare --user jejb '$W/mnt'" > "$W/err" 2>&1 && fail "a user declared a mark"
	has err "root"
	grep -q " $W/img .* - shiftfs .*,mark" /proc/self/mountinfo || fail "the user's calls dropped the mark"
	sc 0 unmark --declared
	grep -q " $W/img " /proc/self/mountinfo && fail "unmark --declared left the mark"
	grep -qxF "$W/img	user=jejb" /etc/shiftfs/marks || fail "unmark --declared dropped the declaration"
	sc 0 mark --declared
	has out "$W/img: marked for jejb"
	grep -q " $W/img .* - shiftfs .*,mark,uidmap=0:165536:65536" /proc/self/mountinfo ||
		fail "mark --declared did not mark: $(grep " $W/" /proc/self/mountinfo)"
	sc 0 mark --declared
	has out "marked already"
	sc 0 unmark "$W/img"
	has out "declaration dropped"
	grep -q "$W/img" /etc/shiftfs/marks && fail "unmark left the declaration"
	grep -q " $W/img " /proc/self/mountinfo && fail "unmark left the mark"
	sc 1 unmark "$W/img"
	has err "not marked"
}

# Root declared $W/pub/img, in a sticky directory anyone may write (as
# /var/tmp/images is), and jejb made img first: a link to a tree of
# root's ($W/etc).  The boot's mark --declared must not follow it, nor
# mark a directory of his or one under a directory he may write, nor
# take "..".
declared_path_through_symlink_refused() {
	users
	mkdir -p "$W/pub" "$W/etc/secret" "$W/users/jejb/img"
	chmod 1777 "$W/pub"
	chown 1000:1000 "$W/users/jejb"
	as_user 1000 "ln -s '$W/etc' '$W/pub/img'" || fail "could not plant the link"
	mkdir -p /etc/shiftfs
	printf '%s\tuser=jejb\n' "$W/pub/img" > /etc/shiftfs/marks
	sc 1 mark --declared
	has err "img is a symbolic link"
	grep -q " $W/etc " /proc/self/mountinfo && fail "marked the link's target"
	# --declare through the link: the same
	sc 1 mark --declare --user jejb "$W/pub/img/secret"
	has err "a symbolic link"
	grep -q " $W/etc" /proc/self/mountinfo && fail "--declare marked through the link"
	# a directory of his own in the sticky one: he could swap it later
	as_user 1000 "rm '$W/pub/img' && mkdir '$W/pub/img'"
	sc 1 mark --declared
	has err "img belongs to uid 1000"
	# a link he planted in his own directory (no sticky bit: the kernel's
	# protected_symlinks would let root follow it)
	as_user 1000 "ln -s '$W/etc' '$W/users/jejb/link'" || fail "could not plant the link"
	printf '%s\tuser=jejb\n' "$W/users/jejb/link" > /etc/shiftfs/marks
	sc 1 mark --declared
	grep -q " $W/etc " /proc/self/mountinfo && fail "marked the target of his link"
	sc 1 mark --declare --user jejb "$W/users/jejb/link/secret"
	grep -q " $W/etc" /proc/self/mountinfo && fail "--declare marked through his link"
	# a directory of root's under one of his
	printf '%s\tuser=jejb\n' "$W/users/jejb/img" > /etc/shiftfs/marks
	sc 1 mark --declared
	has err "jejb belongs to uid 1000"
	grep -q " $W/users/jejb/img " /proc/self/mountinfo && fail "marked under his directory"
	# a group-writable directory above
	mkdir -p "$W/shared/img"
	chmod 775 "$W/shared"
	printf '%s\tuser=jejb\n' "$W/shared/img" > /etc/shiftfs/marks
	sc 1 mark --declared
	has err "may write $W/shared"
	# ".." never reaches the kernel
	printf '%s/users/../etc\tuser=jejb\n' "$W" > /etc/shiftfs/marks
	sc 1 mark --declared
	has err "not canonical"
	grep -q " $W/etc " /proc/self/mountinfo && fail "marked through .."
	true
}

t attach_path_through_symlink_refused
t attach_path_is_symlink_refused
t attach_plain_path_still_works
t attach_to_exited_container_refused
t image_is_fifo_refused
t image_is_symlink_to_fifo_refused
t image_is_directory_mounts_as_directory
t image_other_filesystem_refused
t image_symlink_to_block_device_refused
t mark_for_user_from_subuid
t declared_marks_come_back
t declared_path_through_symlink_refused

tap_done
