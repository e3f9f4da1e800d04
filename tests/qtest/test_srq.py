# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared receive queues: the SRQ commands, their checks, and receives of
RC and UD QPs taken from an SRQ in next-link order, with the limit, error
and last-WQE events."""

import time

import hw
from device import MAC_A, MAC_B, destroy_payload, eth_send, eth_setup, \
    mac_bytes, stats
from harness import TestFailure, check, check_eq, clock_stepper, test, \
    wait_for
from hw import C
from rdma import RQ_STRIDE, V4_DGID, V4_GID, Node, Rdma, check_cqe, \
    db_write, make_av, pattern, pbl, query_obj, sge, ud_seg
from test_hostile import rc_send_only_v4

OP_RC_SEND_FIRST = 0x00

GRH = C.KITE_UD_GRH_LEN
POLL = 5.0


def srq_payload(pdn, ring, log_depth=2, log_stride=RQ_STRIDE, limit=0):
    return hw.pack("kite_cmd_create_srq", pdn=pdn, log_depth=log_depth,
                   log_stride=log_stride, limit=limit, ring=ring)


def modify_srq_payload(srqn, mask, limit=0):
    return hw.pack("kite_cmd_modify_srq", srqn=srqn, attr_mask=mask,
                   limit=limit)


def query_srq(d, srqn, uctx=0):
    """QUERY_SRQ: (status, {log_depth, limit, posted, flags})."""
    st, out = d.exec(C.KITE_CMD_QUERY_SRQ, query_obj(srqn), uctx=uctx)
    return st, {"log_depth": out[C.KITE_SRQ_QUERY_LOG_DEPTH],
                "limit": out[C.KITE_SRQ_QUERY_LIMIT],
                "posted": out[C.KITE_SRQ_QUERY_POSTED],
                "flags": out[C.KITE_SRQ_QUERY_FLAGS]}


class Srq:
    """An SRQ driven as a driver does: a free list of slots linked through
    the WQEs' next fields, one slot always spare."""

    def __init__(self, n, log_depth=2, limit=0, ring_off=0x8000):
        self.d, self.n = n.d, n
        self.ring = n.r.rq_ring + ring_off
        self.depth = 1 << log_depth
        self.d.q.memset(self.ring, self.depth << RQ_STRIDE, 0)
        self.srqn = self.d.exec_ok(C.KITE_CMD_CREATE_SRQ, srq_payload(
            n.pd, pbl(self.ring, 1), log_depth, limit=limit))[0]
        # The free list: 0 -> 1 -> ... -> depth - 1 (the spare).
        self.link = [(i + 1) % self.depth for i in range(self.depth)]
        self.head, self.tail = 0, self.depth - 1
        self.pi = 0

    def write(self, slot, num_sge, nxt, sges=()):
        wqe = hw.pack("kite_rq_wqe_hdr", num_sge=num_sge, next=nxt)
        wqe += b"".join(sge(*s) for s in sges)
        self.d.q.write(self.ring + (slot << RQ_STRIDE), wqe)

    def post(self, addr, length, ring=True):
        check(self.head != self.tail, "SRQ full")
        slot = self.head
        self.write(slot, 1, self.link[slot], [(addr, length, self.n.key)])
        self.head = self.link[slot]
        self.pi += 1
        if ring:
            self.doorbell(self.pi)
        return slot

    def doorbell(self, pi, page=0):
        db_write(self.d, C.KITE_DB_SRQ, self.srqn, pi, page=page)

    def free(self, slot):
        """A completed slot goes to the tail of the free list."""
        self.link[self.tail] = slot
        off = hw.offsetof("kite_rq_wqe_hdr", "next")
        self.d.q.write(self.ring + (self.tail << RQ_STRIDE) + off,
                       slot.to_bytes(2, "little"))
        self.tail = slot


def wait_event(d, typ, data, timeout=POLL, step=None):
    """Waits for an async EQE of type typ with data (any position)."""
    deadline = time.time() + timeout
    while True:
        i = 0
        while True:
            e = d.eqe(i)
            if e[3] & C.KITE_EQE_PHASE != ((i >> d.aeq_log) & 1) ^ 1:
                break
            if e[2] == typ and e[0] == data:
                return
            i += 1
        if time.time() > deadline:
            raise TestFailure("no async event 0x%x for %u" % (typ, data))
        if step:
            step()
        time.sleep(0.002)


def has_event(d, typ, data):
    try:
        wait_event(d, typ, data, timeout=0)
    except TestFailure:
        return False
    return True


def connect(a, b, n, rnr_retry=7):
    a.connect(b.qpn, V4_GID, n.mac, sq_psn=0x100, rq_psn=0x200,
              rnr_retry=rnr_retry)
    b.connect(a.qpn, V4_GID, n.mac, sq_psn=0x200, rq_psn=0x100,
              rnr_retry=rnr_retry)


@test("main")
def test_srq_caps(env):
    d = env.dev[0]
    d.bring_up()
    check(d.rd(C.KITE_REG_CAP_FLAGS) & C.KITE_DEV_CAP_SRQ, "no CAP_SRQ")
    check_eq(d.rd(C.KITE_REG_CAP_MAX_SRQ), C.KITE_DEF_MAX_SRQ, "MAX_SRQ")
    check_eq(d.rd(C.KITE_REG_CAP_MAX_SRQ_WR), C.KITE_DEF_MAX_SRQ_WR,
             "MAX_SRQ_WR")
    check_eq(d.rd(C.KITE_REG_CAP_MAX_SRQ_SGE), C.KITE_DEF_MAX_SRQ_SGE,
             "MAX_SRQ_SGE")
    st, _, raw = d.query(C.KITE_CMD_QUERY_DEVICE,
                         hw.sizeof("kite_device_attr"))
    a = hw.unpack("kite_device_attr", raw)
    check_eq((a.max_srq, a.max_srq_wr, a.max_srq_sge),
             (C.KITE_DEF_MAX_SRQ, C.KITE_DEF_MAX_SRQ_WR,
              C.KITE_DEF_MAX_SRQ_SGE), "QUERY_DEVICE SRQ limits")


@test("main")
def test_srq_commands(env):
    d = env.dev[0]
    r = Rdma(d)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    ring = pbl(r.rq_ring, 1)
    srqn = d.exec_ok(C.KITE_CMD_CREATE_SRQ, srq_payload(pd, ring, 4,
                                                        limit=5))[0]
    check_eq(stats(d).num_srq, 1, "num_srq")
    st, q = query_srq(d, srqn)
    check_eq(st, C.KITE_STS_OK, "QUERY_SRQ")
    check_eq(q, {"log_depth": 4, "limit": 5, "posted": 0, "flags": 0},
             "QUERY_SRQ answer")
    d.exec_ok(C.KITE_CMD_MODIFY_SRQ, modify_srq_payload(
        srqn, C.KITE_SRQ_ATTR_LIMIT, 15))
    check_eq(query_srq(d, srqn)[1]["limit"], 15, "limit after MODIFY_SRQ")
    d.exec_ok(C.KITE_CMD_MODIFY_SRQ, modify_srq_payload(
        srqn, C.KITE_SRQ_ATTR_LIMIT, 0))
    check_eq(query_srq(d, srqn)[1]["limit"], 0, "limit 0 disarms")
    for mask, limit, want, what in (
            (C.KITE_SRQ_ATTR_MAX_WR, 0, C.KITE_STS_NOT_SUPPORTED, "resize"),
            (C.KITE_SRQ_ATTR_LIMIT, 16, C.KITE_STS_BAD_PARAM,
             "limit above capacity"),
            (1 << 5, 1, C.KITE_STS_BAD_PARAM, "unknown mask bit"),
            (0, 1, C.KITE_STS_BAD_PARAM, "empty mask")):
        st, _ = d.exec(C.KITE_CMD_MODIFY_SRQ,
                       modify_srq_payload(srqn, mask, limit))
        check_eq(st, want, "MODIFY_SRQ " + what)
    # Bad CREATE_SRQ values.
    for kw, want, what in (
            (dict(log_depth=1), C.KITE_STS_BAD_PARAM, "depth 2"),
            (dict(log_depth=16), C.KITE_STS_BAD_PARAM, "depth 2^16"),
            (dict(log_stride=C.KITE_RQ_MIN_LOG_STRIDE - 1),
             C.KITE_STS_BAD_PARAM, "stride too small"),
            (dict(log_stride=C.KITE_RQ_MAX_LOG_STRIDE + 1),
             C.KITE_STS_BAD_PARAM, "stride too large"),
            (dict(log_depth=2, limit=4), C.KITE_STS_BAD_PARAM,
             "limit = depth"),
            (dict(pdn=pd + 7), C.KITE_STS_BAD_HANDLE, "unknown PD"),
            (dict(ring=pbl(r.rq_ring + 8, 1)), C.KITE_STS_BAD_PARAM,
             "unaligned ring"),
            (dict(log_depth=10), C.KITE_STS_BAD_PARAM,
             "ring smaller than depth x stride")):
        f = dict(pdn=pd, ring=ring, log_depth=2)
        f.update(kw)
        st, _ = d.exec(C.KITE_CMD_CREATE_SRQ, srq_payload(**f))
        check_eq(st, want, "CREATE_SRQ " + what)
    # Another context may not use the SRQ.
    uctx = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    st, _ = query_srq(d, srqn, uctx=uctx)
    check_eq(st, C.KITE_STS_PERMISSION, "QUERY_SRQ from another context")
    # QPs on the SRQ: checked, and they keep it busy.
    cq = r.cq()
    sq = pbl(r.sq_ring, 1)
    for flags, srq, rq, rq_log, qp_type, want, what in (
            (C.KITE_QP_FLAG_SRQ, srqn + 9, {}, 0, C.KITE_QPT_RC,
             C.KITE_STS_BAD_HANDLE, "unknown SRQ"),
            (C.KITE_QP_FLAG_SRQ, srqn, pbl(r.rq_ring, 1), 0, C.KITE_QPT_RC,
             C.KITE_STS_BAD_PARAM, "an RQ ring as well"),
            (C.KITE_QP_FLAG_SRQ, srqn, {}, 4, C.KITE_QPT_RC,
             C.KITE_STS_BAD_PARAM, "an RQ depth as well"),
            (0, srqn, pbl(r.rq_ring, 1), 4, C.KITE_QPT_RC,
             C.KITE_STS_BAD_PARAM, "srqn without the flag"),
            (C.KITE_QP_FLAG_SRQ, srqn, {}, 0, C.KITE_QPT_GSI,
             C.KITE_STS_BAD_PARAM, "GSI QP")):
        st, _ = d.exec(C.KITE_CMD_CREATE_QP, hw.pack(
            "kite_cmd_create_qp", qp_type=qp_type, flags=flags,
            sq_log_depth=4, sq_log_stride=6, rq_log_depth=rq_log,
            rq_log_stride=4 if rq_log else 0, pdn=pd, send_cqn=cq,
            recv_cqn=cq, srqn=srq, sq=sq, rq=rq))
        check_eq(st, want, "CREATE_QP on an SRQ: " + what)
    qps = [d.exec_ok(C.KITE_CMD_CREATE_QP, hw.pack(
        "kite_cmd_create_qp", qp_type=t, flags=C.KITE_QP_FLAG_SRQ,
        sq_log_depth=4, sq_log_stride=6, pdn=pd, send_cqn=cq, recv_cqn=cq,
        srqn=srqn, sq=sq))[0] for t in (C.KITE_QPT_RC, C.KITE_QPT_UD)]
    st, _ = d.exec(C.KITE_CMD_DESTROY_SRQ, destroy_payload(srqn))
    check_eq(st, C.KITE_STS_BUSY, "DESTROY_SRQ with QPs on it")
    st, _ = d.exec(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd))
    check_eq(st, C.KITE_STS_BUSY, "DEALLOC_PD with an SRQ")
    d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(qps[0]))
    st, _ = d.exec(C.KITE_CMD_DESTROY_SRQ, destroy_payload(srqn))
    check_eq(st, C.KITE_STS_BUSY, "DESTROY_SRQ with one QP on it")
    d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(qps[1]))
    d.exec_ok(C.KITE_CMD_DESTROY_SRQ, destroy_payload(srqn))
    check_eq(stats(d).num_srq, 0, "num_srq after destroy")
    st, _ = d.exec(C.KITE_CMD_DESTROY_SRQ, destroy_payload(srqn))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DESTROY_SRQ twice")
    # A reset drops SRQs.
    srqn = d.exec_ok(C.KITE_CMD_CREATE_SRQ, srq_payload(pd, ring))[0]
    r = Rdma(d)
    check_eq(stats(d).num_srq, 0, "num_srq after reset")
    check_eq(query_srq(d, srqn)[0], C.KITE_STS_BAD_HANDLE,
             "QUERY_SRQ after reset")


@test("main")
def test_srq_rc_receive(env):
    """Two RC QPs receive from one SRQ; slots come back in any order."""
    n = Node(env.dev[0], MAC_A)
    s = Srq(n, log_depth=2)
    a_cq, b_cq = n.cq(), n.cq()
    a, a2 = n.qp(a_cq, a_cq), n.qp(a_cq, a_cq)
    b = n.qp(b_cq, b_cq, srqn=s.srqn)
    b2 = n.qp(b_cq, b_cq, srqn=s.srqn)
    connect(a, b, n)
    connect(a2, b2, n)
    # RQ doorbells of an SRQ QP are refused.
    rej = stats(n.d).db_rejected
    db_write(n.d, C.KITE_DB_RQ, b.qpn, 1)
    check_eq(stats(n.d).db_rejected, rej + 1, "RQ doorbell of an SRQ QP")
    slots = [s.post(n.va(0x4000 + i * 0x1000), 0x1000) for i in range(3)]
    check_eq(slots, [0, 1, 2], "SRQ slots")
    check_eq(query_srq(n.d, s.srqn)[1]["posted"], 3, "posted WQEs")
    # A doorbell that arrives late, behind a newer one, takes nothing back.
    s.doorbell(1)
    check_eq(query_srq(n.d, s.srqn)[1]["posted"], 3,
             "posted WQEs after a stale doorbell")
    n.d.exec_ok(C.KITE_CMD_MODIFY_SRQ, modify_srq_payload(
        s.srqn, C.KITE_SRQ_ATTR_LIMIT, 2))
    msgs = [pattern(1500 + 100 * i, 30 + i) for i in range(4)]
    for i, m in enumerate(msgs):
        n.write(i * 0x800, m)

    def send(qp, i):
        qp.post_send(C.KITE_WQE_SEND, [(n.va(i * 0x800), len(msgs[i]),
                                        n.key)])
        a_cq.poll("SEND %d" % i)
        return b_cq.poll("RECV %d" % i)

    check_cqe(send(a, 0), b.qpn, 0, C.KITE_CQE_RECV, len(msgs[0]),
              what="first")
    check(not has_event(n.d, C.KITE_EVT_SRQ_LIMIT, s.srqn),
          "limit event with 2 WQEs left")
    # Still armed: an early event would have disarmed it.
    check_eq(query_srq(n.d, s.srqn)[1]["limit"], 2,
             "limit armed with 2 WQEs left")
    check_cqe(send(a2, 1), b2.qpn, 1, C.KITE_CQE_RECV, len(msgs[1]),
              what="second, other QP")
    wait_event(n.d, C.KITE_EVT_SRQ_LIMIT, s.srqn)
    check_eq(query_srq(n.d, s.srqn)[1], {"log_depth": 2, "limit": 0,
                                         "posted": 1, "flags": 0},
             "SRQ after the limit event")
    check_eq(n.read(0x4000, len(msgs[0])), msgs[0], "first message")
    check_eq(n.read(0x5000, len(msgs[1])), msgs[1], "second message")
    # Slot 0 completes first: it goes behind the spare slot 3, which the
    # next post fills; the device follows 2 -> 3 -> 0.
    s.free(0)
    check_eq(s.post(n.va(0x7000), 0x1000), 3, "post after a free")
    check_cqe(send(a, 2), b.qpn, 2, C.KITE_CQE_RECV, len(msgs[2]),
              what="third")
    check_cqe(send(a2, 3), b2.qpn, 3, C.KITE_CQE_RECV, len(msgs[3]),
              what="fourth, slot 3")
    check_eq(n.read(0x6000, len(msgs[2])), msgs[2], "third message")
    check_eq(n.read(0x7000, len(msgs[3])), msgs[3], "fourth message")
    # An RC QP on an SRQ moved to ERR reports its last WQE; the SRQ's WQEs
    # stay for the others.
    s.free(1)
    s.post(n.va(0x4000), 0x1000)
    n.r.modify_ok(b.qpn, "SRQ QP to ERR", state=C.KITE_QPS_ERR)
    wait_event(n.d, C.KITE_EVT_QP_LAST_WQE, b.qpn)
    check(b_cq.empty(), "a flush CQE for SRQ WQEs the QP did not hold")
    check_eq(query_srq(n.d, s.srqn)[1]["posted"], 1, "SRQ WQEs after ERR")
    check(not has_event(n.d, C.KITE_EVT_QP_LAST_WQE, b2.qpn),
          "last-WQE event of a QP not in ERR")


@test("main")
def test_srq_ud_receive(env):
    n = Node(env.dev[0], MAC_A)
    s = Srq(n, log_depth=3)
    a_cq, b_cq = n.cq(), n.cq()
    a = n.qp(a_cq, a_cq, qp_type=C.KITE_QPT_UD)
    b = n.qp(b_cq, b_cq, qp_type=C.KITE_QPT_UD, srqn=s.srqn)
    qkey = 0x4321
    for q in (a, b):
        n.r.modify_ok(q.qpn, "UD to INIT", state=C.KITE_QPS_INIT,
                      pkey_index=0, port=C.KITE_PORT_NUM, qkey=qkey)
        n.r.modify_ok(q.qpn, "UD to RTR", state=C.KITE_QPS_RTR)
        n.r.modify_ok(q.qpn, "UD to RTS", state=C.KITE_QPS_RTS, sq_psn=7)
    msg = pattern(200, 9)
    n.write(0, msg)
    for i in range(2):
        slot = s.post(n.va(0x4000 + i * 0x1000), GRH + 256)
        ud = ud_seg(make_av(V4_GID, dmac=n.mac), b.qpn, qkey)
        a.post_send(C.KITE_WQE_SEND, [(n.va(0), len(msg), n.key)], ud)
        a_cq.poll("UD SEND %d" % i)
        cqe = b_cq.poll("UD RECV %d" % i)
        check_cqe(cqe, b.qpn, slot, C.KITE_CQE_RECV, GRH + len(msg),
                  what="ud srq recv")
        check_eq(cqe["src_qp"], a.qpn, "UD src_qp")
        check_eq(n.read(0x4000 + i * 0x1000 + GRH, len(msg)), msg,
                 "UD payload")
    # UD QPs do not report a last WQE.
    # The flush and its events are posted within MODIFY_QP itself.
    n.r.modify_ok(b.qpn, "UD SRQ QP to ERR", state=C.KITE_QPS_ERR)
    check(not has_event(n.d, C.KITE_EVT_QP_LAST_WQE, b.qpn),
          "last-WQE event of a UD QP")


@test("main")
def test_srq_bad_values(env):
    """A bad next link or doorbell puts the SRQ in error; the QP on it then
    goes to ERR (QP_FATAL) with it, nothing outside the SRQ is
    touched."""
    n = Node(env.dev[0], MAC_A)
    s = Srq(n, log_depth=2)
    a_cq, b_cq = n.cq(), n.cq()
    a = n.qp(a_cq, a_cq)
    b = n.qp(b_cq, b_cq, srqn=s.srqn)
    idle = n.qp(b_cq, b_cq, srqn=s.srqn)
    connect(a, b, n, rnr_retry=0)
    s.write(0, 1, s.depth, [(n.va(0x4000), 0x100, n.key)])
    s.doorbell(1)
    n.write(0, b"bad link")
    n.write(0x4000, bytes(16))
    sl = a.post_send(C.KITE_WQE_SEND, [(n.va(0), 8, n.key)])
    cqe = a_cq.poll("SEND to a bad SRQ link",
                    step=clock_stepper(n.d.q, 10000000))
    # The SRQ QP went to ERR with the SRQ and answers nothing more: the
    # sender retries until its retry count runs out.
    check_cqe(cqe, a.qpn, sl, C.KITE_CQE_SEND, None,
              status=C.KITE_CQE_RETRY_EXC_ERR, what="bad link")
    wait_event(n.d, C.KITE_EVT_SRQ_ERR, s.srqn)
    check_eq(query_srq(n.d, s.srqn)[1]["flags"], C.KITE_SRQ_FLAG_ERROR,
             "SRQ error flag")
    # Its QPs could receive nothing more: they go to ERR (QP_FATAL), a QP
    # in RESET stays.
    wait_event(n.d, C.KITE_EVT_QP_FATAL, b.qpn)
    check_eq(n.r.query_qp(b.qpn).state, C.KITE_QPS_ERR, "SRQ QP state")
    check(not has_event(n.d, C.KITE_EVT_QP_FATAL, idle.qpn),
          "QP_FATAL for a QP in RESET")
    check_eq(n.r.query_qp(idle.qpn).state, C.KITE_QPS_RESET,
             "state of a QP in RESET on the SRQ")
    check(b_cq.empty(), "a receive CQE from a bad SRQ WQE")
    check_eq(n.read(0x4000, 16), bytes(16), "buffer of the bad WQE")
    # A doorbell beyond the capacity (depth - 1), and one from a page that
    # does not own the SRQ.
    s2 = Srq(n, log_depth=2, ring_off=0xa000)
    rej = stats(n.d).db_rejected
    s2.doorbell(1, page=3)
    check_eq(stats(n.d).db_rejected, rej + 1, "SRQ doorbell, foreign page")
    s2.doorbell(s2.depth)
    wait_event(n.d, C.KITE_EVT_SRQ_ERR, s2.srqn)
    check_eq(query_srq(n.d, s2.srqn)[1]["posted"], 0,
             "posted after a bad doorbell")


@test("main")
def test_srq_wqe_back_on_reset_and_destroy(env):
    """A QP that took an SRQ WQE for a SEND FIRST and is then reset or
    destroyed completes the WQE with WR_FLUSH_ERR naming its SRQ slot, so
    the host gets the slot back (no CQE would leak it for good)."""
    da, db = env.dev[0], env.dev[1]
    n = Node(da, MAC_A)
    db.bring_up()
    eth_setup(db)
    s = Srq(n, log_depth=2)
    cq = n.cq()
    peer_qpn, mtu = 0x77, 1024
    mac_a, mac_b = mac_bytes(MAC_A), mac_bytes(MAC_B)

    def take(qp, psn, what):
        """The QP takes the SRQ's one posted WQE for a SEND FIRST."""
        qp.connect(peer_qpn, V4_DGID, mac_b, sq_psn=0x100, rq_psn=psn)
        slot = s.post(n.va(0x4000), 0x2000)
        frame = rc_send_only_v4(mac_a, mac_b, V4_DGID[12:], V4_GID[12:],
                                qp.qpn, psn, pattern(mtu, 3),
                                opcode=OP_RC_SEND_FIRST)
        check_eq(eth_send(db, frame) & C.KITE_ETH_DESC_ERR, 0, "sent")
        wait_for(lambda: query_srq(da, s.srqn)[1]["posted"] == 0,
                 "the SEND FIRST takes the SRQ WQE " + what)
        check(cq.empty(), "a CQE before the message ended " + what)
        return slot

    def flushed(qp, slot, what):
        cqe = cq.poll("the flushed SRQ WQE " + what)
        check_cqe(cqe, qp.qpn, slot, C.KITE_CQE_RECV, None,
                  status=C.KITE_CQE_WR_FLUSH_ERR, what=what)
        check(cq.empty(), "more than one CQE " + what)
        s.free(slot)

    qp = n.qp(cq, cq, srqn=s.srqn)
    slot = take(qp, 0x300, "before RESET")
    n.r.modify_ok(qp.qpn, "SRQ QP to RESET", state=C.KITE_QPS_RESET)
    flushed(qp, slot, "at RESET")
    # Back in use after the reset, then destroyed holding a WQE.
    slot = take(qp, 0x500, "before DESTROY_QP")
    da.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(qp.qpn))
    flushed(qp, slot, "at DESTROY_QP")
    check(not has_event(da, C.KITE_EVT_QP_FATAL, qp.qpn),
          "a QP error event for the flush")
