// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kite RoCEv2 NIC: rdma-core provider, extended QPs: ibv_create_qp_ex()
 * and the work request API (ibv_wr_start, the ibv_wr_* builders and
 * setters, ibv_wr_complete, ibv_wr_abort).
 *
 * A builder starts a struct ibv_send_wr in the QP's batch and the setters
 * fill it in; it is written to the SQ by the code of ibv_post_send()
 * (kite_sq_put() in kite_fast.c) when the next builder starts or the batch
 * completes, so both interfaces make the same WQE of the same request.
 * The SQ lock is held from ibv_wr_start() to ibv_wr_complete() or
 * ibv_wr_abort(). The first error of a batch is kept and returned by
 * ibv_wr_complete(), which then posts nothing of it (as ibv_wr_post(3)
 * says); the WQEs written so far are beyond the producer index the device
 * knows, so forgetting them is enough.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kite.h"

/*
 * The batch of a QP between ibv_wr_start() and its end. @wr is the
 * request the last builder started (@pending until it is written); its
 * sg_list is @sge (the QP's max_send_sge entries), where the setters copy
 * the caller's SGEs; inline data is copied into @inl (max_inline_data
 * bytes) by its setter, as the API wants, and @wr's one SGE points there.
 */
struct kite_wr_batch {
	struct ibv_send_wr wr;
	bool pending;
	int err;		/* first error of the batch, or 0 */
	uint32_t pi;		/* SQ index of the next WQE */
	struct ibv_sge inl_sge;	/* the SGE naming @inl */
	struct ibv_sge *sge;
	uint8_t *inl;
};

/* The init attributes the provider takes beyond the PD. */
#define KITE_QP_EX_COMP_MASK	(IBV_QP_INIT_ATTR_PD | \
				 IBV_QP_INIT_ATTR_CREATE_FLAGS | \
				 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)

/*
 * The operations a QP of @type takes: those ibv_post_send() takes
 * (kite_wqe_opcode()). Up to SEND_WITH_INV, IBV_QP_EX_WITH_x is
 * 1 << IBV_WR_x; the device has none of the operations after it.
 */
static uint64_t kite_qp_ex_send_ops(enum ibv_qp_type type)
{
	uint64_t ops = 0;
	unsigned int op;

	if (type != IBV_QPT_RC && type != IBV_QPT_UC && type != IBV_QPT_UD)
		return 0;
	for (op = IBV_WR_RDMA_WRITE; op <= IBV_WR_SEND_WITH_INV; op++)
		if (kite_wqe_opcode(type, op) >= 0)
			ops |= 1ULL << op;
	return ops;
}

/*
 * Whether a QP can be created as @attr asks: 0, or EOPNOTSUPP for what the
 * device cannot do. No XRC domain, TSO, RSS or indirection table; no
 * creation flag (Kite has no multicast loopback to block, no FCS
 * scattering, VLAN stripping, source QPN or padding); only the
 * operations of ibv_post_send() for the QP type. The QP type itself is
 * checked by the driver, as for ibv_create_qp().
 */
int kite_qp_ex_check(const struct ibv_qp_init_attr_ex *attr)
{
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd)
		return EINVAL;
	if (attr->comp_mask & ~(uint32_t)KITE_QP_EX_COMP_MASK)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~kite_qp_ex_send_ops(attr->qp_type)))
		return EOPNOTSUPP;
	return 0;
}

static inline struct kite_qp *kite_qp_of_ex(struct ibv_qp_ex *ibqp)
{
	return container_of(ibqp, struct kite_qp, vqp.qp_ex);
}

/* ---- the batch ------------------------------------------------------------ */

/* The batch fails with @err, unless it failed already. */
static void kite_wr_fail(struct kite_wr_batch *b, int err)
{
	if (!b->err)
		b->err = err;
}

/* Write the pending request to the SQ, unless the batch failed already. */
static void kite_wr_flush(struct kite_qp *qp)
{
	struct kite_wr_batch *b = qp->batch;

	if (!b->pending)
		return;
	b->pending = false;
	if (!b->err)
		b->err = kite_sq_put(qp, &b->wr, &b->pi);
}

/*
 * A builder: the previous request goes to the SQ, a new one starts with
 * the caller's wr_id and flags. IBV_SEND_INLINE in wr_flags means
 * nothing here (inline data has its setters) and is dropped.
 */
static struct ibv_send_wr *kite_wr_begin(struct ibv_qp_ex *ibqp,
					 enum ibv_wr_opcode opcode)
{
	struct kite_qp *qp = kite_qp_of_ex(ibqp);
	struct kite_wr_batch *b = qp->batch;

	kite_wr_flush(qp);
	memset(&b->wr, 0, sizeof(b->wr));
	b->wr.wr_id = ibqp->wr_id;
	b->wr.opcode = opcode;
	b->wr.send_flags = ibqp->wr_flags & ~(unsigned int)IBV_SEND_INLINE;
	b->wr.sg_list = b->sge;
	b->pending = true;
	return &b->wr;
}

/*
 * The request a setter fills in, or NULL when there is none (a setter
 * before any builder: the batch fails with EINVAL).
 */
static struct ibv_send_wr *kite_wr_cur(struct ibv_qp_ex *ibqp)
{
	struct kite_wr_batch *b = kite_qp_of_ex(ibqp)->batch;

	if (!b->pending) {
		kite_wr_fail(b, EINVAL);
		return NULL;
	}
	return &b->wr;
}

static void kite_wr_start(struct ibv_qp_ex *ibqp)
{
	struct kite_qp *qp = kite_qp_of_ex(ibqp);
	struct kite_wr_batch *b = qp->batch;

	pthread_spin_lock(&qp->sq.lock);
	b->pi = qp->sq.pi;
	b->pending = false;
	b->err = kite_sq_takes_work(ibqp->qp_base.state) ? 0 : EINVAL;
}

static int kite_wr_complete(struct ibv_qp_ex *ibqp)
{
	struct kite_qp *qp = kite_qp_of_ex(ibqp);
	struct kite_wr_batch *b = qp->batch;
	int err;

	kite_wr_flush(qp);
	err = b->err;
	if (!err)
		kite_sq_publish(qp, b->pi);
	pthread_spin_unlock(&qp->sq.lock);
	return err;
}

static void kite_wr_abort(struct ibv_qp_ex *ibqp)
{
	struct kite_qp *qp = kite_qp_of_ex(ibqp);

	qp->batch->pending = false;
	pthread_spin_unlock(&qp->sq.lock);
}

/* ---- builders ------------------------------------------------------------- */

static void kite_wr_send(struct ibv_qp_ex *ibqp)
{
	kite_wr_begin(ibqp, IBV_WR_SEND);
}

static void kite_wr_send_imm(struct ibv_qp_ex *ibqp, __be32 imm_data)
{
	kite_wr_begin(ibqp, IBV_WR_SEND_WITH_IMM)->imm_data = imm_data;
}

static void kite_wr_send_inv(struct ibv_qp_ex *ibqp, uint32_t invalidate_rkey)
{
	kite_wr_begin(ibqp, IBV_WR_SEND_WITH_INV)->invalidate_rkey =
		invalidate_rkey;
}

static void kite_wr_rdma(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode opcode,
			 uint32_t rkey, uint64_t remote_addr)
{
	struct ibv_send_wr *wr = kite_wr_begin(ibqp, opcode);

	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = remote_addr;
}

static void kite_wr_rdma_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
			       uint64_t remote_addr)
{
	kite_wr_rdma(ibqp, IBV_WR_RDMA_WRITE, rkey, remote_addr);
}

static void kite_wr_rdma_write_imm(struct ibv_qp_ex *ibqp, uint32_t rkey,
				   uint64_t remote_addr, __be32 imm_data)
{
	kite_wr_rdma(ibqp, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr);
	kite_qp_of_ex(ibqp)->batch->wr.imm_data = imm_data;
}

static void kite_wr_rdma_read(struct ibv_qp_ex *ibqp, uint32_t rkey,
			      uint64_t remote_addr)
{
	kite_wr_rdma(ibqp, IBV_WR_RDMA_READ, rkey, remote_addr);
}

static void kite_wr_atomic(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode opcode,
			   uint32_t rkey, uint64_t remote_addr,
			   uint64_t compare_add, uint64_t swap)
{
	struct ibv_send_wr *wr = kite_wr_begin(ibqp, opcode);

	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.remote_addr = remote_addr;
	wr->wr.atomic.compare_add = compare_add;
	wr->wr.atomic.swap = swap;
}

static void kite_wr_atomic_cmp_swp(struct ibv_qp_ex *ibqp, uint32_t rkey,
				   uint64_t remote_addr, uint64_t compare,
				   uint64_t swap)
{
	kite_wr_atomic(ibqp, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
		       compare, swap);
}

static void kite_wr_atomic_fetch_add(struct ibv_qp_ex *ibqp, uint32_t rkey,
				     uint64_t remote_addr, uint64_t add)
{
	kite_wr_atomic(ibqp, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr,
		       add, 0);
}

static void kite_wr_local_inv(struct ibv_qp_ex *ibqp, uint32_t invalidate_rkey)
{
	kite_wr_begin(ibqp, IBV_WR_LOCAL_INV)->invalidate_rkey =
		invalidate_rkey;
}

static void kite_wr_bind_mw(struct ibv_qp_ex *ibqp, struct ibv_mw *mw,
			    uint32_t rkey,
			    const struct ibv_mw_bind_info *bind_info)
{
	struct ibv_send_wr *wr = kite_wr_begin(ibqp, IBV_WR_BIND_MW);

	wr->bind_mw.mw = mw;
	wr->bind_mw.rkey = rkey;
	wr->bind_mw.bind_info = *bind_info;
}

/* ---- setters -------------------------------------------------------------- */

static void kite_wr_set_ud_addr(struct ibv_qp_ex *ibqp, struct ibv_ah *ah,
				uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct ibv_send_wr *wr = kite_wr_cur(ibqp);

	if (!wr)
		return;
	wr->wr.ud.ah = ah;
	wr->wr.ud.remote_qpn = remote_qpn;
	wr->wr.ud.remote_qkey = remote_qkey;
}

/*
 * The SGEs are copied (the caller's array may go once the setter
 * returns); more than the QP's max_send_sge fail the batch (EINVAL, as
 * post_send refuses them).
 */
static void kite_wr_set_sge_list(struct ibv_qp_ex *ibqp, size_t num_sge,
				 const struct ibv_sge *sg_list)
{
	struct kite_qp *qp = kite_qp_of_ex(ibqp);
	struct ibv_send_wr *wr = kite_wr_cur(ibqp);

	if (!wr)
		return;
	if (num_sge > qp->sq.max_sge) {
		kite_wr_fail(qp->batch, EINVAL);
		return;
	}
	memcpy(qp->batch->sge, sg_list, num_sge * sizeof(*sg_list));
	wr->sg_list = qp->batch->sge;
	wr->num_sge = num_sge;
}

static void kite_wr_set_sge(struct ibv_qp_ex *ibqp, uint32_t lkey,
			    uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	kite_wr_set_sge_list(ibqp, 1, &sge);
}

/* Inline data is for sends and writes (ibv_wr_post(3)). */
static bool kite_wr_takes_inline(enum ibv_wr_opcode opcode)
{
	switch (opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return true;
	default:
		return false;
	}
}

/*
 * Inline data is copied here, as ibv_wr_post(3) wants, into the batch's
 * buffer, which the request then names as IBV_SEND_INLINE data. More than
 * the QP's max_inline_data, or inline data for another operation, fails
 * the batch (EINVAL).
 */
static void kite_wr_set_inline_data_list(struct ibv_qp_ex *ibqp,
					 size_t num_buf,
					 const struct ibv_data_buf *buf_list)
{
	struct kite_qp *qp = kite_qp_of_ex(ibqp);
	struct ibv_send_wr *wr = kite_wr_cur(ibqp);
	struct kite_wr_batch *b = qp->batch;
	size_t i, len = 0;

	if (!wr)
		return;
	if (!kite_wr_takes_inline(wr->opcode)) {
		kite_wr_fail(b, EINVAL);
		return;
	}
	for (i = 0; i < num_buf; i++) {
		if (buf_list[i].length > qp->max_inline - len) {
			kite_wr_fail(b, EINVAL);
			return;
		}
		if (buf_list[i].length)
			memcpy(b->inl + len, buf_list[i].addr,
			       buf_list[i].length);
		len += buf_list[i].length;
	}
	b->inl_sge.addr = (uintptr_t)b->inl;
	b->inl_sge.length = len;
	b->inl_sge.lkey = 0;
	wr->sg_list = &b->inl_sge;
	wr->num_sge = 1;
	wr->send_flags |= IBV_SEND_INLINE;
}

static void kite_wr_set_inline_data(struct ibv_qp_ex *ibqp, void *addr,
				    size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	kite_wr_set_inline_data_list(ibqp, 1, &buf);
}

/* ---- setup ---------------------------------------------------------------- */

/*
 * Give @qp (created, its caps known) the work request API for the
 * operations in @send_ops_flags (checked by kite_qp_ex_check()): the
 * builders of those operations, the setters and the batch calls. The
 * builders of operations not asked for stay NULL (ibv_wr_post(3)).
 */
int kite_qp_ex_setup(struct kite_qp *qp, uint64_t send_ops_flags)
{
	struct ibv_qp_ex *ex = &qp->vqp.qp_ex;
	struct kite_wr_batch *b;

	b = calloc(1, sizeof(*b) + qp->sq.max_sge * sizeof(*b->sge) +
		   qp->max_inline);
	if (!b)
		return ENOMEM;
	b->sge = (struct ibv_sge *)(b + 1);
	b->inl = (uint8_t *)(b->sge + qp->sq.max_sge);
	qp->batch = b;

	if (send_ops_flags & IBV_QP_EX_WITH_SEND)
		ex->wr_send = kite_wr_send;
	if (send_ops_flags & IBV_QP_EX_WITH_SEND_WITH_IMM)
		ex->wr_send_imm = kite_wr_send_imm;
	if (send_ops_flags & IBV_QP_EX_WITH_SEND_WITH_INV)
		ex->wr_send_inv = kite_wr_send_inv;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE)
		ex->wr_rdma_write = kite_wr_rdma_write;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		ex->wr_rdma_write_imm = kite_wr_rdma_write_imm;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_READ)
		ex->wr_rdma_read = kite_wr_rdma_read;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		ex->wr_atomic_cmp_swp = kite_wr_atomic_cmp_swp;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		ex->wr_atomic_fetch_add = kite_wr_atomic_fetch_add;
	if (send_ops_flags & IBV_QP_EX_WITH_LOCAL_INV)
		ex->wr_local_inv = kite_wr_local_inv;
	if (send_ops_flags & IBV_QP_EX_WITH_BIND_MW)
		ex->wr_bind_mw = kite_wr_bind_mw;
	if (qp->vqp.qp.qp_type == IBV_QPT_UD)
		ex->wr_set_ud_addr = kite_wr_set_ud_addr;
	ex->wr_set_sge = kite_wr_set_sge;
	ex->wr_set_sge_list = kite_wr_set_sge_list;
	ex->wr_set_inline_data = kite_wr_set_inline_data;
	ex->wr_set_inline_data_list = kite_wr_set_inline_data_list;
	ex->wr_start = kite_wr_start;
	ex->wr_complete = kite_wr_complete;
	ex->wr_abort = kite_wr_abort;
	qp->vqp.comp_mask |= VERBS_QP_EX;
	return 0;
}

void kite_qp_ex_free(struct kite_qp *qp)
{
	free(qp->batch);
	qp->batch = NULL;
}

/*
 * With only what kite_qp_ex_check() lets through, the QP is one that
 * ibv_create_qp() can make (the kernel gets no creation flags), so it is
 * created the same way; the caps it got are passed back, and with
 * IBV_QP_INIT_ATTR_SEND_OPS_FLAGS it gets the work request API.
 */
struct ibv_qp *kite_create_qp_ex(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp *ibqp;
	int err;

	err = kite_qp_ex_check(attr);
	if (err) {
		errno = err;
		return NULL;
	}
	/*
	 * struct ibv_qp_init_attr_ex begins with struct ibv_qp_init_attr;
	 * the caps the QP got are written back through it.
	 */
	ibqp = kite_create_qp(attr->pd, (struct ibv_qp_init_attr *)attr);
	if (!ibqp)
		return NULL;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		err = kite_qp_ex_setup(to_kite_qp(ibqp), attr->send_ops_flags);
		if (err) {
			kite_destroy_qp(ibqp);
			errno = err;
			return NULL;
		}
	}
	return ibqp;
}
