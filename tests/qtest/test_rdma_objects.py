# SPDX-License-Identifier: GPL-2.0-or-later
"""CQs, page buffer lists, QPs and their state machine, MRs, and the MR
lookup of the device (kite_mr_map(), through its test-only properties)."""

from device import SMALL_MAX_OBJECTS, SMALL_MR_CACHE_PAGES, \
    destroy_payload, stats
from harness import TestFailure, check, check_eq, test
from hw import C
from rdma import CQE_SIZE, PAGE, PBL_ENTRY, QP_ATTR_SIZE, V4_DGID, V6_DGID, \
    Rdma, \
    batch, cq_doorbell, cq_payload, key_index, key_variant, make_av, \
    modify_cq_payload, modify_qp_payload, obj_counts, pbl, pbl_list, \
    qp_payload, query_obj, reg_mr_payload

CHUNK = C.KITE_PBL_ENTRIES_PER_CHUNK    # entries of one level-2 chunk
PORT = C.KITE_PORT_NUM
FIRST_QPN = C.KITE_GSI_QPN + 1          # QPNs after GSI's, allocated in turn
# A QP number: its table slot, and above that how often the slot was used.
SLOT_BITS = C.KITE_DEF_QPN_SLOT_BITS
QPN_GENS = (C.KITE_QPN_MASK + 1) >> SLOT_BITS
MAX_CQ_LOG = C.KITE_DEF_MAX_CQE.bit_length() - 1
MAX_WR_LOG = C.KITE_DEF_MAX_QP_WR.bit_length() - 1
MAX_CQ_RING_PAGES = C.KITE_DEF_MAX_CQE * CQE_SIZE // PAGE
# The device whose kite_mr_map() test_mr_map drives through QOM.
K0 = "/machine/peripheral/k0"


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
            cqn, pbl(r.cq_ring, 512), MAX_CQ_LOG + 1), C.KITE_STS_BAD_PARAM),
        ("unknown CQ", modify_cq_payload(
            cqn + 1, pbl(r.cq_ring, 1), 4), C.KITE_STS_BAD_HANDLE),
    ]
    for name, payload, want in bad_modify:
        st, _ = d.exec(C.KITE_CMD_MODIFY_CQ, payload)
        check_eq(st, want, "MODIFY_CQ " + name)
    bad = [
        ("depth 1", cq_payload(pbl(r.cq_ring, 1), 1, r.eqn),
         C.KITE_STS_BAD_PARAM),
        ("depth above max_cqe", cq_payload(pbl(r.cq_ring, 512),
                                           MAX_CQ_LOG + 1, r.eqn),
         C.KITE_STS_BAD_PARAM),
        ("eqn 0 (async EQ)", cq_payload(pbl(r.cq_ring, 1), 4, 0),
         C.KITE_STS_BAD_PARAM),
        ("EQ not created", cq_payload(pbl(r.cq_ring, 1), 4, r.eqn + 1),
         C.KITE_STS_BAD_HANDLE),
        ("EQ beyond max_eq", cq_payload(pbl(r.cq_ring, 1), 4, 0xffff),
         C.KITE_STS_BAD_HANDLE),
        ("ring too small", cq_payload(pbl(r.cq_ring, 1), 8, r.eqn),
         C.KITE_STS_BAD_PARAM),
        ("ring pages beyond max_cqe", cq_payload(
            pbl(r.cq_ring, MAX_CQ_RING_PAGES + 1), 4, r.eqn),
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


def fill_to_limit(d, op, payload, name):
    """SMALL_MAX_OBJECTS commands op, all OK, then one more answering
    NO_RESOURCES; their out[0] (the handles)."""
    res = batch(d, [(op, payload, 0)] * SMALL_MAX_OBJECTS)
    check(all(st == C.KITE_STS_OK for st, _ in res), name + " failed")
    st, _ = d.exec(op, payload)
    check_eq(st, C.KITE_STS_NO_RESOURCES, name + " beyond the limit")
    return [out[0] for _, out in res]


def destroy_all(d, op, handles, name, kind):
    """op on every handle, all OK; then no object of kind is left."""
    res = batch(d, [(op, destroy_payload(h), 0) for h in handles])
    check(all(st == C.KITE_STS_OK for st, _ in res), name + " failed")
    check_eq(obj_counts(d)[kind], 0, "num_%s after %s of all" % (kind, name))


@test("small")
def test_cq_exhaustion(env):
    d = env.dev[0]
    r = Rdma(d, gids=False)
    check_eq(d.rd(C.KITE_REG_CAP_MAX_CQ), C.KITE_DEF_MAX_CQ, "CAP_MAX_CQ")
    cqns = fill_to_limit(d, C.KITE_CMD_CREATE_CQ,
                         cq_payload(pbl(r.cq_ring, 1), 4, r.eqn), "CREATE_CQ")
    check_eq(cqns, list(range(1, SMALL_MAX_OBJECTS + 1)), "cqns, lowest first")
    check_eq(obj_counts(d)["cq"], SMALL_MAX_OBJECTS, "num_cq")
    destroy_all(d, C.KITE_CMD_DESTROY_CQ, cqns, "DESTROY_CQ", "cq")


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
    r.level1(chunk0, entries[:CHUNK])
    r.level1(chunk1, entries[CHUNK:])
    r.level1(top, [chunk0, chunk1])
    key = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, 0, 0x10000, 600 * PAGE, pbl(top, 600, 12, 2), 7))[0]
    check_eq(key_variant(key), 7, "level-2 MR key variant")
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
    r.level1(chunk1, entries[CHUNK:-1] + [0])
    st, _ = d.exec(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, 0, 0, 600 * PAGE, pbl(top, 600, 12, 2), 0))
    check_eq(st, C.KITE_STS_BAD_PARAM, "MR level-2 zero entry in chunk 1")
    check("page list entry" in env.q.guest_errors(), "bad entry not logged")
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(key))
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd))
    d.exec_ok(C.KITE_CMD_DESTROY_CQ, destroy_payload(c1))
    d.exec_ok(C.KITE_CMD_DESTROY_CQ, destroy_payload(c2))


@test("main")
def test_qp_create_destroy(env):
    d = env.dev[0]
    r = Rdma(d, gids=False)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    cq = r.cq()
    a = r.qp(pd, cq)
    b = r.qp(pd, cq, qp_type=C.KITE_QPT_UD)
    check(a >= FIRST_QPN and b == a + 1, "QPNs %d, %d" % (a, b))
    d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(a))
    c = r.qp(pd, cq, qp_type=C.KITE_QPT_UC)
    check_eq(c, a + (1 << SLOT_BITS),
             "QPN after destroying %d: its slot, not its number" % a)
    st, _ = d.exec(C.KITE_CMD_QUERY_QP, query_obj(a, d.outbuf, QP_ATTR_SIZE))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "the old number is unknown")
    check_eq(r.query_qp(c)["state"], C.KITE_QPS_RESET, "new QP state")
    gsi = r.qp(pd, cq, qp_type=C.KITE_QPT_GSI)
    check_eq(gsi, C.KITE_GSI_QPN, "GSI QPN")
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
                        (C.KITE_CMD_QUERY_QP, query_obj(uqp, d.outbuf,
                                                        QP_ATTR_SIZE)),
                        (C.KITE_CMD_MODIFY_QP, modify_qp_payload(
                            uqp, state=C.KITE_QPS_ERR))):
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
        ("SQ depth above max_qp_wr", dict(sq_log=MAX_WR_LOG + 1),
         C.KITE_STS_BAD_PARAM),
        ("RQ depth above max_qp_wr", dict(rq_log=MAX_WR_LOG + 1),
         C.KITE_STS_BAD_PARAM),
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
    sq_pages = C.KITE_DEF_MAX_QP_WR << C.KITE_SQ_MAX_LOG_STRIDE >> 21
    rq_pages = C.KITE_DEF_MAX_QP_WR << C.KITE_RQ_MAX_LOG_STRIDE >> 21
    big_sq, big_rq = pbl(r.pages, sq_pages, 21), pbl(r.pages, rq_pages, 21)
    big_kw = dict(sq_log=MAX_WR_LOG, sq_stride=C.KITE_SQ_MAX_LOG_STRIDE,
                  rq_log=MAX_WR_LOG, rq_stride=C.KITE_RQ_MAX_LOG_STRIDE)
    big = d.exec_ok(C.KITE_CMD_CREATE_QP, qp_payload(
        pd, cq, cq, big_sq, big_rq, **big_kw))[0]
    d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(big))
    st, _ = d.exec(C.KITE_CMD_CREATE_QP, qp_payload(
        pd, cq, cq, pbl(r.pages, sq_pages + 1, 21), big_rq, **big_kw))
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
    av = make_av(V4_DGID, sgid_index=0, net_type=C.KITE_NET_IPV4,
                 hop_limit=17, tclass=0x28, sl=3)
    acc = C.KITE_ACCESS_REMOTE_WRITE | C.KITE_ACCESS_REMOTE_READ
    if qp_type == C.KITE_QPT_UD:
        init = dict(state=C.KITE_QPS_INIT, pkey_index=0, port=PORT,
                    qkey=0x11111111)
        rtr = dict(state=C.KITE_QPS_RTR)
        rts = dict(state=C.KITE_QPS_RTS, sq_psn=0x654321, qkey=0x22222222)
    elif qp_type == C.KITE_QPT_UC:
        init = dict(state=C.KITE_QPS_INIT, pkey_index=0, port=PORT,
                    access_flags=C.KITE_ACCESS_REMOTE_WRITE)
        rtr = dict(state=C.KITE_QPS_RTR, av=av, path_mtu=C.KITE_MTU_4096,
                   dest_qpn=0x42, rq_psn=0x777)
        rts = dict(state=C.KITE_QPS_RTS, sq_psn=0x888, access_flags=acc)
    else:
        init = dict(state=C.KITE_QPS_INIT, pkey_index=0, port=PORT,
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
    init = dict(state=C.KITE_QPS_INIT, pkey_index=0, port=PORT, access_flags=0)
    r.modify_ok(qpn, "RESET -> RESET", state=C.KITE_QPS_RESET)
    r.modify_ok(qpn, "RESET -> INIT", **init)
    r.modify_ok(qpn, "INIT -> ERR", state=C.KITE_QPS_ERR)
    r.modify_ok(qpn, "ERR -> ERR", state=C.KITE_QPS_ERR)
    r.modify_ok(qpn, "ERR -> RESET", state=C.KITE_QPS_RESET)
    r.modify_ok(qpn, "RESET -> INIT", **init)
    r.modify_ok(qpn, "INIT -> RTR", **rc_rtr_attrs(make_av(V4_DGID)))
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
    av = make_av(V4_DGID)
    init = dict(state=C.KITE_QPS_INIT, pkey_index=0, port=PORT, access_flags=0)
    illegal = [
        ("RESET -> RTS", dict(state=C.KITE_QPS_RTS, sq_psn=1, timeout=1,
                              retry_cnt=1, rnr_retry=1, max_rd_atomic=1),
         C.KITE_STS_BAD_STATE),
        ("RESET -> RTR", rc_rtr_attrs(av), C.KITE_STS_BAD_STATE),
        ("RESET -> SQD", dict(state=C.KITE_QPS_SQD), C.KITE_STS_BAD_STATE),
        ("RESET -> SQE", dict(state=C.KITE_QPS_SQE), C.KITE_STS_BAD_STATE),
        ("state 7", dict(state=7), C.KITE_STS_BAD_PARAM),
        ("RESET -> INIT without ACCESS_FLAGS",
         dict(state=C.KITE_QPS_INIT, pkey_index=0, port=PORT),
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
        ("sgid_index 16", dict(av=make_av(V4_DGID, sgid_index=16))),
        ("sgid_index empty", dict(av=make_av(V4_DGID, sgid_index=5))),
        ("net_type 2", dict(av=make_av(V4_DGID, net_type=2))),
        ("IPv6 AV on an IPv4 GID", dict(av=make_av(V6_DGID, net_type=1))),
        ("IPv4 AV with an IPv6 dgid", dict(av=make_av(V6_DGID))),
        ("flow_label 2^20", dict(av=make_av(V6_DGID, sgid_index=1,
                                            net_type=1,
                                            flow_label=1 << 20))),
    ]
    for name, f in bad_values:
        check_eq(r.modify(qpn, **dict(rtr, **f)), C.KITE_STS_BAD_PARAM,
                 "INIT -> RTR with " + name)
    check_eq(r.query_qp(qpn)["state"], C.KITE_QPS_INIT, "still INIT")
    r.modify_ok(qpn, "INIT -> RTR over IPv6", **dict(rtr, av=make_av(
        V6_DGID, sgid_index=1, net_type=1, flow_label=0xfffff)))
    rts = dict(state=C.KITE_QPS_RTS, sq_psn=5, timeout=31, retry_cnt=7,
               rnr_retry=7, max_rd_atomic=16)
    for name, f in (("timeout 32", dict(timeout=32)),
                    ("retry_cnt 8", dict(retry_cnt=8)),
                    ("rnr_retry 8", dict(rnr_retry=8)),
                    ("max_rd_atomic cap + 1",
                     dict(max_rd_atomic=C.KITE_DEF_MAX_RD_ATOM + 1)),
                    ("sq_psn 2^24", dict(sq_psn=1 << 24)),
                    ("port (not allowed in RTR -> RTS)", dict(port=PORT))):
        check_eq(r.modify(qpn, **dict(rts, **f)), C.KITE_STS_BAD_PARAM,
                 "RTR -> RTS with " + name)
    r.modify_ok(qpn, "RTR -> RTS", **rts)
    check_eq(r.modify(qpn, state=C.KITE_QPS_INIT, pkey_index=0, port=PORT,
                      access_flags=0), C.KITE_STS_BAD_STATE, "RTS -> INIT")
    check_eq(r.modify(qpn, state=C.KITE_QPS_SQE), C.KITE_STS_BAD_STATE,
             "RTS -> SQE")
    r.modify_ok(qpn, "RTS -> ERR", state=C.KITE_QPS_ERR)
    check_eq(r.modify(qpn, state=C.KITE_QPS_RTS), C.KITE_STS_BAD_STATE,
             "ERR -> RTS")
    # UD takes no AV and no path MTU at RTR.
    ud = r.qp(pd, cq, qp_type=C.KITE_QPT_UD)
    r.modify_ok(ud, "UD to INIT", state=C.KITE_QPS_INIT, pkey_index=0,
                port=PORT, qkey=7)
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


@test("small")
def test_qp_exhaustion(env):
    """QPs up to the limit in the lowest slots; a slot's number changes
    each time it is used again and comes back after QPN_GENS uses."""
    d = env.dev[0]
    r = Rdma(d, gids=False)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    cq = r.cq()
    check_eq(d.rd(C.KITE_REG_CAP_MAX_QP), C.KITE_DEF_MAX_QP, "CAP_MAX_QP")
    max_qp = SMALL_MAX_OBJECTS
    payload = r.qp_payload(pd, cq, cq)
    res = batch(d, [(C.KITE_CMD_CREATE_QP, payload, 0)] * max_qp)
    check(all(st == C.KITE_STS_OK for st, _ in res), "CREATE_QP failed")
    qpns = [out[0] for _, out in res]
    check_eq(qpns, list(range(FIRST_QPN, FIRST_QPN + max_qp)), "QPNs")
    st, _ = d.exec(C.KITE_CMD_CREATE_QP, payload)
    check_eq(st, C.KITE_STS_NO_RESOURCES, "CREATE_QP beyond the limit")
    check_eq(obj_counts(d)["qp"], max_qp, "num_qp")
    q = 5
    for gen in range(1, QPN_GENS + 1):
        d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(q))
        q = r.qp(pd, cq)
        check_eq(q, 5 | (gen % QPN_GENS) << SLOT_BITS,
                 "slot 5 used %d more times" % gen)
    qpns = [x for x in qpns if x != 5] + [q]
    res = batch(d, [(C.KITE_CMD_DESTROY_QP, destroy_payload(x), 0)
                    for x in qpns])
    check(all(st == C.KITE_STS_OK for st, _ in res), "DESTROY_QP failed")
    check_eq(obj_counts(d)["qp"], 0, "num_qp after destroying all")
    d.exec_ok(C.KITE_CMD_DESTROY_CQ, destroy_payload(cq))
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd))


def table_memory(d):
    """x-table-memory: table chunks and bytes of MR page copies."""
    return d.q.qmp("qom-get", path=K0, property="x-table-memory")


@test("small")
def test_mr_exhaustion(env):
    d = env.dev[0]
    r = Rdma(d, eq=False, gids=False)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    check_eq(d.rd(C.KITE_REG_CAP_MAX_MR), C.KITE_DEF_MAX_MR, "CAP_MAX_MR")
    keys = fill_to_limit(d, C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, 0, 0, PAGE, pbl(r.pages, 1), 0), "REG_MR")
    check_eq([key_index(k) for k in keys],
             list(range(1, SMALL_MAX_OBJECTS + 1)), "key indexes")
    destroy_all(d, C.KITE_CMD_DEREG_MR, keys, "DEREG_MR", "mr")


@test("main")
def test_tables_grow_with_use(env):
    """Table memory follows the objects created, not the limits."""
    d = env.dev[0]
    r = Rdma(d, gids=False)
    none = {"pd": 0, "cq": 0, "qp": 0, "mr": 0, "mr-pages": 0}
    check_eq(table_memory(d), none, "tables after reset")
    chunk = 256
    n = chunk + 1
    res = batch(d, [(C.KITE_CMD_ALLOC_PD, b"", 0)] * n)
    pds = [out[0] for _, out in res]
    check_eq(pds, list(range(1, n + 1)), "PD numbers")
    cq = r.cq()
    r.qp(pds[0], cq)
    lst = r.level1(r.lists, [r.pages + i * PAGE for i in range(4)])
    key = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pds[0], 0, 0, 4 * PAGE, pbl(lst, 4, 12, 1), 0))[0]
    check_eq(table_memory(d), {"pd": 2, "cq": 1, "qp": 1, "mr": 1,
                               "mr-pages": 4 * PBL_ENTRY},
             "after %d PDs, a CQ, a QP and a 4-page MR" % n)
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(key))
    check_eq(table_memory(d)["mr-pages"], 0, "page copy after DEREG_MR")
    key = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pds[0], 0, 0, 4 * PAGE, pbl(lst, 4, 12, 1), 0))[0]
    r = Rdma(d, gids=False)         # reset + enable
    check_eq(table_memory(d), none, "tables after another reset")


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
    check_eq(key_variant(k1), 0x5a, "key variant")
    check(key_index(k1) >= 1, "key index %d" % key_index(k1))
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
    check_eq(key_index(k2), key_index(k1), "index reused")
    st, _ = d.exec(C.KITE_CMD_DEREG_MR, destroy_payload(k1))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DEREG_MR of a stale key")
    for h in (0, C.KITE_KEY_VARIANT_MASK, 0xffffffff,
              (C.KITE_DEF_MAX_MR + 1) << C.KITE_KEY_VARIANT_BITS):
        st, _ = d.exec(C.KITE_CMD_DEREG_MR, destroy_payload(h))
        check_eq(st, C.KITE_STS_BAD_HANDLE, "DEREG_MR 0x%x" % h)
    # DMA MR: kernel only, local access only, all-zero page list.
    dma = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, lw, 0, 0, None, C.KITE_MR_DMA_ALL | 3))[0]
    check_eq(key_variant(dma), 3, "DMA MR variant")
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    upd = d.exec_ok(C.KITE_CMD_ALLOC_PD, uctx=u)[0]
    st, _ = d.exec(C.KITE_CMD_REG_MR, reg_mr_payload(
        upd, lw, 0, 0, None, C.KITE_MR_DMA_ALL), uctx=u)
    check_eq(st, C.KITE_STS_PERMISSION, "DMA MR from a user context")
    max_size = C.KITE_DEF_MAX_MR_SIZE
    bad = [
        ("REMOTE_WRITE without LOCAL_WRITE", (pd, rw, 0, PAGE, pbl(
            r.pages, 1), 0)),
        ("REMOTE_ATOMIC without LOCAL_WRITE", (pd, ra | rr, 0, PAGE, pbl(
            r.pages, 1), 0)),
        ("unknown access bit", (pd, C.KITE_ACCESS_MW_BIND << 1, 0, PAGE,
                                pbl(r.pages, 1), 0)),
        ("length 0", (pd, 0, 0, 0, pbl(r.pages, 1), 0)),
        ("length above max_mr_size", (pd, 0, 0, max_size + 1, pbl(
            r.pages, (max_size >> 30) + 1, 30), 0)),
        ("iova + length wraps", (pd, 0, (1 << 64) - PAGE, 2 * PAGE, pbl(
            r.pages, 2), 0)),
        ("too few pages", (pd, 0, 0x800, PAGE, pbl(r.pages, 1), 0)),
        ("too many pages", (pd, 0, 0, PAGE, pbl(r.pages, 2), 0)),
        ("level 0 without pages", (pd, 0, 0, PAGE, pbl(r.pages, 0), 0)),
        ("key_variant bits 30:8", (pd, 0, 0, PAGE, pbl(r.pages, 1), 0x100)),
        ("DMA MR with remote read", (pd, lw | rr, 0, 0, None,
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
    check_eq(r.qp(pd, r.cq()), FIRST_QPN, "QPNs start again after reset")


def mr_map(d, key, pdn, access, addr, length, max_ranges=16, path=K0,
           qpn=0):
    """The device's MR lookup through x-mr-map: (CQE status, [(dma, len)]);
    qpn: the QP doing the access (type-2B windows)."""
    d.q.qmp("qom-set", path=path, property="x-mr-map",
            value={"key": key, "pdn": pdn, "access": access, "addr": addr,
                   "len": length, "max-ranges": max_ranges, "qpn": qpn})
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
    # The device translates from its copy of the list made at REG_MR: a
    # later change of the guest's list is not seen.
    d.q.write(lst + PBL_ENTRY, pbl_list([0]))
    check_eq(mr_map(d, k1, pd, 0, iova + 0xf00, 0x1000),
             (ok, [(p[0], 0x1000)]), "level 1 entry zeroed after REG_MR")
    d.q.write(lst + PBL_ENTRY, pbl_list([p[0]]))
    # Level 2: 600 contiguous pages merge into one range; a discontinuity
    # at the chunk boundary splits it.
    far = 1 << 40
    chunk0, chunk1, top = r.lists + 0x1000, r.lists + 0x2000, r.lists + 0x3000
    entries = [far + i * PAGE for i in range(600)]
    r.level1(chunk0, entries[:CHUNK])
    r.level1(chunk1, entries[CHUNK:])
    r.level1(top, [chunk0, chunk1])
    k2 = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, lw, 0, 600 * PAGE, pbl(top, 600, 12, 2), 0x33))[0]
    check_eq(mr_map(d, k2, pd, 0, 0, 600 * PAGE),
             (ok, [(far, 600 * PAGE)]), "level 2 whole MR")
    r.level1(chunk1, [far + (1 << 30)])
    k3 = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, lw, 0, 600 * PAGE, pbl(top, 600, 12, 2), 0x34))[0]
    check_eq(mr_map(d, k3, pd, lw, 511 * PAGE + 16, PAGE),
             (ok, [(far + 511 * PAGE + 16, PAGE - 16),
                   (far + (1 << 30), 16)]), "level 2 across chunks")
    check_eq(mr_map(d, k2, pd, lw, 511 * PAGE + 16, PAGE),
             (ok, [(far + 511 * PAGE + 16, PAGE)]),
             "level 2 copy of the earlier list")
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(k3))
    check_eq(mr_map(d, k2, pd, 0, 599 * PAGE, PAGE + 1)[0], prot,
             "level 2 beyond the end")
    # DMA MR: identity, local access only.
    kd = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, lw, 0, 0, None, C.KITE_MR_DMA_ALL | 0x44))[0]
    check_eq(mr_map(d, kd, pd, lw, 0x123456, 100),
             (ok, [(0x123456, 100)]), "DMA MR")
    check_eq(mr_map(d, kd, pd, rr, 0x123456, 100)[0], acc,
             "DMA MR remote read")
    # Deregistered keys no longer map.
    for k in (k0, k1, k2, kd):
        d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(k))
    check_eq(mr_map(d, k0, pd, 0, 0x7000800, 1)[0], prot,
             "deregistered key")
    # The request reads back as set, max-ranges 16 and qpn 0 when left out.
    q = d.q
    req = {"key": k1, "pdn": pd, "access": lw, "addr": 0x10100, "len": 8}
    q.qmp("qom-set", path=K0, property="x-mr-map", value=req)
    back = dict(req, **{"max-ranges": 16, "qpn": 0})
    check_eq(q.qmp("qom-get", path=K0, property="x-mr-map"), back,
             "x-mr-map read back")
    # Bad requests are refused and leave the last one in place.
    for name, bad, want in (
            ("without ranges", dict(req, **{"max-ranges": 0}),
             "max-ranges must be 1 to 16"),
            ("too many ranges", dict(req, **{"max-ranges": 17}),
             "max-ranges must be 1 to 16"),
            ("too long a lookup", dict(req, len=16 * 1024 * 1024 + 1),
             "len must be at most 16777216"),
            ("a member missing", {"key": k1, "pdn": pd},
             "'x-mr-map.access' is missing"),
            ("an unknown member", dict(req, pd=pd),
             "'x-mr-map.pd' is unexpected"),
            ("a negative key", dict(req, key=-1), "'key' expects uint32")):
        err = qmp_error(q, "qom-set", path=K0, property="x-mr-map",
                        value=bad)
        check(want in err, "x-mr-map with %s: %s" % (name, err))
    check_eq(q.qmp("qom-get", path=K0, property="x-mr-map"), back,
             "x-mr-map after refusals")
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
        check_eq(d.exec(op)[0], C.KITE_STS_BAD_OPCODE,
                 "admin opcode 0x%x" % op)


@test("small")
def test_mr_page_copies(env):
    """MR page-list copies within their budget (SMALL_MR_CACHE_PAGES pages
    here); an MR beyond it reads its list from guest memory at each use."""
    d = env.dev[0]
    r = Rdma(d, eq=False, gids=False)
    ok, prot = C.KITE_CQE_SUCCESS, C.KITE_CQE_LOC_PROT_ERR
    lw = C.KITE_ACCESS_LOCAL_WRITE
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    half = SMALL_MR_CACHE_PAGES // 2
    p = [r.pages + i * PAGE for i in range(SMALL_MR_CACHE_PAGES + 1)]
    lists = [r.lists + i * PAGE for i in range(3)]

    def reg(lst, n):
        r.level1(lst, p[:n])
        return d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
            pd, lw, 0, n * PAGE, pbl(lst, n, 12, 1), 0))[0]

    def copied():
        return table_memory(d)["mr-pages"] // PBL_ENTRY

    a = reg(lists[0], half)
    b = reg(lists[1], half)
    check_eq(copied(), 2 * half, "two MRs within the budget")
    c = reg(lists[2], half)
    check_eq(copied(), 2 * half, "a third MR beyond the budget")
    # The uncopied MR sees its list as it is now, the copied one does not.
    for lst in lists[1:]:
        d.q.write(lst + PBL_ENTRY, pbl_list([p[half]]))
    check_eq(mr_map(d, c, pd, 0, PAGE, 16), (ok, [(p[half], 16)]),
             "uncopied MR: changed entry seen at once")
    check_eq(mr_map(d, b, pd, 0, PAGE, 16), (ok, [(p[1], 16)]),
             "copied MR: its own copy")
    d.q.write(lists[2] + PBL_ENTRY, pbl_list([0]))
    check_eq(mr_map(d, c, pd, 0, PAGE, 16)[0], prot,
             "uncopied MR: zeroed entry fails the access")
    check_eq(mr_map(d, c, pd, 0, 0, 16), (ok, [(p[0], 16)]),
             "uncopied MR: other pages still map")
    # Deregistration gives the budget back; a list as long as the budget
    # fits alone, one page more never does.
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(a))
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(b))
    check_eq(copied(), 0, "after DEREG_MR")
    big = reg(lists[0], SMALL_MR_CACHE_PAGES + 1)
    check_eq(copied(), 0, "an MR longer than the budget")
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(big))
    full = reg(lists[0], SMALL_MR_CACHE_PAGES)
    check_eq(copied(), SMALL_MR_CACHE_PAGES, "an MR as long as the budget")
    check_eq(mr_map(d, full, pd, 0, 0, SMALL_MR_CACHE_PAGES * PAGE),
             (ok, [(p[0], SMALL_MR_CACHE_PAGES * PAGE)]), "whole copied MR")
    r = Rdma(d, eq=False, gids=False)   # reset + enable
    check_eq(copied(), 0, "after reset")
