#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Kite's test entry point (what `make check` runs):
#   1. install dependencies (`make deps`), then build everything
#      (`make -k all`),
#   2. run every suite, each printing its own "<suite>: N passed, N failed"
#      as the last line of its stdout,
#   3. print the sum as the very last line: "N passed, N failed[, N skipped]",
#      after a line with every suite's retries and skips (a retry is a
#      check run again; see Documentation/kite/testing.rst):
#      "retries: vm 2 (rdma 1, interop 1); skips: vm 5 (interop 5)".
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
# One test or group: --test PATTERN (make check T=PATTERN) hands PATTERN to
# each suite's runner, which selects by it (a shell glob, see
# Documentation/kite/testing.rst); a suite that selects nothing fails.
#
#   scripts/check.sh [--no-build] [--test PATTERN] [SUITE...]
#       (default suites: lint host fuzz provider qtest kunit packages vm)
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

usage() {
	echo "usage: $0 [--no-build] [--test PATTERN] [lint|host|fuzz|provider|qtest|kunit|packages|vm]..." >&2
	exit 2
}
build=1
pattern=
suites=()
while [ $# -gt 0 ]; do
	case $1 in
	--no-build) build=0 ;;
	--test=*) pattern=${1#--test=} ;;
	--test | -t) [ $# -ge 2 ] || usage; pattern=$2; shift ;;
	lint | host | fuzz | provider | qtest | kunit | packages | vm) suites+=("$1") ;;
	*) usage ;;
	esac
	shift
done
[ ${#suites[@]} -gt 0 ] || suites=(lint host fuzz provider qtest kunit packages vm)

# suite name -> the file that must exist.
declare -A runner=(
	[lint]=scripts/lint.sh
	[host]=tests/host/Makefile
	[fuzz]=tests/fuzz/Makefile
	[provider]=scripts/provider-selftest.sh
	[qtest]=tests/qtest/run.sh
	[kunit]=scripts/kunit.sh
	[packages]=tests/packages/run.sh
	[vm]=tests/vm/run.sh
)

# suite_cmd SUITE: set cmd to the command that runs SUITE, with the
# selection in the form its runner takes.
suite_cmd() {
	local sel=()
	[ -n "$pattern" ] && sel=(-t "$pattern")
	case $1 in
	lint) cmd=(bash scripts/lint.sh "${sel[@]}") ;;
	host) cmd=(make --no-print-directory -C tests/host check ${pattern:+"T=$pattern"}) ;;
	fuzz) cmd=(make --no-print-directory -C tests/fuzz check ${pattern:+"T=$pattern"}) ;;
	provider) cmd=(bash scripts/provider-selftest.sh "${sel[@]}") ;;
	qtest) cmd=(bash tests/qtest/run.sh "${sel[@]}") ;;
	# kunit.py's own filter_glob, SUITE[.CASE]
	kunit) cmd=(bash scripts/kunit.sh ${pattern:+"$pattern"}) ;;
	packages) cmd=(bash tests/packages/run.sh "${sel[@]}") ;;
	vm) cmd=(bash tests/vm/run.sh "${sel[@]}") ;;
	esac
}

# show_cmd WORD...: the command as one would type it (quotes only where needed).
show_cmd() {
	local w out=()
	for w in "$@"; do
		if [[ $w =~ ^[A-Za-z0-9_./=:-]+$ ]]; then out+=("$w"); else out+=("'$w'"); fi
	done
	echo "${out[*]}"
}

pass=0 fail=0 skip=0
notes=()
# "SUITE N[ (PARTS)]" for each suite with retries / skips.
retries=() skips=()

# count_parts SUITE N PARTS: "SUITE N (PARTS)", or "SUITE N".
count_parts() { echo "$1 $2${3:+ ($3)}"; }

# joined ITEM...: the items separated by ", ", or "none".
joined() {
	local out
	[ $# -gt 0 ] || { echo none; return; }
	out=$1
	shift
	while [ $# -gt 0 ]; do out="$out, $1"; shift; done
	echo "$out"
}

summary() {
	local n
	echo "== summary ($(($(date +%s) - t0))s of a ${budget}s budget)"
	for n in "${notes[@]}"; do echo "   $n"; done
	echo "retries: $(joined "${retries[@]}"); skips: $(joined "${skips[@]}")"
	results_line "" "$pass" "$fail" "$skip"
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
	# The sanitizer build of QEMU (qtest's asan/ pass, fuzz/device) costs
	# about 7 minutes cold: taken from the cache when it holds one for
	# these sources, built only with KITE_CHECK_SANITIZERS=1 (0: never),
	# so that a cold check stays within its time. Without it those
	# checks are skips.
	case ${KITE_CHECK_SANITIZERS:-cached} in
	1) build_step qemu-fuzz 1800 nice -n 10 make --no-print-directory qemu-fuzz ;;
	0) rm -rf out/qemu-fuzz ;;
	*) build_step qemu-fuzz-cached 60 env KITE_QEMU_FLAVOR=fuzz KITE_QEMU_CACHED_ONLY=1 \
		bash scripts/build-qemu.sh ;;
	esac
fi

suite_timeout=${KITE_SUITE_TIMEOUT:-2400}
for s in "${suites[@]}"; do
	suite_cmd "$s"
	echo "== $s: $(show_cmd "${cmd[@]}")"
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
	run_suite "$s" "$t" "${cmd[@]}"
	pass=$((pass + S_PASS)) fail=$((fail + S_FAIL)) skip=$((skip + S_SKIP))
	notes+=("$S_NOTE")
	# S_PARTS: "retried G N, ...; skipped G N, ..." (or "none" for either).
	parts_r=$(echo "$S_PARTS" | sed -n 's/^retried \(.*\); skipped .*/\1/p' | sed 's/^none$//')
	parts_s=$(echo "$S_PARTS" | sed -n 's/.*; skipped \(.*\)$/\1/p' | sed 's/^none$//')
	[ "$S_RETRY" -eq 0 ] || retries+=("$(count_parts "$s" "$S_RETRY" "$parts_r")")
	[ "$S_SKIP" -eq 0 ] || skips+=("$(count_parts "$s" "$S_SKIP" "$parts_s")")
done

summary
[ "$fail" -eq 0 ]
