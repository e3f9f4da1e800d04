#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build rdma-core 56.1 (Debian trixie's source package) with the Kite provider
# (providers/kite) added to its tree the way upstream providers are, and
# install it with Debian's layout into out/rdma-core/:
#   out/rdma-core/usr/lib/x86_64-linux-gnu/   libibverbs, librdmacm, ... and
#                                             libibverbs/lib*-rdmav34.so
#                                             (providers, libkite among them)
#   out/rdma-core/etc/libibverbs.d/*.driver   provider list (kite.driver too)
#   out/rdma-core/usr/bin/                    ibv_devinfo, rping, ...
#   out/rdma-core/usr/include/                infiniband/verbs.h, ...
#   out/rdma-core/selftest/kite-provider-selftest  the provider self-test
#
# The provider's private interface (infiniband/driver.h) is not installed by
# any package, and a provider must come from the same build as libibverbs:
# hence the whole of rdma-core is built here and guests use this build.
#
# Inside the rdma-core tree:
#   providers/kite/              copy of our providers/kite/ plus kite_hw.h
#                                (copied from include/kite/, the one source)
#   kernel-headers/rdma/kite-abi.h  copy of include/uapi/rdma/kite-abi.h,
#                                registered in kernel-headers/CMakeLists.txt
#                                so that DECLARE_DRV_CMD can use it
#   CMakeLists.txt               add_subdirectory(providers/kite)
#
# Cache layout under ${KITE_CACHE:-/var/cache/kite}:
#   src/rdma-core_56.1.orig.tar.gz   the source (apt-get source --tar-only rdma-core/trixie)
#   rdma-core/tree-56.1/             unpacked, patched tree with build/ (kept,
#                                    so a provider change rebuilds incrementally)
#   rdma-core/inst/<hash>/           installed trees keyed by a hash of every
#                                    input (this script, providers/kite/*,
#                                    kite-abi.h, kite_hw.h, version, toolchain)
# Each build also compiles and runs the provider's host self-test
# (providers/kite/selftest/) against the tree; a failure fails the build.
# A warm run copies the cached tree to out/rdma-core (or does nothing when it
# is already there). Quiet on success; on failure prints the log's path.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${KITE_CACHE:-/var/cache/kite}
SRC_DIR=$CACHE/src
RCACHE=$CACHE/rdma-core
OUT=$REPO/out
DEST=$OUT/rdma-core
LOG=$OUT/rdma-core-build.log
VERSION=56.1
# The Debian release whose rdma-core (56.1) we build: the release, not an
# exact Debian revision (a point update replaces it in the archive); the
# upstream tarball name is checked below.
DEB_RELEASE=trixie
TARBALL=rdma-core_$VERSION.orig.tar.gz
TREE=$RCACHE/tree-$VERSION
BUILD=$TREE/build
KEEP_INSTALLS=4
JOBS=${KITE_JOBS:-2}
# Debian's own layout (debian/rules of the package), without the parts the
# guests do not need (man pages, pyverbs, static libraries).
CMAKE_ARGS=(
	-G Ninja
	-DCMAKE_BUILD_TYPE=Release
	-DDISTRO_FLAVOUR=Debian
	-DCMAKE_INSTALL_PREFIX=/usr
	-DCMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu
	-DCMAKE_INSTALL_SYSCONFDIR=/etc
	-DCMAKE_INSTALL_LIBEXECDIR=/usr/lib
	-DCMAKE_INSTALL_SHAREDSTATEDIR=/var/lib
	-DCMAKE_INSTALL_RUNDIR=/run
	-DCMAKE_INSTALL_UDEV_RULESDIR=/lib/udev/rules.d
	-DCMAKE_INSTALL_SYSTEMD_SERVICEDIR=/lib/systemd/system
	-DCMAKE_INSTALL_INITDDIR=/etc/init.d
	-DNO_PYVERBS=1
	-DNO_MAN_PAGES=1
	-DENABLE_STATIC=0
)

mkdir -p "$OUT" "$SRC_DIR" "$RCACHE/inst"
# shellcheck source=scripts/lib/install.sh
. "$REPO/scripts/lib/install.sh"

fail() {
	echo "build-rdma-core: $*; log: $LOG" >&2
	exit 1
}

# One build at a time per cache (several people share it).
exec 9>"$RCACHE/lock"
flock -w 1800 9 || fail "cache locked: another build held $RCACHE/lock for 30 min"

# ---- cache key -------------------------------------------------------------
input_hash() {
	{
		echo "rdma-core $VERSION $DEB_RELEASE"
		sha256sum "$REPO/scripts/build-rdma-core.sh" | cut -d' ' -f1
		sha256sum "$REPO/include/kite/kite_hw.h" | cut -d' ' -f1
		sha256sum "$REPO/include/uapi/rdma/kite-abi.h" | cut -d' ' -f1
		(cd "$REPO/providers/kite" && find . -type f -print0 | LC_ALL=C sort -z |
			xargs -0 sha256sum)
		dpkg-query -W -f='${Package} ${Version}\n' gcc cmake ninja-build libc6-dev \
			libnl-3-dev libnl-route-3-dev libudev-dev linux-libc-dev 2>/dev/null
	} | sha256sum | cut -c1-16
}
hash=$(input_hash)
inst=$RCACHE/inst/$hash

install_out() {
	install_cached "$inst" "$DEST" "$hash" || fail "cannot copy $inst to $DEST"
}

if [ -f "$inst/.done" ]; then
	touch "$inst"
	install_out
	exit 0
fi

: >"$LOG"
start=$(date +%s)

# ---- 1. source -------------------------------------------------------------
why=$(fetch_source rdma-core "$DEB_RELEASE" "$SRC_DIR" "$TARBALL" "$LOG") || fail "$why"

# ---- 2. tree ---------------------------------------------------------------
if [ ! -f "$TREE/.unpacked" ]; then
	rm -rf "$TREE" "$TREE.tmp"
	mkdir -p "$TREE.tmp"
	tar -xzf "$SRC_DIR/$TARBALL" -C "$TREE.tmp" --strip-components=1 >>"$LOG" 2>&1 ||
		fail "cannot unpack $TARBALL"
	touch "$TREE.tmp/.unpacked"
	mv "$TREE.tmp" "$TREE"
fi

# sync_file SRC DST: copy only when different, so that ninja rebuilds only
# what changed.
sync_file() {
	cmp -s "$1" "$2" || install -D -m 644 "$1" "$2"
}

# The provider, its copy of the device ABI, and the uverbs ABI header.
mkdir -p "$TREE/providers/kite"
for f in "$REPO"/providers/kite/*; do
	[ -f "$f" ] && sync_file "$f" "$TREE/providers/kite/${f##*/}"
done
for f in "$TREE"/providers/kite/*; do
	n=${f##*/}
	[ "$n" = kite_hw.h ] || [ -e "$REPO/providers/kite/$n" ] || rm -f "$f"
done
sync_file "$REPO/include/kite/kite_hw.h" "$TREE/providers/kite/kite_hw.h"
sync_file "$REPO/include/uapi/rdma/kite-abi.h" "$TREE/kernel-headers/rdma/kite-abi.h"

# Register them as upstream providers are registered (idempotent).
if ! grep -q '^add_subdirectory(providers/kite)$' "$TREE/CMakeLists.txt"; then
	sed -i 's|^add_subdirectory(providers/irdma)$|&\nadd_subdirectory(providers/kite)|' \
		"$TREE/CMakeLists.txt"
	grep -q '^add_subdirectory(providers/kite)$' "$TREE/CMakeLists.txt" ||
		fail "cannot add providers/kite to CMakeLists.txt"
fi
if ! grep -q 'rdma/kite-abi.h' "$TREE/kernel-headers/CMakeLists.txt"; then
	# Both lists: the installed internal headers and the provider ABIs that
	# make_abi_structs.py turns into kernel-abi/*.h for DECLARE_DRV_CMD.
	sed -i 's|^  rdma/irdma-abi.h$|&\n  rdma/kite-abi.h|' "$TREE/kernel-headers/CMakeLists.txt"
	[ "$(grep -c 'rdma/kite-abi.h' "$TREE/kernel-headers/CMakeLists.txt")" = 2 ] ||
		fail "cannot register kite-abi.h in kernel-headers/CMakeLists.txt"
fi

# ---- 3. configure and build ------------------------------------------------
args="${CMAKE_ARGS[*]}"
if [ ! -f "$BUILD/build.ninja" ] || [ "$(cat "$BUILD/.kite-args" 2>/dev/null)" != "$args" ]; then
	rm -rf "$BUILD"
	mkdir -p "$BUILD"
	(cd "$BUILD" && nice -n 10 cmake "${CMAKE_ARGS[@]}" ..) >>"$LOG" 2>&1 ||
		fail "cmake failed"
	echo "$args" >"$BUILD/.kite-args"
fi
nice -n 10 ninja -C "$BUILD" -j "$JOBS" >>"$LOG" 2>&1 || fail "build failed"
if grep -E '^[^ ]*providers/kite/[^ ]*: (warning|error):' "$LOG" >/dev/null; then
	fail "the kite provider compiles with warnings"
fi

# ---- 3b. the provider's host self-test --------------------------------------
# providers/kite/selftest/ (not copied into the tree, not part of the
# library) drives the fast path in kite_fast.c, the address handles of
# kite_ah.c, the window binding of kite_mw.c, the SRQs of kite_srq.c and
# the extended CQs and QPs of kite_cq_ex.c and kite_qp_ex.c against a fake
# device in memory (it fakes the AH, MW and SRQ commands of libibverbs, so
# it links no libibverbs); built with the provider's
# include paths, warnings as errors and the address/undefined sanitizers.
# A failure fails the build.
SELFTEST=$BUILD/kite-fast-selftest
echo "== provider self-test" >>"$LOG"
nice -n 10 cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-sign-compare \
	-Wno-unused-parameter -Wmissing-prototypes -Wshadow \
	-fsanitize=address,undefined -fno-sanitize-recover=all \
	-I"$BUILD/include" -I"$TREE/providers/kite" \
	"$REPO"/providers/kite/selftest/*.c \
	"$TREE/providers/kite/kite_fast.c" "$TREE/providers/kite/kite_ah.c" \
	"$TREE/providers/kite/kite_mw.c" "$TREE/providers/kite/kite_cq_ex.c" \
	"$TREE/providers/kite/kite_qp_ex.c" "$TREE/providers/kite/kite_srq.c" \
	-lpthread -o "$SELFTEST" >>"$LOG" 2>&1 ||
	fail "cannot build the provider self-test"
"$SELFTEST" >>"$LOG" 2>&1 || fail "the provider self-test failed"

# ---- 4. install into the cache, then out/ ----------------------------------
rm -rf "$inst" "$inst.tmp"
DESTDIR="$inst.tmp" nice -n 10 ninja -C "$BUILD" install >>"$LOG" 2>&1 ||
	fail "ninja install failed"
for f in usr/lib/x86_64-linux-gnu/libibverbs/libkite-rdmav34.so etc/libibverbs.d/kite.driver \
	usr/lib/x86_64-linux-gnu/libibverbs.so.1 usr/bin/ibv_devinfo; do
	[ -e "$inst.tmp/$f" ] || fail "install lacks $f"
done
# make check runs it again as its own suite (scripts/provider-selftest.sh).
mkdir -p "$inst.tmp/selftest" && cp "$SELFTEST" "$inst.tmp/selftest/kite-provider-selftest" ||
	fail "cannot keep the provider self-test"
touch "$inst.tmp/.done"
mv "$inst.tmp" "$inst"
# Keep the newest few installed trees.
ls -1dt "$RCACHE"/inst/*/ 2>/dev/null | tail -n +$((KEEP_INSTALLS + 1)) | xargs -r rm -rf
install_out
echo "build-rdma-core: built in $(($(date +%s) - start)) s" >>"$LOG"
exit 0
