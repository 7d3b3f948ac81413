#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario 10: the cover letter's workflow as the user (issue 38).  Host
# root declares, once, marks for a login user (shiftctl mark --declare
# --user NAME); the user starts his own unprivileged containers on the
# root-owned images, as LXC's guide says: ~/.config/lxc/default.conf with
# his lxc.idmap, lxc-user-nic on lxcbr0, systemd-run --user --scope -p
# Delegate=yes lxc-start, confined by the profile the package ships for
# them, lxc-container-shiftfs-user (LXC's lxc-container-default-cgns
# leaves Debian 13's systemd degraded), AppArmor enforcing, the hook by
# its own.
# (a) a Debian container with systemd; ephemeral and snapshot overlay
# clones beside it (lxc-copy -e, -s -B overlay), each writable layer
# his; (b) the root-owned arm64 build image as his build container, with
# the cover letter's map in his range keeping his uid (a mark
# --own-ids): apt, a build as uid 1000 in his home, an ephemeral clone
# beside it; (c) shiftctl mount by hand in a namespace of his.  Attacks:
# another user's container, her own namespace and her own pre-mount
# hooks are refused his mark, and she cannot read the tree through it; a
# user cannot mark, unmark or revoke, nor mark in a namespace of his
# own; two users run on two marks at once;
# a mark revoked while his container runs: it keeps its mount, the next
# start is refused with a message that says so.  Then root declares his
# mark again and the guest reboots: r10-user-reboot.sh goes on from
# there.
# e2e-timeout: 1500
. "$(dirname "$0")/lib.sh"

img=/srv/images/u1
bb=/srv/images/u2
u=jejb
u2=alice
# (a user's PATH has no sbin directory)
SC=/usr/local/sbin/shiftctl
# refused USER NAME PATTERN TEST: one test, USER's start of NAME fails
# and the hook's last words match PATTERN.
refused() {
	if ustart "$1" "$2"; then
		tap_not_ok "$4"
		ustop "$1" "$2"
		return
	fi
	_msg=$(journalctl -q -o cat -t shiftfs-lxc-hook -n 3 2>&1)
	printf '%s\n' "$_msg" | sed 's/^/#   hook: /'
	case $_msg in
	$3) tap_ok "$4" ;;
	*) tap_not_ok "$4" ;;
	esac
}
# own_layer CLONE TEST: one test, a file the clone's root writes lands in
# its upper layer (overlay:LOWER:UPPER, as lxc-copy wrote it), owned by
# his range, and not in the image.
own_layer() {
	uattach $u "$1" sh -c "'echo $1 > /root/$1-file'"
	_up=$(as_user $u "sed -n 's/^lxc.rootfs.path = overlay:.*:\\(\\/[^:]*\\)$/\\1/p' ~/.local/share/lxc/$1/config")
	echo "# $1's upper layer: $_up"
	if on_disk "[ -d /mnt$img/root ] && [ ! -e /mnt$img/root/$1-file ]" && [ -n "$_up" ] &&
	   [ "$(stat -c %u "$_up/root/$1-file" 2>&1)" = "$S" ]; then
		tap_ok "$2"
	else
		tap_not_ok "$2"
		tap_diag "layer: $(stat -c %u:%g "$_up/root/$1-file" 2>&1)"
	fi
}
tap_start
tap_plan 34
T0=$(date +%s)

say "Scenario 10: containers users start themselves, on images root marked for them"
have_shiftfs || tap_diag "shiftfs is not available: $(why_no_shiftfs)"

step "Users $u and $u2, as useradd makes them (subordinate ids), lingering"
# (root's range first, as the other scenarios' containers use it)
add_subids root:100000:65536
for w in $u $u2; do
	id "$w" > /dev/null 2>&1 || useradd -m -s /bin/bash "$w"
	# (s4, run before this on Debian 12, leaves /home/jejb/containers/mips,
	# made by root: useradd then leaves the home root's)
	[ "$(stat -c %U "/home/$w")" = "$w" ] || chown "$w:" "/home/$w"
	loginctl enable-linger "$w" || tap_diag "loginctl enable-linger $w failed"
	grep -q "^$w veth lxcbr0" /etc/lxc/lxc-usernet 2>/dev/null ||
		echo "$w veth lxcbr0 10" >> /etc/lxc/lxc-usernet
done
for w in $u $u2; do
	for _i in $(seq 1 60); do
		[ -S "/run/user/$(id -u "$w")/bus" ] && break
		sleep 1
	done
done
S=$(awk -F: -v u=$u '$1 == u { print $2; exit }' /etc/subuid)
S2=$(awk -F: -v u=$u2 '$1 == u { print $2; exit }' /etc/subuid)
show "grep -E '^($u|$u2):' /etc/subuid /etc/subgid"
show "cat /etc/lxc/lxc-usernet"

step "Root's images: a Debian rootfs and a busybox one, owned by 0:0"
for d in $img $bb; do
	mountpoint -q "$d" && shiftctl unmark "$d" > /dev/null 2>&1
done
out=$(debian_rootfs $img) || tap_diag "$out"
owners $img > /run/shiftfs-e2e/u1.before
mk_busybox_rootfs $bb
show "ls -ln $img | head -n 4"

step "Before any mark: $u's start is refused, naming the admin's command"
uconfig $u u1 $img "$S"
refused $u u1 "*not marked*shiftctl mark --declare --user $u $img*" \
	"an unmarked image is refused before anything starts, naming the admin's command"

step "Root declares the marks, once: shiftctl mark --declare --user"
tap_run "shiftctl mark --declare --user $u $img" shiftctl mark --declare --user $u $img
tap_run "shiftctl mark --declare --user $u2 $bb" shiftctl mark --declare --user $u2 $bb
show "cat /etc/shiftfs/marks"
show "shiftctl list"
case $(shiftctl list --raw --noheadings --output TARGET,USER) in
*"$img $u"*"$bb $u2"*) tap_ok "shiftctl list names the user each mark serves" ;;
*) tap_not_ok "shiftctl list names the user each mark serves" ;;
esac
tap_eq "the declared marks unit is enabled" "$(systemctl is-enabled shiftfs-marks.service 2>&1)" enabled

step "(a) $u starts his Debian container himself"
echo "# \$ grep -v '^#' ~/.local/share/lxc/u1/config    (as $u)"
as_user $u "grep -v '^#' ~/.local/share/lxc/u1/config" | sed 's/^/#   /'
echo "# \$ systemd-run --user --scope -p Delegate=yes -- lxc-start -n u1"
up=0
if ustart $u u1; then
	tap_ok "$u's container starts on the root-owned image marked for him"
	up=1
else
	tap_not_ok "$u's container starts on the root-owned image marked for him"
	why_not $u u1
fi
if [ $up -eq 1 ]; then
	pid=$(as_user $u "lxc-info -n u1 -pH")
	label=$(cat "/proc/$pid/attr/current" 2>&1)
	echo "# its init: uid $(stat -c %u /proc/"$pid"), AppArmor $label"
	case $label in
	"lxc-container-shiftfs-user (enforce)") tap_ok "it runs confined by lxc-container-shiftfs-user, enforcing" ;;
	*) tap_not_ok "it runs confined by lxc-container-shiftfs-user, enforcing"; tap_diag "label '$label'" ;;
	esac
	tap_eq "its root is $u's first subordinate uid" "$(stat -c %u /proc/"$pid")" "$S"
	u_booted $u u1
	# (systemd, 252 and 257 alike, remounts its services' credentials
	# read-only with nosymfollow: the profile's rule for it, which
	# shiftfs-apparmor puts in place where apparmor_parser takes it,
	# 3.1 and later; without, tmpfiles, sysctl and sysusers fail, and
	# journald too on 257)
	aa=$(dpkg-query -W -f '${Version}' apparmor 2>/dev/null)
	if dpkg --compare-versions "$aa" ge 3.1; then
		tap_eq "journald, tmpfiles, sysctl and sysusers run in it (systemd's credentials)" \
			"$(uattach $u u1 systemctl show -p Result --value systemd-journald.service systemd-tmpfiles-setup.service systemd-sysctl.service systemd-sysusers.service 2>&1 | grep . | sort -u | tr '\n' ' ')" \
			"success "
		show "ls /etc/apparmor.d/shiftfs"
	else
		tap_skip "journald, tmpfiles, sysctl and sysusers run in it (systemd's credentials)" \
			"apparmor $aa's parser cannot name nosymfollow, which systemd's credentials remount needs (docs/lxc-hook.md)"
	fi
	addr=
	for _i in $(seq 1 60); do
		addr=$(uattach $u u1 ip -4 -o addr show dev eth0 2>/dev/null | awk '{ print $4 }')
		[ -n "$addr" ] && break
		sleep 1
	done
	if [ -n "$addr" ]; then tap_ok "lxc-user-nic gave it eth0 on lxcbr0: $addr"
	else tap_not_ok "lxc-user-nic gave it eth0 on lxcbr0, and lxc-net an address"; fi
	uattach $u u1 sh -c "'echo from-u1 > /root/u1-file; ls -ln /etc/hostname'" 2>&1 | sed 's/^/#   /'
	tap_eq "a file his container's root writes is 0:0 on disk" \
		"$(on_disk stat -c %u:%g /mnt$img/root/u1-file 2>&1)" 0:0
else
	for _n in 1 2 3 4 5 6; do tap_not_ok "u1 runs (not started)"; done
fi

step "Ephemeral overlay clones beside it (lxc-copy -e), each layer his"
clones_ok=0
for c in e1 e2; do
	as_user $u "timeout 180 systemd-run --user --scope --quiet -p Delegate=yes -- lxc-copy -n u1 -N $c -e --allowrunning" \
		> "/run/shiftfs-e2e/$c.start" 2>&1 &&
	as_user $u "lxc-wait -n $c -s RUNNING -t 60" > /dev/null 2>&1 && clones_ok=$((clones_ok + 1))
done
as_user $u "lxc-ls -f" 2>&1 | sed 's/^/#   /'
if [ $clones_ok -eq 2 ]; then
	own_layer e1 "two ephemeral clones run; a write lands in the clone's layer, owned by his range, not in the image"
else
	tap_not_ok "two ephemeral clones run beside u1"
	why_not $u e1
fi
for c in e1 e2; do ustop $u $c; done

step "Snapshot clones (lxc-copy -s -B overlay), two at once, each layer his"
for c in k1 k2; do
	as_user $u "timeout 180 lxc-copy -n u1 -N $c -s -B overlay --allowrunning" \
		> "/run/shiftfs-e2e/$c.copy" 2>&1 || sed 's/^/#   lxc-copy: /' "/run/shiftfs-e2e/$c.copy"
done
if ustart $u k1 && ustart $u k2; then
	own_layer k2 "two snapshot clones run beside u1; a write lands in the clone's layer, his, not in the image"
else
	tap_not_ok "two snapshot clones (lxc-copy -s -B overlay) run beside u1"
	why_not $u k1
	why_not $u k2
fi
for c in k1 k2; do
	ustop $u $c
	as_user $u "lxc-destroy -n $c" > /dev/null 2>&1
done

step "(b) The root-owned arm64 build image, booted as his build container"
# The cover letter's build map in his range, keeping his own id: 0-999
# and 65534 into his subordinate ids, 1000 as himself; the image marked
# for him with --own-ids.  Its programs run through qemu-user-static.
A=/var/tmp/images/arm64
REPO=$PAYLOAD/arm64-repo
G=$(id -g $u)
dev=$(blkid -L shiftfs-arm64 2>/dev/null || true)
if [ -z "$dev" ] || [ ! -d "$REPO" ]; then
	tap_not_ok "the arm64 image is attached (disk labelled shiftfs-arm64) with its repository"
	for _n in 2 3 4 5 6 7 8; do tap_not_ok "(b), (c) not run: no arm64 image"; done
else
	mkdir -p $A
	mountpoint -q $A || mount "$dev" $A
	tap_run "shiftctl mark --declare --user $u --own-ids $A" \
		shiftctl mark --declare --user $u --own-ids $A
	hello_c | as_user $u "mkdir -p ~/build && cat > ~/build/hello.c"
	as_user $u "cat > ~/build/apt.sh" <<'SRC'
echo "deb [trusted=yes] file:/srv/repo ./" > /etc/apt/sources.list
export DEBIAN_FRONTEND=noninteractive
apt-get -q update > /dev/null || exit 1
apt-get install -y -q --no-install-recommends hello 2>&1 | tail -n 3 || exit 1
# (what s8 installs itself later: taken away again)
out=$(hello)
apt-get purge -y -q hello > /dev/null 2>&1 || echo "apt-get purge hello failed"
echo "$out"
SRC
	uconfig $u arm $A "$S" "$BUSYBOX_HEAD
lxc.arch = aarch64
lxc.mount.entry = tmpfs run tmpfs rw,nosuid,nodev,mode=755 0 0
lxc.mount.entry = /home/$u/build home/builder none bind,create=dir 0 0
lxc.mount.entry = $REPO srv/repo none bind,ro,create=dir 0 0"
	# sysvinit halts on SIGPWR; the build map replaces his whole range
	as_user $u "sed -i -e 's/^lxc.signal.halt = .*/lxc.signal.halt = SIGPWR/' -e '/^lxc.idmap/d' ~/.local/share/lxc/arm/config &&
		printf 'lxc.idmap = %s\n' 'u 0 $S 1000' 'u 1000 1000 1' 'u 65534 $((S + 65534)) 1' \
			'g 0 $S 1000' 'g $G $G 1' 'g 65534 $((S + 65534)) 1' >> ~/.local/share/lxc/arm/config"
	as_user $u "grep -e idmap -e arch -e mount.entry ~/.local/share/lxc/arm/config" | sed 's/^/#   /'
	# booted NAME: his container's pid 1 is the image's init (120 s at most)
	booted() {
		for _i in $(seq 1 40); do
			[ "$(uattach $u "$1" ps -p 1 -o comm= 2>/dev/null)" = init ] && return 0
			sleep 2
		done
		return 1
	}
	if ustart $u arm && booted arm; then
		tap_ok "his build container boots the arm64 image: pid 1 is its sysvinit"
	else
		tap_not_ok "his build container boots the arm64 image: pid 1 is its sysvinit"
		why_not $u arm
	fi
	pid=$(as_user $u "lxc-info -n arm -pH")
	tap_eq "it runs aarch64 with the build map in his range" \
		"$(uattach $u arm uname -m 2>&1) $(map_of "$pid" uid)" \
		"aarch64 0:$S:1000 1000:1000:1 65534:$((S + 65534)):1 "
	# (every arm64 program start costs most of a second here)
	out=$(UATTACH_SECS=600 uattach $u arm sh /home/builder/apt.sh 2>&1)
	printf '%s\n' "$out" | sed 's/^/#   /'
	tap_eq "apt works: update and install from the repository, the package runs" \
		"$(printf '%s\n' "$out" | tail -n 1)" "Hello, world!"
	echo "# \$ lxc-attach -n arm -u 1000 -g $G -- sh -c 'cd && gcc -O2 -o hello hello.c && ./hello'"
	out=$(as_user $u "timeout 600 systemd-run --user --scope --quiet -- lxc-attach -n arm -u 1000 -g $G --clear-env -v PATH=/usr/bin:/bin -v HOME=/home/builder -- sh -c 'cd && gcc -O2 -o hello hello.c && ./hello'" 2>&1)
	printf '%s\n' "$out" | sed 's/^/#   /'
	tap_eq "a build as uid 1000 in his bind-mounted home runs: aarch64, uid 1000" \
		"$(printf '%s\n' "$out" | tail -n 1)" "hello from aarch64, uid 1000"
	show "ls -ln /home/$u/build"
	tap_eq "on the host the build product is his ($(id -u $u):$G) and an arm64 ELF" \
		"$(stat -c %u:%g /home/$u/build/hello 2>&1) $(od -An -tx1 -j18 -N2 /home/$u/build/hello 2>&1)" \
		"$(id -u $u):$G  b7 00"
	as_user $u "timeout 180 systemd-run --user --scope --quiet -p Delegate=yes -- lxc-copy -n arm -N arm-e -e --allowrunning" \
		> /run/shiftfs-e2e/arm-e.start 2>&1
	if booted arm-e && [ "$(as_user $u "lxc-info -n arm -sH")" = RUNNING ]; then
		tap_ok "an ephemeral clone (lxc-copy -e) runs beside it: $(uattach $u arm-e uname -m 2>&1)"
	else
		tap_not_ok "an ephemeral clone (lxc-copy -e) runs beside it"
		why_not $u arm-e
	fi
	ustop $u arm-e
	ustop $u arm

	step "(c) By hand, in a user namespace of his own: shiftctl mount onto ~/containers/mips"
	# (the build map: his 1000 stays his, so its root may enter his home)
	# (lxc-usernsexec: LXC's tool for a user and mount namespace with
	# several extents, mapped by newuidmap and newgidmap)
	m="-m u:0:$S:1000 -m u:1000:1000:1 -m u:65534:$((S + 65534)):1 -m g:0:$S:1000 -m g:$G:$G:1 -m g:65534:$((S + 65534)):1"
	echo "# \$ lxc-usernsexec $m -- shiftctl mount $A ~/containers/mips"
	as_user $u "mkdir -p ~/containers/mips && lxc-usernsexec $m -- sh -c '$SC mount $A ~/containers/mips && ls -l ~/containers/mips | head -n 6 && stat -c %u:%g ~/containers/mips/usr/bin/gcc-12'" \
		> /run/shiftfs-e2e/mips.hand 2>&1
	sed 's/^/#   /' /run/shiftfs-e2e/mips.hand
	tap_eq "his own namespace mounts from the mark: the image is its root's" \
		"$(tail -n 1 /run/shiftfs-e2e/mips.hand)" 0:0
	shiftctl unmark $A > /dev/null
	umount $A
fi

step "Attacks: $u2, another user with another range"
uconfig $u2 steal $img "$S2"
refused $u2 steal "*does not allow*" \
	"$u2's container on $u's image is refused: the mark does not allow her map"
# Her own pre-mount hooks, without the project's pre-start check.  Her
# config keeps only the container's lines: (1) a hook of her own,
# shiftctl mount from his mark onto her rootfs, its words kept in /tmp
# (she cannot read a file her container's root writes in her home);
# (2) the project's hook at pre-mount alone, under the hook's own
# profile, which lets it move a mount into place.  The kernel refuses
# both: her namespace's map is not in his mark.
own_hook() {
	as_user $u2 "sed -i -e '/shiftfs.conf/d' -e '/^lxc.hook/d' ~/.local/share/lxc/steal/config &&
		printf '%s\n' 'lxc.hook.version = 1' '$1' >> ~/.local/share/lxc/steal/config"
	_t=$(date +%s)
	rm -f /tmp/steal-own.err
	if ustart $u2 steal; then
		tap_not_ok "$3"
		tap_diag "her container started on $(uattach $u2 steal cat /etc/debian_version 2>&1)"
		ustop $u2 steal
		return
	fi
	_msg=$(cat /tmp/steal-own.err 2>/dev/null; journalctl -q -o cat -t shiftfs-lxc-hook --since "@$_t" 2>&1 | grep steal)
	printf '%s\n' "$_msg" | sed 's/^/#   /'
	case $_msg in
	$2) tap_ok "$3" ;;
	*) tap_not_ok "$3"; why_not $u2 steal ;;
	esac
}
own_hook "lxc.hook.pre-mount = $SC mount $img $img 2> /tmp/steal-own.err" "*not allowed by the mark*" \
	"her own pre-mount hook cannot mount from his mark (the kernel's refusal)"
own_hook "lxc.hook.pre-mount = /usr/local/share/lxc/hooks/shiftfs" "*cannot shift-mount*(this namespace: uids 0:$S2:65536*" \
	"the project's pre-mount hook alone, without its pre-start check, cannot mount his mark for her"
out=$(as_user $u2 "m=\$(mktemp -d) && chmod 755 \$m && lxc-usernsexec -m b:0:$S2:65536 -- $SC mount $img \$m; rmdir \$m" 2>&1)
printf '%s\n' "$out" | sed 's/^/#   /'
case $out in
*"not allowed by the mark"*) tap_ok "her own namespace cannot mount from his mark (the kernel's refusal)" ;;
*) tap_not_ok "her own namespace cannot mount from his mark (the kernel's refusal)" ;;
esac
out=$(as_user $u2 "cat $img/etc/debian_version; ls $img" 2>&1)
echo "# \$ cat $img/etc/debian_version; ls $img (as $u2)"
printf '%s\n' "$out" | sed 's/^/#   /'
case $out in
*[0-9].[0-9]*|*bin*) tap_not_ok "she cannot read the tree through the mark" ;;
*) tap_ok "she cannot read the tree through the mark" ;;
esac
out=$(as_user $u2 "$SC mark --user $u2 $img; $SC unmark $img; $SC unmark --declared; mount -o remount,revoke $img" 2>&1)
printf '%s\n' "$out" | sed 's/^/#   /'
if grep -q " $img .* - shiftfs .*,mark" /proc/self/mountinfo && ! grep -q "$u2" /proc/self/mountinfo; then
	case $out in *root*) tap_ok "a user can neither mark, unmark nor revoke, declared or not" ;;
	*) tap_not_ok "a user can neither mark nor unmark (said why)" ;; esac
else
	tap_not_ok "a user can neither mark nor unmark, declared or not"
fi

# In a user and mount namespace of his own he holds CAP_SYS_ADMIN: he
# marks a tree of root's, marked for no one, with his range there, and
# would mount from that mark and write into it as root.  shiftctl
# refuses in a user namespace; he asks the kernel with mount(8) instead.
# The kernel takes a mark only from host root.
rt=/srv/images/u3
mkdir -p $rt/etc
chown -R 0:0 $rt
out=$(as_user $u "export m=\$(mktemp -d) && chmod 755 \$m && lxc-usernsexec -m b:0:$S:65536 -- sh -c 'mount -t shiftfs -o mark,uidmap=0:$S:65536,gidmap=0:$S:65536 $rt $rt && echo he marked it && mount -t shiftfs $rt \$m && touch \$m/etc/by-$u'; rmdir \$m" 2>&1)
printf '%s\n' "$out" | sed 's/^/#   /'
if [ ! -e $rt/etc/by-$u ] && ! grep -q " $rt " /proc/self/mountinfo &&
   case $out in *"he marked it"*) false ;; esac; then
	tap_ok "in a namespace of his own he cannot mark a tree of root's (the kernel's refusal)"
else
	tap_not_ok "in a namespace of his own he cannot mark a tree of root's (the kernel's refusal)"
	tap_diag "$(ls -ln $rt/etc)"
fi
rm -rf $rt

step "Two users at once: $u2's busybox container on her own mark"
uconfig $u2 bb $bb "$S2" "$BUSYBOX_HEAD"
if ustart $u2 bb && [ $up -eq 1 ] && [ "$(as_user $u "lxc-info -n u1 -sH")" = RUNNING ]; then
	tap_ok "$u2's container runs on her mark while $u's runs on his"
else
	tap_not_ok "$u2's container runs on her mark while $u's runs on his"
	why_not $u2 bb
fi
ustop $u2 bb

step "Root revokes $u's mark while his container runs"
tap_run "shiftctl unmark $img" shiftctl unmark $img
if [ $up -eq 1 ] && uattach $u u1 sh -c "'cat /etc/debian_version && echo after > /root/after-revoke'" > /dev/null 2>&1 &&
   [ "$(stat -c %u:%g $img/root/after-revoke 2>&1)" = 0:0 ]; then
	tap_ok "the running container keeps its mount: reads, and writes as 0:0"
else
	tap_not_ok "the running container keeps its mount: reads, and writes as 0:0"
fi
ustop $u u1
refused $u u1 "*not marked*" "his next start is refused, saying the image is not marked"

step "Root declares $u's mark again; the guest reboots (r10-user-reboot)"
rm -f $img/root/u1-file $img/root/after-revoke
tap_run "shiftctl mark --declare --user $u $img" shiftctl mark --declare --user $u $img
# (kept on disk for the boot after: /run does not survive it)
mkdir -p /var/lib/shiftfs-e2e
cp /run/shiftfs-e2e/u1.before /var/lib/shiftfs-e2e/u1.before
echo r10-user-reboot > /run/shiftfs-e2e/reboot
echo "# scenario 10 took $(( $(date +%s) - T0 ))s"
tap_done
