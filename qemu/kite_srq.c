/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: shared receive queues.
 *
 * CREATE/MODIFY/QUERY/DESTROY_SRQ, the KITE_DB_SRQ doorbell and the WQE
 * hand-out to the QPs created on an SRQ (kite_srq_take(), called by the
 * RoCEv2 engine when a message needs a receive). WQEs are taken in the
 * order of their next links from slot 0 on, one ring read per message,
 * so the host may reuse any completed slot (hardware.rst, "Shared receive
 * queues"). A bad doorbell or link puts the SRQ in error (KITE_EVT_SRQ_ERR):
 * it hands out nothing more until destroyed, and its QPs go to ERR.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci.h"
#include "kite.h"
#include "kite_engine.h"
#include "trace.h"

#define KITE_SRQ_DEF_LOG_DEPTH  15      /* log2(KITE_DEF_MAX_SRQ_WR + 1) */

QEMU_BUILD_BUG_ON(KITE_DEF_MAX_SRQ_WR + 1 != 1u << KITE_SRQ_DEF_LOG_DEPTH);
/* A next link must name every slot. */
QEMU_BUILD_BUG_ON(KITE_SRQ_DEF_LOG_DEPTH > KITE_SRQ_MAX_LOG_DEPTH);
/* The engine parses at most its own SGE count per receive. */
QEMU_BUILD_BUG_ON(KITE_DEF_MAX_SRQ_SGE > KITE_DEF_MAX_SGE);

/* The SRQ numbered @srqn, or NULL (no owner check). */
KiteSrq *kite_srq_find(KiteState *s, uint32_t srqn)
{
    return kite_table_get(&s->srq_tab, srqn);
}

/*
 * The SRQ @srqn, to be used by context @actor: NULL with *status
 * BAD_HANDLE or PERMISSION.
 */
KiteSrq *kite_srq_get(KiteState *s, uint32_t srqn, uint32_t actor,
                      uint8_t *status)
{
    KiteSrq *srq = kite_srq_find(s, srqn);

    if (!srq) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: unknown SRQ %u\n", srqn);
        *status = KITE_STS_BAD_HANDLE;
        return NULL;
    }
    if (srq->owner != actor) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: SRQ %u of context %u used by "
                      "context %u\n", srqn, srq->owner, actor);
        *status = KITE_STS_PERMISSION;
        return NULL;
    }
    return srq;
}

/* WQEs an SRQ of 2^@log_depth slots holds: one slot is always free. */
static uint32_t kite_srq_capacity(uint8_t log_depth)
{
    return (1u << log_depth) - 1;
}

/* A limit is at most the SRQ's capacity (IB: <= max_wr); 0 disarms. */
static bool kite_srq_limit_ok(uint8_t log_depth, uint32_t limit)
{
    return limit <= kite_srq_capacity(log_depth);
}

/*
 * Put @srq in error: KITE_EVT_SRQ_ERR, then every QP on it that is not in
 * RESET goes to ERR with KITE_EVT_QP_FATAL, as verbs describes an SRQ
 * error (its QPs could receive nothing more).
 */
static void kite_srq_fail(KiteState *s, KiteSrq *srq, const char *why)
{
    uint32_t i;

    if (srq->error) {
        return;
    }
    qemu_log_mask(LOG_GUEST_ERROR, "kite: SRQ %u: %s\n", srq->srqn, why);
    trace_kite_srq_error(srq->srqn, srq->pi, srq->ci, srq->head);
    srq->error = true;
    kite_eq_post(s, 0, KITE_EVT_SRQ_ERR, srq->srqn, 0);
    for (i = kite_table_next(&s->qp_tab, 0); i < s->qp_tab.size;
         i = kite_table_next(&s->qp_tab, i + 1)) {
        KiteQp *qp = kite_table_get(&s->qp_tab, i);

        if ((qp->flags & KITE_QP_FLAG_SRQ) && qp->srqn == srq->srqn) {
            kite_engine_qp_fatal(s, qp);
        }
    }
}

uint8_t kite_cmd_create_srq(KiteState *s, const struct kite_aq_cmd *cmd,
                            KiteCmdResult *res)
{
    const struct kite_cmd_create_srq *c = &cmd->create_srq;
    uint32_t actor = le32_to_cpu(cmd->hdr.uctx);
    uint32_t pdn = le32_to_cpu(c->pdn);
    uint32_t limit = le32_to_cpu(c->limit);
    KitePbl ring;
    KiteSrq *srq;
    KitePd *pd;
    uint32_t srqn;
    uint8_t st;

    if (!kite_log_depth_valid(c->log_depth, KITE_SRQ_DEF_LOG_DEPTH)) {
        return kite_bad_param("SRQ log depth", c->log_depth);
    }
    if (c->log_stride < KITE_RQ_MIN_LOG_STRIDE ||
        c->log_stride > KITE_RQ_MAX_LOG_STRIDE) {
        return kite_bad_param("SRQ log stride", c->log_stride);
    }
    if (!kite_srq_limit_ok(c->log_depth, limit)) {
        return kite_bad_param("SRQ limit", limit);
    }
    if (c->reserved || c->reserved2) {
        return kite_bad_param("SRQ reserved fields", 1);
    }
    pd = kite_pd_get(s, pdn, actor, &st);
    if (!pd) {
        return st;
    }
    if (!kite_obj_room(s, s->num_srq, KITE_DEF_MAX_SRQ)) {
        return KITE_STS_NO_RESOURCES;
    }
    st = kite_pbl_load(s, &c->ring, 1ull << (c->log_depth + c->log_stride),
                       (uint64_t)(KITE_DEF_MAX_SRQ_WR + 1) <<
                       KITE_RQ_MAX_LOG_STRIDE, &ring);
    if (st != KITE_STS_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: bad SRQ ring\n");
        return st;
    }
    srq = kite_table_alloc(&s->srq_tab, KITE_SRQ_FIRST, &srqn);
    if (!srq) {
        return KITE_STS_NO_RESOURCES;
    }
    srq->valid = true;
    srq->srqn = srqn;
    srq->owner = actor;
    srq->pdn = pdn;
    srq->log_depth = c->log_depth;
    srq->log_stride = c->log_stride;
    srq->ring = ring;
    srq->limit = limit;
    pd->refs++;
    if (actor) {
        s->uctx[actor].refs++;
    }
    s->num_srq++;
    res->out[0] = srqn;
    trace_kite_srq_create(srqn, actor, pdn, c->log_depth, c->log_stride,
                          limit);
    return KITE_STS_OK;
}

uint8_t kite_cmd_modify_srq(KiteState *s, const struct kite_aq_cmd *cmd,
                            KiteCmdResult *res)
{
    const struct kite_cmd_modify_srq *c = &cmd->modify_srq;
    uint32_t mask = le32_to_cpu(c->attr_mask);
    uint32_t limit = le32_to_cpu(c->limit);
    KiteSrq *srq;
    uint8_t st;

    srq = kite_srq_get(s, le32_to_cpu(c->srqn), le32_to_cpu(cmd->hdr.uctx),
                       &st);
    if (!srq) {
        return st;
    }
    if (mask & ~(KITE_SRQ_ATTR_MAX_WR | KITE_SRQ_ATTR_LIMIT)) {
        return kite_bad_param("SRQ attr mask", mask);
    }
    /* The ring is the guest's: the model does not resize it. */
    if (mask & KITE_SRQ_ATTR_MAX_WR) {
        return KITE_STS_NOT_SUPPORTED;
    }
    if (!mask) {
        return kite_bad_param("SRQ attr mask", mask);
    }
    if (!kite_srq_limit_ok(srq->log_depth, limit)) {
        return kite_bad_param("SRQ limit", limit);
    }
    srq->limit = limit;
    trace_kite_srq_modify(srq->srqn, limit, srq->pi - srq->ci);
    return KITE_STS_OK;
}

uint8_t kite_cmd_query_srq(KiteState *s, const struct kite_aq_cmd *cmd,
                           KiteCmdResult *res)
{
    KiteSrq *srq;
    uint8_t st;

    srq = kite_srq_get(s, le32_to_cpu(cmd->query_obj.handle),
                       le32_to_cpu(cmd->hdr.uctx), &st);
    if (!srq) {
        return st;
    }
    res->out[KITE_SRQ_QUERY_LOG_DEPTH] = srq->log_depth;
    res->out[KITE_SRQ_QUERY_LIMIT] = srq->limit;
    res->out[KITE_SRQ_QUERY_POSTED] = kite_ring_used(srq->pi, srq->ci);
    res->out[KITE_SRQ_QUERY_FLAGS] = srq->error ? KITE_SRQ_FLAG_ERROR : 0;
    return KITE_STS_OK;
}

uint8_t kite_cmd_destroy_srq(KiteState *s, const struct kite_aq_cmd *cmd,
                             KiteCmdResult *res)
{
    uint32_t srqn = le32_to_cpu(cmd->destroy.handle);
    uint32_t actor = le32_to_cpu(cmd->hdr.uctx);
    KiteSrq *srq;
    uint8_t st;

    srq = kite_srq_get(s, srqn, actor, &st);
    if (!srq) {
        return st;
    }
    if (srq->refs) {
        return KITE_STS_BUSY;
    }
    kite_pd_find(s, srq->pdn)->refs--;
    if (actor) {
        s->uctx[actor].refs--;
    }
    srq->valid = false;
    kite_table_free(&s->srq_tab, srqn);
    s->num_srq--;
    trace_kite_srq_destroy(srqn);
    return KITE_STS_OK;
}

/*
 * KITE_DB_SRQ on doorbell page @page: the new producer index of an SRQ
 * the page's context owns. More WQEs than the SRQ holds put it in error;
 * a doorbell for a foreign or unknown SRQ is ignored and counted.
 */
void kite_srq_doorbell(KiteState *s, uint32_t page, uint64_t val)
{
    KiteSrq *srq = kite_srq_find(s, kite_db_num(val));
    uint32_t pi = kite_db_index(val);

    s->cnt.db_mmio++;
    if (!srq || srq->owner != page) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: SRQ doorbell on page %u for "
                      "SRQ %u it does not own\n", page, kite_db_num(val));
        s->cnt.db_rejected++;
        return;
    }
    trace_kite_srq_doorbell(srq->srqn, pi, srq->ci);
    if (srq->error) {
        return;
    }
    if (kite_ring_used(pi, srq->ci) > kite_srq_capacity(srq->log_depth)) {
        kite_srq_fail(s, srq, "producer index beyond the SRQ's capacity");
        return;
    }
    /* A doorbell that goes backwards is ignored, as a QP's. */
    if (kite_ring_used(pi, srq->ci) >= kite_ring_used(srq->pi, srq->ci)) {
        srq->pi = pi;
    }
}

/*
 * Hand the next WQE of @srq (@len bytes: its stride) to a QP: copy it to
 * @buf, report its slot, follow its next link and raise the limit event
 * when the WQEs left drop below an armed limit. false: none left, or the
 * SRQ is (now) in error.
 */
bool kite_srq_take(KiteState *s, KiteSrq *srq, void *buf, uint32_t len,
                   uint16_t *slot)
{
    struct kite_rq_wqe_hdr hdr;
    uint32_t next;

    if (srq->error || srq->pi == srq->ci ||
        len != 1u << srq->log_stride) {
        return false;
    }
    if (!kite_wq_read(s, &srq->ring, (uint64_t)srq->head << srq->log_stride,
                      buf, len)) {
        kite_srq_fail(s, srq, "ring not readable");
        return false;
    }
    memcpy(&hdr, buf, sizeof(hdr));
    next = le16_to_cpu(hdr.next);
    if (next >> srq->log_depth) {
        kite_srq_fail(s, srq, "next link beyond the depth");
        return false;
    }
    *slot = srq->head;
    srq->head = next;
    srq->ci++;
    trace_kite_srq_take(srq->srqn, *slot, srq->pi - srq->ci);
    if (srq->limit && kite_ring_used(srq->pi, srq->ci) < srq->limit) {
        srq->limit = 0;
        kite_eq_post(s, 0, KITE_EVT_SRQ_LIMIT, srq->srqn, 0);
    }
    return true;
}
