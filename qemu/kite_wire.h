/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: the wire between the RoCEv2 engine and the
 * port (kite_wire.c). Frames the engine sends pass the transmit fault
 * stage and leave on the netdev, or loop back to the port's own receive
 * path through the receive queue; frames from the netdev pass the receive
 * fault stage and wait in the receive queue while the engine is running.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef HW_NET_KITE_WIRE_H
#define HW_NET_KITE_WIRE_H

#include "qemu/queue.h"
#include "qemu/timer.h"
#include "qom/object.h"

typedef struct KiteState KiteState;

/* A frame waiting in one of the device's queues. */
typedef struct KiteFrame {
    QSIMPLEQ_ENTRY(KiteFrame) next;
    size_t len;
    uint8_t data[];
} KiteFrame;

typedef QSIMPLEQ_HEAD(, KiteFrame) KiteFrameQueue;

/* Frames for the port's own receive path (loopback, deferred RX). */
#define KITE_RXQ_MAX            1024
/* A frame held back for reordering is sent at the latest after this. */
#define KITE_WIRE_HOLD_NS       (100 * SCALE_US)
#define KITE_WIRE_PPM_MAX       1000000u

typedef struct KiteWire {
    /* Fault injection (x-wire-* QOM properties, settable at run time). */
    uint32_t drop_ppm, dup_ppm, reorder_ppm;
    uint32_t rx_drop_ppm;       /* RoCEv2 frames dropped on receive */
    uint64_t seed;
    uint64_t rng;               /* xorshift64 state, from seed */
    KiteFrame *held;            /* frame held back for reordering */
    QEMUTimer *hold_timer;      /* sends held if nothing follows */

    /* The port's receive queue: loopback and deferred received frames. */
    KiteFrameQueue rxq;
    uint32_t rxq_len;
    bool rxq_delivering;        /* kite_rxq_bh() is delivering a frame */
    QEMUBH *rxq_bh;             /* delivers rxq to the port */

    /*
     * The netdev queued a frame instead of taking it: the engine sends no
     * more until that frame has left (kite_wire_tx_done()).
     */
    bool tx_blocked;
} KiteWire;

KiteFrame *kite_frame_new(const uint8_t *buf, size_t len);
void kite_frame_queue_free(KiteFrameQueue *q);

void kite_wire_init(KiteState *s);
void kite_wire_cleanup(KiteState *s);
void kite_wire_stop(KiteState *s);
void kite_wire_instance_init(KiteState *s);
void kite_wire_class_init(ObjectClass *klass);
void kite_wire_transmit(KiteState *s, const uint8_t *frame, size_t len);
bool kite_wire_tx_ready(KiteState *s);
bool kite_wire_receive(KiteState *s, const uint8_t *buf, size_t size);

#endif
