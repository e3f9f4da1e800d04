# SPDX-License-Identifier: GPL-2.0
# Guest with -device kite,x-fault-hang-opcode=1: the device stops answering its
# admin queue at the first QUERY_DEVICE. The driver must give up after its
# admin timeout, say so in dmesg (timeout / device dead), fail the probe, and
# still unload.
. /kite/lib.sh
plan 9

pci=$(kite_pci) && ok device-present || { fail device-present "no PCI function $KITE_VENDOR:$KITE_DEVICE"; finish; }
start=$(date +%s)
timeout 120 modprobe kite >/tmp/modprobe.out 2>&1
rc=$?
secs=$(($(date +%s) - start))
echo "info: modprobe kite exit $rc after ${secs}s $(cat /tmp/modprobe.out)"
[ $rc -ne 143 ] && ok probe-returns || fail probe-returns "modprobe still blocked after 120 s"
[ ! -e /sys/bus/pci/devices/$pci/driver ] && ok probe-failed ||
	fail probe-failed "$pci is bound to $(readlink /sys/bus/pci/devices/$pci/driver)"
[ ! -e "$IBSYS" ] && ok no-ib-device || fail no-ib-device "$IBSYS exists"
err=$(dmesg | grep -i kite | grep -Ei 'time(d)? ?out|dead|not respond' | tail -n 2)
[ -n "$err" ] && ok dmesg-timeout && echo "info: $err" ||
	fail dmesg-timeout "no kite timeout/dead message in dmesg: $(dmesg | grep -i kite | tail -n 3)"
if [ -d /sys/module/kite ]; then check rmmod rmmod kite; else ok rmmod; fi
[ ! -d /sys/module/kite ] && ok unloaded || fail unloaded "/sys/module/kite still present"
irqs=$(kite_irqs)
[ -z "$irqs" ] && ok no-irqs || fail no-irqs "$irqs"
bad=$(dmesg_bad)
[ -z "$bad" ] && ok dmesg-clean || fail dmesg-clean "$(echo "$bad" | head -n 3)"
finish
