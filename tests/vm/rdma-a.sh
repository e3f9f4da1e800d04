# SPDX-License-Identifier: GPL-2.0
# Guest "a" of the RDMA groups (tests/vm/run.sh rdma, rdma-rxe): the client
# side of every RC data path check, first against guest b (rdma-b.sh, whose
# agent runs the servers), then in this guest alone (loopback: client and
# server on one device). Each part runs ibv_rc_pingpong -c, the perftest set
# with all sizes, kite-rc func (every opcode and error completion) and a
# clean kite-rc bulk run (10,000 WRITE + SEND messages, every byte
# verified), then a bulk run with 5% of RoCE frames dropped. Between the
# two guests also kite-rc mw (memory windows and rereg_mr: b's windows
# accessed from a), kite-rc ex (the same RC traffic through ibv_wr_* and
# ibv_start_poll) and ibv_rc_pingpong -c -N (its ibv_wr_* sends), rdma_cm: rping -V, ucmatose, udaddy,
# ib_send_bw -R, ib_write_bw -R and ib_read_lat -R over IPv4 and IPv6
# addresses, with a as client and as server (cm_pair, rdma-lib.sh),
# ibv_ud_pingpong over IPv4 and IPv6 GIDs each way, and
# tests/vm/kite-ud.c with each guest as the UD sender, UCX's ud_verbs
# (ucx_info, ucx_perftest: rdma-ucx.sh), Open MPI (mpirun with the UCX
# PML, tests/vm/kite-mpi.c: rdma-mpi.sh), and last the link taken down
# during an rping (pair_linkdown).
#   RDMA_KIND=kite: the Kite NICs; the host hook rdma.hook sets the kite
#     device's x-wire-drop-ppm (both guests) or a's link when asked
#     (host_call) and answers over the second serial port.
#   RDMA_KIND=rxe: Soft-RoCE on the virtio-net NICs (the same checks, a
#     baseline for the checks themselves); loss comes from netem on both
#     virtio netdevs; the loopback lossy run is skipped (rxe loopback does
#     not pass through the netdev).
. /kite/lib.sh
. /kite/rdma-lib.sh
. /kite/rdma-ucx.sh
. /kite/rdma-mpi.sh
BULK_N=${BULK_N:-10000}
FUNC=$(kite-rc count func)
MW=$(kite-rc count mw)
EX=$(kite-rc count ex)
S=$((RDMA_SUITE_RESULTS + FUNC + 1))
CM_TOOLS="rping ucmatose udaddy ib_send_bw ib_write_bw ib_read_lat"
KUD=$(kite-ud count)
# cm: 6 tools x 2 address families x 2 roles, + v6-up; ibv_ud_pingpong
# (4); kite-ud: a as sender (KUD results), b as sender (KUD results), each
# side's exit statuses (4); mckey (MCKEY_N); the link-down check (4).
MCKEY_N=4
CM_N=$((6 * 2 * 2 + 1 + 4 + 2 * KUD + 4 + MCKEY_N + 4))
plan $((2 * S + 11 + CM_N + MW + EX + 1 + UCX_N + MPI_N))

case $RDMA_KIND in
kite) ME=198.18.0.1 PEER=198.18.0.2 ME6=2001:db8::1 PEER6=2001:db8::2 ;;
*) ME=198.18.1.1 PEER=198.18.1.2 ME6=2001:db8:1::1 PEER6=2001:db8:1::2 ;;
esac
host_listen
# (not in $(...): rdma_up sets DEV, GIDX, NETDEV)
if rdma_up "$RDMA_KIND" $ME >/tmp/rdma-up.log 2>&1; then ok rdma-up; cat /tmp/rdma-up.log; else
	fail rdma-up "$(cat /tmp/rdma-up.log)"
	finish
fi

# perftest (25.01, scripts/build-perftest.sh) must load our rdma-core
# libraries, all found.
bad=
for t in $PERFTEST_BW $PERFTEST_LAT ib_atomic_bw ibv_rc_pingpong kite-rc; do
	out=$(ldd /usr/bin/$t 2>&1) || bad="$bad $t: ldd failed;"
	echo "$out" | grep -q 'not found' && bad="$bad $t: $(echo "$out" | grep 'not found' | tr '\n' ' ');"
	echo "$out" | grep -Eq 'libibverbs.so.1 => (/usr)?/lib/x86_64-linux-gnu/libibverbs.so.1 ' ||
		bad="$bad $t: no libibverbs.so.1;"
done
cmp -s /usr/lib/x86_64-linux-gnu/libibverbs.so.1 /usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.56.1 ||
	bad="$bad libibverbs.so.1 is not rdma-core 56.1's;"
# perftest 25.01.0 calls itself 6.24 (its configure.ac).
v=$(ib_send_bw --version 2>&1)
[ "$v" = "Version: 6.24" ] || bad="$bad ib_send_bw --version: '$v', not perftest 25.01's 6.24;"
[ -z "$bad" ] && ok tools-ldd || fail tools-ldd "$bad"

# loss_count: frames lost on purpose so far on this guest's RDMA path.
loss_count() {
	local c=/sys/class/infiniband/$DEV/ports/1/hw_counters
	case $RDMA_KIND in
	kite)
		if [ -r $c/wire_dropped ]; then cat $c/wire_dropped
		else cat $c/retransmits 2>/dev/null || echo 0; fi
		;;
	*) $TC -s qdisc show dev "$NETDEV" 2>/dev/null |
		awk '/dropped/ { for (i = 1; i < NF; i++) if ($i ~ /dropped$/) { sub(",", "", $(i + 1)); print $(i + 1); exit } }' ;;
	esac
}
TC=/usr/sbin/tc
DROP_N=0
# set_drop PPM HOSTS: drop PPM parts per million of RoCE frames on this
# guest (and on the peer when HOSTS is "both"). One result drop-N.
set_drop() {
	local ppm=$1 who=$2 ans pct
	DROP_N=$((DROP_N + 1))
	if [ "$RDMA_KIND" = kite ]; then
		# (host_call prints the request line: not in $(...).)
		if host_call drop $ppm $who; then ok drop-$DROP_N; else
			fail drop-$DROP_N "host hook: $HOST_ANS"
		fi
		return
	fi
	pct=$((ppm / 10000))
	if [ "$ppm" -gt 0 ]; then
		# (no kernel module auto-loading here: load netem first)
		set -- "modprobe sch_netem && $TC qdisc replace dev \$NETDEV root netem loss $pct%"
	else
		set -- "$TC qdisc del dev \$NETDEV root 2>/dev/null; true"
	fi
	if ! ans=$(eval "$1" 2>&1); then fail drop-$DROP_N "$ans"; return; fi
	if [ "$who" = both ]; then
		ans=$(agent_call $PEER 30 "SH - $1")
		case $ans in
		"RC 0"*) ;;
		*) fail drop-$DROP_N "peer: $ans"; return ;;
		esac
	fi
	ok drop-$DROP_N
}

# lossy_bulk HOST PEER_ADDR TAG PORT: bulk with frames dropped; the loss
# counter must have moved (else the run proved nothing about loss).
lossy_bulk() {
	local before after
	before=$(loss_count)
	kite_rc "$1" $4 "$2" bulk "$3-lossy-rc" -n $BULK_N
	after=$(loss_count)
	echo "info: $3 lossy bulk: loss counter $before -> $after"
	if [ "${after:-0}" -gt "${before:-0}" ]; then ok "$3-lossy-frames-lost"; else
		fail "$3-lossy-frames-lost" "loss counter did not move ($before -> $after): nothing was dropped"
	fi
}

# ---- rdma_cm and UD between the two guests ---------------------------------
# (the rdma_cm runs themselves: cm_pair, rdma-lib.sh)

# ud_pingpong_pair: ibv_ud_pingpong -c (both sides check every message's
# data) between a and b over IPv4 and IPv6 GIDs (its TCP exchange uses
# IPv4), a as client (b's agent runs the server) and as server (b's agent
# runs the client, retried while a's server is not listening yet).
# Results pair-ud_pingpong-v4|v6-a-client|server (4).
UDPP_ARGS="-c -s 1024 -n 200"
ud_pingpong_pair() {
	local fam gid gidb port=18680 ans rc
	for fam in v4 v6; do
		if [ $fam = v4 ]; then gid=$GIDX gidb='$GIDX'; else gid=$GIDX6 gidb='$(cat /tmp/gidx6)'; fi
		cs_run pair-ud_pingpong-$fam-a-client $PEER $port \
			"ibv_ud_pingpong -d \$DEV -g $gidb -p \$PORT $UDPP_ARGS" \
			"ibv_ud_pingpong -d \$DEV -g $gid -p \$PORT $UDPP_ARGS $PEER"
		port=$((port + 1))
		timeout 120 ibv_ud_pingpong -d $DEV -g $gid -p $port $UDPP_ARGS >/tmp/udpp.$port 2>&1 &
		ans=$(agent_call $PEER 150 "SH - for i in \$(seq 1 60); do timeout 60 ibv_ud_pingpong -d \$DEV -g $gidb -p $port $UDPP_ARGS $ME >/tmp/udc.$port 2>&1; rc=\$?; grep -q \"Couldn't connect\" /tmp/udc.$port || break; sleep 1; done; tail -n 4 /tmp/udc.$port; exit \$rc")
		wait $!
		rc=$?
		grep iters /tmp/udpp.$port
		if [ $rc -eq 0 ] && grep -q iters /tmp/udpp.$port && [ "$(echo "$ans" | head -n 1)" = "RC 0" ]; then
			ok pair-ud_pingpong-$fam-a-server
		else
			fail pair-ud_pingpong-$fam-a-server "server exit $rc: $(tail -n 2 /tmp/udpp.$port | tr '\n' ' '); client on b: $(echo "$ans" | tr '\n' ' ')"
		fi
		port=$((port + 1))
	done
}

# kite_ud_pair: tests/vm/kite-ud.c with a as sender (b's agent runs the
# receiver), then b as sender (a's receiver in the background). The
# senders print the results (KUD each); every side's exit status is one
# result more: pair-kite-ud-a-sender-exit, pair-kite-ud-b-receiver,
# pair-kite-ud-b-sender-exit, pair-kite-ud-a-receiver.
kite_ud_pair() {
	local port=18690 ans n rc src
	ans=$(agent_call $PEER 30 "START $port kite-ud -d \$DEV -g \$GIDX -6 \$(cat /tmp/gidx6) -p \$PORT -t 140")
	case $ans in READY*) ;; *) echo "info: kite-ud receiver on b did not start: ${ans:-no answer}" ;; esac
	timeout 150 kite-ud -d $DEV -g $GIDX -6 $GIDX6 -p $port -t 140 -P pair-kite-ud-a-send $PEER >/tmp/kud.out 2>&1
	rc=$?
	cat /tmp/kud.out
	tool_exit pair-kite-ud-a-sender-exit $rc /tmp/kud.out
	ans=$(agent_call $PEER 180 "WAIT $port")
	echo "$ans" | sed 's/^/# b receiver: /'
	src=$(echo "$ans" | head -n 1)
	if [ "$src" = "RC 0" ]; then ok pair-kite-ud-b-receiver; else
		fail pair-kite-ud-b-receiver "${src:-no answer}: $(echo "$ans" | tail -n 2 | tr '\n' ' ')"
	fi
	port=$((port + 1))
	timeout 150 kite-ud -d $DEV -g $GIDX -6 $GIDX6 -p $port -t 140 >/tmp/kud-r.out 2>&1 &
	ans=$(agent_call $PEER 180 "SH - timeout 150 kite-ud -d \$DEV -g \$GIDX -6 \$(cat /tmp/gidx6) -p $port -t 140 -P pair-kite-ud-b-send $ME")
	wait $!
	rc=$?
	echo "$ans" | tail -n +2 >/tmp/kud-b.out
	cat /tmp/kud-b.out
	src=$(echo "$ans" | head -n 1)
	tool_exit pair-kite-ud-b-sender-exit "${src#RC }" /tmp/kud-b.out
	sed 's/^/# a receiver: /' /tmp/kud-r.out
	cat /tmp/kud-b.out >>/tmp/kud.out
	n=$(grep -cE '^(ok|FAIL|skip) pair-kite-ud-[ab]-send-' /tmp/kud.out)
	while [ "$n" -lt $((2 * KUD)) ]; do
		n=$((n + 1))
		fail pair-kite-ud-missing-$n "kite-ud ended before printing all results"
	done
	failures=$((failures + $(grep -c '^FAIL pair-kite-ud-[ab]-send-' /tmp/kud.out)))
	if [ $rc -eq 0 ]; then ok pair-kite-ud-a-receiver; else
		fail pair-kite-ud-a-receiver "exit $rc: $(grep -v '^#' /tmp/kud-r.out | tail -n 2 | tr '\n' ' ')"
	fi
}

# mckey_v4 SENDER GROUP: librdmacm's mckey over an IPv4 group: the
# receiver (the other guest) joins, posts MCKEY_C receives and waits for
# them all; once it has joined, the sender joins and sends MCKEY_C UD
# datagrams to the group (QP 0xFFFFFF, the group's MAC). One result,
# pair-mckey-v4-SENDER-send: both exited 0 and the receiver got them all.
MCKEY_C=10
MCKEY_ARGS="-C $MCKEY_C -S 512"
# mckey_join_sh GROUP RC: one line of shell: wait (30 s at most) until
# rdma_cm has joined GROUP on the netdev (its IGMP join comes with the
# attach; mckey's own words are buffered until it exits, and it waits 3 s
# after joining before it sends or polls) (status 0) or the mckey has
# ended (RC exists; status 1).
mckey_join_sh() {
	echo "i=0; while [ \$i -lt 150 ]; do \$IP maddr show dev \"\$NETDEV\" | grep -qE 'inet +$1( |\$)' && exit 0; [ -f $2 ] && exit 1; usleep 200000; i=\$((i + 1)); done; exit 1"
}
# mckey_done_sh OUT RC: wait (90 s at most) for the receiver's end; print
# its status and the end of its output.
mckey_done_sh() {
	echo "i=0; while [ ! -f $2 ] && [ \$i -lt 450 ]; do usleep 200000; i=\$((i + 1)); done; cat $2 2>/dev/null || echo none; grep -c 'data transfers complete' $1; tail -n 3 $1"
}
mckey_v4() {
	local who=$1 grp=$2 name=pair-mckey-v4-$1-send ans rc rrc
	if [ "$who" = a ]; then
		ans=$(agent_call $PEER 30 "SH - rm -f /tmp/mck.rc; (timeout 90 mckey -m $grp -b $PEER $MCKEY_ARGS >/tmp/mck.out 2>&1; echo \$? >/tmp/mck.rc) </dev/null >/dev/null 2>&1 &")
		ans=$(agent_call $PEER 40 "SH - $(mckey_join_sh $grp /tmp/mck.rc)")
		case $ans in "RC 0"*) ;; *) echo "info: $name: b has not joined: $ans" ;; esac
		timeout 60 mckey -m $grp -b $ME -s $MCKEY_ARGS >/tmp/mcs.out 2>&1
		rc=$?
		ans=$(agent_call $PEER 120 "SH - $(mckey_done_sh /tmp/mck.out /tmp/mck.rc)")
		rrc=$(echo "$ans" | sed -n 2p)
		ans="$(echo "$ans" | tail -n +3 | tr '\n' ' ')"
	else
		rm -f /tmp/mck.rc
		(timeout 90 mckey -m $grp -b $ME $MCKEY_ARGS >/tmp/mck.out 2>&1; echo $? >/tmp/mck.rc) &
		(eval "$(mckey_join_sh $grp /tmp/mck.rc)") || echo "info: $name: a has not joined"
		ans=$(agent_call $PEER 90 "SH - timeout 60 mckey -m $grp -b $PEER -s $MCKEY_ARGS")
		rc=$(echo "$ans" | head -n 1 | sed 's/^RC //')
		wait $!
		rrc=$(cat /tmp/mck.rc 2>/dev/null)
		ans="$(grep -c 'data transfers complete' /tmp/mck.out) $(tail -n 3 /tmp/mck.out | tr '\n' ' ')"
	fi
	echo "info: $name: sender exit $rc, receiver exit $rrc: $ans"
	if [ "$rc" = 0 ] && [ "$rrc" = 0 ] && [ "${ans%% *}" = 1 ]; then ok $name; else
		fail $name "sender exit $rc$(tail -n 2 /tmp/mcs.out 2>/dev/null | tr '\n' ' '), receiver exit $rrc: $ans"
	fi
}

# mckey_v6 SENDER: an IPv6 group. Linux 6.1's rdma_cm refuses every
# RoCE v2 IPv6 multicast join (cma_iboe_join_multicast(): -ENOTSUPP,
# errno 524) whatever the device, so mckey cannot run over IPv6: the
# result is a skip when mckey's join fails that way, a failure otherwise
# (IPv6 groups themselves are covered through verbs: kite-ud's mcast-v6).
mckey_v6() {
	local name=pair-mckey-v6-$1-send out
	out=$(timeout 30 mckey -m ff0e::4b:1 -b $ME6 -s $MCKEY_ARGS 2>&1)
	if echo "$out" | grep -q 'failure joining: Unknown error 524'; then
		skip $name "Linux 6.1 rdma_cm refuses RoCE v2 IPv6 multicast joins (ENOTSUPP)"
	else
		fail $name "mckey over IPv6 did not fail as rdma_cm 6.1 does: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
	fi
}

cm_suite() {
	local fam tool port=7100 ans
	modprobe rdma_ucm
	# IPv6: b added its address and wrote its GID index to /tmp/gidx6
	# (rdma-b.sh); a's own here.
	ans=$(agent_call $PEER 30 "SH - cat /tmp/gidx6")
	if $IP -6 addr add $ME6/64 dev "$NETDEV" nodad && wait_until 10 gid6_of $DEV $ME6 &&
		[ "$(echo "$ans" | head -n 1)" = "RC 0" ]; then
		GIDX6=$(gid6_of $DEV $ME6)
		ok pair-v6-up
	else
		fail pair-v6-up "IPv6 $ME6: GID index '$(gid6_of $DEV $ME6)'; b's GID index: $(echo "$ans" | tr '\n' ' ')"
		# No IPv4 stand-in: the IPv6 runs must fail, not pass over IPv4.
		GIDX6=none
	fi
	for fam in v4 v6; do
		for tool in $CM_TOOLS; do
			cm_pair pair-cm-$tool-$fam-a-client client $tool $fam $port
			port=$((port + 1))
			cm_pair pair-cm-$tool-$fam-a-server server $tool $fam $port
			port=$((port + 1))
		done
	done
	ud_pingpong_pair
	kite_ud_pair
	mckey_v4 a 239.75.0.1
	mckey_v4 b 239.75.0.2
	mckey_v6 a
	mckey_v6 b
}

# pair_linkdown: link down on a's Kite port during an endless rping -V
# (a the client, b's server started through its agent), LINK_DOWN_SECS
# long. Both sides are Kite. rping runs in lock step, so when the link goes
# down one side has an operation outstanding: its QP must exhaust its 7
# retries (rdma_cm's ACK timeout is about 0.5 s) and complete it with
# RETRY_EXC_ERR, and that rping must exit with the error rather than hang.
# The other side waits for a message from its peer with nothing
# outstanding; as on any RC device without keepalives it learns nothing
# (its peer's DREQ was sent while the link was down, and rping destroys
# its cm_id at once, which cancels ib_cm's retries), so it is stopped here.
# Then, once the port is ACTIVE again, a new connection must work.
# Results: pair-link-off, pair-link-on, pair-linkdown-error,
# pair-linkup-rping (4).
LINK_DOWN_SECS=${LINK_DOWN_SECS:-20}
LINK_END_SECS=${LINK_END_SECS:-60}
# rping's words on how it ended (its pings are on the same lines).
LD_PAT='cq completion failed status [0-9]+|[A-Z_]+ EVENT|rping [a-z]+ failed: -?[0-9]+'
# peer_listening TOOL PORT: TOOL listens on rdma_cm PORT on $PEER.
peer_listening() {
	case $(agent_call $PEER 10 "SH - $(cm_listen_sh "$1" "$2")") in
	"RC 0"*) return 0 ;;
	esac
	return 1
}

pair_linkdown() {
	local port=7290 pid crc src ans i
	if [ "$RDMA_KIND" != kite ]; then
		for i in link-off link-on linkdown-error linkup-rping; do
			skip pair-$i "the link-down check needs the kite host hook (set_link)"
		done
		return
	fi
	ans=$(agent_call $PEER 30 "SH - rm -f /tmp/srv.$port /tmp/srv.$port.rc; (timeout $((LINK_DOWN_SECS + LINK_END_SECS + 200)) rping -s -v -a $PEER -p $port -V -S 1000 >/tmp/srv.$port 2>&1 & echo \$! >/tmp/srv.$port.pid; wait \$!; echo \$? >/tmp/srv.$port.rc) </dev/null >/dev/null 2>&1 &")
	# The client starts once b's server listens (else ib_cm rejects its
	# REQ: no listener).
	wait_until 30 peer_listening rping $port ||
		echo "info: pair-link-off: b's rping server does not listen on $port"
	rping_connected pair-link-off $((LINK_DOWN_SECS + LINK_END_SECS + 120)) /tmp/ld.out -a $PEER -p $port -V -S 1000
	pid=$RPING_PID
	if kill -0 $pid 2>/dev/null && rping_rts && host_call link off; then ok pair-link-off; else
		fail pair-link-off "server on b: $(echo "$ans" | head -n 1); rping client: $(tail -n 2 /tmp/ld.out | tr '\n' ' '); host: ${HOST_ANS:-not asked}"
	fi
	sleep $LINK_DOWN_SECS
	if host_call link on && wait_until 30 dev_active $DEV; then ok pair-link-on; else
		fail pair-link-on "host: $HOST_ANS; $DEV port $(cat /sys/class/infiniband/$DEV/ports/1/state 2>&1)"
	fi
	# Give the side that held the operation LINK_END_SECS after link up.
	i=0
	while kill -0 $pid 2>/dev/null && [ $i -lt $((LINK_END_SECS * 5)) ]; do
		ans=$(agent_call $PEER 10 "SH - test -f /tmp/srv.$port.rc")
		case $ans in "RC 0"*) break ;; esac
		sleep 1
		i=$((i + 5))
	done
	if kill -0 $pid 2>/dev/null; then
		kill $pid 2>/dev/null
		wait $pid
		crc="running"
	else
		wait $pid
		crc=$?
	fi
	ans=$(agent_call $PEER 30 "SH - [ -f /tmp/srv.$port.rc ] || { kill \$(cat /tmp/srv.$port.pid); sleep 1; }; cat /tmp/srv.$port.rc 2>/dev/null || echo none; grep -oE '$LD_PAT' /tmp/srv.$port")
	src=$(echo "$ans" | sed -n 2p)
	echo "info: rping client (a): $crc, $(grep -c '^ping data' /tmp/ld.out) pings: $(grep -oE "$LD_PAT" /tmp/ld.out | tr '\n' ' ')"
	echo "info: rping server (b): $src: $(echo "$ans" | tail -n +3 | tr '\n' ' ')"
	# The side that exited first must have exited with a transport
	# error (rping: "cq completion failed status 12", IBV_WC_RETRY_EXC_ERR).
	if [ "$crc" != running ] && [ "$crc" != 0 ] && [ "$crc" != 124 ] &&
		grep -q 'completion failed status 12' /tmp/ld.out; then
		ok pair-linkdown-error
	# b held it: b's error tears the connection down, so a's rping may
	# also have ended by now, cleanly on b's DISCONNECT.
	elif { [ "$crc" = running ] || [ "$crc" = 0 ]; } &&
		echo "$ans" | grep -q 'completion failed status 12' &&
		! echo "$src" | grep -qE '^(0|124|143|none)$'; then
		ok pair-linkdown-error
	else
		fail pair-linkdown-error "neither rping ended with RETRY_EXC_ERR within $LINK_END_SECS s of link up: client $crc, server $src"
	fi
	cm_pair pair-linkup-rping client rping v4 $((port + 1))
}

# ---- two guests -----------------------------------------------------------------
rdma_suite $PEER $PEER pair
kite_rc $PEER 18720 $PEER mw pair-rc
kite_rc $PEER 18721 $PEER ex pair-rc
cs_run pair-rc_pingpong-N $PEER 18722 \
	'ibv_rc_pingpong -d $DEV -g $GIDX -p $PORT -c -N -n 50 -s 4096' \
	"ibv_rc_pingpong -d \$DEV -g \$GIDX -p \$PORT -c -N -n 50 -s 4096 $PEER"
set_drop 50000 both
lossy_bulk $PEER $PEER pair 18700
set_drop 0 both
cm_suite
ucx_suite
mpi_suite
pair_linkdown
ans=$(agent_call $PEER 30 "SH - touch /tmp/agent.quit")
case $ans in "RC 0"*) ok peer-quit ;; *) fail peer-quit "peer agent: ${ans:-no answer}" ;; esac

# ---- one guest: loopback through its own device ------------------------------------
agent_start
rdma_suite 127.0.0.1 $ME one
if [ "$RDMA_KIND" = kite ]; then
	set_drop 50000 self
	lossy_bulk 127.0.0.1 $ME one 18710
else
	skip drop-$((DROP_N + 1)) "rxe loopback does not go through the netdev (no netem loss)"
	skip one-lossy-rc-bulk "rxe loopback: no loss to inject"
	skip one-lossy-frames-lost "rxe loopback: no loss to inject"
fi
[ "$RDMA_KIND" = kite ] && host_call end
agent_stop
bad=$(dmesg_bad)
[ -z "$bad" ] && ok dmesg-clean || fail dmesg-clean "$(echo "$bad" | head -n 3)"
finish
