# SPDX-License-Identifier: GPL-2.0
# Guest "a" (198.18.0.1) of the two-guest run. Runs the single-VM checks
# (device, sysfs, GID table, load/unload cycles) and the network checks
# against guest "b" (pair-b.sh): ping, an 8 MiB TCP transfer with sha256
# comparison, and link down/up driven by the host hook pair.hook (carrier,
# port state, and the IB_EVENT_PORT_ERR/ACTIVE the driver raises, seen by a
# kprobe on ib_core's ib_dispatch_event()). rdma-core with the kite
# provider: ibv_devices, ibv_devinfo -v (limits compared with
# the model's qemu/kite_limits.h and kite_hw.h, port state, link layer, GID), the C test kite-verbs.c and the
# raw uverbs bad-udata test kite-uverbs-fuzz.c. Module load order: kite
# (core and Ethernet) alone with kite_ib's autoload off, then kite_ib;
# rmmod kite_ib with the netdev up; rmmod kite refused while kite_ib is
# loaded; PCI unbind and bind with both loaded. devlink (dev, dev info,
# health show and diagnose) and ethtool -i and -S against each other and
# the PCI function.
. /kite/lib.sh
PAIR_RDMA_A_N=0
if [ "${PAIR_RDMA:-0}" = 1 ]; then
	. /kite/rdma-lib.sh
	. /kite/pair-rdma.sh
	. /kite/soak.sh
	PAIR_RDMA_A_N=$((PAIR_RDMA_A_N + SOAK_A_N))
fi
plan $((160 + PAIR_RDMA_A_N))

ME=198.18.0.1
PEER=198.18.0.2
GID_ME=0000:0000:0000:0000:0000:ffff:c612:0001	# ::ffff:198.18.0.1
CYCLES=20
NOAUTO_CONF=/etc/modprobe.d/kite-test-noauto.conf
AUX_UEVENT=/sys/bus/auxiliary/devices/kite.rdma.0/uevent

ib_devices() { ls /sys/class/infiniband 2>/dev/null; }

# ---- load order: the core alone, then the RDMA driver ---------------------
# With kite_ib blacklisted, the auxiliary device's uevent loads nothing:
# kite alone must give a working netdev and no RDMA device. What mdev does
# for that uevent, modprobe of the device's MODALIAS, runs here as well and
# to its end, so the check does not depend on how long mdev takes.
mkdir -p "${NOAUTO_CONF%/*}"
echo "blacklist kite_ib" >"$NOAUTO_CONF"
check modprobe-core-alone modprobe kite
NETDEV=$(kite_netdev)
if [ -z "$NETDEV" ]; then
	fail netdev "no net_device bound to the kite driver: $(ls /sys/class/net)"
	finish
fi
ok netdev
aux=$(ls /sys/bus/auxiliary/devices 2>/dev/null)
[ "$aux" = kite.rdma.0 ] && ok aux-device || fail aux-device "auxiliary devices: '$aux'"
$IP addr add $ME/24 dev "$NETDEV"
$IP link set "$NETDEV" up
ping_check ping-core-alone $PEER
aux_alias=$(sed -n 's/^MODALIAS=//p' "$AUX_UEVENT" 2>/dev/null)
if [ -z "$aux_alias" ]; then
	fail no-ib-core-alone "no MODALIAS in $AUX_UEVENT"
elif out=$(modprobe "$aux_alias" 2>&1); [ -e /sys/module/kite_ib ]; then
	fail no-ib-core-alone "modprobe $aux_alias loaded kite_ib although blacklisted"
elif [ -n "$(ib_devices)" ]; then
	fail no-ib-core-alone "RDMA devices without kite_ib: $(ib_devices)"
else
	ok no-ib-core-alone
	echo "info: modprobe $aux_alias with kite_ib blacklisted: ${out:-no output}"
fi
rm -f "$NOAUTO_CONF"
# Watch ib_core's event dispatch (IB_EVENT_PORT_ERR/ACTIVE) from here on.
ibev_trace_start || fail ibev-trace "cannot set a kprobe on ib_dispatch_event"
check modprobe-kite_ib modprobe kite_ib
if ! kite_ib_wait; then
	fail ib-device "$IBSYS did not appear; infiniband: $(ib_devices)"
	finish
fi
ok ib-device
wait_until 10 port_is ACTIVE
out=$($RDMA link show "$IBDEV/1" 2>&1)
case $out in
*"state ACTIVE"*"netdev $NETDEV"*) ok rdma-link-active ;;
*) fail rdma-link-active "rdma link show: $out" ;;
esac

# ---- sysfs: what ibv_devices / ibv_devinfo read ----------------------------
missing=
for f in node_type node_guid sys_image_guid fw_ver node_desc ports/1/state \
	ports/1/phys_state ports/1/link_layer ports/1/rate ports/1/gids/0 \
	ports/1/gid_attrs/types/0 ports/1/gid_attrs/ndevs/0; do
	[ -r "$IBSYS/$f" ] && cat "$IBSYS/$f" >/dev/null 2>&1 || missing="$missing $f"
done
if [ -z "$missing" ]; then ok sysfs-attrs; else fail sysfs-attrs "missing or unreadable:$missing"; fi
ll=$(cat "$IBSYS/ports/1/link_layer" 2>&1)
[ "$ll" = Ethernet ] && ok sysfs-link-layer || fail sysfs-link-layer "link_layer=$ll"
nt=$(cat "$IBSYS/node_type" 2>&1)
case $nt in *CA*) ok sysfs-node-type ;; *) fail sysfs-node-type "node_type=$nt" ;; esac
guid=$(cat "$IBSYS/node_guid" 2>&1)
case $guid in
0000:0000:0000:0000 | "" | *[!0-9a-f:]*) fail sysfs-node-guid "node_guid=$guid" ;;
*) ok sysfs-node-guid ;;
esac
ndev=$(cat "$IBSYS/ports/1/gid_attrs/ndevs/0" 2>&1)
[ "$ndev" = "$NETDEV" ] && ok sysfs-gid-ndev || fail sysfs-gid-ndev "gid 0 ndev=$ndev, want $NETDEV"

# ---- GID table follows the netdev's IPv4 address ---------------------------
# The address added before kite_ib loaded is in the table from the start;
# one added later appears when it is added.
if wait_until 10 gid_index $GID_ME; then ok gid-existing-addr; else
	fail gid-existing-addr "$GID_ME (added before kite_ib loaded) not in the GID table"
fi
$IP addr del $ME/24 dev "$NETDEV"
if wait_until 10 gid_absent $GID_ME; then ok gid-del-existing; else
	fail gid-del-existing "$GID_ME still at index $(gid_index $GID_ME) after 'ip addr del'"
fi
$IP addr add $ME/24 dev "$NETDEV"
if wait_until 10 gid_index $GID_ME; then
	i=$(gid_index $GID_ME)
	t=$(cat "$IBSYS/ports/1/gid_attrs/types/$i" 2>&1)
	[ "$t" = "RoCE v2" ] && ok gid-add || fail gid-add "GID $GID_ME at index $i has type '$t'"
else
	fail gid-add "$GID_ME not in the GID table: $(cat "$IBSYS"/ports/1/gids/* 2>/dev/null | sort -u | grep -v '^0000:0000:0000:0000:0000:0000:0000:0000$')"
fi

# ---- rdma-core: libibverbs with the kite provider -----------------------------
# Limits as the device model defines them (the test program prints them:
# compiled against qemu/kite_limits.h when the image was built).
limits=$(kite-verbs limits 2>&1)
rc=$?
bad=
if [ $rc -ne 0 ]; then
	bad="exited $rc"
elif echo "$limits" | grep -qvE '^KITE_[A-Z0-9_]+=(0x[0-9a-f]+|[0-9]+)$'; then
	bad="unexpected output"
else
	eval "$limits"
	for v in KITE_DEF_MAX_QP KITE_DEF_MAX_CQ KITE_DEF_MAX_MR KITE_DEF_MAX_PD \
		KITE_DEF_MAX_MW KITE_PCI_VENDOR_ID KITE_PCI_DEVICE_ID; do
		eval "[ -n \"\${$v:-}\" ]" || bad="$bad no $v"
	done
fi
limits_ok=
if [ -z "$bad" ]; then ok verbs-limits; limits_ok=1; else
	fail verbs-limits "kite-verbs limits: $bad: $(echo "$limits" | tail -n 3)"
fi
check modprobe-ib_uverbs modprobe ib_uverbs
if wait_until 10 sh -c 'ls /dev/infiniband/uverbs* >/dev/null 2>&1'; then ok uverbs-dev; else
	fail uverbs-dev "no /dev/infiniband/uverbs* after modprobe ib_uverbs: $(ls /dev/infiniband 2>&1)"
fi
# ibv_devices lists kite_0 with the node GUID that sysfs shows.
out=$(ibv_devices 2>&1)
want=$(tr -d : <"$IBSYS/node_guid")
if echo "$out" | grep -Eq "^[[:space:]]+$IBDEV[[:space:]]+$want\$"; then ok ibv-devices; else
	fail ibv-devices "want '$IBDEV $want' in: $out"
fi
# devinfo_val KEY: value of "KEY:" in the saved ibv_devinfo -v output.
devinfo_val() {
	awk -v k="$1:" '{ sub(/^[ \t]+/, "") } index($0, k) == 1 {
		sub(/^[^:]*:[ \t]*/, ""); print; exit }' /tmp/devinfo
}
if ibv_devinfo -v -d $IBDEV >/tmp/devinfo 2>&1; then ok ibv-devinfo; else
	fail ibv-devinfo "ibv_devinfo -v -d $IBDEV: $(tail -n 3 /tmp/devinfo)"
fi
bad=
[ -n "$limits_ok" ] || bad="no limits to compare with (verbs-limits failed)"
[ -n "$bad" ] || for kv in max_qp=$KITE_DEF_MAX_QP max_cq=$KITE_DEF_MAX_CQ max_mr=$KITE_DEF_MAX_MR \
	max_pd=$KITE_DEF_MAX_PD max_mw=$KITE_DEF_MAX_MW vendor_id=$KITE_PCI_VENDOR_ID \
	vendor_part_id=$((KITE_PCI_DEVICE_ID)) fw_ver=$(cat "$IBSYS/fw_ver") \
	phys_port_cnt=1 hca_id=$IBDEV; do
	got=$(devinfo_val "${kv%%=*}")
	[ "$got" = "${kv#*=}" ] || bad="$bad ${kv%%=*}='$got' (want ${kv#*=})"
done
[ -z "$bad" ] && ok ibv-devinfo-caps || fail ibv-devinfo-caps "$bad"
# The memory-management extensions storage ULPs need, by ibv_devinfo's names.
bad=
for f in MEM_WINDOW MEM_MGT_EXTENSIONS MEM_WINDOW_TYPE_2B; do
	grep -Eq "^[[:space:]]+$f\$" /tmp/devinfo || bad="$bad $f"
done
[ -z "$bad" ] && ok ibv-devinfo-mem-mgt || fail ibv-devinfo-mem-mgt "device_cap_flags lack:$bad"
got=$(devinfo_val state)
[ "$got" = "PORT_ACTIVE (4)" ] && ok ibv-devinfo-port-active || fail ibv-devinfo-port-active "state: '$got'"
got=$(devinfo_val link_layer)
[ "$got" = Ethernet ] && ok ibv-devinfo-link-layer || fail ibv-devinfo-link-layer "link_layer: '$got'"
if grep -Eq "GID\[ *[0-9]+\]:[[:space:]]+::ffff:$ME, RoCE v2\$" /tmp/devinfo; then ok ibv-devinfo-gid; else
	fail ibv-devinfo-gid "no '::ffff:$ME, RoCE v2' GID: $(grep 'GID\[' /tmp/devinfo)"
fi
# The C test (tests/vm/kite-verbs.c): device, port, GID, doorbell mapping,
# 100 PDs, CQ/QP/MR create and destroy, CQ resize and arming, QP state
# walks (RC/UC/UD; RC and UD also through SQD and back) and illegal
# transitions, MRs of 4 KiB, 2 MiB, 256 MiB and 1 GiB, error paths and
# their errno, leak loops (1,000 CQ/QP/MR cycles, 1,000 PD cycles, 200
# 256 MiB MRs; device counts, restrack, pinned pages and kmalloc slab
# objects), scale (10,000 QPs, 1,000 CQs and 10,000 MRs in one process,
# creation rates as info lines, a sample of them carrying WRITEs; a 4 GiB
# MR over 2 MiB of memory), context open/close cycles.
# It prints its own ok/FAIL lines; count its failures here, and its crash.
out=$(kite-verbs basic $IBDEV ::ffff:$ME 2>&1)
rc=$?
echo "$out"
n=$(echo "$out" | grep -c '^FAIL ')
failures=$((failures + n))
if [ $rc -ne 0 ] && [ "$n" -eq 0 ]; then fail verbs-exit "kite-verbs exited $rc without a FAIL line"; fi
rm -f /tmp/devinfo

# Raw uverbs commands with bad udata (tests/vm/kite-uverbs-fuzz.c): 30
# results of its own (clean errno per class, 2000 seeded random commands,
# state intact, device object counts back), then the kernel log since.
FUZZ_SEED=1
dmesg_lines=$(dmesg | wc -l)
start=$(date +%s)
out=$(timeout 300 kite-uverbs-fuzz $IBDEV $FUZZ_SEED 2>&1)
rc=$?
echo "$out"
echo "info: kite-uverbs-fuzz took $(($(date +%s) - start)) s"
n=$(echo "$out" | grep -c '^FAIL ')
failures=$((failures + n))
if [ $rc -ne 0 ] && [ "$n" -eq 0 ]; then fail uverbs-fuzz-exit "kite-uverbs-fuzz exited $rc without a FAIL line"; fi
bad=$(dmesg | tail -n +$((dmesg_lines + 1)) | grep -E "$BAD_DMESG")
[ -z "$bad" ] && ok uverbs-fuzz-dmesg-clean || fail uverbs-fuzz-dmesg-clean "$(echo "$bad" | head -n 3)"

# ---- diagnosis: tracepoints, debugfs, restrack driver details ---------------
# The kite and kite_ib tracepoints enabled through tracefs during a loopback
# ibv_rc_pingpong (-e: completion events) must show its admin commands with
# status and latency, both QPs' RESET->INIT->RTR->RTS, and completion EQ
# entries. The debugfs QP dump (QUERY_QP) must give what ibv_query_qp gives
# for a QP that kite-verbs qp-hold keeps in RTS, and rdma res -dd the
# driver's fields of that QP and of the CQs.
pp_listening() { grep -qi ":$(printf %04X "$1") 00000000:0000 0A" /proc/net/tcp; }
DBG=/sys/kernel/debug/kite/$(kite_pci)
gidx=$(gid_index $GID_ME)
: >$TRACEFS/trace
if echo 1 >$TRACEFS/events/kite/enable && echo 1 >$TRACEFS/events/kite_ib/enable; then
	ok trace-enable
else
	fail trace-enable "events in tracefs: $(ls $TRACEFS/events | grep kite)"
fi
timeout 120 ibv_rc_pingpong -d $IBDEV -g "$gidx" -p 18600 -e -n 20 >/tmp/pp-s 2>&1 &
pps=$!
if wait_until 30 pp_listening 18600; then
	timeout 120 ibv_rc_pingpong -d $IBDEV -g "$gidx" -p 18600 -e -n 20 127.0.0.1 >/tmp/pp-c 2>&1
	ppc=$?
else
	ppc="not started (server not listening)"
fi
wait $pps
pps=$?
echo 0 >$TRACEFS/events/kite/enable
echo 0 >$TRACEFS/events/kite_ib/enable
grep -E 'kite_(admin_cmd|ib_qp_|eqe)' $TRACEFS/trace >/tmp/kite-trace
if [ "$ppc" = 0 ] && [ "$pps" = 0 ]; then ok trace-pingpong; else
	fail trace-pingpong "client $ppc, server $pps: $(tail -n 2 /tmp/pp-c) / $(tail -n 2 /tmp/pp-s)"
fi
bad=
for op in ALLOC_UCTX ALLOC_PD CREATE_CQ REG_MR CREATE_QP MODIFY_QP DESTROY_QP DEREG_MR DESTROY_CQ; do
	grep -Eq "kite_admin_cmd: [^ ]+ $op \(0x[0-9a-f]{2}\) cmd_id=0x[0-9a-f]{4} status=OK \(0x00\) err=0 latency_ns=[1-9][0-9]*\$" \
		/tmp/kite-trace || bad="$bad $op"
done
[ -z "$bad" ] && ok trace-admin-cmds || fail trace-admin-cmds "no successful$bad in $(wc -l </tmp/kite-trace) trace lines: $(grep -m 3 kite_admin_cmd /tmp/kite-trace)"
# Both pingpong QPs: created, RESET->INIT->RTR->RTS in that order, destroyed.
walked=0
for qpn in $(sed -n 's/.*kite_ib_qp_create: [^ ]* qpn=\([1-9][0-9]*\) type=RC .* err=0$/\1/p' /tmp/kite-trace); do
	seq=$(awk -v q="qpn=$qpn" '/kite_ib_qp_(modify|destroy): / && / err=0$/ {
		for (i = 1; i <= NF; i++) if ($i == q) break
		if (i > NF) next
		if ($0 ~ /kite_ib_qp_destroy/) printf "destroy "
		else printf "%s ", $(i + 1) }' /tmp/kite-trace)
	[ "$seq" = "RESET->INIT INIT->RTR RTR->RTS destroy " ] && walked=$((walked + 1))
done
[ $walked -ge 2 ] && ok trace-qp-transitions ||
	fail trace-qp-transitions "$walked QPs created, walked RESET->INIT->RTR->RTS and destroyed: $(grep -m 6 kite_ib_qp_ /tmp/kite-trace)"
if grep -Eq 'kite_eqe: [^ ]+ eqn=[1-9][0-9]* ci=[0-9]+ type=COMPLETION data=0x' /tmp/kite-trace; then
	ok trace-eq-events
else
	fail trace-eq-events "no completion EQ entry traced: $(grep -m 3 kite_eqe /tmp/kite-trace)"
fi
: >$TRACEFS/trace
bad=
grep -Eq '^0x000 VERSION +0x[0-9a-f]{8}$' $DBG/regs || bad="$bad regs: $(head -n 1 $DBG/regs 2>&1)"
grep -q "^max_qp $KITE_DEF_MAX_QP\$" $DBG/caps || bad="$bad caps: $(grep max_qp $DBG/caps 2>&1)"
posted=$(sed -n 's/^posted //p' $DBG/admin 2>/dev/null)
okc=$(sed -n 's/^ok //p' $DBG/admin 2>/dev/null)
[ "${posted:-0}" -gt 0 ] && [ "${okc:-0}" -gt 0 ] && [ "$okc" -le "$posted" ] ||
	bad="$bad admin: posted '$posted' ok '$okc'"
grep -Eq '^eqn 0 vector 0 depth [1-9][0-9]* ci [0-9]+ ' $DBG/eqs &&
	grep -Eq '^eqn [1-9][0-9]* vector [1-9][0-9]* depth [1-9][0-9]* ci [0-9]+ irq 1 created 1$' $DBG/eqs ||
	bad="$bad eqs: $(head -n 2 $DBG/eqs 2>&1)"
[ -z "$bad" ] && ok debugfs-dev || fail debugfs-dev "$bad"
# kite-verbs qp-hold keeps its QP until its stdin (a fifo) ends.
rm -f /tmp/hold.in && mkfifo /tmp/hold.in
kite-verbs qp-hold $IBDEV ::ffff:$ME </tmp/hold.in >/tmp/hold.out 2>&1 &
holdpid=$!
exec 9>/tmp/hold.in
wait_until 20 grep -q '^qpn=' /tmp/hold.out
q=$(grep '^qpn=' /tmp/hold.out)
qpn=$(echo "$q" | sed -n 's/^qpn=\([0-9]*\) .*/\1/p')
d=$(grep "^qpn=$qpn " $DBG/rdma/qps 2>&1)
bad=
[ -n "$qpn" ] || bad="kite-verbs qp-hold: $(cat /tmp/hold.out)"
[ -n "$bad" ] || for kv in ${q#qpn=* }; do
	case " $d " in *" $kv "*) ;; *) bad="$bad $kv" ;; esac
done
[ -z "$bad" ] && ok debugfs-qp-vs-query || fail debugfs-qp-vs-query "ibv_query_qp '$q', debugfs lacks$bad: '$d'"
# has_all TEXT WORD...: the words TEXT lacks (none: all there).
has_all() {
	local t=" $(echo "$1" | tr -s ' \n\t' '   ') " w
	shift
	for w in "$@"; do
		case $t in *" $w "*) ;; *) printf ' %s' "$w" ;; esac
	done
}
out=$($RDMA -dd res show qp link $IBDEV/1 lqpn "${qpn:-0}" 2>&1)
bad=$(has_all "$out" "lqpn" "${qpn:-none}" state RTS comm kite-verbs drv_sq_depth drv_rq_depth drv_uctx drv_tx_packets)
[ -z "$bad" ] && ok rdma-res-qp-dd || fail rdma-res-qp-dd "rdma -dd res show qp lqpn $qpn lacks$bad: $out"
out=$($RDMA -dd res show cq dev $IBDEV 2>&1 | grep 'comm kite-verbs')
bad=$(has_all "$out" drv_dev_cqn drv_depth drv_uctx drv_eqn drv_pi drv_flags)
[ -n "$out" ] && [ -z "$bad" ] && ok rdma-res-cq-dd ||
	fail rdma-res-cq-dd "rdma -dd res show cq: kite-verbs' CQ lacks$bad: $out"
echo "info: rdma -r res show qp lqpn $qpn: $($RDMA -r res show qp link $IBDEV/1 lqpn "${qpn:-0}" 2>&1 | tr -s ' \n' '  ' | cut -c1-300)"
exec 9>&-
wait $holdpid
rc=$?
[ $rc -eq 0 ] && ok qp-hold-exit || fail qp-hold-exit "kite-verbs qp-hold exited $rc: $(cat /tmp/hold.out)"
rm -f /tmp/hold.in /tmp/hold.out /tmp/kite-trace /tmp/pp-s /tmp/pp-c

# ---- diagnosis: rdma statistic, counters QPs are bound to -------------------
# Auto mode by QP type: kite-verbs qp-hold's RC QP gets a counter, and a
# loopback ibv_rc_pingpong's two RC QPs join it. When the pingpong has
# ended, the counter (which qp-hold's QP keeps) still holds what its QPs
# sent and received: at least the messages both sides sent, in packets and
# bytes. rdma statistic show link reads the port counters, which count the
# bound QPs once: between two ethtool -S readings of the device's. With
# auto off, by hand: unbinding qp-hold's QP removes its counter and the
# port's values do not go back; binding it again gives a new counter at 0;
# a second bind of the QP is refused; after the last unbind no counter is
# left.
PP_N=50
PP_SIZE=4096
# stat_qp: the port's counters, one line each ("link ... cntn N ... LQPN: <..>").
stat_qp() {
	$RDMA statistic qp show link $IBDEV/1 2>&1 |
		awk '/^link / { if (l != "") print l; l = $0; next } { l = l " " $0 } END { if (l != "") print l }'
}
# stat_val TEXT NAME: the number after the word NAME in TEXT.
stat_val() { echo " $1 " | tr -s ' \t\n' '   ' | sed -n "s/.* $2 \([0-9][0-9]*\) .*/\1/p"; }
# stat_lqpns LINE: the QP numbers a counter line lists.
stat_lqpns() { echo "$1" | sed -n 's/.*LQPN: *<\([^>]*\)>.*/\1/p' | tr ',' ' '; }
# stat_cnt_of QPN: the counter line that lists QPN.
stat_cnt_of() {
	local l q
	stat_qp | while read -r l; do
		for q in $(stat_lqpns "$l"); do
			[ "$q" = "$1" ] && { echo "$l"; break; }
		done
	done
}
dev_stat() { $ETHTOOL -S "$NETDEV" 2>/dev/null | sed -n "s/^ *dev_$1: *//p"; }
link_stat() { stat_val "$($RDMA statistic show link $IBDEV/1 2>&1)" "$1"; }
check stat-auto-on $RDMA statistic qp set link $IBDEV/1 auto type on
echo "info: rdma statistic qp mode: $($RDMA statistic qp mode link $IBDEV/1 2>&1)"
rm -f /tmp/hold.in && mkfifo /tmp/hold.in
kite-verbs qp-hold $IBDEV ::ffff:$ME </tmp/hold.in >/tmp/hold.out 2>&1 &
holdpid=$!
exec 9>/tmp/hold.in
wait_until 20 grep -q '^qpn=' /tmp/hold.out
hqpn=$(sed -n 's/^qpn=\([0-9]*\) .*/\1/p' /tmp/hold.out)
cl=$(stat_cnt_of "${hqpn:-none}")
cntn=$(stat_val "$cl" cntn)
if [ -n "$hqpn" ] && [ -n "$cntn" ] && [ -n "$(stat_val "$cl" tx_roce_packets)" ] &&
	case " $cl " in *" qp-type RC "*) true ;; *) false ;; esac; then
	ok stat-auto-bind
else
	fail stat-auto-bind "qp-hold QP '$hqpn' ($(cat /tmp/hold.out)) in no RC counter: $(stat_qp)"
fi
timeout 120 ibv_rc_pingpong -d $IBDEV -g "$gidx" -p 18601 -s $PP_SIZE -n $PP_N >/tmp/pp-s 2>&1 &
pps=$!
if wait_until 30 pp_listening 18601; then
	timeout 120 ibv_rc_pingpong -d $IBDEV -g "$gidx" -p 18601 -s $PP_SIZE -n $PP_N 127.0.0.1 >/tmp/pp-c 2>&1
	ppc=$?
else
	ppc="not started (server not listening)"
fi
wait $pps
pps=$?
if [ "$ppc" = 0 ] && [ "$pps" = 0 ]; then ok stat-pingpong; else
	fail stat-pingpong "client $ppc, server $pps: $(tail -n 2 /tmp/pp-c) / $(tail -n 2 /tmp/pp-s)"
fi
# The pingpong's QPs are gone; what they did stays in the counter.
cl=$(stat_cnt_of "${hqpn:-none}")
tx=$(stat_val "$cl" tx_roce_packets)
rx=$(stat_val "$cl" rx_roce_packets)
txb=$(stat_val "$cl" tx_roce_bytes)
if [ "$(stat_val "$cl" cntn)" = "$cntn" ] && [ "$(stat_lqpns "$cl" | tr -d ' ')" = "$hqpn" ] &&
	[ "${tx:-0}" -ge $((2 * PP_N)) ] && [ "${rx:-0}" -ge $((2 * PP_N)) ] &&
	[ "${txb:-0}" -ge $((2 * PP_N * PP_SIZE)) ] &&
	case " $cl " in *" num_qp "* | *" icrc_errors "*) false ;; *) true ;; esac; then
	ok stat-counter-kept
else
	fail stat-counter-kept "counter $cntn after $PP_N pingpong messages each way (want >= $((2 * PP_N)) packets, >= $((2 * PP_N * PP_SIZE)) bytes sent, only qp-hold's QP $hqpn, no port-only counters): $cl"
fi
e1=$(dev_stat roce_tx_packets)
out=$($RDMA statistic show link $IBDEV/1 2>&1)
e2=$(dev_stat roce_tx_packets)
r1=$(stat_val "$out" tx_roce_packets)
if [ -n "$r1" ] && [ -n "$(stat_val "$out" rx_roce_bytes)" ] && [ -n "$(stat_val "$out" num_qp)" ] &&
	[ -n "$e1" ] && [ "$e1" -le "$r1" ] && [ "$r1" -le "${e2:-0}" ]; then
	ok stat-link
else
	fail stat-link "rdma statistic show link tx_roce_packets '$r1' not between the device's $e1 and $e2: $out"
fi
check stat-auto-off $RDMA statistic qp set link $IBDEV/1 auto off
echo "info: rdma statistic qp mode after auto off: $($RDMA statistic qp mode link $IBDEV/1 2>&1)"
out=$($RDMA statistic qp unbind link $IBDEV/1 cntn "${cntn:-0}" lqpn "${hqpn:-0}" 2>&1)
rc=$?
r2=$(link_stat tx_roce_packets)
e3=$(dev_stat roce_tx_packets)
if [ $rc -eq 0 ] && [ -z "$(stat_cnt_of "${hqpn:-none}")" ] &&
	[ "${r2:-0}" -ge "${r1:-1}" ] && [ "${r2:-0}" -le "${e3:-0}" ]; then
	ok stat-unbind
else
	fail stat-unbind "unbind cntn $cntn lqpn $hqpn: rc $rc '$out'; link tx_roce_packets $r1 -> '$r2' (device $e3); counters: $(stat_qp)"
fi
out=$($RDMA statistic qp bind link $IBDEV/1 lqpn "${hqpn:-0}" 2>&1)
rc=$?
cl=$(stat_cnt_of "${hqpn:-none}")
cntn2=$(stat_val "$cl" cntn)
if [ $rc -eq 0 ] && [ -n "$cntn2" ] && [ "$(stat_val "$cl" tx_roce_packets)" = 0 ] &&
	[ "$(stat_val "$cl" rx_roce_packets)" = 0 ]; then
	ok stat-bind-new
else
	fail stat-bind-new "bind lqpn $hqpn: rc $rc '$out'; want a new counter at 0: $(stat_qp)"
fi
if out=$($RDMA statistic qp bind link $IBDEV/1 lqpn "${hqpn:-0}" cntn "${cntn2:-0}" 2>&1); then
	fail stat-bind-twice "a second bind of QP $hqpn to counter $cntn2 succeeded: $(stat_qp)"
else
	ok stat-bind-twice
fi
out=$($RDMA statistic qp unbind link $IBDEV/1 cntn "${cntn2:-0}" lqpn "${hqpn:-0}" 2>&1)
rc=$?
left=$(stat_qp | grep -c '^link ')
if [ $rc -eq 0 ] && [ "$left" = 0 ]; then ok stat-unbind-last; else
	fail stat-unbind-last "unbind cntn $cntn2 lqpn $hqpn: rc $rc '$out'; counters left: $(stat_qp)"
fi
exec 9>&-
wait $holdpid
rc=$?
[ $rc -eq 0 ] && ok stat-hold-exit || fail stat-hold-exit "kite-verbs qp-hold exited $rc: $(cat /tmp/hold.out)"
rm -f /tmp/hold.in /tmp/hold.out /tmp/pp-s /tmp/pp-c

# ---- network to guest b ------------------------------------------------------
ping_check ping $PEER

# ---- link state: the host hook runs "set_link n0 off/on" --------------------
ibev_clear
sync_host linkdown
if wait_until 20 carrier_is "$NETDEV" 0; then ok link-down-carrier; else
	fail link-down-carrier "carrier=$(cat /sys/class/net/$NETDEV/carrier 2>&1) 20 s after set_link off"
fi
wait_until 10 port_is DOWN
out=$($RDMA link show "$IBDEV/1" 2>&1)
case $out in
*"state DOWN"*) port_is DOWN && ok link-down-port || fail link-down-port "sysfs state: $(port_state)" ;;
*) fail link-down-port "rdma link show: $out" ;;
esac
if wait_until 5 ibev_seen $IB_EVENT_PORT_ERR; then ok link-down-event; else
	fail link-down-event "no IB_EVENT_PORT_ERR for port 1 dispatched: $(grep kite_ibev $TRACEFS/trace | tail -n 3)"
fi
ibev_clear
sync_host linkup
if wait_until 20 carrier_is "$NETDEV" 1; then ok link-up-carrier; else
	fail link-up-carrier "carrier=$(cat /sys/class/net/$NETDEV/carrier 2>&1) 20 s after set_link on"
fi
wait_until 10 port_is ACTIVE
out=$($RDMA link show "$IBDEV/1" 2>&1)
case $out in
*"state ACTIVE"*) port_is ACTIVE && ok link-up-port || fail link-up-port "sysfs state: $(port_state)" ;;
*) fail link-up-port "rdma link show: $out" ;;
esac
if wait_until 5 ibev_seen $IB_EVENT_PORT_ACTIVE; then ok link-up-event; else
	fail link-up-event "no IB_EVENT_PORT_ACTIVE for port 1 dispatched: $(grep kite_ibev $TRACEFS/trace | tail -n 3)"
fi
ping_check ping-after-link-up $PEER

# ---- rmmod kite_ib: the Ethernet port stays up ------------------------------
check rmmod-kite_ib rmmod kite_ib
bad=
[ -e /sys/module/kite_ib ] && bad="$bad /sys/module/kite_ib"
[ -n "$(ib_devices)" ] && bad="$bad ib devices: $(ib_devices)"
[ "$(kite_netdev)" = "$NETDEV" ] || bad="$bad netdev '$(kite_netdev)', want $NETDEV"
carrier_is "$NETDEV" 1 || bad="$bad no carrier"
[ -z "$bad" ] && ok rmmod-kite_ib-netdev-stays || fail rmmod-kite_ib-netdev-stays "$bad"
ping_check ping-without-kite_ib $PEER
check modprobe-kite_ib-again modprobe kite_ib
if kite_ib_wait && wait_until 10 gid_index $GID_ME; then ok ib-device-again; else
	fail ib-device-again "infiniband: $(ib_devices); GID $GID_ME at '$(gid_index $GID_ME)'"
fi

# ---- TCP: 8 MiB to b, b sends back the sha256 of what it got ----------------
dd if=/dev/urandom of=/tmp/data bs=1M count=8 2>/dev/null
sum=$(sha256sum /tmp/data | cut -d' ' -f1)
timeout 240 $NC -l 5002 </dev/null >/tmp/peer.sha &
ncpid=$!
start=$(date +%s)
sent=0
end=$((start + 90))
while [ "$(date +%s)" -lt $end ]; do
	if timeout 180 $NC -N $PEER 5001 </tmp/data 2>/dev/null; then sent=1; break; fi
	usleep 500000	# b not listening yet
done
if [ $sent = 1 ]; then
	wait $ncpid
	secs=$(($(date +%s) - start))
	got=$(cut -d' ' -f1 /tmp/peer.sha)
	if [ "$got" = "$sum" ]; then
		ok tcp-8MiB-sha256
		echo "info: 8 MiB sent in ${secs}s, sha256 $sum"
	else
		fail tcp-8MiB-sha256 "sent $sum, b received '$got'"
	fi
else
	kill $ncpid 2>/dev/null
	fail tcp-8MiB-sha256 "could not connect to $PEER:5001"
fi
rm -f /tmp/data

# ---- ethtool and netdev statistics --------------------------------------------
out=$($ETHTOOL -i "$NETDEV" 2>&1)
case $out in
*"driver: kite"*) ok ethtool-driver ;;
*) fail ethtool-driver "ethtool -i: $out" ;;
esac
tx=$(cat "/sys/class/net/$NETDEV/statistics/tx_bytes")
rx=$(cat "/sys/class/net/$NETDEV/statistics/rx_packets")
if [ "$tx" -ge 8388608 ] && [ "$rx" -gt 0 ]; then ok netdev-stats; else
	fail netdev-stats "tx_bytes=$tx (want >= 8 MiB sent), rx_packets=$rx"
fi

# ---- devlink and ethtool: what a user diagnoses the NIC with ------------------
# kite registers a devlink instance for the PCI function: devlink dev lists
# it, dev info gives the driver, the PCI device id and revision as fixed
# versions (the model has no Device Serial Number capability: no serial
# number) and as running fw the firmware-version of ethtool -i, whose
# bus-info is the PCI function. The health reporter fw_fatal is healthy
# with no error, diagnose says the device runs. ethtool -S has the
# counters of the netdev's queues (one TX and one RX queue), each equal to
# the total of the same read.
pci=$(kite_pci)
out=$($DEVLINK dev 2>&1)
echo "$out" | grep -qx "pci/$pci" && ok devlink-dev || fail devlink-dev "devlink dev: '$out', want pci/$pci"
info=$($DEVLINK dev info "pci/$pci" 2>&1)
drvinfo=$($ETHTOOL -i "$NETDEV" 2>&1)
efw=$(echo "$drvinfo" | sed -n 's/^firmware-version: //p')
bus=$(echo "$drvinfo" | sed -n 's/^bus-info: //p')
# version SECTION NAME: NAME's value in dev info's fixed or running list.
version() {
	echo "$info" | awk -v s="$1:" -v n="$2" '$1 ~ /:$/ { sec = $1; next }
		sec == s && $1 == n { print $2 }'
}
drv=$(echo "$info" | awk '$1 == "driver" { print $2 }')
[ "$drv" = kite ] && ok devlink-info-driver || fail devlink-info-driver "driver '$drv': $info"
fw=$(version running fw)
[ -n "$efw" ] && [ "$fw" = "$efw" ] && ok devlink-info-fw ||
	fail devlink-info-fw "running fw '$fw', ethtool -i firmware-version '$efw': $info"
did=$(sed 's/^0x//' "/sys/bus/pci/devices/$pci/device")
rev=$(($(cat "/sys/bus/pci/devices/$pci/revision")))
bad=
[ "$(version fixed asic.id)" = "$did" ] || bad="$bad asic.id '$(version fixed asic.id)' want $did"
[ "$(version fixed asic.rev)" = "$rev" ] || bad="$bad asic.rev '$(version fixed asic.rev)' want $rev"
[ -n "$(version running abi)" ] || bad="$bad no running abi"
echo "$info" | grep -q serial_number && bad="$bad serial_number without a DSN capability"
[ -z "$bad" ] && ok devlink-info-versions || fail devlink-info-versions "$bad: $info"
[ "$bus" = "$pci" ] && ok ethtool-bus-info || fail ethtool-bus-info "bus-info '$bus', PCI function $pci"
out=$(words "$($DEVLINK health show "pci/$pci" reporter fw_fatal 2>&1)")
case $out in
*" reporter fw_fatal state healthy error 0 recover 0 grace_period 10000 auto_recover true "*) ok devlink-health-show ;;
*) fail devlink-health-show "devlink health show:$out" ;;
esac
out=$(words "$($DEVLINK health diagnose "pci/$pci" reporter fw_fatal 2>&1)")
case $out in
*" state: running "*" fatal_code: 0 last_fatal_code: 0 recoveries: 0 "*) ok devlink-health-diagnose ;;
*) fail devlink-health-diagnose "devlink health diagnose:$out" ;;
esac
st=$($ETHTOOL -S "$NETDEV" 2>&1)
# estat NAME: NAME's value in that read.
estat() { echo "$st" | awk -v n="$1:" '$1 == n { print $2 }'; }
bad=
ntx=$(ls -d /sys/class/net/$NETDEV/queues/tx-* | wc -l)
nrx=$(ls -d /sys/class/net/$NETDEV/queues/rx-* | wc -l)
[ "$(echo "$st" | grep -c 'tx_queue_[0-9]*_packets:')" = "$ntx" ] || bad="$bad not $ntx tx queues"
[ "$(echo "$st" | grep -c 'rx_queue_[0-9]*_packets:')" = "$nrx" ] || bad="$bad not $nrx rx queues"
for c in tx_packets tx_bytes tx_errors rx_packets rx_bytes rx_errors rx_alloc_errors; do
	q=$(estat "${c%%_*}_queue_0_${c#*_}")
	[ -n "$q" ] && [ "$q" = "$(estat $c)" ] || bad="$bad ${c%%_*}_queue_0_${c#*_} '$q' vs $c '$(estat $c)'"
done
[ "$(estat tx_queue_0_bytes)" -ge 8388608 ] 2>/dev/null && [ "$(estat rx_queue_0_packets)" -gt 0 ] 2>/dev/null ||
	bad="$bad tx_queue_0_bytes '$(estat tx_queue_0_bytes)' (want >= 8 MiB), rx_queue_0_packets '$(estat rx_queue_0_packets)'"
[ -z "$bad" ] && ok ethtool-queue-stats || fail ethtool-queue-stats "$bad: $(echo "$st" | grep queue_ | tr '\n' ' ')"

# ---- address removal drops the GID ---------------------------------------
$IP addr del $ME/24 dev "$NETDEV"
if wait_until 10 gid_absent $GID_ME; then ok gid-del; else
	fail gid-del "$GID_ME still at index $(gid_index $GID_ME) after 'ip addr del'"
fi

# ---- unload, then load/unload cycles leave nothing behind ------------------
# kite_ib uses kite's symbols: the module refcount refuses rmmod kite.
if out=$(rmmod kite 2>&1); then
	fail rmmod-kite-in-use "rmmod kite succeeded while kite_ib was loaded"
elif kite_ib_up && [ "$(kite_netdev)" = "$NETDEV" ]; then
	ok rmmod-kite-in-use
	echo "info: rmmod kite with kite_ib loaded: $out"
else
	fail rmmod-kite-in-use "refused ($out), but infiniband: $(ib_devices), netdev '$(kite_netdev)'"
fi
check rmmod rmmod kite_ib kite
bad=
i=0
while [ $i -lt $CYCLES ]; do
	i=$((i + 1))
	# modprobe kite loads kite_ib through the auxiliary device's uevent.
	if ! out=$(modprobe kite 2>&1); then bad="cycle $i: modprobe: $out"; break; fi
	if ! kite_ib_wait; then bad="cycle $i: no $IBSYS within $KITE_IB_SECS s of modprobe"; break; fi
	if ! out=$(rmmod kite_ib kite 2>&1); then bad="cycle $i: rmmod: $out"; break; fi
done
[ -z "$bad" ] && ok modprobe-rmmod-x$CYCLES || fail modprobe-rmmod-x$CYCLES "$bad"

# ---- PCI unbind and bind with both drivers loaded ---------------------------
# Loaded by the PCI function's modalias, as udev does at boot.
pci=$(kite_pci)
modalias=$(cat "/sys/bus/pci/devices/$pci/modalias")
modprobe "$modalias"
if kite_ib_wait; then ok autoload-kite_ib; else
	fail autoload-kite_ib "modprobe $modalias: no $IBSYS within $KITE_IB_SECS s (modules: $(lsmod | grep kite))"
fi
echo "$pci" >/sys/bus/pci/drivers/kite/unbind
bad=
[ -n "$(ib_devices)" ] && bad="$bad ib devices: $(ib_devices)"
kite_netdev >/dev/null && bad="$bad netdev $(kite_netdev)"
[ -n "$(ls /sys/bus/auxiliary/devices 2>/dev/null)" ] && bad="$bad aux: $(ls /sys/bus/auxiliary/devices)"
[ -n "$(kite_irqs)" ] && bad="$bad irqs: $(kite_irqs)"
kite_ib_live || bad="$bad kite_ib unloaded"
$DEVLINK dev 2>&1 | grep -q "pci/$pci" && bad="$bad devlink: $($DEVLINK dev)"
[ -z "$bad" ] && ok pci-unbind || fail pci-unbind "after unbind:$bad"
echo "$pci" >/sys/bus/pci/drivers/kite/bind
if kite_ib_wait && kite_netdev >/dev/null && $DEVLINK dev | grep -qx "pci/$pci"; then ok pci-bind; else
	fail pci-bind "after bind: infiniband: $(ib_devices), netdev '$(kite_netdev)', devlink '$($DEVLINK dev 2>&1)'"
fi
check rmmod-both rmmod kite_ib kite

irqs=$(kite_irqs)
[ -z "$irqs" ] && ok unload-no-irqs || fail unload-no-irqs "$irqs"
stale=
for p in "$IBSYS" /sys/bus/pci/drivers/kite /sys/module/kite /sys/module/kite_ib \
	/sys/bus/auxiliary/drivers/kite_ib.rdma /sys/bus/auxiliary/devices/kite.rdma.0; do
	[ -e "$p" ] && stale="$stale $p"
done
kite_netdev >/dev/null && stale="$stale netdev:$(kite_netdev)"
[ -z "$stale" ] && ok unload-no-sysfs || fail unload-no-sysfs "still present:$stale"
# Kite<->Kite and Kite<->rxe RDMA runs (pair-6.12, pair-rdma.sh).
[ "${PAIR_RDMA:-0}" = 1 ] && pair_rdma_a
bad=$(dmesg_bad)
[ -z "$bad" ] && ok dmesg-clean || fail dmesg-clean "$(echo "$bad" | head -n 3)"
finish
