# SPDX-License-Identifier: GPL-2.0
# Guest "b" of the storage groups (see storage-a.sh): Kite on kite0
# (198.18.0.2), rxe0 on the first virtio-net NIC (198.18.1.2), rxe1 on the
# second (198.18.2.2, the link to a's second Kite NIC), IPv6 on each; the
# NVMe target (subsystem storage-b on every address) and the NFS server
# (NFS 4.2, TCP 2049 and RDMA 20049). Serves a through the agent of
# rdma-lib.sh (a also runs the rxe host of rxe-kite here) until a is done,
# then takes everything down and checks its kernel log.
. /kite/lib.sh
. /kite/rdma-lib.sh
. /kite/storage-lib.sh
plan 11
RUN_TIMEOUT=120

# up NAME KIND TAG ADDR ADDR6 MAC [RXENAME]: one device with both addresses.
up() {
	local n=$1 kind=$2 tag=$3 a4=$4 a6=$5 mac=$6
	if rdma_up_mac "$kind" "$a4" "$mac" "$tag" ${7:-} >/tmp/up.log 2>&1 &&
		$IP -6 addr add "$a6/64" dev "$NETDEV" nodad; then
		ok "$n"
		grep '^info:' /tmp/up.log
	else
		fail "$n" "$(cat /tmp/up.log)"
	fi
}
up kite-up kite kite 198.18.0.2 2001:db8::2 "${KITE_MAC_kite0:-}"
up rxe-up rxe rxe 198.18.1.2 2001:db8:1::2 "${KITE_MAC_virtio0:-}" rxe0
up mix-up rxe mix 198.18.2.2 2001:db8:2::2 "${KITE_MAC_virtio1:-}" rxe1
agent_start

NQN=$(stor_nqn b)
i=0
if out=$(nvmet_setup "$NQN" 2>&1); then
	for a in 198.18.0.2 198.18.1.2 198.18.2.2 2001:db8::2 2001:db8:1::2 2001:db8:2::2; do
		i=$((i + 1))
		f=ipv4
		case $a in *:*) f=ipv6 ;; esac
		out=$(nvmet_port $i $a $f "$NQN" 2>&1) || break
	done
fi
if [ $i -eq 6 ] && [ -z "$out" ]; then
	ok nvmet-setup
else
	fail nvmet-setup "port $i: $out"
fi
if out=$(nfs_server_start 2>&1); then
	ok nfs-server
	echo "info: nfsd ports: $(tr '\n' ' ' </proc/fs/nfsd/portlist)"
else
	fail nfs-server "$out $(tr '\n' ' ' </proc/fs/nfsd/portlist 2>/dev/null)"
fi
echo "$failures" >/tmp/storage.ready
if wait_until 3600 test -f /tmp/agent.quit; then ok served; else fail served "guest a never said it was done"; fi
agent_stop
check nfs-server-stop nfs_server_stop
check nvmet-teardown nvmet_teardown
check host-unload stor_host_unload
check rdma-unload rdma_unload
stor_dmesg_check dmesg-clean
finish
