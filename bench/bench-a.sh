# SPDX-License-Identifier: GPL-2.0
# Guest "a" of bench/run.sh: the perftest clients. Transports (KIND), all in
# the same run between the same two guests:
#   kite      Kite (kite NIC kite0, 198.18.0.x) against Kite
#   kite-rxe  Kite here (second kite NIC kite1, 198.18.2.1) as the client,
#             Soft-RoCE on b (rxe1 on b's second virtio-net NIC) the server
#   rxe-kite  the same link the other way: Soft-RoCE on b is the client,
#             Kite here the server
#   rxe       Soft-RoCE (rxe0 on virtio-net, 198.18.1.x) against rxe
# BENCH_KINDS picks some (default all four, in that order). For each
# transport and each case of BENCH_CASES it runs the server and the client
# (one of them through b's agent) and prints one machine-readable line:
#   BENCH KIND TOOL SIZE value VALUE [VALUE2] tries=N
# bw tools: MB/s (BW average) and Mpps; lat tools: t_typical and t_avg in
# microseconds (the client's report). A run that prints 0.00 (perftest
# under TCG sometimes cannot sample the CPU clock) or fails is repeated up
# to 3 times; after that the line says FAILED. BENCH_REPEAT runs each case
# that many times (the host takes the median).
. /kite/lib.sh
. /kite/rdma-lib.sh
plan 5
RUN_TIMEOUT=${BENCH_RUN_TIMEOUT:-120}
REPEAT=${BENCH_REPEAT:-1}
[ -f /kite/cases.sh ] && . /kite/cases.sh
host_listen
B=198.18.1.2	# b's agent (any of b's addresses would do)

# up NAME KIND ADDR MAC TAG: one device (rdma_up_mac), one result; the
# transports that need it are dropped when it does not come up. Each NIC
# is picked by its MAC (vm.py passes them as KITE_MAC_<id>): with two kite
# NICs the first kite netdev found need not be kite_0's.
have=
up() {
	local n=$1
	shift
	if rdma_up_mac "$@" >/tmp/up.log 2>&1; then
		ok "$n"
		grep '^info:' /tmp/up.log
		have="$have $4"
	else
		fail "$n" "$(cat /tmp/up.log)"
	fi
}
up kite-up kite 198.18.0.1 "${KITE_MAC_kite0:-}" kite
up rxe-up rxe 198.18.1.1 "${KITE_MAC_virtio0:-}" rxe rxe0
up mix-up kite 198.18.2.1 "${KITE_MAC_kite1:-}" mix
kinds=
for k in ${BENCH_KINDS:-kite kite-rxe rxe-kite rxe}; do
	case $k in
	kite | rxe) t=$k ;;
	kite-rxe | rxe-kite) t=mix ;;
	*) echo "# BENCH_KINDS: unknown transport $k"; continue ;;
	esac
	case " $have " in *" $t "*) kinds="$kinds $k" ;; *) echo "# $k: its device did not come up" ;; esac
done
# TOOL:SIZE:ITERS per case, or TOOL:SIZE:ITERS:QPS to run perftest with
# -q QPS (reported as tool TOOL-qQPS, a row of its own).
CASES=${BENCH_CASES:-"ib_write_bw:64:2000 ib_write_bw:4096:1000 ib_write_bw:65536:200
ib_read_bw:64:2000 ib_read_bw:4096:1000 ib_read_bw:65536:200
ib_send_bw:64:2000 ib_send_bw:4096:1000 ib_send_bw:65536:200
ib_atomic_bw:8:1000
ib_write_lat:2:200 ib_write_lat:4096:200 ib_send_lat:2:200 ib_send_lat:4096:200
ib_read_lat:2:200 ib_read_lat:4096:200"}
port=19000

# tag_of KIND: the rdma_up_mac tag of KIND's devices (the same on a and b).
tag_of() { case $1 in kite | rxe) echo "$1" ;; *) echo mix ;; esac; }
# client_addr KIND: the address the client connects to (the server's).
server_addr() {
	case $1 in kite) echo 198.18.0.2 ;; rxe) echo 198.18.1.2 ;;
	kite-rxe) echo 198.18.2.2 ;; rxe-kite) echo 198.18.2.1 ;; esac
}

# pair KIND PORT CMD: one client/server run of CMD (a tool and its
# arguments; $DEV_TAG, $GIDX_TAG are expanded on each side) on PORT. For
# rxe-kite the server runs here and the client on b (agent SH), else the
# server on b (agent START) and the client here. The client's output goes
# to /tmp/bench.out; returns the client's exit status.
pair() {
	local kind=$1 PORT=$2 cmd=$3 ans rc spid
	if [ "$kind" != rxe-kite ]; then
		ans=$(agent_call $B 30 "START $PORT $cmd")
		case $ans in
		READY*) ;;
		*) echo "server on b: ${ans:-no answer}" >/tmp/bench.out; return 125 ;;
		esac
		eval "timeout $RUN_TIMEOUT $cmd $(server_addr "$kind")" >/tmp/bench.out 2>&1
		rc=$?
		# A failed client leaves its server waiting: stop it.
		[ $rc -eq 0 ] || { sleep 5; agent_call $B 30 "KILL $PORT" >/dev/null; }
		agent_call $B $((RUN_TIMEOUT + 30)) "WAIT $PORT" >/tmp/bench.srv
		return $rc
	fi
	# (cmd's words hold no spaces: split them here, so that $! is the tool.)
	eval "set -- $cmd"
	timeout "$RUN_TIMEOUT" "$@" >/tmp/bench.srv 2>&1 </dev/null &
	spid=$!
	if ! wait_until 20 sh -c "netstat -ltn | grep -q ':$PORT '"; then
		kill $spid 2>/dev/null
		wait $spid
		echo "server here did not listen: $(tail -n 2 /tmp/bench.srv | tr '\n' ' ')" >/tmp/bench.out
		return 125
	fi
	ans=$(agent_call $B $((RUN_TIMEOUT + 30)) "SH - timeout $RUN_TIMEOUT $cmd $(server_addr "$kind")")
	rc=$(echo "$ans" | sed -n '1s/^RC \([0-9]*\).*/\1/p')
	echo "$ans" | sed 1d >/tmp/bench.out
	[ "$rc" = 0 ] || { sleep 5; kill $spid 2>/dev/null; }
	wait $spid
	return "${rc:-125}"
}

# one KIND TOOL SIZE ITERS [QPS]: one measurement (with retries); prints
# BENCH.
one() {
	local kind=$1 tool=$2 size=$3 iters=$4 qps=${5:-} try=0 line v1 v2 args t
	local name=$tool${qps:+-q$qps}
	t=$(tag_of "$kind")
	while [ $try -lt 3 ]; do
		try=$((try + 1))
		port=$((port + 1))
		# The port literally: the agent's SH (rxe-kite) has no $PORT.
		args="-d \$DEV_$t -x \$GIDX_$t -p $port -F --use_old_post_send -n $iters"
		[ "$tool" = ib_atomic_bw ] || args="$args -s $size"
		[ -z "$qps" ] || args="$args -q $qps"
		pair "$kind" $port "$tool $args"
		rc=$?
		line=$(awk -v s="$size" '$1 == s && $2 ~ /^[0-9]+$/ { print; exit }' /tmp/bench.out)
		case $tool in
		*_lat) v1=$(echo "$line" | awk '{ print $5 }') v2=$(echo "$line" | awk '{ print $6 }') ;;
		*) v1=$(echo "$line" | awk '{ print $4 }') v2=$(echo "$line" | awk '{ print $5 }') ;;
		esac
		if [ $rc -eq 0 ] && [ -n "$v1" ] && [ "$v1" != 0.00 ] && [ "$v1" != inf ]; then
			echo "BENCH $kind $name $size value $v1 $v2 tries=$try"
			return 0
		fi
		echo "# $kind $name $size: try $try: exit $rc, result '${line:-none}': $(tail -n 2 /tmp/bench.out | tr '\n' ' ')"
	done
	echo "BENCH $kind $name $size FAILED"
	return 1
}

# Before its cases, a quick ibv_rc_pingpong decides whether a transport's
# data path works at all (if not, its cases are FAILED at once instead of
# timing out).
for kind in $kinds; do
	t=$(tag_of "$kind")
	port=$((port + 1))
	pair "$kind" $port "ibv_rc_pingpong -d \$DEV_$t -g \$GIDX_$t -p $port -n 20 -s 4096"
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "# $kind: ibv_rc_pingpong failed (exit $rc): $(tail -n 2 /tmp/bench.out | tr '\n' ' ')"
		for c in $CASES; do
			set -- $(echo "$c" | tr : ' ')
			echo "BENCH $kind $1${4:+-q$4} $2 FAILED"
		done
		continue
	fi
	r=0
	while [ $r -lt "$REPEAT" ]; do
		r=$((r + 1))
		for c in $CASES; do
			set -- $(echo "$c" | tr : ' ')
			one "$kind" "$1" "$2" "$3" "${4:-}"
		done
	done
done
echo "BENCH-DONE"
if [ -n "$kinds" ]; then ok bench-ran; else fail bench-ran "no transport to measure"; fi
ans=$(agent_call $B 30 "SH - touch /tmp/agent.quit")
case $ans in "RC 0"*) ok peer-quit ;; *) fail peer-quit "peer agent: ${ans:-no answer}" ;; esac
finish
