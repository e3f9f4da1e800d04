#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build Kite's qemu-system-x86_64 from Debian's QEMU 7.2 source with the kite
# device model (qemu/, with the RoCEv2 engine in qemu/roce/) added as
# hw/net/kite, and install it as out/qemu-system-x86_64.
#
# Cache layout under ${KITE_CACHE:-/var/cache/kite}:
#   src/                    Debian source package (apt-get source --download-only)
#   qemu/tree-<version>/    unpacked, patched source tree with its build/ dir
#                           (kept, so a changed device file rebuilds incrementally)
#   qemu/bin/<hash>/        finished binaries keyed by a hash of every input
#                           (this script, qemu/* including qemu/roce/*,
#                           patches/qemu/*, kite_hw.h, source version)
#
# KITE_QEMU_FLAVOR=fuzz builds instead, in <tree>/build-fuzz with clang,
# QEMU's libFuzzer binary (qemu-fuzz-x86_64, whose generic-fuzz target
# drives the kite device as a guest would) and a qemu-system-x86_64 under
# ASan and UBSan (the qtest suite's sanitizer run), both into out/qemu-fuzz/
# and cached under their own hash. KITE_QEMU_CACHED_ONLY=1 only installs a
# cached build of the current inputs; without one it removes what out/ holds
# of that flavour (never a binary of older sources) and exits 0.
#
# patches/qemu/*.patch (in name order) change QEMU itself where Kite's links
# need it (the socket netdev both Kite and virtio-net guests use); every file
# they touch is rebuilt from its pristine copy under <tree>/.kite-orig/.
#
# Quiet on success; on failure prints the path of the log.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${KITE_CACHE:-/var/cache/kite}
SRC_DIR=$CACHE/src
QCACHE=$CACHE/qemu
OUT=$REPO/out
# Where the binary goes: out/ unless KITE_QEMU_DEST names another path (to
# try a build before installing it for everyone).
DEST=${KITE_QEMU_DEST:-$OUT/qemu-system-x86_64}
# The Debian release whose QEMU (7.2) we build; plain "qemu" could resolve
# to a newer release's source when several deb-src entries exist.
DEB_RELEASE=bookworm
UPSTREAM_VERSION=7.2
DEVICES=kite
KEEP_BINARIES=6
CONFIGURE_ARGS=(
	--target-list=x86_64-softmmu
	--without-default-features
	--without-default-devices
	--with-devices-x86_64=$DEVICES
	--disable-docs
	--disable-install-blobs
	--enable-tcg
)
FLAVOR=${KITE_QEMU_FLAVOR:-}
case $FLAVOR in
"")
	BUILD_NAME=build
	BINS=(qemu-system-x86_64)
	LOG=$OUT/qemu-build.log
	;;
fuzz)
	CONFIGURE_ARGS+=(--cc=clang --cxx=clang++ --enable-fuzzing --enable-sanitizers)
	BUILD_NAME="build-fuzz"
	BINS=(qemu-system-x86_64 qemu-fuzz-x86_64)
	LOG=$OUT/qemu-fuzz-build.log
	;;
*)
	echo "build-qemu: unknown KITE_QEMU_FLAVOR '$FLAVOR'" >&2
	exit 2
	;;
esac

mkdir -p "$OUT" "$SRC_DIR" "$QCACHE/bin"
# shellcheck source=scripts/lib/install.sh
. "$REPO/scripts/lib/install.sh"

fail() {
	echo "build-qemu: $*; log: $LOG" >&2
	exit 1
}

find_dsc() {
	find "$SRC_DIR" -maxdepth 1 -name "qemu_${UPSTREAM_VERSION}*.dsc" |
		sort -V | tail -n 1
}

# ---- cache key ---------------------------------------------------------------
input_hash() {
	{
		echo "version $version"
		echo "flavor $FLAVOR"
		sha256sum "$REPO/scripts/build-qemu.sh" | cut -d' ' -f1
		sha256sum "$REPO/include/kite/kite_hw.h" | cut -d' ' -f1
		(cd "$REPO/patches/qemu" && find . -type f -name '*.patch' -print0 |
			LC_ALL=C sort -z | xargs -0 -r sha256sum)
		(cd "$REPO/qemu" && find . -type f -print0 | LC_ALL=C sort -z |
			xargs -0 sha256sum)
	} | sha256sum | cut -c1-16
}

# dest_of BIN: where BIN is installed.
dest_of() {
	if [ -z "$FLAVOR" ]; then
		echo "$DEST"
	else
		echo "$OUT/qemu-$FLAVOR/$1"
	fi
}

# install_out: every binary of $cached (a directory) into place.
install_out() {
	local b d
	for b in "${BINS[@]}"; do
		d=$(dest_of "$b")
		mkdir -p "$(dirname "$d")"
		# Renamed into place (install_atomic): a running QEMU keeps its
		# old inode.
		cmp -s "$cached/$b" "$d" ||
			install_atomic "$cached/$b" "$d" ||
			fail "cannot install $d"
	done
}

# cache_hit: the binary for the current inputs is cached; install it.
cache_hit() {
	version=$(basename "$dsc" .dsc)
	version=${version#qemu_}
	hash=$(input_hash)
	cached=$QCACHE/bin/$hash
	local b
	for b in "${BINS[@]}"; do
		[ -x "$cached/$b" ] || return 1
	done
	touch "$QCACHE/bin/$hash"
	install_out
}

# A warm run needs no lock: cached binaries are only ever renamed into place.
dsc=$(find_dsc)
if [ -n "$dsc" ] && cache_hit; then
	exit 0
fi
if [ "${KITE_QEMU_CACHED_ONLY:-0}" = 1 ]; then
	for b in "${BINS[@]}"; do
		rm -f "$(dest_of "$b")"
	done
	echo "build-qemu: no cached ${FLAVOR:-default} build of these sources"
	exit 0
fi

# One build at a time per cache (several people share it).
exec 9> "$QCACHE/lock"
flock -w 1800 9 || fail "cache locked: another build held $QCACHE/lock for 30 min"
: > "$LOG"

# ---- 1. source package ---------------------------------------------------
dsc=$(find_dsc)
if [ -z "$dsc" ]; then
	(cd "$SRC_DIR" && apt-get source --download-only "qemu/$DEB_RELEASE") \
		>> "$LOG" 2>&1 || fail "apt-get source failed"
	dsc=$(find_dsc)
	[ -n "$dsc" ] || fail "no QEMU $UPSTREAM_VERSION source in $SRC_DIR"
fi
# ---- 2. cache check again: another build may have finished while we waited.
if cache_hit; then
	exit 0
fi

# ---- 3. source tree ---------------------------------------------------------
tree=$QCACHE/tree-$version
if [ ! -f "$tree/.kite-unpacked" ]; then
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	dpkg-source --no-check -x "$dsc" "$tree.tmp/src" >> "$LOG" 2>&1 ||
		fail "dpkg-source -x failed"
	mv "$tree.tmp/src" "$tree"
	rm -rf "$tree.tmp"
	touch "$tree/.kite-unpacked"
fi

# Idempotent edits of the QEMU tree (files are only rewritten when they
# change: a new mtime on a meson.build makes meson regenerate everything).
# - pc-bios: the dfsg tarball has no edk2 blobs; meson would still unpack them.
if grep -q '^\s*unpack_edk2_blobs = bzip2.found()$' "$tree/meson.build"; then
	sed -i 's/^\(\s*\)unpack_edk2_blobs = bzip2.found()$/\1unpack_edk2_blobs = false/' \
		"$tree/meson.build"
fi
# - trace-events of hw/net/kite.
grep -q "'hw/net/kite'," "$tree/meson.build" ||
	sed -i "s|^\(\s*\)'hw/net',\$|&\n\1'hw/net/kite',|" "$tree/meson.build"
grep -q "'hw/net/kite'," "$tree/meson.build" ||
	fail "cannot add hw/net/kite to trace_events_subdirs"
grep -qx "source kite/Kconfig" "$tree/hw/net/Kconfig" ||
	echo "source kite/Kconfig" >> "$tree/hw/net/Kconfig"
grep -qx "subdir('kite')" "$tree/hw/net/meson.build" ||
	echo "subdir('kite')" >> "$tree/hw/net/meson.build"

# copy_if_changed SRC DST: keeps DST's mtime when the content is the same, so
# ninja only rebuilds what really changed.
copy_if_changed() {
	if ! cmp -s "$1" "$2"; then
		mkdir -p "$(dirname "$2")"
		cp "$1" "$2"
	fi
}

# - patches/qemu/*.patch: each file they name is copied to .kite-orig/ the
#   first time (the tree is pristine then), rebuilt from that copy with all
#   patches applied in order, and installed only when it changed; a file no
#   patch names any more gets its pristine copy back.
orig=$tree/.kite-orig
pwork=$QCACHE/patch.tmp
rm -rf "$pwork"
mkdir -p "$orig" "$pwork"
patches=$(find "$REPO/patches/qemu" -maxdepth 1 -name '*.patch' | LC_ALL=C sort)
pfiles=$(for p in $patches; do
	sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$p"
done | LC_ALL=C sort -u)
for f in $pfiles; do
	case $f in /* | *..*) fail "patch names $f outside the tree" ;; esac
	if [ ! -f "$orig/$f" ]; then
		mkdir -p "$(dirname "$orig/$f")"
		cp "$tree/$f" "$orig/$f" || fail "no $f in the QEMU tree"
	fi
	mkdir -p "$(dirname "$pwork/$f")"
	cp "$orig/$f" "$pwork/$f"
done
for p in $patches; do
	patch -s -p1 -d "$pwork" --no-backup-if-mismatch -r - < "$p" >> "$LOG" 2>&1 ||
		fail "$(basename "$p") does not apply"
done
for f in $pfiles; do
	copy_if_changed "$pwork/$f" "$tree/$f"
done
(cd "$orig" && find . -type f) | while read -r f; do
	f=${f#./}
	printf '%s\n' $pfiles | grep -qxF "$f" && continue
	copy_if_changed "$orig/$f" "$tree/$f"
	rm -f "$orig/$f"
done
rm -rf "$pwork"

# Device sources: qemu/ (and the engine, qemu/roce/) mirrored into
# hw/net/kite/, plus the ABI header.
kdir=$tree/hw/net/kite
mkdir -p "$kdir"
(cd "$REPO/qemu" && find . -type f) | while read -r f; do
	copy_if_changed "$REPO/qemu/$f" "$kdir/$f"
done
copy_if_changed "$REPO/include/kite/kite_hw.h" "$kdir/include/kite/kite_hw.h"
# Drop files that left qemu/.
(cd "$kdir" && find . -type f) | while read -r f; do
	case $f in ./include/kite/kite_hw.h) continue ;; esac
	[ -e "$REPO/qemu/$f" ] || rm -f "$kdir/$f"
done
copy_if_changed "$REPO/qemu/kite-devices.mak" \
	"$tree/configs/devices/x86_64-softmmu/$DEVICES.mak"

# ---- 4. configure (again only when the options changed) ------------------
build=$tree/$BUILD_NAME
cfg_stamp=$(printf '%s\n' "${CONFIGURE_ARGS[@]}" | sha256sum | cut -c1-16)
if [ ! -f "$build/build.ninja" ] ||
   [ "$(cat "$build/.kite-configured" 2>/dev/null)" != "$cfg_stamp" ]; then
	rm -rf "$build"
	mkdir -p "$build"
	(cd "$build" && nice -n 10 ../configure "${CONFIGURE_ARGS[@]}") \
		>> "$LOG" 2>&1 || fail "configure failed"
	echo "$cfg_stamp" > "$build/.kite-configured"
fi

# ---- 5. build ----------------------------------------------------------------
nice -n 10 ninja -C "$build" -j2 "${BINS[@]}" >> "$LOG" 2>&1 ||
	fail "ninja failed"

# ---- 6. store and install ------------------------------------------------
# The hash is recomputed: a binary built while inputs were being edited is
# installed but not stored under a key that claims it was built from them.
if [ "$(input_hash)" != "$hash" ]; then
	cached=$build
	install_out
	exit 0
fi
mkdir -p "$cached"
for b in "${BINS[@]}"; do
	install_atomic "$build/$b" "$cached/$b" || fail "cannot store $cached/$b"
done
install_out
# Keep the most recently used builds only (about 40 MB each; a fuzz build's
# two binaries about 180 MB).
find "$QCACHE/bin" -mindepth 1 -maxdepth 1 -type d -printf '%T@ %p\n' |
	sort -rn | tail -n +$((KEEP_BINARIES + 1)) | cut -d' ' -f2- |
	xargs -r rm -rf
