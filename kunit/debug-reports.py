#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# debug-reports.py CONSOLE CONFIG
# Called by scripts/kunit.sh after the KUnit kernel ran. Judges the debug
# kernel from its raw console (CONSOLE) and its .config (CONFIG) and prints
# result lines in kunit-summary.py's EXTRA format ("ok NAME: DETAIL" or
# "FAIL NAME: DETAIL", then indented detail lines):
#   kunit/debug-kernel   every checker the kunitconfig asks for is built in
#                        and the console shows the ones that announce
#                        themselves (KASAN, lockdep) started
#   kunit/debug-reports  no KASAN, UBSAN, lockdep, sleep-in-atomic,
#                        list-corruption, debug-objects, warning, BUG or
#                        oops report anywhere in the console
#   kunit/kmemleak       the scan of kunit/leakcheck-init.c ran after the
#                        suites and found no unreferenced object
import re
import sys

console_path, config_path = sys.argv[1], sys.argv[2]

CHECKERS = ["KASAN", "UBSAN", "PROVE_LOCKING", "DEBUG_ATOMIC_SLEEP",
            "DEBUG_LIST", "DEBUG_OBJECTS", "DEBUG_KMEMLEAK"]
# Lines a checker prints when it starts.
BANNERS = {
    "KASAN": re.compile(r"KernelAddressSanitizer initialized"),
    "PROVE_LOCKING": re.compile(r"Lock dependency validator"),
}
# The first line of every report the checkers (and the kernel) print.
REPORT = re.compile(
    r"BUG: KASAN:|UBSAN:|"
    r"WARNING: (possible|inconsistent|suspicious|bad unlock|held lock)|"
    r"possible circular locking|inconsistent lock state|"
    r"DEBUG_LOCKS_WARN_ON|lockdep is turned off|"
    r"BUG: (sleeping function|scheduling while atomic|spinlock|"
    r"workqueue leaked|unable to handle|kernel NULL)|"
    r"list_(add|del) corruption|ODEBUG:|"
    r"WARNING: CPU:|kernel BUG at|Oops|general protection fault|"
    r"Kernel panic|refcount_t:|kmemleak: (Cannot|Kernel memory leak "
    r"detector disabled|Early log buffer exceeded)")
# Leaks of KUnit itself, not counted: with a filter (kunit.filter_glob)
# Linux 6.1's KUnit runs copies of the suites and frees them without the
# log buffers kunit_debugfs_create_suite gave each case.
KNOWN_LEAK = re.compile(r"kunit_debugfs_create_suite")
# The leak check's own lines (kunit/leakcheck-init.c).
LEAK_LINE = re.compile(r"kite-leakcheck: (.*)")
LEAK_END = re.compile(r"kite-leakcheck: end leaks=(-?\d+)")


def result(ok, name, detail, lines=()):
    print(("ok " if ok else "FAIL ") + name + ": " + detail)
    for line in list(lines)[:40]:
        print("    " + line)


try:
    with open(console_path, errors="replace") as f:
        console = f.read().splitlines()
except OSError:
    console = []
try:
    with open(config_path) as f:
        config = f.read()
except OSError:
    config = ""

missing = [c for c in CHECKERS
           if not re.search(r"^CONFIG_%s=y$" % c, config, re.M)]
silent = [c for c, rx in BANNERS.items()
          if c not in missing and not any(rx.search(l) for l in console)]
if not console:
    result(False, "kunit/debug-kernel", "no console log at " + console_path)
elif missing or silent:
    result(False, "kunit/debug-kernel",
           "not built in: %s; no start banner: %s" %
           (" ".join(missing) or "none", " ".join(silent) or "none"))
else:
    result(True, "kunit/debug-kernel", " ".join(CHECKERS) + " active")

reports = [l for l in console if REPORT.search(l)]
if reports:
    # Each report with the lines that follow it, for the log.
    first = console.index(reports[0])
    result(False, "kunit/debug-reports",
           "%d report line(s) in %s" % (len(reports), console_path),
           console[first:first + 30])
elif console:
    result(True, "kunit/debug-reports", "none in %d console lines"
           % len(console))

ends = [int(m.group(1)) for m in map(LEAK_END.search, console) if m]
leak_lines = [m.group(1) for m in map(LEAK_LINE.search, console) if m]
# One record per unreferenced object: its line and the lines under it.
records = []
for line in leak_lines:
    if line.startswith("unreferenced object"):
        records.append([line])
    elif records and line.startswith(" "):
        records[-1].append(line)
known = [r for r in records if any(KNOWN_LEAK.search(l) for l in r)]
ours = [l for r in records if r not in known for l in r]
if known:
    print("    kunit/kmemleak: %d unreferenced object(s) of KUnit's own "
          "(%s), not counted" % (len(known), KNOWN_LEAK.pattern))
if not ends:
    result(False, "kunit/kmemleak",
           "the leak check did not run to its end (no 'end' line)",
           leak_lines)
elif ends[-1] < 0:
    result(False, "kunit/kmemleak", "the scan failed", leak_lines)
elif ends[-1] != len(records):
    result(False, "kunit/kmemleak", "the report says %d object(s), %d "
           "read" % (ends[-1], len(records)), leak_lines)
elif ours:
    result(False, "kunit/kmemleak",
           "%d unreferenced object(s) after the suites"
           % (len(records) - len(known)), ours)
else:
    result(True, "kunit/kmemleak", "no unreferenced object after the suites")
