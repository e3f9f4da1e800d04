/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 transport engine: the requester. Parses SQ WQEs
 * (Documentation/kite/hardware.rst, "Send queue"), gathers their data
 * through the MR keys, segments messages at the path MTU and sends the
 * request packets within the PSN window and the READ/atomic limit.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "kite_roce_crc.h"
#include "kite_roce_int.h"

uint8_t kr_cqe_opcode(uint8_t wqe_opcode)
{
    switch (wqe_opcode) {
    case KITE_WQE_WRITE:
    case KITE_WQE_WRITE_IMM:
        return KITE_CQE_WRITE;
    case KITE_WQE_READ:
        return KITE_CQE_READ;
    case KITE_WQE_CMP_SWP:
        return KITE_CQE_CMP_SWP;
    case KITE_WQE_FETCH_ADD:
        return KITE_CQE_FETCH_ADD;
    case KITE_WQE_LOCAL_INV:
        return KITE_CQE_LOCAL_INV;
    case KITE_WQE_REG_MR:
        return KITE_CQE_REG_MR;
    case KITE_WQE_BIND_MW:
        return KITE_CQE_BIND_MW;
    default:
        return KITE_CQE_SEND;
    }
}

static bool kr_is_rd_atomic(uint8_t op)
{
    return op == KITE_WQE_READ || op == KITE_WQE_CMP_SWP ||
           op == KITE_WQE_FETCH_ADD;
}

/* The segment an opcode puts between the WQE header and its data. */
enum {
    KR_SEG_NONE,
    KR_SEG_RADDR,               /* struct kite_wqe_raddr */
    KR_SEG_ATOMIC,              /* struct kite_wqe_atomic */
    KR_SEG_UD,                  /* struct kite_wqe_ud */
};

/* Every opcode's header and segment fit the smallest stride. */
static_assert(KITE_SQ_WQE_FIXED <= 1u << KITE_SQ_MIN_LOG_STRIDE,
              "SQ WQE fixed part exceeds the smallest stride");

/*
 * Decode the segment @seg of a WQE at @b into @w; returns its size.
 * @b holds a whole stride, which always has room for the segment.
 */
static uint32_t kr_sq_seg(const uint8_t *b, int seg, KrSendWqe *w)
{
    struct kite_wqe_raddr r;
    struct kite_wqe_atomic a;
    struct kite_wqe_ud ud;

    switch (seg) {
    case KR_SEG_RADDR:
        memcpy(&r, b, sizeof(r));
        w->raddr = kr_le64(&r.remote_addr);
        w->rkey = kr_le32(&r.rkey);
        return sizeof(r);
    case KR_SEG_ATOMIC:
        memcpy(&a, b, sizeof(a));
        w->raddr = kr_le64(&a.remote_addr);
        w->rkey = kr_le32(&a.rkey);
        w->swap_add = kr_le64(&a.swap_add);
        w->compare = kr_le64(&a.compare);
        return sizeof(a);
    case KR_SEG_UD:
        memcpy(&ud, b, sizeof(ud));
        w->av = ud.av;
        w->remote_qpn = kr_le32(&ud.remote_qpn) & KITE_QPN_MASK;
        w->remote_qkey = kr_le32(&ud.remote_qkey);
        return sizeof(ud);
    default:
        return 0;
    }
}

/*
 * A memory-management WQE at @b (the whole stride): the host executes it
 * through ops->mem_op, so the engine checks only what is its own (the QP
 * type allows the opcode, no data, the segment fits the stride) and keeps
 * the bytes of header and segment for the call. Returns the CQE status.
 */
static uint8_t kr_sq_parse_mem(KiteRoceQp *qp, const uint8_t *b,
                               KrSendWqe *w)
{
    uint32_t len = sizeof(struct kite_sq_wqe_hdr);
    uint8_t type = qp->cfg.type;
    bool ok;

    switch (w->opcode) {
    case KITE_WQE_REG_MR:
        len += sizeof(struct kite_wqe_reg_mr);
        ok = type != KITE_QPT_GSI;
        break;
    case KITE_WQE_BIND_MW:
        len += sizeof(struct kite_wqe_bind_mw);
        ok = type == KITE_QPT_RC || type == KITE_QPT_UC;
        break;
    default:
        ok = type != KITE_QPT_GSI;
        break;
    }
    if (!ok || !qp->e->ops->mem_op || w->num_sge || w->inline_len ||
        (w->flags & KITE_WQE_F_INLINE) || len > qp->sq_stride) {
        return KITE_CQE_LOC_QP_OP_ERR;
    }
    memcpy(w->mem, b, len);
    w->mem_len = len;
    return KITE_CQE_SUCCESS;
}

static_assert(sizeof(struct kite_wqe_bind_mw) <=
              sizeof(struct kite_wqe_reg_mr), "KR_MEM_WQE_MAX too small");

/*
 * Read and parse SQ WQE @idx into @w. false: the ring could not be read.
 * *@status is KITE_CQE_SUCCESS or the error the WQE completes with.
 */
static bool kr_sq_parse(KiteRoceQp *qp, uint32_t idx, KrSendWqe *w,
                        uint8_t *status)
{
    KiteRoce *e = qp->e;
    uint8_t b[1u << KITE_SQ_MAX_LOG_STRIDE];
    struct kite_sq_wqe_hdr hdr;
    struct kite_sge sge;
    uint32_t stride = qp->sq_stride;
    uint32_t off, i;
    uint64_t total = 0;
    int seg = KR_SEG_NONE;
    bool rc = qp->cfg.type == KITE_QPT_RC;
    bool uc = qp->cfg.type == KITE_QPT_UC;

    *status = KITE_CQE_SUCCESS;
    if (!e->ops->wqe_read(e->opaque, qp->cfg.host, false,
                          idx & (qp->sq_depth - 1), b, stride)) {
        return false;
    }
    memset(w, 0, offsetof(KrSendWqe, sge));
    memcpy(&hdr, b, sizeof(hdr));
    w->opcode = hdr.opcode;
    w->flags = hdr.flags;
    w->num_sge = hdr.num_sge;
    w->inline_len = kr_le16(&hdr.inline_len);
    memcpy(w->imm, &hdr.imm_data, sizeof(w->imm));

    switch (w->opcode) {
    case KITE_WQE_SEND:
    case KITE_WQE_SEND_IMM:
        if (!rc && !uc) {
            if (!e->ops->gid_get) {
                /* The host cannot resolve source GIDs: no UD sends. */
                *status = KITE_CQE_LOC_QP_OP_ERR;
                return true;
            }
            seg = KR_SEG_UD;
        }
        break;
    case KITE_WQE_WRITE:
    case KITE_WQE_WRITE_IMM:
        if (!rc && !uc) {
            *status = KITE_CQE_LOC_QP_OP_ERR;
            return true;
        }
        seg = KR_SEG_RADDR;
        break;
    case KITE_WQE_SEND_INV:
        if (!rc) {
            *status = KITE_CQE_LOC_QP_OP_ERR;
            return true;
        }
        w->rkey = kr_le32(&hdr.imm_data);
        break;
    case KITE_WQE_LOCAL_INV:
    case KITE_WQE_REG_MR:
    case KITE_WQE_BIND_MW:
        *status = kr_sq_parse_mem(qp, b, w);
        return true;
    case KITE_WQE_READ:
    case KITE_WQE_CMP_SWP:
    case KITE_WQE_FETCH_ADD:
        if (!rc || (w->flags & KITE_WQE_F_INLINE)) {
            *status = KITE_CQE_LOC_QP_OP_ERR;
            return true;
        }
        seg = w->opcode == KITE_WQE_READ ? KR_SEG_RADDR : KR_SEG_ATOMIC;
        break;
    default:
        *status = KITE_CQE_LOC_QP_OP_ERR;
        return true;
    }
    off = sizeof(hdr);
    off += kr_sq_seg(b + off, seg, w);
    if (w->flags & KITE_WQE_F_INLINE) {
        if (w->num_sge || w->inline_len > KR_MAX_INLINE ||
            off + w->inline_len > stride) {
            *status = KITE_CQE_LOC_QP_OP_ERR;
            return true;
        }
        memcpy(w->inl, b + off, w->inline_len);
        w->len = w->inline_len;
        return true;
    }
    if (w->num_sge > KR_MAX_SGE || off + w->num_sge * sizeof(sge) > stride) {
        *status = KITE_CQE_LOC_QP_OP_ERR;
        return true;
    }
    for (i = 0; i < w->num_sge; i++) {
        memcpy(&sge, b + off + i * sizeof(sge), sizeof(sge));
        w->sge[i].addr = kr_le64(&sge.addr);
        w->sge[i].length = kr_le32(&sge.length);
        w->sge[i].lkey = kr_le32(&sge.lkey);
        total += w->sge[i].length;
    }
    if (w->opcode == KITE_WQE_CMP_SWP || w->opcode == KITE_WQE_FETCH_ADD) {
        if (w->num_sge != 1 || w->sge[0].length != KR_ATOMIC_SIZE) {
            *status = KITE_CQE_LOC_QP_OP_ERR;
            return true;
        }
    }
    if (total > KITE_MAX_MSG_SIZE) {
        *status = KITE_CQE_LOC_LEN_ERR;
        return true;
    }
    w->len = (uint32_t)total;
    return true;
}

/*
 * A WQE may not change from its doorbell until its slot is free again, so
 * the parsed form of the WQEs the requester and the completer work on is
 * kept (two entries) instead of reading the ring for every packet. The
 * result points into that cache: it stays valid until the next
 * kr_sq_load() (callers hold one at a time). NULL: the ring could not be
 * read. A WQE that fails to parse (*@status not success) is not kept.
 */
const KrSendWqe *kr_sq_load(KiteRoceQp *qp, uint32_t idx, uint8_t *status)
{
    unsigned i;

    for (i = 0; i < 2; i++) {
        if (qp->wcache_valid[i] && qp->wcache_idx[i] == idx) {
            *status = KITE_CQE_SUCCESS;
            return &qp->wcache[i];
        }
    }
    i = qp->wcache_next;
    qp->wcache_valid[i] = false;
    if (!kr_sq_parse(qp, idx, &qp->wcache[i], status)) {
        return NULL;
    }
    if (*status == KITE_CQE_SUCCESS) {
        qp->wcache_next ^= 1;
        qp->wcache_idx[i] = idx;
        qp->wcache_valid[i] = true;
    }
    return &qp->wcache[i];
}

/* Forget the parsed WQE @idx (or all of them): its slot is free. */
void kr_sq_uncache(KiteRoceQp *qp, uint32_t idx, bool all)
{
    unsigned i;

    for (i = 0; i < 2; i++) {
        if (all || qp->wcache_idx[i] == idx) {
            qp->wcache_valid[i] = false;
        }
    }
}

/*
 * Copy @len bytes at message offset @off of @w between its SGEs and @buf
 * (@write: into the SGEs, needing local write access); with @crc (a
 * read), through ops->mem_read_crc, which advances the raw CRC state
 * @crc over the bytes read. Returns a CQE status.
 */
static uint8_t kr_sge_xfer(KiteRoceQp *qp, const KrSendWqe *w, uint32_t off,
                           uint8_t *buf, uint32_t len, bool write,
                           uint32_t *crc)
{
    KiteRoce *e = qp->e;
    uint32_t i;

    if (w->flags & KITE_WQE_F_INLINE) {
        if (write || (uint64_t)off + len > w->inline_len) {
            return KITE_CQE_LOC_LEN_ERR;
        }
        memcpy(buf, w->inl + off, len);
        if (crc) {
            *crc = kite_roce_crc32(*crc, buf, len);
        }
        return KITE_CQE_SUCCESS;
    }
    for (i = 0; i < w->num_sge && len; i++) {
        uint32_t sl = w->sge[i].length, n;
        uint8_t st;

        if (off >= sl) {
            off -= sl;
            continue;
        }
        n = sl - off < len ? sl - off : len;
        st = crc ?
             e->ops->mem_read_crc(e->opaque, qp->cfg.host, qp->cfg.pdn,
                                  w->sge[i].lkey, 0, w->sge[i].addr + off,
                                  buf, n, crc) :
             e->ops->mem_rw(e->opaque, qp->cfg.host, qp->cfg.pdn,
                            w->sge[i].lkey,
                            write ? KITE_ACCESS_LOCAL_WRITE : 0,
                            w->sge[i].addr + off, buf, n, write);
        if (st != KITE_CQE_SUCCESS) {
            return st;
        }
        buf += n;
        len -= n;
        off = 0;
    }
    return len ? KITE_CQE_LOC_LEN_ERR : KITE_CQE_SUCCESS;
}

uint8_t kr_sge_copy(KiteRoceQp *qp, const KrSendWqe *w, uint32_t off,
                    uint8_t *buf, uint32_t len, bool write)
{
    return kr_sge_xfer(qp, w, off, buf, len, write, NULL);
}

/*
 * The payload of the frame kr_frame_begin() started: kr_sge_copy() of a
 * local read into @buf that also advances the raw CRC-32 state @crc over
 * the bytes read, through ops->mem_read_crc; a plain kr_sge_copy() when
 * the frame is CRCed whole (kr_transmit_end()).
 */
uint8_t kr_sge_read_crc(KiteRoceQp *qp, const KrSendWqe *w, uint32_t off,
                        uint8_t *buf, uint32_t len, uint32_t *crc)
{
    return kr_sge_xfer(qp, w, off, buf, len, false,
                       qp->e->frame_crc ? crc : NULL);
}

void kr_req_reset(KiteRoceQp *qp)
{
    qp->sq_psn = qp->una_psn = qp->hi_psn = 0;
    qp->rd_inflight = 0;
    qp->rnr_wait = false;
    qp->rnr_nak_seen = false;
    qp->gap_retried = false;
    qp->srtt_ns = qp->rttvar_ns = 0;
    qp->rtt_pending = false;
    qp->early_armed = false;
    qp->early_shift = 0;
    qp->retry_left = qp->retry_cnt;
    qp->rnr_left = qp->rnr_retry;
    qp->tx_stall_ns = 0;
    kr_cwnd_reset(qp);
}

/* PSNs sent and not yet acknowledged. */
static uint32_t kr_req_inflight(const KiteRoceQp *qp)
{
    return (qp->sq_psn - qp->una_psn) & KITE_PSN_MASK;
}

enum {
    KR_REQ_IDLE,                /* nothing to send, or blocked */
    KR_REQ_SEND,                /* a packet can go */
    KR_REQ_HEAD_ERR,            /* the head WQE failed locally */
    KR_REQ_FATAL,               /* the SQ ring cannot be read */
};

/* What the requester can do now; parses the next WQE's slot if needed. */
static int kr_req_state(KiteRoceQp *qp)
{
    KrSqSlot *s;
    bool rc = qp->cfg.type == KITE_QPT_RC;

    if (!kr_req_active(qp) || qp->rnr_wait || qp->req_idx == qp->sq_pi) {
        return KR_REQ_IDLE;
    }
    s = &qp->sq[qp->req_idx & (qp->sq_depth - 1)];
    if (!s->parsed) {
        const KrSendWqe *w;
        uint8_t st;

        w = kr_sq_load(qp, qp->req_idx, &st);
        if (!w) {
            return KR_REQ_FATAL;
        }
        s->parsed = true;
        s->opcode = w->opcode;
        s->flags = w->flags;
        s->len = w->len;
        s->status = st;
    }
    if (s->status) {
        return qp->req_idx == qp->sq_ci ? KR_REQ_HEAD_ERR : KR_REQ_IDLE;
    }
    if (rc && !kr_is_mem_op(s->opcode) &&
        kite_psn_cmp(qp->sq_psn, qp->una_psn) >= 0 &&
        kr_req_inflight(qp) >= qp->cwnd) {
        return KR_REQ_IDLE;
    }
    if (!s->started) {
        if (qp->state == KITE_QPS_SQD) {
            return KR_REQ_IDLE;
        }
        if ((s->flags & KITE_WQE_F_FENCE) && qp->rd_inflight) {
            return KR_REQ_IDLE;
        }
        if (kr_is_rd_atomic(s->opcode) &&
            qp->rd_inflight >= qp->max_rd_atomic) {
            return KR_REQ_IDLE;
        }
    }
    return KR_REQ_SEND;
}

bool kr_req_has_work(const KiteRoceQp *cqp)
{
    KiteRoceQp *qp = (KiteRoceQp *)cqp;

    return kr_req_state(qp) != KR_REQ_IDLE;
}

static void kr_req_sent(KiteRoceQp *qp, uint32_t next_psn)
{
    qp->sq_psn = next_psn & KITE_PSN_MASK;
    if (kite_psn_cmp(qp->sq_psn, qp->hi_psn) > 0) {
        qp->hi_psn = qp->sq_psn;
        /* Time one new PSN per round trip (never a resent one). */
        if (qp->cfg.type == KITE_QPT_RC && !qp->rtt_pending) {
            qp->rtt_pending = true;
            qp->rtt_psn = (qp->sq_psn - 1) & KITE_PSN_MASK;
            qp->rtt_sent_ns = qp->e->ops->now_ns(qp->e->opaque);
        }
    }
    if (qp->cfg.type != KITE_QPT_RC) {
        qp->una_psn = qp->sq_psn;
        qp->hi_psn = qp->sq_psn;
    } else if (qp->timer_deadline == KITE_ROCE_TIMER_OFF) {
        kr_comp_arm_timer(qp);
    }
}

bool kr_is_ud(const KiteRoceQp *qp)
{
    return qp->cfg.type == KITE_QPT_UD || qp->cfg.type == KITE_QPT_GSI;
}

/* Whether the 16-byte GID @gid is an IPv4-mapped IPv6 address. */
static bool kr_gid_v4mapped(const uint8_t *gid)
{
    static const uint8_t prefix[12] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
    };

    return !memcmp(gid, prefix, sizeof(prefix));
}

/*
 * Whether the address vector @av of a UD WQE (written by the QP's owner,
 * often a user process) holds what MODIFY_QP demands of an RC path: a
 * network type that matches the source GID @sgid and the destination
 * (IPv4-mapped for IPv4) and a 20-bit flow label. A multicast
 * destination (IPv6 ff00::/8, IPv4 224.0.0.0/4) is a group.
 */
static bool kr_ud_av_ok(const struct kite_av *av, const uint8_t *sgid)
{
    const uint8_t *dgid = av->dgid;
    bool v4 = av->net_type == KITE_NET_IPV4;

    if (av->net_type > KITE_NET_IPV6 || kr_gid_v4mapped(sgid) != v4 ||
        kr_gid_v4mapped(dgid) != v4 ||
        (kr_le32(&av->flow_label) & ~KITE_AV_FLOW_LABEL_MASK)) {
        return false;
    }
    return true;
}

/*
 * Send UD WQE @w (one SEND_ONLY packet with a DETH to the WQE's address
 * vector) and complete it. A message larger than the port's active MTU
 * completes successfully without being sent (IB C10-93.1.1).
 */
static void kr_req_ud(KiteRoceQp *qp, const KrSendWqe *w, KrSqSlot *s)
{
    KiteRoce *e = qp->e;
    struct kite_roce_pkt p;
    const struct kite_av *av = &w->av;
    uint32_t mtu = kite_mtu_bytes(kite_mtu_from_eth(e->eth_mtu));
    bool imm = w->opcode == KITE_WQE_SEND_IMM;
    uint8_t st;

    p = kite_roce_pkt_zero;
    if (!e->ops->gid_get ||
        !e->ops->gid_get(e->opaque, av->sgid_index, p.sgid) ||
        !kr_ud_av_ok(av, p.sgid)) {
        s->status = KITE_CQE_LOC_QP_OP_ERR;
        return;
    }
    if (w->len <= mtu) {
        uint8_t *data;

        /* A group's address follows from its GID, whatever the AV says. */
        if (kite_gid_is_mcast(av->dgid)) {
            kite_gid_mcast_mac(av->dgid, p.dmac);
        } else {
            memcpy(p.dmac, av->dmac, sizeof(p.dmac));
        }
        memcpy(p.smac, e->mac, sizeof(p.smac));
        memcpy(p.dgid, av->dgid, sizeof(p.dgid));
        p.ipv6 = av->net_type == KITE_NET_IPV6;
        p.hop_limit = av->hop_limit;
        p.traffic_class = av->traffic_class;
        p.flow_label = kr_le32(&av->flow_label);
        p.sport = kite_roce_udp_sport(qp->cfg.qpn, w->remote_qpn,
                                      p.flow_label);
        p.opcode = imm ? KITE_OP_UD_SEND_ONLY_IMM : KITE_OP_UD_SEND_ONLY;
        p.pkey = KITE_BTH_PKEY_DEFAULT;
        p.dqpn = w->remote_qpn;
        p.psn = qp->sq_psn;
        p.se = (w->flags & KITE_WQE_F_SOLICITED) != 0;
        if (qp->cfg.type == KITE_QPT_GSI) {
            p.deth_qkey = KITE_GSI_QKEY;
        } else if (w->remote_qkey & KITE_WQE_UD_QKEY_OWN) {
            p.deth_qkey = qp->qkey;
        } else {
            p.deth_qkey = w->remote_qkey;
        }
        p.deth_sqpn = qp->cfg.qpn;
        if (imm) {
            memcpy(p.imm, w->imm, 4);
        }
        data = kr_frame_payload(qp, &p);
        st = kr_sge_copy(qp, w, 0, data, w->len, false);
        if (st) {
            s->status = st;
            return;
        }
        p.payload = data;
        p.paylen = w->len;
        kr_transmit(qp, &p, false);
    }
    kr_req_sent(qp, qp->sq_psn + 1);
    qp->req_idx++;
    kr_comp_uc_done(qp);
}

/*
 * Execute memory-management WQE @w at req_idx through ops->mem_op, once:
 * after a rewind the requester passes an executed one again and only
 * steps over it. It completes when every earlier WQE has (the completer
 * retires executed ones as soon as they reach the head). A failure is the
 * WQE's local error: the QP fails on it when it reaches the head.
 */
static void kr_req_mem_op(KiteRoceQp *qp, const KrSendWqe *w, KrSqSlot *s)
{
    KiteRoce *e = qp->e;
    bool head = qp->req_idx == qp->sq_ci;
    uint8_t st;

    if (!s->started) {
        st = e->ops->mem_op(e->opaque, qp->cfg.host, qp->cfg.pdn, w->mem,
                            w->mem_len);
        if (st != KITE_CQE_SUCCESS) {
            s->status = st;
            return;
        }
        s->started = true;
        s->first_psn = qp->sq_psn;
        s->npsn = 0;
    }
    qp->req_idx++;
    if (qp->cfg.type != KITE_QPT_RC) {
        kr_comp_uc_done(qp);
    } else if (head) {
        kr_comp_complete_head(qp, KITE_CQE_SUCCESS);
    }
}

/* Send one request packet of the WQE at req_idx. */
bool kr_req_step(KiteRoceQp *qp)
{
    struct kite_roce_pkt p;
    KrSqSlot *s;
    const KrSendWqe *w;
    uint8_t *data;
    uint8_t st, tr = qp->cfg.type == KITE_QPT_RC ? KITE_BTH_RC : KITE_BTH_UC;
    uint32_t k, n, off, plen, crc;
    bool retx, last;

    switch (kr_req_state(qp)) {
    case KR_REQ_IDLE:
        return false;
    case KR_REQ_FATAL:
        kr_qp_error(qp, KITE_EVT_QP_FATAL);
        kr_flush(qp);
        return true;
    case KR_REQ_HEAD_ERR:
        kr_comp_req_error(qp);
        return true;
    default:
        break;
    }
    s = &qp->sq[qp->req_idx & (qp->sq_depth - 1)];
    w = kr_sq_load(qp, qp->req_idx, &st);
    if (!w) {
        kr_qp_error(qp, KITE_EVT_QP_FATAL);
        kr_flush(qp);
        return true;
    }
    if (st || w->opcode != s->opcode || w->len != s->len) {
        /* The WQE changed under us: a malformed post. */
        s->status = st ? st : KITE_CQE_LOC_QP_OP_ERR;
        return true;
    }
    if (kr_is_mem_op(w->opcode)) {
        kr_req_mem_op(qp, w, s);
        return true;
    }
    if (!s->started && w->opcode == KITE_WQE_READ &&
        kite_roce_npkts(w->len, qp->mtu) > KR_MAX_READ_PSNS) {
        /* Its responses would not fit in the PSN window-> */
        s->status = KITE_CQE_LOC_LEN_ERR;
        return true;
    }
    if (!s->started) {
        s->started = true;
        s->first_psn = qp->sq_psn;
        s->rd_off = 0;
        switch (w->opcode) {
        case KITE_WQE_CMP_SWP:
        case KITE_WQE_FETCH_ADD:
            s->npsn = 1;
            break;
        default:
            s->npsn = kite_roce_npkts(w->len, qp->mtu);
            break;
        }
        if (kr_is_rd_atomic(w->opcode)) {
            qp->rd_inflight++;
        }
    }
    k = (qp->sq_psn - s->first_psn) & KITE_PSN_MASK;
    n = s->npsn;
    if (k >= n) {
        /* Nothing left of this WQE (cannot happen): move on. */
        qp->req_idx++;
        return true;
    }
    if (kr_is_ud(qp)) {
        kr_req_ud(qp, w, s);
        return true;
    }
    retx = kite_psn_cmp(qp->sq_psn, qp->hi_psn) < 0;
    switch (w->opcode) {
    case KITE_WQE_SEND:
    case KITE_WQE_SEND_IMM:
    case KITE_WQE_SEND_INV:
    case KITE_WQE_WRITE:
    case KITE_WQE_WRITE_IMM: {
        bool inv = w->opcode == KITE_WQE_SEND_INV;
        bool send = w->opcode == KITE_WQE_SEND ||
                    w->opcode == KITE_WQE_SEND_IMM || inv;
        bool imm = w->opcode == KITE_WQE_SEND_IMM ||
                   w->opcode == KITE_WQE_WRITE_IMM;
        uint8_t op;

        off = k * qp->mtu;
        plen = w->len - off < qp->mtu ? w->len - off : qp->mtu;
        last = k + 1 == n;
        op = kite_roce_seg_opcode(tr | (send ? KITE_OP_SEND_FIRST :
                                        KITE_OP_WRITE_FIRST), imm, k, n);
        if (inv && last) {
            /* The IETH rides on the last packet (RC only). */
            op = n == 1 ? KITE_OP_SEND_ONLY_INV : KITE_OP_SEND_LAST_INV;
        }
        kr_pkt_init(qp, &p, op, qp->sq_psn);
        if (!send && k == 0) {
            p.reth_va = w->raddr;
            p.reth_rkey = w->rkey;
            p.reth_len = w->len;
        }
        if (imm && last) {
            memcpy(p.imm, w->imm, 4);
        }
        if (inv && last) {
            p.ieth_rkey = w->rkey;
        }
        p.se = last && (w->flags & KITE_WQE_F_SOLICITED) &&
               w->opcode != KITE_WQE_WRITE;
        /* Also when this packet fills the window: it waits for an ACK. */
        p.ackreq = tr == KITE_BTH_RC &&
                   (last || k % KR_MAX_PKT_PER_ACK == KR_MAX_PKT_PER_ACK - 1 ||
                    kr_req_inflight(qp) + 1 >= qp->cwnd);
        p.paylen = plen;
        /*
         * The headers first, then the payload straight into the frame,
         * CRCed as it is read.
         */
        data = kr_frame_begin(qp, &p, &crc);
        st = kr_sge_read_crc(qp, w, off, data, plen, &crc);
        if (st) {
            s->status = st;
            return true;
        }
        p.payload = data;
        kr_transmit_end(qp, &p, crc, retx);
        kr_req_sent(qp, qp->sq_psn + 1);
        if (last) {
            qp->req_idx++;
            if (tr == KITE_BTH_UC) {
                kr_comp_uc_done(qp);
            }
        }
        return true;
    }
    case KITE_WQE_READ:
        off = k * qp->mtu;
        kr_pkt_init(qp, &p, KITE_OP_READ_REQ, qp->sq_psn);
        p.reth_va = w->raddr + off;
        p.reth_rkey = w->rkey;
        p.reth_len = w->len - off;
        p.ackreq = true;
        kr_transmit(qp, &p, retx);
        kr_req_sent(qp, s->first_psn + n);
        qp->req_idx++;
        return true;
    default:
        kr_pkt_init(qp, &p, w->opcode == KITE_WQE_CMP_SWP ?
                    KITE_OP_CMP_SWP : KITE_OP_FETCH_ADD, qp->sq_psn);
        p.atomic_va = w->raddr;
        p.atomic_rkey = w->rkey;
        p.atomic_swap_add = w->swap_add;
        p.atomic_compare = w->compare;
        p.ackreq = true;
        kr_transmit(qp, &p, retx);
        kr_req_sent(qp, qp->sq_psn + 1);
        qp->req_idx++;
        return true;
    }
}
