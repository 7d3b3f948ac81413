# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The one way to boot the Debian cloud image guest (images/cloud/), for
# every target that boots it: the e2e runner (tests/e2e/run-e2e.sh, and
# the demo through it), the DKMS kernel upgrade (dkms-upgrade.sh) and the
# README's cloud-init snippet (cloud-init-snippet.sh).  Sourced by bash:
#
#   cloud_guest_accel BUILD_DIR KERNEL
#       KVM where it works, else TCG (tests/lib/kvm-probe.sh, its verdict
#       cached in BUILD_DIR/accel): sets CLOUD_ACCEL (kvm or tcg).
#   cloud_guest_start LIMIT KERNEL INITRD APPEND CONSOLE TAP QEMU_LOG DISK...
#       boots KERNEL and INITRD on the DISKs (the first, the qcow2 overlay
#       of the image, is the root; a .qcow2 disk after it is writable, any
#       other a read-only raw disk: payload, seed), 2 vCPUs and 2 GiB, in
#       the background, killed after LIMIT seconds.  The kernel command
#       line is CLOUD_APPEND and APPEND; the first serial port goes to
#       CONSOLE, the second (the guest's TAP) to TAP, both emptied first.
#       Sets CLOUD_QPID; cloud_guest_wait waits for it and returns qemu's
#       exit status (124 or 137: killed at LIMIT).
#   cloud_guest_run NAME OUT TOOL...
#       the frame of a target that boots the guest on its own (all but the
#       e2e runner): note and die (with its "0 passed, 1 failed" line),
#       $work removed at exit, qemu and the TOOLs checked, one run at a
#       time on OUT (a lock), OUT/logs emptied, all that is printed kept
#       in OUT/NAME.log too.
#   cloud_guest_opts DEFAULT_LIMIT USAGE "$@"
#       a leading "-T SECS" (the limit of each boot): sets limit and
#       CLOUD_OPTSHIFT (shift it); USAGE (the rest of the usage line) on a
#       bad option.
# Call cloud_guest_accel before cloud_guest_start.

here_cloud_guest=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=kvm-probe.sh
. "$here_cloud_guest/kvm-probe.sh"

# The root disk by label, the console on the first serial port, a panic
# that ends the boot, cloud-init from the NoCloud seed disk.
CLOUD_APPEND="root=LABEL=shiftfs-root rw console=ttyS0 panic=-1 oops=panic loglevel=4 no_timer_check ds=nocloud systemd.show_status=auto"

cloud_guest_accel() {
	CLOUD_ACCEL=$(probe_accel "$1/accel" "$2")
}

cloud_guest_start() {
	local limit=$1 kernel=$2 initrd=$3 append=$4 console=$5 tap=$6 qlog=$7
	local cpu drives=() d
	shift 7
	if [ "$CLOUD_ACCEL" = kvm ]; then
		cpu=(-accel kvm -cpu host)
	else
		cpu=(-accel "tcg,thread=multi" -cpu max)
	fi
	drives=(-drive "if=virtio,file=$1,format=qcow2,cache=unsafe,discard=unmap")
	shift
	for d in "$@"; do
		case $d in
		*.qcow2) drives+=(-drive "if=virtio,file=$d,format=qcow2,cache=unsafe") ;;
		*) drives+=(-drive "if=virtio,file=$d,format=raw,readonly=on") ;;
		esac
	done
	: > "$console"
	: > "$tap"
	timeout -k 5 "$limit" qemu-system-x86_64 "${cpu[@]}" -m 2048 -smp 2 \
		-nodefaults -display none -no-reboot \
		-kernel "$kernel" -initrd "$initrd" -append "$CLOUD_APPEND${append:+ $append}" \
		"${drives[@]}" \
		-serial "file:$console" -serial "file:$tap" \
		</dev/null >>"$qlog" 2>&1 &
	CLOUD_QPID=$!
}

cloud_guest_wait() {
	wait "$CLOUD_QPID"
}

cloud_guest_run() {
	local t
	CLOUD_NAME=$1
	CLOUD_OUT=$2
	shift 2
	note() { echo "$CLOUD_NAME: $*"; }
	die() {
		note "ERROR: $*"
		echo "0 passed, 1 failed"
		exit 1
	}
	work=
	trap '[ -n "$work" ] && rm -rf "$work"' EXIT
	trap 'exit 130' INT TERM
	for t in qemu-system-x86_64 qemu-img "$@"; do
		command -v "$t" > /dev/null || die "$t is missing (images/setup-host.sh --e2e)"
	done
	mkdir -p "$CLOUD_OUT/logs" || exit 1
	exec 9> "$CLOUD_OUT/lock"
	flock -n 9 || die "another $CLOUD_NAME.sh is running on $CLOUD_OUT"
	rm -f "$CLOUD_OUT/logs"/*
	exec > >(tee "$CLOUD_OUT/$CLOUD_NAME.log") 2>&1
}

cloud_guest_opts() {
	local default=$1 usage=$2 opt OPTIND=1
	shift 2
	limit=$default
	while getopts T: opt; do
		case $opt in
		T) limit=$OPTARG ;;
		*) echo "usage: $0 [-T SECS] $usage" >&2; exit 2 ;;
		esac
	done
	case $limit in
	''|*[!0-9]*) echo "usage: $0 [-T SECS] $usage (SECS: a number of seconds)" >&2; exit 2 ;;
	esac
	CLOUD_OPTSHIFT=$((OPTIND - 1))
}
