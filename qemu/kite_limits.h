/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: the limits this model implements. They are
 * model policy, not ABI: the device advertises them through its capability
 * registers and QUERY_DEVICE (include/kite/kite_hw.h), and drivers must use
 * what the device reports. Plain C, shared by the QEMU glue, the RoCEv2
 * engine (roce/) and the tests that check what the model advertises.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_LIMITS_H
#define KITE_LIMITS_H

#include "kite/kite_hw.h"

/*
 * Object counts and queue depths of a real NIC: the model's tables grow
 * with what is in use (kite_table.h), not with these.
 */
#define KITE_DEF_MAX_QP             (1u << 18)
#define KITE_DEF_MAX_CQ             (1u << 18)
#define KITE_DEF_MAX_MR             (1u << 20)
#define KITE_DEF_MAX_PD             (1u << 18)
#define KITE_DEF_MAX_CQE            (1u << 22)
#define KITE_DEF_MAX_QP_WR          (1u << 15)
/*
 * A QP number (kite.h) holds its QP table slot in its low bits: room for
 * KITE_DEF_MAX_QP QPs and the GSI QP, the rest of the 24 bits count how
 * often the slot was used.
 */
#define KITE_DEF_QPN_SLOT_BITS      19
#define KITE_DEF_MAX_SGE            32
#define KITE_DEF_MAX_INLINE         256
#define KITE_DEF_MAX_EQ             (1 + KITE_MSIX_MAX_COMP)
#define KITE_DEF_MAX_GID            16
/* As Soft-RoCE: peers size their initiator depth by it. */
#define KITE_DEF_MAX_RD_ATOM        128
#define KITE_DEF_MAX_AQ_LOG_DEPTH   10
#define KITE_DEF_MAX_EQ_LOG_DEPTH   16
#define KITE_DEF_MAX_ETH_LOG_DEPTH  12
/* 4 KiB, 64 KiB, 2 MiB and 1 GiB pages. */
#define KITE_DEF_PAGE_SIZES         ((1ull << 12) | (1ull << 16) | \
                                     (1ull << 21) | (1ull << 30))
/*
 * 64 GiB: it bounds the page list of one REG_MR or REREG_MR, which the
 * device reads and checks while the command runs, to 2^24 + 1 entries of
 * 4 KiB pages (128 MiB of reads) plus 2^15 level-2 chunk addresses.
 */
#define KITE_DEF_MAX_MR_SIZE        (1ull << 36)
/*
 * Memory windows, as Soft-RoCE; they take MR table indexes of their own
 * beside KITE_DEF_MAX_MR MRs.
 */
#define KITE_DEF_MAX_MW             (1u << 18)
/* Pages of a REG_MR WQE (max_fast_reg_page_list_len), as Soft-RoCE. */
#define KITE_DEF_MAX_FRWR_PAGES     512
/*
 * One run of the admin queue's bottom half executes at most this many
 * commands, and starts none once the run's commands have read this many
 * page-list entries (one largest MR's list); it then reschedules itself,
 * so the main loop runs between however many commands a doorbell posts.
 */
#define KITE_AQ_RUN_MAX_CMDS        64
#define KITE_AQ_RUN_MAX_PBL_ENTRIES (KITE_DEF_MAX_MR_SIZE >> 12)
/*
 * Shared receive queues: up to 2^15 slots each, one always free (the
 * host's free list needs a spare), and the SGEs of an RQ WQE.
 */
#define KITE_DEF_MAX_SRQ            (1u << 16)
#define KITE_DEF_MAX_SRQ_WR         ((1u << 15) - 1)
#define KITE_DEF_MAX_SRQ_SGE        KITE_DEF_MAX_SGE
/*
 * Multicast groups and the QPs of one group, as Soft-RoCE's defaults
 * scaled down: the device copies a datagram to every QP of its group
 * while it handles the frame, so the group size bounds that work.
 */
#define KITE_DEF_MAX_MCAST_GRP      64
#define KITE_DEF_MAX_MCAST_QP       16

#endif
