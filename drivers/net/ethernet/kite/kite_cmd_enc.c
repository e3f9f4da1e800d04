// SPDX-License-Identifier: GPL-2.0
/*
 * Kite admin commands: encoders of every command and decoders of the
 * results, as the device ABI lays them out. Pure functions (no device, no
 * allocation), unit-tested by the kite_admin KUnit suite; kite_cmd.c
 * executes what they build.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/etherdevice.h>
#include <linux/mm.h>
#include <linux/string.h>

#include "kite.h"

/**
 * kite_enc_hdr() - start a command
 * @cmd: command to clear and fill
 * @opcode: enum kite_aq_opcode
 * @uctx: acting user context, 0 for the kernel
 */
void kite_enc_hdr(struct kite_aq_cmd *cmd, u8 opcode, u32 uctx)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->hdr.opcode = opcode;
	cmd->hdr.uctx = cpu_to_le32(uctx);
}

/**
 * kite_enc_query() - QUERY_DEVICE, QUERY_PORT or QUERY_STATS
 * @cmd: command
 * @opcode: one of the three query opcodes
 * @port: port number for QUERY_PORT, else 0
 *
 * The result buffer is filled in by kite_admin_exec().
 */
void kite_enc_query(struct kite_aq_cmd *cmd, u8 opcode, u8 port)
{
	kite_enc_hdr(cmd, opcode, 0);
	cmd->query.port = port;
}

/**
 * kite_enc_set_port() - SET_PORT
 * @cmd: command
 * @mask: KITE_SET_PORT_* fields to change
 * @mtu: Ethernet MTU in bytes (with KITE_SET_PORT_MTU)
 * @mac: MAC address (with KITE_SET_PORT_MAC), may be NULL otherwise
 */
void kite_enc_set_port(struct kite_aq_cmd *cmd, u32 mask, u32 mtu,
		       const u8 *mac)
{
	kite_enc_hdr(cmd, KITE_CMD_SET_PORT, 0);
	cmd->set_port.mask = cpu_to_le32(mask);
	cmd->set_port.port = KITE_PORT_NUM;
	if (mask & KITE_SET_PORT_MTU)
		cmd->set_port.mtu = cpu_to_le32(mtu);
	if ((mask & KITE_SET_PORT_MAC) && mac)
		ether_addr_copy(cmd->set_port.mac, mac);
}

/**
 * kite_enc_create_eq() - CREATE_EQ for a physically contiguous ring
 * @cmd: command
 * @ring: DMA address of the ring (page aligned)
 * @log_depth: log2 of the number of entries
 * @vector: MSI-X vector the EQ raises
 *
 * The driver allocates rings with dma_alloc_coherent(), so they are made of
 * whole CPU pages: the ring is described in PAGE_SIZE pages.
 */
void kite_enc_create_eq(struct kite_aq_cmd *cmd, dma_addr_t ring,
			u8 log_depth, u16 vector)
{
	size_t bytes = (size_t)sizeof(struct kite_eqe) << log_depth;

	kite_enc_hdr(cmd, KITE_CMD_CREATE_EQ, 0);
	cmd->create_eq.ring.addr = cpu_to_le64(ring);
	cmd->create_eq.ring.npages =
		cpu_to_le32(DIV_ROUND_UP(bytes, PAGE_SIZE));
	cmd->create_eq.ring.page_shift = PAGE_SHIFT;
	cmd->create_eq.ring.level = KITE_PBL_LEVEL_DIRECT;
	cmd->create_eq.log_depth = log_depth;
	cmd->create_eq.msix_vector = cpu_to_le16(vector);
}

/**
 * kite_enc_destroy() - a command that names one object by its handle
 * @cmd: command
 * @opcode: DESTROY_EQ, DEALLOC_UCTX, DEALLOC_PD, ...
 * @uctx: acting context
 * @handle: object number
 */
void kite_enc_destroy(struct kite_aq_cmd *cmd, u8 opcode, u32 uctx,
		      u32 handle)
{
	kite_enc_hdr(cmd, opcode, uctx);
	cmd->destroy.handle = cpu_to_le32(handle);
}

/**
 * kite_enc_create_cq() - CREATE_CQ
 * @cmd: command
 * @uctx: owning context (0: kernel)
 * @ring: where the device finds the CQE ring
 * @log_depth: log2 of the number of CQEs
 * @eqn: completion EQ for the CQ's notifications
 * @dbrec: DMA address of the CQ's struct kite_cq_dbrec, 0 for none
 */
void kite_enc_create_cq(struct kite_aq_cmd *cmd, u32 uctx,
			const struct kite_pbl_desc *ring, u8 log_depth,
			u16 eqn, u64 dbrec)
{
	kite_enc_hdr(cmd, KITE_CMD_CREATE_CQ, uctx);
	cmd->create_cq.ring = *ring;
	cmd->create_cq.log_depth = log_depth;
	cmd->create_cq.eqn = cpu_to_le16(eqn);
	cmd->create_cq.dbrec = cpu_to_le64(dbrec);
}

/**
 * kite_enc_modify_cq() - MODIFY_CQ: move a CQ to a new ring
 * @cmd: command
 * @uctx: owning context (0: kernel)
 * @cqn: CQ
 * @ring: where the device finds the new CQE ring
 * @log_depth: log2 of the new ring's number of CQEs
 */
void kite_enc_modify_cq(struct kite_aq_cmd *cmd, u32 uctx, u32 cqn,
			const struct kite_pbl_desc *ring, u8 log_depth)
{
	kite_enc_hdr(cmd, KITE_CMD_MODIFY_CQ, uctx);
	cmd->modify_cq.cqn = cpu_to_le32(cqn);
	cmd->modify_cq.ring = *ring;
	cmd->modify_cq.log_depth = log_depth;
}

/**
 * kite_enc_query_obj() - QUERY_CQ, QUERY_QP or QUERY_QP_STATS
 * @cmd: command
 * @opcode: one of the three object query opcodes
 * @uctx: owning context (0: kernel)
 * @handle: cqn or qpn
 *
 * The result buffer (QUERY_QP, QUERY_QP_STATS) is filled in by
 * kite_admin_exec().
 */
void kite_enc_query_obj(struct kite_aq_cmd *cmd, u8 opcode, u32 uctx,
			u32 handle)
{
	kite_enc_hdr(cmd, opcode, uctx);
	cmd->query_obj.handle = cpu_to_le32(handle);
}

/**
 * kite_enc_create_qp() - CREATE_QP
 * @cmd: command
 * @uctx: owning context (0: kernel)
 * @p: type, ring geometry, PD, CQs and rings of the new QP
 */
void kite_enc_create_qp(struct kite_aq_cmd *cmd, u32 uctx,
			const struct kite_qp_create_params *p)
{
	kite_enc_hdr(cmd, KITE_CMD_CREATE_QP, uctx);
	cmd->create_qp.qp_type = p->type;
	cmd->create_qp.flags = p->flags;
	cmd->create_qp.sq_log_depth = p->sq_log_depth;
	cmd->create_qp.sq_log_stride = p->sq_log_stride;
	cmd->create_qp.rq_log_depth = p->rq_log_depth;
	cmd->create_qp.rq_log_stride = p->rq_log_stride;
	cmd->create_qp.pdn = cpu_to_le32(p->pdn);
	cmd->create_qp.send_cqn = cpu_to_le32(p->send_cqn);
	cmd->create_qp.recv_cqn = cpu_to_le32(p->recv_cqn);
	cmd->create_qp.srqn = cpu_to_le32(p->srqn);
	cmd->create_qp.sq = *p->sq;
	cmd->create_qp.rq = *p->rq;
	cmd->create_qp.dbrec = cpu_to_le64(p->dbrec);
}

/**
 * kite_enc_modify_qp() - MODIFY_QP
 * @cmd: command
 * @uctx: owning context (0: kernel)
 * @qpn: QP
 * @attr: new attributes in the device's layout, with their attr_mask
 */
void kite_enc_modify_qp(struct kite_aq_cmd *cmd, u32 uctx, u32 qpn,
			const struct kite_qp_attr *attr)
{
	kite_enc_hdr(cmd, KITE_CMD_MODIFY_QP, uctx);
	cmd->modify_qp.qpn = cpu_to_le32(qpn);
	cmd->modify_qp.attr = *attr;
}

/**
 * kite_enc_reg_mr() - REG_MR
 * @cmd: command
 * @uctx: owning context (0: kernel)
 * @p: PD, access, range, pages and key variant of the new MR
 */
void kite_enc_reg_mr(struct kite_aq_cmd *cmd, u32 uctx,
		     const struct kite_mr_params *p)
{
	kite_enc_hdr(cmd, KITE_CMD_REG_MR, uctx);
	cmd->reg_mr.pdn = cpu_to_le32(p->pdn);
	cmd->reg_mr.access = cpu_to_le32(p->access);
	cmd->reg_mr.iova = cpu_to_le64(p->iova);
	cmd->reg_mr.length = cpu_to_le64(p->length);
	if (p->pbl)
		cmd->reg_mr.pbl = *p->pbl;
	cmd->reg_mr.key_variant = cpu_to_le32(p->key_variant);
}

/**
 * kite_enc_alloc_mr() - ALLOC_MR: an MR for fast registration
 * @cmd: command
 * @pdn: protection domain (of the kernel: fast registration is kernel-only)
 * @max_pages: pages a REG_MR WQE of the MR may name
 * @key_variant: variant byte of the key
 */
void kite_enc_alloc_mr(struct kite_aq_cmd *cmd, u32 pdn, u32 max_pages,
		       u32 key_variant)
{
	kite_enc_hdr(cmd, KITE_CMD_ALLOC_MR, 0);
	cmd->alloc_mr.pdn = cpu_to_le32(pdn);
	cmd->alloc_mr.max_pages = cpu_to_le32(max_pages);
	cmd->alloc_mr.key_variant = cpu_to_le32(key_variant);
}

/**
 * kite_enc_rereg_mr() - REREG_MR
 * @cmd: command
 * @uctx: owning context (0: kernel)
 * @p: the MR's key, the parts that change and their new values
 *
 * Only the fields of the parts named in @p->flags are encoded: the device
 * wants the others zero.
 */
void kite_enc_rereg_mr(struct kite_aq_cmd *cmd, u32 uctx,
		       const struct kite_rereg_params *p)
{
	kite_enc_hdr(cmd, KITE_CMD_REREG_MR, uctx);
	cmd->rereg_mr.key = cpu_to_le32(p->key);
	cmd->rereg_mr.flags = cpu_to_le32(p->flags);
	if (p->flags & KITE_REREG_PD)
		cmd->rereg_mr.pdn = cpu_to_le32(p->pdn);
	if (p->flags & KITE_REREG_ACCESS)
		cmd->rereg_mr.access = cpu_to_le32(p->access);
	if (p->flags & KITE_REREG_TRANS) {
		cmd->rereg_mr.iova = cpu_to_le64(p->iova);
		cmd->rereg_mr.length = cpu_to_le64(p->length);
		if (p->pbl)
			cmd->rereg_mr.pbl = *p->pbl;
	}
	cmd->rereg_mr.key_variant = cpu_to_le32(p->key_variant);
}

/**
 * kite_enc_alloc_mw() - ALLOC_MW
 * @cmd: command
 * @uctx: owning context (0: kernel)
 * @pdn: protection domain
 * @type: enum kite_mw_type
 * @key_variant: variant byte of the key
 */
void kite_enc_alloc_mw(struct kite_aq_cmd *cmd, u32 uctx, u32 pdn, u8 type,
		       u32 key_variant)
{
	kite_enc_hdr(cmd, KITE_CMD_ALLOC_MW, uctx);
	cmd->alloc_mw.pdn = cpu_to_le32(pdn);
	cmd->alloc_mw.type = type;
	cmd->alloc_mw.key_variant = cpu_to_le32(key_variant);
}

/**
 * kite_enc_gid() - ADD_GID or DEL_GID
 * @cmd: command
 * @opcode: KITE_CMD_ADD_GID or KITE_CMD_DEL_GID
 * @gid: 16-byte GID (network order)
 * @index: GID table index
 * @type: enum kite_gid_type
 * @port: port number
 */
void kite_enc_gid(struct kite_aq_cmd *cmd, u8 opcode, const u8 *gid,
		  u16 index, u8 type, u8 port)
{
	kite_enc_hdr(cmd, opcode, 0);
	memcpy(cmd->gid.gid, gid, sizeof(cmd->gid.gid));
	cmd->gid.index = cpu_to_le16(index);
	cmd->gid.type = type;
	cmd->gid.port = port;
}

/**
 * kite_dec_device_attr() - decode a QUERY_DEVICE result
 * @attr: result as the device wrote it
 * @caps: decoded values
 */
void kite_dec_device_attr(const struct kite_device_attr *attr,
			  struct kite_caps *caps)
{
	caps->abi_version = le32_to_cpu(attr->abi_version);
	caps->fw_version = le32_to_cpu(attr->fw_version);
	caps->sys_image_guid = le64_to_cpu(attr->sys_image_guid);
	caps->page_size_cap = le64_to_cpu(attr->page_size_cap);
	caps->max_mr_size = le64_to_cpu(attr->max_mr_size);
	caps->max_qp = le32_to_cpu(attr->max_qp);
	caps->max_cq = le32_to_cpu(attr->max_cq);
	caps->max_mr = le32_to_cpu(attr->max_mr);
	caps->max_pd = le32_to_cpu(attr->max_pd);
	caps->max_cqe = le32_to_cpu(attr->max_cqe);
	caps->max_qp_wr = le32_to_cpu(attr->max_qp_wr);
	caps->max_sge = le32_to_cpu(attr->max_sge);
	caps->max_inline = le32_to_cpu(attr->max_inline);
	caps->max_eq = le32_to_cpu(attr->max_eq);
	caps->max_uctx = le32_to_cpu(attr->max_uctx);
	caps->max_gid = le32_to_cpu(attr->max_gid);
	caps->max_rd_atom = le32_to_cpu(attr->max_rd_atom);
	caps->cap_flags = le32_to_cpu(attr->cap_flags);
	caps->num_msix = le32_to_cpu(attr->num_msix);
	caps->vendor_id = le32_to_cpu(attr->vendor_id);
	caps->vendor_part_id = le32_to_cpu(attr->vendor_part_id);
	caps->hw_version = le32_to_cpu(attr->hw_version);
	/* Reserved before ABI 1.3: not trusted to be zero. */
	if (KITE_ABI_VER_MINOR(caps->abi_version) >= KITE_ABI_MINOR_MEM_MGT) {
		caps->max_mw = le32_to_cpu(attr->max_mw);
		caps->max_frwr_pages = le32_to_cpu(attr->max_frwr_pages);
		caps->max_sge_rd = le32_to_cpu(attr->max_sge_rd);
	} else {
		caps->max_mw = 0;
		caps->max_frwr_pages = 0;
		caps->max_sge_rd = 0;
	}
	if (KITE_ABI_VER_MINOR(caps->abi_version) >= KITE_ABI_MINOR_SRQ) {
		caps->max_srq = le32_to_cpu(attr->max_srq);
		caps->max_srq_wr = le32_to_cpu(attr->max_srq_wr);
		caps->max_srq_sge = le32_to_cpu(attr->max_srq_sge);
	} else {
		caps->max_srq = 0;
		caps->max_srq_wr = 0;
		caps->max_srq_sge = 0;
	}
	if (KITE_ABI_VER_MINOR(caps->abi_version) >= KITE_ABI_MINOR_MCAST) {
		caps->max_mcast_grp = le16_to_cpu(attr->max_mcast_grp);
		caps->max_mcast_qp = le16_to_cpu(attr->max_mcast_qp);
	} else {
		caps->max_mcast_grp = 0;
		caps->max_mcast_qp = 0;
	}
}

/* Ring indexes are free-running 32-bit counters: a ring is at most 2^31. */
#define KITE_MAX_RING_DEPTH	BIT(31)

/**
 * kite_caps_invalid() - a device limit the ABI cannot express
 * @caps: decoded QUERY_DEVICE result
 *
 * Object numbers travel in 24-bit fields (doorbells, QP numbers), MR key
 * indexes in the key's upper bits, ring depths as 32-bit free-running
 * indexes and read/atomic depths in u8 attributes: a device reporting more
 * (or 0 objects) is refused rather than trusted.
 *
 * Return: the name of the first such limit, or NULL when all are usable.
 */
const char *kite_caps_invalid(const struct kite_caps *caps)
{
	if (!caps->max_qp || caps->max_qp > KITE_DB_NUM_MASK)
		return "max_qp";
	if (!caps->max_cq || caps->max_cq > KITE_DB_NUM_MASK)
		return "max_cq";
	if (!caps->max_pd || caps->max_pd > KITE_DB_NUM_MASK)
		return "max_pd";
	if (!caps->max_mr || caps->max_mr > U32_MAX >> KITE_KEY_VARIANT_BITS)
		return "max_mr";
	if (!caps->max_cqe || caps->max_cqe > KITE_MAX_RING_DEPTH)
		return "max_cqe";
	if (!caps->max_qp_wr || caps->max_qp_wr > KITE_MAX_RING_DEPTH)
		return "max_qp_wr";
	if (caps->max_rd_atom > U8_MAX)
		return "max_rd_atom";
	return NULL;
}

/**
 * kite_dec_port_attr() - decode a QUERY_PORT result
 * @attr: result as the device wrote it
 * @info: decoded values
 */
void kite_dec_port_attr(const struct kite_port_attr *attr,
			struct kite_port_info *info)
{
	info->state = attr->state;
	info->max_mtu = attr->max_mtu;
	info->active_mtu = attr->active_mtu;
	info->link_width = attr->link_width;
	info->link_speed = attr->link_speed;
	ether_addr_copy(info->mac, attr->mac);
	info->eth_mtu = le32_to_cpu(attr->eth_mtu);
	info->gid_tbl_len = le32_to_cpu(attr->gid_tbl_len);
}

/**
 * kite_dec_stats() - decode a QUERY_STATS result
 * @st: result as the device wrote it
 * @out: decoded values
 */
void kite_dec_stats(const struct kite_stats *st, struct kite_hw_stats *out)
{
	out->num_uctx = le32_to_cpu(st->num_uctx);
	out->num_pd = le32_to_cpu(st->num_pd);
	out->num_cq = le32_to_cpu(st->num_cq);
	out->num_qp = le32_to_cpu(st->num_qp);
	out->num_mr = le32_to_cpu(st->num_mr);
	out->num_eq = le32_to_cpu(st->num_eq);
	out->num_gid = le32_to_cpu(st->num_gid);
	out->eth_tx_packets = le64_to_cpu(st->eth_tx_packets);
	out->eth_tx_bytes = le64_to_cpu(st->eth_tx_bytes);
	out->eth_rx_packets = le64_to_cpu(st->eth_rx_packets);
	out->eth_rx_bytes = le64_to_cpu(st->eth_rx_bytes);
	out->eth_rx_dropped = le64_to_cpu(st->eth_rx_dropped);
	out->eth_tx_errors = le64_to_cpu(st->eth_tx_errors);
	out->roce_tx_packets = le64_to_cpu(st->roce_tx_packets);
	out->roce_rx_packets = le64_to_cpu(st->roce_rx_packets);
	out->roce_retransmits = le64_to_cpu(st->roce_retransmits);
	out->roce_icrc_errors = le64_to_cpu(st->roce_icrc_errors);
	out->eq_events_dropped = le64_to_cpu(st->eq_events_dropped);
	out->db_rejected = le64_to_cpu(st->db_rejected);
	/* ABI 1.1; a 1.0 device writes a shorter result and these stay 0. */
	out->roce_tx_bytes = le64_to_cpu(st->roce_tx_bytes);
	out->roce_rx_bytes = le64_to_cpu(st->roce_rx_bytes);
	out->roce_naks_sent = le64_to_cpu(st->roce_naks_sent);
	out->roce_naks_rcvd = le64_to_cpu(st->roce_naks_rcvd);
	out->roce_rnr_naks_sent = le64_to_cpu(st->roce_rnr_naks_sent);
	out->roce_rnr_naks_rcvd = le64_to_cpu(st->roce_rnr_naks_rcvd);
	out->roce_dup_requests = le64_to_cpu(st->roce_dup_requests);
	out->roce_rx_dropped = le64_to_cpu(st->roce_rx_dropped);
	out->roce_timeouts = le64_to_cpu(st->roce_timeouts);
	out->wire_dropped = le64_to_cpu(st->wire_dropped);
	/* ABI 1.2; 0 from an older device. */
	out->db_mmio = le64_to_cpu(st->db_mmio);
	out->db_rec_reads = le64_to_cpu(st->db_rec_reads);
	/* ABI 1.5; 0 from an older device. */
	out->roce_mcast_rx = le64_to_cpu(st->roce_mcast_rx);
	out->roce_mcast_dropped = le64_to_cpu(st->roce_mcast_dropped);
}

/**
 * kite_dec_cq_info() - decode a QUERY_CQ answer
 * @cqe: the command's completion (the answer is in out[])
 * @info: decoded values
 */
void kite_dec_cq_info(const struct kite_aq_cqe *cqe, struct kite_cq_info *info)
{
	info->log_depth = le32_to_cpu(cqe->out[KITE_CQ_QUERY_LOG_DEPTH]);
	info->eqn = le32_to_cpu(cqe->out[KITE_CQ_QUERY_EQN]);
	info->flags = le32_to_cpu(cqe->out[KITE_CQ_QUERY_FLAGS]);
	info->pi = le32_to_cpu(cqe->out[KITE_CQ_QUERY_PI]);
}
