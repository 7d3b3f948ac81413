#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Build, once, a kernel with the kernel's own bug detectors on, from
# Debian's linux-source package of a series, for make check-debug.
#
#   images/debug-kernel.sh SERIES BUILD_DIR   -> prints the debug release
#   images/debug-kernel.sh -r SERIES BUILD_DIR -> prints it if built, else
#                                                exits 1
#
# SERIES is 6.1 (bookworm), 6.12+deb13 (trixie) or 7.3 (trixie-backports).
# The source is Debian's linux-source-X.Y of the Debian release that
# ships the series, fetched with that release's apt (apt-get download,
# nothing installed), unpacked under BUILD_DIR/debug/SERIES/.  The
# configuration is Debian's own for the cloud flavour the tests boot
# (the unpacked image's boot/config-RELEASE), trimmed with localmodconfig
# to the modules the guests load (the list below, with what they depend
# on), then the detectors switched on: KASAN (generic, inline), lockdep
# (PROVE_LOCKING, PROVE_RCU), DEBUG_ATOMIC_SLEEP, UBSAN (bounds, shift),
# kmemleak, DEBUG_OBJECTS (free, RCU head, work, timers), DEBUG_LIST,
# DEBUG_CREDENTIALS where the kernel still has it (gone in 6.8), SLUB
# debugging (the guest boots with slub_debug=FZ: sanity checks and red
# zones; KASAN finds use after free) and BUG_ON_DATA_CORRUPTION.  Debug
# info, BTF and module signing are off: they cost build time and the
# guest needs none of them (reports are symbolised from kallsyms).
#
# Built with the compiler of the Debian release that ships the series:
# on the host for bookworm, in the release's chroot otherwise
# (images/chroot.sh).  The result is laid out as images/fetch-kernel.sh
# lays out a Debian kernel, under BUILD_DIR/RELEASE/kernel/, with
# RELEASE = VERSION-shiftfs-debug, so that images/mkinitramfs.sh and
# tests/run-guest.sh boot it as they boot any other; the configured and
# built tree stays in BUILD_DIR/debug/SERIES/linux/ to build the module
# against.  Two cores: about 20 to 35 minutes a kernel, once.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
query=
if [ "${1:-}" = -r ]; then
	query=1
	shift
fi
[ $# -eq 2 ] || { echo "usage: $0 [-r] SERIES BUILD_DIR" >&2; exit 2; }
series=$1
mkdir -p "$2"
build=$(cd "$2" && pwd)
case $series in
6.1) src=6.1; suite=bookworm ;;
6.12+deb13) src=6.12; suite=trixie ;;
7.3) src=7.3; suite=trixie ;;
*)
	echo "debug-kernel.sh: no debug kernel for series '$series' (6.1, 6.12+deb13 or 7.3)" >&2
	exit 2
	;;
esac
dir=$build/debug/$series
tree=$dir/linux
mkdir -p "$build/debug"
stamp=$dir/.release
if [ -f "$stamp" ] && [ -f "$build/$(cat "$stamp")/kernel/.unpacked" ]; then
	cat "$stamp"
	exit 0
fi
if [ -n "$query" ]; then
	echo "debug-kernel.sh: no debug kernel built for $series yet (make check-debug KVER=$series builds it)" >&2
	exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "debug-kernel.sh: building the debug kernel needs root (apt, the build chroot)" >&2
	exit 1
fi

# The normal kernel of the series: its config is the starting point and
# its module tree says what the modules below depend on.
base=$("$here/kver.sh" -b "$build" "$series")
"$here/fetch-kernel.sh" "$base" "$build"
# 7.x keeps it beside the modules (lib/modules/RELEASE/config).
bconf=$build/$base/kernel/boot/config-$base
[ -f "$bconf" ] || bconf=$build/$base/kernel/lib/modules/$base/config
[ -f "$bconf" ] || { echo "debug-kernel.sh: no config of $base in $build/$base/kernel" >&2; exit 1; }

host=bookworm
[ -r /etc/os-release ] && host=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
kb_deps="bc bison flex libssl-dev libelf-dev kmod cpio xz-utils python3 make gcc"
run() {
	if [ "$suite" = "$host" ]; then
		"$@"
	else
		"$here/chroot.sh" run "$suite" "$build" "$@"
	fi
}
if [ "$suite" = "$host" ]; then
	missing=$(for p in $kb_deps; do dpkg -s "$p" > /dev/null 2>&1 || echo "$p"; done)
	if [ -n "$missing" ]; then
		apt-get install -y --no-install-recommends $missing
	fi
else
	"$here/chroot.sh" ensure "$suite" "$build"
	"$here/chroot.sh" run "$suite" "$build" apt-get install -y -q --no-install-recommends $kb_deps > "$dir.deps.log" 2>&1 ||
		{ echo "debug-kernel.sh: could not install the kernel's build dependencies in the $suite chroot (log: $dir.deps.log)" >&2; exit 1; }
fi

if [ -f "$tree/.config" ] && [ -f "$dir/.configured" ]; then
	echo "debug-kernel.sh: resuming the build in $tree" >&2
else
rm -rf "$dir"
mkdir -p "$dir/deb"
echo "debug-kernel.sh: fetching linux-source-$src ($suite)" >&2
(cd "$dir/deb" && "$here/apt-suite.sh" "$suite" "$build" apt-get download -q \
	-o APT::Sandbox::User=root "linux-source-$src" >&2) ||
	{ echo "debug-kernel.sh: apt-get download linux-source-$src failed ($suite); is apt-get update done?" >&2; rm -rf "$dir"; exit 1; }
dpkg-deb -x "$dir"/deb/linux-source-"$src"_*.deb "$dir/deb/x"
tarball=$(find "$dir/deb/x/usr/src" -name "linux-source-$src.tar.*" | head -n 1)
[ -n "$tarball" ] || { echo "debug-kernel.sh: no source tarball in linux-source-$src" >&2; exit 1; }
echo "debug-kernel.sh: unpacking $(basename "$tarball")" >&2
tar -C "$dir" -xf "$tarball"
mv "$dir/linux-source-$src" "$tree"
rm -rf "$dir/deb"

# The modules the guests load (images/init, the tests, make fstests)
# and everything they depend on, in lsmod's format for localmodconfig:
# every other module of Debian's config is left out of the build.
mods="loop overlay xfs btrfs fuse ext2 dm_mod dm_flakey dm_log_writes
dm_snapshot dm_thin_pool dm_delay dm_zero scsi_debug virtio_blk virtio_pci
virtio_net virtio_console quota_v2 quota_v1 squashfs erofs isofs vfat"
# Debian's packages ship no modules.dep: the dependencies are read from
# each module's own "depends" field.
lsmod=$dir/lsmod
mtree=$build/$base/kernel/lib/modules/$base
find "$mtree" -name '*.ko*' > "$dir/ko.list"
seen=
add_mod() {
	case " $seen " in *" $1 "*) return 0 ;; esac
	f=$(grep -E "/$(echo "$1" | sed 's/[-_]/[-_]/g')\.ko(\.[a-z]+)?$" "$dir/ko.list" | head -n 1)
	[ -n "$f" ] || return 0 # built in
	seen="$seen $1"
	for d in $(modinfo -F depends "$f" | tr , ' '); do
		add_mod "$(echo "$d" | tr - _)"
	done
}
for m in $mods; do
	add_mod "$m"
done
echo "Module Size Used by" > "$lsmod"
for m in $seen; do
	echo "$m 16384 0"
done | sort -u >> "$lsmod"

cp "$bconf" "$tree/.config"
cfg() {
	"$tree/scripts/config" --file "$tree/.config" "$@"
}
echo "debug-kernel.sh: configuring ($(($(wc -l < "$lsmod") - 1)) modules)" >&2
run sh -c 'cd "$1" && yes "" | make LSMOD="$2" localmodconfig' sh "$tree" "$lsmod" > "$dir/config.log" 2>&1 ||
	{ echo "debug-kernel.sh: localmodconfig failed (log: $dir/config.log)" >&2; exit 1; }
cfg --set-str LOCALVERSION "-shiftfs-debug" --disable LOCALVERSION_AUTO \
	--set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS "" \
	--disable MODULE_SIG --disable MODULE_SIG_ALL --disable SECURITY_LOCKDOWN_LSM \
	--disable MODULE_COMPRESS --disable MODULE_COMPRESS_XZ --disable MODULE_COMPRESS_ZSTD \
	--enable MODULE_COMPRESS_NONE \
	--disable DEBUG_INFO --disable DEBUG_INFO_DWARF4 --disable DEBUG_INFO_DWARF5 \
	--disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT --enable DEBUG_INFO_NONE \
	--disable DEBUG_INFO_BTF \
	--enable KASAN --enable KASAN_GENERIC --enable KASAN_INLINE --disable KASAN_OUTLINE \
	--enable KASAN_VMALLOC \
	--enable PROVE_LOCKING --enable PROVE_RCU --enable DEBUG_ATOMIC_SLEEP \
	--enable UBSAN --enable UBSAN_BOUNDS --enable UBSAN_SHIFT --disable UBSAN_TRAP \
	--enable UBSAN_SANITIZE_ALL --disable UBSAN_ALIGNMENT \
	--enable DEBUG_KMEMLEAK --disable DEBUG_KMEMLEAK_DEFAULT_OFF \
	--set-val DEBUG_KMEMLEAK_MEM_POOL_SIZE 16000 --enable DEBUG_KMEMLEAK_AUTO_SCAN \
	--enable DEBUG_OBJECTS --enable DEBUG_OBJECTS_FREE --enable DEBUG_OBJECTS_RCU_HEAD \
	--enable DEBUG_OBJECTS_WORK --enable DEBUG_OBJECTS_TIMERS \
	--set-val DEBUG_OBJECTS_ENABLE_DEFAULT 1 \
	--enable DEBUG_LIST --enable DEBUG_CREDENTIALS --enable SLUB_DEBUG \
	--enable BUG_ON_DATA_CORRUPTION
run make -C "$tree" olddefconfig > "$dir/config.log" 2>&1 ||
	{ echo "debug-kernel.sh: olddefconfig failed (log: $dir/config.log)" >&2; exit 1; }
# What the kernel's Kconfig refused to take is an error, not a surprise
# in the guest: every detector must be there (DEBUG_CREDENTIALS only
# where the kernel has the option).
for o in KASAN KASAN_GENERIC KASAN_INLINE PROVE_LOCKING PROVE_RCU DEBUG_ATOMIC_SLEEP \
	UBSAN UBSAN_BOUNDS UBSAN_SHIFT DEBUG_KMEMLEAK DEBUG_OBJECTS DEBUG_OBJECTS_FREE \
	DEBUG_OBJECTS_RCU_HEAD DEBUG_LIST SLUB_DEBUG BUG_ON_DATA_CORRUPTION \
	BLK_DEV_LOOP OVERLAY_FS XFS_FS FUSE_FS; do
	grep -Eq "^CONFIG_$o=(y|m)$" "$tree/.config" || {
		echo "debug-kernel.sh: CONFIG_$o did not stay on in $tree/.config (Kconfig refused it)" >&2
		exit 1
	}
done
if grep -q '^config DEBUG_CREDENTIALS$' "$tree/lib/Kconfig.debug" "$tree/kernel/Kconfig"* 2>/dev/null; then
	grep -q '^CONFIG_DEBUG_CREDENTIALS=y$' "$tree/.config" || {
		echo "debug-kernel.sh: CONFIG_DEBUG_CREDENTIALS did not stay on" >&2
		exit 1
	}
fi
touch "$dir/.configured"
fi
echo "debug-kernel.sh: building in $tree ($(nproc) jobs; log: $dir/build.log)" >&2
start=$(date +%s)
run make -C "$tree" -j"$(nproc)" bzImage modules > "$dir/build.log" 2>&1 ||
	{ tail -n 30 "$dir/build.log" >&2; echo "debug-kernel.sh: the kernel did not build (log: $dir/build.log)" >&2; exit 1; }
# Known only once the build has written it (LOCALVERSION included).
rel=$(cat "$tree/include/config/kernel.release")
case $rel in
*-shiftfs-debug) ;;
*) echo "debug-kernel.sh: the kernel built as '$rel', not *-shiftfs-debug" >&2; exit 1 ;;
esac
out=$build/$rel/kernel
rm -rf "$out" "$out.tmp"
mkdir -p "$out.tmp/boot"
run make -C "$tree" INSTALL_MOD_PATH="$out.tmp" INSTALL_MOD_STRIP=1 DEPMOD=/bin/true \
	modules_install > "$dir/install.log" 2>&1 ||
	{ echo "debug-kernel.sh: modules_install failed (log: $dir/install.log)" >&2; exit 1; }
if [ -d "$out.tmp/usr/lib/modules" ] && [ ! -d "$out.tmp/lib/modules" ]; then
	mkdir -p "$out.tmp/lib"
	mv "$out.tmp/usr/lib/modules" "$out.tmp/lib/modules"
fi
rm -f "$out.tmp/lib/modules/$rel/build" "$out.tmp/lib/modules/$rel/source"
cp "$tree/arch/x86/boot/bzImage" "$out.tmp/boot/vmlinuz-$rel"
cp "$tree/.config" "$out.tmp/boot/config-$rel"
cp "$tree/System.map" "$out.tmp/boot/System.map-$rel"
depmod -b "$out.tmp" "$rel"
touch "$out.tmp/.unpacked"
mv "$out.tmp" "$out"
echo "$(($(date +%s) - start))" > "$dir/.build-seconds"
echo "$rel" > "$stamp"
echo "debug-kernel.sh: $rel built in $(($(date +%s) - start)) s" >&2
echo "$rel"
