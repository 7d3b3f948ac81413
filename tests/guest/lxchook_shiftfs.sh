#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest tests of the LXC hook (lxc-hook/shiftfs), driven with the
# environment LXC 5.0 gives hooks (version 1): pre-start as host root
# marks the rootfs; pre-mount, run inside a new user namespace (0 ->
# 100000, 65536 ids, written by us as newuidmap would) and mount namespace
# as namespace root, shift-mounts it from the mark; start-host checks the
# container's maps and drops the host's mark, the container keeping its
# mount.  Plus the refusals: wrong hook type, unknown version, no idmap,
# maps that differ from the mark's.  TAP output.
set -u

HOOK=${LXC_SHIFTFS_HOOK:-/usr/share/lxc/hooks/shiftfs}
KIDS=

# tests/lib/tap.sh: beside this program in the guest (/tests/lib), one
# directory up in the source tree.
tap_sh=$(dirname "$0")/lib/tap.sh
[ -f "$tap_sh" ] || tap_sh=$(dirname "$0")/../lib/tap.sh
# shellcheck source=../lib/tap.sh
. "$tap_sh"
tap_start

ROOT=$(mktemp -d /tmp/lxchook-test.XXXXXX)
# A shared mount, as on a systemd host: the container's copy is a slave.
mount -t tmpfs -o mode=0755 lxchook "$ROOT"
mount --make-rshared "$ROOT"

cleanup_all() {
	for k in $KIDS; do kill "$k" 2>/dev/null; done
	grep " $ROOT" /proc/self/mountinfo | awk '{ print $5 }' | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
	rm -rf "$ROOT"
}
trap cleanup_all EXIT

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*"; exit 77; }

mounted_type() {
	awk -v m="$2" '$5 == m { for (i = 7; $i != "-"; i++); t = $(i + 1); o = $(i + 3) } END { print t " " o }' "$1"
}
is_marked() { case "$(mounted_type /proc/self/mountinfo "$1")" in shiftfs*mark*) return 0 ;; esac; return 1; }

# A container: config with idmap lines, a root-owned directory rootfs.
make_container() {
	C=$W/c1
	mkdir -p "$C/rootfs/bin" "$C/rootfs/etc" "$C/rootfs/home/user"
	echo c1 > "$C/rootfs/etc/hostname"
	: > "$C/rootfs/bin/init"
	chmod 755 "$C/rootfs/bin/init"
	chown 1000:1000 "$C/rootfs/home/user"
	cat > "$C/config" <<-EOF
	lxc.uts.name = c1
	lxc.rootfs.path = dir:$C/rootfs
	lxc.idmap = u 0 100000 65536
	lxc.idmap = g 0 100000 65536
	EOF
}

# hook TYPE [VAR=VALUE...]: run the hook with version 1 variables.
hook() {
	type=$1
	shift
	env LXC_HOOK_VERSION=1 LXC_HOOK_TYPE="$type" LXC_HOOK_SECTION=lxc \
		LXC_NAME=c1 LXC_CONFIG_FILE="$C/config" \
		LXC_ROOTFS_PATH="dir:$C/rootfs" \
		LXC_ROOTFS_MOUNT=/usr/lib/x86_64-linux-gnu/lxc "$@" \
		"$HOOK" > "$W/out" 2> "$W/err"
	rc=$?
	sed 's/^/  out: /' "$W/out"
	sed 's/^/  err: /' "$W/err"
	return $rc
}

# Start the "container": a process in new user and mount namespaces
# (slave propagation, as LXC sets it), its maps written by us as
# newuidmap would; then run the pre-mount hook in its namespaces as their
# root (nsenter -U makes us uid 0 there, as LXC's child is).  Sets KID.
start_container() {
	map=${1:-0 100000 65536}
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
		LXC_ROOTFS_PATH="dir:$C/rootfs" \
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

t() {
	name=$1
	W=$ROOT/$((TAP_N + 1))
	mkdir -p "$W"
	( set -u; "$name" ) > "$W/log" 2>&1
	tap_result $? "$name" "$W/log"
	for k in $(cat "$W/kids" 2>/dev/null); do kill "$k" 2>/dev/null; done
	grep " $W/" /proc/self/mountinfo | awk '{ print $5 }' | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
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

t container_start_shifts_rootfs
t start_host_refuses_other_maps
t pre_mount_without_mark_fails
t refuses_wrong_hook_type_and_version
t pre_start_needs_idmap

tap_done
