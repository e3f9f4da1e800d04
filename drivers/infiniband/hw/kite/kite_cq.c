// SPDX-License-Identifier: GPL-2.0
/*
 * Kite completion queues: creation and destruction from user space (ring
 * in pinned user memory) and from the kernel (coherent ring), resizing to
 * a new ring, and the completion and CQ error events.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/log2.h>
#include <rdma/kite-abi.h>
#include <rdma/uverbs_ioctl.h>

#include "kite_ib.h"
#include "kite_ib_trace.h"
#include "kite_verbs.h"

static_assert(sizeof(struct kite_create_cq_req) == 32);
static_assert(sizeof(struct kite_create_cq_resp) == 16);
static_assert(sizeof(struct kite_resize_cq_req) == 24);

/**
 * kite_cq_depth() - ring entries for a request of @cqe completions
 * @cqe: entries asked for
 *
 * Return: the power of two at least @cqe and 2^KITE_MIN_LOG_DEPTH.
 */
u32 kite_cq_depth(u32 cqe)
{
	return roundup_pow_of_two(max_t(u32, cqe, 1u << KITE_MIN_LOG_DEPTH));
}

/*
 * Take the CQ out of the event lookup and wait for event handlers that
 * may have found it before: completion events run in the CQ's EQ
 * interrupt, CQ errors in the admin interrupt.
 */
static void kite_cq_forget(struct kite_ib_dev *kib, struct kite_cq *cq)
{
	xa_erase(&kib->cqs, cq->cqn);
	kite_sync_comp_eq(kib->kdev, cq->eq);
	kite_sync_async_events(kib->kdev);
}

/*
 * The CREATE_CQ request of a user CQ: the first version without dbrec_va,
 * or the whole one when it names a record (which the device must take).
 */
static int kite_cq_req_user(struct kite_ib_dev *kib, struct ib_udata *udata,
			    struct kite_create_cq_req *req)
{
	int err;

	err = kite_udata_get_req_min(udata, req,
				     offsetofend(typeof(*req), buf_len),
				     sizeof(*req));
	if (err)
		return err;
	if ((req->comp_mask & ~KITE_CREATE_CQ_REQ_DBREC) || req->reserved_20 ||
	    udata->outlen < sizeof(struct kite_create_cq_resp))
		return -EINVAL;
	if (req->comp_mask & KITE_CREATE_CQ_REQ_DBREC) {
		if (!kite_dbrec_supported(kib))
			return -EOPNOTSUPP;
		if (udata->inlen < sizeof(*req))
			return -EINVAL;
	} else if (req->dbrec_va) {
		return -EINVAL;
	}
	return 0;
}

/**
 * kite_create_cq() - create a CQ
 * @ibcq: CQ allocated by ib_core
 * @attr: cqe, comp_vector; flags must be 0
 * @arg: for a user CQ, its udata (struct kite_create_cq_req /
 *	 kite_create_cq_resp) or what holds it (<linux/kite/compat.h>); NULL
 *	 for a kernel CQ
 *
 * The completion vector selects one of the driver's completion EQs
 * (comp_vector modulo their number).
 *
 * Return: 0 or a negative errno.
 */
int kite_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   KITE_CREATE_CQ_ARG *arg)
{
	struct ib_udata *udata = kite_create_cq_udata(arg);
	struct kite_ib_dev *kib = to_kib(ibcq->device);
	struct kite_create_cq_resp resp = {};
	struct kite_create_cq_req req = {};
	struct kite_cq *cq = to_kcq(ibcq);
	size_t bytes;
	u32 depth;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (!attr->cqe || attr->cqe > kib->kdev->caps.max_cqe)
		return -EINVAL;
	if (!kib->kdev->num_comp_eqs ||
	    attr->comp_vector >= kib->ibdev.num_comp_vectors)
		return -EINVAL;
	depth = kite_cq_depth(attr->cqe);
	if (depth > kib->kdev->caps.max_cqe)
		return -EINVAL;
	cq->log_depth = ilog2(depth);
	bytes = (size_t)depth * sizeof(struct kite_cqe);

	if (udata) {
		err = kite_cq_req_user(kib, udata, &req);
		if (err)
			return err;
		cq->uctx = kite_udata_uctx(udata);
		err = kite_ring_get_user(kib, &cq->ring, req.buf_va,
					 req.buf_len, bytes);
		if (!err && (req.comp_mask & KITE_CREATE_CQ_REQ_DBREC)) {
			err = kite_dbrec_get_user(kib, &cq->dbrec, req.dbrec_va,
						  sizeof(struct kite_cq_dbrec));
			if (err)
				kite_ring_free(kib, &cq->ring);
		}
	} else {
		err = kite_ring_alloc_kernel(kib, &cq->ring, bytes);
	}
	if (err)
		return err;

	spin_lock_init(&cq->lock);
	INIT_LIST_HEAD(&cq->sq_list);
	INIT_LIST_HEAD(&cq->rq_list);
	INIT_WORK(&cq->flush_work, kite_cq_flush_work);
	cq->eq = &kib->kdev->comp_eqs[attr->comp_vector % kib->kdev->num_comp_eqs];
	err = kite_cmd_create_cq(&kib->kdev->admin, cq->uctx, &cq->ring.pbl.desc,
				 cq->log_depth, cq->eq->eqn, cq->dbrec.dma,
				 &cq->cqn);
	if (err)
		goto err_ring;
	ibcq->cqe = depth;
	err = xa_insert(&kib->cqs, cq->cqn, cq, GFP_KERNEL);
	if (err)
		goto err_destroy;

	if (udata) {
		resp.cqn = cq->cqn;
		resp.depth = depth;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_erase;
	}
	return 0;

err_erase:
	kite_cq_forget(kib, cq);
err_destroy:
	kite_cmd_destroy_cq(&kib->kdev->admin, cq->uctx, cq->cqn);
err_ring:
	kite_dbrec_put(&cq->dbrec);
	kite_ring_free(kib, &cq->ring);
	return err;
}

/**
 * kite_destroy_cq() - destroy a CQ
 * @ibcq: CQ
 * @udata: user data (unused)
 *
 * Once the device has let the CQ go, no event handler can find it any
 * more and none still runs with it (kite_cq_forget()).
 *
 * Return: 0, or the device's error while it still holds the CQ (ib_core
 * keeps the CQ, and its ring stays allocated, until a later destroy
 * succeeds). A dead device holds nothing: the ring is freed.
 */
int kite_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct kite_ib_dev *kib = to_kib(ibcq->device);
	struct kite_cq *cq = to_kcq(ibcq);
	int err;

	err = kite_cmd_destroy_cq(&kib->kdev->admin, cq->uctx, cq->cqn);
	if (err && !kite_admin_is_dead(&kib->kdev->admin))
		return err;
	kite_cq_forget(kib, cq);
	cancel_work_sync(&cq->flush_work);
	kite_ring_free(kib, &cq->old_ring);
	kite_ring_free(kib, &cq->ring);
	kite_dbrec_put(&cq->dbrec);
	return 0;
}

/**
 * kite_resize_cq() - move a CQ to a new ring of another depth
 * @ibcq: CQ
 * @cqe: entries asked for; rounded as for create
 * @udata: user CQ: struct kite_resize_cq_req naming the new ring
 *
 * The new ring (coherent for kernel CQs, pinned user memory for user CQs)
 * is handed to the device with MODIFY_CQ; the device refuses a depth that
 * cannot hold the CQEs not yet consumed (-EINVAL) and keeps the arm. It
 * finishes the old ring at the final producer index it returns and
 * writes the next CQE at index 0 of the new ring. A user CQ's provider
 * polls the rest of its old ring itself, so the old ring is unpinned at
 * once. A kernel CQ keeps its old ring until kite_poll_cq() has consumed
 * it up to that index; a second resize before then fails with -EBUSY.
 *
 * Return: 0 or a negative errno.
 */
int kite_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct kite_ib_dev *kib = to_kib(ibcq->device);
	struct kite_resize_cq_req req = {};
	struct kite_cq *cq = to_kcq(ibcq);
	struct kite_ring ring = {};
	unsigned long flags;
	size_t bytes;
	u32 depth, old_pi;
	int err;

	if (cqe <= 0 || cqe > kib->kdev->caps.max_cqe)
		return -EINVAL;
	depth = kite_cq_depth(cqe);
	if (depth > kib->kdev->caps.max_cqe)
		return -EINVAL;
	bytes = (size_t)depth * sizeof(struct kite_cqe);

	if (udata) {
		err = kite_udata_get_req(udata, &req, sizeof(req));
		if (err)
			return err;
		if (req.comp_mask || req.reserved_20)
			return -EINVAL;
		err = kite_ring_get_user(kib, &ring, req.buf_va, req.buf_len,
					 bytes);
	} else {
		/* ib_core serializes resize against itself, not poll_cq. */
		spin_lock_irqsave(&cq->lock, flags);
		err = cq->draining || cq->resizing ? -EBUSY : 0;
		/*
		 * Until the new ring is in place poll_cq reports no consumer
		 * index: once MODIFY_CQ ran, the device would take an index
		 * of the old ring as one of the new.
		 */
		cq->resizing = !err;
		spin_unlock_irqrestore(&cq->lock, flags);
		if (err)
			return err;
		/* The previous old ring, fully polled. */
		kite_ring_free(kib, &cq->old_ring);
		err = kite_ring_alloc_kernel(kib, &ring, bytes);
	}
	if (err)
		goto err_resizing;

	err = kite_cmd_modify_cq(&kib->kdev->admin, cq->uctx, cq->cqn,
				 &ring.pbl.desc, ilog2(depth), &old_pi);
	if (err) {
		kite_ring_free(kib, &ring);
		goto err_resizing;
	}

	if (udata) {
		kite_ring_free(kib, &cq->ring);
		cq->ring = ring;
		cq->log_depth = ilog2(depth);
		cq->ci = 0;
	} else {
		spin_lock_irqsave(&cq->lock, flags);
		cq->old_ring = cq->ring;
		cq->old_log_depth = cq->log_depth;
		cq->old_pi = old_pi;
		cq->draining = cq->ci != old_pi;
		cq->ring = ring;
		cq->log_depth = ilog2(depth);
		if (cq->draining) {
			/* Polling goes on in the old ring up to old_pi. */
			swap(cq->ring, cq->old_ring);
			swap(cq->log_depth, cq->old_log_depth);
		} else {
			cq->ci = 0;
		}
		cq->ci_reported = 0;
		kite_cq_end_resize(kib, cq);
		spin_unlock_irqrestore(&cq->lock, flags);
	}
	ibcq->cqe = depth;
	return 0;

err_resizing:
	if (!udata) {
		spin_lock_irqsave(&cq->lock, flags);
		kite_cq_end_resize(kib, cq);
		spin_unlock_irqrestore(&cq->lock, flags);
	}
	return err;
}

/**
 * kite_cq_comp_event() - a completion event for CQ @cqn
 * @kib: RDMA device
 * @cqn: CQ number from the EQE
 *
 * Runs in the completion EQ interrupt and calls the CQ's comp_handler
 * (set by ib_core for kernel CQs, by ib_uverbs for user CQs).
 */
void kite_cq_comp_event(struct kite_ib_dev *kib, u32 cqn)
{
	struct kite_cq *cq = xa_load(&kib->cqs, cqn);

	if (!cq) {
		dev_dbg_ratelimited(kite_ib_dmadev(kib),
				    "completion event for unknown CQ %u\n", cqn);
		return;
	}
	clear_bit(KITE_CQ_ARMED, &cq->armed);
	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/**
 * kite_cq_async_event() - KITE_EVT_CQ_ERR for CQ @cqn
 * @kib: RDMA device
 * @cqn: CQ number from the EQE
 *
 * Runs in the admin interrupt; dispatches IB_EVENT_CQ_ERR to the CQ's
 * event handler. The CQ stays in error until destroyed.
 */
void kite_cq_async_event(struct kite_ib_dev *kib, u32 cqn)
{
	struct kite_cq *cq = xa_load(&kib->cqs, cqn);
	struct ib_event ev = {
		.device = &kib->ibdev,
		.event = IB_EVENT_CQ_ERR,
	};

	trace_kite_ib_cq_event(kib, cqn, ev.event, cq);
	if (!cq) {
		dev_warn_ratelimited(kite_ib_dmadev(kib),
				     "CQ error event for unknown CQ %u\n", cqn);
		return;
	}
	dev_warn_ratelimited(kite_ib_dmadev(kib),
			     "CQ %u overflowed or is not writable: in error\n",
			     cqn);
	ev.element.cq = &cq->ibcq;
	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

#if IS_ENABLED(CONFIG_INFINIBAND_KITE_KUNIT_TEST)
/**
 * kite_test_query_cq() - the device's view of a CQ (KUnit)
 * @ibcq: CQ
 * @info: what QUERY_CQ answers
 *
 * Return: 0 or a negative errno.
 */
int kite_test_query_cq(struct ib_cq *ibcq, struct kite_cq_info *info)
{
	struct kite_cq *cq = to_kcq(ibcq);

	return kite_cmd_query_cq(&to_kib(ibcq->device)->kdev->admin, cq->uctx,
				 cq->cqn, info);
}
#endif /* CONFIG_INFINIBAND_KITE_KUNIT_TEST */
