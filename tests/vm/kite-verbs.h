/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the parts of kite-verbs: the harness (kite-verbs.c: result
 * lines, the helpers below, device, port and PD checks, main), the object
 * checks (kite-verbs-obj.c: CQs, QP creation, MRs, error paths), the QP
 * state walks (kite-verbs-qp.c), the leak loops (kite-verbs-leak.c) and
 * the scale checks (kite-verbs-scale.c).
 * See kite-verbs.c for what the program does.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_VERBS_H
#define KITE_VERBS_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <kite/kite_hw.h>
#include <kite_limits.h>

#include "kite-test.h"

#define CQ_SIZE		16
/* SGEs per queue and inline bytes make_qp() asks for (and 10 WRs). */
#define QP_ASK_SGE	2
#define QP_ASK_INLINE	64

/* Append "name=got (want W)" to a mismatch list when got != want. */
#define EXPECT(buf, name, got, want)					\
	do {								\
		unsigned long long g_ = (got), w_ = (want);		\
		if (g_ != w_) {						\
			size_t l_ = strlen(buf);			\
			snprintf((buf) + l_, sizeof(buf) - l_,		\
				 " %s=%llu (want %llu)", (name), g_, w_); \
		}							\
	} while (0)

/* ---- kite-verbs.c --------------------------------------------------------- */

extern int failures;

void ok(const char *name);
void fail(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void expect_errno(const char *name, int succeeded, int err, int want);
struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq,
		       enum ibv_qp_type type, struct ibv_qp_cap *cap);
long read_long(const char *path);
int write_long(const char *path, long v);

/* ---- kite-verbs-obj.c: CQs, QPs, MRs, error paths --------------------------- */

void check_objects(struct ibv_device *dev, struct ibv_context *ctx,
		   const char *gid_text);

/* ---- kite-verbs-qp.c: QP state walks ---------------------------------------- */

int find_gid(struct ibv_context *ctx, const union ibv_gid *want);
void check_qp_walk(struct ibv_pd *pd, struct ibv_cq *cq,
		   enum ibv_qp_type type, const union ibv_gid *gid,
		   int gid_index, const char *name);
void check_qp_illegal(struct ibv_pd *pd, struct ibv_cq *cq,
		      const union ibv_gid *gid, int gid_index);
int qp_hold(struct ibv_context *ctx, const char *gid_text);

/* ---- kite-verbs-scale.c: objects of a real NIC, a 4 GiB MR -------------------- */

/* Result lines scale() prints when it gets past its setup. */
#define SCALE_RESULTS	8
int scale(struct ibv_context *ctx, const char *gid_text);

/* ---- kite-verbs-leak.c: leak loops ------------------------------------------ */

void check_leaks(const char *dev, struct ibv_context *ctx, struct ibv_pd *pd);
void check_leak_pd(const char *dev, struct ibv_context *ctx);

#endif /* KITE_VERBS_H */
