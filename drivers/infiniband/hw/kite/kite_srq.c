// SPDX-License-Identifier: GPL-2.0
/*
 * Kite shared receive queues: creation (kernel and user rings), limit
 * arming, query and destruction, post_srq_recv for kernel consumers, the
 * retirement of an SRQ WQE when its receive completes on a kernel QP, and
 * the SRQ events of the async EQ.
 *
 * The device takes SRQ WQEs along the next links of the WQE headers
 * (hardware.rst, "Shared receive queues"). A kernel SRQ keeps its free
 * slots as a list through those links with one slot always spare: a post
 * fills the list's head, a completion appends its slot at the tail, so
 * WQEs completing in any order across QPs are reused at once.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/bitmap.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <rdma/kite-abi.h>

#include "kite_ib.h"
#include "kite_verbs.h"

static_assert(sizeof(struct kite_create_srq_req) == 24);
static_assert(sizeof(struct kite_create_srq_resp) == 16);
/* MODIFY_SRQ's mask bits are ib_core's. */
static_assert(KITE_SRQ_ATTR_MAX_WR == IB_SRQ_MAX_WR);
static_assert(KITE_SRQ_ATTR_LIMIT == IB_SRQ_LIMIT);

/* The device offers SRQs (ABI 1.4 and the capability flag). */
bool kite_has_srq(const struct kite_ib_dev *kib)
{
	const struct kite_caps *caps = &kib->kdev->caps;

	return (caps->cap_flags & KITE_DEV_CAP_SRQ) && caps->max_srq &&
	       caps->max_srq_wr && caps->max_srq_sge;
}

/* The header of the WQE in @slot of a kernel SRQ. */
static struct kite_rq_wqe_hdr *kite_srq_wqe(struct kite_srq *srq, u32 slot)
{
	return srq->ring.buf + ((size_t)slot << srq->log_stride);
}

/* Check the request against the device and size the ring. */
static int kite_srq_size(struct kite_ib_dev *kib, struct kite_srq *srq,
			 const struct ib_srq_attr *attr)
{
	const struct kite_caps *caps = &kib->kdev->caps;
	u32 depth;

	if (!attr->max_wr || attr->max_wr > caps->max_srq_wr ||
	    attr->max_sge > caps->max_srq_sge ||
	    attr->srq_limit > attr->max_wr)
		return -EINVAL;
	/* One slot more than max_wr: the free list keeps one spare. */
	depth = kite_cq_depth(attr->max_wr + 1);
	if (depth - 1 > caps->max_srq_wr ||
	    depth > BIT(KITE_SRQ_MAX_LOG_DEPTH))
		return -EINVAL;
	srq->log_depth = ilog2(depth);
	srq->log_stride = kite_rq_log_stride(attr->max_sge);
	if (srq->log_stride > KITE_RQ_MAX_LOG_STRIDE)
		return -EINVAL;
	srq->max_sge = min_t(u32, kite_rq_room(srq->log_stride) /
			     sizeof(struct kite_sge), caps->max_srq_sge);
	return 0;
}

/* What the SRQ holds: WQEs (one slot stays spare) and SGEs per WQE. */
static void kite_srq_fill_attr(const struct kite_srq *srq,
			       struct ib_srq_attr *attr)
{
	attr->max_wr = (1u << srq->log_depth) - 1;
	attr->max_sge = srq->max_sge;
}

static int kite_srq_ring_user(struct kite_ib_dev *kib, struct kite_srq *srq,
			      struct ib_udata *udata)
{
	struct kite_create_srq_req req = {};
	int err;

	err = kite_udata_get_req(udata, &req, sizeof(req));
	if (err)
		return err;
	if (req.comp_mask || req.reserved_20 ||
	    udata->outlen < sizeof(struct kite_create_srq_resp))
		return -EINVAL;
	return kite_ring_get_user(kib, &srq->ring, req.buf_va, req.buf_len,
				  (size_t)1 << (srq->log_depth +
						srq->log_stride));
}

static void kite_srq_free_kernel(struct kite_srq *srq)
{
	bitmap_free(srq->busy);
	kfree(srq->wrid);
	srq->busy = NULL;
	srq->wrid = NULL;
}

/* A kernel SRQ: its ring with the free list linked, wr_ids, busy slots. */
static int kite_srq_ring_kernel(struct kite_ib_dev *kib, struct kite_srq *srq)
{
	u32 depth = 1u << srq->log_depth;
	u32 i;
	int err;

	spin_lock_init(&srq->lock);
	srq->wrid = kcalloc(depth, sizeof(*srq->wrid), GFP_KERNEL);
	srq->busy = bitmap_zalloc(depth, GFP_KERNEL);
	if (!srq->wrid || !srq->busy) {
		err = -ENOMEM;
		goto err_free;
	}
	err = kite_ring_alloc_kernel(kib, &srq->ring,
				     (size_t)depth << srq->log_stride);
	if (err)
		goto err_free;
	for (i = 0; i < depth; i++)
		kite_srq_wqe(srq, i)->next = cpu_to_le16((i + 1) % depth);
	srq->head = 0;
	srq->tail = depth - 1;
	return 0;

err_free:
	kite_srq_free_kernel(srq);
	return err;
}

/**
 * kite_create_srq() - create a shared receive queue
 * @ibsrq: SRQ allocated by ib_core
 * @init: type, WQE and SGE counts, limit; updated to what the SRQ holds
 * @udata: user SRQ: struct kite_create_srq_req / kite_create_srq_resp
 *
 * Return: 0, -EOPNOTSUPP (no SRQ on this device, an XRC or tag-matching
 * SRQ), -EINVAL (counts beyond the device's, a limit above max_wr, bad
 * udata) or another negative errno.
 */
int kite_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata)
{
	struct kite_ib_dev *kib = to_kib(ibsrq->device);
	struct kite_srq *srq = to_ksrq(ibsrq);
	struct kite_create_srq_resp resp = {};
	struct kite_srq_create_params p = {};
	int err;

	if (!kite_has_srq(kib) || init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	err = kite_srq_size(kib, srq, &init->attr);
	if (err)
		return err;
	srq->uctx = kite_udata_uctx(udata);
	if (udata)
		err = kite_srq_ring_user(kib, srq, udata);
	else
		err = kite_srq_ring_kernel(kib, srq);
	if (err)
		return err;

	p.pdn = to_kpd(ibsrq->pd)->pdn;
	p.log_depth = srq->log_depth;
	p.log_stride = srq->log_stride;
	p.limit = init->attr.srq_limit;
	p.ring = &srq->ring.pbl.desc;
	err = kite_cmd_create_srq(&kib->kdev->admin, srq->uctx, &p, &srq->srqn);
	if (err)
		goto err_ring;
	err = xa_insert(&kib->srqs, srq->srqn, srq, GFP_KERNEL);
	if (err)
		goto err_destroy;
	if (udata) {
		resp.srqn = srq->srqn;
		resp.depth = 1u << srq->log_depth;
		resp.stride = 1u << srq->log_stride;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_erase;
	}
	kite_srq_fill_attr(srq, &init->attr);
	return 0;

err_erase:
	xa_erase(&kib->srqs, srq->srqn);
err_destroy:
	kite_cmd_destroy_srq(&kib->kdev->admin, srq->uctx, srq->srqn);
err_ring:
	kite_ring_free(kib, &srq->ring);
	kite_srq_free_kernel(srq);
	return err;
}

/**
 * kite_modify_srq() - arm the SRQ limit
 * @ibsrq: SRQ
 * @attr: srq_limit (0 disarms)
 * @mask: IB_SRQ_LIMIT; IB_SRQ_MAX_WR (resize) is not supported
 * @udata: user SRQ: no driver data
 *
 * Return: 0, -EOPNOTSUPP for a resize, -EINVAL for a limit above max_wr or
 * an unknown mask bit, or another negative errno.
 */
int kite_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct kite_ib_dev *kib = to_kib(ibsrq->device);
	struct kite_srq *srq = to_ksrq(ibsrq);

	if (udata && !kite_udata_in_ok(udata))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & ~IB_SRQ_LIMIT)
		return -EINVAL;
	if (!mask)
		return 0;
	if (attr->srq_limit >= 1u << srq->log_depth)
		return -EINVAL;
	return kite_cmd_modify_srq(&kib->kdev->admin, srq->uctx, srq->srqn,
				   KITE_SRQ_ATTR_LIMIT, attr->srq_limit);
}

int kite_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct kite_ib_dev *kib = to_kib(ibsrq->device);
	struct kite_srq *srq = to_ksrq(ibsrq);
	struct kite_srq_info info;
	int err;

	err = kite_cmd_query_srq(&kib->kdev->admin, srq->uctx, srq->srqn,
				 &info);
	if (err)
		return err;
	kite_srq_fill_attr(srq, attr);
	attr->srq_limit = info.limit;
	return 0;
}

/**
 * kite_destroy_srq() - destroy an SRQ no QP uses any more
 * @ibsrq: SRQ
 * @udata: user SRQ: unused
 *
 * ib_core destroys the QPs on an SRQ first; the device refuses otherwise.
 * The SRQ leaves the event lookup before its memory goes.
 *
 * Return: 0 or a negative errno from DESTROY_SRQ.
 */
int kite_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct kite_ib_dev *kib = to_kib(ibsrq->device);
	struct kite_srq *srq = to_ksrq(ibsrq);
	int err;

	err = kite_cmd_destroy_srq(&kib->kdev->admin, srq->uctx, srq->srqn);
	/* A dead device destroys nothing: the memory may go. */
	if (err && !kite_admin_is_dead(&kib->kdev->admin))
		return err;
	xa_erase(&kib->srqs, srq->srqn);
	kite_sync_async_events(kib->kdev);
	kite_ring_free(kib, &srq->ring);
	kite_srq_free_kernel(srq);
	return 0;
}

/**
 * kite_post_srq_recv() - post receive work requests to a kernel SRQ
 * @ibsrq: SRQ
 * @wr: first work request of the list
 * @bad_wr: the first request not posted, on error
 *
 * Return: 0; -EINVAL for a user SRQ or too many SGEs; -ENOMEM when every
 * slot but the spare holds a WQE. Requests before *@bad_wr were posted.
 */
int kite_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct kite_ib_dev *kib = to_kib(ibsrq->device);
	struct kite_srq *srq = to_ksrq(ibsrq);
	struct kite_rq_wqe_hdr *hdr;
	struct kite_sge *sge;
	unsigned long flags;
	u32 pi, slot;
	int err = 0;
	int i;

	if (!srq->wrid) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->lock, flags);
	pi = srq->pi;
	for (; wr; wr = wr->next) {
		if (srq->head == srq->tail) {
			err = -ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || wr->num_sge > srq->max_sge) {
			err = -EINVAL;
			break;
		}
		slot = srq->head;
		hdr = kite_srq_wqe(srq, slot);
		/* The slot keeps its link: it is the free list's order. */
		srq->head = le16_to_cpu(hdr->next);
		hdr->num_sge = wr->num_sge;
		sge = (struct kite_sge *)(hdr + 1);
		for (i = 0; i < wr->num_sge; i++)
			kite_set_sge(&sge[i], &wr->sg_list[i]);
		srq->wrid[slot] = wr->wr_id;
		__set_bit(slot, srq->busy);
		pi++;
	}
	if (pi != srq->pi) {
		srq->pi = pi;
		/* The WQEs must be in memory before the device hears of them. */
		wmb();
		kite_db_write(kib->kdev, KITE_DB_SRQ, srq->srqn, 0, pi);
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

/**
 * kite_srq_retire() - a receive of a kernel QP on @srq completed
 * @srq: the QP's SRQ
 * @slot: the CQE's wqe_idx
 * @wr_id: the WQE's wr_id
 *
 * The slot goes to the tail of the free list. Called by poll_cq under the
 * CQ's lock.
 *
 * Return: false for a slot that holds no posted WQE (the CQE is dropped).
 */
bool kite_srq_retire(struct kite_srq *srq, u32 slot, u64 *wr_id)
{
	unsigned long flags;
	bool ok = false;

	if (!srq->wrid || slot >= 1u << srq->log_depth)
		return false;
	spin_lock_irqsave(&srq->lock, flags);
	if (__test_and_clear_bit(slot, srq->busy)) {
		*wr_id = srq->wrid[slot];
		kite_srq_wqe(srq, srq->tail)->next = cpu_to_le16(slot);
		srq->tail = slot;
		ok = true;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	return ok;
}

/**
 * kite_srq_async_event() - an SRQ event from the async EQ
 * @kib: RDMA device
 * @srqn: SRQ number from the EQE
 * @type: KITE_EVT_SRQ_LIMIT or KITE_EVT_SRQ_ERR
 *
 * Runs in the admin interrupt; dispatches IB_EVENT_SRQ_LIMIT_REACHED (the
 * device disarmed the limit) or IB_EVENT_SRQ_ERR to the SRQ's handler.
 */
void kite_srq_async_event(struct kite_ib_dev *kib, u32 srqn, u8 type)
{
	struct kite_srq *srq = xa_load(&kib->srqs, srqn);
	struct ib_event ev = {
		.device = &kib->ibdev,
		.event = type == KITE_EVT_SRQ_LIMIT ?
			 IB_EVENT_SRQ_LIMIT_REACHED : IB_EVENT_SRQ_ERR,
	};

	if (!srq) {
		dev_dbg_ratelimited(kite_ib_dmadev(kib),
				    "event %u for unknown SRQ %u\n", type, srqn);
		return;
	}
	if (type == KITE_EVT_SRQ_ERR)
		dev_dbg_ratelimited(kite_ib_dmadev(kib), "SRQ %u: %s\n", srqn,
				    ib_event_msg(ev.event));
	ev.element.srq = &srq->ibsrq;
	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}
