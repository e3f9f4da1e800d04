// SPDX-License-Identifier: GPL-2.0
/*
 * Kite queue pairs: RC, UC and UD creation with their rings, the state
 * machine (checked here with ib_modify_qp_is_ok() and again by the device),
 * RoCEv2 path setup, query and destruction.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/etherdevice.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/kite-abi.h>

#include "kite_ib.h"
#include "kite_ib_trace.h"
#include "kite_verbs.h"

static_assert(sizeof(struct kite_create_qp_req) == 48);
static_assert(sizeof(struct kite_create_qp_resp) == 24);

/* MODIFY_QP's mask bits and states are ib_core's. */
static_assert(KITE_QP_ATTR_STATE == IB_QP_STATE);
static_assert(KITE_QP_ATTR_CUR_STATE == IB_QP_CUR_STATE);
static_assert(KITE_QP_ATTR_ACCESS_FLAGS == IB_QP_ACCESS_FLAGS);
static_assert(KITE_QP_ATTR_PKEY_INDEX == IB_QP_PKEY_INDEX);
static_assert(KITE_QP_ATTR_PORT == IB_QP_PORT);
static_assert(KITE_QP_ATTR_QKEY == IB_QP_QKEY);
static_assert(KITE_QP_ATTR_AV == IB_QP_AV);
static_assert(KITE_QP_ATTR_PATH_MTU == IB_QP_PATH_MTU);
static_assert(KITE_QP_ATTR_TIMEOUT == IB_QP_TIMEOUT);
static_assert(KITE_QP_ATTR_RETRY_CNT == IB_QP_RETRY_CNT);
static_assert(KITE_QP_ATTR_RNR_RETRY == IB_QP_RNR_RETRY);
static_assert(KITE_QP_ATTR_RQ_PSN == IB_QP_RQ_PSN);
static_assert(KITE_QP_ATTR_MAX_QP_RD_ATOMIC == IB_QP_MAX_QP_RD_ATOMIC);
static_assert(KITE_QP_ATTR_MIN_RNR_TIMER == IB_QP_MIN_RNR_TIMER);
static_assert(KITE_QP_ATTR_SQ_PSN == IB_QP_SQ_PSN);
static_assert(KITE_QP_ATTR_MAX_DEST_RD_ATOMIC == IB_QP_MAX_DEST_RD_ATOMIC);
static_assert(KITE_QP_ATTR_DEST_QPN == IB_QP_DEST_QPN);
static_assert(KITE_QPS_RESET == (int)IB_QPS_RESET);
static_assert(KITE_QPS_INIT == (int)IB_QPS_INIT);
static_assert(KITE_QPS_RTR == (int)IB_QPS_RTR);
static_assert(KITE_QPS_RTS == (int)IB_QPS_RTS);
static_assert(KITE_QPS_SQD == (int)IB_QPS_SQD);
static_assert(KITE_QPS_SQE == (int)IB_QPS_SQE);
static_assert(KITE_QPS_ERR == (int)IB_QPS_ERR);

#define KITE_QP_ATTR_SUPPORTED	(KITE_QP_ATTR_STATE | KITE_QP_ATTR_CUR_STATE | \
				 KITE_QP_ATTR_ACCESS_FLAGS | \
				 KITE_QP_ATTR_PKEY_INDEX | KITE_QP_ATTR_PORT | \
				 KITE_QP_ATTR_QKEY | KITE_QP_ATTR_AV | \
				 KITE_QP_ATTR_PATH_MTU | KITE_QP_ATTR_TIMEOUT | \
				 KITE_QP_ATTR_RETRY_CNT | \
				 KITE_QP_ATTR_RNR_RETRY | KITE_QP_ATTR_RQ_PSN | \
				 KITE_QP_ATTR_MAX_QP_RD_ATOMIC | \
				 KITE_QP_ATTR_MIN_RNR_TIMER | \
				 KITE_QP_ATTR_SQ_PSN | \
				 KITE_QP_ATTR_MAX_DEST_RD_ATOMIC | \
				 KITE_QP_ATTR_DEST_QPN)

/*
 * The device's QP type for @type, offered only when the device's
 * capability flags say it implements that transport.
 */
static int kite_qp_type(struct kite_ib_dev *kib, enum ib_qp_type type, u8 *out)
{
	u32 caps = kib->kdev->caps.cap_flags;

	switch (type) {
	case IB_QPT_RC:
		*out = KITE_QPT_RC;
		return (caps & KITE_DEV_CAP_RC) ? 0 : -EOPNOTSUPP;
	case IB_QPT_UC:
		*out = KITE_QPT_UC;
		return (caps & KITE_DEV_CAP_UC) ? 0 : -EOPNOTSUPP;
	case IB_QPT_UD:
		*out = KITE_QPT_UD;
		return (caps & KITE_DEV_CAP_UD) ? 0 : -EOPNOTSUPP;
	case IB_QPT_GSI:
		/* QP1 of the port, for ib_core's MAD layer: a UD QP. */
		*out = KITE_QPT_GSI;
		return (caps & KITE_DEV_CAP_UD) ? 0 : -EOPNOTSUPP;
	default:
		return -EOPNOTSUPP;
	}
}

/* A QP on an SRQ has no RQ of its own (its RQ geometry stays zero). */
static bool kite_qp_on_srq(const struct kite_qp *qp)
{
	return qp->ibqp.srq;
}

/*
 * Check the capabilities against the device and size the rings; the
 * receive capabilities of a QP on an SRQ are the SRQ's and ignored here.
 */
static int kite_qp_size(struct kite_ib_dev *kib, struct kite_qp *qp,
			struct ib_qp_cap *cap)
{
	const struct kite_caps *caps = &kib->kdev->caps;
	bool rq = !kite_qp_on_srq(qp);
	u32 sq_depth, rq_depth = 0;

	if (cap->max_send_wr > caps->max_qp_wr ||
	    (rq && cap->max_recv_wr > caps->max_qp_wr) ||
	    cap->max_send_sge > caps->max_sge ||
	    (rq && cap->max_recv_sge > caps->max_sge) ||
	    cap->max_inline_data > caps->max_inline)
		return -EINVAL;
	sq_depth = kite_cq_depth(cap->max_send_wr);
	if (rq)
		rq_depth = kite_cq_depth(cap->max_recv_wr);
	if (sq_depth > caps->max_qp_wr || rq_depth > caps->max_qp_wr)
		return -EINVAL;
	qp->sq_log_depth = ilog2(sq_depth);
	qp->sq_log_stride = kite_sq_log_stride(cap->max_send_sge,
					       cap->max_inline_data);
	if (rq) {
		qp->rq_log_depth = ilog2(rq_depth);
		qp->rq_log_stride = kite_rq_log_stride(cap->max_recv_sge);
	}
	if (qp->sq_log_stride > KITE_SQ_MAX_LOG_STRIDE ||
	    qp->rq_log_stride > KITE_RQ_MAX_LOG_STRIDE)
		return -EINVAL;
	return 0;
}

/* Report what the rings actually hold. */
static void kite_qp_fill_cap(struct kite_ib_dev *kib, const struct kite_qp *qp,
			     struct ib_qp_cap *cap)
{
	u32 sq_room = kite_sq_room(qp->sq_log_stride);
	u32 rq_room = kite_rq_room(qp->rq_log_stride);

	cap->max_send_wr = 1u << qp->sq_log_depth;
	cap->max_recv_wr = 1u << qp->rq_log_depth;
	cap->max_send_sge = min_t(u32, sq_room / sizeof(struct kite_sge),
				  kib->kdev->caps.max_sge);
	cap->max_recv_sge = min_t(u32, rq_room / sizeof(struct kite_sge),
				  kib->kdev->caps.max_sge);
	cap->max_inline_data = min_t(u32, sq_room, kib->kdev->caps.max_inline);
	if (kite_qp_on_srq(qp)) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
}

/* Bookkeeping of a kernel QP's data path: locks, wr_id per ring slot. */
static int kite_qp_init_kernel(struct kite_ib_dev *kib, struct kite_qp *qp)
{
	struct ib_qp_cap cap;

	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	kite_qp_fill_cap(kib, qp, &cap);
	qp->max_send_sge = cap.max_send_sge;
	qp->max_recv_sge = cap.max_recv_sge;
	qp->max_inline = cap.max_inline_data;
	qp->sq_wrid = kcalloc(1u << qp->sq_log_depth, sizeof(*qp->sq_wrid),
			      GFP_KERNEL);
	/* A QP on an SRQ: the SRQ keeps the receives' wr_ids. */
	if (!kite_qp_on_srq(qp))
		qp->rq_wrid = kcalloc(1u << qp->rq_log_depth,
				      sizeof(*qp->rq_wrid), GFP_KERNEL);
	if (!qp->sq_wrid || (!qp->rq_wrid && !kite_qp_on_srq(qp))) {
		kfree(qp->sq_wrid);
		kfree(qp->rq_wrid);
		qp->sq_wrid = NULL;
		qp->rq_wrid = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void kite_qp_free_kernel(struct kite_qp *qp)
{
	kfree(qp->sq_wrid);
	kfree(qp->rq_wrid);
	qp->sq_wrid = NULL;
	qp->rq_wrid = NULL;
}

/*
 * Take the QP out of the lookups and wait until nothing uses it: async
 * events run in the admin interrupt, poll_cq under its CQ's lock. A kernel
 * QP's CQEs still in its CQs are dropped: its number may be handed out
 * again, and they must not complete the new QP's WQEs.
 */
static void kite_qp_forget(struct kite_ib_dev *kib, struct kite_qp *qp)
{
	unsigned long flags;

	xa_erase(&kib->qps, qp->qpn);
	kite_sync_async_events(kib->kdev);
	kite_qp_lock_cqs(qp, &flags);
	if (qp->sq_wrid) {
		kite_qp_clean_cqs(qp);
		list_del(&qp->scq_node);
		list_del(&qp->rcq_node);
	}
	kite_qp_unlock_cqs(qp, flags);
}

/* CREATE_QP with the rings and geometry kite_create_qp() set up. */
static int kite_qp_cmd_create(struct kite_ib_dev *kib, struct kite_qp *qp,
			      u8 type, u32 pdn, u32 send_cqn, u32 recv_cqn)
{
	const struct kite_qp_create_params p = {
		.type = type,
		.flags = (qp->sig_all ? KITE_QP_FLAG_SIG_ALL : 0) |
			 (kite_qp_on_srq(qp) ? KITE_QP_FLAG_SRQ : 0),
		.srqn = kite_qp_on_srq(qp) ? to_ksrq(qp->ibqp.srq)->srqn : 0,
		.sq_log_depth = qp->sq_log_depth,
		.sq_log_stride = qp->sq_log_stride,
		.rq_log_depth = qp->rq_log_depth,
		.rq_log_stride = qp->rq_log_stride,
		.pdn = pdn,
		.send_cqn = send_cqn,
		.recv_cqn = recv_cqn,
		.sq = &qp->sq.pbl.desc,
		.rq = &qp->rq.pbl.desc,
		.dbrec = qp->dbrec.dma,
	};

	return kite_cmd_create_qp(&kib->kdev->admin, qp->uctx, &p, &qp->qpn);
}

static int kite_qp_rings_user(struct kite_ib_dev *kib, struct kite_qp *qp,
			      struct ib_udata *udata)
{
	struct kite_create_qp_req req = {};
	int err;

	err = kite_udata_get_req_min(udata, &req,
				     offsetofend(typeof(req), rq_len),
				     sizeof(req));
	if (err)
		return err;
	if ((req.comp_mask & ~KITE_CREATE_QP_REQ_DBREC) || req.reserved_20 ||
	    udata->outlen < sizeof(struct kite_create_qp_resp))
		return -EINVAL;
	if (req.comp_mask & KITE_CREATE_QP_REQ_DBREC) {
		if (!kite_dbrec_supported(kib))
			return -EOPNOTSUPP;
		if (udata->inlen < sizeof(req))
			return -EINVAL;
	} else if (req.dbrec_va) {
		return -EINVAL;
	}
	/* A QP on an SRQ has no receive ring. */
	if (kite_qp_on_srq(qp) && (req.rq_va || req.rq_len))
		return -EINVAL;
	err = kite_ring_get_user(kib, &qp->sq, req.sq_va, req.sq_len,
				 (size_t)1 << (qp->sq_log_depth +
					       qp->sq_log_stride));
	if (err)
		return err;
	if (!kite_qp_on_srq(qp)) {
		err = kite_ring_get_user(kib, &qp->rq, req.rq_va, req.rq_len,
					 (size_t)1 << (qp->rq_log_depth +
						       qp->rq_log_stride));
		if (err)
			goto err_sq;
	}
	if (req.comp_mask & KITE_CREATE_QP_REQ_DBREC) {
		err = kite_dbrec_get_user(kib, &qp->dbrec, req.dbrec_va,
					  sizeof(struct kite_qp_dbrec));
		if (err)
			goto err_rq;
	}
	return 0;

err_rq:
	kite_ring_free(kib, &qp->rq);
err_sq:
	kite_ring_free(kib, &qp->sq);
	return err;
}

static int kite_qp_rings_kernel(struct kite_ib_dev *kib, struct kite_qp *qp)
{
	int err;

	err = kite_ring_alloc_kernel(kib, &qp->sq, (size_t)1 <<
				     (qp->sq_log_depth + qp->sq_log_stride));
	if (err || kite_qp_on_srq(qp))
		return err;
	err = kite_ring_alloc_kernel(kib, &qp->rq, (size_t)1 <<
				     (qp->rq_log_depth + qp->rq_log_stride));
	if (err)
		kite_ring_free(kib, &qp->sq);
	return err;
}

/**
 * kite_create_qp() - create an RC, UC, UD or GSI QP
 * @ibqp: QP allocated by ib_core
 * @attr: type, CQs and capabilities; updated to what the QP holds
 * @udata: user QP: struct kite_create_qp_req / kite_create_qp_resp
 *
 * UD and GSI need KITE_DEV_CAP_UD. The GSI QP is the kernel's (ib_core's
 * MAD layer creates it for port 1); the device numbers it 1, and a second
 * one is refused by the device (-EBUSY). RC, UC and UD QPs may receive
 * from an SRQ (the receive capabilities are then the SRQ's).
 *
 * Return: 0, -EOPNOTSUPP (a type the device lacks, a user GSI QP, other
 * types, a GSI QP on an SRQ, create flags, RSS), -EINVAL (capabilities
 * beyond the device's, a GSI QP of another port) or another negative
 * errno.
 */
int kite_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		   struct ib_udata *udata)
{
	struct kite_ib_dev *kib = to_kib(ibqp->device);
	struct kite_create_qp_resp resp = {};
	struct kite_qp *qp = to_kqp(ibqp);
	u8 type;
	int err;

	err = kite_qp_type(kib, attr->qp_type, &type);
	if (err)
		return err;
	if (type == KITE_QPT_GSI) {
		if (udata)
			return -EOPNOTSUPP;
		if (attr->port_num != KITE_PORT_NUM)
			return -EINVAL;
	}
	if ((attr->srq && type == KITE_QPT_GSI) || attr->create_flags ||
	    attr->rwq_ind_tbl || attr->xrcd)
		return -EOPNOTSUPP;
	if (!attr->send_cq || !attr->recv_cq)
		return -EINVAL;
	err = kite_qp_size(kib, qp, &attr->cap);
	if (err)
		return err;
	qp->sig_all = attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->uctx = kite_udata_uctx(udata);
	mutex_init(&qp->lock);

	if (udata) {
		err = kite_qp_rings_user(kib, qp, udata);
	} else {
		err = kite_qp_init_kernel(kib, qp);
		if (err)
			return err;
		err = kite_qp_rings_kernel(kib, qp);
		if (err)
			kite_qp_free_kernel(qp);
	}
	if (err)
		return err;

	err = kite_qp_cmd_create(kib, qp, type, to_kpd(ibqp->pd)->pdn,
				 to_kcq(attr->send_cq)->cqn,
				 to_kcq(attr->recv_cq)->cqn);
	trace_kite_ib_qp_create(kib, err ? 0 : qp->qpn, attr->qp_type,
				qp->uctx, 1u << qp->sq_log_depth,
				kite_qp_on_srq(qp) ? 0 : 1u << qp->rq_log_depth,
				err);
	if (err)
		goto err_rings;
	/* ib_core addresses the GSI QP as QP1. */
	if (type == KITE_QPT_GSI && qp->qpn != KITE_GSI_QPN) {
		err = -EIO;
		goto err_destroy;
	}
	ibqp->qp_num = qp->qpn;
	qp->state = IB_QPS_RESET;
	err = xa_insert(&kib->qps, qp->qpn, qp, GFP_KERNEL);
	if (err)
		goto err_destroy;

	if (udata) {
		resp.qpn = qp->qpn;
		resp.sq_depth = 1u << qp->sq_log_depth;
		resp.sq_stride = 1u << qp->sq_log_stride;
		/* A QP on an SRQ: no receive ring (0, 0). */
		if (!kite_qp_on_srq(qp)) {
			resp.rq_depth = 1u << qp->rq_log_depth;
			resp.rq_stride = 1u << qp->rq_log_stride;
		}
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_erase;
	}
	if (!udata)
		kite_qp_attach_cqs(qp);
	kite_qp_fill_cap(kib, qp, &attr->cap);
	return 0;

err_erase:
	xa_erase(&kib->qps, qp->qpn);
err_destroy:
	kite_cmd_destroy_qp(&kib->kdev->admin, qp->uctx, qp->qpn);
err_rings:
	kite_dbrec_put(&qp->dbrec);
	kite_ring_free(kib, &qp->rq);
	kite_ring_free(kib, &qp->sq);
	kite_qp_free_kernel(qp);
	return err;
}

static int kite_qp_access(int access, u32 *out)
{
	if (access & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		       IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC))
		return -EOPNOTSUPP;
	*out = 0;
	if (access & IB_ACCESS_LOCAL_WRITE)
		*out |= KITE_ACCESS_LOCAL_WRITE;
	if (access & IB_ACCESS_REMOTE_WRITE)
		*out |= KITE_ACCESS_REMOTE_WRITE;
	if (access & IB_ACCESS_REMOTE_READ)
		*out |= KITE_ACCESS_REMOTE_READ;
	if (access & IB_ACCESS_REMOTE_ATOMIC)
		*out |= KITE_ACCESS_REMOTE_ATOMIC;
	return 0;
}

/* Translate an ib_qp_attr into the device's MODIFY_QP attributes. */
static int kite_qp_attr_enc(struct kite_ib_dev *kib, const struct kite_qp *qp,
			    const struct ib_qp_attr *attr, int mask,
			    enum ib_qp_state cur, enum ib_qp_state next,
			    struct kite_qp_attr *ka)
{
	u32 access;
	int err;

	ka->attr_mask = cpu_to_le32(mask);
	ka->state = next;
	ka->cur_state = cur;
	if (mask & IB_QP_ACCESS_FLAGS) {
		err = kite_qp_access(attr->qp_access_flags, &access);
		if (err)
			return err;
		ka->access_flags = cpu_to_le32(access);
	}
	if (mask & IB_QP_PKEY_INDEX)
		ka->pkey_index = cpu_to_le16(attr->pkey_index);
	if (mask & IB_QP_PORT)
		ka->port = attr->port_num;
	if (mask & IB_QP_QKEY)
		ka->qkey = cpu_to_le32(attr->qkey);
	if (mask & IB_QP_AV) {
		err = kite_av_from_ah_attr(kib, &attr->ah_attr, &ka->av);
		if (err)
			return err;
	}
	if (mask & IB_QP_PATH_MTU)
		ka->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		ka->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		ka->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		ka->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		ka->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC) {
		if (attr->max_rd_atomic > kib->kdev->caps.max_rd_atom)
			return -EINVAL;
		ka->max_rd_atomic = attr->max_rd_atomic;
	}
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC) {
		if (attr->max_dest_rd_atomic > kib->kdev->caps.max_rd_atom)
			return -EINVAL;
		ka->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	}
	if (mask & IB_QP_SQ_PSN)
		ka->sq_psn = cpu_to_le32(attr->sq_psn);
	if (mask & IB_QP_RQ_PSN)
		ka->rq_psn = cpu_to_le32(attr->rq_psn);
	if (mask & IB_QP_DEST_QPN)
		ka->dest_qpn = cpu_to_le32(attr->dest_qp_num);
	return 0;
}

/**
 * kite_modify_qp() - change a QP's state and attributes
 * @ibqp: QP
 * @attr: new attributes
 * @mask: enum ib_qp_attr_mask
 * @udata: no request or response data
 *
 * The transition and its attribute mask are checked with
 * ib_modify_qp_is_ok() (-EINVAL) before the device checks them again.
 *
 * Return: 0 or a negative errno.
 */
int kite_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct kite_ib_dev *kib = to_kib(ibqp->device);
	struct kite_qp *qp = to_kqp(ibqp);
	enum ib_qp_state cur, next;
	struct kite_qp_attr ka = {};
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	if (!kite_udata_in_ok(udata))
		return -EINVAL;

	mutex_lock(&qp->lock);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (cur > IB_QPS_ERR || next > IB_QPS_ERR ||
	    !ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask)) {
		err = -EINVAL;
		goto out;
	}
	/* Alternate paths, SQD notification, path migration: not offered. */
	if (mask & ~KITE_QP_ATTR_SUPPORTED) {
		err = -EOPNOTSUPP;
		goto out;
	}

	err = kite_qp_attr_enc(kib, qp, attr, mask, cur, next, &ka);
	if (err)
		goto out;
	err = kite_cmd_modify_qp(&kib->kdev->admin, qp->uctx, qp->qpn, &ka);
	/*
	 * A dead device holds no QP: ERR is where it is anyway. Accepting
	 * the move lets ib_drain_qp() post its WQE, which poll_cq flushes.
	 */
	if (err && next == IB_QPS_ERR && kite_admin_is_dead(&kib->kdev->admin))
		err = 0;
	if (!err) {
		/* The device discarded the WQEs and zeroed its indexes. */
		if (next == IB_QPS_RESET && qp->sq_wrid)
			kite_qp_reset_indexes(qp);
		WRITE_ONCE(qp->state, next);
	}
	trace_kite_ib_qp_modify(kib, qp->qpn, cur, next, mask, err);
out:
	mutex_unlock(&qp->lock);
	return err;
}

static int kite_access_to_ib(u32 access)
{
	int out = 0;

	if (access & KITE_ACCESS_LOCAL_WRITE)
		out |= IB_ACCESS_LOCAL_WRITE;
	if (access & KITE_ACCESS_REMOTE_WRITE)
		out |= IB_ACCESS_REMOTE_WRITE;
	if (access & KITE_ACCESS_REMOTE_READ)
		out |= IB_ACCESS_REMOTE_READ;
	if (access & KITE_ACCESS_REMOTE_ATOMIC)
		out |= IB_ACCESS_REMOTE_ATOMIC;
	return out;
}

/**
 * kite_query_qp() - read a QP's attributes from the device
 * @ibqp: QP
 * @attr: attributes
 * @mask: attributes asked for (all are filled)
 * @init: creation attributes
 *
 * Return: 0 or a negative errno.
 */
int kite_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init)
{
	struct kite_ib_dev *kib = to_kib(ibqp->device);
	struct kite_qp *qp = to_kqp(ibqp);
	struct kite_qp_attr ka;
	int err;

	err = kite_cmd_query_qp(&kib->kdev->admin, qp->uctx, qp->qpn, &ka);
	if (err)
		return err;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	attr->qp_state = ka.state;
	attr->cur_qp_state = ka.cur_state;
	attr->path_mtu = ka.path_mtu ? ka.path_mtu : IB_MTU_256;
	attr->timeout = ka.timeout;
	attr->retry_cnt = ka.retry_cnt;
	attr->rnr_retry = ka.rnr_retry;
	attr->min_rnr_timer = ka.min_rnr_timer;
	attr->max_rd_atomic = ka.max_rd_atomic;
	attr->max_dest_rd_atomic = ka.max_dest_rd_atomic;
	attr->port_num = ka.port;
	attr->pkey_index = le16_to_cpu(ka.pkey_index);
	attr->qp_access_flags = kite_access_to_ib(le32_to_cpu(ka.access_flags));
	attr->qkey = le32_to_cpu(ka.qkey);
	attr->sq_psn = le32_to_cpu(ka.sq_psn);
	attr->rq_psn = le32_to_cpu(ka.rq_psn);
	attr->dest_qp_num = le32_to_cpu(ka.dest_qpn);
	if (!kite_qp_is_ud(qp) && ka.state >= KITE_QPS_RTR &&
	    ka.state != KITE_QPS_ERR)
		kite_av_to_ah_attr(&ka.av, &attr->ah_attr);
	kite_qp_fill_cap(kib, qp, &attr->cap);

	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->cap = attr->cap;
	return 0;
}

/**
 * kite_destroy_qp() - destroy a QP in any state
 * @ibqp: QP
 * @udata: user data (unused)
 *
 * Return: 0, or the device's error while it still holds the QP (ib_core
 * keeps the QP). A dead device holds nothing: the rings are freed.
 */
int kite_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct kite_ib_dev *kib = to_kib(ibqp->device);
	struct kite_qp *qp = to_kqp(ibqp);
	int err;

	err = kite_cmd_destroy_qp(&kib->kdev->admin, qp->uctx, qp->qpn);
	trace_kite_ib_qp_destroy(kib, qp->qpn, err);
	if (err && !kite_admin_is_dead(&kib->kdev->admin))
		return err;
	kite_counter_qp_destroyed(kib, qp);
	kite_qp_forget(kib, qp);
	kite_dbrec_put(&qp->dbrec);
	kite_ring_free(kib, &qp->rq);
	kite_ring_free(kib, &qp->sq);
	kite_qp_free_kernel(qp);
	mutex_destroy(&qp->lock);
	return 0;
}

/**
 * kite_qp_async_event() - a QP event from the async EQ
 * @kib: RDMA device
 * @qpn: QP number from the EQE
 * @type: KITE_EVT_QP_* or KITE_EVT_COMM_EST
 *
 * Runs in the admin interrupt; dispatches the matching ib_event to the
 * QP's event handler (set by the kernel consumer, or by ib_uverbs for user
 * QPs, which queues it for ibv_get_async_event()). After the error events
 * the device has moved the QP to ERR.
 */
void kite_qp_async_event(struct kite_ib_dev *kib, u32 qpn, u8 type)
{
	struct kite_qp *qp = xa_load(&kib->qps, qpn);
	struct ib_event ev = { .device = &kib->ibdev };

	switch (type) {
	case KITE_EVT_QP_FATAL:
		ev.event = IB_EVENT_QP_FATAL;
		break;
	case KITE_EVT_QP_REQ_ERR:
		ev.event = IB_EVENT_QP_REQ_ERR;
		break;
	case KITE_EVT_QP_ACCESS_ERR:
		ev.event = IB_EVENT_QP_ACCESS_ERR;
		break;
	case KITE_EVT_QP_LAST_WQE:
		ev.event = IB_EVENT_QP_LAST_WQE_REACHED;
		break;
	case KITE_EVT_COMM_EST:
		ev.event = IB_EVENT_COMM_EST;
		break;
	default:
		return;
	}
	trace_kite_ib_qp_event(kib, qpn, ev.event, qp);
	if (!qp) {
		dev_dbg_ratelimited(kite_ib_dmadev(kib),
				    "event %u for unknown QP %u\n", type, qpn);
		return;
	}
	if (type != KITE_EVT_COMM_EST)
		dev_dbg_ratelimited(kite_ib_dmadev(kib), "QP %u: %s\n", qpn,
				    ib_event_msg(ev.event));
	ev.element.qp = &qp->ibqp;
	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}
