# SPDX-License-Identifier: GPL-2.0
# Guest a of the fault group (its Kite NIC in a hot-pluggable slot, vm.sh
# --hotplug a; host side: fault-recover.hook). The device goes away four
# ways while a user process holds verbs objects (kite-fatal: PD, MR, CQ
# with a completion channel, RC QP, the mapped doorbell page) and a
# loopback ibv_rc_pingpong (-e: it waits for completion events) runs:
#   fatal   the model fails (x-fatal): kite reports IB_EVENT_DEVICE_FATAL,
#           resets the function and brings kite_0 back
#   rmmod   rmmod kite_ib, then modprobe kite_ib
#   unload  rmmod kite_ib kite, then modprobe kite
#   unplug  QMP device_del of the NIC, then device_add
# Each time kite-fatal must see IBV_EVENT_DEVICE_FATAL first and close
# everything, the pingpong must end, and afterwards kite_0 must be ACTIVE
# and a new pingpong pass; after the fatal error the devlink instance is
# still there and its fw_fatal reporter counted one error and one
# recovery. Last, the modules DKMS built from the kite-dkms package (the
# packages suite, /kite/dkms-*.ko) replace the tree's, in the module tree
# modprobe loads from: the loaded kite and
# kite_ib carry those files' build IDs, kite_0 comes up ACTIVE and a
# pingpong passes. The kernel log must stay clean.
. /kite/lib.sh
. /kite/rdma-lib.sh
plan 43

ADDR=10.0.0.1
PP_N=0
# How long a process may take to end once its device is gone: a hang
# detector, generous for TCG, not a measurement.
GONE_SECS=120

# exited PID: PID has ended (gone, or a zombie its parent, this shell, has
# not waited for yet).
exited() { [ ! -e /proc/$1 ] || grep -q '^[0-9]* (.*) Z' /proc/$1/stat 2>/dev/null; }

# ms: milliseconds since boot (busybox date has no %N; /proc/uptime is in
# hundredths of a second).
ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

# tcp_listening PORT: a TCP socket listens on PORT.
tcp_listening() { grep -qi ":$(printf %04X "$1") 00000000:0000 0A" /proc/net/tcp; }

# net_up: address, link and RoCE v2 GID of the (maybe new) kite netdev;
# sets NETDEV, DEV and GIDX.
net_up() {
	NETDEV=$(kite_netdev) || { echo "no kite netdev"; return 1; }
	DEV=kite_0
	$IP addr add "$ADDR/24" dev "$NETDEV" 2>/dev/null
	$IP link set "$NETDEV" up
	wait_until 30 dev_active $DEV || { echo "$DEV port not ACTIVE"; return 1; }
	wait_until 10 gid_of $DEV "$ADDR" || { echo "no RoCE v2 GID for $ADDR"; return 1; }
	GIDX=$(gid_of $DEV "$ADDR")
	$RDMA link show $DEV/1 | grep -q 'state ACTIVE' || { echo "rdma link: $($RDMA link show $DEV/1)"; return 1; }
}

# pp_start TAG N: a loopback ibv_rc_pingpong server and client (-e) of N
# iterations in the background (PP_S, PP_C; output /tmp/TAG-s, /tmp/TAG-c).
pp_start() {
	local port=$((18515 + PP_N))
	PP_N=$((PP_N + 1))
	timeout 600 ibv_rc_pingpong -d $DEV -g $GIDX -p $port -e -n $2 -s 4096 >/tmp/$1-s 2>&1 &
	PP_S=$!
	wait_until 30 tcp_listening $port || { echo "server not listening on $port"; return 1; }
	timeout 600 ibv_rc_pingpong -d $DEV -g $GIDX -p $port -e -n $2 -s 4096 127.0.0.1 >/tmp/$1-c 2>&1 &
	PP_C=$!
}

# pp_running: both pingpong QPs are in RTS (the tools' output to a file is
# buffered until they end).
pp_running() {
	[ "$($RDMA res show qp link $DEV/1 2>/dev/null | grep 'type RC state RTS' |
		grep -c 'comm ibv_rc_pingpong')" -ge 2 ]
}

# pingpong NAME: a short loopback pingpong passes.
pingpong() {
	local c s
	if ! pp_start pp 50; then
		fail $1 "pingpong did not start"
		return
	fi
	wait $PP_C
	c=$?
	wait $PP_S
	s=$?
	[ $c -eq 0 ] && [ $s -eq 0 ] && ok $1 ||
		fail $1 "client $c, server $s: $(tail -n 2 /tmp/pp-c) / $(tail -n 2 /tmp/pp-s)"
}

# gone_start TAG: kite-fatal holding objects and a long pingpong, both
# waiting for the device to go away (two results).
gone_start() {
	kite-fatal -t 600 >/tmp/$1-kf 2>&1 &
	KF=$!
	if wait_until 30 grep -q 'kite-fatal: ready' /tmp/$1-kf; then
		ok $1-holder-ready
	else
		fail $1-holder-ready "$(cat /tmp/$1-kf)"
	fi
	if pp_start $1-pp 100000000 && wait_until 60 pp_running; then
		ok $1-traffic
	else
		fail $1-traffic "$($RDMA res show qp link $DEV/1 2>&1 | tail -n 3)"
	fi
}

# gone_check TAG: kite-fatal saw DEVICE_FATAL first and closed everything;
# the pingpong ended by itself (two results).
gone_check() {
	local rc
	if wait_until $GONE_SECS exited $KF; then
		wait $KF
		rc=$?
		grep kite-fatal: /tmp/$1-kf | sed 's/^/info: /'
		[ $rc -eq 0 ] && ok $1-holder-fatal || fail $1-holder-fatal "exit $rc: $(grep FAIL /tmp/$1-kf)"
	else
		kill $KF
		fail $1-holder-fatal "still running $GONE_SECS s later: $(cat /tmp/$1-kf)"
	fi
	if wait_until $GONE_SECS exited $PP_C && wait_until $GONE_SECS exited $PP_S; then
		ok $1-traffic-ends
		echo "info: pingpong: $(tail -n 1 /tmp/$1-pp-c) / $(tail -n 1 /tmp/$1-pp-s)"
	else
		fail $1-traffic-ends "pingpong still running $GONE_SECS s later"
	fi
	kill $PP_C $PP_S 2>/dev/null
	wait $PP_C $PP_S 2>/dev/null
}

# back NAME: kite_0 is back, ACTIVE, and a pingpong passes (two results).
back() {
	if net_up >/tmp/net-up 2>&1; then ok $1-active; else fail $1-active "$(cat /tmp/net-up)"; fi
	pingpong $1-pingpong
}

host_listen
if out=$(rdma_up kite $ADDR); then
	ok up
	echo "$out"
else
	fail up "$out"
fi
DEV=kite_0
GIDX=$(gid_of $DEV $ADDR)
pingpong pingpong

# ---- a fatal device error: recovery by reset --------------------------------
gone_start fatal
t0=$(ms)
# 5: KITE_FATAL_INTERNAL (include/kite/kite_hw.h).
host_call fatal 5 && ok fatal-injected || fail fatal-injected "$HOST_ANS"
gone_check fatal
# The message comes after the new kite_0 has registered (kite_ib binds
# the new auxiliary device at once); its new netdev is not up yet.
rec() { dmesg | grep -q 'recovered from a fatal error' && kite_ib_up; }
if wait_until $GONE_SECS rec; then
	ok fatal-recovered
	echo "info: fatal error to a new kite_0: $(($(ms) - t0)) ms; $(dmesg | grep 'recovered from' | tail -n 1)"
else
	fail fatal-recovered "$(dmesg | grep -i kite | tail -n 4)"
fi
back fatal
echo "info: $(dmesg | grep -c 'fatal error') fatal lines in dmesg"
# devlink: the instance of the PCI function stayed across the reset and
# reports the new firmware-version of ethtool -i; its reporter fw_fatal
# counted the error and the recovery (it ran as its recover callback), and
# diagnose gives the event's code and the device running again.
pci=$(kite_pci)
fw=$($DEVLINK dev info "pci/$pci" 2>&1 | awk '$1 ~ /:$/ { s = $1; next } s == "running:" && $1 == "fw" { print $2 }')
efw=$($ETHTOOL -i "$(kite_netdev)" 2>&1 | sed -n 's/^firmware-version: //p')
$DEVLINK dev 2>&1 | grep -qx "pci/$pci" && [ -n "$fw" ] && [ "$fw" = "$efw" ] && ok fatal-devlink-dev ||
	fail fatal-devlink-dev "devlink dev '$($DEVLINK dev 2>&1)', running fw '$fw', ethtool -i '$efw'"
out=$(words "$($DEVLINK health show "pci/$pci" reporter fw_fatal 2>&1)")
diag=$(words "$($DEVLINK health diagnose "pci/$pci" reporter fw_fatal 2>&1)")
case $out in
*" state healthy error 1 recover 1 "*)
	case $diag in
	*" state: running "*" last_fatal_code: 5 recoveries: 1 "*) ok fatal-devlink-health ;;
	*) fail fatal-devlink-health "devlink health diagnose:$diag" ;;
	esac ;;
*) fail fatal-devlink-health "devlink health show:$out" ;;
esac

# ---- rmmod kite_ib with live users -----------------------------------------
gone_start rmmod
t0=$(ms)
check rmmod-ib rmmod kite_ib
echo "info: rmmod kite_ib took $(($(ms) - t0)) ms"
gone_check rmmod
modprobe kite_ib
kite_ib_wait && ok rmmod-reload || fail rmmod-reload "no kite_0 after modprobe kite_ib"
back rmmod

# ---- rmmod kite_ib kite with live users -------------------------------------
gone_start unload
t0=$(ms)
check unload-modules rmmod kite_ib kite
echo "info: rmmod kite_ib kite took $(($(ms) - t0)) ms"
gone_check unload
[ ! -d /sys/module/kite ] && [ -z "$(kite_irqs)" ] && ok unload-gone ||
	fail unload-gone "kite module or IRQs left: $(kite_irqs)"
modprobe kite
kite_ib_wait && ok unload-reload || fail unload-reload "no kite_0 after modprobe kite"
back unload

# ---- PCI hot-unplug with live users -----------------------------------------
gone_start unplug
t0=$(ms)
HOST_CALL_SECS=180
host_call unplug && ok unplug-device-del || fail unplug-device-del "$HOST_ANS"
echo "info: device_del until QEMU dropped the device: $(($(ms) - t0)) ms ($HOST_ANS)"
gone_check unplug
! kite_pci >/dev/null && [ -z "$(kite_irqs)" ] && [ ! -e "$IBSYS" ] && ok unplug-gone ||
	fail unplug-gone "PCI function $(kite_pci), IRQs $(kite_irqs), $IBSYS left"
t0=$(ms)
host_call plug && ok plug-device-add || fail plug-device-add "$HOST_ANS"
wait_until 60 kite_ib_up && ok plug-back || fail plug-back "no kite_0: $(dmesg | grep -i kite | tail -n 3)"
echo "info: device_add to kite_0: $(($(ms) - t0)) ms"
back plug

# ---- the modules DKMS built ------------------------------------------------
# hexof FILE: FILE's bytes as one hex string.
hexof() { od -An -v -tx1 "$1" | tr -d ' \n'; }
# dkms_loaded: kite and kite_ib are loaded from /kite/dkms-*.ko: each
# module's GNU build-ID note is in its file.
dkms_loaded() {
	local m note
	for m in kite kite_ib; do
		note=$(hexof /sys/module/$m/notes/.note.gnu.build-id 2>/dev/null)
		[ -n "$note" ] || { echo "$m: no build-ID note in /sys/module/$m/notes"; return 1; }
		case $(hexof /kite/dkms-$m.ko) in
		*"$note"*) ;;
		*) echo "$m: the loaded module's build ID is not /kite/dkms-$m.ko's"; return 1 ;;
		esac
	done
}
# They replace the tree's modules where modprobe finds them, as a DKMS
# install does: kite's auxiliary device may load kite_ib before an insmod
# of the second file could.
mdir=/lib/modules/$(uname -r)/extra
if [ -f /kite/dkms-kite.ko ] && [ -f /kite/dkms-kite_ib.ko ]; then
	if rmmod kite_ib kite && cp /kite/dkms-kite.ko $mdir/kite.ko &&
		cp /kite/dkms-kite_ib.ko $mdir/kite_ib.ko && modprobe kite && modprobe kite_ib &&
		kite_ib_wait && dkms_loaded >/tmp/dkms 2>&1; then
		ok dkms-loaded
	else
		fail dkms-loaded "$(cat /tmp/dkms 2>/dev/null) $(lsmod | grep kite | tr '\n' ' ') $(dmesg | grep -i kite | tail -n 2)"
	fi
	back dkms
else
	for n in dkms-loaded dkms-active dkms-pingpong; do
		skip $n "no DKMS-built modules (the packages suite puts them in out/dkms/<release>/)"
	done
fi

host_call end
bad=$(dmesg_bad)
[ -z "$bad" ] && ok dmesg-clean || fail dmesg-clean "$(echo "$bad" | head -n 3)"
finish
