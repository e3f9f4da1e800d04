#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build-dkms-deb.sh: out/deb/kite-dkms_<version>_all.deb, the DKMS package
# of kite.ko and kite_ib.ko (`make packages`). <version> is
# scripts/version.sh's. The Debian source package is assembled in
# out/deb/build/kite-dkms-<version>/: packaging/dkms/debian/ as debian/
# (with a changelog entry for <version>), the top-level Kbuild and
# dkms.conf, and the drivers' and headers' sources as they are in the
# working tree (the files `make module` builds out/*.ko from: *.[ch],
# Makefile and Kconfig, never kbuild outputs), then built with
# dpkg-buildpackage (dh with dh_dkms, from Debian's debhelper and dh-dkms).
# Prints the .deb's path as its last line.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
SRC_DIRS=(drivers/net/ethernet/kite drivers/infiniband/hw/kite include)

for t in dpkg-buildpackage dh dh_dkms; do
	command -v "$t" >/dev/null || { echo "build-dkms-deb: $t missing (run 'make deps')" >&2; exit 1; }
done
ver=$(bash scripts/version.sh)
work=out/deb/build
pkg=$work/kite-dkms-$ver
rm -rf "$work"
mkdir -p "$pkg"
cp Kbuild dkms.conf "$pkg/"
find "${SRC_DIRS[@]}" -type f \( -name '*.[ch]' -o -name Makefile -o -name Kconfig \) \
	! -name '*.mod.c' -print0 | cpio -0 -pdm --quiet "$pkg"
cp -r packaging/dkms/debian "$pkg/debian"
# A reproducible date: the commit's, else VERSION's mtime.
when=$(git log -1 --format=%cD 2>/dev/null) || when=$(date -R -r VERSION)
cat >"$pkg/debian/changelog" <<EOT
kite-dkms ($ver) unstable; urgency=medium

  * Kite $ver.

 -- Kite developers <kite@localhost>  $when
EOT
log=$work/dpkg-buildpackage.log
if ! (cd "$pkg" && dpkg-buildpackage -b -us -uc) >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	echo "build-dkms-deb: dpkg-buildpackage failed (log: $log)" >&2
	exit 1
fi
deb=kite-dkms_${ver}_all.deb
# dpkg-buildpackage writes beside the source tree.
mv "$work/$deb" "out/deb/$deb"
# Only the current version's package stays.
find out/deb -maxdepth 1 -name 'kite-dkms_*_all.deb' ! -name "$deb" -delete
echo "out/deb/$deb"
