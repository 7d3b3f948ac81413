#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Prove that the guest runner fails a run whose kernel log is not clean
# or whose TAP does not add up: first on canned kernel logs and TAP
# streams (no guest; every report class of scan-kernel-log.sh and every
# failure rule of tap-summary.awk), and the benchmark's MET/MISSED
# verdicts on canned results, then with a real guest that loads a module
# which WARNs.  Prints TAP and "N passed, N failed".
#
#   tests/runner-selftest.sh KVER BUILD_DIR
set -u
kver=$1
build=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/tap.sh"

# check RC NAME: ok if RC is 0.
check() {
	if [ "$1" = 0 ]; then
		tap_ok "$2"
	else
		tap_not_ok "$2"
	fi
}

tap_start
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '[    1.0] Linux version 6.1\n[    2.0] shiftfs-init: running x\n' > "$tmp/clean"
"$here/scan-kernel-log.sh" "$tmp/clean" >/dev/null
check $? "scan accepts a clean log"

# The boot-crash rule (tests/boot-crash.sh): a guest kernel that crashed
# while booting, before its init wrote anything and before any module
# was loaded, is the emulator's and is booted once more; nothing else is.
printf '[    5.5] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI\r\n[    5.6] Modules linked in:\r\n[    5.7] Kernel panic - not syncing: Fatal exception in interrupt\r\n' > "$tmp/bc-oops"
: > "$tmp/bc-notap"
printf 'TAP version 13\n' > "$tmp/bc-tap"
printf '[    9.0] Oops: 0000 [#1] PREEMPT SMP NOPTI\n[    9.1] Modules linked in: shiftfs(O) loop\n' > "$tmp/bc-module"
printf '[    1.0] Linux version 6.1\n' > "$tmp/bc-hang"
"$here/boot-crash.sh" "$tmp/bc-oops" "$tmp/bc-notap"
check $? "boot-crash: an oops before the init and any module is booted once more"
! "$here/boot-crash.sh" "$tmp/bc-module" "$tmp/bc-notap"
check $? "boot-crash: an oops with a module loaded is not"
! "$here/boot-crash.sh" "$tmp/bc-oops" "$tmp/bc-tap"
check $? "boot-crash: an oops after the init wrote TAP is not"
! "$here/boot-crash.sh" "$tmp/bc-hang" "$tmp/bc-notap"
check $? "boot-crash: a boot that stops without an oops is not"

# One report of each class the scan looks for (a WARN in the format of
# 6.x, then of 7.x: file:line at function, then the CPU).
for report in \
	'WARNING: CPU: 1 PID: 77 at fs/shiftfs/inode.c:12 shiftfs_x+0x1/0x2' \
	'WARNING: inode.c:12 at shiftfs_x+0x10/0xff0 [shiftfs], CPU#0: insmod/120' \
	'BUG: kernel NULL pointer dereference, address: 0000000000000008' \
	'refcount_t: underflow; use-after-free.' \
	'WARNING: possible circular locking dependency detected' \
	'------------[ cut here ]------------' \
	'kernel BUG at fs/shiftfs/super.c:120!' \
	'Oops: 0000 [#1] PREEMPT SMP NOPTI' \
	'general protection fault, probably for non-canonical address 0xdead: 0000 [#1]' \
	'Kernel panic - not syncing: Fatal exception' \
	'WARNING: possible recursive locking detected' \
	'INFO: lockdep is turned off.' \
	'WARNING: inconsistent lock state' \
	'list_add corruption. prev->next should be next (ffff8880), but was 0.' \
	'list_del corruption, ffff888003e0 ->next is LIST_POISON1 (dead000000000100)' \
	'UBSAN: shift-out-of-bounds in fs/shiftfs/idmap.c:40:12' \
	'INFO: task shiftfs_stress:123 blocked for more than 120 seconds.' \
	'BUG: unable to handle page fault for address: ffffc90000000000' \
	'Unable to handle kernel paging request at virtual address 0000000000000008' \
	'Kernel panic - not syncing: stack-protector: Kernel stack is corrupted in: shiftfs_x' \
	'VFS: Busy inodes after unmount of shiftfs (shiftfs)' \
	'kmemleak: 3 new suspected memory leaks (see /sys/kernel/debug/kmemleak)' \
	'Leaked POSIX lock on dev=0x0:0x1a ino=0x7  fl_owner=0000000029e6f5e' \
	'BUG: KASAN: slab-use-after-free in shiftfs_d_release+0x4d/0x60 [shiftfs]' \
	'WARNING: suspicious RCU usage' \
	'WARNING: bad unlock balance detected!' \
	'BUG: sleeping function called from invalid context at kernel/locking/mutex.c:580' \
	'ODEBUG: free active (active state 0) object: ffff8880 object type: rcu_head hint: 0x0' \
	'unreferenced object 0xffff888004f5a380 (size 128):' \
	'UBSAN: array-index-out-of-bounds in fs/shiftfs/idmap.c:22:5'; do
	printf '[    1.0] boot\n[    3.0] %s\n' "$report" > "$tmp/bad"
	"$here/scan-kernel-log.sh" "$tmp/bad" >/dev/null
	[ $? -eq 1 ]
	check $? "scan rejects: $(echo "$report" | cut -c1-40)"
done 2>/dev/null

# A test program's own TAP line that quotes a report is not the kernel's.
printf '[    1.0] boot\nok 3 - no WARNING: CPU: in dmesg\n# BUG: expected text\n' > "$tmp/tapish"
"$here/scan-kernel-log.sh" "$tmp/tapish" >/dev/null
check $? "scan ignores TAP lines quoting a report"

# A log that cannot be read is an error, not a clean log.
"$here/scan-kernel-log.sh" "$tmp/no-such-log" >/dev/null 2>&1
[ $? -eq 2 ]
check $? "scan fails on a missing log (exit 2)"

# tap-summary.awk on canned TAP streams: summary TAP [-v var=value]...
# runs it; $sum_rc is its exit status, $sum_out its output.
summary() {
	local tapfile="$1"
	shift
	sum_out=$(awk "$@" -f "$here/tap-summary.awk" "$tapfile")
	sum_rc=$?
}
# expect NAME RC LAST-LINE [PATTERN]: the last run exited RC, ended with
# LAST-LINE and (if given) printed PATTERN.
expect() {
	if [ "$sum_rc" -eq "$2" ] && [ "$(echo "$sum_out" | tail -n 1)" = "$3" ] &&
	   { [ -z "${4:-}" ] || echo "$sum_out" | grep -q -- "$4"; }; then
		check 0 "summary: $1"
	else
		echo "$sum_out" | sed 's/^/# /'
		echo "# exit $sum_rc"
		check 1 "summary: $1"
	fi
}
prog() { # prog NAME RC LINES...: one program's TAP block
	local name="$1" rc="$2"
	shift 2
	echo "# program: $name"
	printf '%s\n' "$@"
	echo "# exit: $name $rc"
}

{ prog a 0 1..2 'ok 1 x' 'ok 2 y'; prog b 0 1..1 'ok 1 - z # SKIP no xattrs'; } > "$tmp/t"
summary "$tmp/t"
expect "a clean stream passes, skips counted apart" 0 "2 passed, 0 failed, 1 skipped" "b: z # SKIP no xattrs"

prog a 1 1..2 'ok 1 x' 'not ok 2 y' > "$tmp/t"
summary "$tmp/t"
expect "a not ok fails, once" 1 "1 passed, 1 failed" "a: y"

prog a 139 1..3 'ok 1 x' > "$tmp/t"
summary "$tmp/t"
expect "a program that stops short of its plan fails" 1 "1 passed, 2 failed" "2 planned tests never reported"

prog a 0 'ok 1 x' > "$tmp/t"
summary "$tmp/t"
expect "a program with no plan fails" 1 "1 passed, 1 failed" "a: printed no TAP plan"

prog a 3 1..1 'ok 1 x' > "$tmp/t"
summary "$tmp/t"
expect "a program exiting non-zero with all ok fails" 1 "1 passed, 1 failed" "a: exited 3"

: > "$tmp/t"
summary "$tmp/t"
expect "an empty stream (no test ran) fails" 1 "0 passed, 1 failed" "no test ran"

prog a 0 1..1 'ok 1 x' > "$tmp/t"
summary "$tmp/t" -v reasons="guest TIMEOUT after 5s"
expect "the runner's own reason fails an all-ok stream" 1 "1 passed, 1 failed" "guest: guest TIMEOUT"

prog bench 0 'ok 1 - bench ran' > "$tmp/t"
summary "$tmp/t" -v cmdmode=bench
expect "a command run needs no plan" 0 "1 passed, 0 failed"

printf '# program: a\r\n1..1\r\nok 1 x\r\n# exit: a 0\r\n' > "$tmp/t"
summary "$tmp/t"
expect "CRLF from the serial port is read as LF" 0 "1 passed, 0 failed"

# The benchmark's targets (report() of tests/bench/bench, taken
# from the guest script and run here on canned raw results): MET, MISSED
# and NOT MEASURED must follow the figures.  bench_targets LINES...
# prints NAME<tab>STATE per target.
# (The awk program's own functions end in "}" at column 0 too: the
# function ends after the line that closes the awk program.)
bench_report=$(sed -n '/^report() {$/,/^}'"'"' "\$RAW"$/p' "$here/bench/bench")
[ -n "$bench_report" ] && bench_report="$bench_report
}"

bench_targets() (
	W=$tmp/bench RAW=$tmp/bench/raw.txt NA=$tmp/bench/na.txt
	COLS=${COLS:-plain shiftfs overlayfs idmapped bindfs chown} REPS=1 BUDGET=900 CLOCK=wall
	META_FILES=10 META_DIRS=1 DATA_MIB=1 RAND_COUNT=1 TREE_MIB=1 MEM_FILES=10
	SECTIONS=${SECTIONS:-meta} PAR_FILES=10 PAR_DIRS=1 PAR_PASSES=1 PAR_REPS=2
	META_PATHS=relative
	rm -rf "$W"
	mkdir -p "$W"
	: > "$NA"
	for l in "$@"; do
		case $l in
		na\ *) echo "${l#na }" >> "$NA" ;;
		*) echo "$l" >> "$RAW" ;;
		esac
	done
	elapsed() { echo 1; }
	eval "$bench_report"
	report > /dev/null 2>&1
	if [ -n "${BENCH_MD:-}" ]; then
		cat "$W/results.md"
		return
	fi
	sed 1d "$W/results.csv.targets" | awk -F'"' '{ split($3, f, ","); print $2 "\t" f[2] }'
)
# expect_target NAME-PREFIX STATE OUTPUT WHAT
expect_target() {
	if echo "$3" | awk -F'\t' -v n="$1" -v s="$2" \
		'index($1, n) == 1 && $2 == s { found = 1 } END { exit !found }'; then
		check 0 "bench: $4"
	else
		echo "$3" | sed 's/^/# /'
		check 1 "bench: $4"
	fi
}
if [ -z "$bench_report" ]; then
	check 1 "bench: report() found in tests/bench/bench"
else
	good="meta ext4 create plain 1.00|meta ext4 create shiftfs 1.05|meta ext4 create bindfs 10|data ext4 write plain 1.00|data ext4 write shiftfs 1.02|shift ext4 10k shiftfs 0.10|shift ext4 100k shiftfs 0.12"
	IFS='|'
	out=$(bench_targets $good)
	unset IFS
	expect_target "shiftfs <= 1.10x plain, every metadata" MET "$out" "metadata 1.05x is MET"
	expect_target "shiftfs <= 1.03x plain, every data" MET "$out" "data 1.02x is MET"
	expect_target "shiftfs >= 5x faster than bindfs" MET "$out" "bindfs 9.5x slower is MET"
	expect_target "shiftfs mount time flat" MET "$out" "mount time 1.2x is MET"
	IFS='|'
	out=$(bench_targets $(echo "$good" | sed -e 's/create shiftfs 1.05/create shiftfs 1.20/' \
		-e 's/write shiftfs 1.02/write shiftfs 1.05/' -e 's/bindfs 10/bindfs 2/' \
		-e 's/100k shiftfs 0.12/100k shiftfs 0.20/'))
	unset IFS
	expect_target "shiftfs <= 1.10x plain, every metadata" MISSED "$out" "metadata 1.20x is MISSED"
	expect_target "shiftfs <= 1.03x plain, every data" MISSED "$out" "data 1.05x is MISSED"
	expect_target "shiftfs >= 5x faster than bindfs" MISSED "$out" "bindfs 1.9x slower is MISSED"
	expect_target "shiftfs mount time flat" MISSED "$out" "mount time 2x is MISSED"
	IFS='|'
	out=$(bench_targets $good "meta ext4 stat plain 1.00")
	unset IFS
	expect_target "shiftfs <= 1.10x plain, every metadata" MISSED "$out" "a missing shiftfs cell is MISSED, not MET"
	IFS='|'
	out=$(bench_targets $good "na ext4 shiftfs module did not load")
	unset IFS
	expect_target "shiftfs <= 1.10x plain, every metadata" "NOT MEASURED" "$out" "shiftfs n/a is NOT MEASURED"
	# Against overlayfs: a verdict per metadata cell, the slab per
	# cached file, and io_uring reads within 5 % of plain.
	ovl="meta ext4 create plain 1.00|meta ext4 create shiftfs 1.05|meta ext4 create overlayfs 1.10|meta tmpfs stat-warm plain 1.00|meta tmpfs stat-warm shiftfs 1.20|meta tmpfs stat-warm overlayfs 1.19|mem ext4 slab-delta-kB plain 10|mem ext4 files plain 10|mem ext4 slab-delta-kB shiftfs 18|mem ext4 files shiftfs 10|mem ext4 slab-delta-kB overlayfs 20|mem ext4 files overlayfs 10|data ext4 uring-read-4k-qd16 plain 1.00|data ext4 uring-read-4k-qd16 shiftfs 1.04|data ext4 uring-read-4k-qd16 overlayfs 1.04"
	IFS='|'
	out=$(SECTIONS="meta data mem" bench_targets $ovl)
	unset IFS
	expect_target "shiftfs <= overlayfs, ext4 create" MET "$out" "shiftfs 1.05x under overlayfs 1.10x is MET"
	expect_target "shiftfs <= overlayfs, tmpfs stat-warm" MISSED "$out" "shiftfs 1.20x over overlayfs 1.19x is MISSED"
	expect_target "extra slab per cached file: shiftfs <= overlayfs" MET "$out" "slab 819 B under overlayfs 1024 B is MET"
	expect_target "shiftfs io_uring 4 KiB reads" MET "$out" "io_uring 1.04x plain is MET"
	IFS='|'
	out=$(SECTIONS="meta data mem" bench_targets $(echo "$ovl" | sed -e 's/delta-kB shiftfs 18/delta-kB shiftfs 22/' \
		-e 's/qd16 shiftfs 1.04/qd16 shiftfs 1.06/' -e 's/create overlayfs 1.10/create overlayfs 1.04/'))
	unset IFS
	expect_target "shiftfs <= overlayfs, ext4 create" MISSED "$out" "shiftfs 1.05x over overlayfs 1.04x is MISSED"
	expect_target "extra slab per cached file: shiftfs <= overlayfs" MISSED "$out" "slab 1229 B over overlayfs 1024 B is MISSED"
	expect_target "shiftfs io_uring 4 KiB reads" MISSED "$out" "io_uring 1.06x plain is MISSED"
	IFS='|'
	out=$(bench_targets $ovl "na tmpfs overlayfs mount failed: no upper")
	unset IFS
	expect_target "shiftfs <= overlayfs, tmpfs stat-warm" "NOT MEASURED" "$out" "overlayfs n/a on tmpfs is NOT MEASURED"
	expect_target "shiftfs <= overlayfs, ext4 create" MET "$out" "overlayfs n/a on tmpfs leaves ext4 judged"
	IFS='|'
	out=$(bench_targets $(echo "$ovl" | sed 's/|meta tmpfs stat-warm overlayfs 1.19//'))
	unset IFS
	expect_target "shiftfs <= overlayfs, tmpfs stat-warm" MISSED "$out" "a missing overlayfs cell is MISSED, not MET"
	IFS='|'
	out=$(COLS="plain shiftfs" bench_targets $ovl)
	unset IFS
	expect_target "shiftfs <= overlayfs, ext4 create" "NOT MEASURED" "$out" "no overlayfs column is NOT MEASURED"
	# The parallel section (a boot of its own, wall clock): the fastest
	# repeat of each cell, its ratio to plain at the same N, and the
	# time of N workers over that of one per column.
	out=$(BENCH_MD=1 SECTIONS=par bench_targets "par ext4 stat-N1 plain 0.90" \
		"par ext4 stat-N1 plain 0.50" "par ext4 stat-N1 shiftfs 0.60" \
		"par ext4 stat-N1 shiftfs 0.70" "par ext4 stat-N2 plain 0.50" \
		"par ext4 stat-N2 plain 0.55" "par ext4 stat-N2 shiftfs 1.20" \
		"par ext4 stat-N2 shiftfs 0.90")
	for want in "| ext4 stat-N1 | 500 ms (1.00x) | 600 ms (1.20x) | - |" \
	    "| ext4 stat-N2 | 500 ms (1.00x) | 900 ms (1.80x) | - |" \
	    "| ext4 stat-N2 / stat-N1 | 1.00 | 1.50 | - |"; do
		if echo "$out" | grep -qxF -- "$want"; then
			check 0 "bench: parallel section shows '$want'"
		else
			echo "$out" | sed 's/^/# /'
			check 1 "bench: parallel section shows '$want'"
		fi
	done
	if echo "$out" | grep -q "Targets"; then
		check 1 "bench: the parallel boot alone judges no targets"
	else
		check 0 "bench: the parallel boot alone judges no targets"
	fi
fi

# A real guest whose kernel WARNs while every test program passes must be
# reported as failed, and say why; in the same boot, a shiftfs mount left
# after the tests must fail the guest's teardown.
"$here/run-guest.sh" -s warn,plant-mount -t NO_SUCH_TEST_PROGRAM "$kver" "$build" > "$tmp/run" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q 'WARN' "$tmp/run" &&
   grep -q 'shiftfs_selftest_warn' "$tmp/run"; then
	check 0 "runner fails a guest run whose kernel WARNs"
else
	sed 's/^/# /' "$tmp/run"
	check 1 "runner fails a guest run whose kernel WARNs"
fi
if [ $rc -ne 0 ] && grep -q '^  teardown: no shiftfs mount left (1) and the module unloads' "$tmp/run"; then
	check 0 "the teardown fails a run that leaves a shiftfs mount"
else
	sed 's/^/# /' "$tmp/run"
	check 1 "the teardown fails a run that leaves a shiftfs mount"
fi
tap_done
