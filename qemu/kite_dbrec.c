/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: doorbell records.
 *
 * A QP created with a record (struct kite_qp_dbrec) gets its SQ and RQ
 * producer indexes from guest memory as well as from the doorbell
 * registers. After a doorbell the device sets sq_poll/rq_poll and reads
 * the producer index again whenever the engine has done something (a
 * frame received, a run of send work, a state change), so that the
 * guest need not write the register (after a frame only the frame's QP is
 * looked at). Once the queue has completed every
 * WQE the engine knows of, the device clears the flag, then reads the
 * index a last time: the guest stores its index before it reads the flag,
 * so one of the two always sees the other's store (hardware.rst,
 * "Doorbell records").
 *
 * A CQ created with a record (struct kite_cq_dbrec) gets its consumer
 * index from it when the ring looks full, before an overflow is declared.
 *
 * Every record read is one naturally aligned 32-bit DMA access; the cost
 * of a service pass is one read per QP queue still being polled.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/atomic.h"
#include "hw/pci/pci.h"
#include "kite.h"
#include "trace.h"

static uint64_t kite_dbrec_pi_addr(const KiteQp *qp, bool rq)
{
    return qp->dbrec.addr + (rq ? offsetof(struct kite_qp_dbrec, rq_pi) :
                                  offsetof(struct kite_qp_dbrec, sq_pi));
}

static uint64_t kite_dbrec_poll_addr(const KiteQp *qp, bool rq)
{
    return qp->dbrec.addr + (rq ? offsetof(struct kite_qp_dbrec, rq_poll) :
                                  offsetof(struct kite_qp_dbrec, sq_poll));
}

static bool kite_dbrec_read32(KiteState *s, uint64_t addr, uint32_t *val)
{
    s->cnt.db_rec_reads++;
    return ldl_le_pci_dma(PCI_DEVICE(s), addr, val,
                          MEMTXATTRS_UNSPECIFIED) == MEMTX_OK;
}

/*
 * Validates the record address of a new QP (@size bytes of struct
 * kite_qp_dbrec) or CQ (struct kite_cq_dbrec): 0 is no record; otherwise
 * aligned to its size and readable. A QP's poll flags start cleared.
 */
uint8_t kite_dbrec_check(KiteState *s, uint64_t addr, uint32_t size)
{
    struct kite_qp_dbrec rec = {};

    assert(size <= sizeof(rec));
    if (!addr) {
        return KITE_STS_OK;
    }
    if (!kite_dbrec_addr_valid(addr, size)) {
        return kite_bad_param("doorbell record address", addr);
    }
    if (pci_dma_read(PCI_DEVICE(s), addr, &rec, size) != MEMTX_OK ||
        (size == sizeof(rec) &&
         pci_dma_write(PCI_DEVICE(s), addr +
                       offsetof(struct kite_qp_dbrec, sq_poll), &rec.sq_poll,
                       sizeof(rec.sq_poll) + sizeof(rec.rq_poll)) !=
         MEMTX_OK)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: doorbell record at 0x%" PRIx64
                      " not accessible\n", addr);
        return KITE_STS_DMA_ERROR;
    }
    return KITE_STS_OK;
}

/*
 * The QP's record became inaccessible: the device stops using it and
 * reports the QP (its doorbell registers keep working).
 */
static void kite_dbrec_qp_fail(KiteState *s, KiteQp *qp)
{
    qemu_log_mask(LOG_GUEST_ERROR, "kite: QP %u doorbell record at 0x%"
                  PRIx64 " not accessible: record dropped\n", qp->qpn,
                  qp->dbrec.addr);
    qp->dbrec.addr = 0;
    qp->dbrec.poll[0] = qp->dbrec.poll[1] = false;
    kite_eq_post(s, 0, KITE_EVT_QP_FATAL, qp->qpn, 0);
}

static bool kite_dbrec_set_poll(KiteState *s, KiteQp *qp, bool rq, bool on)
{
    if (stl_le_pci_dma(PCI_DEVICE(s), kite_dbrec_poll_addr(qp, rq),
                       on ? KITE_DBREC_POLL : 0, MEMTXATTRS_UNSPECIFIED) !=
        MEMTX_OK) {
        kite_dbrec_qp_fail(s, qp);
        return false;
    }
    qp->dbrec.poll[rq] = on;
    trace_kite_dbrec_poll(qp->qpn, rq, on);
    return true;
}

/* Puts @qp on the list of QPs whose records the service pass reads. */
static void kite_dbrec_list(KiteState *s, KiteQp *qp)
{
    if (qp->dbrec.listed) {
        return;
    }
    if (!s->dbrec_polling) {
        s->dbrec_polling = g_array_new(false, false, sizeof(uint32_t));
    }
    g_array_append_val(s->dbrec_polling, qp->qpn);
    qp->dbrec.listed = true;
}

/*
 * A doorbell register of @qp's RQ (@rq) or SQ was written (and passed to
 * the engine): from now on the device polls that queue's record.
 */
void kite_dbrec_doorbell(KiteState *s, KiteQp *qp, bool rq)
{
    if (!qp->dbrec.addr || qp->dbrec.poll[rq]) {
        return;
    }
    if (kite_dbrec_set_poll(s, qp, rq, true)) {
        kite_dbrec_list(s, qp);
    }
}

/*
 * Reads the producer index of @qp's RQ (@rq) or SQ from the record and
 * hands a new one to the engine (which ignores one that goes backwards and
 * moves the QP to ERR for one beyond the depth). true: it was new.
 */
static bool kite_dbrec_pull(KiteState *s, KiteQp *qp, bool rq)
{
    uint32_t *known = rq ? &qp->rq_pi : &qp->sq_pi;
    uint32_t pi;

    if (!kite_dbrec_read32(s, kite_dbrec_pi_addr(qp, rq), &pi)) {
        kite_dbrec_qp_fail(s, qp);
        return false;
    }
    if (pi == *known) {
        return false;
    }
    trace_kite_dbrec_pi(qp->qpn, rq, pi);
    *known = pi;
    kite_engine_doorbell(s, qp, rq, pi);
    return true;
}

/*
 * One queue being polled: new WQEs go to the engine; an idle queue with
 * none stops being polled, with the re-read that closes the race against
 * a guest that stored its index before it saw the flag cleared.
 * true: the queue is still polled.
 */
static bool kite_dbrec_service_wq(KiteState *s, KiteQp *qp, bool rq)
{
    if (!qp->dbrec.poll[rq]) {
        return false;
    }
    if (kite_dbrec_pull(s, qp, rq)) {
        return true;
    }
    if (!qp->dbrec.addr || !qp->eqp || !kite_roce_qp_wq_idle(qp->eqp, rq)) {
        return qp->dbrec.addr != 0;
    }
    if (!kite_dbrec_set_poll(s, qp, rq, false)) {
        return false;
    }
    /* Flag store before index load; pairs with the host's full barrier. */
    smp_mb();
    if (kite_dbrec_pull(s, qp, rq)) {
        return kite_dbrec_set_poll(s, qp, rq, true);
    }
    return false;
}

/*
 * Both queues of a listed QP; false when neither is polled any more (only
 * the pass that drops its list entry clears dbrec.listed).
 */
static bool kite_dbrec_service_qp(KiteState *s, KiteQp *qp)
{
    bool keep = kite_dbrec_service_wq(s, qp, false);

    return kite_dbrec_service_wq(s, qp, true) || keep;
}

/*
 * The engine ran send work, or a MODIFY_QP changed a state: every QP
 * whose record is polled reads its producer indexes again. Outside the
 * engine only. Entries for QPs that are gone, no longer polled or listed
 * twice (a new QP listed under the number of a destroyed one still on the
 * list) leave the list.
 */
void kite_dbrec_service(KiteState *s)
{
    GArray *a = s->dbrec_polling;
    guint i = 0;

    s->dbrec_pass++;
    while (a && i < a->len) {
        KiteQp *qp = kite_qp_find(s, g_array_index(a, uint32_t, i));
        bool keep = qp && qp->dbrec.listed &&
                    qp->dbrec.pass != s->dbrec_pass;

        if (keep) {
            qp->dbrec.pass = s->dbrec_pass;
            keep = kite_dbrec_service_qp(s, qp);
            qp->dbrec.listed = keep;
        }
        if (keep) {
            i++;
        } else {
            g_array_remove_index_fast(a, i);
        }
    }
}

/* Before a frame for @qp: its RQ record, if polled and looking empty. */
static bool kite_dbrec_rx_pull(KiteState *s, KiteQp *qp)
{
    if (!qp || !qp->dbrec.listed) {
        return false;
    }
    if (qp->dbrec.poll[true] && qp->eqp &&
        kite_roce_qp_wq_idle(qp->eqp, true)) {
        kite_dbrec_pull(s, qp, true);
    }
    return true;
}

/*
 * The QPs of the multicast group a frame to KITE_MCAST_QPN is for, into
 * @m; how many.
 */
static uint32_t kite_dbrec_mcast_qps(KiteState *s, const uint8_t *frame,
                                     size_t len, KiteQp **m)
{
    struct kite_roce_frame_info fi;

    if (!kite_roce_frame_peek(frame, len, &fi) ||
        !kite_gid_is_mcast(fi.dgid)) {
        return 0;
    }
    return kite_roce_mcast_members(s->eng.roce, fi.dgid, (void **)m);
}

/*
 * A frame is about to reach the engine: if it is for a QP whose RQ is
 * polled and looks empty to the engine, the RQ record is read first, so
 * a receive the guest posted without a doorbell is not missed; for a
 * multicast datagram, that of each QP of its group. Returns the QP number
 * to give kite_dbrec_after_rx() (0: none polled).
 */
uint32_t kite_dbrec_before_rx(KiteState *s, const uint8_t *frame,
                              size_t len)
{
    KiteQp *m[KITE_DEF_MAX_MCAST_QP];
    struct kite_roce_frame_info fi;
    uint32_t i, n;

    if (!s->dbrec_polling || !s->dbrec_polling->len ||
        !kite_roce_frame_peek(frame, len, &fi)) {
        return 0;
    }
    if (fi.dqpn == KITE_MCAST_QPN) {
        n = kite_dbrec_mcast_qps(s, frame, len, m);
        for (i = 0; i < n; i++) {
            kite_dbrec_rx_pull(s, m[i]);
        }
        return n ? KITE_MCAST_QPN : 0;
    }
    return kite_dbrec_rx_pull(s, kite_qp_find(s, fi.dqpn)) ? fi.dqpn : 0;
}

static void kite_dbrec_rx_service(KiteState *s, KiteQp *qp)
{
    if (qp && qp->dbrec.listed) {
        kite_dbrec_service_qp(s, qp);
    }
}

/*
 * The engine handled @frame, which kite_dbrec_before_rx() found for QP
 * @qpn: only the queues of that QP (of the group's QPs) can have moved,
 * so only their records are read again.
 */
void kite_dbrec_after_rx(KiteState *s, uint32_t qpn, const uint8_t *frame,
                         size_t len)
{
    KiteQp *m[KITE_DEF_MAX_MCAST_QP];
    uint32_t i, n;

    if (qpn == KITE_MCAST_QPN) {
        n = kite_dbrec_mcast_qps(s, frame, len, m);
        for (i = 0; i < n; i++) {
            kite_dbrec_rx_service(s, m[i]);
        }
    } else if (qpn) {
        kite_dbrec_rx_service(s, kite_qp_find(s, qpn));
    }
}

/* MODIFY_QP to RESET: the queues are empty, the record is not polled. */
void kite_dbrec_qp_reset(KiteState *s, KiteQp *qp)
{
    if (qp->dbrec.addr && qp->dbrec.poll[false]) {
        kite_dbrec_set_poll(s, qp, false, false);
    }
    if (qp->dbrec.addr && qp->dbrec.poll[true]) {
        kite_dbrec_set_poll(s, qp, true, false);
    }
}

void kite_dbrec_cleanup(KiteState *s)
{
    if (s->dbrec_polling) {
        g_array_free(s->dbrec_polling, true);
        s->dbrec_polling = NULL;
    }
}

/*
 * The CQ looks full: its consumer index from the record, if it has one
 * and the value is within the depth behind the producer index.
 */
void kite_dbrec_cq_refresh(KiteState *s, KiteCq *cq, uint32_t cqn)
{
    uint32_t ci;

    if (!cq->dbrec) {
        return;
    }
    if (!kite_dbrec_read32(s, cq->dbrec +
                           offsetof(struct kite_cq_dbrec, ci), &ci)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: CQ %u doorbell record at 0x%"
                      PRIx64 " not accessible\n", cqn, cq->dbrec);
        return;
    }
    if (kite_ring_used(cq->pi, ci) > kite_ring_used(cq->pi, cq->ci)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: CQ %u record consumer index "
                      "%u behind %u: ignored\n", cqn, ci, cq->ci);
        return;
    }
    trace_kite_dbrec_cq_ci(cqn, ci);
    cq->ci = ci;
}
