// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Numbers in include/kite/kite_hw.h that are ABI: PCI identity, BAR and
 * register layout, doorbell layout, opcodes, status codes, flag bits.
 * Expected values are literal numbers on purpose (see test_abi_layout.c).
 * The values that must equal ib_core's are also compared with the enums
 * copied from the kernel's include/rdma/ib_verbs.h (ib_enums.h, generated).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <kite/kite_hw.h>
#include "kite_limits.h"
#include "ib_enums.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct value_check {
	const char *name;
	unsigned long long value;	/* as the header defines it */
	unsigned long long expected;	/* as the ABI says */
};

#define V(name, expected) { #name, (unsigned long long)(name), (expected) }

static void check_values(const char *what, const struct value_check *v,
			 size_t n)
{
	int bad = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (v[i].value != v[i].expected) {
			print_error("%s: %s is %#llx, ABI says %#llx\n", what,
				    v[i].name, v[i].value, v[i].expected);
			bad++;
		}
	}
	if (bad)
		fail_msg("%s: %d value(s) changed", what, bad);
}

/* All values distinct (opcodes, statuses and the like must not collide). */
static void check_distinct(const char *what, const struct value_check *v,
			   size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (v[i].value == v[j].value)
				fail_msg("%s: %s and %s are both %#llx", what,
					 v[i].name, v[j].name, v[i].value);
}

/* Single-bit flags of one register or field: one bit each, no overlap. */
static void check_bits(const char *what, const struct value_check *v,
		       size_t n, unsigned int width)
{
	unsigned long long seen = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!v[i].value || (v[i].value & (v[i].value - 1)))
			fail_msg("%s: %s (%#llx) is not a single bit", what,
				 v[i].name, v[i].value);
		if (width < 64 && v[i].value >> width)
			fail_msg("%s: %s (%#llx) does not fit %u bits", what,
				 v[i].name, v[i].value, width);
		if (seen & v[i].value)
			fail_msg("%s: %s overlaps another flag", what, v[i].name);
		seen |= v[i].value;
	}
}

#define CHECK_VALUES(what, tbl) check_values(what, tbl, ARRAY_SIZE(tbl))
#define CHECK_DISTINCT(what, tbl) check_distinct(what, tbl, ARRAY_SIZE(tbl))
#define CHECK_BITS(what, tbl, w) check_bits(what, tbl, ARRAY_SIZE(tbl), w)

static void test_pci_identity(void **state)
{
	static const struct value_check v[] = {
		V(KITE_PCI_VENDOR_ID, 0x1234),
		V(KITE_PCI_DEVICE_ID, 0x4b54),
		V(KITE_PCI_SUBSYS_VENDOR_ID, 0x1234),
		V(KITE_PCI_SUBSYS_ID, 0x0001),
		V(KITE_PCI_REVISION, 0x01),
		V(KITE_PCI_CLASS, 0x0200),
		V(KITE_BAR_REGS, 0),
		V(KITE_BAR_DB, 2),
		V(KITE_BAR_MSIX, 4),
		V(KITE_REGS_SIZE, 0x1000),
		V(KITE_DB_PAGE_SHIFT, 12),
		V(KITE_DB_PAGE_SIZE, 4096),
		V(KITE_DB_KERNEL_PAGE, 0),
		V(KITE_MAX_UCTX, 255),
		V(KITE_DB_NUM_PAGES, 256),
		V(KITE_DB_BAR_SIZE, 1048576),
		V(KITE_ABI_MAJOR, 1),
		V(KITE_ABI_MINOR, 5),
		V(KITE_MSIX_ADMIN, 0),
		V(KITE_MSIX_ETH, 1),
		V(KITE_MSIX_COMP_BASE, 2),
		V(KITE_MSIX_MAX_COMP, 8),
		V(KITE_MSIX_NUM, 10),
	};

	(void)state;
	CHECK_VALUES("pci", v);
	/* 64-bit memory BARs take two BAR slots each: 0-1, 2-3, then 4. */
	assert_true(KITE_BAR_DB >= KITE_BAR_REGS + 2);
	assert_true(KITE_BAR_MSIX >= KITE_BAR_DB + 2);
	/* BAR sizes are powers of two, as PCI requires. */
	assert_int_equal(KITE_REGS_SIZE & (KITE_REGS_SIZE - 1), 0);
	assert_int_equal(KITE_DB_BAR_SIZE & (KITE_DB_BAR_SIZE - 1), 0);
	/* Every user context has a doorbell page; page 0 is the kernel's. */
	assert_int_equal(KITE_DB_NUM_PAGES, KITE_MAX_UCTX + 1);
	assert_int_equal(KITE_DB_BAR_SIZE, KITE_DB_NUM_PAGES * KITE_DB_PAGE_SIZE);
}

/* Every 32-bit register of BAR0, with its ABI offset. */
static const struct value_check regs[] = {
	V(KITE_REG_VERSION, 0x000),
	V(KITE_REG_DEV_CTRL, 0x004),
	V(KITE_REG_DEV_STATUS, 0x008),
	V(KITE_REG_FATAL_CODE, 0x00c),
	V(KITE_REG_AQ_BASE_LO, 0x020),
	V(KITE_REG_AQ_BASE_HI, 0x024),
	V(KITE_REG_AQ_LOG_DEPTH, 0x028),
	V(KITE_REG_ACQ_BASE_LO, 0x030),
	V(KITE_REG_ACQ_BASE_HI, 0x034),
	V(KITE_REG_ACQ_LOG_DEPTH, 0x038),
	V(KITE_REG_AQ_DB, 0x03c),
	V(KITE_REG_AEQ_BASE_LO, 0x040),
	V(KITE_REG_AEQ_BASE_HI, 0x044),
	V(KITE_REG_AEQ_LOG_DEPTH, 0x048),
	V(KITE_REG_ETH_TX_BASE_LO, 0x060),
	V(KITE_REG_ETH_TX_BASE_HI, 0x064),
	V(KITE_REG_ETH_TX_LOG_DEPTH, 0x068),
	V(KITE_REG_ETH_TX_DB, 0x06c),
	V(KITE_REG_ETH_RX_BASE_LO, 0x070),
	V(KITE_REG_ETH_RX_BASE_HI, 0x074),
	V(KITE_REG_ETH_RX_LOG_DEPTH, 0x078),
	V(KITE_REG_ETH_RX_DB, 0x07c),
	V(KITE_REG_ETH_CTRL, 0x080),
	V(KITE_REG_ETH_IRQ_ARM, 0x084),
	V(KITE_REG_ETH_TX_CI, 0x088),
	V(KITE_REG_ETH_RX_CI, 0x08c),
	V(KITE_REG_PERM_MAC_LO, 0x090),
	V(KITE_REG_PERM_MAC_HI, 0x094),
	V(KITE_REG_CAP_MAX_QP, 0x100),
	V(KITE_REG_CAP_MAX_CQ, 0x104),
	V(KITE_REG_CAP_MAX_MR, 0x108),
	V(KITE_REG_CAP_MAX_PD, 0x10c),
	V(KITE_REG_CAP_MAX_CQE, 0x110),
	V(KITE_REG_CAP_MAX_QP_WR, 0x114),
	V(KITE_REG_CAP_MAX_SGE, 0x118),
	V(KITE_REG_CAP_MAX_INLINE, 0x11c),
	V(KITE_REG_CAP_PAGE_SIZES, 0x120),
	V(KITE_REG_CAP_PAGE_SIZES_HI, 0x124),
	V(KITE_REG_CAP_MAX_MTU, 0x128),
	V(KITE_REG_CAP_MAX_EQ, 0x12c),
	V(KITE_REG_CAP_MAX_UCTX, 0x130),
	V(KITE_REG_CAP_MAX_GID, 0x134),
	V(KITE_REG_CAP_MAX_MR_SIZE_LO, 0x138),
	V(KITE_REG_CAP_MAX_MR_SIZE_HI, 0x13c),
	V(KITE_REG_CAP_MAX_AQ_LOG_DEPTH, 0x140),
	V(KITE_REG_CAP_MAX_EQ_LOG_DEPTH, 0x144),
	V(KITE_REG_CAP_MAX_ETH_LOG_DEPTH, 0x148),
	V(KITE_REG_CAP_NUM_MSIX, 0x14c),
	V(KITE_REG_CAP_MAX_RD_ATOM, 0x150),
	V(KITE_REG_CAP_FLAGS, 0x154),
	V(KITE_REG_CAP_MAX_MW, 0x158),
	V(KITE_REG_CAP_MAX_FRWR_PAGES, 0x15c),
	V(KITE_REG_CAP_MAX_SGE_RD, 0x160),
	V(KITE_REG_CAP_MAX_SRQ, 0x164),
	V(KITE_REG_CAP_MAX_SRQ_WR, 0x168),
	V(KITE_REG_CAP_MAX_SRQ_SGE, 0x16c),
	V(KITE_REG_CAP_MAX_MCAST_GRP, 0x170),
	V(KITE_REG_CAP_MAX_MCAST_QP, 0x174),
};

static void test_reg_offsets(void **state)
{
	(void)state;
	CHECK_VALUES("BAR0 register", regs);
}

static int cmp_value(const void *a, const void *b)
{
	const struct value_check *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

/*
 * Every KITE_REG_* the header defines (abi_regs.h, made by the Makefile from
 * kite_hw.h), so that a register added later is checked too.
 */
static const struct { const char *name; unsigned long long value; } all_regs[] = {
#include "abi_regs.h"
};

static void test_reg_every_register_listed(void **state)
{
	size_t i, j;

	(void)state;
	assert_true(ARRAY_SIZE(all_regs) >= ARRAY_SIZE(regs));
	for (i = 0; i < ARRAY_SIZE(all_regs); i++) {
		for (j = 0; j < ARRAY_SIZE(regs); j++)
			if (!strcmp(all_regs[i].name, regs[j].name))
				break;
		if (j == ARRAY_SIZE(regs))
			fail_msg("%s (%#llx) has no expected offset in this test",
				 all_regs[i].name, all_regs[i].value);
	}
}

static void test_reg_alignment_and_overlap(void **state)
{
	struct value_check sorted[ARRAY_SIZE(all_regs)];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(all_regs); i++) {
		if (all_regs[i].value % 4)
			fail_msg("%s (%#llx) is not 32-bit aligned",
				 all_regs[i].name, all_regs[i].value);
		if (all_regs[i].value + 4 > KITE_REGS_SIZE)
			fail_msg("%s (%#llx) is outside BAR0", all_regs[i].name,
				 all_regs[i].value);
		sorted[i].name = all_regs[i].name;
		sorted[i].value = all_regs[i].value;
		sorted[i].expected = 0;
	}
	qsort(sorted, ARRAY_SIZE(sorted), sizeof(sorted[0]), cmp_value);
	for (i = 1; i < ARRAY_SIZE(sorted); i++)
		if (sorted[i].value < sorted[i - 1].value + 4)
			fail_msg("%s (%#llx) overlaps %s (%#llx)",
				 sorted[i].name, sorted[i].value,
				 sorted[i - 1].name, sorted[i - 1].value);
}

/* 64-bit quantities split in LO/HI registers: HI right after an 8-aligned LO. */
static void test_reg_64bit_pairs(void **state)
{
	static const struct { const char *name; unsigned int lo, hi; } p[] = {
		{ "AQ_BASE", KITE_REG_AQ_BASE_LO, KITE_REG_AQ_BASE_HI },
		{ "ACQ_BASE", KITE_REG_ACQ_BASE_LO, KITE_REG_ACQ_BASE_HI },
		{ "AEQ_BASE", KITE_REG_AEQ_BASE_LO, KITE_REG_AEQ_BASE_HI },
		{ "ETH_TX_BASE", KITE_REG_ETH_TX_BASE_LO, KITE_REG_ETH_TX_BASE_HI },
		{ "ETH_RX_BASE", KITE_REG_ETH_RX_BASE_LO, KITE_REG_ETH_RX_BASE_HI },
		{ "PERM_MAC", KITE_REG_PERM_MAC_LO, KITE_REG_PERM_MAC_HI },
		{ "CAP_PAGE_SIZES", KITE_REG_CAP_PAGE_SIZES, KITE_REG_CAP_PAGE_SIZES_HI },
		{ "CAP_MAX_MR_SIZE", KITE_REG_CAP_MAX_MR_SIZE_LO, KITE_REG_CAP_MAX_MR_SIZE_HI },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(p); i++) {
		if (p[i].lo % 8)
			fail_msg("%s_LO (%#x) is not 64-bit aligned", p[i].name, p[i].lo);
		if (p[i].hi != p[i].lo + 4)
			fail_msg("%s_HI (%#x) does not follow LO (%#x)", p[i].name,
				 p[i].hi, p[i].lo);
	}
}

static void test_reg_bits(void **state)
{
	static const struct value_check ctrl[] = {
		V(KITE_CTRL_ENABLE, 1u << 0),
		V(KITE_CTRL_RESET, 1u << 1),
	};
	static const struct value_check status[] = {
		V(KITE_STATUS_READY, 1u << 0),
		V(KITE_STATUS_FATAL, 1u << 1),
		V(KITE_STATUS_LINK_UP, 1u << 2),
	};
	static const struct value_check eth[] = {
		V(KITE_ETH_CTRL_TX_EN, 1u << 0),
		V(KITE_ETH_CTRL_RX_EN, 1u << 1),
		V(KITE_ETH_CTRL_PROMISC, 1u << 2),
	};
	static const struct value_check cap[] = {
		V(KITE_DEV_CAP_RC, 1u << 0),
		V(KITE_DEV_CAP_UC, 1u << 1),
		V(KITE_DEV_CAP_UD, 1u << 2),
		V(KITE_DEV_CAP_ATOMIC, 1u << 3),
		V(KITE_DEV_CAP_IPV6, 1u << 4),
		V(KITE_DEV_CAP_MEM_MGT, 1u << 5),
		V(KITE_DEV_CAP_MW, 1u << 6),
		V(KITE_DEV_CAP_SRQ, 1u << 7),
		V(KITE_DEV_CAP_MCAST, 1u << 8),
	};
	static const struct value_check fatal[] = {
		V(KITE_FATAL_NONE, 0),
		V(KITE_FATAL_AQ_DOORBELL, 1),
		V(KITE_FATAL_AQ_DMA, 2),
		V(KITE_FATAL_EQ_DMA, 3),
		V(KITE_FATAL_ETH_DMA, 4),
		V(KITE_FATAL_INTERNAL, 5),
		V(KITE_FATAL_BAD_CONFIG, 6),
	};

	(void)state;
	CHECK_VALUES("DEV_CTRL", ctrl);
	CHECK_BITS("DEV_CTRL", ctrl, 32);
	CHECK_VALUES("DEV_STATUS", status);
	CHECK_BITS("DEV_STATUS", status, 32);
	CHECK_VALUES("ETH_CTRL", eth);
	CHECK_BITS("ETH_CTRL", eth, 32);
	CHECK_VALUES("CAP_FLAGS", cap);
	CHECK_BITS("CAP_FLAGS", cap, 32);
	CHECK_VALUES("FATAL_CODE", fatal);
	CHECK_DISTINCT("FATAL_CODE", fatal);
}

static void test_limits(void **state)
{
	static const struct value_check v[] = {
		V(KITE_MIN_LOG_DEPTH, 2),
		V(KITE_RING_ALIGN, 4096),
		V(KITE_DEF_MAX_QP, 262144),
		V(KITE_DEF_MAX_CQ, 262144),
		V(KITE_DEF_MAX_MR, 1048576),
		V(KITE_DEF_MAX_PD, 262144),
		V(KITE_DEF_MAX_CQE, 4194304),
		V(KITE_DEF_MAX_QP_WR, 32768),
		V(KITE_DEF_QPN_SLOT_BITS, 19),
		V(KITE_DEF_MAX_SGE, 32),
		V(KITE_DEF_MAX_INLINE, 256),
		V(KITE_DEF_MAX_EQ, 9),
		V(KITE_DEF_MAX_GID, 16),
		V(KITE_DEF_MAX_RD_ATOM, 128),
		V(KITE_DEF_MAX_AQ_LOG_DEPTH, 10),
		V(KITE_DEF_MAX_EQ_LOG_DEPTH, 16),
		V(KITE_DEF_MAX_ETH_LOG_DEPTH, 12),
		V(KITE_DEF_PAGE_SIZES, 0x40211000ull),
		V(KITE_DEF_MAX_MR_SIZE, 0x1000000000ull),
		V(KITE_DEF_MAX_MW, 262144),
		V(KITE_DEF_MAX_FRWR_PAGES, 512),
		V(KITE_ETH_MIN_MTU, 68),
		V(KITE_ETH_MAX_MTU, 9000),
		V(KITE_ETH_HLEN, 14),
		V(KITE_ETH_MAX_FRAME, 9018),
		V(KITE_PBL_LEVEL_DIRECT, 0),
		V(KITE_PBL_LEVEL_1, 1),
		V(KITE_PBL_LEVEL_2, 2),
		V(KITE_PBL_CHUNK_SIZE, 4096),
		V(KITE_PBL_ENTRIES_PER_CHUNK, 512),
		V(KITE_SQ_MIN_LOG_STRIDE, 6),
		V(KITE_SQ_MAX_LOG_STRIDE, 10),
		V(KITE_RQ_MIN_LOG_STRIDE, 4),
		V(KITE_RQ_MAX_LOG_STRIDE, 10),
		V(KITE_SRQ_MAX_LOG_DEPTH, 16),
		V(KITE_QPN_MASK, 0xffffff),
		V(KITE_PSN_MASK, 0xffffff),
		V(KITE_GSI_QPN, 1),
		V(KITE_UD_GRH_LEN, 40),
		V(KITE_CQE_OP_RECV_BIT, 0x80),
		V(KITE_ABI_MINOR_QP_STATS, 1),
		V(KITE_ABI_MINOR_DBREC, 2),
		V(KITE_ABI_MINOR_MEM_MGT, 3),
		V(KITE_ABI_MINOR_SRQ, 4),
		V(KITE_ABI_MINOR_MCAST, 5),
		V(KITE_MCAST_QPN, 0xffffff),
		V(KITE_KEY_VARIANT_BITS, 8),
		V(KITE_KEY_VARIANT_MASK, 0xff),
	};

	(void)state;
	CHECK_VALUES("limits", v);
	/* One completion EQ per completion vector, plus the async EQ. */
	assert_int_equal(KITE_DEF_MAX_EQ, 1 + KITE_MSIX_MAX_COMP);
	/* The minimum depth fits under every maximum. */
	assert_true(KITE_MIN_LOG_DEPTH <= KITE_DEF_MAX_AQ_LOG_DEPTH);
	assert_true(KITE_MIN_LOG_DEPTH <= KITE_DEF_MAX_EQ_LOG_DEPTH);
	assert_true(KITE_MIN_LOG_DEPTH <= KITE_DEF_MAX_ETH_LOG_DEPTH);
	/* A maximal Ethernet frame fits the 16-bit descriptor length. */
	assert_true(KITE_ETH_MAX_FRAME <= 0xffff);
	/* The smallest supported page is 4 KiB. */
	assert_int_equal(KITE_DEF_PAGE_SIZES & ((1ull << 12) - 1), 0);
	assert_true(KITE_DEF_PAGE_SIZES & (1ull << 12));
}

static void test_aq_opcodes(void **state)
{
	static const struct value_check v[] = {
		V(KITE_CMD_QUERY_DEVICE, 0x01),
		V(KITE_CMD_QUERY_PORT, 0x02),
		V(KITE_CMD_SET_PORT, 0x03),
		V(KITE_CMD_CREATE_EQ, 0x04),
		V(KITE_CMD_DESTROY_EQ, 0x05),
		V(KITE_CMD_ALLOC_UCTX, 0x06),
		V(KITE_CMD_DEALLOC_UCTX, 0x07),
		V(KITE_CMD_ALLOC_PD, 0x08),
		V(KITE_CMD_DEALLOC_PD, 0x09),
		V(KITE_CMD_CREATE_CQ, 0x10),
		V(KITE_CMD_MODIFY_CQ, 0x11),
		V(KITE_CMD_QUERY_CQ, 0x12),
		V(KITE_CMD_DESTROY_CQ, 0x13),
		V(KITE_CMD_CREATE_SRQ, 0x14),
		V(KITE_CMD_MODIFY_SRQ, 0x15),
		V(KITE_CMD_QUERY_SRQ, 0x16),
		V(KITE_CMD_DESTROY_SRQ, 0x17),
		V(KITE_CMD_CREATE_QP, 0x18),
		V(KITE_CMD_MODIFY_QP, 0x19),
		V(KITE_CMD_QUERY_QP, 0x1a),
		V(KITE_CMD_DESTROY_QP, 0x1b),
		V(KITE_CMD_QUERY_QP_STATS, 0x1c),
		V(KITE_CMD_REG_MR, 0x20),
		V(KITE_CMD_DEREG_MR, 0x21),
		V(KITE_CMD_ALLOC_MR, 0x22),
		V(KITE_CMD_REREG_MR, 0x23),
		V(KITE_CMD_ALLOC_MW, 0x24),
		V(KITE_CMD_DEALLOC_MW, 0x25),
		V(KITE_CMD_ADD_GID, 0x28),
		V(KITE_CMD_DEL_GID, 0x29),
		V(KITE_CMD_ATTACH_MCAST, 0x2a),
		V(KITE_CMD_DETACH_MCAST, 0x2b),
		V(KITE_CMD_QUERY_STATS, 0x30),
		V(KITE_CMD_MAX, 0x3f),
	};
	size_t i;

	(void)state;
	CHECK_VALUES("admin opcode", v);
	CHECK_DISTINCT("admin opcode", v);
	/* 0 is never a valid opcode (a zeroed slot must not execute). */
	for (i = 0; i < ARRAY_SIZE(v); i++)
		if (v[i].value == 0 || v[i].value > KITE_CMD_MAX)
			fail_msg("%s (%#llx) outside 1..KITE_CMD_MAX", v[i].name,
				 v[i].value);
	/* Opcodes fit the 8-bit hdr.opcode. */
	assert_true(KITE_CMD_MAX <= 0xff);
}

static void test_aq_status(void **state)
{
	static const struct value_check v[] = {
		V(KITE_STS_OK, 0x00),
		V(KITE_STS_BAD_OPCODE, 0x01),
		V(KITE_STS_BAD_PARAM, 0x02),
		V(KITE_STS_NO_RESOURCES, 0x03),
		V(KITE_STS_BAD_HANDLE, 0x04),
		V(KITE_STS_BUSY, 0x05),
		V(KITE_STS_BAD_STATE, 0x06),
		V(KITE_STS_DMA_ERROR, 0x07),
		V(KITE_STS_NOT_SUPPORTED, 0x08),
		V(KITE_STS_PERMISSION, 0x09),
		V(KITE_STS_INTERNAL, 0x0a),
		V(KITE_STS_EXISTS, 0x0b),
	};
	static const struct value_check flags[] = {
		V(KITE_ACQE_PHASE, 1u << 0),
		V(KITE_SET_PORT_MTU, 1u << 0),
		V(KITE_SET_PORT_MAC, 1u << 1),
		V(KITE_CQ_FLAG_ARMED, 1u << 0),
		V(KITE_QP_FLAG_SIG_ALL, 1u << 0),
		V(KITE_QP_FLAG_SRQ, 1u << 1),
		V(KITE_SRQ_ATTR_MAX_WR, 1u << 0),
		V(KITE_SRQ_ATTR_LIMIT, 1u << 1),
		V(KITE_SRQ_FLAG_ERROR, 1u << 0),
		V(KITE_MR_DMA_ALL, 1u << 31),
		V(KITE_REREG_TRANS, 1u << 0),
		V(KITE_REREG_PD, 1u << 1),
		V(KITE_REREG_ACCESS, 1u << 2),
		V(KITE_MW_TYPE_1, 1),
		V(KITE_MW_TYPE_2, 2),
	};

	(void)state;
	CHECK_VALUES("admin status", v);
	CHECK_DISTINCT("admin status", v);
	CHECK_VALUES("admin flags", flags);
	/* KITE_MR_DMA_ALL must not collide with the 8-bit key variant. */
	assert_int_equal(KITE_MR_DMA_ALL & KITE_KEY_VARIANT_MASK, 0);
}

static void test_object_enums(void **state)
{
	static const struct value_check v[] = {
		V(KITE_MTU_256, 1),
		V(KITE_MTU_512, 2),
		V(KITE_MTU_1024, 3),
		V(KITE_MTU_2048, 4),
		V(KITE_MTU_4096, 5),
		V(KITE_QPT_RC, 0),
		V(KITE_QPT_UC, 1),
		V(KITE_QPT_UD, 2),
		V(KITE_QPT_GSI, 3),
		V(KITE_QPS_RESET, 0),
		V(KITE_QPS_INIT, 1),
		V(KITE_QPS_RTR, 2),
		V(KITE_QPS_RTS, 3),
		V(KITE_QPS_SQD, 4),
		V(KITE_QPS_SQE, 5),
		V(KITE_QPS_ERR, 6),
		V(KITE_NET_IPV4, 0),
		V(KITE_NET_IPV6, 1),
		V(KITE_GID_ROCE_V2_IPV4, 0),
		V(KITE_GID_ROCE_V2_IPV6, 1),
		V(KITE_PORT_DOWN, 1),
		V(KITE_PORT_ACTIVE, 4),
	};
	static const struct value_check attr[] = {
		V(KITE_QP_ATTR_STATE, 1u << 0),
		V(KITE_QP_ATTR_CUR_STATE, 1u << 1),
		V(KITE_QP_ATTR_ACCESS_FLAGS, 1u << 3),
		V(KITE_QP_ATTR_PKEY_INDEX, 1u << 4),
		V(KITE_QP_ATTR_PORT, 1u << 5),
		V(KITE_QP_ATTR_QKEY, 1u << 6),
		V(KITE_QP_ATTR_AV, 1u << 7),
		V(KITE_QP_ATTR_PATH_MTU, 1u << 8),
		V(KITE_QP_ATTR_TIMEOUT, 1u << 9),
		V(KITE_QP_ATTR_RETRY_CNT, 1u << 10),
		V(KITE_QP_ATTR_RNR_RETRY, 1u << 11),
		V(KITE_QP_ATTR_RQ_PSN, 1u << 12),
		V(KITE_QP_ATTR_MAX_QP_RD_ATOMIC, 1u << 13),
		V(KITE_QP_ATTR_MIN_RNR_TIMER, 1u << 15),
		V(KITE_QP_ATTR_SQ_PSN, 1u << 16),
		V(KITE_QP_ATTR_MAX_DEST_RD_ATOMIC, 1u << 17),
		V(KITE_QP_ATTR_DEST_QPN, 1u << 20),
	};
	static const struct value_check access[] = {
		V(KITE_ACCESS_LOCAL_WRITE, 1u << 0),
		V(KITE_ACCESS_REMOTE_WRITE, 1u << 1),
		V(KITE_ACCESS_REMOTE_READ, 1u << 2),
		V(KITE_ACCESS_REMOTE_ATOMIC, 1u << 3),
		V(KITE_ACCESS_MW_BIND, 1u << 4),
	};

	(void)state;
	CHECK_VALUES("object enum", v);
	CHECK_VALUES("QP attr mask", attr);
	CHECK_BITS("QP attr mask", attr, 32);
	CHECK_VALUES("access flags", access);
	CHECK_BITS("access flags", access, 32);
}

static void test_event_types(void **state)
{
	static const struct value_check v[] = {
		V(KITE_EVT_COMPLETION, 0x00),
		V(KITE_EVT_PORT_ACTIVE, 0x01),
		V(KITE_EVT_PORT_ERR, 0x02),
		V(KITE_EVT_CQ_ERR, 0x03),
		V(KITE_EVT_QP_FATAL, 0x04),
		V(KITE_EVT_QP_REQ_ERR, 0x05),
		V(KITE_EVT_QP_ACCESS_ERR, 0x06),
		V(KITE_EVT_QP_LAST_WQE, 0x07),
		V(KITE_EVT_DEV_FATAL, 0x08),
		V(KITE_EVT_COMM_EST, 0x09),
		V(KITE_EVT_SRQ_LIMIT, 0x0a),
		V(KITE_EVT_SRQ_ERR, 0x0b),
	};
	static const struct value_check flags[] = {
		V(KITE_EQE_PHASE, 1u << 0),
		V(KITE_ETH_DESC_DONE, 1u << 0),
		V(KITE_ETH_DESC_ERR, 1u << 1),
	};

	(void)state;
	CHECK_VALUES("event type", v);
	CHECK_DISTINCT("event type", v);
	CHECK_VALUES("EQE/Ethernet flags", flags);
	check_bits("Ethernet desc status", &flags[1], 2, 8);
}

static void test_doorbells(void **state)
{
	static const struct value_check v[] = {
		V(KITE_DB_SQ, 0x00),
		V(KITE_DB_RQ, 0x08),
		V(KITE_DB_CQ, 0x10),
		V(KITE_DB_EQ, 0x18),
		V(KITE_DB_SRQ, 0x20),
		V(KITE_DB_NUM_MASK, 0x00ffffff),
		V(KITE_DB_FLAGS_SHIFT, 24),
		V(KITE_DB_INDEX_SHIFT, 32),
		V(KITE_DB_CQ_ARM_NEXT, 1u << 0),
		V(KITE_DB_CQ_ARM_SOLICITED, 1u << 1),
		V(KITE_DB_EQ_ARM, 1u << 0),
		V(KITE_DBREC_POLL, 1u),
	};
	size_t i;

	(void)state;
	CHECK_VALUES("doorbell", v);
	/* Four distinct 64-bit registers inside one doorbell page. */
	check_distinct("doorbell register", v, 4);
	for (i = 0; i < 4; i++) {
		if (v[i].value % 8)
			fail_msg("%s (%#llx) is not 64-bit aligned", v[i].name,
				 v[i].value);
		if (v[i].value + 8 > KITE_DB_PAGE_SIZE)
			fail_msg("%s (%#llx) is outside the page", v[i].name,
				 v[i].value);
	}
	/* Fields tile the 64-bit value: num 23:0, flags 31:24, index 63:32. */
	assert_int_equal(KITE_DB_NUM_MASK + 1, 1u << KITE_DB_FLAGS_SHIFT);
	assert_int_equal(KITE_DB_FLAGS_SHIFT + 8, KITE_DB_INDEX_SHIFT);
	/* Object numbers must fit the doorbell's num field. */
	assert_true(KITE_DEF_MAX_QP - 1 <= KITE_DB_NUM_MASK);
	/* Every QP and the GSI QP fit the slots of a QP number. */
	assert_true(2 + KITE_DEF_MAX_QP <= 1u << KITE_DEF_QPN_SLOT_BITS);
	assert_true(1u << KITE_DEF_QPN_SLOT_BITS <= KITE_QPN_MASK);
	/* MR and window key indexes from 1 fit the key's index bits. */
	assert_true(KITE_DEF_MAX_MR + KITE_DEF_MAX_MW <=
		    0xffffffffu >> KITE_KEY_VARIANT_BITS);
	/* A REG_MR WQE's page list is at most one 4 KiB chunk. */
	assert_true(KITE_DEF_MAX_FRWR_PAGES <= KITE_PBL_ENTRIES_PER_CHUNK);
	assert_true(KITE_DEF_MAX_CQ - 1 <= KITE_DB_NUM_MASK);
}

static void test_wqe_cqe_enums(void **state)
{
	static const struct value_check wqe[] = {
		V(KITE_WQE_SEND, 0x00),
		V(KITE_WQE_SEND_IMM, 0x01),
		V(KITE_WQE_WRITE, 0x02),
		V(KITE_WQE_WRITE_IMM, 0x03),
		V(KITE_WQE_READ, 0x04),
		V(KITE_WQE_CMP_SWP, 0x05),
		V(KITE_WQE_FETCH_ADD, 0x06),
		V(KITE_WQE_SEND_INV, 0x07),
		V(KITE_WQE_LOCAL_INV, 0x08),
		V(KITE_WQE_REG_MR, 0x09),
		V(KITE_WQE_BIND_MW, 0x0a),
	};
	static const struct value_check wqe_flags[] = {
		V(KITE_WQE_F_SIGNALED, 1u << 0),
		V(KITE_WQE_F_SOLICITED, 1u << 1),
		V(KITE_WQE_F_FENCE, 1u << 2),
		V(KITE_WQE_F_INLINE, 1u << 3),
	};
	static const struct value_check cqe[] = {
		V(KITE_CQE_SEND, 0x00),
		V(KITE_CQE_WRITE, 0x01),
		V(KITE_CQE_READ, 0x02),
		V(KITE_CQE_CMP_SWP, 0x03),
		V(KITE_CQE_FETCH_ADD, 0x04),
		V(KITE_CQE_REG_MR, 0x05),
		V(KITE_CQE_LOCAL_INV, 0x06),
		V(KITE_CQE_BIND_MW, 0x07),
		V(KITE_CQE_RECV, 0x80),
		V(KITE_CQE_RECV_WRITE_IMM, 0x81),
	};
	static const struct value_check cqe_flags[] = {
		V(KITE_CQE_F_PHASE, 1u << 0),
		V(KITE_CQE_F_IMM, 1u << 1),
		V(KITE_CQE_F_GRH, 1u << 2),
		V(KITE_CQE_F_SOLICITED, 1u << 3),
		V(KITE_CQE_F_INV, 1u << 4),
	};

	(void)state;
	CHECK_VALUES("WQE opcode", wqe);
	CHECK_DISTINCT("WQE opcode", wqe);
	CHECK_VALUES("WQE flags", wqe_flags);
	CHECK_BITS("WQE flags", wqe_flags, 8);
	CHECK_VALUES("CQE opcode", cqe);
	CHECK_DISTINCT("CQE opcode", cqe);
	CHECK_VALUES("CQE flags", cqe_flags);
	CHECK_BITS("CQE flags", cqe_flags, 8);
}

/*
 * CQE status = enum ib_wc_status, as numbered in the 6.1 kernel's
 * include/rdma/ib_verbs.h (IB_WC_SUCCESS = 0 ... IB_WC_GENERAL_ERR = 21).
 */
static void test_cqe_status_literal(void **state)
{
	static const struct value_check v[] = {
		V(KITE_CQE_SUCCESS, 0),
		V(KITE_CQE_LOC_LEN_ERR, 1),
		V(KITE_CQE_LOC_QP_OP_ERR, 2),
		V(KITE_CQE_LOC_PROT_ERR, 4),
		V(KITE_CQE_WR_FLUSH_ERR, 5),
		V(KITE_CQE_MW_BIND_ERR, 6),
		V(KITE_CQE_BAD_RESP_ERR, 7),
		V(KITE_CQE_LOC_ACCESS_ERR, 8),
		V(KITE_CQE_REM_INV_REQ_ERR, 9),
		V(KITE_CQE_REM_ACCESS_ERR, 10),
		V(KITE_CQE_REM_OP_ERR, 11),
		V(KITE_CQE_RETRY_EXC_ERR, 12),
		V(KITE_CQE_RNR_RETRY_EXC_ERR, 13),
		V(KITE_CQE_GENERAL_ERR, 21),
	};

	(void)state;
	CHECK_VALUES("CQE status", v);
	CHECK_DISTINCT("CQE status", v);
}

#if KITE_HAVE_IB_VERBS
#define IBV(kite, ib) { #kite " = " #ib, (unsigned long long)(kite), \
			(unsigned long long)(ib) }
#endif

/* The same values, compared with the kernel's own enums. */
static void test_ib_core_numbering(void **state)
{
#if KITE_HAVE_IB_VERBS
	static const struct value_check v[] = {
		IBV(KITE_CQE_SUCCESS, IB_WC_SUCCESS),
		IBV(KITE_CQE_LOC_LEN_ERR, IB_WC_LOC_LEN_ERR),
		IBV(KITE_CQE_LOC_QP_OP_ERR, IB_WC_LOC_QP_OP_ERR),
		IBV(KITE_CQE_LOC_PROT_ERR, IB_WC_LOC_PROT_ERR),
		IBV(KITE_CQE_WR_FLUSH_ERR, IB_WC_WR_FLUSH_ERR),
		IBV(KITE_CQE_BAD_RESP_ERR, IB_WC_BAD_RESP_ERR),
		IBV(KITE_CQE_LOC_ACCESS_ERR, IB_WC_LOC_ACCESS_ERR),
		IBV(KITE_CQE_REM_INV_REQ_ERR, IB_WC_REM_INV_REQ_ERR),
		IBV(KITE_CQE_REM_ACCESS_ERR, IB_WC_REM_ACCESS_ERR),
		IBV(KITE_CQE_REM_OP_ERR, IB_WC_REM_OP_ERR),
		IBV(KITE_CQE_RETRY_EXC_ERR, IB_WC_RETRY_EXC_ERR),
		IBV(KITE_CQE_RNR_RETRY_EXC_ERR, IB_WC_RNR_RETRY_EXC_ERR),
		IBV(KITE_CQE_GENERAL_ERR, IB_WC_GENERAL_ERR),
		IBV(KITE_MTU_256, IB_MTU_256),
		IBV(KITE_MTU_512, IB_MTU_512),
		IBV(KITE_MTU_1024, IB_MTU_1024),
		IBV(KITE_MTU_2048, IB_MTU_2048),
		IBV(KITE_MTU_4096, IB_MTU_4096),
		IBV(KITE_QPS_RESET, IB_QPS_RESET),
		IBV(KITE_QPS_INIT, IB_QPS_INIT),
		IBV(KITE_QPS_RTR, IB_QPS_RTR),
		IBV(KITE_QPS_RTS, IB_QPS_RTS),
		IBV(KITE_QPS_SQD, IB_QPS_SQD),
		IBV(KITE_QPS_SQE, IB_QPS_SQE),
		IBV(KITE_QPS_ERR, IB_QPS_ERR),
		IBV(KITE_PORT_DOWN, IB_PORT_DOWN),
		IBV(KITE_PORT_ACTIVE, IB_PORT_ACTIVE),
		IBV(KITE_QP_ATTR_STATE, IB_QP_STATE),
		IBV(KITE_QP_ATTR_CUR_STATE, IB_QP_CUR_STATE),
		IBV(KITE_QP_ATTR_ACCESS_FLAGS, IB_QP_ACCESS_FLAGS),
		IBV(KITE_QP_ATTR_PKEY_INDEX, IB_QP_PKEY_INDEX),
		IBV(KITE_QP_ATTR_PORT, IB_QP_PORT),
		IBV(KITE_QP_ATTR_QKEY, IB_QP_QKEY),
		IBV(KITE_QP_ATTR_AV, IB_QP_AV),
		IBV(KITE_QP_ATTR_PATH_MTU, IB_QP_PATH_MTU),
		IBV(KITE_QP_ATTR_TIMEOUT, IB_QP_TIMEOUT),
		IBV(KITE_QP_ATTR_RETRY_CNT, IB_QP_RETRY_CNT),
		IBV(KITE_QP_ATTR_RNR_RETRY, IB_QP_RNR_RETRY),
		IBV(KITE_QP_ATTR_RQ_PSN, IB_QP_RQ_PSN),
		IBV(KITE_QP_ATTR_MAX_QP_RD_ATOMIC, IB_QP_MAX_QP_RD_ATOMIC),
		IBV(KITE_QP_ATTR_MIN_RNR_TIMER, IB_QP_MIN_RNR_TIMER),
		IBV(KITE_QP_ATTR_SQ_PSN, IB_QP_SQ_PSN),
		IBV(KITE_QP_ATTR_MAX_DEST_RD_ATOMIC, IB_QP_MAX_DEST_RD_ATOMIC),
		IBV(KITE_QP_ATTR_DEST_QPN, IB_QP_DEST_QPN),
	};

	(void)state;
	CHECK_VALUES("ib_core numbering (" KITE_IB_VERBS_PATH ")", v);
#else
	(void)state;
	/* The kernel headers are a required dependency: fail, do not skip. */
	fail_msg("include/rdma/ib_verbs.h of the guest kernel not found "
		 "(install linux-headers-amd64: scripts/install-deps.sh)");
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pci_identity),
		cmocka_unit_test(test_reg_offsets),
		cmocka_unit_test(test_reg_every_register_listed),
		cmocka_unit_test(test_reg_alignment_and_overlap),
		cmocka_unit_test(test_reg_64bit_pairs),
		cmocka_unit_test(test_reg_bits),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_aq_opcodes),
		cmocka_unit_test(test_aq_status),
		cmocka_unit_test(test_object_enums),
		cmocka_unit_test(test_event_types),
		cmocka_unit_test(test_doorbells),
		cmocka_unit_test(test_wqe_cqe_enums),
		cmocka_unit_test(test_cqe_status_literal),
		cmocka_unit_test(test_ib_core_numbering),
	};

	return cmocka_run_group_tests_name("abi_values", tests, NULL, NULL);
}
