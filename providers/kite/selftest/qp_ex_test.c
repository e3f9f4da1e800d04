// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Provider self-test: extended QPs (kite_qp_ex.c): what ibv_create_qp_ex
 * takes and refuses, the ibv_wr_* batches against ibv_post_send on the
 * same requests (the SQ ring byte for byte), RC and UD, and the errors
 * of a batch.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "selftest.h"

#define ALL_RC_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
			 IBV_QP_EX_WITH_SEND_WITH_INV | \
			 IBV_QP_EX_WITH_RDMA_WRITE | \
			 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
			 IBV_QP_EX_WITH_RDMA_READ | \
			 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
			 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
			 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW)

static struct ibv_qp_ex *qp_ex(struct fake *f, uint64_t ops)
{
	if (kite_qp_ex_setup(f->qp, ops))
		return NULL;
	return &f->qp->vqp.qp_ex;
}

/* The two SQs hold the same bytes, wr_ids, indexes and doorbell. */
static int same_sq(struct fake *a, struct fake *b)
{
	struct kite_wq *x = &a->qp->sq, *y = &b->qp->sq;

	return x->pi == y->pi && x->ci == y->ci &&
	       !memcmp(x->ring.buf, y->ring.buf, x->ring.len) &&
	       !memcmp(x->wr_id, y->wr_id, x->depth * sizeof(*x->wr_id)) &&
	       db_read(a, KITE_DB_SQ) == db_read(b, KITE_DB_SQ);
}

static int sq_lock_free(struct fake *f)
{
	if (pthread_spin_trylock(&f->qp->sq.lock))
		return 0;
	pthread_spin_unlock(&f->qp->sq.lock);
	return 1;
}

/* What ibv_create_qp_ex() takes and refuses, and what it passes on. */
int test_qp_ex_create(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 8, 8);
	struct ibv_context *ctx = &f->ctx->ibv_ctx.context;
	struct ibv_pd pd = { .context = ctx };
	struct ibv_qp_init_attr_ex a = {
		.send_cq = &f->cq->vcq.cq, .recv_cq = &f->cq->vcq.cq,
		.cap = { .max_send_wr = 3, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 16 },
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = &pd, .send_ops_flags = ALL_RC_OPS,
	};
	struct ibv_qp_ex *ex = &f->qp->vqp.qp_ex;
	struct ibv_qp *qp;
	int ok = 1;

	CHECK(kite_qp_ex_check(&a) == 0);
	a.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	CHECK(kite_qp_ex_check(&a) == 0);
	a.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	CHECK(kite_qp_ex_check(&a) == EOPNOTSUPP);
	a.create_flags = IBV_QP_CREATE_SOURCE_QPN;
	CHECK(kite_qp_ex_check(&a) == EOPNOTSUPP);
	a.create_flags = 0;
	a.comp_mask |= IBV_QP_INIT_ATTR_XRCD;
	CHECK(kite_qp_ex_check(&a) == EOPNOTSUPP);
	a.comp_mask &= ~IBV_QP_INIT_ATTR_XRCD;
	a.comp_mask |= IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
	CHECK(kite_qp_ex_check(&a) == EOPNOTSUPP);
	a.comp_mask &= ~IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
	a.comp_mask |= IBV_QP_INIT_ATTR_RX_HASH;
	CHECK(kite_qp_ex_check(&a) == EOPNOTSUPP);
	a.comp_mask &= ~IBV_QP_INIT_ATTR_RX_HASH;
	a.send_ops_flags = ALL_RC_OPS | IBV_QP_EX_WITH_TSO;
	CHECK(kite_qp_ex_check(&a) == EOPNOTSUPP);
	a.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE;
	CHECK(kite_qp_ex_check(&a) == EOPNOTSUPP);
	a.send_ops_flags = IBV_QP_EX_WITH_FLUSH;
	CHECK(kite_qp_ex_check(&a) == EOPNOTSUPP);
	/* UC: no READ, atomics or SEND_WITH_INV; UD: sends only. */
	a.qp_type = IBV_QPT_UC;
	a.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_BIND_MW;
	CHECK(kite_qp_ex_check(&a) == 0);
	a.send_ops_flags = IBV_QP_EX_WITH_RDMA_READ;
	CHECK(kite_qp_ex_check(&a) == EOPNOTSUPP);
	a.send_ops_flags = IBV_QP_EX_WITH_SEND_WITH_INV;
	CHECK(kite_qp_ex_check(&a) == EOPNOTSUPP);
	a.qp_type = IBV_QPT_UD;
	a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	CHECK(kite_qp_ex_check(&a) == 0);
	a.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE;
	CHECK(kite_qp_ex_check(&a) == EOPNOTSUPP);
	a.send_ops_flags = IBV_QP_EX_WITH_LOCAL_INV;
	CHECK(kite_qp_ex_check(&a) == EOPNOTSUPP);
	a.qp_type = IBV_QPT_RC;
	a.send_ops_flags = ALL_RC_OPS;
	a.comp_mask &= ~IBV_QP_INIT_ATTR_PD;
	CHECK(kite_qp_ex_check(&a) == EINVAL);
	a.comp_mask |= IBV_QP_INIT_ATTR_PD;

	/* A refusal creates nothing. */
	memset(&fake_create, 0, sizeof(fake_create));
	fake_create.qp = f->qp;
	fake_create.cap = (struct ibv_qp_cap){ .max_send_wr = 4,
		.max_recv_wr = 4, .max_send_sge = 2, .max_recv_sge = 1,
		.max_inline_data = 72 };
	a.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	errno = 0;
	CHECK(kite_create_qp_ex(ctx, &a) == NULL && errno == EOPNOTSUPP);
	CHECK(fake_create.qp_calls == 0);
	a.create_flags = 0;

	/* Created as ibv_create_qp would; the granted caps come back. */
	a.srq = (struct ibv_srq *)(uintptr_t)0x5000;
	a.qp_context = &pd;
	qp = kite_create_qp_ex(ctx, &a);
	CHECK(qp == &f->qp->vqp.qp);
	CHECK(fake_create.qp_calls == 1);
	CHECK(fake_create.qp_attr.send_cq == a.send_cq &&
	      fake_create.qp_attr.recv_cq == a.recv_cq &&
	      fake_create.qp_attr.srq == a.srq &&
	      fake_create.qp_attr.qp_context == &pd &&
	      fake_create.qp_attr.qp_type == IBV_QPT_RC &&
	      fake_create.qp_attr.sq_sig_all == 1 &&
	      fake_create.qp_attr.cap.max_send_wr == 3 &&
	      fake_create.qp_attr.cap.max_inline_data == 16);
	CHECK(a.cap.max_send_wr == 4 && a.cap.max_send_sge == 2 &&
	      a.cap.max_inline_data == 72);
	CHECK(f->qp->vqp.comp_mask & VERBS_QP_EX);
	CHECK(ex->wr_start && ex->wr_complete && ex->wr_abort);
	CHECK(ex->wr_send && ex->wr_send_inv && ex->wr_rdma_read &&
	      ex->wr_atomic_fetch_add && ex->wr_bind_mw && ex->wr_local_inv);
	CHECK(ex->wr_set_sge && ex->wr_set_sge_list && ex->wr_set_inline_data &&
	      ex->wr_set_inline_data_list);
	CHECK(!ex->wr_set_ud_addr && !ex->wr_set_xrc_srqn &&
	      !ex->wr_send_tso && !ex->wr_atomic_write && !ex->wr_flush);
	kite_qp_ex_free(f->qp);
	memset(ex, 0, sizeof(*ex));
	f->qp->vqp.comp_mask = 0;

	/* Only the builders asked for. */
	a.send_ops_flags = IBV_QP_EX_WITH_SEND;
	CHECK(kite_create_qp_ex(ctx, &a) == &f->qp->vqp.qp);
	CHECK(ex->wr_send && !ex->wr_send_imm && !ex->wr_rdma_write &&
	      !ex->wr_bind_mw);
	kite_qp_ex_free(f->qp);
	memset(ex, 0, sizeof(*ex));
	f->qp->vqp.comp_mask = 0;

	/* Without SEND_OPS_FLAGS: a plain QP, no work request API. */
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	CHECK(kite_create_qp_ex(ctx, &a) == &f->qp->vqp.qp);
	CHECK(!(f->qp->vqp.comp_mask & VERBS_QP_EX) && !f->qp->batch &&
	      !ex->wr_start);

	/* The QP creation failing: its errno. */
	fake_create.qp = NULL;
	fake_create.err = ENOSPC;
	CHECK(kite_create_qp_ex(ctx, &a) == NULL && errno == ENOSPC);
	memset(&fake_create, 0, sizeof(fake_create));
	fake_free(f);
	return ok;
}

static uint8_t idata[64];

/*
 * Every RC operation, through ibv_post_send on one QP and ibv_wr_* on
 * another: the same SQ bytes, wr_ids, index and one doorbell.
 */
int test_qp_ex_same_wqes(void)
{
	struct fake *fa = fake_new(IBV_QPT_RC, 16, 8);
	struct fake *fb = fake_new(IBV_QPT_RC, 16, 8);
	struct ibv_qp_ex *ex = qp_ex(fb, ALL_RC_OPS);
	struct ibv_sge sg[3] = {
		{ .addr = 0x1000, .length = 100, .lkey = 0x101 },
		{ .addr = 0x2000, .length = 28, .lkey = 0x202 },
		{ .addr = 0x3000, .length = 8, .lkey = 0x303 },
	};
	struct ibv_sge in[2] = {
		{ .addr = (uintptr_t)idata, .length = 10 },
		{ .addr = (uintptr_t)(idata + 20), .length = 30 },
	};
	struct ibv_data_buf bufs[2] = {
		{ .addr = idata, .length = 10 },
		{ .addr = idata + 20, .length = 30 },
	};
	struct ibv_mr mra = { .context = &fa->ctx->ibv_ctx.context,
			      .lkey = 0x4401 };
	struct ibv_mr mrb = { .context = &fb->ctx->ibv_ctx.context,
			      .lkey = 0x4401 };
	struct ibv_mw mwa = { .context = &fa->ctx->ibv_ctx.context,
			      .rkey = 0x7700, .type = IBV_MW_TYPE_2 };
	struct ibv_mw mwb = { .context = &fb->ctx->ibv_ctx.context,
			      .rkey = 0x7700, .type = IBV_MW_TYPE_2 };
	struct ibv_mw_bind_info bi = { .addr = 0x9000, .length = 4096,
				       .mw_access_flags =
					IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_READ };
	struct ibv_send_wr wr[10], *bad = NULL;
	struct kite_sq_wqe_hdr *h;
	int ok = 1, i;

	for (i = 0; i < 64; i++)
		idata[i] = i * 7 + 1;
	wr[0] = send_wr(1, IBV_WR_SEND, sg, 2,
			IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	wr[1] = send_wr(2, IBV_WR_SEND_WITH_IMM, in, 2, IBV_SEND_INLINE);
	wr[1].imm_data = htobe32(0xfeedf00d);
	wr[2] = send_wr(3, IBV_WR_SEND_WITH_INV, sg + 2, 1, 0);
	wr[2].invalidate_rkey = 0x123456;
	wr[3] = send_wr(4, IBV_WR_RDMA_WRITE, sg, 3, IBV_SEND_FENCE);
	wr[3].wr.rdma.remote_addr = 0x1122334455667788ull;
	wr[3].wr.rdma.rkey = 0xabcd;
	wr[4] = send_wr(5, IBV_WR_RDMA_WRITE_WITH_IMM, in, 1,
			IBV_SEND_INLINE | IBV_SEND_SIGNALED);
	wr[4].imm_data = htobe32(7);
	wr[4].wr.rdma.remote_addr = 0x10;
	wr[4].wr.rdma.rkey = 0x11;
	wr[5] = send_wr(6, IBV_WR_RDMA_READ, sg + 1, 1, 0);
	wr[5].wr.rdma.remote_addr = 0x5000;
	wr[5].wr.rdma.rkey = 0x77;
	wr[6] = send_wr(7, IBV_WR_ATOMIC_CMP_AND_SWP, sg + 2, 1, 0);
	wr[6].wr.atomic.remote_addr = 0x8000;
	wr[6].wr.atomic.rkey = 0x99;
	wr[6].wr.atomic.compare_add = 5;
	wr[6].wr.atomic.swap = 6;
	wr[7] = send_wr(8, IBV_WR_ATOMIC_FETCH_AND_ADD, sg + 2, 1,
			IBV_SEND_SIGNALED);
	wr[7].wr.atomic.remote_addr = 0x8008;
	wr[7].wr.atomic.rkey = 0x98;
	wr[7].wr.atomic.compare_add = 17;
	wr[8] = send_wr(9, IBV_WR_LOCAL_INV, NULL, 0, IBV_SEND_SIGNALED);
	wr[8].invalidate_rkey = 0x7701;
	wr[9] = send_wr(10, IBV_WR_BIND_MW, NULL, 0, IBV_SEND_SIGNALED);
	wr[9].bind_mw.mw = &mwa;
	wr[9].bind_mw.rkey = 0x7702;
	wr[9].bind_mw.bind_info = bi;
	wr[9].bind_mw.bind_info.mr = &mra;
	for (i = 0; i < 9; i++)
		wr[i].next = &wr[i + 1];
	CHECK(kite_post_send(&fa->qp->vqp.qp, wr, &bad) == 0);
	CHECK(fa->qp->sq.pi == 10);

	CHECK(ex != NULL);
	if (!ex)
		goto out;
	ibv_wr_start(ex);
	ex->wr_id = 1;
	ex->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	ibv_wr_send(ex);
	ibv_wr_set_sge_list(ex, 2, sg);
	ex->wr_id = 2;
	ex->wr_flags = 0;
	ibv_wr_send_imm(ex, htobe32(0xfeedf00d));
	ibv_wr_set_inline_data_list(ex, 2, bufs);
	ex->wr_id = 3;
	ibv_wr_send_inv(ex, 0x123456);
	ibv_wr_set_sge(ex, sg[2].lkey, sg[2].addr, sg[2].length);
	ex->wr_id = 4;
	/* IBV_SEND_INLINE in wr_flags means nothing: the SGEs are used. */
	ex->wr_flags = IBV_SEND_FENCE | IBV_SEND_INLINE;
	ibv_wr_rdma_write(ex, 0xabcd, 0x1122334455667788ull);
	ibv_wr_set_sge_list(ex, 3, sg);
	ex->wr_id = 5;
	ex->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write_imm(ex, 0x11, 0x10, htobe32(7));
	ibv_wr_set_inline_data(ex, idata, 10);
	ex->wr_id = 6;
	ex->wr_flags = 0;
	ibv_wr_rdma_read(ex, 0x77, 0x5000);
	ibv_wr_set_sge(ex, sg[1].lkey, sg[1].addr, sg[1].length);
	ex->wr_id = 7;
	ibv_wr_atomic_cmp_swp(ex, 0x99, 0x8000, 5, 6);
	ibv_wr_set_sge(ex, sg[2].lkey, sg[2].addr, sg[2].length);
	ex->wr_id = 8;
	ex->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(ex, 0x98, 0x8008, 17);
	ibv_wr_set_sge(ex, sg[2].lkey, sg[2].addr, sg[2].length);
	ex->wr_id = 9;
	ibv_wr_local_inv(ex, 0x7701);
	ex->wr_id = 10;
	bi.mr = &mrb;
	ibv_wr_bind_mw(ex, &mwb, 0x7702, &bi);
	/* Nothing reaches the device before ibv_wr_complete(). */
	CHECK(fb->qp->sq.pi == 0 && db_read(fb, KITE_DB_SQ) == 0);
	CHECK(ibv_wr_complete(ex) == 0);
	CHECK(sq_lock_free(fb));

	CHECK(same_sq(fa, fb));
	CHECK(db_read(fb, KITE_DB_SQ) == kite_db_make(QPN, 0, 10));
	h = (void *)sq_wqe(fb, 1);
	CHECK(h->opcode == KITE_WQE_SEND_IMM && h->flags == KITE_WQE_F_INLINE &&
	      le16toh(h->inline_len) == 40);
	CHECK(!memcmp((uint8_t *)(h + 1), idata, 10) &&
	      !memcmp((uint8_t *)(h + 1) + 10, idata + 20, 30));
	h = (void *)sq_wqe(fb, 3);
	CHECK(h->opcode == KITE_WQE_WRITE && h->num_sge == 3 &&
	      h->flags == KITE_WQE_F_FENCE);
	h = (void *)sq_wqe(fb, 9);
	CHECK(h->opcode == KITE_WQE_BIND_MW &&
	      h->flags == KITE_WQE_F_SIGNALED);
out:
	fake_free(fa);
	fake_free(fb);
	return ok;
}

/* UD: the address setter before or after the data setter, or missing. */
int test_qp_ex_ud(void)
{
	struct fake *fa = fake_new(IBV_QPT_UD, 8, 8);
	struct fake *fb = fake_new(IBV_QPT_UD, 8, 8);
	struct ibv_qp_ex *ex = qp_ex(fb, IBV_QP_EX_WITH_SEND |
				     IBV_QP_EX_WITH_SEND_WITH_IMM);
	struct kite_ah ah = {};
	struct ibv_sge sg = { .addr = 0x1000, .length = 256, .lkey = 0x5 };
	struct ibv_sge in = { .addr = (uintptr_t)idata, .length = 16 };
	struct ibv_send_wr wr[2], *bad = NULL;
	int ok = 1, i;

	for (i = 0; i < (int)sizeof(ah.av); i++)
		((uint8_t *)&ah.av)[i] = 0x30 + i;
	for (i = 0; i < 64; i++)
		idata[i] = 0xc0 ^ i;
	wr[0] = send_wr(20, IBV_WR_SEND, &sg, 1, IBV_SEND_SIGNALED);
	wr[0].wr.ud.ah = &ah.ibv_ah;
	wr[0].wr.ud.remote_qpn = 0xabcdef;
	wr[0].wr.ud.remote_qkey = 0x80000000;
	wr[1] = send_wr(21, IBV_WR_SEND_WITH_IMM, &in, 1, IBV_SEND_INLINE);
	wr[1].imm_data = htobe32(0x99);
	wr[1].wr.ud.ah = &ah.ibv_ah;
	wr[1].wr.ud.remote_qpn = 0x12;
	wr[1].wr.ud.remote_qkey = 0x1111;
	wr[0].next = &wr[1];
	CHECK(kite_post_send(&fa->qp->vqp.qp, wr, &bad) == 0);

	CHECK(ex && ex->wr_set_ud_addr);
	if (!ex || !ex->wr_set_ud_addr)
		goto out;
	ibv_wr_start(ex);
	ex->wr_id = 20;
	ex->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(ex);
	ibv_wr_set_ud_addr(ex, &ah.ibv_ah, 0xabcdef, 0x80000000);
	ibv_wr_set_sge(ex, sg.lkey, sg.addr, sg.length);
	ex->wr_id = 21;
	ex->wr_flags = 0;
	ibv_wr_send_imm(ex, htobe32(0x99));
	ibv_wr_set_inline_data(ex, idata, 16);
	ibv_wr_set_ud_addr(ex, &ah.ibv_ah, 0x12, 0x1111);
	CHECK(ibv_wr_complete(ex) == 0);
	CHECK(fb->qp->sq.pi == 2);
	CHECK(same_sq(fa, fb));

	/* No address: the batch fails and posts nothing. */
	ibv_wr_start(ex);
	ex->wr_id = 22;
	ibv_wr_send(ex);
	ibv_wr_set_ud_addr(ex, &ah.ibv_ah, 1, 1);
	ibv_wr_set_sge(ex, sg.lkey, sg.addr, sg.length);
	ibv_wr_send(ex);
	ibv_wr_set_sge(ex, sg.lkey, sg.addr, sg.length);
	CHECK(ibv_wr_complete(ex) == EINVAL);
	CHECK(fb->qp->sq.pi == 2 &&
	      db_read(fb, KITE_DB_SQ) == kite_db_make(QPN, 0, 2));
	/* A QPN wider than 24 bits, as post_send refuses it. */
	ibv_wr_start(ex);
	ibv_wr_send(ex);
	ibv_wr_set_ud_addr(ex, &ah.ibv_ah, 1u << 24, 1);
	ibv_wr_set_sge(ex, sg.lkey, sg.addr, sg.length);
	CHECK(ibv_wr_complete(ex) == EINVAL && fb->qp->sq.pi == 2);
	CHECK(sq_lock_free(fb));
out:
	fake_free(fa);
	fake_free(fb);
	return ok;
}

/* Errors fail the whole batch, nothing of it posted, the lock released. */
int test_qp_ex_errors(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 4, 8);
	struct ibv_qp_ex *ex = qp_ex(f, ALL_RC_OPS);
	struct ibv_sge sg[5] = {
		{ .addr = 0x1000, .length = 1, .lkey = 1 },
		{ .addr = 0x1000, .length = 1, .lkey = 1 },
		{ .addr = 0x1000, .length = 1, .lkey = 1 },
		{ .addr = 0x1000, .length = 1, .lkey = 1 },
		{ .addr = 0x1000, .length = 1, .lkey = 1 },
	};
	struct kite_sq_wqe_hdr *h;
	uint8_t buf[80];
	int ok = 1, i;

	CHECK(ex != NULL);
	if (!ex)
		goto out;
	memset(buf, 0x5a, sizeof(buf));

	/* A setter before any builder. */
	ibv_wr_start(ex);
	ibv_wr_set_sge(ex, 1, 0x1000, 1);
	ibv_wr_send(ex);
	ibv_wr_set_sge(ex, 1, 0x1000, 1);
	CHECK(ibv_wr_complete(ex) == EINVAL);
	CHECK(f->qp->sq.pi == 0 && db_read(f, KITE_DB_SQ) == 0);
	CHECK(sq_lock_free(f));

	/* Too many SGEs (the QP takes 4) after a good WR: neither posted. */
	ibv_wr_start(ex);
	ibv_wr_send(ex);
	ibv_wr_set_sge(ex, 1, 0x1000, 1);
	ibv_wr_send(ex);
	ibv_wr_set_sge_list(ex, 5, sg);
	CHECK(ibv_wr_complete(ex) == EINVAL);
	CHECK(f->qp->sq.pi == 0 && db_read(f, KITE_DB_SQ) == 0);

	/* Too much inline data; inline data on a READ; data on LOCAL_INV. */
	ibv_wr_start(ex);
	ibv_wr_send(ex);
	ibv_wr_set_inline_data(ex, buf, 73);
	CHECK(ibv_wr_complete(ex) == EINVAL);
	ibv_wr_start(ex);
	ibv_wr_rdma_read(ex, 1, 2);
	ibv_wr_set_inline_data(ex, buf, 8);
	CHECK(ibv_wr_complete(ex) == EINVAL);
	ibv_wr_start(ex);
	ibv_wr_local_inv(ex, 0x100);
	ibv_wr_set_sge(ex, 1, 0x1000, 1);
	CHECK(ibv_wr_complete(ex) == EINVAL);
	CHECK(f->qp->sq.pi == 0 && db_read(f, KITE_DB_SQ) == 0);

	/* More WRs than the SQ holds (depth 4): ENOMEM, none posted. */
	ibv_wr_start(ex);
	for (i = 0; i < 5; i++) {
		ibv_wr_send(ex);
		ibv_wr_set_sge(ex, 1, 0x1000, 1);
	}
	CHECK(ibv_wr_complete(ex) == ENOMEM);
	CHECK(f->qp->sq.pi == 0 && db_read(f, KITE_DB_SQ) == 0);

	/* Abort: nothing posted, the lock released. */
	ibv_wr_start(ex);
	ibv_wr_send(ex);
	ibv_wr_set_sge(ex, 1, 0x1000, 1);
	ibv_wr_abort(ex);
	CHECK(f->qp->sq.pi == 0 && db_read(f, KITE_DB_SQ) == 0);
	CHECK(sq_lock_free(f));

	/* Inline data is copied by its setter: changing it later is safe. */
	ibv_wr_start(ex);
	ex->wr_id = 77;
	ibv_wr_send(ex);
	ibv_wr_set_inline_data(ex, buf, 72);
	memset(buf, 0, sizeof(buf));
	CHECK(ibv_wr_complete(ex) == 0);
	CHECK(f->qp->sq.pi == 1 &&
	      db_read(f, KITE_DB_SQ) == kite_db_make(QPN, 0, 1));
	h = (void *)sq_wqe(f, 0);
	CHECK(h->opcode == KITE_WQE_SEND && le16toh(h->inline_len) == 72);
	for (i = 0; i < 72; i++)
		if (((uint8_t *)(h + 1))[i] != 0x5a)
			break;
	CHECK(i == 72);
	CHECK(f->qp->sq.wr_id[0] == 77);

	/* The SQ takes no work before RTS. */
	f->qp->vqp.qp.state = IBV_QPS_INIT;
	ibv_wr_start(ex);
	ibv_wr_send(ex);
	ibv_wr_set_sge(ex, 1, 0x1000, 1);
	CHECK(ibv_wr_complete(ex) == EINVAL && f->qp->sq.pi == 1);
	CHECK(sq_lock_free(f));
out:
	fake_free(f);
	return ok;
}
