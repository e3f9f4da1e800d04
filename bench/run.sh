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
#   BENCH_CASES="ib_write_bw:4096:1000 ..." bench/run.sh   other cases (TOOL:SIZE:ITERS)
#   BENCH_KINDS="kite rxe" bench/run.sh   some transports (kite kite-rxe rxe-kite rxe)
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
[ -f "$out/cases.sh" ] && inc=(--include "$out/cases.sh")
timeout=${BENCH_TIMEOUT:-3600}
echo "bench: booting two guests (2 kite + 1 virtio-net NIC on a, 1 kite + 2 virtio-net on b); log: out/logs/bench/a.log"
t0=$(date +%s)
scripts/vm.sh --test bench --timeout "$timeout" --include tests/vm/lib.sh \
	--include tests/vm/rdma-lib.sh "${inc[@]}" --link a,b --virtio a,b \
	--xlink a=kite,b=virtio-net-pci "${env[@]}" \
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
print("%-13s %6s" % ("test", "size") + "".join(" %12s" % h for _, h in cols) +
      "".join(" %9s" % h for _, _, h in ratios))
bad = 0
for key in order:
    tool, size = key
    unit = "us" if tool.endswith("_lat") else "kop/s" if tool == "ib_atomic_bw" else "MB/s"
    row = "%-13s %6d" % (tool, size)
    for kind in kinds:
        v = cell(kind, key)
        if v is None:
            bad += 1
        row += " %12s" % ("%.2f %s" % (v, unit) if v is not None else "FAILED")
    for a, b, _ in ratios:
        x, y = cell(a, key), cell(b, key)
        row += " %9s" % ("%.2f" % (x / y) if x is not None and y else "-")
    print(row)
if "kite-rxe" in kinds or "rxe-kite" in kinds:
    print("Kite->rxe: client (perftest's active side) Kite on guest a, server rxe on b;"
          " rxe->Kite: client rxe on b, server Kite on a (same link).")
print("bw: BW average (atomic: thousand operations per second), higher is better;"
      " lat: t_typical, lower is better;"
      " a ratio above 1 means faster for bw and slower for lat than rxe<->rxe.")
if not order:
    print("no results (see out/logs/bench/a.log)")
    bad = 1
sys.exit(1 if bad else 0)
PY
prc=$?
echo "bench: table in $out/results.txt, raw lines in $out/results.raw, logs in out/logs/bench/"
[ $vmrc -eq 0 ] && [ $prc -eq 0 ]
