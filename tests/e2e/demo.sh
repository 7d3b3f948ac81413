#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The narrated demo (make demo): builds or reuses the Debian 12 cloud
# image, boots it, and walks through the cover letter's scene (scenario
# 4), an unprivileged LXC container on a root-owned rootfs (scenario 1)
# and an arm64 image run through qemu-user-static in an unprivileged
# container (scenario 3), showing the ls -l views from the host, through
# the shift, and from inside the container.
#
#   tests/e2e/demo.sh KVER BUILD_DIR
set -u
[ $# -eq 2 ] || { echo "usage: $0 KVER BUILD_DIR" >&2; exit 2; }
cat <<'INTRO'
shiftfs demo
============
shiftfs shows a directory tree with its uids and gids shifted: a tree
owned by real root (0) on disk appears owned by 100000 through the mount,
which is what an unprivileged container (whose root is host uid 100000)
needs to use a root-owned image without a chown -R.  Files the container
creates land on disk owned by 0.

Everything runs in a QEMU guest: a Debian 12 cloud image built from
packages (debootstrap, cached after the first build), configured by a
cloud-init NoCloud seed, with the shiftfs module, shiftctl and LXC.

INTRO
exec "$(dirname "$0")/run-e2e.sh" -d -t s4,s1,s3 "$1" "$2"
