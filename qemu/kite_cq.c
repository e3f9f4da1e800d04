/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: completion queues.
 *
 * CREATE/MODIFY/QUERY/DESTROY_CQ, the KITE_DB_CQ doorbell (consumer
 * index and one-shot arming) and CQE posting for the RoCEv2 engine (phase,
 * overflow, completion events). A CQ belongs to the context that created
 * it, reports to a completion EQ and is kept busy by the QPs completing
 * into it.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci.h"
#include "kite.h"
#include "trace.h"

#define KITE_CQE_SIZE           sizeof(struct kite_cqe)
#define KITE_CQE_FLAGS_OFF      offsetof(struct kite_cqe, flags)
#define KITE_CQ_MAX_LOG_DEPTH   22      /* log2(KITE_DEF_MAX_CQE) */

QEMU_BUILD_BUG_ON((1u << KITE_CQ_MAX_LOG_DEPTH) != KITE_DEF_MAX_CQE);
/* The flags byte, with the phase, is the CQE's last: it is stored last. */
QEMU_BUILD_BUG_ON(KITE_CQE_FLAGS_OFF != KITE_CQE_SIZE - 1);

/* The CQ numbered @cqn, or NULL (no owner check). */
KiteCq *kite_cq_find(KiteState *s, uint32_t cqn)
{
    return kite_table_get(&s->cq_tab, cqn);
}

/*
 * The CQ @cqn, to be used by context @actor: NULL with *status BAD_HANDLE
 * or PERMISSION.
 */
KiteCq *kite_cq_get(KiteState *s, uint32_t cqn, uint32_t actor,
                    uint8_t *status)
{
    KiteCq *cq = kite_cq_find(s, cqn);

    if (!cq) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: unknown CQ %u\n", cqn);
        *status = KITE_STS_BAD_HANDLE;
        return NULL;
    }
    if (cq->owner != actor) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: CQ %u of context %u used by "
                      "context %u\n", cqn, cq->owner, actor);
        *status = KITE_STS_PERMISSION;
        return NULL;
    }
    return cq;
}

/* Validates a CQ ring of 2^@log_depth CQEs and loads its page list. */
static uint8_t kite_cq_ring(KiteState *s, const struct kite_pbl_desc *d,
                            uint8_t log_depth, KitePbl *pbl)
{
    if (!kite_log_depth_valid(log_depth, KITE_CQ_MAX_LOG_DEPTH)) {
        return kite_bad_param("CQ log depth", log_depth);
    }
    return kite_pbl_load(s, d, (uint64_t)KITE_CQE_SIZE << log_depth,
                         (uint64_t)KITE_CQE_SIZE * KITE_DEF_MAX_CQE, pbl);
}

uint8_t kite_cmd_create_cq(KiteState *s, const struct kite_aq_cmd *cmd,
                           KiteCmdResult *res)
{
    const struct kite_cmd_create_cq *c = &cmd->create_cq;
    uint32_t actor = le32_to_cpu(cmd->hdr.uctx);
    uint16_t eqn = le16_to_cpu(c->eqn);
    KitePbl ring;
    KiteCq *cq;
    uint32_t cqn;
    uint8_t st;

    if (!kite_log_depth_valid(c->log_depth, KITE_CQ_MAX_LOG_DEPTH)) {
        return kite_bad_param("CQ log depth", c->log_depth);
    }
    /* EQ 0 is the async EQ: completions go to completion EQs only. */
    if (!eqn) {
        return kite_bad_param("CQ eqn", eqn);
    }
    if (eqn >= KITE_DEF_MAX_EQ || !s->eq[eqn].valid) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: CQ for unknown EQ %u\n", eqn);
        return KITE_STS_BAD_HANDLE;
    }
    if (!kite_obj_room(s, s->num_cq, KITE_DEF_MAX_CQ)) {
        return KITE_STS_NO_RESOURCES;
    }
    st = kite_cq_ring(s, &c->ring, c->log_depth, &ring);
    if (st != KITE_STS_OK) {
        return st;
    }
    st = kite_dbrec_check(s, le64_to_cpu(c->dbrec),
                          sizeof(struct kite_cq_dbrec));
    if (st != KITE_STS_OK) {
        return st;
    }
    cq = kite_table_alloc(&s->cq_tab, KITE_CQ_FIRST, &cqn);
    if (!cq) {
        return KITE_STS_NO_RESOURCES;
    }
    cq->valid = true;
    cq->owner = actor;
    cq->eqn = eqn;
    cq->log_depth = c->log_depth;
    cq->ring = ring;
    cq->dbrec = le64_to_cpu(c->dbrec);
    s->eq[eqn].cq_refs++;
    if (actor) {
        s->uctx[actor].refs++;
    }
    s->num_cq++;
    res->out[0] = cqn;
    trace_kite_cq_create(cqn, actor, eqn, c->log_depth,
                         ring.level, ring.npages);
    return KITE_STS_OK;
}

uint8_t kite_cmd_modify_cq(KiteState *s, const struct kite_aq_cmd *cmd,
                           KiteCmdResult *res)
{
    const struct kite_cmd_modify_cq *c = &cmd->modify_cq;
    uint32_t cqn = le32_to_cpu(c->cqn);
    KitePbl ring;
    KiteCq *cq;
    uint8_t st;

    cq = kite_cq_get(s, cqn, le32_to_cpu(cmd->hdr.uctx), &st);
    if (!cq) {
        return st;
    }
    st = kite_cq_ring(s, &c->ring, c->log_depth, &ring);
    if (st != KITE_STS_OK) {
        return st;
    }
    /* The new ring must hold the CQEs the consumer has not polled yet. */
    if (kite_ring_used(cq->pi, cq->ci) > (1u << c->log_depth)) {
        return kite_bad_param("CQ depth below outstanding CQEs",
                              kite_ring_used(cq->pi, cq->ci));
    }
    res->out[0] = cq->pi;
    trace_kite_cq_modify(cqn, cq->pi, c->log_depth, ring.level, ring.npages);
    /* The next CQE goes to index 0 of the new ring; the arm is kept. */
    cq->ring = ring;
    cq->log_depth = c->log_depth;
    cq->pi = cq->ci = 0;
    return KITE_STS_OK;
}

uint8_t kite_cmd_query_cq(KiteState *s, const struct kite_aq_cmd *cmd,
                          KiteCmdResult *res)
{
    uint32_t cqn = le32_to_cpu(cmd->query_obj.handle);
    KiteCq *cq;
    uint8_t st;

    cq = kite_cq_get(s, cqn, le32_to_cpu(cmd->hdr.uctx), &st);
    if (!cq) {
        return st;
    }
    res->out[KITE_CQ_QUERY_LOG_DEPTH] = cq->log_depth;
    res->out[KITE_CQ_QUERY_EQN] = cq->eqn;
    res->out[KITE_CQ_QUERY_FLAGS] = cq->arm ? KITE_CQ_FLAG_ARMED : 0;
    res->out[KITE_CQ_QUERY_PI] = cq->pi;
    trace_kite_cq_query(cqn, cq->pi, cq->ci, cq->arm);
    return KITE_STS_OK;
}

uint8_t kite_cmd_destroy_cq(KiteState *s, const struct kite_aq_cmd *cmd,
                            KiteCmdResult *res)
{
    uint32_t cqn = le32_to_cpu(cmd->destroy.handle);
    uint32_t actor = le32_to_cpu(cmd->hdr.uctx);
    KiteCq *cq;
    uint8_t st;

    cq = kite_cq_get(s, cqn, actor, &st);
    if (!cq) {
        return st;
    }
    if (cq->refs) {
        return KITE_STS_BUSY;
    }
    s->eq[cq->eqn].cq_refs--;
    if (actor) {
        s->uctx[actor].refs--;
    }
    cq->valid = false;
    kite_table_free(&s->cq_tab, cqn);
    s->num_cq--;
    trace_kite_cq_destroy(cqn);
    return KITE_STS_OK;
}

/*
 * KITE_DB_CQ on doorbell page @page: records the consumer index and arms.
 * Only the owner's page is accepted; a consumer index ahead of the
 * producer is ignored and counted. Arming while CQEs beyond the consumer
 * index exist posts the completion event at once.
 */
void kite_cq_doorbell(KiteState *s, uint32_t page, uint64_t val)
{
    uint32_t cqn = kite_db_num(val);
    uint32_t ci = kite_db_index(val);
    uint8_t flags = kite_db_flags(val);
    KiteCq *cq = kite_cq_find(s, cqn);

    trace_kite_cq_doorbell(page, cqn, ci, flags);
    s->cnt.db_mmio++;
    if (!cq || cq->owner != page) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: CQ doorbell on page %u for "
                      "CQ %u it does not own\n", page, cqn);
        s->cnt.db_rejected++;
        return;
    }
    if (kite_ring_used(cq->pi, ci) > (1u << cq->log_depth)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: CQ %u consumer index %u "
                      "beyond producer %u\n", cqn, ci, cq->pi);
        s->cnt.db_rejected++;
        return;
    }
    cq->ci = ci;
    if (flags & KITE_DB_CQ_ARM_NEXT) {
        cq->arm = KITE_DB_CQ_ARM_NEXT;
    } else if (flags & KITE_DB_CQ_ARM_SOLICITED) {
        cq->arm = KITE_DB_CQ_ARM_SOLICITED;
    }
    if (cq->arm && cq->pi != cq->ci) {
        cq->arm = 0;
        kite_eq_post(s, cq->eqn, KITE_EVT_COMPLETION, cqn, 0);
    }
}

/* The CQ cannot take more CQEs: error state and KITE_EVT_CQ_ERR. */
static void kite_cq_error(KiteState *s, KiteCq *cq, uint32_t cqn,
                          const char *why)
{
    qemu_log_mask(LOG_GUEST_ERROR, "kite: CQ %u %s: CQ in error\n", cqn, why);
    trace_kite_cq_error(cqn, cq->pi, cq->ci);
    cq->error = true;
    kite_eq_post(s, 0, KITE_EVT_CQ_ERR, cqn, 0);
}

/*
 * Stores CQE @e at @dma with one mapping of guest memory: bytes 0..30,
 * a write barrier, then the flags byte, so a consumer that sees the new
 * phase (and issues its read barrier) sees the whole CQE. Anything but
 * RAM mapped whole is written with two DMA writes in the same order: a
 * mapping of MMIO or unassigned space is a bounce buffer whose failed
 * write-back nobody would see, and the CQE would be lost silently.
 */
static bool kite_cqe_store(KiteState *s, uint64_t dma,
                           const struct kite_cqe *e)
{
    PCIDevice *pci = PCI_DEVICE(s);
    dma_addr_t len = KITE_CQE_SIZE;
    uint8_t *p = NULL;

    if (kite_dma_is_ram(pci, dma, len, true)) {
        p = pci_dma_map(pci, dma, &len, DMA_DIRECTION_FROM_DEVICE);
    }
    if (p && len == KITE_CQE_SIZE) {
        memcpy(p, e, KITE_CQE_FLAGS_OFF);
        /* The body before the phase: the consumer's read barrier pairs. */
        smp_wmb();
        qatomic_set(p + KITE_CQE_FLAGS_OFF, e->flags);
        pci_dma_unmap(pci, p, len, DMA_DIRECTION_FROM_DEVICE, len);
        return true;
    }
    if (p) {
        pci_dma_unmap(pci, p, len, DMA_DIRECTION_FROM_DEVICE, 0);
    }
    return pci_dma_write(pci, dma, e, KITE_CQE_FLAGS_OFF) == MEMTX_OK &&
           pci_dma_write(pci, dma + KITE_CQE_FLAGS_OFF, &e->flags, 1) ==
           MEMTX_OK;
}

/*
 * Writes @c, a CQE the RoCEv2 engine filled in its little-endian ABI
 * layout, at the CQ's producer index with the pass's phase bit, and posts
 * the completion event the arm asks for. false when the CQ is unknown, in
 * error, or goes into error now (overflow, ring not mapped or writable).
 */
bool kite_cq_post(KiteState *s, uint32_t cqn, const struct kite_cqe *c)
{
    KiteCq *cq = kite_cq_find(s, cqn);
    struct kite_cqe e;
    uint64_t dma, contig;
    uint32_t slot;
    bool event;

    if (!cq || !kite_running(s) || cq->error) {
        return false;
    }
    if (kite_ring_used(cq->pi, cq->ci) >= (1u << cq->log_depth)) {
        kite_dbrec_cq_refresh(s, cq, cqn);
    }
    if (kite_ring_used(cq->pi, cq->ci) >= (1u << cq->log_depth)) {
        kite_cq_error(s, cq, cqn, "overflow");
        return false;
    }
    e = *c;
    e.flags = (c->flags & ~KITE_CQE_F_PHASE) |
              (kite_ring_phase(cq->pi, cq->log_depth) ? KITE_CQE_F_PHASE : 0);
    slot = kite_ring_slot(cq->pi, cq->log_depth);
    /* 32-byte entries in pages of at least 4 KiB: never split. */
    if (!kite_pbl_translate(s, &cq->ring, (uint64_t)slot * KITE_CQE_SIZE,
                            &dma, &contig) || contig < KITE_CQE_SIZE) {
        kite_cq_error(s, cq, cqn, "ring not mapped");
        return false;
    }
    if (!kite_cqe_store(s, dma, &e)) {
        kite_cq_error(s, cq, cqn, "ring not writable");
        return false;
    }
    trace_kite_cqe(cqn, cq->pi, le32_to_cpu(c->qpn), le16_to_cpu(c->wqe_idx),
                   c->opcode, c->status, le32_to_cpu(c->byte_len));
    cq->pi++;
    switch (cq->arm) {
    case KITE_DB_CQ_ARM_NEXT:
        event = true;
        break;
    case KITE_DB_CQ_ARM_SOLICITED:
        event = (c->flags & KITE_CQE_F_SOLICITED) ||
                c->status != KITE_CQE_SUCCESS;
        break;
    default:
        event = false;
    }
    if (event) {
        cq->arm = 0;
        kite_eq_post(s, cq->eqn, KITE_EVT_COMPLETION, cqn, 0);
    }
    return true;
}
