# SPDX-License-Identifier: GPL-2.0-or-later
"""Every count and size an admin command (and ENABLE) takes, at the limit
the device advertises and one past it: at the limit the command succeeds,
one past it fails with the status hardware.rst gives, within a bounded
wall time, and the device still answers. The limits are read from the
capability registers (as a driver must) and kite_hw.h, never restated;
the largest rings alias one huge page, as a hostile guest's would."""

import time

from device import DEVICE_ATTR_SIZE, EQE_SIZE, destroy_payload, \
    eq_payload, gid_payload
from harness import check, check_eq, test
from hw import C
from rdma import CQE_SIZE, V4_DGID, V4_GID, Rdma, cq_payload, make_av, \
    modify_cq_payload, pbl
from test_mem_mgt import alloc_mr_payload
from test_srq import srq_payload

BIG = 0x8000000             # guest RAM no other test uses, 2 MiB aligned
HUGE_SHIFT = 21             # the page size the largest rings use
CMD_BOUND = 2.0             # seconds one command may take


def cap(d, reg):
    return d.rd(reg)


def log2_floor(n):
    return n.bit_length() - 1


def timed_exec(d, op, payload, uctx=0):
    """(status, out) of one command, which must finish within CMD_BOUND;
    then the device must still be READY and answer QUERY_DEVICE."""
    t = time.time()
    st, out = d.exec(op, payload, uctx)
    took = time.time() - t
    check(took < CMD_BOUND, "opcode 0x%x took %.2f s" % (op, took))
    return st, out


def still_answers(d, what):
    st = d.status()
    check(st & C.KITE_STATUS_READY and not st & C.KITE_STATUS_FATAL,
          "not READY after %s (status 0x%x)" % (what, st))
    check_eq(d.query(C.KITE_CMD_QUERY_DEVICE, DEVICE_ATTR_SIZE)[0],
             C.KITE_STS_OK, "QUERY_DEVICE after " + what)


def boundary(d, what, op, at, past, past_status=None, undo=None):
    """op with payload AT succeeds (undo(out) then frees what it made),
    op with payload PAST answers past_status (BAD_PARAM by default)."""
    st, out = timed_exec(d, op, at)
    check_eq(st, C.KITE_STS_OK, what + " at the limit")
    if undo:
        undo(out)
    st, _ = timed_exec(d, op, past)
    check_eq(st, C.KITE_STS_BAD_PARAM if past_status is None else
             past_status, what + " one past the limit")
    still_answers(d, what)


def huge_list(d, addr, npages):
    """A level-1 list at addr of npages huge pages, all the page at BIG."""
    d.q.write(addr, b"".join(BIG.to_bytes(8, "little")
                             for _ in range(npages)))
    return pbl(addr, npages, HUGE_SHIFT, C.KITE_PBL_LEVEL_1)


def check_huge_pages(d):
    check(cap(d, C.KITE_REG_CAP_PAGE_SIZES) & (1 << HUGE_SHIFT),
          "2^%d-byte pages not in CAP_PAGE_SIZES" % HUGE_SHIFT)


@test("main")
def test_limit_enable_depths(env):
    """AQ, ACQ and async EQ at their largest log depths: READY, and the
    AQ runs a command; one past: FATAL BAD_CONFIG."""
    d = env.dev[0]
    aq_max = cap(d, C.KITE_REG_CAP_MAX_AQ_LOG_DEPTH)
    eq_max = cap(d, C.KITE_REG_CAP_MAX_EQ_LOG_DEPTH)
    check(C.KITE_AQ_CMD_SIZE << aq_max <= d.acq - d.aq,
          "the largest AQ does not fit before the ACQ")
    d.q.memset(BIG, EQE_SIZE << eq_max, 0)
    d.bring_up(aq_log=aq_max, acq_log=aq_max, aeq_log=eq_max, aeq=BIG)
    d.exec_ok(C.KITE_CMD_ALLOC_PD)
    for name, kw in (("AQ", dict(aq_log=aq_max + 1, acq_log=aq_max + 1)),
                     ("ACQ", dict(aq_log=aq_max, acq_log=aq_max + 1)),
                     ("async EQ", dict(aeq_log=eq_max + 1, aeq=BIG))):
        st = d.enable(**kw)
        check(st & C.KITE_STATUS_FATAL and not st & C.KITE_STATUS_READY,
              "%s one past its largest depth: status 0x%x" % (name, st))
        check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_BAD_CONFIG,
                 name + " depth: fatal code")
    d.bring_up()


@test("main")
def test_limit_create_eq(env):
    """CREATE_EQ: log depth CAP_MAX_EQ_LOG_DEPTH with a ring of exactly
    that size, the last MSI-X vector, CAP_MAX_EQ EQs in all; one past
    each."""
    d = env.dev[0]
    r = Rdma(d, eq=False, gids=False)
    check_huge_pages(d)
    eq_max = cap(d, C.KITE_REG_CAP_MAX_EQ_LOG_DEPTH)
    size = EQE_SIZE << eq_max
    vec = C.KITE_MSIX_COMP_BASE

    def undo(out):
        d.exec_ok(C.KITE_CMD_DESTROY_EQ, destroy_payload(out[0]))

    boundary(d, "CREATE_EQ log depth", C.KITE_CMD_CREATE_EQ,
             eq_payload(BIG, size >> 12, 12, eq_max, vec),
             eq_payload(BIG, 1, HUGE_SHIFT, eq_max + 1, vec), undo=undo)
    boundary(d, "CREATE_EQ ring pages", C.KITE_CMD_CREATE_EQ,
             eq_payload(BIG, size >> 12, 12, eq_max, vec),
             eq_payload(BIG, (size >> 12) - 1, 12, eq_max, vec), undo=undo)
    boundary(d, "CREATE_EQ vector", C.KITE_CMD_CREATE_EQ,
             eq_payload(r.cq_ring, 1, 12, 4, C.KITE_MSIX_NUM - 1),
             eq_payload(r.cq_ring, 1, 12, 4, C.KITE_MSIX_NUM), undo=undo)
    ncomp = cap(d, C.KITE_REG_CAP_MAX_EQ) - 1
    eqns = [d.exec_ok(C.KITE_CMD_CREATE_EQ, eq_payload(
        r.cq_ring + 0x1000 * i, 1, 12, 4, vec + i % C.KITE_MSIX_MAX_COMP))[0]
        for i in range(ncomp - 1)]
    boundary(d, "CREATE_EQ count", C.KITE_CMD_CREATE_EQ,
             eq_payload(BIG, size >> 12, 12, eq_max, vec),
             eq_payload(BIG, size >> 12, 12, eq_max, vec),
             C.KITE_STS_NO_RESOURCES)
    for eqn in eqns:
        d.exec_ok(C.KITE_CMD_DESTROY_EQ, destroy_payload(eqn))


@test("main")
def test_limit_cq_depth(env):
    """CREATE_CQ and MODIFY_CQ: log2(CAP_MAX_CQE) entries on a ring of the
    largest size (huge pages, all one page); one entry's worth deeper,
    and one page more than the largest ring, are BAD_PARAM."""
    d = env.dev[0]
    r = Rdma(d, gids=False)
    check_huge_pages(d)
    log_max = log2_floor(cap(d, C.KITE_REG_CAP_MAX_CQE))
    pages = (CQE_SIZE << log_max) >> HUGE_SHIFT
    ring = huge_list(d, r.lists, 2 * pages)
    big = dict(ring, npages=pages)
    over = dict(ring, npages=pages + 1)
    twice = dict(ring, npages=2 * pages)

    def undo(out):
        d.exec_ok(C.KITE_CMD_DESTROY_CQ, destroy_payload(out[0]))

    boundary(d, "CREATE_CQ log depth", C.KITE_CMD_CREATE_CQ,
             cq_payload(big, log_max, r.eqn),
             cq_payload(twice, log_max + 1, r.eqn), undo=undo)
    boundary(d, "CREATE_CQ ring pages", C.KITE_CMD_CREATE_CQ,
             cq_payload(big, log_max, r.eqn),
             cq_payload(over, log_max, r.eqn), undo=undo)
    cqn = r.cq()
    boundary(d, "MODIFY_CQ log depth", C.KITE_CMD_MODIFY_CQ,
             modify_cq_payload(cqn, big, log_max),
             modify_cq_payload(cqn, twice, log_max + 1))
    d.exec_ok(C.KITE_CMD_DESTROY_CQ, destroy_payload(cqn))


@test("main")
def test_limit_srq_depth(env):
    """CREATE_SRQ: the depth log2(CAP_MAX_SRQ_WR + 1) with the largest
    stride; one deeper is BAD_PARAM."""
    d = env.dev[0]
    Rdma(d, eq=False, gids=False)
    check_huge_pages(d)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    log_max = log2_floor(cap(d, C.KITE_REG_CAP_MAX_SRQ_WR) + 1)
    stride = C.KITE_RQ_MAX_LOG_STRIDE
    pages = max(1, (1 << (log_max + stride)) >> HUGE_SHIFT)
    ring = pbl(BIG, pages, HUGE_SHIFT)
    boundary(d, "CREATE_SRQ log depth", C.KITE_CMD_CREATE_SRQ,
             srq_payload(pd, ring, log_max, stride),
             srq_payload(pd, pbl(BIG, 2 * pages, HUGE_SHIFT), log_max + 1,
                         stride),
             undo=lambda out: d.exec_ok(C.KITE_CMD_DESTROY_SRQ,
                                        destroy_payload(out[0])))


@test("main")
def test_limit_alloc_mr_and_gids(env):
    """ALLOC_MR of CAP_MAX_FRWR_PAGES pages, ADD_GID at the last index
    (CAP_MAX_GID - 1); one past each is BAD_PARAM."""
    d = env.dev[0]
    Rdma(d, eq=False, gids=False)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    maxp = cap(d, C.KITE_REG_CAP_MAX_FRWR_PAGES)
    boundary(d, "ALLOC_MR max_pages", C.KITE_CMD_ALLOC_MR,
             alloc_mr_payload(pd, maxp), alloc_mr_payload(pd, maxp + 1),
             undo=lambda out: d.exec_ok(C.KITE_CMD_DEREG_MR,
                                        destroy_payload(out[0])))
    last = cap(d, C.KITE_REG_CAP_MAX_GID) - 1
    boundary(d, "ADD_GID index", C.KITE_CMD_ADD_GID,
             gid_payload(V4_GID, last), gid_payload(V4_GID, last + 1))
    d.exec_ok(C.KITE_CMD_DEL_GID, gid_payload(V4_GID, last))


@test("main")
def test_limit_modify_qp(env):
    """MODIFY_QP attributes at their largest values (CAP_MAX_RD_ATOM both
    ways, CAP_MAX_MTU, the last GID index, KITE_QP_MAX_TIMEOUT,
    KITE_QP_MAX_RETRY, KITE_QP_MAX_RNR_TIMER) reach RTS and read back;
    each one past its limit alone is BAD_PARAM and changes nothing."""
    d = env.dev[0]
    r = Rdma(d, gids=False)
    last = cap(d, C.KITE_REG_CAP_MAX_GID) - 1
    d.exec_ok(C.KITE_CMD_ADD_GID, gid_payload(V4_GID, last))
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    cq = r.cq()
    qpn = r.qp(pd, cq)
    rd_atom = cap(d, C.KITE_REG_CAP_MAX_RD_ATOM)
    mtu = cap(d, C.KITE_REG_CAP_MAX_MTU)
    r.modify_ok(qpn, "RESET -> INIT", state=C.KITE_QPS_INIT, pkey_index=0,
                port=C.KITE_PORT_NUM, access_flags=0)
    rtr = dict(state=C.KITE_QPS_RTR, av=make_av(V4_DGID, sgid_index=last),
               path_mtu=mtu, dest_qpn=C.KITE_QPN_MASK, rq_psn=C.KITE_PSN_MASK,
               max_dest_rd_atomic=rd_atom,
               min_rnr_timer=C.KITE_QP_MAX_RNR_TIMER)
    rts = dict(state=C.KITE_QPS_RTS, sq_psn=C.KITE_PSN_MASK,
               timeout=C.KITE_QP_MAX_TIMEOUT, retry_cnt=C.KITE_QP_MAX_RETRY,
               rnr_retry=C.KITE_QP_MAX_RETRY, max_rd_atomic=rd_atom)
    for name, f in (("path_mtu", dict(path_mtu=mtu + 1)),
                    ("max_dest_rd_atomic",
                     dict(max_dest_rd_atomic=rd_atom + 1)),
                    ("min_rnr_timer",
                     dict(min_rnr_timer=C.KITE_QP_MAX_RNR_TIMER + 1)),
                    ("sgid_index",
                     dict(av=make_av(V4_DGID, sgid_index=last + 1)))):
        check_eq(r.modify(qpn, **dict(rtr, **f)), C.KITE_STS_BAD_PARAM,
                 "INIT -> RTR with %s one past its limit" % name)
    check_eq(r.query_qp(qpn).state, C.KITE_QPS_INIT, "state after refusals")
    r.modify_ok(qpn, "INIT -> RTR at the limits", **rtr)
    for name, f in (("timeout", dict(timeout=C.KITE_QP_MAX_TIMEOUT + 1)),
                    ("retry_cnt", dict(retry_cnt=C.KITE_QP_MAX_RETRY + 1)),
                    ("rnr_retry", dict(rnr_retry=C.KITE_QP_MAX_RETRY + 1)),
                    ("max_rd_atomic", dict(max_rd_atomic=rd_atom + 1))):
        check_eq(r.modify(qpn, **dict(rts, **f)), C.KITE_STS_BAD_PARAM,
                 "RTR -> RTS with %s one past its limit" % name)
    check_eq(r.query_qp(qpn).state, C.KITE_QPS_RTR, "state after refusals")
    r.modify_ok(qpn, "RTR -> RTS at the limits", **rts)
    a = r.query_qp(qpn)
    got = dict((k, a[k]) for k in ("path_mtu", "dest_qpn", "rq_psn", "sq_psn",
                                   "max_dest_rd_atomic", "min_rnr_timer",
                                   "timeout", "retry_cnt", "rnr_retry",
                                   "max_rd_atomic"))
    want = dict((k, v) for k, v in dict(rtr, **rts).items() if k in got)
    check_eq(got, want, "attributes at the limits")
    check_eq(a.av.sgid_index, last, "sgid_index at the limit")
    still_answers(d, "MODIFY_QP at the limits")
    d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(qpn))
