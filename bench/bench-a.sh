# SPDX-License-Identifier: GPL-2.0
# Guest "a" of bench/run.sh: the perftest clients. For each transport (Kite
# on the kite NICs, Soft-RoCE rxe on the virtio-net NICs; same two guests,
# same run) and each case of BENCH_CASES it runs the server on b (through
# b's agent) and the client here, and prints one machine-readable line:
#   BENCH KIND TOOL SIZE METRIC VALUE [VALUE2]
# bw tools: MB/s (BW average) and Mpps; lat tools: t_typical and t_avg in
# microseconds. A run that prints 0.00 (perftest under TCG sometimes cannot
# sample the CPU clock) or fails is repeated up to 3 times; after that the
# line says FAILED. BENCH_REPEAT runs each case that many times (the host
# takes the median).
. /kite/lib.sh
. /kite/rdma-lib.sh
plan 4
RUN_TIMEOUT=${BENCH_RUN_TIMEOUT:-120}
REPEAT=${BENCH_REPEAT:-1}
[ -f /kite/cases.sh ] && . /kite/cases.sh
host_listen
kinds=
if rdma_up kite 198.18.0.1 >/tmp/up.log 2>&1; then ok kite-up; kinds="kite"; else fail kite-up "$(cat /tmp/up.log)"; fi
if rdma_up rxe 198.18.1.1 >/tmp/up.log 2>&1; then ok rxe-up; kinds="$kinds rxe"; else fail rxe-up "$(cat /tmp/up.log)"; fi
# TOOL SIZE ITERS per case.
CASES=${BENCH_CASES:-"ib_write_bw:64:2000 ib_write_bw:4096:1000 ib_write_bw:65536:200
ib_read_bw:64:2000 ib_read_bw:4096:1000 ib_read_bw:65536:200
ib_send_bw:64:2000 ib_send_bw:4096:1000 ib_send_bw:65536:200
ib_atomic_bw:8:1000
ib_write_lat:2:200 ib_write_lat:4096:200 ib_send_lat:2:200 ib_send_lat:4096:200
ib_read_lat:2:200 ib_read_lat:4096:200"}
port=19000

# The peer's address on KIND's netdev.
peer_of() { [ "$1" = kite ] && echo 198.18.0.2 || echo 198.18.1.2; }

# one KIND TOOL SIZE ITERS: one measurement (with retries); prints BENCH.
one() {
	local kind=$1 tool=$2 size=$3 iters=$4 try=0 ans line v1 v2 args
	args="-d \$DEV_$kind -x \$GIDX_$kind -p \$PORT -F --use_old_post_send -s $size -n $iters"
	[ "$tool" = ib_atomic_bw ] && args="-d \$DEV_$kind -x \$GIDX_$kind -p \$PORT -F --use_old_post_send -n $iters"
	while [ $try -lt 3 ]; do
		try=$((try + 1))
		port=$((port + 1))
		PORT=$port
		ans=$(agent_call 198.18.1.2 30 "START $port $tool $args")
		case $ans in READY*) ;; *) echo "# $kind $tool $size: server: ${ans:-no answer}"; continue ;; esac
		eval "timeout $RUN_TIMEOUT $tool $args $(peer_of $kind)" >/tmp/bench.out 2>&1
		rc=$?
		# A failed client leaves its server waiting: stop it.
		[ $rc -eq 0 ] || { sleep 5; agent_call 198.18.1.2 30 "KILL $port" >/dev/null; }
		agent_call 198.18.1.2 $((RUN_TIMEOUT + 30)) "WAIT $port" >/tmp/bench.srv
		line=$(awk -v s="$size" '$1 == s && $2 ~ /^[0-9]+$/ { print; exit }' /tmp/bench.out)
		case $tool in
		*_lat) v1=$(echo "$line" | awk '{ print $5 }') v2=$(echo "$line" | awk '{ print $6 }') ;;
		*) v1=$(echo "$line" | awk '{ print $4 }') v2=$(echo "$line" | awk '{ print $5 }') ;;
		esac
		if [ $rc -eq 0 ] && [ -n "$v1" ] && [ "$v1" != 0.00 ] && [ "$v1" != inf ]; then
			echo "BENCH $kind $tool $size value $v1 $v2 tries=$try"
			return 0
		fi
		echo "# $kind $tool $size: try $try: exit $rc, result '${line:-none}': $(tail -n 2 /tmp/bench.out | tr '\n' ' ')"
	done
	echo "BENCH $kind $tool $size FAILED"
	return 1
}

# Kite first: a quick ibv_rc_pingpong decides whether its data path works
# at all (if not, its cases are FAILED at once instead of timing out).
for kind in $kinds; do
	ans=$(agent_call 198.18.1.2 30 "START $port ibv_rc_pingpong -d \$DEV_$kind -g \$GIDX_$kind -p \$PORT -n 20 -s 4096")
	timeout 60 ibv_rc_pingpong -d $(eval echo \$DEV_$kind) -g $(eval echo \$GIDX_$kind) -p $port -n 20 -s 4096 $(peer_of $kind) >/tmp/canary.out 2>&1
	rc=$?
	[ $rc -eq 0 ] || { sleep 5; agent_call 198.18.1.2 30 "KILL $port" >/dev/null; }
	agent_call 198.18.1.2 90 "WAIT $port" >/dev/null
	port=$((port + 1))
	if [ $rc -ne 0 ]; then
		echo "# $kind: ibv_rc_pingpong failed (exit $rc): $(tail -n 2 /tmp/canary.out | tr '\n' ' ')"
		for c in $CASES; do
			set -- $(echo "$c" | tr : ' ')
			echo "BENCH $kind $1 $2 FAILED"
		done
		continue
	fi
	r=0
	while [ $r -lt "$REPEAT" ]; do
		r=$((r + 1))
		for c in $CASES; do
			set -- $(echo "$c" | tr : ' ')
			one $kind $1 $2 $3
		done
	done
done
echo "BENCH-DONE"
ok bench-ran
ans=$(agent_call 198.18.1.2 30 "SH - touch /tmp/agent.quit")
case $ans in "RC 0"*) ok peer-quit ;; *) fail peer-quit "peer agent: ${ans:-no answer}" ;; esac
finish
