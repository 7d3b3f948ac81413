# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# Sourced by the image builders (images/cloud/build-image.sh,
# images/cloud/build-ctroot.sh, images/arm64/build-image.sh), which define
# say().  A cached build is a
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

# cache_publish DIR OUT OLD...: the finished build DIR becomes OUT, .done
# in it; each OLD (older builds of the same thing, a glob) other than OUT
# goes.
cache_publish() {
	_dir=$1 _out=$2
	shift 2
	touch "$_dir/.done"
	rm -rf "$_out"
	mv "$_dir" "$_out"
	for _old; do
		[ "$_old" = "$_out" ] || rm -rf "$_old"
	done
}
