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

Usage: kite_qtest.py [--qemu PATH] [--abi TABLE] [--logdir DIR]
                     [--keep-logs] [-t GLOB] [-k SUBSTRING] [-v]
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


def run_env(res, envs, env_name, tests, args, tmpdir, logdir):
    """Runs TESTS in one QEMU of environment ENV_NAME; False when any test
    failed or QEMU did not start."""
    try:
        env = envs.Env(args.qemu, env_name, tmpdir, logdir)
    except Exception as e:
        for name, _, _ in tests:
            res.fail(name, "QEMU setup: %s" % e)
        return False
    ok = True
    try:
        for name, _, fn in tests:
            try:
                fn(env)
                res.ok(name)
            except Exception as e:
                res.fail(name, e)
                if args.verbose or not isinstance(e, TestFailure):
                    traceback.print_exc(file=sys.stderr)
                ok = False
            sys.stdout.flush()
            if env.q.proc.poll() is not None:
                res.fail(name, "QEMU exited (%s)" % env.q.stderr_tail())
                return False
    finally:
        env.close()
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
    try:
        for env_name in envs.ENVS:
            tests = [t for t in TESTS if t[1] == env_name and
                     args.filter in t[0] and selected(args.glob, t[0])]
            if tests and not run_env(res, envs, env_name, tests, args,
                                     tmpdir, logdir):
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
