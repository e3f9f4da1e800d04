#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# kunit-summary.py JSON LOG RC "SUITE..." ["DEVICE SUITE..." [SELECTION
#                  [EXTRA]]]
# Called by scripts/kunit.sh (SELECTION: the filter glob kunit.py was given,
# if any; a selection that runs nothing says so; EXTRA: a file of result
# lines of kunit.sh's own checks, "ok NAME" or "FAIL NAME: DETAIL", which
# count like test cases).
# Counts the results kunit.py parsed (--json) and adds a failure for: a
# kernel that did not configure/build/boot, a parse error, a timeout, a
# non-zero kunit.py exit status with no failed test, each expected suite
# that did not run, each device suite whose cases were all skipped, and a
# run with no test at all. Prints a line per suite and, as the last line,
# "kunit: N passed, N failed, N skipped"; on failure also the diagnostics
# of the failed tests. Exit status 1 when anything failed.
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "scripts", "lib"))
from results import summary_line  # noqa: E402

json_path, log_path, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
expected = sys.argv[4].split() if len(sys.argv) > 4 else []
# Suites that need the attached device: all-skipped means it never probed.
need_device = sys.argv[5].split() if len(sys.argv) > 5 else []
selection = sys.argv[6] if len(sys.argv) > 6 else ""
extra_path = sys.argv[7] if len(sys.argv) > 7 else ""
passed = failed = skipped = 0
problems = []
suites = []

def leaves(group):
    """Yield the status of every test case under a JSON group."""
    for case in group.get("test_cases", []):
        yield case["name"], case["status"]
    for sub in group.get("sub_groups", []):
        for name, status in leaves(sub):
            yield sub["name"] + "." + name, status

try:
    with open(json_path) as f:
        root = json.load(f)
except (OSError, ValueError):
    root = {}

groups = root.get("sub_groups", [])
# Test cases at the top level (no suite) count too.
if root.get("test_cases"):
    groups = groups + [{"name": "(top level)", "test_cases": root["test_cases"]}]
for g in groups:
    p = f = s = 0
    for name, status in leaves(g):
        if status == "PASS":
            p += 1
        elif status == "SKIP":
            s += 1
        else:
            f += 1
            problems.append("%s.%s: %s" % (g["name"], name, status))
    suites.append((g["name"], p, f, s))
    passed += p
    failed += f
    skipped += s

# kunit.sh's own checks (the sparse and W=1 build of the test sources).
extra = []
if extra_path and os.path.exists(extra_path):
    with open(extra_path, errors="replace") as f:
        extra = [line.rstrip("\n") for line in f]
for line in extra:
    if line.startswith("ok "):
        passed += 1
    elif line.startswith("FAIL "):
        failed += 1

log = open(log_path, errors="replace").read()
m = re.findall(r"Testing complete\. Ran \d+ tests:([^\n]*)", log)
if m:
    counts = dict((k, int(v)) for k, v in re.findall(r"(\w+): (\d+)", m[-1]))
    if counts.get("crashed", 0):
        problems.append("kunit.py: %d test(s) crashed" % counts["crashed"])
    if counts.get("errors", 0):
        problems.append("kunit.py: %d parse error(s)" % counts["errors"])
        failed += counts["errors"]
if re.search(r"timed out after \d+ seconds", log):
    problems.append("the test run timed out")
    failed += 1
booted = "Starting KUnit Kernel" in log
if not booted:
    problems.append("kunit.py did not boot a kernel (configuration or build failed)")
    failed += 1
    expected = []
ran = {name for name, _, _, _ in suites}
for name in expected:
    if name not in ran:
        problems.append("suite %s (defined in the driver) did not run" % name)
        failed += 1
for name, p, f, s in suites:
    if name in need_device and p == 0 and f == 0 and s > 0:
        problems.append("%s: every case skipped although -device kite is "
                        "attached (did the driver probe it?)" % name)
        failed += 1
if passed + failed + skipped == 0:
    if selection:
        problems.append("kunit: T='%s' selects no test" % selection)
    else:
        problems.append("no test ran")
    failed += 1
if rc != 0 and failed == 0:
    problems.append("kunit.py exited with status %d" % rc)
    failed += 1

for name, p, f, s in suites:
    print("  " + summary_line(name, p, f, s))
for line in extra:
    print(line)
for line in problems:
    print("  FAIL %s" % line)
if failed:
    # The diagnostics of each failed or crashed test (kunit.py prints them
    # just before "[FAILED] name"), and build, config or boot errors.
    stamp = re.compile(r"^\[\d\d:\d\d:\d\d\] ")
    shown, block = [], []
    for line in log.splitlines():
        text = stamp.sub("", line).rstrip()
        if re.match(r"\[(FAILED|CRASHED)\] ", text):
            shown += block + [text]
            block = []
        elif re.match(r"(\[(PASSED|SKIPPED)\] |=+ )", text):
            block = []
        elif re.search(r"error:|Error \d|Missing:|Kernel panic|BUG:|"
                       r"timed out|Traceback|Could not|not found", text):
            shown.append(text)
        elif text.startswith(("# ", "    ", "Expected ")):
            block.append(text)
    for text in shown[:40]:
        print("  | " + text[:200])
    print("kunit.sh: see %s" % log_path)
print(summary_line("kunit", passed, failed, skipped))
sys.exit(1 if failed else 0)
