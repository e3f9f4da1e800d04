/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 transport engine: engine and QP lifetime, the QP number
 * index, MODIFY_QP and its state effects (the responder's output queue),
 * flush, doorbells, the ready ring and the send run loop, timers and
 * counters.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <stdlib.h>

#include "kite_roce_crc.h"
#include "kite_roce_int.h"

uint32_t kr_next_pow2(uint32_t v)
{
    uint32_t n = 1;

    while (n < v) {
        n <<= 1;
    }
    return n;
}

KiteRoce *kite_roce_new(const struct kite_roce_ops *ops, void *opaque)
{
    KiteRoce *e = calloc(1, sizeof(*e));

    if (!e) {
        return NULL;
    }
    e->ops = ops;
    e->opaque = opaque;
    e->eth_mtu = 1500;
    /* The CRC implementation is chosen now, not in the data path. */
    kite_roce_crc_current();
    e->qp_hash_size = KR_QP_HASH_MIN;
    e->qp_hash = calloc(e->qp_hash_size, sizeof(*e->qp_hash));
    if (!e->qp_hash) {
        free(e);
        return NULL;
    }
    return e;
}

void kite_roce_free(KiteRoce *e)
{
    if (!e) {
        return;
    }
    while (e->qps) {
        kite_roce_qp_destroy(e->qps);
    }
    free(e->qp_hash);
    free(e);
}

void kite_roce_set_port(KiteRoce *e, const uint8_t *mac, uint32_t eth_mtu)
{
    memcpy(e->mac, mac, sizeof(e->mac));
    e->eth_mtu = eth_mtu;
}

/* ------------------------------------------------------------------ */
/* The ready ring                                                      */
/* ------------------------------------------------------------------ */

/*
 * @qp may have work now: put it on the ready ring, last in the round the
 * next run makes. Wherever what kr_qp_has_work() tests can turn true
 * (doorbells, MODIFY_QP, received packets, timers, a move to ERR) this is
 * called; a QP put here without work just leaves at its next step.
 */
void kr_qp_ready(KiteRoceQp *qp)
{
    KiteRoce *e = qp->e;

    if (qp->rnext) {
        return;
    }
    if (!e->ready) {
        qp->rnext = qp->rprev = qp;
        e->ready = qp;
        return;
    }
    qp->rnext = e->ready;
    qp->rprev = e->ready->rprev;
    qp->rprev->rnext = qp;
    e->ready->rprev = qp;
}

static void kr_qp_unready(KiteRoceQp *qp)
{
    KiteRoce *e = qp->e;

    if (!qp->rnext) {
        return;
    }
    if (qp->rnext == qp) {
        e->ready = NULL;
    } else {
        qp->rprev->rnext = qp->rnext;
        qp->rnext->rprev = qp->rprev;
        if (e->ready == qp) {
            e->ready = qp->rnext;
        }
    }
    qp->rnext = qp->rprev = NULL;
}

/* ------------------------------------------------------------------ */
/* QP lifetime and the QP number index                                 */
/* ------------------------------------------------------------------ */

static KiteRoceQp **kr_qp_bucket(KiteRoce *e, uint32_t qpn)
{
    return &e->qp_hash[qpn & (e->qp_hash_size - 1)];
}

/*
 * One more QP: the index doubles when it would hold more QPs than buckets,
 * so chains stay short at any number of QPs and the rehash costs O(1) per
 * QP created. Without memory for it the index keeps its size.
 */
static void kr_qp_hash_grow(KiteRoce *e)
{
    uint32_t size = e->qp_hash_size * 2, i;
    KiteRoceQp **h, *qp, *next;

    if (e->nqps < e->qp_hash_size || size < e->qp_hash_size) {
        return;
    }
    h = calloc(size, sizeof(*h));
    if (!h) {
        return;
    }
    for (i = 0; i < e->qp_hash_size; i++) {
        for (qp = e->qp_hash[i]; qp; qp = next) {
            next = qp->hnext;
            qp->hnext = h[qp->cfg.qpn & (size - 1)];
            h[qp->cfg.qpn & (size - 1)] = qp;
        }
    }
    free(e->qp_hash);
    e->qp_hash = h;
    e->qp_hash_size = size;
}

KiteRoceQp *kite_roce_qp_find(const KiteRoce *e, uint32_t qpn)
{
    KiteRoceQp *qp = e->qp_hash[qpn & (e->qp_hash_size - 1)];

    while (qp && qp->cfg.qpn != qpn) {
        qp = qp->hnext;
    }
    return qp;
}

void *kite_roce_qp_host(const KiteRoceQp *qp)
{
    return qp->cfg.host;
}

KiteRoceQp *kite_roce_qp_create(KiteRoce *e,
                                const struct kite_roce_qp_cfg *cfg)
{
    KiteRoceQp *qp, **bucket;

    if (kite_roce_qp_find(e, cfg->qpn) ||
        cfg->sq_log_depth > 16 || cfg->rq_log_depth > 16 ||
        (cfg->srq && cfg->rq_log_depth) ||
        cfg->sq_log_stride < KITE_SQ_MIN_LOG_STRIDE ||
        cfg->sq_log_stride > KITE_SQ_MAX_LOG_STRIDE ||
        cfg->rq_log_stride < KITE_RQ_MIN_LOG_STRIDE ||
        cfg->rq_log_stride > KITE_RQ_MAX_LOG_STRIDE) {
        return NULL;
    }
    qp = calloc(1, sizeof(*qp));
    if (!qp) {
        return NULL;
    }
    qp->e = e;
    qp->cfg = *cfg;
    qp->sq_depth = 1u << cfg->sq_log_depth;
    qp->sq_stride = 1u << cfg->sq_log_stride;
    qp->rq_depth = 1u << cfg->rq_log_depth;
    qp->rq_stride = 1u << cfg->rq_log_stride;
    qp->sq = calloc(qp->sq_depth, sizeof(*qp->sq));
    if (!qp->sq) {
        free(qp);
        return NULL;
    }
    qp->state = KITE_QPS_RESET;
    qp->path_mtu = KITE_MTU_256;
    qp->mtu = kite_mtu_bytes(KITE_MTU_256);
    qp->max_rd_atomic = 1;
    qp->timer_deadline = KITE_ROCE_TIMER_OFF;
    qp->sport = kite_roce_udp_sport(cfg->qpn, 0, 0);
    kr_qp_hash_grow(e);
    qp->next = e->qps;
    if (e->qps) {
        e->qps->prev = qp;
    }
    e->qps = qp;
    e->nqps++;
    bucket = kr_qp_bucket(e, cfg->qpn);
    qp->hnext = *bucket;
    *bucket = qp;
    return qp;
}

void kite_roce_qp_destroy(KiteRoceQp *qp)
{
    KiteRoce *e = qp->e;
    KiteRoceQp **pp;

    kr_comp_cancel_timer(qp);
    kr_mcast_qp_destroyed(qp);
    if (qp->prev) {
        qp->prev->next = qp->next;
    } else {
        e->qps = qp->next;
    }
    if (qp->next) {
        qp->next->prev = qp->prev;
    }
    e->nqps--;
    for (pp = kr_qp_bucket(e, qp->cfg.qpn); *pp; pp = &(*pp)->hnext) {
        if (*pp == qp) {
            *pp = qp->hnext;
            break;
        }
    }
    kr_qp_unready(qp);
    kr_resp_release(qp);
    free(qp->res);
    free(qp->sq);
    free(qp);
}

uint8_t kite_roce_qp_state(const KiteRoceQp *qp)
{
    return qp->state;
}

uint32_t kite_roce_qp_sq_psn(const KiteRoceQp *qp)
{
    return qp->hi_psn;
}

bool kite_roce_qp_wq_idle(const KiteRoceQp *qp, bool rq)
{
    return rq ? qp->rq_ci == qp->rq_pi : qp->sq_ci == qp->sq_pi;
}

uint32_t kite_roce_qp_rq_psn(const KiteRoceQp *qp)
{
    return qp->epsn;
}

const struct kite_roce_counters *kite_roce_qp_counters(const KiteRoceQp *qp)
{
    return &qp->cnt;
}

const struct kite_roce_counters *kite_roce_counters(const KiteRoce *e)
{
    return &e->cnt;
}

/* ------------------------------------------------------------------ */
/* State effects                                                       */
/* ------------------------------------------------------------------ */

static void kr_cqe_fill(KiteRoceQp *qp, struct kite_cqe *cqe, bool rq,
                        uint32_t idx, uint8_t opcode, uint8_t status,
                        uint32_t byte_len, const uint8_t *imm, uint8_t flags,
                        const struct kite_roce_pkt *ud);

/*
 * A QP on an SRQ that leaves its queues (RESET, DESTROY_QP) holding a WQE
 * it took from the SRQ: complete that WQE with WR_FLUSH_ERR, which names
 * its SRQ slot, so the host gets the slot back. The QP's state stays: a
 * CQ that cannot take the CQE has reported its own error.
 */
static void kr_srq_return(KiteRoceQp *qp)
{
    KiteRoce *e = qp->e;
    struct kite_cqe cqe;

    if (!qp->cfg.srq || qp->rq_ci == qp->rq_pi) {
        return;
    }
    kr_cqe_fill(qp, &cqe, true, qp->rq_ci, KITE_CQE_RECV,
                KITE_CQE_WR_FLUSH_ERR, 0, NULL, 0, NULL);
    e->ops->cq_post(e->opaque, qp->cfg.recv_cqn, &cqe);
    qp->rq_ci = qp->rq_pi;
}

void kite_roce_qp_srq_return(KiteRoceQp *qp)
{
    kr_srq_return(qp);
}

void kite_roce_qp_fatal(KiteRoceQp *qp)
{
    if (qp->state != KITE_QPS_RESET) {
        kr_qp_error(qp, KITE_EVT_QP_FATAL);
    }
}

static void kr_qp_reset(KiteRoceQp *qp)
{
    kr_srq_return(qp);
    kr_qp_unready(qp);
    kr_comp_cancel_timer(qp);
    memset(qp->sq, 0, qp->sq_depth * sizeof(*qp->sq));
    qp->sq_pi = qp->sq_ci = qp->req_idx = 0;
    qp->rq_pi = qp->rq_ci = 0;
    qp->comm_est = false;
    qp->flush_pending = false;
    qp->last_wqe_sent = false;
    kr_sq_uncache(qp, 0, true);
    kr_req_reset(qp);
    kr_resp_reset(qp);
    kr_resp_release(qp);
}

/*
 * Give an RC QP the output queue its responder resources need (at the
 * move to RTR, or when max_dest_rd_atomic grows later). Queued entries
 * keep their free-running indexes. false: no memory (nothing changed).
 */
bool kr_resp_alloc(KiteRoceQp *qp)
{
    uint32_t want = kr_next_pow2(qp->nres * KR_RESPQ_PER_RES +
                                 KR_RESPQ_MIN);
    KrRespItem *q;
    uint32_t k;

    if (qp->cfg.type != KITE_QPT_RC) {
        return true;
    }
    if (want > KR_RESPQ_MAX) {
        want = KR_RESPQ_MAX;
    }
    if (qp->respq_size >= want) {
        return true;
    }
    q = calloc(want, sizeof(*q));
    if (!q) {
        return false;
    }
    for (k = qp->respq_head; k != qp->respq_tail; k++) {
        q[k & (want - 1)] = qp->respq[k & (qp->respq_size - 1)];
    }
    free(qp->respq);
    qp->respq = q;
    qp->respq_size = want;
    return true;
}

/* Drop the output queue (RESET, destroy): an idle QP holds none. */
void kr_resp_release(KiteRoceQp *qp)
{
    free(qp->respq);
    qp->respq = NULL;
    qp->respq_size = 0;
    qp->respq_head = qp->respq_tail = 0;
}

/*
 * The responder's output queue, for a QP that receives requests: without
 * memory for it the QP goes to ERR with KITE_EVT_QP_FATAL, which the host
 * reports as for any device-initiated error.
 */
static void kr_qp_resp_ready(KiteRoceQp *qp)
{
    if (qp->state == KITE_QPS_RESET || qp->state == KITE_QPS_INIT ||
        qp->state == KITE_QPS_ERR || kr_resp_alloc(qp)) {
        return;
    }
    kr_qp_error(qp, KITE_EVT_QP_FATAL);
    kr_flush(qp);
}

bool kr_req_active(const KiteRoceQp *qp)
{
    return qp->state == KITE_QPS_RTS || qp->state == KITE_QPS_SQD;
}

void kite_roce_qp_modify(KiteRoceQp *qp, const struct kite_roce_qp_attr *a,
                         uint32_t mask)
{
    KiteRoce *e = qp->e;
    uint8_t old = qp->state;

    if (mask & KITE_QP_ATTR_PATH_MTU) {
        uint32_t mtu = kite_mtu_bytes(a->path_mtu);

        if (mtu) {
            qp->path_mtu = a->path_mtu;
            qp->mtu = mtu;
        }
    }
    if (mask & KITE_QP_ATTR_TIMEOUT) {
        qp->timeout = a->timeout > KITE_QP_MAX_TIMEOUT ? KITE_QP_MAX_TIMEOUT :
                      a->timeout;
    }
    if (mask & KITE_QP_ATTR_RETRY_CNT) {
        qp->retry_cnt = a->retry_cnt & KITE_QP_MAX_RETRY;
        qp->retry_left = qp->retry_cnt;
    }
    if (mask & KITE_QP_ATTR_RNR_RETRY) {
        qp->rnr_retry = a->rnr_retry & KITE_QP_MAX_RETRY;
        qp->rnr_left = qp->rnr_retry;
    }
    if (mask & KITE_QP_ATTR_MIN_RNR_TIMER) {
        qp->min_rnr_timer = a->min_rnr_timer & 0x1f;
    }
    if (mask & KITE_QP_ATTR_MAX_QP_RD_ATOMIC) {
        /* 0 would block every READ forever: treat it as 1. */
        qp->max_rd_atomic = a->max_rd_atomic ? a->max_rd_atomic : 1;
        if (qp->max_rd_atomic > KR_MAX_RD_ATOM) {
            qp->max_rd_atomic = KR_MAX_RD_ATOM;
        }
    }
    if (mask & KITE_QP_ATTR_MAX_DEST_RD_ATOMIC) {
        uint32_t n = a->max_dest_rd_atomic;
        KrResource *res = NULL;

        if (n > KR_MAX_RD_ATOM) {
            n = KR_MAX_RD_ATOM;
        }
        n = n ? kr_next_pow2(n) : 0;
        if (n) {
            res = calloc(n, sizeof(*res));
            if (!res) {
                n = 0;
            }
        }
        free(qp->res);
        qp->res = res;
        qp->nres = n;
        qp->res_next = 0;
        qp->max_dest_rd_atomic = a->max_dest_rd_atomic;
    }
    if (mask & KITE_QP_ATTR_ACCESS_FLAGS) {
        qp->access = a->access;
    }
    if (mask & KITE_QP_ATTR_QKEY) {
        qp->qkey = a->qkey;
    }
    if (mask & KITE_QP_ATTR_SQ_PSN) {
        qp->sq_psn = a->sq_psn & KITE_PSN_MASK;
        qp->una_psn = qp->sq_psn;
        qp->hi_psn = qp->sq_psn;
        qp->rtt_pending = false;
        kr_cwnd_reset(qp);
    }
    if (mask & KITE_QP_ATTR_RQ_PSN) {
        qp->epsn = a->rq_psn & KITE_PSN_MASK;
        qp->ack_psn = (a->rq_psn - 1) & KITE_PSN_MASK;
    }
    if (mask & KITE_QP_ATTR_DEST_QPN) {
        qp->dest_qpn = a->dest_qpn & KITE_QPN_MASK;
    }
    if (mask & KITE_QP_ATTR_AV) {
        qp->path = a->path;
        qp->path.flow_label &= KITE_AV_FLOW_LABEL_MASK;
    }
    if (mask & (KITE_QP_ATTR_AV | KITE_QP_ATTR_DEST_QPN)) {
        qp->sport = kite_roce_udp_sport(qp->cfg.qpn, qp->dest_qpn,
                                        qp->path.flow_label);
    }
    if (qp->state != KITE_QPS_RESET) {
        /* Limits, the state or the window may have changed. */
        kr_qp_ready(qp);
    }
    if (!(mask & KITE_QP_ATTR_STATE)) {
        if (mask & KITE_QP_ATTR_MAX_DEST_RD_ATOMIC) {
            kr_qp_resp_ready(qp);
        }
        return;
    }
    qp->state = a->state;
    if (qp->state != KITE_QPS_RESET) {
        kr_qp_ready(qp);
    }
    switch (a->state) {
    case KITE_QPS_RESET:
        kr_qp_reset(qp);
        break;
    case KITE_QPS_ERR:
        kr_comp_cancel_timer(qp);
        kr_resp_reset(qp);
        kr_flush(qp);
        break;
    case KITE_QPS_RTR:
        kr_qp_resp_ready(qp);
        break;
    case KITE_QPS_RTS:
        kr_qp_resp_ready(qp);
        if (old != KITE_QPS_RTS) {
            qp->retry_left = qp->retry_cnt;
            qp->rnr_left = qp->rnr_retry;
            qp->tx_stall_ns = 0;
        }
        if (qp->req_idx != qp->sq_pi) {
            e->ops->kick(e->opaque);
        }
        break;
    default:
        break;
    }
}

/*
 * A device-initiated move to ERR: report the state change first, then
 * @event (KITE_ROCE_EVT_STATE: none). The caller posts the completion that
 * caused it and then calls kr_flush().
 */
void kr_qp_error(KiteRoceQp *qp, uint8_t event)
{
    KiteRoce *e = qp->e;

    if (qp->state == KITE_QPS_ERR) {
        return;
    }
    qp->state = KITE_QPS_ERR;
    kr_comp_cancel_timer(qp);
    e->ops->qp_event(e->opaque, qp->cfg.host, KITE_ROCE_EVT_STATE);
    if (event != KITE_ROCE_EVT_STATE) {
        e->ops->qp_event(e->opaque, qp->cfg.host, event);
    }
    kr_resp_reset(qp);
    qp->flush_pending = true;
    kr_qp_ready(qp);
    e->ops->kick(e->opaque);
}

static void kr_cqe_fill(KiteRoceQp *qp, struct kite_cqe *cqe, bool rq,
                        uint32_t idx, uint8_t opcode, uint8_t status,
                        uint32_t byte_len, const uint8_t *imm, uint8_t flags,
                        const struct kite_roce_pkt *ud)
{
    uint32_t depth = rq ? qp->rq_depth : qp->sq_depth;

    memset(cqe, 0, sizeof(*cqe));
    kr_set_le32(&cqe->qpn, qp->cfg.qpn);
    kr_set_le16(&cqe->wqe_idx, rq && qp->cfg.srq ? qp->srq_slot :
                idx & (depth - 1));
    cqe->opcode = opcode;
    cqe->status = status;
    kr_set_le32(&cqe->byte_len, byte_len);
    if (imm) {
        /* Wire order, as verbs hands it over (__be32); F_INV: an rkey, LE. */
        memcpy(&cqe->imm_data, imm, sizeof(cqe->imm_data));
        if (!(flags & KITE_CQE_F_INV)) {
            flags |= KITE_CQE_F_IMM;
        }
    }
    if (ud) {
        kr_set_le32(&cqe->src_qp, ud->deth_sqpn);
        cqe->net_hdr = ud->ipv6 ? KITE_CQE_NET_IPV6 : KITE_CQE_NET_IPV4;
        memcpy(cqe->smac, ud->smac, sizeof(cqe->smac));
    }
    cqe->flags = flags & ~KITE_CQE_F_PHASE;
}

static bool kr_cqe_write(KiteRoceQp *qp, bool rq, uint32_t idx,
                         uint8_t opcode, uint8_t status, uint32_t byte_len,
                         const uint8_t *imm, uint8_t flags,
                         const struct kite_roce_pkt *ud)
{
    KiteRoce *e = qp->e;
    struct kite_cqe cqe;

    kr_cqe_fill(qp, &cqe, rq, idx, opcode, status, byte_len, imm, flags, ud);
    if (!e->ops->cq_post(e->opaque, rq ? qp->cfg.recv_cqn :
                         qp->cfg.send_cqn, &cqe)) {
        kr_qp_error(qp, KITE_EVT_QP_FATAL);
        return false;
    }
    return true;
}

bool kr_post_cqe(KiteRoceQp *qp, bool rq, uint32_t idx, uint8_t opcode,
                 uint8_t status, uint32_t byte_len, const uint8_t *imm,
                 uint8_t flags)
{
    return kr_cqe_write(qp, rq, idx, opcode, status, byte_len, imm, flags,
                        NULL);
}

/* A UD receive completion: source QP, network type, MAC and the GRH. */
bool kr_post_cqe_ud(KiteRoceQp *qp, uint32_t idx, uint8_t status,
                    uint32_t byte_len, const struct kite_roce_pkt *p)
{
    bool imm = (p->opcode & 0x1f) == (KITE_OP_UD_SEND_ONLY_IMM & 0x1f);
    uint8_t flags = KITE_CQE_F_GRH | (p->se ? KITE_CQE_F_SOLICITED : 0);

    return kr_cqe_write(qp, true, idx, KITE_CQE_RECV, status, byte_len,
                        imm ? p->imm : NULL, status ? 0 : flags,
                        status ? NULL : p);
}

/* In ERR: complete every outstanding WQE with WR_FLUSH_ERR, in order. */
void kr_flush(KiteRoceQp *qp)
{
    KiteRoce *e = qp->e;

    if (qp->state != KITE_QPS_ERR) {
        return;
    }
    qp->flush_pending = false;
    while (qp->sq_ci != qp->sq_pi) {
        KrSqSlot *s = &qp->sq[qp->sq_ci & (qp->sq_depth - 1)];
        uint8_t op = s->opcode;

        if (!s->parsed) {
            uint8_t b[1u << KITE_SQ_MAX_LOG_STRIDE];
            struct kite_sq_wqe_hdr hdr;

            op = KITE_WQE_SEND;
            if (e->ops->wqe_read(e->opaque, qp->cfg.host, false,
                                 qp->sq_ci & (qp->sq_depth - 1), b,
                                 qp->sq_stride)) {
                memcpy(&hdr, b, sizeof(hdr));
                op = hdr.opcode;
            }
        }
        memset(s, 0, sizeof(*s));
        kr_sq_uncache(qp, qp->sq_ci, false);
        kr_post_cqe(qp, false, qp->sq_ci, kr_cqe_opcode(op),
                    KITE_CQE_WR_FLUSH_ERR, 0, NULL, 0);
        qp->sq_ci++;
    }
    qp->req_idx = qp->sq_ci;
    qp->rd_inflight = 0;
    while (qp->rq_ci != qp->rq_pi) {
        kr_post_cqe(qp, true, qp->rq_ci, KITE_CQE_RECV,
                    KITE_CQE_WR_FLUSH_ERR, 0, NULL, 0);
        qp->rq_ci++;
    }
    qp->recv_valid = false;
    /*
     * The SRQ's other WQEs stay for the other QPs: an RC/UC QP tells its
     * consumer that it holds none any more (IB_EVENT_QP_LAST_WQE_REACHED).
     */
    if (qp->cfg.srq && !qp->last_wqe_sent &&
        (qp->cfg.type == KITE_QPT_RC || qp->cfg.type == KITE_QPT_UC)) {
        qp->last_wqe_sent = true;
        e->ops->qp_event(e->opaque, qp->cfg.host, KITE_EVT_QP_LAST_WQE);
    }
}

/* ------------------------------------------------------------------ */
/* Doorbells                                                           */
/* ------------------------------------------------------------------ */

static bool kr_doorbell_check(KiteRoceQp *qp, uint32_t pi, uint32_t *cur,
                              uint32_t ci, uint8_t log_depth)
{
    if (!kite_ring_pi_valid(pi, ci, log_depth)) {
        kr_qp_error(qp, KITE_EVT_QP_FATAL);
        return false;
    }
    /* A doorbell that goes backwards is ignored. */
    if (pi - ci >= *cur - ci) {
        *cur = pi;
    }
    return true;
}

void kite_roce_sq_doorbell(KiteRoceQp *qp, uint32_t pi)
{
    KiteRoce *e = qp->e;

    if (qp->state == KITE_QPS_RESET) {
        return;
    }
    kr_doorbell_check(qp, pi, &qp->sq_pi, qp->sq_ci, qp->cfg.sq_log_depth);
    if (qp->state == KITE_QPS_ERR) {
        qp->flush_pending = true;
    }
    kr_qp_ready(qp);
    e->ops->kick(e->opaque);
}

void kite_roce_rq_doorbell(KiteRoceQp *qp, uint32_t pi)
{
    KiteRoce *e = qp->e;

    if (qp->state == KITE_QPS_RESET || qp->cfg.srq) {
        return;
    }
    kr_doorbell_check(qp, pi, &qp->rq_pi, qp->rq_ci, qp->cfg.rq_log_depth);
    if (qp->state == KITE_QPS_ERR) {
        qp->flush_pending = true;
        kr_qp_ready(qp);
        e->ops->kick(e->opaque);
    }
}

/* ------------------------------------------------------------------ */
/* Transmit helpers                                                    */
/* ------------------------------------------------------------------ */

void kr_pkt_init(KiteRoceQp *qp, struct kite_roce_pkt *p, uint8_t opcode,
                 uint32_t psn)
{
    static const uint8_t zero_mac[6];

    *p = kite_roce_pkt_zero;
    memcpy(p->dmac, qp->path.dmac, 6);
    if (memcmp(qp->path.smac, zero_mac, 6)) {
        memcpy(p->smac, qp->path.smac, 6);
    } else {
        memcpy(p->smac, qp->e->mac, 6);
    }
    p->ipv6 = qp->path.ipv6;
    memcpy(p->sgid, qp->path.sgid, 16);
    memcpy(p->dgid, qp->path.dgid, 16);
    p->traffic_class = qp->path.traffic_class;
    p->hop_limit = qp->path.hop_limit;
    p->flow_label = qp->path.flow_label;
    p->sport = qp->sport;
    p->opcode = opcode;
    p->pkey = KITE_BTH_PKEY_DEFAULT;
    p->dqpn = qp->dest_qpn;
    p->psn = psn & KITE_PSN_MASK;
}

/*
 * Where the payload of @p (opcode and IP version set) goes in the frame
 * kr_transmit() builds: data read there is not copied again.
 */
uint8_t *kr_frame_payload(KiteRoceQp *qp, const struct kite_roce_pkt *p)
{
    return qp->e->frame + kite_roce_payload_offset(p);
}

/* Send the @n bytes built in the frame and count them. */
static void kr_transmit_frame(KiteRoceQp *qp, size_t n, bool retransmit)
{
    KiteRoce *e = qp->e;

    e->ops->transmit(e->opaque, e->frame, n);
    qp->cnt.tx_packets++;
    qp->cnt.tx_bytes += n;
    e->cnt.tx_packets++;
    e->cnt.tx_bytes += n;
    if (retransmit) {
        qp->cnt.retransmits++;
        e->cnt.retransmits++;
    }
}

void kr_transmit(KiteRoceQp *qp, struct kite_roce_pkt *p, bool retransmit)
{
    KiteRoce *e = qp->e;
    size_t n;

    p->ip_id = e->ip_id++;
    n = kite_roce_build(e->frame, sizeof(e->frame), p);
    if (n) {
        kr_transmit_frame(qp, n, retransmit);
    }
}

/*
 * The shortest payload CRCed as it is read in: the headers' own CRC
 * (~20 ns) costs more than the copy it saves below it (engine-bench: 6%
 * slower with 1 KiB payloads, 10-20% faster with 4 KiB).
 */
#define KR_CRC_COPY_MIN     2048

/*
 * kr_transmit() in two halves around the payload, for a host that CRCs
 * it as it is read in (ops->mem_read_crc): write the headers of @p (every
 * field but p->payload set) and start @crc; returns where the p->paylen
 * bytes go (kr_sge_read_crc()). Without the op, or for a short payload,
 * kr_transmit_end() builds the frame whole, as kr_transmit().
 */
uint8_t *kr_frame_begin(KiteRoceQp *qp, struct kite_roce_pkt *p,
                        uint32_t *crc)
{
    KiteRoce *e = qp->e;

    e->frame_crc = e->ops->mem_read_crc && p->paylen >= KR_CRC_COPY_MIN;
    *crc = 0;
    if (!e->frame_crc) {
        return kr_frame_payload(qp, p);
    }
    p->ip_id = e->ip_id++;
    e->frame_hdr = kite_roce_build_hdr(e->frame, sizeof(e->frame), p, crc);
    /* A frame that cannot be built is not sent, as kr_transmit()'s. */
    return e->frame_hdr ? e->frame + e->frame_hdr :
           kr_frame_payload(qp, p);
}

/* The payload is in (and @crc covers it): finish the frame and send it. */
void kr_transmit_end(KiteRoceQp *qp, struct kite_roce_pkt *p, uint32_t crc,
                     bool retransmit)
{
    KiteRoce *e = qp->e;

    if (!e->frame_crc) {
        kr_transmit(qp, p, retransmit);
    } else if (e->frame_hdr) {
        kr_transmit_frame(qp, kite_roce_build_end(e->frame, p, crc),
                          retransmit);
        e->frame_hdr = 0;
    }
}

/* ------------------------------------------------------------------ */
/* Run loop and timers                                                 */
/* ------------------------------------------------------------------ */

bool kr_qp_has_work(KiteRoceQp *qp)
{
    if (qp->state == KITE_QPS_ERR) {
        return qp->flush_pending || qp->sq_ci != qp->sq_pi ||
               qp->rq_ci != qp->rq_pi;
    }
    return kr_resp_has_work(qp) || kr_req_has_work(qp);
}

/* One unit of work (normally one packet) of @qp; false when idle. */
static bool kr_qp_step(KiteRoceQp *qp)
{
    if (qp->state == KITE_QPS_ERR) {
        if (qp->flush_pending || qp->sq_ci != qp->sq_pi ||
            qp->rq_ci != qp->rq_pi) {
            kr_flush(qp);
            return true;
        }
        return false;
    }
    if (kr_resp_step(qp)) {
        return true;
    }
    return kr_req_step(qp);
}

/*
 * The port is full: the QPs in ERR on the ready ring still flush, for they
 * send nothing (a drain must not wait for the link), at most @budget of
 * them; the others wait for the port. Returns the flushes done.
 */
static unsigned kr_run_flushes(KiteRoce *e, unsigned budget)
{
    KiteRoceQp *qp = e->ready, *last, *next;
    unsigned done = 0;
    bool end = !qp;

    last = qp ? qp->rprev : NULL;
    while (!end && done < budget) {
        end = qp == last;
        next = qp->rnext;
        if (qp->state == KITE_QPS_ERR) {
            if (kr_qp_step(qp)) {
                done++;
            }
            if (!kr_qp_has_work(qp)) {
                kr_qp_unready(qp);
            }
        }
        qp = next;
    }
    return done;
}

/*
 * Round robin over the ready ring, one step per QP per round; a QP found
 * idle leaves the ring. Only the steps that did something count against
 * @budget.
 */
bool kite_roce_run(KiteRoce *e, unsigned budget)
{
    unsigned done = 0;
    KiteRoceQp *qp;

    while (done < budget && e->ready) {
        if (e->ops->tx_ready && !e->ops->tx_ready(e->opaque)) {
            /* The host runs the engine again once the port drains. */
            done += kr_run_flushes(e, budget - done);
            if (done == budget) {
                /* Flushes may be left: they need no room, only a run. */
                e->ops->kick(e->opaque);
            }
            break;
        }
        qp = e->ready;
        e->qp_visits++;
        if (kr_qp_step(qp)) {
            done++;
            /* The step may have taken it off (reset): then it moved on. */
            if (e->ready == qp) {
                e->ready = qp->rnext;
            }
        } else {
            kr_qp_unready(qp);
        }
    }
    /* Drop the idle QPs at the front so that true means work. */
    while (e->ready && !kr_qp_has_work(e->ready)) {
        kr_qp_unready(e->ready);
    }
    return e->ready != NULL;
}

uint64_t kite_roce_qp_visits(const KiteRoce *e)
{
    return e->qp_visits;
}

void kite_roce_qp_timer(KiteRoceQp *qp)
{
    KiteRoce *e = qp->e;

    qp->timer_deadline = KITE_ROCE_TIMER_OFF;
    if (qp->state != KITE_QPS_RTS && qp->state != KITE_QPS_SQD &&
        qp->state != KITE_QPS_SQE) {
        return;
    }
    kr_comp_timer(qp);
    if (kr_qp_has_work(qp)) {
        kr_qp_ready(qp);
        e->ops->kick(e->opaque);
    }
}
