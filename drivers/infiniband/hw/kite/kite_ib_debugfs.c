// SPDX-License-Identifier: GPL-2.0
/*
 * Kite RDMA driver debugfs: rdma/qps and rdma/cqs in the function's
 * directory (/sys/kernel/debug/kite/<PCI function>/). Each line is one
 * object: what the device answers to QUERY_QP or QUERY_CQ, beside the
 * numbers and ring sizes the driver keeps.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "kite_ib.h"
#include "kite_verbs.h"

static const char *const kite_dbg_qp_states[] = {
	[IB_QPS_RESET] = "RESET",
	[IB_QPS_INIT] = "INIT",
	[IB_QPS_RTR] = "RTR",
	[IB_QPS_RTS] = "RTS",
	[IB_QPS_SQD] = "SQD",
	[IB_QPS_SQE] = "SQE",
	[IB_QPS_ERR] = "ERR",
};

/**
 * kite_qp_state_name() - printable name of a QP state
 * @state: enum ib_qp_state value, as ib_core and the device number them
 *
 * Return: the name, or "UNKNOWN".
 */
const char *kite_qp_state_name(unsigned int state)
{
	if (state < ARRAY_SIZE(kite_dbg_qp_states) && kite_dbg_qp_states[state])
		return kite_dbg_qp_states[state];
	return "UNKNOWN";
}

static const char *kite_dbg_qp_type(enum ib_qp_type type)
{
	switch (type) {
	case IB_QPT_GSI:
		return "GSI";
	case IB_QPT_RC:
		return "RC";
	case IB_QPT_UC:
		return "UC";
	case IB_QPT_UD:
		return "UD";
	default:
		return "UNKNOWN";
	}
}

/* What the dump needs of a QP, copied while the xarray holds it. */
struct kite_dbg_qp {
	u32 qpn;
	u32 uctx;
	enum ib_qp_type type;
	enum ib_qp_state state;
	u32 sq_depth;
	u32 rq_depth;
	u32 sq_pi;
	u32 sq_ci;
	u32 rq_pi;
	u32 rq_ci;
	bool kernel;
};

/*
 * The QP with the lowest number at or above *@idx, copied to @out; the
 * xarray's lock keeps it from being freed meanwhile (destroy erases it
 * first).
 */
static bool kite_dbg_next_qp(struct kite_ib_dev *kib, unsigned long *idx,
			     struct kite_dbg_qp *out)
{
	struct kite_qp *qp;

	xa_lock(&kib->qps);
	qp = xa_find(&kib->qps, idx, ULONG_MAX, XA_PRESENT);
	if (qp) {
		out->qpn = qp->qpn;
		out->uctx = qp->uctx;
		out->type = qp->ibqp.qp_type;
		out->state = READ_ONCE(qp->state);
		out->sq_depth = 1u << qp->sq_log_depth;
		out->rq_depth = qp->ibqp.srq ? 0 : 1u << qp->rq_log_depth;
		out->kernel = qp->sq_wrid;
		out->sq_pi = READ_ONCE(qp->sq_pi);
		out->sq_ci = READ_ONCE(qp->sq_ci);
		out->rq_pi = READ_ONCE(qp->rq_pi);
		out->rq_ci = READ_ONCE(qp->rq_ci);
	}
	xa_unlock(&kib->qps);
	return qp;
}

/*
 * One line per QP. state, cur_state, sq_psn, rq_psn, dest_qpn and the
 * path MTU are the device's (QUERY_QP, as ibv_query_qp reads them); a QP
 * destroyed between the copy and the query shows the command's error
 * instead. type, uctx, the depths and driver_state (the state the driver
 * last set) are the driver's; a kernel QP adds its ring indexes.
 */
static int kite_dbg_qps_show(struct seq_file *s, void *unused)
{
	struct kite_ib_dev *kib = s->private;
	struct kite_qp_attr ka;
	struct kite_dbg_qp q;
	unsigned long idx = 0;
	int err;

	while (kite_dbg_next_qp(kib, &idx, &q)) {
		idx++;
		seq_printf(s, "qpn=%u type=%s uctx=%u sq_depth=%u rq_depth=%u driver_state=%s",
			   q.qpn, kite_dbg_qp_type(q.type), q.uctx, q.sq_depth,
			   q.rq_depth, kite_qp_state_name(q.state));
		if (q.kernel)
			seq_printf(s, " sq_pi=%u sq_ci=%u rq_pi=%u rq_ci=%u",
				   q.sq_pi, q.sq_ci, q.rq_pi, q.rq_ci);
		err = kite_cmd_query_qp(&kib->kdev->admin, q.uctx, q.qpn, &ka);
		if (err) {
			seq_printf(s, " query_err=%d\n", err);
			continue;
		}
		seq_printf(s, " state=%s cur_state=%s sq_psn=%u rq_psn=%u dest_qpn=%u path_mtu=%u\n",
			   kite_qp_state_name(ka.state),
			   kite_qp_state_name(ka.cur_state),
			   le32_to_cpu(ka.sq_psn), le32_to_cpu(ka.rq_psn),
			   le32_to_cpu(ka.dest_qpn), ka.path_mtu);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kite_dbg_qps);

struct kite_dbg_cq {
	u32 cqn;
	u32 uctx;
	u32 depth;
	u32 ci;
	bool kernel;
};

static bool kite_dbg_next_cq(struct kite_ib_dev *kib, unsigned long *idx,
			     struct kite_dbg_cq *out)
{
	struct kite_cq *cq;

	xa_lock(&kib->cqs);
	cq = xa_find(&kib->cqs, idx, ULONG_MAX, XA_PRESENT);
	if (cq) {
		out->cqn = cq->cqn;
		out->uctx = cq->uctx;
		out->depth = 1u << cq->log_depth;
		out->kernel = !cq->uctx;
		out->ci = READ_ONCE(cq->ci);
	}
	xa_unlock(&kib->cqs);
	return cq;
}

/*
 * One line per CQ: depth, eqn, flags and pi from the device (QUERY_CQ),
 * uctx, driver_depth and a kernel CQ's consumer index from the driver.
 */
static int kite_dbg_cqs_show(struct seq_file *s, void *unused)
{
	struct kite_ib_dev *kib = s->private;
	struct kite_cq_info info;
	unsigned long idx = 0;
	struct kite_dbg_cq c;
	int err;

	while (kite_dbg_next_cq(kib, &idx, &c)) {
		idx++;
		seq_printf(s, "cqn=%u uctx=%u driver_depth=%u", c.cqn, c.uctx,
			   c.depth);
		if (c.kernel)
			seq_printf(s, " ci=%u", c.ci);
		err = kite_cmd_query_cq(&kib->kdev->admin, c.uctx, c.cqn, &info);
		if (err) {
			seq_printf(s, " query_err=%d\n", err);
			continue;
		}
		seq_printf(s, " depth=%u eqn=%u flags=0x%x pi=%u\n",
			   1u << info.log_depth, info.eqn, info.flags, info.pi);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kite_dbg_cqs);

/**
 * kite_ib_debugfs_add() - create rdma/ in the function's debugfs directory
 * @kib: registered RDMA device
 *
 * Failures are not errors: debugfs is for diagnosis only.
 */
void kite_ib_debugfs_add(struct kite_ib_dev *kib)
{
	struct dentry *dir;

	dir = debugfs_create_dir("rdma", kib->kdev->debugfs);
	kib->debugfs = dir;
	debugfs_create_file("qps", 0400, dir, kib, &kite_dbg_qps_fops);
	debugfs_create_file("cqs", 0400, dir, kib, &kite_dbg_cqs_fops);
}

/**
 * kite_ib_debugfs_del() - remove rdma/, waiting for its readers
 * @kib: RDMA device, still registered
 */
void kite_ib_debugfs_del(struct kite_ib_dev *kib)
{
	debugfs_remove_recursive(kib->debugfs);
	kib->debugfs = NULL;
}
