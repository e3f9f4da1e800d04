// SPDX-License-Identifier: GPL-2.0
/*
 * Kite Ethernet port: ethtool (driver info, ring sizes, link settings and
 * the driver's, the device's and the queue's counters).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/ethtool.h>

#include "kite.h"
#include "kite_eth.h"

struct kite_stat_desc {
	char name[ETH_GSTRING_LEN];
	size_t offset;
};

#define KITE_DRV_STAT(f) { #f, offsetof(struct kite_eth_stats, f) }
#define KITE_HW_STAT(f) { "dev_" #f, offsetof(struct kite_hw_stats, f) }

static const struct kite_stat_desc kite_drv_stats[] = {
	KITE_DRV_STAT(tx_packets),
	KITE_DRV_STAT(tx_bytes),
	KITE_DRV_STAT(tx_errors),
	KITE_DRV_STAT(rx_packets),
	KITE_DRV_STAT(rx_bytes),
	KITE_DRV_STAT(rx_errors),
	KITE_DRV_STAT(rx_alloc_errors),
};

static const struct kite_stat_desc kite_hw_stats_desc[] = {
	KITE_HW_STAT(eth_tx_packets),
	KITE_HW_STAT(eth_tx_bytes),
	KITE_HW_STAT(eth_rx_packets),
	KITE_HW_STAT(eth_rx_bytes),
	KITE_HW_STAT(eth_rx_dropped),
	KITE_HW_STAT(eth_tx_errors),
	KITE_HW_STAT(roce_tx_packets),
	KITE_HW_STAT(roce_rx_packets),
	KITE_HW_STAT(roce_retransmits),
	KITE_HW_STAT(roce_icrc_errors),
	KITE_HW_STAT(eq_events_dropped),
	KITE_HW_STAT(db_rejected),
	KITE_HW_STAT(db_mmio),
	KITE_HW_STAT(db_rec_reads),
	KITE_HW_STAT(num_uctx),
	KITE_HW_STAT(num_pd),
	KITE_HW_STAT(num_cq),
	KITE_HW_STAT(num_qp),
	KITE_HW_STAT(num_mr),
	KITE_HW_STAT(num_eq),
	KITE_HW_STAT(num_gid),
};

/* Per queue: the net_device has one TX and one RX queue, queue 0, each
 * served by one ring (kite_eth.c), whose NAPI counters these are. They
 * equal the totals above; they are named per queue as multi-queue
 * drivers name theirs, "tx_queue_0_packets".
 */
#define KITE_QUEUE_STAT(n, f) { n, offsetof(struct kite_eth_stats, f) }

static const struct kite_stat_desc kite_txq_stats[] = {
	KITE_QUEUE_STAT("packets", tx_packets),
	KITE_QUEUE_STAT("bytes", tx_bytes),
	KITE_QUEUE_STAT("errors", tx_errors),
};

static const struct kite_stat_desc kite_rxq_stats[] = {
	KITE_QUEUE_STAT("packets", rx_packets),
	KITE_QUEUE_STAT("bytes", rx_bytes),
	KITE_QUEUE_STAT("errors", rx_errors),
	KITE_QUEUE_STAT("alloc_errors", rx_alloc_errors),
};

#define KITE_NUM_STATS (ARRAY_SIZE(kite_drv_stats) + \
			ARRAY_SIZE(kite_hw_stats_desc) + 1 + \
			ARRAY_SIZE(kite_txq_stats) + ARRAY_SIZE(kite_rxq_stats))

static void kite_eth_get_drvinfo(struct net_device *nd,
				 struct ethtool_drvinfo *info)
{
	struct kite_eth *eth = netdev_priv(nd);

	strscpy(info->driver, KITE_DRV_NAME, sizeof(info->driver));
	strscpy(info->bus_info, pci_name(eth->kdev->pdev),
		sizeof(info->bus_info));
	kite_fw_version_str(eth->kdev, info->fw_version,
			    sizeof(info->fw_version));
}

static void kite_eth_get_ringparam(struct net_device *nd,
				   struct ethtool_ringparam *ring,
				   struct kernel_ethtool_ringparam *kring,
				   struct netlink_ext_ack *extack)
{
	struct kite_eth *eth = netdev_priv(nd);
	u32 max = 1U << eth->kdev->max_eth_log;

	ring->rx_max_pending = max;
	ring->tx_max_pending = max;
	ring->rx_pending = 1U << eth->log_depth;
	ring->tx_pending = 1U << eth->log_depth;
}

static int kite_eth_get_link_ksettings(struct net_device *nd,
				       struct ethtool_link_ksettings *ks)
{
	ethtool_link_ksettings_zero_link_mode(ks, supported);
	ethtool_link_ksettings_zero_link_mode(ks, advertising);
	ks->base.port = PORT_OTHER;
	ks->base.autoneg = AUTONEG_DISABLE;
	if (netif_carrier_ok(nd)) {
		ks->base.speed = KITE_PORT_RATE_MBPS;
		ks->base.duplex = DUPLEX_FULL;
	} else {
		ks->base.speed = SPEED_UNKNOWN;
		ks->base.duplex = DUPLEX_UNKNOWN;
	}
	return 0;
}

static int kite_eth_get_sset_count(struct net_device *nd, int sset)
{
	return sset == ETH_SS_STATS ? KITE_NUM_STATS : -EOPNOTSUPP;
}

static void kite_eth_get_strings(struct net_device *nd, u32 sset, u8 *data)
{
	size_t i;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < ARRAY_SIZE(kite_drv_stats); i++)
		ethtool_sprintf(&data, "%s", kite_drv_stats[i].name);
	ethtool_sprintf(&data, "tx_dropped");
	for (i = 0; i < ARRAY_SIZE(kite_hw_stats_desc); i++)
		ethtool_sprintf(&data, "%s", kite_hw_stats_desc[i].name);
	for (i = 0; i < ARRAY_SIZE(kite_txq_stats); i++)
		ethtool_sprintf(&data, "tx_queue_0_%s", kite_txq_stats[i].name);
	for (i = 0; i < ARRAY_SIZE(kite_rxq_stats); i++)
		ethtool_sprintf(&data, "rx_queue_0_%s", kite_rxq_stats[i].name);
}

static void kite_eth_get_ethtool_stats(struct net_device *nd,
				       struct ethtool_stats *stats, u64 *data)
{
	struct kite_eth *eth = netdev_priv(nd);
	struct kite_hw_stats hw = {};
	struct kite_eth_stats s;
	size_t i;

	kite_eth_read_stats(eth, &s);
	for (i = 0; i < ARRAY_SIZE(kite_drv_stats); i++)
		*data++ = *(u64 *)((u8 *)&s + kite_drv_stats[i].offset);
	*data++ = atomic64_read(&eth->tx_dropped);
	/* Device counters read as zero when the device cannot answer. */
	kite_cmd_query_stats(&eth->kdev->admin, &hw);
	for (i = 0; i < ARRAY_SIZE(kite_hw_stats_desc); i++)
		*data++ = *(u64 *)((u8 *)&hw + kite_hw_stats_desc[i].offset);
	for (i = 0; i < ARRAY_SIZE(kite_txq_stats); i++)
		*data++ = *(u64 *)((u8 *)&s + kite_txq_stats[i].offset);
	for (i = 0; i < ARRAY_SIZE(kite_rxq_stats); i++)
		*data++ = *(u64 *)((u8 *)&s + kite_rxq_stats[i].offset);
}

const struct ethtool_ops kite_ethtool_ops = {
	.get_drvinfo = kite_eth_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_ringparam = kite_eth_get_ringparam,
	.get_link_ksettings = kite_eth_get_link_ksettings,
	.get_sset_count = kite_eth_get_sset_count,
	.get_strings = kite_eth_get_strings,
	.get_ethtool_stats = kite_eth_get_ethtool_stats,
};
