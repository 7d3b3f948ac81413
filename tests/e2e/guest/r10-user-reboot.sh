#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario 10, after the reboot it asked for (main.sh, run-e2e.sh): the
# marks root declared are back, made by shiftfs-marks.service before the
# users' sessions started, and the user's container starts again, as he
# starts it.  Then everything goes: no mark, declaration or hook state
# left, the image's ownership on disk as it was before scenario 10.
. "$(dirname "$0")/lib.sh"

img=/srv/images/u1
bb=/srv/images/u2
u=jejb
tap_start
tap_plan 8
T0=$(date +%s)

say "Scenario 10, after the reboot: the declared marks are back, $u's container starts"
show "uptime; systemctl status --no-pager shiftfs-marks.service | head -n 12"
tap_eq "shiftfs-marks.service ran at boot" "$(systemctl is-active shiftfs-marks.service 2>&1)" active
marks=$(shiftctl list --raw --noheadings --output TARGET,USER,MAPS | sort)
printf '%s\n' "$marks" | sed 's/^/#   /'
case $marks in
"$img $u uidmap=0:"*"$bb alice uidmap=0:"*) tap_ok "the declared marks are back, each for its user" ;;
*) tap_not_ok "the declared marks are back, each for its user" ;;
esac
# monotonic microseconds: the marks were made before his user manager
marks=$(systemctl show -P ActiveEnterTimestampMonotonic shiftfs-marks.service)
user=$(systemctl show -P InactiveExitTimestampMonotonic "user@$(id -u $u).service")
echo "# marks made at ${marks}us, $u's user manager started at ${user}us (monotonic)"
if [ "${marks:-0}" -gt 0 ] && [ "${user:-0}" -gt "$marks" ]; then
	tap_ok "the marks were made before users' sessions started"
else
	tap_not_ok "the marks were made before users' sessions started"
fi
for _i in $(seq 1 60); do
	[ -S "/run/user/$(id -u $u)/bus" ] && break
	sleep 1
done
if ustart $u u1; then
	tap_ok "$u's container starts again on the marked image, as he starts it"
	u_booted $u u1
	uattach $u u1 sh -c "'echo again > /root/r10-file'"
	tap_eq "its root's file is 0:0 on disk" \
		"$(on_disk stat -c %u:%g /mnt$img/root/r10-file 2>&1)" 0:0
else
	tap_not_ok "$u's container starts again on the marked image, as he starts it"
	why_not $u u1
	tap_not_ok "it booted systemd (not started)"
	tap_not_ok "its root's file is 0:0 on disk (not started)"
fi
ustop $u u1

step "Clean up: marks, declarations, nothing left"
shiftctl unmark $img > /dev/null 2>&1
shiftctl unmark $bb > /dev/null 2>&1
rm -f $img/root/r10-file
left=$(grep -a -e ' - shiftfs ' /proc/self/mountinfo; grep -v '^#' /etc/shiftfs/marks 2>/dev/null;
       ls -d /run/user/*/shiftfs-lxc.* /tmp/shiftfs-lxc.* 2>/dev/null)
tap_eq "no mark, declaration or hook state left" "$left" ""
# Every file the image had keeps its owner and mode (what the containers
# wrote is theirs: new files, 0:0 on disk), and no file is a host id of
# 100000 or more.
owners $img > /run/shiftfs-e2e/u1.after
changed=$(awk 'NR == FNR { was[$3] = $1 " " $2; next }
	($3 in was) && was[$3] != $1 " " $2 { print $3 ": " was[$3] " -> " $1 " " $2 }' \
	/var/lib/shiftfs-e2e/u1.before /run/shiftfs-e2e/u1.after | head -n 5)
high=$(find $img -xdev \( -uid +99999 -o -gid +99999 \) -printf '%U:%G %p\n' | head -n 5)
tap_eq "the image's files keep their owners and modes; none is a host id" "$changed$high" ""
echo "# took $(( $(date +%s) - T0 ))s"
tap_done
