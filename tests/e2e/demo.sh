#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The narrated demo (make demo): builds or reuses the cloud image of
# KVER's Debian release (13, the stable release, by default), boots it, and walks through the cover letter's scene (scenario
# 4), an unprivileged LXC container on a root-owned rootfs (scenario 1)
# and the cover letter's build container: a root-owned Debian arm64 image
# booted as an unprivileged container with the build map, administered,
# built in as a user, and cloned (scenario 8), showing the ls -l views
# from the host, through the shift, and from inside the container.
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

Everything runs in a QEMU guest: a Debian cloud image built from
packages (debootstrap, cached after the first build), configured by a
cloud-init NoCloud seed, with the shiftfs module, shiftctl and LXC as
"apt-get install lxc" leaves it: AppArmor enforcing, containers confined
by the profile LXC generates, networked through lxc-net.
The last scene boots a Debian arm64 image (built once and cached: its
second stage runs in an emulated arm64 machine) as a container whose
every program is arm64 code run by qemu-user-static: under the test
guest's own emulation each program start takes most of a second, so
that scene takes some minutes.

INTRO
exec "$(dirname "$0")/run-e2e.sh" -d -t s4,s1,s8 "$1" "$2"
