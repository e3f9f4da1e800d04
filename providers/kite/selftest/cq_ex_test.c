// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Provider self-test: extended CQs (kite_cq_ex.c): what ibv_create_cq_ex
 * takes and refuses, and the poll-ops interface against ibv_poll_cq on
 * the same CQEs.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "selftest.h"

/* A CQE with every field the poll paths read; flags (with phase) last. */
static void put_cqe(struct fake *f, uint32_t qpn, uint16_t wqe_idx,
		    uint8_t opcode, uint8_t status, uint32_t byte_len,
		    uint8_t flags, uint32_t imm, uint32_t src_qp,
		    uint8_t net_hdr)
{
	struct kite_cqe *cqe = (struct kite_cqe *)f->cq->ring.buf +
			       kite_ring_slot(f->dev_cq_pi, f->cq->log_depth);

	dev_cqe(f, qpn, wqe_idx, opcode, status, byte_len, flags, imm);
	/* dev_cqe wrote the flags; the other fields may follow in a test. */
	cqe->src_qp = htole32(src_qp);
	cqe->net_hdr = net_hdr;
	cqe->pkey_index = 0;
}

static struct ibv_cq_ex *cq_ex(struct fake *f)
{
	kite_cq_ex_set_ops(f->cq);
	return &f->cq->vcq.cq_ex;
}

/* What ibv_create_cq_ex() takes (the standard fields) and refuses. */
int test_cq_ex_create(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 8, 8);
	struct ibv_cq_init_attr_ex a = { .cqe = 5, .wc_flags =
					 IBV_WC_STANDARD_FLAGS };
	struct ibv_context *ctx = &f->ctx->ibv_ctx.context;
	struct ibv_cq_ex *ex;
	int ok = 1;

	CHECK(kite_cq_ex_check(&a) == 0);
	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	a.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	CHECK(kite_cq_ex_check(&a) == 0);
	a.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	CHECK(kite_cq_ex_check(&a) == EOPNOTSUPP);
	a.flags = 0;
	a.comp_mask |= IBV_CQ_INIT_ATTR_MASK_PD;
	CHECK(kite_cq_ex_check(&a) == EOPNOTSUPP);
	a.comp_mask = 1u << 7;
	CHECK(kite_cq_ex_check(&a) == EOPNOTSUPP);
	a.comp_mask = 0;
	a.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	CHECK(kite_cq_ex_check(&a) == EOPNOTSUPP);
	a.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	CHECK(kite_cq_ex_check(&a) == EOPNOTSUPP);
	a.wc_flags = IBV_WC_EX_WITH_CVLAN;
	CHECK(kite_cq_ex_check(&a) == EOPNOTSUPP);
	a.wc_flags = IBV_WC_EX_WITH_FLOW_TAG;
	CHECK(kite_cq_ex_check(&a) == EOPNOTSUPP);
	a.wc_flags = IBV_WC_EX_WITH_TM_INFO;
	CHECK(kite_cq_ex_check(&a) == EOPNOTSUPP);

	/* A refusal makes no CQ; a good request gets one with the ops. */
	memset(&fake_create, 0, sizeof(fake_create));
	fake_create.cq = f->cq;
	errno = 0;
	CHECK(kite_create_cq_ex(ctx, &a) == NULL && errno == EOPNOTSUPP);
	CHECK(fake_create.cq_calls == 0);
	a.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM;
	ex = kite_create_cq_ex(ctx, &a);
	CHECK(ex == &f->cq->vcq.cq_ex);
	CHECK(fake_create.cq_calls == 1 && fake_create.cqe == 5);
	if (ex) {
		CHECK(ex->start_poll && ex->next_poll && ex->end_poll);
		CHECK(ex->read_opcode && ex->read_byte_len && ex->read_sl &&
		      ex->read_imm_data && ex->read_dlid_path_bits);
		CHECK(!ex->read_completion_ts && !ex->read_cvlan &&
		      !ex->read_flow_tag && !ex->read_tm_info &&
		      !ex->read_completion_wallclock_ns);
	}
	/* The CQ creation failing: its errno, nothing else. */
	fake_create.cq = NULL;
	fake_create.err = ENOMEM;
	CHECK(kite_create_cq_ex(ctx, &a) == NULL && errno == ENOMEM);
	memset(&fake_create, 0, sizeof(fake_create));
	fake_free(f);
	return ok;
}

/*
 * start/next/end: ENOENT on an empty CQ with the lock released, the
 * current completion's wr_id and status, the consumer index reported
 * at end_poll (and every half depth in a long poll), attr->comp_mask.
 */
int test_cq_ex_poll(void)
{
	struct fake *f = fake_new(IBV_QPT_RC, 16, 8);
	struct ibv_cq_ex *ex = cq_ex(f);
	struct ibv_poll_cq_attr attr = {};
	int ok = 1, i, n;

	CHECK(ibv_start_poll(ex, &attr) == ENOENT);
	CHECK(pthread_spin_trylock(&f->cq->lock) == 0);
	pthread_spin_unlock(&f->cq->lock);
	CHECK(db_read(f, KITE_DB_CQ) == 0);

	f->qp->sq.pi = 8;
	for (i = 0; i < 8; i++)
		f->qp->sq.wr_id[i] = 500 + i;
	for (i = 0; i < 6; i++)
		put_cqe(f, QPN, i, KITE_CQE_SEND, KITE_CQE_SUCCESS, 10 + i,
			0, 0, 0, KITE_CQE_NET_NONE);

	attr.comp_mask = 1;
	CHECK(ibv_start_poll(ex, &attr) == EINVAL);
	attr.comp_mask = 0;
	CHECK(ibv_start_poll(ex, &attr) == 0);
	CHECK(ex->wr_id == 500 && ex->status == IBV_WC_SUCCESS);
	CHECK(ibv_wc_read_byte_len(ex) == 10);
	/* The lock is held until end_poll. */
	CHECK(pthread_spin_trylock(&f->cq->lock) != 0);
	for (n = 1; ibv_next_poll(ex) == 0; n++) {
		CHECK(ex->wr_id == 500u + n);
		CHECK(ibv_wc_read_byte_len(ex) == 10u + n);
		CHECK(ibv_wc_read_opcode(ex) == IBV_WC_SEND);
		/* Half the depth consumed: reported during the poll. */
		if (n == 4)
			CHECK(db_read(f, KITE_DB_CQ) ==
			      kite_db_make(CQN, 0, 4));
	}
	CHECK(n == 6);
	CHECK(ibv_next_poll(ex) == ENOENT);
	ibv_end_poll(ex);
	CHECK(db_read(f, KITE_DB_CQ) == kite_db_make(CQN, 0, 6));
	CHECK(pthread_spin_trylock(&f->cq->lock) == 0);
	pthread_spin_unlock(&f->cq->lock);
	CHECK(f->qp->sq.ci == 6);

	/* A dropped CQE alone (QP forgotten): ENOENT, its slot reported. */
	put_cqe(f, 0, 6, KITE_CQE_SEND, KITE_CQE_SUCCESS, 1, 0, 0, 0,
		KITE_CQE_NET_NONE);
	CHECK(ibv_start_poll(ex, &attr) == ENOENT);
	CHECK(db_read(f, KITE_DB_CQ) == kite_db_make(CQN, 0, 7));
	CHECK(pthread_spin_trylock(&f->cq->lock) == 0);
	pthread_spin_unlock(&f->cq->lock);
	fake_free(f);
	return ok;
}

/* One scenario of CQEs: sends, receives, UD, errors, drops. */
static void scenario(struct fake *f)
{
	int i;

	f->qp->sq.pi = 4;
	f->qp->rq.pi = 5;
	for (i = 0; i < 4; i++)
		f->qp->sq.wr_id[i] = 100 + i;
	for (i = 0; i < 5; i++)
		f->qp->rq.wr_id[i] = 200 + i;
	put_cqe(f, QPN, 0, KITE_CQE_SEND, KITE_CQE_SUCCESS, 10, 0, 0, 0,
		KITE_CQE_NET_NONE);
	put_cqe(f, QPN, 0, KITE_CQE_RECV, KITE_CQE_SUCCESS, 20, KITE_CQE_F_IMM,
		htobe32(0x11223344), 0, KITE_CQE_NET_NONE);
	put_cqe(f, QPN, 1, KITE_CQE_RECV, KITE_CQE_SUCCESS, 30, KITE_CQE_F_INV,
		htole32(0xabcd01), 0, KITE_CQE_NET_NONE);
	put_cqe(f, QPN, 2, KITE_CQE_RECV, KITE_CQE_SUCCESS, 40 + 40,
		KITE_CQE_F_GRH, 0, 0x345678, KITE_CQE_NET_IPV4);
	put_cqe(f, 0, 1, KITE_CQE_SEND, KITE_CQE_SUCCESS, 1, 0, 0, 0,
		KITE_CQE_NET_NONE);
	put_cqe(f, QPN, 2, KITE_CQE_WRITE, KITE_CQE_REM_ACCESS_ERR, 0, 0, 0,
		0, KITE_CQE_NET_NONE);
	put_cqe(f, QPN, 3, KITE_CQE_RECV_WRITE_IMM, KITE_CQE_SUCCESS, 7,
		KITE_CQE_F_IMM | KITE_CQE_F_GRH, htobe32(0x55), 0x11,
		KITE_CQE_NET_IPV6);
	put_cqe(f, QPN, 7, KITE_CQE_SEND, KITE_CQE_SUCCESS, 1, 0, 0, 0,
		KITE_CQE_NET_NONE);
	put_cqe(f, QPN, 3, 0x3f, KITE_CQE_SUCCESS, 0, 0, 0, 0,
		KITE_CQE_NET_NONE);
}

/*
 * The same CQEs give the same completions through both interfaces: every
 * field the accessors read, and the same consumer index reported; a few
 * values are also checked against what the CQEs say.
 */
int test_cq_ex_same_as_poll_cq(void)
{
	struct fake *fa = fake_new(IBV_QPT_RC, 8, 16);
	struct fake *fb = fake_new(IBV_QPT_RC, 8, 16);
	struct ibv_cq_ex *ex = cq_ex(fb);
	struct ibv_poll_cq_attr attr = {};
	struct ibv_wc wc[16], w;
	int ok = 1, n, m = 0, ret;

	scenario(fa);
	scenario(fb);
	n = kite_poll_cq(&fa->cq->vcq.cq, 16, wc);
	CHECK(n == 7);
	for (ret = ibv_start_poll(ex, &attr); !ret; ret = ibv_next_poll(ex)) {
		memset(&w, 0, sizeof(w));
		w.wr_id = ex->wr_id;
		w.status = ex->status;
		w.opcode = ibv_wc_read_opcode(ex);
		w.vendor_err = ibv_wc_read_vendor_err(ex);
		w.byte_len = ibv_wc_read_byte_len(ex);
		w.wc_flags = ibv_wc_read_wc_flags(ex);
		w.imm_data = ibv_wc_read_imm_data(ex);
		w.qp_num = ibv_wc_read_qp_num(ex);
		w.src_qp = ibv_wc_read_src_qp(ex);
		w.slid = ibv_wc_read_slid(ex);
		w.sl = ibv_wc_read_sl(ex);
		w.dlid_path_bits = ibv_wc_read_dlid_path_bits(ex);
		if (w.wc_flags & IBV_WC_WITH_INV)
			CHECK(ibv_wc_read_invalidated_rkey(ex) == 0xabcd01);
		if (m < n) {
			CHECK(w.wr_id == wc[m].wr_id);
			CHECK(w.status == wc[m].status);
			CHECK(w.opcode == wc[m].opcode);
			CHECK(w.vendor_err == wc[m].vendor_err);
			CHECK(w.byte_len == wc[m].byte_len);
			CHECK(w.wc_flags == wc[m].wc_flags);
			CHECK(w.imm_data == wc[m].imm_data);
			CHECK(w.qp_num == wc[m].qp_num);
			CHECK(w.src_qp == wc[m].src_qp);
			CHECK(w.slid == wc[m].slid && w.sl == wc[m].sl);
			CHECK(w.dlid_path_bits == wc[m].dlid_path_bits);
		}
		m++;
	}
	CHECK(ret == ENOENT);
	ibv_end_poll(ex);
	CHECK(m == n);
	CHECK(db_read(fa, KITE_DB_CQ) == db_read(fb, KITE_DB_CQ));
	CHECK(db_read(fb, KITE_DB_CQ) == kite_db_make(CQN, 0, 9));

	/* What the CQEs said, through poll_cq (so through both). */
	CHECK(wc[0].wr_id == 100 && wc[0].opcode == IBV_WC_SEND &&
	      wc[0].byte_len == 10 && wc[0].wc_flags == 0);
	CHECK(wc[1].wr_id == 200 && wc[1].wc_flags == IBV_WC_WITH_IMM &&
	      wc[1].imm_data == htobe32(0x11223344));
	CHECK(wc[2].wc_flags == IBV_WC_WITH_INV &&
	      wc[2].invalidated_rkey == 0xabcd01);
	CHECK(wc[3].wc_flags == IBV_WC_GRH && wc[3].src_qp == 0x345678 &&
	      wc[3].sl == 0xA && wc[3].byte_len == 80);
	CHECK(wc[4].wr_id == 102 && wc[4].status == IBV_WC_REM_ACCESS_ERR &&
	      wc[4].vendor_err == 0x42);
	CHECK(wc[5].opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc[5].sl == 0x9 &&
	      wc[5].wc_flags == (IBV_WC_WITH_IMM | IBV_WC_GRH));
	CHECK(wc[6].wr_id == 103 && wc[6].status == IBV_WC_GENERAL_ERR);
	CHECK(wc[0].qp_num == QPN && wc[0].slid == 0 &&
	      wc[0].dlid_path_bits == 0);
	fake_free(fa);
	fake_free(fb);
	return ok;
}
