# SPDX-License-Identifier: GPL-2.0
# Guest "a" of the storage groups (tests/vm/run.sh storage, storage-rxe):
# NVMe over RDMA and NFS over RDMA between two guests joined by three
# links (vm.sh --link a,b --virtio a,b --xlink a=kite,b=virtio-net-pci, as
# make bench):
#   kite  kite NIC kite0 on a and b          198.18.0.x  2001:db8::x
#   rxe   rxe0 on virtio-net on a and b      198.18.1.x  2001:db8:1::x
#   mix   kite NIC kite1 on a, rxe1 on b     198.18.2.x  2001:db8:2::x
# Pairings (STOR_NVME, each over IPv4 and IPv6, STOR_FAMS):
#   kite      Kite host (a) + Kite target (b)
#   kite-rxe  Kite host (a, kite1) + rxe target (b, rxe1)
#   rxe-kite  rxe host (b, rxe1, driven through b's agent) + Kite target (a)
#   rxe       rxe host (a) + rxe target (b): the baseline (storage-rxe)
# each: nvme discover, connect, fio verify (256 MiB of 4k random writes
# read back, crc32c), 4k random reads, disconnect. STOR_FAULT: the
# pairing whose link goes down for 10 s during a verify job (host hook
# storage.hook). STOR_NFS: NFS 4.2 over RDMA, client a, server b
# (kite: Kite<->Kite; kite-rxe: Kite client, rxe server; rxe). Then
# every module unloads and the kernel log must be clean.
. /kite/lib.sh
. /kite/rdma-lib.sh
. /kite/storage-lib.sh
RUN_TIMEOUT=120
B=198.18.0.2	# b's agent: its kite netdev (a plain NIC, whatever RDMA can do)
# kinds: a list (spaces or commas); "none" for none.
kinds() { [ "$1" = none ] || echo "$1" | tr , ' '; }
NVME_KINDS=$(kinds "${STOR_NVME:-kite,kite-rxe,rxe-kite}")
NFS_KINDS=$(kinds "${STOR_NFS:-kite,kite-rxe}")
FAULT_KINDS=$(kinds "${STOR_FAULT:-kite}")
FAMS=$(kinds "${STOR_FAMS:-v4,v6}")
count() { echo $#; }
n=$((3 + 1 + 1 + $(count $NVME_KINDS) * $(count $FAMS) * NVME_HOST_RESULTS +
	$(count $FAULT_KINDS) * NVME_FAULT_RESULTS + $(count $NFS_KINDS) * NFS_CLIENT_RESULTS + 5))
plan $n
host_listen

# addr KIND v4|v6 GUEST: GUEST's address on KIND's link.
addr() {
	local net=0 six=
	case $1 in rxe) net=1 six=1 ;; mix | kite-rxe | rxe-kite) net=2 six=2 ;; esac
	local i=1
	[ "$3" = b ] && i=2
	if [ "$2" = v6 ]; then echo "2001:db8:${six:+$six:}:$i"; else echo "198.18.$net.$i"; fi
}

# up NAME KIND TAG MAC: one device (rdma_up_mac) with its IPv4 and IPv6
# addresses, one result.
up() {
	local n=$1 kind=$2 tag=$3 mac=$4
	if rdma_up_mac "$kind" "$(addr "$tag" v4 a)" "$mac" "$tag" >/tmp/up.log 2>&1 &&
		$IP -6 addr add "$(addr "$tag" v6 a)/64" dev "$NETDEV" nodad; then
		ok "$n"
		grep '^info:' /tmp/up.log
	else
		fail "$n" "$(cat /tmp/up.log)"
	fi
}
up kite-up kite kite "${KITE_MAC_kite0:-}"
up rxe-up rxe rxe "${KITE_MAC_virtio0:-}"
up mix-up kite mix "${KITE_MAC_kite1:-}"

# a's own target, for the rxe host on b (rxe-kite), on its mix link.
NQN_A=$(stor_nqn a) NQN_B=$(stor_nqn b)
if out=$(nvmet_setup "$NQN_A" 2>&1 && nvmet_port 1 "$(addr mix v4 a)" ipv4 "$NQN_A" 2>&1 &&
	nvmet_port 2 "$(addr mix v6 a)" ipv6 "$NQN_A" 2>&1); then
	ok nvmet-setup
else
	fail nvmet-setup "$out"
fi
# b has set up its target and NFS server (its own results) when its agent
# answers and /tmp/storage.ready exists.
ans=
if wait_until 120 sh -c "echo | $NC -N $B $AGENT_PORT" &&
	ans=$(agent_call $B 150 "SH - i=0; while [ ! -f /tmp/storage.ready ] && [ \$i -lt 600 ]; do usleep 200000; i=\$((i + 1)); done; [ \"\$(cat /tmp/storage.ready)\" = 0 ]"); then
	case $ans in
	"RC 0"*) ok peer-ready ;;
	*) fail peer-ready "b's target and NFS server: $ans" ;;
	esac
else
	fail peer-ready "no answer from b's agent"
fi

# on_b NAME SECS FUNCTION ARGS...: run a storage-lib.sh function on b
# through its agent; its result lines become ours.
on_b() {
	local secs=$1 out
	shift
	out=$(agent_call $B "$secs" "SH - . /kite/lib.sh; . /kite/rdma-lib.sh; . /kite/storage-lib.sh; $*")
	echo "$out" | sed 1d
	failures=$((failures + $(echo "$out" | grep -c '^FAIL ')))
	case $out in "RC "*) ;; *) echo "info: no answer from b's agent for '$*'" ;; esac
}

for kind in $NVME_KINDS; do
	for f in $FAMS; do
		n=nvme-$kind-$f
		mb=$STOR_VERIFY_OTHER_MB
		[ "$kind-$f" = kite-v4 ] && mb=$STOR_VERIFY_MB
		t0=$(date +%s)
		case $kind in
		rxe-kite)
			on_b $((STOR_FIO_SECS * 2 + 300)) nvme_host_suite "$n" "$(addr "$kind" "$f" a)" "$NQN_A" "$mb"
			;;
		*) nvme_host_suite "$n" "$(addr "$kind" "$f" b)" "$NQN_B" "$mb" ;;
		esac
		echo "info: $n took $(($(date +%s) - t0)) s"
	done
done

# The fault: a's link of that pairing (QEMU netdev n0: kite0, n1: virtio0).
for kind in $FAULT_KINDS; do
	nd=n0
	[ "$kind" = rxe ] && nd=n1
	t0=$(date +%s)
	nvme_fault_suite "nvme-fault-$kind" "$(addr "$kind" v4 b)" "$NQN_B" $nd
	echo "info: nvme-fault-$kind took $(($(date +%s) - t0)) s"
done

for kind in $NFS_KINDS; do
	t0=$(date +%s)
	nfs_client_suite "nfs-$kind" "$(addr "$kind" v4 b)" $B
	echo "info: nfs-$kind took $(($(date +%s) - t0)) s"
done

# The end: b tears down and checks itself once told; then a.
ans=$(agent_call $B 30 "SH - touch /tmp/agent.quit")
case $ans in "RC 0"*) ok peer-quit ;; *) fail peer-quit "b's agent: ${ans:-no answer}" ;; esac
check nvmet-teardown nvmet_teardown
check host-unload stor_host_unload
check rdma-unload rdma_unload
stor_dmesg_check dmesg-clean
host_call end
finish
