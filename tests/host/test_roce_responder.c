/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the Kite RoCEv2 engine (qemu/roce/) puts on and takes from the
 * wire, on the host simulation harness (roce_sim.[ch],
 * roce_fixture.[ch]): duplicate READs and atomics, malformed frames, the
 * responder's ACKs and NAKs (roce-facts.md 5.3, 5.4) and the go-back-N
 * behaviour Soft-RoCE (rxe) shows.
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
    SimWr w = fx_wr(KITE_WQE_READ, 0);
    uint64_t reads;
    const struct kite_roce_counters *cb;

    (void)st;
    cap->src = 0;
    cap->op = KITE_OP_READ_REQ;
    f->s.tap = cap_tap;
    f->s.tap_arg = cap;
    cb = kite_roce_qp_counters(sim_qp(f->b, f->bqp)->qp);
    fx_fill(sim_mem(f->b, 0x100000), 3000, 2);
    fx_sge(&w, 0x1000, 3000, f->akey);
    w.raddr = IOVA + 0x100000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_READ, 0, 3000);
    assert_int_equal(cap->count, 1);
    reads = f->b->remote_reads;
    /* Change the memory: a re-executed READ re-reads it. */
    fx_fill(sim_mem(f->b, 0x100000), 3000, 99);
    sim_inject(&f->s, 1, cap->frame, cap->len);
    fx_run(f);
    assert_int_equal(cb->dup_requests, 1);
    assert_true(f->b->remote_reads >= reads + 3);
    /* The requester drops the stale responses: no CQE, data unchanged. */
    fx_expect_no_cqe(f->a, f->a_scq);
    assert_int_equal(fx_state(f->a, f->aqp), KITE_QPS_RTS);
    assert_int_equal(fx_state(f->b, f->bqp), KITE_QPS_RTS);
    free(cap);
    fx_free(f);
}

static void test_dup_atomic_replayed(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    Cap *cap = calloc(1, sizeof(*cap));
    SimWr w = fx_wr(KITE_WQE_FETCH_ADD, 0);
    const struct kite_roce_counters *cb;
    uint64_t writes;

    (void)st;
    cap->src = 0;
    cap->op = KITE_OP_FETCH_ADD;
    f->s.tap = cap_tap;
    f->s.tap_arg = cap;
    cb = kite_roce_qp_counters(sim_qp(f->b, f->bqp)->qp);
    mem_st64(sim_mem(f->b, 0x2000), 1000);
    fx_sge(&w, 0x100, 8, f->akey);
    w.raddr = IOVA + 0x2000;
    w.rkey = f->bkey;
    w.swap_add = 1;
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_FETCH_ADD, 0, 8);
    assert_int_equal(mem_ld64(sim_mem(f->b, 0x2000)), 1001);
    assert_int_equal(mem_ld64(sim_mem(f->a, 0x100)), 1000);
    assert_int_equal(cap->from_b_atomic_acks, 1);
    writes = f->b->atomic_writes;
    sim_inject(&f->s, 1, cap->frame, cap->len);
    sim_inject(&f->s, 1, cap->frame, cap->len);
    fx_run(f);
    assert_int_equal(cb->dup_requests, 2);
    /* Replayed (two more ATOMIC_ACKs), not executed again. */
    assert_int_equal(cap->from_b_atomic_acks, 3);
    assert_int_equal(f->b->atomic_writes, writes);
    assert_int_equal(mem_ld64(sim_mem(f->b, 0x2000)), 1001);
    fx_expect_no_cqe(f->a, f->a_scq);
    free(cap);
    fx_free(f);
}

static void test_bad_frames(void **st)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);
    Cap *cap = calloc(1, sizeof(*cap));
    SimWr w = fx_wr(KITE_WQE_SEND, 0);
    const struct kite_roce_counters *pb;
    uint8_t junk[64];

    (void)st;
    cap->src = 0;
    cap->op = KITE_OP_SEND_ONLY;
    f->s.tap = cap_tap;
    f->s.tap_arg = cap;
    pb = kite_roce_counters(f->b->e);
    fx_recv(f->b, f->bqp, 0x100000, 100, f->bkey);
    fx_sge(&w, 0, 50, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, 50);
    /* Corrupt the payload: ICRC error, counted and dropped. */
    cap->frame[cap->len - 10] ^= 0xff;
    sim_inject(&f->s, 1, cap->frame, cap->len);
    /* Truncated and non-RoCE frames. */
    sim_inject(&f->s, 1, cap->frame, 40);
    memset(junk, 0, sizeof(junk));
    memcpy(junk, f->b->mac, 6);
    sim_inject(&f->s, 1, junk, sizeof(junk));
    fx_run(f);
    assert_int_equal(pb->icrc_errors, 1);
    assert_true(f->s.not_roce >= 1);
    assert_int_equal(fx_state(f->b, f->bqp), KITE_QPS_RTS);
    fx_expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV, 0, 50);
    fx_expect_no_cqe(f->b, f->b_rcq);
    free(cap);
    fx_free(f);
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

    fx_pkt_a_to_b(f, &pk, KITE_OP_SEND_ONLY, psn);
    pk.payload = data;
    pk.paylen = sizeof(data);
    len = kite_roce_build(frame, sizeof(frame), &pk);
    assert_true(len > 0);
    kite_roce_rx(f->b->e, frame, len);
    fx_run(f);
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
        fx_recv(f->b, f->bqp, 0x1000 * i, 0x100, f->bkey);
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
    fx_expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV, KITE_CQE_SUCCESS,
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
    fx_expect_cqe(f->b, f->b_rcq, f->bqp, 1, KITE_CQE_RECV, KITE_CQE_SUCCESS,
                  16);
    fx_expect_no_cqe(f->b, f->b_rcq);
    fx_free(f);
    free(sn);
}

/* The first PSN after the 1200 packets that open the window. */
#define WARM (0x100 + 6 * 200)

/* A WRITE of @npkts packets at MTU 1024 from A to B, run to completion. */
static void write_pkts(Fx *f, uint32_t npkts, uint16_t idx)
{
    SimWr w = fx_wr(KITE_WQE_WRITE, 0);

    fx_sge(&w, 0, npkts * 1024, f->akey);
    w.raddr = IOVA + 0x100000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, idx, KITE_CQE_WRITE,
                  KITE_CQE_SUCCESS, npkts * 1024);
}

/*
 * ACK coalescing: one ACK per message, plus one per KR_MAX_PKT_PER_ACK (64)
 * packets of a long one, each at the PSN of the packet with AckReq.
 */
static void test_ack_coalescing(void **st)
{
    Seen *sn = calloc(1, sizeof(*sn));
    Fx *f;
    unsigned i;

    (void)st;
    assert_non_null(sn);
    f = fx_new(NULL, KITE_QPT_RC, false);
    /*
     * The requester's congestion window starts small and asks for an ACK
     * whenever it fills: 1200 packets first open it to its maximum.
     */
    for (i = 0; i < 6; i++) {
        write_pkts(f, 200, i);
    }
    sn->src = 1;
    f->s.tap = seen_tap;
    f->s.tap_arg = sn;
    write_pkts(f, 10, 6);
    assert_int_equal(sn->n, 1);
    assert_int_equal(sn->f[0].psn, WARM + 9);
    assert_int_equal(sn->f[0].msn, 7);
    /* 200 packets: AckReq on packets 63, 127, 191 and the last. */
    sn->n = 0;
    write_pkts(f, 200, 7);
    assert_int_equal(sn->n, 4);
    for (i = 0; i < 3; i++) {
        assert_int_equal(sn->f[i].psn, WARM + 10 + 64 * i + 63);
        assert_int_equal(sn->f[i].msn, 7);
    }
    assert_int_equal(sn->f[3].psn, WARM + 10 + 199);
    assert_int_equal(sn->f[3].msn, 8);
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
    fx_fill(sim_mem(f->b, 0x8000), 3000, 5);
    fx_recv(f->b, f->bqp, 0x20000, 0x100, f->bkey);
    f->s.drop_all = true;
    w = fx_wr(KITE_WQE_READ, 0);
    fx_sge(&w, 0x10000, 3000, f->akey);
    w.raddr = IOVA + 0x8000;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 16, f->akey);
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
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_READ, KITE_CQE_SUCCESS,
                  3000);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_SEND, KITE_CQE_SUCCESS,
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
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 16, f->akey);
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
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, KITE_CQE_SUCCESS,
                  16);
    fx_expect_no_cqe(f->a, f->a_scq);
    /* B as if it had taken the first SEND (lost here) and RNR'd the next. */
    memset(&a, 0, sizeof(a));
    a.rq_psn = p.psn_a + 1;
    sim_modify(f->b, f->bqp, &a, KITE_QP_ATTR_RQ_PSN);
    fx_recv(f->b, f->bqp, 0x1000, 0x100, f->bkey);
    fx_recv(f->b, f->bqp, 0x2000, 0x100, f->bkey);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_SEND, KITE_CQE_SUCCESS,
                  16);
    /* Only the second SEND reached B: one receive used. */
    fx_expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV, KITE_CQE_SUCCESS,
                  16);
    fx_expect_no_cqe(f->b, f->b_rcq);
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
    fx_run(f);
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
    fx_fill(data, sizeof(data), 77);
    memset(junk, 0xee, sizeof(junk));
    sim_default_params(&p);
    f = fx_new(&p, KITE_QPT_RC, false);
    sn->src = 1;
    f->s.tap = seen_tap;
    f->s.tap_arg = sn;
    f->s.drop_all = true;       /* B's answers are only recorded */
    fx_recv(f->b, f->bqp, 0x10000, 4096, f->bkey);
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
        assert_int_equal(fx_state(f->b, f->bqp), KITE_QPS_RTS);
    }
    fx_expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV, KITE_CQE_SUCCESS,
                  4096);
    fx_expect_no_cqe(f->b, f->b_rcq);
    assert_memory_equal(sim_mem(f->b, 0x10000), data, sizeof(data));
    assert_memory_equal(sim_mem(f->b, 0x40000), data, sizeof(data));
    cb = kite_roce_qp_counters(sim_qp(f->b, f->bqp)->qp);
    assert_int_equal(cb->dup_requests, 4);
    fx_free(f);
    free(sn);
}

/*
 * Receive SGEs for a SEND longer than KITE_MAX_MSG_SIZE: KITE_DEF_MAX_SGE
 * of them over the same memory, together 128 KiB more than the limit.
 */
#define BIG_SGE_LEN     ((KITE_MAX_MSG_SIZE >> 5) + 4096)

/*
 * Node B with one receive of KITE_DEF_MAX_SGE SGEs of BIG_SGE_LEN bytes
 * gets an RC SEND of @npkts packets of 4 KiB from A (injected, AckReq on
 * the last): every packet while B's QP stays in RTS. Returns the fixture;
 * @sn records B's answers.
 */
static Fx *big_send(uint32_t npkts, Seen *sn, uint32_t *psn0)
{
    static uint8_t data[4096];
    SimSge sge[KITE_DEF_MAX_SGE];
    SimConnParams p;
    uint32_t i;
    Fx *f;

    sim_default_params(&p);
    p.path_mtu = KITE_MTU_4096;
    f = fx_new_mem(&p, KITE_QPT_RC, false, 8, KITE_RQ_MAX_LOG_STRIDE,
                   BIG_SGE_LEN);
    sn->src = 1;
    f->s.tap = seen_tap;
    f->s.tap_arg = sn;
    f->s.drop_all = true;       /* B's answers are only recorded */
    assert_true((uint64_t)BIG_SGE_LEN * KITE_DEF_MAX_SGE >
                (uint64_t)npkts * sizeof(data));
    for (i = 0; i < KITE_DEF_MAX_SGE; i++) {
        sge[i].addr = IOVA;
        sge[i].length = BIG_SGE_LEN;
        sge[i].lkey = f->bkey;
    }
    sim_post_recv(f->b, f->bqp, KITE_DEF_MAX_SGE, sge);
    for (i = 0; i < npkts && fx_state(f->b, f->bqp) == KITE_QPS_RTS; i++) {
        struct kite_roce_pkt pk;

        memset(&pk, 0, sizeof(pk));
        pk.opcode = !i ? KITE_OP_SEND_FIRST : i + 1 == npkts ?
                    KITE_OP_SEND_LAST : KITE_OP_SEND_MIDDLE;
        pk.psn = (p.psn_a + i) & KITE_PSN_MASK;
        pk.ackreq = i + 1 == npkts;
        pk.payload = data;
        pk.paylen = sizeof(data);
        inject_pkt(f, true, &pk);
        if (pk.ackreq || !(i % 1024)) {
            fx_run(f);
        }
    }
    /* Every packet was offered (none refused before the last). */
    assert_int_equal(i, npkts);
    *psn0 = p.psn_a;
    return f;
}

/*
 * A SEND longer than KITE_MAX_MSG_SIZE (the requester never sends one; a
 * peer may) into receive buffers that would hold it: the responder
 * answers the packet that passes the limit with a NAK Invalid Request and
 * the receive completes with a local length error, as for a SEND longer
 * than its buffers (roce-facts.md 5.4), rather than succeeding with a
 * length the 32-bit receive offset cannot hold. A SEND of exactly the
 * limit completes.
 */
static void test_resp_send_over_max_msg(void **st)
{
    const uint32_t npkts = KITE_MAX_MSG_SIZE / 4096;
    Seen *sn = calloc(1, sizeof(*sn));
    struct kite_cqe cqe;
    uint32_t psn0;
    Fx *f;

    (void)st;
    assert_non_null(sn);
    f = big_send(npkts + 1, sn, &psn0);
    assert_int_equal(fx_state(f->b, f->bqp), KITE_QPS_ERR);
    assert_true(sn->n > 0);
    assert_int_equal(sn->f[sn->n - 1].op, KITE_OP_ACK);
    assert_int_equal(sn->f[sn->n - 1].syn, KITE_AETH_NAK_INV_REQ);
    assert_int_equal(sn->f[sn->n - 1].psn, (psn0 + npkts) & KITE_PSN_MASK);
    assert_true(sim_poll_cq(f->b, f->b_rcq, &cqe));
    assert_int_equal(cqe.opcode, KITE_CQE_RECV);
    assert_int_equal(cqe.status, KITE_CQE_LOC_LEN_ERR);
    fx_free(f);

    memset(sn, 0, sizeof(*sn));
    f = big_send(npkts, sn, &psn0);
    assert_int_equal(fx_state(f->b, f->bqp), KITE_QPS_RTS);
    fx_expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV, KITE_CQE_SUCCESS,
                  KITE_MAX_MSG_SIZE);
    assert_true(sn->n > 0);
    assert_int_equal(sn->f[sn->n - 1].syn, KITE_AETH_ACK_UNLIMITED);
    assert_int_equal(sn->f[sn->n - 1].psn,
                     (psn0 + npkts - 1) & KITE_PSN_MASK);
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
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, 16, f->akey);
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
        assert_int_equal(fx_state(f->a, f->aqp), KITE_QPS_RTS);
        fx_expect_no_cqe(f->a, f->a_scq);
    }
    ca = kite_roce_qp_counters(sim_qp(f->a, f->aqp)->qp);
    assert_int_equal(ca->rnr_naks_rcvd, 5);
    assert_int_equal(ca->naks_rcvd, 5);
    assert_int_equal(ca->timeouts, 0);
    /* The receiver is ready now. */
    f->s.drop_all = false;
    fx_recv(f->b, f->bqp, 0x1000, 0x100, f->bkey);
    fx_recv(f->b, f->bqp, 0x2000, 0x100, f->bkey);
    fx_run(f);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, KITE_CQE_SUCCESS,
                  16);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_SEND, KITE_CQE_SUCCESS,
                  16);
    fx_expect_cqe(f->b, f->b_rcq, f->bqp, 0, KITE_CQE_RECV, KITE_CQE_SUCCESS,
                  16);
    fx_expect_cqe(f->b, f->b_rcq, f->bqp, 1, KITE_CQE_RECV, KITE_CQE_SUCCESS,
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
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 2, KITE_CQE_SEND,
                  KITE_CQE_RETRY_EXC_ERR, 0);
    assert_int_equal(fx_state(f->a, f->aqp), KITE_QPS_ERR);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dup_read_reexecuted),
        cmocka_unit_test(test_dup_atomic_replayed),
        cmocka_unit_test(test_bad_frames),
        cmocka_unit_test(test_resp_nak_once_dup_ack_msn),
        cmocka_unit_test(test_ack_coalescing),
        cmocka_unit_test(test_implicit_nak),
        cmocka_unit_test(test_rnr_nak_acks_before),
        cmocka_unit_test(test_rxe_goback_mid_message),
        cmocka_unit_test(test_resp_send_over_max_msg),
        cmocka_unit_test(test_rxe_rnr_then_seq_nak),
    };

    return cmocka_run_group_tests_name("roce_wire", tests, NULL, NULL);
}
