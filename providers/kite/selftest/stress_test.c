// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Provider self-test: a device thread against one or two application threads.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <endian.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "selftest.h"

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

int test_stress_one_thread(void)
{
	return stress_run(false);
}

int test_stress_two_threads(void)
{
	return stress_run(true);
}
