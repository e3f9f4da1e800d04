/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit suite kite_datapath: the fixture its cases share (two RC QPs in
 * loopback on a probed device, a registered buffer, event counters) and
 * the cases, by file: kite_datapath_rc_test.c (RC data path),
 * kite_datapath_fake_test.c (WQE and CQE handling against fake QPs and
 * CQs), kite_datapath_ud_test.c (UD, address handles, the GSI QP),
 * kite_datapath_mem_test.c (fast registration and invalidation),
 * kite_datapath_srq_test.c (shared receive queues),
 * kite_datapath_cnt_test.c (counters QPs are bound to).
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_DATAPATH_TEST_H
#define KITE_DATAPATH_TEST_H

#include <kunit/test.h>
#include <linux/completion.h>
#include <rdma/ib_verbs.h>

#include "kite_ib.h"
#include "kite_verbs.h"

#define KITE_DT_WAIT_MS		5000	/* deadline of every completion wait */
#define KITE_DT_CQE		64
#define KITE_DT_WR		16
#define KITE_DT_SGE		2
#define KITE_DT_INLINE		64
#define KITE_DT_BUF_SIZE	(4 * PAGE_SIZE)
#define KITE_DT_MSG_LEN		1500	/* more than one 1024-byte MTU packet */
#define KITE_DT_PSN_A		0x100
#define KITE_DT_PSN_B		0xfffff0	/* wraps during the test */
#define KITE_DT_TIMEOUT		14
#define KITE_DT_RETRY		7
#define KITE_DT_RNR_TIMER	12
#define KITE_DT_HOP_LIMIT	64
#define KITE_DT_RD_ATOMIC	4
#define KITE_DT_IMM		0x12345678
#define KITE_DT_PATTERN		0x5a
#define KITE_DT_SWAP_OLD	0x1122334455667788ULL
#define KITE_DT_SWAP_NEW	0x8877665544332211ULL
#define KITE_DT_ADD		0x100000001ULL

#define KITE_DT_FAKE_NUM	KITE_DB_NUM_MASK	/* never handed out */
#define KITE_DT_FAKE_LOG_DEPTH	2
#define KITE_DT_FAKE_SQ_STRIDE	7
#define KITE_DT_FAKE_RQ_STRIDE	5
#define KITE_DT_FAKE_SGE	2

/* Address handles a case holds; kite_dt_exit() destroys what is left. */
#define KITE_DT_NUM_AH		3

/* QP event types the tests count (enum ib_event_type below this). */
#define KITE_DT_NUM_EVENTS	(IB_EVENT_GID_CHANGE + 1)

/* Regions of the registered buffer, one page each. */
enum {
	KITE_DT_A_SRC,
	KITE_DT_A_DST,
	KITE_DT_B_BUF,
	KITE_DT_ATOMIC,
};

/* A fake kernel QP and CQ, see kite_test_dp_wqe_layout(). */
struct kite_dt_fake {
	struct kite_qp *qp;
	struct kite_cq *cq;
	bool inserted;
};

struct kite_dt {
	struct kite_ib_dev *kib;
	bool opened;
	struct kite_dt_fake fake;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_cq *cq2;
	struct ib_qp *a;
	struct ib_qp *b;
	struct ib_srq *srq;	/* a case's SRQ, destroyed after the QPs */
	struct ib_ah *ah[KITE_DT_NUM_AH];
	__be32 ip4;	/* IPv4 address a case added to the netdev, or 0 */
	struct kite_ring buf;
	u32 key;
	struct ib_mr *frmr;	/* a case's fast-register MR, or NULL */
	struct completion comp;
	atomic_t comp_events;
	struct completion event;
	atomic_t qp_events[KITE_DT_NUM_EVENTS];
	struct ib_qp *qp_event_qp[KITE_DT_NUM_EVENTS];
};

/* The IPv4 address a case gives the netdev: 198.18.7.1/24 (RFC 2544). */
#define KITE_DT_IP4_ADDR	0xc6120701
#define KITE_DT_IP4_PREFIX	24

/* kite_datapath_test.c: the fixture */
void kite_dt_comp_handler(struct ib_cq *cq, void *ctx);
void kite_dt_connect(struct kunit *test, struct kite_dt *dt, struct ib_qp *qp,
		     struct ib_qp *dest, u32 sq_psn, u32 rq_psn);
struct ib_qp *kite_dt_create_qp(struct kunit *test, struct kite_dt *dt,
				struct ib_cq *cq);
struct ib_wc *kite_dt_find_one(struct kunit *test, struct ib_wc *wc, int n,
			       u64 wr_id);
struct kite_ib_dev *kite_dt_get(struct kunit *test);
u64 kite_dt_iova(struct kite_dt *dt, int region);
int kite_dt_ip4_addr(struct kite_dt *dt, int cmd, __be32 addr);
int kite_dt_poll(struct ib_cq *cq, struct ib_wc *wc, int n);
int kite_dt_post_recv(struct kite_dt *dt, struct ib_qp *qp, u64 wr_id,
		      int region, u32 len);
void kite_dt_qp_event(struct ib_event *ev, void *ctx);
void kite_dt_setup(struct kunit *test);
void kite_dt_setup_common(struct kunit *test);
struct ib_sge kite_dt_sge(struct kite_dt *dt, int region, u32 len);
void *kite_dt_va(struct kite_dt *dt, int region);
struct ib_qp *kite_dt_wait_event(struct kite_dt *dt, enum ib_event_type type);
void kite_dt_fake_free(struct kite_ib_dev *kib, struct kite_dt_fake *f);

/* kite_datapath_fake_test.c: fake QP and CQ */
int kite_dt_fake_alloc(struct kite_ib_dev *kib, struct kite_dt_fake *f);
void kite_dt_fake_cqe(struct kite_dt_fake *f, u32 idx, u8 opcode, u8 status,
		      u16 slot, u8 flags);

/* kite_datapath_rc_test.c */
void kite_test_dp_send(struct kunit *test);
void kite_test_dp_write(struct kunit *test);
void kite_test_dp_read(struct kunit *test);
void kite_test_dp_atomics(struct kunit *test);
void kite_test_dp_bad_lkey(struct kunit *test);
void kite_test_dp_flush(struct kunit *test);
void kite_test_dp_many(struct kunit *test);
void kite_test_dp_rem_access(struct kunit *test);
void kite_test_dp_cq_resize(struct kunit *test);
void kite_test_dp_post_errors(struct kunit *test);

/* kite_datapath_fake_test.c */
void kite_test_dp_wqe_layout(struct kunit *test);
void kite_test_dp_poll_cqes(struct kunit *test);
void kite_test_dp_reset_clean(struct kunit *test);
void kite_test_dp_arm_resizing(struct kunit *test);
void kite_test_dp_sw_flush(struct kunit *test);

/* kite_datapath_ud_test.c */
struct ib_qp *kite_dt_create_ud(struct kunit *test, struct kite_dt *dt,
				u32 qkey);
void kite_test_dp_ud_send(struct kunit *test);
void kite_test_dp_ud_qkey(struct kunit *test);
void kite_test_dp_ud_mtu(struct kunit *test);
void kite_test_dp_ah_atomic(struct kunit *test);
void kite_test_dp_gsi(struct kunit *test);
void kite_test_dp_ud_send_ipv4(struct kunit *test);

/* kite_datapath_mcast_test.c */
void kite_test_dp_mcast_attach(struct kunit *test);

/* kite_datapath_mem_test.c */
void kite_test_dp_mem_wqe_layout(struct kunit *test);
void kite_test_dp_frwr_reg(struct kunit *test);
void kite_test_dp_frwr_local_inv(struct kunit *test);
void kite_test_dp_send_inv(struct kunit *test);
void kite_test_dp_frwr_stale_key(struct kunit *test);
void kite_test_dp_frwr_errors(struct kunit *test);

/* kite_datapath_srq_test.c */
void kite_test_dp_srq_recv_limit(struct kunit *test);
void kite_test_dp_srq_last_wqe(struct kunit *test);

/* kite_datapath_cnt_test.c */
void kite_test_dp_counters(struct kunit *test);

#endif /* KITE_DATAPATH_TEST_H */
