// SPDX-License-Identifier: GPL-2.0
/*
 * Kite fast-register MRs for kernel ULPs: alloc_mr, map_mr_sg, and the
 * REG_MR work request that gives such an MR its translation. Each MR owns
 * a coherent page list the REG_MR WQE points to; the device copies it
 * when it executes the WQE.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/dma-mapping.h>
#include <linux/slab.h>

#include "kite_ib.h"
#include "kite_verbs.h"

/* The device implements fast registration (ABI 1.3 and the capability). */
bool kite_has_mem_mgt(const struct kite_ib_dev *kib)
{
	return kib->kdev->caps.cap_flags & KITE_DEV_CAP_MEM_MGT &&
	       kib->kdev->caps.max_frwr_pages;
}

/**
 * kite_alloc_mr() - allocate a fast-register MR
 * @ibpd: kernel protection domain
 * @mr_type: IB_MR_TYPE_MEM_REG (others: -EOPNOTSUPP)
 * @max_num_sg: pages a registration of the MR may map, 1 ..
 *		max_fast_reg_page_list_len
 *
 * The MR starts in the free state: no access through it until a REG_MR
 * work request registers it.
 *
 * Return: the MR or an ERR_PTR.
 */
struct ib_mr *kite_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type mr_type,
			    u32 max_num_sg)
{
	struct kite_ib_dev *kib = to_kib(ibpd->device);
	struct kite_pd *pd = to_kpd(ibpd);
	struct kite_mr *mr;
	u32 key;
	int err;

	if (mr_type != IB_MR_TYPE_MEM_REG || !kite_has_mem_mgt(kib) ||
	    pd->uctx)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > kib->kdev->caps.max_frwr_pages)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->max_pages = max_num_sg;
	mr->pages = dma_alloc_coherent(kite_ib_dmadev(kib),
				       array_size(max_num_sg,
						  sizeof(*mr->pages)),
				       &mr->pages_dma, GFP_KERNEL);
	if (!mr->pages) {
		err = -ENOMEM;
		goto err_free;
	}
	err = kite_cmd_alloc_mr(&kib->kdev->admin, pd->pdn, max_num_sg,
				kite_mr_next_variant(kib), &key);
	if (err)
		goto err_pages;

	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	return &mr->ibmr;

err_pages:
	dma_free_coherent(kite_ib_dmadev(kib),
			  array_size(max_num_sg, sizeof(*mr->pages)),
			  mr->pages, mr->pages_dma);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/**
 * kite_frmr_free() - free what kite_alloc_mr() added to an MR
 * @kib: RDMA device
 * @mr: MR the device holds no more
 */
void kite_frmr_free(struct kite_ib_dev *kib, struct kite_mr *mr)
{
	if (!mr->pages)
		return;
	dma_free_coherent(kite_ib_dmadev(kib),
			  array_size(mr->max_pages, sizeof(*mr->pages)),
			  mr->pages, mr->pages_dma);
	mr->pages = NULL;
}

static int kite_frmr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct kite_mr *mr = to_kmr(ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	mr->pages[mr->npages++] = cpu_to_le64(addr);
	return 0;
}

/**
 * kite_map_mr_sg() - fill a fast-register MR's page list
 * @ibmr: MR from kite_alloc_mr()
 * @sg: DMA-mapped scatterlist
 * @sg_nents: entries of @sg
 * @sg_offset: offset into the first entry, updated by ib_sg_to_pages()
 *
 * ib_core set ibmr->page_size; the device takes only the page sizes it
 * lists. The list is read by the next REG_MR work request of the MR.
 *
 * Return: the number of entries mapped, or a negative errno.
 */
int kite_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct kite_ib_dev *kib = to_kib(ibmr->device);
	struct kite_mr *mr = to_kmr(ibmr);

	/* A failed map leaves no list for a REG_MR to take. */
	mr->npages = 0;
	if (!mr->pages || !is_power_of_2(ibmr->page_size) ||
	    !(ibmr->page_size & kib->kdev->caps.page_size_cap))
		return -EINVAL;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset,
			      kite_frmr_set_page);
}

/**
 * kite_build_reg_mr() - the segment of a REG_MR work request
 * @kib: RDMA device
 * @wr: IB_WR_REG_MR request
 * @seg: segment after the WQE header
 *
 * The key must name the MR (the ULP changes only its variant, with
 * ib_update_fast_reg_key()); the device checks the rest (PD, state, the
 * page list) and completes a bad request with an error.
 *
 * Return: 0, -EINVAL for an MR that is not a mapped fast-register MR of
 * this device, another MR's key or bad access flags.
 */
int kite_build_reg_mr(struct kite_ib_dev *kib, const struct ib_send_wr *wr,
		      struct kite_wqe_reg_mr *seg)
{
	const struct ib_reg_wr *rwr = reg_wr(wr);
	struct kite_mr *mr;
	u32 access;

	if (!rwr->mr || rwr->mr->device != &kib->ibdev)
		return -EINVAL;
	mr = to_kmr(rwr->mr);
	if (!mr->pages || !mr->npages ||
	    kite_key_index(rwr->key) != kite_key_index(mr->ibmr.lkey))
		return -EINVAL;
	if (kite_mr_access(kib, rwr->access, &access))
		return -EINVAL;
	seg->iova = cpu_to_le64(mr->ibmr.iova);
	seg->length = cpu_to_le64(mr->ibmr.length);
	seg->pbl_addr = cpu_to_le64(mr->pages_dma);
	seg->key = cpu_to_le32(rwr->key);
	seg->access = cpu_to_le32(access);
	seg->npages = cpu_to_le32(mr->npages);
	seg->page_shift = ilog2(mr->ibmr.page_size);
	return 0;
}
