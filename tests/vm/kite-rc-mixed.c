// SPDX-License-Identifier: GPL-2.0
/*
 * kite-rc mode "mixed": SENDs, RDMA WRITEs and RDMA READs of 1 B to 1 MiB,
 * pipelined in batches, every byte and every completion verified (see
 * below and kite-rc.c).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <inttypes.h>
#include <sched.h>

#include "kite-rc.h"


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

const size_t mixed_buf_size = MIX_BUF_SIZE;

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

	rnd_seed();
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

	rnd_seed();
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

void t_mixed(void)
{
	struct pair *p = &main_pair;

	if (g.server)
		mix_server(p);
	else
		mix_client(p);
}

