// SPDX-License-Identifier: GPL-2.0
/*
 * kite-rc mode "bulk": RDMA WRITE + SEND message pairs of mixed sizes, every
 * SEND received once and in order, every byte of each SEND and of the
 * WRITE it announces verified (see kite-rc.c).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <inttypes.h>
#include <sched.h>

#include "kite-rc.h"

/* Bulk mode: write region, receive buffers. */
#define BULK_WREG_OFF	0u
#define BULK_WREG_SIZE	(2u << 20)
#define BULK_RBUF_OFF	(2u << 20)
#define BULK_RBUF_SIZE	8192u		/* one receive buffer */
#define BULK_RQ		128u		/* receives posted (2 MiB / 8 KiB = 256) */
#define BULK_WINDOW	64u		/* WRs in flight on the client */
#define BULK_MAX_WRITE	16384u
#define BULK_HDR	24u

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

	rnd_seed();
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

	rnd_seed();
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

void t_bulk(void)
{
	struct pair *p = &main_pair;

	if (g.server)
		bulk_server(p);
	else
		bulk_client(p);
}
