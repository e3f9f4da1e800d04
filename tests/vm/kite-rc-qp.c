// SPDX-License-Identifier: GPL-2.0
/*
 * kite-rc's device and QP pair helpers: open the device and register the
 * buffers, create, connect and destroy an RC QP pair with its own CQ, post
 * work requests and wait for the completions the checks expect.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>

#include "kite-rc.h"

const char *st(enum ibv_wc_status s)
{
	return ibv_wc_status_str(s);
}

int open_device(void)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;

	g.ctx = kt_open_device(g.dev, "device %s not found", bad);
	if (!g.ctx)
		return -1;
	if (ibv_query_device(g.ctx, &da) || ibv_query_port(g.ctx, 1, &pa)) {
		bad("query device/port failed");
		return -1;
	}
	if (pa.state != IBV_PORT_ACTIVE)
		bad("port 1 is not ACTIVE (state %d)", pa.state);
	g.mtu = pa.active_mtu;
	/* Soft-RoCE is the baseline these checks are proven against; its one
	 * known deviation is allowed (kite-rc-func.c, err-bad-lkey). */
	g.is_rxe = da.vendor_id == KT_RXE_VENDOR_ID;
	g.rd_atom = da.max_qp_rd_atom < 16 ? da.max_qp_rd_atom : 16;
	g.max_sge = da.max_sge < (int)WIDE_SGE ? (uint32_t)da.max_sge : WIDE_SGE;
	if (!g.rd_atom)
		g.rd_atom = 1;
	if (ibv_query_gid(g.ctx, 1, g.gid_index, &g.gid)) {
		bad("ibv_query_gid %d: %s", g.gid_index, strerror(errno));
		return -1;
	}
	g.pd = ibv_alloc_pd(g.ctx);
	if (!g.pd) {
		bad("ibv_alloc_pd: %s", strerror(errno));
		return -1;
	}
	g.buf = aligned_alloc(4096, g.buf_size);
	g.noacc_buf = aligned_alloc(4096, NOACC_SIZE);
	if (!g.buf || !g.noacc_buf)
		return -1;
	memset(g.buf, 0, g.buf_size);
	memset(g.noacc_buf, 0, NOACC_SIZE);
	g.mr = ibv_reg_mr(g.pd, g.buf, g.buf_size, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC);
	g.noacc = ibv_reg_mr(g.pd, g.noacc_buf, NOACC_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!g.mr || !g.noacc) {
		bad("ibv_reg_mr: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Create a QP (and its own CQ) taking @max_sge SGEs per WQE each way and
 * move it to INIT; no peer yet.
 */
int pair_create_sge(struct pair *p, uint32_t inline_size, uint32_t max_sge)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = QP_DEPTH, .max_recv_wr = QP_DEPTH,
			 .max_send_sge = max_sge, .max_recv_sge = max_sge,
			 .max_inline_data = inline_size },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};

	memset(p, 0, sizeof(*p));
	if (!g.mr) {
		bad("no device");
		return -1;
	}
	p->cq = ibv_create_cq(g.ctx, CQ_DEPTH, NULL, NULL, 0);
	if (!p->cq) {
		bad("ibv_create_cq: %s", strerror(errno));
		return -1;
	}
	ia.send_cq = ia.recv_cq = p->cq;
	p->qp = ibv_create_qp(g.pd, &ia);
	if (!p->qp) {
		bad("ibv_create_qp (inline %u): %s", inline_size, strerror(errno));
		return -1;
	}
	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
		bad("modify QP to INIT: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int pair_create(struct pair *p, uint32_t inline_size)
{
	return pair_create_sge(p, inline_size, MAX_SGE);
}

void pair_destroy(struct pair *p)
{
	if (p->qp && ibv_destroy_qp(p->qp))
		bad("ibv_destroy_qp: %s", strerror(errno));
	if (p->cq && ibv_destroy_cq(p->cq))
		bad("ibv_destroy_cq: %s", strerror(errno));
	p->qp = NULL;
	p->cq = NULL;
}

/* Swap QP information with the peer. 0 on success; -1: connection lost. */
int pair_exchange(struct pair *p)
{
	struct qpinfo me = {
		.qpn = htonl(p->qp ? p->qp->qp_num : 0),
		.psn = htonl(p->qp ? (p->qp->qp_num * 7919u) & 0xffffff : 0),
		.rkey = htonl(g.mr ? g.mr->rkey : 0),
		.noacc_rkey = htonl(g.noacc ? g.noacc->rkey : 0),
		.mtu = htonl(g.mtu),
		.is_rxe = htonl(g.is_rxe),
	}, them;

	me.addr = htobe64((uintptr_t)g.buf);
	me.noacc_addr = htobe64((uintptr_t)g.noacc_buf);
	memcpy(me.gid, g.gid.raw, 16);
	if (xchg(&me, &them, sizeof(me)))
		return -1;
	p->peer.qpn = ntohl(them.qpn);
	p->peer.psn = ntohl(them.psn);
	p->peer.rkey = ntohl(them.rkey);
	p->peer.noacc_rkey = ntohl(them.noacc_rkey);
	p->peer.addr = be64toh(them.addr);
	p->peer.noacc_addr = be64toh(them.noacc_addr);
	p->peer.mtu = ntohl(them.mtu);
	p->peer.is_rxe = ntohl(them.is_rxe);
	memcpy(p->peer.gid, them.gid, 16);
	return 0;
}

/*
 * A fresh QP pair (for an error check, or one with @max_sge SGEs per
 * WQE); *tcp_lost set when TCP broke.
 */
int fresh_pair_sge(struct pair *p, const struct conn_opts *o, uint32_t max_sge,
		   int *tcp_lost)
{
	int err = pair_create_sge(p, 0, max_sge);

	if (pair_exchange(p)) {
		*tcp_lost = 1;
		return -1;
	}
	if (!err && !p->peer.qpn) {
		bad("the peer could not create its QP");
		err = -1;
	}
	if (!err)
		err = pair_connect(p, o, 0);
	return err;
}

int fresh_pair(struct pair *p, const struct conn_opts *o, int *tcp_lost)
{
	return fresh_pair_sge(p, o, MAX_SGE, tcp_lost);
}

/* INIT -> RTR -> RTS towards the peer (rtr_only: stop at RTR). */
int pair_connect(struct pair *p, const struct conn_opts *o, int rtr_only)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = g.mtu < (enum ibv_mtu)p->peer.mtu ? g.mtu : (enum ibv_mtu)p->peer.mtu,
		.dest_qp_num = p->peer.qpn,
		.rq_psn = p->peer.psn,
		.max_dest_rd_atomic = g.rd_atom,
		.min_rnr_timer = o->min_rnr_timer,
		.ah_attr = {
			.is_global = 1, .port_num = 1, .sl = 0,
			.grh = { .hop_limit = 64, .sgid_index = g.gid_index },
		},
	};

	if (!p->qp)
		return -1;
	memcpy(a.ah_attr.grh.dgid.raw, p->peer.gid, 16);
	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
		bad("modify QP to RTR: %s", strerror(errno));
		return -1;
	}
	if (rtr_only)
		return 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = o->timeout;
	a.retry_cnt = o->retry_cnt;
	a.rnr_retry = o->rnr_retry;
	a.sq_psn = (p->qp->qp_num * 7919u) & 0xffffff;
	a.max_rd_atomic = g.rd_atom;
	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC)) {
		bad("modify QP to RTS: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Wait for one completion (at most ms). 0: got one; -1: none. */
int wait_wc(struct pair *p, struct ibv_wc *wc, int ms)
{
	double end = now_s() + ms / 1000.0;
	int n, watched = 0;

	if (!p->cq)
		return -1;
	for (;;) {
		n = ibv_poll_cq(p->cq, 1, wc);
		if (n > 0)
			return 0;
		if (n < 0) {
			bad("ibv_poll_cq: %d", n);
			return -1;
		}
		if (now_s() > end)
			return -1;
		/*
		 * The peer already sent its next message (it is done with its
		 * part, or gave up): what is due must come within 2 s.
		 */
		if (!watched && ms > 2000 && peer_moved_on()) {
			watched = 1;
			if (end > now_s() + 2)
				end = now_s() + 2;
		}
		sched_yield();
	}
}

/*
 * Expect one completion with this wr_id, status and opcode (opcode < 0:
 * any). Returns 0 when it matched.
 */
int expect_wc(struct pair *p, const char *what, uint64_t wr_id,
		     enum ibv_wc_status status, int opcode, struct ibv_wc *out)
{
	struct ibv_wc wc;

	if (wait_wc(p, &wc, POLL_MS)) {
		bad("%s: no completion in time (%d ms, or 2 s after the peer moved on)",
		    what, POLL_MS);
		return -1;
	}
	if (out)
		*out = wc;
	if (wc.wr_id != wr_id || wc.status != status ||
	    (status == IBV_WC_SUCCESS && opcode >= 0 && wc.opcode != (enum ibv_wc_opcode)opcode)) {
		bad("%s: got wr_id %" PRIu64 " status %s opcode %d, want wr_id %" PRIu64
		    " status %s opcode %d", what, wc.wr_id, st(wc.status), wc.opcode,
		    wr_id, st(status), opcode);
		return -1;
	}
	if (wc.qp_num != p->qp->qp_num) {
		bad("%s: qp_num %u, want %u", what, wc.qp_num, p->qp->qp_num);
		return -1;
	}
	return 0;
}

int post_recv(struct pair *p, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)g.buf + off, len, g.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *badwr;
	int err;

	if (!p->qp)
		return -1;
	err = ibv_post_recv(p->qp, &wr, &badwr);
	if (err)
		bad("ibv_post_recv: %s", strerror(err));
	return err ? -1 : 0;
}

/* Post one signaled send-queue WR with one SGE of the local buffer. */
int post_one(struct pair *p, uint64_t wr_id, enum ibv_wr_opcode op,
		    uint32_t off, uint32_t len, uint32_t lkey, uint64_t raddr,
		    uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)g.buf + off, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *badwr;
	int err;

	if (!p->qp)
		return -1;
	if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM ||
	    op == IBV_WR_RDMA_READ) {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htonl(0x4b495445u ^ (uint32_t)wr_id);
	err = ibv_post_send(p->qp, &wr, &badwr);
	if (err)
		bad("ibv_post_send (opcode %d): %s", op, strerror(err));
	return err ? -1 : 0;
}
