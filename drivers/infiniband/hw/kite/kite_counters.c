// SPDX-License-Identifier: GPL-2.0
/*
 * Kite counters: the port's, read with QUERY_STATS ("rdma statistic show
 * link kite_N/1", sysfs hw_counters), and the counters ib_core binds QPs
 * to ("rdma statistic qp": auto mode by QP type or process, or bind and
 * unbind by hand).
 *
 * The device has no counter objects; it counts per QP (QUERY_QP_STATS,
 * from CREATE_QP on). A counter's value is, for each QP bound to it, what
 * the QP's device counters grew by since it was bound, plus what QPs added
 * while bound before they were unbound or destroyed: each unbind reads
 * the QP's counters once more and keeps what it added. So a counter never
 * goes backwards, and a QP bound again starts from 0 in its new counter.
 *
 * ib_core adds every counter's values (and those of counters gone) to
 * the port's counter of the same index, as for devices whose port counters
 * leave bound QPs out. Kite's port counters count every QP, so
 * kite_get_hw_stats() takes out what counters hold: the port's values are
 * the device's, not twice the bound QPs' traffic.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <rdma/rdma_counter.h>

#include "kite_ib.h"
#include "kite_verbs.h"

/*
 * Port counters: @priv is the offset of the value in struct kite_hw_stats.
 * The first KITE_IB_QP_NSTATS are those the device also counts per QP, in
 * kite_qp_stat_off[]'s order.
 */
#define KITE_IB_STAT(str, f) \
	{ .name = str, .priv = (void *)offsetof(struct kite_hw_stats, f) }

static const struct rdma_stat_desc kite_port_stats[] = {
	KITE_IB_STAT("tx_roce_packets", roce_tx_packets),
	KITE_IB_STAT("rx_roce_packets", roce_rx_packets),
	KITE_IB_STAT("tx_roce_bytes", roce_tx_bytes),
	KITE_IB_STAT("rx_roce_bytes", roce_rx_bytes),
	KITE_IB_STAT("retransmits", roce_retransmits),
	KITE_IB_STAT("timeouts", roce_timeouts),
	KITE_IB_STAT("naks_sent", roce_naks_sent),
	KITE_IB_STAT("naks_rcvd", roce_naks_rcvd),
	KITE_IB_STAT("rnr_naks_sent", roce_rnr_naks_sent),
	KITE_IB_STAT("rnr_naks_rcvd", roce_rnr_naks_rcvd),
	KITE_IB_STAT("duplicate_requests", roce_dup_requests),
	/* Only port counters from here on. */
	KITE_IB_STAT("icrc_errors", roce_icrc_errors),
	KITE_IB_STAT("rx_roce_dropped", roce_rx_dropped),
	KITE_IB_STAT("wire_dropped", wire_dropped),
	KITE_IB_STAT("eth_tx_packets", eth_tx_packets),
	KITE_IB_STAT("eth_rx_packets", eth_rx_packets),
	KITE_IB_STAT("eth_rx_dropped", eth_rx_dropped),
	KITE_IB_STAT("eth_tx_errors", eth_tx_errors),
	KITE_IB_STAT("eq_events_dropped", eq_events_dropped),
	KITE_IB_STAT("db_rejected", db_rejected),
	KITE_IB_STAT("doorbell_writes", db_mmio),
	KITE_IB_STAT("doorbell_rec_reads", db_rec_reads),
	KITE_IB_STAT("mcast_rx", roce_mcast_rx),
	KITE_IB_STAT("mcast_dropped", roce_mcast_dropped),
	KITE_IB_STAT("num_cq", num_cq),
	KITE_IB_STAT("num_qp", num_qp),
	KITE_IB_STAT("num_mr", num_mr),
};

/* Where struct kite_qp_stats holds each of the first port counters. */
static const size_t kite_qp_stat_off[KITE_IB_QP_NSTATS] = {
	offsetof(struct kite_qp_stats, tx_packets),
	offsetof(struct kite_qp_stats, rx_packets),
	offsetof(struct kite_qp_stats, tx_bytes),
	offsetof(struct kite_qp_stats, rx_bytes),
	offsetof(struct kite_qp_stats, retransmits),
	offsetof(struct kite_qp_stats, timeouts),
	offsetof(struct kite_qp_stats, naks_sent),
	offsetof(struct kite_qp_stats, naks_rcvd),
	offsetof(struct kite_qp_stats, rnr_naks_sent),
	offsetof(struct kite_qp_stats, rnr_naks_rcvd),
	offsetof(struct kite_qp_stats, dup_requests),
};

static_assert(ARRAY_SIZE(kite_port_stats) >= KITE_IB_QP_NSTATS);

/**
 * struct kite_counter - the driver's side of an ib_core counter
 * @qps: the QPs bound to it (struct kite_qp_counter.node)
 * @retired: what QPs added while bound before they were unbound
 *
 * Under the device's cnt_lock.
 */
struct kite_counter {
	struct list_head qps;
	u64 retired[KITE_IB_QP_NSTATS];
};

/**
 * kite_has_qp_stats() - whether the device counts per QP
 * @kib: RDMA device
 *
 * Return: true from ABI 1.1 on, which has QUERY_QP_STATS.
 */
bool kite_has_qp_stats(const struct kite_ib_dev *kib)
{
	return KITE_ABI_VER_MINOR(kib->kdev->caps.abi_version) >=
	       KITE_ABI_MINOR_QP_STATS;
}

struct rdma_hw_stats *kite_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port)
{
	return rdma_alloc_hw_stats_struct(kite_port_stats,
					  ARRAY_SIZE(kite_port_stats),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/* The transports the device counts per QP: the types it creates. */
static bool kite_counter_qp_type_ok(enum ib_qp_type type)
{
	switch (type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return true;
	default:
		return false;
	}
}

/*
 * Read @qp's device counters into its @last. A value below the one read
 * before is not taken: what a counter shows never goes backwards. On an
 * error (a dead device) @last keeps the values read before.
 */
static int kite_counter_read_qp(struct kite_ib_dev *kib, struct kite_qp *qp)
{
	struct kite_qp_stats st;
	const __le64 *val;
	unsigned int i;
	int err;

	lockdep_assert_held(&kib->cnt_lock);
	err = kite_cmd_query_qp_stats(&kib->kdev->admin, qp->uctx, qp->qpn,
				      &st);
	if (err)
		return err;
	for (i = 0; i < KITE_IB_QP_NSTATS; i++) {
		val = (const __le64 *)((const u8 *)&st + kite_qp_stat_off[i]);
		qp->cnt.last[i] = max(qp->cnt.last[i], le64_to_cpu(*val));
	}
	return 0;
}

/* Read every QP bound to @kc and add what each did since its bind to @sum. */
static void kite_counter_sum_bound(struct kite_ib_dev *kib,
				   struct kite_counter *kc, u64 *sum)
{
	struct kite_qp *qp;
	unsigned int i;

	list_for_each_entry(qp, &kc->qps, cnt.node) {
		kite_counter_read_qp(kib, qp);
		for (i = 0; i < KITE_IB_QP_NSTATS; i++)
			sum[i] += qp->cnt.last[i] - qp->cnt.base[i];
	}
}

/*
 * Take @qp off its counter, which keeps what the QP added: read once more
 * now if @read (a dead device's QP keeps what was read last).
 */
static void kite_counter_detach(struct kite_ib_dev *kib, struct kite_qp *qp,
				bool read)
{
	struct kite_counter *kc = qp->cnt.kc;
	unsigned int i;
	u64 d;

	lockdep_assert_held(&kib->cnt_lock);
	if (read)
		kite_counter_read_qp(kib, qp);
	for (i = 0; i < KITE_IB_QP_NSTATS; i++) {
		d = qp->cnt.last[i] - qp->cnt.base[i];
		kc->retired[i] += d;
		kib->cnt_retired[i] += d;
	}
	list_del(&qp->cnt.node);
	qp->cnt.kc = NULL;
	WRITE_ONCE(qp->ibqp.counter, NULL);
}

/*
 * ib_core calls this under the counter's lock, with a new counter (id 0:
 * give it one) or one that has QPs bound, for a QP bound to none. The QP
 * starts at 0 in the counter: its device counters now are its base.
 */
static int kite_counter_bind_qp(struct rdma_counter *counter,
				struct ib_qp *ibqp)
{
	struct kite_ib_dev *kib = to_kib(ibqp->device);
	struct kite_qp *qp = to_kqp(ibqp);
	struct kite_counter *kc, *new = NULL;
	u32 id = 0;
	int err;

	if (counter->device != ibqp->device ||
	    counter->port != KITE_PORT_NUM ||
	    (rdma_is_port_valid(ibqp->device, ibqp->port) &&
	     ibqp->port != counter->port))
		return -EINVAL;
	if (!kite_has_qp_stats(kib) ||
	    !kite_counter_qp_type_ok(ibqp->qp_type))
		return -EOPNOTSUPP;

	mutex_lock(&kib->cnt_lock);
	if (ibqp->counter || qp->cnt.kc) {
		err = -EINVAL;
		goto out_unlock;
	}
	if (counter->id) {
		kc = xa_load(&kib->counters, counter->id);
		if (!kc) {
			err = -ENOENT;
			goto out_unlock;
		}
	} else {
		new = kzalloc(sizeof(*new), GFP_KERNEL);
		if (!new) {
			err = -ENOMEM;
			goto out_unlock;
		}
		INIT_LIST_HEAD(&new->qps);
		err = xa_alloc_cyclic(&kib->counters, &id, new, xa_limit_32b,
				      &kib->cnt_next, GFP_KERNEL);
		if (err < 0)
			goto out_free;
		kc = new;
	}

	memset(qp->cnt.last, 0, sizeof(qp->cnt.last));
	err = kite_counter_read_qp(kib, qp);
	if (err)
		goto out_erase;
	memcpy(qp->cnt.base, qp->cnt.last, sizeof(qp->cnt.base));
	qp->cnt.kc = kc;
	list_add_tail(&qp->cnt.node, &kc->qps);
	if (new)
		counter->id = id;
	WRITE_ONCE(ibqp->counter, counter);
	mutex_unlock(&kib->cnt_lock);
	return 0;

out_erase:
	if (new)
		xa_erase(&kib->counters, id);
out_free:
	kfree(new);
out_unlock:
	mutex_unlock(&kib->cnt_lock);
	return err;
}

/* Also when the QP is destroyed (before destroy_qp): never fails then. */
static int kite_counter_unbind_qp(struct ib_qp *ibqp)
{
	struct kite_ib_dev *kib = to_kib(ibqp->device);
	struct kite_qp *qp = to_kqp(ibqp);
	int err = 0;

	mutex_lock(&kib->cnt_lock);
	if (qp->cnt.kc)
		kite_counter_detach(kib, qp, true);
	else
		err = -EINVAL;
	mutex_unlock(&kib->cnt_lock);
	return err;
}

/* After ib_core took the last QP off the counter and kept its values. */
static int kite_counter_dealloc(struct rdma_counter *counter)
{
	struct kite_ib_dev *kib = to_kib(counter->device);
	struct kite_qp *qp, *tmp;
	struct kite_counter *kc;

	if (!counter->id)
		return 0;
	mutex_lock(&kib->cnt_lock);
	kc = xa_erase(&kib->counters, counter->id);
	if (kc) {
		WARN_ON_ONCE(!list_empty(&kc->qps));
		list_for_each_entry_safe(qp, tmp, &kc->qps, cnt.node)
			kite_counter_detach(kib, qp, true);
		kfree(kc);
	}
	mutex_unlock(&kib->cnt_lock);
	return 0;
}

/*
 * The port's counters, as ib_core indexes a counter's; only the ones the
 * device counts per QP are shown, the others stay 0 and disabled.
 */
static struct rdma_hw_stats *
kite_counter_alloc_stats(struct rdma_counter *counter)
{
	struct rdma_hw_stats *stats;
	unsigned int i;

	if (counter->port != KITE_PORT_NUM)
		return NULL;
	stats = kite_alloc_hw_port_stats(counter->device, counter->port);
	if (!stats)
		return NULL;
	for (i = KITE_IB_QP_NSTATS; i < ARRAY_SIZE(kite_port_stats); i++)
		set_bit(i, stats->is_disabled);
	return stats;
}

static int kite_counter_update_stats(struct rdma_counter *counter)
{
	struct kite_ib_dev *kib = to_kib(counter->device);
	u64 sum[KITE_IB_QP_NSTATS];
	struct kite_counter *kc;
	unsigned int i;
	int err = 0;

	mutex_lock(&kib->cnt_lock);
	kc = counter->id ? xa_load(&kib->counters, counter->id) : NULL;
	if (kc) {
		memcpy(sum, kc->retired, sizeof(sum));
		kite_counter_sum_bound(kib, kc, sum);
		for (i = 0; i < KITE_IB_QP_NSTATS; i++)
			counter->stats->value[i] = sum[i];
	} else {
		err = -EINVAL;
	}
	mutex_unlock(&kib->cnt_lock);
	return err;
}

/*
 * What ib_core adds to the port's counters: every counter's values and
 * those of counters gone, which is what bound QPs added while bound.
 */
static void kite_counter_port_held(struct kite_ib_dev *kib, u64 *held)
{
	struct kite_counter *kc;
	unsigned long id;

	mutex_lock(&kib->cnt_lock);
	memcpy(held, kib->cnt_retired, sizeof(kib->cnt_retired));
	xa_for_each(&kib->counters, id, kc)
		kite_counter_sum_bound(kib, kc, held);
	mutex_unlock(&kib->cnt_lock);
}

int kite_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index)
{
	struct kite_ib_dev *kib = to_kib(ibdev);
	u64 held[KITE_IB_QP_NSTATS];
	struct kite_hw_stats hw;
	int err, i;

	err = kite_cmd_query_stats(&kib->kdev->admin, &hw);
	if (err)
		return err;
	for (i = 0; i < ARRAY_SIZE(kite_port_stats); i++)
		stats->value[i] = *(u64 *)((u8 *)&hw +
					   (uintptr_t)kite_port_stats[i].priv);
	if (!kite_has_qp_stats(kib))
		return ARRAY_SIZE(kite_port_stats);
	/*
	 * Read after the port's counters, so that what bound QPs did since
	 * is not counted twice when ib_core reads the counters again; a
	 * value that traffic in between would make negative is 0.
	 */
	kite_counter_port_held(kib, held);
	for (i = 0; i < KITE_IB_QP_NSTATS; i++)
		stats->value[i] -= min(stats->value[i], held[i]);
	return ARRAY_SIZE(kite_port_stats);
}

/**
 * kite_counter_qp_destroyed() - forget a destroyed QP's counter binding
 * @kib: RDMA device
 * @qp: QP the device no longer holds
 *
 * ib_core unbinds a QP before it destroys it; a QP still bound here keeps
 * what was read of it last in its counter.
 */
void kite_counter_qp_destroyed(struct kite_ib_dev *kib, struct kite_qp *qp)
{
	mutex_lock(&kib->cnt_lock);
	if (WARN_ON_ONCE(qp->cnt.kc))
		kite_counter_detach(kib, qp, false);
	mutex_unlock(&kib->cnt_lock);
}

/* Offered only when the device counts per QP (kite_has_qp_stats()). */
const struct ib_device_ops kite_counter_ops = {
	.counter_alloc_stats = kite_counter_alloc_stats,
	.counter_bind_qp = kite_counter_bind_qp,
	.counter_dealloc = kite_counter_dealloc,
	.counter_unbind_qp = kite_counter_unbind_qp,
	.counter_update_stats = kite_counter_update_stats,
};
