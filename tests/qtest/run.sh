#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Device-level tests of the kite QEMU model (no guest OS): drives
# out/qemu-system-x86_64 through the qtest protocol. Does not build QEMU
# (`make qemu` / `make check` do): a missing binary is one failure. Last line
# of stdout: "qtest: N passed, N failed". KITE_INCLUDE=DIR reads the ABI
# from DIR/kite/kite_hw.h (a scratch copy of include/) instead. Every test
# runs a second time on the ASan and UBSan build of QEMU
# (out/qemu-fuzz/qemu-system-x86_64, `make qemu-fuzz`; KITE_QEMU_ASAN=PATH
# another, empty: none), results asan/NAME; one skip when it is not built.
#   tests/qtest/run.sh [-t GLOB] [-k SUBSTRING] [-v]   (see kite_qtest.py)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
QEMU=${KITE_QEMU:-$REPO/out/qemu-system-x86_64}
# shellcheck source=scripts/lib/results.sh
. "$REPO/scripts/lib/results.sh"

if [ ! -x "$QEMU" ]; then
	echo "FAIL qtest: $QEMU missing (run 'make qemu')"
	results_line qtest 0 1
	exit 1
fi

# The ABI table the tests read (out/qtest/kite_abi.json): generated from
# kite_hw.h and kite_limits.h by the C compiler, rebuilt when they change.
# A header it cannot evaluate is one failure, with the reason.
if ! abi_err=$(python3 "$REPO/tests/qtest/abi_gen.py" 2>&1); then
	echo "FAIL abi: ${abi_err%%$'\n'*}"
	printf '%s\n' "$abi_err" | tail -n +2 | sed 's/^/    /'
	results_line qtest 0 1
	exit 1
fi

# Bounded: the whole suite normally takes well under a minute.
exec timeout -k 10 300 python3 "$REPO/tests/qtest/kite_qtest.py" \
	--qemu "$QEMU" \
	--qemu-asan "${KITE_QEMU_ASAN-$REPO/out/qemu-fuzz/qemu-system-x86_64}" "$@"
