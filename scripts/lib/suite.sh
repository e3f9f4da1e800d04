# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034 # S_* are this file's results, read by callers
# Sourced (bash) by scripts/check.sh and tests/vm/run.sh: run one test suite
# (or VM group) with a time limit and judge it from its summary line, so that
# both apply the same rules.
#
# The caller sets SUITE_TMP to a private directory it removes on exit (trap).

# shellcheck source=scripts/lib/results.sh
. "$(dirname "${BASH_SOURCE[0]}")/results.sh"

# bounded_run SECS OUT TEE CMD...: run CMD with `timeout --kill-after=30
# SECS`: TEE 1: its stdout into the file OUT and to our stdout (stderr passes
# through); TEE 0: its stdout and stderr into OUT only.
# Returns CMD's exit status (124/137: timed out). CMD runs in the background
# and is waited for, so a signal trap of the caller runs at once; the trap
# can call bounded_kill to stop it.
BOUNDED_PID=
bounded_run() {
	local secs=$1 out=$2 tee=$3 fifo=$SUITE_TMP/fifo.$$ teepid rc
	shift 3
	: >"$out"
	rm -f "$fifo"
	mkfifo "$fifo" || return 125
	if [ "$tee" = 1 ]; then
		tee "$out" <"$fifo" &
	else
		cat <"$fifo" >"$out" &
	fi
	teepid=$!
	if [ "$tee" = 1 ]; then
		timeout --kill-after=30 "$secs" "$@" >"$fifo" &
	else
		timeout --kill-after=30 "$secs" "$@" >"$fifo" 2>&1 &
	fi
	BOUNDED_PID=$!
	wait "$BOUNDED_PID"
	rc=$?
	BOUNDED_PID=
	wait "$teepid"
	rm -f "$fifo"
	return "$rc"
}

# bounded_kill: stop what bounded_run runs (timeout passes SIGTERM on).
bounded_kill() {
	[ -n "$BOUNDED_PID" ] || return 0
	kill -TERM "$BOUNDED_PID" 2>/dev/null
	wait "$BOUNDED_PID" 2>/dev/null
	BOUNDED_PID=
}

# run_suite NAME SECS CMD...: run CMD (stdout shown and kept) for at most
# SECS seconds and judge it. The last non-empty line of its stdout must be
#   NAME: N passed, N failed[, N skipped][, N retried]
# Sets S_PASS S_FAIL S_SKIP S_RETRY (what counts, including the extra
# failures below), S_NOTE (one line for a summary) and S_PARTS: where the
# retries and skips came from, when the suite said so on a line
#   # NAME parts: retried PART N, ...; skipped PART N, ...
# (tests/vm/run.sh: per group), else empty. One extra failure, with a FAIL
# line saying why, when:
#   - there is no summary line (crash, timeout: 124/137);
#   - it exits non-zero but reports no failure;
#   - it reports "0 passed, 0 failed" (it ran nothing).
run_suite() {
	local name=$1 secs=$2 out=$SUITE_TMP/$1.out start rc last p f k why
	shift 2
	start=$(date +%s)
	bounded_run "$secs" "$out" 1 "$@"
	rc=$?
	S_SECS=$(($(date +%s) - start))
	last=$(grep -v '^[[:space:]]*$' "$out" | tail -n 1)
	S_PASS=0 S_FAIL=0 S_SKIP=0 S_RETRY=0
	S_PARTS=$(sed -n "s/^# $name parts: //p" "$out" | tail -n 1)
	if results_parse "$name" "$last"; then
		p=$R_PASS f=$R_FAIL k=$R_SKIP
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			echo "FAIL $name: exited $rc although it reported no failure"
			f=1
		fi
		if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
			echo "FAIL $name: reported 0 passed, 0 failed (ran no tests)"
			f=1
			S_NOTE="$name: ran no tests (0 passed, 0 failed, $k skipped), counted as 1 failure (${S_SECS}s)"
		else
			S_NOTE="$name: $p passed, $f failed, $k skipped, $R_RETRY retried (${S_SECS}s)"
		fi
		S_PASS=$p S_FAIL=$f S_SKIP=$k S_RETRY=$R_RETRY
	else
		case $rc in
		124 | 137) why="timed out after ${secs}s" ;;
		*) why="exit $rc" ;;
		esac
		echo "FAIL $name: no summary line ($why); last line was: ${last:-<none>}"
		S_FAIL=1
		S_NOTE="$name: CRASHED, no summary ($why, ${S_SECS}s)"
	fi
	rm -f "$out"
}
