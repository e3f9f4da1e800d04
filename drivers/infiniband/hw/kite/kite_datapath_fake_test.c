// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite kite_datapath, driver cases against fake kernel QPs and
 * CQs (no traffic): the WQE layout post_send and post_recv write, CQE to
 * ib_wc translation, CQE cleaning on reset, arming during a resize and
 * the software flush of a dead device.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kite_datapath_test.h"

int kite_dt_fake_alloc(struct kite_ib_dev *kib, struct kite_dt_fake *f)
{
	u32 depth = 1u << KITE_DT_FAKE_LOG_DEPTH;
	struct kite_qp *qp;
	struct kite_cq *cq;
	int err = -ENOMEM;

	f->qp = kzalloc(sizeof(*f->qp), GFP_KERNEL);
	f->cq = kzalloc(sizeof(*f->cq), GFP_KERNEL);
	if (!f->qp || !f->cq)
		return -ENOMEM;
	qp = f->qp;
	cq = f->cq;

	cq->ibcq.device = &kib->ibdev;
	cq->cqn = KITE_DT_FAKE_NUM;
	cq->log_depth = KITE_DT_FAKE_LOG_DEPTH;
	spin_lock_init(&cq->lock);
	INIT_LIST_HEAD(&cq->sq_list);
	INIT_LIST_HEAD(&cq->rq_list);
	if (kite_ring_alloc_kernel(kib, &cq->ring,
				   depth * sizeof(struct kite_cqe)))
		return err;

	qp->ibqp.device = &kib->ibdev;
	qp->ibqp.qp_type = IB_QPT_RC;
	qp->ibqp.send_cq = &cq->ibcq;
	qp->ibqp.recv_cq = &cq->ibcq;
	qp->qpn = KITE_DT_FAKE_NUM;
	qp->ibqp.qp_num = qp->qpn;
	qp->state = IB_QPS_RTS;
	qp->sq_log_depth = KITE_DT_FAKE_LOG_DEPTH;
	qp->rq_log_depth = KITE_DT_FAKE_LOG_DEPTH;
	qp->sq_log_stride = KITE_DT_FAKE_SQ_STRIDE;
	qp->rq_log_stride = KITE_DT_FAKE_RQ_STRIDE;
	qp->max_send_sge = KITE_DT_FAKE_SGE;
	qp->max_recv_sge = KITE_DT_FAKE_SGE;
	qp->max_inline = KITE_DT_INLINE;
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	qp->sq_wrid = kcalloc(depth, sizeof(u64), GFP_KERNEL);
	qp->rq_wrid = kcalloc(depth, sizeof(u64), GFP_KERNEL);
	if (!qp->sq_wrid || !qp->rq_wrid)
		return err;
	err = kite_ring_alloc_kernel(kib, &qp->sq, (size_t)depth <<
				     KITE_DT_FAKE_SQ_STRIDE);
	if (!err)
		err = kite_ring_alloc_kernel(kib, &qp->rq, (size_t)depth <<
					     KITE_DT_FAKE_RQ_STRIDE);
	if (!err)
		err = xa_insert(&kib->qps, qp->qpn, qp, GFP_KERNEL);
	f->inserted = !err;
	return err;
}

static u64 kite_dt_db_rejected(struct kunit *test, struct kite_ib_dev *kib)
{
	struct kite_hw_stats st = {};

	KUNIT_EXPECT_EQ(test, kite_cmd_query_stats(&kib->kdev->admin, &st), 0);
	return st.db_rejected;
}

/* post_send and post_recv write the WQEs hardware.rst specifies. */
void kite_test_dp_wqe_layout(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct kite_dt_fake *f = &dt->fake;
	struct ib_rdma_wr rwr = {};
	struct ib_atomic_wr awr = {};
	struct ib_send_wr swr = {};
	struct ib_recv_wr rcv = {};
	struct ib_sge sge[2] = {
		{ .addr = 0x1000, .length = 100, .lkey = 0x101 },
		{ .addr = 0x2000, .length = 200, .lkey = 0x202 },
	};
	const struct ib_recv_wr *rbad;
	const struct ib_send_wr *bad;
	struct kite_sq_wqe_hdr *hdr;
	struct kite_wqe_atomic *at;
	struct kite_wqe_raddr *ra;
	struct kite_ib_dev *kib;
	struct kite_sge *ks;
	u8 inline_data[KITE_DT_INLINE];
	u64 rejected;
	int i;

	kib = kite_dt_get(test);
	dt->kib = kib;
	KUNIT_ASSERT_EQ(test, kite_dt_fake_alloc(kib, f), 0);
	rejected = kite_dt_db_rejected(test, kib);

	/* SEND_WITH_IMM, two SGEs, all flags; then WRITE: one doorbell. */
	swr.wr_id = 1;
	swr.opcode = IB_WR_SEND_WITH_IMM;
	swr.send_flags = IB_SEND_SIGNALED | IB_SEND_SOLICITED | IB_SEND_FENCE;
	swr.ex.imm_data = cpu_to_be32(KITE_DT_IMM);
	swr.sg_list = sge;
	swr.num_sge = 2;
	swr.next = &rwr.wr;
	rwr.wr.wr_id = 2;
	rwr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	rwr.wr.sg_list = &sge[1];
	rwr.wr.num_sge = 1;
	rwr.remote_addr = 0x123456789abcULL;
	rwr.rkey = 0xabcd;
	KUNIT_ASSERT_EQ(test, kite_post_send(&f->qp->ibqp, &swr, &bad), 0);
	KUNIT_EXPECT_EQ(test, f->qp->sq_pi, 2);

	hdr = f->qp->sq.buf;
	KUNIT_EXPECT_EQ(test, hdr->opcode, KITE_WQE_SEND_IMM);
	KUNIT_EXPECT_EQ(test, hdr->flags, KITE_WQE_F_SIGNALED |
			KITE_WQE_F_SOLICITED | KITE_WQE_F_FENCE);
	KUNIT_EXPECT_EQ(test, hdr->num_sge, 2);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(hdr->inline_len), 0);
	/* The immediate goes as is: its bytes in wire (big-endian) order. */
	KUNIT_EXPECT_EQ(test, memcmp(&hdr->imm_data, &swr.ex.imm_data, 4), 0);
	ks = (struct kite_sge *)(hdr + 1);
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ(test, le64_to_cpu(ks[i].addr), sge[i].addr);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(ks[i].length), sge[i].length);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(ks[i].lkey), sge[i].lkey);
	}
	hdr = f->qp->sq.buf + (1 << KITE_DT_FAKE_SQ_STRIDE);
	KUNIT_EXPECT_EQ(test, hdr->opcode, KITE_WQE_WRITE_IMM);
	KUNIT_EXPECT_EQ(test, hdr->flags, 0);
	KUNIT_EXPECT_EQ(test, hdr->num_sge, 1);
	ra = (struct kite_wqe_raddr *)(hdr + 1);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(ra->remote_addr), rwr.remote_addr);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ra->rkey), rwr.rkey);
	ks = (struct kite_sge *)(ra + 1);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(ks->addr), sge[1].addr);
	KUNIT_EXPECT_EQ(test, kite_dt_db_rejected(test, kib), rejected + 1);

	/* CMP_SWP: swap in swap_add, compare in compare, SGE after. */
	awr.wr.wr_id = 3;
	awr.wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
	awr.wr.sg_list = sge;
	awr.wr.num_sge = 1;
	awr.remote_addr = 0x8000;
	awr.rkey = 0x77;
	awr.compare_add = KITE_DT_SWAP_OLD;
	awr.swap = KITE_DT_SWAP_NEW;
	if (kib->kdev->caps.cap_flags & KITE_DEV_CAP_ATOMIC) {
		KUNIT_ASSERT_EQ(test, kite_post_send(&f->qp->ibqp, &awr.wr,
						     &bad), 0);
		hdr = f->qp->sq.buf + (2 << KITE_DT_FAKE_SQ_STRIDE);
		KUNIT_EXPECT_EQ(test, hdr->opcode, KITE_WQE_CMP_SWP);
		at = (struct kite_wqe_atomic *)(hdr + 1);
		KUNIT_EXPECT_EQ(test, le64_to_cpu(at->remote_addr), 0x8000);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(at->rkey), 0x77);
		KUNIT_EXPECT_EQ(test, le64_to_cpu(at->swap_add),
				KITE_DT_SWAP_NEW);
		KUNIT_EXPECT_EQ(test, le64_to_cpu(at->compare),
				KITE_DT_SWAP_OLD);
		ks = (struct kite_sge *)(at + 1);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(ks->lkey), sge[0].lkey);
	} else {
		/* No atomics without the capability. */
		KUNIT_EXPECT_EQ(test, kite_post_send(&f->qp->ibqp, &awr.wr,
						     &bad), -EINVAL);
		KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&awr.wr);
		f->qp->sq_pi++;	/* keep the slot numbering below */
	}

	/* Inline SEND: the bytes follow the header; the SQ is then full. */
	for (i = 0; i < sizeof(inline_data); i++)
		inline_data[i] = i + 1;
	sge[0].addr = (uintptr_t)inline_data;
	sge[0].length = sizeof(inline_data);
	swr.opcode = IB_WR_SEND;
	swr.send_flags = IB_SEND_INLINE;
	swr.num_sge = 1;
	swr.next = &rwr.wr;
	KUNIT_EXPECT_EQ(test, kite_post_send(&f->qp->ibqp, &swr, &bad), -ENOMEM);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&rwr.wr);
	hdr = f->qp->sq.buf + (3 << KITE_DT_FAKE_SQ_STRIDE);
	KUNIT_EXPECT_EQ(test, hdr->opcode, KITE_WQE_SEND);
	KUNIT_EXPECT_EQ(test, hdr->flags, KITE_WQE_F_INLINE);
	KUNIT_EXPECT_EQ(test, hdr->num_sge, 0);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(hdr->inline_len),
			sizeof(inline_data));
	KUNIT_EXPECT_EQ(test, memcmp(hdr + 1, inline_data,
				     sizeof(inline_data)), 0);
	KUNIT_EXPECT_EQ(test, f->qp->sq_pi, 4);

	/* RECV: header with num_sge, then the SGEs. */
	sge[0].addr = 0x3000;
	rcv.wr_id = 9;
	rcv.sg_list = sge;
	rcv.num_sge = 2;
	KUNIT_EXPECT_EQ(test, kite_post_recv(&f->qp->ibqp, &rcv, &rbad), 0);
	KUNIT_EXPECT_EQ(test, ((struct kite_rq_wqe_hdr *)f->qp->rq.buf)->num_sge,
			2);
	ks = f->qp->rq.buf + sizeof(struct kite_rq_wqe_hdr);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(ks[0].addr), 0x3000);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ks[1].lkey), sge[1].lkey);
	KUNIT_EXPECT_EQ(test, f->qp->rq_wrid[0], 9);

	/* Not in RTS: refused, nothing written. */
	f->qp->state = IB_QPS_RTR;
	KUNIT_EXPECT_EQ(test, kite_post_send(&f->qp->ibqp, &swr, &bad), -EINVAL);
	f->qp->state = IB_QPS_RESET;
	KUNIT_EXPECT_EQ(test, kite_post_recv(&f->qp->ibqp, &rcv, &rbad), -EINVAL);
	/* Three SQ lists and one RQ list rang four doorbells. */
	KUNIT_EXPECT_EQ(test, kite_dt_db_rejected(test, kib), rejected +
			((kib->kdev->caps.cap_flags & KITE_DEV_CAP_ATOMIC) ? 4 : 3));
}

/* Write the CQE at free-running index @idx of the fake CQ. */
void kite_dt_fake_cqe(struct kite_dt_fake *f, u32 idx, u8 opcode, u8 status,
		      u16 slot, u8 flags)
{
	struct kite_cqe *cqe = f->cq->ring.buf;

	cqe += kite_ring_slot(idx, KITE_DT_FAKE_LOG_DEPTH);
	memset(cqe, 0, sizeof(*cqe));
	cqe->qpn = cpu_to_le32(f->qp->qpn);
	cqe->wqe_idx = cpu_to_le16(slot);
	cqe->opcode = opcode;
	cqe->status = status;
	cqe->byte_len = cpu_to_le32(KITE_DT_MSG_LEN);
	cqe->imm_data = (__force __le32)cpu_to_be32(KITE_DT_IMM);
	cqe->flags = flags | kite_ring_phase(idx, KITE_DT_FAKE_LOG_DEPTH);
}

/* poll_cq: phase, wr_id, retiring unsignaled WQEs, statuses, wrap. */
void kite_test_dp_poll_cqes(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct kite_dt_fake *f = &dt->fake;
	struct kite_ib_dev *kib;
	struct ib_wc wc[4];
	struct ib_cq *ibcq;
	int i;

	kib = kite_dt_get(test);
	dt->kib = kib;
	KUNIT_ASSERT_EQ(test, kite_dt_fake_alloc(kib, f), 0);
	ibcq = &f->cq->ibcq;

	/* Three send WQEs outstanding (slots 0-2), one receive (slot 0). */
	f->qp->sq_pi = 3;
	for (i = 0; i < 3; i++)
		f->qp->sq_wrid[i] = 100 + i;
	f->qp->rq_pi = 1;
	f->qp->rq_wrid[0] = 200;

	KUNIT_EXPECT_EQ(test, kite_poll_cq(ibcq, 4, wc), 0);
	KUNIT_EXPECT_EQ(test, kite_req_notify_cq(ibcq, IB_CQ_NEXT_COMP |
						 IB_CQ_REPORT_MISSED_EVENTS), 0);

	/* A CQE for slot 2 retires slots 0 and 1 (unsignaled) too. */
	kite_dt_fake_cqe(f, 0, KITE_CQE_WRITE, KITE_CQE_SUCCESS, 2, 0);
	KUNIT_EXPECT_EQ(test, kite_req_notify_cq(ibcq, IB_CQ_NEXT_COMP |
						 IB_CQ_REPORT_MISSED_EVENTS), 1);
	kite_dt_fake_cqe(f, 1, KITE_CQE_RECV, KITE_CQE_SUCCESS, 0,
			 KITE_CQE_F_IMM | KITE_CQE_F_SOLICITED);
	KUNIT_ASSERT_EQ(test, kite_poll_cq(ibcq, 4, wc), 2);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 102);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc[0].opcode, IB_WC_RDMA_WRITE);
	KUNIT_EXPECT_PTR_EQ(test, wc[0].qp, &f->qp->ibqp);
	KUNIT_EXPECT_EQ(test, f->qp->sq_ci, 3);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, 200);
	KUNIT_EXPECT_EQ(test, wc[1].opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc[1].byte_len, KITE_DT_MSG_LEN);
	KUNIT_EXPECT_TRUE(test, wc[1].wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc[1].ex.imm_data), KITE_DT_IMM);
	KUNIT_EXPECT_EQ(test, f->qp->rq_ci, 1);
	/* Half the CQ consumed: the consumer index went to the device. */
	KUNIT_EXPECT_EQ(test, f->cq->ci_reported, 2);

	/* A CQE naming a slot with no outstanding WQE is dropped. */
	kite_dt_fake_cqe(f, 2, KITE_CQE_SEND, KITE_CQE_SUCCESS, 1, 0);
	KUNIT_EXPECT_EQ(test, kite_poll_cq(ibcq, 4, wc), 0);
	KUNIT_EXPECT_EQ(test, f->cq->ci, 3);
	/*
	 * Every poll that consumed a CQE reports the consumer index, even
	 * below half a ring: the consumer may keep a full ring outstanding.
	 */
	KUNIT_EXPECT_EQ(test, f->cq->ci_reported, 3);

	/*
	 * Slots 3 and 0 (wrapped) outstanding; CQE index 3, then index 4
	 * (slot 0 of the ring again, phase 0). Slot 0 still holds the
	 * first pass's phase-1 entry: not taken before it is rewritten.
	 */
	f->qp->sq_pi = 5;
	f->qp->sq_wrid[3] = 103;
	f->qp->sq_wrid[0] = 104;
	kite_dt_fake_cqe(f, 3, KITE_CQE_READ, KITE_CQE_SUCCESS, 3, 0);
	KUNIT_ASSERT_EQ(test, kite_poll_cq(ibcq, 4, wc), 1);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 103);
	KUNIT_EXPECT_EQ(test, wc[0].opcode, IB_WC_RDMA_READ);
	kite_dt_fake_cqe(f, 4, KITE_CQE_SEND, KITE_CQE_WR_FLUSH_ERR, 0, 0);
	KUNIT_ASSERT_EQ(test, kite_poll_cq(ibcq, 4, wc), 1);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 104);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, f->qp->sq_ci, 5);
	KUNIT_EXPECT_EQ(test, f->cq->ci, 5);
	KUNIT_EXPECT_EQ(test, f->cq->ci_reported, 5);
	KUNIT_EXPECT_EQ(test, kite_poll_cq(ibcq, 4, wc), 0);
}

/*
 * Modify to RESET: the QP's CQEs from before the reset, still unpolled,
 * must not complete the WQEs posted after it; other QPs' CQEs stay.
 */
void kite_test_dp_reset_clean(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct kite_dt_fake *f = &dt->fake;
	struct kite_ib_dev *kib;
	struct ib_wc wc[4];
	struct ib_cq *ibcq;
	struct kite_cqe *cqe;

	kib = kite_dt_get(test);
	dt->kib = kib;
	KUNIT_ASSERT_EQ(test, kite_dt_fake_alloc(kib, f), 0);
	ibcq = &f->cq->ibcq;

	/* Before the reset: two sends and a receive outstanding. */
	f->qp->sq_pi = 2;
	f->qp->sq_wrid[0] = 100;
	f->qp->sq_wrid[1] = 101;
	f->qp->rq_pi = 1;
	f->qp->rq_wrid[0] = 200;
	kite_dt_fake_cqe(f, 0, KITE_CQE_SEND, KITE_CQE_SUCCESS, 0, 0);
	kite_dt_fake_cqe(f, 1, KITE_CQE_RECV, KITE_CQE_SUCCESS, 0, 0);
	/* A CQE of another QP (dropped by poll_cq, but not by the reset). */
	kite_dt_fake_cqe(f, 2, KITE_CQE_SEND, KITE_CQE_SUCCESS, 1, 0);
	cqe = f->cq->ring.buf;
	cqe[2].qpn = cpu_to_le32(f->qp->qpn - 1);

	kite_qp_reset_indexes(f->qp);
	KUNIT_EXPECT_EQ(test, f->qp->sq_pi, 0);
	KUNIT_EXPECT_EQ(test, f->qp->sq_ci, 0);
	KUNIT_EXPECT_EQ(test, f->qp->rq_pi, 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cqe[0].qpn), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cqe[1].qpn), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cqe[2].qpn), f->qp->qpn - 1);

	/* After it: a new send in slot 0 and a new receive in slot 0. */
	f->qp->sq_pi = 1;
	f->qp->sq_wrid[0] = 300;
	f->qp->rq_pi = 1;
	f->qp->rq_wrid[0] = 400;
	KUNIT_EXPECT_EQ(test, kite_poll_cq(ibcq, 4, wc), 0);
	KUNIT_EXPECT_EQ(test, f->qp->sq_ci, 0);
	KUNIT_EXPECT_EQ(test, f->qp->rq_ci, 0);

	/* Their own CQEs complete them. */
	kite_dt_fake_cqe(f, 3, KITE_CQE_SEND, KITE_CQE_SUCCESS, 0, 0);
	KUNIT_ASSERT_EQ(test, kite_poll_cq(ibcq, 4, wc), 1);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 300);
	KUNIT_EXPECT_EQ(test, f->qp->sq_ci, 1);
	KUNIT_EXPECT_EQ(test, f->qp->rq_ci, 0);
	KUNIT_EXPECT_EQ(test, f->cq->ci, 4);
}

/*
 * req_notify_cq during a kernel resize_cq: no doorbell (no consumer index
 * is right for the device then); the arm is applied when the resize ends.
 */
void kite_test_dp_arm_resizing(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct kite_dt_fake *f = &dt->fake;
	struct kite_ib_dev *kib;
	unsigned long flags;
	u64 rejected;

	kib = kite_dt_get(test);
	dt->kib = kib;
	KUNIT_ASSERT_EQ(test, kite_dt_fake_alloc(kib, f), 0);
	f->cq->ci = 3;
	f->cq->resizing = true;
	rejected = kite_dt_db_rejected(test, kib);
	KUNIT_EXPECT_EQ(test, kite_req_notify_cq(&f->cq->ibcq,
						 IB_CQ_SOLICITED |
						 IB_CQ_REPORT_MISSED_EVENTS), 1);
	KUNIT_EXPECT_EQ(test, kite_req_notify_cq(&f->cq->ibcq,
						 IB_CQ_NEXT_COMP), 0);
	KUNIT_EXPECT_EQ(test, kite_dt_db_rejected(test, kib), rejected);
	KUNIT_EXPECT_EQ(test, f->cq->arm_pending,
			KITE_DB_CQ_ARM_SOLICITED | KITE_DB_CQ_ARM_NEXT);

	spin_lock_irqsave(&f->cq->lock, flags);
	kite_cq_end_resize(kib, f->cq);
	spin_unlock_irqrestore(&f->cq->lock, flags);
	KUNIT_EXPECT_FALSE(test, f->cq->resizing);
	KUNIT_EXPECT_EQ(test, f->cq->arm_pending, 0);
	KUNIT_EXPECT_EQ(test, f->cq->ci_reported, 3);
	/* One doorbell: the deferred arm. */
	KUNIT_EXPECT_EQ(test, kite_dt_db_rejected(test, kib), rejected + 1);
}

/*
 * Dead device: the WQEs outstanding on the CQ's kernel QPs complete as
 * flushed, oldest first, as many as the caller has room for.
 */
void kite_test_dp_sw_flush(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct kite_dt_fake *f = &dt->fake;
	unsigned long flags, left;
	struct kite_ib_dev *kib;
	struct ib_wc wc[4];
	int n;

	kib = kite_dt_get(test);
	dt->kib = kib;
	KUNIT_ASSERT_EQ(test, kite_dt_fake_alloc(kib, f), 0);
	kite_qp_attach_cqs(f->qp);

	/* Sends in slots 3, 0 (wrapped); one receive in slot 1. */
	f->qp->sq_ci = 3;
	f->qp->sq_pi = 5;
	f->qp->sq_wrid[3] = 103;
	f->qp->sq_wrid[0] = 104;
	f->qp->rq_ci = 1;
	f->qp->rq_pi = 2;
	f->qp->rq_wrid[1] = 201;

	spin_lock_irqsave(&f->cq->lock, flags);
	KUNIT_EXPECT_TRUE(test, kite_cq_sw_pending(f->cq));
	n = kite_cq_sw_flush(f->cq, 1, wc);
	spin_unlock_irqrestore(&f->cq->lock, flags);
	KUNIT_ASSERT_EQ(test, n, 1);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 103);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_PTR_EQ(test, wc[0].qp, &f->qp->ibqp);
	KUNIT_EXPECT_EQ(test, f->qp->sq_ci, 4);

	spin_lock_irqsave(&f->cq->lock, flags);
	n = kite_cq_sw_flush(f->cq, 4, wc);
	spin_unlock_irqrestore(&f->cq->lock, flags);
	KUNIT_ASSERT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 104);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, 201);
	KUNIT_EXPECT_EQ(test, wc[1].status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, wc[1].opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, f->qp->sq_ci, 5);
	KUNIT_EXPECT_EQ(test, f->qp->rq_ci, 2);

	spin_lock_irqsave(&f->cq->lock, flags);
	KUNIT_EXPECT_FALSE(test, kite_cq_sw_pending(f->cq));
	n = kite_cq_sw_flush(f->cq, 4, wc);
	list_del(&f->qp->scq_node);
	list_del(&f->qp->rcq_node);
	spin_unlock_irqrestore(&f->cq->lock, flags);
	KUNIT_EXPECT_EQ(test, n, 0);

	/*
	 * WQEs posted on a dead device: the CQ's comp_handler runs (from a
	 * workqueue) so that the consumer polls their flushes.
	 */
	f->cq->ibcq.comp_handler = kite_dt_comp_handler;
	f->cq->ibcq.cq_context = dt;
	INIT_WORK(&f->cq->flush_work, kite_cq_flush_work);
	reinit_completion(&dt->comp);
	/* Not armed (IB_POLL_DIRECT never arms): no call. */
	kite_cq_kick_flush(f->cq);
	flush_work(&f->cq->flush_work);
	KUNIT_EXPECT_EQ(test, atomic_read(&dt->comp_events), 0);
	/* Armed: one call, which disarms. */
	KUNIT_EXPECT_EQ(test, kite_req_notify_cq(&f->cq->ibcq,
						 IB_CQ_NEXT_COMP), 0);
	kite_cq_kick_flush(f->cq);
	left = wait_for_completion_timeout(&dt->comp,
					   msecs_to_jiffies(KITE_DT_WAIT_MS));
	KUNIT_EXPECT_NE(test, left, 0);
	flush_work(&f->cq->flush_work);
	kite_cq_kick_flush(f->cq);
	flush_work(&f->cq->flush_work);
	KUNIT_EXPECT_EQ(test, atomic_read(&dt->comp_events), 1);
	cancel_work_sync(&f->cq->flush_work);
}
