#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run apt-get or apt-cache against another Debian release's archive,
# with an apt configuration of that release's own under
# BUILD_DIR/apt/RELEASE/ (its sources.list, lists, cache; no installed
# packages): what trixie or sid offers is asked without touching the
# host's sources, lists or packages.  For the host's own release
# (bookworm) the host's apt is run as it is.
#
#   images/apt-suite.sh [-u] RELEASE BUILD_DIR apt-get|apt-cache ARGS...
#
#   -u   refresh the lists first (apt-get update), whatever their age
#
# The lists are fetched when missing or older than
# SHIFTFS_APT_MAX_AGE seconds (default 21600: six hours), so that a new
# kernel ABI is seen the day Debian publishes it.  The mirrors are the
# host's (images/cloud/mirrors.sh --sources RELEASE).  sid's Release file
# may be past its Valid-Until date on a mirror: apt is told not to
# check that date for sid only.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: $0 [-u] RELEASE BUILD_DIR apt-get|apt-cache ARGS..."
force=
if [ "${1:-}" = -u ]; then
	force=1
	shift
fi
[ $# -ge 3 ] || { echo "$usage" >&2; exit 2; }
rel=$1
build=$2
shift 2
case $1 in
apt-get|apt-cache) ;;
*) echo "apt-suite.sh: runs apt-get or apt-cache, not '$1'" >&2; exit 2 ;;
esac
case $rel in
''|*[!a-z]*) echo "apt-suite.sh: '$rel' is not a Debian release name (trixie, sid)" >&2; exit 2 ;;
esac

host=bookworm
[ -r /etc/os-release ] && host=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
if [ "$rel" = "$host" ]; then
	exec "$@"
fi

mkdir -p "$build"
d=$(cd "$build" && pwd)/apt/$rel
conf=$d/apt.conf
if [ ! -f "$conf" ]; then
	mkdir -p "$d/etc/apt.conf.d" "$d/etc/preferences.d" "$d/etc/sources.list.d" \
		"$d/state/lists/partial" "$d/cache/archives/partial"
	srcs=$("$here/cloud/mirrors.sh" --sources "$rel") || {
		echo "apt-suite.sh: no mirror for $rel (see images/cloud/mirrors.sh)" >&2
		exit 1
	}
	echo "$srcs" > "$d/etc/sources.list"
	: > "$d/state/status"
	{
		echo "Dir::Etc \"$d/etc/\";"
		echo 'Dir::Etc::sourcelist "sources.list";'
		echo 'Dir::Etc::sourceparts "sources.list.d";'
		echo 'Dir::Etc::parts "apt.conf.d";'
		echo 'Dir::Etc::preferencesparts "preferences.d";'
		# The host's keyring: it has the keys of the next releases.
		echo 'Dir::Etc::TrustedParts "/etc/apt/trusted.gpg.d/";'
		echo "Dir::State \"$d/state/\";"
		echo "Dir::State::status \"$d/state/status\";"
		echo "Dir::Cache \"$d/cache/\";"
		echo 'Acquire::Languages "none";'
		echo 'APT::Sandbox::User "root";'
		case $rel in
		sid|unstable|experimental) echo 'Acquire::Check-Valid-Until "false";' ;;
		esac
	} > "$conf.tmp"
	mv "$conf.tmp" "$conf"
fi
export APT_CONFIG="$conf"

stamp=$d/state/updated
age=${SHIFTFS_APT_MAX_AGE:-21600}
stale=$force
if [ ! -f "$stamp" ]; then
	stale=1
elif [ $(( $(date +%s) - $(stat -c %Y "$stamp") )) -gt "$age" ]; then
	stale=1
fi
if [ -n "$stale" ]; then
	echo "apt-suite.sh: apt-get update for $rel (lists in $d)" >&2
	# One update at a time per release; the others wait for it.
	if ! flock "$d/update.lock" apt-get -q update -o Debug::NoLocking=1 >"$d/update.log" 2>&1 ||
	   grep -qE '^(E|W): ' "$d/update.log"; then
		sed 's/^/  /' "$d/update.log" >&2
		echo "apt-suite.sh: apt-get update for $rel failed" >&2
		# Never updated: a configuration that never worked (a release
		# the mirror does not have) is not kept.
		[ -f "$stamp" ] || rm -rf "$d"
		exit 1
	fi
	touch "$stamp"
fi
exec "$@"
