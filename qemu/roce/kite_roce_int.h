/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 transport engine: internal state shared by the engine's
 * files (kite_roce_qp.c, kite_roce_recv.c, kite_roce_req.c,
 * kite_roce_resp.c, kite_roce_comp.c). Not part of the host interface.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_ROCE_INT_H
#define KITE_ROCE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kite_limits.h"
#include "kite_roce.h"
#include "kite_roce_abi.h"
#include "kite_roce_pkt.h"

/* Requester limits (roce-facts.md section 5). */
/*
 * Window of unacknowledged PSNs. rxe's 128 is two 64 KiB messages at path
 * MTU 1024: a sender then waits a round trip of two main loops per
 * 128 KiB.
 */
#define KR_MAX_UNACKED_PSNS     1024
/*
 * The requester's congestion window within that (PSNs in flight): a QP
 * starts at KR_CWND_INIT and grows by the PSNs each ACK acknowledges up
 * to ssthresh, then by one per window acknowledged (AIMD). A timeout
 * means the responder or the path is slower than the window (queueing
 * behind it, not only loss): ssthresh becomes half the PSNs in flight
 * and the window starts again at KR_CWND_LOSS; a PSN sequence NAK halves
 * it. Without it a requester with many QPs fills a slow peer's queue
 * with more than its timeout covers, and go-back-N resends all of it.
 */
#define KR_CWND_INIT            16
#define KR_CWND_LOSS            1
#define KR_CWND_MIN_SSTHRESH    2
#define KR_MAX_PKT_PER_ACK      64      /* AckReq at least this often */
#define KR_MAX_SGE              KITE_DEF_MAX_SGE
#define KR_MAX_INLINE           KITE_DEF_MAX_INLINE
/* Cap on both rd_atomic values. */
#define KR_MAX_RD_ATOM          KITE_DEF_MAX_RD_ATOM
/*
 * A READ takes one PSN per response packet and PSNs compare within half
 * the 24-bit space, so a READ may take at most 2^23 - 1 of them: at path
 * MTU 256 that is 256 bytes short of KITE_MAX_MSG_SIZE.
 */
#define KR_MAX_READ_PSNS        ((1u << 23) - 1)
/*
 * The responder's output queue holds, besides one READ or atomic entry
 * per responder resource (and one it cancelled), the ACKs and NAKs
 * between them: 4 entries per resource and a few more cover a requester
 * within max_dest_rd_atomic; what does not fit is recovered by its
 * retries. Rounded up to a power of two, at most KR_RESPQ_MAX.
 */
#define KR_RESPQ_PER_RES        4
#define KR_RESPQ_MIN            4
#define KR_RESPQ_MAX            256
/* An atomic works on one little-endian 64-bit word of memory. */
#define KR_ATOMIC_SIZE          sizeof(__le64)
#define KR_TIMEOUT_BASE_NS      4096ull /* local ACK timeout unit */
/*
 * Early retransmission, as the adaptive retransmission of RoCE NICs: a
 * tail loss (the last packet before the requester waits, or its ACK)
 * leaves nothing behind it for the responder to NAK, and would cost a
 * whole local ACK timeout (67 ms at timeout 14). So a QP whose ACKs stop
 * goes back N after an RTO from the ACK round trips it measured (RFC
 * 6298's estimator: SRTT + KR_EARLY_RTTVAR_K * RTTVAR, at least
 * KR_EARLY_MIN_NS), and again after twice that while no ACK comes, as
 * long as the RTO is shorter than its local ACK timeout. The local ACK
 * timeout then runs as before and alone counts against retry_cnt.
 */
#define KR_EARLY_MIN_NS         1000000ull
#define KR_EARLY_RTTVAR_K       4
/*
 * How long a full port (ops->tx_ready false) may hold back the ACK
 * timeouts of a QP without progress: 8 s, the longest PFC pause a mlx5
 * port honours before its stall prevention (pfc-prevention-tout).
 */
#define KR_TX_STALL_MAX_NS      8000000000ull
/*
 * Buckets of the QP number index at first (a power of two); it doubles
 * whenever it holds more QPs than buckets.
 */
#define KR_QP_HASH_MIN          64

/*
 * Bytes of a memory-management WQE the engine hands to ops->mem_op: the
 * header and the largest of their segments.
 */
#define KR_MEM_WQE_MAX          (sizeof(struct kite_sq_wqe_hdr) + \
                                 sizeof(struct kite_wqe_reg_mr))

/* A parsed send WQE (re-read from the ring whenever it is needed). */
typedef struct KrSendWqe {
    uint8_t opcode;             /* enum kite_wqe_opcode */
    uint8_t flags;              /* KITE_WQE_F_* */
    uint8_t num_sge;
    uint8_t imm[4];             /* wire order */
    uint16_t inline_len;
    uint64_t raddr;
    uint32_t rkey;              /* SEND_INV: the rkey to invalidate */
    uint64_t swap_add;
    uint64_t compare;
    uint32_t len;               /* total bytes */
    /* UD: struct kite_wqe_ud */
    struct kite_av av;          /* as the WQE holds it (little-endian) */
    uint32_t remote_qpn;
    uint32_t remote_qkey;
    struct {
        uint64_t addr;
        uint32_t length;
        uint32_t lkey;
    } sge[KR_MAX_SGE];
    uint8_t inl[KR_MAX_INLINE];
    /* LOCAL_INV, REG_MR, BIND_MW: the WQE as read, for ops->mem_op */
    uint32_t mem_len;
    uint8_t mem[KR_MEM_WQE_MAX];
} KrSendWqe;

/*
 * WQEs the host executes through ops->mem_op: they take no PSN and carry
 * no data, and complete in SQ order once executed.
 */
static inline bool kr_is_mem_op(uint8_t op)
{
    return op == KITE_WQE_LOCAL_INV || op == KITE_WQE_REG_MR ||
           op == KITE_WQE_BIND_MW;
}

/* Per-slot requester state of an SQ WQE. */
typedef struct KrSqSlot {
    uint32_t first_psn;         /* valid once started */
    uint32_t npsn;              /* PSNs the WQE takes (memory ops: 0) */
    uint32_t len;               /* total bytes (CQE byte_len) */
    uint32_t rd_off;            /* READ: bytes placed so far */
    uint8_t opcode;             /* enum kite_wqe_opcode, 0xff unknown */
    uint8_t flags;
    uint8_t status;             /* local error found while sending */
    bool started;               /* memory ops: executed */
    bool parsed;
} KrSqSlot;

/* A saved responder resource (READ or atomic), for duplicates. */
typedef struct KrResource {
    bool valid;
    bool atomic;
    uint32_t first_psn;
    uint32_t npsn;
    uint64_t va;
    uint32_t rkey;
    uint32_t len;
    uint64_t orig;              /* atomic: the original value */
} KrResource;

enum {
    KR_RI_ACK,                  /* ACK or NAK (syndrome) */
    KR_RI_READ,                 /* a READ response stream */
    KR_RI_ATOMIC,               /* ATOMIC_ACKNOWLEDGE */
    KR_RI_NONE,                 /* cancelled: popped without a packet */
};

/* One entry of the responder's ordered output queue. */
typedef struct KrRespItem {
    uint8_t kind;
    uint8_t syndrome;
    uint32_t psn;               /* ACK/NAK/atomic PSN, READ: next PSN */
    uint32_t msn;
    /* READ stream */
    uint32_t res_first_psn;     /* PSN of the resource's first response */
    uint32_t res_npsn;
    uint64_t va;                /* address of the next response's data */
    uint32_t rkey;
    uint32_t left;              /* bytes still to send */
    uint64_t orig;              /* atomic */
} KrRespItem;

/* A multicast group: its GID and Ethernet address, its QPs. */
typedef struct KrMcastGroup {
    uint8_t gid[16];
    uint8_t mac[6];
    uint32_t nqp;               /* 0: the slot is free */
    KiteRoceQp *qp[KITE_DEF_MAX_MCAST_QP];
} KrMcastGroup;

struct KiteRoceQp {
    KiteRoce *e;
    KiteRoceQp *next;           /* engine's list of QPs */
    KiteRoceQp *prev;
    KiteRoceQp *hnext;          /* next in the QP number index bucket */
    /* Ring of QPs that may have work (NULL when not on it). */
    KiteRoceQp *rnext;
    KiteRoceQp *rprev;
    struct kite_roce_qp_cfg cfg;

    /* Attributes. */
    uint8_t state;
    uint8_t path_mtu;
    uint32_t mtu;               /* path MTU in bytes */
    uint8_t timeout;
    uint8_t retry_cnt;
    uint8_t rnr_retry;
    uint8_t min_rnr_timer;
    uint8_t max_rd_atomic;
    uint8_t max_dest_rd_atomic;
    uint32_t access;
    uint32_t qkey;
    uint32_t dest_qpn;
    struct kite_roce_path path;
    uint16_t sport;
    bool comm_est;              /* COMM_EST reported */
    uint32_t nmcast;            /* multicast groups the QP is attached to */

    struct kite_roce_counters cnt;

    /* Send queue. */
    uint32_t sq_depth;
    uint32_t sq_stride;
    KrSqSlot *sq;               /* sq_depth entries */
    uint32_t sq_pi;             /* doorbell value */
    uint32_t sq_ci;             /* oldest WQE not completed */
    uint32_t req_idx;           /* WQE the requester sends next */
    uint32_t sq_psn;            /* PSN of the next packet to send */
    uint32_t una_psn;           /* oldest unacknowledged PSN */
    uint32_t hi_psn;            /* one past the highest PSN ever sent */
    uint32_t rd_inflight;       /* READ/atomic WQEs started, not done */
    uint8_t retry_left;
    uint8_t rnr_left;
    uint64_t tx_stall_ns;       /* timeouts held back by a full port */
    bool rnr_wait;              /* waiting out an RNR NAK's timer */
    bool rnr_nak_seen;          /* RNR NAK at rnr_nak_psn, no progress yet */
    uint32_t rnr_nak_psn;
    bool gap_retried;           /* early retry done for a response gap */
    uint32_t cwnd;              /* congestion window, PSNs (KR_CWND_*) */
    uint32_t ssthresh;          /* slow start below this */
    uint32_t cwnd_acc;          /* PSNs acknowledged toward cwnd + 1 */
    uint64_t timer_deadline;    /* KITE_ROCE_TIMER_OFF when not armed */
    /* ACK round trip, for early retransmission (KR_EARLY_*). */
    uint64_t srtt_ns;           /* smoothed; 0: no sample yet */
    uint64_t rttvar_ns;
    uint64_t rtt_sent_ns;       /* when rtt_psn left */
    uint32_t rtt_psn;           /* PSN being timed, with rtt_pending */
    bool rtt_pending;
    bool early_armed;           /* the armed timer is the early one */
    uint8_t early_shift;        /* RTO doublings since the last progress */

    /* Receive queue and responder. */
    uint32_t rq_depth;
    uint32_t rq_stride;
    uint32_t rq_pi;
    uint32_t rq_ci;
    uint32_t epsn;              /* expected request PSN */
    uint32_t ack_psn;           /* last SEND/WRITE PSN accepted (dup ACKs) */
    uint32_t msn;
    bool nak_sent;              /* drop out-of-order until epsn arrives */
    /* Message in progress (SEND/WRITE FIRST..LAST). */
    bool in_msg;
    uint8_t msg_kind;           /* KITE_OP_SEND_FIRST / KITE_OP_WRITE_FIRST */
    bool msg_drop;              /* UC: drop until the next FIRST/ONLY */
    bool recv_valid;            /* the RQ WQE at rq_ci is loaded */
    /*
     * SRQ QPs: rq_pi - rq_ci (0 or 1) counts the WQE taken from the SRQ
     * and not completed yet; srq_slot is its slot, srq_status what parsing
     * it found (a CQE status).
     */
    uint16_t srq_slot;
    uint8_t srq_status;
    bool last_wqe_sent;         /* KITE_EVT_QP_LAST_WQE reported in ERR */
    uint8_t recv_nsge;
    struct {
        uint64_t addr;
        uint32_t length;
        uint32_t lkey;
    } recv_sge[KR_MAX_SGE];
    uint64_t recv_total;
    uint32_t recv_off;
    uint64_t wr_va;             /* WRITE in progress */
    uint32_t wr_rkey;
    uint32_t wr_len;
    uint32_t wr_off;
    /* Responder resources. */
    KrResource *res;
    uint32_t nres;              /* ring size (0: READ/atomic NAK'd) */
    uint32_t res_next;
    /* Ordered output queue. */
    KrRespItem *respq;          /* RC from RTR on; NULL before */
    uint32_t respq_size;        /* entries, a power of two (0: none) */
    uint32_t respq_head, respq_tail;   /* free-running */
    bool resp_urgent;           /* a NAK or atomic ACK is queued */

    bool flush_pending;         /* ERR: flush newly posted WQEs */

    /* Parsed SQ WQEs (requester's and completer's), by free-running index. */
    KrSendWqe wcache[2];
    uint32_t wcache_idx[2];
    bool wcache_valid[2];
    uint8_t wcache_next;
};

struct KiteRoce {
    const struct kite_roce_ops *ops;
    void *opaque;
    uint8_t mac[6];
    uint32_t eth_mtu;
    struct kite_roce_counters cnt;
    KiteRoceQp *qps;
    /*
     * The QPs that may have work, in round-robin order from the one the
     * next run serves first. Every QP with work is on it; a QP found idle
     * leaves it, so a run costs what the busy QPs do, not what all do.
     */
    KiteRoceQp *ready;
    uint64_t qp_visits;         /* QP steps tried by kite_roce_run() */
    KiteRoceQp **qp_hash;       /* by QP number, qp_hash_size buckets */
    uint32_t qp_hash_size;
    uint32_t nqps;
    KrMcastGroup mcast[KITE_DEF_MAX_MCAST_GRP];
    uint32_t nmcast;            /* groups with a QP */
    uint16_t ip_id;
    /* The frame being built: payloads are read straight into it. */
    uint8_t frame[KITE_ROCE_MAX_FRAME];
    /*
     * kr_frame_begin() wrote the frame's headers, the payload offset (0:
     * it could not), for a host with mem_read_crc; without it the frame
     * is built whole when sent (frame_crc false).
     */
    size_t frame_hdr;
    bool frame_crc;
};

/* kite_roce_qp.c */
void kr_transmit(KiteRoceQp *qp, struct kite_roce_pkt *p, bool retransmit);
uint8_t *kr_frame_payload(KiteRoceQp *qp, const struct kite_roce_pkt *p);
uint8_t *kr_frame_begin(KiteRoceQp *qp, struct kite_roce_pkt *p,
                        uint32_t *crc);
void kr_transmit_end(KiteRoceQp *qp, struct kite_roce_pkt *p, uint32_t crc,
                     bool retransmit);
void kr_pkt_init(KiteRoceQp *qp, struct kite_roce_pkt *p, uint8_t opcode,
                 uint32_t psn);
bool kr_post_cqe(KiteRoceQp *qp, bool rq, uint32_t idx, uint8_t opcode,
                 uint8_t status, uint32_t byte_len, const uint8_t *imm,
                 uint8_t flags);
bool kr_post_cqe_ud(KiteRoceQp *qp, uint32_t idx, uint8_t status,
                    uint32_t byte_len, const struct kite_roce_pkt *p);
bool kr_is_ud(const KiteRoceQp *qp);
void kr_qp_error(KiteRoceQp *qp, uint8_t event);
void kr_flush(KiteRoceQp *qp);
bool kr_req_active(const KiteRoceQp *qp);
bool kr_qp_has_work(KiteRoceQp *qp);
void kr_qp_ready(KiteRoceQp *qp);
bool kr_resp_alloc(KiteRoceQp *qp);
void kr_resp_release(KiteRoceQp *qp);
uint32_t kr_next_pow2(uint32_t v);

/* kite_roce_req.c */
const KrSendWqe *kr_sq_load(KiteRoceQp *qp, uint32_t idx, uint8_t *status);
void kr_sq_uncache(KiteRoceQp *qp, uint32_t idx, bool all);
uint8_t kr_cqe_opcode(uint8_t wqe_opcode);
uint8_t kr_sge_copy(KiteRoceQp *qp, const KrSendWqe *w, uint32_t off,
                    uint8_t *buf, uint32_t len, bool write);
uint8_t kr_sge_read_crc(KiteRoceQp *qp, const KrSendWqe *w, uint32_t off,
                        uint8_t *buf, uint32_t len, uint32_t *crc);
bool kr_req_step(KiteRoceQp *qp);
bool kr_req_has_work(const KiteRoceQp *qp);
void kr_req_reset(KiteRoceQp *qp);

/* kite_roce_resp.c */
void kr_resp_rx(KiteRoceQp *qp, const struct kite_roce_pkt *p);
bool kr_resp_step(KiteRoceQp *qp);
bool kr_resp_has_work(const KiteRoceQp *qp);
void kr_resp_flush_acks(KiteRoceQp *qp);
void kr_resp_reset(KiteRoceQp *qp);
bool kr_resp_ud(KiteRoceQp *qp, const struct kite_roce_pkt *p);

/* kite_roce_mcast.c */
KrMcastGroup *kr_mcast_find(KiteRoce *e, const uint8_t *gid);
void kr_mcast_qp_destroyed(KiteRoceQp *qp);

/* kite_roce_comp.c */
void kr_comp_rx(KiteRoceQp *qp, const struct kite_roce_pkt *p);
void kr_comp_complete_head(KiteRoceQp *qp, uint8_t status);
void kr_comp_timer(KiteRoceQp *qp);
void kr_comp_arm_timer(KiteRoceQp *qp);
void kr_comp_cancel_timer(KiteRoceQp *qp);
void kr_comp_rewind(KiteRoceQp *qp);
void kr_comp_req_error(KiteRoceQp *qp);
void kr_comp_uc_done(KiteRoceQp *qp);
void kr_cwnd_reset(KiteRoceQp *qp);

#endif
