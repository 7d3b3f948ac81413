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
# The declared marks' unit, as make install puts and enables it.
if [ -f "$PAYLOAD/shiftfs-marks.service" ]; then
	mkdir -p /usr/local/lib/systemd/system
	unit=/usr/local/lib/systemd/system/shiftfs-marks.service
	sed 's|@SBINDIR@|/usr/local/sbin|g' "$PAYLOAD/shiftfs-marks.service" > "$unit.new"
	# (as it was: a boot after the first finds it in place)
	if cmp -s "$unit.new" "$unit"; then rm -f "$unit.new"; else mv "$unit.new" "$unit"; fi
	# (no reload: this runs while the system boots)
	systemctl enable --no-reload shiftfs-marks.service > /dev/null 2>&1 ||
		note "systemctl enable shiftfs-marks.service failed"
fi
if [ -n "$(ls "$PAYLOAD/lxc-hook" 2>/dev/null)" ]; then
	mkdir -p /usr/local/share/lxc/hooks /usr/local/share/lxc/config
	[ -f "$PAYLOAD/lxc-hook/shiftfs" ] &&
		install -m 755 "$PAYLOAD/lxc-hook/shiftfs" /usr/local/share/lxc/hooks/shiftfs
	[ -f "$PAYLOAD/lxc-hook/shiftfs.conf" ] &&
		sed 's|@LXCHOOKDIR@|/usr/local/share/lxc/hooks|g' \
			"$PAYLOAD/lxc-hook/shiftfs.conf" > /usr/local/share/lxc/config/shiftfs.conf
	# The hook's AppArmor profile and the users' containers', as make
	# install puts and loads them (shiftfs-apparmor load, with the
	# nosymfollow rule where this release's apparmor_parser takes it).
	for p in shiftfs-lxc-hook lxc-container-shiftfs-user; do
		[ -f "$PAYLOAD/lxc-hook/$p.apparmor" ] &&
			install -D -m 644 "$PAYLOAD/lxc-hook/$p.apparmor" /etc/apparmor.d/$p
	done
	install -D -m 755 "$PAYLOAD/lxc-hook/shiftfs-apparmor" /usr/local/lib/shiftfs/shiftfs-apparmor
	install -D -m 644 "$PAYLOAD/lxc-hook/lxc-container-shiftfs-user.nosymfollow" \
		/usr/local/lib/shiftfs/lxc-container-shiftfs-user.nosymfollow
	if /usr/local/lib/shiftfs/shiftfs-apparmor load > "$state/apparmor.log" 2>&1; then
		note "AppArmor profiles loaded$(sed 's/^/; /' "$state/apparmor.log" | tr -d '\n')"
	else
		note "shiftfs-apparmor load failed: $(cat "$state/apparmor.log")"
	fi
fi
note "project files installed at $(cut -d' ' -f1 /proc/uptime)s after boot"
touch "$state/installed"
