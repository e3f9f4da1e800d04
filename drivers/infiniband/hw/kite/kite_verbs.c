// SPDX-License-Identifier: GPL-2.0
/*
 * Kite verbs: user contexts with their doorbell page, and protection
 * domains.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/pfn.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/kite-abi.h>

#include "kite.h"
#include "kite_verbs.h"

/* The udata layouts are ABI with the provider: their sizes never change. */
static_assert(sizeof(struct kite_alloc_ucontext_resp) == 64);
static_assert(sizeof(struct kite_alloc_pd_resp) == 8);

/* Unknown request data must be zero: it may mean something later. */
bool kite_udata_in_ok(struct ib_udata *udata)
{
	return !udata || !udata->inlen ||
	       ib_is_udata_cleared(udata, 0, udata->inlen);
}

/**
 * kite_udata_get_req() - read a request structure from udata
 * @udata: user data of the verb
 * @req: where to copy the request
 * @len: size of @req
 *
 * The request must be at least @len bytes long; bytes beyond it (a newer
 * provider's additions) must be zero.
 *
 * Return: 0, -EINVAL for a short or non-zero tail, -EFAULT.
 */
int kite_udata_get_req(struct ib_udata *udata, void *req, size_t len)
{
	if (udata->inlen < len)
		return -EINVAL;
	if (udata->inlen > len &&
	    !ib_is_udata_cleared(udata, len, udata->inlen - len))
		return -EINVAL;
	return ib_copy_from_udata(req, udata, len);
}

/* The context acting for a verb: 0 for the kernel. */
u32 kite_udata_uctx(struct ib_udata *udata)
{
	struct kite_ucontext *uc =
		rdma_udata_to_drv_context(udata, struct kite_ucontext, ibuc);

	return uc ? uc->uctx : 0;
}

/* A user caller must take the whole response: it carries what it needs. */
static int kite_copy_resp(struct ib_udata *udata, void *resp, size_t len)
{
	if (!udata)
		return 0;
	if (udata->outlen < len)
		return -EINVAL;
	return ib_copy_to_udata(udata, resp, len);
}

/**
 * kite_alloc_ucontext() - create a user context and its doorbell page entry
 * @ibuc: context allocated by ib_core
 * @udata: response: struct kite_alloc_ucontext_resp
 *
 * The device allocates the context; its number is also the index of the
 * context's doorbell page in BAR2, which userspace maps at the returned
 * offset.
 *
 * Return: 0 or a negative errno.
 */
int kite_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct kite_dev *kdev = to_kdev(ibuc->device);
	struct kite_ucontext *uc = to_kucontext(ibuc);
	struct kite_alloc_ucontext_resp resp = {};
	struct kite_user_mmap_entry *entry;
	int err;

	/* One device doorbell page is exactly one CPU page (Kconfig). */
	BUILD_BUG_ON(PAGE_SIZE != KITE_DB_PAGE_SIZE);
	if (!kite_udata_in_ok(udata))
		return -EINVAL;

	err = kite_cmd_alloc_uctx(&kdev->admin, &uc->uctx);
	if (err)
		return err;
	if (!uc->uctx || uc->uctx > KITE_MAX_UCTX) {
		dev_err(&kdev->pdev->dev, "ALLOC_UCTX returned context %u\n",
			uc->uctx);
		err = -EPROTO;
		goto err_dealloc;
	}

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry) {
		err = -ENOMEM;
		goto err_dealloc;
	}
	entry->address = pci_resource_start(kdev->pdev, KITE_BAR_DB) +
			 (phys_addr_t)uc->uctx * KITE_DB_PAGE_SIZE;
	err = rdma_user_mmap_entry_insert(ibuc, &entry->rdma_entry,
					  KITE_DB_PAGE_SIZE);
	if (err) {
		kfree(entry);
		goto err_dealloc;
	}
	uc->db_entry = &entry->rdma_entry;

	resp.uctx = uc->uctx;
	resp.db_mmap_offset = rdma_user_mmap_get_offset(uc->db_entry);
	resp.db_size = KITE_DB_PAGE_SIZE;
	resp.dev_abi_version = kdev->caps.abi_version;
	resp.max_qp = kdev->caps.max_qp;
	resp.max_cq = kdev->caps.max_cq;
	resp.max_cqe = kdev->caps.max_cqe;
	resp.max_qp_wr = kdev->caps.max_qp_wr;
	resp.max_sge = kdev->caps.max_sge;
	resp.max_inline = kdev->caps.max_inline;
	resp.max_rd_atom = kdev->caps.max_rd_atom;
	resp.cap_flags = kdev->caps.cap_flags;
	err = kite_copy_resp(udata, &resp, sizeof(resp));
	if (err)
		goto err_remove;
	return 0;

err_remove:
	/* kite_mmap_free() frees the entry. */
	rdma_user_mmap_entry_remove(uc->db_entry);
err_dealloc:
	kite_cmd_dealloc_uctx(&kdev->admin, uc->uctx);
	return err;
}

void kite_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct kite_dev *kdev = to_kdev(ibuc->device);
	struct kite_ucontext *uc = to_kucontext(ibuc);

	rdma_user_mmap_entry_remove(uc->db_entry);
	/* A failure is logged by the admin layer; nothing else to undo. */
	kite_cmd_dealloc_uctx(&kdev->admin, uc->uctx);
}

/**
 * kite_disassociate_ucontext() - the device goes away under a live context
 * @ibuc: user context
 *
 * Having this op lets ib_core unregister the device while processes still
 * hold contexts: it zaps their doorbell mappings itself and then calls
 * kite_dealloc_ucontext(). Nothing else refers to the device here.
 */
void kite_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/**
 * kite_mmap() - map a context's doorbell page
 * @ibuc: user context
 * @vma: mapping whose offset names an entry of @ibuc
 *
 * Return: 0 or a negative errno.
 */
int kite_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	int err;

	entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!entry)
		return -EINVAL;
	err = rdma_user_mmap_io(ibuc, vma, PHYS_PFN(to_kentry(entry)->address),
				entry->npages * PAGE_SIZE,
				pgprot_noncached(vma->vm_page_prot), entry);
	rdma_user_mmap_entry_put(entry);
	return err;
}

void kite_mmap_free(struct rdma_user_mmap_entry *entry)
{
	kfree(to_kentry(entry));
}

int kite_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct kite_dev *kdev = to_kdev(ibpd->device);
	struct kite_ucontext *uc =
		rdma_udata_to_drv_context(udata, struct kite_ucontext, ibuc);
	struct kite_pd *pd = to_kpd(ibpd);
	struct kite_alloc_pd_resp resp = {};
	int err;

	if (!kite_udata_in_ok(udata))
		return -EINVAL;
	pd->uctx = uc ? uc->uctx : 0;
	err = kite_cmd_alloc_pd(&kdev->admin, pd->uctx, &pd->pdn);
	if (err)
		return err;
	resp.pdn = pd->pdn;
	err = kite_copy_resp(udata, &resp, sizeof(resp));
	if (err) {
		kite_cmd_dealloc_pd(&kdev->admin, pd->uctx, pd->pdn);
		return err;
	}
	return 0;
}

int kite_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct kite_dev *kdev = to_kdev(ibpd->device);
	struct kite_pd *pd = to_kpd(ibpd);

	/* ib_core cannot undo a failed destroy: log it (admin layer) only. */
	kite_cmd_dealloc_pd(&kdev->admin, pd->uctx, pd->pdn);
	return 0;
}
