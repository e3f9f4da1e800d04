/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Coverage-guided fuzz target (libFuzzer): the RoCEv2 engine's work
 * queues. The input writes SQ and RQ WQEs of the fuzz world's QPs
 * (fuzz_world.h) on either node, rings their doorbells with any producer
 * index and changes QP states; the engines transmit over the simulated
 * link to each other (and the loopback QPs to themselves), so every
 * request is answered by a real responder.
 *
 * Input: the configuration byte, then records, each starting with a byte
 * whose low three bits say what it is and whose 0x80 picks node 1 (else
 * node 0); then a QP selector byte for kinds 0-4 and 6:
 *   0 raw SQ WQE: u8 length, that many bytes (the rest of the slot is
 *     zeroed) at the producer index, which advances (no doorbell).
 *   1 raw RQ WQE: the same on the RQ.
 *   2 built SQ WQE (see wqe_built()): fields with keys, addresses and QP
 *     numbers chosen from the world's tables, so that WQEs are valid
 *     often enough to reach the transport.
 *   3 SQ doorbell at the producer index plus a signed u8 (0: a doorbell
 *     for what was written; else one that jumps or goes back).
 *   4 RQ doorbell, the same.
 *   5 run: u8 steps of the simulation.
 *   6 state change (u8 % 4): ERR, RTS to SQD, SQD to RTS, RESET (the
 *     transitions MODIFY_QP allows; the model checks the rest).
 *   7 0x08: poll every CQ empty; else let u16 x 4 us pass (timers).
 * At the end the world must go idle with its memory invariants intact
 * (fw_settle_and_check()).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <stdint.h>
#include <string.h>

#include "fuzz_world.h"

#define MAX_RECORDS     64
/* Where a built REG_MR puts its page list: the end of region FW_R_ALL. */
#define PBL_OFF         (FW_REGION_OFF + FW_REGION_LEN - 64)
#define PBL_MAX         4
/* SGEs of a built WQE (the SQ stride holds more; a few reach as far). */
#define MAX_SGE         4

enum {
    REC_SQ_RAW, REC_RQ_RAW, REC_SQ_BUILT, REC_SQ_DB, REC_RQ_DB, REC_RUN,
    REC_STATE, REC_TIME,
};
#define F_NODE1         0x80
#define F_DRAIN         0x08

static Fw world;

/* The node QP @k of node @node talks to: its own for the loopback pair. */
static int peer_node(int node, uint8_t k)
{
    k %= FW_NR_QPS;
    return k == FW_Q_LOOP_A || k == FW_Q_LOOP_B ? node : !node;
}

static void wqe_raw(SimQp *q, FwIn *in, bool rq)
{
    uint32_t stride = 1u << (rq ? q->cfg.rq_log_stride :
                             q->cfg.sq_log_stride);
    uint32_t len = fw_get8(in);
    uint8_t *slot;

    if (rq) {
        slot = q->rq + ((size_t)kite_ring_slot(q->rq_pi++,
                                               q->cfg.rq_log_depth) <<
                        q->cfg.rq_log_stride);
    } else {
        slot = sim_sq_slot(q, q->sq_pi++);
    }
    memset(slot, 0, stride);
    fw_get(in, slot, len < stride ? len : stride);
}

static void wqe_reg_mr(Fw *w, int node, FwIn *in, SimWr *wr)
{
    struct kite_wqe_reg_mr *r = &wr->reg_mr;
    uint8_t npages = fw_get8(in), shift = fw_get8(in), rsel = fw_get8(in);
    uint32_t key = fw_key(w, node, FW_K_FR);
    uint8_t *pbl = sim_mem(&w->s.node[node], PBL_OFF);
    unsigned i;

    /* Consecutive pages of one region, so a well-formed list is likely. */
    for (i = 0; i < PBL_MAX; i++) {
        __le64 e;

        kr_set_le64(&e, FW_REGION_OFF + (rsel % FW_NR_REGIONS) *
                    FW_REGION_LEN + i * 4096ull);
        memcpy(pbl + i * sizeof(e), &e, sizeof(e));
    }
    kr_set_le64(&r->iova, fw_va(rsel, 0) + fw_get16(in));
    kr_set_le64(&r->length, fw_get16(in));
    kr_set_le64(&r->pbl_addr, rsel >= 0xf0 ? fw_get64(in) : PBL_OFF);
    kr_set_le32(&r->key, kite_key_make(kite_key_index(key), fw_get8(in)));
    kr_set_le32(&r->access, fw_get8(in));
    kr_set_le32(&r->npages, npages % 8);
    r->page_shift = shift % 16 ? 12 : shift;
}

static void wqe_bind_mw(Fw *w, int node, FwIn *in, SimWr *wr)
{
    struct kite_wqe_bind_mw *b = &wr->bind_mw;
    uint8_t rsel = fw_get8(in), msel = fw_get8(in);

    kr_set_le64(&b->addr, fw_va(rsel, fw_get16(in)));
    kr_set_le64(&b->length, fw_get16(in));
    kr_set_le32(&b->mw_key,
                kite_key_make(kite_key_index(fw_key(w, node, msel % 2 ?
                                                    FW_K_MW2 : FW_K_MW1)),
                              fw_get8(in)));
    kr_set_le32(&b->mr_key, fw_key(w, node, rsel));
    kr_set_le32(&b->access, fw_get8(in));
}

static void wqe_built(Fw *w, int node, uint8_t k, FwIn *in)
{
    SimQp *q = fw_qp(w, node, k);
    int peer = peer_node(node, k);
    uint8_t inl[256];
    unsigned i;
    SimWr wr;

    memset(&wr, 0, sizeof(wr));
    wr.opcode = fw_get8(in);
    wr.flags = fw_get8(in);
    wr.num_sge = fw_get8(in) % (MAX_SGE + 1);
    for (i = 0; i < wr.num_sge; i++) {
        uint8_t ksel = fw_get8(in), rsel = fw_get8(in);

        wr.sge[i].lkey = fw_key(w, node, ksel);
        wr.sge[i].addr = fw_va(rsel, fw_get16(in));
        wr.sge[i].length = fw_get16(in);
    }
    wr.rkey = fw_key(w, peer, fw_get8(in));
    wr.raddr = fw_va(fw_get8(in), fw_get16(in));
    fw_get(in, wr.imm, sizeof(wr.imm));
    wr.inv_key = fw_key(w, wr.opcode == KITE_WQE_SEND_INV ? peer : node,
                        fw_get8(in));
    wr.swap_add = fw_get8(in);
    wr.compare = fw_get8(in);
    if (wr.flags & KITE_WQE_F_INLINE) {
        wr.inline_len = fw_get8(in);
        fw_get(in, inl, wr.inline_len);
        wr.inl = inl;
    }
    if (wr.opcode == KITE_WQE_REG_MR) {
        wqe_reg_mr(w, node, in, &wr);
    } else if (wr.opcode == KITE_WQE_BIND_MW) {
        wqe_bind_mw(w, node, in, &wr);
    }
    sim_ud_av(&w->s, peer, &wr.av, 0);
    wr.remote_qpn = fw_qp(w, peer, fw_get8(in))->cfg.qpn;
    wr.remote_qkey = fw_get8(in) ? FW_QKEY : KITE_WQE_UD_QKEY_OWN;
    sim_write_send_q(q, &wr);
}

static void state_change(SimQp *q, uint8_t what)
{
    struct kite_roce_qp_attr a;
    uint8_t st = kite_roce_qp_state(q->qp);

    memset(&a, 0, sizeof(a));
    switch (what % 4) {
    case 0:
        a.state = KITE_QPS_ERR;
        break;
    case 1:
        if (st != KITE_QPS_RTS) {
            return;
        }
        a.state = KITE_QPS_SQD;
        break;
    case 2:
        if (st != KITE_QPS_SQD) {
            return;
        }
        a.state = KITE_QPS_RTS;
        break;
    default:
        a.state = KITE_QPS_RESET;
        q->sq_pi = q->rq_pi = 0;
        break;
    }
    kite_roce_qp_modify(q->qp, &a, KITE_QP_ATTR_STATE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FwIn in = { data, size };
    Fw *w = &world;
    unsigned rec;

    if (!size) {
        return 0;
    }
    fw_init(w, fw_get8(&in));
    for (rec = 0; in.n && rec < MAX_RECORDS; rec++) {
        uint8_t h = fw_get8(&in), kind = h & 7, k = 0;
        int node = h & F_NODE1 ? 1 : 0;
        SimQp *q = NULL;

        if (kind <= REC_RQ_DB || kind == REC_STATE) {
            k = fw_get8(&in);
            q = fw_qp(w, node, k);
        }
        switch (kind) {
        case REC_SQ_RAW:
        case REC_RQ_RAW:
            wqe_raw(q, &in, kind == REC_RQ_RAW);
            break;
        case REC_SQ_BUILT:
            wqe_built(w, node, k, &in);
            break;
        case REC_SQ_DB:
            kite_roce_sq_doorbell(q->qp, q->sq_pi +
                                  (uint32_t)(int8_t)fw_get8(&in));
            break;
        case REC_RQ_DB:
            kite_roce_rq_doorbell(q->qp, q->rq_pi +
                                  (uint32_t)(int8_t)fw_get8(&in));
            break;
        case REC_RUN:
            sim_run(&w->s, fw_get8(&in));
            break;
        case REC_STATE:
            state_change(q, fw_get8(&in));
            break;
        default:
            if (h & F_DRAIN) {
                fw_drain(w);
            } else {
                w->s.now += (uint64_t)fw_get16(&in) * 4096;
            }
            break;
        }
    }
    fw_settle_and_check(w);
    fw_free(w);
    return 0;
}
