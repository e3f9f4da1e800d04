// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Provider self-test: memory windows and invalidation on the send queue
 * (LOCAL_INV, SEND_WITH_INV, BIND_MW WQEs, ibv_bind_mw for type 1) and
 * their completions (IBV_WC_LOCAL_INV, IBV_WC_BIND_MW, IBV_WC_WITH_INV).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "selftest.h"

#define MW_KEY	0x00123405u	/* window index 0x1234, variant 5 */
#define MR_KEY	0x00004201u

static struct kite_wqe_bind_mw *bind_seg(struct fake *f, uint32_t idx)
{
	return (struct kite_wqe_bind_mw *)(sq_wqe(f, idx) +
					   sizeof(struct kite_sq_wqe_hdr));
}

static void mw_init(struct fake *f, struct ibv_mw *mw, struct ibv_mr *mr,
		    enum ibv_mw_type type)
{
	memset(mw, 0, sizeof(*mw));
	mw->context = f->qp->vqp.qp.context;
	mw->rkey = MW_KEY;
	mw->type = type;
	memset(mr, 0, sizeof(*mr));
	mr->context = mw->context;
	mr->lkey = MR_KEY;
}

/* LOCAL_INV, SEND_WITH_INV and a type-2B BIND_MW: WQE layout. */
int test_mw_post_layout(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 8, 8);
	struct ibv_sge sg = { .addr = 0x1000, .length = 100, .lkey = 0x101 };
	struct ibv_send_wr wr[3], *bad = NULL;
	struct kite_wqe_bind_mw *b;
	struct kite_sq_wqe_hdr *h;
	struct kite_sge *s;
	struct ibv_mw mw;
	struct ibv_mr mr;
	int ok = 1;

	mw_init(f, &mw, &mr, IBV_MW_TYPE_2);
	wr[0] = send_wr(1, IBV_WR_LOCAL_INV, NULL, 0, IBV_SEND_SIGNALED);
	wr[0].invalidate_rkey = 0xa1b2c3d4;
	wr[1] = send_wr(2, IBV_WR_SEND_WITH_INV, &sg, 1, 0);
	wr[1].invalidate_rkey = 0x01020304;
	wr[2] = send_wr(3, IBV_WR_BIND_MW, NULL, 0, IBV_SEND_FENCE);
	wr[2].bind_mw.mw = &mw;
	wr[2].bind_mw.rkey = ibv_inc_rkey(mw.rkey);
	wr[2].bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = &mr, .addr = 0x7000, .length = 0x300,
		.mw_access_flags = IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == 0);
	CHECK(db_read(f, KITE_DB_SQ) == kite_db_make(QPN, 0, 3));

	h = (struct kite_sq_wqe_hdr *)sq_wqe(f, 0);
	CHECK(h->opcode == KITE_WQE_LOCAL_INV && h->num_sge == 0);
	CHECK(h->flags == KITE_WQE_F_SIGNALED && h->inline_len == 0);
	CHECK(le32toh(h->imm_data) == 0xa1b2c3d4);

	h = (struct kite_sq_wqe_hdr *)sq_wqe(f, 1);
	CHECK(h->opcode == KITE_WQE_SEND_INV && h->num_sge == 1);
	CHECK(le32toh(h->imm_data) == 0x01020304);
	s = (struct kite_sge *)(sq_wqe(f, 1) + sizeof(*h));
	CHECK(le64toh(s->addr) == 0x1000 && le32toh(s->length) == 100 &&
	      le32toh(s->lkey) == 0x101);

	h = (struct kite_sq_wqe_hdr *)sq_wqe(f, 2);
	CHECK(h->opcode == KITE_WQE_BIND_MW && h->num_sge == 0);
	CHECK(h->flags == KITE_WQE_F_FENCE);
	b = bind_seg(f, 2);
	CHECK(le64toh(b->addr) == 0x7000 && le64toh(b->length) == 0x300);
	CHECK(le32toh(b->mw_key) == 0x00123406u);
	CHECK(le32toh(b->mr_key) == MR_KEY && b->reserved == 0);
	CHECK(le32toh(b->access) ==
	      (KITE_ACCESS_REMOTE_READ | KITE_ACCESS_REMOTE_ATOMIC));
	/* IBV_WR_BIND_MW leaves the window's rkey to the caller. */
	CHECK(mw.rkey == MW_KEY);
	fake_free(f);
	return ok;
}

/* What the provider refuses before the device sees it; nothing posted. */
int test_mw_post_errors(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 8, 8);
	struct fake *uc = fake_new(IBV_QPT_UC, 8, 8);
	struct ibv_sge sg = { .addr = 0x1000, .length = 8, .lkey = 1 };
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_mw mw, other;
	struct ibv_mr mr;
	int ok = 1;

	mw_init(f, &mw, &mr, IBV_MW_TYPE_2);
	wr = send_wr(1, IBV_WR_BIND_MW, NULL, 0, 0);
	wr.bind_mw.mw = &mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw.rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = &mr, .addr = 0x7000, .length = 0x300,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	/* The good one first, on UC too: BIND_MW is for RC and UC. */
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == 0);
	mw.context = uc->qp->vqp.qp.context;
	mr.context = mw.context;
	CHECK(kite_post_send(&uc->qp->vqp.qp, &wr, &bad) == 0);
	mw.context = f->qp->vqp.qp.context;
	mr.context = mw.context;

	/* Rights: local ones, MW_BIND, unknown bits; zero-based windows. */
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_LOCAL_WRITE;
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == EINVAL &&
	      bad == &wr);
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_MW_BIND;
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == EINVAL);
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ |
					       IBV_ACCESS_ZERO_BASED;
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == EOPNOTSUPP);
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;

	/* A new key of another window; a window of another context. */
	wr.bind_mw.rkey = MW_KEY + 0x100;
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == EINVAL);
	wr.bind_mw.rkey = ibv_inc_rkey(mw.rkey);
	other = mw;
	other.context = uc->qp->vqp.qp.context;
	wr.bind_mw.mw = &other;
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == EINVAL);
	wr.bind_mw.mw = NULL;
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == EINVAL);
	wr.bind_mw.mw = &mw;

	/* Type 2B needs an MR; a range that wraps; data on a bind. */
	wr.bind_mw.bind_info.mr = NULL;
	wr.bind_mw.bind_info.addr = 0;
	wr.bind_mw.bind_info.length = 0;
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == EINVAL);
	wr.bind_mw.bind_info.mr = &mr;
	wr.bind_mw.bind_info.addr = UINT64_MAX - 8;
	wr.bind_mw.bind_info.length = 0x10;
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == EINVAL);
	wr.bind_mw.bind_info.addr = 0x7000;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == EINVAL);
	wr.num_sge = 0;
	wr.send_flags = IBV_SEND_INLINE;
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == EINVAL);

	/* LOCAL_INV carries no data; SEND_WITH_INV is RC only. */
	wr = send_wr(2, IBV_WR_LOCAL_INV, &sg, 1, 0);
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == EINVAL);
	wr = send_wr(2, IBV_WR_SEND_WITH_INV, &sg, 1, 0);
	CHECK(kite_post_send(&uc->qp->vqp.qp, &wr, &bad) == EINVAL);
	wr = send_wr(2, IBV_WR_LOCAL_INV, NULL, 0, 0);
	CHECK(kite_post_send(&uc->qp->vqp.qp, &wr, &bad) == 0);

	CHECK(f->qp->sq.pi == 1 && uc->qp->sq.pi == 2);
	fake_free(uc);
	fake_free(f);
	return ok;
}

/* ibv_bind_mw on a type-1 window: next key variant, then unbind. */
int test_mw_bind_type1(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 8, 8);
	struct ibv_mw_bind bind = {
		.wr_id = 77, .send_flags = IBV_SEND_SIGNALED,
	};
	struct kite_sq_wqe_hdr *h;
	struct kite_wqe_bind_mw *b;
	struct ibv_mw mw;
	struct ibv_mr mr;
	struct ibv_wc wc;
	int ok = 1;

	mw_init(f, &mw, &mr, IBV_MW_TYPE_1);
	mw.rkey = 0x000077ffu;	/* the variant wraps to 0 */
	bind.bind_info = (struct ibv_mw_bind_info){
		.mr = &mr, .addr = 0x4000, .length = 0x1000,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	CHECK(kite_bind_mw(&f->qp->vqp.qp, &mw, &bind) == 0);
	CHECK(mw.rkey == 0x00007700u);
	h = (struct kite_sq_wqe_hdr *)sq_wqe(f, 0);
	CHECK(h->opcode == KITE_WQE_BIND_MW && h->flags == KITE_WQE_F_SIGNALED);
	b = bind_seg(f, 0);
	CHECK(le32toh(b->mw_key) == 0x00007700u && le32toh(b->mr_key) == MR_KEY);
	CHECK(le64toh(b->addr) == 0x4000 && le64toh(b->length) == 0x1000);
	CHECK(le32toh(b->access) ==
	      (KITE_ACCESS_REMOTE_WRITE | KITE_ACCESS_REMOTE_READ));
	dev_cqe(f, QPN, 0, KITE_CQE_BIND_MW, KITE_CQE_SUCCESS, 0, 0, 0);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 1, &wc) == 1);
	CHECK(wc.wr_id == 77 && wc.opcode == IBV_WC_BIND_MW &&
	      wc.status == IBV_WC_SUCCESS);

	/* Unbind: no MR, no range. */
	bind.bind_info = (struct ibv_mw_bind_info){};
	CHECK(kite_bind_mw(&f->qp->vqp.qp, &mw, &bind) == 0);
	CHECK(mw.rkey == 0x00007701u);
	b = bind_seg(f, 1);
	CHECK(le32toh(b->mw_key) == 0x00007701u && b->mr_key == 0 &&
	      b->length == 0 && b->addr == 0 && b->access == 0);

	/* A refused bind leaves the key; type 2B is not for ibv_bind_mw. */
	bind.bind_info.mw_access_flags = IBV_ACCESS_LOCAL_WRITE;
	CHECK(kite_bind_mw(&f->qp->vqp.qp, &mw, &bind) == EINVAL);
	CHECK(mw.rkey == 0x00007701u);
	bind.bind_info.mw_access_flags = 0;
	mw.type = IBV_MW_TYPE_2;
	CHECK(kite_bind_mw(&f->qp->vqp.qp, &mw, &bind) == EINVAL);
	CHECK(mw.rkey == 0x00007701u && f->qp->sq.pi == 2);
	fake_free(f);
	return ok;
}

/* Completions: LOCAL_INV, a bind error, a receive that invalidated. */
int test_mw_poll(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 8, 8);
	struct ibv_sge sg = { .addr = 0x1000, .length = 64, .lkey = 1 };
	struct ibv_recv_wr rwr = { .wr_id = 300, .sg_list = &sg, .num_sge = 1 };
	struct ibv_send_wr wr[2], *bad;
	struct ibv_recv_wr *rbad;
	struct ibv_wc wc[3];
	struct ibv_mw mw;
	struct ibv_mr mr;
	int ok = 1;

	mw_init(f, &mw, &mr, IBV_MW_TYPE_2);
	wr[0] = send_wr(100, IBV_WR_LOCAL_INV, NULL, 0, IBV_SEND_SIGNALED);
	wr[0].invalidate_rkey = MW_KEY;
	wr[1] = send_wr(101, IBV_WR_BIND_MW, NULL, 0, IBV_SEND_SIGNALED);
	wr[1].bind_mw.mw = &mw;
	wr[1].bind_mw.rkey = MW_KEY;
	wr[1].bind_mw.bind_info.mr = &mr;
	wr[1].bind_mw.bind_info.length = 1;
	wr[0].next = &wr[1];
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == 0);
	CHECK(kite_post_recv(&f->qp->vqp.qp, &rwr, &rbad) == 0);
	dev_cqe(f, QPN, 0, KITE_CQE_LOCAL_INV, KITE_CQE_SUCCESS, 0, 0, 0);
	dev_cqe(f, QPN, 1, KITE_CQE_BIND_MW, KITE_CQE_MW_BIND_ERR, 0, 0, 0);
	dev_cqe(f, QPN, 0, KITE_CQE_RECV, KITE_CQE_SUCCESS, 40, KITE_CQE_F_INV,
		0xcafe0102u);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 3, wc) == 3);
	CHECK(wc[0].wr_id == 100 && wc[0].opcode == IBV_WC_LOCAL_INV &&
	      wc[0].status == IBV_WC_SUCCESS && wc[0].wc_flags == 0);
	CHECK(wc[1].wr_id == 101 && wc[1].status == IBV_WC_MW_BIND_ERR);
	CHECK(wc[2].wr_id == 300 && wc[2].opcode == IBV_WC_RECV &&
	      wc[2].byte_len == 40);
	CHECK(wc[2].wc_flags == IBV_WC_WITH_INV);
	CHECK(wc[2].invalidated_rkey == 0xcafe0102u);

	/* The bit on a send completion is no invalidation. */
	wr[0].next = NULL;
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == 0);
	dev_cqe(f, QPN, 2, KITE_CQE_LOCAL_INV, KITE_CQE_SUCCESS, 0,
		KITE_CQE_F_INV, 0xcafe0103u);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 1, wc) == 1);
	CHECK(wc[0].wr_id == 100 && wc[0].wc_flags == 0);
	fake_free(f);
	return ok;
}
