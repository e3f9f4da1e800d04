/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kite Ethernet port: the net_device's private data, shared by the data
 * path (kite_eth.c) and ethtool (kite_ethtool.c).
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_ETH_H
#define KITE_ETH_H

#include <linux/netdevice.h>
#include <linux/u64_stats_sync.h>

#include "kite.h"

#define KITE_ETH_LOG_DEPTH	8	/* wanted; capped by the device */

struct kite_eth_buf {
	struct sk_buff *skb;
	dma_addr_t dma;
	u32 len;
};

/**
 * struct kite_eth_ring - one Ethernet descriptor ring
 * @desc: descriptors, 2^@log_depth of them
 * @dma: DMA address of @desc
 * @bufs: the buffer behind each descriptor
 * @pi: free-running producer index (driver)
 * @ci: free-running consumer index (driver)
 * @log_depth: log2 of the number of descriptors
 */
struct kite_eth_ring {
	struct kite_eth_desc *desc;
	dma_addr_t dma;
	struct kite_eth_buf *bufs;
	u32 pi;
	u32 ci;
	u8 log_depth;
};

struct kite_eth_stats {
	u64 tx_packets;
	u64 tx_bytes;
	u64 tx_errors;
	u64 rx_packets;
	u64 rx_bytes;
	u64 rx_errors;
	u64 rx_alloc_errors;
};

/**
 * struct kite_eth - net_device private data
 * @kdev: device
 * @netdev: the net_device
 * @napi: one NAPI context for TX completion and RX
 * @tx: transmit ring
 * @rx: receive ring
 * @rx_buf_len: size of each receive buffer
 * @log_depth: ring size used at the next open
 * @stats: counters updated by NAPI, under @syncp
 * @syncp: protects @stats
 * @tx_dropped: frames dropped in ndo_start_xmit
 * @ctrl_lock: serialises writes of KITE_REG_ETH_CTRL
 * @ring_en: ring enable bits last written to KITE_REG_ETH_CTRL
 * @up: rings and interrupt are set up (kite_eth_open() succeeded)
 * @irq_name: interrupt name
 */
struct kite_eth {
	struct kite_dev *kdev;
	struct net_device *netdev;
	struct napi_struct napi;
	struct kite_eth_ring tx;
	struct kite_eth_ring rx;
	u32 rx_buf_len;
	u8 log_depth;
	struct kite_eth_stats stats;
	struct u64_stats_sync syncp;
	atomic64_t tx_dropped;
	spinlock_t ctrl_lock; /* see above */
	u32 ring_en;
	bool up;
	char irq_name[32];
};

void kite_eth_read_stats(struct kite_eth *eth, struct kite_eth_stats *s);

#endif /* KITE_ETH_H */
