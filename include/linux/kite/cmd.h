/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kite admin queue and its typed command layer, provided by the core driver
 * (kite.ko) to itself and to its auxiliary drivers (kite_ib.ko). Every admin
 * command of the device has one wrapper here; no other code encodes one.
 * This part knows the device's command set but nothing about ib_core or the
 * network stack.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef _LINUX_KITE_CMD_H
#define _LINUX_KITE_CMD_H

#include <linux/completion.h>
#include <linux/device.h>
#include <linux/if_ether.h>
#include <linux/semaphore.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include <kite/kite_hw.h>

#define KITE_ADMIN_OUTBUF_SIZE		256	/* per command slot */

/**
 * struct kite_admin_ctx - one outstanding admin command
 * @done: completed by the interrupt handler (or when the queue dies)
 * @cqe: copy of the completion entry
 * @cmd_id: identifier placed in the command and echoed by the device
 * @in_use: slot owned by a caller
 * @completed: @cqe holds the device's answer
 */
struct kite_admin_ctx {
	struct completion done;
	struct kite_aq_cqe cqe;
	u16 cmd_id;
	bool in_use;
	bool completed;
};

/**
 * struct kite_admin_stats - admin command counters
 * @posted: commands written to the ring
 * @ok: commands that completed with KITE_STS_OK
 * @failed: commands that completed with another status
 * @timeouts: commands that got no completion (timeout or dead device)
 * @lat_sum_ns: sum of the latencies of the completed commands
 * @lat_max_ns: the largest of them
 * @last_fail_opcode: opcode of the last failed command
 * @last_fail_status: its status
 */
struct kite_admin_stats {
	u64 posted;
	u64 ok;
	u64 failed;
	u64 timeouts;
	u64 lat_sum_ns;
	u64 lat_max_ns;
	u8 last_fail_opcode;
	u8 last_fail_status;
};

/**
 * struct kite_admin - admin queue state
 * @dev: device used for DMA and logging
 * @regs: BAR0 mapping
 * @aq: submission ring, 2^@aq_log entries
 * @aq_dma: DMA address of @aq
 * @acq: completion ring, 2^@acq_log entries
 * @acq_dma: DMA address of @acq
 * @outbuf: one KITE_ADMIN_OUTBUF_SIZE result buffer per context
 * @outbuf_dma: DMA address of @outbuf
 * @ctx: one context per submission slot
 * @avail: counts free contexts
 * @lock: protects @pi, @acq_ci, @gen and the contexts
 * @pi: free-running producer index of @aq
 * @acq_ci: free-running consumer index of @acq
 * @gen: generation mixed into the high bits of cmd_id (the low @aq_log bits
 *	 are the context index). Defensive: a completion the device writes
 *	 twice, or late for a command that was given up, names an older
 *	 generation and is dropped instead of completing the slot's next user.
 * @aq_log: log2 of the submission ring depth
 * @acq_log: log2 of the completion ring depth
 * @dead: set once the device stopped answering; commands fail fast
 * @stats: what the commands did (under @lock), shown in debugfs
 */
struct kite_admin {
	struct device *dev;
	void __iomem *regs;
	struct kite_aq_cmd *aq;
	dma_addr_t aq_dma;
	struct kite_aq_cqe *acq;
	dma_addr_t acq_dma;
	void *outbuf;
	dma_addr_t outbuf_dma;
	struct kite_admin_ctx *ctx;
	struct semaphore avail;
	spinlock_t lock; /* see above */
	u32 pi;
	u32 acq_ci;
	u16 gen;
	u8 aq_log;
	u8 acq_log;
	bool dead;
	struct kite_admin_stats stats;
};

/* Decoded QUERY_DEVICE result (CPU byte order). */
struct kite_caps {
	u32 abi_version;
	u32 fw_version;
	u64 sys_image_guid;
	u64 page_size_cap;
	u64 max_mr_size;
	u32 max_qp;
	u32 max_cq;
	u32 max_mr;
	u32 max_pd;
	u32 max_cqe;
	u32 max_qp_wr;
	u32 max_sge;
	u32 max_inline;
	u32 max_eq;
	u32 max_uctx;
	u32 max_gid;
	u32 max_rd_atom;
	u32 cap_flags;
	u32 num_msix;
	u32 vendor_id;
	u32 vendor_part_id;
	u32 hw_version;
	u32 max_mw;		/* ABI 1.3, else 0 */
	u32 max_frwr_pages;	/* ABI 1.3, else 0 */
	u32 max_sge_rd;		/* ABI 1.3, else 0 */
	u32 max_srq;		/* ABI 1.4, else 0 */
	u32 max_srq_wr;		/* ABI 1.4, else 0 */
	u32 max_srq_sge;	/* ABI 1.4, else 0 */
	u32 max_mcast_grp;	/* ABI 1.5, else 0 */
	u32 max_mcast_qp;	/* ABI 1.5: QPs of one group, else 0 */
};

/* Decoded QUERY_PORT result. */
struct kite_port_info {
	u8 state;
	u8 max_mtu;
	u8 active_mtu;
	u8 link_width;
	u8 link_speed;
	u8 mac[ETH_ALEN];
	u32 eth_mtu;
	u32 gid_tbl_len;
};

/* Decoded QUERY_STATS result. */
struct kite_hw_stats {
	u64 num_uctx;
	u64 num_pd;
	u64 num_cq;
	u64 num_qp;
	u64 num_mr;
	u64 num_eq;
	u64 num_gid;
	u64 eth_tx_packets;
	u64 eth_tx_bytes;
	u64 eth_rx_packets;
	u64 eth_rx_bytes;
	u64 eth_rx_dropped;
	u64 eth_tx_errors;
	u64 roce_tx_packets;
	u64 roce_rx_packets;
	u64 roce_retransmits;
	u64 roce_icrc_errors;
	u64 eq_events_dropped;
	u64 db_rejected;
	u64 roce_tx_bytes;
	u64 roce_rx_bytes;
	u64 roce_naks_sent;
	u64 roce_naks_rcvd;
	u64 roce_rnr_naks_sent;
	u64 roce_rnr_naks_rcvd;
	u64 roce_dup_requests;
	u64 roce_rx_dropped;
	u64 roce_timeouts;
	u64 wire_dropped;
	u64 db_mmio;
	u64 db_rec_reads;
	u64 roce_mcast_rx;
	u64 roce_mcast_dropped;
};

/* Decoded QUERY_CQ answer (the completion's out[KITE_CQ_QUERY_*]). */
struct kite_cq_info {
	u32 log_depth;
	u32 eqn;
	u32 flags;
	u32 pi;
};

/* Decoded QUERY_SRQ answer (the completion's out[KITE_SRQ_QUERY_*]). */
struct kite_srq_info {
	u32 log_depth;
	u32 limit;
	u32 posted;
	u32 flags;
};

/**
 * struct kite_srq_create_params - what CREATE_SRQ tells the device
 * @pdn: protection domain
 * @log_depth: log2 of the slots
 * @log_stride: log2 of the WQE size
 * @limit: armed limit, 0 for none
 * @ring: where the device finds the ring
 */
struct kite_srq_create_params {
	u32 pdn;
	u8 log_depth;
	u8 log_stride;
	u32 limit;
	const struct kite_pbl_desc *ring;
};

/**
 * struct kite_qp_create_params - what CREATE_QP tells the device
 * @type: enum kite_qp_type
 * @flags: KITE_QP_FLAG_*
 * @sq_log_depth: log2 of the SQ depth
 * @sq_log_stride: log2 of the SQ WQE size
 * @rq_log_depth: log2 of the RQ depth
 * @rq_log_stride: log2 of the RQ WQE size
 * @pdn: protection domain
 * @send_cqn: CQ of the send queue
 * @recv_cqn: CQ of the receive queue
 * @srqn: with KITE_QP_FLAG_SRQ: the SRQ receives come from, else 0
 * @sq: where the device finds the SQ ring
 * @rq: where the device finds the RQ ring
 * @dbrec: DMA address of the QP's struct kite_qp_dbrec, 0 for none
 */
struct kite_qp_create_params {
	u8 type;
	u8 flags;
	u8 sq_log_depth;
	u8 sq_log_stride;
	u8 rq_log_depth;
	u8 rq_log_stride;
	u32 pdn;
	u32 send_cqn;
	u32 recv_cqn;
	u32 srqn;
	const struct kite_pbl_desc *sq;
	const struct kite_pbl_desc *rq;
	u64 dbrec;
};

/**
 * struct kite_mr_params - what REG_MR tells the device
 * @pdn: protection domain
 * @access: KITE_ACCESS_*
 * @iova: I/O virtual address of the first byte
 * @length: bytes
 * @pbl: the pages, or NULL for an MR with KITE_MR_DMA_ALL in @key_variant
 * @key_variant: variant byte of the new key, optionally | KITE_MR_DMA_ALL
 */
struct kite_mr_params {
	u32 pdn;
	u32 access;
	u64 iova;
	u64 length;
	const struct kite_pbl_desc *pbl;
	u32 key_variant;
};

/**
 * struct kite_rereg_params - what REREG_MR tells the device
 * @key: the MR's current key
 * @flags: KITE_REREG_* parts that change (at least one)
 * @pdn: new protection domain (KITE_REREG_PD)
 * @access: new KITE_ACCESS_* (KITE_REREG_ACCESS)
 * @iova: new I/O virtual address (KITE_REREG_TRANS)
 * @length: new length in bytes (KITE_REREG_TRANS)
 * @pbl: the new pages (KITE_REREG_TRANS)
 * @key_variant: variant byte of the MR's new key
 */
struct kite_rereg_params {
	u32 key;
	u32 flags;
	u32 pdn;
	u32 access;
	u64 iova;
	u64 length;
	const struct kite_pbl_desc *pbl;
	u32 key_variant;
};

bool kite_admin_is_dead(struct kite_admin *adm);

/* kite_cmd.c: one typed wrapper per admin command */
int kite_cmd_query_device(struct kite_admin *adm, struct kite_caps *caps);
int kite_cmd_query_port(struct kite_admin *adm, u8 port,
			struct kite_port_info *info);
int kite_cmd_set_port(struct kite_admin *adm, u32 mask, u32 mtu,
		      const u8 *mac);
int kite_cmd_create_eq(struct kite_admin *adm, dma_addr_t ring, u8 log_depth,
		       u16 vector, u32 *eqn);
int kite_cmd_destroy(struct kite_admin *adm, u8 opcode, u32 uctx,
		     u32 handle);
int kite_cmd_alloc_uctx(struct kite_admin *adm, u32 *uctx);
int kite_cmd_alloc_pd(struct kite_admin *adm, u32 uctx, u32 *pdn);
int kite_cmd_create_cq(struct kite_admin *adm, u32 uctx,
		       const struct kite_pbl_desc *ring, u8 log_depth,
		       u16 eqn, u64 dbrec, u32 *cqn);
int kite_cmd_modify_cq(struct kite_admin *adm, u32 uctx, u32 cqn,
		       const struct kite_pbl_desc *ring, u8 log_depth,
		       u32 *old_pi);
int kite_cmd_query_cq(struct kite_admin *adm, u32 uctx, u32 cqn,
		      struct kite_cq_info *info);
int kite_cmd_create_qp(struct kite_admin *adm, u32 uctx,
		       const struct kite_qp_create_params *p, u32 *qpn);
int kite_cmd_modify_qp(struct kite_admin *adm, u32 uctx, u32 qpn,
		       const struct kite_qp_attr *attr);
int kite_cmd_query_qp(struct kite_admin *adm, u32 uctx, u32 qpn,
		      struct kite_qp_attr *attr);
int kite_cmd_query_qp_stats(struct kite_admin *adm, u32 uctx, u32 qpn,
			    struct kite_qp_stats *st);
int kite_cmd_create_srq(struct kite_admin *adm, u32 uctx,
			const struct kite_srq_create_params *p, u32 *srqn);
int kite_cmd_modify_srq(struct kite_admin *adm, u32 uctx, u32 srqn, u32 mask,
			u32 limit);
int kite_cmd_query_srq(struct kite_admin *adm, u32 uctx, u32 srqn,
		       struct kite_srq_info *info);
int kite_cmd_mcast(struct kite_admin *adm, u8 opcode, u32 uctx, u32 qpn,
		   const u8 *gid);
int kite_cmd_reg_mr(struct kite_admin *adm, u32 uctx,
		    const struct kite_mr_params *p, u32 *key);
int kite_cmd_alloc_mr(struct kite_admin *adm, u32 pdn, u32 max_pages,
		      u32 key_variant, u32 *key);
int kite_cmd_rereg_mr(struct kite_admin *adm, u32 uctx,
		      const struct kite_rereg_params *p, u32 *key);
int kite_cmd_alloc_mw(struct kite_admin *adm, u32 uctx, u32 pdn, u8 type,
		      u32 key_variant, u32 *key);
int kite_cmd_gid(struct kite_admin *adm, u8 opcode, const u8 *gid, u16 index,
		 u8 type, u8 port);
int kite_cmd_query_stats(struct kite_admin *adm, struct kite_hw_stats *st);

static inline int kite_cmd_destroy_eq(struct kite_admin *adm, u32 eqn)
{
	return kite_cmd_destroy(adm, KITE_CMD_DESTROY_EQ, 0, eqn);
}

static inline int kite_cmd_dealloc_uctx(struct kite_admin *adm, u32 uctx)
{
	return kite_cmd_destroy(adm, KITE_CMD_DEALLOC_UCTX, 0, uctx);
}

static inline int kite_cmd_dealloc_pd(struct kite_admin *adm, u32 uctx,
				      u32 pdn)
{
	return kite_cmd_destroy(adm, KITE_CMD_DEALLOC_PD, uctx, pdn);
}

static inline int kite_cmd_destroy_cq(struct kite_admin *adm, u32 uctx,
				      u32 cqn)
{
	return kite_cmd_destroy(adm, KITE_CMD_DESTROY_CQ, uctx, cqn);
}

static inline int kite_cmd_destroy_srq(struct kite_admin *adm, u32 uctx,
				       u32 srqn)
{
	return kite_cmd_destroy(adm, KITE_CMD_DESTROY_SRQ, uctx, srqn);
}

static inline int kite_cmd_destroy_qp(struct kite_admin *adm, u32 uctx,
				      u32 qpn)
{
	return kite_cmd_destroy(adm, KITE_CMD_DESTROY_QP, uctx, qpn);
}

static inline int kite_cmd_dereg_mr(struct kite_admin *adm, u32 uctx,
				    u32 key)
{
	return kite_cmd_destroy(adm, KITE_CMD_DEREG_MR, uctx, key);
}

static inline int kite_cmd_dealloc_mw(struct kite_admin *adm, u32 uctx,
				      u32 key)
{
	return kite_cmd_destroy(adm, KITE_CMD_DEALLOC_MW, uctx, key);
}

static inline int kite_cmd_add_gid(struct kite_admin *adm, const u8 *gid,
				   u16 index, u8 type, u8 port)
{
	return kite_cmd_gid(adm, KITE_CMD_ADD_GID, gid, index, type, port);
}

static inline int kite_cmd_del_gid(struct kite_admin *adm, const u8 *gid,
				   u16 index, u8 type, u8 port)
{
	return kite_cmd_gid(adm, KITE_CMD_DEL_GID, gid, index, type, port);
}

#endif /* _LINUX_KITE_CMD_H */
