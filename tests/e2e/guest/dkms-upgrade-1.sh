#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The DKMS kernel-upgrade scene, boot 1 (tests/e2e/dkms-upgrade.sh): on
# the Debian 13 image's own kernel, apt-get install the two .debs (DKMS
# builds shiftfs for the running kernel), then install the newer kernel's
# image and headers from the payload disk, as an admin's upgrade would:
# DKMS's kernel hook (autoinstall) must build and install shiftfs for it,
# and initramfs-tools make its initrd.  The last line names the files a
# boot loader would boot ("# boot-files: VMLINUZ INITRD"), for the host.
# e2e-timeout: 3000
. "$(dirname "$0")/lib.sh"

rel=$(uname -r)
new=$(cat "$PAYLOAD/kernel/release" 2>/dev/null)
tap_start
tap_plan 9

say "DKMS upgrade scene, boot 1: $rel, then an upgrade to ${new:-?}"
debs=$(ls "$PAYLOAD"/deb/shiftfs-dkms_*.deb "$PAYLOAD"/deb/shiftctl_*.deb 2>/dev/null)
if [ -z "$new" ] || [ "$(echo "$debs" | grep -c '\.deb$')" -ne 2 ]; then
	tap_not_ok "the payload carries the two shiftfs packages and the new kernel's"
	tap_diag "packages: $debs; new kernel: '${new}'"
	tap_done; exit $?
fi
tap_ok "the payload carries the two shiftfs packages and $new's"

say "apt-get install the shiftfs packages; DKMS builds the module for $rel"
echo "# \$ apt-get install ./$(basename "$(echo "$debs" | head -n 1)") ./$(basename "$(echo "$debs" | tail -n 1)")"
if out=$(DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $debs 2>&1); then
	tap_ok "apt-get install shiftfs-dkms shiftctl"
else
	tap_not_ok "apt-get install shiftfs-dkms shiftctl"
fi
echo "$out" | grep -iE 'dkms|shiftfs|Building|Installing|error' | sed 's/^/#   /' | tail -n 25
show "dkms status"
tap_run "DKMS built and installed shiftfs for $rel" \
	sh -c "dkms status shiftfs | grep -F '$rel' | grep -q installed"

say "The kernel upgrade: apt-get install linux-image-$new linux-headers-$new (and what they need)"
kdebs=$(ls "$PAYLOAD"/kernel/*.deb)
echo "$kdebs" | sed 's|.*/|#   ./|'
t0=$(cut -d' ' -f1 /proc/uptime)
if out=$(DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $kdebs 2>&1); then
	tap_ok "apt-get install of $new's image and headers"
else
	tap_not_ok "apt-get install of $new's image and headers"
	echo "$out" | tail -n 30 | sed 's/^/#   /'
fi
echo "$out" | grep -iE 'dkms|shiftfs|autoinstall|initramfs|initrd|Building|Installing|error' | sed 's/^/#   /' | tail -n 30
tap_diag "the upgrade took $(awk -v t="$t0" '{ printf "%.0f", $1 - t }' /proc/uptime)s"
show "dkms status"
tap_run "DKMS autoinstall built and installed shiftfs for $new" \
	sh -c "dkms status shiftfs | grep -F '$new' | grep -q installed"
show "modinfo -k $new -F filename shiftfs; modinfo -k $new -F vermagic shiftfs"
f=$(modinfo -k "$new" -F filename shiftfs 2>&1)
case $f in
*/modules/"$new"/updates/dkms/shiftfs.ko*) tap_ok "modinfo -k $new finds shiftfs under /lib/modules/$new/updates/dkms" ;;
*) tap_not_ok "modinfo -k $new finds shiftfs under /lib/modules/$new/updates/dkms"; tap_diag "modinfo says: $f" ;;
esac
tap_eq "its vermagic is $new's" "$(modinfo -k "$new" -F vermagic shiftfs 2>&1 | cut -d' ' -f1)" "$new"

say "What the boot loader would boot"
show "ls -l /boot"
vmlinuz=$(readlink -f "/boot/vmlinuz-$new")
initrd=$(readlink -f "/boot/initrd.img-$new")
tap_run "initramfs-tools made /boot/initrd.img-$new" test -s "$initrd"
tap_run "/boot/vmlinuz-$new is there" test -s "$vmlinuz"
echo "# boot-files: $vmlinuz $initrd"
sync
tap_done
