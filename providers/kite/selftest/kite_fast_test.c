// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host self-test of the libkite fast path (kite_fast.c) against a fake
 * device: the "doorbell page" is ordinary memory, so each doorbell register
 * holds the last value written; the test plays the device by reading WQEs
 * from the rings and writing CQEs (phase last) into the CQ ring.
 *
 * Built and run by scripts/build-rdma-core.sh against the rdma-core tree.
 * Last line of stdout: "kite-provider-selftest: N passed, N failed".
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <endian.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kite.h"

static int passed, failed;
static const char *cur_test;

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			printf("FAIL %s: %s:%d: %s\n", cur_test,	\
			       __FILE__, __LINE__, #cond);		\
			ok = 0;						\
		}							\
	} while (0)

/* kite_verbs.c is not linked in: the one helper the fast path uses. */
void kite_ring_free(struct kite_ring *ring)
{
	free(ring->buf);
	ring->buf = NULL;
	ring->len = 0;
}

struct fake {
	struct kite_context *ctx;
	struct kite_cq *cq;
	struct kite_qp *qp;
	uint32_t dev_cq_pi;	/* the "device's" CQ producer index */
	uint8_t mem[4096];	/* data the SGEs point at */
};

#define QPN	0x1234
#define CQN	7

static void wq_setup(struct kite_wq *wq, uint32_t depth, uint32_t stride,
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

static struct fake *fake_new(enum ibv_qp_type type, uint32_t sq_depth,
			     uint32_t cq_depth)
{
	struct fake *f = calloc(1, sizeof(*f));

	f->ctx = calloc(1, sizeof(*f->ctx));
	f->ctx->db = aligned_alloc(KITE_DB_PAGE_SIZE, KITE_DB_PAGE_SIZE);
	memset(f->ctx->db, 0, KITE_DB_PAGE_SIZE);
	f->ctx->db_size = KITE_DB_PAGE_SIZE;
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

static void fake_free(struct fake *f)
{
	kite_qp_table_remove(&f->ctx->qps, f->qp);
	free(f->qp->sq.ring.buf);
	free(f->qp->sq.wr_id);
	free(f->qp->rq.ring.buf);
	free(f->qp->rq.wr_id);
	free(f->qp);
	free(f->cq->ring.buf);
	free(f->cq->old.buf);
	free(f->cq);
	free(f->ctx->db);
	free(f->ctx);
	free(f);
}

static uint64_t db_read(struct fake *f, unsigned int reg)
{
	uint64_t v;

	memcpy(&v, (uint8_t *)f->ctx->db + reg, sizeof(v));
	return le64toh(v);
}

static void db_clear(struct fake *f)
{
	memset(f->ctx->db, 0, 32);
}

static uint8_t *sq_wqe(struct fake *f, uint32_t idx)
{
	struct kite_wq *sq = &f->qp->sq;

	return (uint8_t *)sq->ring.buf +
	       kite_ring_slot(idx, sq->log_depth) * sq->stride;
}

static uint8_t *rq_wqe(struct fake *f, uint32_t idx)
{
	struct kite_wq *rq = &f->qp->rq;

	return (uint8_t *)rq->ring.buf +
	       kite_ring_slot(idx, rq->log_depth) * rq->stride;
}

/* The device side: write the next CQE, flags (with the phase) last. */
static void dev_cqe(struct fake *f, uint32_t qpn, uint16_t wqe_idx,
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

static struct ibv_send_wr send_wr(uint64_t wr_id, enum ibv_wr_opcode op,
				  struct ibv_sge *sg, int num_sge, int flags)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .opcode = op, .sg_list = sg,
		.num_sge = num_sge, .send_flags = flags,
	};

	return wr;
}

/* A list of SEND, WRITE_IMM inline, READ and both atomics: WQE layout. */
static int test_post_send_layout(void)
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
static int test_post_send_errors(void)
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

	/* Atomics on UC, an unknown opcode, too many SGEs, too much inline. */
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

	/* UD: no address handles yet. */
	f = fake_new(IBV_QPT_UD, 4, 8);
	wr[0] = send_wr(1, IBV_WR_SEND, sg, 1, 0);
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EOPNOTSUPP &&
	      bad == &wr[0]);
	fake_free(f);
	return ok;
}

/* post_recv, receive completions with immediate data, flushes. */
static int test_recv(void)
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

/*
 * Many passes over a small CQ: phase wrap, the consumer index reported
 * after every poll, every error status passed through, one entry per poll.
 */
static int test_cq_wrap(void)
{
	static const uint8_t statuses[] = {
		KITE_CQE_SUCCESS, KITE_CQE_LOC_LEN_ERR, KITE_CQE_LOC_QP_OP_ERR,
		KITE_CQE_LOC_PROT_ERR, KITE_CQE_WR_FLUSH_ERR,
		KITE_CQE_BAD_RESP_ERR, KITE_CQE_LOC_ACCESS_ERR,
		KITE_CQE_REM_INV_REQ_ERR, KITE_CQE_REM_ACCESS_ERR,
		KITE_CQE_REM_OP_ERR, KITE_CQE_RETRY_EXC_ERR,
		KITE_CQE_RNR_RETRY_EXC_ERR, KITE_CQE_GENERAL_ERR,
	};
	struct fake *f = fake_new(IBV_QPT_RC, 4, 4);
	struct ibv_sge sg = { .length = 1 };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc[2];
	int ok = 1, i;

	CHECK(kite_poll_cq(&f->cq->vcq.cq, 2, wc) == 0);
	CHECK(db_read(f, KITE_DB_CQ) == 0);	/* nothing consumed, no doorbell */
	for (i = 0; i < 37; i++) {
		uint8_t st = statuses[i % sizeof(statuses)];

		wr = send_wr(1000 + i, IBV_WR_RDMA_WRITE, &sg, 1,
			     IBV_SEND_SIGNALED);
		CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == 0);
		dev_cqe(f, QPN, i % 4, KITE_CQE_WRITE, st, 1, 0, 0);
		CHECK(kite_poll_cq(&f->cq->vcq.cq, 2, wc) == 1);
		CHECK(wc[0].wr_id == 1000 + (uint64_t)i);
		CHECK(wc[0].status == st && wc[0].opcode == IBV_WC_RDMA_WRITE);
		CHECK(db_read(f, KITE_DB_CQ) == kite_db_make(CQN, 0, i + 1));
		CHECK(kite_poll_cq(&f->cq->vcq.cq, 2, wc) == 0);
	}
	CHECK(f->qp->sq.ci == 37 && f->qp->sq.pi == 37);

	/* Arming: flags and the current consumer index. */
	CHECK(kite_req_notify_cq(&f->cq->vcq.cq, 0) == 0);
	CHECK(db_read(f, KITE_DB_CQ) ==
	      kite_db_make(CQN, KITE_DB_CQ_ARM_NEXT, 37));
	CHECK(kite_req_notify_cq(&f->cq->vcq.cq, 1) == 0);
	CHECK(db_read(f, KITE_DB_CQ) ==
	      kite_db_make(CQN, KITE_DB_CQ_ARM_SOLICITED, 37));
	fake_free(f);
	return ok;
}

/* CQEs of unknown or forgotten QPs are consumed and dropped. */
static int test_cq_forget(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 8, 8);
	struct ibv_sge sg = { .length = 1 };
	struct ibv_send_wr wr[2], *bad;
	struct ibv_wc wc[4];
	int ok = 1;

	wr[0] = send_wr(1, IBV_WR_SEND, &sg, 1, IBV_SEND_SIGNALED);
	wr[1] = send_wr(2, IBV_WR_SEND, &sg, 1, IBV_SEND_SIGNALED);
	wr[0].next = &wr[1];
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == 0);
	dev_cqe(f, QPN + 1, 0, KITE_CQE_SEND, 0, 1, 0, 0);	/* unknown QP */
	dev_cqe(f, QPN, 0, KITE_CQE_SEND, 0, 1, 0, 0);
	dev_cqe(f, QPN, 1, KITE_CQE_SEND, 0, 1, 0, 0);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 1, wc) == 1);
	CHECK(wc[0].wr_id == 1 && f->cq->ci == 2);
	/* The QP goes away with one CQE left. */
	kite_cq_forget_qp(f->cq, QPN);
	CHECK(f->cq->last_qp == NULL);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 4, wc) == 0);
	CHECK(f->cq->ci == 3);
	CHECK(db_read(f, KITE_DB_CQ) == kite_db_make(CQN, 0, 3));
	fake_free(f);
	return ok;
}

/*
 * A CQE naming a slot with no outstanding WQE (a device bug) is consumed
 * and dropped: it neither completes with a stale wr_id nor moves the queue.
 */
static int test_cq_stale_slot(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 8, 8);
	struct ibv_sge sg = { .length = 1 };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc[4];
	int ok = 1;

	wr = send_wr(1, IBV_WR_SEND, &sg, 1, IBV_SEND_SIGNALED);
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == 0);
	dev_cqe(f, QPN, 5, KITE_CQE_SEND, 0, 1, 0, 0);	/* slot 5: not posted */
	dev_cqe(f, QPN, 0, KITE_CQE_RECV, 0, 1, 0, 0);	/* RQ empty */
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 4, wc) == 0);
	CHECK(f->cq->ci == 2);
	CHECK(f->qp->sq.ci == 0 && f->qp->rq.ci == 0);
	dev_cqe(f, QPN, 0, KITE_CQE_SEND, 0, 1, 0, 0);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 4, wc) == 1);
	CHECK(wc[0].wr_id == 1 && f->qp->sq.ci == 1);
	fake_free(f);
	return ok;
}

/*
 * A long poll over a large CQ reports the consumer index at least every
 * half depth (the device could otherwise overflow the CQ).
 */
static int test_cq_half_depth(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 16, 16);
	struct ibv_sge sg = { .length = 1 };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc[16];
	int ok = 1, i;

	for (i = 0; i < 16; i++) {
		wr = send_wr(i, IBV_WR_SEND, &sg, 1, IBV_SEND_SIGNALED);
		CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == 0);
	}
	for (i = 0; i < 12; i++)
		dev_cqe(f, QPN, i, KITE_CQE_SEND, 0, 1, 0, 0);
	/* Stop the poll after 9 entries: a report at 8 and one at 9. */
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 9, wc) == 9);
	CHECK(f->cq->db_ci == 9);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 16, wc) == 3);
	CHECK(wc[2].wr_id == 11 && f->cq->db_ci == 12);
	fake_free(f);
	return ok;
}

/* After a resize, CQEs left in the old ring come first. */
static int test_cq_old_ring(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 8, 4);
	struct ibv_sge sg = { .length = 1 };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc[8];
	int ok = 1, i;

	for (i = 0; i < 4; i++) {
		wr = send_wr(i, IBV_WR_SEND, &sg, 1, IBV_SEND_SIGNALED);
		CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == 0);
	}
	dev_cqe(f, QPN, 0, KITE_CQE_SEND, 0, 1, 0, 0);
	dev_cqe(f, QPN, 1, KITE_CQE_SEND, 0, 1, 0, 0);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 1, wc) == 1 && wc[0].wr_id == 0);
	/* What kite_resize_cq does after the command, by hand. */
	CHECK(kite_cq_ring_pending(f->cq->ring.buf, f->cq->ci,
				   f->cq->log_depth));
	f->cq->old = f->cq->ring;
	f->cq->old_ci = f->cq->ci;
	f->cq->old_log_depth = f->cq->log_depth;
	f->cq->depth = 8;
	f->cq->log_depth = 3;
	f->cq->ring.len = 8 * sizeof(struct kite_cqe);
	f->cq->ring.buf = calloc(1, f->cq->ring.len);
	f->cq->ci = 0;
	f->cq->db_ci = 0;
	f->dev_cq_pi = 0;
	dev_cqe(f, QPN, 2, KITE_CQE_SEND, 0, 1, 0, 0);
	dev_cqe(f, QPN, 3, KITE_CQE_SEND, 0, 1, 0, 0);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 8, wc) == 3);
	CHECK(wc[0].wr_id == 1 && wc[1].wr_id == 2 && wc[2].wr_id == 3);
	CHECK(f->cq->old.buf == NULL && f->cq->ci == 2);
	CHECK(db_read(f, KITE_DB_CQ) == kite_db_make(CQN, 0, 2));
	fake_free(f);
	return ok;
}

/* Two QPs whose numbers share a hash chain, completing into one CQ. */
static int test_two_qps(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 4, 8);
	struct ibv_sge sg = { .length = 1 };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc[8];
	struct kite_qp *qp2;
	int ok = 1;

	qp2 = calloc(1, sizeof(*qp2));
	qp2->vqp.qp = f->qp->vqp.qp;
	qp2->vqp.qp.qp_num = QPN + KITE_QP_TABLE_SIZE;
	wq_setup(&qp2->sq, 4, 128, 2);
	wq_setup(&qp2->rq, 4, 64, 3);
	kite_qp_table_insert(&f->ctx->qps, qp2);
	CHECK(kite_qp_table_find(&f->ctx->qps, QPN) == f->qp);
	CHECK(kite_qp_table_find(&f->ctx->qps, QPN + KITE_QP_TABLE_SIZE) ==
	      qp2);
	CHECK(kite_qp_table_find(&f->ctx->qps, QPN + 1) == NULL);

	wr = send_wr(1, IBV_WR_SEND, &sg, 1, IBV_SEND_SIGNALED);
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == 0);
	wr = send_wr(2, IBV_WR_SEND, &sg, 1, IBV_SEND_SIGNALED);
	CHECK(kite_post_send(&qp2->vqp.qp, &wr, &bad) == 0);
	CHECK(db_read(f, KITE_DB_SQ) ==
	      kite_db_make(QPN + KITE_QP_TABLE_SIZE, 0, 1));
	dev_cqe(f, QPN + KITE_QP_TABLE_SIZE, 0, KITE_CQE_SEND, 0, 1, 0, 0);
	dev_cqe(f, QPN, 0, KITE_CQE_SEND, 0, 1, 0, 0);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 8, wc) == 2);
	CHECK(wc[0].wr_id == 2 && wc[0].qp_num == QPN + KITE_QP_TABLE_SIZE);
	CHECK(wc[1].wr_id == 1 && wc[1].qp_num == QPN);
	CHECK(qp2->sq.ci == 1 && f->qp->sq.ci == 1);

	/* qp2 destroyed with a CQE pending: only f->qp's CQE comes out. */
	wr = send_wr(3, IBV_WR_SEND, &sg, 1, IBV_SEND_SIGNALED);
	CHECK(kite_post_send(&qp2->vqp.qp, &wr, &bad) == 0);
	wr = send_wr(4, IBV_WR_SEND, &sg, 1, IBV_SEND_SIGNALED);
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == 0);
	dev_cqe(f, QPN + KITE_QP_TABLE_SIZE, 1, KITE_CQE_SEND, 0, 1, 0, 0);
	dev_cqe(f, QPN, 1, KITE_CQE_SEND, 0, 1, 0, 0);
	kite_qp_table_remove(&f->ctx->qps, qp2);
	kite_cq_forget_qp(f->cq, qp2->vqp.qp.qp_num);
	free(qp2->sq.ring.buf);
	free(qp2->sq.wr_id);
	free(qp2->rq.ring.buf);
	free(qp2->rq.wr_id);
	free(qp2);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 8, wc) == 1);
	CHECK(wc[0].wr_id == 4 && wc[0].qp_num == QPN);
	CHECK(kite_qp_table_find(&f->ctx->qps, QPN) == f->qp);
	fake_free(f);
	return ok;
}

/*
 * Threads: a "device" thread executes SQ WQEs up to the SQ doorbell and
 * writes a CQE (flags last, with release ordering) for each signaled one,
 * but never more than the CQ doorbell says is free. The application posts
 * lists of SENDs (every third one signaled) and polls, either from one
 * thread, where the device must never find the CQ full (poll_cq reports
 * its consumer index), or from a poster and a poller thread.
 */
#define STRESS_WRS	20000
#define STRESS_SIGNAL	3

struct stress {
	struct fake *f;
	int stop;
	unsigned long full_waits;
	int bad_wqe;
	int bad_order;
	uint64_t next_wr_id;	/* next wr_id to post */
	uint64_t expect;	/* wr_id of the next completion */
	unsigned long polled;
};

static bool stress_signaled(uint64_t wr_id)
{
	return wr_id % STRESS_SIGNAL == STRESS_SIGNAL - 1 ||
	       wr_id == STRESS_WRS - 1;
}

static uint64_t db_load(struct fake *f, unsigned int reg)
{
	return le64toh(__atomic_load_n((uint64_t *)((uint8_t *)f->ctx->db + reg),
				       __ATOMIC_ACQUIRE));
}

static void *stress_device(void *arg)
{
	struct stress *st = arg;
	struct fake *f = st->f;
	uint32_t ci = 0;

	while (!__atomic_load_n(&st->stop, __ATOMIC_ACQUIRE)) {
		uint32_t pi = kite_db_index(db_load(f, KITE_DB_SQ));
		uint32_t cq_ci = kite_db_index(db_load(f, KITE_DB_CQ));
		struct kite_sq_wqe_hdr *h;
		struct kite_sge *sge;
		struct kite_cqe *cqe;

		if (ci == pi) {
			sched_yield();
			continue;
		}
		h = (void *)sq_wqe(f, ci);
		sge = (void *)(h + 1);
		if (h->opcode != KITE_WQE_SEND || h->num_sge != 1)
			st->bad_wqe++;
		if (!(h->flags & KITE_WQE_F_SIGNALED)) {
			ci++;
			continue;
		}
		if (f->dev_cq_pi - cq_ci >= f->cq->depth) {
			st->full_waits++;
			sched_yield();
			continue;
		}
		cqe = (struct kite_cqe *)f->cq->ring.buf +
		      kite_ring_slot(f->dev_cq_pi, f->cq->log_depth);
		memset(cqe, 0, offsetof(struct kite_cqe, flags));
		cqe->qpn = htole32(QPN);
		cqe->wqe_idx = htole16(kite_ring_slot(ci, f->qp->sq.log_depth));
		cqe->opcode = KITE_CQE_SEND;
		cqe->byte_len = sge->length;
		__atomic_store_n(&cqe->flags,
				 kite_ring_phase(f->dev_cq_pi, f->cq->log_depth),
				 __ATOMIC_RELEASE);
		f->dev_cq_pi++;
		ci++;
	}
	return NULL;
}

/* Post a list of up to 3 SENDs; the WRs that did not fit are retried. */
static void stress_post(struct stress *st)
{
	struct ibv_sge sg[3];
	struct ibv_send_wr wr[3], *bad = NULL;
	int i, n, err;

	n = STRESS_WRS - st->next_wr_id;
	if (n <= 0)
		return;
	if (n > 3)
		n = 3;
	for (i = 0; i < n; i++) {
		uint64_t id = st->next_wr_id + i;

		sg[i] = (struct ibv_sge){ .addr = 0x1000, .lkey = 1,
					  .length = (id * 7) & 0xffff };
		wr[i] = send_wr(id, IBV_WR_SEND, &sg[i], 1,
				stress_signaled(id) ? IBV_SEND_SIGNALED : 0);
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	err = kite_post_send(&st->f->qp->vqp.qp, wr, &bad);
	if (!err)
		st->next_wr_id += n;
	else if (err == ENOMEM)
		st->next_wr_id += bad - wr;
	else
		st->bad_wqe++;
}

static void stress_poll(struct stress *st)
{
	struct ibv_wc wc[2];
	int i, n;

	n = kite_poll_cq(&st->f->cq->vcq.cq, 2, wc);
	for (i = 0; i < n; i++) {
		while (!stress_signaled(st->expect))
			st->expect++;
		if (wc[i].wr_id != st->expect || wc[i].status ||
		    wc[i].byte_len != ((st->expect * 7) & 0xffff))
			st->bad_order++;
		st->expect++;
		st->polled++;
	}
}

static unsigned long stress_expected(void)
{
	unsigned long id, n = 0;

	for (id = 0; id < STRESS_WRS; id++)
		n += stress_signaled(id);
	return n;
}

static void *stress_poster(void *arg)
{
	struct stress *st = arg;

	while (st->next_wr_id < STRESS_WRS) {
		stress_post(st);
		sched_yield();
	}
	return NULL;
}

static int stress_run(bool two_threads)
{
	struct stress st = { .f = fake_new(IBV_QPT_RC, 8, 4) };
	unsigned long want = stress_expected();
	pthread_t dev, poster;
	int ok = 1;

	pthread_create(&dev, NULL, stress_device, &st);
	if (two_threads) {
		pthread_create(&poster, NULL, stress_poster, &st);
		while (st.polled < want && !st.bad_order)
			stress_poll(&st);
		pthread_join(poster, NULL);
	} else {
		while (st.polled < want && !st.bad_order) {
			stress_post(&st);
			stress_poll(&st);
		}
	}
	__atomic_store_n(&st.stop, 1, __ATOMIC_RELEASE);
	pthread_join(dev, NULL);
	CHECK(st.bad_wqe == 0);
	CHECK(st.bad_order == 0);
	CHECK(st.polled == want);
	CHECK(st.f->qp->sq.ci == STRESS_WRS && st.f->qp->sq.pi == STRESS_WRS);
	if (!two_threads)
		CHECK(st.full_waits == 0);
	fake_free(st.f);
	return ok;
}

static int test_stress_one_thread(void)
{
	return stress_run(false);
}

static int test_stress_two_threads(void)
{
	return stress_run(true);
}

static void run(const char *name, int (*fn)(void))
{
	cur_test = name;
	if (fn()) {
		passed++;
		printf("ok %s\n", name);
	} else {
		failed++;
		printf("not ok %s\n", name);
	}
}

int main(void)
{
	run("post_send_layout", test_post_send_layout);
	run("post_send_errors", test_post_send_errors);
	run("recv", test_recv);
	run("cq_wrap", test_cq_wrap);
	run("cq_forget", test_cq_forget);
	run("cq_stale_slot", test_cq_stale_slot);
	run("cq_half_depth", test_cq_half_depth);
	run("cq_old_ring", test_cq_old_ring);
	run("two_qps", test_two_qps);
	run("stress_one_thread", test_stress_one_thread);
	run("stress_two_threads", test_stress_two_threads);
	printf("kite-provider-selftest: %d passed, %d failed\n", passed,
	       failed);
	return failed ? 1 : 0;
}
