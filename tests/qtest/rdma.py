# SPDX-License-Identifier: GPL-2.0-or-later
"""RDMA objects on a kite device, set up as a driver would: admin payloads
for CQs, QPs, MRs and page lists, and the CQ and QP rings the data path
tests post to and poll.
"""

import time

import hw
from device import MAC_A, db_value, eq_payload, gid_payload, mac_bytes, \
    stats
from harness import POLL_TIMEOUT, TestFailure, check_eq, wait_for
from hw import C, K

PAGE = 4096                 # the page size the tests' page lists use
PBL_ENTRY = C.KITE_PBL_CHUNK_SIZE // C.KITE_PBL_ENTRIES_PER_CHUNK
QP_ATTR_SIZE = hw.sizeof("kite_qp_attr")
QP_STATS_SIZE = hw.sizeof("kite_qp_stats")
CQE_SIZE = hw.sizeof("kite_cqe")
COMP_EQ_LOG = 8             # the completion EQ of Rdma: 256 entries


def pbl(addr, npages, shift=12, level=0):
    """A struct kite_pbl_desc (as fields)."""
    return dict(addr=addr, npages=npages, page_shift=shift, level=level)


def pbl_list(entries):
    """A level-1 page list (or level-2 list of lists) of addresses."""
    return b"".join(e.to_bytes(PBL_ENTRY, "little") for e in entries)


def cq_payload(ring, log_depth, eqn, dbrec=0):
    return hw.pack("kite_cmd_create_cq", ring=ring, log_depth=log_depth,
                   eqn=eqn, dbrec=dbrec)


def modify_cq_payload(cqn, ring, log_depth):
    return hw.pack("kite_cmd_modify_cq", cqn=cqn, ring=ring,
                   log_depth=log_depth)


def query_obj(handle, addr=0, length=0):
    return hw.pack("kite_cmd_query_obj", handle=handle,
                   out=dict(addr=addr, len=length))


def qp_payload(pdn, scq, rcq, sq, rq, qp_type=0, flags=0, sq_log=4,
               sq_stride=6, rq_log=4, rq_stride=4, dbrec=0, srqn=0):
    return hw.pack("kite_cmd_create_qp", qp_type=qp_type, flags=flags,
                   sq_log_depth=sq_log, sq_log_stride=sq_stride,
                   rq_log_depth=rq_log, rq_log_stride=rq_stride, pdn=pdn,
                   send_cqn=scq, recv_cqn=rcq, sq=sq, rq=rq, dbrec=dbrec,
                   srqn=srqn)


def reg_mr_payload(pdn, access, iova, length, desc, variant):
    """REG_MR; desc None: the all-zero page list of a DMA MR."""
    f = dict(pdn=pdn, access=access, iova=iova, length=length,
             key_variant=variant)
    if desc is not None:
        f["pbl"] = desc
    return hw.pack("kite_cmd_reg_mr", **f)


def key_index(key):
    return key >> C.KITE_KEY_VARIANT_BITS


def key_variant(key):
    return key & C.KITE_KEY_VARIANT_MASK


def make_av(dgid, dmac=b"\x52\x54\x00\x00\x00\x09", sgid_index=0,
            net_type=0, hop_limit=64, tclass=0, sl=0, flow_label=0):
    """A struct kite_av, as QUERY_QP gives it back."""
    return hw.record("kite_av", dgid=dgid, dmac=dmac, sgid_index=sgid_index,
                     net_type=net_type, hop_limit=hop_limit,
                     traffic_class=tclass, sl=sl, flow_label=flow_label)


# The KITE_QP_ATTR_* bit of each kite_qp_attr field whose bit is not
# KITE_QP_ATTR_<FIELD>.
ATTR_BIT = {"max_rd_atomic": "KITE_QP_ATTR_MAX_QP_RD_ATOMIC"}


def attr_bytes(mask=None, extra_mask=0, **f):
    """struct kite_qp_attr with fields f; the mask covers them by default."""
    if mask is None:
        mask = 0
        for name in f:
            mask |= K[ATTR_BIT.get(name, "KITE_QP_ATTR_" + name.upper())]
    return hw.pack("kite_qp_attr", attr_mask=mask | extra_mask, **f)


def modify_qp_payload(qpn, **f):
    return hw.pack("kite_cmd_modify_qp", qpn=qpn, attr=attr_bytes(**f))


V4_GID = bytes(10) + b"\xff\xff" + bytes([198, 18, 0, 1])
V4_DGID = bytes(10) + b"\xff\xff" + bytes([198, 18, 0, 2])
V6_GID = bytes([0x20, 0x01, 0x0d, 0xb8]) + bytes(11) + b"\x01"
V6_DGID = bytes([0x20, 0x01, 0x0d, 0xb8]) + bytes(11) + b"\x02"


class Rdma:
    """Guest memory for RDMA objects and helpers, on one device."""

    def __init__(self, d, eq=True, gids=True, aq_log=6):
        self.d = d
        d.bring_up(aq_log=aq_log, acq_log=aq_log)
        self.cq_ring = d.ram + 0x100000       # 64 KiB of CQ rings
        self.sq_ring = d.ram + 0x110000       # 64 KiB
        self.rq_ring = d.ram + 0x120000       # 64 KiB
        self.lists = d.ram + 0x200000         # page lists, 1 MiB
        self.pages = d.ram + 0x400000         # data pages
        self.eqn = 0
        if eq:
            self.eqn = d.exec_ok(C.KITE_CMD_CREATE_EQ, eq_payload(
                d.eq_rings, 1, 12, COMP_EQ_LOG, C.KITE_MSIX_COMP_BASE))[0]
        if gids:
            d.exec_ok(C.KITE_CMD_ADD_GID, gid_payload(V4_GID, 0))
            d.exec_ok(C.KITE_CMD_ADD_GID, gid_payload(V6_GID, 1, 1))

    def cq(self, uctx=0, log_depth=4):
        return self.d.exec_ok(C.KITE_CMD_CREATE_CQ, cq_payload(
            pbl(self.cq_ring, 1), log_depth, self.eqn), uctx=uctx)[0]

    def qp_payload(self, pdn, scq, rcq, **kw):
        return qp_payload(pdn, scq, rcq, pbl(self.sq_ring, 1),
                          pbl(self.rq_ring, 1), **kw)

    def qp(self, pdn, cqn, uctx=0, **kw):
        return self.d.exec_ok(C.KITE_CMD_CREATE_QP, self.qp_payload(
            pdn, cqn, cqn, **kw), uctx=uctx)[0]

    def modify(self, qpn, uctx=0, **f):
        st, _ = self.d.exec(C.KITE_CMD_MODIFY_QP, modify_qp_payload(qpn, **f),
                            uctx=uctx)
        return st

    def modify_ok(self, qpn, what, **f):
        check_eq(self.modify(qpn, **f), C.KITE_STS_OK, what)

    def query_qp(self, qpn, uctx=0):
        d = self.d
        d.q.memset(d.outbuf, 0x100, 0xee)
        out = d.exec_ok(C.KITE_CMD_QUERY_QP,
                        query_obj(qpn, d.outbuf, QP_ATTR_SIZE), uctx=uctx)
        check_eq(out[0], QP_ATTR_SIZE, "QUERY_QP out[0]")
        return hw.unpack("kite_qp_attr", d.q.read(d.outbuf, QP_ATTR_SIZE))

    def level1(self, addr, entries):
        self.d.q.write(addr, pbl_list(entries))
        return addr


def obj_counts(d):
    s = stats(d)
    return {"uctx": s.num_uctx, "pd": s.num_pd, "cq": s.num_cq,
            "qp": s.num_qp, "mr": s.num_mr}


def batch(d, cmds):
    """Runs [(opcode, payload, uctx)] in AQ-sized batches; [(st, out)]."""
    res = []
    depth = 1 << d.aq_log
    for i in range(0, len(cmds), depth):
        part = cmds[i:i + depth]
        for op, payload, uctx in part:
            d.submit(op, payload, uctx=uctx, ring=False)
        d.wr(C.KITE_REG_AQ_DB, d.aq_pi)
        for _ in part:
            _, st, _, out = d.wait_cqe()
            res.append((st, out))
    return res


def db_write(d, off, num, index, flags=0, page=0):
    d.q.writeq(d.db + page * C.KITE_DB_PAGE_SIZE + off,
               db_value(num, flags, index))


def cq_doorbell(d, page, cqn, ci, flags=0):
    db_write(d, C.KITE_DB_CQ, cqn, ci, flags, page)


# --------------------------------------------------------------------------
# The data path: CQ and QP rings
# --------------------------------------------------------------------------

SQ_LOG, SQ_STRIDE = 4, 7        # 16 x 128 B
RQ_LOG, RQ_STRIDE = 4, 5        # 16 x 32 B: one SGE
MR_IOVA = 0x5550000
MR_PAGES = 16
ACC_ALL = (C.KITE_ACCESS_LOCAL_WRITE | C.KITE_ACCESS_REMOTE_WRITE |
           C.KITE_ACCESS_REMOTE_READ | C.KITE_ACCESS_REMOTE_ATOMIC)
RC_TIMEOUT = 14                 # 4.096 us << 14 = 67 ms of virtual time


def raddr(addr, rkey):
    return hw.pack("kite_wqe_raddr", remote_addr=addr, rkey=rkey)


def atomic(addr, rkey, swap_add, compare=0):
    return hw.pack("kite_wqe_atomic", remote_addr=addr, rkey=rkey,
                   swap_add=swap_add, compare=compare)


def ud_seg(dest_av, qpn, qkey):
    return hw.pack("kite_wqe_ud", av=dest_av, remote_qpn=qpn,
                   remote_qkey=qkey)


def sge(addr, length, lkey):
    return hw.pack("kite_sge", addr=addr, length=length, lkey=lkey)


class Cq:
    """A CQ (of the kernel, or of context uctx) whose ring the test polls
    like a consumer."""

    def __init__(self, r, index, log_depth=4, eqn=None, dbrec=0, uctx=0):
        self.d = r.d
        self.ring = r.cq_ring + index * 0x1000
        self.log = log_depth
        self.uctx = uctx
        r.d.q.memset(self.ring, CQE_SIZE << log_depth, 0)   # as a driver does
        self.cqn = r.d.exec_ok(C.KITE_CMD_CREATE_CQ, cq_payload(
            pbl(self.ring, 1), log_depth, r.eqn if eqn is None else eqn,
            dbrec), uctx=uctx)[0]
        self.ci = 0

    def peek(self, index):
        """The CQE at free-running index, as a record of struct kite_cqe."""
        raw = self.d.q.read(self.ring + (index % (1 << self.log)) *
                            CQE_SIZE, CQE_SIZE)
        return hw.unpack("kite_cqe", raw)

    def ready(self, index):
        phase = ((index >> self.log) & 1) ^ 1
        return self.peek(index).flags & C.KITE_CQE_F_PHASE == phase

    def poll(self, what, timeout=POLL_TIMEOUT, step=None):
        """Next CQE (waits for it); advances the consumer index."""
        deadline = time.time() + timeout
        while not self.ready(self.ci):
            if time.time() > deadline:
                raise TestFailure("no CQE %d on CQ %d: %s" %
                                  (self.ci, self.cqn, what))
            if step:
                step()
            time.sleep(0.002)
        cqe = self.peek(self.ci)
        self.ci += 1
        return cqe

    def empty(self):
        return not self.ready(self.ci)

    def doorbell(self, flags=0):
        db_write(self.d, C.KITE_DB_CQ, self.cqn, self.ci, flags, self.uctx)


class Qp:
    """An RC QP (of the kernel, or of context uctx) with its own rings;
    WQEs built like a driver does."""

    def __init__(self, r, index, pd, scq, rcq, qp_type=C.KITE_QPT_RC,
                 sq_log=SQ_LOG, dbrec=0, uctx=0, srqn=0, sq_addr=None,
                 rq_addr=None):
        """srqn: receives come from that SRQ (no RQ of its own).
        sq_addr, rq_addr: the rings there instead of in the test's RAM
        (a hostile guest's choice: nothing may be posted to them then)."""
        self.d, self.r = r.d, r
        self.sq = r.sq_ring + index * 0x2000 if sq_addr is None else sq_addr
        self.rq = r.rq_ring + index * 0x1000 if rq_addr is None else rq_addr
        self.sq_log, self.rq_log = sq_log, RQ_LOG
        self.uctx = uctx
        rq, rq_log, rq_stride, flags = (pbl(self.rq, 1), RQ_LOG, RQ_STRIDE,
                                        0)
        if srqn:
            rq, rq_log, rq_stride = {}, 0, 0
            flags = C.KITE_QP_FLAG_SRQ
        self.qpn = r.d.exec_ok(C.KITE_CMD_CREATE_QP, qp_payload(
            pd, scq.cqn, rcq.cqn, pbl(self.sq, 1), rq,
            qp_type=qp_type, sq_log=sq_log, sq_stride=SQ_STRIDE,
            rq_log=rq_log, rq_stride=rq_stride, dbrec=dbrec, srqn=srqn,
            flags=flags), uctx=uctx)[0]
        self.sq_pi = self.rq_pi = 0

    def connect(self, dest_qpn, dgid, dmac, sq_psn, rq_psn, net_type=0,
                sgid_index=0, mtu=C.KITE_MTU_1024, rnr_retry=7, uc=False):
        r = self.r
        dest = make_av(dgid, dmac=dmac, sgid_index=sgid_index,
                       net_type=net_type)
        u = self.uctx
        r.modify_ok(self.qpn, "RESET -> INIT", uctx=u, state=C.KITE_QPS_INIT,
                    pkey_index=0, port=C.KITE_PORT_NUM,
                    access_flags=C.KITE_ACCESS_REMOTE_WRITE if uc else
                    ACC_ALL)
        if uc:
            r.modify_ok(self.qpn, "UC INIT -> RTR", uctx=u,
                        state=C.KITE_QPS_RTR, av=dest, path_mtu=mtu,
                        dest_qpn=dest_qpn, rq_psn=rq_psn)
            r.modify_ok(self.qpn, "UC RTR -> RTS", uctx=u,
                        state=C.KITE_QPS_RTS, sq_psn=sq_psn)
            return
        r.modify_ok(self.qpn, "INIT -> RTR", uctx=u, state=C.KITE_QPS_RTR,
                    av=dest, path_mtu=mtu, dest_qpn=dest_qpn, rq_psn=rq_psn,
                    max_dest_rd_atomic=4, min_rnr_timer=1)
        r.modify_ok(self.qpn, "RTR -> RTS", uctx=u, state=C.KITE_QPS_RTS,
                    sq_psn=sq_psn, timeout=RC_TIMEOUT, retry_cnt=7,
                    rnr_retry=rnr_retry, max_rd_atomic=4)

    def post_recv(self, addr, length, lkey, ring=True):
        slot = self.rq_pi % (1 << self.rq_log)
        wqe = hw.pack("kite_rq_wqe_hdr", num_sge=1) + sge(addr, length, lkey)
        self.d.q.write(self.rq + (slot << RQ_STRIDE), wqe)
        self.rq_pi += 1
        if ring:
            db_write(self.d, C.KITE_DB_RQ, self.qpn, self.rq_pi,
                     page=self.uctx)
        return slot

    def post_send(self, opcode, sges=(), seg=b"", flags=None, imm=0,
                  ring=True):
        """A send WQE: the header, the opcode's segment SEG, the SGEs."""
        if flags is None:
            flags = C.KITE_WQE_F_SIGNALED
        slot = self.sq_pi % (1 << self.sq_log)
        wqe = hw.pack("kite_sq_wqe_hdr", opcode=opcode, flags=flags,
                      num_sge=len(sges), imm_data=imm) + seg
        wqe += b"".join(sge(*s) for s in sges)
        self.d.q.write(self.sq + (slot << SQ_STRIDE), wqe)
        self.sq_pi += 1
        if ring:
            db_write(self.d, C.KITE_DB_SQ, self.qpn, self.sq_pi,
                     page=self.uctx)
        return slot

    def stats(self, uctx=0, buflen=QP_STATS_SIZE):
        d = self.d
        d.q.memset(d.outbuf, 0x100, 0xee)
        st, out = d.exec(C.KITE_CMD_QUERY_QP_STATS,
                         query_obj(self.qpn, d.outbuf, buflen), uctx=uctx)
        if st != C.KITE_STS_OK:
            return st, None
        check_eq(out[0], QP_STATS_SIZE, "QUERY_QP_STATS out[0]")
        s = hw.unpack("kite_qp_stats", d.q.read(d.outbuf, QP_STATS_SIZE))
        check_eq(s.reserved, [0] * len(s.reserved), "QUERY_QP_STATS reserved")
        return st, s


class Node:
    """One device's RDMA setup: PD, MR over 16 pages, CQs."""

    def __init__(self, d, mac):
        self.d = d
        self.r = Rdma(d)
        d.q.memset(d.eq_rings, PAGE, 0)     # the completion EQ's ring
        self.mac = mac_bytes(mac)
        self.pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
        self.buf = self.r.pages
        d.q.memset(self.buf, MR_PAGES * PAGE, 0)
        self.key = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
            self.pd, ACC_ALL, MR_IOVA, MR_PAGES * PAGE,
            pbl(self.buf, MR_PAGES), 0x31))[0]
        self.ncq = 0
        self.nqp = 0

    def cq(self, log_depth=4, eqn=None, dbrec=0):
        c = Cq(self.r, self.ncq, log_depth, eqn, dbrec)
        self.ncq += 1
        return c

    def qp(self, scq, rcq, **kw):
        q = Qp(self.r, self.nqp, self.pd, scq, rcq, **kw)
        self.nqp += 1
        return q

    def va(self, off):
        return MR_IOVA + off

    def write(self, off, data):
        self.d.q.write(self.buf + off, data)

    def read(self, off, n):
        return self.d.q.read(self.buf + off, n)

    # The 64-bit words atomics work on: data in guest memory, little-endian.
    def write_u64(self, off, value):
        self.write(off, value.to_bytes(8, "little"))

    def read_u64(self, off):
        return int.from_bytes(self.read(off, 8), "little")


def pattern(n, seed):
    return bytes((seed + i * 7 + (i >> 8)) & 0xff for i in range(n))


def loopback_pair(env, dev=0, mac=MAC_A, send_cq_log=4, uc=False,
                  rnr_retry=7):
    """Two connected RC (or UC) QPs on one device (AV dmac = its MAC)."""
    n = Node(env.dev[dev], mac)
    a_cq, b_cq = n.cq(send_cq_log), n.cq()
    qp_type = C.KITE_QPT_UC if uc else C.KITE_QPT_RC
    a = n.qp(a_cq, a_cq, qp_type=qp_type)
    b = n.qp(b_cq, b_cq, qp_type=qp_type)
    a.connect(b.qpn, V4_GID, n.mac, sq_psn=0x100, rq_psn=0x200, uc=uc,
              rnr_retry=rnr_retry)
    b.connect(a.qpn, V4_GID, n.mac, sq_psn=0x200, rq_psn=0x100, uc=uc,
              rnr_retry=rnr_retry)
    return n, a, a_cq, b, b_cq


def check_cqe(cqe, qpn, wqe_idx, opcode, byte_len, status=None, what=""):
    status = C.KITE_CQE_SUCCESS if status is None else status
    check_eq(cqe["status"], status, what + " CQE status")
    check_eq(cqe["qpn"], qpn, what + " CQE qpn")
    check_eq(cqe["wqe_idx"], wqe_idx, what + " CQE wqe_idx")
    check_eq(cqe["opcode"], opcode, what + " CQE opcode")
    if byte_len is not None:
        check_eq(cqe["byte_len"], byte_len, what + " CQE byte_len")


def async_events(d, count):
    """The first count async EQEs after bring-up: [(type, data)]."""
    ev = []
    for i in range(count):
        wait_for(lambda: d.eqe(i)[3] & C.KITE_EQE_PHASE ==
                 ((i >> d.aeq_log) & 1) ^ 1, "async event %d" % i)
        data, _, typ, _ = d.eqe(i)
        ev.append((typ, data))
    return ev


def comp_eqe(r, index):
    """Entry index of Rdma's completion EQ: (data, type, flags)."""
    size = hw.sizeof("kite_eqe")
    slot = index % (1 << COMP_EQ_LOG)
    e = hw.unpack("kite_eqe", r.d.q.read(r.d.eq_rings + slot * size, size))
    return e.data, e.type, e.flags
