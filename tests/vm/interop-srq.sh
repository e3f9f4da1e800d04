# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2086 # DEV, GIDX, PORT, PEER: single words
# Part "srq" of the interop group, sourced by tests/vm/interop.sh (which
# sets KIND, DEV, GIDX, ME, PEER and PORT): ibv_srq_pingpong -c (four RC
# QPs receiving through one shared receive queue) between Kite (guest a)
# and Soft-RoCE (guest b), Kite as client and as server, over IPv4 GIDs
# with 4 KiB messages.
# Results, on each guest: srq-v4, as client and as server
# (-KIND-client, -KIND-server).
# shellcheck disable=SC2034 # n_srq is read by interop.sh
n_srq=2

# srqpp NAME ROLE ARGS: one ibv_srq_pingpong run over the IPv4 GID
# (pingpong in interop.sh; the tool comes with the image,
# scripts/mkinitramfs.sh).
srqpp() {
	local name=$1 role=$2
	shift 2
	pingpong ibv_srq_pingpong $name $role $GIDX "$@"
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
