#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Device-level tests of the Kite QEMU model, with no guest OS.

QEMU runs with -accel qtest; the test plays the driver through the qtest
protocol (PCI config space through ports 0xcf8/0xcfc, MMIO and guest RAM
through readl/writel/b64read/b64write) and a QMP monitor (set_link).
MSI-X table entries point into guest RAM, so every interrupt the device
raises is a 4-byte write the test can see.

The device ABI comes from the table abi_gen.py builds from kite_hw.h with
the C compiler (tests/qtest/run.sh builds it first); hw.py packs and
unpacks the structs by field name. The tests live in test_*.py, by topic.

Usage: kite_qtest.py [--qemu PATH] [--qemu-asan PATH] [--abi TABLE]
                     [--logdir DIR] [--keep-logs] [-t GLOB] [-k SUBSTRING]
                     [-v]
--qemu-asan runs the same tests again on an ASan and UBSan build of QEMU,
named asan/NAME, and after each QEMU of that pass asan/sanitizer/ENV fails
on any sanitizer report on its stderr (a skip when the binary is missing;
-t 'asan/GLOB' runs that pass only).
-t runs the tests whose name (as printed) matches the shell glob GLOB, -k
those whose name contains SUBSTRING; a selection that runs nothing fails.
Prints one line per test and, last, "qtest: N passed, N failed".
"""

import argparse
import importlib
import os
import shutil
import signal
import sys
import tempfile
import traceback

sys.dont_write_bytecode = True     # no __pycache__ in the source tree

import abi_gen  # noqa: E402
import hw  # noqa: E402
from harness import TESTS, TestFailure  # noqa: E402

sys.path.insert(0, os.path.join(abi_gen.REPO, "scripts", "lib"))
from results import Results, selected  # noqa: E402

# In the order they run (within each QEMU environment).
TEST_MODULES = ("test_device", "test_admin", "test_limits", "test_errors",
                "test_eth", "test_rdma_objects", "test_datapath",
                "test_wire", "test_dbrec", "test_mem_mgt", "test_mem_wqe",
                "test_hostile", "test_hostile_guest", "test_srq",
                "test_mcast")


# The names of the sanitizer pass's results start with this.
ASAN_PREFIX = "asan/"


def run_env(res, envs, env_name, tests, args, tmpdir, logdir, qemu,
            prefix=""):
    """Runs TESTS in one QEMU (binary QEMU) of environment ENV_NAME, their
    results named PREFIX + name; False when any test failed or QEMU did
    not start. With a PREFIX (the sanitizer pass) one more result,
    PREFIX + "sanitizer/" + ENV_NAME, fails when QEMU's stderr holds a
    sanitizer report."""
    try:
        env = envs.Env(qemu, env_name, tmpdir, logdir)
    except Exception as e:
        for name, _, _ in tests:
            res.fail(prefix + name, "QEMU setup: %s" % e)
        return False
    ok = True
    try:
        for name, _, fn in tests:
            try:
                fn(env)
                res.ok(prefix + name)
            except Exception as e:
                res.fail(prefix + name, e)
                if args.verbose or not isinstance(e, TestFailure):
                    traceback.print_exc(file=sys.stderr)
                ok = False
            sys.stdout.flush()
            if env.q.proc.poll() is not None:
                res.fail(prefix + name,
                         "QEMU exited (%s)" % env.q.stderr_tail())
                ok = False
                break
    finally:
        env.close()
    if prefix:
        reports = env.q.sanitizer_reports()
        if reports:
            res.fail(prefix + "sanitizer/" + env_name,
                     "%d report line(s); first: %s" %
                     (len(reports), reports[0]))
            ok = False
        else:
            res.ok(prefix + "sanitizer/" + env_name)
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qemu", default=os.path.join(abi_gen.REPO, "out",
                                                   "qemu-system-x86_64"))
    ap.add_argument("--abi", default=os.path.join(abi_gen.DEFAULT_OUT,
                                                  abi_gen.TABLE),
                    help="the ABI table abi_gen.py built")
    ap.add_argument("--logdir", default=os.path.join(abi_gen.REPO, "out",
                                                     "logs", "qtest"))
    ap.add_argument("--qemu-asan", default="",
                    help="run every test a second time on this ASan and "
                    "UBSan build of QEMU (results asan/NAME); a skip when "
                    "it does not exist")
    ap.add_argument("--keep-logs", action="store_true")
    ap.add_argument("-t", dest="glob", default="",
                    help="run the tests whose name matches this shell glob")
    ap.add_argument("-k", dest="filter", default="",
                    help="run the tests whose name contains this string")
    ap.add_argument("-v", dest="verbose", action="store_true")
    args = ap.parse_args()
    # A timeout's SIGTERM unwinds normally so QEMU processes and the
    # temporary directory are cleaned up.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(124))

    res = Results("qtest", args.glob or args.filter)
    try:
        hw.load(args.abi)
    except hw.AbiTableError as e:
        res.fail("abi", e)
        return res.end()
    # The tests and their helpers read the ABI when they are imported.
    for module in TEST_MODULES:
        importlib.import_module(module)
    envs = importlib.import_module("device")

    # Sockets in a private temporary directory (short paths); QEMU's guest
    # error log and stderr under out/logs/qtest, kept when a test fails.
    tmpdir = tempfile.mkdtemp(prefix="kite-qtest-")
    logdir = args.logdir
    shutil.rmtree(logdir, ignore_errors=True)
    os.makedirs(logdir)
    keep = args.keep_logs
    passes = [(args.qemu, "", args.glob)]
    if args.glob.startswith(ASAN_PREFIX):
        passes = []
    if args.qemu_asan and os.access(args.qemu_asan, os.X_OK):
        glob = args.glob
        if glob.startswith(ASAN_PREFIX):
            glob = glob[len(ASAN_PREFIX):]
        passes.append((args.qemu_asan, ASAN_PREFIX, glob))
    elif args.qemu_asan:
        res.skip(ASAN_PREFIX + "*", "no sanitizer build of QEMU at %s "
                 "(make qemu-fuzz; make check builds it with "
                 "KITE_CHECK_SANITIZERS=1)" % args.qemu_asan)
    try:
        for qemu, prefix, glob in passes:
            for env_name in envs.ENVS:
                tests = [t for t in TESTS if t[1] == env_name and
                         args.filter in t[0] and selected(glob, t[0])]
                # Each pass its own sockets and logs.
                ptmp = os.path.join(tmpdir, prefix)
                plog = os.path.join(logdir, prefix)
                os.makedirs(ptmp, exist_ok=True)
                os.makedirs(plog, exist_ok=True)
                if tests and not run_env(res, envs, env_name, tests, args,
                                         ptmp, plog, qemu, prefix):
                    keep = True
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
        if keep:
            print("qtest: QEMU logs in %s" % logdir)
        else:
            shutil.rmtree(logdir, ignore_errors=True)
    return res.end()


if __name__ == "__main__":
    sys.exit(main())
