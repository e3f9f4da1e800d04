// SPDX-License-Identifier: GPL-2.0
/*
 * kite-rc mode "mw": memory windows (types 1 and 2B) and re-registration,
 * each check on both sides in lock step (see kite-rc.c). The server owns
 * the memory: it registers an MR over a region of its buffer, binds
 * windows to parts of it (ibv_bind_mw for type 1, IBV_WR_BIND_MW for 2B)
 * and tells the client their keys and addresses; the client accesses them
 * with RDMA READ and WRITE. Every refused access must complete with
 * IBV_WC_REM_ACCESS_ERR at the client and leave the server's memory as
 * it was. A check that ends in a refused access uses its own QP pair
 * (the refusal moves both QPs to ERR).
 *
 * Soft-RoCE (Linux 6.1) as the server has known limits, reported as
 * skips (or accepted, and said so) only when the server is rxe: it
 * checks an access through a window against the MR's range, not the
 * window's (rxe_resp.c, check_rkey()); it has no rereg_user_mr; its
 * provider cannot unbind a type-1 window (convert_send_wr() reads the
 * NULL MR); it refuses a dereg with windows bound with EINVAL, not EBUSY
 * (rxe_mr.c); and it flags a receive that invalidated with ib_core's bit
 * for it, not libibverbs' (do_complete()).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <inttypes.h>

#include "kite-rc.h"

/* Server: the region windows are bound in, and a second one (rereg). */
#define REGION_OFF	(2u << 20)
#define REGION_LEN	(64u << 10)
#define REGION2_OFF	(REGION_OFF + REGION_LEN)
#define WIN_OFF		(16u << 10)	/* the window, in the region */
#define WIN_LEN		(8u << 10)
#define WIN2_OFF	(40u << 10)	/* where a rebind moves it */
#define UNTOUCHED	0x5c		/* the region outside the window */
/* Client: what it writes, where its reads land. */
#define CLI_SRC		0u
#define CLI_DST		(256u << 10)
#define PROBE_LEN	4096u		/* a refused access */

/*
 * rxe 6.1 copies ib_core's wc_flags to user CQs as they are: its
 * IB_WC_WITH_INVALIDATE (1 << 2) reads as IBV_WC_IP_CSUM_OK here.
 */
#define RXE_WC_WITH_INV	IBV_WC_IP_CSUM_OK

#define MR_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)
#define WIN_RW		(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* A window (or MR) as the server tells the client about it. */
struct win {
	uint32_t rkey, old_rkey;
	uint64_t addr;
};

/* One check's objects; the server's MR and window, the QP pair. */
struct mw_ctx {
	struct pair p;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct win w;
};

static uint8_t *region(uint32_t off)
{
	return g.buf + REGION_OFF + off;
}

static uint64_t region_addr(uint32_t off)
{
	return (uintptr_t)region(off);
}

/* The server's device is Soft-RoCE: its limits apply (see above). */
static int server_is_rxe(const struct pair *p)
{
	return g.server ? g.is_rxe : (int)p->peer.is_rxe;
}

/* Server: sends @w; client: receives it. -1 when TCP broke. */
static int share(struct win *w)
{
	struct win mine = {}, theirs;

	if (g.server) {
		mine.rkey = htonl(w->rkey);
		mine.old_rkey = htonl(w->old_rkey);
		mine.addr = htobe64(w->addr);
	}
	if (xchg(&mine, &theirs, sizeof(mine))) {
		fatal = 1;
		return -1;
	}
	if (!g.server) {
		w->rkey = ntohl(theirs.rkey);
		w->old_rkey = ntohl(theirs.old_rkey);
		w->addr = be64toh(theirs.addr);
	}
	return 0;
}

/* Server: the region filled, the window's range with data of @seed. */
static void region_fill(uint32_t off, uint32_t seed)
{
	memset(region(0), UNTOUCHED, REGION_LEN);
	fill(region(off), WIN_LEN, seed);
}

/* Server: the region is as region_fill(@off, @seed) left it. */
static void region_check(const char *what, uint32_t off, uint32_t seed)
{
	long at = verify(region(off), WIN_LEN, seed);
	uint32_t i;

	if (at >= 0) {
		bad("%s: window data changed at byte %ld", what, at);
		return;
	}
	for (i = 0; i < REGION_LEN; i++)
		if ((i < off || i >= off + WIN_LEN) && *region(i) != UNTOUCHED) {
			bad("%s: region byte %u (outside the window) written", what, i);
			return;
		}
}

static struct ibv_mr *region_mr(uint32_t off, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(g.pd, region(off), REGION_LEN, access);

	if (!mr)
		bad("ibv_reg_mr (access %#x): %s", access, strerror(errno));
	return mr;
}

/* Server: an MR over the region with @access and a window of @type. */
static int region_mw_access(struct mw_ctx *c, enum ibv_mw_type type,
			    int access)
{
	c->mr = region_mr(0, access);
	if (!c->mr)
		return -1;
	c->mw = ibv_alloc_mw(g.pd, type);
	if (!c->mw) {
		bad("ibv_alloc_mw (type %d): %s", type, strerror(errno));
		return -1;
	}
	return 0;
}

static int region_mw(struct mw_ctx *c, enum ibv_mw_type type)
{
	return region_mw_access(c, type, MR_ACCESS | IBV_ACCESS_MW_BIND);
}

/* Server: ibv_bind_mw of a type-1 window, up to its completion. */
static int bind1(struct mw_ctx *c, struct ibv_mr *mr, uint32_t off,
		 uint32_t len, unsigned int access, enum ibv_wc_status want)
{
	struct ibv_mw_bind b = {
		.wr_id = 500, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = mr ? region_addr(off) : 0,
			       .length = len, .mw_access_flags = access },
	};
	uint32_t rkey = c->mw->rkey;
	int err = ibv_bind_mw(c->p.qp, c->mw, &b);

	if (err) {
		bad("ibv_bind_mw: %s", strerror(err));
		return -1;
	}
	if (expect_wc(&c->p, "bind (type 1)", 500, want, IBV_WC_BIND_MW, NULL))
		return -1;
	/* A failed bind leaves the old key (ibv_bind_mw(3)). */
	if (want != IBV_WC_SUCCESS)
		c->mw->rkey = rkey;
	return 0;
}

/* Server: IBV_WR_BIND_MW of a type-2B window with its next key. */
static int bind2(struct mw_ctx *c, uint32_t off, uint32_t len,
		 unsigned int access)
{
	struct ibv_send_wr wr = {
		.wr_id = 501, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *badwr;
	int err;

	wr.bind_mw.mw = c->mw;
	wr.bind_mw.rkey = ibv_inc_rkey(c->mw->rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = c->mr, .addr = region_addr(off), .length = len,
		.mw_access_flags = access,
	};
	err = ibv_post_send(c->p.qp, &wr, &badwr);
	if (err) {
		bad("post IBV_WR_BIND_MW: %s", strerror(err));
		return -1;
	}
	if (expect_wc(&c->p, "bind (type 2B)", 501, IBV_WC_SUCCESS,
		      IBV_WC_BIND_MW, NULL))
		return -1;
	c->mw->rkey = wr.bind_mw.rkey;
	return 0;
}

/*
 * Both sides: a fresh QP pair; the server fills its region (window data
 * of @seed), registers it and binds a window of @type with @access over
 * it, and the client learns the window. 0 when both are ready.
 */
static int win_setup(struct mw_ctx *c, enum ibv_mw_type type,
		     unsigned int access, uint32_t seed)
{
	memset(c, 0, sizeof(*c));
	if (fresh_pair(&c->p, &def_opts, &fatal) && fatal)
		return -1;
	if (sync_ok(100))
		return -1;
	if (g.server) {
		region_fill(WIN_OFF, seed);
		if (!region_mw(c, type) && (type == IBV_MW_TYPE_1 ?
			      !bind1(c, c->mr, WIN_OFF, WIN_LEN, access,
				     IBV_WC_SUCCESS) :
			      !bind2(c, WIN_OFF, WIN_LEN, access))) {
			c->w.rkey = c->mw->rkey;
			c->w.addr = region_addr(WIN_OFF);
		}
	}
	if (share(&c->w))
		return -1;
	return sync_ok(101) ? -1 : 0;
}

static void win_teardown(struct mw_ctx *c)
{
	if (c->mw && ibv_dealloc_mw(c->mw))
		bad("ibv_dealloc_mw: %s", strerror(errno));
	if (c->mr && ibv_dereg_mr(c->mr))
		bad("ibv_dereg_mr: %s", strerror(errno));
	pair_destroy(&c->p);
}

/* Client: one READ (into CLI_DST) or WRITE (from CLI_SRC), expecting @want. */
static int access1(struct pair *p, enum ibv_wr_opcode op, uint64_t wr_id,
		   uint32_t len, uint64_t raddr, uint32_t rkey,
		   enum ibv_wc_status want, const char *what)
{
	int read = op == IBV_WR_RDMA_READ;

	if (post_one(p, wr_id, op, read ? CLI_DST : CLI_SRC, len, g.mr->lkey,
		     raddr, rkey))
		return -1;
	return expect_wc(p, what, wr_id, want,
			 read ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE, NULL);
}

/* Client: READ the whole window and compare it with the data of @seed. */
static int read_window(struct pair *p, const struct win *w, uint32_t seed,
		       uint64_t wr_id)
{
	long at;

	memset(g.buf + CLI_DST, 0, WIN_LEN);
	if (access1(p, IBV_WR_RDMA_READ, wr_id, WIN_LEN, w->addr, w->rkey,
		    IBV_WC_SUCCESS, "read in the window"))
		return -1;
	at = verify(g.buf + CLI_DST, WIN_LEN, seed);
	if (at >= 0) {
		bad("read in the window: data differs at byte %ld", at);
		return -1;
	}
	return 0;
}

/* READ, then WRITE and READ back, inside a window of @type. */
static void t_inside(enum ibv_mw_type type)
{
	struct mw_ctx c;

	if (win_setup(&c, type, WIN_RW, 11))
		goto out;
	if (!g.server && !read_window(&c.p, &c.w, 11, 1)) {
		fill(g.buf + CLI_SRC, WIN_LEN, 12);
		if (!access1(&c.p, IBV_WR_RDMA_WRITE, 2, WIN_LEN, c.w.addr,
			     c.w.rkey, IBV_WC_SUCCESS, "write in the window"))
			read_window(&c.p, &c.w, 12, 3);
	}
	if (sync_ok(102))
		goto out;
	if (g.server)
		region_check("after the write", WIN_OFF, 12);
out:
	win_teardown(&c);
}

static void t_mw1_inside(void) { t_inside(IBV_MW_TYPE_1); }
static void t_mw2_inside(void) { t_inside(IBV_MW_TYPE_2); }

/*
 * An access partly outside the window but inside the MR is refused, and
 * writes nothing: type 1 a WRITE across its end, type 2B a READ from
 * before its start.
 */
static void t_outside(enum ibv_mw_type type)
{
	int write = type == IBV_MW_TYPE_1;
	struct mw_ctx c;

	if (win_setup(&c, type, WIN_RW, 21))
		goto out;
	if (server_is_rxe(&c.p)) {
		skip_check("rxe (Linux 6.1) checks a window access against the MR's range only (rxe_resp.c check_rkey)");
		goto out;
	}
	if (!g.server) {
		fill(g.buf + CLI_SRC, PROBE_LEN, 22);
		if (write)
			access1(&c.p, IBV_WR_RDMA_WRITE, 1, PROBE_LEN,
				c.w.addr + WIN_LEN - PROBE_LEN / 2, c.w.rkey,
				IBV_WC_REM_ACCESS_ERR, "write across the window's end");
		else
			access1(&c.p, IBV_WR_RDMA_READ, 1, PROBE_LEN,
				c.w.addr - 64, c.w.rkey, IBV_WC_REM_ACCESS_ERR,
				"read from before the window");
	}
	if (sync_ok(103))
		goto out;
	if (g.server)
		region_check("after the refused access", WIN_OFF, 21);
out:
	win_teardown(&c);
}

static void t_mw1_outside(void) { t_outside(IBV_MW_TYPE_1); }
static void t_mw2_outside(void) { t_outside(IBV_MW_TYPE_2); }

/* A read-only type-1 window: READ works, WRITE is refused. */
static void t_mw1_rights(void)
{
	struct mw_ctx c;

	if (win_setup(&c, IBV_MW_TYPE_1, IBV_ACCESS_REMOTE_READ, 31))
		goto out;
	if (!g.server && !read_window(&c.p, &c.w, 31, 1)) {
		fill(g.buf + CLI_SRC, PROBE_LEN, 32);
		access1(&c.p, IBV_WR_RDMA_WRITE, 2, PROBE_LEN, c.w.addr,
			c.w.rkey, IBV_WC_REM_ACCESS_ERR,
			"write to a read-only window");
	}
	if (sync_ok(104))
		goto out;
	if (g.server)
		region_check("after the refused write", WIN_OFF, 31);
out:
	win_teardown(&c);
}

/* Rebinding a type-1 window gives a new key; the old one is refused. */
static void t_mw1_rebind(void)
{
	struct mw_ctx c;

	if (win_setup(&c, IBV_MW_TYPE_1, WIN_RW, 41))
		goto out;
	if (!g.server)
		read_window(&c.p, &c.w, 41, 1);
	if (sync_ok(105))
		goto out;
	if (g.server) {
		fill(region(WIN2_OFF), WIN_LEN, 42);
		c.w.old_rkey = c.w.rkey;
		if (!bind1(&c, c.mr, WIN2_OFF, WIN_LEN, WIN_RW, IBV_WC_SUCCESS)) {
			c.w.rkey = c.mw->rkey;
			c.w.addr = region_addr(WIN2_OFF);
			if (c.w.rkey == c.w.old_rkey)
				bad("rebind kept rkey %#x", c.w.rkey);
		}
	}
	if (share(&c.w) || sync_ok(106))
		goto out;
	if (!g.server && !read_window(&c.p, &c.w, 42, 2))
		access1(&c.p, IBV_WR_RDMA_READ, 3, PROBE_LEN,
			c.w.addr - WIN2_OFF + WIN_OFF, c.w.old_rkey,
			IBV_WC_REM_ACCESS_ERR, "read with the key before the rebind");
	sync_peer(107);
out:
	win_teardown(&c);
}

/* A type-2B window serves only the QP it was bound through. */
static void t_mw2_other_qp(void)
{
	struct mw_ctx c;
	struct pair q = {};

	if (win_setup(&c, IBV_MW_TYPE_2, WIN_RW, 51))
		goto out;
	if (fresh_pair(&q, &def_opts, &fatal) && fatal)
		goto out;
	if (sync_ok(108))
		goto out;
	if (!g.server && !read_window(&c.p, &c.w, 51, 1))
		access1(&q, IBV_WR_RDMA_READ, 2, PROBE_LEN, c.w.addr, c.w.rkey,
			IBV_WC_REM_ACCESS_ERR, "read through another QP");
	sync_peer(109);
out:
	pair_destroy(&q);
	win_teardown(&c);
}

/* LOCAL_INV of a type-2B window on the server: then refused. */
static void t_mw2_local_inv(void)
{
	struct ibv_send_wr wr = {
		.wr_id = 600, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *badwr;
	struct mw_ctx c;
	int err;

	if (win_setup(&c, IBV_MW_TYPE_2, WIN_RW, 61))
		goto out;
	if (!g.server)
		read_window(&c.p, &c.w, 61, 1);
	if (sync_ok(110))
		goto out;
	if (g.server) {
		wr.invalidate_rkey = c.mw->rkey;
		err = ibv_post_send(c.p.qp, &wr, &badwr);
		if (err)
			bad("post IBV_WR_LOCAL_INV: %s", strerror(err));
		else
			expect_wc(&c.p, "local invalidate", 600, IBV_WC_SUCCESS,
				  IBV_WC_LOCAL_INV, NULL);
	}
	if (sync_ok(111))
		goto out;
	if (!g.server)
		access1(&c.p, IBV_WR_RDMA_READ, 2, PROBE_LEN, c.w.addr, c.w.rkey,
			IBV_WC_REM_ACCESS_ERR, "read after LOCAL_INV");
	sync_peer(112);
out:
	win_teardown(&c);
}

/*
 * SEND_WITH_INV from the client names the server's type-2B window: the
 * receive completes with IBV_WC_WITH_INV and that rkey; then refused.
 */
static void t_mw2_send_inv(void)
{
	struct ibv_sge sge = { 0, 64, 0 };
	struct ibv_send_wr wr = {
		.wr_id = 601, .opcode = IBV_WR_SEND_WITH_INV, .sg_list = &sge,
		.num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
	}, *badwr;
	struct mw_ctx c;
	struct ibv_wc wc;
	int err;

	if (win_setup(&c, IBV_MW_TYPE_2, WIN_RW, 71))
		goto out;
	if (g.server)
		post_recv(&c.p, 602, CLI_DST, 256);
	if (sync_ok(113))
		goto out;
	if (!g.server && !read_window(&c.p, &c.w, 71, 1)) {
		sge.addr = (uintptr_t)g.buf + CLI_SRC;
		sge.lkey = g.mr->lkey;
		wr.invalidate_rkey = c.w.rkey;
		err = ibv_post_send(c.p.qp, &wr, &badwr);
		if (err)
			bad("post IBV_WR_SEND_WITH_INV: %s", strerror(err));
		else
			expect_wc(&c.p, "send with invalidate", 601,
				  IBV_WC_SUCCESS, IBV_WC_SEND, NULL);
	} else if (g.server &&
		   !expect_wc(&c.p, "receive", 602, IBV_WC_SUCCESS, IBV_WC_RECV, &wc)) {
		if (g.is_rxe && !(wc.wc_flags & IBV_WC_WITH_INV) &&
		    (wc.wc_flags & RXE_WC_WITH_INV))
			info("rxe flags the receive with ib_core's IB_WC_WITH_INVALIDATE (%#x)",
			     RXE_WC_WITH_INV);
		else if (!(wc.wc_flags & IBV_WC_WITH_INV))
			bad("receive without IBV_WC_WITH_INV (flags %#x)", wc.wc_flags);
		if (wc.invalidated_rkey != c.mw->rkey)
			bad("invalidated_rkey %#x, want %#x", wc.invalidated_rkey,
			    c.mw->rkey);
		if (wc.byte_len != 64)
			bad("receive byte_len %u, want 64", wc.byte_len);
	}
	if (sync_ok(114))
		goto out;
	if (!g.server)
		access1(&c.p, IBV_WR_RDMA_READ, 2, PROBE_LEN, c.w.addr, c.w.rkey,
			IBV_WC_REM_ACCESS_ERR, "read after SEND_WITH_INV");
	sync_peer(115);
out:
	win_teardown(&c);
}

/* ibv_dereg_mr (or rereg) of an MR with a bound window must fail. */
static int dereg_refused(struct ibv_mr *mr, const char *what)
{
	int err = ibv_dereg_mr(mr);

	if (!err) {
		bad("%s: dereg of an MR with a bound window succeeded", what);
		return -1;
	}
	if (err == EINVAL && g.is_rxe)
		info("%s: rxe refuses the dereg with EINVAL (rxe_mr.c), not EBUSY", what);
	else if (err != EBUSY)
		bad("%s: dereg with a bound window: %s, want EBUSY", what,
		    strerror(err));
	return 0;
}

/*
 * Server: an MR with a type-1 window bound cannot be deregistered or
 * re-registered; after the unbind it can. The same for type 2B, freed by
 * ibv_dealloc_mw. The client only takes part in the QP pair.
 */
static void t_dereg_busy(void)
{
	struct mw_ctx c;
	int err;

	memset(&c, 0, sizeof(c));
	if (fresh_pair(&c.p, &def_opts, &fatal) && fatal)
		goto out;
	if (sync_ok(116) || !g.server)
		goto out;
	if (region_mw(&c, IBV_MW_TYPE_1) ||
	    bind1(&c, c.mr, WIN_OFF, WIN_LEN, WIN_RW, IBV_WC_SUCCESS))
		goto out;
	if (dereg_refused(c.mr, "type 1")) {
		c.mr = NULL;
		goto out;
	}
	err = ibv_rereg_mr(c.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   MR_ACCESS);
	if (!err)
		bad("rereg of an MR with a bound window succeeded");
	else if (errno == EOPNOTSUPP && g.is_rxe)
		info("rxe has no rereg_user_mr (Linux 6.1)");
	else if (errno != EBUSY)
		bad("rereg with a bound window: %s, want EBUSY", strerror(errno));
	/* rxe's provider cannot unbind (see above): free the window there. */
	if (g.is_rxe) {
		if (ibv_dealloc_mw(c.mw))
			bad("ibv_dealloc_mw: %s", strerror(errno));
		c.mw = NULL;
	} else if (bind1(&c, NULL, 0, 0, 0, IBV_WC_SUCCESS)) {
		goto out;
	}
	err = ibv_dereg_mr(c.mr);
	if (err)
		bad("type 1: dereg after the unbind: %s", strerror(err));
	else
		c.mr = NULL;
	if (c.mw && ibv_dealloc_mw(c.mw))
		bad("ibv_dealloc_mw: %s", strerror(errno));
	c.mw = NULL;

	if (region_mw(&c, IBV_MW_TYPE_2) || bind2(&c, WIN_OFF, WIN_LEN, WIN_RW))
		goto out;
	if (dereg_refused(c.mr, "type 2B")) {
		c.mr = NULL;
		goto out;
	}
	if (ibv_dealloc_mw(c.mw))
		bad("ibv_dealloc_mw (type 2B, bound): %s", strerror(errno));
	c.mw = NULL;
	err = ibv_dereg_mr(c.mr);
	if (err)
		bad("type 2B: dereg after the dealloc: %s", strerror(err));
	else
		c.mr = NULL;
out:
	sync_peer(117);
	win_teardown(&c);
}

/*
 * Binds the device refuses (IBV_WC_MW_BIND_ERR): a range beyond the MR,
 * an MR without IBV_ACCESS_MW_BIND; and a zero-based window, which the
 * provider refuses before posting (EOPNOTSUPP; rxe's EINVAL).
 */
static void t_bind_refused(void)
{
	struct ibv_mw_bind zb = {
		.wr_id = 502, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .length = WIN_LEN,
			       .mw_access_flags = IBV_ACCESS_REMOTE_READ |
						  IBV_ACCESS_ZERO_BASED },
	};
	struct mw_ctx c;
	int i, err;

	for (i = 0; i < 2; i++) {
		memset(&c, 0, sizeof(c));
		if (fresh_pair(&c.p, &def_opts, &fatal) && fatal)
			return;
		if (sync_ok(118 + i))
			goto out;
		if (!g.server)
			goto next;
		if (region_mw_access(&c, IBV_MW_TYPE_1, i ? MR_ACCESS :
				     MR_ACCESS | IBV_ACCESS_MW_BIND))
			goto next;
		if (!i) {
			zb.bind_info.mr = c.mr;
			zb.bind_info.addr = region_addr(WIN_OFF);
			err = ibv_bind_mw(c.p.qp, c.mw, &zb);
			if (!err)
				bad("zero-based window: ibv_bind_mw succeeded");
			else if (err != EOPNOTSUPP && !(g.is_rxe && err == EINVAL))
				bad("zero-based window: %s, want EOPNOTSUPP",
				    strerror(err));
			bind1(&c, c.mr, REGION_LEN - WIN_LEN / 2, WIN_LEN,
			      WIN_RW, IBV_WC_MW_BIND_ERR);
		} else {
			bind1(&c, c.mr, WIN_OFF, WIN_LEN, IBV_ACCESS_REMOTE_READ,
			      IBV_WC_MW_BIND_ERR);
		}
next:
		if (sync_peer(120 + i))
			goto out;
		win_teardown(&c);
	}
	return;
out:
	win_teardown(&c);
}

/*
 * Server: re-register an MR (@flags: a new translation or new rights)
 * and tell the client the new key (old_rkey: the one before). Skipped
 * when the server is rxe, which has no rereg_user_mr.
 */
static int rereg_setup(struct mw_ctx *c, int access, uint32_t seed)
{
	memset(c, 0, sizeof(*c));
	if (fresh_pair(&c->p, &def_opts, &fatal) && fatal)
		return -1;
	if (sync_ok(122))
		return -1;
	if (server_is_rxe(&c->p)) {
		skip_check("rxe (Linux 6.1) has no rereg_user_mr");
		return -1;
	}
	if (g.server) {
		fill(region(0), REGION_LEN, seed);
		fill(g.buf + REGION2_OFF, REGION_LEN, seed + 1);
		c->mr = region_mr(0, access);
		if (c->mr) {
			c->w.rkey = c->mr->rkey;
			c->w.addr = region_addr(0);
		}
	}
	if (share(&c->w))
		return -1;
	return sync_ok(123) ? -1 : 0;
}

static int rereg(struct mw_ctx *c, int flags, void *addr, int access)
{
	c->w.old_rkey = c->w.rkey;
	if (ibv_rereg_mr(c->mr, flags, NULL, addr, addr ? REGION_LEN : 0,
			 access)) {
		bad("ibv_rereg_mr (flags %#x): %s", flags, strerror(errno));
		return -1;
	}
	c->w.rkey = c->mr->rkey;
	c->w.addr = (uintptr_t)c->mr->addr;
	if (c->w.rkey == c->w.old_rkey)
		bad("ibv_rereg_mr kept rkey %#x", c->w.rkey);
	return 0;
}

/* A new translation: the new key reaches the new buffer, the old is refused. */
static void t_rereg_trans(void)
{
	struct mw_ctx c;

	if (rereg_setup(&c, MR_ACCESS, 81))
		goto out;
	if (!g.server)
		read_window(&c.p, &c.w, 81, 1);
	if (sync_ok(124))
		goto out;
	if (g.server)
		rereg(&c, IBV_REREG_MR_CHANGE_TRANSLATION, g.buf + REGION2_OFF, 0);
	if (share(&c.w) || sync_ok(125))
		goto out;
	if (!g.server && !read_window(&c.p, &c.w, 82, 2))
		access1(&c.p, IBV_WR_RDMA_READ, 3, PROBE_LEN, c.w.addr,
			c.w.old_rkey, IBV_WC_REM_ACCESS_ERR,
			"read with the key before the rereg");
	sync_peer(126);
out:
	win_teardown(&c);
}

/* New rights (remote write taken away): a WRITE is refused, READ works. */
static void t_rereg_access(void)
{
	struct mw_ctx c;

	if (rereg_setup(&c, MR_ACCESS, 91))
		goto out;
	if (!g.server) {
		fill(g.buf + CLI_SRC, WIN_LEN, 92);
		access1(&c.p, IBV_WR_RDMA_WRITE, 1, WIN_LEN, c.w.addr, c.w.rkey,
			IBV_WC_SUCCESS, "write before the rereg");
	}
	if (sync_ok(127))
		goto out;
	if (g.server)
		rereg(&c, IBV_REREG_MR_CHANGE_ACCESS, NULL,
		      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	if (share(&c.w) || sync_ok(128))
		goto out;
	if (!g.server && !read_window(&c.p, &c.w, 92, 2)) {
		fill(g.buf + CLI_SRC, PROBE_LEN, 93);
		access1(&c.p, IBV_WR_RDMA_WRITE, 3, PROBE_LEN, c.w.addr, c.w.rkey,
			IBV_WC_REM_ACCESS_ERR, "write after remote write was taken away");
	}
	if (sync_ok(129))
		goto out;
	if (g.server && verify(region(0), WIN_LEN, 92) >= 0)
		bad("the refused write changed the MR");
out:
	win_teardown(&c);
}

const struct check mw_checks[] = {
	{ "mw1-inside", t_mw1_inside, 0 },
	{ "mw1-outside", t_mw1_outside, 0 },
	{ "mw1-rights", t_mw1_rights, 0 },
	{ "mw1-rebind-old-key", t_mw1_rebind, 0 },
	{ "mw2-inside", t_mw2_inside, 0 },
	{ "mw2-outside", t_mw2_outside, 0 },
	{ "mw2-other-qp", t_mw2_other_qp, 0 },
	{ "mw2-local-inv", t_mw2_local_inv, 0 },
	{ "mw2-send-inv", t_mw2_send_inv, 0 },
	{ "mw-dereg-busy", t_dereg_busy, 0 },
	{ "mw-bind-refused", t_bind_refused, 0 },
	{ "rereg-translation", t_rereg_trans, 0 },
	{ "rereg-access", t_rereg_access, 0 },
};
const size_t nmw = sizeof(mw_checks) / sizeof(mw_checks[0]);
