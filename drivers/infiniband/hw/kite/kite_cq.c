// SPDX-License-Identifier: GPL-2.0
/*
 * Kite completion queues: creation and destruction from user space (ring
 * in pinned user memory) and from the kernel (coherent ring); arming of
 * kernel CQs through the CQ doorbell; resizing to a new ring. Polling comes
 * with the data path.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/log2.h>
#include <rdma/kite-abi.h>

#include "kite.h"
#include "kite_verbs.h"

static_assert(sizeof(struct kite_create_cq_req) == 24);
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

static int kite_cmd_create_cq(struct kite_dev *kdev, struct kite_cq *cq,
			      u32 eqn)
{
	struct kite_aq_cqe cqe;
	struct kite_aq_cmd cmd;
	int err;

	kite_enc_hdr(&cmd, KITE_CMD_CREATE_CQ, cq->uctx);
	cmd.create_cq.ring = cq->ring.pbl.desc;
	cmd.create_cq.log_depth = cq->log_depth;
	cmd.create_cq.eqn = cpu_to_le16(eqn);
	err = kite_admin_exec(&kdev->admin, &cmd, NULL, 0, &cqe);
	if (err)
		return err;
	cq->cqn = le32_to_cpu(cqe.out[0]);
	return 0;
}

/**
 * kite_create_cq() - create a CQ
 * @ibcq: CQ allocated by ib_core
 * @attr: cqe, comp_vector; flags must be 0
 * @udata: user CQ: struct kite_create_cq_req / kite_create_cq_resp
 *
 * The completion vector selects one of the driver's completion EQs
 * (comp_vector modulo their number).
 *
 * Return: 0 or a negative errno.
 */
int kite_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata)
{
	struct kite_dev *kdev = to_kdev(ibcq->device);
	struct kite_create_cq_resp resp = {};
	struct kite_create_cq_req req = {};
	struct kite_cq *cq = to_kcq(ibcq);
	size_t bytes;
	u32 depth;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (!attr->cqe || attr->cqe > kdev->caps.max_cqe)
		return -EINVAL;
	if (!kdev->num_comp_eqs ||
	    attr->comp_vector >= kdev->ibdev.num_comp_vectors)
		return -EINVAL;
	depth = kite_cq_depth(attr->cqe);
	if (depth > kdev->caps.max_cqe)
		return -EINVAL;
	cq->log_depth = ilog2(depth);
	bytes = (size_t)depth * sizeof(struct kite_cqe);

	if (udata) {
		err = kite_udata_get_req(udata, &req, sizeof(req));
		if (err)
			return err;
		if (req.comp_mask || req.reserved_20)
			return -EINVAL;
		if (udata->outlen < sizeof(resp))
			return -EINVAL;
		cq->uctx = kite_udata_uctx(udata);
		err = kite_ring_get_user(kdev, &cq->ring, req.buf_va,
					 req.buf_len, bytes);
	} else {
		err = kite_ring_alloc_kernel(kdev, &cq->ring, bytes);
	}
	if (err)
		return err;

	err = kite_cmd_create_cq(kdev, cq, kdev->comp_eqs[attr->comp_vector %
				 kdev->num_comp_eqs].eqn);
	if (err)
		goto err_ring;
	ibcq->cqe = depth;

	if (udata) {
		resp.cqn = cq->cqn;
		resp.depth = depth;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_destroy;
	}
	return 0;

err_destroy:
	kite_cmd_destroy(&kdev->admin, KITE_CMD_DESTROY_CQ, cq->uctx, cq->cqn);
err_ring:
	kite_ring_free(kdev, &cq->ring);
	return err;
}

/**
 * kite_destroy_cq() - destroy a CQ
 * @ibcq: CQ
 * @udata: user data (unused)
 *
 * Return: 0, or the device's error while it still holds the CQ (ib_core
 * keeps the CQ, and its ring stays allocated, until a later destroy
 * succeeds). A dead device holds nothing: the ring is freed.
 */
int kite_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct kite_dev *kdev = to_kdev(ibcq->device);
	struct kite_cq *cq = to_kcq(ibcq);
	int err;

	err = kite_cmd_destroy(&kdev->admin, KITE_CMD_DESTROY_CQ, cq->uctx,
			       cq->cqn);
	if (err && !kite_admin_is_dead(&kdev->admin))
		return err;
	kite_ring_free(kdev, &cq->ring);
	return 0;
}

static int kite_cmd_modify_cq(struct kite_dev *kdev, struct kite_cq *cq,
			      const struct kite_ring *ring, u8 log_depth)
{
	struct kite_aq_cmd cmd;

	kite_enc_hdr(&cmd, KITE_CMD_MODIFY_CQ, cq->uctx);
	cmd.modify_cq.cqn = cpu_to_le32(cq->cqn);
	cmd.modify_cq.ring = ring->pbl.desc;
	cmd.modify_cq.log_depth = log_depth;
	return kite_admin_exec(&kdev->admin, &cmd, NULL, 0, NULL);
}

/**
 * kite_resize_cq() - move a CQ to a new ring of another depth
 * @ibcq: CQ
 * @cqe: entries asked for; rounded as for create
 * @udata: user CQ: struct kite_resize_cq_req naming the new ring
 *
 * The new ring (coherent for kernel CQs, pinned user memory for user CQs)
 * is handed to the device with MODIFY_CQ; the old one is freed only once
 * the device has accepted the new one. The device keeps the arm and
 * refuses a depth that cannot hold the CQEs not yet consumed (-EINVAL).
 *
 * Return: 0 or a negative errno.
 */
int kite_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct kite_dev *kdev = to_kdev(ibcq->device);
	struct kite_resize_cq_req req = {};
	struct kite_cq *cq = to_kcq(ibcq);
	struct kite_ring ring = {};
	size_t bytes;
	u32 depth;
	int err;

	if (cqe <= 0 || cqe > kdev->caps.max_cqe)
		return -EINVAL;
	depth = kite_cq_depth(cqe);
	if (depth > kdev->caps.max_cqe)
		return -EINVAL;
	bytes = (size_t)depth * sizeof(struct kite_cqe);

	if (udata) {
		err = kite_udata_get_req(udata, &req, sizeof(req));
		if (err)
			return err;
		if (req.comp_mask || req.reserved_20)
			return -EINVAL;
		err = kite_ring_get_user(kdev, &ring, req.buf_va, req.buf_len,
					 bytes);
	} else {
		err = kite_ring_alloc_kernel(kdev, &ring, bytes);
	}
	if (err)
		return err;

	err = kite_cmd_modify_cq(kdev, cq, &ring, ilog2(depth));
	if (err) {
		kite_ring_free(kdev, &ring);
		return err;
	}
	kite_ring_free(kdev, &cq->ring);
	cq->ring = ring;
	cq->log_depth = ilog2(depth);
	cq->ci = 0;
	ibcq->cqe = depth;
	return 0;
}

/**
 * kite_cmd_query_cq() - QUERY_CQ
 * @kdev: device
 * @cq: CQ
 * @out: the device's answer, indexed by KITE_CQ_QUERY_*
 *
 * Return: 0 or a negative errno.
 */
int kite_cmd_query_cq(struct kite_dev *kdev, struct kite_cq *cq,
		      u32 out[KITE_CQ_QUERY_PI + 1])
{
	struct kite_aq_cqe cqe;
	struct kite_aq_cmd cmd;
	int err;
	int i;

	kite_enc_hdr(&cmd, KITE_CMD_QUERY_CQ, cq->uctx);
	cmd.query_obj.handle = cpu_to_le32(cq->cqn);
	err = kite_admin_exec(&kdev->admin, &cmd, NULL, 0, &cqe);
	if (err)
		return err;
	for (i = 0; i <= KITE_CQ_QUERY_PI; i++)
		out[i] = le32_to_cpu(cqe.out[i]);
	return 0;
}

/**
 * kite_req_notify_cq() - arm a kernel CQ
 * @ibcq: CQ (kernel CQs only: user CQs ring their doorbell themselves)
 * @flags: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, optionally
 *	   IB_CQ_REPORT_MISSED_EVENTS
 *
 * Writes the CQ doorbell on doorbell page 0 with the driver's consumer
 * index and ARM_SOLICITED or ARM_NEXT. The device posts the completion
 * event at once when CQEs beyond that index exist.
 *
 * IB_CQ_REPORT_MISSED_EVENTS: the driver consumes no CQEs yet (there is
 * no poll_cq before the data path), so no completion can be pending
 * between the consumer index and the device's producer index that the
 * caller would miss; the function always returns 0.
 *
 * Return: 0.
 */
int kite_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct kite_dev *kdev = to_kdev(ibcq->device);
	struct kite_cq *cq = to_kcq(ibcq);
	u8 arm;

	if ((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED)
		arm = KITE_DB_CQ_ARM_SOLICITED;
	else
		arm = KITE_DB_CQ_ARM_NEXT;
	writeq(kite_db_make(cq->cqn, arm, cq->ci), kdev->db + KITE_DB_CQ);
	return 0;
}
