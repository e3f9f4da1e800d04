// SPDX-License-Identifier: GPL-2.0
/*
 * kite-rc mode "func": every RC opcode with its data verified, and every
 * error completion, each check on both sides in lock step (see kite-rc.c).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <inttypes.h>

#include "kite-rc.h"

/* Offsets in the buffer used by the functional checks. */
#define OFF_SRC		0u		/* local source data (256 KiB) */
#define OFF_DST		(256u << 10)	/* receive / read / write target */
#define OFF_ATOMIC	(1024u << 10)	/* 8-byte atomic target */
#define OFF_RES		((1024u << 10) + 64u) /* atomic results */
#define FUNC_MAX	(200u << 10)	/* largest message in func */

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

/*
 * The widest WQEs: a SEND gathered from as many SGEs as the client's
 * device takes (up to WIDE_SGE) into a receive scattered over as many as
 * the server's, on a QP pair created for that many.
 */
static void t_send_sge_max(void)
{
	const uint32_t piece = 1000, gap = 8192;
	uint32_t i, n = g.max_sge, total;
	struct ibv_sge sge[WIDE_SGE];
	struct ibv_wc wc;
	struct pair p;
	int err;

	if (fresh_pair_sge(&p, &def_opts, n, &fatal) && fatal)
		return;
	/* Both sides' counts, so both know the message's size. */
	{
		uint32_t mine = htonl(n), theirs;

		if (xchg(&mine, &theirs, sizeof(mine))) {
			fatal = 1;
			goto out;
		}
		total = piece * (g.server ? ntohl(theirs) : n);
	}
	if (g.server && p.qp) {
		struct ibv_recv_wr wr = { .wr_id = 4100, .sg_list = sge, .num_sge = n }, *badwr;
		uint32_t each = (total + n - 1) / n;

		memset(g.buf + OFF_DST, 0, n * gap);
		for (i = 0; i < n; i++)
			sge[i] = (struct ibv_sge){ (uintptr_t)g.buf + OFF_DST + i * gap,
						   each, g.mr->lkey };
		err = ibv_post_recv(p.qp, &wr, &badwr);
		if (err)
			bad("ibv_post_recv %u SGEs: %s", n, strerror(err));
	}
	if (sync_ok(40))
		goto out;
	if (!g.server) {
		struct ibv_send_wr wr = {
			.wr_id = 4101, .sg_list = sge, .num_sge = n, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
		}, *badwr;
		uint8_t msg[WIDE_SGE * 1000];

		fill(msg, total, 410);
		for (i = 0; i < n; i++) {
			memcpy(g.buf + OFF_SRC + i * gap, msg + i * piece, piece);
			sge[i] = (struct ibv_sge){ (uintptr_t)g.buf + OFF_SRC + i * gap,
						   piece, g.mr->lkey };
		}
		err = ibv_post_send(p.qp, &wr, &badwr);
		if (err)
			bad("ibv_post_send %u SGEs: %s", n, strerror(err));
		else
			expect_wc(&p, "send", 4101, IBV_WC_SUCCESS, IBV_WC_SEND, NULL);
	} else if (!expect_wc(&p, "recv", 4100, IBV_WC_SUCCESS, IBV_WC_RECV, &wc)) {
		uint32_t each = (total + n - 1) / n, at = 0;
		uint8_t msg[WIDE_SGE * 1000];

		for (i = 0; i < n && at < total; i++, at += each)
			memcpy(msg + at, g.buf + OFF_DST + i * gap,
			       total - at < each ? total - at : each);
		if (wc.byte_len != total)
			bad("%u SGEs: byte_len %u, want %u", n, wc.byte_len, total);
		else if (verify(msg, total, 410) >= 0)
			bad("%u SGEs: scattered data differs at byte %ld", n,
			    verify(msg, total, 410));
	}
	sync_peer(41);
out:
	pair_destroy(&p);
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

const struct check func_checks[] = {
	{ "send", t_send_plain, 1 },
	{ "send-imm", t_send_imm, 1 },
	{ "send-inline", t_send_inline, 1 },
	{ "send-sge", t_send_sge, 1 },
	{ "send-sge-max", t_send_sge_max, 0 },
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
const size_t nfunc = sizeof(func_checks) / sizeof(func_checks[0]);
