#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest tests of shiftctl (run as root in the busybox guest with shiftfs
# loaded): mount of a directory and of an ext4 image with explicit maps
# and with maps derived from a process in a user namespace; bad input that
# must fail with a clear message and leave no mount, loop device or
# temporary directory behind; attach/detach into a process that has its
# own user and mount namespaces, named by pid.  TAP output.
#
# Every test runs in a subshell in its own directory under /tmp; a test
# fails at its first failed check and its log is shown as "# " lines.
#
# Some 900 lines in one file: every test shares the cleanup checks (no
# mount, loop device or directory left behind) and the namespace helpers.
set -u

SC=${SHIFTCTL:-shiftctl}
# shiftctl's debug lines (loop device, lower mount, shiftfs source used)
# go into each test's log, shown as "# " lines after its result.
SHIFTCTL_DEBUG=1
export SHIFTCTL_DEBUG
# tests/lib: beside this program in the guest (/tests/lib), one directory
# up in the source tree.
lib=$(dirname "$0")/lib
[ -f "$lib/tap.sh" ] || lib=$(dirname "$0")/../lib
# shellcheck source=../lib/tap.sh
. "$lib/tap.sh"
# shellcheck source=../lib/guest-test.sh
. "$lib/guest-test.sh"
guest_test_init shiftctl-test

# ---- helpers (used inside a test's subshell) -----------------------------

mounted() { awk -v m="$1" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo; }
fstype_of() { awk -v m="$1" '$5 == m { for (i = 7; $i != "-"; i++); t = $(i + 1) } END { print t }' /proc/self/mountinfo; }

no_tmpdirs() {
	for d in /run/shiftctl-lower.* /tmp/shiftctl-lower.*; do
		[ -e "$d" ] && fail "temporary directory left behind: $d"
	done
	return 0
}

owner() { stat -c %u:%g "$1"; }

# The per-mount options of the top mount on $1 ("rw,nosuid,nodev,relatime"),
# from mountinfo ($2, default ours).
mnt_opts() { awk -v m="$1" '$5 == m { o = $6 } END { print o }' "${2:-/proc/self/mountinfo}"; }
has_opt() { case ",$(mnt_opts "$1" "${3:-}")," in *",$2,"*) return 0 ;; esac; return 1; }

# A tree with files of three owners.
make_tree() {
	mkdir -p "$1/sub"
	echo root > "$1/root-file"
	echo user > "$1/user-file"
	echo nobody > "$1/nobody-file"
	echo other > "$1/other-file"
	chown 1000:1000 "$1/user-file"
	chown 65534:65534 "$1/nobody-file"
	chown 5000:5000 "$1/other-file"
}

# An ext4 image holding make_tree's files.
make_image() {
	make_tree "$W/imgsrc"
	truncate -s 32M "$1"
	mkfs.ext4 -q -F -d "$W/imgsrc" "$1" > /dev/null 2>&1 ||
		fail "mkfs.ext4 -d failed"
}

# A squashfs or erofs image ($1) at $2 holding make_tree's files: the
# formats images ship in, read-only by design.
make_ro_image() {
	modprobe -q "$1" 2> /dev/null
	grep -qw "$1" /proc/filesystems || skip "no $1 in this kernel"
	make_tree "$W/imgsrc"
	case $1 in
	squashfs) mksquashfs "$W/imgsrc" "$2" -noappend -quiet -no-progress ;;
	erofs) mkfs.erofs "$2" "$W/imgsrc" ;;
	esac > "$W/mkfs.log" 2>&1 || fail "cannot make the $1 image: $(cat "$W/mkfs.log")"
}

# ---- tests ----------------------------------------------------------------

check_reports_usable() {
	sc 0 check
	has out "filesystem"
	grep -qE '^filesystem +ok ' "$W/out" || fail "shiftfs not reported in /proc/filesystems"
	grep -qE '^loaded +ok ' "$W/out" || fail "module not reported loaded"
	grep -qE '^module +ok +/lib/modules/.*/shiftfs\.ko' "$W/out" || fail "module file not found"
	has out "shiftfs is usable"
	sc 0 check --json
	has out '"usable":true'
}

mount_dir_explicit_maps() {
	make_tree "$W/lower"
	mkdir "$W/mnt"
	sc 0 mount --uidmap 0:100000:65536 --gidmap 0:100000:65536 "$W/lower" "$W/mnt"
	mounted "$W/mnt" || fail "not mounted"
	[ "$(fstype_of "$W/mnt")" = shiftfs ] || fail "not shiftfs: $(fstype_of "$W/mnt")"
	[ "$(owner "$W/mnt/root-file")" = 100000:100000 ] || fail "root-file: $(owner "$W/mnt/root-file")"
	[ "$(owner "$W/mnt/user-file")" = 101000:101000 ] || fail "user-file: $(owner "$W/mnt/user-file")"
	[ "$(owner "$W/lower/root-file")" = 0:0 ] || fail "lower changed"
	[ "$(cat "$W/mnt/user-file")" = user ] || fail "content"
	sc 0 list
	has out "$W/mnt"
	has out "uidmap=0:100000:65536"
	sc 0 list --json
	has out "\"target\": \"$W/mnt\""
	has out '"nosuid": true'
	sc 0 umount "$W/mnt"
	mounted "$W/mnt" && fail "still mounted"
	same_mounts
}

# Host root shifting with a reverse map (underlying 100000 shows as 0):
# by default the mount is nosuid and nodev, so a host user running a
# setuid file owned on disk by 100000 stays himself; --suid lifts nosuid
# (and only that); a noexec or nosuid source directory stays so.
mount_nosuid_nodev_by_default() {
	mkdir "$W/lower" "$W/mnt"
	cp "$(command -v bash)" "$W/lower/bash"
	chown 100000:100000 "$W/lower/bash"
	chmod 4755 "$W/lower/bash"
	sc 0 mount -u 100000:0:65536 -g 100000:0:65536 "$W/lower" "$W/mnt"
	echo "mountinfo: $(mnt_opts "$W/mnt")"
	[ "$(owner "$W/mnt/bash")" = 0:0 ] || fail "bash shows as $(owner "$W/mnt/bash")"
	euid=$(/usr/bin/setpriv --reuid 1000 --regid 1000 --clear-groups --inh-caps=-all \
		"$W/mnt/bash" -p -c 'echo $EUID')
	[ "$euid" = 1000 ] || fail "uid 1000 ran a setuid file through the mount with euid $euid"
	has_opt "$W/mnt" nosuid || fail "default mount is not nosuid"
	has_opt "$W/mnt" nodev || fail "default mount is not nodev"
	sc 0 list --raw --noheadings --output TARGET,NOSUID,NODEV
	has out "$W/mnt 1 1"
	sc 0 umount "$W/mnt"
	sc 0 mount --suid -u 100000:0:65536 -g 100000:0:65536 "$W/lower" "$W/mnt"
	echo "mountinfo: $(mnt_opts "$W/mnt")"
	has_opt "$W/mnt" nosuid && fail "--suid mount is nosuid"
	has_opt "$W/mnt" nodev || fail "--suid mount is not nodev"
	sc 0 list --raw --noheadings --output TARGET,NOSUID,NODEV
	has out "$W/mnt 0 1"
	euid=$(/usr/bin/setpriv --reuid 1000 --regid 1000 --clear-groups --inh-caps=-all \
		"$W/mnt/bash" -p -c 'echo $EUID')
	[ "$euid" = 0 ] || fail "--suid: setuid file ran with euid $euid, want 0"
	sc 0 umount "$W/mnt"
	mkdir "$W/nx" "$W/ns"
	mount -t tmpfs -o noexec tmpfs "$W/nx" || fail "cannot mount a noexec tmpfs"
	mount -t tmpfs -o nosuid tmpfs "$W/ns" || fail "cannot mount a nosuid tmpfs"
	mkdir "$W/nx/d" "$W/ns/d"
	sc 0 mount --suid -u 0:100000:65536 -g 0:100000:65536 "$W/nx/d" "$W/mnt"
	echo "mountinfo: $(mnt_opts "$W/mnt")"
	has_opt "$W/mnt" noexec || fail "source is noexec, the shiftfs mount is not"
	sc 0 umount "$W/mnt"
	sc 0 mount --suid -u 0:100000:65536 -g 0:100000:65536 "$W/ns/d" "$W/mnt"
	echo "mountinfo: $(mnt_opts "$W/mnt")"
	has_opt "$W/mnt" nosuid || fail "source is nosuid, the --suid shiftfs mount is not"
	sc 0 umount "$W/mnt"
	umount "$W/nx" "$W/ns"
	same_mounts
}

maps_from_userns_process() {
	kid=$(userns_child) || fail "$kid"
	KIDS="$KIDS $kid"
	sc 0 maps "$kid"
	has out "uidmap=0:100000:1000,uidmap=1000:1000:1,uidmap=65534:101000:1,gidmap=0:100000:1000,gidmap=1000:1000:1,gidmap=65534:101000:1"
	sc 0 maps --json "$kid"
	has out "\"pid\":$kid"
	sc 1 maps 1
	has err "pid 1 is not in a user namespace"
	kill "$kid"
}

mount_dir_maps_from_pid() {
	kid=$(userns_child) || fail "$kid"
	make_tree "$W/lower"
	mkdir "$W/mnt"
	sc 0 mount --pid "$kid" "$W/lower" "$W/mnt"
	kill "$kid"
	[ "$(owner "$W/mnt/root-file")" = 100000:100000 ] || fail "root-file: $(owner "$W/mnt/root-file")"
	[ "$(owner "$W/mnt/user-file")" = 1000:1000 ] || fail "user-file: $(owner "$W/mnt/user-file")"
	[ "$(owner "$W/mnt/nobody-file")" = 101000:101000 ] || fail "nobody-file: $(owner "$W/mnt/nobody-file")"
	[ "$(owner "$W/mnt/other-file")" = 65534:65534 ] || fail "unmapped other-file: $(owner "$W/mnt/other-file")"
	sc 0 list
	has out "uidmap=0:100000:1000,uidmap=1000:1000:1,uidmap=65534:101000:1"
	sc 0 umount "$W/mnt"
	same_mounts
}

# An LXC name, resolved by a stand-in lxc-info to a user-namespace process.
mount_by_container_name() {
	kid=$(userns_child) || fail "$kid"
	mkdir "$W/bin"
	printf '#!/bin/sh\n[ "$2" = web ] && echo %s && exit 0\necho "$2 does not exist" >&2\nexit 1\n' \
		"$kid" > "$W/bin/lxc-info"
	chmod +x "$W/bin/lxc-info"
	make_tree "$W/lower"
	mkdir "$W/mnt"
	PATH=$W/bin:$PATH
	sc 0 mount --container web "$W/lower" "$W/mnt"
	[ "$(owner "$W/mnt/root-file")" = 100000:100000 ] || fail "root-file: $(owner "$W/mnt/root-file")"
	sc 0 umount "$W/mnt"
	sc 1 mount --container db "$W/lower" "$W/mnt"
	has err "unknown container db (lxc-info: db does not exist)"
	sc 0 maps web
	has out "uidmap=0:100000:1000"
	kill "$kid"
	same_mounts
}

mount_identity_pid_refused() {
	make_tree "$W/lower"
	mkdir "$W/mnt"
	sc 1 mount --pid 1 "$W/lower" "$W/mnt"
	has err "pid 1 is not in a user namespace"
	same_mounts
}

mount_ext4_image() {
	make_image "$W/disk.img"
	mkdir "$W/mnt"
	sc 0 mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/mnt"
	[ "$(fstype_of "$W/mnt")" = shiftfs ] || fail "not shiftfs"
	[ -n "$(loops_of "$W/disk.img")" ] || fail "no loop device backs the image"
	[ "$(owner "$W/mnt/root-file")" = 100000:100000 ] || fail "root-file: $(owner "$W/mnt/root-file")"
	[ "$(owner "$W/mnt/user-file")" = 101000:101000 ] || fail "user-file: $(owner "$W/mnt/user-file")"
	[ "$(cat "$W/mnt/root-file")" = root ] || fail "content"
	no_tmpdirs
	loop=$(loops_of "$W/disk.img")
	sc 0 list
	has out "$W/disk.img"
	sc 0 list --json
	has out "\"device\": \"/dev/${loop##*/}\""
	has out "\"image\": \"$W/disk.img\""
	sc 0 umount "$W/mnt"
	same_mounts
	no_loop "$W/disk.img"
}

mount_ext4_image_ro() {
	make_image "$W/disk.img"
	mkdir "$W/mnt"
	kid=$(userns_child) || fail "$kid"
	sc 0 mount --ro --pid "$kid" "$W/disk.img" "$W/mnt"
	kill "$kid"
	loop=$(loops_of "$W/disk.img")
	[ -n "$loop" ] || fail "no loop device"
	[ "$(cat "$loop/ro")" = 1 ] || fail "$loop is not read-only"
	awk -v m="$W/mnt" '$5 == m { print $6 }' /proc/self/mountinfo | grep -q '^ro' ||
		fail "mount is not read-only"
	touch "$W/mnt/new" 2>/dev/null && fail "write to a read-only mount worked"
	sc 0 umount "$W/mnt"
	same_mounts
	no_loop "$W/disk.img"
}

mount_xfs_image() {
	command -v mkfs.xfs > /dev/null || skip "no mkfs.xfs"
	grep -qw xfs /proc/filesystems || skip "no xfs in this kernel"
	make_tree "$W/imgsrc"
	truncate -s 320M "$W/xfs.img"
	mkfs.xfs -q "$W/xfs.img" > /dev/null 2>&1 || skip "mkfs.xfs failed"
	mkdir "$W/mnt"
	sc 0 mount -u 0:100000:65536 -g 0:100000:65536 "$W/xfs.img" "$W/mnt"
	has err "xfs on /dev/loop"
	[ "$(owner "$W/mnt")" = 100000:100000 ] || fail "xfs root: $(owner "$W/mnt")"
	sc 0 umount "$W/mnt"
	same_mounts
	no_loop "$W/xfs.img"
}

# No --ro: the image's format is read-only, so are its loop device, its
# filesystem and the shiftfs mount; the ids are shifted as on ext4.
mount_ro_format_image() {
	make_ro_image "$1" "$W/$1.img"
	mkdir "$W/mnt"
	sc 0 mount -u 0:100000:65536 -g 0:100000:65536 "$W/$1.img" "$W/mnt"
	has err "$1 is read-only: mounting it read-only"
	[ "$(fstype_of "$W/mnt")" = shiftfs ] || fail "not shiftfs"
	loop=$(loops_of "$W/$1.img")
	[ -n "$loop" ] || fail "no loop device backs the image"
	[ "$(cat "$loop/ro")" = 1 ] || fail "$loop is not read-only"
	has_opt "$W/mnt" ro || fail "mount is not read-only: $(mnt_opts "$W/mnt")"
	[ "$(owner "$W/mnt/root-file")" = 100000:100000 ] || fail "root-file: $(owner "$W/mnt/root-file")"
	[ "$(owner "$W/mnt/user-file")" = 101000:101000 ] || fail "user-file: $(owner "$W/mnt/user-file")"
	[ "$(cat "$W/mnt/root-file")" = root ] || fail "content"
	touch "$W/mnt/new" 2> "$W/touch.err" && fail "a write to the $1 image worked"
	grep -q 'Read-only file system' "$W/touch.err" || fail "touch: $(cat "$W/touch.err")"
	sc 0 list
	has out "$W/$1.img"
	sc 0 umount "$W/mnt"
	same_mounts
	no_loop "$W/$1.img"
}
mount_squashfs_image() { mount_ro_format_image squashfs; }
mount_erofs_image() { mount_ro_format_image erofs; }

umount_busy_and_foreign() {
	make_image "$W/disk.img"
	mkdir "$W/mnt"
	sc 0 mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/mnt"
	( cd "$W/mnt" && exec sleep 600 ) &
	holder=$!
	sleep 0.2
	sc 1 umount "$W/mnt"
	has err "$W/mnt: cannot unmount: busy"
	mounted "$W/mnt" || fail "busy mount went away"
	kill "$holder"
	wait "$holder" 2>/dev/null
	sc 0 umount "$W/mnt"
	no_loop "$W/disk.img"
	sc 1 umount /tmp
	has err "/tmp: not a shiftfs mount (it is tmpfs)"
	sc 1 umount "$W"
	has err "$W: not a mount point"
	sc 1 umount "$W/nonexistent"
	has err "$W/nonexistent: No such file or directory"
	same_mounts
}

bad_missing_source() {
	mkdir "$W/mnt"
	sc 1 mount -u 0:100000:65536 -g 0:100000:65536 "$W/nonexistent" "$W/mnt"
	has err "$W/nonexistent: No such file or directory"
	same_mounts
}

bad_missing_target() {
	make_image "$W/disk.img"
	sc 1 mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/nonexistent"
	has err "$W/nonexistent: No such file or directory"
	same_mounts
	no_loop "$W/disk.img"
}

bad_non_directory_source() {
	mkdir "$W/mnt"
	mkfifo "$W/fifo"
	sc 1 mount -u 0:100000:65536 -g 0:100000:65536 "$W/fifo" "$W/mnt"
	has err "$W/fifo: not a directory, disk image file or block device"
	same_mounts
}

bad_target_not_directory() {
	make_tree "$W/lower"
	echo x > "$W/file"
	sc 1 mount -u 0:100000:65536 -g 0:100000:65536 "$W/lower" "$W/file"
	has err "$W/file: not a directory"
	same_mounts
}

bad_overlapping_maps() {
	make_image "$W/disk.img"
	mkdir "$W/mnt"
	sc 2 mount -u 0:100000:65536 -u 1000:300000:10 -g 0:100000:65536 "$W/disk.img" "$W/mnt"
	has err "uidmap 1000:300000:10 overlaps 0:100000:65536"
	same_mounts
	no_loop "$W/disk.img"
}

bad_image_not_a_filesystem() {
	dd if=/dev/urandom of="$W/junk.img" bs=1024 count=4096 2>/dev/null
	mkdir "$W/mnt"
	sc 1 mount -u 0:100000:65536 -g 0:100000:65536 "$W/junk.img" "$W/mnt"
	has err "$W/junk.img: no filesystem found"
	same_mounts
	no_loop "$W/junk.img"
}

# The kernel refuses after the loop device and the lower mount exist: its
# own message is shown, and everything is unwound.
bad_kernel_rejects_image_mount() {
	make_image "$W/disk.img"
	mkdir "$W/mnt"
	sc 1 mount -u 0:100000:65536 "$W/disk.img" "$W/mnt"
	has err "shiftctl mount: shiftfs: "
	has err "gidmap"
	same_mounts
	no_loop "$W/disk.img"
	no_tmpdirs
}

bad_kernel_rejects_dir_mount() {
	make_tree "$W/lower"
	mkdir "$W/mnt"
	sc 1 mount -g 0:100000:65536 "$W/lower" "$W/mnt"
	has err "shiftctl mount: shiftfs: "
	has err "uidmap"
	same_mounts
}

bad_corrupt_ext4_image() {
	make_image "$W/disk.img"
	# keep the superblock magic, wreck the group descriptors
	dd if=/dev/zero of="$W/disk.img" bs=1024 seek=2 count=64 conv=notrunc 2>/dev/null
	mkdir "$W/mnt"
	sc 1 mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/mnt"
	has err "$W/disk.img: cannot mount its ext4 filesystem"
	same_mounts
	no_loop "$W/disk.img"
}

in_ns() { nsenter -t "$1" -m sh -c "$2"; }

attach_detach_image() {
	kid=$(userns_child mntns) || fail "$kid"
	KIDS="$KIDS $kid"
	make_image "$W/disk.img"
	rm -rf /mnt/shiftfs-disk.img
	sc 0 attach "$kid" "$W/disk.img"
	has out "/mnt/shiftfs-disk.img"
	same_mounts	# nothing in the host's namespace
	[ -n "$(loops_of "$W/disk.img")" ] || fail "no loop device"
	in_ns "$kid" 'grep -q " /mnt/shiftfs-disk.img .* - shiftfs " /proc/self/mountinfo' ||
		fail "not mounted in the container"
	[ "$(in_ns "$kid" 'stat -c %u:%g /mnt/shiftfs-disk.img/root-file')" = 100000:100000 ] ||
		fail "root-file in container: $(in_ns "$kid" 'stat -c %u:%g /mnt/shiftfs-disk.img/root-file')"
	[ "$(stat -c %u:%g /mnt/shiftfs-disk.img)" = 100000:100000 ] ||
		fail "mount point not owned by the container's root: $(stat -c %u:%g /mnt/shiftfs-disk.img)"
	in_ns "$kid" 'cat /proc/self/mountinfo' > "$W/ct-mountinfo"
	has_opt /mnt/shiftfs-disk.img nosuid "$W/ct-mountinfo" || fail "attached mount is not nosuid"
	has_opt /mnt/shiftfs-disk.img nodev "$W/ct-mountinfo" || fail "attached mount is not nodev"
	sc 0 detach "$kid" /mnt/shiftfs-disk.img
	in_ns "$kid" 'grep -q " /mnt/shiftfs-disk.img " /proc/self/mountinfo' &&
		fail "still mounted in the container"
	[ -e /mnt/shiftfs-disk.img ] && fail "mount point not removed"
	no_loop "$W/disk.img"
	no_tmpdirs
	kill "$kid"
}

# The point of it all: the container's root, inside its user namespace,
# owns the attached root-owned image and what it writes lands on disk
# owned by the image's root (0), not by host uid 100000.
attach_container_root_writes_as_image_root() {
	kid=$(userns_child mntns) || fail "$kid"
	make_image "$W/disk.img"
	sc 0 attach --path /mnt/img "$kid" "$W/disk.img"
	inside() { nsenter -t "$kid" -U -m sh -c "$1"; }
	[ "$(inside 'id -u')" = 0 ] || fail "not root inside: $(inside 'id -u')"
	[ "$(inside 'stat -c %u:%g /mnt/img/root-file')" = 0:0 ] ||
		fail "root-file inside: $(inside 'stat -c %u:%g /mnt/img/root-file')"
	[ "$(inside 'stat -c %u /mnt/img/user-file')" = 1000 ] ||
		fail "user-file inside: $(inside 'stat -c %u /mnt/img/user-file')"
	inside 'echo written > /mnt/img/new-file && mkdir /mnt/img/new-dir' ||
		fail "container root cannot write to the image"
	sc 0 detach "$kid" /mnt/img
	no_loop "$W/disk.img"
	mkdir "$W/check"
	mount -o ro,loop "$W/disk.img" "$W/check" || fail "cannot mount the image to check it"
	on_disk=$(owner "$W/check/new-file")
	dir_on_disk=$(owner "$W/check/new-dir")
	content=$(cat "$W/check/new-file")
	umount "$W/check"
	[ "$on_disk" = 0:0 ] || fail "new-file on disk is $on_disk, want 0:0"
	[ "$dir_on_disk" = 0:0 ] || fail "new-dir on disk is $dir_on_disk, want 0:0"
	[ "$content" = written ] || fail "new-file content: $content"
	kill "$kid"
	rmdir /mnt/img 2>/dev/null
	no_loop "$W/disk.img"
}

# Host root marks a tree; root of a user namespace whose maps the mark
# allows mounts it with plain `shiftctl mount` (maps from the kernel);
# other maps are refused with the kernel's reason; unmark leaves the
# container's mount alone.
mark_mount_from_userns_unmark() {
	make_tree "$W/lower"
	mkdir "$W/mnt" "$W/mnt2"
	sc 0 mark -u 0:100000:65536 -g 0:100000:65536 "$W/lower"
	[ "$(fstype_of "$W/lower")" = shiftfs ] || fail "no mark on the tree"
	sc 0 list --json
	has out '"mark": true'
	sc 0 list
	grep -q "^$W/lower .* mark " "$W/out" || fail "list does not show the mark"
	sc 1 mark -u 0:100000:65536 -g 0:100000:65536 "$W/mnt/../nonexistent"
	kid=$(userns_child mntns '0 100000 65536\n') || fail "$kid"
	inside() { nsenter -t "$kid" -U -m sh -c "$1"; }
	echo "\$ (in the user namespace) shiftctl mount $W/lower $W/mnt"
	inside "SHIFTCTL_DEBUG=1 $SC mount $W/lower $W/mnt" > "$W/out" 2> "$W/err" ||
		{ cat "$W/out" "$W/err"; fail "mount from the mark failed"; }
	cat "$W/out" "$W/err"
	[ "$(inside "stat -c %u:%g $W/mnt/root-file")" = 0:0 ] ||
		fail "root-file inside: $(inside "stat -c %u:%g $W/mnt/root-file")"
	[ "$(nsenter -t "$kid" -m stat -c %u:%g "$W/mnt/root-file")" = 100000:100000 ] ||
		fail "root-file seen from the host"
	nsenter -t "$kid" -m cat /proc/self/mountinfo > "$W/ct-mountinfo"
	has_opt "$W/mnt" nosuid "$W/ct-mountinfo" &&
		fail "a mount from a mark (a container's rootfs) is nosuid"
	kid2=$(userns_child mntns '0 300000 65536\n') || fail "$kid2"
	echo "\$ (in a user namespace the mark does not allow) shiftctl mount $W/lower $W/mnt2"
	nsenter -t "$kid2" -U -m "$SC" mount "$W/lower" "$W/mnt2" > "$W/out" 2> "$W/err" &&
		fail "a mount with maps the mark does not allow worked"
	cat "$W/out" "$W/err"
	has err "shiftctl mount: shiftfs: "
	sc 0 unmark "$W/lower"
	[ "$(fstype_of "$W/lower")" = shiftfs ] && fail "mark still there"
	# The namespace's copy of the mark is revoked with it.
	echo "\$ (in the user namespace, after unmark) shiftctl mount $W/lower $W/mnt2"
	inside "$SC mount $W/lower $W/mnt2" > "$W/out" 2> "$W/err" &&
		fail "a mount from the namespace's copy of the mark worked after unmark"
	cat "$W/out" "$W/err"
	has err "the mark was revoked"
	[ "$(inside "stat -c %u:%g $W/mnt/root-file")" = 0:0 ] ||
		fail "the container's mount went with the mark"
	sc 1 unmark "$W/lower"
	has err "not marked"
	echo "\$ (in the user namespace) shiftctl umount $W/mnt"
	inside "$SC umount $W/mnt" || fail "the namespace's root cannot unmount its mount"
	inside "grep -q ' $W/mnt ' /proc/self/mountinfo" && fail "still mounted in the namespace"
	kill "$kid" "$kid2"
	same_mounts
}

# 340 extents each way go through fsconfig() one by one.
mount_340_extents() {
	make_tree "$W/lower"
	mkdir "$W/mnt"
	set --
	i=0
	while [ $i -lt 340 ]; do
		set -- "$@" -u "$((i * 10)):$((100000 + i * 10)):10" \
			-g "$((i * 10)):$((200000 + i * 10)):10"
		i=$((i + 1))
	done
	sc 0 mount "$@" "$W/lower" "$W/mnt"
	[ "$(owner "$W/mnt/root-file")" = 100000:200000 ] || fail "root-file: $(owner "$W/mnt/root-file")"
	[ "$(owner "$W/mnt/user-file")" = 101000:201000 ] || fail "user-file: $(owner "$W/mnt/user-file")"
	[ "$(owner "$W/mnt/other-file")" = 65534:65534 ] || fail "other-file (5000 > 3399, unmapped): $(owner "$W/mnt/other-file")"
	sc 0 list --json
	has out '"3390:103390:10"'
	sc 0 umount "$W/mnt"
	same_mounts
}

attach_dir_custom_path() {
	kid=$(userns_child mntns) || fail "$kid"
	KIDS="$KIDS $kid"
	make_tree "$W/lower"
	sc 0 attach --ro --path "$W/in/the/container" "$kid" "$W/lower"
	has out "$W/in/the/container"
	mounted "$W/in/the/container" && fail "visible in the host"
	[ "$(in_ns "$kid" "stat -c %u $W/in/the/container/user-file")" = 1000 ] ||
		fail "user-file in container"
	in_ns "$kid" "touch $W/in/the/container/x" 2>/dev/null && fail "--ro mount is writable"
	sc 1 detach "$kid" "$W/in"
	has err "not a mount point"
	sc 0 detach "$kid" "$W/in/the/container"
	in_ns "$kid" "grep -q ' $W/in/the/container ' /proc/self/mountinfo" && fail "still mounted"
	kill "$kid"
}

attach_failures_leave_nothing() {
	kid=$(userns_child mntns) || fail "$kid"
	KIDS="$KIDS $kid"
	dd if=/dev/zero of="$W/junk.img" bs=1024 count=1024 2>/dev/null
	sc 1 attach --path "$W/new/dir" "$kid" "$W/junk.img"
	has err "no filesystem found"
	[ -e "$W/new" ] && fail "directory created"
	make_image "$W/disk.img"
	echo x > "$W/afile"
	sc 1 attach --path "$W/afile/sub" "$kid" "$W/disk.img"
	has err "$W/afile/sub"
	no_loop "$W/disk.img"
	sc 1 attach "$kid" "$W/missing.img"
	has err "$W/missing.img: No such file or directory"
	sc 1 attach 1 "$W/disk.img"
	has err "pid 1 is not in a user namespace"
	sc 1 attach no-such-container "$W/disk.img"
	has err "no-such-container"
	sc 1 detach "$kid" /
	has err "not a shiftfs mount"
	same_mounts
	no_loop "$W/disk.img"
	no_tmpdirs
	kill "$kid"
}

# ---- one image, one filesystem --------------------------------------------
# A second use of an image that is already attached to a loop device shares
# that device and so the one superblock (issue 23); what cannot be shared
# is refused, naming where the image is in use, and leaves nothing behind.

loop_count() { loops_of "$1" | wc -l; }

# write_as UID DIR NAME: 300 files NAME0..NAME299 and a directory NAME-dir
# written through DIR by host uid UID (a container's root, seen from here).
write_as() {
	/usr/bin/setpriv --reuid "$1" --regid "$1" --clear-groups --inh-caps=-all \
		sh -c 'i=0
			while [ $i -lt 300 ]; do
				echo "$2$i" > "$1/$2$i" || exit 1
				i=$((i + 1))
			done
			mkdir "$1/$2-dir"' sh "$2" "$3"
}

# names_like DIR NAME: how many of write_as's NAME files DIR holds.
names_like() {
	find "$1" -maxdepth 1 -name "$2[0-9]*" ! -name "*-dir" | wc -l
}

# on_image IMG NAME: how many of write_as's NAME files (and NAME-dir, +1)
# the image holds, read through a fresh read-only mount of it.
on_image() {
	mkdir -p "$W/check"
	mount -o ro,loop "$1" "$W/check" || { echo unmountable; return; }
	n=$(names_like "$W/check" "$2")
	[ -d "$W/check/$2-dir" ] && n=$((n + 1))
	umount "$W/check"
	echo "$n"
}

# The issue's reproducer: two containers' mounts of one image, 300 files
# and a directory written through each, e2fsck clean and every write kept.
image_two_mounts_share() {
	make_image "$W/disk.img"
	mkdir "$W/a" "$W/b"
	sc 0 mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/a"
	sc 0 mount -u 0:200000:65536 -g 0:200000:65536 "$W/disk.img" "$W/b"
	echo "loop devices on the image: $(loops_of "$W/disk.img" | tr '\n' ' ')"
	loops=$(loop_count "$W/disk.img")
	write_as 100000 "$W/a" fa || fail "writing through $W/a failed"
	write_as 200000 "$W/b" fb || fail "writing through $W/b failed"
	b_sees=$(names_like "$W/b" fa)
	a_sees=$(names_like "$W/a" fb)
	fa0_in_b=$(owner "$W/b/fa0" 2>&1)
	sc 0 umount "$W/b"
	sc 0 umount "$W/a"
	no_loop "$W/disk.img"
	e2fsck -fn "$W/disk.img" > "$W/fsck" 2>&1
	fsck_rc=$?
	sed 's/^/  e2fsck: /' "$W/fsck"
	fa=$(on_image "$W/disk.img" fa)
	fb=$(on_image "$W/disk.img" fb)
	echo "on the image: fa $fa fb $fb; a sees $a_sees fb, b sees $b_sees fa"
	no_loop "$W/disk.img"
	[ "$fsck_rc" = 0 ] || fail "e2fsck -fn exited $fsck_rc: the image is corrupt"
	[ "$fa" = 301 ] || fail "writes through $W/a lost: $fa of 301 names on the image"
	[ "$fb" = 301 ] || fail "writes through $W/b lost: $fb of 301 names on the image"
	[ "$loops" = 1 ] || fail "$loops loop devices on one image"
	[ "$b_sees" = 300 ] || fail "$W/b sees $b_sees of the 300 files written through $W/a"
	[ "$a_sees" = 300 ] || fail "$W/a sees $a_sees of the 300 files written through $W/b"
	[ "$fa0_in_b" = 200000:200000 ] || fail "fa0 through $W/b: $fa0_in_b, want 200000:200000"
	same_mounts
	no_tmpdirs
}

# Mounts racing for one image: one loop device, one filesystem.
image_concurrent_mounts_share() {
	make_image "$W/disk.img"
	pids=
	for i in 1 2 3 4; do
		mkdir "$W/m$i"
		"$SC" mount -u "0:${i}00000:65536" -g "0:${i}00000:65536" \
			"$W/disk.img" "$W/m$i" > "$W/out$i" 2>&1 &
		pids="$pids $!"
	done
	i=1
	for p in $pids; do
		wait "$p"
		rc=$?
		sed "s/^/  mount $i: /" "$W/out$i"
		[ $rc = 0 ] || fail "mount $i exited $rc"
		i=$((i + 1))
	done
	echo "loop devices on the image: $(loops_of "$W/disk.img" | tr '\n' ' ')"
	[ "$(loop_count "$W/disk.img")" = 1 ] ||
		fail "$(loop_count "$W/disk.img") loop devices on one image"
	/usr/bin/setpriv --reuid 100000 --regid 100000 --clear-groups --inh-caps=-all \
		sh -c "echo one > $W/m1/from-1" || fail "cannot write through m1"
	[ "$(cat "$W/m4/from-1" 2>&1)" = one ] || fail "m4 does not see m1's write"
	for i in 1 2 3 4; do sc 0 umount "$W/m$i"; done
	no_loop "$W/disk.img"
	same_mounts
}

# Mounted on the host with mount -o loop first: shiftctl shares its device.
image_host_loop_mount_shared() {
	make_image "$W/disk.img"
	mkdir "$W/h" "$W/a"
	mount -o loop "$W/disk.img" "$W/h" || fail "mount -o loop failed"
	loop=$(loops_of "$W/disk.img")
	sc 0 mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/a"
	has err "/dev/${loop##*/}"
	[ "$(loop_count "$W/disk.img")" = 1 ] ||
		fail "loop devices: $(loops_of "$W/disk.img" | tr '\n' ' ')"
	/usr/bin/setpriv --reuid 100000 --regid 100000 --clear-groups --inh-caps=-all \
		sh -c "echo shifted > $W/a/from-shift" || fail "cannot write through $W/a"
	[ "$(cat "$W/h/from-shift" 2>&1)" = shifted ] || fail "the host mount does not see the write"
	[ "$(owner "$W/h/from-shift")" = 0:0 ] || fail "from-shift on the host: $(owner "$W/h/from-shift")"
	echo host > "$W/h/from-host"
	[ "$(cat "$W/a/from-host" 2>&1)" = host ] || fail "the shiftfs mount does not see the host's write"
	sc 0 umount "$W/a"
	[ "$(loops_of "$W/disk.img")" = "$loop" ] || fail "the host's loop device went away"
	umount "$W/h"
	no_loop "$W/disk.img"
	e2fsck -fn "$W/disk.img" > /dev/null 2>&1 || fail "e2fsck -fn: image corrupt"
	same_mounts
}

# A read-write request on a read-only loop device, or on a filesystem
# mounted read-only, is refused naming the device and the mount point;
# read-only on read-only shares.
image_rw_over_ro_refused() {
	make_image "$W/disk.img"
	mkdir "$W/h" "$W/a"
	mount -o ro,loop "$W/disk.img" "$W/h" || fail "mount -o ro,loop failed"
	loop=$(loops_of "$W/disk.img")
	[ "$(cat "$loop/ro")" = 1 ] || fail "$loop is not read-only"
	sc 1 mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/a"
	has err "/dev/${loop##*/}"
	has err "read-only"
	has err "$W/h"
	has err "--ro"
	mounted "$W/a" && fail "mounted anyway"
	[ "$(loop_count "$W/disk.img")" = 1 ] ||
		fail "loop devices: $(loops_of "$W/disk.img" | tr '\n' ' ')"
	no_tmpdirs
	sc 0 mount --ro -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/a"
	[ "$(loop_count "$W/disk.img")" = 1 ] || fail "ro over ro: a second loop device"
	[ "$(cat "$W/a/root-file")" = root ] || fail "ro over ro: content"
	sc 0 umount "$W/a"
	umount "$W/h"
	no_loop "$W/disk.img"
	# a read-write loop device whose filesystem is mounted read-only
	dev=$(/usr/sbin/losetup -f --show "$W/disk.img") || fail "losetup failed"
	mount -o ro "$dev" "$W/h" || fail "mount -o ro $dev failed"
	sc 1 mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/a"
	has err "$dev"
	has err "read-only"
	has err "$W/h"
	mounted "$W/a" && fail "mounted anyway"
	[ "$(loop_count "$W/disk.img")" = 1 ] || fail "a second loop device"
	umount "$W/h"
	/usr/sbin/losetup -d "$dev"
	no_loop "$W/disk.img"
	no_tmpdirs
	same_mounts
}

# Read-only on top of read-write shares the filesystem, mounted read-only.
image_ro_over_rw_shares() {
	make_image "$W/disk.img"
	mkdir "$W/a" "$W/b"
	sc 0 mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/a"
	sc 0 mount --ro -u 0:200000:65536 -g 0:200000:65536 "$W/disk.img" "$W/b"
	[ "$(loop_count "$W/disk.img")" = 1 ] ||
		fail "loop devices: $(loops_of "$W/disk.img" | tr '\n' ' ')"
	has_opt "$W/b" ro || fail "$W/b is not read-only: $(mnt_opts "$W/b")"
	as1() { /usr/bin/setpriv --reuid "$1" --regid "$1" --clear-groups --inh-caps=-all sh -c "$2"; }
	as1 100000 "echo rw > $W/a/new" || fail "$W/a is not writable"
	[ "$(cat "$W/b/new" 2>&1)" = rw ] || fail "$W/b does not see $W/a's write"
	as1 200000 "touch $W/b/x" 2>/dev/null && fail "wrote through the read-only $W/b"
	sc 0 umount "$W/b"
	as1 100000 "echo still > $W/a/new2" || fail "$W/a is not writable after $W/b went"
	sc 0 umount "$W/a"
	no_loop "$W/disk.img"
	e2fsck -fn "$W/disk.img" > /dev/null 2>&1 || fail "e2fsck -fn: image corrupt"
	same_mounts
}

# A loop device on a part of the image (another offset): refused.
image_overlap_refused() {
	make_image "$W/disk.img"
	mkdir "$W/a"
	dev=$(/usr/sbin/losetup -f --show -o 1048576 "$W/disk.img") || fail "losetup -o failed"
	sc 1 mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/a"
	has err "$dev"
	has err "offset 1048576"
	mounted "$W/a" && fail "mounted anyway"
	[ "$(loop_count "$W/disk.img")" = 1 ] || fail "a second loop device"
	/usr/sbin/losetup -d "$dev"
	no_loop "$W/disk.img"
	no_tmpdirs
	same_mounts
}

# attach takes the same path: into a container while mounted on the host.
image_attach_shares() {
	kid=$(userns_child mntns) || fail "$kid"
	KIDS="$KIDS $kid"
	make_image "$W/disk.img"
	mkdir "$W/a"
	sc 0 mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/a"
	sc 0 attach --path /mnt/shared-img "$kid" "$W/disk.img"
	[ "$(loop_count "$W/disk.img")" = 1 ] ||
		fail "loop devices: $(loops_of "$W/disk.img" | tr '\n' ' ')"
	nsenter -t "$kid" -U -m sh -c 'echo ct > /mnt/shared-img/from-ct' ||
		fail "the container cannot write to the attached image"
	[ "$(cat "$W/a/from-ct" 2>&1)" = ct ] || fail "$W/a does not see the container's write"
	[ "$(owner "$W/a/from-ct")" = 100000:100000 ] || fail "from-ct: $(owner "$W/a/from-ct")"
	sc 0 detach "$kid" /mnt/shared-img
	sc 0 umount "$W/a"
	no_loop "$W/disk.img"
	kill "$kid"
	rmdir /mnt/shared-img 2>/dev/null
	same_mounts
}

# An image on no loop device but open for writing by another process (a
# virtual machine's disk, say): read-write is refused, read-only is not.
image_open_for_write_refused() {
	make_image "$W/disk.img"
	mkdir "$W/a"
	sh -c 'exec 3<>"$1"; exec sleep 600' sh "$W/disk.img" &
	holder=$!
	n=0
	until [ -e "/proc/$holder/fd/3" ]; do
		n=$((n + 1))
		[ $n -gt 50 ] && fail "the holder never opened the image"
		sleep 0.1
	done
	sc 1 mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/a"
	has err "$W/disk.img: open for writing by another process"
	mounted "$W/a" && fail "mounted anyway"
	no_loop "$W/disk.img"
	no_tmpdirs
	sc 0 mount --ro -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/a"
	sc 0 umount "$W/a"
	kill "$holder"
	wait "$holder" 2>/dev/null
	no_loop "$W/disk.img"	# the read-only device, cleared
	sc 0 mount -u 0:100000:65536 -g 0:100000:65536 "$W/disk.img" "$W/a"
	sc 0 umount "$W/a"
	no_loop "$W/disk.img"
	same_mounts
}
# A container gets a squashfs image shifted to its ids, read-only, and
# makes its own writable layer over it: overlayfs mounted by its root in
# its user namespace, upper on its own tmpfs, as lxc-copy -e gives a
# clone.  What it writes there is its own; the image stays as it was.
attach_squashfs_writable_layer() {
	make_ro_image squashfs "$W/sq.img"
	sum=$(sha256sum < "$W/sq.img")
	kid=$(userns_child mntns) || fail "$kid"
	sc 0 attach --path /mnt/img "$kid" "$W/sq.img"
	inside() { nsenter -t "$kid" -U -m sh -c "$1"; }
	[ "$(inside 'stat -c %u:%g /mnt/img/root-file')" = 0:0 ] ||
		fail "root-file inside: $(inside 'stat -c %u:%g /mnt/img/root-file')"
	inside 'touch /mnt/img/new' 2> /dev/null && fail "the container wrote to the squashfs image"
	mkdir "$W/rw"
	chown 100000:100000 "$W/rw"
	inside "mount -t tmpfs tmpfs $W/rw && mkdir $W/rw/upper $W/rw/work $W/rw/root &&
		mount -t overlay -o lowerdir=/mnt/img,upperdir=$W/rw/upper,workdir=$W/rw/work overlay $W/rw/root" \
		> "$W/ovl.log" 2>&1 || fail "the container's overlay: $(cat "$W/ovl.log")"
	inside "echo new > $W/rw/root/new-file && chown 1000:1000 $W/rw/root/new-file &&
		echo changed > $W/rw/root/user-file && mkdir $W/rw/root/sub/dir" ||
		fail "the container cannot write to its layer"
	[ "$(inside "stat -c %u:%g $W/rw/root/new-file")" = 1000:1000 ] ||
		fail "new-file: $(inside "stat -c %u:%g $W/rw/root/new-file")"
	[ "$(inside "stat -c %u:%g $W/rw/root/user-file")" = 1000:1000 ] ||
		fail "copied-up user-file: $(inside "stat -c %u:%g $W/rw/root/user-file")"
	[ "$(inside "stat -c %u:%g $W/rw/root/sub")" = 0:0 ] ||
		fail "copied-up sub: $(inside "stat -c %u:%g $W/rw/root/sub")"
	[ "$(inside "cat $W/rw/root/user-file")" = changed ] || fail "the layer lost the write"
	[ "$(inside 'cat /mnt/img/user-file')" = user ] || fail "the write reached the image"
	inside "umount $W/rw/root && umount $W/rw" || fail "cannot unmount the layer"
	sc 0 detach "$kid" /mnt/img
	kill "$kid"
	rmdir /mnt/img 2> /dev/null
	no_loop "$W/sq.img"
	[ "$(sha256sum < "$W/sq.img")" = "$sum" ] || fail "the image file changed"
}

[ "$(id -u)" = 0 ] || tap_skip_all "needs root"
command -v "$SC" > /dev/null || tap_skip_all "shiftctl not installed"

t check_reports_usable
t mount_dir_explicit_maps
t mount_nosuid_nodev_by_default
t maps_from_userns_process
t mount_dir_maps_from_pid
t mount_by_container_name
t mount_identity_pid_refused
t mount_ext4_image
t mount_ext4_image_ro
t mount_xfs_image
t mount_squashfs_image
t mount_erofs_image
t umount_busy_and_foreign
t bad_missing_source
t bad_missing_target
t bad_non_directory_source
t bad_target_not_directory
t bad_overlapping_maps
t bad_image_not_a_filesystem
t bad_kernel_rejects_image_mount
t bad_kernel_rejects_dir_mount
t bad_corrupt_ext4_image
t attach_detach_image
t attach_container_root_writes_as_image_root
t attach_dir_custom_path
t attach_squashfs_writable_layer
t mount_340_extents
t mark_mount_from_userns_unmark
t attach_failures_leave_nothing
t image_two_mounts_share
t image_concurrent_mounts_share
t image_host_loop_mount_shared
t image_rw_over_ro_refused
t image_ro_over_rw_shares
t image_overlap_refused
t image_attach_shares
t image_open_for_write_refused

tap_done
