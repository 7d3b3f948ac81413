# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# Shared by the e2e scenario scripts (sourced).  TAP on stdout through
# tests/lib/tap.sh (the guest driver sends it to the second serial port),
# narration as_user "# " lines so that the demo and a failed run's log show
# what happened.

PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
E2E=${E2E:-/usr/local/libexec/shiftfs-e2e}
PAYLOAD=${PAYLOAD:-/run/shiftfs-payload}
MAP=uidmap=0:100000:65536,gidmap=0:100000:65536

# tests/lib/tap.sh: beside the scenarios in the guest (mkpayload.sh puts
# it there), ../../lib/tap.sh in the source tree.
_tap_sh=$(dirname "$0")/tap.sh
[ -f "$_tap_sh" ] || _tap_sh=$(dirname "$0")/../../lib/tap.sh
# shellcheck source=../../lib/tap.sh
. "$_tap_sh"

say() { echo "#"; echo "# === $*"; }

# show CMD: narrate a command and its output (the views the demo shows).
show() {
	echo "# \$ $*"
	sh -c "$*" 2>&1 | sed 's/^/#   /'
}

have_shiftfs() { grep -qw shiftfs /proc/filesystems; }

# Why shiftfs is not there, for a failing test's diagnostics.
why_no_shiftfs() {
	if [ ! -f "$PAYLOAD/shiftfs.ko" ]; then
		echo "shiftfs.ko was not built (make module): no module to load"
	else
		echo "modprobe shiftfs failed: $(cat /run/shiftfs-e2e/modprobe.log 2>/dev/null)"
	fi
}

# mk_busybox_rootfs DIR [BUSYBOX]: a minimal root filesystem owned by 0:0,
# busybox and its applets, an init that waits.
mk_busybox_rootfs() {
	_root=$1
	_bb=${2:-/bin/busybox}
	mkdir -p "$_root"
	(
		cd "$_root" || exit 1
		mkdir -p bin sbin etc proc sys dev tmp root mnt var/tmp run
		cp "$_bb" bin/busybox
		for a in sh ls cat echo id stat touch mkdir rm sleep uname grep \
			 mount umount chroot df ps readlink wc head tail true false \
			 env hostname printf test; do
			ln -sf busybox "bin/$a"
		done
		echo "root:x:0:0:root:/root:/bin/sh" > etc/passwd
		echo "root:x:0:" > etc/group
		cat > sbin/init <<'INIT'
#!/bin/sh
trap 'exit 0' TERM PWR INT
while :; do sleep 1000 & wait $!; done
INIT
		chmod 755 sbin/init
		chmod 1777 tmp
	)
	chown -R 0:0 "$_root"
}

# Ownership of everything under DIR, one "uid:gid mode path" a line.
owners() { (cd "$1" && find . -xdev -printf '%U:%G %m %p\n' | sort -k3); }

# lxc_config NAME ROOTFS_PATH [EXTRA LINES...]: an unprivileged container
# (root = host 100000) started by root, with LXC's defaults as lxc-create
# writes them (/etc/lxc/default.conf: a veth on lxc-net's lxcbr0, the
# AppArmor profile LXC generates), then what a busybox init needs, then
# EXTRA.  /var/lib/lxc stays as Debian makes it.
lxc_config() {
	_n=$1 _r=$2
	shift 2
	mkdir -p "$_r"
	lxc_config_common "$_n" "$_r" "" "lxc.init.cmd = /sbin/init
lxc.mount.auto = proc:mixed sys:ro
lxc.autodev = 1
lxc.tty.max = 0
lxc.pty.max = 8
lxc.console.path = none
lxc.signal.halt = SIGTERM" "$@"
}

# lxc_config_common NAME ROOTFS_PATH HEAD TAIL [EXTRA LINES...]: what
# both kinds of container config share (LXC's defaults, the name, the
# rootfs, the maps, the log), HEAD (lines) after LXC's defaults, TAIL
# after the maps, EXTRA last; the container's log made empty.
lxc_config_common() {
	_name=$1 _rootfs=$2 _head=$3 _tail=$4
	shift 4
	mkdir -p "/var/lib/lxc/$_name" /var/log/lxc
	{
		cat /etc/lxc/default.conf
		[ -z "$_head" ] || printf '%s\n' "$_head"
		echo "lxc.uts.name = $_name"
		echo "lxc.rootfs.path = dir:$_rootfs"
		echo "lxc.idmap = u 0 100000 65536"
		echo "lxc.idmap = g 0 100000 65536"
		[ -z "$_tail" ] || printf '%s\n' "$_tail"
		echo "lxc.log.file = /var/log/lxc/$_name.log"
		echo "lxc.log.level = INFO"
		for l in "$@"; do echo "$l"; done
	} > "/var/lib/lxc/$_name/config"
	: > "/var/log/lxc/$_name.log"
}

# debian_rootfs DIR: the Debian root filesystem of the payload
# (images/cloud/build-ctroot.sh: systemd, ifupdown with DHCP), owned by 0:0
# on disk like any image; fails when the payload has none.
debian_rootfs() {
	[ -f "$PAYLOAD/ctroot.tar" ] || {
		echo "no ctroot.tar in the payload (images/cloud/build-ctroot.sh)"
		return 1
	}
	rm -rf "$1"
	mkdir -p "$1"
	tar --numeric-owner --xattrs --xattrs-include='*' -C "$1" -xf "$PAYLOAD/ctroot.tar"
}

# lxc_config_debian NAME ROOTFS_PATH [EXTRA LINES...]: a Debian container
# with systemd as init, configured as lxc-create leaves an unprivileged
# one: /etc/lxc/default.conf (veth on lxcbr0, LXC's generated AppArmor
# profile), LXC's common.conf and userns.conf, then EXTRA.
lxc_config_debian() {
	_n=$1 _r=$2
	shift 2
	lxc_config_common "$_n" "$_r" "lxc.include = /usr/share/lxc/config/common.conf
lxc.include = /usr/share/lxc/config/userns.conf
lxc.arch = linux64" "" "$@"
}

# system_state NAME: systemd's word on the container's boot (waits up to
# 120 s), and on "degraded" the failed units, on one line.
system_state() {
	# (until systemd has its socket, systemctl cannot ask it)
	for _i in $(seq 1 90); do
		_st=$(timeout 20 lxc-attach -n "$1" --clear-env -v PATH=/usr/bin:/bin -- \
			systemctl is-system-running 2>&1)
		case $_st in *" bus "*|*"connect"*) sleep 2 ;; *) break ;; esac
	done
	_st=$(timeout 150 lxc-attach -n "$1" --clear-env -v PATH=/usr/bin:/bin -- \
		timeout 120 systemctl is-system-running --wait 2>&1)
	case $_st in
	degraded)
		_st="degraded ($(timeout 30 lxc-attach -n "$1" --clear-env -v PATH=/usr/bin:/bin -- \
			systemctl --failed --no-legend --plain 2>&1 | awk '{ print $1 }' | tr '\n' ' '))" ;;
	esac
	echo "$_st"
}
# systemd_ok NAME: one test, the container's systemd says running or
# degraded (the reason shown).
systemd_ok() {
	_st=$(system_state "$1")
	case $_st in
	running|degraded*) tap_ok "$1 booted systemd: systemctl is-system-running says $_st" ;;
	*) tap_not_ok "$1 booted systemd: systemctl is-system-running says running or degraded"
	   tap_diag "it says: $_st" ;;
	esac
}
# network_ok NAME: one test, the container has an IPv4 address from
# lxc-net's DHCP on eth0 and reaches the host's end of lxcbr0.
network_ok() {
	_br=$(ip -4 -o addr show dev lxcbr0 2>/dev/null | awk '{ split($4, a, "/"); print a[1] }')
	_addr=
	for _i in $(seq 1 60); do
		_addr=$(timeout 20 lxc-attach -n "$1" --clear-env -v PATH=/usr/bin:/bin -- \
			ip -4 -o addr show dev eth0 2>/dev/null | awk '{ split($4, a, "/"); print a[1] }')
		[ -n "$_addr" ] && break
		sleep 1
	done
	if [ -n "$_br" ] && [ -n "$_addr" ] &&
	   timeout 30 lxc-attach -n "$1" --clear-env -v PATH=/usr/bin:/bin -- \
		ping -c 1 -W 5 "$_br" > /dev/null 2>&1; then
		tap_ok "$1 got $_addr from lxc-net's DHCP and reaches the host at $_br"
	else
		tap_not_ok "$1 got an address from lxc-net's DHCP and reaches the host"
		tap_diag "lxcbr0: '${_br}', eth0: '${_addr}'; lxc-net: $(systemctl is-active lxc-net 2>&1)"
		timeout 60 lxc-attach -n "$1" --clear-env -v PATH=/usr/bin:/bin -- sh -c \
			'ip -o addr; systemctl --no-pager status networking | grep -E "Active|Process"; journalctl -q --no-pager -u networking | tail -n 8; ps -ef | grep -E "dhclient|dhcpcd" | grep -v grep' 2>&1 |
			sed 's/^/#   /' 
	fi
}

# start_container NAME: start it detached and wait until it runs; on
# failure, show LXC's own error lines.  Never waits more than 120 s.
start_container() {
	if timeout 120 lxc-start -n "$1" -d > "/run/shiftfs-e2e/$1.start" 2>&1 &&
	   timeout 60 lxc-wait -n "$1" -s RUNNING -t 50 >/dev/null 2>&1; then
		return 0
	fi
	tap_diag "lxc-start -n $1 failed:"
	sed 's/^/#   /' "/run/shiftfs-e2e/$1.start"
	tap_diag "its log (/var/log/lxc/$1.log) says:"
	grep -E 'ERROR|WARN' "/var/log/lxc/$1.log" 2>/dev/null | tail -n 15 |
		sed 's/^/#   /'
	journalctl -q -o cat -t shiftfs-lxc-hook -n 6 2>&1 | sed 's/^/#   hook: /'
	dmesg | grep 'apparmor="DENIED"' | tail -n 4 | sed 's/^/#   kernel: /'
	# (a daemonized LXC 6.0 start logs no ERROR: once more in the
	# foreground, for its errors)
	timeout 90 lxc-start -F -n "$1" < /dev/null 2>&1 | grep -E 'ERROR|WARN|shiftctl|shiftfs' |
		tail -n 12 | sed 's/^/#   foreground: /'
	timeout 30 lxc-stop -n "$1" -k > /dev/null 2>&1
	grep -a -e ' - shiftfs ' -e ' /srv/images' /proc/self/mountinfo | sed 's/^/#   mounted: /'
	return 1
}

stop_container() {
	timeout 60 lxc-stop -n "$1" -t 10 >/dev/null 2>&1 ||
		timeout 30 lxc-stop -n "$1" -k >/dev/null 2>&1
	timeout 30 lxc-wait -n "$1" -s STOPPED -t 20 >/dev/null 2>&1
}

# in_ct NAME CMD...: run CMD as the container's root.
in_ct() {
	_ct=$1
	shift
	timeout 60 lxc-attach -n "$_ct" --clear-env -v PATH=/bin:/sbin -- "$@"
}

# loops_of IMAGE: loop devices backed by IMAGE, if any.
loops_of() { losetup -j "$1" 2>/dev/null; }

# wait_no_loop IMAGE: autoclear loop devices go when their last user
# does; give them a few seconds.
wait_no_loop() {
	for _i in 1 2 3 4 5 6 7 8 9 10; do
		[ -z "$(loops_of "$1")" ] && return 0
		sleep 1
	done
	loops_of "$1"
	return 1
}

# ct_mounts NAME: the container's mount table, from the host's /proc.
ct_mounts() { cat "/proc/$(lxc-info -n "$1" -pH)/mounts"; }

# running_container NAME: a plain unprivileged busybox container whose
# own rootfs is a private copy (no shiftfs needed), to attach things to.
running_container() {
	mk_busybox_rootfs "/var/lib/lxc/$1/rootfs"
	# an unprivileged container's private rootfs belongs to its root
	chown -R 100000:100000 "/var/lib/lxc/$1/rootfs"
	lxc_config "$1" "/var/lib/lxc/$1/rootfs"
	start_container "$1"
}

# ---- for the scenarios of shifted containers (s7, s8) ------------------------
# LXC hook's state directory.
HSTATE=/run/shiftfs-lxc

# step WHAT: a narrated step, with the seconds since the scenario's $T0.
step() { say "$* [$(( $(date +%s) - ${T0:-0} ))s]"; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }

# The cover letter's build map, as map_of prints it (set_build_idmap).
BUILD_MAP="0:100000:1000 1000:1000:1 65534:101000:1 "
# map_of PID uid|gid: PID's uid_map or gid_map on one line, "IN:OUT:N " each.
map_of() { awk '{ printf "%s:%s:%s ", $1, $2, $3 }' "/proc/$1/$2_map" 2>&1; }

# set_idmap NAME LINES...: replace the container's lxc.idmap lines.
set_idmap() {
	_c=/var/lib/lxc/$1/config
	shift
	sed -i '/^lxc\.idmap/d' "$_c"
	for _l in "$@"; do echo "lxc.idmap = $_l" >> "$_c"; done
}
# set_build_idmap NAME: the build map: container 0-999 to host
# 100000-100999, 1000 to the host's 1000, 65534 to 101000.
set_build_idmap() {
	set_idmap "$1" "u 0 100000 1000" "u 1000 1000 1" "u 65534 101000 1" \
		"g 0 100000 1000" "g 1000 1000 1" "g 65534 101000 1"
}

# hook_leaks: what the hook must not leave on the host once its
# containers stopped: shiftfs mounts and marks, mounts or entries in its
# state directory other than its lock and private lxcpath.
hook_leaks() {
	grep -a ' - shiftfs ' /proc/self/mountinfo | sed 's/^/mounted: /'
	grep -a " $HSTATE/" /proc/self/mountinfo | sed 's/^/mounted: /'
	shiftctl list 2>&1 | sed 's/^/shiftctl list: /'
	ls -A "$HSTATE" 2>/dev/null | grep -vx -e lock -e lxcpath | sed "s|^|stray: $HSTATE/|"
}
# no_hook_leaks NAME: one test, hook_leaks finds nothing.
no_hook_leaks() {
	_l=$(hook_leaks)
	if [ -z "$_l" ]; then
		tap_ok "$1"
	else
		tap_not_ok "$1"
		printf '%s\n' "$_l" | head -n 12 | sed 's/^/#   /'
	fi
}
# hook_says NAME: what the shiftfs hook printed for NAME (LXC logs it at
# DEBUG, which the configs of s7 and s8 ask for).
hook_says() {
	grep -h 'shiftfs hook' "/var/log/lxc/$1.log" 2>/dev/null |
		sed 's/.*with output: //' | tail -n 8 | sed 's/^/#   hook: /'
}
# start_ct NAME: start_container, and the hook's words if it failed.
start_ct() {
	start_container "$1" && return 0
	hook_says "$1"
	return 1
}

# add_subids ENTRY...: root's subordinate id ranges (root:START:COUNT)
# in /etc/subuid and /etc/subgid, each added once.  liblxc maps the ids
# of a root-started container with newuidmap/newgidmap when they are
# installed, and those check these files for root like for anyone: the
# build map's identity extent for 1000 needs root:1000:1.
add_subids() {
	for _f in /etc/subuid /etc/subgid; do
		for _r; do
			grep -qx "$_r" "$_f" || echo "$_r" >> "$_f"
		done
	done
}

# hello_c: the build containers' C program (s8, s10), on stdout: it says
# which machine and uid it runs as.
hello_c() {
	cat <<'EOF'
#include <stdio.h>
#include <sys/utsname.h>
#include <unistd.h>

int main(void)
{
	struct utsname u;

	if (uname(&u))
		return 1;
	printf("hello from %s, uid %u\n", u.machine, (unsigned int)getuid());
	return 0;
}
EOF
}

# listing DIR: every file's checksum, every name's owner and mode.
listing() {
	(cd "$1" && find . -xdev -type f -print0 | sort -z | xargs -0 sha256sum &&
	 find . -xdev -print0 | sort -z | xargs -0 stat -c '%u:%g:%a %n')
}

# ---- containers users start themselves (s10, r10) ----------------------------
# as_user USER CMD: CMD in USER's login shell, in his systemd user session
# (lingering), as he would type it.
as_user() {
	_who=$1
	shift
	_uid=$(id -u "$_who")
	su -l "$_who" -s /bin/sh -c "export XDG_RUNTIME_DIR=/run/user/$_uid DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/$_uid/bus; $*"
}
# ustart USER NAME: start his container in a cgroup delegated to him.
ustart() {
	as_user "$1" "timeout 120 systemd-run --user --scope --quiet -p Delegate=yes -- lxc-start -n $2 -d && lxc-wait -n $2 -s RUNNING -t 60" \
		> "/run/shiftfs-e2e/$2.start" 2>&1
}
ustop() { as_user "$1" "timeout 60 lxc-stop -n $2 -k" > /dev/null 2>&1; }
# uattach USER NAME CMD...: CMD as root of his container, attached from a
# scope of his user manager (LXC 5.0 cannot move a process from his login
# session's scope into the container's cgroup); $UATTACH_SECS (60) at most.
uattach() {
	_w=$1 _c=$2
	shift 2
	as_user "$_w" "timeout ${UATTACH_SECS:-60} systemd-run --user --scope --quiet -- lxc-attach -n $_c --clear-env -v PATH=/usr/sbin:/usr/bin:/sbin:/bin -- $*"
}
# why_not USER NAME: the start's output, his container's log, the hook's
# words in the journal, AppArmor's denials.
why_not() {
	sed 's/^/#   start: /' "/run/shiftfs-e2e/$2.start"
	as_user "$1" "cat ~/.local/share/lxc/$2/$2.log" 2>&1 | grep -E 'ERROR|WARN|shiftfs hook' | tail -n 15 | sed 's/^/#   log: /'
	journalctl -q -o cat -t shiftfs-lxc-hook -n 6 2>&1 | sed 's/^/#   hook: /'
	dmesg | grep 'apparmor="DENIED"' | tail -n 4 | sed 's/^/#   kernel: /'
	# (a daemonized LXC 6.0 start logs no ERROR: once more in the
	# foreground, for its errors)
	as_user "$1" "timeout 90 systemd-run --user --scope --quiet -p Delegate=yes -- lxc-start -F -n $2 -l DEBUG -o /dev/stderr < /dev/null" 2>&1 |
		grep -E 'ERROR|WARN|shiftfs' | tail -n 15 | sed 's/^/#   foreground: /'
	as_user "$1" "timeout 30 lxc-stop -n $2 -k" > /dev/null 2>&1
}

# on_disk CMD: CMD with the root filesystem as it is on disk under
# /mnt (a private, non-recursive bind of /, in a mount namespace of its
# own): below a mark, which no one can look into, the files themselves.
on_disk() { unshare -m --propagation private sh -c "mount --bind / /mnt && $*"; }
# u_booted USER NAME: one test, his container's systemd says running or
# degraded (the failed units shown).
u_booted() {
	_st=$(for _i in $(seq 1 60); do
		_s=$(uattach "$1" "$2" timeout 120 systemctl is-system-running --wait 2>&1)
		case $_s in *bus*|*connect*) sleep 2 ;; *) echo "$_s"; break ;; esac
	done)
	case $_st in
	running|degraded) tap_ok "$2 booted systemd: systemctl is-system-running says $_st" ;;
	*) tap_not_ok "$2 booted systemd: systemctl is-system-running says running or degraded"
	   tap_diag "it says: $_st" ;;
	esac
	[ "$_st" = running ] ||
		uattach "$1" "$2" systemctl --failed --no-legend --plain 2>&1 | sed 's/^/#   failed: /'
}
# uconfig USER NAME ROOTFS START [HEAD]: his LXC defaults (LXC's guide:
# the bridge, his range, a profile root loaded), then HEAD (default:
# LXC's common and userns configs, for systemd), the rootfs and the
# hook's snippet.
DEBIAN_HEAD="lxc.include = /usr/share/lxc/config/common.conf
lxc.include = /usr/share/lxc/config/userns.conf
lxc.arch = linux64"
BUSYBOX_HEAD="lxc.init.cmd = /sbin/init
lxc.mount.auto = proc:mixed sys:ro
lxc.autodev = 1
lxc.tty.max = 0
lxc.pty.max = 8
lxc.console.path = none
lxc.signal.halt = SIGTERM"
uconfig() {
	_w=$1 _c=$2 _r=$3 _s=$4 _h=${5:-$DEBIAN_HEAD}
	# (LXC's guide: the container's root must traverse to his lxcpath;
	# useradd makes homes 0700)
	as_user "$_w" "mkdir -p ~/.config/lxc ~/.local/share/lxc/$_c && chmod o+x ~ ~/.local ~/.local/share && cat > ~/.config/lxc/default.conf" <<EOF
lxc.net.0.type = veth
lxc.net.0.link = lxcbr0
lxc.net.0.flags = up
lxc.apparmor.profile = lxc-container-shiftfs-user
lxc.idmap = u 0 $_s 65536
lxc.idmap = g 0 $_s 65536
EOF
	as_user "$_w" "{ cat ~/.config/lxc/default.conf; cat; } > ~/.local/share/lxc/$_c/config" <<EOF
$_h
lxc.uts.name = $_c
lxc.rootfs.path = dir:$_r
lxc.include = /usr/local/share/lxc/config/shiftfs.conf
lxc.log.file = /home/$_w/.local/share/lxc/$_c/$_c.log
lxc.log.level = DEBUG
EOF
}

