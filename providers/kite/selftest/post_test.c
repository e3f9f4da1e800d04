// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Provider self-test: posting send and receive WQEs (their layout and errors).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "selftest.h"

/* A list of SEND, WRITE_IMM inline, READ and both atomics: WQE layout. */
int test_post_send_layout(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 8, 8);
	struct ibv_sge sg[2] = {
		{ .addr = 0x1000, .length = 100, .lkey = 0x101 },
		{ .addr = 0x2000, .length = 28, .lkey = 0x202 },
	};
	struct ibv_sge in[2];
	struct ibv_send_wr wr[5], *bad = NULL;
	struct kite_sq_wqe_hdr *h;
	struct kite_wqe_raddr *ra;
	struct kite_wqe_atomic *at;
	struct kite_sge *s;
	int ok = 1, i;

	for (i = 0; i < 64; i++)
		f->mem[i] = i * 3;
	in[0] = (struct ibv_sge){ .addr = (uintptr_t)f->mem, .length = 10 };
	in[1] = (struct ibv_sge){ .addr = (uintptr_t)(f->mem + 20),
				  .length = 30 };

	wr[0] = send_wr(100, IBV_WR_SEND, sg, 2,
			IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	wr[1] = send_wr(101, IBV_WR_RDMA_WRITE_WITH_IMM, in, 2,
			IBV_SEND_INLINE);
	wr[1].imm_data = htobe32(0xdeadbeef);
	wr[1].wr.rdma.remote_addr = 0x1122334455667788ull;
	wr[1].wr.rdma.rkey = 0xabcd;
	wr[2] = send_wr(102, IBV_WR_RDMA_READ, sg, 1,
			IBV_SEND_FENCE | IBV_SEND_INLINE);
	wr[2].wr.rdma.remote_addr = 0x5000;
	wr[2].wr.rdma.rkey = 0x77;
	wr[3] = send_wr(103, IBV_WR_ATOMIC_CMP_AND_SWP, sg, 1, 0);
	wr[3].wr.atomic.remote_addr = 0x8000;
	wr[3].wr.atomic.rkey = 0x99;
	wr[3].wr.atomic.compare_add = 5;
	wr[3].wr.atomic.swap = 6;
	wr[4] = send_wr(104, IBV_WR_ATOMIC_FETCH_AND_ADD, sg, 1,
			IBV_SEND_SIGNALED);
	wr[4].wr.atomic.remote_addr = 0x8008;
	wr[4].wr.atomic.rkey = 0x98;
	wr[4].wr.atomic.compare_add = 17;
	for (i = 0; i < 4; i++)
		wr[i].next = &wr[i + 1];

	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == 0);
	CHECK(db_read(f, KITE_DB_SQ) == kite_db_make(QPN, 0, 5));
	CHECK(f->qp->sq.pi == 5);

	h = (void *)sq_wqe(f, 0);
	CHECK(h->opcode == KITE_WQE_SEND);
	CHECK(h->flags == (KITE_WQE_F_SIGNALED | KITE_WQE_F_SOLICITED));
	CHECK(h->num_sge == 2 && h->inline_len == 0);
	s = (void *)(h + 1);
	CHECK(le64toh(s[0].addr) == 0x1000 && le32toh(s[0].length) == 100 &&
	      le32toh(s[0].lkey) == 0x101);
	CHECK(le64toh(s[1].addr) == 0x2000 && le32toh(s[1].length) == 28 &&
	      le32toh(s[1].lkey) == 0x202);

	h = (void *)sq_wqe(f, 1);
	CHECK(h->opcode == KITE_WQE_WRITE_IMM);
	CHECK(h->flags == KITE_WQE_F_INLINE);
	CHECK(h->num_sge == 0 && le16toh(h->inline_len) == 40);
	CHECK(memcmp(&h->imm_data, &wr[1].imm_data, 4) == 0);
	ra = (void *)(h + 1);
	CHECK(le64toh(ra->remote_addr) == 0x1122334455667788ull);
	CHECK(le32toh(ra->rkey) == 0xabcd);
	CHECK(memcmp(ra + 1, f->mem, 10) == 0);
	CHECK(memcmp((uint8_t *)(ra + 1) + 10, f->mem + 20, 30) == 0);

	/* INLINE is ignored on a READ: its SGE says where the data goes. */
	h = (void *)sq_wqe(f, 2);
	CHECK(h->opcode == KITE_WQE_READ);
	CHECK(h->flags == KITE_WQE_F_FENCE);
	CHECK(h->num_sge == 1);
	ra = (void *)(h + 1);
	CHECK(le64toh(ra->remote_addr) == 0x5000 && le32toh(ra->rkey) == 0x77);
	s = (void *)(ra + 1);
	CHECK(le64toh(s[0].addr) == 0x1000);

	h = (void *)sq_wqe(f, 3);
	CHECK(h->opcode == KITE_WQE_CMP_SWP && h->flags == 0);
	at = (void *)(h + 1);
	CHECK(le64toh(at->remote_addr) == 0x8000 && le32toh(at->rkey) == 0x99);
	CHECK(le64toh(at->swap_add) == 6 && le64toh(at->compare) == 5);
	CHECK(h->num_sge == 1);

	h = (void *)sq_wqe(f, 4);
	CHECK(h->opcode == KITE_WQE_FETCH_ADD);
	CHECK(h->flags == KITE_WQE_F_SIGNALED);
	at = (void *)(h + 1);
	CHECK(le64toh(at->swap_add) == 17 && at->compare == 0);

	/* Completions: slot 0 (signaled), then slot 4 retires 1..3 too. */
	{
		struct ibv_wc wc[4];

		dev_cqe(f, QPN, 0, KITE_CQE_SEND, KITE_CQE_SUCCESS, 128, 0, 0);
		dev_cqe(f, QPN, 4, KITE_CQE_FETCH_ADD, KITE_CQE_SUCCESS, 8,
			0, 0);
		CHECK(kite_poll_cq(&f->cq->vcq.cq, 4, wc) == 2);
		CHECK(wc[0].wr_id == 100 && wc[0].status == IBV_WC_SUCCESS);
		CHECK(wc[0].opcode == IBV_WC_SEND && wc[0].byte_len == 128);
		CHECK(wc[0].qp_num == QPN && wc[0].wc_flags == 0);
		CHECK(wc[1].wr_id == 104 && wc[1].opcode == IBV_WC_FETCH_ADD);
		CHECK(f->qp->sq.ci == 5);
		CHECK(db_read(f, KITE_DB_CQ) == kite_db_make(CQN, 0, 2));
	}
	fake_free(f);
	return ok;
}

/* Errors: errno, *bad_wr, and the WRs before the bad one still posted. */
int test_post_send_errors(void)
{
	struct fake *f = fake_new(IBV_QPT_UC, 4, 8);
	struct ibv_sge sg[5] = {};
	struct ibv_send_wr wr[3], *bad = NULL;
	int ok = 1;

	sg[0].length = 40;
	sg[1].length = 40;
	/* UC: READ is not allowed. */
	wr[0] = send_wr(1, IBV_WR_SEND, sg, 1, 0);
	wr[1] = send_wr(2, IBV_WR_RDMA_READ, sg, 1, 0);
	wr[0].next = &wr[1];
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EINVAL);
	CHECK(bad == &wr[1]);
	CHECK(f->qp->sq.pi == 1);
	CHECK(db_read(f, KITE_DB_SQ) == kite_db_make(QPN, 0, 1));

	/* Atomics on UC, LOCAL_INV with data, too many SGEs, too much inline. */
	db_clear(f);
	wr[0] = send_wr(3, IBV_WR_ATOMIC_FETCH_AND_ADD, sg, 1, 0);
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EINVAL &&
	      bad == &wr[0]);
	wr[0] = send_wr(3, IBV_WR_LOCAL_INV, sg, 1, 0);
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EINVAL &&
	      bad == &wr[0]);
	wr[0] = send_wr(3, IBV_WR_SEND, sg, 5, 0);
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EINVAL &&
	      bad == &wr[0]);
	sg[0].addr = (uintptr_t)f->mem;
	sg[1].addr = (uintptr_t)f->mem;
	wr[0] = send_wr(3, IBV_WR_SEND, sg, 2, IBV_SEND_INLINE);
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EINVAL &&
	      bad == &wr[0]);
	/* Nothing posted, no doorbell. */
	CHECK(f->qp->sq.pi == 1 && db_read(f, KITE_DB_SQ) == 0);
	/* Exactly max_inline (72) is fine. */
	sg[1].length = 32;
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == 0);
	CHECK(le16toh(((struct kite_sq_wqe_hdr *)sq_wqe(f, 1))->inline_len) ==
	      72);

	/* Full: 4 slots, 2 used; a list of 3 posts 2 and fails the third. */
	wr[0] = send_wr(10, IBV_WR_SEND, sg, 1, 0);
	wr[1] = send_wr(11, IBV_WR_SEND, sg, 1, 0);
	wr[2] = send_wr(12, IBV_WR_SEND, sg, 1, IBV_SEND_SIGNALED);
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == ENOMEM &&
	      bad == &wr[2]);
	CHECK(f->qp->sq.pi == 4);
	CHECK(db_read(f, KITE_DB_SQ) == kite_db_make(QPN, 0, 4));
	/* A CQE for slot 1 frees slots 0 and 1; then the third fits. */
	{
		struct ibv_wc wc;

		dev_cqe(f, QPN, 1, KITE_CQE_SEND, KITE_CQE_SUCCESS, 72, 0, 0);
		CHECK(kite_poll_cq(&f->cq->vcq.cq, 1, &wc) == 1);
		CHECK(wc.wr_id == 3 && f->qp->sq.ci == 2);
	}
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr[2], &bad) == 0);
	CHECK(db_read(f, KITE_DB_SQ) == kite_db_make(QPN, 0, 5));
	CHECK(f->qp->sq.wr_id[0] == 12);

	/* Not yet RTS: EINVAL. */
	f->qp->vqp.qp.state = IBV_QPS_RTR;
	wr[2].next = NULL;
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr[2], &bad) == EINVAL &&
	      bad == &wr[2]);
	fake_free(f);
	return ok;
}

/* post_recv, receive completions with immediate data, flushes. */
int test_recv(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 4, 4);
	struct ibv_sge sg[4] = {
		{ .addr = 0xa000, .length = 4096, .lkey = 0x11 },
		{ .addr = 0xb000, .length = 512, .lkey = 0x12 },
	};
	struct ibv_recv_wr wr[3] = {}, *bad = NULL;
	struct kite_rq_wqe_hdr *h;
	struct kite_sge *s;
	struct ibv_wc wc[4];
	int ok = 1, i;

	for (i = 0; i < 3; i++) {
		wr[i].wr_id = 200 + i;
		wr[i].sg_list = sg;
		wr[i].num_sge = 2;
		if (i < 2)
			wr[i].next = &wr[i + 1];
	}
	CHECK(kite_post_recv(&f->qp->vqp.qp, wr, &bad) == 0);
	CHECK(db_read(f, KITE_DB_RQ) == kite_db_make(QPN, 0, 3));
	h = (void *)rq_wqe(f, 2);
	CHECK(h->num_sge == 2);
	s = (void *)(h + 1);
	CHECK(le64toh(s[1].addr) == 0xb000 && le32toh(s[1].length) == 512 &&
	      le32toh(s[1].lkey) == 0x12);

	/* Too many SGEs (max 3). */
	wr[0].num_sge = 4;
	wr[0].next = NULL;
	CHECK(kite_post_recv(&f->qp->vqp.qp, wr, &bad) == EINVAL &&
	      bad == &wr[0]);
	CHECK(f->qp->rq.pi == 3);

	dev_cqe(f, QPN, 0, KITE_CQE_RECV, KITE_CQE_SUCCESS, 77,
		KITE_CQE_F_IMM | KITE_CQE_F_SOLICITED, htobe32(0x01020304));
	dev_cqe(f, QPN, 1, KITE_CQE_RECV_WRITE_IMM, KITE_CQE_SUCCESS, 4000,
		KITE_CQE_F_IMM, htobe32(9));
	dev_cqe(f, QPN, 2, KITE_CQE_RECV, KITE_CQE_WR_FLUSH_ERR, 0, 0, 0);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 4, wc) == 3);
	CHECK(wc[0].wr_id == 200 && wc[0].opcode == IBV_WC_RECV);
	CHECK(wc[0].byte_len == 77 && wc[0].wc_flags == IBV_WC_WITH_IMM);
	CHECK(wc[0].imm_data == htobe32(0x01020304));
	CHECK(wc[1].wr_id == 201 && wc[1].opcode == IBV_WC_RECV_RDMA_WITH_IMM);
	CHECK(wc[1].byte_len == 4000 && wc[1].imm_data == htobe32(9));
	CHECK(wc[2].wr_id == 202 && wc[2].status == IBV_WC_WR_FLUSH_ERR);
	CHECK(wc[2].vendor_err == 0x42);
	CHECK(f->qp->rq.ci == 3);

	/* RESET state refuses receives; INIT takes them. */
	wr[0].num_sge = 1;
	f->qp->vqp.qp.state = IBV_QPS_RESET;
	CHECK(kite_post_recv(&f->qp->vqp.qp, wr, &bad) == EINVAL);
	f->qp->vqp.qp.state = IBV_QPS_INIT;
	CHECK(kite_post_recv(&f->qp->vqp.qp, wr, &bad) == 0);
	fake_free(f);
	return ok;
}
