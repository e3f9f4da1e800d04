# SPDX-License-Identifier: GPL-2.0-or-later
"""The qtest harness: QEMU with the qtest protocol and QMP, checks, and the
registry of tests.

QEMU runs with -accel qtest; Qemu speaks the qtest protocol (port I/O,
MMIO and guest RAM through readl/writel/b64read/b64write) and QMP.
"""

import base64
import json
import os
import re
import select
import signal
import socket
import subprocess
import time

CMD_TIMEOUT = 10.0      # seconds for one qtest/QMP answer
POLL_TIMEOUT = 5.0      # seconds to wait for the device to do something


class TestFailure(Exception):
    pass


def check(cond, why):
    if not cond:
        raise TestFailure(why)


def check_eq(got, want, what):
    if got != want:
        raise TestFailure("%s: got %s, want %s" % (what, fmt(got), fmt(want)))


def fmt(v):
    return hex(v) if isinstance(v, int) else repr(v)


def die_with_parent():
    """QEMU gets SIGKILL if this script dies (PR_SET_PDEATHSIG)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)
    except Exception:
        pass


# How a sanitizer build of QEMU reports an error on stderr.
SANITIZER_REPORT = re.compile(r"ERROR: (Address|Leak)Sanitizer|"
                              r"runtime error:|SUMMARY: \w+Sanitizer")


class Qemu:
    def __init__(self, qemu_bin, args, tmpdir, logdir, name):
        self.qtest_path = os.path.join(tmpdir, name + ".qtest")
        self.qmp_path = os.path.join(tmpdir, name + ".qmp")
        self.log_path = os.path.join(logdir, name + ".log")
        lq = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        lq.bind(self.qtest_path)
        lq.listen(1)
        lm = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        lm.bind(self.qmp_path)
        lm.listen(1)
        cmd = [qemu_bin, "-machine", "q35", "-accel", "qtest",
               "-nodefaults", "-display", "none", "-m", "256M",
               "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
               "-qtest", "unix:" + self.qtest_path,
               "-qmp", "unix:" + self.qmp_path,
               "-d", "guest_errors", "-D", self.log_path] + args
        self.log = open(self.log_path + ".stderr", "w")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log,
                                     preexec_fn=die_with_parent)
        try:
            self.qs = self._accept(lq)
            self.ms = self._accept(lm)
        finally:
            lq.close()
            lm.close()
        self.qbuf = b""
        self.mbuf = b""
        self._qmp_line()                    # greeting
        self.qmp("qmp_capabilities")

    def _accept(self, lsock):
        deadline = time.time() + CMD_TIMEOUT
        while time.time() < deadline:
            r, _, _ = select.select([lsock], [], [], 0.1)
            if r:
                s, _ = lsock.accept()
                return s
            if self.proc.poll() is not None:
                break
        self.close()
        raise TestFailure("QEMU did not start: %s" % self.stderr_tail())

    def stderr_tail(self):
        try:
            self.log.flush()
            return open(self.log_path + ".stderr").read()[-600:].strip()
        except OSError:
            return ""

    def _readline(self, sock, attr):
        deadline = time.time() + CMD_TIMEOUT
        while b"\n" not in getattr(self, attr):
            left = deadline - time.time()
            if left <= 0:
                raise TestFailure("QEMU did not answer in time")
            r, _, _ = select.select([sock], [], [], left)
            if not r:
                continue
            data = sock.recv(65536)
            if not data:
                raise TestFailure("QEMU closed the connection: %s" %
                                  self.stderr_tail())
            setattr(self, attr, getattr(self, attr) + data)
        buf = getattr(self, attr)
        line, rest = buf.split(b"\n", 1)
        setattr(self, attr, rest)
        return line.decode()

    def cmd(self, line):
        self.qs.sendall((line + "\n").encode())
        while True:
            resp = self._readline(self.qs, "qbuf")
            if resp.startswith("IRQ"):
                continue
            if not resp.startswith("OK"):
                raise TestFailure("qtest '%s': %s" % (line, resp))
            return resp[3:].strip()

    def _qmp_line(self):
        return json.loads(self._readline(self.ms, "mbuf"))

    def qmp(self, command, **args):
        msg = {"execute": command}
        if args:
            msg["arguments"] = args
        self.ms.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            r = self._qmp_line()
            if "return" in r:
                return r["return"]
            if "error" in r:
                raise TestFailure("QMP %s: %s" % (command, r["error"]))

    # PIO / MMIO / RAM
    def outl(self, port, val):
        self.cmd("outl 0x%x 0x%x" % (port, val))

    def inl(self, port):
        return int(self.cmd("inl 0x%x" % port), 16)

    def readl(self, addr):
        return int(self.cmd("readl 0x%x" % addr), 16)

    def writel(self, addr, val):
        self.cmd("writel 0x%x 0x%x" % (addr, val))

    def writeq(self, addr, val):
        self.cmd("writeq 0x%x 0x%x" % (addr, val))

    def writew(self, addr, val):
        self.cmd("writew 0x%x 0x%x" % (addr, val))

    def read(self, addr, size):
        return base64.b64decode(self.cmd("b64read 0x%x 0x%x" % (addr, size)))

    def write(self, addr, data):
        if not data:
            return
        self.cmd("b64write 0x%x 0x%x %s" % (
            addr, len(data), base64.b64encode(data).decode()))

    def memset(self, addr, size, val=0):
        self.cmd("memset 0x%x 0x%x 0x%x" % (addr, size, val))

    def close(self):
        for s in ("qs", "ms"):
            sock = getattr(self, s, None)
            if sock:
                sock.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()

    def sanitizer_reports(self):
        """The lines of QEMU's stderr in which ASan, LSan or UBSan reported
        an error (read after close(): LSan reports at exit)."""
        try:
            text = open(self.log_path + ".stderr", errors="replace").read()
        except OSError:
            return []
        return [line for line in text.splitlines()
                if SANITIZER_REPORT.search(line)]

    def guest_errors(self):
        try:
            return open(self.log_path).read()
        except OSError:
            return ""


def wait_for(pred, what, timeout=POLL_TIMEOUT):
    deadline = time.time() + timeout
    while not pred():
        if time.time() > deadline:
            raise TestFailure("timed out waiting for " + what)
        time.sleep(0.002)


def clock_stepper(q, ns):
    """A poll step that advances QEMU's virtual clock by ns nanoseconds."""
    return lambda: q.cmd("clock_step %d" % ns)


# (name, environment, function) in registration order.
TESTS = []


def test(env):
    """Registers a test that runs in the environment (QEMU setup) env."""
    def deco(fn):
        TESTS.append((fn.__name__.replace("test_", "", 1), env, fn))
        return fn
    return deco
