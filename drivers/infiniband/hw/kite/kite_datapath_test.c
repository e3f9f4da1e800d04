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
 * This file holds the fixture the cases share (kite_datapath_test.h) and
 * the suite; the cases are in kite_datapath_{rc,drv,ud}_test.c.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/if_addr.h>
#include <linux/jiffies.h>
#include <linux/net.h>
#include <linux/rtnetlink.h>
#include <linux/string.h>
#include <net/netlink.h>
#include <rdma/ib_cache.h>

#include "kite_datapath_test.h"

void kite_dt_fake_free(struct kite_ib_dev *kib, struct kite_dt_fake *f)
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

void kite_dt_comp_handler(struct ib_cq *cq, void *ctx)
{
	struct kite_dt *dt = ctx;

	atomic_inc(&dt->comp_events);
	complete(&dt->comp);
}

/* QP events: remembered per type, waking kite_dt_wait_event(). */
void kite_dt_qp_event(struct ib_event *ev, void *ctx)
{
	struct kite_dt *dt = ctx;

	if (ev->event < KITE_DT_NUM_EVENTS) {
		WRITE_ONCE(dt->qp_event_qp[ev->event], ev->element.qp);
		atomic_inc(&dt->qp_events[ev->event]);
	}
	complete(&dt->event);
}

/* Wait until a QP event of @type arrived; return its QP or NULL. */
struct ib_qp *kite_dt_wait_event(struct kite_dt *dt, enum ib_event_type type)
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

void *kite_dt_va(struct kite_dt *dt, int region)
{
	return dt->buf.buf + region * PAGE_SIZE;
}

u64 kite_dt_iova(struct kite_dt *dt, int region)
{
	return dt->buf.dma + region * PAGE_SIZE;
}

struct ib_sge kite_dt_sge(struct kite_dt *dt, int region, u32 len)
{
	struct ib_sge sge = {
		.addr = kite_dt_iova(dt, region),
		.length = len,
		.lkey = dt->key,
	};

	return sge;
}

struct kite_ib_dev *kite_dt_get(struct kunit *test)
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
int kite_dt_poll(struct ib_cq *cq, struct ib_wc *wc, int n)
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
struct ib_wc *kite_dt_find_one(struct kunit *test, struct ib_wc *wc, int n,
			       u64 wr_id)
{
	struct ib_wc *c = kite_dt_find(wc, n, wr_id);

	KUNIT_ASSERT_NOT_NULL(test, c);
	return c;
}

struct ib_qp *kite_dt_create_qp(struct kunit *test, struct kite_dt *dt,
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
void kite_dt_connect(struct kunit *test, struct kite_dt *dt, struct ib_qp *qp,
		     struct ib_qp *dest, u32 sq_psn, u32 rq_psn)
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
void kite_dt_setup_common(struct kunit *test)
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
void kite_dt_setup(struct kunit *test)
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
int kite_dt_ip4_addr(struct kite_dt *dt, int cmd, __be32 addr)
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
	if (dt->srq && !IS_ERR(dt->srq))
		ib_destroy_srq(dt->srq);
	if (dt->frmr)
		ib_dereg_mr(dt->frmr);
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

int kite_dt_post_recv(struct kite_dt *dt, struct ib_qp *qp, u64 wr_id,
		      int region, u32 len)
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
	KUNIT_CASE(kite_test_dp_mem_wqe_layout),
	KUNIT_CASE(kite_test_dp_frwr_errors),
	KUNIT_CASE(kite_test_dp_frwr_reg),
	KUNIT_CASE(kite_test_dp_frwr_local_inv),
	KUNIT_CASE(kite_test_dp_send_inv),
	KUNIT_CASE(kite_test_dp_frwr_stale_key),
	KUNIT_CASE(kite_test_dp_ah_atomic),
	KUNIT_CASE(kite_test_dp_ud_send),
	KUNIT_CASE(kite_test_dp_ud_qkey),
	KUNIT_CASE(kite_test_dp_ud_mtu),
	KUNIT_CASE(kite_test_dp_gsi),
	KUNIT_CASE(kite_test_dp_ud_send_ipv4),
	KUNIT_CASE(kite_test_dp_mcast_attach),
	KUNIT_CASE(kite_test_dp_srq_recv_limit),
	KUNIT_CASE(kite_test_dp_srq_last_wqe),
	KUNIT_CASE(kite_test_dp_counters),
	{}
};

static struct kunit_suite kite_datapath_suite = {
	.name = "kite_datapath",
	.init = kite_dt_init,
	.exit = kite_dt_exit,
	.test_cases = kite_datapath_cases,
};

kunit_test_suite(kite_datapath_suite);
