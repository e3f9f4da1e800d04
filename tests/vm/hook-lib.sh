# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Host side of a VM group's hook (sourced by tests/vm/*.hook). Guest a
# prints "KITE-SYNC host-N ACTION ARGS..." (host_call, rdma-lib.sh) and
# waits for one line "host-N ok ..." or "host-N FAIL ..." on its second
# serial port. The hook defines one function act_ACTION per action (args:
# ARGS; it prints the answer that follows "ok"/"FAIL" and returns non-zero
# for FAIL), then calls hook_serve. The action "end" ends the hook.
# The Kite NIC of every guest has the QEMU id kite0 and the netdev n0.
set -u
vm() { "$KITE_VMCTL" "$@"; }

# hook_qom GUEST PROP VALUE [ID]: qom-set PROP of GUEST's kite device
# (kite0, or ID) and read it back.
hook_qom() {
	local out got id=${4:-kite0}
	out=$(vm hmp "$1" "qom-set /machine/peripheral/$id $2 $3" 2>&1)
	got=$(vm hmp "$1" "qom-get /machine/peripheral/$id $2" 2>&1 | tr -d '\r')
	[ "$got" = "$3" ] && { echo "$1${4:+ $4}: $2=$got"; return 0; }
	echo "$1: qom-set $2 $3 said '$(echo $out | cut -c1-100)', reads '$(echo $got | cut -c1-100)'"
	return 1
}

# hook_link GUEST off|on [NETDEV]: take GUEST's Kite link down or up (HMP
# set_link on its netdev n0, or NETDEV; the device raises PORT_ERR /
# PORT_ACTIVE, see hardware.rst).
hook_link() {
	local out nd=${3:-n0}
	case ${2:-} in off | on) ;; *) echo "link: want off or on, not '${2:-}'"; return 1 ;; esac
	case $nd in n[0-9] | n[0-9][0-9]) ;; *) echo "link: no netdev '$nd'"; return 1 ;; esac
	out=$(vm hmp "$1" "set_link $nd $2" 2>&1 | tr -d '\r')
	# HMP prints nothing on success.
	[ -z "$out" ] && { echo "$1: $nd $2"; return 0; }
	echo "$1: set_link $nd $2: '$(echo $out | cut -c1-200)'"
	return 1
}

# hook_serve: answer guest a's requests, in order, until "end" (or until a
# request does not come within 3000 s).
hook_serve() {
	local n=1 line act ans res
	while :; do
		vm wait a "^KITE-SYNC host-$n " 3000 || return 1
		line=$(grep -a -E "^KITE-SYNC host-$n " "$KITE_RUN_DIR/a.log" | head -n 1 | tr -d '\r')
		set -- $line
		shift 2
		act=${1:-}
		shift
		case $act in end) vm say a "host-$n ok end"; return 0 ;; esac
		if ! declare -F "act_$act" >/dev/null; then
			ans="FAIL no such action '$act'"
		elif res=$("act_$act" "$@" 2>&1); then
			ans="ok $(echo "$res" | tr '\n' ' ')"
		else
			ans="FAIL $(echo "$res" | tr '\n' ' ')"
		fi
		echo "host-$n: $act $*: $ans"
		vm say a "host-$n $ans"
		n=$((n + 1))
	done
}
