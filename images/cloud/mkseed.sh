#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The NoCloud seed of the e2e guest, made with cloud-localds: its
# user-data mounts the payload disk, installs the project's files from it
# (tests/e2e/guest/install.sh) and runs the guest driver
# (tests/e2e/guest/main.sh), which reports on the second serial port and
# powers off.  Should the payload be missing, the guest says so and powers
# off rather than waiting for the host's timeout.
#
#   images/cloud/mkseed.sh OUT.img
set -eu

out=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

cat > "$dir/user-data" <<'EOF2'
#cloud-config
# bootcmd (cloud-init's init stage): mount the payload disk and install
# the project's files from it in the background (depmod takes a while
# under TCG) while cloud-init goes on.  runcmd (final stage, the system is
# up): the same mount (&mount_payload), should the early one have failed,
# then the scenarios; main.sh waits for the install to finish.
bootcmd:
  - &mount_payload
    - sh
    - -c
    - |
      p=/run/shiftfs-payload
      mkdir -p $p
      dev=/dev/disk/by-label/shiftfs-payload
      [ -e $dev ] || dev=/dev/vdb
      mountpoint -q $p || mount -o ro $dev $p
  - - sh
    - -c
    - |
      p=/run/shiftfs-payload
      mountpoint -q $p || exit 0
      systemd-run --no-block --unit=shiftfs-e2e-install $p/e2e/install.sh
runcmd:
  - *mount_payload
  - - sh
    - -c
    - |
      p=/run/shiftfs-payload
      if mountpoint -q $p && [ -x $p/e2e/main.sh ]; then
        exec $p/e2e/main.sh
      fi
      echo "SHIFTFS-E2E-ERROR: cannot mount the payload disk (LABEL=shiftfs-payload, else /dev/vdb)" > /dev/ttyS1
      poweroff -f
EOF2
cat > "$dir/meta-data" <<EOF2
instance-id: shiftfs-e2e-$(date +%s)
local-hostname: shiftfs-e2e
EOF2
cloud-localds "$out" "$dir/user-data" "$dir/meta-data"
