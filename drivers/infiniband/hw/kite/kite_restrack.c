// SPDX-License-Identifier: GPL-2.0
/*
 * Kite restrack: the device's own numbers and ring sizes of CQs, QPs and
 * MRs, a CQ's EQ and producer index (QUERY_CQ) and each QP's RoCEv2
 * counters (QUERY_QP_STATS), shown by "rdma resource show ... -dd" beside
 * ib_core's fields; and a QP's context as the device holds it (QUERY_QP's
 * struct kite_qp_attr), shown raw by "rdma resource show qp -r".
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

/* The device's EQ and producer index of the CQ; skipped if it cannot say. */
static int kite_res_cq_query(struct sk_buff *msg, struct kite_cq *cq)
{
	struct kite_ib_dev *kib = to_kib(cq->ibcq.device);
	struct kite_cq_info info;

	if (kite_cmd_query_cq(&kib->kdev->admin, cq->uctx, cq->cqn, &info))
		return 0;
	if (rdma_nl_put_driver_u32(msg, "eqn", info.eqn) ||
	    rdma_nl_put_driver_u32(msg, "pi", info.pi) ||
	    rdma_nl_put_driver_u32_hex(msg, "flags", info.flags))
		return -EMSGSIZE;
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
	      rdma_nl_put_driver_u32(msg, "uctx", cq->uctx) ||
	      kite_res_cq_query(msg, cq);
	return kite_res_nest_end(msg, nest, err);
}

/**
 * kite_fill_res_qp_entry_raw() - the QP's context as the device reports it
 * @msg: netlink message
 * @ibqp: QP
 *
 * Return: 0, -EMSGSIZE, or the error of QUERY_QP.
 */
int kite_fill_res_qp_entry_raw(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct kite_ib_dev *kib = to_kib(ibqp->device);
	struct kite_qp *qp = to_kqp(ibqp);
	struct kite_qp_attr ka;
	int err;

	err = kite_cmd_query_qp(&kib->kdev->admin, qp->uctx, qp->qpn, &ka);
	if (err)
		return err;
	return nla_put(msg, RDMA_NLDEV_ATTR_RES_RAW, sizeof(ka), &ka);
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
