# SPDX-License-Identifier: GPL-2.0-or-later
"""Doorbell records: the device reads SQ/RQ producer indexes and the CQ
consumer index from guest memory, says in the record when it needs a
doorbell, and refuses record addresses it cannot use."""

import hw
from device import MAC_A, stats
from harness import check, check_eq, clock_stepper, test, wait_for
from hw import C
from rdma import V4_GID, Node, async_events, cq_payload, db_write, \
    pbl, qp_payload, raddr

QP_REC = hw.sizeof("kite_qp_dbrec")
CQ_REC = hw.sizeof("kite_cq_dbrec")
SQ_PI = hw.offsetof("kite_qp_dbrec", "sq_pi")
RQ_PI = hw.offsetof("kite_qp_dbrec", "rq_pi")
SQ_POLL = hw.offsetof("kite_qp_dbrec", "sq_poll")
RQ_POLL = hw.offsetof("kite_qp_dbrec", "rq_poll")
CQ_CI = hw.offsetof("kite_cq_dbrec", "ci")
# Guest memory no other object of these tests uses.
REC_AREA = 0x180000
# Far beyond the test machine's RAM: no DMA reaches it.
NO_RAM = 0x7fff00000000


class Rec:
    """A zeroed doorbell record in guest memory."""

    def __init__(self, d, index, size):
        self.d = d
        self.addr = d.ram + REC_AREA + index * 0x40
        d.q.memset(self.addr, size, 0)

    def get(self, off):
        return int.from_bytes(self.d.q.read(self.addr + off, 4), "little")

    def put(self, off, value):
        self.d.q.write(self.addr + off, (value & 0xffffffff).to_bytes(
            4, "little"))


class Poster:
    """Posts as a provider with a record does: index in the record, the
    doorbell register only when the device does not poll the queue."""

    def __init__(self, qp, rec):
        self.qp, self.rec, self.rung = qp, rec, 0

    def kick(self, rq):
        qp, rec = self.qp, self.rec
        pi = qp.rq_pi if rq else qp.sq_pi
        rec.put(RQ_PI if rq else SQ_PI, pi)
        if not rec.get(RQ_POLL if rq else SQ_POLL):
            db_write(qp.d, C.KITE_DB_RQ if rq else C.KITE_DB_SQ, qp.qpn, pi)
            self.rung += 1

    def send(self, *args, **kw):
        slot = self.qp.post_send(*args, ring=False, **kw)
        self.kick(False)
        return slot

    def recv(self, *args):
        slot = self.qp.post_recv(*args, ring=False)
        self.kick(True)
        return slot


def rec_pair(env, a_rec=True, b_rec=True, rnr_retry=7):
    """Two connected RC QPs in loopback, each with a record if asked."""
    n = Node(env.dev[0], MAC_A)
    a_cq, b_cq = n.cq(), n.cq()
    ra = Rec(n.d, 0, QP_REC) if a_rec else None
    rb = Rec(n.d, 1, QP_REC) if b_rec else None
    a = n.qp(a_cq, a_cq, dbrec=ra.addr if ra else 0)
    b = n.qp(b_cq, b_cq, dbrec=rb.addr if rb else 0)
    a.connect(b.qpn, V4_GID, n.mac, sq_psn=0x100, rq_psn=0x200,
              rnr_retry=rnr_retry)
    b.connect(a.qpn, V4_GID, n.mac, sq_psn=0x200, rq_psn=0x100,
              rnr_retry=rnr_retry)
    return n, (a, a_cq, ra), (b, b_cq, rb)


@test("main")
def test_dbrec_bad_addresses(env):
    n = Node(env.dev[0], MAC_A)
    d, r = n.d, n.r
    cq = n.cq()
    base = d.ram + REC_AREA
    for addr, want, what in ((base + 4, C.KITE_STS_BAD_PARAM, "misaligned"),
                             (NO_RAM, C.KITE_STS_DMA_ERROR, "not RAM")):
        st, _ = d.exec(C.KITE_CMD_CREATE_QP, qp_payload(
            n.pd, cq.cqn, cq.cqn, pbl(r.sq_ring, 1), pbl(r.rq_ring, 1),
            dbrec=addr))
        check_eq(st, want, "CREATE_QP, record " + what)
        st, _ = d.exec(C.KITE_CMD_CREATE_CQ, cq_payload(
            pbl(r.cq_ring + 0x8000, 1), 4, r.eqn, dbrec=addr))
        check_eq(st, want, "CREATE_CQ, record " + what)
    # A CQ record needs only its own (8-byte) alignment.
    d.exec_ok(C.KITE_CMD_CREATE_CQ, cq_payload(
        pbl(r.cq_ring + 0x8000, 1), 4, r.eqn, dbrec=base + CQ_REC))


@test("main")
def test_dbrec_sq_without_doorbell(env):
    n, (a, a_cq, ra), (b, b_cq, _) = rec_pair(env, b_rec=False)
    d = n.d
    pa = Poster(a, ra)
    mmio0 = stats(d)["db_mmio"]
    # No receive yet: the SEND is RNR NAKed and stays outstanding, so the
    # device keeps polling the SQ while virtual time stands still.
    n.write(0, b"one-two")
    pa.send(C.KITE_WQE_SEND, [(n.va(0), 3, n.key)])
    check_eq(pa.rung, 1, "first post rings (record zeroed)")
    check_eq(ra.get(SQ_POLL), C.KITE_DBREC_POLL, "device polls the SQ")
    pa.send(C.KITE_WQE_SEND, [(n.va(3), 4, n.key)])
    pa.send(C.KITE_WQE_SEND, [(n.va(0), 7, n.key)])
    check_eq(pa.rung, 1, "posts while the device polls ring no doorbell")
    for i in range(3):
        b.post_recv(n.va(0x4000 + i * 0x100), 0x100, n.key)
    step = clock_stepper(d.q, 1000000)
    for i in range(3):
        a_cq.poll("SEND %d" % i, step=step)
    sizes = [b_cq.poll("RECV %d" % i, step=step)["byte_len"]
             for i in range(3)]
    check_eq(sizes, [3, 4, 7], "received in order")
    check_eq(n.read(0x4100, 4), b"-two", "second message")
    # Idle: the device stops polling and asks for the doorbell again.
    wait_for(lambda: ra.get(SQ_POLL) == 0, "sq_poll cleared when idle")
    pa.send(C.KITE_WQE_SEND, [(n.va(0), 1, n.key)])
    check_eq(pa.rung, 2, "a post to an idle SQ rings")
    b.post_recv(n.va(0x4400), 0x100, n.key)
    a_cq.poll("SEND after idle", step=step)
    b_cq.poll("RECV after idle", step=step)
    st = stats(d)
    # The receives of b (no record) rang 4 times.
    check_eq(st["db_mmio"] - mmio0, pa.rung + 4, "doorbell registers "
             "written")
    check(st["db_rec_reads"] > 0, "no record read")


@test("main")
def test_dbrec_rq_without_doorbell(env):
    n, (a, a_cq, _), (b, b_cq, rb) = rec_pair(env, a_rec=False)
    d = n.d
    pb = Poster(b, rb)
    pb.recv(n.va(0x4000), 0x100, n.key)
    check_eq(rb.get(RQ_POLL), C.KITE_DBREC_POLL, "device polls the RQ")
    pb.recv(n.va(0x4100), 0x100, n.key)
    pb.recv(n.va(0x4200), 0x100, n.key)
    check_eq(pb.rung, 1, "receives posted while polled ring no doorbell")
    # Three SENDs behind one doorbell: the engine finds the 2nd and 3rd
    # receive in the record when its RQ looks empty.
    for i in range(3):
        n.write(0x10 * i, bytes([0x41 + i]) * 5)
        a.post_send(C.KITE_WQE_SEND, [(n.va(0x10 * i), 5, n.key)],
                    ring=False)
    db_write(d, C.KITE_DB_SQ, a.qpn, a.sq_pi)
    for i in range(3):
        a_cq.poll("SEND %d" % i)
        cqe = b_cq.poll("RECV %d" % i)
        check_eq(cqe["byte_len"], 5, "RECV %d length" % i)
        check_eq(cqe["status"], C.KITE_CQE_SUCCESS, "RECV %d status" % i)
    check_eq(n.read(0x4200, 5), b"CCCCC", "third receive buffer")
    check_eq(stats(d)["roce_rnr_naks_sent"], 0, "an RNR NAK: a receive "
             "in the record was missed")
    wait_for(lambda: rb.get(RQ_POLL) == 0, "rq_poll cleared when empty")


@test("main")
def test_dbrec_index_beyond_depth(env):
    n, (a, a_cq, ra), _ = rec_pair(env, b_rec=False)
    d = n.d
    # The record names 17 WQEs on a 16-deep SQ; the register names one.
    ra.put(SQ_PI, 17)
    n.write(0, b"x")
    a.post_send(C.KITE_WQE_SEND, [(n.va(0), 1, n.key)], ring=False)
    db_write(d, C.KITE_DB_SQ, a.qpn, 1)
    ev = async_events(d, 1)
    check_eq(ev[0], (C.KITE_EVT_QP_FATAL, a.qpn), "QP_FATAL")
    check_eq(n.r.query_qp(a.qpn)["state"], C.KITE_QPS_ERR, "QP state")


@test("main")
def test_dbrec_cq_consumer_index(env):
    n = Node(env.dev[0], MAC_A)
    d = n.d
    rc = Rec(d, 2, CQ_REC)
    a_cq = n.cq(log_depth=2, dbrec=rc.addr)        # 4 CQEs
    b_cq = n.cq()
    a = n.qp(a_cq, a_cq)
    b = n.qp(b_cq, b_cq)
    a.connect(b.qpn, V4_GID, n.mac, sq_psn=0x100, rq_psn=0x200)
    b.connect(a.qpn, V4_GID, n.mac, sq_psn=0x200, rq_psn=0x100)
    seg = raddr(n.va(0x8000), n.key)
    mmio0 = stats(d)["db_mmio"]
    # 12 WRITEs through a 4-entry CQ: the consumer index goes only to
    # the record, never to the CQ doorbell.
    for burst in range(3):
        for i in range(4):
            a.post_send(C.KITE_WQE_WRITE, [(n.va(0), 8, n.key)], seg,
                        ring=False)
        db_write(d, C.KITE_DB_SQ, a.qpn, a.sq_pi)
        for i in range(4):
            cqe = a_cq.poll("WRITE %d.%d" % (burst, i))
            check_eq(cqe["status"], C.KITE_CQE_SUCCESS, "WRITE status")
            rc.put(CQ_CI, a_cq.ci)
    check_eq(stats(d)["db_mmio"] - mmio0, 3, "only the SQ doorbells")
    check_eq(n.r.query_qp(a.qpn)["state"], C.KITE_QPS_RTS, "QP state")
    # A consumer index ahead of the producer is ignored: overflow.
    rc.put(CQ_CI, a_cq.ci + 100)
    for i in range(5):
        a.post_send(C.KITE_WQE_WRITE, [(n.va(0), 8, n.key)], seg,
                    ring=False)
    db_write(d, C.KITE_DB_SQ, a.qpn, a.sq_pi)
    ev = async_events(d, 2)
    check((C.KITE_EVT_CQ_ERR, a_cq.cqn) in ev, "no CQ_ERR: %r" % ev)
