/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: event queues.
 *
 * EQ 0 is the async EQ, configured by registers at ENABLE and notified on
 * KITE_MSIX_ADMIN; completion EQs (1..) are created by CREATE_EQ with their
 * own vector. An EQ raises its vector once per arm (doorbell KITE_DB_EQ of
 * the kernel doorbell page with KITE_DB_EQ_ARM).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci.h"
#include "kite.h"
#include "trace.h"

void kite_eq_reset(KiteState *s)
{
    memset(s->eq, 0, sizeof(s->eq));
}

/* Sets up EQ @eqn, which the caller has found free; EQs are the kernel's. */
void kite_eq_setup(KiteState *s, uint32_t eqn, uint64_t base,
                   uint8_t log_depth, uint16_t vector)
{
    KiteEq *eq;

    assert(eqn < KITE_DEF_MAX_EQ && !s->eq[eqn].valid);
    eq = &s->eq[eqn];
    memset(eq, 0, sizeof(*eq));
    eq->valid = true;
    eq->base = base;
    eq->log_depth = log_depth;
    eq->vector = vector;
    trace_kite_eq_create(eqn, base, log_depth, vector);
}

void kite_eq_destroy(KiteState *s, uint32_t eqn)
{
    trace_kite_eq_destroy(eqn);
    memset(&s->eq[eqn], 0, sizeof(s->eq[eqn]));
}

static void kite_eq_fire(KiteState *s, uint32_t eqn)
{
    KiteEq *eq = &s->eq[eqn];

    eq->armed = false;
    trace_kite_eq_fire(eqn, eq->vector);
    kite_irq(s, eq->vector);
}

/*
 * Writes one event into EQ @eqn; nothing happens when the EQ is not set up.
 * A full EQ drops the event (counted); an unwritable ring is fatal
 * (KITE_FATAL_EQ_DMA): the EQ is marked invalid first, so the
 * KITE_EVT_DEV_FATAL event kite_fatal() posts skips it when it is EQ 0.
 */
void kite_eq_post(KiteState *s, uint32_t eqn, uint8_t type,
                  uint32_t data, uint32_t data2)
{
    KiteEq *eq;
    struct kite_eqe eqe;
    uint32_t slot;

    if (eqn >= KITE_DEF_MAX_EQ || !s->eq[eqn].valid) {
        return;
    }
    eq = &s->eq[eqn];
    if (kite_ring_used(eq->pi, eq->ci) >= (1u << eq->log_depth)) {
        eq->dropped++;
        s->cnt.eq_dropped++;
        trace_kite_eq_full(eqn, type, data);
        return;
    }
    slot = kite_ring_slot(eq->pi, eq->log_depth);
    memset(&eqe, 0, sizeof(eqe));
    eqe.data = cpu_to_le32(data);
    eqe.data2 = cpu_to_le32(data2);
    eqe.type = type;
    eqe.flags = kite_ring_phase(eq->pi, eq->log_depth) ? KITE_EQE_PHASE : 0;
    trace_kite_eq_post(eqn, eq->pi, type, data, data2);
    if (pci_dma_write(PCI_DEVICE(s), eq->base + (uint64_t)slot * sizeof(eqe),
                      &eqe, sizeof(eqe)) != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: EQ %u ring not writable\n",
                      eqn);
        eq->valid = false;
        kite_fatal(s, KITE_FATAL_EQ_DMA);
        return;
    }
    eq->pi++;
    if (eq->armed) {
        kite_eq_fire(s, eqn);
    }
}

/*
 * KITE_DB_EQ doorbell: records the consumer index and arms the EQ. Arming
 * while entries the driver has not consumed are pending (pi != ci) fires at
 * once, so that no event is left without an interrupt.
 */
void kite_eq_doorbell(KiteState *s, uint32_t page, uint64_t val)
{
    uint32_t eqn = kite_db_num(val);
    uint32_t ci = kite_db_index(val);
    uint8_t flags = kite_db_flags(val);
    KiteEq *eq;

    trace_kite_eq_doorbell(eqn, ci, flags);
    if (page != KITE_DB_KERNEL_PAGE) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "kite: EQ doorbell on user page %u\n", page);
        s->cnt.db_rejected++;
        return;
    }
    if (eqn >= KITE_DEF_MAX_EQ || !s->eq[eqn].valid) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: doorbell for unknown EQ %u\n",
                      eqn);
        s->cnt.db_rejected++;
        return;
    }
    eq = &s->eq[eqn];
    /* The consumer cannot be ahead of the producer. */
    if (kite_ring_used(eq->pi, ci) > (1u << eq->log_depth)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "kite: EQ %u consumer index %u beyond producer %u\n",
                      eqn, ci, eq->pi);
        s->cnt.db_rejected++;
        return;
    }
    eq->ci = ci;
    if (flags & KITE_DB_EQ_ARM) {
        eq->armed = true;
        if (eq->pi != eq->ci) {
            kite_eq_fire(s, eqn);
        }
    }
}
