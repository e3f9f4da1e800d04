/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fixture of the engine's focused host tests: see roce_fixture.h.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "roce_fixture.h"

Fx *fx_new(const SimConnParams *pp, uint8_t type, bool loopback)
{
    return fx_new_stride(pp, type, loopback, 8, 7);
}

Fx *fx_new_stride(const SimConnParams *pp, uint8_t type, bool loopback,
                  uint8_t sq_log, uint8_t rq_log)
{
    return fx_new_mem(pp, type, loopback, sq_log, rq_log, MEM_SIZE);
}

Fx *fx_new_mem(const SimConnParams *pp, uint8_t type, bool loopback,
               uint8_t sq_log, uint8_t rq_log, size_t mem_size)
{
    Fx *f = calloc(1, sizeof(*f));
    SimConnParams p;

    assert_non_null(f);
    if (pp) {
        p = *pp;
    } else {
        sim_default_params(&p);
    }
    sim_init(&f->s, loopback ? 1 : 2, mem_size, 12345);
    f->a = &f->s.node[0];
    f->b = loopback ? f->a : &f->s.node[1];
    if (p.no_mem_ops) {
        sim_drop_mem_ops(f->a);
        if (!loopback) {
            sim_drop_mem_ops(f->b);
        }
    }
    f->a_scq = sim_create_cq(f->a, 8);
    f->a_rcq = sim_create_cq(f->a, 8);
    f->b_scq = sim_create_cq(f->b, 8);
    f->b_rcq = sim_create_cq(f->b, 8);
    f->aqp = sim_create_qp(f->a, type, PDN, f->a_scq, f->a_rcq, 6, sq_log,
                           6, rq_log, false);
    f->bqp = sim_create_qp(f->b, type, PDN, f->b_scq, f->b_rcq, 6, sq_log,
                           6, rq_log, false);
    f->akey = sim_reg_mr(f->a, PDN, IOVA, mem_size, ALL_ACCESS, 0);
    f->bkey = loopback ? f->akey :
              sim_reg_mr(f->b, PDN, IOVA, mem_size, ALL_ACCESS, 0);
    sim_connect(&f->s, 0, f->aqp, loopback ? 0 : 1, f->bqp, &p);
    return f;
}

void fx_free(Fx *f)
{
    sim_free(&f->s);
    free(f);
}

void fx_fill(uint8_t *p, size_t n, uint32_t seed)
{
    size_t i;

    for (i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
}

SimWr fx_wr(uint8_t op, uint8_t flags)
{
    SimWr w;

    memset(&w, 0, sizeof(w));
    w.opcode = op;
    w.flags = flags | KITE_WQE_F_SIGNALED;
    return w;
}

/* Page lists of fx_reg_mr(): one 2 KiB area per MR table index. */
#define FX_PBL_OFF      0x380000u
#define FX_PBL_SIZE     0x800u
#define FX_PAGE_SHIFT   12

SimWr fx_reg_mr(SimNode *n, uint32_t key, uint8_t variant, uint64_t off,
                uint32_t len, uint32_t access, uint32_t *new_key)
{
    uint32_t idx = kite_key_index(key), npages, i;
    uint64_t pbl = FX_PBL_OFF + (uint64_t)idx * FX_PBL_SIZE;
    SimWr w = fx_wr(KITE_WQE_REG_MR, 0);

    npages = (len + (1u << FX_PAGE_SHIFT) - 1) >> FX_PAGE_SHIFT;
    assert_true(npages * 8 <= FX_PBL_SIZE);
    assert_true(pbl + FX_PBL_SIZE <= FX_PBL_OFF + SIM_MAX_MRS * FX_PBL_SIZE);
    for (i = 0; i < npages; i++) {
        __le64 e;

        kr_set_le64(&e, off + ((uint64_t)i << FX_PAGE_SHIFT));
        memcpy(sim_mem(n, pbl + i * 8ull), &e, sizeof(e));
    }
    *new_key = kite_key_make(idx, variant);
    kr_set_le64(&w.reg_mr.iova, FR_IOVA + off);
    kr_set_le64(&w.reg_mr.length, len);
    kr_set_le64(&w.reg_mr.pbl_addr, pbl);
    kr_set_le32(&w.reg_mr.key, *new_key);
    kr_set_le32(&w.reg_mr.access, access);
    kr_set_le32(&w.reg_mr.npages, npages);
    w.reg_mr.page_shift = FX_PAGE_SHIFT;
    return w;
}

SimWr fx_inv(uint8_t op, uint32_t key, uint8_t flags)
{
    SimWr w = fx_wr(op, flags);

    w.inv_key = key;
    return w;
}

void fx_sge(SimWr *w, uint64_t off, uint32_t len, uint32_t key)
{
    w->sge[w->num_sge].addr = IOVA + off;
    w->sge[w->num_sge].length = len;
    w->sge[w->num_sge].lkey = key;
    w->num_sge++;
}

void fx_recv(SimNode *n, uint32_t qpn, uint64_t off, uint32_t len,
             uint32_t key)
{
    SimSge s = { IOVA + off, len, key };

    sim_post_recv(n, qpn, 1, &s);
}

void fx_run(Fx *f)
{
    sim_run(&f->s, RUN_STEPS);
}

void fx_expect_cqe(SimNode *n, uint32_t cqn, uint32_t qpn, uint16_t idx,
                   uint8_t opcode, uint8_t status, uint32_t byte_len)
{
    struct kite_cqe c;

    assert_true(sim_poll_cq(n, cqn, &c));
    assert_int_equal(kr_le32(&c.qpn), qpn);
    assert_int_equal(kr_le16(&c.wqe_idx), idx);
    assert_int_equal(c.status, status);
    assert_int_equal(c.opcode, opcode);
    if (status == KITE_CQE_SUCCESS) {
        assert_int_equal(kr_le32(&c.byte_len), byte_len);
    }
}

void fx_expect_no_cqe(SimNode *n, uint32_t cqn)
{
    struct kite_cqe c;

    assert_false(sim_poll_cq(n, cqn, &c));
}

uint8_t fx_state(SimNode *n, uint32_t qpn)
{
    return kite_roce_qp_state(sim_qp(n, qpn)->qp);
}

uint64_t mem_ld64(const uint8_t *p)
{
    uint64_t v = 0;
    int i;

    for (i = 7; i >= 0; i--) {
        v = v << 8 | p[i];
    }
    return v;
}

void mem_st64(uint8_t *p, uint64_t v)
{
    int i;

    for (i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

void fx_pkt_a_to_b(const Fx *f, struct kite_roce_pkt *pk, uint8_t opcode,
                   uint32_t psn)
{
    memset(pk, 0, sizeof(*pk));
    memcpy(pk->dmac, f->b->mac, sizeof(pk->dmac));
    memcpy(pk->smac, f->a->mac, sizeof(pk->smac));
    memcpy(pk->sgid, f->a->gid, sizeof(pk->sgid));
    memcpy(pk->dgid, f->b->gid, sizeof(pk->dgid));
    pk->hop_limit = 64;
    pk->opcode = opcode;
    pk->pkey = KITE_BTH_PKEY_DEFAULT;
    pk->dqpn = f->bqp;
    pk->psn = psn & KITE_PSN_MASK;
    pk->ackreq = true;
}
