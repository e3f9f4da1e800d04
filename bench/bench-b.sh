# SPDX-License-Identifier: GPL-2.0
# Guest "b" of bench/run.sh: brings up Kite (kite_0 on the kite netdev,
# 198.18.0.2) and Soft-RoCE (rxe0 on the virtio-net NIC, 198.18.1.2) and
# runs the perftest servers guest a asks for (the agent of
# tests/vm/rdma-lib.sh) until a is done.
. /kite/lib.sh
. /kite/rdma-lib.sh
plan 3
RUN_TIMEOUT=${BENCH_RUN_TIMEOUT:-120}
if rdma_up kite 198.18.0.2 >/tmp/up.log 2>&1; then ok kite-up; else fail kite-up "$(cat /tmp/up.log)"; fi
if rdma_up rxe 198.18.1.2 >/tmp/up.log 2>&1; then ok rxe-up; else fail rxe-up "$(cat /tmp/up.log)"; fi
agent_start
if wait_until 3000 test -f /tmp/agent.quit; then ok served; else fail served "guest a never said it was done"; fi
agent_stop
finish
