#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The "packages" suite of make check (Documentation/kite/testing.rst), on
# the host, as root; two parts:
#   dkms      `make packages` builds out/deb/kite-dkms_<version>_all.deb;
#             dpkg installs it on this host, which must build and install
#             kite.ko and kite_ib.ko with DKMS for the kernel of every line
#             (scripts/kver.sh --lines: 6.1, 6.12; each has headers here):
#             `dkms status` says installed, modinfo finds both modules under
#             updates/dkms with that kernel's vermagic; the sources under
#             /usr/src/kite-<version> are the tree's, those out/*.ko are
#             built from (the modules carry no srcversion to compare: they
#             set no MODULE_VERSION); copies of them go to
#             out/dkms/<release>/ (the vm suite's fault group boots a guest
#             on them); dpkg --purge must remove
#             the modules, /var/lib/dkms/kite and /usr/src/kite-<version>
#   install   `make install` / `make uninstall` into a scratch DESTDIR (this
#             host has no Kite NIC): the modules of the default line
#             (KREL=<6.1 release>), the provider and kite.driver from
#             out/rdma-core, depmod's modules.dep; uninstall leaves none of
#             them. Installing for the running kernel needs out/<uname -r>/
#             modules: when the running kernel has none (no headers to build
#             them, e.g. a non-Debian kernel) that check is skipped with the
#             reason, and `make install` must refuse.
# A kite-dkms package already installed is purged first: the suite owns it
# on a test host. Runs under a lock (/run/lock/kite-packages.lock): two
# runs cannot share dpkg and the DKMS tree.
# Last line "packages: N passed, N failed[, N skipped]"; exit 1 on a failure.
#
#   tests/packages/run.sh [-t GLOB]   only the parts whose name matches
#                                     GLOB's first component (dkms, install)
# Logs: out/logs/packages/.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
# shellcheck source=scripts/lib/results.sh
. scripts/lib/results.sh

glob='*'
while [ $# -gt 0 ]; do
	case $1 in
	-t) [ $# -ge 2 ] || { echo "usage: $0 [-t GLOB]" >&2; exit 2; }
		glob=$2; shift ;;
	*) echo "usage: $0 [-t GLOB]" >&2; exit 2 ;;
	esac
	shift
done
LOGDIR=out/logs/packages
mkdir -p "$LOGDIR"
RES=$(mktemp /tmp/kite-packages.XXXXXX) || exit 1
SCRATCH=$(mktemp -d /tmp/kite-destdir.XXXXXX) || exit 1
trap 'rm -rf "$RES" "$SCRATCH"' EXIT

ok() { echo "ok $*" | tee -a "$RES"; }
fail() { echo "FAIL $1: $2" | tee -a "$RES"; }
skip() { echo "skip $1: $2" | tee -a "$RES"; }
# check NAME DETAIL CMD...: ok NAME when CMD succeeds, else FAIL NAME: DETAIL.
check() {
	local name=$1 detail=$2
	shift 2
	if "$@"; then ok "$name"; else fail "$name" "$detail"; fi
}
# selected PART: GLOB's first component matches PART.
selected() {
	# shellcheck disable=SC2053 # GLOB is a pattern
	[[ $1 == ${glob%%/*} ]]
}

MODS=(kite kite_ib)
ver=$(bash scripts/version.sh) || { fail version "scripts/version.sh failed"; ver=unknown; }
mapfile -t lines < <(bash scripts/kver.sh --lines)
declare -A rel=()
for l in "${lines[@]}"; do
	rel[$l]=$(bash scripts/kver.sh --line "$l") || rel[$l]=
done

# pkg_installed: kite-dkms is installed (or half-installed) on the host.
pkg_installed() {
	dpkg-query -W -f='${Status}' kite-dkms 2>/dev/null | grep -qv 'not-installed'
}

# same_sources: the sources DKMS builds from, /usr/src/kite-<version>/, are
# the working tree's files (those out/*.ko are built from), each of them;
# and there is a driver source for each one the tree has.
same_sources() {
	local src=/usr/src/kite-$ver f n=0 why=
	while IFS= read -r f; do
		[ -f "$f" ] || continue
		f=${f#"$src"/}
		[ "$f" = dkms.conf ] && continue
		cmp -s "$src/$f" "$f" || { why="${why:+$why; }$src/$f differs from $f"; continue; }
		n=$((n + 1))
	done < <(dpkg -L kite-dkms | grep "^$src/")
	while IFS= read -r f; do
		[ -f "$src/$f" ] || why="${why:+$why; }$f is not in $src"
	done < <(git ls-files Kbuild 'drivers/*.[ch]' 'include/*.h')
	[ "$n" -gt 0 ] || why="${why:+$why; }no source files under $src"
	[ -z "$why" ] && return 0
	echo "$why" >"$SCRATCH/why"
	return 1
}

# dkms_built K: DKMS built and installed kite for K, as modinfo sees it.
dkms_built() {
	local k=$1 m f why=
	dkms status -m kite -v "$ver" -k "$k" 2>/dev/null | grep -q ": installed$" ||
		why="dkms status -m kite -v $ver -k $k: '$(dkms status -m kite -k "$k" 2>&1 | tr '\n' ' ')'"
	for m in "${MODS[@]}"; do
		[ -z "$why" ] || break
		f=$(modinfo -k "$k" -n "$m" 2>/dev/null) || { why="modinfo -k $k finds no $m"; break; }
		case $f in
		"/lib/modules/$k/updates/dkms/$m.ko"*) ;;
		*) why="modinfo -k $k $m is $f, not under updates/dkms"; break ;;
		esac
		[[ $(modinfo -F vermagic "$f") == "$k "* ]] ||
			{ why="$f: vermagic '$(modinfo -F vermagic "$f")' is not $k's"; break; }
	done
	[ -z "$why" ] && return 0
	echo "$why" >"$SCRATCH/why"
	return 1
}

# dkms_keep K: copy the modules DKMS built for K to out/dkms/K/ (the vm
# suite's fault group loads them in a guest), uncompressed.
dkms_keep() {
	local k=$1 m f d=out/dkms/$1
	mkdir -p "$d" || return 1
	for m in "${MODS[@]}"; do
		f=$(modinfo -k "$k" -n "$m") || return 1
		case $f in
		*.ko) cp "$f" "$d/$m.ko" ;;
		*.ko.xz) xz -dc "$f" >"$d/$m.ko" ;;
		*.ko.zst) zstd -qdc "$f" >"$d/$m.ko" ;;
		*.ko.gz) gzip -dc "$f" >"$d/$m.ko" ;;
		*) false ;;
		esac || { echo "could not copy $f to $d/$m.ko" >"$SCRATCH/why"; return 1; }
	done
}

# dkms_gone K: nothing of kite is left for K.
dkms_gone() {
	local k=$1 left
	left=$(compgen -G "/lib/modules/$k/updates/dkms/kite*.ko*" || true)
	[ -z "$left" ] || { echo "left behind: $left" >"$SCRATCH/why"; return 1; }
	if modinfo -k "$k" -n kite >/dev/null 2>&1; then
		echo "modinfo -k $k still finds kite: $(modinfo -k "$k" -n kite)" >"$SCRATCH/why"
		return 1
	fi
}

# deb_contents_ok DEB: DEB holds the sources for DKMS under
# /usr/src/kite-<version>, with the version in dkms.conf.
deb_contents_ok() {
	local c
	c=$(dpkg-deb -c "$1") &&
		grep -q " ./usr/src/kite-$ver/dkms.conf$" <<<"$c" &&
		grep -q " ./usr/src/kite-$ver/Kbuild$" <<<"$c" &&
		dpkg-deb --fsys-tarfile "$1" | tar -xO "./usr/src/kite-$ver/dkms.conf" |
		grep -qx "PACKAGE_VERSION=\"$ver\""
}

part_dkms() {
	local deb=out/deb/kite-dkms_${ver}_all.deb l k t0 why
	t0=$(date +%s)
	if ! nice -n 10 make --no-print-directory packages >"$LOGDIR/make-packages.log" 2>&1 || [ ! -f "$deb" ]; then
		fail dkms/deb "make packages did not build $deb (log: $LOGDIR/make-packages.log)"
		return
	fi
	ok "dkms/deb: $deb ($(($(date +%s) - t0))s)"
	rm -rf out/dkms
	check dkms/deb-contents "$deb lacks usr/src/kite-$ver/{dkms.conf,Kbuild} or dkms.conf's PACKAGE_VERSION is not $ver" \
		deb_contents_ok "$deb"
	if pkg_installed; then
		echo "# kite-dkms $(dpkg-query -W -f='${Version}' kite-dkms) is installed: purging it first"
		dpkg --purge kite-dkms >"$LOGDIR/dpkg-purge-old.log" 2>&1 ||
			{ fail dkms/install "could not purge the installed kite-dkms (log: $LOGDIR/dpkg-purge-old.log)"; return; }
	fi
	t0=$(date +%s)
	if ! nice -n 10 dpkg -i "$deb" >"$LOGDIR/dpkg-install.log" 2>&1; then
		fail dkms/install "dpkg -i $deb failed (log: $LOGDIR/dpkg-install.log)"
	else
		ok "dkms/install: dpkg -i $deb ($(($(date +%s) - t0))s)"
	fi
	if same_sources; then
		ok "dkms/sources: /usr/src/kite-$ver holds the tree's Kbuild, drivers and headers"
	else
		fail dkms/sources "$(cat "$SCRATCH/why")"
	fi
	for l in "${lines[@]}"; do
		k=${rel[$l]}
		if [ -z "$k" ]; then
			fail "dkms/$l/built" "no $l kernel with image, modules and headers (scripts/kver.sh --line $l; run 'make deps')"
			continue
		fi
		if dkms_built "$k"; then
			ok "dkms/$l/built: $(dkms status -m kite -v "$ver" -k "$k" 2>/dev/null | head -n 1)"
			if dkms_keep "$k"; then ok "dkms/$l/kept: out/dkms/$k/"; else
				fail "dkms/$l/kept" "$(cat "$SCRATCH/why" 2>/dev/null)"
			fi
		else
			fail "dkms/$l/built" "$(cat "$SCRATCH/why")"
		fi
	done
	t0=$(date +%s)
	check dkms/remove "dpkg --purge kite-dkms failed (log: $LOGDIR/dpkg-purge.log)" \
		dpkg --purge kite-dkms >"$LOGDIR/dpkg-purge.log" 2>&1
	for l in "${lines[@]}"; do
		k=${rel[$l]}
		[ -n "$k" ] || continue
		if dkms_gone "$k"; then ok "dkms/$l/removed: $k"; else fail "dkms/$l/removed" "$(cat "$SCRATCH/why")"; fi
	done
	why=
	pkg_installed && why="kite-dkms still installed"
	[ -e /var/lib/dkms/kite ] && why="${why:+$why; }/var/lib/dkms/kite is left"
	[ -e "/usr/src/kite-$ver" ] && why="${why:+$why; }/usr/src/kite-$ver is left"
	[ -z "$(dkms status -m kite 2>/dev/null)" ] || why="${why:+$why; }dkms status -m kite: $(dkms status -m kite 2>/dev/null | tr '\n' ' ')"
	if [ -z "$why" ]; then ok dkms/removed-tree; else fail dkms/removed-tree "$why"; fi
}

PROV_DIR=usr/lib/x86_64-linux-gnu/libibverbs
DRIVER=etc/libibverbs.d/kite.driver

# installed_ok DEST K: make install put K's modules, the provider and
# kite.driver into DEST, identical to out/'s, and depmod saw them.
installed_ok() {
	local d=$1 k=$2 m prov why=
	for m in "${MODS[@]}"; do
		cmp -s "out/$k/$m.ko" "$d/lib/modules/$k/updates/kite/$m.ko" ||
			why="${why:+$why; }$d/lib/modules/$k/updates/kite/$m.ko is not out/$k/$m.ko"
	done
	prov=$(compgen -G "out/rdma-core/$PROV_DIR/libkite-rdmav*.so")
	cmp -s "$prov" "$d/$PROV_DIR/${prov##*/}" || why="${why:+$why; }no $d/$PROV_DIR/${prov##*/}"
	cmp -s "out/rdma-core/$DRIVER" "$d/$DRIVER" || why="${why:+$why; }no $d/$DRIVER"
	# kite_ib depends on kite (and on ib_core, which is not in the scratch root).
	grep -q '^updates/kite/kite_ib.ko:.* updates/kite/kite.ko' "$d/lib/modules/$k/modules.dep" 2>/dev/null ||
		why="${why:+$why; }modules.dep has no 'updates/kite/kite_ib.ko: ... updates/kite/kite.ko'"
	[ -z "$why" ] && return 0
	echo "$why" >"$SCRATCH/why"
	return 1
}

# uninstalled_ok DEST K: nothing of Kite is left in DEST.
uninstalled_ok() {
	local d=$1 k=$2 left
	left=$(cd "$d" && find . \( -name 'kite*.ko' -o -name 'libkite-rdmav*.so' -o -name kite.driver -o -path '*/updates/kite' \) | tr '\n' ' ')
	if [ -n "$left" ]; then echo "left in $d: $left" >"$SCRATCH/why"; return 1; fi
	if grep -q kite "$d/lib/modules/$k/modules.dep" 2>/dev/null; then
		echo "$d/lib/modules/$k/modules.dep still lists kite" >"$SCRATCH/why"
		return 1
	fi
}

part_install() {
	local k=${rel[${lines[0]}]} run d
	run=$(uname -r)
	if [ -z "$k" ] || [ ! -f "out/$k/kite.ko" ]; then
		fail install/scratch "no out/${k:-<${lines[0]} release>}/kite.ko (make module)"
	elif ! compgen -G "out/rdma-core/$PROV_DIR/libkite-rdmav*.so" >/dev/null; then
		fail install/scratch "no Kite provider in out/rdma-core (make rdma-core)"
	else
		d=$SCRATCH/root-$k
		if ! make --no-print-directory install DESTDIR="$d" KREL="$k" >"$LOGDIR/install.log" 2>&1; then
			fail install/scratch "make install DESTDIR=$d KREL=$k failed (log: $LOGDIR/install.log)"
		elif installed_ok "$d" "$k"; then
			ok "install/scratch: KREL=$k"
		else
			fail install/scratch "$(cat "$SCRATCH/why")"
		fi
		if ! make --no-print-directory uninstall DESTDIR="$d" KREL="$k" >"$LOGDIR/uninstall.log" 2>&1; then
			fail uninstall/scratch "make uninstall DESTDIR=$d KREL=$k failed (log: $LOGDIR/uninstall.log)"
		elif uninstalled_ok "$d" "$k"; then
			ok "uninstall/scratch: KREL=$k"
		else
			fail uninstall/scratch "$(cat "$SCRATCH/why")"
		fi
	fi
	# The running kernel, the default KREL.
	d=$SCRATCH/root-running
	if [ -f "out/$run/kite.ko" ]; then
		if make --no-print-directory install DESTDIR="$d" >"$LOGDIR/install-running.log" 2>&1 &&
			installed_ok "$d" "$run"; then
			ok "install/running-kernel: $run"
		else
			fail install/running-kernel "make install DESTDIR=$d for $run: $(cat "$SCRATCH/why" 2>/dev/null || echo "failed (log: $LOGDIR/install-running.log)")"
		fi
	else
		skip install/running-kernel "the running kernel $run has no modules in out/$run/ (scripts/kver.sh's lines are ${rel[*]}; $run has $( [ -d "/lib/modules/$run/build" ] && echo "headers: make module KDIR=/lib/modules/$run/build" || echo "no headers here"))"
		if make --no-print-directory install DESTDIR="$d" >"$LOGDIR/install-running.log" 2>&1; then
			fail install/refuses-unbuilt "make install for $run without out/$run/ modules succeeded"
		elif grep -q "no out/$run/kite.ko" "$LOGDIR/install-running.log" && [ ! -e "$d/lib" ]; then
			ok "install/refuses-unbuilt: $run"
		else
			fail install/refuses-unbuilt "make install for $run failed without saying why, or wrote into $d (log: $LOGDIR/install-running.log)"
		fi
	fi
}

exec 9>/run/lock/kite-packages.lock
if ! flock -w 600 9; then
	fail lock "another packages run has held /run/lock/kite-packages.lock for 600s"
	glob=none
fi
ran=0
for part in dkms install; do
	selected "$part" || continue
	echo "== $part"
	"part_$part"
	ran=1
done
[ "$ran" = 1 ] || [ "$glob" = none ] || fail packages "T='$glob' selects no test"

results_count "$RES"
results_line packages "$R_PASS" "$R_FAIL" "$R_SKIP"
[ "$R_FAIL" -eq 0 ]
