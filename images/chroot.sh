#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The build chroot of a Debian release, where the module is built for
# that release's kernels with that release's gcc and headers: the host
# stays a clean Debian 12.
#
#   images/chroot.sh ensure RELEASE BUILD_DIR [KVER...]
#   images/chroot.sh run RELEASE BUILD_DIR [-b DIR]... [-M] CMD [ARG...]
#
# ensure: make BUILD_DIR/chroots/RELEASE with mmdebstrap (variant buildd,
# from the host's mirrors: images/cloud/mirrors.sh --sources RELEASE,
# i.e. trixie with -updates, -security and -backports; sid alone, told
# not to check its Release file's Valid-Until) if it is not there, then
# install linux-headers-KVER for each KVER it lacks (apt-get update
# first: a new ABI is a new package).  Made once and reused; a failed
# make leaves nothing behind.
#
# run: run CMD in the chroot as root, in a private mount namespace where
# /proc, BUILD_DIR and each DIR (at the same paths as outside) are
# mounted: the mounts end with the command, none is left behind.  -M
# (kbuild.sh, cross.sh): CMD is a kbuild make, and the directory of its
# M=DIR argument is bound too (refused without one).
#
# Needs root (chroot, mount).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: $0 ensure RELEASE BUILD_DIR [KVER...] | run RELEASE BUILD_DIR [-b DIR]... [-M] CMD [ARG...]"
[ $# -ge 3 ] || { echo "$usage" >&2; exit 2; }
cmd=$1
rel=$2
case $rel in
''|*[!a-z]*) echo "chroot.sh: '$rel' is not a Debian release name (trixie, sid)" >&2; exit 2 ;;
esac
mkdir -p "$3"
build=$(cd "$3" && pwd)
case $build in
*[[:space:]]*) echo "chroot.sh: BUILD_DIR '$build' has blanks in its path" >&2; exit 2 ;;
esac
shift 3
root=$build/chroots/$rel
if [ "$(id -u)" -ne 0 ]; then
	echo "chroot.sh: building in the $rel chroot needs root (chroot, mount)" >&2
	exit 1
fi

# in_root CMD...: CMD in the chroot, /proc, BUILD_DIR and the $binds
# (newline-separated) mounted privately.
binds=$build
in_root() {
	echo "$binds" | while read -r b; do
		mkdir -p "$root$b"
	done
	unshare --mount --propagation private sh -c '
		r=$1 binds=$2; shift 2
		mount -t proc proc "$r/proc" || exit 1
		for b in $binds; do
			mount --bind "$b" "$r$b" || exit 1
		done
		exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
	' in_root "$root" "$binds" "$@"
}

# no_mounts_under DIR: refuse to go on (and to rm -rf DIR) while
# anything is mounted below DIR.
no_mounts_under() {
	if findmnt -rn -o TARGET | grep -q "^$1/"; then
		echo "chroot.sh: something is still mounted under $1 (findmnt); unmount it first" >&2
		exit 1
	fi
}

make_root() {
	[ -f "$root/.made" ] && return 0
	command -v mmdebstrap >/dev/null || {
		echo "chroot.sh: mmdebstrap is not installed (images/setup-host.sh installs it)" >&2
		exit 1
	}
	srcs=$("$here/cloud/mirrors.sh" --sources "$rel") || exit 1
	set --
	while read -r line; do
		set -- "$@" "$line"
	done <<-EOS
	$srcs
	EOS
	case $rel in
	sid|unstable|experimental)
		set -- '--aptopt=Acquire::Check-Valid-Until "false"' "$@" ;;
	esac
	echo "chroot.sh: making the $rel chroot in $root (mmdebstrap)" >&2
	no_mounts_under "$root.tmp"
	rm -rf "$root.tmp"
	t0=$(date +%s)
	# mmdebstrap mounts /proc, /sys and /dev/shm (the host's) into the
	# chroot while it works: in a private mount namespace those mounts
	# end with it, however it ends, and the rm -rf of a failed attempt
	# cannot reach through them.
	if ! unshare --mount --propagation private \
		mmdebstrap --quiet --variant=buildd --aptopt='Acquire::Languages "none"' \
		--include=sparse,kmod,xz-utils,zstd,perl,bc,bison,flex,libelf-dev,libssl-dev,python3,ca-certificates \
		"$rel" "$root.tmp" "$@" >&2; then
		no_mounts_under "$root.tmp"
		rm -rf "$root.tmp"
		echo "chroot.sh: mmdebstrap $rel failed" >&2
		exit 1
	fi
	touch "$root.tmp/.made"
	mv "$root.tmp" "$root"
	echo "chroot.sh: $rel chroot made in $(( $(date +%s) - t0 )) s" >&2
}

case $cmd in
ensure)
	mkdir -p "$build/chroots"
	# One maker at a time per release; the others wait and reuse it.
	exec 9>"$build/chroots/$rel.lock"
	flock 9
	make_root
	missing=
	for k in "$@"; do
		[ -f "$root/usr/src/linux-headers-$k/Makefile" ] || missing="$missing linux-headers-$k"
	done
	[ -z "$missing" ] && exit 0
	echo "chroot.sh: installing$missing in the $rel chroot" >&2
	t0=$(date +%s)
	apt="apt-get -y -q -o DPkg::Lock::Timeout=900 --no-install-recommends"
	log=$build/chroots/$rel.apt.log
	if ! in_root $apt update > "$log" 2>&1; then
		sed 's/^/  /' "$log" | tail -n 20 >&2
		echo "chroot.sh: apt-get update failed in the $rel chroot (log: $log)" >&2
		exit 1
	fi
	# Exact names: apt-get install takes an unknown name for a pattern.
	for p in $missing; do
		in_root apt-cache show --no-all-versions "$p" 2>/dev/null | grep -qx "Package: $p" || {
			echo "chroot.sh: $rel's archive has no package $p" >&2
			exit 1
		}
	done
	if ! in_root $apt install $missing >> "$log" 2>&1; then
		sed 's/^/  /' "$log" | tail -n 20 >&2
		echo "chroot.sh: could not install$missing in the $rel chroot (log: $log)" >&2
		exit 1
	fi
	echo "chroot.sh: headers installed in $(( $(date +%s) - t0 )) s" >&2
	;;
run)
	# add_bind WHAT DIR: DIR (an existing directory, WHAT named in the
	# refusal) bound into the chroot at its own path.
	add_bind() {
		if [ ! -d "$2" ]; then
			echo "chroot.sh: $1 wants an existing directory" >&2
			exit 2
		fi
		b=$(cd "$2" && pwd)
		case $b in
		*[[:space:]]*) echo "chroot.sh: $1 '$b': a path with blanks" >&2; exit 2 ;;
		esac
		binds="$binds
$b"
	}
	while [ "${1:-}" = -b ]; do
		[ $# -ge 2 ] || { echo "chroot.sh: -b wants a directory" >&2; exit 2; }
		add_bind -b "$2"
		shift 2
	done
	if [ "${1:-}" = -M ]; then
		shift
		m=
		for a in "$@"; do
			case $a in
			M=*) m=${a#M=} ;;
			esac
		done
		[ -n "$m" ] || { echo "chroot.sh: want M=DIR to build in the $rel chroot" >&2; exit 2; }
		add_bind "M=" "$m"
	fi
	[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
	[ -f "$root/.made" ] || {
		echo "chroot.sh: no $rel chroot in $root (images/chroot.sh ensure $rel ...)" >&2
		exit 1
	}
	in_root "$@"
	;;
*)
	echo "$usage" >&2
	exit 2
	;;
esac
