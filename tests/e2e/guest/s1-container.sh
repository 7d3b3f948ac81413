#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario 1: an unprivileged LXC container (root = host uid 100000,
# started by root) boots a Debian root filesystem that is owned by 0:0 on
# disk, shifted by shiftfs, with systemd as init and networked through
# lxc-net (an address from its DHCP, the host reachable).  Its processes see their rootfs owned by their
# root, a file it creates is 0:0 on disk, and the rootfs's ownership on
# disk is unchanged afterwards.  The container runs as Debian sets LXC up:
# confined by the AppArmor profile LXC generates, the hook by its own
# profile (lxc-shiftfs-hook), entered from lxc-start's.  Then: without
# the hook's profile, lxc-start's own denies mounts outside /var/lib/lxc,
# and the hook refuses the rootfs, naming the rule and the fix; a
# container whose hook is broken (wrong path) fails to start, promptly,
# with LXC's error shown.
. "$(dirname "$0")/lib.sh"

disk=/srv/images/c1
ct=c1
tap_start
tap_plan 16

say "Scenario 1: an unprivileged container on a root-owned rootfs"
if ! out=$(debian_rootfs "$disk"); then
	tap_diag "$out"
fi
owners "$disk" > /run/shiftfs-e2e/c1.before
show "ls -l $disk"
# (an image's own ids: root's and Debian's system users', none of the
# host ids an unprivileged container's root has, 100000 and up)
bad=$(awk '{ split($1, id, ":") } id[1] >= 100000 || id[2] >= 100000 { print; n++ } n == 3 { exit }' \
	/run/shiftfs-e2e/c1.before)
tap_eq "the rootfs on disk has the image's ids, none of 100000 or above" "$bad" ""

# The project's LXC hook (lxc-hook/, installed by install.sh) shifts the
# rootfs at start: mark in pre-start, mount from the mark in pre-mount,
# unmark in start-host.
rootfs=$disk
conf=/usr/local/share/lxc/config/shiftfs.conf
[ -f $conf ] || tap_diag "the LXC hook is not installed: no lxc-hook/shiftfs.conf in the payload"
lxc_config_debian $ct "$rootfs" "lxc.include = $conf" "lxc.log.level = DEBUG"
show "grep -v '^#' /var/lib/lxc/$ct/config"

if ! have_shiftfs; then
	tap_diag "shiftfs is not available: $(why_no_shiftfs)"
fi
say "Start it: lxc-start -n $ct"
t_start=$(date +%s)
if start_container $ct; then
	tap_ok "unprivileged container starts on the shifted rootfs"
	up=1
else
	tap_not_ok "unprivileged container starts on the shifted rootfs"
	up=0
fi

if [ $up -eq 1 ]; then
	say "The container's own view"
	echo "# \$ lxc-attach -n $ct -- cat /proc/self/uid_map"
	in_ct $ct cat /proc/self/uid_map 2>&1 | sed 's/^/#   /'
	label=$(cat "/proc/$(lxc-info -n $ct -pH)/attr/current" 2>&1)
	echo "# the container's init runs under AppArmor label: $label"
	case $label in
	*"lxc-$ct"_*"(enforce)"*) tap_ok "the container is confined by LXC's generated AppArmor profile" ;;
	*) tap_not_ok "the container is confined by LXC's generated AppArmor profile"
	   tap_diag "its init's label is '$label'" ;;
	esac
	# (the hook says so in syslog: LXC 6.0 logs nothing hooks print)
	journalctl -q -o cat -t shiftfs-lxc-hook --since "@$t_start" 2>&1 | sed 's/^/#   hook: /'
	hook=$(journalctl -q -o cat -t shiftfs-lxc-hook --since "@$t_start" 2>/dev/null |
		grep -c "^$ct: [a-z-]*: AppArmor: left profile /usr/bin/lxc-start for lxc-shiftfs-hook")
	tap_eq "the hook ran under its own AppArmor profile, entered from lxc-start's (pre-start, pre-mount, start-host)" "$hook" 3
	systemd_ok $ct
	network_ok $ct
	tap_eq "the container is unprivileged (root is host uid 100000)" \
		"$(in_ct $ct cat /proc/self/uid_map 2>&1 | awk '{print $1, $2, $3}')" "0 100000 65536"
	echo "# \$ lxc-attach -n $ct -- ls -l /"
	in_ct $ct ls -l / 2>&1 | sed 's/^/#   /'
	tap_eq "inside, its rootfs is owned by its root (0:0)" \
		"$(in_ct $ct stat -c '%u:%g' / /usr/bin/ls /etc/passwd 2>&1 | sort -u)" "0:0"
	tap_run "inside, root creates /root/made-in-container" \
		in_ct $ct sh -c 'echo hello > /root/made-in-container && ls -l /root/made-in-container'
	say "On disk, the new file belongs to real root"
	show "ls -ln $disk/root"
	tap_eq "the file the container made is 0:0 on disk" \
		"$(stat -c '%u:%g' "$disk/root/made-in-container" 2>&1)" "0:0"
	say "The host sees the container's rootfs through the shift"
	pid=$(lxc-info -n $ct -pH)
	show "ls -ln /proc/$pid/root/ | head -n 5"
	tap_eq "through the container's root on the host, 100000:100000" \
		"$(stat -c '%u:%g' "/proc/$pid/root/bin" 2>&1)" "100000:100000"
	show "ls -ln $disk | head -n 5"
	tap_run "lxc-stop -n $ct" stop_container $ct
else
	for t in "the container is confined" "the hook ran under its own profile" \
		"systemd is running" "the network" \
		"the container is unprivileged" "inside, its rootfs is owned by its root" \
		"inside, root creates a file" "the file the container made is 0:0 on disk" \
		"the host view is shifted" "lxc-stop"; do
		tap_skip "$t" "the container did not start"
	done
fi

say "After the stop: nothing mounted, ownership on disk unchanged"
rm -f "$disk/root/made-in-container"
# (what was there before: systemd added its journal and state since)
(cd "$disk" && awk '{ print $3 }' /run/shiftfs-e2e/c1.before |
	xargs -d '\n' stat -c '%u:%g %a %n') > /run/shiftfs-e2e/c1.after 2>&1
if grep -q ' shiftfs ' /proc/self/mounts; then
	tap_not_ok "the rootfs is unmounted and its ownership on disk unchanged"
	tap_diag "a shiftfs mount is left on the host: $(grep ' shiftfs ' /proc/self/mounts)"
elif ! diff -u /run/shiftfs-e2e/c1.before /run/shiftfs-e2e/c1.after > /run/shiftfs-e2e/c1.diff; then
	tap_not_ok "the rootfs is unmounted and its ownership on disk unchanged"
	sed 's/^/#   /' /run/shiftfs-e2e/c1.diff | head -n 20
else
	tap_ok "the rootfs is unmounted and its ownership on disk unchanged"
fi

say "Without the hook's AppArmor profile: refused, naming the rule and the fix"
show "apparmor_parser -R /etc/apparmor.d/shiftfs-lxc-hook"
: > /var/log/lxc/$ct.log
t0=$(date +%s)
timeout 150 lxc-start -F -n $ct < /dev/null > /run/shiftfs-e2e/c1-noprofile.start 2>&1
rc=$?
errors=$( { cat /run/shiftfs-e2e/c1-noprofile.start
	journalctl -q -o cat -t shiftfs-lxc-hook --since "@$t0"; } 2>/dev/null)
printf '%s\n' "$errors" | grep 'AppArmor' | tail -n 2 | sed 's/^/#   /'
if [ $rc -ne 0 ] && [ $rc -ne 124 ] &&
   printf '%s\n' "$errors" | grep -q "mount -> /var/lib/lxc/{\*\*,}.*apparmor_parser -r /etc/apparmor.d/shiftfs-lxc-hook" &&
   [ -z "$(hook_leaks)" ]; then
	tap_ok "$disk refused at pre-start under lxc-start's profile, the rule and the fix named, nothing left"
else
	tap_not_ok "$disk refused at pre-start under lxc-start's profile, the rule and the fix named, nothing left"
	tap_diag "lxc-start exited $rc (124: timed out); left: $(hook_leaks)"
	printf '%s\n' "$errors" | tail -n 10 | sed 's/^/#   /' 
	timeout 30 lxc-stop -n $ct -k >/dev/null 2>&1
fi
show "apparmor_parser -r /etc/apparmor.d/shiftfs-lxc-hook"

say "Why the hook has a profile of its own: what lxc-start's denies it"
# The hook's two mounts, run as root under lxc-start's profile: the mark
# outside /var/lib/lxc (a move_mount() of a detached mount, mediated where
# the kernel says so: 6.12, 7.x), and an overlay's lower-layer bind.
aa_move=/sys/kernel/security/apparmor/features/mount/move_mount
probe=/run/shiftfs-e2e/bindprobe
mkdir -p $probe
aa-exec -p /usr/bin/lxc-start -- shiftctl mark --uidmap 0:100000:65536 \
	--gidmap 0:100000:65536 "$disk" > /run/shiftfs-e2e/c1-aamark 2>&1
rc1=$?
aa-exec -p /usr/bin/lxc-start -- mount --bind /srv/images $probe > /run/shiftfs-e2e/c1-aabind 2>&1
rc2=$?
d1=$(dmesg | grep 'apparmor="DENIED" operation="mount"' | grep 'profile="/usr/bin/lxc-start"' |
	grep -F "name=\"$disk/\"" | tail -n 1)
d2=$(dmesg | grep 'apparmor="DENIED" operation="mount"' | grep 'profile="/usr/bin/lxc-start"' |
	grep -F "name=\"$probe/\"" | tail -n 1)
echo "# mark: exit $rc1, kernel: ${d1:-nothing}"
echo "# bind: exit $rc2, kernel: ${d2:-nothing}"
if [ -e $aa_move ]; then want_mark=denied; else want_mark=allowed; fi
if [ $rc1 -ne 0 ] && [ -n "$d1" ]; then got_mark=denied; elif [ $rc1 -eq 0 ]; then got_mark=allowed; else got_mark="failed ($(cat /run/shiftfs-e2e/c1-aamark))"; fi
[ $rc1 -eq 0 ] && shiftctl unmark "$disk" > /dev/null 2>&1
mountpoint -q $probe && umount $probe
if [ "$got_mark" = "$want_mark" ] && [ $rc2 -ne 0 ] && [ -n "$d2" ]; then
	tap_ok "under lxc-start's profile the mark of $disk is $want_mark (this kernel), an overlay's lower bind denied"
else
	tap_not_ok "under lxc-start's profile the mark of $disk is $want_mark (this kernel), an overlay's lower bind denied"
	tap_diag "mark $got_mark; bind exit $rc2: $(cat /run/shiftfs-e2e/c1-aabind)"
fi
rmdir $probe

say "A container whose hook is broken (wrong path) fails, and says why"
lxc_config c1-broken /var/lib/lxc/c1-broken/rootfs \
	"lxc.hook.pre-start = /usr/local/libexec/no-such-dir/shiftfs-hook $disk"
t0=$(date +%s)
# In the foreground (-F, no stdin): LXC 6.0 (Debian 13) logs no ERROR for
# a failing hook when the start is daemonized (-d: lxc-start only says
# the container failed to start), LXC 5.0 (Debian 12) does either way.
# A refused start exits non-zero promptly with the errors on stderr and
# in the log; 0 or 124 (timed out, running) would mean it ran.
timeout 150 lxc-start -F -n c1-broken < /dev/null > /run/shiftfs-e2e/c1-broken.start 2>&1
rc=$?
t1=$(date +%s)
state=$(lxc-info -n c1-broken -sH 2>/dev/null)
errors=$( { cat /run/shiftfs-e2e/c1-broken.start; grep -E 'ERROR' /var/log/lxc/c1-broken.log; } 2>/dev/null)
printf '%s\n' "$errors" | tail -n 8 | sed 's/^/#   /'
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$state" != RUNNING ] &&
   printf '%s\n' "$errors" | grep -q 'no-such-dir\|hook'; then
	tap_ok "a broken hook makes lxc-start fail in $((t1 - t0))s with the hook's error shown"
else
	tap_not_ok "a broken hook makes lxc-start fail in $((t1 - t0))s with the hook's error shown"
	tap_diag "lxc-start exited $rc (124: timed out), state '$state'"
	timeout 30 lxc-stop -n c1-broken -k >/dev/null 2>&1
fi
tap_done
