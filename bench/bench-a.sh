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
# (one of them through b's agent) at each RoCE path MTU of BENCH_MTUS
# (default "1024 4096": netdevs at MTU 1500, then all of them at 9000,
# both guests) and prints one machine-readable line:
#   BENCH KIND TOOL SIZE MTU QPS value VALUE [VALUE2] tries=N
# bw tools: MB/s (BW average) and Mpps; lat tools: t_typical and t_avg in
# microseconds (the client's report). A case is TOOL:SIZE:ITERS[:QPS]
# (QPS > 1: perftest's -q, bw tools only). The bw tools run for BENCH_SECS
# seconds each (default 3; BENCH_SECS= empty: ITERS iterations instead),
# so that a fast transport is timed over as long a run as a slow one. A run that prints 0.00 (perftest
# under TCG sometimes cannot sample the CPU clock) or fails is repeated up
# to 3 times; after that the line says FAILED. BENCH_REPEAT runs each case
# that many times (the host takes the median). Then, per transport and
# MTU, NVMe over RDMA (nvme-rdma host, nvmet-rdma target on a RAM disk,
# fio; BENCH_NVME=0 leaves it out): 4k random reads at QD16 (IOPS),
# 4k at QD1 (mean latency) and 128k sequential reads (MiB/s), each
# BENCH_NVME_SECS (10) seconds, as BENCH lines with TOOL nvme_randread,
# nvme_read_lat, nvme_seqread. The UCX and MPI cases, Kite<->Kite and
# rxe<->rxe (SKIPPED on the mixed link): ucp_tag_lat and ucp_put_bw
# (ucx_perftest UCP tag_lat and ucp_put_bw with UCX_NET_DEVICES on the
# transport's device), and mpi (tests/vm/kite-mpi.c through mpirun with
# the UCX PML: lines mpi_lat, 8 B half round trip, and mpi_bw, 1 MiB
# ping-pong).
. /kite/lib.sh
. /kite/rdma-lib.sh
. /kite/storage-lib.sh
. /kite/rdma-mpi.sh
plan 7
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
# NVMe over RDMA (BENCH_NVME=0: none): this guest's target serves the
# rxe host of rxe-kite (on b) on the mix link; b's serves the others.
NVME_ON=${BENCH_NVME:-1}
NVME_SECS=${BENCH_NVME_SECS:-10}
NQN_A=$(stor_nqn a) NQN_B=$(stor_nqn b)
if [ "$NVME_ON" = 0 ]; then
	skip nvmet-setup "BENCH_NVME=0"
elif out=$(nvmet_setup "$NQN_A" 2>&1 && nvmet_port 1 198.18.2.1 ipv4 "$NQN_A" 2>&1); then
	ok nvmet-setup
else
	fail nvmet-setup "$out"
fi
kinds=
for k in ${BENCH_KINDS:-kite kite-rxe rxe-kite rxe}; do
	case $k in
	kite | rxe) t=$k ;;
	kite-rxe | rxe-kite) t=mix ;;
	*) echo "# BENCH_KINDS: unknown transport $k"; continue ;;
	esac
	case " $have " in *" $t "*) kinds="$kinds $k" ;; *) echo "# $k: its device did not come up" ;; esac
done
# TOOL SIZE ITERS [QPS] per case.
CASES=${BENCH_CASES:-"ib_write_bw:64:2000 ib_write_bw:4096:1000 ib_write_bw:65536:200
ib_write_bw:65536:20:64
ib_read_bw:64:2000 ib_read_bw:4096:1000 ib_read_bw:65536:200
ib_send_bw:64:2000 ib_send_bw:4096:1000 ib_send_bw:65536:200
ib_atomic_bw:8:1000
ib_write_lat:2:200 ib_write_lat:4096:200 ib_send_lat:2:200 ib_send_lat:4096:200
ib_read_lat:2:200 ib_read_lat:4096:200
ucp_tag_lat:8:1000 ucp_put_bw:65536:1000 mpi:8:50"}
MTUS=${BENCH_MTUS:-"1024 4096"}
SECS=${BENCH_SECS-3}
port=19000
# a's address on each link (rank 0 of the MPI runs).
ME_kite=198.18.0.1 ME_rxe=198.18.1.1 ME_mix=198.18.2.1
# mpirun's launcher (tests/vm/rdma-mpi.sh) when a case needs it.
MPI_SSHD=0
case " $(echo $CASES) " in
*" mpi:"*) mpi_sshd $B && MPI_SSHD=1 ;;
*) skip mpi-sshd "no MPI case" ;;
esac

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

# peer_dev TAG: b's device of TAG (asked once through the agent).
peer_dev() {
	local v
	eval "v=\${PDEV_$1:-}"
	if [ -z "$v" ]; then
		v=$(agent_call $B 30 "SH - echo \$DEV_$1" | sed -n 2p)
		eval "PDEV_$1=\$v"
	fi
	echo "$v"
}

# ucx_env KIND: the UCX settings of a UCP run on KIND's devices (each side
# expands $DEV_TAG); rxe drops UCX's IPv4 datagrams under the default
# destination-GID check (tests/vm/rdma-ucx.sh).
ucx_env() {
	local t
	t=$(tag_of "$1")
	echo "env UCX_NET_DEVICES=\$DEV_$t:1$([ "$1" = rxe ] && echo ' UCX_UD_VERBS_ETH_DGID_CHECK=n')"
}

# one_ucp KIND MTU TOOL SIZE ITERS: ucx_perftest UCP TOOL (ucp_tag_lat:
# tag_lat, ucp_put_bw) over KIND, server on b; prints BENCH (lat: 50th
# percentile and overall average, us; bw: overall MB/s and Mmsg/s).
one_ucp() {
	local kind=$1 mtu=$2 tool=$3 size=$4 iters=$5 try=0 test env ans rc line
	case $tool in ucp_tag_lat) test=tag_lat ;; *) test=$tool ;; esac
	env=$(ucx_env "$kind")
	while [ $try -lt 3 ]; do
		try=$((try + 1))
		port=$((port + 1))
		ans=$(agent_call $B 30 "START $port $env ucx_perftest -p $port")
		case $ans in
		READY*)
			eval "timeout $RUN_TIMEOUT $env ucx_perftest -p $port -t $test -s $size -n $iters $(server_addr "$kind")" >/tmp/bench.out 2>&1
			rc=$?
			[ $rc -eq 0 ] || { sleep 5; agent_call $B 30 "KILL $port" >/dev/null; }
			agent_call $B $((RUN_TIMEOUT + 30)) "WAIT $port" >/tmp/bench.srv
			;;
		*) echo "server on b: ${ans:-no answer}" >/tmp/bench.out; rc=125 ;;
		esac
		line=$(grep -E '^Final:' /tmp/bench.out | tail -n 1)
		if [ $rc -eq 0 ] && [ -n "$line" ]; then
			case $tool in
			*_lat) echo "BENCH $kind $tool $size $mtu 1 value $(echo "$line" | awk '{ print $3, $5 }') tries=$try" ;;
			*) echo "BENCH $kind $tool $size $mtu 1 value $(echo "$line" | awk '{ printf "%s %.3f", $7, $9 / 1e6 }') tries=$try" ;;
			esac
			return 0
		fi
		echo "# $kind $tool $size mtu $mtu: try $try: exit $rc: $(tail -n 3 /tmp/bench.out | tr '\n' ' ')"
	done
	echo "BENCH $kind $tool $size $mtu 1 FAILED"
	return 1
}

# one_mpi KIND MTU ITERS: tests/vm/kite-mpi.c through mpirun with the UCX
# PML over KIND (rank 0 here, rank 1 on b; tests/vm/rdma-mpi.sh), ITERS
# round trips for each figure; prints the BENCH lines mpi_lat (8 B, us)
# and mpi_bw (1 MiB ping-pong, MB/s).
one_mpi() {
	local kind=$1 mtu=$2 iters=$3 t me lat bw
	t=$(tag_of "$kind")
	me=$(eval "echo \$ME_$t")
	if [ "$MPI_SSHD" = 1 ] && eval "mpi_run $me $(server_addr "$kind") \$DEV_$t $(peer_dev "$t") 1 $iters" &&
		lat=$(sed -n 's/^info: mpi latency 8 B: \([0-9.]*\) us.*/\1/p' /tmp/mpi.out) &&
		bw=$(sed -n 's/^info: mpi bandwidth [0-9]* B: \([0-9.]*\) MB.*/\1/p' /tmp/mpi.out) &&
		[ -n "$lat" ] && [ -n "$bw" ]; then
		echo "BENCH $kind mpi_lat 8 $mtu 1 value $lat tries=1"
		echo "BENCH $kind mpi_bw 1048576 $mtu 1 value $bw tries=1"
		return 0
	fi
	echo "# $kind mpi mtu $mtu: $(grep -E '^(FAIL|#)' /tmp/mpi.out 2>/dev/null | head -n 3 | tr '\n' ' ') $(tail -n 3 /tmp/mpi.out 2>/dev/null | tr '\n' ' ')"
	echo "BENCH $kind mpi_lat 8 $mtu 1 FAILED"
	echo "BENCH $kind mpi_bw 1048576 $mtu 1 FAILED"
	return 1
}

# one KIND MTU TOOL SIZE ITERS [QPS]: one measurement (with retries);
# prints BENCH.
one() {
	local kind=$1 mtu=$2 tool=$3 size=$4 iters=$5 qps=${6:-1} try=0 line v1 v2 args t st
	# UCP and MPI run between like devices only (the mixed pair: ucx_ok).
	case $tool,$kind in
	ucp_* | mpi,*)
		case $kind in
		kite | rxe) ;;
		*) if [ "$tool" = mpi ]; then
				echo "BENCH $kind mpi_lat $size $mtu 1 SKIPPED"
				echo "BENCH $kind mpi_bw 1048576 $mtu 1 SKIPPED"
			else
				echo "BENCH $kind $tool $size $mtu 1 SKIPPED"
			fi
			return 0 ;;
		esac ;;
	esac
	case $tool in
	ucp_*) one_ucp "$@"; return ;;
	mpi) one_mpi "$kind" "$mtu" "$iters"; return ;;
	esac
	t=$(tag_of "$kind")
	while [ $try -lt 3 ]; do
		try=$((try + 1))
		port=$((port + 1))
		# The port literally: the agent's SH (rxe-kite) has no $PORT.
		args="-d \$DEV_$t -x \$GIDX_$t -p $port -F --use_old_post_send -m $mtu"
		# bw tools for SECS seconds (perftest -D) when BENCH_SECS says so,
		# else ITERS iterations; lat tools always count iterations (their
		# duration mode reports no typical latency), and so do -q runs
		# (over rxe, -D with 64 QPs reports 0 iterations).
		case $tool,$qps,${SECS:-} in
		*_bw,1,?*) args="$args -D $SECS" ;;
		*) args="$args -n $iters" ;;
		esac
		[ "$tool" = ib_atomic_bw ] || args="$args -s $size"
		[ "$qps" -gt 1 ] && args="$args -q $qps"
		pair "$kind" $port "$tool $args"
		rc=$?
		counters "$kind"
		line=$(awk -v s="$size" '$1 == s && $2 ~ /^[0-9]+$/ { print; exit }' /tmp/bench.out)
		case $tool in
		*_lat) v1=$(echo "$line" | awk '{ print $5 }') v2=$(echo "$line" | awk '{ print $6 }') ;;
		*) v1=$(echo "$line" | awk '{ print $4 }') v2=$(echo "$line" | awk '{ print $5 }') ;;
		esac
		if [ $rc -eq 0 ] && [ -n "$v1" ] && [ "$v1" != 0.00 ] && [ "$v1" != inf ]; then
			echo "BENCH $kind $tool $size $mtu $qps value $v1 $v2 tries=$try"
			return 0
		fi
		# perftest's errors go to unbuffered stderr, ahead of its report.
		echo "# $kind $tool $size mtu $mtu q $qps: try $try: exit $rc, result '${line:-none}': $(grep -v '^--' /tmp/bench.out | tail -n 4 | tr '\n' ' ')" \
			"errors: $(grep -iE 'error|fail|couldn|unable' /tmp/bench.out /tmp/bench.srv 2>/dev/null | head -n 6 | tr '\n' ' ')"
	done
	# The work completion status of a failed run (perftest's "Failed
	# status N"), so that the table says why.
	st=$(sed -n 's/.*Failed status \([0-9]*\).*/\1/p' /tmp/bench.out /tmp/bench.srv 2>/dev/null | head -n 1)
	echo "BENCH $kind $tool $size $mtu $qps FAILED${st:+ wc_status=$st}"
	return 1
}

# counters KIND: with BENCH_COUNTERS=1, the non-zero port hardware
# counters of KIND's device on both guests (cumulative), as comment lines
# after each case: why a case failed or retransmitted.
counters() {
	local t ans d
	[ "${BENCH_COUNTERS:-0}" = 1 ] || return 0
	t=$(tag_of "$1")
	ans=$(agent_call $B 30 "SH - cd /sys/class/infiniband/\$DEV_$t/ports/1/hw_counters && grep -v '^0\$' * | tr '\n' ' '")
	eval "d=\$DEV_$t"
	echo "# counters a $d: $(cd /sys/class/infiniband/$d/ports/1/hw_counters && grep -v '^0$' * | tr '\n' ' ')"
	echo "# counters b: $(echo "$ans" | sed 1d)"
}

# set_mtu MTU: every benchmarked netdev of both guests at the Ethernet MTU
# that carries RoCE path MTU MTU (1500 for up to 1024, else 9000), then
# waits until the local RDMA ports report it (the peer's are checked by
# perftest itself, which refuses a path MTU above the port's).
set_mtu() {
	local mtu=$1 eth=1500 n t ans
	[ "$mtu" -gt 1024 ] && eth=9000
	for t in kite rxe mix; do
		eval "n=\${NETDEV_$t:-}"
		[ -n "$n" ] && $IP link set "$n" mtu $eth
	done
	ans=$(agent_call $B 30 "SH - for n in \$NETDEV_kite \$NETDEV_rxe \$NETDEV_mix; do $IP link set \$n mtu $eth || exit 1; done")
	case $ans in "RC 0"*) ;; *) echo "# set_mtu $eth on b: ${ans:-no answer}" ;; esac
	for t in kite rxe mix; do
		eval "n=\${DEV_$t:-}"
		[ -n "$n" ] || continue
		wait_until 10 sh -c "ibv_devinfo -d $n | grep -q 'active_mtu:.*$mtu'" ||
			echo "# $n: active_mtu is not $mtu: $(ibv_devinfo -d "$n" | grep active_mtu)"
	done
}

# nvme_rows KIND MTU: the NVMe over RDMA rows of KIND (nvme_bench_host of
# storage-lib.sh on the host side: here, or on b for rxe-kite).
nvme_rows() {
	local kind=$1 mtu=$2 ans
	if [ "$kind" != rxe-kite ]; then
		nvme_bench_host "$kind" "$(server_addr "$kind")" "$NQN_B" "$mtu" "$NVME_SECS"
		return
	fi
	ans=$(agent_call $B $((NVME_SECS * 3 + 300)) "SH - . /kite/lib.sh; . /kite/rdma-lib.sh; . /kite/storage-lib.sh; nvme_bench_host $kind $(server_addr "$kind") $NQN_A $mtu $NVME_SECS")
	echo "$ans" | grep -E '^(BENCH|#) '
	echo "$ans" | grep -q '^BENCH ' || nvme_failed "$kind" "$mtu"
}
# nvme_failed KIND MTU: KIND's NVMe rows, all FAILED.
nvme_failed() {
	local t
	for t in nvme_randread:4096 nvme_read_lat:4096 nvme_seqread:131072; do
		echo "BENCH $1 ${t%:*} ${t#*:} $2 1 FAILED"
	done
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
		for m in $MTUS; do
			for c in $CASES; do
				set -- $(echo "$c" | tr : ' ')
				echo "BENCH $kind $1 $2 $m ${4:-1} FAILED"
			done
			[ "$NVME_ON" = 0 ] || nvme_failed "$kind" "$m"
		done
		kinds=$(echo " $kinds " | sed "s/ $kind / /")
	fi
done
for m in $MTUS; do
	set_mtu "$m"
	for kind in $kinds; do
		r=0
		while [ $r -lt "$REPEAT" ]; do
			r=$((r + 1))
			for c in $CASES; do
				set -- $(echo "$c" | tr : ' ')
				one "$kind" "$m" "$1" "$2" "$3" "${4:-}"
			done
			[ "$NVME_ON" = 0 ] || nvme_rows "$kind" "$m"
		done
	done
done
echo "BENCH-DONE"
if [ -n "$kinds" ]; then ok bench-ran; else fail bench-ran "no transport to measure"; fi
ans=$(agent_call $B 30 "SH - touch /tmp/agent.quit")
case $ans in "RC 0"*) ok peer-quit ;; *) fail peer-quit "peer agent: ${ans:-no answer}" ;; esac
finish
