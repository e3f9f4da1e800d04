/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: the glue between the device and the
 * RoCEv2 engine.
 *
 * The RoCEv2 transport engine (roce/, plain C without QEMU headers) talks
 * to the device through struct kite_roce_ops; this file implements it:
 * MR access with kite_mr_map() and pci_dma_*, WQE fetch through the SQ/RQ
 * page lists, CQE posting (kite_cq.c), QP events on the async EQ, frame
 * transmission (kite_wire.c), QEMU_CLOCK_VIRTUAL time, one QEMUTimer per
 * QP and a bottom half that runs the engine's send work. It is also the
 * only way the rest of the model makes the engine work (the others only
 * read its state and counters, or peek at frames).
 *
 * The engine is never re-entered: every call that makes it work or can
 * call back is bracketed by kite_engine_enter() and kite_engine_leave().
 * While a call is in progress, frames for the port wait in the wire's
 * receive queue and guest register and doorbell writes, which only a DMA
 * of the engine can cause then, are refused (kite.c).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/bswap.h"
#include "qemu/rcu.h"
#include "exec/memory.h"
#include "hw/pci/pci.h"
#include "kite.h"
#include "roce/kite_roce_crc.h"
#include "trace.h"

#define KITE_MR_STACK_RANGES    32
/* Smallest page an MR can use: bounds the DMA ranges of one access. */
#define KITE_MR_MIN_PAGE_SHIFT  12

/* ---- the re-entrancy guard --------------------------------------------- */

static KiteRoce *kite_engine_enter(KiteState *s)
{
    s->eng.depth++;
    return s->eng.roce;
}

static void kite_engine_leave(KiteState *s)
{
    assert(s->eng.depth);
    s->eng.depth--;
}

/* true while a call into the engine is in progress. */
bool kite_engine_busy(KiteState *s)
{
    return s->eng.depth != 0;
}

/* ---- frames ------------------------------------------------------------ */

/* A frame for the port's MAC: true when the engine consumed it. */
bool kite_engine_rx(KiteState *s, const uint8_t *buf, size_t size)
{
    struct kite_roce_frame_info fi;
    uint32_t dbrec_qpn;
    bool consumed;

    if (trace_event_get_state_backends(TRACE_KITE_ROCE_RX) &&
        kite_roce_frame_peek(buf, size, &fi)) {
        trace_kite_roce_rx(size, fi.opcode, fi.dqpn, fi.psn);
    }
    dbrec_qpn = kite_dbrec_before_rx(s, buf, size);
    consumed = kite_roce_rx(kite_engine_enter(s), buf, size);
    kite_engine_leave(s);
    kite_dbrec_after_rx(s, dbrec_qpn, buf, size);
    return consumed;
}

/* ---- engine callbacks (struct kite_roce_ops) --------------------------- */

/*
 * A read of DMA range @r into @p that advances the raw CRC state @crc:
 * over guest RAM mapped whole the CRC is folded into the copy, else (the
 * range is not RAM, or the mapping came short) a DMA read, then the CRC.
 */
static MemTxResult kite_engine_read_crc(PCIDevice *pci, const KiteDmaRange *r,
                                        uint8_t *p, uint32_t *crc)
{
    dma_addr_t mlen = r->len;
    MemTxResult res;
    void *host;

    if (kite_dma_is_ram(pci, r->addr, r->len, false)) {
        host = pci_dma_map(pci, r->addr, &mlen, DMA_DIRECTION_TO_DEVICE);
        if (host && mlen == r->len) {
            *crc = kite_roce_crc32_copy(*crc, p, host, mlen);
            pci_dma_unmap(pci, host, mlen, DMA_DIRECTION_TO_DEVICE, 0);
            return MEMTX_OK;
        }
        if (host) {
            pci_dma_unmap(pci, host, mlen, DMA_DIRECTION_TO_DEVICE, 0);
        }
    }
    res = pci_dma_read(pci, r->addr, p, r->len);
    if (res == MEMTX_OK) {
        *crc = kite_roce_crc32(*crc, p, r->len);
    }
    return res;
}

/* mem_rw, and with @crc (reads only) mem_read_crc. */
static uint8_t kite_engine_mem_access(void *opaque, void *qp, uint32_t pdn,
                                      uint32_t key, uint32_t access,
                                      uint64_t va, void *buf, uint32_t len,
                                      bool write, uint32_t *crc)
{
    KiteState *s = opaque;
    KiteQp *host = qp;
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
        /* Only the key, the PD and (windows) the QP are checked. */
        return kite_mr_map(s, key, pdn, host->qpn, access, va, 0, NULL, 0,
                           &n);
    }
    if (max > KITE_MR_STACK_RANGES) {
        r = g_new(KiteDmaRange, max);
    }
    st = kite_mr_map(s, key, pdn, host->qpn, access, va, len, r, max, &n);
    for (i = 0; st == KITE_CQE_SUCCESS && i < n; i++) {
        MemTxResult res = write ?
            pci_dma_write(pci, r[i].addr, p, r[i].len) :
            crc ? kite_engine_read_crc(pci, &r[i], p, crc) :
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

static uint8_t kite_engine_mem_rw(void *opaque, void *qp, uint32_t pdn,
                                  uint32_t key, uint32_t access, uint64_t va,
                                  void *buf, uint32_t len, bool write)
{
    return kite_engine_mem_access(opaque, qp, pdn, key, access, va, buf, len,
                                  write, NULL);
}

static uint8_t kite_engine_mem_read_crc(void *opaque, void *qp, uint32_t pdn,
                                        uint32_t key, uint32_t access,
                                        uint64_t va, void *buf, uint32_t len,
                                        uint32_t *crc)
{
    return kite_engine_mem_access(opaque, qp, pdn, key, access, va, buf, len,
                                  false, crc);
}

/*
 * A memory-management WQE (header and segment, @len bytes) of @host: none
 * carries data; BIND_MW only on RC and UC QPs; then kite_frwr.c or
 * kite_mw.c executes it. Its cost is bounded by CAP_MAX_FRWR_PAGES page
 * entries.
 */
static uint8_t kite_engine_mem_op(void *opaque, void *host, uint32_t pdn,
                                  const void *wqe, uint32_t len)
{
    KiteState *s = opaque;
    KiteQp *qp = host;
    const uint8_t *seg = (const uint8_t *)wqe + sizeof(struct kite_sq_wqe_hdr);
    struct kite_sq_wqe_hdr hdr;
    struct kite_wqe_reg_mr reg;
    struct kite_wqe_bind_mw bind;
    uint8_t st;

    if (!kite_running(s)) {
        return KITE_CQE_GENERAL_ERR;
    }
    if (len < sizeof(hdr)) {
        return KITE_CQE_LOC_QP_OP_ERR;
    }
    memcpy(&hdr, wqe, sizeof(hdr));
    if (hdr.num_sge || hdr.inline_len || (hdr.flags & KITE_WQE_F_INLINE) ||
        qp->pdn != pdn) {
        return KITE_CQE_LOC_QP_OP_ERR;
    }
    switch (hdr.opcode) {
    case KITE_WQE_LOCAL_INV:
        st = kite_frwr_inv(s, qp, le32_to_cpu(hdr.imm_data), false);
        trace_kite_wqe_local_inv(qp->qpn, le32_to_cpu(hdr.imm_data), st);
        return st;
    case KITE_WQE_REG_MR:
        if (len < sizeof(hdr) + sizeof(reg)) {
            return KITE_CQE_LOC_QP_OP_ERR;
        }
        memcpy(&reg, seg, sizeof(reg));
        st = kite_frwr_reg(s, qp, &reg);
        trace_kite_wqe_reg_mr(qp->qpn, le32_to_cpu(reg.key),
                              le64_to_cpu(reg.iova), le64_to_cpu(reg.length),
                              le32_to_cpu(reg.npages), reg.page_shift,
                              le32_to_cpu(reg.access), st);
        return st;
    case KITE_WQE_BIND_MW:
        if (len < sizeof(hdr) + sizeof(bind) ||
            (qp->type != KITE_QPT_RC && qp->type != KITE_QPT_UC)) {
            return KITE_CQE_LOC_QP_OP_ERR;
        }
        memcpy(&bind, seg, sizeof(bind));
        st = kite_mw_bind(s, qp, &bind);
        trace_kite_wqe_bind_mw(qp->qpn, le32_to_cpu(bind.mw_key),
                               le32_to_cpu(bind.mr_key),
                               le64_to_cpu(bind.addr),
                               le64_to_cpu(bind.length),
                               le32_to_cpu(bind.access), st);
        return st;
    default:
        return KITE_CQE_LOC_QP_OP_ERR;
    }
}

/* A SEND_INV arrived at responder QP @host: invalidate @rkey. */
static uint8_t kite_engine_remote_inv(void *opaque, void *host, uint32_t pdn,
                                      uint32_t rkey)
{
    KiteState *s = opaque;
    KiteQp *qp = host;
    uint8_t st;

    if (!kite_running(s) || qp->pdn != pdn) {
        return KITE_CQE_REM_INV_REQ_ERR;
    }
    st = kite_frwr_inv(s, qp, rkey, true);
    trace_kite_remote_inv(qp->qpn, rkey, st);
    return st;
}

/*
 * Read @len bytes at offset @off of the work queue ring @ring (SQ, RQ or
 * SRQ); false when a page is not mapped or not readable.
 */
bool kite_wq_read(KiteState *s, const KitePbl *ring, uint64_t off,
                  void *buf, uint32_t len)
{
    uint64_t dma, contig;
    uint8_t *p = buf;

    /*
     * Strides are at most 1024 bytes and pages at least 4 KiB, both powers
     * of two, so a WQE never straddles pages; the loop copes anyway.
     */
    while (len) {
        uint32_t n;

        if (!kite_pbl_translate(s, ring, off, &dma, &contig)) {
            qemu_log_mask(LOG_GUEST_ERROR, "kite: ring offset 0x%" PRIx64
                          " not mapped\n", off);
            return false;
        }
        n = MIN(len, contig);
        if (pci_dma_read(PCI_DEVICE(s), dma, p, n) != MEMTX_OK) {
            qemu_log_mask(LOG_GUEST_ERROR, "kite: WQE at 0x%" PRIx64
                          " not readable\n", dma);
            return false;
        }
        p += n;
        off += n;
        len -= n;
    }
    return true;
}

static bool kite_engine_wqe_read(void *opaque, void *host, bool rq,
                                 uint32_t slot, void *buf, uint32_t len)
{
    KiteState *s = opaque;
    KiteQp *qp = host;
    uint8_t log_depth, log_stride;

    if (!kite_running(s)) {
        return false;
    }
    log_depth = rq ? qp->rq_log_depth : qp->sq_log_depth;
    log_stride = rq ? qp->rq_log_stride : qp->sq_log_stride;
    if (len > (1u << log_stride)) {
        return false;
    }
    if (!kite_wq_read(s, rq ? &qp->rq : &qp->sq,
                      (uint64_t)kite_ring_slot(slot, log_depth) << log_stride,
                      buf, len)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: QP %u %s WQE %u not readable\n",
                      qp->qpn, rq ? "RQ" : "SQ", slot);
        return false;
    }
    return true;
}

static bool kite_engine_srq_take(void *opaque, void *host, void *buf,
                                 uint32_t len, uint16_t *slot)
{
    KiteState *s = opaque;
    KiteQp *qp = host;
    KiteSrq *srq;

    if (!kite_running(s) || !(qp->flags & KITE_QP_FLAG_SRQ)) {
        return false;
    }
    srq = kite_srq_find(s, qp->srqn);
    return srq && kite_srq_take(s, srq, buf, len, slot);
}

static bool kite_engine_cq_post(void *opaque, uint32_t cqn,
                                const struct kite_cqe *cqe)
{
    return kite_cq_post(opaque, cqn, cqe);
}

static void kite_engine_qp_event(void *opaque, void *host, uint8_t type)
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

static void kite_engine_transmit(void *opaque, const uint8_t *frame,
                                 size_t len)
{
    kite_wire_transmit(opaque, frame, len);
}

static bool kite_engine_tx_ready(void *opaque)
{
    return kite_wire_tx_ready(opaque);
}

static uint64_t kite_engine_now_ns(void *opaque)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static void kite_engine_timer_mod(void *opaque, void *host, uint64_t deadline)
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

static void kite_engine_schedule(KiteState *s)
{
    s->eng.run_pending = true;
    qemu_bh_schedule(s->eng.run_bh);
}

static void kite_engine_kick(void *opaque)
{
    KiteState *s = opaque;

    if (s->eng.defer_kick) {
        s->eng.kicked = true;
        return;
    }
    kite_engine_schedule(s);
}

static bool kite_engine_gid_is_local(void *opaque, const uint8_t *gid)
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

static bool kite_engine_gid_get(void *opaque, uint8_t index, uint8_t *gid)
{
    KiteState *s = opaque;

    if (index >= KITE_DEF_MAX_GID || !s->gid[index].valid) {
        return false;
    }
    memcpy(gid, s->gid[index].gid, sizeof(s->gid[index].gid));
    return true;
}

static const struct kite_roce_ops kite_engine_ops = {
    .mem_rw = kite_engine_mem_rw,
    .mem_read_crc = kite_engine_mem_read_crc,
    .mem_op = kite_engine_mem_op,
    .remote_inv = kite_engine_remote_inv,
    .wqe_read = kite_engine_wqe_read,
    .srq_take = kite_engine_srq_take,
    .cq_post = kite_engine_cq_post,
    .qp_event = kite_engine_qp_event,
    .transmit = kite_engine_transmit,
    .tx_ready = kite_engine_tx_ready,
    .now_ns = kite_engine_now_ns,
    .timer_mod = kite_engine_timer_mod,
    .kick = kite_engine_kick,
    .gid_is_local = kite_engine_gid_is_local,
    .gid_get = kite_engine_gid_get,
};

/* ---- bottom halves and timers ------------------------------------------ */

/* Up to @budget packets of send work, then the doorbell records. */
static void kite_engine_run(KiteState *s, unsigned budget)
{
    bool more;

    more = kite_roce_run(kite_engine_enter(s), budget);
    kite_engine_leave(s);
    trace_kite_engine_run(budget, more);
    kite_dbrec_service(s);
    /* While the link is backpressured kite_engine_tx_resume() runs it. */
    if (more && kite_wire_tx_ready(s)) {
        kite_engine_schedule(s);
    }
}

/* The link takes frames again: the send work that waited for it. */
void kite_engine_tx_resume(KiteState *s)
{
    kite_engine_schedule(s);
}

static void kite_engine_run_bh(void *opaque)
{
    KiteState *s = opaque;

    s->eng.run_pending = false;
    if (kite_running(s)) {
        kite_engine_run(s, KITE_ROCE_BUDGET);
    }
}

static void kite_engine_qp_timer_cb(void *opaque)
{
    KiteQp *qp = opaque;
    KiteState *s = qp->dev;
    bool was;

    if (!qp->valid || !qp->eqp || !kite_running(s)) {
        return;
    }
    was = kite_io_enter(s);
    kite_engine_enter(s);
    kite_roce_qp_timer(qp->eqp);
    kite_engine_leave(s);
    kite_io_leave(s, was);
}

/* A fatal error hit while the engine was running: stop it now. */
static void kite_engine_stop_bh(void *opaque)
{
    KiteState *s = opaque;

    if (!kite_running(s)) {
        kite_engine_stop(s);
    }
}

/* ---- QPs --------------------------------------------------------------- */

/*
 * Creates the engine side of a new QP (in RESET) and its timer; false when
 * the engine has no memory for it.
 */
bool kite_engine_qp_create(KiteState *s, KiteQp *qp)
{
    struct kite_roce_qp_cfg cfg = {
        .qpn = qp->qpn,
        .type = qp->type,
        .sig_all = qp->flags & KITE_QP_FLAG_SIG_ALL,
        .srq = qp->flags & KITE_QP_FLAG_SRQ,
        .pdn = qp->pdn,
        .send_cqn = qp->send_cqn,
        .recv_cqn = qp->recv_cqn,
        .sq_log_depth = qp->sq_log_depth,
        .sq_log_stride = qp->sq_log_stride,
        .rq_log_depth = qp->rq_log_depth,
        .rq_log_stride = qp->rq_log_stride,
        .host = qp,
    };

    qp->dev = s;
    qp->eqp = kite_roce_qp_create(kite_engine_enter(s), &cfg);
    kite_engine_leave(s);
    if (!qp->eqp) {
        return false;
    }
    qp->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, kite_engine_qp_timer_cb, qp);
    return true;
}

/* Drops the engine side of @qp (no completions) and its timer. */
static void kite_engine_qp_drop(KiteQp *qp)
{
    if (qp->eqp) {
        assert(!kite_engine_busy(qp->dev));
        /* Destroying cancels the QP's timer through a callback. */
        kite_engine_enter(qp->dev);
        kite_roce_qp_destroy(qp->eqp);
        kite_engine_leave(qp->dev);
        qp->eqp = NULL;
    }
    if (qp->timer) {
        timer_free(qp->timer);
        qp->timer = NULL;
    }
}

/* @qp (not in RESET) to ERR with KITE_EVT_QP_FATAL: its SRQ failed. */
void kite_engine_qp_fatal(KiteState *s, KiteQp *qp)
{
    if (qp->eqp) {
        kite_engine_enter(s);
        kite_roce_qp_fatal(qp->eqp);
        kite_engine_leave(s);
    }
}

/*
 * DESTROY_QP: the SRQ WQE the QP holds goes back to the host, then the
 * engine side (and with it its QP number) and the timer.
 */
void kite_engine_qp_destroy(KiteState *s, KiteQp *qp)
{
    if (qp->eqp) {
        kite_engine_enter(s);
        kite_roce_qp_srq_return(qp->eqp);
        kite_engine_leave(s);
    }
    kite_engine_qp_drop(qp);
}

/*
 * The path of an AV the MODIFY_QP checks accepted: source GID from the GID
 * table, source MAC the port's, the rest from the AV.
 */
static void kite_engine_resolve_path(KiteState *s, const struct kite_av *av,
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

/* MODIFY_QP that kite_qp.c has checked: @a little-endian, as the guest's. */
void kite_engine_qp_modify(KiteState *s, KiteQp *qp,
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
        kite_engine_resolve_path(s, &a->av, &h.path);
    }
    kite_engine_enter(s);
    kite_roce_qp_modify(qp->eqp, &h, mask);
    kite_engine_leave(s);
}

/* A doorbell of the QP's RQ (@rq) or SQ: @pi is the new producer index. */
void kite_engine_doorbell(KiteState *s, KiteQp *qp, bool rq, uint32_t pi)
{
    if (!qp->eqp) {
        return;
    }
    kite_engine_enter(s);
    if (rq) {
        kite_roce_rq_doorbell(qp->eqp, pi);
    } else {
        kite_roce_sq_doorbell(qp->eqp, pi);
    }
    kite_engine_leave(s);
}

/*
 * The guest wrote @qp's SQ doorbell register (@pi). When the engine has no
 * run pending, the send work this makes due starts here, in the vCPU's
 * MMIO handler, for up to KITE_DOORBELL_BUDGET packets: the frames leave
 * without a wake-up of the main loop, which under TCG waits for the host
 * CPU this vCPU runs on. Otherwise it joins the pending run.
 */
void kite_engine_sq_doorbell_now(KiteState *s, KiteQp *qp, uint32_t pi)
{
    bool kicked;

    if (!qp->eqp || kite_engine_busy(s)) {
        kite_engine_doorbell(s, qp, false, pi);
        return;
    }
    s->eng.defer_kick = true;
    s->eng.kicked = false;
    kite_engine_doorbell(s, qp, false, pi);
    s->eng.defer_kick = false;
    kicked = s->eng.kicked;
    s->eng.kicked = false;
    if (kicked && !s->eng.run_pending && kite_running(s)) {
        kite_engine_run(s, KITE_DOORBELL_BUDGET);
    } else if (kicked) {
        kite_engine_schedule(s);
    }
}

/* The port's MAC or MTU changed (SET_PORT, reset). */
void kite_engine_set_port(KiteState *s)
{
    kite_roce_set_port(kite_engine_enter(s), s->mac, s->eth_mtu);
    kite_engine_leave(s);
}

/* ---- lifetime ---------------------------------------------------------- */

/*
 * The data path stops (FATAL, and first thing of a reset): engine QPs and
 * their timers are destroyed. While the engine is running (a fatal error
 * raised from one of its callbacks) the QPs are destroyed from a bottom
 * half once it has returned.
 */
void kite_engine_stop(KiteState *s)
{
    uint32_t i;

    qemu_bh_cancel(s->eng.run_bh);
    s->eng.run_pending = false;
    if (kite_engine_busy(s)) {
        qemu_bh_schedule(s->eng.stop_bh);
        return;
    }
    for (i = kite_table_next(&s->qp_tab, 0); i < s->qp_tab.size;
         i = kite_table_next(&s->qp_tab, i + 1)) {
        kite_engine_qp_drop(kite_table_get(&s->qp_tab, i));
    }
}

/*
 * Reset: a fresh engine (counters at 0) for the port's MAC and MTU, which
 * the caller has set; the QP table is emptied by kite_admin_reset().
 */
void kite_engine_reset(KiteState *s)
{
    assert(!kite_engine_busy(s));
    qemu_bh_cancel(s->eng.stop_bh);
    kite_engine_stop(s);
    kite_roce_free(s->eng.roce);
    s->eng.roce = kite_roce_new(&kite_engine_ops, s);
    g_assert(s->eng.roce);  /* out of memory, as g_malloc() would abort */
    kite_engine_set_port(s);
}

void kite_engine_init(KiteState *s)
{
    DeviceState *dev = DEVICE(s);

    s->eng.run_bh = qemu_bh_new_guarded(kite_engine_run_bh, s,
                                        &dev->mem_reentrancy_guard);
    s->eng.stop_bh = qemu_bh_new_guarded(kite_engine_stop_bh, s,
                                         &dev->mem_reentrancy_guard);
    s->eng.roce = kite_roce_new(&kite_engine_ops, s);
    g_assert(s->eng.roce);
}

void kite_engine_cleanup(KiteState *s)
{
    uint32_t i;

    for (i = kite_table_next(&s->qp_tab, 0); i < s->qp_tab.size;
         i = kite_table_next(&s->qp_tab, i + 1)) {
        kite_engine_qp_drop(kite_table_get(&s->qp_tab, i));
    }
    kite_dbrec_cleanup(s);
    qemu_bh_delete(s->eng.run_bh);
    qemu_bh_delete(s->eng.stop_bh);
    kite_roce_free(s->eng.roce);
    s->eng.roce = NULL;
}
