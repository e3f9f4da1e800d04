// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kite RoCEv2 NIC: rdma-core provider, shared receive queues: create
 * (ibv_create_srq, and ibv_create_srq_ex for the basic type), modify,
 * query, destroy, post_srq_recv, and the retirement of an SRQ WQE when a
 * receive of a QP on the SRQ completes.
 *
 * The device takes SRQ WQEs along the next links of their headers
 * (hardware.rst, "Shared receive queues"). The provider keeps the free
 * slots as a list through those links with one slot always spare: a post
 * fills the list's first slot, a completion appends its slot at the tail
 * (the spare, which the device never reads), so slots completing in any
 * order across QPs are reused at once. The ring lives in process memory,
 * sized with the driver's rules (rdma/kite-abi.h).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ccan/minmax.h>
#include <util/udma_barrier.h>

#include "kite.h"
#include "kite-abi.h"

static struct kite_rq_wqe_hdr *kite_srq_hdr(struct kite_srq *srq,
					    uint32_t slot)
{
	return (struct kite_rq_wqe_hdr *)((uint8_t *)srq->ring.buf +
					  (size_t)slot * srq->stride);
}

static void kite_srq_set_next(struct kite_srq *srq, uint32_t slot,
			      uint32_t next)
{
	__le16 v = htole16(next);

	memcpy((uint8_t *)kite_srq_hdr(srq, slot) +
	       offsetof(struct kite_rq_wqe_hdr, next), &v, sizeof(v));
}

static uint32_t kite_srq_get_next(struct kite_srq *srq, uint32_t slot)
{
	__le16 v;

	memcpy(&v, (uint8_t *)kite_srq_hdr(srq, slot) +
	       offsetof(struct kite_rq_wqe_hdr, next), sizeof(v));
	return le16toh(v);
}

static void kite_srq_free(struct kite_srq *srq)
{
	kite_ring_free(&srq->ring);
	free(srq->wr_id);
	free(srq->busy);
	free(srq);
}

struct ibv_srq *kite_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr)
{
	struct kite_context *ctx = to_kite_ctx(pd->context);
	struct kite_uverbs_create_srq_resp resp = {};
	struct kite_uverbs_create_srq cmd = {};
	uint32_t depth, stride, i;
	struct kite_srq *srq;
	int err;

	if (!(ctx->cap_flags & KITE_DEV_CAP_SRQ)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* Beyond any next link or WQE stride: the kernel would refuse too. */
	if (!attr->attr.max_wr ||
	    attr->attr.max_wr >= 1u << KITE_SRQ_MAX_LOG_DEPTH ||
	    kite_rq_log_stride(attr->attr.max_sge) > KITE_RQ_MAX_LOG_STRIDE) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	/* One slot more than max_wr: the free list keeps one spare. */
	depth = kite_ring_depth(attr->attr.max_wr + 1);
	stride = 1u << kite_rq_log_stride(attr->attr.max_sge);
	srq->depth = depth;
	srq->stride = stride;
	srq->wr_id = calloc(depth, sizeof(*srq->wr_id));
	srq->busy = calloc(depth, sizeof(*srq->busy));
	err = ENOMEM;
	if (!srq->wr_id || !srq->busy)
		goto err_free;
	err = kite_ring_alloc(&srq->ring, (size_t)depth * stride);
	if (err)
		goto err_free;
	for (i = 0; i < depth; i++)
		kite_srq_set_next(srq, i, (i + 1) % depth);
	srq->head = 0;
	srq->tail = depth - 1;
	cmd.buf_va = (uintptr_t)srq->ring.buf;
	cmd.buf_len = srq->ring.len;

	err = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd.ibv_cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err)
		goto err_free;
	if (resp.depth != depth || resp.stride != stride) {
		verbs_err(&ctx->ibv_ctx,
			  "kite: SRQ %u: driver ring %ux%u, provider expected %ux%u\n",
			  resp.srqn, resp.depth, resp.stride, depth, stride);
		err = EPROTO;
		goto err_destroy;
	}
	srq->srqn = resp.srqn;
	srq->max_sge = min_t(uint32_t, attr->attr.max_sge,
			     (stride - KITE_RQ_WQE_FIXED) /
			     sizeof(struct kite_sge));
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	kite_srq_free(srq);
	errno = err;
	return NULL;
}

/* Only the basic type; XRC and tag-matching SRQs are not offered. */
struct ibv_srq *kite_create_srq_ex(struct ibv_context *context,
				   struct ibv_srq_init_attr_ex *attr)
{
	uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;

	if ((attr->comp_mask & ~known) ||
	    ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	     attr->srq_type != IBV_SRQT_BASIC)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd) {
		errno = EINVAL;
		return NULL;
	}
	/* ibv_srq_init_attr is the start of ibv_srq_init_attr_ex. */
	return kite_create_srq(attr->pd, (struct ibv_srq_init_attr *)attr);
}

/* The limit only: the device does not resize (EOPNOTSUPP from the kernel). */
int kite_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		    int attr_mask)
{
	struct ibv_modify_srq cmd;

	return ibv_cmd_modify_srq(srq, attr, attr_mask, &cmd, sizeof(cmd));
}

int kite_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

int kite_destroy_srq(struct ibv_srq *ibsrq)
{
	struct kite_srq *srq = to_kite_srq(ibsrq);
	int err;

	err = ibv_cmd_destroy_srq(ibsrq);
	if (err)
		return err;
	pthread_spin_destroy(&srq->lock);
	kite_srq_free(srq);
	return 0;
}

int kite_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct kite_context *ctx = to_kite_ctx(ibsrq->context);
	struct kite_srq *srq = to_kite_srq(ibsrq);
	uint32_t pi, slot;
	int err = 0;

	pthread_spin_lock(&srq->lock);
	pi = srq->pi;
	for (; wr; wr = wr->next) {
		struct kite_rq_wqe_hdr hdr = {};

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > srq->max_sge) {
			err = EINVAL;
			break;
		}
		if (srq->head == srq->tail) {
			err = ENOMEM;
			break;
		}
		slot = srq->head;
		/* The slot keeps its link: it is the free list's order. */
		srq->head = kite_srq_get_next(srq, slot);
		kite_put_sges((struct kite_sge *)(kite_srq_hdr(srq, slot) + 1),
			      wr->sg_list, wr->num_sge);
		hdr.num_sge = wr->num_sge;
		hdr.next = htole16(srq->head);
		memcpy(kite_srq_hdr(srq, slot), &hdr, sizeof(hdr));
		srq->wr_id[slot] = wr->wr_id;
		srq->busy[slot] = true;
		pi++;
	}
	if (pi != srq->pi) {
		srq->pi = pi;
		udma_to_device_barrier();
		kite_ring_doorbell(ctx, KITE_DB_SRQ, srq->srqn, 0, pi);
	}
	if (err)
		*bad_wr = wr;
	pthread_spin_unlock(&srq->lock);
	return err;
}

/*
 * A receive of a QP on @srq completed in @slot (the CQE's wqe_idx): give
 * its wr_id and append the slot to the free list. False for a slot that
 * holds no posted WQE (a device bug): the CQE is dropped.
 */
bool kite_srq_retire(struct kite_srq *srq, uint32_t slot, uint64_t *wr_id)
{
	bool ok = false;

	pthread_spin_lock(&srq->lock);
	if (slot < srq->depth && srq->busy[slot]) {
		srq->busy[slot] = false;
		*wr_id = srq->wr_id[slot];
		kite_srq_set_next(srq, srq->tail, slot);
		srq->tail = slot;
		ok = true;
	}
	pthread_spin_unlock(&srq->lock);
	return ok;
}
