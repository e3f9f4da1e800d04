// SPDX-License-Identifier: GPL-2.0
/*
 * Kite user contexts: allocation with the context's doorbell page, its
 * mmap, and the helpers every verb uses to read and answer user data.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/pfn.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/kite-abi.h>

#include "kite_ib.h"
#include "kite_verbs.h"

/* The udata layouts are ABI with the provider: their sizes never change. */
static_assert(sizeof(struct kite_alloc_ucontext_resp) == 64);

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

/**
 * kite_udata_get_req_min() - read a request that grew over ABI versions
 * @udata: user data of the verb
 * @req: request structure, zeroed by the caller
 * @min: length of the request's first version
 * @len: sizeof(*@req)
 *
 * A request is one of the structure's versions: exactly @min bytes (the
 * rest of @req stays zero), or @len bytes and more as by
 * kite_udata_get_req(). A length in between cuts a field in two.
 *
 * Return: 0, -EINVAL (not a version's length, non-zero bytes after @len)
 * or -EFAULT.
 */
int kite_udata_get_req_min(struct ib_udata *udata, void *req, size_t min,
			   size_t len)
{
	if (udata->inlen >= len)
		return kite_udata_get_req(udata, req, len);
	if (udata->inlen != min)
		return -EINVAL;
	return ib_copy_from_udata(req, udata, min);
}

/**
 * kite_dbrec_supported() - whether the device takes doorbell records
 * @kib: RDMA device
 *
 * Return: true from device ABI 1.2 on.
 */
bool kite_dbrec_supported(struct kite_ib_dev *kib)
{
	return KITE_ABI_VER_MINOR(kib->kdev->caps.abi_version) >=
	       KITE_ABI_MINOR_DBREC;
}

/* The context acting for a verb: 0 for the kernel. */
u32 kite_udata_uctx(struct ib_udata *udata)
{
	struct kite_ucontext *uc =
		rdma_udata_to_drv_context(udata, struct kite_ucontext, ibuc);

	return uc ? uc->uctx : 0;
}

/* A user caller must take the whole response: it carries what it needs. */
int kite_copy_resp(struct ib_udata *udata, void *resp, size_t len)
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
	struct kite_ib_dev *kib = to_kib(ibuc->device);
	const struct kite_caps *caps = &kib->kdev->caps;
	struct kite_ucontext *uc = to_kucontext(ibuc);
	struct kite_alloc_ucontext_resp resp = {};
	struct kite_user_mmap_entry *entry;
	int err;

	/* One device doorbell page is exactly one CPU page (Kconfig). */
	BUILD_BUG_ON(PAGE_SIZE != KITE_DB_PAGE_SIZE);
	if (!kite_udata_in_ok(udata))
		return -EINVAL;

	err = kite_cmd_alloc_uctx(&kib->kdev->admin, &uc->uctx);
	if (err)
		return err;
	if (!uc->uctx || uc->uctx > KITE_MAX_UCTX) {
		dev_err(kite_ib_dmadev(kib), "ALLOC_UCTX returned context %u\n",
			uc->uctx);
		err = -EPROTO;
		goto err_dealloc;
	}

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry) {
		err = -ENOMEM;
		goto err_dealloc;
	}
	entry->address = pci_resource_start(kib->kdev->pdev, KITE_BAR_DB) +
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
	resp.dev_abi_version = caps->abi_version;
	resp.max_qp = caps->max_qp;
	resp.max_cq = caps->max_cq;
	resp.max_cqe = caps->max_cqe;
	resp.max_qp_wr = caps->max_qp_wr;
	resp.max_sge = caps->max_sge;
	resp.max_inline = caps->max_inline;
	resp.max_rd_atom = caps->max_rd_atom;
	resp.cap_flags = caps->cap_flags;
	if (kite_dbrec_supported(kib))
		resp.comp_mask |= KITE_ALLOC_UCTX_RESP_DBREC;
	err = kite_copy_resp(udata, &resp, sizeof(resp));
	if (err)
		goto err_remove;
	return 0;

err_remove:
	/* kite_mmap_free() frees the entry. */
	rdma_user_mmap_entry_remove(uc->db_entry);
err_dealloc:
	kite_cmd_dealloc_uctx(&kib->kdev->admin, uc->uctx);
	return err;
}

void kite_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct kite_ib_dev *kib = to_kib(ibuc->device);
	struct kite_ucontext *uc = to_kucontext(ibuc);

	rdma_user_mmap_entry_remove(uc->db_entry);
	/* A failure is logged by the admin layer; nothing else to undo. */
	kite_cmd_dealloc_uctx(&kib->kdev->admin, uc->uctx);
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
