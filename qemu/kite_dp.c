/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: the data path glue.
 *
 * The RoCEv2 transport engine (roce/, plain C without QEMU headers) talks to
 * the device through struct kite_roce_ops; this file implements it:
 * MR access with kite_mr_map() and pci_dma_*, WQE fetch through the SQ/RQ
 * page lists, CQE writing with phase, arming and overflow, QP events on the
 * async EQ, frame transmission (wire fault injection, loopback to the
 * port's own MAC, the netdev), drop injection on receive,
 * QEMU_CLOCK_VIRTUAL time and one QEMUTimer per QP, and a bottom half that
 * runs the engine's send work.
 *
 * The engine is never re-entered: frames that arrive while it runs (a peer
 * on a hub answering synchronously, loopback) wait in the device's receive
 * queue (rxq) and are delivered from a bottom half; guest register and
 * doorbell writes that a DMA of the engine would cause are refused.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/bswap.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "hw/pci/pci.h"
#include "net/net.h"
#include "kite.h"
#include "trace.h"

#define KITE_CQE_SIZE           sizeof(struct kite_cqe)
#define KITE_CQE_FLAGS_OFF      offsetof(struct kite_cqe, flags)
#define KITE_MR_STACK_RANGES    32
/* Smallest page an MR can use: bounds the DMA ranges of one access. */
#define KITE_MR_MIN_PAGE_SHIFT  12
/* xorshift64 needs a non-zero state; wire-seed=0 maps to this one. */
#define KITE_WIRE_SEED_ZERO     0x9e3779b97f4a7c15ull

/* ---- helpers ---------------------------------------------------------- */

/* The CQ numbered @cqn (no owner check: the engine acts for the device). */
static KiteCq *kite_dp_cq(KiteState *s, uint32_t cqn)
{
    if (cqn < KITE_CQ_FIRST || cqn - KITE_CQ_FIRST >= KITE_DEF_MAX_CQ ||
        !s->cq[cqn - KITE_CQ_FIRST].valid) {
        return NULL;
    }
    return &s->cq[cqn - KITE_CQ_FIRST];
}

static KiteFrame *kite_frame_new(const uint8_t *buf, size_t len)
{
    KiteFrame *f = g_malloc(sizeof(*f) + len);

    f->len = len;
    memcpy(f->data, buf, len);
    return f;
}

static void kite_frame_queue_free(KiteFrameQueue *q)
{
    KiteFrame *f;

    while ((f = QSIMPLEQ_FIRST(q))) {
        QSIMPLEQ_REMOVE_HEAD(q, next);
        g_free(f);
    }
}

/* ---- wire fault injection: random draws -------------------------------- */

static uint64_t kite_wire_next(KiteState *s)
{
    uint64_t x = s->wire_rng;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s->wire_rng = x;
    return x;
}

/* true with probability @ppm / 10^6 (no draw when @ppm is 0). */
static bool kite_wire_roll(KiteState *s, uint32_t ppm)
{
    return ppm && kite_wire_next(s) % KITE_WIRE_PPM_MAX < ppm;
}

static void kite_wire_seed(KiteState *s)
{
    s->wire_rng = s->wire_seed ? s->wire_seed : KITE_WIRE_SEED_ZERO;
}

/* ---- receive queue: loopback and deferred frames ----------------------- */

static void kite_rxq_push(KiteState *s, const uint8_t *buf, size_t len,
                          bool loopback)
{
    KiteFrame *f;

    if (s->rxq_len >= KITE_RXQ_MAX) {
        s->cnt.roce_rx_dropped++;
        trace_kite_rxq_full(len);
        return;
    }
    trace_kite_rxq_push(len, loopback);
    f = kite_frame_new(buf, len);
    QSIMPLEQ_INSERT_TAIL(&s->rxq, f, next);
    s->rxq_len++;
    qemu_bh_schedule(s->rxq_bh);
}

/*
 * Delivers the frames queued so far to the port's receive path (the
 * engine, else the Ethernet RX ring). Frames queued meanwhile (answers to
 * loopback traffic) wait for the next run.
 */
static void kite_rxq_bh(void *opaque)
{
    KiteState *s = opaque;
    KiteFrameQueue q = QSIMPLEQ_HEAD_INITIALIZER(q);
    KiteFrame *f;

    QSIMPLEQ_CONCAT(&q, &s->rxq);
    s->rxq_len = 0;
    while ((f = QSIMPLEQ_FIRST(&q))) {
        QSIMPLEQ_REMOVE_HEAD(&q, next);
        if (kite_running(s)) {
            /* Loopback or already past the receive fault stage. */
            s->rxq_delivering = true;
            kite_port_receive(s, f->data, f->len);
            s->rxq_delivering = false;
        }
        g_free(f);
    }
}

/*
 * Receive-side fault injection (wire-rx-drop-ppm) applies to RoCEv2
 * frames that have just arrived from the netdev. Frames delivered from
 * the receive queue (loopback, whose damage is done on transmit, and
 * frames deferred after this stage) are never dropped here; a frame that
 * arrives from the netdev while such a frame is in the engine (roce_depth
 * set) is fresh from the wire and is.
 */
static bool kite_wire_rx_armed(KiteState *s)
{
    return s->wire_rx_drop_ppm && !(s->rxq_delivering && !s->roce_depth);
}

/* true when the RoCEv2 frame @fi is to be dropped as if lost on the wire. */
static bool kite_wire_rx_drop(KiteState *s,
                              const struct kite_roce_frame_info *fi)
{
    if (!kite_wire_roll(s, s->wire_rx_drop_ppm)) {
        return false;
    }
    s->cnt.wire_dropped++;
    trace_kite_wire_rx_drop(fi->opcode, fi->dqpn, fi->psn);
    return true;
}

/*
 * A frame arrived for the port: offered to the engine when the device is
 * READY and the frame is unicast to the port's MAC. true: consumed (by the
 * engine, or queued because the engine is running right now). The glue
 * peeks at the frame only for fault injection and tracing; the engine
 * parses it.
 */
bool kite_dp_rx(KiteState *s, const uint8_t *buf, size_t size)
{
    struct kite_roce_frame_info fi;
    bool armed, trace, roce = false;
    bool consumed;

    if (!kite_running(s) || size < KITE_ETH_HLEN ||
        memcmp(buf, s->mac, sizeof(s->mac))) {
        return false;
    }
    armed = kite_wire_rx_armed(s);
    trace = trace_event_get_state_backends(TRACE_KITE_ROCE_RX);
    if (armed || trace) {
        roce = kite_roce_frame_peek(buf, size, &fi);
    }
    if (armed && roce && kite_wire_rx_drop(s, &fi)) {
        return true;
    }
    if (s->roce_depth) {
        /* A synchronous answer to a frame the engine is sending. */
        kite_rxq_push(s, buf, size, false);
        return true;
    }
    if (trace && roce) {
        trace_kite_roce_rx(size, fi.opcode, fi.dqpn, fi.psn);
    }
    s->roce_depth++;
    consumed = kite_roce_rx(s->roce, buf, size);
    s->roce_depth--;
    return consumed;
}

/* ---- transmit: fault injection, loopback, netdev ----------------------- */

/*
 * One frame leaves the fault stage: to the port's own receive path when it
 * is addressed to the port's MAC, else to the netdev (dropped and counted
 * in eth_tx_errors while the link is down).
 */
static void kite_wire_out(KiteState *s, const uint8_t *frame, size_t len)
{
    if (len >= KITE_ETH_HLEN && !memcmp(frame, s->mac, sizeof(s->mac))) {
        kite_rxq_push(s, frame, len, true);
        return;
    }
    if (!s->link_up) {
        trace_kite_roce_tx_link_down(len);
        s->cnt.eth_tx_errors++;
        return;
    }
    qemu_send_packet(qemu_get_queue(s->nic), frame, len);
}

static void kite_wire_release(KiteState *s)
{
    KiteFrame *f = s->wire_held;

    if (!f) {
        return;
    }
    s->wire_held = NULL;
    timer_del(s->wire_timer);
    trace_kite_wire_release(f->len);
    kite_wire_out(s, f->data, f->len);
    g_free(f);
}

/* Nothing followed the held frame in time: it goes out alone. */
static void kite_wire_timer_cb(void *opaque)
{
    KiteState *s = opaque;

    if (kite_running(s)) {
        kite_wire_release(s);
    }
}

static void kite_dp_transmit(void *opaque, const uint8_t *frame, size_t len)
{
    KiteState *s = opaque;
    struct kite_roce_frame_info fi = { 0 };
    bool faults, roce = false, dup;

    if (!kite_running(s)) {
        return;
    }
    faults = s->wire_drop_ppm || s->wire_dup_ppm || s->wire_reorder_ppm;
    if (faults || trace_event_get_state_backends(TRACE_KITE_ROCE_TX)) {
        roce = kite_roce_frame_peek(frame, len, &fi);
    }
    trace_kite_roce_tx(len, fi.opcode, fi.dqpn, fi.psn);
    if (roce && faults) {
        if (kite_wire_roll(s, s->wire_drop_ppm)) {
            s->cnt.wire_dropped++;
            trace_kite_wire_drop(fi.opcode, fi.dqpn, fi.psn);
            return;
        }
        dup = kite_wire_roll(s, s->wire_dup_ppm);
        if (!s->wire_held && kite_wire_roll(s, s->wire_reorder_ppm)) {
            trace_kite_wire_hold(fi.opcode, fi.dqpn, fi.psn);
            s->wire_held = kite_frame_new(frame, len);
            timer_mod(s->wire_timer,
                      qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                      KITE_WIRE_HOLD_NS);
            return;
        }
        kite_wire_out(s, frame, len);
        if (dup) {
            trace_kite_wire_dup(fi.opcode, fi.dqpn, fi.psn);
            kite_wire_out(s, frame, len);
        }
        kite_wire_release(s);
        return;
    }
    kite_wire_out(s, frame, len);
    /* A non-RoCEv2 frame (never from the engine) does not move a held one. */
}

/* ---- engine callbacks ------------------------------------------------- */

static uint8_t kite_dp_mem_rw(void *opaque, uint32_t pdn, uint32_t key,
                              uint32_t access, uint64_t va, void *buf,
                              uint32_t len, bool write)
{
    KiteState *s = opaque;
    PCIDevice *pci = PCI_DEVICE(s);
    KiteDmaRange stack[KITE_MR_STACK_RANGES], *r = stack;
    unsigned max = (len >> KITE_MR_MIN_PAGE_SHIFT) + 2;
    unsigned n, i;
    uint8_t *p = buf;
    uint8_t st;

    if (!kite_running(s)) {
        return KITE_CQE_GENERAL_ERR;
    }
    if (!len) {
        /* Only the key and the PD are checked. */
        return kite_mr_map(s, key, pdn, 0, va, 0, NULL, 0, &n);
    }
    if (max > KITE_MR_STACK_RANGES) {
        r = g_new(KiteDmaRange, max);
    }
    st = kite_mr_map(s, key, pdn, access, va, len, r, max, &n);
    for (i = 0; st == KITE_CQE_SUCCESS && i < n; i++) {
        MemTxResult res = write ?
            pci_dma_write(pci, r[i].addr, p, r[i].len) :
            pci_dma_read(pci, r[i].addr, p, r[i].len);

        if (res != MEMTX_OK) {
            qemu_log_mask(LOG_GUEST_ERROR, "kite: MR 0x%x: DMA %s of 0x%"
                          PRIx64 " bytes at 0x%" PRIx64 " failed\n", key,
                          write ? "write" : "read", r[i].len, r[i].addr);
            st = KITE_CQE_GENERAL_ERR;
        }
        p += r[i].len;
    }
    if (r != stack) {
        g_free(r);
    }
    return st;
}

static bool kite_dp_wqe_read(void *opaque, void *host, bool rq,
                             uint32_t slot, void *buf, uint32_t len)
{
    KiteState *s = opaque;
    KiteQp *qp = host;
    uint32_t qpn = qp->qpn;
    const KitePbl *pbl;
    uint8_t log_depth, log_stride;
    uint64_t off, dma, contig;
    uint8_t *p = buf;

    if (!kite_running(s)) {
        return false;
    }
    pbl = rq ? &qp->rq : &qp->sq;
    log_depth = rq ? qp->rq_log_depth : qp->sq_log_depth;
    log_stride = rq ? qp->rq_log_stride : qp->sq_log_stride;
    if (len > (1u << log_stride)) {
        return false;
    }
    off = (uint64_t)kite_ring_slot(slot, log_depth) << log_stride;
    /*
     * Strides are at most 512 bytes and pages at least 4 KiB, both powers
     * of two, so a WQE never straddles pages; the loop copes anyway.
     */
    while (len) {
        uint32_t n;

        if (!kite_pbl_translate(s, pbl, off, &dma, &contig)) {
            qemu_log_mask(LOG_GUEST_ERROR, "kite: QP %u %s ring offset 0x%"
                          PRIx64 " not mapped\n", qpn, rq ? "RQ" : "SQ", off);
            return false;
        }
        n = MIN(len, contig);
        if (pci_dma_read(PCI_DEVICE(s), dma, p, n) != MEMTX_OK) {
            qemu_log_mask(LOG_GUEST_ERROR, "kite: QP %u %s WQE at 0x%"
                          PRIx64 " not readable\n", qpn, rq ? "RQ" : "SQ",
                          dma);
            return false;
        }
        p += n;
        off += n;
        len -= n;
    }
    return true;
}

/* The CQ cannot take more CQEs: error state and KITE_EVT_CQ_ERR. */
static void kite_dp_cq_error(KiteState *s, KiteCq *cq, uint32_t cqn,
                             const char *why)
{
    qemu_log_mask(LOG_GUEST_ERROR, "kite: CQ %u %s: CQ in error\n", cqn, why);
    trace_kite_cq_error(cqn, cq->pi, cq->ci);
    cq->error = true;
    kite_eq_post(s, 0, KITE_EVT_CQ_ERR, cqn, 0);
}

static bool kite_dp_cq_post(void *opaque, uint32_t cqn,
                            const struct kite_cqe *c)
{
    KiteState *s = opaque;
    KiteCq *cq = kite_dp_cq(s, cqn);
    struct kite_cqe e;
    uint64_t dma, contig;
    uint32_t slot;
    bool event;

    if (!cq || !kite_running(s) || cq->error) {
        return false;
    }
    if (kite_ring_used(cq->pi, cq->ci) >= (1u << cq->log_depth)) {
        kite_dp_cq_error(s, cq, cqn, "overflow");
        return false;
    }
    /* The engine fills the entry in its little-endian ABI layout. */
    e = *c;
    e.flags = (c->flags & ~KITE_CQE_F_PHASE) |
              (kite_ring_phase(cq->pi, cq->log_depth) ? KITE_CQE_F_PHASE : 0);
    slot = kite_ring_slot(cq->pi, cq->log_depth);
    /* 32-byte entries in pages of at least 4 KiB: never split. */
    if (!kite_pbl_translate(s, &cq->ring, (uint64_t)slot * KITE_CQE_SIZE,
                            &dma, &contig) || contig < KITE_CQE_SIZE) {
        kite_dp_cq_error(s, cq, cqn, "ring not mapped");
        return false;
    }
    /* Bytes 0..30 first, then the flags byte with the phase. */
    if (pci_dma_write(PCI_DEVICE(s), dma, &e, KITE_CQE_FLAGS_OFF) !=
        MEMTX_OK ||
        pci_dma_write(PCI_DEVICE(s), dma + KITE_CQE_FLAGS_OFF, &e.flags, 1) !=
        MEMTX_OK) {
        kite_dp_cq_error(s, cq, cqn, "ring not writable");
        return false;
    }
    trace_kite_cqe(cqn, cq->pi, le32_to_cpu(c->qpn), le16_to_cpu(c->wqe_idx),
                   c->opcode, c->status, le32_to_cpu(c->byte_len));
    cq->pi++;
    switch (cq->arm) {
    case KITE_DB_CQ_ARM_NEXT:
        event = true;
        break;
    case KITE_DB_CQ_ARM_SOLICITED:
        event = (c->flags & KITE_CQE_F_SOLICITED) ||
                c->status != KITE_CQE_SUCCESS;
        break;
    default:
        event = false;
    }
    if (event) {
        cq->arm = 0;
        kite_eq_post(s, cq->eqn, KITE_EVT_COMPLETION, cqn, 0);
    }
    return true;
}

static void kite_dp_qp_event(void *opaque, void *host, uint8_t type)
{
    KiteState *s = opaque;
    KiteQp *qp = host;

    if (!kite_running(s)) {
        return;
    }
    if (type == KITE_ROCE_EVT_STATE) {
        if (qp->eqp) {
            qp->attr.state = kite_roce_qp_state(qp->eqp);
            trace_kite_qp_state(qp->qpn, qp->attr.state);
        }
        return;
    }
    trace_kite_qp_event(qp->qpn, type);
    kite_eq_post(s, 0, type, qp->qpn, 0);
}

static uint64_t kite_dp_now_ns(void *opaque)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static void kite_dp_timer_mod(void *opaque, void *host, uint64_t deadline)
{
    KiteQp *qp = host;

    if (!qp->timer) {
        return;
    }
    if (deadline == KITE_ROCE_TIMER_OFF) {
        timer_del(qp->timer);
    } else {
        timer_mod(qp->timer, MIN(deadline, (uint64_t)INT64_MAX));
    }
}

static void kite_dp_kick(void *opaque)
{
    KiteState *s = opaque;

    qemu_bh_schedule(s->roce_bh);
}

static bool kite_dp_gid_is_local(void *opaque, const uint8_t *gid)
{
    KiteState *s = opaque;
    unsigned i;

    for (i = 0; i < KITE_DEF_MAX_GID; i++) {
        if (s->gid[i].valid &&
            !memcmp(s->gid[i].gid, gid, sizeof(s->gid[i].gid))) {
            return true;
        }
    }
    return false;
}

static bool kite_dp_gid_get(void *opaque, uint8_t index, uint8_t *gid)
{
    KiteState *s = opaque;

    if (index >= KITE_DEF_MAX_GID || !s->gid[index].valid) {
        return false;
    }
    memcpy(gid, s->gid[index].gid, sizeof(s->gid[index].gid));
    return true;
}

static const struct kite_roce_ops kite_dp_ops = {
    .mem_rw = kite_dp_mem_rw,
    .wqe_read = kite_dp_wqe_read,
    .cq_post = kite_dp_cq_post,
    .qp_event = kite_dp_qp_event,
    .transmit = kite_dp_transmit,
    .now_ns = kite_dp_now_ns,
    .timer_mod = kite_dp_timer_mod,
    .kick = kite_dp_kick,
    .gid_is_local = kite_dp_gid_is_local,
    .gid_get = kite_dp_gid_get,
};

/* ---- bottom halves and timers ------------------------------------------ */

static void kite_roce_bh(void *opaque)
{
    KiteState *s = opaque;
    bool more;

    if (!kite_running(s)) {
        return;
    }
    s->roce_depth++;
    more = kite_roce_run(s->roce, KITE_ROCE_BUDGET);
    s->roce_depth--;
    if (more) {
        qemu_bh_schedule(s->roce_bh);
    }
}

static void kite_dp_qp_timer_cb(void *opaque)
{
    KiteQp *qp = opaque;
    KiteState *s = qp->dev;

    if (!qp->valid || !qp->eqp || !kite_running(s)) {
        return;
    }
    s->roce_depth++;
    kite_roce_qp_timer(qp->eqp);
    s->roce_depth--;
}

/* A fatal error hit while the engine was running: stop it now. */
static void kite_dp_stop_bh(void *opaque)
{
    KiteState *s = opaque;

    if (!kite_running(s)) {
        kite_dp_stop(s);
    }
}

/* ---- QP glue ---------------------------------------------------------- */

/*
 * Creates the engine side of a new QP (in RESET) and its timer; false when
 * the engine has no memory for it.
 */
bool kite_dp_qp_create(KiteState *s, KiteQp *qp)
{
    struct kite_roce_qp_cfg cfg = {
        .host = qp,
        .qpn = qp->qpn,
        .type = qp->type,
        .sig_all = qp->flags & KITE_QP_FLAG_SIG_ALL,
        .pdn = qp->pdn,
        .send_cqn = qp->send_cqn,
        .recv_cqn = qp->recv_cqn,
        .sq_log_depth = qp->sq_log_depth,
        .sq_log_stride = qp->sq_log_stride,
        .rq_log_depth = qp->rq_log_depth,
        .rq_log_stride = qp->rq_log_stride,
    };

    qp->dev = s;
    s->roce_depth++;
    qp->eqp = kite_roce_qp_create(s->roce, &cfg);
    s->roce_depth--;
    if (!qp->eqp) {
        return false;
    }
    qp->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, kite_dp_qp_timer_cb, qp);
    return true;
}

/* Drops the engine side of @qp (no completions) and its timer. */
void kite_qp_engine_drop(KiteQp *qp)
{
    KiteState *s = qp->dev;

    if (qp->eqp) {
        assert(!s->roce_depth);
        kite_roce_qp_destroy(qp->eqp);
        qp->eqp = NULL;
    }
    if (qp->timer) {
        timer_free(qp->timer);
        qp->timer = NULL;
    }
}

/* DESTROY_QP: the engine side (with its QP number entry) and the timer. */
void kite_dp_qp_destroy(KiteState *s, KiteQp *qp)
{
    kite_qp_engine_drop(qp);
}

void kite_dp_qp_modify(KiteState *s, KiteQp *qp,
                       const struct kite_qp_attr *a, uint32_t mask,
                       uint8_t next)
{
    struct kite_roce_qp_attr h;

    if (!qp->eqp) {
        return;
    }
    memset(&h, 0, sizeof(h));
    h.state = next;
    h.path_mtu = a->path_mtu;
    h.timeout = a->timeout;
    h.retry_cnt = a->retry_cnt;
    h.rnr_retry = a->rnr_retry;
    h.min_rnr_timer = a->min_rnr_timer;
    h.max_rd_atomic = a->max_rd_atomic;
    h.max_dest_rd_atomic = a->max_dest_rd_atomic;
    h.access = le32_to_cpu(a->access_flags);
    h.qkey = le32_to_cpu(a->qkey);
    h.sq_psn = le32_to_cpu(a->sq_psn);
    h.rq_psn = le32_to_cpu(a->rq_psn);
    h.dest_qpn = le32_to_cpu(a->dest_qpn);
    if (mask & KITE_QP_ATTR_AV) {
        kite_dp_resolve_path(s, &a->av, &h.path);
    }
    s->roce_depth++;
    kite_roce_qp_modify(qp->eqp, &h, mask);
    s->roce_depth--;
}

/*
 * The path of an AV the MODIFY_QP checks accepted: source GID from the GID
 * table, source MAC the port's, the rest from the AV.
 */
void kite_dp_resolve_path(KiteState *s, const struct kite_av *av,
                          struct kite_roce_path *path)
{
    memset(path, 0, sizeof(*path));
    memcpy(path->smac, s->mac, sizeof(path->smac));
    memcpy(path->dmac, av->dmac, sizeof(path->dmac));
    memcpy(path->sgid, s->gid[av->sgid_index].gid, sizeof(path->sgid));
    memcpy(path->dgid, av->dgid, sizeof(path->dgid));
    path->ipv6 = av->net_type == KITE_NET_IPV6;
    path->hop_limit = av->hop_limit;
    path->traffic_class = av->traffic_class;
    path->flow_label = le32_to_cpu(av->flow_label);
}

void kite_dp_sq_doorbell(KiteState *s, KiteQp *qp, uint32_t pi)
{
    if (!qp->eqp) {
        return;
    }
    s->roce_depth++;
    kite_roce_sq_doorbell(qp->eqp, pi);
    s->roce_depth--;
}

void kite_dp_rq_doorbell(KiteState *s, KiteQp *qp, uint32_t pi)
{
    if (!qp->eqp) {
        return;
    }
    s->roce_depth++;
    kite_roce_rq_doorbell(qp->eqp, pi);
    s->roce_depth--;
}

void kite_dp_set_port(KiteState *s)
{
    kite_roce_set_port(s->roce, s->mac, s->eth_mtu);
}

/* ---- lifetime ---------------------------------------------------------- */

/*
 * The data path stops (FATAL, and first thing of a reset): engine QPs and
 * their timers are destroyed, queued and held frames dropped. While the
 * engine is running (a fatal error raised from one of its callbacks) the
 * QPs are destroyed from a bottom half once it has returned.
 */
void kite_dp_stop(KiteState *s)
{
    uint32_t i;

    qemu_bh_cancel(s->roce_bh);
    qemu_bh_cancel(s->rxq_bh);
    kite_frame_queue_free(&s->rxq);
    s->rxq_len = 0;
    timer_del(s->wire_timer);
    g_free(s->wire_held);
    s->wire_held = NULL;
    if (s->roce_depth) {
        qemu_bh_schedule(s->stop_bh);
        return;
    }
    for (i = 0; i < KITE_DEF_MAX_QP; i++) {
        if (s->qp[i].valid) {
            kite_qp_engine_drop(&s->qp[i]);
        }
    }
}

/*
 * Reset: a fresh engine (counters at 0) for the port's MAC and MTU, which
 * the caller has set; the QP table is emptied by kite_admin_reset().
 */
void kite_dp_reset(KiteState *s)
{
    assert(!s->roce_depth);
    qemu_bh_cancel(s->stop_bh);
    kite_dp_stop(s);
    kite_roce_free(s->roce);
    s->roce = kite_roce_new(&kite_dp_ops, s);
    g_assert(s->roce);      /* out of memory, as g_malloc() would abort */
    kite_dp_set_port(s);
}

void kite_dp_init(KiteState *s)
{
    DeviceState *dev = DEVICE(s);

    QSIMPLEQ_INIT(&s->rxq);
    s->roce_bh = qemu_bh_new_guarded(kite_roce_bh, s,
                                     &dev->mem_reentrancy_guard);
    s->rxq_bh = qemu_bh_new_guarded(kite_rxq_bh, s,
                                    &dev->mem_reentrancy_guard);
    s->stop_bh = qemu_bh_new_guarded(kite_dp_stop_bh, s,
                                     &dev->mem_reentrancy_guard);
    s->wire_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, kite_wire_timer_cb, s);
    s->roce = kite_roce_new(&kite_dp_ops, s);
    g_assert(s->roce);
    kite_wire_seed(s);
}

void kite_dp_cleanup(KiteState *s)
{
    uint32_t i;

    for (i = 0; s->qp && i < KITE_DEF_MAX_QP; i++) {
        if (s->qp[i].valid) {
            kite_qp_engine_drop(&s->qp[i]);
        }
    }
    kite_frame_queue_free(&s->rxq);
    g_free(s->wire_held);
    s->wire_held = NULL;
    timer_free(s->wire_timer);
    qemu_bh_delete(s->roce_bh);
    qemu_bh_delete(s->rxq_bh);
    qemu_bh_delete(s->stop_bh);
    kite_roce_free(s->roce);
    s->roce = NULL;
}

/* ---- statistics -------------------------------------------------------- */

void kite_dp_stats(KiteState *s, struct kite_stats *st)
{
    const struct kite_roce_counters *c = kite_roce_counters(s->roce);

    st->roce_tx_packets = cpu_to_le64(c->tx_packets);
    st->roce_rx_packets = cpu_to_le64(c->rx_packets);
    st->roce_retransmits = cpu_to_le64(c->retransmits);
    st->roce_icrc_errors = cpu_to_le64(c->icrc_errors);
    st->roce_tx_bytes = cpu_to_le64(c->tx_bytes);
    st->roce_rx_bytes = cpu_to_le64(c->rx_bytes);
    st->roce_naks_sent = cpu_to_le64(c->naks_sent);
    st->roce_naks_rcvd = cpu_to_le64(c->naks_rcvd);
    st->roce_rnr_naks_sent = cpu_to_le64(c->rnr_naks_sent);
    st->roce_rnr_naks_rcvd = cpu_to_le64(c->rnr_naks_rcvd);
    st->roce_dup_requests = cpu_to_le64(c->dup_requests);
    st->roce_rx_dropped = cpu_to_le64(c->rx_dropped +
                                      s->cnt.roce_rx_dropped);
    st->roce_timeouts = cpu_to_le64(c->timeouts);
    st->wire_dropped = cpu_to_le64(s->cnt.wire_dropped);
}

void kite_dp_qp_stats(KiteQp *qp, struct kite_qp_stats *st)
{
    const struct kite_roce_counters *c;

    memset(st, 0, sizeof(*st));
    if (!qp->eqp) {
        return;
    }
    c = kite_roce_qp_counters(qp->eqp);
    st->tx_packets = cpu_to_le64(c->tx_packets);
    st->tx_bytes = cpu_to_le64(c->tx_bytes);
    st->rx_packets = cpu_to_le64(c->rx_packets);
    st->rx_bytes = cpu_to_le64(c->rx_bytes);
    st->retransmits = cpu_to_le64(c->retransmits);
    st->timeouts = cpu_to_le64(c->timeouts);
    st->naks_sent = cpu_to_le64(c->naks_sent);
    st->naks_rcvd = cpu_to_le64(c->naks_rcvd);
    st->rnr_naks_sent = cpu_to_le64(c->rnr_naks_sent);
    st->rnr_naks_rcvd = cpu_to_le64(c->rnr_naks_rcvd);
    st->dup_requests = cpu_to_le64(c->dup_requests);
}

/* ---- QOM properties: wire fault injection ------------------------------ */

static void kite_wire_get_u32(Object *obj, Visitor *v, const char *name,
                              void *opaque, Error **errp)
{
    uint32_t *field = (uint32_t *)((uint8_t *)obj + (uintptr_t)opaque);

    visit_type_uint32(v, name, field, errp);
}

static void kite_wire_set_ppm(Object *obj, Visitor *v, const char *name,
                              void *opaque, Error **errp)
{
    uint32_t *field = (uint32_t *)((uint8_t *)obj + (uintptr_t)opaque);
    uint32_t val;

    if (!visit_type_uint32(v, name, &val, errp)) {
        return;
    }
    if (val > KITE_WIRE_PPM_MAX) {
        error_setg(errp, "%s must be at most %u (parts per million)", name,
                   KITE_WIRE_PPM_MAX);
        return;
    }
    *field = val;
    trace_kite_wire_prop(name, val);
}

static void kite_wire_get_seed(Object *obj, Visitor *v, const char *name,
                               void *opaque, Error **errp)
{
    KiteState *s = KITE(obj);

    visit_type_uint64(v, name, &s->wire_seed, errp);
}

/* A new seed restarts the sequence of random draws. */
static void kite_wire_set_seed(Object *obj, Visitor *v, const char *name,
                               void *opaque, Error **errp)
{
    KiteState *s = KITE(obj);
    uint64_t val;

    if (!visit_type_uint64(v, name, &val, errp)) {
        return;
    }
    s->wire_seed = val;
    kite_wire_seed(s);
    trace_kite_wire_prop(name, val);
}

void kite_dp_instance_init(KiteState *s)
{
    s->wire_seed = 1;
    kite_wire_seed(s);
}

void kite_dp_class_init(ObjectClass *klass)
{
    static const struct {
        const char *name;
        size_t off;
        const char *desc;
    } ppm[] = {
        { "wire-drop-ppm", offsetof(KiteState, wire_drop_ppm),
          "RoCEv2 frames dropped on transmit, parts per million" },
        { "wire-dup-ppm", offsetof(KiteState, wire_dup_ppm),
          "RoCEv2 frames sent twice, parts per million" },
        { "wire-reorder-ppm", offsetof(KiteState, wire_reorder_ppm),
          "RoCEv2 frames held back and sent after the next one, "
          "parts per million" },
        { "wire-rx-drop-ppm", offsetof(KiteState, wire_rx_drop_ppm),
          "RoCEv2 frames received from the wire dropped, "
          "parts per million" },
    };
    unsigned i;

    for (i = 0; i < ARRAY_SIZE(ppm); i++) {
        object_class_property_add(klass, ppm[i].name, "uint32",
                                  kite_wire_get_u32, kite_wire_set_ppm,
                                  NULL, (void *)(uintptr_t)ppm[i].off);
        object_class_property_set_description(klass, ppm[i].name,
                                              ppm[i].desc);
    }
    object_class_property_add(klass, "wire-seed", "uint64",
                              kite_wire_get_seed, kite_wire_set_seed,
                              NULL, NULL);
    object_class_property_set_description(klass, "wire-seed",
                                          "seed of the wire fault "
                                          "injection's random draws");
}
