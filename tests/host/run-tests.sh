#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# run-tests.sh TEST...: run cmocka test programs with TAP output and count
# the results ourselves. Prints one line per program, the full output of any
# program that failed, and as the last line
#   host: N passed, N failed[, N skipped]
# A program that crashes, hangs (300 s; the engine simulation alone moves
# about 1 GB) or reports fewer results than its TAP plan ("1..N") counts the
# missing results as failures. Exit status 1 when
# anything failed, or when no test ran at all.
set -u

total_pass=0
total_fail=0
total_skip=0

for prog in "$@"; do
	name=$(basename "$prog")
	out=$(CMOCKA_MESSAGE_OUTPUT=TAP timeout 300 "$prog" 2>&1)
	rc=$?
	# plan, passed, failed, skipped
	read -r plan pass fail skip < <(printf '%s\n' "$out" | awk '
		/^1\.\.[0-9]+/ { sub(/^1\.\./, ""); plan += $0 + 0; next }
		/^(not )?ok [0-9]+/ {
			if ($0 ~ /# *SKIP/) skip++
			else if ($0 ~ /^not ok/) fail++
			else pass++
		}
		END { printf "%d %d %d %d\n", plan, pass, fail, skip }')
	seen=$((pass + fail + skip))
	if [ "$plan" -eq 0 ] || [ "$seen" -lt "$plan" ]; then
		missing=$((plan > seen ? plan - seen : 1))
		fail=$((fail + missing))
		echo "$name: $missing result(s) missing (exit status $rc)"
	elif [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		fail=1
		echo "$name: exit status $rc with no failed test"
	fi
	line="$name: $pass passed, $fail failed"
	[ "$skip" -gt 0 ] && line="$line, $skip skipped"
	if [ "$fail" -gt 0 ]; then
		printf '%s\n' "$out" | sed "s/^/$name: /"
	fi
	echo "$line"
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))
done

if [ $((total_pass + total_fail)) -eq 0 ]; then
	echo "no host test ran"
	total_fail=$((total_fail + 1))
fi
line="host: $total_pass passed, $total_fail failed"
[ "$total_skip" -gt 0 ] && line="$line, $total_skip skipped"
echo "$line"
[ "$total_fail" -eq 0 ]
