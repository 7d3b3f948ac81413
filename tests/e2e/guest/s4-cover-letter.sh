#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario 4, the cover letter's scene: ls -l of a root-owned directory
# before and after shifting: root root on the host path, 100000 100000
# through the shifted mount; a file written through the mount by host uid
# 100000 lands on disk owned by root.
. "$(dirname "$0")/lib.sh"

img=/var/tmp/images/mips
dst=/home/jejb/containers/mips
tap_start
tap_plan 6

say "Scenario 4: the cover letter's scene"
say "A root-owned image: a tiny root filesystem owned by real uid 0"
mkdir -p "$img" "$dst"
for d in bin boot dev etc; do mkdir -p "$img/$d"; done
echo "hello from the image" > "$img/etc/motd"
chown -R 0:0 "$img"
show "ls -l $img"
tap_eq "on the host path the tree is owned by root root" \
	"$(stat -c '%U %G' "$img/bin")" "root root"

say "Shift it for a container whose root is host uid 100000"
if ! have_shiftfs; then
	tap_not_ok "mount -t shiftfs -o $MAP"
	tap_diag "shiftfs is not available: $(why_no_shiftfs)"
	tap_skip "shifted view shows 100000 100000" "no shiftfs mount"
	tap_skip "write through the mount as host uid 100000" "no shiftfs mount"
	tap_skip "through the mount the new file is the container's" "no shiftfs mount"
	tap_skip "the new file is 0:0 on disk" "no shiftfs mount"
	tap_done; exit $?
fi
echo "# \$ mount -t shiftfs -o $MAP $img $dst"
if out=$(mount -t shiftfs -o "$MAP" "$img" "$dst" 2>&1); then
	tap_ok "mount -t shiftfs -o $MAP"
else
	tap_not_ok "mount -t shiftfs -o $MAP"
	tap_diag "$out"
	tap_skip "shifted view shows 100000 100000" "no shiftfs mount"
	tap_skip "write through the mount as host uid 100000" "no shiftfs mount"
	tap_skip "through the mount the new file is the container's" "no shiftfs mount"
	tap_skip "the new file is 0:0 on disk" "no shiftfs mount"
	tap_done; exit $?
fi
show "grep ' shiftfs ' /proc/mounts"

say "Through the shifted mount, the container's root (100000) owns everything"
show "ls -l $dst"
tap_eq "shifted view shows 100000 100000" \
	"$(stat -c '%u %g' "$dst/bin")" "100000 100000"

say "Host uid 100000 (the container's root) writes a file through the mount"
tap_run "write through the mount as host uid 100000" \
	setpriv --reuid 100000 --regid 100000 --clear-groups \
	sh -c "echo made in the container > $dst/etc/new-file"
show "ls -l $dst/etc"
tap_eq "through the mount the new file is the container's (100000:100000)" \
	"$(stat -c '%u:%g' "$dst/etc/new-file" 2>&1)" "100000:100000"

say "On disk, the new file belongs to real root: nothing was chowned"
show "ls -l $img/etc"
tap_eq "the new file is 0:0 on disk" \
	"$(stat -c '%u:%g' "$img/etc/new-file" 2>&1)" "0:0"

umount "$dst" || tap_diag "umount $dst failed"
tap_done
