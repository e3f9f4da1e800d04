/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fixed world of the engine's fuzz targets: see fuzz_world.h.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_world.h"
#include "kite_roce_pkt.h"

#define ALL_ACCESS  (KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE | \
                     KITE_ACCESS_REMOTE_READ | KITE_ACCESS_REMOTE_ATOMIC)
#define SQ_LOG_DEPTH    4
#define SQ_LOG_STRIDE   8
#define RQ_LOG_DEPTH    4
#define RQ_LOG_STRIDE   6

uint8_t fw_get8(FwIn *in)
{
    uint8_t v = 0;

    fw_get(in, &v, 1);
    return v;
}

uint16_t fw_get16(FwIn *in)
{
    return (uint16_t)(fw_get8(in) | fw_get8(in) << 8);
}

uint32_t fw_get32(FwIn *in)
{
    uint32_t lo = fw_get16(in);

    return lo | (uint32_t)fw_get16(in) << 16;
}

uint64_t fw_get64(FwIn *in)
{
    uint64_t lo = fw_get32(in);

    return lo | (uint64_t)fw_get32(in) << 32;
}

void fw_get(FwIn *in, void *buf, size_t len)
{
    size_t n = len < in->n ? len : in->n;

    memcpy(buf, in->p, n);
    memset((uint8_t *)buf + n, 0, len - n);
    in->p += n;
    in->n -= n;
}

static void fw_abort(const char *what)
{
    fprintf(stderr, "fuzz_world: %s\n", what);
    abort();
}

uint64_t fw_va(uint8_t sel, uint32_t off)
{
    return FW_IOVA + FW_REGION_OFF +
           (uint64_t)(sel % FW_NR_REGIONS) * FW_REGION_LEN + off;
}

uint32_t fw_key(const Fw *w, int node, uint8_t sel)
{
    return w->key[node][sel % FW_NR_KEYS];
}

SimQp *fw_qp(const Fw *w, int node, uint8_t sel)
{
    return w->qp[node][sel % FW_NR_QPS];
}

static void fw_modify(SimQp *q, uint8_t state, uint32_t access)
{
    struct kite_roce_qp_attr a;

    memset(&a, 0, sizeof(a));
    a.state = state;
    a.access = access;
    a.qkey = FW_QKEY;
    kite_roce_qp_modify(q->qp, &a, KITE_QP_ATTR_STATE |
                        (state == KITE_QPS_INIT ?
                         KITE_QP_ATTR_ACCESS_FLAGS | KITE_QP_ATTR_QKEY : 0));
}

/* UD-type QP (UD, GSI) RESET -> RTS (or only -> RTR). */
static void fw_ud_up(SimQp *q, bool rtr_only)
{
    struct kite_roce_qp_attr a;

    fw_modify(q, KITE_QPS_INIT, 0);
    fw_modify(q, KITE_QPS_RTR, 0);
    if (rtr_only) {
        return;
    }
    memset(&a, 0, sizeof(a));
    a.state = KITE_QPS_RTS;
    a.sq_psn = 0x42;
    kite_roce_qp_modify(q->qp, &a, KITE_QP_ATTR_STATE | KITE_QP_ATTR_SQ_PSN);
}

static void fw_mrs(Fw *w, int i)
{
    static const uint32_t access[FW_NR_REGIONS] = {
        [FW_R_ALL] = ALL_ACCESS,
        [FW_R_LW] = KITE_ACCESS_LOCAL_WRITE,
        [FW_R_RR] = KITE_ACCESS_REMOTE_READ,
        [FW_R_RW] = KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE,
        [FW_R_PDB] = ALL_ACCESS,
    };
    static uint8_t pattern[FW_NR_REGIONS * FW_REGION_LEN + 2];
    SimNode *n = &w->s.node[i];
    unsigned r, j;

    /* Every region's contents differ (node, region), made once. */
    if (!pattern[1]) {
        for (j = 0; j < sizeof(pattern); j++) {
            pattern[j] = (uint8_t)(j * 13 + j / 251 + 1);
        }
    }
    memset(n->mem, FW_CANARY, FW_MEM_SIZE);
    for (r = 0; r < FW_NR_REGIONS; r++) {
        uint32_t off = FW_REGION_OFF + r * FW_REGION_LEN;

        memcpy(n->mem + off, pattern + r * FW_REGION_LEN / 2 + i,
               FW_REGION_LEN);
        w->key[i][r] = sim_reg_mr(n, r == FW_R_PDB ? FW_PD_B : FW_PD_A,
                                  fw_va((uint8_t)r, 0), FW_REGION_LEN,
                                  access[r], off);
    }
    w->key[i][FW_K_FR] = sim_alloc_mr(n, FW_PD_A, 4);
    w->key[i][FW_K_MW1] = sim_alloc_mw(n, FW_PD_A, SIM_MW_1);
    w->key[i][FW_K_MW2] = sim_alloc_mw(n, FW_PD_A, SIM_MW_2);
}

static void fw_qps(Fw *w, int i)
{
    SimNode *n = &w->s.node[i];
    uint8_t cq_log = w->cfg & FW_CFG_SMALL_CQ ? 4 : 8;
    unsigned k;

    w->scq[i] = sim_create_cq(n, cq_log);
    w->rcq[i] = sim_create_cq(n, cq_log);
    for (k = 0; k < FW_NR_QPS; k++) {
        uint8_t type = KITE_QPT_RC;
        uint32_t pdn = FW_PD_A, qpn;

        if (k == FW_Q_UC) {
            type = KITE_QPT_UC;
        } else if (k == FW_Q_UD || k == FW_Q_UD_RTR) {
            type = KITE_QPT_UD;
        } else if (k == FW_Q_GSI) {
            type = KITE_QPT_GSI;
        }
        if (k == FW_Q_RC_PDB || k == FW_Q_UD_RTR) {
            pdn = FW_PD_B;
        }
        qpn = sim_create_qp(n, type, pdn, w->scq[i], w->rcq[i],
                            SQ_LOG_DEPTH, SQ_LOG_STRIDE, RQ_LOG_DEPTH,
                            RQ_LOG_STRIDE, k == FW_Q_UC);
        w->qp[i][k] = sim_qp(n, qpn);
        if (k == FW_Q_GSI) {
            /* The GSI QP is QP 1, as the device model creates it. */
            SimQp *q = w->qp[i][k];

            kite_roce_qp_destroy(q->qp);
            q->cfg.qpn = KITE_GSI_QPN;
            q->qp = kite_roce_qp_create(n->e, &q->cfg);
            if (!q->qp) {
                fw_abort("cannot create the GSI QP");
            }
        }
    }
}

/* Connect QP @ka of node @a and QP @kb of node @b (@b_rtr: @b stays RTR). */
static void fw_connect(Fw *w, int a, unsigned ka, int b, unsigned kb,
                       bool b_rtr)
{
    static const uint32_t remote[4] = {
        ALL_ACCESS,
        ALL_ACCESS & ~KITE_ACCESS_REMOTE_ATOMIC,
        KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_READ,
        KITE_ACCESS_LOCAL_WRITE,
    };
    SimConnParams p;

    sim_default_params(&p);
    p.path_mtu = 1 + (w->cfg & FW_CFG_MTU_MASK) % 5;
    p.ipv6 = w->cfg & FW_CFG_IPV6;
    /* Bounded retries: a world with a dead peer must still go idle. */
    p.timeout = 8;
    p.retry_cnt = 2;
    p.rnr_retry = 2;
    p.max_rd_atomic = 4;
    p.max_dest_rd_atomic = 4;
    p.access_a = p.access_b =
        remote[(w->cfg & FW_CFG_ACCESS_MASK) >> FW_CFG_ACCESS_SHIFT];
    p.b_stays_rtr = b_rtr;
    sim_connect(&w->s, a, w->qp[a][ka]->cfg.qpn, b, w->qp[b][kb]->cfg.qpn,
                &p);
}

static void fw_post_recvs(Fw *w, int i, unsigned k)
{
    SimQp *q = w->qp[i][k];
    uint32_t *key = w->key[i];
    SimSge one = { fw_va(FW_R_ALL, 0x100 * k), 4096, key[FW_K_ALL] };
    SimSge two[2] = {
        { fw_va(FW_R_LW, 0x100 * k), 700, key[FW_K_LW] },
        { fw_va(FW_R_RW, 0x100 * k), 3000, key[FW_K_RW] },
    };
    SimSge pdb = { fw_va(FW_R_PDB, 0x100 * k), 2048, key[FW_K_PDB] };
    SimSge rr = { fw_va(FW_R_RR, 0), 64, key[FW_K_RR] };

    sim_post_recv_q(q, 1, &one);
    sim_post_recv_q(q, 2, two);
    sim_post_recv_q(q, 1, &pdb);
    sim_post_recv_q(q, 1, &rr);
    sim_post_recv_q(q, 1, &one);
}

/* Sends on node 0's live QPs, transmitted and lost: in flight. */
static void fw_outstanding(Fw *w)
{
    static const uint8_t ops[] = {
        KITE_WQE_SEND, KITE_WQE_WRITE_IMM, KITE_WQE_READ, KITE_WQE_CMP_SWP,
        KITE_WQE_FETCH_ADD, KITE_WQE_WRITE,
    };
    SimNode *n = &w->s.node[0];
    unsigned j, k;

    for (k = 0; k < FW_NR_QPS; k++) {
        SimQp *q = w->qp[0][k];
        uint8_t st = kite_roce_qp_state(q->qp);

        if (st != KITE_QPS_RTS || k == FW_Q_LOOP_B) {
            continue;
        }
        for (j = 0; j < sizeof(ops); j++) {
            SimWr wr;

            memset(&wr, 0, sizeof(wr));
            wr.opcode = ops[j];
            wr.flags = KITE_WQE_F_SIGNALED;
            wr.num_sge = 1;
            wr.sge[0].addr = fw_va(FW_R_ALL, 0x100 * j);
            wr.sge[0].length = 300 + 700 * j;
            wr.sge[0].lkey = w->key[0][FW_K_ALL];
            wr.raddr = fw_va(FW_R_ALL, 0x800);
            wr.rkey = w->key[1][FW_K_ALL];
            if (ops[j] == KITE_WQE_CMP_SWP || ops[j] == KITE_WQE_FETCH_ADD) {
                wr.sge[0].length = 8;
                wr.swap_add = 5;
            }
            if (q->cfg.type == KITE_QPT_UD || q->cfg.type == KITE_QPT_GSI) {
                if (ops[j] != KITE_WQE_SEND) {
                    continue;
                }
                sim_ud_av(&w->s, 1, &wr.av, 0);
                wr.remote_qpn = w->qp[1][k]->cfg.qpn;
                wr.remote_qkey = FW_QKEY;
            } else if (q->cfg.type == KITE_QPT_UC &&
                       (ops[j] == KITE_WQE_READ ||
                        ops[j] == KITE_WQE_CMP_SWP ||
                        ops[j] == KITE_WQE_FETCH_ADD)) {
                continue;
            }
            sim_write_send_q(q, &wr);
        }
        kite_roce_sq_doorbell(q->qp, q->sq_pi);
    }
    w->s.drop_all = true;
    kite_roce_run(n->e, 1000);
    n->kicked = false;
    w->s.drop_all = false;
}

void fw_init(Fw *w, uint8_t cfg)
{
    int i;
    unsigned k;

    memset(w, 0, sizeof(*w));
    w->cfg = cfg;
    sim_init(&w->s, 2, FW_MEM_SIZE, 1);
    for (i = 0; i < 2; i++) {
        SimNode *n = &w->s.node[i];

        if (cfg & FW_CFG_IPV6) {
            /* fd00::(i + 1) */
            memset(n->gid, 0, sizeof(n->gid));
            n->gid[0] = 0xfd;
            n->gid[15] = (uint8_t)(i + 1);
        }
        fw_mrs(w, i);
        fw_qps(w, i);
        fw_ud_up(w->qp[i][FW_Q_UD], false);
        fw_ud_up(w->qp[i][FW_Q_GSI], false);
        fw_ud_up(w->qp[i][FW_Q_UD_RTR], i == 0);
        fw_connect(w, i, FW_Q_LOOP_A, i, FW_Q_LOOP_B, false);
    }
    for (k = FW_Q_RC; k < FW_NR_QPS; k++) {
        if (k == FW_Q_RC || k == FW_Q_UC || k == FW_Q_RC_ERR ||
            k == FW_Q_RC_SQD || k == FW_Q_RC_PDB) {
            fw_connect(w, 0, k, 1, k, false);
        }
    }
    /* Node 1 in RTS, node 0 left in RTR. */
    fw_connect(w, 1, FW_Q_RC_RTR, 0, FW_Q_RC_RTR, true);
    fw_modify(w->qp[0][FW_Q_RC_INIT], KITE_QPS_INIT, ALL_ACCESS);
    fw_modify(w->qp[1][FW_Q_RC_INIT], KITE_QPS_INIT, ALL_ACCESS);
    fw_modify(w->qp[0][FW_Q_RC_ERR], KITE_QPS_ERR, 0);
    fw_modify(w->qp[0][FW_Q_RC_SQD], KITE_QPS_SQD, 0);
    for (i = 0; i < 2; i++) {
        for (k = 0; k < FW_NR_QPS; k++) {
            if (kite_roce_qp_state(w->qp[i][k]->qp) != KITE_QPS_RESET) {
                fw_post_recvs(w, i, k);
            }
        }
    }
    if (cfg & FW_CFG_OUTSTANDING) {
        fw_outstanding(w);
    }
    memcpy(w->rr_copy, w->s.node[0].mem + FW_REGION_OFF +
           FW_R_RR * FW_REGION_LEN, FW_REGION_LEN);
}

void fw_free(Fw *w)
{
    sim_free(&w->s);
}

void fw_drain(Fw *w)
{
    struct kite_cqe c;
    int i;

    for (i = 0; i < 2; i++) {
        while (sim_poll_cq(&w->s.node[i], w->scq[i], &c)) {
        }
        while (sim_poll_cq(&w->s.node[i], w->rcq[i], &c)) {
        }
    }
}

void fw_settle_and_check(Fw *w)
{
    const uint32_t lo = FW_REGION_OFF;
    const uint32_t hi = FW_REGION_OFF + FW_NR_REGIONS * FW_REGION_LEN;
    static uint8_t canary[FW_MEM_SIZE];
    uint64_t steps;
    int i;

    if (canary[0] != FW_CANARY) {
        memset(canary, FW_CANARY, sizeof(canary));
    }
    steps = sim_run(&w->s, FW_IDLE_STEPS);
    fw_drain(w);
    if (steps >= FW_IDLE_STEPS) {
        fw_abort("the engines did not go idle");
    }
    for (i = 0; i < 2; i++) {
        const SimNode *n = &w->s.node[i];

        /*
         * A fast registration may map any page of the node's memory, as
         * the device model lets a guest map any page of its own: after
         * one the canary proves nothing.
         */
        if (n->mem_ops) {
            continue;
        }
        if (memcmp(n->mem, canary, lo) ||
            memcmp(n->mem + hi, canary, FW_MEM_SIZE - hi)) {
            fw_abort("memory outside every MR was written");
        }
        if (i == 0 && memcmp(w->rr_copy, n->mem + lo +
                             FW_R_RR * FW_REGION_LEN, FW_REGION_LEN)) {
            fw_abort("the remote-read-only region was written");
        }
    }
}

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

void fw_fix_frame(uint8_t *f, size_t len)
{
    uint8_t *ip = f + KITE_ETH_HLEN;
    size_t ihl, total, j;
    uint32_t sum = 0, icrc;

    if (len < KITE_ETH_HLEN + 40) {
        return;
    }
    if (be16(f + 12) == 0x0800) {
        ihl = (size_t)(ip[0] & 0xf) * 4;
        total = be16(ip + 2);
        if (ihl < 20) {
            return;
        }
        ip[10] = ip[11] = 0;
        for (j = 0; j + 1 < ihl && KITE_ETH_HLEN + j + 1 < len; j += 2) {
            sum += be16(ip + j);
        }
        while (sum >> 16) {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        ip[10] = (uint8_t)(~sum >> 8);
        ip[11] = (uint8_t)~sum;
    } else if (be16(f + 12) == 0x86dd) {
        total = 40u + be16(ip + 4);
    } else {
        return;
    }
    if (total < 40 + KITE_ICRC_LEN || KITE_ETH_HLEN + total > len) {
        return;
    }
    icrc = kite_roce_icrc(ip, total - KITE_ICRC_LEN);
    for (j = 0; j < KITE_ICRC_LEN; j++) {
        ip[total - KITE_ICRC_LEN + j] = (uint8_t)(icrc >> (8 * j));
    }
}

void fw_address_frame(const Fw *w, uint8_t *f, size_t len)
{
    const SimNode *a = &w->s.node[0], *b = &w->s.node[1];
    uint8_t *ip = f + KITE_ETH_HLEN;

    if (len < KITE_ETH_HLEN + 40) {
        return;
    }
    memcpy(f, a->mac, 6);
    memcpy(f + 6, b->mac, 6);
    if (be16(f + 12) == 0x0800) {
        memcpy(ip + 12, b->gid + 12, 4);
        memcpy(ip + 16, a->gid + 12, 4);
    } else if (be16(f + 12) == 0x86dd) {
        memcpy(ip + 8, b->gid, 16);
        memcpy(ip + 24, a->gid, 16);
    }
}
