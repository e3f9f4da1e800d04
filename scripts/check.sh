#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Kite's test entry point (what `make check` runs):
#   1. install dependencies (`make deps`), then build everything
#      (`make -k all`),
#   2. run every suite, each printing its own "<suite>: N passed, N failed"
#      as the last line of its stdout,
#   3. print the sum as the very last line: "N passed, N failed[, N skipped]".
#
# A suite counts one extra failure when its runner is missing, when it ends
# without its summary line (crash, timeout), when it exits non-zero while
# reporting no failures, or when it reports "0 passed, 0 failed" (it ran
# nothing); see scripts/lib/suite.sh. A failed dependency install or build
# counts one failure each; the suites still run, so one broken part does not
# hide the results of the others.
#
# Time: the whole run has a budget, KITE_CHECK_BUDGET seconds (default 5100,
# 85 min). The build gets min(KITE_BUILD_TIMEOUT (default 3000), time left),
# each suite min(KITE_SUITE_TIMEOUT (default 2400), time left); a suite
# that cannot start any more counts as one failure. The summary line is
# printed in every case, also when the run is interrupted (INT/TERM/HUP).
#
#   scripts/check.sh [--no-build] [SUITE...]     (default: host provider qtest kunit vm)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
mkdir -p out/logs
# shellcheck source=scripts/lib/suite.sh
. scripts/lib/suite.sh

SUITE_TMP=$(mktemp -d /tmp/kite-check.XXXXXX) || exit 1
trap 'rm -rf "$SUITE_TMP"' EXIT

t0=$(date +%s)
budget=${KITE_CHECK_BUDGET:-5100}
deadline=$((t0 + budget))
# What a step needs beyond its own limit: timeout's --kill-after and the
# summary. A step is not started with less than MIN_STEP seconds left.
MARGIN=40
MIN_STEP=30

build=1
suites=()
for a in "$@"; do
	case $a in
	--no-build) build=0 ;;
	host | provider | qtest | kunit | vm) suites+=("$a") ;;
	*) echo "usage: $0 [--no-build] [host|provider|qtest|kunit|vm]..." >&2; exit 2 ;;
	esac
done
[ ${#suites[@]} -gt 0 ] || suites=(host provider qtest kunit vm)

# suite name -> the file that must exist, and the command that runs it.
declare -A runner=(
	[host]=tests/host/Makefile
	[provider]=scripts/provider-selftest.sh
	[qtest]=tests/qtest/run.sh
	[kunit]=scripts/kunit.sh
	[vm]=tests/vm/run.sh
)
declare -A command=(
	[host]="make --no-print-directory -C tests/host check"
	[provider]="bash scripts/provider-selftest.sh"
	[qtest]="bash tests/qtest/run.sh"
	[kunit]="bash scripts/kunit.sh"
	[vm]="bash tests/vm/run.sh"
)

pass=0 fail=0 skip=0
notes=()

summary() {
	local n s
	echo "== summary ($(($(date +%s) - t0))s of a ${budget}s budget)"
	for n in "${notes[@]}"; do echo "   $n"; done
	s="$pass passed, $fail failed"
	[ "$skip" -gt 0 ] && s="$s, $skip skipped"
	echo "$s"
}

on_signal() {
	trap - INT TERM HUP
	bounded_kill
	echo "FAIL check: interrupted by SIG$1"
	fail=$((fail + 1))
	notes+=("interrupted by SIG$1")
	summary
	exit 1
}
for sig in INT TERM HUP; do
	# shellcheck disable=SC2064
	trap "on_signal $sig" "$sig"
done

# left LIMIT: seconds a step may take: min(LIMIT, time left in the budget).
left() {
	local l=$((deadline - $(date +%s) - MARGIN))
	[ "$l" -lt "$1" ] && echo "$l" || echo "$1"
}

# build_step NAME LIMIT CMD...: one build step, output to out/logs/build.log.
build_step() {
	local name=$1 t start rc why
	t=$(left "$2")
	shift 2
	if [ "$t" -lt "$MIN_STEP" ]; then
		echo "FAIL $name: not started, the ${budget}s budget is used up"
		fail=$((fail + 1))
		notes+=("$name: NOT STARTED (budget used up)")
		return 1
	fi
	start=$(date +%s)
	echo "== $name ($*; log: out/logs/build.log)"
	echo "== $name: $*" >>out/logs/build.log
	bounded_run "$t" "$SUITE_TMP/build.out" 0 "$@"
	rc=$?
	cat "$SUITE_TMP/build.out" >>out/logs/build.log
	if [ "$rc" -eq 0 ]; then
		echo "$name: ok ($(($(date +%s) - start))s)"
		return 0
	fi
	case $rc in 124 | 137) why="timed out after ${t}s" ;; *) why="exit $rc" ;; esac
	tail -n 25 "$SUITE_TMP/build.out"
	echo "FAIL $name: '$*' failed ($why, $(($(date +%s) - start))s; log: out/logs/build.log)"
	fail=$((fail + 1))
	notes+=("$name: FAILED ($why; out/logs/build.log)")
	return 1
}

if [ "$build" = 1 ]; then
	: >out/logs/build.log
	# Dependencies first, on their own: the build's recipes need what they
	# install (e.g. the kernel headers scripts/kver.sh looks for).
	build_step deps 1800 nice -n 10 make --no-print-directory deps
	build_step build "${KITE_BUILD_TIMEOUT:-3000}" nice -n 10 make --no-print-directory -k all
fi

suite_timeout=${KITE_SUITE_TIMEOUT:-2400}
for s in "${suites[@]}"; do
	echo "== $s: ${command[$s]}"
	if [ ! -f "${runner[$s]}" ]; then
		echo "FAIL $s: runner ${runner[$s]} is missing"
		fail=$((fail + 1))
		notes+=("$s: runner missing")
		continue
	fi
	t=$(left "$suite_timeout")
	if [ "$t" -lt "$MIN_STEP" ]; then
		echo "FAIL $s: not started, the ${budget}s budget is used up"
		fail=$((fail + 1))
		notes+=("$s: NOT STARTED (budget used up)")
		continue
	fi
	# kunit.sh waits for another run's lock; never longer than it may run.
	lock_wait=$((t - 60 > 0 ? t - 60 : 0))
	[ "$lock_wait" -gt 1800 ] && lock_wait=1800
	export KITE_KUNIT_LOCK_WAIT=$lock_wait
	# stdout is kept to find the summary; stderr goes straight through.
	# shellcheck disable=SC2086 # the command is split into words on purpose
	run_suite "$s" "$t" ${command[$s]}
	pass=$((pass + S_PASS)) fail=$((fail + S_FAIL)) skip=$((skip + S_SKIP))
	notes+=("$S_NOTE")
done

summary
[ "$fail" -eq 0 ]
