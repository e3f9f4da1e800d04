#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Device-level tests of the kite QEMU model (no guest OS): drives
# out/qemu-system-x86_64 through the qtest protocol. Does not build QEMU
# (`make qemu` / `make check` do): a missing binary is one failure. Last line
# of stdout: "qtest: N passed, N failed".
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

# Bounded: the whole suite normally takes well under a minute.
exec timeout -k 10 300 python3 "$REPO/tests/qtest/kite_qtest.py" \
	--qemu "$QEMU" "$@"
