#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch the sparse program of Debian RELEASE (default sid) into
# BUILD_DIR/sparse/VERSION/ and print its path: kbuild's CHECK= for the
# 7.x kernels, whose headers the sparse 0.6.4 of bookworm and trixie
# cannot parse (sid has 0.6.5~rc1; tests/lint.sh).  apt-get download of
# that release's sparse package (images/apt-suite.sh; nothing installed),
# only /usr/bin/sparse unpacked, the .deb thrown away.  The binary needs
# only libc (2.38 or later: trixie's and sid's, not bookworm's), so that
# it runs in the trixie chroot too.  Cached per version: a no-op once it
# is there.
#
#   images/fetch-sparse.sh BUILD_DIR [RELEASE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 BUILD_DIR [RELEASE]" >&2
	exit 2
fi
mkdir -p "$1"
build=$(cd "$1" && pwd)
rel=${2:-sid}
aptr() {
	"$here/apt-suite.sh" "$rel" "$build" "$@"
}

ver=$(aptr apt-cache policy sparse 2>/dev/null | sed -n 's/^ *Candidate: //p' || true)
case $ver in
''|'(none)')
	echo "fetch-sparse.sh: $rel's apt offers no sparse package" >&2
	exit 1
	;;
esac
out=$build/sparse/$rel-$ver
if [ -x "$out/sparse" ]; then
	echo "$out/sparse"
	exit 0
fi
dl=$build/sparse/dl
rm -rf "$dl" "$out"
mkdir -p "$dl" "$out"
echo "fetch-sparse.sh: downloading $rel's sparse $ver" >&2
if ! (cd "$dl" && aptr apt-get download -q -o APT::Sandbox::User=root sparse >&2) ||
   ! dpkg-deb -x "$dl"/sparse_*.deb "$dl/root" ||
   [ ! -x "$dl/root/usr/bin/sparse" ]; then
	echo "fetch-sparse.sh: could not fetch and unpack $rel's sparse $ver" >&2
	rm -rf "$dl" "$out"
	exit 1
fi
install -m 755 "$dl/root/usr/bin/sparse" "$out/sparse.tmp"
mv "$out/sparse.tmp" "$out/sparse"
rm -rf "$dl"
echo "$out/sparse"
