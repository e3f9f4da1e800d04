// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kite RoCEv2 NIC: rdma-core provider, device matching and contexts.
 *
 * The kite kernel driver is out of tree and has no RDMA_DRIVER_* id of its
 * own, so the device is matched by its PCI IDs (libibverbs falls back to the
 * sysfs modalias when the driver id is RDMA_DRIVER_UNKNOWN).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "kite.h"
#include "kite-abi.h"

static void kite_free_context(struct ibv_context *ibctx);

/*
 * Control path, address handles (kite_ah.c), memory windows (kite_mw.c),
 * the RC/UC/UD fast path (kite_fast.c) and the extended CQs and QPs
 * (kite_cq_ex.c, kite_qp_ex.c). libibverbs answers the verbs left out
 * here with EOPNOTSUPP.
 */
static const struct verbs_context_ops kite_ctx_ops = {
	.alloc_mw = kite_alloc_mw,
	.alloc_pd = kite_alloc_pd,
	/* The kernel driver attaches; nothing of it is in user space. */
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = kite_bind_mw,
	.create_ah = kite_create_ah,
	.create_cq = kite_create_cq,
	.create_cq_ex = kite_create_cq_ex,
	.create_qp = kite_create_qp,
	.create_qp_ex = kite_create_qp_ex,
	.create_srq = kite_create_srq,
	.create_srq_ex = kite_create_srq_ex,
	.dealloc_mw = kite_dealloc_mw,
	.dealloc_pd = kite_dealloc_pd,
	.dereg_mr = kite_dereg_mr,
	.destroy_ah = kite_destroy_ah,
	.destroy_cq = kite_destroy_cq,
	.destroy_qp = kite_destroy_qp,
	.destroy_srq = kite_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = kite_free_context,
	.modify_qp = kite_modify_qp,
	.modify_srq = kite_modify_srq,
	.poll_cq = kite_poll_cq,
	.post_recv = kite_post_recv,
	.post_send = kite_post_send,
	.post_srq_recv = kite_post_srq_recv,
	.query_device_ex = kite_query_device_ex,
	.query_port = kite_query_port,
	.query_qp = kite_query_qp,
	.query_srq = kite_query_srq,
	.reg_mr = kite_reg_mr,
	.rereg_mr = kite_rereg_mr,
	.req_notify_cq = kite_req_notify_cq,
	.resize_cq = kite_resize_cq,
};

/* Whether environment variable @name is set to "0". */
static bool kite_env_is_zero(const char *name)
{
	const char *v = getenv(name);

	return v && !strcmp(v, "0");
}

/* Check what the driver told us before relying on it. */
static int
kite_check_ucontext_resp(struct kite_context *ctx,
			 const struct kite_uverbs_alloc_context_resp *resp)
{
	if (KITE_ABI_VER_MAJOR(resp->dev_abi_version) != KITE_ABI_MAJOR) {
		verbs_err(&ctx->ibv_ctx,
			  "kite: device ABI %u.%u, provider supports %u.x\n",
			  KITE_ABI_VER_MAJOR(resp->dev_abi_version),
			  KITE_ABI_VER_MINOR(resp->dev_abi_version),
			  KITE_ABI_MAJOR);
		return EPROTO;
	}
	if (!resp->uctx || resp->uctx > KITE_MAX_UCTX ||
	    resp->db_size != KITE_DB_PAGE_SIZE) {
		verbs_err(&ctx->ibv_ctx,
			  "kite: bad context response (uctx %u, db_size %u)\n",
			  resp->uctx, resp->db_size);
		return EPROTO;
	}
	return 0;
}

static struct verbs_context *kite_alloc_context(struct ibv_device *ibdev,
						int cmd_fd,
						void *private_data)
{
	struct kite_uverbs_alloc_context_resp resp = {};
	struct kite_uverbs_alloc_context cmd = {};
	struct kite_context *ctx;
	int err;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	err = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (err)
		goto err_free;
	err = kite_check_ucontext_resp(ctx, &resp);
	if (err)
		goto err_free;

	ctx->uctx = resp.uctx;
	ctx->dev_abi_version = resp.dev_abi_version;
	ctx->max_qp = resp.max_qp;
	ctx->max_cq = resp.max_cq;
	ctx->max_cqe = resp.max_cqe;
	ctx->max_qp_wr = resp.max_qp_wr;
	ctx->max_sge = resp.max_sge;
	ctx->max_inline = resp.max_inline;
	ctx->max_rd_atom = resp.max_rd_atom;
	ctx->cap_flags = resp.cap_flags;
	/* KITE_DBREC=0 keeps to the doorbell registers (for comparisons). */
	ctx->dbrec = (resp.comp_mask & KITE_ALLOC_UCTX_RESP_DBREC) &&
		     !kite_env_is_zero("KITE_DBREC");
	kite_qp_table_init(&ctx->qps);

	/* The doorbell page is device memory: map it write-only, shared. */
	ctx->db_size = resp.db_size;
	ctx->db = mmap(NULL, ctx->db_size, PROT_WRITE, MAP_SHARED, cmd_fd,
		       resp.db_mmap_offset);
	if (ctx->db == MAP_FAILED) {
		err = errno;
		verbs_err(&ctx->ibv_ctx,
			  "kite: cannot map doorbell page of context %u: %d\n",
			  ctx->uctx, err);
		pthread_mutex_destroy(&ctx->qps.lock);
		goto err_free;
	}

	verbs_set_ops(&ctx->ibv_ctx, &kite_ctx_ops);
	return &ctx->ibv_ctx;

err_free:
	/* Closing cmd_fd (in verbs_uninit_context) frees the kernel context. */
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	errno = err;
	return NULL;
}

static void kite_free_context(struct ibv_context *ibctx)
{
	struct kite_context *ctx = to_kite_ctx(ibctx);

	munmap(ctx->db, ctx->db_size);
	kite_qp_table_fini(&ctx->qps);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static struct verbs_device *kite_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct kite_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->ibv_dev;
}

static void kite_uninit_device(struct verbs_device *vdev)
{
	free(to_kite_dev(&vdev->device));
}

static const struct verbs_match_ent kite_match_table[] = {
	VERBS_PCI_MATCH(KITE_PCI_VENDOR_ID, KITE_PCI_DEVICE_ID, NULL),
	{},
};

static const struct verbs_device_ops kite_dev_ops = {
	.name = "kite",
	.match_min_abi_version = KITE_UVERBS_ABI_VERSION,
	.match_max_abi_version = KITE_UVERBS_ABI_VERSION,
	.match_table = kite_match_table,
	.alloc_device = kite_alloc_device,
	.uninit_device = kite_uninit_device,
	.alloc_context = kite_alloc_context,
};

PROVIDER_DRIVER(kite, kite_dev_ops);
