#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Kite VM integration tests. Boots guests with scripts/vm.sh in a
# few groups, so that one boot runs many checks:
#   pair   two guests a/b linked by a socket netdev: device and sysfs, GID
#          table, ping, 8 MiB TCP + sha256, link down/up (host hook), 20
#          load/unload cycles and leak checks (pair-a.sh, pair-b.sh, pair.hook);
#          rdma-core with the kite provider: ibv_devices, ibv_devinfo, the
#          verbs test program kite-verbs.c and the raw uverbs bad-udata test
#          kite-uverbs-fuzz.c (both built into the image); 3 GiB guests
#   fault  three unlinked guests: x-fault-opcode=1 (QUERY_DEVICE fails),
#          x-fault-hang-opcode=1 (device stops answering), and a whose
#          device goes away under a process holding verbs objects and a
#          pingpong: a fatal error (x-fatal, recovery by reset), rmmod,
#          PCI hot-unplug and plug (fault-recover.sh, fault-recover.hook)
#   rdma   the RC data path over Kite (rdma-a.sh, rdma-b.sh, rdma-lib.sh,
#          rdma.hook, kite-rc.c): between two guests and in one guest
#          (loopback), ibv_rc_pingpong -c, perftest with all sizes, kite-rc
#          func and bulk, bulk with 5% of RoCE frames dropped
#          (x-wire-drop-ppm); between the two guests kite-rc mw (memory
#          windows, rereg_mr), kite-rc ex and ibv_rc_pingpong -N (the
#          extended verbs), UCX 1.13 ud_verbs (ucx_info, ucx_perftest
#          am_lat, am_bw: rdma-ucx.sh)
#   interop a Kite guest and a Soft-RoCE guest (rxe on virtio-net) on one
#          link: ibv_rc_pingpong -c both ways, IPv4 at path MTU 1024 and
#          4096, IPv6, and -N (ibv_wr_*) (interop.sh)
#   rxe    (not by default) the same checks over Soft-RoCE on virtio-net
#          NICs: the baseline that shows the checks themselves are right
#   storage NVMe over RDMA (nvmet-rdma, nvme-rdma, fio verify) Kite<->Kite,
#          Kite host + rxe target, rxe host + Kite target, IPv4 and IPv6;
#          a link outage during a verify job; NFS 4.2 over RDMA (storage-*.sh)
#   storage-rxe (not by default) the same over rxe<->rxe
#
#   pair-6.12  the pair group in guests of the 6.12 kernel line (their own
#          kernel, modules and build of kite.ko and kite_ib.ko), then
#          Kite<->Kite and Kite<->rxe (6.12's rdma_rxe): ibv_rc_pingpong -c,
#          ib_send_bw, ib_write_bw, ib_read_bw, rping -V (pair-rdma.sh),
#          then a short soak on both links (soak.sh; KITE_SOAK_SHORT_SECS,
#          default 90)
#   soak   (not by default; make soak) the same in guests of the default
#          line with the soak lasting KITE_SOAK_SECS (default 3600): mixed
#          verified traffic Kite<->Kite and Kite<->rxe under 1% loss,
#          duplication and reordering, link flaps, QPs created and
#          destroyed throughout, QEMU RSS and guest slab judged
#
#   tests/vm/run.sh [GROUP...]      (default: pair pair-6.12 fault rdma
#                                   interop storage)
#   tests/vm/run.sh -t GLOB         the groups whose name matches the shell
#                                   glob (rxe too); none is one failure
#
# Each guest script declares how many results it prints (plan N); the
# launcher counts missing ones as failures. Each group is judged like a suite
# of make check (scripts/lib/suite.sh: a missing summary, a non-zero exit
# without a failure, or "0 passed, 0 failed" count as failures).
# Last lines: "# vm parts: retried GROUP N, ...; skipped GROUP N, ..." (the
# groups' retries and skips, "none" without) and "vm: N passed, N failed[,
# N skipped][, N retried]"; exit 1 on any failure.
# Console logs: out/logs/<group>/<guest>.log.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
t=tests/vm
# shellcheck source=scripts/lib/suite.sh
. scripts/lib/suite.sh
SUITE_TMP=$(mktemp -d /tmp/kite-vmrun.XXXXXX) || exit 1
trap 'rm -rf "$SUITE_TMP"' EXIT
trap 'bounded_kill; exit 130' INT
trap 'bounded_kill; exit 143' TERM

# group_NAME: sets cmd (the launcher command) and secs (its own timeout; the
# group as a whole gets 60 s more).
group_pair() {
	secs=420
	# shellcheck disable=SC2054 # "a,b" is one argument
	# 3 GiB guests: guest a registers a 1 GiB MR and 200 256 MiB MRs
	# (vm.py's --mem applies to both guests; TCG allocates lazily).
	cmd=(scripts/vm.sh --test pair --timeout "$secs" --mem 3G --include "$t/lib.sh"
		--link a,b --hook "bash $top/$t/pair.hook"
		"a=$t/pair-a.sh" "b=$t/pair-b.sh")
}

# on_line LINE GROUP: GROUP's command in guests of kernel line LINE
# (scripts/kver.sh --line): its kernel, its modules and its build of
# kite.ko and kite_ib.ko (out/guest/<release>/, made by
# scripts/mkinitramfs.sh). The test (vm.py takes the last --test, and
# allows no '.') is GROUP-LINE with '_' for '.': logs in
# out/logs/pair-6_12/ for pair-6.12.
on_line() {
	local k
	k=$(bash scripts/kver.sh --line "$1") || k=no-$1-kernel
	"group_$2"
	cmd+=(--test "$2-${1//./_}" --kernel "out/guest/$k/vmlinuz" --initrd "out/guest/$k/initramfs.cpio.gz")
}

# pair-6.12 also runs the RDMA checks there (pair-rdma.sh, PAIR_RDMA=1):
# Kite<->Kite on the pair's link, and Kite<->rxe on a second link between
# a virtio-net NIC of a (rxe0) and a second Kite NIC of b.
group_pair-6.12() {
	on_line 6.12 pair
	soak_parts "${KITE_SOAK_SHORT_SECS:-90}"
}

# soak_parts SECS: the pair group's RDMA part (pair-rdma.sh) and a soak of
# SECS seconds (soak.sh) on two links: n0 joins the Kite NICs of a and b,
# the --xlink a virtio-net NIC of a (rxe) and a second Kite NIC of b. The
# hook serves the soak's requests once the pair's link checks are done.
soak_parts() {
	secs=$((secs + 360 + $1 + 300))
	# shellcheck disable=SC2054 # "a=...,b=..." is one argument
	cmd+=(--timeout "$secs" --include "$t/rdma-lib.sh" --include "$t/pair-rdma.sh"
		--include "$t/soak.sh" --xlink a=virtio-net-pci,b=kite --env PAIR_RDMA=1
		--env "SOAK_SECS=$1" --hook "bash $top/$t/pair.hook serve")
}

# (not by default; make soak) the pair group, then its RDMA part and the
# soak for KITE_SOAK_SECS (default 3600) in guests of the default line.
group_soak() {
	group_pair
	cmd+=(--test soak)
	soak_parts "${KITE_SOAK_SECS:-3600}"
}

group_fault() {
	local k m dkms=()
	secs=600
	# The modules the packages suite had DKMS build for the default line
	# (out/dkms/<release>/), which guest a loads last, as /kite/dkms-*.ko.
	k=$(bash scripts/kver.sh) || k=
	for m in kite kite_ib; do
		[ -n "$k" ] && [ -f "out/dkms/$k/$m.ko" ] || { dkms=(); break; }
		cp "out/dkms/$k/$m.ko" "$SUITE_TMP/dkms-$m.ko" || { dkms=(); break; }
		dkms+=(--include "$SUITE_TMP/dkms-$m.ko")
	done
	# QUERY_DEVICE is admin opcode 1 (KITE_CMD_QUERY_DEVICE in kite_hw.h).
	# Guest a (fault-recover.sh): its NIC in a hot-pluggable slot.
	cmd=(scripts/vm.sh --test fault --timeout "$secs" --include "$t/lib.sh"
		--include "$t/rdma-lib.sh" "${dkms[@]}" --no-net status --no-net hang
		--props status=x-fault-opcode=1 --props hang=x-fault-hang-opcode=1
		--hotplug a --hook "bash $top/$t/fault-recover.hook"
		"status=$t/fault-status.sh" "hang=$t/fault-hang.sh" "a=$t/fault-recover.sh")
}

# RC data path, guests a (client) and b (server agent), see
# rdma-a.sh: two guests, then a alone (loopback), each with
# ibv_rc_pingpong -c, perftest (-a), kite-rc func and bulk, and bulk with 5%
# of RoCE frames dropped. rdma: over the Kite NICs (the hook sets
# x-wire-drop-ppm); rxe: the same checks over Soft-RoCE on virtio-net NICs.
group_rdma() {
	secs=${KITE_RDMA_TIMEOUT:-1500}
	# shellcheck disable=SC2054 # "a,b" is one argument
	cmd=(scripts/vm.sh --test rdma --timeout "$secs" --include "$t/lib.sh"
		--include "$t/rdma-lib.sh" --include "$t/rdma-ucx.sh" --include "$t/rdma-mpi.sh" --link a,b --env RDMA_KIND=kite
		--hook "bash $top/$t/rdma.hook" "a=$t/rdma-a.sh" "b=$t/rdma-b.sh")
}

# Interoperation with Soft-RoCE: guest a (Kite) and guest b (rxe on
# virtio-net) on one link, ibv_rc_pingpong -c both ways over IPv4 (path MTU
# 1024 and 4096) and IPv6 GIDs (interop.sh).
group_interop() {
	local f parts=()
	secs=${KITE_INTEROP_TIMEOUT:-1500}
	# Parts of interop.sh kept in their own files (interop-PART.sh).
	for f in "$t"/interop-*.sh; do
		[ -f "$f" ] && parts+=(--include "$f")
	done
	# shellcheck disable=SC2054 # "a,b" is one argument
	cmd=(scripts/vm.sh --test interop --timeout "$secs" --include "$t/lib.sh"
		--include "$t/rdma-lib.sh" "${parts[@]}" --link a,b --nic-of b=virtio-net-pci
		--env "INTEROP_PARTS=$(echo "${KITE_INTEROP_PARTS:-all}" | tr ' ' ,)"
		--hook "bash $top/$t/interop.hook" "a=$t/interop.sh" "b=$t/interop.sh")
}

group_rxe() {
	secs=${KITE_RDMA_TIMEOUT:-1500}
	# shellcheck disable=SC2054 # "a,b" is one argument
	cmd=(scripts/vm.sh --test rxe --timeout "$secs" --include "$t/lib.sh"
		--include "$t/rdma-lib.sh" --include "$t/rdma-ucx.sh" --include "$t/rdma-mpi.sh" --link a,b --virtio a,b --env RDMA_KIND=rxe
		"a=$t/rdma-a.sh" "b=$t/rdma-b.sh")
}

# Storage over RDMA (storage-a.sh, storage-b.sh, storage-lib.sh,
# storage.hook), two guests booting the storage image (nvme-cli, fio, the
# NFS tools) joined by three links as in make bench: NVMe over RDMA
# (nvmet-rdma target, nvme-rdma host, fio verify) Kite<->Kite, Kite host
# with an rxe target and rxe host with a Kite target, over IPv4 and IPv6;
# a 10 s link outage during a verify job on Kite<->Kite; NFS 4.2 over RDMA
# Kite<->Kite and Kite client with an rxe server. storage-rxe: the same
# checks over rxe<->rxe, the baseline. 2 GiB guests: each holds a RAM
# disk namespace of 288 MiB besides the 41 MB image.
# KITE_STORAGE_VERIFY_MB: MiB each NVMe verify job writes (default 256).
storage_cmd() {
	local name=$1
	shift
	# shellcheck disable=SC2054 # "a,b" is one argument
	cmd=(scripts/vm.sh --test "$name" --timeout "$secs" --mem 2G
		--initrd out/guest/initramfs-storage.cpio.gz --include "$t/lib.sh"
		--include "$t/rdma-lib.sh" --include "$t/storage-lib.sh"
		--link a,b --virtio a,b --xlink a=kite,b=virtio-net-pci
		--env "STOR_VERIFY_MB=${KITE_STORAGE_VERIFY_MB:-256}" "$@"
		--hook "bash $top/$t/storage.hook" "a=$t/storage-a.sh" "b=$t/storage-b.sh")
}

group_storage() {
	secs=${KITE_STORAGE_TIMEOUT:-2400}
	storage_cmd storage
}

group_storage-rxe() {
	secs=${KITE_STORAGE_TIMEOUT:-2400}
	storage_cmd storage-rxe --env STOR_NVME=rxe --env STOR_NFS=rxe --env STOR_FAULT=rxe
}

pattern=
if [ "${1:-}" = -t ]; then
	pattern=${2-}
	shift 2 || exit 2
fi
groups=("$@")
if [ -n "$pattern" ]; then
	groups=()	# alphabetical order
	for g in $(declare -F | sed -n 's/^declare -f group_//p'); do
		results_match "$pattern" "$g" && groups+=("$g")
	done
	if [ ${#groups[@]} -eq 0 ]; then
		R_PASS=0 R_FAIL=0 R_SKIP=0
		results_end vm "$pattern"
		exit 1
	fi
fi
[ ${#groups[@]} -gt 0 ] || groups=(pair pair-6.12 fault rdma interop storage)

pass=0 fail=0 skip=0 retry=0 g_retry= g_skip=
# The guest image must match out/kite.ko (a no-op when it does).
if ! scripts/mkinitramfs.sh; then
	echo "FAIL vm/image: scripts/mkinitramfs.sh failed (is out/kite.ko built? run 'make all')"
	results_line vm 0 1
	exit 1
fi
for g in "${groups[@]}"; do
	if ! declare -F "group_$g" >/dev/null; then
		echo "FAIL vm/$g: no such group"
		fail=$((fail + 1))
		continue
	fi
	"group_$g"
	# + 60 s for the launcher, + the time it may wait for another run of
	# the same group (scripts/vm.py, KITE_VM_LOCK_WAIT).
	run_suite "$g" $((secs + 60 + ${KITE_VM_LOCK_WAIT:-600})) "${cmd[@]}"
	[ "$S_FAIL" -eq 0 ] || echo "# group $g: logs in out/logs/$g/"
	pass=$((pass + S_PASS)) fail=$((fail + S_FAIL)) skip=$((skip + S_SKIP))
	retry=$((retry + S_RETRY))
	[ "$S_RETRY" -eq 0 ] || g_retry="${g_retry:+$g_retry, }$g $S_RETRY"
	[ "$S_SKIP" -eq 0 ] || g_skip="${g_skip:+$g_skip, }$g $S_SKIP"
	echo "# $S_NOTE"
done

echo "# vm parts: retried ${g_retry:-none}; skipped ${g_skip:-none}"
R_PASS=$pass R_FAIL=$fail R_SKIP=$skip R_RETRY=$retry
results_end vm "$pattern"
