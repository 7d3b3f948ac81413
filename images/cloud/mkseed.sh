#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The NoCloud seed of the e2e guest, made with cloud-localds: its
# user-data (images/cloud/e2e-user-data.yaml, checked against cloud-init's
# schema by tests/cloud-init-schema.sh) mounts the payload disk, installs
# the project's files from it (tests/e2e/guest/install.sh) and runs the
# guest driver
# (tests/e2e/guest/main.sh), which reports on the second serial port and
# powers off.  Should the payload be missing, the guest says so and powers
# off rather than waiting for the host's timeout.
#
#   images/cloud/mkseed.sh OUT.img
set -eu

[ $# -eq 1 ] || { echo "usage: $0 OUT.img" >&2; exit 2; }
out=$1
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

cat > "$dir/meta-data" <<EOF2
instance-id: shiftfs-e2e-$(date +%s)
local-hostname: shiftfs-e2e
EOF2
cloud-localds "$out" "$here/e2e-user-data.yaml" "$dir/meta-data"
