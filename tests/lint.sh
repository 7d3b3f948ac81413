#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Lint the module: checkpatch.pl of each kernel (images/fetch-checkpatch.sh:
# from the linux-source-X.Y of the kernel's series in its Debian release;
# bookworm's kernels share its newest, 6.12's, as 6.1's is older), each
# distinct one once,
# then W=1 and sparse (C=1) on each kernel, built where it lives
# (images/kbuild.sh: on the host for bookworm's, in the release's chroot
# with its gcc and sparse for trixie's and sid's; for 7.x with sid's
# sparse, images/fetch-sparse.sh, as 0.6.4 cannot parse their headers,
# and the scripts/checker-valid.sh their kbuild runs before sparse, which
# Debian's header packages lack, from the kernel's linux-source).  With
# -A, also W=1 on the arm64 kernel of each (images/cross.sh: cross-built
# in the release's chroot).  Any warning or error of these that the
# accept list does not name fails the run; so does a tool that did not
# run (sparse missing, a kbuild error, checkpatch dying).
#
#   tests/lint.sh [-A] [-C] [-a ACCEPT] [-c CHECKPATCH] [-s SPARSE] [-o OBJ.o]... SRC_DIR BUILD_DIR KVER...
#   tests/lint.sh -C -c CHECKPATCH [-a ACCEPT] SRC_DIR BUILD_DIR
#
#   -A             also build each kernel's arm64 counterpart with W=1
#                  (make lint, make module-arm64)
#   -C             checkpatch only: no W=1, sparse or arm64 build, no
#                  kernel needed with -c (make check's fast lint,
#                  tests/lint-fast.sh); the KVERs, if given, only pick
#                  the checkpatch.pl versions
#   -a ACCEPT      the accept list (default SRC_DIR/lint-accept; format
#                  and reasons in module/lint-accept)
#   -c CHECKPATCH  checkpatch.pl to use, for every kernel (default:
#                  images/fetch-checkpatch.sh, per Debian release)
#   -s SPARSE      the sparse program kbuild runs (CHECK=), copied beside
#                  the sources so that a chroot build runs it too (the
#                  lint's own test plants a broken one); for 7.x too,
#                  instead of sid's
#   -o OBJ.o       build only these objects, not the whole module (the
#                  lint's own test, to stay fast)
#
# SRC_DIR is copied to BUILD_DIR/lint/KVER/ and built there; logs in
# BUILD_DIR/lint/ (the arm64 builds in BUILD_DIR/lint/KVER-arm64/).  The
# last line is "lint: N findings, N accepted, N failed"; the exit status
# is 1 if anything failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)

accept=
checkpatch=
sparse=
objs=()
arm64=
cponly=
usage="usage: $0 [-A] [-C] [-a ACCEPT] [-c CHECKPATCH] [-s SPARSE] [-o OBJ.o]... SRC_DIR BUILD_DIR KVER... (-C -c CHECKPATCH: KVER optional)"
while getopts ACa:c:s:o: opt; do
	case $opt in
	A) arm64=1 ;;
	C) cponly=1 ;;
	a) accept=$OPTARG ;;
	c) checkpatch=$OPTARG ;;
	s) sparse=$OPTARG ;;
	o) objs+=("$OPTARG") ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] || { [ -n "$cponly" ] && [ -n "$checkpatch" ] && [ $# -eq 2 ]; } ||
	{ echo "$usage" >&2; exit 2; }
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
# shellcheck source=lib/accept.sh
. "$here/lib/accept.sh"

# ---- the accept list -------------------------------------------------------
# "checkpatch TYPE [FILE]" and "compiler ERE" lines, each under a comment
# that says why.
cp_types=()
cp_files=()
cc_res=()
# accept_entry N LINE (accept_each): one "checkpatch" or "compiler" entry
accept_entry() {
	local n=$1 line=$2 kind rest t f extra
	read -r kind rest <<< "$line"
	case $kind in
	checkpatch)
		read -r t f extra <<< "$rest"
		if [ -z "$t" ] || [ -n "$extra" ]; then
			fail "$accept:$n: want 'checkpatch TYPE [FILE]': $line"
			return
		fi
		cp_types+=("$t")
		cp_files+=("${f:-*}")
		;;
	compiler)
		[ -n "$rest" ] || { fail "$accept:$n: want 'compiler ERE': $line"; return; }
		cc_res+=("$rest")
		;;
	*) fail "$accept:$n: unknown kind '$kind' (checkpatch or compiler)" ;;
	esac
}
accept_each "$accept" accept_entry

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
# run_checkpatch CHECKPATCH [RELEASE]
run_checkpatch() {
	local log=$build/checkpatch${2:+-$2}.log line rc n_cp
	echo "== checkpatch ($1)"
	(cd "$src" && perl "$1" --no-tree -f --terse --show-types \
		--no-summary *.c *.h) > "$log" 2> "$log.err"
	rc=$?
	if [ -s "$log.err" ]; then
		sed 's/^/  /' "$log.err"
		fail "checkpatch.pl wrote errors of its own (exit $rc)"
	fi
	n_cp=0
	: > "$log.accepted"
	while IFS= read -r line; do
		# FILE:LINE: SEVERITY:TYPE: message
		if [[ $line =~ ^([^:]+):[0-9]+:\ (ERROR|WARNING|CHECK):([A-Z0-9_]+): ]]; then
			n_cp=$((n_cp + 1))
			findings=$((findings + 1))
			if is_accepted_cp "${BASH_REMATCH[1]}" "${BASH_REMATCH[3]}"; then
				accepted=$((accepted + 1))
				echo "${BASH_REMATCH[2]}:${BASH_REMATCH[3]} in ${BASH_REMATCH[1]}" >> "$log.accepted"
			else
				fail "checkpatch${2:+ ($2)}: $line"
			fi
		elif [ -n "$line" ]; then
			fail "checkpatch: unexpected output: $line"
		fi
	done < "$log"
	# Accepted findings, counted by type and file (the lines: checkpatch.log).
	sort "$log.accepted" | uniq -c |
		sed -E 's/^ *([0-9]+) (.*)/  accepted: \2 (\1x)/'
	if [ $rc -ne 0 ] && [ $n_cp -eq 0 ]; then
		fail "checkpatch.pl exited $rc without a finding"
	fi
}

here_suite() {
	"$top/images/kver.sh" -s "$1"
}
if [ -n "$checkpatch" ]; then
	run_checkpatch "$checkpatch"
else
	# One run per distinct checkpatch among the kernels' (RELEASE:X.Y).
	keys=
	for k in "$@"; do
		r=$(here_suite "$k") || { fail "$k: not a kernel release"; continue; }
		x=
		[ "$r" = bookworm ] || x=$(echo "$k" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
		case " $keys " in
		*" $r:$x "*) ;;
		*) keys="$keys $r:$x" ;;
		esac
	done
	for key in $keys; do
		r=${key%%:*}
		x=${key#*:}
		if cp_path=$("$top/images/fetch-checkpatch.sh" "$top/build" "$r" $x); then
			run_checkpatch "$cp_path" "$r${x:+-$x}"
		else
			fail "could not fetch the checkpatch.pl of $r${x:+ $x}"
		fi
	done
fi

# ---- W=1 and sparse, per kernel ------------------------------------------
# -C: checkpatch only, no kernel is built.
[ -z "$cponly" ] || set --
# A kernel of the host's release is built on the host, with its sparse;
# the others in their release's chroot, which has sparse (images/chroot.sh).
host_suite=bookworm
[ -r /etc/os-release ] && host_suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")

# checker_valid KVER SUITE: 7.x's kbuild runs scripts/checker-valid.sh
# before sparse and quietly drops C=1 (a make warning) when it is not
# there; Debian's linux-kbuild lacks it.  Copy it from the kernel's own
# linux-source (images/fetch-checkpatch.sh unpacks it) into the kbuild
# scripts of the release's chroot.  The host's headers are not touched.
checker_valid() {
	local k=$1 suite=$2 root='' hdr common x cp_path cv
	[ "$suite" = "$host_suite" ] || root=$top/build/chroots/$suite
	if [ -n "$root" ] && ! "$top/images/chroot.sh" ensure "$suite" "$top/build" "$k"; then
		fail "$k: no headers in the $suite chroot"
		return 1
	fi
	hdr=$root/usr/src/linux-headers-$k
	common=$(sed -n 's|^include \(/[^ ]*\)$|\1|p' "$hdr/Makefile")
	grep -q 'scripts/checker-valid\.sh' "$hdr/Makefile" "${common:+$root$common}" 2>/dev/null || return 0
	[ -f "$hdr/scripts/checker-valid.sh" ] && return 0
	if [ -z "$root" ]; then
		fail "$k: its kbuild wants scripts/checker-valid.sh, which $hdr lacks"
		return 1
	fi
	x=$(echo "$k" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
	cv=
	if cp_path=$("$top/images/fetch-checkpatch.sh" "$top/build" "$suite" "$x"); then
		cv=$(dirname "$cp_path")/checker-valid.sh
	fi
	if [ ! -f "$cv" ]; then
		fail "$k: no scripts/checker-valid.sh in $suite's linux-source-$x"
		return 1
	fi
	install -m 755 "$cv" "$hdr/scripts/checker-valid.sh"
	echo "  $k: scripts/checker-valid.sh from linux-source-$x put in the $suite chroot's kbuild"
}

# scan K LABEL LOG DIR RC SPARSE: judge one build's log: the build must
# have succeeded and compiled a module source, sparse (SPARSE=1) must
# have checked each one, and every warning or error is a finding.
scan() {
	local k=$1 label=$2 log=$3 dir=$4 rc=$5 sp=$6 ncc=0 nck=0 o line short
	if [ "$rc" -ne 0 ]; then
		grep -vE '^  (CC|CHECK|LD|MODPOST|LDS)' "$log" | sed 's/^/  /' | tail -n 30
		fail "$label: make W=1${sp:+ C=1} exited $rc"
	fi
	# Since 6.13 kbuild runs in M= and names its files relative to it
	# (kbuild's generated .mod.c, .module-common.c are not the module's).
	for o in $(sed -n -e 's|^  CC \[M\]  *'"$dir"'/\(.*\)\.o$|\1|p' \
		-e 's|^  CC \[M\]  *\([^/]*\)\.o$|\1|p' "$log"); do
		[ -f "$src/$o.c" ] || continue
		ncc=$((ncc + 1))
		[ -n "$sp" ] || continue
		if awk -v f="$dir/$o.c" -v g="$o.c" '$1 == "CHECK" && ($2 == f || $2 == g) { found = 1 }
		     END { exit !found }' "$log"; then
			nck=$((nck + 1))
		else
			fail "$label: sparse did not check $o.c"
		fi
	done
	if [ "$ncc" -eq 0 ] && [ "$rc" -eq 0 ]; then
		fail "$label: the build compiled no module source"
	fi
	while IFS= read -r line; do
		findings=$((findings + 1))
		short=${line#"$dir"/}
		if is_accepted_cc "$short"; then
			accepted=$((accepted + 1))
			echo "  accepted: $label: $short"
		else
			fail "$label: $short"
		fi
	done < <(grep -aiE '(warning|error):' "$log")
}

for k in "$@"; do
	dir=$build/$k
	log=$build/$k.log
	suite=$(here_suite "$k" 2>/dev/null)
	echo "== $k: W=1 C=1${objs[*]:+ (${objs[*]})}"
	if [ "$suite" = "$host_suite" ]; then
		if ! command -v sparse >/dev/null; then
			fail "sparse is not installed (make setup-lint, or apt-get install sparse)"
			continue
		fi
		if [ ! -f "/usr/src/linux-headers-$k/Makefile" ]; then
			fail "$k: no headers in /usr/src/linux-headers-$k (make setup-lint)"
			continue
		fi
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -p "$src"/*.c "$src"/*.h "$src"/Kbuild "$dir/"
	# The sparse: -s, else for 7.x sid's (0.6.4, bookworm's and
	# trixie's, stops at their headers), else the release's own.
	sp=$sparse
	case $k in
	[7-9].*|[1-9][0-9]*.*)
		if [ -z "$sp" ] && ! sp=$("$top/images/fetch-sparse.sh" "$top/build"); then
			fail "$k: could not fetch sid's sparse (images/fetch-sparse.sh)"
			continue
		fi
		;;
	esac
	check=()
	if [ -n "$sp" ]; then
		cp "$sp" "$dir/.lint-sparse"
		check=(CHECK="$dir/.lint-sparse")
	fi
	checker_valid "$k" "$suite" || continue
	"$top/images/kbuild.sh" "$k" M="$dir" W=1 C=1 "${check[@]}" "${objs[@]:-modules}" > "$log" 2>&1
	scan "$k" "$k" "$log" "$dir" $? 1

	[ -n "$arm64" ] || continue
	# The arm64 kernel of the same release, cross-built with W=1.
	arel=$("$top/images/cross.sh" -r "$k") || { fail "$k: no arm64 counterpart"; continue; }
	dir=$build/$k-arm64
	log=$build/$k-arm64.log
	echo "== $arel: W=1, cross-built${objs[*]:+ (${objs[*]})}"
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -p "$src"/*.c "$src"/*.h "$src"/Kbuild "$dir/"
	"$top/images/cross.sh" "$k" M="$dir" W=1 "${objs[@]:-modules}" > "$log" 2>&1
	scan "$k" "$arel" "$log" "$dir" $? ""
done

echo "lint: $findings findings, $accepted accepted, $failed failed"
[ $failed -eq 0 ]
