/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: admin queue and command engine.
 *
 * The driver writes 128-byte commands into the AQ ring and the free-running
 * producer index into KITE_REG_AQ_DB; a bottom half executes them in order
 * and writes one 32-byte completion per command into the ACQ ring (phase bit
 * per pass), then raises KITE_MSIX_ADMIN. Every field the guest supplies is
 * checked and rejected with a KITE_STS_* code.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "hw/pci/pci.h"
#include "qapi/visitor.h"
#include "kite.h"
#include "trace.h"

typedef struct KiteCmdDesc {
    const char *name;
    KiteCmdFn fn;           /* NULL: defined by the ABI, not implemented */
} KiteCmdDesc;

void kite_admin_init(KiteState *s)
{
    /* The directories only (a few pages): entries come with use. */
    g_assert(kite_table_init(&s->pd_tab, sizeof(KitePd),
                             KITE_PD_FIRST + KITE_DEF_MAX_PD) &&
             kite_table_init(&s->cq_tab, sizeof(KiteCq),
                             KITE_CQ_FIRST + KITE_DEF_MAX_CQ) &&
             kite_table_init(&s->qp_tab, sizeof(KiteQp), KITE_QP_SLOTS) &&
             kite_table_init(&s->srq_tab, sizeof(KiteSrq),
                             KITE_SRQ_FIRST + KITE_DEF_MAX_SRQ) &&
             kite_table_init(&s->mr_tab, sizeof(KiteMr),
                             KITE_MR_FIRST + KITE_DEF_MAX_MR +
                             KITE_DEF_MAX_MW));
}

void kite_admin_cleanup(KiteState *s)
{
    kite_mr_drop_all(s);
    kite_table_destroy(&s->pd_tab);
    kite_table_destroy(&s->cq_tab);
    kite_table_destroy(&s->qp_tab);
    kite_table_destroy(&s->srq_tab);
    kite_table_destroy(&s->mr_tab);
}

void kite_admin_reset(KiteState *s)
{
    s->aq_base = s->acq_base = 0;
    s->aq_log_depth = s->acq_log_depth = 0;
    s->aq_pi = s->aq_ci = s->acq_pi = 0;
    s->aq_hung = false;
    memset(s->uctx, 0, sizeof(s->uctx));
    kite_mr_drop_all(s);
    kite_table_clear(&s->pd_tab);
    kite_table_clear(&s->cq_tab);
    kite_table_clear(&s->qp_tab);
    kite_table_clear(&s->srq_tab);
    kite_table_clear(&s->mr_tab);
    memset(s->gid, 0, sizeof(s->gid));
    s->num_uctx = s->num_pd = 0;
    s->num_cq = s->num_qp = s->num_mr = s->num_mw = s->num_srq = 0;
}

/* ENABLE: validates and latches the AQ, ACQ and async EQ registers. */
bool kite_admin_enable(KiteState *s)
{
    uint64_t aq = deposit64(s->aq_base_lo, 32, 32, s->aq_base_hi);
    uint64_t acq = deposit64(s->acq_base_lo, 32, 32, s->acq_base_hi);
    uint64_t aeq = deposit64(s->aeq_base_lo, 32, 32, s->aeq_base_hi);

    /* Depths first: the ring sizes are computed from them. */
    if (!kite_log_depth_valid(s->aq_log_depth_reg,
                              KITE_DEF_MAX_AQ_LOG_DEPTH) ||
        !kite_log_depth_valid(s->acq_log_depth_reg,
                              KITE_DEF_MAX_AQ_LOG_DEPTH) ||
        s->acq_log_depth_reg < s->aq_log_depth_reg ||
        !kite_log_depth_valid(s->aeq_log_depth_reg,
                              KITE_DEF_MAX_EQ_LOG_DEPTH) ||
        !kite_ring_base_valid(aq, (uint64_t)KITE_AQ_CMD_SIZE <<
                                  s->aq_log_depth_reg) ||
        !kite_ring_base_valid(acq, (uint64_t)KITE_AQ_CQE_SIZE <<
                                   s->acq_log_depth_reg) ||
        !kite_ring_base_valid(aeq, (uint64_t)sizeof(struct kite_eqe) <<
                                   s->aeq_log_depth_reg)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: bad admin ring configuration "
                      "(AQ 0x%" PRIx64 "/%u ACQ 0x%" PRIx64 "/%u "
                      "AEQ 0x%" PRIx64 "/%u)\n", aq, s->aq_log_depth_reg,
                      acq, s->acq_log_depth_reg, aeq, s->aeq_log_depth_reg);
        return false;
    }
    s->aq_base = aq;
    s->acq_base = acq;
    s->aq_log_depth = s->aq_log_depth_reg;
    s->acq_log_depth = s->acq_log_depth_reg;
    s->aq_pi = s->aq_ci = s->acq_pi = 0;
    kite_eq_setup(s, 0, aeq, s->aeq_log_depth_reg, KITE_MSIX_ADMIN);
    trace_kite_enable(aq, s->aq_log_depth, acq, s->acq_log_depth, aeq,
                      s->aeq_log_depth_reg);
    return true;
}

void kite_admin_doorbell(KiteState *s, uint32_t pi)
{
    trace_kite_aq_doorbell(pi, s->aq_ci);
    if (!kite_running(s)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: AQ doorbell while not ready\n");
        return;
    }
    if (s->aq_hung) {
        return;
    }
    if (!kite_ring_pi_valid(pi, s->aq_ci, s->aq_log_depth)) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: AQ doorbell %u with consumer "
                      "%u and depth %u\n", pi, s->aq_ci,
                      1u << s->aq_log_depth);
        kite_fatal(s, KITE_FATAL_AQ_DOORBELL);
        return;
    }
    s->aq_pi = pi;
    qemu_bh_schedule(s->aq_bh);
}

/* ---- helpers -------------------------------------------------------- */

/* The acting context of a command: 0 (kernel) or an allocated context. */
static bool kite_ctx_valid(KiteState *s, uint32_t uctx)
{
    return uctx == 0 || (uctx <= KITE_MAX_UCTX && s->uctx[uctx].valid);
}

/*
 * Writes a result of @len (> 0) bytes to the command's out buffer;
 * out[0] = bytes written.
 */
uint8_t kite_out_write(KiteState *s, const struct kite_aq_out_buf *ob,
                       const void *data, uint32_t len, KiteCmdResult *res)
{
    uint64_t addr = le64_to_cpu(ob->addr);
    uint32_t buf_len = le32_to_cpu(ob->len);

    if (buf_len < len) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: out buffer of %u bytes for a "
                      "%u-byte result\n", buf_len, len);
        res->syndrome = len;
        return KITE_STS_BAD_PARAM;
    }
    if (addr + len - 1 < addr) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: out buffer 0x%" PRIx64
                      " of %u bytes wraps the address space\n", addr, len);
        return KITE_STS_BAD_PARAM;
    }
    if (pci_dma_write(PCI_DEVICE(s), addr, data, len) != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: out buffer 0x%" PRIx64
                      " not writable\n", addr);
        return KITE_STS_DMA_ERROR;
    }
    res->out[0] = len;
    return KITE_STS_OK;
}

/* Logs a rejected command field; returns KITE_STS_BAD_PARAM. */
uint8_t kite_bad_param(const char *what, uint64_t val)
{
    qemu_log_mask(LOG_GUEST_ERROR, "kite: bad %s 0x%" PRIx64 "\n", what, val);
    return KITE_STS_BAD_PARAM;
}

/*
 * The PD @pdn, to be used by context @actor: NULL with *status
 * BAD_HANDLE (not allocated) or PERMISSION (owned by another context).
 */
KitePd *kite_pd_get(KiteState *s, uint32_t pdn, uint32_t actor,
                    uint8_t *status)
{
    KitePd *pd = kite_table_get(&s->pd_tab, pdn);

    if (!pd) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: unknown PD %u\n", pdn);
        *status = KITE_STS_BAD_HANDLE;
        return NULL;
    }
    if (pd->owner != actor) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: PD %u of context %u used by "
                      "context %u\n", pdn, pd->owner, actor);
        *status = KITE_STS_PERMISSION;
        return NULL;
    }
    return pd;
}

/*
 * Room for one more PD, CQ, QP or MR when @num exist and the device
 * advertises @max: x-max-objects (test only) lowers every such limit.
 */
bool kite_obj_room(KiteState *s, uint32_t num, uint32_t max)
{
    return num < max && (!s->max_objects || num < s->max_objects);
}

/* A 64-bit capability held in the register pair @lo, @hi. */
static uint64_t kite_cap64(hwaddr lo, hwaddr hi)
{
    return deposit64(kite_cap(lo), 32, 32, kite_cap(hi));
}

/* ---- commands -------------------------------------------------------- */

static uint8_t kite_cmd_query_device(KiteState *s,
                                     const struct kite_aq_cmd *cmd,
                                     KiteCmdResult *res)
{
    struct kite_device_attr a;
    const uint8_t *m = s->conf.macaddr.a;
    /* EUI-64 from the permanent MAC, as Ethernet RDMA NICs derive it. */
    uint64_t guid = ((uint64_t)(m[0] ^ 2) << 56) | ((uint64_t)m[1] << 48) |
                    ((uint64_t)m[2] << 40) | (0xfffeull << 24) |
                    ((uint64_t)m[3] << 16) | ((uint64_t)m[4] << 8) | m[5];

    memset(&a, 0, sizeof(a));
    a.abi_version = cpu_to_le32(KITE_ABI_VERSION(KITE_ABI_MAJOR,
                                                 KITE_ABI_MINOR));
    a.fw_version = cpu_to_le32(KITE_MODEL_FW_VERSION);
    a.sys_image_guid = cpu_to_le64(guid);
    a.page_size_cap = cpu_to_le64(kite_cap64(KITE_REG_CAP_PAGE_SIZES,
                                             KITE_REG_CAP_PAGE_SIZES_HI));
    a.max_mr_size = cpu_to_le64(kite_cap64(KITE_REG_CAP_MAX_MR_SIZE_LO,
                                           KITE_REG_CAP_MAX_MR_SIZE_HI));
    a.max_qp = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_QP));
    a.max_cq = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_CQ));
    a.max_mr = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_MR));
    a.max_pd = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_PD));
    a.max_cqe = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_CQE));
    a.max_qp_wr = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_QP_WR));
    a.max_sge = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_SGE));
    a.max_inline = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_INLINE));
    a.max_eq = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_EQ));
    a.max_uctx = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_UCTX));
    a.max_gid = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_GID));
    a.max_rd_atom = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_RD_ATOM));
    a.cap_flags = cpu_to_le32(kite_cap(KITE_REG_CAP_FLAGS));
    a.num_msix = cpu_to_le32(kite_cap(KITE_REG_CAP_NUM_MSIX));
    a.vendor_id = cpu_to_le32(KITE_PCI_VENDOR_ID);
    a.vendor_part_id = cpu_to_le32(KITE_PCI_DEVICE_ID);
    a.hw_version = cpu_to_le32(KITE_PCI_REVISION);
    a.max_mw = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_MW));
    a.max_frwr_pages = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_FRWR_PAGES));
    a.max_sge_rd = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_SGE_RD));
    a.max_srq = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_SRQ));
    a.max_srq_wr = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_SRQ_WR));
    a.max_srq_sge = cpu_to_le32(kite_cap(KITE_REG_CAP_MAX_SRQ_SGE));
    a.max_mcast_grp = cpu_to_le16(kite_cap(KITE_REG_CAP_MAX_MCAST_GRP));
    a.max_mcast_qp = cpu_to_le16(kite_cap(KITE_REG_CAP_MAX_MCAST_QP));
    return kite_out_write(s, &cmd->query.out, &a, sizeof(a), res);
}

static uint8_t kite_cmd_query_port(KiteState *s, const struct kite_aq_cmd *cmd,
                                   KiteCmdResult *res)
{
    struct kite_port_attr p;

    if (cmd->query.port != KITE_PORT_NUM) {
        return KITE_STS_BAD_PARAM;
    }
    memset(&p, 0, sizeof(p));
    p.state = s->link_up ? KITE_PORT_ACTIVE : KITE_PORT_DOWN;
    p.max_mtu = kite_cap(KITE_REG_CAP_MAX_MTU);
    p.active_mtu = kite_mtu_from_eth(s->eth_mtu);
    p.link_width = KITE_PORT_LINK_WIDTH_1X;
    p.link_speed = KITE_PORT_LINK_SPEED_EDR;
    memcpy(p.mac, s->mac, sizeof(p.mac));
    p.eth_mtu = cpu_to_le32(s->eth_mtu);
    p.gid_tbl_len = cpu_to_le32(KITE_DEF_MAX_GID);
    return kite_out_write(s, &cmd->query.out, &p, sizeof(p), res);
}

static uint8_t kite_cmd_set_port(KiteState *s, const struct kite_aq_cmd *cmd,
                                 KiteCmdResult *res)
{
    const struct kite_cmd_set_port *c = &cmd->set_port;
    uint32_t mask = le32_to_cpu(c->mask);
    uint32_t mtu = le32_to_cpu(c->mtu);

    if (le32_to_cpu(cmd->hdr.uctx)) {
        return KITE_STS_PERMISSION;
    }
    if (c->port != KITE_PORT_NUM ||
        (mask & ~(KITE_SET_PORT_MTU | KITE_SET_PORT_MAC))) {
        return KITE_STS_BAD_PARAM;
    }
    if ((mask & KITE_SET_PORT_MTU) &&
        (mtu < KITE_ETH_MIN_MTU || mtu > KITE_ETH_MAX_MTU)) {
        return KITE_STS_BAD_PARAM;
    }
    /* A unicast, non-zero address. */
    if ((mask & KITE_SET_PORT_MAC) &&
        ((c->mac[0] & 1) || !(c->mac[0] | c->mac[1] | c->mac[2] |
                              c->mac[3] | c->mac[4] | c->mac[5]))) {
        return KITE_STS_BAD_PARAM;
    }
    if (mask & KITE_SET_PORT_MTU) {
        s->eth_mtu = mtu;
    }
    if (mask & KITE_SET_PORT_MAC) {
        memcpy(s->mac, c->mac, sizeof(s->mac));
        qemu_format_nic_info_str(qemu_get_queue(s->nic), s->mac);
    }
    kite_engine_set_port(s);
    trace_kite_set_port(mask, s->eth_mtu);
    return KITE_STS_OK;
}

static uint8_t kite_cmd_create_eq(KiteState *s, const struct kite_aq_cmd *cmd,
                                  KiteCmdResult *res)
{
    const struct kite_cmd_create_eq *c = &cmd->create_eq;
    uint64_t addr = le64_to_cpu(c->ring.addr);
    uint32_t npages = le32_to_cpu(c->ring.npages);
    uint16_t vector = le16_to_cpu(c->msix_vector);
    uint8_t shift = c->ring.page_shift;
    uint32_t eqn;

    if (le32_to_cpu(cmd->hdr.uctx)) {
        return KITE_STS_PERMISSION;
    }
    if (c->ring.level != KITE_PBL_LEVEL_DIRECT) {
        /* Event rings are contiguous DMA memory; page lists come later. */
        return KITE_STS_NOT_SUPPORTED;
    }
    /* Only the page sizes the device advertises (CAP_PAGE_SIZES). */
    if (shift >= 64 || !(KITE_DEF_PAGE_SIZES & (1ull << shift))) {
        return KITE_STS_BAD_PARAM;
    }
    /* shift <= 30 here: npages << shift cannot overflow. */
    if (!kite_log_depth_valid(c->log_depth, KITE_DEF_MAX_EQ_LOG_DEPTH) ||
        vector < KITE_MSIX_COMP_BASE || vector >= KITE_MSIX_NUM ||
        !kite_ring_base_valid(addr, (uint64_t)npages << shift) ||
        !QEMU_IS_ALIGNED(addr, 1ull << shift) ||
        (uint64_t)npages << shift <
        (uint64_t)sizeof(struct kite_eqe) << c->log_depth) {
        return KITE_STS_BAD_PARAM;
    }
    for (eqn = 1; eqn < KITE_DEF_MAX_EQ; eqn++) {
        if (!s->eq[eqn].valid) {
            break;
        }
    }
    if (eqn == KITE_DEF_MAX_EQ) {
        return KITE_STS_NO_RESOURCES;
    }
    kite_eq_setup(s, eqn, addr, c->log_depth, vector);
    res->out[0] = eqn;
    return KITE_STS_OK;
}

static uint8_t kite_cmd_destroy_eq(KiteState *s,
                                   const struct kite_aq_cmd *cmd,
                                   KiteCmdResult *res)
{
    uint32_t eqn = le32_to_cpu(cmd->destroy.handle);

    /* EQs belong to the kernel. */
    if (le32_to_cpu(cmd->hdr.uctx)) {
        return KITE_STS_PERMISSION;
    }
    if (eqn == 0 || eqn >= KITE_DEF_MAX_EQ || !s->eq[eqn].valid) {
        /* EQ 0 is the async EQ: it lives until reset. */
        return KITE_STS_BAD_HANDLE;
    }
    if (s->eq[eqn].cq_refs) {
        return KITE_STS_BUSY;
    }
    kite_eq_destroy(s, eqn);
    return KITE_STS_OK;
}

static uint8_t kite_cmd_alloc_uctx(KiteState *s,
                                   const struct kite_aq_cmd *cmd,
                                   KiteCmdResult *res)
{
    uint32_t n;

    if (le32_to_cpu(cmd->hdr.uctx)) {
        return KITE_STS_PERMISSION;
    }
    for (n = 1; n <= KITE_MAX_UCTX; n++) {
        if (!s->uctx[n].valid) {
            break;
        }
    }
    if (n > KITE_MAX_UCTX) {
        return KITE_STS_NO_RESOURCES;
    }
    s->uctx[n].valid = true;
    s->uctx[n].refs = 0;
    s->num_uctx++;
    res->out[0] = n;
    trace_kite_uctx(n, true);
    return KITE_STS_OK;
}

static uint8_t kite_cmd_dealloc_uctx(KiteState *s,
                                     const struct kite_aq_cmd *cmd,
                                     KiteCmdResult *res)
{
    uint32_t n = le32_to_cpu(cmd->destroy.handle);

    /* Only the kernel ends a context, as only the kernel creates one. */
    if (le32_to_cpu(cmd->hdr.uctx)) {
        return KITE_STS_PERMISSION;
    }
    if (n == 0 || n > KITE_MAX_UCTX || !s->uctx[n].valid) {
        return KITE_STS_BAD_HANDLE;
    }
    if (s->uctx[n].refs) {
        return KITE_STS_BUSY;
    }
    s->uctx[n].valid = false;
    s->num_uctx--;
    trace_kite_uctx(n, false);
    return KITE_STS_OK;
}

static uint8_t kite_cmd_alloc_pd(KiteState *s, const struct kite_aq_cmd *cmd,
                                 KiteCmdResult *res)
{
    uint32_t actor = le32_to_cpu(cmd->hdr.uctx);
    uint32_t pdn;
    KitePd *pd;

    if (!kite_obj_room(s, s->num_pd, KITE_DEF_MAX_PD)) {
        return KITE_STS_NO_RESOURCES;
    }
    pd = kite_table_alloc(&s->pd_tab, KITE_PD_FIRST, &pdn);
    if (!pd) {
        return KITE_STS_NO_RESOURCES;
    }
    pd->valid = true;
    pd->owner = actor;
    if (actor) {
        s->uctx[actor].refs++;
    }
    s->num_pd++;
    res->out[0] = pdn;
    trace_kite_pd(pdn, actor, true);
    return KITE_STS_OK;
}

static uint8_t kite_cmd_dealloc_pd(KiteState *s,
                                   const struct kite_aq_cmd *cmd,
                                   KiteCmdResult *res)
{
    uint32_t pdn = le32_to_cpu(cmd->destroy.handle);
    uint32_t actor = le32_to_cpu(cmd->hdr.uctx);
    KitePd *pd = kite_table_get(&s->pd_tab, pdn);

    if (!pd) {
        return KITE_STS_BAD_HANDLE;
    }
    if (pd->owner != actor) {
        return KITE_STS_PERMISSION;
    }
    if (pd->refs) {
        return KITE_STS_BUSY;
    }
    pd->valid = false;
    kite_table_free(&s->pd_tab, pdn);
    if (actor) {
        s->uctx[actor].refs--;
    }
    s->num_pd--;
    trace_kite_pd(pdn, actor, false);
    return KITE_STS_OK;
}

/* An IPv4 RoCEv2 GID is IPv4-mapped: ::ffff:a.b.c.d. */
static bool kite_gid_is_v4_mapped(const uint8_t *gid)
{
    static const uint8_t prefix[12] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
    };

    return memcmp(gid, prefix, sizeof(prefix)) == 0;
}

static uint8_t kite_cmd_add_gid(KiteState *s, const struct kite_aq_cmd *cmd,
                                KiteCmdResult *res)
{
    const struct kite_cmd_gid *c = &cmd->gid;
    uint16_t index = le16_to_cpu(c->index);

    if (le32_to_cpu(cmd->hdr.uctx)) {
        return KITE_STS_PERMISSION;
    }
    if (index >= KITE_DEF_MAX_GID || c->port != KITE_PORT_NUM ||
        (c->type != KITE_GID_ROCE_V2_IPV4 &&
         c->type != KITE_GID_ROCE_V2_IPV6) ||
        (c->type == KITE_GID_ROCE_V2_IPV4 && !kite_gid_is_v4_mapped(c->gid))) {
        return KITE_STS_BAD_PARAM;
    }
    if (s->gid[index].valid) {
        return KITE_STS_BUSY;
    }
    s->gid[index].valid = true;
    s->gid[index].type = c->type;
    memcpy(s->gid[index].gid, c->gid, sizeof(s->gid[index].gid));
    trace_kite_gid(index, c->type, true);
    return KITE_STS_OK;
}

static uint8_t kite_cmd_del_gid(KiteState *s, const struct kite_aq_cmd *cmd,
                                KiteCmdResult *res)
{
    const struct kite_cmd_gid *c = &cmd->gid;
    uint16_t index = le16_to_cpu(c->index);

    if (le32_to_cpu(cmd->hdr.uctx)) {
        return KITE_STS_PERMISSION;
    }
    if (index >= KITE_DEF_MAX_GID || c->port != KITE_PORT_NUM) {
        return KITE_STS_BAD_PARAM;
    }
    if (!s->gid[index].valid) {
        return KITE_STS_BAD_HANDLE;
    }
    s->gid[index].valid = false;
    trace_kite_gid(index, s->gid[index].type, false);
    return KITE_STS_OK;
}

/*
 * QUERY_STATS: object counts, the device's counters and the engine's
 * port-wide RoCEv2 counters (struct kite_stats). roce_rx_dropped adds the
 * frames the device's receive queue had no room for to the engine's drops.
 */
static uint8_t kite_cmd_query_stats(KiteState *s,
                                    const struct kite_aq_cmd *cmd,
                                    KiteCmdResult *res)
{
    const struct kite_roce_counters *c = kite_roce_counters(s->eng.roce);
    struct kite_stats st;
    uint32_t i, n;

    memset(&st, 0, sizeof(st));
    st.num_uctx = cpu_to_le32(s->num_uctx);
    st.num_pd = cpu_to_le32(s->num_pd);
    st.num_cq = cpu_to_le32(s->num_cq);
    st.num_qp = cpu_to_le32(s->num_qp);
    st.num_mr = cpu_to_le32(s->num_mr);
    st.num_srq = cpu_to_le32(s->num_srq);
    for (i = 0, n = 0; i < KITE_DEF_MAX_EQ; i++) {
        n += s->eq[i].valid;
    }
    st.num_eq = cpu_to_le32(n);
    for (i = 0, n = 0; i < KITE_DEF_MAX_GID; i++) {
        n += s->gid[i].valid;
    }
    st.num_gid = cpu_to_le32(n);
    st.eth_tx_packets = cpu_to_le64(s->cnt.eth_tx_packets);
    st.eth_tx_bytes = cpu_to_le64(s->cnt.eth_tx_bytes);
    st.eth_rx_packets = cpu_to_le64(s->cnt.eth_rx_packets);
    st.eth_rx_bytes = cpu_to_le64(s->cnt.eth_rx_bytes);
    st.eth_rx_dropped = cpu_to_le64(s->cnt.eth_rx_dropped);
    st.eth_tx_errors = cpu_to_le64(s->cnt.eth_tx_errors);
    st.eq_events_dropped = cpu_to_le64(s->cnt.eq_dropped);
    st.db_rejected = cpu_to_le64(s->cnt.db_rejected);
    st.wire_dropped = cpu_to_le64(s->cnt.wire_dropped);
    st.db_mmio = cpu_to_le64(s->cnt.db_mmio);
    st.db_rec_reads = cpu_to_le64(s->cnt.db_rec_reads);
    st.roce_tx_packets = cpu_to_le64(c->tx_packets);
    st.roce_rx_packets = cpu_to_le64(c->rx_packets);
    st.roce_retransmits = cpu_to_le64(c->retransmits);
    st.roce_icrc_errors = cpu_to_le64(c->icrc_errors);
    st.roce_tx_bytes = cpu_to_le64(c->tx_bytes);
    st.roce_rx_bytes = cpu_to_le64(c->rx_bytes);
    st.roce_naks_sent = cpu_to_le64(c->naks_sent);
    st.roce_naks_rcvd = cpu_to_le64(c->naks_rcvd);
    st.roce_rnr_naks_sent = cpu_to_le64(c->rnr_naks_sent);
    st.roce_rnr_naks_rcvd = cpu_to_le64(c->rnr_naks_rcvd);
    st.roce_dup_requests = cpu_to_le64(c->dup_requests);
    st.roce_rx_dropped = cpu_to_le64(c->rx_dropped + s->cnt.roce_rx_dropped);
    st.roce_timeouts = cpu_to_le64(c->timeouts);
    st.roce_mcast_rx = cpu_to_le64(c->mcast_rx);
    st.roce_mcast_dropped = cpu_to_le64(c->mcast_dropped);
    return kite_out_write(s, &cmd->query.out, &st, sizeof(st), res);
}

static const KiteCmdDesc kite_cmds[KITE_CMD_MAX + 1] = {
    [KITE_CMD_QUERY_DEVICE] = { "QUERY_DEVICE", kite_cmd_query_device },
    [KITE_CMD_QUERY_PORT] = { "QUERY_PORT", kite_cmd_query_port },
    [KITE_CMD_SET_PORT] = { "SET_PORT", kite_cmd_set_port },
    [KITE_CMD_CREATE_EQ] = { "CREATE_EQ", kite_cmd_create_eq },
    [KITE_CMD_DESTROY_EQ] = { "DESTROY_EQ", kite_cmd_destroy_eq },
    [KITE_CMD_ALLOC_UCTX] = { "ALLOC_UCTX", kite_cmd_alloc_uctx },
    [KITE_CMD_DEALLOC_UCTX] = { "DEALLOC_UCTX", kite_cmd_dealloc_uctx },
    [KITE_CMD_ALLOC_PD] = { "ALLOC_PD", kite_cmd_alloc_pd },
    [KITE_CMD_DEALLOC_PD] = { "DEALLOC_PD", kite_cmd_dealloc_pd },
    [KITE_CMD_CREATE_CQ] = { "CREATE_CQ", kite_cmd_create_cq },
    [KITE_CMD_MODIFY_CQ] = { "MODIFY_CQ", kite_cmd_modify_cq },
    [KITE_CMD_QUERY_CQ] = { "QUERY_CQ", kite_cmd_query_cq },
    [KITE_CMD_DESTROY_CQ] = { "DESTROY_CQ", kite_cmd_destroy_cq },
    [KITE_CMD_CREATE_SRQ] = { "CREATE_SRQ", kite_cmd_create_srq },
    [KITE_CMD_MODIFY_SRQ] = { "MODIFY_SRQ", kite_cmd_modify_srq },
    [KITE_CMD_QUERY_SRQ] = { "QUERY_SRQ", kite_cmd_query_srq },
    [KITE_CMD_DESTROY_SRQ] = { "DESTROY_SRQ", kite_cmd_destroy_srq },
    [KITE_CMD_CREATE_QP] = { "CREATE_QP", kite_cmd_create_qp },
    [KITE_CMD_MODIFY_QP] = { "MODIFY_QP", kite_cmd_modify_qp },
    [KITE_CMD_QUERY_QP] = { "QUERY_QP", kite_cmd_query_qp },
    [KITE_CMD_DESTROY_QP] = { "DESTROY_QP", kite_cmd_destroy_qp },
    [KITE_CMD_QUERY_QP_STATS] = { "QUERY_QP_STATS",
                                  kite_cmd_query_qp_stats },
    [KITE_CMD_REG_MR] = { "REG_MR", kite_cmd_reg_mr },
    [KITE_CMD_DEREG_MR] = { "DEREG_MR", kite_cmd_dereg_mr },
    [KITE_CMD_ALLOC_MR] = { "ALLOC_MR", kite_cmd_alloc_mr },
    [KITE_CMD_REREG_MR] = { "REREG_MR", kite_cmd_rereg_mr },
    [KITE_CMD_ALLOC_MW] = { "ALLOC_MW", kite_cmd_alloc_mw },
    [KITE_CMD_DEALLOC_MW] = { "DEALLOC_MW", kite_cmd_dealloc_mw },
    [KITE_CMD_ADD_GID] = { "ADD_GID", kite_cmd_add_gid },
    [KITE_CMD_DEL_GID] = { "DEL_GID", kite_cmd_del_gid },
    [KITE_CMD_ATTACH_MCAST] = { "ATTACH_MCAST", kite_cmd_attach_mcast },
    [KITE_CMD_DETACH_MCAST] = { "DETACH_MCAST", kite_cmd_detach_mcast },
    [KITE_CMD_QUERY_STATS] = { "QUERY_STATS", kite_cmd_query_stats },
};

static uint8_t kite_cmd_execute(KiteState *s, const struct kite_aq_cmd *cmd,
                                KiteCmdResult *res)
{
    uint8_t op = cmd->hdr.opcode;
    const KiteCmdDesc *d = op <= KITE_CMD_MAX ? &kite_cmds[op] : NULL;
    uint8_t status;

    if (!d || !d->name) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: unknown admin opcode 0x%x\n",
                      op);
        return KITE_STS_BAD_OPCODE;
    }
    if (s->fault_opcode && op == s->fault_opcode) {
        trace_kite_cmd_fault(d->name, s->fault_status);
        return s->fault_status;
    }
    if (!d->fn) {
        return KITE_STS_NOT_SUPPORTED;
    }
    if (cmd->hdr.flags) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: %s with reserved flags 0x%x\n",
                      d->name, cmd->hdr.flags);
        return KITE_STS_BAD_PARAM;
    }
    if (!kite_ctx_valid(s, le32_to_cpu(cmd->hdr.uctx))) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: %s from unknown context %u\n",
                      d->name, le32_to_cpu(cmd->hdr.uctx));
        return KITE_STS_PERMISSION;
    }
    status = d->fn(s, cmd, res);
    if (status != KITE_STS_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: %s (cmd_id %u, uctx %u) "
                      "failed: status 0x%x\n", d->name,
                      le16_to_cpu(cmd->hdr.cmd_id),
                      le32_to_cpu(cmd->hdr.uctx), status);
    }
    return status;
}

/* Executes one command at the consumer index; false: stop processing. */
static bool kite_admin_one(KiteState *s)
{
    PCIDevice *pci = PCI_DEVICE(s);
    struct kite_aq_cmd cmd;
    struct kite_aq_cqe cqe;
    KiteCmdResult res;
    uint64_t addr;
    uint8_t status;
    int i;

    addr = s->aq_base +
           (uint64_t)kite_ring_slot(s->aq_ci, s->aq_log_depth) * sizeof(cmd);
    if (pci_dma_read(pci, addr, &cmd, sizeof(cmd)) != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: AQ entry 0x%" PRIx64
                      " not readable\n", addr);
        kite_fatal(s, KITE_FATAL_AQ_DMA);
        return false;
    }
    trace_kite_cmd(s->aq_ci, cmd.hdr.opcode, le16_to_cpu(cmd.hdr.cmd_id),
                   le32_to_cpu(cmd.hdr.uctx));
    if (s->fault_hang_opcode && cmd.hdr.opcode == s->fault_hang_opcode) {
        /* Fault injection: the device stops answering until reset. */
        trace_kite_cmd_hang(cmd.hdr.opcode);
        s->aq_hung = true;
        return false;
    }

    memset(&res, 0, sizeof(res));
    status = kite_cmd_execute(s, &cmd, &res);
    trace_kite_cmd_done(le16_to_cpu(cmd.hdr.cmd_id), status, res.out[0]);

    memset(&cqe, 0, sizeof(cqe));
    cqe.cmd_id = cmd.hdr.cmd_id;
    cqe.status = status;
    cqe.flags = kite_ring_phase(s->acq_pi, s->acq_log_depth) ?
                KITE_ACQE_PHASE : 0;
    cqe.syndrome = cpu_to_le32(res.syndrome);
    for (i = 0; i < ARRAY_SIZE(res.out); i++) {
        cqe.out[i] = cpu_to_le32(res.out[i]);
    }
    addr = s->acq_base +
           (uint64_t)kite_ring_slot(s->acq_pi, s->acq_log_depth) * sizeof(cqe);
    if (pci_dma_write(pci, addr, &cqe, sizeof(cqe)) != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "kite: ACQ entry 0x%" PRIx64
                      " not writable\n", addr);
        kite_fatal(s, KITE_FATAL_AQ_DMA);
        return false;
    }
    s->aq_ci++;
    s->acq_pi++;
    kite_irq(s, KITE_MSIX_ADMIN);
    return true;
}

/* Commands up to the doorbell's index, in runs of bounded work. */
void kite_admin_bh(void *opaque)
{
    KiteState *s = opaque;
    uint64_t entries = s->pbl_entries_read;
    unsigned n;

    for (n = 0; kite_running(s) && !s->aq_hung && s->aq_ci != s->aq_pi;
         n++) {
        if (n == KITE_AQ_RUN_MAX_CMDS ||
            s->pbl_entries_read - entries >= KITE_AQ_RUN_MAX_PBL_ENTRIES) {
            s->aq_yields++;
            qemu_bh_schedule(s->aq_bh);
            return;
        }
        if (!kite_admin_one(s)) {
            break;
        }
    }
}

/*
 * x-table-memory: a test-only read-only QOM property, what the object
 * tables take now: {pd, cq, qp, mr} chunks allocated (KITE_TABLE_CHUNK
 * entries each) and mr-pages, the bytes of MR page-list copies. The qtests
 * check with it that memory follows the objects in use, not the limits.
 */
static void kite_table_memory_get(Object *obj, Visitor *v, const char *name,
                                  void *opaque, Error **errp)
{
    KiteState *s = KITE(obj);
    uint32_t pd = s->pd_tab.nchunks, cq = s->cq_tab.nchunks;
    uint32_t qp = s->qp_tab.nchunks, mr = s->mr_tab.nchunks;
    uint64_t pages = s->mr_cache_bytes;

    if (!visit_start_struct(v, name, NULL, 0, errp)) {
        return;
    }
    if (visit_type_uint32(v, "pd", &pd, errp) &&
        visit_type_uint32(v, "cq", &cq, errp) &&
        visit_type_uint32(v, "qp", &qp, errp) &&
        visit_type_uint32(v, "mr", &mr, errp) &&
        visit_type_uint64(v, "mr-pages", &pages, errp)) {
        visit_check_struct(v, errp);
    }
    visit_end_struct(v, NULL);
}

/*
 * x-admin-work: a test-only read-only QOM property, the admin queue's
 * work since the device was created: page-list entries its commands read
 * (pbl-entries) and runs of its bottom half that stopped with commands
 * left (yields). The qtests count work with it, not time.
 */
static void kite_admin_work_get(Object *obj, Visitor *v, const char *name,
                                void *opaque, Error **errp)
{
    KiteState *s = KITE(obj);
    uint64_t entries = s->pbl_entries_read, yields = s->aq_yields;

    if (!visit_start_struct(v, name, NULL, 0, errp)) {
        return;
    }
    if (visit_type_uint64(v, "pbl-entries", &entries, errp) &&
        visit_type_uint64(v, "yields", &yields, errp)) {
        visit_check_struct(v, errp);
    }
    visit_end_struct(v, NULL);
}

void kite_admin_class_init(ObjectClass *klass)
{
    object_class_property_add(klass, "x-admin-work", "KiteAdminWork",
                              kite_admin_work_get, NULL, NULL, NULL);
    object_class_property_set_description(klass, "x-admin-work",
                                          "test only: page-list entries "
                                          "read by admin commands and runs "
                                          "that yielded");
    object_class_property_add(klass, "x-table-memory", "KiteTableMemory",
                              kite_table_memory_get, NULL, NULL, NULL);
    object_class_property_set_description(klass, "x-table-memory",
                                          "test only: chunks of the object "
                                          "tables and bytes of MR page "
                                          "copies in use");
}
