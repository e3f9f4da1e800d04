#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# install.sh install|uninstall: `make install` / `make uninstall` for a host
# with a Kite NIC.
#   install     out/<KREL>/kite.ko and kite_ib.ko (what `make module`
#               built for kernel release KREL) into
#               DESTDIR/lib/modules/KREL/updates/kite/, the rdma-core
#               provider from out/rdma-core (libkite-rdmav*.so into
#               DESTDIR/usr/lib/<multiarch>/libibverbs/, kite.driver into
#               DESTDIR/etc/libibverbs.d/), then depmod for KREL
#   uninstall   removes exactly those files, then depmod again
# KREL defaults to the running kernel (uname -r); DESTDIR (default empty:
# the host itself) installs into a scratch root instead (depmod -b).
# install refuses when out/<KREL>/ has no modules (the modules only load in
# the kernel they were built for: build them with KDIR=/lib/modules/<KREL>/build
# `make module`, or install the DKMS package out/deb/kite-dkms_*_all.deb),
# when out/rdma-core has no Kite provider (`make rdma-core`), and when the
# kite-dkms package's modules are installed for KREL (two kite.ko under
# updates/ would leave it to depmod which one loads).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
usage() { echo "usage: [DESTDIR=DIR] [KREL=RELEASE] $0 install|uninstall" >&2; exit 2; }
[ $# -eq 1 ] || usage
krel=${KREL:-$(uname -r)}
dest=${DESTDIR:-}
MODS=(kite kite_ib)
# out/rdma-core's layout is the host's (scripts/build-rdma-core.sh installs
# it with the Debian paths).
PROV_DIR=usr/lib/x86_64-linux-gnu/libibverbs
DRIVER=etc/libibverbs.d/kite.driver
moddir=$dest/lib/modules/$krel/updates/kite

die() { echo "install: $*" >&2; exit 1; }

run_depmod() {
	# A scratch root has only what was installed into it: depmod it alone.
	if [ -n "$dest" ]; then
		depmod -b "$dest" "$krel"
	else
		depmod "$krel"
	fi
}

case $1 in
install)
	for m in "${MODS[@]}"; do
		[ -f "out/$krel/$m.ko" ] ||
			die "no out/$krel/$m.ko: build it with 'make module KDIR=/lib/modules/$krel/build' (needs that kernel's headers), or install the DKMS package (make packages; dpkg -i out/deb/kite-dkms_*_all.deb)"
	done
	mapfile -t provs < <(compgen -G "out/rdma-core/$PROV_DIR/libkite-rdmav*.so" || true)
	[ ${#provs[@]} -eq 1 ] || die "out/rdma-core has no single $PROV_DIR/libkite-rdmav*.so (run 'make rdma-core')"
	[ -f "out/rdma-core/$DRIVER" ] || die "no out/rdma-core/$DRIVER (run 'make rdma-core')"
	compgen -G "$dest/lib/modules/$krel/updates/dkms/kite.ko*" >/dev/null &&
		die "the kite-dkms package's modules are installed for $krel; remove the package first (dpkg -r kite-dkms)"
	install -d "$moddir" "$dest/$PROV_DIR" "$dest/${DRIVER%/*}"
	for m in "${MODS[@]}"; do
		install -m 0644 "out/$krel/$m.ko" "$moddir/$m.ko"
	done
	install -m 0644 "${provs[0]}" "$dest/$PROV_DIR/"
	install -m 0644 "out/rdma-core/$DRIVER" "$dest/$DRIVER"
	run_depmod
	echo "install: $moddir/{kite,kite_ib}.ko, $dest/$PROV_DIR/${provs[0]##*/}, $dest/$DRIVER; depmod $krel"
	# The provider interface is private to one rdma-core build.
	v=$(dpkg-query -W -f='${Version}' libibverbs1 2>/dev/null || true)
	if [ -z "$dest" ] && [ -n "$v" ] && [[ $v != 56.1* ]]; then
		echo "install: note: the provider is built in rdma-core 56.1, the host's libibverbs1 is $v: not a supported pair (README, \"Using a Kite NIC on a Debian 12 host\")" >&2
	fi
	;;
uninstall)
	for m in "${MODS[@]}"; do
		rm -f "$moddir/$m.ko"
	done
	[ ! -d "$moddir" ] || rmdir "$moddir"
	rm -f "$dest/$PROV_DIR"/libkite-rdmav*.so "$dest/$DRIVER"
	# depmod needs the release's tree; nothing of ours is left without it.
	if [ -d "$dest/lib/modules/$krel" ]; then
		run_depmod
	fi
	echo "uninstall: removed $moddir/{kite,kite_ib}.ko, the Kite provider and $dest/$DRIVER"
	;;
*) usage ;;
esac
