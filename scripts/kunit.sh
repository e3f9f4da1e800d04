#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a KUnit kernel from Debian's linux-source-6.1 with the Kite drivers
# dropped in where they would be upstream (the core and Ethernet driver in
# drivers/net/ethernet/kite, the RDMA driver in drivers/infiniband/hw/kite,
# their shared headers in include/linux/kite) and run their suites with
# kunit.py under our QEMU (out/qemu-system-x86_64, which has the kite device).
#
# Usage: scripts/kunit.sh [KUNIT.PY RUN OPTIONS...]   e.g. 'kite_ring*'
#   A glob 'SUITE[.CASE]' runs only the matching suites or cases (kunit.py's
#   filter_glob); with any argument no suite is required to run, but a run
#   with no test at all still fails.
#
# Caching (all under ${KITE_CACHE:-/var/cache/kite}/kunit):
#   linux-<tarball sha256[:12]>/   the extracted source, made once; the
#                                  drivers and headers are synced into it
#                                  (only files whose contents changed)
#   build/                         kunit.py's build dir for the current key
#                                  (sha256[:12] of kunitconfig + source key,
#                                  in build/.kite-key)
#   build-<key>/                   builds of other keys, parked (at most
#                                  KITE_KUNIT_KEEP); swapped in by renaming.
#                                  A new key starts from a copy of the most
#                                  recent build, so a changed kunitconfig
#                                  costs an incremental build, not a cold one.
#
# Output: a summary per suite, then as the last line
#   kunit: N passed, N failed, N skipped
# Exit status 1 on any failed test, a build failure, a crash, a timeout, a
# suite the driver defines that did not run, or no test at all. The full
# kunit.py log is out/logs/kunit.log; the raw kernel console is
# out/logs/kunit-console.log.
#
# Environment: KITE_CACHE, KITE_LINUX_TARBALL (default
# /usr/src/linux-source-6.1.tar.xz), KITE_KUNITCONFIG (default
# kunit/.kunitconfig), KITE_KUNIT_TIMEOUT (seconds for the test run, default
# 300), KITE_KUNIT_LOCK_WAIT (seconds to wait for another run's lock,
# default 1800), KITE_JOBS (default 2), KITE_KUNIT_KEEP (parked build dirs kept, default 2),
# KITE_KUNIT_SYNC_ONLY=1 (only extract and sync the source tree),
# KITE_KUNIT_DEVICE_SUITES (suites that fail when every case skips, because
# the device is attached; default "kite_device kite_verbs kite_datapath").

set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${KITE_CACHE:-/var/cache/kite}/kunit
TARBALL=${KITE_LINUX_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
KUNITCONFIG=$(realpath "${KITE_KUNITCONFIG:-$REPO/kunit/.kunitconfig}")
TIMEOUT=${KITE_KUNIT_TIMEOUT:-300}
JOBS=${KITE_JOBS:-2}
KEEP=${KITE_KUNIT_KEEP:-2}
LOGDIR=$REPO/out/logs
LOG=$LOGDIR/kunit.log
CONSOLE=$LOGDIR/kunit-console.log
JSON=$LOGDIR/kunit.json
# The kite NIC hangs off a hub port of its own: its link is up (the data
# path suite needs that) and its frames go nowhere.
QEMU_ARGS="-machine q35 -accel tcg -L /usr/share/qemu -L /usr/share/seabios -netdev hubport,id=n0,hubid=0 -device kite,netdev=n0"

# The drivers (repo path = path in the kernel tree), core first.
KITE_DIRS="drivers/net/ethernet/kite drivers/infiniband/hw/kite"

die() {
	echo "kunit.sh: $*" >&2
	echo "kunit: 0 passed, 1 failed, 0 skipped"
	exit 1
}

[ -f "$TARBALL" ] || die "$TARBALL not found (apt-get install linux-source-6.1)"
[ -f "$KUNITCONFIG" ] || die "$KUNITCONFIG not found"
mkdir -p "$CACHE" "$LOGDIR"

# One run at a time per cache: the source tree and build dirs are shared.
exec 9>"$CACHE/.lock"
if ! flock -n 9; then
	echo "kunit.sh: waiting for another KUnit run to finish..." >&2
	# Never wait longer than the suite may run (check.sh passes what is left).
	flock -w "${KITE_KUNIT_LOCK_WAIT:-1800}" 9 ||
		die "timed out after ${KITE_KUNIT_LOCK_WAIT:-1800}s waiting for $CACHE/.lock"
fi

# --- 1. the kernel source, extracted once per tarball -----------------------
# The checksum is remembered per (path, size, mtime): hashing 130 MB each run
# would cost a second for nothing.
stamp="$TARBALL $(stat -c '%s %Y' "$TARBALL")"
if [ "$(sed -n 1p "$CACHE/.tarball-sum" 2>/dev/null)" = "$stamp" ]; then
	srckey=$(sed -n 2p "$CACHE/.tarball-sum")
else
	srckey=$(sha256sum "$TARBALL" | cut -c1-12)
	printf '%s\n%s\n' "$stamp" "$srckey" > "$CACHE/.tarball-sum"
fi
SRC=$CACHE/linux-$srckey
# The tree appears by an atomic rename, so an existing one is complete.
if [ ! -d "$SRC" ]; then
	echo "kunit.sh: extracting $TARBALL into $SRC" >&2
	rm -rf "$CACHE/.tmp-linux-$srckey"
	mkdir -p "$CACHE/.tmp-linux-$srckey"
	nice -n 10 tar -xJf "$TARBALL" -C "$CACHE/.tmp-linux-$srckey"
	top=$(find "$CACHE/.tmp-linux-$srckey" -mindepth 1 -maxdepth 1 -type d)
	[ -f "$top/Makefile" ] || die "unexpected layout in $TARBALL"
	mv "$top" "$SRC"
	rmdir "$CACHE/.tmp-linux-$srckey"
fi

# --- 2. the driver and the ABI header, synced into the tree -----------------
changed=0

# sync_file SRC DST: copy when the contents differ, so that unchanged files
# keep their timestamps and make rebuilds only what changed.
sync_file() {
	if ! cmp -s "$1" "$2"; then
		mkdir -p "$(dirname "$2")"
		cp "$1" "$2.kite-tmp"
		mv "$2.kite-tmp" "$2"
		changed=$((changed + 1))
	fi
}

# sync_dir SRC DST: mirror the source files of SRC into DST (build products
# left in the repo by out-of-tree builds are not copied); files no longer in
# SRC are removed from DST.
sync_dir() {
	local src=$1 dst=$2 f rel
	mkdir -p "$dst"
	while IFS= read -r -d '' f; do
		rel=${f#"$src"/}
		sync_file "$f" "$dst/$rel"
	done < <(find "$src" -type f \( -name '*.[ch]' -o -name Kconfig \
		 -o -name Makefile -o -name Kbuild \) ! -name '*.mod.c' -print0)
	while IFS= read -r -d '' f; do
		rel=${f#"$dst"/}
		if [ ! -e "$src/$rel" ]; then
			rm -f "$f"
			changed=$((changed + 1))
		fi
	done < <(find "$dst" -type f \( -name '*.[ch]' -o -name Kconfig \
		 -o -name Makefile -o -name Kbuild \) ! -name '*.mod.c' -print0)
}

# hook_kconfig KCONFIG BEFORE_REGEX LINE: add LINE to KCONFIG before the first
# line matching AFTER_REGEX (idempotent).
hook_kconfig() {
	local kc=$1 before=$2 line=$3
	if ! grep -qxF "$line" "$kc"; then
		sed -i "0,/$before/s||$line\n&|" "$kc"
		grep -qxF "$line" "$kc" || die "could not hook kite into $kc"
	fi
}

# hook_makefile MAKEFILE SYMBOL: descend into kite/ when CONFIG_SYMBOL is set.
hook_makefile() {
	# shellcheck disable=SC2016 # a make variable, written literally
	if ! grep -q "CONFIG_$2)" "$1"; then
		printf 'obj-$(CONFIG_%s)\t\t+= kite/\n' "$2" >> "$1"
	fi
}

unhook() {
	sed -i '/^source "drivers\/infiniband\/hw\/kite\/Kconfig"$/d' \
		"$SRC/drivers/infiniband/Kconfig"
	sed -i '/CONFIG_INFINIBAND_KITE)/d' "$SRC/drivers/infiniband/hw/Makefile"
	sed -i '/^source "drivers\/net\/ethernet\/kite\/Kconfig"$/d' \
		"$SRC/drivers/net/ethernet/Kconfig"
	sed -i '/CONFIG_NET_VENDOR_KITE)/d' "$SRC/drivers/net/ethernet/Makefile"
}

if [ -f "$REPO/drivers/net/ethernet/kite/Kconfig" ] &&
   [ -f "$REPO/drivers/infiniband/hw/kite/Kconfig" ]; then
	for d in $KITE_DIRS; do
		sync_dir "$REPO/$d" "$SRC/$d"
	done
	sync_dir "$REPO/include/kite" "$SRC/include/kite"
	sync_dir "$REPO/include/linux/kite" "$SRC/include/linux/kite"
	if [ -f "$REPO/include/uapi/rdma/kite-abi.h" ]; then
		sync_file "$REPO/include/uapi/rdma/kite-abi.h" \
			  "$SRC/include/uapi/rdma/kite-abi.h"
	fi

	# Hook the drivers into the tree's Kconfig and Makefiles (idempotent):
	# the core among the Ethernet vendors, the RDMA driver inside
	# "if INFINIBAND" next to the other hardware drivers.
	hook_makefile "$SRC/drivers/net/ethernet/Makefile" NET_VENDOR_KITE
	hook_kconfig "$SRC/drivers/net/ethernet/Kconfig" \
		'^source "drivers\/net\/ethernet\/litex\/Kconfig"$' \
		'source "drivers/net/ethernet/kite/Kconfig"'
	hook_makefile "$SRC/drivers/infiniband/hw/Makefile" INFINIBAND_KITE
	hook_kconfig "$SRC/drivers/infiniband/Kconfig" \
		'^source "drivers\/infiniband\/hw\/efa\/Kconfig"$' \
		'source "drivers/infiniband/hw/kite/Kconfig"'
else
	if grep -q 'KITE' "$KUNITCONFIG"; then
		die "the drivers' Kconfig files are missing but $KUNITCONFIG needs them"
	fi
	echo "kunit.sh: no driver Kconfig yet; building without kite" >&2
	# Unhook drivers synced by an earlier run, so the tree still configures.
	unhook
fi

if [ "${KITE_KUNIT_SYNC_ONLY:-0}" = 1 ]; then
	echo "kunit.sh: $SRC prepared ($changed file(s) changed)"
	exit 0
fi

# --- 3. the build dir, keyed by kunitconfig and source ----------------------
# kbuild records absolute build paths (objtool's .cmd files), and every object
# depends on objtool: a build dir that moves to another path is rebuilt from
# scratch. So the build always happens in one place, $CACHE/build, which
# holds the build of one key (.kite-key); the builds of other keys are parked
# beside it as build-<key> and swapped in by renaming. A key seen for the
# first time starts from a copy of the most recent build of the same source:
# kbuild then recompiles only what the configuration change touches.
QEMU_CONFIG=$REPO/kunit/qemu_x86_64.py
buildkey=$( { cat "$KUNITCONFIG" "$QEMU_CONFIG"; echo "source=$srckey"; } |
	    sha256sum | cut -c1-12)
BUILD=$CACHE/build
cur=$(cat "$BUILD/.kite-key" 2>/dev/null || true)
if [ -d "$BUILD" ] && [ "$cur" != "$buildkey" ]; then
	if [ -n "$cur" ]; then
		rm -rf "$CACHE/build-$cur"
		mv "$BUILD" "$CACHE/build-$cur"
		touch "$CACHE/build-$cur"
	else
		rm -rf "$BUILD"
	fi
fi
if [ ! -d "$BUILD" ]; then
	if [ -d "$CACHE/build-$buildkey" ]; then
		mv "$CACHE/build-$buildkey" "$BUILD"
	else
		# shellcheck disable=SC2012 # our own build-<hex> names
		seed=$(ls -1dt "$CACHE"/build-*/ 2>/dev/null | while read -r d; do
			if [ "$(cat "$d/.kite-source" 2>/dev/null)" = "$srckey" ]; then
				echo "${d%/}"
				break
			fi
		done || true)
		rm -rf "$BUILD.kite-tmp"
		if [ -n "$seed" ]; then
			echo "kunit.sh: new configuration $buildkey; starting from $seed" >&2
			cp -a --reflink=auto "$seed" "$BUILD.kite-tmp"
		else
			mkdir -p "$BUILD.kite-tmp"
		fi
		mv "$BUILD.kite-tmp" "$BUILD"
	fi
fi
echo "$buildkey" > "$BUILD/.kite-key"
echo "$srckey" > "$BUILD/.kite-source"

# Keep the $KEEP most recently used parked builds.
# shellcheck disable=SC2012 # our own build-<hex> names
ls -1dt "$CACHE"/build-*/ 2>/dev/null | tail -n +$((KEEP + 1)) | while read -r d; do
	rm -rf "${d%/}"
done || true

# --- 4. build and run ---------------------------------------------------------
# kunit.py runs "qemu-system-x86_64" from PATH: ours, which has the device.
export PATH="$REPO/out:$PATH"
if [ ! -x "$REPO/out/qemu-system-x86_64" ]; then
	die "out/qemu-system-x86_64 not found (scripts/build-qemu.sh builds it)"
fi

# A kernel with kmemleak boots our machine (kunit/qemu_x86_64.py), which
# runs the leak check's /init from an initramfs after the suites instead of
# stopping: kunit/leakcheck-init.c, built here (static, so the initramfs
# holds one file).
qemu_config=()
qemu_args=$QEMU_ARGS
if grep -q '^CONFIG_DEBUG_KMEMLEAK=y' "$KUNITCONFIG"; then
	lc=$REPO/out/kunit/leakcheck
	rm -rf "$lc"
	mkdir -p "$lc/root"
	gcc -static -O2 -Wall -Wextra -Werror -o "$lc/root/init" \
		"$REPO/kunit/leakcheck-init.c" ||
		die "could not build kunit/leakcheck-init.c"
	(cd "$lc/root" && echo init | cpio -o -H newc --quiet -R 0:0) \
		> "$lc/initramfs.cpio" || die "could not pack the leak check's initramfs"
	qemu_config=(--qemu_config="$QEMU_CONFIG")
	qemu_args="$qemu_args -initrd $lc/initramfs.cpio"
fi

rm -f "$JSON" "$CONSOLE"
start=$(date +%s)
set +e
(
	cd "$SRC"
	nice -n 10 python3 tools/testing/kunit/kunit.py run \
		--arch=x86_64 \
		"${qemu_config[@]}" \
		--kunitconfig="$KUNITCONFIG" \
		--build_dir="$BUILD" \
		--jobs="$JOBS" \
		--timeout="$TIMEOUT" \
		--json="$JSON" \
		--qemu_args "$qemu_args" \
		"$@"
) > "$LOG" 2>&1 < /dev/null
rc=$?
set -e
end=$(date +%s)
echo "kunit.sh: kunit.py exit status $rc after $((end - start)) s" >> "$LOG"
[ -f "$BUILD/test.log" ] && cp "$BUILD/test.log" "$CONSOLE"

# --- 5. count ------------------------------------------------------------------
# Suites the drivers define (struct kunit_suite ... .name = "x"): each must run.
# (Not when kunit.py got a filter or other options: they may select fewer.)
expected=""
dirs=""
if [ $# -eq 0 ]; then
	if grep -q '^CONFIG_KITE_KUNIT_TEST=y' "$KUNITCONFIG"; then
		dirs="$dirs $REPO/drivers/net/ethernet/kite"
	fi
	if grep -q '^CONFIG_INFINIBAND_KITE_KUNIT_TEST=y' "$KUNITCONFIG"; then
		dirs="$dirs $REPO/drivers/infiniband/hw/kite"
	fi
fi
if [ -n "$dirs" ]; then
	# shellcheck disable=SC2016,SC2086 # an awk program; $dirs splits
	expected=$(find $dirs -name '*.c' -print0 | xargs -0 -r awk '
		/struct[ \t]+kunit_suite[ \t]+[A-Za-z0-9_]+[ \t]*=/ { insuite = 1 }
		insuite && /\.name[ \t]*=/ {
			if (match($0, /"[^"]+"/)) print substr($0, RSTART + 1, RLENGTH - 2)
			insuite = 0
		}' | sort -u | tr '\n' ' ')
fi

# --- 6. sparse and W=1 on the drivers with their KUnit sources ----------------
# The lint suite builds the modules against Debian's headers, whose
# configuration has no KUnit: the *_test.c files are compiled only here.
# Their objects are removed first so that every file is compiled (W=1
# warns only when compiling) and checked by sparse; the next KUnit build
# recompiles them without W=1.
EXTRA=$LOGDIR/kunit-extra.txt
SPARSE_LOG=$LOGDIR/kunit-sparse.log
: > "$EXTRA"
if [ $# -eq 0 ] && [ -n "$dirs" ] && [ -f "$BUILD/.config" ]; then
	sdirs=""
	for d in $dirs; do
		rel=${d#"$REPO"/}
		sdirs="$sdirs $rel/"
		find "$BUILD/$rel" -name '*.o' -delete 2>/dev/null || true
	done
	set +e
	# shellcheck disable=SC2086 # $sdirs splits into make targets
	(cd "$SRC" && nice -n 10 make ARCH=x86_64 O="$BUILD" -j"$JOBS" C=2 W=1 \
		$sdirs) > "$SPARSE_LOG" 2>&1 < /dev/null
	src=$?
	set -e
	warn=$(grep -E ': (warning|error):' "$SPARSE_LOG" | grep -c -E 'drivers/(net/ethernet|infiniband/hw)/kite/' || true)
	if [ "$src" -eq 0 ] && [ "$warn" -eq 0 ]; then
		echo "ok kunit/sparse+W=1: both drivers with their KUnit sources" > "$EXTRA"
	else
		{
			echo "FAIL kunit/sparse+W=1: $warn warning(s), exit $src (log: $SPARSE_LOG)"
			grep -E ': (warning|error):' "$SPARSE_LOG" | head -n 20 | sed 's/^/    /'
		} > "$EXTRA"
	fi
fi

# --- 7. the debug kernel's checkers and the leak check ---------------------
if [ ${#qemu_config[@]} -gt 0 ]; then
	python3 "$REPO/kunit/debug-reports.py" "$CONSOLE" "$BUILD/.config" >> "$EXTRA"
fi

# The device is attached, so a device suite must not skip all its cases.
# The arguments (a selection) are named when nothing ran.
python3 "$REPO/kunit/kunit-summary.py" "$JSON" "$LOG" "$rc" "$expected" \
	"${KITE_KUNIT_DEVICE_SUITES-kite_device kite_verbs kite_datapath}" "$*" \
	"$EXTRA"
