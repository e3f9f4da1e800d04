/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kite RoCEv2 NIC driver: device structure and internal interfaces.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_H
#define KITE_H

#include <linux/atomic.h>
#include <linux/interrupt.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "kite_admin.h"

#define KITE_DRV_NAME			"kite"
#define KITE_ENABLE_TIMEOUT_MS		1000
#define KITE_RESET_TIMEOUT_MS		1000
#define KITE_EQ_LOG_DEPTH		8	/* wanted; capped by the device */
#define KITE_AEQ_NUM			0	/* async EQ number */
/*
 * Address handles live in driver memory only (UD WQEs carry the whole
 * address vector); this bounds how many a device lets consumers hold.
 */
#define KITE_MAX_AH			BIT(20)

struct kite_dev;

/**
 * struct kite_eq - an event queue ring
 * @kdev: owning device
 * @ring: entries, 2^@log_depth of them
 * @dma: DMA address of @ring
 * @log_depth: log2 of the number of entries
 * @ci: free-running consumer index
 * @eqn: EQ number (0: async EQ)
 * @vector: MSI-X vector index
 * @irq_requested: the vector's handler is installed
 * @created: the device knows the EQ (CREATE_EQ succeeded)
 * @name: interrupt name
 */
struct kite_eq {
	struct kite_dev *kdev;
	struct kite_eqe *ring;
	dma_addr_t dma;
	u8 log_depth;
	u32 ci;
	u32 eqn;
	u16 vector;
	bool irq_requested;
	bool created;
	char name[32];
};

/**
 * struct kite_dev - one Kite PCI function
 * @ibdev: RDMA device (first: allocated by ib_alloc_device)
 * @pdev: PCI device
 * @regs: BAR0 registers
 * @db: kernel doorbell page (page 0 of BAR2)
 * @admin: admin queue
 * @caps: device capabilities from QUERY_DEVICE
 * @max_aq_log: CAP_MAX_AQ_LOG_DEPTH
 * @max_eq_log: CAP_MAX_EQ_LOG_DEPTH
 * @max_eth_log: CAP_MAX_ETH_LOG_DEPTH
 * @num_vectors: MSI-X vectors allocated
 * @aeq: async event queue (EQ 0)
 * @comp_eqs: completion EQs
 * @num_comp_eqs: number of entries of @comp_eqs in use
 * @netdev: Ethernet port, NULL when not registered
 * @event_lock: protects @netdev and @ib_active against the event handler
 * @ib_active: the ib_device is registered; events may be dispatched
 * @aeq_ready: @aeq is set up and may be processed
 * @mr_variant: variant byte source of REG_MR (advances per registration)
 * @num_ah: address handles that exist (at most KITE_MAX_AH)
 * @cqs: CQs by number, for completion and CQ error events
 * @qps: QPs by number, for poll_cq and QP events
 *
 * Event handlers look objects up in @cqs and @qps without a lock (xa_load
 * is RCU-safe) from hard interrupt context; destroy erases the entry and
 * then waits with synchronize_irq() for a handler that may still use it.
 */
struct kite_dev {
	struct ib_device ibdev;
	struct pci_dev *pdev;
	void __iomem *regs;
	void __iomem *db;
	struct kite_admin admin;
	struct kite_caps caps;
	u8 max_aq_log;
	u8 max_eq_log;
	u8 max_eth_log;
	int num_vectors;
	struct kite_eq aeq;
	struct kite_eq comp_eqs[KITE_MSIX_MAX_COMP];
	int num_comp_eqs;
	struct net_device *netdev;
	spinlock_t event_lock; /* see above */
	bool ib_active;
	bool aeq_ready;
	atomic_t mr_variant;
	atomic_t num_ah;
	struct xarray cqs;
	struct xarray qps;
};

static inline struct kite_dev *to_kdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct kite_dev, ibdev);
}

static inline u32 kite_rd32(struct kite_dev *kdev, u32 reg)
{
	return readl(kdev->regs + reg);
}

static inline void kite_wr32(struct kite_dev *kdev, u32 reg, u32 val)
{
	writel(val, kdev->regs + reg);
}

/**
 * kite_db_write() - ring a doorbell of the kernel doorbell page
 * @kdev: device
 * @reg: KITE_DB_SQ, KITE_DB_RQ, KITE_DB_CQ or KITE_DB_EQ
 * @num: QP, CQ or EQ number
 * @flags: KITE_DB_*_ARM* flags or 0
 * @index: free-running producer (SQ, RQ) or consumer (CQ, EQ) index
 *
 * One 64-bit write the device takes whole. writeq() orders every earlier
 * store to memory (WQEs, ring contents) before the doorbell reaches the
 * device; callers that publish WQEs also issue wmb() first, as the
 * data-path contract in hardware.rst asks.
 */
static inline void kite_db_write(struct kite_dev *kdev, u32 reg, u32 num,
				 u8 flags, u32 index)
{
	writeq(kite_db_make(num, flags, index), kdev->db + reg);
}

static inline bool kite_link_up(struct kite_dev *kdev)
{
	return kite_rd32(kdev, KITE_REG_DEV_STATUS) & KITE_STATUS_LINK_UP;
}

/* kite_eq.c */
int kite_eq_alloc_ring(struct kite_dev *kdev, struct kite_eq *eq,
		       u8 log_depth);
void kite_eq_free_ring(struct kite_dev *kdev, struct kite_eq *eq);
struct kite_eqe *kite_eq_next(struct kite_eq *eq);
void kite_eq_arm(struct kite_dev *kdev, struct kite_eq *eq);
void kite_eq_update_ci(struct kite_dev *kdev, struct kite_eq *eq);
int kite_aeq_setup(struct kite_dev *kdev);
void kite_aeq_process(struct kite_dev *kdev);
int kite_comp_eqs_create(struct kite_dev *kdev);
void kite_comp_eqs_destroy(struct kite_dev *kdev);
void kite_comp_eqs_free(struct kite_dev *kdev);

/* kite_main.c */
void kite_async_event(struct kite_dev *kdev, const struct kite_eqe *eqe);
void kite_fw_version_str(const struct kite_dev *kdev, char *buf, size_t len);
#if IS_ENABLED(CONFIG_INFINIBAND_KITE_KUNIT_TEST)
struct kite_dev *kite_dev_get_any(void);
void kite_dev_put(struct kite_dev *kdev);
#endif

/* kite_eth.c */
int kite_eth_probe(struct kite_dev *kdev);
void kite_eth_remove(struct kite_dev *kdev);
void kite_eth_link_change(struct kite_dev *kdev, bool up);
u32 kite_eth_rx_buf_len(u32 mtu);

/* kite_ib.c */
int kite_ib_register(struct kite_dev *kdev);
void kite_ib_unregister(struct kite_dev *kdev);
void kite_ib_port_event(struct kite_dev *kdev, enum ib_event_type type);

#endif /* KITE_H */
