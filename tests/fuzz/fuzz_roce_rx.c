/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Coverage-guided fuzz target (libFuzzer): the RoCEv2 engine's receive
 * path, kite_roce_rx(), on node 0 of the fuzz world (fuzz_world.h: QPs of
 * every type in every state, MRs of several access rights in two PDs,
 * receives posted, sends outstanding).
 *
 * Input: the configuration byte, then records, each starting with a byte
 * whose low two bits say what it is:
 *   0 raw frame: u16 length, the bytes. 0x04: address it to node 0 from
 *     node 1 (MACs, IPs); 0x08: fix its IPv4 checksum and ICRC, so that
 *     mutated frames get past the parser's checks.
 *   1 built frame: the fields of one packet from node 1 to node 0 (see
 *     rx_built()), encoded by the engine's codec, so its ICRC is valid.
 *     0x04: its PSN is relative to the QP's send PSN (responses), not its
 *     expected receive PSN (requests).
 *   2 run: u8 steps of the simulation (engines, link, timers).
 *   3 0x04: poll every CQ empty; else let u16 x 4 us pass (timers).
 * For 0 and 1, 0x20 sends the frame through the link instead of straight
 * into kite_roce_rx(), and 0x40 runs 16 steps after it.
 * At the end the world must go idle with its memory invariants intact
 * (fw_settle_and_check()).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <stdint.h>
#include <string.h>

#include "fuzz_world.h"
#include "kite_roce_pkt.h"

/* Records read from one input: bounds the cost of an input. */
#define MAX_RECORDS     64

enum { REC_RAW, REC_BUILT, REC_RUN, REC_TIME };
#define F_ADDRESS       0x04
#define F_FIX           0x08
#define F_SQ_PSN        0x04
#define F_DRAIN         0x04
#define F_LINK          0x20
#define F_STEP          0x40

static Fw world;
static uint8_t frame[KITE_ROCE_MAX_FRAME];
static uint8_t payload[4096];

static size_t rx_raw(Fw *w, FwIn *in, uint8_t h)
{
    size_t len = fw_get16(in) % (sizeof(frame) + 1);

    fw_get(in, frame, len);
    if (h & F_ADDRESS) {
        fw_address_frame(w, frame, len);
    }
    if (h & F_FIX) {
        fw_fix_frame(frame, len);
    }
    return len;
}

static size_t rx_built(Fw *w, FwIn *in, uint8_t h)
{
    const SimNode *a = &w->s.node[0], *b = &w->s.node[1];
    struct kite_roce_pkt p = kite_roce_pkt_zero;
    uint8_t qsel, ksel, rsel, qksel, flags;
    uint32_t base;
    SimQp *q;

    p.opcode = fw_get8(in);
    qsel = fw_get8(in);
    q = fw_qp(w, 0, qsel);
    p.dqpn = qsel >= 0xf0 ? fw_get32(in) & KITE_QPN_MASK : q->cfg.qpn;
    base = h & F_SQ_PSN ? kite_roce_qp_sq_psn(q->qp) :
           kite_roce_qp_rq_psn(q->qp);
    p.psn = kite_psn_add(base, (uint32_t)(int8_t)fw_get8(in));
    ksel = fw_get8(in);
    p.reth_rkey = ksel >= 0xf0 ? fw_get32(in) : fw_key(w, 0, ksel);
    p.atomic_rkey = p.reth_rkey;
    p.ieth_rkey = p.reth_rkey;
    rsel = fw_get8(in);
    p.reth_va = rsel >= 0xf0 ? fw_get64(in) : fw_va(rsel, fw_get16(in));
    p.atomic_va = p.reth_va;
    flags = fw_get8(in);
    p.reth_len = flags & 0x01 ? fw_get32(in) : fw_get16(in);
    p.paylen = fw_get16(in) % (sizeof(payload) + 1);
    fw_get(in, payload, p.paylen);
    p.payload = payload;
    p.aeth_syndrome = fw_get8(in);
    p.aeth_msn = fw_get8(in);
    p.atomic_swap_add = fw_get8(in);
    p.atomic_compare = fw_get8(in);
    p.atomic_orig = fw_get8(in);
    qksel = fw_get8(in);
    p.deth_qkey = qksel == 0 ? FW_QKEY :
                  qksel == 1 ? KITE_GSI_QKEY : fw_get32(in);
    p.deth_sqpn = fw_qp(w, 1, fw_get8(in))->cfg.qpn;
    fw_get(in, p.imm, sizeof(p.imm));
    p.ackreq = flags & 0x02;
    p.se = flags & 0x04;
    p.pkey = flags & 0x08 ? fw_get16(in) : KITE_BTH_PKEY_DEFAULT;
    p.ipv6 = w->cfg & FW_CFG_IPV6;
    memcpy(p.dmac, a->mac, 6);
    memcpy(p.smac, b->mac, 6);
    memcpy(p.sgid, b->gid, 16);
    memcpy(p.dgid, a->gid, 16);
    p.hop_limit = 64;
    p.sport = 0xc000;
    return kite_roce_build(frame, sizeof(frame), &p);
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
        uint8_t h = fw_get8(&in);
        size_t len = 0;

        switch (h & 3) {
        case REC_RAW:
            len = rx_raw(w, &in, h);
            break;
        case REC_BUILT:
            len = rx_built(w, &in, h);
            break;
        case REC_RUN:
            sim_run(&w->s, fw_get8(&in));
            continue;
        default:
            if (h & F_DRAIN) {
                fw_drain(w);
            } else {
                w->s.now += (uint64_t)fw_get16(&in) * 4096;
            }
            continue;
        }
        if (!len) {
            continue;
        }
        if (h & F_LINK) {
            sim_inject(&w->s, 0, frame, len);
        } else {
            kite_roce_rx(w->s.node[0].e, frame, len);
        }
        if (h & F_STEP) {
            sim_run(&w->s, 16);
        }
    }
    fw_settle_and_check(w);
    fw_free(w);
    return 0;
}
