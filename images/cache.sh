# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# Sourced by the image builders (images/cloud/build-image.sh,
# images/arm64/build-image.sh), which define say().  A cached build is a
# directory with a .done file in it; one build at a time per cache.
#
# cache_reuse CACHE OUT WHAT: if OUT is built, say so, print OUT and end
# the script; else take CACHE's build lock (fd 9, held until the script
# ends) and look again: another build may have made it meanwhile.
cache_reuse() {
	mkdir -p "$1"
	if [ -f "$2/.done" ]; then
		say "cached $3 $2"
		echo "$2"
		exit 0
	fi
	exec 9>"$1/.lock"
	flock 9
	if [ -f "$2/.done" ]; then
		echo "$2"
		exit 0
	fi
}
