// SPDX-License-Identifier: GPL-2.0
/*
 * Kite core driver debugfs: /sys/kernel/debug/kite/<PCI function>/ with
 * the device's registers, its capabilities, the admin queue's counters and
 * the event queues. The RDMA driver adds its own directory (rdma/) below.
 * Every file is read-only and reads the state when it is opened.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "kite.h"

static struct dentry *kite_debugfs_root;

/* The registers a read does not disturb: every one but the doorbells. */
#define KITE_DBG_REG(r)		{ #r, KITE_REG_##r }
static const struct {
	const char *name;
	u32 off;
} kite_dbg_regs[] = {
	KITE_DBG_REG(VERSION),
	KITE_DBG_REG(DEV_CTRL),
	KITE_DBG_REG(DEV_STATUS),
	KITE_DBG_REG(FATAL_CODE),
	KITE_DBG_REG(AQ_BASE_LO),
	KITE_DBG_REG(AQ_BASE_HI),
	KITE_DBG_REG(AQ_LOG_DEPTH),
	KITE_DBG_REG(ACQ_BASE_LO),
	KITE_DBG_REG(ACQ_BASE_HI),
	KITE_DBG_REG(ACQ_LOG_DEPTH),
	KITE_DBG_REG(AEQ_BASE_LO),
	KITE_DBG_REG(AEQ_BASE_HI),
	KITE_DBG_REG(AEQ_LOG_DEPTH),
	KITE_DBG_REG(ETH_TX_BASE_LO),
	KITE_DBG_REG(ETH_TX_BASE_HI),
	KITE_DBG_REG(ETH_TX_LOG_DEPTH),
	KITE_DBG_REG(ETH_RX_BASE_LO),
	KITE_DBG_REG(ETH_RX_BASE_HI),
	KITE_DBG_REG(ETH_RX_LOG_DEPTH),
	KITE_DBG_REG(ETH_CTRL),
	KITE_DBG_REG(ETH_TX_CI),
	KITE_DBG_REG(ETH_RX_CI),
	KITE_DBG_REG(PERM_MAC_LO),
	KITE_DBG_REG(PERM_MAC_HI),
	KITE_DBG_REG(CAP_MAX_QP),
	KITE_DBG_REG(CAP_MAX_CQ),
	KITE_DBG_REG(CAP_MAX_MR),
	KITE_DBG_REG(CAP_MAX_PD),
	KITE_DBG_REG(CAP_MAX_CQE),
	KITE_DBG_REG(CAP_MAX_QP_WR),
	KITE_DBG_REG(CAP_MAX_SGE),
	KITE_DBG_REG(CAP_MAX_INLINE),
	KITE_DBG_REG(CAP_PAGE_SIZES),
	KITE_DBG_REG(CAP_PAGE_SIZES_HI),
	KITE_DBG_REG(CAP_MAX_MTU),
	KITE_DBG_REG(CAP_MAX_EQ),
	KITE_DBG_REG(CAP_MAX_UCTX),
	KITE_DBG_REG(CAP_MAX_GID),
	KITE_DBG_REG(CAP_MAX_MR_SIZE_LO),
	KITE_DBG_REG(CAP_MAX_MR_SIZE_HI),
	KITE_DBG_REG(CAP_MAX_AQ_LOG_DEPTH),
	KITE_DBG_REG(CAP_MAX_EQ_LOG_DEPTH),
	KITE_DBG_REG(CAP_MAX_ETH_LOG_DEPTH),
	KITE_DBG_REG(CAP_NUM_MSIX),
	KITE_DBG_REG(CAP_MAX_RD_ATOM),
	KITE_DBG_REG(CAP_FLAGS),
	KITE_DBG_REG(CAP_MAX_MW),
	KITE_DBG_REG(CAP_MAX_FRWR_PAGES),
	KITE_DBG_REG(CAP_MAX_SGE_RD),
	KITE_DBG_REG(CAP_MAX_SRQ),
	KITE_DBG_REG(CAP_MAX_SRQ_WR),
	KITE_DBG_REG(CAP_MAX_SRQ_SGE),
	KITE_DBG_REG(CAP_MAX_MCAST_GRP),
	KITE_DBG_REG(CAP_MAX_MCAST_QP),
};

static int kite_dbg_regs_show(struct seq_file *s, void *unused)
{
	struct kite_dev *kdev = s->private;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kite_dbg_regs); i++)
		seq_printf(s, "0x%03x %-22s 0x%08x\n", kite_dbg_regs[i].off,
			   kite_dbg_regs[i].name,
			   kite_rd32(kdev, kite_dbg_regs[i].off));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kite_dbg_regs);

/* What QUERY_DEVICE returned, decoded: the driver's copy. */
static int kite_dbg_caps_show(struct seq_file *s, void *unused)
{
	struct kite_dev *kdev = s->private;
	const struct kite_caps *c = &kdev->caps;

	mutex_lock(&kdev->state_lock);
	seq_printf(s, "abi_version %u.%u\n", KITE_ABI_VER_MAJOR(c->abi_version),
		   KITE_ABI_VER_MINOR(c->abi_version));
	seq_printf(s, "fw_version 0x%08x\n", c->fw_version);
	seq_printf(s, "hw_version 0x%x\n", c->hw_version);
	seq_printf(s, "vendor_id 0x%04x\n", c->vendor_id);
	seq_printf(s, "vendor_part_id 0x%04x\n", c->vendor_part_id);
	seq_printf(s, "sys_image_guid 0x%016llx\n", c->sys_image_guid);
	seq_printf(s, "page_size_cap 0x%llx\n", c->page_size_cap);
	seq_printf(s, "max_mr_size %llu\n", c->max_mr_size);
	seq_printf(s, "cap_flags 0x%x\n", c->cap_flags);
	seq_printf(s, "max_qp %u\nmax_cq %u\nmax_mr %u\nmax_pd %u\n",
		   c->max_qp, c->max_cq, c->max_mr, c->max_pd);
	seq_printf(s, "max_cqe %u\nmax_qp_wr %u\nmax_sge %u\nmax_inline %u\n",
		   c->max_cqe, c->max_qp_wr, c->max_sge, c->max_inline);
	seq_printf(s, "max_eq %u\nmax_uctx %u\nmax_gid %u\nmax_rd_atom %u\n",
		   c->max_eq, c->max_uctx, c->max_gid, c->max_rd_atom);
	seq_printf(s, "num_msix %u\nmax_mw %u\nmax_frwr_pages %u\nmax_sge_rd %u\n",
		   c->num_msix, c->max_mw, c->max_frwr_pages, c->max_sge_rd);
	seq_printf(s, "max_srq %u\nmax_srq_wr %u\nmax_srq_sge %u\n",
		   c->max_srq, c->max_srq_wr, c->max_srq_sge);
	seq_printf(s, "max_mcast_grp %u\nmax_mcast_qp %u\n",
		   c->max_mcast_grp, c->max_mcast_qp);
	mutex_unlock(&kdev->state_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kite_dbg_caps);

/* The admin queue's counters since the function last started (a recovery
 * starts them again) and its ring indexes.
 */
static int kite_dbg_admin_show(struct seq_file *s, void *unused)
{
	struct kite_dev *kdev = s->private;
	struct kite_admin *adm = &kdev->admin;
	struct kite_admin_stats st;
	unsigned long flags;
	u32 pi, ci;
	bool dead;

	mutex_lock(&kdev->state_lock);
	if (!adm->ctx) {
		mutex_unlock(&kdev->state_lock);
		seq_puts(s, "stopped\n");
		return 0;
	}
	spin_lock_irqsave(&adm->lock, flags);
	st = adm->stats;
	pi = adm->pi;
	ci = adm->acq_ci;
	dead = adm->dead;
	spin_unlock_irqrestore(&adm->lock, flags);
	seq_printf(s, "aq_depth %u\nacq_depth %u\npi %u\nacq_ci %u\ndead %u\n",
		   1U << adm->aq_log, 1U << adm->acq_log, pi, ci, dead);
	mutex_unlock(&kdev->state_lock);

	seq_printf(s, "posted %llu\nok %llu\nfailed %llu\ntimeouts %llu\n",
		   st.posted, st.ok, st.failed, st.timeouts);
	seq_printf(s, "latency_avg_ns %llu\nlatency_max_ns %llu\n",
		   st.ok + st.failed ?
		   div64_u64(st.lat_sum_ns, st.ok + st.failed) : 0,
		   st.lat_max_ns);
	if (st.failed)
		seq_printf(s, "last_failure %s (0x%02x) status %s (0x%02x)\n",
			   kite_opcode_name(st.last_fail_opcode),
			   st.last_fail_opcode,
			   kite_status_name(st.last_fail_status),
			   st.last_fail_status);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kite_dbg_admin);

static void kite_dbg_eq(struct seq_file *s, const struct kite_eq *eq)
{
	seq_printf(s, "eqn %u vector %u depth %u ci %u irq %u created %u\n",
		   eq->eqn, eq->vector, eq->ring ? 1U << eq->log_depth : 0,
		   READ_ONCE(eq->ci), eq->irq_requested, eq->created);
}

/* The async EQ (EQ 0, programmed by registers) and the completion EQs. */
static int kite_dbg_eqs_show(struct seq_file *s, void *unused)
{
	struct kite_dev *kdev = s->private;
	int i;

	mutex_lock(&kdev->state_lock);
	kite_dbg_eq(s, &kdev->aeq);
	for (i = 0; i < kdev->num_comp_eqs; i++)
		kite_dbg_eq(s, &kdev->comp_eqs[i]);
	mutex_unlock(&kdev->state_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kite_dbg_eqs);

/**
 * kite_debugfs_add() - create a function's debugfs directory
 * @kdev: device with its registers mapped, before kite_dev_start()
 *
 * Before the auxiliary devices exist, so that their drivers find
 * @kdev->debugfs. Failures are not errors: debugfs is for diagnosis only.
 */
void kite_debugfs_add(struct kite_dev *kdev)
{
	struct dentry *dir;

	dir = debugfs_create_dir(pci_name(kdev->pdev), kite_debugfs_root);
	kdev->debugfs = dir;
	debugfs_create_file("regs", 0400, dir, kdev, &kite_dbg_regs_fops);
	debugfs_create_file("caps", 0400, dir, kdev, &kite_dbg_caps_fops);
	debugfs_create_file("admin", 0400, dir, kdev, &kite_dbg_admin_fops);
	debugfs_create_file("eqs", 0400, dir, kdev, &kite_dbg_eqs_fops);
}

/**
 * kite_debugfs_del() - remove a function's debugfs directory
 * @kdev: device whose auxiliary devices are gone already
 *
 * Waits for the readers of its files.
 */
void kite_debugfs_del(struct kite_dev *kdev)
{
	debugfs_remove_recursive(kdev->debugfs);
	kdev->debugfs = NULL;
}

void kite_debugfs_register(void)
{
	kite_debugfs_root = debugfs_create_dir(KITE_DRV_NAME, NULL);
}

void kite_debugfs_unregister(void)
{
	debugfs_remove_recursive(kite_debugfs_root);
	kite_debugfs_root = NULL;
}
