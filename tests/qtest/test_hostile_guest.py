# SPDX-License-Identifier: GPL-2.0-or-later
"""A hostile guest driver, beyond test_hostile: work queue, CQ and EQ
rings on the device's own BARs and on unmapped memory, MSI-X messages
aimed at registers that act, producer indexes that jump, doorbells on
pages their context does not own, commands before enable and during
reset, and the longest page lists with a bound on wall time. Each time
the error is the one hardware.rst gives, the device stays READY (or goes
FATAL when it says so) and other objects and contexts carry on."""

import time
import types

from device import destroy_payload, eq_payload, stats
from harness import check, check_eq, test, wait_for
from hw import C
from rdma import MAC_A, PAGE, RQ_LOG, SQ_LOG, V4_GID, Cq, Node, Qp, Rdma, \
    async_events, batch, check_cqe, cq_payload, db_write, loopback_pair, \
    pbl, reg_mr_payload
from test_hostile import MAX_MR_PAGES, admin_work, check_msix_table, \
    check_not_reset, comp_event_into, msix_entry, one_page_level2, own_bars

UNMAPPED = 1 << 44          # no RAM and no device there
# Wall-time bounds, generous for a loaded host: a command of the
# longest page list takes well under 0.1 s here; before the admin run had
# a budget, one doorbell of such lists held QEMU for seconds.
CMD_BOUND = 2.0             # seconds from one completion to the next
ANSWER_BOUND = 1.5          # seconds for QEMU to answer a register read


def targets(d):
    return own_bars(d) + (("unmapped memory", UNMAPPED),)


def qp_state(n, qp):
    return n.r.query_qp(qp.qpn, uctx=qp.uctx).state


def check_ready(d, what):
    st = d.status()
    check(st & C.KITE_STATUS_READY and not st & C.KITE_STATUS_FATAL,
          "not READY after %s (status 0x%x fatal %u)" %
          (what, st, d.rd(C.KITE_REG_FATAL_CODE)))
    check_not_reset(d, what)


def pair(n, a_kw=None, b_kw=None):
    """Two RC QPs on one CQ of node n, connected to each other."""
    cq = n.cq()
    a = n.qp(cq, cq, **(a_kw or {}))
    b = n.qp(cq, cq, **(b_kw or {}))
    a.connect(b.qpn, V4_GID, n.mac, sq_psn=0x100, rq_psn=0x200)
    b.connect(a.qpn, V4_GID, n.mac, sq_psn=0x200, rq_psn=0x100)
    return cq, a, b


def check_send_works(n, a, b, cq, what):
    """A SEND from a to b completes on both sides: the pair is unharmed."""
    b.post_recv(n.va(0x2000), 64, n.key)
    a.post_send(C.KITE_WQE_SEND, [(n.va(0), 16, n.key)])
    got = sorted((c.qpn, c.opcode, c.status) for c in
                 (cq.poll(what), cq.poll(what)))
    check_eq(got, sorted([(a.qpn, C.KITE_CQE_SEND, C.KITE_CQE_SUCCESS),
                          (b.qpn, C.KITE_CQE_RECV, C.KITE_CQE_SUCCESS)]),
             "completions of a SEND " + what)


# ---- rings on the device's own BARs and on unmapped memory -------------

@test("main")
def test_sq_ring_unreadable(env):
    """An SQ on a BAR or on unmapped memory: the doorbell puts the QP in
    ERR with QP_FATAL (a ring the device cannot read), nothing is sent or
    completed successfully, the other QP of the pair stays RTS."""
    for name, base in targets(env.dev[0]):
        n = Node(env.dev[0], MAC_A)
        d = n.d
        cq, a, b = pair(n, a_kw=dict(sq_addr=base))
        db_write(d, C.KITE_DB_SQ, a.qpn, 1)
        wait_for(lambda: qp_state(n, a) == C.KITE_QPS_ERR,
                 "QP in ERR with its SQ on " + name)
        check_eq(async_events(d, 1), [(C.KITE_EVT_QP_FATAL, a.qpn)],
                 "async events for an SQ on " + name)
        while not cq.empty():
            c = cq.poll(name)
            check(c.status != C.KITE_CQE_SUCCESS,
                  "a successful CQE from an SQ on " + name)
        check_eq(qp_state(n, b), C.KITE_QPS_RTS, "the peer QP's state")
        check_ready(d, "an SQ on " + name)
        check_msix_table(d, "an SQ on " + name)


@test("main")
def test_rq_ring_unreadable(env):
    """An RQ on a BAR or on unmapped memory: a SEND to it puts the
    receiving QP in ERR with QP_FATAL; no receive completes."""
    for name, base in targets(env.dev[0]):
        n = Node(env.dev[0], MAC_A)
        d = n.d
        cq, a, b = pair(n, b_kw=dict(rq_addr=base))
        db_write(d, C.KITE_DB_RQ, b.qpn, 1)
        a.post_send(C.KITE_WQE_SEND, [(n.va(0), 16, n.key)])
        wait_for(lambda: qp_state(n, b) == C.KITE_QPS_ERR,
                 "QP in ERR with its RQ on " + name)
        check((C.KITE_EVT_QP_FATAL, b.qpn) in async_events(d, 1),
              "no QP_FATAL for an RQ on " + name)
        while not cq.empty():
            c = cq.poll(name)
            check(not (c.qpn == b.qpn and c.status == C.KITE_CQE_SUCCESS),
                  "a successful receive from an RQ on " + name)
        check_ready(d, "an RQ on " + name)
        check_msix_table(d, "an RQ on " + name)


@test("main")
def test_cq_ring_unmapped(env):
    """A send CQ on unmapped memory: the first CQE puts the CQ in error
    (CQ_ERR) and its QP in ERR (QP_FATAL); the receiver's CQ gets its
    completion, the device stays READY."""
    n = Node(env.dev[0], MAC_A)
    d = n.d
    scq = d.exec_ok(C.KITE_CMD_CREATE_CQ, cq_payload(
        pbl(UNMAPPED, 1), 4, n.r.eqn))[0]
    rcq = n.cq()
    a = n.qp(types.SimpleNamespace(cqn=scq), rcq)
    b = n.qp(rcq, rcq)
    a.connect(b.qpn, V4_GID, n.mac, sq_psn=0x100, rq_psn=0x200)
    b.connect(a.qpn, V4_GID, n.mac, sq_psn=0x200, rq_psn=0x100)
    b.post_recv(n.va(0x2000), 64, n.key)
    a.post_send(C.KITE_WQE_SEND, [(n.va(0), 16, n.key)])
    check_cqe(rcq.poll("the receive"), b.qpn, 0, C.KITE_CQE_RECV, 16)
    wait_for(lambda: qp_state(n, a) == C.KITE_QPS_ERR, "the sender in ERR")
    ev = async_events(d, 2)
    check_eq(sorted(ev), sorted([(C.KITE_EVT_CQ_ERR, scq),
                                 (C.KITE_EVT_QP_FATAL, a.qpn)]),
             "async events")
    check_eq(qp_state(n, b), C.KITE_QPS_RTS, "the receiver's state")
    check_ready(d, "a CQ on unmapped memory")


@test("main")
def test_comp_eq_unmapped(env):
    """A completion EQ on unmapped memory and an armed CQ on it: the event
    cannot be written, FATAL EQ_DMA, reported through EQ 0 as
    DEV_FATAL."""
    d = env.dev[0]
    comp_event_into(d, UNMAPPED, "an event ring on unmapped memory")
    check_eq(async_events(d, 1), [(C.KITE_EVT_DEV_FATAL,
                                   C.KITE_FATAL_EQ_DMA)], "async events")
    check_not_reset(d, "an event ring on unmapped memory")
    d.bring_up()


# ---- MSI-X messages aimed at registers that act, and at nothing --------

@test("main")
def test_msix_on_acting_registers(env):
    """The admin vector aimed at AQ_DB (with an index far beyond the AQ:
    a driver writing it would make the device FATAL), at ETH_TX_DB, at a
    kernel SQ doorbell and at unmapped memory: completions go on, the
    device stays READY and the message reaches none of them."""
    d = env.dev[0]
    d.bring_up()
    entry = msix_entry(d, C.KITE_MSIX_ADMIN)
    saved = [d.q.readl(entry + 4 * i) for i in range(3)]
    aims = (("AQ_DB", d.regs + C.KITE_REG_AQ_DB),
            ("ETH_TX_DB", d.regs + C.KITE_REG_ETH_TX_DB),
            ("an SQ doorbell", d.db + C.KITE_DB_SQ),
            ("unmapped memory", UNMAPPED))
    try:
        for name, addr in aims:
            d.q.writel(entry, addr & 0xffffffff)
            d.q.writel(entry + 4, addr >> 32)
            d.q.writel(entry + 8, 0xffff)
            d.take_irq(C.KITE_MSIX_ADMIN)
            for _ in range(3):
                pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
                d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd))
            check(not d.take_irq(C.KITE_MSIX_ADMIN),
                  "the admin vector still wrote its old address")
            check_ready(d, "admin interrupts aimed at " + name)
            check_eq(d.rd(C.KITE_REG_ETH_TX_CI), 0, "ETH_TX_CI")
    finally:
        for i, v in enumerate(saved):
            d.q.writel(entry + 4 * i, v)
    d.exec_ok(C.KITE_CMD_ALLOC_PD)
    check(d.take_irq(C.KITE_MSIX_ADMIN), "no admin interrupt once restored")


# ---- producer indexes that jump ----------------------------------------

@test("main")
def test_wq_index_jumps(env):
    """An RQ doorbell more than the depth ahead, and SQ and RQ doorbells
    one behind the consumer (2^32 - 1 ahead): QP_FATAL for that QP alone;
    its peer's SEND path is untouched."""
    cases = (("RQ", C.KITE_DB_RQ, (1 << RQ_LOG) + 1),
             ("SQ", C.KITE_DB_SQ, 0xffffffff),
             ("RQ", C.KITE_DB_RQ, 0xffffffff))
    for queue, off, index in cases:
        what = "%s doorbell 0x%x" % (queue, index)
        n, a, a_cq, b, b_cq = loopback_pair(env)
        d = n.d
        c = n.qp(b_cq, b_cq)            # a third QP, connected to b's peer
        c.connect(a.qpn, V4_GID, n.mac, sq_psn=0x300, rq_psn=0x400)
        db_write(d, off, b.qpn, index)
        wait_for(lambda: qp_state(n, b) == C.KITE_QPS_ERR, "ERR after " +
                 what)
        check_eq(async_events(d, 1), [(C.KITE_EVT_QP_FATAL, b.qpn)],
                 "async events after " + what)
        check_eq(qp_state(n, a), C.KITE_QPS_RTS, "the peer after " + what)
        check_eq(qp_state(n, c), C.KITE_QPS_RTS, "a bystander after " + what)
        check_ready(d, what)


# ---- doorbells on pages their context does not own ---------------------

@test("main")
def test_foreign_page_doorbells(env):
    """SQ, RQ and CQ doorbells whose index would be fatal, each on a page
    its object's context does not own (a context's page for the kernel's
    QPs, the kernel's page and another context's page for a context's QP,
    the page of a context that does not exist): all ignored and counted,
    no QP leaves RTS. Then the context breaks its own QP: only that QP
    fails, the kernel's pair still completes a SEND."""
    n, a, a_cq, b, b_cq = loopback_pair(env)
    d = n.d
    u1 = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    u2 = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    nobody = C.KITE_MAX_UCTX            # no context was given this page
    check(nobody not in (u1, u2), "contexts %d %d" % (u1, u2))
    upd = d.exec_ok(C.KITE_CMD_ALLOC_PD, uctx=u1)[0]
    ucq = Cq(n.r, 2, uctx=u1)
    uq = Qp(n.r, 2, upd, ucq, ucq, uctx=u1)
    uq.connect(uq.qpn, V4_GID, n.mac, sq_psn=0x500, rq_psn=0x500)
    bad_sq, bad_rq = (1 << SQ_LOG) + 1, (1 << RQ_LOG) + 1
    rings = []
    for page in (u1, nobody):
        for qp in (a, b):
            rings += [(page, C.KITE_DB_SQ, qp.qpn, bad_sq),
                      (page, C.KITE_DB_RQ, qp.qpn, bad_rq)]
        rings.append((page, C.KITE_DB_CQ, a_cq.cqn, 5))
    for page in (0, u2, nobody):
        rings += [(page, C.KITE_DB_SQ, uq.qpn, bad_sq),
                  (page, C.KITE_DB_RQ, uq.qpn, bad_rq),
                  (page, C.KITE_DB_CQ, ucq.cqn, 5)]
    rej = stats(d).db_rejected
    for page, off, num, index in rings:
        db_write(d, off, num, index, page=page)
    check_eq(stats(d).db_rejected - rej, len(rings), "doorbells rejected")
    for qp in (a, b, uq):
        check_eq(qp_state(n, qp), C.KITE_QPS_RTS,
                 "QP 0x%x after foreign doorbells" % qp.qpn)
    check(a_cq.empty() and b_cq.empty() and ucq.empty(), "CQEs appeared")
    # On its own page the context can hurt its own QP, and only that.
    db_write(d, C.KITE_DB_SQ, uq.qpn, bad_sq, page=u1)
    wait_for(lambda: qp_state(n, uq) == C.KITE_QPS_ERR,
             "the context's QP in ERR")
    check_eq(async_events(d, 1), [(C.KITE_EVT_QP_FATAL, uq.qpn)],
             "async events")
    b.post_recv(n.va(0x2000), 64, n.key)
    a.post_send(C.KITE_WQE_SEND, [(n.va(0), 16, n.key)])
    check_cqe(a_cq.poll("the kernel's SEND"), a.qpn, 0, C.KITE_CQE_SEND,
              None)
    check_cqe(b_cq.poll("the kernel's receive"), b.qpn, 0, C.KITE_CQE_RECV,
              16)
    check_ready(d, "foreign doorbells")


# ---- commands before enable and during reset ---------------------------

def acq_written(d, slots):
    """Whether any of the first SLOTS ACQ entries carries phase 1."""
    return any(d.acq_entry(i).flags & C.KITE_ACQE_PHASE for i in
               range(slots))


@test("main")
def test_aq_doorbell_before_enable(env):
    """Commands and an AQ doorbell written before ENABLE: nothing runs,
    nothing is latched (after ENABLE the indexes are 0 and the old
    doorbell does not run the commands), no FATAL; the first command after
    ENABLE runs alone."""
    d = env.dev[0]
    d.reset()
    d.configure()
    for _ in range(2):
        d.submit(C.KITE_CMD_ALLOC_PD)
    # SQ, CQ and EQ doorbells too: ignored while not READY.
    for off in (C.KITE_DB_SQ, C.KITE_DB_RQ, C.KITE_DB_CQ, C.KITE_DB_EQ):
        db_write(d, off, 1, 1)
    time.sleep(0.05)
    check(not acq_written(d, 2), "a completion before ENABLE")
    check_eq(d.status() & (C.KITE_STATUS_READY | C.KITE_STATUS_FATAL), 0,
             "status before ENABLE")
    d.wr(C.KITE_REG_DEV_CTRL, C.KITE_CTRL_ENABLE)
    check_ready(d, "ENABLE")
    time.sleep(0.05)
    check(not acq_written(d, 2), "the doorbell before ENABLE ran commands")
    d.aq_pi = 0
    d.exec_ok(C.KITE_CMD_ALLOC_PD)
    time.sleep(0.05)
    check(not d.acq_entry(1).flags & C.KITE_ACQE_PHASE,
          "the second command written before ENABLE ran")
    check_eq(stats(d).num_pd, 1, "num_pd")


@test("main")
def test_reset_during_admin_run(env):
    """A reset while one doorbell's commands (the longest page lists, one
    admin run each) are still being executed: after the reset the device
    writes no completion and reads no page list, and it comes back empty.
    The same commands while the device is held in reset (DEV_CTRL 0)
    are not executed."""
    d = env.dev[0]
    count = 16
    r = Rdma(d, eq=False, gids=False)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    desc, _ = one_page_level2(r, MAX_MR_PAGES)
    payload = reg_mr_payload(pd, 0, 0, MAX_MR_PAGES * PAGE, desc, 0)
    for _ in range(count):
        d.submit(C.KITE_CMD_REG_MR, payload, ring=False)
    acq_size = C.KITE_AQ_CQE_SIZE << d.acq_log
    d.wr(C.KITE_REG_AQ_DB, d.aq_pi)
    d.reset()
    after = d.q.read(d.acq, acq_size)
    entries = admin_work(d)[0]
    done = sum(1 for i in range(count)
               if d.acq_entry(i).flags & C.KITE_ACQE_PHASE)
    check(done < count, "all %d commands ran before the reset" % count)
    time.sleep(0.3)
    check_eq(d.q.read(d.acq, acq_size), after, "ACQ after the reset")
    check_eq(admin_work(d)[0], entries, "page-list entries read after reset")
    check_eq(d.status() & (C.KITE_STATUS_READY | C.KITE_STATUS_FATAL), 0,
             "status after the reset")
    # Held in reset: a doorbell does nothing.
    d.wr(C.KITE_REG_DEV_CTRL, 0)
    d.q.memset(d.acq, acq_size, 0)
    d.wr(C.KITE_REG_AQ_DB, count)
    time.sleep(0.05)
    check(not acq_written(d, count), "a completion while held in reset")
    check_eq(admin_work(d)[0], entries, "entries read while in reset")
    d.bring_up()
    s = stats(d)
    check_eq((s.num_pd, s.num_mr), (0, 0), "objects after the reset")


# ---- the longest page lists: a bounded time per command ----------------

@test("main")
def test_max_page_lists_wall_time(env):
    """A full AQ of REG_MRs with the longest page list CAP_MAX_MR_SIZE
    allows: each completes within CMD_BOUND of the one before, QEMU
    answers a register read within ANSWER_BOUND throughout (the admin
    bottom half yields between runs), every command succeeds."""
    d = env.dev[0]
    r = Rdma(d, eq=False, gids=False, aq_log=4)
    count = 1 << d.aq_log
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    desc, _ = one_page_level2(r, MAX_MR_PAGES)
    payload = reg_mr_payload(pd, 0, 0, MAX_MR_PAGES * PAGE, desc, 0)
    yields = admin_work(d)[1]
    for _ in range(count):
        d.submit(C.KITE_CMD_REG_MR, payload, ring=False)
    first = d.acq_ci
    d.wr(C.KITE_REG_AQ_DB, d.aq_pi)
    last = start = time.time()
    worst_gap = worst_answer = 0.0
    done = 0
    while done < count:
        t = time.time()
        d.status()
        worst_answer = max(worst_answer, time.time() - t)
        phase = (((first + done) >> d.acq_log) & 1) ^ 1
        if d.acq_entry(first + done).flags & C.KITE_ACQE_PHASE == phase:
            now = time.time()
            worst_gap = max(worst_gap, now - last)
            last = now
            done += 1
            continue
        check(time.time() - last < CMD_BOUND,
              "command %d took over %.1f s" % (done, CMD_BOUND))
    keys = []
    for _ in range(count):
        _, st, _, out = d.wait_cqe()
        check_eq(st, C.KITE_STS_OK, "REG_MR of the longest list")
        keys.append(out[0])
    check(worst_answer < ANSWER_BOUND,
          "QEMU took %.2f s to answer a register read" % worst_answer)
    check(admin_work(d)[1] - yields >= count - 1,
          "the admin run did not yield between the lists")
    res = batch(d, [(C.KITE_CMD_DEREG_MR, destroy_payload(k), 0)
                    for k in keys])
    check(all(st == C.KITE_STS_OK for st, _ in res), "DEREG_MR failed")
    check_ready(d, "%d lists in %.2f s (worst %.2f s)" %
                (count, last - start, worst_gap))
