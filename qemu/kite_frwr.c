/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: fast-register MRs and invalidation.
 *
 * ALLOC_MR creates an MR in the free state with room for max_pages page
 * addresses, taken from the MR page-copy budget there and then, so that a
 * REG_MR WQE, executed in the send queue's order, never allocates: it
 * copies its page list (at most CAP_MAX_FRWR_PAGES entries) into that room,
 * checks every entry and makes the MR valid under the WQE's key. LOCAL_INV
 * WQEs and received SEND_INV messages make a valid fast-register MR (with
 * no window bound) or type-2B window free again. Fast registration is for
 * the kernel only: its page list names DMA addresses.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci.h"
#include "kite.h"
#include "trace.h"

uint8_t kite_cmd_alloc_mr(KiteState *s, const struct kite_aq_cmd *cmd,
                          KiteCmdResult *res)
{
    const struct kite_cmd_alloc_mr *c = &cmd->alloc_mr;
    uint32_t actor = le32_to_cpu(cmd->hdr.uctx);
    uint32_t pdn = le32_to_cpu(c->pdn);
    uint32_t max_pages = le32_to_cpu(c->max_pages);
    uint32_t kv = le32_to_cpu(c->key_variant);
    uint64_t bytes = (uint64_t)max_pages * sizeof(uint64_t);
    uint64_t *pages;
    KitePd *pd;
    KiteMr *mr;
    uint8_t st;

    if (actor) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: ALLOC_MR from context %u\n",
                      actor);
        return KITE_STS_PERMISSION;
    }
    pd = kite_pd_get(s, pdn, actor, &st);
    if (!pd) {
        return st;
    }
    if (!max_pages || max_pages > KITE_DEF_MAX_FRWR_PAGES) {
        return kite_bad_param("ALLOC_MR max_pages", max_pages);
    }
    if (kv & ~KITE_KEY_VARIANT_MASK) {
        return kite_bad_param("key_variant", kv);
    }
    if (c->reserved) {
        return kite_bad_param("ALLOC_MR reserved", le32_to_cpu(c->reserved));
    }
    if (!kite_obj_room(s, s->num_mr, KITE_DEF_MAX_MR) ||
        !kite_mr_cache_room(s, bytes)) {
        return KITE_STS_NO_RESOURCES;
    }
    pages = g_try_malloc(bytes);
    if (!pages) {
        return KITE_STS_NO_RESOURCES;
    }
    mr = kite_mr_new(s, KITE_MR_KIND_FAST, pd, pdn, actor, kv);
    if (!mr) {
        g_free(pages);
        return KITE_STS_NO_RESOURCES;
    }
    mr->pages = pages;
    mr->cached = max_pages;
    mr->max_pages = max_pages;
    s->mr_cache_bytes += bytes;
    res->out[0] = mr->key;
    trace_kite_mr_alloc(mr->key, pdn, max_pages);
    return KITE_STS_OK;
}

/*
 * The REG_MR WQE @w of QP @qp, checked in the order hardware.rst gives;
 * the CQE status.
 */
static uint8_t kite_frwr_check_reg(KiteState *s, KiteQp *qp,
                                   const struct kite_wqe_reg_mr *w,
                                   KiteMr **out)
{
    uint64_t iova = le64_to_cpu(w->iova);
    uint64_t length = le64_to_cpu(w->length);
    uint32_t key = le32_to_cpu(w->key);
    uint32_t npages = le32_to_cpu(w->npages);
    uint8_t shift = w->page_shift;
    KiteMr *mr = kite_mr_slot(s, kite_key_index(key));

    if (qp->owner) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: QP %u of context %u posted a "
                      "REG_MR WQE\n", qp->qpn, qp->owner);
        return KITE_CQE_LOC_QP_OP_ERR;
    }
    if (w->reserved[0] || w->reserved[1] || w->reserved[2] ||
        !kite_mr_access_ok(le32_to_cpu(w->access)) ||
        shift >= 64 || !(KITE_DEF_PAGE_SIZES & (1ull << shift)) ||
        !length || length > KITE_DEF_MAX_MR_SIZE ||
        !kite_range_ok(iova, length) ||
        !kite_mr_pages_ok(iova, length, shift, npages) ||
        npages > KITE_DEF_MAX_FRWR_PAGES ||
        (mr && mr->kind == KITE_MR_KIND_FAST && npages > mr->max_pages)) {
        return KITE_CQE_LOC_QP_OP_ERR;
    }
    if (!mr || mr->kind != KITE_MR_KIND_FAST || mr->pdn != qp->pdn ||
        mr->live) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: REG_MR WQE for key 0x%x: not "
                      "a free fast-register MR of PD %u\n", key, qp->pdn);
        return KITE_CQE_LOC_PROT_ERR;
    }
    *out = mr;
    return KITE_CQE_SUCCESS;
}

/*
 * REG_MR WQE: the page list goes into the room ALLOC_MR reserved (the MR
 * is free, so nothing uses it), then every entry is checked.
 */
uint8_t kite_frwr_reg(KiteState *s, KiteQp *qp,
                      const struct kite_wqe_reg_mr *w)
{
    uint64_t pbl_addr = le64_to_cpu(w->pbl_addr);
    uint32_t npages = le32_to_cpu(w->npages);
    KiteMr *mr = NULL;
    uint32_t i;
    uint8_t st;

    st = kite_frwr_check_reg(s, qp, w, &mr);
    if (st != KITE_CQE_SUCCESS) {
        return st;
    }
    if (!QEMU_IS_ALIGNED(pbl_addr, sizeof(*mr->pages)) ||
        !kite_range_ok(pbl_addr, (uint64_t)npages * sizeof(*mr->pages)) ||
        pci_dma_read(PCI_DEVICE(s), pbl_addr, mr->pages,
                     (uint64_t)npages * sizeof(*mr->pages)) != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: REG_MR WQE page list at 0x%"
                      PRIx64 " not readable\n", pbl_addr);
        return KITE_CQE_LOC_PROT_ERR;
    }
    for (i = 0; i < npages; i++) {
        mr->pages[i] = le64_to_cpu(mr->pages[i]);
        if (!kite_pbl_entry_ok(mr->pages[i], w->page_shift)) {
            qemu_log_mask(LOG_GUEST_ERROR, "kite: REG_MR WQE page %u: bad "
                          "address 0x%" PRIx64 "\n", i, mr->pages[i]);
            return KITE_CQE_LOC_PROT_ERR;
        }
    }
    mr->live = true;
    mr->key = le32_to_cpu(w->key);
    mr->access = le32_to_cpu(w->access);
    mr->iova = le64_to_cpu(w->iova);
    mr->length = le64_to_cpu(w->length);
    mr->pbl.addr = pbl_addr;
    mr->pbl.npages = npages;
    mr->pbl.page_shift = w->page_shift;
    mr->pbl.level = KITE_PBL_LEVEL_1;
    return KITE_CQE_SUCCESS;
}

/*
 * Invalidation of @key for QP @qp: a valid fast-register MR of the QP's
 * PD with no window bound (kernel QPs only), or a valid type-2B window of
 * the PD, bound to @qp too when @remote (SEND_INV). False: not allowed.
 */
static bool kite_frwr_invalidate(KiteState *s, KiteQp *qp, uint32_t key,
                                 bool remote)
{
    KiteMr *mr = kite_mr_slot(s, kite_key_index(key));

    if (!mr || !mr->live || mr->key != key || mr->pdn != qp->pdn) {
        return false;
    }
    switch (mr->kind) {
    case KITE_MR_KIND_FAST:
        if (qp->owner || mr->mw_bound) {
            return false;
        }
        mr->live = false;
        return true;
    case KITE_MR_KIND_MW2:
        if (remote && mr->mw_qpn != qp->qpn) {
            return false;
        }
        kite_mw_invalidate(s, mr);
        return true;
    default:
        return false;
    }
}

/*
 * LOCAL_INV WQE (@remote false) or received SEND_INV of @key: the CQE
 * status, LOC_PROT_ERR or REM_INV_REQ_ERR when it is refused.
 */
uint8_t kite_frwr_inv(KiteState *s, KiteQp *qp, uint32_t key, bool remote)
{
    if (!kite_frwr_invalidate(s, qp, key, remote)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: QP %u: %s of key 0x%x "
                      "refused\n", qp->qpn, remote ? "SEND_INV" : "LOCAL_INV",
                      key);
        return remote ? KITE_CQE_REM_INV_REQ_ERR : KITE_CQE_LOC_PROT_ERR;
    }
    return KITE_CQE_SUCCESS;
}
