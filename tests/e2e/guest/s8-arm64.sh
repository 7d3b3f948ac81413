#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario 8: the cover letter's build container, for real.  A Debian
# bookworm arm64 image owned by real root (images/arm64/build-image.sh,
# the guest's disk labelled shiftfs-arm64) is booted as an unprivileged
# container with lxc.arch = aarch64: its sysvinit and every process run
# arm64 code through qemu-user-static (binfmt_misc, F flag), the rootfs
# shifted by the project's LXC hook with jejb's build map.  Its root
# installs packages from a local repository (the payload's arm64-repo,
# apt-get downloaded on the host), adds a user, and that user builds and
# runs a C program with the image's gcc in a home bind-mounted from the
# host.  Afterwards the image holds image ids only.  Then clones: an
# ephemeral one and an overlay snapshot with another id range run
# together on the one base, which is not changed by a single byte.
#
# Every arm64 program start costs most of a second here (qemu-user under
# the test guest's own TCG), hence the longer timeout:
# e2e-timeout: 1500
. "$(dirname "$0")/lib.sh"

conf=/usr/local/share/lxc/config/shiftfs.conf
state=/run/shiftfs-e2e/s8
ct=arm
IMG=/srv/arm64		# the image, mounted: the container's rootfs
H=/srv/arm64-home	# the builder's home on the host (uid 1000)
REPO=$PAYLOAD/arm64-repo
CHECK=/run/shiftfs-e2e/arm64-check
tap_start
tap_plan 27
T0=$(date +%s)
mkdir -p "$state"

say "Scenario 8: an arm64 Debian image, booted as an unprivileged build container"
have_shiftfs || tap_diag "shiftfs is not available: $(why_no_shiftfs)"
dev=$(blkid -L shiftfs-arm64 2>/dev/null || true)
if [ -z "$dev" ] || [ ! -d "$REPO" ]; then
	tap_not_ok "the arm64 image is attached (disk labelled shiftfs-arm64) with its repository"
	tap_diag "disk: ${dev:-none}; repository: $(ls -d "$REPO" 2>&1)"
	tap_diag "(images/arm64/build-image.sh; run-e2e.sh attaches it)"
	i=2
	while [ $i -le 27 ]; do tap_skip "arm64 test $i" "no arm64 image"; i=$((i + 1)); done
	tap_done; exit $?
fi
# ask_ct NAME CMD...: CMD as the container's root, output on stdout,
# with the PATH of a Debian system (lxc-attach --clear-env).
ask_ct() {
	_n=$1
	shift
	timeout 300 lxc-attach -n "$_n" --clear-env \
		-v PATH=/usr/sbin:/usr/bin:/sbin:/bin -v LC_ALL=C -- "$@"
}
# booted NAME: wait (up to 120 s) until the container answers and its
# pid 1 is the image's init.
booted() {
	_i=0
	while [ $_i -lt 40 ]; do
		[ "$(ask_ct "$1" ps -p 1 -o comm= 2>/dev/null)" = init ] && return 0
		sleep 2
		_i=$((_i + 1))
	done
	return 1
}

step "The image: Debian bookworm arm64, owned by real root"
mkdir -p "$IMG"
mountpoint -q "$IMG" || mount "$dev" "$IMG"
show "cat $IMG/etc/debian_version; ls -ln $IMG | head -n 8"
show "od -An -tx1 -j18 -N2 $IMG/usr/bin/gcc-12  # ELF machine b7 00: aarch64"
tap_eq "the image's files are owned by 0:0 and its programs are arm64" \
	"$(stat -c %u:%g "$IMG" "$IMG/usr/bin/gcc-12" "$IMG/sbin/init" | sort -u | tr '\n' ' ')$(od -An -tx1 -j18 -N2 "$IMG/sbin/init")" \
	"0:0  b7 00"

step "The build container: lxc.arch = aarch64, the build map, the builder's home"
add_subids root:100000:65536 root:1000:1 root:200000:65536
rm -rf "$H"
mkdir -p "$H"
hello_c > "$H/hello.c"
printf 'hello: hello.c\n\t$(CC) -O2 -Wall -o $@ hello.c\n' > "$H/Makefile"
chown -R 1000:1000 "$H"
lxc-destroy -n $ct -f > /dev/null 2>&1
lxc_config $ct "$IMG" "lxc.include = $conf" "lxc.log.level = DEBUG" \
	"lxc.arch = aarch64" \
	"lxc.mount.entry = tmpfs run tmpfs rw,nosuid,nodev,mode=755 0 0" \
	"lxc.mount.entry = $H home/builder none bind,create=dir 0 0" \
	"lxc.mount.entry = $REPO srv/repo none bind,ro,create=dir 0 0"
# sysvinit halts on SIGPWR (the image's inittab: p0::powerfail:/sbin/init 0)
sed -i 's/^lxc.signal.halt = .*/lxc.signal.halt = SIGPWR/' /var/lib/lxc/$ct/config
set_build_idmap $ct
show "grep -v -e '^lxc.log' /var/lib/lxc/$ct/config"

a=$(ms)
if start_ct $ct && booted $ct; then
	tap_ok "$ct boots: its pid 1 is the image's /sbin/init (sysvinit)"
else
	tap_not_ok "$ct boots: its pid 1 is the image's /sbin/init (sysvinit)"
	hook_says $ct
fi
b=$(ms)
tap_diag "lxc-start until init answers: $((b - a)) ms"
pid=$(lxc-info -n $ct -pH 2>/dev/null)
m=$(ask_ct $ct uname -m 2>&1)
echo "# \$ lxc-attach -n $ct -- uname -m"
echo "#   $m"
tap_eq "lxc-attach -n $ct -- uname -m: aarch64" "$m" "aarch64"
show "cat /proc/$pid/uid_map /proc/$pid/gid_map"
tap_eq "its init's uid_map is the build map" \
	"$(map_of "$pid" uid)" "$BUILD_MAP"
tap_eq "its init's gid_map is the build map" \
	"$(map_of "$pid" gid)" "$BUILD_MAP"
# (a sleep in a session of its own: lxc-attach ends its own process
# group when it returns)
echo "# \$ lxc-attach -n $ct -- sh -c 'setsid sleep 120 & ps -e -o pid,user,args'"
ask_ct $ct sh -c 'setsid sleep 120 < /dev/null > /dev/null 2>&1 & sleep 1; ps -e -o pid,user,args' 2>&1 |
	sed 's/^/#   /'
# On the host, every process of the container is the arm64 emulator
# (binfmt_misc F flag: the kernel runs the interpreter it opened at
# registration, whatever the container's root holds).
procs=$(find /sys/fs/cgroup/lxc.payload.$ct -name cgroup.procs -exec cat {} + 2>/dev/null)
emu=
for p in $procs; do
	emu="$emu$(readlink "/proc/$p/exe" 2>/dev/null)
"
done
printf '%s' "$emu" | sort | uniq -c | sed 's/^/#   host: /'
n=$(echo "$procs" | wc -w)
got="$(printf '%s' "$emu" | grep -vc qemu-aarch64) of $n are not emulated"
[ "$n" -gt 0 ] || got="no process found in lxc.payload.$ct"
tap_eq "on the host, every process of $ct runs qemu-aarch64" "$got" "0 of $n are not emulated"

step "Administered as root: packages from a local repository, a user"
show "ls $REPO"
ask_ct $ct sh -c 'echo "deb [trusted=yes] file:/srv/repo ./" > /etc/apt/sources.list' 2>&1 |
	sed 's/^/#   /'
a=$(ms)
tap_run "apt-get update (the local repository only)" ask_ct $ct apt-get -q update
tap_run "apt-get install make hello" ask_ct $ct env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -q --no-install-recommends make hello
b=$(ms)
tap_diag "apt-get update and install: $((b - a)) ms"
echo "# \$ lxc-attach -n $ct -- dpkg -l make hello"
ask_ct $ct dpkg -l make hello 2>&1 | tail -n 2 | sed 's/^/#   /'
tap_eq "hello, installed from the repository, runs" \
	"$(ask_ct $ct hello 2>&1)" "Hello, world!"
tap_run "useradd builder (uid 1000, its home bind-mounted from the host)" \
	ask_ct $ct useradd -u 1000 -U -d /home/builder -s /bin/sh builder
tap_eq "id builder" "$(ask_ct $ct id builder 2>&1)" \
	"uid=1000(builder) gid=1000(builder) groups=1000(builder)"

step "Built as a user: make and gcc as uid 1000, in the bind-mounted home"
a=$(ms)
echo "# \$ lxc-attach -n $ct -u 1000 -g 1000 -- sh -c 'cd && make && ./hello'"
out=$(timeout 600 lxc-attach -n $ct -u 1000 -g 1000 --clear-env \
	-v PATH=/usr/bin:/bin -v HOME=/home/builder -v LC_ALL=C -- \
	sh -c 'cd && make && ./hello' 2>&1)
b=$(ms)
printf '%s\n' "$out" | sed 's/^/#   /'
tap_diag "make (gcc, as, ld) and run: $((b - a)) ms"
tap_eq "the program built in the container runs: aarch64, uid 1000" \
	"$(printf '%s\n' "$out" | tail -n 1)" "hello from aarch64, uid 1000"
show "ls -ln $H; od -An -tx1 -j18 -N2 $H/hello"
tap_eq "on the host the build product is 1000:1000 and an arm64 ELF" \
	"$(stat -c %u:%g "$H/hello" "$H/hello.c" 2>&1 | sort -u) $(od -An -tx1 -j18 -N2 "$H/hello" 2>&1)" \
	"1000:1000  b7 00"

a=$(ms)
timeout 200 lxc-stop -n $ct -t 180 > "$state/stop" 2>&1
b=$(ms)
tap_eq "lxc-stop: sysvinit halts the container" "$(lxc-info -n $ct -sH 2>&1)" "STOPPED"
tap_diag "lxc-stop (SIGPWR, init 0): $((b - a)) ms"
no_hook_leaks "after $ct stopped, nothing is left on the host"

step "On the image itself (mounted again, unshifted): image ids only"
umount "$IMG"
mkdir -p "$CHECK"
mount -o ro "$dev" "$CHECK"
show "ls -ln $CHECK/usr/bin/make $CHECK/usr/bin/hello $CHECK/etc/passwd $CHECK/etc/shadow $CHECK/etc/group"
show "grep builder $CHECK/etc/passwd $CHECK/etc/group"
tap_eq "the installed packages' files are 0:0 on the image" \
	"$(stat -c %u:%g "$CHECK/usr/bin/make" "$CHECK/usr/bin/hello" "$CHECK/var/lib/dpkg/info/make.list" 2>&1 | sort -u)" "0:0"
tap_eq "the new user's entries: passwd and group 0:0, shadow 0:42 (the image's shadow group)" \
	"$(stat -c %u:%g "$CHECK/etc/passwd" "$CHECK/etc/group" "$CHECK/etc/shadow" "$CHECK/etc/gshadow" 2>&1 | tr '\n' ' ')$(grep -c '^builder:x:1000:1000:' "$CHECK/etc/passwd")" \
	"0:0 0:0 0:42 0:42 1"
high=$(find "$CHECK" -xdev \( -uid +99999 -o -gid +99999 \) -printf '%U:%G %p\n' | head -n 5)
tap_eq "nothing on the image is owned by a host id of 100000 or more" "$high" ""
umount "$CHECK"

step "Clones: an ephemeral one and an overlay snapshot with another range"
# The base, read-only from now on: what the clones do cannot reach it,
# and the device's block-layer counters show it: nothing written to it
# or discarded from it between here and the clones' end.  (A sha256 of
# the 2 GiB device, before and after, took two to three minutes of the
# emulated guest's time; a change to the device's contents must pass
# through these counters.)
# dev_writes: the device's write and discard I/Os and sectors since
# boot (/sys/class/block/DEV/stat: fields 5, 7, 12 and 14).
dev_writes() {
	awk '{ print "writes " $5 " (" $7 " sectors), discards " $12 " (" $14 " sectors)" }' \
		"/sys/class/block/$(basename "$(readlink -f "$dev")")/stat"
}
sync
writes0=$(dev_writes)
tap_diag "the base device before the clones: $writes0"
mount -o ro "$dev" "$IMG"
for k in arm-e1 arm-k2; do lxc-destroy -n $k -f > /dev/null 2>&1; done
timeout 120 lxc-copy -n $ct -N arm-k2 -s -B overlay > "$state/k2.copy" 2>&1 ||
	sed 's/^/#   /' "$state/k2.copy"
sed -i -e "s|^lxc.log.file = .*|lxc.log.file = /var/log/lxc/arm-k2.log|" \
	-e '/home\/builder/d' /var/lib/lxc/arm-k2/config
set_idmap arm-k2 "u 0 200000 65536" "g 0 200000 65536"
find /var/lib/lxc/arm-k2 -xdev -uid 100000 -exec chown 200000:200000 {} +
: > /var/log/lxc/arm-k2.log
a=$(ms)
timeout 120 lxc-copy -n $ct -N arm-e1 -e > "$state/e1.copy" 2>&1 ||
	sed 's/^/#   /' "$state/e1.copy"
start_ct arm-k2
booted arm-e1 && booted arm-k2
b=$(ms)
tap_diag "two clones, started together, until their inits answer: $((b - a)) ms"
show "lxc-ls -f"
tap_eq "arm-e1 (lxc-copy -e) and arm-k2 (-s -B overlay, 0 200000 65536) run together" \
	"$(lxc-info -n arm-e1 -sH 2>&1) $(lxc-info -n arm-k2 -sH 2>&1)" "RUNNING RUNNING"
tap_eq "both run arm64, with make from the base installed" \
	"$(for k in arm-e1 arm-k2; do ask_ct $k sh -c 'uname -m; dpkg-query -W -f "\${Status}\n" make'; done 2>&1 | sort -u | tr '\n' ' ')" \
	"aarch64 install ok installed "
tap_eq "each with its own map" \
	"$(for k in arm-e1 arm-k2; do map_of "$(lxc-info -n $k -pH)" uid; done)" \
	"${BUILD_MAP}0:200000:65536 "
for k in arm-e1 arm-k2; do
	ask_ct $k sh -c "echo $k > /root/$k.txt" 2>&1 | sed 's/^/#   /'
done
tap_eq "each writes its own layer: its file is 0:0 inside, and the other does not see it" \
	"$(for k in arm-e1 arm-k2; do ask_ct $k stat -c %u:%g /root/$k.txt; ask_ct $k ls /root; done 2>&1 | tr '\n' ' ')" \
	"0:0 arm-e1.txt 0:0 arm-k2.txt "
for k in arm-e1 arm-k2; do timeout 60 lxc-stop -n $k -k > /dev/null 2>&1; done
sleep 1
tap_eq "once stopped, the ephemeral clone is gone" "$(ls -d /var/lib/lxc/arm-e1 2>/dev/null)" ""
umount "$IMG"
sync
tap_eq "the base image is unchanged: nothing written to or discarded from its device" \
	"$(dev_writes)" "$writes0"
no_hook_leaks "after the clones stopped, nothing is left on the host"

step "What a clone costs, against a full copy and chown -R of the image"
mount -o ro "$dev" "$IMG"
lxc-destroy -n arm-e3 -f > /dev/null 2>&1
sync
a=$(ms)
timeout 120 lxc-copy -n $ct -N arm-e3 -e > "$state/e3.copy" 2>&1
timeout 60 lxc-wait -n arm-e3 -s RUNNING -t 50 > /dev/null 2>&1
b=$(ms)
clone_ms=$((b - a))
clone_du=$(du -sxk /var/lib/lxc/arm-e3 | cut -f1)
timeout 60 lxc-stop -n arm-e3 -k > /dev/null 2>&1
rm -rf /var/lib/lxc/arm-full
sync
a=$(ms)
mkdir -p /var/lib/lxc/arm-full
cp -a "$IMG" /var/lib/lxc/arm-full/rootfs
b=$(ms)
chown -R 100000:100000 /var/lib/lxc/arm-full/rootfs
c=$(ms)
full_du=$(du -sxk /var/lib/lxc/arm-full | cut -f1)
tap_diag "clone: lxc-copy -e to RUNNING $clone_ms ms, $clone_du KB on disk"
tap_diag "copy:  cp -a $((b - a)) ms + chown -R $((c - b)) ms = $((c - a)) ms, $full_du KB on disk"
names=$(find /var/lib/lxc/arm-full/rootfs -xdev | wc -l)
tap_eq "the full copy is a copy ($names names)" "$names" "$(find "$IMG" -xdev | wc -l)"
rm -rf /var/lib/lxc/arm-full
umount "$IMG"
no_hook_leaks "at the end, nothing is left on the host"
tap_diag "scenario time: $(( $(date +%s) - T0 ))s"
tap_done
