// SPDX-License-Identifier: GPL-2.0
/*
 * Kite Ethernet port: the net_device, its TX/RX rings and NAPI.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/if_vlan.h>
#include <linux/u64_stats_sync.h>
#include <linux/kite/compat.h>

#include "kite.h"
#include "kite_eth.h"

/**
 * kite_eth_rx_buf_len() - receive buffer size for an MTU
 * @mtu: Ethernet MTU (L3 payload bytes)
 *
 * Return: bytes for the largest frame the MTU allows, with one VLAN tag.
 */
u32 kite_eth_rx_buf_len(u32 mtu)
{
	return mtu + KITE_ETH_HLEN + VLAN_HLEN;
}

static u32 kite_ring_depth(const struct kite_eth_ring *ring)
{
	return 1U << ring->log_depth;
}

static struct device *kite_eth_dmadev(struct kite_eth *eth)
{
	return &eth->kdev->pdev->dev;
}

static void kite_eth_irq_arm(struct kite_eth *eth)
{
	kite_wr32(eth->kdev, KITE_REG_ETH_IRQ_ARM, KITE_ETH_IRQ_ARM_FIRE);
}

static irqreturn_t kite_eth_irq(int irq, void *data)
{
	struct kite_eth *eth = data;

	napi_schedule_irqoff(&eth->napi);
	return IRQ_HANDLED;
}

/* Earlier frames of this batch (xmit_more) may be waiting for the doorbell:
 * a frame that ends the batch rings it even when it is itself dropped.
 */
static void kite_eth_tx_kick(struct kite_eth *eth)
{
	kite_wr32(eth->kdev, KITE_REG_ETH_TX_DB, eth->tx.pi);
}

static netdev_tx_t kite_eth_xmit_drop(struct kite_eth *eth,
				      struct sk_buff *skb)
{
	if (skb)
		dev_kfree_skb_any(skb);
	atomic64_inc(&eth->tx_dropped);
	if (!netdev_xmit_more())
		kite_eth_tx_kick(eth);
	return NETDEV_TX_OK;
}

static netdev_tx_t kite_eth_xmit(struct sk_buff *skb, struct net_device *nd)
{
	struct kite_eth *eth = netdev_priv(nd);
	struct kite_eth_ring *ring = &eth->tx;
	struct kite_eth_desc *desc;
	struct kite_eth_buf *buf;
	u32 depth = kite_ring_depth(ring);
	dma_addr_t dma;
	u32 slot;

	/* skb_put_padto() frees the skb when it fails. */
	if (skb_put_padto(skb, ETH_ZLEN))
		return kite_eth_xmit_drop(eth, NULL);
	if (skb->len > KITE_ETH_MAX_FRAME)
		return kite_eth_xmit_drop(eth, skb);
	/* Pairs with the release in kite_eth_tx_clean(): slot is free. */
	if (unlikely(kite_ring_used(ring->pi, smp_load_acquire(&ring->ci)) >=
		     depth)) {
		/* The queue is stopped before the ring fills: a driver bug. */
		netdev_err_once(nd, "TX ring full while the queue is awake\n");
		netif_stop_queue(nd);
		kite_eth_tx_kick(eth);
		return NETDEV_TX_BUSY;
	}

	dma = dma_map_single(kite_eth_dmadev(eth), skb->data, skb->len,
			     DMA_TO_DEVICE);
	if (dma_mapping_error(kite_eth_dmadev(eth), dma))
		return kite_eth_xmit_drop(eth, skb);

	slot = kite_ring_slot(ring->pi, ring->log_depth);
	buf = &ring->bufs[slot];
	buf->skb = skb;
	buf->dma = dma;
	buf->len = skb->len;
	desc = &ring->desc[slot];
	desc->addr = cpu_to_le64(dma);
	desc->len = cpu_to_le16(skb->len);
	desc->status = 0;
	skb_tx_timestamp(skb);
	/* Publish the descriptor before the new producer index. */
	smp_store_release(&ring->pi, ring->pi + 1);

	if (kite_ring_used(ring->pi, READ_ONCE(ring->ci)) >= depth) {
		netif_stop_queue(nd);
		/* Pairs with the barrier in kite_eth_tx_clean(). */
		smp_mb();
		if (kite_ring_used(ring->pi, READ_ONCE(ring->ci)) < depth)
			netif_start_queue(nd);
	}
	if (!netdev_xmit_more() || netif_queue_stopped(nd))
		kite_eth_tx_kick(eth);
	return NETDEV_TX_OK;
}

static void kite_eth_tx_clean(struct kite_eth *eth, int budget)
{
	struct kite_eth_ring *ring = &eth->tx;
	/* Pairs with the release in kite_eth_xmit(): descriptors first. */
	u32 pi = smp_load_acquire(&ring->pi);
	u64 packets = 0, bytes = 0, errors = 0;
	struct kite_eth_desc *desc;
	struct kite_eth_buf *buf;
	u32 ci = ring->ci;
	u8 status;

	while (ci != pi) {
		desc = &ring->desc[kite_ring_slot(ci, ring->log_depth)];
		status = READ_ONCE(desc->status);
		if (!(status & KITE_ETH_DESC_DONE))
			break;
		dma_rmb();
		buf = &ring->bufs[kite_ring_slot(ci, ring->log_depth)];
		dma_unmap_single(kite_eth_dmadev(eth), buf->dma, buf->len,
				 DMA_TO_DEVICE);
		if (status & KITE_ETH_DESC_ERR) {
			errors++;
		} else {
			packets++;
			bytes += buf->len;
		}
		napi_consume_skb(buf->skb, budget);
		buf->skb = NULL;
		desc->status = 0;
		ci++;
	}
	if (ci == ring->ci)
		return;

	u64_stats_update_begin(&eth->syncp);
	eth->stats.tx_packets += packets;
	eth->stats.tx_bytes += bytes;
	eth->stats.tx_errors += errors;
	u64_stats_update_end(&eth->syncp);

	/* Descriptors are cleared before the slots are handed back. */
	smp_store_release(&ring->ci, ci);
	/* Pairs with the barrier in kite_eth_xmit(). */
	smp_mb();
	if (netif_queue_stopped(eth->netdev) &&
	    kite_ring_used(pi, ci) < kite_ring_depth(ring))
		netif_wake_queue(eth->netdev);
}

static int kite_eth_rx_post(struct kite_eth *eth, u32 slot)
{
	struct kite_eth_ring *ring = &eth->rx;
	struct kite_eth_buf *buf = &ring->bufs[slot];
	struct kite_eth_desc *desc = &ring->desc[slot];
	struct sk_buff *skb;
	dma_addr_t dma;

	skb = netdev_alloc_skb_ip_align(eth->netdev, eth->rx_buf_len);
	if (!skb)
		return -ENOMEM;
	dma = dma_map_single(kite_eth_dmadev(eth), skb->data, eth->rx_buf_len,
			     DMA_FROM_DEVICE);
	if (dma_mapping_error(kite_eth_dmadev(eth), dma)) {
		dev_kfree_skb_any(skb);
		return -ENOMEM;
	}
	buf->skb = skb;
	buf->dma = dma;
	buf->len = eth->rx_buf_len;
	desc->addr = cpu_to_le64(dma);
	desc->len = cpu_to_le16(eth->rx_buf_len);
	desc->status = 0;
	return 0;
}

/* Post buffers in every free RX slot. Return: false when the ring is left
 * with no buffer at all (allocations failed): the device can then receive
 * nothing and raises no interrupt, so the caller must retry by itself.
 */
static bool kite_eth_rx_refill(struct kite_eth *eth)
{
	struct kite_eth_ring *ring = &eth->rx;
	u32 old = ring->pi;

	while (kite_ring_used(ring->pi, ring->ci) < kite_ring_depth(ring)) {
		if (kite_eth_rx_post(eth, kite_ring_slot(ring->pi,
							 ring->log_depth))) {
			u64_stats_update_begin(&eth->syncp);
			eth->stats.rx_alloc_errors++;
			u64_stats_update_end(&eth->syncp);
			break;
		}
		ring->pi++;
	}
	if (ring->pi != old)
		kite_wr32(eth->kdev, KITE_REG_ETH_RX_DB, ring->pi);
	return ring->pi != ring->ci;
}

static int kite_eth_rx_poll(struct kite_eth *eth, int budget)
{
	struct kite_eth_ring *ring = &eth->rx;
	u64 packets = 0, bytes = 0, errors = 0;
	struct kite_eth_desc *desc;
	struct kite_eth_buf *buf;
	struct sk_buff *skb;
	int done = 0;
	u8 status;
	u32 len;

	while (done < budget && ring->ci != ring->pi) {
		u32 slot = kite_ring_slot(ring->ci, ring->log_depth);

		desc = &ring->desc[slot];
		status = READ_ONCE(desc->status);
		if (!(status & KITE_ETH_DESC_DONE))
			break;
		dma_rmb();
		buf = &ring->bufs[slot];
		dma_unmap_single(kite_eth_dmadev(eth), buf->dma, buf->len,
				 DMA_FROM_DEVICE);
		skb = buf->skb;
		buf->skb = NULL;
		ring->ci++;
		done++;

		len = le16_to_cpu(desc->len);
		if ((status & KITE_ETH_DESC_ERR) || len < KITE_ETH_HLEN ||
		    len > buf->len) {
			errors++;
			napi_consume_skb(skb, budget);
			continue;
		}
		skb_put(skb, len);
		skb->protocol = eth_type_trans(skb, eth->netdev);
		packets++;
		bytes += len;
		napi_gro_receive(&eth->napi, skb);
	}

	u64_stats_update_begin(&eth->syncp);
	eth->stats.rx_packets += packets;
	eth->stats.rx_bytes += bytes;
	eth->stats.rx_errors += errors;
	u64_stats_update_end(&eth->syncp);

	/* An empty ring stays empty: keep polling until buffers are posted. */
	if (!kite_eth_rx_refill(eth))
		return budget;
	return done;
}

static int kite_eth_poll(struct napi_struct *napi, int budget)
{
	struct kite_eth *eth = container_of(napi, struct kite_eth, napi);
	int done;

	kite_eth_tx_clean(eth, budget);
	done = kite_eth_rx_poll(eth, budget);
	/* done == budget also when the RX ring has no buffer (allocation
	 * failure): NAPI polls again and retries the refill.
	 * Arming fires at once if a completion came in meanwhile.
	 */
	if (done < budget && napi_complete_done(napi, done))
		kite_eth_irq_arm(eth);
	return done;
}

static int kite_eth_ring_alloc(struct kite_eth *eth, struct kite_eth_ring *ring)
{
	u32 depth = 1U << eth->log_depth;

	ring->log_depth = eth->log_depth;
	ring->pi = 0;
	ring->ci = 0;
	ring->bufs = kcalloc(depth, sizeof(*ring->bufs), GFP_KERNEL);
	if (!ring->bufs)
		return -ENOMEM;
	/* Coherent allocations are page aligned, as the device requires. */
	ring->desc = dma_alloc_coherent(kite_eth_dmadev(eth),
					depth * sizeof(*ring->desc), &ring->dma,
					GFP_KERNEL);
	if (!ring->desc) {
		kfree(ring->bufs);
		ring->bufs = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void kite_eth_ring_free(struct kite_eth *eth, struct kite_eth_ring *ring,
			       enum dma_data_direction dir)
{
	u32 depth = kite_ring_depth(ring);
	u32 i;

	if (!ring->desc)
		return;
	for (i = 0; i < depth; i++) {
		struct kite_eth_buf *buf = &ring->bufs[i];

		if (!buf->skb)
			continue;
		dma_unmap_single(kite_eth_dmadev(eth), buf->dma, buf->len, dir);
		dev_kfree_skb_any(buf->skb);
		buf->skb = NULL;
	}
	dma_free_coherent(kite_eth_dmadev(eth), depth * sizeof(*ring->desc),
			  ring->desc, ring->dma);
	ring->desc = NULL;
	kfree(ring->bufs);
	ring->bufs = NULL;
}

/* Write ETH_CTRL: the ring enables (@ring_en, or the current ones when
 * @keep_rings) plus the receive filter mode. Returns what the device took.
 */
static u32 kite_eth_write_ctrl(struct kite_eth *eth, u32 ring_en,
			       bool keep_rings)
{
	u32 ctrl;

	spin_lock_bh(&eth->ctrl_lock);
	if (!keep_rings)
		eth->ring_en = ring_en;
	ctrl = eth->ring_en;
	if (eth->netdev->flags & IFF_PROMISC)
		ctrl |= KITE_ETH_CTRL_PROMISC;
	kite_wr32(eth->kdev, KITE_REG_ETH_CTRL, ctrl);
	ctrl = kite_rd32(eth->kdev, KITE_REG_ETH_CTRL);
	spin_unlock_bh(&eth->ctrl_lock);
	return ctrl;
}

static int kite_eth_hw_start(struct kite_eth *eth)
{
	struct kite_dev *kdev = eth->kdev;
	u32 want = KITE_ETH_CTRL_TX_EN | KITE_ETH_CTRL_RX_EN;
	u32 ctrl;

	kite_wr32(kdev, KITE_REG_ETH_TX_BASE_LO, lower_32_bits(eth->tx.dma));
	kite_wr32(kdev, KITE_REG_ETH_TX_BASE_HI, upper_32_bits(eth->tx.dma));
	kite_wr32(kdev, KITE_REG_ETH_TX_LOG_DEPTH, eth->tx.log_depth);
	kite_wr32(kdev, KITE_REG_ETH_RX_BASE_LO, lower_32_bits(eth->rx.dma));
	kite_wr32(kdev, KITE_REG_ETH_RX_BASE_HI, upper_32_bits(eth->rx.dma));
	kite_wr32(kdev, KITE_REG_ETH_RX_LOG_DEPTH, eth->rx.log_depth);
	ctrl = kite_eth_write_ctrl(eth, want, false);
	if ((ctrl & want) != want) {
		netdev_err(eth->netdev,
			   "device rejected the Ethernet rings (ctrl 0x%x)\n",
			   ctrl);
		kite_eth_write_ctrl(eth, 0, false);
		return -EIO;
	}
	return 0;
}

static int kite_eth_open(struct net_device *nd)
{
	struct kite_eth *eth = netdev_priv(nd);
	struct kite_dev *kdev = eth->kdev;
	int irq = pci_irq_vector(kdev->pdev, KITE_MSIX_ETH);
	int err;

	if (kite_admin_is_dead(&kdev->admin))
		return -EIO;
	eth->rx_buf_len = kite_eth_rx_buf_len(nd->mtu);
	err = kite_eth_ring_alloc(eth, &eth->tx);
	if (err)
		return err;
	err = kite_eth_ring_alloc(eth, &eth->rx);
	if (err)
		goto err_free_tx;
	err = request_irq(irq, kite_eth_irq, 0, eth->irq_name, eth);
	if (err)
		goto err_free_rx;
	err = kite_eth_hw_start(eth);
	if (err)
		goto err_free_irq;

	/* The device may still have the interrupt armed from before the rings
	 * were disabled, so it can fire as soon as buffers are posted: post
	 * them before NAPI is enabled (the handler's napi_schedule() does
	 * nothing until then), then run one poll, which arms the interrupt
	 * when it is done and retries a refill that found no memory.
	 * The carrier follows the link under kdev->event_lock (probe and link
	 * events), not here.
	 */
	kite_eth_rx_refill(eth);
	eth->up = true;
	napi_enable(&eth->napi);
	netif_start_queue(nd);
	local_bh_disable();
	napi_schedule(&eth->napi);
	local_bh_enable();
	return 0;

err_free_irq:
	free_irq(irq, eth);
err_free_rx:
	kite_eth_ring_free(eth, &eth->rx, DMA_FROM_DEVICE);
err_free_tx:
	kite_eth_ring_free(eth, &eth->tx, DMA_TO_DEVICE);
	return err;
}

static int kite_eth_stop(struct net_device *nd)
{
	struct kite_eth *eth = netdev_priv(nd);
	struct kite_dev *kdev = eth->kdev;

	/* A failed reopen after an MTU change left nothing to stop. */
	if (!eth->up)
		return 0;
	eth->up = false;
	netif_tx_disable(nd);
	napi_disable(&eth->napi);
	/* The device stops using the rings once they are disabled. */
	kite_eth_write_ctrl(eth, 0, false);
	free_irq(pci_irq_vector(kdev->pdev, KITE_MSIX_ETH), eth);
	kite_eth_ring_free(eth, &eth->rx, DMA_FROM_DEVICE);
	kite_eth_ring_free(eth, &eth->tx, DMA_TO_DEVICE);
	return 0;
}

static int kite_eth_change_mtu(struct net_device *nd, int new_mtu)
{
	struct kite_eth *eth = netdev_priv(nd);
	struct kite_admin *adm = &eth->kdev->admin;
	bool running = netif_running(nd);
	int old_mtu = nd->mtu;
	int err, err2;

	err = kite_cmd_set_port(adm, KITE_SET_PORT_MTU, new_mtu, NULL);
	if (err)
		return err;
	if (!running) {
		WRITE_ONCE(nd->mtu, new_mtu);
		return 0;
	}

	/* Receive buffers are sized for the MTU: rebuild the rings. */
	kite_eth_stop(nd);
	WRITE_ONCE(nd->mtu, new_mtu);
	err = kite_eth_open(nd);
	if (!err)
		return 0;

	/* Keep the interface running: go back to the old MTU and rings. */
	netdev_err(nd, "cannot open with MTU %d (%d), restoring MTU %d\n",
		   new_mtu, err, old_mtu);
	WRITE_ONCE(nd->mtu, old_mtu);
	err2 = kite_cmd_set_port(adm, KITE_SET_PORT_MTU, old_mtu, NULL);
	if (!err2)
		err2 = kite_eth_open(nd);
	if (err2)
		netdev_err(nd, "cannot restore MTU %d (%d): interface is stopped until reopened\n",
			   old_mtu, err2);
	return err;
}

static int kite_eth_set_mac_address(struct net_device *nd, void *p)
{
	struct kite_eth *eth = netdev_priv(nd);
	struct sockaddr *addr = p;
	int err;

	err = eth_prepare_mac_addr_change(nd, p);
	if (err)
		return err;
	err = kite_cmd_set_port(&eth->kdev->admin, KITE_SET_PORT_MAC, 0,
				addr->sa_data);
	if (err)
		return err;
	eth_commit_mac_addr_change(nd, p);
	return 0;
}

static void kite_eth_set_rx_mode(struct net_device *nd)
{
	struct kite_eth *eth = netdev_priv(nd);

	/* Unicast to our MAC, broadcast and all multicast always pass. */
	kite_eth_write_ctrl(eth, 0, true);
}

/**
 * kite_eth_read_stats() - a consistent copy of the driver's counters
 * @eth: port
 * @s: the copy
 */
void kite_eth_read_stats(struct kite_eth *eth, struct kite_eth_stats *s)
{
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&eth->syncp);
		*s = eth->stats;
	} while (u64_stats_fetch_retry(&eth->syncp, start));
}

static void kite_eth_get_stats64(struct net_device *nd,
				 struct rtnl_link_stats64 *st)
{
	struct kite_eth *eth = netdev_priv(nd);
	struct kite_eth_stats s;

	kite_eth_read_stats(eth, &s);
	st->tx_packets = s.tx_packets;
	st->tx_bytes = s.tx_bytes;
	st->tx_errors = s.tx_errors;
	st->tx_dropped = atomic64_read(&eth->tx_dropped);
	st->rx_packets = s.rx_packets;
	st->rx_bytes = s.rx_bytes;
	st->rx_errors = s.rx_errors;
}

static const struct net_device_ops kite_netdev_ops = {
	.ndo_open = kite_eth_open,
	.ndo_stop = kite_eth_stop,
	.ndo_start_xmit = kite_eth_xmit,
	.ndo_set_mac_address = kite_eth_set_mac_address,
	.ndo_change_mtu = kite_eth_change_mtu,
	.ndo_set_rx_mode = kite_eth_set_rx_mode,
	.ndo_get_stats64 = kite_eth_get_stats64,
	.ndo_validate_addr = eth_validate_addr,
};

/**
 * kite_eth_link_change() - follow the device's link state
 * @kdev: device
 * @up: link is up
 *
 * Called with kdev->event_lock held and kdev->netdev set.
 */
void kite_eth_link_change(struct kite_dev *kdev, bool up)
{
	if (up)
		netif_carrier_on(kdev->netdev);
	else
		netif_carrier_off(kdev->netdev);
}

static void kite_eth_read_perm_mac(struct kite_dev *kdev, u8 *mac)
{
	/* Byte 0 of the address is the low byte of PERM_MAC_LO. */
	put_unaligned_le32(kite_rd32(kdev, KITE_REG_PERM_MAC_LO), mac);
	put_unaligned_le16(kite_rd32(kdev, KITE_REG_PERM_MAC_HI), mac + 4);
}

/**
 * kite_eth_probe() - create and register the Ethernet port
 * @kdev: device with its admin queue running
 *
 * Return: 0 or a negative errno.
 */
int kite_eth_probe(struct kite_dev *kdev)
{
	struct net_device *nd;
	struct kite_eth *eth;
	unsigned long flags;
	u8 mac[ETH_ALEN];
	int err;

	nd = alloc_etherdev(sizeof(*eth));
	if (!nd)
		return -ENOMEM;
	SET_NETDEV_DEV(nd, &kdev->pdev->dev);
	eth = netdev_priv(nd);
	eth->kdev = kdev;
	eth->netdev = nd;
	eth->log_depth = min_t(u8, KITE_ETH_LOG_DEPTH, kdev->max_eth_log);
	u64_stats_init(&eth->syncp);
	spin_lock_init(&eth->ctrl_lock);
	atomic64_set(&eth->tx_dropped, 0);
	snprintf(eth->irq_name, sizeof(eth->irq_name), "kite-eth@pci:%s",
		 pci_name(kdev->pdev));

	nd->netdev_ops = &kite_netdev_ops;
	nd->ethtool_ops = &kite_ethtool_ops;
	nd->min_mtu = KITE_ETH_MIN_MTU;
	nd->max_mtu = KITE_ETH_MAX_MTU;
	/* SET_PORT changes the MAC at any time. */
	nd->priv_flags |= IFF_LIVE_ADDR_CHANGE;

	kite_eth_read_perm_mac(kdev, mac);
	if (is_valid_ether_addr(mac)) {
		eth_hw_addr_set(nd, mac);
	} else {
		eth_hw_addr_random(nd);
		dev_warn(&kdev->pdev->dev, "invalid permanent MAC %pM, using %pM\n",
			 mac, nd->dev_addr);
	}
	/* Tell the device the MAC and MTU the stack starts with. */
	err = kite_cmd_set_port(&kdev->admin,
				KITE_SET_PORT_MTU | KITE_SET_PORT_MAC, nd->mtu,
				nd->dev_addr);
	if (err)
		goto err_free;

	netif_napi_add(nd, &eth->napi, kite_eth_poll);
	netif_carrier_off(nd);
	err = register_netdev(nd);
	if (err)
		goto err_napi_del;

	spin_lock_irqsave(&kdev->event_lock, flags);
	kdev->netdev = nd;
	kite_eth_link_change(kdev, kite_link_up(kdev));
	spin_unlock_irqrestore(&kdev->event_lock, flags);
	return 0;

err_napi_del:
	netif_napi_del(&eth->napi);
err_free:
	free_netdev(nd);
	return err;
}

/**
 * kite_eth_remove() - unregister and free the Ethernet port
 * @kdev: device
 */
void kite_eth_remove(struct kite_dev *kdev)
{
	struct net_device *nd = kdev->netdev;
	struct kite_eth *eth = netdev_priv(nd);
	unsigned long flags;

	spin_lock_irqsave(&kdev->event_lock, flags);
	kdev->netdev = NULL;
	spin_unlock_irqrestore(&kdev->event_lock, flags);

	unregister_netdev(nd);
	netif_napi_del(&eth->napi);
	free_netdev(nd);
}
