#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# End-to-end tests: boot the Debian cloud image of KVER's release
# (images/cloud/: Debian 12 for bookworm's kernels, 13 for trixie's) in
# QEMU, let cloud-init run the scenarios (tests/e2e/guest/), read their TAP
# from the guest's second serial port, and judge the run.
#
#   tests/e2e/run-e2e.sh [-t LIST] [-T SECS] [-d] [-k] [-P] KVER BUILD_DIR
#
#   -t LIST   scenarios to run, comma-separated prefixes (s4,s1); default all
#   -T SECS   whole-guest timeout (default 2700); a hung guest is killed
#             and the run fails
#   -d        demo: the narration only, with progress while building and
#             booting (make demo)
#   -k        keep the guest's throw-away disk overlay afterwards
#   -P        prepare only: build (or find cached) the images the run
#             needs (base, container rootfs, arm64 for s8, arm64
#             busybox), boot nothing; make test does this in the
#             background while the fast tier runs
#
# E2E_LXC_CYCLES=N in the environment: N start/stop cycles in s6 (50).
#
# Needs BUILD_DIR/KVER/shiftfs.ko (make module) and
# BUILD_DIR/shiftctl/shiftctl (make shiftctl); what is missing makes the
# scenarios that need it fail, with the reason.  The base image is built
# once and cached (images/cloud/build-image.sh); each run boots a fresh
# qcow2 overlay of it with the project's files on a second disk.
#
# Failure is assumed until the guest says it finished.  The guest's kernel
# log is scanned (tests/scan-kernel-log.sh): a WARN, BUG, Oops or lockdep
# report fails the run.  The last line is "N passed, N failed[, N skipped]".
set -u

tests=
limit=2700
demo=0
keep=0
prepare=0
usage() {
	echo "usage: $0 [-t LIST] [-T SECS] [-d] [-k] [-P] KVER BUILD_DIR" >&2
	exit 2
}
while getopts t:T:dkP opt; do
	case $opt in
	t) tests=$OPTARG ;;
	T) limit=$OPTARG ;;
	d) demo=1 ;;
	k) keep=1 ;;
	P) prepare=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || usage
kver=$1
mkdir -p "$2"
build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cloud=$top/images/cloud
run=$build/cloud/run-$kver
logs=$run/logs
# The Debian release the guest runs (that of its kernel).
case $("$top/images/kver.sh" -b "$build" -s "$kver" 2>/dev/null) in
bookworm) debian="Debian 12" ;;
trixie) debian="Debian 13" ;;
*) debian="Debian (no image for $kver's release)" ;;
esac

note() { echo "run-e2e: $*"; }
t_all=$(date +%s)
timings=()
timed() { timings+=("$(printf '%-28s %5ss' "$1" "$2")"); }

# ---- host side -------------------------------------------------------------
"$top/images/setup-host.sh" --e2e "$kver" || exit 1
if ! command -v eatmydata >/dev/null; then
	note "installing eatmydata"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends eatmydata >&2 || exit 1
fi

# image VAR LABEL WHAT CMD...: build or reuse a cached image with CMD,
# whose last line of output is the image's directory; VAR gets it, or
# nothing if CMD did not finish it.  The time goes in the timings, the
# demo narrates WHAT and CMD's progress.
image() {
	local var=$1 label=$2 what=$3 t dir
	shift 3
	t=$(date +%s)
	if [ $demo -eq 1 ]; then
		note "$what ..."
		dir=$("$@" 2> >(sed -u 's/^/  /' >&2) | tail -n 1)
	else
		dir=$("$@" | tail -n 1)
	fi
	t=$(( $(date +%s) - t ))
	timed "$label ($( [ $t -le 5 ] && echo cached || echo built))" $t
	[ -f "$dir/.done" ] || dir=
	printf -v "$var" '%s' "$dir"
}

# The Debian rootfs the systemd containers boot (s1, s7): cached like the
# base and delivered on the payload disk; built in the background beside
# the base image (each has its own .deb cache and lock), since on a cold
# run both are mostly waiting on dpkg and the network.
release=$("$top/images/kver.sh" -b "$build" -s "$kver" 2>/dev/null)
mkdir -p "$build/cloud"
ctlog=$build/cloud/ctroot-$release.log
t_ct=$(date +%s)
[ $demo -eq 1 ] && note "the $debian container rootfs (systemd, debootstrap, cached), in the background"
"$cloud/build-ctroot.sh" "$release" "$build" > "$ctlog" 2>&1 &
ctpid=$!

# The arm64 build image (scenarios 8 and 10): built once and cached like
# the base; each run boots a throw-away overlay of it as a disk of its
# own.  Built in the background beside the other two from the start:
# its second stage, in an emulated arm64 machine, is the longest of the
# three, and what a cold make test's Debian 13 pass waits for.
arm64=
armpid=
case ",${tests:-s8}," in
*,s8*|*,s10*)
	armlog=$build/cloud/arm64-image.log
	t_arm=$(date +%s)
	[ $demo -eq 1 ] && note "the arm64 build image (debootstrap, second stage in an arm64 guest; cached), in the background"
	"$top/images/arm64/build-image.sh" "$build" > "$armlog" 2>&1 &
	armpid=$!
	;;
esac

image base "base image ($debian)" "the $debian cloud image (debootstrap, cached after the first build)" \
	"$cloud/build-image.sh" "$kver" "$build"
if [ -z "$base" ]; then
	kill "$ctpid" $armpid 2>/dev/null
	wait "$ctpid" $armpid
	note "the base image could not be built"
	echo "0 passed, 1 failed"
	exit 1
fi

# bg_image VAR PID LOG T0 LABEL MISSING: wait for an image built in the
# background (PID, its output in LOG, started at T0); VAR gets its
# directory (LOG's last line), or nothing and the note MISSING if it was
# not finished.  The time goes in the timings under LABEL.
bg_image() {
	local var=$1 pid=$2 log=$3 t0=$4 label=$5 missing=$6 dir t
	wait "$pid"
	dir=$(tail -n 1 "$log")
	if [ -f "$dir/.done" ]; then
		t=$(( $(date +%s) - t0 ))
		timed "$label ($( [ $t -le 5 ] && echo cached || echo built))" $t
	else
		dir=
		tail -n 20 "$log" | sed 's/^/  /'
		note "$missing"
	fi
	printf -v "$var" '%s' "$dir"
}

# The container rootfs and the arm64 build image, built beside the base
# image, are needed from here.
bg_image ctroot "$ctpid" "$ctlog" "$t_ct" "container rootfs ($debian)" \
	"no container rootfs: the systemd containers will fail"
if [ -n "$armpid" ]; then
	bg_image arm64 "$armpid" "$armlog" "$t_arm" "arm64 image" \
		"no arm64 build image: scenarios 8 and 10 will fail"
	[ $demo -eq 1 ] && sed 's/^/  /' "$armlog" >&2
fi
t1=$(date +%s)

if [ $prepare -eq 1 ]; then
	"$cloud/fetch-foreign.sh" arm64 "$build" || note "no arm64 busybox: scenario 3 will fail"
	printf '%s\n' "${timings[@]}"
	# (the arm64 image only where the scenarios need it: armpid)
	if [ -n "$base" ] && [ -n "$ctroot" ] && { [ -n "$arm64" ] || [ -z "$armpid" ]; }; then
		note "prepared the images for $debian in $((t1 - t_all)) s"
		exit 0
	fi
	note "could not prepare every image for $debian (the run will try again)"
	exit 1
fi

rm -rf "$run"
mkdir -p "$logs"
"$cloud/fetch-foreign.sh" arm64 "$build" || note "no arm64 busybox: scenario 3 will fail"
[ -f "$build/$kver/shiftfs.ko" ] || note "$build/$kver/shiftfs.ko is missing (make module KVER=$kver)"
[ -x "$build/shiftctl/shiftctl" ] || note "$build/shiftctl/shiftctl is missing (make shiftctl)"
CTROOT=$ctroot "$cloud/mkpayload.sh" "$kver" "$build" "$run/payload.img" || exit 1
"$cloud/mkseed.sh" "$run/seed.img" || exit 1
qemu-img create -q -f qcow2 -b "$base/base.qcow2" -F qcow2 "$run/overlay.qcow2" || exit 1
disks=("$run/overlay.qcow2" "$run/payload.img")
arm64_disk=
if [ -n "$arm64" ]; then
	qemu-img create -q -f qcow2 -b "$arm64/arm64.img" -F raw "$run/arm64.qcow2" || exit 1
	arm64_disk=$run/arm64.qcow2
fi
t2=$(date +%s)
timed "payload, seed, overlay" $((t2 - t1))

# /dev/kvm may exist and hang: the fast tier's probe and cached verdict
# (tests/lib/kvm-probe.sh), BUILD_DIR/accel; the boot itself,
# tests/lib/cloud-guest.sh.
# shellcheck source=../lib/cloud-guest.sh
. "$here/../lib/cloud-guest.sh"
cloud_guest_accel "$build" "$base/vmlinuz"
accel=$CLOUD_ACCEL

console=$logs/console.log
tap=$logs/tap.log
: > "$console"
: > "$tap"
append=
[ -n "$tests" ] && append="shiftfs.e2e.tests=$tests"
# E2E_LXC_CYCLES=N: start/stop cycles of the LXC lifecycle scenario (s6;
# default 50, some 5-10 s each under TCG), with room for them in the
# per-scenario timeout.
if [ -n "${E2E_LXC_CYCLES:-}" ]; then
	append="$append shiftfs.e2e.lxc_cycles=$E2E_LXC_CYCLES"
	append="$append shiftfs.e2e.timeout=$((600 + 15 * E2E_LXC_CYCLES))"
fi

# boot_guest CONSOLE TAP SEED APPEND: one boot of the guest's disks, its
# TAP shown as it comes (the demo's narration with -d); qrc, its exit.
boot_guest() {
	local console=$1 tap=$2 seed=$3 append=$4 qpid ppid_
	cloud_guest_start "$limit" "$base/vmlinuz" "$base/initrd.img" "$append" \
		"$console" "$tap" "$logs/qemu.log" "${disks[@]}" "$seed" ${arm64_disk:+"$arm64_disk"}
	qpid=$CLOUD_QPID

	# Progress while the guest boots (until it speaks on the TAP port).
	(
		while kill -0 $qpid 2>/dev/null && [ ! -s "$tap" ]; do
			sleep 10
			[ -s "$tap" ] && break
			last=$(tr -d '\r' < "$console" | grep -aE 'Reached target|Starting|Started|cloud-init|Cloud-init|Run /init|EXT4-fs' |
				tail -n 1 | sed -E 's/^\[[ 0-9.]+\] //; s/\x1b\[[0-9;]*m//g' | cut -c1-70)
			echo "run-e2e: booting... $(( $(date +%s) - t3 ))s${last:+  ($last)}"
		done
	) &
	ppid_=$!

	if [ $demo -eq 1 ]; then
		# The narration: the scenarios' "# " lines, without TAP bookkeeping
		# (tests/lib/tap.sh's "ok N NAME" lines as [ok], [FAILED], [skipped]).
		tail -n +1 -f --pid=$qpid "$tap" 2>/dev/null | tr -d '\r' |
			sed -u -n -e '/^# program: /{s/^# program: /\n>>> /;p;d}' \
				-e '/^# exit: \|^# time: \|^1\.\./d' \
				-e 's/^# \{0,1\}//p' \
				-e 's/^not ok [0-9]* /   [FAILED] /p' \
				-e 's/^ok [0-9]* \(.*\) # SKIP \(.*\)/   [skipped] \1 (\2)/p' \
				-e 's/^ok [0-9]* /   [ok] /p'
	else
		tail -n +1 -f --pid=$qpid "$tap" 2>/dev/null | tr -d '\r'
	fi
	wait $qpid
	qrc=$?
	kill $ppid_ 2>/dev/null
	wait $ppid_ 2>/dev/null
}

note "booting the $debian cloud image ($kver, $accel), logs in $logs/"
t3=$(date +%s)
boot_guest "$console" "$tap" "$run/seed.img" "$append"
t4=$(date +%s)
# First TAP line (the guest driver's hello) marks the end of the boot.
boot=$(grep -am1 'after boot' "$tap" | sed -nE 's/.* ([0-9.]+)s after boot.*/\1/p')
timed "guest boot (to cloud-init runcmd)" "${boot:-?}"

# A scenario that needs the guest rebooted (scenario 10: declared marks
# come back) ends the first boot with "# e2e-reboot: LIST": the same
# disks boot again, with a fresh seed (cloud-init runs the driver again),
# for the scenarios of LIST.  Its logs go beside the first's, its TAP
# after it.
again=$(tr -d '\r' < "$tap" | sed -n 's/^# e2e-reboot: //p' | tail -n 1)
consoles=$console
if [ -n "$again" ] && [ $qrc -eq 0 ]; then
	note "the guest asked for a reboot: booting it again for $again"
	"$cloud/mkseed.sh" "$run/seed2.img" || exit 1
	boot_guest "$logs/console2.log" "$logs/tap2.log" "$run/seed2.img" \
		"${append/shiftfs.e2e.tests=$tests/} shiftfs.e2e.tests=$again"
	consoles="$console $logs/console2.log"
	cat "$logs/tap2.log" >> "$tap"
	t5=$(date +%s)
	timed "guest boot 2 (qemu)" $((t5 - t4))
	t4=$t5
fi
while read -r _ _ name secs; do
	timed "  scenario $name" "${secs%s}"
done < <(tr -d '\r' < "$tap" | grep -a '^# time: ')
timed "guest total (qemu)" $((t4 - t3))
[ $keep -eq 1 ] || rm -f "$run/overlay.qcow2" "$run/arm64.qcow2"

failed_reasons=
if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	failed_reasons="guest TIMEOUT after ${limit}s (killed)"
fi
if grep -aq '^SHIFTFS-E2E-ERROR' "$tap"; then
	failed_reasons="${failed_reasons:+$failed_reasons; }$(grep -a '^SHIFTFS-E2E-ERROR' "$tap" | tr -d '\r' | head -n 1)"
fi
for c in $consoles; do
	t=$tap
	[ "$c" = "$console" ] || t=$logs/tap2.log
	if ! grep -aq '^SHIFTFS-E2E-DONE' "$t"; then
		failed_reasons="${failed_reasons:+$failed_reasons; }guest did not finish (crash or hang; see $c)"
	fi
	if ! grep -aq '^SHIFTFS-DMESG-END' "$c"; then
		failed_reasons="${failed_reasons:+$failed_reasons; }guest kernel log incomplete ($c)"
	fi
	if ! kbad=$("$top/tests/scan-kernel-log.sh" "$c"); then
		echo "run-e2e: kernel log reports ($c):"
		echo "$kbad" | sed 's/^/  /' | head -n 40
		failed_reasons="${failed_reasons:+$failed_reasons; }kernel log shows WARN/BUG/Oops/lockdep/refcount reports"
	fi
done

echo "run-e2e: timings"
printf '  %s\n' "${timings[@]}"
echo "  $(printf '%-28s %5ss' "e2e total" $(( $(date +%s) - t_all )))"

# Count TAP results per scenario (tests/tap-summary.awk).
awk -v reasons="$failed_reasons" -f "$top/tests/tap-summary.awk" "$tap"
