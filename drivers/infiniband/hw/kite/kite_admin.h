/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kite admin queue and command layer. This part knows the device's admin
 * queue and command set but nothing about ib_core or the network stack.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_ADMIN_H
#define KITE_ADMIN_H

#include <linux/completion.h>
#include <linux/device.h>
#include <linux/if_ether.h>
#include <linux/semaphore.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include <kite/kite_hw.h>

#define KITE_ADMIN_DEF_TIMEOUT_MS	2000
#define KITE_ADMIN_OUTBUF_SIZE		256	/* per command slot */
#define KITE_AQ_LOG_DEPTH		5	/* wanted; capped by the device */

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
};

/**
 * enum kite_acq_result - what kite_acq_take() found
 * @KITE_ACQ_EMPTY: no new completion (phase bit not yet flipped)
 * @KITE_ACQ_MATCH: a completion for an outstanding command
 * @KITE_ACQ_UNKNOWN: a completion naming no outstanding command (stale,
 *		      duplicate or unknown cmd_id); it was consumed and dropped
 */
enum kite_acq_result {
	KITE_ACQ_EMPTY,
	KITE_ACQ_MATCH,
	KITE_ACQ_UNKNOWN,
};

/* kite_admin.c: the queue */
int kite_admin_init(struct kite_admin *adm, struct device *dev,
		    void __iomem *regs, u8 aq_log, u8 acq_log);
void kite_admin_destroy(struct kite_admin *adm);
void kite_admin_process_cq(struct kite_admin *adm);
enum kite_acq_result kite_acq_take(struct kite_admin *adm,
				   struct kite_admin_ctx **ctxp, u16 *cmd_id);
int kite_admin_exec(struct kite_admin *adm, struct kite_aq_cmd *cmd,
		    void *out, size_t out_len, struct kite_aq_cqe *cqe);
void kite_admin_mark_dead(struct kite_admin *adm);
bool kite_admin_is_dead(struct kite_admin *adm);
unsigned int kite_admin_timeout_ms(void);
int kite_status_to_errno(u8 status);
const char *kite_opcode_name(u8 opcode);
const char *kite_status_name(u8 status);
struct kite_aq_out_buf *kite_cmd_out_buf(struct kite_aq_cmd *cmd);

/* kite_cmd.c: encoders and decoders (pure) */
void kite_enc_hdr(struct kite_aq_cmd *cmd, u8 opcode, u32 uctx);
void kite_enc_query(struct kite_aq_cmd *cmd, u8 opcode, u8 port);
void kite_enc_set_port(struct kite_aq_cmd *cmd, u32 mask, u32 mtu,
		       const u8 *mac);
void kite_enc_create_eq(struct kite_aq_cmd *cmd, dma_addr_t ring,
			u8 log_depth, u16 vector);
void kite_enc_destroy(struct kite_aq_cmd *cmd, u8 opcode, u32 uctx,
		      u32 handle);
void kite_enc_gid(struct kite_aq_cmd *cmd, u8 opcode, const u8 *gid,
		  u16 index, u8 type, u8 port);
void kite_dec_device_attr(const struct kite_device_attr *attr,
			  struct kite_caps *caps);
void kite_dec_port_attr(const struct kite_port_attr *attr,
			struct kite_port_info *info);
void kite_dec_stats(const struct kite_stats *st, struct kite_hw_stats *out);

/* kite_cmd.c: typed commands */
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

#endif /* KITE_ADMIN_H */
