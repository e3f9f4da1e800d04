/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: the Ethernet port.
 *
 * One TX and one RX descriptor ring (struct kite_eth_desc, one frame per
 * descriptor) in guest memory, configured by BAR0 registers and latched when
 * the driver sets TX_EN/RX_EN; frames go to and come from the QEMU netdev.
 * Completions set a pending flag; an armed port fires KITE_MSIX_ETH once.
 *
 * Every received frame is offered to the RoCEv2 engine first, through the
 * wire (kite_wire_receive()); the port always accepts frames from QEMU
 * (can_receive is true), and frames for the Ethernet ring that find no RX
 * buffer wait in the device's own bounded backlog, so RoCEv2 frames are
 * never stuck behind them.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "hw/pci/pci.h"
#include "net/net.h"
#include "kite.h"
#include "trace.h"

void kite_eth_reset(KiteState *s)
{
    memset(&s->tx, 0, sizeof(s->tx));
    memset(&s->rx, 0, sizeof(s->rx));
    s->eth_ctrl = 0;
    s->eth_irq_armed = false;
    s->eth_irq_pending = false;
}

/* Called after any TX or RX completion. */
static void kite_eth_completion(KiteState *s)
{
    s->eth_irq_pending = true;
    if (s->eth_irq_armed) {
        s->eth_irq_armed = false;
        s->eth_irq_pending = false;
        kite_irq(s, KITE_MSIX_ETH);
    }
}

static void kite_eth_arm(KiteState *s)
{
    trace_kite_eth_arm(s->eth_irq_pending);
    s->eth_irq_armed = true;
    if (s->eth_irq_pending) {
        kite_eth_completion(s);
    }
}

void kite_eth_update_link(KiteState *s, bool notify)
{
    NetClientState *nc = qemu_get_queue(s->nic);
    bool up = nc->peer && !nc->link_down;

    if (up == s->link_up) {
        return;
    }
    s->link_up = up;
    trace_kite_link(up);
    if (notify && kite_running(s)) {
        kite_eq_post(s, 0, up ? KITE_EVT_PORT_ACTIVE : KITE_EVT_PORT_ERR,
                     KITE_PORT_NUM, 0);
    }
}

/* From the monitor (set_link) or the netdev: not a guest access. */
static void kite_eth_link_status_changed(NetClientState *nc)
{
    KiteState *s = qemu_get_nic_opaque(nc);
    bool was = kite_io_enter(s);

    kite_eth_update_link(s, true);
    kite_io_leave(s, was);
}

static bool kite_eth_ring_enable(KiteEthRing *r, const char *name)
{
    uint64_t base = deposit64(r->base_lo, 32, 32, r->base_hi);

    if (!kite_log_depth_valid(r->log_depth_reg, KITE_DEF_MAX_ETH_LOG_DEPTH) ||
        !kite_ring_base_valid(base, (uint64_t)sizeof(struct kite_eth_desc) <<
                                    r->log_depth_reg)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: bad Ethernet %s ring 0x%"
                      PRIx64 "/%u\n", name, base, r->log_depth_reg);
        return false;
    }
    r->base = base;
    r->log_depth = r->log_depth_reg;
    r->pi = r->ci = 0;
    trace_kite_eth_ring(name, base, r->log_depth);
    return true;
}

static void kite_eth_write_ctrl(KiteState *s, uint32_t val)
{
    uint32_t old = s->eth_ctrl;
    uint32_t ctrl = val & KITE_ETH_CTRL_PROMISC;

    if (val & ~(KITE_ETH_CTRL_TX_EN | KITE_ETH_CTRL_RX_EN |
                KITE_ETH_CTRL_PROMISC)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: reserved ETH_CTRL bits 0x%x\n",
                      val);
    }
    if ((val & (KITE_ETH_CTRL_TX_EN | KITE_ETH_CTRL_RX_EN)) &&
        !kite_running(s)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "kite: Ethernet rings enabled while not ready\n");
        val &= ~(KITE_ETH_CTRL_TX_EN | KITE_ETH_CTRL_RX_EN);
    }
    if (val & KITE_ETH_CTRL_TX_EN) {
        if ((old & KITE_ETH_CTRL_TX_EN) || kite_eth_ring_enable(&s->tx, "TX")) {
            ctrl |= KITE_ETH_CTRL_TX_EN;
        }
    }
    if (val & KITE_ETH_CTRL_RX_EN) {
        if ((old & KITE_ETH_CTRL_RX_EN) || kite_eth_ring_enable(&s->rx, "RX")) {
            ctrl |= KITE_ETH_CTRL_RX_EN;
        }
    }
    if (!(ctrl & KITE_ETH_CTRL_TX_EN)) {
        qemu_bh_cancel(s->tx_bh);
    }
    s->eth_ctrl = ctrl;
    trace_kite_eth_ctrl(val, ctrl);
    /*
     * Frames waiting for a buffer belong to the ring as it was: dropped
     * rather than delivered to a ring enabled later.
     */
    if ((ctrl ^ old) & KITE_ETH_CTRL_RX_EN) {
        kite_eth_backlog_drop(s);
    }
}

/* A producer index write; false if it is beyond the ring's depth. */
static bool kite_eth_ring_db(KiteState *s, KiteEthRing *r, uint32_t en,
                             uint32_t pi, const char *name)
{
    trace_kite_eth_doorbell(name, pi, r->ci);
    if (!(s->eth_ctrl & en) || !kite_running(s)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: Ethernet %s doorbell while "
                      "the ring is disabled\n", name);
        return false;
    }
    if (!kite_ring_pi_valid(pi, r->ci, r->log_depth)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: Ethernet %s doorbell %u with "
                      "consumer %u and depth %u: ignored\n", name, pi, r->ci,
                      1u << r->log_depth);
        return false;
    }
    r->pi = pi;
    return true;
}

/* Ring configuration registers, as written (latched on enable). */
static uint32_t *kite_eth_ring_reg(KiteState *s, hwaddr addr)
{
    switch (addr) {
    case KITE_REG_ETH_TX_BASE_LO:
        return &s->tx.base_lo;
    case KITE_REG_ETH_TX_BASE_HI:
        return &s->tx.base_hi;
    case KITE_REG_ETH_TX_LOG_DEPTH:
        return &s->tx.log_depth_reg;
    case KITE_REG_ETH_RX_BASE_LO:
        return &s->rx.base_lo;
    case KITE_REG_ETH_RX_BASE_HI:
        return &s->rx.base_hi;
    case KITE_REG_ETH_RX_LOG_DEPTH:
        return &s->rx.log_depth_reg;
    }
    return NULL;
}

uint64_t kite_eth_read(KiteState *s, hwaddr addr, bool *found)
{
    uint32_t *reg = kite_eth_ring_reg(s, addr);

    *found = true;
    if (reg) {
        return *reg;
    }
    switch (addr) {
    case KITE_REG_ETH_CTRL:
        return s->eth_ctrl;
    case KITE_REG_ETH_TX_CI:
        return s->tx.ci;
    case KITE_REG_ETH_RX_CI:
        return s->rx.ci;
    case KITE_REG_ETH_TX_DB:
    case KITE_REG_ETH_RX_DB:
    case KITE_REG_ETH_IRQ_ARM:
        return 0;       /* write-only */
    }
    *found = false;
    return 0;
}

bool kite_eth_write(KiteState *s, hwaddr addr, uint32_t val)
{
    uint32_t *reg = kite_eth_ring_reg(s, addr);

    if (reg) {
        *reg = val;
        return true;
    }
    switch (addr) {
    case KITE_REG_ETH_CTRL:
        kite_eth_write_ctrl(s, val);
        return true;
    case KITE_REG_ETH_TX_DB:
        if (kite_eth_ring_db(s, &s->tx, KITE_ETH_CTRL_TX_EN, val, "TX")) {
            qemu_bh_schedule(s->tx_bh);
        }
        return true;
    case KITE_REG_ETH_RX_DB:
        if (kite_eth_ring_db(s, &s->rx, KITE_ETH_CTRL_RX_EN, val, "RX")) {
            kite_eth_backlog_flush(s);
        }
        return true;
    case KITE_REG_ETH_IRQ_ARM:
        if (val & KITE_ETH_IRQ_ARM_FIRE) {
            kite_eth_arm(s);
        }
        return true;
    }
    return false;
}

static uint64_t kite_eth_desc_addr(KiteEthRing *r, uint32_t index)
{
    return r->base + (uint64_t)kite_ring_slot(index, r->log_depth) *
           sizeof(struct kite_eth_desc);
}

/* Sends one TX descriptor; false on a fatal ring error. */
static bool kite_eth_tx_one(KiteState *s)
{
    PCIDevice *pci = PCI_DEVICE(s);
    uint8_t *buf = s->tx_buf;
    uint64_t daddr = kite_eth_desc_addr(&s->tx, s->tx.ci);
    struct kite_eth_desc d;
    uint16_t len;

    if (pci_dma_read(pci, daddr, &d, sizeof(d)) != MEMTX_OK) {
        kite_fatal(s, KITE_FATAL_ETH_DMA);
        return false;
    }
    len = le16_to_cpu(d.len);
    d.status = KITE_ETH_DESC_DONE;
    if (len < KITE_ETH_HLEN || len > KITE_ETH_MAX_FRAME) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: TX frame of %u bytes\n", len);
        d.status |= KITE_ETH_DESC_ERR;
    } else if (pci_dma_read(pci, le64_to_cpu(d.addr), buf, len) !=
               MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: TX buffer 0x%" PRIx64
                      " not readable\n", le64_to_cpu(d.addr));
        d.status |= KITE_ETH_DESC_ERR;
    }
    if (d.status & KITE_ETH_DESC_ERR) {
        s->cnt.eth_tx_errors++;
    } else if (!s->link_up) {
        /* No carrier: the frame is consumed but goes nowhere. */
        s->cnt.eth_tx_errors++;
    } else {
        qemu_send_packet(qemu_get_queue(s->nic), buf, len);
        s->cnt.eth_tx_packets++;
        s->cnt.eth_tx_bytes += len;
    }
    trace_kite_eth_tx(s->tx.ci, len, d.status);
    if (pci_dma_write(pci, daddr, &d, sizeof(d)) != MEMTX_OK) {
        kite_fatal(s, KITE_FATAL_ETH_DMA);
        return false;
    }
    s->tx.ci++;
    return true;
}

void kite_eth_tx_bh(void *opaque)
{
    KiteState *s = opaque;
    bool done = false;

    while (kite_running(s) && (s->eth_ctrl & KITE_ETH_CTRL_TX_EN) &&
           s->tx.ci != s->tx.pi) {
        if (!kite_eth_tx_one(s)) {
            return;
        }
        done = true;
    }
    if (done) {
        kite_eth_completion(s);
    }
}

static bool kite_eth_rx_on(KiteState *s)
{
    return kite_running(s) && (s->eth_ctrl & KITE_ETH_CTRL_RX_EN);
}

/*
 * The port always takes frames from QEMU: RoCEv2 frames go to the engine
 * whatever the state of the Ethernet RX ring, and frames for the ring that
 * find no buffer wait in the device's backlog (kite_eth_backlog_*), not in
 * QEMU's queue, which would hold back the RoCEv2 frames behind them.
 */
static bool kite_eth_can_receive(NetClientState *nc)
{
    return true;
}

static bool kite_eth_accept(KiteState *s, const uint8_t *buf)
{
    /* Broadcast and multicast have the group bit of byte 0 set. */
    return (s->eth_ctrl & KITE_ETH_CTRL_PROMISC) || (buf[0] & 1) ||
           memcmp(buf, s->mac, sizeof(s->mac)) == 0;
}

/*
 * Writes one frame into the next RX buffer, which the caller has checked
 * exists (rx.ci != rx.pi).
 */
static void kite_eth_rx_write(KiteState *s, const uint8_t *buf, size_t size)
{
    PCIDevice *pci = PCI_DEVICE(s);
    struct kite_eth_desc d;
    uint64_t daddr;

    daddr = kite_eth_desc_addr(&s->rx, s->rx.ci);
    if (pci_dma_read(pci, daddr, &d, sizeof(d)) != MEMTX_OK) {
        kite_fatal(s, KITE_FATAL_ETH_DMA);
        return;
    }
    if (size > le16_to_cpu(d.len) || size > KITE_ETH_MAX_FRAME) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: RX frame of %zu bytes for a "
                      "%u-byte buffer\n", size, le16_to_cpu(d.len));
        d.status = KITE_ETH_DESC_DONE | KITE_ETH_DESC_ERR;
        d.len = 0;
        s->cnt.eth_rx_dropped++;
    } else if (pci_dma_write(pci, le64_to_cpu(d.addr), buf, size) !=
               MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: RX buffer 0x%" PRIx64
                      " not writable\n", le64_to_cpu(d.addr));
        d.status = KITE_ETH_DESC_DONE | KITE_ETH_DESC_ERR;
        d.len = 0;
        s->cnt.eth_rx_dropped++;
    } else {
        d.status = KITE_ETH_DESC_DONE;
        d.len = cpu_to_le16(size);
        s->cnt.eth_rx_packets++;
        s->cnt.eth_rx_bytes += size;
    }
    trace_kite_eth_rx(s->rx.ci, size, d.status);
    if (pci_dma_write(pci, daddr, &d, sizeof(d)) != MEMTX_OK) {
        kite_fatal(s, KITE_FATAL_ETH_DMA);
        return;
    }
    s->rx.ci++;
    kite_eth_completion(s);
}

/* Frames that waited for RX buffers go into the buffers now posted. */
void kite_eth_backlog_flush(KiteState *s)
{
    KiteFrame *f;

    while (kite_eth_rx_on(s) && s->rx.ci != s->rx.pi &&
           (f = QSIMPLEQ_FIRST(&s->eth_backlog))) {
        QSIMPLEQ_REMOVE_HEAD(&s->eth_backlog, next);
        s->eth_backlog_len--;
        kite_eth_rx_write(s, f->data, f->len);
        g_free(f);
    }
}

/*
 * The frames waiting for RX buffers are dropped and counted (RX turned
 * off or on, reset, FATAL), as a port that is off drops them.
 */
void kite_eth_backlog_drop(KiteState *s)
{
    KiteFrame *f;

    while ((f = QSIMPLEQ_FIRST(&s->eth_backlog))) {
        QSIMPLEQ_REMOVE_HEAD(&s->eth_backlog, next);
        trace_kite_eth_rx_off(f->len);
        s->cnt.eth_rx_dropped++;
        g_free(f);
    }
    s->eth_backlog_len = 0;
}

/*
 * A frame for the port, from the netdev or the device's own receive queue
 * (loopback): the RoCEv2 engine first, else the Ethernet RX ring. With RX
 * enabled and no buffer posted the frame waits in the backlog (at most
 * KITE_ETH_BACKLOG_MAX frames; more are dropped and counted) until RX_DB.
 * With RX disabled frames are dropped (eth_rx_dropped), as a port that is
 * off drops them.
 */
void kite_port_receive(KiteState *s, const uint8_t *buf, size_t size)
{
    KiteFrame *f;

    if (kite_wire_receive(s, buf, size)) {
        return;
    }
    if (size < KITE_ETH_HLEN || !kite_eth_accept(s, buf)) {
        trace_kite_eth_rx_filtered(size);
        return;
    }
    if (!kite_eth_rx_on(s)) {
        trace_kite_eth_rx_off(size);
        s->cnt.eth_rx_dropped++;
        return;
    }
    if (s->rx.ci == s->rx.pi || !QSIMPLEQ_EMPTY(&s->eth_backlog)) {
        if (s->eth_backlog_len >= KITE_ETH_BACKLOG_MAX) {
            trace_kite_eth_rx_backlog_full(size);
            s->cnt.eth_rx_dropped++;
            return;
        }
        f = kite_frame_new(buf, size);
        QSIMPLEQ_INSERT_TAIL(&s->eth_backlog, f, next);
        s->eth_backlog_len++;
        return;
    }
    kite_eth_rx_write(s, buf, size);
}

static ssize_t kite_eth_receive(NetClientState *nc, const uint8_t *buf,
                                size_t size)
{
    kite_port_receive(qemu_get_nic_opaque(nc), buf, size);
    return size;
}

NetClientInfo kite_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .can_receive = kite_eth_can_receive,
    .receive = kite_eth_receive,
    .link_status_changed = kite_eth_link_status_changed,
};
