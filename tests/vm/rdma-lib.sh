# SPDX-License-Identifier: GPL-2.0
# RDMA helpers for guest scripts (busybox sh), sourced after /kite/lib.sh:
# bring up an RDMA device (Kite, or Soft-RoCE on a virtio-net NIC), find its
# RoCE v2 GID, run a client/server pair (perftest, ibv_rc_pingpong,
# kite-rc) with the server on this guest or on the peer through a small
# agent, and talk to a host hook over the second serial port.
#
# Environment (vm.sh --env): RDMA_KIND=kite (default) or rxe.

RDMA_KIND=${RDMA_KIND:-kite}
# Every client/server run is bounded by this many seconds per side.
RUN_TIMEOUT=${RUN_TIMEOUT:-240}
AGENT_PORT=6000
AGENT=/tmp/kite-agent.sh

# ---- host -> guest messages (vm.py say; /dev/ttyS1) -------------------------
# host_listen: start collecting lines the host hook sends ($KITE_VMCTL say).
host_listen() {
	stty -F /dev/ttyS1 raw -echo 2>/dev/null
	cat /dev/ttyS1 >>/tmp/kite-host 2>/dev/null &
}
# host_wait WORD SECS: wait for a host line starting with WORD; prints it.
# Only complete lines count: the serial port may be half-way through one.
host_wait() {
	local end=$(($(date +%s) + $2)) l n
	while [ "$(date +%s)" -lt $end ]; do
		n=$(wc -l 2>/dev/null </tmp/kite-host || echo 0)
		l=$(head -n "$n" /tmp/kite-host 2>/dev/null | grep "^$1" | tail -n 1 | tr -d '\r')
		[ -n "$l" ] && { echo "$l"; return 0; }
		usleep 200000
	done
	return 1
}

# host_call ACTION ARGS...: guest a asks the group's host hook (a file that
# serves requests with tests/vm/hook-lib.sh) to do ACTION; status 0 when it
# answers "ok". The answer without that first word (which would read as a
# result line) is printed and left in HOST_ANS. The request line must reach
# the console: do not call it inside $(...).
HOST_N=0
host_call() {
	local ans
	HOST_N=$((HOST_N + 1))
	echo "KITE-SYNC host-$HOST_N $*"
	if ! ans=$(host_wait "host-$HOST_N " ${HOST_CALL_SECS:-120}); then
		HOST_ANS="no answer from the host hook"
		echo "$HOST_ANS"
		return 1
	fi
	ans=${ans#host-$HOST_N }
	HOST_ANS=${ans#* }
	[ "$HOST_ANS" = "$ans" ] && HOST_ANS=
	echo "$HOST_ANS"
	[ "${ans%% *}" = ok ]
}

# cm_listen_sh TOOL PORT: a shell test (one line, for eval here or for the
# agent's SH) that a TOOL process has an rdma_cm ID listening on PORT
# (udaddy: its fixed port 7174). No device filter: an ID bound to the
# wildcard address listens on every device's port through child IDs.
cm_listen_sh() {
	local port=$2
	[ "$1" = udaddy ] && port=7174
	echo "$RDMA res show cm_id 2>/dev/null | grep -qE 'state LISTEN .*comm $1 .*src-addr [^ ]*:$port( |\$)'"
}

# rping_rts: an RC QP of an rping process is in RTS on $DEV.
rping_rts() {
	$RDMA res show qp link $DEV/1 2>/dev/null | grep 'type RC state RTS' | grep -q 'comm rping'
}

# rping_connected NAME SECS OUT ARGS...: an endless rping client (rping
# -c -v ARGS, SECS at most, output in OUT) in the background, restarted
# (90 s at most) until its RC QP is in RTS, so that its pings run (the
# server may not listen yet; a link cut during connection setup would test
# ib_cm's REQ retries instead). Each restart is a reported retry of the
# check NAME that needs the connection. Sets RPING_PID; status 0 once
# connected.
rping_connected() {
	local name=$1 secs=$2 out=$3 end
	shift 3
	end=$(($(date +%s) + 90))
	while :; do
		timeout $secs rping -c -v "$@" >$out 2>&1 &
		RPING_PID=$!
		wait_until 10 rping_rts && return 0
		kill $RPING_PID 2>/dev/null
		wait $RPING_PID
		[ "$(date +%s)" -lt $end ] || return 1
		retry "$name" "rping's QP not in RTS within 10 s ($(grep -v '^ping data' $out | tail -n 1)); starting it again"
		sleep 1
	done
}

# cm_cmd TOOL FAM ROLE PORT ADDR [DEV]: the command line of one rdma_cm
# run (FAM v4|v6; ADDR: the address to bind as server, the server's as
# client). DEV defaults to the text $DEV, for a guest's agent to expand.
cm_cmd() {
	local tool=$1 fam=$2 role=$3 port=$4 addr=$5 dev=${6:-\$DEV} six=
	# perftest 25.01 resolves -R addresses as IPv6 only with --ipv6-addr
	# (rdma_cm then connects 2001:db8:: to 2001:db8::). --ipv6 only makes
	# the GID it prints (its own pick from the GID table, the first IPv6
	# one: fe80::) an IPv6 one; the connection's comes from the address.
	[ "$fam" = v6 ] && six='--ipv6 --ipv6-addr'
	case $tool:$role in
	rping:server) echo "rping -s -a $addr -p $port -V -C 20 -S 1000" ;;
	rping:client) echo "rping -c -a $addr -p $port -V -C 20 -S 1000" ;;
	ucmatose:server) echo "ucmatose -b $addr -p $port -c 2 -C 10" ;;
	ucmatose:client) echo "ucmatose -s $addr -p $port -c 2 -C 10" ;;
	udaddy:server) echo "udaddy -b $addr -c 2 -C 10" ;;
	udaddy:client) echo "udaddy -s $addr -c 2 -C 10" ;;
	ib_read_lat:server) echo "$tool -R $six -d $dev -p $port -F -n 100 -s 4096" ;;
	ib_read_lat:client) echo "$tool -R $six -d $dev -p $port -F -n 100 -s 4096 $addr" ;;
	*:server) echo "$tool -R $six -d $dev -p $port -F -n 100 -s 65536" ;;
	*:client) echo "$tool -R $six -d $dev -p $port -F -n 100 -s 65536 $addr" ;;
	esac
}

# ---- device bring-up ----------------------------------------------------------
# roce2_gid_index DEV GID: index of the RoCE v2 GID equal to GID on DEV port 1.
roce2_gid_index() {
	local g i
	for g in /sys/class/infiniband/$1/ports/1/gids/*; do
		i=${g##*/}
		[ "$(cat "$g" 2>/dev/null)" = "$2" ] || continue
		[ "$(cat /sys/class/infiniband/$1/ports/1/gid_attrs/types/$i 2>/dev/null)" = "RoCE v2" ] &&
			{ echo "$i"; return 0; }
	done
	return 1
}

# gid_of DEV ADDR: index of the RoCE v2 GID ::ffff:ADDR (IPv4) on DEV port 1.
gid_of() {
	roce2_gid_index "$1" "$(echo "$2" | awk -F. '{ printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n", $1, $2, $3, $4 }')"
}

# gid6_of DEV ADDR: index of the RoCE v2 GID of IPv6 ADDR (2001:db8[:N]::M,
# the forms the tests use) on DEV port 1.
gid6_of() {
	roce2_gid_index "$1" "$(echo "$2" | awk -F: '{ printf "%04x:%04x:%04x:0000:0000:0000:0000:%04x\n", "0x" $1, "0x" $2, "0x" ($3 == "" ? 0 : $3), "0x" $NF }')"
}

# netdev_by_driver DRIVER: the first net_device bound to DRIVER.
netdev_by_driver() {
	local d drv
	for d in /sys/class/net/*; do
		drv=$(readlink "$d/device/driver" 2>/dev/null) || continue
		[ "${drv##*/}" = "$1" ] && { echo "${d##*/}"; return 0; }
	done
	return 1
}

dev_active() { [ "$(sed 's/^[0-9]*: *//' /sys/class/infiniband/$1/ports/1/state 2>/dev/null)" = ACTIVE ]; }

# rdma_up KIND ADDR: bring up the RDMA device of KIND with IPv4 ADDR/24 on
# its netdev. Sets DEV, NETDEV, GIDX. kite: kite_0 on the kite netdev;
# rxe: rxe0 on the virtio-net NIC (vm.sh --virtio). Returns non-zero
# (after printing why) when the device did not come up.
rdma_up() {
	local kind=$1 addr=$2 out
	modprobe ib_uverbs || { echo "rdma_up: modprobe ib_uverbs failed"; return 1; }
	case $kind in
	kite)
		modprobe kite || { echo "rdma_up: modprobe kite failed"; return 1; }
		kite_ib_wait || { echo "rdma_up: no $IBDEV within $KITE_IB_SECS s"; return 1; }
		NETDEV=$(kite_netdev) || { echo "rdma_up: no kite netdev"; return 1; }
		DEV=kite_0
		;;
	rxe)
		modprobe virtio_pci && modprobe virtio_net ||
			{ echo "rdma_up: virtio modules"; return 1; }
		wait_until 10 netdev_by_driver virtio_net || { echo "rdma_up: no virtio-net netdev"; return 1; }
		NETDEV=$(netdev_by_driver virtio_net)
		modprobe crc32_generic && modprobe rdma_rxe || { echo "rdma_up: modprobe rdma_rxe"; return 1; }
		if ! out=$($RDMA link add rxe0 type rxe netdev "$NETDEV" 2>&1); then
			echo "rdma_up: rdma link add rxe0: $out"
			return 1
		fi
		DEV=rxe0
		;;
	*) echo "rdma_up: unknown kind $kind"; return 1 ;;
	esac
	$IP addr add "$addr/24" dev "$NETDEV"
	$IP link set "$NETDEV" up
	wait_until 20 dev_active $DEV || { echo "rdma_up: $DEV port not ACTIVE"; return 1; }
	wait_until 10 gid_of $DEV "$addr" || { echo "rdma_up: no RoCE v2 GID for $addr on $DEV"; return 1; }
	GIDX=$(gid_of $DEV "$addr")
	# Per kind as well (DEV_kite, GIDX_rxe, ...) for guests with both.
	eval "DEV_$kind=\$DEV GIDX_$kind=\$GIDX NETDEV_$kind=\$NETDEV"
	echo "info: $DEV on $NETDEV, $addr, GID index $GIDX"
	return 0
}

# netdev_by_mac MAC: the net_device with that MAC address.
netdev_by_mac() {
	local d
	for d in /sys/class/net/*; do
		[ "$(cat "$d/address" 2>/dev/null)" = "$1" ] && { echo "${d##*/}"; return 0; }
	done
	return 1
}

# rdma_up_mac KIND ADDR MAC TAG [NAME]: like rdma_up, for guests with
# several NICs of a kind (vm.sh --xlink; the launcher passes each NIC's MAC
# as $KITE_MAC_<id>): bring up the RDMA device on the NIC with MAC, with
# IPv4 ADDR/24. kite: that NIC's kite device (kite_N); rxe: a new Soft-RoCE
# device NAME (default rxe_TAG) on it. Sets DEV, NETDEV, GIDX and DEV_TAG,
# GIDX_TAG, NETDEV_TAG (TAG: letters, digits, '_'); agent_start passes
# those of every TAG to the agent. Returns non-zero (after printing why)
# when the device did not come up.
RDMA_TAGS=
rdma_up_mac() {
	local kind=$1 addr=$2 mac=$3 tag=$4 name=${5:-rxe_$4} out
	case $tag in '' | *[!A-Za-z0-9_]*) echo "rdma_up_mac: bad tag '$tag'"; return 1 ;; esac
	[ -n "$mac" ] || { echo "rdma_up_mac: no MAC for $tag (vm.sh --xlink?)"; return 1; }
	modprobe ib_uverbs || { echo "rdma_up_mac: modprobe ib_uverbs failed"; return 1; }
	case $kind in
	kite)
		modprobe kite || { echo "rdma_up_mac: modprobe kite failed"; return 1; }
		wait_until 10 netdev_by_mac "$mac" || { echo "rdma_up_mac: no netdev with MAC $mac"; return 1; }
		NETDEV=$(netdev_by_mac "$mac")
		kite_ib_wait "$NETDEV" ||
			{ echo "rdma_up_mac: no RDMA device on $NETDEV ($mac) within $KITE_IB_SECS s"; return 1; }
		DEV=$(ibdev_of_netdev "$NETDEV")
		;;
	rxe)
		modprobe virtio_pci && modprobe virtio_net ||
			{ echo "rdma_up_mac: virtio modules"; return 1; }
		wait_until 10 netdev_by_mac "$mac" || { echo "rdma_up_mac: no netdev with MAC $mac"; return 1; }
		NETDEV=$(netdev_by_mac "$mac")
		modprobe crc32_generic && modprobe rdma_rxe || { echo "rdma_up_mac: modprobe rdma_rxe"; return 1; }
		if ! out=$($RDMA link add "$name" type rxe netdev "$NETDEV" 2>&1); then
			echo "rdma_up_mac: rdma link add $name: $out"
			return 1
		fi
		DEV=$name
		;;
	*) echo "rdma_up_mac: unknown kind $kind"; return 1 ;;
	esac
	$IP addr add "$addr/24" dev "$NETDEV"
	$IP link set "$NETDEV" up
	wait_until 20 dev_active "$DEV" || { echo "rdma_up_mac: $DEV port not ACTIVE"; return 1; }
	wait_until 10 gid_of "$DEV" "$addr" || { echo "rdma_up_mac: no RoCE v2 GID for $addr on $DEV"; return 1; }
	GIDX=$(gid_of "$DEV" "$addr")
	eval "DEV_$tag=\$DEV GIDX_$tag=\$GIDX NETDEV_$tag=\$NETDEV"
	RDMA_TAGS="$RDMA_TAGS $tag"
	echo "info: $DEV on $NETDEV ($mac), $addr, GID index $GIDX"
	return 0
}

# ---- client/server runs -------------------------------------------------------
# The agent serves one request per TCP connection (busybox nc -ll -e):
#   START PORT CMD...  run CMD (eval'd here: it may use $DEV, $GIDX, $PORT,
#                      and $DEV_kite, $GIDX_rxe, ... in guests with both,
#                      $DEV_TAG, ... of each rdma_up_mac TAG)
#                      in the background, bounded by RUN_TIMEOUT, output to
#                      /tmp/srv.PORT; answer READY once PORT listens (the
#                      tools listen on their TCP port), else NOTREADY.
#   WAIT PORT          wait for that server to end; answer "RC n" and its
#                      output.
#   KILL PORT          stop that server (its client failed already).
#   SH - CMD...        run CMD at once; answer "RC n" and its output.
agent_start() {
	cat >$AGENT <<EOF
#!/bin/sh
DEV=$DEV GIDX=$GIDX NETDEV=$NETDEV RUN_TIMEOUT=$RUN_TIMEOUT IP=$IP
DEV_kite=${DEV_kite:-} GIDX_kite=${GIDX_kite:-} NETDEV_kite=${NETDEV_kite:-}
DEV_rxe=${DEV_rxe:-} GIDX_rxe=${GIDX_rxe:-} NETDEV_rxe=${NETDEV_rxe:-}
EOF
	# The devices rdma_up_mac brought up (DEV_TAG, ...), if any.
	local t
	for t in $RDMA_TAGS; do
		eval "echo \"DEV_$t=\$DEV_$t GIDX_$t=\$GIDX_$t NETDEV_$t=\$NETDEV_$t\"" >>$AGENT
	done
	cat >>$AGENT <<'EOF'
read -r verb PORT cmd
case $verb in
START)
	rm -f /tmp/srv.$PORT /tmp/srv.$PORT.rc /tmp/srv.$PORT.pid
	# (busybox timeout execs CMD in its own process: that pid is CMD's)
	(
		eval "timeout $RUN_TIMEOUT $cmd" >/tmp/srv.$PORT 2>&1 &
		echo $! >/tmp/srv.$PORT.pid
		wait $!
		echo $? >/tmp/srv.$PORT.rc
	) </dev/null >/dev/null 2>&1 &
	i=0
	while [ $i -lt 200 ]; do
		netstat -ltn 2>/dev/null | grep -q ":$PORT " && { echo READY; exit 0; }
		[ -f /tmp/srv.$PORT.rc ] && break
		usleep 100000
		i=$((i + 1))
	done
	echo "NOTREADY $(tail -n 3 /tmp/srv.$PORT 2>/dev/null | tr '\n' ' ')"
	;;
WAIT)
	i=0
	while [ ! -f /tmp/srv.$PORT.rc ] && [ $i -lt $((RUN_TIMEOUT * 10 + 100)) ]; do
		usleep 100000
		i=$((i + 1))
	done
	echo "RC $(cat /tmp/srv.$PORT.rc 2>/dev/null || echo none)"
	cat /tmp/srv.$PORT 2>/dev/null
	;;
KILL)
	# The client already failed: stop its server now instead of at its timeout.
	[ -f /tmp/srv.$PORT.rc ] || kill "$(cat /tmp/srv.$PORT.pid 2>/dev/null)" 2>/dev/null
	echo "KILLED"
	;;
SH)
	# SH - CMD...: run a shell command here (netem, quit); answer RC and output.
	out=$(eval "$cmd" 2>&1)
	echo "RC $?"
	echo "$out"
	;;
*) echo "BAD $verb" ;;
esac
EOF
	chmod 755 $AGENT
	busybox nc -ll -p $AGENT_PORT -e $AGENT &
	AGENT_PID=$!
	wait_until 10 sh -c "netstat -ltn | grep -q ':$AGENT_PORT '"
}
agent_stop() { [ -n "${AGENT_PID:-}" ] && kill "$AGENT_PID" 2>/dev/null; AGENT_PID=; }

# agent_call HOST SECS REQUEST: one request to HOST's agent; prints the answer.
agent_call() {
	local i=0 out
	while [ $i -lt 40 ]; do
		if out=$(echo "$3" | timeout "$2" $NC -N "$1" $AGENT_PORT 2>/dev/null) && [ -n "$out" ]; then
			echo "$out"
			return 0
		fi
		usleep 250000	# the agent may not listen yet
		i=$((i + 1))
	done
	return 1
}

# perftest's words when its CPU clock sampling failed (get_clock.c,
# perftest_parameters.c), and how often cs_run tries a run that failed for
# that alone.
PT_CLOCK_SIG="Correlation coefficient|Can't produce a report"
CS_CLOCK_TRIES=3

# cs_clock_only CRC SRC PORT: the run on PORT (client exit CRC, server
# answer SRC, "RC n") failed only because perftest could not sample the
# clock: its words are there, no side timed out or was killed, and neither
# reports bad data or a transfer error.
cs_clock_only() {
	local s=${2#RC }
	case $1:$s in *124* | *137* | *143* | *none* | *:) return 1 ;; esac
	grep -qE "$PT_CLOCK_SIG" /tmp/cli.$3 /tmp/srvout.$3 &&
		! grep -qiE "invalid data|failed status|completion with error|couldn't|unable|timeout|terminated" \
			/tmp/cli.$3 /tmp/srvout.$3
}

# cs_run NAME HOST PORT SERVER_CMD CLIENT_CMD: run SERVER_CMD through HOST's
# agent, then CLIENT_CMD here (both may use $DEV, $GIDX, $PORT; the client's
# are this guest's). One result NAME: ok when both exit 0 and neither
# reports "invalid data" (the rdma-core pingpongs' -c check prints that and
# still exits 0) and, when CS_WANT is set, the client printed a line
# matching that extended regex (its figures). The client's output is kept
# in /tmp/cli.PORT, the server's in /tmp/srvout.PORT.
cs_run() {
	local name=$1 host=$2 PORT=$3 scmd=$4 ccmd=$5 ans crc src t0 why
	t0=$(date +%s)
	ans=$(agent_call "$host" 30 "START $PORT timeout $RUN_TIMEOUT $scmd")
	case $ans in
	READY*) ;;
	*) fail "$name" "server did not start: ${ans:-no answer from the agent on $host}"; return 1 ;;
	esac
	eval "timeout $RUN_TIMEOUT $ccmd" >/tmp/cli.$PORT 2>&1
	crc=$?
	# A failed client leaves its server waiting: give it 5 s, then stop it.
	if [ $crc -ne 0 ]; then
		sleep 5
		agent_call "$host" 30 "KILL $PORT" >/dev/null
	fi
	agent_call "$host" $((RUN_TIMEOUT + 30)) "WAIT $PORT" >/tmp/srvout.$PORT
	src=$(head -n 1 /tmp/srvout.$PORT)
	echo "info: $name took $(($(date +%s) - t0)) s (client exit $crc, server ${src:-no answer})"
	if [ $crc -eq 0 ] && [ "$src" = "RC 0" ] &&
		! grep -q "invalid data" /tmp/cli.$PORT /tmp/srvout.$PORT &&
		{ [ -z "${CS_WANT:-}" ] || grep -qE "$CS_WANT" /tmp/cli.$PORT; }; then
		ok "$name"
		return 0
	fi
	# perftest derives its figures from the CPU clock and gives up when
	# its sampling fails. A run that failed for that alone (both sides
	# ended, no timeout, no data or transfer error) is repeated,
	# CS_CLOCK_TRIES tries at most, each repeat a reported retry.
	if [ "${CS_TRY:-1}" -lt $CS_CLOCK_TRIES ] && cs_clock_only $crc "$src" $PORT; then
		retry "$name" "perftest could not sample the CPU clock (try ${CS_TRY:-1} of $CS_CLOCK_TRIES; client exit $crc, server $src)"
		CS_TRY=$((${CS_TRY:-1} + 1))
		cs_run "$@"
		crc=$?
		CS_TRY=1
		return $crc
	fi
	echo "---- $name client: $ccmd"
	tail -n 15 /tmp/cli.$PORT
	echo "---- $name server: $scmd"
	tail -n 15 /tmp/srvout.$PORT
	# The client's first error line says most; else its last lines.
	why=$(grep -i -m 2 -E 'invalid data|fail|error|couldn|unable|terminated|timeout' /tmp/cli.$PORT /tmp/srvout.$PORT | tr '\n' ' ')
	[ -n "$why" ] || why=$(grep -v '^[[:space:]]*$' /tmp/cli.$PORT | tail -n 2 | tr '\n' ' ')
	[ $crc -ne 0 ] || [ -z "${CS_WANT:-}" ] || grep -qE "$CS_WANT" /tmp/cli.$PORT ||
		why="no line matching '$CS_WANT' in the client's output; $why"
	fail "$name" "client exit $crc$([ $crc -eq 124 ] || [ $crc -eq 143 ] && echo ' (timeout)'), server ${src:-no answer}: $why"
	return 1
}

# The perftest set. Each tool runs with every size (-a) but few iterations,
# old-style ibv_post_send, and on its own TCP port.
PERFTEST_BW="ib_send_bw ib_write_bw ib_read_bw"
PERFTEST_LAT="ib_send_lat ib_write_lat ib_read_lat"
PT_ITERS=${PT_ITERS:-5}
PT_LAT_ITERS=${PT_LAT_ITERS:-5}
PT_COMMON='-d $DEV -x $GIDX -p $PORT -F --use_old_post_send'

# rdma_suite HOST PEER_ADDR TAG: the client side of every client/server
# check against HOST's agent (the peer's address for the RDMA tools is
# PEER_ADDR): ibv_rc_pingpong and ibv_srq_pingpong (four QPs on one
# SRQ) with their -c check (the first byte of each page), the perftest set,
# kite-rc functional checks and a clean bulk run. Result names get TAG.
RDMA_SUITE_RESULTS=$((1 + 1 + 3 + 1 + 3))	# + kite-rc func count + 1 (bulk)
rdma_suite() {
	local host=$1 peer=$2 tag=$3 port=18600 t n RUN_TIMEOUT=$RUN_TIMEOUT
	# The canary: when even ibv_rc_pingpong fails, the data path is broken
	# and every later run would wait for its full time: wait 60 s at most.
	cs_run "$tag-rc_pingpong" "$host" $port \
		'ibv_rc_pingpong -d $DEV -g $GIDX -p $PORT -c -n 50 -s 4096' \
		"ibv_rc_pingpong -d \$DEV -g \$GIDX -p \$PORT -c -n 50 -s 4096 $peer" ||
		RUN_TIMEOUT=60
	cs_run "$tag-srq_pingpong" "$host" $((port + 20)) \
		'ibv_srq_pingpong -d $DEV -g $GIDX -p $PORT -c -q 4 -r 64 -n 50 -s 4096' \
		"ibv_srq_pingpong -d \$DEV -g \$GIDX -p \$PORT -c -q 4 -r 64 -n 50 -s 4096 $peer"
	for t in $PERFTEST_BW $PERFTEST_LAT; do
		port=$((port + 1))
		n=$PT_ITERS
		case $t in *_lat) n=$PT_LAT_ITERS ;; esac
		cs_run "$tag-$t" "$host" $port "$t $PT_COMMON -a -n $n" \
			"$t $PT_COMMON -a -n $n $peer"
	done
	port=$((port + 1))
	cs_run "$tag-ib_atomic_bw" "$host" $port "ib_atomic_bw $PT_COMMON -n 100" \
		"ib_atomic_bw $PT_COMMON -n 100 $peer"
	port=$((port + 1))
	kite_rc "$host" $port "$peer" func "$tag-rc"
	port=$((port + 1))
	kite_rc "$host" $port "$peer" bulk "$tag-rc"
}

# kite_rc HOST PORT PEER MODE PREFIX [ARGS...]: run tests/vm/kite-rc.c MODE
# (server through HOST's agent, client here); its own result lines count
# (kite-rc count MODE of them), plus one FAIL if the server failed or the
# client crashed without saying why.
kite_rc() {
	local host=$1 PORT=$2 peer=$3 mode=$4 prefix=$5 ans crc n src
	shift 5
	ans=$(agent_call "$host" 30 "START $PORT kite-rc -d \$DEV -g \$GIDX -p \$PORT -t $RUN_TIMEOUT $* $mode")
	case $ans in
	READY*) ;;
	*)
		n=$(kite-rc count $mode)
		while [ "$n" -gt 0 ]; do
			fail "$prefix-$mode-server" "kite-rc server did not start: ${ans:-no answer from the agent}"
			n=$((n - 1))
		done
		return 1
		;;
	esac
	timeout $((RUN_TIMEOUT + 10)) kite-rc -d $DEV -g $GIDX -p $PORT -t $RUN_TIMEOUT -P "$prefix" "$@" $mode "$peer" >/tmp/cli.$PORT 2>&1
	crc=$?
	cat /tmp/cli.$PORT
	n=$(grep -c '^FAIL ' /tmp/cli.$PORT)
	failures=$((failures + n))
	agent_call "$host" $((RUN_TIMEOUT + 30)) "WAIT $PORT" >/tmp/srvout.$PORT
	src=$(head -n 1 /tmp/srvout.$PORT)
	grep '^#' /tmp/srvout.$PORT | sed 's/^/# server: /'
	if [ $crc -ne 0 ] && [ "$n" -eq 0 ]; then
		echo "info: kite-rc client exited $crc without a FAIL line"
		failures=$((failures + 1))
	fi
	if [ "$src" != "RC 0" ] && [ "$n" -eq 0 ]; then
		echo "info: kite-rc server: $src: $(tail -n 3 /tmp/srvout.$PORT | tr '\n' ' ')"
		failures=$((failures + 1))
	fi
}

# tool_exit NAME RC OUT: one result NAME for the exit status RC of a test
# tool that prints its own results (kite-ud, kite-rc; they are in OUT). A
# tool that failed a check exits 1, so only a status that its FAIL lines
# do not explain fails here (a crash or a timeout after its results, a
# non-zero exit after only "ok" lines).
tool_exit() {
	if [ "$2" = 0 ]; then ok "$1"
	elif [ "$2" = 1 ] && grep -q '^FAIL ' "$3"; then ok "$1"
	else fail "$1" "exit ${2:-none} after its results: $(grep -v '^#' "$3" | tail -n 2 | tr '\n' ' ')"
	fi
}

# ---- rdma_cm runs between two guests -----------------------------------------
# cm_pair below runs on guest a against guest b's agent; it uses a's
# addresses ME and ME6 and b's PEER and PEER6 (the agent is reached at PEER).
# rdma_cm tools listen on no TCP port, so the agent's START (which waits
# for one) does not fit: the peer's server is started in the background
# with "SH -" (output and status in the files WAIT reads), and a client on
# the peer runs through "SH -". The client starts once the server listens
# (cm_wait_listen_sh), so a reject (a REQ that found no listener) or an
# UNREACHABLE (a REQ or REP that timed out) is a failure. The client is run
# again only when it could not resolve the address or route (CM_RETRY: no
# REQ went out), for 90 s at most, each new try a reported retry. A failed
# pair is not tried again: the perftest faults that made one fail now and
# then (its -R server listening only after its sync, its client's retry on
# freed IDs) are fixed by patches/perftest/0001.
CM_RETRY='RDMA_CM_EVENT_ADDR_ERROR|RDMA_CM_EVENT_ROUTE_ERROR'

# cm_client_loop CMD OUT: a client run, retried (90 s at most) while it
# cannot resolve (CM_RETRY); as one line of shell for SH. Each new try
# prints "cm-retry: EVENT LINE" first (cm_report_retries).
cm_client_loop() {
	echo "end=\$((\$(date +%s) + 90)); while :; do timeout 60 $1 >$2 2>&1; rc=\$?; [ \$rc -eq 0 ] && break; w=\$(grep -m 1 -E '$CM_RETRY' $2) || break; [ \$(date +%s) -lt \$end ] || break; echo \"cm-retry: exit \$rc: \$w\"; sleep 1; done; grep -qi mismatch $2 && rc=99; tail -n 15 $2; exit \$rc"
}

# cm_report_retries NAME TEXT: one retry line for each try of NAME's
# client that cm_client_loop ran again (its "cm-retry:" lines in TEXT).
cm_report_retries() {
	echo "$2" | sed -n 's/^cm-retry: //p' | while read -r w; do
		retry "$1" "client could not resolve ($w); trying again"
	done
}

# cm_wait_listen_sh TOOL PORT RCFILE: one line of shell (for eval in a
# subshell, or for SH) that waits until TOOL's server listens on rdma_cm
# PORT (30 s at most; status 0) or has ended (RCFILE exists; status 1).
# A client started before that would be rejected, and a retry is unsafe
# for tools that open several connections (ucmatose -c 2, udaddy -c 2):
# the listen can come between two REQs of one run.
cm_wait_listen_sh() {
	echo "i=0; while [ \$i -lt 150 ]; do $(cm_listen_sh $1 $2) && exit 0; [ -f $3 ] && exit 1; usleep 200000; i=\$((i + 1)); done; exit 1"
}

# cm_pair NAME ROLE TOOL FAM PORT: one rdma_cm run between a and b, a in
# ROLE (client: b's agent runs the server; server: b's agent the client).
cm_pair() {
	local name=$1 role=$2 tool=$3 fam=$4 port=$5 me=$ME peer=$PEER ans rc t0 out
	[ "$fam" = v6 ] && { me=$ME6 peer=$PEER6; }
	t0=$(date +%s)
	if [ "$role" = client ]; then
		ans=$(agent_call $PEER 30 "SH - rm -f /tmp/srv.$port /tmp/srv.$port.rc; (timeout 150 $(cm_cmd $tool $fam server $port $peer) >/tmp/srv.$port 2>&1; echo \$? >/tmp/srv.$port.rc) </dev/null >/dev/null 2>&1 &")
		case $ans in "RC 0"*) ;; *) fail "$name" "server not started on b: ${ans:-no answer}"; return ;; esac
		ans=$(agent_call $PEER 40 "SH - $(cm_wait_listen_sh $tool $port /tmp/srv.$port.rc)")
		case $ans in "RC 0"*) ;; *) echo "info: $name: b's server is not listening: $ans" ;; esac
		out=$(eval "$(cm_client_loop "$(cm_cmd $tool $fam client $port $peer)" /tmp/cmc.$port)")
		rc=$?
		cm_report_retries "$name" "$out"
		ans=$(agent_call $PEER 180 "WAIT $port")
		echo "info: $name: exit $rc, server on b: $(echo "$ans" | head -n 1), $(($(date +%s) - t0)) s"
		if [ $rc -eq 0 ] && [ "$(echo "$ans" | head -n 1)" = "RC 0" ]; then ok "$name"; return; fi
		echo "$out" | sed 's/^/# client: /'
		echo "$ans" | tail -n 15 | sed 's/^/# server on b: /'
		fail "$name" "client exit $rc: $(echo "$out" | tail -n 2 | tr '\n' ' '); server on b: $(echo "$ans" | tail -n 3 | tr '\n' ' ')"
		return
	fi
	rm -f /tmp/cms.$port.rc
	(eval "timeout 150 $(cm_cmd $tool $fam server $port $me)" >/tmp/cms.$port 2>&1; echo $? >/tmp/cms.$port.rc) &
	(eval "$(cm_wait_listen_sh $tool $port /tmp/cms.$port.rc)") || echo "info: $name: the server is not listening"
	ans=$(agent_call $PEER 180 "SH - $(cm_client_loop "$(cm_cmd $tool $fam client $port $me)" /tmp/cli.$port)")
	cm_report_retries "$name" "$ans"
	wait $!
	rc=$(cat /tmp/cms.$port.rc 2>/dev/null)
	grep -qi mismatch /tmp/cms.$port && rc=99
	echo "info: $name: server exit $rc, client on b: $(echo "$ans" | head -n 1), $(($(date +%s) - t0)) s"
	if [ "$rc" = 0 ] && [ "$(echo "$ans" | head -n 1)" = "RC 0" ]; then ok "$name"; return; fi
	tail -n 15 /tmp/cms.$port | sed 's/^/# server: /'
	echo "$ans" | sed 's/^/# client on b: /'
	fail "$name" "server exit $rc: $(tail -n 2 /tmp/cms.$port | tr '\n' ' '); client on b: $(echo "$ans" | tail -n 3 | tr '\n' ' ')"
}
