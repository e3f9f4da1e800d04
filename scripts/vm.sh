#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Kite VM launcher. Boots one or more guests under QEMU TCG, each with a kite
# NIC, runs a script in each and collects results, exit status and logs.
#
#   scripts/vm.sh [--test NAME] [--timeout SECS] [--link A,B] [--props NAME=P]
#                 [--no-net NAME] [--include FILE] [--hook CMD] NAME=SCRIPT...
#
# Example: two guests linked by a socket netdev
#   scripts/vm.sh --test pair --link a,b a=tests/vm/x.sh b=tests/vm/y.sh
# Logs: out/logs/NAME/<guest>.log (console), <guest>.qemu.log, hook.log.
# See scripts/vm.py for the options and the guest/host protocol.
#
# Everything runs inside a private network namespace (so the socket links and
# anything the guests do stay off the host's network), with TCP quickack set
# on the loopback routes: QEMU's stream socket netdev sends frames without
# TCP_NODELAY, and delayed ACKs would otherwise stall every exchange ~40 ms.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# Already in a private network namespace (ours, or one the caller made)?
# Decided by comparing namespaces, not by trusting an environment flag: ours
# must differ from init's or, where /proc/1/ns/net is not readable (no
# CAP_SYS_PTRACE), from our caller's. When neither can be read, unshare
# (another namespace inside a private one does no harm). KITE_VM_REEXEC
# holds the PID of the process that ran unshare: it means "this very
# process, after unshare" only here, where $$ is still that PID.
self_ns=$(readlink /proc/self/ns/net)
if [ "${KITE_VM_REEXEC:-}" = "$$" ]; then
	if [ "$self_ns" = "${KITE_VM_OUTER_NS:-}" ]; then
		echo "vm.sh: still in $self_ns after unshare --net" >&2
		exit 1
	fi
else
	ref_ns=$(readlink /proc/1/ns/net 2>/dev/null) ||
		ref_ns=$(readlink "/proc/$PPID/ns/net" 2>/dev/null) || ref_ns=
	if [ -z "$ref_ns" ] || [ "$self_ns" = "$ref_ns" ]; then
		exec unshare --net -- env KITE_VM_REEXEC=$$ KITE_VM_OUTER_NS="$self_ns" "$0" "$@"
	fi
fi
unset KITE_VM_REEXEC KITE_VM_OUTER_NS

/usr/bin/ip link set lo up
/usr/bin/ip route change local 127.0.0.0/8 dev lo proto kernel scope host src 127.0.0.1 table local quickack 1
/usr/bin/ip route change local 127.0.0.1 dev lo proto kernel scope host src 127.0.0.1 table local quickack 1

exec python3 "$here/vm.py" run "$@"
