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

if [ -z "${KITE_IN_NETNS:-}" ]; then
	exec unshare --net -- env KITE_IN_NETNS=1 "$0" "$@"
fi

/usr/bin/ip link set lo up
/usr/bin/ip route change local 127.0.0.0/8 dev lo proto kernel scope host src 127.0.0.1 table local quickack 1
/usr/bin/ip route change local 127.0.0.1 dev lo proto kernel scope host src 127.0.0.1 table local quickack 1

exec python3 "$here/vm.py" run "$@"
