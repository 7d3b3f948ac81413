#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The fast tier ("make check"): host unit tests, the install and make
# tests, the fast lint (shellcheck and checkpatch with their accept
# lists: make lint's parts that take seconds), the cloud-init schema and
# lint tests, the guest runner's own test, then the guest suite on each
# kernel (and with -e, for make test, the e2e tier).
# Each part ends with an "N passed, N failed" line; this adds them up and
# ends with its own.
#
#   tests/check.sh [-e "DEBIAN[:SCENARIOS]..."] "KVER..." BUILD_DIR [PATTERN]
#
# -e (make test): after the guest suites, the end-to-end tier once per
# entry, "13" (every scenario on Debian 13) or "12:s1,s4" (those on
# Debian 12), with make e2e-one; its summary line is "e2e Debian N".
set -u
e2e_runs=
if [ "${1:-}" = -e ]; then
	e2e_runs=$2
	shift 2
fi
[ $# -ge 2 ] || { echo "usage: $0 [-e \"DEBIAN[:SCENARIOS]...\"] \"KVER...\" BUILD_DIR [PATTERN]" >&2; exit 2; }
kvers=$1
build=$2
pattern=${3:-}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/lib/counts.sh"
logdir=$build/check
mkdir -p "$logdir"

passed=0
failed=0
skipped=0
summary=()

part_log() {
	echo "$logdir/$(echo "$1" | tr -c 'A-Za-z0-9.+_\n-' '_').log"
}

# timed LOG.time CMD...: run CMD, its wall clock and CPU time (its own
# and its children's, the guests' QEMU among them: "REAL USER SYS") in
# LOG.time.  The CPU times say how busy a part kept the cores, the sum
# how well the parts were packed onto them.
timed() {
	local out=$1
	shift
	{ TIMEFORMAT='%R %U %S'; time "$@" 2>&3; } 3>&2 2> "$out"
}

# run_part NAME CMD...: run a part, show its output, add up its counts.
run_part() {
	local name=$1 log rc
	shift
	log=$(part_log "$name")
	echo "==== $name"
	timed "$log.time" "$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	count_part "$name" "$log" "$rc"
}

# The guest suites run two at a time (GUEST_JOBS): a suite keeps about
# one of its two vCPUs busy, so a second one, or a build, uses the other
# core.  The e2e passes join the same pool (each guest keeps about one
# core busy too), and go first: each starts at the first free slot once
# its images are ready and its kernel's module is built, since a pass
# (Debian 13's: some 25 minutes) is the longest part of make test and
# the suites fill the slots around it.  Each part's output is shown,
# whole, when it ends.
guest_jobs=${GUEST_JOBS:-2}
case $guest_jobs in
''|0|*[!0-9]*) echo "check.sh: GUEST_JOBS='$guest_jobs' is not a number of guests (1, 2...)" >&2; exit 2 ;;
esac
# The parts in the slots, by pid; the kernels' builds and the e2e
# images, in the background beside them (no slot); what waits.
bg_pids=()
bg_names=()
build_pids=()
build_kvers=()
prep_pids=()
prep_debs=()
suites=()
e2e_pending=()
declare -A e2e_ready=() e2e_kver=() built=()
shiftctl_built=0

# start_part NAME CMD...: run a part in a free slot.
start_part() {
	local name=$1 log
	shift
	log=$(part_log "$name")
	echo "==== $name (started; shown when it ends)"
	timed "$log.time" "$@" > "$log" 2>&1 &
	bg_pids+=($!)
	bg_names+=("$name")
}

# drop ARRAY I: remove element I of the indexed array ARRAY.
drop() {
	local -n _a=$1
	_a=("${_a[@]:0:$2}" "${_a[@]:$(($2 + 1))}")
}

# wait_any: wait for whichever part, build or image build ends first:
# show and count a part, note a build (a failed one counts as a failure
# and its suite is not run) or the images.
wait_any() {
	local rc log pid i k deb
	wait -n -p pid "${bg_pids[@]}" "${build_pids[@]}" "${prep_pids[@]}"
	rc=$?
	for i in "${!build_pids[@]}"; do
		[ "${build_pids[$i]}" = "$pid" ] || continue
		k=${build_kvers[$i]}
		built[$k]=$rc
		log=$logdir/build-$k.log
		echo "==== build $k"
		part_time "$log.time"
		if [ $rc -ne 0 ]; then
			cat "$log"
			echo "check.sh: build for $k failed (log: $log)"
			failed=$((failed + 1))
			summary+=("$(printf '%-45s build FAILED  %s' "guest $k" "$PART_TIME")")
		else
			summary+=("$(printf '%-45s built  %s' "build $k" "$PART_TIME")")
		fi
		drop build_pids "$i"
		drop build_kvers "$i"
		return 0
	done
	for i in "${!prep_pids[@]}"; do
		[ "${prep_pids[$i]}" = "$pid" ] || continue
		deb=${prep_debs[$i]}
		e2e_ready[$deb]=1
		log=$logdir/e2e-prepare-$deb.log
		echo "==== e2e images, Debian $deb (background): exit $rc"
		grep -E '^(run-e2e: |[a-z].*  +[0-9]+s$)' "$log"
		part_time "$log.time"
		summary+=("$(printf '%-45s %s  %s' "e2e images (Debian $deb)" \
			"$([ $rc -eq 0 ] && echo ready || echo "exit $rc: the e2e pass builds them")" \
			"$PART_TIME")")
		drop prep_pids "$i"
		drop prep_debs "$i"
		return 0
	done
	i=0
	while [ "${bg_pids[$i]}" != "$pid" ]; do
		i=$((i + 1))
	done
	log=$(part_log "${bg_names[$i]}")
	echo "==== ${bg_names[$i]}"
	cat "$log"
	count_part "${bg_names[$i]}" "$log" "$rc"
	drop bg_pids "$i"
	drop bg_names "$i"
}

# free_slot: true when a slot is free.
free_slot() {
	[ ${#bg_pids[@]} -lt "$guest_jobs" ]
}

# start_ready: fill the free slots with what can start, the e2e passes
# first, then the suites in the kernels' order.
start_ready() {
	local r deb list k rest=()
	for r in "${e2e_pending[@]}"; do
		deb=${r%%:*}
		k=${e2e_kver[$deb]:-}
		# its images, and its kernel's build (or every build, for a
		# kernel make test does not build) ended
		if ! free_slot || [ -z "${e2e_ready[$deb]:-}" ] ||
			{ [ -z "${built[$k]:-}" ] && [ ${#build_pids[@]} -gt 0 ]; }; then
			rest+=("$r")
			continue
		fi
		# The host's shiftctl, built once here so that two passes'
		# makes do not build it at once.
		if [ $shiftctl_built -eq 0 ]; then
			make -s --no-print-directory -C "$top" shiftctl > "$logdir/e2e-shiftctl.log" 2>&1 ||
				cat "$logdir/e2e-shiftctl.log"
			shiftctl_built=1
		fi
		list=
		case $r in *:*) list=${r#*:} ;; esac
		start_part "e2e Debian $deb${list:+ ($list)}" \
			make -s --no-print-directory -C "$top" e2e-one DEBIAN="$deb" E2E_TESTS="$list"
	done
	e2e_pending=("${rest[@]}")
	rest=()
	for k in "${suites[@]}"; do
		if [ -z "${built[$k]:-}" ] || ! free_slot; then
			rest+=("$k")
		elif [ "${built[$k]}" -eq 0 ]; then
			# The runner's own test, once, on the first kernel.
			if [ "$k" = "$first_k" ] && [ -z "$pattern" ]; then
				run_part "runner self-test ($k)" "$top/tests/runner-selftest.sh" "$k" "$build"
			fi
			start_part "guest $k" "$top/tests/run-guest.sh" ${pattern:+-t "$pattern"} "$k" "$build"
		fi
	done
	suites=("${rest[@]}")
}

# part_time LOG.time: PART_TIME="(WALLs, cpu CPUs)" of a timed part,
# its CPU time added to cpu_total.
part_time() {
	local r u s
	PART_TIME="(no time)"
	read -r r u s < "$1" 2> /dev/null || return 0
	cpu_total=$(echo "$cpu_total $u $s" | awk '{ printf "%.0f", $1 + $2 + $3 }')
	PART_TIME=$(echo "$r $u $s" | awk '{ printf "(%.0fs, cpu %.0fs)", $1, $2 + $3 }')
}

# count_part NAME LOG RC: add up a finished part's counts.
count_part() {
	local name=$1 log=$2 rc=$3 counts p f s
	counts=$(part_counts "$log" "$rc") ||
		echo "check.sh: $name printed no result line (exit $rc)"
	read -r p f s <<< "$counts"
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	part_time "$log.time"
	summary+=("$(printf '%-45s %s passed, %s failed, %s skipped  %s' "$name" "$p" "$f" "$s" "$PART_TIME")")
	section "$log" SKIPPED "SKIP [$name]" >> "$logdir/skips"
	section "$log" FAILED "FAIL [$name]" >> "$logdir/fails"
}

# section LOG HEADING TAG: the "  " lines of LOG's HEADING: list (the
# runners' SKIPPED: and FAILED:, tests/tap-summary.awk), each tagged.
section() {
	grep -A 1000 "^$2:" "$1" | sed -n '2,/^[A-Z]*:$/p' | grep '^  ' |
		sed "s|^ *|  $3 |"
}

# run_after PID LOG.time CMD...: once PID (the previous build of its
# kind, if any) has ended, run CMD timed into LOG.time: the releases'
# images one after the other, and the kernels' builds.
run_after() {
	while [ -n "$1" ] && kill -0 "$1" 2> /dev/null; do
		sleep 2
	done
	shift
	timed "$@"
}

rm -f "$logdir/skips" "$logdir/fails"
cpu_total=0
# The first kernel: make lint's test and the runner's own test run on it.
first_k=$(echo "$kvers" | awk '{ print $1 }')
start=$(date +%s)
if [ -n "$e2e_runs" ] && [ -z "$pattern" ]; then
	prev=
	for r in $e2e_runs; do
		deb=${r%%:*}
		list=
		case $r in *:*) list=${r#*:} ;; esac
		e2e_pending+=("$r")
		e2e_kver[$deb]=$(make -s --no-print-directory -C "$top" e2e-kver DEBIAN="$deb")
		# One release after the other: the second waits for the first
		# (the arm64 image is shared, the network and dpkg too).
		run_after "$prev" "$logdir/e2e-prepare-$deb.log.time" \
			make -s --no-print-directory -C "$top" e2e-prepare DEBIAN="$deb" E2E_TESTS="$list" \
			> "$logdir/e2e-prepare-$deb.log" 2>&1 &
		prev=$!
		prep_pids+=($!)
		prep_debs+=("$deb")
		echo "==== e2e images for Debian $deb: building in the background (log: $logdir/e2e-prepare-$deb.log)"
	done
elif [ -n "$e2e_runs" ]; then
	for r in $e2e_runs; do
		e2e_pending+=("$r")
		e2e_ready[${r%%:*}]=1
	done
fi
if [ -z "$pattern" ]; then
	run_part "unit (host)" make -s --no-print-directory -C "$top" check-unit
	run_part "install (host)" "$top/tests/install-test.sh" "$top" "$build"
	run_part "make (host)" "$top/tests/make-test.sh" "$top" "$build"
	# make lint's fast parts (seconds): shellcheck on every shell file,
	# checkpatch on the module, each with its accept list.
	run_part "lint-fast (host)" "$top/tests/lint-fast.sh" "$top" "$build"
	# The cloud-config the project ships, against cloud-init's schema
	# (cloud-init in the trixie build chroot, not on the host).
	run_part "cloud-init schema (host, trixie chroot)" "$top/tests/cloud-init-schema.sh" "$top" "$build"
	# make lint's own test, on the first kernel only (one file built).
	run_part "lint (host, $first_k)" "$top/tests/lint-test.sh" "$top" "$build" "$first_k"
fi
# The kernels are built one after the other in the background (each
# its build chroot the first time, the module and the initramfs), so
# that a build never waits for a free guest slot; a kernel's suite
# starts at the first free slot after its build.
prev=
for k in $kvers; do
	run_after "$prev" "$logdir/build-$k.log.time" \
		make -s --no-print-directory -C "$top" initramfs KVER="$k" > "$logdir/build-$k.log" 2>&1 &
	prev=$!
	build_pids+=($!)
	build_kvers+=("$k")
	suites+=("$k")
done
while [ ${#suites[@]} -gt 0 ] || [ ${#e2e_pending[@]} -gt 0 ] ||
	[ $((${#bg_pids[@]} + ${#prep_pids[@]} + ${#build_pids[@]})) -gt 0 ]; do
	start_ready
	[ $((${#bg_pids[@]} + ${#prep_pids[@]} + ${#build_pids[@]})) -gt 0 ] || break
	wait_any
done
for r in "${e2e_pending[@]}"; do
	echo "check.sh: the e2e pass $r never started"
	failed=$((failed + 1))
done
end=$(date +%s)

echo "==== summary ($((end - start))s; logs in $logdir/)"
# How busy the parts kept the host: their CPU time against what its
# cores could give over the run.
echo "$cpu_total $((end - start)) $(nproc)" | awk '$2 > 0 { printf "cpu: %ss over %ss on %s cores (%.0f%% busy)\n", $1, $2, $3, 100 * $1 / ($2 * $3) }'
printf '%s\n' "${summary[@]}"
if [ -s "$logdir/skips" ]; then
	echo "skipped tests:"
	cat "$logdir/skips"
fi
# The failed tests by name: CI shows only the end of the output.
if [ -s "$logdir/fails" ]; then
	echo "failed tests:"
	cat "$logdir/fails"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
