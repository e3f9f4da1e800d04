// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite kite_datapath, memory-management cases: the WQEs of REG_MR,
 * LOCAL_INV and SEND_WITH_INV against a fake QP, then on the device fast
 * registration followed by remote access, local and remote invalidation
 * refusing the key afterwards, and a stale key variant refused after the
 * MR was registered again (ib_update_fast_reg_key()).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/scatterlist.h>
#include <linux/string.h>

#include "kite_datapath_test.h"

/* Keys and addresses of the fake-QP case: never given to the device. */
#define KITE_DT_FAKE_MR_KEY	0x00050011u
#define KITE_DT_FAKE_INV_KEY	0x0badc0deu
#define KITE_DT_FAKE_PBL_DMA	0x10000ULL
#define KITE_DT_FAKE_IOVA	0x70000800ULL
#define KITE_DT_FAKE_PAGES	2
#define KITE_DT_MEM_LEN		512	/* bytes the remote accesses move */

static void kite_dt_need_mem_mgt(struct kunit *test, struct kite_ib_dev *kib)
{
	if (!kite_has_mem_mgt(kib))
		kunit_skip(test,
			   "device without memory management extensions (ABI 0x%x, cap_flags 0x%x)",
			   kib->kdev->caps.abi_version,
			   kib->kdev->caps.cap_flags);
}

/* REG_MR, LOCAL_INV and SEND_WITH_INV WQEs and their completions. */
void kite_test_dp_mem_wqe_layout(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct kite_dt_fake *f = &dt->fake;
	struct ib_sge sge = { .addr = 0x1000, .length = 100, .lkey = 0x101 };
	struct ib_send_wr inv = {}, sinv = {};
	const struct ib_send_wr *bad;
	struct kite_sq_wqe_hdr *hdr;
	struct kite_wqe_reg_mr *seg;
	struct ib_reg_wr reg = {};
	struct kite_ib_dev *kib;
	struct kite_cqe *cqe;
	struct kite_mr *mr;
	struct ib_wc wc[4];
	u32 key;

	kib = kite_dt_get(test);
	dt->kib = kib;
	kite_dt_need_mem_mgt(test, kib);
	KUNIT_ASSERT_EQ(test, kite_dt_fake_alloc(kib, f), 0);

	mr = kunit_kzalloc(test, sizeof(*mr), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mr);
	mr->pages = kunit_kcalloc(test, KITE_DT_FAKE_PAGES, sizeof(*mr->pages),
				  GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mr->pages);
	mr->ibmr.device = &kib->ibdev;
	mr->ibmr.lkey = KITE_DT_FAKE_MR_KEY;
	mr->ibmr.rkey = KITE_DT_FAKE_MR_KEY;
	mr->ibmr.iova = KITE_DT_FAKE_IOVA;
	mr->ibmr.length = PAGE_SIZE;
	mr->ibmr.page_size = PAGE_SIZE;
	mr->pages_dma = KITE_DT_FAKE_PBL_DMA;
	mr->max_pages = KITE_DT_FAKE_PAGES;
	mr->npages = KITE_DT_FAKE_PAGES;

	key = ib_inc_rkey(mr->ibmr.rkey);
	reg.wr.wr_id = 1;
	reg.wr.opcode = IB_WR_REG_MR;
	/* Not read: a memory operation carries no data. */
	reg.wr.num_sge = KITE_DT_FAKE_SGE + 1;
	reg.wr.next = &inv;
	reg.mr = &mr->ibmr;
	reg.key = key;
	reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		     IB_ACCESS_REMOTE_READ;
	inv.wr_id = 2;
	inv.opcode = IB_WR_LOCAL_INV;
	inv.send_flags = IB_SEND_SIGNALED | IB_SEND_FENCE;
	inv.ex.invalidate_rkey = KITE_DT_FAKE_INV_KEY;
	inv.next = &sinv;
	sinv.wr_id = 3;
	sinv.opcode = IB_WR_SEND_WITH_INV;
	sinv.ex.invalidate_rkey = KITE_DT_FAKE_INV_KEY;
	sinv.sg_list = &sge;
	sinv.num_sge = 1;
	KUNIT_ASSERT_EQ(test, kite_post_send(&f->qp->ibqp, &reg.wr, &bad), 0);
	KUNIT_EXPECT_EQ(test, f->qp->sq_pi, 3);

	hdr = f->qp->sq.buf;
	KUNIT_EXPECT_EQ(test, hdr->opcode, KITE_WQE_REG_MR);
	KUNIT_EXPECT_EQ(test, hdr->flags, 0);
	KUNIT_EXPECT_EQ(test, hdr->num_sge, 0);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(hdr->inline_len), 0);
	seg = (struct kite_wqe_reg_mr *)(hdr + 1);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(seg->iova), KITE_DT_FAKE_IOVA);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(seg->length), PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(seg->pbl_addr),
			KITE_DT_FAKE_PBL_DMA);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(seg->key), key);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(seg->access),
			KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE |
			KITE_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(seg->npages), KITE_DT_FAKE_PAGES);
	KUNIT_EXPECT_EQ(test, seg->page_shift, PAGE_SHIFT);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(seg->reserved, 0,
					    sizeof(seg->reserved)));

	/* Invalidations: the key little-endian in imm_data. */
	hdr = f->qp->sq.buf + (1 << KITE_DT_FAKE_SQ_STRIDE);
	KUNIT_EXPECT_EQ(test, hdr->opcode, KITE_WQE_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, hdr->flags,
			KITE_WQE_F_SIGNALED | KITE_WQE_F_FENCE);
	KUNIT_EXPECT_EQ(test, hdr->num_sge, 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(hdr->imm_data), KITE_DT_FAKE_INV_KEY);
	hdr = f->qp->sq.buf + (2 << KITE_DT_FAKE_SQ_STRIDE);
	KUNIT_EXPECT_EQ(test, hdr->opcode, KITE_WQE_SEND_INV);
	KUNIT_EXPECT_EQ(test, hdr->num_sge, 1);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(hdr->imm_data), KITE_DT_FAKE_INV_KEY);
	KUNIT_EXPECT_EQ(test,
			le64_to_cpu(((struct kite_sge *)(hdr + 1))->addr),
			sge.addr);

	/* Refused at post time: nothing is written. */
	reg.wr.next = NULL;
	reg.key = KITE_DT_FAKE_MR_KEY + (1u << KITE_KEY_VARIANT_BITS);
	KUNIT_EXPECT_EQ(test, kite_post_send(&f->qp->ibqp, &reg.wr, &bad),
			-EINVAL);
	reg.key = key;
	reg.access = IB_ACCESS_REMOTE_WRITE;
	KUNIT_EXPECT_EQ(test, kite_post_send(&f->qp->ibqp, &reg.wr, &bad),
			-EINVAL);
	reg.access = IB_ACCESS_LOCAL_WRITE;
	reg.wr.send_flags = IB_SEND_INLINE;
	KUNIT_EXPECT_EQ(test, kite_post_send(&f->qp->ibqp, &reg.wr, &bad),
			-EINVAL);
	reg.wr.send_flags = 0;
	mr->npages = 0;
	KUNIT_EXPECT_EQ(test, kite_post_send(&f->qp->ibqp, &reg.wr, &bad),
			-EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&reg.wr);
	KUNIT_EXPECT_EQ(test, f->qp->sq_pi, 3);

	/* Completions: the memory opcodes, and a receive that invalidated. */
	f->qp->rq_pi = 1;
	f->qp->rq_wrid[0] = 10;
	kite_dt_fake_cqe(f, 0, KITE_CQE_REG_MR, KITE_CQE_SUCCESS, 0, 0);
	kite_dt_fake_cqe(f, 1, KITE_CQE_LOCAL_INV, KITE_CQE_LOC_PROT_ERR, 1, 0);
	kite_dt_fake_cqe(f, 2, KITE_CQE_RECV, KITE_CQE_SUCCESS, 0,
			 KITE_CQE_F_INV);
	cqe = (struct kite_cqe *)f->cq->ring.buf + 2;
	cqe->imm_data = cpu_to_le32(KITE_DT_FAKE_INV_KEY);
	KUNIT_ASSERT_EQ(test, kite_poll_cq(&f->cq->ibcq, 4, wc), 3);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 1);
	KUNIT_EXPECT_EQ(test, wc[0].opcode, IB_WC_REG_MR);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, 2);
	KUNIT_EXPECT_EQ(test, wc[1].opcode, IB_WC_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, wc[1].status, IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_EQ(test, wc[2].wr_id, 10);
	KUNIT_EXPECT_EQ(test, wc[2].opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc[2].wc_flags & (IB_WC_WITH_INVALIDATE |
						IB_WC_WITH_IMM),
			IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, wc[2].ex.invalidate_rkey, KITE_DT_FAKE_INV_KEY);
}

/* A fast-register MR for one page; kite_dt_exit() deregisters it. */
static struct ib_mr *kite_dt_frmr(struct kunit *test, struct kite_dt *dt)
{
	struct ib_mr *mr;

	kite_dt_need_mem_mgt(test, dt->kib);
	mr = ib_alloc_mr(dt->pd, IB_MR_TYPE_MEM_REG, 1);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(mr), "alloc_mr: %ld",
			       PTR_ERR(mr));
	dt->frmr = mr;
	return mr;
}

/*
 * Map @region into @mr under a new key variant, as a ULP does, and
 * register it with a REG_MR work request on B. Return: the new rkey.
 */
static u32 kite_dt_frmr_reg(struct kunit *test, struct kite_dt *dt,
			    struct ib_mr *mr, int region)
{
	struct ib_reg_wr wr = {};
	struct scatterlist sg;
	struct ib_wc wc;

	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = kite_dt_iova(dt, region);
	sg_dma_len(&sg) = PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	KUNIT_EXPECT_EQ(test, mr->iova, kite_dt_iova(dt, region));
	KUNIT_EXPECT_EQ(test, mr->length, PAGE_SIZE);

	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	wr.wr.wr_id = 90;
	wr.wr.opcode = IB_WR_REG_MR;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.mr = mr;
	wr.key = mr->rkey;
	wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		    IB_ACCESS_REMOTE_READ;
	KUNIT_ASSERT_EQ(test, ib_post_send(dt->b, &wr.wr, NULL), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 90);
	KUNIT_ASSERT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_REG_MR);
	return mr->rkey;
}

/* LOCAL_INV of @rkey on B, completed successfully. */
static void kite_dt_local_inv(struct kunit *test, struct kite_dt *dt,
			      u32 rkey, u64 wr_id)
{
	struct ib_send_wr inv = {};
	struct ib_wc wc;

	inv.wr_id = wr_id;
	inv.opcode = IB_WR_LOCAL_INV;
	inv.send_flags = IB_SEND_SIGNALED;
	inv.ex.invalidate_rkey = rkey;
	KUNIT_ASSERT_EQ(test, ib_post_send(dt->b, &inv, NULL), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, wr_id);
	KUNIT_ASSERT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_LOCAL_INV);
}

/* A's RDMA WRITE of KITE_DT_MEM_LEN pattern bytes to @iova under @rkey. */
static enum ib_wc_status kite_dt_mem_write(struct kunit *test,
					   struct kite_dt *dt, u64 iova,
					   u32 rkey, u64 wr_id)
{
	struct ib_rdma_wr wr = {};
	struct ib_sge sge;
	struct ib_wc wc;

	memset(kite_dt_va(dt, KITE_DT_A_SRC), KITE_DT_PATTERN,
	       KITE_DT_MEM_LEN);
	sge = kite_dt_sge(dt, KITE_DT_A_SRC, KITE_DT_MEM_LEN);
	wr.wr.wr_id = wr_id;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = iova;
	wr.rkey = rkey;
	KUNIT_ASSERT_EQ(test, ib_post_send(dt->a, &wr.wr, NULL), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, wr_id);
	return wc.status;
}

/* A refused remote access: the error at A, the event at B, no bytes. */
static void kite_dt_mem_refused(struct kunit *test, struct kite_dt *dt,
				u64 iova, u32 rkey)
{
	u8 *dst = kite_dt_va(dt, KITE_DT_B_BUF);

	memset(dst, 0, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, kite_dt_mem_write(test, dt, iova, rkey, 99),
			IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_PTR_EQ(test, kite_dt_wait_event(dt, IB_EVENT_QP_ACCESS_ERR),
			    dt->b);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst, 0, PAGE_SIZE));
}

/* REG_MR, then A writes and reads B's page through the new rkey. */
void kite_test_dp_frwr_reg(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct ib_rdma_wr rd = {};
	struct ib_sge sge;
	struct ib_wc wc;
	struct ib_mr *mr;
	u8 *dst, *back;
	u32 rkey;

	kite_dt_setup(test);
	mr = kite_dt_frmr(test, dt);
	dst = kite_dt_va(dt, KITE_DT_B_BUF);
	memset(dst, 0, PAGE_SIZE);
	rkey = kite_dt_frmr_reg(test, dt, mr, KITE_DT_B_BUF);

	KUNIT_EXPECT_EQ(test, kite_dt_mem_write(test, dt, mr->iova, rkey, 91),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst, KITE_DT_PATTERN,
					    KITE_DT_MEM_LEN));
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst + KITE_DT_MEM_LEN, 0,
					    PAGE_SIZE - KITE_DT_MEM_LEN));

	back = kite_dt_va(dt, KITE_DT_A_DST);
	memset(back, 0, PAGE_SIZE);
	sge = kite_dt_sge(dt, KITE_DT_A_DST, KITE_DT_MEM_LEN);
	rd.wr.wr_id = 92;
	rd.wr.opcode = IB_WR_RDMA_READ;
	rd.wr.send_flags = IB_SEND_SIGNALED;
	rd.wr.sg_list = &sge;
	rd.wr.num_sge = 1;
	rd.remote_addr = mr->iova;
	rd.rkey = rkey;
	KUNIT_ASSERT_EQ(test, ib_post_send(dt->a, &rd.wr, NULL), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(back, KITE_DT_PATTERN,
					    KITE_DT_MEM_LEN));
}

/* LOCAL_INV on B: A's next access through the rkey is refused. */
void kite_test_dp_frwr_local_inv(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct ib_mr *mr;
	u32 rkey;

	kite_dt_setup(test);
	mr = kite_dt_frmr(test, dt);
	rkey = kite_dt_frmr_reg(test, dt, mr, KITE_DT_B_BUF);
	kite_dt_local_inv(test, dt, rkey, 93);
	kite_dt_mem_refused(test, dt, mr->iova, rkey);
}

/*
 * SEND_WITH_INV from A names B's rkey: B's receive completes with
 * IB_WC_WITH_INVALIDATE and the key, and the key is refused afterwards.
 */
void kite_test_dp_send_inv(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct ib_send_wr wr = {};
	struct ib_wc wc[2], *r;
	struct ib_sge sge;
	struct ib_mr *mr;
	u32 rkey;

	kite_dt_setup(test);
	mr = kite_dt_frmr(test, dt);
	rkey = kite_dt_frmr_reg(test, dt, mr, KITE_DT_B_BUF);

	KUNIT_ASSERT_EQ(test, kite_dt_post_recv(dt, dt->b, 95, KITE_DT_A_DST,
						PAGE_SIZE), 0);
	memset(kite_dt_va(dt, KITE_DT_A_SRC), KITE_DT_PATTERN, KITE_DT_MEM_LEN);
	sge = kite_dt_sge(dt, KITE_DT_A_SRC, KITE_DT_MEM_LEN);
	wr.wr_id = 94;
	wr.opcode = IB_WR_SEND_WITH_INV;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.ex.invalidate_rkey = rkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	KUNIT_ASSERT_EQ(test, ib_post_send(dt->a, &wr, NULL), 0);
	KUNIT_ASSERT_EQ(test, kite_dt_poll(dt->cq, wc, 2), 2);
	r = kite_dt_find_one(test, wc, 2, 94);
	KUNIT_EXPECT_EQ(test, r->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, r->opcode, IB_WC_SEND);
	r = kite_dt_find_one(test, wc, 2, 95);
	KUNIT_EXPECT_EQ(test, r->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, r->opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, r->byte_len, KITE_DT_MEM_LEN);
	KUNIT_EXPECT_TRUE(test, r->wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_FALSE(test, r->wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, r->ex.invalidate_rkey, rkey);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(kite_dt_va(dt, KITE_DT_A_DST),
					    KITE_DT_PATTERN, KITE_DT_MEM_LEN));

	kite_dt_mem_refused(test, dt, mr->iova, rkey);
}

/*
 * Invalidate, then register the MR again under the next key variant (as
 * NVMe and NFS over RDMA do per I/O): the new key works, the old one of
 * the same index is refused.
 */
void kite_test_dp_frwr_stale_key(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	u32 old_rkey, rkey;
	struct ib_mr *mr;
	u8 *dst;

	kite_dt_setup(test);
	mr = kite_dt_frmr(test, dt);
	old_rkey = kite_dt_frmr_reg(test, dt, mr, KITE_DT_B_BUF);
	kite_dt_local_inv(test, dt, old_rkey, 96);

	rkey = kite_dt_frmr_reg(test, dt, mr, KITE_DT_B_BUF);
	KUNIT_EXPECT_NE(test, rkey, old_rkey);
	KUNIT_EXPECT_EQ(test, kite_key_index(rkey), kite_key_index(old_rkey));
	dst = kite_dt_va(dt, KITE_DT_B_BUF);
	memset(dst, 0, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, kite_dt_mem_write(test, dt, mr->iova, rkey, 97),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst, KITE_DT_PATTERN,
					    KITE_DT_MEM_LEN));

	kite_dt_mem_refused(test, dt, mr->iova, old_rkey);
}

/*
 * alloc_mr and map_mr_sg refuse what the device cannot do; dereg_mr takes
 * any key variant of the MR.
 */
void kite_test_dp_frwr_errors(struct kunit *test)
{
	struct kite_dt *dt = test->priv;
	struct scatterlist sg, sgl[2];
	struct ib_mr *mr;
	u32 max, i;

	kite_dt_setup_common(test);
	kite_dt_need_mem_mgt(test, dt->kib);
	max = dt->kib->kdev->caps.max_frwr_pages;

	mr = ib_alloc_mr(dt->pd, IB_MR_TYPE_SG_GAPS, 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(mr), -EOPNOTSUPP);
	mr = ib_alloc_mr(dt->pd, IB_MR_TYPE_MEM_REG, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(mr), -EINVAL);
	mr = ib_alloc_mr(dt->pd, IB_MR_TYPE_MEM_REG, max + 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(mr), -EINVAL);

	/* The largest list is accepted; a page size the device lacks not. */
	mr = ib_alloc_mr(dt->pd, IB_MR_TYPE_MEM_REG, max);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	dt->frmr = mr;
	KUNIT_EXPECT_EQ(test, kite_key_index(mr->lkey), kite_key_index(mr->rkey));
	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = kite_dt_iova(dt, KITE_DT_B_BUF);
	sg_dma_len(&sg) = PAGE_SIZE;
	KUNIT_EXPECT_LT(test, ib_map_mr_sg(mr, &sg, 1, NULL, SZ_2K), 0);
	KUNIT_EXPECT_EQ(test, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	KUNIT_EXPECT_EQ(test, to_kmr(mr)->npages, 1);
	/* A refused map drops the previous list: nothing stale to register. */
	KUNIT_EXPECT_LT(test, ib_map_mr_sg(mr, &sg, 1, NULL, SZ_2K), 0);
	KUNIT_EXPECT_EQ(test, to_kmr(mr)->npages, 0);

	/*
	 * A key variant the device never took (the ULP changed it, its
	 * REG_MR was flushed) still deregisters the MR.
	 */
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	dt->frmr = NULL;
	KUNIT_EXPECT_EQ(test, ib_dereg_mr(mr), 0);

	/* More pages than the MR holds: only those that fit are mapped. */
	mr = ib_alloc_mr(dt->pd, IB_MR_TYPE_MEM_REG, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	dt->frmr = mr;
	sg_init_table(sgl, ARRAY_SIZE(sgl));
	for (i = 0; i < ARRAY_SIZE(sgl); i++) {
		sg_dma_address(&sgl[i]) = kite_dt_iova(dt, KITE_DT_B_BUF + i);
		sg_dma_len(&sgl[i]) = PAGE_SIZE;
	}
	KUNIT_EXPECT_EQ(test, ib_map_mr_sg(mr, sgl, ARRAY_SIZE(sgl), NULL,
					   PAGE_SIZE), 1);
}
