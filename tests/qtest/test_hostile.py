# SPDX-License-Identifier: GPL-2.0-or-later
"""A hostile guest: rings and MSI-X messages aimed at the device's own
BARs while the host changes the link; what a DMA of the device's own
cannot do to it."""

from device import stats
from harness import check, check_eq, test, wait_for
from hw import C

MSIX_CAP_ID = 0x11


def msix_entry(d, vector):
    """Guest address of MSI-X table entry VECTOR of device d."""
    cap = d.find_cap(MSIX_CAP_ID)
    check(cap is not None, "no MSI-X capability")
    return d.msix_bar + (d.cfg_read32(cap + 4) & ~7) + 16 * vector


def set_link(env, dev_id, up):
    env.q.qmp("set_link", name=dev_id, up=up)


@test("main")
def test_link_event_eq_on_own_bar(env):
    """The async EQ on BAR0 itself: the event that a host link change posts
    must not turn into register writes (slot 0 would write 0 to DEV_CTRL
    and reset the device). The event DMA is refused like any DMA of the
    device aimed at its own BARs, so the ring is unwritable: FATAL
    EQ_DMA, as for an unwritable EQ ring, and no reset."""
    d = env.dev[0]
    d.bring_up(aeq=d.regs)
    try:
        set_link(env, "k0", False)
        wait_for(lambda: not d.status() & C.KITE_STATUS_LINK_UP,
                 "LINK_UP to clear")
        check_eq(d.rd(C.KITE_REG_DEV_CTRL), C.KITE_CTRL_ENABLE,
                 "DEV_CTRL after the link event (0: the event reset it)")
        st = d.status()
        check(st & C.KITE_STATUS_FATAL, "not FATAL (status 0x%x)" % st)
        check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_EQ_DMA,
                 "fatal code")
    finally:
        set_link(env, "k0", True)
    # A reset brings it back.
    d.bring_up()


@test("main")
def test_link_event_msix_on_own_bar(env):
    """The admin vector's MSI-X message aimed at DEV_CTRL with data 0: the
    interrupt of a link event must not reset the device. The device stays
    READY and the event is in the async EQ."""
    d = env.dev[0]
    d.bring_up()
    entry = msix_entry(d, C.KITE_MSIX_ADMIN)
    saved = [d.q.readl(entry + 4 * i) for i in range(3)]
    d.eq_doorbell(0, 0, True)
    try:
        d.q.writel(entry, d.regs + C.KITE_REG_DEV_CTRL)
        d.q.writel(entry + 4, 0)
        d.q.writel(entry + 8, 0)
        set_link(env, "k0", False)
        wait_for(lambda: not d.status() & C.KITE_STATUS_LINK_UP,
                 "LINK_UP to clear")
        wait_for(lambda: d.eqe(0)[3] & C.KITE_EQE_PHASE, "async EQE 0")
        check_eq(d.eqe(0)[2], C.KITE_EVT_PORT_ERR, "event type")
        check_eq(d.rd(C.KITE_REG_DEV_CTRL), C.KITE_CTRL_ENABLE,
                 "DEV_CTRL after the interrupt (0: it reset the device)")
        st = d.status()
        check(st & C.KITE_STATUS_READY and not st & C.KITE_STATUS_FATAL,
              "not READY after the interrupt (status 0x%x)" % st)
    finally:
        for i, v in enumerate(saved):
            d.q.writel(entry + 4 * i, v)
        set_link(env, "k0", True)
    # The admin queue still answers.
    check_eq(stats(d)["eq_events_dropped"], 0, "eq_events_dropped")
