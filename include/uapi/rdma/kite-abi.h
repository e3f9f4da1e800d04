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

/*
 * comp_mask bits of kite_alloc_ucontext_resp: what the driver accepts.
 * DBREC: CREATE_CQ and CREATE_QP take a doorbell record (dbrec_va, with
 * KITE_CREATE_CQ_REQ_DBREC / KITE_CREATE_QP_REQ_DBREC); set only when the
 * device implements records (device ABI 1.2).
 */
#define KITE_ALLOC_UCTX_RESP_DBREC	(1u << 0)

/* Response to ALLOC_UCONTEXT. The driver reads no request data. */
struct kite_alloc_ucontext_resp {
	__u32 comp_mask;	/* KITE_ALLOC_UCTX_RESP_* */
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

/*
 * CQ and QP rings. User CQ and QP rings live in user memory that the
 * provider allocates (zeroed, 4 KiB aligned) and names in
 * the create request; the driver pins it with ib_umem_get() and describes
 * it to the device with the same page-list (PBL) path as MRs, so no
 * kernel memory is mmapped into the process and no mmap entry has to
 * outlive the object. Kernel CQs and QPs use dma_alloc_coherent() rings
 * (PBL level 0).
 *
 * The provider computes the ring sizes with the driver's rules and the
 * driver checks that each buffer is large enough (only the ring size is
 * pinned; a larger buffer is allowed):
 *   CQ depth  = roundup_pow_of_two(max(cqe, 4)), <= max_cqe;
 *               ring bytes = depth * 32 (struct kite_cqe).
 *   SQ depth  = roundup_pow_of_two(max(max_send_wr, 4)), <= max_qp_wr;
 *   SQ stride = smallest power of two, 64 .. 1024, that holds
 *               16 + 40 + max(max_send_sge * 16, max_inline_data);
 *   RQ depth  = roundup_pow_of_two(max(max_recv_wr, 4)), <= max_qp_wr;
 *   RQ stride = smallest power of two, 16 .. 1024, that holds
 *               16 + max_recv_sge * 16;
 *   ring bytes = depth * stride.
 * Buffer addresses must be 4 KiB aligned. The first pass over a CQ ring is
 * written with phase 1, so the provider zeroes the CQ ring.
 *
 * Doorbell records: with KITE_ALLOC_UCTX_RESP_DBREC, a CQ or QP may name
 * a doorbell record (struct kite_cq_dbrec / kite_qp_dbrec of kite_hw.h)
 * in dbrec_va, aligned to its size (so within one page), zeroed; the
 * driver pins it for the object's life. The provider then keeps the
 * indexes there and writes the doorbell registers only as the record's
 * protocol asks (hardware.rst, "Doorbell records"). A provider that sends
 * the shorter requests without dbrec_va (comp_mask 0) uses the doorbell
 * registers only, as before.
 *
 * Size checks: a request shorter than its structure (CREATE_CQ and
 * CREATE_QP: a length other than the first version's, up to buf_len /
 * rq_len, or the whole structure's; the whole structure with the DBREC
 * bit), an unknown comp_mask bit, a non-zero reserved
 * field, non-zero bytes after the structure, or a response
 * buffer shorter than the response structure (for every command with a
 * driver response, ucontext and PD included) → EINVAL. REG_MR and
 * MODIFY_QP carry no driver data (any request data must be zero).
 */

#define KITE_CREATE_CQ_REQ_DBREC	(1u << 0)	/* dbrec_va is valid */

/* Request of CREATE_CQ (required for user CQs). */
struct kite_create_cq_req {
	__u32 comp_mask;	/* KITE_CREATE_CQ_REQ_* */
	__u32 reserved_20;
	__aligned_u64 buf_va;	/* CQ ring */
	__aligned_u64 buf_len;	/* bytes allocated at buf_va */
	__aligned_u64 dbrec_va;	/* struct kite_cq_dbrec */
};

/* Response to CREATE_CQ. */
struct kite_create_cq_resp {
	__u32 comp_mask;
	__u32 cqn;		/* for the CQ doorbell */
	__u32 depth;		/* CQEs in the ring (power of two) */
	__u32 reserved_60;
};

/*
 * Request of RESIZE_CQ (required for user CQs): the new ring, laid out
 * and sized as for CREATE_CQ. The old ring stays in use until the verb
 * succeeds; the provider frees it afterwards.
 */
struct kite_resize_cq_req {
	__u32 comp_mask;	/* zero */
	__u32 reserved_20;
	__aligned_u64 buf_va;	/* new CQ ring */
	__aligned_u64 buf_len;	/* bytes allocated at buf_va */
};

#define KITE_CREATE_QP_REQ_DBREC	(1u << 0)	/* dbrec_va is valid */

/* Request of CREATE_QP (required for user QPs). */
struct kite_create_qp_req {
	__u32 comp_mask;	/* KITE_CREATE_QP_REQ_* */
	__u32 reserved_20;
	__aligned_u64 sq_va;	/* send ring */
	__aligned_u64 sq_len;	/* bytes allocated at sq_va */
	__aligned_u64 rq_va;	/* receive ring */
	__aligned_u64 rq_len;	/* bytes allocated at rq_va */
	__aligned_u64 dbrec_va;	/* struct kite_qp_dbrec */
};

/* Response to CREATE_QP. */
struct kite_create_qp_resp {
	__u32 comp_mask;
	__u32 qpn;
	__u32 sq_depth;		/* WQEs (power of two) */
	__u32 sq_stride;	/* bytes per WQE */
	__u32 rq_depth;
	__u32 rq_stride;
};

/*
 * Request of CREATE_SRQ (required for user SRQs, device ABI 1.4): the WQE
 * ring, which the provider allocates (zeroed, 4 KiB aligned) and sizes
 * with the driver's rules:
 *   depth  = roundup_pow_of_two(max(max_wr + 1, 4)), depth - 1 <= max_srq_wr
 *            (one slot always stays free: hardware.rst, "Shared receive
 *            queues");
 *   stride = smallest power of two, 16 .. 1024, that holds
 *            16 + max_sge * 16;
 *   ring bytes = depth * stride.
 * Before the first post the provider links the slots: the next field of
 * slot i's header is (i + 1) % depth. A QP on an SRQ sends rq_va and
 * rq_len 0 in its CREATE_QP request and gets rq_depth and rq_stride 0.
 */
struct kite_create_srq_req {
	__u32 comp_mask;	/* zero */
	__u32 reserved_20;
	__aligned_u64 buf_va;	/* SRQ ring */
	__aligned_u64 buf_len;	/* bytes allocated at buf_va */
};

/* Response to CREATE_SRQ. */
struct kite_create_srq_resp {
	__u32 comp_mask;
	__u32 srqn;		/* for the SRQ doorbell */
	__u32 depth;		/* slots (power of two); max_wr = depth - 1 */
	__u32 stride;		/* bytes per WQE */
};

/*
 * Response to CREATE_AH (user AHs). ib_core resolves the destination MAC
 * in the kernel; the provider builds the device address vector (struct
 * kite_av of kite_hw.h) of each UD send from the ibv_ah_attr it was given
 * plus these fields, so posting needs no system call.
 */
struct kite_create_ah_resp {
	__u32 comp_mask;
	__u8 dmac[6];
	__u8 net_type;		/* enum kite_net_type of kite_hw.h */
	__u8 reserved_58;
	__u32 reserved_60;
};

#endif /* KITE_ABI_USER_H */
