#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host test of the Makefile itself, no root needed: "make help" has a line
# for every .PHONY target (and names no target that does not exist), and
# a KDIR, which the Makefile does not use, is refused with an error that
# names it, before anything is built.  Prints TAP and "N passed, N failed".
#
#   tests/make-test.sh TOP BUILD_DIR
set -u
top=$1
build=$2
. "$(dirname "$0")/lib/tap.sh"

tap_start
tmp=$(mktemp -d "$build/make-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# make's database: every target and the .PHONY list, without running a
# recipe (-q) or the built-in rules (-rR).
make -pRrq -C "$top" __make_test_no_such_target__ > "$tmp/db" 2> /dev/null
phony=$(sed -n 's/^\.PHONY: //p' "$tmp/db" | tr ' ' '\n' | sed '/^$/d' | sort -u)
if [ -z "$phony" ]; then
	tap_not_ok "make's database lists the .PHONY targets"
else
	tap_ok "make's database lists $(echo "$phony" | wc -l) .PHONY targets"
fi

# The help: "  TARGET  description" lines (two blanks, the name).
if ! make -s --no-print-directory -C "$top" help > "$tmp/help" 2>&1; then
	tap_diag_file "$tmp/help"
	tap_not_ok "make help runs"
else
	tap_ok "make help runs"
fi
helped=$(sed -nE 's/^  ([A-Za-z0-9_.-]+)( .*)?$/\1/p' "$tmp/help" | sort)
missing=$(comm -23 <(echo "$phony") <(echo "$helped" | sort -u))
if [ -n "$missing" ]; then
	tap_not_ok "make help has a line for every .PHONY target"
	tap_diag "no help line for: $(echo "$missing" | tr '\n' ' ')"
else
	tap_ok "make help has a line for every .PHONY target"
fi
twice=$(echo "$helped" | uniq -d)
if [ -n "$twice" ]; then
	tap_not_ok "make help has one line per target"
	tap_diag "more than one line for: $(echo "$twice" | tr '\n' ' ')"
else
	tap_ok "make help has one line per target"
fi
unknown=
for t in $helped; do
	grep -q "^$t:" "$tmp/db" || unknown="$unknown $t"
done
if [ -n "$unknown" ]; then
	tap_not_ok "every target make help names exists"
	tap_diag "not a target:$unknown"
else
	tap_ok "every target make help names exists"
fi

# KDIR: a user's "make module KDIR=..." must not build against another
# tree than it says, nor silently against the default one.  A private
# BUILD so that nothing of the real build tree is touched either way.
for how in "command line" environment; do
	if [ "$how" = environment ]; then
		KDIR=/nonexistent make -C "$top" module BUILD="$tmp/b" > "$tmp/kdir.out" 2>&1
	else
		make -C "$top" module KDIR=/nonexistent BUILD="$tmp/b" > "$tmp/kdir.out" 2>&1
	fi
	rc=$?
	if [ $rc -eq 0 ]; then
		tap_not_ok "KDIR=/nonexistent ($how): make module fails"
		tap_diag "it exited 0:"
		tap_diag_file "$tmp/kdir.out"
	elif ! grep -q 'KDIR=/nonexistent is not used' "$tmp/kdir.out"; then
		tap_not_ok "KDIR=/nonexistent ($how): make module fails naming KDIR"
		tap_diag_file "$tmp/kdir.out"
	elif [ -e "$tmp/b" ]; then
		tap_not_ok "KDIR=/nonexistent ($how): refused before anything is built"
		tap_diag "$tmp/b was made"
	else
		tap_ok "KDIR=/nonexistent ($how): make module refuses it, naming it, building nothing"
	fi
	rm -rf "$tmp/b"
done

# make e2e DEBIAN=12|13: another Debian release, or a KVER of the other
# release than DEBIAN's, is refused with an error saying what to run,
# before anything is built (no apt asked either: kver.sh -s).
e2e_refused() {
	local name=$1 want=$2
	shift 2
	make -C "$top" e2e "$@" BUILD="$tmp/b" > "$tmp/e2e.out" 2>&1
	local rc=$?
	if [ $rc -eq 0 ]; then
		tap_not_ok "make e2e $*: refused"
		tap_diag "it exited 0:"
		tap_diag_file "$tmp/e2e.out"
	elif ! grep -qF "$want" "$tmp/e2e.out"; then
		tap_not_ok "make e2e $*: refused, saying '$want'"
		tap_diag_file "$tmp/e2e.out"
	elif [ -e "$tmp/b" ]; then
		tap_not_ok "make e2e $*: refused before anything is built"
		tap_diag "$tmp/b was made"
	else
		tap_ok "make e2e $*: $name, refused before anything is built"
	fi
	rm -rf "$tmp/b"
}
e2e_refused "no such release" "DEBIAN=11: the e2e tier boots Debian 12 (bookworm) or 13 (trixie)" DEBIAN=11
e2e_refused "bookworm's kernel on Debian 13" "KVER=6.1 is a kernel of bookworm, not of Debian 13 (trixie): make e2e DEBIAN=12 KVER=6.1" KVER=6.1
e2e_refused "trixie's kernel on Debian 12" "KVER=7.3 is a kernel of trixie, not of Debian 12 (bookworm): make e2e DEBIAN=13 KVER=7.3" DEBIAN=12 KVER=7.3

tap_done
