# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2086 # DEV, GIDX, PORT, PEER: single words
# Part "ud" of the interop group, sourced by tests/vm/interop.sh (which
# sets KIND, DEV, GIDX, GIDX6, ME, PEER and PORT): ibv_ud_pingpong -c (UD
# SENDs through the provider's address handles and UD fast path, every
# received byte checked by both sides) between Kite (guest a) and
# Soft-RoCE (guest b), Kite as client and as server, over IPv4 GIDs with
# 1 KiB and 4 KiB messages (path MTU 4096: both netdevs have MTU 9000) and
# over IPv6 GIDs.
# Then tests/vm/kite-ud.c (in the image as kite-ud), each side as the
# sender (client) once: SEND with immediate over IPv4 and SEND over IPv6
# with the completion fields and the GRH area checked against the
# sender's addresses, a wrong Q_Key dropped (and counted: Kite's
# rx_roce_dropped, rxe's qkey_viol_cntr), the Q_Key high-bit rule (an
# rxe sender skips it: Linux 6.1's rxe lacks it), a message of exactly
# the active MTU, one a byte larger (a
# successful send completion, nothing received, IBTA C10-93.1.1) and a
# small one after it.
# Results, on each guest: ud-v4-1k, ud-v4-4k and ud-v6-1k, each as client
# and as server (-KIND-client, -KIND-server); the sender's kite-ud results
# (kite-ud-KIND-send-NAME, "kite-ud count" of them, printed by the client)
# and both exit statuses (kite-ud-KIND-sender-exit, kite-ud-KIND-receiver).
KITE_UD_N=$(kite-ud count 2>/dev/null || echo 13)
# shellcheck disable=SC2034 # n_ud is read by interop.sh
n_ud=$((6 + KITE_UD_N + 2))

# udpp NAME ROLE GID ARGS: one ibv_ud_pingpong run (pingpong in
# interop.sh; the tool comes with the image, scripts/mkinitramfs.sh).
udpp() { pingpong ibv_ud_pingpong "$@"; }

# kud ROLE: one kite-ud run, this guest the sender (client) or the
# receiver (server, TCP port PORT + 1).
kud() {
	local rc n
	if [ "$1" = server ]; then
		timeout 150 kite-ud -d $DEV -g $GIDX -6 $GIDX6 -p $((PORT + 1)) -t 140 \
			>/tmp/kud.out 2>&1
		rc=$?
		sed 's/^/# receiver: /' /tmp/kud.out
		if [ $rc -eq 0 ]; then ok kite-ud-$KIND-receiver; else
			fail kite-ud-$KIND-receiver "exit $rc: $(grep -v '^#' /tmp/kud.out | tail -n 2 | tr '\n' ' ')"
		fi
		return
	fi
	timeout 150 kite-ud -d $DEV -g $GIDX -6 $GIDX6 -p $((PORT + 1)) -t 140 \
		-P kite-ud-$KIND-send $PEER >/tmp/kud.out 2>&1
	rc=$?
	cat /tmp/kud.out
	n=$(grep -cE '^(ok|FAIL|skip) ' /tmp/kud.out)
	# Every result must have come (a crash would leave some out).
	while [ "$n" -lt "$KITE_UD_N" ]; do
		n=$((n + 1))
		fail kite-ud-$KIND-send-missing-$n "kite-ud exited $rc before printing all results"
	done
	grep -q '^FAIL ' /tmp/kud.out && failures=$((failures + $(grep -c '^FAIL ' /tmp/kud.out)))
	tool_exit kite-ud-$KIND-sender-exit $rc /tmp/kud.out
	return 0
}

# a is the client first in each pair of runs, then the server.
run_ud() {
	local cfg gid size
	for cfg in v4-1k v4-4k v6-1k; do
		case $cfg in
		v4-1k) gid=$GIDX size=1024 ;;
		v4-4k) gid=$GIDX size=4096 ;;
		*) gid=$GIDX6 size=1024 ;;
		esac
		if [ "$KITE_VM" = a ]; then
			udpp ud-$cfg client $gid -s $size -n 200
			udpp ud-$cfg server $gid -s $size -n 200
		else
			udpp ud-$cfg server $gid -s $size -n 200
			udpp ud-$cfg client $gid -s $size -n 200
		fi
	done
	if [ "$KITE_VM" = a ]; then
		kud client
		kud server
	else
		kud server
		kud client
	fi
}
