/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Robustness of the Kite RoCEv2 engine (qemu/roce/) on one connection of
 * the host simulation harness (roce_sim.[ch], roce_fixture.[ch]): random
 * WQEs and random, validly checksummed packets complete, fail or are
 * dropped, and never crash it.
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

        if (!f || fx_state(f->a, f->aqp) == KITE_QPS_ERR || n >= 60) {
            if (f) {
                fx_free(f);
            }
            f = fx_new(NULL, (it / 7) % 3 == 2 ? KITE_QPT_UC : KITE_QPT_RC,
                       false);
            n = 0;
            for (i = 0; i < 60; i++) {
                fx_recv(f->b, f->bqp, 0x100000 + i * 0x1000, 0x1000,
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
        /* Every opcode (0x00..0x0a) and the first unknown one. */
        hdr.opcode %= KITE_WQE_BIND_MW + 2;
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
        SimWr w = fx_wr(KITE_WQE_SEND, 0);

        fx_recv(f->b, f->bqp, 0x100000, 0x10000, f->bkey);
        fx_sge(&w, 0, 3000, f->akey);
        sim_post_send(f->a, f->aqp, &w);
        w = fx_wr(KITE_WQE_READ, 0);
        fx_sge(&w, 0x10000, 3000, f->akey);
        w.raddr = IOVA;
        w.rkey = f->bkey;
        sim_post_send(f->a, f->aqp, &w);
        w = fx_wr(KITE_WQE_FETCH_ADD, 0);
        fx_sge(&w, 0x20000, 8, f->akey);
        w.raddr = IOVA;
        w.rkey = f->bkey;
        sim_post_send(f->a, f->aqp, &w);
        fx_run(f);
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

        if (!f || (it % 500) == 0 || fx_state(f->a, f->aqp) == KITE_QPS_ERR ||
            fx_state(f->b, f->bqp) == KITE_QPS_ERR) {
            unsigned i;

            if (f) {
                fx_free(f);
            }
            f = fx_new(NULL, KITE_QPT_RC, false);
            for (i = 0; i < 8; i++) {
                fx_recv(f->b, f->bqp, 0x100000 + i * 0x1000, 0x1000,
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
            p.psn = (p.psn + ((r >> 21) & 7) - 2) & KITE_PSN_MASK;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fuzz_wqes),
        cmocka_unit_test(test_fuzz_packets),
    };

    return cmocka_run_group_tests_name("roce_robust", tests, NULL, NULL);
}
