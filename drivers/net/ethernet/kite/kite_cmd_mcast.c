// SPDX-License-Identifier: GPL-2.0
/*
 * Kite admin commands of UD multicast (device ABI 1.5): ATTACH_MCAST and
 * DETACH_MCAST, exported in the KITE namespace for the RDMA driver.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/export.h>
#include <linux/string.h>

#include "kite.h"

/**
 * kite_cmd_mcast() - ATTACH_MCAST or DETACH_MCAST
 * @adm: admin queue
 * @opcode: KITE_CMD_ATTACH_MCAST or KITE_CMD_DETACH_MCAST
 * @uctx: the QP's owning context (0: kernel)
 * @qpn: UD QP
 * @gid: the group's multicast GID (16 bytes, network order)
 *
 * Return: 0; -EEXIST when attaching a QP already attached, -ENOMEM when
 * the device's group table or the group is full, -EINVAL for a QP that
 * is not UD, a GID that is not multicast or (detach) a QP that is not
 * attached; another negative errno (see kite_admin_exec()).
 */
int kite_cmd_mcast(struct kite_admin *adm, u8 opcode, u32 uctx, u32 qpn,
		   const u8 *gid)
{
	struct kite_aq_cmd cmd;

	kite_enc_hdr(&cmd, opcode, uctx);
	memcpy(cmd.mcast.gid, gid, sizeof(cmd.mcast.gid));
	cmd.mcast.qpn = cpu_to_le32(qpn);
	return kite_admin_exec(adm, &cmd, NULL, 0, NULL);
}
EXPORT_SYMBOL_NS_GPL(kite_cmd_mcast, KITE);
