# SPDX-License-Identifier: GPL-2.0
"""Result and summary lines for the Python test runners.

The Python side of scripts/lib/results.sh, with the same lines:
  ok NAME[: DETAIL] / FAIL NAME: DETAIL / skip NAME: WHY   one per check
  retry NAME: WHY    a check that runs again (not a result: the try after
                     it gives NAME's result)
  SUITE: N passed, N failed[, N skipped][, N retried]       the last line
"""

import fnmatch
import sys


def summary_line(suite, passed, failed, skipped=0, retried=0):
    """The summary line of SUITE ("N skipped" and "N retried" only when
    there are some)."""
    line = "%s: %d passed, %d failed" % (suite, passed, failed)
    if skipped:
        line += ", %d skipped" % skipped
    if retried:
        line += ", %d retried" % retried
    return line


def selected(pattern, name):
    """PATTERN (a shell glob, the suite's T=) is empty or matches NAME."""
    return not pattern or fnmatch.fnmatchcase(name, pattern)


class Results:
    """Counts a suite's results; show=False counts without printing."""

    def __init__(self, suite, pattern=""):
        self.suite = suite
        self.pattern = pattern
        self.passed = self.failed = self.skipped = self.retried = 0

    def _say(self, line, show):
        if show:
            print(line, flush=True)

    def ok(self, name, show=True):
        self.passed += 1
        self._say("ok %s" % name, show)

    def fail(self, name, detail, show=True, count=1):
        """One failed check (COUNT failures: e.g. missing planned results)."""
        self.failed += count
        self._say("FAIL %s: %s" % (name, detail), show)

    def skip(self, name, why, show=True):
        self.skipped += 1
        self._say("skip %s: %s" % (name, why), show)

    def retry(self, name, why, show=True):
        """A check that runs again; its last try gives its result."""
        self.retried += 1
        self._say("retry %s: %s" % (name, why), show)

    def add(self, status, name, detail="", show=True):
        """Count a parsed line: STATUS is "ok", "FAIL", "skip" or "retry"."""
        if status == "retry":
            self.retry(name, detail, show)
        elif status == "ok":
            self.ok(name, show)
        elif status == "skip":
            self.skip(name, detail, show)
        else:
            self.fail(name, detail, show)

    def end(self):
        """Print the summary line (a selection that ran nothing is one
        failure) and return the exit status: 1 when anything failed."""
        if self.pattern and self.passed + self.failed + self.skipped == 0:
            self.fail(self.suite, "T='%s' selects no test" % self.pattern)
        print(summary_line(self.suite, self.passed, self.failed,
                           self.skipped, self.retried), flush=True)
        sys.stdout.flush()
        return 1 if self.failed else 0
