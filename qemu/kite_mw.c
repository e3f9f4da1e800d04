/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: memory windows.
 *
 * A window is an entry of the MR table (MRs and windows share the key
 * space). ALLOC_MW creates it unbound; a BIND_MW WQE binds it to a range
 * of a valid MR that allows MW_BIND, with remote rights of its own, and
 * counts it on the MR, which can then be neither deregistered,
 * re-registered nor invalidated until the window is unbound. Type 1
 * windows belong to their PD and are rebound or unbound (length 0) by
 * BIND_MW; type 2B windows are bound to the QP that bound them, accept
 * remote access only from it and become free by invalidation (LOCAL_INV,
 * SEND_INV: kite_frwr.c). Remote access through a window key is resolved
 * here and translated through the MR (kite_mr_map()).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci.h"
#include "kite.h"
#include "trace.h"

uint8_t kite_cmd_alloc_mw(KiteState *s, const struct kite_aq_cmd *cmd,
                          KiteCmdResult *res)
{
    const struct kite_cmd_alloc_mw *c = &cmd->alloc_mw;
    uint32_t actor = le32_to_cpu(cmd->hdr.uctx);
    uint32_t pdn = le32_to_cpu(c->pdn);
    uint32_t kv = le32_to_cpu(c->key_variant);
    KitePd *pd;
    KiteMr *mw;
    uint8_t st;

    pd = kite_pd_get(s, pdn, actor, &st);
    if (!pd) {
        return st;
    }
    if (c->type != KITE_MW_TYPE_1 && c->type != KITE_MW_TYPE_2) {
        return kite_bad_param("window type", c->type);
    }
    if (c->reserved[0] || c->reserved[1] || c->reserved[2] || c->reserved2) {
        return kite_bad_param("ALLOC_MW reserved", le32_to_cpu(c->reserved2));
    }
    if (kv & ~KITE_KEY_VARIANT_MASK) {
        return kite_bad_param("key_variant", kv);
    }
    if (!kite_obj_room(s, s->num_mw, KITE_DEF_MAX_MW)) {
        return KITE_STS_NO_RESOURCES;
    }
    mw = kite_mr_new(s, c->type == KITE_MW_TYPE_1 ? KITE_MR_KIND_MW1 :
                     KITE_MR_KIND_MW2, pd, pdn, actor, kv);
    if (!mw) {
        return KITE_STS_NO_RESOURCES;
    }
    res->out[0] = mw->key;
    trace_kite_mw_alloc(mw->key, pdn, actor, c->type);
    return KITE_STS_OK;
}

/*
 * Unbinds @mw if it is bound: its MR (and for type 2B its QP) counts one
 * window less.
 */
void kite_mw_invalidate(KiteState *s, KiteMr *mw)
{
    KiteQp *qp;
    KiteMr *mr;

    if (!mw->live) {
        return;
    }
    mr = kite_mr_slot(s, mw->mw_mr);
    assert(mr && mr->mw_bound);
    mr->mw_bound--;
    if (mw->kind == KITE_MR_KIND_MW2) {
        qp = kite_qp_find(s, mw->mw_qpn);
        assert(qp && qp->mw_bound);
        qp->mw_bound--;
    }
    mw->live = false;
    mw->access = 0;
    mw->iova = mw->length = 0;
    mw->mw_mr = mw->mw_qpn = 0;
}

/*
 * DEALLOC_MW: the window's index names it (a bound window's key may be a
 * variant only its binder knows); a bound window is unbound first.
 */
uint8_t kite_cmd_dealloc_mw(KiteState *s, const struct kite_aq_cmd *cmd,
                            KiteCmdResult *res)
{
    uint32_t key = le32_to_cpu(cmd->destroy.handle);
    uint32_t actor = le32_to_cpu(cmd->hdr.uctx);
    KiteMr *mw = kite_mr_slot(s, kite_key_index(key));

    if (!mw || !kite_mr_is_window(mw)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: DEALLOC_MW of unknown key "
                      "0x%x\n", key);
        return KITE_STS_BAD_HANDLE;
    }
    if (mw->owner != actor) {
        return KITE_STS_PERMISSION;
    }
    kite_mw_invalidate(s, mw);
    trace_kite_mw_dealloc(mw->key, actor);
    kite_mr_release(s, mw);
    return KITE_STS_OK;
}

/*
 * The MR a BIND_MW WQE of @qp names, if the window may be bound to
 * [@addr, @addr + @length) of it with @access.
 */
static KiteMr *kite_mw_bind_target(KiteState *s, KiteQp *qp, uint32_t key,
                                   uint32_t access, uint64_t addr,
                                   uint64_t length)
{
    KiteMr *mr = kite_mr_slot(s, kite_key_index(key));

    if (!mr || kite_mr_is_window(mr) || !mr->live || mr->key != key ||
        mr->pdn != qp->pdn || mr->dma_all ||
        !(mr->access & KITE_ACCESS_MW_BIND)) {
        return NULL;
    }
    if (!kite_mr_covers(mr, addr, length)) {
        return NULL;
    }
    /* A window that writes needs an MR the device may write. */
    if ((access & (KITE_ACCESS_REMOTE_WRITE | KITE_ACCESS_REMOTE_ATOMIC)) &&
        !(mr->access & KITE_ACCESS_LOCAL_WRITE)) {
        return NULL;
    }
    return mr;
}

uint8_t kite_mw_bind(KiteState *s, KiteQp *qp,
                     const struct kite_wqe_bind_mw *w)
{
    uint64_t addr = le64_to_cpu(w->addr);
    uint64_t length = le64_to_cpu(w->length);
    uint32_t mw_key = le32_to_cpu(w->mw_key);
    uint32_t mr_key = le32_to_cpu(w->mr_key);
    uint32_t access = le32_to_cpu(w->access);
    KiteMr *mw = kite_mr_slot(s, kite_key_index(mw_key));
    KiteMr *mr = NULL;

    if (w->reserved || (access & ~KITE_ACCESS_REMOTE)) {
        return KITE_CQE_LOC_QP_OP_ERR;
    }
    if (!mw || !kite_mr_is_window(mw) || mw->pdn != qp->pdn) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: QP %u: BIND_MW of unknown "
                      "window 0x%x\n", qp->qpn, mw_key);
        return KITE_CQE_MW_BIND_ERR;
    }
    /* A type-2B window is bound once, then invalidated; never unbound. */
    if (mw->kind == KITE_MR_KIND_MW2 && (mw->live || !length)) {
        return KITE_CQE_MW_BIND_ERR;
    }
    if (length) {
        mr = kite_mw_bind_target(s, qp, mr_key, access, addr, length);
        if (!mr) {
            qemu_log_mask(LOG_GUEST_ERROR, "kite: QP %u: BIND_MW to MR 0x%x "
                          "[0x%" PRIx64 ", +0x%" PRIx64 ") refused\n",
                          qp->qpn, mr_key, addr, length);
            return KITE_CQE_MW_BIND_ERR;
        }
    }
    kite_mw_invalidate(s, mw);
    mw->key = mw_key;
    if (mr) {
        mw->live = true;
        mw->access = access;
        mw->iova = addr;
        mw->length = length;
        mw->mw_mr = kite_key_index(mr_key);
        mw->mw_qpn = 0;
        if (mw->kind == KITE_MR_KIND_MW2) {
            mw->mw_qpn = qp->qpn;
            qp->mw_bound++;
        }
        mr->mw_bound++;
    }
    return KITE_CQE_SUCCESS;
}

/*
 * DESTROY_QP of @qp: the type-2B windows bound to it become free, as no
 * QP can reach them any more (and their MRs may go). The scan of the MR
 * table runs only for a QP that has such windows.
 */
void kite_mw_qp_destroyed(KiteState *s, KiteQp *qp)
{
    uint32_t i;

    for (i = kite_table_next(&s->mr_tab, 0);
         qp->mw_bound && i < s->mr_tab.size;
         i = kite_table_next(&s->mr_tab, i + 1)) {
        KiteMr *mw = kite_table_get(&s->mr_tab, i);

        if (mw->kind == KITE_MR_KIND_MW2 && mw->live &&
            mw->mw_qpn == qp->qpn) {
            kite_mw_invalidate(s, mw);
        }
    }
}

/*
 * Remote access with @access to [@addr, @addr + @len) through the bound
 * window @mw (its key matched) by QP @qpn of PD @pdn: the MR to translate
 * through, or NULL with *@status LOC_PROT_ERR (local use, PD, QP, range) or
 * LOC_ACCESS_ERR (rights). @len 0 checks neither range nor rights.
 */
KiteMr *kite_mw_resolve(KiteState *s, KiteMr *mw, uint32_t pdn, uint32_t qpn,
                        uint32_t access, uint64_t addr, uint64_t len,
                        uint8_t *status)
{
    KiteMr *mr;

    *status = KITE_CQE_LOC_PROT_ERR;
    if (!(access & KITE_ACCESS_REMOTE) || mw->pdn != pdn ||
        (mw->kind == KITE_MR_KIND_MW2 && mw->mw_qpn != qpn)) {
        return NULL;
    }
    if (len && !kite_mr_covers(mw, addr, len)) {
        return NULL;
    }
    if (len && (mw->access & access) != access) {
        *status = KITE_CQE_LOC_ACCESS_ERR;
        return NULL;
    }
    mr = kite_mr_slot(s, mw->mw_mr);
    /* A bound window keeps its MR valid (DEREG, REREG, LOCAL_INV refused). */
    return mr && mr->live ? mr : NULL;
}
