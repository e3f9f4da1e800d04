/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: the glue between the device and the
 * RoCEv2 engine (kite_engine.c). The rest of the model reaches the engine
 * through these functions; only kite_engine.c implements the engine's
 * struct kite_roce_ops and holds the re-entrancy guard.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef HW_NET_KITE_ENGINE_H
#define HW_NET_KITE_ENGINE_H

#include "kite/kite_hw.h"
#include "roce/kite_roce.h"

typedef struct KiteState KiteState;
typedef struct KiteQp KiteQp;

/* Packets the engine may send per run of its bottom half. */
#define KITE_ROCE_BUDGET        64
/*
 * Packets a guest's SQ doorbell may send at once, in the vCPU's MMIO
 * handler: a short message leaves without waking the main loop; the rest
 * of a long one goes to the bottom half.
 */
#define KITE_DOORBELL_BUDGET    4

typedef struct KiteEngine {
    KiteRoce *roce;
    QEMUBH *run_bh;             /* kite_roce_run() */
    QEMUBH *stop_bh;            /* kite_engine_stop() deferred past a call */
    unsigned depth;             /* engine calls in progress */
    bool defer_kick;            /* a doorbell is deciding how to run it */
    bool kicked;                /* the engine asked for a run meanwhile */
    bool run_pending;           /* run_bh is scheduled */
} KiteEngine;

void kite_engine_init(KiteState *s);
void kite_engine_cleanup(KiteState *s);
void kite_engine_reset(KiteState *s);
void kite_engine_stop(KiteState *s);
bool kite_engine_busy(KiteState *s);
bool kite_engine_rx(KiteState *s, const uint8_t *buf, size_t size);
void kite_engine_set_port(KiteState *s);
bool kite_engine_qp_create(KiteState *s, KiteQp *qp);
void kite_engine_qp_destroy(KiteState *s, KiteQp *qp);
void kite_engine_qp_fatal(KiteState *s, KiteQp *qp);
void kite_engine_sq_doorbell_now(KiteState *s, KiteQp *qp, uint32_t pi);
void kite_engine_tx_resume(KiteState *s);
void kite_engine_qp_modify(KiteState *s, KiteQp *qp,
                           const struct kite_qp_attr *a, uint32_t mask,
                           uint8_t next);
void kite_engine_doorbell(KiteState *s, KiteQp *qp, bool rq, uint32_t pi);

#endif
