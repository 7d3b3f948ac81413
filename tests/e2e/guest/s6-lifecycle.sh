#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario 6: an LXC lifecycle that never leaks.  The shiftfs
# hook marks the rootfs in pre-start; whatever happens to the start after
# that, the host must be left with no mark, no shiftfs mount, no loop
# device and no stray file or directory, and the next start must work:
#   - a later pre-mount hook fails; the container's init is missing;
#   - lxc-start's monitor is killed between pre-start and start-host
#     (no LXC hook runs after that: the next pre-start must cope);
#   - start/stop cycles (50, or shiftfs.e2e.lxc_cycles=N on the kernel's
#     command line); lxc-stop -k; kill -9 of the container's init;
#   - a second container on the same rootfs with other maps, while the
#     first one starts and while it runs: refused, with a clear error,
#     and the first one keeps working;
#   - the container's lxc.idmap lives only in an lxc.include'd file;
#   - lxc.service, which runs lxc-autostart at boot, brings it up (and
#     stops it).
. "$(dirname "$0")/lib.sh"

ct=c6
ct2=c6b
R=/srv/images/c6
conf=/usr/local/share/lxc/config/shiftfs.conf
state=/run/shiftfs-e2e/s6
flags=$state/flags
# Start/stop cycles: the 50 the issue asks for, or
# shiftfs.e2e.lxc_cycles=N on the kernel's command line (E2E_LXC_CYCLES=N
# make e2e): each costs 5-8 s under TCG, hence the longer timeout.
# e2e-timeout: 1200
cycles=50
for arg in $(cat /proc/cmdline); do
	case $arg in
	shiftfs.e2e.lxc_cycles=*) cycles=${arg#shiftfs.e2e.lxc_cycles=} ;;
	esac
done
tap_start
tap_plan 33

mkdir -p "$state" "$flags"
chmod 1777 "$flags"

# Hooks the scenario adds after the shiftfs ones (where hooks are
# executable: /run may be noexec).  They run in the container's child (as
# its root, host uid 100000): files under $flags.
hooks=$E2E/s6-hooks
mkdir -p "$hooks"
cat > "$hooks/fail" <<'EOF'
#!/bin/sh
echo "s6 fail-hook: failing on purpose" >&2
exit 1
EOF
cat > "$hooks/pause" <<EOF
#!/bin/sh
touch $flags/paused
i=0
while [ ! -e $flags/release ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
exit 0
EOF
chmod 755 "$hooks/fail" "$hooks/pause"

mk_busybox_rootfs "$R"
add_subids root:200000:65536

# ct_config NAME [LINES...]: the plain shifted container on $R.
ct_config() {
	_c=$1
	shift
	lxc_config "$_c" "$R" "lxc.include = $conf" "$@"
}

# What the host holds that it should not: every shiftfs mount or mark,
# anything mounted on $R, loop devices, shiftctl list's rows, files and
# directories that were not there at the last snapshot.
snapshot() {
	find /run /tmp /srv /var/lib/lxc -xdev \
		\( -path /run/systemd -o -path /run/udev -o -path /run/user \
		   -o -path /run/shiftfs-e2e -o -path /run/log \
		   -o -path /run/cloud-init \) -prune -o -print 2>&1 | sort
}
leaks() {
	grep -a ' - shiftfs ' /proc/self/mountinfo | sed 's/^/mounted: /'
	awk -v r="$R" '$5 == r { print "on the rootfs: " $0 }' /proc/self/mountinfo |
		grep -v ' - shiftfs '
	losetup -a 2>&1 | sed 's/^/loop: /'
	shiftctl list 2>&1 | sed 's/^/shiftctl list: /'
	snapshot > "$state/after"
	# (LXC's own lock file for a container it started is no leak)
	diff "$state/before" "$state/after" | sed -n 's/^> /stray: /p' |
		grep -v '^stray: /run/lxc/lock/.*/\.[^/]*$'
}
# no_leaks NAME: one test, the host clean.
no_leaks() {
	monitor_gone $ct
	monitor_gone $ct2
	_l=$(leaks)
	if [ -z "$_l" ]; then
		tap_ok "$1"
		return 0
	fi
	tap_not_ok "$1"
	printf '%s\n' "$_l" | head -n 12 | sed 's/^/#   /'
	# what the hook said (LXC logs it at DEBUG)
	grep -h 'shiftfs hook' /var/log/lxc/$ct.log /var/log/lxc/$ct2.log 2>/dev/null |
		sed 's/.*with output: //' | tail -n 6 | sed 's/^/#   hook: /'
	return 1
}
# clean_host: undo by hand what leaked, so that the next case starts
# from a clean host.
clean_host() {
	for _i in 1 2 3; do
		shiftctl unmark "$R" >/dev/null 2>&1 || break
		tap_diag "(unmarked $R by hand)"
	done
}

# monitor_gone NAME: lxc-start -d returns as soon as the start failed,
# while its monitor still runs the stop hooks: wait (10 s at most) for
# the monitor to exit.
monitor_gone() {
	for _i in $(seq 1 100); do
		ps -eo args= | grep -q "^\[lxc monitor\] [^ ]* $1\$" || return 0
		sleep 0.1
	done
	tap_diag "the monitor of $1 still runs"
	return 1
}

# try_start NAME: lxc-start that is expected to fail; its errors kept in
# $state/NAME.start.  Returns lxc-start's status (or 0 if it ran).
# What the hook says (LXC logs a hook's output at DEBUG) must be there on
# LXC 5.0 (Debian 12) and 6.0 (Debian 13) alike.  On 6.0, lxc-start -d
# shows no hook output, and lxc-start -F left the config's lxc.log.file
# empty (seen in the Debian 13 guest): so the start is in the foreground
# (-F, no stdin), its log file and level given on the command line (-o,
# -l DEBUG), where the hook's "in use by" lands on both releases.  A
# refused start exits non-zero promptly; 0, or 124 when the timeout ends
# a container that came up (137: killed), means it ran.
try_start() {
	: > "/var/log/lxc/$1.log"
	timeout -k 10 60 lxc-start -F -n "$1" -o "/var/log/lxc/$1.log" -l DEBUG \
		< /dev/null > "$state/$1.start" 2>&1
	_rc=$?
	monitor_gone "$1"
	grep -E 'ERROR|shiftfs hook' "/var/log/lxc/$1.log" >> "$state/$1.start" 2>/dev/null
	case $_rc in
	0|124|137) return 0 ;;
	esac
	return $_rc
}
show_errors() { tail -n "${2:-6}" "$state/$1.start" | sed 's/^/#   /'; }

# restart_ok NAME: the next plain start works, and its stop leaves nothing.
restart_ok() {
	ct_config $ct
	if start_container $ct && stop_container $ct; then
		tap_ok "$1: the next start of $ct works"
	else
		tap_not_ok "$1: the next start of $ct works"
		stop_container $ct
	fi
	no_leaks "$1: after that start and stop, nothing is left on the host"
	clean_host
}

say "Scenario 6: an LXC lifecycle that never leaks"
have_shiftfs || tap_diag "shiftfs is not available: $(why_no_shiftfs)"
ct_config $ct
# A first start creates what LXC keeps across starts (its lock files).
if start_container $ct && stop_container $ct; then
	tap_ok "$ct starts and stops on the shifted rootfs"
else
	tap_not_ok "$ct starts and stops on the shifted rootfs"
fi
snapshot > "$state/before"
no_leaks "after a plain start and stop, nothing is left on the host"

# ---- starts that fail after pre-start marked the rootfs --------------------
step "A later pre-mount hook fails"
ct_config $ct "lxc.hook.pre-mount = $hooks/fail" "lxc.log.level = DEBUG"
if try_start $ct; then
	tap_not_ok "the start fails (a later pre-mount hook exits 1)"
	stop_container $ct
else
	tap_ok "the start fails (a later pre-mount hook exits 1)"
fi
no_leaks "after the failed start, nothing is left on the host"
restart_ok "failed hook"

step "The container's init is missing"
ct_config $ct "lxc.init.cmd = /sbin/no-such-init" "lxc.log.level = DEBUG"
if try_start $ct; then
	tap_not_ok "the start fails (no /sbin/no-such-init in the rootfs)"
	stop_container $ct
else
	tap_ok "the start fails (no /sbin/no-such-init in the rootfs)"
fi
no_leaks "after the failed start, nothing is left on the host"
restart_ok "missing init"

step "lxc-start's monitor killed between pre-start and start-host"
ct_config $ct "lxc.hook.pre-mount = $hooks/pause"
rm -f "$flags"/*
timeout 120 lxc-start -n $ct -d > "$state/$ct.start" 2>&1 &
spid=$!
for i in $(seq 1 600); do [ -e "$flags/paused" ] && break; sleep 0.1; done
# (the monitor, and its fork that runs the container's hooks)
mon=$(ps -eo pid=,args= | awk -v n=$ct '$2 == "[lxc" && $3 == "monitor]" && $5 == n { printf "%s ", $1 }')
if [ -e "$flags/paused" ]; then
	tap_diag "the start paused in pre-mount; monitor of $ct: pid ${mon:-none}"
else
	tap_diag "the start did not reach the pause hook; monitor of $ct: pid ${mon:-none}"
	grep ERROR "/var/log/lxc/$ct.log" | tail -n 5 | sed 's/^/#   /'
fi
[ -n "$mon" ] && kill -9 $mon
wait $spid
timeout 30 lxc-wait -n $ct -s STOPPED -t 20 >/dev/null 2>&1
touch "$flags/release"
tap_eq "the monitor is gone and $ct is stopped" "$(lxc-info -n $ct -sH 2>&1)" "STOPPED"
show "shiftctl list"
# No LXC hook ran after pre-start: the next start must cope.
ct_config $ct
if start_container $ct && stop_container $ct; then
	tap_ok "killed monitor: the next start of $ct works"
else
	tap_not_ok "killed monitor: the next start of $ct works"
	stop_container $ct
fi
no_leaks "killed monitor: after that start and stop, nothing is left on the host"
clean_host

# ---- stops ------------------------------------------------------------------
step "$cycles start/stop cycles"
ct_config $ct
t0=$(date +%s)
bad=0
ms_start=0 ms_stop=0
for i in $(seq 1 "$cycles"); do
	# lxc-start -d returns once the container runs (or failed)
	a=$(ms)
	if ! timeout 60 lxc-start -n $ct -d > "$state/cycle.out" 2>&1; then
		bad=$((bad + 1))
		[ $bad -le 2 ] && { tap_diag "cycle $i: start failed"; sed 's/^/#   /' "$state/cycle.out" | tail -n 6; }
		[ $bad -ge 3 ] && break
		continue
	fi
	b=$(ms)
	if ! timeout 60 lxc-stop -n $ct -t 10 >/dev/null 2>&1; then
		bad=$((bad + 1))
		tap_diag "cycle $i: lxc-stop failed"
		stop_container $ct
	fi
	c=$(ms)
	ms_start=$((ms_start + b - a))
	ms_stop=$((ms_stop + c - b))
done
t1=$(date +%s)
tap_diag "per cycle: lxc-start -d $((ms_start / cycles))ms, lxc-stop $((ms_stop / cycles))ms"
tap_eq "$cycles start/stop cycles in $((t1 - t0))s (lxc-start -d, lxc-stop), all of them work" "$bad failed" "0 failed"
no_leaks "after $cycles cycles, nothing is left on the host"
clean_host

step "lxc-stop -k"
if start_container $ct && timeout 60 lxc-stop -n $ct -k >/dev/null 2>&1; then
	tap_ok "$ct starts and lxc-stop -k kills it"
else
	tap_not_ok "$ct starts and lxc-stop -k kills it"
	stop_container $ct
fi
no_leaks "after lxc-stop -k, nothing is left on the host"
clean_host

step "kill -9 of the container's init"
if start_container $ct; then
	kill -9 "$(lxc-info -n $ct -pH)"
	if timeout 30 lxc-wait -n $ct -s STOPPED -t 20 >/dev/null 2>&1; then
		tap_ok "$ct stops when its init is killed"
	else
		tap_not_ok "$ct stops when its init is killed"
		stop_container $ct
	fi
else
	tap_not_ok "$ct stops when its init is killed"
fi
no_leaks "after kill -9 of init, nothing is left on the host"
restart_ok "kill -9"

# ---- two containers, one rootfs, different maps -----------------------------
step "A second container on the same rootfs with other maps (root = 200000)"
# (at DEBUG, LXC's log holds what the hooks print)
ct_config $ct2 "lxc.log.level = DEBUG"
sed -i 's/ 100000 65536$/ 200000 65536/' /var/lib/lxc/$ct2/config
show "grep idmap /var/lib/lxc/$ct2/config"
snapshot > "$state/before"

# While the first one is starting (its mark is on the rootfs).
ct_config $ct "lxc.hook.pre-mount = $hooks/pause"
rm -f "$flags"/*
timeout 120 lxc-start -n $ct -d > "$state/$ct.start" 2>&1 &
spid=$!
for i in $(seq 1 600); do [ -e "$flags/paused" ] && break; sleep 0.1; done
if try_start $ct2; then
	tap_not_ok "while $ct starts, $ct2 is refused"
	stop_container $ct2
else
	show_errors $ct2
	if grep -q "in use by $ct\b" "$state/$ct2.start"; then
		tap_ok "while $ct starts, $ct2 is refused, the error naming $ct"
	else
		tap_not_ok "while $ct starts, $ct2 is refused, the error naming $ct"
	fi
fi
touch "$flags/release"
wait $spid
if timeout 60 lxc-wait -n $ct -s RUNNING -t 50 >/dev/null 2>&1 &&
   [ "$(in_ct $ct stat -c %u:%g /bin/busybox 2>&1)" = 0:0 ]; then
	tap_ok "$ct comes up on its shifted rootfs all the same"
else
	tap_not_ok "$ct comes up on its shifted rootfs all the same"
	show_errors $ct 10
fi

# While the first one runs (its mark dropped, its mount in its namespace).
if try_start $ct2; then
	tap_not_ok "while $ct runs, $ct2 is refused"
	stop_container $ct2
else
	show_errors $ct2
	if grep -q "in use by $ct\b" "$state/$ct2.start"; then
		tap_ok "while $ct runs, $ct2 is refused, the error naming $ct"
	else
		tap_not_ok "while $ct runs, $ct2 is refused, the error naming $ct"
	fi
fi
tap_run "$ct keeps working: its root writes /root/s6 (0:0 inside)" \
	in_ct $ct sh -c 'echo x > /root/s6 && [ "$(stat -c %u:%g /root/s6)" = 0:0 ] && rm /root/s6'
stop_container $ct
no_leaks "after both, nothing is left on the host"
restart_ok "two maps"

# ---- the effective lxc.idmap ------------------------------------------------
step "lxc.idmap only in an included file"
ct_config $ct
sed -i '/^lxc\.idmap/d' /var/lib/lxc/$ct/config
printf 'lxc.idmap = u 0 100000 65536\nlxc.idmap = g 0 100000 65536\n' > "$state/idmap.conf"
echo "lxc.include = $state/idmap.conf" >> /var/lib/lxc/$ct/config
show "grep -e idmap -e include /var/lib/lxc/$ct/config"
if start_container $ct; then
	tap_eq "it starts, unprivileged, with the included map" \
		"$(in_ct $ct cat /proc/self/uid_map 2>&1 | awk '{print $1, $2, $3}')" "0 100000 65536"
	stop_container $ct
else
	tap_not_ok "it starts, unprivileged, with the included map"
fi
no_leaks "included idmap: nothing is left on the host"
clean_host

# ---- autostart --------------------------------------------------------------
step "lxc.service: the unit that runs lxc-autostart at boot"
ct_config $ct "lxc.start.auto = 1"
# Debian enables lxc.service and it ran at boot, before $ct was marked
# for autostart: restart it, which runs lxc-autostart as boot does, in
# systemd's environment.
if timeout 180 systemctl restart lxc.service > "$state/autostart.out" 2>&1 &&
   timeout 60 lxc-wait -n $ct -s RUNNING -t 30 >/dev/null 2>&1 &&
   [ "$(in_ct $ct stat -c %u:%g /bin/busybox 2>&1)" = 0:0 ]; then
	tap_ok "lxc.service (lxc-autostart at boot) brings $ct up shifted"
else
	tap_not_ok "lxc.service (lxc-autostart at boot) brings $ct up shifted"
	sed 's/^/#   /' "$state/autostart.out" | tail -n 5
	journalctl -q -u lxc.service 2>&1 | tail -n 8 | sed 's/^/#   /'
fi
timeout 180 systemctl stop lxc.service > "$state/autostop.out" 2>&1
timeout 30 lxc-wait -n $ct -s STOPPED -t 20 >/dev/null 2>&1
tap_eq "systemctl stop lxc.service stops it" "$(lxc-info -n $ct -sH 2>&1)" "STOPPED"
stop_container $ct
systemctl mask lxc.service > /dev/null 2>&1
systemctl daemon-reload
ct_config $ct
no_leaks "after autostart and stop, nothing is left on the host"
clean_host
tap_done
