/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gen_seeds DIR: write the seed corpora of the engine's fuzz targets into
 * DIR/roce_rx and DIR/roce_wqe (the committed tests/fuzz/corpus was made
 * by `make -C tests/fuzz seeds`). Deterministic: the same tree gives the
 * same files.
 *
 * roce_rx: the frames node 1 sends node 0 for each kind of traffic in the
 * fuzz world (fuzz_world.h), captured on the link and written as raw-frame
 * records (checksums fixed by the target, so mutations stay valid), and
 * one built-frame record per BTH opcode the engine knows.
 * roce_wqe: one built SQ WQE per WQE opcode on each QP type, with its
 * doorbell, and a raw RQ WQE plus doorbell.
 *
 * The records' layouts are the targets' (fuzz_roce_rx.c, fuzz_roce_wqe.c).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_world.h"
#include "kite_roce_pkt.h"

#define MAX_CAPTURED    8

typedef struct Buf {
    uint8_t d[1 << 16];
    size_t n;
} Buf;

static Buf buf;
static Fw world;
static const char *outdir;

static void put8(uint8_t v)
{
    if (buf.n < sizeof(buf.d)) {
        buf.d[buf.n++] = v;
    }
}

static void put16(uint16_t v)
{
    put8((uint8_t)v);
    put8((uint8_t)(v >> 8));
}

static void put(const void *p, size_t n)
{
    const uint8_t *b = p;

    while (n--) {
        put8(*b++);
    }
}

static void save(const char *target, const char *name)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", outdir, target);
    mkdir(path, 0777);
    snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
    f = fopen(path, "wb");
    if (!f || fwrite(buf.d, 1, buf.n, f) != buf.n || fclose(f)) {
        perror(path);
        exit(1);
    }
    buf.n = 0;
}

/* ---- roce_rx: captured traffic ---- */

static unsigned ncaptured;

static void tap(Sim *s, int src, const uint8_t *frame, size_t len, void *arg)
{
    (void)arg;
    if (src == 1 && ncaptured < MAX_CAPTURED && len <= 0xffff &&
        !memcmp(frame, s->node[0].mac, 6)) {
        put8(0x08);             /* raw frame, checksums fixed */
        put16((uint16_t)len);
        put(frame, len);
        ncaptured++;
    }
}

static void rx_captured(uint8_t cfg, uint8_t k, uint8_t op)
{
    Fw *w = &world;
    SimQp *q;
    SimWr wr;
    char name[64];

    fw_init(w, cfg);
    q = fw_qp(w, 1, k);
    memset(&wr, 0, sizeof(wr));
    wr.opcode = op;
    wr.flags = KITE_WQE_F_SIGNALED;
    wr.num_sge = 1;
    wr.sge[0].addr = fw_va(FW_R_ALL, 0x400);
    wr.sge[0].length = op == KITE_WQE_CMP_SWP || op == KITE_WQE_FETCH_ADD ?
                       8 : 2500;
    wr.sge[0].lkey = fw_key(w, 1, FW_K_ALL);
    wr.raddr = fw_va(op == KITE_WQE_READ ? FW_R_RR : FW_R_RW, 0x80);
    wr.rkey = fw_key(w, 0, op == KITE_WQE_READ ? FW_K_RR : FW_K_RW);
    if (op == KITE_WQE_CMP_SWP || op == KITE_WQE_FETCH_ADD) {
        wr.raddr = fw_va(FW_R_ALL, 0x80);
        wr.rkey = fw_key(w, 0, FW_K_ALL);
    }
    wr.inv_key = fw_key(w, 0, FW_K_MW1);
    wr.imm[0] = 0x5a;
    sim_ud_av(&w->s, 0, &wr.av, 0);
    wr.remote_qpn = fw_qp(w, 0, k)->cfg.qpn;
    wr.remote_qkey = FW_QKEY;
    sim_write_send_q(q, &wr);
    kite_roce_sq_doorbell(q->qp, q->sq_pi);
    put8(cfg);
    ncaptured = 0;
    w->s.tap = tap;
    sim_run(&w->s, 100000);
    fw_free(w);
    put8(0x07);                 /* poll the CQs */
    snprintf(name, sizeof(name), "cap-c%02x-q%u-op%u", cfg, k, op);
    save("roce_rx", name);
}

/* ---- roce_rx: one built frame per opcode ---- */

static void rx_built(uint8_t op)
{
    bool resp = op >= KITE_OP_READ_RESP_FIRST && op <= KITE_OP_ATOMIC_ACK;
    uint8_t k = op >= KITE_OP_UD_SEND_ONLY ? FW_Q_UD : FW_Q_RC;
    uint32_t len = kite_roce_op_hdrs(op) & KITE_HDR_RETH ? 512 : 0;
    uint16_t paylen = op == KITE_OP_READ_REQ || op == KITE_OP_ACK ||
                      op == KITE_OP_ATOMIC_ACK || op == KITE_OP_CMP_SWP ||
                      op == KITE_OP_FETCH_ADD ? 0 : 512;
    char name[32];
    unsigned i;

    put8(FW_CFG_OUTSTANDING);
    put8(resp ? 0x05 : 0x01);   /* built; responses PSN'd by the SQ */
    put8(op);
    put8(k);
    put8(resp ? 0xff : 0);      /* PSN delta */
    put8(FW_K_ALL);
    put8(FW_R_ALL);
    put16(0x100);
    put8(0x02);                 /* AckReq */
    put16((uint16_t)len);
    put16(paylen);
    for (i = 0; i < paylen; i++) {
        put8((uint8_t)i);
    }
    put8(0);                    /* AETH: ACK, MSN */
    put8(1);
    put8(1);                    /* atomic operands */
    put8(0);
    put8(0);
    put8(0);                    /* Q_Key: the world's */
    put8(k);                    /* source QP */
    put(&(uint8_t[4]){ 1, 2, 3, 4 }, 4);
    put8(0x43);                 /* run 16 steps after, then drain */
    put8(0x07);
    snprintf(name, sizeof(name), "built-op%02x", op);
    save("roce_rx", name);
}

/* ---- roce_wqe ---- */

/* A built SQ WQE of opcode @op on node 0's QP @k. */
static void wqe_record(uint8_t k, uint8_t op)
{
    put8(2);                    /* built SQ WQE, node 0 */
    put8(k);
    put8(op);
    put8(KITE_WQE_F_SIGNALED);
    put8(op == KITE_WQE_LOCAL_INV || op == KITE_WQE_REG_MR ||
         op == KITE_WQE_BIND_MW ? 0 : 1);
    if (op != KITE_WQE_LOCAL_INV && op != KITE_WQE_REG_MR &&
        op != KITE_WQE_BIND_MW) {
        put8(FW_K_ALL);         /* SGE: key, region, offset, length */
        put8(FW_R_ALL);
        put16(0x100);
        put16(op == KITE_WQE_CMP_SWP || op == KITE_WQE_FETCH_ADD ? 8 : 1500);
    }
    put8(op == KITE_WQE_READ ? FW_K_RR : FW_K_ALL);     /* rkey */
    put8(op == KITE_WQE_READ ? FW_R_RR : FW_R_ALL);     /* raddr */
    put16(0x800);
    put(&(uint8_t[4]){ 9, 8, 7, 6 }, 4);
    put8(op == KITE_WQE_LOCAL_INV ? FW_K_FR : FW_K_MW1);    /* inv key */
    put8(3);                    /* swap_add, compare */
    put8(0);
    if (op == KITE_WQE_REG_MR) {
        put8(2);                /* npages, page shift, region */
        put8(0);
        put8(FW_R_RW);
        put16(0);               /* iova offset, length */
        put16(8192);
        put8(1);                /* key variant, access */
        put8(KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE);
    } else if (op == KITE_WQE_BIND_MW) {
        put8(FW_R_ALL);         /* region, window */
        put8(0);
        put16(0x100);
        put16(0x1000);
        put8(1);
        put8(KITE_ACCESS_REMOTE_READ);
    }
    put8(k);                    /* UD: remote QP, Q_Key */
    put8(1);
}

static void wqe_seed(uint8_t k, uint8_t op)
{
    char name[32];

    put8(0);                    /* configuration */
    wqe_record(k, op);
    put8(3);                    /* doorbell */
    put8(k);
    put8(0);
    put8(5);                    /* run */
    put8(255);
    put8(0x0f);                 /* drain */
    snprintf(name, sizeof(name), "wqe-q%u-op%u", k, op);
    save("roce_wqe", name);
}

/*
 * Every RC opcode in one SQ, rung at once; SQD and back with more queued;
 * a doorbell that jumps past the ring; time for the timers.
 */
static void wqe_mix(void)
{
    uint8_t op;

    put8(FW_CFG_OUTSTANDING | 0x03);
    for (op = KITE_WQE_SEND; op <= KITE_WQE_SEND_INV; op++) {
        wqe_record(FW_Q_RC, op);
    }
    put8(3);                    /* doorbell, run */
    put8(FW_Q_RC);
    put8(0);
    put8(5);
    put8(64);
    put8(6);                    /* RTS -> SQD */
    put8(FW_Q_RC);
    put8(1);
    wqe_record(FW_Q_RC, KITE_WQE_WRITE);
    put8(3);
    put8(FW_Q_RC);
    put8(0);
    put8(5);
    put8(255);
    put8(6);                    /* SQD -> RTS */
    put8(FW_Q_RC);
    put8(2);
    put8(3);                    /* a doorbell 40 WQEs ahead */
    put8(FW_Q_RC);
    put8(40);
    put8(7);                    /* 256 ms pass */
    put16(0xffff);
    put8(5);
    put8(255);
    save("roce_wqe", "mix-rc");
}

/* A receive on node 1's RC QP written raw, then a SEND into it. */
static void wqe_raw_recv(void)
{
    struct kite_rq_wqe_hdr h = { .num_sge = 1 };
    struct kite_sge sge;

    kr_set_le64(&sge.addr, fw_va(FW_R_ALL, 0x200));
    kr_set_le32(&sge.length, 4096);
    kr_set_le32(&sge.lkey, fw_key(&world, 1, FW_K_ALL));
    put8(0);
    put8(0x81);                 /* raw RQ WQE, node 1, RC */
    put8(FW_Q_RC);
    put8(sizeof(h) + sizeof(sge));
    put(&h, sizeof(h));
    put(&sge, sizeof(sge));
    put8(0x84);                 /* its doorbell */
    put8(FW_Q_RC);
    put8(0);
    save("roce_wqe", "raw-recv");
}

int main(int argc, char **argv)
{
    static const uint8_t cfgs[] = {
        0x00, FW_CFG_OUTSTANDING | 0x04, FW_CFG_IPV6 | 0x02,
    };
    static const uint8_t ops[] = {
        KITE_WQE_SEND, KITE_WQE_SEND_IMM, KITE_WQE_WRITE, KITE_WQE_WRITE_IMM,
        KITE_WQE_READ, KITE_WQE_CMP_SWP, KITE_WQE_FETCH_ADD,
        KITE_WQE_SEND_INV, KITE_WQE_LOCAL_INV, KITE_WQE_REG_MR,
        KITE_WQE_BIND_MW,
    };
    static const uint8_t qps[] = {
        FW_Q_RC, FW_Q_UC, FW_Q_UD, FW_Q_GSI, FW_Q_LOOP_A,
    };
    unsigned c, i, j;
    uint8_t op;

    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    outdir = argv[1];
    mkdir(outdir, 0777);
    for (c = 0; c < sizeof(cfgs); c++) {
        for (j = 0; j < sizeof(qps); j++) {
            for (i = 0; i < 8; i++) {
                uint8_t k = qps[j] == FW_Q_LOOP_A ? FW_Q_RC_PDB : qps[j];

                if (k != FW_Q_RC && i > 1) {
                    continue;
                }
                rx_captured(cfgs[c], k, ops[i]);
            }
        }
    }
    for (op = 0; op <= KITE_OP_UD_SEND_ONLY_IMM; op++) {
        if (kite_roce_op_hdrs(op)) {
            rx_built(op);
        }
    }
    wqe_mix();
    fw_init(&world, 0);
    wqe_raw_recv();
    fw_free(&world);
    for (j = 0; j < sizeof(qps); j++) {
        for (i = 0; i < sizeof(ops); i++) {
            if (qps[j] != FW_Q_RC && qps[j] != FW_Q_LOOP_A && i > 1 &&
                i < 8) {
                continue;
            }
            wqe_seed(qps[j], ops[i]);
        }
    }
    return 0;
}
