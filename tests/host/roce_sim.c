/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Host simulation harness for the Kite RoCEv2 engine: see roce_sim.h.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kite_roce_abi.h"
#include "kite_roce_crc.h"
#include "kite_roce_pkt.h"
#include "roce_sim.h"

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n, sz);

    if (!p) {
        fprintf(stderr, "roce_sim: out of memory\n");
        abort();
    }
    return p;
}

uint64_t sim_rand(Sim *s)
{
    /* xorshift64* */
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return s->rng * 0x2545f4914f6cdd1dull;
}

static bool sim_chance(Sim *s, uint32_t ppm)
{
    return ppm && (sim_rand(s) >> 32) % 1000000 < ppm;
}

uint8_t *sim_mem(SimNode *n, uint64_t off)
{
    return n->mem + off;
}

/* ---- engine callbacks ---- */

#define SIM_REMOTE_ACCESS   (KITE_ACCESS_REMOTE_WRITE | \
                             KITE_ACCESS_REMOTE_READ | \
                             KITE_ACCESS_REMOTE_ATOMIC)

static bool sim_is_mw(const SimMr *m)
{
    return m->kind == SIM_MW_1 || m->kind == SIM_MW_2;
}

/* The valid MR or bound window @key names in PD @pdn, or NULL. */
static SimMr *sim_key(SimNode *n, uint32_t pdn, uint32_t key)
{
    uint32_t idx = kite_key_index(key);
    SimMr *m;

    if (idx >= SIM_MAX_MRS) {
        return NULL;
    }
    m = &n->mr[idx];
    if (!m->used || !m->valid || m->key != key ||
        m->pdn != pdn) {
        return NULL;
    }
    return m;
}

static uint8_t cb_mem_rw(void *opaque, void *qp, uint32_t pdn,
                         uint32_t key, uint32_t access, uint64_t va,
                         void *buf, uint32_t len, bool write)
{
    SimNode *n = opaque;
    SimMr *mr = sim_key(n, pdn, key), *map;
    uint64_t o;

    /* A window: remote access only, type 2B from its QP only. */
    if (!mr || (sim_is_mw(mr) && (!(access & SIM_REMOTE_ACCESS) ||
                                  (mr->kind == SIM_MW_2 && mr->qp != qp)))) {
        n->mem_errors++;
        return KITE_CQE_LOC_PROT_ERR;
    }
    if (len) {
        if (va < mr->iova || va - mr->iova > mr->len ||
            len > mr->len - (va - mr->iova)) {
            n->mem_errors++;
            return KITE_CQE_LOC_PROT_ERR;
        }
    }
    if (access & ~mr->access) {
        n->mem_errors++;
        return KITE_CQE_LOC_ACCESS_ERR;
    }
    if (!len) {
        return KITE_CQE_SUCCESS;
    }
    /* A window's range lies within its MR's: reach the bytes through it. */
    map = sim_is_mw(mr) ? &n->mr[mr->mr_idx] : mr;
    o = map->off + (va - map->iova);
    if (o + len > n->mem_size) {
        return KITE_CQE_GENERAL_ERR;
    }
    if (write) {
        memcpy(n->mem + o, buf, len);
        if (access & KITE_ACCESS_REMOTE_ATOMIC) {
            n->atomic_writes++;
        }
    } else {
        memcpy(buf, n->mem + o, len);
        if (access & KITE_ACCESS_REMOTE_READ) {
            n->remote_reads++;
        }
    }
    return KITE_CQE_SUCCESS;
}

/*
 * Invalidate @key for QP @qp of PD @pdn: a valid fast-register MR with no
 * window, or a type-2B window bound to @qp. false: not allowed.
 */
static bool sim_invalidate(SimNode *n, void *qp, uint32_t pdn, uint32_t key)
{
    SimMr *m = sim_key(n, pdn, key);

    if (!m || (m->kind == SIM_MR_FAST ? m->windows != 0 :
               m->kind != SIM_MW_2 || m->qp != qp)) {
        return false;
    }
    if (m->kind == SIM_MW_2) {
        n->mr[m->mr_idx].windows--;
    }
    m->valid = false;
    return true;
}

/*
 * REG_MR: the page list is @npages u64 node memory offsets at node memory
 * offset pbl_addr; the sim maps only physically contiguous lists.
 */
static uint8_t sim_fast_reg(SimNode *n, uint32_t pdn,
                            const struct kite_wqe_reg_mr *r)
{
    uint32_t key = kr_le32(&r->key), idx = kite_key_index(key);
    uint32_t npages = kr_le32(&r->npages), i;
    uint64_t iova = kr_le64(&r->iova), len = kr_le64(&r->length);
    uint64_t pbl = kr_le64(&r->pbl_addr), page0 = 0, ps;
    SimMr *m;

    if (r->reserved[0] || r->reserved[1] || r->reserved[2] ||
        r->page_shift < 12 || r->page_shift > 30 || !len ||
        iova + len < iova) {
        return KITE_CQE_LOC_QP_OP_ERR;
    }
    ps = 1ull << r->page_shift;
    if (npages != ((iova & (ps - 1)) + len + ps - 1) >> r->page_shift) {
        return KITE_CQE_LOC_QP_OP_ERR;
    }
    if (idx >= SIM_MAX_MRS) {
        return KITE_CQE_LOC_PROT_ERR;
    }
    m = &n->mr[idx];
    if (!m->used || m->kind != SIM_MR_FAST ||
        m->valid || m->pdn != pdn || npages > m->max_pages ||
        pbl + (uint64_t)npages * 8 > n->mem_size) {
        return KITE_CQE_LOC_PROT_ERR;
    }
    for (i = 0; i < npages; i++) {
        __le64 e;
        uint64_t pa;

        memcpy(&e, n->mem + pbl + i * 8ull, sizeof(e));
        pa = kr_le64(&e);
        if (!i) {
            page0 = pa;
        }
        if ((pa & (ps - 1)) || pa != page0 + i * ps ||
            pa + ps > n->mem_size) {
            return KITE_CQE_LOC_PROT_ERR;
        }
    }
    m->key = key;
    m->iova = iova;
    m->len = len;
    m->access = kr_le32(&r->access);
    m->off = page0 + (iova & (ps - 1));
    m->valid = true;
    return KITE_CQE_SUCCESS;
}

static uint8_t sim_bind(SimNode *n, void *qp, uint32_t pdn,
                        const struct kite_wqe_bind_mw *b)
{
    uint32_t mw_key = kr_le32(&b->mw_key), idx = kite_key_index(mw_key);
    uint64_t addr = kr_le64(&b->addr), len = kr_le64(&b->length);
    uint32_t access = kr_le32(&b->access);
    SimMr *w, *mr;

    if (b->reserved || (access & ~SIM_REMOTE_ACCESS)) {
        return KITE_CQE_LOC_QP_OP_ERR;
    }
    if (idx >= SIM_MAX_MRS) {
        return KITE_CQE_MW_BIND_ERR;
    }
    w = &n->mr[idx];
    if (!w->used || !sim_is_mw(w) || w->pdn != pdn ||
        (w->kind == SIM_MW_2 && w->valid)) {
        return KITE_CQE_MW_BIND_ERR;
    }
    mr = sim_key(n, pdn, kr_le32(&b->mr_key));
    if (!mr || sim_is_mw(mr) || !(mr->access & KITE_ACCESS_MW_BIND) ||
        addr < mr->iova || addr - mr->iova > mr->len ||
        len > mr->len - (addr - mr->iova)) {
        return KITE_CQE_MW_BIND_ERR;
    }
    if (w->valid) {
        n->mr[w->mr_idx].windows--;
    }
    w->valid = len != 0;
    if (w->valid) {
        w->key = mw_key;
        w->iova = addr;
        w->len = len;
        w->access = access;
        w->mr_idx = kite_key_index(mr->key);
        w->qp = w->kind == SIM_MW_2 ? qp : NULL;
        mr->windows++;
    }
    return KITE_CQE_SUCCESS;
}

static uint8_t cb_mem_op(void *opaque, void *qp, uint32_t pdn,
                         const void *wqe, uint32_t len)
{
    SimNode *n = opaque;
    struct kite_sq_wqe_hdr hdr;
    const uint8_t *seg = (const uint8_t *)wqe + sizeof(hdr);
    struct kite_wqe_reg_mr r;
    struct kite_wqe_bind_mw b;

    n->mem_ops++;
    n->cqes_at_mem_op = n->cqes;
    n->last_mem_op_len = len;
    memcpy(n->last_mem_op, wqe,
           len < sizeof(n->last_mem_op) ? len : sizeof(n->last_mem_op));
    if (len < sizeof(hdr)) {
        return KITE_CQE_LOC_QP_OP_ERR;
    }
    memcpy(&hdr, wqe, sizeof(hdr));
    switch (hdr.opcode) {
    case KITE_WQE_LOCAL_INV:
        return sim_invalidate(n, qp, pdn, kr_le32(&hdr.imm_data)) ?
               KITE_CQE_SUCCESS : KITE_CQE_LOC_PROT_ERR;
    case KITE_WQE_REG_MR:
        if (len < sizeof(hdr) + sizeof(r)) {
            return KITE_CQE_LOC_QP_OP_ERR;
        }
        memcpy(&r, seg, sizeof(r));
        return sim_fast_reg(n, pdn, &r);
    case KITE_WQE_BIND_MW:
        if (len < sizeof(hdr) + sizeof(b)) {
            return KITE_CQE_LOC_QP_OP_ERR;
        }
        memcpy(&b, seg, sizeof(b));
        return sim_bind(n, qp, pdn, &b);
    default:
        return KITE_CQE_LOC_QP_OP_ERR;
    }
}

static uint8_t cb_remote_inv(void *opaque, void *qp, uint32_t pdn,
                             uint32_t rkey)
{
    SimNode *n = opaque;

    n->remote_invs++;
    n->last_inv_rkey = rkey;
    return sim_invalidate(n, qp, pdn, rkey) ? KITE_CQE_SUCCESS :
           KITE_CQE_REM_INV_REQ_ERR;
}

SimQp *sim_qp(SimNode *n, uint32_t qpn)
{
    uint32_t i = qpn - SIM_QPN_BASE;

    if (qpn < SIM_QPN_BASE || i >= SIM_MAX_QPS || !n->qp[i].valid) {
        return NULL;
    }
    return &n->qp[i];
}

static bool cb_wqe_read(void *opaque, void *qp, bool rq, uint32_t slot,
                        void *buf, uint32_t len)
{
    SimQp *q = qp;
    uint32_t stride;

    (void)opaque;
    stride = 1u << (rq ? q->cfg.rq_log_stride : q->cfg.sq_log_stride);
    if (len > stride ||
        slot >= (1u << (rq ? q->cfg.rq_log_depth : q->cfg.sq_log_depth))) {
        return false;
    }
    memcpy(buf, (rq ? q->rq : q->sq) + (size_t)slot * stride, len);
    return true;
}

static bool cb_cq_post(void *opaque, uint32_t cqn, const struct kite_cqe *cqe)
{
    SimNode *n = opaque;
    SimCq *cq;
    struct kite_cqe *slot;

    if (cqn >= SIM_MAX_CQS || !n->cq[cqn].valid) {
        return false;
    }
    cq = &n->cq[cqn];
    if (cq->error || cq->pi - cq->ci >= (1u << cq->log_depth)) {
        cq->error = true;
        return false;
    }
    slot = &cq->ring[kite_ring_slot(cq->pi, cq->log_depth)];
    /* Everything but the flags, then the flags with the phase bit. */
    memcpy(slot, cqe, offsetof(struct kite_cqe, flags));
    slot->flags = (uint8_t)((cqe->flags & ~KITE_CQE_F_PHASE) |
                            kite_ring_phase(cq->pi, cq->log_depth));
    cq->pi++;
    n->cqes++;
    return true;
}

static void cb_qp_event(void *opaque, void *qp, uint8_t type)
{
    SimNode *n = opaque;
    SimQp *q = qp;

    if (n->nevents < SIM_MAX_EVENTS) {
        n->events[n->nevents].qpn = q->cfg.qpn;
        n->events[n->nevents].type = type;
        n->nevents++;
    }
}

static void sim_enqueue(Sim *s, int dst, const uint8_t *frame, size_t len)
{
    SimFrame *f = malloc(sizeof(*f) + len);

    if (!f) {
        abort();
    }
    f->next = NULL;
    f->dst = dst;
    f->len = len;
    memcpy(f->data, frame, len);
    if (s->tail) {
        s->tail->next = f;
    } else {
        s->head = f;
    }
    s->tail = f;
    s->qlen++;
}

static void cb_transmit(void *opaque, const uint8_t *frame, size_t len)
{
    SimNode *n = opaque;
    Sim *s = n->sim;
    int dst = -1, i;

    s->frames++;
    if (s->tap) {
        s->tap(s, n->id, frame, len, s->tap_arg);
    }
    for (i = 0; i < s->n; i++) {
        if (len >= 6 && !memcmp(frame, s->node[i].mac, 6)) {
            dst = i;
            break;
        }
    }
    if (s->tx_cap && s->qlen >= s->tx_cap) {
        s->overflowed++;
        return;
    }
    if (dst < 0 || s->drop_all || sim_chance(s, s->drop_ppm)) {
        s->dropped++;
        return;
    }
    if (!s->held && sim_chance(s, s->reorder_ppm)) {
        SimFrame *f = malloc(sizeof(*f) + len);

        if (!f) {
            abort();
        }
        f->next = NULL;
        f->dst = dst;
        f->len = len;
        memcpy(f->data, frame, len);
        s->held = f;
        s->reordered++;
        return;
    }
    sim_enqueue(s, dst, frame, len);
    if (sim_chance(s, s->dup_ppm)) {
        s->duplicated++;
        sim_enqueue(s, dst, frame, len);
    }
    if (s->held) {
        SimFrame *f = s->held;

        s->held = NULL;
        if (s->tail) {
            s->tail->next = f;
        } else {
            s->head = f;
        }
        s->tail = f;
        s->qlen++;
    }
}

static bool cb_tx_ready(void *opaque)
{
    SimNode *n = opaque;
    Sim *s = n->sim;

    return s->now >= s->pause_until && (!s->tx_cap || s->qlen < s->tx_cap);
}

static uint64_t cb_now(void *opaque)
{
    SimNode *n = opaque;

    return n->sim->now;
}

static void cb_timer_mod(void *opaque, void *qp, uint64_t deadline)
{
    SimQp *q = qp;

    (void)opaque;
    q->deadline = deadline;
}

static void cb_kick(void *opaque)
{
    SimNode *n = opaque;

    n->kicked = true;
}

static bool cb_gid_is_local(void *opaque, const uint8_t *gid)
{
    SimNode *n = opaque;

    return !memcmp(gid, n->gid, 16);
}

static bool cb_gid_get(void *opaque, uint8_t index, uint8_t *gid)
{
    SimNode *n = opaque;

    if (index) {
        return false;
    }
    memcpy(gid, n->gid, 16);
    return true;
}

/*
 * A read with the CRC folded in; nodes without it (sim_drop_mem_ops())
 * take the engine's own copy-then-CRC.
 */
static uint8_t cb_mem_read_crc(void *opaque, void *qp, uint32_t pdn,
                               uint32_t key, uint32_t access, uint64_t va,
                               void *buf, uint32_t len, uint32_t *crc)
{
    uint8_t tmp[KITE_ROCE_MAX_PAYLOAD];
    uint8_t st;

    if (len > sizeof(tmp)) {
        return KITE_CQE_GENERAL_ERR;
    }
    st = cb_mem_rw(opaque, qp, pdn, key, access, va, tmp, len, false);
    if (st == KITE_CQE_SUCCESS) {
        *crc = kite_roce_crc32_copy(*crc, buf, tmp, len);
    }
    return st;
}

/* The callbacks every node has; the memory operations are optional. */
#define SIM_OPS_BASE \
    .mem_rw = cb_mem_rw, \
    .wqe_read = cb_wqe_read, \
    .cq_post = cb_cq_post, \
    .qp_event = cb_qp_event, \
    .transmit = cb_transmit, \
    .tx_ready = cb_tx_ready, \
    .now_ns = cb_now, \
    .timer_mod = cb_timer_mod, \
    .kick = cb_kick, \
    .gid_is_local = cb_gid_is_local, \
    .gid_get = cb_gid_get

static const struct kite_roce_ops sim_ops = {
    SIM_OPS_BASE,
    .mem_read_crc = cb_mem_read_crc,
    .mem_op = cb_mem_op,
    .remote_inv = cb_remote_inv,
};

/* For sim_drop_mem_ops(). */
static const struct kite_roce_ops sim_ops_no_mem = {
    SIM_OPS_BASE,
};

/* ---- setup ---- */

void sim_init(Sim *s, int nodes, size_t mem_size, uint64_t seed)
{
    int i;

    memset(s, 0, sizeof(*s));
    s->n = nodes;
    s->rng = seed ? seed : 1;
    s->now = 1000;
    for (i = 0; i < nodes; i++) {
        SimNode *n = &s->node[i];
        uint8_t mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, (uint8_t)(i + 1) };

        n->sim = s;
        n->id = i;
        memcpy(n->mac, mac, 6);
        /* ::ffff:198.18.0.(i + 1) */
        n->gid[10] = n->gid[11] = 0xff;
        n->gid[12] = 198;
        n->gid[13] = 18;
        n->gid[14] = 0;
        n->gid[15] = (uint8_t)(i + 1);
        n->mem = xcalloc(1, mem_size);
        n->mem_size = mem_size;
        n->e = kite_roce_new(&sim_ops, n);
        kite_roce_set_port(n->e, n->mac, 4200);
    }
}

void sim_drop_mem_ops(SimNode *n)
{
    kite_roce_free(n->e);
    n->e = kite_roce_new(&sim_ops_no_mem, n);
    kite_roce_set_port(n->e, n->mac, 4200);
}

void sim_free(Sim *s)
{
    int i, j;

    while (s->head) {
        SimFrame *f = s->head;

        s->head = f->next;
        free(f);
    }
    s->tail = NULL;
    free(s->held);
    s->held = NULL;
    for (i = 0; i < s->n; i++) {
        SimNode *n = &s->node[i];

        kite_roce_free(n->e);
        for (j = 0; j < SIM_MAX_QPS; j++) {
            free(n->qp[j].sq);
            free(n->qp[j].rq);
        }
        for (j = 0; j < SIM_MAX_CQS; j++) {
            free(n->cq[j].ring);
        }
        free(n->mem);
    }
}

/* A free MR table slot of @kind in PD @pdn, its key set; aborts if full. */
static SimMr *sim_mr_new(SimNode *n, uint8_t kind, uint32_t pdn)
{
    uint32_t i;

    for (i = 1; i < SIM_MAX_MRS; i++) {
        SimMr *m = &n->mr[i];

        if (!m->used) {
            memset(m, 0, sizeof(*m));
            m->used = true;
            m->kind = kind;
            m->pdn = pdn;
            m->key = kite_key_make(i, (uint8_t)(0x40 + i));
            return m;
        }
    }
    abort();
}

uint32_t sim_alloc_mr(SimNode *n, uint32_t pdn, uint32_t max_pages)
{
    SimMr *m = sim_mr_new(n, SIM_MR_FAST, pdn);

    m->max_pages = max_pages;
    return m->key;
}

uint32_t sim_alloc_mw(SimNode *n, uint32_t pdn, uint8_t kind)
{
    return sim_mr_new(n, kind, pdn)->key;
}

uint32_t sim_reg_mr(SimNode *n, uint32_t pdn, uint64_t iova, uint64_t len,
                    uint32_t access, uint64_t off)
{
    uint32_t i;

    for (i = 1; i < SIM_MAX_MRS; i++) {
        if (!n->mr[i].used) {
            SimMr *mr = &n->mr[i];

            mr->used = true;
            mr->kind = SIM_MR_REG;
            mr->valid = true;
            mr->key = kite_key_make(i, (uint8_t)(0x40 + i));
            mr->pdn = pdn;
            mr->iova = iova;
            mr->len = len;
            mr->access = access;
            mr->off = off;
            return mr->key;
        }
    }
    abort();
}

void sim_dereg_mr(SimNode *n, uint32_t key)
{
    uint32_t i = kite_key_index(key);

    if (i < SIM_MAX_MRS) {
        n->mr[i].valid = false;
        n->mr[i].used = false;
    }
}

uint32_t sim_create_cq(SimNode *n, uint8_t log_depth)
{
    uint32_t i;

    for (i = 1; i < SIM_MAX_CQS; i++) {
        if (!n->cq[i].valid) {
            n->cq[i].valid = true;
            n->cq[i].log_depth = log_depth;
            n->cq[i].ring = xcalloc(1u << log_depth,
                                    sizeof(struct kite_cqe));
            return i;
        }
    }
    abort();
}

uint32_t sim_create_qp(SimNode *n, uint8_t type, uint32_t pdn,
                       uint32_t scq, uint32_t rcq, uint8_t sq_log_depth,
                       uint8_t sq_log_stride, uint8_t rq_log_depth,
                       uint8_t rq_log_stride, bool sig_all)
{
    uint32_t i;

    for (i = 0; i < SIM_MAX_QPS; i++) {
        SimQp *q = &n->qp[i];

        if (q->valid) {
            continue;
        }
        memset(q, 0, sizeof(*q));
        q->cfg.host = q;
        q->cfg.qpn = SIM_QPN_BASE + i;
        q->cfg.type = type;
        q->cfg.sig_all = sig_all;
        q->cfg.pdn = pdn;
        q->cfg.send_cqn = scq;
        q->cfg.recv_cqn = rcq;
        q->cfg.sq_log_depth = sq_log_depth;
        q->cfg.sq_log_stride = sq_log_stride;
        q->cfg.rq_log_depth = rq_log_depth;
        q->cfg.rq_log_stride = rq_log_stride;
        q->sq = xcalloc(1u << sq_log_depth, 1u << sq_log_stride);
        q->rq = xcalloc(1u << rq_log_depth, 1u << rq_log_stride);
        q->deadline = KITE_ROCE_TIMER_OFF;
        q->valid = true;
        q->qp = kite_roce_qp_create(n->e, &q->cfg);
        if (!q->qp) {
            abort();
        }
        return q->cfg.qpn;
    }
    abort();
}

void sim_destroy_qp(SimNode *n, uint32_t qpn)
{
    SimQp *q = sim_qp(n, qpn);

    kite_roce_qp_destroy(q->qp);
    free(q->sq);
    free(q->rq);
    memset(q, 0, sizeof(*q));
    q->deadline = KITE_ROCE_TIMER_OFF;
}

void sim_modify(SimNode *n, uint32_t qpn, const struct kite_roce_qp_attr *a,
                uint32_t mask)
{
    SimQp *q = sim_qp(n, qpn);

    kite_roce_qp_modify(q->qp, a, mask);
}

void sim_default_params(SimConnParams *p)
{
    memset(p, 0, sizeof(*p));
    p->path_mtu = KITE_MTU_1024;
    p->psn_a = 0x100;
    p->psn_b = 0x200;
    p->timeout = 12;
    p->retry_cnt = 7;
    p->rnr_retry = 7;
    p->min_rnr_timer = 1;
    p->max_rd_atomic = 16;
    p->max_dest_rd_atomic = 16;
    p->access_a = p->access_b = KITE_ACCESS_LOCAL_WRITE |
        KITE_ACCESS_REMOTE_WRITE | KITE_ACCESS_REMOTE_READ |
        KITE_ACCESS_REMOTE_ATOMIC;
}

static void sim_connect_one(SimNode *n, uint32_t qpn, SimNode *peer,
                            uint32_t peer_qpn, uint32_t sq_psn,
                            uint32_t rq_psn, uint32_t access,
                            const SimConnParams *p, bool rtr_only)
{
    struct kite_roce_qp_attr a;

    memset(&a, 0, sizeof(a));
    a.state = KITE_QPS_INIT;
    a.access = access;
    sim_modify(n, qpn, &a, KITE_QP_ATTR_STATE | KITE_QP_ATTR_ACCESS_FLAGS);

    a.state = KITE_QPS_RTR;
    a.path_mtu = p->path_mtu;
    a.dest_qpn = peer_qpn;
    a.rq_psn = rq_psn;
    a.max_dest_rd_atomic = p->max_dest_rd_atomic;
    a.min_rnr_timer = p->min_rnr_timer;
    memcpy(a.path.smac, n->mac, 6);
    memcpy(a.path.dmac, peer->mac, 6);
    memcpy(a.path.sgid, n->gid, 16);
    memcpy(a.path.dgid, peer->gid, 16);
    a.path.hop_limit = 64;
    a.path.ipv6 = p->ipv6;
    a.path.traffic_class = p->ipv6 ? 0x10 : 0;
    a.path.flow_label = p->ipv6 ? 0x12345 : 0;
    sim_modify(n, qpn, &a, KITE_QP_ATTR_STATE | KITE_QP_ATTR_AV |
               KITE_QP_ATTR_PATH_MTU | KITE_QP_ATTR_DEST_QPN |
               KITE_QP_ATTR_RQ_PSN | KITE_QP_ATTR_MAX_DEST_RD_ATOMIC |
               KITE_QP_ATTR_MIN_RNR_TIMER);
    if (rtr_only) {
        return;
    }

    a.state = KITE_QPS_RTS;
    a.sq_psn = sq_psn;
    a.timeout = p->timeout;
    a.retry_cnt = p->retry_cnt;
    a.rnr_retry = p->rnr_retry;
    a.max_rd_atomic = p->max_rd_atomic;
    sim_modify(n, qpn, &a, KITE_QP_ATTR_STATE | KITE_QP_ATTR_SQ_PSN |
               KITE_QP_ATTR_TIMEOUT | KITE_QP_ATTR_RETRY_CNT |
               KITE_QP_ATTR_RNR_RETRY | KITE_QP_ATTR_MAX_QP_RD_ATOMIC);
}

void sim_connect(Sim *s, int a, uint32_t qpa, int b, uint32_t qpb,
                 const SimConnParams *p)
{
    sim_connect_one(&s->node[a], qpa, &s->node[b], qpb, p->psn_a, p->psn_b,
                    p->access_a, p, false);
    sim_connect_one(&s->node[b], qpb, &s->node[a], qpa, p->psn_b, p->psn_a,
                    p->access_b, p, p->b_stays_rtr);
}

/* ---- posting ---- */

uint8_t *sim_sq_slot(SimQp *q, uint32_t idx)
{
    return q->sq + ((size_t)kite_ring_slot(idx, q->cfg.sq_log_depth) <<
                    q->cfg.sq_log_stride);
}

/* Write SGE @sge as the ABI lays it out at @p. */
static void sim_put_sge(uint8_t *p, const SimSge *sge)
{
    struct kite_sge v;

    kr_set_le64(&v.addr, sge->addr);
    kr_set_le32(&v.length, sge->length);
    kr_set_le32(&v.lkey, sge->lkey);
    memcpy(p, &v, sizeof(v));
}

/* Write the segment the opcode of @wr needs at @p; returns its size. */
static uint32_t sim_put_seg(uint8_t *p, const SimQp *q, const SimWr *wr)
{
    struct kite_wqe_ud ud = { .av = wr->av };
    struct kite_wqe_raddr r = { 0 };
    struct kite_wqe_atomic a = { 0 };

    if ((q->cfg.type == KITE_QPT_UD || q->cfg.type == KITE_QPT_GSI) &&
        wr->opcode <= KITE_WQE_SEND_IMM) {
        kr_set_le32(&ud.remote_qpn, wr->remote_qpn);
        kr_set_le32(&ud.remote_qkey, wr->remote_qkey);
        memcpy(p, &ud, sizeof(ud));
        return sizeof(ud);
    }
    switch (wr->opcode) {
    case KITE_WQE_WRITE:
    case KITE_WQE_WRITE_IMM:
    case KITE_WQE_READ:
        kr_set_le64(&r.remote_addr, wr->raddr);
        kr_set_le32(&r.rkey, wr->rkey);
        memcpy(p, &r, sizeof(r));
        return sizeof(r);
    case KITE_WQE_CMP_SWP:
    case KITE_WQE_FETCH_ADD:
        kr_set_le64(&a.remote_addr, wr->raddr);
        kr_set_le32(&a.rkey, wr->rkey);
        kr_set_le64(&a.swap_add, wr->swap_add);
        kr_set_le64(&a.compare, wr->compare);
        memcpy(p, &a, sizeof(a));
        return sizeof(a);
    case KITE_WQE_REG_MR:
        memcpy(p, &wr->reg_mr, sizeof(wr->reg_mr));
        return sizeof(wr->reg_mr);
    case KITE_WQE_BIND_MW:
        memcpy(p, &wr->bind_mw, sizeof(wr->bind_mw));
        return sizeof(wr->bind_mw);
    default:
        return 0;
    }
}

uint32_t sim_write_send(SimNode *n, uint32_t qpn, const SimWr *wr)
{
    return sim_write_send_q(sim_qp(n, qpn), wr);
}

uint32_t sim_write_send_q(SimQp *q, const SimWr *wr)
{
    uint32_t stride = 1u << q->cfg.sq_log_stride;
    uint32_t idx = q->sq_pi++;
    uint8_t *w = sim_sq_slot(q, idx);
    struct kite_sq_wqe_hdr hdr = {
        .opcode = wr->opcode,
        .flags = wr->flags,
        .num_sge = (uint8_t)wr->num_sge,
    };
    uint32_t off = sizeof(hdr), i;

    memset(w, 0, stride);
    kr_set_le16(&hdr.inline_len, wr->inline_len);
    if (wr->opcode == KITE_WQE_SEND_INV || wr->opcode == KITE_WQE_LOCAL_INV) {
        kr_set_le32(&hdr.imm_data, wr->inv_key);
    } else {
        memcpy(&hdr.imm_data, wr->imm, sizeof(hdr.imm_data));
    }
    memcpy(w, &hdr, sizeof(hdr));
    off += sim_put_seg(w + off, q, wr);
    if (wr->flags & KITE_WQE_F_INLINE) {
        if (wr->inline_len && off + wr->inline_len <= stride) {
            memcpy(w + off, wr->inl, wr->inline_len);
        }
    } else {
        for (i = 0; i < wr->num_sge && off + sizeof(struct kite_sge) <= stride;
             i++, off += sizeof(struct kite_sge)) {
            sim_put_sge(w + off, &wr->sge[i]);
        }
    }
    return idx;
}

void sim_sq_doorbell(SimNode *n, uint32_t qpn)
{
    SimQp *q = sim_qp(n, qpn);

    kite_roce_sq_doorbell(q->qp, q->sq_pi);
}

uint32_t sim_post_send(SimNode *n, uint32_t qpn, const SimWr *wr)
{
    uint32_t idx = sim_write_send(n, qpn, wr);

    sim_sq_doorbell(n, qpn);
    return idx;
}

uint32_t sim_post_recv(SimNode *n, uint32_t qpn, unsigned num_sge,
                       const SimSge *sge)
{
    return sim_post_recv_q(sim_qp(n, qpn), num_sge, sge);
}

uint32_t sim_post_recv_q(SimQp *q, unsigned num_sge, const SimSge *sge)
{
    uint32_t stride = 1u << q->cfg.rq_log_stride;
    uint32_t idx = q->rq_pi++;
    uint8_t *w = q->rq + ((size_t)kite_ring_slot(idx, q->cfg.rq_log_depth) <<
                          q->cfg.rq_log_stride);
    struct kite_rq_wqe_hdr hdr = { .num_sge = (uint8_t)num_sge };
    uint32_t off = sizeof(hdr);
    unsigned i;

    memset(w, 0, stride);
    memcpy(w, &hdr, sizeof(hdr));
    for (i = 0; i < num_sge && off + sizeof(struct kite_sge) <= stride;
         i++, off += sizeof(struct kite_sge)) {
        sim_put_sge(w + off, &sge[i]);
    }
    kite_roce_rq_doorbell(q->qp, q->rq_pi);
    return idx;
}

bool sim_poll_cq(SimNode *n, uint32_t cqn, struct kite_cqe *cqe)
{
    SimCq *cq = &n->cq[cqn];
    const struct kite_cqe *slot =
        &cq->ring[kite_ring_slot(cq->ci, cq->log_depth)];

    if ((slot->flags & KITE_CQE_F_PHASE) !=
        kite_ring_phase(cq->ci, cq->log_depth)) {
        return false;
    }
    *cqe = *slot;
    cq->ci++;
    return true;
}

unsigned sim_cq_count(SimNode *n, uint32_t cqn)
{
    SimCq *cq = &n->cq[cqn];

    return cq->pi - cq->ci;
}

bool sim_has_event(SimNode *n, uint32_t qpn, uint8_t type)
{
    unsigned i;

    for (i = 0; i < n->nevents; i++) {
        if (n->events[i].qpn == qpn && n->events[i].type == type) {
            return true;
        }
    }
    return false;
}

/* ---- the link and the clock ---- */

void sim_inject(Sim *s, int dst, const uint8_t *frame, size_t len)
{
    sim_enqueue(s, dst, frame, len);
}

static bool sim_run_engines(Sim *s)
{
    bool any = false;
    int i;

    for (i = 0; i < s->n; i++) {
        SimNode *n = &s->node[i];

        /*
         * As the device model: a kick runs the engine whatever the port's
         * state; the work it left runs again once the port has room.
         */
        if (n->kicked || (n->tx_wait && cb_tx_ready(n))) {
            n->kicked = false;
            n->tx_wait = kite_roce_run(n->e,
                                       s->run_budget ? s->run_budget : 4);
            any = true;
        }
    }
    return any;
}

bool sim_step(Sim *s)
{
    uint64_t best = KITE_ROCE_TIMER_OFF;
    SimQp *bq = NULL;
    int i, j;

    /* Timers that are due fire first. */
    for (i = 0; i < s->n; i++) {
        for (j = 0; j < SIM_MAX_QPS; j++) {
            SimQp *q = &s->node[i].qp[j];

            if (q->valid && q->deadline <= s->now) {
                q->deadline = KITE_ROCE_TIMER_OFF;
                kite_roce_qp_timer(q->qp);
                return true;
            }
        }
    }
    if (s->qlen < (s->link_qmax ? s->link_qmax : SIM_LINK_QMAX) &&
        sim_run_engines(s)) {
        return true;
    }
    if (s->head && s->now >= s->pause_until) {
        SimFrame *f = s->head;

        s->head = f->next;
        if (!s->head) {
            s->tail = NULL;
        }
        s->qlen--;
        /* About 10 Gb/s plus a little latency. */
        s->now += 100 + f->len + s->node[f->dst].rx_cost_ns;
        s->delivered++;
        if (!kite_roce_rx(s->node[f->dst].e, f->data, f->len)) {
            s->not_roce++;
        }
        free(f);
        return true;
    }
    if (s->held && s->now >= s->pause_until) {
        SimFrame *f = s->held;

        s->held = NULL;
        s->head = s->tail = f;
        s->qlen = 1;
        return true;
    }
    if (sim_run_engines(s)) {
        return true;
    }
    for (i = 0; i < s->n; i++) {
        for (j = 0; j < SIM_MAX_QPS; j++) {
            SimQp *q = &s->node[i].qp[j];

            if (q->valid && q->deadline != KITE_ROCE_TIMER_OFF &&
                q->deadline < best) {
                best = q->deadline;
                bq = q;
            }
        }
    }
    if (s->now < s->pause_until && (!bq || best > s->pause_until)) {
        /* Nothing happens before the peer reads again. */
        s->now = s->pause_until;
        return true;
    }
    if (!bq) {
        return false;
    }
    if (best > s->now) {
        s->now = best;
    }
    bq->deadline = KITE_ROCE_TIMER_OFF;
    kite_roce_qp_timer(bq->qp);
    return true;
}

uint64_t sim_run(Sim *s, uint64_t max_steps)
{
    uint64_t n = 0;

    while (n < max_steps && sim_step(s)) {
        n++;
    }
    return n;
}

void sim_ud_av(Sim *s, int dst, struct kite_av *av, uint8_t sgid_index)
{
    memset(av, 0, sizeof(*av));
    memcpy(av->dgid, s->node[dst].gid, sizeof(av->dgid));
    memcpy(av->dmac, s->node[dst].mac, sizeof(av->dmac));
    av->sgid_index = sgid_index;
    av->net_type = KITE_NET_IPV4;
    av->hop_limit = 64;
}

void sim_ud_up(SimNode *n, uint32_t qpn, uint32_t qkey)
{
    struct kite_roce_qp_attr a;

    memset(&a, 0, sizeof(a));
    a.state = KITE_QPS_INIT;
    a.qkey = qkey;
    sim_modify(n, qpn, &a, KITE_QP_ATTR_STATE | KITE_QP_ATTR_QKEY);
    a.state = KITE_QPS_RTR;
    sim_modify(n, qpn, &a, KITE_QP_ATTR_STATE);
    a.state = KITE_QPS_RTS;
    a.sq_psn = 0x42;
    sim_modify(n, qpn, &a, KITE_QP_ATTR_STATE | KITE_QP_ATTR_SQ_PSN);
}
