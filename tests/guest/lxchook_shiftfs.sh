#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest tests of the LXC hook (lxc-hook/shiftfs), driven with the
# environment LXC 5.0 gives hooks (version 1): pre-start as host root
# marks the rootfs; pre-mount, run inside a new user namespace (0 ->
# 100000, 65536 ids, written by us as newuidmap would) and mount namespace
# as namespace root, shift-mounts it from the mark; start-host checks the
# container's maps and drops the host's mark, the container keeping its
# mount.  Plus every refusal and clean-up path of the hook: what LXC
# passes (type, version, rootfs), the container's config and what it
# includes, lxc-info's answer, a rootfs another container or a foreign
# mark holds, a stale mark, post-stop after a failed start, an overlay's
# lower layer, and a rootfs whose path holds a newline.  Each test has a
# state directory of its own (SHIFTFS_LXC_STATE).  TAP output.
set -u

HOOK=${LXC_SHIFTFS_HOOK:-/usr/share/lxc/hooks/shiftfs}
# tests/lib: beside this program in the guest (/tests/lib), one directory
# up in the source tree.
lib=$(dirname "$0")/lib
[ -f "$lib/tap.sh" ] || lib=$(dirname "$0")/../lib
# shellcheck source=../lib/tap.sh
. "$lib/tap.sh"
# shellcheck source=../lib/guest-test.sh
. "$lib/guest-test.sh"
# (a shared mount, as on a systemd host: the container's copy is a slave)
guest_test_init lxchook-test tmpfs

# mountinfo's escaping of a mount point (\ space tab newline)
mi_escape() {
	_e=${1//\\/\\134}
	_e=${_e// /\\040}
	_e=${_e//$'\t'/\\011}
	printf '%s' "${_e//$'\n'/\\012}"
}
mounted_type() {
	M=$(mi_escape "$2") awk '$5 == ENVIRON["M"] { for (i = 7; $i != "-"; i++); t = $(i + 1); o = $(i + 3) } END { print t " " o }' "$1"
}
is_marked() { case "$(mounted_type /proc/self/mountinfo "$1")" in shiftfs*mark*) return 0 ;; esac; return 1; }

# Start the "container": a process in new user and mount namespaces
# (slave propagation, as LXC sets it), its maps written by us as
# newuidmap would; then run the pre-mount hook in its namespaces as their
# root (nsenter -U makes us uid 0 there, as LXC's child is).  Sets KID.
start_container() {
	map=${1:-0 100000 65536}
	rootfs_path=${2:-dir:$C/rootfs}
	unshare --user --mount --propagation slave sleep 600 &
	KID=$!
	echo "$KID" >> "$W/kids"
	for _ in $(seq 200); do
		[ "$(readlink /proc/$KID/ns/user)" != "$(readlink /proc/self/ns/user)" ] && break
		sleep 0.05
	done
	echo "$map" > /proc/$KID/uid_map || fail "uid_map"
	echo "$map" > /proc/$KID/gid_map || fail "gid_map"
	nsenter -t "$KID" -U -m -- env LXC_HOOK_VERSION=1 LXC_HOOK_TYPE=pre-mount \
		LXC_HOOK_SECTION=lxc LXC_NAME=c1 LXC_CONFIG_FILE="$C/config" \
		LXC_ROOTFS_PATH="$rootfs_path" SHIFTFS_LXC_STATE="$W/state" \
		LXC_ROOTFS_MOUNT=/usr/lib/x86_64-linux-gnu/lxc \
		"$HOOK" > "$W/pm.out" 2> "$W/pm.err"
	echo $? > "$W/pm.rc"
	sed 's/^/  pre-mount out: /' "$W/pm.out"
	sed 's/^/  pre-mount err: /' "$W/pm.err"
}

# What the container sees of its rootfs, as its root.
container_sees() {
	nsenter -t "$KID" -U -m -- bash -c "
		stat -c 'root %u:%g' '$C/rootfs'
		stat -c 'user %u:%g' '$C/rootfs/home/user'
		touch '$C/rootfs/etc/made-in-container' && echo created
		awk '\$5 == \"$C/rootfs\" { print \"mount\", \$0 }' /proc/self/mountinfo
	" > "$W/seen" 2>&1
	sed 's/^/  seen: /' "$W/seen"
}

# ---- tests ----------------------------------------------------------------

container_start_shifts_rootfs() {
	[ -x "$HOOK" ] || skip "no hook at $HOOK"
	make_container
	hook pre-start || fail "pre-start: exit $rc"
	grep -q "^INFO: " "$W/err" || fail "pre-start said nothing"
	is_marked "$C/rootfs" || fail "rootfs not marked after pre-start"
	start_container
	[ "$(cat "$W/pm.rc")" = 0 ] || fail "pre-mount: exit $(cat "$W/pm.rc")"
	grep -q "^INFO: " "$W/pm.err" || fail "pre-mount said nothing"
	hook start-host LXC_PID="$KID" || fail "start-host: exit $rc"
	is_marked "$C/rootfs" && fail "host mark still there after start-host"
	container_sees
	grep -q '^root 0:0$' "$W/seen" || fail "container does not own its rootfs"
	grep -q '^user 1000:1000$' "$W/seen" || fail "image user 1000 not 1000 inside"
	grep -q '^created$' "$W/seen" || fail "container root cannot create"
	grep -q '^mount .* - shiftfs ' "$W/seen" || fail "no shiftfs mount in the container"
	# The top mount; the mark's copy may stay underneath it.
	grep '^mount ' "$W/seen" | tail -n 1 | grep -q ',mark' &&
		fail "the container's top mount is the mark"
	[ "$(stat -c %u:%g "$C/rootfs/etc/made-in-container")" = 0:0 ] ||
		fail "file created in the container is $(stat -c %u:%g "$C/rootfs/etc/made-in-container") on disk"
	[ "$(stat -c %u:%g "$C/rootfs/home/user")" = 1000:1000 ] || fail "disk ids changed"
}

start_host_refuses_other_maps() {
	[ -x "$HOOK" ] || skip "no hook at $HOOK"
	make_container
	hook pre-start || fail "pre-start: exit $rc"
	# The container runs with a sub-range: allowed by the mark, but not
	# what was configured.
	start_container "0 100000 1000"
	hook start-host LXC_PID="$KID" && fail "start-host accepted other maps"
	grep -q "^ERROR: .*marked for" "$W/err" || fail "no ERROR: line"
	is_marked "$C/rootfs" && fail "mark left behind after a failed start"
	return 0
}

pre_mount_without_mark_fails() {
	[ -x "$HOOK" ] || skip "no hook at $HOOK"
	make_container
	start_container
	[ "$(cat "$W/pm.rc")" = 0 ] && fail "pre-mount worked without a mark"
	grep -q "^ERROR: " "$W/pm.err" || fail "no ERROR: line"
	grep -q "not a shiftfs mark" "$W/pm.err" || fail "kernel's reason not shown"
}

refuses_wrong_hook_type_and_version() {
	[ -x "$HOOK" ] || skip "no hook at $HOOK"
	make_container
	hook stop && fail "ran as stop"
	grep -q "^ERROR: shiftfs hook: cannot run as a stop hook" "$W/err" || fail "no ERROR: for stop"
	hook mount && fail "ran as mount"
	env LXC_HOOK_VERSION=7 LXC_ROOTFS_PATH="dir:$C/rootfs" "$HOOK" c1 lxc pre-start \
		> "$W/out" 2> "$W/err" && fail "ran with hook version 7"
	cat "$W/err"
	grep -q "^ERROR: .*version 7" "$W/err" || fail "no ERROR: for version 7"
	# Version 0: NAME SECTION TYPE arguments.
	env -u LXC_HOOK_VERSION LXC_ROOTFS_PATH="dir:$C/rootfs" "$HOOK" c1 lxc stop \
		> "$W/out" 2> "$W/err" && fail "version 0 ran as stop"
	cat "$W/err"
	grep -q "^ERROR: shiftfs hook: cannot run as a stop hook" "$W/err" || fail "no ERROR: for version 0 stop"
	env LXC_HOOK_VERSION=0 "$HOOK" > "$W/out" 2> "$W/err" && fail "version 0 without arguments"
	grep -q "^ERROR: " "$W/err" || fail "no ERROR: without arguments"
	# Neither a directory nor an overlay rootfs.
	hook pre-start LXC_ROOTFS_PATH="loop:/srv/c1.img" && fail "shifted a loop rootfs"
	grep -q "^ERROR: .*only directory (dir:) and overlay" "$W/err" || fail "no ERROR: for loop"
	is_marked "$C/rootfs" && fail "marked anyway"
	# An overlay of several lower layers.
	hook pre-start LXC_ROOTFS_PATH="overlay:$C/rootfs:/a:/b" && fail "shifted two lower layers"
	grep -q "^ERROR: .*several lower layers" "$W/err" || fail "no ERROR: for two lower layers"
	is_marked "$C/rootfs" && fail "marked anyway"
	return 0
}

pre_start_needs_idmap() {
	[ -x "$HOOK" ] || skip "no hook at $HOOK"
	make_container
	grep -v idmap "$C/config" > "$C/config.priv"
	mv "$C/config.priv" "$C/config"
	hook pre-start && fail "marked a privileged container's rootfs"
	grep -q "^ERROR: .*lxc.idmap" "$W/err" || fail "no ERROR: about lxc.idmap"
	is_marked "$C/rootfs" && fail "marked anyway"
	return 0
}

# The state directory holds nothing but the lock and the private lxcpath.
state_clean() {
	left=$(find "$W/state" -mindepth 1 -maxdepth 1 ! -name lock \
		! -name lxcpath 2>/dev/null)
	[ -z "$left" ] || fail "left in the state directory: $left"
}
# mark_maps DIR: the mark's options on DIR ("mark,uidmap=...").
mark_maps() { mounted_type /proc/self/mountinfo "$1" | awk '{ print $2 }' | sed 's/^r[ow],//'; }
# err_has PATTERN WHAT: the hook said ERROR: ... PATTERN.
err_has() { grep -q "^ERROR: shiftfs hook: .*$1" "$W/err" || fail "no ERROR: $2"; }
# refused WHY PATTERN [VAR=VALUE...]: pre-start fails, saying PATTERN.
refused() {
	_why=$1 _pat=$2
	shift 2
	hook pre-start "$@" && fail "pre-start ran $_why"
	err_has "$_pat" "$_why"
}

what_lxc_passes_refusals() {
	[ -x "$HOOK" ] || skip "no hook at $HOOK"
	make_container
	refused "for no LXC_HOOK_TYPE" "LXC_HOOK_TYPE is not set" LXC_HOOK_TYPE=
	refused "for no LXC_ROOTFS_PATH" "LXC_ROOTFS_PATH is not set" LXC_ROOTFS_PATH=
	refused "for overlay:LOWER" "expected an overlay LOWER:UPPER" LXC_ROOTFS_PATH="overlay:$C/rootfs"
	# post-stop after such a start: nothing of ours to clean up
	for p in "loop:/srv/c1.img" "overlay:$C/rootfs:/a:/b" "overlay:$C/rootfs"; do
		hook post-stop LXC_ROOTFS_PATH="$p" || fail "post-stop of $p: exit $rc"
	done
	refused "for a missing shiftctl" "/nonexistent/shiftctl not found" SHIFTCTL=/nonexistent/shiftctl
	is_marked "$C/rootfs" && fail "marked anyway"
	state_clean
}

config_refusals() {
	[ -x "$HOOK" ] || skip "no hook at $HOOK"
	make_container
	refused "for no LXC_CONFIG_FILE" "LXC_CONFIG_FILE is not set" LXC_CONFIG_FILE=
	refused "for an unreadable config" "cannot read $W/no-such-config" LXC_CONFIG_FILE="$W/no-such-config"
	cp "$C/config" "$C/config.ok"
	echo "lxc.include = $W/no-such.conf" >> "$C/config"
	refused "for a missing include" "cannot read lxc.include = $W/no-such.conf"
	cp "$C/config.ok" "$C/config"
	echo "lxc.include = $C/config" >> "$C/config"
	refused "for an include loop" "nested too deep"
	grep -v '^lxc.idmap = g' "$C/config.ok" > "$C/config"
	refused "for no gid map" "no 'lxc.idmap = g"
	cp "$C/config.ok" "$C/config"
	echo "lxc.idmap = u 0 100000" >> "$C/config"
	refused "for a broken lxc.idmap" "lxc.idmap = u 0 100000: expected"
	cp "$C/config.ok" "$C/config"
	refused "for a missing rootfs" "rootfs $W/no-such-rootfs is not a directory" LXC_ROOTFS_PATH="dir:$W/no-such-rootfs"
	refused "for a missing LOWER" "lower layer $W/no-such-lower of c1's overlay rootfs is not a directory" LXC_ROOTFS_PATH="overlay:$W/no-such-lower:$W/upper"
	is_marked "$C/rootfs" && fail "marked anyway"
	state_clean
}

# lxc.idmap only in included files (a file, a directory's *.conf), an
# empty "lxc.idmap =" clearing what came before, as liblxc reads it.
idmap_from_includes() {
	[ -x "$HOOK" ] || skip "no hook at $HOOK"
	make_container
	mkdir -p "$C/conf.d"
	printf 'lxc.idmap = u 0 300000 65536\nlxc.idmap = g 0 300000 65536\n' > "$C/early.conf"
	echo "lxc.idmap = u 0 200000 65536" > "$C/conf.d/10-u.conf"
	echo "lxc.idmap = g 0 200000 65536" > "$C/conf.d/20-g.conf"
	echo "lxc.idmap = g 0 1 1" > "$C/conf.d/30-not-conf.txt"
	{
		grep -v idmap "$C/config"
		echo "lxc.include = $C/early.conf"
		echo "lxc.idmap ="
		echo "lxc.include = $C/conf.d"
	} > "$C/config.new"
	mv "$C/config.new" "$C/config"
	hook pre-start || fail "pre-start: exit $rc"
	[ "$(mark_maps "$C/rootfs")" = "mark,uidmap=0:200000:65536,gidmap=0:200000:65536" ] ||
		fail "marked with '$(mark_maps "$C/rootfs")'"
	hook post-stop || fail "post-stop: exit $rc"
	is_marked "$C/rootfs" && fail "post-stop left the mark"
	state_clean
}

# With lxc-info installed, liblxc's answer is what counts.
lxc_info_answer() {
	[ -x "$HOOK" ] || skip "no hook at $HOOK"
	make_container
	mkdir -p "$W/bin"
	printf '#!/bin/sh\necho "$*" > %s/lxc-info.args\nprintf "u 0 200000 65536\\ng 0 200000 65536\\n"\n' "$W" > "$W/bin/lxc-info"
	chmod 755 "$W/bin/lxc-info"
	hook pre-start PATH="$W/bin:$PATH" || fail "pre-start: exit $rc"
	grep -q -- "-P $W/state/lxcpath -n c1 --rcfile $C/config -c lxc.idmap -H" "$W/lxc-info.args" ||
		fail "lxc-info asked: $(cat "$W/lxc-info.args")"
	[ "$(mark_maps "$C/rootfs")" = "mark,uidmap=0:200000:65536,gidmap=0:200000:65536" ] ||
		fail "marked with '$(mark_maps "$C/rootfs")', not lxc-info's maps"
	hook post-stop || fail "post-stop: exit $rc"
	printf '#!/bin/sh\necho "c1: bad config" >&2\nexit 1\n' > "$W/bin/lxc-info"
	refused "for lxc-info's failure" "lxc-info cannot read c1's lxc.idmap from $C/config: c1: bad config" PATH="$W/bin:$PATH"
	is_marked "$C/rootfs" && fail "marked anyway"
	state_clean
}

# c2, same rootfs, other maps: refused while c1's start lives.
second_container_other_maps() {
	[ -x "$HOOK" ] || skip "no hook at $HOOK"
	make_container
	sed 's/ 100000 65536$/ 200000 65536/' "$C/config" > "$C/config2"
	hook pre-start || fail "pre-start: exit $rc"
	refused "naming c1" "is in use by c1 (uids 0:100000:65536, gids 0:100000:65536), c2 wants other maps" LXC_NAME=c2 LXC_CONFIG_FILE="$C/config2"
	[ "$(mark_maps "$C/rootfs")" = "mark,uidmap=0:100000:65536,gidmap=0:100000:65536" ] ||
		fail "c1's mark changed: '$(mark_maps "$C/rootfs")'"
	# the same maps share the mark; the last start to need it drops it
	cp "$C/config" "$C/config3"
	hook pre-start LXC_NAME=c3 LXC_CONFIG_FILE="$C/config3" || fail "c3 (same maps): exit $rc"
	grep -q "sharing the mark" "$W/err" || fail "c3 did not share the mark"
	hook post-stop || fail "post-stop of c1: exit $rc"
	grep -q "stays marked for c3" "$W/err" || fail "c1's post-stop did not keep c3's mark"
	is_marked "$C/rootfs" || fail "c1's post-stop dropped c3's mark"
	hook post-stop LXC_NAME=c3 LXC_CONFIG_FILE="$C/config3" || fail "post-stop of c3: exit $rc"
	is_marked "$C/rootfs" && fail "mark left after both stopped"
	state_clean
}

# A mark that no record of the hook explains is refused, and kept.
foreign_mark_refused() {
	[ -x "$HOOK" ] || skip "no hook at $HOOK"
	make_container
	shiftctl mark -u 0:300000:65536 -g 0:300000:65536 "$C/rootfs" || fail "shiftctl mark"
	refused "for a foreign mark" "carries a shiftfs mark (uids 0:300000:65536, gids 0:300000:65536) that no container started by this hook holds.*unmark $C/rootfs"
	[ "$(mark_maps "$C/rootfs")" = "mark,uidmap=0:300000:65536,gidmap=0:300000:65536" ] ||
		fail "the foreign mark changed"
	shiftctl unmark "$C/rootfs"
	state_clean
}

# A start whose liblxc process died (no hook ran after pre-start): the
# next pre-start, of another container with other maps, replaces it.
stale_mark_replaced() {
	[ -x "$HOOK" ] || skip "no hook at $HOOK"
	make_container
	sed 's/ 100000 65536$/ 200000 65536/' "$C/config" > "$C/config2"
	# run by a process that exits right after (the "monitor")
	bash -c 'env "$@"; exit $?' _ LXC_HOOK_VERSION=1 LXC_HOOK_TYPE=pre-start \
		LXC_NAME=c1 LXC_CONFIG_FILE="$C/config" LXC_ROOTFS_PATH="dir:$C/rootfs" \
		SHIFTFS_LXC_STATE="$W/state" "$HOOK" 2> "$W/err" || fail "first pre-start"
	is_marked "$C/rootfs" || fail "not marked"
	hook pre-start LXC_NAME=c2 LXC_CONFIG_FILE="$C/config2" || fail "c2's pre-start: exit $rc"
	grep -q "dropped the stale mark" "$W/err" || fail "no word of the stale mark"
	[ "$(mark_maps "$C/rootfs")" = "mark,uidmap=0:200000:65536,gidmap=0:200000:65536" ] ||
		fail "marked with '$(mark_maps "$C/rootfs")'"
	hook post-stop LXC_NAME=c2 LXC_CONFIG_FILE="$C/config2" || fail "post-stop: exit $rc"
	is_marked "$C/rootfs" && fail "mark left"
	state_clean
}

# post-stop drops the mark of a start that failed before start-host,
# and nothing after one that got there.
post_stop_after_failed_start() {
	[ -x "$HOOK" ] || skip "no hook at $HOOK"
	make_container
	hook pre-start || fail "pre-start: exit $rc"
	hook post-stop || fail "post-stop: exit $rc"
	grep -q "start failed: dropped the mark" "$W/err" || fail "post-stop said nothing"
	is_marked "$C/rootfs" && fail "post-stop left the mark"
	state_clean
	# post-stop of a start that never ran pre-start: nothing to do
	hook post-stop || fail "second post-stop: exit $rc"
	state_clean
}

start_host_refusals() {
	[ -x "$HOOK" ] || skip "no hook at $HOOK"
	make_container
	hook start-host && fail "start-host without LXC_PID"
	err_has "LXC_PID is not set" "for no LXC_PID"
	hook start-host LXC_PID=999999999 && fail "start-host with no such process"
	err_has "no process 999999999" "for a missing process"
	hook start-host LXC_PID=$$ && fail "start-host without a record"
	err_has "no record of c1's pre-start" "for no record"
	state_clean
}

# An overlay rootfs: LOWER is shifted through a private bind of it under
# the state directory, marked there, never on LOWER itself.
overlay_lower_layer() {
	[ -x "$HOOK" ] || skip "no hook at $HOOK"
	make_container
	mkdir -p "$C/delta"
	ov="overlay:$C/rootfs:$C/delta"
	hook pre-start LXC_ROOTFS_PATH="$ov" || fail "pre-start: exit $rc"
	lower=$(ls -d "$W/state/"*.lower 2>/dev/null)
	[ -n "$lower" ] || fail "no bind of LOWER in the state directory"
	is_marked "$lower" || fail "the bind of LOWER is not marked"
	is_marked "$C/rootfs" && fail "LOWER itself was marked"
	start_container "0 100000 65536" "$ov"
	[ "$(cat "$W/pm.rc")" = 0 ] || fail "pre-mount: exit $(cat "$W/pm.rc")"
	[ "$(nsenter -t "$KID" -U -m -- stat -c %u:%g "$C/rootfs/etc/hostname")" = 0:0 ] ||
		fail "LOWER not shifted in the container's namespace"
	hook start-host LXC_ROOTFS_PATH="$ov" LXC_PID="$KID" || fail "start-host: exit $rc"
	[ -e "$lower" ] && fail "start-host left $lower"
	grep -q " $W/state/" /proc/self/mountinfo && fail "start-host left a mount in the state directory"
	# a failed start: post-stop drops the bind and its mark
	hook pre-start LXC_ROOTFS_PATH="$ov" || fail "second pre-start: exit $rc"
	hook post-stop LXC_ROOTFS_PATH="$ov" || fail "post-stop: exit $rc"
	[ -e "$lower" ] && fail "post-stop left $lower"
	state_clean
}

# A rootfs whose path holds a newline (and a blank): marked, shifted and
# unmarked all the same (mountinfo escapes it; libmount reads it right).
newline_in_rootfs_path() {
	[ -x "$HOOK" ] || skip "no hook at $HOOK"
	make_container_at "$W/new
line c1"
	hook pre-start || fail "pre-start: exit $rc"
	is_marked "$C/rootfs" || fail "rootfs not marked after pre-start"
	start_container
	[ "$(cat "$W/pm.rc")" = 0 ] || fail "pre-mount: exit $(cat "$W/pm.rc")"
	hook start-host LXC_PID="$KID" || fail "start-host: exit $rc"
	is_marked "$C/rootfs" && fail "host mark still there after start-host"
	[ "$(P="$C/rootfs" nsenter -t "$KID" -U -m -- sh -c 'stat -c %u:%g "$P"')" = 0:0 ] ||
		fail "the container does not own its rootfs"
	hook post-stop || fail "post-stop: exit $rc"
	state_clean
}

t container_start_shifts_rootfs
t start_host_refuses_other_maps
t pre_mount_without_mark_fails
t refuses_wrong_hook_type_and_version
t pre_start_needs_idmap
t what_lxc_passes_refusals
t config_refusals
t idmap_from_includes
t lxc_info_answer
t second_container_other_maps
t foreign_mark_refused
t stale_mark_replaced
t post_stop_after_failed_start
t start_host_refusals
t overlay_lower_layer
t newline_in_rootfs_path

tap_done
