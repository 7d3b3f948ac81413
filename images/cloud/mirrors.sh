#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the Debian mirrors this host's apt is configured with, as
# "SUITE URI" lines (bookworm, bookworm-updates, bookworm-security), read
# from /etc/apt/sources.list and /etc/apt/sources.list.d/*.{list,sources}.
# The cloud image and the build chroots are bootstrapped from the same
# mirrors as the host: no host name is written in the project.
#
#   images/cloud/mirrors.sh                   -> the host's own suites
#   images/cloud/mirrors.sh SUITE             -> the URI for SUITE only
#   images/cloud/mirrors.sh --sources RELEASE -> "deb URI SUITE main" lines
#                                                for a whole release
#
# A suite the host does not list (trixie, trixie-security, sid...) is
# served by the mirror the host uses for its own suite of the same kind:
# trixie-security by bookworm-security's, trixie-backports by
# bookworm-backports' if the host lists it, else, like trixie, trixie-updates
# and sid, by bookworm's.  --sources RELEASE gives RELEASE with its
# -updates, -security and -backports suites (sid/unstable alone), the
# lines mmdebstrap and a sources.list take.
set -eu
sources=
case ${1:-} in
--sources)
	[ $# -eq 2 ] || { echo "usage: $0 --sources RELEASE" >&2; exit 2; }
	sources=$2
	;;
-*)
	echo "mirrors.sh: unknown option '$1'" >&2
	echo "usage: $0 [SUITE | --sources RELEASE]" >&2
	exit 2
	;;
esac
want=${sources:-${1:-}}
case $want in
*[!a-z0-9-]*) echo "mirrors.sh: '$want' is not a Debian suite name" >&2; exit 2 ;;
esac
# The host's own release (its suites are the ones mapped from).
host=bookworm
if [ -r /etc/os-release ]; then
	host=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
fi

host_mirrors() {
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		# deb [opts] URI SUITE COMPONENTS...
		sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" |
			awk -v h="$host" '$1 == "deb" && index($3, h) == 1 && $0 ~ / main/ { print $3, $2 }'
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk -v h="$host" '
		function flush() {
			if (types ~ /(^| )deb( |$)/ && comps ~ /(^| )main( |$)/ && enabled != "no")
				for (i = 1; i <= ns; i++)
					if (index(s[i], h) == 1)
						for (j = 1; j <= nu; j++) print s[i], u[j]
			types = comps = enabled = ""; ns = nu = 0
		}
		/^[ \t]*#/ { next }
		/^[ \t]*$/ { flush(); next }
		{ key = tolower($1); sub(/:$/, "", key) }
		key == "types" { types = substr($0, index($0, ":") + 1) }
		key == "components" { comps = substr($0, index($0, ":") + 1) }
		key == "enabled" { enabled = tolower($2) }
		key == "uris" { for (i = 2; i <= NF; i++) u[++nu] = $i }
		key == "suites" { for (i = 2; i <= NF; i++) s[++ns] = $i }
		END { flush() }' "$f"
	done
}
list=$(host_mirrors | awk '!seen[$1]++')

# uri SUITE: the host's URI for SUITE, or for the host's suite of the
# same kind (suffix -security, -updates, -backports, or none).
uri() {
	u=$(echo "$list" | awk -v w="$1" '$1 == w { print $2; exit }')
	if [ -z "$u" ]; then
		case $1 in
		*-*) kind=-${1#*-} ;;
		*) kind= ;;
		esac
		u=$(echo "$list" | awk -v w="$host$kind" '$1 == w { print $2; exit }')
		# No host backports or updates line: the main archive has them.
		if [ -z "$u" ] && [ "$kind" != -security ]; then
			u=$(echo "$list" | awk -v w="$host" '$1 == w { print $2; exit }')
		fi
	fi
	[ -n "$u" ] || return 1
	echo "$u"
}

if [ -n "$sources" ]; then
	case $sources in
	*-*) echo "mirrors.sh: --sources wants a release (trixie, sid), not the suite '$sources'" >&2; exit 2 ;;
	sid|unstable|experimental) suites=$sources ;;
	*) suites="$sources $sources-updates $sources-security $sources-backports" ;;
	esac
	for s in $suites; do
		u=$(uri "$s") || {
			echo "mirrors.sh: the host's apt lists no mirror that could serve $s" >&2
			exit 1
		}
		echo "deb $u $s main"
	done
elif [ -n "$want" ]; then
	uri "$want" || exit 1
else
	echo "$list"
fi
