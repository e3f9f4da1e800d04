#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build-modules.sh: kite.ko and kite_ib.ko for every kernel line
# (scripts/kver.sh --lines), from the same sources (`make module`):
#   out/<release>/kite.ko, out/<release>/kite_ib.ko   each line's modules
#   out/kite.ko, out/kite_ib.ko                        the default line's
#                                                      (6.1) as well
# The default line builds in the tree itself (the objects beside the
# sources, as `make -C <kdir> M=$PWD` always did). Another line builds in
# out/build/<release>/, a tree of symbolic links to the sources (Kbuild,
# drivers/, include/): kbuild of these kernels writes an external module's
# objects next to its sources, and one set of objects cannot serve two
# kernels. Both builds are incremental.
#
# KDIR=<kernel build tree> builds against that tree alone, in the tree
# (out/*.ko and out/<its release>/). KITE_JOBS: parallel jobs (default 2).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
KOS=(drivers/net/ethernet/kite/kite.ko drivers/infiniband/hw/kite/kite_ib.ko)
# What a line's tree needs: the top-level Kbuild and the drivers' and
# headers' sources (never their build outputs).
FARM_DIRS=(drivers/net/ethernet/kite drivers/infiniband/hw/kite include)

[ -f Kbuild ] || { echo "module: no top-level Kbuild (driver not present)" >&2; exit 1; }

# copy_kos SRC_TOP DIR: the two modules built under SRC_TOP into DIR
# (unchanged ones are not touched, so their mtime says when they changed).
copy_kos() {
	local ko
	mkdir -p "$2"
	for ko in "${KOS[@]}"; do
		cmp -s "$1/$ko" "$2/${ko##*/}" || cp "$1/$ko" "$2/${ko##*/}"
	done
}

# farm DIR: DIR mirrors the sources as symbolic links; links whose source
# is gone are removed.
farm() {
	local dir=$1 f
	mkdir -p "$dir"
	ln -sfn "$top/Kbuild" "$dir/Kbuild"
	# kbuild's own *.mod.c are outputs: a link to the default line's would
	# let this line's modpost overwrite it in the source tree.
	find "$dir" -name '*.mod.c' -type l -delete
	find "${FARM_DIRS[@]}" -type f \( -name '*.[ch]' -o -name Makefile -o -name Kconfig \) \
		! -name '*.mod.c' |
		while IFS= read -r f; do
			[ -L "$dir/$f" ] && continue
			mkdir -p "$dir/${f%/*}"
			ln -sfn "$top/$f" "$dir/$f"
		done
	find "$dir" -xtype l -delete
}

# build KDIR SRC_TOP: the modules of SRC_TOP against KDIR, KITE_JOBS
# (default 2) compilers at a time.
build() {
	echo "make -C $1 M=$2 -j${KITE_JOBS:-2} modules"
	make -C "$1" M="$2" -j"${KITE_JOBS:-2}" modules
}

if [ -n "${KDIR:-}" ]; then
	rel=$(cat "$KDIR/include/config/kernel.release") ||
		{ echo "module: $KDIR is not a configured kernel build tree" >&2; exit 1; }
	build "$KDIR" "$top"
	copy_kos "$top" out
	copy_kos "$top" "out/$rel"
	echo "module: out/kite.ko out/kite_ib.ko, out/$rel/ (built in $KDIR)"
	exit 0
fi

mapfile -t lines < <(bash scripts/kver.sh --lines)
default=${lines[0]}
for line in "${lines[@]}"; do
	rel=$(bash scripts/kver.sh --line "$line") ||
		{ echo "module: no $line kernel with image, modules and headers (run 'make deps')" >&2; exit 1; }
	kdir=/lib/modules/$rel/build
	if [ "$line" = "$default" ]; then
		src=$top
	else
		src=$top/out/build/$rel
		farm "$src"
	fi
	build "$kdir" "$src"
	copy_kos "$src" "out/$rel"
	if [ "$line" = "$default" ]; then
		copy_kos "$src" out
		echo "module: out/$rel/kite.ko out/$rel/kite_ib.ko, out/kite.ko out/kite_ib.ko (default line)"
	else
		echo "module: out/$rel/kite.ko out/$rel/kite_ib.ko"
	fi
done
