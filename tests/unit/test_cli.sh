#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Host tests of the shiftctl command line: usage, exit codes, messages,
# map derivation from real processes, JSON validity.  Nothing here mounts
# anything or needs the shiftfs module; the few checks that need root
# (writing another process's uid_map) are skipped without it.
#
#   tests/unit/test_cli.sh path/to/shiftctl
set -u
sc=${1:?usage: test_cli.sh SHIFTCTL}
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
num=0
passed=0
failed=0
skipped=0
kids=""
trap 'for k in $kids; do kill "$k" 2>/dev/null; done; rm -rf "$tmp"' EXIT

ok() { num=$((num + 1)); passed=$((passed + 1)); echo "ok $num - $1"; }
not_ok() {
	num=$((num + 1)); failed=$((failed + 1)); echo "not ok $num - $1"
	sed 's/^/# /' "$tmp/stdout" "$tmp/stderr" 2>/dev/null
}
skip() { num=$((num + 1)); skipped=$((skipped + 1)); echo "ok $num - $1 # SKIP $2"; }

# run: shiftctl with the given arguments, stdout/stderr/exit kept.
run() { "$sc" "$@" >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?; }

# expect NAME RC [stdout|stderr PATTERN]...
expect() {
	name=$1 want=$2
	shift 2
	if [ "$rc" -ne "$want" ]; then
		echo "# exit $rc, want $want" >"$tmp/why"
		not_ok "$name"; cat "$tmp/why"
		return
	fi
	while [ $# -ge 2 ]; do
		if ! grep -qF -- "$2" "$tmp/$1"; then
			not_ok "$name"; echo "# $1 lacks: $2"
			return
		fi
		shift 2
	done
	ok "$name"
}

json_ok() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; }

# -- usage -----------------------------------------------------------------
run --help
expect "--help exits 0, util-linux form" 0 stdout "Usage:" stdout "-h, --help" \
	stdout "-V, --version" stdout "see shiftctl(8)"
run -V
expect "--version prints VERSION" 0 stdout "shiftctl $(cat "$top/VERSION")"
for c in mount umount attach detach maps mark unmark lxc-hook list check; do
	run "$c" --help
	expect "$c --help" 0 stdout "shiftctl $c" stdout "--help" stdout "see shiftctl(8)"
done
run
expect "no command: exit 2" 2 stderr "no command given" stderr "shiftctl --help"
run frobnicate
expect "unknown command: exit 2, named" 2 stderr "unknown command 'frobnicate'"
run --bogus
expect "unknown global option: exit 2" 2 stderr "shiftctl --help"
run mount --bogus a b
expect "unknown mount option: exit 2" 2 stderr "shiftctl mount --help"
run mount -z a b
expect "getopt names the command" 2 stderr "shiftctl mount: invalid option -- 'z'" \
	stderr "Try 'shiftctl mount --help' for more information."
run list --frob
expect "getopt names the command (long option)" 2 stderr "shiftctl list: unrecognized option '--frob'"
cp "$sc" "$tmp/sc-renamed"
"$tmp/sc-renamed" mount /a >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
expect "messages say shiftctl whatever the binary is called" 2 \
	stderr "shiftctl mount: expected SRC and DST"
# lxc-hook: what LXC passes is checked before anything is touched; the
# wrapper LXC runs (lxc-hook/shiftfs) execs it, $SHIFTCTL honoured.
env -u LXC_HOOK_VERSION -u LXC_HOOK_TYPE "$sc" lxc-hook >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
expect "lxc-hook without LXC's arguments: exit 1" 1 \
	stderr "ERROR: shiftfs hook: hook version 0 expects NAME SECTION TYPE arguments"
LXC_HOOK_VERSION=1 LXC_HOOK_TYPE=stop "$sc" lxc-hook >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
expect "lxc-hook as a stop hook: exit 1" 1 \
	stderr "ERROR: shiftfs hook: cannot run as a stop hook (only pre-start, pre-mount, start-host and post-stop)"
LXC_HOOK_VERSION=1 LXC_HOOK_TYPE=post-stop LXC_ROOTFS_PATH=loop:/x.img "$sc" lxc-hook \
	>"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
expect "lxc-hook post-stop of a rootfs it never shifts: exit 0" 0
env -u LXC_HOOK_VERSION SHIFTCTL="$sc" sh "$top/lxc-hook/shiftfs" c1 lxc stop \
	>"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
expect "lxc-hook/shiftfs runs \$SHIFTCTL lxc-hook" 1 \
	stderr "ERROR: shiftfs hook: cannot run as a stop hook"
SHIFTCTL=/nonexistent/shiftctl sh "$top/lxc-hook/shiftfs" c1 lxc pre-start \
	>"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
expect "lxc-hook/shiftfs without shiftctl: exit 1, said" 1 \
	stderr "ERROR: shiftfs hook: /nonexistent/shiftctl not found (install shiftctl)"

run mount --help
expect "mount --help: --suid and the nosuid default explained" 0 \
	stdout "--suid" stdout "nodev and nosuid" stdout "never with a map that hands out ids"
run attach --help
expect "attach --help: --suid" 0 stdout "--suid"
run mount /a
expect "mount with one operand: exit 2" 2 stderr "shiftctl mount: expected SRC and DST"
run mount /a /b
expect "mount without maps: exit 2" 2 stderr "no maps"

# -- map options ---------------------------------------------------------
run mount --uidmap 0:100000 /a /b
expect "--uidmap too few fields" 2 stderr "uidmap '0:100000': too few fields"
run mount --gidmap 0:x:1 /a /b
expect "--gidmap non-numeric" 2 stderr "gidmap '0:x:1': TO 'x' is not a number"
run mount -u 0:-1:5 /a /b
expect "--uidmap negative" 2 stderr "TO '-1' is negative"
run mount -u 0:4294967296:1 /a /b
expect "--uidmap overflow" 2 stderr "is larger than 4294967295"
run mount -u 0:100000:0 /a /b
expect "--uidmap count 0" 2 stderr "COUNT is 0"
run mount -u 0:100000:1000 -u 500:300000:10 /a /b
expect "overlapping --uidmap" 2 stderr "uidmap 500:300000:10 overlaps 0:100000:1000"
set --
i=0
while [ $i -lt 341 ]; do set -- "$@" -u "$((i * 2)):$((100000 + i * 2)):1"; i=$((i + 1)); done
run mount "$@" /a /b
expect "341 --uidmap extents" 2 stderr "more than 340 extents"
run mount --pid 1 --container c /a /b
expect "--pid with --container: exit 2" 2 stderr "mutually exclusive"
run mount --pid 1 -u 0:1:1 /a /b
expect "--pid with --uidmap: exit 2" 2 stderr "do not combine"
run mount --pid abc /a /b
expect "--pid not a number: exit 2" 2 stderr "--pid 'abc': not a pid"
run attach c
expect "attach with one operand: exit 2" 2 stderr "expected CONTAINER and IMAGE"
run attach --path rel 1 /img
expect "attach --path relative: exit 2" 2 stderr "not absolute"

# -- privileges (checked before anything is touched) ---------------------
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$sc" mount -u 0:100000:65536 /nonexistent /nonexistent2 >"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
	expect "mount without CAP_SYS_ADMIN says so" 1 stderr "shiftctl mount: needs CAP_SYS_ADMIN"
elif [ "$(id -u)" != 0 ]; then
	run mount -u 0:100000:65536 /nonexistent /nonexistent2
	expect "mount without CAP_SYS_ADMIN says so" 1 stderr "shiftctl mount: needs CAP_SYS_ADMIN"
else
	skip "mount without CAP_SYS_ADMIN says so" "no setpriv"
fi

# -- maps ----------------------------------------------------------------
run maps $$
expect "maps of a process outside user namespaces is refused" 1 \
	stderr "pid $$ is not in a user namespace" stderr "--allow-identity"
run maps --allow-identity $$
expect "maps --allow-identity prints the identity" 0 \
	stdout "uidmap=0:0:4294967295,gidmap=0:0:4294967295"
run maps 999999999
expect "maps of a pid out of range" 1 stderr "pid 999999999"
run maps no-such-container-here
if command -v lxc-info >/dev/null; then
	expect "maps of an unknown container" 1 stderr "no-such-container-here"
else
	expect "maps of a container without LXC" 1 stderr "lxc-info not found"
fi

# LXC names through a stand-in lxc-info: running, stopped, unknown.
mkdir "$tmp/bin"
{
	echo '#!/bin/sh'
	echo '# lxc-info -n NAME -p -H'
	echo 'case "$2" in'
	echo "running) echo $$ ;;"
	echo 'stopped) ;;'
	echo 'garbage) echo "Pid: many" ;;'
	echo '*) echo "$2 does not exist" >&2; exit 1 ;;'
	echo 'esac'
} > "$tmp/bin/lxc-info"
chmod +x "$tmp/bin/lxc-info"
PATH=$tmp/bin:$PATH run maps --allow-identity running
expect "maps of a running LXC container (via lxc-info)" 0 stdout "uidmap=0:0:4294967295"
PATH=$tmp/bin:$PATH run maps stopped
expect "maps of a stopped LXC container" 1 stderr "container stopped is not running"
PATH=$tmp/bin:$PATH run maps ghost
expect "maps of an unknown LXC container" 1 stderr "unknown container ghost (lxc-info: ghost does not exist)"
PATH=$tmp/bin:$PATH run maps garbage
expect "lxc-info answering garbage" 1 stderr "unexpected answer from lxc-info: 'Pid: many'"

# A process in its own user namespace, its maps written by us (root).
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	unshare --user sleep 60 &
	kid=$!
	kids="$kids $kid"
	n=0
	while [ "$(readlink /proc/$kid/ns/user)" = "$(readlink /proc/self/ns/user)" ] && [ $n -lt 100 ]; do
		sleep 0.05; n=$((n + 1))
	done
	printf '0 100000 1000\n1000 1000 1\n65534 101000 1\n' >/proc/$kid/uid_map
	printf '0 200000 65536\n' >/proc/$kid/gid_map
	run maps $kid
	expect "maps of a 3-extent user namespace" 0 stdout \
		"uidmap=0:100000:1000,uidmap=1000:1000:1,uidmap=65534:101000:1,gidmap=0:200000:65536"
	run maps --json $kid
	if [ $rc -eq 0 ] && json_ok "$tmp/stdout" && grep -qF '"uidmap":[{"from":0,"to":100000,"count":1000},' "$tmp/stdout"; then
		ok "maps --json is valid JSON with the extents"
	else
		not_ok "maps --json is valid JSON with the extents"
	fi
	unshare --user sleep 60 &
	kid2=$!
	kids="$kids $kid2"
	n=0
	while [ "$(readlink /proc/$kid2/ns/user)" = "$(readlink /proc/self/ns/user)" ] && [ $n -lt 100 ]; do
		sleep 0.05; n=$((n + 1))
	done
	run maps $kid2
	expect "maps of a user namespace with no map yet" 1 stderr "uid_map is empty"
else
	skip "maps of a 3-extent user namespace" "needs root to write uid_map"
	skip "maps --json is valid JSON with the extents" "needs root"
	skip "maps of a user namespace with no map yet" "needs root"
fi

# -- list, check, mark -----------------------------------------------------
run list --json
if [ $rc -eq 0 ] && json_ok "$tmp/stdout"; then ok "list --json is valid JSON"; else not_ok "list --json is valid JSON"; fi
run list extra
expect "list takes no operands" 2 stderr "takes no arguments"
run list --help
expect "list --help lists the output columns" 0 stdout "Available output columns:" \
	stdout "NOSUID" stdout "--output LIST" stdout "--raw" stdout "--noheadings"
run list --output TARGET,BOGUS
expect "list --output with an unknown column: exit 2" 2 stderr "unknown column: 'BOGUS'"
run list --json --raw
expect "list --json --raw: exit 2" 2 stderr "mutually exclusive"

# list over a mount table of our own (SHIFTCTL_MOUNTINFO): a plain mount,
# a mark, an image on a loop device, a target that is not UTF-8, a tmpfs.
{
	printf '%s\n' '30 25 0:40 / /mnt/a rw,nosuid,nodev,relatime shared:1 - shiftfs /srv/a rw,uidmap=0:100000:65536,gidmap=0:100000:65536'
	printf '%s\n' '31 25 0:41 / /srv/rootfs rw,relatime - shiftfs /srv/rootfs rw,mark,uidmap=0:100000:65536,gidmap=0:100000:65536'
	printf '%s\n' '32 25 0:42 / /mnt/b\040c ro,nosuid,nodev,noexec,relatime - shiftfs /run/shiftctl-loop7.AbCdEf ro,uidmap=0:100000:1000,uidmap=1000:1000:1,gidmap=0:100000:65536'
	printf '%s\n' '33 25 0:43 / /mnt/\377bad rw - shiftfs /x rw,uidmap=0:1:1,gidmap=0:1:1'
	printf '%s\n' '34 25 0:44 / /tmp rw - tmpfs tmpfs rw'
} > "$tmp/mountinfo"
printf 'jejb:100000:65536\n' > "$tmp/subuid"
lrun() { SHIFTCTL_MOUNTINFO=$tmp/mountinfo SHIFTCTL_SUBUID=$tmp/subuid run "$@"; }
lrun list
if [ $rc -eq 0 ] && [ "$(head -n 1 "$tmp/stdout" | tr -s ' ')" = "TARGET SOURCE MODE USER NOSUID MAPS" ] &&
   grep -qE '^/mnt/a +/srv/a +rw +1 uidmap=0:100000:65536,gidmap=0:100000:65536$' "$tmp/stdout" &&
   grep -qE '^/srv/rootfs +/srv/rootfs +mark +jejb +0 ' "$tmp/stdout" &&
   grep -qE '^/mnt/b c +/dev/loop7 +ro +1 uidmap=0:100000:1000,uidmap=1000:1000:1,' "$tmp/stdout" &&
   ! grep -q tmpfs "$tmp/stdout" && [ "$(wc -l < "$tmp/stdout")" -eq 5 ]; then
	ok "list: a table of the shiftfs mounts with NOSUID, and whom the mark serves"
else
	not_ok "list: a table of the shiftfs mounts with NOSUID, and whom the mark serves"
fi
lrun list --raw --noheadings --output target,nosuid,nodev,noexec,mode
if [ $rc -eq 0 ] && [ "$(sed -n 1p "$tmp/stdout")" = "/mnt/a 1 1 0 rw" ] &&
   [ "$(sed -n 3p "$tmp/stdout")" = '/mnt/b\x20c 1 1 1 ro' ] && [ "$(wc -l < "$tmp/stdout")" -eq 4 ]; then
	ok "list --raw --noheadings --output"
else
	not_ok "list --raw --noheadings --output"
fi
lrun list --output +UIDMAP -n
expect "list --output +COL adds to the defaults" 0 stdout "0:100000:1000,1000:1000:1"
lrun list --json
if [ $rc -eq 0 ] && python3 - "$tmp/stdout" <<'PY'
import json, sys
fs = json.load(open(sys.argv[1]))["filesystems"]
assert len(fs) == 4, fs
a, mark, img, bad = fs
assert a["target"] == "/mnt/a" and a["source"] == "/srv/a", a
assert a["nosuid"] is True and a["nodev"] is True and a["noexec"] is False, a
assert a["ro"] is False and a["mark"] is False and a["device"] is None, a
assert a["maps"] == "uidmap=0:100000:65536,gidmap=0:100000:65536", a
assert mark["mark"] is True and mark["nosuid"] is False, mark
assert mark["user"] == "jejb" and a["user"] is None, mark
assert img["device"] == "/dev/loop7" and img["ro"] is True and img["noexec"] is True, img
assert img["uidmap"] == ["0:100000:1000", "1000:1000:1"], img
assert img["gidmap"] == ["0:100000:65536"], img
assert bad["target"] == "/mnt/\ufffdbad", bad
PY
then
	ok "list --json: keys, booleans, extent arrays, valid UTF-8"
else
	not_ok "list --json: keys, booleans, extent arrays, valid UTF-8"
fi
run check --json
if json_ok "$tmp/stdout" && grep -q '"usable":' "$tmp/stdout"; then ok "check --json is valid JSON"; else not_ok "check --json is valid JSON"; fi
run check
if grep -qE '^mount-api +(ok|missing) ' "$tmp/stdout" && grep -q '^shiftfs is ' "$tmp/stdout" &&
   { [ $rc -eq 0 ] || [ $rc -eq 1 ]; }; then
	ok "check prints one line per feature, exit 0/1"
else
	not_ok "check prints one line per feature, exit 0/1"
fi
run mark /tmp
expect "mark without maps is refused (a mark names the maps it allows)" 2 \
	stderr "a mark needs the maps it allows"
run mark -u 0:100000:65536 /tmp/x /tmp/y
expect "mark takes one DIR" 2 stderr "shiftctl mark --help"
if [ "$(id -u)" = 0 ]; then
	run unmark /tmp
	expect "unmark of a tree that is not marked" 1 stderr "shiftctl unmark: /tmp: not marked"
else
	skip "unmark of a tree that is not marked" "needs root"
fi
if [ "$(id -u)" = 0 ]; then
	run umount /
	expect "umount refuses a non-shiftfs mount" 1 stderr "/: not a shiftfs mount"
	mkdir "$tmp/d"
	run umount "$tmp/d"
	expect "umount refuses a non-mount-point" 1 stderr "not a mount point"
else
	skip "umount refuses a non-shiftfs mount" "needs root"
	skip "umount refuses a non-mount-point" "needs root"
fi

echo "1..$num"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
