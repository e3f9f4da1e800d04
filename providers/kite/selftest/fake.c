// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Provider self-test: the fake device (rings and doorbells in memory) and the
 * fakes of the libibverbs and kite_verbs.c functions the fast path and
 * kite_mw.c call.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "selftest.h"

/*
 * kite_verbs.c is not linked in: the ring helpers the fast path and
 * kite_srq.c use, on plain zeroed memory.
 */
void kite_ring_free(struct kite_ring *ring)
{
	free(ring->buf);
	ring->buf = NULL;
	ring->len = 0;
}

int kite_ring_alloc(struct kite_ring *ring, size_t bytes)
{
	ring->buf = calloc(1, bytes);
	ring->len = bytes;
	return ring->buf ? 0 : ENOMEM;
}

struct kernel_ah kernel_ah;
struct fake_create fake_create;

/*
 * kite_verbs.c's CQ and QP creation, which kite_cq_ex.c and kite_qp_ex.c
 * build on: the object prepared in fake_create (or a failure with its
 * errno); the QP's caps as the "kernel" granted them.
 */
struct ibv_cq *kite_create_cq(struct ibv_context *context, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector)
{
	fake_create.cq_calls++;
	fake_create.cqe = cqe;
	if (!fake_create.cq) {
		errno = fake_create.err;
		return NULL;
	}
	return &fake_create.cq->vcq.cq;
}

struct ibv_qp *kite_create_qp(struct ibv_pd *pd,
			      struct ibv_qp_init_attr *attr)
{
	fake_create.qp_calls++;
	fake_create.qp_attr = *attr;
	if (!fake_create.qp) {
		errno = fake_create.err;
		return NULL;
	}
	attr->cap = fake_create.cap;
	return &fake_create.qp->vqp.qp;
}

int kite_destroy_qp(struct ibv_qp *qp)
{
	fake_create.qp_destroys++;
	kite_qp_ex_free(to_kite_qp(qp));
	return 0;
}

int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size)
{
	struct kite_uverbs_create_ah_resp *r = (void *)resp;

	kernel_ah.creates++;
	kernel_ah.resp_size = resp_size;
	kernel_ah.attr = *attr;
	if (kernel_ah.err)
		return kernel_ah.err;
	if (resp_size < sizeof(*r))
		return EINVAL;
	r->ibv_resp.ah_handle = 0x55;
	r->drv_payload = kernel_ah.resp;
	ah->handle = 0x55;
	ah->context = pd->context;
	return 0;
}

int ibv_cmd_destroy_ah(struct ibv_ah *ah)
{
	if (kernel_ah.destroy_err)
		return kernel_ah.destroy_err;
	kernel_ah.destroys++;
	return 0;
}

/* kite_mw.c's window commands: not run by the cases (no kernel here). */
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size)
{
	return EOPNOTSUPP;
}

int ibv_cmd_dealloc_mw(struct ibv_mw *mw)
{
	return EOPNOTSUPP;
}

void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...)
{
	kernel_ah.logs++;
}

static struct verbs_device fake_vdev = {
	.device = { .name = "kite_test" },
};

void wq_setup(struct kite_wq *wq, uint32_t depth, uint32_t stride,
	      uint32_t max_sge)
{
	wq->ring.len = (size_t)depth * stride;
	wq->ring.buf = calloc(1, wq->ring.len);
	wq->wr_id = calloc(depth, sizeof(*wq->wr_id));
	wq->depth = depth;
	wq->log_depth = kite_log2(depth);
	wq->stride = stride;
	wq->max_sge = max_sge;
	pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
}

struct fake *fake_new(enum ibv_qp_type type, uint32_t sq_depth,
		      uint32_t cq_depth)
{
	struct fake *f = calloc(1, sizeof(*f));

	f->ctx = calloc(1, sizeof(*f->ctx));
	f->ctx->db = aligned_alloc(KITE_DB_PAGE_SIZE, KITE_DB_PAGE_SIZE);
	memset(f->ctx->db, 0, KITE_DB_PAGE_SIZE);
	f->ctx->db_size = KITE_DB_PAGE_SIZE;
	f->ctx->ibv_ctx.context.device = &fake_vdev.device;
	kite_qp_table_init(&f->ctx->qps);

	f->cq = calloc(1, sizeof(*f->cq));
	f->cq->vcq.cq.context = &f->ctx->ibv_ctx.context;
	f->cq->cqn = CQN;
	f->cq->depth = cq_depth;
	f->cq->log_depth = kite_log2(cq_depth);
	f->cq->ring.len = cq_depth * sizeof(struct kite_cqe);
	f->cq->ring.buf = calloc(1, f->cq->ring.len);
	pthread_spin_init(&f->cq->lock, PTHREAD_PROCESS_PRIVATE);

	f->qp = calloc(1, sizeof(*f->qp));
	f->qp->vqp.qp.context = &f->ctx->ibv_ctx.context;
	f->qp->vqp.qp.qp_num = QPN;
	f->qp->vqp.qp.qp_type = type;
	f->qp->vqp.qp.state = IBV_QPS_RTS;
	f->qp->vqp.qp.send_cq = &f->cq->vcq.cq;
	f->qp->vqp.qp.recv_cq = &f->cq->vcq.cq;
	/* 128-byte SQ stride: 2 SGEs or 72 bytes inline (the driver's cap). */
	wq_setup(&f->qp->sq, sq_depth, 128, 4);
	wq_setup(&f->qp->rq, 8, 64, 3);
	f->qp->max_inline = 72;
	kite_qp_table_insert(&f->ctx->qps, f->qp);
	return f;
}

void fake_free(struct fake *f)
{
	kite_qp_table_remove(&f->ctx->qps, f->qp);
	kite_qp_ex_free(f->qp);
	free(f->qp->sq.ring.buf);
	free(f->qp->sq.wr_id);
	free(f->qp->rq.ring.buf);
	free(f->qp->rq.wr_id);
	free(f->qp);
	free(f->cq->ring.buf);
	free(f->cq->old.buf);
	free(f->cq);
	kite_qp_table_fini(&f->ctx->qps);
	free(f->ctx->db);
	free(f->ctx);
	free(f);
}

uint64_t db_read(struct fake *f, unsigned int reg)
{
	uint64_t v;

	memcpy(&v, (uint8_t *)f->ctx->db + reg, sizeof(v));
	return le64toh(v);
}

void db_clear(struct fake *f)
{
	memset(f->ctx->db, 0, 32);
}

uint8_t *sq_wqe(struct fake *f, uint32_t idx)
{
	struct kite_wq *sq = &f->qp->sq;

	return (uint8_t *)sq->ring.buf +
	       kite_ring_slot(idx, sq->log_depth) * sq->stride;
}

uint8_t *rq_wqe(struct fake *f, uint32_t idx)
{
	struct kite_wq *rq = &f->qp->rq;

	return (uint8_t *)rq->ring.buf +
	       kite_ring_slot(idx, rq->log_depth) * rq->stride;
}

/* The device side: write the next CQE, flags (with the phase) last. */
void dev_cqe(struct fake *f, uint32_t qpn, uint16_t wqe_idx,
	     uint8_t opcode, uint8_t status, uint32_t byte_len,
	     uint8_t flags, uint32_t imm)
{
	struct kite_cqe *cqe = (struct kite_cqe *)f->cq->ring.buf +
			       kite_ring_slot(f->dev_cq_pi, f->cq->log_depth);

	memset(cqe, 0, offsetof(struct kite_cqe, flags));
	cqe->qpn = htole32(qpn);
	cqe->wqe_idx = htole16(wqe_idx);
	cqe->opcode = opcode;
	cqe->status = status;
	cqe->byte_len = htole32(byte_len);
	cqe->imm_data = imm;
	cqe->vendor_err = status ? 0x42 : 0;
	cqe->flags = flags | kite_ring_phase(f->dev_cq_pi, f->cq->log_depth);
	f->dev_cq_pi++;
}
