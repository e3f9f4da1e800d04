#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# run.sh check [-t PATTERN] TARGET...: the fuzz suite of `make check`.
#   Each target replays its committed corpus once (tests/fuzz/corpus/NAME,
#   every file a regression input: the seeds and every crash found), one
#   result "fuzz/NAME"; then the host tests (tests/host) built a second time
#   with clang, ASan and UBSan (-fno-sanitize-recover), their results as
#   "asan/PROGRAM/CASE". Last line: "fuzz: N passed, N failed[, N skipped]".
#   The target "device" is QEMU's own generic-fuzz (qemu-fuzz-x86_64 of
#   `make qemu-fuzz`, KITE_QEMU_FUZZ=PATH another) driving two kite devices
#   on one hub as a guest would: registers, doorbells, PCI config, DMA and
#   virtual time; one skip when that binary is not built.
#   PATTERN selects as the host suite's does (fuzz/NAME, asan/PROG/CASE or
#   a host test pattern for the sanitizer build only).
# run.sh fuzz TARGET...: run each target FUZZ_SECS seconds (default 600)
#   from its corpus under nice -n 10, new inputs in out/fuzz/corpus/NAME;
#   then print per target executions, exec/s, libFuzzer's cov and ft, the
#   crashes (saved as out/fuzz/crash-NAME-*: add each to the corpus once
#   fixed) and the engine's line coverage (llvm-cov over the corpus,
#   cov_NAME builds). FUZZ_JOBS=2 runs two targets at once.
set -u
here=$(cd "$(dirname "$0")" && pwd)
QFUZZ=${KITE_QEMU_FUZZ:-$here/../../out/qemu-fuzz/qemu-fuzz-x86_64}
# generic-fuzz's machine: two devices on one hub, so that what one sends
# the other receives; the fuzzer drives every MemoryRegion of both.
export QEMU_FUZZ_ARGS="-M q35 -nodefaults -L /usr/share/seabios \
-L /usr/share/qemu -netdev hubport,id=h0,hubid=0 -netdev hubport,id=h1,hubid=0 \
-device kite,netdev=h0 -device kite,netdev=h1"
export QEMU_FUZZ_OBJECTS=kite

# target_cmd NAME: the fuzzer binary of target NAME and its arguments.
target_cmd() {
	if [ "$1" = device ]; then
		echo "$QFUZZ --fuzz-target=generic-fuzz"
	else
		echo "$O/fuzz_$1"
	fi
}
# shellcheck source=scripts/lib/results.sh
. "$here/../../scripts/lib/results.sh"
O=${O:-$here/../../out/fuzz}
# Every input builds a world and frees it: a small quarantine lets freed
# pages be reused (no page fault per allocation) and still catches a use
# after free within the next few inputs' worth of allocations.
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=16:malloc_context_size=8}
mode=${1:-}
shift || true
pattern=
if [ "${1:-}" = -t ]; then
	pattern=${2-}
	shift 2 || exit 2
fi

check() {
	local t out rc n cov res
	res=$(mktemp /tmp/kite-fuzz.XXXXXX) || exit 1
	out=$(mktemp /tmp/kite-fuzz-out.XXXXXX) || exit 1
	for t in "$@"; do
		results_match "${pattern%%/*}" fuzz || continue
		[[ $pattern == */* ]] && ! results_match "${pattern#*/}" "$t" && continue
		n=$(find "$here/corpus/$t" -type f | wc -l)
		if [ "$t" = device ] && [ ! -x "$QFUZZ" ]; then
			echo "skip fuzz/$t: no $QFUZZ (make qemu-fuzz; make check builds it with KITE_CHECK_SANITIZERS=1)" | tee -a "$res"
			continue
		fi
		# -runs=0: execute the corpus and stop; one process for all.
		# shellcheck disable=SC2046 # the command and its arguments
		timeout 600 $(target_cmd "$t") -runs=0 -timeout=20 -rss_limit_mb=2048 \
			"$here/corpus/$t" >"$out" 2>&1
		rc=$?
		cov=$(sed -n 's/.*INITED \(cov: [0-9]* ft: [0-9]*\).*/\1/p' "$out" | tail -1)
		if [ "$rc" -eq 0 ] && [ "$n" -gt 0 ] && [ -n "$cov" ]; then
			echo "ok fuzz/$t: $n corpus inputs, $cov" | tee -a "$res"
		else
			echo "FAIL fuzz/$t: exit status $rc over $n corpus inputs" | tee -a "$res"
			sed 's/^/    /' "$out" | tail -40
		fi
	done
	# The host tests under ASan and UBSan: their own build directory.
	local host_pat=
	if [ -n "$pattern" ]; then
		[[ $pattern == asan/* ]] && host_pat=${pattern#asan/}
		[[ $pattern != asan/* && $pattern != fuzz* ]] && host_pat=$pattern
	fi
	if [ -z "$pattern" ] || [ -n "$host_pat" ]; then
		# In the environment, so that the Makefile's own flags are added.
		CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
			LDFLAGS="-fsanitize=address,undefined" \
			make --no-print-directory -C "$here/../host" check \
			O="$O/host-asan" CC=clang ${host_pat:+T="$host_pat"} \
			>"$out" 2>&1
		# The host suite's result lines, renamed; its summary dropped.
		sed -n 's/^\(ok\|FAIL\|skip\) /\1 asan\//p; /^    /p' "$out" | tee -a "$res"
		tail -1 "$out" | grep -q '^host: ' || {
			echo "FAIL asan/summary: the sanitizer build of the host tests gave no summary" | tee -a "$res"
			tail -20 "$out"
		}
	fi
	results_count "$res"
	rm -f "$res" "$out"
	results_end fuzz "$pattern"
}

fuzz() {
	local secs=${FUZZ_SECS:-600} jobs=${FUZZ_JOBS:-1} t pids=() crashes=0
	mkdir -p "$O/corpus" "$O/logs"
	# Before any target starts: none is left running on a failure.
	case " $* " in *" device "*)
		[ -x "$QFUZZ" ] || { echo "fuzz: no $QFUZZ; run make qemu-fuzz" >&2; return 1; } ;;
	esac
	for t in "$@"; do
		mkdir -p "$O/corpus/$t"
		# New inputs go to the first directory, the seeds are read too.
		# -max_len: the seeds are short; the records of a long input
		# are what reaches deep states.
		# shellcheck disable=SC2046 # the command and its arguments
		nice -n 10 $(target_cmd "$t") -max_total_time="$secs" -timeout=20 \
			-max_len=4096 -rss_limit_mb=2048 -print_final_stats=1 \
			-artifact_prefix="$O/crash-$t-" \
			"$O/corpus/$t" "$here/corpus/$t" >"$O/logs/$t.log" 2>&1 &
		pids+=($!)
		if [ "${#pids[@]}" -ge "$jobs" ]; then
			wait "${pids[0]}"
			pids=("${pids[@]:1}")
		fi
	done
	wait
	echo "== fuzz: ${secs}s per target (logs: $O/logs)"
	for t in "$@"; do
		local log=$O/logs/$t.log execs rate cov ft n
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
		cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
		ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1)
		n=$(find "$O" -maxdepth 1 \( -name "crash-$t-*" -o -name "timeout-$t-*" -o -name "leak-$t-*" -o -name "oom-$t-*" \) | wc -l)
		crashes=$((crashes + n))
		echo "$t: ${execs:-?} executions, ${rate:-?} exec/s, ${cov:-cov: ?}, ${ft:-ft: ?}, $n crash(es)"
		grep -m3 -E 'ERROR: (AddressSanitizer|libFuzzer)|runtime error|fuzz_world:' "$log" | sed 's/^/    /'
	done
	# Line coverage: replay everything found through the cov_ builds (the
	# engine's targets; QEMU's build has libFuzzer's counters only).
	local profs=() engine=()
	for t in "$@"; do
		[ "$t" = device ] || engine+=("$t")
	done
	[ "${#engine[@]}" -gt 0 ] || { echo "fuzz: $crashes crash(es)"; [ "$crashes" -eq 0 ]; return; }
	set -- "${engine[@]}"
	for t in "$@"; do
		LLVM_PROFILE_FILE="$O/cov-$t.profraw" "$O/cov_$t" -runs=0 \
			"$O/corpus/$t" "$here/corpus/$t" >"$O/logs/cov-$t.log" 2>&1
		profs+=("$O/cov-$t.profraw")
	done
	llvm-profdata merge -sparse -o "$O/cov.profdata" "${profs[@]}" || return 1
	local objs=() first=
	for t in "$@"; do
		if [ -z "$first" ]; then first=$O/cov_$t; else objs+=(-object "$O/cov_$t"); fi
	done
	echo "== line coverage of the engine (qemu/roce) over both corpora"
	llvm-cov report "$first" "${objs[@]}" -instr-profile="$O/cov.profdata" \
		"$here/../../qemu/roce/"*.c | sed 's/^/  /'
	echo "fuzz: $crashes crash(es)"
	[ "$crashes" -eq 0 ]
}

case $mode in
check) check "$@" ;;
fuzz) fuzz "$@" ;;
*) echo "usage: $0 check|fuzz [-t PATTERN] TARGET..." >&2; exit 2 ;;
esac
