// SPDX-License-Identifier: GPL-2.0
/*
 * kite-rc mode "ex": the RC traffic of mode "func" through the extended
 * verbs: a QP from ibv_create_qp_ex() posted to with ibv_wr_* batches, a
 * CQ from ibv_create_cq_ex() polled with ibv_start_poll()/ibv_next_poll()
 * and read with the ibv_wc_read_* accessors. Every byte is verified, every
 * completion checked (wr_id, status, opcode, qp_num, byte_len, immediate
 * data, wc_flags) in posting order. On Kite also the refusals of what the
 * device cannot do (completion timestamps, QP creation flags) and that
 * ibv_query_device_ex() reports no device clock.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <inttypes.h>

#include "kite-rc.h"

#define OFF_SRC		0u
#define OFF_DST		(256u << 10)
#define OFF_ATOMIC	(1024u << 10)
#define OFF_RES		((1024u << 10) + 64u)
#define EX_MAX		(200u << 10)

#define EX_SEND_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
			 IBV_QP_EX_WITH_RDMA_WRITE | \
			 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
			 IBV_QP_EX_WITH_RDMA_READ | \
			 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
			 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

static const uint32_t ex_sizes[] = { 1, 63, 4096, 4097, 65536 + 3, EX_MAX };
#define NEX_SIZES (sizeof(ex_sizes) / sizeof(ex_sizes[0]))

/* The pair of this mode: p.cq is the ex CQ seen as an ibv_cq. */
static struct pair xp;
static struct ibv_cq_ex *xcq;
static struct ibv_qp_ex *xqp;

/* One completion as the accessors give it. */
struct exwc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len, qp_num, wc_flags;
	uint32_t imm;	/* host order */
};

static void exwc_read(struct exwc *w)
{
	w->wr_id = xcq->wr_id;
	w->status = xcq->status;
	w->opcode = ibv_wc_read_opcode(xcq);
	w->byte_len = ibv_wc_read_byte_len(xcq);
	w->qp_num = ibv_wc_read_qp_num(xcq);
	w->wc_flags = ibv_wc_read_wc_flags(xcq);
	w->imm = ntohl(ibv_wc_read_imm_data(xcq));
}

/*
 * Collect @n completions with start_poll/next_poll/end_poll (as many per
 * poll session as there are); 0 when all came within POLL_MS.
 */
static int ex_poll(struct exwc *w, unsigned int n)
{
	struct ibv_poll_cq_attr attr = {};
	double end = now_s() + POLL_MS / 1000.0;
	unsigned int got = 0;
	int ret;

	while (got < n) {
		ret = ibv_start_poll(xcq, &attr);
		if (ret == ENOENT) {
			if (now_s() > end) {
				bad("%u of %u completions in %d ms", got, n, POLL_MS);
				return -1;
			}
			sched_yield();
			continue;
		}
		if (ret) {
			bad("ibv_start_poll: %s", strerror(ret));
			return -1;
		}
		do {
			if (got < n)
				exwc_read(&w[got]);
			got++;
		} while (got < n && !(ret = ibv_next_poll(xcq)));
		if (ret && ret != ENOENT)
			bad("ibv_next_poll: %s", strerror(ret));
		ibv_end_poll(xcq);
	}
	return 0;
}

/* Check one completion against what was posted. */
static int ex_expect(const struct exwc *w, const char *what, uint64_t wr_id,
		     enum ibv_wc_opcode opcode)
{
	if (w->wr_id != wr_id || w->status != IBV_WC_SUCCESS ||
	    w->opcode != opcode) {
		bad("%s: wr_id %" PRIu64 " status %s opcode %d, want %" PRIu64
		    " success opcode %d", what, w->wr_id, st(w->status),
		    w->opcode, wr_id, opcode);
		return -1;
	}
	if (w->qp_num != xp.qp->qp_num) {
		bad("%s: qp_num %u, want %u", what, w->qp_num, xp.qp->qp_num);
		return -1;
	}
	return 0;
}

/* Kite's devices are kite_N. */
static int is_kite(void)
{
	return !strncmp(ibv_get_device_name(g.ctx->device), "kite_", 5);
}

/* On Kite: what the device cannot do is refused, and said so. */
static void ex_refusals(void)
{
	struct ibv_device_attr_ex dx = {};
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS |
				       IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RC, .send_cq = xp.cq, .recv_cq = xp.cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.pd = g.pd, .create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB,
	};
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;

	if (ibv_query_device_ex(g.ctx, NULL, &dx))
		bad("ibv_query_device_ex: %s", strerror(errno));
	else if (dx.completion_timestamp_mask || dx.hca_core_clock)
		bad("query_device_ex reports a device clock (mask %#" PRIx64
		    ", %" PRIu64 " kHz): completion timestamps are refused",
		    dx.completion_timestamp_mask, dx.hca_core_clock);
	cq = ibv_create_cq_ex(g.ctx, &ca);
	if (cq || errno != EOPNOTSUPP) {
		bad("CQ with completion timestamps: %s",
		    cq ? "created" : strerror(errno));
		if (cq)
			ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	}
	qp = ibv_create_qp_ex(g.ctx, &qa);
	if (qp || errno != EOPNOTSUPP) {
		bad("QP with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB: %s",
		    qp ? "created" : strerror(errno));
		if (qp)
			ibv_destroy_qp(qp);
	}
	qa.create_flags = 0;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.send_ops_flags = IBV_QP_EX_WITH_TSO;
	qp = ibv_create_qp_ex(g.ctx, &qa);
	if (qp || errno != EOPNOTSUPP) {
		bad("RC QP with IBV_QP_EX_WITH_TSO: %s",
		    qp ? "created" : strerror(errno));
		if (qp)
			ibv_destroy_qp(qp);
	}
}

/* Both sides: the ex CQ and QP, connected to the peer's. */
static void t_ex_create(void)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = CQ_DEPTH, .wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = QP_DEPTH, .max_recv_wr = QP_DEPTH,
			 .max_send_sge = MAX_SGE, .max_recv_sge = MAX_SGE,
			 .max_inline_data = INLINE_SIZE },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = EX_SEND_OPS,
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};
	memset(&xp, 0, sizeof(xp));
	if (!g.mr) {
		bad("no device");
		goto exchange;
	}
	xcq = ibv_create_cq_ex(g.ctx, &ca);
	if (!xcq) {
		bad("ibv_create_cq_ex: %s", strerror(errno));
		goto exchange;
	}
	xp.cq = ibv_cq_ex_to_cq(xcq);
	qa.send_cq = qa.recv_cq = xp.cq;
	qa.pd = g.pd;
	xp.qp = ibv_create_qp_ex(g.ctx, &qa);
	if (!xp.qp) {
		bad("ibv_create_qp_ex: %s", strerror(errno));
		goto exchange;
	}
	xqp = ibv_qp_to_qp_ex(xp.qp);
	if (!xqp || !xqp->wr_send || !xqp->wr_atomic_fetch_add) {
		bad("ibv_qp_to_qp_ex: no work request API");
		goto exchange;
	}
	if (qa.cap.max_inline_data < INLINE_SIZE)
		bad("the QP offers %u bytes inline, want %u",
		    qa.cap.max_inline_data, INLINE_SIZE);
	if (ibv_modify_qp(xp.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		bad("modify QP to INIT: %s", strerror(errno));
	if (is_kite())
		ex_refusals();
exchange:
	if (pair_exchange(&xp))
		return;
	if (!g.detail[0] && !xp.peer.qpn)
		bad("the peer could not create its QP");
	if (!g.detail[0])
		pair_connect(&xp, &def_opts, 0);
	/* Both connected before either sends. */
	sync_ok(50);
}

static int ex_ready(void)
{
	if (!xqp) {
		bad("no ex QP (ex-create failed)");
		return 0;
	}
	return 1;
}

/*
 * One batch: SEND from 3 SGEs, SEND_WITH_IMM of inline data (a list of
 * two stack buffers, clobbered after the setter), RDMA WRITE and WRITE
 * with immediate; the server checks the received bytes, immediate data,
 * byte_len and flags, then the written bytes.
 */
static void t_ex_batch(void)
{
	const uint32_t part[3] = { 1000, 3000, 5000 }, total = 9000;
	const uint32_t wlen = 20000, ilen = INLINE_SIZE;
	struct exwc w[4];
	int i, err;

	if (!ex_ready())
		goto sync;
	if (g.server) {
		memset(g.buf + OFF_DST, 0, 3 * 65536);
		for (i = 0; i < 3; i++)
			post_recv(&xp, 100 + i, OFF_DST + i * 16384, 16384);
	}
sync:
	if (sync_peer(51))
		return;
	if (!xqp)
		goto done;
	if (!g.server) {
		uint8_t a[INLINE_SIZE / 2], b[INLINE_SIZE / 2];
		struct ibv_data_buf inl[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
		uint8_t msg[INLINE_SIZE];
		struct ibv_sge sge[3] = {
			{ (uintptr_t)g.buf + OFF_SRC, part[0], g.mr->lkey },
			{ (uintptr_t)g.buf + OFF_SRC + 4096, part[1], g.mr->lkey },
			{ (uintptr_t)g.buf + OFF_SRC + 16384, part[2], g.mr->lkey },
		};
		uint8_t tmp[9000];

		fill(tmp, total, 510);
		memcpy(g.buf + OFF_SRC, tmp, part[0]);
		memcpy(g.buf + OFF_SRC + 4096, tmp + part[0], part[1]);
		memcpy(g.buf + OFF_SRC + 16384, tmp + part[0] + part[1], part[2]);
		fill(msg, ilen, 511);
		memcpy(a, msg, sizeof(a));
		memcpy(b, msg + sizeof(a), sizeof(b));
		fill(g.buf + OFF_SRC + 65536, wlen, 512);

		ibv_wr_start(xqp);
		xqp->wr_id = 200;
		xqp->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(xqp);
		ibv_wr_set_sge_list(xqp, 3, sge);
		xqp->wr_id = 201;
		ibv_wr_send_imm(xqp, htonl(0x4b495445u));
		ibv_wr_set_inline_data_list(xqp, 2, inl);
		/* Inline data is copied by its setter. */
		memset(a, 0xee, sizeof(a));
		memset(b, 0xee, sizeof(b));
		xqp->wr_id = 202;
		ibv_wr_rdma_write(xqp, xp.peer.rkey, xp.peer.addr + OFF_DST + 65536);
		ibv_wr_set_sge(xqp, g.mr->lkey, (uintptr_t)g.buf + OFF_SRC + 65536,
			       wlen);
		xqp->wr_id = 203;
		ibv_wr_rdma_write_imm(xqp, xp.peer.rkey,
				      xp.peer.addr + OFF_DST + 2 * 65536,
				      htonl(0x1234567));
		ibv_wr_set_sge(xqp, g.mr->lkey, (uintptr_t)g.buf + OFF_SRC + 65536,
			       wlen);
		err = ibv_wr_complete(xqp);
		if (err) {
			bad("ibv_wr_complete: %s", strerror(err));
		} else if (!ex_poll(w, 4)) {
			ex_expect(&w[0], "send", 200, IBV_WC_SEND);
			ex_expect(&w[1], "send-imm inline", 201, IBV_WC_SEND);
			ex_expect(&w[2], "write", 202, IBV_WC_RDMA_WRITE);
			ex_expect(&w[3], "write-imm", 203, IBV_WC_RDMA_WRITE);
		}
	} else if (!ex_poll(w, 3)) {
		long at;

		if (!ex_expect(&w[0], "recv", 100, IBV_WC_RECV)) {
			if (w[0].byte_len != total || (w[0].wc_flags & IBV_WC_WITH_IMM))
				bad("recv: byte_len %u flags %#x", w[0].byte_len,
				    w[0].wc_flags);
			at = verify(g.buf + OFF_DST, total, 510);
			if (at >= 0)
				bad("SGE-list send differs at byte %ld", at);
		}
		if (!ex_expect(&w[1], "recv imm", 101, IBV_WC_RECV)) {
			if (w[1].byte_len != ilen || !(w[1].wc_flags & IBV_WC_WITH_IMM) ||
			    w[1].imm != 0x4b495445u)
				bad("recv imm: byte_len %u flags %#x imm %#x",
				    w[1].byte_len, w[1].wc_flags, w[1].imm);
			at = verify(g.buf + OFF_DST + 16384, ilen, 511);
			if (at >= 0)
				bad("inline send differs at byte %ld", at);
		}
		if (!ex_expect(&w[2], "recv write-imm", 102,
			       IBV_WC_RECV_RDMA_WITH_IMM) &&
		    (w[2].byte_len != wlen || !(w[2].wc_flags & IBV_WC_WITH_IMM) ||
		     w[2].imm != 0x1234567))
			bad("write-imm: byte_len %u flags %#x imm %#x",
			    w[2].byte_len, w[2].wc_flags, w[2].imm);
	}
done:
	if (sync_ok(52) < 0)
		return;
	if (g.server && xqp) {
		long at = verify(g.buf + OFF_DST + 65536, wlen, 512);

		if (at >= 0)
			bad("written data differs at byte %ld", at);
		at = verify(g.buf + OFF_DST + 2 * 65536, wlen, 512);
		if (at >= 0)
			bad("write-imm data differs at byte %ld", at);
	}
	sync_ok(53);
}

/*
 * Every size of mode func: SEND (received and checked by the server),
 * RDMA WRITE (checked by the server) and RDMA READ (checked here), one
 * batch of three per size.
 */
static void t_ex_sizes(void)
{
	struct exwc w[3];
	unsigned int i;
	long at;
	int err;

	for (i = 0; i < NEX_SIZES; i++) {
		uint32_t len = ex_sizes[i], seed = 600 + i;

		if (g.server && xqp) {
			memset(g.buf + OFF_DST, 0, 2 * EX_MAX + 64);
			fill(g.buf + OFF_SRC, len, seed + 50);
			post_recv(&xp, 300 + i, OFF_DST, EX_MAX + 64);
		} else if (xqp) {
			fill(g.buf + OFF_SRC, len, seed);
			memset(g.buf + OFF_DST, 0, len + 16);
		}
		if (sync_peer(54))
			return;
		if (!ex_ready())
			goto next;
		if (!g.server) {
			ibv_wr_start(xqp);
			xqp->wr_flags = IBV_SEND_SIGNALED;
			xqp->wr_id = 400 + i;
			ibv_wr_send(xqp);
			ibv_wr_set_sge(xqp, g.mr->lkey, (uintptr_t)g.buf + OFF_SRC, len);
			xqp->wr_id = 500 + i;
			ibv_wr_rdma_write(xqp, xp.peer.rkey,
					  xp.peer.addr + OFF_DST + EX_MAX + 64);
			ibv_wr_set_sge(xqp, g.mr->lkey, (uintptr_t)g.buf + OFF_SRC, len);
			xqp->wr_id = 600 + i;
			ibv_wr_rdma_read(xqp, xp.peer.rkey, xp.peer.addr + OFF_SRC);
			ibv_wr_set_sge(xqp, g.mr->lkey, (uintptr_t)g.buf + OFF_DST, len);
			err = ibv_wr_complete(xqp);
			if (err) {
				bad("ibv_wr_complete: %s", strerror(err));
			} else if (!ex_poll(w, 3) &&
				   !ex_expect(&w[0], "send", 400 + i, IBV_WC_SEND) &&
				   !ex_expect(&w[1], "write", 500 + i, IBV_WC_RDMA_WRITE) &&
				   !ex_expect(&w[2], "read", 600 + i, IBV_WC_RDMA_READ)) {
				at = verify(g.buf + OFF_DST, len, seed + 50);
				if (at >= 0)
					bad("size %u: read data differs at byte %ld", len, at);
				if (g.buf[OFF_DST + len])
					bad("size %u: byte after the read range written", len);
			}
		} else if (!ex_poll(w, 1) &&
			   !ex_expect(&w[0], "recv", 300 + i, IBV_WC_RECV)) {
			if (w[0].byte_len != len)
				bad("size %u: byte_len %u", len, w[0].byte_len);
			at = verify(g.buf + OFF_DST, len, seed);
			if (at >= 0)
				bad("size %u: received data differs at byte %ld", len, at);
		}
next:
		if (sync_ok(55) < 0)
			return;
		if (g.server && xqp) {
			at = verify(g.buf + OFF_DST + EX_MAX + 64, len, seed);
			if (at >= 0)
				bad("size %u: written data differs at byte %ld", len, at);
		}
		if (sync_ok(56))
			return;
	}
}

/* CMP_SWP (matching, then not) and FETCH_ADD in one batch. */
static void t_ex_atomics(void)
{
	const uint64_t a0 = 0x1111222233334444ull, a1 = 0x5555666677778888ull;
	uint64_t res[3], v;
	struct exwc w[3];
	int i, err;

	if (g.server)
		memcpy(g.buf + OFF_ATOMIC, &a0, 8);
	if (sync_peer(57))
		return;
	if (ex_ready() && !g.server) {
		memset(g.buf + OFF_RES, 0xa5, 24);
		ibv_wr_start(xqp);
		xqp->wr_flags = IBV_SEND_SIGNALED;
		xqp->wr_id = 700;
		ibv_wr_atomic_cmp_swp(xqp, xp.peer.rkey, xp.peer.addr + OFF_ATOMIC,
				      a0, a1);
		ibv_wr_set_sge(xqp, g.mr->lkey, (uintptr_t)g.buf + OFF_RES, 8);
		/* The second waits for the first's result (fence). */
		xqp->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
		xqp->wr_id = 701;
		ibv_wr_atomic_cmp_swp(xqp, xp.peer.rkey, xp.peer.addr + OFF_ATOMIC,
				      a0, 7);
		ibv_wr_set_sge(xqp, g.mr->lkey, (uintptr_t)g.buf + OFF_RES + 8, 8);
		xqp->wr_id = 702;
		ibv_wr_atomic_fetch_add(xqp, xp.peer.rkey, xp.peer.addr + OFF_ATOMIC,
					5);
		ibv_wr_set_sge(xqp, g.mr->lkey, (uintptr_t)g.buf + OFF_RES + 16, 8);
		err = ibv_wr_complete(xqp);
		if (err) {
			bad("ibv_wr_complete: %s", strerror(err));
		} else if (!ex_poll(w, 3) &&
			   !ex_expect(&w[0], "cmp_swp", 700, IBV_WC_COMP_SWAP) &&
			   !ex_expect(&w[1], "cmp_swp", 701, IBV_WC_COMP_SWAP) &&
			   !ex_expect(&w[2], "fetch_add", 702, IBV_WC_FETCH_ADD)) {
			memcpy(res, g.buf + OFF_RES, 24);
			for (i = 0; i < 3; i++)
				if (res[i] != (i ? a1 : a0))
					bad("atomic %d returned %#" PRIx64, i, res[i]);
		}
	}
	if (sync_peer(58))
		return;
	memcpy(&v, g.buf + OFF_ATOMIC, 8);
	if (g.server && xqp && v != a1 + 5)
		bad("target holds %#" PRIx64 ", want %#" PRIx64, v, a1 + 5);
}

/*
 * A batch that fails (more SGEs than the QP takes) and an aborted one
 * post nothing; the SEND of the next batch is the first the server
 * receives.
 */
static void t_ex_abort(void)
{
	struct ibv_sge sge[MAX_SGE + 1];
	struct exwc w;
	unsigned int i;
	int err;

	if (g.server && xqp) {
		memset(g.buf + OFF_DST, 0, 256);
		post_recv(&xp, 800, OFF_DST, 4096);
	}
	if (sync_peer(59))
		return;
	if (ex_ready() && !g.server) {
		for (i = 0; i <= MAX_SGE; i++)
			sge[i] = (struct ibv_sge){ (uintptr_t)g.buf + OFF_SRC + i, 1,
						   g.mr->lkey };
		fill(g.buf + OFF_SRC, 64, 801);
		ibv_wr_start(xqp);
		xqp->wr_flags = IBV_SEND_SIGNALED;
		xqp->wr_id = 900;
		ibv_wr_send(xqp);
		ibv_wr_set_sge(xqp, g.mr->lkey, (uintptr_t)g.buf + OFF_SRC + 32, 32);
		xqp->wr_id = 901;
		ibv_wr_send(xqp);
		ibv_wr_set_sge_list(xqp, MAX_SGE + 1, sge);
		err = ibv_wr_complete(xqp);
		if (!err)
			bad("a batch with %u SGEs (the QP takes %u) was posted",
			    MAX_SGE + 1, MAX_SGE);
		else if (is_kite() && err != EINVAL)
			bad("too many SGEs: %s, want EINVAL", strerror(err));
		ibv_wr_start(xqp);
		xqp->wr_id = 902;
		ibv_wr_send(xqp);
		ibv_wr_set_sge(xqp, g.mr->lkey, (uintptr_t)g.buf + OFF_SRC + 32, 32);
		ibv_wr_abort(xqp);
		ibv_wr_start(xqp);
		xqp->wr_id = 903;
		ibv_wr_send(xqp);
		ibv_wr_set_sge(xqp, g.mr->lkey, (uintptr_t)g.buf + OFF_SRC, 64);
		err = ibv_wr_complete(xqp);
		if (err)
			bad("ibv_wr_complete: %s", strerror(err));
		else if (!ex_poll(&w, 1))
			ex_expect(&w, "send after the failed batches", 903, IBV_WC_SEND);
	} else if (xqp && !ex_poll(&w, 1) &&
		   !ex_expect(&w, "recv", 800, IBV_WC_RECV) &&
		   (w.byte_len != 64 || verify(g.buf + OFF_DST, 64, 801) >= 0))
		bad("received %u bytes, not the 64 of the last batch", w.byte_len);
	sync_peer(60);
}

static void t_ex_destroy(void)
{
	if (!xqp)
		bad("no ex QP (ex-create failed)");
	pair_destroy(&xp);
	xqp = NULL;
	xcq = NULL;
	sync_peer(61);
}

const struct check ex_checks[] = {
	{ "ex-create", t_ex_create, 0 },
	{ "ex-batch", t_ex_batch, 0 },
	{ "ex-sizes", t_ex_sizes, 0 },
	{ "ex-atomics", t_ex_atomics, 0 },
	{ "ex-abort", t_ex_abort, 0 },
	{ "ex-destroy", t_ex_destroy, 0 },
};
const size_t nex = sizeof(ex_checks) / sizeof(ex_checks[0]);
