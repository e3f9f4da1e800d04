/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Kite RoCEv2 engine's memory-management work (qemu/roce/,
 * Documentation/kite/hardware.rst "Memory management extensions"): REG_MR,
 * LOCAL_INV and BIND_MW executed in send queue order through ops->mem_op
 * (fence, completion order, validation, a host without memory operations),
 * SEND_INV on the wire and at the responder through ops->remote_inv (the
 * receive completion, a key that may not be invalidated, loss and
 * duplicates), and WQEs of 32 SGEs. The simulation harness (roce_sim.c)
 * keeps a small table of fast-register MRs and windows behind the
 * callbacks.
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

#include "kite_roce_pkt.h"
#include "roce_fixture.h"

#define FR_ACCESS       (KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE | \
                         KITE_ACCESS_REMOTE_READ)
/* Node memory the fast registrations of these tests map. */
#define FR_OFF          0x200000u
#define FR_LEN          0x3000u

/* The opcodes of the request packets A sends (a link tap). */
typedef struct OpLog {
    unsigned n;
    uint8_t op[64];
    uint32_t ieth[64];
} OpLog;

static void op_tap(Sim *s, int src, const uint8_t *frame, size_t len,
                   void *arg)
{
    OpLog *l = arg;
    struct kite_roce_pkt p;

    (void)s;
    if (src == 0 && l->n < 64 &&
        kite_roce_parse(frame, len, &p) == KITE_ROCE_OK &&
        (kite_roce_op_hdrs(p.opcode) & KITE_OPF_REQUEST)) {
        l->op[l->n] = p.opcode;
        l->ieth[l->n] = p.ieth_rkey;
        l->n++;
    }
}

/* The CQE opcode of a WQE opcode this file posts (hardware.rst). */
static uint8_t cqe_op(uint8_t wqe_op)
{
    switch (wqe_op) {
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

/* Register @key on node @n through its QP @qpn; returns the new key. */
static uint32_t reg_on(Fx *f, SimNode *n, uint32_t qpn, uint32_t scq,
                       uint32_t key, uint8_t variant, uint64_t off,
                       uint32_t len, uint32_t access)
{
    uint32_t nk;
    SimWr w = fx_reg_mr(n, key, variant, off, len, access, &nk);
    uint32_t idx = sim_post_send(n, qpn, &w);

    fx_run(f);
    fx_expect_cqe(n, scq, qpn, (uint16_t)(idx & 63), KITE_CQE_REG_MR,
                  KITE_CQE_SUCCESS, 0);
    return nk;
}

static uint32_t reg_b(Fx *f, uint32_t key, uint8_t variant)
{
    return reg_on(f, f->b, f->bqp, f->b_scq, key, variant, FR_OFF, FR_LEN,
                  FR_ACCESS);
}

/* A WRITE (or READ) of @len bytes between A's @off and @raddr via @rkey. */
static SimWr rdma(Fx *f, uint8_t op, uint64_t off, uint32_t len,
                  uint64_t raddr, uint32_t rkey)
{
    SimWr w = fx_wr(op, 0);

    fx_sge(&w, off, len, f->akey);
    w.raddr = raddr;
    w.rkey = rkey;
    return w;
}

/* ---- REG_MR, LOCAL_INV ---- */

/* REG_MR reaches mem_op whole; the region it makes takes WRITE and READ. */
static void test_reg_mr_then_remote_access(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    uint32_t fr = sim_alloc_mr(f->b, PDN, 8), key;
    SimQp *q = sim_qp(f->b, f->bqp);
    SimWr w;

    (void)st;
    key = reg_b(f, fr, 0x17);
    assert_int_equal(f->b->mem_ops, 1);
    assert_int_equal(f->b->last_mem_op_len, sizeof(struct kite_sq_wqe_hdr) +
                     sizeof(struct kite_wqe_reg_mr));
    assert_memory_equal(f->b->last_mem_op, sim_sq_slot(q, 0),
                        f->b->last_mem_op_len);
    fx_fill(sim_mem(f->a, 0x1000), 0x2800, 5);
    w = rdma(f, KITE_WQE_WRITE, 0x1000, 0x2800, FR_IOVA + FR_OFF + 0x400,
             key);
    sim_post_send(f->a, f->aqp, &w);
    w = rdma(f, KITE_WQE_READ, 0x10000, 0x2800, FR_IOVA + FR_OFF + 0x400,
             key);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_WRITE, 0, 0x2800);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_READ, 0, 0x2800);
    assert_memory_equal(sim_mem(f->b, FR_OFF + 0x400), sim_mem(f->a, 0x1000),
                        0x2800);
    assert_memory_equal(sim_mem(f->a, 0x10000), sim_mem(f->a, 0x1000),
                        0x2800);
    /* The old key (variant) of the index is refused. */
    w = rdma(f, KITE_WQE_WRITE, 0x1000, 16, FR_IOVA + FR_OFF, fr);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_WRITE,
                  KITE_CQE_REM_ACCESS_ERR, 0);
    fx_free(f);
}

/* After LOCAL_INV the key is refused and the memory stays as it was. */
static void test_local_inv_then_access_refused(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    uint32_t fr = sim_alloc_mr(f->b, PDN, 8), key;
    SimWr w;

    (void)st;
    key = reg_b(f, fr, 0x21);
    /* Unsignaled: no CQE on success. */
    w = fx_inv(KITE_WQE_LOCAL_INV, key, 0);
    w.flags = 0;
    sim_post_send(f->b, f->bqp, &w);
    fx_run(f);
    fx_expect_no_cqe(f->b, f->b_scq);
    assert_int_equal(f->b->mem_ops, 2);
    fx_fill(sim_mem(f->a, 0x1000), 0x800, 9);
    w = rdma(f, KITE_WQE_WRITE, 0x1000, 0x800, FR_IOVA + FR_OFF, key);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_WRITE,
                  KITE_CQE_REM_ACCESS_ERR, 0);
    {
        static const uint8_t zero[0x800];

        assert_memory_equal(sim_mem(f->b, FR_OFF), zero, sizeof(zero));
    }
    assert_int_equal(fx_state(f->b, f->bqp), KITE_QPS_ERR);
    assert_true(sim_has_event(f->b, f->bqp, KITE_EVT_QP_ACCESS_ERR));
    fx_free(f);
}

/*
 * A memory operation runs once every earlier WQE has been sent, before
 * they are acknowledged, and completes after them; its failure is a
 * local error that moves the QP to ERR and flushes what follows.
 */
static void test_mem_op_order_and_failure(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    uint32_t fr = sim_alloc_mr(f->a, PDN, 8), key;
    SimWr w;

    (void)st;
    fx_recv(f->b, f->bqp, 0x100000, 0x1000, f->bkey);
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 3000, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    w = fx_reg_mr(f->a, fr, 0x33, FR_OFF, FR_LEN, FR_ACCESS, &key);
    sim_post_send(f->a, f->aqp, &w);
    /* Both run in the same engine run: sent, not yet acknowledged. */
    while (f->a->mem_ops == 0) {
        assert_true(sim_step(&f->s));
    }
    assert_int_equal(f->a->cqes_at_mem_op, 0);
    assert_int_equal(sim_cq_count(f->a, f->a_scq), 0);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 3000);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_REG_MR, 0, 0);
    /*
     * Behind a READ (no fence): it runs at once and completes with the
     * READ's response, which no ACK follows.
     */
    w = rdma(f, KITE_WQE_READ, 0x8000, 3000, IOVA + 0x8000, f->bkey);
    sim_post_send(f->a, f->aqp, &w);
    w = fx_inv(KITE_WQE_LOCAL_INV, key, 0);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    assert_int_equal(f->a->cqes_at_mem_op, 2);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_READ, 0, 3000);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 3, KITE_CQE_LOCAL_INV, 0, 0);
    /* Invalidating a free MR fails: LOC_PROT_ERR, ERR, flush. */
    w = fx_inv(KITE_WQE_LOCAL_INV, key, 0);
    sim_post_send(f->a, f->aqp, &w);
    w = fx_wr(KITE_WQE_WRITE, 0);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 4, KITE_CQE_LOCAL_INV,
                  KITE_CQE_LOC_PROT_ERR, 0);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 5, KITE_CQE_WRITE,
                  KITE_CQE_WR_FLUSH_ERR, 0);
    assert_int_equal(fx_state(f->a, f->aqp), KITE_QPS_ERR);
    assert_int_equal(f->a->mem_ops, 3);
    fx_free(f);
}

/*
 * LOCAL_INV with FENCE after a READ into the region it invalidates waits
 * for the READ; without the fence it runs at once and the READ's data
 * finds its key gone (what the fence is for).
 */
static void test_fence_local_inv_after_read(void **st)
{
    int fence;

    (void)st;
    for (fence = 1; fence >= 0; fence--) {
        Fx *f = fx_new(NULL, KITE_QPT_RC, false);
        uint32_t fr = sim_alloc_mr(f->a, PDN, 8), key;
        SimSge sge;
        SimWr w;

        fx_fill(sim_mem(f->b, 0x8000), 0x2000, 3);
        key = reg_on(f, f->a, f->aqp, f->a_scq, fr, 0x41, FR_OFF, FR_LEN,
                     KITE_ACCESS_LOCAL_WRITE);
        w = fx_wr(KITE_WQE_READ, 0);
        sge = (SimSge){ FR_IOVA + FR_OFF, 0x2000, key };
        w.sge[w.num_sge++] = sge;
        w.raddr = IOVA + 0x8000;
        w.rkey = f->bkey;
        sim_post_send(f->a, f->aqp, &w);
        w = fx_inv(KITE_WQE_LOCAL_INV, key, fence ? KITE_WQE_F_FENCE : 0);
        sim_post_send(f->a, f->aqp, &w);
        fx_run(f);
        assert_int_equal(f->a->mem_ops, 2);
        if (fence) {
            /* The READ's CQE (and REG_MR's) were out before LOCAL_INV ran. */
            assert_int_equal(f->a->cqes_at_mem_op, 2);
            fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_READ, 0,
                          0x2000);
            fx_expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_LOCAL_INV, 0,
                          0);
            assert_memory_equal(sim_mem(f->a, FR_OFF), sim_mem(f->b, 0x8000),
                                0x2000);
        } else {
            assert_int_equal(f->a->cqes_at_mem_op, 1);
            fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_READ,
                          KITE_CQE_LOC_PROT_ERR, 0);
        }
        fx_free(f);
    }
}

/* ---- validation ---- */

/* A host without mem_op: every memory operation is LOC_QP_OP_ERR. */
static void test_mem_op_null(void **st)
{
    static const uint8_t ops[] = {
        KITE_WQE_LOCAL_INV, KITE_WQE_REG_MR, KITE_WQE_BIND_MW,
    };
    unsigned i;

    (void)st;
    for (i = 0; i < sizeof(ops); i++) {
        SimConnParams p;
        Fx *f;
        SimWr w = fx_wr(ops[i], 0);

        sim_default_params(&p);
        p.no_mem_ops = true;
        f = fx_new(&p, KITE_QPT_RC, false);
        sim_post_send(f->a, f->aqp, &w);
        fx_run(f);
        fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, cqe_op(ops[i]),
                      KITE_CQE_LOC_QP_OP_ERR, 0);
        assert_int_equal(fx_state(f->a, f->aqp), KITE_QPS_ERR);
        assert_int_equal(f->a->mem_ops, 0);
        fx_free(f);
    }
}

/*
 * What the engine checks of a memory WQE before the host sees it: no
 * SGEs, no inline data, the opcode allowed on the QP type (SEND_INV on RC
 * only, BIND_MW not on UD).
 */
static void test_mem_wqe_checks(void **st)
{
    static const struct {
        uint8_t type, op, flags, nsge;
        uint16_t inl;
        uint8_t status;
    } c[] = {
        { KITE_QPT_RC, KITE_WQE_LOCAL_INV, 0, 1, 0, KITE_CQE_LOC_QP_OP_ERR },
        { KITE_QPT_RC, KITE_WQE_REG_MR, 0, 2, 0, KITE_CQE_LOC_QP_OP_ERR },
        { KITE_QPT_RC, KITE_WQE_BIND_MW, KITE_WQE_F_INLINE, 0, 0,
          KITE_CQE_LOC_QP_OP_ERR },
        { KITE_QPT_RC, KITE_WQE_LOCAL_INV, 0, 0, 8, KITE_CQE_LOC_QP_OP_ERR },
        { KITE_QPT_UC, KITE_WQE_SEND_INV, 0, 0, 0, KITE_CQE_LOC_QP_OP_ERR },
        { KITE_QPT_UD, KITE_WQE_SEND_INV, 0, 0, 0, KITE_CQE_LOC_QP_OP_ERR },
        { KITE_QPT_UD, KITE_WQE_BIND_MW, 0, 0, 0, KITE_CQE_LOC_QP_OP_ERR },
        /* Allowed: reaches the host, which refuses key 0. */
        { KITE_QPT_UD, KITE_WQE_LOCAL_INV, 0, 0, 0, KITE_CQE_LOC_PROT_ERR },
        { KITE_QPT_UC, KITE_WQE_BIND_MW, 0, 0, 0, KITE_CQE_MW_BIND_ERR },
    };
    unsigned i;

    (void)st;
    for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        Fx *f = fx_new(NULL, c[i].type == KITE_QPT_UD ? KITE_QPT_RC :
                       c[i].type, false);
        uint32_t qpn = f->aqp;
        SimWr w = fx_wr(c[i].op, c[i].flags);
        SimQp *q;
        uint8_t *slot;
        struct kite_sq_wqe_hdr hdr;

        if (c[i].type == KITE_QPT_UD) {
            qpn = sim_create_qp(f->a, KITE_QPT_UD, PDN, f->a_scq, f->a_rcq,
                                6, 8, 6, 7, false);
            sim_ud_up(f->a, qpn, 0x1234);
        }
        q = sim_qp(f->a, qpn);
        slot = sim_sq_slot(q, q->sq_pi);
        sim_write_send(f->a, qpn, &w);
        memcpy(&hdr, slot, sizeof(hdr));
        hdr.num_sge = c[i].nsge;
        kr_set_le16(&hdr.inline_len, c[i].inl);
        memcpy(slot, &hdr, sizeof(hdr));
        sim_sq_doorbell(f->a, qpn);
        fx_run(f);
        fx_expect_cqe(f->a, f->a_scq, qpn, 0, cqe_op(c[i].op),
                      c[i].status, 0);
        assert_int_equal(fx_state(f->a, qpn), KITE_QPS_ERR);
        assert_int_equal(f->a->mem_ops,
                         c[i].status != KITE_CQE_LOC_QP_OP_ERR);
        fx_free(f);
    }
}

/* ---- SEND_INV ---- */

static void expect_recv_inv(SimNode *n, uint32_t cqn, uint32_t qpn,
                            uint16_t idx, uint32_t len, uint32_t rkey)
{
    struct kite_cqe c;

    assert_true(sim_poll_cq(n, cqn, &c));
    assert_int_equal(kr_le32(&c.qpn), qpn);
    assert_int_equal(kr_le16(&c.wqe_idx), idx);
    assert_int_equal(c.status, KITE_CQE_SUCCESS);
    assert_int_equal(c.opcode, KITE_CQE_RECV);
    assert_int_equal(kr_le32(&c.byte_len), len);
    assert_true(c.flags & KITE_CQE_F_INV);
    assert_false(c.flags & KITE_CQE_F_IMM);
    assert_int_equal(kr_le32(&c.imm_data), rkey);
}

/*
 * SEND_INV goes out as SEND_ONLY_INV, or SEND_FIRST, MIDDLE...,
 * LAST_INV with the IETH on the last packet only; the responder places
 * the data, invalidates the rkey and reports it; the key is refused
 * afterwards.
 */
static void test_send_inv(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    uint32_t fr1 = sim_alloc_mr(f->b, PDN, 8), fr2 = sim_alloc_mr(f->b, PDN, 8);
    uint32_t fr3 = sim_alloc_mr(f->b, PDN, 8);
    uint32_t k1, k2, k3;
    OpLog log = { 0 };
    SimWr w;

    (void)st;
    k1 = reg_b(f, fr1, 0x51);
    k2 = reg_on(f, f->b, f->bqp, f->b_scq, fr2, 0x52, FR_OFF + FR_LEN,
                FR_LEN, FR_ACCESS);
    k3 = reg_on(f, f->b, f->bqp, f->b_scq, fr3, 0x53, FR_OFF + 2 * FR_LEN,
                FR_LEN, FR_ACCESS);
    f->s.tap = op_tap;
    f->s.tap_arg = &log;
    fx_fill(sim_mem(f->a, 0), 3000, 1);
    fx_recv(f->b, f->bqp, 0x100000, 0x1000, f->bkey);
    fx_recv(f->b, f->bqp, 0x110000, 0x1000, f->bkey);
    w = fx_inv(KITE_WQE_SEND_INV, k1, KITE_WQE_F_SOLICITED);
    fx_sge(&w, 0, 100, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    w = fx_inv(KITE_WQE_SEND_INV, k2, 0);
    fx_sge(&w, 0, 3000, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 100);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_SEND, 0, 3000);
    expect_recv_inv(f->b, f->b_rcq, f->bqp, 0, 100, k1);
    expect_recv_inv(f->b, f->b_rcq, f->bqp, 1, 3000, k2);
    assert_memory_equal(sim_mem(f->b, 0x110000), sim_mem(f->a, 0), 3000);
    assert_int_equal(f->b->remote_invs, 2);
    assert_int_equal(log.n, 4);
    assert_int_equal(log.op[0], KITE_OP_SEND_ONLY_INV);
    assert_int_equal(log.ieth[0], k1);
    assert_int_equal(log.op[1], KITE_OP_SEND_FIRST);
    assert_int_equal(log.op[2], KITE_OP_SEND_MIDDLE);
    assert_int_equal(log.op[3], KITE_OP_SEND_LAST_INV);
    assert_int_equal(log.ieth[3], k2);
    /* Inline data, as for SEND. */
    fx_recv(f->b, f->bqp, 0x120000, 0x1000, f->bkey);
    w = fx_inv(KITE_WQE_SEND_INV, k3, KITE_WQE_F_INLINE);
    w.inl = sim_mem(f->a, 0x40);
    w.inline_len = 24;
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_SEND, 0, 24);
    expect_recv_inv(f->b, f->b_rcq, f->bqp, 2, 24, k3);
    assert_memory_equal(sim_mem(f->b, 0x120000), sim_mem(f->a, 0x40), 24);
    /* The rkeys are gone. */
    w = rdma(f, KITE_WQE_READ, 0x20000, 64, FR_IOVA + FR_OFF, k1);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 3, KITE_CQE_READ,
                  KITE_CQE_REM_ACCESS_ERR, 0);
    fx_free(f);
}

/*
 * A key that may not be invalidated (an MR registered by command; any
 * key at a host without remote_inv): NAK invalid request, REM_INV_REQ_ERR on both sides,
 * KITE_EVT_QP_REQ_ERR at the responder, both QPs in ERR.
 */
static void test_send_inv_bad_rkey(void **st)
{
    int nohost;

    (void)st;
    for (nohost = 0; nohost < 2; nohost++) {
        SimConnParams p;
        Fx *f;
        SimWr w;

        sim_default_params(&p);
        p.no_mem_ops = nohost;
        f = fx_new(&p, KITE_QPT_RC, false);
        fx_recv(f->b, f->bqp, 0x100000, 0x1000, f->bkey);
        fx_recv(f->b, f->bqp, 0x110000, 0x1000, f->bkey);
        /* A registered MR's key: not one SEND_INV may take away. */
        w = fx_inv(KITE_WQE_SEND_INV, f->bkey, 0);
        fx_sge(&w, 0, 200, f->akey);
        sim_post_send(f->a, f->aqp, &w);
        fx_run(f);
        fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND,
                      KITE_CQE_REM_INV_REQ_ERR, 0);
        fx_expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV,
                      KITE_CQE_REM_INV_REQ_ERR, 0);
        fx_expect_cqe(f->b, f->b_rcq, f->bqp, 1, KITE_CQE_RECV,
                      KITE_CQE_WR_FLUSH_ERR, 0);
        assert_true(sim_has_event(f->b, f->bqp, KITE_EVT_QP_REQ_ERR));
        assert_int_equal(fx_state(f->a, f->aqp), KITE_QPS_ERR);
        assert_int_equal(fx_state(f->b, f->bqp), KITE_QPS_ERR);
        assert_int_equal(f->b->remote_invs, nohost ? 0 : 1);
        /* The normal MR's key was not taken away. */
        assert_true(f->b->mr[kite_key_index(f->bkey)].valid);
        fx_free(f);
    }
}

/*
 * SEND_INVs under loss, duplication and reordering, with the requester's
 * own LOCAL_INV and REG_MR between them: each rkey is invalidated exactly
 * once, each memory operation runs once (a second REG_MR of a valid MR
 * or LOCAL_INV of a free one would fail), everything completes.
 */
static void test_send_inv_lossy(void **st)
{
    enum { N = 12 };
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    uint32_t fr[N], key[N], afr = sim_alloc_mr(f->a, PDN, 8), akey = afr;
    struct kite_cqe c;
    unsigned i, nsend = 0, nmem = 0;

    (void)st;
    for (i = 0; i < N; i++) {
        fr[i] = sim_alloc_mr(f->b, PDN, 4);
        key[i] = reg_on(f, f->b, f->bqp, f->b_scq, fr[i], (uint8_t)(0x60 + i),
                        FR_OFF + i * 0x4000ull, 0x4000, FR_ACCESS);
        fx_recv(f->b, f->bqp, 0x100000 + i * 0x2000ull, 0x2000, f->bkey);
    }
    f->s.drop_ppm = f->s.dup_ppm = f->s.reorder_ppm = 80000;
    fx_fill(sim_mem(f->a, 0), 0x2000, 77);
    for (i = 0; i < N; i++) {
        SimWr w = fx_inv(KITE_WQE_SEND_INV, key[i], 0);

        fx_sge(&w, 0, 700 + i * 300, f->akey);
        sim_post_send(f->a, f->aqp, &w);
        if (i % 2 == 0) {
            w = fx_reg_mr(f->a, akey, (uint8_t)(0x80 + i), FR_OFF, FR_LEN,
                          FR_ACCESS, &akey);
        } else {
            w = fx_inv(KITE_WQE_LOCAL_INV, akey, 0);
        }
        sim_post_send(f->a, f->aqp, &w);
    }
    fx_run(f);
    while (sim_poll_cq(f->a, f->a_scq, &c)) {
        assert_int_equal(c.status, KITE_CQE_SUCCESS);
        if (c.opcode == KITE_CQE_SEND) {
            nsend++;
        } else {
            nmem++;
        }
    }
    assert_int_equal(nsend, N);
    assert_int_equal(nmem, N);
    for (i = 0; i < N; i++) {
        expect_recv_inv(f->b, f->b_rcq, f->bqp, (uint16_t)i, 700 + i * 300,
                        key[i]);
        assert_false(f->b->mr[kite_key_index(key[i])].valid);
        assert_memory_equal(sim_mem(f->b, 0x100000 + i * 0x2000ull),
                            sim_mem(f->a, 0), 700 + i * 300);
    }
    assert_int_equal(f->b->remote_invs, N);
    assert_int_equal(f->a->mem_ops, N);
    assert_true(f->s.dropped > 0 && f->s.duplicated > 0);
    assert_true(kite_roce_qp_counters(sim_qp(f->a, f->aqp)->qp)->retransmits
                > 0);
    /* Requests that had been executed came again and were not run again. */
    assert_true(kite_roce_qp_counters(sim_qp(f->b, f->bqp)->qp)->dup_requests
                > 0);
    fx_free(f);
}

/* ---- windows ---- */

/*
 * A type-2B window bound by B's QP: A's remote WRITE through it lands in
 * B's MR (the host's check sees B's QP); SEND_INV takes it away.
 */
static void test_bind_mw_and_invalidate(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    uint32_t mr = sim_reg_mr(f->b, PDN, IOVA, MEM_SIZE,
                             ALL_ACCESS | KITE_ACCESS_MW_BIND, 0);
    uint32_t mw = sim_alloc_mw(f->b, PDN, SIM_MW_2);
    uint32_t wkey = kite_key_make(kite_key_index(mw), 0x99);
    SimWr w = fx_wr(KITE_WQE_BIND_MW, 0);

    (void)st;
    kr_set_le64(&w.bind_mw.addr, IOVA + 0x40000);
    kr_set_le64(&w.bind_mw.length, 0x1000);
    kr_set_le32(&w.bind_mw.mw_key, wkey);
    kr_set_le32(&w.bind_mw.mr_key, mr);
    kr_set_le32(&w.bind_mw.access, KITE_ACCESS_REMOTE_WRITE);
    sim_post_send(f->b, f->bqp, &w);
    fx_run(f);
    fx_expect_cqe(f->b, f->b_scq, f->bqp, 0, KITE_CQE_BIND_MW, 0, 0);
    assert_int_equal(f->b->last_mem_op_len, sizeof(struct kite_sq_wqe_hdr) +
                     sizeof(struct kite_wqe_bind_mw));
    fx_fill(sim_mem(f->a, 0), 0x1000, 8);
    w = rdma(f, KITE_WQE_WRITE, 0, 0x1000, IOVA + 0x40000, wkey);
    sim_post_send(f->a, f->aqp, &w);
    fx_recv(f->b, f->bqp, 0x100000, 0x1000, f->bkey);
    w = fx_inv(KITE_WQE_SEND_INV, wkey, 0);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_WRITE, 0, 0x1000);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_SEND, 0, 0);
    expect_recv_inv(f->b, f->b_rcq, f->bqp, 0, 0, wkey);
    assert_memory_equal(sim_mem(f->b, 0x40000), sim_mem(f->a, 0), 0x1000);
    w = rdma(f, KITE_WQE_WRITE, 0, 16, IOVA + 0x40000, wkey);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_WRITE,
                  KITE_CQE_REM_ACCESS_ERR, 0);
    fx_free(f);
}

/* ---- 32 SGEs ---- */

/* A SEND gathered from 32 SGEs into a receive of 32, a READ into 32. */
static void test_32_sges(void **st)
{
    Fx *f = fx_new_stride(NULL, KITE_QPT_RC, false, 10, 10);
    SimSge rs[KITE_DEF_MAX_SGE];
    SimWr w = fx_wr(KITE_WQE_SEND, 0);
    unsigned i;

    (void)st;
    assert_int_equal(KITE_DEF_MAX_SGE, 32);
    fx_fill(sim_mem(f->a, 0), 0x10000, 4);
    for (i = 0; i < KITE_DEF_MAX_SGE; i++) {
        fx_sge(&w, i * 0x200ull, 100 + i, f->akey);
        rs[i] = (SimSge){ IOVA + 0x100000 + i * 0x100ull, 100 + i, f->bkey };
    }
    sim_post_recv(f->b, f->bqp, KITE_DEF_MAX_SGE, rs);
    sim_post_send(f->a, f->aqp, &w);
    w.opcode = KITE_WQE_READ;
    w.raddr = IOVA + 0x200000;
    w.rkey = f->bkey;
    for (i = 0; i < KITE_DEF_MAX_SGE; i++) {
        w.sge[i].addr = IOVA + 0x20000 + i * 0x200ull;
    }
    fx_fill(sim_mem(f->b, 0x200000), 0x2000, 6);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0,
                  32 * 100 + 31 * 16);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_READ, 0,
                  32 * 100 + 31 * 16);
    fx_expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV, 0,
                  32 * 100 + 31 * 16);
    {
        uint32_t off = 0;

        for (i = 0; i < KITE_DEF_MAX_SGE; i++) {
            /* SGE i of the receive holds SGE i of the send. */
            assert_memory_equal(sim_mem(f->b, 0x100000 + i * 0x100ull),
                                sim_mem(f->a, i * 0x200ull), 100 + i);
            assert_memory_equal(sim_mem(f->a, 0x20000 + i * 0x200ull),
                                sim_mem(f->b, 0x200000 + off), 100 + i);
            off += 100 + i;
        }
    }
    /* 33 fit the stride, not the limit. */
    {
        SimQp *q = sim_qp(f->a, f->aqp);
        uint8_t *slot = sim_sq_slot(q, q->sq_pi);
        struct kite_sq_wqe_hdr hdr;

        w.opcode = KITE_WQE_SEND;
        sim_write_send(f->a, f->aqp, &w);
        memcpy(&hdr, slot, sizeof(hdr));
        hdr.num_sge = KITE_DEF_MAX_SGE + 1;
        memcpy(slot, &hdr, sizeof(hdr));
        sim_sq_doorbell(f->a, f->aqp);
        fx_run(f);
        fx_expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_SEND,
                      KITE_CQE_LOC_QP_OP_ERR, 0);
    }
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reg_mr_then_remote_access),
        cmocka_unit_test(test_local_inv_then_access_refused),
        cmocka_unit_test(test_mem_op_order_and_failure),
        cmocka_unit_test(test_fence_local_inv_after_read),
        cmocka_unit_test(test_mem_op_null),
        cmocka_unit_test(test_mem_wqe_checks),
        cmocka_unit_test(test_send_inv),
        cmocka_unit_test(test_send_inv_bad_rkey),
        cmocka_unit_test(test_send_inv_lossy),
        cmocka_unit_test(test_bind_mw_and_invalidate),
        cmocka_unit_test(test_32_sges),
    };

    return cmocka_run_group_tests_name("roce_memops", tests, NULL, NULL);
}
