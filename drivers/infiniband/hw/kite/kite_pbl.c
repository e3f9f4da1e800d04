// SPDX-License-Identifier: GPL-2.0
/*
 * Kite page buffer lists: how the device finds the pages of an MR or of a
 * ring. Kernel rings are one coherent allocation (level 0) or, when none
 * is that large, coherent pages mapped side by side; those and pinned user
 * memory are described page by page in 4 KiB chunks (level 1 up to one
 * chunk, level 2 beyond).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/dma-mapping.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_umem.h>
#include <rdma/iter.h>

#include "kite_ib.h"
#include "kite_verbs.h"

static void kite_pbl_set(struct kite_pbl *pbl, u64 addr, u32 npages,
			 u8 page_shift, u8 level)
{
	pbl->desc.addr = cpu_to_le64(addr);
	pbl->desc.npages = cpu_to_le32(npages);
	pbl->desc.page_shift = page_shift;
	pbl->desc.level = level;
}

/**
 * kite_pbl_free() - free the page arrays of a page buffer list
 * @kib: RDMA device
 * @pbl: list built by kite_pbl_from_umem() (or zeroed)
 */
void kite_pbl_free(struct kite_ib_dev *kib, struct kite_pbl *pbl)
{
	struct device *dev = kite_ib_dmadev(kib);
	u32 i;

	if (pbl->chunks) {
		for (i = 0; i < pbl->nchunks; i++)
			if (pbl->chunks[i])
				dma_free_coherent(dev, KITE_PBL_CHUNK_SIZE,
						  pbl->chunks[i],
						  pbl->chunk_dma[i]);
	}
	if (pbl->top)
		dma_free_coherent(dev, pbl->top_size, pbl->top, pbl->top_dma);
	kfree(pbl->chunks);
	kfree(pbl->chunk_dma);
	memset(pbl, 0, sizeof(*pbl));
}

/* The chunks of a level 1 or 2 list of @nblocks entries; 0 or -ENOMEM. */
static int kite_pbl_alloc_chunks(struct kite_ib_dev *kib, struct kite_pbl *pbl,
				 size_t nblocks)
{
	struct device *dev = kite_ib_dmadev(kib);
	u32 i;

	pbl->nchunks = DIV_ROUND_UP(nblocks, KITE_PBL_ENTRIES_PER_CHUNK);
	pbl->chunks = kcalloc(pbl->nchunks, sizeof(*pbl->chunks), GFP_KERNEL);
	pbl->chunk_dma = kcalloc(pbl->nchunks, sizeof(*pbl->chunk_dma),
				 GFP_KERNEL);
	if (!pbl->chunks || !pbl->chunk_dma)
		goto err_nomem;
	for (i = 0; i < pbl->nchunks; i++) {
		pbl->chunks[i] = dma_alloc_coherent(dev, KITE_PBL_CHUNK_SIZE,
						    &pbl->chunk_dma[i],
						    GFP_KERNEL);
		if (!pbl->chunks[i])
			goto err_nomem;
	}
	return 0;

err_nomem:
	kite_pbl_free(kib, pbl);
	return -ENOMEM;
}

static void kite_pbl_set_entry(struct kite_pbl *pbl, u32 i, u64 addr)
{
	pbl->chunks[i / KITE_PBL_ENTRIES_PER_CHUNK]
		   [i % KITE_PBL_ENTRIES_PER_CHUNK] = cpu_to_le64(addr);
}

/*
 * The descriptor of a list whose @nblocks entries are set: level 1 for one
 * chunk, else level 2 with the array of chunk addresses. 0 or -ENOMEM (the
 * list is freed).
 */
static int kite_pbl_publish(struct kite_ib_dev *kib, struct kite_pbl *pbl,
			    size_t nblocks, u8 shift)
{
	struct device *dev = kite_ib_dmadev(kib);
	u32 i;

	if (pbl->nchunks == 1) {
		kite_pbl_set(pbl, pbl->chunk_dma[0], nblocks, shift,
			     KITE_PBL_LEVEL_1);
		return 0;
	}
	pbl->top_size = PAGE_ALIGN(pbl->nchunks * sizeof(__le64));
	pbl->top = dma_alloc_coherent(dev, pbl->top_size, &pbl->top_dma,
				      GFP_KERNEL);
	if (!pbl->top) {
		kite_pbl_free(kib, pbl);
		return -ENOMEM;
	}
	for (i = 0; i < pbl->nchunks; i++)
		pbl->top[i] = cpu_to_le64(pbl->chunk_dma[i]);
	kite_pbl_set(pbl, pbl->top_dma, nblocks, shift, KITE_PBL_LEVEL_2);
	return 0;
}

/**
 * kite_pbl_from_umem() - describe pinned memory to the device
 * @kib: RDMA device
 * @pbl: list to build (zeroed by the caller)
 * @umem: pinned memory whose iova was set by ib_umem_find_best_pgsz()
 * @pgsz: page size found by ib_umem_find_best_pgsz()
 *
 * One page: level 0 (the page itself). Up to KITE_PBL_ENTRIES_PER_CHUNK
 * pages: level 1 (one chunk of page addresses). More: level 2 (an array of
 * chunk addresses). npages is ib_umem_num_dma_blocks(), which is what the
 * device demands of an MR.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int kite_pbl_from_umem(struct kite_ib_dev *kib, struct kite_pbl *pbl,
		       struct ib_umem *umem, unsigned long pgsz)
{
	struct ib_block_iter biter;
	size_t nblocks;
	u32 i = 0;
	int err;

	if (!pgsz || !is_power_of_2(pgsz))
		return -EINVAL;
	nblocks = ib_umem_num_dma_blocks(umem, pgsz);
	if (!nblocks || nblocks > U32_MAX)
		return -EINVAL;

	if (nblocks == 1) {
		rdma_umem_for_each_dma_block(umem, &biter, pgsz) {
			kite_pbl_set(pbl, rdma_block_iter_dma_address(&biter),
				     1, ilog2(pgsz), KITE_PBL_LEVEL_DIRECT);
			break;
		}
		return 0;
	}

	err = kite_pbl_alloc_chunks(kib, pbl, nblocks);
	if (err)
		return err;
	rdma_umem_for_each_dma_block(umem, &biter, pgsz) {
		if (WARN_ON_ONCE(i >= nblocks))
			break;
		kite_pbl_set_entry(pbl, i++, rdma_block_iter_dma_address(&biter));
	}
	return kite_pbl_publish(kib, pbl, nblocks, ilog2(pgsz));
}

/* Frees the pages of a ring from kite_ring_alloc_pages(). */
static void kite_ring_free_pages(struct kite_ib_dev *kib,
				 struct kite_ring *ring)
{
	u32 i;

	if (ring->buf)
		vunmap(ring->buf);
	for (i = 0; ring->pages && i < ring->npages && ring->pages[i]; i++)
		dma_free_coherent(kite_ib_dmadev(kib), PAGE_SIZE,
				  ring->pages[i], ring->page_dma[i]);
	kvfree(ring->pages);
	kvfree(ring->page_dma);
	kite_pbl_free(kib, &ring->pbl);
}

/*
 * A kernel ring larger than any one coherent allocation (a 4M-entry CQ is
 * 128 MiB): coherent pages, mapped side by side at ring->buf so that the
 * ring reads as one array, and described by a level 1/2 list. Only where
 * coherent memory is the kernel's own pages (not remapped), as on x86.
 */
static int kite_ring_alloc_pages(struct kite_ib_dev *kib,
				 struct kite_ring *ring)
{
	struct device *dev = kite_ib_dmadev(kib);
	struct page **map;
	u32 i;
	int err;

	ring->npages = ring->size >> PAGE_SHIFT;
	ring->pages = kvcalloc(ring->npages, sizeof(*ring->pages), GFP_KERNEL);
	ring->page_dma = kvcalloc(ring->npages, sizeof(*ring->page_dma),
				  GFP_KERNEL);
	map = kvcalloc(ring->npages, sizeof(*map), GFP_KERNEL);
	err = -ENOMEM;
	if (!ring->pages || !ring->page_dma || !map)
		goto err_free;
	for (i = 0; i < ring->npages; i++) {
		ring->pages[i] = dma_alloc_coherent(dev, PAGE_SIZE,
						    &ring->page_dma[i],
						    GFP_KERNEL);
		if (!ring->pages[i])
			goto err_free;
		if (is_vmalloc_addr(ring->pages[i])) {
			err = -EOPNOTSUPP;
			goto err_free;
		}
		map[i] = virt_to_page(ring->pages[i]);
	}
	err = kite_pbl_alloc_chunks(kib, &ring->pbl, ring->npages);
	if (err)
		goto err_free;
	for (i = 0; i < ring->npages; i++)
		kite_pbl_set_entry(&ring->pbl, i, ring->page_dma[i]);
	err = kite_pbl_publish(kib, &ring->pbl, ring->npages, PAGE_SHIFT);
	if (err)
		goto err_free;
	ring->buf = vmap(map, ring->npages, VM_MAP, PAGE_KERNEL);
	err = -ENOMEM;
	if (!ring->buf)
		goto err_free;
	kvfree(map);
	return 0;

err_free:
	kvfree(map);
	kite_ring_free_pages(kib, ring);
	memset(ring, 0, sizeof(*ring));
	return err;
}

/**
 * kite_ring_alloc_kernel() - a zeroed ring in coherent memory
 * @kib: RDMA device
 * @ring: ring to fill (zeroed by the caller)
 * @bytes: ring size
 *
 * One allocation (level 0) when there is one that large, else coherent
 * pages mapped side by side (kite_ring_alloc_pages()).
 *
 * Return: 0, -ENOMEM or -EOPNOTSUPP.
 */
int kite_ring_alloc_kernel(struct kite_ib_dev *kib, struct kite_ring *ring,
			   size_t bytes)
{
	ring->size = PAGE_ALIGN(bytes);
	ring->buf = dma_alloc_coherent(kite_ib_dmadev(kib), ring->size,
				       &ring->dma, GFP_KERNEL | __GFP_NOWARN);
	if (!ring->buf)
		return kite_ring_alloc_pages(kib, ring);
	kite_pbl_set(&ring->pbl, ring->dma, ring->size >> PAGE_SHIFT,
		     PAGE_SHIFT, KITE_PBL_LEVEL_DIRECT);
	return 0;
}

/**
 * kite_ring_get_user() - pin a ring the provider allocated
 * @kib: RDMA device
 * @ring: ring to fill (zeroed by the caller)
 * @va: user address of the ring: 4 KiB aligned
 * @len: bytes the provider allocated: at least @bytes
 * @bytes: ring size the driver computed from the depth and stride
 *
 * Only @bytes are pinned. The page size is the largest the device supports
 * to which @va is aligned, so the ring starts at the start of its first
 * page, where the device expects entry 0.
 *
 * Return: 0 or a negative errno.
 */
int kite_ring_get_user(struct kite_ib_dev *kib, struct kite_ring *ring,
		       u64 va, u64 len, size_t bytes)
{
	unsigned long bitmap = kib->kdev->caps.page_size_cap;
	unsigned long pgsz;
	int err;

	if (!va || !IS_ALIGNED(va, KITE_RING_ALIGN) || len < bytes)
		return -EINVAL;
	bitmap &= GENMASK(__ffs(va), 0);
	ring->umem = ib_umem_get(&kib->ibdev, va, bytes,
				 IB_ACCESS_LOCAL_WRITE);
	if (IS_ERR(ring->umem)) {
		err = PTR_ERR(ring->umem);
		ring->umem = NULL;
		return err;
	}
	pgsz = ib_umem_find_best_pgsz(ring->umem, bitmap, va);
	if (!pgsz) {
		err = -EINVAL;
		goto err_release;
	}
	err = kite_pbl_from_umem(kib, &ring->pbl, ring->umem, pgsz);
	if (err)
		goto err_release;
	return 0;

err_release:
	ib_umem_release(ring->umem);
	ring->umem = NULL;
	return err;
}

/**
 * kite_ring_free() - free or unpin a ring
 * @kib: RDMA device
 * @ring: ring from kite_ring_alloc_kernel() or kite_ring_get_user()
 */
void kite_ring_free(struct kite_ib_dev *kib, struct kite_ring *ring)
{
	if (ring->umem) {
		kite_pbl_free(kib, &ring->pbl);
		ib_umem_release(ring->umem);
	} else if (ring->pages) {
		kite_ring_free_pages(kib, ring);
	} else if (ring->buf) {
		dma_free_coherent(kite_ib_dmadev(kib), ring->size, ring->buf,
				  ring->dma);
	}
	memset(ring, 0, sizeof(*ring));
}

/**
 * kite_dbrec_get_user() - pin a doorbell record the provider allocated
 * @kib: RDMA device
 * @rec: record to fill (zeroed by the caller)
 * @va: user address of the record: aligned to @size
 * @size: sizeof(struct kite_qp_dbrec) or sizeof(struct kite_cq_dbrec)
 *
 * The alignment keeps the record within one page, so one DMA address
 * describes it.
 *
 * Return: 0 or a negative errno (-EINVAL for a bad address).
 */
int kite_dbrec_get_user(struct kite_ib_dev *kib, struct kite_dbrec *rec,
			u64 va, u32 size)
{
	if (!kite_dbrec_addr_valid(va, size))
		return -EINVAL;
	rec->umem = ib_umem_get(&kib->ibdev, va, size, IB_ACCESS_LOCAL_WRITE);
	if (IS_ERR(rec->umem)) {
		int err = PTR_ERR(rec->umem);

		rec->umem = NULL;
		return err;
	}
	rec->dma = sg_dma_address(rec->umem->sgt_append.sgt.sgl) +
		   ib_umem_offset(rec->umem);
	return 0;
}

/**
 * kite_dbrec_put() - unpin a doorbell record
 * @rec: record from kite_dbrec_get_user(), or none (zeroed)
 */
void kite_dbrec_put(struct kite_dbrec *rec)
{
	if (rec->umem)
		ib_umem_release(rec->umem);
	rec->umem = NULL;
	rec->dma = 0;
}
