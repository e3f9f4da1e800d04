// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kite RoCEv2 NIC: rdma-core provider, the kernel-bypass fast path:
 * post_send, post_recv, poll_cq and req_notify_cq, on the rings this process
 * owns and the doorbell page of its context (Documentation/kite/hardware.rst,
 * "RDMA queues"; Documentation/kite/provider.rst, "Fast path").
 *
 * Posting writes WQEs at the queue's producer index and then rings one
 * doorbell for the whole list, after udma_to_device_barrier(), so the WQE
 * stores are visible before the device sees the doorbell. Polling checks a
 * CQE's phase bit, then issues udma_from_device_barrier() before reading
 * the rest of the entry (the device writes the flags byte last).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <util/compiler.h>
#include <util/mmio.h>
#include <util/udma_barrier.h>

#include "kite.h"

/* CQE status values are ib_wc_status values; libibverbs numbers them alike. */
#define KITE_SAME_STATUS(kite, ibv) \
	static_assert((int)(kite) == (int)(ibv), #kite " == " #ibv)

KITE_SAME_STATUS(KITE_CQE_SUCCESS, IBV_WC_SUCCESS);
KITE_SAME_STATUS(KITE_CQE_LOC_LEN_ERR, IBV_WC_LOC_LEN_ERR);
KITE_SAME_STATUS(KITE_CQE_LOC_QP_OP_ERR, IBV_WC_LOC_QP_OP_ERR);
KITE_SAME_STATUS(KITE_CQE_LOC_PROT_ERR, IBV_WC_LOC_PROT_ERR);
KITE_SAME_STATUS(KITE_CQE_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR);
KITE_SAME_STATUS(KITE_CQE_MW_BIND_ERR, IBV_WC_MW_BIND_ERR);
KITE_SAME_STATUS(KITE_CQE_BAD_RESP_ERR, IBV_WC_BAD_RESP_ERR);
KITE_SAME_STATUS(KITE_CQE_LOC_ACCESS_ERR, IBV_WC_LOC_ACCESS_ERR);
KITE_SAME_STATUS(KITE_CQE_REM_INV_REQ_ERR, IBV_WC_REM_INV_REQ_ERR);
KITE_SAME_STATUS(KITE_CQE_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR);
KITE_SAME_STATUS(KITE_CQE_REM_OP_ERR, IBV_WC_REM_OP_ERR);
KITE_SAME_STATUS(KITE_CQE_RETRY_EXC_ERR, IBV_WC_RETRY_EXC_ERR);
KITE_SAME_STATUS(KITE_CQE_RNR_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR);
KITE_SAME_STATUS(KITE_CQE_GENERAL_ERR, IBV_WC_GENERAL_ERR);

/* ---- QP table (kite.h) ----------------------------------------------------- */

void kite_qp_table_init(struct kite_qp_table *table)
{
	pthread_mutex_init(&table->lock, NULL);
	memset(table->dir, 0, sizeof(table->dir));
}

/* The context goes: every QP was destroyed, so every leaf was freed. */
void kite_qp_table_fini(struct kite_qp_table *table)
{
	uint32_t i;

	for (i = 0; i < KITE_QP_DIR_SIZE; i++)
		free(atomic_load_explicit(&table->dir[i], memory_order_relaxed));
	pthread_mutex_destroy(&table->lock);
}

/* Publishes @qp, fully set up, under its QP number; 0 or ENOMEM. */
int kite_qp_table_insert(struct kite_qp_table *table, struct kite_qp *qp)
{
	uint32_t qpn = qp->vqp.qp.qp_num & KITE_QPN_MASK;
	struct kite_qp_leaf *leaf;

	pthread_mutex_lock(&table->lock);
	leaf = atomic_load_explicit(&table->dir[qpn >> KITE_QP_LEAF_SHIFT],
				    memory_order_relaxed);
	if (!leaf) {
		leaf = calloc(1, sizeof(*leaf));
		if (!leaf) {
			pthread_mutex_unlock(&table->lock);
			return ENOMEM;
		}
		atomic_store_explicit(&table->dir[qpn >> KITE_QP_LEAF_SHIFT],
				      leaf, memory_order_release);
	}
	leaf->used++;
	atomic_store_explicit(&leaf->qp[qpn & (KITE_QP_LEAF_SIZE - 1)], qp,
			      memory_order_release);
	pthread_mutex_unlock(&table->lock);
	return 0;
}

/*
 * Takes @qp out; its leaf goes with its last QP. The caller has dropped
 * the QP's CQEs from its CQs first (kite.h).
 */
void kite_qp_table_remove(struct kite_qp_table *table, struct kite_qp *qp)
{
	uint32_t qpn = qp->vqp.qp.qp_num & KITE_QPN_MASK;
	struct kite_qp_leaf *leaf;

	pthread_mutex_lock(&table->lock);
	leaf = atomic_load_explicit(&table->dir[qpn >> KITE_QP_LEAF_SHIFT],
				    memory_order_relaxed);
	if (leaf && atomic_load_explicit(&leaf->qp[qpn &
						   (KITE_QP_LEAF_SIZE - 1)],
					 memory_order_relaxed) == qp) {
		atomic_store_explicit(&leaf->qp[qpn & (KITE_QP_LEAF_SIZE - 1)],
				      NULL, memory_order_release);
		if (!--leaf->used) {
			atomic_store_explicit(&table->dir[qpn >>
							  KITE_QP_LEAF_SHIFT],
					      NULL, memory_order_release);
			free(leaf);
		}
	}
	pthread_mutex_unlock(&table->lock);
}

/* The QP numbered @qpn, or NULL: no lock, two acquire loads. */
struct kite_qp *kite_qp_table_find(struct kite_qp_table *table, uint32_t qpn)
{
	struct kite_qp_leaf *leaf;

	if (qpn & ~KITE_QPN_MASK)
		return NULL;
	leaf = atomic_load_explicit(&table->dir[qpn >> KITE_QP_LEAF_SHIFT],
				    memory_order_acquire);
	if (!leaf)
		return NULL;
	return atomic_load_explicit(&leaf->qp[qpn & (KITE_QP_LEAF_SIZE - 1)],
				    memory_order_acquire);
}

/* ---- work queues ---------------------------------------------------------- */

static void *kite_wq_wqe(struct kite_wq *wq, uint32_t index)
{
	return (uint8_t *)wq->ring.buf +
	       (size_t)kite_ring_slot(index, wq->log_depth) * wq->stride;
}

/* Forget every posted WQE: the device did the same (modify to RESET). */
void kite_wq_reset(struct kite_wq *wq)
{
	pthread_spin_lock(&wq->lock);
	wq->pi = 0;
	wq->ci = 0;
	if (wq->rec_pi)
		*(volatile __le32 *)wq->rec_pi = 0;
	pthread_spin_unlock(&wq->lock);
}

/*
 * Retire the WQEs up to and including slot @slot (the wqe_idx of a CQE)
 * and give the wr_id of that slot. A send CQE also retires the earlier
 * unsignaled WQEs; a receive CQE always names the oldest one. A slot that
 * is not outstanding (a device bug) retires nothing and returns false: the
 * CQE is dropped, as the kernel driver does, rather than reported with the
 * wr_id of a WQE that completed long ago. Caller holds wq->lock.
 */
static bool kite_wq_retire(struct kite_wq *wq, uint32_t slot, uint64_t *wr_id)
{
	uint32_t mask = wq->depth - 1;
	uint32_t ahead = (slot - wq->ci) & mask;

	if (slot > mask || ahead >= kite_ring_used(wq->pi, wq->ci))
		return false;
	wq->ci += ahead + 1;
	*wr_id = wq->wr_id[slot];
	return true;
}

/* 64-bit doorbell write on this context's page; the caller orders it. */
void kite_ring_doorbell(struct kite_context *ctx, unsigned int reg,
			uint32_t num, uint8_t flags, uint32_t index)
{
	mmio_write64_le((uint8_t *)ctx->db + reg,
			htole64(kite_db_make(num, flags, index)));
}

/*
 * Make WQEs up to @pi visible to the device. Without a doorbell record:
 * the doorbell register. With one: the index goes to the record, and the
 * register is written only when the device has stopped polling the queue.
 * The full barrier orders the index store before the flag load; the
 * device orders its flag store before its last index load, so either the
 * device sees the index or we see the flag cleared (hardware.rst,
 * "Doorbell records").
 */
static void kite_wq_kick(struct kite_context *ctx, struct kite_wq *wq,
			 unsigned int reg, uint32_t qpn, uint32_t pi)
{
	udma_to_device_barrier();
	if (wq->rec_pi) {
		*(volatile __le32 *)wq->rec_pi = htole32(pi);
		atomic_thread_fence(memory_order_seq_cst);
		if (*(const volatile __le32 *)wq->rec_poll)
			return;
	}
	kite_ring_doorbell(ctx, reg, qpn, 0, pi);
}

/* ---- post_send ------------------------------------------------------------ */

/*
 * The device opcode for @wr on a QP of type @qp_type, or -1 when the QP
 * type does not allow it (RC: all; UC: SEND, WRITE, LOCAL_INV and BIND_MW;
 * UD: SEND and SEND_IMM). Windows are bound to RC and UC QPs only, so a
 * user LOCAL_INV, which may name only a window, has no use on UD.
 */
int kite_wqe_opcode(enum ibv_qp_type qp_type, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
		return KITE_WQE_SEND;
	case IBV_WR_SEND_WITH_IMM:
		return KITE_WQE_SEND_IMM;
	case IBV_WR_RDMA_WRITE:
		return qp_type == IBV_QPT_UD ? -1 : KITE_WQE_WRITE;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return qp_type == IBV_QPT_UD ? -1 : KITE_WQE_WRITE_IMM;
	case IBV_WR_RDMA_READ:
		return qp_type == IBV_QPT_RC ? KITE_WQE_READ : -1;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return qp_type == IBV_QPT_RC ? KITE_WQE_CMP_SWP : -1;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return qp_type == IBV_QPT_RC ? KITE_WQE_FETCH_ADD : -1;
	case IBV_WR_SEND_WITH_INV:
		return qp_type == IBV_QPT_RC ? KITE_WQE_SEND_INV : -1;
	case IBV_WR_LOCAL_INV:
		return qp_type == IBV_QPT_UD ? -1 : KITE_WQE_LOCAL_INV;
	case IBV_WR_BIND_MW:
		return qp_type == IBV_QPT_UD ? -1 : KITE_WQE_BIND_MW;
	default:
		return -1;
	}
}

void kite_put_sges(struct kite_sge *dst, const struct ibv_sge *sg,
		   int num_sge)
{
	int i;

	for (i = 0; i < num_sge; i++) {
		dst[i].addr = htole64(sg[i].addr);
		dst[i].length = htole32(sg[i].length);
		dst[i].lkey = htole32(sg[i].lkey);
	}
}

/*
 * Gather the data of @wr's SGEs into the WQE at @dst (inline send or
 * write). EINVAL when it exceeds the QP's max_inline_data.
 */
static int kite_put_inline(const struct kite_qp *qp, uint8_t *dst,
			   const struct ibv_send_wr *wr, uint16_t *len_out)
{
	size_t len = 0;
	int i;

	if (wr->num_sge < 0)
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > qp->max_inline - len)
			return EINVAL;
		len += wr->sg_list[i].length;
	}
	for (i = 0, len = 0; i < wr->num_sge; i++) {
		if (!wr->sg_list[i].length)
			continue;
		memcpy(dst + len, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		len += wr->sg_list[i].length;
	}
	*len_out = len;
	return 0;
}

/* ibv_access_flags a window may grant, and the device's bits for them. */
#define KITE_MW_ACCESS	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)

static uint32_t kite_mw_access(unsigned int ibv_access)
{
	uint32_t access = 0;

	if (ibv_access & IBV_ACCESS_REMOTE_WRITE)
		access |= KITE_ACCESS_REMOTE_WRITE;
	if (ibv_access & IBV_ACCESS_REMOTE_READ)
		access |= KITE_ACCESS_REMOTE_READ;
	if (ibv_access & IBV_ACCESS_REMOTE_ATOMIC)
		access |= KITE_ACCESS_REMOTE_ATOMIC;
	return access;
}

/*
 * The BIND_MW segment for @wr (IBV_WR_BIND_MW, or ibv_bind_mw() for a
 * type-1 window). What the device checks against its tables (PD, window
 * state, the MR's range and rights) completes with an error CQE; what
 * the provider can see wrong in the request itself is refused here:
 * a window of another context, a new key of another window, rights other
 * than the remote ones (zero-based windows: EOPNOTSUPP), a binding with
 * no MR but a range (or any type-2B binding without one), a range that
 * wraps.
 */
static int kite_put_bind_mw(struct kite_qp *qp, const struct ibv_send_wr *wr,
			    struct kite_wqe_bind_mw *seg)
{
	const struct ibv_mw_bind_info *bi = &wr->bind_mw.bind_info;
	const struct ibv_mw *mw = wr->bind_mw.mw;

	if (!mw || mw->context != qp->vqp.qp.context ||
	    kite_key_index(wr->bind_mw.rkey) != kite_key_index(mw->rkey))
		return EINVAL;
	if (bi->mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return EOPNOTSUPP;
	if (bi->mw_access_flags & ~KITE_MW_ACCESS)
		return EINVAL;
	if (!bi->mr && (bi->length || bi->addr || mw->type != IBV_MW_TYPE_1))
		return EINVAL;
	if (bi->mr && bi->mr->context != qp->vqp.qp.context)
		return EINVAL;
	if (bi->addr + bi->length < bi->addr)
		return EINVAL;
	seg->addr = htole64(bi->addr);
	seg->length = htole64(bi->length);
	seg->mw_key = htole32(wr->bind_mw.rkey);
	seg->mr_key = htole32(bi->mr ? bi->mr->lkey : 0);
	seg->access = htole32(kite_mw_access(bi->mw_access_flags));
	seg->reserved = 0;
	return 0;
}

/*
 * The rest of a SEND, WRITE, READ or atomic WQE after its segment at
 * @data: a UD QP's address segment, then the inline data or the SGEs.
 */
static int kite_put_data(struct kite_qp *qp, const struct ibv_send_wr *wr,
			 int op, uint8_t *data, struct kite_sq_wqe_hdr *hdr)
{
	bool inline_data;
	int err;

	/*
	 * UD (SEND and SEND_IMM only, by kite_wqe_opcode()): the AH's address
	 * vector, the destination QP and its Q_Key. A Q_Key with
	 * KITE_WQE_UD_QKEY_OWN set goes to the device as is: the device sends the QP's own Q_Key then
	 * (hardware.rst, kite_wqe_ud), so the provider need not know it.
	 */
	if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
		struct kite_wqe_ud *ud = (struct kite_wqe_ud *)data;

		if (!wr->wr.ud.ah || wr->wr.ud.remote_qpn & ~KITE_QPN_MASK)
			return EINVAL;
		memcpy(&ud->av, &to_kite_ah(wr->wr.ud.ah)->av, sizeof(ud->av));
		ud->remote_qpn = htole32(wr->wr.ud.remote_qpn);
		ud->remote_qkey = htole32(wr->wr.ud.remote_qkey);
		data += sizeof(*ud);
	}

	/*
	 * Inline data is for SENDs and WRITEs only; as other providers do,
	 * IBV_SEND_INLINE on a READ or an atomic is ignored (their SGEs
	 * describe where the result goes).
	 */
	inline_data = (wr->send_flags & IBV_SEND_INLINE) &&
		      op != KITE_WQE_READ && op != KITE_WQE_CMP_SWP &&
		      op != KITE_WQE_FETCH_ADD;
	if (inline_data) {
		uint16_t len = 0;

		err = kite_put_inline(qp, data, wr, &len);
		if (err)
			return err;
		hdr->flags |= KITE_WQE_F_INLINE;
		hdr->inline_len = htole16(len);
	} else {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq.max_sge)
			return EINVAL;
		kite_put_sges((struct kite_sge *)data, wr->sg_list,
			      wr->num_sge);
		hdr->num_sge = wr->num_sge;
	}
	return 0;
}

/*
 * Write the WQE for @wr into @wqe (a free SQ slot of the QP's stride). The
 * header goes in last, as one structure, after the segment and the data;
 * the device reads none of it before the doorbell anyway.
 */
static int kite_build_send_wqe(struct kite_qp *qp, const struct ibv_send_wr *wr,
			       void *wqe)
{
	enum ibv_qp_type qp_type = qp->vqp.qp.qp_type;
	struct kite_sq_wqe_hdr hdr = {};
	uint8_t *data = (uint8_t *)wqe + sizeof(hdr);
	int op, err;

	op = kite_wqe_opcode(qp_type, wr->opcode);
	if (op < 0)
		return EINVAL;
	hdr.opcode = op;

	switch (op) {
	case KITE_WQE_SEND_IMM:
	case KITE_WQE_WRITE_IMM:
		/* Network byte order already: copied to the wire as is. */
		hdr.imm_data = (__force __le32)wr->imm_data;
		break;
	case KITE_WQE_SEND_INV:
	case KITE_WQE_LOCAL_INV:
		/* The key, little-endian (not a wire field). */
		hdr.imm_data = htole32(wr->invalidate_rkey);
		break;
	default:
		break;
	}

	switch (op) {
	case KITE_WQE_WRITE:
	case KITE_WQE_WRITE_IMM:
	case KITE_WQE_READ: {
		struct kite_wqe_raddr *raddr = (struct kite_wqe_raddr *)data;

		raddr->remote_addr = htole64(wr->wr.rdma.remote_addr);
		raddr->rkey = htole32(wr->wr.rdma.rkey);
		raddr->reserved = 0;
		data += sizeof(*raddr);
		break;
	}
	case KITE_WQE_CMP_SWP:
	case KITE_WQE_FETCH_ADD: {
		struct kite_wqe_atomic *at = (struct kite_wqe_atomic *)data;

		at->remote_addr = htole64(wr->wr.atomic.remote_addr);
		at->rkey = htole32(wr->wr.atomic.rkey);
		at->reserved = 0;
		if (op == KITE_WQE_CMP_SWP) {
			at->swap_add = htole64(wr->wr.atomic.swap);
			at->compare = htole64(wr->wr.atomic.compare_add);
		} else {
			at->swap_add = htole64(wr->wr.atomic.compare_add);
			at->compare = 0;
		}
		data += sizeof(*at);
		break;
	}
	case KITE_WQE_BIND_MW:
		err = kite_put_bind_mw(qp, wr, (struct kite_wqe_bind_mw *)data);
		if (err)
			return err;
		break;
	default:
		break;
	}

	/* Memory operations carry no data: neither SGEs nor inline data. */
	if (op == KITE_WQE_LOCAL_INV || op == KITE_WQE_BIND_MW) {
		if (wr->num_sge || (wr->send_flags & IBV_SEND_INLINE))
			return EINVAL;
	} else {
		err = kite_put_data(qp, wr, op, data, &hdr);
		if (err)
			return err;
	}

	if ((wr->send_flags & IBV_SEND_SIGNALED) || qp->sig_all)
		hdr.flags |= KITE_WQE_F_SIGNALED;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		hdr.flags |= KITE_WQE_F_SOLICITED;
	if (wr->send_flags & IBV_SEND_FENCE)
		hdr.flags |= KITE_WQE_F_FENCE;

	memcpy(wqe, &hdr, sizeof(hdr));
	return 0;
}

/*
 * Write @wr into the SQ slot at free-running index *@pi and advance it:
 * ENOMEM when the SQ is full, else what building the WQE gives. Nothing
 * reaches the device before kite_sq_publish(). Caller holds sq->lock;
 * post_send and the ibv_wr_* batches (kite_qp_ex.c) both post this way.
 */
int kite_sq_put(struct kite_qp *qp, const struct ibv_send_wr *wr, uint32_t *pi)
{
	struct kite_wq *sq = &qp->sq;
	int err;

	if (kite_ring_used(*pi, sq->ci) >= sq->depth)
		return ENOMEM;
	err = kite_build_send_wqe(qp, wr, kite_wq_wqe(sq, *pi));
	if (err)
		return err;
	sq->wr_id[kite_ring_slot(*pi, sq->log_depth)] = wr->wr_id;
	(*pi)++;
	return 0;
}

/* Hand the WQEs written up to @pi to the device. Caller holds sq->lock. */
void kite_sq_publish(struct kite_qp *qp, uint32_t pi)
{
	struct ibv_qp *ibqp = &qp->vqp.qp;

	if (pi == qp->sq.pi)
		return;
	qp->sq.pi = pi;
	kite_wq_kick(to_kite_ctx(ibqp->context), &qp->sq, KITE_DB_SQ,
		     ibqp->qp_num, pi);
}

/*
 * Post a list of send WRs: each goes into the next free SQ slot; one
 * doorbell then covers all that were written. On an error, *bad_wr is the
 * WR that failed and the ones before it are posted.
 */
int kite_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	struct kite_qp *qp = to_kite_qp(ibqp);
	struct kite_wq *sq = &qp->sq;
	uint32_t pi;
	int err = 0;

	pthread_spin_lock(&sq->lock);
	pi = sq->pi;

	if (!kite_sq_takes_work(ibqp->state)) {
		err = EINVAL;
		goto out;
	}
	for (; wr; wr = wr->next) {
		err = kite_sq_put(qp, wr, &pi);
		if (err)
			break;
	}
	kite_sq_publish(qp, pi);
out:
	if (err)
		*bad_wr = wr;
	pthread_spin_unlock(&sq->lock);
	return err;
}

/* ---- post_recv ------------------------------------------------------------ */

int kite_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct kite_context *ctx = to_kite_ctx(ibqp->context);
	struct kite_qp *qp = to_kite_qp(ibqp);
	struct kite_wq *rq = &qp->rq;
	uint32_t pi;
	int err = 0;

	/* A QP on an SRQ takes receives from ibv_post_srq_recv() only. */
	if (qp->srq) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&rq->lock);
	pi = rq->pi;

	/* Receives may be posted from INIT on. */
	if (ibqp->state == IBV_QPS_RESET) {
		err = EINVAL;
		goto out;
	}

	for (; wr; wr = wr->next) {
		struct kite_rq_wqe_hdr hdr = {};
		uint8_t *wqe;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge) {
			err = EINVAL;
			break;
		}
		if (kite_ring_used(pi, rq->ci) >= rq->depth) {
			err = ENOMEM;
			break;
		}
		wqe = kite_wq_wqe(rq, pi);
		kite_put_sges((struct kite_sge *)(wqe + sizeof(hdr)),
			      wr->sg_list, wr->num_sge);
		hdr.num_sge = wr->num_sge;
		memcpy(wqe, &hdr, sizeof(hdr));
		rq->wr_id[kite_ring_slot(pi, rq->log_depth)] = wr->wr_id;
		pi++;
	}

	if (pi != rq->pi) {
		rq->pi = pi;
		kite_wq_kick(ctx, rq, KITE_DB_RQ, ibqp->qp_num, pi);
	}
out:
	if (err)
		*bad_wr = wr;
	pthread_spin_unlock(&rq->lock);
	return err;
}

/* ---- CQ ------------------------------------------------------------------- */

static struct kite_cqe *kite_cqe_at(void *ring, uint32_t index,
				    uint8_t log_depth)
{
	return (struct kite_cqe *)ring + kite_ring_slot(index, log_depth);
}

/*
 * The CQE at free-running @index if the device has written it (its phase
 * is the one of this pass), else NULL. The flags byte is written last by
 * the device; the barrier keeps the reads of the other bytes after it.
 */
static struct kite_cqe *kite_cqe_ready(void *ring, uint32_t index,
				       uint8_t log_depth)
{
	struct kite_cqe *cqe = kite_cqe_at(ring, index, log_depth);
	uint8_t flags = *(volatile uint8_t *)&cqe->flags;

	if ((flags & KITE_CQE_F_PHASE) != kite_ring_phase(index, log_depth))
		return NULL;
	udma_from_device_barrier();
	return cqe;
}

/* Whether the device has written the CQE at @ci of @ring (unpolled). */
bool kite_cq_ring_pending(void *ring, uint32_t ci, uint8_t log_depth)
{
	return kite_cqe_ready(ring, ci, log_depth) != NULL;
}

/* The CQ doorbell with the consumer index (frees the device's space). */
void kite_cq_doorbell_ci(struct kite_context *ctx, struct kite_cq *cq)
{
	udma_to_device_barrier();
	kite_ring_doorbell(ctx, KITE_DB_CQ, cq->cqn, 0, cq->ci);
	cq->db_ci = cq->ci;
}

/*
 * Tell the device how far the CQ has been consumed: in the doorbell
 * record, where the device reads it before it would find the ring full,
 * or else with the CQ doorbell. The barrier keeps the CQE reads before
 * the store that lets the device overwrite them.
 */
void kite_cq_report_ci(struct kite_context *ctx, struct kite_cq *cq)
{
	if (!cq->rec_ci) {
		kite_cq_doorbell_ci(ctx, cq);
		return;
	}
	udma_to_device_barrier();
	*(volatile __le32 *)cq->rec_ci = htole32(cq->ci);
	cq->db_ci = cq->ci;
}

/*
 * Mark the written, unpolled CQEs of QP @qpn in @ring (from @ci on) as
 * belonging to no QP (qpn 0 is never a QP), so poll_cq drops them. The
 * receives of a QP on SRQ @srq give their slots back to it.
 */
static void kite_cq_ring_forget(void *ring, uint32_t ci, uint8_t log_depth,
				uint32_t qpn, struct kite_srq *srq)
{
	uint32_t i, n = 1u << log_depth;
	struct kite_cqe *cqe;
	uint64_t wr_id;

	for (i = 0; i < n; i++) {
		cqe = kite_cqe_ready(ring, ci + i, log_depth);
		if (!cqe)
			break;
		if (le32toh(cqe->qpn) != qpn)
			continue;
		if (srq && kite_cqe_is_recv(cqe->opcode))
			kite_srq_retire(srq, le16toh(cqe->wqe_idx), &wr_id);
		cqe->qpn = 0;
	}
}

/*
 * The QP @qpn is gone or was reset: drop its CQEs that are still in the CQ
 * and the lookup cache; a QP on SRQ @srq (or NULL) returns the slots of its
 * receives. Called after the device stopped writing CQEs for
 * it (destroy or modify to RESET returned).
 */
void kite_cq_forget_qp(struct kite_cq *cq, uint32_t qpn, struct kite_srq *srq)
{
	pthread_spin_lock(&cq->lock);
	if (cq->last_qp && cq->last_qp->vqp.qp.qp_num == qpn)
		cq->last_qp = NULL;
	if (cq->old.buf)
		kite_cq_ring_forget(cq->old.buf, cq->old_ci, cq->old_log_depth,
				    qpn, srq);
	kite_cq_ring_forget(cq->ring.buf, cq->ci, cq->log_depth, qpn, srq);
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode kite_wc_opcode(uint8_t op, bool *ok)
{
	*ok = true;
	switch (op) {
	case KITE_CQE_SEND:
		return IBV_WC_SEND;
	case KITE_CQE_WRITE:
		return IBV_WC_RDMA_WRITE;
	case KITE_CQE_READ:
		return IBV_WC_RDMA_READ;
	case KITE_CQE_CMP_SWP:
		return IBV_WC_COMP_SWAP;
	case KITE_CQE_FETCH_ADD:
		return IBV_WC_FETCH_ADD;
	case KITE_CQE_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	case KITE_CQE_BIND_MW:
		return IBV_WC_BIND_MW;
	case KITE_CQE_RECV:
		return IBV_WC_RECV;
	case KITE_CQE_RECV_WRITE_IMM:
		return IBV_WC_RECV_RDMA_WITH_IMM;
	default:
		*ok = false;
		return kite_cqe_is_recv(op) ? IBV_WC_RECV : IBV_WC_SEND;
	}
}

/*
 * ibv_wc.sl of a UD receive: the RoCE packet type, as ConnectX reports it
 * there (bit 3: a UDP header, RoCEv2; bits 2:0: the L3 header, 1 IPv6,
 * 2 IPv4). UCX before 1.19 reads IPv4 vs IPv6 from it to check the GRH
 * area's destination GID. RoCEv2 without a VLAN tag carries no service
 * level, so nothing is lost; see provider.rst.
 */
#define KITE_WC_SL_ROCE_UDP	0x8
#define KITE_WC_SL_L3_IPV6	0x1
#define KITE_WC_SL_L3_IPV4	0x2

static uint8_t kite_wc_sl(uint8_t net_hdr)
{
	switch (net_hdr) {
	case KITE_CQE_NET_IPV4:
		return KITE_WC_SL_ROCE_UDP | KITE_WC_SL_L3_IPV4;
	case KITE_CQE_NET_IPV6:
		return KITE_WC_SL_ROCE_UDP | KITE_WC_SL_L3_IPV6;
	default:
		return 0;
	}
}

/*
 * Retire the WQE @cqe completes on @qp and give its wr_id: bit 7 of the
 * opcode is a receive, from the RQ or, for a QP on an SRQ, from the SRQ
 * slot the CQE names. False: the CQE names no outstanding WQE.
 */
bool kite_qp_retire(struct kite_qp *qp, const struct kite_cqe *cqe,
		    uint64_t *wr_id)
{
	struct kite_wq *wq;
	bool ok;

	if (kite_cqe_is_recv(cqe->opcode) && qp->srq)
		return kite_srq_retire(qp->srq, le16toh(cqe->wqe_idx), wr_id);
	wq = kite_cqe_is_recv(cqe->opcode) ? &qp->rq : &qp->sq;
	pthread_spin_lock(&wq->lock);
	ok = kite_wq_retire(wq, le16toh(cqe->wqe_idx), wr_id);
	pthread_spin_unlock(&wq->lock);
	return ok;
}

/*
 * Turn @cqe into @wc. False when the CQE is to be dropped: it names no QP
 * of this context (anymore), or no outstanding WQE of the QP.
 */
static bool kite_cqe_to_wc(struct kite_context *ctx, struct kite_cq *cq,
			   const struct kite_cqe *cqe, struct ibv_wc *wc)
{
	uint32_t qpn = le32toh(cqe->qpn);
	struct kite_qp *qp = cq->last_qp;
	bool ok;

	if (!qpn)
		return false;
	if (!qp || qp->vqp.qp.qp_num != qpn) {
		qp = kite_qp_table_find(&ctx->qps, qpn);
		if (!qp)
			return false;
		cq->last_qp = qp;
	}

	if (!kite_qp_retire(qp, cqe, &wc->wr_id))
		return false;

	wc->status = cqe->status;
	wc->opcode = kite_wc_opcode(cqe->opcode, &ok);
	if (!ok && wc->status == IBV_WC_SUCCESS)
		wc->status = IBV_WC_GENERAL_ERR;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = le32toh(cqe->byte_len);
	wc->qp_num = qpn;
	wc->src_qp = le32toh(cqe->src_qp) & KITE_QPN_MASK;
	wc->wc_flags = 0;
	wc->imm_data = 0;
	if (cqe->flags & KITE_CQE_F_IMM) {
		wc->wc_flags |= IBV_WC_WITH_IMM;
		/* As on the wire (__be32), like ibv_send_wr's imm_data. */
		wc->imm_data = (__force __be32)cqe->imm_data;
	} else if ((cqe->flags & KITE_CQE_F_INV) &&
		   kite_cqe_is_recv(cqe->opcode)) {
		/*
		 * A SEND_WITH_INV received: the rkey it invalidated. Only a
		 * receive can have invalidated one; on a send completion the
		 * bit means nothing and imm_data is no key.
		 */
		wc->wc_flags |= IBV_WC_WITH_INV;
		wc->invalidated_rkey = le32toh(cqe->imm_data);
	}
	if (cqe->flags & KITE_CQE_F_GRH)
		wc->wc_flags |= IBV_WC_GRH;
	wc->pkey_index = le16toh(cqe->pkey_index);
	wc->slid = 0;
	wc->sl = kite_wc_sl(cqe->net_hdr);
	wc->dlid_path_bits = 0;
	return true;
}

/*
 * Consume CQEs up to the next one that completes a WQE and turn it into
 * @wc; false when the device has written no more. CQEs the device wrote
 * to the ring in use before the last resize come first (that ring is freed
 * once none is left); dropped CQEs are consumed on the way. During a long
 * poll the device gets its space back every half depth. Caller holds
 * cq->lock; poll_cq and the poll-ops interface (kite_cq_ex.c) both poll
 * this way.
 */
bool kite_cq_next_wc(struct kite_context *ctx, struct kite_cq *cq,
		     struct ibv_wc *wc)
{
	struct kite_cqe *cqe;
	bool ok;

	while (cq->old.buf) {
		cqe = kite_cqe_ready(cq->old.buf, cq->old_ci,
				     cq->old_log_depth);
		if (!cqe) {
			/* The device finished this ring before the resize. */
			kite_ring_free(&cq->old);
			break;
		}
		cq->old_ci++;
		if (kite_cqe_to_wc(ctx, cq, cqe, wc))
			return true;
	}
	for (;;) {
		cqe = kite_cqe_ready(cq->ring.buf, cq->ci, cq->log_depth);
		if (!cqe)
			return false;
		cq->ci++;
		ok = kite_cqe_to_wc(ctx, cq, cqe, wc);
		if (kite_ring_used(cq->ci, cq->db_ci) >= cq->depth / 2)
			kite_cq_report_ci(ctx, cq);
		if (ok)
			return true;
	}
}

/*
 * Report the consumer index whenever it moved: the ring holds exactly
 * depth CQEs, and a consumer may keep that many completions pending, so
 * any CQE consumed but not reported could make the device see an overflow
 * (fatal for the CQ) that the consumer never caused. Caller holds cq->lock.
 */
void kite_cq_poll_done(struct kite_context *ctx, struct kite_cq *cq)
{
	if (cq->ci != cq->db_ci)
		kite_cq_report_ci(ctx, cq);
}

int kite_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct kite_context *ctx = to_kite_ctx(ibcq->context);
	struct kite_cq *cq = to_kite_cq(ibcq);
	int n = 0;

	if (ne < 0)
		return -EINVAL;

	pthread_spin_lock(&cq->lock);
	while (n < ne && kite_cq_next_wc(ctx, cq, &wc[n]))
		n++;
	kite_cq_poll_done(ctx, cq);
	pthread_spin_unlock(&cq->lock);
	return n;
}

/*
 * Arm the CQ: the CQ doorbell with ARM_SOLICITED or ARM_NEXT and the
 * current consumer index. If CQEs beyond that index exist already, the
 * device posts the event at once, so no completion is missed between the
 * last poll and the arm.
 */
int kite_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct kite_context *ctx = to_kite_ctx(ibcq->context);
	struct kite_cq *cq = to_kite_cq(ibcq);
	uint8_t arm = solicited_only ? KITE_DB_CQ_ARM_SOLICITED :
				       KITE_DB_CQ_ARM_NEXT;

	pthread_spin_lock(&cq->lock);
	udma_to_device_barrier();
	kite_ring_doorbell(ctx, KITE_DB_CQ, cq->cqn, arm, cq->ci);
	cq->db_ci = cq->ci;
	pthread_spin_unlock(&cq->lock);
	return 0;
}
