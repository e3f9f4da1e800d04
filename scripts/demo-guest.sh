# SPDX-License-Identifier: GPL-2.0
# Guest side of `make demo` (scripts/demo.sh): load kite, address the kite
# netdev, show the RDMA link and the address, ping the other guest; then
# RDMA between the two: guest b serves (the agent of tests/vm/rdma-lib.sh),
# guest a runs ibv_rc_pingpong (data validated, -c) and ib_write_bw as
# clients and prints their results.
. /kite/lib.sh
. /kite/rdma-lib.sh
RUN_TIMEOUT=90

case $KITE_VM in
a) ME=198.18.0.1 PEER=198.18.0.2; plan 5 ;;	# up, ping, pinged, rc_pingpong, ib_write_bw
*) ME=198.18.0.2 PEER=198.18.0.1; plan 4 ;;	# up, ping, pinged, served
esac
echo "== modprobe kite, address $ME"
if rdma_up kite $ME >/tmp/up.log 2>&1; then ok up; cat /tmp/up.log; else
	fail up "$(cat /tmp/up.log)"
	finish
fi
echo "== rdma link show"
$RDMA link show
echo "== ip addr show dev $NETDEV"
$IP addr show dev "$NETDEV"
echo "== ping -c 3 $PEER"
wait_until 60 ping -c 1 -W 1 $PEER	# until the other guest is up
if ping -c 3 -w 10 $PEER; then ok ping; else fail ping "no answer from $PEER"; fi
# Wait until the other guest has pinged us too (3 echo requests seen).
in_echos() {
	awk '$1 == "Icmp:" { if (!n) { for (i = 2; i <= NF; i++) if ($i == "InEchos") n = i; next }
		print $n }' /proc/net/snmp
}
pinged() { [ "$(in_echos)" -ge 3 ]; }
wait_until 60 pinged && ok pinged || fail pinged "the other guest's pings did not arrive ($(in_echos) echo requests)"

if [ "$KITE_VM" != a ]; then
	# Serve a's RDMA clients until it says it is done.
	agent_start
	if wait_until 400 test -f /tmp/agent.quit; then ok served; else fail served "guest a never said it was done"; fi
	agent_stop
	finish
fi
echo "== ibv_rc_pingpong -c -n 100 -s 4096 $PEER  (over kite_0; server on b)"
cs_run rc_pingpong $PEER 18515 'ibv_rc_pingpong -d $DEV -g $GIDX -p $PORT -c -n 100 -s 4096' \
	"ibv_rc_pingpong -d \$DEV -g \$GIDX -p \$PORT -c -n 100 -s 4096 $PEER"
grep -E 'bytes in|iters in' /tmp/cli.18515
echo "== ib_write_bw -s 65536 -n 200 $PEER  (over kite_0; server on b)"
# perftest under TCG sometimes prints 0.00 (no CPU clock sample): run again.
try=0 good=0
while [ $try -lt 3 ] && [ $good = 0 ]; do
	try=$((try + 1))
	port=$((18520 + try))
	cs_run ib_write_bw $PEER $port "ib_write_bw $PT_COMMON -s 65536 -n 200" \
		"ib_write_bw $PT_COMMON -s 65536 -n 200 $PEER" >/tmp/bw.res 2>&1
	grep -v -E '^(ok|FAIL) ' /tmp/bw.res
	bw=$(awk '$1 == 65536 && $2 ~ /^[0-9]+$/ { print $4 }' /tmp/cli.$port)
	if grep -q '^ok ' /tmp/bw.res && [ -n "$bw" ] && [ "$bw" != 0.00 ]; then good=1; fi
done
if [ $good = 1 ]; then ok ib_write_bw; else
	fail ib_write_bw "no figure in $try tries: $(grep '^FAIL ' /tmp/bw.res | cut -c1-200)"
fi
sed -n '/#bytes/,$p' /tmp/cli.$port
agent_call $PEER 30 "SH - touch /tmp/agent.quit" >/dev/null
finish
