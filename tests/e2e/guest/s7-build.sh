#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario 7: build containers and ephemeral clones on a root-owned rootfs.
#   - the build container, a Debian rootfs booted with systemd and
#     networked through lxc-net, with the build map: container ids 0-999
#     to host 100000-100999, 1000 to
#     host 1000 (the builder's own files, bind-mounted in as /home/build),
#     65534 to host 101000; the hook marks the rootfs with all three
#     extents and the rootfs keeps its image ids on disk;
#   - overlay clones (lxc-copy -s -B overlay, lxc-copy -e): the hook
#     shifts the lower layer (the base's rootfs) per container, the upper
#     layer is the clone's own; three clones of one base run at once, one
#     with another id range, and the base is left exactly as it was;
#   - what a clone costs against a full copy and chown -R (diagnostics).
. "$(dirname "$0")/lib.sh"

conf=/usr/local/share/lxc/config/shiftfs.conf
state=/run/shiftfs-e2e/s7
R=/srv/images/c7
BUILD=/srv/build7
B=/srv/images/b7
TB=/srv/images/tb7
tap_start
tap_plan 30
T0=$(date +%s)
mkdir -p "$state"

say "Scenario 7: the build map and ephemeral clones"
have_shiftfs || tap_diag "shiftfs is not available: $(why_no_shiftfs)"

# ---- the build map ------------------------------------------------------------
step "The build map: 0-999 -> 100000, 1000 -> 1000, 65534 -> 101000"
out=$(debian_rootfs "$R") || tap_diag "$out"
mkdir -p "$R/home/build"
mkdir -p "$BUILD"
chown 1000:1000 "$BUILD"
show "command -v newuidmap newgidmap; dpkg-query -W uidmap lxc"
lxc_config_debian c7 "$R" "lxc.include = $conf" "lxc.log.level = DEBUG" \
	"lxc.mount.entry = $BUILD home/build none bind 0 0"
set_build_idmap c7
show "grep -e idmap -e mount.entry /var/lib/lxc/c7/config"
# First without root:1000:1 (add_subids in lib.sh says why it is
# needed): newuidmap must refuse the build map.
add_subids root:100000:65536
sed -i '/^root:1000:1$/d' /etc/subuid /etc/subgid
if command -v newuidmap > /dev/null; then
	if timeout 120 lxc-start -n c7 -d > "$state/c7.nosub" 2>&1 &&
	   timeout 20 lxc-wait -n c7 -s RUNNING -t 10 > /dev/null 2>&1; then
		tap_not_ok "without root:1000:1 in /etc/subuid, c7 does not start (newuidmap refuses)"
		stop_container c7
	else
		grep -h -e newuidmap -e newgidmap -e 'map ids' /var/log/lxc/c7.log | tail -n 3 | sed 's/^/#   /'
		tap_ok "without root:1000:1 in /etc/subuid, c7 does not start (newuidmap refuses)"
	fi
	timeout 20 lxc-wait -n c7 -s STOPPED -t 10 > /dev/null 2>&1
else
	tap_skip "without root:1000:1 in /etc/subuid, c7 does not start" "no newuidmap: liblxc writes the maps itself as root"
fi
add_subids root:1000:1
show "cat /etc/subuid"
: > /var/log/lxc/c7.log
if start_ct c7; then
	tap_ok "c7 starts with the three-extent build map"
	systemd_ok c7
	network_ok c7
	pid=$(lxc-info -n c7 -pH)
	show "cat /proc/$pid/uid_map /proc/$pid/gid_map"
	tap_eq "its init's uid_map has the three extents" \
		"$(map_of "$pid" uid)" "$BUILD_MAP"
	tap_eq "its init's gid_map has the three extents" \
		"$(map_of "$pid" gid)" "$BUILD_MAP"
	show "grep -a -e ' - shiftfs ' /proc/$pid/mountinfo"
	timeout 60 lxc-attach -n c7 -u 1000 -g 1000 --clear-env -v PATH=/bin:/sbin -- \
		sh -c 'echo built > /home/build/out.o' > "$state/build.out" 2>&1
	sed 's/^/#   /' "$state/build.out"
	show "ls -ln $BUILD"
	tap_eq "a file uid 1000 creates in /home/build is 1000:1000 on the host" \
		"$(stat -c %u:%g "$BUILD/out.o" 2>&1)" "1000:1000"
	in_ct c7 sh -c 'echo r > /root/byroot && echo b > /root/bybuilder &&
		chown 1000:1000 /root/bybuilder &&
		echo n > /root/bynobody && chown 65534:65534 /root/bynobody' 2>&1 |
		sed 's/^/#   /'
	show "ls -ln $R/root"
	tap_eq "inside, /root/byroot is 0:0 and /root/bybuilder 1000:1000" \
		"$(in_ct c7 stat -c %u:%g /root/byroot /root/bybuilder 2>&1 | tr '\n' ' ')" "0:0 1000:1000 "
	tap_eq "on disk: container root's file is 0:0, the one chowned to 1000 is 1000:1000, to 65534 is 65534:65534 (image ids)" \
		"$(stat -c %u:%g "$R/root/byroot" "$R/root/bybuilder" "$R/root/bynobody" 2>&1 | tr '\n' ' ')" \
		"0:0 1000:1000 65534:65534 "
	stop_container c7
else
	tap_not_ok "c7 starts with the three-extent build map"
	for _ in 1 2 3 4 5 6 7; do tap_not_ok "(c7 did not start)"; done
fi
high=$(find "$R" -xdev \( -uid +99999 -o -gid +99999 \) -printf '%U:%G %p\n' | head -n 5)
tap_eq "nothing in the rootfs is owned by a host id of 100000 or more" "$high" ""
no_hook_leaks "after c7 stopped, nothing is left on the host"

# ---- overlay clones ---------------------------------------------------------
step "Three overlay clones of one base, one with another id range"
mk_busybox_rootfs "$B"
echo base > "$B/etc/motd"
lxc_config b7 "$B" "lxc.include = $conf" "lxc.log.level = DEBUG"
add_subids root:200000:65536
listing "$B" > "$state/base.before"
tap_diag "base: $(grep -c . "$state/base.before") lines of checksums and owners"

for k in k1 k2 k3; do
	lxc-destroy -n $k -f > /dev/null 2>&1
	if ! timeout 120 lxc-copy -n b7 -N $k -s -B overlay > "$state/$k.copy" 2>&1; then
		tap_diag "lxc-copy -n b7 -N $k -s -B overlay failed:"
		sed 's/^/#   /' "$state/$k.copy"
	fi
	sed -i "s|^lxc.log.file = .*|lxc.log.file = /var/log/lxc/$k.log|" /var/lib/lxc/$k/config
	: > /var/log/lxc/$k.log
done
show "grep rootfs.path /var/lib/lxc/k1/config"
show "find /var/lib/lxc/k1 -printf '%U:%G %m %p\\n'"
tap_eq "lxc-copy wrote an overlay:LOWER:UPPER rootfs" \
	"$(sed -n 's/^lxc.rootfs.path = //p' /var/lib/lxc/k1/config)" \
	"overlay:$B:/var/lib/lxc/k1/overlay/delta"
# k3 gets another range: what lxc-copy gave the base's root (the
# container's directory, its upper and work directories) goes to k3's.
set_idmap k3 "u 0 200000 65536" "g 0 200000 65536"
find /var/lib/lxc/k3 -xdev -uid 100000 -exec chown 200000:200000 {} +

up=0
for k in k1 k2 k3; do
	start_ct $k && up=$((up + 1))
done
show "lxc-ls -f"
tap_eq "k1, k2 and k3 run at the same time" \
	"$(for k in k1 k2 k3; do lxc-info -n $k -sH; done | tr '\n' ' ')" "RUNNING RUNNING RUNNING "
show "grep -a -e ' - shiftfs ' -e ' - overlay ' /proc/$(lxc-info -n k3 -pH)/mountinfo"
show "shiftctl list"
for k in k1 k2 k3; do
	in_ct $k sh -c "echo $k > /root/$k.txt" 2>&1 | sed 's/^/#   /'
done
tap_eq "inside each, the base's files are 0:0 and its own file is 0:0" \
	"$(for k in k1 k2 k3; do in_ct $k stat -c %u:%g /bin/busybox /etc/motd /root/$k.txt; done 2>&1 | sort -u | tr '\n' ' ')" \
	"0:0 "
tap_eq "each sees its own file only" \
	"$(for k in k1 k2 k3; do in_ct $k ls /root; done 2>&1 | tr '\n' ' ')" "k1.txt k2.txt k3.txt "
tap_eq "k3 runs with its own map" \
	"$(in_ct k3 cat /proc/self/uid_map 2>&1 | awk '{ print $1, $2, $3 }')" "0 200000 65536"
show "ls -ln /var/lib/lxc/k1/overlay/delta/root /var/lib/lxc/k3/overlay/delta/root"
tap_eq "each file lands in its own upper layer, owned by its container's root (k1, k2: 100000; k3: 200000)" \
	"$(stat -c %u:%g /var/lib/lxc/k1/overlay/delta/root/k1.txt /var/lib/lxc/k2/overlay/delta/root/k2.txt /var/lib/lxc/k3/overlay/delta/root/k3.txt 2>&1 | tr '\n' ' ')" \
	"100000:100000 100000:100000 200000:200000 "
tap_eq "the base's /root holds none of them" "$(ls -A "$B/root")" ""
in_ct k1 sh -c 'echo changed >> /etc/motd' 2>&1 | sed 's/^/#   /'
tap_eq "a change to a base file is k1's alone (copied up)" \
	"$(in_ct k1 cat /etc/motd 2>&1 | tr '\n' ' ')/$(in_ct k2 cat /etc/motd 2>&1)/$(cat "$B/etc/motd")" \
	"base changed /base/base"
tap_eq "no mark is left on the host while they run" "$(shiftctl list 2>&1)" ""
for k in k1 k2 k3; do stop_container $k; done
tap_eq "all three stopped" \
	"$(for k in k1 k2 k3; do lxc-info -n $k -sH; done | tr '\n' ' ')" "STOPPED STOPPED STOPPED "
no_hook_leaks "after the clones stopped, nothing is left on the host"
listing "$B" > "$state/base.after"
if cmp -s "$state/base.before" "$state/base.after"; then
	tap_ok "the base rootfs is unchanged (checksums, owners, modes)"
else
	tap_not_ok "the base rootfs is unchanged (checksums, owners, modes)"
	diff "$state/base.before" "$state/base.after" | head -n 10 | sed 's/^/#   /'
fi

# Several lower layers cannot be shifted: refused, and nothing is left.
step "A clone whose start fails (its rootfs has two lower layers)"
sed -i "s|^lxc.rootfs.path = overlay:|lxc.rootfs.path = overlay:$R:|" /var/lib/lxc/k2/config
timeout 120 lxc-start -n k2 -d > "$state/k2.start" 2>&1
timeout 20 lxc-wait -n k2 -s STOPPED -t 10 > /dev/null 2>&1
sleep 1
hook_says k2
tap_eq "k2 with two lower layers does not run" "$(lxc-info -n k2 -sH 2>&1)" "STOPPED"
no_hook_leaks "after that failed start, nothing is left on the host"

# ---- ephemeral -----------------------------------------------------------------
step "An ephemeral clone (lxc-copy -e)"
lxc-destroy -n e7 -f > /dev/null 2>&1
a=$(ms)
timeout 120 lxc-copy -n b7 -N e7 -e > "$state/e7.copy" 2>&1
timeout 60 lxc-wait -n e7 -s RUNNING -t 50 > /dev/null 2>&1
b=$(ms)
sed 's/^/#   /' "$state/e7.copy"
tap_diag "lxc-copy -e of the base, to RUNNING: $((b - a)) ms"
show "grep -e rootfs.path -e ephemeral /var/lib/lxc/e7/config"
tap_eq "the ephemeral clone runs, the base's files 0:0 inside" \
	"$(lxc-info -n e7 -sH 2>&1) $(in_ct e7 stat -c %u:%g /bin/busybox 2>&1)" "RUNNING 0:0"
stop_container e7
sleep 1
tap_eq "once stopped, LXC destroyed it" "$(ls -d /var/lib/lxc/e7 2>&1 | grep -c '^/var/lib/lxc/e7$')" "0"
no_hook_leaks "after the ephemeral clone, nothing is left on the host"

# ---- what a clone costs ---------------------------------------------------
step "A clone and start against a full copy, chown -R and start"
mk_busybox_rootfs "$TB"
for d in /usr/lib/python3 /usr/lib/python3.11 /usr/share/perl; do
	[ -d "$d" ] && mkdir -p "$TB$(dirname $d)" && cp -a "$d" "$TB$(dirname $d)/"
done
chown -R 0:0 "$TB"
tap_diag "the timing rootfs: $(find "$TB" -xdev | wc -l) names, $(du -sxm "$TB" | cut -f1) MB"
lxc_config tb7 "$TB" "lxc.include = $conf"
lxc-destroy -n tbe -f > /dev/null 2>&1
sync
a=$(ms)
timeout 120 lxc-copy -n tb7 -N tbe -e > "$state/tbe.copy" 2>&1
timeout 60 lxc-wait -n tbe -s RUNNING -t 50 > /dev/null 2>&1
b=$(ms)
clone_ms=$((b - a))
clone_du=$(du -sxk /var/lib/lxc/tbe | cut -f1)
clone_state=$(lxc-info -n tbe -sH 2>&1)
stop_container tbe

rm -rf /var/lib/lxc/tbf
sync
a=$(ms)
mkdir -p /var/lib/lxc/tbf
cp -a "$TB" /var/lib/lxc/tbf/rootfs
b=$(ms)
chown -R 100000:100000 /var/lib/lxc/tbf/rootfs
c=$(ms)
lxc_config tbf /var/lib/lxc/tbf/rootfs
start_container tbf
d=$(ms)
full_du=$(du -sxk /var/lib/lxc/tbf | cut -f1)
full_state=$(lxc-info -n tbf -sH 2>&1)
stop_container tbf
tap_diag "clone: lxc-copy -e to RUNNING $clone_ms ms, $clone_du KB on disk"
tap_diag "copy:  cp -a $((b - a)) ms + chown -R $((c - b)) ms + lxc-start $((d - c)) ms = $((d - a)) ms, $full_du KB on disk"
tap_eq "both ran (ephemeral clone, full copy)" "$clone_state $full_state" "RUNNING RUNNING"
lxc-destroy -n tbf -f > /dev/null 2>&1
no_hook_leaks "at the end, nothing is left on the host"
tap_diag "scenario time: $(( $(date +%s) - T0 ))s"
tap_done
