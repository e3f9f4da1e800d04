/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kite RDMA driver (kite_ib.ko): the ib_device of one Kite function, over
 * the auxiliary device "kite.rdma.N" of the core driver (kite.ko), and the
 * interfaces between its files.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_IB_H
#define KITE_IB_H

#include <linux/atomic.h>
#include <linux/kite/driver.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

/*
 * Address handles live in driver memory only (UD WQEs carry the whole
 * address vector); this bounds how many a device lets consumers hold.
 */
#define KITE_MAX_AH			BIT(20)

/*
 * The port counters the device also counts per QP (QUERY_QP_STATS): the
 * first entries of the port's, which "rdma statistic qp" counters show.
 */
#define KITE_IB_QP_NSTATS		11

/**
 * struct kite_ib_dev - the ib_device of one Kite function
 * @ibdev: RDMA device (first: allocated by ib_alloc_device)
 * @kdev: the core's device; outlives the binding of the auxiliary device
 * @adev: the auxiliary device this driver is bound to
 * @events: this driver as the core's event client
 * @port_lock: orders port events with registration and unregistration
 * @port_events: the ib_device is registered: port events are dispatched
 *		 (under @port_lock)
 * @mr_variant: variant byte source of REG_MR (advances per registration)
 * @num_ah: address handles that exist (at most KITE_MAX_AH)
 * @cqs: CQs by number, for completion and CQ error events
 * @qps: QPs by number, for poll_cq and QP events
 * @srqs: SRQs by number, for SRQ events
 * @debugfs: rdma/ in the function's debugfs directory
 * @cnt_lock: serializes the counters QPs are bound to ("rdma statistic
 *	      qp"): @counters, @cnt_next, @cnt_retired and the bound QPs'
 *	      struct kite_qp_counter
 * @counters: struct kite_counter by counter id
 * @cnt_next: the next counter id to try (ids are not reused at once)
 * @cnt_retired: what QPs added to counters while bound before they were
 *		 unbound or destroyed, whether or not the counter still
 *		 exists (ib_core keeps the values of counters gone)
 *
 * Event callbacks look objects up in @cqs and @qps without a lock (xa_load
 * is RCU-safe) from hard interrupt context; destroy erases the entry and
 * then waits for a callback that may still use it (kite_sync_comp_eq(),
 * kite_sync_async_events()).
 */
struct kite_ib_dev {
	struct ib_device ibdev;
	struct kite_dev *kdev;
	struct auxiliary_device *adev;
	struct kite_event_client events;
	spinlock_t port_lock; /* see above */
	bool port_events;
	atomic_t mr_variant;
	atomic_t num_ah;
	struct xarray cqs;
	struct xarray qps;
	struct xarray srqs;
	struct dentry *debugfs;
	struct mutex cnt_lock; /* see above */
	struct xarray counters;
	u32 cnt_next;
	u64 cnt_retired[KITE_IB_QP_NSTATS];
};

static inline struct kite_ib_dev *to_kib(struct ib_device *ibdev)
{
	return container_of(ibdev, struct kite_ib_dev, ibdev);
}

/* The device that DMA mappings and log messages are made for. */
static inline struct device *kite_ib_dmadev(struct kite_ib_dev *kib)
{
	return &kib->kdev->pdev->dev;
}

/* kite_ibdev.c */
int kite_ib_register(struct kite_ib_dev *kib);
void kite_ib_unregister(struct kite_ib_dev *kib);
void kite_ib_port_event(struct kite_ib_dev *kib, enum ib_event_type type);

/* kite_ib_debugfs.c */
const char *kite_qp_state_name(unsigned int state);
void kite_ib_debugfs_add(struct kite_ib_dev *kib);
void kite_ib_debugfs_del(struct kite_ib_dev *kib);

#if IS_ENABLED(CONFIG_INFINIBAND_KITE_KUNIT_TEST)
/* kite_ib_main.c */
struct kite_ib_dev *kite_ib_dev_get_any(void);
void kite_ib_dev_put(struct kite_ib_dev *kib);
#endif

#endif /* KITE_IB_H */
