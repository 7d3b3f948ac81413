#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the kernel release a KVER series resolves to, from what apt offers
# in the Debian release that ships it.
#
#   images/kver.sh [-b BUILD_DIR] SERIES|RELEASE  -> the release
#   images/kver.sh [-b BUILD_DIR] -s SERIES|RELEASE -> the Debian release
#                                                    (suite) shipping it
#   images/kver.sh [-b BUILD_DIR] -l SERIES...    -> a table: series,
#                                        release now, the Debian release
#                                        and the suite of it that ships it
#
# Series (the cloud flavour the tests boot):
#   6.1          bookworm          linux-headers-cloud-amd64's release
#   6.12         bookworm          newest 6.12.*+deb12 (also: 6.12+deb12)
#   6.12+deb13   trixie            newest 6.12.*+deb13
#   7.3          trixie-backports  newest 7.3.*+deb13
#   7.2          sid               newest 7.2.* in sid
#
# RELEASE is any Debian kernel release: the standard flavour
# (6.1.0-57-amd64, 7.3.4+deb13-amd64), cloud (6.12.118+deb13-cloud-amd64),
# rt...: whatever has a linux-headers-RELEASE package in the apt of the
# Debian release its version names (6.1.0-N and +deb12: bookworm, the
# host; +deb13: trixie with its backports; +deb14: sid), or for bookworm
# headers already installed in /usr/src (a kernel an admin runs whose
# package apt no longer lists).  bookworm is asked with the host's apt,
# the others with an apt configuration of their own under
# BUILD_DIR/apt/ (images/apt-suite.sh), never the host's sources.
#
# Never hard-code an ABI number: Debian bumps them with every security
# update, and apt knows the current one.  Exit 2: not a series or a
# release; exit 1: apt offers nothing for it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build
mode=release
while getopts :b:sl opt; do
	case $opt in
	b) build=$OPTARG ;;
	s) mode=suite ;;
	l) mode=list ;;
	*)
		echo "kver.sh: unknown option or missing argument '-$OPTARG'" >&2
		echo "usage: $0 [-b BUILD_DIR] [-s|-l] SERIES|RELEASE..." >&2
		exit 2
		;;
	esac
done
shift $((OPTIND - 1))

# suite_of SERIES|RELEASE: the Debian release that ships it, and for a
# series the regular expression of its cloud releases (ERE, after
# "linux-headers-"); empty for 6.1 (a metapackage names it).
suite_of() {
	pat=
	case $1 in
	6.1) suite=bookworm ;;
	6.12|6.12+deb12) suite=bookworm; pat='6\.12\.[0-9]+\+deb12' ;;
	6.12+deb13) suite=trixie; pat='6\.12\.[0-9]+\+deb13' ;;
	7.3) suite=trixie; pat='7\.3\.[0-9]+\+deb13' ;;
	7.2) suite=sid; pat='7\.2\.[0-9]+\+deb[0-9]+' ;;
	*[!A-Za-z0-9.+_-]*|*..*|-*) return 2 ;;
	[0-9]*.[0-9]*+deb12-*|6.1.[0-9]*-[0-9]*-*) suite=bookworm ;;
	[0-9]*.[0-9]*+deb13-*) suite=trixie ;;
	[0-9]*.[0-9]*+deb[0-9]*-*) suite=sid ;;
	*) return 2 ;;
	esac
	pat=${pat:+$pat-cloud-amd64}
}

unknown() {
	echo "kver.sh: unknown kernel series or release '$1' (want 6.1, 6.12 (= 6.12+deb12), 6.12+deb13, 7.3, 7.2, or a release such as 6.1.0-57-cloud-amd64, 6.12.118+deb13-cloud-amd64 or 7.3.4+deb13-amd64)" >&2
	exit 2
}

apt_q() {
	"$here/apt-suite.sh" "$suite" "$build" apt-cache "$@"
}

# The host's lists (bookworm) may be empty on a fresh machine.
host_lists() {
	apt-cache policy linux-headers-cloud-amd64 2>/dev/null |
		grep -q 'Candidate: [0-9]' && return 0
	if [ "$(id -u)" -eq 0 ]; then
		echo "kver.sh: apt lists are empty, running apt-get update" >&2
		apt-get update -qq -o DPkg::Lock::Timeout=900 >&2
	else
		echo "kver.sh: apt lists are empty; run 'apt-get update' as root" >&2
		exit 1
	fi
}

# resolve SERIES|RELEASE: print the release (nothing if apt has none).
resolve() {
	suite_of "$1" || unknown "$1"
	[ "$suite" = bookworm ] && host_lists
	case $1 in
	6.1)
		apt-cache depends linux-headers-cloud-amd64 2>/dev/null |
			sed -n 's/^ *Depends: linux-headers-\(6\.1\.[^ ]*-cloud-amd64\)$/\1/p' |
			head -n 1
		;;
	[0-9]*.[0-9]*-*)
		# A release: apt must know its headers (exact name, no regex
		# fallback), unless they are installed already (bookworm).
		if { [ "$suite" = bookworm ] && [ -f "/usr/src/linux-headers-$1/Makefile" ]; } ||
		   apt_q show --no-all-versions "linux-headers-$1" 2>/dev/null |
			grep -qx "Package: linux-headers-$1"; then
			echo "$1"
		fi
		;;
	*)
		apt_q search --names-only "^linux-headers-$pat\$" 2>/dev/null |
			sed -n 's/^linux-headers-\([^ ]*\) .*/\1/p' | sort -V | tail -n 1
		;;
	esac
}

case $mode in
suite)
	[ $# -eq 1 ] || { echo "usage: $0 -s SERIES|RELEASE" >&2; exit 2; }
	suite_of "$1" || unknown "$1"
	echo "$suite"
	;;
list)
	printf '%-12s %-32s %-10s %s\n' SERIES RELEASE DEBIAN SUITE
	for s in "$@"; do
		suite_of "$s" || unknown "$s"
		rel=$(resolve "$s")
		# The suite within the release (trixie-backports, -security).
		where=
		[ -n "$rel" ] && where=$(apt_q policy "linux-headers-$rel" 2>/dev/null |
			awk '/^ +[0-9]+ [a-z]+:/ && $3 !~ /status/ { split($3, a, "/"); print a[1]; exit }')
		where=${where:-$suite}
		printf '%-12s %-32s %-10s %s\n' "$s" "${rel:-(apt offers none)}" "$suite" "$where"
	done
	;;
release)
	[ $# -le 1 ] || { echo "usage: $0 SERIES|RELEASE" >&2; exit 2; }
	series=${1:-6.1}
	suite_of "$series" || unknown "$series"
	rel=$(resolve "$series")
	if [ -z "$rel" ]; then
		case $series in
		[0-9]*.[0-9]*-*)
			echo "kver.sh: $suite's apt knows no linux-headers-$series (a typo, or stale lists?)" >&2 ;;
		*)
			echo "kver.sh: $suite's apt offers no cloud kernel for series '$series'" >&2 ;;
		esac
		exit 1
	fi
	echo "$rel"
	;;
esac
