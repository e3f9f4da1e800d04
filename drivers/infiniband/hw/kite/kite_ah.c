// SPDX-License-Identifier: GPL-2.0
/*
 * Kite address handles: the device address vector (struct kite_av) of a
 * UD destination, built from ib_core's rdma_ah_attr. The device keeps no
 * AH state: a UD send WQE carries the whole address vector, so creating
 * and destroying an AH are driver-memory operations only, which ib_core's
 * MAD layer needs (it creates AHs in atomic context).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/etherdevice.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/kite-abi.h>

#include "kite_ib.h"
#include "kite_verbs.h"

static_assert(sizeof(struct kite_create_ah_resp) == 16);

/**
 * kite_av_from_ah_attr() - the device address vector of an AH attribute
 * @kib: RDMA device
 * @ah: RoCE address handle attributes with a GRH and its source GID
 *	attribute, the destination MAC already resolved by ib_core
 * @av: address vector to fill (every byte is written)
 *
 * Used for the path of RC/UC QPs (MODIFY_QP) and for address handles.
 * Never sleeps.
 *
 * Only the low 20 bits of the GRH flow label are a flow label; the bits
 * above are dropped, as ib_core, rxe and mlx5 do (UCX passes an inverted
 * path index there, all 32 bits set on its first path).
 *
 * Return: 0; -EINVAL when @ah is not RoCE, has no GRH or source GID, names
 * a GID index beyond the device's table, a non-RoCE GID; -EOPNOTSUPP for
 * a RoCE v1 source GID, or IPv6 without KITE_DEV_CAP_IPV6.
 */
int kite_av_from_ah_attr(struct kite_ib_dev *kib, const struct rdma_ah_attr *ah,
			 struct kite_av *av)
{
	const struct ib_gid_attr *sgid;
	const struct ib_global_route *grh;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	sgid = grh->sgid_attr;
	if (!sgid || sgid->device != &kib->ibdev ||
	    sgid->port_num != KITE_PORT_NUM ||
	    sgid->index >= kib->kdev->caps.max_gid)
		return -EINVAL;
	switch (sgid->gid_type) {
	case IB_GID_TYPE_ROCE_UDP_ENCAP:
		break;
	case IB_GID_TYPE_ROCE:
		/* RoCE v1 (no IP header) is not carried by this NIC. */
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}

	memset(av, 0, sizeof(*av));
	switch (rdma_gid_attr_network_type(sgid)) {
	case RDMA_NETWORK_IPV4:
		/* Both ends of an IPv4 path are IPv4-mapped GIDs. */
		if (!ipv6_addr_v4mapped((const struct in6_addr *)grh->dgid.raw))
			return -EINVAL;
		av->net_type = KITE_NET_IPV4;
		break;
	case RDMA_NETWORK_IPV6:
		if (!(kib->kdev->caps.cap_flags & KITE_DEV_CAP_IPV6))
			return -EOPNOTSUPP;
		/* An IPv4-mapped destination needs an IPv4 source GID. */
		if (ipv6_addr_v4mapped((const struct in6_addr *)grh->dgid.raw))
			return -EINVAL;
		av->net_type = KITE_NET_IPV6;
		break;
	default:
		return -EINVAL;
	}
	memcpy(av->dgid, grh->dgid.raw, sizeof(av->dgid));
	/* A group's Ethernet address follows from its GID. */
	if (kite_gid_is_mcast(av->dgid))
		kite_gid_mcast_mac(av->dgid, av->dmac);
	else
		ether_addr_copy(av->dmac, ah->roce.dmac);
	av->sgid_index = sgid->index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->sl = rdma_ah_get_sl(ah);
	av->flow_label = cpu_to_le32(grh->flow_label & KITE_AV_FLOW_LABEL_MASK);
	return 0;
}

/**
 * kite_av_to_ah_attr() - rdma_ah_attr of a device address vector
 * @av: address vector
 * @ah: attributes to fill (the source GID attribute is left to ib_core)
 */
void kite_av_to_ah_attr(const struct kite_av *av, struct rdma_ah_attr *ah)
{
	union ib_gid dgid;

	memset(ah, 0, sizeof(*ah));
	memcpy(dgid.raw, av->dgid, sizeof(dgid.raw));
	ah->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(ah, KITE_PORT_NUM);
	rdma_ah_set_sl(ah, av->sl);
	rdma_ah_set_grh(ah, &dgid, le32_to_cpu(av->flow_label),
			av->sgid_index, av->hop_limit, av->traffic_class);
	ether_addr_copy(ah->roce.dmac, av->dmac);
}

/**
 * kite_create_ah() - create a kernel or user address handle
 * @ibah: AH allocated by ib_core (GFP_ATOMIC unless
 *	  RDMA_CREATE_AH_SLEEPABLE)
 * @init: the attributes, the destination MAC resolved by ib_core
 * @udata: user AH: no request data; response struct kite_create_ah_resp
 *	   (the provider builds the address vector of its UD WQEs itself)
 *
 * Sends no command and allocates nothing, so it may run in atomic context
 * (ib_core's MAD layer answers MADs that way). A multicast destination
 * needs a device with multicast groups.
 *
 * Return: 0 or a negative errno (see kite_av_from_ah_attr(); -EOPNOTSUPP
 * for a multicast DGID on a device without multicast, or a device without
 * UD; -EINVAL for malformed
 * udata; -ENOMEM beyond KITE_MAX_AH handles).
 */
int kite_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		   struct ib_udata *udata)
{
	struct kite_ib_dev *kib = to_kib(ibah->device);
	const struct rdma_ah_attr *attr = init->ah_attr;
	struct kite_create_ah_resp resp = {};
	struct kite_ah *ah = to_kah(ibah);
	int err;

	if (!(kib->kdev->caps.cap_flags & KITE_DEV_CAP_UD))
		return -EOPNOTSUPP;
	if (rdma_ah_get_port_num(attr) != KITE_PORT_NUM)
		return -EINVAL;
	if (udata && (!kite_udata_in_ok(udata) ||
		      udata->outlen < sizeof(resp)))
		return -EINVAL;
	err = kite_av_from_ah_attr(kib, attr, &ah->av);
	if (err)
		return err;
	if (kite_gid_is_mcast(ah->av.dgid) && !kite_has_mcast(kib))
		return -EOPNOTSUPP;
	if (atomic_inc_return(&kib->num_ah) > KITE_MAX_AH) {
		err = -ENOMEM;
		goto err_count;
	}

	if (udata) {
		ether_addr_copy(resp.dmac, ah->av.dmac);
		resp.net_type = ah->av.net_type;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_count;
	}
	return 0;

err_count:
	atomic_dec(&kib->num_ah);
	return err;
}

/**
 * kite_query_ah() - the attributes an AH was created with
 * @ibah: AH
 * @attr: filled from the AH's address vector
 *
 * Return: 0.
 */
int kite_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	kite_av_to_ah_attr(&to_kah(ibah)->av, attr);
	return 0;
}

/**
 * kite_destroy_ah() - destroy an AH
 * @ibah: AH (ib_core frees the memory)
 * @flags: RDMA_DESTROY_AH_SLEEPABLE or 0: nothing here sleeps either way
 *
 * Return: 0. UD WQEs already posted hold their own copy of the address
 * vector, so the AH may go while they are outstanding.
 */
int kite_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	atomic_dec(&to_kib(ibah->device)->num_ah);
	return 0;
}
