// SPDX-License-Identifier: GPL-2.0
/*
 * Kite event queues: the async EQ (EQ 0, set up by registers) and the
 * completion EQs (CREATE_EQ, one MSI-X vector each).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/log2.h>

#include "kite.h"
#include "kite_trace.h"

static size_t kite_eq_bytes(u8 log_depth)
{
	return (size_t)sizeof(struct kite_eqe) << log_depth;
}

/**
 * kite_eq_alloc_ring() - allocate and clear an EQ ring
 * @kdev: device
 * @eq: EQ to fill in
 * @log_depth: log2 of the number of entries
 *
 * Return: 0 or -ENOMEM.
 */
int kite_eq_alloc_ring(struct kite_dev *kdev, struct kite_eq *eq,
		       u8 log_depth)
{
	/* Coherent allocations are page aligned, as the device requires. */
	eq->kdev = kdev;
	eq->ring = dma_alloc_coherent(&kdev->pdev->dev, kite_eq_bytes(log_depth),
				      &eq->dma, GFP_KERNEL);
	if (!eq->ring)
		return -ENOMEM;
	eq->log_depth = log_depth;
	eq->ci = 0;
	return 0;
}

void kite_eq_free_ring(struct kite_dev *kdev, struct kite_eq *eq)
{
	if (!eq->ring)
		return;
	dma_free_coherent(&kdev->pdev->dev, kite_eq_bytes(eq->log_depth),
			  eq->ring, eq->dma);
	eq->ring = NULL;
}

/**
 * kite_eq_next() - take the next valid entry of an EQ
 * @eq: EQ
 *
 * Return: the entry (valid until the consumer index is reported to the
 * device by kite_eq_arm()), or NULL when the EQ is empty.
 */
struct kite_eqe *kite_eq_next(struct kite_eq *eq)
{
	struct kite_eqe *eqe = &eq->ring[kite_ring_slot(eq->ci, eq->log_depth)];

	if ((READ_ONCE(eqe->flags) & KITE_EQE_PHASE) !=
	    kite_ring_phase(eq->ci, eq->log_depth))
		return NULL;
	/* Read the entry only after its phase bit. */
	dma_rmb();
	eq->ci++;
	return eqe;
}

/**
 * kite_eq_arm() - report the consumer index and arm the EQ once
 * @kdev: device
 * @eq: EQ
 */
void kite_eq_arm(struct kite_dev *kdev, struct kite_eq *eq)
{
	kite_db_write(kdev, KITE_DB_EQ, eq->eqn, KITE_DB_EQ_ARM, eq->ci);
}

/**
 * kite_aeq_setup() - allocate the async EQ and program its registers
 * @kdev: device, reset and not yet enabled
 *
 * Return: 0 or a negative errno.
 */
int kite_aeq_setup(struct kite_dev *kdev)
{
	struct kite_eq *eq = &kdev->aeq;
	int err;

	err = kite_eq_alloc_ring(kdev, eq, min_t(u8, KITE_EQ_LOG_DEPTH,
						 kdev->max_eq_log));
	if (err)
		return err;
	eq->eqn = KITE_AEQ_NUM;
	eq->vector = KITE_MSIX_ADMIN;
	kite_wr32(kdev, KITE_REG_AEQ_BASE_LO, lower_32_bits(eq->dma));
	kite_wr32(kdev, KITE_REG_AEQ_BASE_HI, upper_32_bits(eq->dma));
	kite_wr32(kdev, KITE_REG_AEQ_LOG_DEPTH, eq->log_depth);
	return 0;
}

/**
 * kite_aeq_process() - handle pending async events and re-arm the EQ
 * @kdev: device
 *
 * Runs in the admin interrupt handler.
 */
void kite_aeq_process(struct kite_dev *kdev)
{
	struct kite_eqe *eqe;

	if (!READ_ONCE(kdev->aeq_ready))
		return;
	while ((eqe = kite_eq_next(&kdev->aeq))) {
		trace_kite_eqe(kdev, kdev->aeq.eqn, kdev->aeq.ci - 1, eqe);
		kite_async_event(kdev, eqe);
	}
	kite_eq_arm(kdev, &kdev->aeq);
}

/**
 * kite_eq_update_ci() - report the consumer index without arming
 * @kdev: device
 * @eq: EQ
 *
 * Frees EQ space while a long run of events is being consumed.
 */
void kite_eq_update_ci(struct kite_dev *kdev, struct kite_eq *eq)
{
	kite_db_write(kdev, KITE_DB_EQ, eq->eqn, 0, eq->ci);
}

/* Completion EQ interrupt: each KITE_EVT_COMPLETION entry names a CQ, which
 * the event client (the RDMA driver) looks up to run its comp_handler
 * here. The consumer index goes back to the device every half EQ, and with
 * the arm at the end.
 */
static irqreturn_t kite_comp_eq_irq(int irq, void *data)
{
	struct kite_eq *eq = data;
	struct kite_dev *kdev = eq->kdev;
	u32 half = (1u << eq->log_depth) / 2;
	struct kite_eqe *eqe;
	u32 n = 0;

	while ((eqe = kite_eq_next(eq))) {
		trace_kite_eqe(kdev, eq->eqn, eq->ci - 1, eqe);
		if (eqe->type == KITE_EVT_COMPLETION)
			kite_comp_event(kdev, le32_to_cpu(eqe->data));
		else
			dev_warn_ratelimited(&kdev->pdev->dev,
					     "EQ %u: unexpected event %u data 0x%x\n",
					     eq->eqn, eqe->type,
					     le32_to_cpu(eqe->data));
		if (++n == half) {
			kite_eq_update_ci(kdev, eq);
			n = 0;
		}
	}
	kite_eq_arm(kdev, eq);
	return IRQ_HANDLED;
}

static void kite_comp_eq_destroy(struct kite_dev *kdev, struct kite_eq *eq)
{
	if (eq->created) {
		/* A dead device is reset before the ring is freed. */
		kite_cmd_destroy_eq(&kdev->admin, eq->eqn);
		eq->created = false;
	}
	if (eq->irq_requested) {
		free_irq(pci_irq_vector(kdev->pdev, eq->vector), eq);
		eq->irq_requested = false;
	}
}

static int kite_comp_eq_create(struct kite_dev *kdev, int idx)
{
	struct kite_eq *eq = &kdev->comp_eqs[idx];
	u16 vector = KITE_MSIX_COMP_BASE + idx;
	u32 log_depth;
	u32 eqn;
	int err;

	/* A CQ has at most one completion event outstanding (arming is
	 * one-shot): room for every CQ the device can hold means no event
	 * is ever dropped for lack of space.
	 */
	log_depth = max_t(u32, KITE_EQ_LOG_DEPTH,
			  order_base_2(kdev->caps.max_cq));
	err = kite_eq_alloc_ring(kdev, eq, min_t(u32, log_depth,
						 kdev->max_eq_log));
	if (err)
		return err;
	eq->vector = vector;
	eq->eqn = idx + 1;
	snprintf(eq->name, sizeof(eq->name), "kite-comp%d@pci:%s", idx,
		 pci_name(kdev->pdev));

	err = kite_cmd_create_eq(&kdev->admin, eq->dma, eq->log_depth, vector,
				 &eqn);
	if (err)
		return err;
	eq->created = true;
	if (eqn != idx + 1) {
		/* The handler finds its EQ by number: keep them equal. */
		dev_err(&kdev->pdev->dev, "CREATE_EQ returned eqn %u, expected %d\n",
			eqn, idx + 1);
		eq->eqn = eqn;
		return -EPROTO;
	}

	err = request_irq(pci_irq_vector(kdev->pdev, vector), kite_comp_eq_irq,
			  0, eq->name, eq);
	if (err)
		return err;
	eq->irq_requested = true;
	kite_eq_arm(kdev, eq);
	return 0;
}

/**
 * kite_comp_eqs_create() - create the completion EQs
 * @kdev: device with the admin queue running
 *
 * One EQ per online CPU, bounded by the MSI-X vectors and the device's
 * max_eq; at least one.
 *
 * Return: 0 or a negative errno (everything created is destroyed then;
 * the rings are freed by kite_comp_eqs_free() after the device reset).
 */
int kite_comp_eqs_create(struct kite_dev *kdev)
{
	int n, i, err;

	n = kdev->num_vectors - KITE_MSIX_COMP_BASE;
	n = min_t(int, n, kdev->caps.max_eq - 1);
	n = min_t(int, n, num_online_cpus());
	n = min_t(int, n, KITE_MSIX_MAX_COMP);
	if (n < 1) {
		dev_err(&kdev->pdev->dev, "no completion EQ possible\n");
		return -ENOSPC;
	}

	for (i = 0; i < n; i++) {
		kdev->num_comp_eqs = i + 1;
		err = kite_comp_eq_create(kdev, i);
		if (err) {
			kite_comp_eqs_destroy(kdev);
			return err;
		}
	}
	return 0;
}

/**
 * kite_comp_eqs_destroy() - destroy the completion EQs, keeping the rings
 * @kdev: device
 */
void kite_comp_eqs_destroy(struct kite_dev *kdev)
{
	int i;

	for (i = kdev->num_comp_eqs - 1; i >= 0; i--)
		kite_comp_eq_destroy(kdev, &kdev->comp_eqs[i]);
}

/**
 * kite_comp_eqs_free() - free the completion EQ rings
 * @kdev: device, reset
 */
void kite_comp_eqs_free(struct kite_dev *kdev)
{
	int i;

	for (i = 0; i < kdev->num_comp_eqs; i++)
		kite_eq_free_ring(kdev, &kdev->comp_eqs[i]);
	kdev->num_comp_eqs = 0;
}
