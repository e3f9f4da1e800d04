/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 transport engine: the interface between the engine and its
 * host (the QEMU device glue, or a host test harness).
 *
 * The engine is plain C99 with no QEMU dependency. It owns the transport
 * state of every QP (PSNs, retransmission, responder resources) and turns
 * SQ WQEs into RoCEv2 frames and received frames into memory writes,
 * responses and completions. Everything outside the transport goes through
 * struct kite_roce_ops: memory access through MR keys, WQE fetch, CQE
 * posting, async events, frame transmission, time and per-QP timers.
 *
 * Threading: none. The host calls every entry point from one thread (QEMU:
 * with the BQL held) and never re-enters the engine from inside a callback;
 * callbacks may not call back into the engine (use ops->kick to ask for a
 * later kite_roce_run()). The queries that change nothing (the QP getters,
 * kite_roce_qp_find(), kite_roce_qp_host(), the counters and
 * kite_roce_frame_peek()) are the exception: they may be called anywhere.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_ROCE_H
#define KITE_ROCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kite/kite_hw.h"

typedef struct KiteRoce KiteRoce;       /* one per port */
typedef struct KiteRoceQp KiteRoceQp;   /* transport state of one QP */

#define KITE_ROCE_TIMER_OFF     UINT64_MAX
/* qp_event() type for a device-initiated state change. */
#define KITE_ROCE_EVT_STATE     0xff

struct kite_roce_ops {
    /*
     * Copy @len bytes between @buf and the memory that MR @key maps at
     * @va, checking in this order: the key exists, belongs to PD @pdn,
     * covers [va, va + len), and grants every KITE_ACCESS_* bit in @access
     * (0 for a plain local read). @write: buf -> memory. Returns
     * KITE_CQE_SUCCESS, KITE_CQE_LOC_PROT_ERR (key, PD, bounds),
     * KITE_CQE_LOC_ACCESS_ERR (access bits) or KITE_CQE_GENERAL_ERR (the
     * memory could not be accessed). @len 0 only checks the key and PD.
     * Nothing is written unless the whole check passes. @qp is the host
     * QP doing the access (a type-2B window accepts only the QP it is
     * bound to); a key naming a window is valid only for remote access
     * (a KITE_ACCESS_REMOTE_* bit in @access).
     */
    uint8_t (*mem_rw)(void *opaque, void *qp, uint32_t pdn, uint32_t key,
                      uint32_t access, uint64_t va, void *buf, uint32_t len,
                      bool write);
    /*
     * Optional (NULL: the engine reads with mem_rw and CRCs each frame
     * whole).
     * A local read as mem_rw(..., @buf, @len, false) with the same checks
     * and results that on success also advances @crc, a raw CRC-32 state
     * (kite_roce_crc32()), over the bytes read: a host with the memory
     * mapped can fold the CRC into the copy (kite_roce_crc32_copy()), so
     * that the engine does not read the frame's payload again for its
     * ICRC. *@crc is undefined after a failure.
     */
    uint8_t (*mem_read_crc)(void *opaque, void *qp, uint32_t pdn,
                            uint32_t key, uint32_t access, uint64_t va,
                            void *buf, uint32_t len, uint32_t *crc);
    /*
     * Optional (NULL: these opcodes complete with KITE_CQE_LOC_QP_OP_ERR).
     * Execute the memory-management WQE @wqe (@len bytes: its header and
     * segment as read from the SQ; opcode KITE_WQE_LOCAL_INV, _REG_MR or
     * _BIND_MW) for QP @qp of PD @pdn, when the engine reaches it in SQ
     * order. Returns the CQE status: KITE_CQE_SUCCESS, _LOC_QP_OP_ERR,
     * _LOC_PROT_ERR, _MW_BIND_ERR or _GENERAL_ERR.
     */
    uint8_t (*mem_op)(void *opaque, void *qp, uint32_t pdn, const void *wqe,
                      uint32_t len);
    /*
     * Optional (NULL: every received SEND_INV fails as below). A SEND_INV
     * for responder QP @qp of PD @pdn has arrived: invalidate @rkey.
     * KITE_CQE_SUCCESS, or KITE_CQE_REM_INV_REQ_ERR when the key may not
     * be invalidated (the responder then NAKs an invalid request).
     */
    uint8_t (*remote_inv)(void *opaque, void *qp, uint32_t pdn,
                          uint32_t rkey);
    /*
     * Per-QP callbacks get @qp, the host pointer of the QP's
     * kite_roce_qp_cfg, so the host needs no QP number lookup.
     *
     * Read @len bytes (the stride) of WQE slot @slot of the SQ (@rq false)
     * or RQ of QP @qp. false: the ring cannot be read (the engine moves
     * the QP to ERR and reports KITE_EVT_QP_FATAL).
     */
    bool (*wqe_read)(void *opaque, void *qp, bool rq, uint32_t slot,
                     void *buf, uint32_t len);
    /*
     * Optional (NULL: a QP created with kite_roce_qp_cfg.srq never finds a
     * receive). Take the next WQE of the shared receive queue QP @qp
     * receives from: copy its @len bytes (2^rq_log_stride) to @buf and its
     * slot, which the receive's CQE reports, to *@slot. The WQE is the
     * QP's from then on. false: the SRQ holds no WQE (or is in error); the
     * engine handles it as an empty RQ (RNR NAK, UD drop).
     */
    bool (*srq_take)(void *opaque, void *qp, void *buf, uint32_t len,
                     uint16_t *slot);
    /*
     * Write @cqe (host order fields in little-endian ABI layout, flags
     * without the phase bit) to CQ @cqn. The host owns the ring, phase,
     * arming, completion events and overflow. false: the CQ is in error or
     * overflowed (the engine moves the QP to ERR, KITE_EVT_QP_FATAL).
     */
    bool (*cq_post)(void *opaque, uint32_t cqn, const struct kite_cqe *cqe);
    /*
     * Async event @type (KITE_EVT_QP_FATAL, _REQ_ERR, _ACCESS_ERR,
     * _COMM_EST, _QP_LAST_WQE) for QP @qp. A device-initiated state
     * change (ERR, SQE) is reported here with @type = KITE_ROCE_EVT_STATE
     * before any event or completion it causes, so the host can update
     * what QUERY_QP returns from kite_roce_qp_state().
     */
    void (*qp_event)(void *opaque, void *qp, uint8_t type);
    /* Send one complete Ethernet frame (the host may loop it back). */
    void (*transmit)(void *opaque, const uint8_t *frame, size_t len);
    /*
     * Optional (NULL: always). false while the port cannot take another
     * frame (its link is backpressured): kite_roce_run() then sends
     * nothing more (QPs in ERR still flush, they send nothing) and
     * returns true, and the host calls it again once the port has room.
     * A NIC's transmit pipeline stalls on a full port rather than drop
     * its own frames, which go-back-N would resend.
     */
    bool (*tx_ready)(void *opaque);
    /* Monotonic time in nanoseconds (QEMU: QEMU_CLOCK_VIRTUAL). */
    uint64_t (*now_ns)(void *opaque);
    /*
     * Arm QP @qp's one timer to fire at @deadline_ns (replacing any earlier
     * deadline), or cancel it with KITE_ROCE_TIMER_OFF. When it fires the
     * host calls kite_roce_qp_timer().
     */
    void (*timer_mod)(void *opaque, void *qp, uint64_t deadline_ns);
    /* The engine has send work: call kite_roce_run() soon (not re-entrant). */
    void (*kick)(void *opaque);
    /*
     * true when @gid (16 bytes, IPv4-mapped for IPv4) is one of this port's
     * GIDs: a RoCEv2 frame to any other IP address is not for the engine.
     */
    bool (*gid_is_local)(void *opaque, const uint8_t *gid);
    /*
     * Optional (NULL: UD sends complete with KITE_CQE_LOC_QP_OP_ERR). Copy
     * entry @index of the port's GID table (16 bytes, IPv4-mapped for
     * IPv4) to @gid; false when the entry is not valid. Used for the
     * source GID of UD sends, whose address vector names sgid_index.
     */
    bool (*gid_get)(void *opaque, uint8_t index, uint8_t *gid);
};

/* Fixed at CREATE_QP. */
struct kite_roce_qp_cfg {
    void *host;                 /* the host's QP: passed to its callbacks */
    uint32_t qpn;               /* unique among the engine's QPs */
    uint8_t type;               /* enum kite_qp_type */
    bool sig_all;               /* KITE_QP_FLAG_SIG_ALL */
    /*
     * KITE_QP_FLAG_SRQ: receives come from ops->srq_take(), rq_log_depth
     * is 0 and rq_log_stride is the SRQ's WQE stride.
     */
    bool srq;
    uint32_t pdn;
    uint32_t send_cqn;
    uint32_t recv_cqn;
    uint8_t sq_log_depth, sq_log_stride;
    uint8_t rq_log_depth, rq_log_stride;
};

/* The resolved path of an RC/UC QP (or of one UD send), host order. */
struct kite_roce_path {
    uint8_t smac[6];            /* the port's MAC */
    uint8_t dmac[6];
    uint8_t sgid[16];           /* from the GID table; v4-mapped for IPv4 */
    uint8_t dgid[16];
    bool ipv6;
    uint8_t hop_limit;
    uint8_t traffic_class;
    uint32_t flow_label;        /* 20 bits */
};

/*
 * Attributes of MODIFY_QP in host order. The host has already checked the
 * transition and the values (kite_qp.c); the engine applies the fields
 * whose KITE_QP_ATTR_* bit is in @mask and the state change's effects.
 */
struct kite_roce_qp_attr {
    uint8_t state;              /* enum kite_qp_state */
    uint8_t path_mtu;           /* enum kite_mtu */
    uint8_t timeout;            /* 4.096 us << timeout; 0 = no timer */
    uint8_t retry_cnt;          /* 0..7 */
    uint8_t rnr_retry;          /* 0..7, 7 = infinite */
    uint8_t min_rnr_timer;      /* code put in our RNR NAKs */
    uint8_t max_rd_atomic;      /* READ/atomic WQEs in flight */
    uint8_t max_dest_rd_atomic; /* responder resources */
    uint32_t access;            /* KITE_ACCESS_REMOTE_* the QP accepts */
    uint32_t qkey;
    uint32_t sq_psn;
    uint32_t rq_psn;
    uint32_t dest_qpn;
    struct kite_roce_path path; /* with KITE_QP_ATTR_AV */
};

/* Counters, per port and per QP (the QP set leaves icrc_errors etc. 0). */
struct kite_roce_counters {
    uint64_t tx_packets, tx_bytes;
    uint64_t rx_packets, rx_bytes;
    uint64_t retransmits;       /* packets sent again */
    uint64_t timeouts;          /* retransmit timer expiries */
    uint64_t early_retransmits; /* go-back-N before the timeout (RTO) */
    uint64_t naks_sent, naks_rcvd;          /* NAKs other than RNR */
    uint64_t rnr_naks_sent, rnr_naks_rcvd;
    uint64_t dup_requests;      /* duplicate request packets received */
    uint64_t icrc_errors;       /* port only */
    uint64_t rx_dropped;        /* port only: malformed, unknown QP, state */
    /*
     * Port only: copies of multicast datagrams delivered to an attached
     * QP, and copies one QP dropped (no receive WQE, Q_Key, state; also
     * counted in rx_dropped).
     */
    uint64_t mcast_rx, mcast_dropped;
};

/* Engine lifetime. The port starts with no MAC and MTU 1024 (path). */
KiteRoce *kite_roce_new(const struct kite_roce_ops *ops, void *opaque);
void kite_roce_free(KiteRoce *e);
/* The port's MAC and Ethernet MTU (SET_PORT, reset). */
void kite_roce_set_port(KiteRoce *e, const uint8_t *mac, uint32_t eth_mtu);

/*
 * QP lifetime: created in RESET. NULL when the configuration is out of
 * range, the QP number is taken or memory runs out.
 */
KiteRoceQp *kite_roce_qp_create(KiteRoce *e,
                                const struct kite_roce_qp_cfg *cfg);
/* Drops all state and cancels the timer; writes no completions. */
void kite_roce_qp_destroy(KiteRoceQp *qp);
/*
 * Before DESTROY_QP: a QP on an SRQ completes the SRQ WQE it holds (if
 * any) with KITE_CQE_WR_FLUSH_ERR, so the host can reuse its slot.
 */
void kite_roce_qp_srq_return(KiteRoceQp *qp);
/*
 * A device-initiated move to ERR with KITE_EVT_QP_FATAL, the WQEs flushed
 * by the next run (the SRQ the QP receives from failed). A QP in RESET
 * holds nothing and stays.
 */
void kite_roce_qp_fatal(KiteRoceQp *qp);
void kite_roce_qp_modify(KiteRoceQp *qp, const struct kite_roce_qp_attr *a,
                         uint32_t mask);
/*
 * The QP numbered @qpn, or NULL: the engine keeps the index it resolves
 * received packets with.
 */
KiteRoceQp *kite_roce_qp_find(const KiteRoce *e, uint32_t qpn);
/* The host pointer of @qp's configuration. */
void *kite_roce_qp_host(const KiteRoceQp *qp);
/* The QP's state now, including device-initiated ERR/SQE. */
uint8_t kite_roce_qp_state(const KiteRoceQp *qp);
/* The QP's PSNs now (for QUERY_QP). */
uint32_t kite_roce_qp_sq_psn(const KiteRoceQp *qp);
uint32_t kite_roce_qp_rq_psn(const KiteRoceQp *qp);
const struct kite_roce_counters *kite_roce_qp_counters(const KiteRoceQp *qp);
/*
 * true when the QP's RQ (@rq) or SQ has completed every WQE up to its
 * last doorbell: the host may stop looking for new WQEs there. An SRQ
 * QP's RQ is idle when it holds no WQE it took from the SRQ.
 */
bool kite_roce_qp_wq_idle(const KiteRoceQp *qp, bool rq);
const struct kite_roce_counters *kite_roce_counters(const KiteRoce *e);

/*
 * Doorbells: @pi is the new free-running producer index. A value more than
 * the depth ahead of the engine's consumer index moves the QP to ERR with
 * KITE_EVT_QP_FATAL. Send work is done in kite_roce_run().
 */
void kite_roce_sq_doorbell(KiteRoceQp *qp, uint32_t pi);
/* An SRQ QP ignores RQ doorbells. */
void kite_roce_rq_doorbell(KiteRoceQp *qp, uint32_t pi);

/*
 * Do pending send work (new WQEs, retransmissions, responses) for at most
 * @budget packets, or until ops->tx_ready says the port is full. Returns
 * true when work remains (call again later: once the port has room).
 * The plain ACKs that frames received since the last run made due are
 * sent here (a QP's responses go before its requests), one per QP for
 * all of them: a host that runs the engine after handing it a batch of
 * frames coalesces their ACKs.
 */
bool kite_roce_run(KiteRoce *e, unsigned budget);

/*
 * A frame arrived on the port. Returns false when it is not a RoCEv2
 * frame for this port (not IPv4/IPv6 UDP to port 4791, or to an address
 * that gid_is_local() rejects): the host gives it to the Ethernet RX ring.
 * Returns true when the engine consumed it (including dropping it as
 * malformed, with a bad ICRC or for an unknown QP; counted). The frame is
 * parsed once, here. NAKs and atomic responses it causes are sent before
 * this returns; ACKs wait for the next kite_roce_run() (ops->kick asks for
 * it).
 */
bool kite_roce_rx(KiteRoce *e, const uint8_t *frame, size_t len);

/* What kite_roce_frame_peek() reads of a frame's BTH, host order. */
struct kite_roce_frame_info {
    uint8_t opcode;             /* BTH opcode */
    uint32_t dqpn;              /* destination QP */
    uint32_t psn;
    uint8_t dgid[16];           /* destination address, v4-mapped for IPv4 */
};

/*
 * Whether @frame is RoCEv2 as kite_roce_rx() classifies it (IPv4 or IPv6,
 * UDP to port 4791), without checking it further; @fi gets the
 * destination address, and the BTH fields when the frame is long enough
 * for a BTH, else zeros. Touches no
 * engine state, so the host may call it at any time (tracing, fault
 * injection).
 */
bool kite_roce_frame_peek(const uint8_t *frame, size_t len,
                          struct kite_roce_frame_info *fi);

/*
 * How many QP steps kite_roce_run() has tried since kite_roce_new(): it
 * tries only QPs that may have work (tests, profiling).
 */
uint64_t kite_roce_qp_visits(const KiteRoce *e);

/*
 * Multicast groups: UD QP @qp joins (attach) or leaves the group of
 * multicast GID @gid (kite_gid_is_mcast()). The engine holds at most
 * KITE_DEF_MAX_MCAST_GRP groups of at most KITE_DEF_MAX_MCAST_QP QPs; a
 * group exists while a QP is attached. A received datagram to a group's
 * GID and QP number KITE_MCAST_QPN goes to each of its QPs, each taking
 * its own receive WQE. Returns a KITE_STS_* status: _OK; _BAD_PARAM (not
 * a multicast GID, not a UD QP, detach: not attached); _EXISTS (attach:
 * attached already); _NO_RESOURCES (no free group, the group is full).
 * kite_roce_qp_destroy() detaches the QP from every group.
 */
uint8_t kite_roce_mcast_attach(KiteRoceQp *qp, const uint8_t *gid);
uint8_t kite_roce_mcast_detach(KiteRoceQp *qp, const uint8_t *gid);
/* Whether @mac (6 bytes) is the Ethernet address of one of the groups. */
bool kite_roce_mcast_mac(const KiteRoce *e, const uint8_t *mac);
/* Groups that exist now. */
uint32_t kite_roce_mcast_groups(const KiteRoce *e);
/*
 * The host pointers of the QPs attached to group @gid, at most
 * KITE_DEF_MAX_MCAST_QP of them, into @hosts; returns how many (0: no
 * such group). Changes nothing, so it may be called anywhere.
 */
uint32_t kite_roce_mcast_members(KiteRoce *e, const uint8_t *gid,
                                 void **hosts);

/* QP @qp's timer fired. */
void kite_roce_qp_timer(KiteRoceQp *qp);

#endif
