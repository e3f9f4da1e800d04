# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash disable=SC2034,SC2086,SC2153
# Part "cm" of the interop group (sourced by interop.sh, which sets KIND,
# DEV, GIDX, GIDX6, ME, ME6, PEER and defines host_call): connection
# management over rdma_cm (ib_core's CM on the GSI QP, QP1) between Kite
# (guest a) and Soft-RoCE (guest b), every tool with each side as client and
# as server, over IPv4 and over IPv6 addresses:
#   rping -V       RC SENDs and RDMA READ/WRITE, every ping's data verified
#   ucmatose       RC connections (2 of them), SENDs both ways
#   udaddy         UD: SIDR resolution, UD SENDs (2 "connections")
#   ib_send_bw -R, ib_write_bw -R, ib_read_lat -R  perftest 25.01 over
#                  rdma_cm (IPv6 addresses with --ipv6-addr)
# Results, on each guest: cm-TOOL-v4|v6-KIND-client|server (24). The
# guests run these in lock step (cm_step): the client starts only once the
# peer's server listens, and both exit statuses are swapped over TCP port
# 7197 (peer_xchg); a failed run is not tried again (but a perftest run
# that failed only on the CPU clock is repeated, cm_step).
# Then, on guest a only (n_cm is per guest): link down on the Kite port
# during an endless rping (Kite as client, rxe as server; once its QP is
# in RTS, so the pings run): the host hook
# (interop.hook act_link) runs "set_link n0 off" for CM_LINK_DOWN_SECS,
# then "set_link n0 on"; within CM_LINK_SECS rping must have exited with
# an error or resumed its pings (not hang); once the port is ACTIVE again
# a new rping connection (-V, 20 pings) must work:
#   cm-link-off, cm-link-on, cm-linkdown-no-hang, cm-linkup-rping  (a)
#   cm-linkdown-rxe-server (b: its persistent rping server, -P, served
#   both connections and a said it was done)
# The tools come with the image (scripts/mkinitramfs.sh: librdmacm's
# rping, ucmatose and udaddy from out/rdma-core; perftest 25.01 built
# against that librdmacm, out/perftest). rdma_cm needs the rdma_ucm
# module (no auto-loading here).
CM_TOOLS="rping ucmatose udaddy ib_send_bw ib_write_bw ib_read_lat"
CM_LINK_SECS=${CM_LINK_SECS:-60}
CM_LINK_DOWN_SECS=${CM_LINK_DOWN_SECS:-20}
if [ "$KITE_VM" = a ]; then n_cm=28; else n_cm=25; fi

case $KITE_VM in
a) CM_PEER6=2001:db8::2 ;;
*) CM_PEER6=2001:db8::1 ;;
esac
# cm_run's client runs again (90 s at most, each new try a reported retry)
# only while it could not resolve the address or route: no REQ went out.
# A reject (no listener: its server listens throughout) or an UNREACHABLE
# (a REQ or REP that timed out) fails.
CM_RETRY='RDMA_CM_EVENT_ADDR_ERROR|RDMA_CM_EVENT_ROUTE_ERROR'

# cm_cmd_here TOOL FAM ROLE PORT: cm_cmd (rdma-lib.sh) for this guest:
# its own address as server, the peer's as client.
cm_cmd_here() {
	local addr
	case $2:$3 in
	v4:server) addr=$ME ;;
	v4:client) addr=$PEER ;;
	v6:server) addr=$ME6 ;;
	*) addr=$CM_PEER6 ;;
	esac
	cm_cmd $1 $2 $3 $4 $addr $DEV
}

# cm_run NAME CMD: one client run (CMD) against a persistent server, one
# result NAME.
cm_run() {
	local name=$1 cmd=$2 rc end try=0 t0 w
	t0=$(date +%s)
	end=$((t0 + 90))
	while :; do
		try=$((try + 1))
		timeout 60 $cmd >/tmp/cm.out 2>&1
		rc=$?
		[ $rc -eq 0 ] && break
		w=$(grep -m 1 -E "$CM_RETRY" /tmp/cm.out) || break
		[ "$(date +%s)" -lt $end ] || break
		retry "$name" "client could not resolve (exit $rc: $w); trying again"
		sleep 1
	done
	# rping -V says "data mismatch" (and fails) when a ping differs.
	if [ $rc -eq 0 ] && grep -qi mismatch /tmp/cm.out; then rc=99; fi
	echo "info: $name: $cmd: exit $rc after $(($(date +%s) - t0)) s ($try tries)"
	grep -A1 -E '#bytes' /tmp/cm.out | tail -n 1
	if [ $rc -eq 0 ]; then ok "$name"; else
		tail -n 8 /tmp/cm.out | sed 's/^/# /'
		fail "$name" "exit $rc$([ $rc -eq 124 ] && echo ' (timeout)'): $(grep -v '^[[:space:]]*$' /tmp/cm.out | tail -n 3 | tr '\n' ' ')"
	fi
}

# The lock-step runs of run_cm. A client started before its server
# listens is rejected (REJ reason 8, no listener), and retrying such a
# client is not safe with several connections per run (ucmatose -c 2):
# when the server starts listening between the client's two REQs, the
# first is rejected, so the client exits and its ib_cm aborts the second,
# which the server has just accepted; the server's rdma_create_qp (ib_cm
# has no QP attributes for an aborted ID) or rdma_accept then fails with
# EINVAL, "failing connection request", and the server exits while the
# client retries against nobody (seen twice in a loop of about 210 runs,
# both with rxe as the server; a test artefact, not a Kite or rxe fault;
# had the second connection been established first, the server would
# count it and fail the next try's extra one). So the server side starts
# its server, waits until its rdma_cm ID listens (rdma res cm_id) and says
# so over TCP (peer_xchg, interop.sh); only then does the client run,
# once. Afterwards both sides swap their exit statuses, so that each
# reports what the other saw; a failed run is not tried again (the
# perftest faults that made one fail now and then, its -R server listening
# only after its sync and its client's retry on freed IDs, are fixed by
# patches/perftest/0001).

# cm_listening TOOL PORT: TOOL listens on rdma_cm PORT (cm_listen_sh).
cm_listening() { eval "$(cm_listen_sh "$1" "$2")"; }

# cm_srv_up PID TOOL PORT: the server listens, or its process is gone.
cm_srv_up() {
	! kill -0 $1 2>/dev/null || cm_listening $2 $3
}

# cm_once ROLE TOOL FAM PORT: one run in step with the peer (the server
# listens before the client starts). Sets CM_RC and CM_CMD; the output is
# in /tmp/cm.out.
cm_once() {
	local role=$1 tool=$2 fam=$3 port=$4 tag="$2-$3-$4" pid mine=ready word
	CM_CMD=$(cm_cmd_here $tool $fam $role $port)
	if [ "$role" = server ]; then
		timeout 120 $CM_CMD >/tmp/cm.out 2>&1 &
		pid=$!
		wait_until 30 cm_srv_up $pid $tool $port
		cm_listening $tool $port || mine=not-listening
		word=$(peer_xchg "$tag $mine")
		# No client comes: do not wait for the server's timeout.
		if [ $mine != ready ] || [ "$word" != "$tag go" ]; then
			kill $pid 2>/dev/null
			echo "cm: server $mine, the peer's word '$word'" >>/tmp/cm.out
		fi
		wait $pid
		CM_RC=$?
	else
		word=$(peer_xchg "$tag go")
		if [ "$word" = "$tag ready" ]; then
			timeout 60 $CM_CMD >/tmp/cm.out 2>&1
			CM_RC=$?
		else
			echo "cm: no server: the peer's word '$word', not '$tag ready'" >/tmp/cm.out
			CM_RC=98
		fi
	fi
	# rping -V says "data mismatch" (and fails) when a ping differs.
	if [ $CM_RC -eq 0 ] && grep -qi mismatch /tmp/cm.out; then CM_RC=99; fi
}

# cm_step NAME ROLE TOOL FAM PORT: one result from a run in step with the
# peer; the peer's exit status is printed with it. A perftest run that
# failed only on the CPU clock (pt_state, interop.sh) is repeated by both
# sides on port PORT + 50 * TRY, PT_CLOCK_TRIES tries at most, each repeat
# a reported retry.
cm_step() {
	local name=$1 role=$2 tool=$3 fam=$4 port=$5 t0 word try=1 mine theirs
	t0=$(date +%s)
	while :; do
		cm_once $role $tool $fam $port
		mine=$(pt_state $CM_RC /tmp/cm.out)
		word=$(peer_xchg "$tool-$fam-$port exit $CM_RC $mine")
		echo "info: $name: $CM_CMD: exit $CM_RC after $(($(date +%s) - t0)) s (peer: ${word:-no word})"
		theirs=none
		case $word in "$tool-$fam-$port exit "*) theirs=${word##* } ;; esac
		clock_repeat $mine $theirs $try || break
		retry "$name" "perftest could not sample the CPU clock (this side $mine, exit $CM_RC; the peer $theirs; try $try of $PT_CLOCK_TRIES)"
		try=$((try + 1))
		port=$((port + 50))
	done
	grep -A1 -E '#bytes' /tmp/cm.out | tail -n 1
	if [ $CM_RC -eq 0 ]; then ok "$name"; else
		tail -n 8 /tmp/cm.out | sed 's/^/# /'
		fail "$name" "exit $CM_RC$([ $CM_RC -eq 124 ] && echo ' (timeout)'), peer: '${word:-no word}': $(grep -v '^[[:space:]]*$' /tmp/cm.out | tail -n 3 | tr '\n' ' ')"
	fi
}

# cm_linkdown: guest a's endless rping against b's persistent rping server
# (-P: one server for the connection cut by the link down and the new one
# after link up), link off, then on, then a new connection; a then tells b
# over TCP (port 7199) that it is done, and b stops its server. b's result:
# that word came in time, its server still running.
cm_linkdown() {
	local port=7190 pid rc i off
	if [ "$KITE_VM" != a ]; then
		timeout $((CM_LINK_DOWN_SECS + CM_LINK_SECS + 300)) rping -s -P -a $ME -p $port -V -S 1000 >/tmp/cm-ld.out 2>&1 &
		pid=$!
		# The client starts once the server listens (else ib_cm
		# rejects its REQ: no listener).
		wait_until 30 cm_srv_up $pid rping $port
		if cm_listening rping $port; then rc=ready; else rc=not-listening; fi
		peer_xchg "linkdown $rc" >/dev/null
		rc=$(timeout $((CM_LINK_DOWN_SECS + CM_LINK_SECS + 280)) $NC -l 7199 2>/dev/null)
		if [ "$rc" = "done" ] && kill -0 $pid 2>/dev/null; then ok cm-linkdown-$KIND-server; else
			fail cm-linkdown-$KIND-server "word from a: '$rc'; server: $(kill -0 $pid 2>/dev/null && echo running || echo gone): $(tail -n 3 /tmp/cm-ld.out | tr '\n' ' ')"
		fi
		kill $pid 2>/dev/null
		wait $pid
		echo "info: rxe persistent rping server: $(tail -n 3 /tmp/cm-ld.out | tr '\n' ' ')"
		return
	fi
	rc=$(peer_xchg "linkdown go")
	[ "$rc" = "linkdown ready" ] || echo "info: cm-link-off: the rxe server says '$rc', not 'linkdown ready'"
	rping_connected cm-link-off $((CM_LINK_DOWN_SECS + CM_LINK_SECS + 120)) /tmp/cm-ld.out -a $PEER -p $port -V -S 1000
	pid=$RPING_PID
	off=no
	if kill -0 $pid 2>/dev/null && rping_rts && host_call link off; then ok cm-link-off; off=yes; else
		fail cm-link-off "rping client not connected ($(tail -n 2 /tmp/cm-ld.out | tr '\n' ' ')) or host: ${HOST_ANS:-not asked}"
	fi
	# The link stays down CM_LINK_DOWN_SECS, longer than Kite's retry
	# budget at rdma_cm's ACK timeout (7 retries x ~0.5 s).
	i=0
	while kill -0 $pid 2>/dev/null && [ $i -lt $((CM_LINK_DOWN_SECS * 5)) ]; do
		usleep 200000
		i=$((i + 1))
	done
	if host_call link on && wait_until 30 dev_active $DEV; then ok cm-link-on; else
		fail cm-link-on "host: $HOST_ANS; $DEV port $(cat /sys/class/infiniband/$DEV/ports/1/state 2>&1)"
	fi
	# No hang: within CM_LINK_SECS of link up rping has either failed (its
	# QP or the peer's hit the retry limit: Kite's, or the CM's DREQ) or
	# resumed on the same connection (Soft-RoCE treats retry_cnt 7 as
	# infinite, so when rxe held the outstanding operation it simply goes
	# on after link up; model.rst). Progress: rping -v prints every ping.
	lines=$(wc -l </tmp/cm-ld.out)
	i=0
	while kill -0 $pid 2>/dev/null && [ $i -lt $((CM_LINK_SECS * 5)) ]; do
		[ "$(wc -l </tmp/cm-ld.out)" -gt $((lines + 3)) ] && break
		usleep 200000
		i=$((i + 1))
	done
	if [ $off != yes ]; then
		kill $pid 2>/dev/null
		wait $pid
		fail cm-linkdown-no-hang "the link never went down under a running rping (cm-link-off)"
	elif kill -0 $pid 2>/dev/null; then
		if [ "$(wc -l </tmp/cm-ld.out)" -gt $((lines + 3)) ]; then
			echo "info: rping resumed on its connection after link up (the peer held the outstanding operation)"
			ok cm-linkdown-no-hang
		else
			fail cm-linkdown-no-hang "rping neither failed nor resumed $CM_LINK_SECS s after link up (a hang): $(tail -n 2 /tmp/cm-ld.out | tr '\n' ' ')"
		fi
		kill $pid 2>/dev/null
		wait $pid
	else
		wait $pid
		rc=$?
		echo "info: rping exited $rc: $(grep -v '^ping data' /tmp/cm-ld.out | tail -n 3 | tr '\n' ' ')"
		case $rc in
		0) fail cm-linkdown-no-hang "rping exited 0: no error reported" ;;
		124 | 143) fail cm-linkdown-no-hang "rping killed by its timeout (exit $rc)" ;;
		*) ok cm-linkdown-no-hang ;;
		esac
	fi
	cm_run cm-linkup-rping "rping -c -a $PEER -p $port -V -C 20 -S 1000"
	for i in 1 2 3 4 5 6 7 8 9 10; do
		echo "done" | timeout 5 $NC -N $PEER 7199 2>/dev/null && break
		sleep 1
	done
}

# a is the client first in each pair of runs, then the server (as in
# run_pingpong); each tool gets its own rdma_cm port.
run_cm() {
	local fam tool port=7100 first second
	modprobe rdma_ucm || echo "info: modprobe rdma_ucm failed"
	if [ "$KITE_VM" = a ]; then first=client second=server; else first=server second=client; fi
	for fam in v4 v6; do
		for tool in $CM_TOOLS; do
			cm_step cm-$tool-$fam-$KIND-$first $first $tool $fam $port
			port=$((port + 1))
			cm_step cm-$tool-$fam-$KIND-$second $second $tool $fam $port
			port=$((port + 1))
		done
	done
	cm_linkdown
}
