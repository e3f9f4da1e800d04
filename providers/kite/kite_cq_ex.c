// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kite RoCEv2 NIC: rdma-core provider, extended CQs: ibv_create_cq_ex()
 * and the poll-ops interface (ibv_start_poll, ibv_next_poll,
 * ibv_end_poll and the ibv_wc_read_* accessors).
 *
 * A CQE is decoded once, by the same code as for ibv_poll_cq()
 * (kite_cq_next_wc() in kite_fast.c), into a struct ibv_wc kept in the
 * CQ; the accessors read its fields. The CQ lock is held from a
 * successful start_poll to end_poll, as poll_cq holds it for one call.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <errno.h>

#include "kite.h"

/*
 * What a Kite CQE can fill: the standard fields, filled as ibv_poll_cq()
 * fills them (slid and dlid_path_bits 0, sl the RoCE packet type of a UD
 * receive; provider.rst). The device has no clock in its CQEs (no
 * completion timestamps), no VLAN stripping, flow tags or tag matching.
 */
#define KITE_CQ_EX_WC_FLAGS	IBV_WC_STANDARD_FLAGS

/*
 * Whether a CQ can be created as @attr asks: 0 or EOPNOTSUPP. Parent
 * domains are not offered; a CQ that may be overrun is not either (an
 * overrun is fatal for a Kite CQ). SINGLE_THREADED is only a promise of
 * the caller: the CQ keeps its lock.
 */
int kite_cq_ex_check(const struct ibv_cq_init_attr_ex *attr)
{
	if (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS)
		return EOPNOTSUPP;
	if (attr->wc_flags & ~(uint64_t)KITE_CQ_EX_WC_FLAGS)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))
		return EOPNOTSUPP;
	return 0;
}

static inline struct kite_cq *kite_cq_of_ex(struct ibv_cq_ex *ibcq)
{
	return container_of(ibcq, struct kite_cq, vcq.cq_ex);
}

/* Make the current completion visible through the ibv_cq_ex fields. */
static void kite_cq_ex_show(struct kite_cq *cq)
{
	cq->vcq.cq_ex.wr_id = cq->poll_wc.wr_id;
	cq->vcq.cq_ex.status = cq->poll_wc.status;
}

/*
 * The first completion, with the CQ lock taken; ENOENT (lock released)
 * when there is none, and then end_poll is not called.
 */
static int kite_start_poll(struct ibv_cq_ex *ibcq,
			   struct ibv_poll_cq_attr *attr)
{
	struct kite_context *ctx = to_kite_ctx(ibcq->context);
	struct kite_cq *cq = kite_cq_of_ex(ibcq);

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	if (!kite_cq_next_wc(ctx, cq, &cq->poll_wc)) {
		kite_cq_poll_done(ctx, cq);
		pthread_spin_unlock(&cq->lock);
		return ENOENT;
	}
	kite_cq_ex_show(cq);
	return 0;
}

static int kite_next_poll(struct ibv_cq_ex *ibcq)
{
	struct kite_cq *cq = kite_cq_of_ex(ibcq);

	if (!kite_cq_next_wc(to_kite_ctx(ibcq->context), cq, &cq->poll_wc))
		return ENOENT;
	kite_cq_ex_show(cq);
	return 0;
}

/* The device learns the consumer index, as after poll_cq; unlock. */
static void kite_end_poll(struct ibv_cq_ex *ibcq)
{
	struct kite_cq *cq = kite_cq_of_ex(ibcq);

	kite_cq_poll_done(to_kite_ctx(ibcq->context), cq);
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode kite_wc_read_opcode(struct ibv_cq_ex *ibcq)
{
	return kite_cq_of_ex(ibcq)->poll_wc.opcode;
}

static uint32_t kite_wc_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return kite_cq_of_ex(ibcq)->poll_wc.vendor_err;
}

static uint32_t kite_wc_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return kite_cq_of_ex(ibcq)->poll_wc.byte_len;
}

/*
 * Immediate data as on the wire, or (IBV_WC_WITH_INV) the invalidated
 * rkey in host order, which ibv_wc_read_invalidated_rkey() reads here:
 * the two share a union in struct ibv_wc, as in the CQE.
 */
static __be32 kite_wc_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return kite_cq_of_ex(ibcq)->poll_wc.imm_data;
}

static uint32_t kite_wc_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return kite_cq_of_ex(ibcq)->poll_wc.qp_num;
}

static uint32_t kite_wc_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return kite_cq_of_ex(ibcq)->poll_wc.src_qp;
}

static unsigned int kite_wc_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return kite_cq_of_ex(ibcq)->poll_wc.wc_flags;
}

static uint32_t kite_wc_read_slid(struct ibv_cq_ex *ibcq)
{
	return kite_cq_of_ex(ibcq)->poll_wc.slid;
}

static uint8_t kite_wc_read_sl(struct ibv_cq_ex *ibcq)
{
	return kite_cq_of_ex(ibcq)->poll_wc.sl;
}

static uint8_t kite_wc_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return kite_cq_of_ex(ibcq)->poll_wc.dlid_path_bits;
}

/*
 * Install the poll ops. Every accessor of a field Kite fills is there,
 * requested in wc_flags or not (each costs nothing: the CQE is decoded
 * whole); those of fields Kite cannot fill stay NULL, as their wc_flags
 * are refused.
 */
void kite_cq_ex_set_ops(struct kite_cq *cq)
{
	struct ibv_cq_ex *ex = &cq->vcq.cq_ex;

	ex->start_poll = kite_start_poll;
	ex->next_poll = kite_next_poll;
	ex->end_poll = kite_end_poll;
	ex->read_opcode = kite_wc_read_opcode;
	ex->read_vendor_err = kite_wc_read_vendor_err;
	ex->read_byte_len = kite_wc_read_byte_len;
	ex->read_imm_data = kite_wc_read_imm_data;
	ex->read_qp_num = kite_wc_read_qp_num;
	ex->read_src_qp = kite_wc_read_src_qp;
	ex->read_wc_flags = kite_wc_read_wc_flags;
	ex->read_slid = kite_wc_read_slid;
	ex->read_sl = kite_wc_read_sl;
	ex->read_dlid_path_bits = kite_wc_read_dlid_path_bits;
}

/*
 * With only what kite_cq_ex_check() lets through, the kernel object is
 * the one ibv_create_cq() makes (no CQ creation flags for the driver),
 * so the CQ is created the same way and given the poll ops.
 */
struct ibv_cq_ex *kite_create_cq_ex(struct ibv_context *context,
				    struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_cq *ibcq;
	int err;

	err = kite_cq_ex_check(attr);
	if (err) {
		errno = err;
		return NULL;
	}
	ibcq = kite_create_cq(context, attr->cqe, attr->channel,
			      attr->comp_vector);
	if (!ibcq)
		return NULL;
	kite_cq_ex_set_ops(to_kite_cq(ibcq));
	return &to_kite_cq(ibcq)->vcq.cq_ex;
}
