/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kite provider: device, context and object structures.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef __KITE_H__
#define __KITE_H__

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/driver.h>
#include <util/util.h>

#include "kite_hw.h"

struct kite_device {
	struct verbs_device ibv_dev;
};

struct kite_qp;
struct kite_wr_batch;

/*
 * QPs of a context by QP number, for poll_cq to find the QP a CQE names:
 * a two-level table of the 24-bit QP number space, 4096 leaves of 4096
 * QP pointers, a leaf allocated when the first of its QPs is created and
 * freed with the last. Changes hold the mutex and publish with release
 * stores; poll_cq reads with acquire loads and no lock. A lookup of a QP
 * being destroyed cannot see its leaf or the QP freed: poll_cq looks QPs
 * up under the CQ's lock, and destroy drops the QP's CQEs from its CQs
 * under their locks (kite_cq_forget_qp()) before it takes the QP out of
 * the table, so after that no CQE names the QP and no poller is still
 * looking it up.
 */
#define KITE_QP_LEAF_SHIFT	12
#define KITE_QP_LEAF_SIZE	(1u << KITE_QP_LEAF_SHIFT)
#define KITE_QP_DIR_SIZE	((KITE_QPN_MASK >> KITE_QP_LEAF_SHIFT) + 1)

struct kite_qp_leaf {
	struct kite_qp *_Atomic qp[KITE_QP_LEAF_SIZE];
	uint32_t used;		/* QPs in the leaf (under the mutex) */
};

struct kite_qp_table {
	pthread_mutex_t lock;
	struct kite_qp_leaf *_Atomic dir[KITE_QP_DIR_SIZE];
};

struct kite_context {
	struct verbs_context ibv_ctx;
	uint32_t uctx;		/* device context number = doorbell page */
	void *db;		/* this context's doorbell page (BAR2) */
	size_t db_size;
	uint32_t dev_abi_version;
	uint32_t max_qp;
	uint32_t max_cq;
	uint32_t max_cqe;
	uint32_t max_qp_wr;
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t max_rd_atom;
	uint32_t cap_flags;	/* KITE_DEV_CAP_* */
	bool dbrec;		/* CQs and QPs get doorbell records */
	struct kite_qp_table qps;
};

struct kite_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
};

/* A ring in process memory that the driver pins (see rdma/kite-abi.h). */
struct kite_ring {
	void *buf;		/* KITE_RING_ALIGN aligned, zeroed */
	size_t len;		/* bytes allocated (whole pages) */
};

/*
 * A CQ. @lock covers the ring, the depth and everything after the lock
 * (resize_cq changes the ring under it). @ci is the free-running consumer
 * index; @db_ci the last one written to the CQ doorbell (the device's view
 * of the free space). After a resize, @old holds the previous ring until
 * poll_cq has consumed the CQEs the device wrote there before switching.
 * With a doorbell record, @rec_ci points to its consumer index (in the
 * page @dbrec, which outlives resizes) and poll_cq stores the index there
 * instead of writing the CQ doorbell.
 */
struct kite_cq {
	struct verbs_cq vcq;
	struct kite_ring ring;
	uint32_t cqn;
	uint32_t depth;		/* CQEs in the ring */
	pthread_spinlock_t lock;
	uint8_t log_depth;
	uint32_t ci;
	uint32_t db_ci;
	struct kite_qp *last_qp;	/* lookup cache of poll_cq */
	struct kite_ring old;		/* ring before a resize, or none */
	uint8_t old_log_depth;
	uint32_t old_ci;
	struct kite_ring dbrec;		/* page of the doorbell record */
	__le32 *rec_ci;			/* its consumer index, or NULL */
	struct ibv_wc poll_wc;		/* current completion of start_poll */
};

/*
 * A send or receive queue. @pi is the free-running producer index (the
 * last doorbell value), @ci the index of the oldest WQE not completed yet;
 * @wr_id holds the wr_id of the WQE in each slot. @lock covers all of it.
 * With a doorbell record, @rec_pi and @rec_poll point to this queue's
 * producer index and poll flag in it (else NULL).
 */
struct kite_wq {
	pthread_spinlock_t lock;
	struct kite_ring ring;
	uint32_t depth;		/* WQEs (power of two) */
	uint8_t log_depth;
	uint32_t stride;	/* bytes per WQE */
	uint32_t pi;
	uint32_t ci;
	uint32_t max_sge;	/* SGEs a WQE may carry (the QP's cap) */
	uint64_t *wr_id;	/* depth entries */
	__le32 *rec_pi;
	const __le32 *rec_poll;
};

/*
 * An address handle: the device address vector built at create time,
 * copied as is into each UD WQE that names the AH. Never changes.
 */
struct kite_ah {
	struct ibv_ah ibv_ah;
	struct kite_av av;
};

/*
 * A shared receive queue (kite_srq.c). @lock covers the free list (@head
 * .. @tail, linked through the WQE headers' next fields), @pi, @wr_id and
 * @busy (slots holding a posted WQE not yet completed).
 */
struct kite_srq {
	struct verbs_srq vsrq;
	struct kite_ring ring;
	pthread_spinlock_t lock;
	uint32_t srqn;
	uint32_t depth;		/* slots (power of two); max_wr = depth - 1 */
	uint32_t stride;	/* bytes per WQE */
	uint32_t max_sge;
	uint32_t pi;
	uint32_t head;		/* first free slot: the next post's */
	uint32_t tail;		/* last free slot: the spare */
	uint64_t *wr_id;	/* depth entries */
	bool *busy;		/* depth entries */
};

/* @srq: receives come from that SRQ; @rq is then unused (no ring). */
struct kite_qp {
	struct verbs_qp vqp;
	struct kite_wq sq;
	struct kite_wq rq;
	struct kite_srq *srq;
	uint32_t max_inline;	/* bytes of inline data (the QP's cap) */
	bool sig_all;
	struct kite_wr_batch *batch;	/* ibv_wr_* state (kite_qp_ex.c) */
};

static inline struct kite_device *to_kite_dev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct kite_device, ibv_dev.device);
}

static inline struct kite_context *to_kite_ctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct kite_context, ibv_ctx.context);
}

static inline struct kite_pd *to_kite_pd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct kite_pd, ibv_pd);
}

static inline struct kite_cq *to_kite_cq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct kite_cq, vcq.cq);
}

static inline struct kite_qp *to_kite_qp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct kite_qp, vqp.qp);
}

static inline struct kite_srq *to_kite_srq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct kite_srq, vsrq.srq);
}

static inline struct kite_ah *to_kite_ah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct kite_ah, ibv_ah);
}

int kite_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);
int kite_query_port(struct ibv_context *context, uint8_t port,
		    struct ibv_port_attr *attr);
struct ibv_pd *kite_alloc_pd(struct ibv_context *context);
int kite_dealloc_pd(struct ibv_pd *pd);
struct ibv_cq *kite_create_cq(struct ibv_context *context, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector);
int kite_destroy_cq(struct ibv_cq *cq);
int kite_resize_cq(struct ibv_cq *cq, int cqe);
int kite_req_notify_cq(struct ibv_cq *cq, int solicited_only);
struct ibv_mr *kite_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			   uint64_t hca_va, int access);
int kite_dereg_mr(struct verbs_mr *vmr);
int kite_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		  void *addr, size_t length, int access);
struct ibv_qp *kite_create_qp(struct ibv_pd *pd,
			      struct ibv_qp_init_attr *attr);
int kite_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		   int attr_mask);
int kite_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		  struct ibv_qp_init_attr *init_attr);
int kite_destroy_qp(struct ibv_qp *qp);

/* Address handles (kite_ah.c). */
int kite_ah_attr_check(const struct ibv_ah_attr *attr);
int kite_av_build(const struct ibv_ah_attr *attr, const uint8_t dmac[6],
		  uint8_t net_type, struct kite_av *av);
struct ibv_ah *kite_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int kite_destroy_ah(struct ibv_ah *ah);

/* Memory windows (kite_mw.c). */
struct ibv_mw *kite_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int kite_dealloc_mw(struct ibv_mw *mw);
int kite_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind);

int kite_ring_alloc(struct kite_ring *ring, size_t bytes);
/* roundup_pow_of_two(max(n, 2^KITE_MIN_LOG_DEPTH)); n <= 2^31. */
static inline uint32_t kite_ring_depth(uint32_t n)
{
	uint32_t depth = 1u << KITE_MIN_LOG_DEPTH;

	while (depth < n)
		depth <<= 1;
	return depth;
}
void kite_ring_free(struct kite_ring *ring);

/* Shared receive queues (kite_srq.c). */
struct ibv_srq *kite_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr);
struct ibv_srq *kite_create_srq_ex(struct ibv_context *context,
				   struct ibv_srq_init_attr_ex *attr);
int kite_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		    int attr_mask);
int kite_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int kite_destroy_srq(struct ibv_srq *srq);
int kite_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);
bool kite_srq_retire(struct kite_srq *srq, uint32_t slot, uint64_t *wr_id);

/* log2 of a power of two. */
static inline uint8_t kite_log2(uint32_t pow2)
{
	return __builtin_ctz(pow2);
}

/* The SQ takes work from RTS on (SQD, SQE and ERR queue or flush). */
static inline bool kite_sq_takes_work(enum ibv_qp_state state)
{
	return state != IBV_QPS_RESET && state != IBV_QPS_INIT &&
	       state != IBV_QPS_RTR;
}

/* Extended CQs and QPs (kite_cq_ex.c, kite_qp_ex.c). */
struct ibv_cq_ex *kite_create_cq_ex(struct ibv_context *context,
				    struct ibv_cq_init_attr_ex *attr);
int kite_cq_ex_check(const struct ibv_cq_init_attr_ex *attr);
void kite_cq_ex_set_ops(struct kite_cq *cq);
struct ibv_qp *kite_create_qp_ex(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *attr);
int kite_qp_ex_check(const struct ibv_qp_init_attr_ex *attr);
int kite_qp_ex_setup(struct kite_qp *qp, uint64_t send_ops_flags);
void kite_qp_ex_free(struct kite_qp *qp);

/* Fast path (kite_fast.c). */
int kite_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int kite_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);
int kite_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
bool kite_cq_next_wc(struct kite_context *ctx, struct kite_cq *cq,
		     struct ibv_wc *wc);
void kite_cq_poll_done(struct kite_context *ctx, struct kite_cq *cq);
int kite_sq_put(struct kite_qp *qp, const struct ibv_send_wr *wr,
		uint32_t *pi);
void kite_sq_publish(struct kite_qp *qp, uint32_t pi);
int kite_wqe_opcode(enum ibv_qp_type qp_type, enum ibv_wr_opcode op);
void kite_put_sges(struct kite_sge *dst, const struct ibv_sge *sg,
		   int num_sge);
void kite_ring_doorbell(struct kite_context *ctx, unsigned int reg,
			uint32_t num, uint8_t flags, uint32_t index);
bool kite_qp_retire(struct kite_qp *qp, const struct kite_cqe *cqe,
		    uint64_t *wr_id);
void kite_cq_report_ci(struct kite_context *ctx, struct kite_cq *cq);
void kite_cq_doorbell_ci(struct kite_context *ctx, struct kite_cq *cq);
void kite_cq_forget_qp(struct kite_cq *cq, uint32_t qpn, struct kite_srq *srq);
bool kite_cq_ring_pending(void *ring, uint32_t ci, uint8_t log_depth);
void kite_wq_reset(struct kite_wq *wq);
void kite_qp_table_init(struct kite_qp_table *table);
void kite_qp_table_fini(struct kite_qp_table *table);
int kite_qp_table_insert(struct kite_qp_table *table, struct kite_qp *qp);
void kite_qp_table_remove(struct kite_qp_table *table, struct kite_qp *qp);
struct kite_qp *kite_qp_table_find(struct kite_qp_table *table,
				   uint32_t qpn);

#endif /* __KITE_H__ */
