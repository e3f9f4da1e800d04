// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Provider self-test: polling the CQ (phase wrap, stale and forgotten entries,
 * resize leftovers, two QPs on one CQ).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "selftest.h"

/*
 * Many passes over a small CQ: phase wrap, the consumer index reported
 * after every poll, every error status passed through, one entry per poll.
 */
int test_cq_wrap(void)
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
int test_cq_forget(void)
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
	kite_cq_forget_qp(f->cq, QPN, NULL);
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
int test_cq_stale_slot(void)
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
int test_cq_half_depth(void)
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
int test_cq_old_ring(void)
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

/* Two QPs in different leaves of the QP table, completing into one CQ. */
int test_two_qps(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 4, 8);
	struct ibv_sge sg = { .length = 1 };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc[8];
	struct kite_qp *qp2;
	int ok = 1;

	qp2 = calloc(1, sizeof(*qp2));
	qp2->vqp.qp = f->qp->vqp.qp;
	qp2->vqp.qp.qp_num = QPN + KITE_QP_LEAF_SIZE;
	wq_setup(&qp2->sq, 4, 128, 2);
	wq_setup(&qp2->rq, 4, 64, 3);
	kite_qp_table_insert(&f->ctx->qps, qp2);
	CHECK(kite_qp_table_find(&f->ctx->qps, QPN) == f->qp);
	CHECK(kite_qp_table_find(&f->ctx->qps, QPN + KITE_QP_LEAF_SIZE) ==
	      qp2);
	CHECK(kite_qp_table_find(&f->ctx->qps, QPN + 1) == NULL);

	wr = send_wr(1, IBV_WR_SEND, &sg, 1, IBV_SEND_SIGNALED);
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == 0);
	wr = send_wr(2, IBV_WR_SEND, &sg, 1, IBV_SEND_SIGNALED);
	CHECK(kite_post_send(&qp2->vqp.qp, &wr, &bad) == 0);
	CHECK(db_read(f, KITE_DB_SQ) ==
	      kite_db_make(QPN + KITE_QP_LEAF_SIZE, 0, 1));
	dev_cqe(f, QPN + KITE_QP_LEAF_SIZE, 0, KITE_CQE_SEND, 0, 1, 0, 0);
	dev_cqe(f, QPN, 0, KITE_CQE_SEND, 0, 1, 0, 0);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 8, wc) == 2);
	CHECK(wc[0].wr_id == 2 && wc[0].qp_num == QPN + KITE_QP_LEAF_SIZE);
	CHECK(wc[1].wr_id == 1 && wc[1].qp_num == QPN);
	CHECK(qp2->sq.ci == 1 && f->qp->sq.ci == 1);

	/* qp2 destroyed with a CQE pending: only f->qp's CQE comes out. */
	wr = send_wr(3, IBV_WR_SEND, &sg, 1, IBV_SEND_SIGNALED);
	CHECK(kite_post_send(&qp2->vqp.qp, &wr, &bad) == 0);
	wr = send_wr(4, IBV_WR_SEND, &sg, 1, IBV_SEND_SIGNALED);
	CHECK(kite_post_send(&f->qp->vqp.qp, &wr, &bad) == 0);
	dev_cqe(f, QPN + KITE_QP_LEAF_SIZE, 1, KITE_CQE_SEND, 0, 1, 0, 0);
	dev_cqe(f, QPN, 1, KITE_CQE_SEND, 0, 1, 0, 0);
	kite_cq_forget_qp(f->cq, qp2->vqp.qp.qp_num, NULL);
	kite_qp_table_remove(&f->ctx->qps, qp2);
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
 * The QP table across the 24-bit QP number space: leaves come with their
 * first QP and go with their last, a number never inserted is not found
 * (nor one above 24 bits), and removing a QP leaves its neighbours.
 */
int test_qp_table(void)
{
	static const uint32_t qpns[] = {
		2, 3, KITE_QP_LEAF_SIZE - 1, KITE_QP_LEAF_SIZE,
		5 * KITE_QP_LEAF_SIZE + 7, KITE_QPN_MASK,
	};
	struct kite_qp qps[sizeof(qpns) / sizeof(qpns[0])];
	struct kite_qp_table t;
	unsigned int i, leaves;
	int ok = 1;

	memset(qps, 0, sizeof(qps));
	kite_qp_table_init(&t);
	for (i = 0; i < sizeof(qpns) / sizeof(qpns[0]); i++) {
		qps[i].vqp.qp.qp_num = qpns[i];
		CHECK(kite_qp_table_insert(&t, &qps[i]) == 0);
	}
	for (i = 0, leaves = 0; i < KITE_QP_DIR_SIZE; i++)
		leaves += t.dir[i] != NULL;
	CHECK(leaves == 4);
	for (i = 0; i < sizeof(qpns) / sizeof(qpns[0]); i++)
		CHECK(kite_qp_table_find(&t, qpns[i]) == &qps[i]);
	CHECK(kite_qp_table_find(&t, 4) == NULL);
	CHECK(kite_qp_table_find(&t, 6 * KITE_QP_LEAF_SIZE) == NULL);
	CHECK(kite_qp_table_find(&t, KITE_QPN_MASK + 1) == NULL);
	CHECK(kite_qp_table_find(&t, 0xffffffff) == NULL);
	/* The last QP of a leaf takes the leaf with it. */
	kite_qp_table_remove(&t, &qps[4]);
	CHECK(kite_qp_table_find(&t, qpns[4]) == NULL);
	CHECK(t.dir[qpns[4] >> KITE_QP_LEAF_SHIFT] == NULL);
	kite_qp_table_remove(&t, &qps[0]);
	CHECK(kite_qp_table_find(&t, qpns[1]) == &qps[1]);
	CHECK(t.dir[0] != NULL);
	for (i = 1; i < sizeof(qpns) / sizeof(qpns[0]); i++)
		if (i != 4)
			kite_qp_table_remove(&t, &qps[i]);
	for (i = 0, leaves = 0; i < KITE_QP_DIR_SIZE; i++)
		leaves += t.dir[i] != NULL;
	CHECK(leaves == 0);
	kite_qp_table_fini(&t);
	return ok;
}
