# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2086 # DEV, PEER, PORT: single words
# Part "ucx" of the interop group, sourced by tests/vm/interop.sh (which
# sets KIND, DEV, ME and PEER): ucx_perftest UCP (Debian 12's UCX 1.13)
# between Kite (guest a) and Soft-RoCE (guest b), UCX_NET_DEVICES on each
# side's device: tag_lat, ucp_am_lat (8 B), tag_bw, ucp_put_bw, ucp_get
# (64 KiB) with Kite as the client, then tag_lat with Kite as the server.
# UCX connects its rc_verbs endpoints through ud_verbs; rxe reports wc.sl
# 0 for its UD receives, so the rxe side alone also sets
# UCX_UD_VERBS_ETH_DGID_CHECK=n (else UCX 1.13 takes Kite's IPv4 datagrams
# for IPv6 and drops them, and every run hangs until its timeout); Kite's
# side keeps UCX's defaults. Each run must exit 0 and the client must
# print its Final: figures.
# Results, on each guest: ucp-TEST-KIND-client or -server (n_ucx).
# shellcheck disable=SC2034 # n_ucx and off_ucx are read by interop.sh
n_ucx=6
# Until it has passed in the interop group, it runs only when asked for
# (KITE_INTEROP_PARTS=ucx).
off_ucx="not yet run in a VM: KITE_INTEROP_PARTS=ucx runs it"
UCP_ITERS=${UCP_ITERS:-1000}

# ucp NAME ROLE PORT TEST SIZE: one ucx_perftest UCP run as server or client
# (clients retry while the peer's server is not listening yet).
ucp() {
	local name=$1 role=$2 port=$3 test=$4 size=$5 env rc i
	env="UCX_NET_DEVICES=$DEV:1"
	[ "$KIND" = rxe ] && env="$env UCX_UD_VERBS_ETH_DGID_CHECK=n"
	if [ "$role" = server ]; then
		timeout 90 env $env ucx_perftest -p $port >/tmp/ucp.out 2>&1
		rc=$?
	else
		for i in $(seq 1 60); do
			timeout 60 env $env ucx_perftest -p $port -t $test -s $size -n $UCP_ITERS $PEER >/tmp/ucp.out 2>&1
			rc=$?
			grep -qi 'connection refused' /tmp/ucp.out || break
			sleep 1
		done
	fi
	grep -E '^Final:' /tmp/ucp.out | sed "s/^/info: $name-$KIND-$role: /"
	if [ $rc -eq 0 ] && { [ "$role" = server ] || grep -qE '^Final:[[:space:]]+[0-9]' /tmp/ucp.out; }; then
		ok "$name-$KIND-$role"
	else
		fail "$name-$KIND-$role" "exit $rc$([ $rc -eq 124 ] && echo ' (timeout)'): $(grep -iE -m 2 'error|fail' /tmp/ucp.out | tr '\n' ' ')"
	fi
}

run_ucx() {
	local port=18900 t role peer_role
	role=client peer_role=server
	[ "$KITE_VM" = a ] || role=server peer_role=client
	for t in tag_lat:8 ucp_am_lat:8 tag_bw:65536 ucp_put_bw:65536 ucp_get:65536; do
		ucp ucp-${t%:*} $role $port ${t%:*} ${t#*:}
		port=$((port + 1))
	done
	ucp ucp-tag_lat $peer_role $port tag_lat 8
}
