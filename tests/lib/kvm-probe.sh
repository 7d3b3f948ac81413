# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# The accelerator the test guests boot with, sourced by the fast runner
# (tests/run-guest.sh) and the end-to-end runner (tests/e2e/run-e2e.sh).
#
#   accel=$(probe_accel CACHE KERNEL)     prints kvm or tcg
#
# /dev/kvm may exist and still hang (nested virtualisation here does):
# boot KERNEL with no root under KVM once, with a short timeout, and fall
# back to TCG if it does not come back.  The verdict is kept in CACHE (the
# build tree's "accel" file) and read from there on later runs: delete it
# to probe again.
probe_accel() {
	if [ -f "$1" ]; then
		cat "$1"
		return
	fi
	_accel=tcg
	if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
		if timeout 15 qemu-system-x86_64 -accel kvm -cpu host -m 256 \
			-nodefaults -display none -no-reboot \
			-kernel "$2" -append "panic=-1 console=ttyS0" \
			-serial none >/dev/null 2>&1; then
			_accel=kvm
		fi
	fi
	echo "$_accel" > "$1"
	echo "$_accel"
}
