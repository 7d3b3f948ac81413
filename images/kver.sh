#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the kernel release a KVER series resolves to, from what apt offers.
#
#   images/kver.sh 6.1     -> the release behind linux-headers-cloud-amd64
#   images/kver.sh 6.12    -> the newest linux-headers-6.12.*+deb12-cloud-amd64
#   images/kver.sh RELEASE -> RELEASE unchanged (already resolved)
#
# Never hard-code an ABI number: Debian bumps them with every security
# update, and apt knows the current one.
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
*-cloud-amd64)
	rel=$series
	;;
*)
	echo "kver.sh: unknown kernel series '$series' (want 6.1, 6.12 or a release such as 6.1.0-57-cloud-amd64)" >&2
	exit 2
	;;
esac

if [ -z "$rel" ]; then
	echo "kver.sh: apt offers no cloud kernel for series '$series'" >&2
	exit 1
fi
echo "$rel"
