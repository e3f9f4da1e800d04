// SPDX-License-Identifier: GPL-2.0
/*
 * kite-fatal: a user process that holds verbs objects while its device
 * goes away (a fatal device error, rmmod of the RDMA driver, a PCI
 * hot-unplug). It opens the device, creates a PD, an MR, a completion
 * channel and a CQ, an RC QP in INIT with receives posted (the provider
 * maps the context's doorbell page and rings it), says "ready" and waits
 * for the first async event. That event must be IBV_EVENT_DEVICE_FATAL.
 * Then it uses the objects once more (post a receive, poll and arm the
 * CQ: the doorbell page may be zapped, nothing may crash), destroys
 * everything and closes the device: each call must succeed.
 *
 *   kite-fatal [-d DEV] [-t SECS]
 *
 * Prints "kite-fatal: ready", then "kite-fatal: event EVENT" and
 * "kite-fatal: closed"; exit 0 when every step passed, 1 otherwise (with a
 * line "kite-fatal: FAIL WHAT"), 2 when no event came within SECS (default
 * 600) seconds.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define KF_BUF_SIZE	65536
#define KF_DEPTH	16
#define KF_RECVS	8

static int kf_failures;

static void kf_fail(const char *what, int err)
{
	printf("kite-fatal: FAIL %s: %s\n", what, strerror(err));
	kf_failures++;
}

static struct ibv_device *kf_find(struct ibv_device **list, const char *name)
{
	for (; *list; list++)
		if (!strcmp(ibv_get_device_name(*list), name))
			return *list;
	return NULL;
}

static int kf_post_recv(struct ibv_qp *qp, struct ibv_mr *mr, int n)
{
	struct ibv_recv_wr wr = {}, *bad;
	struct ibv_sge sge = {
		.addr = (uintptr_t)mr->addr,
		.length = 512,
		.lkey = mr->lkey,
	};
	int i, err;

	wr.sg_list = &sge;
	wr.num_sge = 1;
	for (i = 0; i < n; i++) {
		wr.wr_id = i;
		err = ibv_post_recv(qp, &wr, &bad);
		if (err)
			return err;
	}
	return 0;
}

/* Wait for the first async event; 0, or -1 when none came in time. */
static int kf_wait_event(struct ibv_context *ctx, int secs,
			 struct ibv_async_event *ev)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	int n;

	do {
		n = poll(&pfd, 1, secs * 1000);
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	return ibv_get_async_event(ctx, ev) ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr qp_attr = {};
	struct ibv_qp_attr init = {};
	struct ibv_device **list;
	struct ibv_comp_channel *ch;
	struct ibv_async_event ev;
	struct ibv_context *ctx;
	const char *name = "kite_0";
	struct ibv_device *dev;
	struct ibv_wc wc[4];
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int secs = 600;
	void *buf;
	int opt, err;

	while ((opt = getopt(argc, argv, "d:t:")) != -1) {
		switch (opt) {
		case 'd':
			name = optarg;
			break;
		case 't':
			secs = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-d DEV] [-t SECS]\n", argv[0]);
			return 1;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	list = ibv_get_device_list(NULL);
	dev = list ? kf_find(list, name) : NULL;
	if (!dev) {
		printf("kite-fatal: FAIL no device %s\n", name);
		return 1;
	}
	ctx = ibv_open_device(dev);
	ibv_free_device_list(list);
	if (!ctx) {
		kf_fail("ibv_open_device", errno);
		return 1;
	}
	buf = calloc(1, KF_BUF_SIZE);
	pd = ibv_alloc_pd(ctx);
	mr = pd && buf ? ibv_reg_mr(pd, buf, KF_BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ) : NULL;
	ch = ibv_create_comp_channel(ctx);
	cq = ch ? ibv_create_cq(ctx, KF_DEPTH, NULL, ch, 0) : NULL;
	if (!mr || !cq) {
		kf_fail("creating the PD, MR, channel and CQ", errno);
		return 1;
	}
	qp_attr.send_cq = cq;
	qp_attr.recv_cq = cq;
	qp_attr.qp_type = IBV_QPT_RC;
	qp_attr.cap.max_send_wr = KF_DEPTH;
	qp_attr.cap.max_recv_wr = KF_DEPTH;
	qp_attr.cap.max_send_sge = 1;
	qp_attr.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &qp_attr);
	if (!qp) {
		kf_fail("ibv_create_qp", errno);
		return 1;
	}
	init.qp_state = IBV_QPS_INIT;
	init.port_num = 1;
	init.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	err = ibv_modify_qp(qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err) {
		kf_fail("ibv_modify_qp to INIT", err);
		return 1;
	}
	err = kf_post_recv(qp, mr, KF_RECVS);
	if (!err)
		err = ibv_req_notify_cq(cq, 0);
	if (err) {
		kf_fail("posting receives and arming the CQ", err);
		return 1;
	}
	printf("kite-fatal: ready (pd, mr, cq, qp 0x%x in INIT, %d receives)\n",
	       qp->qp_num, KF_RECVS);

	if (kf_wait_event(ctx, secs, &ev)) {
		printf("kite-fatal: FAIL no async event within %d s\n", secs);
		return 2;
	}
	printf("kite-fatal: event %s\n", ibv_event_type_str(ev.event_type));
	if (ev.event_type != IBV_EVENT_DEVICE_FATAL) {
		printf("kite-fatal: FAIL first event is %s, not %s\n",
		       ibv_event_type_str(ev.event_type),
		       ibv_event_type_str(IBV_EVENT_DEVICE_FATAL));
		kf_failures++;
	}
	ibv_ack_async_event(&ev);

	/*
	 * The device is gone or dead: these may fail, they must not crash
	 * (the doorbell page may now be the zero page ib_core maps instead).
	 */
	err = kf_post_recv(qp, mr, 1);
	printf("kite-fatal: after the event: post_recv %d, poll_cq %d, req_notify_cq %d\n",
	       err, ibv_poll_cq(cq, 4, wc), ibv_req_notify_cq(cq, 0));

	err = ibv_destroy_qp(qp);
	if (err)
		kf_fail("ibv_destroy_qp", err);
	err = ibv_destroy_cq(cq);
	if (err)
		kf_fail("ibv_destroy_cq", err);
	err = ibv_destroy_comp_channel(ch);
	if (err)
		kf_fail("ibv_destroy_comp_channel", err);
	err = ibv_dereg_mr(mr);
	if (err)
		kf_fail("ibv_dereg_mr", err);
	err = ibv_dealloc_pd(pd);
	if (err)
		kf_fail("ibv_dealloc_pd", err);
	err = ibv_close_device(ctx);
	if (err)
		kf_fail("ibv_close_device", errno);
	free(buf);
	printf("kite-fatal: closed%s\n", kf_failures ? " (with failures)" : "");
	return kf_failures ? 1 : 0;
}
