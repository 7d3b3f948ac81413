#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host test (make check): the cloud-config the project ships is valid for
# cloud-init's schema, checked with "cloud-init schema --config-file":
#   - the e2e guest's seed (images/cloud/e2e-user-data.yaml, mkseed.sh),
#   - the snippet for fleets the README shows (images/cloud-init/shiftfs.yaml),
#   - and a known-bad sample, which must be rejected (else the check
#     proves nothing).
# cloud-init logs an invalid config as a warning and carries on; the e2e
# guest's s0-boot fails on that warning, this finds it before a boot.
#
# cloud-init runs in the trixie build chroot (build/chroots/trixie, made by
# images/chroot.sh, cloud-init 25.1 installed there with its own apt the
# first time), never on the host.  Needs root.  Prints TAP and
# "N passed, N failed".
#
#   tests/cloud-init-schema.sh TOP BUILD_DIR
set -u
[ $# -eq 2 ] || { echo "usage: $0 TOP BUILD_DIR" >&2; exit 2; }
top=$(cd "$1" && pwd)
mkdir -p "$2"
build=$(cd "$2" && pwd)
. "$top/tests/lib/tap.sh"
rel=trixie
chroot_sh=$top/images/chroot.sh

tap_start
if [ "$(id -u)" -ne 0 ]; then
	tap_skip_all "needs root (cloud-init runs in the $rel build chroot)"
fi
tmp=$(mktemp -d "$build/cloud-init-schema.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# The chroot, and cloud-init in it (under the chroot's lock: a headers
# install may be running).
if ! "$chroot_sh" ensure $rel "$build" > "$tmp/ensure.log" 2>&1; then
	tap_not_ok "the $rel chroot is there (images/chroot.sh ensure $rel)"
	tap_diag_file "$tmp/ensure.log"
	tap_done
	exit 1
fi
(
	flock 9
	"$chroot_sh" run $rel "$build" sh -c 'command -v cloud-init' >/dev/null 2>&1 && exit 0
	echo "cloud-init-schema.sh: installing cloud-init in the $rel chroot" >&2
	"$chroot_sh" run $rel "$build" sh -c '
		apt-get -q update &&
		apt-get -y -q -o DPkg::Lock::Timeout=900 --no-install-recommends install cloud-init' \
		> "$tmp/apt.log" 2>&1 || { tail -n 20 "$tmp/apt.log" >&2; exit 1; }
) 9> "$build/chroots/$rel.lock"
ver=$("$chroot_sh" run $rel "$build" cloud-init --version 2>&1)
if ! tap_check "cloud-init runs in the $rel chroot (${ver:-none})" \
	"'$chroot_sh' run $rel '$build' cloud-init --version >/dev/null 2>&1"; then
	tap_done
	exit 1
fi

# schema FILE: cloud-init's verdict on FILE (copied under the build
# directory, which the chroot sees at the same path); its words in
# $tmp/out.
schema() {
	cp "$1" "$tmp/config.yaml"
	"$chroot_sh" run $rel "$build" cloud-init schema --config-file "$tmp/config.yaml" \
		> "$tmp/out" 2>&1
}

for f in images/cloud/e2e-user-data.yaml images/cloud-init/shiftfs.yaml; do
	if schema "$top/$f"; then
		tap_ok "cloud-init schema accepts $f"
	else
		tap_not_ok "cloud-init schema accepts $f"
		tap_diag_file "$tmp/out"
	fi
done

# Known bad: keys of the wrong type (what "users: []" was to 22.4).
cat > "$tmp/bad.yaml" <<'EOF'
#cloud-config
runcmd: "echo not a list"
write_files:
  - content: no path given
final_message: 5
EOF
if schema "$tmp/bad.yaml"; then
	tap_not_ok "cloud-init schema rejects a known-bad config (the check can fail)"
	tap_diag_file "$tmp/out"
else
	tap_ok "cloud-init schema rejects a known-bad config (the check can fail)"
fi
tap_done
