/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 transport engine: the completer. Handles ACKs, NAKs, READ
 * responses and atomic ACKs on the requester side, completes SQ WQEs in
 * order, and drives go-back-N retransmission (timeouts, sequence NAKs,
 * implicit NAKs, RNR NAKs) with the retry counters.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "kite_roce_int.h"

/* RNR NAK timer codes in microseconds (roce-facts.md section 2.3). */
static const uint32_t kr_rnr_us[32] = {
    655360, 10, 20, 30, 40, 60, 80, 120, 160, 240,
    320, 480, 640, 960, 1280, 1920, 2560, 3840, 5120, 7680,
    10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760,
    327680, 491520,
};

static bool kr_is_rd_atomic(uint8_t op)
{
    return op == KITE_WQE_READ || op == KITE_WQE_CMP_SWP ||
           op == KITE_WQE_FETCH_ADD;
}

static void kr_timer_set(KiteRoceQp *qp, uint64_t deadline)
{
    KiteRoce *e = qp->e;

    qp->timer_deadline = deadline;
    e->ops->timer_mod(e->opaque, qp->cfg.host, deadline);
}

/*
 * The early retransmission's RTO (KR_EARLY_*), doubled per early
 * retransmission since the last progress; 0: none (not below @full).
 */
static uint64_t kr_early_rto(const KiteRoceQp *qp, uint64_t full)
{
    uint64_t rto;

    if (!qp->srtt_ns) {
        return 0;
    }
    rto = qp->srtt_ns + KR_EARLY_RTTVAR_K * qp->rttvar_ns;
    if (rto < KR_EARLY_MIN_NS) {
        rto = KR_EARLY_MIN_NS;
    }
    if (rto >= full || qp->early_shift >= 32 ||
        rto << qp->early_shift >= full) {
        return 0;
    }
    return rto << qp->early_shift;
}

void kr_comp_arm_timer(KiteRoceQp *qp)
{
    KiteRoce *e = qp->e;
    uint64_t full, rto;

    if (!qp->timeout) {
        return;
    }
    full = KR_TIMEOUT_BASE_NS << qp->timeout;
    rto = kr_early_rto(qp, full);
    qp->early_armed = rto != 0;
    kr_timer_set(qp, e->ops->now_ns(e->opaque) +
                 (qp->early_armed ? rto : full));
}

/* The timed PSN was acknowledged: one round-trip sample (RFC 6298). */
static void kr_comp_rtt_sample(KiteRoceQp *qp)
{
    KiteRoce *e = qp->e;
    uint64_t r, d;

    if (!qp->rtt_pending || kite_psn_cmp(qp->una_psn, qp->rtt_psn) <= 0) {
        return;
    }
    qp->rtt_pending = false;
    r = e->ops->now_ns(e->opaque) - qp->rtt_sent_ns;
    if (!qp->srtt_ns) {
        qp->srtt_ns = r ? r : 1;
        qp->rttvar_ns = r / 2;
        return;
    }
    d = r > qp->srtt_ns ? r - qp->srtt_ns : qp->srtt_ns - r;
    qp->rttvar_ns = (3 * qp->rttvar_ns + d) / 4;
    qp->srtt_ns = (7 * qp->srtt_ns + r) / 8;
    if (!qp->srtt_ns) {
        qp->srtt_ns = 1;
    }
}

void kr_comp_cancel_timer(KiteRoceQp *qp)
{
    if (qp->timer_deadline != KITE_ROCE_TIMER_OFF) {
        kr_timer_set(qp, KITE_ROCE_TIMER_OFF);
    }
}

static KrSqSlot *kr_head(KiteRoceQp *qp)
{
    if (qp->sq_ci == qp->sq_pi) {
        return NULL;
    }
    return &qp->sq[qp->sq_ci & (qp->sq_depth - 1)];
}

/* Keep the requester's position at or after the completer's. */
static void kr_comp_fixup(KiteRoceQp *qp)
{
    if ((int32_t)(qp->req_idx - qp->sq_ci) <= 0) {
        qp->req_idx = qp->sq_ci;
        if (kite_psn_cmp(qp->sq_psn, qp->una_psn) < 0) {
            qp->sq_psn = qp->una_psn;
        }
    }
}

/* Retire the head WQE with @status (CQE if signaled or an error). */
static void kr_comp_retire_head(KiteRoceQp *qp, KrSqSlot *s, uint8_t status)
{
    bool signaled;

    signaled = qp->cfg.sig_all || (s->flags & KITE_WQE_F_SIGNALED);
    if (s->started) {
        uint32_t end = (s->first_psn + s->npsn) & KITE_PSN_MASK;

        if (kr_is_rd_atomic(s->opcode) && qp->rd_inflight) {
            qp->rd_inflight--;
        }
        if (kite_psn_cmp(end, qp->una_psn) > 0) {
            qp->una_psn = end;
        }
    }
    if (status || signaled) {
        kr_post_cqe(qp, false, qp->sq_ci, kr_cqe_opcode(s->opcode), status,
                    s->len, NULL, 0);
    }
    memset(s, 0, sizeof(*s));
    kr_sq_uncache(qp, qp->sq_ci, false);
    qp->sq_ci++;
    kr_comp_fixup(qp);
}

/*
 * Complete the head WQE with @status, and after a success the memory
 * operations behind it that have been executed: they wait for nothing but
 * their turn.
 */
void kr_comp_complete_head(KiteRoceQp *qp, uint8_t status)
{
    KrSqSlot *s = kr_head(qp);

    if (!s) {
        return;
    }
    kr_comp_retire_head(qp, s, status);
    while (status == KITE_CQE_SUCCESS && qp->state != KITE_QPS_ERR &&
           (s = kr_head(qp)) && s->started && kr_is_mem_op(s->opcode)) {
        kr_comp_retire_head(qp, s, KITE_CQE_SUCCESS);
    }
}

/* The head WQE fails with @status: the QP goes to ERR and flushes. */
static void kr_comp_fail(KiteRoceQp *qp, uint8_t status)
{
    kr_qp_error(qp, KITE_ROCE_EVT_STATE);
    kr_comp_complete_head(qp, status);
    kr_flush(qp);
}

void kr_comp_req_error(KiteRoceQp *qp)
{
    KrSqSlot *s = kr_head(qp);

    if (s) {
        kr_comp_fail(qp, s->status ? s->status : KITE_CQE_GENERAL_ERR);
    }
}

void kr_comp_uc_done(KiteRoceQp *qp)
{
    while (qp->sq_ci != qp->req_idx && qp->state != KITE_QPS_ERR) {
        kr_comp_complete_head(qp, KITE_CQE_SUCCESS);
    }
}

/* ---- congestion window (KR_CWND_*) ---------------------------------- */

void kr_cwnd_reset(KiteRoceQp *qp)
{
    qp->cwnd = KR_CWND_INIT;
    qp->ssthresh = KR_MAX_UNACKED_PSNS;
    qp->cwnd_acc = 0;
}

/* @acked more PSNs were acknowledged. */
static void kr_cwnd_grow(KiteRoceQp *qp, uint32_t acked)
{
    if (qp->cwnd < qp->ssthresh) {
        qp->cwnd += acked;
        if (qp->cwnd > qp->ssthresh) {
            qp->cwnd = qp->ssthresh;
        }
        return;
    }
    qp->cwnd_acc += acked;
    while (qp->cwnd_acc >= qp->cwnd && qp->cwnd < KR_MAX_UNACKED_PSNS) {
        qp->cwnd_acc -= qp->cwnd;
        qp->cwnd++;
    }
    if (qp->cwnd >= KR_MAX_UNACKED_PSNS) {
        qp->cwnd = KR_MAX_UNACKED_PSNS;
        qp->cwnd_acc = 0;
    }
}

/* Half the PSNs in flight, the slow-start threshold after a congestion sign. */
static uint32_t kr_cwnd_half_flight(const KiteRoceQp *qp)
{
    uint32_t flight = (qp->hi_psn - qp->una_psn) & KITE_PSN_MASK;

    if (flight > KR_MAX_UNACKED_PSNS) {
        flight = KR_MAX_UNACKED_PSNS;
    }
    flight /= 2;
    return flight < KR_CWND_MIN_SSTHRESH ? KR_CWND_MIN_SSTHRESH : flight;
}

/* A PSN sequence NAK: the window halves. */
static void kr_cwnd_nak(KiteRoceQp *qp)
{
    qp->ssthresh = kr_cwnd_half_flight(qp);
    qp->cwnd = qp->ssthresh;
    qp->cwnd_acc = 0;
}

/* A retransmission timeout: slow start again from the loss window. */
static void kr_cwnd_timeout(KiteRoceQp *qp)
{
    qp->ssthresh = kr_cwnd_half_flight(qp);
    qp->cwnd = KR_CWND_LOSS;
    qp->cwnd_acc = 0;
}

/* Go back to the oldest unacknowledged PSN and resend from there. */
void kr_comp_rewind(KiteRoceQp *qp)
{
    qp->req_idx = qp->sq_ci;
    qp->sq_psn = qp->una_psn;
    /* An ACK may now be for either copy (Karn): no sample. */
    qp->rtt_pending = false;
}

/*
 * A READ or atomic before the PSN a response acknowledges has had no
 * response (an implicit NAK), or a READ response skipped a PSN: go back
 * at once, but only once until the next progress (the timer covers a
 * lost retry), so a stream of such responses cannot cause a storm of
 * retransmissions.
 */
static void kr_comp_early_retry(KiteRoceQp *qp)
{
    if (!qp->gap_retried) {
        qp->gap_retried = true;
        kr_comp_rewind(qp);
    }
}

static void kr_comp_progress(KiteRoceQp *qp)
{
    qp->retry_left = qp->retry_cnt;
    qp->tx_stall_ns = 0;
    qp->rnr_left = qp->rnr_retry;
    qp->gap_retried = false;
    qp->rnr_nak_seen = false;
    qp->early_shift = 0;
    if (qp->rnr_wait) {
        return;
    }
    if (kite_psn_cmp(qp->una_psn, qp->hi_psn) < 0) {
        kr_comp_arm_timer(qp);
    } else {
        kr_comp_cancel_timer(qp);
    }
}

/*
 * Acknowledge every PSN up to and including @psn: complete SEND/WRITE
 * WQEs that end there. false: a READ or atomic at or before @psn has no
 * response yet (an implicit NAK).
 */
static bool kr_comp_ack(KiteRoceQp *qp, uint32_t psn, bool *progress)
{
    KrSqSlot *s;

    while ((s = kr_head(qp)) && s->started && qp->state != KITE_QPS_ERR) {
        uint32_t last = (s->first_psn + s->npsn - 1) & KITE_PSN_MASK;

        if (kr_is_rd_atomic(s->opcode)) {
            return kite_psn_cmp(psn, s->first_psn) < 0;
        }
        if (kite_psn_cmp(psn, last) >= 0) {
            kr_comp_complete_head(qp, KITE_CQE_SUCCESS);
            *progress = true;
            continue;
        }
        if (kite_psn_cmp(psn, qp->una_psn) >= 0) {
            qp->una_psn = (psn + 1) & KITE_PSN_MASK;
            *progress = true;
        }
        break;
    }
    return true;
}

static uint8_t kr_nak_status(uint8_t syn)
{
    switch (syn) {
    case KITE_AETH_NAK_INV_REQ:
        return KITE_CQE_REM_INV_REQ_ERR;
    case KITE_AETH_NAK_REM_ACC:
        return KITE_CQE_REM_ACCESS_ERR;
    default:
        return KITE_CQE_REM_OP_ERR;
    }
}

static void kr_comp_aeth(KiteRoceQp *qp, const struct kite_roce_pkt *p,
                         bool *progress)
{
    KiteRoce *e = qp->e;
    uint8_t syn = p->aeth_syndrome;
    uint32_t psn = p->psn;
    KrSqSlot *s;

    switch (KITE_AETH_TYPE(syn)) {
    case KITE_AETH_TYPE_ACK:
        if (kite_psn_cmp(psn, qp->una_psn) < 0) {
            return;
        }
        if (!kr_comp_ack(qp, psn, progress)) {
            kr_comp_early_retry(qp);
        }
        return;
    case KITE_AETH_TYPE_RNR:
        qp->cnt.rnr_naks_rcvd++;
        e->cnt.rnr_naks_rcvd++;
        if (kite_psn_cmp(psn, qp->una_psn) < 0) {
            return;
        }
        if (psn != qp->una_psn &&
            !kr_comp_ack(qp, (psn - 1) & KITE_PSN_MASK, progress)) {
            kr_comp_early_retry(qp);
            return;
        }
        s = kr_head(qp);
        if (!s || !s->started || qp->state == KITE_QPS_ERR) {
            return;
        }
        if (!qp->rnr_left) {
            kr_comp_fail(qp, KITE_CQE_RNR_RETRY_EXC_ERR);
            return;
        }
        if (qp->rnr_retry != 7) {
            qp->rnr_left--;
        }
        *progress = false;
        qp->rnr_wait = true;
        qp->rnr_nak_seen = true;
        qp->rnr_nak_psn = psn;
        kr_comp_rewind(qp);
        qp->early_armed = false;
        kr_timer_set(qp, e->ops->now_ns(e->opaque) +
                     (uint64_t)kr_rnr_us[syn & 0x1f] * 1000);
        return;
    case KITE_AETH_TYPE_NAK:
        qp->cnt.naks_rcvd++;
        e->cnt.naks_rcvd++;
        if (kite_psn_cmp(psn, qp->una_psn) < 0) {
            return;
        }
        if (psn != qp->una_psn &&
            !kr_comp_ack(qp, (psn - 1) & KITE_PSN_MASK, progress)) {
            kr_comp_early_retry(qp);
            return;
        }
        if (qp->state == KITE_QPS_ERR) {
            return;
        }
        if (syn == KITE_AETH_NAK_PSN_SEQ) {
            /*
             * rxe answers the packets that followed one it RNR-NAK'd with
             * a PSN-sequence NAK for that same PSN (its responder does not
             * go silent after an RNR NAK). Until something is acknowledged
             * that NAK is part of the RNR event, whose timer resends from
             * there: it neither rewinds again nor uses up retry_cnt, so a
             * peer that is not ready for a while fails only on rnr_retry.
             */
            if (qp->rnr_nak_seen && psn == qp->rnr_nak_psn && !*progress) {
                return;
            }
            if (!*progress) {
                if (!qp->retry_left) {
                    kr_comp_fail(qp, KITE_CQE_RETRY_EXC_ERR);
                    return;
                }
                qp->retry_left--;
            }
            kr_cwnd_nak(qp);
            kr_comp_rewind(qp);
            return;
        }
        s = kr_head(qp);
        if (!s || !s->started) {
            return;
        }
        kr_comp_fail(qp, kr_nak_status(syn));
        return;
    default:
        e->cnt.rx_dropped++;
        return;
    }
}

/*
 * A READ response (@read) or atomic ACK at @psn answers the oldest started
 * READ or atomic WQE, and so acknowledges every SEND/WRITE before it:
 * complete those, then return that WQE's slot when it is of the kind the
 * response answers. NULL otherwise: *@drop says whether the caller drops
 * the packet (true) or the packet was acted on (an implicit NAK of a WQE
 * of the other kind, or the QP went to ERR).
 */
static KrSqSlot *kr_comp_retire_to(KiteRoceQp *qp, uint32_t psn, bool read,
                                   bool *progress, bool *drop)
{
    KrSqSlot *s;

    *drop = true;
    for (;;) {
        s = kr_head(qp);
        if (!s || !s->started) {
            return NULL;
        }
        if (kr_is_rd_atomic(s->opcode)) {
            if ((s->opcode == KITE_WQE_READ) == read) {
                return s;
            }
            if (kite_psn_cmp(psn, s->first_psn) > 0) {
                kr_comp_early_retry(qp);
                *drop = false;
            }
            return NULL;
        }
        if (kite_psn_cmp(psn, (s->first_psn + s->npsn - 1) &
                         KITE_PSN_MASK) <= 0) {
            return NULL;
        }
        kr_comp_complete_head(qp, KITE_CQE_SUCCESS);
        *progress = true;
        if (qp->state == KITE_QPS_ERR) {
            *drop = false;
            return NULL;
        }
    }
}

static void kr_comp_read_resp(KiteRoceQp *qp, const struct kite_roce_pkt *p,
                              bool *progress)
{
    KiteRoce *e = qp->e;
    uint8_t op = p->opcode & 0x1f;
    uint32_t psn = p->psn, exp, rem, want;
    bool first, last, drop;
    const KrSendWqe *w;
    KrSqSlot *s;
    uint8_t st;

    s = kr_comp_retire_to(qp, psn, true, progress, &drop);
    if (!s) {
        if (drop) {
            goto drop;
        }
        return;
    }
    exp = (s->first_psn + s->rd_off / qp->mtu) & KITE_PSN_MASK;
    if (psn != exp) {
        /* A gap in the responses: retry at once, once per progress. */
        if (kite_psn_cmp(psn, exp) > 0 &&
            kite_psn_cmp(psn, (s->first_psn + s->npsn) & KITE_PSN_MASK) < 0) {
            kr_comp_early_retry(qp);
        }
        goto drop;
    }
    rem = s->len - s->rd_off;
    want = rem < qp->mtu ? rem : qp->mtu;
    first = op == KITE_OP_READ_RESP_FIRST || op == KITE_OP_READ_RESP_ONLY;
    last = op == KITE_OP_READ_RESP_LAST || op == KITE_OP_READ_RESP_ONLY;
    if (last != (rem <= qp->mtu) || first != (s->rd_off == 0) ||
        p->paylen != want) {
        goto drop;
    }
    if (want) {
        w = kr_sq_load(qp, qp->sq_ci, &st);
        if (!w) {
            kr_qp_error(qp, KITE_EVT_QP_FATAL);
            kr_flush(qp);
            return;
        }
        if (st || w->opcode != KITE_WQE_READ || w->len != s->len) {
            kr_comp_fail(qp, st ? st : KITE_CQE_LOC_QP_OP_ERR);
            return;
        }
        /* Written from the frame in place (kr_sge_copy only reads it). */
        st = kr_sge_copy(qp, w, s->rd_off, (uint8_t *)p->payload, want,
                         true);
        if (st) {
            kr_comp_fail(qp, st);
            return;
        }
    }
    s->rd_off += want;
    qp->una_psn = (psn + 1) & KITE_PSN_MASK;
    *progress = true;
    if (last) {
        kr_comp_complete_head(qp, KITE_CQE_SUCCESS);
    }
    return;
drop:
    e->cnt.rx_dropped++;
}

static void kr_comp_atomic_ack(KiteRoceQp *qp, const struct kite_roce_pkt *p,
                               bool *progress)
{
    KiteRoce *e = qp->e;
    uint32_t psn = p->psn;
    __le64 orig;
    const KrSendWqe *w;
    KrSqSlot *s;
    uint8_t st;
    bool drop;

    s = kr_comp_retire_to(qp, psn, false, progress, &drop);
    if (!s) {
        if (drop) {
            goto drop;
        }
        return;
    }
    if (psn != s->first_psn) {
        if (kite_psn_cmp(psn, s->first_psn) > 0) {
            kr_comp_early_retry(qp);
            return;
        }
        goto drop;
    }
    w = kr_sq_load(qp, qp->sq_ci, &st);
    if (!w) {
        kr_qp_error(qp, KITE_EVT_QP_FATAL);
        kr_flush(qp);
        return;
    }
    if (st || w->opcode != s->opcode) {
        kr_comp_fail(qp, st ? st : KITE_CQE_LOC_QP_OP_ERR);
        return;
    }
    kr_set_le64(&orig, p->atomic_orig);
    st = kr_sge_copy(qp, w, 0, (uint8_t *)&orig, sizeof(orig), true);
    if (st) {
        kr_comp_fail(qp, st);
        return;
    }
    qp->una_psn = (psn + 1) & KITE_PSN_MASK;
    *progress = true;
    kr_comp_complete_head(qp, KITE_CQE_SUCCESS);
    return;
drop:
    e->cnt.rx_dropped++;
}

void kr_comp_rx(KiteRoceQp *qp, const struct kite_roce_pkt *p)
{
    KiteRoce *e = qp->e;
    uint32_t una = qp->una_psn;
    bool progress = false;

    if (qp->cfg.type != KITE_QPT_RC ||
        kite_psn_cmp(p->psn, qp->hi_psn) >= 0) {
        e->cnt.rx_dropped++;
        return;
    }
    switch (p->opcode & 0x1f) {
    case KITE_OP_ACK:
        kr_comp_aeth(qp, p, &progress);
        break;
    case KITE_OP_READ_RESP_FIRST:
    case KITE_OP_READ_RESP_MIDDLE:
    case KITE_OP_READ_RESP_LAST:
    case KITE_OP_READ_RESP_ONLY:
        if ((p->opcode & 0x1f) != KITE_OP_READ_RESP_MIDDLE &&
            KITE_AETH_TYPE(p->aeth_syndrome) != KITE_AETH_TYPE_ACK) {
            /* A NAK cannot ride on a read response. */
            e->cnt.rx_dropped++;
            return;
        }
        kr_comp_read_resp(qp, p, &progress);
        break;
    case KITE_OP_ATOMIC_ACK:
        kr_comp_atomic_ack(qp, p, &progress);
        break;
    default:
        e->cnt.rx_dropped++;
        return;
    }
    if (qp->state == KITE_QPS_ERR) {
        return;
    }
    kr_comp_fixup(qp);
    if (progress) {
        if (kite_psn_cmp(qp->una_psn, una) > 0) {
            kr_cwnd_grow(qp, (qp->una_psn - una) & KITE_PSN_MASK);
            kr_comp_rtt_sample(qp);
        }
        kr_comp_progress(qp);
    }
}

/*
 * A NIC times the packets it has sent: while the port cannot take a frame
 * the PSNs behind it have not left (or wait in the host's queue), so
 * their timeout uses no retry, rewinds nothing and keeps the window.
 * Only up to KR_TX_STALL_MAX_NS without progress, so that a port blocked
 * for good still ends the QP.
 */
static bool kr_comp_tx_stalled(KiteRoceQp *qp)
{
    KiteRoce *e = qp->e;

    if (!e->ops->tx_ready || e->ops->tx_ready(e->opaque) ||
        qp->tx_stall_ns >= KR_TX_STALL_MAX_NS) {
        return false;
    }
    qp->tx_stall_ns += KR_TIMEOUT_BASE_NS << qp->timeout;
    return true;
}

void kr_comp_timer(KiteRoceQp *qp)
{
    KiteRoce *e = qp->e;

    if (qp->rnr_wait) {
        qp->rnr_wait = false;
        kr_comp_rewind(qp);
        kr_comp_arm_timer(qp);
        return;
    }
    if (kite_psn_cmp(qp->una_psn, qp->hi_psn) >= 0) {
        return;
    }
    if (qp->early_armed) {
        /*
         * Early retransmission (KR_EARLY_*): go back N as a NAK would
         * (unless the port holds the PSNs back), then the local ACK
         * timeout.
         */
        qp->early_armed = false;
        qp->early_shift++;
        if (!e->ops->tx_ready || e->ops->tx_ready(e->opaque)) {
            qp->cnt.early_retransmits++;
            e->cnt.early_retransmits++;
            kr_cwnd_nak(qp);
            kr_comp_rewind(qp);
        }
        kr_comp_arm_timer(qp);
        return;
    }
    if (kr_comp_tx_stalled(qp)) {
        kr_comp_arm_timer(qp);
        return;
    }
    qp->cnt.timeouts++;
    e->cnt.timeouts++;
    if (!qp->retry_left) {
        kr_comp_fail(qp, KITE_CQE_RETRY_EXC_ERR);
        return;
    }
    qp->retry_left--;
    kr_cwnd_timeout(qp);
    kr_comp_rewind(qp);
    /*
     * The timer runs on from here, not from the resend: a full port
     * delays that, and nothing else would time the QP (also after an RNR
     * wait, above).
     */
    kr_comp_arm_timer(qp);
}
