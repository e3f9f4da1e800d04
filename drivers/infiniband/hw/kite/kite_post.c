// SPDX-License-Identifier: GPL-2.0
/*
 * Kite data path for kernel consumers: post_send and post_recv build WQEs
 * in the coherent SQ/RQ rings of kernel QPs and ring the QP's doorbell on
 * the kernel doorbell page once per list. poll_cq and req_notify_cq are in
 * kite_cq.c.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/io.h>
#include <linux/string.h>

#include "kite_ib.h"
#include "kite_verbs.h"

/**
 * kite_qp_lock_cqs() - take the CQ locks of a kernel QP
 * @qp: kernel QP
 * @flags: saved interrupt state, for kite_qp_unlock_cqs()
 *
 * The send CQ's lock, then the receive CQ's if it is another CQ; two CQs
 * are taken in the order of their numbers, so that two QPs sharing them
 * in opposite roles cannot deadlock.
 */
void kite_qp_lock_cqs(struct kite_qp *qp, unsigned long *flags)
	__acquires(&to_kcq(qp->ibqp.send_cq)->lock)
	__acquires(&to_kcq(qp->ibqp.recv_cq)->lock)
{
	struct kite_cq *scq = to_kcq(qp->ibqp.send_cq);
	struct kite_cq *rcq = to_kcq(qp->ibqp.recv_cq);

	if (scq == rcq) {
		spin_lock_irqsave(&scq->lock, *flags);
		__acquire(&rcq->lock);
	} else if (scq->cqn < rcq->cqn) {
		spin_lock_irqsave(&scq->lock, *flags);
		spin_lock_nested(&rcq->lock, SINGLE_DEPTH_NESTING);
	} else {
		spin_lock_irqsave(&rcq->lock, *flags);
		spin_lock_nested(&scq->lock, SINGLE_DEPTH_NESTING);
	}
}

/**
 * kite_qp_unlock_cqs() - release what kite_qp_lock_cqs() took
 * @qp: kernel QP
 * @flags: interrupt state saved by kite_qp_lock_cqs()
 */
void kite_qp_unlock_cqs(struct kite_qp *qp, unsigned long flags)
	__releases(&to_kcq(qp->ibqp.send_cq)->lock)
	__releases(&to_kcq(qp->ibqp.recv_cq)->lock)
{
	struct kite_cq *scq = to_kcq(qp->ibqp.send_cq);
	struct kite_cq *rcq = to_kcq(qp->ibqp.recv_cq);

	if (scq == rcq) {
		__release(&rcq->lock);
		spin_unlock_irqrestore(&scq->lock, flags);
	} else if (scq->cqn < rcq->cqn) {
		spin_unlock(&rcq->lock);
		spin_unlock_irqrestore(&scq->lock, flags);
	} else {
		spin_unlock(&scq->lock);
		spin_unlock_irqrestore(&rcq->lock, flags);
	}
}

/**
 * kite_qp_clean_cqs() - drop a kernel QP's unpolled CQEs from its CQs
 * @qp: kernel QP the device writes no more CQEs for
 *
 * Called with the CQ locks held (kite_qp_lock_cqs()).
 */
void kite_qp_clean_cqs(struct kite_qp *qp)
{
	struct kite_cq *scq = to_kcq(qp->ibqp.send_cq);
	struct kite_cq *rcq = to_kcq(qp->ibqp.recv_cq);
	struct kite_srq *srq = qp->ibqp.srq ? to_ksrq(qp->ibqp.srq) : NULL;

	/* Receive CQEs of a QP on an SRQ give their SRQ slots back. */
	kite_cq_clean(scq, qp->qpn, srq);
	if (rcq != scq)
		kite_cq_clean(rcq, qp->qpn, srq);
}

/**
 * kite_qp_attach_cqs() - put a kernel QP on its CQs' QP lists
 * @qp: kernel QP, created on the device
 *
 * The lists let poll_cq flush the QP's WQEs when the device is dead.
 */
void kite_qp_attach_cqs(struct kite_qp *qp)
{
	unsigned long flags;

	kite_qp_lock_cqs(qp, &flags);
	list_add_tail(&qp->scq_node, &to_kcq(qp->ibqp.send_cq)->sq_list);
	list_add_tail(&qp->rcq_node, &to_kcq(qp->ibqp.recv_cq)->rq_list);
	kite_qp_unlock_cqs(qp, flags);
}

/**
 * kite_qp_reset_indexes() - forget every WQE of a kernel QP
 * @qp: kernel QP the device has just moved to RESET
 *
 * Called with qp->lock held after a successful MODIFY_QP to RESET, which
 * discards the WQEs and zeroes the device's indexes. The CQ locks keep
 * poll_cq out: it neither retires a WQE against the indexes being zeroed
 * nor sees the QP's CQEs from before the reset, which are dropped here.
 */
void kite_qp_reset_indexes(struct kite_qp *qp)
{
	unsigned long flags;

	kite_qp_lock_cqs(qp, &flags);
	kite_qp_clean_cqs(qp);
	spin_lock(&qp->sq_lock);
	qp->sq_pi = 0;
	/* Pairs with the acquire in kite_post_send(). */
	smp_store_release(&qp->sq_ci, 0);
	spin_unlock(&qp->sq_lock);
	spin_lock(&qp->rq_lock);
	qp->rq_pi = 0;
	/* Pairs with the acquire in kite_post_recv(). */
	smp_store_release(&qp->rq_ci, 0);
	spin_unlock(&qp->rq_lock);
	kite_qp_unlock_cqs(qp, flags);
}

static void *kite_sq_wqe(struct kite_qp *qp, u32 index)
{
	return qp->sq.buf + ((size_t)kite_ring_slot(index, qp->sq_log_depth) <<
			     qp->sq_log_stride);
}

static void *kite_rq_wqe(struct kite_qp *qp, u32 index)
{
	return qp->rq.buf + ((size_t)kite_ring_slot(index, qp->rq_log_depth) <<
			     qp->rq_log_stride);
}

void kite_set_sge(struct kite_sge *dst, const struct ib_sge *src)
{
	dst->addr = cpu_to_le64(src->addr);
	dst->length = cpu_to_le32(src->length);
	dst->lkey = cpu_to_le32(src->lkey);
}

/*
 * The device opcode and segment size of a send work request, checked
 * against the QP type and the device's capabilities.
 */
static int kite_send_opcode(struct kite_ib_dev *kib, const struct kite_qp *qp,
			    const struct ib_send_wr *wr, u8 *opcode,
			    size_t *seg_len)
{
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;

	bool mem_ok = kite_has_mem_mgt(kib) &&
		      qp->ibqp.qp_type != IB_QPT_GSI;

	*seg_len = 0;
	/* Local memory operations: RC, UC and UD QPs (as ib_core allows). */
	switch (wr->opcode) {
	case IB_WR_REG_MR:
		*opcode = KITE_WQE_REG_MR;
		*seg_len = sizeof(struct kite_wqe_reg_mr);
		return mem_ok ? 0 : -EINVAL;
	case IB_WR_LOCAL_INV:
		*opcode = KITE_WQE_LOCAL_INV;
		return mem_ok ? 0 : -EINVAL;
	default:
		break;
	}
	if (kite_qp_is_ud(qp)) {
		/* Datagrams: SEND and SEND with immediate, to an AH. */
		*seg_len = sizeof(struct kite_wqe_ud);
		if (wr->opcode == IB_WR_SEND)
			*opcode = KITE_WQE_SEND;
		else if (wr->opcode == IB_WR_SEND_WITH_IMM)
			*opcode = KITE_WQE_SEND_IMM;
		else
			return -EINVAL;
		return 0;
	}
	switch (wr->opcode) {
	case IB_WR_SEND:
		*opcode = KITE_WQE_SEND;
		return 0;
	case IB_WR_SEND_WITH_IMM:
		*opcode = KITE_WQE_SEND_IMM;
		return 0;
	case IB_WR_SEND_WITH_INV:
		*opcode = KITE_WQE_SEND_INV;
		return rc && kite_has_mem_mgt(kib) ? 0 : -EINVAL;
	case IB_WR_RDMA_WRITE:
		*opcode = KITE_WQE_WRITE;
		*seg_len = sizeof(struct kite_wqe_raddr);
		return 0;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		*opcode = KITE_WQE_WRITE_IMM;
		*seg_len = sizeof(struct kite_wqe_raddr);
		return 0;
	case IB_WR_RDMA_READ:
		*opcode = KITE_WQE_READ;
		*seg_len = sizeof(struct kite_wqe_raddr);
		return rc ? 0 : -EINVAL;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		*opcode = KITE_WQE_CMP_SWP;
		*seg_len = sizeof(struct kite_wqe_atomic);
		break;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		*opcode = KITE_WQE_FETCH_ADD;
		*seg_len = sizeof(struct kite_wqe_atomic);
		break;
	default:
		return -EINVAL;
	}
	/* Atomics. */
	if (!rc || !(kib->kdev->caps.cap_flags & KITE_DEV_CAP_ATOMIC))
		return -EINVAL;
	return 0;
}

/* Copy the SGEs' bytes (kernel virtual addresses) into the WQE. */
static int kite_copy_inline(const struct kite_qp *qp,
			    const struct ib_send_wr *wr, void *data, u16 *len)
{
	size_t total = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		if (sge->length > qp->max_inline - total)
			return -EINVAL;
		memcpy(data + total, (void *)(uintptr_t)sge->addr,
		       sge->length);
		total += sge->length;
	}
	*len = total;
	return 0;
}

/*
 * The UD segment of a send to @wr's address handle. The WQE carries a copy
 * of the AH's address vector: the AH may be destroyed once posted.
 */
static int kite_build_ud_seg(struct kite_ib_dev *kib, const struct kite_qp *qp,
			     const struct ib_send_wr *wr,
			     struct kite_wqe_ud *ud)
{
	const struct ib_ud_wr *uwr = ud_wr(wr);

	if (!uwr->ah || uwr->ah->device != &kib->ibdev ||
	    uwr->remote_qpn & ~IB_QPN_MASK)
		return -EINVAL;
	/* One P_Key (index 0); ib_mad names it for GSI sends. */
	if (qp->ibqp.qp_type == IB_QPT_GSI && uwr->pkey_index)
		return -EINVAL;
	ud->av = to_kah(uwr->ah)->av;
	ud->remote_qpn = cpu_to_le32(uwr->remote_qpn);
	/*
	 * A Q_Key with KITE_WQE_UD_QKEY_OWN set means "the QP's own Q_Key"
	 * (the device substitutes it); the GSI QP always sends GSI_QKEY.
	 */
	ud->remote_qkey = cpu_to_le32(uwr->remote_qkey);
	return 0;
}

/**
 * kite_build_send_wqe() - write one send WQE
 * @kib: RDMA device
 * @qp: kernel RC, UC, UD or GSI QP
 * @wr: work request
 * @wqe: the free SQ slot, stride bytes
 *
 * Layout: header, segment (kite_wqe_raddr for WRITE and READ,
 * kite_wqe_atomic for atomics, kite_wqe_ud for UD and GSI sends,
 * kite_wqe_reg_mr for REG_MR, none for RC/UC SEND and LOCAL_INV), then
 * the SGEs or the inline data (none for REG_MR and LOCAL_INV).
 *
 * A UD message larger than the port's active MTU is posted as any other:
 * the device completes it successfully without sending it (IBTA
 * C10-93.1.1), so the receiver never sees it.
 *
 * Return: 0, or -EINVAL for an opcode the QP cannot execute, too many
 * SGEs, too much inline data, inline data on READ, an atomic or a memory
 * operation, a UD send without a valid AH or remote QPN, or a REG_MR
 * kite_build_reg_mr() refuses.
 */
static int kite_build_send_wqe(struct kite_ib_dev *kib, struct kite_qp *qp,
			       const struct ib_send_wr *wr, void *wqe)
{
	struct kite_sq_wqe_hdr *hdr = wqe;
	void *seg = hdr + 1;
	size_t seg_len;
	void *data;
	u16 inline_len;
	u8 opcode;
	int err, i;

	err = kite_send_opcode(kib, qp, wr, &opcode, &seg_len);
	if (err)
		return err;
	data = seg + seg_len;
	memset(hdr, 0, sizeof(*hdr) + seg_len);
	hdr->opcode = opcode;

	if (wr->send_flags & IB_SEND_SIGNALED || qp->sig_all)
		hdr->flags |= KITE_WQE_F_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		hdr->flags |= KITE_WQE_F_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		hdr->flags |= KITE_WQE_F_FENCE;
	if (opcode == KITE_WQE_SEND_IMM || opcode == KITE_WQE_WRITE_IMM)
		/* Big-endian in ib_send_wr and on the wire: copied as is. */
		hdr->imm_data = (__force __le32)wr->ex.imm_data;
	else if (opcode == KITE_WQE_SEND_INV || opcode == KITE_WQE_LOCAL_INV)
		/* A key, in CPU order in ib_send_wr: little-endian here. */
		hdr->imm_data = cpu_to_le32(wr->ex.invalidate_rkey);

	/* No data: whatever num_sge and sg_list hold is not read. */
	if ((opcode == KITE_WQE_REG_MR || opcode == KITE_WQE_LOCAL_INV) &&
	    (wr->send_flags & IB_SEND_INLINE))
		return -EINVAL;
	if (opcode == KITE_WQE_REG_MR)
		return kite_build_reg_mr(kib, wr, seg);
	if (opcode == KITE_WQE_LOCAL_INV)
		return 0;

	if (kite_qp_is_ud(qp)) {
		err = kite_build_ud_seg(kib, qp, wr, seg);
		if (err)
			return err;
	}

	switch (opcode) {
	case KITE_WQE_WRITE:
	case KITE_WQE_WRITE_IMM:
	case KITE_WQE_READ: {
		struct kite_wqe_raddr *raddr = seg;

		raddr->remote_addr = cpu_to_le64(rdma_wr(wr)->remote_addr);
		raddr->rkey = cpu_to_le32(rdma_wr(wr)->rkey);
		break;
	}
	case KITE_WQE_CMP_SWP:
	case KITE_WQE_FETCH_ADD: {
		const struct ib_atomic_wr *awr = atomic_wr(wr);
		struct kite_wqe_atomic *atomic = seg;

		atomic->remote_addr = cpu_to_le64(awr->remote_addr);
		atomic->rkey = cpu_to_le32(awr->rkey);
		if (opcode == KITE_WQE_CMP_SWP) {
			atomic->swap_add = cpu_to_le64(awr->swap);
			atomic->compare = cpu_to_le64(awr->compare_add);
		} else {
			atomic->swap_add = cpu_to_le64(awr->compare_add);
		}
		break;
	}
	default:
		break;
	}

	if (wr->send_flags & IB_SEND_INLINE) {
		if (opcode == KITE_WQE_READ || opcode == KITE_WQE_CMP_SWP ||
		    opcode == KITE_WQE_FETCH_ADD)
			return -EINVAL;
		err = kite_copy_inline(qp, wr, data, &inline_len);
		if (err)
			return err;
		hdr->flags |= KITE_WQE_F_INLINE;
		hdr->inline_len = cpu_to_le16(inline_len);
		return 0;
	}

	if (wr->num_sge < 0 || wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	if (opcode == KITE_WQE_READ && kib->kdev->caps.max_sge_rd &&
	    wr->num_sge > kib->kdev->caps.max_sge_rd)
		return -EINVAL;
	hdr->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++)
		kite_set_sge((struct kite_sge *)data + i, &wr->sg_list[i]);
	return 0;
}

/**
 * kite_post_send() - post a list of send work requests on a kernel QP
 * @ibqp: RC, UC, UD or GSI QP
 * @wr: first work request of the list
 * @bad_wr: the first request not posted, on error
 *
 * Every WQE is written to its slot, then one doorbell (the new producer
 * index) covers the whole list. A QP in ERR takes WQEs; the device flushes
 * them.
 *
 * Return: 0; -EINVAL for a QP in RESET, INIT or RTR, a user QP, or a
 * malformed request; -ENOMEM when the SQ is full. Requests before
 * *@bad_wr were posted.
 */
int kite_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct kite_ib_dev *kib = to_kib(ibqp->device);
	struct kite_qp *qp = to_kqp(ibqp);
	u32 depth = 1u << qp->sq_log_depth;
	enum ib_qp_state state;
	unsigned long flags;
	bool posted;
	int err = 0;
	u32 pi;

	state = READ_ONCE(qp->state);
	if (!qp->sq_wrid || state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_RTR) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->sq_lock, flags);
	pi = qp->sq_pi;
	for (; wr; wr = wr->next) {
		/* A slot is reused only after poll_cq read its wr_id. */
		if (kite_ring_used(pi, smp_load_acquire(&qp->sq_ci)) >= depth) {
			err = -ENOMEM;
			break;
		}
		err = kite_build_send_wqe(kib, qp, wr, kite_sq_wqe(qp, pi));
		if (err)
			break;
		qp->sq_wrid[kite_ring_slot(pi, qp->sq_log_depth)] = wr->wr_id;
		pi++;
	}
	posted = pi != qp->sq_pi;
	if (posted) {
		/* wr_id before pi: pairs with the acquire of a flush by poll_cq. */
		smp_store_release(&qp->sq_pi, pi);
		/* The WQEs must be in memory before the device hears of them. */
		wmb();
		kite_db_write(kib->kdev, KITE_DB_SQ, qp->qpn, 0, pi);
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	/* A dead device completes nothing: poll_cq flushes the WQEs. */
	if (posted && kite_admin_is_dead(&kib->kdev->admin))
		kite_cq_kick_flush(to_kcq(ibqp->send_cq));
	if (err)
		*bad_wr = wr;
	return err;
}

/**
 * kite_post_recv() - post a list of receive work requests on a kernel QP
 * @ibqp: QP
 * @wr: first work request of the list
 * @bad_wr: the first request not posted, on error
 *
 * Return: 0; -EINVAL for a QP in RESET, a user QP, a QP on an SRQ or too
 * many SGEs;
 * -ENOMEM when the RQ is full. Requests before *@bad_wr were posted.
 */
int kite_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct kite_ib_dev *kib = to_kib(ibqp->device);
	struct kite_qp *qp = to_kqp(ibqp);
	u32 depth = 1u << qp->rq_log_depth;
	struct kite_rq_wqe_hdr *hdr;
	struct kite_sge *sge;
	unsigned long flags;
	bool posted;
	int err = 0;
	u32 pi;
	int i;

	/* A QP on an SRQ receives through ib_post_srq_recv() only. */
	if (!qp->rq_wrid || ibqp->srq ||
	    READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->rq_lock, flags);
	pi = qp->rq_pi;
	for (; wr; wr = wr->next) {
		/* A slot is reused only after poll_cq read its wr_id. */
		if (kite_ring_used(pi, smp_load_acquire(&qp->rq_ci)) >= depth) {
			err = -ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || wr->num_sge > qp->max_recv_sge) {
			err = -EINVAL;
			break;
		}
		hdr = kite_rq_wqe(qp, pi);
		memset(hdr, 0, sizeof(*hdr));
		hdr->num_sge = wr->num_sge;
		sge = (struct kite_sge *)(hdr + 1);
		for (i = 0; i < wr->num_sge; i++)
			kite_set_sge(&sge[i], &wr->sg_list[i]);
		qp->rq_wrid[kite_ring_slot(pi, qp->rq_log_depth)] = wr->wr_id;
		pi++;
	}
	posted = pi != qp->rq_pi;
	if (posted) {
		/* wr_id before pi: pairs with the acquire of a flush by poll_cq. */
		smp_store_release(&qp->rq_pi, pi);
		/* The WQEs must be in memory before the device hears of them. */
		wmb();
		kite_db_write(kib->kdev, KITE_DB_RQ, qp->qpn, 0, pi);
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	/* A dead device completes nothing: poll_cq flushes the WQEs. */
	if (posted && kite_admin_is_dead(&kib->kdev->admin))
		kite_cq_kick_flush(to_kcq(ibqp->recv_cq));
	if (err)
		*bad_wr = wr;
	return err;
}
