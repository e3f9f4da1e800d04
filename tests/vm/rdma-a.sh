# SPDX-License-Identifier: GPL-2.0
# Guest "a" of the RDMA groups (tests/vm/run.sh rdma, rdma-rxe): the client
# side of every RC data path check, first against guest b (rdma-b.sh, whose
# agent runs the servers), then in this guest alone (loopback: client and
# server on one device). Each part runs ibv_rc_pingpong -c, the perftest set
# with all sizes, kite-rc func (every opcode and error completion) and a
# clean kite-rc bulk run (10,000 WRITE + SEND messages, every byte
# verified), then a bulk run with 5% of RoCE frames dropped.
#   RDMA_KIND=kite: the Kite NICs; the host hook rdma.hook sets the kite
#     device's wire-drop-ppm (both guests) when asked ("KITE-SYNC drop-N
#     PPM") and answers over the second serial port.
#   RDMA_KIND=rxe: Soft-RoCE on the virtio-net NICs (the same checks, a
#     baseline for the checks themselves); loss comes from netem on both
#     virtio netdevs; the loopback lossy run is skipped (rxe loopback does
#     not pass through the netdev).
. /kite/lib.sh
. /kite/rdma-lib.sh
BULK_N=${BULK_N:-10000}
FUNC=$(kite-rc count func)
S=$((RDMA_SUITE_RESULTS + FUNC + 1))
plan $((2 * S + 11))

case $RDMA_KIND in
kite) ME=198.18.0.1 PEER=198.18.0.2 ;;
*) ME=198.18.1.1 PEER=198.18.1.2 ;;
esac
host_listen
# (not in $(...): rdma_up sets DEV, GIDX, NETDEV)
if rdma_up "$RDMA_KIND" $ME >/tmp/rdma-up.log 2>&1; then ok rdma-up; cat /tmp/rdma-up.log; else
	fail rdma-up "$(cat /tmp/rdma-up.log)"
	finish
fi

# perftest (Debian's binaries) must load our rdma-core libraries, all found.
bad=
for t in $PERFTEST_BW $PERFTEST_LAT ib_atomic_bw ibv_rc_pingpong kite-rc; do
	out=$(ldd /usr/bin/$t 2>&1) || bad="$bad $t: ldd failed;"
	echo "$out" | grep -q 'not found' && bad="$bad $t: $(echo "$out" | grep 'not found' | tr '\n' ' ');"
	echo "$out" | grep -Eq 'libibverbs.so.1 => (/usr)?/lib/x86_64-linux-gnu/libibverbs.so.1 ' ||
		bad="$bad $t: no libibverbs.so.1;"
done
cmp -s /usr/lib/x86_64-linux-gnu/libibverbs.so.1 /usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.56.1 ||
	bad="$bad libibverbs.so.1 is not rdma-core 56.1's;"
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
		sync_host "drop-$DROP_N $ppm $who"
		if ans=$(host_wait "drop-$DROP_N " 60); then
			case $ans in
			"drop-$DROP_N ok"*) ok drop-$DROP_N ;;
			*) fail drop-$DROP_N "host hook: $ans" ;;
			esac
		else
			fail drop-$DROP_N "no answer from the host hook in 60 s"
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

# ---- two guests -----------------------------------------------------------------
rdma_suite $PEER $PEER pair
set_drop 50000 both
lossy_bulk $PEER $PEER pair 18700
set_drop 0 both
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
[ "$RDMA_KIND" = kite ] && sync_host drop-end
agent_stop
bad=$(dmesg_bad)
[ -z "$bad" ] && ok dmesg-clean || fail dmesg-clean "$(echo "$bad" | head -n 3)"
finish
