// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite kite_verbs: kernel verbs (ib_core's entry points) on a probed
 * Kite device: PD, CQ, QP state walks, query, DMA MR, limits and refused
 * requests, memory-management capabilities and windows. Cases are skipped
 * only when the machine has no Kite PCI function; they fail when one is
 * present that the driver did not probe.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "kite_ib.h"
#include "kite_verbs.h"

#define KITE_TEST_CQE		100	/* rounded up to 128 */
#define KITE_TEST_WR		16
#define KITE_TEST_SGE		2
#define KITE_TEST_INLINE	64
#define KITE_TEST_QKEY		0x11111111
#define KITE_TEST_SQ_PSN	0x123456
#define KITE_TEST_RQ_PSN	0x654321
#define KITE_TEST_TIMEOUT	14
#define KITE_TEST_RETRY		7
#define KITE_TEST_RNR_TIMER	12
#define KITE_TEST_HOP_LIMIT	64

static struct kite_ib_dev *kite_vtest_get(struct kunit *test)
{
	struct kite_ib_dev *kib = kite_ib_dev_get_any();
	struct pci_dev *pdev;

	if (kib)
		return kib;
	pdev = pci_get_device(KITE_PCI_VENDOR_ID, KITE_PCI_DEVICE_ID, NULL);
	if (!pdev)
		kunit_skip(test, "no kite PCI device");
	pci_dev_put(pdev);
	KUNIT_ASSERT_FAILURE(test,
			     "a kite PCI device is present but kite_ib is not bound to it");
	return NULL;
}

static struct ib_cq *kite_vtest_cq(struct kite_ib_dev *kib, int cqe, u32 vec,
				   u32 flags)
{
	struct ib_cq_init_attr attr = {
		.cqe = cqe,
		.comp_vector = vec,
		.flags = flags,
	};

	return ib_create_cq(&kib->ibdev, NULL, NULL, NULL, &attr);
}

static void kite_vtest_qp_init(struct ib_qp_init_attr *init,
			       enum ib_qp_type type, struct ib_cq *cq)
{
	memset(init, 0, sizeof(*init));
	init->qp_type = type;
	init->send_cq = cq;
	init->recv_cq = cq;
	init->sq_sig_type = IB_SIGNAL_REQ_WR;
	init->cap.max_send_wr = KITE_TEST_WR;
	init->cap.max_recv_wr = KITE_TEST_WR;
	init->cap.max_send_sge = KITE_TEST_SGE;
	init->cap.max_recv_sge = KITE_TEST_SGE;
	init->cap.max_inline_data = KITE_TEST_INLINE;
}

/*
 * The error creating a QP of @type with an over-limit capability gives:
 * -EINVAL, or -EOPNOTSUPP when the device does not implement the type.
 */
static int kite_vtest_limit_err(struct kite_ib_dev *kib, enum ib_qp_type type)
{
	u32 cap = type == IB_QPT_RC ? KITE_DEV_CAP_RC :
		  type == IB_QPT_UC ? KITE_DEV_CAP_UC : KITE_DEV_CAP_UD;

	return (kib->kdev->caps.cap_flags & cap) ? -EINVAL : -EOPNOTSUPP;
}

static int kite_vtest_stats(struct kite_ib_dev *kib, struct kite_hw_stats *st)
{
	return kite_cmd_query_stats(&kib->kdev->admin, st);
}

static void kite_test_verbs_cq(struct kunit *test)
{
	struct kite_ib_dev *kib = kite_vtest_get(test);
	struct kite_hw_stats before = {}, during = {}, after = {};
	struct ib_cq *cq;

	KUNIT_EXPECT_EQ(test, kite_vtest_stats(kib, &before), 0);
	cq = kite_vtest_cq(kib, KITE_TEST_CQE, 0, 0);
	KUNIT_EXPECT_FALSE(test, IS_ERR(cq));
	if (!IS_ERR(cq)) {
		KUNIT_EXPECT_EQ(test, cq->cqe, 128);
		KUNIT_EXPECT_NE(test, to_kcq(cq)->cqn, 0);
		KUNIT_EXPECT_EQ(test, kite_vtest_stats(kib, &during), 0);
		KUNIT_EXPECT_EQ(test, during.num_cq, before.num_cq + 1);
		KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(cq, NULL), 0);
	}
	KUNIT_EXPECT_EQ(test, kite_vtest_stats(kib, &after), 0);
	KUNIT_EXPECT_EQ(test, after.num_cq, before.num_cq);

	/* Limits and unsupported requests: nothing is created. */
	cq = kite_vtest_cq(kib, kib->kdev->caps.max_cqe + 1, 0, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(cq), -EINVAL);
	cq = kite_vtest_cq(kib, KITE_TEST_CQE,
			   kib->ibdev.num_comp_vectors, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(cq), -EINVAL);
	cq = kite_vtest_cq(kib, KITE_TEST_CQE, 0,
			   IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(cq), -EOPNOTSUPP);
	/* The largest CQ the device advertises works. */
	cq = kite_vtest_cq(kib, kib->kdev->caps.max_cqe,
			   kib->ibdev.num_comp_vectors - 1, 0);
	KUNIT_EXPECT_FALSE(test, IS_ERR(cq));
	if (!IS_ERR(cq)) {
		KUNIT_EXPECT_EQ(test, cq->cqe, kib->kdev->caps.max_cqe);
		KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(cq, NULL), 0);
	}
	KUNIT_EXPECT_EQ(test, kite_vtest_stats(kib, &after), 0);
	KUNIT_EXPECT_EQ(test, after.num_cq, before.num_cq);
	kite_ib_dev_put(kib);
}

static void kite_test_verbs_dma_mr(struct kunit *test)
{
	struct kite_ib_dev *kib = kite_vtest_get(test);
	struct kite_hw_stats before = {}, during = {}, after = {};
	struct ib_mr *mr, *mr2;
	struct ib_pd *pd;
	u32 key;

	pd = ib_alloc_pd(&kib->ibdev, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(pd), "ib_alloc_pd: %ld",
			       PTR_ERR(pd));
	/* ib_alloc_pd() took a DMA MR for the PD's local_dma_lkey. */
	KUNIT_EXPECT_NE(test, kite_key_index(pd->local_dma_lkey), 0);

	KUNIT_EXPECT_EQ(test, kite_vtest_stats(kib, &before), 0);
	mr = kite_get_dma_mr(pd, IB_ACCESS_LOCAL_WRITE);
	KUNIT_EXPECT_FALSE(test, IS_ERR(mr));
	if (!IS_ERR(mr)) {
		mr->device = pd->device;
		mr->pd = pd;
		key = mr->lkey;
		KUNIT_EXPECT_EQ(test, mr->rkey, key);
		KUNIT_EXPECT_EQ(test, kite_vtest_stats(kib, &during), 0);
		KUNIT_EXPECT_EQ(test, during.num_mr, before.num_mr + 1);
		KUNIT_EXPECT_EQ(test, kite_dereg_mr(mr, NULL), 0);

		/* The index comes back with a new variant: the old key is stale. */
		mr2 = kite_get_dma_mr(pd, IB_ACCESS_LOCAL_WRITE);
		KUNIT_EXPECT_FALSE(test, IS_ERR(mr2));
		if (!IS_ERR(mr2)) {
			mr2->device = pd->device;
			mr2->pd = pd;
			KUNIT_EXPECT_NE(test, mr2->lkey, key);
			KUNIT_EXPECT_EQ(test,
					kite_cmd_dereg_mr(&kib->kdev->admin, 0,
							  key), -ENOENT);
			KUNIT_EXPECT_EQ(test, kite_dereg_mr(mr2, NULL), 0);
		}
	}
	/* Remote access through a DMA MR is not offered. */
	mr = kite_get_dma_mr(pd, IB_ACCESS_LOCAL_WRITE |
			     IB_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(mr), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, kite_vtest_stats(kib, &after), 0);
	KUNIT_EXPECT_EQ(test, after.num_mr, before.num_mr);
	KUNIT_EXPECT_EQ(test, ib_dealloc_pd_user(pd, NULL), 0);
	kite_ib_dev_put(kib);
}

/*
 * The memory-management capabilities follow the device's; no PD with a
 * global rkey (the DMA MR is local-only); windows of both types come and
 * go, named by their index whatever the key's variant.
 */
static void kite_test_verbs_mem_mgt(struct kunit *test)
{
	static const enum ib_mw_type types[] = { IB_MW_TYPE_1, IB_MW_TYPE_2 };
	struct kite_ib_dev *kib = kite_vtest_get(test);
	const struct ib_device_attr *attr = &kib->ibdev.attrs;
	struct kite_mw *mw;
	struct ib_pd *pd;
	size_t i;

	KUNIT_EXPECT_EQ(test,
			!!(attr->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS),
			kite_has_mem_mgt(kib));
	KUNIT_EXPECT_EQ(test, attr->max_fast_reg_page_list_len,
			kite_has_mem_mgt(kib) ? kib->kdev->caps.max_frwr_pages : 0);
	KUNIT_EXPECT_EQ(test, !!(attr->device_cap_flags & IB_DEVICE_MEM_WINDOW),
			kite_has_mw(kib));
	KUNIT_EXPECT_EQ(test,
			!!(attr->device_cap_flags & IB_DEVICE_MEM_WINDOW_TYPE_2B),
			kite_has_mw(kib));
	KUNIT_EXPECT_LE(test, attr->max_sge_rd, attr->max_send_sge);

	pd = ib_alloc_pd(&kib->ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(pd), -EOPNOTSUPP);

	pd = ib_alloc_pd(&kib->ibdev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pd));
	mw = kunit_kzalloc(test, sizeof(*mw), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mw);
	mw->ibmw.device = &kib->ibdev;
	mw->ibmw.pd = pd;
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		mw->ibmw.type = types[i];
		if (!kite_has_mw(kib)) {
			KUNIT_EXPECT_EQ(test, kite_alloc_mw(&mw->ibmw, NULL),
					-EOPNOTSUPP);
			continue;
		}
		KUNIT_ASSERT_EQ(test, kite_alloc_mw(&mw->ibmw, NULL), 0);
		KUNIT_EXPECT_NE(test, kite_key_index(mw->ibmw.rkey), 0);
		mw->ibmw.rkey = ib_inc_rkey(mw->ibmw.rkey);
		KUNIT_EXPECT_EQ(test, kite_dealloc_mw(&mw->ibmw), 0);
		KUNIT_EXPECT_EQ(test, kite_dealloc_mw(&mw->ibmw), -ENOENT);
	}
	mw->ibmw.type = IB_MW_TYPE_2 + 1;
	KUNIT_EXPECT_EQ(test, kite_alloc_mw(&mw->ibmw, NULL),
			kite_has_mw(kib) ? -EINVAL : -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, ib_dealloc_pd_user(pd, NULL), 0);
	kite_ib_dev_put(kib);
}

static int kite_vtest_modify(struct ib_qp *qp, struct ib_qp_attr *attr,
			     enum ib_qp_state state, int mask)
{
	attr->qp_state = state;
	return ib_modify_qp(qp, attr, mask | IB_QP_STATE);
}

/* UD: RESET -> INIT -> RTR -> RTS, query, illegal moves, ERR -> RESET. */
static void kite_vtest_ud_walk(struct kunit *test, struct kite_ib_dev *kib,
			       struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr = {};

	/* A required attribute missing (QKEY) is refused. */
	attr.pkey_index = 0;
	attr.port_num = KITE_PORT_NUM;
	KUNIT_EXPECT_EQ(test, kite_vtest_modify(qp, &attr, IB_QPS_INIT,
						IB_QP_PKEY_INDEX | IB_QP_PORT),
			-EINVAL);
	attr.qkey = KITE_TEST_QKEY;
	KUNIT_EXPECT_EQ(test, kite_vtest_modify(qp, &attr, IB_QPS_INIT,
						IB_QP_PKEY_INDEX | IB_QP_PORT |
						IB_QP_QKEY), 0);
	KUNIT_EXPECT_EQ(test, kite_vtest_modify(qp, &attr, IB_QPS_RTR, 0), 0);
	attr.sq_psn = KITE_TEST_SQ_PSN;
	KUNIT_EXPECT_EQ(test, kite_vtest_modify(qp, &attr, IB_QPS_RTS,
						IB_QP_SQ_PSN), 0);

	memset(&attr, 0, sizeof(attr));
	KUNIT_EXPECT_EQ(test, ib_query_qp(qp, &attr, IB_QP_STATE, &init), 0);
	KUNIT_EXPECT_EQ(test, attr.qp_state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, attr.qkey, KITE_TEST_QKEY);
	KUNIT_EXPECT_EQ(test, attr.sq_psn, KITE_TEST_SQ_PSN);
	KUNIT_EXPECT_EQ(test, attr.port_num, KITE_PORT_NUM);
	KUNIT_EXPECT_EQ(test, init.qp_type, IB_QPT_UD);
	KUNIT_EXPECT_GE(test, init.cap.max_send_wr, KITE_TEST_WR);

	/* RTS -> RTR is illegal. */
	KUNIT_EXPECT_EQ(test, kite_vtest_modify(qp, &attr, IB_QPS_RTR, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kite_vtest_modify(qp, &attr, IB_QPS_ERR, 0), 0);
	KUNIT_EXPECT_EQ(test, kite_vtest_modify(qp, &attr, IB_QPS_RESET, 0), 0);
	memset(&attr, 0, sizeof(attr));
	KUNIT_EXPECT_EQ(test, ib_query_qp(qp, &attr, IB_QP_STATE, &init), 0);
	KUNIT_EXPECT_EQ(test, attr.qp_state, IB_QPS_RESET);
	/* Moving to RESET cleared the attributes on the device. */
	KUNIT_EXPECT_EQ(test, attr.qkey, 0);
}

/* RC: INIT, then RTR/RTS with a loopback path to the device's GID 0. */
static void kite_vtest_rc_walk(struct kunit *test, struct kite_ib_dev *kib,
			       struct ib_qp *qp)
{
	const struct ib_gid_attr *gid;
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr = {};
	union ib_gid dgid;
	u32 sgid_index;
	int mask;

	/* RESET -> RTS is illegal. */
	attr.sq_psn = KITE_TEST_SQ_PSN;
	KUNIT_EXPECT_EQ(test, kite_vtest_modify(qp, &attr, IB_QPS_RTS,
						IB_QP_SQ_PSN), -EINVAL);
	attr.pkey_index = 0;
	attr.port_num = KITE_PORT_NUM;
	attr.qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			       IB_ACCESS_REMOTE_READ;
	KUNIT_EXPECT_EQ(test, kite_vtest_modify(qp, &attr, IB_QPS_INIT,
						IB_QP_PKEY_INDEX | IB_QP_PORT |
						IB_QP_ACCESS_FLAGS), 0);
	memset(&attr, 0, sizeof(attr));
	KUNIT_EXPECT_EQ(test, ib_query_qp(qp, &attr, IB_QP_STATE, &init), 0);
	KUNIT_EXPECT_EQ(test, attr.qp_state, IB_QPS_INIT);
	KUNIT_EXPECT_EQ(test, attr.qp_access_flags,
			IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			IB_ACCESS_REMOTE_READ);

	gid = rdma_get_gid_attr(&kib->ibdev, KITE_PORT_NUM, 0);
	if (IS_ERR(gid)) {
		kunit_info(test, "no GID 0 (%ld): RC walk stops at INIT",
			   PTR_ERR(gid));
		return;
	}
	dgid = gid->gid;
	sgid_index = gid->index;
	rdma_put_gid_attr(gid);
	memset(&attr, 0, sizeof(attr));
	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr.ah_attr, KITE_PORT_NUM);
	rdma_ah_set_grh(&attr.ah_attr, &dgid, 0, sgid_index,
			KITE_TEST_HOP_LIMIT, 0);
	ether_addr_copy(attr.ah_attr.roce.dmac, kib->kdev->netdev->dev_addr);
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = qp->qp_num;
	attr.rq_psn = KITE_TEST_RQ_PSN;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = KITE_TEST_RNR_TIMER;
	mask = IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
	       IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
	KUNIT_EXPECT_EQ(test, kite_vtest_modify(qp, &attr, IB_QPS_RTR, mask),
			0);
	attr.sq_psn = KITE_TEST_SQ_PSN;
	attr.timeout = KITE_TEST_TIMEOUT;
	attr.retry_cnt = KITE_TEST_RETRY;
	attr.rnr_retry = KITE_TEST_RETRY;
	attr.max_rd_atomic = 1;
	mask = IB_QP_SQ_PSN | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
	       IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC;
	KUNIT_EXPECT_EQ(test, kite_vtest_modify(qp, &attr, IB_QPS_RTS, mask),
			0);
	memset(&attr, 0, sizeof(attr));
	KUNIT_EXPECT_EQ(test, ib_query_qp(qp, &attr, IB_QP_STATE, &init), 0);
	KUNIT_EXPECT_EQ(test, attr.qp_state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, attr.path_mtu, IB_MTU_1024);
	KUNIT_EXPECT_EQ(test, attr.dest_qp_num, qp->qp_num);
	KUNIT_EXPECT_EQ(test, attr.rq_psn, KITE_TEST_RQ_PSN);
	KUNIT_EXPECT_EQ(test, attr.sq_psn, KITE_TEST_SQ_PSN);
	KUNIT_EXPECT_EQ(test, attr.timeout, KITE_TEST_TIMEOUT);
	KUNIT_EXPECT_EQ(test, attr.retry_cnt, KITE_TEST_RETRY);
	KUNIT_EXPECT_EQ(test, attr.max_rd_atomic, 1);
	KUNIT_EXPECT_EQ(test, rdma_ah_read_grh(&attr.ah_attr)->hop_limit,
			KITE_TEST_HOP_LIMIT);
	KUNIT_EXPECT_TRUE(test, ether_addr_equal(attr.ah_attr.roce.dmac,
						 kib->kdev->netdev->dev_addr));
	kunit_info(test, "RC QP %u reached RTS over GID %u", qp->qp_num,
		   sgid_index);
}

static void kite_vtest_qp(struct kunit *test, enum ib_qp_type type)
{
	struct kite_ib_dev *kib = kite_vtest_get(test);
	struct kite_hw_stats before = {}, during = {}, after = {};
	struct ib_qp_init_attr init;
	struct ib_qp *qp;
	struct ib_pd *pd;
	struct ib_cq *cq;

	pd = ib_alloc_pd(&kib->ibdev, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(pd), "ib_alloc_pd: %ld",
			       PTR_ERR(pd));
	cq = kite_vtest_cq(kib, KITE_TEST_CQE, 0, 0);
	KUNIT_EXPECT_FALSE(test, IS_ERR(cq));
	if (IS_ERR(cq))
		goto out_pd;
	KUNIT_EXPECT_EQ(test, kite_vtest_stats(kib, &before), 0);

	kite_vtest_qp_init(&init, type, cq);
	qp = ib_create_qp(pd, &init);
	if (kite_vtest_limit_err(kib, type) == -EOPNOTSUPP) {
		/* A transport the device lacks (cap_flags) is not offered. */
		KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(qp), -EOPNOTSUPP);
		if (!IS_ERR(qp))
			ib_destroy_qp(qp);
		kunit_info(test, "QP type %d not offered: cap_flags 0x%x", type,
			   kib->kdev->caps.cap_flags);
		goto out_cq;
	}
	KUNIT_EXPECT_FALSE(test, IS_ERR(qp));
	if (IS_ERR(qp))
		goto out_cq;
	KUNIT_EXPECT_GE(test, qp->qp_num, 2);
	KUNIT_EXPECT_EQ(test, init.cap.max_send_wr, KITE_TEST_WR);
	KUNIT_EXPECT_GE(test, init.cap.max_send_sge, KITE_TEST_SGE);
	KUNIT_EXPECT_GE(test, init.cap.max_inline_data, KITE_TEST_INLINE);
	KUNIT_EXPECT_EQ(test, kite_vtest_stats(kib, &during), 0);
	KUNIT_EXPECT_EQ(test, during.num_qp, before.num_qp + 1);
	/* A CQ in use by a QP cannot go. */
	KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(cq, NULL), -EBUSY);

	if (type == IB_QPT_UD)
		kite_vtest_ud_walk(test, kib, qp);
	else
		kite_vtest_rc_walk(test, kib, qp);

	KUNIT_EXPECT_EQ(test, ib_destroy_qp(qp), 0);
	KUNIT_EXPECT_EQ(test, kite_vtest_stats(kib, &after), 0);
	KUNIT_EXPECT_EQ(test, after.num_qp, before.num_qp);
out_cq:
	KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(cq, NULL), 0);
out_pd:
	KUNIT_EXPECT_EQ(test, ib_dealloc_pd_user(pd, NULL), 0);
	kite_ib_dev_put(kib);
}

static void kite_test_verbs_qp_ud(struct kunit *test)
{
	kite_vtest_qp(test, IB_QPT_UD);
}

static void kite_test_verbs_qp_rc(struct kunit *test)
{
	kite_vtest_qp(test, IB_QPT_RC);
}

/* Over-limit capabilities, unsupported types and flags: -EINVAL/-EOPNOTSUPP. */
static void kite_test_verbs_qp_limits(struct kunit *test)
{
	struct kite_ib_dev *kib = kite_vtest_get(test);
	const struct kite_caps *caps = &kib->kdev->caps;
	struct kite_hw_stats before = {}, after = {};
	struct ib_qp_init_attr init;
	struct ib_pd *pd;
	struct ib_cq *cq;

	pd = ib_alloc_pd(&kib->ibdev, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(pd), "ib_alloc_pd: %ld",
			       PTR_ERR(pd));
	cq = kite_vtest_cq(kib, KITE_TEST_CQE, 0, 0);
	KUNIT_EXPECT_FALSE(test, IS_ERR(cq));
	if (IS_ERR(cq))
		goto out_pd;
	KUNIT_EXPECT_EQ(test, kite_vtest_stats(kib, &before), 0);

	kite_vtest_qp_init(&init, IB_QPT_RC, cq);
	init.cap.max_send_wr = caps->max_qp_wr + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(pd, &init)),
			kite_vtest_limit_err(kib, IB_QPT_RC));
	kite_vtest_qp_init(&init, IB_QPT_RC, cq);
	init.cap.max_recv_wr = caps->max_qp_wr + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(pd, &init)),
			kite_vtest_limit_err(kib, IB_QPT_RC));
	kite_vtest_qp_init(&init, IB_QPT_UC, cq);
	init.cap.max_send_sge = caps->max_sge + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(pd, &init)),
			kite_vtest_limit_err(kib, IB_QPT_UC));
	kite_vtest_qp_init(&init, IB_QPT_UD, cq);
	init.cap.max_recv_sge = caps->max_sge + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(pd, &init)),
			kite_vtest_limit_err(kib, IB_QPT_UD));
	kite_vtest_qp_init(&init, IB_QPT_RC, cq);
	init.cap.max_recv_sge = caps->max_sge + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(pd, &init)),
			kite_vtest_limit_err(kib, IB_QPT_RC));
	kite_vtest_qp_init(&init, IB_QPT_RC, cq);
	init.cap.max_inline_data = caps->max_inline + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(pd, &init)),
			kite_vtest_limit_err(kib, IB_QPT_RC));
	/*
	 * With UD, ib_mad holds the port's GSI QP (QP1) and the device
	 * refuses a second one; without UD there is no GSI QP at all.
	 */
	kite_vtest_qp_init(&init, IB_QPT_GSI, cq);
	init.port_num = KITE_PORT_NUM;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(pd, &init)),
			(caps->cap_flags & KITE_DEV_CAP_UD) ? -EBUSY :
							      -EOPNOTSUPP);
	kite_vtest_qp_init(&init, IB_QPT_RC, cq);
	init.create_flags = IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(pd, &init)),
			-EOPNOTSUPP);

	KUNIT_EXPECT_EQ(test, kite_vtest_stats(kib, &after), 0);
	KUNIT_EXPECT_EQ(test, after.num_qp, before.num_qp);
	KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(cq, NULL), 0);
out_pd:
	KUNIT_EXPECT_EQ(test, ib_dealloc_pd_user(pd, NULL), 0);
	kite_ib_dev_put(kib);
}

/* Ring sizing as kite-abi.h documents it for the provider. */
static void kite_test_verbs_strides(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kite_sq_log_stride(0, 0), KITE_SQ_MIN_LOG_STRIDE);
	KUNIT_EXPECT_EQ(test, kite_sq_log_stride(2, 0), 7);
	KUNIT_EXPECT_EQ(test, kite_sq_log_stride(8, 0), 8);
	KUNIT_EXPECT_EQ(test, kite_sq_log_stride(1, 256), 9);
	KUNIT_EXPECT_EQ(test, kite_rq_log_stride(0), KITE_RQ_MIN_LOG_STRIDE);
	KUNIT_EXPECT_EQ(test, kite_rq_log_stride(1), 5);
	KUNIT_EXPECT_EQ(test, kite_rq_log_stride(8), 8);
	KUNIT_EXPECT_EQ(test, kite_cq_depth(1), 4);
	KUNIT_EXPECT_EQ(test, kite_cq_depth(5), 8);
	KUNIT_EXPECT_EQ(test, kite_cq_depth(64), 64);
}

/* req_notify_cq writes the CQ doorbell; the device reports the CQ armed. */
static void kite_test_verbs_cq_notify(struct kunit *test)
{
	struct kite_ib_dev *kib = kite_vtest_get(test);
	struct kite_cq_info info;
	struct ib_cq *cq;

	cq = kite_vtest_cq(kib, KITE_TEST_CQE, 0, 0);
	KUNIT_EXPECT_FALSE(test, IS_ERR(cq));
	if (IS_ERR(cq))
		goto out;

	KUNIT_EXPECT_EQ(test, kite_test_query_cq(cq, &info), 0);
	KUNIT_EXPECT_EQ(test, info.flags & KITE_CQ_FLAG_ARMED, 0);
	KUNIT_EXPECT_EQ(test, info.log_depth, 7);

	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(cq, IB_CQ_SOLICITED), 0);
	KUNIT_EXPECT_EQ(test, kite_test_query_cq(cq, &info), 0);
	KUNIT_EXPECT_EQ(test, info.flags & KITE_CQ_FLAG_ARMED,
			KITE_CQ_FLAG_ARMED);

	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
					       IB_CQ_REPORT_MISSED_EVENTS), 0);
	KUNIT_EXPECT_EQ(test, kite_test_query_cq(cq, &info), 0);
	KUNIT_EXPECT_EQ(test, info.flags & KITE_CQ_FLAG_ARMED,
			KITE_CQ_FLAG_ARMED);

	KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(cq, NULL), 0);
out:
	kite_ib_dev_put(kib);
}

/* resize_cq up and down: the device reports the new depth, arm kept. */
static void kite_test_verbs_cq_resize(struct kunit *test)
{
	struct kite_ib_dev *kib = kite_vtest_get(test);
	struct kite_cq_info info;
	struct ib_cq *cq;

	cq = kite_vtest_cq(kib, KITE_TEST_CQE, 0, 0);
	KUNIT_EXPECT_FALSE(test, IS_ERR(cq));
	if (IS_ERR(cq))
		goto out;

	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(cq, IB_CQ_NEXT_COMP), 0);
	KUNIT_EXPECT_EQ(test, ib_resize_cq(cq, 300), 0);
	KUNIT_EXPECT_EQ(test, cq->cqe, 512);
	KUNIT_EXPECT_EQ(test, kite_test_query_cq(cq, &info), 0);
	KUNIT_EXPECT_EQ(test, info.log_depth, 9);
	KUNIT_EXPECT_EQ(test, info.flags & KITE_CQ_FLAG_ARMED,
			KITE_CQ_FLAG_ARMED);

	KUNIT_EXPECT_EQ(test, ib_resize_cq(cq, 5), 0);
	KUNIT_EXPECT_EQ(test, cq->cqe, 8);
	KUNIT_EXPECT_EQ(test, kite_test_query_cq(cq, &info), 0);
	KUNIT_EXPECT_EQ(test, info.log_depth, 3);

	KUNIT_EXPECT_EQ(test, ib_resize_cq(cq, kib->kdev->caps.max_cqe + 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, cq->cqe, 8);
	KUNIT_EXPECT_EQ(test, kite_test_query_cq(cq, &info), 0);
	KUNIT_EXPECT_EQ(test, info.log_depth, 3);

	KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(cq, NULL), 0);
out:
	kite_ib_dev_put(kib);
}

static struct kunit_case kite_verbs_cases[] = {
	KUNIT_CASE(kite_test_verbs_strides),
	KUNIT_CASE(kite_test_verbs_cq),
	KUNIT_CASE(kite_test_verbs_cq_notify),
	KUNIT_CASE(kite_test_verbs_cq_resize),
	KUNIT_CASE(kite_test_verbs_dma_mr),
	KUNIT_CASE(kite_test_verbs_mem_mgt),
	KUNIT_CASE(kite_test_verbs_qp_ud),
	KUNIT_CASE(kite_test_verbs_qp_rc),
	KUNIT_CASE(kite_test_verbs_qp_limits),
	{}
};

static struct kunit_suite kite_verbs_suite = {
	.name = "kite_verbs",
	.test_cases = kite_verbs_cases,
};

kunit_test_suite(kite_verbs_suite);
