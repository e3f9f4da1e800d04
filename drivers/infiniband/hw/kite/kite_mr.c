// SPDX-License-Identifier: GPL-2.0
/*
 * Kite memory regions: user MRs (pinned with ib_umem_get and described by a
 * page buffer list), their re-registration, and the kernel's DMA MR.
 * Fast-register MRs are in kite_frmr.c.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "kite_ib.h"
#include "kite_verbs.h"

#define KITE_IB_ACCESS_REMOTE	(IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC)
#define KITE_IB_ACCESS_ALL	(IB_ACCESS_LOCAL_WRITE | KITE_IB_ACCESS_REMOTE)

/**
 * kite_mr_access() - check ib_access_flags and convert them to KITE_ACCESS_*
 * @kib: RDMA device
 * @access: ib_access_flags of the verb
 * @out: device access bits
 *
 * Optional flags (IB_ACCESS_OPTIONAL: relaxed ordering) are hints the
 * device may ignore; any other flag it lacks is refused, IB_ACCESS_MW_BIND
 * on a device without memory windows too.
 *
 * Return: 0, -EINVAL (remote write or atomic without local write, as
 * ib_core's ib_check_mr_access() has it) or -EOPNOTSUPP.
 */
int kite_mr_access(const struct kite_ib_dev *kib, int access, u32 *out)
{
	if (access & ~(KITE_IB_ACCESS_ALL | IB_ACCESS_MW_BIND |
		       IB_ACCESS_OPTIONAL))
		return -EOPNOTSUPP;
	if ((access & IB_ACCESS_MW_BIND) && !kite_has_mw(kib))
		return -EOPNOTSUPP;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	*out = 0;
	if (access & IB_ACCESS_LOCAL_WRITE)
		*out |= KITE_ACCESS_LOCAL_WRITE;
	if (access & IB_ACCESS_REMOTE_WRITE)
		*out |= KITE_ACCESS_REMOTE_WRITE;
	if (access & IB_ACCESS_REMOTE_READ)
		*out |= KITE_ACCESS_REMOTE_READ;
	if (access & IB_ACCESS_REMOTE_ATOMIC)
		*out |= KITE_ACCESS_REMOTE_ATOMIC;
	if (access & IB_ACCESS_MW_BIND)
		*out |= KITE_ACCESS_MW_BIND;
	return 0;
}

/*
 * Variant byte of the next registration. The device hands out the lowest
 * free index, so a re-registration of an index gets a variant different
 * from its previous one (unless a multiple of 256 registrations happened
 * in between), and the old key is refused.
 */
u32 kite_mr_next_variant(struct kite_ib_dev *kib)
{
	return (u32)atomic_inc_return(&kib->mr_variant) & KITE_KEY_VARIANT_MASK;
}

/* REG_MR of @pbl's pages (NULL: every DMA address, with KITE_MR_DMA_ALL). */
static int kite_mr_cmd_reg(struct kite_ib_dev *kib, u32 uctx, u32 pdn,
			   u32 access, u64 iova, u64 length,
			   const struct kite_pbl_desc *pbl, u32 variant,
			   u32 *key)
{
	const struct kite_mr_params p = {
		.pdn = pdn,
		.access = access,
		.iova = iova,
		.length = length,
		.pbl = pbl,
		.key_variant = variant,
	};

	return kite_cmd_reg_mr(&kib->kdev->admin, uctx, &p, key);
}

/*
 * Pin and describe the translation of a registration or re-registration.
 * Return: 0 or a negative errno, with nothing left to release.
 */
static int kite_mr_pin_user(struct kite_ib_dev *kib, struct ib_device *ibdev,
			    u64 start, u64 length, u64 virt, int access,
			    struct ib_umem **umem, struct kite_pbl *pbl,
			    unsigned long *pgsz)
{
	int err;

	if (!length || length > kib->kdev->caps.max_mr_size)
		return -EINVAL;
	*umem = ib_umem_get(ibdev, start, length, access);
	if (IS_ERR(*umem))
		return PTR_ERR(*umem);
	*pgsz = ib_umem_find_best_pgsz(*umem, kib->kdev->caps.page_size_cap,
				       virt);
	if (!*pgsz) {
		err = -EINVAL;
		goto err_release;
	}
	err = kite_pbl_from_umem(kib, pbl, *umem, *pgsz);
	if (err)
		goto err_release;
	return 0;

err_release:
	ib_umem_release(*umem);
	*umem = NULL;
	return err;
}

/**
 * kite_reg_user_mr() - register user memory
 * @ibpd: protection domain
 * @start: user address of the memory
 * @length: bytes
 * @virt: I/O virtual address the MR is accessed at
 * @access: ib_access_flags
 * @udata: no request or response data
 *
 * Return: the MR or an ERR_PTR.
 */
struct ib_mr *kite_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 virt, int access, struct ib_udata *udata)
{
	struct kite_ib_dev *kib = to_kib(ibpd->device);
	struct kite_pd *pd = to_kpd(ibpd);
	unsigned long pgsz;
	struct kite_mr *mr;
	u32 kaccess, key;
	int err;

	err = kite_mr_access(kib, access, &kaccess);
	if (err)
		return ERR_PTR(err);
	if (!kite_udata_in_ok(udata))
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->uctx = pd->uctx;
	mr->access = access;
	err = kite_mr_pin_user(kib, ibpd->device, start, length, virt, access,
			       &mr->umem, &mr->pbl, &pgsz);
	if (err)
		goto err_free;
	err = kite_mr_cmd_reg(kib, mr->uctx, pd->pdn, kaccess, virt, length,
			      &mr->pbl.desc, kite_mr_next_variant(kib), &key);
	if (err)
		goto err_pbl;

	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	mr->ibmr.iova = virt;
	mr->ibmr.length = length;
	mr->ibmr.page_size = pgsz;
	return &mr->ibmr;

err_pbl:
	kite_pbl_free(kib, &mr->pbl);
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/**
 * kite_get_dma_mr() - the kernel's MR covering every DMA address
 * @ibpd: kernel protection domain
 * @access: IB_ACCESS_LOCAL_WRITE or 0; remote access is not offered
 *
 * Return: the MR or an ERR_PTR (-EOPNOTSUPP for remote access).
 */
struct ib_mr *kite_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct kite_ib_dev *kib = to_kib(ibpd->device);
	struct kite_pd *pd = to_kpd(ibpd);
	struct kite_mr *mr;
	u32 kaccess, key;
	int err;

	if (access & ~IB_ACCESS_LOCAL_WRITE)
		return ERR_PTR(-EOPNOTSUPP);
	err = kite_mr_access(kib, access, &kaccess);
	if (err)
		return ERR_PTR(err);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->uctx = pd->uctx;
	err = kite_mr_cmd_reg(kib, mr->uctx, pd->pdn, kaccess, 0, 0, NULL,
			      kite_mr_next_variant(kib) | KITE_MR_DMA_ALL,
			      &key);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	return &mr->ibmr;
}

/**
 * kite_dereg_mr() - deregister an MR
 * @ibmr: MR
 * @udata: user data (unused)
 *
 * Return: 0, or the device's error while it still holds the MR (ib_core
 * keeps the MR then). A dead device holds nothing: the memory is freed.
 */
int kite_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct kite_ib_dev *kib = to_kib(ibmr->device);
	struct kite_mr *mr = to_kmr(ibmr);
	int err;

	err = kite_cmd_dereg_mr(&kib->kdev->admin, mr->uctx, ibmr->lkey);
	if (err && !kite_admin_is_dead(&kib->kdev->admin))
		return err;
	kite_frmr_free(kib, mr);
	kite_pbl_free(kib, &mr->pbl);
	if (mr->umem)
		ib_umem_release(mr->umem);
	kfree(mr);
	return 0;
}

/**
 * kite_rereg_user_mr() - change a user MR in place
 * @ibmr: MR from kite_reg_user_mr()
 * @flags: IB_MR_REREG_TRANS, IB_MR_REREG_PD, IB_MR_REREG_ACCESS
 * @start: new user address (IB_MR_REREG_TRANS)
 * @length: new length (IB_MR_REREG_TRANS)
 * @virt: new I/O virtual address (IB_MR_REREG_TRANS)
 * @access: new ib_access_flags (IB_MR_REREG_ACCESS)
 * @ibpd: new protection domain (IB_MR_REREG_PD)
 * @udata: no request or response data
 *
 * REREG_MR keeps the MR's index and gives it a new key; the old key is
 * refused from then on. A new translation is pinned before the command and
 * the old one released after it; on failure the MR is as it was. Access
 * gaining a write right without a new translation re-pins the same range
 * writable, since the old pin may be read-only.
 *
 * Return: NULL (the MR changed in place; ib_core updates iova, length and
 * the PD) or an ERR_PTR.
 */
struct ib_mr *kite_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 virt, int access,
				 struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct kite_ib_dev *kib = to_kib(ibmr->device);
	struct kite_mr *mr = to_kmr(ibmr);
	struct kite_rereg_params p = { .key = ibmr->lkey };
	int new_access = mr->access;
	struct ib_umem *umem = NULL;
	struct kite_pbl pbl = {};
	unsigned long pgsz = 0;
	u32 key;
	int err;

	if (flags & ~IB_MR_REREG_SUPPORTED)
		return ERR_PTR(-EOPNOTSUPP);
	if (!mr->umem || !kite_udata_in_ok(udata))
		return ERR_PTR(-EINVAL);
	/* ib_core drops IB_MR_REREG_PD when the PD is the same. */
	if (!flags)
		return NULL;

	if (flags & IB_MR_REREG_ACCESS) {
		err = kite_mr_access(kib, access, &p.access);
		if (err)
			return ERR_PTR(err);
		new_access = access;
		p.flags |= KITE_REREG_ACCESS;
	}
	if (flags & IB_MR_REREG_PD) {
		if (!ibpd || ibpd->device != ibmr->device ||
		    to_kpd(ibpd)->uctx != mr->uctx)
			return ERR_PTR(-EINVAL);
		p.pdn = to_kpd(ibpd)->pdn;
		p.flags |= KITE_REREG_PD;
	}
	if (!(flags & IB_MR_REREG_TRANS) && ib_access_writable(new_access) &&
	    !mr->umem->writable) {
		start = mr->umem->address;
		length = mr->umem->length;
		virt = ibmr->iova;
		flags |= IB_MR_REREG_TRANS;
	}
	if (flags & IB_MR_REREG_TRANS) {
		err = kite_mr_pin_user(kib, ibmr->device, start, length, virt,
				       new_access, &umem, &pbl, &pgsz);
		if (err)
			return ERR_PTR(err);
		p.iova = virt;
		p.length = length;
		p.pbl = &pbl.desc;
		p.flags |= KITE_REREG_TRANS;
	}
	p.key_variant = kite_mr_next_variant(kib);

	err = kite_cmd_rereg_mr(&kib->kdev->admin, mr->uctx, &p, &key);
	if (err)
		goto err_trans;

	if (umem) {
		kite_pbl_free(kib, &mr->pbl);
		ib_umem_release(mr->umem);
		mr->pbl = pbl;
		mr->umem = umem;
		ibmr->page_size = pgsz;
		/* Set by ib_core for the ranges it was told of, not this one. */
		ibmr->iova = virt;
		ibmr->length = length;
	}
	mr->access = new_access;
	ibmr->lkey = key;
	ibmr->rkey = key;
	return NULL;

err_trans:
	if (umem) {
		kite_pbl_free(kib, &pbl);
		ib_umem_release(umem);
	}
	return ERR_PTR(err);
}

#if IS_ENABLED(CONFIG_INFINIBAND_KITE_KUNIT_TEST)
/**
 * kite_test_reg_ring_mr() - register a coherent kernel buffer (KUnit)
 * @ibpd: kernel protection domain
 * @ring: buffer from kite_ring_alloc_kernel(); its DMA address is the iova
 * @access: ib_access_flags, remote access included
 * @key: the new lkey (= rkey); kite_cmd_dereg_mr() releases it
 *
 * Kernel consumers get remotely accessible MRs only by fast registration
 * (kite_alloc_mr()); the device-backed KUnit cases that are not about it
 * use one buffer registered here as the target of RDMA WRITE, READ and
 * atomics.
 *
 * Return: 0 or a negative errno.
 */
int kite_test_reg_ring_mr(struct ib_pd *ibpd, const struct kite_ring *ring,
			  int access, u32 *key)
{
	struct kite_ib_dev *kib = to_kib(ibpd->device);
	u32 kaccess;
	int err;

	err = kite_mr_access(kib, access, &kaccess);
	if (err)
		return err;
	return kite_mr_cmd_reg(kib, 0, to_kpd(ibpd)->pdn, kaccess, ring->dma,
			       ring->size, &ring->pbl.desc,
			       kite_mr_next_variant(kib), key);
}
#endif /* CONFIG_INFINIBAND_KITE_KUNIT_TEST */
