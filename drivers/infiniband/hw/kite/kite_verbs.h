/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kite verbs: driver objects behind ib_core objects and the verbs entry
 * points.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_VERBS_H
#define KITE_VERBS_H

#include <rdma/ib_verbs.h>

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

static inline struct kite_user_mmap_entry *
to_kentry(struct rdma_user_mmap_entry *entry)
{
	return container_of(entry, struct kite_user_mmap_entry, rdma_entry);
}

int kite_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void kite_dealloc_ucontext(struct ib_ucontext *ibuc);
void kite_disassociate_ucontext(struct ib_ucontext *ibuc);
int kite_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void kite_mmap_free(struct rdma_user_mmap_entry *entry);
int kite_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int kite_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

#endif /* KITE_VERBS_H */
