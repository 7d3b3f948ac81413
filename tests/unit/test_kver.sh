#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Host tests of the kernel plumbing that needs no network: which Debian
# release ships each KVER series and release (images/kver.sh -s: where
# its module is built and its apt is asked), the refusal of what is not
# a kernel, and the mirrors of another release mapped from the host's
# own (images/cloud/mirrors.sh --sources).
#
#   tests/unit/test_kver.sh [KVER_SH [MIRRORS_SH]]   (default: the tree's)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=${1:-$top/images/kver.sh}
mirrors=${2:-$top/images/cloud/mirrors.sh}
. "$top/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tap_start
# SERIES|RELEASE -> release shipping it.
for pair in 6.1:bookworm 6.12:bookworm 6.12+deb12:bookworm \
	6.12+deb13:trixie 7.3:trixie 7.2:sid \
	6.1.0-57-cloud-amd64:bookworm 6.1.0-57-amd64:bookworm \
	6.12.118+deb12-amd64:bookworm 6.12.118+deb13-cloud-amd64:trixie \
	7.3.4+deb13-amd64:trixie 7.2.6+deb13-cloud-amd64:trixie \
	7.2.13+deb14-cloud-amd64:sid; do
	k=${pair%:*}
	got=$("$kver" -s "$k" 2>"$tmp/err")
	tap_eq "kver.sh -s $k" "$got" "${pair#*:}" || tap_diag_file "$tmp/err"
done

# Not a kernel: exit 2 and a message naming it, nothing on stdout.
for bad in 8.0 6 'a;b' ../6.1 -x 6.12+deb13/../x '6.1 6.12' 6.12.118+deb13; do
	"$kver" -s "$bad" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	if [ $rc -eq 2 ] && [ ! -s "$tmp/out" ] && grep -qF -- "'$bad'" "$tmp/err"; then
		tap_ok "kver.sh refuses '$bad'"
	else
		tap_not_ok "kver.sh refuses '$bad' (exit $rc)"
		tap_diag_file "$tmp/out"
		tap_diag_file "$tmp/err"
	fi
done

# Another release's mirrors come from the host's own suite of the same
# kind; sid has no -updates, -security or -backports.
host=$("$mirrors" 2>/dev/null)
main=$(echo "$host" | awk '$1 == "bookworm" { print $2; exit }')
sec=$(echo "$host" | awk '$1 == "bookworm-security" { print $2; exit }')
if [ -z "$main" ] || [ -z "$sec" ]; then
	tap_skip "mirrors.sh --sources trixie" "the host's apt lists no bookworm and bookworm-security"
	tap_skip "mirrors.sh --sources sid" "the host's apt lists no bookworm"
else
	want="deb $main trixie main
deb $main trixie-updates main
deb $sec trixie-security main
deb $main trixie-backports main"
	bpo=$(echo "$host" | awk '$1 == "bookworm-backports" { print $2; exit }')
	[ -n "$bpo" ] && want=$(echo "$want" | sed "s|^deb [^ ]* trixie-backports|deb $bpo trixie-backports|")
	tap_eq "mirrors.sh --sources trixie" "$("$mirrors" --sources trixie 2>&1)" "$want"
	tap_eq "mirrors.sh --sources sid" "$("$mirrors" --sources sid 2>&1)" "deb $main sid main"
fi
if "$mirrors" --sources trixie-security > /dev/null 2>&1; then
	tap_not_ok "mirrors.sh --sources refuses a suite (trixie-security)"
else
	tap_ok "mirrors.sh --sources refuses a suite (trixie-security)"
fi
tap_done
