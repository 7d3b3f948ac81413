#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the Debian mirrors this host's apt is configured with, as
# "SUITE URI" lines (bookworm, bookworm-updates, bookworm-security), read
# from /etc/apt/sources.list and /etc/apt/sources.list.d/*.{list,sources}.
# The cloud image is bootstrapped from the same mirrors as the host: no
# host name is written in the project.
#
#   images/cloud/mirrors.sh [SUITE]   -> the URI for SUITE only
set -eu
want=${1:-}
{
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		# deb [opts] URI SUITE COMPONENTS...
		sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" |
			awk '$1 == "deb" && $3 ~ /^bookworm/ && $0 ~ / main/ { print $3, $2 }'
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk '
		function flush() {
			if (types ~ /(^| )deb( |$)/ && comps ~ /(^| )main( |$)/ && enabled != "no")
				for (i = 1; i <= ns; i++)
					if (s[i] ~ /^bookworm/)
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
} | awk '!seen[$1]++' | {
	if [ -n "$want" ]; then
		awk -v w="$want" '$1 == w { print $2; found = 1 } END { exit !found }'
	else
		cat
	fi
}
