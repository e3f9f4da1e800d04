// SPDX-License-Identifier: GPL-2.0
/*
 * UD checks through plain libibverbs between two guests, run in guests
 * (built on the host against out/rdma-core by scripts/mkinitramfs.sh and
 * installed as /usr/bin/kite-ud). Works on any RoCE v2 device: the VM suite
 * runs it Kite <-> Kite and Kite <-> Soft-RoCE (rxe), each side as sender.
 *
 *   kite-ud [OPTIONS]          server (the receiver): listen on the TCP port
 *   kite-ud [OPTIONS] HOST     client (the sender): connect to HOST's server
 *   kite-ud count              print how many results a run prints
 *
 * The client sends UD messages through address handles to the server's UD
 * QP; the server checks what arrives:
 *   v4-send-imm   SEND with immediate over the IPv4 GID: send completion,
 *                 receive completion (opcode, IBV_WC_GRH | WITH_IMM, imm,
 *                 src_qp, byte_len = 40 + payload, pkey_index), payload
 *   v4-grh        the 40-byte GRH area of that receive: bytes 0-19 zero,
 *                 20-39 an IPv4 header (version 4, IHL 5, UDP, valid
 *                 checksum) from the sender's IPv4 address to ours, as
 *                 ib_core reads it (ib_get_rdma_header_version)
 *   v6-send       SEND over the IPv6 GID (IBV_WC_GRH only, byte_len)
 *   v6-grh        the GRH area: an IPv6 header (version 6, next header
 *                 UDP) from the sender's IPv6 GID to ours
 *   qkey-wrong-dropped   a SEND with a wrong Q_Key completes on the sender
 *                 and is not delivered (no completion within 1.5 s)
 *   qkey-wrong-counted   ... and the receiving device counted it
 *                 (hw_counters/rx_roce_dropped, which a Kite device must
 *                 have; a device without it: the port's qkey_viol_cntr,
 *                 which rxe counts)
 *   qkey-right-after     a following SEND with the right Q_Key lands in
 *                 the receive the dropped one did not consume
 *   qkey-high-bit a SEND whose remote Q_Key has bit 31 set goes out with
 *                 the sending QP's own Q_Key (here the receiver's: delivered).
 *                 Linux 6.1's rxe does not apply that rule (rxe_req.c puts
 *                 remote_qkey in the DETH as it is): an rxe sender prints
 *                 "skip" and still sends; the receiver then expects the
 *                 message to be dropped, as a wrong Q_Key
 *   mtu-exact     a SEND of exactly the sender's port active MTU arrives
 *   mtu-over-send a SEND one byte longer than that MTU: the post succeeds
 *                 and completes with success (IBTA C10-93.1.1: the CI emits
 *                 no packet and reports no error)
 *   mtu-over-not-received  ... and nothing arrives within 1.5 s
 *   mtu-over-then-small    a following small SEND arrives in the receive
 *                 the oversized one never consumed
 *   mcast-v4      the receiver attaches its QP to the IPv4 group
 *                 239.75.2.1 (ibv_attach_mcast); a SEND through an address
 *                 handle to the group's GID, to QP 0xFFFFFF, arrives as a
 *                 SEND to the QP would; then the receiver detaches
 *   mcast-v6      the same over the IPv6 GIDs to the group ff0e::4b:3.
 *                 An rxe receiver skips either when nothing arrives: rxe
 *                 6.1's attach adds the group's 33:33 MAC only (for IPv4
 *                 groups too), and the IP stack drops multicast to a group
 *                 the host has not joined at the IP level (rdma_cm joins
 *                 IPv4 groups: mckey covers rxe there)
 *
 * The two sides exchange QP numbers, Q_Keys, GIDs and MTUs over TCP (as
 * kite-rc does) and run the checks in lock step; the server sends its
 * findings to the client after every check; only the client prints results,
 * one line each in the tests/vm format ("ok NAME", "FAIL NAME: detail",
 * "skip NAME: why"), so a run prints exactly "kite-ud count" results
 * whatever happens. Lines starting with "#" are information. Everything is
 * bounded in time: CQ polls, TCP reads, and -t (overall limit, default
 * 120 s; an alarm ends the process after it).
 *
 * Options: -d DEV (default: first device), -g GID_INDEX (IPv4-mapped RoCE
 * v2 GID, default 0), -6 GID_INDEX (IPv6 RoCE v2 GID; without it the IPv6
 * checks print "skip"), -p TCP_PORT (default 18650), -t SECONDS,
 * -P PREFIX (result names, default "ud").
 * Exit status 0 when every check passed, 1 otherwise, 2 on bad usage.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <assert.h>
#include <stdlib.h>

#include <infiniband/verbs.h>
#include <kite/kite_hw.h>

#include "kite-test.h"

/* The GRH area at the start of a UD receive, the same on every device. */
static_assert(KITE_UD_GRH_LEN == sizeof(struct ibv_grh), "GRH area");

#define SLOT_SIZE	16384u		/* one receive buffer (> GRH area + MTU + 1) */
#define NSLOTS		8u
#define SRC_OFF		(NSLOTS * SLOT_SIZE)	/* send source area */
#define BUF_SIZE	(SRC_OFF + SLOT_SIZE)
#define QP_DEPTH	16u
#define SERVER_QKEY	0x0badcafeu	/* the receiver's Q_Key (bit 31 clear) */
#define WRONG_QKEY	(SERVER_QKEY ^ 1u)
#define HIGH_QKEY	0x80000000u	/* "use the QP's own Q_Key" */
#define IMM		0xfeed0001u
#define POLL_MS		10000		/* an expected completion, at most */
#define QUIET_MS	1500		/* no completion expected for this long */
#define TCP_TIMEOUT_S	60
#define SMALL_LEN	32u
#define QKEY_COUNTER	"rx_roce_dropped"

struct udinfo {
	uint32_t qpn, qkey, mtu, have6, is_rxe, pad;
	uint8_t gid4[16], gid6[16];
};

struct result {
	uint32_t test, failed, skipped, pad;
	char detail[240];
};

static struct {
	const char *dev, *prefix, *host;
	int gid4, gid6, port, server, timeout_s;
	int sock, fatal, failures;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah4, *ah6;
	uint8_t *buf;
	struct udinfo me, peer;
	int setup_ok;
	uint32_t rq[NSLOTS], rq_head, rq_tail;	/* posted receive slots, in order */
	uint32_t qk_slot, over_slot;	/* where the SEND after a drop must land */
	uint8_t saved_grh[2][KITE_UD_GRH_LEN];	/* GRH areas of v4-send-imm, v6-send */
	int saved_ok[2];
	char detail[248];	/* this check's failure, "" = passed */
	char skip[200];		/* this check's reason to skip, "" = ran */
} g = {
	.prefix = "ud", .port = 18650, .timeout_s = 120, .gid6 = -1, .sock = -1,
};

/* ---- reporting ------------------------------------------------------------ */

static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Record this check's first failure (later ones are appended). */
static void bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kt_vbad(g.detail, sizeof(g.detail), fmt, ap);
	va_end(ap);
}

static void report(const char *name, int failed, int skipped, const char *detail)
{
	kt_report(g.prefix, &g.failures, name, failed, skipped, detail);
}

/* ---- TCP ------------------------------------------------------------------ */

static int xchg(const void *mine, void *theirs, size_t len)
{
	return kt_xchg(g.sock, g.server, mine, theirs, len);
}

/* Rendezvous: both sides pass the same tag; a broken link is fatal. */
static int sync_peer(uint32_t tag)
{
	if (kt_sync_peer(g.sock, g.server, tag)) {
		g.fatal = 1;
		bad("lost step with the peer (TCP)");
		return -1;
	}
	return 0;
}

static int tcp_connect(void)
{
	g.sock = kt_tcp_connect(g.host, g.port, TCP_TIMEOUT_S);
	return g.sock < 0 ? -1 : 0;
}

/* ---- verbs helpers ---------------------------------------------------------- */

static uint32_t mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

/* The device's QKEY_COUNTER, or -1 when it has none. */
static long long qkey_counter(void)
{
	char path[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 ibv_get_device_name(g.ctx->device), QKEY_COUNTER);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* The port's Q_Key violation counter (ibv_query_port), or -1. */
static long long qkey_viol(void)
{
	struct ibv_port_attr pa;

	return ibv_query_port(g.ctx, 1, &pa) ? -1 : (long long)pa.qkey_viol_cntr;
}

static struct ibv_ah *make_ah(const uint8_t *dgid, int sgid_index)
{
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1 };

	memcpy(a.grh.dgid.raw, dgid, 16);
	a.grh.sgid_index = sgid_index;
	a.grh.hop_limit = 64;
	return ibv_create_ah(g.pd, &a);
}

/* Open the device, make the UD QP (RTS); fill g.me. */
static int open_device(void)
{
	struct ibv_port_attr pa;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = QP_DEPTH, .max_recv_wr = QP_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = SERVER_QKEY };
	struct ibv_device_attr da;
	union ibv_gid gid;

	g.ctx = kt_open_device(g.dev, "no device %s", bad);
	if (!g.ctx)
		return -1;
	if (!ibv_query_device(g.ctx, &da))
		g.me.is_rxe = da.vendor_id == KT_RXE_VENDOR_ID;
	if (ibv_query_port(g.ctx, 1, &pa)) {
		bad("ibv_query_port: %s", strerror(errno));
		return -1;
	}
	g.me.mtu = mtu_bytes(pa.active_mtu);
	if (ibv_query_gid(g.ctx, 1, g.gid4, &gid)) {
		bad("ibv_query_gid %d: %s", g.gid4, strerror(errno));
		return -1;
	}
	memcpy(g.me.gid4, gid.raw, 16);
	if (g.gid6 >= 0) {
		if (ibv_query_gid(g.ctx, 1, g.gid6, &gid)) {
			bad("ibv_query_gid %d: %s", g.gid6, strerror(errno));
			return -1;
		}
		memcpy(g.me.gid6, gid.raw, 16);
		g.me.have6 = 1;
	}
	g.pd = ibv_alloc_pd(g.ctx);
	g.scq = g.pd ? ibv_create_cq(g.ctx, 2 * QP_DEPTH, NULL, NULL, 0) : NULL;
	g.rcq = g.scq ? ibv_create_cq(g.ctx, 2 * QP_DEPTH, NULL, NULL, 0) : NULL;
	g.buf = aligned_alloc(4096, BUF_SIZE);
	if (!g.rcq || !g.buf) {
		bad("PD/CQ/buffer: %s", strerror(errno));
		return -1;
	}
	memset(g.buf, 0, BUF_SIZE);
	g.mr = ibv_reg_mr(g.pd, g.buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!g.mr) {
		bad("ibv_reg_mr: %s", strerror(errno));
		return -1;
	}
	ia.send_cq = g.scq;
	ia.recv_cq = g.rcq;
	g.qp = ibv_create_qp(g.pd, &ia);
	if (!g.qp) {
		bad("ibv_create_qp(UD): %s", strerror(errno));
		return -1;
	}
	/* Both QPs use the receiver's Q_Key: the high-bit check relies on it. */
	if (ibv_modify_qp(g.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_QKEY)) {
		bad("modify_qp INIT: %s", strerror(errno));
		return -1;
	}
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(g.qp, &a, IBV_QP_STATE)) {
		bad("modify_qp RTR: %s", strerror(errno));
		return -1;
	}
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(g.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN)) {
		bad("modify_qp RTS: %s", strerror(errno));
		return -1;
	}
	g.me.qpn = g.qp->qp_num;
	g.me.qkey = SERVER_QKEY;
	return 0;
}

/*
 * Receive into SLOT (the whole slot: GRH area + payload), poisoned first.
 * A UD QP consumes its receives in order: g.rq remembers which are posted,
 * so a message lands in the oldest one even after a check where an
 * expected message never came.
 */
static int post_recv(uint32_t slot)
{
	struct ibv_sge sg = { .addr = (uintptr_t)g.buf + slot * SLOT_SIZE,
			      .length = SLOT_SIZE, .lkey = g.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sg, .num_sge = 1 }, *badwr;
	int err;

	memset(g.buf + slot * SLOT_SIZE, 0xee, SLOT_SIZE);
	err = ibv_post_recv(g.qp, &wr, &badwr);
	if (err)
		bad("ibv_post_recv: %s", strerror(err));
	else
		g.rq[g.rq_tail++ % NSLOTS] = slot;
	return err;
}

/* One signaled UD SEND of LEN pattern bytes (SEED) to the peer's QP. */
static int post_send(struct ibv_ah *ah, uint32_t qkey, uint32_t len, uint32_t seed, int imm)
{
	struct ibv_sge sg = { .addr = (uintptr_t)g.buf + SRC_OFF, .length = len,
			      .lkey = g.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = seed, .sg_list = &sg, .num_sge = len ? 1 : 0,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *badwr;
	int err;

	fill(g.buf + SRC_OFF, len, seed);
	wr.imm_data = htonl(IMM);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = g.peer.qpn;
	wr.wr.ud.remote_qkey = qkey;
	err = ibv_post_send(g.qp, &wr, &badwr);
	if (err)
		bad("ibv_post_send(%u B, Q_Key 0x%x): %s", len, qkey, strerror(err));
	return err;
}

/* Poll CQ for one completion within MS: 1 got one, 0 none, -1 error. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	long end = now_ms() + ms;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? -1 : 1;
		usleep(1000);
	} while (now_ms() < end);
	return 0;
}

/* The sender's completion of the SEND just posted (wr_id SEED). */
static void expect_send_wc(uint32_t seed)
{
	struct ibv_wc wc;
	int n = poll_one(g.scq, &wc, POLL_MS);

	if (n <= 0) {
		bad("no send completion in %d ms", POLL_MS);
		return;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_SEND || wc.wr_id != seed)
		bad("send completion: status %s, opcode %d, wr_id %llu (want SUCCESS, SEND, %u)",
		    ibv_wc_status_str(wc.status), wc.opcode, (unsigned long long)wc.wr_id, seed);
}

/* The slot the next message lands in (the oldest posted receive). */
static uint32_t rq_next(void)
{
	return g.rq_head != g.rq_tail ? g.rq[g.rq_head % NSLOTS] : NSLOTS;
}

#define NO_RECV	"no receive completion"

/*
 * The receiver's completion of a SEND of LEN bytes (SEED), with or without
 * immediate, in the oldest posted receive; returns its buffer or NULL.
 */
static uint8_t *expect_recv(uint32_t len, uint32_t seed, int imm)
{
	unsigned int want_flags = IBV_WC_GRH | (imm ? IBV_WC_WITH_IMM : 0);
	uint32_t slot = rq_next();
	uint8_t *p = g.buf + slot * SLOT_SIZE;
	struct ibv_wc wc;
	long off;
	int n = poll_one(g.rcq, &wc, POLL_MS);

	if (n <= 0) {
		bad(NO_RECV " in %d ms", POLL_MS);
		return NULL;
	}
	if (slot < NSLOTS)
		g.rq_head++;
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV) {
		bad("receive completion: status %s, opcode %d",
		    ibv_wc_status_str(wc.status), wc.opcode);
		return NULL;
	}
	if (wc.wr_id != slot)
		bad("receive landed in slot %llu, not %u", (unsigned long long)wc.wr_id, slot);
	if (wc.byte_len != KITE_UD_GRH_LEN + len)
		bad("byte_len %u, want %u (%u + %u)", wc.byte_len, KITE_UD_GRH_LEN + len,
		    (unsigned int)KITE_UD_GRH_LEN, len);
	if (wc.qp_num != g.qp->qp_num || wc.src_qp != g.peer.qpn)
		bad("qp_num %u src_qp %u, want %u and %u", wc.qp_num, wc.src_qp,
		    g.qp->qp_num, g.peer.qpn);
	if ((wc.wc_flags & (IBV_WC_GRH | IBV_WC_WITH_IMM)) != want_flags)
		bad("wc_flags 0x%x, want GRH%s", wc.wc_flags, imm ? " | WITH_IMM" : "");
	if (imm && wc.imm_data != htonl(IMM))
		bad("imm_data 0x%x, want 0x%x", ntohl(wc.imm_data), IMM);
	if (wc.pkey_index != 0)
		bad("pkey_index %u, want 0", wc.pkey_index);
	if (wc.wr_id == slot) {
		off = verify(p + KITE_UD_GRH_LEN, len, seed);
		if (off >= 0)
			bad("payload differs at byte %ld", off);
		if (KITE_UD_GRH_LEN + len < SLOT_SIZE && p[KITE_UD_GRH_LEN + len] != 0xee)
			bad("byte after the payload overwritten");
	}
	return wc.wr_id == slot ? p : NULL;
}

/* No receive completion for QUIET_MS (a dropped message). */
static void expect_no_recv(const char *what)
{
	struct ibv_wc wc;
	int n = poll_one(g.rcq, &wc, QUIET_MS);

	if (n > 0) {
		bad("%s was delivered: receive completion status %s, byte_len %u", what,
		    ibv_wc_status_str(wc.status), wc.byte_len);
		g.rq_head++;
	}
	else if (n < 0)
		bad("ibv_poll_cq failed");
}

/* ---- checks ------------------------------------------------------------------ */

/*
 * Each check runs on both sides: the server posts its receives, both meet
 * (tag 1), the client sends, both meet again (tag 2), the server checks.
 */
#define STEP_READY	1
#define STEP_SENT	2

static void t_send(int v6)
{
	uint32_t seed = v6 ? 600 : 400, len = v6 ? 100 : 200;
	struct ibv_ah *ah = v6 ? g.ah6 : g.ah4;
	uint8_t *p;

	if (v6 && !(g.me.have6 && g.peer.have6)) {
		snprintf(g.skip, sizeof(g.skip), "no IPv6 GID index given (-6)");
		return;
	}
	if (g.server && post_recv(0))
		return;
	if (sync_peer(STEP_READY))
		return;
	if (!g.server && !post_send(ah, SERVER_QKEY, len, seed, !v6))
		expect_send_wc(seed);
	if (sync_peer(STEP_SENT) || !g.server)
		return;
	p = expect_recv(len, seed, !v6);
	if (p) {
		memcpy(g.saved_grh[v6], p, KITE_UD_GRH_LEN);
		g.saved_ok[v6] = 1;
	}
}

static void t_send_v4(void) { t_send(0); }
static void t_send_v6(void) { t_send(1); }

static uint16_t ip_csum(const uint8_t *h, size_t len)
{
	uint32_t s = 0;

	for (size_t i = 0; i < len; i += 2)
		s += (uint32_t)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static void t_grh(int v6)
{
	static const uint8_t zero[20];
	const uint8_t *r = g.saved_grh[v6];

	if (v6 && !(g.me.have6 && g.peer.have6)) {
		snprintf(g.skip, sizeof(g.skip), "no IPv6 GID index given (-6)");
		return;
	}
	if (!g.server)
		return;
	if (!g.saved_ok[v6]) {
		bad("no message received in the check before");
		return;
	}
	if (!v6) {
		if (memcmp(r, zero, sizeof(zero)))
			bad("bytes 0-19 not zero");
		if (r[20] != 0x45)
			bad("byte 20 is 0x%02x, want 0x45 (IPv4, IHL 5)", r[20]);
		if (r[29] != IPPROTO_UDP)
			bad("IPv4 protocol %u, want 17 (UDP)", r[29]);
		if (ip_csum(r + 20, 20) != 0xffff)
			bad("IPv4 header checksum invalid");
		if (memcmp(r + 32, g.peer.gid4 + 12, 4))
			bad("source %u.%u.%u.%u, want the sender's %u.%u.%u.%u",
			    r[32], r[33], r[34], r[35], g.peer.gid4[12], g.peer.gid4[13],
			    g.peer.gid4[14], g.peer.gid4[15]);
		if (memcmp(r + 36, g.me.gid4 + 12, 4))
			bad("destination %u.%u.%u.%u, want ours %u.%u.%u.%u",
			    r[36], r[37], r[38], r[39], g.me.gid4[12], g.me.gid4[13],
			    g.me.gid4[14], g.me.gid4[15]);
		return;
	}
	if (r[0] >> 4 != 6)
		bad("version %u, want 6", r[0] >> 4);
	if (r[6] != IPPROTO_UDP)
		bad("next header %u, want 17 (UDP)", r[6]);
	if (memcmp(r + 8, g.peer.gid6, 16))
		bad("source address is not the sender's IPv6 GID");
	if (memcmp(r + 24, g.me.gid6, 16))
		bad("destination address is not our IPv6 GID");
}

static void t_grh_v4(void) { t_grh(0); }
static void t_grh_v6(void) { t_grh(1); }

/* Q_Key checks: one receive posted; wrong, counted, right, high bit. */
static long long qk_before, qv_before;

static void t_qkey_wrong(void)
{
	if (g.server) {
		qk_before = qkey_counter();
		qv_before = qkey_viol();
		if (post_recv(1))
			return;
		g.qk_slot = rq_next();
	}
	if (sync_peer(STEP_READY))
		return;
	if (!g.server && !post_send(g.ah4, WRONG_QKEY, SMALL_LEN, 700, 0))
		expect_send_wc(700);
	if (sync_peer(STEP_SENT) || !g.server)
		return;
	expect_no_recv("a SEND with a wrong Q_Key");
}

static void t_qkey_counted(void)
{
	long long after;

	if (!g.server)
		return;
	after = qkey_counter();
	if (after < 0 && strncmp(ibv_get_device_name(g.ctx->device), "kite", 4)) {
		/* No such counter (rxe): the port's Q_Key violations. */
		after = qkey_viol();
		if (after < 0 || qv_before < 0)
			bad("no hw_counters/%s and no qkey_viol_cntr", QKEY_COUNTER);
		else if (after <= qv_before)
			bad("qkey_viol_cntr did not move (%lld -> %lld)", qv_before, after);
		else
			info("qkey_viol_cntr %lld -> %lld", qv_before, after);
		return;
	}
	if (after < 0 || qk_before < 0)
		bad("no readable hw_counters/%s", QKEY_COUNTER);
	else if (after <= qk_before)
		bad("%s did not move (%lld -> %lld)", QKEY_COUNTER, qk_before, after);
	else
		info("%s %lld -> %lld", QKEY_COUNTER, qk_before, after);
}

/*
 * After a drop: a small SEND lands in the receive posted in slot SLOT (the
 * dropped message did not consume it).
 */
static void small_after(uint32_t slot, uint32_t qkey, uint32_t seed)
{
	if (sync_peer(STEP_READY))
		return;
	if (!g.server && !post_send(g.ah4, qkey, SMALL_LEN, seed, 0))
		expect_send_wc(seed);
	if (sync_peer(STEP_SENT) || !g.server)
		return;
	if (rq_next() != slot)
		bad("the receive of slot %u was consumed before", slot);
	else
		expect_recv(SMALL_LEN, seed, 0);
}

static void t_qkey_right(void) { small_after(g.qk_slot, SERVER_QKEY, 701); }

static void t_qkey_high(void)
{
	if (g.server && post_recv(2))
		return;
	if (g.peer.is_rxe && g.server) {
		/* An rxe sender puts 0x80000000 in the DETH: a wrong Q_Key. */
		if (sync_peer(STEP_READY) || sync_peer(STEP_SENT))
			return;
		expect_no_recv("rxe's SEND with Q_Key 0x80000000 (a wrong Q_Key on the wire)");
		return;
	}
	if (g.me.is_rxe && !g.server) {
		if (!sync_peer(STEP_READY) && !post_send(g.ah4, HIGH_QKEY, SMALL_LEN, 702, 0))
			expect_send_wc(702);
		if (!g.detail[0])
			snprintf(g.skip, sizeof(g.skip), "rxe (Linux 6.1) sends the remote Q_Key as it is, without the bit-31 rule (rxe_req.c); the receiver checked that it was dropped");
		sync_peer(STEP_SENT);
		return;
	}
	small_after(rq_next(), HIGH_QKEY, 702);
}

static void t_mtu_exact(void)
{
	if (g.server && post_recv(3))
		return;
	if (sync_peer(STEP_READY))
		return;
	if (!g.server) {
		if (!g.me.mtu)
			bad("unknown active MTU");
		else if (!post_send(g.ah4, SERVER_QKEY, g.me.mtu, 800, 0))
			expect_send_wc(800);
	}
	if (sync_peer(STEP_SENT) || !g.server)
		return;
	expect_recv(g.peer.mtu, 800, 0);
}

static void t_mtu_over_send(void)
{
	if (g.server && post_recv(4))
		return;
	g.over_slot = rq_next();
	if (sync_peer(STEP_READY))
		return;
	if (!g.server) {
		if (!g.me.mtu)
			bad("unknown active MTU");
		else if (!post_send(g.ah4, SERVER_QKEY, g.me.mtu + 1, 801, 0))
			expect_send_wc(801);
	}
	sync_peer(STEP_SENT);
}

static void t_mtu_over_quiet(void)
{
	if (g.server)
		expect_no_recv("a SEND larger than the path MTU");
}

static void t_mtu_over_small(void) { small_after(g.over_slot, SERVER_QKEY, 802); }

struct check {
	const char *name;
	void (*fn)(void);
};

#define MCAST_QPN	0xffffffu	/* BTH DestQP of a multicast datagram */

/* The group of mcast-v4 (::ffff:239.75.2.1) or mcast-v6 (ff0e::4b:3). */
static void mcast_gid(int v6, union ibv_gid *gid)
{
	static const uint8_t v4[16] = { [10] = 0xff, 0xff, 239, 75, 2, 1 };
	static const uint8_t g6[16] = { 0xff, 0x0e, [13] = 0x4b, [15] = 3 };

	memcpy(gid->raw, v6 ? g6 : v4, 16);
}

static void t_mcast(int v6)
{
	uint32_t seed = v6 ? 910 : 900, len = 300;
	struct ibv_ah *ah = NULL;
	union ibv_gid gid;
	int err, attached = 0;

	if (v6 && !(g.me.have6 && g.peer.have6)) {
		snprintf(g.skip, sizeof(g.skip), "no IPv6 GID index given (-6)");
		return;
	}
	mcast_gid(v6, &gid);
	if (g.server) {
		err = ibv_attach_mcast(g.qp, &gid, 0);
		if (err)
			bad("ibv_attach_mcast: %s", strerror(err));
		attached = !err;
		if (attached)
			post_recv(0);
	} else {
		ah = make_ah(gid.raw, v6 ? g.gid6 : g.gid4);
		if (!ah)
			bad("ibv_create_ah to the group: %s", strerror(errno));
	}
	if (sync_peer(STEP_READY))
		goto out;
	if (ah) {
		uint32_t peer = g.peer.qpn;

		g.peer.qpn = MCAST_QPN;
		if (!post_send(ah, SERVER_QKEY, len, seed, 0))
			expect_send_wc(seed);
		g.peer.qpn = peer;
	}
	if (sync_peer(STEP_SENT) || !g.server)
		goto out;
	if (!g.detail[0]) {
		expect_recv(len, seed, 0);
		if (g.me.is_rxe &&
		    !strncmp(g.detail, NO_RECV, sizeof(NO_RECV) - 1)) {
			g.detail[0] = '\0';
			snprintf(g.skip, sizeof(g.skip),
				 "rxe receiver: nothing arrived (rxe 6.1 joins a group's 33:33 MAC only; the IP stack drops multicast to groups not joined at the IP level)");
		}
	}
out:
	err = attached ? ibv_detach_mcast(g.qp, &gid, 0) : 0;
	if (err)
		bad("ibv_detach_mcast: %s", strerror(err));
	if (ah)
		ibv_destroy_ah(ah);
}

static void t_mcast_v4(void) { t_mcast(0); }
static void t_mcast_v6(void) { t_mcast(1); }

static const struct check checks[] = {
	{ "v4-send-imm", t_send_v4 },
	{ "v4-grh", t_grh_v4 },
	{ "v6-send", t_send_v6 },
	{ "v6-grh", t_grh_v6 },
	{ "qkey-wrong-dropped", t_qkey_wrong },
	{ "qkey-wrong-counted", t_qkey_counted },
	{ "qkey-right-after", t_qkey_right },
	{ "qkey-high-bit", t_qkey_high },
	{ "mtu-exact", t_mtu_exact },
	{ "mtu-over-send", t_mtu_over_send },
	{ "mtu-over-not-received", t_mtu_over_quiet },
	{ "mtu-over-then-small", t_mtu_over_small },
	{ "mcast-v4", t_mcast_v4 },
	{ "mcast-v6", t_mcast_v6 },
};
#define NCHECKS (sizeof(checks) / sizeof(checks[0]))
#define NRESULTS (NCHECKS + 1)	/* + "setup" */

/* Run check IDX on both sides and print (client) its merged result. */
static int run_check(uint32_t idx)
{
	struct result mine = { .test = htonl(idx) }, theirs;
	char detail[600];

	g.detail[0] = '\0';
	g.skip[0] = '\0';
	if (sync_peer(0x1000 + idx))
		return -1;
	if (!g.setup_ok)
		bad("not run: setup failed");
	else
		checks[idx].fn();
	if (g.fatal)
		return -1;
	mine.failed = htonl(g.detail[0] != '\0');
	mine.skipped = htonl(g.skip[0] != '\0');
	snprintf(mine.detail, sizeof(mine.detail), "%s", g.detail[0] ? g.detail : g.skip);
	if (xchg(&mine, &theirs, sizeof(mine)) || theirs.test != mine.test) {
		g.fatal = 1;
		return -1;
	}
	theirs.detail[sizeof(theirs.detail) - 1] = '\0';
	if (g.server) {
		if (g.detail[0])
			g.failures++;
		return 0;
	}
	if (g.detail[0] || ntohl(theirs.failed)) {
		snprintf(detail, sizeof(detail), "%s%s%s%s", g.detail,
			 g.detail[0] && ntohl(theirs.failed) ? "; " : "",
			 ntohl(theirs.failed) ? "receiver: " : "",
			 ntohl(theirs.failed) ? theirs.detail : "");
		report(checks[idx].name, 1, 0, detail);
	} else {
		report(checks[idx].name, 0, g.skip[0] || ntohl(theirs.skipped),
		       g.skip[0] ? g.skip : theirs.detail);
	}
	return 0;
}

static void cleanup(void)
{
	if (g.ah4)
		ibv_destroy_ah(g.ah4);
	if (g.ah6)
		ibv_destroy_ah(g.ah6);
	if (g.qp)
		ibv_destroy_qp(g.qp);
	if (g.scq)
		ibv_destroy_cq(g.scq);
	if (g.rcq)
		ibv_destroy_cq(g.rcq);
	if (g.mr)
		ibv_dereg_mr(g.mr);
	if (g.pd)
		ibv_dealloc_pd(g.pd);
	if (g.ctx)
		ibv_close_device(g.ctx);
	if (g.sock >= 0)
		close(g.sock);
}

static void usage(void)
{
	fprintf(stderr, "usage: kite-ud [-d DEV] [-g GID_INDEX] [-6 GID_INDEX] [-p PORT] [-t SECS]\n"
		"               [-P PREFIX] [HOST]\n"
		"       kite-ud count\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct { struct udinfo info; uint32_t ok; } mine, theirs;
	int opt;
	uint32_t i;

	if (argc == 2 && !strcmp(argv[1], "count")) {
		printf("%zu\n", NRESULTS);
		return 0;
	}
	while ((opt = getopt(argc, argv, "d:g:6:p:t:P:")) != -1) {
		switch (opt) {
		case 'd': g.dev = optarg; break;
		case 'g': g.gid4 = atoi(optarg); break;
		case '6': g.gid6 = atoi(optarg); break;
		case 'p': g.port = atoi(optarg); break;
		case 't': g.timeout_s = atoi(optarg); break;
		case 'P': g.prefix = optarg; break;
		default: usage();
		}
	}
	if (argc - optind > 1)
		usage();
	g.host = optind < argc ? argv[optind] : NULL;
	g.server = !g.host;
	setvbuf(stdout, NULL, _IOLBF, 0);
	kt_alarm(g.timeout_s, "FAIL ud-time-limit: kite-ud ran past its time limit (-t)\n");

	g.detail[0] = '\0';
	if (tcp_connect()) {
		snprintf(g.detail, sizeof(g.detail), "no TCP connection to %s port %d: %s",
			 g.host ? g.host : "(listening)", g.port, strerror(errno));
		goto all_failed;
	}
	/* Both sides always exchange, even after a local failure. */
	memset(&mine, 0, sizeof(mine));
	mine.ok = htonl(!open_device());
	mine.info = g.me;
	if (xchg(&mine, &theirs, sizeof(mine))) {
		bad("TCP exchange with the peer failed");
		goto all_failed;
	}
	g.peer = theirs.info;
	if (ntohl(mine.ok) && ntohl(theirs.ok)) {
		g.ah4 = make_ah(g.peer.gid4, g.gid4);
		if (!g.ah4)
			bad("ibv_create_ah (IPv4 GID): %s", strerror(errno));
		if (g.me.have6 && g.peer.have6) {
			g.ah6 = make_ah(g.peer.gid6, g.gid6);
			if (!g.ah6)
				bad("ibv_create_ah (IPv6 GID): %s", strerror(errno));
		}
	} else if (ntohl(mine.ok)) {
		bad("the peer could not set up its UD QP");
	}
	g.setup_ok = !g.detail[0];
	{
		/* Both sides must agree that the setup worked. */
		struct result r = { .failed = htonl(!g.setup_ok) }, rt;

		snprintf(r.detail, sizeof(r.detail), "%s", g.detail);
		if (xchg(&r, &rt, sizeof(r))) {
			bad("TCP exchange with the peer failed");
			goto all_failed;
		}
		rt.detail[sizeof(rt.detail) - 1] = '\0';
		if (ntohl(rt.failed) && !g.detail[0])
			bad("peer: %s", rt.detail);
		g.setup_ok = !g.detail[0];
	}
	info("kite-ud %s on %s: QPN %u, active MTU %u; peer QPN %u, MTU %u",
	     g.server ? "receiver" : "sender",
	     g.ctx ? ibv_get_device_name(g.ctx->device) : "(none)", g.me.qpn, g.me.mtu,
	     g.peer.qpn, g.peer.mtu);
	if (!g.server)
		report("setup", !g.setup_ok, 0, g.detail);
	else if (!g.setup_ok)
		g.failures++;

	for (i = 0; i < NCHECKS; i++) {
		if (run_check(i)) {
			snprintf(g.detail, sizeof(g.detail), "lost the peer (TCP)");
			for (; i < NCHECKS; i++)
				if (!g.server)
					report(checks[i].name, 1, 0, g.detail);
			cleanup();
			return 1;
		}
	}
	cleanup();
	return g.failures ? 1 : 0;

all_failed:
	if (!g.server) {
		report("setup", 1, 0, g.detail);
		for (i = 0; i < NCHECKS; i++)
			report(checks[i].name, 1, 0, "not run: setup failed");
	} else {
		fprintf(stderr, "kite-ud server: %s\n", g.detail);
	}
	cleanup();
	return 1;
}
