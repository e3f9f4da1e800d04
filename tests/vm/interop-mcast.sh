# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2086 # ME, PEER: single words
# Part "mcast" of the interop group, sourced by tests/vm/interop.sh (which
# sets KIND, ME, PEER and ME6): librdmacm's mckey between Kite (guest a)
# and Soft-RoCE (guest b) over an IPv4 group, each side the sender once.
# The receiver joins (rdma_join_multicast: the QP attached through the
# provider's ibv_attach_mcast, the netdev joined to the group), posts
# MCKEY_C receives and waits for them all; once it has joined (peer_xchg of
# interop.sh says so) the sender joins and sends MCKEY_C datagrams to
# the group. Then an IPv6 group: Linux 6.1's rdma_cm refuses every RoCE
# v2 IPv6 multicast join (cma_iboe_join_multicast(): -ENOTSUPP, errno
# 524), so that is a skip when mckey fails that way, a failure otherwise.
# Results, on each guest: mcast-v4-KIND-send and mcast-v4-KIND-recv (this
# guest as sender, as receiver), mcast-v6-KIND.
MCKEY_C=10
MCKEY_ARGS="-C $MCKEY_C -S 512"
# shellcheck disable=SC2034 # n_mcast is read by interop.sh
n_mcast=3

# mck_joined GROUP: rdma_cm has joined GROUP on this guest's netdev (its
# IGMP join comes with the attach; mckey's own words are buffered until
# it exits, and it waits 3 s after joining before it sends or polls).
mck_joined() { $IP maddr show dev "$NETDEV" | grep -qE "inet +$1( |\$)"; }

# mck_recv GROUP: this guest receives: joins, says so, waits for all.
mck_recv() {
	local name=mcast-v4-$KIND-recv rc word mine=ready
	rm -f /tmp/mck.rc
	(timeout 90 mckey -m $1 -b $ME $MCKEY_ARGS >/tmp/mck.out 2>&1; echo $? >/tmp/mck.rc) &
	wait_until 30 mck_joined $1 || mine=not-joined
	word=$(peer_xchg "mckey-$1 $mine")
	[ "$word" = "mckey-$1 go" ] || kill $! 2>/dev/null
	wait $!
	rc=$(cat /tmp/mck.rc 2>/dev/null)
	echo "info: $name: exit $rc, the sender's word '$word'"
	if [ "$rc" = 0 ] && grep -q 'data transfers complete' /tmp/mck.out; then ok $name; else
		tail -n 5 /tmp/mck.out | sed 's/^/# /'
		fail $name "exit $rc$([ "$rc" = 124 ] && echo ' (timeout: not all datagrams came)'): $(tail -n 2 /tmp/mck.out | tr '\n' ' ')"
	fi
}

# mck_send GROUP: this guest sends once the receiver has joined.
mck_send() {
	local name=mcast-v4-$KIND-send rc word
	word=$(peer_xchg "mckey-$1 go")
	if [ "$word" != "mckey-$1 ready" ]; then
		fail $name "the receiver's word '$word', not 'mckey-$1 ready'"
		return
	fi
	timeout 60 mckey -m $1 -b $ME -s $MCKEY_ARGS >/tmp/mcs.out 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -q 'data transfers complete' /tmp/mcs.out; then ok $name; else
		fail $name "exit $rc: $(tail -n 2 /tmp/mcs.out | tr '\n' ' ')"
	fi
}

run_mcast() {
	local out
	modprobe rdma_ucm
	if [ "$KITE_VM" = a ]; then
		mck_send 239.75.1.1
		mck_recv 239.75.1.2
	else
		mck_recv 239.75.1.1
		mck_send 239.75.1.2
	fi
	out=$(timeout 30 mckey -m ff0e::4b:2 -b $ME6 -s $MCKEY_ARGS 2>&1)
	if echo "$out" | grep -q 'failure joining: Unknown error 524'; then
		skip mcast-v6-$KIND "Linux 6.1 rdma_cm refuses RoCE v2 IPv6 multicast joins (ENOTSUPP)"
	else
		fail mcast-v6-$KIND "mckey over IPv6 did not fail as rdma_cm 6.1 does: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
	fi
}
