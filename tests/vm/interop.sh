# SPDX-License-Identifier: GPL-2.0
# Interoperation with Soft-RoCE, both guests: guest a has a Kite
# NIC (kite_0), guest b a virtio-net NIC with rxe0 on it, on ONE socket link
# (run.sh group interop: vm.py --nic-of b=virtio-net-pci).
#
# The group runs PARTS, in this order, each a function run_PART with its
# number of results in n_PART (so the plan is known before anything runs):
#   pingpong  ibv_rc_pingpong -c (both sides validate the data) with Kite as
#             client and as server, over IPv4 GIDs at path MTU 1024 (4 KiB
#             messages) and 4096 (16 KiB, netdev MTU 9000), and over IPv6
#             GIDs (2001:db8::/64), and with -N (sends through ibv_wr_*)
#             over IPv4 at path MTU 1024
#   perftest  ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw,
#             ib_write_lat and ib_send_lat with Kite as client and as server,
#             over IPv4 GIDs at path MTU 1024, over IPv4 at 4096 and over IPv6
#   other parts live in /kite/interop-PART.sh (tests/vm/interop-*.sh, each
#             included by run.sh), sourced here.
# INTEROP_PARTS (vm.sh --env; run.sh passes $KITE_INTEROP_PARTS) picks some
# of them, in the order above; default: all. Guest a talks to the host hook
# tests/vm/interop.hook with "KITE-SYNC host-N ACTION ARGS" (host_call).
# The TCP exchange of ibv_rc_pingpong always uses IPv4: its server listens
# on IPv4 only, whatever GID the RDMA traffic uses.
. /kite/lib.sh
. /kite/rdma-lib.sh

ALL_PARTS="pingpong perftest"
for f in /kite/interop-*.sh; do
	[ -f "$f" ] || continue
	. "$f"
	f=${f##*/interop-}
	ALL_PARTS="$ALL_PARTS ${f%.sh}"
done
PARTS=${INTEROP_PARTS:-all}
# A part file may set off_PART (the reason) to stay out of "all".
if [ "$PARTS" = all ]; then
	PARTS=
	for p in $ALL_PARTS; do
		eval "why=\${off_$p:-}"
		if [ -n "$why" ]; then echo "# interop part $p is off by default: $why"; continue; fi
		PARTS="$PARTS $p"
	done
fi
PARTS=$(echo "$PARTS" | tr ',' ' ')

case $KITE_VM in
a) KIND=kite ME=198.18.0.1 PEER=198.18.0.2 ME6=2001:db8::1 ;;
*) KIND=rxe ME=198.18.0.2 PEER=198.18.0.1 ME6=2001:db8::2 ;;
esac
PORT=18515
n_pingpong=8
n_perftest=36
total=1
for p in $PARTS; do
	eval "n=\${n_$p:-}"
	[ -n "$n" ] || { echo "interop: unknown part '$p' (parts: $ALL_PARTS)"; n=0; total=$((total + 1)); }
	total=$((total + n))
done
plan $total
for p in $PARTS; do
	eval "[ -n \"\${n_$p:-}\" ]" || fail "part-$p" "no such part (parts: $ALL_PARTS)"
done
[ "$KITE_VM" = a ] && host_listen

# (host_call, rdma-lib.sh: guest a asks interop.hook to act.)

# peer_xchg LINE: swap LINE for the peer's line over TCP (IPv4 port
# PEER_XPORT; a listens, b connects), so that runs in lock step can agree
# on what comes next; prints the peer's line; status 1 when none came
# within PEER_XCHG_SECS.
PEER_XPORT=7197
PEER_XCHG_SECS=${PEER_XCHG_SECS:-150}
peer_xchg() {
	local ans='' end
	end=$(($(date +%s) + PEER_XCHG_SECS))
	if [ "$KITE_VM" = a ]; then
		ans=$(echo "$1" | timeout $PEER_XCHG_SECS $NC -l -N $PEER_XPORT 2>/dev/null)
	else
		while [ -z "$ans" ] && [ "$(date +%s)" -lt $end ]; do
			ans=$(echo "$1" | timeout 10 $NC -N $PEER $PEER_XPORT 2>/dev/null) && [ -n "$ans" ] && break
			usleep 200000
		done
	fi
	echo "$ans"
	[ -n "$ans" ]
}

if rdma_up $KIND $ME >/tmp/up.log 2>&1 && $IP link set "$NETDEV" mtu 9000 &&
	$IP -6 addr add $ME6/64 dev "$NETDEV" nodad && wait_until 10 gid6_of $DEV $ME6; then
	GIDX6=$(gid6_of $DEV $ME6)
	ok "$KIND-up"
	cat /tmp/up.log
else
	fail "$KIND-up" "$(cat /tmp/up.log) (no IPv6 RoCE v2 GID for $ME6?)"
	finish
fi

# pingpong TOOL NAME ROLE GID ARGS: one run of an rdma-core pingpong
# (ibv_rc_pingpong, ibv_ud_pingpong, ibv_srq_pingpong; -c checks the first
# byte of each page and prints "invalid data", exiting 0, on a mismatch)
# as server or client (clients retry while the peer's server is not
# listening yet); ok when it exits 0, reports its iterations and no
# invalid data.
pingpong() {
	local tool=$1 name=$2 role=$3 gid=$4 out=/tmp/$1.out rc
	shift 4
	if ! command -v $tool >/dev/null 2>&1; then
		fail "$name-$KIND-$role" "no $tool in the guest"
		return
	fi
	if [ "$role" = server ]; then
		timeout 90 $tool -d $DEV -g $gid -p $PORT -c "$@" >$out 2>&1
		rc=$?
	else
		for _ in $(seq 1 60); do
			timeout 60 $tool -d $DEV -g $gid -p $PORT -c "$@" $PEER >$out 2>&1
			rc=$?
			grep -q "Couldn't connect" $out || break
			sleep 1
		done
	fi
	grep iters $out
	if [ $rc -eq 0 ] && grep -q iters $out && ! grep -q "invalid data" $out; then
		ok "$name-$KIND-$role"
	else
		fail "$name-$KIND-$role" "exit $rc: $(tail -n 3 $out | tr '\n' ' ')"
	fi
}

# pp NAME ROLE GID ARGS: one ibv_rc_pingpong run.
pp() { pingpong ibv_rc_pingpong "$@"; }

# a is the client first in each pair of runs, then the server.
run_pingpong() {
for cfg in v4-mtu1024 v4-mtu4096 v6-mtu1024 v4-wr-api; do
	wrapi=
	case $cfg in
	v4-mtu1024) gid=$GIDX mtu=1024 size=4096 ;;
	v4-mtu4096) gid=$GIDX mtu=4096 size=16384 ;;
	v4-wr-api) gid=$GIDX mtu=1024 size=4096 wrapi=-N ;;
	*) gid=$GIDX6 mtu=1024 size=4096 ;;
	esac
	if [ "$KITE_VM" = a ]; then
		pp $cfg client $gid -m $mtu -s $size -n 100 $wrapi
		pp $cfg server $gid -m $mtu -s $size -n 100 $wrapi
	else
		pp $cfg server $gid -m $mtu -s $size -n 100 $wrapi
		pp $cfg client $gid -m $mtu -s $size -n 100 $wrapi
	fi
done
}
# pt NAME ROLE PORT CMD...: one perftest run as server or client, like pp,
# then both sides swap how their run ended (peer_xchg: ok, clock or fail).
# perftest derives its figures from the CPU clock and gives up when it
# cannot sample it: a run that failed for that alone on either side, with
# the other side fine or failed the same way, is run again by both on a
# new port, PT_CLOCK_TRIES
# tries at most, each repeat a reported retry. A clock failure after the
# last try is a failure.
PT_CLOCK_TRIES=3
PT_TRY_PORTS=1000
pt() {
	local name=$1 role=$2 port=$3 rc try=1 mine word theirs
	shift 3
	while :; do
		pt_once $role $((port + (try - 1) * PT_TRY_PORTS)) "$@"
		rc=$PT_RC
		mine=$(pt_state $rc)
		word=$(peer_xchg "pt $name $try $mine")
		theirs=none
		case $word in "pt $name $try "*) theirs=${word##* } ;; esac
		clock_repeat $mine $theirs $try || break
		retry "$name-$KIND-$role" "perftest could not sample the CPU clock (this side $mine, exit $rc; the peer $theirs; try $try of $PT_CLOCK_TRIES)"
		try=$((try + 1))
	done
	grep -A1 -E '#bytes' /tmp/pt.out | tail -n 1
	case $mine in
	ok) ok "$name-$KIND-$role" ;;
	clock) fail "$name-$KIND-$role" "perftest could not sample the CPU clock in $try tries (exit $rc; the peer: $theirs)" ;;
	*) fail "$name-$KIND-$role" "exit $rc (the peer: $theirs): $(tail -n 3 /tmp/pt.out | tr '\n' ' ')" ;;
	esac
}

# clock_repeat MINE THEIRS TRY: both sides run again after try TRY, which
# ended MINE here and THEIRS on the peer (pt_state): one side failed only
# on the CPU clock, the other was fine or failed the same way, and tries
# are left.
clock_repeat() {
	[ "$3" -lt $PT_CLOCK_TRIES ] || return 1
	case $1:$2 in clock:ok | clock:clock | ok:clock) return 0 ;; esac
	return 1
}

# pt_once ROLE PORT CMD...: one perftest run (clients retry while the
# peer's server is not listening yet: no connection, so nothing ran);
# exit status in PT_RC, output in /tmp/pt.out.
pt_once() {
	local role=$1 port=$2
	shift 2
	if [ "$role" = server ]; then
		timeout 120 "$@" -p $port >/tmp/pt.out 2>&1
		PT_RC=$?
		return
	fi
	for _ in $(seq 1 60); do
		timeout 120 "$@" -p $port $PEER >/tmp/pt.out 2>&1
		PT_RC=$?
		grep -qE "Couldn't connect|Unable to open file descriptor" /tmp/pt.out || break
		sleep 1
	done
}

# pt_state RC [OUT]: how the run with output OUT (default /tmp/pt.out)
# and exit RC ended: ok, clock (it failed only because perftest could not
# sample the CPU clock: its words, no timeout or signal, no transfer
# error) or fail.
pt_state() {
	local out=${2:-/tmp/pt.out}
	if [ "$1" -eq 0 ]; then
		echo ok
	elif [ "$1" -ne 124 ] && [ "$1" -lt 128 ] &&
		grep -qE "$PT_CLOCK_SIG" $out &&
		! grep -qiE "failed|error|couldn't|unable|timeout|terminated" $out; then
		echo clock
	else
		echo fail
	fi
}

# Each tool with Kite as client and as server, over IPv4 at path MTU 1024,
# over IPv4 at 4096 and over IPv6 (the TCP exchange always over IPv4).
run_perftest() {
	local cfg tool args gid port=18600
	for cfg in v4 v4-mtu4096 v6; do
		case $cfg in
		v4) gid="-x $GIDX -m 1024" ;;
		v4-mtu4096) gid="-x $GIDX -m 4096" ;;
		*) gid="-x $GIDX6 -m 1024" ;;
		esac
		for tool in ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw ib_write_lat ib_send_lat; do
			case $tool in
			ib_atomic_bw) args="-n 100" ;;
			*_lat) args="-n 100 -s 4096" ;;
			*) args="-n 100 -s 65536" ;;
			esac
			# shellcheck disable=SC2086 # $gid and $args are lists of options
			if [ "$KITE_VM" = a ]; then
				pt $tool-$cfg client $port $tool -d $DEV $gid -F --use_old_post_send $args
				pt $tool-$cfg server $((port + 1)) $tool -d $DEV $gid -F --use_old_post_send $args
			else
				pt $tool-$cfg server $port $tool -d $DEV $gid -F --use_old_post_send $args
				pt $tool-$cfg client $((port + 1)) $tool -d $DEV $gid -F --use_old_post_send $args
			fi
			port=$((port + 2))
		done
	done
}

for p in $PARTS; do
	eval "[ -n \"\${n_$p:-}\" ]" || continue
	echo "# interop part $p"
	"run_$p"
done
# The hook ends when told (its answer is printed as information).
[ "$KITE_VM" = a ] && host_call end

# Both ends' non-zero counters (rxe's retries and duplicates explained in
# Documentation/kite/model.rst, "Interoperating with Soft-RoCE").
echo "# $DEV counters:"
grep . /sys/class/infiniband/$DEV/ports/1/hw_counters/* 2>/dev/null | sed 's|.*/||' | grep -v ':0$'

finish
