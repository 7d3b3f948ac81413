#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host test of "make lint" (tests/lint.sh): on a copy of module/, a
# planted W=1 warning, sparse warning, checkpatch error, uncommented
# accept entry and a sparse that cannot run must each fail the lint, with
# the planted finding named; the unmodified copy must pass.  One kernel,
# and only the planted file is compiled, to stay fast.  Then the shell
# lint (tests/lint-shell.sh) on a small tree of its own: a planted shellcheck
# finding, in a .sh file and in a file known by its #! only,
# an uncommented or stale accept entry, an inline disable and a shellcheck
# that cannot run must each fail it.  Then the fast lint of make check
# (tests/lint-fast.sh) on a tree of its own: it passes the clean tree, and
# a planted shellcheck finding and checkpatch error fail it, both named,
# with no kernel built.  Then the packages' lintian
# (images/deb/build-debs.sh, Debian 12 on the host): a copy of the tree
# with a bogus Maintainer and without debian/copyright must fail it, with
# no package left behind.  Prints TAP and "N passed, N failed".
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

# ---- the shell lint ----------------------------------------------------------
# shfresh: a tree of one clean script and an accept list without entries
shfresh() {
	rm -rf "$tmp/sh"
	mkdir -p "$tmp/sh"
	printf '#!/bin/sh\necho "$1"\n' > "$tmp/sh/clean.sh"
	printf '# planted by tests/lint-test.sh: nothing accepted\n' > "$tmp/sh/accept"
}

# shlint NAME: run the shell lint on that tree, output in $tmp/NAME.out
shlint() {
	"$top/tests/lint-shell.sh" -a "$tmp/sh/accept" "$tmp/sh" > "$tmp/$1.out" 2>&1
}

# sh_expect_fail NAME MARKER: the shell lint fails and names MARKER
sh_expect_fail() {
	if shlint "$1"; then
		tap_diag_file "$tmp/$1.out"
		tap_not_ok "$1: shell lint passed"
	elif ! grep -q -- "^shellcheck: FAIL .*$2" "$tmp/$1.out"; then
		tap_diag_file "$tmp/$1.out"
		tap_not_ok "$1: shell lint failed without naming '$2'"
	else
		tap_ok "$1"
	fi
}

shfresh
if shlint shclean && grep -q '^shellcheck: 0 findings, 0 accepted, 0 failed$' "$tmp/shclean.out"; then
	tap_ok "a clean script passes the shell lint"
else
	tap_diag_file "$tmp/shclean.out"
	tap_not_ok "a clean script passes the shell lint"
fi

# An unquoted expansion (SC2086) in a .sh file.
shfresh
printf 'echo $1\n' >> "$tmp/sh/clean.sh"
sh_expect_fail "a shellcheck finding fails the shell lint" "clean.sh:3:6: .*\[SC2086\]"

# The same in a file without .sh, found by its #! (as images/init).
shfresh
printf '#!/bin/sh\nrm -rf $1/x\n' > "$tmp/sh/init"
sh_expect_fail "a finding in a #! file without .sh fails the shell lint" "init:2:8: .*\[SC2086\]"

# Accepted with a reason, on that line only: passes.
shfresh
printf 'echo $1\n' >> "$tmp/sh/clean.sh"
printf '\n# planted by tests/lint-test.sh\nclean.sh SC2086 ^echo \\$1$\n' >> "$tmp/sh/accept"
if shlint shaccepted && grep -q '^shellcheck: 1 findings, 1 accepted, 0 failed$' "$tmp/shaccepted.out"; then
	tap_ok "a commented accept entry lets its shellcheck finding through"
else
	tap_diag_file "$tmp/shaccepted.out"
	tap_not_ok "a commented accept entry lets its shellcheck finding through"
fi

# The same entry without its reason does not count.
shfresh
printf 'echo $1\n' >> "$tmp/sh/clean.sh"
printf '\nclean.sh SC2086\n' >> "$tmp/sh/accept"
sh_expect_fail "a shell accept entry without a comment fails the shell lint" "without a comment"

# An entry whose finding is gone (fixed, or the line changed) is stale.
shfresh
printf '\n# planted by tests/lint-test.sh\nclean.sh SC2086\n' >> "$tmp/sh/accept"
sh_expect_fail "a shell accept entry matching nothing fails the shell lint" "matches no finding"

# An inline disable hides a finding with no reason on record.
shfresh
printf '# shellcheck disable=SC2086\necho $1\n' >> "$tmp/sh/clean.sh"
sh_expect_fail "an inline shellcheck disable fails the shell lint" "inline disable"

# A shellcheck that cannot run fails it (no findings is not a pass).
shfresh
mkdir -p "$tmp/shbin"
printf '#!/bin/sh\necho "shellcheck: cannot run" >&2\nexit 3\n' > "$tmp/shbin/shellcheck"
chmod +x "$tmp/shbin/shellcheck"
if PATH=$tmp/shbin:$PATH shlint shnocheck; then
	tap_diag_file "$tmp/shnocheck.out"
	tap_not_ok "a shellcheck that cannot run fails the shell lint: it passed"
elif grep -q '^shellcheck: FAIL shellcheck exited 3' "$tmp/shnocheck.out"; then
	tap_ok "a shellcheck that cannot run fails the shell lint"
else
	tap_diag_file "$tmp/shnocheck.out"
	tap_not_ok "a shellcheck that cannot run fails the shell lint: not for that reason"
fi

# ---- the fast lint (make check's lint-fast part) -------------------------------
# lffresh: a tree of the module, one clean script and an accept list
# without entries
lffresh() {
	rm -rf "$tmp/lf" "$tmp/lfbuild"
	mkdir -p "$tmp/lf/module" "$tmp/lf/tests"
	cp -p "$top"/module/*.c "$top"/module/*.h "$top"/module/Kbuild \
		"$top"/module/lint-accept "$tmp/lf/module/"
	printf '#!/bin/sh\necho "$1"\n' > "$tmp/lf/clean.sh"
	printf '# planted by tests/lint-test.sh: nothing accepted\n' > "$tmp/lf/tests/shellcheck-accept"
}

# lintfast NAME: run the fast lint on that tree, output in $tmp/NAME.out
lintfast() {
	"$top/tests/lint-fast.sh" -c "$checkpatch" "$tmp/lf" "$tmp/lfbuild" > "$tmp/$1.out" 2>&1
}

lffresh
if lintfast lfclean && grep -q '^[0-9]* passed, 0 failed$' "$tmp/lfclean.out"; then
	tap_ok "the fast lint passes a clean tree"
else
	tap_diag_file "$tmp/lfclean.out"
	tap_not_ok "the fast lint passes a clean tree"
fi

# Both tools at once: each one's test fails, naming its finding, and
# checkpatch-only means no W=1 or sparse build.
lffresh
printf 'echo $1\n' >> "$tmp/lf/clean.sh"
printf '\n/* planted */ \n' >> "$tmp/lf/module/$victim"
if lintfast lfplanted; then
	tap_diag_file "$tmp/lfplanted.out"
	tap_not_ok "a shellcheck and a checkpatch finding fail the fast lint: it passed"
elif grep -q '^not ok [0-9]* shellcheck: ' "$tmp/lfplanted.out" &&
     grep -q '^# shellcheck: FAIL clean\.sh:3:6: .*\[SC2086\]' "$tmp/lfplanted.out" &&
     grep -q '^not ok [0-9]* checkpatch: ' "$tmp/lfplanted.out" &&
     grep -q "^# lint: FAIL checkpatch: $victim:.*TRAILING_WHITESPACE" "$tmp/lfplanted.out" &&
     ! grep -q 'W=1' "$tmp/lfplanted.out"; then
	tap_ok "a shellcheck and a checkpatch finding fail the fast lint, each named"
else
	tap_diag_file "$tmp/lfplanted.out"
	tap_not_ok "a shellcheck and a checkpatch finding fail the fast lint: not as expected"
fi

# ---- the packages' lintian ----------------------------------------------------
# A git tree of the files git knows (build-debs.sh builds those), with a
# Maintainer lintian calls bogus and no debian/copyright.
mkdir -p "$tmp/pkg"
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	tar --null -T - -cf -) | tar -C "$tmp/pkg" -xf -
sed -i 's/^Maintainer: .*/Maintainer: root <root@localhost>/' "$tmp/pkg/debian/control"
rm -f "$tmp/pkg/debian/copyright"
git -C "$tmp/pkg" init -q && git -C "$tmp/pkg" add -A
if "$top/images/deb/build-debs.sh" bookworm "$tmp/pkg" "$tmp/pkgbuild" > "$tmp/deb.out" 2>&1; then
	tap_diag_file "$tmp/deb.out"
	tap_not_ok "a bogus Maintainer and no copyright fail the packages' lintian: it passed"
elif grep -q 'bogus-mail-host' "$tmp/deb.out" && grep -q 'no-copyright-file' "$tmp/deb.out" &&
     [ -z "$(ls -A "$tmp/pkgbuild/deb")" ]; then
	tap_ok "a bogus Maintainer and no copyright fail the packages' lintian, nothing left behind"
else
	tap_diag_file "$tmp/deb.out"
	find "$tmp/pkgbuild/deb" -mindepth 1 -maxdepth 1 | sed 's/^/# left: /'
	tap_not_ok "a bogus Maintainer and no copyright fail the packages' lintian: not for that reason"
fi

tap_done
