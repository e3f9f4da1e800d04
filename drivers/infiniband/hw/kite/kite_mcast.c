// SPDX-License-Identifier: GPL-2.0
/*
 * Kite UD multicast: attach_mcast/detach_mcast for kernel and user QPs.
 * The device owns the group table and copies each datagram to every
 * attached QP; the driver also joins the group's Ethernet address on the
 * port's netdev, whose receive filter the RoCE traffic shares.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>

#include "kite_ib.h"
#include "kite_verbs.h"

/* The device offers multicast (ABI 1.5, the capability flag, limits). */
bool kite_has_mcast(const struct kite_ib_dev *kib)
{
	const struct kite_caps *caps = &kib->kdev->caps;

	return (caps->cap_flags & KITE_DEV_CAP_MCAST) &&
	       (caps->cap_flags & KITE_DEV_CAP_UD) && caps->max_mcast_grp &&
	       caps->max_mcast_qp;
}

/**
 * kite_attach_mcast() - attach a UD QP to a multicast group
 * @ibqp: UD QP (ib_core checks the type and the GID's range)
 * @gid: the group's GID
 * @lid: ignored: RoCE has no LIDs
 *
 * Return: 0; -EINVAL for a GID outside the multicast ranges; -EEXIST,
 * -ENOMEM or another negative errno from the device (kite_cmd_mcast()),
 * or from the netdev's address list.
 */
int kite_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct kite_ib_dev *kib = to_kib(ibqp->device);
	struct kite_qp *qp = to_kqp(ibqp);
	struct net_device *nd = kib->kdev->netdev;
	u8 mac[ETH_ALEN];
	int err;

	if (!kite_gid_is_mcast(gid->raw))
		return -EINVAL;
	err = kite_cmd_mcast(&kib->kdev->admin, KITE_CMD_ATTACH_MCAST,
			     qp->uctx, qp->qpn, gid->raw);
	if (err)
		return err;
	kite_gid_mcast_mac(gid->raw, mac);
	err = dev_mc_add(nd, mac);
	if (err)
		goto err_detach;
	return 0;

err_detach:
	kite_cmd_mcast(&kib->kdev->admin, KITE_CMD_DETACH_MCAST, qp->uctx,
		       qp->qpn, gid->raw);
	return err;
}

/**
 * kite_detach_mcast() - detach a UD QP from a multicast group
 * @ibqp: UD QP
 * @gid: the group's GID
 * @lid: ignored
 *
 * Return: 0; -EINVAL when the QP is not attached to the group; another
 * negative errno from the device.
 */
int kite_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct kite_ib_dev *kib = to_kib(ibqp->device);
	struct kite_qp *qp = to_kqp(ibqp);
	u8 mac[ETH_ALEN];
	int err;

	if (!kite_gid_is_mcast(gid->raw))
		return -EINVAL;
	err = kite_cmd_mcast(&kib->kdev->admin, KITE_CMD_DETACH_MCAST,
			     qp->uctx, qp->qpn, gid->raw);
	if (err)
		return err;
	kite_gid_mcast_mac(gid->raw, mac);
	dev_mc_del(kib->kdev->netdev, mac);
	return 0;
}
