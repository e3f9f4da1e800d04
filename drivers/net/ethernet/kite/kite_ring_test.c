// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite kite_ring: ring index, phase and occupancy arithmetic
 * (including 32-bit wrap), the EQ consumer, key and doorbell helpers, and
 * MTU helpers.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <kunit/test.h>
#include <linux/slab.h>

#include "kite.h"

static void kite_test_slot(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kite_ring_slot(0, 2), 0);
	KUNIT_EXPECT_EQ(test, kite_ring_slot(3, 2), 3);
	KUNIT_EXPECT_EQ(test, kite_ring_slot(4, 2), 0);
	KUNIT_EXPECT_EQ(test, kite_ring_slot(1029, 10), 5);
	KUNIT_EXPECT_EQ(test, kite_ring_slot(U32_MAX, 2), 3);
	KUNIT_EXPECT_EQ(test, kite_ring_slot(U32_MAX, 16), 0xffff);
	KUNIT_EXPECT_EQ(test, kite_ring_slot(U32_MAX + 1U, 2), 0);
}

static void kite_test_phase(struct kunit *test)
{
	u32 i;

	/* First pass writes 1, second 0, third 1 again. */
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ(test, kite_ring_phase(i, 2), 1);
		KUNIT_EXPECT_EQ(test, kite_ring_phase(i + 4, 2), 0);
		KUNIT_EXPECT_EQ(test, kite_ring_phase(i + 8, 2), 1);
	}
	/* 2^32 is an even number of passes: the phase continues across wrap. */
	KUNIT_EXPECT_EQ(test, kite_ring_phase(U32_MAX, 2), 0);
	KUNIT_EXPECT_EQ(test, kite_ring_phase(U32_MAX + 1U, 2), 1);
	KUNIT_EXPECT_EQ(test, kite_ring_phase(U32_MAX - 255, 8), 0);
	KUNIT_EXPECT_EQ(test, kite_ring_phase(U32_MAX - 256, 8), 1);
}

static void kite_test_used(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kite_ring_used(0, 0), 0);
	KUNIT_EXPECT_EQ(test, kite_ring_used(5, 1), 4);
	KUNIT_EXPECT_EQ(test, kite_ring_used(2, U32_MAX - 1), 4);
	KUNIT_EXPECT_EQ(test, kite_ring_used(0, U32_MAX), 1);

	KUNIT_EXPECT_TRUE(test, kite_ring_pi_valid(4, 0, 2));
	KUNIT_EXPECT_FALSE(test, kite_ring_pi_valid(5, 0, 2));
	KUNIT_EXPECT_TRUE(test, kite_ring_pi_valid(2, U32_MAX - 1, 2));
	KUNIT_EXPECT_FALSE(test, kite_ring_pi_valid(3, U32_MAX - 1, 2));
	/* A producer behind the consumer is a huge distance: invalid. */
	KUNIT_EXPECT_FALSE(test, kite_ring_pi_valid(0, 1, 10));

	KUNIT_EXPECT_FALSE(test, kite_log_depth_valid(1, 10));
	KUNIT_EXPECT_TRUE(test, kite_log_depth_valid(KITE_MIN_LOG_DEPTH, 10));
	KUNIT_EXPECT_TRUE(test, kite_log_depth_valid(10, 10));
	KUNIT_EXPECT_FALSE(test, kite_log_depth_valid(11, 10));
}

static void kite_test_write_eqe(struct kite_eq *eq, u32 index, u32 data)
{
	struct kite_eqe *eqe = &eq->ring[kite_ring_slot(index, eq->log_depth)];

	eqe->data = cpu_to_le32(data);
	eqe->type = KITE_EVT_PORT_ACTIVE;
	eqe->flags = kite_ring_phase(index, eq->log_depth) ? KITE_EQE_PHASE : 0;
}

/* The EQ consumer follows the producer through several wraps. */
static void kite_test_eq_consumer(struct kunit *test)
{
	struct kite_eq eq = { .log_depth = 2 };
	struct kite_eqe *eqe;
	u32 pi = 0, i;

	eq.ring = kunit_kzalloc(test, sizeof(*eq.ring) << eq.log_depth,
				GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, eq.ring);

	/* Zeroed ring: nothing valid. */
	KUNIT_EXPECT_PTR_EQ(test, kite_eq_next(&eq), NULL);

	for (i = 0; i < 5; i++) {
		u32 n = (i % 4) + 1, j;

		for (j = 0; j < n; j++, pi++)
			kite_test_write_eqe(&eq, pi, pi);
		for (j = 0; j < n; j++) {
			eqe = kite_eq_next(&eq);
			KUNIT_ASSERT_NOT_NULL(test, eqe);
			KUNIT_EXPECT_EQ(test, le32_to_cpu(eqe->data),
					eq.ci - 1);
		}
		/* Entries from the previous pass carry the old phase. */
		KUNIT_EXPECT_PTR_EQ(test, kite_eq_next(&eq), NULL);
		KUNIT_EXPECT_EQ(test, eq.ci, pi);
	}

	/* Same across the 32-bit wrap of the free-running index. */
	eq.ci = U32_MAX - 1;
	pi = eq.ci;
	memset(eq.ring, 0, sizeof(*eq.ring) << eq.log_depth);
	for (i = 0; i < 4; i++)
		kite_test_write_eqe(&eq, pi + i, i);
	for (i = 0; i < 4; i++) {
		eqe = kite_eq_next(&eq);
		KUNIT_ASSERT_NOT_NULL(test, eqe);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(eqe->data), i);
	}
	KUNIT_EXPECT_EQ(test, eq.ci, 2);
	KUNIT_EXPECT_PTR_EQ(test, kite_eq_next(&eq), NULL);
}

static void kite_test_keys(struct kunit *test)
{
	u32 key = kite_key_make(0x123456, 0xab);

	KUNIT_EXPECT_EQ(test, key, 0x123456ab);
	KUNIT_EXPECT_EQ(test, kite_key_index(key), 0x123456);
	KUNIT_EXPECT_EQ(test, kite_key_variant(key), 0xab);
	KUNIT_EXPECT_EQ(test, kite_key_index(kite_key_make(0xffffff, 0xff)),
			0xffffff);
	KUNIT_EXPECT_EQ(test, kite_key_variant(kite_key_make(1, 0)), 0);
}

static void kite_test_doorbells(struct kunit *test)
{
	u64 db = kite_db_make(0x00abcdef, KITE_DB_EQ_ARM, 0xfedcba98);

	KUNIT_EXPECT_EQ(test, db, 0xfedcba9801abcdefULL);
	KUNIT_EXPECT_EQ(test, kite_db_num(db), 0x00abcdef);
	KUNIT_EXPECT_EQ(test, kite_db_flags(db), KITE_DB_EQ_ARM);
	KUNIT_EXPECT_EQ(test, kite_db_index(db), 0xfedcba98);
	/* Object numbers are 24 bits: higher bits do not leak into flags. */
	db = kite_db_make(0xff000001, 0, 0);
	KUNIT_EXPECT_EQ(test, kite_db_num(db), 1);
	KUNIT_EXPECT_EQ(test, kite_db_flags(db), 0);
	db = kite_db_make(3, KITE_DB_CQ_ARM_SOLICITED, U32_MAX);
	KUNIT_EXPECT_EQ(test, kite_db_flags(db), KITE_DB_CQ_ARM_SOLICITED);
	KUNIT_EXPECT_EQ(test, kite_db_index(db), U32_MAX);
}

static void kite_test_mtu(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kite_mtu_bytes(KITE_MTU_256), 256);
	KUNIT_EXPECT_EQ(test, kite_mtu_bytes(KITE_MTU_1024), 1024);
	KUNIT_EXPECT_EQ(test, kite_mtu_bytes(KITE_MTU_4096), 4096);
	KUNIT_EXPECT_EQ(test, kite_mtu_bytes(0), 0);
	KUNIT_EXPECT_EQ(test, kite_mtu_bytes(KITE_MTU_4096 + 1), 0);

	KUNIT_EXPECT_EQ(test, kite_mtu_from_eth(1500), KITE_MTU_1024);
	KUNIT_EXPECT_EQ(test, kite_mtu_from_eth(2047 + KITE_ROCE_MTU_OVERHEAD), KITE_MTU_1024);
	KUNIT_EXPECT_EQ(test, kite_mtu_from_eth(2048 + KITE_ROCE_MTU_OVERHEAD), KITE_MTU_2048);
	KUNIT_EXPECT_EQ(test, kite_mtu_from_eth(4096 + KITE_ROCE_MTU_OVERHEAD), KITE_MTU_4096);
	KUNIT_EXPECT_EQ(test, kite_mtu_from_eth(KITE_ETH_MAX_MTU),
			KITE_MTU_4096);
	KUNIT_EXPECT_EQ(test, kite_mtu_from_eth(KITE_ETH_MIN_MTU),
			KITE_MTU_256);

	KUNIT_EXPECT_EQ(test, kite_eth_rx_buf_len(1500), 1518);
	KUNIT_EXPECT_EQ(test, kite_eth_rx_buf_len(KITE_ETH_MAX_MTU),
			KITE_ETH_MAX_FRAME);
}

static struct kunit_case kite_ring_cases[] = {
	KUNIT_CASE(kite_test_slot),
	KUNIT_CASE(kite_test_phase),
	KUNIT_CASE(kite_test_used),
	KUNIT_CASE(kite_test_eq_consumer),
	KUNIT_CASE(kite_test_keys),
	KUNIT_CASE(kite_test_doorbells),
	KUNIT_CASE(kite_test_mtu),
	{}
};

static struct kunit_suite kite_ring_suite = {
	.name = "kite_ring",
	.test_cases = kite_ring_cases,
};

kunit_test_suite(kite_ring_suite);
