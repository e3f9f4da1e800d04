/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fixed world of the engine's coverage-guided fuzz targets
 * (fuzz_roce_rx.c, fuzz_roce_wqe.c) and of their seed generator
 * (gen_seeds.c): two engines of the host simulation harness
 * (tests/host/roce_sim.[ch]: flat memory as the stub DMA, MR tables with
 * real key, PD, bounds and access checks, rings, a virtual clock and a
 * link). Node 0 is the one under test; it holds a QP of every type in
 * every state, MRs of several access rights in two PDs, receives posted
 * and, when the configuration byte asks, sends outstanding. Node 1 is its
 * peer, with the matching QPs, so responses and retransmissions go
 * somewhere real.
 *
 * Every fuzz input starts with one configuration byte (FW_CFG_*) that the
 * world is built from, then a stream of records the target defines. Both
 * targets and the generator read the stream with fw_get*(), which return
 * zeros once the input is used up, so every byte string is an input.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef FUZZ_WORLD_H
#define FUZZ_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roce_sim.h"

/* Node memory and where the MRs sit in it (iova = FW_IOVA + offset). */
#define FW_MEM_SIZE     (48u << 10)
#define FW_IOVA         0x7f0000000000ull
#define FW_CANARY       0xa5
#define FW_PD_A         3
#define FW_PD_B         4
#define FW_QKEY         0x1234u

/* The memory regions, each covered by one MR of its own access rights. */
enum fw_region {
    FW_R_ALL,           /* every access, PD A */
    FW_R_LW,            /* local write only */
    FW_R_RR,            /* remote read only: nothing may write it */
    FW_R_RW,            /* local and remote write */
    FW_R_PDB,           /* every access, PD B */
    FW_NR_REGIONS,
};
#define FW_REGION_OFF   (4u << 10)
#define FW_REGION_LEN   (8u << 10)

/* Keys a record can name by index (fw_key()). */
enum fw_key {
    FW_K_ALL, FW_K_LW, FW_K_RR, FW_K_RW, FW_K_PDB,
    FW_K_FR,            /* a fast-register MR, free */
    FW_K_MW1,           /* windows, unbound */
    FW_K_MW2,
    FW_NR_KEYS,
};

/* The QPs of each node, by index (fw_qp()). */
enum fw_qp {
    FW_Q_RC,            /* RTS, connected to the peer's FW_Q_RC */
    FW_Q_UC,            /* RTS, connected */
    FW_Q_UD,            /* RTS, Q_Key FW_QKEY */
    FW_Q_GSI,           /* QP 1, RTS */
    FW_Q_RC_RTR,        /* node 0 in RTR (the peer in RTS) */
    FW_Q_RC_INIT,
    FW_Q_RC_RESET,
    FW_Q_RC_ERR,        /* connected, then moved to ERR */
    FW_Q_RC_SQD,        /* connected, then drained to SQD */
    FW_Q_RC_PDB,        /* RTS, connected, in PD B */
    FW_Q_UD_RTR,        /* RTR, PD B */
    FW_Q_LOOP_A,        /* RC, RTS, connected to FW_Q_LOOP_B of its own */
    FW_Q_LOOP_B,        /* node (frames loop back through the port) */
    FW_NR_QPS,
};

/* The configuration byte. */
#define FW_CFG_MTU_MASK     0x07    /* path MTU: 1 + (value % 5) */
#define FW_CFG_IPV6         0x08    /* connected QPs use IPv6 paths */
#define FW_CFG_OUTSTANDING  0x10    /* node 0 has sends in flight */
#define FW_CFG_ACCESS_SHIFT 5       /* 2 bits: the RC QPs' remote access */
#define FW_CFG_ACCESS_MASK  0x60
#define FW_CFG_SMALL_CQ     0x80    /* CQs of 16 entries (overflow) */

/* Steps after which a world that has not gone idle is looping. */
#define FW_IDLE_STEPS       200000ull

typedef struct FwIn {
    const uint8_t *p;
    size_t n;
} FwIn;

typedef struct Fw {
    Sim s;
    uint8_t cfg;
    uint32_t scq[2], rcq[2];
    uint32_t key[2][FW_NR_KEYS];
    SimQp *qp[2][FW_NR_QPS];
    /* Region FW_R_RR of node 0 as built, to check it stays unwritten. */
    uint8_t rr_copy[FW_REGION_LEN];
} Fw;

uint8_t fw_get8(FwIn *in);
uint16_t fw_get16(FwIn *in);
uint32_t fw_get32(FwIn *in);
uint64_t fw_get64(FwIn *in);
/* Up to @len bytes into @buf (zero-filled past the input's end). */
void fw_get(FwIn *in, void *buf, size_t len);

/* Build the world from configuration byte @cfg (deterministic). */
void fw_init(Fw *w, uint8_t cfg);
void fw_free(Fw *w);
uint32_t fw_key(const Fw *w, int node, uint8_t sel);
SimQp *fw_qp(const Fw *w, int node, uint8_t sel);
/* The iova of @off bytes into region @sel (modulo the regions). */
uint64_t fw_va(uint8_t sel, uint32_t off);
/* Drain every CQ of both nodes. */
void fw_drain(Fw *w);
/*
 * Run until idle and check what must hold whatever the input was; a
 * violation aborts (the fuzzer reports a crash): the world goes idle
 * within FW_IDLE_STEPS, memory outside the MRs keeps its canary and
 * node 0's remote-read-only region is unchanged.
 */
void fw_settle_and_check(Fw *w);
/* Fix the IPv4 header checksum (IPv4) and the ICRC of frame @f in place. */
void fw_fix_frame(uint8_t *f, size_t len);
/* Address frame @f to node 0 (MAC and IP destination) from node 1. */
void fw_address_frame(const Fw *w, uint8_t *f, size_t len);

#endif
