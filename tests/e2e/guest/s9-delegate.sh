#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario 9: delegation inside a confined container.  Host root marks a
# root-owned tree for the container's ids (shiftctl mark), LXC binds the
# mark into the container (lxc.mount.entry), and the container's root
# mounts from it itself (shiftctl mount, where and when it wants) and uses
# it; the container runs confined by the AppArmor profile LXC generates.
# With Debian's default.conf (lxc.apparmor.allow_nesting = 1) that profile
# allows it; with allow_nesting = 0 the move of the new mount is denied
# (where the kernel's AppArmor mediates move_mount(): 6.12, 7.x) until the
# container's config adds the one rule docs/apparmor-lxc.md gives:
#   lxc.apparmor.raw = mount options=(rw, move) -> /mnt/shared/,
. "$(dirname "$0")/lib.sh"

ct=c9
tree=/srv/marks/share
root=/var/lib/lxc/$ct/rootfs
rule='mount options=(rw, move) -> /mnt/shared/,'
tap_start
tap_plan 12
T0=$(date +%s)

say "Scenario 9: the container's root mounts from a mark bound into it"
have_shiftfs || tap_diag "shiftfs is not available: $(why_no_shiftfs)"
timeout 30 lxc-stop -n $ct -k >/dev/null 2>&1
mountpoint -q $tree && shiftctl unmark $tree >/dev/null 2>&1
rm -rf $tree
mkdir -p $tree/data
echo "root-owned data" > $tree/data/hello
chown -R 0:0 $tree
show "ls -ln $tree/data"

# The container: a busybox rootfs of its own (owned by its root), with
# shiftctl and the libraries it links, as a container image would ship it.
mk_busybox_rootfs $root
cp /usr/local/sbin/shiftctl $root/sbin/shiftctl
for l in $(ldd /usr/local/sbin/shiftctl | grep -o '/[^ ]*'); do
	cp -L --parents "$l" $root/
done
mkdir -p $root/mnt/mark $root/mnt/shared
chown -R 100000:100000 $root
# conf LINES...: the container's config, LXC's defaults plus the mark's
# bind and LINES.
conf() {
	lxc_config $ct $root \
		"lxc.mount.entry = $tree mnt/mark none bind,create=dir 0 0" "$@"
}

step "Host root marks $tree for the container's ids"
tap_run "shiftctl mark --uidmap 0:100000:65536 --gidmap 0:100000:65536 $tree" \
	shiftctl mark --uidmap 0:100000:65536 --gidmap 0:100000:65536 $tree

# try_mount: the container's root mounts from the mark; its output.
try_mount() {
	in_ct $ct /sbin/shiftctl mount /mnt/mark /mnt/shared 2>&1
}
# started WHAT: start the container, or fail the test WHAT and say why.
started() {
	start_container $ct && return 0
	tap_not_ok "$1"
	return 1
}

step "Debian's defaults: the container's root mounts from the mark"
conf
show "grep -v '^#' /var/lib/lxc/$ct/config"
if started "the container starts with the mark bound in"; then
	tap_ok "the container starts with the mark bound in"
	label=$(cat "/proc/$(lxc-info -n $ct -pH)/attr/current" 2>&1)
	echo "# its init's AppArmor label: $label"
	case $label in
	*"lxc-$ct"_*"(enforce)"*) tap_ok "it is confined by LXC's generated profile" ;;
	*) tap_not_ok "it is confined by LXC's generated profile"; tap_diag "label '$label'" ;;
	esac
	echo "# \$ lxc-attach -n $ct -- shiftctl mount /mnt/mark /mnt/shared"
	out=$(try_mount)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/#   /'
	tap_eq "its root mounts from the mark (shiftctl mount, exit status)" "$rc" 0
	echo "# \$ lxc-attach -n $ct -- ls -ln /mnt/shared/data"
	in_ct $ct ls -ln /mnt/shared/data 2>&1 | sed 's/^/#   /'
	tap_eq "inside, the tree is its root's, and readable" \
		"$(in_ct $ct sh -c 'stat -c %u:%g /mnt/shared/data/hello && cat /mnt/shared/data/hello' 2>&1 | tr '\n' ' ')" \
		"0:0 root-owned data "
	tap_run "inside, its root writes to the tree" \
		in_ct $ct sh -c 'echo from the container > /mnt/shared/data/new'
	stop_container $ct
else
	for t in "confined" "mounts from the mark" "the tree is its root's" "its root writes"; do
		tap_skip "$t" "the container did not start"
	done
fi

step "lxc.apparmor.allow_nesting = 0: the move of the new mount is denied"
# AppArmor checks move_mount() of a detached mount (fsmount()) where the
# kernel says so (features/mount/move_mount: 6.12, 7.x); 6.1's AppArmor
# does not look at move_mount() at all, and the mount goes through.
aa_move=/sys/kernel/security/apparmor/features/mount/move_mount
conf "lxc.apparmor.allow_nesting = 0"
if started "with allow_nesting = 0, AppArmor decides the mount from the mark as the kernel says"; then
	out=$(try_mount)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/#   /'
	denied=$(dmesg | grep 'apparmor="DENIED" operation="mount"' | grep "lxc-$ct" | tail -n 1)
	echo "# kernel: $denied"
	mounted=$(ct_mounts $ct | grep -c ' /mnt/shared ')
	if [ -e $aa_move ]; then
		echo "# $aa_move: $(cat $aa_move): AppArmor mediates move_mount()"
		if [ $rc -ne 0 ] && printf '%s\n' "$out" | grep -q 'Permission denied' &&
		   [ -n "$denied" ] && [ "$mounted" -eq 0 ]; then
			tap_ok "with allow_nesting = 0, AppArmor decides the mount from the mark as the kernel says: denied"
		else
			tap_not_ok "with allow_nesting = 0, AppArmor decides the mount from the mark as the kernel says: denied"
			tap_diag "shiftctl mount exited $rc, mounted $mounted"
		fi
	else
		echo "# no $aa_move: this kernel's AppArmor does not mediate move_mount()"
		if [ $rc -eq 0 ] && [ "$mounted" -eq 1 ]; then
			tap_ok "with allow_nesting = 0, AppArmor decides the mount from the mark as the kernel says: not mediated, mounted"
		else
			tap_not_ok "with allow_nesting = 0, AppArmor decides the mount from the mark as the kernel says: not mediated, mounted"
			tap_diag "shiftctl mount exited $rc, mounted $mounted"
		fi
	fi
	stop_container $ct
fi

step "allow_nesting = 0 and the rule docs/apparmor-lxc.md gives"
conf "lxc.apparmor.allow_nesting = 0" "lxc.apparmor.raw = $rule"
if started "with the rule, its root mounts from the mark"; then
	out=$(try_mount)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/#   /'
	tap_eq "with the rule, its root mounts from the mark" "$rc" 0
	tap_eq "and reads the tree as its root's" \
		"$(in_ct $ct stat -c %u:%g /mnt/shared/data/new 2>&1)" "0:0"
	stop_container $ct
else
	tap_skip "and reads the tree" "the container did not start"
fi

step "Host root ends the mark"
tap_run "shiftctl unmark $tree" shiftctl unmark $tree
left=$(grep -a ' - shiftfs ' /proc/self/mountinfo)
tap_eq "no shiftfs mount left on the host" "$left" ""
# (under the mark the tree is opaque, even to host root: now it shows)
tap_eq "what the container's root wrote is 0:0 on disk" \
	"$(stat -c %u:%g $tree/data/new 2>&1)" "0:0"
tap_done
