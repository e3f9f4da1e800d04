/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Focused cases for the Kite RoCEv2 engine (qemu/roce/) on the host
 * simulation harness (roce_sim.[ch]): every opcode with data checked, PSN
 * wrap, every MTU, each error completion, flush, doorbell overflow,
 * duplicate READ/atomic handling, UC and loopback.
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

#include "roce_sim.h"
#include "kite_roce_pkt.h"

#define MEM_SIZE        (4u << 20)
#define IOVA            0x7f0000000000ull
#define PDN             3
#define ALL_ACCESS      (KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE | \
                         KITE_ACCESS_REMOTE_READ | KITE_ACCESS_REMOTE_ATOMIC)
#define RUN_STEPS       20000000ull

typedef struct Fx {
    Sim s;
    SimNode *a, *b;
    uint32_t a_scq, a_rcq, b_scq, b_rcq;
    uint32_t aqp, bqp;
    uint32_t akey, bkey;        /* whole memory, all access */
} Fx;

static Fx *fx_new(const SimConnParams *pp, uint8_t type, bool loopback)
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

static void fx_free(Fx *f)
{
    sim_free(&f->s);
    free(f);
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
    size_t i;

    for (i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
}

static SimWr wr_make(uint8_t op, uint8_t flags)
{
    SimWr w;

    memset(&w, 0, sizeof(w));
    w.opcode = op;
    w.flags = flags | KITE_WQE_F_SIGNALED;
    return w;
}

static void wr_sge(SimWr *w, uint64_t off, uint32_t len, uint32_t key)
{
    w->sge[w->num_sge].addr = IOVA + off;
    w->sge[w->num_sge].length = len;
    w->sge[w->num_sge].lkey = key;
    w->num_sge++;
}

static void post_recv1(SimNode *n, uint32_t qpn, uint64_t off, uint32_t len,
                       uint32_t key)
{
    SimSge s = { IOVA + off, len, key };

    sim_post_recv(n, qpn, 1, &s);
}

static void run(Fx *f)
{
    sim_run(&f->s, RUN_STEPS);
}

static void expect_cqe(SimNode *n, uint32_t cqn, uint32_t qpn, uint16_t idx,
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

static void expect_no_cqe(SimNode *n, uint32_t cqn)
{
    struct kite_cqe c;

    assert_false(sim_poll_cq(n, cqn, &c));
}

static uint8_t state(SimNode *n, uint32_t qpn)
{
    return kite_roce_qp_state(sim_qp(n, qpn)->qp);
}

/* ---- every opcode ---- */

static void test_send_sges(void **st)
{
    SimConnParams p;
    Fx *f;
    SimWr w = wr_make(KITE_WQE_SEND, 0);
    struct kite_cqe c;
    SimSge rs[2] = {
        { IOVA + 0x200000, 3000, 0 }, { IOVA + 0x300000, 4000, 0 },
    };

    (void)st;
    sim_default_params(&p);
    p.b_stays_rtr = true;
    f = fx_new(&p, KITE_QPT_RC, false);
    fill(sim_mem(f->a, 0), 5000, 1);
    wr_sge(&w, 0, 1000, f->akey);
    wr_sge(&w, 1000, 1, f->akey);
    wr_sge(&w, 1001, 3999, f->akey);
    rs[0].lkey = rs[1].lkey = f->bkey;
    sim_post_recv(f->b, f->bqp, 2, rs);
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 5000);
    assert_true(sim_poll_cq(f->b, f->b_rcq, &c));
    assert_int_equal(c.status, 0);
    assert_int_equal(c.opcode, KITE_CQE_RECV);
    assert_int_equal(kr_le32(&c.byte_len), 5000);
    assert_int_equal(c.flags & KITE_CQE_F_IMM, 0);
    assert_memory_equal(sim_mem(f->b, 0x200000), sim_mem(f->a, 0), 3000);
    assert_memory_equal(sim_mem(f->b, 0x300000), sim_mem(f->a, 3000), 2000);
    /* Nothing past the message was written. */
    assert_int_equal(*sim_mem(f->b, 0x300000 + 2000), 0);
    /* B is in RTR: the first packet established communication. */
    assert_int_equal(state(f->b, f->bqp), KITE_QPS_RTR);
    assert_int_equal(f->b->nevents, 1);
    assert_true(sim_has_event(f->b, f->bqp, KITE_EVT_COMM_EST));
    fx_free(f);
}

static void test_send_imm_inline_solicited(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w = wr_make(KITE_WQE_SEND_IMM, KITE_WQE_F_INLINE |
                      KITE_WQE_F_SOLICITED);
    uint8_t data[200];
    struct kite_cqe c;

    (void)st;
    fill(data, sizeof(data), 7);
    w.inl = data;
    w.inline_len = sizeof(data);
    memcpy(w.imm, "\x12\x34\x56\x78", 4);
    post_recv1(f->b, f->bqp, 0x1000, 4096, f->bkey);
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 200);
    assert_true(sim_poll_cq(f->b, f->b_rcq, &c));
    assert_int_equal(c.status, 0);
    assert_int_equal(kr_le32(&c.byte_len), 200);
    assert_true(c.flags & KITE_CQE_F_IMM);
    assert_true(c.flags & KITE_CQE_F_SOLICITED);
    assert_memory_equal(&c.imm_data, "\x12\x34\x56\x78", 4);
    assert_memory_equal(sim_mem(f->b, 0x1000), data, sizeof(data));
    fx_free(f);
}

static void test_write_and_write_imm(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w = wr_make(KITE_WQE_WRITE, 0);
    struct kite_cqe c;

    (void)st;
    fill(sim_mem(f->a, 0), 20000, 3);
    wr_sge(&w, 0, 10000, f->akey);
    w.raddr = IOVA + 0x100000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);

    w = wr_make(KITE_WQE_WRITE_IMM, KITE_WQE_F_SOLICITED);
    wr_sge(&w, 10000, 3000, f->akey);
    w.raddr = IOVA + 0x180000;
    w.rkey = f->bkey;
    memcpy(w.imm, "\xde\xad\xbe\xef", 4);
    post_recv1(f->b, f->bqp, 0x1000, 16, f->bkey);
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_WRITE, 0, 10000);
    expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_WRITE, 0, 3000);
    assert_memory_equal(sim_mem(f->b, 0x100000), sim_mem(f->a, 0), 10000);
    assert_memory_equal(sim_mem(f->b, 0x180000), sim_mem(f->a, 10000), 3000);
    assert_true(sim_poll_cq(f->b, f->b_rcq, &c));
    assert_int_equal(c.status, 0);
    assert_int_equal(c.opcode, KITE_CQE_RECV_WRITE_IMM);
    assert_int_equal(kr_le32(&c.byte_len), 3000);
    assert_true(c.flags & KITE_CQE_F_IMM);
    assert_true(c.flags & KITE_CQE_F_SOLICITED);
    assert_memory_equal(&c.imm_data, "\xde\xad\xbe\xef", 4);
    /* The receive buffer is untouched by WRITE_IMM. */
    assert_int_equal(*sim_mem(f->b, 0x1000), 0);
    expect_no_cqe(f->b, f->b_rcq);
    fx_free(f);
}

static void test_read(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w = wr_make(KITE_WQE_READ, 0);

    (void)st;
    fill(sim_mem(f->b, 0x100000), 9000, 5);
    wr_sge(&w, 0x10000, 4000, f->akey);
    wr_sge(&w, 0x20000, 5000, f->akey);
    w.raddr = IOVA + 0x100000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    /* A zero-length READ. */
    w = wr_make(KITE_WQE_READ, 0);
    w.raddr = IOVA + 0x100000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_READ, 0, 9000);
    expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_READ, 0, 0);
    assert_memory_equal(sim_mem(f->a, 0x10000), sim_mem(f->b, 0x100000),
                        4000);
    assert_memory_equal(sim_mem(f->a, 0x20000),
                        sim_mem(f->b, 0x100000 + 4000), 5000);
    fx_free(f);
}

static uint64_t ld64(const uint8_t *p)
{
    uint64_t v = 0;
    int i;

    for (i = 7; i >= 0; i--) {
        v = v << 8 | p[i];
    }
    return v;
}

static void st64(uint8_t *p, uint64_t v)
{
    int i;

    for (i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static void test_atomics(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w;

    (void)st;
    st64(sim_mem(f->b, 0x1000), 100);
    /* Compare matches: swapped. */
    w = wr_make(KITE_WQE_CMP_SWP, 0);
    wr_sge(&w, 0x100, 8, f->akey);
    w.raddr = IOVA + 0x1000;
    w.rkey = f->bkey;
    w.compare = 100;
    w.swap_add = 0x1122334455667788ull;
    sim_post_send(f->a, f->aqp, &w);
    /* Compare does not match: unchanged, original returned. */
    w = wr_make(KITE_WQE_CMP_SWP, 0);
    wr_sge(&w, 0x108, 8, f->akey);
    w.raddr = IOVA + 0x1000;
    w.rkey = f->bkey;
    w.compare = 5;
    w.swap_add = 7;
    sim_post_send(f->a, f->aqp, &w);
    w = wr_make(KITE_WQE_FETCH_ADD, 0);
    wr_sge(&w, 0x110, 8, f->akey);
    w.raddr = IOVA + 0x1000;
    w.rkey = f->bkey;
    w.swap_add = 0x10;
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_CMP_SWP, 0, 8);
    expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_CMP_SWP, 0, 8);
    expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_FETCH_ADD, 0, 8);
    assert_int_equal(ld64(sim_mem(f->a, 0x100)), 100);
    assert_int_equal(ld64(sim_mem(f->a, 0x108)), 0x1122334455667788ull);
    assert_int_equal(ld64(sim_mem(f->a, 0x110)), 0x1122334455667788ull);
    assert_int_equal(ld64(sim_mem(f->b, 0x1000)), 0x1122334455667798ull);
    fx_free(f);
}

static void test_atomic_misaligned(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w = wr_make(KITE_WQE_FETCH_ADD, 0);

    (void)st;
    wr_sge(&w, 0x100, 8, f->akey);
    w.raddr = IOVA + 0x1004;
    w.rkey = f->bkey;
    w.swap_add = 1;
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_FETCH_ADD,
               KITE_CQE_REM_INV_REQ_ERR, 0);
    assert_int_equal(ld64(sim_mem(f->b, 0x1000)), 0);
    assert_int_equal(state(f->b, f->bqp), KITE_QPS_ERR);
    assert_true(sim_has_event(f->b, f->bqp, KITE_EVT_QP_REQ_ERR));
    fx_free(f);
}

/* ---- PSN wrap and MTUs ---- */

static void test_psn_wrap(void **st)
{
    SimConnParams p;
    Fx *f;
    SimWr w;
    struct kite_cqe c;

    (void)st;
    sim_default_params(&p);
    p.path_mtu = KITE_MTU_256;
    p.psn_a = 0xfffff0;
    p.psn_b = 0xffffff;
    f = fx_new(&p, KITE_QPT_RC, false);
    fill(sim_mem(f->a, 0), 70000, 9);
    fill(sim_mem(f->b, 0x200000), 20000, 10);
    post_recv1(f->b, f->bqp, 0x100000, 70000, f->bkey);
    w = wr_make(KITE_WQE_SEND, 0);
    wr_sge(&w, 0, 70000, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    w = wr_make(KITE_WQE_READ, 0);
    wr_sge(&w, 0x300000, 20000, f->akey);
    w.raddr = IOVA + 0x200000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    /* And the other direction, starting at 0xffffff. */
    w = wr_make(KITE_WQE_WRITE, 0);
    wr_sge(&w, 0x200000, 20000, f->bkey);
    w.raddr = IOVA + 0x380000;
    w.rkey = f->akey;
    sim_post_send(f->b, f->bqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 70000);
    expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_READ, 0, 20000);
    expect_cqe(f->b, f->b_scq, f->bqp, 0, KITE_CQE_WRITE, 0, 20000);
    assert_true(sim_poll_cq(f->b, f->b_rcq, &c));
    assert_int_equal(c.status, 0);
    assert_int_equal(kr_le32(&c.byte_len), 70000);
    assert_memory_equal(sim_mem(f->b, 0x100000), sim_mem(f->a, 0), 70000);
    assert_memory_equal(sim_mem(f->a, 0x300000), sim_mem(f->b, 0x200000),
                        20000);
    assert_memory_equal(sim_mem(f->a, 0x380000), sim_mem(f->b, 0x200000),
                        20000);
    /* 70000 / 256 = 274 packets + the READ's 79: well past the wrap. */
    assert_int_equal(kite_roce_qp_sq_psn(sim_qp(f->a, f->aqp)->qp),
                     (0xfffff0 + 274 + 79) & 0xffffff);
    assert_int_equal(kite_roce_qp_rq_psn(sim_qp(f->b, f->bqp)->qp),
                     (0xfffff0 + 274 + 79) & 0xffffff);
    fx_free(f);
}

static void v6_tap(Sim *s, int src, const uint8_t *frame, size_t len,
                   void *arg)
{
    unsigned *n = arg;

    (void)s;
    (void)src;
    if (len > 14 && frame[12] == 0x86 && frame[13] == 0xdd) {
        (*n)++;
    }
}

static void test_ipv6(void **st)
{
    unsigned v6 = 0;
    SimConnParams p;
    Fx *f;
    SimWr w;
    int i;

    (void)st;
    sim_default_params(&p);
    p.ipv6 = true;
    p.path_mtu = KITE_MTU_4096;
    /*
     * fx_new connects at once: give the nodes IPv6 GIDs and connect a
     * second pair of QPs.
     */
    f = fx_new(NULL, KITE_QPT_RC, false);
    for (i = 0; i < 2; i++) {
        static const uint8_t pre[8] = { 0x20, 0x01, 0x0d, 0xb8 };

        memcpy(f->s.node[i].gid, pre, 8);
        memset(f->s.node[i].gid + 8, 0, 7);
        f->s.node[i].gid[15] = (uint8_t)(i + 1);
    }
    f->aqp = sim_create_qp(f->a, KITE_QPT_RC, PDN, f->a_scq, f->a_rcq, 6, 8,
                           6, 7, false);
    f->bqp = sim_create_qp(f->b, KITE_QPT_RC, PDN, f->b_scq, f->b_rcq, 6, 8,
                           6, 7, false);
    sim_connect(&f->s, 0, f->aqp, 1, f->bqp, &p);
    f->s.tap = v6_tap;
    f->s.tap_arg = &v6;
    fill(sim_mem(f->a, 0), 10000, 6);
    w = wr_make(KITE_WQE_WRITE, 0);
    wr_sge(&w, 0, 10000, f->akey);
    w.raddr = IOVA + 0x100000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    w = wr_make(KITE_WQE_READ, 0);
    wr_sge(&w, 0x200000, 10000, f->akey);
    w.raddr = IOVA + 0x100000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_WRITE, 0, 10000);
    expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_READ, 0, 10000);
    assert_memory_equal(sim_mem(f->b, 0x100000), sim_mem(f->a, 0), 10000);
    assert_memory_equal(sim_mem(f->a, 0x200000), sim_mem(f->a, 0), 10000);
    /* 3 WRITE packets, an ACK, a READ request and 3 responses. */
    assert_int_equal(v6, 8);
    assert_int_equal(f->s.frames, 8);
    fx_free(f);
}

static void test_every_mtu(void **st)
{
    uint8_t mtu;

    (void)st;
    for (mtu = KITE_MTU_256; mtu <= KITE_MTU_4096; mtu++) {
        SimConnParams p;
        Fx *f;
        SimWr w;
        uint32_t len = 3 * kite_mtu_bytes(mtu) + 17;
        struct kite_cqe c;

        sim_default_params(&p);
        p.path_mtu = mtu;
        f = fx_new(&p, KITE_QPT_RC, false);
        fill(sim_mem(f->a, 0), len, mtu);
        fill(sim_mem(f->b, 0x200000), len, mtu + 100);
        w = wr_make(KITE_WQE_WRITE, 0);
        wr_sge(&w, 0, len, f->akey);
        w.raddr = IOVA + 0x100000;
        w.rkey = f->bkey;
        sim_post_send(f->a, f->aqp, &w);
        w = wr_make(KITE_WQE_READ, 0);
        wr_sge(&w, 0x300000, len, f->akey);
        w.raddr = IOVA + 0x200000;
        w.rkey = f->bkey;
        sim_post_send(f->a, f->aqp, &w);
        w = wr_make(KITE_WQE_SEND, 0);
        wr_sge(&w, 0, len, f->akey);
        post_recv1(f->b, f->bqp, 0x380000, len, f->bkey);
        sim_post_send(f->a, f->aqp, &w);
        run(f);
        expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_WRITE, 0, len);
        expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_READ, 0, len);
        expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_SEND, 0, len);
        assert_true(sim_poll_cq(f->b, f->b_rcq, &c));
        assert_int_equal(kr_le32(&c.byte_len), len);
        assert_memory_equal(sim_mem(f->b, 0x100000), sim_mem(f->a, 0), len);
        assert_memory_equal(sim_mem(f->a, 0x300000), sim_mem(f->b, 0x200000),
                            len);
        assert_memory_equal(sim_mem(f->b, 0x380000), sim_mem(f->a, 0), len);
        /* 4 packets per message each way: 12 requests + 4 responses... */
        assert_int_equal(kite_roce_qp_sq_psn(sim_qp(f->a, f->aqp)->qp),
                         (0x100 + 12) & 0xffffff);
        fx_free(f);
    }
}

/* ---- error completions ---- */

static void test_bad_lkey(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w = wr_make(KITE_WQE_SEND, 0);

    (void)st;
    post_recv1(f->b, f->bqp, 0, 4096, f->bkey);
    wr_sge(&w, 0, 100, f->akey ^ 0x100);
    sim_post_send(f->a, f->aqp, &w);
    w = wr_make(KITE_WQE_SEND, 0);
    wr_sge(&w, 0, 100, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND,
               KITE_CQE_LOC_PROT_ERR, 0);
    expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_SEND,
               KITE_CQE_WR_FLUSH_ERR, 0);
    expect_no_cqe(f->a, f->a_scq);
    assert_int_equal(state(f->a, f->aqp), KITE_QPS_ERR);
    assert_true(sim_has_event(f->a, f->aqp, KITE_ROCE_EVT_STATE));
    /* Out of bounds of a valid key: also a protection error. */
    fx_free(f);
    f = fx_new(NULL, KITE_QPT_RC, false);
    w = wr_make(KITE_WQE_WRITE, 0);
    wr_sge(&w, MEM_SIZE - 10, 100, f->akey);
    w.raddr = IOVA;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_WRITE,
               KITE_CQE_LOC_PROT_ERR, 0);
    fx_free(f);
}

static void test_read_local_access(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w = wr_make(KITE_WQE_READ, 0);
    uint32_t rokey = sim_reg_mr(f->a, PDN, IOVA, 0x10000, 0, 0);

    (void)st;
    wr_sge(&w, 0x100, 64, rokey);
    w.raddr = IOVA;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_READ,
               KITE_CQE_LOC_ACCESS_ERR, 0);
    assert_int_equal(state(f->a, f->aqp), KITE_QPS_ERR);
    fx_free(f);
}

static void test_bad_rkey(void **st)
{
    static const uint8_t ops[] = {
        KITE_WQE_WRITE, KITE_WQE_READ, KITE_WQE_FETCH_ADD,
    };
    static const uint8_t cqe_ops[] = {
        KITE_CQE_WRITE, KITE_CQE_READ, KITE_CQE_FETCH_ADD,
    };
    unsigned i, v;

    (void)st;
    for (i = 0; i < 3; i++) {
        for (v = 0; v < 3; v++) {
            SimConnParams p;
            Fx *f;
            SimWr w = wr_make(ops[i], 0);
            uint32_t key;
            uint8_t zero[4096];
            struct kite_cqe c;

            sim_default_params(&p);
            /* v 0: bad rkey; 1: QP lacks remote access; 2: MR does. */
            if (v == 1) {
                p.access_b = KITE_ACCESS_LOCAL_WRITE;
            }
            f = fx_new(&p, KITE_QPT_RC, false);
            key = sim_reg_mr(f->b, PDN, IOVA + 0x100000, 0x1000,
                             v == 2 ? KITE_ACCESS_LOCAL_WRITE : ALL_ACCESS,
                             0x100000);
            memset(zero, 0, sizeof(zero));
            fill(sim_mem(f->a, 0x8000), 4096, 1);
            wr_sge(&w, 0x8000, ops[i] == KITE_WQE_FETCH_ADD ? 8 : 3000,
                   f->akey);
            w.raddr = IOVA + 0x100000;
            w.rkey = v == 0 ? key + 1 : key;
            w.swap_add = 5;
            sim_post_send(f->a, f->aqp, &w);
            run(f);
            assert_true(sim_poll_cq(f->a, f->a_scq, &c));
            assert_int_equal(c.status, KITE_CQE_REM_ACCESS_ERR);
            assert_int_equal(c.opcode, cqe_ops[i]);
            assert_int_equal(kr_le16(&c.wqe_idx), 0);
            assert_memory_equal(sim_mem(f->b, 0x100000), zero, 4096);
            assert_int_equal(state(f->b, f->bqp), KITE_QPS_ERR);
            assert_int_equal(state(f->a, f->aqp), KITE_QPS_ERR);
            assert_true(sim_has_event(f->b, f->bqp, KITE_EVT_QP_ACCESS_ERR));
            assert_true(sim_has_event(f->b, f->bqp, KITE_ROCE_EVT_STATE));
            /* The state change is reported before the event. */
            assert_int_equal(f->b->nevents, 2);
            assert_int_equal(f->b->events[0].type, KITE_ROCE_EVT_STATE);
            assert_int_equal(f->b->events[1].type, KITE_EVT_QP_ACCESS_ERR);
            assert_int_equal(kite_roce_qp_counters(
                                 sim_qp(f->b, f->bqp)->qp)->naks_sent, 1);
            assert_int_equal(kite_roce_qp_counters(
                                 sim_qp(f->a, f->aqp)->qp)->naks_rcvd, 1);
            /* A READ's local buffer is untouched as well. */
            if (ops[i] == KITE_WQE_READ) {
                uint8_t ref[3000];

                fill(ref, sizeof(ref), 1);
                assert_memory_equal(sim_mem(f->a, 0x8000), ref, 3000);
            }
            fx_free(f);
        }
    }
}

static void test_rnr_retry_zero(void **st)
{
    SimConnParams p;
    Fx *f;
    SimWr w;

    (void)st;
    sim_default_params(&p);
    p.rnr_retry = 0;
    f = fx_new(&p, KITE_QPT_RC, false);
    w = wr_make(KITE_WQE_SEND, 0);
    wr_sge(&w, 0, 100, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND,
               KITE_CQE_RNR_RETRY_EXC_ERR, 0);
    assert_int_equal(state(f->a, f->aqp), KITE_QPS_ERR);
    assert_int_equal(kite_roce_qp_counters(
                         sim_qp(f->a, f->aqp)->qp)->rnr_naks_rcvd, 1);
    /* The responder is fine. */
    assert_int_equal(state(f->b, f->bqp), KITE_QPS_RTS);
    fx_free(f);
}

static void test_rnr_then_recv(void **st)
{
    SimConnParams p;
    Fx *f;
    SimWr w;
    struct kite_cqe c;
    const struct kite_roce_counters *ca;
    uint64_t t0;
    int i;

    (void)st;
    sim_default_params(&p);
    p.rnr_retry = 7;
    p.min_rnr_timer = 14;   /* 0.96 ms */
    f = fx_new(&p, KITE_QPT_RC, false);
    ca = kite_roce_qp_counters(sim_qp(f->a, f->aqp)->qp);
    fill(sim_mem(f->a, 0), 5000, 4);
    w = wr_make(KITE_WQE_SEND, 0);
    wr_sge(&w, 0, 5000, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    t0 = f->s.now;
    for (i = 0; i < 1000000 && ca->rnr_naks_rcvd < 10; i++) {
        assert_true(sim_step(&f->s));
    }
    assert_int_equal(ca->rnr_naks_rcvd, 10);
    /* Ten RNR waits of 0.96 ms each have passed. */
    assert_true(f->s.now - t0 >= 9 * 960000ull);
    expect_no_cqe(f->a, f->a_scq);
    post_recv1(f->b, f->bqp, 0x100000, 8192, f->bkey);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 5000);
    assert_true(sim_poll_cq(f->b, f->b_rcq, &c));
    assert_int_equal(c.status, 0);
    assert_int_equal(kr_le32(&c.byte_len), 5000);
    assert_memory_equal(sim_mem(f->b, 0x100000), sim_mem(f->a, 0), 5000);
    fx_free(f);
}

static void test_peer_gone(void **st)
{
    SimConnParams p;
    Fx *f;
    SimWr w;
    const struct kite_roce_counters *ca;

    (void)st;
    sim_default_params(&p);
    p.retry_cnt = 3;
    p.timeout = 10;
    f = fx_new(&p, KITE_QPT_RC, false);
    ca = kite_roce_qp_counters(sim_qp(f->a, f->aqp)->qp);
    f->s.drop_all = true;
    post_recv1(f->b, f->bqp, 0x100000, 8192, f->bkey);
    w = wr_make(KITE_WQE_SEND, 0);
    wr_sge(&w, 0, 3000, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    w = wr_make(KITE_WQE_WRITE, 0);
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND,
               KITE_CQE_RETRY_EXC_ERR, 0);
    expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_WRITE,
               KITE_CQE_WR_FLUSH_ERR, 0);
    assert_int_equal(ca->timeouts, 4);
    /* 3 packets + 1 zero-length WRITE, sent once and retried 3 times. */
    assert_int_equal(ca->tx_packets, 16);
    assert_int_equal(ca->retransmits, 12);
    /* timeout 10 = 4.19 ms; 4 expiries */
    assert_true(f->s.now >= 4 * (4096ull << 10));
    fx_free(f);
}

static void test_flush_in_order(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    struct kite_roce_qp_attr a;
    struct kite_cqe c;
    SimWr w;
    int i;

    (void)st;
    for (i = 0; i < 5; i++) {
        w = wr_make(i == 3 ? KITE_WQE_READ : KITE_WQE_SEND, 0);
        if (i & 1) {
            w.flags &= ~KITE_WQE_F_SIGNALED;
        }
        sim_write_send(f->a, f->aqp, &w);
    }
    sim_sq_doorbell(f->a, f->aqp);
    post_recv1(f->a, f->aqp, 0, 100, f->akey);
    post_recv1(f->a, f->aqp, 0, 100, f->akey);
    memset(&a, 0, sizeof(a));
    a.state = KITE_QPS_ERR;
    sim_modify(f->a, f->aqp, &a, KITE_QP_ATTR_STATE);
    for (i = 0; i < 5; i++) {
        assert_true(sim_poll_cq(f->a, f->a_scq, &c));
        assert_int_equal(kr_le16(&c.wqe_idx), i);
        assert_int_equal(c.status, KITE_CQE_WR_FLUSH_ERR);
        assert_int_equal(c.opcode, i == 3 ? KITE_CQE_READ : KITE_CQE_SEND);
    }
    for (i = 0; i < 2; i++) {
        assert_true(sim_poll_cq(f->a, f->a_rcq, &c));
        assert_int_equal(kr_le16(&c.wqe_idx), i);
        assert_int_equal(c.status, KITE_CQE_WR_FLUSH_ERR);
        assert_int_equal(c.opcode, KITE_CQE_RECV);
    }
    /* Posted later: flushed too. */
    w = wr_make(KITE_WQE_WRITE, 0);
    w.flags = 0;
    sim_post_send(f->a, f->aqp, &w);
    post_recv1(f->a, f->aqp, 0, 100, f->akey);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 5, KITE_CQE_WRITE,
               KITE_CQE_WR_FLUSH_ERR, 0);
    expect_cqe(f->a, f->a_rcq, f->aqp, 2, KITE_CQE_RECV,
               KITE_CQE_WR_FLUSH_ERR, 0);
    expect_no_cqe(f->a, f->a_scq);
    /* Host-initiated: no state event. */
    assert_false(sim_has_event(f->a, f->aqp, KITE_ROCE_EVT_STATE));
    /* RESET clears it all; the QP works again after reconnecting. */
    a.state = KITE_QPS_RESET;
    sim_modify(f->a, f->aqp, &a, KITE_QP_ATTR_STATE);
    sim_modify(f->b, f->bqp, &a, KITE_QP_ATTR_STATE);
    assert_int_equal(state(f->a, f->aqp), KITE_QPS_RESET);
    assert_int_equal(kite_roce_qp_sq_psn(sim_qp(f->a, f->aqp)->qp), 0);
    {
        SimConnParams p;
        SimQp *qa = sim_qp(f->a, f->aqp), *qb = sim_qp(f->b, f->bqp);

        /* The rings start again at index 0. */
        qa->sq_pi = qa->rq_pi = qb->sq_pi = qb->rq_pi = 0;
        sim_default_params(&p);
        sim_connect(&f->s, 0, f->aqp, 1, f->bqp, &p);
    }
    fill(sim_mem(f->a, 0), 3000, 2);
    post_recv1(f->b, f->bqp, 0x100000, 4096, f->bkey);
    w = wr_make(KITE_WQE_SEND, 0);
    wr_sge(&w, 0, 3000, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 3000);
    expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV, 0, 3000);
    assert_memory_equal(sim_mem(f->b, 0x100000), sim_mem(f->a, 0), 3000);
    fx_free(f);
}

static void test_sqd(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    struct kite_roce_qp_attr a;
    SimWr w;
    int i;

    (void)st;
    fill(sim_mem(f->a, 0), 65536, 12);
    for (i = 0; i < 3; i++) {
        w = wr_make(KITE_WQE_WRITE, 0);
        wr_sge(&w, 0, 65536, f->akey);
        w.raddr = IOVA + 0x100000 + 0x10000 * i;
        w.rkey = f->bkey;
        sim_post_send(f->a, f->aqp, &w);
    }
    /* Let the first WRITE start, then drain the SQ. */
    for (i = 0; i < 3; i++) {
        sim_step(&f->s);
    }
    memset(&a, 0, sizeof(a));
    a.state = KITE_QPS_SQD;
    sim_modify(f->a, f->aqp, &a, KITE_QP_ATTR_STATE);
    run(f);
    /* The started WQE finished, the others did not start. */
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_WRITE, 0, 65536);
    expect_no_cqe(f->a, f->a_scq);
    assert_memory_equal(sim_mem(f->b, 0x100000), sim_mem(f->a, 0), 65536);
    assert_int_equal(*sim_mem(f->b, 0x110000), 0);
    a.state = KITE_QPS_RTS;
    sim_modify(f->a, f->aqp, &a, KITE_QP_ATTR_STATE);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_WRITE, 0, 65536);
    expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_WRITE, 0, 65536);
    assert_memory_equal(sim_mem(f->b, 0x120000), sim_mem(f->a, 0), 65536);
    fx_free(f);
}

static void test_doorbell_overflow(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimQp *q = sim_qp(f->a, f->aqp);

    (void)st;
    kite_roce_sq_doorbell(q->qp, 65);   /* depth 64 */
    assert_int_equal(state(f->a, f->aqp), KITE_QPS_ERR);
    assert_int_equal(f->a->nevents, 2);
    assert_int_equal(f->a->events[0].type, KITE_ROCE_EVT_STATE);
    assert_int_equal(f->a->events[1].type, KITE_EVT_QP_FATAL);
    run(f);
    expect_no_cqe(f->a, f->a_scq);
    /* RQ as well, on the other QP. */
    q = sim_qp(f->b, f->bqp);
    kite_roce_rq_doorbell(q->qp, 0x80000000u);
    assert_int_equal(state(f->b, f->bqp), KITE_QPS_ERR);
    assert_true(sim_has_event(f->b, f->bqp, KITE_EVT_QP_FATAL));
    fx_free(f);
}

/* Capture the first frame with BTH opcode @op from node @src. */
typedef struct Cap {
    int src;
    uint8_t op;
    uint8_t frame[KITE_ROCE_MAX_FRAME];
    size_t len;
    unsigned count;             /* frames of that opcode seen */
    unsigned from_b_atomic_acks;
} Cap;

static void cap_tap(Sim *s, int src, const uint8_t *frame, size_t len,
                    void *arg)
{
    Cap *c = arg;
    struct kite_roce_pkt p;

    (void)s;
    if (kite_roce_parse(frame, len, &p) != KITE_ROCE_OK) {
        return;
    }
    if (src == c->src && p.opcode == c->op) {
        if (!c->count && len <= sizeof(c->frame)) {
            memcpy(c->frame, frame, len);
            c->len = len;
        }
        c->count++;
    }
    if (src == 1 && p.opcode == KITE_OP_ATOMIC_ACK) {
        c->from_b_atomic_acks++;
    }
}

static void test_dup_read_reexecuted(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    Cap *cap = calloc(1, sizeof(*cap));
    SimWr w = wr_make(KITE_WQE_READ, 0);
    uint64_t reads;
    const struct kite_roce_counters *cb;

    (void)st;
    cap->src = 0;
    cap->op = KITE_OP_READ_REQ;
    f->s.tap = cap_tap;
    f->s.tap_arg = cap;
    cb = kite_roce_qp_counters(sim_qp(f->b, f->bqp)->qp);
    fill(sim_mem(f->b, 0x100000), 3000, 2);
    wr_sge(&w, 0x1000, 3000, f->akey);
    w.raddr = IOVA + 0x100000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_READ, 0, 3000);
    assert_int_equal(cap->count, 1);
    reads = f->b->remote_reads;
    /* Change the memory: a re-executed READ re-reads it. */
    fill(sim_mem(f->b, 0x100000), 3000, 99);
    sim_inject(&f->s, 1, cap->frame, cap->len);
    run(f);
    assert_int_equal(cb->dup_requests, 1);
    assert_true(f->b->remote_reads >= reads + 3);
    /* The requester drops the stale responses: no CQE, data unchanged. */
    expect_no_cqe(f->a, f->a_scq);
    assert_int_equal(state(f->a, f->aqp), KITE_QPS_RTS);
    assert_int_equal(state(f->b, f->bqp), KITE_QPS_RTS);
    free(cap);
    fx_free(f);
}

static void test_dup_atomic_replayed(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    Cap *cap = calloc(1, sizeof(*cap));
    SimWr w = wr_make(KITE_WQE_FETCH_ADD, 0);
    const struct kite_roce_counters *cb;
    uint64_t writes;

    (void)st;
    cap->src = 0;
    cap->op = KITE_OP_FETCH_ADD;
    f->s.tap = cap_tap;
    f->s.tap_arg = cap;
    cb = kite_roce_qp_counters(sim_qp(f->b, f->bqp)->qp);
    st64(sim_mem(f->b, 0x2000), 1000);
    wr_sge(&w, 0x100, 8, f->akey);
    w.raddr = IOVA + 0x2000;
    w.rkey = f->bkey;
    w.swap_add = 1;
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_FETCH_ADD, 0, 8);
    assert_int_equal(ld64(sim_mem(f->b, 0x2000)), 1001);
    assert_int_equal(ld64(sim_mem(f->a, 0x100)), 1000);
    assert_int_equal(cap->from_b_atomic_acks, 1);
    writes = f->b->atomic_writes;
    sim_inject(&f->s, 1, cap->frame, cap->len);
    sim_inject(&f->s, 1, cap->frame, cap->len);
    run(f);
    assert_int_equal(cb->dup_requests, 2);
    /* Replayed (two more ATOMIC_ACKs), not executed again. */
    assert_int_equal(cap->from_b_atomic_acks, 3);
    assert_int_equal(f->b->atomic_writes, writes);
    assert_int_equal(ld64(sim_mem(f->b, 0x2000)), 1001);
    expect_no_cqe(f->a, f->a_scq);
    free(cap);
    fx_free(f);
}

static void test_recv_too_small(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w = wr_make(KITE_WQE_SEND, 0);
    uint8_t zero[1024];

    (void)st;
    memset(zero, 0, sizeof(zero));
    post_recv1(f->b, f->bqp, 0x100000, 1000, f->bkey);
    post_recv1(f->b, f->bqp, 0x110000, 1000, f->bkey);
    wr_sge(&w, 0, 2000, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV,
               KITE_CQE_LOC_LEN_ERR, 0);
    expect_cqe(f->b, f->b_rcq, f->bqp, 1, KITE_CQE_RECV,
               KITE_CQE_WR_FLUSH_ERR, 0);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND,
               KITE_CQE_REM_INV_REQ_ERR, 0);
    assert_int_equal(state(f->b, f->bqp), KITE_QPS_ERR);
    fx_free(f);
}

static void test_malformed_wqes(void **st)
{
    static const struct {
        uint8_t op, flags, nsge;
        uint16_t inl;
    } bad[] = {
        { 0x07, 0, 0, 0 },                          /* unknown opcode */
        { KITE_WQE_SEND, 0, 9, 0 },                 /* > max SGEs */
        { KITE_WQE_SEND, 0, 16, 0 },                /* past the stride */
        { KITE_WQE_SEND, KITE_WQE_F_INLINE, 0, 257 },   /* inline too long */
        { KITE_WQE_WRITE, KITE_WQE_F_INLINE, 0, 240 },  /* past stride */
        { KITE_WQE_SEND, KITE_WQE_F_INLINE, 1, 8 },     /* inline + SGE */
        { KITE_WQE_READ, KITE_WQE_F_INLINE, 0, 8 },     /* inline READ */
        { KITE_WQE_FETCH_ADD, 0, 2, 0 },            /* atomic, 2 SGEs */
        { KITE_WQE_CMP_SWP, 0, 1, 0 },              /* SGE of 4 bytes */
    };
    unsigned i;

    (void)st;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        Fx *f = fx_new(NULL, KITE_QPT_RC, false);
        SimQp *q = sim_qp(f->a, f->aqp);
        SimWr w = wr_make(KITE_WQE_SEND, 0);
        struct kite_sq_wqe_hdr hdr = {
            .opcode = bad[i].op,
            .flags = bad[i].flags | KITE_WQE_F_SIGNALED,
            .num_sge = bad[i].nsge,
        };
        uint8_t *slot;

        sim_write_send(f->a, f->aqp, &w);   /* a good one first */
        slot = sim_sq_slot(q, q->sq_pi);
        memset(slot, 0, 1u << q->cfg.sq_log_stride);
        kr_set_le16(&hdr.inline_len, bad[i].inl);
        memcpy(slot, &hdr, sizeof(hdr));
        if (bad[i].op == KITE_WQE_CMP_SWP) {
            struct kite_sge sge = { 0 };

            kr_set_le32(&sge.length, 4);
            memcpy(slot + sizeof(hdr) + sizeof(struct kite_wqe_atomic), &sge,
                   sizeof(sge));
        }
        q->sq_pi++;
        sim_sq_doorbell(f->a, f->aqp);
        post_recv1(f->b, f->bqp, 0, 100, f->bkey);
        run(f);
        expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 0);
        {
            struct kite_cqe c;

            assert_true(sim_poll_cq(f->a, f->a_scq, &c));
            assert_int_equal(kr_le16(&c.wqe_idx), 1);
            assert_int_equal(c.status, KITE_CQE_LOC_QP_OP_ERR);
        }
        assert_int_equal(state(f->a, f->aqp), KITE_QPS_ERR);
        fx_free(f);
    }
}

static void test_unsignaled_and_sig_all(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w;
    int i;

    (void)st;
    for (i = 0; i < 4; i++) {
        w = wr_make(KITE_WQE_WRITE, 0);
        if (i != 2) {
            w.flags = 0;
        }
        wr_sge(&w, 0, 100, f->akey);
        w.raddr = IOVA;
        w.rkey = f->bkey;
        sim_post_send(f->a, f->aqp, &w);
    }
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_WRITE, 0, 100);
    expect_no_cqe(f->a, f->a_scq);
    fx_free(f);
}

static void test_uc(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_UC, false);
    SimWr w;
    struct kite_cqe c;

    (void)st;
    fill(sim_mem(f->a, 0), 10000, 8);
    post_recv1(f->b, f->bqp, 0x100000, 10000, f->bkey);
    w = wr_make(KITE_WQE_SEND, 0);
    wr_sge(&w, 0, 10000, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    w = wr_make(KITE_WQE_WRITE, 0);
    wr_sge(&w, 0, 5000, f->akey);
    w.raddr = IOVA + 0x200000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    w = wr_make(KITE_WQE_READ, 0);  /* not a UC opcode */
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 10000);
    expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_WRITE, 0, 5000);
    expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_READ,
               KITE_CQE_LOC_QP_OP_ERR, 0);
    assert_true(sim_poll_cq(f->b, f->b_rcq, &c));
    assert_int_equal(kr_le32(&c.byte_len), 10000);
    assert_memory_equal(sim_mem(f->b, 0x100000), sim_mem(f->a, 0), 10000);
    assert_memory_equal(sim_mem(f->b, 0x200000), sim_mem(f->a, 0), 5000);
    /* No ACKs on UC: B sent nothing. */
    assert_int_equal(kite_roce_qp_counters(
                         sim_qp(f->b, f->bqp)->qp)->tx_packets, 0);
    fx_free(f);
}

static void test_ud_send(void **st)
{
    Sim *s = calloc(1, sizeof(*s));
    SimNode *a, *b;
    uint32_t acq, bcq, aqp, bqp, akey, bkey;
    SimWr w;
    struct kite_cqe c;
    uint8_t *buf;

    (void)st;
    sim_init(s, 2, MEM_SIZE, 77);
    a = &s->node[0];
    b = &s->node[1];
    acq = sim_create_cq(a, 6);
    bcq = sim_create_cq(b, 6);
    aqp = sim_create_qp(a, KITE_QPT_UD, PDN, acq, acq, 5, 9, 5, 6, false);
    bqp = sim_create_qp(b, KITE_QPT_UD, PDN, bcq, bcq, 5, 9, 5, 6, false);
    akey = sim_reg_mr(a, PDN, IOVA, MEM_SIZE, ALL_ACCESS, 0);
    bkey = sim_reg_mr(b, PDN, IOVA, MEM_SIZE, ALL_ACCESS, 0);
    sim_ud_up(a, aqp, 0x1234);
    sim_ud_up(b, bqp, 0x1234);
    fill(sim_mem(a, 0), 5000, 3);
    post_recv1(b, bqp, 0x100000, 4096 + 40, bkey);
    post_recv1(b, bqp, 0x110000, 4096 + 40, bkey);

    /* 1: SEND_IMM with the QP's own Q_Key (bit 31). */
    w = wr_make(KITE_WQE_SEND_IMM, KITE_WQE_F_SOLICITED);
    wr_sge(&w, 0, 1000, akey);
    sim_ud_av(s, 1, &w.av, 0);
    w.remote_qpn = bqp;
    w.remote_qkey = 0x80000000u;
    memcpy(w.imm, "\x01\x02\x03\x04", 4);
    sim_post_send(a, aqp, &w);
    /* 2: wrong Q_Key: dropped by B. */
    w = wr_make(KITE_WQE_SEND, 0);
    wr_sge(&w, 0, 100, akey);
    sim_ud_av(s, 1, &w.av, 0);
    w.remote_qpn = bqp;
    w.remote_qkey = 0x999;
    sim_post_send(a, aqp, &w);
    /* 3: larger than the port MTU: success, nothing sent. */
    w = wr_make(KITE_WQE_SEND, 0);
    wr_sge(&w, 0, 5000, akey);
    sim_ud_av(s, 1, &w.av, 0);
    w.remote_qpn = bqp;
    w.remote_qkey = 0x1234;
    sim_post_send(a, aqp, &w);
    /* 4: a full-MTU send with an explicit Q_Key. */
    w = wr_make(KITE_WQE_SEND, 0);
    wr_sge(&w, 0, 4096, akey);
    sim_ud_av(s, 1, &w.av, 0);
    w.remote_qpn = bqp;
    w.remote_qkey = 0x1234;
    sim_post_send(a, aqp, &w);
    sim_run(s, RUN_STEPS);
    expect_cqe(a, acq, aqp, 0, KITE_CQE_SEND, 0, 1000);
    expect_cqe(a, acq, aqp, 1, KITE_CQE_SEND, 0, 100);
    expect_cqe(a, acq, aqp, 2, KITE_CQE_SEND, 0, 5000);
    expect_cqe(a, acq, aqp, 3, KITE_CQE_SEND, 0, 4096);
    assert_int_equal(s->frames, 3);

    assert_true(sim_poll_cq(b, bcq, &c));
    assert_int_equal(c.status, 0);
    assert_int_equal(c.opcode, KITE_CQE_RECV);
    assert_int_equal(kr_le16(&c.wqe_idx), 0);
    assert_int_equal(kr_le32(&c.byte_len), 40 + 1000);
    assert_int_equal(kr_le32(&c.src_qp), aqp);
    assert_int_equal(c.net_hdr, KITE_CQE_NET_IPV4);
    assert_memory_equal(c.smac, a->mac, 6);
    assert_true(c.flags & KITE_CQE_F_GRH);
    assert_true(c.flags & KITE_CQE_F_IMM);
    assert_true(c.flags & KITE_CQE_F_SOLICITED);
    assert_memory_equal(&c.imm_data, "\x01\x02\x03\x04", 4);
    buf = sim_mem(b, 0x100000);
    assert_int_equal(buf[0], 0);
    assert_int_equal(buf[19], 0);
    assert_int_equal(buf[20], 0x45);            /* the IPv4 header */
    assert_memory_equal(buf + 20 + 12, a->gid + 12, 4);
    assert_memory_equal(buf + 40, sim_mem(a, 0), 1000);

    assert_true(sim_poll_cq(b, bcq, &c));
    assert_int_equal(c.status, 0);
    assert_int_equal(kr_le16(&c.wqe_idx), 1);
    assert_int_equal(kr_le32(&c.byte_len), 40 + 4096);
    assert_int_equal(c.flags & KITE_CQE_F_IMM, 0);
    assert_memory_equal(sim_mem(b, 0x110000 + 40), sim_mem(a, 0), 4096);
    assert_false(sim_poll_cq(b, bcq, &c));
    assert_true(kite_roce_counters(b->e)->rx_dropped >= 1);

    /* An invalid source GID index: local QP operation error. */
    w = wr_make(KITE_WQE_SEND, 0);
    sim_ud_av(s, 1, &w.av, 5);
    w.remote_qpn = bqp;
    sim_post_send(a, aqp, &w);
    sim_run(s, RUN_STEPS);
    expect_cqe(a, acq, aqp, 4, KITE_CQE_SEND, KITE_CQE_LOC_QP_OP_ERR, 0);
    /*
     * Address vectors MODIFY_QP would refuse (the WQE's owner writes
     * them): IPv6 to an IPv4-mapped GID, IPv4 to a GID that is not
     * IPv4-mapped, a flow label over 20 bits, a multicast destination
     * (IPv4 224.0.0.1, IPv6 ff02::1), an unknown network type. Each one
     * completes in error (each on a QP of its own: the error moves the
     * QP to ERR) and nothing goes on the wire.
     */
    for (int i = 0; i < 6; i++) {
        static const uint8_t mc6[16] = { 0xff, 0x02, [15] = 1 };
        uint32_t frames = s->frames;
        uint32_t qp = sim_create_qp(a, KITE_QPT_UD, PDN, acq, acq, 5, 9, 5,
                                    6, false);

        sim_ud_up(a, qp, 0x1234);

        w = wr_make(KITE_WQE_SEND, 0);
        sim_ud_av(s, 1, &w.av, 0);
        switch (i) {
        case 0: w.av.net_type = KITE_NET_IPV6; break;
        case 1: w.av.dgid[10] = 0; break;
        case 2: kr_set_le32(&w.av.flow_label, 1u << 20); break;
        case 3: w.av.dgid[12] = 224; w.av.dgid[15] = 1; break;
        case 4:
            memcpy(w.av.dgid, mc6, sizeof(w.av.dgid));
            w.av.net_type = KITE_NET_IPV6;
            break;
        default: w.av.net_type = KITE_NET_IPV6 + 1; break;
        }
        w.remote_qpn = bqp;
        sim_post_send(a, qp, &w);
        sim_run(s, RUN_STEPS);
        expect_cqe(a, acq, qp, 0, KITE_CQE_SEND, KITE_CQE_LOC_QP_OP_ERR, 0);
        assert_int_equal(s->frames, frames);
    }
    /* RC opcodes on a UD QP: the same. */
    sim_free(s);
    free(s);
}

static void test_loopback(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, true);
    SimWr w;
    struct kite_cqe c;

    (void)st;
    fill(sim_mem(f->a, 0), 8000, 11);
    post_recv1(f->a, f->bqp, 0x100000, 8000, f->akey);
    w = wr_make(KITE_WQE_SEND, 0);
    wr_sge(&w, 0, 8000, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    w = wr_make(KITE_WQE_READ, 0);
    wr_sge(&w, 0x200000, 8000, f->akey);
    w.raddr = IOVA;
    w.rkey = f->akey;
    sim_post_send(f->a, f->bqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 8000);
    expect_cqe(f->a, f->b_scq, f->bqp, 0, KITE_CQE_READ, 0, 8000);
    assert_true(sim_poll_cq(f->a, f->b_rcq, &c));
    assert_int_equal(kr_le32(&c.byte_len), 8000);
    assert_memory_equal(sim_mem(f->a, 0x100000), sim_mem(f->a, 0), 8000);
    assert_memory_equal(sim_mem(f->a, 0x200000), sim_mem(f->a, 0), 8000);
    fx_free(f);
}

static void test_cq_overflow_fatal(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w;
    int i;

    (void)st;
    /* The send CQ has 256 entries; fill it without polling. */
    for (i = 0; i < 300; i++) {
        w = wr_make(KITE_WQE_WRITE, 0);
        sim_post_send(f->a, f->aqp, &w);
        run(f);
        if (state(f->a, f->aqp) == KITE_QPS_ERR) {
            break;
        }
    }
    assert_int_equal(i, 256);
    assert_true(sim_has_event(f->a, f->aqp, KITE_EVT_QP_FATAL));
    fx_free(f);
}

static void test_fence_and_rd_atomic_limit(void **st)
{
    SimConnParams p;
    Fx *f;
    SimWr w;
    int i;

    (void)st;
    sim_default_params(&p);
    p.max_rd_atomic = 1;
    f = fx_new(&p, KITE_QPT_RC, false);
    fill(sim_mem(f->b, 0x100000), 64 * 1024, 3);
    for (i = 0; i < 4; i++) {
        w = wr_make(KITE_WQE_READ, 0);
        wr_sge(&w, 0x10000 * (i + 1), 16384, f->akey);
        w.raddr = IOVA + 0x100000 + 16384 * i;
        w.rkey = f->bkey;
        sim_post_send(f->a, f->aqp, &w);
    }
    /* A fenced WRITE sends the data the READs brought in. */
    w = wr_make(KITE_WQE_WRITE, KITE_WQE_F_FENCE);
    wr_sge(&w, 0x10000, 16384, f->akey);
    w.raddr = IOVA + 0x300000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    /*
     * With one READ in flight, A cannot have sent the second READ before
     * the first completed: step until the first request went out.
     */
    for (i = 0; i < 10; i++) {
        sim_step(&f->s);
    }
    assert_int_equal(kite_roce_qp_sq_psn(sim_qp(f->a, f->aqp)->qp),
                     0x100 + 16);
    run(f);
    for (i = 0; i < 4; i++) {
        expect_cqe(f->a, f->a_scq, f->aqp, i, KITE_CQE_READ, 0, 16384);
        assert_memory_equal(sim_mem(f->a, 0x10000 * (i + 1)),
                            sim_mem(f->b, 0x100000 + 16384 * i), 16384);
    }
    expect_cqe(f->a, f->a_scq, f->aqp, 4, KITE_CQE_WRITE, 0, 16384);
    assert_memory_equal(sim_mem(f->b, 0x300000), sim_mem(f->b, 0x100000),
                        16384);
    fx_free(f);
}

static void test_bad_frames(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    Cap *cap = calloc(1, sizeof(*cap));
    SimWr w = wr_make(KITE_WQE_SEND, 0);
    const struct kite_roce_counters *pb;
    uint8_t junk[64];

    (void)st;
    cap->src = 0;
    cap->op = KITE_OP_SEND_ONLY;
    f->s.tap = cap_tap;
    f->s.tap_arg = cap;
    pb = kite_roce_counters(f->b->e);
    post_recv1(f->b, f->bqp, 0x100000, 100, f->bkey);
    wr_sge(&w, 0, 50, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 50);
    /* Corrupt the payload: ICRC error, counted and dropped. */
    cap->frame[cap->len - 10] ^= 0xff;
    sim_inject(&f->s, 1, cap->frame, cap->len);
    /* Truncated and non-RoCE frames. */
    sim_inject(&f->s, 1, cap->frame, 40);
    memset(junk, 0, sizeof(junk));
    memcpy(junk, f->b->mac, 6);
    sim_inject(&f->s, 1, junk, sizeof(junk));
    run(f);
    assert_int_equal(pb->icrc_errors, 1);
    assert_true(f->s.not_roce >= 1);
    assert_int_equal(state(f->b, f->bqp), KITE_QPS_RTS);
    expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV, 0, 50);
    expect_no_cqe(f->b, f->b_rcq);
    free(cap);
    fx_free(f);
}

static unsigned drain(SimNode *n, uint32_t cqn)
{
    struct kite_cqe c;
    unsigned k = 0;

    while (sim_poll_cq(n, cqn, &c)) {
        k++;
    }
    return k;
}

/*
 * Random WQEs: whatever the bytes, the engine completes them (an error
 * status or success) or moves the QP to ERR; it never crashes or touches
 * memory outside the MRs (run under ASan to see the latter).
 */
static void test_fuzz_wqes(void **st)
{
    Fx *f = NULL;
    unsigned it, n = 0;
    uint64_t rng = 99;

    (void)st;
    for (it = 0; it < 3000; it++) {
        struct kite_sq_wqe_hdr hdr;
        SimQp *q;
        uint8_t *slot;
        unsigned i;

        if (!f || state(f->a, f->aqp) == KITE_QPS_ERR || n >= 60) {
            if (f) {
                fx_free(f);
            }
            f = fx_new(NULL, (it / 7) % 3 == 2 ? KITE_QPT_UC : KITE_QPT_RC,
                       false);
            n = 0;
            for (i = 0; i < 60; i++) {
                post_recv1(f->b, f->bqp, 0x100000 + i * 0x1000, 0x1000,
                           f->bkey);
            }
        }
        q = sim_qp(f->a, f->aqp);
        slot = sim_sq_slot(q, q->sq_pi);
        for (i = 0; i < 256; i++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            slot[i] = (uint8_t)(rng >> 56);
        }
        memcpy(&hdr, slot, sizeof(hdr));
        hdr.opcode &= 7;
        if (it & 1) {
            /* Plausible SGEs and keys to get further in. */
            uint8_t *seg = slot + sizeof(hdr);
            uint8_t *sgl = seg + sizeof(struct kite_wqe_raddr);
            struct kite_sge sge;
            __le64 va;
            __le32 key;

            hdr.num_sge &= 3;
            hdr.flags &= ~KITE_WQE_F_INLINE;
            for (i = 0; i < 4; i++) {
                kr_set_le64(&sge.addr, IOVA | (slot[200 + i] & 0x3f) << 8);
                kr_set_le32(&sge.length, slot[210 + i]);
                kr_set_le32(&sge.lkey, f->akey);
                memcpy(sgl + i * sizeof(sge), &sge, sizeof(sge));
            }
            /* The remote address and key only: the rest stays random. */
            kr_set_le64(&va, IOVA + 0x100000 + (slot[220] & 0xf8));
            kr_set_le32(&key, f->bkey);
            memcpy(seg + offsetof(struct kite_wqe_raddr, remote_addr), &va,
                   sizeof(va));
            memcpy(seg + offsetof(struct kite_wqe_raddr, rkey), &key,
                   sizeof(key));
        }
        memcpy(slot, &hdr, sizeof(hdr));
        q->sq_pi++;
        n++;
        sim_sq_doorbell(f->a, f->aqp);
        sim_run(&f->s, 200000);
        drain(f->a, f->a_scq);
        drain(f->b, f->b_rcq);
    }
    fx_free(f);
}

/*
 * Random requests and responses with a valid ICRC: built from parsed real
 * frames with fields changed, then injected. Nothing may crash.
 */
typedef struct Corpus {
    unsigned n;
    uint8_t frame[64][KITE_ROCE_MAX_FRAME];
    size_t len[64];
    int src[64];
} Corpus;

static void corpus_tap(Sim *s, int src, const uint8_t *frame, size_t len,
                       void *arg)
{
    Corpus *c = arg;

    (void)s;
    if (c->n < 64 && len <= KITE_ROCE_MAX_FRAME) {
        memcpy(c->frame[c->n], frame, len);
        c->len[c->n] = len;
        c->src[c->n] = src;
        c->n++;
    }
}

static void test_fuzz_packets(void **st)
{
    static const uint8_t ops[] = {
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
        0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16,
        0x17,
    };
    Corpus *cor = calloc(1, sizeof(*cor));
    Fx *f = NULL;
    uint8_t *frame = malloc(KITE_ROCE_MAX_FRAME + 64);
    uint8_t payload[4096];
    uint64_t rng = 7;
    unsigned it;

    (void)st;
    /* A corpus of real frames: every opcode kind. */
    f = fx_new(NULL, KITE_QPT_RC, false);
    f->s.tap = corpus_tap;
    f->s.tap_arg = cor;
    {
        SimWr w = wr_make(KITE_WQE_SEND, 0);

        post_recv1(f->b, f->bqp, 0x100000, 0x10000, f->bkey);
        wr_sge(&w, 0, 3000, f->akey);
        sim_post_send(f->a, f->aqp, &w);
        w = wr_make(KITE_WQE_READ, 0);
        wr_sge(&w, 0x10000, 3000, f->akey);
        w.raddr = IOVA;
        w.rkey = f->bkey;
        sim_post_send(f->a, f->aqp, &w);
        w = wr_make(KITE_WQE_FETCH_ADD, 0);
        wr_sge(&w, 0x20000, 8, f->akey);
        w.raddr = IOVA;
        w.rkey = f->bkey;
        sim_post_send(f->a, f->aqp, &w);
        run(f);
    }
    fx_free(f);
    f = NULL;
    assert_true(cor->n >= 8);
    memset(payload, 0x3c, sizeof(payload));
    for (it = 0; it < 20000; it++) {
        struct kite_roce_pkt p;
        unsigned k;
        size_t len;
        uint32_t r;

        if (!f || (it % 500) == 0 || state(f->a, f->aqp) == KITE_QPS_ERR ||
            state(f->b, f->bqp) == KITE_QPS_ERR) {
            unsigned i;

            if (f) {
                fx_free(f);
            }
            f = fx_new(NULL, KITE_QPT_RC, false);
            for (i = 0; i < 8; i++) {
                post_recv1(f->b, f->bqp, 0x100000 + i * 0x1000, 0x1000,
                           f->bkey);
            }
        }
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        r = (uint32_t)(rng >> 32);
        k = r % cor->n;
        assert_int_equal(kite_roce_parse(cor->frame[k], cor->len[k], &p),
                         KITE_ROCE_OK);
        p.opcode = ops[(r >> 8) % sizeof(ops)];
        if (r & (1u << 20)) {
            p.psn = (p.psn + ((r >> 21) & 7) - 2) & 0xffffff;
        }
        if (r & (1u << 24)) {
            p.reth_len = (r & (1u << 25)) ? rng & 0xffff : (uint32_t)rng;
            p.reth_va = IOVA + ((rng >> 7) & 0x3fffff);
        }
        if (r & (1u << 26)) {
            p.atomic_va = IOVA + ((rng >> 9) & 0x3fffff);
            p.aeth_syndrome = (uint8_t)(rng >> 17);
        }
        if (r & (1u << 27)) {
            p.reth_rkey = p.atomic_rkey = (uint32_t)(rng >> 13);
        }
        p.ackreq = r & (1u << 28);
        p.paylen = (kite_roce_op_hdrs(p.opcode) & KITE_OPF_PAYLOAD) ?
                   (uint32_t)((rng >> 40) % 1100) : 0;
        p.payload = payload;
        len = kite_roce_build(frame, KITE_ROCE_MAX_FRAME + 64, &p);
        if (len) {
            /* Requests to the responder, responses to the requester. */
            sim_inject(&f->s, (kite_roce_op_hdrs(p.opcode) &
                               KITE_OPF_REQUEST) ? 1 : 0, frame, len);
        }
        sim_run(&f->s, 20000);
        drain(f->a, f->a_scq);
        drain(f->b, f->b_rcq);
    }
    fx_free(f);
    free(frame);
    free(cor);
}

/* ---- what the responder puts on the wire (roce-facts.md 5.3, 5.4) ---- */

typedef struct Seen {
    int src;                    /* node whose frames are recorded */
    unsigned n;
    struct {
        uint8_t op, syn;
        uint32_t psn, msn;
    } f[512];
} Seen;

static void seen_tap(Sim *s, int src, const uint8_t *frame, size_t len,
                     void *arg)
{
    Seen *sn = arg;
    struct kite_roce_pkt p;

    (void)s;
    if (src != sn->src || sn->n >= 512 ||
        kite_roce_parse(frame, len, &p) != KITE_ROCE_OK) {
        return;
    }
    sn->f[sn->n].op = p.opcode;
    sn->f[sn->n].syn = p.aeth_syndrome;
    sn->f[sn->n].psn = p.psn;
    sn->f[sn->n].msn = p.aeth_msn;
    sn->n++;
}

/* A SEND_ONLY of 16 bytes from A's QP to B's with PSN @psn. */
static void inject_send(Fx *f, uint32_t psn)
{
    static uint8_t frame[KITE_ROCE_MAX_FRAME];
    static const uint8_t data[16];
    struct kite_roce_pkt pk;
    size_t len;

    memset(&pk, 0, sizeof(pk));
    memcpy(pk.dmac, f->b->mac, 6);
    memcpy(pk.smac, f->a->mac, 6);
    memcpy(pk.sgid, f->a->gid, 16);
    memcpy(pk.dgid, f->b->gid, 16);
    pk.hop_limit = 64;
    pk.opcode = KITE_OP_SEND_ONLY;
    pk.pkey = KITE_BTH_PKEY_DEFAULT;
    pk.dqpn = f->bqp;
    pk.psn = psn & KITE_PSN_MASK;
    pk.ackreq = true;
    pk.payload = data;
    pk.paylen = sizeof(data);
    len = kite_roce_build(frame, sizeof(frame), &pk);
    assert_true(len > 0);
    kite_roce_rx(f->b->e, frame, len);
    run(f);
}

/*
 * Out-of-order requests get one PSN-sequence NAK with the expected PSN,
 * then silence until the expected PSN arrives; a duplicate SEND is not
 * executed again and is re-ACKed with the last accepted PSN and the
 * unchanged MSN; each ACK carries the MSN of completed messages.
 */
static void test_resp_nak_once_dup_ack_msn(void **st)
{
    SimConnParams p;
    Seen *sn = calloc(1, sizeof(*sn));
    Fx *f;
    int i;

    (void)st;
    assert_non_null(sn);
    sim_default_params(&p);
    f = fx_new(&p, KITE_QPT_RC, false);
    sn->src = 1;
    f->s.tap = seen_tap;
    f->s.tap_arg = sn;
    f->s.drop_all = true;       /* B's answers are only recorded */
    for (i = 0; i < 4; i++) {
        post_recv1(f->b, f->bqp, 0x1000 * i, 0x100, f->bkey);
    }
    /* Ahead of 0x100: one NAK for the first, nothing for the others. */
    inject_send(f, p.psn_a + 3);
    inject_send(f, p.psn_a + 4);
    inject_send(f, p.psn_a + 5);
    assert_int_equal(sn->n, 1);
    assert_int_equal(sn->f[0].op, KITE_OP_ACK);
    assert_int_equal(sn->f[0].syn, KITE_AETH_NAK_PSN_SEQ);
    assert_int_equal(sn->f[0].psn, p.psn_a);
    assert_int_equal(sn->f[0].msn, 0);
    /* The expected PSN: executed and ACKed, MSN 1. */
    inject_send(f, p.psn_a);
    assert_int_equal(sn->n, 2);
    assert_int_equal(sn->f[1].syn, KITE_AETH_ACK_UNLIMITED);
    assert_int_equal(sn->f[1].psn, p.psn_a);
    assert_int_equal(sn->f[1].msn, 1);
    expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV, KITE_CQE_SUCCESS,
               16);
    /* A new gap NAKs again (once). */
    inject_send(f, p.psn_a + 7);
    inject_send(f, p.psn_a + 8);
    assert_int_equal(sn->n, 3);
    assert_int_equal(sn->f[2].syn, KITE_AETH_NAK_PSN_SEQ);
    assert_int_equal(sn->f[2].psn, p.psn_a + 1);
    /* In sequence again, then a duplicate of it. */
    inject_send(f, p.psn_a + 1);
    inject_send(f, p.psn_a + 1);
    inject_send(f, p.psn_a);
    assert_int_equal(sn->n, 6);
    for (i = 3; i < 6; i++) {
        assert_int_equal(sn->f[i].syn, KITE_AETH_ACK_UNLIMITED);
        assert_int_equal(sn->f[i].psn, p.psn_a + 1);
        assert_int_equal(sn->f[i].msn, 2);
    }
    /* Two receives consumed, not four. */
    expect_cqe(f->b, f->b_rcq, f->bqp, 1, KITE_CQE_RECV, KITE_CQE_SUCCESS,
               16);
    expect_no_cqe(f->b, f->b_rcq);
    fx_free(f);
    free(sn);
}

/*
 * ACK coalescing: one ACK per message, plus one per KR_MAX_PKT_PER_ACK (64)
 * packets of a long one, each at the PSN of the packet with AckReq.
 */
static void test_ack_coalescing(void **st)
{
    Seen *sn = calloc(1, sizeof(*sn));
    Fx *f;
    SimWr w;
    unsigned i;

    (void)st;
    assert_non_null(sn);
    f = fx_new(NULL, KITE_QPT_RC, false);
    sn->src = 1;
    f->s.tap = seen_tap;
    f->s.tap_arg = sn;
    /* 10 packets at MTU 1024. */
    w = wr_make(KITE_WQE_WRITE, 0);
    wr_sge(&w, 0, 10 * 1024, f->akey);
    w.raddr = IOVA + 0x100000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_WRITE, KITE_CQE_SUCCESS,
               10 * 1024);
    assert_int_equal(sn->n, 1);
    assert_int_equal(sn->f[0].psn, 0x100 + 9);
    assert_int_equal(sn->f[0].msn, 1);
    /* 200 packets: AckReq on packets 63, 127, 191 and the last. */
    sn->n = 0;
    w = wr_make(KITE_WQE_WRITE, 0);
    wr_sge(&w, 0, 200 * 1024, f->akey);
    w.raddr = IOVA + 0x100000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_WRITE, KITE_CQE_SUCCESS,
               200 * 1024);
    assert_int_equal(sn->n, 4);
    for (i = 0; i < 3; i++) {
        assert_int_equal(sn->f[i].psn, 0x100 + 10 + 64 * i + 63);
        assert_int_equal(sn->f[i].msn, 1);
    }
    assert_int_equal(sn->f[3].psn, 0x100 + 10 + 199);
    assert_int_equal(sn->f[3].msn, 2);
    fx_free(f);
    free(sn);
}

/*
 * Implicit NAK (roce-facts.md 5.5): an ACK beyond a READ that has had no
 * response makes the requester go back at once, without the timer (here
 * about 2.4 hours).
 */
static void test_implicit_nak(void **st)
{
    static uint8_t frame[KITE_ROCE_MAX_FRAME];
    const struct kite_roce_counters *c;
    struct kite_roce_pkt pk;
    SimConnParams p;
    size_t len;
    Fx *f;
    SimWr w;

    (void)st;
    sim_default_params(&p);
    p.timeout = 31;
    f = fx_new(&p, KITE_QPT_RC, false);
    fill(sim_mem(f->b, 0x8000), 3000, 5);
    post_recv1(f->b, f->bqp, 0x20000, 0x100, f->bkey);
    f->s.drop_all = true;
    w = wr_make(KITE_WQE_READ, 0);
    wr_sge(&w, 0x10000, 3000, f->akey);
    w.raddr = IOVA + 0x8000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    w = wr_make(KITE_WQE_SEND, 0);
    wr_sge(&w, 0, 16, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    /* Only until both are sent: idle, the sim would jump to the timer. */
    do {
        assert_true(sim_step(&f->s));
    } while (f->s.frames < 2);
    assert_int_equal(f->s.dropped, 2);
    /* READ 0x100 (3 response PSNs), SEND 0x103: both lost. */
    f->s.drop_all = false;
    memset(&pk, 0, sizeof(pk));
    memcpy(pk.dmac, f->a->mac, 6);
    memcpy(pk.smac, f->b->mac, 6);
    memcpy(pk.sgid, f->b->gid, 16);
    memcpy(pk.dgid, f->a->gid, 16);
    pk.hop_limit = 64;
    pk.opcode = KITE_OP_ACK;
    pk.pkey = KITE_BTH_PKEY_DEFAULT;
    pk.dqpn = f->aqp;
    pk.psn = p.psn_a + 3;
    pk.aeth_syndrome = KITE_AETH_ACK_UNLIMITED;
    pk.aeth_msn = 2;
    len = kite_roce_build(frame, sizeof(frame), &pk);
    assert_true(len > 0);
    kite_roce_rx(f->a->e, frame, len);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_READ, KITE_CQE_SUCCESS,
               3000);
    expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_SEND, KITE_CQE_SUCCESS,
               16);
    assert_memory_equal(sim_mem(f->a, 0x10000), sim_mem(f->b, 0x8000), 3000);
    c = kite_roce_qp_counters(sim_qp(f->a, f->aqp)->qp);
    assert_int_equal(c->timeouts, 0);
    assert_true(c->retransmits >= 2);
    assert_true(f->s.now < 1000000000ull);
    fx_free(f);
}

/*
 * An RNR NAK acknowledges every PSN before its own (model.rst, "Where the
 * engine departs from rxe"): the SEND before it completes at once, the
 * NAK'd one is sent again after the RNR timer and then completes.
 */
static void test_rnr_nak_acks_before(void **st)
{
    static uint8_t frame[KITE_ROCE_MAX_FRAME];
    struct kite_roce_qp_attr a;
    struct kite_roce_pkt pk;
    SimConnParams p;
    size_t len;
    Fx *f;
    SimWr w;

    (void)st;
    sim_default_params(&p);
    f = fx_new(&p, KITE_QPT_RC, false);
    f->s.drop_all = true;
    w = wr_make(KITE_WQE_SEND, 0);
    wr_sge(&w, 0, 16, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    sim_post_send(f->a, f->aqp, &w);
    do {
        assert_true(sim_step(&f->s));
    } while (f->s.frames < 2);
    f->s.drop_all = false;
    memset(&pk, 0, sizeof(pk));
    memcpy(pk.dmac, f->a->mac, 6);
    memcpy(pk.smac, f->b->mac, 6);
    memcpy(pk.sgid, f->b->gid, 16);
    memcpy(pk.dgid, f->a->gid, 16);
    pk.hop_limit = 64;
    pk.opcode = KITE_OP_ACK;
    pk.pkey = KITE_BTH_PKEY_DEFAULT;
    pk.dqpn = f->aqp;
    pk.psn = p.psn_a + 1;
    pk.aeth_syndrome = KITE_AETH_RNR_NAK | 14;     /* 1.28 ms */
    pk.aeth_msn = 1;
    len = kite_roce_build(frame, sizeof(frame), &pk);
    assert_true(len > 0);
    kite_roce_rx(f->a->e, frame, len);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, KITE_CQE_SUCCESS,
               16);
    expect_no_cqe(f->a, f->a_scq);
    /* B as if it had taken the first SEND (lost here) and RNR'd the next. */
    memset(&a, 0, sizeof(a));
    a.rq_psn = p.psn_a + 1;
    sim_modify(f->b, f->bqp, &a, KITE_QP_ATTR_RQ_PSN);
    post_recv1(f->b, f->bqp, 0x1000, 0x100, f->bkey);
    post_recv1(f->b, f->bqp, 0x2000, 0x100, f->bkey);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_SEND, KITE_CQE_SUCCESS,
               16);
    /* Only the second SEND reached B: one receive used. */
    expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV, KITE_CQE_SUCCESS,
               16);
    expect_no_cqe(f->b, f->b_rcq);
    fx_free(f);
}

/* ---- what Soft-RoCE (rxe) does on the wire (model.rst) ---- */

/*
 * Give @pk the addresses of a frame from A to B (@to_b) or from B to A,
 * build it and hand it to the receiving engine (nothing else runs).
 */
static void inject_pkt(Fx *f, bool to_b, struct kite_roce_pkt *pk)
{
    static uint8_t frame[KITE_ROCE_MAX_FRAME];
    SimNode *src = to_b ? f->a : f->b, *dst = to_b ? f->b : f->a;
    size_t len;

    memcpy(pk->dmac, dst->mac, 6);
    memcpy(pk->smac, src->mac, 6);
    memcpy(pk->sgid, src->gid, 16);
    memcpy(pk->dgid, dst->gid, 16);
    pk->hop_limit = 64;
    pk->pkey = KITE_BTH_PKEY_DEFAULT;
    pk->dqpn = to_b ? f->bqp : f->aqp;
    len = kite_roce_build(frame, sizeof(frame), pk);
    assert_true(len > 0);
    kite_roce_rx(dst->e, frame, len);
}

/* One request packet of 1024 bytes (path MTU) from A's QP to B's. */
static void inject_seg(Fx *f, uint8_t op, uint32_t psn, bool ackreq,
                       const uint8_t *data, uint32_t reth_len)
{
    struct kite_roce_pkt pk;

    memset(&pk, 0, sizeof(pk));
    pk.opcode = op;
    pk.psn = psn & KITE_PSN_MASK;
    pk.ackreq = ackreq;
    pk.payload = data;
    pk.paylen = 1024;
    if (op == KITE_OP_WRITE_FIRST) {
        pk.reth_va = IOVA + 0x40000;
        pk.reth_rkey = f->bkey;
        pk.reth_len = reth_len;
    }
    inject_pkt(f, true, &pk);
    run(f);
}

/*
 * rxe's retransmit timer is not restarted when a message starts, so it
 * fires in the middle of one (captured in the interop group: SEND_FIRST,
 * SEND_MIDDLE, then 0.7 ms later the same FIRST and MIDDLE again, none
 * with AckReq yet). The responder executes nothing twice, re-ACKs each
 * duplicate with the last accepted PSN and the unchanged MSN, and the
 * message goes on where it was and completes once, for SEND and WRITE.
 */
static void test_rxe_goback_mid_message(void **st)
{
    static uint8_t data[4096], junk[1024];
    const struct kite_roce_counters *cb;
    SimConnParams p;
    Seen *sn = calloc(1, sizeof(*sn));
    unsigned i, w;
    uint32_t psn;
    Fx *f;

    (void)st;
    assert_non_null(sn);
    fill(data, sizeof(data), 77);
    memset(junk, 0xee, sizeof(junk));
    sim_default_params(&p);
    f = fx_new(&p, KITE_QPT_RC, false);
    sn->src = 1;
    f->s.tap = seen_tap;
    f->s.tap_arg = sn;
    f->s.drop_all = true;       /* B's answers are only recorded */
    post_recv1(f->b, f->bqp, 0x10000, 4096, f->bkey);
    for (w = 0; w < 2; w++) {
        uint8_t first = w ? KITE_OP_WRITE_FIRST : KITE_OP_SEND_FIRST;
        uint8_t middle = w ? KITE_OP_WRITE_MIDDLE : KITE_OP_SEND_MIDDLE;
        uint8_t last = w ? KITE_OP_WRITE_LAST : KITE_OP_SEND_LAST;

        psn = p.psn_a + 4 * w;
        sn->n = 0;
        inject_seg(f, first, psn, false, data, 4096);
        inject_seg(f, middle, psn + 1, false, data + 1024, 0);
        assert_int_equal(sn->n, 0);             /* no AckReq yet */
        /* Go back N: the same two packets again (other bytes here). */
        inject_seg(f, first, psn, false, junk, 4096);
        inject_seg(f, middle, psn + 1, false, junk, 0);
        assert_int_equal(sn->n, 2);
        for (i = 0; i < 2; i++) {
            assert_int_equal(sn->f[i].op, KITE_OP_ACK);
            assert_int_equal(sn->f[i].syn, KITE_AETH_ACK_UNLIMITED);
            assert_int_equal(sn->f[i].psn, psn + 1);
            assert_int_equal(sn->f[i].msn, w);
        }
        inject_seg(f, middle, psn + 2, false, data + 2048, 0);
        inject_seg(f, last, psn + 3, true, data + 3072, 0);
        assert_int_equal(sn->n, 3);
        assert_int_equal(sn->f[2].syn, KITE_AETH_ACK_UNLIMITED);
        assert_int_equal(sn->f[2].psn, psn + 3);
        assert_int_equal(sn->f[2].msn, w + 1);
        assert_int_equal(state(f->b, f->bqp), KITE_QPS_RTS);
    }
    expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV, KITE_CQE_SUCCESS,
               4096);
    expect_no_cqe(f->b, f->b_rcq);
    assert_memory_equal(sim_mem(f->b, 0x10000), data, sizeof(data));
    assert_memory_equal(sim_mem(f->b, 0x40000), data, sizeof(data));
    cb = kite_roce_qp_counters(sim_qp(f->b, f->bqp)->qp);
    assert_int_equal(cb->dup_requests, 4);
    fx_free(f);
    free(sn);
}

/* An RNR NAK or PSN-sequence NAK from B's QP to A's (A does not run). */
static void inject_nak(Fx *f, uint8_t syndrome, uint32_t psn)
{
    struct kite_roce_pkt pk;

    memset(&pk, 0, sizeof(pk));
    pk.opcode = KITE_OP_ACK;
    pk.psn = psn & KITE_PSN_MASK;
    pk.aeth_syndrome = syndrome;
    inject_pkt(f, false, &pk);
}

/*
 * rxe's responder RNR-NAKs the SEND that finds no receive and then answers
 * the next packet, which is ahead of it now, with a PSN-sequence NAK for
 * the same PSN. With retry_cnt 0 (rnr_retry 7: wait for ever) that second
 * NAK must not count as a retry: the requester waits out the RNR timer
 * round after round and completes once the receiver is ready.
 */
static void test_rxe_rnr_then_seq_nak(void **st)
{
    const struct kite_roce_counters *ca;
    SimConnParams p;
    unsigned round;
    uint64_t sent;
    Fx *f;
    SimWr w;

    (void)st;
    sim_default_params(&p);
    p.retry_cnt = 0;
    p.rnr_retry = 7;
    f = fx_new(&p, KITE_QPT_RC, false);
    f->s.drop_all = true;
    w = wr_make(KITE_WQE_SEND, 0);
    wr_sge(&w, 0, 16, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    sim_post_send(f->a, f->aqp, &w);
    for (round = 0; round < 5; round++) {
        /* Until both SENDs are (re)sent; they are lost on the way. */
        sent = f->s.frames;
        do {
            assert_true(sim_step(&f->s));
        } while (f->s.frames < sent + 2);
        f->s.drop_all = false;
        inject_nak(f, KITE_AETH_RNR_NAK | 1, p.psn_a);
        inject_nak(f, KITE_AETH_NAK_PSN_SEQ, p.psn_a);
        f->s.drop_all = true;
        assert_int_equal(state(f->a, f->aqp), KITE_QPS_RTS);
        expect_no_cqe(f->a, f->a_scq);
    }
    ca = kite_roce_qp_counters(sim_qp(f->a, f->aqp)->qp);
    assert_int_equal(ca->rnr_naks_rcvd, 5);
    assert_int_equal(ca->naks_rcvd, 5);
    assert_int_equal(ca->timeouts, 0);
    /* The receiver is ready now. */
    f->s.drop_all = false;
    post_recv1(f->b, f->bqp, 0x1000, 0x100, f->bkey);
    post_recv1(f->b, f->bqp, 0x2000, 0x100, f->bkey);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, KITE_CQE_SUCCESS,
               16);
    expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_SEND, KITE_CQE_SUCCESS,
               16);
    expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV, KITE_CQE_SUCCESS,
               16);
    expect_cqe(f->b, f->b_rcq, f->bqp, 1, KITE_CQE_RECV, KITE_CQE_SUCCESS,
               16);
    /* A sequence NAK that is not part of an RNR event still counts. */
    f->s.drop_all = true;
    sim_post_send(f->a, f->aqp, &w);
    sim_post_send(f->a, f->aqp, &w);
    sent = f->s.frames;
    do {
        assert_true(sim_step(&f->s));
    } while (f->s.frames < sent + 2);
    f->s.drop_all = false;
    inject_nak(f, KITE_AETH_NAK_PSN_SEQ, p.psn_a + 2);
    expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_SEND,
               KITE_CQE_RETRY_EXC_ERR, 0);
    assert_int_equal(state(f->a, f->aqp), KITE_QPS_ERR);
    fx_free(f);
}

/* ---- READs that would take 2^23 PSNs or more ---- */

/*
 * At path MTU 256 a READ of 2 GiB needs 2^23 response PSNs, half the PSN
 * space, which PSN comparison cannot tell from "behind": the requester
 * completes it with a local length error instead of sending it (before,
 * hi_psn did not move, every response and NAK was dropped as ahead of it
 * and the WQE hung without even a timeout).
 */
static void test_read_psn_window_requester(void **st)
{
    SimConnParams p;
    Fx *f;
    SimWr w;

    (void)st;
    sim_default_params(&p);
    p.path_mtu = KITE_MTU_256;
    f = fx_new(&p, KITE_QPT_RC, false);
    w = wr_make(KITE_WQE_READ, 0);
    wr_sge(&w, 0, 0x80000000u, f->akey);
    w.raddr = IOVA;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    run(f);
    expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_READ,
               KITE_CQE_LOC_LEN_ERR, 0);
    assert_int_equal(state(f->a, f->aqp), KITE_QPS_ERR);
    fx_free(f);
}

/* The responder NAKs such a READ as an invalid request. */
static void test_read_psn_window_responder(void **st)
{
    static uint8_t frame[KITE_ROCE_MAX_FRAME];
    static const uint32_t lens[2] = { 0x80000000u - 256, 0x80000000u };
    struct kite_roce_pkt pk;
    SimConnParams p;
    unsigned i;
    size_t len;
    Fx *f;

    (void)st;
    for (i = 0; i < 2; i++) {
        sim_default_params(&p);
        p.path_mtu = KITE_MTU_256;
        f = fx_new(&p, KITE_QPT_RC, false);
        memset(&pk, 0, sizeof(pk));
        memcpy(pk.dmac, f->b->mac, 6);
        memcpy(pk.smac, f->a->mac, 6);
        memcpy(pk.sgid, f->a->gid, 16);
        memcpy(pk.dgid, f->b->gid, 16);
        pk.hop_limit = 64;
        pk.opcode = KITE_OP_READ_REQ;
        pk.pkey = KITE_BTH_PKEY_DEFAULT;
        pk.dqpn = f->bqp;
        pk.psn = p.psn_a;
        pk.ackreq = true;
        pk.reth_va = IOVA;
        pk.reth_rkey = f->bkey;
        pk.reth_len = lens[i];
        len = kite_roce_build(frame, sizeof(frame), &pk);
        assert_true(len > 0);
        f->s.drop_all = true;
        kite_roce_rx(f->b->e, frame, len);
        run(f);
        assert_int_equal(state(f->b, f->bqp), KITE_QPS_ERR);
        /*
         * 2^23 - 1 PSNs: a valid request (beyond the 4 MiB MR here, so an
         * access error); 2^23: an invalid request.
         */
        assert_true(sim_has_event(f->b, f->bqp, i ? KITE_EVT_QP_REQ_ERR :
                                  KITE_EVT_QP_ACCESS_ERR));
        assert_false(sim_has_event(f->b, f->bqp, i ? KITE_EVT_QP_ACCESS_ERR :
                                   KITE_EVT_QP_REQ_ERR));
        fx_free(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_send_sges),
        cmocka_unit_test(test_send_imm_inline_solicited),
        cmocka_unit_test(test_write_and_write_imm),
        cmocka_unit_test(test_read),
        cmocka_unit_test(test_atomics),
        cmocka_unit_test(test_atomic_misaligned),
        cmocka_unit_test(test_psn_wrap),
        cmocka_unit_test(test_every_mtu),
        cmocka_unit_test(test_ipv6),
        cmocka_unit_test(test_bad_lkey),
        cmocka_unit_test(test_read_local_access),
        cmocka_unit_test(test_bad_rkey),
        cmocka_unit_test(test_rnr_retry_zero),
        cmocka_unit_test(test_rnr_then_recv),
        cmocka_unit_test(test_peer_gone),
        cmocka_unit_test(test_flush_in_order),
        cmocka_unit_test(test_sqd),
        cmocka_unit_test(test_doorbell_overflow),
        cmocka_unit_test(test_dup_read_reexecuted),
        cmocka_unit_test(test_dup_atomic_replayed),
        cmocka_unit_test(test_recv_too_small),
        cmocka_unit_test(test_malformed_wqes),
        cmocka_unit_test(test_unsignaled_and_sig_all),
        cmocka_unit_test(test_uc),
        cmocka_unit_test(test_ud_send),
        cmocka_unit_test(test_loopback),
        cmocka_unit_test(test_cq_overflow_fatal),
        cmocka_unit_test(test_fence_and_rd_atomic_limit),
        cmocka_unit_test(test_bad_frames),
        cmocka_unit_test(test_fuzz_wqes),
        cmocka_unit_test(test_fuzz_packets),
        cmocka_unit_test(test_read_psn_window_requester),
        cmocka_unit_test(test_resp_nak_once_dup_ack_msn),
        cmocka_unit_test(test_ack_coalescing),
        cmocka_unit_test(test_implicit_nak),
        cmocka_unit_test(test_rnr_nak_acks_before),
        cmocka_unit_test(test_read_psn_window_responder),
        cmocka_unit_test(test_rxe_goback_mid_message),
        cmocka_unit_test(test_rxe_rnr_then_seq_nak),
    };

    return cmocka_run_group_tests_name("roce_engine", tests, NULL, NULL);
}
