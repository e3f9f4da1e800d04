/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kite provider: device, context and object structures.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef __KITE_H__
#define __KITE_H__

#include <stddef.h>
#include <stdint.h>

#include <infiniband/driver.h>
#include <util/util.h>

#include "kite_hw.h"

struct kite_device {
	struct verbs_device ibv_dev;
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

struct kite_cq {
	struct verbs_cq vcq;
	struct kite_ring ring;
	uint32_t cqn;
	uint32_t depth;		/* CQEs in the ring */
	uint32_t ci;		/* consumer index (0 until poll_cq exists) */
};

struct kite_qp {
	struct verbs_qp vqp;
	struct kite_ring sq;
	struct kite_ring rq;
	uint32_t sq_depth;	/* WQEs */
	uint32_t sq_stride;	/* bytes per WQE */
	uint32_t rq_depth;
	uint32_t rq_stride;
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
struct ibv_qp *kite_create_qp(struct ibv_pd *pd,
			      struct ibv_qp_init_attr *attr);
int kite_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		   int attr_mask);
int kite_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		  struct ibv_qp_init_attr *init_attr);
int kite_destroy_qp(struct ibv_qp *qp);

#endif /* __KITE_H__ */
