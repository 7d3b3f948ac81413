#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Attacks on the LXC hook (lxc-hook/shiftfs) running as host root, black
# box, through the environment LXC 5.0 gives hooks (issue 22, the
# attacker's pass): a container name or config path chosen by an
# unprivileged user (a management tool passing it on) that holds "../"
# or a newline, aimed at the hook's records under its state directory
# (a record written outside it, or a forged "rootfs=" line in it); a
# container-owned overlay upper and work directory with links planted by
# the container's user; two pre-start hooks of one container at once.
# TAP output.
set -u

HOOK=${LXC_SHIFTFS_HOOK:-/usr/share/lxc/hooks/shiftfs}
STATE=${SHIFTFS_LXC_STATE:-/run/shiftfs-lxc}
# (the hook's own state directory, which the attacks aim at)
HOOK_STATE=$STATE

# tests/lib: beside this program in the guest (/tests/lib), one directory
# up in the source tree.
lib=$(dirname "$0")/lib
[ -f "$lib/tap.sh" ] || lib=$(dirname "$0")/../lib
# shellcheck source=../lib/tap.sh
. "$lib/tap.sh"
# shellcheck source=../lib/guest-test.sh
. "$lib/guest-test.sh"
guest_test_init lxchook-attack tmpfs

marks_on() {
	awk -v m="$1" '$5 == m && / - shiftfs .*mark/ { n++ } END { print n + 0 }' /proc/self/mountinfo
}

# Records anywhere under $STATE with a line of $1.
# count_in DIR GLOB: how many names in DIR match GLOB.
count_in() { find "$1" -mindepth 1 -maxdepth 1 -name "$2" | wc -l; }
# has_escape: anything named escape* made in $W, outside $STATE.
has_escape() { [ "$(count_in "$W" 'escape*')" != 0 ]; }
forged_records() { grep -lx -- "$1" "$STATE"/*.rec 2>/dev/null; }

# ---- tests ----------------------------------------------------------------

# The name walks out of $STATE: the record (root's file) would land in
# $W, and an overlay rootfs's private bind in any directory.
name_with_dotdot_refused() {
	make_container
	evil="../..$W/escape"
	hook pre-start LXC_NAME="$evil" && fail "pre-start accepted name $evil"
	grep -q "^ERROR: .*container name" "$W/err" || fail "no ERROR: naming the container name"
	has_escape && fail "record written outside $STATE: $(ls "$W")"
	[ "$(marks_on "$C/rootfs")" = 0 ] || fail "rootfs marked"
	hook post-stop LXC_NAME="$evil"
	has_escape && fail "post-stop made $(ls "$W")"
	return 0
}

name_with_dotdot_overlay_refused() {
	make_container
	mkdir -p "$W/upper" "$W/work"
	evil="../..$W/escape"
	hook pre-start LXC_NAME="$evil" \
		LXC_ROOTFS_PATH="overlay:$C/rootfs:$W/upper" &&
		fail "pre-start accepted name $evil"
	has_escape && fail "made outside $STATE: $(ls "$W")"
	grep -q " $W/escape" /proc/self/mountinfo && fail "bind-mounted outside $STATE"
	return 0
}

# A newline in the name would add a line of the attacker's to the record.
name_with_newline_refused() {
	make_container
	evil="c1
rootfs=$W/victim"
	hook pre-start LXC_NAME="$evil" && fail "pre-start accepted a name with a newline"
	grep -q "^ERROR: .*container name" "$W/err" || fail "no ERROR: naming the container name"
	forged_records "rootfs=$W/victim" && fail "a record holds the forged line"
	[ "$(marks_on "$C/rootfs")" = 0 ] || fail "rootfs marked"
	return 0
}

# A newline in the config path (a part of the record's name and a line of
# the record) must not add a line of the attacker's: the record escapes it,
# and such a path works (lxchook_shiftfs: newline_in_rootfs_path).
config_path_with_newline_no_forged_line() {
	make_container
	d="$W/cfg
rootfs=$W/victim"
	mkdir -p "$d"
	cp "$C/config" "$d/config"
	hook pre-start LXC_CONFIG_FILE="$d/config" || fail "pre-start: exit $rc"
	forged_records "rootfs=$W/victim" && fail "a record holds the forged line"
	hook post-stop LXC_CONFIG_FILE="$d/config" || fail "post-stop: exit $rc"
	[ "$(marks_on "$C/rootfs")" = 0 ] || fail "mark left after post-stop"
	return 0
}

# The overlay's upper and work directories are the container's: links its
# user plants there (work -> a host directory, upper/etc -> another) are
# never followed by the hook, which touches LOWER only.
overlay_upper_work_links_not_followed() {
	make_container
	mkdir -p "$W/host" "$W/host2" "$W/ovl/upper"
	echo keep > "$W/host/file"
	echo keep > "$W/host2/file"
	ln -s "$W/host" "$W/ovl/work"
	ln -s "$W/host2" "$W/ovl/upper/etc"
	chown -R -h 100000:100000 "$W/ovl"
	before=$(ls -ln "$W/host" "$W/host2"; stat -c '%u:%g %a' "$W/host" "$W/host2")
	hook pre-start LXC_ROOTFS_PATH="overlay:$C/rootfs:$W/ovl/upper" ||
		fail "pre-start"
	hook post-stop LXC_ROOTFS_PATH="overlay:$C/rootfs:$W/ovl/upper" ||
		fail "post-stop"
	after=$(ls -ln "$W/host" "$W/host2"; stat -c '%u:%g %a' "$W/host" "$W/host2")
	[ "$before" = "$after" ] || fail "host directories changed: $before / $after"
	grep -q " $W/host" /proc/self/mountinfo && fail "mounted on a link's target"
	[ "$(count_in "$STATE" '*.lower')" = 0 ] || fail "bind left: $(ls "$STATE")"
	return 0
}

# Two pre-starts of one container at once (a retried start): one mark
# on the rootfs, one record, and post-stop leaves neither.
concurrent_pre_start_one_mark() {
	make_container
	W1=$W/1 W2=$W/2
	mkdir -p "$W1" "$W2"
	(W=$W1 hook pre-start) > "$W1/log" 2>&1 &
	a=$!
	(W=$W2 hook pre-start) > "$W2/log" 2>&1 &
	b=$!
	wait $a
	ra=$?
	wait $b
	rb=$?
	echo "rc $ra $rb"
	sed 's/^/  first /' "$W1/log"
	sed 's/^/  second /' "$W2/log"
	[ $ra = 0 ] || [ $rb = 0 ] || fail "both pre-starts failed"
	[ "$(marks_on "$C/rootfs")" = 1 ] || fail "$(marks_on "$C/rootfs") marks on the rootfs"
	[ "$(count_in "$STATE" 'c1@*')" = 1 ] || fail "records: $(ls "$STATE")"
	hook post-stop || fail "post-stop"
	[ "$(marks_on "$C/rootfs")" = 0 ] || fail "mark left after post-stop"
	[ "$(count_in "$STATE" 'c1@*')" = 0 ] || fail "record left: $(ls "$STATE")"
	return 0
}

[ "$(id -u)" = 0 ] || tap_skip_all "needs root"
[ -x "$HOOK" ] || tap_skip_all "hook not installed at $HOOK"

t name_with_dotdot_refused
t name_with_dotdot_overlay_refused
t name_with_newline_refused
t config_path_with_newline_no_forged_line
t overlay_upper_work_links_not_followed
t concurrent_pre_start_one_mark

tap_done
