#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The README's cloud-init snippet, used as is: a Debian cloud VM boots
# with images/cloud-init/shiftfs.yaml, byte for byte as committed, as the
# first part of its user-data, and the shiftfs .debs on an attached disk,
# as the snippet allows; cloud-init must finish with no error and
# "shiftctl check" must be green.
#
#   tests/e2e/cloud-init-snippet.sh [-T SECS] BUILD_DIR [12|13]...
#
#   -T SECS   timeout of each boot (default 1800)
#   12, 13    the Debian releases to boot (default: 13 12)
#
# Each release boots a throw-away overlay of its e2e image
# (BUILD_DIR/cloud/base-KVER-*/, images/cloud/build-image.sh; KVER is the
# release's cloud kernel, images/kver.sh 6.12+deb13 or 6.1) with a NoCloud
# seed whose user-data is MIME multipart: the snippet, then
# tests/e2e/cloud-init-snippet.yaml (the modules a Debian cloud image runs
# for the snippet's keys, the disk mounted at /var/cache/shiftfs, and
# the report on the second serial port).  The VM is offline, its apt
# sources its own.  The disk (LABEL=shiftfs-debs) holds the release's
# shiftfs-dkms_*.deb and shiftctl_*.deb ($SNIPPET_DEBS_12 or
# $SNIPPET_DEBS_13, else BUILD_DIR/deb/bookworm or BUILD_DIR/deb/trixie).
# The logs stay in
# BUILD_DIR/cloud/cloud-init-snippet/; the disks are removed.  The last
# line is "N passed, N failed".
set -u

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/cloud-guest.sh
. "$here/../lib/cloud-guest.sh"
cloud_guest_opts 1800 "BUILD_DIR [12|13]..." "$@"
shift "$CLOUD_OPTSHIFT"
[ $# -ge 1 ] || { echo "usage: $0 [-T SECS] BUILD_DIR [12|13]..." >&2; exit 2; }
bdir=$1
shift
releases=${*:-13 12}
for r in $releases; do
	case $r in
	12|13) ;;
	*) echo "$0: Debian $r: the snippet is booted on Debian 12 or 13" >&2; exit 2 ;;
	esac
done
mkdir -p "$bdir" || exit 1
build=$(cd "$bdir" && pwd)
top=$(cd "$here/../.." && pwd)
snippet=$top/images/cloud-init/shiftfs.yaml
part2=$here/cloud-init-snippet.yaml
out=$build/cloud/cloud-init-snippet
logs=$out/logs
# (one run at a time: the logs are shared)
cloud_guest_run cloud-init-snippet "$out" mke2fs cloud-localds python3
work=$(mktemp -d "$out/work.XXXXXX") || die "mktemp failed"

n=0 fails=0
ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fails=$((fails + 1))
	fi
}

# The user-data: the snippet as committed, then the second part.  The
# line break before a boundary belongs to the boundary, so each part is
# followed by an empty line: the parts' bodies are the files' bytes.
mkuserdata() {
	local b=SHIFTFS-CLOUD-INIT-SNIPPET-BOUNDARY f name
	printf 'Content-Type: multipart/mixed; boundary="%s"\nMIME-Version: 1.0\n\n' $b
	for f in "$snippet" "$part2"; do
		name=${f##*/}
		printf -- '--%s\nContent-Type: text/cloud-config; charset="us-ascii"\n' $b
		printf 'MIME-Version: 1.0\nContent-Transfer-Encoding: 7bit\n'
		printf 'Content-Disposition: attachment; filename="%s"\n\n' "$name"
		cat "$f"
		echo
	done
	printf -- '--%s--\n' $b
}

# The first part of FILE, as a MIME reader (python's email) sees it, on
# stdout: what cloud-init takes as the snippet.
firstpart() {
	python3 -c '
import email, sys
m = email.message_from_binary_file(open(sys.argv[1], "rb"))
sys.stdout.buffer.write(m.get_payload()[0].get_payload(decode=True))
' "$1"
}

# run RELEASE: one boot of Debian RELEASE, its TAP lines.
run() {
	local rel=$1 code series kver base d debdir dkms_deb ctl_deb kib t0 rc
	local tap=$logs/debian$1-report.log con=$logs/debian$1-console.log w=$work/$1
	local status bad
	case $rel in
	12) code=bookworm series=6.1 ;;
	13) code=trixie series=6.12+deb13 ;;
	esac
	note "---- Debian $rel ($code) ----"
	kver=$("$top/images/kver.sh" -b "$build" "$series") || {
		ok 1 "Debian $rel: no $series kernel (images/kver.sh $series)"; return; }
	base=
	for d in "$build"/cloud/base-"$kver"-*/; do
		[ -f "$d/.done" ] && base=${d%/}
	done
	if [ -z "$base" ]; then
		note "no Debian $rel image for $kver yet: building it (images/cloud/build-image.sh)"
		base=$("$top/images/cloud/build-image.sh" "$kver" "$build" | tail -n 1)
		[ -f "$base/.done" ] || { ok 1 "Debian $rel: no cloud image for $kver (images/cloud/build-image.sh $kver $build)"; return; }
	fi
	note "image: $base"
	if [ "$rel" = 12 ]; then debdir=${SNIPPET_DEBS_12:-$build/deb/bookworm}; else debdir=${SNIPPET_DEBS_13:-$build/deb/trixie}; fi
	dkms_deb='' ctl_deb=''
	for d in "$debdir"/shiftfs-dkms_*.deb; do [ -f "$d" ] && dkms_deb=$d; done
	for d in "$debdir"/shiftctl_*.deb; do [ -f "$d" ] && ctl_deb=$d; done
	if [ -z "$dkms_deb" ] || [ -z "$ctl_deb" ]; then
		ok 1 "Debian $rel: no shiftfs-dkms_*.deb and shiftctl_*.deb in $debdir (make deb DEBIAN=$rel)"
		return
	fi
	note "shiftfs packages: $dkms_deb $ctl_deb"

	mkdir -p "$w/stage"
	cp "$dkms_deb" "$ctl_deb" "$w/stage/"
	kib=$(du -sk "$w/stage" | cut -f1)
	mke2fs -q -t ext4 -L shiftfs-debs -E root_owner=0:0 -d "$w/stage" "$w/debs.img" \
		"$(( kib * 11 / 10 + 16384 ))k" >/dev/null ||
		{ ok 1 "Debian $rel: mke2fs of the packages' disk failed"; return; }
	rm -rf "$w/stage"
	mkuserdata > "$w/user-data"
	cp "$w/user-data" "$logs/debian$rel-user-data"
	firstpart "$w/user-data" > "$w/part1"
	cmp -s "$snippet" "$w/part1"
	ok $? "Debian $rel: the user-data's first part is ${snippet#"$top"/} byte for byte"
	printf 'instance-id: shiftfs-snippet-%s\nlocal-hostname: shiftfs-snippet\n' "$(date +%s)" > "$w/meta-data"
	cloud-localds "$w/seed.img" "$w/user-data" "$w/meta-data" ||
		{ ok 1 "Debian $rel: cloud-localds failed"; return; }
	qemu-img create -q -f qcow2 -b "$base/base.qcow2" -F qcow2 "$w/overlay.qcow2" ||
		{ ok 1 "Debian $rel: qemu-img create of the overlay failed"; return; }

	cloud_guest_accel "$build" "$base/vmlinuz"
	note "boot: $kver ($CLOUD_ACCEL), timeout ${limit}s"
	t0=$(date +%s)
	cloud_guest_start "$limit" "$base/vmlinuz" "$base/initrd.img" "" \
		"$con" "$tap" "$logs/debian$rel-qemu.log" \
		"$w/overlay.qcow2" "$w/debs.img" "$w/seed.img"
	cloud_guest_wait
	rc=$?
	note "boot: $(( $(date +%s) - t0 ))s (qemu exit $rc)"
	rm -rf "$w"
	sed -i 's/\r$//' "$tap"
	sed 's/^/  # /' "$tap"
	[ $rc -ne 124 ] && [ $rc -ne 137 ] && grep -q '^SHIFTFS-CI-DONE' "$tap"
	ok $? "Debian $rel: the guest reported after cloud-init finished (see $con)"
	status=$(sed -n '/^SHIFTFS-CI-STATUS-BEGIN/,/^SHIFTFS-CI-STATUS-EXIT/p' "$tap")
	grep -q '^status: done$' <<< "$status" && grep -q '^SHIFTFS-CI-STATUS-EXIT 0$' <<< "$status"
	ok $? "Debian $rel: cloud-init status --long: done, exit 0"
	! grep -Eq 'Failed to run module|Traceback' "$tap" &&
		grep -q 'Running module package_update_upgrade_install' "$tap" &&
		grep -q "'install', 'dkms'\]" "$tap" && grep -q 'Running module write_files' "$tap" &&
		grep -q 'Running module runcmd' "$tap" && grep -q 'Running module scripts_user' "$tap"
	ok $? "Debian $rel: cloud-init ran the snippet's modules (packages: apt-get install dkms; write_files; runcmd), none failed"
	sed -n '/^SHIFTFS-CI-CHECKLOG-BEGIN/,/^SHIFTFS-CI-CHECKLOG-END/p' "$tap" | grep -q '^shiftfs is usable$'
	ok $? "Debian $rel: /var/log/shiftfs-check.log (the snippet's shiftctl check) says shiftfs is usable"
	grep -q '^SHIFTFS-CI-CHECK-EXIT 0$' "$tap"
	ok $? "Debian $rel: shiftctl check after cloud-init: exit 0"
	grep -q '^SHIFTFS-CI-LOADED$' "$tap" && grep -q '^SHIFTFS-CI-MODULES-LOAD$' "$tap"
	ok $? "Debian $rel: shiftfs is loaded, /etc/modules-load.d/shiftfs.conf written"
	bad=$("$top/tests/scan-kernel-log.sh" "$con")
	rc=$?
	[ -n "$bad" ] && echo "$bad" | sed 's/^/  # kernel log: /' | head -n 30
	[ $rc -eq 0 ] && grep -aq '^SHIFTFS-DMESG-END' "$con"
	ok $? "Debian $rel: the kernel log is complete, with no WARN/BUG/Oops"
}

for r in $releases; do
	run "$r"
done
note "log: $out/cloud-init-snippet.log, guests' logs in $logs/"
echo "1..$n"
echo "$((n - fails)) passed, $fails failed"
[ $fails -eq 0 ]
