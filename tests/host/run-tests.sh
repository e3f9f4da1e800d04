#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# run-tests.sh [-t PATTERN] PROGRAM...: run cmocka test programs with TAP
# output and turn each TAP result into a result line of scripts/lib/results.sh
# ("ok PROGRAM/CASE", "FAIL PROGRAM/CASE: DETAIL", "skip PROGRAM/CASE: ..."),
# then a summary line per program and as the last line
#   host: N passed, N failed[, N skipped]
# The full output of a program that failed follows its results (indented).
# A program that crashes, hangs (300 s; the engine simulation alone moves
# about 1 GB) or reports fewer results than its TAP plan ("1..N") counts the
# missing results as failures. Exit status 1 when anything failed, or when
# no test ran at all.
#
# -t PATTERN selects (shell globs, '*' and '?'; names as the result lines
# print them, the program also without its "test_" prefix):
#   PROG/CASE   the cases matching CASE in the programs matching PROG
#   PROG        every case of the programs matching PROG
#   CASE        when no program matches: the cases matching CASE in every
#               program (e.g. 'test_rnr*')
# A selection that runs nothing is one failure.
set -u
# shellcheck source=scripts/lib/results.sh
. "$(dirname "$0")/../../scripts/lib/results.sh"

pattern=
if [ "${1:-}" = -t ]; then
	pattern=${2-}
	shift 2 || exit 2
fi

# The program and case globs of the selection.
prog_glob='' case_glob=''
if [[ $pattern == */* ]]; then
	prog_glob=${pattern%%/*} case_glob=${pattern#*/}
elif [ -n "$pattern" ]; then
	for prog in "$@"; do
		name=$(basename "$prog")
		if results_match "$pattern" "$name" "${name#test_}"; then
			prog_glob=$pattern
			break
		fi
	done
	[ -n "$prog_glob" ] || case_glob=$pattern
fi

out=$(mktemp /tmp/kite-host.XXXXXX) || exit 1
res=$(mktemp /tmp/kite-host-res.XXXXXX) || exit 1
trap 'rm -f "$out" "$res"' EXIT

total_pass=0 total_fail=0 total_skip=0
for prog in "$@"; do
	name=$(basename "$prog")
	results_match "$prog_glob" "$name" "${name#test_}" || continue
	KITE_CMOCKA_FILTER=$case_glob CMOCKA_MESSAGE_OUTPUT=TAP \
		timeout 300 "$prog" >"$out" 2>&1
	rc=$?
	# TAP to result lines; a failure's detail is the "# ..." lines after it.
	plan=$(awk -v p="$name" '
		function flush() {
			if (failed != "") print "FAIL " p "/" failed ": " (why != "" ? why : "failed")
			failed = ""; why = ""
		}
		/^1\.\.[0-9]+/ { sub(/^1\.\./, ""); plan += $0 + 0; next }
		/^not ok [0-9]+ # *SKIP/ {
			flush(); sub(/^not ok [0-9]+ # *SKIP */, "")
			print "skip " p "/" $0 ": skipped"; next
		}
		/^not ok [0-9]+/ { flush(); sub(/^not ok [0-9]+ *-? */, ""); failed = $0; next }
		/^ok [0-9]+/ { flush(); sub(/^ok [0-9]+ *-? */, ""); print "ok " p "/" $0; next }
		/^# / && failed != "" { sub(/^# /, ""); why = why (why != "" ? "; " : "") $0 }
		END { flush(); print plan + 0 > "/dev/stderr" }' "$out" 2>&1 >"$res")
	cat "$res"
	results_count "$res"
	seen=$((R_PASS + R_FAIL + R_SKIP))
	if [ "$plan" -eq 0 ] && [ -n "$case_glob" ] && [ "$rc" -eq 0 ]; then
		continue # the selection picked no case of this program
	fi
	if [ "$plan" -eq 0 ] || [ "$seen" -lt "$plan" ]; then
		missing=$((plan > seen ? plan - seen : 1))
		echo "FAIL $name/plan: $missing result(s) missing (exit status $rc)"
		R_FAIL=$((R_FAIL + missing))
	elif [ "$rc" -ne 0 ] && [ "$R_FAIL" -eq 0 ]; then
		echo "FAIL $name/exit: exit status $rc with no failed test"
		R_FAIL=1
	fi
	[ "$R_FAIL" -gt 0 ] && sed 's/^/    /' "$out"
	results_line "# $name" "$R_PASS" "$R_FAIL" "$R_SKIP"
	total_pass=$((total_pass + R_PASS))
	total_fail=$((total_fail + R_FAIL))
	total_skip=$((total_skip + R_SKIP))
done

R_PASS=$total_pass R_FAIL=$total_fail R_SKIP=$total_skip
if [ -z "$pattern" ] && [ $((R_PASS + R_FAIL)) -eq 0 ]; then
	echo "FAIL host: no host test ran"
	R_FAIL=$((R_FAIL + 1))
fi
results_end host "$pattern"
