/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kite RoCEv2 NIC: the device ABI.
 *
 * This header is the single source of truth for everything the driver
 * (kite.ko), the QEMU device model and the rdma-core provider exchange with
 * the device: PCI identity, BAR layout, registers, admin queue commands and
 * completions, event queues, Ethernet rings, RDMA queue formats, doorbells
 * and keys. Documentation/kite/hardware.rst is the prose version of it.
 *
 * Every multi-byte field is little-endian. Every structure has a fixed size
 * that is asserted below. Helpers at the end are pure integer arithmetic on
 * CPU-order values so that all three users can share them.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_HW_H
#define KITE_HW_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/build_bug.h>
#else
#include <linux/types.h>
#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#endif

/* ------------------------------------------------------------------ */
/* PCI identity                                                        */
/* ------------------------------------------------------------------ */

#define KITE_PCI_VENDOR_ID		0x1234	/* QEMU's ID for emulated devices */
#define KITE_PCI_DEVICE_ID		0x4b54	/* "KT" */
#define KITE_PCI_SUBSYS_VENDOR_ID	0x1234
#define KITE_PCI_SUBSYS_ID		0x0001
#define KITE_PCI_REVISION		0x01
#define KITE_PCI_CLASS			0x0200	/* Ethernet controller */

/* BARs. BAR0 and BAR2 are 64-bit memory BARs; BAR4 holds MSI-X. */
#define KITE_BAR_REGS			0
#define KITE_BAR_DB			2
#define KITE_BAR_MSIX			4

#define KITE_REGS_SIZE			0x1000
#define KITE_DB_PAGE_SHIFT		12
#define KITE_DB_PAGE_SIZE		(1u << KITE_DB_PAGE_SHIFT)
/* Page 0 belongs to the kernel; pages 1..KITE_MAX_UCTX to user contexts. */
#define KITE_DB_KERNEL_PAGE		0
#define KITE_MAX_UCTX			255
#define KITE_DB_NUM_PAGES		(KITE_MAX_UCTX + 1)
#define KITE_DB_BAR_SIZE		(KITE_DB_NUM_PAGES * KITE_DB_PAGE_SIZE)

/* ABI version: major changes break the driver, minor ones only add. */
#define KITE_ABI_MAJOR			1
#define KITE_ABI_MINOR			5	/* 5: UD multicast */
/* Minor version from which QUERY_QP_STATS and the longer kite_stats exist. */
#define KITE_ABI_MINOR_QP_STATS		1
/* Minor version from which CREATE_CQ/CREATE_QP take doorbell records. */
#define KITE_ABI_MINOR_DBREC		2
/*
 * Minor version from which the memory-management extensions exist: ALLOC_MR,
 * ALLOC_MW, DEALLOC_MW, REREG_MR, the REG_MR/LOCAL_INV/BIND_MW/SEND_INV WQEs
 * and the capability registers from KITE_REG_CAP_MAX_MW.
 */
#define KITE_ABI_MINOR_MEM_MGT		3
/*
 * Minor version from which shared receive queues exist: CREATE/MODIFY/
 * QUERY/DESTROY_SRQ, KITE_QP_FLAG_SRQ, the SRQ doorbell, the SRQ events
 * and the capability registers from KITE_REG_CAP_MAX_SRQ.
 */
#define KITE_ABI_MINOR_SRQ		4
/*
 * Minor version from which UD multicast exists: ATTACH_MCAST and
 * DETACH_MCAST, KITE_STS_EXISTS and the capability registers from
 * KITE_REG_CAP_MAX_MCAST_GRP.
 */
#define KITE_ABI_MINOR_MCAST		5
#define KITE_ABI_VERSION(maj, min)	(((maj) << 16) | (min))
#define KITE_ABI_VER_MAJOR(v)		((v) >> 16)
#define KITE_ABI_VER_MINOR(v)		((v) & 0xffff)

/* The NIC has one Ethernet/RoCEv2 port, numbered 1 as ib_core numbers it. */
#define KITE_PORT_NUM			1

/* ------------------------------------------------------------------ */
/* MSI-X vectors                                                       */
/* ------------------------------------------------------------------ */

#define KITE_MSIX_ADMIN			0	/* admin completions + async EQ */
#define KITE_MSIX_ETH			1	/* Ethernet TX/RX rings */
#define KITE_MSIX_COMP_BASE		2	/* first completion EQ vector */
#define KITE_MSIX_MAX_COMP		8
#define KITE_MSIX_NUM			(KITE_MSIX_COMP_BASE + KITE_MSIX_MAX_COMP)

/* ------------------------------------------------------------------ */
/* BAR0 registers (32-bit, naturally aligned accesses only)            */
/* ------------------------------------------------------------------ */

#define KITE_REG_VERSION		0x000	/* RO: major << 16 | minor */
#define KITE_REG_DEV_CTRL		0x004	/* RW: KITE_CTRL_* */
#define KITE_REG_DEV_STATUS		0x008	/* RO: KITE_STATUS_* */
#define KITE_REG_FATAL_CODE		0x00c	/* RO: KITE_FATAL_* when FATAL set */

/*
 * Ring registers are latched when ENABLE is set and ignored while it stays
 * set; clearing ENABLE resets the device, which is also the only way out of
 * FATAL (BAD_CONFIG included).
 */
#define KITE_CTRL_ENABLE		(1u << 0)
#define KITE_CTRL_RESET			(1u << 1)	/* self-clearing */

#define KITE_STATUS_READY		(1u << 0)
#define KITE_STATUS_FATAL		(1u << 1)
#define KITE_STATUS_LINK_UP		(1u << 2)

#define KITE_FATAL_NONE			0
#define KITE_FATAL_AQ_DOORBELL		1	/* producer index beyond depth */
#define KITE_FATAL_AQ_DMA		2	/* admin ring not readable */
#define KITE_FATAL_EQ_DMA		3	/* event ring not writable */
#define KITE_FATAL_ETH_DMA		4	/* Ethernet ring not accessible */
#define KITE_FATAL_INTERNAL		5
#define KITE_FATAL_BAD_CONFIG		6	/* ring registers invalid at ENABLE */

/* Admin queue: submission (AQ) and completion (ACQ) rings. */
#define KITE_REG_AQ_BASE_LO		0x020
#define KITE_REG_AQ_BASE_HI		0x024
#define KITE_REG_AQ_LOG_DEPTH		0x028
#define KITE_REG_ACQ_BASE_LO		0x030
#define KITE_REG_ACQ_BASE_HI		0x034
#define KITE_REG_ACQ_LOG_DEPTH		0x038
#define KITE_REG_AQ_DB			0x03c	/* WO: free-running producer index */

/* Async event queue (EQ 0), configured by registers before ENABLE. */
#define KITE_REG_AEQ_BASE_LO		0x040
#define KITE_REG_AEQ_BASE_HI		0x044
#define KITE_REG_AEQ_LOG_DEPTH		0x048

/* Ethernet port rings. */
#define KITE_REG_ETH_TX_BASE_LO		0x060
#define KITE_REG_ETH_TX_BASE_HI		0x064
#define KITE_REG_ETH_TX_LOG_DEPTH	0x068
#define KITE_REG_ETH_TX_DB		0x06c	/* WO: free-running producer index */
#define KITE_REG_ETH_RX_BASE_LO		0x070
#define KITE_REG_ETH_RX_BASE_HI		0x074
#define KITE_REG_ETH_RX_LOG_DEPTH	0x078
#define KITE_REG_ETH_RX_DB		0x07c	/* WO: free-running producer index */
#define KITE_REG_ETH_CTRL		0x080	/* RW: KITE_ETH_CTRL_* */
#define KITE_REG_ETH_IRQ_ARM		0x084	/* WO: 1 = fire vector once more */
#define KITE_REG_ETH_TX_CI		0x088	/* RO: TX descriptors consumed */
#define KITE_REG_ETH_RX_CI		0x08c	/* RO: RX descriptors filled */

#define KITE_ETH_CTRL_TX_EN		(1u << 0)
#define KITE_ETH_CTRL_RX_EN		(1u << 1)
#define KITE_ETH_CTRL_PROMISC		(1u << 2)

#define KITE_ETH_IRQ_ARM_FIRE		(1u << 0)	/* KITE_REG_ETH_IRQ_ARM value */

/* Permanent MAC address (from the device's "mac" property). */
#define KITE_REG_PERM_MAC_LO		0x090	/* bytes 0..3, byte 0 in bits 7:0 */
#define KITE_REG_PERM_MAC_HI		0x094	/* bytes 4..5 */

/* Capability registers (RO), also returned by QUERY_DEVICE. */
#define KITE_REG_CAP_MAX_QP		0x100
#define KITE_REG_CAP_MAX_CQ		0x104
#define KITE_REG_CAP_MAX_MR		0x108
#define KITE_REG_CAP_MAX_PD		0x10c
#define KITE_REG_CAP_MAX_CQE		0x110
#define KITE_REG_CAP_MAX_QP_WR		0x114
#define KITE_REG_CAP_MAX_SGE		0x118
#define KITE_REG_CAP_MAX_INLINE		0x11c
#define KITE_REG_CAP_PAGE_SIZES		0x120	/* bit n set: 2^n bytes supported */
#define KITE_REG_CAP_PAGE_SIZES_HI	0x124
#define KITE_REG_CAP_MAX_MTU		0x128	/* enum kite_mtu */
#define KITE_REG_CAP_MAX_EQ		0x12c
#define KITE_REG_CAP_MAX_UCTX		0x130
#define KITE_REG_CAP_MAX_GID		0x134
#define KITE_REG_CAP_MAX_MR_SIZE_LO	0x138
#define KITE_REG_CAP_MAX_MR_SIZE_HI	0x13c
#define KITE_REG_CAP_MAX_AQ_LOG_DEPTH	0x140
#define KITE_REG_CAP_MAX_EQ_LOG_DEPTH	0x144
#define KITE_REG_CAP_MAX_ETH_LOG_DEPTH	0x148
#define KITE_REG_CAP_NUM_MSIX		0x14c
#define KITE_REG_CAP_MAX_RD_ATOM	0x150	/* per QP, both directions */
#define KITE_REG_CAP_FLAGS		0x154	/* KITE_DEV_CAP_* */
#define KITE_REG_CAP_MAX_MW		0x158	/* memory windows */
#define KITE_REG_CAP_MAX_FRWR_PAGES	0x15c	/* page list of a REG_MR WQE */
#define KITE_REG_CAP_MAX_SGE_RD		0x160	/* SGEs of a READ WQE */
#define KITE_REG_CAP_MAX_SRQ		0x164	/* shared receive queues */
#define KITE_REG_CAP_MAX_SRQ_WR		0x168	/* WQEs one SRQ holds */
#define KITE_REG_CAP_MAX_SRQ_SGE	0x16c	/* SGEs of an SRQ WQE */
#define KITE_REG_CAP_MAX_MCAST_GRP	0x170	/* multicast groups */
#define KITE_REG_CAP_MAX_MCAST_QP	0x174	/* QPs attached to one group */

#define KITE_MIN_LOG_DEPTH		2	/* every ring has at least 4 entries */
#define KITE_RING_ALIGN			4096	/* ring base alignment (bytes) */

/* Largest RDMA message any QP sends or accepts (bytes). */
#define KITE_MAX_MSG_SIZE		(1u << 31)

#define KITE_DEV_CAP_RC			(1u << 0)
#define KITE_DEV_CAP_UC			(1u << 1)
#define KITE_DEV_CAP_UD			(1u << 2)
#define KITE_DEV_CAP_ATOMIC		(1u << 3)
#define KITE_DEV_CAP_IPV6		(1u << 4)
/* ALLOC_MR, REG_MR and LOCAL_INV WQEs, SEND_INV (both sides), REREG_MR. */
#define KITE_DEV_CAP_MEM_MGT		(1u << 5)
/* Memory windows type 1 and 2B: ALLOC_MW, DEALLOC_MW, BIND_MW WQEs. */
#define KITE_DEV_CAP_MW			(1u << 6)
/* Shared receive queues: the SRQ commands, doorbell and events. */
#define KITE_DEV_CAP_SRQ		(1u << 7)
/* UD multicast: ATTACH_MCAST/DETACH_MCAST and group delivery. */
#define KITE_DEV_CAP_MCAST		(1u << 8)

/* Path MTU values, numbered as the IB spec (and ib_core) numbers them. */
enum kite_mtu {
	KITE_MTU_256 = 1,
	KITE_MTU_512 = 2,
	KITE_MTU_1024 = 3,
	KITE_MTU_2048 = 4,
	KITE_MTU_4096 = 5,
};

/* ------------------------------------------------------------------ */
/* Admin queue                                                         */
/* ------------------------------------------------------------------ */

/*
 * The driver writes 128-byte commands into the AQ ring and then the
 * free-running producer index into KITE_REG_AQ_DB. The device executes
 * commands in order and writes one 32-byte completion per command into the
 * ACQ ring, toggling the phase bit on every wrap (the first pass writes
 * phase 1; the driver zeroes the ring before use). A completion is raised on
 * MSI-X vector KITE_MSIX_ADMIN.
 */
enum kite_aq_opcode {
	KITE_CMD_QUERY_DEVICE = 0x01,
	KITE_CMD_QUERY_PORT = 0x02,
	KITE_CMD_SET_PORT = 0x03,
	KITE_CMD_CREATE_EQ = 0x04,
	KITE_CMD_DESTROY_EQ = 0x05,
	KITE_CMD_ALLOC_UCTX = 0x06,
	KITE_CMD_DEALLOC_UCTX = 0x07,
	KITE_CMD_ALLOC_PD = 0x08,
	KITE_CMD_DEALLOC_PD = 0x09,
	KITE_CMD_CREATE_CQ = 0x10,
	KITE_CMD_MODIFY_CQ = 0x11,
	KITE_CMD_QUERY_CQ = 0x12,
	KITE_CMD_DESTROY_CQ = 0x13,
	KITE_CMD_CREATE_SRQ = 0x14,	/* out[0] = srqn */
	KITE_CMD_MODIFY_SRQ = 0x15,
	KITE_CMD_QUERY_SRQ = 0x16,	/* kite_cmd_query_obj; out[] below */
	KITE_CMD_DESTROY_SRQ = 0x17,	/* kite_cmd_destroy, handle = srqn */
	KITE_CMD_CREATE_QP = 0x18,
	KITE_CMD_MODIFY_QP = 0x19,
	KITE_CMD_QUERY_QP = 0x1a,
	KITE_CMD_DESTROY_QP = 0x1b,
	KITE_CMD_QUERY_QP_STATS = 0x1c,	/* handle = qpn; out: kite_qp_stats */
	KITE_CMD_REG_MR = 0x20,
	KITE_CMD_DEREG_MR = 0x21,	/* also frees an ALLOC_MR MR */
	KITE_CMD_ALLOC_MR = 0x22,	/* MR for REG_MR WQEs; out[0] = key */
	KITE_CMD_REREG_MR = 0x23,	/* out[0] = the new key */
	KITE_CMD_ALLOC_MW = 0x24,	/* out[0] = key */
	KITE_CMD_DEALLOC_MW = 0x25,	/* kite_cmd_destroy, handle = a key */
	KITE_CMD_ADD_GID = 0x28,
	KITE_CMD_DEL_GID = 0x29,
	KITE_CMD_ATTACH_MCAST = 0x2a,	/* kite_cmd_mcast */
	KITE_CMD_DETACH_MCAST = 0x2b,	/* kite_cmd_mcast */
	KITE_CMD_QUERY_STATS = 0x30,
	KITE_CMD_MAX = 0x3f,
};

enum kite_aq_status {
	KITE_STS_OK = 0x00,
	KITE_STS_BAD_OPCODE = 0x01,	/* opcode unknown to the device */
	KITE_STS_BAD_PARAM = 0x02,	/* a field is out of range */
	KITE_STS_NO_RESOURCES = 0x03,	/* table or memory exhausted */
	KITE_STS_BAD_HANDLE = 0x04,	/* object number not allocated */
	KITE_STS_BUSY = 0x05,		/* object still referenced */
	KITE_STS_BAD_STATE = 0x06,	/* illegal state transition */
	KITE_STS_DMA_ERROR = 0x07,	/* guest memory not accessible */
	KITE_STS_NOT_SUPPORTED = 0x08,	/* valid request the device lacks */
	KITE_STS_PERMISSION = 0x09,	/* object owned by another context */
	KITE_STS_INTERNAL = 0x0a,
	KITE_STS_EXISTS = 0x0b,		/* already there (ABI 1.5) */
};

#define KITE_AQ_CMD_SIZE		128
#define KITE_AQ_CQE_SIZE		32
#define KITE_AQ_PAYLOAD_SIZE		(KITE_AQ_CMD_SIZE - 8)

/*
 * Memory the device walks: a ring or an MR. level 0: @addr is the DMA address
 * of one physically contiguous buffer of @npages pages. level 1: @addr points
 * to an array of @npages little-endian u64 page addresses. level 2: @addr
 * points to an array of u64 addresses of level-1 arrays, each one page of
 * 4 KiB (512 entries) long. Each page is 2^@page_shift bytes and aligned to it.
 */
#define KITE_PBL_LEVEL_DIRECT		0
#define KITE_PBL_LEVEL_1		1
#define KITE_PBL_LEVEL_2		2
#define KITE_PBL_CHUNK_SIZE		4096
#define KITE_PBL_ENTRIES_PER_CHUNK	(KITE_PBL_CHUNK_SIZE / 8)

struct kite_pbl_desc {
	__le64 addr;
	__le32 npages;
	__u8 page_shift;
	__u8 level;
	__u8 reserved[2];
};

/*
 * Handles the device hands out: uctx 1..max_uctx (= doorbell page), PD, CQ
 * and MR index from 1, EQ 1..max_eq - 1 (0 is the async EQ), QPN 1 for GSI
 * and 2.. allocated cyclically for the rest, lowest free index otherwise.
 */
struct kite_aq_hdr {
	__u8 opcode;
	__u8 flags;		/* reserved, zero */
	__le16 cmd_id;		/* echoed in the completion */
	__le32 uctx;		/* acting context: 0 = kernel */
};

/*
 * Commands whose result does not fit the completion write it here; out[0] of
 * the completion is then the number of bytes written. A buffer shorter than
 * the result fails with BAD_PARAM and the needed length in the syndrome.
 */
struct kite_aq_out_buf {
	__le64 addr;
	__le32 len;
	__le32 reserved;
};

struct kite_cmd_query {		/* QUERY_DEVICE, QUERY_PORT, QUERY_STATS */
	struct kite_aq_out_buf out;
	__u8 port;		/* QUERY_PORT: 1 */
	__u8 reserved[7];
};

#define KITE_SET_PORT_MTU		(1u << 0)
#define KITE_SET_PORT_MAC		(1u << 1)

struct kite_cmd_set_port {
	__le32 mask;		/* KITE_SET_PORT_* */
	__le32 mtu;		/* Ethernet MTU in bytes (L3 payload) */
	__u8 mac[6];
	__u8 port;
	__u8 reserved;
};

struct kite_cmd_create_eq {
	struct kite_pbl_desc ring;
	__u8 log_depth;
	__u8 reserved;
	__le16 msix_vector;	/* KITE_MSIX_COMP_BASE .. num_msix - 1 */
	__le32 reserved2;
};

struct kite_cmd_destroy {	/* DESTROY_EQ/CQ/SRQ/QP, DEALLOC_PD/UCTX, DEREG_MR */
	__le32 handle;		/* eqn, cqn, srqn, qpn, pdn, uctx or lkey */
	__le32 reserved;
};

/* The completion's out[0] is the new context, which is also its doorbell
 * page index (1..max_uctx).
 */
struct kite_cmd_alloc_uctx {
	__le32 reserved[2];
};

struct kite_cmd_alloc_pd {
	__le32 reserved[2];
};

/* QUERY_CQ answers in out[]: log depth, eqn, KITE_CQ_FLAG_*, producer index. */
#define KITE_CQ_QUERY_LOG_DEPTH		0
#define KITE_CQ_QUERY_EQN		1
#define KITE_CQ_QUERY_FLAGS		2
#define KITE_CQ_QUERY_PI		3
#define KITE_CQ_FLAG_ARMED		(1u << 0)

struct kite_cmd_create_cq {
	struct kite_pbl_desc ring;
	__u8 log_depth;
	__u8 reserved;
	__le16 eqn;		/* completion EQ for notifications */
	__le32 reserved2;
	__le64 dbrec;		/* struct kite_cq_dbrec, 0: none (ABI 1.2) */
};

struct kite_cmd_modify_cq {
	__le32 cqn;
	__le32 reserved;
	struct kite_pbl_desc ring;	/* resize: new ring */
	__u8 log_depth;
	__u8 reserved2[7];
};

/*
 * A shared receive queue: a ring of 2^log_depth receive WQEs of
 * 2^log_stride bytes (the RQ strides) that the QPs created with
 * KITE_QP_FLAG_SRQ and its srqn take their receives from, in the order of
 * the WQEs' next links (hardware.rst, "Shared receive queues"). @limit
 * nonzero arms the limit event. The producer index goes to KITE_DB_SRQ
 * of the owner's doorbell page.
 */
struct kite_cmd_create_srq {
	__le32 pdn;
	__u8 log_depth;		/* KITE_MIN_LOG_DEPTH .. log2(CAP_MAX_SRQ_WR + 1) */
	__u8 log_stride;	/* KITE_RQ_MIN_LOG_STRIDE .. _MAX_ */
	__le16 reserved;
	__le32 limit;		/* 0: not armed; else < 2^log_depth */
	__le32 reserved2;
	struct kite_pbl_desc ring;
};

/* Attribute mask bits of MODIFY_SRQ (same meaning as ib_srq_attr_mask). */
#define KITE_SRQ_ATTR_MAX_WR		(1u << 0)	/* resize: not supported */
#define KITE_SRQ_ATTR_LIMIT		(1u << 1)

struct kite_cmd_modify_srq {
	__le32 srqn;
	__le32 attr_mask;	/* KITE_SRQ_ATTR_* */
	__le32 limit;		/* arms the limit event (< 2^log_depth); 0 disarms */
	__le32 reserved;
};

/* QUERY_SRQ answers in out[]: log depth, the armed limit (0: not armed),
 * WQEs posted and not yet taken by a QP, KITE_SRQ_FLAG_*.
 */
#define KITE_SRQ_QUERY_LOG_DEPTH	0
#define KITE_SRQ_QUERY_LIMIT		1
#define KITE_SRQ_QUERY_POSTED		2
#define KITE_SRQ_QUERY_FLAGS		3
#define KITE_SRQ_FLAG_ERROR		(1u << 0)	/* KITE_EVT_SRQ_ERR seen */

enum kite_qp_type {
	KITE_QPT_RC = 0,
	KITE_QPT_UC = 1,
	KITE_QPT_UD = 2,
	KITE_QPT_GSI = 3,
};

enum kite_qp_state {
	KITE_QPS_RESET = 0,
	KITE_QPS_INIT = 1,
	KITE_QPS_RTR = 2,
	KITE_QPS_RTS = 3,
	KITE_QPS_SQD = 4,
	KITE_QPS_SQE = 5,
	KITE_QPS_ERR = 6,
};

#define KITE_QP_FLAG_SIG_ALL		(1u << 0)	/* every SQ WQE signaled */
/*
 * Receives come from the SRQ srqn names (ABI 1.4); rq_log_depth,
 * rq_log_stride and the rq ring are then all zero.
 */
#define KITE_QP_FLAG_SRQ		(1u << 1)

/* QP numbers are 24 bits wide (BTH DestQP, DETH SrcQP, doorbells). */
#define KITE_QPN_MASK			0x00ffffffu
/* PSNs (kite_qp_attr sq_psn/rq_psn, the BTH) are 24 bits wide. */
#define KITE_PSN_MASK			0x00ffffffu
/* The GSI QP (KITE_QPT_GSI) always has QP number 1. */
#define KITE_GSI_QPN			1

struct kite_cmd_create_qp {
	__u8 qp_type;		/* enum kite_qp_type */
	__u8 flags;		/* KITE_QP_FLAG_* */
	__u8 sq_log_depth;
	__u8 sq_log_stride;	/* WQE size: 6 (64 B) .. 9 (512 B) */
	__u8 rq_log_depth;
	__u8 rq_log_stride;	/* 4 (16 B) .. 8 (256 B) */
	__le16 reserved;
	__le32 pdn;
	__le32 send_cqn;
	__le32 recv_cqn;
	__le32 srqn;		/* KITE_QP_FLAG_SRQ: the SRQ; else zero */
	struct kite_pbl_desc sq;
	struct kite_pbl_desc rq;
	__le64 dbrec;		/* struct kite_qp_dbrec, 0: none (ABI 1.2) */
};

/* Address vector: the destination of an RC/UC QP or of one UD send. */
enum kite_net_type {
	KITE_NET_IPV4 = 0,
	KITE_NET_IPV6 = 1,
};

struct kite_av {
	__u8 dgid[16];		/* IPv4-mapped for IPv4 */
	__u8 dmac[6];
	__u8 sgid_index;
	__u8 net_type;		/* enum kite_net_type */
	__u8 hop_limit;
	__u8 traffic_class;
	__u8 sl;
	__u8 reserved;
	__le32 flow_label;	/* KITE_AV_FLOW_LABEL_MASK */
};

#define KITE_AV_FLOW_LABEL_MASK	0xfffffu	/* the IPv6 flow label: 20 bits */

/* Attribute mask bits of MODIFY_QP (same meaning as ib_qp_attr_mask). */
#define KITE_QP_ATTR_STATE		(1u << 0)
#define KITE_QP_ATTR_CUR_STATE		(1u << 1)
#define KITE_QP_ATTR_ACCESS_FLAGS	(1u << 3)
#define KITE_QP_ATTR_PKEY_INDEX		(1u << 4)
#define KITE_QP_ATTR_PORT		(1u << 5)
#define KITE_QP_ATTR_QKEY		(1u << 6)
#define KITE_QP_ATTR_AV			(1u << 7)
#define KITE_QP_ATTR_PATH_MTU		(1u << 8)
#define KITE_QP_ATTR_TIMEOUT		(1u << 9)
#define KITE_QP_ATTR_RETRY_CNT		(1u << 10)
#define KITE_QP_ATTR_RNR_RETRY		(1u << 11)
#define KITE_QP_ATTR_RQ_PSN		(1u << 12)
#define KITE_QP_ATTR_MAX_QP_RD_ATOMIC	(1u << 13)
#define KITE_QP_ATTR_MIN_RNR_TIMER	(1u << 15)
#define KITE_QP_ATTR_SQ_PSN		(1u << 16)
#define KITE_QP_ATTR_MAX_DEST_RD_ATOMIC	(1u << 17)
#define KITE_QP_ATTR_DEST_QPN		(1u << 20)

/* Remote access flags held by a QP or an MR. */
#define KITE_ACCESS_LOCAL_WRITE		(1u << 0)
#define KITE_ACCESS_REMOTE_WRITE	(1u << 1)
#define KITE_ACCESS_REMOTE_READ		(1u << 2)
#define KITE_ACCESS_REMOTE_ATOMIC	(1u << 3)
/* MRs only: memory windows may be bound to the MR. */
#define KITE_ACCESS_MW_BIND		(1u << 4)

struct kite_qp_attr {
	__le32 attr_mask;	/* KITE_QP_ATTR_* (MODIFY_QP only) */
	__u8 state;		/* enum kite_qp_state */
	__u8 cur_state;
	__u8 path_mtu;		/* enum kite_mtu */
	__u8 timeout;		/* 4.096 us * 2^timeout, 0 = infinite */
	__u8 retry_cnt;
	__u8 rnr_retry;		/* 7 = infinite */
	__u8 min_rnr_timer;
	__u8 max_rd_atomic;
	__u8 max_dest_rd_atomic;
	__u8 port;
	__le16 pkey_index;
	__le32 access_flags;	/* KITE_ACCESS_* */
	__le32 qkey;
	__le32 sq_psn;		/* 24 bits */
	__le32 rq_psn;		/* 24 bits */
	__le32 dest_qpn;	/* 24 bits */
	__le32 reserved;
	struct kite_av av;
};

/* Largest values of the 5- and 3-bit fields of struct kite_qp_attr. */
#define KITE_QP_MAX_TIMEOUT		31
#define KITE_QP_MAX_RETRY		7	/* retry_cnt and rnr_retry */
#define KITE_QP_MAX_RNR_TIMER		31

struct kite_cmd_modify_qp {
	__le32 qpn;
	__le32 reserved;
	struct kite_qp_attr attr;
};

struct kite_cmd_query_obj {	/* QUERY_QP, QUERY_CQ, QUERY_QP_STATS */
	__le32 handle;
	__le32 reserved;
	struct kite_aq_out_buf out;
};

struct kite_cmd_reg_mr {
	__le32 pdn;
	__le32 access;		/* KITE_ACCESS_* */
	__le64 iova;
	__le64 length;
	struct kite_pbl_desc pbl;	/* all zero for a KITE_MR_DMA_ALL MR */
	__le32 key_variant;	/* low 8 bits: variant byte of the new key */
	__le32 reserved;
};

#define KITE_MR_DMA_ALL			(1u << 31)	/* key_variant flag */

/*
 * ALLOC_MR: an MR of PD @pdn in the free state, with no translation, for
 * REG_MR WQEs of up to @max_pages pages (1 .. CAP_MAX_FRWR_PAGES).
 */
struct kite_cmd_alloc_mr {
	__le32 pdn;
	__le32 max_pages;
	__le32 key_variant;	/* low 8 bits: variant byte of the key */
	__le32 reserved;
};

/* REREG_MR: which parts of the MR change (kite_cmd_rereg_mr.flags). */
#define KITE_REREG_TRANS		(1u << 0)	/* iova, length, pbl */
#define KITE_REREG_PD			(1u << 1)	/* pdn */
#define KITE_REREG_ACCESS		(1u << 2)	/* access */

struct kite_cmd_rereg_mr {
	__le32 key;		/* the MR's current key */
	__le32 flags;		/* KITE_REREG_* (at least one) */
	__le32 pdn;
	__le32 access;		/* KITE_ACCESS_* */
	__le64 iova;
	__le64 length;
	struct kite_pbl_desc pbl;
	__le32 key_variant;	/* low 8 bits: variant byte of the new key */
	__le32 reserved;
};

enum kite_mw_type {
	KITE_MW_TYPE_1 = 1,	/* bound to the PD, by BIND_MW on behalf of ibv_bind_mw */
	KITE_MW_TYPE_2 = 2,	/* type 2B: bound to the QP that binds it */
};

struct kite_cmd_alloc_mw {
	__le32 pdn;
	__u8 type;		/* enum kite_mw_type */
	__u8 reserved[3];
	__le32 key_variant;	/* low 8 bits: variant byte of the key */
	__le32 reserved2;
};

enum kite_gid_type {
	KITE_GID_ROCE_V2_IPV4 = 0,
	KITE_GID_ROCE_V2_IPV6 = 1,
};

struct kite_cmd_gid {		/* ADD_GID, DEL_GID */
	__u8 gid[16];
	__le16 index;
	__u8 type;		/* enum kite_gid_type */
	__u8 port;
	__le32 reserved;
};

/*
 * ATTACH_MCAST, DETACH_MCAST: UD QP @qpn joins or leaves the multicast
 * group @gid (IPv6 ff00::/8, or IPv4 224.0.0.0/4 IPv4-mapped). The device
 * owns the group table: a group exists while a QP is attached to it, and
 * the port accepts its Ethernet address (01:00:5e:... or 33:33:...) for
 * RoCEv2 as long. DESTROY_QP detaches the QP from every group.
 */
struct kite_cmd_mcast {
	__u8 gid[16];
	__le32 qpn;
	__le32 reserved;
};

/* QP number of a multicast datagram (BTH DestQP): the IBTA's 0xFFFFFF. */
#define KITE_MCAST_QPN			0x00ffffffu

struct kite_aq_cmd {
	struct kite_aq_hdr hdr;
	union {
		struct kite_cmd_query query;
		struct kite_cmd_set_port set_port;
		struct kite_cmd_create_eq create_eq;
		struct kite_cmd_destroy destroy;
		struct kite_cmd_alloc_uctx alloc_uctx;
		struct kite_cmd_alloc_pd alloc_pd;
		struct kite_cmd_create_cq create_cq;
		struct kite_cmd_modify_cq modify_cq;
		struct kite_cmd_create_srq create_srq;
		struct kite_cmd_modify_srq modify_srq;
		struct kite_cmd_create_qp create_qp;
		struct kite_cmd_modify_qp modify_qp;
		struct kite_cmd_query_obj query_obj;
		struct kite_cmd_reg_mr reg_mr;
		struct kite_cmd_alloc_mr alloc_mr;
		struct kite_cmd_rereg_mr rereg_mr;
		struct kite_cmd_alloc_mw alloc_mw;
		struct kite_cmd_gid gid;
		struct kite_cmd_mcast mcast;
		__u8 raw[KITE_AQ_PAYLOAD_SIZE];
	};
};

#define KITE_ACQE_PHASE			(1u << 0)

struct kite_aq_cqe {
	__le16 cmd_id;
	__u8 status;		/* enum kite_aq_status */
	__u8 flags;		/* KITE_ACQE_PHASE */
	__le32 syndrome;	/* detail for the driver's log */
	__le32 out[6];		/* small results: handle, key, ... */
};

/* Result layouts written to kite_aq_out_buf. */
struct kite_device_attr {
	__le32 abi_version;	/* major << 16 | minor */
	__le32 fw_version;
	__le64 sys_image_guid;
	__le64 page_size_cap;
	__le64 max_mr_size;
	__le32 max_qp;
	__le32 max_cq;
	__le32 max_mr;
	__le32 max_pd;
	__le32 max_cqe;
	__le32 max_qp_wr;
	__le32 max_sge;
	__le32 max_inline;
	__le32 max_eq;
	__le32 max_uctx;
	__le32 max_gid;
	__le32 max_rd_atom;
	__le32 cap_flags;	/* KITE_DEV_CAP_* */
	__le32 num_msix;
	__le32 vendor_id;
	__le32 vendor_part_id;
	__le32 hw_version;
	__le32 max_mw;		/* from ABI 1.3, else 0 */
	__le32 max_frwr_pages;	/* from ABI 1.3, else 0 */
	__le32 max_sge_rd;	/* from ABI 1.3, else 0 (then: max_sge) */
	__le32 max_srq;		/* from ABI 1.4, else 0 */
	__le32 max_srq_wr;	/* from ABI 1.4, else 0 */
	__le32 max_srq_sge;	/* from ABI 1.4, else 0 */
	__le16 max_mcast_grp;	/* from ABI 1.5, else 0 */
	__le16 max_mcast_qp;	/* from ABI 1.5: QPs per group, else 0 */
};

/* Link QUERY_PORT reports, in IB encodings: 1x EDR = 25 Gb/s. */
#define KITE_PORT_LINK_WIDTH_1X		1
#define KITE_PORT_LINK_SPEED_EDR	32
#define KITE_PORT_RATE_MBPS		25000

enum kite_port_state {
	KITE_PORT_DOWN = 1,
	KITE_PORT_ACTIVE = 4,
};

struct kite_port_attr {
	__u8 state;		/* enum kite_port_state */
	__u8 max_mtu;		/* enum kite_mtu */
	__u8 active_mtu;	/* enum kite_mtu, from the Ethernet MTU */
	__u8 link_width;	/* IB encoding: 1 = 1x, 2 = 4x */
	__u8 link_speed;	/* IB encoding */
	__u8 mac[6];
	__u8 reserved;
	__le32 eth_mtu;		/* bytes */
	__le32 gid_tbl_len;
	__le32 reserved2[4];
};

struct kite_stats {
	/* Objects the device holds now. */
	__le32 num_uctx;
	__le32 num_pd;
	__le32 num_cq;
	__le32 num_qp;
	__le32 num_mr;
	__le32 num_eq;
	__le32 num_gid;
	__le32 num_srq;		/* from ABI 1.4 */
	/* Ethernet port. */
	__le64 eth_tx_packets;
	__le64 eth_tx_bytes;
	__le64 eth_rx_packets;
	__le64 eth_rx_bytes;
	__le64 eth_rx_dropped;	/* RX off, oversize or unwritable buffer */
	__le64 eth_tx_errors;
	/* RoCEv2 engine (ABI 1.1 adds the rest after db_rejected). */
	__le64 roce_tx_packets;
	__le64 roce_rx_packets;
	__le64 roce_retransmits;	/* packets sent again */
	__le64 roce_icrc_errors;	/* frames dropped: bad ICRC */
	/* Device health. */
	__le64 eq_events_dropped;	/* event lost: EQ full */
	__le64 db_rejected;		/* doorbell for a foreign/unknown object */
	/* RoCEv2 engine, continued. */
	__le64 roce_tx_bytes;		/* RoCEv2 frames, Ethernet header on */
	__le64 roce_rx_bytes;
	__le64 roce_naks_sent;		/* PSN sequence, access, invalid req */
	__le64 roce_naks_rcvd;
	__le64 roce_rnr_naks_sent;
	__le64 roce_rnr_naks_rcvd;
	__le64 roce_dup_requests;	/* duplicate request packets received */
	__le64 roce_rx_dropped;		/* malformed, unknown QP, bad state */
	__le64 roce_timeouts;		/* retransmit timer expiries */
	__le64 wire_dropped;		/* fault injection: frames dropped */
	/* Doorbells (ABI 1.2). */
	__le64 db_mmio;			/* SQ/RQ/CQ doorbell registers written */
	__le64 db_rec_reads;		/* doorbell-record indexes read */
	/* Multicast (ABI 1.5): datagram copies given to a QP, dropped. */
	__le64 roce_mcast_rx;
	__le64 roce_mcast_dropped;	/* no receive WQE, Q_Key, QP state */
};

/*
 * QUERY_QP_STATS (handle = qpn) writes struct kite_qp_stats to its out
 * buffer; out[0] = bytes written. Counters start at 0 when the QP is created.
 */
struct kite_qp_stats {
	__le64 tx_packets;
	__le64 tx_bytes;
	__le64 rx_packets;
	__le64 rx_bytes;
	__le64 retransmits;
	__le64 timeouts;
	__le64 naks_sent;
	__le64 naks_rcvd;
	__le64 rnr_naks_sent;
	__le64 rnr_naks_rcvd;
	__le64 dup_requests;
	__le64 reserved[5];
};

/* ------------------------------------------------------------------ */
/* Event queues                                                        */
/* ------------------------------------------------------------------ */

/*
 * EQ 0 is the async EQ, set up by registers; completion EQs are created by
 * CREATE_EQ. The device writes 16-byte entries with the phase bit toggling
 * per wrap (first pass: 1). The driver reports its consumer index and re-arms
 * an EQ by writing KITE_DB_EQ in the kernel doorbell page; an EQ raises its
 * vector once per arm.
 */
enum kite_event_type {
	KITE_EVT_COMPLETION = 0x00,	/* data: cqn */
	KITE_EVT_PORT_ACTIVE = 0x01,	/* data: port */
	KITE_EVT_PORT_ERR = 0x02,	/* data: port */
	KITE_EVT_CQ_ERR = 0x03,		/* data: cqn (overrun, DMA error) */
	KITE_EVT_QP_FATAL = 0x04,	/* data: qpn */
	KITE_EVT_QP_REQ_ERR = 0x05,	/* data: qpn */
	KITE_EVT_QP_ACCESS_ERR = 0x06,	/* data: qpn */
	KITE_EVT_QP_LAST_WQE = 0x07,	/* data: qpn; RC/UC QP on an SRQ */
	KITE_EVT_DEV_FATAL = 0x08,	/* data: KITE_FATAL_* */
	KITE_EVT_COMM_EST = 0x09,	/* data: qpn */
	KITE_EVT_SRQ_LIMIT = 0x0a,	/* data: srqn; the limit is disarmed */
	KITE_EVT_SRQ_ERR = 0x0b,	/* data: srqn (bad doorbell or WQE) */
};

#define KITE_EQE_PHASE			(1u << 0)

struct kite_eqe {
	__le32 data;
	__le32 data2;
	__le32 reserved;
	__u8 reserved2[2];
	__u8 type;		/* enum kite_event_type */
	__u8 flags;		/* KITE_EQE_PHASE */
};

/* ------------------------------------------------------------------ */
/* Ethernet rings                                                      */
/* ------------------------------------------------------------------ */

/*
 * One descriptor per frame (no scatter). TX: the driver fills addr/len and
 * writes the producer index to KITE_REG_ETH_TX_DB; the device sends the
 * frame and sets KITE_ETH_DESC_DONE. RX: the driver posts empty buffers;
 * the device writes a frame, sets len to its length and DONE. Frames too
 * large for the buffer set KITE_ETH_DESC_ERR. After any completion the device
 * raises KITE_MSIX_ETH if armed through KITE_REG_ETH_IRQ_ARM.
 */
#define KITE_ETH_DESC_DONE		(1u << 0)
#define KITE_ETH_DESC_ERR		(1u << 1)

#define KITE_ETH_MIN_MTU		68
#define KITE_ETH_MAX_MTU		9000
#define KITE_ETH_HLEN			14
#define KITE_ETH_MAX_FRAME		(KITE_ETH_MAX_MTU + KITE_ETH_HLEN + 4)

struct kite_eth_desc {
	__le64 addr;
	__le16 len;
	__le16 reserved;
	__u8 reserved2[3];
	__u8 status;		/* KITE_ETH_DESC_* */
};

/* ------------------------------------------------------------------ */
/* Doorbells                                                           */
/* ------------------------------------------------------------------ */

/*
 * Each 4 KiB doorbell page has four 64-bit registers. A doorbell value
 * carries the object number in bits 23:0, flags in bits 31:24 and a
 * free-running 32-bit index in bits 63:32 (SQ/RQ: producer index; CQ/EQ:
 * consumer index). The device ignores a doorbell for an object the page's
 * context does not own and counts it.
 */
#define KITE_DB_SQ			0x00
#define KITE_DB_RQ			0x08
#define KITE_DB_CQ			0x10
#define KITE_DB_EQ			0x18	/* kernel page only */
#define KITE_DB_SRQ			0x20	/* producer index (ABI 1.4) */

#define KITE_DB_NUM_MASK		0x00ffffffu
#define KITE_DB_FLAGS_SHIFT		24
#define KITE_DB_INDEX_SHIFT		32

#define KITE_DB_CQ_ARM_NEXT		(1u << 0)	/* any completion */
#define KITE_DB_CQ_ARM_SOLICITED	(1u << 1)	/* solicited only */
#define KITE_DB_EQ_ARM			(1u << 0)

/* ------------------------------------------------------------------ */
/* Doorbell records (ABI 1.2)                                          */
/* ------------------------------------------------------------------ */

/*
 * A QP or CQ created with a doorbell record (CREATE_QP/CREATE_CQ dbrec,
 * a DMA address aligned to the record's size, so it never crosses a page)
 * shares its indexes with the device through memory (hardware.rst,
 * "Doorbell records"). The host writes the free-running producer indexes
 * (QP) or the consumer index (CQ); the device writes sq_poll/rq_poll.
 *
 * *_poll nonzero: the device will read the producer index again without
 * a doorbell. Zero (the record's initial, zeroed state): after storing a
 * new producer index the host must write the MMIO doorbell. The host
 * orders its index store before its load of *_poll (a full barrier); the
 * device orders its store of 0 to *_poll before its next load of the
 * index, so a new index is never missed by both sides.
 */
struct kite_qp_dbrec {
	__le32 sq_pi;		/* host: SQ producer index */
	__le32 rq_pi;		/* host: RQ producer index */
	__le32 sq_poll;		/* device: KITE_DBREC_POLL or 0 */
	__le32 rq_poll;		/* device: KITE_DBREC_POLL or 0 */
};

/*
 * The CQ's record: the consumer index, which the device reads before
 * it would declare the CQ overflowed; the CQ doorbell is then needed only
 * to arm the CQ.
 */
struct kite_cq_dbrec {
	__le32 ci;		/* host: CQ consumer index */
	__le32 reserved;
};

#define KITE_DBREC_POLL			1u

/* ------------------------------------------------------------------ */
/* RDMA queues                                                         */
/* ------------------------------------------------------------------ */

/* Keys: index in bits 31:8, variant in bits 7:0. */
#define KITE_KEY_VARIANT_BITS		8
#define KITE_KEY_VARIANT_MASK		0xffu

enum kite_wqe_opcode {
	KITE_WQE_SEND = 0x00,
	KITE_WQE_SEND_IMM = 0x01,
	KITE_WQE_WRITE = 0x02,
	KITE_WQE_WRITE_IMM = 0x03,
	KITE_WQE_READ = 0x04,
	KITE_WQE_CMP_SWP = 0x05,
	KITE_WQE_FETCH_ADD = 0x06,
	KITE_WQE_SEND_INV = 0x07,	/* RC; imm_data = the rkey to invalidate */
	KITE_WQE_LOCAL_INV = 0x08,	/* imm_data = the key to invalidate */
	KITE_WQE_REG_MR = 0x09,		/* segment kite_wqe_reg_mr */
	KITE_WQE_BIND_MW = 0x0a,	/* segment kite_wqe_bind_mw */
};

#define KITE_WQE_F_SIGNALED		(1u << 0)
#define KITE_WQE_F_SOLICITED		(1u << 1)
#define KITE_WQE_F_FENCE		(1u << 2)
#define KITE_WQE_F_INLINE		(1u << 3)

/*
 * A send WQE is a header, then the segments the opcode needs, then either
 * num_sge SGEs or inline_len bytes of inline data, all within the QP's WQE
 * stride: [hdr][raddr | atomic | ud][sge ... | inline data].
 */
struct kite_sq_wqe_hdr {
	__u8 opcode;		/* enum kite_wqe_opcode */
	__u8 flags;		/* KITE_WQE_F_* */
	__u8 num_sge;
	__u8 reserved;
	__le16 inline_len;
	__le16 reserved2;
	__le32 imm_data;	/* *_IMM: as on the wire; *_INV: the key, LE */
	__le32 reserved3;
};

struct kite_wqe_raddr {
	__le64 remote_addr;
	__le32 rkey;
	__le32 reserved;
};

struct kite_wqe_atomic {
	__le64 remote_addr;
	__le32 rkey;
	__le32 reserved;
	__le64 swap_add;
	__le64 compare;
};

struct kite_wqe_ud {
	struct kite_av av;
	__le32 remote_qpn;
	__le32 remote_qkey;	/* KITE_WQE_UD_QKEY_OWN: the QP's own Q_Key */
};

/* remote_qkey with this bit set: the device sends the QP's own Q_Key. */
#define KITE_WQE_UD_QKEY_OWN		(1u << 31)

/*
 * Fast registration of the ALLOC_MR MR whose index @key names: @npages u64
 * page addresses at @pbl_addr (8-byte aligned, read when the WQE executes),
 * each page 2^@page_shift bytes, mapped as REG_MR maps its level-1 list.
 */
struct kite_wqe_reg_mr {
	__le64 iova;
	__le64 length;
	__le64 pbl_addr;
	__le32 key;		/* the new key: the MR's index, a new variant */
	__le32 access;		/* KITE_ACCESS_* */
	__le32 npages;
	__u8 page_shift;
	__u8 reserved[3];
};

/*
 * Binding of the window @mw_key names to [@addr, @addr + @length) of the MR
 * @mr_key with the remote rights @access; type 1 with @length 0 unbinds.
 */
struct kite_wqe_bind_mw {
	__le64 addr;
	__le64 length;
	__le32 mw_key;		/* the new key: the window's index, a new variant */
	__le32 mr_key;
	__le32 access;		/* KITE_ACCESS_REMOTE_* */
	__le32 reserved;
};

struct kite_sge {
	__le64 addr;
	__le32 length;
	__le32 lkey;
};

/*
 * @next: SRQ WQEs only (RQs ignore it): the slot of the WQE the device
 * takes after this one, below the SRQ's depth.
 */
struct kite_rq_wqe_hdr {
	__u8 num_sge;
	__u8 reserved;
	__le16 next;
	__u8 reserved2[12];
};

/* @next is 16 bits wide: an SRQ has at most 2^KITE_SRQ_MAX_LOG_DEPTH slots. */
#define KITE_SRQ_MAX_LOG_DEPTH		16

#define KITE_SQ_MIN_LOG_STRIDE		6
#define KITE_SQ_MAX_LOG_STRIDE		10
#define KITE_RQ_MIN_LOG_STRIDE		4
#define KITE_RQ_MAX_LOG_STRIDE		10

enum kite_cqe_opcode {
	KITE_CQE_SEND = 0x00,
	KITE_CQE_WRITE = 0x01,
	KITE_CQE_READ = 0x02,
	KITE_CQE_CMP_SWP = 0x03,
	KITE_CQE_FETCH_ADD = 0x04,
	KITE_CQE_REG_MR = 0x05,
	KITE_CQE_LOCAL_INV = 0x06,
	KITE_CQE_BIND_MW = 0x07,
	KITE_CQE_RECV = 0x80,
	KITE_CQE_RECV_WRITE_IMM = 0x81,
};

/* CQE status values equal enum ib_wc_status so drivers pass them through. */
enum kite_cqe_status {
	KITE_CQE_SUCCESS = 0,
	KITE_CQE_LOC_LEN_ERR = 1,
	KITE_CQE_LOC_QP_OP_ERR = 2,
	KITE_CQE_LOC_PROT_ERR = 4,
	KITE_CQE_WR_FLUSH_ERR = 5,
	KITE_CQE_MW_BIND_ERR = 6,
	KITE_CQE_BAD_RESP_ERR = 7,
	KITE_CQE_LOC_ACCESS_ERR = 8,
	KITE_CQE_REM_INV_REQ_ERR = 9,
	KITE_CQE_REM_ACCESS_ERR = 10,
	KITE_CQE_REM_OP_ERR = 11,
	KITE_CQE_RETRY_EXC_ERR = 12,
	KITE_CQE_RNR_RETRY_EXC_ERR = 13,
	KITE_CQE_GENERAL_ERR = 21,
};

/* Every receive-side CQE opcode has this bit set; send-side ones do not. */
#define KITE_CQE_OP_RECV_BIT		0x80u

#define KITE_CQE_F_PHASE		(1u << 0)
#define KITE_CQE_F_IMM			(1u << 1)
#define KITE_CQE_F_GRH			(1u << 2)
#define KITE_CQE_F_SOLICITED		(1u << 3)
/* A SEND_INV received: imm_data holds the rkey it invalidated (LE). */
#define KITE_CQE_F_INV			(1u << 4)

/*
 * A UD/GSI receive buffer starts with a GRH area of this many bytes: the
 * received IPv6 header, or the IPv4 header in its last 20 bytes.
 */
#define KITE_UD_GRH_LEN			40

/*
 * The network header a UD/GSI receive came with (kite_cqe.net_hdr): what
 * the GRH area at the start of the receive buffer holds. The values are
 * those of the kernel's enum rdma_network_type.
 */
enum kite_cqe_net_hdr {
	KITE_CQE_NET_NONE = 0,	/* not a UD/GSI receive */
	KITE_CQE_NET_IPV4 = 2,	/* RoCEv2 over IPv4 */
	KITE_CQE_NET_IPV6 = 3,	/* RoCEv2 over IPv6 */
};

struct kite_cqe {
	__le32 qpn;
	__le16 wqe_idx;		/* index of the WQE this completes, mod depth */
	__u8 opcode;		/* enum kite_cqe_opcode */
	__u8 status;		/* enum kite_cqe_status */
	__le32 byte_len;
	__le32 imm_data;
	__le32 src_qp;		/* UD */
	__le16 pkey_index;
	__u8 net_hdr;		/* UD: enum kite_cqe_net_hdr */
	__u8 vendor_err;
	__u8 smac[6];		/* UD */
	__u8 reserved;
	__u8 flags;		/* KITE_CQE_F_*; written last */
};

/* ------------------------------------------------------------------ */
/* Size assertions                                                     */
/* ------------------------------------------------------------------ */

#define KITE_ASSERT_SIZE(type, size) \
	static_assert(sizeof(struct type) == (size), #type " size")

KITE_ASSERT_SIZE(kite_pbl_desc, 16);
KITE_ASSERT_SIZE(kite_aq_hdr, 8);
KITE_ASSERT_SIZE(kite_aq_cmd, KITE_AQ_CMD_SIZE);
KITE_ASSERT_SIZE(kite_aq_cqe, KITE_AQ_CQE_SIZE);
KITE_ASSERT_SIZE(kite_cmd_create_cq, 32);
KITE_ASSERT_SIZE(kite_cmd_create_qp, 64);
KITE_ASSERT_SIZE(kite_cmd_create_srq, 32);
KITE_ASSERT_SIZE(kite_cmd_modify_srq, 16);
KITE_ASSERT_SIZE(kite_cmd_mcast, 24);
KITE_ASSERT_SIZE(kite_qp_dbrec, 16);
KITE_ASSERT_SIZE(kite_cq_dbrec, 8);
KITE_ASSERT_SIZE(kite_av, 32);
KITE_ASSERT_SIZE(kite_qp_attr, 72);
KITE_ASSERT_SIZE(kite_cmd_modify_qp, 80);
KITE_ASSERT_SIZE(kite_cmd_reg_mr, 48);
KITE_ASSERT_SIZE(kite_cmd_alloc_mr, 16);
KITE_ASSERT_SIZE(kite_cmd_rereg_mr, 56);
KITE_ASSERT_SIZE(kite_cmd_alloc_mw, 16);
KITE_ASSERT_SIZE(kite_device_attr, 128);
KITE_ASSERT_SIZE(kite_port_attr, 36);
KITE_ASSERT_SIZE(kite_stats, 240);
KITE_ASSERT_SIZE(kite_qp_stats, 128);
KITE_ASSERT_SIZE(kite_eqe, 16);
KITE_ASSERT_SIZE(kite_eth_desc, 16);
KITE_ASSERT_SIZE(kite_sq_wqe_hdr, 16);
KITE_ASSERT_SIZE(kite_wqe_raddr, 16);
KITE_ASSERT_SIZE(kite_wqe_atomic, 32);
KITE_ASSERT_SIZE(kite_wqe_ud, 40);
KITE_ASSERT_SIZE(kite_wqe_reg_mr, 40);
KITE_ASSERT_SIZE(kite_wqe_bind_mw, 32);
KITE_ASSERT_SIZE(kite_sge, 16);
KITE_ASSERT_SIZE(kite_rq_wqe_hdr, 16);
/* A next link names every slot of the deepest SRQ. */
static_assert(sizeof(((struct kite_rq_wqe_hdr *)0)->next) * 8 ==
	      KITE_SRQ_MAX_LOG_DEPTH, "kite_rq_wqe_hdr next width");
KITE_ASSERT_SIZE(kite_cqe, 32);

/* ------------------------------------------------------------------ */
/* Helpers shared by driver, device and provider                      */
/* ------------------------------------------------------------------ */

static inline __u32 kite_key_make(__u32 index, __u8 variant)
{
	return (index << KITE_KEY_VARIANT_BITS) | variant;
}

static inline __u32 kite_key_index(__u32 key)
{
	return key >> KITE_KEY_VARIANT_BITS;
}

static inline __u8 kite_key_variant(__u32 key)
{
	return key & KITE_KEY_VARIANT_MASK;
}

static inline __u64 kite_db_make(__u32 num, __u8 flags, __u32 index)
{
	return ((__u64)index << KITE_DB_INDEX_SHIFT) |
	       ((__u64)flags << KITE_DB_FLAGS_SHIFT) |
	       (num & KITE_DB_NUM_MASK);
}

static inline __u32 kite_db_num(__u64 db)
{
	return db & KITE_DB_NUM_MASK;
}

static inline __u8 kite_db_flags(__u64 db)
{
	return (db >> KITE_DB_FLAGS_SHIFT) & 0xff;
}

static inline __u32 kite_db_index(__u64 db)
{
	return db >> KITE_DB_INDEX_SHIFT;
}

/*
 * A doorbell-record address of a record of @size bytes (a power of two):
 * non-zero and aligned to @size, so the record lies within one page.
 */
static inline bool kite_dbrec_addr_valid(__u64 addr, __u32 size)
{
	return addr && !(addr & (size - 1));
}

/* Slot of a free-running index in a ring of 2^log_depth entries. */
static inline __u32 kite_ring_slot(__u32 index, __u8 log_depth)
{
	return index & ((1u << log_depth) - 1);
}

/*
 * Phase bit an entry written at free-running index @index carries: the first
 * pass over the ring writes 1, the second 0, and so on.
 */
static inline __u8 kite_ring_phase(__u32 index, __u8 log_depth)
{
	return ((index >> log_depth) & 1) ^ 1;
}

/* Entries outstanding between producer @pi and consumer @ci (wrap-safe). */
static inline __u32 kite_ring_used(__u32 pi, __u32 ci)
{
	return pi - ci;
}

/* A producer index is acceptable when it is at most depth ahead of ci. */
static inline bool kite_ring_pi_valid(__u32 pi, __u32 ci, __u8 log_depth)
{
	return kite_ring_used(pi, ci) <= (1u << log_depth);
}

static inline bool kite_log_depth_valid(__u32 log_depth, __u32 max_log)
{
	return log_depth >= KITE_MIN_LOG_DEPTH && log_depth <= max_log;
}

/* true when a CQE with opcode @opcode (enum kite_cqe_opcode) completes an RQ WQE. */
static inline bool kite_cqe_is_recv(__u8 opcode)
{
	return opcode & KITE_CQE_OP_RECV_BIT;
}

/*
 * Bytes of a send WQE before its SGEs or inline data: the header and the
 * largest segment an opcode adds (UD's), so that every opcode fits the
 * same stride. A receive WQE has only its header.
 */
#define KITE_SQ_WQE_FIXED	(sizeof(struct kite_sq_wqe_hdr) + \
				 sizeof(struct kite_wqe_ud))
#define KITE_RQ_WQE_FIXED	sizeof(struct kite_rq_wqe_hdr)

/* Where kite_log_stride() stops: 2^63 is the largest power of two in a u64. */
#define KITE_LOG_STRIDE_LIMIT		63

/* log2 of the smallest power of two that is >= @bytes and >= 2^@min_log. */
static inline __u32 kite_log_stride(__u64 bytes, __u32 min_log)
{
	__u32 log = min_log;

	while (log < KITE_LOG_STRIDE_LIMIT && (1ull << log) < bytes)
		log++;
	return log;
}

/*
 * The SQ WQE stride (log2) that holds @max_sge SGEs or @max_inline bytes of
 * inline data, whichever is larger; above KITE_SQ_MAX_LOG_STRIDE when no
 * stride the device takes is big enough. Driver and provider size rings
 * with it, so both always agree.
 */
static inline __u32 kite_sq_log_stride(__u32 max_sge, __u32 max_inline)
{
	__u64 data = (__u64)max_sge * sizeof(struct kite_sge);

	if (data < max_inline)
		data = max_inline;
	return kite_log_stride(KITE_SQ_WQE_FIXED + data, KITE_SQ_MIN_LOG_STRIDE);
}

/* As kite_sq_log_stride(), for an RQ WQE of @max_sge SGEs. */
static inline __u32 kite_rq_log_stride(__u32 max_sge)
{
	return kite_log_stride(KITE_RQ_WQE_FIXED +
			       (__u64)max_sge * sizeof(struct kite_sge),
			       KITE_RQ_MIN_LOG_STRIDE);
}

/* Bytes after the fixed part of an SQ WQE of 2^@log_stride bytes. */
static inline __u32 kite_sq_room(__u32 log_stride)
{
	return (1u << log_stride) - KITE_SQ_WQE_FIXED;
}

/* Bytes after the header of an RQ WQE of 2^@log_stride bytes. */
static inline __u32 kite_rq_room(__u32 log_stride)
{
	return (1u << log_stride) - KITE_RQ_WQE_FIXED;
}

/* Path MTU enum to bytes; 0 for an invalid value. */
static inline __u32 kite_mtu_bytes(__u32 mtu)
{
	return (mtu >= KITE_MTU_256 && mtu <= KITE_MTU_4096) ?
	       128u << mtu : 0;
}

/*
 * Headers a RoCEv2 packet may carry beside its payload, counted as ib_core's
 * iboe_get_mtu() counts them: IPv6 (40) + UDP (8) + BTH (12) + XRCETH (4) +
 * AtomicETH (28) + ICRC (4), so driver and ib_core agree on the active MTU.
 */
#define KITE_ROCE_MTU_OVERHEAD		(40 + 8 + 12 + 4 + 28 + 4)

/* Largest path MTU (enum kite_mtu) that fits an Ethernet MTU in bytes. */
static inline __u32 kite_mtu_from_eth(__u32 eth_mtu)
{
	__u32 mtu;

	for (mtu = KITE_MTU_4096; mtu > KITE_MTU_256; mtu--)
		if (kite_mtu_bytes(mtu) + KITE_ROCE_MTU_OVERHEAD <= eth_mtu)
			break;
	return mtu;
}

/*
 * Whether @gid (16 bytes) is a multicast GID: IPv6 ff00::/8, or
 * 224.0.0.0/4 in the IPv4-mapped form ::ffff:a.b.c.d.
 */
static inline bool kite_gid_is_mcast(const __u8 *gid)
{
	static const __u8 v4_prefix[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
	};
	unsigned int i;

	if (gid[0] == 0xff)
		return true;
	for (i = 0; i < sizeof(v4_prefix); i++)
		if (gid[i] != v4_prefix[i])
			return false;
	return (gid[12] & 0xf0) == 0xe0;
}

/*
 * The Ethernet address of multicast GID @gid (RFC 1112, RFC 2464): IPv4
 * 01:00:5e and the group's low 23 bits, IPv6 33:33 and its last 32 bits.
 */
static inline void kite_gid_mcast_mac(const __u8 *gid, __u8 *mac)
{
	if (gid[0] == 0xff) {
		mac[0] = 0x33;
		mac[1] = 0x33;
		mac[2] = gid[12];
		mac[3] = gid[13];
	} else {
		mac[0] = 0x01;
		mac[1] = 0x00;
		mac[2] = 0x5e;
		mac[3] = gid[13] & 0x7f;
	}
	mac[4] = gid[14];
	mac[5] = gid[15];
}

#endif /* KITE_HW_H */
