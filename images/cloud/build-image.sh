#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Build (or reuse) the base Debian cloud image the e2e tests boot: the
# Debian release that ships KVER (images/kver.sh -s), with its own systemd,
# LXC and cloud-init: bookworm (Debian 12: LXC 5.0, cloud-init 22.4) for
# 6.1 and 6.12+deb12, trixie (Debian 13: LXC 6.0, cloud-init 25.1) for
# 6.12+deb13 and trixie-backports' 7.3.
#
#   images/cloud/build-image.sh KVER BUILD_DIR
#
# Prints the directory of the base image on its last line of stdout:
#   DIR/base.qcow2   ext4 root filesystem, no partition table (root=/dev/vda)
#   DIR/vmlinuz      the kernel of the image (linux-image-KVER)
#   DIR/initrd.img   its initramfs, made in the chroot by initramfs-tools
#   DIR/info         what went in, and how long it took (and the build logs)
#
# The base holds only what comes from Debian's packages (packages beside
# this script, and packages.RELEASE if a release needs other names) and
# this script's own configuration; it is cached under
# BUILD_DIR/cloud/base-KVER-KEY, KEY being a hash of the package lists,
# this script and the kernel release, and rebuilt only when one of them
# changes.  The project's own files (shiftfs.ko, shiftctl, the LXC hook,
# the test scripts) are never baked in: they reach the guest on a second
# disk (images/cloud/mkpayload.sh), so that a code change costs no rebuild.
#
# Packages come from the mirrors the host's apt uses, mapped to the
# release (mirrors.sh); .debs are kept per release in
# BUILD_DIR/cloud/debs-RELEASE so that a rebuild downloads little.
set -eu

say() { echo "build-image: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

[ $# -eq 2 ] || { echo "usage: $0 KVER BUILD_DIR" >&2; exit 2; }
kver=$1
build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
# The Debian release whose image boots KVER (trixie-backports' kernels
# boot in trixie's).
suite=$("$here/../kver.sh" -b "$build" -s "$kver") ||
	die "no Debian release ships kernel '$kver' (images/kver.sh -s)"
case $suite in
bookworm|trixie) ;;
*) die "no e2e cloud image for $suite's kernel $kver (bookworm and trixie only)" ;;
esac

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot)"
for t in debootstrap mke2fs qemu-img; do
	command -v $t >/dev/null || die "$t is missing (images/setup-host.sh --e2e)"
done

# A release's own package names, if it needs others: packages.RELEASE.
extra=/dev/null
[ -f "$here/packages.$suite" ] && extra=$here/packages.$suite
key=$( { echo "$kver $suite"; cat "$here/packages" "$extra" "$here/build-image.sh"; } |
	sha256sum | cut -c1-12)
cache=$build/cloud
out=$cache/base-$kver-$key
. "$here/../cache.sh"
cache_reuse "$cache" "$out" "base image"

mirror=$("$here/mirrors.sh" "$suite") ||
	die "no $suite mirror found in the host's apt sources"
secmirror=$("$here/mirrors.sh" "$suite-security" || true)
updmirror=$("$here/mirrors.sh" "$suite-updates" || true)
# (backports: trixie-backports' kernels; apt takes nothing else from it
# unless it is the only suite with the package)
bpomirror=$("$here/mirrors.sh" "$suite-backports" || true)

# Package lists from the files: step 1, then step 2 (after "#--- step
# 2"), then step 3 (after "#--- step 3", installed with Recommends).
pkglist() {
	awk -v want="$1" '
		FNR == 1 { step = 1 }
		/^#--- step [0-9]/ { step = $3; next }
		/^[ \t]*(#|$)/ { next }
		{ if (step == want) print $1 }' "$here/packages" "$extra"
}

work=$cache/work-$kver
rm -rf "$work" "$out"
debs=$cache/debs-$suite
mkdir -p "$work" "$debs"
root=$work/root
t0=$(date +%s)

# ---- 1: minbase debootstrap --------------------------------------------
say "debootstrap $suite (minbase) into $root ..."
# debootstrap refuses a cache dir holding partial downloads
rm -f "$debs/"*.FAILED "$debs/partial/"* 2>/dev/null || true
if ! eatmydata debootstrap --variant=minbase --include=eatmydata \
	--cache-dir="$debs" "$suite" "$root" "$mirror" \
	> "$work/debootstrap.log" 2>&1; then
	tail -n 30 "$work/debootstrap.log" >&2
	die "debootstrap failed (log: $work/debootstrap.log)"
fi
t1=$(date +%s)
say "debootstrap done in $((t1 - t0))s"

# ---- 2: packages, in the chroot ----------------------------------------
{
	echo "deb $mirror $suite main"
	[ -n "$updmirror" ] && echo "deb $updmirror $suite-updates main"
	[ -n "$secmirror" ] && echo "deb $secmirror $suite-security main"
	[ -n "$bpomirror" ] && echo "deb $bpomirror $suite-backports main"
} > "$root/etc/apt/sources.list"
# No daemon starts in the chroot; dpkg needs no fsync for a throw-away tree.
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
echo force-unsafe-io > "$root/etc/dpkg/dpkg.cfg.d/unsafe-io"
# A small initramfs: only what finding a virtio root disk needs (the
# cloud kernel has ext4 built in, virtio_pci and virtio_blk as modules).
mkdir -p "$root/etc/initramfs-tools/conf.d"
cat > "$root/etc/initramfs-tools/conf.d/shiftfs-e2e" <<'EOF'
MODULES=list
COMPRESS=gzip
EOF
printf 'virtio_pci\nvirtio_blk\n' >> "$root/etc/initramfs-tools/modules"

step1=$(pkglist 1 | tr '\n' ' ')
step2=$(pkglist 2 | tr '\n' ' ')
step3=$(pkglist 3 | tr '\n' ' ')

cat > "$root/tmp/install.sh" <<EOF
#!/bin/sh
set -eu
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin
apt-get update -q
# The kernel: linux-image-$kver if Debian has it, else the -unsigned one.
if apt-cache policy linux-image-$kver | grep -q 'Candidate: [0-9]'; then
	kpkg=linux-image-$kver
else
	kpkg=linux-image-$kver-unsigned
fi
step1=\$(echo "$step1" | sed -e "s/@KERNEL@/\$kpkg/" -e "s/@HEADERS@/linux-headers-$kver/")
echo "== apt step 1: \$step1"
eatmydata apt-get install -y -q --no-install-recommends \$step1
echo "== apt step 2: $step2"
eatmydata apt-get install -y -q --no-install-recommends $step2
# As "apt-get install lxc" leaves a system: Recommends included.
echo "== apt step 3 (with Recommends): $step3"
eatmydata apt-get install -y -q -o APT::Install-Recommends=true $step3
echo "\$kpkg" > /tmp/kernel-package
EOF
chmod 755 "$root/tmp/install.sh"

say "installing packages in the chroot (log: $work/apt.log) ..."
# Private mount namespace: the chroot's mounts go away with it, whatever
# happens.
if ! unshare --mount --propagation private sh -eu -c '
	root=$1 debs=$2
	mount -t proc proc "$root/proc"
	mount -t sysfs sysfs "$root/sys"
	mount --rbind /dev "$root/dev"
	mount -t tmpfs tmpfs "$root/run"
	mount --bind "$debs" "$root/var/cache/apt/archives"
	chroot "$root" /tmp/install.sh
' sh "$root" "$debs" > "$work/apt.log" 2>&1; then
	tail -n 40 "$work/apt.log" >&2
	die "package installation failed (log: $work/apt.log)"
fi
t2=$(date +%s)
say "packages installed in $((t2 - t1))s"

# ---- 3: configuration ---------------------------------------------------
rm -f "$root/usr/sbin/policy-rc.d" "$root/etc/dpkg/dpkg.cfg.d/unsafe-io" \
	"$root/tmp/install.sh"
rm -rf "$root/var/lib/apt/lists/"*
echo shiftfs-e2e > "$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tshiftfs-e2e\n' > "$root/etc/hosts"
echo '/dev/vda / ext4 rw,errors=remount-ro 0 1' > "$root/etc/fstab"
# A throw-away test guest with no network: root logs in on the serial
# console without a password (handy when debugging a run by hand).
chroot "$root" passwd -d root >/dev/null
# Root-started unprivileged containers map their root to host 100000.
echo 'root:100000:65536' > "$root/etc/subuid"
echo 'root:100000:65536' > "$root/etc/subgid"
# cloud-init: only the NoCloud seed, no network to configure, and only
# the modules a test guest uses (each costs seconds of Python under TCG):
# bootcmd, write_files, runcmd and the user scripts.  (No "users: []":
# cloud-init 22.4's schema rejects it, and every boot then logged
# "Invalid cloud-config provided"; with no users module nothing makes
# a user anyway.)  tests/cloud-init-schema.sh checks this file too.
cat > "$root/etc/cloud/cloud.cfg.d/90-shiftfs-e2e.cfg" <<'EOF'
datasource_list: [ NoCloud, None ]
network: {config: disabled}
cloud_init_modules: [ bootcmd, write_files, set_hostname ]
cloud_config_modules: [ runcmd ]
cloud_final_modules: [ scripts_per_once, scripts_per_boot, scripts_per_instance, scripts_user ]
EOF
# No datasource detection at boot (ds-identify is a long shell script):
# the list above names the one datasource.
echo 'policy: enabled' > "$root/etc/cloud/ds-identify.cfg"
# Nothing that runs on a timer or wants a network: a quiet, quick boot.
for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer \
	e2scrub_reap.service fstrim.timer man-db.timer \
	getty@tty1.service systemd-networkd-wait-online.service; do
	ln -sf /dev/null "$root/etc/systemd/system/$u"
done
# Under TCG every module load costs seconds: udev need not load drivers
# for emulated hardware the tests never use (KVM, the PIIX IDE, ...).
cat > "$root/etc/modprobe.d/shiftfs-e2e.conf" <<'EOF'
blacklist kvm
blacklist kvm_amd
blacklist kvm_intel
blacklist ata_piix
blacklist ata_generic
blacklist pata_acpi
blacklist floppy
blacklist pcspkr
blacklist serio_raw
EOF
kpkg=$(cat "$root/tmp/kernel-package")
rm -f "$root/tmp/kernel-package"

mkdir -p "$work/out"
cp "$root/boot/vmlinuz-$kver" "$work/out/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$work/out/initrd.img" ||
	die "initramfs-tools made no initrd.img-$kver"
[ -d "$root/lib/modules/$kver" ] || die "no /lib/modules/$kver in the image"

# ---- 4: the disk ---------------------------------------------------------
used=$(du -sxm "$root" | cut -f1)
size=$(( (used + 2560 + 511) / 512 * 512 ))	# MiB, ~2.5 GiB free
say "writing ${used} MiB into a ${size} MiB ext4 image ..."
mke2fs -q -t ext4 -L shiftfs-root -d "$root" "$work/base.raw" "${size}M" >/dev/null
qemu-img convert -O qcow2 "$work/base.raw" "$work/out/base.qcow2"
rm -f "$work/base.raw"
t3=$(date +%s)

cat > "$work/out/info" <<EOF
kernel=$kver
kernel_package=$kpkg
key=$key
debootstrap_s=$((t1 - t0))
packages_s=$((t2 - t1))
disk_s=$((t3 - t2))
total_s=$((t3 - t0))
root_mib=$used
disk_mib=$size
built=$(date -u +%Y-%m-%dT%H:%M:%SZ)
EOF
cp "$work/debootstrap.log" "$work/apt.log" "$work/out/"
# (older bases of this kernel are of no more use)
cache_publish "$work/out" "$out" "$cache"/base-"$kver"-*
rm -rf "$work"
say "base image ready in $((t3 - t0))s: $out"
echo "$out"
