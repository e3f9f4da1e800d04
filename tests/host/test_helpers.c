// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The inline helpers at the end of include/kite/kite_hw.h: keys, doorbell
 * values, ring indices and phases (including 32-bit wrap-around), depth
 * validation and path MTU conversions. Expected values are computed by hand
 * from the ABI text, not by calling the helpers a second time.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <kite/kite_hw.h>
#include "kite_limits.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Keys: index in bits 31:8, variant in bits 7:0. */
static void test_key_known_values(void **state)
{
	(void)state;
	assert_int_equal(kite_key_make(0, 0), 0x00000000);
	assert_int_equal(kite_key_make(1, 0), 0x00000100);
	assert_int_equal(kite_key_make(0, 0xff), 0x000000ff);
	assert_int_equal(kite_key_make(0x123456, 0x78), 0x12345678);
	assert_int_equal(kite_key_make(0xffffff, 0xff), 0xffffffff);
	assert_int_equal(kite_key_index(0x12345678), 0x123456);
	assert_int_equal(kite_key_variant(0x12345678), 0x78);
	assert_int_equal(kite_key_index(0xffffffff), 0xffffff);
	assert_int_equal(kite_key_variant(0xffffffff), 0xff);
}

static void test_key_round_trip(void **state)
{
	static const __u32 idx[] = { 0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0xfff,
				     0x1000, 0x7fffff, 0x800000, 0xfffffe,
				     0xffffff };
	static const __u8 var[] = { 0, 1, 0x7f, 0x80, 0xfe, 0xff };
	size_t i, j;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(idx); i++) {
		for (j = 0; j < ARRAY_SIZE(var); j++) {
			__u32 key = kite_key_make(idx[i], var[j]);

			assert_int_equal(kite_key_index(key), idx[i]);
			assert_int_equal(kite_key_variant(key), var[j]);
			assert_int_equal(key, idx[i] * 256u + var[j]);
		}
	}
	/* Bumping only the variant changes the key but keeps its index. */
	assert_int_not_equal(kite_key_make(42, 1), kite_key_make(42, 2));
	assert_int_equal(kite_key_index(kite_key_make(42, 1)),
			 kite_key_index(kite_key_make(42, 2)));
}

/* The index is 24 bits: higher bits are shifted out, never into the variant. */
static void test_key_index_overflow(void **state)
{
	(void)state;
	assert_int_equal(kite_key_make(0x1000005, 0x11), 0x00000511);
	assert_int_equal(kite_key_index(kite_key_make(0x1000005, 0x11)), 5);
	assert_int_equal(kite_key_variant(kite_key_make(0xffffffff, 0x22)), 0x22);
}

/* Doorbells: num 23:0, flags 31:24, index 63:32. */
static void test_db_known_values(void **state)
{
	(void)state;
	assert_true(kite_db_make(0, 0, 0) == 0);
	assert_true(kite_db_make(1, 0, 0) == 0x1ull);
	assert_true(kite_db_make(0, 1, 0) == 0x01000000ull);
	assert_true(kite_db_make(0, 0, 1) == 0x100000000ull);
	assert_true(kite_db_make(0x123456, 0xab, 0xdeadbeef) ==
		    0xdeadbeefab123456ull);
	assert_true(kite_db_make(0xffffff, 0xff, 0xffffffff) ==
		    0xffffffffffffffffull);
	assert_true(kite_db_make(7, KITE_DB_EQ_ARM, 9) == 0x0000000901000007ull);
	assert_true(kite_db_make(3, KITE_DB_CQ_ARM_SOLICITED, 0) ==
		    0x0000000002000003ull);
	assert_int_equal(kite_db_num(0xdeadbeefab123456ull), 0x123456);
	assert_int_equal(kite_db_flags(0xdeadbeefab123456ull), 0xab);
	assert_int_equal(kite_db_index(0xdeadbeefab123456ull), 0xdeadbeef);
}

static void test_db_round_trip(void **state)
{
	static const __u32 num[] = { 0, 1, 0xff, 0x100, 0x7fffff, 0xffffff };
	static const __u8 flg[] = { 0, KITE_DB_CQ_ARM_NEXT,
				    KITE_DB_CQ_ARM_SOLICITED, 0x80, 0xff };
	static const __u32 idx[] = { 0, 1, 0x7fffffff, 0x80000000,
				     0xfffffffe, 0xffffffff };
	size_t i, j, k;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(num); i++)
		for (j = 0; j < ARRAY_SIZE(flg); j++)
			for (k = 0; k < ARRAY_SIZE(idx); k++) {
				__u64 db = kite_db_make(num[i], flg[j], idx[k]);

				assert_int_equal(kite_db_num(db), num[i]);
				assert_int_equal(kite_db_flags(db), flg[j]);
				assert_int_equal(kite_db_index(db), idx[k]);
			}
}

/* An object number wider than 24 bits is masked, not smeared into flags. */
static void test_db_num_masking(void **state)
{
	__u64 db;

	(void)state;
	db = kite_db_make(0x12345678, 0, 0);
	assert_int_equal(kite_db_num(db), 0x345678);
	assert_int_equal(kite_db_flags(db), 0);
	assert_int_equal(kite_db_index(db), 0);
	assert_true(db == 0x345678ull);

	db = kite_db_make(0xffffffff, 0x5a, 0x1234);
	assert_int_equal(kite_db_num(db), 0xffffff);
	assert_int_equal(kite_db_flags(db), 0x5a);
	assert_int_equal(kite_db_index(db), 0x1234);

	db = kite_db_make(0x01000000, KITE_DB_EQ_ARM, 0);
	assert_int_equal(kite_db_num(db), 0);
	assert_int_equal(kite_db_flags(db), KITE_DB_EQ_ARM);
}

static void test_gid_mcast(void **state)
{
	static const __u8 v4[16] = {
		[10] = 0xff, [11] = 0xff, 239, 0x81, 2, 3
	};
	static const __u8 v6[16] = {
		0xff, 0x0e, [12] = 0x9a, 0xbc, 0xde, 0xf0
	};
	__u8 gid[16], mac[6];

	(void)state;
	assert_true(kite_gid_is_mcast(v4));
	assert_true(kite_gid_is_mcast(v6));
	kite_gid_mcast_mac(v4, mac);
	assert_memory_equal(mac, "\x01\x00\x5e\x01\x02\x03", 6);
	kite_gid_mcast_mac(v6, mac);
	assert_memory_equal(mac, "\x33\x33\x9a\xbc\xde\xf0", 6);
	/* 223.x and 240.x are unicast; so is a v4-mapped prefix off by one. */
	memcpy(gid, v4, 16);
	gid[12] = 223;
	assert_false(kite_gid_is_mcast(gid));
	gid[12] = 240;
	assert_false(kite_gid_is_mcast(gid));
	memcpy(gid, v4, 16);
	gid[11] = 0xfe;
	assert_false(kite_gid_is_mcast(gid));
	memcpy(gid, v6, 16);
	gid[0] = 0xfe;
	assert_false(kite_gid_is_mcast(gid));
}

static void test_ring_slot(void **state)
{
	(void)state;
	assert_int_equal(kite_ring_slot(0, 2), 0);
	assert_int_equal(kite_ring_slot(3, 2), 3);
	assert_int_equal(kite_ring_slot(4, 2), 0);
	assert_int_equal(kite_ring_slot(5, 2), 1);
	assert_int_equal(kite_ring_slot(1023, 10), 1023);
	assert_int_equal(kite_ring_slot(1024, 10), 0);
	assert_int_equal(kite_ring_slot(0x12345, 8), 0x45);
	assert_int_equal(kite_ring_slot(0x12345, 16), 0x2345);
	/* 32-bit wrap: the last index is the last slot, the next one slot 0. */
	assert_int_equal(kite_ring_slot(0xffffffff, 2), 3);
	assert_int_equal(kite_ring_slot(0xffffffff, 10), 1023);
	assert_int_equal(kite_ring_slot(0xffffffff, 16), 0xffff);
	assert_int_equal(kite_ring_slot(0xffffffffu + 1u, 10), 0);
	assert_int_equal(kite_ring_slot(0xffffffff, 31), 0x7fffffff);
}

static void test_ring_phase(void **state)
{
	__u32 i;
	__u8 ld;

	(void)state;
	/* First pass writes 1, second 0, third 1 again. */
	assert_int_equal(kite_ring_phase(0, 2), 1);
	assert_int_equal(kite_ring_phase(3, 2), 1);
	assert_int_equal(kite_ring_phase(4, 2), 0);
	assert_int_equal(kite_ring_phase(7, 2), 0);
	assert_int_equal(kite_ring_phase(8, 2), 1);
	assert_int_equal(kite_ring_phase(1023, 10), 1);
	assert_int_equal(kite_ring_phase(1024, 10), 0);
	assert_int_equal(kite_ring_phase(2048, 10), 1);
	/* Phase is constant within a pass and flips at every pass boundary. */
	for (ld = KITE_MIN_LOG_DEPTH; ld <= 6; ld++)
		for (i = 1; i < (1u << (ld + 3)); i++) {
			if (kite_ring_slot(i, ld) == 0)
				assert_int_not_equal(kite_ring_phase(i, ld),
						     kite_ring_phase(i - 1, ld));
			else
				assert_int_equal(kite_ring_phase(i, ld),
						 kite_ring_phase(i - 1, ld));
		}
	/*
	 * 32-bit wrap: 2^32 is an even number of passes for any depth, so the
	 * pass ending at 0xffffffff has phase 0 and index 0 (the next one)
	 * starts a pass with phase 1: the alternation survives the wrap.
	 */
	for (ld = KITE_MIN_LOG_DEPTH; ld <= 31; ld++) {
		assert_int_equal(kite_ring_phase(0xffffffff, ld), 0);
		assert_int_equal(kite_ring_phase(0xffffffffu + 1u, ld), 1);
		assert_int_equal(kite_ring_phase(0xffffffffu - (1u << ld), ld), 1);
	}
}

static void test_ring_used(void **state)
{
	(void)state;
	assert_int_equal(kite_ring_used(0, 0), 0);
	assert_int_equal(kite_ring_used(5, 3), 2);
	assert_int_equal(kite_ring_used(0xffffffff, 0xffffffff), 0);
	/* pi wrapped past 0xffffffff, ci not yet. */
	assert_int_equal(kite_ring_used(0, 0xffffffff), 1);
	assert_int_equal(kite_ring_used(2, 0xfffffffe), 4);
	assert_int_equal(kite_ring_used(0x10, 0xfffffff0), 0x20);
	/* pi behind ci (a bogus doorbell) is a huge distance, not negative. */
	assert_int_equal(kite_ring_used(0, 1), 0xffffffff);
}

static void test_ring_pi_valid(void **state)
{
	(void)state;
	/* Depth 4: 0..4 outstanding entries are fine, 5 are not. */
	assert_true(kite_ring_pi_valid(0, 0, 2));
	assert_true(kite_ring_pi_valid(4, 0, 2));
	assert_false(kite_ring_pi_valid(5, 0, 2));
	assert_true(kite_ring_pi_valid(104, 100, 2));
	assert_false(kite_ring_pi_valid(105, 100, 2));
	/* Across the 32-bit wrap. */
	assert_true(kite_ring_pi_valid(2, 0xfffffffe, 2));
	assert_false(kite_ring_pi_valid(3, 0xfffffffe, 2));
	assert_true(kite_ring_pi_valid(0, 0xffffffff, 2));
	assert_true(kite_ring_pi_valid(0x3ff, 0xffffffff, 10));
	assert_false(kite_ring_pi_valid(0x400, 0xffffffff, 10));
	/* pi behind ci is never valid. */
	assert_false(kite_ring_pi_valid(0, 1, 2));
	assert_false(kite_ring_pi_valid(0xffffffff, 0, 16));
	assert_false(kite_ring_pi_valid(0x7fffffff, 0x80000000, 30));
}

static void test_log_depth_valid(void **state)
{
	(void)state;
	assert_false(kite_log_depth_valid(0, KITE_DEF_MAX_AQ_LOG_DEPTH));
	assert_false(kite_log_depth_valid(1, KITE_DEF_MAX_AQ_LOG_DEPTH));
	assert_true(kite_log_depth_valid(2, KITE_DEF_MAX_AQ_LOG_DEPTH));
	assert_true(kite_log_depth_valid(6, KITE_DEF_MAX_AQ_LOG_DEPTH));
	assert_true(kite_log_depth_valid(10, 10));
	assert_false(kite_log_depth_valid(11, 10));
	assert_true(kite_log_depth_valid(16, KITE_DEF_MAX_EQ_LOG_DEPTH));
	assert_false(kite_log_depth_valid(17, KITE_DEF_MAX_EQ_LOG_DEPTH));
	assert_false(kite_log_depth_valid(0xffffffff, KITE_DEF_MAX_EQ_LOG_DEPTH));
	assert_false(kite_log_depth_valid(0x100 + 4, 10));	/* not truncated to u8 */
	/* A maximum below the minimum admits nothing. */
	assert_false(kite_log_depth_valid(1, 1));
	assert_false(kite_log_depth_valid(2, 1));
}

static void test_wqe_strides(void **state)
{
	(void)state;
	/* The header and the UD segment alone take 56 bytes: 64-byte WQEs. */
	assert_int_equal(KITE_SQ_WQE_FIXED, 56);
	assert_int_equal(kite_sq_log_stride(0, 0), KITE_SQ_MIN_LOG_STRIDE);
	assert_int_equal(kite_sq_log_stride(2, 0), 7);	/* 56 + 32 */
	assert_int_equal(kite_sq_log_stride(8, 0), 8);	/* 56 + 128 */
	assert_int_equal(kite_sq_log_stride(1, 256), 9);	/* inline wins */
	assert_int_equal(kite_sq_log_stride(28, 0), 9);	/* 56 + 448 = 504 */
	assert_int_equal(kite_sq_log_stride(29, 0), 10);	/* too big */
	/* Huge requests do not wrap around to a small stride. */
	assert_true(kite_sq_log_stride(0xffffffff, 0) > KITE_SQ_MAX_LOG_STRIDE);
	assert_true(kite_sq_log_stride(0, 0xffffffff) > KITE_SQ_MAX_LOG_STRIDE);
	assert_int_equal(kite_rq_log_stride(0), KITE_RQ_MIN_LOG_STRIDE);
	assert_int_equal(kite_rq_log_stride(1), 5);
	assert_int_equal(kite_rq_log_stride(8), 8);
	assert_true(kite_rq_log_stride(0xffffffff) > KITE_RQ_MAX_LOG_STRIDE);
	/* What a stride holds is what the sizing asked for, at least. */
	assert_int_equal(kite_sq_room(6), 8);
	assert_int_equal(kite_sq_room(9) / sizeof(struct kite_sge), 28);
	assert_int_equal(kite_rq_room(8) / sizeof(struct kite_sge), 15);
}

static void test_cqe_is_recv(void **state)
{
	(void)state;
	assert_false(kite_cqe_is_recv(KITE_CQE_SEND));
	assert_false(kite_cqe_is_recv(KITE_CQE_WRITE));
	assert_false(kite_cqe_is_recv(KITE_CQE_READ));
	assert_false(kite_cqe_is_recv(KITE_CQE_CMP_SWP));
	assert_false(kite_cqe_is_recv(KITE_CQE_FETCH_ADD));
	assert_true(kite_cqe_is_recv(KITE_CQE_RECV));
	assert_true(kite_cqe_is_recv(KITE_CQE_RECV_WRITE_IMM));
}

static void test_mtu_bytes(void **state)
{
	(void)state;
	assert_int_equal(kite_mtu_bytes(KITE_MTU_256), 256);
	assert_int_equal(kite_mtu_bytes(KITE_MTU_512), 512);
	assert_int_equal(kite_mtu_bytes(KITE_MTU_1024), 1024);
	assert_int_equal(kite_mtu_bytes(KITE_MTU_2048), 2048);
	assert_int_equal(kite_mtu_bytes(KITE_MTU_4096), 4096);
	assert_int_equal(kite_mtu_bytes(0), 0);
	assert_int_equal(kite_mtu_bytes(6), 0);
	assert_int_equal(kite_mtu_bytes(0xff), 0);
	assert_int_equal(kite_mtu_bytes(0xffffffff), 0);
}

/*
 * The header's rule: the largest path MTU whose payload plus 96 bytes of
 * headers (IPv6 40, UDP 8, BTH 12, XRCETH 4, AtomicETH 28, ICRC 4, as
 * ib_core's iboe_get_mtu counts them) fits the Ethernet MTU, never below 256.
 */
static void test_mtu_from_eth(void **state)
{
	static const struct { __u32 eth, mtu; } c[] = {
		{ 9000, KITE_MTU_4096 },
		{ 4192, KITE_MTU_4096 },	/* 4096 + 96 exactly */
		{ 4191, KITE_MTU_2048 },
		{ 4096, KITE_MTU_2048 },
		{ 2144, KITE_MTU_2048 },	/* 2048 + 96 */
		{ 2143, KITE_MTU_1024 },
		{ 1500, KITE_MTU_1024 },
		{ 1120, KITE_MTU_1024 },	/* 1024 + 96 */
		{ 1119, KITE_MTU_512 },
		{ 1024, KITE_MTU_512 },
		{ 608, KITE_MTU_512 },		/* 512 + 96 */
		{ 607, KITE_MTU_256 },
		{ 576, KITE_MTU_256 },
		{ 352, KITE_MTU_256 },		/* 256 + 96 */
		{ KITE_ETH_MIN_MTU, KITE_MTU_256 },	/* floor */
		{ 0, KITE_MTU_256 },		/* floor */
		{ 0xffffffff, KITE_MTU_4096 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		__u32 got = kite_mtu_from_eth(c[i].eth);

		if (got != c[i].mtu)
			fail_msg("kite_mtu_from_eth(%u) = %u, expected %u",
				 c[i].eth, got, c[i].mtu);
	}
}

/* Over the whole valid Ethernet MTU range: the result fits and is maximal. */
static void test_mtu_from_eth_property(void **state)
{
	const __u32 overhead = 96;
	__u32 eth;

	(void)state;
	for (eth = KITE_ETH_MIN_MTU; eth <= KITE_ETH_MAX_MTU; eth++) {
		__u32 mtu = kite_mtu_from_eth(eth);

		if (mtu < KITE_MTU_256 || mtu > KITE_MTU_4096)
			fail_msg("eth %u: %u is not a path MTU", eth, mtu);
		if (mtu > KITE_MTU_256 && kite_mtu_bytes(mtu) + overhead > eth)
			fail_msg("eth %u: path MTU %u does not fit", eth,
				 kite_mtu_bytes(mtu));
		if (mtu < KITE_MTU_4096 &&
		    kite_mtu_bytes(mtu + 1) + overhead <= eth)
			fail_msg("eth %u: path MTU %u is not the largest", eth,
				 kite_mtu_bytes(mtu));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_known_values),
		cmocka_unit_test(test_key_round_trip),
		cmocka_unit_test(test_key_index_overflow),
		cmocka_unit_test(test_db_known_values),
		cmocka_unit_test(test_db_round_trip),
		cmocka_unit_test(test_db_num_masking),
		cmocka_unit_test(test_ring_slot),
		cmocka_unit_test(test_ring_phase),
		cmocka_unit_test(test_ring_used),
		cmocka_unit_test(test_ring_pi_valid),
		cmocka_unit_test(test_log_depth_valid),
		cmocka_unit_test(test_wqe_strides),
		cmocka_unit_test(test_cqe_is_recv),
		cmocka_unit_test(test_mtu_bytes),
		cmocka_unit_test(test_gid_mcast),
		cmocka_unit_test(test_mtu_from_eth),
		cmocka_unit_test(test_mtu_from_eth_property),
	};

	return cmocka_run_group_tests_name("abi_helpers", tests, NULL, NULL);
}
