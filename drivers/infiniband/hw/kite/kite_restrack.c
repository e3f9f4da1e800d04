// SPDX-License-Identifier: GPL-2.0
/*
 * Kite restrack: the device's own numbers and ring sizes of CQs, QPs and
 * MRs, and each QP's RoCEv2 counters (QUERY_QP_STATS), shown by
 * "rdma resource show ... -d" beside ib_core's fields.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>
#include <uapi/rdma/rdma_netlink.h>

#include "kite_ib.h"
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

/* Per-QP counters shown as driver attributes, in kite_qp_stats order. */
static const struct {
	const char *name;
	size_t off;
} kite_res_qp_counters[] = {
	{ "tx_packets", offsetof(struct kite_qp_stats, tx_packets) },
	{ "tx_bytes", offsetof(struct kite_qp_stats, tx_bytes) },
	{ "rx_packets", offsetof(struct kite_qp_stats, rx_packets) },
	{ "rx_bytes", offsetof(struct kite_qp_stats, rx_bytes) },
	{ "retransmits", offsetof(struct kite_qp_stats, retransmits) },
	{ "timeouts", offsetof(struct kite_qp_stats, timeouts) },
	{ "naks_sent", offsetof(struct kite_qp_stats, naks_sent) },
	{ "naks_rcvd", offsetof(struct kite_qp_stats, naks_rcvd) },
	{ "rnr_naks_sent", offsetof(struct kite_qp_stats, rnr_naks_sent) },
	{ "rnr_naks_rcvd", offsetof(struct kite_qp_stats, rnr_naks_rcvd) },
	{ "duplicate_requests", offsetof(struct kite_qp_stats, dup_requests) },
};

/* The QP's counters as driver attributes; skipped if the device has none. */
static int kite_res_qp_stats(struct sk_buff *msg, struct kite_qp *qp)
{
	struct kite_ib_dev *kib = to_kib(qp->ibqp.device);
	struct kite_qp_stats st;
	const __le64 *val;
	unsigned int i;

	if (KITE_ABI_VER_MINOR(kib->kdev->caps.abi_version) <
	    KITE_ABI_MINOR_QP_STATS ||
	    kite_cmd_query_qp_stats(&kib->kdev->admin, qp->uctx, qp->qpn,
				    &st))
		return 0;
	for (i = 0; i < ARRAY_SIZE(kite_res_qp_counters); i++) {
		val = (const __le64 *)((const u8 *)&st +
				       kite_res_qp_counters[i].off);
		if (rdma_nl_put_driver_u64(msg, kite_res_qp_counters[i].name,
					   le64_to_cpu(*val)))
			return -EMSGSIZE;
	}
	return 0;
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
	      rdma_nl_put_driver_u32(msg, "uctx", qp->uctx) ||
	      kite_res_qp_stats(msg, qp);
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
	/* A fast-register MR: its page list and what map_mr_sg put there. */
	if (!err && mr->pages)
		err = rdma_nl_put_driver_u32(msg, "frwr_max_pages",
					     mr->max_pages) ||
		      rdma_nl_put_driver_u32(msg, "frwr_npages", mr->npages);
	return kite_res_nest_end(msg, nest, err);
}
