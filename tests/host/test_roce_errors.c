/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Error paths of the Kite RoCEv2 engine (qemu/roce/) on the host
 * simulation harness (roce_sim.[ch], roce_fixture.[ch]): each error
 * completion, RNR and retry exhaustion, flush order, SQD, doorbell
 * overflow, short receives, malformed WQEs, CQ overflow and READs too
 * long for the PSN window.
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

/* ---- error completions ---- */

static void test_bad_lkey(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w = fx_wr(KITE_WQE_SEND, 0);

    (void)st;
    fx_recv(f->b, f->bqp, 0, 4096, f->bkey);
    fx_sge(&w, 0, 100, f->akey ^ 0x100);
    sim_post_send(f->a, f->aqp, &w);
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 100, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND,
                  KITE_CQE_LOC_PROT_ERR, 0);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_SEND,
                  KITE_CQE_WR_FLUSH_ERR, 0);
    fx_expect_no_cqe(f->a, f->a_scq);
    assert_int_equal(fx_state(f->a, f->aqp), KITE_QPS_ERR);
    assert_true(sim_has_event(f->a, f->aqp, KITE_ROCE_EVT_STATE));
    /* Out of bounds of a valid key: also a protection error. */
    fx_free(f);
    f = fx_new(NULL, KITE_QPT_RC, false);
    w = fx_wr(KITE_WQE_WRITE, 0);
    fx_sge(&w, MEM_SIZE - 10, 100, f->akey);
    w.raddr = IOVA;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_WRITE,
                  KITE_CQE_LOC_PROT_ERR, 0);
    fx_free(f);
}

static void test_read_local_access(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w = fx_wr(KITE_WQE_READ, 0);
    uint32_t rokey = sim_reg_mr(f->a, PDN, IOVA, 0x10000, 0, 0);

    (void)st;
    fx_sge(&w, 0x100, 64, rokey);
    w.raddr = IOVA;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_READ,
                  KITE_CQE_LOC_ACCESS_ERR, 0);
    assert_int_equal(fx_state(f->a, f->aqp), KITE_QPS_ERR);
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
            SimWr w = fx_wr(ops[i], 0);
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
            fx_fill(sim_mem(f->a, 0x8000), 4096, 1);
            fx_sge(&w, 0x8000, ops[i] == KITE_WQE_FETCH_ADD ? 8 : 3000,
                   f->akey);
            w.raddr = IOVA + 0x100000;
            w.rkey = v == 0 ? key + 1 : key;
            w.swap_add = 5;
            sim_post_send(f->a, f->aqp, &w);
            fx_run(f);
            assert_true(sim_poll_cq(f->a, f->a_scq, &c));
            assert_int_equal(c.status, KITE_CQE_REM_ACCESS_ERR);
            assert_int_equal(c.opcode, cqe_ops[i]);
            assert_int_equal(kr_le16(&c.wqe_idx), 0);
            assert_memory_equal(sim_mem(f->b, 0x100000), zero, 4096);
            assert_int_equal(fx_state(f->b, f->bqp), KITE_QPS_ERR);
            assert_int_equal(fx_state(f->a, f->aqp), KITE_QPS_ERR);
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

                fx_fill(ref, sizeof(ref), 1);
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
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 100, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND,
                  KITE_CQE_RNR_RETRY_EXC_ERR, 0);
    assert_int_equal(fx_state(f->a, f->aqp), KITE_QPS_ERR);
    assert_int_equal(kite_roce_qp_counters(
                         sim_qp(f->a, f->aqp)->qp)->rnr_naks_rcvd, 1);
    /* The responder is fine. */
    assert_int_equal(fx_state(f->b, f->bqp), KITE_QPS_RTS);
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
    fx_fill(sim_mem(f->a, 0), 5000, 4);
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 5000, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    t0 = f->s.now;
    for (i = 0; i < 1000000 && ca->rnr_naks_rcvd < 10; i++) {
        assert_true(sim_step(&f->s));
    }
    assert_int_equal(ca->rnr_naks_rcvd, 10);
    /* Ten RNR waits of 0.96 ms each have passed. */
    assert_true(f->s.now - t0 >= 9 * 960000ull);
    fx_expect_no_cqe(f->a, f->a_scq);
    fx_recv(f->b, f->bqp, 0x100000, 8192, f->bkey);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 5000);
    assert_true(sim_poll_cq(f->b, f->b_rcq, &c));
    assert_int_equal(c.status, 0);
    assert_int_equal(kr_le32(&c.byte_len), 5000);
    assert_memory_equal(sim_mem(f->b, 0x100000), sim_mem(f->a, 0), 5000);
    fx_free(f);
}

/* Drops the next frame A sends after arm is set, and only that one. */
struct tail_drop {
    bool arm, clear;
};

static void tail_drop_tap(Sim *s, int src, const uint8_t *f, size_t len,
                          void *arg)
{
    struct tail_drop *td = arg;

    (void)f;
    (void)len;
    if (td->clear) {
        s->drop_all = false;
        td->clear = false;
    }
    if (src == 0 && td->arm) {
        s->drop_all = true;
        td->arm = false;
        td->clear = true;
    }
}

/*
 * A lost last packet leaves the responder nothing to NAK: once the QP
 * has timed an ACK round trip it goes back early, well before its local
 * ACK timeout (16.8 ms at timeout 12), and uses no retry.
 */
static void test_tail_loss_early_retransmit(void **st)
{
    struct tail_drop td = { 0 };
    const struct kite_roce_counters *ca;
    SimConnParams p;
    uint64_t t0;
    SimWr w;
    Fx *f;

    (void)st;
    sim_default_params(&p);
    f = fx_new(&p, KITE_QPT_RC, false);
    ca = kite_roce_qp_counters(sim_qp(f->a, f->aqp)->qp);
    f->s.tap = tail_drop_tap;
    f->s.tap_arg = &td;
    fx_recv(f->b, f->bqp, 0x100000, 8192, f->bkey);
    fx_recv(f->b, f->bqp, 0x102000, 8192, f->bkey);
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 100, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 100);

    td.arm = true;
    t0 = f->s.now;
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_SEND, 0, 100);
    assert_int_equal(f->s.dropped, 1);
    assert_int_equal(ca->early_retransmits, 1);
    assert_int_equal(ca->timeouts, 0);
    assert_true(ca->retransmits >= 1);
    assert_true(f->s.now - t0 < (4096ull << p.timeout));
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
    fx_recv(f->b, f->bqp, 0x100000, 8192, f->bkey);
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 3000, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    w = fx_wr(KITE_WQE_WRITE, 0);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND,
                  KITE_CQE_RETRY_EXC_ERR, 0);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_WRITE,
                  KITE_CQE_WR_FLUSH_ERR, 0);
    assert_int_equal(ca->timeouts, 4);
    /*
     * 3 packets + 1 zero-length WRITE sent once; after each timeout the
     * congestion window is one packet, so each of the 3 retries resends
     * only the oldest.
     */
    assert_int_equal(ca->tx_packets, 7);
    assert_int_equal(ca->retransmits, 3);
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
        w = fx_wr(i == 3 ? KITE_WQE_READ : KITE_WQE_SEND, 0);
        if (i & 1) {
            w.flags &= ~KITE_WQE_F_SIGNALED;
        }
        sim_write_send(f->a, f->aqp, &w);
    }
    sim_sq_doorbell(f->a, f->aqp);
    fx_recv(f->a, f->aqp, 0, 100, f->akey);
    fx_recv(f->a, f->aqp, 0, 100, f->akey);
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
    w = fx_wr(KITE_WQE_WRITE, 0);
    w.flags = 0;
    sim_post_send(f->a, f->aqp, &w);
    fx_recv(f->a, f->aqp, 0, 100, f->akey);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 5, KITE_CQE_WRITE,
                  KITE_CQE_WR_FLUSH_ERR, 0);
    fx_expect_cqe(f->a, f->a_rcq, f->aqp, 2, KITE_CQE_RECV,
                  KITE_CQE_WR_FLUSH_ERR, 0);
    fx_expect_no_cqe(f->a, f->a_scq);
    /* Host-initiated: no state event. */
    assert_false(sim_has_event(f->a, f->aqp, KITE_ROCE_EVT_STATE));
    /* RESET clears it all; the QP works again after reconnecting. */
    a.state = KITE_QPS_RESET;
    sim_modify(f->a, f->aqp, &a, KITE_QP_ATTR_STATE);
    sim_modify(f->b, f->bqp, &a, KITE_QP_ATTR_STATE);
    assert_int_equal(fx_state(f->a, f->aqp), KITE_QPS_RESET);
    assert_int_equal(kite_roce_qp_sq_psn(sim_qp(f->a, f->aqp)->qp), 0);
    {
        SimConnParams p;
        SimQp *qa = sim_qp(f->a, f->aqp), *qb = sim_qp(f->b, f->bqp);

        /* The rings start again at index 0. */
        qa->sq_pi = qa->rq_pi = qb->sq_pi = qb->rq_pi = 0;
        sim_default_params(&p);
        sim_connect(&f->s, 0, f->aqp, 1, f->bqp, &p);
    }
    fx_fill(sim_mem(f->a, 0), 3000, 2);
    fx_recv(f->b, f->bqp, 0x100000, 4096, f->bkey);
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 3000, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 3000);
    fx_expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV, 0, 3000);
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
    fx_fill(sim_mem(f->a, 0), 65536, 12);
    for (i = 0; i < 3; i++) {
        w = fx_wr(KITE_WQE_WRITE, 0);
        fx_sge(&w, 0, 65536, f->akey);
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
    fx_run(f);
    /* The started WQE finished, the others did not start. */
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_WRITE, 0, 65536);
    fx_expect_no_cqe(f->a, f->a_scq);
    assert_memory_equal(sim_mem(f->b, 0x100000), sim_mem(f->a, 0), 65536);
    assert_int_equal(*sim_mem(f->b, 0x110000), 0);
    a.state = KITE_QPS_RTS;
    sim_modify(f->a, f->aqp, &a, KITE_QP_ATTR_STATE);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_WRITE, 0, 65536);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_WRITE, 0, 65536);
    assert_memory_equal(sim_mem(f->b, 0x120000), sim_mem(f->a, 0), 65536);
    fx_free(f);
}

static void test_doorbell_overflow(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimQp *q = sim_qp(f->a, f->aqp);

    (void)st;
    kite_roce_sq_doorbell(q->qp, 65);   /* depth 64 */
    assert_int_equal(fx_state(f->a, f->aqp), KITE_QPS_ERR);
    assert_int_equal(f->a->nevents, 2);
    assert_int_equal(f->a->events[0].type, KITE_ROCE_EVT_STATE);
    assert_int_equal(f->a->events[1].type, KITE_EVT_QP_FATAL);
    fx_run(f);
    fx_expect_no_cqe(f->a, f->a_scq);
    /* RQ as well, on the other QP. */
    q = sim_qp(f->b, f->bqp);
    kite_roce_rq_doorbell(q->qp, 0x80000000u);
    assert_int_equal(fx_state(f->b, f->bqp), KITE_QPS_ERR);
    assert_true(sim_has_event(f->b, f->bqp, KITE_EVT_QP_FATAL));
    fx_free(f);
}

static void test_recv_too_small(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w = fx_wr(KITE_WQE_SEND, 0);
    uint8_t zero[1024];

    (void)st;
    memset(zero, 0, sizeof(zero));
    fx_recv(f->b, f->bqp, 0x100000, 1000, f->bkey);
    fx_recv(f->b, f->bqp, 0x110000, 1000, f->bkey);
    fx_sge(&w, 0, 2000, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV,
                  KITE_CQE_LOC_LEN_ERR, 0);
    fx_expect_cqe(f->b, f->b_rcq, f->bqp, 1, KITE_CQE_RECV,
                  KITE_CQE_WR_FLUSH_ERR, 0);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND,
                  KITE_CQE_REM_INV_REQ_ERR, 0);
    assert_int_equal(fx_state(f->b, f->bqp), KITE_QPS_ERR);
    fx_free(f);
}

static void test_malformed_wqes(void **st)
{
    static const struct {
        uint8_t op, flags, nsge;
        uint16_t inl;
    } bad[] = {
        { 0x0b, 0, 0, 0 },                          /* unknown opcode */
        { KITE_WQE_SEND, 0, 33, 0 },                /* > max SGEs */
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
        SimWr w = fx_wr(KITE_WQE_SEND, 0);
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
        fx_recv(f->b, f->bqp, 0, 100, f->bkey);
        fx_run(f);
        fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 0);
        {
            struct kite_cqe c;

            assert_true(sim_poll_cq(f->a, f->a_scq, &c));
            assert_int_equal(kr_le16(&c.wqe_idx), 1);
            assert_int_equal(c.status, KITE_CQE_LOC_QP_OP_ERR);
        }
        assert_int_equal(fx_state(f->a, f->aqp), KITE_QPS_ERR);
        fx_free(f);
    }
}

static void test_cq_overflow_fatal(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    SimWr w;
    int i;

    (void)st;
    /* The send CQ has 256 entries; fill it without polling. */
    for (i = 0; i < 300; i++) {
        w = fx_wr(KITE_WQE_WRITE, 0);
        sim_post_send(f->a, f->aqp, &w);
        fx_run(f);
        if (fx_state(f->a, f->aqp) == KITE_QPS_ERR) {
            break;
        }
    }
    assert_int_equal(i, 256);
    assert_true(sim_has_event(f->a, f->aqp, KITE_EVT_QP_FATAL));
    fx_free(f);
}

/* ---- READs that would take 2^23 PSNs or more ---- */

/*
 * At path MTU 256 a READ of 2 GiB needs 2^23 response PSNs, half the PSN
 * space, which PSN comparison cannot tell from "behind": the requester
 * completes it with a local length error instead of sending it: were it
 * sent, hi_psn could not move past it, every response and NAK would be
 * dropped as ahead of it and the WQE would hang without even a timeout.
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
    w = fx_wr(KITE_WQE_READ, 0);
    fx_sge(&w, 0, 0x80000000u, f->akey);
    w.raddr = IOVA;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_READ,
                  KITE_CQE_LOC_LEN_ERR, 0);
    assert_int_equal(fx_state(f->a, f->aqp), KITE_QPS_ERR);
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
        fx_pkt_a_to_b(f, &pk, KITE_OP_READ_REQ, p.psn_a);
        pk.reth_va = IOVA;
        pk.reth_rkey = f->bkey;
        pk.reth_len = lens[i];
        len = kite_roce_build(frame, sizeof(frame), &pk);
        assert_true(len > 0);
        f->s.drop_all = true;
        kite_roce_rx(f->b->e, frame, len);
        fx_run(f);
        assert_int_equal(fx_state(f->b, f->bqp), KITE_QPS_ERR);
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
        cmocka_unit_test(test_bad_lkey),
        cmocka_unit_test(test_read_local_access),
        cmocka_unit_test(test_bad_rkey),
        cmocka_unit_test(test_rnr_retry_zero),
        cmocka_unit_test(test_rnr_then_recv),
        cmocka_unit_test(test_peer_gone),
        cmocka_unit_test(test_tail_loss_early_retransmit),
        cmocka_unit_test(test_flush_in_order),
        cmocka_unit_test(test_sqd),
        cmocka_unit_test(test_doorbell_overflow),
        cmocka_unit_test(test_recv_too_small),
        cmocka_unit_test(test_malformed_wqes),
        cmocka_unit_test(test_cq_overflow_fatal),
        cmocka_unit_test(test_read_psn_window_requester),
        cmocka_unit_test(test_read_psn_window_responder),
    };

    return cmocka_run_group_tests_name("roce_errors", tests, NULL, NULL);
}
