/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kite provider: the uverbs commands that carry driver data, built from the
 * kernel's rdma/kite-abi.h.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef __KITE_ABI_H__
#define __KITE_ABI_H__

#include <assert.h>

#include <infiniband/kern-abi.h>
#include <rdma/kite-abi.h>
#include <kernel-abi/kite-abi.h>

DECLARE_DRV_CMD(kite_uverbs_alloc_context, IB_USER_VERBS_CMD_GET_CONTEXT,
		empty, kite_alloc_ucontext_resp);
DECLARE_DRV_CMD(kite_uverbs_alloc_pd, IB_USER_VERBS_CMD_ALLOC_PD,
		empty, kite_alloc_pd_resp);
DECLARE_DRV_CMD(kite_uverbs_create_cq, IB_USER_VERBS_CMD_CREATE_CQ,
		kite_create_cq_req, kite_create_cq_resp);
DECLARE_DRV_CMD(kite_uverbs_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ,
		kite_resize_cq_req, empty);
DECLARE_DRV_CMD(kite_uverbs_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		kite_create_qp_req, kite_create_qp_resp);
DECLARE_DRV_CMD(kite_uverbs_create_ah, IB_USER_VERBS_CMD_CREATE_AH,
		empty, kite_create_ah_resp);
DECLARE_DRV_CMD(kite_uverbs_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		kite_create_srq_req, kite_create_srq_resp);

/* The driver data follows the core response with no padding in between. */
static_assert(sizeof(struct kite_uverbs_alloc_context_resp) ==
		      sizeof(struct ib_uverbs_get_context_resp) +
		      sizeof(struct kite_alloc_ucontext_resp),
	      "kite ucontext response layout");
static_assert(sizeof(struct kite_uverbs_alloc_pd_resp) ==
		      sizeof(struct ib_uverbs_alloc_pd_resp) +
		      sizeof(struct kite_alloc_pd_resp),
	      "kite PD response layout");
static_assert(sizeof(struct kite_uverbs_create_cq) ==
		      sizeof(struct ibv_create_cq) +
		      sizeof(struct kite_create_cq_req),
	      "kite CQ request layout");
static_assert(sizeof(struct kite_uverbs_create_cq_resp) ==
		      sizeof(struct ib_uverbs_create_cq_resp) +
		      sizeof(struct kite_create_cq_resp),
	      "kite CQ response layout");
static_assert(sizeof(struct kite_uverbs_resize_cq) ==
		      sizeof(struct ibv_resize_cq) +
		      sizeof(struct kite_resize_cq_req),
	      "kite CQ resize request layout");
static_assert(sizeof(struct kite_uverbs_create_qp) ==
		      sizeof(struct ibv_create_qp) +
		      sizeof(struct kite_create_qp_req),
	      "kite QP request layout");
static_assert(sizeof(struct kite_uverbs_create_qp_resp) ==
		      sizeof(struct ib_uverbs_create_qp_resp) +
		      sizeof(struct kite_create_qp_resp),
	      "kite QP response layout");
static_assert(sizeof(struct kite_uverbs_create_ah_resp) ==
		      sizeof(struct ib_uverbs_create_ah_resp) +
		      sizeof(struct kite_create_ah_resp),
	      "kite AH response layout");

#endif /* __KITE_ABI_H__ */
