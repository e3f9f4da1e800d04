#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Device-level tests of the Kite QEMU model, with no guest OS.

QEMU runs with -accel qtest; the test plays the driver through the qtest
protocol (PCI config space through ports 0xcf8/0xcfc, MMIO and guest RAM
through readl/writel/b64read/b64write) and a QMP monitor (set_link).
MSI-X table entries point into guest RAM, so every interrupt the device
raises is a 4-byte write the test can see.

Usage: kite_qtest.py [--qemu PATH] [--logdir DIR] [--keep-logs] [-t GLOB]
                     [-k SUBSTRING] [-v]
-t runs the tests whose name (as printed) matches the shell glob GLOB, -k
those whose name contains SUBSTRING; a selection that runs nothing fails.
Prints one line per test and, last, "qtest: N passed, N failed".
"""

import argparse
import base64
import json
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "scripts", "lib"))
from results import Results, selected, summary_line  # noqa: E402

import abi_gen  # noqa: E402
import hw  # noqa: E402
from hw import C, K  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

CMD_TIMEOUT = 10.0      # seconds for one qtest/QMP answer
POLL_TIMEOUT = 5.0      # seconds to wait for the device to do something


# --------------------------------------------------------------------------
# Constants: the table abi_gen.py builds from kite_hw.h with the compiler.
# --------------------------------------------------------------------------

try:
    hw.load(os.path.join(abi_gen.DEFAULT_OUT, abi_gen.TABLE))
except hw.AbiTableError as e:
    print("FAIL abi: %s" % e)
    print(summary_line("qtest", 0, 1))
    sys.exit(1)

# --------------------------------------------------------------------------
# QEMU process with qtest and QMP
# --------------------------------------------------------------------------


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
        self.cmd("b64write 0x%x 0x%x %s" % (addr, len(data),
                                             base64.b64encode(data).decode()))

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

    def guest_errors(self):
        try:
            return open(self.log_path).read()
        except OSError:
            return ""


# --------------------------------------------------------------------------
# A kite PCI function programmed like a driver would
# --------------------------------------------------------------------------

PCI_CFG_ADDR = 0xcf8
PCI_CFG_DATA = 0xcfc
MSIX_SCRATCH = 0x0f00000    # guest RAM that MSI-X messages are written to


class Kite:
    """One kite device at 00:DEV.0 with BARs at mmio_base."""

    def __init__(self, q, dev, mmio_base, ram_base):
        self.q = q
        self.dev = dev
        self.db = mmio_base                   # BAR2: 1 MiB
        self.regs = mmio_base + 0x100000      # BAR0: 4 KiB
        self.msix_bar = mmio_base + 0x200000  # BAR4
        self.ram = ram_base                   # 1 MiB of guest RAM for rings
        # AQ up to 1024 x 128 B, ACQ up to 1024 x 32 B.
        self.aq = ram_base
        self.acq = ram_base + 0x20000
        self.aeq = ram_base + 0x30000
        self.outbuf = ram_base + 0x40000
        self.eth_tx = ram_base + 0x50000
        self.eth_rx = ram_base + 0x51000
        self.eth_buf = ram_base + 0x60000       # TX +0, RX +0x40000
        self.eq_rings = ram_base + 0xc0000
        self.scratch = MSIX_SCRATCH + dev * 0x100
        self.cmd_id = 0

    # config space
    def cfg_addr(self, off):
        return 0x80000000 | (self.dev << 11) | (off & 0xfc)

    def cfg_read32(self, off):
        self.q.outl(PCI_CFG_ADDR, self.cfg_addr(off))
        return self.q.inl(PCI_CFG_DATA)

    def cfg_write32(self, off, val):
        self.q.outl(PCI_CFG_ADDR, self.cfg_addr(off))
        self.q.outl(PCI_CFG_DATA, val)

    def bar_size(self, bar):
        off = 0x10 + 4 * bar
        orig = self.cfg_read32(off)
        self.cfg_write32(off, 0xffffffff)
        lo = self.cfg_read32(off)
        self.cfg_write32(off, orig)
        size_lo = lo & ~0xf
        if (lo & 0x6) == 0x4:           # 64-bit
            orig_hi = self.cfg_read32(off + 4)
            self.cfg_write32(off + 4, 0xffffffff)
            hi = self.cfg_read32(off + 4)
            self.cfg_write32(off + 4, orig_hi)
            mask = (hi << 32) | size_lo
            return ((~mask) & 0xffffffffffffffff) + 1, lo & 0xf
        return ((~size_lo) & 0xffffffff) + 1, lo & 0xf

    def setup_pci(self):
        for bar, addr in ((0, self.regs), (2, self.db)):
            self.cfg_write32(0x10 + 4 * bar, addr & 0xffffffff)
            self.cfg_write32(0x14 + 4 * bar, addr >> 32)
        self.cfg_write32(0x20, self.msix_bar)
        self.cfg_write32(0x04, 0x6)         # memory + bus master
        cap = self.find_cap(0x11)
        check(cap is not None, "no MSI-X capability")
        ctrl = self.cfg_read32(cap)
        nvec = ((ctrl >> 16) & 0x7ff) + 1
        table = self.cfg_read32(cap + 4)
        table_off = table & ~7
        for v in range(nvec):
            e = self.msix_bar + table_off + 16 * v
            self.q.writel(e, self.scratch + 4 * v)
            self.q.writel(e + 4, 0)
            self.q.writel(e + 8, 0x4b000000 | v)
            self.q.writel(e + 12, 0)        # unmasked
        self.cfg_write32(cap, ctrl | (1 << 31))     # MSI-X enable
        self.clear_irqs()

    def find_cap(self, cap_id):
        if not (self.cfg_read32(0x04) >> 16) & 0x10:
            return None
        ptr = self.cfg_read32(0x34) & 0xff
        while ptr:
            v = self.cfg_read32(ptr)
            if v & 0xff == cap_id:
                return ptr
            ptr = (v >> 8) & 0xff
        return None

    # interrupts
    def clear_irqs(self):
        self.q.memset(self.scratch, 4 * C.KITE_MSIX_NUM, 0)

    def irq_fired(self, vector):
        return self.q.readl(self.scratch + 4 * vector) == 0x4b000000 | vector

    def take_irq(self, vector):
        fired = self.irq_fired(vector)
        self.q.writel(self.scratch + 4 * vector, 0)
        return fired

    # registers
    def rd(self, reg):
        return self.q.readl(self.regs + reg)

    def wr(self, reg, val):
        self.q.writel(self.regs + reg, val)

    def status(self):
        return self.rd(C.KITE_REG_DEV_STATUS)

    def reset(self):
        self.wr(C.KITE_REG_DEV_CTRL, C.KITE_CTRL_RESET)
        self.aq_pi = 0
        self.acq_ci = 0
        self.aeq_ci = 0

    def configure(self, aq_log=3, acq_log=3, aeq_log=3, aq=None, acq=None,
                  aeq=None):
        aq = self.aq if aq is None else aq
        acq = self.acq if acq is None else acq
        aeq = self.aeq if aeq is None else aeq
        self.aq_log, self.acq_log, self.aeq_log = aq_log, acq_log, aeq_log
        self.q.memset(self.ram, 0x40000, 0)
        for base_reg, depth_reg, addr, log in (
                (C.KITE_REG_AQ_BASE_LO, C.KITE_REG_AQ_LOG_DEPTH, aq, aq_log),
                (C.KITE_REG_ACQ_BASE_LO, C.KITE_REG_ACQ_LOG_DEPTH, acq,
                 acq_log),
                (C.KITE_REG_AEQ_BASE_LO, C.KITE_REG_AEQ_LOG_DEPTH, aeq,
                 aeq_log)):
            self.wr(base_reg, addr & 0xffffffff)
            self.wr(base_reg + 4, addr >> 32)
            self.wr(depth_reg, log)

    def enable(self, **kw):
        self.reset()
        self.configure(**kw)
        self.wr(C.KITE_REG_DEV_CTRL, C.KITE_CTRL_ENABLE)
        return self.status()

    def bring_up(self, **kw):
        st = self.enable(**kw)
        check(st & C.KITE_STATUS_READY and not st & C.KITE_STATUS_FATAL,
              "device not READY after enable (status 0x%x fatal %u)" %
              (st, self.rd(C.KITE_REG_FATAL_CODE)))

    # admin queue
    def submit(self, opcode, payload=b"", uctx=0, flags=0, ring=True):
        """Writes one command at the producer index; returns its cmd_id."""
        self.cmd_id = (self.cmd_id + 1) & 0xffff
        cmd = struct.pack("<BBHI", opcode, flags, self.cmd_id, uctx)
        cmd += payload.ljust(C.KITE_AQ_PAYLOAD_SIZE, b"\0")
        slot = self.aq_pi % (1 << self.aq_log)
        self.q.write(self.aq + slot * C.KITE_AQ_CMD_SIZE, cmd)
        self.aq_pi = (self.aq_pi + 1) & 0xffffffff
        if ring:
            self.wr(C.KITE_REG_AQ_DB, self.aq_pi)
        return self.cmd_id

    def wait_cqe(self, timeout=POLL_TIMEOUT):
        """Next ACQ entry: (cmd_id, status, syndrome, out[6])."""
        slot = self.acq_ci % (1 << self.acq_log)
        phase = ((self.acq_ci >> self.acq_log) & 1) ^ 1
        addr = self.acq + slot * C.KITE_AQ_CQE_SIZE
        deadline = time.time() + timeout
        while True:
            raw = self.q.read(addr, C.KITE_AQ_CQE_SIZE)
            if raw[3] & C.KITE_ACQE_PHASE == phase:
                break
            if time.time() > deadline:
                raise TestFailure("no admin completion (status 0x%x fatal %u)"
                                  % (self.status(),
                                     self.rd(C.KITE_REG_FATAL_CODE)))
            time.sleep(0.001)
        self.acq_ci += 1
        cmd_id, status, flags, syndrome = struct.unpack_from("<HBBI", raw)
        out = struct.unpack_from("<6I", raw, 8)
        return cmd_id, status, syndrome, out

    def exec(self, opcode, payload=b"", uctx=0, flags=0):
        """Runs one command; returns (status, out)."""
        cid = self.submit(opcode, payload, uctx, flags)
        got_id, status, _, out = self.wait_cqe()
        check_eq(got_id, cid, "cmd_id echoed")
        return status, out

    def exec_ok(self, opcode, payload=b"", uctx=0):
        status, out = self.exec(opcode, payload, uctx)
        check_eq(status, C.KITE_STS_OK, "status of opcode 0x%x" % opcode)
        return out

    def query(self, opcode, length, buflen=None, port=0):
        buflen = length if buflen is None else buflen
        self.q.memset(self.outbuf, 0x1000, 0xee)
        payload = struct.pack("<QII", self.outbuf, buflen, 0) + bytes([port])
        status, out = self.exec(opcode, payload)
        return status, out, self.q.read(self.outbuf, length)

    # async EQ
    def eqe(self, index):
        slot = index % (1 << self.aeq_log)
        raw = self.q.read(self.aeq + slot * 16, 16)
        data, data2, _, _, typ, flags = struct.unpack("<IIIHBB", raw)
        return data, data2, typ, flags

    def eq_doorbell(self, eqn, ci, arm):
        val = (ci << C.KITE_DB_INDEX_SHIFT) | \
            ((C.KITE_DB_EQ_ARM if arm else 0) << C.KITE_DB_FLAGS_SHIFT) | eqn
        self.q.writeq(self.db + C.KITE_DB_EQ, val)


# struct kite_stats: counters after the eight u32 object counts.
STATS_SIZE = 240
STATS_U64 = ["eth_tx_packets", "eth_tx_bytes", "eth_rx_packets",
             "eth_rx_bytes", "eth_rx_dropped", "eth_tx_errors",
             "roce_tx_packets", "roce_rx_packets", "roce_retransmits",
             "roce_icrc_errors", "eq_events_dropped", "db_rejected",
             "roce_tx_bytes", "roce_rx_bytes", "roce_naks_sent",
             "roce_naks_rcvd", "roce_rnr_naks_sent", "roce_rnr_naks_rcvd",
             "roce_dup_requests", "roce_rx_dropped", "roce_timeouts",
             "wire_dropped"]


def stats(d):
    """QUERY_STATS as a dict of the u64 counters."""
    st, _, raw = d.query(C.KITE_CMD_QUERY_STATS, STATS_SIZE)
    check_eq(st, C.KITE_STS_OK, "QUERY_STATS status")
    return dict(zip(STATS_U64, struct.unpack_from("<%dQ" % len(STATS_U64),
                                                  raw, 32)))


def destroy_payload(handle):
    return struct.pack("<II", handle, 0)


def wait_for(pred, what, timeout=POLL_TIMEOUT):
    deadline = time.time() + timeout
    while not pred():
        if time.time() > deadline:
            raise TestFailure("timed out waiting for " + what)
        time.sleep(0.002)


# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------

TESTS = []


def test(env):
    """Registers a test that runs in the environment (QEMU setup) env."""
    def deco(fn):
        TESTS.append((fn.__name__.replace("test_", "", 1), env, fn))
        return fn
    return deco


MAC_A = "52:54:00:4b:54:01"
MAC_B = "52:54:00:4b:54:02"
MAC_C = "52:54:00:4b:54:03"


def mac_bytes(mac):
    return bytes(int(x, 16) for x in mac.split(":"))


ENVS = {
    # Two kites on one hub (frames of one reach the other) and one kite
    # without a netdev.
    "main": (["-netdev", "hubport,id=h0,hubid=0",
              "-netdev", "hubport,id=h1,hubid=0",
              "-device", "kite,id=k0,netdev=h0,mac=%s,addr=04.0" % MAC_A,
              "-device", "kite,id=k1,netdev=h1,mac=%s,addr=05.0,"
              "x-wire-seed=7" % MAC_B,
              "-device", "kite,id=k2,mac=%s,addr=06.0" % MAC_C],
             [4, 5, 6]),
    "fault": (["-device", "kite,id=k0,addr=04.0,x-fault-opcode=%d" %
               C.KITE_CMD_ALLOC_PD],
              [4]),
    "fault_status": (["-device", "kite,id=k0,addr=04.0,x-fault-opcode=%d,"
                      "x-fault-status=%d" % (C.KITE_CMD_QUERY_PORT,
                                           C.KITE_STS_BUSY)],
                     [4]),
    "hang": (["-device", "kite,id=k0,addr=04.0,x-fault-hang-opcode=%d" %
              C.KITE_CMD_ALLOC_UCTX],
             [4]),
}


@test("main")
def test_pci_ids(env):
    d = env.dev[0]
    v = d.cfg_read32(0x00)
    check_eq(v & 0xffff, C.KITE_PCI_VENDOR_ID, "vendor id")
    check_eq(v >> 16, C.KITE_PCI_DEVICE_ID, "device id")
    v = d.cfg_read32(0x08)
    check_eq(v & 0xff, C.KITE_PCI_REVISION, "revision")
    check_eq(v >> 16, C.KITE_PCI_CLASS, "class")
    check_eq((v >> 8) & 0xff, 0, "prog-if")
    v = d.cfg_read32(0x2c)
    check_eq(v & 0xffff, C.KITE_PCI_SUBSYS_VENDOR_ID, "subsystem vendor")
    check_eq(v >> 16, C.KITE_PCI_SUBSYS_ID, "subsystem id")


@test("main")
def test_bars(env):
    d = env.dev[0]
    size, flags = d.bar_size(C.KITE_BAR_REGS)
    check_eq(size, C.KITE_REGS_SIZE, "BAR0 size")
    check_eq(flags & 0x7, 0x4, "BAR0 64-bit memory")
    size, flags = d.bar_size(C.KITE_BAR_DB)
    check_eq(size, C.KITE_DB_BAR_SIZE, "BAR2 size")
    check_eq(flags & 0x7, 0x4, "BAR2 64-bit memory")
    size, flags = d.bar_size(C.KITE_BAR_MSIX)
    check(size >= C.KITE_MSIX_NUM * 16, "BAR4 too small: %d" % size)
    cap = d.find_cap(0x11)
    check(cap is not None, "MSI-X capability missing")
    ctrl = d.cfg_read32(cap) >> 16
    check_eq((ctrl & 0x7ff) + 1, C.KITE_MSIX_NUM, "MSI-X table size")
    check_eq(d.cfg_read32(cap + 4) & 7, C.KITE_BAR_MSIX, "MSI-X table BIR")


@test("main")
def test_cap_registers(env):
    d = env.dev[0]
    check_eq(d.rd(C.KITE_REG_VERSION),
             (C.KITE_ABI_MAJOR << 16) | C.KITE_ABI_MINOR, "VERSION")
    want = {
        "MAX_QP": C.KITE_DEF_MAX_QP, "MAX_CQ": C.KITE_DEF_MAX_CQ,
        "MAX_MR": C.KITE_DEF_MAX_MR, "MAX_PD": C.KITE_DEF_MAX_PD,
        "MAX_CQE": C.KITE_DEF_MAX_CQE, "MAX_QP_WR": C.KITE_DEF_MAX_QP_WR,
        "MAX_SGE": C.KITE_DEF_MAX_SGE, "MAX_INLINE": C.KITE_DEF_MAX_INLINE,
        "PAGE_SIZES": C.KITE_DEF_PAGE_SIZES & 0xffffffff,
        "PAGE_SIZES_HI": C.KITE_DEF_PAGE_SIZES >> 32,
        "MAX_MTU": C.KITE_MTU_4096, "MAX_EQ": C.KITE_DEF_MAX_EQ,
        "MAX_UCTX": C.KITE_MAX_UCTX, "MAX_GID": C.KITE_DEF_MAX_GID,
        "MAX_MR_SIZE_LO": C.KITE_DEF_MAX_MR_SIZE & 0xffffffff,
        "MAX_MR_SIZE_HI": C.KITE_DEF_MAX_MR_SIZE >> 32,
        "MAX_AQ_LOG_DEPTH": C.KITE_DEF_MAX_AQ_LOG_DEPTH,
        "MAX_EQ_LOG_DEPTH": C.KITE_DEF_MAX_EQ_LOG_DEPTH,
        "MAX_ETH_LOG_DEPTH": C.KITE_DEF_MAX_ETH_LOG_DEPTH,
        "NUM_MSIX": C.KITE_MSIX_NUM, "MAX_RD_ATOM": C.KITE_DEF_MAX_RD_ATOM,
    }
    for name, val in want.items():
        check_eq(d.rd(K["KITE_REG_CAP_" + name]), val, "CAP_" + name)
    check_eq(d.rd(C.KITE_REG_PERM_MAC_LO), 0x4b005452, "PERM_MAC_LO")
    check_eq(d.rd(C.KITE_REG_PERM_MAC_HI), 0x0154, "PERM_MAC_HI")


@test("main")
def test_enable_bad_config(env):
    d = env.dev[0]
    cases = [
        ("AQ base 0", dict(aq=0)),
        ("AQ base unaligned", dict(aq=d.aq + 0x80)),
        ("AEQ base unaligned", dict(aeq=d.aeq + 0x10)),
        ("AQ depth below minimum", dict(aq_log=1, acq_log=1)),
        ("AQ depth above cap", dict(aq_log=C.KITE_DEF_MAX_AQ_LOG_DEPTH + 1,
                                    acq_log=C.KITE_DEF_MAX_AQ_LOG_DEPTH + 1)),
        ("ACQ shallower than AQ", dict(aq_log=4, acq_log=3)),
        ("AEQ depth above cap", dict(aeq_log=C.KITE_DEF_MAX_EQ_LOG_DEPTH + 1)),
    ]
    for name, kw in cases:
        st = d.enable(**kw)
        check(st & C.KITE_STATUS_FATAL, name + ": no FATAL (0x%x)" % st)
        check(not st & C.KITE_STATUS_READY, name + ": READY set")
        check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_BAD_CONFIG,
                 name + ": FATAL_CODE")
    d.bring_up(aq_log=3, acq_log=4)


@test("main")
def test_reset(env):
    d = env.dev[0]
    d.bring_up()
    d.exec_ok(C.KITE_CMD_ALLOC_PD)
    d.reset()
    check_eq(d.rd(C.KITE_REG_DEV_CTRL), 0, "CTRL after reset")
    check_eq(d.status(), C.KITE_STATUS_LINK_UP, "STATUS after reset")
    check_eq(d.rd(C.KITE_REG_FATAL_CODE), 0, "FATAL_CODE after reset")
    check_eq(d.rd(C.KITE_REG_AQ_BASE_LO), 0, "AQ_BASE_LO after reset")
    check_eq(d.rd(C.KITE_REG_AQ_LOG_DEPTH), 0, "AQ_LOG_DEPTH after reset")
    check_eq(d.rd(C.KITE_REG_CAP_MAX_PD), C.KITE_DEF_MAX_PD, "caps readable")
    # The PD table is empty again: the first PD handle comes back.
    d.bring_up()
    first = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    d.reset()
    d.bring_up()
    check_eq(d.exec_ok(C.KITE_CMD_ALLOC_PD)[0], first, "PD after reset")
    # A FATAL device comes back with a reset.
    d.enable(aq=0)
    check(d.status() & C.KITE_STATUS_FATAL, "no FATAL")
    d.reset()
    check_eq(d.status(), C.KITE_STATUS_LINK_UP, "STATUS after FATAL+reset")


@test("main")
def test_enable_ready(env):
    d = env.dev[0]
    d.bring_up()
    check_eq(d.rd(C.KITE_REG_DEV_CTRL), C.KITE_CTRL_ENABLE, "CTRL")
    check_eq(d.status(), C.KITE_STATUS_READY | C.KITE_STATUS_LINK_UP,
             "STATUS")
    # Ring registers are frozen while enabled.
    d.wr(C.KITE_REG_AQ_BASE_LO, 0x12345000)
    check_eq(d.rd(C.KITE_REG_AQ_BASE_LO), d.aq, "AQ base while enabled")


@test("main")
def test_query_device(env):
    d = env.dev[0]
    d.bring_up()
    d.take_irq(C.KITE_MSIX_ADMIN)
    st, out, raw = d.query(C.KITE_CMD_QUERY_DEVICE, 128)
    check_eq(st, C.KITE_STS_OK, "status")
    check_eq(out[0], 128, "out[0] (bytes written)")
    check(d.take_irq(C.KITE_MSIX_ADMIN), "no MSI-X on the admin vector")
    f = struct.unpack_from("<IIQQQ21I", raw)
    names = ["abi_version", "fw_version", "sys_image_guid", "page_size_cap",
             "max_mr_size", "max_qp", "max_cq", "max_mr", "max_pd",
             "max_cqe", "max_qp_wr", "max_sge", "max_inline", "max_eq",
             "max_uctx", "max_gid", "max_rd_atom", "cap_flags", "num_msix",
             "vendor_id", "vendor_part_id", "hw_version"]
    a = dict(zip(names, f))
    want = {
        "abi_version": (C.KITE_ABI_MAJOR << 16) | C.KITE_ABI_MINOR,
        "page_size_cap": C.KITE_DEF_PAGE_SIZES,
        "max_mr_size": C.KITE_DEF_MAX_MR_SIZE, "max_qp": C.KITE_DEF_MAX_QP,
        "max_cq": C.KITE_DEF_MAX_CQ, "max_mr": C.KITE_DEF_MAX_MR,
        "max_pd": C.KITE_DEF_MAX_PD, "max_cqe": C.KITE_DEF_MAX_CQE,
        "max_qp_wr": C.KITE_DEF_MAX_QP_WR, "max_sge": C.KITE_DEF_MAX_SGE,
        "max_inline": C.KITE_DEF_MAX_INLINE, "max_eq": C.KITE_DEF_MAX_EQ,
        "max_uctx": C.KITE_MAX_UCTX, "max_gid": C.KITE_DEF_MAX_GID,
        "max_rd_atom": C.KITE_DEF_MAX_RD_ATOM,
        "cap_flags": d.rd(C.KITE_REG_CAP_FLAGS),
        "num_msix": C.KITE_MSIX_NUM, "vendor_id": C.KITE_PCI_VENDOR_ID,
        "vendor_part_id": C.KITE_PCI_DEVICE_ID,
        "hw_version": C.KITE_PCI_REVISION,
        # EUI-64 of 52:54:00:4b:54:01
        "sys_image_guid": 0x505400fffe4b5401,
    }
    for k, v in want.items():
        check_eq(a[k], v, k)
    check(a["fw_version"] != 0, "fw_version is 0")
    check_eq(raw[100:128], bytes(28), "reserved bytes")


def info_network(env, dev_id):
    """The 'info network' line of NIC dev_id."""
    out = env.q.qmp("human-monitor-command", **{"command-line":
                                                "info network"})
    for line in out.splitlines():
        # "k2: ..." or, behind a hub, " \\ h0: k0: ..."
        if (" " + line.strip()).find(" %s: " % dev_id) >= 0:
            return line
    raise TestFailure("no %s in info network: %r" % (dev_id, out))


def port_attr(raw):
    state, max_mtu, active_mtu, width, speed = raw[0:5]
    mac = raw[5:11]
    eth_mtu, gid_len = struct.unpack_from("<II", raw, 12)
    return dict(state=state, max_mtu=max_mtu, active_mtu=active_mtu,
                width=width, speed=speed, mac=mac, eth_mtu=eth_mtu,
                gid_tbl_len=gid_len)


@test("main")
def test_query_port_set_port(env):
    d = env.dev[0]
    d.bring_up()
    st, out, raw = d.query(C.KITE_CMD_QUERY_PORT, 36, port=1)
    check_eq(st, C.KITE_STS_OK, "QUERY_PORT status")
    check_eq(out[0], 36, "QUERY_PORT out[0]")
    p = port_attr(raw)
    check_eq(p["state"], C.KITE_PORT_ACTIVE, "state")
    check_eq(p["max_mtu"], C.KITE_MTU_4096, "max_mtu")
    check_eq(p["eth_mtu"], 1500, "eth_mtu")
    check_eq(p["active_mtu"], C.KITE_MTU_1024, "active_mtu at 1500")
    check_eq(p["mac"], mac_bytes(MAC_A), "mac")
    check_eq(p["gid_tbl_len"], C.KITE_DEF_MAX_GID, "gid_tbl_len")
    check(p["width"] and p["speed"], "link width/speed 0")
    st, _, _ = d.query(C.KITE_CMD_QUERY_PORT, 36, port=2)
    check_eq(st, C.KITE_STS_BAD_PARAM, "QUERY_PORT port 2")

    def set_port(mask, mtu, mac, port=1, uctx=0):
        return d.exec(C.KITE_CMD_SET_PORT,
                      struct.pack("<II", mask, mtu) + mac + bytes([port, 0]),
                      uctx=uctx)[0]

    new_mac = bytes([0x02, 0x11, 0x22, 0x33, 0x44, 0x55])
    check_eq(set_port(C.KITE_SET_PORT_MTU | C.KITE_SET_PORT_MAC, 9000,
                      new_mac), C.KITE_STS_OK, "SET_PORT")
    p = port_attr(d.query(C.KITE_CMD_QUERY_PORT, 36, port=1)[2])
    check_eq(p["eth_mtu"], 9000, "eth_mtu after SET_PORT")
    check_eq(p["active_mtu"], C.KITE_MTU_4096, "active_mtu at 9000")
    check_eq(p["mac"], new_mac, "mac after SET_PORT")
    check("macaddr=02:11:22:33:44:55" in info_network(env, "k0"),
          "info network does not show the SET_PORT MAC: %r" %
          info_network(env, "k0"))
    check_eq(d.rd(C.KITE_REG_PERM_MAC_LO), 0x4b005452, "PERM_MAC unchanged")
    for name, args in (
            ("MTU too small", (C.KITE_SET_PORT_MTU, 67, new_mac)),
            ("MTU too large", (C.KITE_SET_PORT_MTU, 9001, new_mac)),
            ("multicast MAC", (C.KITE_SET_PORT_MAC, 0, b"\x01" * 6)),
            ("zero MAC", (C.KITE_SET_PORT_MAC, 0, bytes(6))),
            ("unknown mask bit", (1 << 5, 1500, new_mac))):
        check_eq(set_port(*args), C.KITE_STS_BAD_PARAM, name)
    check_eq(set_port(C.KITE_SET_PORT_MTU, 1500, new_mac, port=0),
             C.KITE_STS_BAD_PARAM, "SET_PORT port 0")
    p = port_attr(d.query(C.KITE_CMD_QUERY_PORT, 36, port=1)[2])
    check_eq(p["eth_mtu"], 9000, "eth_mtu after rejected SET_PORTs")
    # Only the kernel configures the port.
    uctx = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    check_eq(set_port(C.KITE_SET_PORT_MTU, 1500, new_mac, uctx=uctx),
             C.KITE_STS_PERMISSION, "SET_PORT from a user context")
    # Reset restores the defaults.
    d.bring_up()
    p = port_attr(d.query(C.KITE_CMD_QUERY_PORT, 36, port=1)[2])
    check_eq(p["eth_mtu"], 1500, "eth_mtu after reset")
    check_eq(p["mac"], mac_bytes(MAC_A), "mac after reset")
    check("macaddr=" + MAC_A in info_network(env, "k0"),
          "info network after reset: %r" % info_network(env, "k0"))


@test("main")
def test_pd_alloc_dealloc(env):
    d = env.dev[0]
    d.bring_up()
    a = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    b = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    check(a != b and a != 0 and b != 0, "PD handles %d, %d" % (a, b))
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(a))
    st, _ = d.exec(C.KITE_CMD_DEALLOC_PD, destroy_payload(a))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "double free")
    for h in (0, 0xffffffff, C.KITE_DEF_MAX_PD + 1):
        st, _ = d.exec(C.KITE_CMD_DEALLOC_PD, destroy_payload(h))
        check_eq(st, C.KITE_STS_BAD_HANDLE, "DEALLOC_PD %d" % h)
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(b))


@test("main")
def test_uctx_ownership(env):
    d = env.dev[0]
    d.bring_up()
    u1 = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    u2 = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    check(1 <= u1 <= C.KITE_MAX_UCTX and 1 <= u2 <= C.KITE_MAX_UCTX and
          u1 != u2, "uctx numbers %d, %d" % (u1, u2))
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD, uctx=u1)[0]
    st, _ = d.exec(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd), uctx=u2)
    check_eq(st, C.KITE_STS_PERMISSION, "PD of uctx %d freed by %d" % (u1, u2))
    st, _ = d.exec(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd), uctx=0)
    check_eq(st, C.KITE_STS_PERMISSION, "PD of uctx freed by the kernel")
    st, _ = d.exec(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u1))
    check_eq(st, C.KITE_STS_BUSY, "DEALLOC_UCTX with a live PD")
    st, _ = d.exec(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u1), uctx=u2)
    check_eq(st, C.KITE_STS_PERMISSION, "DEALLOC_UCTX by another context")
    st, _ = d.exec(C.KITE_CMD_ALLOC_UCTX, uctx=u1)
    check_eq(st, C.KITE_STS_PERMISSION, "ALLOC_UCTX from a user context")
    st, _ = d.exec(C.KITE_CMD_ALLOC_PD, uctx=200)
    check_eq(st, C.KITE_STS_PERMISSION, "ALLOC_PD from an unknown context")
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd), uctx=u1)
    d.exec_ok(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u1))
    # Only the kernel ends a context, even the context's own.
    st, _ = d.exec(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u2), uctx=u2)
    check_eq(st, C.KITE_STS_PERMISSION, "DEALLOC_UCTX by the context itself")
    d.exec_ok(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u2))
    st, _ = d.exec(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u2))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DEALLOC_UCTX twice")
    st, _ = d.exec(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(0))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DEALLOC_UCTX 0")


@test("main")
def test_uctx_exhaustion(env):
    d = env.dev[0]
    d.bring_up(aq_log=8, acq_log=8)
    seen = set()
    for i in range(C.KITE_MAX_UCTX):
        d.submit(C.KITE_CMD_ALLOC_UCTX, ring=False)
    d.wr(C.KITE_REG_AQ_DB, d.aq_pi)
    for i in range(C.KITE_MAX_UCTX):
        _, st, _, out = d.wait_cqe()
        check_eq(st, C.KITE_STS_OK, "ALLOC_UCTX %d" % i)
        seen.add(out[0])
    check_eq(seen, set(range(1, C.KITE_MAX_UCTX + 1)), "uctx numbers")
    st, _ = d.exec(C.KITE_CMD_ALLOC_UCTX)
    check_eq(st, C.KITE_STS_NO_RESOURCES, "ALLOC_UCTX beyond max_uctx")


@test("main")
def test_pd_exhaustion(env):
    d = env.dev[0]
    depth_log = C.KITE_DEF_MAX_AQ_LOG_DEPTH
    d.bring_up(aq_log=depth_log, acq_log=depth_log)
    max_pd = d.rd(C.KITE_REG_CAP_MAX_PD)
    handles = set()
    left = max_pd
    while left:
        n = min(left, 1 << depth_log)
        for i in range(n):
            d.submit(C.KITE_CMD_ALLOC_PD, ring=False)
        d.wr(C.KITE_REG_AQ_DB, d.aq_pi)
        for i in range(n):
            _, st, _, out = d.wait_cqe()
            check_eq(st, C.KITE_STS_OK, "ALLOC_PD %d" % len(handles))
            handles.add(out[0])
        left -= n
    check_eq(len(handles), max_pd, "distinct PD handles")
    st, _ = d.exec(C.KITE_CMD_ALLOC_PD)
    check_eq(st, C.KITE_STS_NO_RESOURCES, "ALLOC_PD beyond max_pd")
    h = sorted(handles)[17]
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(h))
    check_eq(d.exec_ok(C.KITE_CMD_ALLOC_PD)[0], h, "freed PD reused")


@test("main")
def test_out_buffer_too_short(env):
    d = env.dev[0]
    d.bring_up()
    for op, size in ((C.KITE_CMD_QUERY_DEVICE, 128),
                     (C.KITE_CMD_QUERY_STATS, STATS_SIZE)):
        st, _, raw = d.query(op, size, buflen=size - 1)
        check_eq(st, C.KITE_STS_BAD_PARAM, "opcode 0x%x short buffer" % op)
        check_eq(raw, b"\xee" * size, "buffer untouched")
    st, _, _ = d.query(C.KITE_CMD_QUERY_PORT, 36, buflen=35, port=1)
    check_eq(st, C.KITE_STS_BAD_PARAM, "QUERY_PORT short buffer")
    # An unmapped out buffer is a DMA error, not a crash.
    payload = struct.pack("<QII", 1 << 50, 4096, 0)
    st, _ = d.exec(C.KITE_CMD_QUERY_DEVICE, payload)
    check_eq(st, C.KITE_STS_DMA_ERROR, "QUERY_DEVICE to unmapped memory")


@test("main")
def test_opcodes(env):
    d = env.dev[0]
    d.bring_up()
    for op in (0x00, 0x0a, 0x17, 0x2f, 0x31, C.KITE_CMD_MAX, 0x40, 0xff):
        st, _ = d.exec(op)
        check_eq(st, C.KITE_STS_BAD_OPCODE, "opcode 0x%x" % op)
    # Every opcode of the ABI is implemented: an all-zero payload is
    # refused for its content, never as unsupported.
    for name in ("CREATE_CQ", "MODIFY_CQ", "QUERY_CQ", "DESTROY_CQ",
                 "CREATE_QP", "MODIFY_QP", "QUERY_QP", "DESTROY_QP",
                 "REG_MR", "DEREG_MR"):
        st, _ = d.exec(K["KITE_CMD_" + name])
        check(st in (C.KITE_STS_BAD_PARAM, C.KITE_STS_BAD_HANDLE),
              "%s with a zero payload: status 0x%x" % (name, st))
    st, _ = d.exec(C.KITE_CMD_ALLOC_PD, flags=1)
    check_eq(st, C.KITE_STS_BAD_PARAM, "reserved header flags")
    check(d.status() & C.KITE_STATUS_READY, "device no longer READY")


def eq_payload(addr, npages, page_shift, log_depth, vector, level=0):
    return struct.pack("<QIBBBBBBHI", addr, npages, page_shift, level, 0, 0,
                       log_depth, 0, vector, 0)


@test("main")
def test_create_destroy_eq(env):
    d = env.dev[0]
    d.bring_up()
    ring = d.eq_rings
    eqns = []
    for i in range(C.KITE_DEF_MAX_EQ - 1):
        out = d.exec_ok(C.KITE_CMD_CREATE_EQ,
                        eq_payload(ring + i * 0x1000, 1, 12, 8,
                                   C.KITE_MSIX_COMP_BASE + i))
        eqns.append(out[0])
    check_eq(sorted(eqns), list(range(1, C.KITE_DEF_MAX_EQ)), "EQ numbers")
    st, _ = d.exec(C.KITE_CMD_CREATE_EQ,
                   eq_payload(ring, 1, 12, 8, C.KITE_MSIX_COMP_BASE))
    check_eq(st, C.KITE_STS_NO_RESOURCES, "EQ beyond max_eq")
    d.exec_ok(C.KITE_CMD_DESTROY_EQ, destroy_payload(eqns[0]))
    bad = [
        ("vector 0", eq_payload(ring, 1, 12, 8, 0), C.KITE_STS_BAD_PARAM),
        ("vector past table", eq_payload(ring, 1, 12, 8, C.KITE_MSIX_NUM),
         C.KITE_STS_BAD_PARAM),
        ("depth too big", eq_payload(ring, 1, 12, 17, 2), C.KITE_STS_BAD_PARAM),
        ("depth too small", eq_payload(ring, 1, 12, 1, 2),
         C.KITE_STS_BAD_PARAM),
        ("ring smaller than depth", eq_payload(ring, 1, 12, 9, 2),
         C.KITE_STS_BAD_PARAM),
        ("unaligned ring", eq_payload(ring + 8, 1, 12, 8, 2),
         C.KITE_STS_BAD_PARAM),
        ("page list", eq_payload(ring, 1, 12, 8, 2, level=1),
         C.KITE_STS_NOT_SUPPORTED),
    ]
    for name, payload, want in bad:
        st, _ = d.exec(C.KITE_CMD_CREATE_EQ, payload)
        check_eq(st, want, name)
    st, _ = d.exec(C.KITE_CMD_DESTROY_EQ, destroy_payload(eqns[0]))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DESTROY_EQ twice")
    st, _ = d.exec(C.KITE_CMD_DESTROY_EQ, destroy_payload(0))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DESTROY_EQ of the async EQ")
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    st, _ = d.exec(C.KITE_CMD_CREATE_EQ, eq_payload(ring, 1, 12, 8, 2),
                   uctx=u)
    check_eq(st, C.KITE_STS_PERMISSION, "CREATE_EQ from a user context")
    st, _ = d.exec(C.KITE_CMD_DESTROY_EQ, destroy_payload(eqns[1]), uctx=u)
    check_eq(st, C.KITE_STS_PERMISSION, "DESTROY_EQ from a user context")
    # Arming an empty completion EQ raises nothing (no event pending); a
    # doorbell for a destroyed EQ or on a user page is ignored.
    vec = C.KITE_MSIX_COMP_BASE + 1
    d.take_irq(vec)
    d.eq_doorbell(eqns[1], 0, True)
    check(not d.take_irq(vec), "interrupt from an empty EQ")
    d.eq_doorbell(eqns[0], 0, True)
    d.q.writeq(d.db + u * C.KITE_DB_PAGE_SIZE + C.KITE_DB_EQ,
               (C.KITE_DB_EQ_ARM << C.KITE_DB_FLAGS_SHIFT) | eqns[1])
    check(d.status() & C.KITE_STATUS_READY, "not READY after EQ doorbells")
    log = env.q.guest_errors()
    check("doorbell for unknown EQ" in log, "destroyed EQ doorbell not logged")
    check("EQ doorbell on user page" in log, "user page EQ doorbell not logged")


def gid_payload(gid, index, typ=0, port=1):
    return gid + struct.pack("<HBBI", index, typ, port, 0)


@test("main")
def test_gids(env):
    d = env.dev[0]
    d.bring_up()
    v4 = bytes(10) + b"\xff\xff" + bytes([198, 18, 0, 1])
    v6 = bytes([0x20, 0x01, 0x0d, 0xb8]) + bytes(11) + b"\x01"
    d.exec_ok(C.KITE_CMD_ADD_GID, gid_payload(v4, 0))
    d.exec_ok(C.KITE_CMD_ADD_GID, gid_payload(v6, 1, 1))
    checks = [
        ("index in use", gid_payload(v4, 0), C.KITE_STS_BUSY),
        ("index beyond table", gid_payload(v4, C.KITE_DEF_MAX_GID),
         C.KITE_STS_BAD_PARAM),
        ("IPv4 GID not v4-mapped", gid_payload(v6, 2, 0),
         C.KITE_STS_BAD_PARAM),
        ("bad type", gid_payload(v6, 2, 7), C.KITE_STS_BAD_PARAM),
        ("bad port", gid_payload(v4, 2, 0, 2), C.KITE_STS_BAD_PARAM),
    ]
    for name, payload, want in checks:
        st, _ = d.exec(C.KITE_CMD_ADD_GID, payload)
        check_eq(st, want, name)
    st, _, raw = d.query(C.KITE_CMD_QUERY_STATS, STATS_SIZE)
    check_eq(struct.unpack_from("<I", raw, 24)[0], 2, "num_gid")
    d.exec_ok(C.KITE_CMD_DEL_GID, gid_payload(bytes(16), 0))
    st, _ = d.exec(C.KITE_CMD_DEL_GID, gid_payload(bytes(16), 0))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DEL_GID twice")
    st, _ = d.exec(C.KITE_CMD_DEL_GID, gid_payload(bytes(16), 99))
    check_eq(st, C.KITE_STS_BAD_PARAM, "DEL_GID index beyond table")
    d.exec_ok(C.KITE_CMD_ADD_GID, gid_payload(v4, 0))


@test("main")
def test_query_stats(env):
    d = env.dev[0]
    d.bring_up()
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    d.exec_ok(C.KITE_CMD_ALLOC_PD)
    d.exec_ok(C.KITE_CMD_ALLOC_PD, uctx=u)
    d.exec_ok(C.KITE_CMD_CREATE_EQ,
              eq_payload(d.eq_rings, 1, 12, 8, C.KITE_MSIX_COMP_BASE))
    st, out, raw = d.query(C.KITE_CMD_QUERY_STATS, STATS_SIZE)
    check_eq(st, C.KITE_STS_OK, "status")
    check_eq(out[0], STATS_SIZE, "out[0]")
    n = struct.unpack_from("<8I", raw)
    check_eq(n[0], 1, "num_uctx")
    check_eq(n[1], 2, "num_pd")
    check_eq(n[2], 0, "num_cq")
    check_eq(n[3], 0, "num_qp")
    check_eq(n[4], 0, "num_mr")
    check_eq(n[5], 2, "num_eq (async + 1)")
    check_eq(n[6], 0, "num_gid")


@test("main")
def test_acq_phase_wrap(env):
    d = env.dev[0]
    d.bring_up(aq_log=2, acq_log=2)
    depth = 4
    for i in range(3 * depth + 1):
        cid = d.submit(C.KITE_CMD_ALLOC_PD)
        slot = (d.acq_ci) % depth
        want_phase = ((d.acq_ci >> 2) & 1) ^ 1
        got_id, st, _, out = d.wait_cqe()
        check_eq(got_id, cid, "cmd_id %d" % i)
        check_eq(st, C.KITE_STS_OK, "status %d" % i)
        raw = d.q.read(d.acq + slot * 32, 32)
        check_eq(raw[3] & 1, want_phase, "phase of completion %d" % i)
        # Batches that wrap the AQ ring work as well.
    for i in range(depth):
        d.submit(C.KITE_CMD_DEALLOC_PD, destroy_payload(i + 1), ring=False)
    d.wr(C.KITE_REG_AQ_DB, d.aq_pi)
    for i in range(depth):
        _, st, _, _ = d.wait_cqe()
        check_eq(st, C.KITE_STS_OK, "batched DEALLOC_PD %d" % i)


@test("main")
def test_aq_doorbell_beyond_depth(env):
    d = env.dev[0]
    d.bring_up(aq_log=2, acq_log=2)
    d.exec_ok(C.KITE_CMD_ALLOC_PD)
    d.take_irq(C.KITE_MSIX_ADMIN)
    d.wr(C.KITE_REG_AQ_DB, d.aq_pi + 5)
    wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL")
    check(not d.status() & C.KITE_STATUS_READY, "READY with FATAL")
    check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_AQ_DOORBELL,
             "FATAL_CODE")
    data, _, typ, flags = d.eqe(0)
    check_eq(typ, C.KITE_EVT_DEV_FATAL, "async event type")
    check_eq(data, C.KITE_FATAL_AQ_DOORBELL, "async event data")
    check_eq(flags & 1, 1, "async event phase")
    check(d.take_irq(C.KITE_MSIX_ADMIN), "no admin interrupt on FATAL")
    # Nothing executes any more.
    d.submit(C.KITE_CMD_ALLOC_PD)
    time.sleep(0.05)
    raw = d.q.read(d.acq + (d.acq_ci % 4) * 32, 32)
    check_eq(raw[3] & 1, 0, "completion written after FATAL")
    # A doorbell behind the consumer is just as fatal.
    d.bring_up(aq_log=2, acq_log=2)
    d.exec_ok(C.KITE_CMD_ALLOC_PD)
    d.wr(C.KITE_REG_AQ_DB, 0)
    wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL (pi < ci)")


@test("main")
def test_aq_dma_error(env):
    d = env.dev[0]
    far = 1 << 44           # nothing is mapped there
    d.bring_up(aq=far)
    d.submit(C.KITE_CMD_QUERY_DEVICE, ring=False)   # goes to RAM at d.aq
    d.wr(C.KITE_REG_AQ_DB, 1)
    wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL")
    check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_AQ_DMA, "FATAL_CODE")
    d.reset()


@test("main")
def test_ring_dma_errors(env):
    d = env.dev[0]
    far = 1 << 44           # nothing is mapped there
    # Completion ring not writable.
    d.bring_up(acq=far)
    d.submit(C.KITE_CMD_QUERY_DEVICE)
    wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL (ACQ)")
    check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_AQ_DMA, "ACQ code")
    # Async EQ not writable: the first event is fatal.
    d.bring_up(aeq=far)
    try:
        env.q.qmp("set_link", name="k0", up=False)
        wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL (AEQ)")
        check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_EQ_DMA, "AEQ code")
    finally:
        env.q.qmp("set_link", name="k0", up=True)
    # Ethernet TX ring not readable.
    d.bring_up()
    d.wr(C.KITE_REG_ETH_TX_BASE_LO, 0)
    d.wr(C.KITE_REG_ETH_TX_BASE_HI, far >> 32)
    d.wr(C.KITE_REG_ETH_TX_LOG_DEPTH, 2)
    d.wr(C.KITE_REG_ETH_CTRL, C.KITE_ETH_CTRL_TX_EN)
    check_eq(d.rd(C.KITE_REG_ETH_CTRL), C.KITE_ETH_CTRL_TX_EN, "TX_EN")
    d.wr(C.KITE_REG_ETH_TX_DB, 1)
    wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL (ETH)")
    check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_ETH_DMA, "ETH code")
    d.bring_up()


def link_event_check(d, index, typ):
    wait_for(lambda: d.eqe(index)[3] & 1 == (((index >> d.aeq_log) & 1) ^ 1),
             "async EQE %d" % index)
    data, _, got_typ, _ = d.eqe(index)
    check_eq(got_typ, typ, "event %d type" % index)
    check_eq(data, 1, "event %d port" % index)


@test("main")
def test_link_events(env):
    d = env.dev[0]
    q = env.q
    d.bring_up(aeq_log=2)
    d.eq_doorbell(0, 0, True)
    d.take_irq(C.KITE_MSIX_ADMIN)
    try:
        q.qmp("set_link", name="k0", up=False)
        wait_for(lambda: not d.status() & C.KITE_STATUS_LINK_UP,
                 "LINK_UP to clear")
        link_event_check(d, 0, C.KITE_EVT_PORT_ERR)
        check(d.take_irq(C.KITE_MSIX_ADMIN), "no interrupt for armed AEQ")
        p = port_attr(d.query(C.KITE_CMD_QUERY_PORT, 36, port=1)[2])
        check_eq(p["state"], C.KITE_PORT_DOWN, "QUERY_PORT state")
        d.take_irq(C.KITE_MSIX_ADMIN)
        # Not re-armed: the next event raises no interrupt.
        q.qmp("set_link", name="k0", up=True)
        wait_for(lambda: d.status() & C.KITE_STATUS_LINK_UP, "LINK_UP")
        link_event_check(d, 1, C.KITE_EVT_PORT_ACTIVE)
        check(not d.take_irq(C.KITE_MSIX_ADMIN), "interrupt while unarmed")
        # Arming with unread events fires at once.
        d.eq_doorbell(0, 1, True)
        check(d.take_irq(C.KITE_MSIX_ADMIN), "no interrupt when arming "
              "with a pending event")
        d.eq_doorbell(0, 2, False)
        # Fill the 4-entry EQ: the fifth event is dropped; the wrap toggles
        # the phase.
        for i in range(3):
            q.qmp("set_link", name="k0", up=False)
            q.qmp("set_link", name="k0", up=True)
        # Events 2..5 fit (ci = 2), events 6 and 7 are dropped.
        link_event_check(d, 2, C.KITE_EVT_PORT_ERR)
        link_event_check(d, 5, C.KITE_EVT_PORT_ACTIVE)
        data, _, typ, flags = d.eqe(6)
        check_eq(flags & 1, 1, "dropped event overwrote slot 2")
        check_eq(typ, C.KITE_EVT_PORT_ERR, "slot 2 still holds event 2")
        # Consume everything; the next event lands at index 6 with phase 0.
        d.eq_doorbell(0, 6, False)
        q.qmp("set_link", name="k0", up=False)
        link_event_check(d, 6, C.KITE_EVT_PORT_ERR)
        # A consumer index beyond the producer is ignored (and counted).
        d.eq_doorbell(0, 100, True)
        check(d.status() & C.KITE_STATUS_READY, "not READY")
        cnt = stats(d)
        check_eq(cnt["eq_events_dropped"], 2, "eq_events_dropped")
        check_eq(cnt["db_rejected"], 1, "db_rejected")
    finally:
        q.qmp("set_link", name="k0", up=True)


@test("main")
def test_no_netdev_link_down(env):
    d = env.dev[2]
    check_eq(d.status() & C.KITE_STATUS_LINK_UP, 0, "LINK_UP without netdev")
    d.bring_up()
    p = port_attr(d.query(C.KITE_CMD_QUERY_PORT, 36, port=1)[2])
    check_eq(p["state"], C.KITE_PORT_DOWN, "QUERY_PORT state")
    check_eq(p["mac"], mac_bytes(MAC_C), "mac")


def eth_setup(d, tx_log=2, rx_log=2, promisc=False):
    d.q.memset(d.eth_tx, 0x2000, 0)
    d.wr(C.KITE_REG_ETH_TX_BASE_LO, d.eth_tx)
    d.wr(C.KITE_REG_ETH_TX_BASE_HI, 0)
    d.wr(C.KITE_REG_ETH_TX_LOG_DEPTH, tx_log)
    d.wr(C.KITE_REG_ETH_RX_BASE_LO, d.eth_rx)
    d.wr(C.KITE_REG_ETH_RX_BASE_HI, 0)
    d.wr(C.KITE_REG_ETH_RX_LOG_DEPTH, rx_log)
    ctrl = C.KITE_ETH_CTRL_TX_EN | C.KITE_ETH_CTRL_RX_EN
    if promisc:
        ctrl |= C.KITE_ETH_CTRL_PROMISC
    d.wr(C.KITE_REG_ETH_CTRL, ctrl)
    check_eq(d.rd(C.KITE_REG_ETH_CTRL), ctrl, "ETH_CTRL")
    d.tx_pi = d.rx_pi = 0
    d.tx_log, d.rx_log = tx_log, rx_log


def eth_desc(addr, length):
    return struct.pack("<QHH3sB", addr, length, 0, bytes(3), 0)


def eth_send(d, frame):
    slot = d.tx_pi % (1 << d.tx_log)
    buf = d.eth_buf + slot * 0x4000
    d.q.write(buf, frame)
    d.q.write(d.eth_tx + slot * 16, eth_desc(buf, len(frame)))
    d.tx_pi += 1
    d.wr(C.KITE_REG_ETH_TX_DB, d.tx_pi)
    wait_for(lambda: d.rd(C.KITE_REG_ETH_TX_CI) == d.tx_pi, "TX_CI")
    return d.q.read(d.eth_tx + slot * 16, 16)[15]


def eth_post_rx(d, size=2048, ring=True):
    slot = d.rx_pi % (1 << d.rx_log)
    buf = d.eth_buf + 0x40000 + slot * 0x4000
    d.q.memset(buf, 0x4000, 0)
    d.q.write(d.eth_rx + slot * 16, eth_desc(buf, size))
    d.rx_pi += 1
    if ring:
        d.wr(C.KITE_REG_ETH_RX_DB, d.rx_pi)
    return buf


def eth_rx_desc(d, index):
    raw = d.q.read(d.eth_rx + (index % (1 << d.rx_log)) * 16, 16)
    addr, length, _, _, status = struct.unpack("<QHH3sB", raw)
    return addr, length, status


def frame_to(dst, src, n, fill):
    return dst + src + b"\x88\xb5" + bytes((fill + i) & 0xff for i in range(n))


@test("main")
def test_eth_tx_rx(env):
    a, b = env.dev[0], env.dev[1]
    a.bring_up()
    b.bring_up()
    eth_setup(a)
    eth_setup(b)
    mac_a, mac_b = mac_bytes(MAC_A), mac_bytes(MAC_B)

    # b posts a buffer, arms its interrupt; a sends; b receives it intact.
    buf = eth_post_rx(b)
    b.take_irq(C.KITE_MSIX_ETH)
    b.wr(C.KITE_REG_ETH_IRQ_ARM, 1)
    frame = frame_to(mac_b, mac_a, 200, 7)
    a.wr(C.KITE_REG_ETH_IRQ_ARM, 1)
    a.take_irq(C.KITE_MSIX_ETH)
    check_eq(eth_send(a, frame), C.KITE_ETH_DESC_DONE, "TX status")
    check(a.take_irq(C.KITE_MSIX_ETH), "no TX interrupt")
    wait_for(lambda: b.rd(C.KITE_REG_ETH_RX_CI) == 1, "RX_CI")
    _, length, status = eth_rx_desc(b, 0)
    check_eq(status, C.KITE_ETH_DESC_DONE, "RX status")
    check_eq(length, len(frame), "RX length")
    check_eq(b.q.read(buf, len(frame)), frame, "received bytes")
    check(b.take_irq(C.KITE_MSIX_ETH), "no RX interrupt")

    # Not armed: the completion only sets pending; arming fires at once.
    buf = eth_post_rx(b)
    eth_send(a, frame_to(b"\xff" * 6, mac_a, 46, 1))        # broadcast
    wait_for(lambda: b.rd(C.KITE_REG_ETH_RX_CI) == 2, "RX_CI 2")
    check(not b.take_irq(C.KITE_MSIX_ETH), "interrupt while unarmed")
    b.wr(C.KITE_REG_ETH_IRQ_ARM, 1)
    check(b.take_irq(C.KITE_MSIX_ETH), "no interrupt when arming pending")
    b.wr(C.KITE_REG_ETH_IRQ_ARM, 1)
    check(not b.take_irq(C.KITE_MSIX_ETH), "pending not cleared on fire")

    # No buffer posted: QEMU queues the frame until RX_DB.
    big = frame_to(mac_b, mac_a, 1500, 3)
    eth_send(a, big)
    time.sleep(0.05)
    check_eq(b.rd(C.KITE_REG_ETH_RX_CI), 2, "RX_CI without a buffer")
    buf = eth_post_rx(b)
    wait_for(lambda: b.rd(C.KITE_REG_ETH_RX_CI) == 3, "queued frame")
    check_eq(b.q.read(buf, len(big)), big, "queued frame bytes")

    # Frames for another unicast MAC are filtered, unless PROMISC.
    buf = eth_post_rx(b)
    eth_send(a, frame_to(mac_bytes(MAC_C), mac_a, 60, 9))
    time.sleep(0.05)
    check_eq(b.rd(C.KITE_REG_ETH_RX_CI), 3, "filtered frame received")
    b.wr(C.KITE_REG_ETH_CTRL, C.KITE_ETH_CTRL_TX_EN | C.KITE_ETH_CTRL_RX_EN |
         C.KITE_ETH_CTRL_PROMISC)
    other = frame_to(mac_bytes(MAC_C), mac_a, 60, 11)
    eth_send(a, other)
    wait_for(lambda: b.rd(C.KITE_REG_ETH_RX_CI) == 4, "PROMISC frame")
    check_eq(b.q.read(buf, len(other)), other, "PROMISC frame bytes")

    # A frame larger than the buffer: DONE|ERR, len 0 (ring wraps here).
    eth_post_rx(b, size=100)
    eth_send(a, frame_to(mac_b, mac_a, 200, 5))
    wait_for(lambda: b.rd(C.KITE_REG_ETH_RX_CI) == 5, "RX_CI 5")
    _, length, status = eth_rx_desc(b, 4)
    check_eq(status, C.KITE_ETH_DESC_DONE | C.KITE_ETH_DESC_ERR,
             "too-large status")
    check_eq(length, 0, "too-large length")

    # Bad TX lengths complete with ERR and send nothing.
    for n in (13, C.KITE_ETH_MAX_FRAME + 1):
        slot = a.tx_pi % 4
        a.q.write(a.eth_tx + slot * 16, eth_desc(a.eth_buf, n))
        a.tx_pi += 1
        a.wr(C.KITE_REG_ETH_TX_DB, a.tx_pi)
        wait_for(lambda: a.rd(C.KITE_REG_ETH_TX_CI) == a.tx_pi, "TX_CI")
        check_eq(a.q.read(a.eth_tx + slot * 16, 16)[15],
                 C.KITE_ETH_DESC_DONE | C.KITE_ETH_DESC_ERR,
                 "TX of %d bytes" % n)

    # Counters.
    st, _, raw = a.query(C.KITE_CMD_QUERY_STATS, STATS_SIZE)
    txp, txb, rxp, rxb, rxd, txe = struct.unpack_from("<6Q", raw, 32)
    check_eq(txp, 6, "a eth_tx_packets")
    check_eq(txb, 214 + 60 + 1514 + 74 + 74 + 214, "a eth_tx_bytes")
    check_eq(txe, 2, "a eth_tx_errors")
    st, _, raw = b.query(C.KITE_CMD_QUERY_STATS, STATS_SIZE)
    txp, txb, rxp, rxb, rxd, txe = struct.unpack_from("<6Q", raw, 32)
    check_eq(rxp, 4, "b eth_rx_packets")
    check_eq(rxb, 214 + 60 + 1514 + 74, "b eth_rx_bytes")
    check_eq(rxd, 1, "b eth_rx_dropped (too large)")

    # TX doorbell beyond the ring is ignored; the device stays up.
    a.wr(C.KITE_REG_ETH_TX_DB, a.tx_pi + 5)
    time.sleep(0.02)
    check_eq(a.rd(C.KITE_REG_ETH_TX_CI), a.tx_pi, "TX_CI after bad doorbell")
    check(a.status() & C.KITE_STATUS_READY, "not READY")


@test("main")
def test_eth_ring_config(env):
    d = env.dev[0]
    d.bring_up()
    d.wr(C.KITE_REG_ETH_TX_BASE_LO, d.eth_tx)
    d.wr(C.KITE_REG_ETH_TX_LOG_DEPTH, C.KITE_DEF_MAX_ETH_LOG_DEPTH + 1)
    d.wr(C.KITE_REG_ETH_RX_BASE_LO, d.eth_rx + 0x10)
    d.wr(C.KITE_REG_ETH_RX_LOG_DEPTH, 4)
    d.wr(C.KITE_REG_ETH_CTRL, C.KITE_ETH_CTRL_TX_EN | C.KITE_ETH_CTRL_RX_EN)
    check_eq(d.rd(C.KITE_REG_ETH_CTRL), 0, "ETH_CTRL with bad rings")
    d.wr(C.KITE_REG_ETH_TX_LOG_DEPTH, 1)
    d.wr(C.KITE_REG_ETH_CTRL, C.KITE_ETH_CTRL_TX_EN)
    check_eq(d.rd(C.KITE_REG_ETH_CTRL), 0, "ETH_CTRL with depth 2")
    d.wr(C.KITE_REG_ETH_TX_LOG_DEPTH, C.KITE_DEF_MAX_ETH_LOG_DEPTH)
    d.wr(C.KITE_REG_ETH_CTRL, C.KITE_ETH_CTRL_TX_EN)
    check_eq(d.rd(C.KITE_REG_ETH_CTRL), C.KITE_ETH_CTRL_TX_EN, "TX_EN")
    d.reset()
    check_eq(d.rd(C.KITE_REG_ETH_CTRL), 0, "ETH_CTRL after reset")
    # Rings cannot run before the device is READY.
    d.wr(C.KITE_REG_ETH_TX_BASE_LO, d.eth_tx)
    d.wr(C.KITE_REG_ETH_TX_LOG_DEPTH, 2)
    d.wr(C.KITE_REG_ETH_CTRL, C.KITE_ETH_CTRL_TX_EN)
    check_eq(d.rd(C.KITE_REG_ETH_CTRL), 0, "TX_EN before READY")


@test("main")
def test_doorbell_bar(env):
    d = env.dev[0]
    d.bring_up()
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    page = d.db + u * C.KITE_DB_PAGE_SIZE
    # SQ/RQ/CQ doorbells for objects that do not exist are ignored.
    for off in (C.KITE_DB_SQ, C.KITE_DB_RQ, C.KITE_DB_CQ):
        d.q.writeq(page + off, (5 << 32) | 1)
    d.q.writel(page + C.KITE_DB_SQ, 1)
    d.q.writeq(page + C.KITE_DB_EQ, C.KITE_DB_EQ_ARM << 24)
    check_eq(d.q.readl(page), 0, "doorbell read")
    check(d.status() & C.KITE_STATUS_READY, "not READY after doorbells")
    d.exec_ok(C.KITE_CMD_QUERY_DEVICE, struct.pack("<QII", d.outbuf, 128, 0))
    log = env.q.guest_errors()
    check("does not own" in log, "doorbell not logged as guest error")
    # 3 unknown objects, one 4-byte write, one EQ doorbell on a user page.
    check_eq(stats(d)["db_rejected"], 5, "db_rejected")


KNOWN_STATUS = set(v for k, v in K.items() if k.startswith("KITE_STS_"))


@test("main")
def test_random_commands(env):
    """Garbage in every field: answers with a known status, never a crash."""
    import random
    rnd = random.Random(0x4b495445)
    d = env.dev[0]
    d.bring_up(aq_log=6, acq_log=6)
    far = 1 << 44
    pointers = [d.outbuf, far, 0, far + 0x1000 * 7, d.outbuf + 0xfff]
    for batch in range(24):
        n = rnd.randint(1, 1 << d.aq_log)
        for i in range(n):
            op = rnd.choice([rnd.randint(0, 255)] +
                            [v for k, v in K.items()
                             if k.startswith("KITE_CMD_")] * 3)
            payload = bytearray(rnd.getrandbits(8) for _ in range(120))
            # Keep DMA away from the test's own rings: out buffers and ring
            # addresses point at the scratch buffer or at unmapped space.
            struct.pack_into("<Q", payload, 0, rnd.choice(pointers))
            struct.pack_into("<Q", payload, 16, rnd.choice(pointers))
            if rnd.random() < 0.7:
                payload[8:12] = struct.pack("<I", rnd.choice(
                    [0, 1, 36, 128, 160, 4096, 0xffffffff]))
            uctx = rnd.choice([0, 0, 0, 1, 2, 255, 256, 0xffffffff])
            flags = 0 if rnd.random() < 0.9 else rnd.randint(1, 255)
            d.submit(op, bytes(payload), uctx=uctx, flags=flags, ring=False)
        d.wr(C.KITE_REG_AQ_DB, d.aq_pi)
        for i in range(n):
            _, st, _, _ = d.wait_cqe()
            check(st in KNOWN_STATUS, "unknown status 0x%x" % st)
        check_eq(d.status() & (C.KITE_STATUS_READY | C.KITE_STATUS_FATAL),
                 C.KITE_STATUS_READY, "status after batch %d" % batch)
    # Random doorbells on every page while READY: ignored, never fatal.
    for i in range(300):
        page = rnd.choice([0, 0, 1, rnd.randrange(C.KITE_DB_NUM_PAGES)])
        off = rnd.choice([C.KITE_DB_SQ, C.KITE_DB_RQ, C.KITE_DB_CQ,
                          C.KITE_DB_EQ, C.KITE_DB_EQ,
                          rnd.randrange(0, C.KITE_DB_PAGE_SIZE, 8)])
        val = rnd.choice([rnd.getrandbits(64),
                          (rnd.getrandbits(32) << 32) | rnd.randrange(12) |
                          (rnd.getrandbits(8) << 24)])
        d.q.writeq(d.db + page * C.KITE_DB_PAGE_SIZE + off, val)
    check_eq(d.status() & (C.KITE_STATUS_READY | C.KITE_STATUS_FATAL),
             C.KITE_STATUS_READY, "status after random doorbells")
    # Random register writes (ring bases only into unmapped space), then a
    # reset brings the device back.
    regs = [r for k, r in K.items() if k.startswith("KITE_REG_") and
            k not in ("KITE_REG_DEV_CTRL",) and not k.endswith("BASE_LO")]
    for i in range(400):
        reg = rnd.choice(regs + [rnd.randrange(0, C.KITE_REGS_SIZE, 4)])
        d.wr(reg, rnd.choice([0, 1, 2, 3, 7, 0xffffffff, rnd.getrandbits(32)]))
    check(env.q.proc.poll() is None, "QEMU died")
    d.bring_up()
    d.exec_ok(C.KITE_CMD_QUERY_DEVICE,
              struct.pack("<QII", d.outbuf, 128, 0))


@test("fault")
def test_fault_opcode(env):
    d = env.dev[0]
    d.bring_up()
    st, out = d.exec(C.KITE_CMD_ALLOC_PD)
    check_eq(st, C.KITE_STS_INTERNAL, "ALLOC_PD with x-fault-opcode")
    check_eq(out[0], 0, "no handle")
    st, _ = d.exec(C.KITE_CMD_ALLOC_UCTX)
    check_eq(st, C.KITE_STS_OK, "other opcodes work")
    st, _, raw = d.query(C.KITE_CMD_QUERY_STATS, STATS_SIZE)
    check_eq(struct.unpack_from("<I", raw, 4)[0], 0, "num_pd (not executed)")


@test("fault_status")
def test_fault_status(env):
    d = env.dev[0]
    d.bring_up()
    st, _, _ = d.query(C.KITE_CMD_QUERY_PORT, 36, port=1)
    check_eq(st, C.KITE_STS_BUSY, "QUERY_PORT with x-fault-status=BUSY")


@test("hang")
def test_fault_hang_opcode(env):
    d = env.dev[0]
    d.bring_up()
    d.exec_ok(C.KITE_CMD_ALLOC_PD)
    d.submit(C.KITE_CMD_ALLOC_UCTX)
    d.submit(C.KITE_CMD_ALLOC_PD)
    try:
        d.wait_cqe(timeout=0.3)
        raise TestFailure("completion after the hanging opcode")
    except TestFailure as e:
        if "no admin completion" not in str(e):
            raise
    st = d.status()
    check(st & C.KITE_STATUS_READY and not st & C.KITE_STATUS_FATAL,
          "a hung device still reports READY (status 0x%x)" % st)
    d.bring_up()
    d.exec_ok(C.KITE_CMD_ALLOC_PD)


def eth_stuck_frames(a, b, fill):
    """a sends three frames to b with no RX buffer posted, then b posts one.

    The first frame fills the buffer; QEMU tries the second one, the port
    answers "cannot receive" and QEMU stops delivering to b until someone
    flushes its queue. Returns the frames.
    """
    mac_a, mac_b = mac_bytes(MAC_A), mac_bytes(MAC_B)
    frames = [frame_to(mac_b, mac_a, 100, fill + i) for i in range(3)]
    for f in frames:
        eth_send(a, f)
    time.sleep(0.05)
    check_eq(b.rd(C.KITE_REG_ETH_RX_CI), 0, "RX_CI with no buffer")
    buf = eth_post_rx(b)
    wait_for(lambda: b.rd(C.KITE_REG_ETH_RX_CI) == 1, "first queued frame")
    check_eq(b.q.read(buf, len(frames[0])), frames[0], "first frame bytes")
    return frames


def eth_fresh_frame_arrives(a, b, fill):
    """b (re)enables RX and posts a buffer: only a new frame lands there."""
    eth_setup(b)
    buf = eth_post_rx(b)
    time.sleep(0.05)
    check_eq(b.rd(C.KITE_REG_ETH_RX_CI), 0, "stale frame delivered to the "
             "new ring")
    fresh = frame_to(mac_bytes(MAC_B), mac_bytes(MAC_A), 80, fill)
    eth_send(a, fresh)
    wait_for(lambda: b.rd(C.KITE_REG_ETH_RX_CI) == 1, "fresh frame")
    check_eq(b.q.read(buf, len(fresh)), fresh, "fresh frame bytes")


@test("main")
def test_eth_rx_disable_flushes_queue(env):
    """Clearing RX_EN drops what QEMU queued; later frames drop, not queue."""
    a, b = env.dev[0], env.dev[1]
    a.bring_up()
    b.bring_up()
    eth_setup(a)
    eth_setup(b)
    eth_stuck_frames(a, b, 0x10)
    b.wr(C.KITE_REG_ETH_CTRL, C.KITE_ETH_CTRL_TX_EN)
    check_eq(stats(b)["eth_rx_dropped"], 2, "queued frames dropped on RX off")
    eth_send(a, frame_to(mac_bytes(MAC_B), mac_bytes(MAC_A), 90, 0x20))
    time.sleep(0.05)
    check_eq(stats(b)["eth_rx_dropped"], 3, "frame to a disabled RX ring")
    eth_fresh_frame_arrives(a, b, 0x30)


@test("main")
def test_eth_reset_flushes_queue(env):
    """Frames queued before a reset never reach the next driver's ring."""
    a, b = env.dev[0], env.dev[1]
    a.bring_up()
    b.bring_up()
    eth_setup(a)
    eth_setup(b)
    eth_stuck_frames(a, b, 0x40)
    b.reset()
    # Enable without a second reset, which would clear the counters.
    b.configure()
    b.wr(C.KITE_REG_DEV_CTRL, C.KITE_CTRL_ENABLE)
    check(b.status() & C.KITE_STATUS_READY, "not READY")
    check_eq(stats(b)["eth_rx_dropped"], 2, "queued frames dropped on reset")
    eth_send(a, frame_to(mac_bytes(MAC_B), mac_bytes(MAC_A), 90, 0x50))
    time.sleep(0.05)
    check_eq(stats(b)["eth_rx_dropped"], 3, "frame before RX_EN")
    eth_fresh_frame_arrives(a, b, 0x60)


@test("main")
def test_eth_fatal_flushes_queue(env):
    """A FATAL device drops queued frames and the ones that follow."""
    a, b = env.dev[0], env.dev[1]
    q = env.q
    a.bring_up()
    b.bring_up()
    eth_setup(a)
    eth_setup(b)
    eth_stuck_frames(a, b, 0x70)

    def rx_off_drops():
        return q.guest_errors().count("kite_eth_rx_off ")

    q.qmp("trace-event-set-state", name="kite_eth_rx_off", enable=True)
    try:
        before = rx_off_drops()
        b.wr(C.KITE_REG_AQ_DB, b.aq_pi + (1 << b.aq_log) + 1)
        wait_for(lambda: b.status() & C.KITE_STATUS_FATAL, "FATAL")
        wait_for(lambda: rx_off_drops() - before >= 2,
                 "queued frames dropped on FATAL")
        eth_send(a, frame_to(mac_bytes(MAC_B), mac_bytes(MAC_A), 90, 0x80))
        wait_for(lambda: rx_off_drops() - before >= 3,
                 "frame to a FATAL device dropped")
        check_eq(rx_off_drops() - before, 3, "frames dropped")
    finally:
        q.qmp("trace-event-set-state", name="kite_eth_rx_off", enable=False)
    b.bring_up()
    eth_fresh_frame_arrives(a, b, 0x90)


@test("main")
def test_fatal_event_needs_a_working_async_eq(env):
    """DEV_FATAL goes to EQ 0 whenever EQ 0 is set up and did not fail."""
    d = env.dev[0]
    far = 1 << 44           # nothing is mapped there
    # BAD_CONFIG: EQ 0 was never set up, so nothing is written to the AEQ
    # registers' ring even though it is valid memory.
    d.enable(aq_log=1, acq_log=1)
    check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_BAD_CONFIG, "code")
    check_eq(d.q.read(d.aeq, 16 << d.aeq_log), bytes(16 << d.aeq_log),
             "AEQ ring after BAD_CONFIG")
    # EQ 0 itself not writable: FATAL_EQ_DMA, vector 0 fires, no loop.
    d.bring_up(aeq=far)
    d.take_irq(C.KITE_MSIX_ADMIN)
    try:
        env.q.qmp("set_link", name="k0", up=False)
        wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL (AEQ)")
        check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_EQ_DMA, "AEQ code")
        check(d.take_irq(C.KITE_MSIX_ADMIN), "no admin interrupt")
    finally:
        env.q.qmp("set_link", name="k0", up=True)
    # Any other fatal error with a working EQ 0: the event is posted.
    d.bring_up()
    d.wr(C.KITE_REG_ETH_TX_BASE_LO, 0)
    d.wr(C.KITE_REG_ETH_TX_BASE_HI, far >> 32)
    d.wr(C.KITE_REG_ETH_TX_LOG_DEPTH, 2)
    d.wr(C.KITE_REG_ETH_CTRL, C.KITE_ETH_CTRL_TX_EN)
    d.wr(C.KITE_REG_ETH_TX_DB, 1)
    wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL (ETH)")
    data, _, typ, flags = d.eqe(0)
    check_eq(typ, C.KITE_EVT_DEV_FATAL, "event type")
    check_eq(data, C.KITE_FATAL_ETH_DMA, "event data")
    check_eq(flags & 1, 1, "event phase")
    d.bring_up()


TOP_PAGE = (1 << 64) - C.KITE_RING_ALIGN      # last aligned page of 2^64


@test("main")
def test_ring_address_wrap(env):
    """Rings and buffers that would wrap past 2^64 are rejected."""
    d = env.dev[0]
    # Admin rings: a ring that fits the last page is accepted; one page
    # more wraps (BAD_CONFIG).
    cases = [
        ("AQ", dict(aq=TOP_PAGE, aq_log=6, acq_log=6)),    # 8 KiB
        ("ACQ", dict(acq=TOP_PAGE, aq_log=3, acq_log=8)),  # 8 KiB
        ("AEQ", dict(aeq=TOP_PAGE, aeq_log=9)),             # 8 KiB
    ]
    for name, kw in cases:
        st = d.enable(**kw)
        check(st & C.KITE_STATUS_FATAL, name + " wrapping: no FATAL")
        check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_BAD_CONFIG,
                 name + " wrapping: FATAL_CODE")
    for name, kw in (("AQ", dict(aq=TOP_PAGE, aq_log=5, acq_log=5)),
                     ("ACQ", dict(acq=TOP_PAGE, aq_log=3, acq_log=7)),
                     ("AEQ", dict(aeq=TOP_PAGE, aeq_log=8))):
        st = d.enable(**kw)
        check_eq(st & (C.KITE_STATUS_READY | C.KITE_STATUS_FATAL),
                 C.KITE_STATUS_READY, name + " in the last page")
    d.bring_up()
    # CREATE_EQ: two 4 KiB pages from the last page wrap.
    st, _ = d.exec(C.KITE_CMD_CREATE_EQ,
                   eq_payload(TOP_PAGE, 2, 12, 9, C.KITE_MSIX_COMP_BASE))
    check_eq(st, C.KITE_STS_BAD_PARAM, "CREATE_EQ wrapping ring")
    out = d.exec_ok(C.KITE_CMD_CREATE_EQ,
                    eq_payload(TOP_PAGE, 1, 12, 8, C.KITE_MSIX_COMP_BASE))
    d.exec_ok(C.KITE_CMD_DESTROY_EQ, destroy_payload(out[0]))
    # Ethernet rings: 512 descriptors (8 KiB) wrap, 256 fit.
    d.wr(C.KITE_REG_ETH_TX_BASE_LO, TOP_PAGE & 0xffffffff)
    d.wr(C.KITE_REG_ETH_TX_BASE_HI, TOP_PAGE >> 32)
    d.wr(C.KITE_REG_ETH_RX_BASE_LO, TOP_PAGE & 0xffffffff)
    d.wr(C.KITE_REG_ETH_RX_BASE_HI, TOP_PAGE >> 32)
    d.wr(C.KITE_REG_ETH_TX_LOG_DEPTH, 9)
    d.wr(C.KITE_REG_ETH_RX_LOG_DEPTH, 9)
    d.wr(C.KITE_REG_ETH_CTRL, C.KITE_ETH_CTRL_TX_EN | C.KITE_ETH_CTRL_RX_EN)
    check_eq(d.rd(C.KITE_REG_ETH_CTRL), 0, "ETH_CTRL with wrapping rings")
    d.wr(C.KITE_REG_ETH_TX_LOG_DEPTH, 8)
    d.wr(C.KITE_REG_ETH_RX_LOG_DEPTH, 8)
    d.wr(C.KITE_REG_ETH_CTRL, C.KITE_ETH_CTRL_TX_EN | C.KITE_ETH_CTRL_RX_EN)
    check_eq(d.rd(C.KITE_REG_ETH_CTRL),
             C.KITE_ETH_CTRL_TX_EN | C.KITE_ETH_CTRL_RX_EN,
             "ETH_CTRL with rings in the last page")
    d.wr(C.KITE_REG_ETH_CTRL, 0)
    # Out buffers: a 128-byte result 64 bytes below 2^64 wraps (BAD_PARAM);
    # one that ends exactly at 2^64 is only unmapped (DMA_ERROR).
    top = 1 << 64
    st, _ = d.exec(C.KITE_CMD_QUERY_DEVICE,
                   struct.pack("<QII", top - 64, 4096, 0))
    check_eq(st, C.KITE_STS_BAD_PARAM, "out buffer wrapping")
    st, _ = d.exec(C.KITE_CMD_QUERY_DEVICE,
                   struct.pack("<QII", top - 128, 4096, 0))
    check_eq(st, C.KITE_STS_DMA_ERROR, "out buffer ending at 2^64")
    check(d.status() & C.KITE_STATUS_READY, "not READY")


@test("main")
def test_create_eq_page_sizes(env):
    """CREATE_EQ accepts exactly the page sizes CAP_PAGE_SIZES advertises."""
    d = env.dev[0]
    d.bring_up()
    sizes = d.rd(C.KITE_REG_CAP_PAGE_SIZES) | \
        (d.rd(C.KITE_REG_CAP_PAGE_SIZES_HI) << 32)
    check_eq(sizes, C.KITE_DEF_PAGE_SIZES, "CAP_PAGE_SIZES")
    # d.ram is 16 MiB aligned: aligned to every page size up to 2 MiB.
    for shift in (0, 11, 13, 14, 15, 17, 20, 22, 29, 31, 32, 63, 64, 200,
                  255):
        st, _ = d.exec(C.KITE_CMD_CREATE_EQ,
                       eq_payload(d.ram, 1, shift, 8, C.KITE_MSIX_COMP_BASE))
        check_eq(st, C.KITE_STS_BAD_PARAM, "page_shift %d" % shift)
    for shift in (12, 16, 21):
        check(sizes & (1 << shift), "page size 2^%d not advertised" % shift)
        out = d.exec_ok(C.KITE_CMD_CREATE_EQ,
                        eq_payload(d.ram, 1, shift, 8, C.KITE_MSIX_COMP_BASE))
        d.exec_ok(C.KITE_CMD_DESTROY_EQ, destroy_payload(out[0]))


@test("main")
def test_dealloc_uctx_kernel_only(env):
    d = env.dev[0]
    d.bring_up()
    u1 = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    u2 = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    for actor, target in ((u1, u1), (u2, u1), (u1, 0), (u1, 77)):
        st, _ = d.exec(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(target),
                       uctx=actor)
        check_eq(st, C.KITE_STS_PERMISSION,
                 "DEALLOC_UCTX %d by context %d" % (target, actor))
    st, _, raw = d.query(C.KITE_CMD_QUERY_STATS, STATS_SIZE)
    check_eq(struct.unpack_from("<I", raw, 0)[0], 2, "num_uctx")
    d.exec_ok(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u1))
    d.exec_ok(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u2))
    st, _, raw = d.query(C.KITE_CMD_QUERY_STATS, STATS_SIZE)
    check_eq(struct.unpack_from("<I", raw, 0)[0], 0, "num_uctx")


@test("fault_status")
def test_fault_status_ok_rejected(env):
    """x-fault-status=0 (OK) would report success without running."""
    cmd = [env.qemu_bin, "-machine", "q35", "-accel", "qtest", "-nodefaults",
           "-display", "none", "-L", "/usr/share/seabios",
           "-L", "/usr/share/qemu", "-device",
           "kite,x-fault-opcode=%d,x-fault-status=%d" %
           (C.KITE_CMD_ALLOC_PD, C.KITE_STS_OK)]
    try:
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=CMD_TIMEOUT * 3)
    except subprocess.TimeoutExpired:
        raise TestFailure("QEMU started with x-fault-status=0")
    out = r.stdout.decode(errors="replace")
    check(r.returncode != 0, "QEMU exit status 0 with x-fault-status=0")
    check("x-fault-status must be an error status" in out,
          "no error message: %r" % out[-300:])


# --------------------------------------------------------------------------
# CQs, QPs, MRs and page buffer lists
# --------------------------------------------------------------------------

PAGE = 4096
QP_ATTR_SIZE = 72


def pbl(addr, npages, shift=12, level=0):
    return struct.pack("<QIBBH", addr, npages, shift, level, 0)


def cq_payload(ring, log_depth, eqn):
    return ring + struct.pack("<BBHI", log_depth, 0, eqn, 0)


def modify_cq_payload(cqn, ring, log_depth):
    return struct.pack("<II", cqn, 0) + ring + struct.pack("<B7x", log_depth)


def query_obj(handle, addr=0, length=0):
    return struct.pack("<IIQII", handle, 0, addr, length, 0)


def qp_payload(pdn, scq, rcq, sq, rq, qp_type=0, flags=0, sq_log=4,
               sq_stride=6, rq_log=4, rq_stride=4):
    return struct.pack("<BBBBBBHIIII", qp_type, flags, sq_log, sq_stride,
                       rq_log, rq_stride, 0, pdn, scq, rcq, 0) + sq + rq


def av_bytes(dgid, dmac=b"\x52\x54\x00\x00\x00\x09", sgid_index=0,
             net_type=0, hop_limit=64, tclass=0, sl=0, flow_label=0):
    return dgid + dmac + struct.pack("<BBBBBBI", sgid_index, net_type,
                                     hop_limit, tclass, sl, 0, flow_label)


ATTR_FIELDS = ["attr_mask", "state", "cur_state", "path_mtu", "timeout",
               "retry_cnt", "rnr_retry", "min_rnr_timer", "max_rd_atomic",
               "max_dest_rd_atomic", "port", "pkey_index", "access_flags",
               "qkey", "sq_psn", "rq_psn", "dest_qpn", "reserved"]
ATTR_FMT = "<IBBBBBBBBBBHIIIIII"
# attribute name -> mask bit
ATTR_BIT = {
    "state": "STATE", "cur_state": "CUR_STATE",
    "access_flags": "ACCESS_FLAGS", "pkey_index": "PKEY_INDEX",
    "port": "PORT", "qkey": "QKEY", "av": "AV", "path_mtu": "PATH_MTU",
    "timeout": "TIMEOUT", "retry_cnt": "RETRY_CNT", "rnr_retry": "RNR_RETRY",
    "rq_psn": "RQ_PSN", "max_rd_atomic": "MAX_QP_RD_ATOMIC",
    "min_rnr_timer": "MIN_RNR_TIMER", "sq_psn": "SQ_PSN",
    "max_dest_rd_atomic": "MAX_DEST_RD_ATOMIC", "dest_qpn": "DEST_QPN",
}


def attr_bytes(mask=None, extra_mask=0, **f):
    """struct kite_qp_attr with fields f; the mask covers them by default."""
    if mask is None:
        mask = 0
        for name in f:
            mask |= K["KITE_QP_ATTR_" + ATTR_BIT[name]]
    mask |= extra_mask
    vals = dict((n, 0) for n in ATTR_FIELDS)
    vals.update((k, v) for k, v in f.items() if k != "av")
    vals["attr_mask"] = mask
    raw = struct.pack(ATTR_FMT, *[vals[n] for n in ATTR_FIELDS])
    return raw + f.get("av", bytes(32))


def parse_attr(raw):
    a = dict(zip(ATTR_FIELDS, struct.unpack_from(ATTR_FMT, raw)))
    a["av"] = raw[40:72]
    return a


V4_GID = bytes(10) + b"\xff\xff" + bytes([198, 18, 0, 1])
V4_DGID = bytes(10) + b"\xff\xff" + bytes([198, 18, 0, 2])
V6_GID = bytes([0x20, 0x01, 0x0d, 0xb8]) + bytes(11) + b"\x01"
V6_DGID = bytes([0x20, 0x01, 0x0d, 0xb8]) + bytes(11) + b"\x02"


class Rdma:
    """Guest memory for RDMA objects and helpers, on one device."""

    def __init__(self, d, eq=True, gids=True):
        self.d = d
        d.bring_up(aq_log=6, acq_log=6)
        self.cq_ring = d.ram + 0x100000       # 64 KiB of CQ rings
        self.sq_ring = d.ram + 0x110000       # 64 KiB
        self.rq_ring = d.ram + 0x120000       # 64 KiB
        self.lists = d.ram + 0x200000         # page lists, 1 MiB
        self.pages = d.ram + 0x400000         # data pages
        self.eqn = 0
        if eq:
            self.eqn = d.exec_ok(C.KITE_CMD_CREATE_EQ, eq_payload(
                d.eq_rings, 1, 12, 8, C.KITE_MSIX_COMP_BASE))[0]
        if gids:
            d.exec_ok(C.KITE_CMD_ADD_GID, gid_payload(V4_GID, 0))
            d.exec_ok(C.KITE_CMD_ADD_GID, gid_payload(V6_GID, 1, 1))

    def cq(self, uctx=0, log_depth=4):
        return self.d.exec_ok(C.KITE_CMD_CREATE_CQ, cq_payload(
            pbl(self.cq_ring, 1), log_depth, self.eqn), uctx=uctx)[0]

    def qp_payload(self, pdn, scq, rcq, **kw):
        return qp_payload(pdn, scq, rcq, pbl(self.sq_ring, 1),
                          pbl(self.rq_ring, 1), **kw)

    def qp(self, pdn, cqn, uctx=0, **kw):
        return self.d.exec_ok(C.KITE_CMD_CREATE_QP, self.qp_payload(
            pdn, cqn, cqn, **kw), uctx=uctx)[0]

    def modify(self, qpn, uctx=0, **f):
        st, _ = self.d.exec(C.KITE_CMD_MODIFY_QP,
                            struct.pack("<II", qpn, 0) + attr_bytes(**f),
                            uctx=uctx)
        return st

    def modify_ok(self, qpn, what, **f):
        check_eq(self.modify(qpn, **f), C.KITE_STS_OK, what)

    def query_qp(self, qpn, uctx=0):
        d = self.d
        d.q.memset(d.outbuf, 0x100, 0xee)
        out = d.exec_ok(C.KITE_CMD_QUERY_QP,
                        query_obj(qpn, d.outbuf, QP_ATTR_SIZE), uctx=uctx)
        check_eq(out[0], QP_ATTR_SIZE, "QUERY_QP out[0]")
        return parse_attr(d.q.read(d.outbuf, QP_ATTR_SIZE))

    def level1(self, addr, entries):
        self.d.q.write(addr, struct.pack("<%dQ" % len(entries), *entries))
        return addr


def obj_counts(d):
    st, _, raw = d.query(C.KITE_CMD_QUERY_STATS, STATS_SIZE)
    check_eq(st, C.KITE_STS_OK, "QUERY_STATS")
    n = struct.unpack_from("<8I", raw)
    return {"uctx": n[0], "pd": n[1], "cq": n[2], "qp": n[3], "mr": n[4]}


def batch(d, cmds):
    """Runs [(opcode, payload, uctx)] in AQ-sized batches; [(st, out)]."""
    res = []
    depth = 1 << d.aq_log
    for i in range(0, len(cmds), depth):
        part = cmds[i:i + depth]
        for op, payload, uctx in part:
            d.submit(op, payload, uctx=uctx, ring=False)
        d.wr(C.KITE_REG_AQ_DB, d.aq_pi)
        for _ in part:
            _, st, _, out = d.wait_cqe()
            res.append((st, out))
    return res


def cq_doorbell(d, page, cqn, ci, flags=0):
    d.q.writeq(d.db + page * C.KITE_DB_PAGE_SIZE + C.KITE_DB_CQ,
               (ci << C.KITE_DB_INDEX_SHIFT) |
               (flags << C.KITE_DB_FLAGS_SHIFT) | cqn)


@test("main")
def test_cq_lifecycle(env):
    d = env.dev[0]
    r = Rdma(d, gids=False)
    cqn = r.cq(log_depth=7)         # 128 x 32 B = one 4 KiB page
    check(cqn >= 1, "cqn %d" % cqn)
    out = d.exec_ok(C.KITE_CMD_QUERY_CQ, query_obj(cqn))
    check_eq(list(out[:4]), [7, r.eqn, 0, 0], "QUERY_CQ depth/eqn/arm/pi")
    check_eq(obj_counts(d)["cq"], 1, "num_cq")
    # Arming through the kernel doorbell page; QUERY_CQ shows it.
    rej = stats(d)["db_rejected"]
    cq_doorbell(d, 0, cqn, 0, C.KITE_DB_CQ_ARM_NEXT)
    out = d.exec_ok(C.KITE_CMD_QUERY_CQ, query_obj(cqn))
    check_eq(out[2], C.KITE_CQ_FLAG_ARMED, "armed after the CQ doorbell")
    # Foreign page, unknown CQ, consumer index ahead of the producer.
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    cq_doorbell(d, u, cqn, 0, C.KITE_DB_CQ_ARM_NEXT)
    cq_doorbell(d, 0, cqn + 100, 0, C.KITE_DB_CQ_ARM_NEXT)
    cq_doorbell(d, 0, cqn, 1, 0)
    check_eq(stats(d)["db_rejected"] - rej, 3, "CQ doorbells rejected")
    # Resize: out[0] = old producer index; the arm is kept.
    out = d.exec_ok(C.KITE_CMD_MODIFY_CQ, modify_cq_payload(
        cqn, pbl(r.cq_ring + 0x2000, 2), 8))
    check_eq(out[0], 0, "MODIFY_CQ old producer index")
    out = d.exec_ok(C.KITE_CMD_QUERY_CQ, query_obj(cqn))
    check_eq(list(out[:4]), [8, r.eqn, C.KITE_CQ_FLAG_ARMED, 0],
             "QUERY_CQ after resize")
    bad_modify = [
        ("ring smaller than the depth", modify_cq_payload(
            cqn, pbl(r.cq_ring, 1), 8), C.KITE_STS_BAD_PARAM),
        ("depth too big", modify_cq_payload(
            cqn, pbl(r.cq_ring, 512), 17), C.KITE_STS_BAD_PARAM),
        ("unknown CQ", modify_cq_payload(
            cqn + 1, pbl(r.cq_ring, 1), 4), C.KITE_STS_BAD_HANDLE),
    ]
    for name, payload, want in bad_modify:
        st, _ = d.exec(C.KITE_CMD_MODIFY_CQ, payload)
        check_eq(st, want, "MODIFY_CQ " + name)
    bad = [
        ("depth 1", cq_payload(pbl(r.cq_ring, 1), 1, r.eqn),
         C.KITE_STS_BAD_PARAM),
        ("depth above max_cqe", cq_payload(pbl(r.cq_ring, 512), 17, r.eqn),
         C.KITE_STS_BAD_PARAM),
        ("eqn 0 (async EQ)", cq_payload(pbl(r.cq_ring, 1), 4, 0),
         C.KITE_STS_BAD_PARAM),
        ("EQ not created", cq_payload(pbl(r.cq_ring, 1), 4, r.eqn + 1),
         C.KITE_STS_BAD_HANDLE),
        ("EQ beyond max_eq", cq_payload(pbl(r.cq_ring, 1), 4, 0xffff),
         C.KITE_STS_BAD_HANDLE),
        ("ring too small", cq_payload(pbl(r.cq_ring, 1), 8, r.eqn),
         C.KITE_STS_BAD_PARAM),
        ("ring pages beyond max_cqe", cq_payload(pbl(r.cq_ring, 513), 4,
                                                 r.eqn),
         C.KITE_STS_BAD_PARAM),
    ]
    for name, payload, want in bad:
        st, _ = d.exec(C.KITE_CMD_CREATE_CQ, payload)
        check_eq(st, want, "CREATE_CQ " + name)
    # Ownership: a context's CQ and the kernel's.
    ucq = r.cq(uctx=u)
    for op, payload in ((C.KITE_CMD_QUERY_CQ, query_obj(cqn)),
                        (C.KITE_CMD_DESTROY_CQ, destroy_payload(cqn)),
                        (C.KITE_CMD_MODIFY_CQ, modify_cq_payload(
                            cqn, pbl(r.cq_ring, 1), 4))):
        st, _ = d.exec(op, payload, uctx=u)
        check_eq(st, C.KITE_STS_PERMISSION, "opcode 0x%x on the kernel's CQ"
                 % op)
    st, _ = d.exec(C.KITE_CMD_DESTROY_CQ, destroy_payload(ucq))
    check_eq(st, C.KITE_STS_PERMISSION, "kernel destroys a context's CQ")
    st, _ = d.exec(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u))
    check_eq(st, C.KITE_STS_BUSY, "DEALLOC_UCTX with a CQ")
    st, _ = d.exec(C.KITE_CMD_DESTROY_EQ, destroy_payload(r.eqn))
    check_eq(st, C.KITE_STS_BUSY, "DESTROY_EQ named by CQs")
    d.exec_ok(C.KITE_CMD_DESTROY_CQ, destroy_payload(ucq), uctx=u)
    d.exec_ok(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u))
    d.exec_ok(C.KITE_CMD_DESTROY_CQ, destroy_payload(cqn))
    st, _ = d.exec(C.KITE_CMD_DESTROY_CQ, destroy_payload(cqn))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DESTROY_CQ twice")
    st, _ = d.exec(C.KITE_CMD_QUERY_CQ, query_obj(cqn))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "QUERY_CQ of a destroyed CQ")
    check_eq(obj_counts(d)["cq"], 0, "num_cq")
    d.exec_ok(C.KITE_CMD_DESTROY_EQ, destroy_payload(r.eqn))


@test("main")
def test_cq_exhaustion(env):
    d = env.dev[0]
    r = Rdma(d, gids=False)
    max_cq = d.rd(C.KITE_REG_CAP_MAX_CQ)
    payload = cq_payload(pbl(r.cq_ring, 1), 4, r.eqn)
    res = batch(d, [(C.KITE_CMD_CREATE_CQ, payload, 0)] * max_cq)
    check(all(st == C.KITE_STS_OK for st, _ in res), "CREATE_CQ failed")
    cqns = [out[0] for _, out in res]
    check_eq(len(set(cqns)), max_cq, "distinct cqns")
    st, _ = d.exec(C.KITE_CMD_CREATE_CQ, payload)
    check_eq(st, C.KITE_STS_NO_RESOURCES, "CREATE_CQ beyond max_cq")
    check_eq(obj_counts(d)["cq"], max_cq, "num_cq")
    res = batch(d, [(C.KITE_CMD_DESTROY_CQ, destroy_payload(c), 0)
                    for c in cqns])
    check(all(st == C.KITE_STS_OK for st, _ in res), "DESTROY_CQ failed")
    check_eq(obj_counts(d)["cq"], 0, "num_cq after destroying all")


@test("main")
def test_pbl_levels(env):
    d = env.dev[0]
    r = Rdma(d, gids=False)
    pages = [r.pages + i * PAGE for i in range(4)]
    # Level 1: four scattered pages for a 512-entry CQ (16 KiB).
    l1 = r.level1(r.lists, [pages[2], pages[0], pages[3], pages[1]])
    c1 = d.exec_ok(C.KITE_CMD_CREATE_CQ,
                   cq_payload(pbl(l1, 4, 12, 1), 9, r.eqn))[0]
    # Level 2: 600 pages (two chunks, the second used in part) for an MR.
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    chunk0, chunk1, top = r.lists + 0x1000, r.lists + 0x2000, r.lists + 0x3000
    far = 1 << 40
    entries = [far + i * PAGE for i in range(600)]
    r.level1(chunk0, entries[:512])
    r.level1(chunk1, entries[512:])
    r.level1(top, [chunk0, chunk1])
    key = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, 0, 0x10000, 600 * PAGE, pbl(top, 600, 12, 2), 7))[0]
    check_eq(key & 0xff, 7, "level-2 MR key variant")
    # A CQ ring at level 2 too.
    r.level1(r.lists + 0x4000, [r.lists + 0x5000])
    r.level1(r.lists + 0x5000, pages[:2])
    c2 = d.exec_ok(C.KITE_CMD_CREATE_CQ, cq_payload(
        pbl(r.lists + 0x4000, 2, 12, 2), 8, r.eqn))[0]
    # Bad descriptors and entries.
    bad_l1 = r.level1(r.lists + 0x6000, [pages[0], 0, pages[2], pages[3]])
    mis_l1 = r.level1(r.lists + 0x7000, [pages[0], pages[1] + 8])
    bad_top = r.level1(r.lists + 0x8000, [chunk0 + 8])
    zero_top = r.level1(r.lists + 0x9000, [0])
    big_l1 = r.level1(r.lists + 0xa000, [pages[1]])
    bad = [
        ("level 3", pbl(r.cq_ring, 1, 12, 3), C.KITE_STS_BAD_PARAM),
        ("page shift 13", pbl(r.cq_ring, 1, 13), C.KITE_STS_BAD_PARAM),
        ("page shift 64", pbl(r.cq_ring, 1, 64), C.KITE_STS_BAD_PARAM),
        ("no pages", pbl(r.cq_ring, 0), C.KITE_STS_BAD_PARAM),
        ("address 0", pbl(0, 1), C.KITE_STS_BAD_PARAM),
        ("level 0 misaligned", pbl(r.cq_ring + 0x800, 1),
         C.KITE_STS_BAD_PARAM),
        ("level 0 2 MiB page misaligned", pbl(r.cq_ring, 1, 21),
         C.KITE_STS_BAD_PARAM),
        ("level 0 wraps", pbl((1 << 64) - PAGE, 2), C.KITE_STS_BAD_PARAM),
        ("level 1 zero entry", pbl(bad_l1, 4, 12, 1), C.KITE_STS_BAD_PARAM),
        ("level 1 misaligned entry", pbl(mis_l1, 2, 12, 1),
         C.KITE_STS_BAD_PARAM),
        ("level 1 entry misaligned for 2 MiB pages", pbl(big_l1, 1, 21, 1),
         C.KITE_STS_BAD_PARAM),
        ("level 1 array misaligned", pbl(l1 + 4, 4, 12, 1),
         C.KITE_STS_BAD_PARAM),
        ("level 1 array unreadable", pbl(1 << 50, 4, 12, 1),
         C.KITE_STS_DMA_ERROR),
        ("level 2 chunk misaligned", pbl(bad_top, 4, 12, 2),
         C.KITE_STS_BAD_PARAM),
        ("level 2 chunk zero", pbl(zero_top, 4, 12, 2), C.KITE_STS_BAD_PARAM),
        ("level 2 array unreadable", pbl(1 << 50, 4, 12, 2),
         C.KITE_STS_DMA_ERROR),
    ]
    for name, ring, want in bad:
        st, _ = d.exec(C.KITE_CMD_CREATE_CQ, cq_payload(ring, 4, r.eqn))
        check_eq(st, want, "CQ ring: " + name)
        st, _ = d.exec(C.KITE_CMD_CREATE_QP, qp_payload(
            pd, c1, c1, ring, pbl(r.rq_ring, 1)))
        check_eq(st, want, "SQ ring: " + name)
    # A level-2 list whose second chunk holds a zero entry.
    r.level1(chunk1, entries[512:599] + [0])
    st, _ = d.exec(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, 0, 0, 600 * PAGE, pbl(top, 600, 12, 2), 0))
    check_eq(st, C.KITE_STS_BAD_PARAM, "MR level-2 zero entry in chunk 1")
    check("page list entry" in env.q.guest_errors(), "bad entry not logged")
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(key))
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd))
    d.exec_ok(C.KITE_CMD_DESTROY_CQ, destroy_payload(c1))
    d.exec_ok(C.KITE_CMD_DESTROY_CQ, destroy_payload(c2))


def reg_mr_payload(pdn, access, iova, length, desc, variant):
    return struct.pack("<IIQQ", pdn, access, iova, length) + desc + \
        struct.pack("<II", variant, 0)


@test("main")
def test_qp_create_destroy(env):
    d = env.dev[0]
    r = Rdma(d, gids=False)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    cq = r.cq()
    a = r.qp(pd, cq)
    b = r.qp(pd, cq, qp_type=C.KITE_QPT_UD)
    check(a >= 2 and b == a + 1, "QPNs %d, %d" % (a, b))
    d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(a))
    c = r.qp(pd, cq, qp_type=C.KITE_QPT_UC)
    check_eq(c, b + 1, "QPN after destroying %d (no immediate reuse)" % a)
    check_eq(r.query_qp(c)["state"], C.KITE_QPS_RESET, "new QP state")
    gsi = r.qp(pd, cq, qp_type=C.KITE_QPT_GSI)
    check_eq(gsi, 1, "GSI QPN")
    st, _ = d.exec(C.KITE_CMD_CREATE_QP, r.qp_payload(
        pd, cq, cq, qp_type=C.KITE_QPT_GSI))
    check_eq(st, C.KITE_STS_BUSY, "second GSI QP")
    check_eq(obj_counts(d)["qp"], 3, "num_qp")
    # Ownership.
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    upd = d.exec_ok(C.KITE_CMD_ALLOC_PD, uctx=u)[0]
    ucq = r.cq(uctx=u)
    st, _ = d.exec(C.KITE_CMD_CREATE_QP, r.qp_payload(
        upd, ucq, ucq, qp_type=C.KITE_QPT_GSI), uctx=u)
    check_eq(st, C.KITE_STS_PERMISSION, "GSI QP from a user context")
    for name, args in (("kernel PD", (pd, ucq, ucq)),
                       ("kernel send CQ", (upd, cq, ucq)),
                       ("kernel recv CQ", (upd, ucq, cq))):
        st, _ = d.exec(C.KITE_CMD_CREATE_QP, r.qp_payload(*args), uctx=u)
        check_eq(st, C.KITE_STS_PERMISSION, "QP with the " + name)
    uqp = r.qp(upd, ucq, uctx=u)
    for op, payload in ((C.KITE_CMD_DESTROY_QP, destroy_payload(uqp)),
                        (C.KITE_CMD_QUERY_QP, query_obj(uqp, d.outbuf, 72)),
                        (C.KITE_CMD_MODIFY_QP, struct.pack("<II", uqp, 0) +
                         attr_bytes(state=C.KITE_QPS_ERR))):
        st, _ = d.exec(op, payload)
        check_eq(st, C.KITE_STS_PERMISSION, "kernel opcode 0x%x on a "
                 "context's QP" % op)
    # BUSY while referenced.
    for op, h, uctx, what in ((C.KITE_CMD_DESTROY_CQ, ucq, u, "CQ"),
                              (C.KITE_CMD_DEALLOC_PD, upd, u, "PD"),
                              (C.KITE_CMD_DEALLOC_UCTX, u, 0, "context")):
        st, _ = d.exec(op, destroy_payload(h), uctx=uctx)
        check_eq(st, C.KITE_STS_BUSY, what + " used by a QP")
    d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(uqp), uctx=u)
    d.exec_ok(C.KITE_CMD_DESTROY_CQ, destroy_payload(ucq), uctx=u)
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(upd), uctx=u)
    d.exec_ok(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u))
    # Bad parameters.
    sq, rq = pbl(r.sq_ring, 1), pbl(r.rq_ring, 1)
    bad = [
        ("type 4", dict(qp_type=4), C.KITE_STS_BAD_PARAM),
        ("flags", dict(flags=2), C.KITE_STS_BAD_PARAM),
        ("SQ depth 1", dict(sq_log=1), C.KITE_STS_BAD_PARAM),
        ("SQ depth above max_qp_wr", dict(sq_log=15), C.KITE_STS_BAD_PARAM),
        ("RQ depth above max_qp_wr", dict(rq_log=15), C.KITE_STS_BAD_PARAM),
        ("SQ stride 5", dict(sq_stride=5), C.KITE_STS_BAD_PARAM),
        ("SQ stride 10", dict(sq_stride=10), C.KITE_STS_BAD_PARAM),
        ("RQ stride 3", dict(rq_stride=3), C.KITE_STS_BAD_PARAM),
        ("RQ stride 9", dict(rq_stride=9), C.KITE_STS_BAD_PARAM),
        ("SQ ring too small", dict(sq_log=7), C.KITE_STS_BAD_PARAM),
        ("RQ ring too small", dict(rq_log=9), C.KITE_STS_BAD_PARAM),
    ]
    for name, kw, want in bad:
        st, _ = d.exec(C.KITE_CMD_CREATE_QP, qp_payload(pd, cq, cq, sq, rq,
                                                        **kw))
        check_eq(st, want, "CREATE_QP " + name)
    for name, args, want in (("unknown PD", (pd + 50, cq, cq),
                              C.KITE_STS_BAD_HANDLE),
                             ("unknown send CQ", (pd, cq + 50, cq),
                              C.KITE_STS_BAD_HANDLE),
                             ("unknown recv CQ", (pd, cq, 0),
                              C.KITE_STS_BAD_HANDLE)):
        st, _ = d.exec(C.KITE_CMD_CREATE_QP, qp_payload(*args, sq, rq))
        check_eq(st, want, "CREATE_QP " + name)
    # Rings of the largest depth and stride fit exactly.
    big_sq, big_rq = pbl(r.pages, 4, 21), pbl(r.pages, 2, 21)
    big = d.exec_ok(C.KITE_CMD_CREATE_QP, qp_payload(
        pd, cq, cq, big_sq, big_rq, sq_log=14, sq_stride=9, rq_log=14,
        rq_stride=8))[0]
    d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(big))
    st, _ = d.exec(C.KITE_CMD_CREATE_QP, qp_payload(
        pd, cq, cq, pbl(r.pages, 5, 21), big_rq, sq_log=14, sq_stride=9,
        rq_log=14, rq_stride=8))
    check_eq(st, C.KITE_STS_BAD_PARAM, "SQ ring pages beyond the largest SQ")
    for q in (b, c, gsi):
        d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(q))
    st, _ = d.exec(C.KITE_CMD_DESTROY_QP, destroy_payload(b))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DESTROY_QP twice")
    d.exec_ok(C.KITE_CMD_DESTROY_CQ, destroy_payload(cq))
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd))
    check_eq(obj_counts(d), {"uctx": 0, "pd": 0, "cq": 0, "qp": 0, "mr": 0},
             "objects left")


def rc_rtr_attrs(av):
    return dict(state=C.KITE_QPS_RTR, av=av, path_mtu=C.KITE_MTU_1024,
                dest_qpn=0x123456, rq_psn=0xabcdef, max_dest_rd_atomic=4,
                min_rnr_timer=12)


def walk_states(r, qpn, qp_type):
    """RESET -> INIT -> RTR -> RTS -> ERR -> RESET, checked by QUERY_QP."""
    av = av_bytes(V4_DGID, sgid_index=0, net_type=C.KITE_NET_IPV4,
                  hop_limit=17, tclass=0x28, sl=3)
    acc = C.KITE_ACCESS_REMOTE_WRITE | C.KITE_ACCESS_REMOTE_READ
    if qp_type == C.KITE_QPT_UD:
        init = dict(state=C.KITE_QPS_INIT, pkey_index=0, port=1,
                    qkey=0x11111111)
        rtr = dict(state=C.KITE_QPS_RTR)
        rts = dict(state=C.KITE_QPS_RTS, sq_psn=0x654321, qkey=0x22222222)
    elif qp_type == C.KITE_QPT_UC:
        init = dict(state=C.KITE_QPS_INIT, pkey_index=0, port=1,
                    access_flags=C.KITE_ACCESS_REMOTE_WRITE)
        rtr = dict(state=C.KITE_QPS_RTR, av=av, path_mtu=C.KITE_MTU_4096,
                   dest_qpn=0x42, rq_psn=0x777)
        rts = dict(state=C.KITE_QPS_RTS, sq_psn=0x888, access_flags=acc)
    else:
        init = dict(state=C.KITE_QPS_INIT, pkey_index=0, port=1,
                    access_flags=acc | C.KITE_ACCESS_REMOTE_ATOMIC)
        rtr = rc_rtr_attrs(av)
        rts = dict(state=C.KITE_QPS_RTS, sq_psn=0x654321, timeout=14,
                   retry_cnt=7, rnr_retry=7, max_rd_atomic=16,
                   min_rnr_timer=20)
    want = {}
    for step in (init, rtr, rts):
        r.modify_ok(qpn, "type %d to state %d" % (qp_type, step["state"]),
                    **step)
        want.update(step)
        got = r.query_qp(qpn)
        for k, v in want.items():
            check_eq(got[k], v, "type %d state %d: QUERY_QP %s" %
                     (qp_type, step["state"], k))
        check_eq(got["cur_state"], step["state"], "cur_state")
        check_eq(got["attr_mask"], 0, "QUERY_QP attr_mask")
    # RTS -> RTS with cur_state, then ERR and back to RESET.
    r.modify_ok(qpn, "RTS -> RTS", state=C.KITE_QPS_RTS,
                cur_state=C.KITE_QPS_RTS)
    r.modify_ok(qpn, "RTS -> ERR", state=C.KITE_QPS_ERR)
    check_eq(r.query_qp(qpn)["state"], C.KITE_QPS_ERR, "state ERR")
    r.modify_ok(qpn, "ERR -> RESET", state=C.KITE_QPS_RESET)
    got = r.query_qp(qpn)
    check_eq(got["state"], C.KITE_QPS_RESET, "state RESET")
    check_eq(got["dest_qpn"], 0, "RESET clears the attributes")


@test("main")
def test_qp_state_machine(env):
    d = env.dev[0]
    r = Rdma(d)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    cq = r.cq()
    for t in (C.KITE_QPT_RC, C.KITE_QPT_UC, C.KITE_QPT_UD):
        qpn = r.qp(pd, cq, qp_type=t)
        walk_states(r, qpn, t)
        walk_states(r, qpn, t)      # again from RESET
        d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(qpn))
    # INIT -> ERR, ERR -> ERR, RESET -> RESET, RTR -> RESET on an RC QP.
    qpn = r.qp(pd, cq)
    init = dict(state=C.KITE_QPS_INIT, pkey_index=0, port=1, access_flags=0)
    r.modify_ok(qpn, "RESET -> RESET", state=C.KITE_QPS_RESET)
    r.modify_ok(qpn, "RESET -> INIT", **init)
    r.modify_ok(qpn, "INIT -> ERR", state=C.KITE_QPS_ERR)
    r.modify_ok(qpn, "ERR -> ERR", state=C.KITE_QPS_ERR)
    r.modify_ok(qpn, "ERR -> RESET", state=C.KITE_QPS_RESET)
    r.modify_ok(qpn, "RESET -> INIT", **init)
    r.modify_ok(qpn, "INIT -> RTR", **rc_rtr_attrs(av_bytes(V4_DGID)))
    r.modify_ok(qpn, "RTR -> RESET", state=C.KITE_QPS_RESET)
    d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(qpn))
    # GSI: RESET -> INIT needs only the Q_Key.
    gsi = r.qp(pd, cq, qp_type=C.KITE_QPT_GSI)
    r.modify_ok(gsi, "GSI to INIT", state=C.KITE_QPS_INIT, qkey=0x80010000)
    r.modify_ok(gsi, "GSI to RTR", state=C.KITE_QPS_RTR)
    r.modify_ok(gsi, "GSI to RTS", state=C.KITE_QPS_RTS, sq_psn=1)
    # SQD and back.
    r.modify_ok(gsi, "RTS -> SQD", state=C.KITE_QPS_SQD)
    r.modify_ok(gsi, "SQD -> RTS", state=C.KITE_QPS_RTS)
    d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(gsi))
    # Illegal transitions and masks on an RC QP.
    qpn = r.qp(pd, cq)
    av = av_bytes(V4_DGID)
    init = dict(state=C.KITE_QPS_INIT, pkey_index=0, port=1, access_flags=0)
    illegal = [
        ("RESET -> RTS", dict(state=C.KITE_QPS_RTS, sq_psn=1, timeout=1,
                              retry_cnt=1, rnr_retry=1, max_rd_atomic=1),
         C.KITE_STS_BAD_STATE),
        ("RESET -> RTR", rc_rtr_attrs(av), C.KITE_STS_BAD_STATE),
        ("RESET -> SQD", dict(state=C.KITE_QPS_SQD), C.KITE_STS_BAD_STATE),
        ("RESET -> SQE", dict(state=C.KITE_QPS_SQE), C.KITE_STS_BAD_STATE),
        ("state 7", dict(state=7), C.KITE_STS_BAD_PARAM),
        ("RESET -> INIT without ACCESS_FLAGS",
         dict(state=C.KITE_QPS_INIT, pkey_index=0, port=1),
         C.KITE_STS_BAD_PARAM),
        ("RESET -> INIT with QKEY on RC", dict(init, qkey=1),
         C.KITE_STS_BAD_PARAM),
        ("cur_state mismatch", dict(init, cur_state=C.KITE_QPS_INIT),
         C.KITE_STS_BAD_STATE),
        ("cur_state 9", dict(init, cur_state=9), C.KITE_STS_BAD_PARAM),
    ]
    for bit in (2, 14, 18, 19, 21, 31):
        illegal.append(("mask bit %d" % bit, dict(init, extra_mask=1 << bit),
                        C.KITE_STS_BAD_PARAM))
    for name, f, want in illegal:
        check_eq(r.modify(qpn, **f), want, name)
    check_eq(r.query_qp(qpn)["state"], C.KITE_QPS_RESET, "still RESET")
    r.modify_ok(qpn, "RESET -> INIT", cur_state=C.KITE_QPS_RESET, **init)
    r.modify_ok(qpn, "INIT -> INIT", state=C.KITE_QPS_INIT,
                access_flags=C.KITE_ACCESS_REMOTE_READ)
    check_eq(r.modify(qpn, state=C.KITE_QPS_RTS, sq_psn=1, timeout=1,
                      retry_cnt=1, rnr_retry=1, max_rd_atomic=1),
             C.KITE_STS_BAD_STATE, "INIT -> RTS")
    rtr = rc_rtr_attrs(av)
    for missing in ("av", "path_mtu", "dest_qpn", "rq_psn",
                    "max_dest_rd_atomic", "min_rnr_timer"):
        f = dict((k, v) for k, v in rtr.items() if k != missing)
        check_eq(r.modify(qpn, **f), C.KITE_STS_BAD_PARAM,
                 "INIT -> RTR without " + missing)
    # Bad values, each alone in an otherwise valid INIT -> RTR.
    bad_values = [
        ("path_mtu 0", dict(path_mtu=0)),
        ("path_mtu 6", dict(path_mtu=6)),
        ("rq_psn 2^24", dict(rq_psn=1 << 24)),
        ("dest_qpn 2^24", dict(dest_qpn=1 << 24)),
        ("max_dest_rd_atomic cap + 1",
         dict(max_dest_rd_atomic=C.KITE_DEF_MAX_RD_ATOM + 1)),
        ("min_rnr_timer 32", dict(min_rnr_timer=32)),
        ("access 0x10", dict(access_flags=0x10)),
        ("pkey_index 1", dict(pkey_index=1)),
        ("sgid_index 16", dict(av=av_bytes(V4_DGID, sgid_index=16))),
        ("sgid_index empty", dict(av=av_bytes(V4_DGID, sgid_index=5))),
        ("net_type 2", dict(av=av_bytes(V4_DGID, net_type=2))),
        ("IPv6 AV on an IPv4 GID", dict(av=av_bytes(V6_DGID, net_type=1))),
        ("IPv4 AV with an IPv6 dgid", dict(av=av_bytes(V6_DGID))),
        ("flow_label 2^20", dict(av=av_bytes(V6_DGID, sgid_index=1,
                                             net_type=1,
                                             flow_label=1 << 20))),
    ]
    for name, f in bad_values:
        check_eq(r.modify(qpn, **dict(rtr, **f)), C.KITE_STS_BAD_PARAM,
                 "INIT -> RTR with " + name)
    check_eq(r.query_qp(qpn)["state"], C.KITE_QPS_INIT, "still INIT")
    r.modify_ok(qpn, "INIT -> RTR over IPv6", **dict(rtr, av=av_bytes(
        V6_DGID, sgid_index=1, net_type=1, flow_label=0xfffff)))
    rts = dict(state=C.KITE_QPS_RTS, sq_psn=5, timeout=31, retry_cnt=7,
               rnr_retry=7, max_rd_atomic=16)
    for name, f in (("timeout 32", dict(timeout=32)),
                    ("retry_cnt 8", dict(retry_cnt=8)),
                    ("rnr_retry 8", dict(rnr_retry=8)),
                    ("max_rd_atomic cap + 1",
                     dict(max_rd_atomic=C.KITE_DEF_MAX_RD_ATOM + 1)),
                    ("sq_psn 2^24", dict(sq_psn=1 << 24)),
                    ("port (not allowed in RTR -> RTS)", dict(port=1))):
        check_eq(r.modify(qpn, **dict(rts, **f)), C.KITE_STS_BAD_PARAM,
                 "RTR -> RTS with " + name)
    r.modify_ok(qpn, "RTR -> RTS", **rts)
    check_eq(r.modify(qpn, state=C.KITE_QPS_INIT, pkey_index=0, port=1,
                      access_flags=0), C.KITE_STS_BAD_STATE, "RTS -> INIT")
    check_eq(r.modify(qpn, state=C.KITE_QPS_SQE), C.KITE_STS_BAD_STATE,
             "RTS -> SQE")
    r.modify_ok(qpn, "RTS -> ERR", state=C.KITE_QPS_ERR)
    check_eq(r.modify(qpn, state=C.KITE_QPS_RTS), C.KITE_STS_BAD_STATE,
             "ERR -> RTS")
    # UD takes no AV and no path MTU at RTR.
    ud = r.qp(pd, cq, qp_type=C.KITE_QPT_UD)
    r.modify_ok(ud, "UD to INIT", state=C.KITE_QPS_INIT, pkey_index=0,
                port=1, qkey=7)
    check_eq(r.modify(ud, state=C.KITE_QPS_RTR, av=av), C.KITE_STS_BAD_PARAM,
             "UD INIT -> RTR with an AV")
    check_eq(r.modify(ud, state=C.KITE_QPS_RTR, path_mtu=3),
             C.KITE_STS_BAD_PARAM, "UD INIT -> RTR with a path MTU")
    check_eq(r.modify(ud + 1000, state=C.KITE_QPS_ERR),
             C.KITE_STS_BAD_HANDLE, "MODIFY_QP of an unknown QP")
    st, _ = d.exec(C.KITE_CMD_QUERY_QP, query_obj(ud, d.outbuf, 71))
    check_eq(st, C.KITE_STS_BAD_PARAM, "QUERY_QP short buffer")
    for q in (qpn, ud):
        d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(q))


@test("main")
def test_qp_exhaustion(env):
    d = env.dev[0]
    r = Rdma(d, gids=False)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    cq = r.cq()
    max_qp = d.rd(C.KITE_REG_CAP_MAX_QP)
    payload = r.qp_payload(pd, cq, cq)
    res = batch(d, [(C.KITE_CMD_CREATE_QP, payload, 0)] * max_qp)
    check(all(st == C.KITE_STS_OK for st, _ in res), "CREATE_QP failed")
    qpns = [out[0] for _, out in res]
    check_eq(qpns, list(range(2, 2 + max_qp)), "cyclic QPNs")
    st, _ = d.exec(C.KITE_CMD_CREATE_QP, payload)
    check_eq(st, C.KITE_STS_NO_RESOURCES, "CREATE_QP beyond max_qp")
    check_eq(obj_counts(d)["qp"], max_qp, "num_qp")
    d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(5))
    check_eq(r.qp(pd, cq), 2 + max_qp, "next QPN after the last one")
    d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(2 + max_qp))
    check_eq(r.qp(pd, cq), 3 + max_qp, "next QPN again")
    qpns = [q for q in qpns if q != 5] + [3 + max_qp]
    res = batch(d, [(C.KITE_CMD_DESTROY_QP, destroy_payload(q), 0)
                    for q in qpns])
    check(all(st == C.KITE_STS_OK for st, _ in res), "DESTROY_QP failed")
    check_eq(obj_counts(d)["qp"], 0, "num_qp after destroying all")
    d.exec_ok(C.KITE_CMD_DESTROY_CQ, destroy_payload(cq))
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd))


@test("main")
def test_mr(env):
    d = env.dev[0]
    r = Rdma(d, eq=False, gids=False)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    lw = C.KITE_ACCESS_LOCAL_WRITE
    rw = C.KITE_ACCESS_REMOTE_WRITE
    rr = C.KITE_ACCESS_REMOTE_READ
    ra = C.KITE_ACCESS_REMOTE_ATOMIC
    # 3 pages: iova 0x...800 + 8 KiB touches three 4 KiB pages.
    desc = pbl(r.pages, 3)
    k1 = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, lw | rw | rr | ra, 0x7000800, 0x2000, desc, 0x5a))[0]
    check_eq(k1 & 0xff, 0x5a, "key variant")
    check(k1 >> 8 >= 1, "key index %d" % (k1 >> 8))
    check_eq(obj_counts(d)["mr"], 1, "num_mr")
    st, _ = d.exec(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd))
    check_eq(st, C.KITE_STS_BUSY, "DEALLOC_PD with an MR")
    st, _ = d.exec(C.KITE_CMD_DEREG_MR, destroy_payload(k1 ^ 1))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DEREG_MR with the wrong variant")
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(k1))
    # The same index registered again with a new variant: the old key is
    # stale.
    k2 = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, 0, 0x7000800, 0x2000, desc, 0x5b))[0]
    check_eq(k2 >> 8, k1 >> 8, "index reused")
    st, _ = d.exec(C.KITE_CMD_DEREG_MR, destroy_payload(k1))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DEREG_MR of a stale key")
    for h in (0, 0xff, 0xffffffff, (C.KITE_DEF_MAX_MR + 1) << 8):
        st, _ = d.exec(C.KITE_CMD_DEREG_MR, destroy_payload(h))
        check_eq(st, C.KITE_STS_BAD_HANDLE, "DEREG_MR 0x%x" % h)
    # DMA MR: kernel only, local access only, all-zero page list.
    dma = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, lw, 0, 0, bytes(16), C.KITE_MR_DMA_ALL | 3))[0]
    check_eq(dma & 0xff, 3, "DMA MR variant")
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    upd = d.exec_ok(C.KITE_CMD_ALLOC_PD, uctx=u)[0]
    st, _ = d.exec(C.KITE_CMD_REG_MR, reg_mr_payload(
        upd, lw, 0, 0, bytes(16), C.KITE_MR_DMA_ALL), uctx=u)
    check_eq(st, C.KITE_STS_PERMISSION, "DMA MR from a user context")
    max_size = C.KITE_DEF_MAX_MR_SIZE
    bad = [
        ("REMOTE_WRITE without LOCAL_WRITE", (pd, rw, 0, PAGE, pbl(
            r.pages, 1), 0)),
        ("REMOTE_ATOMIC without LOCAL_WRITE", (pd, ra | rr, 0, PAGE, pbl(
            r.pages, 1), 0)),
        ("unknown access bit", (pd, 0x10, 0, PAGE, pbl(r.pages, 1), 0)),
        ("length 0", (pd, 0, 0, 0, pbl(r.pages, 1), 0)),
        ("length above max_mr_size", (pd, 0, 0, max_size + 1, pbl(
            r.pages, (max_size >> 30) + 1, 30), 0)),
        ("iova + length wraps", (pd, 0, (1 << 64) - PAGE, 2 * PAGE, pbl(
            r.pages, 2), 0)),
        ("too few pages", (pd, 0, 0x800, PAGE, pbl(r.pages, 1), 0)),
        ("too many pages", (pd, 0, 0, PAGE, pbl(r.pages, 2), 0)),
        ("level 0 without pages", (pd, 0, 0, PAGE, pbl(r.pages, 0), 0)),
        ("key_variant bits 30:8", (pd, 0, 0, PAGE, pbl(r.pages, 1), 0x100)),
        ("DMA MR with remote read", (pd, lw | rr, 0, 0, bytes(16),
                                     C.KITE_MR_DMA_ALL)),
        ("DMA MR with a page list", (pd, lw, 0, 0, pbl(r.pages, 1),
                                     C.KITE_MR_DMA_ALL)),
    ]
    for name, args in bad:
        st, _ = d.exec(C.KITE_CMD_REG_MR, reg_mr_payload(*args))
        check_eq(st, C.KITE_STS_BAD_PARAM, "REG_MR " + name)
    st, _ = d.exec(C.KITE_CMD_REG_MR, reg_mr_payload(
        upd, 0, 0, PAGE, pbl(r.pages, 1), 0))
    check_eq(st, C.KITE_STS_PERMISSION, "REG_MR on a context's PD")
    st, _ = d.exec(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd + 100, 0, 0, PAGE, pbl(r.pages, 1), 0))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "REG_MR on an unknown PD")
    # A 1 GiB MR in one 1 GiB page (not backed: the device reads no data);
    # 2 MiB pages at level 1.
    big = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, lw, 0x40000000, 1 << 30, pbl(1 << 40, 1, 30), 1))[0]
    # iova 0x1000 + 6 MiB touches four 2 MiB pages.
    l1 = r.level1(r.lists, [(1 << 40) + i * (1 << 21) for i in range(4)])
    st, _ = d.exec(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, lw | rr, 0x1000, 3 << 21, pbl(l1, 3, 21, 1), 2))
    check_eq(st, C.KITE_STS_BAD_PARAM, "3 pages for 4 pages of data")
    huge = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, lw | rr, 0x1000, 3 << 21, pbl(l1, 4, 21, 1), 2))
    umr = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        upd, lw | rw, 0, PAGE, pbl(r.pages, 1), 9), uctx=u)[0]
    st, _ = d.exec(C.KITE_CMD_DEREG_MR, destroy_payload(umr))
    check_eq(st, C.KITE_STS_PERMISSION, "kernel deregisters a context's MR")
    st, _ = d.exec(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u))
    check_eq(st, C.KITE_STS_BUSY, "DEALLOC_UCTX with an MR")
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(umr), uctx=u)
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(upd), uctx=u)
    d.exec_ok(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u))
    for k in (k2, dma, big, huge[0]):
        d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(k))
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd))
    check_eq(obj_counts(d)["mr"], 0, "num_mr")


@test("main")
def test_reset_clears_rdma_objects(env):
    d = env.dev[0]
    r = Rdma(d, gids=False)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    cq = r.cq()
    qp = r.qp(pd, cq)
    key = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, 0, 0, PAGE, pbl(r.pages, 1), 0))[0]
    r = Rdma(d, gids=False)         # reset + enable
    check_eq(obj_counts(d), {"uctx": 0, "pd": 0, "cq": 0, "qp": 0, "mr": 0},
             "objects after reset")
    for op, h in ((C.KITE_CMD_DESTROY_QP, qp), (C.KITE_CMD_DESTROY_CQ, cq),
                  (C.KITE_CMD_DEREG_MR, key)):
        st, _ = d.exec(op, destroy_payload(h))
        check_eq(st, C.KITE_STS_BAD_HANDLE, "opcode 0x%x after reset" % op)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    check_eq(r.qp(pd, r.cq()), 2, "QPNs start again at 2 after reset")


# The device whose kite_mr_map() test_mr_map drives through QOM.
K0 = "/machine/peripheral/k0"


def mr_map(d, key, pdn, access, addr, length, max_ranges=16, path=K0):
    """The device's MR lookup through x-mr-map: (CQE status, [(dma, len)])."""
    d.q.qmp("qom-set", path=path, property="x-mr-map",
            value={"key": key, "pdn": pdn, "access": access, "addr": addr,
                   "len": length, "max-ranges": max_ranges})
    r = d.q.qmp("qom-get", path=path, property="x-mr-map-result")
    return r["status"], [(x["addr"], x["len"]) for x in r["ranges"]]


def qmp_error(q, command, **args):
    """The error description of a QMP command that must fail."""
    try:
        q.qmp(command, **args)
    except TestFailure as e:
        return str(e)
    raise TestFailure("QMP %s %r succeeded" % (command, args))


@test("main")
def test_mr_map(env):
    """Key, PD, bounds and access checks and the page walk of kite_mr_map."""
    d = env.dev[0]
    r = Rdma(d, eq=False, gids=False)
    ok, prot, acc = (C.KITE_CQE_SUCCESS, C.KITE_CQE_LOC_PROT_ERR,
                     C.KITE_CQE_LOC_ACCESS_ERR)
    lw, rw, rr = (C.KITE_ACCESS_LOCAL_WRITE, C.KITE_ACCESS_REMOTE_WRITE,
                  C.KITE_ACCESS_REMOTE_READ)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    pd2 = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    p = [r.pages + i * PAGE for i in range(8)]
    # Level 0: iova ...800 + 8 KiB over three contiguous pages.
    iova = 0x7000800
    k0 = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, lw | rr, iova, 0x2000, pbl(p[0], 3), 0x11))[0]
    check_eq(mr_map(d, k0, pd, 0, iova, 0x2000),
             (ok, [(p[0] + 0x800, 0x2000)]), "level 0 whole MR")
    check_eq(mr_map(d, k0, pd, lw | rr, iova + 0x1000, 0x10),
             (ok, [(p[1] + 0x800, 0x10)]), "level 0 inside")
    check_eq(mr_map(d, k0, pd, 0, iova, 0), (ok, []), "zero length")
    for name, args, want in (
            ("below iova", (k0, pd, 0, iova - 1, 2), prot),
            ("beyond the end", (k0, pd, 0, iova + 0x1fff, 2), prot),
            ("wrapping", (k0, pd, 0, (1 << 64) - 1, 2), prot),
            ("another PD", (k0, pd2, 0, iova, 1), prot),
            ("stale variant", (k0 ^ 1, pd, 0, iova, 1), prot),
            ("unknown index", (k0 + 0x100, pd, 0, iova, 1), prot),
            ("key 0", (0, pd, 0, iova, 1), prot),
            ("remote write not granted", (k0, pd, rw, iova, 1), acc)):
        check_eq(mr_map(d, *args)[0], want, "map " + name)
    # Level 1: four scattered pages, iova offset 0x100 in the first one.
    lst = r.level1(r.lists, [p[2], p[0], p[3], p[1]])
    iova = 0x10100
    k1 = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, lw | rw, iova, 0x3000, pbl(lst, 4, 12, 1), 0x22))[0]
    check_eq(mr_map(d, k1, pd, rw, iova, 0x3000),
             (ok, [(p[2] + 0x100, 0xf00), (p[0], 0x1000), (p[3], 0x1000),
                   (p[1], 0x100)]), "level 1 whole MR")
    check_eq(mr_map(d, k1, pd, 0, iova, 0x3000, max_ranges=3)[0], prot,
             "more pieces than ranges")
    # The list is read at use time: a changed entry is seen at once, an
    # invalid one fails the access.
    d.q.write(lst + 8, struct.pack("<Q", p[5]))
    check_eq(mr_map(d, k1, pd, 0, iova + 0xf00, 0x1000),
             (ok, [(p[5], 0x1000)]), "level 1 entry changed")
    d.q.write(lst + 8, struct.pack("<Q", 0))
    check_eq(mr_map(d, k1, pd, 0, iova + 0xf00, 0x1000)[0], prot,
             "level 1 entry zeroed")
    check_eq(mr_map(d, k1, pd, 0, iova, 0xf00),
             (ok, [(p[2] + 0x100, 0xf00)]), "other pages still map")
    # Level 2: 600 contiguous pages merge into one range; a discontinuity
    # at the chunk boundary splits it.
    far = 1 << 40
    chunk0, chunk1, top = r.lists + 0x1000, r.lists + 0x2000, r.lists + 0x3000
    entries = [far + i * PAGE for i in range(600)]
    r.level1(chunk0, entries[:512])
    r.level1(chunk1, entries[512:])
    r.level1(top, [chunk0, chunk1])
    k2 = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, lw, 0, 600 * PAGE, pbl(top, 600, 12, 2), 0x33))[0]
    check_eq(mr_map(d, k2, pd, 0, 0, 600 * PAGE),
             (ok, [(far, 600 * PAGE)]), "level 2 whole MR")
    r.level1(chunk1, [far + (1 << 30)])
    check_eq(mr_map(d, k2, pd, lw, 511 * PAGE + 16, PAGE),
             (ok, [(far + 511 * PAGE + 16, PAGE - 16),
                   (far + (1 << 30), 16)]), "level 2 across chunks")
    check_eq(mr_map(d, k2, pd, 0, 599 * PAGE, PAGE + 1)[0], prot,
             "level 2 beyond the end")
    # DMA MR: identity, local access only.
    kd = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, lw, 0, 0, bytes(16), C.KITE_MR_DMA_ALL | 0x44))[0]
    check_eq(mr_map(d, kd, pd, lw, 0x123456, 100),
             (ok, [(0x123456, 100)]), "DMA MR")
    check_eq(mr_map(d, kd, pd, rr, 0x123456, 100)[0], acc,
             "DMA MR remote read")
    # Deregistered keys no longer map.
    for k in (k0, k1, k2, kd):
        d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(k))
    check_eq(mr_map(d, k0, pd, 0, 0x7000800, 1)[0], prot,
             "deregistered key")
    # The request reads back as set, max-ranges 16 when left out.
    q = d.q
    req = {"key": k1, "pdn": pd, "access": lw, "addr": 0x10100, "len": 8}
    q.qmp("qom-set", path=K0, property="x-mr-map", value=req)
    check_eq(q.qmp("qom-get", path=K0, property="x-mr-map"),
             dict(req, **{"max-ranges": 16}), "x-mr-map read back")
    # Bad requests are refused and leave the last one in place.
    for name, bad, want in (
            ("without ranges", dict(req, **{"max-ranges": 0}),
             "max-ranges must be 1 to 16"),
            ("too many ranges", dict(req, **{"max-ranges": 17}),
             "max-ranges must be 1 to 16"),
            ("a member missing", {"key": k1, "pdn": pd},
             "'x-mr-map.access' is missing"),
            ("an unknown member", dict(req, pd=pd),
             "'x-mr-map.pd' is unexpected"),
            ("a negative key", dict(req, key=-1), "'key' expects uint32")):
        err = qmp_error(q, "qom-set", path=K0, property="x-mr-map",
                        value=bad)
        check(want in err, "x-mr-map with %s: %s" % (name, err))
    check_eq(q.qmp("qom-get", path=K0, property="x-mr-map"),
             dict(req, **{"max-ranges": 16}), "x-mr-map after refusals")
    err = qmp_error(q, "qom-set", path=K0, property="x-mr-map-result",
                    value={"status": 0, "ranges": []})
    check("not writable" in err, "x-mr-map-result written: %s" % err)
    # The lookup is per device: k1 has no MRs.
    check_eq(mr_map(d, kd, pd, lw, 0x123456, 100,
                    path="/machine/peripheral/k1"), (prot, []),
             "another device's MR table")
    # No admin opcode reaches the lookup: above KITE_CMD_MAX every opcode
    # is unknown, as on any device.
    for op in (C.KITE_CMD_MAX + 1, 0xfe, 0xff):
        check_eq(d.exec(op, bytes(120))[0], C.KITE_STS_BAD_OPCODE,
                 "admin opcode 0x%x" % op)


# --------------------------------------------------------------------------
# Data path: the RoCEv2 engine behind doorbells, CQEs and events
# --------------------------------------------------------------------------

CQE_SIZE = 32
SQ_LOG, SQ_STRIDE = 4, 7        # 16 x 128 B
RQ_LOG, RQ_STRIDE = 4, 5        # 16 x 32 B: one SGE
MR_IOVA = 0x5550000
MR_PAGES = 16
ACC_ALL = (C.KITE_ACCESS_LOCAL_WRITE | C.KITE_ACCESS_REMOTE_WRITE |
           C.KITE_ACCESS_REMOTE_READ | C.KITE_ACCESS_REMOTE_ATOMIC)
RC_TIMEOUT = 14                 # 4.096 us << 14 = 67 ms of virtual time


def db_write(d, off, num, index, flags=0, page=0):
    d.q.writeq(d.db + page * C.KITE_DB_PAGE_SIZE + off,
               (index << C.KITE_DB_INDEX_SHIFT) |
               (flags << C.KITE_DB_FLAGS_SHIFT) | num)


class Cq:
    """A kernel CQ whose ring the test polls like a consumer."""

    def __init__(self, r, index, log_depth=4, eqn=None):
        self.d = r.d
        self.ring = r.cq_ring + index * 0x1000
        self.log = log_depth
        r.d.q.memset(self.ring, CQE_SIZE << log_depth, 0)   # as a driver does
        self.cqn = r.d.exec_ok(C.KITE_CMD_CREATE_CQ, cq_payload(
            pbl(self.ring, 1), log_depth, r.eqn if eqn is None else eqn))[0]
        self.ci = 0

    def peek(self, index):
        raw = self.d.q.read(self.ring + (index % (1 << self.log)) *
                            CQE_SIZE, CQE_SIZE)
        f = struct.unpack("<IHBBIIIHBB6sBB", raw)
        names = ["qpn", "wqe_idx", "opcode", "status", "byte_len", "imm",
                 "src_qp", "pkey_index", "net_hdr", "vendor_err", "smac",
                 "reserved", "flags"]
        return dict(zip(names, f)), raw

    def ready(self, index):
        phase = ((index >> self.log) & 1) ^ 1
        return self.peek(index)[0]["flags"] & C.KITE_CQE_F_PHASE == phase

    def poll(self, what, timeout=POLL_TIMEOUT, step=None):
        """Next CQE (waits for it); advances the consumer index."""
        deadline = time.time() + timeout
        while not self.ready(self.ci):
            if time.time() > deadline:
                raise TestFailure("no CQE %d on CQ %d: %s" %
                                  (self.ci, self.cqn, what))
            if step:
                step()
            time.sleep(0.002)
        cqe, _ = self.peek(self.ci)
        self.ci += 1
        return cqe

    def empty(self):
        return not self.ready(self.ci)

    def doorbell(self, flags=0):
        db_write(self.d, C.KITE_DB_CQ, self.cqn, self.ci, flags)


class Qp:
    """A kernel RC QP with its own rings; WQEs built like a driver does."""

    def __init__(self, r, index, pd, scq, rcq, qp_type=C.KITE_QPT_RC,
                 sq_log=SQ_LOG):
        self.d, self.r = r.d, r
        self.sq = r.sq_ring + index * 0x2000
        self.rq = r.rq_ring + index * 0x1000
        self.sq_log, self.rq_log = sq_log, RQ_LOG
        self.qpn = r.d.exec_ok(C.KITE_CMD_CREATE_QP, qp_payload(
            pd, scq.cqn, rcq.cqn, pbl(self.sq, 1), pbl(self.rq, 1),
            qp_type=qp_type, sq_log=sq_log, sq_stride=SQ_STRIDE,
            rq_log=RQ_LOG, rq_stride=RQ_STRIDE))[0]
        self.sq_pi = self.rq_pi = 0

    def connect(self, dest_qpn, dgid, dmac, sq_psn, rq_psn, net_type=0,
                sgid_index=0, mtu=C.KITE_MTU_1024, rnr_retry=7, uc=False):
        r = self.r
        av = av_bytes(dgid, dmac=dmac, sgid_index=sgid_index,
                      net_type=net_type)
        r.modify_ok(self.qpn, "RESET -> INIT", state=C.KITE_QPS_INIT,
                    pkey_index=0, port=1,
                    access_flags=C.KITE_ACCESS_REMOTE_WRITE if uc else
                    ACC_ALL)
        if uc:
            r.modify_ok(self.qpn, "UC INIT -> RTR", state=C.KITE_QPS_RTR,
                        av=av, path_mtu=mtu, dest_qpn=dest_qpn,
                        rq_psn=rq_psn)
            r.modify_ok(self.qpn, "UC RTR -> RTS", state=C.KITE_QPS_RTS,
                        sq_psn=sq_psn)
            return
        r.modify_ok(self.qpn, "INIT -> RTR", state=C.KITE_QPS_RTR, av=av,
                    path_mtu=mtu, dest_qpn=dest_qpn, rq_psn=rq_psn,
                    max_dest_rd_atomic=4, min_rnr_timer=1)
        r.modify_ok(self.qpn, "RTR -> RTS", state=C.KITE_QPS_RTS,
                    sq_psn=sq_psn, timeout=RC_TIMEOUT, retry_cnt=7,
                    rnr_retry=rnr_retry, max_rd_atomic=4)

    def post_recv(self, addr, length, lkey, ring=True):
        slot = self.rq_pi % (1 << self.rq_log)
        wqe = struct.pack("<B15x", 1) + struct.pack("<QII", addr, length,
                                                    lkey)
        self.d.q.write(self.rq + (slot << RQ_STRIDE), wqe)
        self.rq_pi += 1
        if ring:
            db_write(self.d, C.KITE_DB_RQ, self.qpn, self.rq_pi)
        return slot

    def post_send(self, opcode, sges=(), seg=b"", flags=None, imm=0,
                  ring=True):
        if flags is None:
            flags = C.KITE_WQE_F_SIGNALED
        slot = self.sq_pi % (1 << self.sq_log)
        wqe = struct.pack("<BBBBHHII", opcode, flags, len(sges), 0, 0, 0,
                          imm, 0) + seg
        for addr, length, lkey in sges:
            wqe += struct.pack("<QII", addr, length, lkey)
        self.d.q.write(self.sq + (slot << SQ_STRIDE), wqe)
        self.sq_pi += 1
        if ring:
            db_write(self.d, C.KITE_DB_SQ, self.qpn, self.sq_pi)
        return slot

    def stats(self, uctx=0, buflen=128):
        d = self.d
        d.q.memset(d.outbuf, 0x100, 0xee)
        st, out = d.exec(C.KITE_CMD_QUERY_QP_STATS,
                         query_obj(self.qpn, d.outbuf, buflen), uctx=uctx)
        if st != C.KITE_STS_OK:
            return st, None
        check_eq(out[0], 128, "QUERY_QP_STATS out[0]")
        names = ["tx_packets", "tx_bytes", "rx_packets", "rx_bytes",
                 "retransmits", "timeouts", "naks_sent", "naks_rcvd",
                 "rnr_naks_sent", "rnr_naks_rcvd", "dup_requests"]
        raw = d.q.read(d.outbuf, 128)
        check_eq(raw[88:], bytes(40), "QUERY_QP_STATS reserved")
        return st, dict(zip(names, struct.unpack_from("<11Q", raw)))


class Node:
    """One device's RDMA setup: PD, MR over 16 pages, CQs."""

    def __init__(self, d, mac):
        self.d = d
        self.r = Rdma(d)
        d.q.memset(d.eq_rings, PAGE, 0)     # the completion EQ's ring
        self.mac = mac_bytes(mac)
        self.pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
        self.buf = self.r.pages
        d.q.memset(self.buf, MR_PAGES * PAGE, 0)
        self.key = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
            self.pd, ACC_ALL, MR_IOVA, MR_PAGES * PAGE,
            pbl(self.buf, MR_PAGES), 0x31))[0]
        self.ncq = 0
        self.nqp = 0

    def cq(self, log_depth=4, eqn=None):
        c = Cq(self.r, self.ncq, log_depth, eqn)
        self.ncq += 1
        return c

    def qp(self, scq, rcq, **kw):
        q = Qp(self.r, self.nqp, self.pd, scq, rcq, **kw)
        self.nqp += 1
        return q

    def va(self, off):
        return MR_IOVA + off

    def write(self, off, data):
        self.d.q.write(self.buf + off, data)

    def read(self, off, n):
        return self.d.q.read(self.buf + off, n)


def pattern(n, seed):
    return bytes((seed + i * 7 + (i >> 8)) & 0xff for i in range(n))


def loopback_pair(env, dev=0, mac=MAC_A, send_cq_log=4, uc=False,
                  rnr_retry=7):
    """Two connected RC (or UC) QPs on one device (AV dmac = its MAC)."""
    n = Node(env.dev[dev], mac)
    a_cq, b_cq = n.cq(send_cq_log), n.cq()
    qp_type = C.KITE_QPT_UC if uc else C.KITE_QPT_RC
    a = n.qp(a_cq, a_cq, qp_type=qp_type)
    b = n.qp(b_cq, b_cq, qp_type=qp_type)
    a.connect(b.qpn, V4_GID, n.mac, sq_psn=0x100, rq_psn=0x200, uc=uc,
              rnr_retry=rnr_retry)
    b.connect(a.qpn, V4_GID, n.mac, sq_psn=0x200, rq_psn=0x100, uc=uc,
              rnr_retry=rnr_retry)
    return n, a, a_cq, b, b_cq


def check_cqe(cqe, qpn, wqe_idx, opcode, byte_len, status=None, what=""):
    status = C.KITE_CQE_SUCCESS if status is None else status
    check_eq(cqe["status"], status, what + " CQE status")
    check_eq(cqe["qpn"], qpn, what + " CQE qpn")
    check_eq(cqe["wqe_idx"], wqe_idx, what + " CQE wqe_idx")
    check_eq(cqe["opcode"], opcode, what + " CQE opcode")
    if byte_len is not None:
        check_eq(cqe["byte_len"], byte_len, what + " CQE byte_len")


def async_events(d, count):
    """The first count async EQEs after bring-up: [(type, data)]."""
    ev = []
    for i in range(count):
        wait_for(lambda: d.eqe(i)[3] & 1 == ((i >> d.aeq_log) & 1) ^ 1,
                 "async event %d" % i)
        data, _, typ, _ = d.eqe(i)
        ev.append((typ, data))
    return ev


def comp_eqe(r, index):
    raw = r.d.q.read(r.d.eq_rings + (index % 256) * 16, 16)
    data, data2, _, _, typ, flags = struct.unpack("<IIIHBB", raw)
    return data, typ, flags


@test("main")
def test_dp_cap_flags(env):
    d = env.dev[0]
    d.bring_up()
    want = (C.KITE_DEV_CAP_RC | C.KITE_DEV_CAP_UC | C.KITE_DEV_CAP_UD |
            C.KITE_DEV_CAP_ATOMIC | C.KITE_DEV_CAP_IPV6)
    check_eq(d.rd(C.KITE_REG_CAP_FLAGS), want, "CAP_FLAGS")
    st, _, raw = d.query(C.KITE_CMD_QUERY_DEVICE, 128)
    check_eq(struct.unpack_from("<I", raw, 80)[0], d.rd(C.KITE_REG_CAP_FLAGS),
             "QUERY_DEVICE cap_flags")


@test("main")
def test_dp_loopback_send(env):
    n, a, a_cq, b, b_cq = loopback_pair(env)
    msg = pattern(3000, 5)          # three packets at MTU 1024
    n.write(0, msg)
    rslot = b.post_recv(n.va(0x4000), 0x2000, n.key)
    sslot = a.post_send(C.KITE_WQE_SEND, [(n.va(0), len(msg), n.key)])
    cqe = a_cq.poll("SEND completion")
    check_cqe(cqe, a.qpn, sslot, C.KITE_CQE_SEND, len(msg), what="send")
    cqe = b_cq.poll("RECV completion")
    check_cqe(cqe, b.qpn, rslot, C.KITE_CQE_RECV, len(msg), what="recv")
    check_eq(cqe["flags"] & C.KITE_CQE_F_IMM, 0, "recv CQE IMM flag")
    check_eq(n.read(0x4000, len(msg)), msg, "received bytes")
    check_eq(n.read(0x4000 + len(msg), 16), bytes(16), "bytes after msg")
    # SEND_IMM, two WQEs behind one doorbell, the first unsignaled.
    b.post_recv(n.va(0x6000), 0x100, n.key)
    r2 = b.post_recv(n.va(0x6100), 0x100, n.key)
    n.write(0x100, b"first-" * 4)
    a.post_send(C.KITE_WQE_SEND, [(n.va(0x100), 24, n.key)], flags=0,
                ring=False)
    s2 = a.post_send(C.KITE_WQE_SEND_IMM, [(n.va(0x100), 6, n.key)],
                     imm=0x78563412)
    cqe = a_cq.poll("SEND_IMM completion")
    check_cqe(cqe, a.qpn, s2, C.KITE_CQE_SEND, 6, what="send_imm")
    check(a_cq.empty(), "a CQE for the unsignaled SEND")
    b_cq.poll("first RECV")
    cqe = b_cq.poll("RECV with immediate")
    check_cqe(cqe, b.qpn, r2, C.KITE_CQE_RECV, 6, what="recv imm")
    check(cqe["flags"] & C.KITE_CQE_F_IMM, "no IMM flag")
    check_eq(cqe["imm"], 0x78563412, "immediate data (wire order)")
    check_eq(n.read(0x6000, 24), b"first-" * 4, "first message")
    # Counters: per QP and per port.
    st, sa = a.stats()
    check_eq(st, C.KITE_STS_OK, "QUERY_QP_STATS")
    _, sb = b.stats()
    check(sa["tx_packets"] >= 5 and sa["tx_bytes"] > len(msg),
          "requester counters: %r" % sa)
    check(sa["rx_packets"] >= 1, "requester saw no ACK: %r" % sa)
    check(sb["rx_packets"] >= 5 and sb["rx_bytes"] > len(msg),
          "responder counters: %r" % sb)
    cnt = stats(n.d)
    check(cnt["roce_tx_packets"] >= 6 and cnt["roce_rx_packets"] >= 6,
          "port counters: %r" % cnt)
    check(cnt["roce_tx_bytes"] > len(msg), "roce_tx_bytes")
    check_eq(cnt["wire_dropped"], 0, "wire_dropped")
    check_eq(cnt["eth_rx_packets"] + cnt["eth_rx_dropped"], 0,
             "RoCE frames reached the Ethernet port")
    qa = n.r.query_qp(a.qpn)
    check_eq(qa["state"], C.KITE_QPS_RTS, "QP state")
    check_eq(qa["sq_psn"], 0x105, "QUERY_QP sq_psn after 5 packets")
    check_eq(n.r.query_qp(b.qpn)["rq_psn"], 0x105, "QUERY_QP rq_psn")


@test("main")
def test_dp_loopback_write_read_atomic(env):
    n, a, a_cq, b, b_cq = loopback_pair(env)
    data = pattern(5000, 9)
    n.write(0, data)
    # WRITE 5000 bytes from offset 0 to offset 0x8000 (B's side of the MR).
    raddr = struct.pack("<QII", n.va(0x8000), n.key, 0)
    s = a.post_send(C.KITE_WQE_WRITE, [(n.va(0), len(data), n.key)], raddr)
    check_cqe(a_cq.poll("WRITE"), a.qpn, s, C.KITE_CQE_WRITE, len(data),
              what="write")
    check_eq(n.read(0x8000, len(data)), data, "written bytes")
    check(b_cq.empty(), "WRITE consumed a receive")
    # READ them back into offset 0x2000 over two SGEs.
    raddr = struct.pack("<QII", n.va(0x8000), n.key, 0)
    s = a.post_send(C.KITE_WQE_READ, [(n.va(0x2000), 1000, n.key),
                                      (n.va(0x3000), 4000, n.key)], raddr)
    check_cqe(a_cq.poll("READ"), a.qpn, s, C.KITE_CQE_READ, len(data),
              what="read")
    check_eq(n.read(0x2000, 1000) + n.read(0x3000, 4000), data, "read bytes")
    # FETCH_ADD and CMP_SWP on an 8-byte word at 0xa000.
    n.write(0xa000, struct.pack("<Q", 1000))
    seg = struct.pack("<QIIQQ", n.va(0xa000), n.key, 0, 5, 0)
    s = a.post_send(C.KITE_WQE_FETCH_ADD, [(n.va(0xb000), 8, n.key)], seg)
    check_cqe(a_cq.poll("FETCH_ADD"), a.qpn, s, C.KITE_CQE_FETCH_ADD, None,
              what="fetch_add")
    check_eq(struct.unpack("<Q", n.read(0xb000, 8))[0], 1000, "original")
    check_eq(struct.unpack("<Q", n.read(0xa000, 8))[0], 1005, "sum")
    seg = struct.pack("<QIIQQ", n.va(0xa000), n.key, 0, 77, 1005)
    s = a.post_send(C.KITE_WQE_CMP_SWP, [(n.va(0xb008), 8, n.key)], seg)
    check_cqe(a_cq.poll("CMP_SWP"), a.qpn, s, C.KITE_CQE_CMP_SWP, None,
              what="cmp_swp")
    check_eq(struct.unpack("<Q", n.read(0xb008, 8))[0], 1005, "original 2")
    check_eq(struct.unpack("<Q", n.read(0xa000, 8))[0], 77, "swapped")
    # A bad rkey: remote access error, the QP goes to ERR.
    raddr = struct.pack("<QII", n.va(0x8000), n.key ^ 0x100, 0)
    s = a.post_send(C.KITE_WQE_WRITE, [(n.va(0), 16, n.key)], raddr)
    cqe = a_cq.poll("WRITE with a bad rkey")
    check_eq(cqe["status"], C.KITE_CQE_REM_ACCESS_ERR, "bad rkey status")
    check_eq(cqe["wqe_idx"], s, "bad rkey wqe_idx")
    wait_for(lambda: n.r.query_qp(a.qpn)["state"] == C.KITE_QPS_ERR,
             "requester QP in ERR")


@test("main")
def test_dp_cq_arming(env):
    n, a, a_cq, b, b_cq = loopback_pair(env)
    r = n.r
    vec = C.KITE_MSIX_COMP_BASE
    n.d.eq_doorbell(r.eqn, 0, True)
    n.d.take_irq(vec)
    b_cq.doorbell(C.KITE_DB_CQ_ARM_NEXT)
    out = n.d.exec_ok(C.KITE_CMD_QUERY_CQ, query_obj(b_cq.cqn))
    check_eq(out[2], C.KITE_CQ_FLAG_ARMED, "armed")
    n.write(0, b"hello")
    b.post_recv(n.va(0x1000), 64, n.key)
    a.post_send(C.KITE_WQE_SEND, [(n.va(0), 5, n.key)])
    b_cq.poll("RECV")
    a_cq.poll("SEND")
    wait_for(lambda: comp_eqe(r, 0)[2] & 1 == 1, "completion EQE")
    data, typ, _ = comp_eqe(r, 0)
    check_eq(typ, C.KITE_EVT_COMPLETION, "EQE type")
    check_eq(data, b_cq.cqn, "EQE cqn")
    check(n.d.take_irq(vec), "no completion interrupt")
    out = n.d.exec_ok(C.KITE_CMD_QUERY_CQ, query_obj(b_cq.cqn))
    check_eq(out[2], 0, "arm is one-shot")
    check_eq(out[3], 1, "CQ producer index")
    # Not armed: no event for the next CQE.
    b.post_recv(n.va(0x1000), 64, n.key)
    a.post_send(C.KITE_WQE_SEND, [(n.va(0), 5, n.key)])
    b_cq.poll("RECV 2")
    a_cq.poll("SEND 2")
    check_eq(comp_eqe(r, 1)[2] & 1, 0, "EQE without arming")
    # ARM_SOLICITED: an unsolicited SEND raises nothing, a solicited one
    # does.
    b_cq.doorbell(C.KITE_DB_CQ_ARM_SOLICITED)
    b.post_recv(n.va(0x1000), 64, n.key)
    a.post_send(C.KITE_WQE_SEND, [(n.va(0), 5, n.key)])
    b_cq.poll("RECV 3")
    a_cq.poll("SEND 3")
    check_eq(comp_eqe(r, 1)[2] & 1, 0, "EQE for an unsolicited CQE")
    b.post_recv(n.va(0x1000), 64, n.key)
    a.post_send(C.KITE_WQE_SEND, [(n.va(0), 5, n.key)],
                flags=C.KITE_WQE_F_SIGNALED | C.KITE_WQE_F_SOLICITED)
    cqe = b_cq.poll("solicited RECV")
    check(cqe["flags"] & C.KITE_CQE_F_SOLICITED, "no SOLICITED flag")
    a_cq.poll("SEND 4")
    wait_for(lambda: comp_eqe(r, 1)[2] & 1 == 1, "solicited EQE")
    check_eq(comp_eqe(r, 1)[:2], (b_cq.cqn, C.KITE_EVT_COMPLETION),
             "solicited EQE")


@test("main")
def test_dp_sq_doorbell_beyond_depth(env):
    n, a, a_cq, b, b_cq = loopback_pair(env)
    d = n.d
    db_write(d, C.KITE_DB_SQ, a.qpn, (1 << SQ_LOG) + 1)
    wait_for(lambda: n.r.query_qp(a.qpn)["state"] == C.KITE_QPS_ERR,
             "QP in ERR")
    check_eq(async_events(d, 1), [(C.KITE_EVT_QP_FATAL, a.qpn)],
             "async events")
    check(d.status() & C.KITE_STATUS_READY, "device not READY")
    # A QP doorbell on a foreign page changes nothing.
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    rej = stats(d)["db_rejected"]
    db_write(d, C.KITE_DB_SQ, b.qpn, 1, page=u)
    check_eq(stats(d)["db_rejected"], rej + 1, "foreign SQ doorbell")
    check_eq(n.r.query_qp(b.qpn)["state"], C.KITE_QPS_RTS, "b still RTS")


@test("main")
def test_dp_cq_overflow(env):
    n, a, a_cq, b, b_cq = loopback_pair(env, send_cq_log=2)
    d = n.d
    raddr = struct.pack("<QII", n.va(0x8000), n.key, 0)
    for i in range(5):
        a.post_send(C.KITE_WQE_WRITE, [(n.va(0), 8, n.key)], raddr,
                    ring=False)
    db_write(d, C.KITE_DB_SQ, a.qpn, a.sq_pi)
    for i in range(4):
        a_cq.poll("WRITE %d" % i)
    ev = async_events(d, 2)
    check((C.KITE_EVT_CQ_ERR, a_cq.cqn) in ev, "no CQ_ERR: %r" % ev)
    check((C.KITE_EVT_QP_FATAL, a.qpn) in ev, "no QP_FATAL: %r" % ev)
    check_eq(ev[0], (C.KITE_EVT_CQ_ERR, a_cq.cqn), "CQ_ERR first")
    check_eq(n.r.query_qp(a.qpn)["state"], C.KITE_QPS_ERR, "QP state")
    # Nothing was written over the unconsumed entries.
    cqe, _ = a_cq.peek(0)
    check_eq((cqe["wqe_idx"], cqe["flags"] & 1), (0, 1), "slot 0 intact")


@test("main")
def test_dp_qp_stats_permissions(env):
    n, a, a_cq, b, b_cq = loopback_pair(env)
    d = n.d
    st, s0 = a.stats()
    check_eq(st, C.KITE_STS_OK, "QUERY_QP_STATS")
    check_eq(s0["tx_packets"], 0, "tx_packets of a new QP")
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    check_eq(a.stats(uctx=u)[0], C.KITE_STS_PERMISSION, "foreign context")
    check_eq(a.stats(buflen=127)[0], C.KITE_STS_BAD_PARAM, "short buffer")
    st, _ = d.exec(C.KITE_CMD_QUERY_QP_STATS, query_obj(0x777, d.outbuf, 128))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "unknown QP")
    n.write(0, b"x" * 100)
    raddr = struct.pack("<QII", n.va(0x8000), n.key, 0)
    a.post_send(C.KITE_WQE_WRITE, [(n.va(0), 100, n.key)], raddr)
    a_cq.poll("WRITE")
    _, s1 = a.stats()
    _, sb = b.stats()
    check_eq(s1["tx_packets"], 1, "tx_packets after one WRITE")
    check(s1["tx_bytes"] >= 100, "tx_bytes %d" % s1["tx_bytes"])
    check_eq(sb["rx_packets"], 1, "responder rx_packets")
    check_eq(sb["tx_packets"], 1, "responder ACKs")


def hmp(env, line):
    return env.q.qmp("human-monitor-command", **{"command-line": line})


@test("main")
def test_dp_wire_faults(env):
    n, a, a_cq, b, b_cq = loopback_pair(env)
    d = n.d
    q = env.q
    check_eq(q.qmp("qom-get", path="/machine/peripheral/k0",
                   property="x-wire-seed"), 1, "default x-wire-seed")
    check_eq(q.qmp("qom-get", path="/machine/peripheral/k1",
                   property="x-wire-seed"), 7, "x-wire-seed set by -device")
    out = hmp(env, "qom-set /machine/peripheral/k0 x-wire-drop-ppm 1000001")
    check("at most" in out, "out-of-range ppm accepted: %r" % out)
    raddr = struct.pack("<QII", n.va(0x8000), n.key, 0)
    n.write(0, pattern(64, 3))
    try:
        # Every frame dropped: nothing completes, wire_dropped counts.
        hmp(env, "qom-set /machine/peripheral/k0 x-wire-drop-ppm 1000000")
        check_eq(q.qmp("qom-get", path="/machine/peripheral/k0",
                       property="x-wire-drop-ppm"), 1000000, "qom-get")
        a.post_send(C.KITE_WQE_WRITE, [(n.va(0), 64, n.key)], raddr)
        wait_for(lambda: stats(d)["wire_dropped"] >= 1, "dropped frame")
        time.sleep(0.05)
        check(a_cq.empty(), "completion without a wire")
        # The wire works again; the retransmit timer (virtual time) resends.
        hmp(env, "qom-set /machine/peripheral/k0 x-wire-drop-ppm 0")
        q.cmd("clock_step %d" % (300 * 1000 * 1000))
        check_cqe(a_cq.poll("WRITE after retransmission",
                            step=lambda: q.cmd("clock_step 100000000")),
                  a.qpn, 0, C.KITE_CQE_WRITE, 64, what="retransmitted")
        check_eq(n.read(0x8000, 64), pattern(64, 3), "written bytes")
        cnt = stats(d)
        check(cnt["roce_retransmits"] >= 1 and cnt["roce_timeouts"] >= 1,
              "retransmit counters: %r" % cnt)
        # Every frame duplicated: the responder sees duplicates, the data
        # and completions are exactly once.
        hmp(env, "qom-set /machine/peripheral/k0 x-wire-dup-ppm 1000000")
        msg = pattern(2500, 11)
        n.write(0x1000, msg)
        rs = b.post_recv(n.va(0x4000), 0x1000, n.key)
        ss = a.post_send(C.KITE_WQE_SEND, [(n.va(0x1000), len(msg), n.key)])
        check_cqe(a_cq.poll("SEND with duplicates"), a.qpn, ss,
                  C.KITE_CQE_SEND, len(msg), what="dup send")
        check_cqe(b_cq.poll("RECV with duplicates"), b.qpn, rs,
                  C.KITE_CQE_RECV, len(msg), what="dup recv")
        check_eq(n.read(0x4000, len(msg)), msg, "received bytes")
        wait_for(lambda: stats(d)["roce_dup_requests"] >= 1,
                 "duplicate requests counted")
        time.sleep(0.02)
        check(b_cq.empty(), "a second RECV completion")
        # Reordering: every other frame held back and sent after the next
        # one (a lone held frame goes out on a short timer).
        hmp(env, "qom-set /machine/peripheral/k0 x-wire-dup-ppm 0")
        hmp(env, "qom-set /machine/peripheral/k0 x-wire-reorder-ppm 1000000")
        for i in range(3):
            rs = b.post_recv(n.va(0x4000), 0x1000, n.key)
            ss = a.post_send(C.KITE_WQE_SEND,
                             [(n.va(0x1000), len(msg), n.key)])
            step = lambda: q.cmd("clock_step 1000000")
            check_cqe(a_cq.poll("reordered SEND %d" % i, step=step), a.qpn,
                      ss, C.KITE_CQE_SEND, len(msg), what="reordered send")
            check_cqe(b_cq.poll("reordered RECV %d" % i, step=step), b.qpn,
                      rs, C.KITE_CQE_RECV, len(msg), what="reordered recv")
            check_eq(n.read(0x4000, len(msg)), msg, "reordered bytes")
    finally:
        for prop in ("x-wire-drop-ppm", "x-wire-dup-ppm",
                     "x-wire-reorder-ppm"):
            hmp(env, "qom-set /machine/peripheral/k0 %s 0" % prop)


@test("main")
def test_dp_two_devices_eth_ring_full(env):
    """RC between two NICs on a hub while b's Ethernet ring has no buffer.

    A plain Ethernet frame for b waits for an RX buffer; the RoCEv2 frames
    behind it still reach b's engine at once.
    """
    da, db = env.dev[0], env.dev[1]
    na, nb = Node(da, MAC_A), Node(db, MAC_B)
    eth_setup(na.d)
    eth_setup(nb.d)
    eth_send(da, frame_to(mac_bytes(MAC_B), mac_bytes(MAC_A), 100, 1))
    a_cq, b_cq = na.cq(), nb.cq()
    a = na.qp(a_cq, a_cq)
    b = nb.qp(b_cq, b_cq)
    # Both use GID index 1 (IPv6); b's GID table holds a different address.
    db.exec_ok(C.KITE_CMD_DEL_GID, gid_payload(bytes(16), 1))
    db.exec_ok(C.KITE_CMD_ADD_GID, gid_payload(V6_DGID, 1, 1))
    a.connect(b.qpn, V6_DGID, nb.mac, 0x10, 0x20, net_type=1, sgid_index=1)
    b.connect(a.qpn, V6_GID, na.mac, 0x20, 0x10, net_type=1, sgid_index=1)
    msg = pattern(4000, 21)
    na.write(0, msg)
    rs = b.post_recv(nb.va(0x2000), 0x2000, nb.key)
    ss = a.post_send(C.KITE_WQE_SEND, [(na.va(0), len(msg), na.key)])
    check_cqe(a_cq.poll("SEND over the hub"), a.qpn, ss, C.KITE_CQE_SEND,
              len(msg), what="send")
    check_cqe(b_cq.poll("RECV over the hub"), b.qpn, rs, C.KITE_CQE_RECV,
              len(msg), what="recv")
    check_eq(nb.read(0x2000, len(msg)), msg, "received bytes")
    check_eq(db.rd(C.KITE_REG_ETH_RX_CI), 0, "Ethernet frame delivered")
    # The Ethernet frame is still waiting and arrives with a buffer.
    buf = eth_post_rx(nb.d)
    wait_for(lambda: db.rd(C.KITE_REG_ETH_RX_CI) == 1, "Ethernet frame")
    check_eq(db.q.read(buf, 114),
             frame_to(mac_bytes(MAC_B), mac_bytes(MAC_A), 100, 1),
             "Ethernet frame bytes")
    # Link down: a's frames are dropped and counted; the requester retries
    # once the link is back.
    before = stats(da)["eth_tx_errors"]
    try:
        env.q.qmp("set_link", name="k0", up=False)
        rs = b.post_recv(nb.va(0x2000), 0x2000, nb.key)
        ss = a.post_send(C.KITE_WQE_SEND, [(na.va(0), 100, na.key)])
        wait_for(lambda: stats(da)["eth_tx_errors"] > before,
                 "frame dropped with the link down")
    finally:
        env.q.qmp("set_link", name="k0", up=True)
    step = lambda: env.q.cmd("clock_step 100000000")
    check_cqe(a_cq.poll("SEND after link up", step=step), a.qpn, ss,
              C.KITE_CQE_SEND, 100, what="send after link up")
    check_cqe(b_cq.poll("RECV after link up", step=step), b.qpn, rs,
              C.KITE_CQE_RECV, 100, what="recv after link up")


def roce_v4_frame(dst_mac, src_mac, dst_ip, psn, dport=4791):
    """A short IPv4 RoCEv2 frame: RC SEND ONLY, 4 bytes, zero ICRC."""
    bth = struct.pack("!BBHII", 0x04, 0, 0xffff, 0x123, psn) + bytes(8)
    udp = struct.pack("!HHHH", 0xc000, dport, 8 + len(bth), 0) + bth
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64,
                      17, 0, bytes([198, 18, 0, 9]), dst_ip)
    csum = sum(struct.unpack("!10H", hdr))
    while csum >> 16:
        csum = (csum & 0xffff) + (csum >> 16)
    hdr = hdr[:10] + struct.pack("!H", ~csum & 0xffff) + hdr[12:]
    return dst_mac + src_mac + b"\x08\x00" + hdr + udp


@test("main")
def test_dp_wire_rx_drop(env):
    """x-wire-rx-drop-ppm drops RoCEv2 frames received from the netdev.

    Frames come from k0's Ethernet ring to k1 (hub): at 25% the dropped
    ones are counted in k1's wire_dropped and the rest reach k1's engine;
    other frames are never dropped; RC traffic between the two devices
    recovers by retransmission; loopback frames are not affected.
    """
    da, db = env.dev[0], env.dev[1]
    q = env.q
    na, nb = Node(da, MAC_A), Node(db, MAC_B)
    eth_setup(da)
    eth_setup(db)
    mac_a, mac_b = mac_bytes(MAC_A), mac_bytes(MAC_B)
    k1 = "/machine/peripheral/k1"
    try:
        out = hmp(env, "qom-set %s x-wire-rx-drop-ppm 1000001" % k1)
        check("at most" in out, "out-of-range ppm accepted: %r" % out)
        hmp(env, "qom-set %s x-wire-seed 7" % k1)
        hmp(env, "qom-set %s x-wire-rx-drop-ppm 250000" % k1)
        check_eq(q.qmp("qom-get", path=k1, property="x-wire-rx-drop-ppm"),
                 250000, "qom-get x-wire-rx-drop-ppm")
        # RoCEv2 frames for k1's IPv4 GID (198.18.0.1): the ones not
        # dropped reach the engine (rx_packets; bad ICRC).
        nframes = 400
        s0, a0 = stats(db), stats(da)
        for i in range(nframes):
            eth_send(da, roce_v4_frame(mac_b, mac_a, V4_GID[12:], i))
        wait_for(lambda: stats(db)["wire_dropped"] - s0["wire_dropped"] +
                 stats(db)["roce_rx_packets"] - s0["roce_rx_packets"] ==
                 nframes, "every frame dropped or received")
        s1 = stats(db)
        dropped = s1["wire_dropped"] - s0["wire_dropped"]
        # 100 expected (sd 8.7); the seed makes it the same on every run.
        check(60 <= dropped <= 140, "%d of %d frames dropped at 25%%" %
              (dropped, nframes))
        check_eq(s1["roce_icrc_errors"] - s0["roce_icrc_errors"],
                 nframes - dropped, "frames the engine saw (bad ICRC)")
        check_eq(stats(da)["wire_dropped"], a0["wire_dropped"],
                 "sender's wire_dropped")
        # Everything else passes: UDP to another port, for k1's ring.
        hmp(env, "qom-set %s x-wire-rx-drop-ppm 1000000" % k1)
        for i in range(3):
            eth_post_rx(db)
        for i in range(3):
            eth_send(da, roce_v4_frame(mac_b, mac_a, V4_GID[12:], i,
                                       dport=4792))
        wait_for(lambda: db.rd(C.KITE_REG_ETH_RX_CI) == 3,
                 "non-RoCE frames in the Ethernet ring")
        check_eq(stats(db)["wire_dropped"], s1["wire_dropped"],
                 "non-RoCE frames dropped")
        # RC from k0 to k1 (IPv6 GIDs): every request dropped at k1, no
        # completion; once the wire works the requester's retransmission
        # completes it.
        a_cq, b_cq = na.cq(), nb.cq()
        a = na.qp(a_cq, a_cq)
        b = nb.qp(b_cq, b_cq)
        db.exec_ok(C.KITE_CMD_DEL_GID, gid_payload(bytes(16), 1))
        db.exec_ok(C.KITE_CMD_ADD_GID, gid_payload(V6_DGID, 1, 1))
        a.connect(b.qpn, V6_DGID, nb.mac, 0x10, 0x20, net_type=1,
                  sgid_index=1)
        b.connect(a.qpn, V6_GID, na.mac, 0x20, 0x10, net_type=1,
                  sgid_index=1)
        na.write(0, pattern(64, 5))
        raddr = struct.pack("<QII", nb.va(0x8000), nb.key, 0)
        a.post_send(C.KITE_WQE_WRITE, [(na.va(0), 64, na.key)], raddr)
        wait_for(lambda: stats(db)["wire_dropped"] > s1["wire_dropped"],
                 "WRITE dropped on receive")
        time.sleep(0.05)
        check(a_cq.empty(), "completion for a WRITE the responder lost")
        hmp(env, "qom-set %s x-wire-rx-drop-ppm 0" % k1)
        step = lambda: q.cmd("clock_step 100000000")
        check_cqe(a_cq.poll("WRITE after retransmission", step=step), a.qpn,
                  0, C.KITE_CQE_WRITE, 64, what="retransmitted")
        check_eq(nb.read(0x8000, 64), pattern(64, 5), "written bytes")
        check(stats(da)["roce_retransmits"] >= 1, "no retransmission")
        # Both directions lossy (requests at k1, ACKs at k0): multi-packet
        # SENDs complete once each, in order, with their bytes.
        hmp(env, "qom-set %s x-wire-rx-drop-ppm 200000" % k1)
        hmp(env, "qom-set /machine/peripheral/k0 x-wire-rx-drop-ppm 200000")
        s2, a2 = stats(db), stats(da)
        step = lambda: q.cmd("clock_step 10000000")
        for i in range(6):
            msg = pattern(3000, 40 + i)
            na.write(0x1000, msg)
            rs = b.post_recv(nb.va(0x4000), 0x1000, nb.key)
            ss = a.post_send(C.KITE_WQE_SEND, [(na.va(0x1000), len(msg),
                                                na.key)])
            check_cqe(a_cq.poll("lossy SEND %d" % i, step=step), a.qpn, ss,
                      C.KITE_CQE_SEND, len(msg), what="lossy send")
            check_cqe(b_cq.poll("lossy RECV %d" % i, step=step), b.qpn, rs,
                      C.KITE_CQE_RECV, len(msg), what="lossy recv")
            check_eq(nb.read(0x4000, len(msg)), msg, "lossy bytes %d" % i)
        check(stats(db)["wire_dropped"] + stats(da)["wire_dropped"] >
              s2["wire_dropped"] + a2["wire_dropped"], "nothing dropped")
        time.sleep(0.02)
        check(a_cq.empty() and b_cq.empty(), "an extra completion")
        # Loopback frames never pass the receive fault stage.
        hmp(env, "qom-set %s x-wire-rx-drop-ppm 1000000" % k1)
        n, la, la_cq, lb, lb_cq = loopback_pair(env, dev=1, mac=MAC_B)
        n.write(0, pattern(2500, 9))
        rs = lb.post_recv(n.va(0x4000), 0x1000, n.key)
        ss = la.post_send(C.KITE_WQE_SEND, [(n.va(0), 2500, n.key)])
        check_cqe(la_cq.poll("loopback SEND"), la.qpn, ss, C.KITE_CQE_SEND,
                  2500, what="loopback send")
        check_cqe(lb_cq.poll("loopback RECV"), lb.qpn, rs, C.KITE_CQE_RECV,
                  2500, what="loopback recv")
        check_eq(stats(db)["wire_dropped"], 0, "loopback frames dropped")
    finally:
        hmp(env, "qom-set %s x-wire-rx-drop-ppm 0" % k1)
        hmp(env, "qom-set /machine/peripheral/k0 x-wire-rx-drop-ppm 0")
        hmp(env, "qom-set %s x-wire-seed 7" % k1)


@test("main")
def test_dp_uc_loopback(env):
    n, a, a_cq, b, b_cq = loopback_pair(env, uc=True)
    msg = pattern(2100, 13)
    n.write(0, msg)
    rs = b.post_recv(n.va(0x4000), 0x1000, n.key)
    ss = a.post_send(C.KITE_WQE_SEND, [(n.va(0), len(msg), n.key)])
    check_cqe(a_cq.poll("UC SEND"), a.qpn, ss, C.KITE_CQE_SEND, len(msg),
              what="uc send")
    check_cqe(b_cq.poll("UC RECV"), b.qpn, rs, C.KITE_CQE_RECV, len(msg),
              what="uc recv")
    check_eq(n.read(0x4000, len(msg)), msg, "UC received bytes")
    # WRITE_IMM consumes a receive and writes no buffer of it.
    rs = b.post_recv(n.va(0x6000), 0x100, n.key)
    raddr = struct.pack("<QII", n.va(0x8000), n.key, 0)
    ss = a.post_send(C.KITE_WQE_WRITE_IMM, [(n.va(0), 1500, n.key)], raddr,
                     imm=0x11223344)
    check_cqe(a_cq.poll("UC WRITE_IMM"), a.qpn, ss, C.KITE_CQE_WRITE, 1500,
              what="uc write_imm")
    cqe = b_cq.poll("UC RECV_WRITE_IMM")
    check_cqe(cqe, b.qpn, rs, C.KITE_CQE_RECV_WRITE_IMM, 1500,
              what="uc recv_write_imm")
    check_eq(cqe["imm"], 0x11223344, "immediate data")
    check_eq(n.read(0x8000, 1500), msg[:1500], "UC written bytes")
    check_eq(n.read(0x6000, 16), bytes(16), "receive buffer untouched")


@test("main")
def test_dp_rnr_and_flush(env):
    n, a, a_cq, b, b_cq = loopback_pair(env, rnr_retry=0)
    # No receive posted and rnr_retry 0: RNR retry exceeded at once.
    n.write(0, b"rnr")
    s = a.post_send(C.KITE_WQE_SEND, [(n.va(0), 3, n.key)])
    cqe = a_cq.poll("SEND without a receive",
                    step=lambda: n.d.q.cmd("clock_step 10000000"))
    check_cqe(cqe, a.qpn, s, C.KITE_CQE_SEND, None,
              status=C.KITE_CQE_RNR_RETRY_EXC_ERR, what="rnr")
    wait_for(lambda: n.r.query_qp(a.qpn)["state"] == C.KITE_QPS_ERR,
             "requester in ERR")
    check(stats(n.d)["roce_rnr_naks_sent"] >= 1, "RNR NAK not counted")
    # Work posted to a QP in ERR is flushed, signaled or not, in order.
    s1 = a.post_send(C.KITE_WQE_SEND, [(n.va(0), 3, n.key)], flags=0)
    for want in (s1,):
        cqe = a_cq.poll("flushed SEND")
        check_cqe(cqe, a.qpn, want, C.KITE_CQE_SEND, None,
                  status=C.KITE_CQE_WR_FLUSH_ERR, what="flushed send")
    # Receives of a QP moved to ERR by MODIFY_QP are flushed.
    r1 = b.post_recv(n.va(0x4000), 64, n.key)
    r2 = b.post_recv(n.va(0x4040), 64, n.key)
    n.r.modify_ok(b.qpn, "RTS -> ERR", state=C.KITE_QPS_ERR)
    for want in (r1, r2):
        check_cqe(b_cq.poll("flushed RECV"), b.qpn, want, C.KITE_CQE_RECV,
                  None, status=C.KITE_CQE_WR_FLUSH_ERR, what="flushed recv")


@test("main")
def test_dp_ud_loopback(env):
    """UD SEND between two QPs of one device.

    The engine runs UD whether or not CAP_FLAGS advertises it (the bit only
    tells drivers to offer UD QPs).
    """
    d = env.dev[0]
    n = Node(d, MAC_A)
    a_cq, b_cq = n.cq(), n.cq()
    a = n.qp(a_cq, a_cq, qp_type=C.KITE_QPT_UD)
    b = n.qp(b_cq, b_cq, qp_type=C.KITE_QPT_UD)
    qkey = 0x1234
    for q in (a, b):
        n.r.modify_ok(q.qpn, "UD to INIT", state=C.KITE_QPS_INIT,
                      pkey_index=0, port=1, qkey=qkey)
        n.r.modify_ok(q.qpn, "UD to RTR", state=C.KITE_QPS_RTR)
        n.r.modify_ok(q.qpn, "UD to RTS", state=C.KITE_QPS_RTS, sq_psn=7)
    msg = pattern(100, 17)
    n.write(0, msg)
    rs = b.post_recv(n.va(0x4000), 40 + 256, n.key)
    ud = av_bytes(V4_GID, dmac=n.mac) + struct.pack("<II", b.qpn, qkey)
    ss = a.post_send(C.KITE_WQE_SEND, [(n.va(0), len(msg), n.key)], ud)
    check_cqe(a_cq.poll("UD SEND"), a.qpn, ss, C.KITE_CQE_SEND, len(msg),
              what="ud send")
    cqe = b_cq.poll("UD RECV")
    check_cqe(cqe, b.qpn, rs, C.KITE_CQE_RECV, 40 + len(msg),
              what="ud recv")
    check_eq(cqe["src_qp"], a.qpn, "UD src_qp")
    check(cqe["flags"] & C.KITE_CQE_F_GRH, "no GRH flag")
    check_eq(cqe["net_hdr"], C.KITE_CQE_NET_IPV4, "UD net_hdr (IPv4)")
    check_eq(cqe["smac"], n.mac, "UD smac")
    grh = n.read(0x4000, 40)
    check_eq(grh[:20], bytes(20), "GRH: 20 zero bytes before IPv4")
    check_eq(grh[20] >> 4, 4, "GRH: IPv4 header")
    check_eq(n.read(0x4000 + 40, len(msg)), msg, "UD payload")
    # A wrong Q_Key: the datagram is dropped, no receive completes.
    b.post_recv(n.va(0x4000), 40 + 256, n.key)
    ud = av_bytes(V4_GID, dmac=n.mac) + struct.pack("<II", b.qpn, qkey + 1)
    a.post_send(C.KITE_WQE_SEND, [(n.va(0), len(msg), n.key)], ud)
    a_cq.poll("UD SEND with a wrong Q_Key")
    time.sleep(0.05)
    check(b_cq.empty(), "receive completed with a wrong Q_Key")


@test("main")
def test_dp_random_wqes(env):
    """Garbage WQEs and doorbells: errors and flushes, never a crash."""
    import random
    rnd = random.Random(0x6b697465)
    n, a, a_cq, b, b_cq = loopback_pair(env)
    d = n.d
    keys = [n.key, n.key ^ 0x100, 0, rnd.getrandbits(32)]
    for rnd_i in range(12):
        for q in (a, b):
            ring = bytearray(rnd.getrandbits(8) for _ in range(
                (1 << SQ_LOG) << SQ_STRIDE))
            for slot in range(1 << SQ_LOG):
                off = slot << SQ_STRIDE
                ring[off] = rnd.choice([0, 1, 2, 3, 4, 5, 6, 7, 0x80])
                ring[off + 2] = rnd.randint(0, 9)          # num_sge
                for k in range(3):
                    sge = off + 16 + 16 * k + rnd.choice([0, 16])
                    struct.pack_into("<QII", ring, sge,
                                     n.va(rnd.randrange(0, 0x10000)),
                                     rnd.choice([0, 1, 64, 5000, 1 << 31]),
                                     rnd.choice(keys))
            d.q.write(q.sq, bytes(ring))
            rq = bytearray(rnd.getrandbits(8) for _ in range(
                (1 << RQ_LOG) << RQ_STRIDE))
            for slot in range(1 << RQ_LOG):
                off = slot << RQ_STRIDE
                rq[off] = rnd.randint(0, 2)
                struct.pack_into("<QII", rq, off + 16,
                                 n.va(rnd.randrange(0, 0x10000)),
                                 rnd.choice([0, 8, 4096, 70000]),
                                 rnd.choice(keys))
            d.q.write(q.rq, bytes(rq))
            q.rq_pi += rnd.randint(0, 20)
            db_write(d, C.KITE_DB_RQ, q.qpn, q.rq_pi & 0xffffffff)
            q.sq_pi += rnd.randint(0, 20)
            db_write(d, C.KITE_DB_SQ, q.qpn, q.sq_pi & 0xffffffff)
        for c in (a_cq, b_cq):
            c.ci = rnd.randint(0, 64)
            c.doorbell(rnd.choice([0, C.KITE_DB_CQ_ARM_NEXT]))
        env.q.cmd("clock_step %d" % rnd.choice([0, 1000000, 100000000]))
        time.sleep(0.01)
        if rnd_i % 4 == 3:
            for q in (a, b):
                n.r.modify(q.qpn, state=rnd.choice([C.KITE_QPS_ERR,
                                                    C.KITE_QPS_RESET]))
    time.sleep(0.1)
    check(env.q.proc.poll() is None, "QEMU died")
    check_eq(d.status() & (C.KITE_STATUS_READY | C.KITE_STATUS_FATAL),
             C.KITE_STATUS_READY, "device status")
    for q in (a, b):
        check(n.r.query_qp(q.qpn)["state"] in (
            C.KITE_QPS_RESET, C.KITE_QPS_ERR, C.KITE_QPS_RTS),
            "QP state after garbage")
    # The device still works.
    n, a, a_cq, b, b_cq = loopback_pair(env)
    b.post_recv(n.va(0x4000), 0x100, n.key)
    a.post_send(C.KITE_WQE_SEND, [(n.va(0), 10, n.key)])
    a_cq.poll("SEND after garbage")
    b_cq.poll("RECV after garbage")


@test("main")
def test_dp_fatal_inside_engine(env):
    """A fatal error raised from an engine callback stops the data path."""
    d = env.dev[0]
    n = Node(d, MAC_A)
    # A completion EQ whose ring is not backed by memory.
    bad_eq = d.exec_ok(C.KITE_CMD_CREATE_EQ, eq_payload(
        1 << 44, 1, 12, 8, C.KITE_MSIX_COMP_BASE + 1))[0]
    a_cq, b_cq = n.cq(eqn=bad_eq), n.cq()
    a = n.qp(a_cq, a_cq)
    b = n.qp(b_cq, b_cq)
    a.connect(b.qpn, V4_GID, n.mac, sq_psn=1, rq_psn=2)
    b.connect(a.qpn, V4_GID, n.mac, sq_psn=2, rq_psn=1)
    a_cq.doorbell(C.KITE_DB_CQ_ARM_NEXT)
    raddr = struct.pack("<QII", n.va(0x8000), n.key, 0)
    for i in range(8):
        a.post_send(C.KITE_WQE_WRITE, [(n.va(0), 100, n.key)], raddr,
                    ring=False)
    db_write(d, C.KITE_DB_SQ, a.qpn, a.sq_pi)
    wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL")
    check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_EQ_DMA, "FATAL_CODE")
    check_eq(async_events(d, 1), [(C.KITE_EVT_DEV_FATAL,
                                   C.KITE_FATAL_EQ_DMA)], "async event")
    env.q.cmd("clock_step %d" % (1000 * 1000 * 1000))
    time.sleep(0.05)
    check(env.q.proc.poll() is None, "QEMU died")
    # The device comes back with a reset and works.
    n, a, a_cq, b, b_cq = loopback_pair(env)
    b.post_recv(n.va(0x4000), 0x100, n.key)
    a.post_send(C.KITE_WQE_SEND, [(n.va(0), 10, n.key)])
    a_cq.poll("SEND after FATAL and reset")
    b_cq.poll("RECV after FATAL and reset")


@test("main")
def test_dp_reset_drops_engine_state(env):
    n, a, a_cq, b, b_cq = loopback_pair(env)
    d = n.d
    for i in range(5):
        b.post_recv(n.va(0x4000), 0x100, n.key)
        a.post_send(C.KITE_WQE_SEND, [(n.va(0), 10, n.key)])
        a_cq.poll("SEND %d" % i)
    check(stats(d)["roce_tx_packets"] >= 10, "RoCE traffic before reset")
    n2, a2, a2_cq, b2, b2_cq = loopback_pair(env)     # reset inside
    check_eq(stats(d)["roce_tx_packets"], 0, "counters after reset")
    check_eq(n2.r.query_qp(a2.qpn)["state"], C.KITE_QPS_RTS, "new QP")
    b2.post_recv(n2.va(0x4000), 0x100, n2.key)
    a2.post_send(C.KITE_WQE_SEND, [(n2.va(0), 10, n2.key)])
    a2_cq.poll("SEND after reset")
    b2_cq.poll("RECV after reset")
    tx = stats(d)["roce_tx_packets"]
    check(2 <= tx <= 3, "roce_tx_packets %d after one SEND" % tx)
    # Destroying a QP with an armed retransmit timer is clean.
    hmp(env, "qom-set /machine/peripheral/k0 x-wire-drop-ppm 1000000")
    try:
        a2.post_send(C.KITE_WQE_SEND, [(n2.va(0), 10, n2.key)])
        wait_for(lambda: stats(d)["wire_dropped"] >= 1, "dropped frame")
        d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(a2.qpn))
        env.q.cmd("clock_step %d" % (1000 * 1000 * 1000))
        check(d.status() & C.KITE_STATUS_READY, "not READY")
    finally:
        hmp(env, "qom-set /machine/peripheral/k0 x-wire-drop-ppm 0")


# --------------------------------------------------------------------------
# Runner
# --------------------------------------------------------------------------

class Env:
    def __init__(self, qemu_bin, name, tmpdir, logdir):
        args, devs = ENVS[name]
        self.qemu_bin = qemu_bin
        self.q = Qemu(qemu_bin, args, tmpdir, logdir, name)
        self.dev = []
        for i, slot in enumerate(devs):
            d = Kite(self.q, slot, 0xc0000000 + i * 0x1000000,
                     0x1000000 + i * 0x1000000)
            d.setup_pci()
            d.aq_pi = d.acq_ci = 0
            self.dev.append(d)

    def close(self):
        self.q.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qemu", default=os.path.join(REPO, "out",
                                                   "qemu-system-x86_64"))
    ap.add_argument("--logdir", default=os.path.join(REPO, "out", "logs",
                                                     "qtest"))
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
    # Sockets in a private temporary directory (short paths); QEMU's guest
    # error log and stderr under out/logs/qtest, kept when a test fails.
    tmpdir = tempfile.mkdtemp(prefix="kite-qtest-")
    logdir = args.logdir
    shutil.rmtree(logdir, ignore_errors=True)
    os.makedirs(logdir)
    keep = args.keep_logs
    try:
        for env_name in ENVS:
            tests = [t for t in TESTS if t[1] == env_name and
                     args.filter in t[0] and selected(args.glob, t[0])]
            if not tests:
                continue
            env = None
            try:
                env = Env(args.qemu, env_name, tmpdir, logdir)
            except Exception as e:
                for name, _, _ in tests:
                    res.fail(name, "QEMU setup: %s" % e)
                keep = True
                continue
            try:
                for name, _, fn in tests:
                    try:
                        fn(env)
                        res.ok(name)
                    except Exception as e:
                        res.fail(name, e)
                        if args.verbose or not isinstance(e, TestFailure):
                            traceback.print_exc(file=sys.stderr)
                        keep = True
                    sys.stdout.flush()
                    if env.q.proc.poll() is not None:
                        res.fail(name, "QEMU exited (%s)" %
                                 env.q.stderr_tail())
                        break
            finally:
                env.close()
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
        if keep:
            print("qtest: QEMU logs in %s" % logdir)
        else:
            shutil.rmtree(logdir, ignore_errors=True)
    return res.end()


if __name__ == "__main__":
    sys.exit(main())
