# SPDX-License-Identifier: GPL-2.0-or-later
"""The data path: the RoCEv2 engine behind doorbells, WQEs, CQEs and
events, on QPs of one device in loopback."""

import random
import time

import hw
from device import DEVICE_ATTR_SIZE, MAC_A, destroy_payload, eq_payload, \
    hmp, stats
from harness import check, check_eq, clock_stepper, test, wait_for
from hw import C
from rdma import QP_STATS_SIZE, RQ_LOG, RQ_STRIDE, SQ_LOG, SQ_STRIDE, \
    V4_GID, Node, async_events, atomic, check_cqe, comp_eqe, db_write, \
    loopback_pair, make_av, pattern, query_obj, raddr, sge, ud_seg

# Where the random WQEs put their fields.
SQ_OPCODE = hw.offsetof("kite_sq_wqe_hdr", "opcode")
SQ_NUM_SGE = hw.offsetof("kite_sq_wqe_hdr", "num_sge")
SQ_HDR = hw.sizeof("kite_sq_wqe_hdr")
RQ_NUM_SGE = hw.offsetof("kite_rq_wqe_hdr", "num_sge")
RQ_HDR = hw.sizeof("kite_rq_wqe_hdr")
RADDR = hw.sizeof("kite_wqe_raddr")
SGE = hw.sizeof("kite_sge")
# The GRH area a UD receive buffer starts with.
GRH = C.KITE_UD_GRH_LEN


def loopback_still_works(env, when):
    """A new loopback pair (a reset) SENDs and receives."""
    n, a, a_cq, b, b_cq = loopback_pair(env)
    b.post_recv(n.va(0x4000), 0x100, n.key)
    a.post_send(C.KITE_WQE_SEND, [(n.va(0), 10, n.key)])
    a_cq.poll("SEND " + when)
    b_cq.poll("RECV " + when)


@test("main")
def test_dp_cap_flags(env):
    d = env.dev[0]
    d.bring_up()
    want = (C.KITE_DEV_CAP_RC | C.KITE_DEV_CAP_UC | C.KITE_DEV_CAP_UD |
            C.KITE_DEV_CAP_ATOMIC | C.KITE_DEV_CAP_IPV6 |
            C.KITE_DEV_CAP_MEM_MGT | C.KITE_DEV_CAP_MW |
            C.KITE_DEV_CAP_SRQ | C.KITE_DEV_CAP_MCAST)
    check_eq(d.rd(C.KITE_REG_CAP_FLAGS), want, "CAP_FLAGS")
    st, _, raw = d.query(C.KITE_CMD_QUERY_DEVICE, DEVICE_ATTR_SIZE)
    check_eq(st, C.KITE_STS_OK, "QUERY_DEVICE status")
    check_eq(hw.unpack("kite_device_attr", raw).cap_flags,
             d.rd(C.KITE_REG_CAP_FLAGS), "QUERY_DEVICE cap_flags")


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
    check_eq(cqe["imm_data"], 0x78563412, "immediate data (wire order)")
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
    seg = raddr(n.va(0x8000), n.key)
    s = a.post_send(C.KITE_WQE_WRITE, [(n.va(0), len(data), n.key)], seg)
    check_cqe(a_cq.poll("WRITE"), a.qpn, s, C.KITE_CQE_WRITE, len(data),
              what="write")
    check_eq(n.read(0x8000, len(data)), data, "written bytes")
    check(b_cq.empty(), "WRITE consumed a receive")
    # READ them back into offset 0x2000 over two SGEs.
    seg = raddr(n.va(0x8000), n.key)
    s = a.post_send(C.KITE_WQE_READ, [(n.va(0x2000), 1000, n.key),
                                      (n.va(0x3000), 4000, n.key)], seg)
    check_cqe(a_cq.poll("READ"), a.qpn, s, C.KITE_CQE_READ, len(data),
              what="read")
    check_eq(n.read(0x2000, 1000) + n.read(0x3000, 4000), data, "read bytes")
    # FETCH_ADD and CMP_SWP on an 8-byte word at 0xa000.
    n.write_u64(0xa000, 1000)
    seg = atomic(n.va(0xa000), n.key, 5)
    s = a.post_send(C.KITE_WQE_FETCH_ADD, [(n.va(0xb000), 8, n.key)], seg)
    check_cqe(a_cq.poll("FETCH_ADD"), a.qpn, s, C.KITE_CQE_FETCH_ADD, None,
              what="fetch_add")
    check_eq(n.read_u64(0xb000), 1000, "original")
    check_eq(n.read_u64(0xa000), 1005, "sum")
    seg = atomic(n.va(0xa000), n.key, 77, 1005)
    s = a.post_send(C.KITE_WQE_CMP_SWP, [(n.va(0xb008), 8, n.key)], seg)
    check_cqe(a_cq.poll("CMP_SWP"), a.qpn, s, C.KITE_CQE_CMP_SWP, None,
              what="cmp_swp")
    check_eq(n.read_u64(0xb008), 1005, "original 2")
    check_eq(n.read_u64(0xa000), 77, "swapped")
    # A bad rkey: remote access error, the QP goes to ERR.
    seg = raddr(n.va(0x8000), n.key ^ 0x100)
    s = a.post_send(C.KITE_WQE_WRITE, [(n.va(0), 16, n.key)], seg)
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
    wait_for(lambda: comp_eqe(r, 0)[2] & C.KITE_EQE_PHASE == 1,
             "completion EQE")
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
    check_eq(comp_eqe(r, 1)[2] & C.KITE_EQE_PHASE, 0, "EQE without arming")
    # ARM_SOLICITED: an unsolicited SEND raises nothing, a solicited one
    # does.
    b_cq.doorbell(C.KITE_DB_CQ_ARM_SOLICITED)
    b.post_recv(n.va(0x1000), 64, n.key)
    a.post_send(C.KITE_WQE_SEND, [(n.va(0), 5, n.key)])
    b_cq.poll("RECV 3")
    a_cq.poll("SEND 3")
    check_eq(comp_eqe(r, 1)[2] & C.KITE_EQE_PHASE, 0,
             "EQE for an unsolicited CQE")
    b.post_recv(n.va(0x1000), 64, n.key)
    a.post_send(C.KITE_WQE_SEND, [(n.va(0), 5, n.key)],
                flags=C.KITE_WQE_F_SIGNALED | C.KITE_WQE_F_SOLICITED)
    cqe = b_cq.poll("solicited RECV")
    check(cqe["flags"] & C.KITE_CQE_F_SOLICITED, "no SOLICITED flag")
    a_cq.poll("SEND 4")
    wait_for(lambda: comp_eqe(r, 1)[2] & C.KITE_EQE_PHASE == 1,
             "solicited EQE")
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
    seg = raddr(n.va(0x8000), n.key)
    for i in range(5):
        a.post_send(C.KITE_WQE_WRITE, [(n.va(0), 8, n.key)], seg,
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
    cqe = a_cq.peek(0)
    check_eq((cqe["wqe_idx"], cqe["flags"] & C.KITE_CQE_F_PHASE), (0, 1),
             "slot 0 intact")


@test("main")
def test_dp_qp_stats_permissions(env):
    n, a, a_cq, b, b_cq = loopback_pair(env)
    d = n.d
    st, s0 = a.stats()
    check_eq(st, C.KITE_STS_OK, "QUERY_QP_STATS")
    check_eq(s0["tx_packets"], 0, "tx_packets of a new QP")
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    check_eq(a.stats(uctx=u)[0], C.KITE_STS_PERMISSION, "foreign context")
    check_eq(a.stats(buflen=QP_STATS_SIZE - 1)[0], C.KITE_STS_BAD_PARAM,
             "short buffer")
    st, _ = d.exec(C.KITE_CMD_QUERY_QP_STATS,
                   query_obj(0x777, d.outbuf, QP_STATS_SIZE))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "unknown QP")
    n.write(0, b"x" * 100)
    seg = raddr(n.va(0x8000), n.key)
    a.post_send(C.KITE_WQE_WRITE, [(n.va(0), 100, n.key)], seg)
    a_cq.poll("WRITE")
    _, s1 = a.stats()
    _, sb = b.stats()
    check_eq(s1["tx_packets"], 1, "tx_packets after one WRITE")
    check(s1["tx_bytes"] >= 100, "tx_bytes %d" % s1["tx_bytes"])
    check_eq(sb["rx_packets"], 1, "responder rx_packets")
    check_eq(sb["tx_packets"], 1, "responder ACKs")


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
    seg = raddr(n.va(0x8000), n.key)
    ss = a.post_send(C.KITE_WQE_WRITE_IMM, [(n.va(0), 1500, n.key)], seg,
                     imm=0x11223344)
    check_cqe(a_cq.poll("UC WRITE_IMM"), a.qpn, ss, C.KITE_CQE_WRITE, 1500,
              what="uc write_imm")
    cqe = b_cq.poll("UC RECV_WRITE_IMM")
    check_cqe(cqe, b.qpn, rs, C.KITE_CQE_RECV_WRITE_IMM, 1500,
              what="uc recv_write_imm")
    check_eq(cqe["imm_data"], 0x11223344, "immediate data")
    check_eq(n.read(0x8000, 1500), msg[:1500], "UC written bytes")
    check_eq(n.read(0x6000, 16), bytes(16), "receive buffer untouched")


@test("main")
def test_dp_rnr_and_flush(env):
    n, a, a_cq, b, b_cq = loopback_pair(env, rnr_retry=0)
    # No receive posted and rnr_retry 0: RNR retry exceeded at once.
    n.write(0, b"rnr")
    s = a.post_send(C.KITE_WQE_SEND, [(n.va(0), 3, n.key)])
    cqe = a_cq.poll("SEND without a receive",
                    step=clock_stepper(n.d.q, 10000000))
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
                      pkey_index=0, port=C.KITE_PORT_NUM,
                      qkey=qkey)
        n.r.modify_ok(q.qpn, "UD to RTR", state=C.KITE_QPS_RTR)
        n.r.modify_ok(q.qpn, "UD to RTS", state=C.KITE_QPS_RTS, sq_psn=7)
    msg = pattern(100, 17)
    n.write(0, msg)
    rs = b.post_recv(n.va(0x4000), GRH + 256, n.key)
    ud = ud_seg(make_av(V4_GID, dmac=n.mac), b.qpn, qkey)
    ss = a.post_send(C.KITE_WQE_SEND, [(n.va(0), len(msg), n.key)], ud)
    check_cqe(a_cq.poll("UD SEND"), a.qpn, ss, C.KITE_CQE_SEND, len(msg),
              what="ud send")
    cqe = b_cq.poll("UD RECV")
    check_cqe(cqe, b.qpn, rs, C.KITE_CQE_RECV, GRH + len(msg),
              what="ud recv")
    check_eq(cqe["src_qp"], a.qpn, "UD src_qp")
    check(cqe["flags"] & C.KITE_CQE_F_GRH, "no GRH flag")
    check_eq(cqe["net_hdr"], C.KITE_CQE_NET_IPV4, "UD net_hdr (IPv4)")
    check_eq(cqe["smac"], n.mac, "UD smac")
    grh = n.read(0x4000, GRH)
    check_eq(grh[:20], bytes(20), "GRH: 20 zero bytes before IPv4")
    check_eq(grh[20] >> 4, 4, "GRH: IPv4 header")
    check_eq(n.read(0x4000 + 40, len(msg)), msg, "UD payload")
    # A wrong Q_Key: the datagram is dropped, no receive completes.
    b.post_recv(n.va(0x4000), GRH + 256, n.key)
    ud = ud_seg(make_av(V4_GID, dmac=n.mac), b.qpn, qkey + 1)
    a.post_send(C.KITE_WQE_SEND, [(n.va(0), len(msg), n.key)], ud)
    a_cq.poll("UD SEND with a wrong Q_Key")
    time.sleep(0.05)
    check(b_cq.empty(), "receive completed with a wrong Q_Key")


@test("main")
def test_dp_random_wqes(env):
    """Garbage WQEs and doorbells: errors and flushes, never a crash."""
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
                ring[off + SQ_OPCODE] = rnd.choice([0, 1, 2, 3, 4, 5, 6, 7,
                                                    0x80])
                ring[off + SQ_NUM_SGE] = rnd.randint(0, 9)
                for k in range(3):
                    # After the header, with or without a raddr segment.
                    at = off + SQ_HDR + SGE * k + rnd.choice([0, RADDR])
                    ring[at:at + SGE] = sge(
                        n.va(rnd.randrange(0, 0x10000)),
                        rnd.choice([0, 1, 64, 5000, 1 << 31]),
                        rnd.choice(keys))
            d.q.write(q.sq, bytes(ring))
            rq = bytearray(rnd.getrandbits(8) for _ in range(
                (1 << RQ_LOG) << RQ_STRIDE))
            for slot in range(1 << RQ_LOG):
                off = slot << RQ_STRIDE
                rq[off + RQ_NUM_SGE] = rnd.randint(0, 2)
                rq[off + RQ_HDR:off + RQ_HDR + SGE] = sge(
                    n.va(rnd.randrange(0, 0x10000)),
                    rnd.choice([0, 8, 4096, 70000]), rnd.choice(keys))
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
    loopback_still_works(env, "after garbage")


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
    seg = raddr(n.va(0x8000), n.key)
    for i in range(8):
        a.post_send(C.KITE_WQE_WRITE, [(n.va(0), 100, n.key)], seg,
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
    loopback_still_works(env, "after FATAL and reset")


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
