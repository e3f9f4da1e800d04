#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The "provider" suite of make check: the rdma-core provider's host
# self-test (providers/kite/selftest/: the fast path of kite_fast.c and the
# address handles of kite_ah.c against a fake device, under ASan/UBSan).
# scripts/build-rdma-core.sh builds and runs it with every rdma-core build
# and keeps the binary in out/rdma-core/selftest/; this runs that binary
# again so its results count in make check.
#
#   scripts/provider-selftest.sh [-t GLOB]   only the cases matching GLOB
#
# One result line per case ("ok provider/NAME", "FAIL provider/NAME: ..."),
# the lines of failed checks, and last "provider: N passed, N failed"
# (scripts/lib/results.sh); exit 1 on any failure. A missing binary, a run
# that ends without the self-test's own summary (a crash), a non-zero exit
# without a failed case, or a selection that runs nothing is one failure.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib/results.sh
. "$top/scripts/lib/results.sh"

pattern=
if [ "${1:-}" = -t ]; then
	pattern=${2-}
	shift 2 || exit 2
fi
bin=$top/out/rdma-core/selftest/kite-provider-selftest
if [ ! -x "$bin" ]; then
	echo "FAIL provider/selftest: $bin missing (run 'make rdma-core')"
	results_line provider 0 1
	exit 1
fi
out=$(mktemp /tmp/kite-provider.XXXXXX) || exit 1
res=$(mktemp /tmp/kite-provider-res.XXXXXX) || exit 1
trap 'rm -f "$out" "$res"' EXIT
timeout 300 "$bin" ${pattern:+"$pattern"} >"$out" 2>&1
rc=$?
# Result lines under the suite's name; the failed checks' lines as they are.
sed -nE -e 's/^(ok|FAIL|skip) /\1 provider\//p' -e '/^# /p' "$out" | tee "$res"
results_count "$res"
ran=$((R_PASS + R_FAIL + R_SKIP))
if ! grep -qE '^kite-provider-selftest: [0-9]+ passed, [0-9]+ failed$' "$out"; then
	echo "FAIL provider/selftest: no summary (exit $rc): $(tail -n 3 "$out" | tr '\n' ' ')"
	R_FAIL=$((R_FAIL + 1))
elif [ "$ran" -eq 0 ] && [ -z "$pattern" ]; then
	echo "FAIL provider/selftest: no case ran"
	R_FAIL=1
elif [ "$rc" -ne 0 ] && [ "$R_FAIL" -eq 0 ] && [ "$ran" -gt 0 ]; then
	echo "FAIL provider/selftest: exit $rc without a failed case: $(tail -n 3 "$out" | tr '\n' ' ')"
	R_FAIL=1
fi
results_end provider "$pattern"
