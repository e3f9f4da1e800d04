// SPDX-License-Identifier: GPL-2.0
/*
 * Kite completion queues, the kernel data path: polling CQEs into ib_wc
 * (and retiring the WQEs they complete), arming through the CQ doorbell,
 * and dropping the CQEs of a QP that was reset or destroyed.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/etherdevice.h>

#include "kite_ib.h"
#include "kite_verbs.h"

/* CQE status values are ib_core's, passed through. */
static_assert(KITE_CQE_SUCCESS == (int)IB_WC_SUCCESS);
static_assert(KITE_CQE_LOC_LEN_ERR == (int)IB_WC_LOC_LEN_ERR);
static_assert(KITE_CQE_LOC_QP_OP_ERR == (int)IB_WC_LOC_QP_OP_ERR);
static_assert(KITE_CQE_LOC_PROT_ERR == (int)IB_WC_LOC_PROT_ERR);
static_assert(KITE_CQE_WR_FLUSH_ERR == (int)IB_WC_WR_FLUSH_ERR);
static_assert(KITE_CQE_MW_BIND_ERR == (int)IB_WC_MW_BIND_ERR);
static_assert(KITE_CQE_BAD_RESP_ERR == (int)IB_WC_BAD_RESP_ERR);
static_assert(KITE_CQE_LOC_ACCESS_ERR == (int)IB_WC_LOC_ACCESS_ERR);
static_assert(KITE_CQE_REM_INV_REQ_ERR == (int)IB_WC_REM_INV_REQ_ERR);
static_assert(KITE_CQE_REM_ACCESS_ERR == (int)IB_WC_REM_ACCESS_ERR);
static_assert(KITE_CQE_REM_OP_ERR == (int)IB_WC_REM_OP_ERR);
static_assert(KITE_CQE_RETRY_EXC_ERR == (int)IB_WC_RETRY_EXC_ERR);
static_assert(KITE_CQE_RNR_RETRY_EXC_ERR == (int)IB_WC_RNR_RETRY_EXC_ERR);
static_assert(KITE_CQE_GENERAL_ERR == (int)IB_WC_GENERAL_ERR);
/* A UD receive buffer starts with the GRH area ib_core consumers expect. */
static_assert(sizeof(struct ib_grh) == KITE_UD_GRH_LEN);

/* Give the device the consumer index (frees CQ space). Under cq->lock. */
static void kite_cq_report_ci(struct kite_ib_dev *kib, struct kite_cq *cq)
{
	kite_db_write(kib->kdev, KITE_DB_CQ, cq->cqn, 0, cq->ci);
	cq->ci_reported = cq->ci;
}

/*
 * Mark the written, unpolled CQEs of QP @qpn among @n entries of @ring from
 * free-running index @ci on as belonging to no QP (0 is never a QP
 * number), so that kite_poll_cq() drops them. Entries between the
 * consumer index and the device's producer index belong to the consumer.
 * The receives of a QP on SRQ @srq give their slots back to it.
 */
static void kite_cq_ring_clean(struct kite_cqe *ring, u8 log_depth, u32 ci,
			       u32 n, u32 qpn, struct kite_srq *srq)
{
	struct kite_cqe *cqe;
	u64 wr_id;
	u32 i;

	for (i = 0; i < n; i++) {
		cqe = &ring[kite_ring_slot(ci + i, log_depth)];
		if ((READ_ONCE(cqe->flags) & KITE_CQE_F_PHASE) !=
		    kite_ring_phase(ci + i, log_depth))
			break;
		dma_rmb();
		if (le32_to_cpu(cqe->qpn) != qpn)
			continue;
		if (srq && kite_cqe_is_recv(cqe->opcode))
			kite_srq_retire(srq, le16_to_cpu(cqe->wqe_idx), &wr_id);
		cqe->qpn = 0;
	}
}

/**
 * kite_cq_clean() - drop the unpolled CQEs of a QP from a kernel CQ
 * @cq: kernel CQ, with cq->lock held
 * @qpn: QP that was reset or destroyed
 * @srq: the QP's SRQ, or NULL
 *
 * Called once the device writes no more CQEs for @qpn (MODIFY_QP to RESET
 * or DESTROY_QP returned). Without this, a CQE of the QP's previous life
 * would complete a WQE posted after the reset, or a QP that reuses the
 * number.
 */
void kite_cq_clean(struct kite_cq *cq, u32 qpn, struct kite_srq *srq)
{
	lockdep_assert_held(&cq->lock);
	if (cq->draining) {
		/* Old ring (in cq->ring) up to old_pi, then the new ring. */
		kite_cq_ring_clean(cq->ring.buf, cq->log_depth, cq->ci,
				   cq->old_pi - cq->ci, qpn, srq);
		kite_cq_ring_clean(cq->old_ring.buf, cq->old_log_depth, 0,
				   1u << cq->old_log_depth, qpn, srq);
	} else {
		kite_cq_ring_clean(cq->ring.buf, cq->log_depth, cq->ci,
				   1u << cq->log_depth, qpn, srq);
	}
}

/* The index the CQ doorbell reports: the new ring's while the old drains. */
static u32 kite_cq_db_ci(const struct kite_cq *cq)
{
	return cq->draining ? 0 : cq->ci;
}

/**
 * kite_cq_end_resize() - end the resize window of a kernel CQ
 * @kib: RDMA device
 * @cq: kernel CQ, with cq->lock held, its ring (old or new) settled
 *
 * Applies an arm that req_notify_cq deferred meanwhile, with the index of
 * the ring the device now writes: the device fires at once if CQEs beyond
 * it exist, so no event is lost.
 */
void kite_cq_end_resize(struct kite_ib_dev *kib, struct kite_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	cq->resizing = false;
	if (cq->arm_pending) {
		cq->ci_reported = kite_cq_db_ci(cq);
		kite_db_write(kib->kdev, KITE_DB_CQ, cq->cqn, cq->arm_pending,
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
	case KITE_CQE_REG_MR:
		return IB_WC_REG_MR;
	case KITE_CQE_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case KITE_CQE_BIND_MW:
		return IB_WC_BIND_MW;
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
 * A receive of a QP on an SRQ names an SRQ slot instead, which goes back
 * to the SRQ's free list.
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

	if (recv && qp->ibqp.srq)
		return kite_srq_retire(to_ksrq(qp->ibqp.srq), slot, wr_id);
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
static bool kite_cqe_to_wc(struct kite_ib_dev *kib, struct kite_cq *cq,
			   const struct kite_cqe *cqe, struct ib_wc *wc)
{
	u32 qpn = le32_to_cpu(cqe->qpn);
	struct kite_qp *qp;
	u64 wr_id;

	/* destroy_qp takes cq->lock after erasing: qp stays valid here. */
	qp = xa_load(&kib->qps, qpn);
	if (!qp || !qp->sq_wrid || !kite_cqe_retire(qp, cqe, &wr_id)) {
		dev_dbg_ratelimited(kite_ib_dmadev(kib),
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
	} else if (cqe->flags & KITE_CQE_F_INV) {
		/* A key: little-endian in the CQE, CPU order in ib_wc. */
		wc->ex.invalidate_rkey = le32_to_cpu(cqe->imm_data);
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
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
	struct kite_ib_dev *kib = to_kib(ibcq->device);
	struct kite_cq *cq = to_kcq(ibcq);
	struct kite_cqe *cqe;
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries && (cqe = kite_cq_peek(cq))) {
		cq->ci++;
		if (kite_cqe_to_wc(kib, cq, cqe, &wc[n]))
			n++;
		if (!cq->draining && !cq->resizing &&
		    kite_ring_used(cq->ci, cq->ci_reported) >=
		    (1u << cq->log_depth) / 2)
			kite_cq_report_ci(kib, cq);
	}
	if (!cq->draining && !cq->resizing && cq->ci != cq->ci_reported)
		kite_cq_report_ci(kib, cq);
	if (n < num_entries && kite_admin_is_dead(&kib->kdev->admin))
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
	struct kite_ib_dev *kib = to_kib(ibcq->device);
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
	kite_db_write(kib->kdev, KITE_DB_CQ, cq->cqn, arm, cq->ci_reported);
	/* A dead device has flushes to poll, and posts no event for them. */
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    (kite_cq_peek(cq) || (kite_admin_is_dead(&kib->kdev->admin) &&
				  kite_cq_sw_pending(cq))))
		ret = 1;
out:
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
