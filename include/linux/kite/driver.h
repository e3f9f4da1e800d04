/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kite core driver (kite.ko): what it shares with the drivers of its
 * auxiliary devices (kite_ib.ko binds "kite.rdma"). The core owns the PCI
 * function, its registers, MSI-X vectors, admin queue (<linux/kite/cmd.h>),
 * event queues and net_device; an auxiliary driver uses them through this
 * header and the symbols exported in the KITE namespace, and receives the
 * device's events through a registered struct kite_event_client.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef _LINUX_KITE_DRIVER_H
#define _LINUX_KITE_DRIVER_H

#include <linux/auxiliary_bus.h>
#include <linux/io.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include <linux/kite/cmd.h>

/* Module name, also the prefix of auxiliary device names ("kite.rdma.0"). */
#define KITE_DRV_NAME			"kite"
/* The RDMA function of a Kite device: auxiliary device KITE_DRV_NAME ".rdma". */
#define KITE_ADEV_NAME_RDMA		"rdma"
#define KITE_EQ_NAME_LEN		32

struct kite_dev;
struct devlink_health_reporter;

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
	char name[KITE_EQ_NAME_LEN];
};

struct kite_event_client;

/**
 * struct kite_event_ops - device events the core hands to its client
 * @completion: a completion EQ reported CQ @cqn (KITE_EVT_COMPLETION); runs
 *		in that EQ's interrupt handler
 * @async: an object event of the async EQ: KITE_EVT_CQ_ERR (@data: cqn) or
 *	   a QP event, KITE_EVT_QP_* or KITE_EVT_COMM_EST (@data: qpn); runs
 *	   in the admin interrupt handler
 * @port: the port's link went up or down; runs in the admin interrupt
 *	  handler
 * @fatal: the device reported a fatal error: the admin queue is dead
 *	   already (every command fails with -EIO) and the carrier is off;
 *	   runs in the admin interrupt handler
 *
 * Every callback runs in hard interrupt context, inside an RCU read-side
 * section, and must not sleep. Link events that came before the client
 * registered are not replayed: a client that needs the link state reads
 * kite_link_up() once it is registered.
 */
struct kite_event_ops {
	void (*completion)(struct kite_event_client *client, u32 cqn);
	void (*async)(struct kite_event_client *client, u8 type, u32 data);
	void (*port)(struct kite_event_client *client, bool up);
	void (*fatal)(struct kite_event_client *client);
};

/**
 * struct kite_event_client - the receiver of a device's events
 * @ops: its callbacks
 *
 * Embedded in the client's own device structure (container_of() in the
 * callbacks). A device has at most one client.
 */
struct kite_event_client {
	const struct kite_event_ops *ops;
};

/**
 * struct kite_dev - one Kite PCI function, owned by the core driver
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
 * @event_lock: protects @netdev against the event handlers, serializes
 *		changes of @client
 * @client: receiver of completions and CQ, QP, link and fatal events (RCU)
 * @aeq_ready: @aeq is set up and may be processed
 * @rdma_adev: the auxiliary device of the RDMA function, NULL when absent
 * @state_lock: serializes recovery (@recover_work, devlink's recover)
 *		with remove and the devlink callbacks
 * @started: the function is up (kite_dev_start() done, not yet stopped)
 * @removing: remove has begun: no recovery starts any more
 * @wedged: the device did not confirm a reset: it is never started again
 * @recoveries: number of recoveries from a fatal error that succeeded
 * @recovered_at: jiffies of the last of them
 * @last_fatal_code: KITE_FATAL_* code of the last fatal event
 * @recover_work: reports a fatal error to @fw_fatal, queued by the admin
 *		  interrupt
 * @fw_fatal: devlink health reporter of fatal errors
 * @debugfs: the function's debugfs directory (kite/<PCI name>/), where the
 *	     auxiliary drivers add theirs; NULL or an error pointer without
 *	     debugfs, which debugfs_create_*() accept
 */
struct kite_dev {
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
	struct kite_event_client __rcu *client;
	bool aeq_ready;
	struct kite_adev *rdma_adev;
	struct mutex state_lock; /* see above */
	bool started;
	bool removing;
	bool wedged;
	unsigned int recoveries;
	unsigned long recovered_at;
	u32 last_fatal_code;
	struct work_struct recover_work;
	struct devlink_health_reporter *fw_fatal;
	struct dentry *debugfs;
};

/**
 * struct kite_adev - an auxiliary device of a Kite function
 * @adev: the auxiliary device (name KITE_DRV_NAME "." KITE_ADEV_NAME_*)
 * @kdev: the function it belongs to; valid while the auxiliary device is
 *	  bound, since the core deletes its auxiliary devices first on remove
 */
struct kite_adev {
	struct auxiliary_device adev;
	struct kite_dev *kdev;
};

static inline struct kite_dev *kite_adev_to_kdev(struct auxiliary_device *adev)
{
	return container_of(adev, struct kite_adev, adev)->kdev;
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

/* kite_events.c */
int kite_register_event_client(struct kite_dev *kdev,
			       struct kite_event_client *client);
void kite_unregister_event_client(struct kite_dev *kdev,
				  struct kite_event_client *client);
void kite_sync_comp_eq(struct kite_dev *kdev, const struct kite_eq *eq);
void kite_sync_async_events(struct kite_dev *kdev);

/* kite_main.c */
void kite_fw_version_str(const struct kite_dev *kdev, char *buf, size_t len);

#endif /* _LINUX_KITE_DRIVER_H */
