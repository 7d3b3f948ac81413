#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Judge one kernel's fstests results (tests/fstests/run.sh calls it): per
# configuration the counts, then every test that fails through shiftfs
# but not on the plain base fs of the same boot, each either listed in
# tests/fstests/expected-failures (expected) or not (unexpected), and
# every entry there that matches a configuration in which its test ran
# and passed (stale).
#
#   tests/fstests/judge.sh RESULTS_DIR EXPECTED KVER GUEST_SECS
#   tests/fstests/judge.sh -l EXPECTED     (only check the file's format)
#
# EXPECTED has one entry a line, "TEST BASES MAPS KERNELS REASON...":
# BASES ext4, xfs, a comma list or *; MAPS identity, shifted, a comma
# list or *; KERNELS globs on the kernel release (6.1.0-*, 7.3.*), a
# comma list or *; REASON one line.  Exit 1 on an unexpected failure or a
# stale entry.
set -eu

lint() {
	awk '
	/^[ \t]*(#|$)/ { next }
	NF < 5 { printf "%s:%d: want TEST BASES MAPS KERNELS REASON: %s\n", FILENAME, NR, $0; bad = 1; next }
	$1 !~ /^[a-z0-9]+\/[0-9]+$/ { printf "%s:%d: %s is not a test name (generic/123)\n", FILENAME, NR, $1; bad = 1 }
	$2 !~ /^(\*|(ext4|xfs)(,(ext4|xfs))*)$/ { printf "%s:%d: BASES %s: ext4, xfs, a comma list or *\n", FILENAME, NR, $2; bad = 1 }
	$3 !~ /^(\*|(identity|shifted)(,(identity|shifted))*)$/ { printf "%s:%d: MAPS %s: identity, shifted, a comma list or *\n", FILENAME, NR, $3; bad = 1 }
	END { exit bad }' "$1" >&2
}

if [ "${1:-}" = -l ]; then
	[ $# -eq 2 ] || { echo "usage: $0 -l EXPECTED" >&2; exit 2; }
	lint "$2"
	exit
fi
[ $# -eq 4 ] || { echo "usage: $0 RESULTS_DIR EXPECTED KVER GUEST_SECS" >&2; exit 2; }
res=$1 expected=$2 kver=$3 secs=$4
lint "$expected" || exit 1

# in_list WORD LIST: WORD is a word of LIST.
in_list() { case " $2 " in *" $1 "*) return 0 ;; esac; return 1; }
# field_matches VALUE FIELD: FIELD is *, or a comma list with VALUE (a glob each).
field_matches() {
	local IFS=, p
	for p in $2; do
		case $1 in $p) return 0 ;; esac
	done
	return 1
}
# matches BASES MAPS KERNELS: an entry's fields name this configuration.
matches() {
	field_matches "$base" "$1" && field_matches "$map" "$2" && field_matches "$kver" "$3"
}
# ran_tests DIR: the tests that ran (fstests' "Ran:" has those not run too).
ran_tests() {
	local t nr
	nr=$(get "$1" notrun_tests)
	for t in $(get "$1" ran_tests); do
		in_list "$t" "$nr" || echo "$t"
	done | xargs
}
get() { sed -n "s/^$2=//p" "$1/summary"; }

unexpected=0 stale=0 expn=0
printf '%-10s %-5s %-9s %5s %6s %6s %7s %6s\n' kernel base config ran passed failed "not-run" secs
for s in "$res"/*/summary; do
	[ -f "$s" ] || continue
	d=${s%/summary}
	name=${d##*/}
	printf '%-10s %-5s %-9s %5s %6s %6s %7s %6s\n' "${kver%%-*}" "${name%%-*}" "${name#*-}" \
		"$(get "$d" ran)" "$(get "$d" passed)" "$(get "$d" failed)" "$(get "$d" notrun)" "$(get "$d" secs)"
done
echo "guest time: ${secs}s"
notes=
for s in "$res"/*-*/summary; do
	[ -f "$s" ] || continue
	d=${s%/summary}
	name=${d##*/}
	base=${name%%-*} map=${name#*-}
	[ "$map" = base ] && continue
	bd=$res/$base-base
	bfailed=''
	bran=''
	if [ -f "$bd/summary" ]; then
		bfailed=$(get "$bd" failed_tests)
		bran=$(ran_tests "$bd")
	fi
	failed=$(get "$d" failed_tests)
	ran=$(ran_tests "$d")
	to=$(get "$d" timeout)
	if [ -n "$to" ]; then
		notes="$notes
  $base $map: TIMEOUT: $to (the test counts as failed; ps and stacks in $d/)"
	fi
	for t in $failed; do
		if in_list "$t" "$bfailed"; then
			notes="$notes
  $t $base $map: fails on the plain $base too (not shiftfs's)"
			continue
		fi
		why=
		while read -r et eb em ek er; do
			[ "$et" = "$t" ] || continue
			if ! matches "$eb" "$em" "$ek"; then
				continue
			fi
			why=$er
			break
		done < <(grep -v '^[[:space:]]*\(#\|$\)' "$expected")
		if [ -n "$why" ]; then
			expn=$((expn + 1))
			notes="$notes
  $t $base $map: expected failure: $why"
		else
			unexpected=$((unexpected + 1))
			onbase="not run on $base"
			if in_list "$t" "$bran"; then
				onbase="passes on $base"
			fi
			notes="$notes
  $t $base $map: UNEXPECTED failure through shiftfs ($onbase; $d/results/)"
		fi
	done
	while read -r et eb em ek _; do
		if ! matches "$eb" "$em" "$ek"; then
			continue
		fi
		in_list "$et" "$ran" || continue
		in_list "$et" "$failed" && continue
		stale=$((stale + 1))
		notes="$notes
  $et $base $map: STALE entry in expected-failures: the test passed"
	done < <(grep -v '^[[:space:]]*\(#\|$\)' "$expected")
done
[ -n "$notes" ] && echo "notes:$notes"
echo "fstests ${kver}: $unexpected unexpected failures, $expn expected failures, $stale stale expected-failure entries"
[ $unexpected -eq 0 ] && [ $stale -eq 0 ]
