# SPDX-License-Identifier: GPL-2.0-or-later
"""Fast registration, invalidation and memory windows through the send
queue: REG_MR, LOCAL_INV, BIND_MW and SEND_INV WQEs on loopback QPs, their
effect seen by remote accesses and by the MR lookup, and every check of
hardware.rst as the CQE status it gives."""

import hw
from device import destroy_payload
from harness import check, check_eq, test, wait_for
from hw import C
from rdma import PAGE, PBL_ENTRY, Cq, Qp, V4_GID, check_cqe, \
    loopback_pair, pattern, pbl, pbl_list, raddr, reg_mr_payload
from test_mem_mgt import ACC, BIND, FAR, LW, OK, PROT, RA, RR, RW, \
    alloc_mr_payload, alloc_mw_payload, rereg_payload
from test_rdma_objects import mr_map

QP_OP = C.KITE_CQE_LOC_QP_OP_ERR
BIND_ERR = C.KITE_CQE_MW_BIND_ERR
FR_IOVA = 0x80000100            # iova of the fast registrations
WIN_IOVA = 0x90000000           # iova of the MR windows are bound to
MAX_FRWR = C.KITE_DEF_MAX_FRWR_PAGES


def variant(key, v):
    """KEY with variant byte V."""
    return (key & ~C.KITE_KEY_VARIANT_MASK) | v


def reg_seg(iova, length, pbl_addr, key, access, npages, shift=12,
            reserved=bytes(3)):
    return hw.pack("kite_wqe_reg_mr", iova=iova, length=length,
                   pbl_addr=pbl_addr, key=key, access=access, npages=npages,
                   page_shift=shift, reserved=reserved)


def bind_seg(addr, length, mw_key, mr_key, access, reserved=0):
    return hw.pack("kite_wqe_bind_mw", addr=addr, length=length,
                   mw_key=mw_key, mr_key=mr_key, access=access,
                   reserved=reserved)


class Mem:
    """A loopback pair (A requester, B responder, one PD), a fast-register
    MR of max_pages, a regular MR with MW_BIND over 4 pages at WIN_IOVA,
    and pages for both outside the pair's own MR."""

    def __init__(self, env, max_pages=8):
        self.n, self.a, self.a_cq, self.b, self.b_cq = loopback_pair(env)
        n = self.n
        self.d, self.r = n.d, n.r
        self.pd = n.pd
        self.base = n.r.pages + 0x40000           # 16 pages for the MRs
        self.list = n.r.lists + 0x80000           # the REG_MR page lists
        self.d.q.memset(self.base, 16 * PAGE, 0)
        self.fk = self.d.exec_ok(C.KITE_CMD_ALLOC_MR, alloc_mr_payload(
            self.pd, max_pages, 0x10))[0]
        self.mk = self.d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
            self.pd, LW | RW | RR | RA | BIND, WIN_IOVA, 4 * PAGE,
            pbl(self.base + 8 * PAGE, 4), 0x20))[0]

    def page(self, i):
        return self.base + i * PAGE

    def reg(self, qp, key, pages, iova=FR_IOVA, length=None,
            access=LW | RW | RR, **kw):
        """A REG_MR WQE of KEY over PAGES (written as its page list)."""
        if length is None:
            length = len(pages) * PAGE - (iova & (PAGE - 1))
        self.d.q.write(self.list, pbl_list(pages))
        return qp.post_send(C.KITE_WQE_REG_MR, seg=reg_seg(
            iova, length, kw.pop("pbl_addr", self.list), key, access,
            kw.pop("npages", len(pages)), **kw))

    def inv(self, qp, key):
        return qp.post_send(C.KITE_WQE_LOCAL_INV, imm=key)

    def bind(self, qp, mw_key, mr_key, addr, length, access=RW | RR, **kw):
        return qp.post_send(C.KITE_WQE_BIND_MW, seg=bind_seg(
            addr, length, mw_key, mr_key, access, **kw))

    def done(self, qp, slot, opcode, what, status=OK):
        """The CQE of the memory WQE at SLOT of QP (A or B)."""
        cq = self.a_cq if qp is self.a else self.b_cq
        check_cqe(cq.poll(what), qp.qpn, slot, opcode, None, status, what)

    def write(self, rkey, addr, data, what, status=OK):
        """A WRITE of DATA (from the pair's MR) to ADDR under RKEY."""
        self.n.write(0, data)
        s = self.a.post_send(C.KITE_WQE_WRITE, [(self.n.va(0), len(data),
                                                 self.n.key)],
                             raddr(addr, rkey))
        check_cqe(self.a_cq.poll(what), self.a.qpn, s, C.KITE_CQE_WRITE,
                  None, status, what)

    def mapped(self, key, access, addr, length, qpn=0):
        return mr_map(self.d, key, self.pd, access, addr, length, qpn=qpn)

    def qp_err(self, qp, what):
        wait_for(lambda: self.r.query_qp(qp.qpn)["state"] == C.KITE_QPS_ERR,
                 what + ": QP in ERR")


@test("main")
def test_frwr_register_access_invalidate(env):
    """REG_MR, remote WRITE and READ through the new key, LOCAL_INV, and
    the index registered again under another variant."""
    m = Mem(env)
    a, d = m.a, m.d
    # Three pages out of order: iova FR_IOVA (0x100 into the first page).
    pages = [m.page(2), m.page(0), m.page(1)]
    k1 = variant(m.fk, 0x11)
    s = m.reg(a, k1, pages)
    m.done(a, s, C.KITE_CQE_REG_MR, "REG_MR")
    # The device copied the list: the driver may reuse its buffer at once.
    d.q.write(m.list, bytes(3 * PBL_ENTRY))
    check_eq(m.mapped(k1, RW, FR_IOVA + 0xe00, 0x400),
             (OK, [(pages[0] + 0xf00, 0x100), (pages[1], 0x300)]),
             "the new key maps through the WQE's page list")
    check_eq(m.mapped(m.fk, RW, FR_IOVA, 16)[0], PROT,
             "the ALLOC_MR variant")
    check_eq(m.mapped(k1, RW, FR_IOVA - 1, 2)[0], PROT, "below the iova")
    check_eq(m.mapped(k1, RW, FR_IOVA + 3 * PAGE - 0x100, 1)[0], PROT,
             "beyond the length")
    check_eq(m.mapped(k1, RA, FR_IOVA, 8)[0], ACC,
             "a right the WQE did not give")
    data = pattern(0x400, 3)
    m.write(k1, FR_IOVA + 0xe00, data, "WRITE through the new key")
    check_eq(d.q.read(pages[0] + 0xf00, 0x100) + d.q.read(pages[1], 0x300),
             data, "the bytes in the registered pages")
    s = a.post_send(C.KITE_WQE_READ, [(m.n.va(0x2000), 0x400, m.n.key)],
                    raddr(FR_IOVA + 0xe00, k1))
    check_cqe(m.a_cq.poll("READ"), a.qpn, s, C.KITE_CQE_READ, 0x400,
              what="READ through the new key")
    check_eq(m.n.read(0x2000, 0x400), data, "read back")
    # DEREG_MR is refused neither here nor anywhere: LOCAL_INV first.
    s = m.inv(a, k1)
    m.done(a, s, C.KITE_CQE_LOCAL_INV, "LOCAL_INV")
    check_eq(m.mapped(k1, RW, FR_IOVA, 16)[0], PROT, "invalidated key")
    # Free again: a new registration, one 64 KiB page, another variant.
    k2 = variant(m.fk, 0x12)
    s = m.reg(a, k2, [m.page(0)], iova=0x7000, length=0x100, shift=16,
              access=RR)
    m.done(a, s, C.KITE_CQE_REG_MR, "REG_MR of 64 KiB pages")
    check_eq(m.mapped(k2, RR, 0x7000, 0x10), (OK, [(m.page(7), 0x10)]),
             "offset 0x7000 of a 64 KiB page")
    check_eq(m.mapped(k1, RW, FR_IOVA, 16)[0], PROT, "the stale variant")
    s = m.inv(a, k2)
    m.done(a, s, C.KITE_CQE_LOCAL_INV, "LOCAL_INV 2")
    # DEREG_MR by the ALLOC_MR key (the index): any state.
    s = m.reg(a, variant(m.fk, 0x13), pages)
    m.done(a, s, C.KITE_CQE_REG_MR, "REG_MR 3")
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(m.fk))
    check_eq(m.mapped(variant(m.fk, 0x13), RW, FR_IOVA, 16)[0], PROT,
             "after DEREG_MR of a valid fast-register MR")


def frwr_case(env, what, post, want, free_key=None, max_pages=8):
    """One failing memory WQE on a fresh pair: POST(m) posts it on A and
    returns its slot; it completes with WANT, A goes to ERR, and (given
    FREE_KEY(m)) that key stays unusable."""
    m = Mem(env, max_pages)
    s = post(m)
    cqe = m.a_cq.poll(what)
    check_eq(cqe["status"], want, what)
    check_eq(cqe["wqe_idx"], s, what + ": wqe_idx")
    m.qp_err(m.a, what)
    if free_key is not None:
        check_eq(m.mapped(free_key(m), RW, FR_IOVA, 16)[0], PROT,
                 what + ": the MR is still free")
    return m


def k(m, v=0x31):
    return variant(m.fk, v)


def twice(m):
    """Two REG_MR WQEs without LOCAL_INV: the second one fails."""
    s = m.reg(m.a, k(m), [m.page(0)])
    m.done(m.a, s, C.KITE_CQE_REG_MR, "first REG_MR")
    return m.reg(m.a, k(m, 0x32), [m.page(1)])


def stale_inv(m):
    for v in (0x31, 0x32):
        s = m.reg(m.a, k(m, v), [m.page(0)])
        m.done(m.a, s, C.KITE_CQE_REG_MR, "REG_MR")
        if v == 0x31:
            m.done(m.a, m.inv(m.a, k(m, v)), C.KITE_CQE_LOCAL_INV, "INV")
    return m.inv(m.a, k(m, 0x31))


@test("main")
def test_frwr_errors(env):
    """Each check of a REG_MR or LOCAL_INV WQE, one fresh pair each: the
    CQE status hardware.rst gives, and the MR left free."""
    p3 = lambda m: [m.page(0), m.page(1), m.page(2)]  # noqa: E731
    cases = [
        ("REG_MR twice without LOCAL_INV", twice, PROT, None),
        ("LOCAL_INV of a stale key", stale_inv, PROT, None),
        ("LOCAL_INV of a free MR", lambda m: m.inv(m.a, m.fk), PROT, None),
        ("LOCAL_INV of a regular MR", lambda m: m.inv(m.a, m.mk), PROT,
         None),
        ("a reserved byte", lambda m: m.reg(
            m.a, k(m), [m.page(0)], reserved=b"\0\0\1"), QP_OP, k),
        ("an unknown access bit", lambda m: m.reg(
            m.a, k(m), [m.page(0)], access=BIND << 1), QP_OP, k),
        ("REMOTE_WRITE without LOCAL_WRITE", lambda m: m.reg(
            m.a, k(m), [m.page(0)], access=RW), QP_OP, k),
        ("page_shift 13", lambda m: m.reg(
            m.a, k(m), [m.page(0)], length=0x100, shift=13), QP_OP, k),
        ("length 0", lambda m: m.reg(m.a, k(m), [m.page(0)], length=0,
                                     npages=1), QP_OP, k),
        ("iova + length wraps", lambda m: m.reg(
            m.a, k(m), [m.page(0), m.page(1)], iova=(1 << 64) - PAGE,
            length=2 * PAGE), QP_OP, k),
        ("npages not the pages touched", lambda m: m.reg(
            m.a, k(m), p3(m), length=2 * PAGE - 0x100), QP_OP, k),
        ("npages above max_pages", lambda m: m.reg(m.a, k(m), p3(m)),
         QP_OP, k, 2),
        ("npages above CAP_MAX_FRWR_PAGES", lambda m: m.reg(
            m.a, k(m), [m.page(0)] * (MAX_FRWR + 1)), QP_OP, k, MAX_FRWR),
        ("npages above max_pages before a bad entry", lambda m: m.reg(
            m.a, k(m), [m.page(0), 0, m.page(2)]), QP_OP, k, 2),
        ("a reserved byte before a regular MR's key", lambda m: m.reg(
            m.a, m.mk, [m.page(0)], reserved=b"\1\0\0"), QP_OP, None),
        ("a regular MR's key", lambda m: m.reg(m.a, m.mk, [m.page(0)]),
         PROT, None),
        ("an unknown index", lambda m: m.reg(
            m.a, m.fk + (100 << C.KITE_KEY_VARIANT_BITS), [m.page(0)]),
         PROT, None),
        ("a zero page entry", lambda m: m.reg(
            m.a, k(m), [m.page(0), 0, m.page(2)]), PROT, k),
        ("a misaligned page entry", lambda m: m.reg(
            m.a, k(m), [m.page(0), m.page(1) + 8, m.page(2)]), PROT, k),
        ("an entry not aligned to 64 KiB", lambda m: m.reg(
            m.a, k(m), [m.page(1)], length=0x100, shift=16), PROT, k),
        ("a misaligned page list", lambda m: m.reg(
            m.a, k(m), [m.page(0)], pbl_addr=m.list + 4), PROT, k),
        ("an unreadable page list", lambda m: m.reg(
            m.a, k(m), [m.page(0)], pbl_addr=FAR), PROT, k),
        ("an SGE on REG_MR", lambda m: m.a.post_send(
            C.KITE_WQE_REG_MR, [(m.n.va(0), 8, m.n.key)], reg_seg(
                FR_IOVA, 16, m.list, k(m), LW, 1)), QP_OP, k),
    ]
    for case in cases:
        what, post, want, free = case[:4]
        frwr_case(env, what, post, want, free, *case[4:])


@test("main")
def test_frwr_other_pd_and_context(env):
    """A fast-register MR of another PD refuses REG_MR; a context's QP
    cannot fast-register, but invalidates its own type-2B window."""
    m = Mem(env)
    d, r = m.d, m.r
    pd2 = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    other = d.exec_ok(C.KITE_CMD_ALLOC_MR, alloc_mr_payload(pd2, 4))[0]
    s = m.reg(m.a, other, [m.page(0)])
    m.done(m.a, s, C.KITE_CQE_REG_MR, "REG_MR of another PD's MR", PROT)
    check_eq(mr_map(d, other, pd2, RW, FR_IOVA, 8)[0], PROT,
             "the other PD's MR stays free")
    # A context's QP, connected to itself.
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    upd = d.exec_ok(C.KITE_CMD_ALLOC_PD, uctx=u)[0]
    ucq = Cq(r, 8, uctx=u)
    uqp = Qp(r, 6, upd, ucq, ucq, uctx=u)
    uqp.connect(uqp.qpn, V4_GID, m.n.mac, sq_psn=0x300, rq_psn=0x300)
    umr = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        upd, LW | RW | BIND, 0, 4 * PAGE, pbl(m.page(4), 4), 1), uctx=u)[0]
    uw = d.exec_ok(C.KITE_CMD_ALLOC_MW, alloc_mw_payload(
        upd, C.KITE_MW_TYPE_2), uctx=u)[0]
    s = uqp.post_send(C.KITE_WQE_BIND_MW, seg=bind_seg(
        0, PAGE, variant(uw, 9), umr, RW))
    check_cqe(ucq.poll("context BIND_MW"), uqp.qpn, s, C.KITE_CQE_BIND_MW,
              None, what="a context's BIND_MW")
    check_eq(mr_map(d, variant(uw, 9), upd, RW, 0, 8, qpn=uqp.qpn)[0], OK,
             "the context's window")
    s = uqp.post_send(C.KITE_WQE_LOCAL_INV, imm=variant(uw, 9))
    check_cqe(ucq.poll("context LOCAL_INV"), uqp.qpn, s,
              C.KITE_CQE_LOCAL_INV, None, what="a context's LOCAL_INV")
    check_eq(mr_map(d, variant(uw, 9), upd, RW, 0, 8, qpn=uqp.qpn)[0],
             PROT, "the context's window invalidated")
    # REG_MR from the context's QP: kernel only, whatever the MR.
    d.q.write(m.list, pbl_list([m.page(0)]))
    s = uqp.post_send(C.KITE_WQE_REG_MR, seg=reg_seg(
        FR_IOVA, 16, m.list, m.fk, LW, 1))
    check_cqe(ucq.poll("context REG_MR"), uqp.qpn, s, C.KITE_CQE_REG_MR,
              None, QP_OP, "a context's REG_MR")
    check_eq(m.mapped(m.fk, LW, FR_IOVA, 8)[0], PROT, "the MR stays free")


@test("main")
def test_mw_type1(env):
    """A type-1 window: bind, remote access inside and outside it, the
    MR's window count (DEREG_MR and REREG_MR BUSY), rebind, unbind,
    DEALLOC_MW of a bound window."""
    m = Mem(env)
    a, d = m.a, m.d
    w = d.exec_ok(C.KITE_CMD_ALLOC_MW, alloc_mw_payload(
        m.pd, C.KITE_MW_TYPE_1, 4))[0]
    w5 = variant(w, 5)
    s = m.bind(a, w5, m.mk, WIN_IOVA + PAGE, 2 * PAGE, RW | RR)
    m.done(a, s, C.KITE_CQE_BIND_MW, "BIND_MW")
    check_eq(m.mapped(w5, RR, WIN_IOVA + PAGE, 16),
             (OK, [(m.page(9), 16)]), "the window maps its MR's pages")
    check_eq(m.mapped(w, RR, WIN_IOVA + PAGE, 16)[0], PROT,
             "the ALLOC_MW variant")
    check_eq(m.mapped(w5, RR, WIN_IOVA + PAGE - 1, 2)[0], PROT,
             "below the window")
    check_eq(m.mapped(w5, RR, WIN_IOVA + 3 * PAGE - 1, 2)[0], PROT,
             "beyond the window")
    check_eq(m.mapped(w5, RA, WIN_IOVA + PAGE, 8)[0], ACC,
             "a right the window lacks")
    for acc in (0, LW):
        check_eq(m.mapped(w5, acc, WIN_IOVA + PAGE, 8)[0], PROT,
                 "local access 0x%x through a window" % acc)
    check_eq(mr_map(d, w5, m.pd + 1, RR, WIN_IOVA + PAGE, 8)[0], PROT,
             "another PD")
    data = pattern(0x300, 8)
    m.write(w5, WIN_IOVA + 2 * PAGE - 0x100, data, "WRITE through it")
    check_eq(d.q.read(m.page(9) + PAGE - 0x100, 0x300), data,
             "the bytes in the MR's pages")
    # The MR is held while the window is bound.
    st, _ = d.exec(C.KITE_CMD_DEREG_MR, destroy_payload(m.mk))
    check_eq(st, C.KITE_STS_BUSY, "DEREG_MR with a bound window")
    st, _ = d.exec(C.KITE_CMD_REREG_MR, rereg_payload(
        m.mk, C.KITE_REREG_ACCESS, access=LW | BIND))
    check_eq(st, C.KITE_STS_BUSY, "REREG_MR with a bound window")
    check_eq(m.mapped(m.mk, RR, WIN_IOVA, 8)[0], OK, "the MR unchanged")
    # Rebinding replaces the binding (the count stays one).
    w6 = variant(w, 6)
    s = m.bind(a, w6, m.mk, WIN_IOVA, PAGE, RR)
    m.done(a, s, C.KITE_CQE_BIND_MW, "rebind")
    check_eq(m.mapped(w5, RR, WIN_IOVA + PAGE, 8)[0], PROT, "the old key")
    check_eq(m.mapped(w6, RR, WIN_IOVA, 8), (OK, [(m.page(8), 8)]),
             "the new binding")
    check_eq(m.mapped(w6, RW, WIN_IOVA, 8)[0], ACC,
             "the new rights")
    # Length 0 unbinds: the MR is free to go.
    s = m.bind(a, variant(w, 7), 0, 0, 0, 0)
    m.done(a, s, C.KITE_CQE_BIND_MW, "unbind")
    check_eq(m.mapped(w6, RR, WIN_IOVA, 8)[0], PROT, "unbound")
    mk2 = d.exec_ok(C.KITE_CMD_REREG_MR, rereg_payload(
        m.mk, C.KITE_REREG_ACCESS, access=LW | RR | BIND, variant=0x21))[0]
    # Bound to the re-registered MR, then deallocated while bound.
    s = m.bind(a, variant(w, 8), mk2, WIN_IOVA, 4 * PAGE, RR)
    m.done(a, s, C.KITE_CQE_BIND_MW, "bind to the new key")
    st, _ = d.exec(C.KITE_CMD_DEREG_MR, destroy_payload(mk2))
    check_eq(st, C.KITE_STS_BUSY, "DEREG_MR with a bound window again")
    d.exec_ok(C.KITE_CMD_DEALLOC_MW, destroy_payload(w))
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(mk2))


@test("main")
def test_mw_type2b_and_send_inv(env):
    """A type-2B window: bound to the QP that binds it, remote access only
    through that QP, LOCAL_INV, SEND_INV of a window and of a
    fast-register MR with the invalidated key in the receive CQE, and
    DESTROY_QP freeing the windows bound to the QP."""
    m = Mem(env)
    a, b, d = m.a, m.b, m.d
    w = d.exec_ok(C.KITE_CMD_ALLOC_MW, alloc_mw_payload(
        m.pd, C.KITE_MW_TYPE_2, 1))[0]
    # B is the responder of A's accesses: B binds the window.
    w2 = variant(w, 2)
    s = m.bind(b, w2, m.mk, WIN_IOVA, 2 * PAGE, RW)
    m.done(b, s, C.KITE_CQE_BIND_MW, "BIND_MW type 2B")
    check_eq(m.mapped(w2, RW, WIN_IOVA, 8, qpn=b.qpn)[0], OK,
             "through the bound QP")
    check_eq(m.mapped(w2, RW, WIN_IOVA, 8, qpn=a.qpn)[0], PROT,
             "through another QP")
    data = pattern(64, 4)
    m.write(w2, WIN_IOVA + 0x40, data, "WRITE through the 2B window")
    check_eq(d.q.read(m.page(8) + 0x40, 64), data, "the bytes")
    st, _ = d.exec(C.KITE_CMD_DEREG_MR, destroy_payload(m.mk))
    check_eq(st, C.KITE_STS_BUSY, "DEREG_MR under a 2B window")
    s = m.inv(b, w2)
    m.done(b, s, C.KITE_CQE_LOCAL_INV, "LOCAL_INV of the window")
    check_eq(m.mapped(w2, RW, WIN_IOVA, 8, qpn=b.qpn)[0], PROT,
             "invalidated window")
    # Bound again, then invalidated by A's SEND_INV.
    w3 = variant(w, 3)
    m.done(b, m.bind(b, w3, m.mk, WIN_IOVA, PAGE, RR), C.KITE_CQE_BIND_MW,
           "bind again")
    rslot = b.post_recv(m.n.va(0x4000), 0x100, m.n.key)
    m.n.write(0x100, b"invalidate")
    s = a.post_send(C.KITE_WQE_SEND_INV, [(m.n.va(0x100), 10, m.n.key)],
                    imm=w3)
    check_cqe(m.a_cq.poll("SEND_INV"), a.qpn, s, C.KITE_CQE_SEND, 10,
              what="SEND_INV")
    cqe = m.b_cq.poll("RECV with invalidate")
    check_cqe(cqe, b.qpn, rslot, C.KITE_CQE_RECV, 10, what="recv inv")
    check(cqe["flags"] & C.KITE_CQE_F_INV, "no INV flag")
    check_eq(cqe["imm_data"], w3, "the invalidated rkey")
    check_eq(m.mapped(w3, RR, WIN_IOVA, 8, qpn=b.qpn)[0], PROT,
             "the window after SEND_INV")
    d.exec_ok(C.KITE_CMD_REREG_MR, rereg_payload(
        m.mk, C.KITE_REREG_ACCESS, access=LW | RW | BIND, variant=0x20))
    # SEND_INV of a fast-register MR registered through the requester.
    fk = variant(m.fk, 0x44)
    m.done(a, m.reg(a, fk, [m.page(0)]), C.KITE_CQE_REG_MR, "REG_MR")
    rslot = b.post_recv(m.n.va(0x4000), 0x100, m.n.key)
    s = a.post_send(C.KITE_WQE_SEND_INV, [(m.n.va(0x100), 4, m.n.key)],
                    imm=fk)
    check_cqe(m.a_cq.poll("SEND_INV 2"), a.qpn, s, C.KITE_CQE_SEND, 4,
              what="SEND_INV of an MR")
    cqe = m.b_cq.poll("RECV with invalidate 2")
    check(cqe["flags"] & C.KITE_CQE_F_INV, "no INV flag 2")
    check_eq(cqe["imm_data"], fk, "the invalidated MR key")
    check_eq(m.mapped(fk, RW, FR_IOVA, 8)[0], PROT, "the MR after SEND_INV")
    m.done(a, m.reg(a, variant(m.fk, 0x45), [m.page(1)]),
           C.KITE_CQE_REG_MR, "REG_MR after the remote invalidation")
    # Destroying the QP a type-2B window is bound to frees the window.
    w4 = variant(w, 4)
    m.done(b, m.bind(b, w4, m.mk, WIN_IOVA, PAGE, RR), C.KITE_CQE_BIND_MW,
           "bind before DESTROY_QP")
    st, _ = d.exec(C.KITE_CMD_DEREG_MR, destroy_payload(m.mk))
    check_eq(st, C.KITE_STS_BUSY, "DEREG_MR under a 2B window again")
    d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(b.qpn))
    check_eq(m.mapped(w4, RR, WIN_IOVA, 8, qpn=b.qpn)[0], PROT,
             "the window of a destroyed QP")
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(m.mk))
    d.exec_ok(C.KITE_CMD_DEALLOC_MW, destroy_payload(w))


def mw_case(env, what, post, want, status_qp="a"):
    """One failing BIND_MW (or LOCAL_INV, SEND_INV, access) on a fresh
    pair: POST(m) returns the slot of the WQE that fails with WANT on the
    QP named by status_qp."""
    m = Mem(env)
    m.w1 = m.d.exec_ok(C.KITE_CMD_ALLOC_MW, alloc_mw_payload(
        m.pd, C.KITE_MW_TYPE_1, 1))[0]
    m.w2 = m.d.exec_ok(C.KITE_CMD_ALLOC_MW, alloc_mw_payload(
        m.pd, C.KITE_MW_TYPE_2, 1))[0]
    s = post(m)
    qp = m.a if status_qp == "a" else m.b
    cq = m.a_cq if status_qp == "a" else m.b_cq
    cqe = cq.poll(what)
    check_eq(cqe["status"], want, what)
    check_eq(cqe["wqe_idx"], s, what + ": wqe_idx")
    m.qp_err(qp, what)
    return m


def bound_2b(m, qp):
    """m.w2 bound by QP (variant 2) over the MR's first page."""
    m.done(qp, m.bind(qp, variant(m.w2, 2), m.mk, WIN_IOVA, PAGE, RW | RR),
           C.KITE_CQE_BIND_MW, "BIND_MW 2B")
    return variant(m.w2, 2)


def rebind_2b(m):
    bound_2b(m, m.a)
    return m.bind(m.a, variant(m.w2, 3), m.mk, WIN_IOVA, PAGE)


def weak_mr(m, access):
    """A second MR with ACCESS over the MR pages."""
    return m.d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        m.pd, access, WIN_IOVA, PAGE, pbl(m.page(12), 1), 0x50))[0]


def mr_inv_with_window(m):
    fk = variant(m.fk, 0x61)
    m.done(m.a, m.reg(m.a, fk, [m.page(0)], access=LW | RW | BIND),
           C.KITE_CQE_REG_MR, "REG_MR with MW_BIND")
    m.done(m.a, m.bind(m.a, variant(m.w1, 2), fk, FR_IOVA, 16),
           C.KITE_CQE_BIND_MW, "bind to the fast-register MR")
    return m.inv(m.a, fk)


def send_inv(m, key):
    m.b.post_recv(m.n.va(0x4000), 0x100, m.n.key)
    return m.a.post_send(C.KITE_WQE_SEND_INV, [(m.n.va(0), 4, m.n.key)],
                         imm=key)


def remote(m, opcode, key, addr, length=16):
    sges = [(m.n.va(0x1000), length, m.n.key)]
    return m.a.post_send(opcode, sges, raddr(addr, key))


def window_write_outside(m):
    m.done(m.a, m.bind(m.a, variant(m.w1, 2), m.mk, WIN_IOVA + PAGE, PAGE),
           C.KITE_CQE_BIND_MW, "bind")
    m.d.q.memset(m.page(8), 2 * PAGE, 0x5a)
    return remote(m, C.KITE_WQE_WRITE, variant(m.w1, 2),
                  WIN_IOVA + PAGE - 8)


def window_read_without_right(m):
    m.done(m.a, m.bind(m.a, variant(m.w1, 2), m.mk, WIN_IOVA, PAGE, RW),
           C.KITE_CQE_BIND_MW, "bind")
    return remote(m, C.KITE_WQE_READ, variant(m.w1, 2), WIN_IOVA)


@test("main")
def test_mw_errors(env):
    """Each check of BIND_MW, window invalidation and window access, one
    fresh pair each."""
    rem_acc = C.KITE_CQE_REM_ACCESS_ERR
    rem_inv = C.KITE_CQE_REM_INV_REQ_ERR
    cases = [
        ("a reserved word", lambda m: m.bind(
            m.a, m.w1, m.mk, WIN_IOVA, PAGE, reserved=1), QP_OP),
        ("LOCAL_WRITE on a window", lambda m: m.bind(
            m.a, m.w1, m.mk, WIN_IOVA, PAGE, RW | LW), QP_OP),
        ("MW_BIND on a window before an unknown window", lambda m: m.bind(
            m.a, m.w1 + (200 << 8), m.mk, WIN_IOVA, PAGE, BIND), QP_OP),
        ("an unknown window", lambda m: m.bind(
            m.a, m.w1 + (200 << 8), m.mk, WIN_IOVA, PAGE), BIND_ERR),
        ("an MR's key as the window", lambda m: m.bind(
            m.a, m.mk, m.mk, WIN_IOVA, PAGE), BIND_ERR),
        ("a bound type-2B window", rebind_2b, BIND_ERR),
        ("a type-2B window with length 0", lambda m: m.bind(
            m.a, m.w2, m.mk, WIN_IOVA, 0), BIND_ERR),
        ("an MR without MW_BIND", lambda m: m.bind(
            m.a, m.w1, m.n.key, m.n.va(0), PAGE), BIND_ERR),
        ("a stale MR key", lambda m: m.bind(
            m.a, m.w1, m.mk ^ 1, WIN_IOVA, PAGE), BIND_ERR),
        ("a free fast-register MR", lambda m: m.bind(
            m.a, m.w1, m.fk, FR_IOVA, 16), BIND_ERR),
        ("below the MR", lambda m: m.bind(
            m.a, m.w1, m.mk, WIN_IOVA - 1, PAGE), BIND_ERR),
        ("beyond the MR", lambda m: m.bind(
            m.a, m.w1, m.mk, WIN_IOVA + PAGE, 3 * PAGE + 1), BIND_ERR),
        ("REMOTE_WRITE over an MR without LOCAL_WRITE", lambda m: m.bind(
            m.a, m.w1, weak_mr(m, RR | BIND), WIN_IOVA, PAGE, RW), BIND_ERR),
        ("REMOTE_ATOMIC over an MR without LOCAL_WRITE", lambda m: m.bind(
            m.a, m.w1, weak_mr(m, RR | BIND), WIN_IOVA, PAGE, RA), BIND_ERR),
        ("LOCAL_INV of a type-1 window", lambda m: (
            m.done(m.a, m.bind(m.a, variant(m.w1, 2), m.mk, WIN_IOVA, PAGE),
                   C.KITE_CQE_BIND_MW, "bind"),
            m.inv(m.a, variant(m.w1, 2)))[1], PROT),
        ("LOCAL_INV of a free type-2B window", lambda m: m.inv(m.a, m.w2),
         PROT),
        ("LOCAL_INV of an MR with a bound window", mr_inv_with_window, PROT),
        ("WRITE across the window's start", window_write_outside, rem_acc),
        ("READ without the window's right", window_read_without_right,
         rem_acc),
        ("WRITE to a 2B window bound to the requester", lambda m: remote(
            m, C.KITE_WQE_WRITE, bound_2b(m, m.a), WIN_IOVA), rem_acc),
        ("SEND_INV of a regular MR", lambda m: send_inv(m, m.mk), rem_inv),
        ("SEND_INV of a type-1 window", lambda m: (
            m.done(m.a, m.bind(m.a, variant(m.w1, 2), m.mk, WIN_IOVA, PAGE),
                   C.KITE_CQE_BIND_MW, "bind"),
            send_inv(m, variant(m.w1, 2)))[1], rem_inv),
        ("SEND_INV of a 2B window bound to the requester",
         lambda m: send_inv(m, bound_2b(m, m.a)), rem_inv),
        ("SEND_INV of a free fast-register MR", lambda m: send_inv(m, m.fk),
         rem_inv),
    ]
    for what, post, want in cases:
        m = mw_case(env, what, post, want)
        if what.startswith("WRITE across"):
            check_eq(m.d.q.read(m.page(8) + PAGE - 8, 16), b"\x5a" * 16,
                     "target memory untouched")
        if what.startswith("LOCAL_INV of an MR"):
            check_eq(m.mapped(variant(m.fk, 0x61), RW, FR_IOVA, 8)[0], OK,
                     "the MR stays valid")
        if what.startswith("SEND_INV of a 2B"):
            check_eq(m.mapped(variant(m.w2, 2), RW, WIN_IOVA, 8,
                              qpn=m.a.qpn)[0], OK, "the window stays bound")
