#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario 3: architecture emulation.  An arm64 root filesystem image
# owned by 0:0 (Debian's arm64 busybox-static) is attached into a running
# unprivileged container, entered with chroot, and runs `uname -m` ->
# aarch64 through qemu-user-static (binfmt_misc F flag: the interpreter
# is opened by the host, so it works inside the container's chroot).  A
# file it writes is 0:0 on the image.
. "$(dirname "$0")/lib.sh"

ct=c3
img=/srv/images/arm64.img
bb=$PAYLOAD/foreign/arm64/busybox
tap_start
tap_plan 8

say "Scenario 3: an arm64 image in an unprivileged container"
if [ ! -f "$bb" ]; then
	tap_not_ok "an arm64 root filesystem image owned by 0:0"
	tap_diag "no arm64 busybox in the payload (images/cloud/fetch-foreign.sh)"
	for i in 2 3 4 5 6 7 8; do tap_skip "arch test $i" "no arm64 busybox"; done
	tap_done; exit $?
fi
rm -rf /run/shiftfs-e2e/arm64
mk_busybox_rootfs /run/shiftfs-e2e/arm64 "$bb"
rm -f "$img"
mkdir -p /srv/images
mke2fs -q -t ext4 -E root_owner=0:0 -d /run/shiftfs-e2e/arm64 "$img" 32M >/dev/null
show "file -L /run/shiftfs-e2e/arm64/bin/busybox 2>/dev/null || od -An -c -N 20 /run/shiftfs-e2e/arm64/bin/busybox"
tap_ok "an arm64 root filesystem image owned by 0:0"

say "qemu-user-static is registered with binfmt_misc, flag F"
show "cat /proc/sys/fs/binfmt_misc/qemu-aarch64"
if grep -q '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null &&
   grep -q '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64; then
	tap_ok "binfmt_misc qemu-aarch64 is enabled with the F flag"
else
	tap_not_ok "binfmt_misc qemu-aarch64 is enabled with the F flag"
	tap_diag "$(ls /proc/sys/fs/binfmt_misc/ 2>&1 | tr '\n' ' ')"
fi

if ! command -v shiftctl >/dev/null; then
	tap_not_ok "container $ct runs with the image attached"
	tap_diag "no shiftctl in the payload (make shiftctl)"
	for i in 4 5 6 7 8; do tap_skip "arch test $i" "no shiftctl"; done
	tap_done; exit $?
fi
say "A running unprivileged container, the image attached at /mnt/arm64"
if ! running_container $ct; then
	tap_not_ok "container $ct runs with the image attached"
	for i in 4 5 6 7 8; do tap_skip "arch test $i" "the container did not start"; done
	tap_done; exit $?
fi
echo "# \$ shiftctl attach $ct $img --path /mnt/arm64"
if out=$(timeout 60 shiftctl attach $ct "$img" --path /mnt/arm64 2>&1); then
	tap_ok "container $ct runs with the image attached"
else
	tap_not_ok "container $ct runs with the image attached"
	printf '%s\n' "$out" | sed 's/^/#   /'
	for i in 4 5 6 7 8; do tap_skip "arch test $i" "attach failed"; done
	stop_container $ct
	tap_done; exit $?
fi

say "Inside the container: chroot into the arm64 image"
echo "# \$ lxc-attach -n $ct -- ls -ln /mnt/arm64"
in_ct $ct ls -ln /mnt/arm64 2>&1 | sed 's/^/#   /'
echo "# \$ lxc-attach -n $ct -- uname -m; lxc-attach -n $ct -- chroot /mnt/arm64 /bin/uname -m"
in_ct $ct uname -m 2>&1 | sed 's/^/#   /'
m=$(in_ct $ct chroot /mnt/arm64 /bin/uname -m 2>&1)
echo "#   $m"
tap_eq "chroot /mnt/arm64 uname -m runs arm64 busybox: aarch64" "$m" "aarch64"
tap_eq "the container's root owns the image (0:0 inside)" \
	"$(in_ct $ct stat -c %u:%g /mnt/arm64 /mnt/arm64/bin/busybox 2>&1 | sort -u)" "0:0"
tap_run "the arm64 shell writes a file in the image" \
	in_ct $ct chroot /mnt/arm64 /bin/sh -c 'uname -m > /root/made-by-aarch64 && id -u >> /root/made-by-aarch64'
tap_run "shiftctl detach $ct /mnt/arm64" timeout 60 shiftctl detach $ct /mnt/arm64
stop_container $ct

say "On the image, the arm64 file belongs to real root"
wait_no_loop "$img" >/dev/null
mkdir -p /run/shiftfs-e2e/check
if mount -o ro,loop "$img" /run/shiftfs-e2e/check; then
	show "ls -ln /run/shiftfs-e2e/check/root; cat /run/shiftfs-e2e/check/root/made-by-aarch64"
	tap_eq "the file written by the arm64 shell is 0:0 on the image" \
		"$(stat -c %u:%g /run/shiftfs-e2e/check/root/made-by-aarch64 2>&1)" "0:0"
	umount /run/shiftfs-e2e/check
else
	tap_not_ok "the file written by the arm64 shell is 0:0 on the image"
	tap_diag "cannot mount $img to look"
fi
tap_done
