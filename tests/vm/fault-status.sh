# SPDX-License-Identifier: GPL-2.0
# Guest with -device kite,x-fault-opcode=1: every QUERY_DEVICE command completes
# with an error status. Probe must fail cleanly: a clear error in dmesg, no
# ib device, no net_device, no IRQs left, and the module still unloads.
. /kite/lib.sh
plan 9

pci=$(kite_pci) && ok device-present || { fail device-present "no PCI function $KITE_VENDOR:$KITE_DEVICE"; finish; }
modprobe kite >/tmp/modprobe.out 2>&1
echo "info: modprobe kite exit $? $(cat /tmp/modprobe.out)"
[ ! -e /sys/bus/pci/devices/$pci/driver ] && ok probe-failed ||
	fail probe-failed "$pci is bound to $(readlink /sys/bus/pci/devices/$pci/driver)"
[ ! -e "$IBSYS" ] && ok no-ib-device || fail no-ib-device "$IBSYS exists"
kite_netdev >/dev/null && fail no-netdev "net_device $(kite_netdev) exists" || ok no-netdev
err=$(dmesg | grep -i kite | grep QUERY_DEVICE | grep -Ei 'fail|error' | tail -n 2)
[ -n "$err" ] && ok dmesg-error && echo "info: $err" ||
	fail dmesg-error "no kite error in dmesg: $(dmesg | grep -i kite | tail -n 3)"
if [ -d /sys/module/kite ]; then check rmmod rmmod kite; else ok rmmod; fi
[ ! -d /sys/module/kite ] && ok unloaded || fail unloaded "/sys/module/kite still present"
irqs=$(kite_irqs)
[ -z "$irqs" ] && ok no-irqs || fail no-irqs "$irqs"
bad=$(dmesg_bad)
[ -z "$bad" ] && ok dmesg-clean || fail dmesg-clean "$(echo "$bad" | head -n 3)"
finish
