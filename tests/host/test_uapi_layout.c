// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Layout of the uverbs udata structures in include/uapi/rdma/kite-abi.h,
 * shared by kite.ko and the rdma-core provider. Literal offsets as in
 * test_abi_layout.c; besides, the header's own rules: every structure is a
 * multiple of 8 bytes and reserved_XXX is named after its bit offset.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <rdma/kite-abi.h>

#include "layout.h"

LAYOUT_TEST(kite_alloc_ucontext_resp, 64, 8,
	FLD(comp_mask, 0, 4),
	FLD(uctx, 4, 4),
	FLD(db_mmap_offset, 8, 8),
	FLD(db_size, 16, 4),
	FLD(dev_abi_version, 20, 4),
	FLD(max_qp, 24, 4),
	FLD(max_cq, 28, 4),
	FLD(max_cqe, 32, 4),
	FLD(max_qp_wr, 36, 4),
	FLD(max_sge, 40, 4),
	FLD(max_inline, 44, 4),
	FLD(max_rd_atom, 48, 4),
	FLD(cap_flags, 52, 4),
	FLD(reserved_1c0, 56, 8))

LAYOUT_TEST(kite_alloc_pd_resp, 8, 4,
	FLD(comp_mask, 0, 4),
	FLD(pdn, 4, 4))

LAYOUT_TEST(kite_create_cq_req, 32, 8,
	FLD(comp_mask, 0, 4),
	FLD(reserved_20, 4, 4),
	FLD(buf_va, 8, 8),
	FLD(buf_len, 16, 8),
	FLD(dbrec_va, 24, 8))

LAYOUT_TEST(kite_create_cq_resp, 16, 4,
	FLD(comp_mask, 0, 4),
	FLD(cqn, 4, 4),
	FLD(depth, 8, 4),
	FLD(reserved_60, 12, 4))

LAYOUT_TEST(kite_resize_cq_req, 24, 8,
	FLD(comp_mask, 0, 4),
	FLD(reserved_20, 4, 4),
	FLD(buf_va, 8, 8),
	FLD(buf_len, 16, 8))

LAYOUT_TEST(kite_create_qp_req, 48, 8,
	FLD(comp_mask, 0, 4),
	FLD(reserved_20, 4, 4),
	FLD(sq_va, 8, 8),
	FLD(sq_len, 16, 8),
	FLD(rq_va, 24, 8),
	FLD(rq_len, 32, 8),
	FLD(dbrec_va, 40, 8))

LAYOUT_TEST(kite_create_qp_resp, 24, 4,
	FLD(comp_mask, 0, 4),
	FLD(qpn, 4, 4),
	FLD(sq_depth, 8, 4),
	FLD(sq_stride, 12, 4),
	FLD(rq_depth, 16, 4),
	FLD(rq_stride, 20, 4))

LAYOUT_TEST(kite_create_ah_resp, 16, 4,
	FLD(comp_mask, 0, 4),
	FLD(dmac, 4, 6),
	FLD(net_type, 10, 1),
	FLD(reserved_58, 11, 1),
	FLD(reserved_60, 12, 4))

LAYOUT_TEST(kite_create_srq_req, 24, 8,
	FLD(comp_mask, 0, 4),
	FLD(reserved_20, 4, 4),
	FLD(buf_va, 8, 8),
	FLD(buf_len, 16, 8))

LAYOUT_TEST(kite_create_srq_resp, 16, 4,
	FLD(comp_mask, 0, 4),
	FLD(srqn, 4, 4),
	FLD(depth, 8, 4),
	FLD(stride, 12, 4))

/* Every structure with a layout test above. */
#define LAYOUT_LIST(X) \
	X(kite_alloc_ucontext_resp) \
	X(kite_alloc_pd_resp) \
	X(kite_create_cq_req) \
	X(kite_create_cq_resp) \
	X(kite_resize_cq_req) \
	X(kite_create_qp_req) \
	X(kite_create_qp_resp) \
	X(kite_create_ah_resp) \
	X(kite_create_srq_req) \
	X(kite_create_srq_resp)

/* Sizes are multiples of 8, so 32- and 64-bit user space agree. */
static void test_uapi_sizes_multiple_of_8(void **state)
{
#define X(type) { #type, sizeof(struct type) },
	static const struct { const char *name; size_t size; } s[] = {
		LAYOUT_LIST(X)
	};
#undef X
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(s); i++)
		if (s[i].size % 8)
			fail_msg("struct %s is %zu bytes, not a multiple of 8",
				 s[i].name, s[i].size);
	assert_int_equal(KITE_UVERBS_ABI_VERSION, 1);
}

/* uapi_structs.h: every "struct kite_* {" of kite-abi.h (see Makefile). */
static void test_uapi_every_struct_listed(void **state)
{
#define X(type) #type,
	static const char *const tested[] = { LAYOUT_LIST(X) };
#undef X
	static const char *const in_header[] = {
#include "uapi_structs.h"
	};
	(void)state;
	check_all_listed("kite-abi.h", in_header, ARRAY_SIZE(in_header),
			 tested, ARRAY_SIZE(tested));
}

int main(void)
{
#define X(type) cmocka_unit_test(test_layout_##type),
	const struct CMUnitTest tests[] = {
		LAYOUT_LIST(X)
		cmocka_unit_test(test_uapi_sizes_multiple_of_8),
		cmocka_unit_test(test_uapi_every_struct_listed),
	};
#undef X

	return cmocka_run_group_tests_name("uapi_layout", tests, NULL, NULL);
}
