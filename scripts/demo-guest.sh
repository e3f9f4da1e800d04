# SPDX-License-Identifier: GPL-2.0
# Guest side of `make demo` (scripts/demo.sh): load kite, address the kite
# netdev, show the RDMA link and the address, ping the other guest.
. /kite/lib.sh
plan 2	# modprobe, ping

case $KITE_VM in
a) ME=198.18.0.1 PEER=198.18.0.2 ;;
*) ME=198.18.0.2 PEER=198.18.0.1 ;;
esac
echo "== modprobe kite"
check modprobe modprobe kite
NETDEV=$(kite_netdev) || { fail netdev "no kite net_device"; finish; }
$IP addr add $ME/24 dev "$NETDEV"
$IP link set "$NETDEV" up
wait_until 10 port_is ACTIVE
echo "== rdma link show"
$RDMA link show
echo "== ip addr show dev $NETDEV"
$IP addr show dev "$NETDEV"
echo "== ping -c 3 $PEER"
wait_until 60 ping -c 1 -W 1 $PEER	# until the other guest is up
if ping -c 3 -w 10 $PEER; then ok ping; else fail ping "no answer from $PEER"; fi
# Stay up until the other guest has pinged us too (3 echo requests seen).
in_echos() {
	awk '$1 == "Icmp:" { if (!n) { for (i = 2; i <= NF; i++) if ($i == "InEchos") n = i; next }
		print $n }' /proc/net/snmp
}
pinged() { [ "$(in_echos)" -ge 3 ]; }
wait_until 60 pinged || fail pinged "the other guest's pings did not arrive ($(in_echos) echo requests)"
finish
