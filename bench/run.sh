#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Kite vs Soft-RoCE benchmark (`make bench`; not part of `make check`).
# Boots two guests joined by three socket links (scripts/vm.sh --link a,b
# --virtio a,b --xlink a=kite,b=virtio-net-pci):
#   link 1  kite NIC on a   <-> kite NIC on b           Kite <-> Kite
#   link 2  virtio-net on a <-> virtio-net on b         rxe <-> rxe
#   link 3  2nd kite NIC on a <-> 2nd virtio-net on b   Kite <-> rxe
# and runs the perftest cases of bench/bench-a.sh over each in the same
# run (on link 3 both ways: Kite client -> rxe server, and rxe client ->
# Kite server). Prints one table with the four transports, the Kite/rxe
# ratio and the mixed/rxe ratios. Results: out/bench/results.txt (table)
# and out/bench/results.raw (the BENCH lines); guest logs: out/logs/bench/.
#
#   bench/run.sh                    BENCH_REPEAT=N (median of N runs, default 1)
#   BENCH_CASES="ib_write_bw:4096:1000 ..." bench/run.sh   other cases
#                                   (TOOL:SIZE:ITERS[:QPS], QPS: perftest -q)
#   BENCH_MTUS="1024" bench/run.sh  RoCE path MTUs (default "1024 4096":
#                                   netdevs at 1500, then at 9000)
#   BENCH_SECS=5 bench/run.sh       seconds per bw case (default 3; empty:
#                                   the case's ITERS iterations)
#   BENCH_NO_ENGINE=1 bench/run.sh  without the engine micro-benchmark
#                                   (bench/engine, run after the guests)
#   BENCH_KINDS="kite rxe" bench/run.sh   some transports (kite kite-rxe rxe-kite rxe)
#   BENCH_COUNTERS=1 bench/run.sh   after each case, the port hardware
#                                   counters of both guests' devices
#   BENCH_NVME=0 bench/run.sh       without the NVMe over RDMA rows (fio over
#                                   nvme-rdma; BENCH_NVME_SECS per case, 10)
#
# Exit status: 0 when every case has a figure for every transport run.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=out/bench
mkdir -p "$out"
bash scripts/mkinitramfs.sh || { echo "bench: guest image build failed" >&2; exit 1; }
env=()
[ -n "${BENCH_REPEAT:-}" ] && env+=(--env "BENCH_REPEAT=$BENCH_REPEAT")
# The guests read BENCH_CASES and BENCH_KINDS with spaces; pass them
# through a file.
inc=()
rm -f "$out/cases.sh"
[ -n "${BENCH_CASES:-}" ] && echo "BENCH_CASES='$BENCH_CASES'" >>"$out/cases.sh"
[ -n "${BENCH_KINDS:-}" ] && echo "BENCH_KINDS='$BENCH_KINDS'" >>"$out/cases.sh"
[ -n "${BENCH_MTUS:-}" ] && echo "BENCH_MTUS='$BENCH_MTUS'" >>"$out/cases.sh"
[ -n "${BENCH_SECS+set}" ] && echo "BENCH_SECS='$BENCH_SECS'" >>"$out/cases.sh"
[ -n "${BENCH_NVME:-}" ] && echo "BENCH_NVME='$BENCH_NVME'" >>"$out/cases.sh"
[ -n "${BENCH_COUNTERS:-}" ] && echo "BENCH_COUNTERS='$BENCH_COUNTERS'" >>"$out/cases.sh"
[ -n "${BENCH_NVME_SECS:-}" ] && echo "BENCH_NVME_SECS='$BENCH_NVME_SECS'" >>"$out/cases.sh"
[ -f "$out/cases.sh" ] && inc=(--include "$out/cases.sh")
timeout=${BENCH_TIMEOUT:-3600}
echo "bench: booting two guests (2 kite + 1 virtio-net NIC on a, 1 kite + 2 virtio-net on b); log: out/logs/bench/a.log"
t0=$(date +%s)
# The storage image: the NVMe over RDMA rows need nvme-cli, fio and nvmet.
scripts/vm.sh --test bench --timeout "$timeout" --initrd out/guest/initramfs-storage.cpio.gz \
	--mem 2G --include tests/vm/lib.sh --include tests/vm/rdma-lib.sh \
	--include tests/vm/storage-lib.sh --include tests/vm/rdma-mpi.sh "${inc[@]}" --link a,b --virtio a,b \
	--xlink a=kite,b=virtio-net-pci "${env[@]}" \
	a=bench/bench-a.sh b=bench/bench-b.sh
vmrc=$?
grep -a '^BENCH ' out/logs/bench/a.log | tr -d '\r' >"$out/results.raw"
python3 - "$out/results.raw" "$(($(date +%s) - t0))" <<'PY' | tee "$out/results.txt"
import statistics, sys
raw, secs = sys.argv[1], sys.argv[2]
vals, order, failed, skipped, why = {}, [], set(), set(), {}
# rate: cases shown as thousand messages per second (from Mpps) rather
# than MB/s: atomics, and the 64-byte message-rate cases.
def rate(tool, size):
    return tool == "ib_atomic_bw" or (tool.endswith("_bw") and size <= 64)
for line in open(raw):
    f = line.split()
    if len(f) < 7:
        continue
    kind, tool, size, mtu, qps = f[1], f[2], int(f[3]), int(f[4]), int(f[5])
    key = (tool, size, mtu, qps)
    if key not in order:
        order.append(key)
    if f[6] == "SKIPPED":
        skipped.add((kind,) + key)
        continue
    if f[6] == "FAILED":
        failed.add((kind,) + key)
        if len(f) > 7 and f[7].startswith("wc_status="):
            why[(kind,) + key] = f[7].split("=", 1)[1]
        continue
    v = float(f[8]) * 1e3 if rate(tool, size) and len(f) > 8 else float(f[7])
    vals.setdefault((kind,) + key, []).append(v)
def cell(kind, key):
    v = vals.get((kind,) + key)
    return statistics.median(v) if v else None
# Transports in column order, with their headers; only those that ran.
cols = [("kite", "Kite<->Kite"), ("kite-rxe", "Kite->rxe"), ("rxe-kite", "rxe->Kite"),
        ("rxe", "rxe<->rxe")]
ran = {k[0] for k in vals} | {k[0] for k in failed}
cols = [c for c in cols if c[0] in ran]
kinds = [c[0] for c in cols]
# Ratios: Kite/rxe as before, and each mixed transport over rxe<->rxe
# (what replacing one Soft-RoCE end by Kite does).
ratios = [(a, b, h) for a, b, h in (("kite", "rxe", "Kite/rxe"),
                                     ("kite-rxe", "rxe", "K->r/rxe"),
                                     ("rxe-kite", "rxe", "r->K/rxe"))
          if a in kinds and b in kinds]
print("Kite vs Soft-RoCE (rxe over virtio-net): two TCG guests, same run (%ss)" % secs)
print("%-13s %6s %5s %3s" % ("test", "size", "mtu", "qps") +
      "".join(" %13s" % h for _, h in cols) + "".join(" %9s" % h for _, _, h in ratios))
bad = 0
for key in order:
    tool, size, mtu, qps = key
    unit = ("us" if tool.endswith("_lat") else "MiB/s" if tool == "ucp_put_bw" else "kop/s" if tool == "ib_atomic_bw"
            else "kmsg/s" if rate(tool, size) else "IOPS" if tool == "nvme_randread"
            else "MiB/s" if tool == "nvme_seqread" else "MB/s")
    row = "%-13s %6d %5d %3d" % (tool, size, mtu, qps)
    for kind in kinds:
        v = cell(kind, key)
        if (kind,) + key in skipped:
            row += " %13s" % "n/a"
            continue
        if v is None:
            bad += 1
        st = why.get((kind,) + key)
        row += " %13s" % ("%.2f %s" % (v, unit) if v is not None else
                          "FAILED wc%s" % st if st else "FAILED")
    for a, b, _ in ratios:
        x, y = cell(a, key), cell(b, key)
        row += " %9s" % ("%.2f" % (x / y) if x is not None and y else "-")
    print(row)
if "kite-rxe" in kinds or "rxe-kite" in kinds:
    print("Kite->rxe: client (perftest's active side) Kite on guest a, server rxe on b;"
          " rxe->Kite: client rxe on b, server Kite on a (same link).")
print("bw: BW average (atomic and 64-byte cases: thousand operations per second),"
      " higher is better; lat: t_typical, lower is better; mtu: RoCE path MTU"
      " (1024 over netdevs at MTU 1500, 4096 over MTU 9000); qps: perftest -q;"
      " a ratio above 1 means faster for bw and slower for lat than rxe<->rxe.")
if any(k[0].startswith("nvme_") for k in order):
    print("nvme_*: NVMe over RDMA (nvme-rdma host on the client's side, nvmet-rdma"
          " target with a RAM disk on the server's), fio with libaio and O_DIRECT:"
          " nvme_randread 4k random reads at QD16 (IOPS), nvme_read_lat 4k random"
          " reads at QD1 (mean latency), nvme_seqread 128k sequential reads at"
          " QD16 (MiB/s).")
if any(k[0].startswith(("ucp_", "mpi_")) for k in order):
    print("ucp_*: ucx_perftest UCP tests (UCX 1.13) with UCX_NET_DEVICES on the"
          " transport's device: ucp_tag_lat (tag_lat, 50th percentile of the one-way"
          " latency), ucp_put_bw (overall bandwidth, UCX's MB = MiB); mpi_*: Open MPI"
          " 4.1 with the UCX PML (tests/vm/kite-mpi.c): mpi_lat 8 B half round trip,"
          " mpi_bw 1 MiB ping-pong; n/a: not run on the mixed link.")
if why:
    print("FAILED wcN: the client's work completion failed with ibv_wc_status N"
          " (12: transport retry count exceeded, the responder did not answer"
          " within timeout x retry_cnt).")
if not order:
    print("no results (see out/logs/bench/a.log)")
    bad = 1
sys.exit(1 if bad else 0)
PY
prc=$?
# The engine alone on the host, against memcpy (after the guests, so that
# it has the machine to itself); its lines go under the table.
erc=0
if [ -z "${BENCH_NO_ENGINE:-}" ]; then
	make --no-print-directory -s -C bench/engine run 2>&1 | tee "$out/engine.txt" |
		tee -a "$out/results.txt"
	erc=${PIPESTATUS[0]}
fi
echo "bench: table in $out/results.txt, raw lines in $out/results.raw, logs in out/logs/bench/"
[ $vmrc -eq 0 ] && [ $prc -eq 0 ] && [ $erc -eq 0 ]
