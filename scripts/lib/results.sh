# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034 # R_* are this file's results, read by callers
#
# Sourced (bash) by every shell test runner: the one place that reads result
# lines and writes summary lines (scripts/lib/results.py does the same for
# the Python runners). A result line is one of
#   ok NAME[: DETAIL]
#   FAIL NAME: DETAIL
#   skip NAME: WHY
# besides which a check that runs again says so (not a result: its last try
# gives the result, but every retry is counted and reported):
#   retry NAME: WHY
# and a suite's last line of stdout is its summary:
#   SUITE: N passed, N failed[, N skipped][, N retried]
# (scripts/check.sh's total is "N passed, N failed[, N skipped]", with the
# retries and skips of every suite on the line before it).

# results_count FILE...: set R_PASS, R_FAIL, R_SKIP and R_RETRY to the
# number of result and retry lines in FILE... (other lines are ignored).
results_count() {
	read -r R_PASS R_FAIL R_SKIP R_RETRY < <(awk '
		/^ok / { p++ } /^FAIL / { f++ } /^skip / { s++ } /^retry / { r++ }
		END { print p + 0, f + 0, s + 0, r + 0 }' "$@")
}

# results_line SUITE PASS FAIL [SKIP [RETRY]]: print a summary line; an
# empty SUITE prints the total (no prefix). "N skipped" and "N retried" only
# when there are some.
results_line() {
	local s="$2 passed, $3 failed"
	[ "${4:-0}" -gt 0 ] && s="$s, $4 skipped"
	[ "${5:-0}" -gt 0 ] && s="$s, $5 retried"
	echo "${1:+$1: }$s"
}

# results_parse SUITE LINE: when LINE is SUITE's summary line, set R_PASS,
# R_FAIL, R_SKIP and R_RETRY from it; otherwise return 1.
results_parse() {
	local re="^$1: ([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?(, ([0-9]+) retried)?\$"
	[[ $2 =~ $re ]] || return 1
	R_PASS=${BASH_REMATCH[1]} R_FAIL=${BASH_REMATCH[2]} R_SKIP=${BASH_REMATCH[4]:-0}
	R_RETRY=${BASH_REMATCH[6]:-0}
}

# results_end SUITE PATTERN: a suite's last words, from R_PASS, R_FAIL,
# R_SKIP and R_RETRY (0 when unset). When PATTERN (the suite's test selection, T=) is not empty but
# nothing ran, say so and count one failure. Prints the summary line and
# returns 0 when nothing failed.
results_end() {
	if [ -n "$2" ] && [ $((R_PASS + R_FAIL + R_SKIP)) -eq 0 ]; then
		echo "FAIL $1: T='$2' selects no test"
		R_FAIL=1
	fi
	results_line "$1" "$R_PASS" "$R_FAIL" "$R_SKIP" "${R_RETRY:-0}"
	[ "$R_FAIL" -eq 0 ]
}

# results_match PATTERN NAME...: PATTERN (a shell glob) is empty or matches
# one of the NAMEs.
results_match() {
	local pat=$1 n
	shift
	[ -z "$pat" ] && return 0
	for n in "$@"; do
		# shellcheck disable=SC2053 # a glob on purpose
		[[ $n == $pat ]] && return 0
	done
	return 1
}
