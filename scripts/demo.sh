#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make demo`: boot two guests linked by a QEMU socket netdev, each with a
# kite NIC; each loads kite.ko, shows `rdma link` and `ip addr`, and pings
# the other (198.18.0.1 <-> 198.18.0.2); then guest a runs ibv_rc_pingpong
# (with data validation) and ib_write_bw (64 KiB) against guest b over the
# Kite NICs and prints their results (scripts/demo-guest.sh).
# Console logs: out/logs/demo/.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
echo "Booting two Kite guests (QEMU TCG, about 10 s) ..."
exec scripts/vm.sh --test demo --timeout 600 --echo --include tests/vm/lib.sh --include tests/vm/rdma-lib.sh \
	--link a,b a=scripts/demo-guest.sh b=scripts/demo-guest.sh
