// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The requester against a slow peer: its congestion window (a responder
 * that works through a long queue slower than the window fills it must
 * not make the requester give up with RETRY_EXC) and the port's
 * backpressure (ops->tx_ready: a full port stops the engine instead of
 * losing frames).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kite_roce_int.h"
#include "roce_fixture.h"

#define WIN_QPS         4
#define WIN_MEM         (4u << 20)
#define WIN_VA          0x20000000ull

typedef struct Win {
    Sim s;
    uint32_t acq, bcq;
    uint32_t aqp[WIN_QPS], bqp[WIN_QPS];
    uint32_t akey, bkey;
} Win;

/* WIN_QPS RC QP pairs from node 0 to node 1 with @p, one MR each side. */
static Win *win_new(const SimConnParams *p)
{
    Win *w = calloc(1, sizeof(*w));
    unsigned i;

    assert_non_null(w);
    sim_init(&w->s, 2, WIN_MEM, 7);
    w->acq = sim_create_cq(&w->s.node[0], 10);
    w->bcq = sim_create_cq(&w->s.node[1], 10);
    w->akey = sim_reg_mr(&w->s.node[0], PDN, WIN_VA, WIN_MEM, ALL_ACCESS, 0);
    w->bkey = sim_reg_mr(&w->s.node[1], PDN, WIN_VA, WIN_MEM, ALL_ACCESS, 0);
    for (i = 0; i < WIN_QPS; i++) {
        w->aqp[i] = sim_create_qp(&w->s.node[0], KITE_QPT_RC, PDN, w->acq,
                                  w->acq, 5, 7, 5, 7, false);
        w->bqp[i] = sim_create_qp(&w->s.node[1], KITE_QPT_RC, PDN, w->bcq,
                                  w->bcq, 5, 7, 5, 7, false);
        sim_connect(&w->s, 0, w->aqp[i], 1, w->bqp[i], p);
    }
    return w;
}

static void win_free(Win *w)
{
    sim_free(&w->s);
    free(w);
}

/* @n signaled WRITEs of @len bytes on every QP of node 0. */
static void win_post(Win *w, unsigned n, uint32_t len)
{
    SimWr wr;
    unsigned i, k;

    for (k = 0; k < n; k++) {
        for (i = 0; i < WIN_QPS; i++) {
            memset(&wr, 0, sizeof(wr));
            wr.opcode = KITE_WQE_WRITE;
            wr.flags = KITE_WQE_F_SIGNALED;
            wr.raddr = WIN_VA + (uint64_t)i * len;
            wr.rkey = w->bkey;
            wr.num_sge = 1;
            wr.sge[0].addr = WIN_VA + (uint64_t)i * len;
            wr.sge[0].length = len;
            wr.sge[0].lkey = w->akey;
            sim_post_send(&w->s.node[0], w->aqp[i], &wr);
        }
    }
}

/* Every one of the @n CQEs on node 0 is a successful WRITE. */
static void win_expect_success(Win *w, unsigned n)
{
    struct kite_cqe c;
    unsigned got = 0;

    while (sim_poll_cq(&w->s.node[0], w->acq, &c)) {
        assert_int_equal(c.status, KITE_CQE_SUCCESS);
        got++;
    }
    assert_int_equal(got, n);
}

static uint64_t win_sum(Win *w, size_t off)
{
    uint64_t sum = 0;
    unsigned i;

    for (i = 0; i < WIN_QPS; i++) {
        const struct kite_roce_counters *c =
            kite_roce_qp_counters(sim_qp(&w->s.node[0], w->aqp[i])->qp);

        sum += *(const uint64_t *)((const uint8_t *)c + off);
    }
    return sum;
}

/*
 * The responder takes 10 us a frame and its queue has no limit, like
 * Soft-RoCE's under an emulated CPU; the ACK timeout is 1 ms (timeout 8)
 * with 7 retries. WIN_QPS x 1024 PSNs in flight would queue 41 ms of
 * work, and each timeout would put another window behind it: without a
 * window that shrinks, a QP sees no progress for 8 timeouts and fails.
 */
static void test_slow_responder(void **st)
{
    SimConnParams p;
    Win *w;

    (void)st;
    sim_default_params(&p);
    p.path_mtu = KITE_MTU_256;
    p.timeout = 8;
    p.retry_cnt = 7;
    w = win_new(&p);
    w->s.link_qmax = 1u << 20;
    w->s.node[1].rx_cost_ns = 10000;
    win_post(w, 8, 65536);
    sim_run(&w->s, RUN_STEPS);
    win_expect_success(w, 8 * WIN_QPS);
    /* The window did shrink: the timer fired and the QPs recovered. */
    assert_true(win_sum(w, offsetof(struct kite_roce_counters,
                                    timeouts)) > 0);
    win_free(w);
}

/*
 * The port holds 32 frames and the host runs the engine for 1024 packets
 * at a time: the engine must stop when ops->tx_ready says the port is
 * full, so that no frame is lost and nothing is sent twice.
 */
static void test_port_backpressure(void **st)
{
    SimConnParams p;
    Win *w;

    (void)st;
    sim_default_params(&p);
    w = win_new(&p);
    w->s.link_qmax = 1u << 20;
    w->s.run_budget = 1024;
    w->s.tx_cap = 32;
    win_post(w, 8, 16384);
    sim_run(&w->s, RUN_STEPS);
    win_expect_success(w, 8 * WIN_QPS);
    assert_int_equal(w->s.overflowed, 0);
    assert_int_equal(win_sum(w, offsetof(struct kite_roce_counters,
                                         retransmits)), 0);
    win_free(w);
}

/* win_new() with an ACK timeout of 1 ms (timeout 8) and 7 retries. */
static Win *win_new_stall(SimConnParams *p)
{
    sim_default_params(p);
    p->timeout = 8;
    p->retry_cnt = 7;
    return win_new(p);
}

/* Step @w until node 0 has sent @n frames: PSNs in flight on every QP. */
static void win_start(Win *w, uint64_t n)
{
    while (w->s.frames < n) {
        assert_true(sim_step(&w->s));
    }
}

/* Step @w until the peer reads again (or nothing is left to do). */
static void win_run_paused(Win *w)
{
    while (w->s.now < w->s.pause_until && sim_step(&w->s)) {
    }
}

/* Poll node 0's CQ: the CQEs of its first @nerr QPs must be flushes. */
static unsigned win_poll_flushes(Win *w, unsigned nerr, unsigned *others)
{
    struct kite_cqe c;
    unsigned n = 0, i;

    while (sim_poll_cq(&w->s.node[0], w->acq, &c)) {
        for (i = 0; i < nerr && kr_le32(&c.qpn) != w->aqp[i]; i++) {
        }
        if (i == nerr) {
            assert_int_equal(c.status, KITE_CQE_SUCCESS);
            (*others)++;
            continue;
        }
        assert_int_equal(c.status, KITE_CQE_WR_FLUSH_ERR);
        n++;
    }
    return n;
}

/*
 * A QP in ERR sends nothing: what is posted to it while the port is full
 * (its peer stopped reading) is flushed at once, not when the port
 * drains, or ib_drain_qp() would wait for the peer. One flush a run:
 * the second QP's needs a run of its own.
 */
static void test_flush_backpressured(void **st)
{
    const unsigned nerr = 2;
    struct kite_roce_qp_attr a;
    unsigned others = 0, flushed, i;
    SimConnParams p;
    uint64_t frames;
    SimSge sge;
    SimWr wr;
    Win *w;

    (void)st;
    sim_default_params(&p);
    w = win_new(&p);
    w->s.run_budget = 1;
    win_post(w, 4, 16384);
    win_start(w, 8);
    /* For 1 ms, less than the ACK timeout (16.8 ms). */
    w->s.pause_until = w->s.now + 1000000;
    frames = w->s.frames;
    memset(&a, 0, sizeof(a));
    a.state = KITE_QPS_ERR;
    for (i = 0; i < nerr; i++) {
        sim_modify(&w->s.node[0], w->aqp[i], &a, KITE_QP_ATTR_STATE);
    }
    flushed = win_poll_flushes(w, nerr, &others);
    assert_int_equal(flushed + others, 4 * nerr);

    memset(&wr, 0, sizeof(wr));
    wr.opcode = KITE_WQE_SEND;
    wr.flags = KITE_WQE_F_SIGNALED;
    sge.addr = WIN_VA;
    sge.length = 64;
    sge.lkey = w->akey;
    for (i = 0; i < nerr; i++) {
        sim_post_send(&w->s.node[0], w->aqp[i], &wr);
        sim_post_send(&w->s.node[0], w->aqp[i], &wr);
        sim_post_recv(&w->s.node[0], w->aqp[i], 1, &sge);
    }
    win_run_paused(w);
    assert_int_equal(win_poll_flushes(w, nerr, &others), 3 * nerr);
    /* Nothing was sent while the port was full. */
    assert_int_equal(w->s.frames, frames);

    sim_run(&w->s, RUN_STEPS);
    assert_int_equal(win_poll_flushes(w, nerr, &others), 0);
    assert_int_equal(others, 4 * WIN_QPS - flushed);
    assert_int_equal(w->s.overflowed, 0);
    win_free(w);
}

/*
 * The peer reads nothing for 50 ms, longer than the 8 ACK timeouts of
 * 1 ms that retry_cnt 7 allows: the packets behind the full port never
 * left, so their timeouts neither count nor go back (which would resend
 * what was only queued); once the peer reads again every WRITE
 * completes.
 */
static void test_port_stall(void **st)
{
    SimConnParams p;
    Win *w;

    (void)st;
    w = win_new_stall(&p);
    win_post(w, 4, 16384);
    win_start(w, 8);
    w->s.pause_until = w->s.now + 50000000;
    sim_run(&w->s, RUN_STEPS);
    assert_true(w->s.now > w->s.pause_until);
    win_expect_success(w, 4 * WIN_QPS);
    assert_int_equal(win_sum(w, offsetof(struct kite_roce_counters,
                                         timeouts)), 0);
    assert_int_equal(win_sum(w, offsetof(struct kite_roce_counters,
                                         retransmits)), 0);
    win_free(w);
}

/*
 * A port that never drains still ends the QPs: they wait for it
 * KR_TX_STALL_MAX_NS, then their timeouts count and they fail with
 * RETRY_EXC as if the peer were gone.
 */
static void test_port_stall_bound(void **st)
{
    struct kite_cqe c;
    SimConnParams p;
    uint64_t t0;
    unsigned i;
    Win *w;

    (void)st;
    w = win_new_stall(&p);
    win_post(w, 1, 16384);
    win_start(w, 8);
    t0 = w->s.now;
    w->s.pause_until = t0 + 2 * KR_TX_STALL_MAX_NS;
    while (w->s.now < t0 + KR_TX_STALL_MAX_NS && sim_step(&w->s)) {
    }
    assert_int_equal(sim_cq_count(&w->s.node[0], w->acq), 0);
    win_run_paused(w);
    for (i = 0; i < WIN_QPS; i++) {
        assert_int_equal(kite_roce_qp_state(sim_qp(&w->s.node[0],
                                                   w->aqp[i])->qp),
                         KITE_QPS_ERR);
        assert_true(sim_poll_cq(&w->s.node[0], w->acq, &c));
        assert_int_equal(c.status, KITE_CQE_RETRY_EXC_ERR);
    }
    assert_false(sim_poll_cq(&w->s.node[0], w->acq, &c));
    win_free(w);
}

/*
 * The same after an RNR NAK: the resend its timer makes due waits for the
 * port, and the ACK timer, not the resend, then times the QP.
 */
static void test_port_stall_after_rnr(void **st)
{
    const struct kite_roce_counters *c;
    struct kite_cqe cqe;
    SimConnParams p;
    SimWr wr;
    Win *w;

    (void)st;
    w = win_new_stall(&p);
    c = kite_roce_qp_counters(sim_qp(&w->s.node[0], w->aqp[0])->qp);
    memset(&wr, 0, sizeof(wr));
    wr.opcode = KITE_WQE_SEND;
    wr.flags = KITE_WQE_F_SIGNALED;
    /* Node 1 has no receive posted: it answers with an RNR NAK. */
    sim_post_send(&w->s.node[0], w->aqp[0], &wr);
    while (!c->rnr_naks_rcvd) {
        assert_true(sim_step(&w->s));
    }
    w->s.pause_until = w->s.now + 2 * KR_TX_STALL_MAX_NS;
    win_run_paused(w);
    assert_true(sim_poll_cq(&w->s.node[0], w->acq, &cqe));
    assert_int_equal(cqe.status, KITE_CQE_RETRY_EXC_ERR);
    win_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_responder),
        cmocka_unit_test(test_port_backpressure),
        cmocka_unit_test(test_flush_backpressured),
        cmocka_unit_test(test_port_stall),
        cmocka_unit_test(test_port_stall_bound),
        cmocka_unit_test(test_port_stall_after_rnr),
    };

    return cmocka_run_group_tests_name("roce_window", tests, NULL, NULL);
}
