// SPDX-License-Identifier: GPL-2.0
/*
 * Kite restrack: the device's own numbers and ring sizes of CQs, QPs and
 * MRs, shown by "rdma resource show ... -d" beside ib_core's fields.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>
#include <uapi/rdma/rdma_netlink.h>

#include "kite.h"
#include "kite_verbs.h"

static int kite_res_nest_end(struct sk_buff *msg, struct nlattr *nest,
			     int err)
{
	if (err) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

int kite_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct kite_cq *cq = to_kcq(ibcq);
	struct nlattr *nest;
	int err;

	nest = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	err = rdma_nl_put_driver_u32(msg, "dev_cqn", cq->cqn) ||
	      rdma_nl_put_driver_u32(msg, "depth", 1u << cq->log_depth) ||
	      rdma_nl_put_driver_u32(msg, "uctx", cq->uctx);
	return kite_res_nest_end(msg, nest, err);
}

int kite_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct kite_qp *qp = to_kqp(ibqp);
	struct nlattr *nest;
	int err;

	nest = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	err = rdma_nl_put_driver_u32(msg, "sq_depth",
				     1u << qp->sq_log_depth) ||
	      rdma_nl_put_driver_u32(msg, "sq_stride",
				     1u << qp->sq_log_stride) ||
	      rdma_nl_put_driver_u32(msg, "rq_depth",
				     1u << qp->rq_log_depth) ||
	      rdma_nl_put_driver_u32(msg, "rq_stride",
				     1u << qp->rq_log_stride) ||
	      rdma_nl_put_driver_u32(msg, "uctx", qp->uctx);
	return kite_res_nest_end(msg, nest, err);
}

int kite_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct kite_mr *mr = to_kmr(ibmr);
	struct nlattr *nest;
	int err;

	nest = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	err = rdma_nl_put_driver_u32(msg, "pbl_level", mr->pbl.desc.level) ||
	      rdma_nl_put_driver_u32(msg, "page_shift",
				     mr->pbl.desc.page_shift) ||
	      rdma_nl_put_driver_u32(msg, "npages",
				     le32_to_cpu(mr->pbl.desc.npages)) ||
	      rdma_nl_put_driver_u32(msg, "uctx", mr->uctx);
	return kite_res_nest_end(msg, nest, err);
}
