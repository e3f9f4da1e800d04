// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kite RoCEv2 NIC: rdma-core provider, memory windows (hardware.rst,
 * "Memory management extensions"). Windows are allocated and freed by
 * the kernel; a type-1 window is bound by ibv_bind_mw(), which posts a
 * BIND_MW WQE on the QP's send queue like IBV_WR_BIND_MW does for type
 * 2B (the WQE itself is built by post_send, kite_fast.c).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <errno.h>
#include <stdlib.h>

#include "kite.h"

/* Types 1 and 2 (2B): the kernel refuses others, and a device without MWs. */
struct ibv_mw *kite_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_alloc_mw cmd = {};
	struct ibv_mw *mw;
	int err;

	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(mw);
		errno = err;
		return NULL;
	}
	return mw;
}

/* The device unbinds a bound window first (its MR may be deregistered). */
int kite_dealloc_mw(struct ibv_mw *mw)
{
	int err;

	err = ibv_cmd_dealloc_mw(mw);
	if (err)
		return err;
	free(mw);
	return 0;
}

/*
 * Bind (length 0 and no MR: unbind) a type-1 window: a BIND_MW WQE with
 * the window's next key variant. As on every provider, mw->rkey is the
 * new key once the WQE is posted; if it then completes with an error the
 * binding and key are those of before, and the caller must restore the
 * rkey it had (libibverbs' ibv_bind_mw(3)).
 */
int kite_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
	};
	struct ibv_send_wr *bad_wr;
	int err;

	if (mw->type != IBV_MW_TYPE_1)
		return EINVAL;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	err = kite_post_send(qp, &wr, &bad_wr);
	if (err)
		return err;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}
