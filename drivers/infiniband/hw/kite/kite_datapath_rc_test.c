// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite kite_datapath, RC cases: two RC QPs of one device in
 * loopback move data with SEND (+imm), RDMA WRITE (+imm), RDMA READ,
 * CMP_SWP and FETCH_ADD, every byte checked; error completions (bad lkey,
 * remote access, flush in ERR through the completion EQ interrupt, then
 * ib_drain_qp()), CQ resize under traffic, many WQEs, posting errors.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/string.h>

#include "kite_datapath_test.h"

void kite_test_dp_send(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	u32 half = KITE_DT_MSG_LEN / 2;
	struct ib_sge sge[2];
	struct ib_send_wr wr = {};
	struct ib_wc wc[2], *s, *r;
	u8 *src, *dst;
	int i;

	kite_dt_setup(test);
	src = kite_dt_va(dt, KITE_DT_A_SRC);
	dst = kite_dt_va(dt, KITE_DT_B_BUF);
	for (i = 0; i < KITE_DT_MSG_LEN; i++)
		src[i] = i * 7 + 1;
	memset(dst, 0, PAGE_SIZE);

	KUNIT_ASSERT_EQ(test, kite_dt_post_recv(dt, dt->b, 2, KITE_DT_B_BUF,
						PAGE_SIZE), 0);
	sge[0] = kite_dt_sge(dt, KITE_DT_A_SRC, half);
	sge[1] = kite_dt_sge(dt, KITE_DT_A_SRC, KITE_DT_MSG_LEN - half);
	sge[1].addr += half;
	wr.wr_id = 1;
	wr.opcode = IB_WR_SEND_WITH_IMM;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.ex.imm_data = cpu_to_be32(KITE_DT_IMM);
	wr.sg_list = sge;
	wr.num_sge = 2;
	KUNIT_ASSERT_EQ(test, ib_post_send(dt->a, &wr, NULL), 0);

	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 2), 2);
	s = kite_dt_find_one(test, wc, 2, 1);
	r = kite_dt_find_one(test, wc, 2, 2);
	KUNIT_EXPECT_EQ(test, s->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, s->opcode, IB_WC_SEND);
	KUNIT_EXPECT_PTR_EQ(test, s->qp, dt->a);
	KUNIT_EXPECT_EQ(test, r->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, r->opcode, IB_WC_RECV);
	KUNIT_EXPECT_PTR_EQ(test, r->qp, dt->b);
	KUNIT_EXPECT_EQ(test, r->byte_len, KITE_DT_MSG_LEN);
	KUNIT_EXPECT_TRUE(test, r->wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(r->ex.imm_data), KITE_DT_IMM);
	KUNIT_EXPECT_EQ(test, memcmp(src, dst, KITE_DT_MSG_LEN), 0);
	KUNIT_EXPECT_EQ(test, dst[KITE_DT_MSG_LEN], 0);

	/* Inline SEND: the bytes travel in the WQE. */
	memset(dst, 0, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, kite_dt_post_recv(dt, dt->b, 4, KITE_DT_B_BUF,
						PAGE_SIZE), 0);
	sge[0] = kite_dt_sge(dt, KITE_DT_A_SRC, KITE_DT_INLINE);
	sge[0].addr = (uintptr_t)src;	/* inline: a kernel virtual address */
	sge[0].lkey = 0;
	wr.wr_id = 3;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE;
	wr.num_sge = 1;
	KUNIT_ASSERT_EQ(test, ib_post_send(dt->a, &wr, NULL), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 2), 2);
	r = kite_dt_find_one(test, wc, 2, 4);
	KUNIT_EXPECT_EQ(test, r->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, r->byte_len, KITE_DT_INLINE);
	KUNIT_EXPECT_FALSE(test, r->wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, memcmp(src, dst, KITE_DT_INLINE), 0);
}

/*
 * RDMA WRITE: three unsignaled WRITEs and a signaled one in one list (one
 * doorbell); the one completion retires all four. Then WRITE_WITH_IMM,
 * which consumes a receive WQE.
 */
void kite_test_dp_write(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	u32 part = KITE_DT_MSG_LEN / 4;
	struct ib_rdma_wr wr[4] = {};
	struct ib_sge sge[4];
	struct ib_wc wc[2], *r;
	struct kite_qp *kqp;
	u8 *src, *dst;
	int i;

	kite_dt_setup(test);
	kqp = to_kqp(dt->a);
	src = kite_dt_va(dt, KITE_DT_A_SRC);
	dst = kite_dt_va(dt, KITE_DT_B_BUF);
	for (i = 0; i < KITE_DT_MSG_LEN; i++)
		src[i] = i ^ KITE_DT_PATTERN;
	memset(dst, 0, PAGE_SIZE);

	for (i = 0; i < ARRAY_SIZE(wr); i++) {
		sge[i] = kite_dt_sge(dt, KITE_DT_A_SRC, part);
		sge[i].addr += i * part;
		wr[i].wr.wr_id = 10 + i;
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].wr.sg_list = &sge[i];
		wr[i].wr.num_sge = 1;
		wr[i].wr.next = i + 1 < ARRAY_SIZE(wr) ? &wr[i + 1].wr : NULL;
		wr[i].remote_addr = kite_dt_iova(dt, KITE_DT_B_BUF) + i * part;
		wr[i].rkey = dt->key;
	}
	wr[ARRAY_SIZE(wr) - 1].wr.send_flags = IB_SEND_SIGNALED;
	KUNIT_ASSERT_EQ(test, ib_post_send(dt->a, &wr[0].wr, NULL), 0);
	KUNIT_EXPECT_EQ(test, kqp->sq_pi, ARRAY_SIZE(wr));

	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc[0].opcode, IB_WC_RDMA_WRITE);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 10 + ARRAY_SIZE(wr) - 1);
	/* The signaled completion retired the unsignaled WQEs before it. */
	KUNIT_EXPECT_EQ(test, kqp->sq_ci, ARRAY_SIZE(wr));
	KUNIT_EXPECT_EQ(test, memcmp(src, dst, 4 * part), 0);
	/* Nothing else completed. */
	KUNIT_EXPECT_EQ(test, ib_poll_cq(dt->cq, 1, wc), 0);

	/* WRITE_WITH_IMM: data lands, the receive WQE gets the immediate. */
	memset(dst, 0, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, kite_dt_post_recv(dt, dt->b, 21,
						KITE_DT_ATOMIC, 0), 0);
	sge[0] = kite_dt_sge(dt, KITE_DT_A_SRC, KITE_DT_MSG_LEN);
	wr[0].wr.wr_id = 20;
	wr[0].wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	wr[0].wr.send_flags = IB_SEND_SIGNALED;
	wr[0].wr.ex.imm_data = cpu_to_be32(KITE_DT_IMM);
	wr[0].wr.sg_list = &sge[0];
	wr[0].wr.next = NULL;
	wr[0].remote_addr = kite_dt_iova(dt, KITE_DT_B_BUF);
	KUNIT_ASSERT_EQ(test, ib_post_send(dt->a, &wr[0].wr, NULL), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 2), 2);
	KUNIT_EXPECT_EQ(test, kite_dt_find_one(test, wc, 2, 20)->status,
			IB_WC_SUCCESS);
	r = kite_dt_find_one(test, wc, 2, 21);
	KUNIT_EXPECT_EQ(test, r->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, r->opcode, IB_WC_RECV_RDMA_WITH_IMM);
	KUNIT_EXPECT_EQ(test, r->byte_len, KITE_DT_MSG_LEN);
	KUNIT_EXPECT_TRUE(test, r->wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(r->ex.imm_data), KITE_DT_IMM);
	KUNIT_EXPECT_EQ(test, memcmp(src, dst, KITE_DT_MSG_LEN), 0);
}

/* RDMA READ of 1500 bytes (two response packets) from B's region. */
void kite_test_dp_read(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct ib_rdma_wr wr = {};
	struct ib_sge sge;
	struct ib_wc wc;
	u8 *src, *dst;
	int i;

	kite_dt_setup(test);
	src = kite_dt_va(dt, KITE_DT_B_BUF);
	dst = kite_dt_va(dt, KITE_DT_A_DST);
	for (i = 0; i < KITE_DT_MSG_LEN; i++)
		src[i] = 255 - (i & 0xff);
	memset(dst, 0, PAGE_SIZE);

	sge = kite_dt_sge(dt, KITE_DT_A_DST, KITE_DT_MSG_LEN);
	wr.wr.wr_id = 30;
	wr.wr.opcode = IB_WR_RDMA_READ;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = kite_dt_iova(dt, KITE_DT_B_BUF);
	wr.rkey = dt->key;
	KUNIT_ASSERT_EQ(test, ib_post_send(dt->a, &wr.wr, NULL), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 30);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, memcmp(src, dst, KITE_DT_MSG_LEN), 0);
	KUNIT_EXPECT_EQ(test, dst[KITE_DT_MSG_LEN], 0);
}

/* One atomic on B's 8-byte word; the original value lands in A_DST. */
static void kite_dt_atomic(struct kunit *test, struct kite_dt *dt,
			   enum ib_wr_opcode op, u64 compare_add, u64 swap,
			   u64 wr_id)
{
	struct ib_atomic_wr wr = {};
	struct ib_sge sge;
	struct ib_wc wc;

	sge = kite_dt_sge(dt, KITE_DT_A_DST, sizeof(u64));
	wr.wr.wr_id = wr_id;
	wr.wr.opcode = op;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = kite_dt_iova(dt, KITE_DT_ATOMIC);
	wr.rkey = dt->key;
	wr.compare_add = compare_add;
	wr.swap = swap;
	KUNIT_ASSERT_EQ(test, ib_post_send(dt->a, &wr.wr, NULL), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, wr_id);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, op == IB_WR_ATOMIC_CMP_AND_SWP ?
			IB_WC_COMP_SWAP : IB_WC_FETCH_ADD);
}

/* CMP_SWP (a miss, then a hit) and FETCH_ADD on one 64-bit word. */
void kite_test_dp_atomics(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	u64 *target, *orig;

	kite_dt_setup(test);
	KUNIT_ASSERT_TRUE(test, dt->kib->kdev->caps.cap_flags & KITE_DEV_CAP_ATOMIC);
	target = kite_dt_va(dt, KITE_DT_ATOMIC);
	orig = kite_dt_va(dt, KITE_DT_A_DST);

	/* Atomics operate on the responder's memory in host byte order. */
	*target = KITE_DT_SWAP_OLD;
	*orig = 0;
	kite_dt_atomic(test, dt, IB_WR_ATOMIC_CMP_AND_SWP, KITE_DT_SWAP_NEW,
		       KITE_DT_ADD, 40);
	KUNIT_EXPECT_EQ(test, *orig, KITE_DT_SWAP_OLD);
	KUNIT_EXPECT_EQ(test, *target, KITE_DT_SWAP_OLD);

	kite_dt_atomic(test, dt, IB_WR_ATOMIC_CMP_AND_SWP, KITE_DT_SWAP_OLD,
		       KITE_DT_SWAP_NEW, 41);
	KUNIT_EXPECT_EQ(test, *orig, KITE_DT_SWAP_OLD);
	KUNIT_EXPECT_EQ(test, *target, KITE_DT_SWAP_NEW);

	kite_dt_atomic(test, dt, IB_WR_ATOMIC_FETCH_AND_ADD, KITE_DT_ADD, 0,
		       42);
	KUNIT_EXPECT_EQ(test, *orig, KITE_DT_SWAP_NEW);
	KUNIT_EXPECT_EQ(test, *target, KITE_DT_SWAP_NEW + KITE_DT_ADD);
}

/* A SEND whose lkey names no MR completes with a local protection error. */
void kite_test_dp_bad_lkey(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	struct ib_wc wc;

	kite_dt_setup(test);
	KUNIT_ASSERT_EQ(test, kite_dt_post_recv(dt, dt->b, 51, KITE_DT_B_BUF,
						PAGE_SIZE), 0);
	sge = kite_dt_sge(dt, KITE_DT_A_SRC, KITE_DT_MSG_LEN);
	/* Same index, another variant: a stale key. */
	sge.lkey = dt->key ^ KITE_KEY_VARIANT_MASK;
	wr.wr_id = 50;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	KUNIT_ASSERT_EQ(test, ib_post_send(dt->a, &wr, NULL), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 50);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, dt->a);
	/* Nothing reached B: its receive WQE is still posted. */
	KUNIT_EXPECT_EQ(test, ib_poll_cq(dt->cq, 1, &wc), 0);
}

/*
 * QP A to ERR: a receive posted before and a send posted after complete
 * with IB_WC_WR_FLUSH_ERR, in order per queue. The completions are
 * announced through the completion EQ: the CQ is armed and the test waits
 * for its comp_handler. Then B is drained with ib_drain_qp(), which moves
 * it to ERR and waits for the flush of a WR of its own.
 */
void kite_test_dp_flush(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct ib_send_wr wr = {};
	struct ib_wc wc[2], *s, *r;
	unsigned long left;
	struct ib_sge sge;

	kite_dt_setup(test);
	KUNIT_ASSERT_EQ(test, kite_dt_post_recv(dt, dt->a, 61, KITE_DT_A_DST,
						PAGE_SIZE), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(dt->a, &attr, IB_QP_STATE), 0);

	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(dt->cq, IB_CQ_NEXT_COMP), 0);
	sge = kite_dt_sge(dt, KITE_DT_A_SRC, KITE_DT_MSG_LEN);
	wr.wr_id = 60;
	wr.opcode = IB_WR_SEND;
	/* Flushed WQEs complete whether signaled or not. */
	wr.sg_list = &sge;
	wr.num_sge = 1;
	KUNIT_ASSERT_EQ(test, ib_post_send(dt->a, &wr, NULL), 0);
	left = wait_for_completion_timeout(&dt->comp,
					   msecs_to_jiffies(KITE_DT_WAIT_MS));
	KUNIT_EXPECT_NE(test, left, 0);
	KUNIT_EXPECT_GE(test, atomic_read(&dt->comp_events), 1);

	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 2), 2);
	s = kite_dt_find_one(test, wc, 2, 60);
	r = kite_dt_find_one(test, wc, 2, 61);
	KUNIT_EXPECT_EQ(test, s->status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, r->status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, r->opcode, IB_WC_RECV);
	/* Armed again with nothing pending: no missed event to report. */
	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(dt->cq, IB_CQ_NEXT_COMP |
					       IB_CQ_REPORT_MISSED_EVENTS), 0);

	/*
	 * ib_drain_qp() on B needs a CQ with a poll context; only once the
	 * flush above worked, since the drain itself waits without a limit.
	 */
	if (!s || s->status != IB_WC_WR_FLUSH_ERR)
		return;
	dt->cq2 = ib_alloc_cq(&dt->kib->ibdev, NULL, KITE_DT_CQE, 0,
			      IB_POLL_WORKQUEUE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dt->cq2));
	ib_destroy_qp(dt->b);
	dt->b = kite_dt_create_qp(test, dt, dt->cq2);
	kite_dt_connect(test, dt, dt->b, dt->a, KITE_DT_PSN_B, KITE_DT_PSN_A);
	ib_drain_qp(dt->b);
	KUNIT_EXPECT_EQ(test, to_kqp(dt->b)->state, IB_QPS_ERR);
}

/*
 * Many SENDs of sizes 1..KITE_DT_SLOT bytes in lists of KITE_DT_BATCH, only
 * the last of each list signaled: the SQ, RQ and CQ rings wrap many
 * times, so phase, retiring, slot reuse and the consumer index updates
 * all take part. Every byte is checked.
 */
#define KITE_DT_BATCH		8
#define KITE_DT_SLOT		(PAGE_SIZE / KITE_DT_BATCH)
#define KITE_DT_ROUNDS		64

void kite_test_dp_many(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct ib_send_wr wr[KITE_DT_BATCH] = {};
	struct ib_sge sge[KITE_DT_BATCH];
	struct ib_wc wc[KITE_DT_BATCH + 1];
	struct ib_sge rsge;
	struct ib_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 };
	u8 *src, *dst;
	u32 len[KITE_DT_BATCH];
	int round, i, j, n;

	kite_dt_setup(test);
	src = kite_dt_va(dt, KITE_DT_A_SRC);
	dst = kite_dt_va(dt, KITE_DT_B_BUF);
	for (round = 0; round < KITE_DT_ROUNDS; round++) {
		for (i = 0; i < KITE_DT_BATCH; i++) {
			u32 off = i * KITE_DT_SLOT;

			len[i] = 1 + (round * 37 + i * 101) % KITE_DT_SLOT;
			for (j = 0; j < len[i]; j++)
				src[off + j] = round + i + j;
			memset(dst + off, 0, KITE_DT_SLOT);
			rsge = kite_dt_sge(dt, KITE_DT_B_BUF, KITE_DT_SLOT);
			rsge.addr += off;
			rwr.wr_id = 1000 + i;
			KUNIT_ASSERT_EQ(test, ib_post_recv(dt->b, &rwr, NULL), 0);
			sge[i] = kite_dt_sge(dt, KITE_DT_A_SRC, len[i]);
			sge[i].addr += off;
			wr[i].wr_id = round * KITE_DT_BATCH + i;
			wr[i].opcode = IB_WR_SEND;
			wr[i].send_flags = i == KITE_DT_BATCH - 1 ?
					   IB_SEND_SIGNALED : 0;
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
			wr[i].next = i + 1 < KITE_DT_BATCH ? &wr[i + 1] : NULL;
		}
		KUNIT_ASSERT_EQ(test, ib_post_send(dt->a, wr, NULL), 0);
		n = kite_dt_poll(dt->cq, wc, KITE_DT_BATCH + 1);
		KUNIT_ASSERT_EQ_MSG(test, n, KITE_DT_BATCH + 1, "round %d",
				    round);
		for (i = 0; i < n; i++) {
			struct ib_wc *w = &wc[i];

			KUNIT_ASSERT_EQ_MSG(test, w->status, IB_WC_SUCCESS,
					    "round %d wr_id %llu", round,
					    w->wr_id);
			if (w->opcode == IB_WC_SEND) {
				KUNIT_EXPECT_EQ(test, w->wr_id,
						(u64)round * KITE_DT_BATCH +
						KITE_DT_BATCH - 1);
				continue;
			}
			j = w->wr_id - 1000;
			KUNIT_ASSERT_TRUE(test, j >= 0 && j < KITE_DT_BATCH);
			KUNIT_EXPECT_EQ(test, w->byte_len, len[j]);
			KUNIT_EXPECT_EQ_MSG(test, memcmp(src + j * KITE_DT_SLOT,
							 dst + j * KITE_DT_SLOT,
							 len[j]), 0,
					    "round %d message %d", round, j);
		}
	}
	KUNIT_EXPECT_EQ(test, to_kqp(dt->a)->sq_ci, to_kqp(dt->a)->sq_pi);
	KUNIT_EXPECT_EQ(test, to_kqp(dt->b)->rq_ci, to_kqp(dt->b)->rq_pi);
}

/*
 * An RDMA WRITE with an rkey that names no MR: B's responder NAKs it and
 * reports IB_EVENT_QP_ACCESS_ERR (async EQ, QP event handler); A
 * completes with IB_WC_REM_ACCESS_ERR. B's memory is untouched.
 */
void kite_test_dp_rem_access(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct ib_rdma_wr wr = {};
	struct ib_sge sge;
	struct ib_wc wc;
	u8 *dst;

	kite_dt_setup(test);
	dst = kite_dt_va(dt, KITE_DT_B_BUF);
	memset(dst, 0, PAGE_SIZE);
	memset(kite_dt_va(dt, KITE_DT_A_SRC), KITE_DT_PATTERN, PAGE_SIZE);
	sge = kite_dt_sge(dt, KITE_DT_A_SRC, KITE_DT_MSG_LEN);
	wr.wr.wr_id = 80;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = kite_dt_iova(dt, KITE_DT_B_BUF);
	wr.rkey = dt->key ^ KITE_KEY_VARIANT_MASK;
	KUNIT_ASSERT_EQ(test, ib_post_send(dt->a, &wr.wr, NULL), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 80);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_PTR_EQ(test, kite_dt_wait_event(dt, IB_EVENT_QP_ACCESS_ERR),
			    dt->b);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst, 0, PAGE_SIZE));
}

/* Wait (without polling) until the device has written @n CQEs in all. */
static bool kite_dt_wait_cq_pi(struct kite_dt *dt, u32 n)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(KITE_DT_WAIT_MS);
	struct kite_cq_info info;

	do {
		if (kite_test_query_cq(dt->cq, &info))
			return false;
		if (info.pi == n)
			return true;
		usleep_range(200, 1000);
	} while (!time_after(jiffies, deadline));
	return false;
}

static void kite_dt_post_sends(struct kunit *test, struct kite_dt *dt,
			       u64 wr_id, int n)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	int i;

	sge = kite_dt_sge(dt, KITE_DT_A_SRC, KITE_DT_INLINE);
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, kite_dt_post_recv(dt, dt->b,
							wr_id + 2 * i + 1,
							KITE_DT_B_BUF,
							PAGE_SIZE), 0);
		wr.wr_id = wr_id + 2 * i;
		KUNIT_ASSERT_EQ(test, ib_post_send(dt->a, &wr, NULL), 0);
	}
}

/*
 * Resize a kernel CQ that holds unpolled CQEs: they are polled from the
 * old ring first, then the new ring's, none lost; a second resize before
 * the old ring is drained gives -EBUSY.
 */
void kite_test_dp_cq_resize(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct ib_wc wc[KITE_DT_BATCH];
	bool seen[KITE_DT_BATCH] = {};
	int i, n;

	kite_dt_setup(test);
	kite_dt_post_sends(test, dt, 0, 2);
	KUNIT_ASSERT_TRUE(test, kite_dt_wait_cq_pi(dt, 4));
	KUNIT_ASSERT_EQ(test, ib_resize_cq(dt->cq, 2 * KITE_DT_CQE), 0);
	KUNIT_EXPECT_EQ(test, dt->cq->cqe, 2 * KITE_DT_CQE);
	KUNIT_EXPECT_EQ(test, ib_resize_cq(dt->cq, KITE_DT_CQE), -EBUSY);
	kite_dt_post_sends(test, dt, 4, 2);

	n = kite_dt_poll(dt->cq, wc, KITE_DT_BATCH);
	KUNIT_EXPECT_EQ(test, n, 8);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, wc[i].status, IB_WC_SUCCESS);
		KUNIT_ASSERT_LT(test, wc[i].wr_id, KITE_DT_BATCH);
		KUNIT_EXPECT_FALSE(test, seen[wc[i].wr_id]);
		seen[wc[i].wr_id] = true;
	}
	/* Drained: resizing works again, and so does the CQ. */
	KUNIT_EXPECT_EQ(test, ib_resize_cq(dt->cq, KITE_DT_CQE), 0);
	kite_dt_post_sends(test, dt, 0, 1);
	KUNIT_EXPECT_EQ(test, kite_dt_poll(dt->cq, wc, 2), 2);
}

/* Requests the QP cannot execute are refused at post time. */
void kite_test_dp_post_errors(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr wr[2] = {};
	struct ib_sge sge[KITE_DT_SGE + 1];
	struct kite_ib_dev *kib;
	struct ib_wc wc;
	int i;

	kite_dt_setup(test);
	kib = dt->kib;
	for (i = 0; i < ARRAY_SIZE(sge); i++)
		sge[i] = kite_dt_sge(dt, KITE_DT_A_SRC, 1);

	/* The second WR has too many SGEs: the first is posted. */
	KUNIT_ASSERT_EQ(test, kite_dt_post_recv(dt, dt->b, 71, KITE_DT_B_BUF,
						PAGE_SIZE), 0);
	wr[0].wr_id = 70;
	wr[0].opcode = IB_WR_SEND;
	wr[0].send_flags = IB_SEND_SIGNALED;
	wr[0].sg_list = sge;
	wr[0].num_sge = 1;
	wr[0].next = &wr[1];
	wr[1] = wr[0];
	wr[1].next = NULL;
	wr[1].num_sge = to_kqp(dt->a)->max_send_sge + 1;
	KUNIT_EXPECT_EQ(test, ib_post_send(dt->a, wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&wr[1]);
	KUNIT_EXPECT_EQ(test, to_kqp(dt->a)->sq_pi, 1);

	/* Unsupported opcode; inline data beyond the QP's capacity. */
	wr[1].num_sge = 1;
	wr[1].opcode = IB_WR_MASKED_ATOMIC_CMP_AND_SWP;
	KUNIT_EXPECT_EQ(test, ib_post_send(dt->a, &wr[1], &bad), -EINVAL);
	wr[1].opcode = IB_WR_SEND;
	wr[1].send_flags = IB_SEND_INLINE;
	sge[0].length = kib->kdev->caps.max_inline + 1;
	KUNIT_EXPECT_EQ(test, ib_post_send(dt->a, &wr[1], &bad), -EINVAL);
	KUNIT_EXPECT_EQ(test, to_kqp(dt->a)->sq_pi, 1);

	/* The one posted WR completes. */
	KUNIT_EXPECT_EQ(test, kite_dt_poll(dt->cq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(test, kite_dt_poll(dt->cq, &wc, 1), 1);
}

/*
 * Engine-independent cases: a fake kernel QP and CQ (driver structures
 * with coherent rings, unknown to the device) check the WQE layout
 * post_send/post_recv write and how poll_cq turns CQEs into ib_wc. Their
 * doorbells name an object the device does not have: it ignores them and
 * counts each in db_rejected, which tells how many doorbells were rung.
 */
