#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install the project's files from the payload disk into the e2e guest:
# shiftfs.ko under /lib/modules/RELEASE/extra (depmod, modprobe),
# shiftctl, the LXC hook, the scenario scripts.  Started early by the
# seed's bootcmd as a transient unit (so that depmod runs while cloud-init
# goes on), or by main.sh if that did not happen.  What it has to say goes
# to /run/shiftfs-e2e/install.tap (TAP comments), which main.sh reports;
# /run/shiftfs-e2e/installed marks the end.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
PAYLOAD=/run/shiftfs-payload
E2E=/usr/local/libexec/shiftfs-e2e
state=/run/shiftfs-e2e
mkdir -p "$state" "$E2E" "$PAYLOAD"
exec 9>"$state/install.lock"
flock 9
[ -f "$state/installed" ] && exit 0
note() { echo "# $*" >> "$state/install.tap"; }

if ! mountpoint -q "$PAYLOAD"; then
	dev=/dev/disk/by-label/shiftfs-payload
	[ -e $dev ] || dev=/dev/vdb
	if ! mount -o ro "$dev" "$PAYLOAD"; then
		note "cannot mount the payload disk ($dev)"
		touch "$state/installed"
		exit 1
	fi
fi
cp "$PAYLOAD"/e2e/* "$E2E"/
rel=$(uname -r)
if [ -f "$PAYLOAD/shiftfs.ko" ]; then
	mkdir -p "/lib/modules/$rel/extra"
	cp "$PAYLOAD/shiftfs.ko" "/lib/modules/$rel/extra/"
	t=$(cut -d' ' -f1 /proc/uptime)
	depmod -a "$rel"
	note "depmod -a took $(awk -v t="$t" '{ printf "%.1f", $1 - t }' /proc/uptime)s"
	if modprobe shiftfs > "$state/modprobe.log" 2>&1; then
		note "shiftfs.ko loaded ($(modinfo -F vermagic shiftfs 2>/dev/null))"
	else
		note "modprobe shiftfs failed: $(cat "$state/modprobe.log")"
	fi
else
	note "no shiftfs.ko in the payload (make module KVER=$rel)"
fi
if [ -x "$PAYLOAD/shiftctl" ]; then
	install -m 755 "$PAYLOAD/shiftctl" /usr/local/sbin/shiftctl
else
	note "no shiftctl in the payload (make shiftctl)"
fi
if [ -n "$(ls "$PAYLOAD/lxc-hook" 2>/dev/null)" ]; then
	mkdir -p /usr/local/share/lxc/hooks /usr/local/share/lxc/config
	[ -f "$PAYLOAD/lxc-hook/shiftfs" ] &&
		install -m 755 "$PAYLOAD/lxc-hook/shiftfs" /usr/local/share/lxc/hooks/shiftfs
	[ -f "$PAYLOAD/lxc-hook/shiftfs.conf" ] &&
		sed 's|@LXCHOOKDIR@|/usr/local/share/lxc/hooks|g' \
			"$PAYLOAD/lxc-hook/shiftfs.conf" > /usr/local/share/lxc/config/shiftfs.conf
	# The hook's AppArmor profile, as make install puts and loads it.
	if [ -f "$PAYLOAD/lxc-hook/shiftfs-lxc-hook.apparmor" ]; then
		install -D -m 644 "$PAYLOAD/lxc-hook/shiftfs-lxc-hook.apparmor" \
			/etc/apparmor.d/shiftfs-lxc-hook
		if apparmor_parser -r /etc/apparmor.d/shiftfs-lxc-hook > "$state/apparmor.log" 2>&1; then
			note "AppArmor profile lxc-shiftfs-hook loaded"
		else
			note "apparmor_parser -r /etc/apparmor.d/shiftfs-lxc-hook failed: $(cat "$state/apparmor.log")"
		fi
	fi
fi
note "project files installed at $(cut -d' ' -f1 /proc/uptime)s after boot"
touch "$state/installed"
