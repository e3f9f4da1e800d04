// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kite RoCEv2 NIC: rdma-core provider, control path verbs: device/port
 * queries, protection domains, CQs, MRs and QPs (the fast path on their
 * rings is in kite_fast.c, memory windows in kite_mw.c).
 *
 * CQ and QP rings live in this process's memory (rdma/kite-abi.h): the
 * provider sizes them with the driver's rules, allocates them zeroed and
 * KITE_RING_ALIGN aligned, names them in the create request, and frees them
 * only after the destroy command has returned (the kernel pins them until
 * then).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ccan/minmax.h>
#include <util/mmio.h>
#include <util/udma_barrier.h>

#include "kite.h"
#include "kite-abi.h"

int kite_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int err;

	err = ibv_cmd_query_device_any(context, input, attr, attr_size,
				       &resp, &resp_size);
	if (err)
		return err;

	/* The device reports major << 16 | minor; sysfs prints "major.minor". */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u", (unsigned int)KITE_ABI_VER_MAJOR(fw & UINT32_MAX),
		 (unsigned int)KITE_ABI_VER_MINOR(fw & UINT32_MAX));
	return 0;
}

int kite_query_port(struct ibv_context *context, uint8_t port,
		    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

struct ibv_pd *kite_alloc_pd(struct ibv_context *context)
{
	struct kite_uverbs_alloc_pd_resp resp = {};
	struct kite_uverbs_alloc_pd cmd = {};
	struct kite_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}

	err = ibv_cmd_alloc_pd(context, &pd->ibv_pd, &cmd.ibv_cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	pd->pdn = resp.pdn;
	return &pd->ibv_pd;
}

int kite_dealloc_pd(struct ibv_pd *ibpd)
{
	struct kite_pd *pd = to_kite_pd(ibpd);
	int err;

	err = ibv_cmd_dealloc_pd(ibpd);
	if (err)
		return err;
	free(pd);
	return 0;
}

/* ---- rings ---------------------------------------------------------------- */

/*
 * Allocate a zeroed ring of at least @bytes, in whole KITE_RING_ALIGN pages
 * so that no other data shares its pinned pages (nor is hidden from a
 * child process by ibv_dontfork_range()).
 */
int kite_ring_alloc(struct kite_ring *ring, size_t bytes)
{
	size_t len = align(bytes, KITE_RING_ALIGN);
	void *buf;
	int err;

	err = posix_memalign(&buf, KITE_RING_ALIGN, len);
	if (err)
		return err;
	memset(buf, 0, len);
	if (ibv_dontfork_range(buf, len)) {
		err = errno ? errno : ENOMEM;
		free(buf);
		return err;
	}
	ring->buf = buf;
	ring->len = len;
	return 0;
}

void kite_ring_free(struct kite_ring *ring)
{
	if (!ring->buf)
		return;
	ibv_dofork_range(ring->buf, ring->len);
	free(ring->buf);
	ring->buf = NULL;
	ring->len = 0;
}

/* ---- CQ ------------------------------------------------------------------- */

struct ibv_cq *kite_create_cq(struct ibv_context *context, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector)
{
	struct kite_context *ctx = to_kite_ctx(context);
	struct kite_uverbs_create_cq_resp resp = {};
	struct kite_uverbs_create_cq cmd = {};
	uint32_t depth = 0;
	struct kite_cq *cq;
	int err;

	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}

	/*
	 * A request beyond the device's limits gets no ring: the kernel
	 * checks the size first and answers with the errno ib_core users
	 * expect (EINVAL), so the provider need not repeat that check.
	 */
	if (cqe > 0 && (uint32_t)cqe <= ctx->max_cqe) {
		depth = kite_ring_depth(cqe);
		if (depth <= ctx->max_cqe) {
			err = kite_ring_alloc(&cq->ring,
					      (size_t)depth *
					      sizeof(struct kite_cqe));
			if (err)
				goto err_free;
		}
	}
	/* The record has a page of its own: it outlives ring resizes. */
	if (ctx->dbrec && cq->ring.buf) {
		err = kite_ring_alloc(&cq->dbrec, sizeof(struct kite_cq_dbrec));
		if (err)
			goto err_ring;
		cmd.comp_mask = KITE_CREATE_CQ_REQ_DBREC;
		cmd.dbrec_va = (uintptr_t)cq->dbrec.buf;
	}
	cmd.buf_va = (uintptr_t)cq->ring.buf;
	cmd.buf_len = cq->ring.len;

	err = ibv_cmd_create_cq(context, cqe, channel, comp_vector,
				&cq->vcq.cq, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (err)
		goto err_ring;

	/* The driver must have used our sizing rule (and so our ring). */
	if (!cq->ring.buf || resp.depth != depth) {
		verbs_err(&ctx->ibv_ctx,
			  "kite: CQ %u: driver depth %u, provider expected %u\n",
			  resp.cqn, resp.depth, depth);
		ibv_cmd_destroy_cq(&cq->vcq.cq);
		err = EPROTO;
		goto err_ring;
	}
	cq->cqn = resp.cqn;
	cq->depth = resp.depth;
	cq->log_depth = kite_log2(cq->depth);
	if (cq->dbrec.buf)
		cq->rec_ci = &((struct kite_cq_dbrec *)cq->dbrec.buf)->ci;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return &cq->vcq.cq;

err_ring:
	kite_ring_free(&cq->dbrec);
	kite_ring_free(&cq->ring);
err_free:
	free(cq);
	errno = err;
	return NULL;
}

int kite_destroy_cq(struct ibv_cq *ibcq)
{
	struct kite_cq *cq = to_kite_cq(ibcq);
	int err;

	err = ibv_cmd_destroy_cq(ibcq);
	if (err)
		return err;
	pthread_spin_destroy(&cq->lock);
	kite_ring_free(&cq->old);
	kite_ring_free(&cq->ring);
	kite_ring_free(&cq->dbrec);
	free(cq);
	return 0;
}

/*
 * Move the CQ to a new ring sized as for create. The kernel pins the new
 * ring and hands it to the device; the old ring is freed only after that
 * succeeded (until then the device may still write to it).
 *
 * The device finishes the old ring and writes the next CQE at index 0 of
 * the new one. CQEs it wrote to the old ring and poll_cq has not consumed
 * yet stay there: the old ring is kept as cq->old and poll_cq drains it
 * (by phase, up to the first entry the device has not written) before it
 * turns to the new ring. The lock keeps poll_cq out meanwhile.
 */
int kite_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct kite_context *ctx = to_kite_ctx(ibcq->context);
	struct kite_uverbs_resize_cq_resp resp = {};
	struct kite_uverbs_resize_cq cmd = {};
	struct kite_cq *cq = to_kite_cq(ibcq);
	struct kite_ring ring = {};
	uint32_t depth = 0;
	int err;

	/* Out of range: no ring, the kernel answers EINVAL (as for create). */
	if (cqe > 0 && (uint32_t)cqe <= ctx->max_cqe) {
		depth = kite_ring_depth(cqe);
		if (depth <= ctx->max_cqe) {
			err = kite_ring_alloc(&ring, (size_t)depth *
					      sizeof(struct kite_cqe));
			if (err)
				return err;
		}
	}
	cmd.comp_mask = 0;
	cmd.buf_va = (uintptr_t)ring.buf;
	cmd.buf_len = ring.len;

	pthread_spin_lock(&cq->lock);
	/* Only one old ring at a time: one with CQEs left blocks a resize. */
	if (cq->old.buf && kite_cq_ring_pending(cq->old.buf, cq->old_ci,
						cq->old_log_depth)) {
		err = EBUSY;
		goto out_unlock;
	}
	kite_ring_free(&cq->old);
	/*
	 * The device refuses a depth below pi - ci: give it the real ci with
	 * the doorbell. The new ring starts at index 0, so the record's
	 * consumer index does too; until the switch the device takes the 0
	 * for an index behind its own and ignores it.
	 */
	kite_cq_doorbell_ci(ctx, cq);
	if (cq->rec_ci)
		*(volatile __le32 *)cq->rec_ci = 0;

	err = ibv_cmd_resize_cq(ibcq, cqe, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (err)
		goto out_unlock;
	if (kite_cq_ring_pending(cq->ring.buf, cq->ci, cq->log_depth)) {
		cq->old = cq->ring;
		cq->old_ci = cq->ci;
		cq->old_log_depth = cq->log_depth;
	} else {
		kite_ring_free(&cq->ring);
	}
	cq->ring = ring;
	ring.buf = NULL;
	cq->depth = ibcq->cqe;
	cq->log_depth = kite_log2(cq->depth);
	cq->ci = 0;
	cq->db_ci = 0;
	if (cq->depth != depth)
		verbs_err(&ctx->ibv_ctx,
			  "kite: CQ %u: driver depth %u, provider expected %u\n",
			  cq->cqn, cq->depth, depth);
out_unlock:
	pthread_spin_unlock(&cq->lock);
	kite_ring_free(&ring);
	return err;
}

/* ---- MR ------------------------------------------------------------------- */

/* Access flags, lengths and limits are checked by ib_core and the driver. */
struct ibv_mr *kite_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			   uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ibv_reg_mr cmd = {};
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

int kite_dereg_mr(struct verbs_mr *vmr)
{
	int err;

	err = ibv_cmd_dereg_mr(vmr);
	if (err)
		return err;
	free(vmr);
	return 0;
}

/*
 * Re-registration (IBV_REREG_MR_CHANGE_TRANSLATION, _PD, _ACCESS): the
 * kernel checks the request as reg_mr does and the device gives the MR
 * a new key, returned in lkey and rkey; the old key is refused from then
 * on. An MR with windows bound stays as it was (EBUSY).
 */
int kite_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		  void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp = {};
	struct ibv_rereg_mr cmd = {};
	int err;

	err = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		errno = err;
		return err;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		vmr->access = access;
	return 0;
}

/* ---- QP ------------------------------------------------------------------- */

struct kite_qp_sizes {
	uint32_t sq_depth;
	uint32_t sq_stride;
	uint32_t rq_depth;
	uint32_t rq_stride;
};

/*
 * Ring sizes for @cap by the driver's rules (rdma/kite-abi.h). False when
 * @cap is beyond the device's limits: no ring can be sized for it, and the
 * kernel refuses it.
 */
static bool kite_qp_sizes(const struct kite_context *ctx,
			  const struct ibv_qp_cap *cap,
			  struct kite_qp_sizes *sz)
{
	uint32_t sq_log, rq_log;

	if (cap->max_send_wr > ctx->max_qp_wr ||
	    cap->max_recv_wr > ctx->max_qp_wr ||
	    cap->max_send_sge > ctx->max_sge ||
	    cap->max_recv_sge > ctx->max_sge ||
	    cap->max_inline_data > ctx->max_inline)
		return false;
	sz->sq_depth = kite_ring_depth(cap->max_send_wr);
	sz->rq_depth = kite_ring_depth(cap->max_recv_wr);
	sq_log = kite_sq_log_stride(cap->max_send_sge, cap->max_inline_data);
	rq_log = kite_rq_log_stride(cap->max_recv_sge);
	if (sq_log > KITE_SQ_MAX_LOG_STRIDE || rq_log > KITE_RQ_MAX_LOG_STRIDE)
		return false;
	sz->sq_stride = 1u << sq_log;
	sz->rq_stride = 1u << rq_log;
	return sz->sq_depth <= ctx->max_qp_wr &&
	       sz->rq_depth <= ctx->max_qp_wr;
}

/* Set up a work queue on its ring: the wr_id array and the lock. */
static int kite_wq_init(struct kite_wq *wq, uint32_t depth, uint32_t stride,
			uint32_t max_sge)
{
	wq->wr_id = calloc(depth, sizeof(*wq->wr_id));
	if (!wq->wr_id)
		return ENOMEM;
	wq->depth = depth;
	wq->log_depth = kite_log2(depth);
	wq->stride = stride;
	wq->max_sge = max_sge;
	wq->pi = 0;
	wq->ci = 0;
	pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
	return 0;
}

static void kite_wq_fini(struct kite_wq *wq)
{
	if (wq->wr_id)
		pthread_spin_destroy(&wq->lock);
	free(wq->wr_id);
	wq->wr_id = NULL;
	kite_ring_free(&wq->ring);
}

/*
 * Create an RC, UC or UD QP. The type, SRQ and the CQs are checked by the
 * kernel; on success attr->cap holds what the rings actually take, and the
 * fast path enforces exactly those limits.
 */
struct ibv_qp *kite_create_qp(struct ibv_pd *pd,
			      struct ibv_qp_init_attr *attr)
{
	struct kite_context *ctx = to_kite_ctx(pd->context);
	struct kite_uverbs_create_qp_resp resp = {};
	struct kite_uverbs_create_qp cmd = {};
	struct ibv_qp_cap cap = attr->cap;
	struct kite_qp_sizes sz = {};
	struct kite_qp *qp;
	int err;

	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	/* A QP on an SRQ has no RQ: its receive caps are the SRQ's. */
	if (attr->srq) {
		qp->srq = to_kite_srq(attr->srq);
		cap.max_recv_wr = 0;
		cap.max_recv_sge = 0;
	}

	/*
	 * Beyond the limits: no rings, the kernel answers EINVAL. The
	 * doorbell record follows the SQ ring in its allocation (strides are
	 * multiples of its alignment).
	 */
	if (kite_qp_sizes(ctx, &cap, &sz)) {
		size_t sq_bytes = (size_t)sz.sq_depth * sz.sq_stride;

		err = kite_ring_alloc(&qp->sq.ring, sq_bytes +
				      (ctx->dbrec ?
				       sizeof(struct kite_qp_dbrec) : 0));
		if (err)
			goto err_free;
		if (ctx->dbrec) {
			cmd.comp_mask = KITE_CREATE_QP_REQ_DBREC;
			cmd.dbrec_va = (uintptr_t)qp->sq.ring.buf + sq_bytes;
		}
		if (qp->srq)
			sz.rq_depth = sz.rq_stride = 0;
		else
			err = kite_ring_alloc(&qp->rq.ring,
					      (size_t)sz.rq_depth *
					      sz.rq_stride);
		if (err)
			goto err_rings;
	}
	cmd.sq_va = (uintptr_t)qp->sq.ring.buf;
	cmd.sq_len = qp->sq.ring.len;
	cmd.rq_va = (uintptr_t)qp->rq.ring.buf;
	cmd.rq_len = qp->rq.ring.len;

	err = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd.ibv_cmd,
				sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err)
		goto err_rings;

	/* The driver must have used our sizing rules (and so our rings). */
	if (!qp->sq.ring.buf || resp.sq_depth != sz.sq_depth ||
	    resp.sq_stride != sz.sq_stride || resp.rq_depth != sz.rq_depth ||
	    resp.rq_stride != sz.rq_stride) {
		verbs_err(&ctx->ibv_ctx,
			  "kite: QP %u: driver rings SQ %ux%u RQ %ux%u, provider expected SQ %ux%u RQ %ux%u\n",
			  resp.qpn, resp.sq_depth, resp.sq_stride,
			  resp.rq_depth, resp.rq_stride, sz.sq_depth,
			  sz.sq_stride, sz.rq_depth, sz.rq_stride);
		err = EPROTO;
		goto err_destroy;
	}
	/*
	 * The fast path enforces the caps the kernel reported, never more
	 * than the WQE stride holds (so a WQE can never run past its slot).
	 */
	err = kite_wq_init(&qp->sq, resp.sq_depth, resp.sq_stride,
			   min_t(uint32_t, attr->cap.max_send_sge,
				 (resp.sq_stride - KITE_SQ_WQE_FIXED) /
				 sizeof(struct kite_sge)));
	if (err)
		goto err_destroy;
	if (!qp->srq) {
		err = kite_wq_init(&qp->rq, resp.rq_depth, resp.rq_stride,
				   min_t(uint32_t, attr->cap.max_recv_sge,
					 (resp.rq_stride - KITE_RQ_WQE_FIXED) /
					 sizeof(struct kite_sge)));
		if (err)
			goto err_destroy;
	}
	if (cmd.comp_mask & KITE_CREATE_QP_REQ_DBREC) {
		struct kite_qp_dbrec *rec =
			(struct kite_qp_dbrec *)(uintptr_t)cmd.dbrec_va;

		qp->sq.rec_pi = &rec->sq_pi;
		qp->sq.rec_poll = &rec->sq_poll;
		if (!qp->srq) {
			qp->rq.rec_pi = &rec->rq_pi;
			qp->rq.rec_poll = &rec->rq_poll;
		}
	}
	qp->max_inline = min_t(uint32_t, attr->cap.max_inline_data,
			       resp.sq_stride - KITE_SQ_WQE_FIXED);
	qp->sig_all = attr->sq_sig_all;
	err = kite_qp_table_insert(&ctx->qps, qp);
	if (err)
		goto err_destroy;
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_rings:
	kite_wq_fini(&qp->rq);
	kite_wq_fini(&qp->sq);
err_free:
	free(qp);
	errno = err;
	return NULL;
}

/*
 * The QP's CQEs still in its CQs: drop them (poll_cq would report them
 * for a QP that is gone or whose queues start over).
 */
static void kite_qp_forget_cqes(struct ibv_qp *ibqp)
{
	if (ibqp->send_cq)
		kite_cq_forget_qp(to_kite_cq(ibqp->send_cq), ibqp->qp_num,
				  to_kite_qp(ibqp)->srq);
	if (ibqp->recv_cq && ibqp->recv_cq != ibqp->send_cq)
		kite_cq_forget_qp(to_kite_cq(ibqp->recv_cq), ibqp->qp_num,
				  to_kite_qp(ibqp)->srq);
}

/*
 * The state machine and the attribute masks are checked by ib_core/driver.
 * A move to RESET makes the device discard the queues and zero its
 * indexes: the provider does the same with its own, and drops the QP's
 * completions that are still in its CQs.
 */
int kite_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask)
{
	struct kite_qp *qp = to_kite_qp(ibqp);
	struct ibv_modify_qp cmd = {};
	int err;

	err = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (err)
		return err;
	if ((attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		kite_qp_forget_cqes(ibqp);
		kite_wq_reset(&qp->sq);
		if (!qp->srq)
			kite_wq_reset(&qp->rq);
	}
	return 0;
}

int kite_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		  struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(qp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

/*
 * Once the destroy command returned, the device writes no CQE for the QP
 * any more: drop its unpolled CQEs, then take it out of the table (in this
 * order: poll_cq looks QPs up without the table's lock, kite.h), free it.
 */
int kite_destroy_qp(struct ibv_qp *ibqp)
{
	struct kite_context *ctx = to_kite_ctx(ibqp->context);
	struct kite_qp *qp = to_kite_qp(ibqp);
	int err;

	err = ibv_cmd_destroy_qp(ibqp);
	if (err)
		return err;
	kite_qp_forget_cqes(ibqp);
	kite_qp_table_remove(&ctx->qps, qp);
	kite_qp_ex_free(qp);
	kite_wq_fini(&qp->rq);
	kite_wq_fini(&qp->sq);
	free(qp);
	return 0;
}
