// SPDX-License-Identifier: GPL-2.0
/*
 * Kite admin commands of shared receive queues (device ABI 1.4):
 * CREATE/MODIFY/QUERY/DESTROY_SRQ, encoded, executed and decoded here and
 * exported in the KITE namespace for the RDMA driver.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/export.h>

#include "kite.h"

/**
 * kite_cmd_create_srq() - CREATE_SRQ
 * @adm: admin queue
 * @uctx: owning context (0: kernel)
 * @p: PD, geometry, limit and ring of the new SRQ
 * @srqn: the new SRQ number
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_create_srq(struct kite_admin *adm, u32 uctx,
			const struct kite_srq_create_params *p, u32 *srqn)
{
	struct kite_aq_cqe cqe;
	struct kite_aq_cmd cmd;
	int err;

	kite_enc_hdr(&cmd, KITE_CMD_CREATE_SRQ, uctx);
	cmd.create_srq.pdn = cpu_to_le32(p->pdn);
	cmd.create_srq.log_depth = p->log_depth;
	cmd.create_srq.log_stride = p->log_stride;
	cmd.create_srq.limit = cpu_to_le32(p->limit);
	cmd.create_srq.ring = *p->ring;
	err = kite_admin_exec(adm, &cmd, NULL, 0, &cqe);
	if (err)
		return err;
	*srqn = le32_to_cpu(cqe.out[0]);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_create_srq, KITE);

/**
 * kite_cmd_modify_srq() - MODIFY_SRQ
 * @adm: admin queue
 * @uctx: owning context (0: kernel)
 * @srqn: SRQ
 * @mask: KITE_SRQ_ATTR_*
 * @limit: with KITE_SRQ_ATTR_LIMIT: the limit to arm
 *
 * Return: 0, -EOPNOTSUPP for a resize (KITE_SRQ_ATTR_MAX_WR) or another
 * negative errno (see kite_admin_exec()).
 */
int kite_cmd_modify_srq(struct kite_admin *adm, u32 uctx, u32 srqn, u32 mask,
			u32 limit)
{
	struct kite_aq_cmd cmd;

	kite_enc_hdr(&cmd, KITE_CMD_MODIFY_SRQ, uctx);
	cmd.modify_srq.srqn = cpu_to_le32(srqn);
	cmd.modify_srq.attr_mask = cpu_to_le32(mask);
	cmd.modify_srq.limit = cpu_to_le32(limit);
	return kite_admin_exec(adm, &cmd, NULL, 0, NULL);
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_modify_srq, KITE);

/**
 * kite_cmd_query_srq() - QUERY_SRQ
 * @adm: admin queue
 * @uctx: owning context (0: kernel)
 * @srqn: SRQ
 * @info: the device's view of the SRQ
 *
 * Return: 0 or a negative errno (see kite_admin_exec()).
 */
int kite_cmd_query_srq(struct kite_admin *adm, u32 uctx, u32 srqn,
		       struct kite_srq_info *info)
{
	struct kite_aq_cqe cqe;
	struct kite_aq_cmd cmd;
	int err;

	kite_enc_query_obj(&cmd, KITE_CMD_QUERY_SRQ, uctx, srqn);
	err = kite_admin_exec(adm, &cmd, NULL, 0, &cqe);
	if (err)
		return err;
	info->log_depth = le32_to_cpu(cqe.out[KITE_SRQ_QUERY_LOG_DEPTH]);
	info->limit = le32_to_cpu(cqe.out[KITE_SRQ_QUERY_LIMIT]);
	info->posted = le32_to_cpu(cqe.out[KITE_SRQ_QUERY_POSTED]);
	info->flags = le32_to_cpu(cqe.out[KITE_SRQ_QUERY_FLAGS]);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_query_srq, KITE);
