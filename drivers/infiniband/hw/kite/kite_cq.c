// SPDX-License-Identifier: GPL-2.0
/*
 * Kite completion queues: creation and destruction from user space (ring
 * in pinned user memory) and from the kernel (coherent ring); resizing to
 * a new ring; for kernel CQs the data path: polling CQEs into ib_wc,
 * arming through the CQ doorbell; completion and CQ error events.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/etherdevice.h>
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

/*
 * Take the CQ out of the event lookup and wait for event handlers that
 * may have found it before: completion events run in the CQ's EQ
 * interrupt, CQ errors in the admin interrupt.
 */
static void kite_cq_forget(struct kite_dev *kdev, struct kite_cq *cq)
{
	xa_erase(&kdev->cqs, cq->cqn);
	synchronize_irq(pci_irq_vector(kdev->pdev, cq->eq->vector));
	synchronize_irq(pci_irq_vector(kdev->pdev, KITE_MSIX_ADMIN));
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

	spin_lock_init(&cq->lock);
	INIT_LIST_HEAD(&cq->sq_list);
	INIT_LIST_HEAD(&cq->rq_list);
	INIT_WORK(&cq->flush_work, kite_cq_flush_work);
	cq->eq = &kdev->comp_eqs[attr->comp_vector % kdev->num_comp_eqs];
	err = kite_cmd_create_cq(kdev, cq, cq->eq->eqn);
	if (err)
		goto err_ring;
	ibcq->cqe = depth;
	err = xa_insert(&kdev->cqs, cq->cqn, cq, GFP_KERNEL);
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
	kite_cq_forget(kdev, cq);
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
 * Once the device has let the CQ go, no event handler can find it any
 * more and none still runs with it (kite_cq_forget()).
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
	kite_cq_forget(kdev, cq);
	cancel_work_sync(&cq->flush_work);
	kite_ring_free(kdev, &cq->old_ring);
	kite_ring_free(kdev, &cq->ring);
	return 0;
}

static int kite_cmd_modify_cq(struct kite_dev *kdev, struct kite_cq *cq,
			      const struct kite_ring *ring, u8 log_depth,
			      u32 *old_pi)
{
	struct kite_aq_cqe cqe;
	struct kite_aq_cmd cmd;
	int err;

	kite_enc_hdr(&cmd, KITE_CMD_MODIFY_CQ, cq->uctx);
	cmd.modify_cq.cqn = cpu_to_le32(cq->cqn);
	cmd.modify_cq.ring = ring->pbl.desc;
	cmd.modify_cq.log_depth = log_depth;
	err = kite_admin_exec(&kdev->admin, &cmd, NULL, 0, &cqe);
	if (err)
		return err;
	*old_pi = le32_to_cpu(cqe.out[0]);
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
	struct kite_dev *kdev = to_kdev(ibcq->device);
	struct kite_resize_cq_req req = {};
	struct kite_cq *cq = to_kcq(ibcq);
	struct kite_ring ring = {};
	unsigned long flags;
	size_t bytes;
	u32 depth, old_pi;
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
		kite_ring_free(kdev, &cq->old_ring);
		err = kite_ring_alloc_kernel(kdev, &ring, bytes);
	}
	if (err)
		goto err_resizing;

	err = kite_cmd_modify_cq(kdev, cq, &ring, ilog2(depth), &old_pi);
	if (err) {
		kite_ring_free(kdev, &ring);
		goto err_resizing;
	}

	if (udata) {
		kite_ring_free(kdev, &cq->ring);
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
		kite_cq_end_resize(kdev, cq);
		spin_unlock_irqrestore(&cq->lock, flags);
	}
	ibcq->cqe = depth;
	return 0;

err_resizing:
	if (!udata) {
		spin_lock_irqsave(&cq->lock, flags);
		kite_cq_end_resize(kdev, cq);
		spin_unlock_irqrestore(&cq->lock, flags);
	}
	return err;
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

/* CQE status values are ib_core's, passed through. */
static_assert(KITE_CQE_SUCCESS == (int)IB_WC_SUCCESS);
static_assert(KITE_CQE_LOC_LEN_ERR == (int)IB_WC_LOC_LEN_ERR);
static_assert(KITE_CQE_LOC_QP_OP_ERR == (int)IB_WC_LOC_QP_OP_ERR);
static_assert(KITE_CQE_LOC_PROT_ERR == (int)IB_WC_LOC_PROT_ERR);
static_assert(KITE_CQE_WR_FLUSH_ERR == (int)IB_WC_WR_FLUSH_ERR);
static_assert(KITE_CQE_BAD_RESP_ERR == (int)IB_WC_BAD_RESP_ERR);
static_assert(KITE_CQE_LOC_ACCESS_ERR == (int)IB_WC_LOC_ACCESS_ERR);
static_assert(KITE_CQE_REM_INV_REQ_ERR == (int)IB_WC_REM_INV_REQ_ERR);
static_assert(KITE_CQE_REM_ACCESS_ERR == (int)IB_WC_REM_ACCESS_ERR);
static_assert(KITE_CQE_REM_OP_ERR == (int)IB_WC_REM_OP_ERR);
static_assert(KITE_CQE_RETRY_EXC_ERR == (int)IB_WC_RETRY_EXC_ERR);
static_assert(KITE_CQE_RNR_RETRY_EXC_ERR == (int)IB_WC_RNR_RETRY_EXC_ERR);
static_assert(KITE_CQE_GENERAL_ERR == (int)IB_WC_GENERAL_ERR);

/* Give the device the consumer index (frees CQ space). Under cq->lock. */
static void kite_cq_report_ci(struct kite_dev *kdev, struct kite_cq *cq)
{
	kite_db_write(kdev, KITE_DB_CQ, cq->cqn, 0, cq->ci);
	cq->ci_reported = cq->ci;
}

/*
 * Mark the written, unpolled CQEs of QP @qpn among @n entries of @ring from
 * free-running index @ci on as belonging to no QP (0 is never a QP
 * number), so that kite_poll_cq() drops them. Entries between the
 * consumer index and the device's producer index belong to the consumer.
 */
static void kite_cq_ring_clean(struct kite_cqe *ring, u8 log_depth, u32 ci,
			       u32 n, u32 qpn)
{
	struct kite_cqe *cqe;
	u32 i;

	for (i = 0; i < n; i++) {
		cqe = &ring[kite_ring_slot(ci + i, log_depth)];
		if ((READ_ONCE(cqe->flags) & KITE_CQE_F_PHASE) !=
		    kite_ring_phase(ci + i, log_depth))
			break;
		dma_rmb();
		if (le32_to_cpu(cqe->qpn) == qpn)
			cqe->qpn = 0;
	}
}

/**
 * kite_cq_clean() - drop the unpolled CQEs of a QP from a kernel CQ
 * @cq: kernel CQ, with cq->lock held
 * @qpn: QP that was reset or destroyed
 *
 * Called once the device writes no more CQEs for @qpn (MODIFY_QP to RESET
 * or DESTROY_QP returned). Without this, a CQE of the QP's previous life
 * would complete a WQE posted after the reset, or a QP that reuses the
 * number.
 */
void kite_cq_clean(struct kite_cq *cq, u32 qpn)
{
	lockdep_assert_held(&cq->lock);
	if (cq->draining) {
		/* Old ring (in cq->ring) up to old_pi, then the new ring. */
		kite_cq_ring_clean(cq->ring.buf, cq->log_depth, cq->ci,
				   cq->old_pi - cq->ci, qpn);
		kite_cq_ring_clean(cq->old_ring.buf, cq->old_log_depth, 0,
				   1u << cq->old_log_depth, qpn);
	} else {
		kite_cq_ring_clean(cq->ring.buf, cq->log_depth, cq->ci,
				   1u << cq->log_depth, qpn);
	}
}

/* The index the CQ doorbell reports: the new ring's while the old drains. */
static u32 kite_cq_db_ci(const struct kite_cq *cq)
{
	return cq->draining ? 0 : cq->ci;
}

/**
 * kite_cq_end_resize() - end the resize window of a kernel CQ
 * @kdev: device
 * @cq: kernel CQ, with cq->lock held, its ring (old or new) settled
 *
 * Applies an arm that req_notify_cq deferred meanwhile, with the index of
 * the ring the device now writes: the device fires at once if CQEs beyond
 * it exist, so no event is lost.
 */
void kite_cq_end_resize(struct kite_dev *kdev, struct kite_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	cq->resizing = false;
	if (cq->arm_pending) {
		cq->ci_reported = kite_cq_db_ci(cq);
		kite_db_write(kdev, KITE_DB_CQ, cq->cqn, cq->arm_pending,
			      cq->ci_reported);
		cq->arm_pending = 0;
	}
}

/*
 * The CQE at the consumer index if the device has written it (its phase
 * matches), else NULL. Called with cq->lock held.
 */
static struct kite_cqe *kite_cq_peek(struct kite_cq *cq)
{
	struct kite_cqe *ring = cq->ring.buf;
	struct kite_cqe *cqe;

	if (cq->draining && cq->ci == cq->old_pi) {
		/* The old ring is done: continue at index 0 of the new one. */
		swap(cq->ring, cq->old_ring);
		cq->log_depth = cq->old_log_depth;
		cq->ci = 0;
		cq->draining = false;
		ring = cq->ring.buf;
	}
	cqe = &ring[kite_ring_slot(cq->ci, cq->log_depth)];
	if ((READ_ONCE(cqe->flags) & KITE_CQE_F_PHASE) !=
	    kite_ring_phase(cq->ci, cq->log_depth))
		return NULL;
	/* The device writes flags last: read the rest only after it. */
	dma_rmb();
	return cqe;
}

static enum ib_wc_opcode kite_wc_opcode(u8 opcode)
{
	switch (opcode) {
	case KITE_CQE_SEND:
		return IB_WC_SEND;
	case KITE_CQE_WRITE:
		return IB_WC_RDMA_WRITE;
	case KITE_CQE_READ:
		return IB_WC_RDMA_READ;
	case KITE_CQE_CMP_SWP:
		return IB_WC_COMP_SWAP;
	case KITE_CQE_FETCH_ADD:
		return IB_WC_FETCH_ADD;
	case KITE_CQE_RECV_WRITE_IMM:
		return IB_WC_RECV_RDMA_WITH_IMM;
	case KITE_CQE_RECV:
	default:
		return IB_WC_RECV;
	}
}

/**
 * kite_cqe_retire() - find and retire the WQE a CQE completes
 * @qp: QP the CQE names
 * @cqe: the CQE
 * @wr_id: the WQE's wr_id
 *
 * The CQE's slot is matched against the WQEs outstanding between the
 * queue's consumer and producer index. Completions come in posting order,
 * and a send CQE for slot s also retires every earlier (unsignaled) send
 * WQE, so the consumer index moves to just past the completed WQE. The
 * producer index is read without the post lock: a WQE posted concurrently
 * cannot be the one a CQE already names.
 *
 * Return: true, or false for a CQE naming no outstanding WQE (stale, e.g.
 * from before the QP went to RESET).
 */
static bool kite_cqe_retire(struct kite_qp *qp, const struct kite_cqe *cqe,
			    u64 *wr_id)
{
	bool recv = kite_cqe_is_recv(cqe->opcode);
	u8 log_depth = recv ? qp->rq_log_depth : qp->sq_log_depth;
	u32 pi = recv ? READ_ONCE(qp->rq_pi) : READ_ONCE(qp->sq_pi);
	u32 ci = recv ? qp->rq_ci : qp->sq_ci;
	u32 slot = le16_to_cpu(cqe->wqe_idx);
	u32 ahead;

	if (slot >= (1u << log_depth))
		return false;
	ahead = kite_ring_slot(slot - ci, log_depth);
	if (ahead >= kite_ring_used(pi, ci))
		return false;
	if (recv) {
		*wr_id = qp->rq_wrid[slot];
		/* Free the slots after reading wr_id: pairs with post_recv. */
		smp_store_release(&qp->rq_ci, ci + ahead + 1);
	} else {
		*wr_id = qp->sq_wrid[slot];
		/* Free the slots after reading wr_id: pairs with post_send. */
		smp_store_release(&qp->sq_ci, ci + ahead + 1);
	}
	return true;
}

/*
 * Translate one CQE into @wc. Return: false when the CQE names no kernel
 * QP or no outstanding WQE (it is dropped).
 */
static bool kite_cqe_to_wc(struct kite_dev *kdev, struct kite_cq *cq,
			   const struct kite_cqe *cqe, struct ib_wc *wc)
{
	u32 qpn = le32_to_cpu(cqe->qpn);
	struct kite_qp *qp;
	u64 wr_id;

	/* destroy_qp takes cq->lock after erasing: qp stays valid here. */
	qp = xa_load(&kdev->qps, qpn);
	if (!qp || !qp->sq_wrid || !kite_cqe_retire(qp, cqe, &wr_id)) {
		dev_dbg_ratelimited(&kdev->pdev->dev,
				    "CQ %u: dropped CQE for QP %u slot %u\n",
				    cq->cqn, qpn, le16_to_cpu(cqe->wqe_idx));
		return false;
	}

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = wr_id;
	wc->status = cqe->status;
	wc->opcode = kite_wc_opcode(cqe->opcode);
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = le32_to_cpu(cqe->byte_len);
	wc->qp = &qp->ibqp;
	wc->port_num = KITE_PORT_NUM;
	wc->pkey_index = le16_to_cpu(cqe->pkey_index);
	if (cqe->flags & KITE_CQE_F_IMM) {
		/* As on the wire: ib_wc carries it big-endian too. */
		wc->ex.imm_data = (__force __be32)cqe->imm_data;
		wc->wc_flags |= IB_WC_WITH_IMM;
	}
	if (cqe->flags & KITE_CQE_F_GRH)
		wc->wc_flags |= IB_WC_GRH;
	if (kite_qp_is_ud(qp) && (kite_cqe_is_recv(cqe->opcode)) &&
	    cqe->status == KITE_CQE_SUCCESS) {
		/*
		 * The network header type saves ib_core from guessing it from
		 * the 40-byte GRH area when it builds a reply AH
		 * (ib_init_ah_attr_from_wc()).
		 */
		wc->src_qp = le32_to_cpu(cqe->src_qp) & IB_QPN_MASK;
		/*
		 * A RoCEv2 packet without a VLAN tag carries no service
		 * level; ib_init_ah_attr_from_wc() copies this into reply AHs.
		 */
		wc->sl = 0;
		ether_addr_copy(wc->smac, cqe->smac);
		wc->wc_flags |= IB_WC_WITH_SMAC;
		if (cqe->net_hdr == KITE_CQE_NET_IPV4) {
			wc->network_hdr_type = RDMA_NETWORK_IPV4;
			wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
		} else if (cqe->net_hdr == KITE_CQE_NET_IPV6) {
			wc->network_hdr_type = RDMA_NETWORK_IPV6;
			wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
		}
	}
	return true;
}

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
 * @kdev: device that reported a fatal error
 *
 * Runs in the admin interrupt. Calls the comp_handler of each armed kernel
 * CQ once so that its consumer polls and gets the flush completions of
 * kite_cq_sw_flush(); no completion event will come from the device.
 * destroy_cq waits for this interrupt after taking the CQ out of the
 * lookup.
 */
void kite_cqs_fatal(struct kite_dev *kdev)
{
	struct kite_cq *cq;
	unsigned long i;

	xa_for_each(&kdev->cqs, i, cq)
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

/**
 * kite_poll_cq() - take completions from a kernel CQ
 * @ibcq: CQ
 * @num_entries: size of @wc
 * @wc: completions
 *
 * The consumer index goes back to the device (CQ doorbell without arm
 * flags) whenever half the ring has been consumed during a long poll, and
 * at the end of every poll that consumed a CQE. The ring holds exactly
 * ibcq->cqe entries and a consumer may keep that many completions
 * outstanding: a consumed but unreported CQE could make the device see an
 * overflow (fatal for the CQ) the consumer never caused. On a dead device
 * the WQEs still outstanding then complete as flushed (kite_cq_sw_flush()).
 *
 * Return: the number of completions written to @wc.
 */
int kite_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct kite_dev *kdev = to_kdev(ibcq->device);
	struct kite_cq *cq = to_kcq(ibcq);
	struct kite_cqe *cqe;
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries && (cqe = kite_cq_peek(cq))) {
		cq->ci++;
		if (kite_cqe_to_wc(kdev, cq, cqe, &wc[n]))
			n++;
		if (!cq->draining && !cq->resizing &&
		    kite_ring_used(cq->ci, cq->ci_reported) >=
		    (1u << cq->log_depth) / 2)
			kite_cq_report_ci(kdev, cq);
	}
	if (!cq->draining && !cq->resizing && cq->ci != cq->ci_reported)
		kite_cq_report_ci(kdev, cq);
	if (n < num_entries && kite_admin_is_dead(&kdev->admin))
		n += kite_cq_sw_flush(cq, num_entries - n, wc + n);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * kite_req_notify_cq() - arm a kernel CQ
 * @ibcq: CQ (kernel CQs only: user CQs ring their doorbell themselves)
 * @flags: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, optionally
 *	   IB_CQ_REPORT_MISSED_EVENTS
 *
 * Writes the CQ doorbell on doorbell page 0 with the driver's consumer
 * index and ARM_SOLICITED or ARM_NEXT. The device posts the completion
 * event at once when CQEs beyond that index exist, so no completion is
 * missed; IB_CQ_REPORT_MISSED_EVENTS also tells the caller.
 *
 * Return: 0, or with IB_CQ_REPORT_MISSED_EVENTS 1 when a CQE (or, on a
 * dead device, a flush completion) is waiting to be polled.
 */
int kite_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct kite_dev *kdev = to_kdev(ibcq->device);
	struct kite_cq *cq = to_kcq(ibcq);
	unsigned long irqflags;
	int ret = 0;
	u8 arm;

	if ((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED)
		arm = KITE_DB_CQ_ARM_SOLICITED;
	else
		arm = KITE_DB_CQ_ARM_NEXT;

	spin_lock_irqsave(&cq->lock, irqflags);
	set_bit(KITE_CQ_ARMED, &cq->armed);
	if (cq->resizing) {
		/*
		 * No index is right for the device until the resize ends:
		 * kite_cq_end_resize() arms then (both bits: ARM_NEXT).
		 * The caller that asked is told to poll again meanwhile.
		 */
		cq->arm_pending |= arm;
		ret = !!(flags & IB_CQ_REPORT_MISSED_EVENTS);
		goto out;
	}
	cq->ci_reported = kite_cq_db_ci(cq);
	kite_db_write(kdev, KITE_DB_CQ, cq->cqn, arm, cq->ci_reported);
	/* A dead device has flushes to poll, and posts no event for them. */
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    (kite_cq_peek(cq) || (kite_admin_is_dead(&kdev->admin) &&
				  kite_cq_sw_pending(cq))))
		ret = 1;
out:
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/**
 * kite_cq_comp_event() - a completion event for CQ @cqn
 * @kdev: device
 * @cqn: CQ number from the EQE
 *
 * Runs in the completion EQ interrupt and calls the CQ's comp_handler
 * (set by ib_core for kernel CQs, by ib_uverbs for user CQs).
 */
void kite_cq_comp_event(struct kite_dev *kdev, u32 cqn)
{
	struct kite_cq *cq = xa_load(&kdev->cqs, cqn);

	if (!cq) {
		dev_dbg_ratelimited(&kdev->pdev->dev,
				    "completion event for unknown CQ %u\n", cqn);
		return;
	}
	clear_bit(KITE_CQ_ARMED, &cq->armed);
	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/**
 * kite_cq_async_event() - KITE_EVT_CQ_ERR for CQ @cqn
 * @kdev: device
 * @cqn: CQ number from the EQE
 *
 * Runs in the admin interrupt; dispatches IB_EVENT_CQ_ERR to the CQ's
 * event handler. The CQ stays in error until destroyed.
 */
void kite_cq_async_event(struct kite_dev *kdev, u32 cqn)
{
	struct kite_cq *cq = xa_load(&kdev->cqs, cqn);
	struct ib_event ev = {
		.device = &kdev->ibdev,
		.event = IB_EVENT_CQ_ERR,
	};

	if (!cq) {
		dev_warn_ratelimited(&kdev->pdev->dev,
				     "CQ error event for unknown CQ %u\n", cqn);
		return;
	}
	dev_warn_ratelimited(&kdev->pdev->dev,
			     "CQ %u overflowed or is not writable: in error\n",
			     cqn);
	ev.element.cq = &cq->ibcq;
	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}
