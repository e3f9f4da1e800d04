/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: queue pairs.
 *
 * CREATE/MODIFY/QUERY/DESTROY_QP with the InfiniBand state machine and the
 * required/optional attribute masks of ib_core's ib_modify_qp_is_ok(),
 * restricted to the KITE_QP_ATTR_* bits. The attributes are stored as
 * QUERY_QP returns them and handed to the RoCEv2 engine (kite_engine.c)
 * in host order; the engine's state, PSNs and counters are what QUERY_QP
 * and QUERY_QP_STATS report.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci.h"
#include "kite.h"
#include "trace.h"

#define KITE_QP_MAX_LOG_DEPTH   15      /* log2(KITE_DEF_MAX_QP_WR) */
/* The part of a QP number above the slot (kite.h). */
#define KITE_QPN_GEN_MASK       ((KITE_QPN_MAX + 1) / KITE_QP_SLOTS - 1)
#define KITE_QP_NUM_STATES      (KITE_QPS_ERR + 1)
#define KITE_QP_NUM_TYPES       (KITE_QPT_GSI + 1)
#define KITE_PKEY_INDEX_DEFAULT 0

QEMU_BUILD_BUG_ON((1u << KITE_QP_MAX_LOG_DEPTH) != KITE_DEF_MAX_QP_WR);
/* Every QP and the GSI QP have a slot from KITE_QPN_FIRST on. */
QEMU_BUILD_BUG_ON(KITE_QPN_FIRST + KITE_DEF_MAX_QP > KITE_QP_SLOTS);
QEMU_BUILD_BUG_ON(KITE_QP_SLOTS > KITE_QPN_MAX);

#define A_STATE     KITE_QP_ATTR_STATE
#define A_CUR       KITE_QP_ATTR_CUR_STATE
#define A_ACCESS    KITE_QP_ATTR_ACCESS_FLAGS
#define A_PKEY      KITE_QP_ATTR_PKEY_INDEX
#define A_PORT      KITE_QP_ATTR_PORT
#define A_QKEY      KITE_QP_ATTR_QKEY
#define A_AV        KITE_QP_ATTR_AV
#define A_MTU       KITE_QP_ATTR_PATH_MTU
#define A_TIMEOUT   KITE_QP_ATTR_TIMEOUT
#define A_RETRY     KITE_QP_ATTR_RETRY_CNT
#define A_RNR_RETRY KITE_QP_ATTR_RNR_RETRY
#define A_RQ_PSN    KITE_QP_ATTR_RQ_PSN
#define A_RD_ATOM   KITE_QP_ATTR_MAX_QP_RD_ATOMIC
#define A_RNR_TIMER KITE_QP_ATTR_MIN_RNR_TIMER
#define A_SQ_PSN    KITE_QP_ATTR_SQ_PSN
#define A_DEST_ATOM KITE_QP_ATTR_MAX_DEST_RD_ATOMIC
#define A_DEST_QPN  KITE_QP_ATTR_DEST_QPN

#define A_KNOWN     (A_STATE | A_CUR | A_ACCESS | A_PKEY | A_PORT | A_QKEY | \
                     A_AV | A_MTU | A_TIMEOUT | A_RETRY | A_RNR_RETRY | \
                     A_RQ_PSN | A_RD_ATOM | A_RNR_TIMER | A_SQ_PSN | \
                     A_DEST_ATOM | A_DEST_QPN)

#define KITE_QP_ACCESS_ALL      (KITE_ACCESS_LOCAL_WRITE | \
                                 KITE_ACCESS_REMOTE_WRITE | \
                                 KITE_ACCESS_REMOTE_READ | \
                                 KITE_ACCESS_REMOTE_ATOMIC)

/* One transition: legal, with required and optional attributes per type. */
typedef struct KiteQpTrans {
    bool valid;
    uint32_t req[KITE_QP_NUM_TYPES];
    uint32_t opt[KITE_QP_NUM_TYPES];
} KiteQpTrans;

#define RC  KITE_QPT_RC
#define UC  KITE_QPT_UC
#define UD  KITE_QPT_UD
#define GSI KITE_QPT_GSI

/* RTS -> RTS optional attributes, reused by SQD/SQE -> RTS. */
#define OPT_RTS_RC      (A_CUR | A_ACCESS | A_RNR_TIMER)
#define OPT_RTS_UC      (A_CUR | A_ACCESS)
#define OPT_RTS_UD      (A_CUR | A_QKEY)

static const KiteQpTrans kite_qp_trans[KITE_QP_NUM_STATES]
                                      [KITE_QP_NUM_STATES] = {
    [KITE_QPS_RESET] = {
        [KITE_QPS_RESET] = { .valid = true },
        [KITE_QPS_ERR] = { .valid = true },
        [KITE_QPS_INIT] = {
            .valid = true,
            .req = {
                [RC] = A_PKEY | A_PORT | A_ACCESS,
                [UC] = A_PKEY | A_PORT | A_ACCESS,
                [UD] = A_PKEY | A_PORT | A_QKEY,
                [GSI] = A_QKEY,
            },
            .opt = { [GSI] = A_PKEY | A_PORT },
        },
    },
    [KITE_QPS_INIT] = {
        [KITE_QPS_RESET] = { .valid = true },
        [KITE_QPS_ERR] = { .valid = true },
        [KITE_QPS_INIT] = {
            .valid = true,
            .opt = {
                [RC] = A_PKEY | A_PORT | A_ACCESS,
                [UC] = A_PKEY | A_PORT | A_ACCESS,
                [UD] = A_PKEY | A_PORT | A_QKEY,
                [GSI] = A_PKEY | A_PORT | A_QKEY,
            },
        },
        [KITE_QPS_RTR] = {
            .valid = true,
            .req = {
                [RC] = A_AV | A_MTU | A_DEST_QPN | A_RQ_PSN | A_DEST_ATOM |
                       A_RNR_TIMER,
                [UC] = A_AV | A_MTU | A_DEST_QPN | A_RQ_PSN,
            },
            .opt = {
                [RC] = A_ACCESS | A_PKEY,
                [UC] = A_ACCESS | A_PKEY,
                [UD] = A_PKEY | A_QKEY,
                [GSI] = A_PKEY | A_QKEY,
            },
        },
    },
    [KITE_QPS_RTR] = {
        [KITE_QPS_RESET] = { .valid = true },
        [KITE_QPS_ERR] = { .valid = true },
        [KITE_QPS_RTS] = {
            .valid = true,
            .req = {
                [RC] = A_SQ_PSN | A_TIMEOUT | A_RETRY | A_RNR_RETRY |
                       A_RD_ATOM,
                [UC] = A_SQ_PSN,
                [UD] = A_SQ_PSN,
                [GSI] = A_SQ_PSN,
            },
            .opt = {
                [RC] = A_CUR | A_ACCESS | A_RNR_TIMER,
                [UC] = A_CUR | A_ACCESS,
                [UD] = A_CUR | A_QKEY,
                [GSI] = A_CUR | A_QKEY,
            },
        },
    },
    [KITE_QPS_RTS] = {
        [KITE_QPS_RESET] = { .valid = true },
        [KITE_QPS_ERR] = { .valid = true },
        [KITE_QPS_RTS] = {
            .valid = true,
            .opt = {
                [RC] = OPT_RTS_RC, [UC] = OPT_RTS_UC,
                [UD] = OPT_RTS_UD, [GSI] = OPT_RTS_UD,
            },
        },
        [KITE_QPS_SQD] = { .valid = true },
    },
    [KITE_QPS_SQD] = {
        [KITE_QPS_RESET] = { .valid = true },
        [KITE_QPS_ERR] = { .valid = true },
        [KITE_QPS_RTS] = {
            .valid = true,
            .opt = {
                [RC] = OPT_RTS_RC, [UC] = OPT_RTS_UC,
                [UD] = OPT_RTS_UD, [GSI] = OPT_RTS_UD,
            },
        },
        [KITE_QPS_SQD] = {
            .valid = true,
            .opt = {
                [RC] = OPT_RTS_RC | A_AV | A_TIMEOUT | A_RETRY |
                       A_RNR_RETRY | A_RD_ATOM | A_DEST_ATOM | A_PKEY,
                [UC] = OPT_RTS_UC, [UD] = OPT_RTS_UD, [GSI] = OPT_RTS_UD,
            },
        },
    },
    [KITE_QPS_SQE] = {
        [KITE_QPS_RESET] = { .valid = true },
        [KITE_QPS_ERR] = { .valid = true },
        [KITE_QPS_RTS] = {
            .valid = true,
            .opt = {
                [UC] = OPT_RTS_UC, [UD] = OPT_RTS_UD, [GSI] = OPT_RTS_UD,
            },
        },
    },
    [KITE_QPS_ERR] = {
        [KITE_QPS_RESET] = { .valid = true },
        [KITE_QPS_ERR] = { .valid = true },
    },
};

/* The QP numbered @qpn, or NULL: its slot, if it holds that number. */
KiteQp *kite_qp_find(KiteState *s, uint32_t qpn)
{
    KiteQp *qp;

    if (!qpn || qpn > KITE_QPN_MAX) {
        return NULL;
    }
    qp = kite_table_get(&s->qp_tab, qpn & (KITE_QP_SLOTS - 1));
    return qp && qp->qpn == qpn ? qp : NULL;
}

/* The QP's state: the engine's, which includes device-initiated changes. */
static uint8_t kite_qp_state(const KiteQp *qp)
{
    return qp->eqp ? kite_roce_qp_state(qp->eqp) : qp->attr.state;
}

/*
 * The QP @qpn, to be used by context @actor: NULL with *status
 * BAD_HANDLE (no such QP) or PERMISSION (owned by another context).
 */
KiteQp *kite_qp_get(KiteState *s, uint32_t qpn, uint32_t actor,
                    uint8_t *status)
{
    KiteQp *qp = kite_qp_find(s, qpn);

    if (!qp) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: unknown QP %u\n", qpn);
        *status = KITE_STS_BAD_HANDLE;
        return NULL;
    }
    if (qp->owner != actor) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: QP %u of context %u used by "
                      "context %u\n", qpn, qp->owner, actor);
        *status = KITE_STS_PERMISSION;
        return NULL;
    }
    return qp;
}

/*
 * A slot for a new QP and its number (kite.h): the GSI QP's own slot, or
 * the lowest free one; NULL when there is none.
 */
static KiteQp *kite_qp_alloc(KiteState *s, uint8_t type)
{
    uint32_t slot;
    KiteQp *qp;

    if (type == KITE_QPT_GSI) {
        qp = kite_table_alloc_at(&s->qp_tab, KITE_GSI_QPN);
        if (qp) {
            qp->qpn = KITE_GSI_QPN;
        }
        return qp;
    }
    qp = kite_table_alloc(&s->qp_tab, KITE_QPN_FIRST, &slot);
    if (qp) {
        qp->qpn = (kite_table_gen(&s->qp_tab, slot) & KITE_QPN_GEN_MASK) <<
                  KITE_QP_SLOT_BITS | slot;
    }
    return qp;
}

/*
 * A QP on an SRQ has no RQ of its own: its RQ fields are all zero, and the
 * GSI QP (whose receives ib_core posts itself) never takes one.
 */
static uint8_t kite_qp_check_srq(const struct kite_cmd_create_qp *c)
{
    static const struct kite_pbl_desc none;

    if (c->qp_type == KITE_QPT_GSI) {
        return kite_bad_param("GSI QP on an SRQ", c->qp_type);
    }
    if (c->rq_log_depth || c->rq_log_stride ||
        memcmp(&c->rq, &none, sizeof(none))) {
        return kite_bad_param("RQ of a QP on an SRQ", c->rq_log_depth);
    }
    return KITE_STS_OK;
}

/* Validates and loads a work queue ring of 2^(depth + stride) bytes. */
static uint8_t kite_wq_ring(KiteState *s, const char *name,
                            const struct kite_pbl_desc *d, uint8_t log_depth,
                            uint8_t log_stride, uint8_t max_stride,
                            KitePbl *pbl)
{
    uint8_t st;

    st = kite_pbl_load(s, d, 1ull << (log_depth + log_stride),
                       (uint64_t)KITE_DEF_MAX_QP_WR << max_stride, pbl);
    if (st != KITE_STS_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: bad %s ring\n", name);
    }
    return st;
}

uint8_t kite_cmd_create_qp(KiteState *s, const struct kite_aq_cmd *cmd,
                           KiteCmdResult *res)
{
    const struct kite_cmd_create_qp *c = &cmd->create_qp;
    uint32_t actor = le32_to_cpu(cmd->hdr.uctx);
    uint32_t pdn = le32_to_cpu(c->pdn);
    uint32_t scqn = le32_to_cpu(c->send_cqn);
    uint32_t rcqn = le32_to_cpu(c->recv_cqn);
    uint32_t srqn = le32_to_cpu(c->srqn);
    bool on_srq = c->flags & KITE_QP_FLAG_SRQ;
    KitePbl sq, rq = {};
    KiteCq *scq, *rcq;
    KiteSrq *srq = NULL;
    KitePd *pd;
    KiteQp *qp;
    uint8_t st;

    if (c->qp_type > KITE_QPT_GSI) {
        return kite_bad_param("QP type", c->qp_type);
    }
    if (c->flags & ~(KITE_QP_FLAG_SIG_ALL | KITE_QP_FLAG_SRQ)) {
        return kite_bad_param("QP flags", c->flags);
    }
    if (!kite_log_depth_valid(c->sq_log_depth, KITE_QP_MAX_LOG_DEPTH)) {
        return kite_bad_param("SQ log depth", c->sq_log_depth);
    }
    if (c->sq_log_stride < KITE_SQ_MIN_LOG_STRIDE ||
        c->sq_log_stride > KITE_SQ_MAX_LOG_STRIDE) {
        return kite_bad_param("SQ log stride", c->sq_log_stride);
    }
    if (on_srq) {
        st = kite_qp_check_srq(c);
        if (st != KITE_STS_OK) {
            return st;
        }
    } else if (srqn) {
        return kite_bad_param("srqn without KITE_QP_FLAG_SRQ", srqn);
    } else if (!kite_log_depth_valid(c->rq_log_depth,
                                     KITE_QP_MAX_LOG_DEPTH)) {
        return kite_bad_param("RQ log depth", c->rq_log_depth);
    } else if (c->rq_log_stride < KITE_RQ_MIN_LOG_STRIDE ||
               c->rq_log_stride > KITE_RQ_MAX_LOG_STRIDE) {
        return kite_bad_param("RQ log stride", c->rq_log_stride);
    }
    if (c->qp_type == KITE_QPT_GSI) {
        if (actor) {
            qemu_log_mask(LOG_GUEST_ERROR, "kite: GSI QP from context %u\n",
                          actor);
            return KITE_STS_PERMISSION;
        }
        if (kite_qp_find(s, KITE_GSI_QPN)) {
            return KITE_STS_BUSY;
        }
    }
    pd = kite_pd_get(s, pdn, actor, &st);
    if (!pd) {
        return st;
    }
    scq = kite_cq_get(s, scqn, actor, &st);
    if (!scq) {
        return st;
    }
    rcq = kite_cq_get(s, rcqn, actor, &st);
    if (!rcq) {
        return st;
    }
    if (on_srq) {
        srq = kite_srq_get(s, srqn, actor, &st);
        if (!srq) {
            return st;
        }
    }
    if (!kite_obj_room(s, s->num_qp, KITE_DEF_MAX_QP)) {
        return KITE_STS_NO_RESOURCES;
    }
    st = kite_wq_ring(s, "SQ", &c->sq, c->sq_log_depth, c->sq_log_stride,
                      KITE_SQ_MAX_LOG_STRIDE, &sq);
    if (st != KITE_STS_OK) {
        return st;
    }
    if (!on_srq) {
        st = kite_wq_ring(s, "RQ", &c->rq, c->rq_log_depth, c->rq_log_stride,
                          KITE_RQ_MAX_LOG_STRIDE, &rq);
        if (st != KITE_STS_OK) {
            return st;
        }
    }
    st = kite_dbrec_check(s, le64_to_cpu(c->dbrec),
                          sizeof(struct kite_qp_dbrec));
    if (st != KITE_STS_OK) {
        return st;
    }
    qp = kite_qp_alloc(s, c->qp_type);
    if (!qp) {
        return KITE_STS_NO_RESOURCES;
    }
    qp->valid = true;
    qp->owner = actor;
    qp->type = c->qp_type;
    qp->flags = c->flags;
    qp->sq_log_depth = c->sq_log_depth;
    qp->sq_log_stride = c->sq_log_stride;
    /* An SRQ QP's receives have the SRQ's stride (the engine parses them). */
    qp->rq_log_depth = c->rq_log_depth;
    qp->rq_log_stride = srq ? srq->log_stride : c->rq_log_stride;
    qp->srqn = srqn;
    qp->pdn = pdn;
    qp->send_cqn = scqn;
    qp->recv_cqn = rcqn;
    qp->sq = sq;
    qp->rq = rq;
    qp->dbrec.addr = le64_to_cpu(c->dbrec);
    qp->attr.state = KITE_QPS_RESET;
    if (!kite_engine_qp_create(s, qp)) {
        qp->valid = false;
        kite_table_free(&s->qp_tab, qp->qpn & (KITE_QP_SLOTS - 1));
        return KITE_STS_NO_RESOURCES;
    }
    pd->refs++;
    scq->refs++;
    rcq->refs++;
    if (srq) {
        srq->refs++;
    }
    if (actor) {
        s->uctx[actor].refs++;
    }
    s->num_qp++;
    res->out[0] = qp->qpn;
    trace_kite_qp_create(qp->qpn, actor, qp->type, pdn, scqn, rcqn);
    return KITE_STS_OK;
}

/* A GID-table index that names a valid entry of the AV's network type. */
static uint8_t kite_qp_check_av(KiteState *s, const struct kite_av *av)
{
    static const uint8_t v4_prefix[12] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
    };
    const KiteGid *g;

    if (av->sgid_index >= KITE_DEF_MAX_GID ||
        !s->gid[av->sgid_index].valid) {
        return kite_bad_param("AV sgid_index", av->sgid_index);
    }
    g = &s->gid[av->sgid_index];
    if (av->net_type != KITE_NET_IPV4 && av->net_type != KITE_NET_IPV6) {
        return kite_bad_param("AV net_type", av->net_type);
    }
    if ((av->net_type == KITE_NET_IPV4) !=
        (g->type == KITE_GID_ROCE_V2_IPV4)) {
        return kite_bad_param("AV net_type for the source GID",
                              av->net_type);
    }
    if ((av->net_type == KITE_NET_IPV4) !=
        !memcmp(av->dgid, v4_prefix, sizeof(v4_prefix))) {
        return kite_bad_param("AV dgid for net_type", av->net_type);
    }
    if (le32_to_cpu(av->flow_label) & ~KITE_AV_FLOW_LABEL_MASK) {
        return kite_bad_param("AV flow_label", le32_to_cpu(av->flow_label));
    }
    return KITE_STS_OK;
}

/* Range checks of every attribute in @mask. */
static uint8_t kite_qp_check_attr(KiteState *s, const struct kite_qp_attr *a,
                                  uint32_t mask)
{
    if ((mask & A_ACCESS) &&
        (le32_to_cpu(a->access_flags) & ~KITE_QP_ACCESS_ALL)) {
        return kite_bad_param("QP access flags",
                              le32_to_cpu(a->access_flags));
    }
    if ((mask & A_PKEY) &&
        le16_to_cpu(a->pkey_index) != KITE_PKEY_INDEX_DEFAULT) {
        return kite_bad_param("pkey_index", le16_to_cpu(a->pkey_index));
    }
    if ((mask & A_PORT) && a->port != KITE_PORT_NUM) {
        return kite_bad_param("port", a->port);
    }
    if ((mask & A_MTU) && (!kite_mtu_bytes(a->path_mtu) ||
                           a->path_mtu > kite_cap(KITE_REG_CAP_MAX_MTU))) {
        return kite_bad_param("path_mtu", a->path_mtu);
    }
    if ((mask & A_TIMEOUT) && a->timeout > KITE_QP_MAX_TIMEOUT) {
        return kite_bad_param("timeout", a->timeout);
    }
    if ((mask & A_RETRY) && a->retry_cnt > KITE_QP_MAX_RETRY) {
        return kite_bad_param("retry_cnt", a->retry_cnt);
    }
    if ((mask & A_RNR_RETRY) && a->rnr_retry > KITE_QP_MAX_RETRY) {
        return kite_bad_param("rnr_retry", a->rnr_retry);
    }
    if ((mask & A_RNR_TIMER) && a->min_rnr_timer > KITE_QP_MAX_RNR_TIMER) {
        return kite_bad_param("min_rnr_timer", a->min_rnr_timer);
    }
    if ((mask & A_RD_ATOM) &&
        a->max_rd_atomic > kite_cap(KITE_REG_CAP_MAX_RD_ATOM)) {
        return kite_bad_param("max_rd_atomic", a->max_rd_atomic);
    }
    if ((mask & A_DEST_ATOM) &&
        a->max_dest_rd_atomic > kite_cap(KITE_REG_CAP_MAX_RD_ATOM)) {
        return kite_bad_param("max_dest_rd_atomic", a->max_dest_rd_atomic);
    }
    if ((mask & A_SQ_PSN) && (le32_to_cpu(a->sq_psn) & ~KITE_PSN_MASK)) {
        return kite_bad_param("sq_psn", le32_to_cpu(a->sq_psn));
    }
    if ((mask & A_RQ_PSN) && (le32_to_cpu(a->rq_psn) & ~KITE_PSN_MASK)) {
        return kite_bad_param("rq_psn", le32_to_cpu(a->rq_psn));
    }
    if ((mask & A_DEST_QPN) &&
        (le32_to_cpu(a->dest_qpn) & ~KITE_QPN_MASK)) {
        return kite_bad_param("dest_qpn", le32_to_cpu(a->dest_qpn));
    }
    if (mask & A_AV) {
        return kite_qp_check_av(s, &a->av);
    }
    return KITE_STS_OK;
}

/* Stores the attributes of @mask from @a into the QP's attributes @q. */
static void kite_qp_apply(struct kite_qp_attr *q, const struct kite_qp_attr *a,
                          uint32_t mask)
{
    if (mask & A_ACCESS) {
        q->access_flags = a->access_flags;
    }
    if (mask & A_PKEY) {
        q->pkey_index = a->pkey_index;
    }
    if (mask & A_PORT) {
        q->port = a->port;
    }
    if (mask & A_QKEY) {
        q->qkey = a->qkey;
    }
    if (mask & A_AV) {
        q->av = a->av;
    }
    if (mask & A_MTU) {
        q->path_mtu = a->path_mtu;
    }
    if (mask & A_TIMEOUT) {
        q->timeout = a->timeout;
    }
    if (mask & A_RETRY) {
        q->retry_cnt = a->retry_cnt;
    }
    if (mask & A_RNR_RETRY) {
        q->rnr_retry = a->rnr_retry;
    }
    if (mask & A_RQ_PSN) {
        q->rq_psn = a->rq_psn;
    }
    if (mask & A_RD_ATOM) {
        q->max_rd_atomic = a->max_rd_atomic;
    }
    if (mask & A_RNR_TIMER) {
        q->min_rnr_timer = a->min_rnr_timer;
    }
    if (mask & A_SQ_PSN) {
        q->sq_psn = a->sq_psn;
    }
    if (mask & A_DEST_ATOM) {
        q->max_dest_rd_atomic = a->max_dest_rd_atomic;
    }
    if (mask & A_DEST_QPN) {
        q->dest_qpn = a->dest_qpn;
    }
}

uint8_t kite_cmd_modify_qp(KiteState *s, const struct kite_aq_cmd *cmd,
                           KiteCmdResult *res)
{
    const struct kite_cmd_modify_qp *c = &cmd->modify_qp;
    const struct kite_qp_attr *a = &c->attr;
    uint32_t qpn = le32_to_cpu(c->qpn);
    uint32_t mask = le32_to_cpu(a->attr_mask);
    const KiteQpTrans *t;
    uint8_t cur, next, st;
    uint32_t req, opt;
    KiteQp *qp;

    qp = kite_qp_get(s, qpn, le32_to_cpu(cmd->hdr.uctx), &st);
    if (!qp) {
        return st;
    }
    if (mask & ~A_KNOWN) {
        return kite_bad_param("QP attr_mask", mask);
    }
    cur = kite_qp_state(qp);
    if (mask & A_CUR) {
        if (a->cur_state >= KITE_QP_NUM_STATES) {
            return kite_bad_param("cur_state", a->cur_state);
        }
        if (a->cur_state != cur) {
            qemu_log_mask(LOG_GUEST_ERROR, "kite: QP %u cur_state %u but "
                          "the QP is in state %u\n", qpn, a->cur_state, cur);
            return KITE_STS_BAD_STATE;
        }
    }
    next = cur;
    if (mask & A_STATE) {
        if (a->state >= KITE_QP_NUM_STATES) {
            return kite_bad_param("QP state", a->state);
        }
        next = a->state;
    }
    t = &kite_qp_trans[cur][next];
    if (!t->valid) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: QP %u (type %u): illegal "
                      "transition %u -> %u\n", qpn, qp->type, cur, next);
        return KITE_STS_BAD_STATE;
    }
    req = t->req[qp->type];
    opt = t->opt[qp->type] | A_STATE | A_CUR;
    if ((mask & req) != req) {
        return kite_bad_param("QP attr_mask: missing required attributes",
                              req & ~mask);
    }
    if (mask & ~(req | opt)) {
        return kite_bad_param("QP attr_mask: attributes not allowed",
                              mask & ~(req | opt));
    }
    st = kite_qp_check_attr(s, a, mask);
    if (st != KITE_STS_OK) {
        return st;
    }
    trace_kite_qp_modify(qpn, cur, next, mask);
    if (next == KITE_QPS_RESET) {
        /* Back to the state of a new QP: attributes and indexes cleared. */
        memset(&qp->attr, 0, sizeof(qp->attr));
        qp->sq_pi = qp->rq_pi = 0;
        kite_dbrec_qp_reset(s, qp);
    } else {
        kite_qp_apply(&qp->attr, a, mask);
    }
    qp->attr.state = next;
    kite_engine_qp_modify(s, qp, a, mask, next);
    /* A state change may let queued WQEs go: look at the records. */
    kite_dbrec_service(s);
    return KITE_STS_OK;
}

uint8_t kite_cmd_query_qp(KiteState *s, const struct kite_aq_cmd *cmd,
                          KiteCmdResult *res)
{
    uint32_t qpn = le32_to_cpu(cmd->query_obj.handle);
    struct kite_qp_attr a;
    KiteQp *qp;
    uint8_t st;

    qp = kite_qp_get(s, qpn, le32_to_cpu(cmd->hdr.uctx), &st);
    if (!qp) {
        return st;
    }
    a = qp->attr;
    a.attr_mask = 0;
    a.state = kite_qp_state(qp);
    a.cur_state = a.state;
    if (qp->eqp && a.state != KITE_QPS_RESET) {
        a.sq_psn = cpu_to_le32(kite_roce_qp_sq_psn(qp->eqp));
        a.rq_psn = cpu_to_le32(kite_roce_qp_rq_psn(qp->eqp));
    }
    trace_kite_qp_query(qpn, a.state);
    return kite_out_write(s, &cmd->query_obj.out, &a, sizeof(a), res);
}

/*
 * QUERY_QP_STATS: the QP's transport counters (struct kite_qp_stats), all 0
 * while the QP has no engine side.
 */
uint8_t kite_cmd_query_qp_stats(KiteState *s, const struct kite_aq_cmd *cmd,
                                KiteCmdResult *res)
{
    uint32_t qpn = le32_to_cpu(cmd->query_obj.handle);
    const struct kite_roce_counters *c;
    struct kite_qp_stats st;
    KiteQp *qp;
    uint8_t status;

    qp = kite_qp_get(s, qpn, le32_to_cpu(cmd->hdr.uctx), &status);
    if (!qp) {
        return status;
    }
    memset(&st, 0, sizeof(st));
    if (qp->eqp) {
        c = kite_roce_qp_counters(qp->eqp);
        st.tx_packets = cpu_to_le64(c->tx_packets);
        st.tx_bytes = cpu_to_le64(c->tx_bytes);
        st.rx_packets = cpu_to_le64(c->rx_packets);
        st.rx_bytes = cpu_to_le64(c->rx_bytes);
        st.retransmits = cpu_to_le64(c->retransmits);
        st.timeouts = cpu_to_le64(c->timeouts);
        st.naks_sent = cpu_to_le64(c->naks_sent);
        st.naks_rcvd = cpu_to_le64(c->naks_rcvd);
        st.rnr_naks_sent = cpu_to_le64(c->rnr_naks_sent);
        st.rnr_naks_rcvd = cpu_to_le64(c->rnr_naks_rcvd);
        st.dup_requests = cpu_to_le64(c->dup_requests);
    }
    return kite_out_write(s, &cmd->query_obj.out, &st, sizeof(st), res);
}

uint8_t kite_cmd_destroy_qp(KiteState *s, const struct kite_aq_cmd *cmd,
                            KiteCmdResult *res)
{
    uint32_t qpn = le32_to_cpu(cmd->destroy.handle);
    uint32_t actor = le32_to_cpu(cmd->hdr.uctx);
    KiteQp *qp;
    uint8_t st;

    qp = kite_qp_get(s, qpn, actor, &st);
    if (!qp) {
        return st;
    }
    kite_mw_qp_destroyed(s, qp);
    kite_pd_find(s, qp->pdn)->refs--;
    kite_cq_find(s, qp->send_cqn)->refs--;
    kite_cq_find(s, qp->recv_cqn)->refs--;
    if (qp->flags & KITE_QP_FLAG_SRQ) {
        kite_srq_find(s, qp->srqn)->refs--;
    }
    if (actor) {
        s->uctx[actor].refs--;
    }
    kite_engine_qp_destroy(s, qp);
    qp->valid = false;
    kite_table_free(&s->qp_tab, qpn & (KITE_QP_SLOTS - 1));
    s->num_qp--;
    trace_kite_qp_destroy(qpn);
    return KITE_STS_OK;
}

/*
 * KITE_DB_SQ / KITE_DB_RQ on doorbell page @page: accepted for a QP the
 * page's context owns, recorded and passed to the RoCEv2 engine (which
 * moves the QP to ERR for an index beyond the depth). Other doorbells are
 * ignored and counted.
 */
void kite_qp_doorbell(KiteState *s, uint32_t page, hwaddr off, uint64_t val)
{
    KiteQp *qp = kite_qp_find(s, kite_db_num(val));

    trace_kite_qp_doorbell(page, kite_db_num(val), off == KITE_DB_SQ,
                           kite_db_index(val));
    s->cnt.db_mmio++;
    if (!qp || qp->owner != page) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: QP doorbell on page %u for "
                      "QP %u it does not own\n", page, kite_db_num(val));
        s->cnt.db_rejected++;
        return;
    }
    if (off == KITE_DB_RQ && (qp->flags & KITE_QP_FLAG_SRQ)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: RQ doorbell for QP %u, which "
                      "receives from SRQ %u\n", qp->qpn, qp->srqn);
        s->cnt.db_rejected++;
        return;
    }
    if (off == KITE_DB_SQ) {
        qp->sq_pi = kite_db_index(val);
        kite_dbrec_doorbell(s, qp, false);
        kite_engine_sq_doorbell_now(s, qp, qp->sq_pi);
    } else {
        qp->rq_pi = kite_db_index(val);
        kite_engine_doorbell(s, qp, true, qp->rq_pi);
        kite_dbrec_doorbell(s, qp, true);
    }
}
