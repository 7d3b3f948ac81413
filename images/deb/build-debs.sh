#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the shiftctl and shiftfs-dkms packages from debian/ for one Debian
# release, the way a Debian maintainer would (dpkg-buildpackage -b), and
# check them with that release's lintian: an error or warning fails.
#
#   images/deb/build-debs.sh RELEASE TOP BUILD_DIR
#
# bookworm (the host's release) builds on the host with its debhelper,
# dh-dkms and lintian (images/setup-host.sh --deb); any other release in
# BUILD_DIR/chroots/RELEASE (images/chroot.sh), into which its own apt
# installs the build dependencies and lintian.  The build works on a copy
# of the files git knows, in a scratch directory under BUILD_DIR/deb/:
# dpkg-buildpackage writes beside the source and debian/ collects build
# files.  Output: BUILD_DIR/deb/RELEASE/ (the .debs, .buildinfo,
# .changes); a failed build or lintian leaves neither it nor the scratch.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: $0 RELEASE TOP BUILD_DIR"
[ $# -eq 3 ] || { echo "$usage" >&2; exit 2; }
rel=$1
case $rel in
''|*[!a-z]*) echo "build-debs.sh: '$rel' is not a Debian release name (bookworm, trixie)" >&2; exit 2 ;;
esac
[ -f "$2/debian/control" ] || { echo "build-debs.sh: no debian/control in '$2'" >&2; exit 2; }
top=$(cd "$2" && pwd)
mkdir -p "$3"
build=$(cd "$3" && pwd)
host=bookworm
[ -r /etc/os-release ] && host=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")

# The last build's packages go first, whatever happens to this one.
out=$build/deb/$rel
rm -rf "$out"

# One version: VERSION is what make install and shiftctl --version say,
# debian/changelog what the packages and dh_dkms say.
version=$(cat "$top/VERSION")
deb_version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
if [ "$version" != "$deb_version" ]; then
	echo "build-debs.sh: VERSION says $version, debian/changelog $deb_version: add a changelog entry (dch -v $version)" >&2
	exit 1
fi

mkdir -p "$build/deb"
work=$(mktemp -d "$build/deb/.$rel.XXXXXX")
trap 'rm -rf "$work"' EXIT
src=$work/shiftfs-$version
mkdir "$src"
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	tar --null -T - -cf -) | tar -C "$src" -xf -
[ -f "$src/debian/rules" ] || {
	echo "build-debs.sh: '$top' is not a git work tree (the package is built from the files git knows)" >&2
	exit 1
}

# in_release CMD...: CMD where RELEASE lives, as root in the chroot.
in_release() {
	if [ "$rel" = "$host" ]; then
		"$@"
	else
		"$here/../chroot.sh" run "$rel" "$build" "$@"
	fi
}
log=$work/build.log
if [ "$rel" != "$host" ]; then
	"$here/../chroot.sh" ensure "$rel" "$build"
	apt="apt-get -y -q -o DPkg::Lock::Timeout=900 --no-install-recommends"
	# Lists may be stale (a package moved on): update once and retry.
	# Under the chroot's lock, as every apt run in it (chroot.sh ensure,
	# tests/cloud-init-schema.sh): make test builds these while a
	# kernel's headers or cloud-init go into the same chroot, and
	# apt-get update does not wait for another's lists lock.
	if ! (
		flock 9
		in_release sh -c "$apt install lintian && $apt build-dep '$src'" > "$log" 2>&1 ||
			in_release sh -c "$apt update && $apt install lintian && $apt build-dep '$src'" >> "$log" 2>&1
	) 9> "$build/chroots/$rel.lock"; then
		sed 's/^/  /' "$log" | tail -n 20 >&2
		echo "build-debs.sh: could not install the build dependencies and lintian in the $rel chroot" >&2
		exit 1
	fi
fi

echo "build-debs.sh: dpkg-buildpackage -b for $rel (shiftfs $version)" >&2
if ! in_release sh -c 'cd "$1" && dpkg-buildpackage -b -us -uc' sh "$src" >> "$log" 2>&1; then
	sed 's/^/  /' "$log" | tail -n 30 >&2
	echo "build-debs.sh: dpkg-buildpackage failed for $rel" >&2
	exit 1
fi
changes=$(cd "$work" && ls ./*.changes)
echo "== lintian $(in_release lintian --version | sed 's/^Lintian v//') ($rel) on ${changes#./}" >&2
# As nobody where nobody can read the packages (not below a private
# directory): lintian warns when run as root.
chmod 755 "$work"
nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
in_release "${nobody[@]}" test -r "$work/$changes" 2>/dev/null || nobody=()
if ! in_release "${nobody[@]}" \
	sh -c 'cd "$1" && lintian --fail-on error,warning "$2"' sh "$work" "$changes" >&2; then
	echo "build-debs.sh: lintian ($rel) found errors or warnings (above)" >&2
	exit 1
fi
echo "lintian ($rel): no error, no warning" >&2
mkdir "$out"
mv "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes "$out/"
for f in "$out"/*.deb; do
	echo "build-debs.sh: built ${f#"$build/"}" >&2
done
