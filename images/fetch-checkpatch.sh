#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch the kernel's checkpatch.pl and the data files it reads
# (spelling.txt, const_structs.checkpatch) into BUILD_DIR/checkpatch/,
# and print the path of checkpatch.pl.  Beside it, if that source has one,
# scripts/checker-valid.sh: the kbuild of 7.x (not 6.12) runs it before
# sparse (C=1) and silently drops sparse when it is missing, and Debian's
# linux-headers and linux-kbuild packages lack it (tests/lint.sh copies
# it into the build chroot's kbuild scripts).
#
#   images/fetch-checkpatch.sh BUILD_DIR [RELEASE [X.Y]]
#
# Debian ships checkpatch.pl only inside the linux-source-X.Y tarball
# (not in linux-headers-* nor linux-kbuild-*): linux-source-X.Y, or
# without X.Y (or if RELEASE has no such package) the newest
# linux-source-* the apt of Debian RELEASE offers (default: the host's,
# bookworm: 6.12; images/apt-suite.sh), is downloaded (apt-get download,
# nothing installed), only those files are unpacked from its
# tarball, and the .deb is thrown away.  Cached per source version: a
# no-op once it is there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
build=$(cd "$1" && pwd)
rel=${2:-}
series=${3:-}
if [ -z "$rel" ]; then
	rel=bookworm
	[ -r /etc/os-release ] && rel=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
fi
aptr() {
	"$here/apt-suite.sh" "$rel" "$build" "$@"
}

# linux-source-X.Y, else the newest that release's apt has, by name.
pkg=
if [ -n "$series" ] &&
   aptr apt-cache show --no-all-versions "linux-source-$series" 2>/dev/null |
	grep -qx "Package: linux-source-$series"; then
	pkg=linux-source-$series
fi
[ -n "$pkg" ] || pkg=$(aptr apt-cache search --names-only '^linux-source-[0-9]+\.[0-9]+$' 2>/dev/null |
	sed -n 's/^\(linux-source-[0-9.]*\) .*/\1/p' | sort -V | tail -n 1)
if [ -z "$pkg" ]; then
	echo "fetch-checkpatch.sh: $rel's apt offers no linux-source-X.Y package (run 'apt-get update'?)" >&2
	exit 1
fi
ver=$(aptr apt-cache policy "$pkg" | sed -n 's/^ *Candidate: //p')
out=$build/checkpatch/$pkg-$ver
# .unpacked says "2" once checker-valid.sh was looked for too.
if [ "$(cat "$out/.unpacked" 2>/dev/null)" = 2 ]; then
	echo "$out/checkpatch.pl"
	exit 0
fi

files="scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch"
optional="scripts/checker-valid.sh"
dl=$build/checkpatch/dl
rm -rf "$dl" "$out"
mkdir -p "$dl" "$out"
echo "fetch-checkpatch.sh: downloading $pkg $ver for checkpatch.pl" >&2
if ! (cd "$dl" && aptr apt-get download -q -o APT::Sandbox::User=root "$pkg" >&2); then
	echo "fetch-checkpatch.sh: apt-get download $pkg failed" >&2
	rm -rf "$dl" "$out"
	exit 1
fi
# tar stops reading once it has the files (--occurrence), so the
# writers upstream of it may die of SIGPIPE, and it complains of an
# optional file the source lacks: judge by the files unpacked.
members=
for f in $files $optional; do
	members="$members $pkg/$f"
done
set +o pipefail
dpkg-deb --fsys-tarfile "$dl"/"$pkg"_*.deb 2>/dev/null |
	tar -xO "./usr/src/$pkg.tar.xz" 2>/dev/null | xz -dc 2>/dev/null |
	tar -x -C "$dl" --occurrence=1 $members 2>/dev/null || true
set -o pipefail
for f in $files; do
	if [ ! -s "$dl/$pkg/$f" ]; then
		echo "fetch-checkpatch.sh: $pkg has no $f" >&2
		rm -rf "$dl" "$out"
		exit 1
	fi
	install -m 644 "$dl/$pkg/$f" "$out/"
done
for f in $optional; do
	[ ! -s "$dl/$pkg/$f" ] || install -m 755 "$dl/$pkg/$f" "$out/"
done
chmod 755 "$out/checkpatch.pl"
rm -rf "$dl"
echo 2 > "$out/.unpacked"
echo "$out/checkpatch.pl"
