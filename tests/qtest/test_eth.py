# SPDX-License-Identifier: GPL-2.0-or-later
"""The Ethernet port: link events, TX and RX rings, filtering, counters,
and what happens to frames QEMU queued when the port stops."""

import time

from device import MAC_A, MAC_B, MAC_C, eth_post_rx, eth_rx_desc, \
    eth_send, eth_setup, eth_tx_post, eth_tx_status, frame_to, mac_bytes, \
    port_attr, stats
from harness import check, check_eq, test, wait_for
from hw import C


def link_event_check(d, index, typ):
    wait_for(lambda: d.eqe(index)[3] & C.KITE_EQE_PHASE ==
             ((index >> d.aeq_log) & 1) ^ 1, "async EQE %d" % index)
    data, _, got_typ, _ = d.eqe(index)
    check_eq(got_typ, typ, "event %d type" % index)
    check_eq(data, C.KITE_PORT_NUM, "event %d port" % index)


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
        p = port_attr(d)
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
        check_eq(flags & C.KITE_EQE_PHASE, 1,
                 "dropped event overwrote slot 2")
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
    p = port_attr(d)
    check_eq(p["state"], C.KITE_PORT_DOWN, "QUERY_PORT state")
    check_eq(p["mac"], mac_bytes(MAC_C), "mac")


@test("main")
def test_eth_tx_rx(env):
    a, b = env.dev[0], env.dev[1]
    a.bring_up()
    b.bring_up()
    eth_setup(a)
    eth_setup(b)
    # Frames the hub queued for b before this test (b could not take them)
    # are dropped when b's RX comes up: not this test's frames.
    dropped = stats(b).eth_rx_dropped
    mac_a, mac_b = mac_bytes(MAC_A), mac_bytes(MAC_B)

    # b posts a buffer, arms its interrupt; a sends; b receives it intact.
    buf = eth_post_rx(b)
    b.take_irq(C.KITE_MSIX_ETH)
    b.wr(C.KITE_REG_ETH_IRQ_ARM, C.KITE_ETH_IRQ_ARM_FIRE)
    frame = frame_to(mac_b, mac_a, 200, 7)
    a.wr(C.KITE_REG_ETH_IRQ_ARM, C.KITE_ETH_IRQ_ARM_FIRE)
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
    b.wr(C.KITE_REG_ETH_IRQ_ARM, C.KITE_ETH_IRQ_ARM_FIRE)
    check(b.take_irq(C.KITE_MSIX_ETH), "no interrupt when arming pending")
    b.wr(C.KITE_REG_ETH_IRQ_ARM, C.KITE_ETH_IRQ_ARM_FIRE)
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
        slot = eth_tx_post(a, a.eth_buf, n)
        check_eq(eth_tx_status(a, slot),
                 C.KITE_ETH_DESC_DONE | C.KITE_ETH_DESC_ERR,
                 "TX of %d bytes" % n)

    # Counters.
    s = stats(a)
    check_eq(s.eth_tx_packets, 6, "a eth_tx_packets")
    check_eq(s.eth_tx_bytes, 214 + 60 + 1514 + 74 + 74 + 214,
             "a eth_tx_bytes")
    check_eq(s.eth_tx_errors, 2, "a eth_tx_errors")
    s = stats(b)
    check_eq(s.eth_rx_packets, 4, "b eth_rx_packets")
    check_eq(s.eth_rx_bytes, 214 + 60 + 1514 + 74, "b eth_rx_bytes")
    check_eq(s.eth_rx_dropped - dropped, 1, "b eth_rx_dropped (too large)")

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
