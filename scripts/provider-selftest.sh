#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The "provider" suite of make check: the rdma-core provider's host
# self-test (providers/kite/selftest/kite_fast_test.c: the fast path of
# kite_fast.c and the address handles of kite_ah.c against a fake device,
# under ASan/UBSan). scripts/build-rdma-core.sh builds and runs it with every
# rdma-core build and keeps the binary in out/rdma-core/selftest/; this
# runs that binary again so its results count in make check.
# Last line: "provider: N passed, N failed"; exit 1 on any failure.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/out/rdma-core/selftest/kite-provider-selftest
if [ ! -x "$bin" ]; then
	echo "FAIL provider/selftest: $bin missing (run 'make rdma-core')"
	echo "provider: 0 passed, 1 failed"
	exit 1
fi
out=$(mktemp /tmp/kite-provider.XXXXXX) || exit 1
trap 'rm -f "$out"' EXIT
timeout 300 "$bin" >"$out" 2>&1
rc=$?
grep -E '^(ok|FAIL|not ok) ' "$out" | sed -E 's/^(ok|FAIL|not ok) /\1 provider\//'
last=$(grep -E '^kite-provider-selftest: [0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
if [[ $last =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
	p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]}
else
	echo "FAIL provider/selftest: no summary (exit $rc): $(tail -n 3 "$out" | tr '\n' ' ')"
	p=0 f=1
fi
if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
	echo "FAIL provider/selftest: exit $rc without a failed case: $(tail -n 3 "$out" | tr '\n' ' ')"
	f=1
fi
echo "provider: $p passed, $f failed"
[ "$f" -eq 0 ]
