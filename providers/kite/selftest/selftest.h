/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Host self-test of the libkite fast path (kite_fast.c), address
 * handles (kite_ah.c), window binding (kite_mw.c) and the extended CQs
 * and QPs (kite_cq_ex.c, kite_qp_ex.c) against a fake device: the "doorbell page" is ordinary memory, so each doorbell
 * register holds the last value written;
 * the test plays the device by reading WQEs from the rings and writing
 * CQEs (phase last) into the CQ ring, and plays the kernel by answering
 * the AH commands (ibv_cmd_create_ah/destroy_ah are faked in fake.c).
 *
 * main.c runs the cases, *_test.c hold them by topic. Built and run by
 * scripts/build-rdma-core.sh against the rdma-core tree.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_SELFTEST_H
#define KITE_SELFTEST_H

#include <stdio.h>

#include "kite.h"
#include "kite-abi.h"

/* The case running now, named in failure messages. */
extern const char *cur_test;

/* A failed check: the case fails (its local "ok" drops to 0) and goes on. */
#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			printf("# %s: %s:%d: %s\n", cur_test,		\
			       __FILE__, __LINE__, #cond);		\
			ok = 0;						\
		}							\
	} while (0)

/*
 * The kernel side of the AH commands. ibv_cmd_create_ah() answers with
 * .resp (or fails with .err) and records what it was given;
 * ibv_cmd_destroy_ah() counts the AHs destroyed.
 */
struct kernel_ah {
	int err;			/* create: errno to fail with, or 0 */
	int destroy_err;		/* destroy: errno to fail with, or 0 */
	struct kite_create_ah_resp resp;	/* the driver's answer */
	int creates, destroys, logs;
	size_t resp_size;
	struct ibv_ah_attr attr;	/* as the kernel saw it */
};
extern struct kernel_ah kernel_ah;

/*
 * kite_create_cq() and kite_create_qp() (kite_verbs.c, faked in fake.c):
 * they return .cq / .qp, or fail with .err when it is NULL, and record
 * what they were given; kite_destroy_qp() counts.
 */
struct fake_create {
	struct kite_cq *cq;
	struct kite_qp *qp;
	int err;
	struct ibv_qp_cap cap;		/* the caps the QP "got" */
	int cq_calls, qp_calls, qp_destroys, cqe;
	struct ibv_qp_init_attr qp_attr;	/* as kite_create_qp saw it */
};
extern struct fake_create fake_create;

/* One context with one CQ and one QP on it, in plain memory. */
struct fake {
	struct kite_context *ctx;
	struct kite_cq *cq;
	struct kite_qp *qp;
	uint32_t dev_cq_pi;	/* the "device's" CQ producer index */
	uint8_t mem[4096];	/* data the SGEs point at */
};

#define QPN	0x1234
#define CQN	7

void wq_setup(struct kite_wq *wq, uint32_t depth, uint32_t stride,
	      uint32_t max_sge);
struct fake *fake_new(enum ibv_qp_type type, uint32_t sq_depth,
		      uint32_t cq_depth);
void fake_free(struct fake *f);
uint64_t db_read(struct fake *f, unsigned int reg);
void db_clear(struct fake *f);
uint8_t *sq_wqe(struct fake *f, uint32_t idx);
uint8_t *rq_wqe(struct fake *f, uint32_t idx);
void dev_cqe(struct fake *f, uint32_t qpn, uint16_t wqe_idx,
	     uint8_t opcode, uint8_t status, uint32_t byte_len,
	     uint8_t flags, uint32_t imm);

static inline struct ibv_send_wr send_wr(uint64_t wr_id,
					 enum ibv_wr_opcode op,
					 struct ibv_sge *sg, int num_sge,
					 int flags)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .opcode = op, .sg_list = sg,
		.num_sge = num_sge, .send_flags = flags,
	};

	return wr;
}

/* The cases (each returns 1 when every check passed). */
int test_post_send_layout(void);	/* post_test.c */
int test_post_send_errors(void);
int test_recv(void);
int test_cq_wrap(void);			/* cq_test.c */
int test_cq_forget(void);
int test_cq_stale_slot(void);
int test_cq_half_depth(void);
int test_cq_old_ring(void);
int test_two_qps(void);
int test_qp_table(void);
int test_ah_create(void);		/* ud_test.c */
int test_ah_errors(void);
int test_ud_post_send(void);
int test_ud_post_errors(void);
int test_ud_poll(void);
int test_stress_one_thread(void);	/* stress_test.c */
int test_stress_two_threads(void);
int test_dbrec_post(void);		/* dbrec_test.c */
int test_dbrec_cq(void);
int test_mw_post_layout(void);		/* mw_test.c */
int test_mw_post_errors(void);
int test_mw_bind_type1(void);
int test_mw_poll(void);
int test_cq_ex_create(void);		/* cq_ex_test.c */
int test_cq_ex_poll(void);
int test_cq_ex_same_as_poll_cq(void);
int test_qp_ex_create(void);		/* qp_ex_test.c */
int test_qp_ex_same_wqes(void);
int test_qp_ex_ud(void);
int test_qp_ex_errors(void);
int test_srq_post(void);		/* srq_test.c */
int test_srq_poll(void);
int test_srq_refused(void);

#endif
