/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: PCI/QOM glue, BAR0 registers, BAR2
 * doorbells, reset and enable.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qemu/rcu.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "exec/memory.h"
#include "hw/pci/pci.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "net/net.h"
#include "kite.h"
#include "trace.h"

bool kite_running(KiteState *s)
{
    return (s->status & (KITE_STATUS_READY | KITE_STATUS_FATAL)) ==
           KITE_STATUS_READY;
}

void kite_irq(KiteState *s, unsigned vector)
{
    PCIDevice *pci = PCI_DEVICE(s);

    trace_kite_irq(vector, msix_enabled(pci));
    if (msix_enabled(pci)) {
        msix_notify(pci, vector);
    }
}

/*
 * Work that reaches the device from outside the guest's MMIO accesses and
 * the device's guarded bottom halves (a host link change, a timer, a
 * monitor query) runs under the device's memory re-entrancy guard as those
 * do: a DMA or an MSI-X message it aims at the device's own BARs is then
 * refused by the memory API (a failed DMA) instead of reaching them.
 * Returns the guard's previous state for kite_io_leave().
 */
bool kite_io_enter(KiteState *s)
{
    MemReentrancyGuard *g = &DEVICE(s)->mem_reentrancy_guard;
    bool was = g->engaged_in_io;

    g->engaged_in_io = true;
    return was;
}

void kite_io_leave(KiteState *s, bool was)
{
    DEVICE(s)->mem_reentrancy_guard.engaged_in_io = was;
}

/*
 * Whether [addr, addr + len) of the device's DMA address space is guest RAM
 * the CPU can access directly (for writes when @is_write). Anything else
 * pci_dma_map() would serve from a bounce buffer whose read or write-back
 * result it drops (MMIO, unassigned space, the device's own BARs): a DMA
 * there must go through pci_dma_read()/pci_dma_write(), whose result
 * tells the device that the access failed.
 */
bool kite_dma_is_ram(PCIDevice *pci, dma_addr_t addr, dma_addr_t len,
                     bool is_write)
{
    hwaddr xlat, l = len;
    MemoryRegion *mr;

    RCU_READ_LOCK_GUARD();
    mr = address_space_translate(pci_get_address_space(pci), addr, &xlat, &l,
                                 is_write, MEMTXATTRS_UNSPECIFIED);
    return memory_access_is_direct(mr, is_write) && l >= len;
}

/*
 * The device stops: READY drops, FATAL and the code are set, an async
 * KITE_EVT_DEV_FATAL event is posted (kite_eq_post() skips the async EQ when
 * it is not set up or is the ring that failed), the admin vector fires so
 * that a driver waiting for a completion notices, frames waiting for an
 * Ethernet RX buffer are dropped (the port no longer receives) and the data
 * path stops (engine QPs, timers and queued frames are dropped).
 */
void kite_fatal(KiteState *s, uint32_t code)
{
    if (s->status & KITE_STATUS_FATAL) {
        return;
    }
    trace_kite_fatal(code);
    qemu_log_mask(LOG_GUEST_ERROR, "kite: device fatal error %u\n", code);
    s->status = (s->status & ~KITE_STATUS_READY) | KITE_STATUS_FATAL;
    s->fatal_code = code;
    qemu_bh_cancel(s->aq_bh);
    qemu_bh_cancel(s->tx_bh);
    kite_eq_post(s, 0, KITE_EVT_DEV_FATAL, code, 0);
    kite_irq(s, KITE_MSIX_ADMIN);
    kite_eth_backlog_drop(s);
    kite_wire_stop(s);
    kite_engine_stop(s);
}

/*
 * Test only (x-fatal): setting a KITE_FATAL_* code makes the running
 * device fail with it, as an internal error would; reading gives the
 * current fatal code (KITE_FATAL_NONE while the device is healthy or after
 * the driver's reset). Set from the monitor, so under the re-entrancy
 * guard: the DEV_FATAL event is a DMA to a guest-chosen ring.
 */
static void kite_get_fatal(Object *obj, Visitor *v, const char *name,
                           void *opaque, Error **errp)
{
    uint32_t val = KITE(obj)->fatal_code;

    visit_type_uint32(v, name, &val, errp);
}

static void kite_set_fatal(Object *obj, Visitor *v, const char *name,
                           void *opaque, Error **errp)
{
    KiteState *s = KITE(obj);
    uint32_t val;
    bool was;

    if (!visit_type_uint32(v, name, &val, errp)) {
        return;
    }
    if (val == KITE_FATAL_NONE) {
        error_setg(errp, "%s: %u is not a fatal error code", name, val);
        return;
    }
    if (!kite_running(s)) {
        error_setg(errp, "%s: the device is not running", name);
        return;
    }
    was = kite_io_enter(s);
    kite_fatal(s, val);
    kite_io_leave(s, was);
}

/* Drops every piece of state the guest created (KITE_CTRL_RESET). */
static void kite_reset(KiteState *s)
{
    trace_kite_reset();
    qemu_bh_cancel(s->aq_bh);
    qemu_bh_cancel(s->tx_bh);
    s->ctrl = 0;
    s->status = 0;
    s->fatal_code = KITE_FATAL_NONE;
    s->aq_base_lo = s->aq_base_hi = s->aq_log_depth_reg = 0;
    s->acq_base_lo = s->acq_base_hi = s->acq_log_depth_reg = 0;
    s->aeq_base_lo = s->aeq_base_hi = s->aeq_log_depth_reg = 0;
    memcpy(s->mac, s->conf.macaddr.a, sizeof(s->mac));
    qemu_format_nic_info_str(qemu_get_queue(s->nic), s->mac);
    s->eth_mtu = KITE_MODEL_DEF_MTU;
    /* Engine QPs first: kite_admin_reset() empties the QP table. */
    kite_wire_stop(s);
    kite_engine_reset(s);
    kite_admin_reset(s);
    kite_eq_reset(s);
    kite_eth_reset(s);
    memset(&s->cnt, 0, sizeof(s->cnt));
    /*
     * Frames waiting for an RX buffer: RX is off now, so they are dropped
     * (and counted) instead of reaching the next driver's ring.
     */
    kite_eth_backlog_drop(s);
}

static void kite_write_ctrl(KiteState *s, uint32_t val)
{
    trace_kite_ctrl(val, s->status);
    if (val & KITE_CTRL_RESET) {
        kite_reset(s);
        return;
    }
    if (val & ~KITE_CTRL_ENABLE) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: reserved DEV_CTRL bits 0x%x\n",
                      val);
    }
    if (!(val & KITE_CTRL_ENABLE)) {
        /* Clearing ENABLE stops the device: the same as a reset. */
        if (s->ctrl & KITE_CTRL_ENABLE) {
            kite_reset(s);
        }
        return;
    }
    if (s->ctrl & KITE_CTRL_ENABLE) {
        return;
    }
    s->ctrl = KITE_CTRL_ENABLE;
    if (!kite_admin_enable(s)) {
        kite_fatal(s, KITE_FATAL_BAD_CONFIG);
        return;
    }
    s->status |= KITE_STATUS_READY;
    trace_kite_ready();
}

/* The capability registers, indexed by (register - first) / 4. */
#define KITE_CAP_INDEX(reg)     (((reg) - KITE_REG_CAP_MAX_QP) / 4)

static const uint32_t kite_caps[] = {
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_QP)] = KITE_DEF_MAX_QP,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_CQ)] = KITE_DEF_MAX_CQ,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_MR)] = KITE_DEF_MAX_MR,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_PD)] = KITE_DEF_MAX_PD,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_CQE)] = KITE_DEF_MAX_CQE,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_QP_WR)] = KITE_DEF_MAX_QP_WR,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_SGE)] = KITE_DEF_MAX_SGE,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_INLINE)] = KITE_DEF_MAX_INLINE,
    [KITE_CAP_INDEX(KITE_REG_CAP_PAGE_SIZES)] =
        (uint32_t)KITE_DEF_PAGE_SIZES,
    [KITE_CAP_INDEX(KITE_REG_CAP_PAGE_SIZES_HI)] =
        (uint32_t)(KITE_DEF_PAGE_SIZES >> 32),
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_MTU)] = KITE_MTU_4096,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_EQ)] = KITE_DEF_MAX_EQ,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_UCTX)] = KITE_MAX_UCTX,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_GID)] = KITE_DEF_MAX_GID,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_MR_SIZE_LO)] =
        (uint32_t)KITE_DEF_MAX_MR_SIZE,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_MR_SIZE_HI)] =
        (uint32_t)(KITE_DEF_MAX_MR_SIZE >> 32),
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_AQ_LOG_DEPTH)] =
        KITE_DEF_MAX_AQ_LOG_DEPTH,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_EQ_LOG_DEPTH)] =
        KITE_DEF_MAX_EQ_LOG_DEPTH,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_ETH_LOG_DEPTH)] =
        KITE_DEF_MAX_ETH_LOG_DEPTH,
    [KITE_CAP_INDEX(KITE_REG_CAP_NUM_MSIX)] = KITE_MSIX_NUM,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_RD_ATOM)] = KITE_DEF_MAX_RD_ATOM,
    [KITE_CAP_INDEX(KITE_REG_CAP_FLAGS)] = KITE_MODEL_CAP_FLAGS,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_MW)] = KITE_DEF_MAX_MW,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_FRWR_PAGES)] = KITE_DEF_MAX_FRWR_PAGES,
    /* A READ WQE takes as many SGEs as any other. */
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_SGE_RD)] = KITE_DEF_MAX_SGE,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_SRQ)] = KITE_DEF_MAX_SRQ,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_SRQ_WR)] = KITE_DEF_MAX_SRQ_WR,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_SRQ_SGE)] = KITE_DEF_MAX_SRQ_SGE,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_MCAST_GRP)] = KITE_DEF_MAX_MCAST_GRP,
    [KITE_CAP_INDEX(KITE_REG_CAP_MAX_MCAST_QP)] = KITE_DEF_MAX_MCAST_QP,
};

static bool kite_cap_reg_valid(hwaddr addr)
{
    return addr >= KITE_REG_CAP_MAX_QP &&
           KITE_CAP_INDEX(addr) < ARRAY_SIZE(kite_caps) &&
           QEMU_IS_ALIGNED(addr, 4);
}

/*
 * Value of capability register @reg (KITE_REG_CAP_*): the one source of
 * the BAR0 registers and of QUERY_DEVICE/QUERY_PORT.
 */
uint32_t kite_cap(hwaddr reg)
{
    assert(kite_cap_reg_valid(reg));
    return kite_caps[KITE_CAP_INDEX(reg)];
}

static uint32_t kite_cap_reg(hwaddr addr, bool *found)
{
    *found = kite_cap_reg_valid(addr);
    return *found ? kite_caps[KITE_CAP_INDEX(addr)] : 0;
}

/* Admin ring registers; they can only change while ENABLE is clear. */
static uint32_t *kite_aq_reg(KiteState *s, hwaddr addr)
{
    switch (addr) {
    case KITE_REG_AQ_BASE_LO:
        return &s->aq_base_lo;
    case KITE_REG_AQ_BASE_HI:
        return &s->aq_base_hi;
    case KITE_REG_AQ_LOG_DEPTH:
        return &s->aq_log_depth_reg;
    case KITE_REG_ACQ_BASE_LO:
        return &s->acq_base_lo;
    case KITE_REG_ACQ_BASE_HI:
        return &s->acq_base_hi;
    case KITE_REG_ACQ_LOG_DEPTH:
        return &s->acq_log_depth_reg;
    case KITE_REG_AEQ_BASE_LO:
        return &s->aeq_base_lo;
    case KITE_REG_AEQ_BASE_HI:
        return &s->aeq_base_hi;
    case KITE_REG_AEQ_LOG_DEPTH:
        return &s->aeq_log_depth_reg;
    }
    return NULL;
}

static uint64_t kite_regs_read(void *opaque, hwaddr addr, unsigned size)
{
    KiteState *s = opaque;
    const uint8_t *perm = s->conf.macaddr.a;
    uint32_t *reg;
    uint64_t val;
    bool found;

    switch (addr) {
    case KITE_REG_VERSION:
        val = KITE_ABI_VERSION(KITE_ABI_MAJOR, KITE_ABI_MINOR);
        break;
    case KITE_REG_DEV_CTRL:
        val = s->ctrl;
        break;
    case KITE_REG_DEV_STATUS:
        val = s->status | (s->link_up ? KITE_STATUS_LINK_UP : 0);
        break;
    case KITE_REG_FATAL_CODE:
        val = s->fatal_code;
        break;
    case KITE_REG_AQ_DB:
        val = 0;        /* write-only */
        break;
    case KITE_REG_PERM_MAC_LO:
        val = ldl_le_p(perm);
        break;
    case KITE_REG_PERM_MAC_HI:
        val = lduw_le_p(perm + 4);
        break;
    default:
        reg = kite_aq_reg(s, addr);
        if (reg) {
            val = *reg;
            break;
        }
        val = kite_eth_read(s, addr, &found);
        if (!found) {
            val = kite_cap_reg(addr, &found);
        }
        if (!found) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "kite: read of unknown register 0x%" HWADDR_PRIx
                          "\n", addr);
            val = 0;
        }
    }
    trace_kite_reg_read(addr, val);
    return val;
}

static void kite_regs_write(void *opaque, hwaddr addr, uint64_t val64,
                            unsigned size)
{
    KiteState *s = opaque;
    uint32_t val = val64;
    uint32_t *reg;

    trace_kite_reg_write(addr, val);
    if (kite_engine_busy(s)) {
        /* A DMA of the RoCEv2 engine aimed at the device itself. */
        qemu_log_mask(LOG_GUEST_ERROR, "kite: register 0x%" HWADDR_PRIx
                      " written by the device's own DMA: ignored\n", addr);
        return;
    }
    switch (addr) {
    case KITE_REG_DEV_CTRL:
        kite_write_ctrl(s, val);
        return;
    case KITE_REG_AQ_DB:
        kite_admin_doorbell(s, val);
        return;
    }
    reg = kite_aq_reg(s, addr);
    if (reg) {
        if (s->ctrl & KITE_CTRL_ENABLE) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "kite: admin register 0x%" HWADDR_PRIx
                          " written while enabled\n", addr);
            return;
        }
        *reg = val;
        return;
    }
    if (kite_eth_write(s, addr, val)) {
        return;
    }
    qemu_log_mask(LOG_GUEST_ERROR,
                  "kite: write to read-only or unknown register 0x%"
                  HWADDR_PRIx "\n", addr);
}

static const MemoryRegionOps kite_regs_ops = {
    .read = kite_regs_read,
    .write = kite_regs_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
        .unaligned = false,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

static uint64_t kite_db_read(void *opaque, hwaddr addr, unsigned size)
{
    qemu_log_mask(LOG_GUEST_ERROR, "kite: read of doorbell 0x%" HWADDR_PRIx
                  "\n", addr);
    return 0;
}

static void kite_db_write(void *opaque, hwaddr addr, uint64_t val,
                          unsigned size)
{
    KiteState *s = opaque;
    uint32_t page = addr >> KITE_DB_PAGE_SHIFT;
    hwaddr off = addr & (KITE_DB_PAGE_SIZE - 1);

    trace_kite_doorbell(page, off, val);
    if (size != 8) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: %u-byte doorbell write at 0x%"
                      HWADDR_PRIx " (doorbells are 64-bit)\n", size, addr);
        s->cnt.db_rejected++;
        return;
    }
    if (!kite_running(s)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: doorbell while not ready\n");
        s->cnt.db_rejected++;
        return;
    }
    if (kite_engine_busy(s)) {
        /* A DMA of the RoCEv2 engine aimed at the device itself. */
        qemu_log_mask(LOG_GUEST_ERROR, "kite: doorbell written by the "
                      "device's own DMA: ignored\n");
        s->cnt.db_rejected++;
        return;
    }
    switch (off) {
    case KITE_DB_EQ:
        kite_eq_doorbell(s, page, val);
        return;
    case KITE_DB_SQ:
    case KITE_DB_RQ:
        kite_qp_doorbell(s, page, off, val);
        return;
    case KITE_DB_CQ:
        kite_cq_doorbell(s, page, val);
        return;
    case KITE_DB_SRQ:
        kite_srq_doorbell(s, page, val);
        return;
    }
    qemu_log_mask(LOG_GUEST_ERROR, "kite: write to unknown doorbell 0x%"
                  HWADDR_PRIx "\n", addr);
    s->cnt.db_rejected++;
}

static const MemoryRegionOps kite_db_ops = {
    .read = kite_db_read,
    .write = kite_db_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 8,
        .unaligned = false,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
};

static void kite_realize(PCIDevice *pci, Error **errp)
{
    KiteState *s = KITE(pci);
    DeviceState *dev = DEVICE(pci);
    int i;

    if (s->fault_status == KITE_STS_OK) {
        error_setg(errp, "x-fault-status must be an error status, "
                   "not %u (OK)", KITE_STS_OK);
        return;
    }

    memory_region_init_io(&s->regs, OBJECT(s), &kite_regs_ops, s,
                          "kite-regs", KITE_REGS_SIZE);
    pci_register_bar(pci, KITE_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->regs);
    memory_region_init_io(&s->db, OBJECT(s), &kite_db_ops, s,
                          "kite-doorbells", KITE_DB_BAR_SIZE);
    pci_register_bar(pci, KITE_BAR_DB, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->db);

    if (msix_init_exclusive_bar(pci, KITE_MSIX_NUM, KITE_BAR_MSIX, errp)) {
        return;
    }
    for (i = 0; i < KITE_MSIX_NUM; i++) {
        msix_vector_use(pci, i);
    }

    s->aq_bh = qemu_bh_new_guarded(kite_admin_bh, s,
                                   &dev->mem_reentrancy_guard);
    s->tx_bh = qemu_bh_new_guarded(kite_eth_tx_bh, s,
                                   &dev->mem_reentrancy_guard);
    kite_admin_init(s);
    kite_wire_init(s);
    kite_engine_init(s);
    QSIMPLEQ_INIT(&s->eth_backlog);

    qemu_macaddr_default_if_unset(&s->conf.macaddr);
    s->nic = qemu_new_nic(&kite_net_info, &s->conf,
                          object_get_typename(OBJECT(s)), dev->id,
                          &dev->mem_reentrancy_guard, s);

    kite_reset(s);
    kite_eth_update_link(s, false);
}

static void kite_exit(PCIDevice *pci)
{
    KiteState *s = KITE(pci);

    qemu_bh_delete(s->aq_bh);
    qemu_bh_delete(s->tx_bh);
    qemu_del_nic(s->nic);
    kite_eth_backlog_drop(s);
    kite_engine_cleanup(s);
    kite_wire_cleanup(s);
    kite_admin_cleanup(s);
    msix_uninit_exclusive_bar(pci);
}

static void kite_qdev_reset(DeviceState *dev)
{
    KiteState *s = KITE(dev);

    kite_reset(s);
    kite_eth_update_link(s, false);
}

static Property kite_properties[] = {
    DEFINE_NIC_PROPERTIES(KiteState, conf),
    /* Test only: admin command fault injection. */
    DEFINE_PROP_UINT8("x-fault-opcode", KiteState, fault_opcode, 0),
    DEFINE_PROP_UINT8("x-fault-status", KiteState, fault_status,
                      KITE_STS_INTERNAL),
    DEFINE_PROP_UINT8("x-fault-hang-opcode", KiteState, fault_hang_opcode,
                      0),
    /* Test only: fewer objects than advertised, the MR page-copy budget. */
    DEFINE_PROP_UINT32("x-max-objects", KiteState, max_objects, 0),
    DEFINE_PROP_UINT64("x-mr-cache-bytes", KiteState, mr_cache_budget,
                       KITE_MR_CACHE_BUDGET),
    DEFINE_PROP_END_OF_LIST(),
};

/*
 * Migration is not supported: the device state (object tables, ring
 * indexes, queued work) is not described by a VMState, so the device
 * blocks migration instead of losing it.
 */
static const VMStateDescription kite_vmstate = {
    .name = TYPE_KITE,
    .unmigratable = 1,
};

static void kite_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = kite_realize;
    k->exit = kite_exit;
    k->vendor_id = KITE_PCI_VENDOR_ID;
    k->device_id = KITE_PCI_DEVICE_ID;
    k->subsystem_vendor_id = KITE_PCI_SUBSYS_VENDOR_ID;
    k->subsystem_id = KITE_PCI_SUBSYS_ID;
    k->revision = KITE_PCI_REVISION;
    k->class_id = KITE_PCI_CLASS;
    dc->desc = "Kite RoCEv2 RDMA NIC";
    dc->reset = kite_qdev_reset;
    dc->vmsd = &kite_vmstate;
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
    device_class_set_props(dc, kite_properties);
    /* Test only: wire fault injection and the MR lookup probe. */
    kite_wire_class_init(klass);
    kite_mr_class_init(klass);
    kite_admin_class_init(klass);
    object_class_property_add(klass, "x-fatal", "uint32", kite_get_fatal,
                              kite_set_fatal, NULL, NULL);
    object_class_property_set_description(klass, "x-fatal",
                                          "make the running device fail "
                                          "with this KITE_FATAL_* code");
}

static void kite_instance_init(Object *obj)
{
    kite_wire_instance_init(KITE(obj));
    kite_mr_instance_init(KITE(obj));
}

static const TypeInfo kite_info = {
    .name = TYPE_KITE,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(KiteState),
    .instance_init = kite_instance_init,
    .class_init = kite_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_CONVENTIONAL_PCI_DEVICE },
        { },
    },
};

static void kite_register_types(void)
{
    type_register_static(&kite_info);
}

type_init(kite_register_types)
