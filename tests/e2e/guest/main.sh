#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The e2e guest driver, started by cloud-init (runcmd of the NoCloud seed)
# once the cloud image has booted.  It makes sure install.sh has installed
# the project's files from the payload disk (shiftfs.ko under
# /lib/modules/RELEASE/extra with depmod, shiftctl, the LXC hook), runs
# the scenario scripts, reports TAP
# on the second serial port, dumps the kernel log on the first between
# markers and powers the guest off.
#
# Kernel command line:
#   shiftfs.e2e.tests=s4,s1   run these scenarios, in this order (default: all
#                             s*; r* scenarios run after a reboot a
#                             scenario asked for)
#   shiftfs.e2e.timeout=SECS  per-scenario timeout (default 600; a scenario
#                             with a "# e2e-timeout: SECS" line gets the
#                             larger of the two)

PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
PAYLOAD=/run/shiftfs-payload
E2E=/usr/local/libexec/shiftfs-e2e
export PAYLOAD E2E
TAP=/dev/ttyS1
[ -c "$TAP" ] || TAP=/dev/console

out() { echo "$@" > "$TAP"; }
log() { echo "shiftfs-e2e: $*" > /dev/kmsg; }

TESTS=
TIMEOUT=600
for arg in $(cat /proc/cmdline); do
	case $arg in
	shiftfs.e2e.tests=*) TESTS=${arg#shiftfs.e2e.tests=} ;;
	shiftfs.e2e.timeout=*) TIMEOUT=${arg#shiftfs.e2e.timeout=} ;;
	esac
done

out "# e2e guest up: $(uname -r), $(cut -d' ' -f1 /proc/uptime)s after boot"
# Where the boot went: cloud-init's stages say when they started.
grep -ao "running '[^']*' at .* Up [0-9.]* seconds" /var/log/cloud-init-output.log 2>/dev/null |
	sed -E "s/running '([^']*)' at .* Up ([0-9.]+) seconds/\1 at \2s/; s/^/# boot: cloud-init /" > "$TAP"

# ---- the project's files --------------------------------------------------
# install.sh was started early by the seed's bootcmd; it holds a lock
# while it works, so this waits for it (or does the work if it never ran).
timeout 300 "$PAYLOAD/e2e/install.sh" ||
	out "# install.sh failed or did not finish in 300s"
cat /run/shiftfs-e2e/install.tap > "$TAP" 2>/dev/null

# ---- the boot (s0-boot, always) ----------------------------------------------
# cloud-init validates the image's configuration and the seed's user-data
# against its schema and, if either is invalid, says so in its log and
# carries on: the run must fail instead (tests/cloud-init-schema.sh
# checks the seed on the host).  22.4 (Debian 12) says "Invalid
# cloud-config provided", 25.1 (Debian 13) "cloud-config failed schema
# validation".  cloud-init's log must be there: without it the check
# proves nothing.
out "# program: s0-boot"
{
	echo "TAP version 13"
	echo "1..2"
	name="cloud-init found its configuration and the seed's valid"
	cilog=/var/log/cloud-init.log
	invalid='Invalid cloud-config provided|cloud-config failed schema validation'
	if [ ! -s $cilog ]; then
		echo "not ok 1 $name"
		echo "# $cilog is missing or empty"
	elif grep -aqE "$invalid" $cilog /var/log/cloud-init-output.log 2>/dev/null; then
		echo "not ok 1 $name"
		grep -ahE -A 4 "$invalid" $cilog /var/log/cloud-init-output.log 2>/dev/null |
			head -n 12 | sed 's/^/#   /'
	else
		echo "ok 1 $name"
	fi
	# The system users have: AppArmor enforcing, with the profiles LXC
	# ships (lxc-start's, lxc-copy's on Debian 13, the containers')
	# loaded, and the project's own where install.sh installed the
	# project's files from the payload, as make install does (not in the
	# DKMS upgrade's boots: their scenario installs the packages).
	name="AppArmor is enforcing with LXC's profiles and the hook's loaded"
	aa=/sys/kernel/security/apparmor/profiles
	want="/usr/bin/lxc-start lxc-container-default-cgns"
	[ -d "$PAYLOAD/lxc-hook" ] && want="$want lxc-shiftfs-hook lxc-container-shiftfs-user"
	[ -e /etc/apparmor.d/usr.bin.lxc-copy ] && want="$want /usr/bin/lxc-copy"
	missing=
	for p in $want; do
		grep -qxF "$p (enforce)" $aa 2>/dev/null || missing="$missing $p"
	done
	if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" != Y ]; then
		echo "not ok 2 $name"
		echo "# AppArmor is not enabled: $(cat /proc/cmdline)"
	elif [ -n "$missing" ]; then
		echo "not ok 2 $name"
		echo "# not loaded in enforce mode:$missing"
		sed 's/^/#   loaded: /' $aa 2>/dev/null | head -n 40
	else
		echo "ok 2 $name: $(wc -l < $aa) profiles, $(grep -c '(enforce)' $aa) enforcing, LSMs $(cat /sys/kernel/security/lsm 2>/dev/null)"
		grep -E 'lxc|shiftfs' $aa | sed 's/^/#   /'
	fi
} > "$TAP"
out "# exit: s0-boot 0"

# ---- the scenarios ---------------------------------------------------------
if [ -n "$TESTS" ]; then
	list=
	# a name, or its first part: "s1" is s1-container.sh, not s10-user.sh
	for p in $(echo "$TESTS" | tr ',' ' '); do
		f=$(ls "$E2E/$p.sh" "$E2E/$p"-*.sh 2>/dev/null | head -n 1)
		list="$list $f"
		[ -n "$f" ] || out "# no scenario matches '$p'"
	done
else
	# s5-packages removes the project's packages at its end (it checks
	# that apt-get remove leaves nothing): it runs last.
	list="$(ls "$E2E"/s[0-9]*.sh | grep -v /s5-packages.sh) $E2E/s5-packages.sh"
fi
cd /tmp || exit 1
# A scenario that needs a reboot (s10: the declared marks come back)
# names in $REBOOT what runs after it: this boot ends there, saying
# "# e2e-reboot: THOSE,THE REST" (run-e2e.sh boots the disk again for them).
REBOOT=/run/shiftfs-e2e/reboot
rm -f "$REBOOT"
for t in $list; do
	if [ -n "${again:-}" ]; then
		rest="$rest,$(basename "$t" .sh)"
		continue
	fi
	name=$(basename "$t" .sh)
	out "# program: $name"
	log "running $name"
	start=$(date +%s)
	# A scenario may ask for more time: a "# e2e-timeout: SECS" line.
	limit=$(sed -n 's/^# e2e-timeout: \([0-9][0-9]*\)$/\1/p' "$t" | head -n 1)
	[ -n "$limit" ] && [ "$limit" -gt "$TIMEOUT" ] || limit=$TIMEOUT
	timeout -k 10 "$limit" sh "$t" > "$TAP" 2>&1 < /dev/null
	rc=$?
	[ $rc -eq 124 ] || [ $rc -eq 137 ] && out "# $name: TIMEOUT after ${limit}s"
	out "# time: $name $(( $(date +%s) - start ))s"
	out "# exit: $name $rc"
	if [ -s "$REBOOT" ]; then
		again=$(cat "$REBOOT")
		rest=
	fi
done
[ -n "${again:-}" ] && out "# e2e-reboot: $again$rest"

# ---- the end ---------------------------------------------------------------
sync
{
	echo "SHIFTFS-DMESG-BEGIN"
	dmesg
	echo "SHIFTFS-DMESG-END"
} > /dev/ttyS0
out "SHIFTFS-E2E-DONE"
sync
poweroff -f
