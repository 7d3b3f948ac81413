#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the kernel release a KVER series resolves to, from what apt offers.
#
#   images/kver.sh 6.1     -> the release behind linux-headers-cloud-amd64
#   images/kver.sh 6.12    -> the newest linux-headers-6.12.*+deb12-cloud-amd64
#   images/kver.sh RELEASE -> RELEASE unchanged, if apt has its headers
#
# RELEASE is any Debian kernel release: the standard flavour
# (6.1.0-57-amd64), cloud (6.1.0-57-cloud-amd64), rt (6.1.0-57-rt-amd64),
# the 6.12 backports (6.12.118+deb12-amd64)...: whatever has a
# linux-headers-RELEASE package in apt, or headers already installed in
# /usr/src (a kernel an admin runs whose package apt no longer lists).
# The series shortcuts stay on the cloud flavour the tests boot.
#
# Never hard-code an ABI number: Debian bumps them with every security
# update, and apt knows the current one.  Exit 2: not a series or a
# release; exit 1: apt offers nothing for it.
set -eu

series=${1:-6.1}

have_lists() {
	apt-cache policy linux-headers-cloud-amd64 2>/dev/null |
		grep -q 'Candidate: [0-9]'
}

if ! have_lists; then
	if [ "$(id -u)" -eq 0 ]; then
		echo "kver.sh: apt lists are empty, running apt-get update" >&2
		apt-get update -qq >&2
	else
		echo "kver.sh: apt lists are empty; run 'apt-get update' as root" >&2
		exit 1
	fi
fi

case $series in
6.1)
	rel=$(apt-cache depends linux-headers-cloud-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-headers-\(6\.1\.[^ ]*-cloud-amd64\)$/\1/p' |
		head -n 1)
	;;
6.12)
	rel=$(apt-cache search --names-only \
		'^linux-headers-6\.12\.[0-9]+\+deb12-cloud-amd64$' 2>/dev/null |
		sed -n 's/^linux-headers-\(6\.12\.[0-9]*+deb12-cloud-amd64\) .*/\1/p' |
		sort -t. -k3,3n | tail -n 1)
	;;
[0-9]*.[0-9]*-*)
	# A release: apt must know its headers (exact name, no regex
	# fallback), unless they are installed already.
	rel=
	if [ -f "/usr/src/linux-headers-$series/Makefile" ] ||
	   apt-cache show --no-all-versions "linux-headers-$series" 2>/dev/null |
		grep -qx "Package: linux-headers-$series"; then
		rel=$series
	else
		echo "kver.sh: apt knows no linux-headers-$series (a typo, or run 'apt-get update'?)" >&2
		exit 1
	fi
	;;
*)
	echo "kver.sh: unknown kernel series '$series' (want 6.1, 6.12 or a release such as 6.1.0-57-amd64 or 6.1.0-57-cloud-amd64)" >&2
	exit 2
	;;
esac

if [ -z "$rel" ]; then
	echo "kver.sh: apt offers no cloud kernel for series '$series'" >&2
	exit 1
fi
echo "$rel"
