/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kite verbs: the driver objects behind ib_core objects and the verbs
 * entry points, by file.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_VERBS_H
#define KITE_VERBS_H

#include <linux/kite/compat.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include <kite/kite_hw.h>

#include "kite_ib.h"

struct kite_ib_dev;
struct kite_eq;
struct kite_counter;

struct kite_ucontext {
	struct ib_ucontext ibuc;
	u32 uctx;
	struct rdma_user_mmap_entry *db_entry;
};

struct kite_pd {
	struct ib_pd ibpd;
	u32 pdn;
	u32 uctx;
};

/**
 * struct kite_pbl - a page buffer list the device walks (kite_pbl_desc)
 * @desc: descriptor as it goes into commands (little-endian)
 * @chunks: level 1/2: CPU addresses of the 4 KiB chunks of page addresses
 * @chunk_dma: DMA addresses of @chunks
 * @nchunks: number of entries of @chunks
 * @top: level 2: array of the chunks' DMA addresses
 * @top_dma: DMA address of @top
 * @top_size: bytes allocated for @top
 */
struct kite_pbl {
	struct kite_pbl_desc desc;
	__le64 **chunks;
	dma_addr_t *chunk_dma;
	u32 nchunks;
	__le64 *top;
	dma_addr_t top_dma;
	size_t top_size;
};

/**
 * struct kite_ring - memory of a CQ, SQ or RQ ring
 * @buf: kernel ring: CPU address (dma_alloc_coherent)
 * @dma: kernel ring: DMA address
 * @size: kernel ring: bytes allocated
 * @umem: user ring: the pinned user memory
 * @pbl: how the device finds the ring
 */
struct kite_ring {
	void *buf;
	dma_addr_t dma;
	size_t size;
	struct ib_umem *umem;
	struct kite_pbl pbl;
	/* A kernel ring too big for one allocation: its pages, mapped at buf. */
	void **pages;
	dma_addr_t *page_dma;
	u32 npages;
};

/**
 * struct kite_dbrec - a user doorbell record (struct kite_qp_dbrec or
 *		       kite_cq_dbrec) the device reads and writes
 * @umem: the pinned page holding it, or NULL for none
 * @dma: its DMA address (0 for none)
 */
struct kite_dbrec {
	struct ib_umem *umem;
	dma_addr_t dma;
};

/**
 * struct kite_mr - a memory region
 * @ibmr: ib_core object
 * @umem: user MR: the pinned memory
 * @pbl: user MR: how the device finds its pages
 * @uctx: owning context (0: kernel)
 * @access: user MR: its ib_access_flags (re-registration keeps them)
 * @pages: fast-register MR: page list of its next REG_MR work request
 * @pages_dma: DMA address of @pages
 * @max_pages: entries of @pages
 * @npages: entries map_mr_sg filled
 */
struct kite_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	struct kite_pbl pbl;
	u32 uctx;
	int access;
	__le64 *pages;
	dma_addr_t pages_dma;
	u32 max_pages;
	u32 npages;
};

/**
 * struct kite_mw - a memory window
 * @ibmw: ib_core object (allocated by ib_core)
 * @uctx: owning context (0: kernel)
 */
struct kite_mw {
	struct ib_mw ibmw;
	u32 uctx;
};

/**
 * struct kite_cq - a completion queue
 * @ibcq: ib_core object (allocated by ib_core)
 * @ring: CQE ring
 * @dbrec: user CQ: its doorbell record, if the provider gave one
 * @old_ring: kernel CQ after a resize: the previous ring, whose CQEs up to
 *	      @old_pi are polled before @ring
 * @lock: kernel CQ: serializes poll_cq, req_notify_cq and resize
 * @eq: completion EQ the CQ reports to
 * @cqn: CQ number from the device
 * @uctx: owning context (0: kernel)
 * @ci: free-running consumer index in the ring being polled
 * @ci_reported: last consumer index written to the CQ doorbell
 * @old_pi: the old ring's final producer index (MODIFY_CQ's out[0])
 * @log_depth: log2 of the depth of @ring
 * @old_log_depth: log2 of the depth of @old_ring
 * @draining: @old_ring still holds CQEs to poll
 * @resizing: kernel CQ: a resize is between its start and its new ring
 * @arm_pending: KITE_DB_CQ_ARM_* flags req_notify_cq asked for while
 *		 @resizing, applied by kite_cq_end_resize()
 * @sq_list: kernel CQ: kernel QPs whose send CQ it is (under @lock)
 * @rq_list: kernel CQ: kernel QPs whose receive CQ it is (under @lock)
 * @flush_work: kernel CQ on a dead device: calls the comp_handler for
 *		WQEs posted after the device died (kite_cq_kick_flush())
 * @armed: bit KITE_CQ_ARMED: req_notify_cq armed the CQ and no completion
 *	   event came since; only then may the driver call the comp_handler
 *	   itself (ib_core's IB_POLL_DIRECT handler warns when called)
 */
struct kite_cq {
	struct ib_cq ibcq;
	struct kite_ring ring;
	struct kite_dbrec dbrec;
	struct kite_ring old_ring;
	spinlock_t lock; /* see above */
	struct kite_eq *eq;
	u32 cqn;
	u32 uctx;
	u32 ci;
	u32 ci_reported;
	u32 old_pi;
	u8 log_depth;
	u8 old_log_depth;
	bool draining;
	bool resizing;
	u8 arm_pending;
	struct list_head sq_list;
	struct list_head rq_list;
	struct work_struct flush_work;
	unsigned long armed;
};

/* Bit of kite_cq.armed. */
#define KITE_CQ_ARMED	0

/**
 * struct kite_qp_counter - a QP's share of the counter it is bound to
 * @kc: the counter (NULL: not bound); the QP's ib_qp.counter is the same
 *	counter as ib_core sees it
 * @node: entry in the counter's list of QPs
 * @base: the QP's device counters when it was bound
 * @last: the QP's device counters when last read (they only grow)
 *
 * All under the device's cnt_lock; the values in the order of the port
 * counters (the first KITE_IB_QP_NSTATS).
 */
struct kite_qp_counter {
	struct kite_counter *kc;
	struct list_head node;
	u64 base[KITE_IB_QP_NSTATS];
	u64 last[KITE_IB_QP_NSTATS];
};

/**
 * struct kite_qp - a queue pair
 * @ibqp: ib_core object (allocated by ib_core)
 * @sq: send ring
 * @rq: receive ring
 * @dbrec: user QP: its doorbell record, if the provider gave one (kernel
 *	   QPs write the doorbell registers, which cost the kernel no more)
 * @lock: serializes modify_qp and protects @state
 * @sq_lock: kernel QP: serializes post_send (@sq_pi, the SQ ring)
 * @rq_lock: kernel QP: serializes post_recv (@rq_pi, the RQ ring)
 * @sq_wrid: kernel QP: wr_id of the send WQE in each SQ slot
 * @rq_wrid: kernel QP: wr_id of the receive WQE in each RQ slot
 * @qpn: QP number from the device
 * @uctx: owning context (0: kernel)
 * @state: state after the last successful MODIFY_QP
 * @sq_pi: free-running SQ producer index (kernel QP)
 * @sq_ci: first SQ WQE not yet completed; written by poll_cq under the
 *	   send CQ's lock (release), read by post_send (acquire)
 * @rq_pi: free-running RQ producer index (kernel QP)
 * @rq_ci: as @sq_ci, for the RQ and the receive CQ
 * @max_send_sge: SGEs a send WQE holds
 * @max_recv_sge: SGEs a receive WQE holds
 * @max_inline: inline bytes a send WQE holds
 * @sq_log_depth: log2 of the SQ depth
 * @sq_log_stride: log2 of the SQ WQE size
 * @rq_log_depth: log2 of the RQ depth
 * @rq_log_stride: log2 of the RQ WQE size
 * @sig_all: every send WQE generates a completion
 * @scq_node: kernel QP: entry in the send CQ's @sq_list
 * @rcq_node: kernel QP: entry in the receive CQ's @rq_list
 * @cnt: the QP's share of the counter it is bound to
 */
struct kite_qp {
	struct ib_qp ibqp;
	struct kite_ring sq;
	struct kite_ring rq;
	struct kite_dbrec dbrec;
	struct mutex lock; /* see above */
	spinlock_t sq_lock; /* see above */
	spinlock_t rq_lock; /* see above */
	u64 *sq_wrid;
	u64 *rq_wrid;
	u32 qpn;
	u32 uctx;
	enum ib_qp_state state;
	u32 sq_pi;
	u32 sq_ci;
	u32 rq_pi;
	u32 rq_ci;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_inline;
	u8 sq_log_depth;
	u8 sq_log_stride;
	u8 rq_log_depth;
	u8 rq_log_stride;
	bool sig_all;
	struct list_head scq_node;
	struct list_head rcq_node;
	struct kite_qp_counter cnt;
};

/**
 * struct kite_srq - a shared receive queue
 * @ibsrq: ib_core object (allocated by ib_core)
 * @ring: WQE ring
 * @lock: kernel SRQ: serializes post_srq_recv and slot retirement (the
 *	  free list, @pi, @wrid, @busy)
 * @wrid: kernel SRQ: wr_id of the WQE in each slot
 * @busy: kernel SRQ: slots holding a posted WQE not yet completed
 * @srqn: SRQ number from the device
 * @uctx: owning context (0: kernel)
 * @pi: kernel SRQ: free-running producer index
 * @head: kernel SRQ: first slot of the free list (the next post's)
 * @tail: kernel SRQ: last slot of the free list (the spare)
 * @max_sge: SGEs a WQE holds
 * @log_depth: log2 of the slots
 * @log_stride: log2 of the WQE size
 */
struct kite_srq {
	struct ib_srq ibsrq;
	struct kite_ring ring;
	spinlock_t lock; /* see above */
	u64 *wrid;
	unsigned long *busy;
	u32 srqn;
	u32 uctx;
	u32 pi;
	u16 head;
	u16 tail;
	u32 max_sge;
	u8 log_depth;
	u8 log_stride;
};

/**
 * struct kite_ah - an address handle
 * @ibah: ib_core object (allocated by ib_core)
 * @av: the address vector each UD send to this destination carries
 */
struct kite_ah {
	struct ib_ah ibah;
	struct kite_av av;
};

struct kite_user_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	phys_addr_t address;
};

static inline struct kite_ucontext *to_kucontext(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct kite_ucontext, ibuc);
}

static inline struct kite_pd *to_kpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct kite_pd, ibpd);
}

static inline struct kite_mr *to_kmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct kite_mr, ibmr);
}

static inline struct kite_mw *to_kmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct kite_mw, ibmw);
}

static inline struct kite_cq *to_kcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct kite_cq, ibcq);
}

static inline struct kite_qp *to_kqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct kite_qp, ibqp);
}

/* UD and GSI QPs send datagrams to address handles. */
static inline bool kite_qp_is_ud(const struct kite_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

static inline struct kite_srq *to_ksrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct kite_srq, ibsrq);
}

static inline struct kite_ah *to_kah(struct ib_ah *ibah)
{
	return container_of(ibah, struct kite_ah, ibah);
}

static inline struct kite_user_mmap_entry *
to_kentry(struct rdma_user_mmap_entry *entry)
{
	return container_of(entry, struct kite_user_mmap_entry, rdma_entry);
}

/* kite_ucontext.c */
int kite_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void kite_dealloc_ucontext(struct ib_ucontext *ibuc);
void kite_disassociate_ucontext(struct ib_ucontext *ibuc);
int kite_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void kite_mmap_free(struct rdma_user_mmap_entry *entry);
bool kite_udata_in_ok(struct ib_udata *udata);
int kite_udata_get_req(struct ib_udata *udata, void *req, size_t len);
int kite_udata_get_req_min(struct ib_udata *udata, void *req, size_t min,
			   size_t len);
bool kite_dbrec_supported(struct kite_ib_dev *kib);
u32 kite_udata_uctx(struct ib_udata *udata);
int kite_copy_resp(struct ib_udata *udata, void *resp, size_t len);

/* kite_pd.c */
int kite_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int kite_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* kite_pbl.c */
int kite_pbl_from_umem(struct kite_ib_dev *kib, struct kite_pbl *pbl,
		       struct ib_umem *umem, unsigned long pgsz);
void kite_pbl_free(struct kite_ib_dev *kib, struct kite_pbl *pbl);
int kite_ring_alloc_kernel(struct kite_ib_dev *kib, struct kite_ring *ring,
			   size_t bytes);
int kite_ring_get_user(struct kite_ib_dev *kib, struct kite_ring *ring,
		       u64 va, u64 len, size_t bytes);
void kite_ring_free(struct kite_ib_dev *kib, struct kite_ring *ring);
int kite_dbrec_get_user(struct kite_ib_dev *kib, struct kite_dbrec *rec,
			u64 va, u32 size);
void kite_dbrec_put(struct kite_dbrec *rec);

/* kite_mr.c */
struct ib_mr *kite_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 virt, int access, struct ib_udata *udata);
struct ib_mr *kite_get_dma_mr(struct ib_pd *ibpd, int access);
int kite_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *kite_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 virt, int access,
				 struct ib_pd *ibpd, struct ib_udata *udata);
int kite_mr_access(const struct kite_ib_dev *kib, int access, u32 *out);
u32 kite_mr_next_variant(struct kite_ib_dev *kib);
#if IS_ENABLED(CONFIG_INFINIBAND_KITE_KUNIT_TEST)
int kite_test_reg_ring_mr(struct ib_pd *ibpd, const struct kite_ring *ring,
			  int access, u32 *key);
#endif

/* kite_frmr.c */
bool kite_has_mem_mgt(const struct kite_ib_dev *kib);
struct ib_mr *kite_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type mr_type,
			    u32 max_num_sg);
void kite_frmr_free(struct kite_ib_dev *kib, struct kite_mr *mr);
int kite_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);
int kite_build_reg_mr(struct kite_ib_dev *kib, const struct ib_send_wr *wr,
		      struct kite_wqe_reg_mr *seg);

/* kite_mw.c */
bool kite_has_mw(const struct kite_ib_dev *kib);
int kite_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int kite_dealloc_mw(struct ib_mw *ibmw);

/* kite_cq.c */
int kite_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   KITE_CREATE_CQ_ARG *arg);
int kite_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
u32 kite_cq_depth(u32 cqe);
int kite_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
void kite_cq_comp_event(struct kite_ib_dev *kib, u32 cqn);
void kite_cq_async_event(struct kite_ib_dev *kib, u32 cqn);
#if IS_ENABLED(CONFIG_INFINIBAND_KITE_KUNIT_TEST)
int kite_test_query_cq(struct ib_cq *ibcq, struct kite_cq_info *info);
#endif

/* kite_cq_poll.c */
int kite_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int kite_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
void kite_cq_clean(struct kite_cq *cq, u32 qpn, struct kite_srq *srq);
void kite_cq_end_resize(struct kite_ib_dev *kib, struct kite_cq *cq);

/* kite_cq_flush.c */
int kite_cq_sw_flush(struct kite_cq *cq, int num_entries, struct ib_wc *wc);
void kite_cqs_fatal(struct kite_ib_dev *kib);
bool kite_cq_sw_pending(struct kite_cq *cq);
void kite_cq_flush_work(struct work_struct *work);
void kite_cq_kick_flush(struct kite_cq *cq);

/* kite_qp.c */
int kite_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		   struct ib_udata *udata);
int kite_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int kite_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init);
int kite_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
void kite_qp_async_event(struct kite_ib_dev *kib, u32 qpn, u8 type);

/* kite_post.c */
int kite_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);
int kite_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);
void kite_qp_reset_indexes(struct kite_qp *qp);
void kite_qp_lock_cqs(struct kite_qp *qp, unsigned long *flags);
void kite_qp_unlock_cqs(struct kite_qp *qp, unsigned long flags);
void kite_qp_clean_cqs(struct kite_qp *qp);
void kite_qp_attach_cqs(struct kite_qp *qp);
void kite_set_sge(struct kite_sge *dst, const struct ib_sge *src);

/* kite_srq.c */
bool kite_has_srq(const struct kite_ib_dev *kib);
int kite_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata);
int kite_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int kite_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int kite_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int kite_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
bool kite_srq_retire(struct kite_srq *srq, u32 slot, u64 *wr_id);
void kite_srq_async_event(struct kite_ib_dev *kib, u32 srqn, u8 type);

/* kite_mcast.c */
bool kite_has_mcast(const struct kite_ib_dev *kib);
int kite_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int kite_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);

/* kite_ah.c */
int kite_av_from_ah_attr(struct kite_ib_dev *kib, const struct rdma_ah_attr *ah,
			 struct kite_av *av);
void kite_av_to_ah_attr(const struct kite_av *av, struct rdma_ah_attr *ah);
int kite_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		   struct ib_udata *udata);
int kite_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int kite_destroy_ah(struct ib_ah *ibah, u32 flags);

/* kite_counters.c */
extern const struct ib_device_ops kite_counter_ops;
bool kite_has_qp_stats(const struct kite_ib_dev *kib);
struct rdma_hw_stats *kite_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port);
int kite_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index);
void kite_counter_qp_destroyed(struct kite_ib_dev *kib, struct kite_qp *qp);

/* kite_restrack.c */
int kite_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int kite_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int kite_fill_res_qp_entry_raw(struct sk_buff *msg, struct ib_qp *ibqp);
int kite_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);

#endif /* KITE_VERBS_H */
