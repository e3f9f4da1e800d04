/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the parts of kite-rc: the harness (kite-rc.c: state, reporting,
 * the TCP side channel, main), the device and QP pair helpers
 * (kite-rc-qp.c) and the modes (kite-rc-func.c, kite-rc-bulk.c,
 * kite-rc-mixed.c, kite-rc-mw.c, kite-rc-ex.c). See kite-rc.c for what the program does.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_RC_H
#define KITE_RC_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "kite-test.h"

#define BUF_SIZE	(4u << 20)	/* per side: one MR, all access */
#define NOACC_SIZE	4096u		/* MR without remote access */
#define QP_DEPTH	256u
#define CQ_DEPTH	1024
#define MAX_SGE		4u
#define WIDE_SGE	32u	/* most SGEs a check uses (rxe's and Kite's max) */
#define INLINE_SIZE	64u
#define POLL_MS		20000		/* one completion at most this late */

/* What each side tells the other about a QP (and its MRs). */
struct qpinfo {
	uint32_t qpn, psn, rkey, noacc_rkey;
	uint64_t addr, noacc_addr;
	uint8_t gid[16];
	uint32_t mtu, is_rxe;	/* is_rxe: the peer's device is Soft-RoCE */
};

struct pair {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct qpinfo peer;
};

struct conn_opts {
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
};

/* The program's state: options, the device, its MRs and this check's result. */
struct rc_state {
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
	uint32_t max_sge;	/* the device's, at most WIDE_SGE */
	int failures, is_rxe;
	char detail[248];	/* this check's failure, "" = passed */
	char skip_why[120];	/* why this check did not run, "" = it ran */
};

/* One check of a mode: its result name and what both sides run. */
struct check {
	const char *name;
	void (*fn)(void);
	int needs_main;		/* uses the main QP pair */
};

/* ---- kite-rc.c: harness ---------------------------------------------------- */

extern struct rc_state g;
extern const struct conn_opts def_opts;
extern struct pair main_pair;	/* the QP pair the checks share */
extern int fatal;		/* TCP to the peer broke: stop */

void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void skip_check(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tcp_io(void *p, size_t len, int do_send);
int xchg(const void *mine, void *theirs, size_t len);
int peer_moved_on(void);
int sync_ok(uint32_t tag);
int sync_peer(uint32_t tag);
void rnd_seed(void);
uint32_t rnd(void);

/* ---- kite-rc-qp.c: device and QP pairs ------------------------------------- */

const char *st(enum ibv_wc_status s);
int open_device(void);
int pair_create(struct pair *p, uint32_t inline_size);
int pair_create_sge(struct pair *p, uint32_t inline_size, uint32_t max_sge);
void pair_destroy(struct pair *p);
int pair_exchange(struct pair *p);
int pair_connect(struct pair *p, const struct conn_opts *o, int rtr_only);
int fresh_pair(struct pair *p, const struct conn_opts *o, int *tcp_lost);
int fresh_pair_sge(struct pair *p, const struct conn_opts *o, uint32_t max_sge,
		   int *tcp_lost);
int wait_wc(struct pair *p, struct ibv_wc *wc, int ms);
int expect_wc(struct pair *p, const char *what, uint64_t wr_id,
	      enum ibv_wc_status status, int opcode, struct ibv_wc *out);
int post_recv(struct pair *p, uint64_t wr_id, uint32_t off, uint32_t len);
int post_one(struct pair *p, uint64_t wr_id, enum ibv_wr_opcode op,
	     uint32_t off, uint32_t len, uint32_t lkey, uint64_t raddr,
	     uint32_t rkey);

/* ---- the modes --------------------------------------------------------------- */

extern const struct check func_checks[];	/* kite-rc-func.c */
extern const size_t nfunc;
void t_bulk(void);				/* kite-rc-bulk.c */
void t_mixed(void);				/* kite-rc-mixed.c */
extern const size_t mixed_buf_size;		/* its buffer, per side */
extern const struct check mw_checks[];		/* kite-rc-mw.c */
extern const size_t nmw;
extern const struct check ex_checks[];		/* kite-rc-ex.c */
extern const size_t nex;

#endif /* KITE_RC_H */
