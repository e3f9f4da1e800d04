# SPDX-License-Identifier: GPL-2.0-or-later
"""PCI identity, BARs, registers, enable and reset, the doorbell BAR."""

from device import ABI_VERSION, DEVICE_ATTR_SIZE, db_value, \
    out_buf_payload, stats
from harness import check, check_eq, test
from hw import C, K


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
    check_eq(d.rd(C.KITE_REG_VERSION), ABI_VERSION, "VERSION")
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
def test_doorbell_bar(env):
    d = env.dev[0]
    d.bring_up()
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    page = d.db + u * C.KITE_DB_PAGE_SIZE
    # SQ/RQ/CQ doorbells for objects that do not exist are ignored.
    for off in (C.KITE_DB_SQ, C.KITE_DB_RQ, C.KITE_DB_CQ):
        d.q.writeq(page + off, db_value(1, 0, 5))
    d.q.writel(page + C.KITE_DB_SQ, 1)
    d.q.writeq(page + C.KITE_DB_EQ, db_value(0, C.KITE_DB_EQ_ARM, 0))
    check_eq(d.q.readl(page), 0, "doorbell read")
    check(d.status() & C.KITE_STATUS_READY, "not READY after doorbells")
    d.exec_ok(C.KITE_CMD_QUERY_DEVICE,
              out_buf_payload(d.outbuf, DEVICE_ATTR_SIZE))
    log = env.q.guest_errors()
    check("does not own" in log, "doorbell not logged as guest error")
    # 3 unknown objects, one 4-byte write, one EQ doorbell on a user page.
    check_eq(stats(d)["db_rejected"], 5, "db_rejected")
