/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 transport engine: the responder. Checks request PSNs and
 * opcode sequences, executes SEND (into RQ WQEs), RDMA WRITE, READ and
 * atomics through the MR keys, keeps the responder resources for duplicate
 * READs and atomics, and sends ACKs, NAKs, READ responses and atomic ACKs
 * from an ordered output queue.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "kite_roce_int.h"

#define KR_NO_NAK       0

/* ------------------------------------------------------------------ */
/* Output queue                                                        */
/* ------------------------------------------------------------------ */

static uint32_t kr_respq_len(const KiteRoceQp *qp)
{
    return qp->respq_tail - qp->respq_head;
}

/* Entry @k (free-running) of the queue. */
static KrRespItem *kr_respq_at(const KiteRoceQp *qp, uint32_t k)
{
    return &qp->respq[k & (qp->respq_size - 1)];
}

static KrRespItem *kr_respq_push(KiteRoceQp *qp)
{
    KrRespItem *it;

    if (kr_respq_len(qp) >= qp->respq_size) {
        return NULL;
    }
    it = kr_respq_at(qp, qp->respq_tail++);
    memset(it, 0, sizeof(*it));
    return it;
}

/*
 * Queue an ACK (coalesced with a queued one) or a NAK. A NAK is urgent:
 * kr_resp_rx() sends it (and what is queued before it) at once.
 */
static void kr_resp_queue_ack(KiteRoceQp *qp, uint8_t syndrome, uint32_t psn)
{
    KrRespItem *it;

    if (syndrome != KITE_AETH_ACK_UNLIMITED) {
        qp->resp_urgent = true;
    }
    if (syndrome == KITE_AETH_ACK_UNLIMITED && kr_respq_len(qp)) {
        it = kr_respq_at(qp, qp->respq_tail - 1);
        if (it->kind == KR_RI_ACK && it->syndrome == syndrome) {
            if (kite_psn_cmp(psn, it->psn) > 0) {
                it->psn = psn;
            }
            it->msn = qp->msn;
            return;
        }
    }
    it = kr_respq_push(qp);
    if (!it) {
        return;     /* the requester's timer recovers */
    }
    it->kind = KR_RI_ACK;
    it->syndrome = syndrome;
    it->psn = psn & KITE_PSN_MASK;
    it->msn = qp->msn;
}

void kr_resp_reset(KiteRoceQp *qp)
{
    qp->respq_head = qp->respq_tail = 0;
    qp->resp_urgent = false;
    if (qp->state == KITE_QPS_RESET) {
        qp->epsn = 0;
        qp->ack_psn = KITE_PSN_MASK;
        qp->msn = 0;
        qp->nak_sent = false;
        qp->in_msg = false;
        qp->msg_drop = false;
        qp->recv_valid = false;
        if (qp->res) {
            memset(qp->res, 0, qp->nres * sizeof(*qp->res));
        }
        qp->res_next = 0;
    }
}

bool kr_resp_has_work(const KiteRoceQp *qp)
{
    return kr_respq_len(qp) != 0;
}

static void kr_send_aeth(KiteRoceQp *qp, uint8_t opcode, uint8_t syndrome,
                         uint32_t psn, uint32_t msn)
{
    struct kite_roce_pkt p;

    kr_pkt_init(qp, &p, opcode, psn);
    p.aeth_syndrome = syndrome;
    p.aeth_msn = msn & KITE_PSN_MASK;
    if (opcode == KITE_OP_ACK && syndrome != KITE_AETH_ACK_UNLIMITED) {
        if (KITE_AETH_TYPE(syndrome) == KITE_AETH_TYPE_RNR) {
            qp->cnt.rnr_naks_sent++;
            qp->e->cnt.rnr_naks_sent++;
        } else {
            qp->cnt.naks_sent++;
            qp->e->cnt.naks_sent++;
        }
    }
    kr_transmit(qp, &p, false);
}

/* Send one packet of the queue's head item; false if the queue is empty. */
bool kr_resp_step(KiteRoceQp *qp)
{
    KiteRoce *e = qp->e;
    struct kite_roce_pkt p;
    KrRespItem *it;
    uint32_t k, plen;
    uint8_t *data;
    uint8_t st;

    if (!kr_respq_len(qp)) {
        return false;
    }
    it = kr_respq_at(qp, qp->respq_head);
    switch (it->kind) {
    case KR_RI_NONE:
        qp->respq_head++;
        return true;
    case KR_RI_ACK:
        kr_send_aeth(qp, KITE_OP_ACK, it->syndrome, it->psn, it->msn);
        qp->respq_head++;
        return true;
    case KR_RI_ATOMIC:
        kr_pkt_init(qp, &p, KITE_OP_ATOMIC_ACK, it->psn);
        p.aeth_syndrome = KITE_AETH_ACK_UNLIMITED;
        p.aeth_msn = it->msn & KITE_PSN_MASK;
        p.atomic_orig = it->orig;
        kr_transmit(qp, &p, false);
        qp->respq_head++;
        return true;
    default:
        break;
    }
    /* READ response stream: the data goes straight into the frame. */
    k = (it->psn - it->res_first_psn) & KITE_PSN_MASK;
    plen = it->left < qp->mtu ? it->left : qp->mtu;
    kr_pkt_init(qp, &p, kite_roce_seg_opcode(KITE_OP_READ_RESP_FIRST, false,
                                             k, it->res_npsn), it->psn);
    data = kr_frame_payload(qp, &p);
    if (plen) {
        st = e->ops->mem_rw(e->opaque, qp->cfg.host, qp->cfg.pdn, it->rkey,
                            KITE_ACCESS_REMOTE_READ, it->va, data, plen,
                            false);
        if (st != KITE_CQE_SUCCESS) {
            uint32_t psn = it->psn;

            qp->respq_head = qp->respq_tail = 0;
            kr_send_aeth(qp, KITE_OP_ACK, KITE_AETH_NAK_REM_ACC, psn,
                         qp->msn);
            kr_qp_error(qp, KITE_EVT_QP_ACCESS_ERR);
            kr_flush(qp);
            return true;
        }
    }
    p.aeth_syndrome = KITE_AETH_ACK_UNLIMITED;
    p.aeth_msn = it->msn & KITE_PSN_MASK;
    p.payload = data;
    p.paylen = plen;
    kr_transmit(qp, &p, false);
    it->psn = (it->psn + 1) & KITE_PSN_MASK;
    it->va += plen;
    it->left -= plen;
    if (k + 1 >= it->res_npsn || !it->left) {
        qp->respq_head++;
    }
    return true;
}

/* Send the ACKs/NAKs/atomic ACKs at the head of the queue right away. */
void kr_resp_flush_acks(KiteRoceQp *qp)
{
    while (kr_respq_len(qp) &&
           kr_respq_at(qp, qp->respq_head)->kind != KR_RI_READ) {
        kr_resp_step(qp);
    }
}

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/*
 * A class C error on request @psn: NAK it with @syndrome (RC), report
 * @event, complete the receive in progress with @recv_status (if not 0)
 * and move the QP to ERR.
 */
static void kr_resp_fatal(KiteRoceQp *qp, uint8_t syndrome, uint32_t psn,
                          uint8_t event, uint8_t recv_status)
{
    qp->respq_head = qp->respq_tail = 0;
    if (qp->cfg.type == KITE_QPT_RC && syndrome != KR_NO_NAK) {
        kr_send_aeth(qp, KITE_OP_ACK, syndrome, psn, qp->msn);
    }
    kr_qp_error(qp, event);
    if (recv_status && qp->rq_ci != qp->rq_pi) {
        kr_post_cqe(qp, true, qp->rq_ci, KITE_CQE_RECV, recv_status, 0,
                    NULL, 0);
        qp->rq_ci++;
        qp->recv_valid = false;
    }
    kr_flush(qp);
}

/* ------------------------------------------------------------------ */
/* Receive WQEs                                                        */
/* ------------------------------------------------------------------ */

/* Parse the receive WQE @b (one stride) into recv_*: a CQE status. */
static uint8_t kr_rq_parse(KiteRoceQp *qp, const uint8_t *b)
{
    struct kite_rq_wqe_hdr hdr;
    struct kite_sge sge;
    uint32_t i;
    uint64_t total = 0;

    memcpy(&hdr, b, sizeof(hdr));
    qp->recv_nsge = hdr.num_sge;
    if (qp->recv_nsge > KR_MAX_SGE ||
        (uint32_t)qp->recv_nsge * sizeof(sge) >
        kite_rq_room(qp->cfg.rq_log_stride)) {
        return KITE_CQE_LOC_QP_OP_ERR;
    }
    for (i = 0; i < qp->recv_nsge; i++) {
        memcpy(&sge, b + sizeof(hdr) + i * sizeof(sge), sizeof(sge));
        qp->recv_sge[i].addr = kr_le64(&sge.addr);
        qp->recv_sge[i].length = kr_le32(&sge.length);
        qp->recv_sge[i].lkey = kr_le32(&sge.lkey);
        total += qp->recv_sge[i].length;
    }
    qp->recv_total = total;
    qp->recv_off = 0;
    qp->recv_valid = true;
    return KITE_CQE_SUCCESS;
}

/*
 * true when a receive WQE is there for the next message: one posted to
 * the RQ, or for an SRQ QP the one it holds or, failing that, one it
 * takes from the SRQ now (parsed at once: the SRQ slot may be reused).
 */
static bool kr_rq_ready(KiteRoceQp *qp)
{
    KiteRoce *e = qp->e;
    uint8_t b[1u << KITE_RQ_MAX_LOG_STRIDE];

    if (qp->rq_ci != qp->rq_pi) {
        return true;
    }
    if (!qp->cfg.srq || !e->ops->srq_take ||
        !e->ops->srq_take(e->opaque, qp->cfg.host, b, qp->rq_stride,
                          &qp->srq_slot)) {
        return false;
    }
    qp->rq_pi++;
    qp->recv_valid = false;
    qp->srq_status = kr_rq_parse(qp, b);
    return true;
}

/* Load the RQ WQE at rq_ci. Returns a CQE status; false read = fatal. */
static bool kr_rq_load(KiteRoceQp *qp, uint8_t *status)
{
    KiteRoce *e = qp->e;
    uint8_t b[1u << KITE_RQ_MAX_LOG_STRIDE];

    *status = KITE_CQE_SUCCESS;
    if (qp->recv_valid) {
        return true;
    }
    if (qp->cfg.srq) {
        /* kr_rq_ready() took and parsed it. */
        *status = qp->srq_status;
        return true;
    }
    if (!e->ops->wqe_read(e->opaque, qp->cfg.host, true,
                          qp->rq_ci & (qp->rq_depth - 1), b, qp->rq_stride)) {
        return false;
    }
    *status = kr_rq_parse(qp, b);
    return true;
}

/*
 * Scatter @len bytes at the receive's current offset. A message longer
 * than its buffers or than KITE_MAX_MSG_SIZE (the limit a WRITE has too;
 * it keeps the offset and byte_len within 32 bits) is a length error.
 */
static uint8_t kr_rq_scatter(KiteRoceQp *qp, const uint8_t *buf,
                             uint32_t len)
{
    KiteRoce *e = qp->e;
    uint32_t off = qp->recv_off, i;

    if ((uint64_t)off + len > qp->recv_total ||
        (uint64_t)off + len > KITE_MAX_MSG_SIZE) {
        return KITE_CQE_LOC_LEN_ERR;
    }
    for (i = 0; i < qp->recv_nsge && len; i++) {
        uint32_t sl = qp->recv_sge[i].length, n;
        uint8_t st;

        if (off >= sl) {
            off -= sl;
            continue;
        }
        n = sl - off < len ? sl - off : len;
        st = e->ops->mem_rw(e->opaque, qp->cfg.host, qp->cfg.pdn,
                            qp->recv_sge[i].lkey, KITE_ACCESS_LOCAL_WRITE,
                            qp->recv_sge[i].addr + off, (void *)buf, n, true);
        if (st != KITE_CQE_SUCCESS) {
            return st;
        }
        buf += n;
        len -= n;
        off = 0;
    }
    return KITE_CQE_SUCCESS;
}

/* Complete the RQ WQE at rq_ci successfully. */
static void kr_rq_complete(KiteRoceQp *qp, uint8_t opcode, uint32_t len,
                           const struct kite_roce_pkt *p, bool imm)
{
    kr_post_cqe(qp, true, qp->rq_ci, opcode, KITE_CQE_SUCCESS, len,
                imm ? p->imm : NULL, p->se ? KITE_CQE_F_SOLICITED : 0);
    qp->rq_ci++;
    qp->recv_valid = false;
}

/* ------------------------------------------------------------------ */
/* Requests                                                            */
/* ------------------------------------------------------------------ */

/* Check [va, va + len) of @rkey for @access without changing memory. */
static uint8_t kr_probe(KiteRoceQp *qp, uint32_t rkey, uint32_t access,
                        uint64_t va, uint32_t len)
{
    KiteRoce *e = qp->e;
    uint8_t tmp;
    uint8_t st;

    if (!(qp->access & access)) {
        return KITE_CQE_LOC_ACCESS_ERR;
    }
    if (!len) {
        return KITE_CQE_SUCCESS;
    }
    if (va + len < va) {
        return KITE_CQE_LOC_PROT_ERR;
    }
    st = e->ops->mem_rw(e->opaque, qp->cfg.host, qp->cfg.pdn, rkey, access, va,
                        &tmp, 1, false);
    if (st == KITE_CQE_SUCCESS && len > 1) {
        st = e->ops->mem_rw(e->opaque, qp->cfg.host, qp->cfg.pdn, rkey, access,
                            va + len - 1, &tmp, 1, false);
    }
    return st;
}

/*
 * Take the oldest responder resource for a new READ or atomic. A READ
 * response stream still queued for the resource it replaces is cancelled,
 * so at most max_dest_rd_atomic (rounded up) streams are ever queued, even
 * for a requester that ignores the limit or repeats huge duplicates.
 */
static KrResource *kr_res_new(KiteRoceQp *qp)
{
    KrResource *r = &qp->res[qp->res_next];
    uint32_t k;

    if (r->valid && !r->atomic) {
        for (k = qp->respq_head; k != qp->respq_tail; k++) {
            KrRespItem *q = kr_respq_at(qp, k);

            if (q->kind == KR_RI_READ && q->res_first_psn == r->first_psn) {
                q->kind = KR_RI_NONE;
            }
        }
    }
    qp->res_next = (qp->res_next + 1) & (qp->nres - 1);
    memset(r, 0, sizeof(*r));
    r->valid = true;
    return r;
}

static bool kr_is_first(uint8_t op)
{
    return op == KITE_OP_SEND_FIRST || op == KITE_OP_SEND_ONLY ||
           op == KITE_OP_SEND_ONLY_IMM || op == KITE_OP_SEND_ONLY_INV ||
           op == KITE_OP_WRITE_FIRST || op == KITE_OP_WRITE_ONLY ||
           op == KITE_OP_WRITE_ONLY_IMM;
}

static bool kr_has_ieth(uint8_t op)
{
    return op == KITE_OP_SEND_LAST_INV || op == KITE_OP_SEND_ONLY_INV;
}

static bool kr_is_last(uint8_t op)
{
    return op == KITE_OP_SEND_LAST || op == KITE_OP_SEND_LAST_IMM ||
           op == KITE_OP_SEND_ONLY || op == KITE_OP_SEND_ONLY_IMM ||
           op == KITE_OP_WRITE_LAST || op == KITE_OP_WRITE_LAST_IMM ||
           op == KITE_OP_WRITE_ONLY || op == KITE_OP_WRITE_ONLY_IMM ||
           kr_has_ieth(op);
}

static bool kr_has_imm(uint8_t op)
{
    return op == KITE_OP_SEND_LAST_IMM || op == KITE_OP_SEND_ONLY_IMM ||
           op == KITE_OP_WRITE_LAST_IMM || op == KITE_OP_WRITE_ONLY_IMM;
}

/*
 * SEND_* (0x00..0x05, 0x16, 0x17) or WRITE_* (0x06..0x0b) kind of @op, or
 * 0xff.
 */
static uint8_t kr_msg_kind(uint8_t op)
{
    if (op <= KITE_OP_SEND_ONLY_IMM || kr_has_ieth(op)) {
        return KITE_OP_SEND_FIRST;
    }
    if (op <= KITE_OP_WRITE_ONLY_IMM) {
        return KITE_OP_WRITE_FIRST;
    }
    return 0xff;
}

/*
 * A remote access check of a WRITE failed: a UC QP drops the rest of the
 * message, an RC QP NAKs it (remote access error) and goes to ERR. false.
 */
static bool kr_resp_access_fail(KiteRoceQp *qp, bool rc, uint32_t psn)
{
    if (!rc) {
        qp->msg_drop = true;
        return false;
    }
    kr_resp_fatal(qp, KITE_AETH_NAK_REM_ACC, psn, KITE_EVT_QP_ACCESS_ERR, 0);
    return false;
}

/*
 * The last packet of a SEND with invalidate has been placed: the host
 * invalidates the IETH's rkey and the receive completes with it. A key
 * that may not be invalidated is an invalid request (IBTA class J): NAK,
 * the receive completes in error, the QP goes to ERR. A retransmitted
 * SEND_INV never gets here (kr_resp_dup() only acknowledges it again), so
 * each message invalidates once. false: the QP failed.
 */
static bool kr_resp_inv(KiteRoceQp *qp, const struct kite_roce_pkt *p)
{
    KiteRoce *e = qp->e;
    uint8_t st = KITE_CQE_REM_INV_REQ_ERR;
    __le32 rkey;

    if (e->ops->remote_inv) {
        st = e->ops->remote_inv(e->opaque, qp->cfg.host, qp->cfg.pdn,
                                p->ieth_rkey);
    }
    if (st != KITE_CQE_SUCCESS) {
        kr_resp_fatal(qp, KITE_AETH_NAK_INV_REQ, p->psn, KITE_EVT_QP_REQ_ERR,
                      KITE_CQE_REM_INV_REQ_ERR);
        return false;
    }
    kr_set_le32(&rkey, p->ieth_rkey);
    kr_post_cqe(qp, true, qp->rq_ci, KITE_CQE_RECV, KITE_CQE_SUCCESS,
                qp->recv_off, (const uint8_t *)&rkey,
                KITE_CQE_F_INV | (p->se ? KITE_CQE_F_SOLICITED : 0));
    qp->rq_ci++;
    qp->recv_valid = false;
    return true;
}

/*
 * Execute one SEND/WRITE packet that is in sequence. Returns false when
 * the packet was not accepted (RNR NAK or a fatal error already handled).
 */
static bool kr_resp_msg(KiteRoceQp *qp, const struct kite_roce_pkt *p,
                        uint8_t op)
{
    bool rc = qp->cfg.type == KITE_QPT_RC;
    uint8_t kind = kr_msg_kind(op);
    bool first = kr_is_first(op), last = kr_is_last(op);
    uint32_t mtu = qp->mtu;
    uint8_t st;

    /* Payload size rules of the opcode. */
    if ((!last && p->paylen != mtu) || p->paylen > mtu ||
        (last && !first && !p->paylen)) {
        kr_resp_fatal(qp, KITE_AETH_NAK_INV_REQ, p->psn, KITE_EVT_QP_REQ_ERR,
                      0);
        return false;
    }
    if (kind == KITE_OP_WRITE_FIRST) {
        if (first) {
            if (p->reth_len > KITE_MAX_MSG_SIZE ||
                (last && p->paylen != p->reth_len) ||
                (!last && p->reth_len <= mtu)) {
                kr_resp_fatal(qp, KITE_AETH_NAK_INV_REQ, p->psn,
                              KITE_EVT_QP_REQ_ERR, 0);
                return false;
            }
            st = kr_probe(qp, p->reth_rkey, KITE_ACCESS_REMOTE_WRITE,
                          p->reth_va, p->reth_len);
            if (st) {
                return kr_resp_access_fail(qp, rc, p->psn);
            }
            qp->wr_va = p->reth_va;
            qp->wr_rkey = p->reth_rkey;
            qp->wr_len = p->reth_len;
            qp->wr_off = 0;
        }
        if ((uint64_t)qp->wr_off + p->paylen > qp->wr_len ||
            (last && qp->wr_off + p->paylen != qp->wr_len)) {
            kr_resp_fatal(qp, KITE_AETH_NAK_INV_REQ, p->psn,
                          KITE_EVT_QP_REQ_ERR, 0);
            return false;
        }
        if (kr_has_imm(op)) {
            /* WRITE with immediate consumes a receive: check first. */
            if (!kr_rq_ready(qp)) {
                goto rnr;
            }
        }
        if (p->paylen) {
            KiteRoce *e = qp->e;

            st = e->ops->mem_rw(e->opaque, qp->cfg.host, qp->cfg.pdn,
                                qp->wr_rkey, KITE_ACCESS_REMOTE_WRITE,
                                qp->wr_va + qp->wr_off, (void *)p->payload,
                                p->paylen, true);
            if (st) {
                return kr_resp_access_fail(qp, rc, p->psn);
            }
        }
        qp->wr_off += p->paylen;
        if (kr_has_imm(op)) {
            if (!kr_rq_load(qp, &st)) {
                kr_resp_fatal(qp, KR_NO_NAK, p->psn, KITE_EVT_QP_FATAL, 0);
                return false;
            }
            if (st) {
                kr_resp_fatal(qp, KITE_AETH_NAK_REM_OP, p->psn,
                              KITE_ROCE_EVT_STATE, st);
                return false;
            }
            kr_rq_complete(qp, KITE_CQE_RECV_WRITE_IMM, qp->wr_len, p, true);
        }
        return true;
    }
    /* SEND */
    if (first) {
        if (!kr_rq_ready(qp)) {
            goto rnr;
        }
        if (!kr_rq_load(qp, &st)) {
            kr_resp_fatal(qp, KR_NO_NAK, p->psn, KITE_EVT_QP_FATAL, 0);
            return false;
        }
        if (st) {
            kr_resp_fatal(qp, KITE_AETH_NAK_REM_OP, p->psn,
                          KITE_ROCE_EVT_STATE, st);
            return false;
        }
        qp->recv_off = 0;
    } else if (!qp->recv_valid) {
        kr_resp_fatal(qp, KITE_AETH_NAK_INV_REQ, p->psn, KITE_EVT_QP_REQ_ERR,
                      0);
        return false;
    }
    st = kr_rq_scatter(qp, p->payload, p->paylen);
    if (st == KITE_CQE_LOC_LEN_ERR) {
        kr_resp_fatal(qp, KITE_AETH_NAK_INV_REQ, p->psn, KITE_ROCE_EVT_STATE,
                      st);
        return false;
    }
    if (st) {
        kr_resp_fatal(qp, KITE_AETH_NAK_REM_OP, p->psn, KITE_ROCE_EVT_STATE,
                      st);
        return false;
    }
    qp->recv_off += p->paylen;
    if (last && kr_has_ieth(op)) {
        return kr_resp_inv(qp, p);
    }
    if (last) {
        kr_rq_complete(qp, KITE_CQE_RECV, qp->recv_off, p, kr_has_imm(op));
    }
    return true;

rnr:
    if (qp->state == KITE_QPS_ERR) {
        /* The SRQ failed as it was read and took its QPs to ERR. */
        return false;
    }
    if (rc) {
        kr_resp_queue_ack(qp, KITE_AETH_RNR_NAK | qp->min_rnr_timer, p->psn);
        qp->nak_sent = true;
    } else {
        qp->msg_drop = true;
    }
    return false;
}

static void kr_resp_read(KiteRoceQp *qp, const struct kite_roce_pkt *p)
{
    KrResource *r;
    KrRespItem *it;
    uint32_t npsn;
    uint8_t st;

    if (!qp->nres || p->reth_len > KITE_MAX_MSG_SIZE ||
        kite_roce_npkts(p->reth_len, qp->mtu) > KR_MAX_READ_PSNS) {
        kr_resp_fatal(qp, KITE_AETH_NAK_INV_REQ, p->psn, KITE_EVT_QP_REQ_ERR,
                      0);
        return;
    }
    st = kr_probe(qp, p->reth_rkey, KITE_ACCESS_REMOTE_READ, p->reth_va,
                  p->reth_len);
    if (st) {
        kr_resp_fatal(qp, KITE_AETH_NAK_REM_ACC, p->psn,
                      KITE_EVT_QP_ACCESS_ERR, 0);
        return;
    }
    npsn = kite_roce_npkts(p->reth_len, qp->mtu);
    r = kr_res_new(qp);
    r->first_psn = p->psn;
    r->npsn = npsn;
    r->va = p->reth_va;
    r->rkey = p->reth_rkey;
    r->len = p->reth_len;
    qp->epsn = (p->psn + npsn) & KITE_PSN_MASK;
    qp->msn = (qp->msn + 1) & KITE_PSN_MASK;
    it = kr_respq_push(qp);
    if (it) {
        it->kind = KR_RI_READ;
        it->psn = p->psn;
        it->msn = qp->msn;
        it->res_first_psn = p->psn;
        it->res_npsn = npsn;
        it->va = p->reth_va;
        it->rkey = p->reth_rkey;
        it->left = p->reth_len;
    }
}

static void kr_resp_atomic(KiteRoceQp *qp, const struct kite_roce_pkt *p,
                           uint8_t op)
{
    KiteRoce *e = qp->e;
    __le64 word;
    uint64_t orig, val;
    KrResource *r;
    KrRespItem *it;
    uint8_t st;

    if (!qp->nres || (p->atomic_va & (KR_ATOMIC_SIZE - 1))) {
        kr_resp_fatal(qp, KITE_AETH_NAK_INV_REQ, p->psn, KITE_EVT_QP_REQ_ERR,
                      0);
        return;
    }
    if (!(qp->access & KITE_ACCESS_REMOTE_ATOMIC)) {
        goto access;
    }
    st = e->ops->mem_rw(e->opaque, qp->cfg.host, qp->cfg.pdn, p->atomic_rkey,
                        KITE_ACCESS_REMOTE_ATOMIC, p->atomic_va, &word,
                        sizeof(word), false);
    if (st) {
        goto access;
    }
    orig = kr_le64(&word);
    if (op == KITE_OP_CMP_SWP) {
        val = orig == p->atomic_compare ? p->atomic_swap_add : orig;
    } else {
        val = orig + p->atomic_swap_add;
    }
    if (val != orig || op == KITE_OP_FETCH_ADD) {
        kr_set_le64(&word, val);
        st = e->ops->mem_rw(e->opaque, qp->cfg.host, qp->cfg.pdn,
                            p->atomic_rkey, KITE_ACCESS_REMOTE_ATOMIC,
                            p->atomic_va, &word, sizeof(word), true);
        if (st) {
            goto access;
        }
    }
    r = kr_res_new(qp);
    r->atomic = true;
    r->first_psn = p->psn;
    r->npsn = 1;
    r->va = p->atomic_va;
    r->rkey = p->atomic_rkey;
    r->orig = orig;
    qp->epsn = (p->psn + 1) & KITE_PSN_MASK;
    qp->msn = (qp->msn + 1) & KITE_PSN_MASK;
    it = kr_respq_push(qp);
    if (it) {
        it->kind = KR_RI_ATOMIC;
        it->psn = p->psn;
        it->msn = qp->msn;
        it->orig = orig;
        qp->resp_urgent = true;
    }
    return;
access:
    kr_resp_fatal(qp, KITE_AETH_NAK_REM_ACC, p->psn, KITE_EVT_QP_ACCESS_ERR,
                  0);
}

/* A request behind the expected PSN. */
static void kr_resp_dup(KiteRoceQp *qp, const struct kite_roce_pkt *p,
                        uint8_t op)
{
    uint32_t i, k, off;
    KrRespItem *it;

    qp->cnt.dup_requests++;
    qp->e->cnt.dup_requests++;
    if (op == KITE_OP_READ_REQ || op == KITE_OP_CMP_SWP ||
        op == KITE_OP_FETCH_ADD) {
        bool atomic = op != KITE_OP_READ_REQ;

        for (i = 0; i < qp->nres; i++) {
            KrResource *r = &qp->res[i];

            if (!r->valid || r->atomic != atomic) {
                continue;
            }
            k = (p->psn - r->first_psn) & KITE_PSN_MASK;
            if (k >= r->npsn) {
                continue;
            }
            if (atomic) {
                /* Replay the saved result; never execute again. */
                for (k = qp->respq_head; k != qp->respq_tail; k++) {
                    KrRespItem *q = kr_respq_at(qp, k);

                    if (q->kind == KR_RI_ATOMIC && q->psn == p->psn) {
                        return;     /* a replay is queued already */
                    }
                }
                it = kr_respq_push(qp);
                if (it) {
                    it->kind = KR_RI_ATOMIC;
                    it->psn = p->psn;
                    it->msn = qp->msn;
                    it->orig = r->orig;
                    qp->resp_urgent = true;
                }
                return;
            }
            off = k * qp->mtu;
            if (p->reth_rkey != r->rkey || p->reth_va != r->va + off ||
                p->reth_len != r->len - off) {
                break;
            }
            /* Restart a queued stream of this resource in place. */
            for (it = NULL, k = qp->respq_head; k != qp->respq_tail; k++) {
                KrRespItem *q = kr_respq_at(qp, k);

                if (q->kind == KR_RI_READ &&
                    q->res_first_psn == r->first_psn) {
                    it = q;
                    break;
                }
            }
            if (!it) {
                it = kr_respq_push(qp);
                if (!it) {
                    return;
                }
            }
            it->kind = KR_RI_READ;
            it->psn = p->psn;
            it->msn = qp->msn;
            it->res_first_psn = r->first_psn;
            it->res_npsn = r->npsn;
            it->va = p->reth_va;
            it->rkey = r->rkey;
            it->left = p->reth_len;
            return;
        }
        qp->e->cnt.rx_dropped++;
        return;
    }
    /*
     * SEND/WRITE: acknowledge again up to the last accepted SEND/WRITE
     * PSN. Not epsn - 1: that may be the PSN of a READ or atomic whose
     * response the requester has not got, and Linux rxe completes such a
     * WQE on a plain ACK with its last PSN, without the data.
     */
    kr_resp_queue_ack(qp, KITE_AETH_ACK_UNLIMITED, qp->ack_psn);
}

static void kr_resp_uc(KiteRoceQp *qp, const struct kite_roce_pkt *p,
                       uint8_t op)
{
    uint8_t kind = kr_msg_kind(op);
    bool first = kr_is_first(op);

    if (kind == 0xff) {
        qp->e->cnt.rx_dropped++;
        return;
    }
    if (p->psn != qp->epsn) {
        /* Lost packets: abandon the message, resync at FIRST/ONLY. */
        qp->in_msg = false;
        qp->msg_drop = false;
    }
    qp->epsn = (p->psn + 1) & KITE_PSN_MASK;
    if (first) {
        qp->in_msg = false;
        qp->msg_drop = false;
    } else if (!qp->in_msg || qp->msg_drop || qp->msg_kind != kind) {
        qp->in_msg = false;
        qp->msg_drop = true;
        qp->e->cnt.rx_dropped++;
        return;
    }
    if (!kr_resp_msg(qp, p, op)) {
        qp->in_msg = false;
        return;
    }
    qp->in_msg = !kr_is_last(op);
    qp->msg_kind = kind;
    if (!qp->in_msg) {
        qp->msn = (qp->msn + 1) & KITE_PSN_MASK;
    }
}

void kr_resp_rx(KiteRoceQp *qp, const struct kite_roce_pkt *p)
{
    KiteRoce *e = qp->e;
    uint8_t op = p->opcode & 0x1f, kind;
    int32_t d;

    if (qp->state == KITE_QPS_RTR && !qp->comm_est) {
        qp->comm_est = true;
        e->ops->qp_event(e->opaque, qp->cfg.host, KITE_EVT_COMM_EST);
    }
    if (qp->cfg.type == KITE_QPT_UC) {
        kr_resp_uc(qp, p, op);
        return;
    }
    d = kite_psn_cmp(p->psn, qp->epsn);
    if (d > 0) {
        if (!qp->nak_sent) {
            qp->nak_sent = true;
            kr_resp_queue_ack(qp, KITE_AETH_NAK_PSN_SEQ, qp->epsn);
        }
        e->cnt.rx_dropped++;
        goto out;
    }
    if (d < 0) {
        kr_resp_dup(qp, p, op);
        goto out;
    }
    qp->nak_sent = false;
    kind = kr_msg_kind(op);
    if (qp->in_msg) {
        if (kind != qp->msg_kind || kr_is_first(op)) {
            kr_resp_fatal(qp, KITE_AETH_NAK_INV_REQ, p->psn,
                          KITE_EVT_QP_REQ_ERR, 0);
            return;
        }
    } else if (kind != 0xff && !kr_is_first(op)) {
        kr_resp_fatal(qp, KITE_AETH_NAK_INV_REQ, p->psn, KITE_EVT_QP_REQ_ERR,
                      0);
        return;
    }
    switch (op) {
    case KITE_OP_READ_REQ:
        kr_resp_read(qp, p);
        break;
    case KITE_OP_CMP_SWP:
    case KITE_OP_FETCH_ADD:
        kr_resp_atomic(qp, p, op);
        break;
    default:
        if (kind == 0xff) {
            /* Not a request opcode the responder executes. */
            kr_resp_fatal(qp, KITE_AETH_NAK_INV_REQ, p->psn,
                          KITE_EVT_QP_REQ_ERR, 0);
            return;
        }
        if (!kr_resp_msg(qp, p, op)) {
            break;
        }
        qp->in_msg = !kr_is_last(op);
        qp->msg_kind = kind;
        qp->epsn = (p->psn + 1) & KITE_PSN_MASK;
        qp->ack_psn = p->psn;
        if (!qp->in_msg) {
            qp->msn = (qp->msn + 1) & KITE_PSN_MASK;
        }
        if (p->ackreq) {
            kr_resp_queue_ack(qp, KITE_AETH_ACK_UNLIMITED, p->psn);
        }
        break;
    }
out:
    /*
     * Plain ACKs wait for the next kite_roce_run(): those of every packet
     * received before it merge into one (an ACK covers all earlier PSNs).
     * NAKs and atomic responses go now.
     */
    if (qp->state != KITE_QPS_ERR && qp->resp_urgent) {
        qp->resp_urgent = false;
        kr_resp_flush_acks(qp);
    }
}

/* The GRH area of the ABI holds the largest network header: IPv6's. */
static_assert(KITE_UD_GRH_LEN == KITE_IPV6_HDR_LEN, "UD GRH area size");

/*
 * A UD SEND_ONLY: check the Q_Key, take a receive, write the GRH
 * area (IPv6 header, or 20 zero bytes and the IPv4 header) and the
 * payload, and complete it. Nothing is acknowledged; a message that finds
 * no receive is dropped. Returns whether the QP took a receive WQE.
 */
bool kr_resp_ud(KiteRoceQp *qp, const struct kite_roce_pkt *p)
{
    KiteRoce *e = qp->e;
    uint32_t qkey = qp->cfg.type == KITE_QPT_GSI ? KITE_GSI_QKEY : qp->qkey;
    uint8_t grh[KITE_UD_GRH_LEN];
    uint8_t st;

    if (p->deth_qkey != qkey || p->l3_len > sizeof(grh) ||
        !kr_rq_ready(qp)) {
        e->cnt.rx_dropped++;
        return false;
    }
    if (!kr_rq_load(qp, &st)) {
        kr_qp_error(qp, KITE_EVT_QP_FATAL);
        kr_flush(qp);
        return false;
    }
    if (st) {
        kr_qp_error(qp, KITE_ROCE_EVT_STATE);
        kr_post_cqe(qp, true, qp->rq_ci, KITE_CQE_RECV, st, 0, NULL, 0);
        qp->rq_ci++;
        qp->recv_valid = false;
        kr_flush(qp);
        return true;
    }
    memset(grh, 0, sizeof(grh));
    memcpy(grh + sizeof(grh) - p->l3_len, p->l3, p->l3_len);
    qp->recv_off = 0;
    st = kr_rq_scatter(qp, grh, sizeof(grh));
    if (!st) {
        qp->recv_off = sizeof(grh);
        st = kr_rq_scatter(qp, p->payload, p->paylen);
    }
    kr_post_cqe_ud(qp, qp->rq_ci, st, st ? 0 : sizeof(grh) + p->paylen, p);
    qp->rq_ci++;
    qp->recv_valid = false;
    return true;
}
