#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check-debug: the guest suite on a kernel with the kernel's own bug
# detectors on (KASAN, lockdep and PROVE_RCU, UBSAN, kmemleak,
# DEBUG_OBJECTS, DEBUG_LIST, DEBUG_ATOMIC_SLEEP, SLUB debugging), built
# once from Debian's linux-source (images/debug-kernel.sh), with shiftfs
# built against that tree.  Four parts, each ending "N passed, N failed":
#
#   suite      every program make check-guest runs, then the guest's
#              teardown: no shiftfs mount left, the module unloads,
#              kmemleak's scan finds nothing
#   stress     the race and stress programs for STRESS_SECS seconds each
#              (shiftfs.race_secs=; the race pass of docs/testing.md)
#   detectors  a planted use after free, lock-order inversion and leak
#              (tests/selftest/shiftfs_selftest_plant.c, never in the
#              module), one boot each: each must be reported by its
#              detector and fail the run
#   banner     the kernel said KASAN, lockdep and kmemleak are on
#
# The runner (tests/run-guest.sh, tests/scan-kernel-log.sh) fails a boot
# on any report of the detectors.  Each boot's logs are kept under
# BUILD_DIR/RELEASE/logs/PART/.
#
#   tests/check-debug.sh SERIES BUILD_DIR [STRESS_SECS]
set -u
[ $# -ge 2 ] || { echo "usage: $0 SERIES BUILD_DIR [STRESS_SECS]" >&2; exit 2; }
series=$1
build=$(cd "$2" && pwd)
secs=${3:-600}
case $secs in
''|*[!0-9]*) echo "check-debug.sh: STRESS_SECS '$secs' is not a number of seconds" >&2; exit 2 ;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/lib/counts.sh"
start=$(date +%s)

t0=$(date +%s)
rel=$("$top/images/debug-kernel.sh" "$series" "$build") || exit 1
echo "check-debug.sh: debug kernel $rel ($(($(date +%s) - t0)) s to get it;" \
	"built in $(cat "$build/debug/$series/.build-seconds" 2>/dev/null || echo '?') s)"
tree=$build/debug/$series/linux

# shiftfs and the self-test modules against the debug tree, with the
# compiler of the Debian release that ships the series.
host=bookworm
[ -r /etc/os-release ] && host=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
suite=bookworm
[ "$series" = 6.1 ] || suite=trixie
kmake() {
	if [ "$suite" = "$host" ]; then
		make -C "$tree" "$@"
	else
		"$top/images/chroot.sh" run "$suite" "$build" make -C "$tree" "$@"
	fi
}
d=$build/$rel
mkdir -p "$d/module" "$d/selftest"
cp -p "$top"/module/*.[ch] "$top/module/Kbuild" "$d/module/"
cp -p "$top"/tests/selftest/*.c "$top/tests/selftest/Kbuild" "$d/selftest/"
if ! kmake M="$d/module" modules > "$d/module/build.log" 2>&1 ||
   ! kmake M="$d/selftest" modules > "$d/selftest/build.log" 2>&1; then
	cat "$d/module/build.log" "$d/selftest/build.log" 2>/dev/null | tail -n 30
	echo "check-debug.sh: the modules did not build against $tree"
	echo "0 passed, 1 failed"
	exit 1
fi
cp "$d/module/shiftfs.ko" "$d/shiftfs.ko"
make -s --no-print-directory -C "$top" shiftctl guest-tests bench-helpers > /dev/null || exit 1
"$top/images/mkinitramfs.sh" "$rel" "$build" "$d/initramfs.cpio" || exit 1

passed=0
failed=0
summary=()
# guest PART ARGS...: one boot of the debug kernel, its logs kept apart.
guest() {
	local part=$1 rc p f t
	shift
	t=$(date +%s)
	# KASAN, lockdep and SLUB debugging make the kernel several times
	# slower: each C test gets five times its timeout.
	"$top/tests/run-guest.sh" -M 3072 -K slub_debug=FZ -a shiftfs.timeout_scale=5 \
		"$@" "$rel" "$build" 2>&1 |
		tee "$d/logs.$part.out"
	rc=${PIPESTATUS[0]}
	rm -rf "$d/logs/$part"
	mkdir -p "$d/logs/$part"
	cp "$d/logs/console.log" "$d/logs/tap.log" "$d/logs.$part.out" "$d/logs/$part/"
	read -r p f _ <<< "$(part_counts "$d/logs.$part.out" "$rc")"
	GUEST_RC=$rc GUEST_P=$p GUEST_F=$f
	GUEST_T=$(($(date +%s) - t))
}
count() {
	passed=$((passed + $2))
	failed=$((failed + $3))
	summary+=("$(printf '%-28s %s passed, %s failed  (%ss)' "$1" "$2" "$3" "$4")")
}

# 1. The whole suite, and the teardown with kmemleak's scan.
guest suite -a shiftfs.timeout=3600 -T 10800
count "suite ($rel)" "$GUEST_P" "$GUEST_F" "$GUEST_T"

# 2. What the detectors look for in the suite's boot: the banners.
bp=0 bf=0
for b in 'KernelAddressSanitizer initialized' 'Lock dependency validator' \
	'kmemleak: Kernel memory leak detector initialized'; do
	if grep -q "$b" "$d/logs/suite/console.log"; then
		bp=$((bp + 1))
	else
		echo "check-debug.sh: the debug kernel's log lacks '$b'"
		bf=$((bf + 1))
	fi
done
count "banner (KASAN, lockdep, kmemleak)" $bp $bf 0

# 3. The race and stress programs, long.
guest stress -t race,stress -a "shiftfs.race_secs=$secs" -a shiftfs.timeout=$((secs * 4 + 1800)) \
	-T $((secs * 8 + 3600))
count "stress (${secs} s a race)" "$GUEST_P" "$GUEST_F" "$GUEST_T"

# 4. Each planted bug must fail its boot, reported by its detector.
dp=0 df=0 dt=$(date +%s)
for plant in 'uaf:BUG: KASAN: [a-z-]*use-after-free' \
	'lockinv:WARNING: possible circular locking dependency detected' \
	'leak:unreferenced object 0x'; do
	bug=${plant%%:*}
	want=${plant#*:}
	guest "plant-$bug" -s "plant-$bug" -t NO_SUCH_TEST_PROGRAM -T 1800 > /dev/null
	if [ "$GUEST_RC" -ne 0 ] && grep -Eq "$want" "$d/logs/plant-$bug/console.log" &&
	   grep -q 'shiftfs_selftest_plant' "$d/logs/plant-$bug/console.log"; then
		echo "check-debug.sh: planted $bug: reported ($(grep -Eom1 "$want" "$d/logs/plant-$bug/console.log")), the run failed"
		dp=$((dp + 1))
	else
		echo "check-debug.sh: planted $bug: NOT caught (runner exit $GUEST_RC; want /$want/ in $d/logs/plant-$bug/console.log)"
		df=$((df + 1))
	fi
done
count "detectors (uaf, lockinv, leak)" $dp $df $(($(date +%s) - dt))

echo
echo "check-debug $series ($rel), $(($(date +%s) - start)) s:"
printf '  %s\n' "${summary[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
