#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The DKMS kernel-upgrade scene, boot 2 (tests/e2e/dkms-upgrade.sh): the
# same disk rebooted on the upgraded kernel and the initrd the guest
# made for it.  shiftfs loads from DKMS's build, and an unprivileged
# container on a root-owned rootfs starts with the packaged LXC hook and
# sees its files shifted (as scenario 1 checks).
# e2e-timeout: 1200
. "$(dirname "$0")/lib.sh"

new=$(cat "$PAYLOAD/kernel/release" 2>/dev/null)
disk=/srv/images/dk
ct=dk
conf=/usr/share/lxc/config/shiftfs.conf
tap_start
tap_plan 10

say "DKMS upgrade scene, boot 2: after the reboot"
show "uname -r"
tap_eq "the guest runs the upgraded kernel" "$(uname -r)" "$new"
show "dkms status"
tap_run "modprobe shiftfs" modprobe shiftfs
f=$(modinfo -F filename shiftfs 2>&1)
echo "# \$ modinfo -F filename shiftfs"
echo "#   $f"
if grep -qw shiftfs /proc/filesystems; then
	case $f in
	*/modules/"$new"/updates/dkms/shiftfs.ko*) tap_ok "the loaded shiftfs is DKMS's build for $new" ;;
	*) tap_not_ok "the loaded shiftfs is DKMS's build for $new"; tap_diag "modinfo says: $f" ;;
	esac
else
	tap_not_ok "the loaded shiftfs is DKMS's build for $new"
	tap_diag "shiftfs is not in /proc/filesystems"
fi

say "An unprivileged container on a root-owned rootfs, with the packaged LXC hook"
mk_busybox_rootfs "$disk"
owners "$disk" > /run/shiftfs-e2e/dk.before
tap_eq "the rootfs on disk is owned by 0:0" "$(awk '$1 != "0:0"' /run/shiftfs-e2e/dk.before | head -n 3)" ""
lxc_config $ct "$disk" "lxc.include = $conf"
show "grep -v '^#' /var/lib/lxc/$ct/config"
if start_container $ct; then
	tap_ok "lxc-start: the unprivileged container starts on the shifted rootfs"
	echo "# \$ lxc-attach -n $ct -- cat /proc/self/uid_map"
	in_ct $ct cat /proc/self/uid_map 2>&1 | sed 's/^/#   /'
	tap_eq "the container is unprivileged (root is host uid 100000)" \
		"$(in_ct $ct cat /proc/self/uid_map 2>&1 | awk '{print $1, $2, $3}')" "0 100000 65536"
	echo "# \$ lxc-attach -n $ct -- ls -ln /"
	in_ct $ct ls -ln / 2>&1 | head -n 6 | sed 's/^/#   /'
	tap_eq "inside, its rootfs is owned by its root (0:0)" \
		"$(in_ct $ct stat -c '%u:%g' / /bin/busybox /etc/passwd 2>&1 | sort -u)" "0:0"
	pid=$(lxc-info -n $ct -pH)
	show "ls -ln /proc/$pid/root/ | head -n 4"
	tap_eq "through the container's root on the host, 100000:100000" \
		"$(stat -c '%u:%g' "/proc/$pid/root/bin" 2>&1)" "100000:100000"
	tap_run "lxc-stop -n $ct" stop_container $ct
else
	tap_not_ok "lxc-start: the unprivileged container starts on the shifted rootfs"
	for t in "the container is unprivileged" "inside, its rootfs is owned by its root" \
		"the host view is shifted" "lxc-stop"; do
		tap_skip "$t" "the container did not start"
	done
fi
owners "$disk" > /run/shiftfs-e2e/dk.after
if grep -q ' shiftfs ' /proc/self/mounts; then
	tap_not_ok "afterwards nothing is mounted and the ownership on disk is unchanged"
	tap_diag "$(grep ' shiftfs ' /proc/self/mounts)"
elif ! diff -u /run/shiftfs-e2e/dk.before /run/shiftfs-e2e/dk.after > /run/shiftfs-e2e/dk.diff; then
	tap_not_ok "afterwards nothing is mounted and the ownership on disk is unchanged"
	sed 's/^/#   /' /run/shiftfs-e2e/dk.diff | head -n 20
else
	tap_ok "afterwards nothing is mounted and the ownership on disk is unchanged"
fi
tap_done
