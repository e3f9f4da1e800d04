# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2086 # DEV, GIDX, ports: single words
# Part "mw" of the interop group, sourced by tests/vm/interop.sh (which
# sets KIND, DEV, GIDX, ME and PEER): kite-rc mw (tests/vm/kite-rc-mw.c)
# between Kite and Soft-RoCE, memory windows of type 1 and 2B, LOCAL_INV
# and SEND_WITH_INV, dereg and rereg of an MR with a bound window. The
# server owns the windows, the client accesses them; it runs twice:
#   1. guest a (Kite) the client: Kite the requester of every access and
#      the sender of SEND_WITH_INV, rxe's windows (rxe 6.1's limits are
#      skips, see kite-rc-mw.c);
#   2. guest b (rxe) the client: Kite's windows, rxe the requester.
# Results: the client prints kite-rc's ("kite-rc count mw" of them:
# mw-kite-req-NAME on a, mw-rxe-req-NAME on b) and its exit status
# (mw-kite-req-client-exit, mw-rxe-req-client-exit), the other guest the
# server's exit status (mw-kite-req-rxe-server on b,
# mw-rxe-req-kite-server on a).
MW_N=$(kite-rc count mw 2>/dev/null || echo 13)
# shellcheck disable=SC2034 # n_mw is read by interop.sh
n_mw=$((MW_N + 2))
# Each kite-rc run is bounded by this many seconds (its -t).
MW_SECS=${MW_SECS:-240}

# mw_server NAME PORT: serve one kite-rc mw run; one result
# (mw-NAME-KIND-server).
mw_server() {
	local rc
	timeout $((MW_SECS + 20)) kite-rc -d $DEV -g $GIDX -p $2 -t $MW_SECS mw \
		>/tmp/mw-srv.$2 2>&1
	rc=$?
	cat /tmp/mw-srv.$2
	if [ $rc -eq 0 ]; then ok "mw-$1-$KIND-server"; else
		fail "mw-$1-$KIND-server" "kite-rc server exit $rc: $(grep -v '^#' /tmp/mw-srv.$2 | tail -n 2 | tr '\n' ' ')"
	fi
}

# mw_client NAME PORT: one kite-rc mw run against the peer's server
# (again while it does not listen yet); its result lines (mw-NAME-*)
# count, a missing one as a failure, and its exit status
# (mw-NAME-client-exit, tool_exit).
mw_client() {
	local rc n
	for _ in 1 2 3; do
		timeout $((MW_SECS + 20)) kite-rc -d $DEV -g $GIDX -p $2 -t $MW_SECS \
			-P mw-$1 mw $PEER >/tmp/mw-cli.$2 2>&1
		rc=$?
		grep -q "no TCP connection" /tmp/mw-cli.$2 || break
	done
	cat /tmp/mw-cli.$2
	n=$(grep -cE '^(ok|FAIL|skip) ' /tmp/mw-cli.$2)
	while [ "$n" -lt "$MW_N" ]; do
		n=$((n + 1))
		fail "mw-$1-missing-$n" "kite-rc client exit $rc before printing all results: $(tail -n 2 /tmp/mw-cli.$2 | tr '\n' ' ')"
	done
	tool_exit "mw-$1-client-exit" $rc /tmp/mw-cli.$2
}

run_mw() {
	if [ "$KITE_VM" = a ]; then
		mw_client kite-req 18650
		mw_server rxe-req 18651
	else
		mw_server kite-req 18650
		mw_client rxe-req 18651
	fi
}
