/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Kite RoCEv2 engine (qemu/roce/) with many QPs, on the host
 * simulation harness (roce_sim.[ch], roce_fixture.[ch]): a run serves only
 * the QPs that have work, round robin across busy QPs under a small
 * budget, and the responder's READ/atomic queue that exists only for QPs
 * that can use it.
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

#include "kite_roce_int.h"
#include "kite_roce_pkt.h"
#include "roce_fixture.h"

#define IDLE_QPS        10000
#define IDLE_QPN_BASE   0x10000

/*
 * @n more QPs in node @nd's engine, past RESET (so a run would have to
 * consider them), none with work. Their host pointer is @marker: the
 * engine must never call back for them.
 */
static KiteRoceQp **idle_qps(SimNode *nd, unsigned n, int *marker)
{
    KiteRoceQp **q = calloc(n, sizeof(*q));
    struct kite_roce_qp_cfg cfg = sim_qp(nd, SIM_QPN_BASE)->cfg;
    struct kite_roce_qp_attr a;
    unsigned i;

    assert_non_null(q);
    memset(&a, 0, sizeof(a));
    cfg.host = marker;
    for (i = 0; i < n; i++) {
        cfg.qpn = IDLE_QPN_BASE + i;
        q[i] = kite_roce_qp_create(nd->e, &cfg);
        assert_non_null(q[i]);
        a.state = KITE_QPS_INIT;
        kite_roce_qp_modify(q[i], &a, KITE_QP_ATTR_STATE);
        a.state = KITE_QPS_RTR;
        kite_roce_qp_modify(q[i], &a, KITE_QP_ATTR_STATE);
        a.state = KITE_QPS_RTS;
        kite_roce_qp_modify(q[i], &a, KITE_QP_ATTR_STATE);
    }
    return q;
}

static void free_qps(KiteRoceQp **q, unsigned n)
{
    unsigned i;

    for (i = 0; i < n; i++) {
        kite_roce_qp_destroy(q[i]);
    }
    free(q);
}

/*
 * 10,000 idle QPs next to one busy connection: once the idle QPs have
 * been seen idle, a message costs steps of the QPs that carry it only.
 */
static void test_runs_touch_busy_qps_only(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    KiteRoceQp **qa, **qb;
    int marker;
    uint64_t va, vb;
    SimWr w;
    int i;

    (void)st;
    qa = idle_qps(f->a, IDLE_QPS, &marker);
    qb = idle_qps(f->b, IDLE_QPS, &marker);
    /* The moves to RTS made them candidates: one run finds them idle. */
    assert_false(kite_roce_run(f->a->e, 64));
    assert_false(kite_roce_run(f->b->e, 64));
    assert_true(kite_roce_qp_visits(f->a->e) >= IDLE_QPS);
    va = kite_roce_qp_visits(f->a->e);
    vb = kite_roce_qp_visits(f->b->e);
    /* A run with nothing to do visits nothing. */
    assert_false(kite_roce_run(f->a->e, 64));
    assert_int_equal(kite_roce_qp_visits(f->a->e), va);

    fx_fill(sim_mem(f->a, 0), 16384, 7);
    for (i = 0; i < 4; i++) {
        fx_recv(f->b, f->bqp, 0x100000 + 0x4000 * i, 4096, f->bkey);
        w = fx_wr(KITE_WQE_SEND, 0);
        fx_sge(&w, 0x1000 * i, 4096, f->akey);
        sim_post_send(f->a, f->aqp, &w);
    }
    fx_run(f);
    for (i = 0; i < 4; i++) {
        fx_expect_cqe(f->a, f->a_scq, f->aqp, i, KITE_CQE_SEND, 0, 4096);
        fx_expect_cqe(f->b, f->b_rcq, f->bqp, i, KITE_CQE_RECV, 0, 4096);
    }
    /*
     * 16 request packets and their ACKs: each visit either sent a packet
     * or found the QP idle, a handful of times per run.
     */
    assert_true(kite_roce_qp_visits(f->a->e) - va < 100);
    assert_true(kite_roce_qp_visits(f->b->e) - vb < 100);
    for (i = 0; i < IDLE_QPS; i += 997) {
        assert_int_equal(kite_roce_qp_counters(qa[i])->tx_packets, 0);
        assert_int_equal(kite_roce_qp_state(qb[i]), KITE_QPS_RTS);
    }
    free_qps(qa, IDLE_QPS);
    free_qps(qb, IDLE_QPS);
    fx_free(f);
}

/*
 * Work that appears while a QP is off the ready ring brings it back: a
 * doorbell, a move to ERR (flush), an RQ doorbell in ERR.
 */
static void test_ready_after_idle(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    struct kite_roce_qp_attr a;
    SimWr w;

    (void)st;
    fx_fill(sim_mem(f->a, 0), 100, 3);
    fx_recv(f->b, f->bqp, 0x100000, 100, f->bkey);
    fx_run(f);
    assert_false(kite_roce_run(f->a->e, 64));
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 100, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 100);
    fx_expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV, 0, 100);

    /* ERR with a posted receive: the flush runs without a doorbell. */
    fx_recv(f->b, f->bqp, 0x100000, 100, f->bkey);
    memset(&a, 0, sizeof(a));
    a.state = KITE_QPS_ERR;
    sim_modify(f->b, f->bqp, &a, KITE_QP_ATTR_STATE);
    fx_run(f);
    fx_expect_cqe(f->b, f->b_rcq, f->bqp, 1, KITE_CQE_RECV,
                  KITE_CQE_WR_FLUSH_ERR, 0);
    /* A receive posted in ERR is flushed too. */
    fx_recv(f->b, f->bqp, 0x100000, 100, f->bkey);
    fx_run(f);
    fx_expect_cqe(f->b, f->b_rcq, f->bqp, 2, KITE_CQE_RECV,
                  KITE_CQE_WR_FLUSH_ERR, 0);
    fx_free(f);
}

#define FAIR_QPS        4

/*
 * Several QPs with long WRITEs and a budget smaller than their number:
 * every run serves the next QPs in turn, so after any number of runs no
 * QP has sent more than one packet more than another.
 */
static void test_round_robin_fairness(void **st)
{
    Sim *s = calloc(1, sizeof(*s));
    uint32_t qa[FAIR_QPS], qb[FAIR_QPS], cq_a, cq_b, ka, kb;
    SimConnParams p;
    SimWr w;
    uint64_t lo, hi, total = 0, n;
    unsigned budgets[] = { 1, 3, 2, 5, 1, 7, 4 };
    unsigned i, r;

    (void)st;
    assert_non_null(s);
    sim_init(s, 2, MEM_SIZE, 1);
    sim_default_params(&p);
    cq_a = sim_create_cq(&s->node[0], 8);
    cq_b = sim_create_cq(&s->node[1], 8);
    ka = sim_reg_mr(&s->node[0], PDN, IOVA, MEM_SIZE, ALL_ACCESS, 0);
    kb = sim_reg_mr(&s->node[1], PDN, IOVA, MEM_SIZE, ALL_ACCESS, 0);
    for (i = 0; i < FAIR_QPS; i++) {
        qa[i] = sim_create_qp(&s->node[0], KITE_QPT_RC, PDN, cq_a, cq_a,
                              6, 8, 6, 7, false);
        qb[i] = sim_create_qp(&s->node[1], KITE_QPT_RC, PDN, cq_b, cq_b,
                              6, 8, 6, 7, false);
        sim_connect(s, 0, qa[i], 1, qb[i], &p);
    }
    for (i = 0; i < FAIR_QPS; i++) {
        w = fx_wr(KITE_WQE_WRITE, 0);
        fx_sge(&w, 0, 64 * 1024, ka);
        w.raddr = IOVA + 0x100000;
        w.rkey = kb;
        sim_post_send(&s->node[0], qa[i], &w);
    }
    /* Runs of A alone, nothing delivered: the window is not reached. */
    for (r = 0; r < sizeof(budgets) / sizeof(budgets[0]); r++) {
        assert_true(kite_roce_run(s->node[0].e, budgets[r]));
        total += budgets[r];
        lo = UINT64_MAX;
        hi = 0;
        n = 0;
        for (i = 0; i < FAIR_QPS; i++) {
            uint64_t t = kite_roce_qp_counters(
                sim_qp(&s->node[0], qa[i])->qp)->tx_packets;

            lo = t < lo ? t : lo;
            hi = t > hi ? t : hi;
            n += t;
        }
        assert_int_equal(n, total);
        assert_true(hi - lo <= 1);
    }
    sim_run(s, RUN_STEPS);
    for (i = 0; i < FAIR_QPS; i++) {
        struct kite_cqe c;

        assert_true(sim_poll_cq(&s->node[0], cq_a, &c));
        assert_int_equal(c.status, KITE_CQE_SUCCESS);
        assert_int_equal(c.opcode, KITE_CQE_WRITE);
    }
    sim_free(s);
    free(s);
}

/* What node B sends back: READ responses and atomic ACKs. */
typedef struct Seen {
    Fx *f;
    unsigned reads, atomics;
    uint32_t read_psn[8];
    uint64_t atomic_orig[8];
    bool data_ok;
} Seen;

static void seen_tap(Sim *s, int src, const uint8_t *frame, size_t len,
                     void *arg)
{
    Seen *sn = arg;
    struct kite_roce_pkt p;

    (void)s;
    if (src != 1 || kite_roce_parse(frame, len, &p) != KITE_ROCE_OK) {
        return;
    }
    if (p.opcode == KITE_OP_READ_RESP_ONLY && sn->reads < 8) {
        uint32_t k = (p.psn - 0x100) & KITE_PSN_MASK;

        sn->read_psn[sn->reads++] = p.psn;
        if (p.paylen != 1000 ||
            memcmp(p.payload, sim_mem(sn->f->b, 0x100000 + 1000 * k), 1000)) {
            sn->data_ok = false;
        }
    }
    if (p.opcode == KITE_OP_ATOMIC_ACK && sn->atomics < 8) {
        sn->atomic_orig[sn->atomics++] = p.atomic_orig;
    }
}

static Fx *rd_atomic_fx(Seen *sn, uint8_t max_dest)
{
    SimConnParams p;
    Fx *f;

    sim_default_params(&p);
    p.max_rd_atomic = max_dest;
    p.max_dest_rd_atomic = max_dest;
    f = fx_new(&p, KITE_QPT_RC, false);
    memset(sn, 0, sizeof(*sn));
    sn->f = f;
    sn->data_ok = true;
    f->s.tap = seen_tap;
    f->s.tap_arg = sn;
    return f;
}

static void inject(Fx *f, const struct kite_roce_pkt *pk)
{
    uint8_t frame[KITE_ROCE_MAX_FRAME];
    size_t len = kite_roce_build(frame, sizeof(frame), pk);

    assert_true(len > 0);
    assert_true(kite_roce_rx(f->b->e, frame, len));
}

static void inject_read(Fx *f, uint32_t psn)
{
    struct kite_roce_pkt pk;

    fx_pkt_a_to_b(f, &pk, KITE_OP_READ_REQ, psn);
    pk.reth_va = IOVA + 0x100000 + 1000 * ((psn - 0x100) & KITE_PSN_MASK);
    pk.reth_rkey = f->bkey;
    pk.reth_len = 1000;
    inject(f, &pk);
}

static void inject_fetch_add(Fx *f, uint32_t psn)
{
    struct kite_roce_pkt pk;

    fx_pkt_a_to_b(f, &pk, KITE_OP_FETCH_ADD, psn);
    pk.atomic_va = IOVA + 0x200000;
    pk.atomic_rkey = f->bkey;
    pk.atomic_swap_add = 1;
    inject(f, &pk);
}

/*
 * The responder's queue exists from RTR on, sized by max_dest_rd_atomic,
 * and is gone again at RESET; a QP that never gets there has none.
 */
static void test_respq_lazy(void **st)
{
    Seen sn;
    Fx *f = rd_atomic_fx(&sn, 2);
    struct kite_roce_qp_cfg cfg = sim_qp(f->b, f->bqp)->cfg;
    struct kite_roce_qp_attr a;
    KiteRoceQp *qb = sim_qp(f->b, f->bqp)->qp, *q;
    int marker;

    (void)st;
    assert_non_null(qb->respq);
    assert_int_equal(qb->respq_size,
                     kr_next_pow2(2 * KR_RESPQ_PER_RES + KR_RESPQ_MIN));
    cfg.host = &marker;
    cfg.qpn = IDLE_QPN_BASE;
    q = kite_roce_qp_create(f->b->e, &cfg);
    assert_non_null(q);
    assert_null(q->respq);
    memset(&a, 0, sizeof(a));
    a.state = KITE_QPS_INIT;
    a.max_dest_rd_atomic = KR_MAX_RD_ATOM;
    kite_roce_qp_modify(q, &a, KITE_QP_ATTR_STATE |
                        KITE_QP_ATTR_MAX_DEST_RD_ATOMIC);
    assert_null(q->respq);
    a.state = KITE_QPS_RTR;
    kite_roce_qp_modify(q, &a, KITE_QP_ATTR_STATE);
    assert_non_null(q->respq);
    assert_int_equal(q->respq_size, KR_RESPQ_MAX);
    a.state = KITE_QPS_RESET;
    kite_roce_qp_modify(q, &a, KITE_QP_ATTR_STATE);
    assert_null(q->respq);
    kite_roce_qp_destroy(q);

    /* Raising max_dest_rd_atomic in RTS grows the queue. */
    a.max_dest_rd_atomic = 8;
    sim_modify(f->b, f->bqp, &a, KITE_QP_ATTR_MAX_DEST_RD_ATOMIC);
    assert_int_equal(qb->respq_size,
                     kr_next_pow2(8 * KR_RESPQ_PER_RES + KR_RESPQ_MIN));
    fx_free(f);
}

/*
 * READs past max_dest_rd_atomic: each new one takes the oldest resource
 * and cancels its queued response, so only the newest max_dest_rd_atomic
 * are answered, with the right data.
 */
static void test_read_limit(void **st)
{
    Seen sn;
    Fx *f = rd_atomic_fx(&sn, 2);
    SimWr w;

    (void)st;
    fx_fill(sim_mem(f->b, 0x100000), 8000, 9);
    inject_read(f, 0x100);
    inject_read(f, 0x101);
    inject_read(f, 0x102);
    fx_run(f);
    assert_int_equal(sn.reads, 2);
    assert_int_equal(sn.read_psn[0], 0x101);
    assert_int_equal(sn.read_psn[1], 0x102);
    assert_true(sn.data_ok);
    assert_int_equal(fx_state(f->b, f->bqp), KITE_QPS_RTS);

    /* Within the limit, READs from the requester complete as ever. */
    fx_free(f);
    f = rd_atomic_fx(&sn, 2);
    fx_fill(sim_mem(f->b, 0x100000), 8000, 9);
    w = fx_wr(KITE_WQE_READ, 0);
    fx_sge(&w, 0x10000, 8000, f->akey);
    w.raddr = IOVA + 0x100000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    sim_post_send(f->a, f->aqp, &w);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_READ, 0, 8000);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_READ, 0, 8000);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_READ, 0, 8000);
    assert_memory_equal(sim_mem(f->a, 0x10000), sim_mem(f->b, 0x100000),
                        8000);
    fx_free(f);
}

/*
 * Atomics keep max_dest_rd_atomic saved results: a duplicate of one of
 * them is answered from it without executing again, a duplicate of an
 * older one finds nothing and is dropped.
 */
static void test_atomic_limit(void **st)
{
    Seen sn;
    Fx *f = rd_atomic_fx(&sn, 2);
    uint64_t dropped;

    (void)st;
    mem_st64(sim_mem(f->b, 0x200000), 0);
    inject_fetch_add(f, 0x100);
    inject_fetch_add(f, 0x101);
    inject_fetch_add(f, 0x102);
    fx_run(f);
    assert_int_equal(mem_ld64(sim_mem(f->b, 0x200000)), 3);
    assert_int_equal(sn.atomics, 3);
    assert_int_equal(sn.atomic_orig[2], 2);
    dropped = kite_roce_counters(f->b->e)->rx_dropped;
    inject_fetch_add(f, 0x100);
    fx_run(f);
    assert_int_equal(sn.atomics, 3);
    assert_int_equal(kite_roce_counters(f->b->e)->rx_dropped, dropped + 1);
    inject_fetch_add(f, 0x102);
    fx_run(f);
    assert_int_equal(sn.atomics, 4);
    assert_int_equal(sn.atomic_orig[3], 2);
    assert_int_equal(mem_ld64(sim_mem(f->b, 0x200000)), 3);
    assert_int_equal(fx_state(f->b, f->bqp), KITE_QPS_RTS);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_touch_busy_qps_only),
        cmocka_unit_test(test_ready_after_idle),
        cmocka_unit_test(test_round_robin_fairness),
        cmocka_unit_test(test_respq_lazy),
        cmocka_unit_test(test_read_limit),
        cmocka_unit_test(test_atomic_limit),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
