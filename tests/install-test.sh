#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host test, no root needed: "make install DESTDIR=…" puts every file where
# admins and LXC expect it, and "make uninstall DESTDIR=…" takes exactly
# those away again, leaving the directory empty.  Then, when make deb has
# built the Debian 12 packages (BUILD_DIR/deb/bookworm/), that they carry
# what "make install PREFIX=/usr" puts there, file for file and mode for
# mode, and nothing else but their doc/ (copyright, changelog).  Prints
# TAP and "N passed, N failed[, N skipped]".
#
#   tests/install-test.sh TOP BUILD_DIR
set -u
top=$1
build=$2
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
	 /usr/src/shiftfs-$version/super.c /etc/apparmor.d/shiftfs-lxc-hook \
	 /etc/apparmor.d/lxc-container-shiftfs-user /usr/local/lib/shiftfs/shiftfs-apparmor \
	 /usr/local/lib/shiftfs/lxc-container-shiftfs-user.nosymfollow \
	 /usr/local/lib/systemd/system/shiftfs-marks.service; do
	tap_check "installed $f" "[ -f '$dest$f' ]"
done
tap_check "shiftctl is executable" "[ -x '$dest/usr/local/sbin/shiftctl' ]"
tap_check "hook is executable" "[ -x '$dest/usr/local/share/lxc/hooks/shiftfs' ]"
tap_check "the AppArmor loader is executable" "[ -x '$dest/usr/local/lib/shiftfs/shiftfs-apparmor' ]"
tap_check "dkms.conf carries the version" \
	"grep -q 'PACKAGE_VERSION=\"$version\"' '$dest/usr/src/shiftfs-$version/dkms.conf'"
tap_check "LXC snippet names the installed hook" \
	"grep -q '/usr/local/share/lxc/hooks/shiftfs' '$dest/usr/local/share/lxc/config/shiftfs.conf' && ! grep -q '@LXCHOOKDIR@' '$dest/usr/local/share/lxc/config/shiftfs.conf'"
tap_check "the marks unit runs the installed shiftctl" \
	"grep -qx 'ExecStart=/usr/local/sbin/shiftctl mark --declared' '$dest/usr/local/lib/systemd/system/shiftfs-marks.service'"
tap_check "installed shiftctl runs" "'$dest/usr/local/sbin/shiftctl' --version | grep -q '$version'"

make -s --no-print-directory -C "$top" uninstall DESTDIR="$dest" > "$dest.log" 2>&1
rc=$?
tap_check "make uninstall DESTDIR succeeds" "[ $rc -eq 0 ]" || tap_diag_file "$dest.log"
left=$(cd "$dest" && find . -mindepth 1 | head -20)
tap_check "uninstall leaves DESTDIR empty" "[ -z '$left' ]" ||
	echo "$left" | sed 's/^/# left: /'
rm -f "$dest.log"

# FILE-LIST of a tree: "MODE PATH" of each file and link, sorted, the
# man page uncompressed (dh_compress gzips it), doc/ left out.
list_tree() {
	(cd "$1" && find . -mindepth 1 ! -type d -printf '%M %P\n') |
		sed -e 's|^\([^ ]*\) \(.*/man/.*\)\.gz$|\1 \2|' -e '\| usr/share/doc/|d' | sort
}
debs=$(ls "$build"/deb/bookworm/shiftctl_"$version"_*.deb \
	"$build"/deb/bookworm/shiftfs-dkms_"$version"_all.deb 2>/dev/null)
if [ "$(echo "$debs" | grep -c '\.deb$')" -ne 2 ]; then
	tap_skip "the .debs carry what make install PREFIX=/usr puts there" \
		"no packages of $version in $build/deb/bookworm (make deb)"
else
	make -s --no-print-directory -C "$top" install PREFIX=/usr DESTDIR="$dest/inst" > "$dest.log" 2>&1 ||
		tap_diag_file "$dest.log"
	for d in $debs; do
		dpkg-deb -x "$d" "$dest/deb"
	done
	left=$(diff <(list_tree "$dest/inst") <(list_tree "$dest/deb"))
	tap_check "the .debs carry what make install PREFIX=/usr puts there" "[ -z \"\$left\" ] && [ -s '$dest/inst/usr/sbin/shiftctl' ]" ||
		{ tap_diag "$left"; tap_diag "(< make install, > the .debs; rebuild them with make deb if the tree changed)"; }
	tap_check "the .debs carry copyright and changelog" \
		"[ -f '$dest/deb/usr/share/doc/shiftctl/copyright' ] && [ -f '$dest/deb/usr/share/doc/shiftfs-dkms/changelog.gz' ]"
	rm -f "$dest.log"
fi

tap_done
