#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario 2: shiftctl attach grafts a root-owned ext4 image into a
# running unprivileged container, which reads and writes it as its root;
# shiftctl detach removes it and leaves no loop device or mount behind,
# on the host or in the container.
. "$(dirname "$0")/lib.sh"

ct=c2
img=/srv/images/disk.img
tap_start
tap_plan 9

say "Scenario 2: shiftctl attach / detach of a root-owned disk image"
mkdir -p /srv/images /run/shiftfs-e2e/disk
rm -rf /run/shiftfs-e2e/disk/*
mkdir /run/shiftfs-e2e/disk/data
echo "root-owned data" > /run/shiftfs-e2e/disk/data/hello
chown -R 0:0 /run/shiftfs-e2e/disk
rm -f "$img"
mke2fs -q -t ext4 -E root_owner=0:0 -d /run/shiftfs-e2e/disk "$img" 64M >/dev/null
show "debugfs -R 'ls -l /data' $img 2>/dev/null"

if ! command -v shiftctl >/dev/null; then
	tap_not_ok "shiftctl is installed"
	tap_diag "no shiftctl in the payload (make shiftctl)"
	for i in 2 3 4 5 6 7 8 9; do tap_skip "attach test $i" "no shiftctl"; done
	tap_done; exit $?
fi
if ! shiftctl attach --help 2>&1 | grep -q -- '--path'; then
	tap_not_ok "shiftctl has attach --path"
	for i in 2 3 4 5 6 7 8 9; do tap_skip "attach test $i" "shiftctl has no attach"; done
	tap_done; exit $?
fi
tap_ok "shiftctl attach is there"
have_shiftfs || tap_diag "shiftfs is not available: $(why_no_shiftfs)"

say "A running unprivileged container"
if ! running_container $ct; then
	tap_not_ok "container $ct runs"
	for i in 3 4 5 6 7 8 9; do tap_skip "attach test $i" "the container did not start"; done
	tap_done; exit $?
fi
tap_ok "container $ct runs"

say "Attach the image into it"
echo "# \$ shiftctl attach $ct $img --path /mnt/img"
if out=$(timeout 60 shiftctl attach $ct "$img" --path /mnt/img 2>&1); then
	tap_ok "shiftctl attach $ct disk.img --path /mnt/img"
	att=1
else
	tap_not_ok "shiftctl attach $ct disk.img --path /mnt/img"
	att=0
fi
printf '%s\n' "$out" | sed 's/^/#   /'

if [ $att -eq 1 ]; then
	echo "# \$ lxc-attach -n $ct -- ls -ln /mnt/img/data"
	in_ct $ct ls -ln /mnt/img/data 2>&1 | sed 's/^/#   /'
	tap_eq "inside, the image is owned by the container's root and readable" \
		"$(in_ct $ct sh -c 'stat -c %u:%g /mnt/img/data/hello && cat /mnt/img/data/hello' 2>&1 | tr '\n' ' ')" \
		"0:0 root-owned data "
	tap_run "inside, root writes to the image" \
		in_ct $ct sh -c 'echo written by the container > /mnt/img/data/new && mkdir /mnt/img/newdir'
	echo "# \$ shiftctl detach $ct /mnt/img"
	tap_run "shiftctl detach $ct /mnt/img" timeout 60 shiftctl detach $ct /mnt/img
else
	tap_skip "inside, the image is owned by the container's root" "attach failed"
	tap_skip "inside, root writes to the image" "attach failed"
	tap_skip "shiftctl detach" "attach failed"
fi

say "Nothing left behind"
left=$(ct_mounts $ct | grep -E ' /mnt/img |shiftfs')
tap_eq "no mount left in the container" "$left" ""
if lo=$(wait_no_loop "$img"); then
	left=$(grep -E ' shiftfs |disk\.img' /proc/self/mounts)
	tap_eq "no loop device or mount left on the host" "$left" ""
else
	tap_not_ok "no loop device or mount left on the host"
	tap_diag "$lo"
fi

say "The image on disk: what the container wrote belongs to real root"
mkdir -p /run/shiftfs-e2e/check
if [ $att -eq 1 ] && mount -o ro,loop "$img" /run/shiftfs-e2e/check; then
	show "ls -ln /run/shiftfs-e2e/check/data /run/shiftfs-e2e/check"
	tap_eq "the container's new file and directory are 0:0 on the image" \
		"$(stat -c %u:%g /run/shiftfs-e2e/check/data/new /run/shiftfs-e2e/check/newdir 2>&1 | sort -u)" "0:0"
	umount /run/shiftfs-e2e/check
else
	tap_skip "the container's files are 0:0 on the image" "attach failed"
fi
stop_container $ct
tap_done
