# SPDX-License-Identifier: GPL-2.0-or-later
"""A kite PCI function programmed as a driver would, and the QEMU setups
(environments) the tests run in.

Admin commands, completions, events and descriptors are built and read
through hw (the structs of kite_hw.h, by field name).
"""

import time

import hw
from harness import POLL_TIMEOUT, Qemu, TestFailure, check, check_eq, \
    wait_for
from hw import C

PCI_CFG_ADDR = 0xcf8
PCI_CFG_DATA = 0xcfc
MSIX_SCRATCH = 0x0f00000    # guest RAM that MSI-X messages are written to

EQE_SIZE = hw.sizeof("kite_eqe")
ETH_DESC_SIZE = hw.sizeof("kite_eth_desc")
DEVICE_ATTR_SIZE = hw.sizeof("kite_device_attr")
PORT_ATTR_SIZE = hw.sizeof("kite_port_attr")
STATS_SIZE = hw.sizeof("kite_stats")
ABI_VERSION = hw.K["KITE_ABI_VERSION(KITE_ABI_MAJOR, KITE_ABI_MINOR)"]


def db_value(num, flags, index):
    """A doorbell value, as kite_db_make() builds it."""
    return (index << C.KITE_DB_INDEX_SHIFT) | \
        (flags << C.KITE_DB_FLAGS_SHIFT) | (num & C.KITE_DB_NUM_MASK)


def out_buf_payload(addr, length, port=0):
    """QUERY_DEVICE/QUERY_PORT/QUERY_STATS: results to addr, length bytes."""
    return hw.pack("kite_cmd_query", out=dict(addr=addr, len=length),
                   port=port)


def destroy_payload(handle):
    return hw.pack("kite_cmd_destroy", handle=handle)


def eq_payload(addr, npages, page_shift, log_depth, vector, level=0):
    return hw.pack("kite_cmd_create_eq", ring=dict(
        addr=addr, npages=npages, page_shift=page_shift, level=level),
        log_depth=log_depth, msix_vector=vector)


def gid_payload(gid, index, typ=0, port=None):
    return hw.pack("kite_cmd_gid", gid=gid, index=index, type=typ,
                   port=C.KITE_PORT_NUM if port is None else port)


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
        self.aq_pi = self.acq_ci = 0

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
        for bar, addr in ((C.KITE_BAR_REGS, self.regs),
                          (C.KITE_BAR_DB, self.db)):
            self.cfg_write32(0x10 + 4 * bar, addr & 0xffffffff)
            self.cfg_write32(0x14 + 4 * bar, addr >> 32)
        self.cfg_write32(0x10 + 4 * C.KITE_BAR_MSIX, self.msix_bar)
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
        cmd = hw.pack("kite_aq_cmd", hdr=dict(
            opcode=opcode, flags=flags, cmd_id=self.cmd_id, uctx=uctx),
            raw=payload.ljust(C.KITE_AQ_PAYLOAD_SIZE, b"\0"))
        slot = self.aq_pi % (1 << self.aq_log)
        self.q.write(self.aq + slot * C.KITE_AQ_CMD_SIZE, cmd)
        self.aq_pi = (self.aq_pi + 1) & 0xffffffff
        if ring:
            self.wr(C.KITE_REG_AQ_DB, self.aq_pi)
        return self.cmd_id

    def acq_entry(self, index):
        """The ACQ entry (struct kite_aq_cqe) at free-running index."""
        slot = index % (1 << self.acq_log)
        return hw.unpack("kite_aq_cqe", self.q.read(
            self.acq + slot * C.KITE_AQ_CQE_SIZE, C.KITE_AQ_CQE_SIZE))

    def wait_cqe(self, timeout=POLL_TIMEOUT):
        """Next ACQ entry: (cmd_id, status, syndrome, out[6])."""
        phase = ((self.acq_ci >> self.acq_log) & 1) ^ 1
        deadline = time.time() + timeout
        while True:
            cqe = self.acq_entry(self.acq_ci)
            if cqe.flags & C.KITE_ACQE_PHASE == phase:
                break
            if time.time() > deadline:
                raise TestFailure("no admin completion (status 0x%x fatal %u)"
                                  % (self.status(),
                                     self.rd(C.KITE_REG_FATAL_CODE)))
            time.sleep(0.001)
        self.acq_ci += 1
        return cqe.cmd_id, cqe.status, cqe.syndrome, tuple(cqe.out)

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
        status, out = self.exec(opcode, out_buf_payload(self.outbuf, buflen,
                                                        port))
        return status, out, self.q.read(self.outbuf, length)

    # async EQ
    def eqe(self, index):
        """Async EQE at free-running index: (data, data2, type, flags)."""
        slot = index % (1 << self.aeq_log)
        e = hw.unpack("kite_eqe", self.q.read(self.aeq + slot * EQE_SIZE,
                                              EQE_SIZE))
        return e.data, e.data2, e.type, e.flags

    def eq_doorbell(self, eqn, ci, arm):
        self.q.writeq(self.db + C.KITE_DB_EQ, db_value(
            eqn, C.KITE_DB_EQ_ARM if arm else 0, ci))


def stats(d):
    """QUERY_STATS as a record of struct kite_stats."""
    st, _, raw = d.query(C.KITE_CMD_QUERY_STATS, STATS_SIZE)
    check_eq(st, C.KITE_STS_OK, "QUERY_STATS status")
    return hw.unpack("kite_stats", raw)


def port_attr(d):
    """QUERY_PORT of port 1 as a record of struct kite_port_attr."""
    st, _, raw = d.query(C.KITE_CMD_QUERY_PORT, PORT_ATTR_SIZE,
                         port=C.KITE_PORT_NUM)
    check_eq(st, C.KITE_STS_OK, "QUERY_PORT status")
    return hw.unpack("kite_port_attr", raw)


# --------------------------------------------------------------------------
# QEMU setups
# --------------------------------------------------------------------------

# The "small" setup: PDs, CQs, QPs and MRs each, and MR pages copied.
SMALL_MAX_OBJECTS = 40
SMALL_MR_CACHE_PAGES = 8

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
    # Object limits low enough to reach (x-max-objects), MR page copies
    # for SMALL_MR_CACHE_PAGES pages at most.
    "small": (["-device", "kite,id=k0,addr=04.0,x-max-objects=%d,"
               "x-mr-cache-bytes=%d" % (SMALL_MAX_OBJECTS,
                                        SMALL_MR_CACHE_PAGES * 8)],
              [4]),
    "hang": (["-device", "kite,id=k0,addr=04.0,x-fault-hang-opcode=%d" %
              C.KITE_CMD_ALLOC_UCTX],
             [4]),
}


class Env:
    """One QEMU of ENVS[name] with its kite devices set up on PCI."""

    def __init__(self, qemu_bin, name, tmpdir, logdir):
        args, devs = ENVS[name]
        self.qemu_bin = qemu_bin
        self.q = Qemu(qemu_bin, args, tmpdir, logdir, name)
        self.dev = []
        for i, slot in enumerate(devs):
            d = Kite(self.q, slot, 0xc0000000 + i * 0x1000000,
                     0x1000000 + i * 0x1000000)
            d.setup_pci()
            self.dev.append(d)

    def close(self):
        self.q.close()


def hmp(env, line):
    return env.q.qmp("human-monitor-command", **{"command-line": line})


def info_network(env, dev_id):
    """The 'info network' line of NIC dev_id."""
    out = hmp(env, "info network")
    for line in out.splitlines():
        # "k2: ..." or, behind a hub, " \\ h0: k0: ..."
        if (" " + line.strip()).find(" %s: " % dev_id) >= 0:
            return line
    raise TestFailure("no %s in info network: %r" % (dev_id, out))


# --------------------------------------------------------------------------
# The Ethernet rings
# --------------------------------------------------------------------------

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
    return hw.pack("kite_eth_desc", addr=addr, len=length)


def eth_tx_status(d, slot):
    raw = d.q.read(d.eth_tx + slot * ETH_DESC_SIZE, ETH_DESC_SIZE)
    return hw.unpack("kite_eth_desc", raw).status


def eth_tx_post(d, addr, length):
    """Posts one TX descriptor and rings; returns its slot."""
    slot = d.tx_pi % (1 << d.tx_log)
    d.q.write(d.eth_tx + slot * ETH_DESC_SIZE, eth_desc(addr, length))
    d.tx_pi += 1
    d.wr(C.KITE_REG_ETH_TX_DB, d.tx_pi)
    wait_for(lambda: d.rd(C.KITE_REG_ETH_TX_CI) == d.tx_pi, "TX_CI")
    return slot


def eth_send(d, frame):
    """Sends one frame; returns the status the device wrote back."""
    buf = d.eth_buf + (d.tx_pi % (1 << d.tx_log)) * 0x4000
    d.q.write(buf, frame)
    return eth_tx_status(d, eth_tx_post(d, buf, len(frame)))


def eth_post_rx(d, size=2048, ring=True):
    slot = d.rx_pi % (1 << d.rx_log)
    buf = d.eth_buf + 0x40000 + slot * 0x4000
    d.q.memset(buf, 0x4000, 0)
    d.q.write(d.eth_rx + slot * ETH_DESC_SIZE, eth_desc(buf, size))
    d.rx_pi += 1
    if ring:
        d.wr(C.KITE_REG_ETH_RX_DB, d.rx_pi)
    return buf


def eth_rx_desc(d, index):
    """The RX descriptor at free-running index: (addr, len, status)."""
    raw = d.q.read(d.eth_rx + (index % (1 << d.rx_log)) * ETH_DESC_SIZE,
                   ETH_DESC_SIZE)
    desc = hw.unpack("kite_eth_desc", raw)
    return desc.addr, desc.len, desc.status


def frame_to(dst, src, n, fill):
    return dst + src + b"\x88\xb5" + bytes((fill + i) & 0xff for i in range(n))
