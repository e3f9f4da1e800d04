#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build perftest 25.01 (Debian trixie's source package, 25.01.0+0.80) against
# our rdma-core 56.1 (out/rdma-core, scripts/build-rdma-core.sh) and install
# it with Debian's layout into out/perftest/:
#   out/perftest/usr/bin/ib_{send,write,read,atomic}_{bw,lat}   (stripped)
#   out/perftest/usr/bin/raw_ethernet_*, run_perftest_*         (unused)
#
# Why not Debian 12's perftest package: 4.5+0.17 resolves rdma_cm (-R)
# addresses with getaddrinfo(AF_INET) only, so no IPv6 with -R; 25.01 takes
# --ipv6-addr. Building against out/rdma-core also makes the binaries match
# the libibverbs/librdmacm 56.1 the guests run (bookworm's package was built
# against rdma-core 44). scripts/mkinitramfs.sh puts the ib_* tools into the
# guest image as /usr/bin/ib_*.
#
# patches/perftest/*.patch (in name order) fix perftest bugs the VM tests
# hit: the rdma_cm (-R) server listened only after the client/server sync,
# so a client could be rejected (INVALID_SERVICE_ID), and the client's
# retry after such a reject used freed IDs and a destroyed event channel
# (a segfault in librdmacm); and the CPU clock, calibrated by 220 ms of
# busy-waiting on every call of get_cpu_mhz() (per message size and per
# report), is calibrated once per process. See
# Documentation/kite/testing.rst.
#
# perftest needs libibverbs, librdmacm and libibumad (all from out/rdma-core)
# and libpci (libpci-dev, scripts/install-deps.sh). Its configure also finds
# rdma-core's libmlx5, libefa and libhns there and links them (as Debian's
# build does); the guests carry every rdma-core library. The tarball ships a
# generated configure: no autotools needed.
#
# Cache layout under ${KITE_CACHE:-/var/cache/kite}:
#   src/perftest_25.01.0+0.80.orig.tar.gz  the source
#                                  (apt-get source --tar-only perftest/trixie)
#   perftest/inst/<hash>/          installed trees keyed by a hash of every
#                                  input (this script, the tarball's name,
#                                  rdma-core's installed headers and library
#                                  names, toolchain and libpci-dev versions)
# rdma-core's provider code is not an input: perftest links libibverbs, not
# a provider, so a provider change does not rebuild perftest.
# A warm run copies the cached tree to out/perftest (or does nothing when it
# is already there). Quiet on success; on failure prints the log's path.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${KITE_CACHE:-/var/cache/kite}
SRC_DIR=$CACHE/src
PCACHE=$CACHE/perftest
OUT=$REPO/out
DEST=$OUT/perftest
LOG=$OUT/perftest-build.log
RC=$OUT/rdma-core
RCLIB=$RC/usr/lib/x86_64-linux-gnu
VERSION=25.01.0+0.80
# What its tools print for --version (configure.ac's AC_INIT version).
TOOL_VERSION=6.24
# The Debian release whose perftest we build (the release, not an exact
# Debian revision); the upstream tarball name is checked below.
DEB_RELEASE=trixie
TARBALL=perftest_$VERSION.orig.tar.gz
KEEP_INSTALLS=4
JOBS=${KITE_JOBS:-2}
# The tools the guests run (scripts/mkinitramfs.sh); a build without one
# of them fails.
TOOLS=(ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw ib_send_lat ib_write_lat ib_read_lat)

mkdir -p "$OUT" "$SRC_DIR" "$PCACHE/inst"
# shellcheck source=scripts/lib/install.sh
. "$REPO/scripts/lib/install.sh"

fail() {
	echo "build-perftest: $*; log: $LOG" >&2
	exit 1
}

[ -f "$RC/.hash" ] || {
	echo "build-perftest: $RC missing (run 'make rdma-core' first)" >&2
	exit 1
}

# One build at a time per cache (several people share it).
exec 9>"$PCACHE/lock"
flock -w 1800 9 || fail "cache locked: another build held $PCACHE/lock for 30 min"

# ---- cache key -------------------------------------------------------------
input_hash() {
	{
		echo "perftest $VERSION $DEB_RELEASE"
		sha256sum "$REPO/scripts/build-perftest.sh" | cut -d' ' -f1
		(cd "$REPO/patches/perftest" && find . -type f -name '*.patch' -print0 |
			LC_ALL=C sort -z | xargs -0 -r sha256sum)
		# What perftest compiles and links against: rdma-core's headers
		# and the libraries' names (the .so links name the versions).
		(cd "$RC/usr/include" && find . -type f -print0 | LC_ALL=C sort -z |
			xargs -0 sha256sum)
		(cd "$RCLIB" && for l in lib*.so; do echo "$l -> $(readlink -f "$l" | sed 's|.*/||')"; done)
		dpkg-query -W -f='${Package} ${Version}\n' gcc libc6-dev libpci-dev \
			linux-libc-dev 2>/dev/null
	} | sha256sum | cut -c1-16
}
hash=$(input_hash)
inst=$PCACHE/inst/$hash

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
why=$(fetch_source perftest "$DEB_RELEASE" "$SRC_DIR" "$TARBALL" "$LOG") || fail "$why"

# ---- 2. a fresh tree, configure, build -------------------------------------
# A cold build is rare (the inputs above change seldom) and short: no tree
# is kept between builds.
tree=$PCACHE/build.$$
rm -rf "$PCACHE"/build.* "$inst" "$inst.tmp"
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"
tar -xzf "$SRC_DIR/$TARBALL" -C "$tree" --strip-components=1 >>"$LOG" 2>&1 ||
	fail "cannot unpack $TARBALL"
for p in $(find "$REPO/patches/perftest" -maxdepth 1 -name '*.patch' | LC_ALL=C sort); do
	patch -s -p1 -d "$tree" --no-backup-if-mismatch -r - <"$p" >>"$LOG" 2>&1 ||
		fail "$(basename "$p") does not apply"
done
# rdma-core's headers and libraries from out/rdma-core only (the host has
# no libibverbs-dev; -rpath-link lets the linker follow their own needs).
(cd "$tree" && nice -n 10 ./configure --prefix=/usr \
	CPPFLAGS="-I$RC/usr/include" \
	LDFLAGS="-L$RCLIB -Wl,-rpath-link,$RCLIB") >>"$LOG" 2>&1 ||
	fail "configure failed"
nice -n 10 make -C "$tree" -j "$JOBS" >>"$LOG" 2>&1 || fail "build failed"

# ---- 3. install into the cache, then out/ ----------------------------------
nice -n 10 make -C "$tree" install-strip DESTDIR="$inst.tmp" >>"$LOG" 2>&1 ||
	fail "make install-strip failed"
for t in "${TOOLS[@]}"; do
	[ -x "$inst.tmp/usr/bin/$t" ] || fail "install lacks usr/bin/$t"
done
# The tools must run on out/rdma-core's libraries (every one found) and be
# the version built here.
v=$(LD_LIBRARY_PATH=$RCLIB "$inst.tmp/usr/bin/ib_send_bw" --version 2>&1) || true
echo "ib_send_bw --version: $v" >>"$LOG"
[ "$v" = "Version: $TOOL_VERSION" ] ||
	fail "ib_send_bw --version says '$v', not $TOOL_VERSION"
touch "$inst.tmp/.done"
mv "$inst.tmp" "$inst"
# Keep the newest few installed trees.
ls -1dt "$PCACHE"/inst/*/ 2>/dev/null | tail -n +$((KEEP_INSTALLS + 1)) | xargs -r rm -rf
install_out
echo "build-perftest: built in $(($(date +%s) - start)) s" >>"$LOG"
exit 0
