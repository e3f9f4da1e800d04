/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Host simulation harness for the Kite RoCEv2 engine (qemu/roce/): N
 * engines, each with its own flat memory and MR table (mem_rw with real
 * key, PD, bounds and access checks), SQ/RQ/CQ rings in the
 * Documentation/kite/hardware.rst layout, a virtual clock with per-QP
 * timers, and a link between the engines with seedable drop, duplication
 * and reordering. A frame whose destination MAC is the sender's own MAC is
 * looped back to it.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef ROCE_SIM_H
#define ROCE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kite_roce.h"
#include "kite_limits.h"
#include "kite_roce_abi.h"

#define SIM_MAX_NODES   4
#define SIM_MAX_QPS     16
#define SIM_MAX_CQS     16
#define SIM_MAX_MRS     64
#define SIM_MAX_EVENTS  256
#define SIM_QPN_BASE    0x11
/* Frames the link holds before the engines must wait (pacing). */
#define SIM_LINK_QMAX   8

typedef struct Sim Sim;
typedef struct SimNode SimNode;

/*
 * What an MR table slot holds. The fast-register MRs and windows are kept
 * simple: enough to test the engine's memory operations and SEND_INV, not
 * the device model's MR semantics (qemu/kite_mr.c).
 */
enum {
    SIM_MR_REG,                 /* registered by command: always valid */
    SIM_MR_FAST,                /* ALLOC_MR: free until a REG_MR WQE */
    SIM_MW_1,                   /* window type 1 */
    SIM_MW_2,                   /* window type 2B: bound to one QP */
};

typedef struct SimMr {
    bool used;                  /* the slot is allocated */
    bool valid;                 /* valid (MR) or bound (window) */
    uint8_t kind;               /* SIM_MR_* / SIM_MW_* */
    uint32_t key;
    uint32_t pdn;
    uint32_t access;
    uint64_t iova;
    uint64_t len;
    uint64_t off;               /* offset in the node's memory (MRs) */
    uint32_t max_pages;         /* SIM_MR_FAST */
    uint32_t windows;           /* MRs: windows bound to it */
    uint32_t mr_idx;            /* windows: the MR they map through */
    void *qp;                   /* SIM_MW_2: the QP it is bound to */
} SimMr;

typedef struct SimCq {
    bool valid;
    bool error;
    uint8_t log_depth;
    struct kite_cqe *ring;
    uint32_t pi, ci;
} SimCq;

typedef struct SimQp {
    bool valid;
    KiteRoceQp *qp;
    struct kite_roce_qp_cfg cfg;
    uint8_t *sq;
    uint8_t *rq;
    uint32_t sq_pi, rq_pi;
    uint64_t deadline;
} SimQp;

typedef struct SimEvent {
    uint32_t qpn;
    uint8_t type;
} SimEvent;

struct SimNode {
    Sim *sim;
    int id;
    KiteRoce *e;
    uint8_t mac[6];
    uint8_t gid[16];
    uint8_t *mem;
    size_t mem_size;
    SimMr mr[SIM_MAX_MRS];
    SimCq cq[SIM_MAX_CQS];
    SimQp qp[SIM_MAX_QPS];
    bool kicked;
    bool tx_wait;               /* run again once the port has room */
    /* A slow receiver: virtual ns each frame delivered to it takes. */
    uint64_t rx_cost_ns;
    SimEvent events[SIM_MAX_EVENTS];
    unsigned nevents;
    /* mem_rw accounting for tests */
    uint64_t remote_reads;      /* successful REMOTE_READ accesses */
    uint64_t atomic_writes;     /* successful REMOTE_ATOMIC writes */
    uint64_t mem_errors;
    /* mem_op and remote_inv calls (any result) */
    uint64_t mem_ops;
    uint64_t remote_invs;
    uint32_t last_inv_rkey;     /* of the last remote_inv call */
    /* CQEs posted on all CQs when the last mem_op was called (ordering) */
    uint64_t cqes_at_mem_op;
    uint64_t cqes;              /* CQEs posted on all CQs */
    uint8_t last_mem_op[64];    /* the WQE bytes mem_op was last given */
    uint32_t last_mem_op_len;
};

typedef struct SimFrame {
    struct SimFrame *next;
    int dst;
    size_t len;
    uint8_t data[];
} SimFrame;

/* Called for every frame a node transmits, before the link's faults. */
typedef void (*SimTap)(Sim *s, int src, const uint8_t *frame, size_t len,
                       void *arg);

struct Sim {
    SimNode node[SIM_MAX_NODES];
    int n;
    uint64_t now;
    uint64_t rng;
    uint32_t drop_ppm, dup_ppm, reorder_ppm;
    bool drop_all;
    SimTap tap;
    void *tap_arg;
    SimFrame *head, *tail;
    unsigned qlen;
    SimFrame *held;             /* reorder: sent after the next frame */
    /*
     * Pacing by the host (as a device model does): engines run only while
     * the link holds fewer than link_qmax frames (0: SIM_LINK_QMAX), for
     * run_budget packets a run (0: 4).
     */
    unsigned link_qmax;
    unsigned run_budget;
    /*
     * A port that backpressures (0: none): with tx_cap frames on the link
     * ops->tx_ready says false, and a frame sent anyway is dropped and
     * counted in overflowed (QEMU's net queue without a callback).
     */
    unsigned tx_cap;
    /*
     * A peer that reads nothing before this (virtual ns): the link
     * delivers no frame and ops->tx_ready says false, as a QEMU netdev
     * whose peer stopped reading.
     */
    uint64_t pause_until;
    /* figures */
    uint64_t frames, dropped, duplicated, reordered, delivered, not_roce;
    uint64_t overflowed;
};

/* Path and transport settings for sim_connect(). */
typedef struct SimConnParams {
    uint8_t path_mtu;           /* enum kite_mtu */
    uint32_t psn_a, psn_b;      /* start PSNs of each side's requester */
    uint8_t timeout;
    uint8_t retry_cnt;
    uint8_t rnr_retry;
    uint8_t min_rnr_timer;
    uint8_t max_rd_atomic;
    uint8_t max_dest_rd_atomic;
    uint32_t access_a, access_b;    /* QP remote access flags */
    bool b_stays_rtr;           /* leave B in RTR (responder only) */
    bool no_mem_ops;            /* fx_new(): engines without mem_op and
                                   remote_inv (sim_drop_mem_ops()) */
    bool ipv6;                  /* IPv6 path (set the nodes' GIDs first) */
} SimConnParams;

typedef struct SimSge {
    uint64_t addr;
    uint32_t length;
    uint32_t lkey;
} SimSge;

typedef struct SimWr {
    uint8_t opcode;             /* enum kite_wqe_opcode */
    uint8_t flags;              /* KITE_WQE_F_* */
    uint8_t imm[4];
    uint64_t raddr;
    uint32_t rkey;
    uint64_t swap_add, compare;
    unsigned num_sge;
    SimSge sge[KITE_DEF_MAX_SGE];
    uint32_t inv_key;           /* SEND_INV, LOCAL_INV: put in imm_data, LE */
    struct kite_wqe_reg_mr reg_mr;      /* REG_MR segment, ABI layout */
    struct kite_wqe_bind_mw bind_mw;    /* BIND_MW segment, ABI layout */
    const uint8_t *inl;         /* with KITE_WQE_F_INLINE */
    uint16_t inline_len;
    /* UD QPs: struct kite_wqe_ud */
    struct kite_av av;          /* ABI layout: little-endian fields */
    uint32_t remote_qpn;
    uint32_t remote_qkey;
} SimWr;

void sim_init(Sim *s, int nodes, size_t mem_size, uint64_t seed);
void sim_free(Sim *s);
uint64_t sim_rand(Sim *s);

uint32_t sim_reg_mr(SimNode *n, uint32_t pdn, uint64_t iova, uint64_t len,
                    uint32_t access, uint64_t off);
void sim_dereg_mr(SimNode *n, uint32_t key);
/* ALLOC_MR: a fast-register MR of up to @max_pages pages, free. */
uint32_t sim_alloc_mr(SimNode *n, uint32_t pdn, uint32_t max_pages);
/* ALLOC_MW: a window of SIM_MW_1 or SIM_MW_2, unbound. */
uint32_t sim_alloc_mw(SimNode *n, uint32_t pdn, uint8_t kind);
/*
 * Give node @n's engine ops without mem_op and remote_inv, as a host that
 * has no memory operations. Only before the node has QPs.
 */
void sim_drop_mem_ops(SimNode *n);
uint32_t sim_create_cq(SimNode *n, uint8_t log_depth);
uint32_t sim_create_qp(SimNode *n, uint8_t type, uint32_t pdn,
                       uint32_t scq, uint32_t rcq, uint8_t sq_log_depth,
                       uint8_t sq_log_stride, uint8_t rq_log_depth,
                       uint8_t rq_log_stride, bool sig_all);
SimQp *sim_qp(SimNode *n, uint32_t qpn);
/* Destroy a QP (no completions), as DESTROY_QP does. */
void sim_destroy_qp(SimNode *n, uint32_t qpn);
void sim_modify(SimNode *n, uint32_t qpn, const struct kite_roce_qp_attr *a,
                uint32_t mask);
/* Take both QPs RESET -> INIT -> RTR -> RTS connected to each other. */
void sim_connect(Sim *s, int a, uint32_t qpa, int b, uint32_t qpb,
                 const SimConnParams *p);
void sim_default_params(SimConnParams *p);

/* Write a WQE at the producer index (no doorbell); returns its index. */
uint32_t sim_write_send(SimNode *n, uint32_t qpn, const SimWr *wr);
void sim_sq_doorbell(SimNode *n, uint32_t qpn);
/* The SQ slot WQE @idx (free-running) occupies. */
uint8_t *sim_sq_slot(SimQp *q, uint32_t idx);
uint32_t sim_post_send(SimNode *n, uint32_t qpn, const SimWr *wr);
uint32_t sim_post_recv(SimNode *n, uint32_t qpn, unsigned num_sge,
                       const SimSge *sge);
/* The same by QP (a QP whose number sim_qp() does not know: GSI, QP 1). */
uint32_t sim_write_send_q(SimQp *q, const SimWr *wr);
uint32_t sim_post_recv_q(SimQp *q, unsigned num_sge, const SimSge *sge);
bool sim_poll_cq(SimNode *n, uint32_t cqn, struct kite_cqe *cqe);
unsigned sim_cq_count(SimNode *n, uint32_t cqn);

/* Put a frame on the link to node @dst (no faults applied). */
void sim_inject(Sim *s, int dst, const uint8_t *frame, size_t len);
/* One step of work; false when nothing at all is left to do. */
bool sim_step(Sim *s);
/* Step until idle or until @max_steps; returns steps taken. */
uint64_t sim_run(Sim *s, uint64_t max_steps);
bool sim_has_event(SimNode *n, uint32_t qpn, uint8_t type);
/* Fill @av (struct kite_av) for a UD send from @n to node @dst. */
void sim_ud_av(Sim *s, int dst, struct kite_av *av, uint8_t sgid_index);
/* Take a UD QP RESET -> INIT -> RTR -> RTS with Q_Key @qkey. */
void sim_ud_up(SimNode *n, uint32_t qpn, uint32_t qkey);
uint8_t *sim_mem(SimNode *n, uint64_t off);

#endif
