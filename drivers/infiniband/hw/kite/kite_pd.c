// SPDX-License-Identifier: GPL-2.0
/*
 * Kite protection domains, kernel and user.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <rdma/kite-abi.h>

#include "kite_ib.h"
#include "kite_verbs.h"

/* The udata layout is ABI with the provider: its size never changes. */
static_assert(sizeof(struct kite_alloc_pd_resp) == 8);

int kite_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct kite_ib_dev *kib = to_kib(ibpd->device);
	struct kite_pd *pd = to_kpd(ibpd);
	struct kite_alloc_pd_resp resp = {};
	int err;

	if (!kite_udata_in_ok(udata))
		return -EINVAL;
	pd->uctx = kite_udata_uctx(udata);
	err = kite_cmd_alloc_pd(&kib->kdev->admin, pd->uctx, &pd->pdn);
	if (err)
		return err;
	resp.pdn = pd->pdn;
	err = kite_copy_resp(udata, &resp, sizeof(resp));
	if (err) {
		kite_cmd_dealloc_pd(&kib->kdev->admin, pd->uctx, pd->pdn);
		return err;
	}
	return 0;
}

int kite_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct kite_ib_dev *kib = to_kib(ibpd->device);
	struct kite_pd *pd = to_kpd(ibpd);

	/* ib_core cannot undo a failed destroy: log it (admin layer) only. */
	kite_cmd_dealloc_pd(&kib->kdev->admin, pd->uctx, pd->pdn);
	return 0;
}
