/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * Kite uverbs ABI: the udata structures exchanged between the kite kernel
 * driver and its rdma-core provider.
 *
 * Rules: every structure is 8-byte aligned; responses start with comp_mask;
 * reserved fields are named reserved_XXX after their bit offset (hex) and
 * must be zero.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_ABI_USER_H
#define KITE_ABI_USER_H

#include <linux/types.h>

#define KITE_UVERBS_ABI_VERSION 1

/* Response to ALLOC_UCONTEXT. The driver reads no request data. */
struct kite_alloc_ucontext_resp {
	__u32 comp_mask;
	__u32 uctx;		/* context number = doorbell page index */
	__aligned_u64 db_mmap_offset;	/* mmap() offset of the doorbell page */
	__u32 db_size;		/* bytes to map at db_mmap_offset */
	__u32 dev_abi_version;	/* device ABI: major << 16 | minor */
	__u32 max_qp;
	__u32 max_cq;
	__u32 max_cqe;
	__u32 max_qp_wr;
	__u32 max_sge;
	__u32 max_inline;
	__u32 max_rd_atom;
	__u32 cap_flags;	/* KITE_DEV_CAP_* of kite_hw.h */
	__u8 reserved_1c0[8];
};

/* Response to ALLOC_PD. */
struct kite_alloc_pd_resp {
	__u32 comp_mask;
	__u32 pdn;
};

#endif /* KITE_ABI_USER_H */
