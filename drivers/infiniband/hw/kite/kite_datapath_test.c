// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite kite_datapath: the kernel data path on a probed Kite device.
 * Two RC QPs of one device are connected to each other in loopback (the
 * path's destination MAC is the port's own MAC, the GID its GID 0) and
 * move data with SEND (+imm), RDMA WRITE (+imm), RDMA READ, CMP_SWP and
 * FETCH_ADD; every byte is checked. Error completions: a send with a bad
 * lkey (IB_WC_LOC_PROT_ERR) and WQEs flushed by a QP in ERR
 * (IB_WC_WR_FLUSH_ERR), the latter delivered through the completion EQ
 * interrupt and the CQ's comp_handler; then ib_drain_qp(). UD: two UD
 * QPs in loopback through an address handle (GRH area, UD completion
 * fields, Q_Key rules, the over-MTU rule), address handles created in
 * atomic context, the GSI QP that ib_mad runs on the port, and UD over
 * IPv4 (the case gives the netdev an address in 198.18.0.0/15 and removes
 * it again).
 *
 * Every wait has a deadline, so a device without a RoCEv2 engine makes the
 * cases fail, not hang. Cases are skipped only when the machine has no
 * Kite PCI function.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/if_addr.h>
#include <linux/ip.h>
#include <linux/jiffies.h>
#include <linux/net.h>
#include <linux/rtnetlink.h>
#include <linux/string.h>
#include <asm/unaligned.h>
#include <net/addrconf.h>
#include <net/checksum.h>
#include <net/ipv6.h>
#include <net/netlink.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "kite_ib.h"
#include "kite_verbs.h"

#define KITE_DT_WAIT_MS		5000	/* deadline of every completion wait */
#define KITE_DT_CQE		64
#define KITE_DT_WR		16
#define KITE_DT_SGE		2
#define KITE_DT_INLINE		64
#define KITE_DT_BUF_SIZE	(4 * PAGE_SIZE)
#define KITE_DT_MSG_LEN		1500	/* more than one 1024-byte MTU packet */
#define KITE_DT_PSN_A		0x100
#define KITE_DT_PSN_B		0xfffff0	/* wraps during the test */
#define KITE_DT_TIMEOUT		14
#define KITE_DT_RETRY		7
#define KITE_DT_RNR_TIMER	12
#define KITE_DT_HOP_LIMIT	64
#define KITE_DT_RD_ATOMIC	4
#define KITE_DT_IMM		0x12345678
#define KITE_DT_PATTERN		0x5a
#define KITE_DT_SWAP_OLD	0x1122334455667788ULL
#define KITE_DT_SWAP_NEW	0x8877665544332211ULL
#define KITE_DT_ADD		0x100000001ULL

#define KITE_DT_FAKE_NUM	KITE_DB_NUM_MASK	/* never handed out */
#define KITE_DT_FAKE_LOG_DEPTH	2
#define KITE_DT_FAKE_SQ_STRIDE	7
#define KITE_DT_FAKE_RQ_STRIDE	5
#define KITE_DT_FAKE_SGE	2

/* Address handles a case holds; kite_dt_exit() destroys what is left. */
#define KITE_DT_NUM_AH		2

/* QP event types the tests count (enum ib_event_type below this). */
#define KITE_DT_NUM_EVENTS	(IB_EVENT_GID_CHANGE + 1)

/* Regions of the registered buffer, one page each. */
enum {
	KITE_DT_A_SRC,
	KITE_DT_A_DST,
	KITE_DT_B_BUF,
	KITE_DT_ATOMIC,
};

/* A fake kernel QP and CQ, see kite_test_dp_wqe_layout(). */
struct kite_dt_fake {
	struct kite_qp *qp;
	struct kite_cq *cq;
	bool inserted;
};

static void kite_dt_fake_free(struct kite_ib_dev *kib, struct kite_dt_fake *f)
{
	if (f->qp) {
		if (f->inserted)
			xa_erase(&kib->qps, f->qp->qpn);
		kite_ring_free(kib, &f->qp->sq);
		kite_ring_free(kib, &f->qp->rq);
		kfree(f->qp->sq_wrid);
		kfree(f->qp->rq_wrid);
		kfree(f->qp);
	}
	if (f->cq) {
		kite_ring_free(kib, &f->cq->ring);
		kfree(f->cq);
	}
	f->qp = NULL;
	f->cq = NULL;
}

struct kite_dt {
	struct kite_ib_dev *kib;
	bool opened;
	struct kite_dt_fake fake;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_cq *cq2;
	struct ib_qp *a;
	struct ib_qp *b;
	struct ib_ah *ah[KITE_DT_NUM_AH];
	__be32 ip4;	/* IPv4 address a case added to the netdev, or 0 */
	struct kite_ring buf;
	u32 key;
	struct completion comp;
	atomic_t comp_events;
	struct completion event;
	atomic_t qp_events[KITE_DT_NUM_EVENTS];
	struct ib_qp *qp_event_qp[KITE_DT_NUM_EVENTS];
};

static void kite_dt_comp_handler(struct ib_cq *cq, void *ctx)
{
	struct kite_dt *dt = ctx;

	atomic_inc(&dt->comp_events);
	complete(&dt->comp);
}

/* QP events: remembered per type, waking kite_dt_wait_event(). */
static void kite_dt_qp_event(struct ib_event *ev, void *ctx)
{
	struct kite_dt *dt = ctx;

	if (ev->event < KITE_DT_NUM_EVENTS) {
		WRITE_ONCE(dt->qp_event_qp[ev->event], ev->element.qp);
		atomic_inc(&dt->qp_events[ev->event]);
	}
	complete(&dt->event);
}

/* Wait until a QP event of @type arrived; return its QP or NULL. */
static struct ib_qp *kite_dt_wait_event(struct kite_dt *dt,
					enum ib_event_type type)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(KITE_DT_WAIT_MS);

	while (!atomic_read(&dt->qp_events[type])) {
		if (time_after(jiffies, deadline))
			return NULL;
		wait_for_completion_timeout(&dt->event,
					    msecs_to_jiffies(KITE_DT_WAIT_MS));
	}
	return READ_ONCE(dt->qp_event_qp[type]);
}

static void *kite_dt_va(struct kite_dt *dt, int region)
{
	return dt->buf.buf + region * PAGE_SIZE;
}

static u64 kite_dt_iova(struct kite_dt *dt, int region)
{
	return dt->buf.dma + region * PAGE_SIZE;
}

static struct ib_sge kite_dt_sge(struct kite_dt *dt, int region, u32 len)
{
	struct ib_sge sge = {
		.addr = kite_dt_iova(dt, region),
		.length = len,
		.lkey = dt->key,
	};

	return sge;
}

static struct kite_ib_dev *kite_dt_get(struct kunit *test)
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

/* Poll until @n completions arrived or the deadline passed. */
static int kite_dt_poll(struct ib_cq *cq, struct ib_wc *wc, int n)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(KITE_DT_WAIT_MS);
	int got = 0, ret;

	while (got < n) {
		ret = ib_poll_cq(cq, n - got, wc + got);
		if (ret < 0)
			return ret;
		got += ret;
		if (got < n) {
			if (time_after(jiffies, deadline))
				break;
			usleep_range(200, 1000);
		}
	}
	return got;
}

/* The completion for @wr_id among @n polled ones, or NULL. */
static struct ib_wc *kite_dt_find(struct ib_wc *wc, int n, u64 wr_id)
{
	int i;

	for (i = 0; i < n; i++)
		if (wc[i].wr_id == wr_id)
			return &wc[i];
	return NULL;
}

/* The completion of @wr_id among @n polled ones; the test stops without it. */
static struct ib_wc *kite_dt_find_one(struct kunit *test, struct ib_wc *wc,
				      int n, u64 wr_id)
{
	struct ib_wc *c = kite_dt_find(wc, n, wr_id);

	KUNIT_ASSERT_NOT_NULL(test, c);
	return c;
}

static struct ib_qp *kite_dt_create_qp(struct kunit *test, struct kite_dt *dt,
				       struct ib_cq *cq)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.send_cq = cq,
		.recv_cq = cq,
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
	struct ib_qp *qp;

	qp = ib_create_qp(dt->pd, &init);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(qp),
			       "RC QP: %ld (device cap_flags 0x%x)",
			       PTR_ERR(qp), dt->kib->kdev->caps.cap_flags);
	return qp;
}

/* RESET -> INIT -> RTR -> RTS towards @dest over GID 0 and the own MAC. */
static void kite_dt_connect(struct kunit *test, struct kite_dt *dt,
			    struct ib_qp *qp, struct ib_qp *dest, u32 sq_psn,
			    u32 rq_psn)
{
	const struct ib_gid_attr *gid;
	struct ib_qp_attr attr = {};
	union ib_gid dgid;
	u32 sgid_index;

	attr.qp_state = IB_QPS_INIT;
	attr.port_num = KITE_PORT_NUM;
	attr.qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			       IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC;
	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE |
					   IB_QP_PKEY_INDEX | IB_QP_PORT |
					   IB_QP_ACCESS_FLAGS), 0);

	gid = rdma_get_gid_attr(&dt->kib->ibdev, KITE_PORT_NUM, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(gid), "no GID 0: %ld",
			       PTR_ERR(gid));
	dgid = gid->gid;
	sgid_index = gid->index;
	rdma_put_gid_attr(gid);

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr.ah_attr, KITE_PORT_NUM);
	rdma_ah_set_grh(&attr.ah_attr, &dgid, 0, sgid_index,
			KITE_DT_HOP_LIMIT, 0);
	ether_addr_copy(attr.ah_attr.roce.dmac, dt->kib->kdev->netdev->dev_addr);
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = dest->qp_num;
	attr.rq_psn = rq_psn;
	attr.max_dest_rd_atomic = KITE_DT_RD_ATOMIC;
	attr.min_rnr_timer = KITE_DT_RNR_TIMER;
	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV |
					   IB_QP_PATH_MTU | IB_QP_DEST_QPN |
					   IB_QP_RQ_PSN |
					   IB_QP_MAX_DEST_RD_ATOMIC |
					   IB_QP_MIN_RNR_TIMER), 0);

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = sq_psn;
	attr.timeout = KITE_DT_TIMEOUT;
	attr.retry_cnt = KITE_DT_RETRY;
	attr.rnr_retry = KITE_DT_RETRY;
	attr.max_rd_atomic = KITE_DT_RD_ATOMIC;
	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE |
					   IB_QP_SQ_PSN | IB_QP_TIMEOUT |
					   IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
					   IB_QP_MAX_QP_RD_ATOMIC), 0);
}

/*
 * The port up, a PD, one CQ (with a comp_handler) and a 4-page coherent
 * buffer registered with every access right. kite_dt_exit() undoes it.
 */
static void kite_dt_setup_common(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct ib_cq_init_attr cq_attr = { .cqe = KITE_DT_CQE };
	struct kite_ib_dev *kib;
	int err;

	kib = kite_dt_get(test);
	dt->kib = kib;

	rtnl_lock();
	err = 0;
	if (!(kib->kdev->netdev->flags & IFF_UP)) {
		err = dev_open(kib->kdev->netdev, NULL);
		dt->opened = !err;
	}
	rtnl_unlock();
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "cannot bring %s up",
			    netdev_name(kib->kdev->netdev));

	dt->pd = ib_alloc_pd(&kib->ibdev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dt->pd));
	dt->cq = ib_create_cq(&kib->ibdev, kite_dt_comp_handler, NULL, dt,
			      &cq_attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dt->cq));

	KUNIT_ASSERT_EQ(test, kite_ring_alloc_kernel(kib, &dt->buf,
						     KITE_DT_BUF_SIZE), 0);
	KUNIT_ASSERT_EQ(test, kite_test_reg_ring_mr(dt->pd, &dt->buf,
						    IB_ACCESS_LOCAL_WRITE |
						    IB_ACCESS_REMOTE_WRITE |
						    IB_ACCESS_REMOTE_READ |
						    IB_ACCESS_REMOTE_ATOMIC,
						    &dt->key), 0);
}

/*
 * The common setup and two RC QPs A and B connected to each other.
 * kite_dt_exit() undoes it.
 */
static void kite_dt_setup(struct kunit *test)
{
	struct kite_dt *dt = test->priv;

	kite_dt_setup_common(test);
	dt->a = kite_dt_create_qp(test, dt, dt->cq);
	dt->b = kite_dt_create_qp(test, dt, dt->cq);
	kite_dt_connect(test, dt, dt->a, dt->b, KITE_DT_PSN_A, KITE_DT_PSN_B);
	kite_dt_connect(test, dt, dt->b, dt->a, KITE_DT_PSN_B, KITE_DT_PSN_A);
}

static int kite_dt_init(struct kunit *test)
{
	struct kite_dt *dt = kunit_kzalloc(test, sizeof(*dt), GFP_KERNEL);

	if (!dt)
		return -ENOMEM;
	init_completion(&dt->comp);
	init_completion(&dt->event);
	test->priv = dt;
	return 0;
}

/* The IPv4 address a case gives the netdev: 198.18.7.1/24 (RFC 2544). */
#define KITE_DT_IP4_ADDR	0xc6120701
#define KITE_DT_IP4_PREFIX	24

/**
 * kite_dt_ip4_addr() - add or remove an IPv4 address of the port's netdev
 * @dt: test state (its netdev)
 * @cmd: RTM_NEWADDR or RTM_DELADDR
 * @addr: the address; its prefix is KITE_DT_IP4_PREFIX
 *
 * Sends the rtnetlink request "ip address add/del" sends, from a kernel
 * socket: the in-kernel helper (devinet_ioctl()) is not exported, and
 * Kconfig lets this test be part of a module. rtnetlink handles the
 * request in the sender's context, so its acknowledgment is queued on the
 * socket by the time kernel_sendmsg() returns. Takes the RTNL: the caller
 * must not hold it.
 *
 * Return: 0 or the negative errno of the request.
 */
static int kite_dt_ip4_addr(struct kite_dt *dt, int cmd, __be32 addr)
{
	/* A named destination (the kernel) skips the socket-file check. */
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct msghdr msg = {
		.msg_name = &kernel,
		.msg_namelen = sizeof(kernel),
	};
	struct {
		struct nlmsghdr nlh;
		struct nlmsgerr err;
	} ack;
	u16 flags = NLM_F_REQUEST | NLM_F_ACK;
	struct ifaddrmsg *ifm;
	struct nlmsghdr *nlh;
	struct socket *sock;
	struct sk_buff *skb;
	struct kvec iov;
	int err;

	if (cmd == RTM_NEWADDR)
		flags |= NLM_F_CREATE | NLM_F_EXCL;
	/* The header and two attributes: IFA_LOCAL and IFA_ADDRESS. */
	skb = nlmsg_new(NLMSG_ALIGN(sizeof(*ifm)) +
			2 * nla_total_size(sizeof(addr)), GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	nlh = nlmsg_put(skb, 0, 0, cmd, sizeof(*ifm), flags);
	if (!nlh) {
		err = -EMSGSIZE;
		goto free_skb;
	}
	ifm = nlmsg_data(nlh);
	memset(ifm, 0, sizeof(*ifm));
	ifm->ifa_family = AF_INET;
	ifm->ifa_prefixlen = KITE_DT_IP4_PREFIX;
	ifm->ifa_scope = RT_SCOPE_UNIVERSE;
	ifm->ifa_index = dt->kib->kdev->netdev->ifindex;
	err = nla_put_in_addr(skb, IFA_LOCAL, addr);
	if (!err)
		err = nla_put_in_addr(skb, IFA_ADDRESS, addr);
	if (err)
		goto free_skb;
	nlmsg_end(skb, nlh);

	err = sock_create_kern(&init_net, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE,
			       &sock);
	if (err)
		goto free_skb;
	iov.iov_base = skb->data;
	iov.iov_len = skb->len;
	err = kernel_sendmsg(sock, &msg, &iov, 1, skb->len);
	if (err < 0)
		goto release;

	/* The acknowledgment; an error one is longer and gets truncated. */
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &ack;
	iov.iov_len = sizeof(ack);
	err = kernel_recvmsg(sock, &msg, &iov, 1, sizeof(ack), MSG_DONTWAIT);
	if (err >= (int)sizeof(ack) && ack.nlh.nlmsg_type == NLMSG_ERROR)
		err = ack.err.error;
	else if (err >= 0)
		err = -EPROTO;
release:
	sock_release(sock);
free_skb:
	nlmsg_free(skb);
	return err;
}

static void kite_dt_exit(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct kite_ib_dev *kib = dt->kib;
	int i;

	if (!kib)
		return;
	/* The netdev keeps IPv4 addresses across dev_close(): remove ours. */
	if (dt->ip4)
		kite_dt_ip4_addr(dt, RTM_DELADDR, dt->ip4);
	for (i = 0; i < KITE_DT_NUM_AH; i++)
		if (dt->ah[i] && !IS_ERR(dt->ah[i]))
			rdma_destroy_ah_user(dt->ah[i], 0, NULL);
	if (dt->b && !IS_ERR(dt->b))
		ib_destroy_qp(dt->b);
	if (dt->a && !IS_ERR(dt->a))
		ib_destroy_qp(dt->a);
	if (dt->key)
		kite_cmd_dereg_mr(&kib->kdev->admin, 0, dt->key);
	kite_ring_free(kib, &dt->buf);
	if (dt->cq2 && !IS_ERR(dt->cq2))
		ib_free_cq(dt->cq2);
	if (dt->cq && !IS_ERR(dt->cq))
		ib_destroy_cq(dt->cq);
	if (dt->pd && !IS_ERR(dt->pd))
		ib_dealloc_pd(dt->pd);
	kite_dt_fake_free(kib, &dt->fake);
	if (dt->opened) {
		rtnl_lock();
		dev_close(kib->kdev->netdev);
		rtnl_unlock();
	}
	kite_ib_dev_put(kib);
}

static int kite_dt_post_recv(struct kite_dt *dt, struct ib_qp *qp,
			     u64 wr_id, int region, u32 len)
{
	struct ib_sge sge = kite_dt_sge(dt, region, len);
	struct ib_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
	};

	return ib_post_recv(qp, &wr, NULL);
}

/* SEND with immediate data, two SGEs, 1500 bytes: two packets. */
static void kite_test_dp_send(struct kunit *test)
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
static void kite_test_dp_write(struct kunit *test)
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
static void kite_test_dp_read(struct kunit *test)
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
static void kite_test_dp_atomics(struct kunit *test)
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
static void kite_test_dp_bad_lkey(struct kunit *test)
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
static void kite_test_dp_flush(struct kunit *test)
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

static void kite_test_dp_many(struct kunit *test)
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
static void kite_test_dp_rem_access(struct kunit *test)
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
static void kite_test_dp_cq_resize(struct kunit *test)
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
static void kite_test_dp_post_errors(struct kunit *test)
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
	wr[1].opcode = IB_WR_LOCAL_INV;
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

static int kite_dt_fake_alloc(struct kite_ib_dev *kib, struct kite_dt_fake *f)
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
static void kite_test_dp_wqe_layout(struct kunit *test)
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
static void kite_dt_fake_cqe(struct kite_dt_fake *f, u32 idx, u8 opcode,
			     u8 status, u16 slot, u8 flags)
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
static void kite_test_dp_poll_cqes(struct kunit *test)
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
static void kite_test_dp_reset_clean(struct kunit *test)
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
static void kite_test_dp_arm_resizing(struct kunit *test)
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
static void kite_test_dp_sw_flush(struct kunit *test)
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

static struct ib_qp *kite_dt_create_ud(struct kunit *test, struct kite_dt *dt,
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
static void kite_test_dp_ud_send(struct kunit *test)
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
static void kite_test_dp_ud_qkey(struct kunit *test)
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
static void kite_test_dp_ud_mtu(struct kunit *test)
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
static void kite_test_dp_ah_atomic(struct kunit *test)
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

	/* A multicast destination: no group attach on this device. */
	gid.raw[0] = 0xff;
	rdma_ah_set_dgid_raw(&attr, gid.raw);
	ah = rdma_create_ah(dt->pd, &attr, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ah), -EOPNOTSUPP);
	if (!IS_ERR(ah))
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
	attr.grh.flow_label = IB_GRH_FLOWLABEL_MASK + 1;
	KUNIT_EXPECT_EQ(test, kite_av_from_ah_attr(dt->kib, &attr, &av),
			-EINVAL);
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
static void kite_test_dp_gsi(struct kunit *test)
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
static void kite_test_dp_ud_send_ipv4(struct kunit *test)
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

static struct kunit_case kite_datapath_cases[] = {
	KUNIT_CASE(kite_test_dp_wqe_layout),
	KUNIT_CASE(kite_test_dp_poll_cqes),
	KUNIT_CASE(kite_test_dp_reset_clean),
	KUNIT_CASE(kite_test_dp_sw_flush),
	KUNIT_CASE(kite_test_dp_arm_resizing),
	KUNIT_CASE(kite_test_dp_send),
	KUNIT_CASE(kite_test_dp_write),
	KUNIT_CASE(kite_test_dp_read),
	KUNIT_CASE(kite_test_dp_atomics),
	KUNIT_CASE(kite_test_dp_bad_lkey),
	KUNIT_CASE(kite_test_dp_flush),
	KUNIT_CASE(kite_test_dp_rem_access),
	KUNIT_CASE(kite_test_dp_cq_resize),
	KUNIT_CASE(kite_test_dp_many),
	KUNIT_CASE(kite_test_dp_post_errors),
	KUNIT_CASE(kite_test_dp_ah_atomic),
	KUNIT_CASE(kite_test_dp_ud_send),
	KUNIT_CASE(kite_test_dp_ud_qkey),
	KUNIT_CASE(kite_test_dp_ud_mtu),
	KUNIT_CASE(kite_test_dp_gsi),
	KUNIT_CASE(kite_test_dp_ud_send_ipv4),
	{}
};

static struct kunit_suite kite_datapath_suite = {
	.name = "kite_datapath",
	.init = kite_dt_init,
	.exit = kite_dt_exit,
	.test_cases = kite_datapath_cases,
};

kunit_test_suite(kite_datapath_suite);
