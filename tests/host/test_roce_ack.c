/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ACK coalescing of the Kite RoCEv2 responder (qemu/roce/kite_roce_resp.c):
 * the plain ACKs that packets received before the next kite_roce_run()
 * make due leave as one, with the last PSN and MSN, when the engine runs;
 * NAKs (PSN sequence, RNR) and atomic responses leave from inside
 * kite_roce_rx(), behind any ACK queued before them; and requests sent
 * through the whole engine still complete under loss; the requester drops
 * an ACK or READ response older than the one it expects in the middle of
 * a READ. Frames are fed to
 * node B's engine directly, so a "batch" is exactly the frames given to
 * kite_roce_rx() between two runs.
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

#define MAX_SEEN        32
#define DST_OFF         0x100000
#define MSG_LEN         200
/* sim_default_params(): A's requester starts at this PSN. */
#define FIRST_PSN       0x100

/* The responses node B sends, in order. */
typedef struct Seen {
    unsigned n;
    struct {
        uint8_t opcode;
        uint8_t syndrome;
        uint32_t psn;
        uint32_t msn;
    } f[MAX_SEEN];
} Seen;

static void seen_tap(Sim *s, int src, const uint8_t *frame, size_t len,
                     void *arg)
{
    Seen *c = arg;
    struct kite_roce_pkt p;

    (void)s;
    if (src != 1 || kite_roce_parse(frame, len, &p) != KITE_ROCE_OK ||
        c->n == MAX_SEEN) {
        return;
    }
    c->f[c->n].opcode = p.opcode;
    c->f[c->n].syndrome = p.aeth_syndrome;
    c->f[c->n].psn = p.psn;
    c->f[c->n].msn = p.aeth_msn;
    c->n++;
}

static Fx *ack_fx(Seen *seen)
{
    Fx *f = fx_new(NULL, KITE_QPT_RC, false);

    memset(seen, 0, sizeof(*seen));
    f->s.tap = seen_tap;
    f->s.tap_arg = seen;
    return f;
}

/* Give B a WRITE_ONLY of MSG_LEN bytes at @psn (AckReq), as A would. */
static void rx_write(Fx *f, uint32_t psn, unsigned slot)
{
    static uint8_t data[MSG_LEN];
    uint8_t frame[KITE_ROCE_MAX_FRAME];
    struct kite_roce_pkt pk;
    size_t len;

    fx_fill(data, sizeof(data), psn);
    fx_pkt_a_to_b(f, &pk, KITE_OP_WRITE_ONLY, psn);
    pk.reth_va = IOVA + DST_OFF + (uint64_t)slot * MSG_LEN;
    pk.reth_rkey = f->bkey;
    pk.reth_len = MSG_LEN;
    pk.payload = data;
    pk.paylen = MSG_LEN;
    len = kite_roce_build(frame, sizeof(frame), &pk);
    assert_true(len > 0);
    assert_true(kite_roce_rx(f->b->e, frame, len));
    assert_memory_equal(sim_mem(f->b, DST_OFF + (uint64_t)slot * MSG_LEN),
                        data, MSG_LEN);
}

static void run_b(Fx *f)
{
    while (kite_roce_run(f->b->e, 64)) {
    }
}

/* Five AckReq'd WRITEs in one batch: one ACK, for the fifth, at the run. */
static void test_ack_coalesced_per_batch(void **st)
{
    Seen seen;
    Fx *f = ack_fx(&seen);
    unsigned i;

    (void)st;
    for (i = 0; i < 5; i++) {
        rx_write(f, FIRST_PSN + i, i);
    }
    assert_int_equal(seen.n, 0);
    run_b(f);
    assert_int_equal(seen.n, 1);
    assert_int_equal(seen.f[0].opcode, KITE_OP_ACK);
    assert_int_equal(seen.f[0].syndrome, KITE_AETH_ACK_UNLIMITED);
    assert_int_equal(seen.f[0].psn, FIRST_PSN + 4);
    assert_int_equal(seen.f[0].msn, 5);
    /* The next batch gets its own ACK. */
    rx_write(f, FIRST_PSN + 5, 5);
    run_b(f);
    assert_int_equal(seen.n, 2);
    assert_int_equal(seen.f[1].psn, FIRST_PSN + 5);
    assert_int_equal(seen.f[1].msn, 6);
    fx_free(f);
}

/* A PSN gap is NAK'd from inside kite_roce_rx(), after the ACK before it. */
static void test_nak_not_delayed(void **st)
{
    Seen seen;
    Fx *f = ack_fx(&seen);

    (void)st;
    rx_write(f, FIRST_PSN, 0);
    rx_write(f, FIRST_PSN + 1, 1);
    assert_int_equal(seen.n, 0);
    {
        uint8_t frame[KITE_ROCE_MAX_FRAME];
        struct kite_roce_pkt pk;
        uint8_t data[MSG_LEN] = { 0 };
        size_t len;

        fx_pkt_a_to_b(f, &pk, KITE_OP_WRITE_ONLY, FIRST_PSN + 3);
        pk.reth_va = IOVA + DST_OFF;
        pk.reth_rkey = f->bkey;
        pk.reth_len = MSG_LEN;
        pk.payload = data;
        pk.paylen = MSG_LEN;
        len = kite_roce_build(frame, sizeof(frame), &pk);
        assert_true(kite_roce_rx(f->b->e, frame, len));
    }
    assert_int_equal(seen.n, 2);
    assert_int_equal(seen.f[0].opcode, KITE_OP_ACK);
    assert_int_equal(seen.f[0].syndrome, KITE_AETH_ACK_UNLIMITED);
    assert_int_equal(seen.f[0].psn, FIRST_PSN + 1);
    assert_int_equal(seen.f[1].opcode, KITE_OP_ACK);
    assert_int_equal(seen.f[1].syndrome, KITE_AETH_NAK_PSN_SEQ);
    assert_int_equal(seen.f[1].psn, FIRST_PSN + 2);
    run_b(f);
    assert_int_equal(seen.n, 2);
    fx_free(f);
}

/* An RNR NAK (a SEND with no receive posted) is not delayed either. */
static void test_rnr_nak_not_delayed(void **st)
{
    Seen seen;
    Fx *f = ack_fx(&seen);
    uint8_t frame[KITE_ROCE_MAX_FRAME], data[16] = { 1 };
    struct kite_roce_pkt pk;
    size_t len;

    (void)st;
    rx_write(f, FIRST_PSN, 0);
    fx_pkt_a_to_b(f, &pk, KITE_OP_SEND_ONLY, FIRST_PSN + 1);
    pk.payload = data;
    pk.paylen = sizeof(data);
    len = kite_roce_build(frame, sizeof(frame), &pk);
    assert_true(kite_roce_rx(f->b->e, frame, len));
    assert_int_equal(seen.n, 2);
    assert_int_equal(seen.f[0].syndrome, KITE_AETH_ACK_UNLIMITED);
    assert_int_equal(seen.f[0].psn, FIRST_PSN);
    assert_int_equal(KITE_AETH_TYPE(seen.f[1].syndrome), KITE_AETH_TYPE_RNR);
    assert_int_equal(seen.f[1].psn, FIRST_PSN + 1);
    fx_free(f);
}

/* An atomic is answered from inside kite_roce_rx(), after the ACK queued. */
static void test_atomic_ack_not_delayed(void **st)
{
    Seen seen;
    Fx *f = ack_fx(&seen);
    uint8_t frame[KITE_ROCE_MAX_FRAME];
    struct kite_roce_pkt pk;
    size_t len;

    (void)st;
    mem_st64(sim_mem(f->b, 0x3000), 41);
    rx_write(f, FIRST_PSN, 0);
    fx_pkt_a_to_b(f, &pk, KITE_OP_FETCH_ADD, FIRST_PSN + 1);
    pk.atomic_va = IOVA + 0x3000;
    pk.atomic_rkey = f->bkey;
    pk.atomic_swap_add = 1;
    len = kite_roce_build(frame, sizeof(frame), &pk);
    assert_true(kite_roce_rx(f->b->e, frame, len));
    assert_int_equal(seen.n, 2);
    assert_int_equal(seen.f[0].opcode, KITE_OP_ACK);
    assert_int_equal(seen.f[0].psn, FIRST_PSN);
    assert_int_equal(seen.f[1].opcode, KITE_OP_ATOMIC_ACK);
    assert_int_equal(seen.f[1].psn, FIRST_PSN + 1);
    assert_int_equal(mem_ld64(sim_mem(f->b, 0x3000)), 42);
    fx_free(f);
}

/*
 * End to end: 40 WRITEs from A complete, in order, over a link that
 * drops, duplicates and reorders, with B's ACKs coalesced whenever frames
 * reach it faster than it runs.
 */
static void test_coalesced_writes_complete_lossy(void **st)
{
    Seen seen;
    Fx *f = ack_fx(&seen);
    SimWr w;
    unsigned i;

    (void)st;
    f->s.drop_ppm = 50000;
    f->s.dup_ppm = 20000;
    f->s.reorder_ppm = 50000;
    fx_fill(sim_mem(f->a, 0), 40 * MSG_LEN, 7);
    for (i = 0; i < 40; i++) {
        w = fx_wr(KITE_WQE_WRITE, KITE_WQE_F_SIGNALED);
        fx_sge(&w, (uint64_t)i * MSG_LEN, MSG_LEN, f->akey);
        w.raddr = IOVA + DST_OFF + (uint64_t)i * MSG_LEN;
        w.rkey = f->bkey;
        sim_write_send(f->a, f->aqp, &w);
    }
    sim_sq_doorbell(f->a, f->aqp);
    fx_run(f);
    for (i = 0; i < 40; i++) {
        fx_expect_cqe(f->a, f->a_scq, f->aqp, (uint16_t)i, KITE_CQE_WRITE,
                      KITE_CQE_SUCCESS, MSG_LEN);
    }
    assert_memory_equal(sim_mem(f->b, DST_OFF), sim_mem(f->a, 0),
                        40 * MSG_LEN);
    assert_int_equal(fx_state(f->a, f->aqp), KITE_QPS_RTS);
    fx_free(f);
}

/* ---- the requester: stale ACKs and responses during a READ ---- */

#define READ_LEN        3072    /* three responses at path MTU 1024 */
#define READ_SRC        0x200000
#define READ_DST        0x300000
#define MAX_REC         8

/* Every frame a node transmits, by source node. */
typedef struct Rec {
    unsigned n[2];
    struct {
        uint8_t data[KITE_ROCE_MAX_FRAME];
        size_t len;
    } f[2][MAX_REC];
} Rec;

static void rec_tap(Sim *s, int src, const uint8_t *frame, size_t len,
                    void *arg)
{
    Rec *r = arg;

    (void)s;
    if (src < 0 || src > 1 || r->n[src] == MAX_REC ||
        len > sizeof(r->f[0][0].data)) {
        return;
    }
    memcpy(r->f[src][r->n[src]].data, frame, len);
    r->f[src][r->n[src]].len = len;
    r->n[src]++;
}

/* The recorded frame of node 1 with BTH opcode @op. */
static unsigned rec_find(const Rec *r, uint8_t op)
{
    struct kite_roce_pkt p;
    unsigned i;

    for (i = 0; i < r->n[1]; i++) {
        if (kite_roce_parse(r->f[1][i].data, r->f[1][i].len, &p) ==
            KITE_ROCE_OK && p.opcode == op) {
            return i;
        }
    }
    fail_msg("no frame with opcode 0x%02x from B", op);
    return 0;
}

/*
 * A network that duplicates and reorders hands the requester an ACK or a
 * READ response older than the one it expects while a READ's responses
 * are coming in. It must drop it and go on placing the READ: Linux's rxe
 * from 6.12 on takes such an ACK for the end of the response, fails the
 * next READ_RESPONSE_MIDDLE's sequence check and completes the READ
 * successfully with only its first packet placed. A SEND, then a READ of
 * three packets; B's answers are recorded (nothing is delivered) and
 * given to A as FIRST, the ACK of the SEND again, MIDDLE, FIRST again,
 * LAST.
 */
static void test_stale_ack_during_read(void **st)
{
    static const uint8_t order[] = { 0, 1, 0, 2, 1, 3 };
    const struct kite_roce_counters *ca;
    uint8_t ack[KITE_ROCE_MAX_FRAME];
    struct kite_roce_pkt pk;
    size_t ack_len;
    unsigned i, k, resp[4];
    Rec *r = calloc(1, sizeof(*r));
    SimWr w;
    Fx *f;

    (void)st;
    assert_non_null(r);
    f = fx_new(NULL, KITE_QPT_RC, false);
    ca = kite_roce_qp_counters(sim_qp(f->a, f->aqp)->qp);
    f->s.tap = rec_tap;
    f->s.tap_arg = r;
    f->s.drop_all = true;
    fx_fill(sim_mem(f->b, READ_SRC), READ_LEN, 5);
    fx_recv(f->b, f->bqp, DST_OFF, MSG_LEN, f->bkey);
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, MSG_LEN, f->akey);
    sim_post_send(f->a, f->aqp, &w);
    w = fx_wr(KITE_WQE_READ, 0);
    fx_sge(&w, READ_DST, READ_LEN, f->akey);
    w.raddr = IOVA + READ_SRC;
    w.rkey = f->bkey;
    sim_post_send(f->a, f->aqp, &w);
    /* A's SEND_ONLY and READ request, recorded, not delivered. */
    while (kite_roce_run(f->a->e, 64)) {
    }
    assert_int_equal(r->n[0], 2);
    for (i = 0; i < 2; i++) {
        assert_true(kite_roce_rx(f->b->e, r->f[0][i].data, r->f[0][i].len));
    }
    while (kite_roce_run(f->b->e, 64)) {
    }
    resp[1] = rec_find(r, KITE_OP_READ_RESP_FIRST);
    resp[2] = rec_find(r, KITE_OP_READ_RESP_MIDDLE);
    resp[3] = rec_find(r, KITE_OP_READ_RESP_LAST);
    /* The ACK of the SEND (B may have folded it into the READ's). */
    k = resp[1];
    assert_int_equal(kite_roce_parse(r->f[1][k].data, r->f[1][k].len, &pk),
                     KITE_ROCE_OK);
    pk.opcode = KITE_OP_ACK;
    pk.psn = FIRST_PSN;
    pk.aeth_syndrome = KITE_AETH_ACK_UNLIMITED;
    pk.aeth_msn = 1;
    pk.payload = NULL;
    pk.paylen = 0;
    ack_len = kite_roce_build(ack, sizeof(ack), &pk);
    assert_true(ack_len > 0);
    for (i = 0; i < sizeof(order); i++) {
        if (!order[i]) {
            kite_roce_rx(f->a->e, ack, ack_len);
        } else {
            k = resp[order[i]];
            kite_roce_rx(f->a->e, r->f[1][k].data, r->f[1][k].len);
        }
        while (kite_roce_run(f->a->e, 64)) {
        }
    }
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 0, KITE_CQE_SEND, 0, MSG_LEN);
    fx_expect_cqe(f->a, f->a_scq, f->aqp, 1, KITE_CQE_READ, 0, READ_LEN);
    assert_memory_equal(sim_mem(f->a, READ_DST), sim_mem(f->b, READ_SRC),
                        READ_LEN);
    assert_int_equal(fx_state(f->a, f->aqp), KITE_QPS_RTS);
    assert_int_equal(ca->retransmits, 0);
    free(r);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ack_coalesced_per_batch),
        cmocka_unit_test(test_nak_not_delayed),
        cmocka_unit_test(test_rnr_nak_not_delayed),
        cmocka_unit_test(test_atomic_ack_not_delayed),
        cmocka_unit_test(test_coalesced_writes_complete_lossy),
        cmocka_unit_test(test_stale_ack_during_read),
    };

    return cmocka_run_group_tests_name("roce_ack", tests, NULL, NULL);
}
