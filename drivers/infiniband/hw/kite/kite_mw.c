// SPDX-License-Identifier: GPL-2.0
/*
 * Kite memory windows, type 1 and type 2B: allocation and deallocation.
 * Windows are bound by BIND_MW work requests, which user contexts post
 * themselves (ibv_bind_mw, IBV_WR_BIND_MW); ib_core in 6.1 gives kernel
 * ULPs no window verbs.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "kite_ib.h"
#include "kite_verbs.h"

/* The device implements memory windows (ABI 1.3 and the capability). */
bool kite_has_mw(const struct kite_ib_dev *kib)
{
	return kib->kdev->caps.cap_flags & KITE_DEV_CAP_MW &&
	       kib->kdev->caps.max_mw;
}

/**
 * kite_alloc_mw() - allocate a memory window
 * @ibmw: ib_core object (allocated by ib_core), type and PD set
 * @udata: no request or response data (the rkey travels in ib_core's
 *	   response)
 *
 * Return: 0, -EOPNOTSUPP on a device without windows, -EINVAL for another
 * window type or request data, or the device's error.
 */
int kite_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct kite_ib_dev *kib = to_kib(ibmw->device);
	struct kite_mw *mw = to_kmw(ibmw);
	struct kite_pd *pd = to_kpd(ibmw->pd);
	u8 type;

	if (!kite_has_mw(kib))
		return -EOPNOTSUPP;
	if (!kite_udata_in_ok(udata))
		return -EINVAL;
	switch (ibmw->type) {
	case IB_MW_TYPE_1:
		type = KITE_MW_TYPE_1;
		break;
	case IB_MW_TYPE_2:
		type = KITE_MW_TYPE_2;
		break;
	default:
		return -EINVAL;
	}
	mw->uctx = pd->uctx;
	return kite_cmd_alloc_mw(&kib->kdev->admin, mw->uctx, pd->pdn, type,
				 kite_mr_next_variant(kib), &ibmw->rkey);
}

/**
 * kite_dealloc_mw() - deallocate a memory window
 * @ibmw: window; a bound one is unbound by the device first
 *
 * The device names the window by the index of its key: the variant may
 * have changed since allocation through BIND_MW requests of the context.
 *
 * Return: 0, or the device's error while it still holds the window. A
 * dead device holds nothing.
 */
int kite_dealloc_mw(struct ib_mw *ibmw)
{
	struct kite_ib_dev *kib = to_kib(ibmw->device);
	int err;

	err = kite_cmd_dealloc_mw(&kib->kdev->admin, to_kmw(ibmw)->uctx,
				  ibmw->rkey);
	if (err && kite_admin_is_dead(&kib->kdev->admin))
		return 0;
	return err;
}
