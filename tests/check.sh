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

# run_part NAME CMD...: run a part, show its output, add up its counts.
run_part() {
	local name=$1 log rc t0
	shift
	log=$(part_log "$name")
	echo "==== $name"
	t0=$(date +%s)
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	count_part "$name" "$log" "$rc" "$t0"
}

# The guest suites run two at a time (GUEST_JOBS): a suite keeps about
# one of its two vCPUs busy, so a second one, or the next kernel's
# build, uses the other core.  Each part's output is shown, whole, when
# it ends.
guest_jobs=${GUEST_JOBS:-2}
case $guest_jobs in
''|0|*[!0-9]*) echo "check.sh: GUEST_JOBS='$guest_jobs' is not a number of guests (1, 2...)" >&2; exit 2 ;;
esac
bg_pids=()
bg_names=()
bg_t0=()
# start_part NAME CMD...: run a part in the background.
start_part() {
	local name=$1 log
	shift
	while [ ${#bg_pids[@]} -ge "$guest_jobs" ]; do
		wait_part
	done
	log=$(part_log "$name")
	echo "==== $name (started; shown when it ends)"
	bg_t0+=("$(date +%s)")
	"$@" > "$log" 2>&1 &
	bg_pids+=($!)
	bg_names+=("$name")
}
# wait_part: wait for whichever background part ends first, show it,
# count it.
wait_part() {
	local rc log pid i=0
	wait -n -p pid "${bg_pids[@]}"
	rc=$?
	while [ "${bg_pids[$i]}" != "$pid" ]; do
		i=$((i + 1))
	done
	log=$(part_log "${bg_names[$i]}")
	echo "==== ${bg_names[$i]}"
	cat "$log"
	count_part "${bg_names[$i]}" "$log" "$rc" "${bg_t0[$i]}"
	bg_pids=("${bg_pids[@]:0:$i}" "${bg_pids[@]:$((i + 1))}")
	bg_names=("${bg_names[@]:0:$i}" "${bg_names[@]:$((i + 1))}")
	bg_t0=("${bg_t0[@]:0:$i}" "${bg_t0[@]:$((i + 1))}")
}

# count_part NAME LOG RC T0: add up a finished part's counts.
count_part() {
	local name=$1 log=$2 rc=$3 t0=$4 counts p f s
	counts=$(part_counts "$log" "$rc") ||
		echo "check.sh: $name printed no result line (exit $rc)"
	read -r p f s <<< "$counts"
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	summary+=("$(printf '%-45s %s passed, %s failed, %s skipped  (%ss)' "$name" "$p" "$f" "$s" $(( $(date +%s) - t0 )))")
	section "$log" SKIPPED "SKIP [$name]" >> "$logdir/skips"
	section "$log" FAILED "FAIL [$name]" >> "$logdir/fails"
}

# section LOG HEADING TAG: the "  " lines of LOG's HEADING: list (the
# runners' SKIPPED: and FAILED:, tests/tap-summary.awk), each tagged.
section() {
	grep -A 1000 "^$2:" "$1" | sed -n '2,/^[A-Z]*:$/p' | grep '^  ' |
		sed "s|^ *|  $3 |"
}

rm -f "$logdir/skips" "$logdir/fails"
start=$(date +%s)
# make test: the e2e tier's images (debootstrap, dpkg and the network,
# and the arm64 image's second stage) are built in the background while
# the fast tier runs, one release after the other; the e2e parts wait
# for them.  Cached images make this a few seconds.  A failure here is
# not counted: e2e-one builds what is missing again, and says why.
prep_pid=
if [ -n "$e2e_runs" ] && [ -z "$pattern" ]; then
	(
		for r in $e2e_runs; do
			list=
			case $r in *:*) list=${r#*:} ;; esac
			make -s --no-print-directory -C "$top" e2e-prepare DEBIAN="${r%%:*}" E2E_TESTS="$list"
		done
	) > "$logdir/e2e-prepare.log" 2>&1 &
	prep_pid=$!
	echo "==== e2e images: building in the background (log: $logdir/e2e-prepare.log)"
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
	lint_kver=$(echo "$kvers" | awk '{ print $1 }')
	run_part "lint (host, $lint_kver)" "$top/tests/lint-test.sh" "$top" "$build" "$lint_kver"
fi
first=1
for k in $kvers; do
	# The kernel, its build chroot (first time), module and initramfs.
	echo "==== build $k"
	t0=$(date +%s)
	if ! make -s --no-print-directory -C "$top" initramfs KVER="$k" > "$logdir/build-$k.log" 2>&1; then
		cat "$logdir/build-$k.log"
		echo "check.sh: build for $k failed (log: $logdir/build-$k.log)"
		failed=$((failed + 1))
		summary+=("$(printf '%-45s build FAILED  (%ss)' "guest $k" $(( $(date +%s) - t0 )))")
		continue
	fi
	summary+=("$(printf '%-45s built  (%ss)' "build $k" $(( $(date +%s) - t0 )))")
	if [ $first -eq 1 ] && [ -z "$pattern" ]; then
		run_part "runner self-test ($k)" "$top/tests/runner-selftest.sh" "$k" "$build"
	fi
	first=0
	start_part "guest $k" "$top/tests/run-guest.sh" ${pattern:+-t "$pattern"} "$k" "$build"
done
if [ -n "$prep_pid" ]; then
	t0=$(date +%s)
	wait "$prep_pid"
	rc=$?
	echo "==== e2e images (background): exit $rc"
	grep -E '^(run-e2e: |[a-z].*  +[0-9]+s$)' "$logdir/e2e-prepare.log"
	summary+=("$(printf '%-45s %s  (waited %ss)' "e2e images (background)" \
		"$([ $rc -eq 0 ] && echo ready || echo "exit $rc: the e2e parts build them")" \
		$(( $(date +%s) - t0 )))")
fi
# The e2e passes join the same pool as the guest suites: the first one
# starts as soon as a guest suite ends, and the two releases' guests run
# side by side (each keeps about one core busy, as a guest suite does;
# the two share nothing but the host's userspace build, made here first
# so that their makes do not build it at once).  Sequential, they added
# some 10 minutes to a cold make test.
if [ -n "$e2e_runs" ]; then
	make -s --no-print-directory -C "$top" shiftctl > "$logdir/e2e-shiftctl.log" 2>&1 ||
		cat "$logdir/e2e-shiftctl.log"
fi
for r in $e2e_runs; do
	deb=${r%%:*}
	list=
	case $r in *:*) list=${r#*:} ;; esac
	start_part "e2e Debian $deb${list:+ ($list)}" \
		make -s --no-print-directory -C "$top" e2e-one DEBIAN="$deb" E2E_TESTS="$list"
done
while [ ${#bg_pids[@]} -gt 0 ]; do
	wait_part
done
end=$(date +%s)

echo "==== summary ($((end - start))s; logs in $logdir/)"
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
