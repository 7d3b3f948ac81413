#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Check that FSTESTS names a checkout of fstests at the pinned commit
# (tests/fstests/PINNED) with no change to its tracked files; say what to
# do when it does not.  make fstests and tests/fstests/run.sh call it
# before building anything.
#
#   tests/fstests/check-src.sh DIR
set -eu
here=$(cd "$(dirname "$0")" && pwd)
pinned=$(cat "$here/PINNED")
how="get it with:
    git clone https://git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git DIR
    git -C DIR checkout $pinned
  (or any clone that has that commit), then: make fstests FSTESTS=DIR"
if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "fstests: FSTESTS is not set: make fstests needs a checkout of fstests at commit $pinned;" >&2
	echo "  $how" >&2
	exit 1
fi
if [ ! -d "$1" ]; then
	echo "fstests: FSTESTS=$1 is not a directory;" >&2
	echo "  $how" >&2
	exit 1
fi
if [ ! -f "$1/check" ] || [ ! -f "$1/common/rc" ]; then
	echo "fstests: FSTESTS=$1 is not an fstests checkout (no check, common/rc);" >&2
	echo "  $how" >&2
	exit 1
fi
head=$(git -C "$1" rev-parse HEAD 2>/dev/null) || {
	echo "fstests: FSTESTS=$1 is not a git checkout (its commit cannot be checked);" >&2
	echo "  $how" >&2
	exit 1
}
if [ "$head" != "$pinned" ]; then
	echo "fstests: FSTESTS=$1 is at $head, not the pinned $pinned;" >&2
	echo "  run: git -C $1 fetch && git -C $1 checkout $pinned" >&2
	exit 1
fi
if ! git -C "$1" diff --quiet HEAD --; then
	echo "fstests: FSTESTS=$1 has changes to its tracked files; the run uses the pinned commit as it is" >&2
	echo "  (tests/fstests/shiftfs.patch is applied to a copy): git -C $1 stash, or use a clean checkout" >&2
	exit 1
fi
