# SPDX-License-Identifier: GPL-2.0
# UCX between the two guests of the RDMA groups (sourced by rdma-a.sh after
# rdma-lib.sh): Debian 12's UCX 1.13 (libucx0, ucx-utils in the image).
# ucx_info -d must list the ud_verbs transport on $DEV:1, and ucx_perftest
# UCT over ud_verbs (am_lat, am_bw; short runs, server on guest b through
# its agent) must pass with only UCX_NET_DEVICES and UCX_TLS set: UCX's
# default destination-GID check (UCX_UD_VERBS_ETH_DGID_CHECK=y) stays on,
# so it must read IPv4 from wc.sl of every UD receive (provider.rst).
# rc_verbs (which UCX 1.13 opens with an SRQ) must be listed on $DEV:1
# as well, and ucx_perftest UCT over rc_verbs runs am_lat, put_lat (short
# messages), am_bw, put_bw (bcopy) and get (zcopy: RDMA READ into the
# registered buffer).
# Soft-RoCE (RDMA_KIND=rxe) reports wc.sl 0, so UCX 1.13 drops its IPv4
# datagrams under the default check: there the ud_verbs perftest runs are
# skipped (rc_verbs runs on both).
# Then UCP, the API applications use (ucx_perftest's UCP tests, where UCX
# picks the transports itself): tag_lat with no UCX_* variable at all, and
# the RDMA device must have carried it (its transmitted RoCE packets grow by
# at least one per iteration); then ucp_am_lat, tag_bw, ucp_put_bw and
# ucp_get with only UCX_NET_DEVICES (so TCP over the same netdev is out);
# on rxe with UCX_UD_VERBS_ETH_DGID_CHECK=n as well, and no default run.
# Results: ucx-info-ud_verbs, ucx-ud-am_lat, ucx-ud-am_bw,
# ucx-info-rc_verbs, ucx-rc-{am_lat,put_lat,am_bw,put_bw,get},
# ucp-tag_lat-default, ucp-tag_lat-on-rdma, ucp-{am_lat,tag_bw,put_bw,get}
# (UCX_N).
UCX_N=$((3 + 1 + 5 + 2 + 4))
# Every UCX run is bounded by this many seconds per side.
UCX_SECS=${UCX_SECS:-60}
UCX_LAT_ITERS=${UCX_LAT_ITERS:-1000}
UCX_BW_ITERS=${UCX_BW_ITERS:-5000}

# ucx_env DEV TL: the only UCX settings the checks make (the agent expands
# $DEV).
ucx_env() { echo "env UCX_NET_DEVICES=$1:1 UCX_TLS=$2"; }

# ucx_info_check TL: ucx_info -d lists transport TL with device $DEV:1 and
# could open its interface (ucx_info prints the Transport and Device lines
# first, then "< failed to open interface >" and still exits 0).
ucx_info_check() {
	local out tl=$1 rc
	out=$(timeout $UCX_SECS ucx_info -d 2>&1)
	rc=$?
	echo "$out" | grep -E '^#[[:space:]]+(Transport|Device):' | sed 's/^/# ucx_info: /'
	if [ $rc -eq 0 ] && echo "$out" | awk -v dev="$DEV:1" -v want="$tl" '
		/^#[[:space:]]+Transport:/ { tl = $3 }
		here && /failed to open interface/ { failed = 1 }
		/^#[[:space:]]+Device:/ { here = tl == want && $3 == dev; if (here) found = 1; next }
		/^#[[:space:]]+(Transport|Memory domain|Component):/ { here = 0 }
		END { exit !(found && !failed) }'; then
		ok ucx-info-$tl
	else
		fail ucx-info-$tl "no $tl on $DEV:1 in ucx_info -d: $(echo "$out" | grep -iE 'error|fail' | head -n 2)"
	fi
}

# ucx_perf NAME PORT TL TEST ITERS SIZE [ARGS...]: ucx_perftest UCT TEST
# over transport TL, b the server (its parameters come from the client),
# a the client.
ucx_perf() {
	local RUN_TIMEOUT=$UCX_SECS name=$1 port=$2 tl=$3 test=$4 n=$5 size=$6
	shift 6
	cs_run "$name" $PEER $port "$(ucx_env '$DEV' $tl) ucx_perftest -p \$PORT" \
		"$(ucx_env $DEV $tl) ucx_perftest -p \$PORT -t $test -x $tl -d $DEV:1 -n $n -s $size $* $PEER"
	# The last line of its table: iterations, latency (us) 50% / average /
	# overall, bandwidth (MB/s) and message rate average / overall.
	grep -E 'Final:' /tmp/cli.$port | tail -n 1 | sed "s/^/info: $name: /"
}

# roce_tx: RoCE packets this guest's RDMA device sent so far (Kite's
# tx_roce_packets, rxe's sent_pkts).
roce_tx() {
	local c=/sys/class/infiniband/$DEV/ports/1/hw_counters
	cat $c/tx_roce_packets 2>/dev/null || cat $c/sent_pkts 2>/dev/null || echo 0
}

# ucp_perf NAME PORT ENV TEST ITERS SIZE [ARGS...]: ucx_perftest UCP TEST
# with the environment ENV (a command prefix, may be empty), b the server,
# a the client; ok when both exit 0 and the client printed its figures.
ucp_perf() {
	local RUN_TIMEOUT=$UCX_SECS name=$1 port=$2 env=$3 test=$4 n=$5 size=$6
	shift 6
	CS_WANT='Final:[[:space:]]+[0-9]' cs_run "$name" $PEER $port "$env ucx_perftest -p \$PORT" \
		"$env ucx_perftest -p \$PORT -t $test -n $n -s $size $* $PEER" || return 1
	grep -E 'Final:' /tmp/cli.$port | tail -n 1 | sed "s/^/info: $name: /"
}

# The UCP runs: tag_lat with UCX's defaults, then the rest on $DEV:1 only.
ucp_suite() {
	local port=18760 t0 sent dev="env UCX_NET_DEVICES=$DEV:1"
	if [ "$RDMA_KIND" != kite ]; then
		# UCX connects rc_verbs endpoints over ud_verbs (see above).
		dev="$dev UCX_UD_VERBS_ETH_DGID_CHECK=n"
		skip ucp-tag_lat-default "rxe reports wc.sl 0: UCX 1.13 drops the ud_verbs datagrams it connects over"
		skip ucp-tag_lat-on-rdma "rxe: no run with default settings"
	elif t0=$(roce_tx) && ucp_perf ucp-tag_lat-default $port "" tag_lat $UCX_LAT_ITERS 8; then
		sent=$(($(roce_tx) - t0))
		if [ $sent -ge $UCX_LAT_ITERS ]; then
			ok ucp-tag_lat-on-rdma
			echo "info: ucp-tag_lat-default: $DEV sent $sent RoCE packets"
		else
			fail ucp-tag_lat-on-rdma "$DEV sent $sent RoCE packets for $UCX_LAT_ITERS iterations: UCX took another path"
		fi
	else
		fail ucp-tag_lat-on-rdma "tag_lat with default settings failed"
	fi
	ucp_perf ucp-am_lat $((port + 1)) "$dev" ucp_am_lat $UCX_LAT_ITERS 8
	ucp_perf ucp-tag_bw $((port + 2)) "$dev" tag_bw $UCX_LAT_ITERS 65536
	ucp_perf ucp-put_bw $((port + 3)) "$dev" ucp_put_bw $UCX_LAT_ITERS 65536
	ucp_perf ucp-get $((port + 4)) "$dev" ucp_get $UCX_LAT_ITERS 65536
}

ucx_suite() {
	local port=18750
	ucx_info_check ud_verbs
	if [ "$RDMA_KIND" != kite ]; then
		skip ucx-ud-am_lat "rxe reports wc.sl 0: UCX 1.13 takes its IPv4 datagrams for IPv6 and drops them"
		skip ucx-ud-am_bw "rxe reports wc.sl 0: UCX 1.13 takes its IPv4 datagrams for IPv6 and drops them"
	else
		# am_lat: short messages (inline sends); am_bw: bcopy (from a
		# registered bounce buffer), half the path MTU of 1024.
		ucx_perf ucx-ud-am_lat $port ud_verbs am_lat $UCX_LAT_ITERS 64
		ucx_perf ucx-ud-am_bw $((port + 1)) ud_verbs am_bw $UCX_BW_ITERS 512 -D bcopy
	fi
	# rc_verbs: receives through the interface's SRQ.
	ucx_info_check rc_verbs
	ucx_perf ucx-rc-am_lat $((port + 2)) rc_verbs am_lat $UCX_LAT_ITERS 64
	ucx_perf ucx-rc-put_lat $((port + 3)) rc_verbs put_lat $UCX_LAT_ITERS 64
	ucx_perf ucx-rc-am_bw $((port + 4)) rc_verbs am_bw $UCX_BW_ITERS 4096 -D bcopy
	ucx_perf ucx-rc-put_bw $((port + 5)) rc_verbs put_bw $UCX_BW_ITERS 4096 -D bcopy
	ucx_perf ucx-rc-get $((port + 6)) rc_verbs get $UCX_BW_ITERS 4096 -D zcopy
	ucp_suite
}
