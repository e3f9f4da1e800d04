# SPDX-License-Identifier: GPL-2.0
# Helpers for Kite guest test scripts (busybox sh; functions use local
# variables so they never clobber a caller's). The launcher puts this
# file into the guest as /kite/lib.sh; scripts start with ". /kite/lib.sh".
#
# A script first declares how many results it will print ("plan N": the
# line KITE-PLAN N); each check then prints exactly one line on the console:
#   ok NAME  |  FAIL NAME: DETAIL  |  skip NAME: WHY
# and, before a check runs again, "retry NAME: WHY" (retry below; not a
# result, counted and reported by the launcher and make check).
# The host (scripts/vm.py) collects them and counts every planned result that
# never came (a crash, an early exit) as a failure. A script ends with
# "finish", which exits non-zero when a check failed.

# busybox sh runs its own applets before PATH: name the real tools by path.
IP=/usr/bin/ip
RDMA=/usr/bin/rdma
NC=/usr/bin/nc.openbsd
ETHTOOL=/usr/sbin/ethtool
DEVLINK=/usr/sbin/devlink
IBDEV=kite_0
IBSYS=/sys/class/infiniband/$IBDEV
KITE_VENDOR=0x1234
KITE_DEVICE=0x4b54
# Kernel log lines that must never appear.
BAD_DMESG='WARNING:|BUG:|Oops|Call Trace|general protection|UBSAN|KASAN|refcount_t:|list_add corruption|list_del corruption|kernel BUG|Unable to handle'

failures=0

# plan N: this script prints N results when it runs to its end.
plan() { echo "KITE-PLAN $1"; }

ok() { echo "ok $1"; }

# fail NAME DETAIL...: one line, whatever DETAIL holds.
fail() {
	local n=$1
	shift
	echo "FAIL $n: $(echo "$*" | tr '\n' ' ' | cut -c1-400)"
	failures=$((failures + 1))
}

skip() { echo "skip $1: $2"; }

# retry NAME WHY...: check NAME runs again. Only for a bounded repeat that
# Documentation/kite/testing.rst allows ("Retries"); WHY names the fault.
retry() {
	local n=$1
	shift
	echo "retry $n: $(echo "$*" | tr '\n' ' ' | cut -c1-300)"
}

# check NAME CMD...: ok when CMD succeeds, else FAIL with its last output.
check() {
	local n=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$n"
	else
		fail "$n" "'$*' failed: $(echo "$out" | tail -n 3)"
	fi
}

# wait_until SECS CMD...: run CMD every 0.1 s until it succeeds; give up
# when SECS seconds of wall time have passed (CMD itself may be slow).
wait_until() {
	local end=$(($(date +%s) + $1))
	shift
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		[ "$(date +%s)" -ge "$end" ] && return 1
		usleep 100000
	done
}

# ping_check NAME ADDR: wait (60 s at most) until ADDR answers at all (the
# peer may still be configuring), then require answers to 3 more pings.
ping_check() {
	if ! wait_until 60 ping -c 1 -W 1 "$2"; then
		fail "$1" "no answer from $2 within 60 s"
	else
		check "$1" ping -c 3 -w 10 "$2"
	fi
}

# Tell a host hook we reached a rendezvous point (see tests/vm/*.hook).
sync_host() { echo "KITE-SYNC $1"; }

# The net_device whose PCI function is bound to the kite driver.
kite_netdev() {
	local d drv
	for d in /sys/class/net/*; do
		drv=$(readlink "$d/device/driver" 2>/dev/null) || continue
		[ "${drv##*/}" = kite ] && { echo "${d##*/}"; return 0; }
	done
	return 1
}

# ibdev_of_netdev NETDEV: the RDMA device of NETDEV's PCI function (kite).
ibdev_of_netdev() {
	local i
	for i in /sys/class/net/$1/device/infiniband/*; do
		[ -d "$i" ] && { echo "${i##*/}"; return 0; }
	done
	return 1
}

# kite_ib, the RDMA driver, comes up after "modprobe kite" returns: mdev
# loads it from the auxiliary device's uevent (see mkinitramfs.sh), then
# its probe registers the RDMA device. Every test waits for that at most
# KITE_IB_SECS seconds (kite_ib_wait).
KITE_IB_SECS=30
# kite_ib_live: kite_ib is loaded and done with its init (rmmod refuses a
# module before).
kite_ib_live() { [ "$(cat /sys/module/kite_ib/initstate 2>/dev/null)" = live ]; }
# kite_ib_up [NETDEV]: kite_ib is live and the RDMA device exists: that of
# NETDEV's PCI function, or kite_0.
kite_ib_up() {
	kite_ib_live || return 1
	if [ -n "${1:-}" ]; then ibdev_of_netdev "$1" >/dev/null; else test -d "$IBSYS"; fi
}
# kite_ib_wait [NETDEV]: wait until kite_ib_up [NETDEV], KITE_IB_SECS at most.
kite_ib_wait() { wait_until $KITE_IB_SECS kite_ib_up "$@"; }

# The PCI address of the kite function (bound or not).
kite_pci() {
	local d
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor")" = $KITE_VENDOR ] && [ "$(cat "$d/device")" = $KITE_DEVICE ] &&
			{ echo "${d##*/}"; return 0; }
	done
	return 1
}

# port_state: "ACTIVE", "DOWN", ... as sysfs reports it ("4: ACTIVE").
port_state() { sed 's/^[0-9]*: *//' "$IBSYS/ports/1/state" 2>/dev/null; }
port_is() { [ "$(port_state)" = "$1" ]; }
carrier_is() { [ -n "$1" ] && [ "$(cat "/sys/class/net/$1/carrier" 2>/dev/null)" = "$2" ]; }

# gid_index GID: index of GID in kite_0 port 1's table (fails if absent).
gid_index() {
	local g
	for g in "$IBSYS"/ports/1/gids/*; do
		[ "$(cat "$g" 2>/dev/null)" = "$1" ] && { echo "${g##*/}"; return 0; }
	done
	return 1
}
gid_absent() { ! gid_index "$1" >/dev/null; }

# ib_core events, observed with a kprobe on ib_dispatch_event(): every event
# a driver raises goes through it. struct ib_event: device at 0, element
# (port_num) at 8, event at 16 (x86_64). enum ib_event_type values:
IB_EVENT_PORT_ACTIVE=9
IB_EVENT_PORT_ERR=10
TRACEFS=/sys/kernel/tracing
ibev_trace_start() {
	echo 'p:kite_ibev ib_core:ib_dispatch_event port=+8(%di):u32 event=+16(%di):u32' \
		>>$TRACEFS/kprobe_events &&
		echo 1 >$TRACEFS/events/kprobes/kite_ibev/enable
}
ibev_clear() { : >$TRACEFS/trace; }
# ibev_seen EVENT: ib_dispatch_event() was called for port 1 with EVENT.
ibev_seen() { grep -q "kite_ibev:.* port=1 event=$1\$" $TRACEFS/trace; }

# dmesg_bad: print kernel log lines that indicate a bug (empty = clean).
# A user process's crash ("traps: TOOL[PID] general protection fault ip:...
# in LIB[...]") is the kernel reporting a user fault, not a kernel one: the
# tool's own check reports its failure. One in Kite's own provider
# (libkite) still counts.
USER_TRAP='^(\[[ 0-9.]+\] )?traps: [^ ]+\[[0-9]+\] general protection fault ip:[0-9a-f]+ sp:[0-9a-f]+ error:[0-9a-f]+( in [^ ]+\[[0-9a-f+]+\])? *$'
dmesg_bad() {
	dmesg | grep -E "$BAD_DMESG" | grep -vE "$USER_TRAP"
	dmesg | grep -E "$USER_TRAP" | grep ' in libkite'
}

# words TEXT: TEXT on one line with single spaces, framed by spaces (to
# match a sequence of words in output that devlink may break into lines).
# In a case pattern two quoted parts cannot share a space: write
# *" a b "*" d "* for "a b c d", not *" a b "*" c d "*.
words() { echo " $(echo "$1" | tr -s ' \n\t' '   ') "; }

# kite_irqs: /proc/interrupts lines that belong to kite.
kite_irqs() { grep -i kite /proc/interrupts; }

finish() {
	if [ "$failures" -gt 0 ]; then
		echo "---- dmesg (tail) ----"
		dmesg | tail -n 60
		exit 1
	fi
	exit 0
}
