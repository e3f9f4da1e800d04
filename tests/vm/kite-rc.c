// SPDX-License-Identifier: GPL-2.0
/*
 * RC data path checks through plain libibverbs, run in guests (built on the
 * host against out/rdma-core by scripts/mkinitramfs.sh and installed as
 * /usr/bin/kite-rc). Works on any RoCE device: the VM suite runs it over
 * Kite and over Soft-RoCE (rxe) alike.
 *
 *   kite-rc [OPTIONS] MODE            server: listen on the TCP port
 *   kite-rc [OPTIONS] MODE HOST       client: connect to HOST's server
 *   kite-rc count MODE                print how many results MODE prints
 *
 * MODE "func": every RC opcode with its data verified (SEND, SEND with
 * immediate, inline SEND, SEND with an SGE list, RDMA WRITE, WRITE with
 * immediate, RDMA READ, CMP_SWP, FETCH_ADD) and every error completion
 * (bad lkey -> LOC_PROT_ERR, bad rkey and an MR without remote access ->
 * REM_ACCESS_ERR with the target untouched, RNR with rnr_retry 0 ->
 * RNR_RETRY_EXC_ERR, peer QP destroyed -> RETRY_EXC_ERR, QP moved to ERR ->
 * WR_FLUSH_ERR for outstanding receives and a later send, in order).
 * MODE "bulk": -n N (default 10000) RDMA WRITE + SEND message pairs of mixed
 * sizes (seeded, -S), each SEND carrying its index: the server checks that
 * every SEND arrives exactly once and in order, and every byte of each SEND
 * and of each WRITE it announces.
 * MODE "mixed": -n N (default 10000) messages, each a SEND, an RDMA WRITE or
 * an RDMA READ of 1 B to 1 MiB (seeded, -S; log-uniform by octave, both
 * ends of the range for each opcode included), pipelined, every byte
 * verified, every completion checked once and in posting order, every SEND
 * received once and in order (see "mixed" below). The client prints its
 * throughput and totals as "#" lines. Its buffers take 24 MiB per side.
 *
 * The two sides exchange QP numbers, PSNs, GIDs, addresses and keys over TCP
 * (as ibv_rc_pingpong does) and run the same list of checks in lock step;
 * error checks use a fresh QP pair each. The server sends its findings to
 * the client after every check; only the client prints results, one line
 * each in the tests/vm format ("ok NAME", "FAIL NAME: detail", "skip NAME:
 * why"), so a run prints exactly "kite-rc count MODE" results whatever
 * happens (checks that cannot run any more are printed as FAIL). Lines
 * starting with "#" are information. Everything is bounded in time: CQ
 * polls, TCP reads (-t sets the overall limit, default 600 s; an alarm
 * ends the process after it).
 *
 * Options: -d DEV (default: first device), -g GID_INDEX (default 0),
 * -p TCP_PORT (default 18600), -n COUNT, -S SEED, -t SECONDS,
 * -P PREFIX (result names, default "rc"), -T QP_TIMEOUT (local ACK timeout
 * exponent of the main QP pair, default 14: 4.096 us << 14 = 67 ms).
 * Exit status 0 when every check passed, 1 otherwise, 2 on bad usage.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>

#include <infiniband/verbs.h>

#include "kite-test.h"

#define BUF_SIZE	(4u << 20)	/* per side: one MR, all access */
#define NOACC_SIZE	4096u		/* MR without remote access */
#define QP_DEPTH	256u
#define CQ_DEPTH	1024
#define MAX_SGE		4u
#define INLINE_SIZE	64u
#define POLL_MS		20000		/* one completion at most this late */
#define TCP_TIMEOUT_S	120

/* Offsets in the buffer used by the functional checks. */
#define OFF_SRC		0u		/* local source data (256 KiB) */
#define OFF_DST		(256u << 10)	/* receive / read / write target */
#define OFF_ATOMIC	(1024u << 10)	/* 8-byte atomic target */
#define OFF_RES		((1024u << 10) + 64u) /* atomic results */
#define FUNC_MAX	(200u << 10)	/* largest message in func */

/* Bulk mode: write region, receive buffers. */
#define BULK_WREG_OFF	0u
#define BULK_WREG_SIZE	(2u << 20)
#define BULK_RBUF_OFF	(2u << 20)
#define BULK_RBUF_SIZE	8192u		/* one receive buffer */
#define BULK_RQ		128u		/* receives posted (2 MiB / 8 KiB = 256) */
#define BULK_WINDOW	64u		/* WRs in flight on the client */
#define BULK_MAX_WRITE	16384u
#define BULK_HDR	24u

struct qpinfo {
	uint32_t qpn, psn, rkey, noacc_rkey;
	uint64_t addr, noacc_addr;
	uint8_t gid[16];
	uint32_t mtu, pad;
};

struct result {
	uint32_t test, failed, main_err, pad;
	char detail[240];
};

struct pair {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct qpinfo peer;
};

struct conn_opts {
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
};

static const struct conn_opts def_opts = { 14, 7, 7, 1 };

static struct {
	const char *dev, *prefix, *host;
	int gid_index, port, server, timeout_s, qp_timeout;
	size_t buf_size;
	unsigned int count, seed;
	int sock;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr, *noacc;
	uint8_t *buf, *noacc_buf;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	uint8_t rd_atom;
	uint32_t max_inline;
	int failures, is_rxe;
	char detail[248];	/* this check's failure, "" = passed */
} g = {
	.prefix = "rc", .port = 18600, .timeout_s = 600, .count = 10000,
	.seed = 1, .sock = -1, .buf_size = BUF_SIZE, .qp_timeout = -1,
};

/* ---- reporting ------------------------------------------------------------ */

static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Record this check's first failure (later ones are appended, shortened). */
static void bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kt_vbad(g.detail, sizeof(g.detail), fmt, ap);
	va_end(ap);
}

static void report(const char *name, int failed, const char *detail)
{
	kt_report(g.prefix, &g.failures, name, failed, 0, detail);
}

/* ---- TCP ------------------------------------------------------------------ */

static int tcp_io(void *p, size_t len, int do_send)
{
	return kt_tcp_io(g.sock, p, len, do_send);
}

static int xchg(const void *mine, void *theirs, size_t len)
{
	return kt_xchg(g.sock, g.server, mine, theirs, len);
}

/* The peer has sent something we have not read yet (it moved on). */
static int peer_moved_on(void)
{
	struct pollfd pfd = { .fd = g.sock, .events = POLLIN };

	return g.sock >= 0 && poll(&pfd, 1, 0) == 1;
}

/*
 * Rendezvous that also tells whether either side has failed this check
 * so far: 0 both fine, 1 someone failed (stop the check on both sides), -1
 * TCP broke.
 */
static int sync_ok(uint32_t tag)
{
	uint32_t mine[2] = { htonl(tag), htonl(g.detail[0] != '\0') }, theirs[2];

	if (xchg(mine, theirs, sizeof(mine)) || theirs[0] != mine[0])
		return -1;
	return mine[1] || theirs[1] ? 1 : 0;
}

/* Rendezvous: both sides pass the same tag. */
static int sync_peer(uint32_t tag)
{
	return kt_sync_peer(g.sock, g.server, tag);
}

static int tcp_connect(void)
{
	g.sock = kt_tcp_connect(g.host, g.port, TCP_TIMEOUT_S);
	return g.sock < 0 ? -1 : 0;
}

/* ---- verbs helpers ---------------------------------------------------------- */

static const char *st(enum ibv_wc_status s)
{
	return ibv_wc_status_str(s);
}

static int open_device(void)
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
	/* Soft-RoCE (vendor id 0xffffff) is the baseline these checks are
	 * proven against; its one known deviation is allowed below. */
	g.is_rxe = da.vendor_id == 0xffffff;
	g.rd_atom = da.max_qp_rd_atom < 16 ? da.max_qp_rd_atom : 16;
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

/* Create a QP (and its own CQ) and move it to INIT; no peer yet. */
static int pair_create(struct pair *p, uint32_t inline_size)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = QP_DEPTH, .max_recv_wr = QP_DEPTH,
			 .max_send_sge = MAX_SGE, .max_recv_sge = MAX_SGE,
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

static void pair_destroy(struct pair *p)
{
	if (p->qp && ibv_destroy_qp(p->qp))
		bad("ibv_destroy_qp: %s", strerror(errno));
	if (p->cq && ibv_destroy_cq(p->cq))
		bad("ibv_destroy_cq: %s", strerror(errno));
	p->qp = NULL;
	p->cq = NULL;
}

/* Swap QP information with the peer. 0 on success; -1: connection lost. */
static int pair_exchange(struct pair *p)
{
	struct qpinfo me = {
		.qpn = htonl(p->qp ? p->qp->qp_num : 0),
		.psn = htonl(p->qp ? (p->qp->qp_num * 7919u) & 0xffffff : 0),
		.rkey = htonl(g.mr ? g.mr->rkey : 0),
		.noacc_rkey = htonl(g.noacc ? g.noacc->rkey : 0),
		.mtu = htonl(g.mtu),
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
	memcpy(p->peer.gid, them.gid, 16);
	return 0;
}

/* INIT -> RTR -> RTS towards the peer (rtr_only: stop at RTR). */
static int pair_connect(struct pair *p, const struct conn_opts *o, int rtr_only)
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
static int wait_wc(struct pair *p, struct ibv_wc *wc, int ms)
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
static int expect_wc(struct pair *p, const char *what, uint64_t wr_id,
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

static int post_recv(struct pair *p, uint64_t wr_id, uint32_t off, uint32_t len)
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
static int post_one(struct pair *p, uint64_t wr_id, enum ibv_wr_opcode op,
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

/* ---- functional checks ------------------------------------------------------ */

static struct pair main_pair;
static int main_ok, main_dead;

static const uint32_t sizes[] = { 1, 63, 4096, 4097, 65536 + 3, FUNC_MAX };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* SEND (imm: SEND_WITH_IMM) of every size; the server checks each. */
static void t_send(int imm)
{
	struct pair *p = &main_pair;
	struct ibv_wc wc;
	unsigned int i;

	for (i = 0; i < NSIZES; i++) {
		uint32_t seed = 100 + i + imm * 50, len = sizes[i];

		if (g.server) {
			memset(g.buf + OFF_DST, 0, len + 16);
			post_recv(p, 1000 + i, OFF_DST, FUNC_MAX + 64);
		}
		if (sync_peer(1))
			return;
		if (!g.server) {
			fill(g.buf + OFF_SRC, len, seed);
			if (!post_one(p, 2000 + i, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
				      OFF_SRC, len, g.mr->lkey, 0, 0))
				expect_wc(p, "send", 2000 + i, IBV_WC_SUCCESS, IBV_WC_SEND, NULL);
		} else if (!expect_wc(p, "recv", 1000 + i, IBV_WC_SUCCESS, IBV_WC_RECV, &wc)) {
			long at = verify(g.buf + OFF_DST, len, seed);

			if (wc.byte_len != len)
				bad("size %u: byte_len %u", len, wc.byte_len);
			if (at >= 0)
				bad("size %u: received data differs at byte %ld", len, at);
			if (g.buf[OFF_DST + len] != 0)
				bad("size %u: byte after the message written", len);
			if (imm && (!(wc.wc_flags & IBV_WC_WITH_IMM) ||
				    ntohl(wc.imm_data) != (0x4b495445u ^ (2000 + i))))
				bad("size %u: imm %#x flags %#x", len, ntohl(wc.imm_data),
				    wc.wc_flags);
			if (!imm && (wc.wc_flags & IBV_WC_WITH_IMM))
				bad("size %u: IBV_WC_WITH_IMM on a plain SEND", len);
		}
		if (sync_ok(2))
			return;
	}
}

static void t_send_plain(void) { t_send(0); }
static void t_send_imm(void) { t_send(1); }

/* Inline SEND from a stack buffer (no MR): the server checks the data. */
static void t_send_inline(void)
{
	struct pair *p = &main_pair;
	uint8_t data[INLINE_SIZE];
	struct ibv_wc wc;

	if (g.server) {
		memset(g.buf + OFF_DST, 0, 256);
		post_recv(p, 3000, OFF_DST, 4096);
	}
	if (sync_peer(3))
		return;
	if (!g.server) {
		struct ibv_sge sge = { (uintptr_t)data, sizeof(data), 0 };
		struct ibv_send_wr wr = {
			.wr_id = 3001, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
		}, *badwr;
		int err;

		if (g.max_inline < INLINE_SIZE) {
			bad("the QP offers %u bytes inline, want %u", g.max_inline, INLINE_SIZE);
		} else {
			fill(data, sizeof(data), 300);
			err = ibv_post_send(p->qp, &wr, &badwr);
			/* The buffer may change as soon as post returns. */
			memset(data, 0xee, sizeof(data));
			if (err)
				bad("ibv_post_send inline: %s", strerror(err));
			else
				expect_wc(p, "inline send", 3001, IBV_WC_SUCCESS, IBV_WC_SEND, NULL);
		}
	} else if (!expect_wc(p, "recv", 3000, IBV_WC_SUCCESS, IBV_WC_RECV, &wc)) {
		if (wc.byte_len != INLINE_SIZE)
			bad("byte_len %u", wc.byte_len);
		else if (verify(g.buf + OFF_DST, INLINE_SIZE, 300) >= 0)
			bad("inline data differs at byte %ld", verify(g.buf + OFF_DST, INLINE_SIZE, 300));
	}
	sync_peer(4);
}

/* SEND gathered from 3 SGEs into a receive scattered over 2 SGEs. */
static void t_send_sge(void)
{
	struct pair *p = &main_pair;
	struct ibv_wc wc;
	const uint32_t part[3] = { 1000, 3000, 5000 }, total = 9000;

	if (g.server) {
		struct ibv_sge sge[2] = {
			{ (uintptr_t)g.buf + OFF_DST, 4000, g.mr->lkey },
			{ (uintptr_t)g.buf + OFF_DST + 8192, 8000, g.mr->lkey },
		};
		struct ibv_recv_wr wr = { .wr_id = 4000, .sg_list = sge, .num_sge = 2 }, *badwr;
		int err;

		memset(g.buf + OFF_DST, 0, 20000);
		err = ibv_post_recv(p->qp, &wr, &badwr);
		if (err)
			bad("ibv_post_recv 2 SGEs: %s", strerror(err));
	}
	if (sync_peer(5))
		return;
	if (!g.server) {
		/* The message is pattern 400; its parts lie apart in the buffer. */
		uint8_t tmp[9000];
		struct ibv_sge sge[3] = {
			{ (uintptr_t)g.buf + OFF_SRC, part[0], g.mr->lkey },
			{ (uintptr_t)g.buf + OFF_SRC + 4096, part[1], g.mr->lkey },
			{ (uintptr_t)g.buf + OFF_SRC + 16384, part[2], g.mr->lkey },
		};
		struct ibv_send_wr wr = {
			.wr_id = 4001, .sg_list = sge, .num_sge = 3, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
		}, *badwr;
		int err;

		fill(tmp, total, 400);
		memcpy(g.buf + OFF_SRC, tmp, part[0]);
		memcpy(g.buf + OFF_SRC + 4096, tmp + part[0], part[1]);
		memcpy(g.buf + OFF_SRC + 16384, tmp + part[0] + part[1], part[2]);
		err = ibv_post_send(p->qp, &wr, &badwr);
		if (err)
			bad("ibv_post_send 3 SGEs: %s", strerror(err));
		else
			expect_wc(p, "send 3 SGEs", 4001, IBV_WC_SUCCESS, IBV_WC_SEND, NULL);
	} else if (!expect_wc(p, "recv 2 SGEs", 4000, IBV_WC_SUCCESS, IBV_WC_RECV, &wc)) {
		uint8_t tmp[9000];

		memcpy(tmp, g.buf + OFF_DST, 4000);
		memcpy(tmp + 4000, g.buf + OFF_DST + 8192, total - 4000);
		if (wc.byte_len != total)
			bad("byte_len %u, want %u", wc.byte_len, total);
		if (verify(tmp, total, 400) >= 0)
			bad("scattered data differs at byte %ld", verify(tmp, total, 400));
		if (g.buf[OFF_DST + 4000] || g.buf[OFF_DST + 8192 + total - 4000])
			bad("bytes beyond the SGEs written");
	}
	sync_peer(6);
}

/* RDMA WRITE (imm: WRITE_WITH_IMM, consuming a receive) of every size. */
static void t_write(int imm)
{
	struct pair *p = &main_pair;
	struct ibv_wc wc;
	unsigned int i;

	for (i = 0; i < NSIZES; i++) {
		uint32_t seed = 500 + i + imm * 50, len = sizes[i];

		if (g.server) {
			memset(g.buf + OFF_DST, 0, len + 16);
			if (imm)
				post_recv(p, 5000 + i, OFF_SRC, 16);
		}
		if (sync_peer(7))
			return;
		if (!g.server) {
			fill(g.buf + OFF_SRC, len, seed);
			if (!post_one(p, 6000 + i, imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
				      OFF_SRC, len, g.mr->lkey, p->peer.addr + OFF_DST, p->peer.rkey))
				expect_wc(p, "write", 6000 + i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL);
		} else if (imm && !expect_wc(p, "recv write-imm", 5000 + i, IBV_WC_SUCCESS,
					     IBV_WC_RECV_RDMA_WITH_IMM, &wc)) {
			if (!(wc.wc_flags & IBV_WC_WITH_IMM) ||
			    ntohl(wc.imm_data) != (0x4b495445u ^ (6000 + i)))
				bad("size %u: imm %#x flags %#x", len, ntohl(wc.imm_data), wc.wc_flags);
			if (wc.byte_len != len)
				bad("size %u: byte_len %u", len, wc.byte_len);
		}
		if (sync_ok(8) < 0)
			return;
		/* The requester's completion means the data is placed. */
		if (g.server) {
			long at = verify(g.buf + OFF_DST, len, seed);

			if (at >= 0)
				bad("size %u: written data differs at byte %ld", len, at);
			if (g.buf[OFF_DST + len])
				bad("size %u: byte after the written range changed", len);
		}
		if (sync_ok(18))
			return;
	}
}

static void t_write_plain(void) { t_write(0); }
static void t_write_imm(void) { t_write(1); }

/* RDMA READ of every size from the server's buffer. */
static void t_read(void)
{
	struct pair *p = &main_pair;
	unsigned int i;

	for (i = 0; i < NSIZES; i++) {
		uint32_t seed = 700 + i, len = sizes[i];

		if (g.server)
			fill(g.buf + OFF_SRC, len, seed);
		else
			memset(g.buf + OFF_DST, 0, len + 16);
		if (sync_peer(9))
			return;
		if (!g.server &&
		    !post_one(p, 7000 + i, IBV_WR_RDMA_READ, OFF_DST, len, g.mr->lkey,
			      p->peer.addr + OFF_SRC, p->peer.rkey) &&
		    !expect_wc(p, "read", 7000 + i, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, NULL)) {
			long at = verify(g.buf + OFF_DST, len, seed);

			if (at >= 0)
				bad("size %u: read data differs at byte %ld", len, at);
			if (g.buf[OFF_DST + len])
				bad("size %u: byte after the read range written", len);
		}
		if (sync_ok(10))
			return;
	}
}

static int post_atomic(struct pair *p, uint64_t wr_id, enum ibv_wr_opcode op,
		       uint64_t cmp_add, uint64_t swap)
{
	struct ibv_sge sge = { (uintptr_t)g.buf + OFF_RES, 8, g.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *badwr;
	int err;

	wr.wr.atomic.remote_addr = p->peer.addr + OFF_ATOMIC;
	wr.wr.atomic.rkey = p->peer.rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	memset(g.buf + OFF_RES, 0xa5, 8);
	err = ibv_post_send(p->qp, &wr, &badwr);
	if (err)
		bad("ibv_post_send atomic %d: %s", op, strerror(err));
	return err ? -1 : 0;
}

static uint64_t res64(void)
{
	uint64_t v;

	memcpy(&v, g.buf + OFF_RES, 8);
	return v;
}

static uint64_t atom64(void)
{
	uint64_t v;

	memcpy(&v, g.buf + OFF_ATOMIC, 8);
	return v;
}

#define A0 0x1111222233334444ull
#define A1 0x5555666677778888ull
#define A2 0x9999aaaabbbbccccull

/* CMP_SWP that matches, then one that does not; the server checks memory. */
static void t_cmp_swp(void)
{
	struct pair *p = &main_pair;

	if (g.server)
		memcpy(g.buf + OFF_ATOMIC, &(uint64_t){ A0 }, 8);
	if (sync_peer(11))
		return;
	if (!g.server) {
		if (!post_atomic(p, 8000, IBV_WR_ATOMIC_CMP_AND_SWP, A0, A1) &&
		    !expect_wc(p, "cmp_swp", 8000, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP, NULL) &&
		    res64() != A0)
			bad("matching CMP_SWP returned %#" PRIx64 ", want %#llx", res64(), A0);
		if (!post_atomic(p, 8001, IBV_WR_ATOMIC_CMP_AND_SWP, A0, A2) &&
		    !expect_wc(p, "cmp_swp", 8001, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP, NULL) &&
		    res64() != A1)
			bad("failing CMP_SWP returned %#" PRIx64 ", want %#llx", res64(), A1);
	}
	if (sync_peer(12))
		return;
	if (g.server && atom64() != A1)
		bad("target holds %#" PRIx64 ", want %#llx (swapped once)", atom64(), A1);
}

/* FETCH_ADD twice (the second wraps past 2^64); the server checks memory. */
static void t_fetch_add(void)
{
	struct pair *p = &main_pair;
	const uint64_t add2 = 0xf000000000000000ull;

	if (g.server)
		memcpy(g.buf + OFF_ATOMIC, &(uint64_t){ A2 }, 8);
	if (sync_peer(13))
		return;
	if (!g.server) {
		if (!post_atomic(p, 8100, IBV_WR_ATOMIC_FETCH_AND_ADD, 5, 0) &&
		    !expect_wc(p, "fetch_add", 8100, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, NULL) &&
		    res64() != A2)
			bad("FETCH_ADD returned %#" PRIx64 ", want %#llx", res64(), A2);
		if (!post_atomic(p, 8101, IBV_WR_ATOMIC_FETCH_AND_ADD, add2, 0) &&
		    !expect_wc(p, "fetch_add", 8101, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, NULL) &&
		    res64() != A2 + 5)
			bad("second FETCH_ADD returned %#" PRIx64 ", want %#llx", res64(), A2 + 5);
	}
	if (sync_peer(14))
		return;
	if (g.server && atom64() != A2 + 5 + add2)
		bad("target holds %#" PRIx64 ", want %#llx", atom64(), A2 + 5 + add2);
}

/* A fresh QP pair for an error check; *fatal set when TCP broke. */
static int fresh_pair(struct pair *p, const struct conn_opts *o, int *fatal)
{
	int err = pair_create(p, 0);

	if (pair_exchange(p)) {
		*fatal = 1;
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

static int fatal;	/* TCP to the peer broke: stop */

/* WRITE with a bad lkey: LOC_PROT_ERR; the target stays untouched. */
static void t_err_lkey(void)
{
	struct pair p;

	if (g.server)
		memset(g.buf + OFF_DST, 0x5c, 4096);
	if (fresh_pair(&p, &def_opts, &fatal) && fatal)
		return;
	if (sync_peer(20))
		goto out;
	if (!g.server && p.qp) {
		fill(g.buf + OFF_SRC, 4096, 900);
		struct ibv_wc wc;

		/*
		 * IB: an invalid L_Key is a local protection error. Linux 6.1's
		 * rxe reports LOC_QP_OP_ERR instead; that is accepted from rxe
		 * only (and said so), never from another device.
		 */
		if (!post_one(&p, 9000, IBV_WR_RDMA_WRITE, OFF_SRC, 4096, g.mr->lkey ^ 0x5a5a5a00u,
			      p.peer.addr + OFF_DST, p.peer.rkey)) {
			if (g.is_rxe && !wait_wc(&p, &wc, POLL_MS) && wc.wr_id == 9000 &&
			    wc.status == IBV_WC_LOC_QP_OP_ERR)
				info("rxe completes a bad lkey with LOC_QP_OP_ERR (accepted for rxe only)");
			else if (g.is_rxe)
				bad("bad lkey: got wr_id %" PRIu64 " status %s", wc.wr_id, st(wc.status));
			else
				expect_wc(&p, "write with bad lkey", 9000, IBV_WC_LOC_PROT_ERR, -1, NULL);
		}
	}
	if (sync_peer(21))
		goto out;
	if (g.server)
		for (int i = 0; i < 4096; i++)
			if (g.buf[OFF_DST + i] != 0x5c) {
				bad("target changed at byte %d", i);
				break;
			}
out:
	pair_destroy(&p);
}

/* WRITE with a bad rkey (noacc: to an MR without remote access). */
static void t_err_rkey(int noacc)
{
	struct pair p;
	uint8_t *target = noacc ? g.noacc_buf : g.buf + OFF_DST;

	if (g.server)
		memset(target, 0x5c, 4096);
	if (fresh_pair(&p, &def_opts, &fatal) && fatal)
		return;
	if (sync_peer(22))
		goto out;
	if (!g.server && p.qp) {
		uint64_t raddr = noacc ? p.peer.noacc_addr : p.peer.addr + OFF_DST;
		uint32_t rkey = noacc ? p.peer.noacc_rkey : p.peer.rkey ^ 0x5a5a5a00u;

		fill(g.buf + OFF_SRC, 4096, 901);
		if (!post_one(&p, 9100, IBV_WR_RDMA_WRITE, OFF_SRC, 4096, g.mr->lkey, raddr, rkey))
			expect_wc(&p, noacc ? "write to an MR without remote write" :
				  "write with bad rkey", 9100, IBV_WC_REM_ACCESS_ERR, -1, NULL);
	}
	if (sync_peer(23))
		goto out;
	if (g.server)
		for (int i = 0; i < 4096; i++)
			if (target[i] != 0x5c) {
				bad("target changed at byte %d", i);
				break;
			}
out:
	pair_destroy(&p);
}

static void t_err_rkey_bad(void) { t_err_rkey(0); }
static void t_err_rkey_noacc(void) { t_err_rkey(1); }

/* SEND with no receive posted and rnr_retry 0: RNR_RETRY_EXC_ERR. */
static void t_err_rnr(void)
{
	struct conn_opts o = def_opts;
	struct pair p;

	o.rnr_retry = 0;
	if (fresh_pair(&p, &o, &fatal) && fatal)
		return;
	if (sync_peer(24))
		goto out;
	if (!g.server && p.qp &&
	    !post_one(&p, 9200, IBV_WR_SEND, OFF_SRC, 64, g.mr->lkey, 0, 0))
		expect_wc(&p, "send without a receive", 9200, IBV_WC_RNR_RETRY_EXC_ERR, -1, NULL);
	sync_peer(25);
out:
	pair_destroy(&p);
}

/* The peer destroys its QP first: RETRY_EXC_ERR after a few timeouts. */
static void t_err_peer_gone(void)
{
	struct conn_opts o = { .timeout = 12, .retry_cnt = 2, .rnr_retry = 0, .min_rnr_timer = 1 };
	struct pair p;
	double t0;

	if (fresh_pair(&p, &o, &fatal) && fatal)
		return;
	if (g.server)
		pair_destroy(&p);
	if (sync_peer(26))
		goto out;
	t0 = now_s();
	if (!g.server && p.qp &&
	    !post_one(&p, 9300, IBV_WR_RDMA_WRITE, OFF_SRC, 256, g.mr->lkey,
		      p.peer.addr + OFF_DST, p.peer.rkey) &&
	    !expect_wc(&p, "write to a destroyed QP", 9300, IBV_WC_RETRY_EXC_ERR, -1, NULL))
		info("peer-gone: RETRY_EXC_ERR after %.2f s", now_s() - t0);
	sync_peer(27);
out:
	pair_destroy(&p);
}

/* Outstanding receives and a later send flush, in order, when the QP
 * goes to ERR. */
static void t_err_flush(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct pair p;
	int i, err;

	if (fresh_pair(&p, &def_opts, &fatal) && fatal)
		return;
	if (sync_peer(28))
		goto out;
	if (!g.server && p.qp) {
		for (i = 0; i < 4; i++)
			post_recv(&p, 9400 + i, OFF_DST + i * 4096, 4096);
		err = ibv_modify_qp(p.qp, &a, IBV_QP_STATE);
		if (err) {
			bad("modify QP to ERR: %s", strerror(err));
		} else {
			post_one(&p, 9410, IBV_WR_SEND, OFF_SRC, 64, g.mr->lkey, 0, 0);
			for (i = 0; i < 4; i++)
				if (expect_wc(&p, "outstanding recv", 9400 + i,
					      IBV_WC_WR_FLUSH_ERR, -1, NULL))
					break;
			expect_wc(&p, "send posted in ERR", 9410, IBV_WC_WR_FLUSH_ERR, -1, NULL);
		}
	}
	sync_peer(29);
out:
	pair_destroy(&p);
}

struct check {
	const char *name;
	void (*fn)(void);
	int needs_main;		/* uses the main QP pair */
};

static const struct check func_checks[] = {
	{ "send", t_send_plain, 1 },
	{ "send-imm", t_send_imm, 1 },
	{ "send-inline", t_send_inline, 1 },
	{ "send-sge", t_send_sge, 1 },
	{ "write", t_write_plain, 1 },
	{ "write-imm", t_write_imm, 1 },
	{ "read", t_read, 1 },
	{ "cmp-swp", t_cmp_swp, 1 },
	{ "fetch-add", t_fetch_add, 1 },
	{ "err-bad-lkey", t_err_lkey, 0 },
	{ "err-bad-rkey", t_err_rkey_bad, 0 },
	{ "err-no-remote-access", t_err_rkey_noacc, 0 },
	{ "err-rnr-retry", t_err_rnr, 0 },
	{ "err-peer-gone", t_err_peer_gone, 0 },
	{ "err-flush", t_err_flush, 0 },
};
#define NFUNC (sizeof(func_checks) / sizeof(func_checks[0]))

/*
 * Run one check on both sides, then the server sends what it found; the
 * client prints the result. -1 when the TCP connection broke.
 */
static int run_check(uint32_t idx, const char *name, void (*fn)(void), int skip_why_main)
{
	struct result mine = { .test = htonl(idx) }, theirs;
	char detail[600];

	g.detail[0] = '\0';
	if (sync_peer(0x1000 + idx)) {
		bad("lost step with the peer");
		return -1;
	}
	if (!g.mr)
		bad("not run: the device could not be opened");
	else if (skip_why_main && main_dead)
		bad("not run: the main QP pair went to ERR in an earlier check");
	else if (skip_why_main)
		bad("not run: the main QP pair could not be set up");
	else
		fn();
	if (fatal)
		return -1;
	mine.failed = htonl(g.detail[0] != '\0');
	if (main_ok && main_pair.qp) {
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qia;

		mine.main_err = htonl(!ibv_query_qp(main_pair.qp, &qa, IBV_QP_STATE, &qia) &&
				      qa.qp_state == IBV_QPS_ERR);
	}
	snprintf(mine.detail, sizeof(mine.detail), "%s", g.detail);
	if (xchg(&mine, &theirs, sizeof(mine)) || theirs.test != mine.test)
		return -1;
	/* A main QP in ERR makes the later checks on it pointless. */
	if (main_ok && (mine.main_err || theirs.main_err)) {
		main_ok = 0;
		main_dead = 1;
	}
	if (!g.server) {
		theirs.detail[sizeof(theirs.detail) - 1] = '\0';
		snprintf(detail, sizeof(detail), "%s%s%s%s", g.detail,
			 g.detail[0] && theirs.detail[0] ? "; " : "",
			 theirs.detail[0] ? "server: " : "", theirs.detail);
		report(name, g.detail[0] || ntohl(theirs.failed), detail);
	} else if (g.detail[0]) {
		g.failures++;
	}
	return 0;
}

/* ---- bulk ------------------------------------------------------------------- */

static uint32_t rng_state;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

/* Sizes of message i: mostly small, some up to the maximum. */
struct bulk_msg {
	uint32_t wlen, woff, slen;
};

static void bulk_gen(struct bulk_msg *m, uint32_t *woff)
{
	uint32_t r = rnd();

	m->wlen = 1 + (r % 4 == 0 ? rnd() % BULK_MAX_WRITE : rnd() % 512);
	m->slen = BULK_HDR + (r % 8 == 1 ? rnd() % (BULK_RBUF_SIZE - BULK_HDR) : rnd() % 256);
	if (*woff + m->wlen > BULK_WREG_SIZE)
		*woff = 0;
	m->woff = *woff;
	*woff += (m->wlen + 63) & ~63u;
}

/* Server: receive COUNT sends, verify each and the write it announces. */
static void bulk_server(struct pair *p)
{
	uint32_t woff = 0, i, posted = 0, done = 0, slot;
	uint64_t bytes = 0;
	struct ibv_wc wc;

	rng_state = g.seed ? g.seed : 1;
	for (posted = 0; posted < BULK_RQ && posted < g.count; posted++)
		post_recv(p, posted, BULK_RBUF_OFF + (posted % BULK_RQ) * BULK_RBUF_SIZE,
			  BULK_RBUF_SIZE);
	if (sync_peer(40))
		return;
	for (i = 0; i < g.count && !g.detail[0]; i++) {
		struct bulk_msg m;
		uint32_t hdr[6];
		long at;

		bulk_gen(&m, &woff);
		if (wait_wc(p, &wc, 60000)) {
			bad("message %u of %u: no receive completion in time (60 s, or 2 s"
			    " after the client stopped)", i, g.count);
			break;
		}
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV) {
			bad("message %u: status %s opcode %d", i, st(wc.status), wc.opcode);
			break;
		}
		if (wc.wr_id != i) {
			bad("message %u: completed receive %" PRIu64 " (out of order)", i, wc.wr_id);
			break;
		}
		slot = BULK_RBUF_OFF + (i % BULK_RQ) * BULK_RBUF_SIZE;
		memcpy(hdr, g.buf + slot, sizeof(hdr));
		if (wc.byte_len != m.slen || ntohl(hdr[0]) != i || ntohl(hdr[1]) != m.woff ||
		    ntohl(hdr[2]) != m.wlen) {
			bad("message %u: byte_len %u (want %u), header index %u off %u len %u"
			    " (want %u %u)", i, wc.byte_len, m.slen, ntohl(hdr[0]),
			    ntohl(hdr[1]), ntohl(hdr[2]), m.woff, m.wlen);
			break;
		}
		at = verify(g.buf + slot + BULK_HDR, m.slen - BULK_HDR, 0x10000 + i);
		if (at >= 0) {
			bad("message %u: SEND data differs at byte %ld", i, at + BULK_HDR);
			break;
		}
		/* RC order: the WRITE before this SEND has been placed. */
		at = verify(g.buf + BULK_WREG_OFF + m.woff, m.wlen, 0x20000 + i);
		if (at >= 0) {
			bad("message %u: WRITE data (%u bytes at %u) differs at byte %ld",
			    i, m.wlen, m.woff, at);
			break;
		}
		bytes += m.wlen + m.slen;
		done++;
		if (posted < g.count) {
			post_recv(p, posted, BULK_RBUF_OFF + (posted % BULK_RQ) * BULK_RBUF_SIZE,
				  BULK_RBUF_SIZE);
			posted++;
		}
	}
	if (wait_wc(p, &wc, 0) == 0 && !g.detail[0])
		bad("an extra completion after %u messages (wr_id %" PRIu64 ", status %s)",
		    g.count, wc.wr_id, st(wc.status));
	info("bulk server: %u of %u messages verified, %" PRIu64 " bytes", done, g.count, bytes);
}

/* Client: post WRITE + SEND per message, keeping a window in flight. */
static void bulk_client(struct pair *p)
{
	uint32_t woff = 0, next = 0, completed = 0, inflight = 0;
	uint64_t bytes = 0;
	double t0, secs;
	struct ibv_wc wc[16];

	rng_state = g.seed ? g.seed : 1;
	if (sync_peer(40))
		return;
	t0 = now_s();
	while (completed < 2 * g.count && !g.detail[0]) {
		while (next < g.count && inflight + 2 <= BULK_WINDOW) {
			struct bulk_msg m;
			uint32_t hdr[6] = { 0 };
			/* Source data in per-slot areas: slot reuse waits for completion. */
			uint32_t src = (next % (BULK_WINDOW / 2)) * (BULK_MAX_WRITE + BULK_RBUF_SIZE);
			struct ibv_sge ws = { (uintptr_t)g.buf + src, 0, g.mr->lkey };
			struct ibv_sge ss = { (uintptr_t)g.buf + src + BULK_MAX_WRITE, 0, g.mr->lkey };
			struct ibv_send_wr sw = {
				.wr_id = 2 * (uint64_t)next + 1, .sg_list = &ss, .num_sge = 1,
				.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
			};
			struct ibv_send_wr ww = {
				.wr_id = 2 * (uint64_t)next, .sg_list = &ws, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
				.next = &sw,
			}, *badwr;
			int err;

			bulk_gen(&m, &woff);
			ws.length = m.wlen;
			ss.length = m.slen;
			ww.wr.rdma.remote_addr = p->peer.addr + BULK_WREG_OFF + m.woff;
			ww.wr.rdma.rkey = p->peer.rkey;
			fill(g.buf + src, m.wlen, 0x20000 + next);
			hdr[0] = htonl(next);
			hdr[1] = htonl(m.woff);
			hdr[2] = htonl(m.wlen);
			memcpy(g.buf + src + BULK_MAX_WRITE, hdr, sizeof(hdr));
			fill(g.buf + src + BULK_MAX_WRITE + BULK_HDR, m.slen - BULK_HDR, 0x10000 + next);
			err = ibv_post_send(p->qp, &ww, &badwr);
			if (err) {
				bad("message %u: ibv_post_send: %s", next, strerror(err));
				break;
			}
			bytes += m.wlen + m.slen;
			inflight += 2;
			next++;
		}
		if (g.detail[0])
			break;
		{
			double end = now_s() + 60;
			int n, k;

			do {
				n = ibv_poll_cq(p->cq, 16, wc);
				if (!n)
					sched_yield();
			} while (n == 0 && now_s() < end);
			if (n <= 0) {
				bad("no completion within 60 s after %u of %u WRs (%d)", completed,
				    2 * g.count, n);
				break;
			}
			for (k = 0; k < n; k++) {
				if (wc[k].status != IBV_WC_SUCCESS) {
					bad("WR %" PRIu64 " (message %" PRIu64 "): status %s",
					    wc[k].wr_id, wc[k].wr_id / 2, st(wc[k].status));
					break;
				}
				if (wc[k].wr_id != completed) {
					bad("completion for WR %" PRIu64 ", want %u (order)",
					    wc[k].wr_id, completed);
					break;
				}
				completed++;
				inflight--;
			}
		}
	}
	secs = now_s() - t0;
	info("bulk client: %u messages (%u WRs) completed, %" PRIu64 " bytes in %.1f s"
	     " (%.2f MB/s)", completed / 2, completed, bytes, secs,
	     secs > 0 ? bytes / secs / 1e6 : 0.0);
}

static void t_bulk(void)
{
	struct pair *p = &main_pair;

	if (g.server)
		bulk_server(p);
	else
		bulk_client(p);
}

/* ---- mixed ------------------------------------------------------------------ */

/*
 * Mode "mixed": COUNT messages, each an RDMA WRITE, a SEND or an RDMA READ
 * (one in three each) of 1 B to 1 MiB, posted by the client (requester).
 * Sizes are log-uniform by octave: an octave k in 0..19 with equal chance,
 * then a size uniform in [2^k, 2^(k+1)); messages 0..5 are the ends of the
 * range for each opcode (1 B and exactly 1 MiB). Both sides draw the same
 * sequence from the seed (-S) and cut it into batches (at most MIX_BATCH
 * messages and MIX_AREA bytes of each kind); per batch the server fills the
 * sources of its READs and posts one receive of the exact size per SEND
 * (wr_id = message index) in the batch's half of its areas (the next batch
 * is prepared while the client runs this one), then says go over TCP. The
 * client posts the batch with up to MIX_WINDOW WRs in flight, checks every
 * completion once and in posting order (wr_id = message index, status,
 * opcode) and every byte of each READ, then says done; the server checks
 * every receive completion (index, in order, byte_len, no immediate) and
 * every byte of each SEND as it arrives, and every byte of the batch's
 * WRITEs once the client says done. Data: 64-bit words of a per-message
 * pattern, with the message index in the first 4 bytes of messages of 4
 * bytes or more; the pattern differs per message, so a stale, duplicated or
 * misplaced message does not verify. After the last batch neither side may
 * have a completion left over.
 */
#define MIX_MAX		(1u << 20)
#define MIX_OCTAVES	20u
#define MIX_AREA	(4u << 20)	/* per batch: bytes of each opcode */
#define MIX_BATCH	112u		/* messages per batch */
#define MIX_WINDOW	32u		/* WRs in flight on the client */
#define MIX_ALIGN	64u
/* Server: WRITE targets, receive buffers, READ sources: two halves each. */
#define MIX_S_WRITE	0u
#define MIX_S_RECV	(2 * MIX_AREA)
#define MIX_S_READ	(4 * MIX_AREA)
/* Client: SEND and WRITE sources, READ targets. */
#define MIX_C_SRC	0u
#define MIX_C_READ	(2 * MIX_AREA)
#define MIX_BUF_SIZE	(6 * MIX_AREA)
#define MIX_TAG_GO	0x4d474f00u
#define MIX_TAG_DONE	0x4d444e00u

enum { MIX_SEND, MIX_WRITE, MIX_READ, MIX_NOPS };
static const char *const mix_op_name[MIX_NOPS] = { "SEND", "WRITE", "READ" };

struct mix_msg {
	uint32_t idx, len, op, off;	/* off: in the opcode's area */
};

static struct {
	uint32_t next;			/* next message index to draw */
	int have_carry;
	struct mix_msg carry;		/* drawn, did not fit the last batch */
	struct mix_msg m[MIX_BATCH];
	uint32_t n;			/* messages in this batch */
	uint32_t batch;			/* its number (client) */
	uint32_t min_len, max_len;
	uint64_t bytes[MIX_NOPS];
	uint32_t count[MIX_NOPS];
} mix;

static void mix_draw(struct mix_msg *m)
{
	static const uint32_t ends[] = { 1, 1, 1, MIX_MAX, MIX_MAX, MIX_MAX };
	uint32_t k;

	m->idx = mix.next++;
	if (m->idx < sizeof(ends) / sizeof(ends[0])) {
		m->op = m->idx % MIX_NOPS;
		m->len = ends[m->idx];
		return;
	}
	m->op = rnd() % MIX_NOPS;
	k = rnd() % MIX_OCTAVES;
	m->len = (1u << k) + rnd() % (1u << k);
}

/* The next batch of messages (0 when all COUNT are done). */
static uint32_t mix_batch(void)
{
	uint32_t used[MIX_NOPS] = { 0 };

	mix.n = 0;
	while (mix.n < MIX_BATCH && (mix.have_carry || mix.next < g.count)) {
		struct mix_msg m;
		uint32_t need;

		if (mix.have_carry)
			m = mix.carry;
		else
			mix_draw(&m);
		mix.have_carry = 0;
		need = (m.len + MIX_ALIGN - 1) & ~(MIX_ALIGN - 1);
		if (used[m.op] + need > MIX_AREA) {
			mix.carry = m;
			mix.have_carry = 1;
			break;
		}
		m.off = used[m.op];
		used[m.op] += need;
		mix.m[mix.n++] = m;
	}
	return mix.n;
}

static uint64_t mix_word(uint64_t s, uint64_t k)
{
	uint64_t x = s + (k + 1) * 0x9e3779b97f4a7c15ull;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return x;
}

static uint64_t mix_seed(uint32_t idx)
{
	return ((uint64_t)g.seed << 32 | idx) * 0xd1b54a32d192ed03ull;
}

/* Word K of message IDX's data as it must be in memory. */
static uint64_t mix_expect(uint64_t s, uint32_t idx, uint32_t len, uint64_t k)
{
	uint64_t w = mix_word(s, k);

	if (!k && len >= 4)
		memcpy(&w, &idx, 4);
	return w;
}

static void mix_fill(uint8_t *p, uint32_t idx, uint32_t len)
{
	uint64_t s = mix_seed(idx), w;
	uint32_t k, nw = len / 8;

	for (k = 0; k < nw; k++) {
		w = mix_expect(s, idx, len, k);
		memcpy(p + 8 * k, &w, 8);
	}
	if (len % 8) {
		w = mix_expect(s, idx, len, nw);
		memcpy(p + 8 * nw, &w, len % 8);
	}
}

/* Offset of the first wrong byte of message IDX at P, or -1. */
static long mix_verify(const uint8_t *p, uint32_t idx, uint32_t len)
{
	uint64_t s = mix_seed(idx), w, got;
	uint32_t k, nw = len / 8, i;

	for (k = 0; k < nw; k++) {
		w = mix_expect(s, idx, len, k);
		memcpy(&got, p + 8 * k, 8);
		if (got != w)
			break;
	}
	if (k == nw && !(len % 8))
		return -1;
	w = mix_expect(s, idx, len, k);
	for (i = 0; i < 8 && 8 * k + i < len; i++)
		if (p[8 * k + i] != ((const uint8_t *)&w)[i])
			return 8 * (long)k + i;
	return -1;
}

/* Batch handshake over TCP: tag, batch number, failed. */
static int mix_say(uint32_t tag, uint32_t batch)
{
	uint32_t m[3] = { htonl(tag), htonl(batch), htonl(g.detail[0] != '\0') };

	return tcp_io(m, sizeof(m), 1);
}

/* 0: the peer's message arrived and it is fine; 1: the peer failed; -1. */
static int mix_hear(uint32_t tag, uint32_t batch)
{
	uint32_t m[3];

	if (tcp_io(m, sizeof(m), 0)) {
		bad("batch %u: no word from the peer (TCP)", batch);
		return -1;
	}
	if (ntohl(m[0]) != tag || ntohl(m[1]) != batch) {
		bad("batch %u: out of step with the peer (tag 0x%x batch %u)", batch,
		    ntohl(m[0]), ntohl(m[1]));
		return -1;
	}
	return m[2] ? 1 : 0;
}

static uint32_t mix_half(uint32_t batch)
{
	return (batch & 1) * MIX_AREA;
}

/* Server: READ sources and receives of the current batch. */
static void mix_prepare(struct pair *p, uint32_t batch, struct mix_msg *save, uint32_t *nsave)
{
	uint32_t i;

	*nsave = mix.n;
	memcpy(save, mix.m, mix.n * sizeof(*save));
	for (i = 0; i < mix.n && !g.detail[0]; i++) {
		const struct mix_msg *m = &mix.m[i];

		if (m->op == MIX_READ)
			mix_fill(g.buf + MIX_S_READ + mix_half(batch) + m->off, m->idx, m->len);
		else if (m->op == MIX_SEND)
			post_recv(p, m->idx, MIX_S_RECV + mix_half(batch) + m->off, m->len);
	}
}

static void mix_server(struct pair *p)
{
	static struct mix_msg cur[MIX_BATCH], nxt[MIX_BATCH];
	uint32_t ncur = 0, nnxt = 0, batch, i, got = 0, verified = 0;
	uint64_t bytes = 0;
	struct ibv_wc wc;
	int peer;
	long at;

	rng_state = g.seed ? g.seed : 1;
	memset(&mix, 0, sizeof(mix));
	if (mix_batch())
		mix_prepare(p, 0, cur, &ncur);
	for (batch = 0;; batch++) {
		/* Go (or, with our failure flag set, stop) for this batch. */
		if (mix_say(MIX_TAG_GO, batch)) {
			bad("batch %u: TCP send failed", batch);
			break;
		}
		if (g.detail[0] || !ncur)
			break;
		/* The next batch, in the other halves, while the client runs this one. */
		nnxt = 0;
		if (mix_batch())
			mix_prepare(p, batch + 1, nxt, &nnxt);
		for (i = 0; i < ncur && !g.detail[0]; i++) {
			const struct mix_msg *m = &cur[i];

			if (m->op != MIX_SEND)
				continue;
			if (wait_wc(p, &wc, 60000)) {
				bad("message %u (SEND, %u bytes): no receive completion in time"
				    " (60 s, or 2 s after the client stopped)", m->idx, m->len);
				break;
			}
			if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
			    (wc.wc_flags & IBV_WC_WITH_IMM)) {
				bad("message %u: receive status %s opcode %d flags 0x%x", m->idx,
				    st(wc.status), wc.opcode, wc.wc_flags);
				break;
			}
			if (wc.wr_id != m->idx || wc.byte_len != m->len) {
				bad("message %u: receive completion for message %" PRIu64 " with %u"
				    " bytes, want %u bytes (lost, duplicated or out of order)",
				    m->idx, wc.wr_id, wc.byte_len, m->len);
				break;
			}
			at = mix_verify(g.buf + MIX_S_RECV + mix_half(batch) + m->off, m->idx,
					m->len);
			if (at >= 0) {
				bad("message %u (SEND, %u bytes): byte %ld differs", m->idx, m->len, at);
				break;
			}
			got++;
		}
		/*
		 * The client says done once it has every completion of the batch
		 * (so its WRITEs are in place), or gave up (then it stops too).
		 */
		peer = mix_hear(MIX_TAG_DONE, batch);
		if (peer)
			break;
		for (i = 0; i < ncur && !g.detail[0]; i++) {
			const struct mix_msg *m = &cur[i];

			if (m->op == MIX_WRITE) {
				at = mix_verify(g.buf + MIX_S_WRITE + mix_half(batch) + m->off,
						m->idx, m->len);
				if (at >= 0) {
					bad("message %u (WRITE, %u bytes at offset %u): byte %ld"
					    " differs", m->idx, m->len, m->off, at);
					break;
				}
			}
			bytes += m->len;
			verified++;
		}
		memcpy(cur, nxt, nnxt * sizeof(*cur));
		ncur = nnxt;
	}
	if (!g.detail[0] && wait_wc(p, &wc, 0) == 0)
		bad("an extra completion after %u receives (wr_id %" PRIu64 ", status %s)",
		    got, wc.wr_id, st(wc.status));
	info("mixed server: %u of %u messages verified (%u SENDs received), %" PRIu64
	     " bytes", verified, g.count, got, bytes);
}

static int mix_post(struct pair *p, const struct mix_msg *m)
{
	static const enum ibv_wr_opcode wop[MIX_NOPS] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ
	};
	uint32_t off;

	if (m->op == MIX_READ) {
		off = MIX_C_READ + m->off;
		return post_one(p, m->idx, wop[m->op], off, m->len, g.mr->lkey,
				p->peer.addr + MIX_S_READ + mix_half(mix.batch) + m->off,
				p->peer.rkey);
	}
	/* SEND sources after the WRITE sources of the batch. */
	off = MIX_C_SRC + (m->op == MIX_SEND ? MIX_AREA : 0) + m->off;
	mix_fill(g.buf + off, m->idx, m->len);
	return post_one(p, m->idx, wop[m->op], off, m->len, g.mr->lkey,
			p->peer.addr + MIX_S_WRITE + mix_half(mix.batch) + m->off,
			p->peer.rkey);
}

static void mix_client(struct pair *p)
{
	static const enum ibv_wc_opcode wco[MIX_NOPS] = {
		IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ
	};
	uint32_t batch, posted, done, total = 0, i;
	uint64_t bytes = 0;
	double t0, secs;
	struct ibv_wc wc[16];
	long at;

	rng_state = g.seed ? g.seed : 1;
	memset(&mix, 0, sizeof(mix));
	mix.min_len = UINT32_MAX;
	t0 = now_s();
	for (batch = 0;; batch++) {
		if (mix_hear(MIX_TAG_GO, batch))
			break;
		if (!mix_batch())
			break;
		mix.batch = batch;
		for (posted = done = 0; done < mix.n && !g.detail[0];) {
			double end;
			int n, k;

			while (posted < mix.n && posted - done < MIX_WINDOW && !g.detail[0])
				if (mix_post(p, &mix.m[posted]) == 0)
					posted++;
			if (g.detail[0])
				break;
			end = now_s() + 60;
			do {
				n = ibv_poll_cq(p->cq, 16, wc);
				if (!n)
					sched_yield();
			} while (n == 0 && now_s() < end);
			if (n <= 0) {
				bad("message %u: no completion within 60 s (%d)", mix.m[done].idx, n);
				break;
			}
			for (k = 0; k < n && !g.detail[0]; k++, done++) {
				const struct mix_msg *m = &mix.m[done];

				if (done >= posted) {
					bad("completion (wr_id %" PRIu64 ") for nothing posted",
					    wc[k].wr_id);
					break;
				}
				if (wc[k].status != IBV_WC_SUCCESS || wc[k].wr_id != m->idx ||
				    wc[k].opcode != wco[m->op]) {
					bad("message %u (%s, %u bytes): completion wr_id %" PRIu64
					    " status %s opcode %d, want wr_id %u opcode %d"
					    " (lost, duplicated or out of order)", m->idx,
					    mix_op_name[m->op], m->len, wc[k].wr_id,
					    st(wc[k].status), wc[k].opcode, m->idx, wco[m->op]);
					break;
				}
				if (m->op == MIX_READ) {
					at = mix_verify(g.buf + MIX_C_READ + m->off, m->idx, m->len);
					if (at >= 0) {
						bad("message %u (READ, %u bytes): byte %ld differs",
						    m->idx, m->len, at);
						break;
					}
				}
				bytes += m->len;
				mix.bytes[m->op] += m->len;
				mix.count[m->op]++;
				if (m->len < mix.min_len)
					mix.min_len = m->len;
				if (m->len > mix.max_len)
					mix.max_len = m->len;
				total++;
			}
		}
		if (mix_say(MIX_TAG_DONE, batch))
			bad("batch %u: TCP send failed", batch);
		if (g.detail[0])
			break;
	}
	if (!g.detail[0] && wait_wc(p, wc, 0) == 0)
		bad("an extra completion after %u messages (wr_id %" PRIu64 ", status %s)",
		    total, wc[0].wr_id, st(wc[0].status));
	secs = now_s() - t0;
	info("mixed client: %u of %u messages in %u batches, %" PRIu64 " bytes in %.1f s"
	     " (%.2f MB/s)", total, g.count, batch, bytes, secs,
	     secs > 0 ? bytes / secs / 1e6 : 0.0);
	for (i = 0; i < MIX_NOPS; i++)
		info("mixed client: %s: %u messages, %" PRIu64 " bytes", mix_op_name[i],
		     mix.count[i], mix.bytes[i]);
	if (total)
		info("mixed client: sizes %u .. %u bytes", mix.min_len, mix.max_len);
}

static void t_mixed(void)
{
	struct pair *p = &main_pair;

	if (g.server)
		mix_server(p);
	else
		mix_client(p);
}

/* ---- main ------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: kite-rc [-d DEV] [-g GID_INDEX] [-p PORT] [-n COUNT] [-S SEED]\n"
		"               [-t SECS] [-P PREFIX] [-T QP_TIMEOUT] func|bulk|mixed [HOST]\n"
		"       kite-rc count func|bulk|mixed\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr qia;
	struct ibv_qp_attr qa;
	struct conn_opts main_opts = def_opts;
	const char *mode;
	int opt, bulk, mixed;
	uint32_t i, n;

	if (argc == 3 && !strcmp(argv[1], "count")) {
		if (!strcmp(argv[2], "func"))
			printf("%zu\n", NFUNC);
		else if (!strcmp(argv[2], "bulk") || !strcmp(argv[2], "mixed"))
			printf("1\n");
		else
			usage();
		return 0;
	}
	while ((opt = getopt(argc, argv, "d:g:p:n:S:t:P:T:")) != -1) {
		switch (opt) {
		case 'd': g.dev = optarg; break;
		case 'g': g.gid_index = atoi(optarg); break;
		case 'p': g.port = atoi(optarg); break;
		case 'n': g.count = strtoul(optarg, NULL, 0); break;
		case 'S': g.seed = strtoul(optarg, NULL, 0); break;
		case 't': g.timeout_s = atoi(optarg); break;
		case 'P': g.prefix = optarg; break;
		case 'T': g.qp_timeout = atoi(optarg); break;
		default: usage();
		}
	}
	if (optind >= argc || argc - optind > 2)
		usage();
	mode = argv[optind];
	if (strcmp(mode, "func") && strcmp(mode, "bulk") && strcmp(mode, "mixed"))
		usage();
	if (g.qp_timeout > 31)
		usage();
	if (g.qp_timeout >= 0)
		main_opts.timeout = g.qp_timeout;
	bulk = !strcmp(mode, "bulk");
	mixed = !strcmp(mode, "mixed");
	if (mixed)
		g.buf_size = MIX_BUF_SIZE;
	g.host = optind + 1 < argc ? argv[optind + 1] : NULL;
	g.server = !g.host;
	n = bulk || mixed ? 1 : NFUNC;
	setvbuf(stdout, NULL, _IOLBF, 0);
	kt_alarm(g.timeout_s, "FAIL rc-time-limit: kite-rc ran past its time limit (-t)\n");

	g.detail[0] = '\0';
	if (tcp_connect()) {
		snprintf(g.detail, sizeof(g.detail), "no TCP connection to %s port %d: %s",
			 g.host ? g.host : "(listening)", g.port, strerror(errno));
		goto all_failed;
	}
	/* Main pair: both sides always exchange, even after a local failure. */
	if (!open_device() && !pair_create(&main_pair, INLINE_SIZE)) {
		if (ibv_query_qp(main_pair.qp, &qa, IBV_QP_CAP, &qia) == 0)
			g.max_inline = qa.cap.max_inline_data;
	} else if (g.mr && !main_pair.qp) {
		/* No inline support? The inline check will say so. */
		pair_destroy(&main_pair);
		g.detail[0] = '\0';
		if (!pair_create(&main_pair, 0))
			g.max_inline = 0;
	}
	if (pair_exchange(&main_pair)) {
		bad("TCP exchange with the peer failed");
		goto all_failed;
	}
	main_ok = main_pair.qp && main_pair.peer.qpn && !g.detail[0] &&
		  !pair_connect(&main_pair, &main_opts, 0);
	{
		/* Both sides must agree that the main pair works. */
		uint32_t mine = htonl(main_ok), theirs;

		if (xchg(&mine, &theirs, sizeof(mine))) {
			bad("TCP exchange with the peer failed");
			goto all_failed;
		}
		if (main_ok && !theirs)
			bad("the peer could not set up its QP");
		main_ok = main_ok && theirs;
	}
	if (!main_ok)
		info("main QP pair not usable: %s", g.detail);
	if (g.server)
		info("kite-rc server on %s, gid index %d, mtu %d", g.dev ? g.dev : "(first)",
		     g.gid_index, 128 << g.mtu);

	for (i = 0; i < n; i++) {
		const char *name = bulk || mixed ? mode : func_checks[i].name;
		void (*fn)(void) = bulk ? t_bulk : mixed ? t_mixed : func_checks[i].fn;
		int needs = bulk || mixed || func_checks[i].needs_main;

		if (run_check(i, name, fn, needs && !main_ok)) {
			if (!g.server)
				report(name, 1, g.detail[0] ? g.detail : "lost the peer (TCP)");
			i++;
			snprintf(g.detail, sizeof(g.detail), "not run: lost the peer earlier");
			for (; i < n; i++)
				if (!g.server)
					report(bulk || mixed ? mode : func_checks[i].name, 1,
					       g.detail);
			return 1;
		}
	}
	pair_destroy(&main_pair);
	if (g.mr)
		ibv_dereg_mr(g.mr);
	if (g.noacc)
		ibv_dereg_mr(g.noacc);
	if (g.pd)
		ibv_dealloc_pd(g.pd);
	if (g.ctx)
		ibv_close_device(g.ctx);
	close(g.sock);
	return g.failures ? 1 : 0;

all_failed:
	if (!g.server)
		for (i = 0; i < n; i++)
			report(bulk || mixed ? mode : func_checks[i].name, 1, g.detail);
	else
		fprintf(stderr, "kite-rc server: %s\n", g.detail);
	return 1;
}
