#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the guest image used by every VM test:
#   out/guest/vmlinuz            Debian's kernel (/boot/vmlinuz-K, K from scripts/kver.sh)
#   out/guest/initramfs.cpio.gz  busybox userland, iproute2 (ip, rdma, bridge, devlink),
#                                ethtool, netcat, the RDMA core modules,
#                                out/kite.ko and out/kite_ib.ko (loaded on
#                                the auxiliary device's uevent by mdev, as
#                                udev would), rdma-core from out/rdma-core
#                                (libibverbs with its providers, kite among
#                                them, librdmacm, ibv_devices, ibv_devinfo,
#                                ibv_rc_pingpong, ibv_srq_pingpong,
#                                ibv_ud_pingpong, and
#                                librdmacm's rping, ucmatose, udaddy,
#                                mckey),
#                                perftest 25.01 from out/perftest
#                                (ib_{send,write,read,atomic}_bw,
#                                ib_{send,write,read}_lat in /usr/bin),
#                                built against that libibverbs and
#                                librdmacm (its -R mode, IPv4 and IPv6),
#                                tc (netem), the test programs
#                                kite-verbs (tests/vm/kite-verbs*.c),
#                                kite-rc (kite-rc*.c), kite-ud (kite-ud.c),
#                                built against out/rdma-core, and
#                                kite-uverbs-fuzz (kite-uverbs-fuzz.c),
#                                kite-fatal (kite-fatal.c),
#                                Debian's UCX 1.13 (libucx0: libucp, libuct,
#                                libucs, libucm and the transport modules
#                                in ucx/; ucx-utils: ucx_info,
#                                ucx_perftest), on that libibverbs, Open
#                                MPI 4.1 (mpirun, orted; openmpi-bin) with
#                                kite-mpi (tests/vm/kite-mpi.c) and
#                                dropbear as its launcher, an ldd
#                                script (the loader's --list), and
#                                an /init that runs /test.sh
#   out/guest/initramfs-storage.cpio.gz  the same plus nvme-cli, fio, the
#                                NFS server and client tools and the NVMe
#                                over Fabrics and NFS modules (the storage
#                                VM group, make bench)
#   out/guest/<release>/vmlinuz, out/guest/<release>/initramfs.cpio.gz
#                                the base image for each other kernel line
#                                (scripts/kver.sh --lines: 6.12): its
#                                kernel, its modules and out/<release>/*.ko
#                                with the same userland (no storage image)
# The kernel's own modules are copied uncompressed (busybox's modprobe
# cannot read the .ko.xz of Debian's 6.12 packages).
#
# The per-run test script is not in this image: scripts/vm.sh appends a small
# second cpio archive holding /test.sh (the kernel unpacks concatenated
# archives in order). /init prints "KITE-TEST-EXIT <rc>" and powers off.
#
# Options:
#   --no-kite   build without out/kite.ko and out/kite_ib.ko (to try the
#               image before the drivers exist); by default a missing one is
#               an error.
#   --no-rdma-core  build without out/rdma-core (scripts/build-rdma-core.sh)
#               and out/perftest (scripts/build-perftest.sh); by default a
#               missing out/rdma-core or out/perftest is an error.
#   --force     rebuild even if the inputs have not changed.
# The build is skipped when a hash of all inputs matches the previous build.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/out/guest
kite_kos=("$top/out/kite.ko" "$top/out/kite_ib.ko")
want_kite=1
rc=$top/out/rdma-core
pt=$top/out/perftest
want_rc=1
force=0
for a in "$@"; do
	case $a in
	--no-kite) want_kite=0 ;;
	--no-rdma-core) want_rc=0 ;;
	--force) force=1 ;;
	*) echo "usage: $0 [--no-kite] [--no-rdma-core] [--force]" >&2; exit 2 ;;
	esac
done

# One build at a time (several people and test runs share out/guest): the
# second waits for the first, then usually finds the image up to date.
mkdir -p "$out"
exec 9>"$out/.lock"
flock -w 600 9 || { echo "mkinitramfs: $out/.lock busy for 10 min" >&2; exit 1; }

# The guest kernels are Debian's packages, never the host's running kernel.
# scripts/kver.sh decides which (the same ones kite.ko is built against):
# kver is the default line's release, other_kvers the other lines'.
kver=$(bash "$top/scripts/kver.sh") ||
	{ echo "mkinitramfs: no 6.1.0-N-amd64 kernel with image, modules and headers (run scripts/install-deps.sh)" >&2; exit 1; }
vmlinuz=/boot/vmlinuz-$kver
[ -r "$vmlinuz" ] || { echo "mkinitramfs: $vmlinuz missing" >&2; exit 1; }
other_kvers=()
for line in $(bash "$top/scripts/kver.sh" --lines | tail -n +2); do
	k=$(bash "$top/scripts/kver.sh" --line "$line") ||
		{ echo "mkinitramfs: no $line kernel with image, modules and headers (run scripts/install-deps.sh)" >&2; exit 1; }
	[ -r "/boot/vmlinuz-$k" ] || { echo "mkinitramfs: /boot/vmlinuz-$k missing" >&2; exit 1; }
	for ko in "${kite_kos[@]##*/}"; do
		if [ "$want_kite" = 1 ] && [ ! -f "$top/out/$k/$ko" ]; then
			echo "mkinitramfs: $top/out/$k/$ko missing (run 'make module' first, or pass --no-kite)" >&2
			exit 1
		fi
	done
	other_kvers+=("$k")
done
for ko in "${kite_kos[@]}"; do
	if [ "$want_kite" = 1 ] && [ ! -f "$ko" ]; then
		echo "mkinitramfs: $ko missing (run 'make module' first, or pass --no-kite)" >&2
		exit 1
	fi
done
[ "$want_kite" = 1 ] || kite_kos=()
if [ "$want_rc" = 1 ] && [ ! -f "$rc/.hash" ]; then
	echo "mkinitramfs: $rc missing (run 'make rdma-core' first, or pass --no-rdma-core)" >&2
	exit 1
fi
if [ "$want_rc" = 1 ] && [ ! -f "$pt/.hash" ]; then
	echo "mkinitramfs: $pt missing (run 'make perftest' first, or pass --no-rdma-core)" >&2
	exit 1
fi
[ "$want_rc" = 1 ] || rc='' pt=''
rclib=${rc:+$rc/usr/lib/x86_64-linux-gnu}
# rdma-core tools for the guest, and the test program built against it.
# rping, ucmatose, udaddy and mckey are librdmacm's examples (rdma_cm over
# RC, UD and UD multicast).
rc_tools=(ibv_devices ibv_devinfo ibv_rc_pingpong ibv_srq_pingpong ibv_ud_pingpong rping ucmatose udaddy mckey)
# The test programs' sources; their headers (kite-test.h, kite-rc.h,
# kite-verbs.h) are included from the same directory.
vm_src=$top/tests/vm
verbs_test=("$vm_src"/kite-verbs*.c)
rc_test=("$vm_src"/kite-rc*.c)
ud_test=$vm_src/kite-ud.c
# perftest 25.01 (scripts/build-perftest.sh), built against out/rdma-core;
# installed as /usr/bin/ib_* (copy_host_deps resolves rdma-core's libraries
# in out/rdma-core, the others, e.g. libpci, from the host).
perftest=(ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw ib_send_lat ib_write_lat ib_read_lat)
fuzz_test=$vm_src/kite-uverbs-fuzz.c
fatal_test=$vm_src/kite-fatal.c
# Debian's UCX (scripts/install-deps.sh installs it on the host): its tools,
# and its transport modules, which libuct dlopens from ucx/ beside itself.
ucx_bins=(/usr/bin/ucx_info /usr/bin/ucx_perftest)
ucx_mods=(/usr/lib/x86_64-linux-gnu/ucx/libuct_ib.so.0 /usr/lib/x86_64-linux-gnu/ucx/libuct_rdmacm.so.0
	/usr/lib/x86_64-linux-gnu/ucx/libuct_cma.so.0)
ucx_pkgs=(libucx0 ucx-utils libnuma1 libgomp1)
# Debian's Open MPI 4.1 (openmpi-bin, built with UCX) for the MPI test
# program (tests/vm/kite-mpi.c, built with its mpicc): mpirun (orterun),
# orted, its components and PMIx's, which they dlopen, and the help texts
# their errors print. Components for hardware or libraries the guests have
# not (OFI, PSM, openib, which Debian's openmpi-mca-params.conf turns off
# anyway), ROMIO, OpenSHMEM and treematch stay out. dropbear (sshd and its
# client dbclient) is mpirun's launcher between the guests; its keys are
# made in the guest at test time (tests/vm/rdma-mpi.sh).
mpi_bins=(/usr/bin/orterun /usr/bin/orted /usr/sbin/dropbear /usr/bin/dbclient /usr/bin/dropbearkey)
mpi_test=$vm_src/kite-mpi.c
ompi_mca=/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
ompi_skip=('*ofi*' '*psm*' '*openib*' '*romio*' '*treematch*' '*spml*' '*sshmem*' '*memheap*'
	'*scoll*' '*atomic_*')
pmix_dir=/usr/lib/x86_64-linux-gnu/pmix2
mpi_pkgs=(openmpi-bin libopenmpi3 libopenmpi-dev openmpi-common libpmix2 libhwloc15 libevent-core-2.1-7 dropbear-bin)

# Host binaries copied into the guest with their libraries. iproute2's ip is
# installed as /usr/bin/ip; scripts must call it by that path because busybox
# sh prefers its own (different) ip applet.
bins=(/usr/bin/ip /usr/bin/rdma /usr/sbin/bridge /usr/sbin/tc /usr/sbin/devlink /usr/sbin/ethtool /bin/nc.openbsd)
# Kernel modules wanted besides kite's own dependencies (later issues use
# rdma_rxe for Soft-RoCE comparisons; it needs crc32_generic; virtio_net lets
# the launcher be tried without the kite device: vm.sh --nic virtio-net-pci,
# and carries Soft-RoCE next to kite: vm.sh --virtio; sch_netem lets a test
# drop frames on a netdev with tc).
mods=(ib_core ib_uverbs rdma_ucm rdma_rxe crc32_generic virtio_pci virtio_net sch_netem)
# The storage image (initramfs-storage.cpio.gz, below): Debian's nvme-cli,
# fio, the NFS server (rpc.nfsd, rpc.mountd, exportfs) and client
# (mount.nfs), and the NVMe over Fabrics (host and target, RAM disks for
# namespaces) and NFS over RDMA modules.
storage_bins=(/usr/sbin/nvme /usr/bin/fio /usr/sbin/rpc.nfsd /usr/sbin/rpc.mountd
	/usr/sbin/exportfs /sbin/mount.nfs)
storage_mods=(nvme_rdma nvme_fabrics nvmet nvmet_rdma brd null_blk configfs
	rpcrdma nfsd nfsv4 nfs sunrpc)
storage_pkgs=(nvme-cli libnvme1 fio nfs-kernel-server nfs-common libtirpc3)

# --- input hash: skip the build when nothing changed ----------------------
inputs_hash() {
	{
		echo "kver=$kver other=${other_kvers[*]}"
		sha256sum "$0" "$vmlinuz" /bin/busybox
		[ ${#kite_kos[@]} -eq 0 ] || sha256sum "${kite_kos[@]}"
		for k in "${other_kvers[@]}"; do
			sha256sum "/boot/vmlinuz-$k"
			[ ${#kite_kos[@]} -eq 0 ] || (cd "$top/out/$k" && sha256sum "${kite_kos[@]##*/}")
			dpkg-query -W -f='${Package} ${Version}\n' "linux-image-$k" 2>/dev/null
		done
		for b in "${bins[@]}"; do readlink -f "$b"; done | xargs sha256sum
		dpkg-query -W -f='${Package} ${Version}\n' libc6 iproute2 ethtool netcat-openbsd busybox-static \
			"linux-image-$kver" 2>/dev/null
		echo "mods=${mods[*]}"
		echo "storage=${storage_bins[*]} ${storage_mods[*]}"
		dpkg-query -W -f='${Package} ${Version}\n' "${storage_pkgs[@]}" 2>/dev/null
		if [ -n "$rc" ]; then
			echo "rdma-core=$(cat "$rc/.hash") tools=${rc_tools[*]} perftest=${perftest[*]}"
			echo "perftest-build=$(cat "$pt/.hash")"
			for t in "${perftest[@]}"; do echo "$pt/usr/bin/$t"; done | xargs sha256sum
			dpkg-query -W -f='${Package} ${Version}\n' libpci3 2>/dev/null
			echo "ucx=${ucx_bins[*]} ${ucx_mods[*]}"
			dpkg-query -W -f='${Package} ${Version}\n' "${ucx_pkgs[@]}" 2>/dev/null
			echo "mpi=${mpi_bins[*]} $ompi_mca ${ompi_skip[*]} $pmix_dir"
			dpkg-query -W -f='${Package} ${Version}\n' "${mpi_pkgs[@]}" 2>/dev/null
			# Every source and header of the test programs.
			sha256sum "$vm_src"/*.[ch] "$top/include/kite/kite_hw.h" "$top/qemu/kite_limits.h" \
				"$top/include/uapi/rdma/kite-abi.h"
			dpkg-query -W -f='${Package} ${Version}\n' gcc libnl-3-200 libnl-route-3-200 linux-libc-dev 2>/dev/null
		fi
	} | sha256sum | cut -c1-16
}
hash=$(inputs_hash)
have_others() {
	local k
	for k in "${other_kvers[@]}"; do
		[ -f "$out/$k/initramfs.cpio.gz" ] && [ -f "$out/$k/vmlinuz" ] || return 1
	done
}
if [ "$force" = 0 ] && [ -f "$out/initramfs.cpio.gz" ] && [ -f "$out/vmlinuz" ] && have_others &&
	{ [ -z "$rc" ] || [ -f "$out/initramfs-storage.cpio.gz" ]; } &&
	[ "$(cat "$out/.hash" 2>/dev/null)" = "$hash" ]; then
	exit 0
fi

stage=$(mktemp -d /tmp/kite-initramfs.XXXXXX)
trap 'rm -rf "$stage" ${tmp:+"$tmp"}' EXIT

# Merged-/usr layout, as on Debian 12, so library paths from ldd resolve.
mkdir -p "$stage"/usr/{bin,sbin,lib,lib64} "$stage"/{dev,proc,sys,tmp,root,etc,run,mnt}
ln -s usr/bin "$stage/bin"
ln -s usr/sbin "$stage/sbin"
ln -s usr/lib "$stage/lib"
ln -s usr/lib64 "$stage/lib64"
mknod -m 600 "$stage/dev/console" c 5 1
mknod -m 666 "$stage/dev/null" c 1 3

# copy_file SRC: copy SRC to the same path inside the image.
copy_file() {
	install -D -m "$(stat -c %a "$1")" "$1" "$stage$1"
}

# copy_bin SRC [DEST]: copy a binary and every library it needs.
copy_bin() {
	local src=$1 dst=${2:-$1} lib
	install -D -m 755 "$(readlink -f "$src")" "$stage$dst"
	for lib in $(ldd "$src" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }'); do
		[ -e "$stage$lib" ] || install -D -m 755 "$(readlink -f "$lib")" "$stage$lib"
	done
}

for b in "${bins[@]}"; do
	copy_bin "$b"
done
ln -sf nc.openbsd "$stage/usr/bin/nc"
# glibc dlopens libgcc_s at run time (pthread_cancel, backtraces); ldd misses it.
copy_file /lib/x86_64-linux-gnu/libgcc_s.so.1
# iproute2 reads its tables from here (rt_tables etc.); harmless if absent.
[ -d /usr/share/iproute2 ] && mkdir -p "$stage/usr/share" && cp -a /usr/share/iproute2 "$stage/usr/share/"

# ldd for the guest: glibc's ldd is a bash script; the loader lists the same.
cat >"$stage/usr/bin/ldd" <<'EOF'
#!/bin/sh
# ldd FILE...: the shared libraries FILE loads (the dynamic loader's --list).
rc=0
for f in "$@"; do
	[ $# -gt 1 ] && echo "$f:"
	/lib64/ld-linux-x86-64.so.2 --list "$f" || rc=1
done
exit $rc
EOF
chmod 755 "$stage/usr/bin/ldd"

# Busybox for everything else; never shadow a real binary copied above.
install -m 755 /bin/busybox "$stage/usr/bin/busybox"
for applet in $(/bin/busybox --list); do
	[ -e "$stage/usr/bin/$applet" ] || [ -e "$stage/usr/sbin/$applet" ] ||
		ln -s busybox "$stage/usr/bin/$applet"
done

# --- rdma-core (scripts/build-rdma-core.sh) ----------------------------------
# copy_host_deps FILE: the host libraries FILE needs; rdma-core's own come
# from out/rdma-core as a whole below.
copy_host_deps() {
	local lib out
	out=$(LD_LIBRARY_PATH=$rclib ldd "$1" 2>&1) || true
	if echo "$out" | grep -q 'not found'; then
		echo "mkinitramfs: $1: $(echo "$out" | grep 'not found')" >&2
		exit 1
	fi
	for lib in $(echo "$out" | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }'); do
		case $lib in "$rc"/*) continue ;; esac
		[ -e "$stage$lib" ] || install -D -m 755 "$(readlink -f "$lib")" "$stage$lib"
	done
}
if [ -n "$rc" ]; then
	# Every rdma-core library (some providers link their own lib*.so.1),
	# the providers and their list: libibverbs loads what the list names.
	mkdir -p "$stage/usr/lib/x86_64-linux-gnu"
	cp -a "$rclib"/lib*.so.* "$rclib/libibverbs" "$stage/usr/lib/x86_64-linux-gnu/"
	cp -a "$rc/etc/libibverbs.d" "$stage/etc/"
	for f in "$stage"/usr/lib/x86_64-linux-gnu/libibverbs/*.so "$stage"/usr/lib/x86_64-linux-gnu/lib*.so.*; do
		copy_host_deps "$f"
	done
	for t in "${rc_tools[@]}"; do
		install -D -m 755 "$rc/usr/bin/$t" "$stage/usr/bin/$t"
		copy_host_deps "$stage/usr/bin/$t"
	done
	cc -O2 -Wall -Wextra -Werror -I"$top/include" -I"$top/qemu" -I"$rc/usr/include" \
		-o "$stage/usr/bin/kite-verbs" "${verbs_test[@]}" \
		-L"$rclib" -Wl,-rpath-link,"$rclib" -libverbs
	copy_host_deps "$stage/usr/bin/kite-verbs"
	# RC data path test (tests/vm/kite-rc*.c): plain libibverbs.
	cc -O2 -Wall -Wextra -Werror -I"$rc/usr/include" \
		-o "$stage/usr/bin/kite-rc" "${rc_test[@]}" \
		-L"$rclib" -Wl,-rpath-link,"$rclib" -libverbs
	copy_host_deps "$stage/usr/bin/kite-rc"
	# UD checks (tests/vm/kite-ud.c): plain libibverbs (and kite_hw.h).
	cc -O2 -Wall -Wextra -Werror -I"$top/include" -I"$rc/usr/include" \
		-o "$stage/usr/bin/kite-ud" "$ud_test" \
		-L"$rclib" -Wl,-rpath-link,"$rclib" -libverbs
	copy_host_deps "$stage/usr/bin/kite-ud"
	# A process holding verbs objects while its device goes away
	# (tests/vm/kite-fatal.c): plain libibverbs.
	cc -O2 -Wall -Wextra -Werror -I"$rc/usr/include" \
		-o "$stage/usr/bin/kite-fatal" "$fatal_test" \
		-L"$rclib" -Wl,-rpath-link,"$rclib" -libverbs
	copy_host_deps "$stage/usr/bin/kite-fatal"
	for t in "${perftest[@]}"; do
		[ -x "$pt/usr/bin/$t" ] || { echo "mkinitramfs: $pt/usr/bin/$t missing (run 'make perftest')" >&2; exit 1; }
		install -D -m 755 "$pt/usr/bin/$t" "$stage/usr/bin/$t"
		copy_host_deps "$stage/usr/bin/$t"
	done
	# Raw uverbs commands with bad udata (<rdma/ib_user_verbs.h> of the
	# host's linux-libc-dev, the udata layouts of kite-abi.h).
	cc -O2 -Wall -Wextra -Werror -I"$top/include" \
		-o "$stage/usr/bin/kite-uverbs-fuzz" "$fuzz_test"
	copy_host_deps "$stage/usr/bin/kite-uverbs-fuzz"
	# UCX on our libibverbs (copy_host_deps takes rdma-core's libraries
	# from out/rdma-core, UCX's own and libnuma, libgomp from the host).
	for b in "${ucx_bins[@]}" "${ucx_mods[@]}"; do
		[ -e "$b" ] || { echo "mkinitramfs: $b missing (run scripts/install-deps.sh)" >&2; exit 1; }
		install -D -m 755 "$(readlink -f "$b")" "$stage$b"
		copy_host_deps "$b"
	done
	# Open MPI and dropbear (mpi_bins above), on that UCX.
	for b in "${mpi_bins[@]}" "$ompi_mca"/mca_*.so "$pmix_dir"/lib/pmix/*.so; do
		for skip_pat in "${ompi_skip[@]}"; do
			# shellcheck disable=SC2053 # $skip_pat is a pattern
			[[ ${b##*/} == $skip_pat ]] && continue 2
		done
		[ -e "$b" ] || { echo "mkinitramfs: $b missing (run scripts/install-deps.sh)" >&2; exit 1; }
		install -D -m 755 "$(readlink -f "$b")" "$stage$b"
		copy_host_deps "$b"
	done
	ln -sf orterun "$stage/usr/bin/mpirun"
	mkdir -p "$stage/usr/share" "$stage$pmix_dir"
	cp -a /usr/share/openmpi "$stage/usr/share/"
	cp -a "$pmix_dir/share" "$stage$pmix_dir/"
	copy_file /etc/openmpi/openmpi-mca-params.conf
	mpicc -O2 -Wall -Wextra -Werror -o "$stage/usr/bin/kite-mpi" "$mpi_test"
	copy_host_deps "$stage/usr/bin/kite-mpi"
fi

# --- kernel modules ---------------------------------------------------------
need=("${mods[@]}")
for ko in "${kite_kos[@]}"; do
	IFS=, read -ra deps <<<"$(/sbin/modinfo -F depends "$ko")"
	for d in "${deps[@]}"; do
		# kite_ib depends on kite, which comes from out/, not the kernel.
		case " ${kite_kos[*]##*/} " in *" $d.ko "*) continue ;; esac
		need+=("$d")
	done
done
# install_mods KVER MODULE...: copy each module of kernel KVER with its
# full dependency closure (modprobe --show-depends resolves it),
# uncompressed.
install_mods() {
	local k=$1 m ko
	shift
	for m in "$@"; do
		/sbin/modprobe -S "$k" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
	done | sort -u | while read -r ko; do
		mkdir -p "$stage${ko%/*}"
		case $ko in
		*.ko.xz) xz -dc "$ko" >"$stage${ko%.xz}" ;;
		*.ko.zst) zstd -qdc "$ko" >"$stage${ko%.zst}" ;;
		*) install -m 644 "$ko" "$stage$ko" ;;
		esac
	done
}
# stage_modules KVER KODIR: the stage's /lib/modules holds kernel KVER's
# modules (need above) and KODIR's kite.ko and kite_ib.ko, and nothing else.
stage_modules() {
	local k=$1 kodir=$2 mdir=/lib/modules/$1 ko f
	rm -rf "$stage/usr/lib/modules"
	install_mods "$k" "${need[@]}"
	for f in modules.order modules.builtin modules.builtin.modinfo; do
		[ -f "$mdir/$f" ] && install -D -m 644 "$mdir/$f" "$stage$mdir/$f"
	done
	for ko in "${kite_kos[@]##*/}"; do
		install -D -m 644 "$kodir/$ko" "$stage$mdir/extra/$ko"
		strip --strip-debug "$stage$mdir/extra/$ko"	# as Debian ships modules
	done
	/sbin/depmod -b "$stage" "$k"
	for ko in "${kite_kos[@]##*/}"; do
		if ! grep -q "^extra/$ko:" "$stage$mdir/modules.dep"; then
			echo "mkinitramfs: depmod did not register extra/$ko for $k" >&2
			exit 1
		fi
	done
	# The RDMA driver loads from the core's auxiliary device (kite.rdma.N).
	if [ ${#kite_kos[@]} -gt 0 ] &&
	   ! grep -q '^alias auxiliary:kite\.rdma kite_ib$' "$stage$mdir/modules.alias"; then
		echo "mkinitramfs: depmod did not register the alias auxiliary:kite.rdma of kite_ib for $k" >&2
		exit 1
	fi
}
stage_modules "$kver" "$top/out"

# mdev -d (started by /init) does udev's job for auxiliary devices: it loads
# the driver named by a new device's MODALIAS, so that "modprobe kite" brings
# up kite_ib as it does on a system with udev. Device nodes come from
# devtmpfs: "!" (and the catch-all last rule) keep mdev from making any.
mkdir -p "$stage/etc"
cat >"$stage/etc/mdev.conf" <<'EOF'
$MODALIAS=auxiliary:.* 0:0 0600 ! @modprobe "$MODALIAS"
.* 0:0 0600 !
EOF

# --- /init ------------------------------------------------------------------
cat >"$stage/init" <<'EOF'
#!/bin/busybox sh
# Kite guest init: set up the basics, run /test.sh, report, power off.
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
/bin/busybox mount -t debugfs debugfs /sys/kernel/debug
/bin/busybox mount -t tracefs tracefs /sys/kernel/tracing
/bin/busybox mount -t tmpfs tmpfs /tmp
# POSIX shared memory (shm_open; UCX's posix transport looks for it).
/bin/busybox mkdir -p /dev/shm
/bin/busybox mount -t tmpfs tmpfs /dev/shm
exec </dev/console >/dev/console 2>&1
export PATH=/usr/sbin:/usr/bin HOME=/root
hostname "${KITE_VM:-kite}"
/usr/bin/ip link set lo up
# Driver autoloading on uevents (see /etc/mdev.conf).
mdev -d
# Kernel messages on the console could split the test's result lines: keep
# them off it (only emergencies, e.g. a panic, still print) while the test
# runs, and show the kernel log afterwards, each line prefixed "dmesg: ".
dmesg -n 1
echo "KITE-INIT $(uname -r)"
rc=127
if [ -f /test.sh ]; then
	cd /root
	sh /test.sh
	rc=$?
else
	echo "KITE-INIT: no /test.sh in the initramfs"
fi
dmesg | tail -n 200 | sed 's/^/dmesg: /'
echo "KITE-TEST-EXIT $rc"
sync
poweroff -f
EOF
chmod 755 "$stage/init"
echo "kite" >"$stage/etc/hostname"
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$stage/etc/passwd"
printf 'root:x:0:\n' >"$stage/etc/group"

# write_image NAME: the stage as out/guest/NAME.
write_image() {
	tmp=$(mktemp "$out/initramfs.XXXXXX")
	(cd "$stage" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0) |
		gzip -6 >"$tmp"
	chmod 644 "$tmp"
	mv "$tmp" "$out/$1"
	tmp=
}
write_image initramfs.cpio.gz

# --- the other kernel lines -----------------------------------------------------
# The same userland with another kernel's modules and its build of Kite's.
for k in "${other_kvers[@]}"; do
	mkdir -p "$out/$k"
	stage_modules "$k" "$top/out/$k"
	write_image "$k/initramfs.cpio.gz"
	cp "/boot/vmlinuz-$k" "$out/$k/vmlinuz"
	echo "mkinitramfs: $out/$k/initramfs.cpio.gz ($(du -h "$out/$k/initramfs.cpio.gz" | cut -f1), kernel $k)"
done
[ ${#other_kvers[@]} -eq 0 ] || stage_modules "$kver" "$top/out"

# --- storage image ------------------------------------------------------------
# The base image plus the storage tools and modules (storage_bins,
# storage_mods above), for the storage VM group and make bench's NVMe rows
# only: fio alone needs about 80 MB of libraries (ceph's, glusterfs', ICU),
# which every other guest would have to unpack into its RAM. Needs
# rdma-core (fio links libibverbs): copy_host_deps takes it from there.
rm -f "$out/initramfs-storage.cpio.gz"
if [ -n "$rc" ]; then
	for b in "${storage_bins[@]}"; do
		[ -x "$b" ] || { echo "mkinitramfs: $b missing (run scripts/install-deps.sh)" >&2; exit 1; }
		install -D -m 755 "$(readlink -f "$b")" "$stage$b"
		copy_host_deps "$b"
	done
	ln -sf mount.nfs "$stage/sbin/mount.nfs4"
	# What the NFS tools read or write: TI-RPC's transports, the mount
	# table, nfsd's state (v4recovery: the legacy client tracker, no
	# nfsdcld daemon needed) and exports; nvme-cli's host NQN and ID are
	# made by each guest (nvme gen-hostnqn), never copied from this host.
	copy_file /etc/netconfig
	ln -sf /proc/self/mounts "$stage/etc/mtab"
	mkdir -p "$stage/var/lib/nfs/v4recovery" "$stage/var/lib/nfs/rpc_pipefs" "$stage/etc/nvme"
	: >"$stage/etc/exports"
	install_mods "$kver" "${storage_mods[@]}"
	/sbin/depmod -b "$stage" "$kver"
	write_image initramfs-storage.cpio.gz
fi
cp "$vmlinuz" "$out/vmlinuz"
echo "$kver" >"$out/kver"
echo "$hash" >"$out/.hash"
echo "mkinitramfs: $out/initramfs.cpio.gz ($(du -h "$out/initramfs.cpio.gz" | cut -f1), kernel $kver${kite_kos[0]:+, with kite.ko and kite_ib.ko}${rc:+, with rdma-core})"
[ -z "$rc" ] || echo "mkinitramfs: $out/initramfs-storage.cpio.gz ($(du -h "$out/initramfs-storage.cpio.gz" | cut -f1), with nvme-cli, fio and the NFS tools)"
