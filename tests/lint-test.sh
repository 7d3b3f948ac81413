#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host test of "make lint" (tests/lint.sh): on a copy of module/, a
# planted W=1 warning, sparse warning, checkpatch error, uncommented
# accept entry and a sparse that cannot run must each fail the lint, with
# the planted finding named; the unmodified copy must pass.  One kernel,
# and only the planted file is compiled, to stay fast.  Prints TAP and
# "N passed, N failed".
#
#   tests/lint-test.sh TOP BUILD_DIR KVER
set -u
top=$1
build=$2
kver=$3
. "$(dirname "$0")/lib/tap.sh"

tap_start
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The file planted into, and so the one object built.
victim=readdir.c
obj=${victim%.c}.o

checkpatch=$("$top/images/fetch-checkpatch.sh" "$build" 2>"$tmp/fetch.log") || {
	tap_diag_file "$tmp/fetch.log"
	tap_not_ok "checkpatch.pl fetched"
	tap_done
	exit 1
}

# fresh: a pristine copy of module/ in $tmp/src
fresh() {
	rm -rf "$tmp/src" "$tmp/build"
	mkdir -p "$tmp/src"
	cp -p "$top"/module/*.c "$top"/module/*.h "$top"/module/Kbuild \
		"$top"/module/lint-accept "$tmp/src/"
}

# lint NAME [OPTION...]: run the lint on the copy, output in $tmp/NAME.out
lint() {
	local name=$1
	shift
	"$top/tests/lint.sh" -c "$checkpatch" "$@" -o "$obj" "$tmp/src" "$tmp/build" "$kver" \
		> "$tmp/$name.out" 2>&1
}

# expect_fail NAME MARKER: the lint fails and names the planted finding
expect_fail() {
	if lint "$1"; then
		tap_diag_file "$tmp/$1.out"
		tap_not_ok "$1: lint passed"
	elif ! grep -q -- "^lint: FAIL .*$2" "$tmp/$1.out"; then
		tap_diag_file "$tmp/$1.out"
		tap_not_ok "$1: lint failed without naming '$2'"
	else
		tap_ok "$1"
	fi
}

fresh
if lint clean; then
	tap_ok "the unmodified module passes"
else
	tap_diag_file "$tmp/clean.out"
	tap_not_ok "the unmodified module passes"
fi

# W=1 only: an unused static const (-Wunused-const-variable is off
# without W=1; sparse and checkpatch say nothing of it).
fresh
printf '\nstatic const int shiftfs_lint_planted = 1;\n' >> "$tmp/src/$victim"
expect_fail "a W=1 warning fails lint" "Wunused-const-variable"

# sparse only: 0 as a NULL pointer (gcc accepts it, checkpatch too).
fresh
printf '\nstatic __maybe_unused void *shiftfs_lint_planted(void)\n{\n\treturn 0;\n}\n' \
	>> "$tmp/src/$victim"
expect_fail "a sparse warning fails lint" "plain integer as NULL pointer"

# checkpatch only: trailing whitespace in a comment.
fresh
printf '\n/* planted */ \n' >> "$tmp/src/$victim"
expect_fail "a checkpatch error fails lint" "TRAILING_WHITESPACE"

# The accept list: an entry nobody explained does not count.
fresh
printf '\ncheckpatch TRAILING_WHITESPACE\n' >> "$tmp/src/lint-accept"
expect_fail "an accept entry without a comment fails lint" "without a comment"

# An accepted type passes: the same plant, accepted with a reason.
fresh
printf '\n/* planted */ \n' >> "$tmp/src/$victim"
printf '\n# planted by tests/lint-test.sh\ncheckpatch TRAILING_WHITESPACE %s\n' \
	"$victim" >> "$tmp/src/lint-accept"
if lint accepted; then
	tap_ok "a commented accept entry lets its finding through"
else
	tap_diag_file "$tmp/accepted.out"
	tap_not_ok "a commented accept entry lets its finding through"
fi

# A sparse that cannot run (the old "sparse: not found ... Error 127",
# which make lint used to pass) fails lint.  Given as -s, not in PATH:
# a kernel of trixie or sid is built in a chroot with a PATH of its own.
fresh
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "sparse: not found" >&2\nexit 127\n' > "$tmp/bin/sparse"
chmod +x "$tmp/bin/sparse"
if lint nosparse -s "$tmp/bin/sparse"; then
	tap_diag_file "$tmp/nosparse.out"
	tap_not_ok "a sparse that cannot run fails lint: lint passed"
elif grep -q '^lint: FAIL .*make W=1 C=1 exited' "$tmp/nosparse.out"; then
	tap_ok "a sparse that cannot run fails lint"
else
	tap_diag_file "$tmp/nosparse.out"
	tap_not_ok "a sparse that cannot run fails lint: not for that reason"
fi

tap_done
