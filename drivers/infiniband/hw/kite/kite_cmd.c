// SPDX-License-Identifier: GPL-2.0
/*
 * Kite admin commands: encoders and decoders of the command and result
 * layouts (pure functions, unit-tested) and one typed wrapper per command.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/etherdevice.h>
#include <linux/mm.h>
#include <linux/string.h>

#include "kite_admin.h"

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
}

/**
 * kite_cmd_query_device() - QUERY_DEVICE
 * @adm: admin queue
 * @caps: decoded device attributes
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_query_device(struct kite_admin *adm, struct kite_caps *caps)
{
	struct kite_device_attr attr;
	struct kite_aq_cmd cmd;
	int err;

	kite_enc_query(&cmd, KITE_CMD_QUERY_DEVICE, 0);
	err = kite_admin_exec(adm, &cmd, &attr, sizeof(attr), NULL);
	if (err)
		return err;
	kite_dec_device_attr(&attr, caps);
	return 0;
}

/**
 * kite_cmd_query_port() - QUERY_PORT
 * @adm: admin queue
 * @port: port number (KITE_PORT_NUM)
 * @info: decoded port attributes
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_query_port(struct kite_admin *adm, u8 port,
			struct kite_port_info *info)
{
	struct kite_port_attr attr;
	struct kite_aq_cmd cmd;
	int err;

	kite_enc_query(&cmd, KITE_CMD_QUERY_PORT, port);
	err = kite_admin_exec(adm, &cmd, &attr, sizeof(attr), NULL);
	if (err)
		return err;
	kite_dec_port_attr(&attr, info);
	return 0;
}

/**
 * kite_cmd_query_stats() - QUERY_STATS
 * @adm: admin queue
 * @st: decoded device counters
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_query_stats(struct kite_admin *adm, struct kite_hw_stats *st)
{
	struct kite_stats raw;
	struct kite_aq_cmd cmd;
	int err;

	kite_enc_query(&cmd, KITE_CMD_QUERY_STATS, 0);
	err = kite_admin_exec(adm, &cmd, &raw, sizeof(raw), NULL);
	if (err)
		return err;
	kite_dec_stats(&raw, st);
	return 0;
}

/**
 * kite_cmd_set_port() - SET_PORT
 * @adm: admin queue
 * @mask: KITE_SET_PORT_* fields to change
 * @mtu: Ethernet MTU in bytes (with KITE_SET_PORT_MTU)
 * @mac: MAC address (with KITE_SET_PORT_MAC), may be NULL otherwise
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_set_port(struct kite_admin *adm, u32 mask, u32 mtu,
		      const u8 *mac)
{
	struct kite_aq_cmd cmd;

	kite_enc_set_port(&cmd, mask, mtu, mac);
	return kite_admin_exec(adm, &cmd, NULL, 0, NULL);
}

/* Execute a command that creates an object; its handle is in out[0]. */
static int kite_cmd_create(struct kite_admin *adm, struct kite_aq_cmd *cmd,
			   u32 *handle)
{
	struct kite_aq_cqe cqe;
	int err;

	err = kite_admin_exec(adm, cmd, NULL, 0, &cqe);
	if (err)
		return err;
	*handle = le32_to_cpu(cqe.out[0]);
	return 0;
}

/**
 * kite_cmd_create_eq() - CREATE_EQ for a physically contiguous ring
 * @adm: admin queue
 * @ring: DMA address of the ring (page aligned)
 * @log_depth: log2 of the number of entries
 * @vector: MSI-X vector the EQ raises
 * @eqn: the new EQ number
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_create_eq(struct kite_admin *adm, dma_addr_t ring, u8 log_depth,
		       u16 vector, u32 *eqn)
{
	struct kite_aq_cmd cmd;

	kite_enc_create_eq(&cmd, ring, log_depth, vector);
	return kite_cmd_create(adm, &cmd, eqn);
}

/**
 * kite_cmd_destroy() - a command that frees one object by its handle
 * @adm: admin queue
 * @opcode: DESTROY_EQ, DEALLOC_UCTX, DEALLOC_PD, ...
 * @uctx: acting context (0: kernel)
 * @handle: object number
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_destroy(struct kite_admin *adm, u8 opcode, u32 uctx, u32 handle)
{
	struct kite_aq_cmd cmd;

	kite_enc_destroy(&cmd, opcode, uctx, handle);
	return kite_admin_exec(adm, &cmd, NULL, 0, NULL);
}

/**
 * kite_cmd_alloc_uctx() - ALLOC_UCTX
 * @adm: admin queue
 * @uctx: the new context, which is also its doorbell page
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_alloc_uctx(struct kite_admin *adm, u32 *uctx)
{
	struct kite_aq_cmd cmd;

	kite_enc_hdr(&cmd, KITE_CMD_ALLOC_UCTX, 0);
	return kite_cmd_create(adm, &cmd, uctx);
}

/**
 * kite_cmd_alloc_pd() - ALLOC_PD
 * @adm: admin queue
 * @uctx: owning context (0: kernel)
 * @pdn: the new PD number
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_alloc_pd(struct kite_admin *adm, u32 uctx, u32 *pdn)
{
	struct kite_aq_cmd cmd;

	kite_enc_hdr(&cmd, KITE_CMD_ALLOC_PD, uctx);
	return kite_cmd_create(adm, &cmd, pdn);
}

/**
 * kite_cmd_gid() - ADD_GID or DEL_GID
 * @adm: admin queue
 * @opcode: KITE_CMD_ADD_GID or KITE_CMD_DEL_GID
 * @gid: 16-byte GID (network order)
 * @index: GID table index
 * @type: enum kite_gid_type
 * @port: port number
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_gid(struct kite_admin *adm, u8 opcode, const u8 *gid, u16 index,
		 u8 type, u8 port)
{
	struct kite_aq_cmd cmd;

	kite_enc_gid(&cmd, opcode, gid, index, type, port);
	return kite_admin_exec(adm, &cmd, NULL, 0, NULL);
}
