#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs in the fstests guest as its init (tests/fstests/run.sh boots it):
# for each base filesystem, fstests on the plain base fs (the baseline),
# then through shiftfs stacked on it with each map configuration, all in
# this one boot; the results go back to the host as a tar written to the
# disk with serial "out".  Not meant to be run by hand.
#
# It reads /job/params (sourced): FT_BASES, FT_MAPS, FT_GROUPS, FT_TESTS.  The
# disks are found by their serial numbers: test, scratch, logw, out.
# Per configuration it writes DIR/summary (ran=, passed=, failed=,
# notrun=, secs=, and the failed/notrun test lists), DIR/check.out and
# fstests' results/ tree, DIR being BASE-MAP (MAP "base" for the
# baseline).
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 HOME=/root

say() { echo "fstests-guest: $*" > /dev/ttyS0; echo "fstests-guest: $*" > /dev/kmsg; }

finish() {
	say "done, writing the results"
	echo "SHIFTFS-DMESG-BEGIN" > /dev/ttyS0
	dmesg > /out/dmesg.txt 2>&1
	dmesg > /dev/ttyS0 2>&1
	echo "SHIFTFS-DMESG-END" > /dev/ttyS0
	if [ -n "${outdev:-}" ]; then
		tar -C /out -cf "$outdev" . && sync
	fi
	echo "SHIFTFS-GUEST-DONE" > /dev/ttyS0
	echo o > /proc/sysrq-trigger
	sleep 30
}

# /proc, /sys and /dev come moved from the initramfs.
mkdir -p /dev/pts /dev/shm /run /tmp
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# What udev or systemd would link: bash's <(...) needs /dev/fd (fstests'
# _require_fio greps fio's engines through it).
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
for i in 0:stdin 1:stdout 2:stderr; do
	[ -e "/dev/${i#*:}" ] || ln -s "/proc/self/fd/${i%%:*}" "/dev/${i#*:}"
done
mount -o remount,rw /
hostname fstests
# fstests' second user has a group of its own (generic/597, 598).
getent group fsgqa2 > /dev/null || { groupadd fsgqa2 && usermod -g fsgqa2 fsgqa2; }
# Loopback: some tests talk to themselves over TCP (generic/131's locktest).
busybox ip link set lo up
mkdir -p /out

# shellcheck source=/dev/null
. /job/params
mkdir -p /lib/modules
mount --bind /job/lib/modules /lib/modules
for m in loop xfs dm-mod dm-flakey dm-log-writes dm-snapshot dm-thin-pool dm-zero dm-delay; do
	modprobe "$m" 2>/dev/null || say "modprobe $m failed (tests needing it will not run)"
done
if ! modprobe shiftfs; then
	say "ERROR: shiftfs.ko did not load"
	echo "shiftfs.ko did not load" > /out/ERROR
fi
# udev makes /dev/mapper names and /dev/disk links as fstests expects.
if [ -x /lib/systemd/systemd-udevd ]; then
	/lib/systemd/systemd-udevd --daemon >/dev/null 2>&1
	udevadm trigger >/dev/null 2>&1
	udevadm settle -t 60 >/dev/null 2>&1
fi

dev_of() {
	for d in /sys/block/vd*; do
		[ "$(cat "$d/serial" 2>/dev/null)" = "$1" ] && { echo "/dev/${d##*/}"; return 0; }
	done
	return 1
}
outdev=$(dev_of out) || { say "ERROR: no disk with serial out"; finish; }
run_all() {
if ! { testdev=$(dev_of test) && scratchdev=$(dev_of scratch) && logwdev=$(dev_of logw); }; then
	say "ERROR: a disk is missing (serials test scratch logw)"
	return 1
fi

cd /opt/fstests || return 1
# What fstests' _require_fio looks at, kept for when fio tests do not run.
fio --enghelp > /out/fio-enghelp.txt 2>&1
# fstests' files as tests/fstests/shiftfs.patch leaves them (patched on
# the host, where run.sh checked that it applies).
cp /job/fstests-patched/common/* common/ || return 1

# The two map configurations.  identity: every id to itself.  shifted:
# 0 stays 0; every other id is rotated by 1000000 on disk (disk 1000001..
# is 1.. in the mount, disk 1..1000000 the top of the range), so that
# fsgqa (1000) writes as 1001000 on disk: a full bijection, no id lost.
map_opts() {
	case $1 in
	identity) m=0:0:4294967295; echo "-o uidmap=$m,gidmap=$m" ;;
	shifted)
		u="uidmap=0:0:1,uidmap=1000001:1:4293967294,uidmap=1:4293967295:1000000"
		echo "-o $u,${u//uidmap/gidmap}" ;;
	*) return 1 ;;
	esac
}

mkdir -p /mnt/test /mnt/scratch /mnt/base-test /mnt/base-scratch
sel=()
# A group without a directory is generic's: the baseline on ext4 or xfs
# must run the same tests as shiftfs (fstests would add ext4/ or xfs/).
for g in $FT_GROUPS; do
	case $g in */*) ;; *) g=generic/$g ;; esac
	sel+=(-g "$g")
done
for t in $FT_TESTS; do sel+=("$t"); done

for base in $FT_BASES; do
	case $base in
	ext4) mkfs="mkfs.ext4 -q -F" ;;
	xfs) mkfs="mkfs.xfs -q -f" ;;
	*) say "ERROR: base fs $base unknown"; continue ;;
	esac
	# shiftfs first, the baseline after: a broken stack shows early.
	for map in $FT_MAPS base; do
		name=$base-$map
		res=/out/$name
		mkdir -p "$res"
		# A fresh test fs for each configuration.
		umount /mnt/test /mnt/base-test /mnt/scratch /mnt/base-scratch 2>/dev/null
		$mkfs "$testdev" > "$res/mkfs.log" 2>&1
		if [ "$map" = base ]; then
			cat > local.config <<-EOF
			export FSTYP=$base
			export TEST_DEV=$testdev TEST_DIR=/mnt/test
			export SCRATCH_DEV=$scratchdev SCRATCH_MNT=/mnt/scratch
			export LOGWRITES_DEV=$logwdev
			EOF
		else
			cat > local.config <<-EOF
			export FSTYP=shiftfs SHIFTFS_BASE_FSTYP=$base
			export SHIFTFS_MOUNT_OPTIONS="$(map_opts "$map")"
			export TEST_DEV=$testdev TEST_DIR=/mnt/test SHIFTFS_BASE_TEST_DIR=/mnt/base-test
			export SCRATCH_DEV=$scratchdev SCRATCH_MNT=/mnt/scratch SHIFTFS_BASE_SCRATCH_MNT=/mnt/base-scratch
			export LOGWRITES_DEV=$logwdev
			EOF
		fi
		cp local.config "$res/local.config"
		rm -rf results
		say "$name: ./check ${sel[*]}"
		t0=$(date +%s)
		timeout -k 30 "$FT_CONFIG_TIMEOUT" ./check "${sel[@]}" 2>&1 |
			tee "$res/check.out" > /dev/ttyS0
		crc=${PIPESTATUS[0]}
		t1=$(date +%s)
		hung=
		if [ "$crc" -eq 124 ] || [ "$crc" -eq 137 ]; then
			# The test that was running: the last one without a result.
			hung=$(tail -n 1 "$res/check.out" | awk '$1 ~ /^[a-z0-9]+\/[0-9]+$/ && NF == 1 { print $1 }')
			say "$name: TIMEOUT after ${FT_CONFIG_TIMEOUT}s in ${hung:-?}; stacks in $name/stacks.txt"
			ps -eo pid,stat,wchan:32,args > "$res/ps.txt" 2>&1
			for p in /proc/[0-9]*; do
				case $(cat "$p/comm" 2>/dev/null) in
				xfs_io|su|bash|fsstress|rm|cp|mv|stat|touch|umount|mount|sync|timeout) ;;
				*) continue ;;
				esac
				echo "== ${p#/proc/} $(tr '\0' ' ' < "$p/cmdline" 2>/dev/null)"
				cat "$p/stack" 2>/dev/null
			done > "$res/stacks.txt"
			echo w > /proc/sysrq-trigger
		fi
		cp -a results "$res/results" 2>/dev/null
		umount -l /mnt/test /mnt/base-test /mnt/scratch /mnt/base-scratch 2>/dev/null
		ran=$(sed -n 's/^Ran: //p' "$res/check.out" | tail -n 1)
		notrun=$(sed -n 's/^Not run: //p' "$res/check.out" | tail -n 1)
		failed=$(sed -n 's/^Failures: //p' "$res/check.out" | tail -n 1)
		if [ -n "$hung" ]; then
			# check was killed before its "Ran:": the lists from the
			# tests' own lines.
			ran=$(awk '$1 ~ /^[a-z0-9]+\/[0-9]+$/ && NF > 1 { print $1 }' "$res/check.out" | xargs)
			notrun=$(awk '$1 ~ /^[a-z0-9]+\/[0-9]+$/ && /\[not run\]/ { print $1 }' "$res/check.out" | xargs)
			failed=$(awk '$1 ~ /^[a-z0-9]+\/[0-9]+$/ && /\[failed/ { print $1 }' "$res/check.out" | xargs)
			ran="$ran $hung"
		fi
		# fstests' "Ran:" names the tests that were not run too.
		nnotrun=$(echo "$notrun" | wc -w)
		nran=$(( $(echo "$ran" | wc -w) - nnotrun ))
		nfailed=$(echo "$failed" "$hung" | wc -w)
		{
			echo "ran=$nran"
			echo "passed=$((nran - nfailed))"
			echo "failed=$nfailed"
			echo "notrun=$nnotrun"
			echo "secs=$((t1 - t0))"
			echo "failed_tests=$failed${hung:+ $hung}"
			echo "timeout=${hung:+$hung after ${FT_CONFIG_TIMEOUT}s}"
			echo "notrun_tests=$notrun"
			echo "ran_tests=$ran"
		} > "$res/summary"
		say "$name: $(head -n 5 "$res/summary" | tr '\n' ' ')"
		# What is done so far reaches the host even if a later
		# configuration hangs the guest.
		tar -C /out -cf "$outdev" . && sync
	done
done
}
run_all
finish
