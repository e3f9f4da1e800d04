// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite kite_datapath, counter case: the ib_device_ops counter
 * interface ("rdma statistic qp") on the loopback RC pair, called as
 * ib_core calls it: a counter's values are what its bound QPs did since
 * they were bound, they stay when a QP is unbound, and the port counters
 * leave out what counters hold (ib_core adds it back).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/kref.h>
#include <linux/mutex.h>
#include <rdma/rdma_counter.h>

#include "kite_datapath_test.h"

/* Port and counter entries, see kite_port_stats[] in kite_counters.c. */
#define KITE_CT_TX_PKTS	0
#define KITE_CT_RX_PKTS	1

/* A SEND of KITE_DT_MSG_LEN from A to B (two packets), completed. */
static void kite_ct_send(struct kunit *test, struct kite_dt *dt, u64 wr_id)
{
	struct ib_sge sge = kite_dt_sge(dt, KITE_DT_A_SRC, KITE_DT_MSG_LEN);
	struct ib_send_wr wr = {
		.wr_id = wr_id,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = &sge,
		.num_sge = 1,
	};
	struct ib_wc wc[2];
	int i;

	KUNIT_ASSERT_EQ(test, kite_dt_post_recv(dt, dt->b, wr_id + 1,
						KITE_DT_B_BUF, PAGE_SIZE), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send(dt->a, &wr, NULL), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 2), 2);
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, wc[i].status, IB_WC_SUCCESS);
}

/* The QP's device counter @off (an offset in struct kite_qp_stats). */
static u64 kite_ct_qp_stat(struct kunit *test, struct ib_qp *ibqp,
			   size_t off)
{
	struct kite_ib_dev *kib = to_kib(ibqp->device);
	struct kite_qp *qp = to_kqp(ibqp);
	struct kite_qp_stats st;

	KUNIT_EXPECT_EQ(test, kite_cmd_query_qp_stats(&kib->kdev->admin,
						      qp->uctx, qp->qpn, &st),
			0);
	return le64_to_cpu(*(__le64 *)((u8 *)&st + off));
}

/* What a counter says for entry @i now. */
static u64 kite_ct_value(struct kunit *test, struct rdma_counter *c, int i)
{
	KUNIT_EXPECT_EQ(test, c->device->ops.counter_update_stats(c), 0);
	return c->stats->value[i];
}

/*
 * A counter as ib_core's alloc_and_bind() makes one. It holds a reference
 * of its own: should a case end with a QP still bound, ib_core's unbind
 * at destroy_qp leaves it alone.
 */
static struct rdma_counter *kite_ct_counter(struct kunit *test,
					    struct kite_ib_dev *kib)
{
	struct rdma_counter *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->device = &kib->ibdev;
	c->port = KITE_PORT_NUM;
	kref_init(&c->kref);
	kref_get(&c->kref);
	mutex_init(&c->lock);
	c->stats = kib->ibdev.ops.counter_alloc_stats(c);
	KUNIT_ASSERT_NOT_NULL(test, c->stats);
	return c;
}

void kite_test_dp_counters(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	const struct ib_device_ops *ops;
	struct rdma_hw_stats *port;
	struct kite_hw_stats hw1, hw2;
	struct rdma_counter *c, *bad;
	struct kite_qp *fake;
	u64 v1, v2, v3, r3, b_tx, b_rx, held;
	struct kite_ib_dev *kib;

	kite_dt_setup(test);
	kib = dt->kib;
	if (!kite_has_qp_stats(kib))
		kunit_skip(test, "device before ABI 1.1: no per-QP counters");
	ops = &kib->ibdev.ops;
	KUNIT_ASSERT_NOT_NULL(test, ops->counter_bind_qp);
	c = kite_ct_counter(test, kib);
	/* Only what the device counts per QP is shown. */
	KUNIT_EXPECT_FALSE(test, test_bit(KITE_CT_TX_PKTS, c->stats->is_disabled));
	KUNIT_EXPECT_TRUE(test, test_bit(KITE_IB_QP_NSTATS,
					 c->stats->is_disabled));

	/* Types the device does not count, another port: refused. */
	fake = kunit_kzalloc(test, sizeof(*fake), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fake);
	fake->ibqp.device = &kib->ibdev;
	fake->ibqp.qp_type = IB_QPT_RAW_PACKET;
	KUNIT_EXPECT_EQ(test, ops->counter_bind_qp(c, &fake->ibqp), -EOPNOTSUPP);
	fake->ibqp.qp_type = IB_QPT_XRC_TGT;
	KUNIT_EXPECT_EQ(test, ops->counter_bind_qp(c, &fake->ibqp), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, c->id, 0);
	bad = kite_ct_counter(test, kib);
	bad->port = KITE_PORT_NUM + 1;
	KUNIT_EXPECT_EQ(test, ops->counter_bind_qp(bad, dt->a), -EINVAL);
	KUNIT_EXPECT_EQ(test, bad->id, 0);
	KUNIT_EXPECT_NULL(test, dt->a->counter);
	KUNIT_EXPECT_EQ(test, ops->counter_unbind_qp(dt->a), -EINVAL);

	/* A is bound to a new counter, which gets an id; only once. */
	kite_ct_send(test, dt, 10);
	KUNIT_ASSERT_EQ(test, ops->counter_bind_qp(c, dt->a), 0);
	KUNIT_EXPECT_NE(test, c->id, 0);
	KUNIT_EXPECT_PTR_EQ(test, dt->a->counter, c);
	KUNIT_EXPECT_EQ(test, ops->counter_bind_qp(c, dt->a), -EINVAL);
	/* What A did before the bind is not the counter's. */
	KUNIT_EXPECT_EQ(test, kite_ct_value(test, c, KITE_CT_TX_PKTS), 0);

	kite_ct_send(test, dt, 20);
	v1 = kite_ct_value(test, c, KITE_CT_TX_PKTS);
	KUNIT_EXPECT_GE(test, v1, 2);

	/* B joins at 0; then the counter sums what A and B do. */
	KUNIT_EXPECT_EQ(test, ops->counter_bind_qp(c, dt->b), 0);
	KUNIT_EXPECT_EQ(test, kite_ct_value(test, c, KITE_CT_TX_PKTS), v1);
	b_rx = kite_ct_qp_stat(test, dt->b,
			       offsetof(struct kite_qp_stats, rx_packets));
	kite_ct_send(test, dt, 30);
	v2 = kite_ct_value(test, c, KITE_CT_TX_PKTS);
	KUNIT_EXPECT_GE(test, v2, v1 + 2);
	KUNIT_EXPECT_GE(test, kite_ct_qp_stat(test, dt->b,
					      offsetof(struct kite_qp_stats,
						       rx_packets)), b_rx + 2);

	/* The port leaves out what the counter holds; ib_core adds it. */
	port = ops->alloc_hw_port_stats(&kib->ibdev, KITE_PORT_NUM);
	KUNIT_ASSERT_NOT_NULL(test, port);
	KUNIT_EXPECT_EQ(test, kite_cmd_query_stats(&kib->kdev->admin, &hw1), 0);
	KUNIT_EXPECT_GT(test, ops->get_hw_stats(&kib->ibdev, port,
						KITE_PORT_NUM, 0), 0);
	held = kib->cnt_retired[KITE_CT_TX_PKTS] +
	       kite_ct_value(test, c, KITE_CT_TX_PKTS);
	KUNIT_EXPECT_EQ(test, kite_cmd_query_stats(&kib->kdev->admin, &hw2), 0);
	KUNIT_EXPECT_LE(test, hw1.roce_tx_packets,
			port->value[KITE_CT_TX_PKTS] + held);
	KUNIT_EXPECT_LE(test, port->value[KITE_CT_TX_PKTS] + held,
			hw2.roce_tx_packets);
	rdma_free_hw_stats_struct(port);

	/* A unbound: what it did stays, what it does next is not counted. */
	KUNIT_EXPECT_EQ(test, ops->counter_unbind_qp(dt->a), 0);
	KUNIT_EXPECT_NULL(test, dt->a->counter);
	v3 = kite_ct_value(test, c, KITE_CT_TX_PKTS);
	r3 = kite_ct_value(test, c, KITE_CT_RX_PKTS);
	KUNIT_EXPECT_GE(test, v3, v2);
	b_tx = kite_ct_qp_stat(test, dt->b,
			       offsetof(struct kite_qp_stats, tx_packets));
	b_rx = kite_ct_qp_stat(test, dt->b,
			       offsetof(struct kite_qp_stats, rx_packets));
	kite_ct_send(test, dt, 40);
	KUNIT_EXPECT_EQ(test, kite_ct_value(test, c, KITE_CT_TX_PKTS) - v3,
			kite_ct_qp_stat(test, dt->b,
					offsetof(struct kite_qp_stats,
						 tx_packets)) - b_tx);
	KUNIT_EXPECT_EQ(test, kite_ct_value(test, c, KITE_CT_RX_PKTS) - r3,
			kite_ct_qp_stat(test, dt->b,
					offsetof(struct kite_qp_stats,
						 rx_packets)) - b_rx);

	/* The last QP unbound, the counter keeps its values until dealloc. */
	v3 = kite_ct_value(test, c, KITE_CT_TX_PKTS);
	KUNIT_EXPECT_EQ(test, ops->counter_unbind_qp(dt->b), 0);
	KUNIT_EXPECT_GE(test, kite_ct_value(test, c, KITE_CT_TX_PKTS), v3);
	KUNIT_EXPECT_EQ(test, ops->counter_unbind_qp(dt->b), -EINVAL);
	KUNIT_EXPECT_EQ(test, ops->counter_dealloc(c), 0);
	KUNIT_EXPECT_EQ(test, ops->counter_update_stats(c), -EINVAL);
	KUNIT_EXPECT_EQ(test, ops->counter_dealloc(c), 0);
	rdma_free_hw_stats_struct(c->stats);
	rdma_free_hw_stats_struct(bad->stats);
}
