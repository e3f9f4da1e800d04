# SPDX-License-Identifier: GPL-2.0
# Guest "b" (198.18.0.2) of the two-guest run: the peer of pair-a.sh. Answers
# ping, pings back, receives 8 MiB over TCP and returns its sha256 to a.
. /kite/lib.sh
PAIR_RDMA_B_N=0
if [ "${PAIR_RDMA:-0}" = 1 ]; then
	. /kite/rdma-lib.sh
	. /kite/pair-rdma.sh
	. /kite/soak.sh
fi
plan $((6 + PAIR_RDMA_B_N))

ME=198.18.0.2
PEER=198.18.0.1

check modprobe modprobe kite
# A second Kite NIC (pair-6.12's --xlink): this link's NIC by its MAC.
if [ -n "${KITE_MAC_kite1:-}" ]; then
	wait_until 10 netdev_by_mac "$KITE_MAC_kite0"
	NETDEV=$(netdev_by_mac "$KITE_MAC_kite0")
else
	NETDEV=$(kite_netdev)
fi
if [ -z "$NETDEV" ]; then
	fail netdev "no net_device bound to the kite driver: $(ls /sys/class/net)"
	finish
fi
ok netdev
$IP addr add $ME/24 dev "$NETDEV"
$IP link set "$NETDEV" up
wait_until 10 carrier_is "$NETDEV" 1 || fail carrier "no carrier on $NETDEV"
ping_check ping $PEER

# a sends after its link down/up checks; allow for them.
if timeout 240 $NC -l 5001 </dev/null >/tmp/data; then
	size=$(wc -c </tmp/data)
	sum=$(sha256sum /tmp/data | cut -d' ' -f1)
	[ "$size" -eq 8388608 ] && ok tcp-recv-8MiB || fail tcp-recv-8MiB "received $size bytes"
	echo "info: received $size bytes, sha256 $sum"
	sent=0
	end=$(($(date +%s) + 30))
	while [ "$(date +%s)" -lt $end ]; do
		echo "$sum" | timeout 20 $NC -N $PEER 5002 2>/dev/null && { sent=1; break; }
		usleep 250000
	done
	[ $sent = 1 ] && ok tcp-send-sha || fail tcp-send-sha "could not reach $PEER:5002"
else
	fail tcp-recv-8MiB "nc -l 5001 failed or timed out"
fi
# a's RDMA runs (pair-6.12, pair-rdma.sh) come after its unload checks.
[ "${PAIR_RDMA:-0}" = 1 ] && pair_rdma_b
bad=$(dmesg_bad)
[ -z "$bad" ] && ok dmesg-clean || fail dmesg-clean "$(echo "$bad" | head -n 3)"
finish
