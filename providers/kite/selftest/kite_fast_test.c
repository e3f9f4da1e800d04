// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host self-test of the libkite fast path (kite_fast.c) and address
 * handles (kite_ah.c) against a fake device: the "doorbell page" is
 * ordinary memory, so each doorbell register holds the last value written;
 * the test plays the device by reading WQEs from the rings and writing
 * CQEs (phase last) into the CQ ring, and plays the kernel by answering
 * the AH commands (ibv_cmd_create_ah/destroy_ah are faked here).
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
#include "kite-abi.h"

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

/*
 * The kernel side of the AH commands. ibv_cmd_create_ah() answers with
 * kernel_ah_resp (or fails with kernel_ah_err) and records what it was
 * given; ibv_cmd_destroy_ah() counts the AHs destroyed.
 */
static struct {
	int err;			/* create: errno to fail with, or 0 */
	int destroy_err;		/* destroy: errno to fail with, or 0 */
	struct kite_create_ah_resp resp;	/* the driver's answer */
	int creates, destroys, logs;
	size_t resp_size;
	struct ibv_ah_attr attr;	/* as the kernel saw it */
} kernel_ah;

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

void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...)
{
	kernel_ah.logs++;
}

static struct verbs_device fake_vdev = {
	.device = { .name = "kite_test" },
};

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

/* ---- address handles and UD ------------------------------------------------ */

static const uint8_t test_dmac[6] = { 0x02, 0x4b, 0x54, 0x00, 0x00, 0x02 };

/* An AH attribute for @dgid, as ibv_ud_pingpong builds one. */
static struct ibv_ah_attr ah_attr(const uint8_t dgid[16])
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = 1, .sl = 5, .dlid = 0,
		.grh = { .sgid_index = 3, .hop_limit = 64,
			 .traffic_class = 0x28, .flow_label = 0x7123456 },
	};

	memcpy(a.grh.dgid.raw, dgid, 16);
	return a;
}

static const uint8_t gid_v4[16] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2,
};
static const uint8_t gid_v6[16] = {
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
};

static void kernel_ah_answer(uint8_t net_type)
{
	memset(&kernel_ah, 0, sizeof(kernel_ah));
	memcpy(kernel_ah.resp.dmac, test_dmac, 6);
	kernel_ah.resp.net_type = net_type;
}

/* The address vector an AH must carry for ah_attr(@dgid). */
static bool av_is(const struct kite_av *av, const uint8_t dgid[16],
		  uint8_t net_type)
{
	return !memcmp(av->dgid, dgid, 16) && !memcmp(av->dmac, test_dmac, 6) &&
	       av->sgid_index == 3 && av->net_type == net_type &&
	       av->hop_limit == 64 && av->traffic_class == 0x28 &&
	       av->sl == 5 && av->reserved == 0 &&
	       le32toh(av->flow_label) == 0x23456;
}

/* IPv4 and IPv6 AHs: the command, and the AV built from attr + answer. */
static int test_ah_create(void)
{
	struct fake *f = fake_new(IBV_QPT_UD, 4, 8);
	struct ibv_pd pd = { .context = &f->ctx->ibv_ctx.context };
	struct ibv_ah_attr a = ah_attr(gid_v4);
	struct ibv_ah *ah;
	int ok = 1;

	kernel_ah_answer(KITE_NET_IPV4);
	ah = kite_create_ah(&pd, &a);
	CHECK(ah != NULL);
	if (!ah) {
		fake_free(f);
		return 0;
	}
	CHECK(kernel_ah.creates == 1);
	CHECK(kernel_ah.resp_size == sizeof(struct ib_uverbs_create_ah_resp) +
				     sizeof(struct kite_create_ah_resp));
	CHECK(!memcmp(&kernel_ah.attr, &a, sizeof(a)));
	CHECK(ah->handle == 0x55);
	CHECK(av_is(&to_kite_ah(ah)->av, gid_v4, KITE_NET_IPV4));
	CHECK(kite_destroy_ah(ah) == 0 && kernel_ah.destroys == 1);

	a = ah_attr(gid_v6);
	kernel_ah_answer(KITE_NET_IPV6);
	ah = kite_create_ah(&pd, &a);
	CHECK(ah != NULL);
	if (ah) {
		CHECK(av_is(&to_kite_ah(ah)->av, gid_v6, KITE_NET_IPV6));
		/* A failed destroy keeps the AH (the caller may retry). */
		kernel_ah.destroy_err = EBUSY;
		CHECK(kite_destroy_ah(ah) == EBUSY);
		kernel_ah.destroy_err = 0;
		CHECK(kite_destroy_ah(ah) == 0 && kernel_ah.destroys == 1);
	}
	CHECK(kernel_ah.logs == 0);
	fake_free(f);
	return ok;
}

/* Refusals: before the kernel (attr), by the kernel, after (its answer). */
static int test_ah_errors(void)
{
	struct fake *f = fake_new(IBV_QPT_UD, 4, 8);
	struct ibv_pd pd = { .context = &f->ctx->ibv_ctx.context };
	struct ibv_ah_attr a;
	static const uint8_t zero[6];
	int ok = 1;

	/* No GRH on RoCE, or another port: EINVAL, no command. */
	kernel_ah_answer(KITE_NET_IPV4);
	a = ah_attr(gid_v4);
	a.is_global = 0;
	errno = 0;
	CHECK(kite_create_ah(&pd, &a) == NULL && errno == EINVAL);
	a = ah_attr(gid_v4);
	a.port_num = 2;
	errno = 0;
	CHECK(kite_create_ah(&pd, &a) == NULL && errno == EINVAL);
	a.port_num = 0;
	errno = 0;
	CHECK(kite_create_ah(&pd, &a) == NULL && errno == EINVAL);
	CHECK(kernel_ah.creates == 0);

	/* The kernel refuses (no route, bad GID index ...): its errno. */
	a = ah_attr(gid_v4);
	kernel_ah.err = ENETUNREACH;
	CHECK(kite_create_ah(&pd, &a) == NULL && errno == ENETUNREACH);
	CHECK(kernel_ah.creates == 1 && kernel_ah.destroys == 0);

	/* A bad answer: EPROTO, logged, the kernel AH destroyed again. */
	kernel_ah_answer(7);
	CHECK(kite_create_ah(&pd, &a) == NULL && errno == EPROTO);
	CHECK(kernel_ah.destroys == 1 && kernel_ah.logs == 1);
	kernel_ah_answer(KITE_NET_IPV4);
	memset(kernel_ah.resp.dmac, 0, 6);
	CHECK(kite_create_ah(&pd, &a) == NULL && errno == EPROTO);
	CHECK(kernel_ah.destroys == 1 && kernel_ah.logs == 1);

	/* Destination GID of the other network type than the source GID. */
	kernel_ah_answer(KITE_NET_IPV6);
	CHECK(kite_create_ah(&pd, &a) == NULL && errno == EINVAL);
	CHECK(kernel_ah.destroys == 1);
	a = ah_attr(gid_v6);
	kernel_ah_answer(KITE_NET_IPV4);
	CHECK(kite_create_ah(&pd, &a) == NULL && errno == EINVAL);
	CHECK(kernel_ah.destroys == 1);

	/* The builder alone. */
	{
		struct kite_av av;

		memset(&av, 0xee, sizeof(av));
		a = ah_attr(gid_v6);
		a.grh.flow_label = 0xfffff;
		CHECK(kite_av_build(&a, test_dmac, KITE_NET_IPV6, &av) == 0);
		CHECK(le32toh(av.flow_label) == 0xfffff && av.reserved == 0);
		CHECK(kite_av_build(&a, zero, KITE_NET_IPV6, &av) == EPROTO);
		CHECK(kite_av_build(&a, test_dmac, 2, &av) == EPROTO);
	}
	fake_free(f);
	return ok;
}

/* Make a UD AH for the tests below (through kite_create_ah). */
static struct ibv_ah *ud_ah(struct fake *f, const uint8_t dgid[16],
			    uint8_t net_type)
{
	static struct ibv_pd pd;
	struct ibv_ah_attr a = ah_attr(dgid);

	pd.context = &f->ctx->ibv_ctx.context;
	kernel_ah_answer(net_type);
	return kite_create_ah(&pd, &a);
}

/*
 * UD post_send: SEND with SGEs and SEND_IMM inline, the UD segment (the
 * AH's AV, remote QPN, Q_Key; a Q_Key with bit 31 set passed as is for
 * the device to replace by the QP's own), data after the 56 bytes.
 */
static int test_ud_post_send(void)
{
	struct fake *f = fake_new(IBV_QPT_UD, 8, 8);
	struct ibv_ah *ah4 = ud_ah(f, gid_v4, KITE_NET_IPV4);
	struct ibv_ah *ah6 = ud_ah(f, gid_v6, KITE_NET_IPV6);
	struct ibv_sge sg[4] = {
		{ .addr = 0x1000, .length = 1000, .lkey = 0x101 },
		{ .addr = 0x3000, .length = 24, .lkey = 0x202 },
		{ .addr = 0x5000, .length = 8, .lkey = 0x303 },
		{ .addr = 0x7000, .length = 1, .lkey = 0x404 },
	};
	struct ibv_sge in;
	struct ibv_send_wr wr[3], *bad = NULL;
	struct kite_sq_wqe_hdr *h;
	struct kite_wqe_ud *ud;
	struct kite_sge *s;
	int ok = 1, i;

	CHECK(ah4 && ah6);
	if (!ah4 || !ah6)
		return 0;
	for (i = 0; i < 72; i++)
		f->mem[i] = 0x80 + i;
	in = (struct ibv_sge){ .addr = (uintptr_t)f->mem, .length = 72 };

	wr[0] = send_wr(300, IBV_WR_SEND, sg, 4, IBV_SEND_SIGNALED);
	wr[0].wr.ud.ah = ah4;
	wr[0].wr.ud.remote_qpn = 0xabcdef;
	wr[0].wr.ud.remote_qkey = 0x11111111;
	wr[1] = send_wr(301, IBV_WR_SEND_WITH_IMM, &in, 1,
			IBV_SEND_INLINE | IBV_SEND_SOLICITED);
	wr[1].imm_data = htobe32(0xcafe0001);
	wr[1].wr.ud.ah = ah6;
	wr[1].wr.ud.remote_qpn = 1;
	wr[1].wr.ud.remote_qkey = 0x80000001;	/* "use the QP's Q_Key" */
	wr[2] = send_wr(302, IBV_WR_SEND, sg, 0, 0);	/* zero bytes */
	wr[2].wr.ud.ah = ah4;
	wr[2].wr.ud.remote_qpn = 0xffffff;
	wr[2].wr.ud.remote_qkey = 0x80010000;
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];

	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == 0);
	CHECK(db_read(f, KITE_DB_SQ) == kite_db_make(QPN, 0, 3));

	h = (void *)sq_wqe(f, 0);
	CHECK(h->opcode == KITE_WQE_SEND && h->flags == KITE_WQE_F_SIGNALED);
	CHECK(h->num_sge == 4 && h->inline_len == 0);
	ud = (void *)(h + 1);
	CHECK(!memcmp(&ud->av, &to_kite_ah(ah4)->av, sizeof(ud->av)));
	CHECK(av_is(&ud->av, gid_v4, KITE_NET_IPV4));
	CHECK(le32toh(ud->remote_qpn) == 0xabcdef);
	CHECK(le32toh(ud->remote_qkey) == 0x11111111);
	/* SGEs at byte 56 of the WQE (hardware.rst). */
	s = (void *)((uint8_t *)h + 56);
	CHECK((void *)(ud + 1) == (void *)s);
	CHECK(le64toh(s[0].addr) == 0x1000 && le32toh(s[0].length) == 1000 &&
	      le32toh(s[0].lkey) == 0x101);
	CHECK(le64toh(s[3].addr) == 0x7000 && le32toh(s[3].lkey) == 0x404);

	h = (void *)sq_wqe(f, 1);
	CHECK(h->opcode == KITE_WQE_SEND_IMM);
	CHECK(h->flags == (KITE_WQE_F_INLINE | KITE_WQE_F_SOLICITED));
	CHECK(h->num_sge == 0 && le16toh(h->inline_len) == 72);
	CHECK(memcmp(&h->imm_data, &wr[1].imm_data, 4) == 0);
	ud = (void *)(h + 1);
	CHECK(av_is(&ud->av, gid_v6, KITE_NET_IPV6));
	CHECK(le32toh(ud->remote_qpn) == 1);
	CHECK(le32toh(ud->remote_qkey) == 0x80000001);
	CHECK(memcmp((uint8_t *)h + 56, f->mem, 72) == 0);

	h = (void *)sq_wqe(f, 2);
	CHECK(h->opcode == KITE_WQE_SEND && h->num_sge == 0 && h->flags == 0);
	ud = (void *)(h + 1);
	CHECK(le32toh(ud->remote_qpn) == 0xffffff);
	CHECK(le32toh(ud->remote_qkey) == 0x80010000);

	/* The send completions: slot 2 retires 0..2 (0 signaled). */
	{
		struct ibv_wc wc[4];

		dev_cqe(f, QPN, 0, KITE_CQE_SEND, KITE_CQE_SUCCESS, 1033, 0, 0);
		CHECK(kite_poll_cq(&f->cq->vcq.cq, 4, wc) == 1);
		CHECK(wc[0].wr_id == 300 && wc[0].opcode == IBV_WC_SEND);
		CHECK(wc[0].wc_flags == 0 && wc[0].byte_len == 1033);
	}
	CHECK(kite_destroy_ah(ah4) == 0 && kite_destroy_ah(ah6) == 0);
	fake_free(f);
	return ok;
}

/* UD refuses every opcode but the sends, a missing AH, a 25-bit QPN. */
static int test_ud_post_errors(void)
{
	static const enum ibv_wr_opcode bad_ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV,
		IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV, IBV_WR_TSO,
	};
	struct fake *f = fake_new(IBV_QPT_UD, 4, 8);
	struct ibv_ah *ah = ud_ah(f, gid_v4, KITE_NET_IPV4);
	struct ibv_sge sg = { .addr = 0x1000, .length = 8, .lkey = 1 };
	struct ibv_send_wr wr[2], *bad = NULL;
	unsigned int i;
	int ok = 1;

	CHECK(ah != NULL);
	if (!ah)
		return 0;
	/* A good SEND, then an RDMA WRITE: the SEND is posted, not the WRITE. */
	wr[0] = send_wr(1, IBV_WR_SEND, &sg, 1, 0);
	wr[0].wr.ud.ah = ah;
	wr[0].wr.ud.remote_qpn = 2;
	wr[1] = send_wr(2, IBV_WR_RDMA_WRITE, &sg, 1, IBV_SEND_SIGNALED);
	wr[1].wr.rdma.remote_addr = 0x9000;
	wr[1].wr.rdma.rkey = 3;
	wr[0].next = &wr[1];
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EINVAL &&
	      bad == &wr[1]);
	CHECK(f->qp->sq.pi == 1);
	CHECK(db_read(f, KITE_DB_SQ) == kite_db_make(QPN, 0, 1));

	db_clear(f);
	for (i = 0; i < sizeof(bad_ops) / sizeof(bad_ops[0]); i++) {
		wr[0] = send_wr(3, bad_ops[i], &sg, 1, 0);
		wr[0].wr.ud.ah = ah;
		bad = NULL;
		CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EINVAL &&
		      bad == &wr[0]);
	}
	wr[0] = send_wr(4, IBV_WR_SEND, &sg, 1, 0);
	wr[0].wr.ud.ah = NULL;
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EINVAL &&
	      bad == &wr[0]);
	wr[0].wr.ud.ah = ah;
	wr[0].wr.ud.remote_qpn = 0x1000000;
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EINVAL &&
	      bad == &wr[0]);
	/* Too many SGEs (4) and too much inline (72) on UD as on RC. */
	wr[0].wr.ud.remote_qpn = 2;
	wr[0].num_sge = 5;
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EINVAL);
	wr[0].num_sge = 1;
	sg.addr = (uintptr_t)f->mem;
	sg.length = 73;
	wr[0].send_flags = IBV_SEND_INLINE;
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EINVAL);
	CHECK(f->qp->sq.pi == 1 && db_read(f, KITE_DB_SQ) == 0);
	CHECK(kite_destroy_ah(ah) == 0);
	fake_free(f);
	return ok;
}

/* The device side of a UD receive CQE (src_qp, net_hdr, smac), flags last. */
static void dev_cqe_ud(struct fake *f, uint16_t wqe_idx, uint8_t status,
		       uint32_t byte_len, uint8_t flags, uint32_t imm,
		       uint32_t src_qp, uint8_t net_hdr)
{
	struct kite_cqe *cqe = (struct kite_cqe *)f->cq->ring.buf +
			       kite_ring_slot(f->dev_cq_pi, f->cq->log_depth);

	memset(cqe, 0, offsetof(struct kite_cqe, flags));
	cqe->qpn = htole32(QPN);
	cqe->wqe_idx = htole16(wqe_idx);
	cqe->opcode = KITE_CQE_RECV;
	cqe->status = status;
	cqe->byte_len = htole32(byte_len);
	cqe->imm_data = imm;
	cqe->src_qp = htole32(src_qp);
	cqe->net_hdr = net_hdr;
	memcpy(cqe->smac, test_dmac, 6);
	cqe->flags = flags | kite_ring_phase(f->dev_cq_pi, f->cq->log_depth);
	f->dev_cq_pi++;
}

/*
 * UD receives: GRH flag, src_qp, pkey_index, imm; sl 0 whatever network
 * header the CQE names (RoCEv2 carries no service level).
 */
static int test_ud_poll(void)
{
	struct fake *f = fake_new(IBV_QPT_UD, 4, 8);
	struct ibv_sge sg = { .addr = 0xa000, .length = 40 + 1024, .lkey = 7 };
	struct ibv_recv_wr wr[3] = {}, *bad = NULL;
	struct ibv_wc wc[4];
	int ok = 1, i;

	for (i = 0; i < 3; i++) {
		wr[i].wr_id = 500 + i;
		wr[i].sg_list = &sg;
		wr[i].num_sge = 1;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	CHECK(kite_post_recv(&f->qp->vqp.qp, wr, &bad) == 0);
	CHECK(db_read(f, KITE_DB_RQ) == kite_db_make(QPN, 0, 3));

	dev_cqe_ud(f, 0, KITE_CQE_SUCCESS, 40 + 100,
		   KITE_CQE_F_GRH | KITE_CQE_F_IMM, htobe32(0x0a0b0c0d),
		   0x345678, KITE_CQE_NET_IPV4);
	dev_cqe_ud(f, 1, KITE_CQE_SUCCESS, 40 + 1024, KITE_CQE_F_GRH, 0, 0x11,
		   KITE_CQE_NET_IPV6);
	dev_cqe_ud(f, 2, KITE_CQE_WR_FLUSH_ERR, 0, 0, 0, 0, 0);
	memset(wc, 0xa5, sizeof(wc));
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 4, wc) == 3);
	CHECK(wc[0].wr_id == 500 && wc[0].status == IBV_WC_SUCCESS);
	CHECK(wc[0].opcode == IBV_WC_RECV && wc[0].byte_len == 140);
	CHECK(wc[0].qp_num == QPN && wc[0].src_qp == 0x345678);
	CHECK(wc[0].wc_flags == (IBV_WC_GRH | IBV_WC_WITH_IMM));
	CHECK(wc[0].imm_data == htobe32(0x0a0b0c0d));
	CHECK(wc[0].sl == 0 && wc[0].pkey_index == 0);
	CHECK(wc[0].slid == 0 && wc[0].dlid_path_bits == 0);
	CHECK(wc[1].wr_id == 501 && wc[1].byte_len == 1064);
	CHECK(wc[1].wc_flags == IBV_WC_GRH && wc[1].imm_data == 0);
	CHECK(wc[1].src_qp == 0x11 && wc[1].sl == 0);
	CHECK(wc[2].wr_id == 502 && wc[2].status == IBV_WC_WR_FLUSH_ERR);
	CHECK(wc[2].wc_flags == 0);
	CHECK(f->qp->rq.ci == 3);
	fake_free(f);
	return ok;
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
	run("ah_create", test_ah_create);
	run("ah_errors", test_ah_errors);
	run("ud_post_send", test_ud_post_send);
	run("ud_post_errors", test_ud_post_errors);
	run("ud_poll", test_ud_poll);
	run("stress_one_thread", test_stress_one_thread);
	run("stress_two_threads", test_stress_two_threads);
	printf("kite-provider-selftest: %d passed, %d failed\n", passed,
	       failed);
	return failed ? 1 : 0;
}
