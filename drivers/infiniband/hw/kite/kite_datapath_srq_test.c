// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases of the suite kite_datapath for shared receive queues: an RC
 * QP receiving through a kernel SRQ (data, wr_ids through the SRQ's
 * slots, the limit event), and a QP on an SRQ moved to ERR (the last-WQE
 * event, the SRQ's other WQEs kept for the next QP, no flush of them).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/string.h>

#include "kite_datapath_test.h"

#define KITE_DT_SRQ_WR		8
#define KITE_DT_SRQ_LIMIT	2
#define KITE_DT_SRQ_RECVS	3
#define KITE_DT_SRQ_ID		700

/* An SRQ of KITE_DT_SRQ_WR WQEs whose events reach kite_dt_qp_event(). */
static struct ib_srq *kite_dt_create_srq(struct kunit *test,
					 struct kite_dt *dt)
{
	struct ib_srq_init_attr init = {
		.event_handler = kite_dt_qp_event,
		.srq_context = dt,
		.srq_type = IB_SRQT_BASIC,
		.attr = {
			.max_wr = KITE_DT_SRQ_WR,
			.max_sge = 1,
		},
	};
	struct ib_srq *srq;

	srq = ib_create_srq(dt->pd, &init);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(srq), "SRQ: %ld", PTR_ERR(srq));
	KUNIT_EXPECT_GE(test, init.attr.max_wr, KITE_DT_SRQ_WR);
	dt->srq = srq;
	return srq;
}

/* An RC QP of @dt's CQ that receives from @srq. */
static struct ib_qp *kite_dt_create_srq_qp(struct kunit *test,
					   struct kite_dt *dt,
					   struct ib_srq *srq)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.send_cq = dt->cq,
		.recv_cq = dt->cq,
		.srq = srq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.event_handler = kite_dt_qp_event,
		.qp_context = dt,
		.cap = {
			.max_send_wr = KITE_DT_WR,
			.max_send_sge = KITE_DT_SGE,
		},
	};
	struct ib_qp *qp;

	qp = ib_create_qp(dt->pd, &init);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(qp), "QP on an SRQ: %ld",
			       PTR_ERR(qp));
	KUNIT_EXPECT_EQ(test, init.cap.max_recv_wr, 0);
	return qp;
}

/* KITE_DT_SRQ_RECVS receives of one page each, wr_ids from @id on. */
static void kite_dt_srq_post(struct kunit *test, struct kite_dt *dt,
			     u64 id)
{
	struct ib_sge sge = kite_dt_sge(dt, KITE_DT_B_BUF, PAGE_SIZE);
	struct ib_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	int i;

	for (i = 0; i < KITE_DT_SRQ_RECVS; i++) {
		wr.wr_id = id + i;
		KUNIT_ASSERT_EQ(test, ib_post_srq_recv(dt->srq, &wr, NULL), 0);
	}
}

/* A on a plain QP, B on a new SRQ, connected to each other. */
static void kite_dt_srq_setup(struct kunit *test)
{
	struct kite_dt *dt = test->priv;

	kite_dt_setup_common(test);
	kite_dt_create_srq(test, dt);
	dt->a = kite_dt_create_qp(test, dt, dt->cq);
	dt->b = kite_dt_create_srq_qp(test, dt, dt->srq);
	kite_dt_connect(test, dt, dt->a, dt->b, KITE_DT_PSN_A, KITE_DT_PSN_B);
	kite_dt_connect(test, dt, dt->b, dt->a, KITE_DT_PSN_B, KITE_DT_PSN_A);
}

/* One signaled SEND of @len bytes from A, and its two completions. */
static void kite_dt_srq_send(struct kunit *test, struct kite_dt *dt,
			     u64 send_id, u64 recv_id, u32 len)
{
	struct ib_sge sge = kite_dt_sge(dt, KITE_DT_A_SRC, len);
	struct ib_send_wr wr = {
		.wr_id = send_id,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = &sge,
		.num_sge = 1,
	};
	struct ib_wc wc[2], *r;

	KUNIT_ASSERT_EQ(test, ib_post_send(dt->a, &wr, NULL), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 2), 2);
	KUNIT_EXPECT_EQ(test, kite_dt_find_one(test, wc, 2, send_id)->status,
			IB_WC_SUCCESS);
	r = kite_dt_find_one(test, wc, 2, recv_id);
	KUNIT_EXPECT_EQ(test, r->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, r->opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, r->byte_len, len);
	KUNIT_EXPECT_PTR_EQ(test, r->qp, dt->b);
}

void kite_test_dp_srq_recv_limit(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct ib_srq_attr attr = { .srq_limit = KITE_DT_SRQ_LIMIT };

	kite_dt_srq_setup(test);
	kite_dt_srq_post(test, dt, KITE_DT_SRQ_ID);
	KUNIT_ASSERT_EQ(test, ib_modify_srq(dt->srq, &attr, IB_SRQ_LIMIT), 0);
	attr.max_wr = 2 * KITE_DT_SRQ_WR;
	KUNIT_EXPECT_EQ(test, ib_modify_srq(dt->srq, &attr, IB_SRQ_MAX_WR),
			-EOPNOTSUPP);
	memset(kite_dt_va(dt, KITE_DT_A_SRC), KITE_DT_PATTERN, PAGE_SIZE);

	/* Taken in posting order: 3 posted, 2 left, then 1 (< the limit). */
	kite_dt_srq_send(test, dt, 1, KITE_DT_SRQ_ID, KITE_DT_MSG_LEN);
	KUNIT_EXPECT_EQ(test,
			atomic_read(&dt->qp_events[IB_EVENT_SRQ_LIMIT_REACHED]),
			0);
	/* Still armed: an early event would have disarmed it. */
	KUNIT_ASSERT_EQ(test, ib_query_srq(dt->srq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.srq_limit, KITE_DT_SRQ_LIMIT);
	kite_dt_srq_send(test, dt, 2, KITE_DT_SRQ_ID + 1, KITE_DT_MSG_LEN);
	KUNIT_EXPECT_NOT_NULL(test, kite_dt_wait_event(dt,
						       IB_EVENT_SRQ_LIMIT_REACHED));
	KUNIT_EXPECT_NULL(test, memchr_inv(kite_dt_va(dt, KITE_DT_B_BUF),
					   KITE_DT_PATTERN, KITE_DT_MSG_LEN));
	/* The device disarmed the limit. */
	KUNIT_ASSERT_EQ(test, ib_query_srq(dt->srq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.srq_limit, 0);
	KUNIT_EXPECT_GE(test, attr.max_wr, KITE_DT_SRQ_WR);
	/* Completed slots are reused at once: the SRQ never runs dry. */
	kite_dt_srq_post(test, dt, KITE_DT_SRQ_ID + KITE_DT_SRQ_RECVS);
	kite_dt_srq_send(test, dt, 3, KITE_DT_SRQ_ID + 2, 1);
	kite_dt_srq_send(test, dt, 4, KITE_DT_SRQ_ID + KITE_DT_SRQ_RECVS, 1);
}

void kite_test_dp_srq_last_wqe(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct ib_wc wc;

	kite_dt_srq_setup(test);
	kite_dt_srq_post(test, dt, KITE_DT_SRQ_ID);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(dt->b, &attr, IB_QP_STATE), 0);
	KUNIT_EXPECT_PTR_EQ(test, kite_dt_wait_event(dt,
						     IB_EVENT_QP_LAST_WQE_REACHED),
			    dt->b);
	/* B held no SRQ WQE: nothing is flushed, the SRQ keeps all three. */
	KUNIT_EXPECT_EQ(test, ib_poll_cq(dt->cq, 1, &wc), 0);

	/* A new QP on the SRQ receives the WQEs B did not take. */
	ib_destroy_qp(dt->b);
	dt->b = kite_dt_create_srq_qp(test, dt, dt->srq);
	attr.qp_state = IB_QPS_RESET;
	KUNIT_ASSERT_EQ(test, ib_modify_qp(dt->a, &attr, IB_QP_STATE), 0);
	kite_dt_connect(test, dt, dt->a, dt->b, KITE_DT_PSN_A, KITE_DT_PSN_B);
	kite_dt_connect(test, dt, dt->b, dt->a, KITE_DT_PSN_B, KITE_DT_PSN_A);
	kite_dt_srq_send(test, dt, 1, KITE_DT_SRQ_ID, KITE_DT_MSG_LEN);
	/* In ERR, B flushes the one SRQ WQE it holds: none after a SEND. */
	attr.qp_state = IB_QPS_ERR;
	atomic_set(&dt->qp_events[IB_EVENT_QP_LAST_WQE_REACHED], 0);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(dt->b, &attr, IB_QP_STATE), 0);
	KUNIT_EXPECT_PTR_EQ(test, kite_dt_wait_event(dt,
						     IB_EVENT_QP_LAST_WQE_REACHED),
			    dt->b);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(dt->cq, 1, &wc), 0);
	/* Receives go through the SRQ only. */
	KUNIT_EXPECT_EQ(test, kite_dt_post_recv(dt, dt->b, 1, KITE_DT_B_BUF,
						PAGE_SIZE), -EINVAL);
}
