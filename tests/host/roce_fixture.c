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
    Fx *f = calloc(1, sizeof(*f));
    SimConnParams p;

    assert_non_null(f);
    if (pp) {
        p = *pp;
    } else {
        sim_default_params(&p);
    }
    sim_init(&f->s, loopback ? 1 : 2, MEM_SIZE, 12345);
    f->a = &f->s.node[0];
    f->b = loopback ? f->a : &f->s.node[1];
    f->a_scq = sim_create_cq(f->a, 8);
    f->a_rcq = sim_create_cq(f->a, 8);
    f->b_scq = sim_create_cq(f->b, 8);
    f->b_rcq = sim_create_cq(f->b, 8);
    f->aqp = sim_create_qp(f->a, type, PDN, f->a_scq, f->a_rcq, 6, 8, 6, 7,
                           false);
    f->bqp = sim_create_qp(f->b, type, PDN, f->b_scq, f->b_rcq, 6, 8, 6, 7,
                           false);
    f->akey = sim_reg_mr(f->a, PDN, IOVA, MEM_SIZE, ALL_ACCESS, 0);
    f->bkey = loopback ? f->akey :
              sim_reg_mr(f->b, PDN, IOVA, MEM_SIZE, ALL_ACCESS, 0);
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
