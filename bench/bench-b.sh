# SPDX-License-Identifier: GPL-2.0
# Guest "b" of bench/run.sh: brings up Kite (kite_0 on the kite NIC,
# 198.18.0.2), Soft-RoCE rxe0 on the first virtio-net NIC (198.18.1.2) and
# Soft-RoCE rxe1 on the second virtio-net NIC (198.18.2.2, the link to
# guest a's second Kite NIC: the mixed Kite<->rxe transport), then serves
# guest a through the agent of tests/vm/rdma-lib.sh (perftest servers, and
# the clients of the rxe->Kite runs) until a is done. Its NVMe over RDMA
# target (storage-lib.sh) serves a's hosts on all three links.
. /kite/lib.sh
. /kite/rdma-lib.sh
. /kite/storage-lib.sh
plan 5
RUN_TIMEOUT=${BENCH_RUN_TIMEOUT:-120}

# up NAME KIND ADDR MAC TAG [RXENAME]: one device (rdma_up_mac), one result.
# Each NIC is picked by its MAC (vm.py passes them as KITE_MAC_<id>): with
# two virtio-net NICs the first one found need not be virtio0.
up() {
	local n=$1
	shift
	if rdma_up_mac "$@" >/tmp/up.log 2>&1; then
		ok "$n"
		grep '^info:' /tmp/up.log
	else
		fail "$n" "$(cat /tmp/up.log)"
	fi
}
up kite-up kite 198.18.0.2 "${KITE_MAC_kite0:-}" kite
up rxe-up rxe 198.18.1.2 "${KITE_MAC_virtio0:-}" rxe rxe0
up mix-up rxe 198.18.2.2 "${KITE_MAC_virtio1:-}" mix rxe1
# The NVMe over RDMA target of a's hosts, on each link.
NQN=$(stor_nqn b)
if [ "${BENCH_NVME:-1}" = 0 ]; then
	skip nvmet-setup "BENCH_NVME=0"
elif out=$(nvmet_setup "$NQN" 2>&1 && nvmet_port 1 198.18.0.2 ipv4 "$NQN" 2>&1 &&
	nvmet_port 2 198.18.1.2 ipv4 "$NQN" 2>&1 && nvmet_port 3 198.18.2.2 ipv4 "$NQN" 2>&1); then
	ok nvmet-setup
else
	fail nvmet-setup "$out"
fi
agent_start
if wait_until 3600 test -f /tmp/agent.quit; then ok served; else fail served "guest a never said it was done"; fi
agent_stop
finish
