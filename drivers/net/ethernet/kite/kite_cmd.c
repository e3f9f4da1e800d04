// SPDX-License-Identifier: GPL-2.0
/*
 * Kite admin commands: one typed wrapper per command of the device. Each
 * encodes its command (kite_cmd_enc.c), executes it on the admin queue
 * and decodes the answer. They are the only way into the admin queue for
 * the rest of the core and, exported in the KITE namespace, for the
 * auxiliary drivers.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/export.h>

#include "kite.h"

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
EXPORT_SYMBOL_NS_GPL(kite_cmd_query_device, KITE);

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
EXPORT_SYMBOL_NS_GPL(kite_cmd_query_port, KITE);

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
EXPORT_SYMBOL_NS_GPL(kite_cmd_query_stats, KITE);

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
EXPORT_SYMBOL_NS_GPL(kite_cmd_set_port, KITE);

/* Execute a command whose answer is one value in out[0]: the handle of a
 * created object, or MODIFY_CQ's final producer index.
 */
static int kite_cmd_exec_out0(struct kite_admin *adm,
			      struct kite_aq_cmd *cmd, u32 *val)
{
	struct kite_aq_cqe cqe;
	int err;

	err = kite_admin_exec(adm, cmd, NULL, 0, &cqe);
	if (err)
		return err;
	*val = le32_to_cpu(cqe.out[0]);
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
	return kite_cmd_exec_out0(adm, &cmd, eqn);
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_create_eq, KITE);

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
EXPORT_SYMBOL_NS_GPL(kite_cmd_destroy, KITE);

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
	return kite_cmd_exec_out0(adm, &cmd, uctx);
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_alloc_uctx, KITE);

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
	return kite_cmd_exec_out0(adm, &cmd, pdn);
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_alloc_pd, KITE);

/**
 * kite_cmd_create_cq() - CREATE_CQ
 * @adm: admin queue
 * @uctx: owning context (0: kernel)
 * @ring: where the device finds the CQE ring
 * @log_depth: log2 of the number of CQEs
 * @eqn: completion EQ for the CQ's notifications
 * @dbrec: DMA address of the CQ's struct kite_cq_dbrec, 0 for none
 * @cqn: the new CQ number
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_create_cq(struct kite_admin *adm, u32 uctx,
		       const struct kite_pbl_desc *ring, u8 log_depth,
		       u16 eqn, u64 dbrec, u32 *cqn)
{
	struct kite_aq_cmd cmd;

	kite_enc_create_cq(&cmd, uctx, ring, log_depth, eqn, dbrec);
	return kite_cmd_exec_out0(adm, &cmd, cqn);
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_create_cq, KITE);

/**
 * kite_cmd_modify_cq() - MODIFY_CQ: move a CQ to a new ring
 * @adm: admin queue
 * @uctx: owning context (0: kernel)
 * @cqn: CQ
 * @ring: where the device finds the new CQE ring
 * @log_depth: log2 of the new ring's number of CQEs
 * @old_pi: the old ring's final producer index (the completion's out[0])
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_modify_cq(struct kite_admin *adm, u32 uctx, u32 cqn,
		       const struct kite_pbl_desc *ring, u8 log_depth,
		       u32 *old_pi)
{
	struct kite_aq_cmd cmd;

	kite_enc_modify_cq(&cmd, uctx, cqn, ring, log_depth);
	return kite_cmd_exec_out0(adm, &cmd, old_pi);
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_modify_cq, KITE);

/**
 * kite_cmd_query_cq() - QUERY_CQ
 * @adm: admin queue
 * @uctx: owning context (0: kernel)
 * @cqn: CQ
 * @info: the device's view of the CQ
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_query_cq(struct kite_admin *adm, u32 uctx, u32 cqn,
		      struct kite_cq_info *info)
{
	struct kite_aq_cqe cqe;
	struct kite_aq_cmd cmd;
	int err;

	kite_enc_query_obj(&cmd, KITE_CMD_QUERY_CQ, uctx, cqn);
	err = kite_admin_exec(adm, &cmd, NULL, 0, &cqe);
	if (err)
		return err;
	kite_dec_cq_info(&cqe, info);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_query_cq, KITE);

/**
 * kite_cmd_create_qp() - CREATE_QP
 * @adm: admin queue
 * @uctx: owning context (0: kernel)
 * @p: type, ring geometry, PD, CQs and rings of the new QP
 * @qpn: the new QP number
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_create_qp(struct kite_admin *adm, u32 uctx,
		       const struct kite_qp_create_params *p, u32 *qpn)
{
	struct kite_aq_cmd cmd;

	kite_enc_create_qp(&cmd, uctx, p);
	return kite_cmd_exec_out0(adm, &cmd, qpn);
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_create_qp, KITE);

/**
 * kite_cmd_modify_qp() - MODIFY_QP
 * @adm: admin queue
 * @uctx: owning context (0: kernel)
 * @qpn: QP
 * @attr: new attributes in the device's layout, with their attr_mask
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_modify_qp(struct kite_admin *adm, u32 uctx, u32 qpn,
		       const struct kite_qp_attr *attr)
{
	struct kite_aq_cmd cmd;

	kite_enc_modify_qp(&cmd, uctx, qpn, attr);
	return kite_admin_exec(adm, &cmd, NULL, 0, NULL);
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_modify_qp, KITE);

/**
 * kite_cmd_query_qp() - QUERY_QP
 * @adm: admin queue
 * @uctx: owning context (0: kernel)
 * @qpn: QP
 * @attr: the QP's attributes as the device wrote them (little-endian)
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_query_qp(struct kite_admin *adm, u32 uctx, u32 qpn,
		      struct kite_qp_attr *attr)
{
	struct kite_aq_cmd cmd;

	kite_enc_query_obj(&cmd, KITE_CMD_QUERY_QP, uctx, qpn);
	return kite_admin_exec(adm, &cmd, attr, sizeof(*attr), NULL);
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_query_qp, KITE);

/**
 * kite_cmd_query_qp_stats() - QUERY_QP_STATS
 * @adm: admin queue
 * @uctx: owning context (0: kernel)
 * @qpn: QP
 * @st: the QP's counters as the device wrote them (little-endian)
 *
 * Return: 0 or a negative errno (-EOPNOTSUPP from a device before ABI 1.1,
 * see kite_admin_exec()).
 */
int kite_cmd_query_qp_stats(struct kite_admin *adm, u32 uctx, u32 qpn,
			    struct kite_qp_stats *st)
{
	struct kite_aq_cmd cmd;

	kite_enc_query_obj(&cmd, KITE_CMD_QUERY_QP_STATS, uctx, qpn);
	return kite_admin_exec(adm, &cmd, st, sizeof(*st), NULL);
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_query_qp_stats, KITE);

/**
 * kite_cmd_reg_mr() - REG_MR
 * @adm: admin queue
 * @uctx: owning context (0: kernel)
 * @p: PD, access, range, pages and key variant of the new MR
 * @key: the new lkey (= rkey)
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_reg_mr(struct kite_admin *adm, u32 uctx,
		    const struct kite_mr_params *p, u32 *key)
{
	struct kite_aq_cmd cmd;

	kite_enc_reg_mr(&cmd, uctx, p);
	return kite_cmd_exec_out0(adm, &cmd, key);
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_reg_mr, KITE);

/**
 * kite_cmd_alloc_mr() - ALLOC_MR: a kernel MR for fast registration
 * @adm: admin queue
 * @pdn: kernel protection domain
 * @max_pages: pages a REG_MR WQE of the MR may name
 * @key_variant: variant byte of the key
 * @key: the new key, of an MR in the free state
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_alloc_mr(struct kite_admin *adm, u32 pdn, u32 max_pages,
		      u32 key_variant, u32 *key)
{
	struct kite_aq_cmd cmd;

	kite_enc_alloc_mr(&cmd, pdn, max_pages, key_variant);
	return kite_cmd_exec_out0(adm, &cmd, key);
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_alloc_mr, KITE);

/**
 * kite_cmd_rereg_mr() - REREG_MR
 * @adm: admin queue
 * @uctx: owning context (0: kernel)
 * @p: the MR's key, the parts that change and their new values
 * @key: the MR's new key; the old one is refused from now on
 *
 * Return: 0 or a negative errno (see kite_admin_exec()); on failure the MR
 * is unchanged.
 */
int kite_cmd_rereg_mr(struct kite_admin *adm, u32 uctx,
		      const struct kite_rereg_params *p, u32 *key)
{
	struct kite_aq_cmd cmd;

	kite_enc_rereg_mr(&cmd, uctx, p);
	return kite_cmd_exec_out0(adm, &cmd, key);
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_rereg_mr, KITE);

/**
 * kite_cmd_alloc_mw() - ALLOC_MW
 * @adm: admin queue
 * @uctx: owning context (0: kernel)
 * @pdn: protection domain
 * @type: enum kite_mw_type
 * @key_variant: variant byte of the key
 * @key: the new window's key
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_alloc_mw(struct kite_admin *adm, u32 uctx, u32 pdn, u8 type,
		      u32 key_variant, u32 *key)
{
	struct kite_aq_cmd cmd;

	kite_enc_alloc_mw(&cmd, uctx, pdn, type, key_variant);
	return kite_cmd_exec_out0(adm, &cmd, key);
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_alloc_mw, KITE);

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
EXPORT_SYMBOL_NS_GPL(kite_cmd_gid, KITE);
