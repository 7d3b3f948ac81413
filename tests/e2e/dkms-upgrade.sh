#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The DKMS kernel-upgrade scene on Debian 13: the moment out-of-tree
# users get hurt.  The Debian 13 image boots its own kernel (6.12+deb13),
# installs the shiftfs .debs (DKMS builds the module), then upgrades to
# the trixie-backports kernel (7.3) from packages on a disk: DKMS's
# kernel hook must build shiftfs for it.  Then the "reboot": the host
# takes the new kernel and the initrd the guest made out of the guest's
# disk (qemu-img convert, debugfs; nothing is mounted) and boots them on
# the same disk, as the guest's boot loader would; shiftfs loads from
# DKMS's build and an unprivileged container starts shifted.
#
#   tests/e2e/dkms-upgrade.sh [-T SECS] BUILD_DIR
#
#   -T SECS   timeout of each boot (default 3600)
#
# Kernels: images/kver.sh 6.12+deb13 and 7.3 (never hard-coded).  The
# image: BUILD_DIR/cloud/base-RELEASE-*/ (images/cloud/build-image.sh).
# The shiftfs packages: $DKMS_DEBS, else BUILD_DIR/deb/trixie, else
# BUILD_DIR/deb (shiftfs-dkms_*.deb, shiftctl_*.deb).  The new kernel's
# packages are what apt (images/apt-suite.sh, trixie) says its image and
# headers need on top of the image's installed packages (its dpkg status,
# read from the image), downloaded to BUILD_DIR/cloud/dkms-upgrade/kdebs.
# The log and the guests' logs stay in BUILD_DIR/cloud/dkms-upgrade/;
# the disks are removed.  The last line is "N passed, N failed".
set -u

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/cloud-guest.sh
. "$here/../lib/cloud-guest.sh"
cloud_guest_opts 3600 "BUILD_DIR" "$@"
shift "$CLOUD_OPTSHIFT"
[ $# -eq 1 ] || { echo "usage: $0 [-T SECS] BUILD_DIR" >&2; exit 2; }
mkdir -p "$1" || exit 1
build=$(cd "$1" && pwd)
top=$(cd "$here/../.." && pwd)
out=$build/cloud/dkms-upgrade
logs=$out/logs
# (one run at a time: the logs and the downloads are shared)
cloud_guest_run dkms-upgrade "$out" debugfs mke2fs cloud-localds

# ---- the kernels, the image, the packages -----------------------------------
old=$("$top/images/kver.sh" -b "$build" 6.12+deb13) || die "no trixie 6.12 kernel (images/kver.sh 6.12+deb13)"
new=$("$top/images/kver.sh" -b "$build" 7.3) || die "no trixie-backports 7.3 kernel (images/kver.sh 7.3)"
# The suite within trixie that ships it (trixie-backports): apt prefers it.
newsuite=$("$top/images/kver.sh" -b "$build" -l 7.3 | awk 'NR == 2 { print $4 }')
note "from $old (trixie) to $new ($newsuite)"

base=
for d in "$build"/cloud/base-"$old"-*/; do
	[ -f "$d/.done" ] && base=${d%/}
done
if [ -z "$base" ]; then
	note "no Debian 13 image for $old yet: building it (images/cloud/build-image.sh)"
	base=$("$top/images/cloud/build-image.sh" "$old" "$build" | tail -n 1)
	[ -f "$base/.done" ] || die "no Debian 13 cloud image for $old (images/cloud/build-image.sh $old $build)"
fi
note "image: $base"

debdir=${DKMS_DEBS:-}
if [ -z "$debdir" ]; then
	debdir=$build/deb
	ls "$build"/deb/trixie/shiftfs-dkms_*.deb >/dev/null 2>&1 && debdir=$build/deb/trixie
fi
dkms_deb='' ctl_deb=''
for f in "$debdir"/shiftfs-dkms_*.deb; do [ -f "$f" ] && dkms_deb=$f; done
for f in "$debdir"/shiftctl_*.deb; do [ -f "$f" ] && ctl_deb=$f; done
if [ -z "$dkms_deb" ] || [ -z "$ctl_deb" ]; then
	die "no shiftfs-dkms_*.deb and shiftctl_*.deb in $debdir (make deb)"
fi
note "shiftfs packages: $dkms_deb $ctl_deb"

work=$(mktemp -d "$out/work.XXXXXX") || die "mktemp failed"
# The image's installed packages, for apt to say what the upgrade adds.
qemu-img convert -O raw "$base/base.qcow2" "$work/disk.raw" || die "qemu-img convert $base/base.qcow2 failed"
debugfs -R "dump /var/lib/dpkg/status $work/status" "$work/disk.raw" >/dev/null 2>&1
[ -s "$work/status" ] || die "cannot read /var/lib/dpkg/status from the image"
rm -f "$work/disk.raw"
kdebs=$out/kdebs
rm -rf "$kdebs"
mkdir -p "$kdebs/partial"
note "downloading linux-image-$new linux-headers-$new and what they need that the image lacks"
if ! "$top/images/apt-suite.sh" trixie "$build" apt-get install --download-only -y -q \
	--no-install-recommends -t "$newsuite" \
	-o Debug::NoLocking=1 -o Dir::State::status="$work/status" \
	-o Dir::Cache::archives="$kdebs" \
	"linux-image-$new" "linux-headers-$new" > "$logs/apt-download.log" 2>&1; then
	sed 's/^/  /' "$logs/apt-download.log" | tail -n 20
	die "apt-get could not download $new's packages"
fi
rm -rf "$kdebs/partial" "$kdebs/lock"
ls "$kdebs"/linux-headers-"$new"_*.deb >/dev/null 2>&1 ||
	die "apt downloaded no linux-headers-$new"
for f in "$kdebs"/*.deb; do echo "  ${f##*/}"; done

# The payload disk: the guest scripts, the packages, the new kernel's.
stage=$work/stage
mkdir -p "$stage/e2e" "$stage/deb" "$stage/kernel"
cp "$top"/tests/e2e/guest/* "$top"/tests/lib/tap.sh "$stage/e2e/"
cp "$dkms_deb" "$ctl_deb" "$stage/deb/"
cp "$kdebs"/*.deb "$stage/kernel/"
echo "$new" > "$stage/kernel/release"
kib=$(du -sk "$stage" | cut -f1)
mke2fs -q -t ext4 -L shiftfs-payload -E root_owner=0:0 -d "$stage" "$work/payload.img" \
	"$(( kib + 16384 ))k" >/dev/null || die "mke2fs of the payload failed"
rm -rf "$stage"
qemu-img create -q -f qcow2 -b "$base/base.qcow2" -F qcow2 "$work/overlay.qcow2" ||
	die "qemu-img create of the overlay failed"

cloud_guest_accel "$build" "$base/vmlinuz"

# boot N KERNEL INITRD SCENARIO: one boot of the disk, a fresh seed (a new
# instance id: cloud-init runs the scenario again), its TAP on stdout.
boot() {
	local n=$1 kernel=$2 initrd=$3 scen=$4 t0 rc
	"$top/images/cloud/mkseed.sh" "$work/seed$n.img" || return 1
	note "boot $n: $(basename "$kernel") ($CLOUD_ACCEL), scenario $scen"
	t0=$(date +%s)
	cloud_guest_start "$limit" "$kernel" "$initrd" "shiftfs.e2e.tests=$scen" \
		"$logs/boot$n-console.log" "$logs/boot$n-tap.log" "$logs/boot$n-qemu.log" \
		"$work/overlay.qcow2" "$work/payload.img" "$work/seed$n.img"
	tail -n +1 -f --pid="$CLOUD_QPID" "$logs/boot$n-tap.log" 2>/dev/null | sed -u 's/\r$//'
	cloud_guest_wait
	rc=$?
	note "boot $n: $(( $(date +%s) - t0 ))s (qemu exit $rc)"
	[ $rc -eq 124 ] || [ $rc -eq 137 ] && reasons+="boot $n timed out after ${limit}s; "
	grep -aq '^SHIFTFS-E2E-DONE' "$logs/boot$n-tap.log" ||
		reasons+="boot $n did not finish (see $logs/boot$n-console.log); "
	if ! bad=$("$top/tests/scan-kernel-log.sh" "$logs/boot$n-console.log"); then
		echo "$bad" | sed 's/^/  kernel log: /' | head -n 30
		reasons+="boot $n's kernel log shows WARN/BUG/Oops/lockdep reports; "
	fi
	grep -aq '^SHIFTFS-DMESG-END' "$logs/boot$n-console.log" ||
		reasons+="boot $n's kernel log is incomplete; "
	return 0
}

reasons=
boot 1 "$base/vmlinuz" "$base/initrd.img" dkms-upgrade-1

# ---- the reboot: the new kernel and initrd, out of the guest's disk ----------
files=$(tr -d '\r' < "$logs/boot1-tap.log" | sed -n 's/^# boot-files: //p' | tail -n 1)
read -r vmlinuz initrd <<< "$files"
if [ -n "${vmlinuz:-}" ] && [ -n "${initrd:-}" ]; then
	qemu-img convert -O raw "$work/overlay.qcow2" "$work/disk.raw" || die "qemu-img convert of the guest's disk failed"
	debugfs -R "dump $vmlinuz $work/vmlinuz" "$work/disk.raw" >/dev/null 2>&1
	debugfs -R "dump $initrd $work/initrd.img" "$work/disk.raw" >/dev/null 2>&1
	rm -f "$work/disk.raw"
	note "the reboot: $vmlinuz ($(stat -c %s "$work/vmlinuz" 2>/dev/null || echo none) bytes), $initrd ($(stat -c %s "$work/initrd.img" 2>/dev/null || echo none) bytes) from the guest's disk"
fi
if [ -s "$work/vmlinuz" ] && [ -s "$work/initrd.img" ]; then
	boot 2 "$work/vmlinuz" "$work/initrd.img" dkms-upgrade-2
else
	reasons+="no new kernel or initrd on the guest's disk after boot 1 ('${files}'): no boot 2; "
fi

# ---- the verdict ------------------------------------------------------------
note "log: $out/dkms-upgrade.log, guests' logs in $logs/"
cat "$logs"/boot*-tap.log | awk -v reasons="${reasons%; }" -f "$top/tests/tap-summary.awk"
