#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Build the busybox initramfs the fast guest tests boot.
#
#   images/mkinitramfs.sh KVER BUILD_DIR OUT.cpio
#
# Contents: static busybox; the kernel's own modules the tests use (loop,
# overlay, xfs, btrfs, fuse, squashfs, erofs and what they depend on) plus shiftfs.ko from
# BUILD_DIR/KVER/; the test programs from BUILD_DIR/tests/guest/ and the
# shell libraries they source (tests/lib/tap.sh and guest-test.sh, as
# /tests/lib/); shiftctl when built; the host tools the tests drive (mkfs.*, setfacl, setcap,
# stress-ng, unshare, bindfs...) with the shared libraries they need.
set -eu

kver=$1
build=$(cd "$2" && pwd)
out=$3
here=$(cd "$(dirname "$0")" && pwd)
kernel=$build/$kver/kernel
root=$build/$kver/initramfs

[ -f "$kernel/.unpacked" ] || {
	echo "mkinitramfs.sh: no kernel unpacked in $kernel (run images/fetch-kernel.sh)" >&2
	exit 1
}
[ -f "$build/$kver/shiftfs.ko" ] || {
	echo "mkinitramfs.sh: $build/$kver/shiftfs.ko is missing (make module KVER=$kver)" >&2
	exit 1
}

rm -rf "$root"
mkdir -p "$root"
cd "$root"
mkdir -p bin sbin usr/bin usr/sbin lib lib64 etc proc sys dev tmp run \
	root tests mnt var/tmp

# busybox and its applets, as symlinks made here (no --install at boot).
cp /bin/busybox bin/busybox
for applet in $(/bin/busybox --list-full); do
	[ -e "$applet" ] || ln -s /bin/busybox "$applet"
done

# Copy a dynamically linked program and the libraries it needs, at the
# same paths as on the host.
copy_prog() {
	src=$(command -v "$1" 2>/dev/null) || {
		echo "mkinitramfs.sh: $1 not found on the host" >&2
		return 1
	}
	dst=${2:-$src}
	# The real tool wins over a busybox applet of the same name,
	# wherever in PATH the applet's link is.
	for d in bin sbin usr/bin usr/sbin; do
		if [ "$(readlink "$root/$d/${dst##*/}" 2>/dev/null)" = /bin/busybox ]; then
			rm -f "$root/$d/${dst##*/}"
		fi
	done
	mkdir -p "$root$(dirname "$dst")"
	rm -f "$root$dst"
	cp -L "$src" "$root$dst"
	ldd "$src" 2>/dev/null | awk '/=> \// { print $3 } /^\t\// { print $1 }' |
	while read -r lib; do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

# Host tools the guest tests drive.  Those from util-linux replace busybox
# applets of the same name, which lack options the tests need.
for p in mke2fs mkfs.xfs mkfs.btrfs setfacl getfacl setcap getcap \
	 getfattr setfattr stress-ng unshare nsenter losetup findmnt mount \
	 umount setpriv bash find bindfs fusermount kmod debugfs e2fsck flock \
	 mksquashfs mkfs.erofs; do
	copy_prog "$p"
done
# glibc loads libgcc_s at run time (unwinding, pthread_exit: mksquashfs's
# threads); ldd does not list it.
gcc_s=$(ldconfig -p | awk '/libgcc_s\.so\.1 .*x86-64/ { print $NF; exit }')
[ -n "$gcc_s" ] || { echo "mkinitramfs.sh: libgcc_s.so.1 not found on the host" >&2; exit 1; }
mkdir -p "$root$(dirname "$gcc_s")"
cp -L "$gcc_s" "$root$gcc_s"
for p in modprobe insmod rmmod lsmod depmod modinfo; do
	rm -f "sbin/$p" "bin/$p" "usr/sbin/$p" "usr/bin/$p"
	ln -s "$(command -v kmod)" "sbin/$p"
done
ln -sf "$(command -v mke2fs)" sbin/mkfs.ext4
# Scripts say #!/bin/bash; the host may have bash in /usr/bin only.
[ -e bin/bash ] || ln -s "$(command -v bash)" bin/bash
# mke2fs wants its config; util-linux mount wants an fstab.
[ -f /etc/mke2fs.conf ] && cp /etc/mke2fs.conf etc/
: > etc/fstab
echo "root:x:0:0:root:/root:/bin/sh" > etc/passwd
echo "root:x:0:" > etc/group
# stress-ng and some tests want an unprivileged user that exists.
echo "nobody:x:65534:65534:nobody:/:/bin/false" >> etc/passwd
echo "nogroup:x:65534:" >> etc/group

# Kernel modules: filesystems and what they need, then depmod.
msrc=$kernel/lib/modules/$kver
mdst=lib/modules/$kver
mkdir -p "$mdst/kernel/drivers/block" "$mdst/extra"
cp -a "$msrc/kernel/fs" "$msrc/kernel/lib" "$mdst/kernel/"
# (A trimmed debug kernel may have no crypto modules: built in.)
[ ! -d "$msrc/kernel/crypto" ] || cp -a "$msrc/kernel/crypto" "$mdst/kernel/"
# loop may be built in on some flavour: the check below decides.
for f in "$msrc/kernel/drivers/block/"loop.ko*; do
	[ -e "$f" ] && cp -a "$f" "$mdst/kernel/drivers/block/"
done
cp -a "$msrc"/modules.builtin* "$msrc"/modules.order "$mdst/" 2>/dev/null || true
# Debian compresses modules since trixie (.ko.xz; .ko.zst is handled
# too): unpack them here, where it is fast, rather than in the guest,
# where kmod would inflate each one under TCG at every load.  The guest
# then sees plain .ko files on every kernel.
find "$mdst" -name '*.ko.xz' -exec xz -d {} + || {
	echo "mkinitramfs.sh: could not decompress the .ko.xz modules of $kver" >&2
	exit 1
}
find "$mdst" -name '*.ko.zst' -exec zstd -q -d --rm {} + || {
	echo "mkinitramfs.sh: could not decompress the .ko.zst modules of $kver" >&2
	exit 1
}
if [ -n "$(find "$mdst" -name '*.ko.*' -print -quit)" ]; then
	echo "mkinitramfs.sh: modules of $kver in a compression this script does not know:" >&2
	find "$mdst" -name '*.ko.*' | head -n 3 >&2
	exit 1
fi
cp "$build/$kver/shiftfs.ko" "$mdst/extra/"
if [ -f "$build/$kver/selftest/shiftfs_selftest_warn.ko" ]; then
	mkdir -p lib/modules/selftest
	cp "$build/$kver/selftest/"shiftfs_selftest_*.ko lib/modules/selftest/
fi
depmod -b "$root" "$kver"
# The modules images/init loads (load_modules) must each resolve, with
# their dependencies, as a module in this initramfs or built into this
# kernel, whatever the flavour (cloud, standard, rt): the guest only logs
# a failed modprobe, and the tests that need it would fail far from here.
for m in loop overlay xfs btrfs fuse squashfs erofs shiftfs; do
	if ! deps=$(modprobe -d "$root" -S "$kver" --show-depends "$m" 2>&1); then
		echo "mkinitramfs.sh: module $m not found for $kver (neither in the initramfs nor built in):" >&2
		echo "$deps" | sed 's/^/  /' >&2
		exit 1
	fi
done

# Test programs and shiftctl.
if [ -d "$build/tests/guest" ]; then
	for t in "$build/tests/guest/"*; do
		[ -x "$t" ] || continue
		copy_prog "$t" "/tests/${t##*/}"
	done
fi
# The shell libraries the tests source, beside them (images/init runs
# only the files in /tests, not this directory).
install -D -m 644 "$here/../tests/lib/tap.sh" tests/lib/tap.sh
install -D -m 644 "$here/../tests/lib/guest-test.sh" tests/lib/guest-test.sh
if [ -x "$build/shiftctl/shiftctl" ]; then
	copy_prog "$build/shiftctl/shiftctl" /usr/sbin/shiftctl
fi

# The LXC hook, where make install puts it (tests/guest/lxchook_*).
install -D -m 755 "$here/../lxc-hook/shiftfs" usr/share/lxc/hooks/shiftfs

# Guest-side helper scripts: the demo, and the benchmark's (tests/bench).
mkdir -p usr/libexec/shiftfs
cp "$here"/guest-bin/* "$here"/../tests/bench/bench "$here"/../tests/bench/bench-ftrace \
	usr/libexec/shiftfs/
# Benchmark helpers (tests/bench, built static by make bench-helpers).
if [ -d "$build/tests/bench" ]; then
	for t in "$build/tests/bench/"*; do
		[ -x "$t" ] && install -m 755 "$t" usr/libexec/shiftfs/
	done
fi

cp "$here/init" init
chmod +x init

# Uncompressed: under TCG the kernel unpacks it faster than it inflates.
find . -print0 | sort -z | cpio --null -o -H newc --quiet > "$out.tmp"
mv "$out.tmp" "$out"
