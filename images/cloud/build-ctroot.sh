#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Build (or reuse) the Debian root filesystem the e2e tests boot as a
# container, as users run them: systemd as init, networked the Debian
# way, ifupdown with DHCP (isc-dhcp-client; lxc-net's dnsmasq on lxcbr0
# answers), owned by the image's ids on disk.  (Not systemd-networkd: LXC
# mounts an unprivileged container's /sys read-write (userns.conf), so
# networkd waits for a udev that containers do not run, links "pending".)  The release is the guest's own (bookworm or trixie).
#
#   images/cloud/build-ctroot.sh RELEASE BUILD_DIR
#
# Prints the directory on its last line of stdout: DIR/rootfs.tar (the
# tree, numeric owners), DIR/info.  Cached under
# BUILD_DIR/cloud/ctroot-RELEASE-KEY, KEY a hash of this script, and
# delivered on the payload disk (mkpayload.sh), not baked into the base
# image, and built beside it (run-e2e.sh), its .debs in
# BUILD_DIR/cloud/debs-ctroot-RELEASE.
set -eu

say() { echo "build-ctroot: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

[ $# -eq 2 ] || { echo "usage: $0 RELEASE BUILD_DIR" >&2; exit 2; }
suite=$1
build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
case $suite in
bookworm|trixie) pkgs=systemd,systemd-sysv,iproute2,iputils-ping,ifupdown,isc-dhcp-client ;;
*) die "no container rootfs for '$suite' (bookworm and trixie only)" ;;
esac
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap)"
command -v debootstrap >/dev/null || die "debootstrap is missing (images/setup-host.sh --e2e)"

key=$( { echo "$suite"; cat "$here/build-ctroot.sh"; } | sha256sum | cut -c1-12)
cache=$build/cloud
out=$cache/ctroot-$suite-$key
. "$here/../cache.sh"
# (a lock of its own: it is built while build-image.sh holds the base's)
cache_reuse "$cache/ctroot-lock" "$out" "container rootfs"

mirror=$("$here/mirrors.sh" "$suite") ||
	die "no $suite mirror found in the host's apt sources"
work=$cache/ctwork-$suite
root=$work/root
debs=$cache/debs-ctroot-$suite
rm -rf "$work" "$out"
mkdir -p "$root" "$debs" "$work/out"
t0=$(date +%s)
say "debootstrap $suite (minbase, $pkgs) into $root ..."
rm -rf "$debs/partial"
if ! debootstrap --variant=minbase --include="$pkgs" --cache-dir="$debs" \
	"$suite" "$root" "$mirror" > "$work/debootstrap.log" 2>&1; then
	tail -n 30 "$work/debootstrap.log" >&2
	die "debootstrap failed (log: $work/debootstrap.log)"
fi

# A container's own configuration, as an image made for LXC has it.
echo debian > "$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n' > "$root/etc/hosts"
: > "$root/etc/fstab"
cat > "$root/etc/network/interfaces" <<'EOF'
auto lo
iface lo inet loopback

auto eth0
iface eth0 inet dhcp
EOF
# Nothing that waits for a network or a timer: a quick boot under TCG.
for u in apt-daily.timer apt-daily-upgrade.timer; do
	ln -sf /dev/null "$root/etc/systemd/system/$u"
done
rm -rf "$root/var/lib/apt/lists/"* "$root/var/cache/apt/"*.bin
chroot "$root" passwd -d root >/dev/null

tar --numeric-owner --xattrs --xattrs-include='*' -C "$root" -cf "$work/out/rootfs.tar" .
t1=$(date +%s)
{
	echo "suite=$suite"
	echo "packages=$pkgs"
	echo "key=$key"
	echo "total_s=$((t1 - t0))"
	echo "mib=$(du -sm "$work/out/rootfs.tar" | cut -f1)"
	echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$work/out/info"
cache_publish "$work/out" "$out" "$cache"/ctroot-"$suite"-*
rm -rf "$work"
say "container rootfs ready in $((t1 - t0))s: $out"
echo "$out"
