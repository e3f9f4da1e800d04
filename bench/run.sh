#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Kite vs Soft-RoCE benchmark (`make bench`; not part of `make check`).
# Boots two guests, each with a kite NIC and a virtio-net NIC on separate
# socket links (scripts/vm.sh --link a,b --virtio a,b); runs the perftest
# cases of bench/bench-a.sh over Kite (kite_0) and over Soft-RoCE (rxe0 on
# virtio-net) in the same run, and prints one table with both and the
# Kite/rxe ratio. Results: out/bench/results.txt (table) and
# out/bench/results.raw (the BENCH lines); guest logs: out/logs/bench/.
#
#   bench/run.sh                    BENCH_REPEAT=N (median of N runs, default 1)
#   BENCH_CASES="ib_write_bw:4096:1000 ..." bench/run.sh   other cases (TOOL:SIZE:ITERS)
#
# Exit status: 0 when every case has a figure for both transports.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=out/bench
mkdir -p "$out"
bash scripts/mkinitramfs.sh || { echo "bench: guest image build failed" >&2; exit 1; }
env=()
[ -n "${BENCH_REPEAT:-}" ] && env+=(--env "BENCH_REPEAT=$BENCH_REPEAT")
# The guests read BENCH_CASES with spaces; pass it through a file.
inc=()
if [ -n "${BENCH_CASES:-}" ]; then
	echo "BENCH_CASES='$BENCH_CASES'" >"$out/cases.sh"
	inc=(--include "$out/cases.sh")
fi
timeout=${BENCH_TIMEOUT:-2400}
echo "bench: booting two guests (Kite + virtio-net each); log: out/logs/bench/a.log"
t0=$(date +%s)
scripts/vm.sh --test bench --timeout "$timeout" --include tests/vm/lib.sh \
	--include tests/vm/rdma-lib.sh "${inc[@]}" --link a,b --virtio a,b "${env[@]}" \
	a=bench/bench-a.sh b=bench/bench-b.sh
vmrc=$?
grep -a '^BENCH ' out/logs/bench/a.log | tr -d '\r' >"$out/results.raw"
python3 - "$out/results.raw" "$(($(date +%s) - t0))" <<'PY' | tee "$out/results.txt"
import statistics, sys
raw, secs = sys.argv[1], sys.argv[2]
vals, order, failed = {}, [], set()
for line in open(raw):
    f = line.split()
    if len(f) < 5:
        continue
    kind, tool, size = f[1], f[2], int(f[3])
    key = (tool, size)
    if key not in order:
        order.append(key)
    if f[4] == "FAILED":
        failed.add((kind,) + key)
        continue
    # ib_atomic_bw: operations per second (from Mpps) say more than MB/s.
    v = float(f[6]) * 1e3 if tool == "ib_atomic_bw" and len(f) > 6 else float(f[5])
    vals.setdefault((kind,) + key, []).append(v)
def cell(kind, key):
    v = vals.get((kind,) + key)
    return statistics.median(v) if v else None
print("Kite vs Soft-RoCE (rxe over virtio-net): two TCG guests, same run (%ss)" % secs)
print("%-13s %8s  %14s  %14s  %9s" % ("test", "size", "Kite", "rxe", "Kite/rxe"))
bad = 0
for key in order:
    tool, size = key
    unit = "us" if tool.endswith("_lat") else "kop/s" if tool == "ib_atomic_bw" else "MB/s"
    k, r = cell("kite", key), cell("rxe", key)
    ks = "%.2f %s" % (k, unit) if k is not None else "FAILED"
    rs = "%.2f %s" % (r, unit) if r is not None else "FAILED"
    ratio = "%.2f" % (k / r) if k is not None and r else "-"
    if k is None or r is None:
        bad += 1
    print("%-13s %8d  %14s  %14s  %9s" % (tool, size, ks, rs, ratio))
print("bw: BW average (atomic: thousand operations per second), higher is better;"
      " lat: t_typical, lower is better;"
      " a ratio above 1 means Kite is faster for bw and slower for lat.")
if not order:
    print("no results (see out/logs/bench/a.log)")
    bad = 1
sys.exit(1 if bad else 0)
PY
prc=$?
echo "bench: table in $out/results.txt, raw lines in $out/results.raw, logs in out/logs/bench/"
[ $vmrc -eq 0 ] && [ $prc -eq 0 ]
