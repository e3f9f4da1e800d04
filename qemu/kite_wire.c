/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: the wire between the RoCEv2 engine and the
 * port.
 *
 * Transmit: every frame the engine sends passes the fault stage (drop,
 * duplicate, hold back for reordering; x-wire-* properties, one xorshift64
 * sequence of random draws), then goes to the port's own receive path when
 * it is addressed to the port's MAC (loopback) or to the netdev. When the
 * netdev cannot take a frame (its peer is backpressured) it keeps it, and
 * the engine sends nothing more until it has left: QEMU's net queue drops
 * frames queued without a callback once it holds 10000, and an RC
 * requester with many QPs and a large window has more in flight.
 *
 * Receive: a frame from the netdev for the port's MAC passes the receive
 * fault stage, then goes to the engine. While the engine is running (a peer
 * on a hub answering synchronously) it waits in the receive queue instead,
 * which a bottom half delivers to the port; loopback frames always take the
 * queue, so the engine never sees a frame from inside one of its calls.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "net/net.h"
#include "kite.h"
#include "trace.h"

/* xorshift64 needs a non-zero state; x-wire-seed=0 maps to this one. */
#define KITE_WIRE_SEED_ZERO     0x9e3779b97f4a7c15ull

/* ---- frames ------------------------------------------------------------ */

/* A copy of @buf in a new queue entry (the wire's and the Ethernet port's). */
KiteFrame *kite_frame_new(const uint8_t *buf, size_t len)
{
    KiteFrame *f = g_malloc(sizeof(*f) + len);

    f->len = len;
    memcpy(f->data, buf, len);
    return f;
}

void kite_frame_queue_free(KiteFrameQueue *q)
{
    KiteFrame *f;

    while ((f = QSIMPLEQ_FIRST(q))) {
        QSIMPLEQ_REMOVE_HEAD(q, next);
        g_free(f);
    }
}

/* ---- fault injection: random draws ------------------------------------ */

static uint64_t kite_wire_next(KiteWire *w)
{
    uint64_t x = w->rng;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    w->rng = x;
    return x;
}

/* true with probability @ppm / 10^6 (no draw when @ppm is 0). */
static bool kite_wire_roll(KiteWire *w, uint32_t ppm)
{
    return ppm && kite_wire_next(w) % KITE_WIRE_PPM_MAX < ppm;
}

static void kite_wire_seed(KiteWire *w)
{
    w->rng = w->seed ? w->seed : KITE_WIRE_SEED_ZERO;
}

/* ---- receive queue: loopback and deferred frames ----------------------- */

static void kite_rxq_push(KiteState *s, const uint8_t *buf, size_t len,
                          bool loopback)
{
    KiteWire *w = &s->wire;
    KiteFrame *f;

    if (w->rxq_len >= KITE_RXQ_MAX) {
        s->cnt.roce_rx_dropped++;
        trace_kite_rxq_full(len);
        return;
    }
    trace_kite_rxq_push(len, loopback);
    f = kite_frame_new(buf, len);
    QSIMPLEQ_INSERT_TAIL(&w->rxq, f, next);
    w->rxq_len++;
    qemu_bh_schedule(w->rxq_bh);
}

/*
 * Delivers the frames queued so far to the port's receive path (the
 * engine, else the Ethernet RX ring). Frames queued meanwhile (answers to
 * loopback traffic) wait for the next run.
 */
static void kite_rxq_bh(void *opaque)
{
    KiteState *s = opaque;
    KiteWire *w = &s->wire;
    KiteFrameQueue q = QSIMPLEQ_HEAD_INITIALIZER(q);
    KiteFrame *f;

    QSIMPLEQ_CONCAT(&q, &w->rxq);
    w->rxq_len = 0;
    while ((f = QSIMPLEQ_FIRST(&q))) {
        QSIMPLEQ_REMOVE_HEAD(&q, next);
        if (kite_running(s)) {
            /* Loopback or already past the receive fault stage. */
            w->rxq_delivering = true;
            kite_port_receive(s, f->data, f->len);
            w->rxq_delivering = false;
        }
        g_free(f);
    }
}

/*
 * Receive-side fault injection (x-wire-rx-drop-ppm): true when @buf, a
 * RoCEv2 frame that has just arrived from the netdev, is to be dropped as
 * if the wire had lost it (counted in wire_dropped). Frames delivered from
 * the receive queue (loopback, whose damage is done on transmit, and
 * frames deferred after this stage) are never dropped here; a frame that
 * arrives from the netdev while such a frame is in the engine is fresh
 * from the wire and is.
 */
static bool kite_wire_rx_drop(KiteState *s, const uint8_t *buf, size_t size)
{
    KiteWire *w = &s->wire;
    struct kite_roce_frame_info fi;

    if (!w->rx_drop_ppm || (w->rxq_delivering && !kite_engine_busy(s)) ||
        !kite_roce_frame_peek(buf, size, &fi) ||
        !kite_wire_roll(w, w->rx_drop_ppm)) {
        return false;
    }
    s->cnt.wire_dropped++;
    trace_kite_wire_rx_drop(fi.opcode, fi.dqpn, fi.psn);
    return true;
}

/*
 * A frame arrived for the port: offered to the engine when the device is
 * READY and the frame is unicast to the port's MAC or to the Ethernet
 * address of a multicast group a QP is attached to. true: consumed (by
 * the engine, dropped by the receive fault stage, or queued because the
 * engine is running right now).
 */
bool kite_wire_receive(KiteState *s, const uint8_t *buf, size_t size)
{
    if (!kite_running(s) || size < KITE_ETH_HLEN) {
        return false;
    }
    if (memcmp(buf, s->mac, sizeof(s->mac)) &&
        !kite_roce_mcast_mac(s->eng.roce, buf)) {
        return false;
    }
    if (kite_wire_rx_drop(s, buf, size)) {
        return true;
    }
    if (kite_engine_busy(s)) {
        /* A synchronous answer to a frame the engine is sending. */
        kite_rxq_push(s, buf, size, false);
        return true;
    }
    return kite_engine_rx(s, buf, size);
}

/* ---- transmit: fault injection, loopback, netdev ----------------------- */

/* A frame the netdev had queued has left: the engine may send again. */
static void kite_wire_tx_done(NetClientState *nc, ssize_t len)
{
    KiteState *s = qemu_get_nic_opaque(nc);

    if (!s->wire.tx_blocked) {
        return;
    }
    s->wire.tx_blocked = false;
    trace_kite_wire_tx_resumed();
    if (kite_running(s)) {
        kite_engine_tx_resume(s);
    }
}

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
    /*
     * Only the frame that blocks the link carries the callback: frames
     * sent while it waits (NAKs from the receive path, held and
     * duplicated frames) fall under the net queue's own cap.
     */
    if (!qemu_send_packet_async(qemu_get_queue(s->nic), frame, len,
                                s->wire.tx_blocked ? NULL :
                                kite_wire_tx_done)) {
        /* Queued: its callback tells when the link takes frames again. */
        if (!s->wire.tx_blocked) {
            trace_kite_wire_tx_blocked(len);
        }
        s->wire.tx_blocked = true;
    }
}

/* Whether the engine may send (no frame is waiting in the netdev). */
bool kite_wire_tx_ready(KiteState *s)
{
    return !s->wire.tx_blocked;
}

static void kite_wire_release(KiteState *s)
{
    KiteWire *w = &s->wire;
    KiteFrame *f = w->held;

    if (!f) {
        return;
    }
    w->held = NULL;
    timer_del(w->hold_timer);
    trace_kite_wire_release(f->len);
    kite_wire_out(s, f->data, f->len);
    g_free(f);
}

/* Nothing followed the held frame in time: it goes out alone. */
static void kite_wire_hold_timer_cb(void *opaque)
{
    KiteState *s = opaque;
    bool was;

    if (kite_running(s)) {
        was = kite_io_enter(s);
        kite_wire_release(s);
        kite_io_leave(s, was);
    }
}

/* A frame the engine sends. */
void kite_wire_transmit(KiteState *s, const uint8_t *frame, size_t len)
{
    KiteWire *w = &s->wire;
    struct kite_roce_frame_info fi = { 0 };
    bool faults, roce = false, dup;

    if (!kite_running(s)) {
        return;
    }
    /* Only fault injection and the trace need to know what the frame is. */
    faults = w->drop_ppm || w->dup_ppm || w->reorder_ppm;
    if (faults || trace_event_get_state_backends(TRACE_KITE_ROCE_TX)) {
        roce = kite_roce_frame_peek(frame, len, &fi);
    }
    trace_kite_roce_tx(len, fi.opcode, fi.dqpn, fi.psn);
    if (roce && faults) {
        if (kite_wire_roll(w, w->drop_ppm)) {
            s->cnt.wire_dropped++;
            trace_kite_wire_drop(fi.opcode, fi.dqpn, fi.psn);
            return;
        }
        dup = kite_wire_roll(w, w->dup_ppm);
        if (!w->held && kite_wire_roll(w, w->reorder_ppm)) {
            trace_kite_wire_hold(fi.opcode, fi.dqpn, fi.psn);
            w->held = kite_frame_new(frame, len);
            timer_mod(w->hold_timer,
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

/* ---- lifetime ---------------------------------------------------------- */

/* The data path stops (FATAL, reset): queued and held frames are dropped. */
void kite_wire_stop(KiteState *s)
{
    KiteWire *w = &s->wire;

    qemu_bh_cancel(w->rxq_bh);
    kite_frame_queue_free(&w->rxq);
    w->rxq_len = 0;
    timer_del(w->hold_timer);
    g_free(w->held);
    w->held = NULL;
    w->tx_blocked = false;
}

void kite_wire_init(KiteState *s)
{
    KiteWire *w = &s->wire;

    QSIMPLEQ_INIT(&w->rxq);
    w->rxq_bh = qemu_bh_new_guarded(kite_rxq_bh, s,
                                    &DEVICE(s)->mem_reentrancy_guard);
    w->hold_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, kite_wire_hold_timer_cb,
                                 s);
    kite_wire_seed(w);
}

void kite_wire_cleanup(KiteState *s)
{
    KiteWire *w = &s->wire;

    kite_frame_queue_free(&w->rxq);
    g_free(w->held);
    w->held = NULL;
    timer_free(w->hold_timer);
    qemu_bh_delete(w->rxq_bh);
}

/* ---- QOM properties: fault injection ----------------------------------- */

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

    visit_type_uint64(v, name, &s->wire.seed, errp);
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
    s->wire.seed = val;
    kite_wire_seed(&s->wire);
    trace_kite_wire_prop(name, val);
}

void kite_wire_instance_init(KiteState *s)
{
    s->wire.seed = 1;
    kite_wire_seed(&s->wire);
}

/*
 * Test-only (x-): plain QOM properties of the class rather than qdev
 * properties, so that they can be changed while the guest runs.
 */
void kite_wire_class_init(ObjectClass *klass)
{
    static const struct {
        const char *name;
        size_t off;
        const char *desc;
    } ppm[] = {
        { "x-wire-drop-ppm", offsetof(KiteState, wire.drop_ppm),
          "RoCEv2 frames dropped on transmit, parts per million" },
        { "x-wire-dup-ppm", offsetof(KiteState, wire.dup_ppm),
          "RoCEv2 frames sent twice, parts per million" },
        { "x-wire-reorder-ppm", offsetof(KiteState, wire.reorder_ppm),
          "RoCEv2 frames held back and sent after the next one, "
          "parts per million" },
        { "x-wire-rx-drop-ppm", offsetof(KiteState, wire.rx_drop_ppm),
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
    object_class_property_add(klass, "x-wire-seed", "uint64",
                              kite_wire_get_seed, kite_wire_set_seed,
                              NULL, NULL);
    object_class_property_set_description(klass, "x-wire-seed",
                                          "seed of the wire fault "
                                          "injection's random draws");
}
