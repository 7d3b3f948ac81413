#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Lint the shell: shellcheck (every severity, style included) on every
# shell file of the tree.  A finding the accept list does not name fails
# the run; so does an accept entry without a reason or that matches
# nothing, an inline "# shellcheck disable=" (the accept list is the one
# place where a finding is let through, each with its reason), and a
# run of shellcheck that failed.
#
#   tests/lint-shell.sh [-a ACCEPT] TOP [FILE...]
#
#   -a ACCEPT  the accept list (default TOP/tests/shellcheck-accept; format
#              and reasons there)
#   FILE...    lint only these (paths relative to TOP); the default is
#              every shell file: the files git knows (tracked or not
#              ignored), else every file outside build/ and .git/, that
#              end in .sh or start with a #! naming sh, ash, dash, bash or
#              busybox.  Files without a #! say their dialect with
#              "# shellcheck shell=..." (shellcheck fails them otherwise).
#
# The last line is "shellcheck: N findings, N accepted, N failed"; the
# exit status is 1 if anything failed.
set -uo pipefail

accept=
while getopts a: opt; do
	case $opt in
	a) accept=$OPTARG ;;
	*) echo "usage: $0 [-a ACCEPT] TOP [FILE...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-a ACCEPT] TOP [FILE...]" >&2; exit 2; }
top=$(cd "$1" && pwd) || exit 2
shift
accept=${accept:-$top/tests/shellcheck-accept}
cd "$top" || exit 2

findings=0
accepted=0
failed=0
fail() { failed=$((failed + 1)); echo "shellcheck: FAIL $*"; }
# shellcheck source=lib/accept.sh
. "$(dirname "$0")/lib/accept.sh"

# ---- the files ---------------------------------------------------------------
is_shell() {
	local first
	case $1 in *.sh) return 0 ;; esac
	IFS= read -r first < "$1" 2>/dev/null || return 1
	[[ $first =~ ^#!.*[/\ ](sh|ash|dash|bash|busybox)(\ |$) ]]
}
files=()
if [ $# -gt 0 ]; then
	files=("$@")
else
	if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
		list=$(git ls-files --cached --others --exclude-standard | sort -u)
	else
		list=$(find . \( -path ./build -o -path ./.git \) -prune -o -type f -print |
			sed 's|^\./||' | sort)
	fi
	while IFS= read -r f; do
		[ -f "$f" ] && is_shell "$f" && files+=("$f")
	done <<< "$list"
fi

# ---- the accept list -----------------------------------------------------------
# "FILE SCnnnn [ERE]" lines, each under a comment that says why: FILE a
# glob (relative to TOP), ERE matched against the line the finding is on.
a_files=()
a_codes=()
a_res=()
a_where=()
a_used=()
# accept_entry N LINE (accept_each): one "FILE SCnnnn [ERE]" entry
accept_entry() {
	local n=$1 line=$2 f code re
	read -r f code re <<< "$line"
	if [ -z "$code" ] || ! [[ $code =~ ^SC[0-9]+$ ]]; then
		fail "$accept:$n: want 'FILE SCnnnn [ERE]': $line"
		return
	fi
	a_files+=("$f")
	a_codes+=("$code")
	a_res+=("$re")
	a_where+=("$accept:$n")
	a_used+=(0)
}
accept_each "$accept" accept_entry

# is_accepted FILE LINE CODE: an entry names it (and marks itself used)
is_accepted() {
	local i text
	text=$(sed -n "$2p" "$1")
	for i in "${!a_files[@]}"; do
		# FILE is a glob: unquoted on purpose
		if [ "${a_codes[$i]}" = "$3" ] && [[ $1 == ${a_files[$i]} ]] &&
		   { [ -z "${a_res[$i]}" ] || printf '%s\n' "$text" | grep -qE -- "${a_res[$i]}"; }; then
			a_used[i]=1
			return 0
		fi
	done
	return 1
}

# ---- shellcheck ------------------------------------------------------------------
if ! command -v shellcheck > /dev/null; then
	fail "shellcheck is not installed (make setup-lint, or apt-get install shellcheck)"
elif [ ${#files[@]} -eq 0 ]; then
	fail "no shell file found under $top"
else
	echo "== shellcheck $(shellcheck --version | sed -n 's/^version: //p') on ${#files[@]} files"
	# Inline disables would let a finding through without a reason on
	# record; shell=, source= and source-path= only inform the check.
	while IFS= read -r hit; do
		fail "$hit: inline disable; name the finding in $(basename "$accept") with its reason"
	done < <(grep -nE '^[[:space:]]*#[[:space:]]*shellcheck[[:space:]].*disable=' "${files[@]}" /dev/null)
	# --norc: no ~/.shellcheckrc or .shellcheckrc changes what is checked.
	# -x with the script's own directory: sourced files are read, so
	# that what a library defines counts as defined.
	# One shellcheck per CPU, each on a run of consecutive files (the
	# findings come out in file order, as from a single one); the worst
	# exit status counts.
	tmpd=$(mktemp -d)
	trap 'rm -rf "$tmpd"' EXIT
	log=$tmpd/log
	err=$tmpd/err
	jobs=$(nproc 2> /dev/null || echo 1)
	per=$(( (${#files[@]} + jobs - 1) / jobs ))
	pids=()
	for ((i = 0; i < ${#files[@]}; i += per)); do
		shellcheck --norc -x -P SCRIPTDIR -f gcc -- "${files[@]:i:per}" \
			> "$tmpd/$i.log" 2> "$tmpd/$i.err" &
		pids+=("$i:$!")
	done
	rc=0
	: > "$log"
	: > "$err"
	for p in "${pids[@]}"; do
		wait "${p#*:}"
		r=$?
		[ $r -le $rc ] || rc=$r
		cat "$tmpd/${p%%:*}.log" >> "$log"
		cat "$tmpd/${p%%:*}.err" >> "$err"
	done
	acc=()
	if [ -s "$err" ] || [ $rc -gt 1 ]; then
		sed 's/^/  /' "$err"
		fail "shellcheck exited $rc"
	fi
	while IFS= read -r line; do
		# FILE:LINE:COL: LEVEL: message [SCnnnn]
		if [[ $line =~ ^([^:]+):([0-9]+):[0-9]+:\ [a-z]+:\ .*\[(SC[0-9]+)\]$ ]]; then
			findings=$((findings + 1))
			if is_accepted "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}"; then
				accepted=$((accepted + 1))
				acc+=("${BASH_REMATCH[1]} ${BASH_REMATCH[3]}")
			else
				fail "$line"
			fi
		elif [ -n "$line" ]; then
			fail "unexpected output: $line"
		fi
	done < "$log"
	if [ $rc -eq 1 ] && [ $findings -eq 0 ]; then
		fail "shellcheck exited 1 without a finding"
	fi
	# An entry that lets nothing through is stale (the line was fixed or
	# changed): remove or update it.  Only entries for files linted now.
	for i in "${!a_files[@]}"; do
		[ "${a_used[$i]}" = 1 ] && continue
		for f in "${files[@]}"; do
			# FILE is a glob: unquoted on purpose
			if [[ $f == ${a_files[$i]} ]]; then
				fail "${a_where[$i]}: accept entry matches no finding: ${a_files[$i]} ${a_codes[$i]} ${a_res[$i]}"
				break
			fi
		done
	done
	# Accepted findings, counted by file and code (the lines: shellcheck
	# on that file).
	printf '%s\n' "${acc[@]}" | sort | uniq -c |
		sed -nE 's/^ *([0-9]+) (.+)/  accepted: \2 (\1x)/p'
fi

echo "shellcheck: $findings findings, $accepted accepted, $failed failed"
[ $failed -eq 0 ]
