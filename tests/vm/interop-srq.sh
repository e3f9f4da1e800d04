# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2086 # DEV, GIDX, PORT, PEER: single words
# Part "srq" of the interop group, sourced by tests/vm/interop.sh (which
# sets KIND, DEV, GIDX, ME, PEER and PORT): ibv_srq_pingpong -c (four RC
# QPs receiving through one shared receive queue, every received byte
# checked by both sides) between Kite (guest a) and Soft-RoCE (guest b),
# Kite as client and as server, over IPv4 GIDs with 4 KiB messages.
# Results, on each guest: srq-v4, as client and as server
# (-KIND-client, -KIND-server).
# shellcheck disable=SC2034 # n_srq is read by interop.sh
n_srq=2

# ibv_srq_pingpong comes with the image (scripts/mkinitramfs.sh, rc_tools).
SRQ_PP=$(command -v ibv_srq_pingpong 2>/dev/null) || SRQ_PP=

# srqpp NAME ROLE ARGS: one ibv_srq_pingpong run as server or client
# (clients retry while the peer's server is not listening yet).
srqpp() {
	local name=$1 role=$2 rc
	shift 2
	if [ -z "$SRQ_PP" ]; then
		fail "$name-$KIND-$role" "no ibv_srq_pingpong in the guest"
		return
	fi
	if [ "$role" = server ]; then
		timeout 90 "$SRQ_PP" -d $DEV -g $GIDX -p $PORT -c "$@" >/tmp/srqpp.out 2>&1
		rc=$?
	else
		for _ in $(seq 1 60); do
			timeout 60 "$SRQ_PP" -d $DEV -g $GIDX -p $PORT -c "$@" $PEER >/tmp/srqpp.out 2>&1
			rc=$?
			grep -q "Couldn't connect" /tmp/srqpp.out || break
			sleep 1
		done
	fi
	grep iters /tmp/srqpp.out
	if [ $rc -eq 0 ] && grep -q iters /tmp/srqpp.out; then ok "$name-$KIND-$role"; else
		fail "$name-$KIND-$role" "exit $rc: $(tail -n 3 /tmp/srqpp.out | tr '\n' ' ')"
	fi
}

# a is the client first, then the server.
run_srq() {
	if [ "$KITE_VM" = a ]; then
		srqpp srq-v4 client -q 4 -r 64 -m 1024 -s 4096 -n 50
		srqpp srq-v4 server -q 4 -r 64 -m 1024 -s 4096 -n 50
	else
		srqpp srq-v4 server -q 4 -r 64 -m 1024 -s 4096 -n 50
		srqpp srq-v4 client -q 4 -r 64 -m 1024 -s 4096 -n 50
	fi
}
