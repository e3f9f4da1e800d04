# SPDX-License-Identifier: GPL-2.0
# Guest "b" of the RDMA groups: brings up its RDMA device (RDMA_KIND, see
# rdma-a.sh) and serves guest a through the agent of rdma-lib.sh (a starts
# every server here, collects its exit status and output, switches netem
# on and off) until a says it is done. For a's rdma_cm and kite-ud runs it
# also gets an IPv6 address (rdma_ucm loaded) and leaves the index of its
# RoCE v2 GID for that address in /tmp/gidx6.
. /kite/lib.sh
. /kite/rdma-lib.sh
plan 3
case $RDMA_KIND in
kite) ME=198.18.0.2 ME6=2001:db8::2 ;;
*) ME=198.18.1.2 ME6=2001:db8:1::2 ;;
esac
host_listen
# (not in $(...): rdma_up sets DEV, GIDX, NETDEV)
if rdma_up "$RDMA_KIND" $ME >/tmp/rdma-up.log 2>&1; then ok rdma-up; cat /tmp/rdma-up.log; else
	fail rdma-up "$(cat /tmp/rdma-up.log)"
	finish
fi
modprobe rdma_ucm
# (a's check pair-v6-up fails when /tmp/gidx6 is missing)
$IP -6 addr add $ME6/64 dev "$NETDEV" nodad && wait_until 10 gid6_of $DEV $ME6 &&
	gid6_of $DEV $ME6 >/tmp/gidx6 && echo "info: $ME6: GID index $(cat /tmp/gidx6)"
agent_start
# a quits us after its two-guest part; bounded by the group's timeout.
if wait_until 2400 test -f /tmp/agent.quit; then ok served; else
	fail served "guest a never said it was done"
fi
agent_stop
bad=$(dmesg_bad)
[ -z "$bad" ] && ok dmesg-clean || fail dmesg-clean "$(echo "$bad" | head -n 3)"
finish
