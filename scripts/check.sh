#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Kite's test entry point (what `make check` runs):
#   1. install dependencies and build everything (`make -k all`),
#   2. run every suite, each printing its own "<suite>: N passed, N failed"
#      as the last line of its stdout,
#   3. print the sum as the very last line: "N passed, N failed[, N skipped]".
#
# A suite counts one extra failure when its runner is missing, when it ends
# without its summary line (crash, timeout) or when it exits non-zero while
# reporting no failures. A failed build counts one failure too; the suites
# still run, so one broken part does not hide the results of the others.
#
#   scripts/check.sh [--no-build] [SUITE...]     (default: host qtest kunit vm)
# Environment: KITE_SUITE_TIMEOUT (seconds per suite, default 2400).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
mkdir -p out/logs

build=1
suites=()
for a in "$@"; do
	case $a in
	--no-build) build=0 ;;
	host | qtest | kunit | vm) suites+=("$a") ;;
	*) echo "usage: $0 [--no-build] [host|qtest|kunit|vm]..." >&2; exit 2 ;;
	esac
done
[ ${#suites[@]} -gt 0 ] || suites=(host qtest kunit vm)

# suite name -> the file that must exist, and the command that runs it.
declare -A runner=(
	[host]=tests/host/Makefile
	[qtest]=tests/qtest/run.sh
	[kunit]=scripts/kunit.sh
	[vm]=tests/vm/run.sh
)
declare -A command=(
	[host]="make --no-print-directory -C tests/host check"
	[qtest]="bash tests/qtest/run.sh"
	[kunit]="bash scripts/kunit.sh"
	[vm]="bash tests/vm/run.sh"
)

pass=0 fail=0 skip=0
notes=()

if [ "$build" = 1 ]; then
	start=$(date +%s)
	echo "== build (make -k all; log: out/logs/build.log)"
	if make --no-print-directory -k all >out/logs/build.log 2>&1; then
		echo "build: ok ($(($(date +%s) - start))s)"
	else
		tail -n 25 out/logs/build.log
		echo "FAIL build: 'make -k all' failed after $(($(date +%s) - start))s (log: out/logs/build.log)"
		fail=$((fail + 1))
		notes+=("build: FAILED (out/logs/build.log)")
	fi
fi

timeout_s=${KITE_SUITE_TIMEOUT:-2400}
for s in "${suites[@]}"; do
	echo "== $s: ${command[$s]}"
	if [ ! -f "${runner[$s]}" ]; then
		echo "FAIL $s: runner ${runner[$s]} is missing"
		fail=$((fail + 1))
		notes+=("$s: runner missing")
		continue
	fi
	start=$(date +%s)
	out=$(mktemp)
	# stdout is kept to find the summary; stderr goes straight through.
	timeout --kill-after=30 "$timeout_s" ${command[$s]} | tee "$out"
	rc=${PIPESTATUS[0]}
	secs=$(($(date +%s) - start))
	last=$(grep -v '^[[:space:]]*$' "$out" | tail -n 1)
	rm -f "$out"
	if [[ $last =~ ^$s:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]; then
		p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} k=${BASH_REMATCH[4]:-0}
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			echo "FAIL $s: exited $rc although it reported no failure"
			f=1
		fi
		pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + k))
		notes+=("$s: $p passed, $f failed, $k skipped (${secs}s)")
	else
		[ "$rc" -eq 124 ] && why="timed out after ${timeout_s}s" || why="exit $rc"
		echo "FAIL $s: no summary line ($why); last line was: ${last:-<none>}"
		fail=$((fail + 1))
		notes+=("$s: CRASHED, no summary ($why, ${secs}s)")
	fi
done

echo "== summary"
for n in "${notes[@]}"; do echo "   $n"; done
summary="$pass passed, $fail failed"
[ "$skip" -gt 0 ] && summary="$summary, $skip skipped"
echo "$summary"
[ "$fail" -eq 0 ]
