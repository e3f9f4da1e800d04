# SPDX-License-Identifier: GPL-2.0
# UCX between the two guests of the RDMA groups (sourced by rdma-a.sh after
# rdma-lib.sh): Debian 12's UCX 1.13 (libucx0, ucx-utils in the image).
# ucx_info -d must list the ud_verbs transport on $DEV:1, and ucx_perftest
# UCT over ud_verbs (am_lat, am_bw; short runs, server on guest b through
# its agent) must pass with only UCX_NET_DEVICES and UCX_TLS set: UCX's
# default destination-GID check (UCX_UD_VERBS_ETH_DGID_CHECK=y) stays on,
# so it must read IPv4 from wc.sl of every UD receive (provider.rst).
# rc_verbs is not tried: UCX 1.13 opens it with an SRQ, which Kite does not
# offer yet (ucx_info -d's listing of it is printed, not judged).
# Soft-RoCE (RDMA_KIND=rxe) reports wc.sl 0, so UCX 1.13 drops its IPv4
# datagrams under the default check: there the perftest runs are skipped.
# Results: ucx-info-ud_verbs, ucx-ud-am_lat, ucx-ud-am_bw (UCX_N).
UCX_N=3
# Every UCX run is bounded by this many seconds per side.
UCX_SECS=${UCX_SECS:-60}
UCX_LAT_ITERS=${UCX_LAT_ITERS:-1000}
UCX_BW_ITERS=${UCX_BW_ITERS:-5000}

# ucx_env: the only UCX settings the checks make (the agent expands $DEV).
ucx_env() { echo "env UCX_NET_DEVICES=$1:1 UCX_TLS=ud_verbs"; }

# ucx_info_check: ucx_info -d lists ud_verbs with device $DEV:1.
ucx_info_check() {
	local out
	out=$(timeout $UCX_SECS ucx_info -d 2>&1)
	echo "$out" | grep -E '^#[[:space:]]+(Transport|Device):' | sed 's/^/# ucx_info: /'
	if echo "$out" | awk -v dev="$DEV:1" '
		/^#[[:space:]]+Transport:/ { tl = $3 }
		/^#[[:space:]]+Device:/ && tl == "ud_verbs" && $3 == dev { found = 1 }
		END { exit !found }'; then
		ok ucx-info-ud_verbs
	else
		fail ucx-info-ud_verbs "no ud_verbs on $DEV:1 in ucx_info -d: $(echo "$out" | grep -iE 'error|fail' | head -n 2)"
	fi
}

# ucx_perf NAME PORT TEST ITERS SIZE [ARGS...]: ucx_perftest UCT TEST over
# ud_verbs, b the server (its parameters come from the client), a the
# client.
ucx_perf() {
	local RUN_TIMEOUT=$UCX_SECS name=$1 port=$2 test=$3 n=$4 size=$5
	shift 5
	cs_run "$name" $PEER $port "$(ucx_env '$DEV') ucx_perftest -p \$PORT" \
		"$(ucx_env $DEV) ucx_perftest -p \$PORT -t $test -x ud_verbs -d $DEV:1 -n $n -s $size $* $PEER"
	# The last line of its table: iterations, latency (us) 50% / average /
	# overall, bandwidth (MB/s) and message rate average / overall.
	grep -E 'Final:' /tmp/cli.$port | tail -n 1 | sed "s/^/info: $name: /"
}

ucx_suite() {
	local port=18750
	ucx_info_check
	if [ "$RDMA_KIND" != kite ]; then
		skip ucx-ud-am_lat "rxe reports wc.sl 0: UCX 1.13 takes its IPv4 datagrams for IPv6 and drops them"
		skip ucx-ud-am_bw "rxe reports wc.sl 0: UCX 1.13 takes its IPv4 datagrams for IPv6 and drops them"
		return
	fi
	# am_lat: short messages (inline sends); am_bw: bcopy (from a
	# registered bounce buffer), half the path MTU of 1024.
	ucx_perf ucx-ud-am_lat $port am_lat $UCX_LAT_ITERS 64
	ucx_perf ucx-ud-am_bw $((port + 1)) am_bw $UCX_BW_ITERS 512 -D bcopy
}
