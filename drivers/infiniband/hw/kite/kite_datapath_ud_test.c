// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite kite_datapath, UD cases: two UD QPs in loopback through an
 * address handle (GRH area, UD completion fields, Q_Key rules, the
 * over-MTU rule), address handles created in atomic context, the GSI QP
 * that ib_mad runs on the port, and UD over IPv4 (the case gives the
 * netdev an address in 198.18.0.0/15 and removes it again).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/jiffies.h>
#include <linux/string.h>
#include <linux/kite/compat.h>
#include <net/addrconf.h>
#include <net/checksum.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "kite_datapath_test.h"

/* ---- UD, address handles and the GSI QP -------------------------------- */

#define KITE_DT_QKEY_A		0x11111111
#define KITE_DT_QKEY_B		0x22222222
#define KITE_DT_QKEY_OWN	0x80000000	/* "use the QP's own Q_Key" */
#define KITE_DT_UD_LEN		512
#define KITE_DT_UD_SPLIT	300
#define KITE_DT_NO_RECV_MS	300	/* how long a dropped datagram is awaited */
#define KITE_DT_POLL_MS		20
#define KITE_DT_DAD_MS		15000	/* IPv6 DAD of the link-local address */
#define KITE_DT_MAD_CLASS	0x30	/* vendor class no agent registers */
#define KITE_DT_MAD_TID		0x0123456789abcdefULL
#define KITE_DT_MAD_ATTR	0x1234

/* Bytes of a RoCEv2 UD SEND (with ImmDt) after the UDP header. */
#define KITE_DT_UDP_HDR		8
#define KITE_DT_BTH		12
#define KITE_DT_DETH		8
#define KITE_DT_IMMDT		4
#define KITE_DT_ICRC		4

/* IPv6 header fields in the 40-byte GRH area (RFC 8200). */
#define KITE_DT_IP6_PLEN	4
#define KITE_DT_IP6_NEXT	6
#define KITE_DT_IP6_HOPS	7
#define KITE_DT_IP6_SRC		8
#define KITE_DT_IP6_DST		24

/* A UD QP in RTS with Q_Key @qkey. */
struct ib_qp *kite_dt_create_ud(struct kunit *test, struct kite_dt *dt,
				u32 qkey)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_UD,
		.send_cq = dt->cq,
		.recv_cq = dt->cq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.event_handler = kite_dt_qp_event,
		.qp_context = dt,
		.cap = {
			.max_send_wr = KITE_DT_WR,
			.max_recv_wr = KITE_DT_WR,
			.max_send_sge = KITE_DT_SGE,
			.max_recv_sge = KITE_DT_SGE,
			.max_inline_data = KITE_DT_INLINE,
		},
	};
	struct ib_qp_attr attr = {};
	struct ib_qp *qp;
	int err;

	KUNIT_ASSERT_TRUE_MSG(test, dt->kib->kdev->caps.cap_flags & KITE_DEV_CAP_UD,
			      "device cap_flags 0x%x lack KITE_DEV_CAP_UD",
			      dt->kib->kdev->caps.cap_flags);
	qp = ib_create_qp(dt->pd, &init);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(qp), "UD QP: %ld", PTR_ERR(qp));

	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = KITE_PORT_NUM;
	attr.qkey = qkey;
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (!err) {
		attr.qp_state = IB_QPS_RTR;
		err = ib_modify_qp(qp, &attr, IB_QP_STATE);
	}
	if (!err) {
		attr.qp_state = IB_QPS_RTS;
		attr.sq_psn = KITE_DT_PSN_A;
		err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN);
	}
	if (err)
		ib_destroy_qp(qp);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "UD QP does not reach RTS");
	return qp;
}

/* AH attributes towards the port itself: GID 0 and the port's own MAC. */
static void kite_dt_self_ah_attr(struct kunit *test, struct kite_dt *dt,
				 struct rdma_ah_attr *attr, union ib_gid *gid)
{
	const struct ib_gid_attr *sgid;

	sgid = rdma_get_gid_attr(&dt->kib->ibdev, KITE_PORT_NUM, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(sgid), "no GID 0: %ld",
			       PTR_ERR(sgid));
	*gid = sgid->gid;
	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, KITE_PORT_NUM);
	rdma_ah_set_grh(attr, gid, 0, sgid->index, KITE_DT_HOP_LIMIT, 0);
	ether_addr_copy(attr->roce.dmac, dt->kib->kdev->netdev->dev_addr);
	rdma_put_gid_attr(sgid);
}

static int kite_dt_ud_send(struct ib_qp *qp, u64 wr_id, struct ib_ah *ah,
			   u32 remote_qpn, u32 remote_qkey, struct ib_sge *sge,
			   int num_sge, enum ib_wr_opcode opcode, int flags)
{
	struct ib_ud_wr wr = {
		.wr = {
			.wr_id = wr_id,
			.opcode = opcode,
			.send_flags = IB_SEND_SIGNALED | flags,
			.sg_list = sge,
			.num_sge = num_sge,
			.ex.imm_data = cpu_to_be32(KITE_DT_IMM),
		},
		.ah = ah,
		.remote_qpn = remote_qpn,
		.remote_qkey = remote_qkey,
	};

	return ib_post_send(qp, &wr.wr, NULL);
}

/* Stats counter @f of the device, or ~0 when QUERY_STATS fails. */
#define kite_dt_stat(kib, f) ({					\
	struct kite_hw_stats __st;					\
	kite_cmd_query_stats(&(kib)->kdev->admin, &__st) ? ~0ULL : __st.f;	\
})

/*
 * Kernel UD QPs in loopback: SEND with immediate data over two SGEs and an
 * inline SEND with the "own Q_Key" rule, to an AH of the port's own GID
 * and MAC. The receive completion carries the UD fields (src_qp, GRH,
 * network header type, source MAC) and its buffer starts with the 40-byte
 * GRH area holding the IPv6 header of the packet (GID 0 is the link-local
 * IPv6 GID), then the payload. Posting rejects what UD cannot do.
 */
void kite_test_dp_ud_send(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct rdma_ah_attr attr, q;
	struct ib_wc wc[2], *s, *r;
	struct ib_sge sge[2];
	struct ib_ah *ah;
	union ib_gid gid;
	u8 *src, *dst;
	int i;

	kite_dt_setup_common(test);
	dt->a = kite_dt_create_ud(test, dt, KITE_DT_QKEY_A);
	dt->b = kite_dt_create_ud(test, dt, KITE_DT_QKEY_A);
	kite_dt_self_ah_attr(test, dt, &attr, &gid);
	ah = rdma_create_ah(dt->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(ah), "create_ah: %ld",
			       PTR_ERR(ah));
	KUNIT_EXPECT_EQ(test, to_kah(ah)->av.net_type,
			ipv6_addr_v4mapped((struct in6_addr *)gid.raw) ?
			KITE_NET_IPV4 : KITE_NET_IPV6);
	KUNIT_EXPECT_EQ(test, rdma_query_ah(ah, &q), 0);
	KUNIT_EXPECT_EQ(test, memcmp(rdma_ah_read_grh(&q)->dgid.raw, gid.raw,
				     sizeof(gid.raw)), 0);
	KUNIT_EXPECT_EQ(test, rdma_ah_read_grh(&q)->hop_limit,
			KITE_DT_HOP_LIMIT);
	KUNIT_EXPECT_TRUE(test, ether_addr_equal(q.roce.dmac,
						 dt->kib->kdev->netdev->dev_addr));

	src = kite_dt_va(dt, KITE_DT_A_SRC);
	dst = kite_dt_va(dt, KITE_DT_B_BUF);
	for (i = 0; i < KITE_DT_UD_LEN; i++)
		src[i] = i * 13 + 5;
	memset(dst, 0, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, kite_dt_post_recv(dt, dt->b, 2, KITE_DT_B_BUF,
						PAGE_SIZE), 0);
	sge[0] = kite_dt_sge(dt, KITE_DT_A_SRC, KITE_DT_UD_SPLIT);
	sge[1] = kite_dt_sge(dt, KITE_DT_A_SRC,
			     KITE_DT_UD_LEN - KITE_DT_UD_SPLIT);
	sge[1].addr += KITE_DT_UD_SPLIT;
	KUNIT_ASSERT_EQ(test, kite_dt_ud_send(dt->a, 1, ah, dt->b->qp_num,
					      KITE_DT_QKEY_A, sge, 2,
					      IB_WR_SEND_WITH_IMM, 0), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 2), 2);
	s = kite_dt_find_one(test, wc, 2, 1);
	r = kite_dt_find_one(test, wc, 2, 2);
	KUNIT_EXPECT_EQ(test, s->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, s->opcode, IB_WC_SEND);
	KUNIT_EXPECT_PTR_EQ(test, s->qp, dt->a);
	KUNIT_EXPECT_EQ(test, r->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, r->opcode, IB_WC_RECV);
	KUNIT_EXPECT_PTR_EQ(test, r->qp, dt->b);
	KUNIT_EXPECT_EQ(test, r->byte_len, sizeof(struct ib_grh) +
			KITE_DT_UD_LEN);
	KUNIT_EXPECT_EQ(test, r->src_qp, dt->a->qp_num);
	KUNIT_EXPECT_EQ(test, r->pkey_index, 0);
	KUNIT_EXPECT_EQ(test, r->port_num, KITE_PORT_NUM);
	KUNIT_EXPECT_EQ(test, r->wc_flags & (IB_WC_GRH | IB_WC_WITH_IMM |
					     IB_WC_WITH_NETWORK_HDR_TYPE |
					     IB_WC_WITH_SMAC),
			IB_WC_GRH | IB_WC_WITH_IMM |
			IB_WC_WITH_NETWORK_HDR_TYPE | IB_WC_WITH_SMAC);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(r->ex.imm_data), KITE_DT_IMM);
	KUNIT_EXPECT_TRUE(test, ether_addr_equal(r->smac,
						 dt->kib->kdev->netdev->dev_addr));
	/* GID 0 is fe80:: + EUI-64: the packet went over IPv6. */
	KUNIT_EXPECT_EQ(test, r->network_hdr_type, RDMA_NETWORK_IPV6);
	KUNIT_EXPECT_EQ(test, r->sl, 0);
	/* The GRH area: the IPv6 header as received. */
	KUNIT_EXPECT_EQ(test, dst[0] >> 4, 6);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(dst + KITE_DT_IP6_PLEN),
			KITE_DT_UDP_HDR + KITE_DT_BTH + KITE_DT_DETH +
			KITE_DT_IMMDT + KITE_DT_UD_LEN + KITE_DT_ICRC);
	KUNIT_EXPECT_EQ(test, dst[KITE_DT_IP6_NEXT], IPPROTO_UDP);
	KUNIT_EXPECT_EQ(test, dst[KITE_DT_IP6_HOPS], KITE_DT_HOP_LIMIT);
	KUNIT_EXPECT_EQ(test, memcmp(dst + KITE_DT_IP6_SRC, gid.raw,
				     sizeof(gid.raw)), 0);
	KUNIT_EXPECT_EQ(test, memcmp(dst + KITE_DT_IP6_DST, gid.raw,
				     sizeof(gid.raw)), 0);
	KUNIT_EXPECT_EQ(test, memcmp(dst + sizeof(struct ib_grh), src,
				     KITE_DT_UD_LEN), 0);
	KUNIT_EXPECT_EQ(test, dst[sizeof(struct ib_grh) + KITE_DT_UD_LEN], 0);

	/* Inline, and Q_Key 0x80000000: A's own, which B holds too. */
	memset(dst, 0, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, kite_dt_post_recv(dt, dt->b, 4, KITE_DT_B_BUF,
						PAGE_SIZE), 0);
	sge[0].addr = (uintptr_t)src;	/* inline: a kernel virtual address */
	sge[0].length = KITE_DT_INLINE;
	sge[0].lkey = 0;
	KUNIT_ASSERT_EQ(test, kite_dt_ud_send(dt->a, 3, ah, dt->b->qp_num,
					      KITE_DT_QKEY_OWN, sge, 1,
					      IB_WR_SEND, IB_SEND_INLINE), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 2), 2);
	r = kite_dt_find_one(test, wc, 2, 4);
	KUNIT_EXPECT_EQ(test, r->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, r->byte_len, sizeof(struct ib_grh) +
			KITE_DT_INLINE);
	KUNIT_EXPECT_FALSE(test, r->wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, memcmp(dst + sizeof(struct ib_grh), src,
				     KITE_DT_INLINE), 0);

	/* What UD cannot do is refused at post time. */
	sge[0] = kite_dt_sge(dt, KITE_DT_A_SRC, KITE_DT_UD_LEN);
	KUNIT_EXPECT_EQ(test, kite_dt_ud_send(dt->a, 5, ah, dt->b->qp_num,
					      KITE_DT_QKEY_A, sge, 1,
					      IB_WR_RDMA_WRITE, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, kite_dt_ud_send(dt->a, 5, NULL, dt->b->qp_num,
					      KITE_DT_QKEY_A, sge, 1,
					      IB_WR_SEND, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, kite_dt_ud_send(dt->a, 5, ah, IB_QPN_MASK + 1,
					      KITE_DT_QKEY_A, sge, 1,
					      IB_WR_SEND, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, rdma_destroy_ah_user(ah, 0, NULL), 0);
}

/*
 * Q_Key checks: a datagram whose DETH Q_Key is not the receiving QP's is
 * dropped (no receive completion, the device's rx_roce_dropped counter
 * goes up), whether the WR named the wrong key or asked for the sender's
 * own (0x80000000) and that one differs. The send side completes
 * successfully: UD has no acknowledgment. The receive WQE stays posted
 * and takes the next datagram with the right key.
 */
void kite_test_dp_ud_qkey(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct rdma_ah_attr attr;
	struct ib_wc wc[2], *r;
	struct ib_sge sge;
	struct ib_ah *ah;
	union ib_gid gid;
	u64 before, after;
	u8 *src, *dst;

	kite_dt_setup_common(test);
	dt->a = kite_dt_create_ud(test, dt, KITE_DT_QKEY_A);
	dt->b = kite_dt_create_ud(test, dt, KITE_DT_QKEY_B);
	kite_dt_self_ah_attr(test, dt, &attr, &gid);
	ah = rdma_create_ah(dt->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ah));

	src = kite_dt_va(dt, KITE_DT_A_SRC);
	dst = kite_dt_va(dt, KITE_DT_B_BUF);
	memset(src, KITE_DT_PATTERN, KITE_DT_UD_LEN);
	memset(dst, 0, PAGE_SIZE);
	sge = kite_dt_sge(dt, KITE_DT_A_SRC, KITE_DT_UD_LEN);
	KUNIT_ASSERT_EQ(test, kite_dt_post_recv(dt, dt->b, 10, KITE_DT_B_BUF,
						PAGE_SIZE), 0);
	before = kite_dt_stat(dt->kib, roce_rx_dropped);

	KUNIT_ASSERT_EQ(test, kite_dt_ud_send(dt->a, 1, ah, dt->b->qp_num,
					      KITE_DT_QKEY_A, &sge, 1,
					      IB_WR_SEND, 0), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_ud_send(dt->a, 2, ah, dt->b->qp_num,
					      KITE_DT_QKEY_OWN, &sge, 1,
					      IB_WR_SEND, 0), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 2), 2);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc[1].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc[0].opcode, IB_WC_SEND);
	KUNIT_EXPECT_EQ(test, wc[1].opcode, IB_WC_SEND);
	msleep(KITE_DT_NO_RECV_MS);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(dt->cq, 1, wc), 0);
	after = kite_dt_stat(dt->kib, roce_rx_dropped);
	KUNIT_EXPECT_EQ(test, after - before, 2);
	KUNIT_EXPECT_EQ(test, dst[sizeof(struct ib_grh)], 0);

	/* The right key: the receive WQE that waited takes it. */
	KUNIT_ASSERT_EQ(test, kite_dt_ud_send(dt->a, 3, ah, dt->b->qp_num,
					      KITE_DT_QKEY_B, &sge, 1,
					      IB_WR_SEND, 0), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 2), 2);
	r = kite_dt_find_one(test, wc, 2, 10);
	KUNIT_EXPECT_EQ(test, r->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, r->byte_len, sizeof(struct ib_grh) +
			KITE_DT_UD_LEN);
	KUNIT_EXPECT_EQ(test, memcmp(dst + sizeof(struct ib_grh), src,
				     KITE_DT_UD_LEN), 0);
	KUNIT_EXPECT_EQ(test, rdma_destroy_ah_user(ah, 0, NULL), 0);
}

/*
 * A UD message larger than the port's active MTU: the verbs (IBTA
 * C10-93.1.1) want no packet and no error, so post_send takes it and it
 * completes successfully, but nothing goes on the wire (tx_roce_packets
 * unchanged) and the receiver gets nothing. A message of exactly the MTU
 * is carried.
 */
void kite_test_dp_ud_mtu(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct ib_port_attr pattr;
	struct rdma_ah_attr attr;
	struct ib_wc wc[2], *r;
	struct ib_sge sge;
	struct ib_ah *ah;
	union ib_gid gid;
	u64 before, after;
	int mtu;

	kite_dt_setup_common(test);
	KUNIT_ASSERT_EQ(test, ib_query_port(&dt->kib->ibdev, KITE_PORT_NUM,
					    &pattr), 0);
	mtu = ib_mtu_enum_to_int(pattr.active_mtu);
	KUNIT_ASSERT_GT(test, mtu, 0);
	KUNIT_ASSERT_LE(test, mtu + 1, (int)PAGE_SIZE);
	dt->a = kite_dt_create_ud(test, dt, KITE_DT_QKEY_A);
	dt->b = kite_dt_create_ud(test, dt, KITE_DT_QKEY_A);
	kite_dt_self_ah_attr(test, dt, &attr, &gid);
	ah = rdma_create_ah(dt->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ah));

	/* The receive spans two pages: room for GRH + MTU + more. */
	KUNIT_ASSERT_EQ(test, kite_dt_post_recv(dt, dt->b, 10, KITE_DT_B_BUF,
						2 * PAGE_SIZE), 0);
	sge = kite_dt_sge(dt, KITE_DT_A_SRC, mtu + 1);
	before = kite_dt_stat(dt->kib, roce_tx_packets);
	KUNIT_ASSERT_EQ(test, kite_dt_ud_send(dt->a, 1, ah, dt->b->qp_num,
					      KITE_DT_QKEY_A, &sge, 1,
					      IB_WR_SEND, 0), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 1);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_SUCCESS);
	msleep(KITE_DT_NO_RECV_MS);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(dt->cq, 1, wc), 0);
	after = kite_dt_stat(dt->kib, roce_tx_packets);
	KUNIT_EXPECT_EQ(test, after, before);

	sge.length = mtu;
	KUNIT_ASSERT_EQ(test, kite_dt_ud_send(dt->a, 2, ah, dt->b->qp_num,
					      KITE_DT_QKEY_A, &sge, 1,
					      IB_WR_SEND, 0), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 2), 2);
	r = kite_dt_find_one(test, wc, 2, 10);
	KUNIT_EXPECT_EQ(test, r->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, r->byte_len, sizeof(struct ib_grh) + mtu);
	KUNIT_EXPECT_EQ(test, kite_dt_stat(dt->kib, roce_tx_packets),
			before + 1);
	KUNIT_EXPECT_EQ(test, rdma_destroy_ah_user(ah, 0, NULL), 0);
}

/*
 * Address handles from atomic context (a spinlock held, interrupts off),
 * as ib_core's MAD layer creates them: no admin command, no sleeping
 * allocation. Then the driver's checks of the attributes.
 */
void kite_test_dp_ah_atomic(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct ib_gid_attr sgid = {};
	struct rdma_ah_attr attr, q;
	int qerr = -1, derr = -1;
	struct kite_av av = {};
	unsigned long flags;
	struct ib_ah *ah;
	union ib_gid gid;
	bool atomic_ctx;
	DEFINE_SPINLOCK(lock);

	kite_dt_setup_common(test);
	kite_dt_self_ah_attr(test, dt, &attr, &gid);
	spin_lock_irqsave(&lock, flags);
	/* A spinlock raises the preempt count (CONFIG_PREEMPT_COUNT). */
	atomic_ctx = preempt_count() && irqs_disabled();
	ah = rdma_create_ah(dt->pd, &attr, 0);
	if (!IS_ERR(ah)) {
		qerr = rdma_query_ah(ah, &q);
		derr = rdma_destroy_ah_user(ah, 0, NULL);
	}
	spin_unlock_irqrestore(&lock, flags);
	KUNIT_EXPECT_TRUE(test, atomic_ctx);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(ah), "create_ah in atomic: %ld",
			       PTR_ERR(ah));
	KUNIT_EXPECT_EQ(test, qerr, 0);
	KUNIT_EXPECT_EQ(test, derr, 0);
	KUNIT_EXPECT_EQ(test, memcmp(rdma_ah_read_grh(&q)->dgid.raw, gid.raw,
				     sizeof(gid.raw)), 0);
	KUNIT_EXPECT_EQ(test, rdma_ah_read_grh(&q)->sgid_index, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&dt->kib->num_ah), 0);

	/*
	 * A multicast destination: the group's Ethernet address, whatever
	 * the attribute's (IPv6 ff00::/8 here: 33:33 and the last 32 bits).
	 */
	gid.raw[0] = 0xff;
	rdma_ah_set_dgid_raw(&attr, gid.raw);
	ah = rdma_create_ah(dt->pd, &attr, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(ah), "multicast AH: %ld",
			       PTR_ERR(ah));
	KUNIT_EXPECT_EQ(test, rdma_query_ah(ah, &q), 0);
	KUNIT_EXPECT_EQ(test, q.roce.dmac[0], 0x33);
	KUNIT_EXPECT_EQ(test, q.roce.dmac[1], 0x33);
	KUNIT_EXPECT_EQ(test, memcmp(q.roce.dmac + 2, gid.raw + 12, 4), 0);
	rdma_destroy_ah_user(ah, 0, NULL);

	/* The checks of kite_av_from_ah_attr() on a made-up source GID. */
	kite_dt_self_ah_attr(test, dt, &attr, &gid);
	sgid.device = &dt->kib->ibdev;
	sgid.port_num = KITE_PORT_NUM;
	sgid.gid = gid;
	sgid.gid_type = IB_GID_TYPE_ROCE_UDP_ENCAP;
	attr.grh.sgid_attr = &sgid;
	KUNIT_EXPECT_EQ(test, kite_av_from_ah_attr(dt->kib, &attr, &av), 0);
	KUNIT_EXPECT_EQ(test, av.hop_limit, KITE_DT_HOP_LIMIT);
	KUNIT_EXPECT_EQ(test, memcmp(av.dgid, gid.raw, sizeof(av.dgid)), 0);
	sgid.gid_type = IB_GID_TYPE_ROCE;	/* RoCE v1 */
	KUNIT_EXPECT_EQ(test, kite_av_from_ah_attr(dt->kib, &attr, &av),
			-EOPNOTSUPP);
	sgid.gid_type = IB_GID_TYPE_IB;
	KUNIT_EXPECT_EQ(test, kite_av_from_ah_attr(dt->kib, &attr, &av),
			-EINVAL);
	sgid.gid_type = IB_GID_TYPE_ROCE_UDP_ENCAP;
	sgid.index = dt->kib->kdev->caps.max_gid;
	KUNIT_EXPECT_EQ(test, kite_av_from_ah_attr(dt->kib, &attr, &av),
			-EINVAL);
	sgid.index = 0;
	/* An IPv4 source GID towards a GID that is not IPv4-mapped. */
	ipv6_addr_set_v4mapped(htonl(INADDR_LOOPBACK),
			       (struct in6_addr *)sgid.gid.raw);
	KUNIT_EXPECT_EQ(test, kite_av_from_ah_attr(dt->kib, &attr, &av),
			-EINVAL);
	sgid.gid = gid;
	/* Only 20 bits are a flow label: the rest is dropped, not refused. */
	attr.grh.flow_label = U32_MAX;
	KUNIT_EXPECT_EQ(test, kite_av_from_ah_attr(dt->kib, &attr, &av), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(av.flow_label),
			IB_GRH_FLOWLABEL_MASK);
	attr.grh.flow_label = 0;
	attr.ah_flags = 0;
	KUNIT_EXPECT_EQ(test, kite_av_from_ah_attr(dt->kib, &attr, &av),
			-EINVAL);
}

/* Wait until @gid is a usable (not tentative) IPv6 address of the port. */
static bool kite_dt_wait_ip6(struct kite_dt *dt, const union ib_gid *gid)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(KITE_DT_DAD_MS);

	while (!ipv6_chk_addr(&init_net, (const struct in6_addr *)gid->raw,
			      dt->kib->kdev->netdev, 0)) {
		if (time_after(jiffies, deadline))
			return false;
		msleep(KITE_DT_POLL_MS);
	}
	return true;
}

/*
 * The GSI QP: with KITE_DEV_CAP_UD the port offers ib_core's MAD and CM
 * services, ib_mad has created QP1 on it (the device numbers it 1) and
 * moved it to RTS with the GSI Q_Key; a second GSI QP is refused. A MAD
 * sent to QP1 from a UD QP goes through ib_mad (which answers a Get of a
 * class nobody serves with "unsupported"): the reply comes back over an
 * AH that ib_core built from the receive completion and its GRH area.
 */
void kite_test_dp_gsi(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct ib_qp_init_attr init = {}, qinit;
	struct ib_port_attr pattr;
	struct rdma_ah_attr attr;
	struct ib_qp_attr qattr;
	struct ib_mad_hdr *hdr;
	struct ib_wc wc[2], *r;
	struct kite_qp *gsi;
	struct ib_device *ibdev;
	struct ib_sge sge;
	struct ib_ah *ah;
	union ib_gid gid;
	struct ib_qp *qp;
	u16 pkey;

	kite_dt_setup_common(test);
	ibdev = &dt->kib->ibdev;
	KUNIT_ASSERT_TRUE(test, dt->kib->kdev->caps.cap_flags & KITE_DEV_CAP_UD);
	KUNIT_EXPECT_TRUE(test, rdma_cap_ib_mad(ibdev, KITE_PORT_NUM));
	KUNIT_EXPECT_TRUE(test, rdma_cap_ib_cm(ibdev, KITE_PORT_NUM));
	KUNIT_EXPECT_EQ(test, rdma_max_mad_size(ibdev, KITE_PORT_NUM),
			IB_MGMT_MAD_SIZE);
	KUNIT_ASSERT_EQ(test, ib_query_port(ibdev, KITE_PORT_NUM, &pattr), 0);
	KUNIT_EXPECT_TRUE(test, pattr.port_cap_flags & IB_PORT_CM_SUP);
	KUNIT_EXPECT_EQ(test, ib_query_pkey(ibdev, KITE_PORT_NUM, 0, &pkey), 0);
	KUNIT_EXPECT_EQ(test, pkey, IB_DEFAULT_PKEY_FULL);
	KUNIT_EXPECT_EQ(test, ib_query_pkey(ibdev, KITE_PORT_NUM, 1, &pkey),
			-EINVAL);

	/* ib_mad's QP1 (it lives as long as the registration). */
	gsi = xa_load(&dt->kib->qps, KITE_GSI_QPN);
	KUNIT_ASSERT_NOT_NULL(test, gsi);
	KUNIT_EXPECT_EQ(test, gsi->ibqp.qp_type, IB_QPT_GSI);
	KUNIT_EXPECT_EQ(test, gsi->ibqp.qp_num, KITE_GSI_QPN);
	KUNIT_EXPECT_EQ(test, READ_ONCE(gsi->state), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, ib_query_qp(&gsi->ibqp, &qattr, IB_QP_QKEY,
					  &qinit), 0);
	KUNIT_EXPECT_EQ(test, qattr.qkey, IB_QP1_QKEY);

	init.qp_type = IB_QPT_GSI;
	init.port_num = KITE_PORT_NUM;
	init.send_cq = dt->cq;
	init.recv_cq = dt->cq;
	init.cap.max_send_wr = KITE_DT_WR;
	init.cap.max_recv_wr = KITE_DT_WR;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	qp = ib_create_qp(dt->pd, &init);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(qp), -EBUSY);
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);

	/*
	 * A Get of an unserved class to QP1; ib_mad answers it. Its reply
	 * AH needs ib_core to resolve the GID (GID 0, fe80:: + EUI-64) to a
	 * MAC through the IP stack: wait until the netdev's link-local
	 * address has passed duplicate address detection.
	 */
	dt->a = kite_dt_create_ud(test, dt, IB_QP1_QKEY);
	kite_dt_self_ah_attr(test, dt, &attr, &gid);
	KUNIT_ASSERT_TRUE_MSG(test, kite_dt_wait_ip6(dt, &gid),
			      "%pI6 not usable on %s", gid.raw,
			      netdev_name(dt->kib->kdev->netdev));
	ah = rdma_create_ah(dt->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ah));
	hdr = kite_dt_va(dt, KITE_DT_A_SRC);
	memset(hdr, 0, IB_MGMT_MAD_SIZE);
	hdr->base_version = IB_MGMT_BASE_VERSION;
	hdr->mgmt_class = KITE_DT_MAD_CLASS;
	hdr->class_version = 1;
	hdr->method = IB_MGMT_METHOD_GET;
	hdr->tid = cpu_to_be64(KITE_DT_MAD_TID);
	hdr->attr_id = cpu_to_be16(KITE_DT_MAD_ATTR);
	memset(kite_dt_va(dt, KITE_DT_B_BUF), 0, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, kite_dt_post_recv(dt, dt->a, 10, KITE_DT_B_BUF,
						PAGE_SIZE), 0);
	sge = kite_dt_sge(dt, KITE_DT_A_SRC, IB_MGMT_MAD_SIZE);
	KUNIT_ASSERT_EQ(test, kite_dt_ud_send(dt->a, 1, ah, KITE_GSI_QPN,
					      KITE_DT_QKEY_OWN, &sge, 1,
					      IB_WR_SEND, 0), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 2), 2);
	r = kite_dt_find_one(test, wc, 2, 10);
	KUNIT_EXPECT_EQ(test, r->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, r->src_qp, KITE_GSI_QPN);
	KUNIT_EXPECT_EQ(test, r->byte_len, sizeof(struct ib_grh) +
			IB_MGMT_MAD_SIZE);
	hdr = kite_dt_va(dt, KITE_DT_B_BUF) + sizeof(struct ib_grh);
	KUNIT_EXPECT_EQ(test, hdr->method, IB_MGMT_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(hdr->tid), KITE_DT_MAD_TID);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(hdr->attr_id), KITE_DT_MAD_ATTR);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(hdr->status),
			IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
	KUNIT_EXPECT_EQ(test, rdma_destroy_ah_user(ah, 0, NULL), 0);
}

/* ib_core adds a GID for a new address from a work item. */
#define KITE_DT_GID_MS		5000

/*
 * Wait until the RoCE v2 GID @gid of the port's netdev is in the GID table
 * (@present) or gone from it. Returns false at the deadline; when present,
 * its table index goes to @index.
 */
static bool kite_dt_wait_gid(struct kite_dt *dt, const union ib_gid *gid,
			     bool present, u32 *index)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(KITE_DT_GID_MS);
	const struct ib_gid_attr *attr;

	for (;;) {
		attr = rdma_find_gid(&dt->kib->ibdev, gid,
				     IB_GID_TYPE_ROCE_UDP_ENCAP,
				     dt->kib->kdev->netdev);
		if (!IS_ERR(attr)) {
			if (index)
				*index = attr->index;
			rdma_put_gid_attr(attr);
		}
		if (IS_ERR(attr) != present)
			return true;
		if (time_after(jiffies, deadline))
			return false;
		msleep(KITE_DT_POLL_MS);
	}
}

/*
 * The address handle UCX's UD transport (ud_verbs) asks for on RoCE: a
 * "DLID" of 0xC000 (its UDP source port base, which RoCE ignores), all 32
 * flow label bits set (the one's complement of path index 0), hop limit
 * 255 and traffic class 106 (DSCP 26 with ECT(0) in the ECN bits). It is
 * accepted, and a datagram sent over it carries the TOS byte and TTL as
 * given.
 */
#define KITE_DT_UCX_DLID	0xc000
#define KITE_DT_UCX_FLOW_LABEL	U32_MAX
#define KITE_DT_UCX_HOP_LIMIT	255
#define KITE_DT_UCX_TCLASS	106
#define KITE_DT_AH_UCX		2	/* its slot in dt->ah */

static void kite_dt_ucx_ah(struct kunit *test, struct kite_dt *dt,
			   union ib_gid *gid, u32 sgid_index)
{
	struct ib_ah **ah = &dt->ah[KITE_DT_AH_UCX];
	struct rdma_ah_attr attr = {};
	struct ib_wc wc[2], *r;
	struct kite_av *av;
	struct iphdr *iph;
	struct ib_sge sge;
	u8 *dst;

	attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr, KITE_PORT_NUM);
	rdma_ah_set_sl(&attr, 0);
	rdma_ah_set_dlid(&attr, KITE_DT_UCX_DLID);
	rdma_ah_set_path_bits(&attr, 0);
	rdma_ah_set_grh(&attr, gid, KITE_DT_UCX_FLOW_LABEL, sgid_index,
			KITE_DT_UCX_HOP_LIMIT, KITE_DT_UCX_TCLASS);
	ether_addr_copy(attr.roce.dmac, dt->kib->kdev->netdev->dev_addr);
	*ah = rdma_create_ah(dt->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(*ah), "UCX's AH: %ld",
			       PTR_ERR(*ah));
	av = &to_kah(*ah)->av;
	KUNIT_EXPECT_EQ(test, av->net_type, KITE_NET_IPV4);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(av->flow_label),
			IB_GRH_FLOWLABEL_MASK);
	KUNIT_EXPECT_EQ(test, av->traffic_class, KITE_DT_UCX_TCLASS);

	dst = kite_dt_va(dt, KITE_DT_B_BUF);
	memset(dst, 0, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, kite_dt_post_recv(dt, dt->b, 6, KITE_DT_B_BUF,
						PAGE_SIZE), 0);
	sge = kite_dt_sge(dt, KITE_DT_A_SRC, KITE_DT_UD_LEN);
	KUNIT_ASSERT_EQ(test, kite_dt_ud_send(dt->a, 5, *ah,
					      dt->b->qp_num, KITE_DT_QKEY_A,
					      &sge, 1, IB_WR_SEND, 0), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 2), 2);
	r = kite_dt_find_one(test, wc, 2, 6);
	KUNIT_ASSERT_EQ(test, r->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, r->network_hdr_type, RDMA_NETWORK_IPV4);
	iph = &((union rdma_network_hdr *)dst)->roce4grh;
	KUNIT_EXPECT_EQ(test, iph->tos, KITE_DT_UCX_TCLASS);
	KUNIT_EXPECT_EQ(test, iph->ttl, KITE_DT_UCX_HOP_LIMIT);
}

/*
 * UD over IPv4: the netdev gets an IPv4 address, ib_core gives the port
 * the RoCE v2 GID of it (IPv4-mapped), and a UD SEND with immediate data
 * to an AH of that GID travels as IPv4/UDP. The receive buffer's 40-byte
 * GRH area holds 20 zero bytes and then the IPv4 header as received, which
 * ib_core also recognises without the completion's network header type
 * (it checks the header checksum). ib_init_ah_attr_from_wc(), which
 * ib_mad uses to answer a MAD, turns the completion into a reply AH
 * towards the sender's GID, and a reply over it arrives as IPv4 too. When
 * the address goes, so does the GID.
 */
void kite_test_dp_ud_send_ipv4(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	const __be32 ip4 = htonl(KITE_DT_IP4_ADDR);
	struct rdma_ah_attr attr, reply;
	const struct ib_global_route *grh;
	union rdma_network_hdr *nh;
	struct ib_wc wc[2], *s, *r;
	struct iphdr *iph;
	struct ib_sge sge;
	union ib_gid gid;
	u32 sgid_index;
	u8 *src, *dst;
	u32 src_qp;
	int i, err;

	kite_dt_setup_common(test);
	dt->a = kite_dt_create_ud(test, dt, KITE_DT_QKEY_A);
	dt->b = kite_dt_create_ud(test, dt, KITE_DT_QKEY_A);

	err = kite_dt_ip4_addr(dt, RTM_NEWADDR, ip4);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "cannot add %pI4/%d to %s", &ip4,
			    KITE_DT_IP4_PREFIX, netdev_name(dt->kib->kdev->netdev));
	dt->ip4 = ip4;
	ipv6_addr_set_v4mapped(ip4, (struct in6_addr *)gid.raw);
	KUNIT_ASSERT_TRUE_MSG(test, kite_dt_wait_gid(dt, &gid, true,
						     &sgid_index),
			      "no RoCE v2 GID %pI6 after %d ms", gid.raw,
			      KITE_DT_GID_MS);

	/* To the port itself: the IPv4 GID both ways, the port's own MAC. */
	memset(&attr, 0, sizeof(attr));
	attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr, KITE_PORT_NUM);
	rdma_ah_set_grh(&attr, &gid, 0, sgid_index, KITE_DT_HOP_LIMIT, 0);
	ether_addr_copy(attr.roce.dmac, dt->kib->kdev->netdev->dev_addr);
	dt->ah[0] = rdma_create_ah(dt->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(dt->ah[0]), "create_ah: %ld",
			       PTR_ERR(dt->ah[0]));
	KUNIT_EXPECT_EQ(test, to_kah(dt->ah[0])->av.net_type, KITE_NET_IPV4);

	src = kite_dt_va(dt, KITE_DT_A_SRC);
	dst = kite_dt_va(dt, KITE_DT_B_BUF);
	for (i = 0; i < KITE_DT_UD_LEN; i++)
		src[i] = i * 13 + 5;
	/* Not zero: the 20 zero bytes of the GRH area must be written. */
	memset(dst, KITE_DT_PATTERN, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, kite_dt_post_recv(dt, dt->b, 2, KITE_DT_B_BUF,
						PAGE_SIZE), 0);
	sge = kite_dt_sge(dt, KITE_DT_A_SRC, KITE_DT_UD_LEN);
	KUNIT_ASSERT_EQ(test, kite_dt_ud_send(dt->a, 1, dt->ah[0],
					      dt->b->qp_num, KITE_DT_QKEY_A,
					      &sge, 1, IB_WR_SEND_WITH_IMM, 0),
			0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 2), 2);
	s = kite_dt_find_one(test, wc, 2, 1);
	r = kite_dt_find_one(test, wc, 2, 2);
	KUNIT_EXPECT_EQ(test, s->status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, r->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, r->opcode, IB_WC_RECV);
	KUNIT_EXPECT_PTR_EQ(test, r->qp, dt->b);
	KUNIT_EXPECT_EQ(test, r->byte_len, sizeof(struct ib_grh) +
			KITE_DT_UD_LEN);
	KUNIT_EXPECT_EQ(test, r->src_qp, dt->a->qp_num);
	KUNIT_EXPECT_EQ(test, r->wc_flags & (IB_WC_GRH | IB_WC_WITH_IMM |
					     IB_WC_WITH_NETWORK_HDR_TYPE),
			IB_WC_GRH | IB_WC_WITH_IMM |
			IB_WC_WITH_NETWORK_HDR_TYPE);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(r->ex.imm_data), KITE_DT_IMM);
	KUNIT_EXPECT_EQ(test, r->network_hdr_type, RDMA_NETWORK_IPV4);

	/* The GRH area: 20 zero bytes, then the IPv4 header as received. */
	nh = (union rdma_network_hdr *)dst;
	iph = &nh->roce4grh;
	KUNIT_EXPECT_NULL(test, memchr_inv(nh->reserved, 0,
					   sizeof(nh->reserved)));
	/* (int): KUnit's typeof() cannot take a bit-field. */
	KUNIT_EXPECT_EQ(test, (int)iph->version, IPVERSION);
	KUNIT_EXPECT_EQ(test, (int)iph->ihl, (int)(sizeof(*iph) / sizeof(u32)));
	KUNIT_EXPECT_EQ(test, be16_to_cpu(iph->tot_len),
			sizeof(*iph) + KITE_DT_UDP_HDR + KITE_DT_BTH +
			KITE_DT_DETH + KITE_DT_IMMDT + KITE_DT_UD_LEN +
			KITE_DT_ICRC);
	KUNIT_EXPECT_EQ(test, iph->ttl, KITE_DT_HOP_LIMIT);
	KUNIT_EXPECT_EQ(test, iph->protocol, IPPROTO_UDP);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(iph->saddr), KITE_DT_IP4_ADDR);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(iph->daddr), KITE_DT_IP4_ADDR);
	/* A valid checksum sums to zero over the header. */
	KUNIT_EXPECT_EQ(test, (__force u16)ip_fast_csum(iph, iph->ihl), 0);
	KUNIT_EXPECT_EQ(test, ib_get_rdma_header_version(nh), IPVERSION);
	KUNIT_EXPECT_EQ(test, memcmp(dst + sizeof(struct ib_grh), src,
				     KITE_DT_UD_LEN), 0);

	/* What ib_mad does to answer: a reply AH from the completion. */
	src_qp = r->src_qp;
	err = ib_init_ah_attr_from_wc(&dt->kib->ibdev, KITE_PORT_NUM, r,
				      &nh->ibgrh, &reply);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "ib_init_ah_attr_from_wc: %d", err);
	grh = rdma_ah_read_grh(&reply);
	KUNIT_EXPECT_EQ(test, memcmp(grh->dgid.raw, gid.raw, sizeof(gid.raw)),
			0);
	KUNIT_EXPECT_EQ(test, grh->sgid_index, sgid_index);
	KUNIT_EXPECT_EQ(test, grh->sgid_attr->gid_type,
			IB_GID_TYPE_ROCE_UDP_ENCAP);
	KUNIT_EXPECT_TRUE(test, ether_addr_equal(reply.roce.dmac,
						 dt->kib->kdev->netdev->dev_addr));
	dt->ah[1] = rdma_create_ah(dt->pd, &reply, RDMA_CREATE_AH_SLEEPABLE);
	rdma_destroy_ah_attr(&reply);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(dt->ah[1]), "reply AH: %ld",
			       PTR_ERR(dt->ah[1]));
	KUNIT_EXPECT_EQ(test, to_kah(dt->ah[1])->av.net_type, KITE_NET_IPV4);

	dst = kite_dt_va(dt, KITE_DT_A_DST);
	memset(dst, 0, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, kite_dt_post_recv(dt, dt->a, 4, KITE_DT_A_DST,
						PAGE_SIZE), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_ud_send(dt->b, 3, dt->ah[1], src_qp,
					      KITE_DT_QKEY_A, &sge, 1,
					      IB_WR_SEND, 0), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 2), 2);
	r = kite_dt_find_one(test, wc, 2, 4);
	KUNIT_EXPECT_EQ(test, r->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, r->src_qp, dt->b->qp_num);
	KUNIT_EXPECT_EQ(test, r->network_hdr_type, RDMA_NETWORK_IPV4);
	nh = (union rdma_network_hdr *)dst;
	KUNIT_EXPECT_EQ(test, be32_to_cpu(nh->roce4grh.saddr),
			KITE_DT_IP4_ADDR);
	KUNIT_EXPECT_EQ(test, memcmp(dst + sizeof(struct ib_grh), src,
				     KITE_DT_UD_LEN), 0);

	kite_dt_ucx_ah(test, dt, &gid, sgid_index);

	for (i = 0; i < KITE_DT_NUM_AH; i++) {
		KUNIT_EXPECT_EQ(test, rdma_destroy_ah_user(dt->ah[i], 0, NULL),
				0);
		dt->ah[i] = NULL;
	}
	KUNIT_EXPECT_EQ(test, kite_dt_ip4_addr(dt, RTM_DELADDR, ip4), 0);
	dt->ip4 = 0;
	KUNIT_EXPECT_TRUE_MSG(test, kite_dt_wait_gid(dt, &gid, false, NULL),
			      "GID %pI6 still there %d ms after the address went",
			      gid.raw, KITE_DT_GID_MS);
}
