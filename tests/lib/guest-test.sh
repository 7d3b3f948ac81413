# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# What the guest suite's shell tests share (tests/guest/*.sh: shiftctl's
# and the LXC hook's, their attacks), sourced after tap.sh:
#
#   . "$lib/tap.sh"; . "$lib/guest-test.sh"; guest_test_init NAME [tmpfs]
#
# Every test runs in a subshell in its own directory $W under $ROOT
# (/tmp/NAME.XXXXXX; with "tmpfs", a tmpfs mounted there and made
# rshared, as on a systemd host) and fails at its first failed check;
# "t NAME" runs one and prints its TAP line, then kills the pids listed in
# $W/kids and unmounts what the test left under $W.  At exit, the pids in
# $KIDS are killed, what is mounted under $ROOT is unmounted and $ROOT
# removed; a test file with more to undo defines cleanup_more.
# POSIX sh: shiftctl's tests run under busybox ash.

guest_test_init() {
	ROOT=$(mktemp -d "/tmp/$1.XXXXXX")
	# user namespaces' roots (host uid 0 unmapped) must be able to walk in
	chmod 755 "$ROOT"
	if [ "${2:-}" = tmpfs ]; then
		mount -t tmpfs -o mode=0755 "$1" "$ROOT"
		mount --make-rshared "$ROOT"
	fi
	KIDS=
	trap cleanup_all EXIT
	tap_start
}

# umount_under DIR: everything mounted at or below DIR, deepest first.
umount_under() {
	grep -E " $1(/| )" /proc/self/mountinfo | awk '{ print $5 }' | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
}

cleanup_all() {
	for k in $KIDS; do kill "$k" 2>/dev/null; done
	umount_under "$ROOT"
	rm -rf "$ROOT"
	if command -v cleanup_more > /dev/null; then
		cleanup_more
	fi
}

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*"; exit 77; }

# sc WANT_RC ARGS...: run shiftctl ($SC, at most 60 s), its stdout and
# stderr kept in $W/out and $W/err and shown.
sc() {
	want=$1
	shift
	echo "\$ shiftctl $*"
	timeout 60 "$SC" "$@" > "$W/out" 2> "$W/err"
	rc=$?
	sed 's/^/  out: /' "$W/out"
	sed 's/^/  err: /' "$W/err"
	[ "$rc" -eq 124 ] && fail "shiftctl $1 hung"
	[ "$rc" -eq "$want" ] || fail "shiftctl $1: exit $rc, want $want"
}

# has out|err TEXT: the last command's output holds TEXT.
has() { grep -qF -- "$2" "$W/$1" || fail "$1 lacks: $2"; }

# The mount table is as it was when the test started (no mount left).
snapshot_mounts() { awk '{ print $5 }' /proc/self/mountinfo | sort > "$W/mounts.before"; }
same_mounts() {
	awk '{ print $5 }' /proc/self/mountinfo | sort > "$W/mounts.after"
	cmp -s "$W/mounts.before" "$W/mounts.after" ||
		fail "mount table changed: $(diff "$W/mounts.before" "$W/mounts.after" | grep '^[+-]/' | tr '\n' ' ')"
}

# Loop devices backed by FILE (an absolute path).
loops_of() {
	for b in /sys/block/loop*/loop/backing_file; do
		[ -f "$b" ] || continue
		[ "$(cat "$b")" = "$1" ] && echo "${b%/loop/backing_file}"
	done
}

# No loop device for FILE, waiting a little for autoclear.
no_loop() {
	n=0
	while [ -n "$(loops_of "$1")" ]; do
		n=$((n + 1))
		[ $n -gt 30 ] && fail "loop device still bound to $1: $(loops_of "$1")"
		sleep 0.1
	done
}

# userns_child [mntns] [MAP]: a process in a user namespace of its own
# (and a mount namespace, private, with "mntns": an unprivileged
# container sharing the host's root directory), its uid_map and gid_map
# MAP (lines, with \n; default the build map 0 100000 1000, 1000 1000 1,
# 65534 101000 1) written from here; prints its pid.
userns_child() {
	if [ "${1:-}" = mntns ]; then
		unshare --user --mount --propagation private sleep 600 > /dev/null 2>&1 &
	else
		unshare --user sleep 600 > /dev/null 2>&1 &
	fi
	kid=$!
	n=0
	while [ "$(readlink /proc/$kid/ns/user)" = "$(readlink /proc/self/ns/user)" ]; do
		n=$((n + 1))
		[ $n -gt 100 ] && fail "child never entered a user namespace"
		sleep 0.05
	done
	map=${2:-'0 100000 1000\n1000 1000 1\n65534 101000 1\n'}
	printf %b "$map" > /proc/$kid/uid_map || fail "cannot write uid_map $map"
	printf %b "$map" > /proc/$kid/gid_map || fail "cannot write gid_map $map"
	echo "$kid"
}

# in_ns PID CMD: CMD in PID's mount namespace, as host root.
in_ns() { nsenter -t "$1" -m sh -c "$2"; }
# as_ns_root PID CMD: CMD as root of PID's user namespace, in its mounts.
as_ns_root() { nsenter -t "$1" -U -m sh -c "$2"; }

# t NAME: run test NAME in a fresh $W; whatever it left mounted there is
# unmounted, so that the next one starts clean.
t() {
	name=$1
	W=$ROOT/$((TAP_N + 1))
	mkdir -p "$W"
	( set -u; snapshot_mounts; "$name" ) > "$W/log" 2>&1
	tap_result $? "$name" "$W/log"
	# (a test's background processes it could not wait for: $W/kids)
	for k in $(cat "$W/kids" 2>/dev/null); do kill "$k" 2>/dev/null; done
	umount_under "$W"
}

# ---- the LXC hook's tests ($HOOK: the hook) --------------------------------

# make_container_at DIR: a container C in DIR: a config with idmap
# lines, and a root-owned directory rootfs; make_container: in $W/c1.
make_container() { make_container_at "$W/c1"; }
make_container_at() {
	C=$1
	mkdir -p "$C/rootfs/bin" "$C/rootfs/etc" "$C/rootfs/home/user"
	echo c1 > "$C/rootfs/etc/hostname"
	: > "$C/rootfs/bin/init"
	chmod 755 "$C/rootfs/bin/init"
	chown 1000:1000 "$C/rootfs/home/user"
	cat > "$C/config" <<-EOT
	lxc.uts.name = c1
	lxc.rootfs.path = dir:$C/rootfs
	lxc.idmap = u 0 100000 65536
	lxc.idmap = g 0 100000 65536
	EOT
}

# hook TYPE [VAR=VALUE...]: run the hook on C with the variables LXC 5.0
# gives a version 1 hook, its state in $HOOK_STATE (default $W/state);
# its output in $W/out and $W/err, and shown.
hook() {
	type=$1
	shift
	env LXC_HOOK_VERSION=1 LXC_HOOK_TYPE="$type" LXC_HOOK_SECTION=lxc \
		LXC_NAME=c1 LXC_CONFIG_FILE="$C/config" \
		LXC_ROOTFS_PATH="dir:$C/rootfs" \
		LXC_ROOTFS_MOUNT=/usr/lib/x86_64-linux-gnu/lxc \
		SHIFTFS_LXC_STATE="${HOOK_STATE:-$W/state}" "$@" \
		"$HOOK" > "$W/out" 2> "$W/err"
	rc=$?
	sed 's/^/  out: /' "$W/out"
	sed 's/^/  err: /' "$W/err"
	return $rc
}
