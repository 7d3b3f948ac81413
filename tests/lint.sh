#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Lint the module: checkpatch.pl once, then W=1 and sparse (C=1) on each
# kernel.  Any warning or error of the three that the accept list does
# not name fails the run; so does a tool that did not run (sparse
# missing, a kbuild error, checkpatch dying).
#
#   tests/lint.sh [-a ACCEPT] [-c CHECKPATCH] [-o OBJ.o]... SRC_DIR BUILD_DIR KVER...
#
#   -a ACCEPT      the accept list (default SRC_DIR/lint-accept; format
#                  and reasons in module/lint-accept)
#   -c CHECKPATCH  checkpatch.pl to use (default: images/fetch-checkpatch.sh)
#   -o OBJ.o       build only these objects, not the whole module (the
#                  lint's own test, to stay fast)
#
# SRC_DIR is copied to BUILD_DIR/lint/KVER/ and built there; logs in
# BUILD_DIR/lint/.  The last line is "lint: N findings, N accepted, N
# failed"; the exit status is 1 if anything failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)

accept=
checkpatch=
objs=()
while getopts a:c:o: opt; do
	case $opt in
	a) accept=$OPTARG ;;
	c) checkpatch=$OPTARG ;;
	o) objs+=("$OPTARG") ;;
	*) echo "usage: $0 [-a ACCEPT] [-c CHECKPATCH] [-o OBJ.o]... SRC_DIR BUILD_DIR KVER..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] || { echo "usage: $0 [-a ACCEPT] [-c CHECKPATCH] [-o OBJ.o]... SRC_DIR BUILD_DIR KVER..." >&2; exit 2; }
src=$(cd "$1" && pwd)
mkdir -p "$2"
build=$(cd "$2" && pwd)/lint
shift 2
accept=${accept:-$src/lint-accept}
mkdir -p "$build"

findings=0
accepted=0
failed=0
fail() { failed=$((failed + 1)); echo "lint: FAIL $*"; }

# ---- the accept list -------------------------------------------------------
# "checkpatch TYPE [FILE]" and "compiler ERE" lines, each under a comment
# that says why.
cp_types=()
cp_files=()
cc_res=()
if [ ! -r "$accept" ]; then
	fail "cannot read the accept list $accept"
else
	n=0
	why=0
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		case $line in
		'') why=0; continue ;;
		'#'*) why=1; continue ;;
		esac
		if [ $why -eq 0 ]; then
			fail "$accept:$n: entry without a comment saying why: $line"
			continue
		fi
		read -r kind rest <<< "$line"
		case $kind in
		checkpatch)
			read -r t f extra <<< "$rest"
			if [ -z "$t" ] || [ -n "$extra" ]; then
				fail "$accept:$n: want 'checkpatch TYPE [FILE]': $line"
				continue
			fi
			cp_types+=("$t")
			cp_files+=("${f:-*}")
			;;
		compiler)
			[ -n "$rest" ] || { fail "$accept:$n: want 'compiler ERE': $line"; continue; }
			cc_res+=("$rest")
			;;
		*) fail "$accept:$n: unknown kind '$kind' (checkpatch or compiler)" ;;
		esac
	done < "$accept"
fi

# is_accepted_cp FILE TYPE
is_accepted_cp() {
	local i
	for i in "${!cp_types[@]}"; do
		if [ "${cp_types[$i]}" = "$2" ] && [[ $1 == ${cp_files[$i]} ]]; then
			return 0
		fi
	done
	return 1
}

# is_accepted_cc LINE
is_accepted_cc() {
	local re
	for re in "${cc_res[@]}"; do
		if printf '%s\n' "$1" | grep -qE -- "$re"; then
			return 0
		fi
	done
	return 1
}

# ---- checkpatch ----------------------------------------------------------
# The flags of an out-of-tree module: no kernel tree around (--no-tree),
# whole files rather than a patch (-f), one line per finding with its type
# (--terse --show-types) for the accept list.  Not --strict: fs/ code is
# held to checkpatch's default level in the kernel too, and --strict
# without a tree trips over its own CamelCase scan of include/.
if [ -z "$checkpatch" ]; then
	checkpatch=$("$top/images/fetch-checkpatch.sh" "$(dirname "$build")") ||
		fail "could not fetch checkpatch.pl"
fi
if [ -n "$checkpatch" ]; then
	echo "== checkpatch ($checkpatch)"
	(cd "$src" && perl "$checkpatch" --no-tree -f --terse --show-types \
		--no-summary *.c *.h) > "$build/checkpatch.log" 2> "$build/checkpatch.err"
	rc=$?
	if [ -s "$build/checkpatch.err" ]; then
		sed 's/^/  /' "$build/checkpatch.err"
		fail "checkpatch.pl wrote errors of its own (exit $rc)"
	fi
	n_cp=0
	: > "$build/checkpatch.accepted"
	while IFS= read -r line; do
		# FILE:LINE: SEVERITY:TYPE: message
		if [[ $line =~ ^([^:]+):[0-9]+:\ (ERROR|WARNING|CHECK):([A-Z0-9_]+): ]]; then
			n_cp=$((n_cp + 1))
			findings=$((findings + 1))
			if is_accepted_cp "${BASH_REMATCH[1]}" "${BASH_REMATCH[3]}"; then
				accepted=$((accepted + 1))
				echo "${BASH_REMATCH[2]}:${BASH_REMATCH[3]} in ${BASH_REMATCH[1]}" >> "$build/checkpatch.accepted"
			else
				fail "checkpatch: $line"
			fi
		elif [ -n "$line" ]; then
			fail "checkpatch: unexpected output: $line"
		fi
	done < "$build/checkpatch.log"
	# Accepted findings, counted by type and file (the lines: checkpatch.log).
	sort "$build/checkpatch.accepted" | uniq -c |
		sed -E 's/^ *([0-9]+) (.*)/  accepted: \2 (\1x)/'
	if [ $rc -ne 0 ] && [ $n_cp -eq 0 ]; then
		fail "checkpatch.pl exited $rc without a finding"
	fi
fi

# ---- W=1 and sparse, per kernel ------------------------------------------
if ! command -v sparse >/dev/null; then
	fail "sparse is not installed (make setup-lint, or apt-get install sparse)"
else
	for k in "$@"; do
		kdir=/usr/src/linux-headers-$k
		dir=$build/$k
		log=$build/$k.log
		echo "== $k: W=1 C=1${objs[*]:+ (${objs[*]})}"
		if [ ! -f "$kdir/Makefile" ]; then
			fail "$k: no headers in $kdir (make setup-lint)"
			continue
		fi
		rm -rf "$dir"
		mkdir -p "$dir"
		cp -p "$src"/*.c "$src"/*.h "$src"/Kbuild "$dir/"
		make -C "$kdir" M="$dir" W=1 C=1 "${objs[@]:-modules}" > "$log" 2>&1
		rc=$?
		if [ $rc -ne 0 ]; then
			grep -vE '^  (CC|CHECK|LD|MODPOST|LDS)' "$log" | sed 's/^/  /' | tail -n 30
			fail "$k: make W=1 C=1 exited $rc"
		fi
		# sparse must have looked at every module source the compiler
		# built (kbuild's generated .mod.c, .module-common.c are not).
		ncc=0
		nck=0
		for o in $(sed -n 's|^  CC \[M\]  *'"$dir"'/\(.*\)\.o$|\1|p' "$log"); do
			[ -f "$src/$o.c" ] || continue
			ncc=$((ncc + 1))
			if awk -v f="$dir/$o.c" '$1 == "CHECK" && $2 == f { found = 1 }
			     END { exit !found }' "$log"; then
				nck=$((nck + 1))
			else
				fail "$k: sparse did not check $o.c"
			fi
		done
		if [ "$ncc" -eq 0 ] && [ $rc -eq 0 ]; then
			fail "$k: the build compiled no module source"
		fi
		while IFS= read -r line; do
			findings=$((findings + 1))
			short=${line#"$dir"/}
			if is_accepted_cc "$short"; then
				accepted=$((accepted + 1))
				echo "  accepted: $k: $short"
			else
				fail "$k: $short"
			fi
		done < <(grep -aiE '(warning|error):' "$log")
	done
fi

echo "lint: $findings findings, $accepted accepted, $failed failed"
[ $failed -eq 0 ]
