# SPDX-License-Identifier: GPL-2.0
# The RDMA part of the pair group in guests of another kernel line
# (run.sh pair-6.12 sets PAIR_RDMA=1), sourced by pair-a.sh and pair-b.sh
# after /kite/rdma-lib.sh; each calls its side's function once its own
# checks are done. Two links: n0 joins the Kite NICs of a and b (Kite<->Kite,
# tag kk), the --xlink joins a virtio-net NIC of a, with Soft-RoCE rxe0 on
# it, to a second Kite NIC of b (Kite<->rxe, tag kr). Both sides bring up
# both devices by MAC (rdma_up_mac: DEV_kk, GIDX_kk, DEV_kr, GIDX_kr); a is
# the client of every run and b's agent (rdma-lib.sh) serves it. Per link:
# ibv_rc_pingpong -c, ib_send_bw, ib_write_bw, ib_read_bw (64 KiB, 50
# iterations), and rping -V with a as client and as server (cm_pair).
PR_KK_A=198.18.0.1 PR_KK_B=198.18.0.2
PR_KR_A=198.18.2.1 PR_KR_B=198.18.2.2
PR_PERFTEST="ib_send_bw ib_write_bw ib_read_bw"
# a: kk-up, kr-up, per link 1 pingpong + 3 perftest + 2 rping, peer-quit.
PAIR_RDMA_A_N=$((2 + 2 * 6 + 1))
# b: kk-up, kr-up, served.
PAIR_RDMA_B_N=3

# pr_up NAME KIND ADDR MAC TAG [RXE_NAME]: one result NAME for rdma_up_mac.
pr_up() {
	local name=$1
	shift
	if rdma_up_mac "$@" >/tmp/up.$name 2>&1; then
		ok "$name"
		cat /tmp/up.$name
	else
		fail "$name" "$(cat /tmp/up.$name)"
	fi
}

# pr_link TAG A_ADDR B_ADDR PORT: a's runs over link TAG against b's agent.
pr_link() {
	local tag=$1 me=$2 peer=$3 port=$4 t ME PEER CS_WANT=
	cs_run "$tag-rc_pingpong" "$peer" "$port" \
		"ibv_rc_pingpong -d \$DEV_$tag -g \$GIDX_$tag -p \$PORT -c -n 50 -s 4096" \
		"ibv_rc_pingpong -d \$DEV_$tag -g \$GIDX_$tag -p \$PORT -c -n 50 -s 4096 $peer"
	# The client's report line: size, iterations, peak and average MB/s.
	CS_WANT='^ *65536 +50 +[0-9.]+ +[0-9.]+'
	for t in $PR_PERFTEST; do
		port=$((port + 1))
		cs_run "$tag-$t" "$peer" "$port" \
			"$t -d \$DEV_$tag -x \$GIDX_$tag -p \$PORT -F --use_old_post_send -s 65536 -n 50" \
			"$t -d \$DEV_$tag -x \$GIDX_$tag -p \$PORT -F --use_old_post_send -s 65536 -n 50 $peer"
	done
	# cm_pair reads a's and b's addresses from ME and PEER.
	ME=$me PEER=$peer
	cm_pair "$tag-rping-a-client" client rping v4 $((port + 1))
	cm_pair "$tag-rping-a-server" server rping v4 $((port + 2))
}

# pair_rdma_a: guest a's side (client of every run); PAIR_RDMA_A_N results.
pair_rdma_a() {
	local ans RUN_TIMEOUT=120
	pr_up kk-up kite $PR_KK_A "${KITE_MAC_kite0:-}" kk
	pr_up kr-up rxe $PR_KR_A "${KITE_MAC_virtio1:-}" kr rxe0
	modprobe rdma_ucm
	pr_link kk $PR_KK_A $PR_KK_B 18800
	pr_link kr $PR_KR_A $PR_KR_B 18810
	# The soak (soak.sh), when SOAK_SECS is set.
	[ "$SOAK_SECS" -gt 0 ] && soak_a
	ans=$(agent_call $PR_KK_B 30 "SH - touch /tmp/agent.quit")
	case $ans in "RC 0"*) ok peer-quit ;; *) fail peer-quit "b's agent: ${ans:-no answer}" ;; esac
}

# pair_rdma_b: guest b's side, its agent serving a until a says it is done;
# PAIR_RDMA_B_N results. kk's netdev already has its address (pair-b.sh).
pair_rdma_b() {
	pr_up kk-up kite $PR_KK_B "${KITE_MAC_kite0:-}" kk
	pr_up kr-up kite $PR_KR_B "${KITE_MAC_kite1:-}" kr
	modprobe rdma_ucm
	agent_start
	if wait_until $((900 + SOAK_SECS)) test -f /tmp/agent.quit; then ok served; else
		fail served "guest a never said it was done"
	fi
	agent_stop
}
