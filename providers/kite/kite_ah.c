// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kite RoCEv2 NIC: rdma-core provider, address handles.
 *
 * An AH is created in the kernel (ibv_cmd_create_ah: ib_core checks the
 * source GID and resolves the destination MAC); the driver answers with
 * struct kite_create_ah_resp (rdma/kite-abi.h): the MAC and the network
 * type of the source GID. From the ibv_ah_attr and that answer the
 * provider builds, once, the device address vector (struct kite_av of
 * kite_hw.h) that post_send copies into every UD WQE naming the AH, so
 * posting needs no system call.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kite.h"
#include "kite-abi.h"

/* ::ffff:a.b.c.d, the form of an IPv4 address in a RoCEv2 GID. */
static bool kite_gid_v4mapped(const uint8_t gid[16])
{
	static const uint8_t prefix[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
	};

	return memcmp(gid, prefix, sizeof(prefix)) == 0;
}

/*
 * What RoCE requires of an ibv_ah_attr before the kernel sees it: the one
 * port, and a GRH (on RoCE the GRH fields are the IP header's: no GID, no
 * packet). EINVAL otherwise.
 */
int kite_ah_attr_check(const struct ibv_ah_attr *attr)
{
	if (attr->port_num != KITE_PORT_NUM || !attr->is_global)
		return EINVAL;
	return 0;
}

/*
 * Build the device address vector of @attr with the destination MAC
 * @dmac and the network type @net_type (enum kite_net_type) the driver
 * answered. EPROTO for a network type the device does not know or a zero
 * MAC (no driver answers that); EINVAL when the destination GID is not of
 * the source GID's network type (IPv4-mapped exactly for IPv4), which the
 * device would refuse on every send.
 */
int kite_av_build(const struct ibv_ah_attr *attr, const uint8_t dmac[6],
		  uint8_t net_type, struct kite_av *av)
{
	static const uint8_t zero_mac[6];
	const uint8_t *dgid = attr->grh.dgid.raw;

	if (net_type != KITE_NET_IPV4 && net_type != KITE_NET_IPV6)
		return EPROTO;
	if (!memcmp(dmac, zero_mac, sizeof(zero_mac)))
		return EPROTO;
	if (kite_gid_v4mapped(dgid) != (net_type == KITE_NET_IPV4))
		return EINVAL;

	memset(av, 0, sizeof(*av));
	memcpy(av->dgid, dgid, sizeof(av->dgid));
	memcpy(av->dmac, dmac, sizeof(av->dmac));
	av->sgid_index = attr->grh.sgid_index;
	av->net_type = net_type;
	av->hop_limit = attr->grh.hop_limit;
	av->traffic_class = attr->grh.traffic_class;
	av->sl = attr->sl;
	av->flow_label = htole32(attr->grh.flow_label & KITE_AV_FLOW_LABEL_MASK);
	return 0;
}

struct ibv_ah *kite_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct kite_context *ctx = to_kite_ctx(pd->context);
	struct kite_uverbs_create_ah_resp resp = {};
	struct kite_ah *ah;
	int err;

	err = kite_ah_attr_check(attr);
	if (err) {
		errno = err;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (err)
		goto err_free;

	err = kite_av_build(attr, resp.dmac, resp.net_type, &ah->av);
	if (err) {
		if (err == EPROTO)
			verbs_err(&ctx->ibv_ctx,
				  "kite: bad AH response (net_type %u, dmac %02x:%02x:%02x:%02x:%02x:%02x)\n",
				  resp.net_type, resp.dmac[0], resp.dmac[1],
				  resp.dmac[2], resp.dmac[3], resp.dmac[4],
				  resp.dmac[5]);
		ibv_cmd_destroy_ah(&ah->ibv_ah);
		goto err_free;
	}
	return &ah->ibv_ah;

err_free:
	free(ah);
	errno = err;
	return NULL;
}

int kite_destroy_ah(struct ibv_ah *ibah)
{
	int err;

	err = ibv_cmd_destroy_ah(ibah);
	if (err)
		return err;
	free(to_kite_ah(ibah));
	return 0;
}
