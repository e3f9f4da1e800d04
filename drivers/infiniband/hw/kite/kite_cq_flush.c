// SPDX-License-Identifier: GPL-2.0
/*
 * Kite completion queues on a dead device: the kernel QPs' outstanding
 * WQEs complete in software as flushed, and the CQs' consumers are woken
 * to poll them, since the device posts no CQE or event any more.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "kite_ib.h"
#include "kite_verbs.h"

/*
 * Complete the WQEs outstanding on one queue of a kernel QP with
 * IB_WC_WR_FLUSH_ERR, oldest first; at most @num. Under the CQ's lock.
 */
static int kite_wq_sw_flush(struct kite_qp *qp, bool recv, int num,
			    struct ib_wc *wc)
{
	u8 log_depth = recv ? qp->rq_log_depth : qp->sq_log_depth;
	u32 ci = recv ? qp->rq_ci : qp->sq_ci;
	u32 slot, pi;
	int n;

	if (recv)
		/* Pairs with the release in post_recv: wr_id is set. */
		pi = smp_load_acquire(&qp->rq_pi);
	else
		/* Pairs with the release in post_send: wr_id is set. */
		pi = smp_load_acquire(&qp->sq_pi);
	for (n = 0; n < num && ci != pi; n++, ci++) {
		slot = kite_ring_slot(ci, log_depth);
		memset(&wc[n], 0, sizeof(wc[n]));
		wc[n].wr_id = recv ? qp->rq_wrid[slot] : qp->sq_wrid[slot];
		wc[n].status = IB_WC_WR_FLUSH_ERR;
		wc[n].opcode = recv ? IB_WC_RECV : IB_WC_SEND;
		wc[n].qp = &qp->ibqp;
		wc[n].port_num = KITE_PORT_NUM;
	}
	if (recv)
		/* Free the slots after reading wr_id: pairs with post_recv. */
		smp_store_release(&qp->rq_ci, ci);
	else
		/* Free the slots after reading wr_id: pairs with post_send. */
		smp_store_release(&qp->sq_ci, ci);
	return n;
}

/**
 * kite_cq_sw_flush() - flush completions of a kernel CQ on a dead device
 * @cq: kernel CQ, with cq->lock held
 * @num_entries: size of @wc
 * @wc: completions
 *
 * A device that went fatal (or stopped answering) writes no CQE again, so
 * WQEs posted before or after would never complete and a consumer waiting
 * for them (ib_drain_qp(), a ULP's teardown) would hang. Every WQE still
 * outstanding on the kernel QPs of @cq completes with IB_WC_WR_FLUSH_ERR
 * instead, as the device does for a QP in ERR.
 *
 * Return: the number of completions written to @wc.
 */
int kite_cq_sw_flush(struct kite_cq *cq, int num_entries, struct ib_wc *wc)
{
	struct kite_qp *qp;
	int n = 0;

	lockdep_assert_held(&cq->lock);
	list_for_each_entry(qp, &cq->sq_list, scq_node)
		n += kite_wq_sw_flush(qp, false, num_entries - n, wc + n);
	list_for_each_entry(qp, &cq->rq_list, rcq_node)
		n += kite_wq_sw_flush(qp, true, num_entries - n, wc + n);
	return n;
}

/**
 * kite_cq_sw_pending() - whether kite_cq_sw_flush() has work
 * @cq: kernel CQ, with cq->lock held
 *
 * Return: true when a kernel QP of @cq has a WQE outstanding.
 */
bool kite_cq_sw_pending(struct kite_cq *cq)
{
	struct kite_qp *qp;

	lockdep_assert_held(&cq->lock);
	list_for_each_entry(qp, &cq->sq_list, scq_node)
		if (READ_ONCE(qp->sq_pi) != qp->sq_ci)
			return true;
	list_for_each_entry(qp, &cq->rq_list, rcq_node)
		if (READ_ONCE(qp->rq_pi) != qp->rq_ci)
			return true;
	return false;
}

/**
 * kite_cqs_fatal() - wake the consumers of every kernel CQ
 * @kib: RDMA device that reported a fatal error
 *
 * Runs in the admin interrupt. Calls the comp_handler of each armed kernel
 * CQ once so that its consumer polls and gets the flush completions of
 * kite_cq_sw_flush(); no completion event will come from the device.
 * destroy_cq waits for this interrupt after taking the CQ out of the
 * lookup.
 */
void kite_cqs_fatal(struct kite_ib_dev *kib)
{
	struct kite_cq *cq;
	unsigned long i;

	xa_for_each(&kib->cqs, i, cq)
		if (!cq->uctx && test_and_clear_bit(KITE_CQ_ARMED, &cq->armed) &&
		    cq->ibcq.comp_handler)
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/**
 * kite_cq_flush_work() - call a kernel CQ's comp_handler from a workqueue
 * @work: the CQ's flush_work
 */
void kite_cq_flush_work(struct work_struct *work)
{
	struct kite_cq *cq = container_of(work, struct kite_cq, flush_work);

	if (test_and_clear_bit(KITE_CQ_ARMED, &cq->armed) &&
	    cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/**
 * kite_cq_kick_flush() - have a kernel CQ's consumer poll its flushes
 * @cq: kernel CQ that WQEs were just posted for, on a dead device
 *
 * No completion event comes from a dead device, so a consumer waiting for
 * one (ib_drain_qp() waits for its drain WQE) would wait for ever. If the
 * CQ is armed, its comp_handler runs once, from a workqueue, not from the post_send caller's
 * context, which may hold the locks the handler takes.
 */
void kite_cq_kick_flush(struct kite_cq *cq)
{
	schedule_work(&cq->flush_work);
}
