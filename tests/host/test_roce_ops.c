/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Kite RoCEv2 engine (qemu/roce/) on the host simulation harness
 * (roce_sim.[ch], roce_fixture.[ch]), opcode by opcode: every RC opcode
 * with its data checked, PSN wrap, every MTU, IPv6, unsignaled WQEs, the
 * fence and READ/atomic limits, UC, UD and loopback.
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

/* ---- every opcode ---- */

static void test_send_sges(void **st)
{
    SimConnParams p;
    Fx *f;
    SimWr w = fx_wr(KITE_WQE_SEND, 0);
    struct kite_cqe c;
    SimSge rs[2] = {
        { IOVA + 0x200000, 3000, 0 }, { IOVA + 0x300000, 4000, 0 },
    };

    (void)st;
    sim_default_params(&p);
    p.b_stays_rtr = true;
    f = fx_new(&p, KITE_QPT_RC, false);
    fx_fill(sim_mem(f->a, 0), 5000, 1);
    fx_sge(&w, 0, 1000, f->akey);
    fx_sge(&w, 1000, 1, f->akey);
    fx_sge(&w, 1001, 3999, f->akey);
    rs[0].lkey = rs[1].lkey = f->bkey;
    sim_post_recv(f->b, f->bqp, 2, rs);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 5000);
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
    assert_int_equal(fx_state(f->b, f->bqp), KITE_QPS_RTR);
    assert_int_equal(f->b->nevents, 1);
    assert_true(sim_has_event(f->b, f->bqp, KITE_EVT_COMM_EST));
    fx_free(f);
}

static void test_send_imm_inline_solicited(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w = fx_wr(KITE_WQE_SEND_IMM, KITE_WQE_F_INLINE |
                      KITE_WQE_F_SOLICITED);
    uint8_t data[200];
    struct kite_cqe c;

    (void)st;
    fx_fill(data, sizeof(data), 7);
    w.inl = data;
    w.inline_len = sizeof(data);
    memcpy(w.imm, "\x12\x34\x56\x78", 4);
    fx_recv(f->b, f->bqp, 0x1000, 4096, f->bkey);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 200);
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
    SimWr w = fx_wr(KITE_WQE_WRITE, 0);
    struct kite_cqe c;

    (void)st;
    fx_fill(sim_mem(f->a, 0), 20000, 3);
    fx_sge(&w, 0, 10000, f->akey);
    w.raddr = IOVA + 0x100000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);

    w = fx_wr(KITE_WQE_WRITE_IMM, KITE_WQE_F_SOLICITED);
    fx_sge(&w, 10000, 3000, f->akey);
    w.raddr = IOVA + 0x180000;
    w.rkey = f->bkey;
    memcpy(w.imm, "\xde\xad\xbe\xef", 4);
    fx_recv(f->b, f->bqp, 0x1000, 16, f->bkey);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_WRITE, 0, 10000);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_WRITE, 0, 3000);
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
    fx_expect_no_cqe(f->b, f->b_rcq);
    fx_free(f);
}

static void test_read(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w = fx_wr(KITE_WQE_READ, 0);

    (void)st;
    fx_fill(sim_mem(f->b, 0x100000), 9000, 5);
    fx_sge(&w, 0x10000, 4000, f->akey);
    fx_sge(&w, 0x20000, 5000, f->akey);
    w.raddr = IOVA + 0x100000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    /* A zero-length READ. */
    w = fx_wr(KITE_WQE_READ, 0);
    w.raddr = IOVA + 0x100000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_READ, 0, 9000);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_READ, 0, 0);
    assert_memory_equal(sim_mem(f->a, 0x10000), sim_mem(f->b, 0x100000),
                        4000);
    assert_memory_equal(sim_mem(f->a, 0x20000),
                        sim_mem(f->b, 0x100000 + 4000), 5000);
    fx_free(f);
}

static void test_atomics(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w;

    (void)st;
    mem_st64(sim_mem(f->b, 0x1000), 100);
    /* Compare matches: swapped. */
    w = fx_wr(KITE_WQE_CMP_SWP, 0);
    fx_sge(&w, 0x100, 8, f->akey);
    w.raddr = IOVA + 0x1000;
    w.rkey = f->bkey;
    w.compare = 100;
    w.swap_add = 0x1122334455667788ull;
    sim_post_send(f->a, f->aqp, &w);
    /* Compare does not match: unchanged, original returned. */
    w = fx_wr(KITE_WQE_CMP_SWP, 0);
    fx_sge(&w, 0x108, 8, f->akey);
    w.raddr = IOVA + 0x1000;
    w.rkey = f->bkey;
    w.compare = 5;
    w.swap_add = 7;
    sim_post_send(f->a, f->aqp, &w);
    w = fx_wr(KITE_WQE_FETCH_ADD, 0);
    fx_sge(&w, 0x110, 8, f->akey);
    w.raddr = IOVA + 0x1000;
    w.rkey = f->bkey;
    w.swap_add = 0x10;
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_CMP_SWP, 0, 8);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_CMP_SWP, 0, 8);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_FETCH_ADD, 0, 8);
    assert_int_equal(mem_ld64(sim_mem(f->a, 0x100)), 100);
    assert_int_equal(mem_ld64(sim_mem(f->a, 0x108)), 0x1122334455667788ull);
    assert_int_equal(mem_ld64(sim_mem(f->a, 0x110)), 0x1122334455667788ull);
    assert_int_equal(mem_ld64(sim_mem(f->b, 0x1000)), 0x1122334455667798ull);
    fx_free(f);
}

static void test_atomic_misaligned(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w = fx_wr(KITE_WQE_FETCH_ADD, 0);

    (void)st;
    fx_sge(&w, 0x100, 8, f->akey);
    w.raddr = IOVA + 0x1004;
    w.rkey = f->bkey;
    w.swap_add = 1;
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_FETCH_ADD,
                  KITE_CQE_REM_INV_REQ_ERR, 0);
    assert_int_equal(mem_ld64(sim_mem(f->b, 0x1000)), 0);
    assert_int_equal(fx_state(f->b, f->bqp), KITE_QPS_ERR);
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
    fx_fill(sim_mem(f->a, 0), 70000, 9);
    fx_fill(sim_mem(f->b, 0x200000), 20000, 10);
    fx_recv(f->b, f->bqp, 0x100000, 70000, f->bkey);
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 70000, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    w = fx_wr(KITE_WQE_READ, 0);
    fx_sge(&w, 0x300000, 20000, f->akey);
    w.raddr = IOVA + 0x200000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    /* And the other direction, starting at 0xffffff. */
    w = fx_wr(KITE_WQE_WRITE, 0);
    fx_sge(&w, 0x200000, 20000, f->bkey);
    w.raddr = IOVA + 0x380000;
    w.rkey = f->akey;
    sim_post_send(f->b, f->bqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 70000);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_READ, 0, 20000);
    fx_expect_cqe(f->b, f->b_scq, f->bqp, 0, KITE_CQE_WRITE, 0, 20000);
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
                     (0xfffff0 + 274 + 79) & KITE_PSN_MASK);
    assert_int_equal(kite_roce_qp_rq_psn(sim_qp(f->b, f->bqp)->qp),
                     (0xfffff0 + 274 + 79) & KITE_PSN_MASK);
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
    fx_fill(sim_mem(f->a, 0), 10000, 6);
    w = fx_wr(KITE_WQE_WRITE, 0);
    fx_sge(&w, 0, 10000, f->akey);
    w.raddr = IOVA + 0x100000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    w = fx_wr(KITE_WQE_READ, 0);
    fx_sge(&w, 0x200000, 10000, f->akey);
    w.raddr = IOVA + 0x100000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_WRITE, 0, 10000);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_READ, 0, 10000);
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
        fx_fill(sim_mem(f->a, 0), len, mtu);
        fx_fill(sim_mem(f->b, 0x200000), len, mtu + 100);
        w = fx_wr(KITE_WQE_WRITE, 0);
        fx_sge(&w, 0, len, f->akey);
        w.raddr = IOVA + 0x100000;
        w.rkey = f->bkey;
        sim_post_send(f->a, f->aqp, &w);
        w = fx_wr(KITE_WQE_READ, 0);
        fx_sge(&w, 0x300000, len, f->akey);
        w.raddr = IOVA + 0x200000;
        w.rkey = f->bkey;
        sim_post_send(f->a, f->aqp, &w);
        w = fx_wr(KITE_WQE_SEND, 0);
        fx_sge(&w, 0, len, f->akey);
        fx_recv(f->b, f->bqp, 0x380000, len, f->bkey);
        sim_post_send(f->a, f->aqp, &w);
        fx_run(f);
        fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_WRITE, 0, len);
        fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_READ, 0, len);
        fx_expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_SEND, 0, len);
        assert_true(sim_poll_cq(f->b, f->b_rcq, &c));
        assert_int_equal(kr_le32(&c.byte_len), len);
        assert_memory_equal(sim_mem(f->b, 0x100000), sim_mem(f->a, 0), len);
        assert_memory_equal(sim_mem(f->a, 0x300000), sim_mem(f->b, 0x200000),
                            len);
        assert_memory_equal(sim_mem(f->b, 0x380000), sim_mem(f->a, 0), len);
        /* 4 packets per message each way: 12 requests + 4 responses... */
        assert_int_equal(kite_roce_qp_sq_psn(sim_qp(f->a, f->aqp)->qp),
                         (0x100 + 12) & KITE_PSN_MASK);
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
        w = fx_wr(KITE_WQE_WRITE, 0);
        if (i != 2) {
            w.flags = 0;
        }
        fx_sge(&w, 0, 100, f->akey);
        w.raddr = IOVA;
        w.rkey = f->bkey;
        sim_post_send(f->a, f->aqp, &w);
    }
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_WRITE, 0, 100);
    fx_expect_no_cqe(f->a, f->a_scq);
    fx_free(f);
}

static void test_uc(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_UC, false);
    SimWr w;
    struct kite_cqe c;

    (void)st;
    fx_fill(sim_mem(f->a, 0), 10000, 8);
    fx_recv(f->b, f->bqp, 0x100000, 10000, f->bkey);
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 10000, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    w = fx_wr(KITE_WQE_WRITE, 0);
    fx_sge(&w, 0, 5000, f->akey);
    w.raddr = IOVA + 0x200000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    w = fx_wr(KITE_WQE_READ, 0);  /* not a UC opcode */
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 10000);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_WRITE, 0, 5000);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_READ,
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
    fx_fill(sim_mem(a, 0), 5000, 3);
    fx_recv(b, bqp, 0x100000, 4096 + 40, bkey);
    fx_recv(b, bqp, 0x110000, 4096 + 40, bkey);

    /* 1: SEND_IMM with the QP's own Q_Key (bit 31). */
    w = fx_wr(KITE_WQE_SEND_IMM, KITE_WQE_F_SOLICITED);
    fx_sge(&w, 0, 1000, akey);
    sim_ud_av(s, 1, &w.av, 0);
    w.remote_qpn = bqp;
    w.remote_qkey = 0x80000000u;
    memcpy(w.imm, "\x01\x02\x03\x04", 4);
    sim_post_send(a, aqp, &w);
    /* 2: wrong Q_Key: dropped by B. */
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 100, akey);
    sim_ud_av(s, 1, &w.av, 0);
    w.remote_qpn = bqp;
    w.remote_qkey = 0x999;
    sim_post_send(a, aqp, &w);
    /* 3: larger than the port MTU: success, nothing sent. */
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 5000, akey);
    sim_ud_av(s, 1, &w.av, 0);
    w.remote_qpn = bqp;
    w.remote_qkey = 0x1234;
    sim_post_send(a, aqp, &w);
    /* 4: a full-MTU send with an explicit Q_Key. */
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 4096, akey);
    sim_ud_av(s, 1, &w.av, 0);
    w.remote_qpn = bqp;
    w.remote_qkey = 0x1234;
    sim_post_send(a, aqp, &w);
    sim_run(s, RUN_STEPS);
    fx_expect_cqe(a, acq, aqp, 0, KITE_CQE_SEND, 0, 1000);
    fx_expect_cqe(a, acq, aqp, 1, KITE_CQE_SEND, 0, 100);
    fx_expect_cqe(a, acq, aqp, 2, KITE_CQE_SEND, 0, 5000);
    fx_expect_cqe(a, acq, aqp, 3, KITE_CQE_SEND, 0, 4096);
    assert_int_equal(s->frames, 3);

    assert_true(sim_poll_cq(b, bcq, &c));
    assert_int_equal(c.status, 0);
    assert_int_equal(c.opcode, KITE_CQE_RECV);
    assert_int_equal(kr_le16(&c.wqe_idx), 0);
    assert_int_equal(kr_le32(&c.byte_len), KITE_UD_GRH_LEN + 1000);
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
    assert_int_equal(kr_le32(&c.byte_len), KITE_UD_GRH_LEN + 4096);
    assert_int_equal(c.flags & KITE_CQE_F_IMM, 0);
    assert_memory_equal(sim_mem(b, 0x110000 + 40), sim_mem(a, 0), 4096);
    assert_false(sim_poll_cq(b, bcq, &c));
    assert_true(kite_roce_counters(b->e)->rx_dropped >= 1);

    /* An invalid source GID index: local QP operation error. */
    w = fx_wr(KITE_WQE_SEND, 0);
    sim_ud_av(s, 1, &w.av, 5);
    w.remote_qpn = bqp;
    sim_post_send(a, aqp, &w);
    sim_run(s, RUN_STEPS);
    fx_expect_cqe(a, acq, aqp, 4, KITE_CQE_SEND, KITE_CQE_LOC_QP_OP_ERR, 0);
    /*
     * Address vectors MODIFY_QP would refuse (the WQE's owner writes
     * them): IPv6 to an IPv4-mapped GID, IPv4 to a GID that is not
     * IPv4-mapped, a flow label over 20 bits, an unknown network type
     * (multicast destinations are groups: test_roce_mcast.c). Each one
     * completes in error (each on a QP of its own: the error moves the
     * QP to ERR) and nothing goes on the wire.
     */
    for (int i = 0; i < 4; i++) {
        uint32_t frames = s->frames;
        uint32_t qp = sim_create_qp(a, KITE_QPT_UD, PDN, acq, acq, 5, 9, 5,
                                    6, false);

        sim_ud_up(a, qp, 0x1234);

        w = fx_wr(KITE_WQE_SEND, 0);
        sim_ud_av(s, 1, &w.av, 0);
        switch (i) {
        case 0: w.av.net_type = KITE_NET_IPV6; break;
        case 1: w.av.dgid[10] = 0; break;
        case 2: kr_set_le32(&w.av.flow_label, 1u << 20); break;
        default: w.av.net_type = KITE_NET_IPV6 + 1; break;
        }
        w.remote_qpn = bqp;
        sim_post_send(a, qp, &w);
        sim_run(s, RUN_STEPS);
        fx_expect_cqe(a, acq, qp, 0, KITE_CQE_SEND, KITE_CQE_LOC_QP_OP_ERR, 0);
        assert_int_equal(s->frames, frames);
    }
    /* RC opcodes on a UD QP: the same. */
    sim_free(s);
    free(s);
}

/*
 * The engine's QP number index: every QP is found by its number with its
 * host pointer, numbers that differ by a power of two stay apart, a
 * number in use cannot be taken again, and a destroyed QP is gone while
 * the others keep working.
 */
static void test_qp_index(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimQp *q = sim_qp(f->a, f->aqp);
    struct kite_roce_qp_cfg cfg = q->cfg;
    KiteRoceQp *extra[4];
    int marker[4];
    SimWr w;
    int i;

    (void)st;
    assert_ptr_equal(kite_roce_qp_find(f->a->e, f->aqp), q->qp);
    assert_ptr_equal(kite_roce_qp_host(q->qp), q);
    assert_null(kite_roce_qp_find(f->a->e, f->bqp + 1));
    assert_null(kite_roce_qp_create(f->a->e, &cfg));
    for (i = 0; i < 4; i++) {
        cfg.host = &marker[i];
        cfg.qpn = f->aqp + (0x400u << i);
        extra[i] = kite_roce_qp_create(f->a->e, &cfg);
        assert_non_null(extra[i]);
    }
    for (i = 0; i < 4; i++) {
        assert_ptr_equal(kite_roce_qp_find(f->a->e, f->aqp + (0x400u << i)),
                         extra[i]);
        assert_ptr_equal(kite_roce_qp_host(extra[i]), &marker[i]);
    }
    kite_roce_qp_destroy(extra[1]);
    assert_null(kite_roce_qp_find(f->a->e, f->aqp + 0x800));
    assert_ptr_equal(kite_roce_qp_find(f->a->e, f->aqp + 0x1000), extra[2]);
    assert_ptr_equal(kite_roce_qp_find(f->a->e, f->aqp), q->qp);

    /* The connection still carries data to the right QP. */
    fx_fill(sim_mem(f->a, 0), 100, 5);
    fx_recv(f->b, f->bqp, 0x100000, 100, f->bkey);
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 100, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 100);
    fx_expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV, 0, 100);
    assert_memory_equal(sim_mem(f->b, 0x100000), sim_mem(f->a, 0), 100);
    for (i = 0; i < 4; i++) {
        if (i != 1) {
            kite_roce_qp_destroy(extra[i]);
        }
    }
    fx_free(f);
}

static void test_loopback(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, true);
    SimWr w;
    struct kite_cqe c;

    (void)st;
    fx_fill(sim_mem(f->a, 0), 8000, 11);
    fx_recv(f->a, f->bqp, 0x100000, 8000, f->akey);
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 8000, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    w = fx_wr(KITE_WQE_READ, 0);
    fx_sge(&w, 0x200000, 8000, f->akey);
    w.raddr = IOVA;
    w.rkey = f->akey;
    sim_post_send(f->a, f->bqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 8000);
    fx_expect_cqe(f->a, f->b_scq, f->bqp, 0, KITE_CQE_READ, 0, 8000);
    assert_true(sim_poll_cq(f->a, f->b_rcq, &c));
    assert_int_equal(kr_le32(&c.byte_len), 8000);
    assert_memory_equal(sim_mem(f->a, 0x100000), sim_mem(f->a, 0), 8000);
    assert_memory_equal(sim_mem(f->a, 0x200000), sim_mem(f->a, 0), 8000);
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
    fx_fill(sim_mem(f->b, 0x100000), 64 * 1024, 3);
    for (i = 0; i < 4; i++) {
        w = fx_wr(KITE_WQE_READ, 0);
        fx_sge(&w, 0x10000 * (i + 1), 16384, f->akey);
        w.raddr = IOVA + 0x100000 + 16384 * i;
        w.rkey = f->bkey;
        sim_post_send(f->a, f->aqp, &w);
    }
    /* A fenced WRITE sends the data the READs brought in. */
    w = fx_wr(KITE_WQE_WRITE, KITE_WQE_F_FENCE);
    fx_sge(&w, 0x10000, 16384, f->akey);
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
    fx_run(f);
    for (i = 0; i < 4; i++) {
        fx_expect_cqe(f->a, f->a_scq, f->aqp, i, KITE_CQE_READ, 0, 16384);
        assert_memory_equal(sim_mem(f->a, 0x10000 * (i + 1)),
                            sim_mem(f->b, 0x100000 + 16384 * i), 16384);
    }
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 4, KITE_CQE_WRITE, 0, 16384);
    assert_memory_equal(sim_mem(f->b, 0x300000), sim_mem(f->b, 0x100000),
                        16384);
    fx_free(f);
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
        cmocka_unit_test(test_unsignaled_and_sig_all),
        cmocka_unit_test(test_uc),
        cmocka_unit_test(test_ud_send),
        cmocka_unit_test(test_loopback),
        cmocka_unit_test(test_qp_index),
        cmocka_unit_test(test_fence_and_rd_atomic_limit),
    };

    return cmocka_run_group_tests_name("roce_ops", tests, NULL, NULL);
}
