#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# stress-ng's filesystem stressors through shiftfs, as the container's
# root (host uid 100000) over ext4 on a loop device: no stressor may fail,
# and the runner's scan of the kernel log must stay clean.  FIEMAP is left
# out: shiftfs answers ENOTTY to ioctls outside its allow-list.
set -u
# tests/lib/tap.sh: beside this program in the guest (/tests/lib), one
# directory up in the source tree.
tap_sh=$(dirname "$0")/lib/tap.sh
[ -f "$tap_sh" ] || tap_sh=$(dirname "$0")/../lib/tap.sh
# shellcheck source=../lib/tap.sh
. "$tap_sh"
tap_start
tap_plan 3

base=$(mktemp -d /tmp/stressng.XXXXXX)
chmod 755 "$base"	# the container's root must get to the mount
cleanup() {
	umount "$base/mnt" 2>/dev/null
	umount "$base/lower" 2>/dev/null
	rm -rf "$base"
}
trap cleanup EXIT
mkdir -p "$base/lower" "$base/mnt"
truncate -s 512M "$base/img"
if mkfs.ext4 -q "$base/img" && mount -o loop "$base/img" "$base/lower" &&
   mount -t shiftfs -o uidmap=0:100000:65536,gidmap=0:100000:65536 \
	"$base/lower" "$base/mnt"; then
	tap_ok "shiftfs over ext4 on loop"
else
	tap_not_ok "shiftfs over ext4 on loop"
	exit 1
fi
mkdir "$base/lower/work"	# owned by 0:0 on disk, the container's root's

/usr/bin/setpriv --reuid 100000 --regid 100000 --clear-groups \
	stress-ng --temp-path "$base/mnt/work" --timeout 20s --metrics-brief \
	--dir 1 --dentry 1 --filename 1 --link 1 --symlink 1 --rename 1 \
	--xattr 1 --chown 1 --mmap 1 --mmap-bytes 16M --hdd 1 --hdd-bytes 32M \
	--fallocate 1 --fallocate-bytes 32M --lockf 1 --chmod 1 --utime 1 \
	> "$base/stress.log" 2>&1
rc=$?
sed 's/^/# /' "$base/stress.log" | tail -n 30
if [ $rc -eq 0 ] && ! grep -qE 'failed: [1-9]|: FAIL' "$base/stress.log"; then
	tap_ok "stress-ng filesystem stressors through shiftfs (exit $rc)"
else
	tap_not_ok "stress-ng filesystem stressors through shiftfs (exit $rc)"
fi
leftover=$(find "$base/lower/work" ! -user 0 2>/dev/null | head -5)
if [ -z "$leftover" ]; then
	tap_ok "everything stress-ng left on disk is owned by uid 0"
else
	tap_not_ok "everything stress-ng left on disk is owned by uid 0"
	echo "$leftover" | sed 's/^/# not uid 0: /'
fi
tap_done
