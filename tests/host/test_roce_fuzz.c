/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Wire fuzz for the Kite RoCEv2 engine (qemu/roce/): random and mutated
 * frames go into kite_roce_rx() of two engines whose RC, UC and UD QPs
 * carry live traffic, on the host simulation harness (roce_sim.[ch]).
 * Frames are mutated at the field level and rebuilt by the codec (so they
 * pass the ICRC and reach the transport), or at the byte level (parser).
 * A run feeds a fixed number of frames (FUZZ_FRAMES), not a time's worth,
 * so every run does the same work and the count is checked. Checked: no crash or sanitizer report (build with
 * CFLAGS='-O1 -g -fsanitize=address,undefined' to run it under them), the
 * memory outside every MR is never written, QPs destroyed and recreated
 * with frames and timers pending leave nothing dangling, the engines go idle
 * within a bounded number of steps, and a fresh connection on the same
 * engines moves exact data afterwards.
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

#define MEM_SIZE        (1u << 20)
/* The MRs cover [MR_OFF, MEM_SIZE - MR_OFF) of each node's memory. */
#define MR_OFF          (64u << 10)
#define MR_LEN          (MEM_SIZE - 2 * MR_OFF)
#define IOVA            0x7f0000000000ull
#define PDN             3
#define ALL_ACCESS      (KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE | \
                         KITE_ACCESS_REMOTE_READ | KITE_ACCESS_REMOTE_ATOMIC)
#define POOL_MAX        512
#define CANARY          0xa5
/* Steps after which an engine pair that has not gone idle is looping. */
#define IDLE_STEPS      2000000ull
/*
 * Frames fed to the engines per run (KITE_FUZZ_FRAMES picks another
 * count): a fixed amount of work, whatever the host's speed. A mutation
 * that yields no frame is tried again, at most FUZZ_MAX_TRIES times per
 * frame on average before the run fails as feeding nothing.
 */
#define FUZZ_FRAMES     1000000ull
#define FUZZ_MAX_TRIES  4
/*
 * Each node's fast-register MR maps FR_LEN bytes at FR_OFF (inside the
 * MR's range) at FR_IOVA; its page list is at MR_OFF.
 */
#define FR_OFF          (MR_OFF + 0x1000)
#define FR_LEN          0x4000u
#define FR_IOVA         0x5e0000000000ull

typedef struct PoolFrame {
    int dst;
    size_t len;
    uint8_t data[KITE_ROCE_MAX_FRAME];
} PoolFrame;

typedef struct Fz {
    Sim s;
    uint32_t scq[2], rcq[2];
    uint32_t rc[2], uc[2], ud[2];
    uint32_t key[2];
    uint32_t fr[2];             /* fast-register MR: its latest key */
    uint8_t fr_variant[2];
    PoolFrame *pool;
    unsigned npool;
    uint64_t rng;
} Fz;

static uint64_t rnd(Fz *f)
{
    uint64_t x = f->rng;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    f->rng = x;
    return x;
}

static void tap(Sim *s, int src, const uint8_t *frame, size_t len, void *arg)
{
    Fz *f = arg;
    PoolFrame *p;

    (void)s;
    if (len > KITE_ROCE_MAX_FRAME) {
        return;
    }
    p = &f->pool[f->npool < POOL_MAX ? f->npool++ : rnd(f) % POOL_MAX];
    p->dst = !src;
    p->len = len;
    memcpy(p->data, frame, len);
}

static void drain_cqs(Fz *f)
{
    struct kite_cqe c;
    int i;

    for (i = 0; i < 2; i++) {
        bool more = true;

        while (more) {
            more = sim_poll_cq(&f->s.node[i], f->scq[i], &c);
            more |= sim_poll_cq(&f->s.node[i], f->rcq[i], &c);
        }
    }
}

static uint8_t qstate(Fz *f, int n, uint32_t qpn)
{
    return kite_roce_qp_state(sim_qp(&f->s.node[n], qpn)->qp);
}

static void connect_rc_uc(Fz *f, bool rc)
{
    SimConnParams p;
    struct kite_roce_qp_attr a;
    uint32_t *q = rc ? f->rc : f->uc;
    int i;

    sim_default_params(&p);
    p.timeout = 8;
    p.retry_cnt = 3;
    p.rnr_retry = 3;
    p.max_rd_atomic = 4;
    p.max_dest_rd_atomic = 4;
    memset(&a, 0, sizeof(a));
    a.state = KITE_QPS_RESET;
    for (i = 0; i < 2; i++) {
        sim_modify(&f->s.node[i], q[i], &a, KITE_QP_ATTR_STATE);
        sim_qp(&f->s.node[i], q[i])->sq_pi = 0;
        sim_qp(&f->s.node[i], q[i])->rq_pi = 0;
    }
    sim_connect(&f->s, 0, q[0], 1, q[1], &p);
}

/*
 * A memory operation on node @i's fast-register MR (REG_MR with a new key
 * or LOCAL_INV; either may fail, as the MR may be in the other state), or
 * a SEND_INV of the peer's (RC), in @w.
 */
static void mem_wr(Fz *f, int i, bool rc, SimWr *w)
{
    struct kite_wqe_reg_mr *r = &w->reg_mr;
    uint32_t npages = FR_LEN >> 12, j;

    w->num_sge = 0;
    switch (rnd(f) % (rc ? 3 : 2)) {
    case 0:
        w->opcode = KITE_WQE_REG_MR;
        for (j = 0; j < npages; j++) {
            __le64 e;

            kr_set_le64(&e, FR_OFF + j * 0x1000ull);
            memcpy(sim_mem(&f->s.node[i], MR_OFF + i * 0x100 + j * 8), &e,
                   sizeof(e));
        }
        f->fr[i] = kite_key_make(kite_key_index(f->fr[i]),
                                 ++f->fr_variant[i]);
        kr_set_le64(&r->iova, FR_IOVA);
        kr_set_le64(&r->length, FR_LEN);
        kr_set_le64(&r->pbl_addr, MR_OFF + i * 0x100);
        kr_set_le32(&r->key, f->fr[i]);
        kr_set_le32(&r->access, ALL_ACCESS);
        kr_set_le32(&r->npages, npages);
        r->page_shift = 12;
        break;
    case 1:
        w->opcode = KITE_WQE_LOCAL_INV;
        w->inv_key = f->fr[i];
        break;
    default:
        w->opcode = KITE_WQE_SEND_INV;
        w->inv_key = f->fr[!i];
        w->num_sge = 1;
        break;
    }
}

/* Post receives and a mix of requests on every QP that is in RTS. */
static void traffic(Fz *f)
{
    int i, k;

    for (i = 0; i < 2; i++) {
        SimNode *n = &f->s.node[i];
        uint32_t qs[3] = { f->rc[i], f->uc[i], f->ud[i] };

        for (k = 0; k < 3; k++) {
            SimSge sge = { IOVA + (rnd(f) % (MR_LEN - 8192)), 8192,
                           f->key[i] };
            SimWr w;

            if (qstate(f, i, qs[k]) != KITE_QPS_RTS) {
                continue;
            }
            sim_post_recv(n, qs[k], 1, &sge);
            memset(&w, 0, sizeof(w));
            w.flags = KITE_WQE_F_SIGNALED;
            w.num_sge = 1;
            w.sge[0].addr = IOVA + (rnd(f) % (MR_LEN - 8192));
            w.sge[0].length = 1 + rnd(f) % (k == 2 ? 1024 : 6000);
            w.sge[0].lkey = f->key[i];
            w.raddr = IOVA + (rnd(f) % (MR_LEN - 8192));
            w.rkey = f->key[!i];
            if (k == 2) {
                w.opcode = KITE_WQE_SEND;
                sim_ud_av(&f->s, !i, &w.av, 0);
                w.remote_qpn = f->ud[!i];
                w.remote_qkey = 0x1234;
            } else {
                static const uint8_t ops[] = {
                    KITE_WQE_SEND, KITE_WQE_SEND_IMM, KITE_WQE_WRITE,
                    KITE_WQE_WRITE_IMM, KITE_WQE_READ, KITE_WQE_CMP_SWP,
                    KITE_WQE_FETCH_ADD,
                };

                w.opcode = ops[rnd(f) % (k == 1 ? 4 : sizeof(ops))];
                if (w.opcode == KITE_WQE_CMP_SWP ||
                    w.opcode == KITE_WQE_FETCH_ADD) {
                    w.sge[0].length = 8;
                    w.raddr &= ~7ull;
                }
                if (rnd(f) % 4 == 0) {
                    /* Through the peer's fast-registered region. */
                    w.rkey = f->fr[!i];
                    w.raddr = FR_IOVA + rnd(f) % (FR_LEN - 8);
                    w.raddr &= ~7ull;
                    if (w.sge[0].length > FR_LEN - (w.raddr - FR_IOVA)) {
                        w.sge[0].length = 8;
                    }
                }
                if (rnd(f) % 6 == 0) {
                    mem_wr(f, i, k == 0, &w);
                }
            }
            sim_post_send(n, qs[k], &w);
        }
    }
}

static Fz *fz_new(uint64_t seed)
{
    Fz *f = calloc(1, sizeof(*f));
    int i;

    assert_non_null(f);
    f->pool = calloc(POOL_MAX, sizeof(*f->pool));
    assert_non_null(f->pool);
    f->rng = seed | 1;
    sim_init(&f->s, 2, MEM_SIZE, seed);
    for (i = 0; i < 2; i++) {
        SimNode *n = &f->s.node[i];

        memset(n->mem, CANARY, MEM_SIZE);
        f->scq[i] = sim_create_cq(n, 12);
        f->rcq[i] = sim_create_cq(n, 12);
        f->rc[i] = sim_create_qp(n, KITE_QPT_RC, PDN, f->scq[i], f->rcq[i],
                                 6, 8, 6, 7, false);
        f->uc[i] = sim_create_qp(n, KITE_QPT_UC, PDN, f->scq[i], f->rcq[i],
                                 6, 8, 6, 7, false);
        f->ud[i] = sim_create_qp(n, KITE_QPT_UD, PDN, f->scq[i], f->rcq[i],
                                 6, 8, 6, 7, false);
        f->key[i] = sim_reg_mr(n, PDN, IOVA, MR_LEN, ALL_ACCESS, MR_OFF);
        f->fr[i] = sim_alloc_mr(n, PDN, FR_LEN >> 12);
        sim_ud_up(n, f->ud[i], 0x1234);
    }
    connect_rc_uc(f, true);
    connect_rc_uc(f, false);
    f->s.tap = tap;
    f->s.tap_arg = f;
    return f;
}

static void fz_free(Fz *f)
{
    sim_free(&f->s);
    free(f->pool);
    free(f);
}

/* The engines must go idle (no endless loop driven by the wire). */
static void settle(Fz *f)
{
    uint64_t n = sim_run(&f->s, IDLE_STEPS);

    assert_true(n < IDLE_STEPS);
    drain_cqs(f);
}

static void check_canary(Fz *f)
{
    int i;
    size_t j;

    for (i = 0; i < 2; i++) {
        const uint8_t *m = f->s.node[i].mem;

        for (j = 0; j < MR_OFF; j++) {
            assert_int_equal(m[j], CANARY);
            assert_int_equal(m[MEM_SIZE - MR_OFF + j], CANARY);
        }
    }
}

static uint32_t rnd_len(Fz *f)
{
    switch (rnd(f) % 6) {
    case 0:
        return 0;
    case 1:
        return (uint32_t)rnd(f);
    case 2:
        return 0x80000000u - (uint32_t)(rnd(f) % 4096);
    case 3:
        return 0xffffffffu - (uint32_t)(rnd(f) % 4096);
    default:
        return (uint32_t)(rnd(f) % 20000);
    }
}

static uint64_t rnd_va(Fz *f)
{
    switch (rnd(f) % 4) {
    case 0:
        return rnd(f);
    case 1:
        return UINT64_MAX - rnd(f) % 8192;
    default:
        return IOVA + rnd(f) % (MR_LEN + 8192) - 4096;
    }
}

static uint32_t rnd_psn(Fz *f, uint32_t psn)
{
    switch (rnd(f) % 4) {
    case 0:
        return (uint32_t)rnd(f) & KITE_PSN_MASK;
    case 1:
        return (psn + 1 + rnd(f) % 8) & KITE_PSN_MASK;
    case 2:
        return (psn - 1 - rnd(f) % 8) & KITE_PSN_MASK;
    default:
        return psn;
    }
}

/* Mutate a parsed frame's fields and rebuild it (valid ICRC). */
static size_t mutate_fields(Fz *f, const PoolFrame *src, uint8_t *out,
                            uint8_t *payload)
{
    struct kite_roce_pkt p;
    unsigned i, n = 1 + rnd(f) % 4;

    if (kite_roce_parse(src->data, src->len, &p) != KITE_ROCE_OK) {
        return 0;
    }
    if (p.paylen) {
        memcpy(payload, p.payload, p.paylen);
    }
    p.payload = payload;
    for (i = 0; i < n; i++) {
        switch (rnd(f) % 12) {
        case 0:
            p.opcode = (p.opcode & 0xe0) | (rnd(f) % 0x20);
            break;
        case 1:
            p.opcode = (uint8_t)rnd(f);
            break;
        case 2:
            p.psn = rnd_psn(f, p.psn);
            break;
        case 3:
            p.reth_va = rnd_va(f);
            p.atomic_va = rnd_va(f);
            break;
        case 4:
            p.reth_len = rnd_len(f);
            break;
        case 5:
            p.reth_rkey = rnd(f) % 2 ? (uint32_t)rnd(f) : p.reth_rkey ^ 1;
            p.atomic_rkey = p.reth_rkey;
            p.ieth_rkey = rnd(f) % 2 ? f->fr[src->dst] : p.reth_rkey;
            break;
        case 6:
            p.paylen = (uint32_t)(rnd(f) % 4097);
            break;
        case 7:
            p.aeth_syndrome = (uint8_t)rnd(f);
            p.aeth_msn = (uint32_t)rnd(f) & KITE_PSN_MASK;
            break;
        case 8:
            p.ackreq = !p.ackreq;
            p.se = !p.se;
            break;
        case 9:
            p.dqpn = SIM_QPN_BASE + rnd(f) % 4;
            break;
        case 10:
            p.deth_qkey = rnd(f) % 2 ? 0x1234 : (uint32_t)rnd(f);
            p.deth_sqpn = (uint32_t)rnd(f) & KITE_QPN_MASK;
            break;
        default:
            p.atomic_swap_add = rnd(f);
            p.atomic_compare = rnd(f);
            p.atomic_orig = rnd(f);
            break;
        }
    }
    return kite_roce_build(out, KITE_ROCE_MAX_FRAME, &p);
}

/* Byte-level damage: flips, truncation, extension (parser). */
static size_t mutate_bytes(Fz *f, const PoolFrame *src, uint8_t *out)
{
    size_t len = src->len;
    unsigned i, n = 1 + rnd(f) % 8;

    memcpy(out, src->data, len);
    for (i = 0; i < n; i++) {
        switch (rnd(f) % 4) {
        case 0:
            len = rnd(f) % (len + 1);
            break;
        case 1:
            if (len < KITE_ROCE_MAX_FRAME) {
                size_t add = rnd(f) % (KITE_ROCE_MAX_FRAME - len + 1);

                memset(out + len, (int)rnd(f), add);
                len += add;
            }
            break;
        default:
            if (len) {
                out[rnd(f) % len] ^= (uint8_t)(1 + rnd(f) % 255);
            }
            break;
        }
    }
    return len;
}

/* A fresh RC connection on the same engines still moves exact data. */
static void verify_after(Fz *f)
{
    uint8_t *src = sim_mem(&f->s.node[0], MR_OFF);
    uint8_t *dst = sim_mem(&f->s.node[1], MR_OFF + 0x10000);
    uint8_t *wdst = sim_mem(&f->s.node[1], MR_OFF + 0x20000);
    SimSge sge = { IOVA + 0x10000, 0x8000, f->key[1] };
    struct kite_cqe c;
    unsigned i;
    SimWr w;

    f->s.tap = NULL;
    connect_rc_uc(f, true);
    drain_cqs(f);
    for (i = 0; i < 0x6000; i++) {
        src[i] = (uint8_t)(i * 7 + 3);
    }
    sim_post_recv(&f->s.node[1], f->rc[1], 1, &sge);
    memset(&w, 0, sizeof(w));
    w.opcode = KITE_WQE_SEND;
    w.flags = KITE_WQE_F_SIGNALED;
    w.num_sge = 1;
    w.sge[0].addr = IOVA;
    w.sge[0].length = 0x6000;
    w.sge[0].lkey = f->key[0];
    sim_post_send(&f->s.node[0], f->rc[0], &w);
    w.opcode = KITE_WQE_WRITE;
    w.raddr = IOVA + 0x20000;
    w.rkey = f->key[1];
    sim_post_send(&f->s.node[0], f->rc[0], &w);
    assert_true(sim_run(&f->s, IDLE_STEPS) < IDLE_STEPS);
    for (i = 0; i < 2; i++) {
        assert_true(sim_poll_cq(&f->s.node[0], f->scq[0], &c));
        assert_int_equal(c.status, KITE_CQE_SUCCESS);
    }
    assert_true(sim_poll_cq(&f->s.node[1], f->rcq[1], &c));
    assert_int_equal(c.status, KITE_CQE_SUCCESS);
    assert_int_equal(kr_le32(&c.byte_len), 0x6000);
    assert_memory_equal(dst, src, 0x6000);
    assert_memory_equal(wdst, src, 0x6000);
}

static void fuzz_run(uint64_t seed, uint64_t nframes)
{
    static uint8_t frame[KITE_ROCE_MAX_FRAME], payload[8192];
    Fz *f = fz_new(seed);
    uint64_t iter = 0, frames = 0;
    int i;

    while (frames < nframes) {
        /* Mutations that keep yielding no frame would feed nothing. */
        assert_true(iter < FUZZ_MAX_TRIES * nframes);
        if (iter % 4096 == 2048) {
            /*
             * Destroy and recreate the RC pair with frames, responses and
             * timers of theirs pending (same QPNs: stale frames arrive).
             */
            for (i = 0; i < 2; i++) {
                SimNode *n = &f->s.node[i];

                sim_destroy_qp(n, f->rc[i]);
                assert_int_equal(sim_create_qp(n, KITE_QPT_RC, PDN,
                                               f->scq[i], f->rcq[i], 6, 8,
                                               6, 7, false), f->rc[i]);
            }
            connect_rc_uc(f, true);
        }
        if (iter % 64 == 0) {
            /* Recover broken QPs, keep live traffic going. */
            for (i = 0; i < 2; i++) {
                if (qstate(f, i, f->rc[i]) != KITE_QPS_RTS) {
                    settle(f);
                    connect_rc_uc(f, true);
                    break;
                }
            }
            if (qstate(f, 0, f->uc[0]) != KITE_QPS_RTS ||
                qstate(f, 1, f->uc[1]) != KITE_QPS_RTS) {
                settle(f);
                connect_rc_uc(f, false);
            }
            traffic(f);
            sim_run(&f->s, 200 + rnd(f) % 2000);
        }
        if (f->npool) {
            const PoolFrame *src = &f->pool[rnd(f) % f->npool];
            size_t len;

            len = rnd(f) % 4 ? mutate_fields(f, src, frame, payload) :
                  mutate_bytes(f, src, frame);
            if (len) {
                /* Straight into the engine, or via the link. */
                if (rnd(f) % 2) {
                    kite_roce_rx(f->s.node[src->dst].e, frame, len);
                } else {
                    sim_inject(&f->s, src->dst, frame, len);
                }
                frames++;
            }
        }
        sim_run(&f->s, rnd(f) % 64);
        iter++;
    }
    settle(f);
    check_canary(f);
    verify_after(f);
    /* The traffic had memory operations and SEND_INVs executed. */
    assert_true(f->s.node[0].mem_ops + f->s.node[1].mem_ops > 0);
    assert_true(f->s.node[0].remote_invs + f->s.node[1].remote_invs > 0);
    assert_int_equal(frames, nframes);
    print_message("fuzz seed %llu: %llu frames in %llu steps, %llu memory "
                  "operations, %llu SEND_INVs received\n",
                  (unsigned long long)seed, (unsigned long long)frames,
                  (unsigned long long)iter,
                  (unsigned long long)(f->s.node[0].mem_ops +
                                       f->s.node[1].mem_ops),
                  (unsigned long long)(f->s.node[0].remote_invs +
                                       f->s.node[1].remote_invs));
    fz_free(f);
}

/*
 * KITE_FUZZ_SEED picks another seed (default 1), KITE_FUZZ_FRAMES another
 * frame count (default FUZZ_FRAMES).
 */
static void test_wire_fuzz(void **st)
{
    const char *seed = getenv("KITE_FUZZ_SEED");
    const char *n = getenv("KITE_FUZZ_FRAMES");

    (void)st;
    fuzz_run(seed ? strtoull(seed, NULL, 0) : 1,
             n && strtoull(n, NULL, 0) ? strtoull(n, NULL, 0) : FUZZ_FRAMES);
}

/* A READ request from node 0's QP to node 1's, built by hand. */
static size_t read_req(Fz *f, uint8_t *frame, uint32_t psn, uint64_t va,
                       uint32_t len)
{
    struct kite_roce_pkt p;

    memset(&p, 0, sizeof(p));
    memcpy(p.dmac, f->s.node[1].mac, 6);
    memcpy(p.smac, f->s.node[0].mac, 6);
    memcpy(p.sgid, f->s.node[0].gid, 16);
    memcpy(p.dgid, f->s.node[1].gid, 16);
    p.hop_limit = 64;
    p.opcode = KITE_OP_READ_REQ;
    p.pkey = KITE_BTH_PKEY_DEFAULT;
    p.dqpn = f->rc[1];
    p.psn = psn & KITE_PSN_MASK;
    p.ackreq = true;
    p.reth_va = va;
    p.reth_rkey = f->key[1];
    p.reth_len = len;
    return kite_roce_build(frame, KITE_ROCE_MAX_FRAME, &p);
}

/* A storm of duplicate READ requests of 2 GiB: bounded work, no hang. */
static void test_dup_read_storm(void **st)
{
    Fz *f = fz_new(7);
    size_t len;
    uint64_t before;
    unsigned i;
    SimWr w;

    (void)st;
    f->s.tap = NULL;
    /* One READ of 64 KiB from node 1, completed, so node 1 holds it. */
    memset(&w, 0, sizeof(w));
    w.opcode = KITE_WQE_READ;
    w.flags = KITE_WQE_F_SIGNALED;
    w.num_sge = 1;
    w.sge[0].addr = IOVA;
    w.sge[0].length = 65536;
    w.sge[0].lkey = f->key[0];
    w.raddr = IOVA + 65536;
    w.rkey = f->key[1];
    sim_post_send(&f->s.node[0], f->rc[0], &w);
    settle(f);
    before = f->s.node[1].remote_reads;
    /* 10,000 duplicates of it, half with a 2 GiB length. */
    for (i = 0; i < 10000; i++) {
        static uint8_t frame[KITE_ROCE_MAX_FRAME];

        len = read_req(f, frame, 0x100, IOVA + 65536,
                       i % 2 ? 65536 : 0x80000000u);
        assert_true(len > 0);
        kite_roce_rx(f->s.node[1].e, frame, len);
    }
    f->s.drop_all = true;
    settle(f);
    /* The queued duplicates restart one stream: at most a few READs. */
    assert_true(f->s.node[1].remote_reads - before <= 4 * 64 + 64);
    check_canary(f);
    fz_free(f);
}

/*
 * A requester that ignores max_dest_rd_atomic (4 here) and sends 100 READs
 * of 64 KiB back to back: the responder keeps at most 4 response streams
 * (the newest), not 100 (6,400 packets of work).
 */
static void test_read_flood_bounded(void **st)
{
    static uint8_t frame[KITE_ROCE_MAX_FRAME];
    Fz *f = fz_new(11);
    uint64_t before;
    unsigned i;
    size_t len;

    (void)st;
    f->s.tap = NULL;
    before = f->s.node[1].remote_reads;
    for (i = 0; i < 100; i++) {
        /* 64 PSNs per READ at MTU 1024; node 1 expects 0x100 first. */
        len = read_req(f, frame, 0x100 + i * 64, IOVA + 65536, 65536);
        assert_true(len > 0);
        kite_roce_rx(f->s.node[1].e, frame, len);
    }
    f->s.drop_all = true;
    settle(f);
    /* Two probes per request, then 64 reads per stream sent. */
    assert_true(f->s.node[1].remote_reads - before <= 100 * 2 + 4 * 64);
    assert_int_equal(qstate(f, 1, f->rc[1]), KITE_QPS_RTS);
    fz_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire_fuzz),
        cmocka_unit_test(test_dup_read_storm),
        cmocka_unit_test(test_read_flood_bounded),
    };

    return cmocka_run_group_tests_name("roce_fuzz", tests, NULL, NULL);
}
