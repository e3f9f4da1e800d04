/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Two-engine simulation of the Kite RoCEv2 engine: one RC QP pair moves
 * 10,000 messages of random sizes from 1 B to 1 MiB, mixing SEND, SEND
 * with immediate, RDMA WRITE, WRITE with immediate and RDMA READ (plus
 * one FETCH_ADD in 16, whose returned values must count up exactly
 * once), over a link that drops, duplicates and reorders 5% of
 * the frames each. Every byte is verified, and every completion must
 * arrive exactly once, in order, with the right opcode, length and
 * immediate data. A
 * second run on a clean link must need no retransmission at all.
 *
 * Sizes are log-uniform by octave: an octave k in 0..20 is drawn
 * uniformly, then a size uniformly in [2^k, 2^(k+1)) capped at 1 MiB, so
 * every magnitude from 1 byte to 1 MiB is equally represented.
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
#include <time.h>
#include <cmocka.h>

#include "kite_roce_pkt.h"
#include "roce_sim.h"

#define SLOTS           16              /* messages in flight */
#define MAX_MSG         (1u << 20)
#define REGION          ((uint64_t)SLOTS * MAX_MSG)
/* Node A: sources at 0, READ destinations at REGION. */
#define A_SRC           0
#define A_RDST          REGION
/* Node B: receive buffers at 0, WRITE targets at REGION, READ sources. */
#define B_RECV          0
#define B_WDST          REGION
#define B_RSRC          (2 * REGION)
#define B_COUNTER       (3 * REGION)
#define MEM_SIZE        (3 * REGION + 4096)
#define IOVA            0x10000000ull
#define PDN             1
#define NOPS            5

static const uint8_t wqe_ops[NOPS] = {
    KITE_WQE_SEND, KITE_WQE_SEND_IMM, KITE_WQE_WRITE, KITE_WQE_WRITE_IMM,
    KITE_WQE_READ,
};

typedef struct Msg {
    uint8_t op;
    uint32_t size;
    uint32_t slot;
    bool recv;                  /* consumes a receive */
    bool a_done, b_done;
    uint64_t fa_expect;         /* FETCH_ADD: the original value due */
} Msg;

typedef struct Run {
    Sim s;
    SimNode *a, *b;
    uint32_t acq, brcq, bscq, arcq;
    uint32_t aqp, bqp;
    uint32_t akey, bkey;
    Msg *msg;
    unsigned nmsg;
    unsigned posted, a_completed, b_completed;
    uint32_t *recv_fifo;        /* message of each receive, in order */
    unsigned recv_posted;       /* RQ WQEs posted */
    unsigned recv_needed;       /* receive-consuming messages posted */
    bool slot_busy[SLOTS];
    unsigned busy;
    uint64_t bytes;
    uint64_t fetch_adds;
    unsigned sizes_by_octave[21];
} Run;

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void pattern(uint8_t *p, uint32_t len, uint32_t m)
{
    uint64_t v = 0;
    uint32_t i;

    for (i = 0; i < len; i++) {
        if (!(i & 7)) {
            v = mix(((uint64_t)m << 32) | i);
        }
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

static uint32_t rnd(Run *r, uint32_t n)
{
    return (uint32_t)((sim_rand(&r->s) >> 33) % n);
}

static void imm_of(uint32_t m, uint8_t *imm)
{
    imm[0] = (uint8_t)(m >> 24);
    imm[1] = (uint8_t)(m >> 16);
    imm[2] = (uint8_t)(m >> 8);
    imm[3] = (uint8_t)m;
}

/* Split [off, off + len) into 1..4 SGEs. */
static void split_sges(Run *r, SimWr *w, uint64_t off, uint32_t len,
                       uint32_t key)
{
    unsigned n = 1 + rnd(r, 4), i;
    uint32_t left = len;

    if (len < n) {
        n = len ? len : 1;
    }
    w->num_sge = 0;
    for (i = 0; i < n; i++) {
        uint32_t part = i + 1 == n ? left : 1 + rnd(r, left - (n - i - 1));

        if (part > left - (n - i - 1)) {
            part = left - (n - i - 1);
        }
        w->sge[i].addr = IOVA + off;
        w->sge[i].length = part;
        w->sge[i].lkey = key;
        off += part;
        left -= part;
        w->num_sge++;
    }
}

static void post_recv(Run *r)
{
    uint32_t slot = r->recv_posted % SLOTS;
    uint64_t off = B_RECV + (uint64_t)slot * MAX_MSG;
    SimSge s[3];
    uint32_t a = 1 + rnd(r, MAX_MSG / 2), b = 1 + rnd(r, MAX_MSG / 4);

    /* Three SGEs covering the 1 MiB buffer. */
    s[0].addr = IOVA + off;
    s[0].length = a;
    s[1].addr = IOVA + off + a;
    s[1].length = b;
    s[2].addr = IOVA + off + a + b;
    s[2].length = MAX_MSG - a - b;
    s[0].lkey = s[1].lkey = s[2].lkey = r->bkey;
    sim_post_recv(r->b, r->bqp, 3, s);
    r->recv_posted++;
}

static void post_msg(Run *r)
{
    uint32_t m = r->posted, slot, k;
    Msg *g = &r->msg[m];
    SimWr w;
    uint8_t inl[256];

    slot = 0;
    while (slot < SLOTS && r->slot_busy[slot]) {
        slot++;
    }
    assert_true(slot < SLOTS);
    r->slot_busy[slot] = true;
    r->busy++;
    g->slot = slot;
    if (!rnd(r, 16)) {
        /* A FETCH_ADD of 1 on B's counter: exactly-once execution. */
        memset(&w, 0, sizeof(w));
        g->op = KITE_WQE_FETCH_ADD;
        g->size = 8;
        g->b_done = true;
        w.opcode = KITE_WQE_FETCH_ADD;
        w.flags = KITE_WQE_F_SIGNALED;
        w.num_sge = 1;
        w.sge[0].addr = IOVA + A_RDST + (uint64_t)slot * MAX_MSG;
        w.sge[0].length = 8;
        w.sge[0].lkey = r->akey;
        w.raddr = IOVA + B_COUNTER;
        w.rkey = r->bkey;
        w.swap_add = 1;
        g->fa_expect = r->fetch_adds++;
        sim_post_send(r->a, r->aqp, &w);
        r->posted++;
        return;
    }
    k = rnd(r, 21);
    g->size = (1u << k) + (k < 20 ? rnd(r, 1u << k) : 0);
    r->sizes_by_octave[k]++;
    g->op = wqe_ops[rnd(r, NOPS)];
    g->recv = g->op == KITE_WQE_SEND || g->op == KITE_WQE_SEND_IMM ||
              g->op == KITE_WQE_WRITE_IMM;
    g->b_done = !g->recv;
    memset(&w, 0, sizeof(w));
    w.opcode = g->op;
    w.flags = KITE_WQE_F_SIGNALED;
    imm_of(m, w.imm);
    if (g->op == KITE_WQE_READ) {
        pattern(sim_mem(r->b, B_RSRC + (uint64_t)slot * MAX_MSG), g->size, m);
        memset(sim_mem(r->a, A_RDST + (uint64_t)slot * MAX_MSG), 0,
               g->size);
        split_sges(r, &w, A_RDST + (uint64_t)slot * MAX_MSG, g->size,
                   r->akey);
        w.raddr = IOVA + B_RSRC + (uint64_t)slot * MAX_MSG;
        w.rkey = r->bkey;
    } else {
        uint8_t *src = sim_mem(r->a, A_SRC + (uint64_t)slot * MAX_MSG);

        pattern(src, g->size, m);
        if (g->size <= sizeof(inl) && rnd(r, 2)) {
            memcpy(inl, src, g->size);
            w.flags |= KITE_WQE_F_INLINE;
            w.inl = inl;
            w.inline_len = (uint16_t)g->size;
        } else {
            split_sges(r, &w, A_SRC + (uint64_t)slot * MAX_MSG, g->size,
                       r->akey);
        }
        if (g->op == KITE_WQE_WRITE || g->op == KITE_WQE_WRITE_IMM) {
            uint8_t *dst = sim_mem(r->b, B_WDST + (uint64_t)slot * MAX_MSG);

            /* Old contents differ from the new data; a guard after it. */
            memset(dst, 0x5a, g->size);
            if (g->size < MAX_MSG) {
                dst[g->size] = 0xa5;
            }
            w.raddr = IOVA + B_WDST + (uint64_t)slot * MAX_MSG;
            w.rkey = r->bkey;
        }
    }
    if (g->recv) {
        r->recv_fifo[r->recv_needed++] = m;
    }
    r->bytes += g->size;
    sim_post_send(r->a, r->aqp, &w);
    r->posted++;
}

static void msg_retire(Run *r, Msg *g)
{
    if (g->a_done && g->b_done) {
        r->slot_busy[g->slot] = false;
        r->busy--;
    }
}

static uint8_t cqe_op(uint8_t op)
{
    switch (op) {
    case KITE_WQE_WRITE:
    case KITE_WQE_WRITE_IMM:
        return KITE_CQE_WRITE;
    case KITE_WQE_READ:
        return KITE_CQE_READ;
    case KITE_WQE_FETCH_ADD:
        return KITE_CQE_FETCH_ADD;
    default:
        return KITE_CQE_SEND;
    }
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

static void poll_a(Run *r)
{
    struct kite_cqe c;

    while (sim_poll_cq(r->a, r->acq, &c)) {
        uint32_t m = r->a_completed;
        Msg *g = &r->msg[m];
        uint64_t so = (uint64_t)g->slot * MAX_MSG;

        if (c.status != KITE_CQE_SUCCESS) {
            fprintf(stderr, "message %u: status %u\n", m, c.status);
        }
        assert_true(m < r->posted);
        assert_int_equal(c.status, KITE_CQE_SUCCESS);
        assert_int_equal(kr_le32(&c.qpn), r->aqp);
        assert_int_equal(kr_le16(&c.wqe_idx), m % 64);
        assert_int_equal(c.opcode, cqe_op(g->op));
        assert_int_equal(kr_le32(&c.byte_len), g->size);
        switch (g->op) {
        case KITE_WQE_WRITE:
        case KITE_WQE_WRITE_IMM:
            assert_memory_equal(sim_mem(r->b, B_WDST + so),
                                sim_mem(r->a, A_SRC + so), g->size);
            if (g->size < MAX_MSG) {
                assert_int_equal(*sim_mem(r->b, B_WDST + so + g->size),
                                 0xa5);
            }
            break;
        case KITE_WQE_READ:
            assert_memory_equal(sim_mem(r->a, A_RDST + so),
                                sim_mem(r->b, B_RSRC + so), g->size);
            break;
        case KITE_WQE_FETCH_ADD:
            assert_int_equal(ld64(sim_mem(r->a, A_RDST + so)),
                             g->fa_expect);
            break;
        default:
            break;
        }
        g->a_done = true;
        r->a_completed++;
        msg_retire(r, g);
    }
}

static void poll_b(Run *r)
{
    struct kite_cqe c;

    while (sim_poll_cq(r->b, r->brcq, &c)) {
        uint32_t ri = r->b_completed;
        uint32_t m = r->recv_fifo[ri];
        Msg *g = &r->msg[m];
        uint8_t imm[4];

        assert_true(ri < r->recv_needed);
        assert_int_equal(c.status, KITE_CQE_SUCCESS);
        assert_int_equal(kr_le32(&c.qpn), r->bqp);
        assert_int_equal(kr_le16(&c.wqe_idx), ri % 64);
        assert_int_equal(kr_le32(&c.byte_len), g->size);
        imm_of(m, imm);
        if (g->op == KITE_WQE_WRITE_IMM) {
            assert_int_equal(c.opcode, KITE_CQE_RECV_WRITE_IMM);
        } else {
            assert_int_equal(c.opcode, KITE_CQE_RECV);
            assert_memory_equal(
                sim_mem(r->b, B_RECV + (uint64_t)(ri % SLOTS) * MAX_MSG),
                sim_mem(r->a, A_SRC + (uint64_t)g->slot * MAX_MSG), g->size);
        }
        if (g->op == KITE_WQE_SEND) {
            assert_int_equal(c.flags & KITE_CQE_F_IMM, 0);
        } else {
            assert_true(c.flags & KITE_CQE_F_IMM);
            assert_memory_equal(&c.imm_data, imm, 4);
        }
        g->b_done = true;
        r->b_completed++;
        msg_retire(r, g);
        /* The buffer is free again. */
        post_recv(r);
    }
}

static void sim_run_messages(unsigned nmsg, uint8_t mtu, uint32_t ppm,
                             uint64_t seed, const char *name)
{
    Run *r = calloc(1, sizeof(*r));
    SimConnParams p;
    const struct kite_roce_counters *ca, *cb;
    clock_t t0 = clock();
    unsigned i;
    struct kite_cqe c;

    assert_non_null(r);
    r->msg = calloc(nmsg, sizeof(*r->msg));
    r->recv_fifo = calloc(nmsg, sizeof(*r->recv_fifo));
    assert_non_null(r->msg);
    assert_non_null(r->recv_fifo);
    r->nmsg = nmsg;
    sim_init(&r->s, 2, MEM_SIZE, seed);
    r->s.drop_ppm = r->s.dup_ppm = r->s.reorder_ppm = ppm;
    r->a = &r->s.node[0];
    r->b = &r->s.node[1];
    r->acq = sim_create_cq(r->a, 10);
    r->arcq = sim_create_cq(r->a, 4);
    r->bscq = sim_create_cq(r->b, 4);
    r->brcq = sim_create_cq(r->b, 10);
    r->aqp = sim_create_qp(r->a, KITE_QPT_RC, PDN, r->acq, r->arcq, 6, 9, 6,
                           7, false);
    r->bqp = sim_create_qp(r->b, KITE_QPT_RC, PDN, r->bscq, r->brcq, 6, 8,
                           6, 7, false);
    r->akey = sim_reg_mr(r->a, PDN, IOVA, MEM_SIZE,
                         KITE_ACCESS_LOCAL_WRITE, 0);
    r->bkey = sim_reg_mr(r->b, PDN, IOVA, MEM_SIZE, KITE_ACCESS_LOCAL_WRITE |
                         KITE_ACCESS_REMOTE_WRITE | KITE_ACCESS_REMOTE_READ |
                         KITE_ACCESS_REMOTE_ATOMIC, 0);
    sim_default_params(&p);
    p.path_mtu = mtu;
    p.psn_a = 0xffff00;     /* wraps early */
    p.timeout = 12;
    p.retry_cnt = 7;
    p.rnr_retry = 7;
    p.max_rd_atomic = 16;
    p.max_dest_rd_atomic = 16;
    sim_connect(&r->s, 0, r->aqp, 1, r->bqp, &p);
    ca = kite_roce_qp_counters(sim_qp(r->a, r->aqp)->qp);
    cb = kite_roce_qp_counters(sim_qp(r->b, r->bqp)->qp);

    for (i = 0; i < SLOTS; i++) {
        post_recv(r);
    }
    while (r->a_completed < nmsg || r->b_completed < r->recv_needed) {
        unsigned steps = 0, before = r->a_completed + r->b_completed;

        while (r->posted < nmsg && r->busy < SLOTS) {
            post_msg(r);
        }
        while (steps < 512 && sim_step(&r->s)) {
            steps++;
        }
        poll_a(r);
        poll_b(r);
        if (!steps && before == r->a_completed + r->b_completed) {
            fprintf(stderr, "%s: stalled at message %u (A %u, B %u done), "
                    "A state %u, B state %u\n", name, r->posted,
                    r->a_completed, r->b_completed,
                    kite_roce_qp_state(sim_qp(r->a, r->aqp)->qp),
                    kite_roce_qp_state(sim_qp(r->b, r->bqp)->qp));
            fail();
        }
    }
    /* Drain: nothing more may complete, both QPs still in RTS. */
    sim_run(&r->s, 100000000ull);
    assert_false(sim_poll_cq(r->a, r->acq, &c));
    assert_false(sim_poll_cq(r->b, r->brcq, &c));
    assert_false(sim_poll_cq(r->a, r->arcq, &c));
    assert_false(sim_poll_cq(r->b, r->bscq, &c));
    assert_int_equal(kite_roce_qp_state(sim_qp(r->a, r->aqp)->qp),
                     KITE_QPS_RTS);
    assert_int_equal(kite_roce_qp_state(sim_qp(r->b, r->bqp)->qp),
                     KITE_QPS_RTS);
    assert_int_equal(r->a_completed, nmsg);
    /* Every FETCH_ADD executed exactly once. */
    assert_true(r->fetch_adds > 0);
    assert_int_equal(ld64(sim_mem(r->b, B_COUNTER)), r->fetch_adds);

    fprintf(stderr, "%s: %u messages (%llu FETCH_ADD), %llu MB, MTU %u, "
            "%.1f s CPU, virtual %.3f s\n", name, nmsg,
            (unsigned long long)r->fetch_adds,
            (unsigned long long)(r->bytes >> 20), kite_mtu_bytes(mtu),
            (double)(clock() - t0) / CLOCKS_PER_SEC, r->s.now / 1e9);
    fprintf(stderr, "%s: link frames %llu, dropped %llu, duplicated %llu, "
            "reordered %llu\n", name, (unsigned long long)r->s.frames,
            (unsigned long long)r->s.dropped,
            (unsigned long long)r->s.duplicated,
            (unsigned long long)r->s.reordered);
    fprintf(stderr, "%s: A tx %llu pkts, retransmits %llu, timeouts %llu, "
            "early retransmissions %llu, NAKs rcvd %llu, RNR rcvd %llu; "
            "B tx %llu, NAKs sent %llu, dup requests %llu\n", name,
            (unsigned long long)ca->tx_packets,
            (unsigned long long)ca->retransmits,
            (unsigned long long)ca->timeouts,
            (unsigned long long)ca->early_retransmits,
            (unsigned long long)ca->naks_rcvd,
            (unsigned long long)ca->rnr_naks_rcvd,
            (unsigned long long)cb->tx_packets,
            (unsigned long long)cb->naks_sent,
            (unsigned long long)cb->dup_requests);
    for (i = 0; i <= 20; i++) {
        assert_true(r->sizes_by_octave[i] > 0);
    }
    if (!ppm) {
        assert_int_equal(ca->retransmits, 0);
        assert_int_equal(ca->timeouts, 0);
        assert_int_equal(ca->naks_rcvd, 0);
        assert_int_equal(cb->dup_requests, 0);
    } else {
        assert_true(r->s.dropped > 0 && r->s.duplicated > 0 &&
                    r->s.reordered > 0);
        assert_true(ca->retransmits > 0);
        assert_true(cb->dup_requests > 0);
    }
    sim_free(&r->s);
    free(r->msg);
    free(r->recv_fifo);
    free(r);
}

/*
 * KITE_SIM_SEED, KITE_SIM_MSGS, KITE_SIM_MTU (enum kite_mtu) and
 * KITE_SIM_PPM (each fault's rate) change the lossy run, to try other
 * cases by hand.
 */
static unsigned long env_or(const char *name, unsigned long def)
{
    const char *v = getenv(name);

    return v && *v ? strtoul(v, NULL, 0) : def;
}

static void test_lossy_10000(void **st)
{
    (void)st;
    sim_run_messages(env_or("KITE_SIM_MSGS", 10000),
                     env_or("KITE_SIM_MTU", KITE_MTU_4096),
                     env_or("KITE_SIM_PPM", 50000),
                     env_or("KITE_SIM_SEED", 20261129), "lossy");
}

static void test_clean_2000(void **st)
{
    (void)st;
    sim_run_messages(2000, KITE_MTU_1024, 0, 42, "clean");
}

/*
 * A duplicate WRITE after a READ (a retransmission after a lost ACK) is
 * acknowledged with the last SEND/WRITE PSN, never with the READ's: Linux
 * rxe completes a READ on a plain ACK carrying its last PSN, without the
 * data (seen as wrong READ data in the interop group under loss).
 */
struct dup_tap {
    bool capture;
    uint8_t write[KITE_ROCE_MAX_FRAME];
    size_t write_len;
    uint32_t write_psn, read_psn;
    int acks_from_b;
    uint32_t ack_psn;
};

static void dup_tap_fn(Sim *s, int src, const uint8_t *f, size_t len,
                       void *arg)
{
    struct dup_tap *t = arg;
    struct kite_roce_pkt p;

    (void)s;
    if (kite_roce_parse(f, len, &p) != KITE_ROCE_OK) {
        return;
    }
    if (src == 0 && t->capture && p.opcode == KITE_OP_WRITE_ONLY) {
        memcpy(t->write, f, len);
        t->write_len = len;
        t->write_psn = p.psn;
    } else if (src == 0 && t->capture && p.opcode == KITE_OP_READ_REQ) {
        t->read_psn = p.psn;
    } else if (src == 1 && !t->capture && p.opcode == KITE_OP_ACK) {
        t->acks_from_b++;
        t->ack_psn = p.psn;
    }
}

static void test_dup_write_ack_after_read(void **st)
{
    struct dup_tap t = { .capture = true };
    SimConnParams prm;
    struct kite_cqe c;
    uint32_t acq, bcq, aqp, bqp, akey, bkey;
    SimWr w;
    Sim s;
    int n = 0;

    (void)st;
    sim_init(&s, 2, 1u << 20, 1);
    acq = sim_create_cq(&s.node[0], 6);
    bcq = sim_create_cq(&s.node[1], 6);
    aqp = sim_create_qp(&s.node[0], KITE_QPT_RC, 1, acq, acq, 6, 8, 6, 7,
                        false);
    bqp = sim_create_qp(&s.node[1], KITE_QPT_RC, 1, bcq, bcq, 6, 8, 6, 7,
                        false);
    akey = sim_reg_mr(&s.node[0], 1, 0x10000000ull, 1u << 20,
                      KITE_ACCESS_LOCAL_WRITE, 0);
    bkey = sim_reg_mr(&s.node[1], 1, 0x10000000ull, 1u << 20,
                      KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE |
                      KITE_ACCESS_REMOTE_READ, 0);
    sim_default_params(&prm);
    sim_connect(&s, 0, aqp, 1, bqp, &prm);
    s.tap = dup_tap_fn;
    s.tap_arg = &t;

    memset(&w, 0, sizeof(w));
    w.opcode = KITE_WQE_WRITE;
    w.flags = KITE_WQE_F_SIGNALED;
    w.raddr = 0x10000000ull + 4096;
    w.rkey = bkey;
    w.num_sge = 1;
    w.sge[0].addr = 0x10000000ull;
    w.sge[0].length = 8;
    w.sge[0].lkey = akey;
    sim_post_send(&s.node[0], aqp, &w);
    w.opcode = KITE_WQE_READ;
    w.raddr = 0x10000000ull + 8192;
    w.sge[0].addr = 0x10000000ull + 12288;
    w.sge[0].length = 3;
    sim_post_send(&s.node[0], aqp, &w);
    sim_run(&s, 100000);
    while (sim_poll_cq(&s.node[0], acq, &c)) {
        assert_int_equal(c.status, KITE_CQE_SUCCESS);
        n++;
    }
    assert_int_equal(n, 2);
    assert_int_not_equal(t.write_len, 0);
    assert_int_equal(t.read_psn, (t.write_psn + 1) & KITE_PSN_MASK);

    /* The WRITE again, as a retransmission; only B's answer is seen. */
    t.capture = false;
    sim_inject(&s, 1, t.write, t.write_len);
    s.drop_all = true;
    sim_run(&s, 100000);
    assert_int_equal(t.acks_from_b, 1);
    assert_int_equal(t.ack_psn, t.write_psn);
    sim_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_2000),
        cmocka_unit_test(test_lossy_10000),
        cmocka_unit_test(test_dup_write_ack_after_read),
    };

    return cmocka_run_group_tests_name("roce_sim", tests, NULL, NULL);
}
