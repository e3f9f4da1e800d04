// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Provider self-test: doorbell records. The indexes go to the record; the
 * doorbell registers are written only when the device's poll flag says so.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <endian.h>
#include <string.h>

#include "selftest.h"

/* Point the fake QP's queues at @rec, as kite_create_qp() does. */
static void qp_use_rec(struct fake *f, struct kite_qp_dbrec *rec)
{
	memset(rec, 0, sizeof(*rec));
	f->qp->sq.rec_pi = &rec->sq_pi;
	f->qp->sq.rec_poll = &rec->sq_poll;
	f->qp->rq.rec_pi = &rec->rq_pi;
	f->qp->rq.rec_poll = &rec->rq_poll;
}

/* SQ and RQ: record always, register only while the device does not poll. */
int test_dbrec_post(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 8, 8);
	struct ibv_sge sg = { .addr = 0x1000, .length = 8, .lkey = 1 };
	struct ibv_send_wr swr = send_wr(1, IBV_WR_SEND, &sg, 1, 0);
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &sg, .num_sge = 1 };
	struct ibv_send_wr *sbad = NULL;
	struct ibv_recv_wr *rbad = NULL;
	struct kite_qp_dbrec rec;
	int ok = 1;

	qp_use_rec(f, &rec);
	/* A zeroed record: the device is not polling, so the register too. */
	CHECK(kite_post_send(&f->qp->vqp.qp, &swr, &sbad) == 0);
	CHECK(le32toh(rec.sq_pi) == 1);
	CHECK(db_read(f, KITE_DB_SQ) == kite_db_make(QPN, 0, 1));
	CHECK(kite_post_recv(&f->qp->vqp.qp, &rwr, &rbad) == 0);
	CHECK(le32toh(rec.rq_pi) == 1);
	CHECK(db_read(f, KITE_DB_RQ) == kite_db_make(QPN, 0, 1));

	/* The device polls both queues: only the record moves. */
	db_clear(f);
	rec.sq_poll = htole32(KITE_DBREC_POLL);
	rec.rq_poll = htole32(KITE_DBREC_POLL);
	CHECK(kite_post_send(&f->qp->vqp.qp, &swr, &sbad) == 0);
	CHECK(kite_post_send(&f->qp->vqp.qp, &swr, &sbad) == 0);
	CHECK(kite_post_recv(&f->qp->vqp.qp, &rwr, &rbad) == 0);
	CHECK(le32toh(rec.sq_pi) == 3 && le32toh(rec.rq_pi) == 2);
	CHECK(db_read(f, KITE_DB_SQ) == 0 && db_read(f, KITE_DB_RQ) == 0);

	/* The device went idle on the SQ only. */
	rec.sq_poll = 0;
	CHECK(kite_post_send(&f->qp->vqp.qp, &swr, &sbad) == 0);
	CHECK(kite_post_recv(&f->qp->vqp.qp, &rwr, &rbad) == 0);
	CHECK(db_read(f, KITE_DB_SQ) == kite_db_make(QPN, 0, 4));
	CHECK(db_read(f, KITE_DB_RQ) == 0 && le32toh(rec.rq_pi) == 3);

	/* Modify to RESET: the record's indexes start over with the queues. */
	kite_wq_reset(&f->qp->sq);
	kite_wq_reset(&f->qp->rq);
	CHECK(rec.sq_pi == 0 && rec.rq_pi == 0);
	fake_free(f);
	return ok;
}

/* CQ: the consumer index goes to the record; arming keeps the doorbell. */
int test_dbrec_cq(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 8, 8);
	struct ibv_sge sg = { .addr = 0x1000, .length = 8, .lkey = 1 };
	struct ibv_send_wr swr = send_wr(1, IBV_WR_SEND, &sg, 1,
					 IBV_SEND_SIGNALED);
	struct ibv_send_wr *sbad = NULL;
	struct kite_cq_dbrec rec = {};
	struct ibv_wc wc[4];
	int ok = 1, i;

	f->cq->rec_ci = &rec.ci;
	for (i = 0; i < 3; i++) {
		CHECK(kite_post_send(&f->qp->vqp.qp, &swr, &sbad) == 0);
		dev_cqe(f, QPN, i, KITE_CQE_SEND, 0, 8, 0, 0);
	}
	db_clear(f);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 2, wc) == 2);
	CHECK(le32toh(rec.ci) == 2);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 4, wc) == 1);
	CHECK(le32toh(rec.ci) == 3);
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 4, wc) == 0);
	CHECK(db_read(f, KITE_DB_CQ) == 0);
	CHECK(kite_req_notify_cq(&f->cq->vcq.cq, 0) == 0);
	CHECK(db_read(f, KITE_DB_CQ) ==
	      kite_db_make(CQN, KITE_DB_CQ_ARM_NEXT, 3));
	fake_free(f);
	return ok;
}
