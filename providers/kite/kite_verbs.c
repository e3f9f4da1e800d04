// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kite RoCEv2 NIC: rdma-core provider, device/port queries and protection
 * domains.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "kite.h"
#include "kite-abi.h"

int kite_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int err;

	err = ibv_cmd_query_device_any(context, input, attr, attr_size,
				       &resp, &resp_size);
	if (err)
		return err;

	/* The device reports major << 16 | minor; sysfs prints "major.minor". */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u", (unsigned int)KITE_ABI_VER_MAJOR(fw & UINT32_MAX),
		 (unsigned int)KITE_ABI_VER_MINOR(fw & UINT32_MAX));
	return 0;
}

int kite_query_port(struct ibv_context *context, uint8_t port,
		    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

struct ibv_pd *kite_alloc_pd(struct ibv_context *context)
{
	struct kite_uverbs_alloc_pd_resp resp = {};
	struct kite_uverbs_alloc_pd cmd = {};
	struct kite_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}

	err = ibv_cmd_alloc_pd(context, &pd->ibv_pd, &cmd.ibv_cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	pd->pdn = resp.pdn;
	return &pd->ibv_pd;
}

int kite_dealloc_pd(struct ibv_pd *ibpd)
{
	struct kite_pd *pd = to_kite_pd(ibpd);
	int err;

	err = ibv_cmd_dealloc_pd(ibpd);
	if (err)
		return err;
	free(pd);
	return 0;
}
