# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2086 # DEV, GIDX, ports: single words
# Part "bulk" of the interop group, sourced by tests/vm/interop.sh (which
# sets KIND, DEV, GIDX, ME, PEER and host_call): kite-rc mixed
# (tests/vm/kite-rc.c) between Kite and Soft-RoCE, BULK_N messages
# (default 10,000), each a SEND, an RDMA WRITE or an RDMA READ of 1 B to
# 1 MiB (log-uniform by octave), every byte verified, every completion
# once and in order, every SEND received once and in order. Guest a (Kite)
# is the client, so Kite is the requester of every operation and rxe the
# responder; guest b (rxe) runs the server. Path MTU 4096 (both netdevs
# have MTU 9000).
#   1. a clean link;
#   2. BULK_LOSSY_N messages (default 3,000: the time budget; the rdma
#      group's Kite<->Kite lossy run has 10,000) with Kite's wire fault
#      injection dropping 2% of RoCEv2 frames in each
#      direction (x-wire-drop-ppm and x-wire-rx-drop-ppm 20000, set on a's
#      kite0 by the host hook), then Kite's wire_dropped counter must have grown
#      (else the run proved nothing about loss);
#   3. still lossy, the other way round: rxe (b) the client and requester,
#      Kite (a) the server and responder, BULK_RXE_N messages (default
#      500: the time budget), then the rates go back to 0.
# Results: the client prints its one result (bulk-clean-mixed,
# bulk-lossy-mixed on a, bulk-lossy-rxe-req-mixed on b) and its exit status
# (bulk-NAME-client-exit), the other guest the server's exit status
# (bulk-clean-rxe-server, bulk-lossy-rxe-server on b,
# bulk-lossy-rxe-req-kite-server on a); a also bulk-loss-on,
# bulk-lossy-frames-dropped and bulk-loss-off.
BULK_N=${BULK_N:-10000}
BULK_LOSSY_N=${BULK_LOSSY_N:-3000}
# 0 skips this run (both guests print "skip"). It found the duplicate-ACK
# bug of qemu/roce/kite_roce_resp.c (test_dup_write_ack_after_read).
BULK_RXE_N=${BULK_RXE_N:-500}
BULK_RXE_WHY="BULK_RXE_N=0"
# Each kite-rc run is bounded by this many seconds (its -t).
BULK_SECS=${BULK_SECS:-300}
# The requester's local ACK timeout exponent (kite-rc -T): 4.096 us << 16
# = 268 ms. With 14 (67 ms) Kite timed out 19 times on the clean link
# (rxe under TCG on a loaded host answers a 1 MiB WRITE later than that).
BULK_QP_TIMEOUT=${BULK_QP_TIMEOUT:-16}
BULK_PPM=20000
# shellcheck disable=SC2034 # n_bulk is read by interop.sh
case $KITE_VM in
a) n_bulk=8 ;;
*) n_bulk=4 ;;
esac

# bulk_hw: the non-zero port counters of $DEV, on one line.
bulk_hw() {
	grep . /sys/class/infiniband/$DEV/ports/1/hw_counters/* 2>/dev/null |
		sed 's|.*/||' | grep -v ':0$' | tr '\n' ' '
}
bulk_cnt() { cat /sys/class/infiniband/$DEV/ports/1/hw_counters/$1 2>/dev/null || echo 0; }

# bulk_server NAME PORT SEED COUNT: serve one kite-rc mixed run; one
# result (bulk-NAME-KIND-server).
bulk_server() {
	local t0 rc
	t0=$(date +%s)
	timeout $((BULK_SECS + 20)) kite-rc -d $DEV -g $GIDX -p $2 -t $BULK_SECS \
		-n $4 -S $3 mixed >/tmp/bulk-srv.$2 2>&1
	rc=$?
	cat /tmp/bulk-srv.$2
	echo "info: bulk $1: server took $(($(date +%s) - t0)) s, exit $rc; $DEV counters: $(bulk_hw)"
	if [ $rc -eq 0 ]; then ok "bulk-$1-$KIND-server"; else
		fail "bulk-$1-$KIND-server" "kite-rc server exit $rc: $(grep -v '^#' /tmp/bulk-srv.$2 | tail -n 2 | tr '\n' ' ')"
	fi
}

# bulk_client NAME PORT SEED COUNT: one kite-rc mixed run against the
# peer's server (again while it does not listen yet: no TCP connection, so
# nothing of the run went out); its one result line (bulk-NAME-mixed)
# counts, and its exit status (bulk-NAME-client-exit, tool_exit).
bulk_client() {
	local t0 rc n
	t0=$(date +%s)
	for _ in 1 2 3; do
		timeout $((BULK_SECS + 20)) kite-rc -d $DEV -g $GIDX -p $2 -t $BULK_SECS \
			-n $4 -S $3 -T $BULK_QP_TIMEOUT -P bulk-$1 mixed $PEER >/tmp/bulk-cli.$2 2>&1
		rc=$?
		grep -q "no TCP connection" /tmp/bulk-cli.$2 || break
	done
	cat /tmp/bulk-cli.$2
	echo "info: bulk $1: client took $(($(date +%s) - t0)) s, exit $rc; $DEV counters: $(bulk_hw)"
	n=$(grep -cE '^(ok|FAIL|skip) ' /tmp/bulk-cli.$2)
	[ "$n" -gt 0 ] || fail "bulk-$1-mixed" "kite-rc client exit $rc without a result: $(tail -n 2 /tmp/bulk-cli.$2 | tr '\n' ' ')"
	tool_exit "bulk-$1-client-exit" $rc /tmp/bulk-cli.$2
}

# bulk_loss PPM NAME (a): both of Kite's drop rates to PPM; one result.
# (host_call prints the request line the hook reads: not in $(...).)
bulk_loss() {
	if host_call qom x-wire-drop-ppm $1 &&
		host_call qom x-wire-rx-drop-ppm $1; then
		ok "bulk-$2"
	else
		fail "bulk-$2" "the host hook could not set x-wire-drop-ppm and x-wire-rx-drop-ppm to $1 (see above)"
	fi
}

run_bulk() {
	local before after
	if [ "$KITE_VM" != a ]; then
		bulk_server clean 18640 1 $BULK_N
		bulk_server lossy 18641 2 $BULK_LOSSY_N
		if [ "$BULK_RXE_N" -gt 0 ]; then
			bulk_client lossy-rxe-req 18642 3 $BULK_RXE_N
		else
			skip bulk-lossy-rxe-req-mixed "$BULK_RXE_WHY"
			skip bulk-lossy-rxe-req-client-exit "$BULK_RXE_WHY"
		fi
		return
	fi
	bulk_client clean 18640 1 $BULK_N
	before=$(bulk_cnt wire_dropped)
	bulk_loss $BULK_PPM loss-on
	bulk_client lossy 18641 2 $BULK_LOSSY_N
	after=$(bulk_cnt wire_dropped)
	echo "info: bulk lossy: wire_dropped $before -> $after, retransmits $(bulk_cnt retransmits), timeouts $(bulk_cnt timeouts), naks_rcvd $(bulk_cnt naks_rcvd), naks_sent $(bulk_cnt naks_sent), duplicate_requests $(bulk_cnt duplicate_requests)"
	if [ "${after:-0}" -gt "${before:-0}" ]; then ok bulk-lossy-frames-dropped; else
		fail bulk-lossy-frames-dropped "wire_dropped did not move ($before -> $after): nothing was dropped"
	fi
	if [ "$BULK_RXE_N" -gt 0 ]; then
		bulk_server lossy-rxe-req 18642 3 $BULK_RXE_N
		echo "info: bulk lossy-rxe-req: wire_dropped $after -> $(bulk_cnt wire_dropped)"
	else
		skip bulk-lossy-rxe-req-kite-server "$BULK_RXE_WHY"
	fi
	bulk_loss 0 loss-off
}
