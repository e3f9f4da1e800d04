// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Provider self-test: shared receive queues (kite_srq.c) on the fake
 * device: the free list through the WQEs' next links, post_srq_recv's
 * WQEs and doorbell, completions in any order mapped to wr_ids through
 * the SRQ, stale slots, and what create_srq_ex refuses.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "selftest.h"

#define SRQN	0x21

/* The kernel side of CREATE_SRQ: checks the ring and answers. */
static struct {
	int err;
	uint32_t depth, stride;		/* what the "driver" answers */
	uint64_t buf_len;		/* what it was given */
	int destroys;
} kernel_srq;

int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp, size_t resp_size)
{
	struct kite_uverbs_create_srq *c = (void *)cmd;
	struct kite_uverbs_create_srq_resp *r = (void *)resp;

	if (kernel_srq.err)
		return kernel_srq.err;
	if (cmd_size < sizeof(*c) || resp_size < sizeof(*r) || !c->buf_va)
		return EINVAL;
	kernel_srq.buf_len = c->buf_len;
	r->srqn = SRQN;
	r->depth = kernel_srq.depth;
	r->stride = kernel_srq.stride;
	srq->context = pd->context;
	srq->pd = pd;
	attr->attr.max_wr = kernel_srq.depth - 1;
	return 0;
}

int ibv_cmd_destroy_srq(struct ibv_srq *srq)
{
	kernel_srq.destroys++;
	return 0;
}

int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size)
{
	return srq_attr_mask & IBV_SRQ_MAX_WR ? EOPNOTSUPP : 0;
}

int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size)
{
	return 0;
}

static uint16_t next_of(struct kite_srq *srq, uint32_t slot)
{
	struct kite_rq_wqe_hdr h;

	memcpy(&h, (uint8_t *)srq->ring.buf + slot * srq->stride, sizeof(h));
	return le16toh(h.next);
}

static struct kite_srq *srq_new(struct fake *f, struct ibv_pd *pd,
				uint32_t max_wr, uint32_t max_sge)
{
	struct ibv_srq_init_attr attr = {
		.attr = { .max_wr = max_wr, .max_sge = max_sge },
	};
	struct ibv_srq *s;

	pd->context = &f->ctx->ibv_ctx.context;
	f->ctx->cap_flags |= KITE_DEV_CAP_SRQ;
	s = kite_create_srq(pd, &attr);
	return s ? to_kite_srq(s) : NULL;
}

int test_srq_post(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 4, 8);
	struct ibv_sge sg = { .addr = 0xc000, .length = 256, .lkey = 0x77 };
	struct ibv_recv_wr wr[4] = {}, *bad = NULL;
	struct kite_rq_wqe_hdr h;
	struct kite_srq *srq;
	struct ibv_pd pd = {};
	struct kite_sge s;
	int ok = 1, i;

	kernel_srq.depth = 4;
	kernel_srq.stride = 32;
	srq = srq_new(f, &pd, 3, 1);
	CHECK(srq != NULL);
	if (!srq)
		goto out;
	CHECK(srq->depth == 4 && srq->stride == 32 && srq->max_sge == 1);
	CHECK(kernel_srq.buf_len >= 4 * 32);
	/* The free list 0 -> 1 -> 2 -> 3 (the spare). */
	for (i = 0; i < 4; i++)
		CHECK(next_of(srq, i) == (i + 1) % 4);
	for (i = 0; i < 4; i++) {
		wr[i].wr_id = 500 + i;
		wr[i].sg_list = &sg;
		wr[i].num_sge = 1;
		if (i < 3)
			wr[i].next = &wr[i + 1];
	}
	/* Three fit; the fourth would take the spare. */
	CHECK(kite_post_srq_recv(&srq->vsrq.srq, wr, &bad) == ENOMEM &&
	      bad == &wr[3]);
	CHECK(db_read(f, KITE_DB_SRQ) == kite_db_make(SRQN, 0, 3));
	memcpy(&h, srq->ring.buf + 2 * 32, sizeof(h));
	memcpy(&s, srq->ring.buf + 2 * 32 + sizeof(h), sizeof(s));
	CHECK(h.num_sge == 1 && le16toh(h.next) == 3);
	CHECK(le64toh(s.addr) == 0xc000 && le32toh(s.length) == 256 &&
	      le32toh(s.lkey) == 0x77);
	/* Too many SGEs. */
	wr[0].num_sge = 2;
	wr[0].next = NULL;
	CHECK(kite_post_srq_recv(&srq->vsrq.srq, wr, &bad) == EINVAL &&
	      bad == &wr[0]);
	CHECK(srq->pi == 3);
	/* The QP on it takes no receives of its own. */
	f->qp->srq = srq;
	wr[0].num_sge = 1;
	CHECK(kite_post_recv(&f->qp->vqp.qp, wr, &bad) == EINVAL &&
	      bad == &wr[0]);
	f->qp->srq = NULL;
	CHECK(kite_destroy_srq(&srq->vsrq.srq) == 0);
	CHECK(kernel_srq.destroys == 1);
out:
	fake_free(f);
	return ok;
}

int test_srq_poll(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 4, 8);
	struct ibv_sge sg = { .addr = 0xd000, .length = 64, .lkey = 0x78 };
	struct ibv_recv_wr wr[3] = {}, *bad = NULL;
	struct kite_srq *srq;
	struct ibv_pd pd = {};
	struct ibv_wc wc[4];
	int ok = 1, i;

	kernel_srq.depth = 4;
	kernel_srq.stride = 32;
	srq = srq_new(f, &pd, 3, 1);
	CHECK(srq != NULL);
	if (!srq)
		goto out;
	f->qp->srq = srq;
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = 700 + i;
		wr[i].sg_list = &sg;
		wr[i].num_sge = 1;
		if (i < 2)
			wr[i].next = &wr[i + 1];
	}
	CHECK(kite_post_srq_recv(&srq->vsrq.srq, wr, &bad) == 0);
	/* Slot 1 completes before slot 0 (another QP took slot 0 first). */
	dev_cqe(f, QPN, 1, KITE_CQE_RECV, KITE_CQE_SUCCESS, 10, 0, 0);
	dev_cqe(f, QPN, 0, KITE_CQE_RECV, KITE_CQE_WR_FLUSH_ERR, 0, 0, 0);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 4, wc) == 2);
	CHECK(wc[0].wr_id == 701 && wc[0].status == IBV_WC_SUCCESS &&
	      wc[0].opcode == IBV_WC_RECV && wc[0].byte_len == 10);
	CHECK(wc[1].wr_id == 700 && wc[1].status == IBV_WC_WR_FLUSH_ERR);
	/* Both went behind the spare: 3 -> 1 -> 0. */
	CHECK(srq->head == 3 && srq->tail == 0);
	CHECK(next_of(srq, 3) == 1 && next_of(srq, 1) == 0);
	wr[2].next = NULL;
	wr[0].wr_id = 710;
	wr[1].wr_id = 711;
	CHECK(kite_post_srq_recv(&srq->vsrq.srq, wr, &bad) == ENOMEM &&
	      bad == &wr[2]);
	CHECK(srq->wr_id[3] == 710 && srq->wr_id[1] == 711);
	CHECK(db_read(f, KITE_DB_SRQ) == kite_db_make(SRQN, 0, 5));
	/* Slot 0 holds no WQE, slot 9 is beyond the depth: dropped. */
	dev_cqe(f, QPN, 0, KITE_CQE_RECV, KITE_CQE_SUCCESS, 1, 0, 0);
	dev_cqe(f, QPN, 9, KITE_CQE_RECV, KITE_CQE_SUCCESS, 1, 0, 0);
	dev_cqe(f, QPN, 3, KITE_CQE_RECV, KITE_CQE_SUCCESS, 3, 0, 0);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 4, wc) == 1);
	CHECK(wc[0].wr_id == 710 && wc[0].byte_len == 3);
	/* A QP destroyed with an unpolled receive gives its slot back. */
	dev_cqe(f, QPN, 1, KITE_CQE_RECV, KITE_CQE_SUCCESS, 1, 0, 0);
	kite_cq_forget_qp(f->cq, QPN, srq);
	CHECK(!srq->busy[1] && srq->tail == 1 && next_of(srq, 3) == 1);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 4, wc) == 0);
	f->qp->srq = NULL;
	kite_destroy_srq(&srq->vsrq.srq);
out:
	fake_free(f);
	return ok;
}

int test_srq_refused(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 4, 8);
	struct ibv_srq_init_attr_ex ex = {};
	struct ibv_srq_init_attr attr = {};
	struct ibv_pd pd = {};
	int ok = 1;

	pd.context = &f->ctx->ibv_ctx.context;
	ex.attr.max_wr = 4;
	ex.attr.max_sge = 1;
	ex.pd = &pd;
	ex.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	ex.srq_type = IBV_SRQT_XRC;
	errno = 0;
	CHECK(!kite_create_srq_ex(pd.context, &ex) && errno == EOPNOTSUPP);
	ex.srq_type = IBV_SRQT_TM;
	errno = 0;
	CHECK(!kite_create_srq_ex(pd.context, &ex) && errno == EOPNOTSUPP);
	ex.srq_type = IBV_SRQT_BASIC;
	ex.comp_mask |= IBV_SRQ_INIT_ATTR_CQ;
	errno = 0;
	CHECK(!kite_create_srq_ex(pd.context, &ex) && errno == EOPNOTSUPP);
	ex.comp_mask = IBV_SRQ_INIT_ATTR_TYPE;
	errno = 0;
	CHECK(!kite_create_srq_ex(pd.context, &ex) && errno == EINVAL);
	/* A device without SRQs, and sizes no next link can name. */
	attr.attr.max_wr = 4;
	f->ctx->cap_flags = 0;
	errno = 0;
	CHECK(!kite_create_srq(&pd, &attr) && errno == EOPNOTSUPP);
	f->ctx->cap_flags = KITE_DEV_CAP_SRQ;
	attr.attr.max_wr = 1u << KITE_SRQ_MAX_LOG_DEPTH;
	errno = 0;
	CHECK(!kite_create_srq(&pd, &attr) && errno == EINVAL);
	/* The kernel's answer is checked against the provider's sizing. */
	attr.attr.max_wr = 3;
	kernel_srq.depth = 8;
	kernel_srq.stride = 32;
	errno = 0;
	CHECK(!kite_create_srq(&pd, &attr) && errno == EPROTO);
	CHECK(kite_modify_srq(NULL, NULL, IBV_SRQ_MAX_WR) == EOPNOTSUPP);
	fake_free(f);
	return ok;
}
