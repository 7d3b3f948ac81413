#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario 5, installing like real software: starting from a system
# without the project (the payload's copy is taken away first), install
# the two .deb files with apt, watch DKMS build the module for the running
# kernel, modprobe it, "shiftctl check" all green, one shifted mount; then
# "apt-get purge" leaves no file of ours behind (file lists compared; a
# plain remove keeps the AppArmor profile, a conffile, as Debian does).
. "$(dirname "$0")/lib.sh"

rel=$(uname -r)
work=/srv/s5
tap_start
tap_plan 11

say "Scenario 5: the .deb packages, DKMS and apt-get purge"

# What the system holds, less what changes by itself while it runs.
snapshot() {
	find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run \
		-o -path /tmp -o -path /var/tmp -o -path /var/log \
		-o -path /var/cache -o -path /var/lib/apt -o -path /var/lib/dpkg \
		-o -path /var/lib/lxc -o -path /var/lib/cloud \
		-o -path /var/lib/systemd -o -path /srv -o -path /home \
		-o -path /root -o -path /var/tmp \) -prune -o -print | sort |
	# DKMS makes the machine's module-signing key pair on its first build
	# (bookworm's dkms 3.0.10 has no command to make it beforehand); it is
	# shared by every DKMS module and outlives them by design: not ours.
	grep -vxE '/var/lib/dkms/mok\.(key|pub)'
}

debs=$(ls "$PAYLOAD"/deb/shiftfs-dkms_*.deb "$PAYLOAD"/deb/shiftctl_*.deb 2>/dev/null)
if [ "$(echo "$debs" | grep -c '\.deb$')" -ne 2 ]; then
	tap_not_ok "the payload carries the two packages (make deb)"
	tap_diag "found: $debs"
	tap_done; exit $?
fi

say "Take the payload's copy of the project away: a system without shiftfs"
grep -q ' shiftfs ' /proc/mounts && umount -a -t shiftfs 2>/dev/null
rmmod shiftfs 2>/dev/null
apparmor_parser -R /etc/apparmor.d/shiftfs-lxc-hook 2>/dev/null
apparmor_parser -R /etc/apparmor.d/lxc-container-shiftfs-user 2>/dev/null
systemctl disable --now shiftfs-marks.service > /dev/null 2>&1
rm -f "/lib/modules/$rel/extra/shiftfs.ko" /usr/local/sbin/shiftctl \
	/usr/local/share/lxc/hooks/shiftfs /usr/local/share/lxc/config/shiftfs.conf \
	/etc/apparmor.d/shiftfs-lxc-hook /etc/apparmor.d/lxc-container-shiftfs-user \
	/usr/local/lib/systemd/system/shiftfs-marks.service
rm -rf /usr/local/lib/shiftfs /etc/apparmor.d/shiftfs
# (and what an admin declared with it, s10's: a system that never had it)
rm -rf /etc/shiftfs
systemctl daemon-reload
depmod -a "$rel"
if ! modinfo shiftfs >/dev/null 2>&1 && ! command -v shiftctl >/dev/null &&
   ! grep -qw shiftfs /proc/filesystems; then
	tap_ok "no shiftfs module, shiftctl or loaded filesystem before the install"
else
	tap_not_ok "no shiftfs module, shiftctl or loaded filesystem before the install"
fi
snapshot > /run/s5-before

say "apt-get install the two packages; DKMS builds the module for $rel"
echo "# \$ apt-get install ./shiftfs-dkms_*.deb ./shiftctl_*.deb"
t0=$(cut -d' ' -f1 /proc/uptime)
if out=$(DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $debs 2>&1); then
	tap_ok "apt-get install shiftfs-dkms shiftctl"
else
	tap_not_ok "apt-get install shiftfs-dkms shiftctl"
fi
echo "$out" | grep -iE 'dkms|shiftfs|Building|Installing|error' | sed 's/^/#   /' | tail -n 25
tap_diag "install took $(awk -v t="$t0" '{ printf "%.0f", $1 - t }' /proc/uptime)s"
show "dkms status shiftfs"
tap_run "DKMS built and installed shiftfs for the running kernel" \
	sh -c "dkms status shiftfs | grep -F '$rel' | grep -q installed"
tap_run "the package loaded the LXC hook's AppArmor profile (lxc-shiftfs-hook)" \
	grep -qx 'lxc-shiftfs-hook (enforce)' /sys/kernel/security/apparmor/profiles
# (the nosymfollow rule: where this release's apparmor_parser takes it,
# 3.1 and later, that is Debian 13's and not Debian 12's)
aa=$(dpkg-query -W -f '${Version}' apparmor)
if dpkg --compare-versions "$aa" ge 3.1; then want=yes; else want=no; fi
have=no
[ -f /etc/apparmor.d/shiftfs/lxc-container-shiftfs-user.nosymfollow ] && have=yes
tap_eq "the package put the profile's nosymfollow rule in place where apparmor $aa takes it" "$have" "$want"

say "Load it and ask shiftctl what this kernel supports"
tap_run "modprobe shiftfs" modprobe shiftfs
show "shiftctl check"
tap_run "shiftctl check is all green (exit 0)" shiftctl check

say "One shifted mount, with the packaged shiftctl"
mkdir -p "$work/lower" "$work/mnt"
echo hello > "$work/lower/file"
chown 0:0 "$work/lower/file"
show "shiftctl mount --uidmap 0:100000:65536 --gidmap 0:100000:65536 $work/lower $work/mnt"
tap_eq "the packaged tools shift 0:0 to 100000:100000" \
	"$(stat -c '%u:%g' "$work/mnt/file" 2>&1)" "100000:100000"
shiftctl umount "$work/mnt" 2>/dev/null || umount "$work/mnt" 2>/dev/null
rmmod shiftfs 2>/dev/null

say "apt-get purge: DKMS takes its builds away, nothing of ours is left"
if out=$(DEBIAN_FRONTEND=noninteractive apt-get purge -y -q shiftfs-dkms shiftctl 2>&1); then
	tap_ok "apt-get purge shiftfs-dkms shiftctl"
else
	tap_not_ok "apt-get purge shiftfs-dkms shiftctl"
	tap_diag "$out"
fi
snapshot > /run/s5-after
left=$(diff /run/s5-before /run/s5-after)
if [ -z "$left" ]; then
	tap_ok "the file list after purge equals the one before install"
else
	tap_not_ok "the file list after purge equals the one before install"
	tap_diag "$left"
fi
loaded=$(grep -x 'lxc-shiftfs-hook (enforce)' /sys/kernel/security/apparmor/profiles)
tap_eq "the package unloaded the hook's AppArmor profile" "$loaded" ""
rm -rf "$work"
tap_done
