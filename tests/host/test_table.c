// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The device model's object tables (qemu/kite_table.c) at the sizes the
 * model advertises: lowest-free allocation above a floor, memory that
 * follows use (chunks allocated on first use, none after a clear), the
 * per-index generation, iteration, and the bound on what one allocation
 * reads whatever was allocated and freed before (counted in bitmap words,
 * not timed).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "kite_limits.h"
#include "kite_table.h"

typedef struct Obj {
	uint64_t a, b;
	uint32_t c;
} Obj;

/*
 * Words one allocation may read in a table of @size entries: the bitmap
 * of full chunks once, plus one chunk's entry bitmap for each of at most
 * two chunks (the floor's own chunk, then the first non-full one).
 */
static uint32_t cost_bound(uint32_t size)
{
	uint32_t chunks = (size + KITE_TABLE_CHUNK - 1) / KITE_TABLE_CHUNK;

	return (chunks + 63) / 64 + 1 + 2 * (KITE_TABLE_CHUNK / 64);
}

static void test_table_lazy_and_lowest_free(void **state)
{
	KiteTable t;
	uint32_t idx, i;
	Obj *o;

	(void)state;
	assert_true(kite_table_init(&t, sizeof(Obj), KITE_DEF_MAX_MR + 1));
	assert_int_equal(t.nchunks, 0);
	assert_null(kite_table_get(&t, 1));
	/* Index 0 is below the floor: never handed out. */
	for (i = 1; i <= 3 * KITE_TABLE_CHUNK; i++) {
		o = kite_table_alloc(&t, 1, &idx);
		assert_non_null(o);
		assert_int_equal(idx, i);
		assert_int_equal(o->a, 0);
		o->a = i;
	}
	assert_int_equal(t.nchunks, 4);	/* 769 entries from index 1 */
	assert_int_equal(t.used, 3 * KITE_TABLE_CHUNK);
	assert_null(kite_table_get(&t, 0));
	assert_null(kite_table_get(&t, 3 * KITE_TABLE_CHUNK + 1));
	assert_null(kite_table_get(&t, KITE_DEF_MAX_MR + 1));
	/* Freed indexes come back lowest first, zeroed, generation bumped. */
	kite_table_free(&t, 700);
	kite_table_free(&t, 5);
	assert_null(kite_table_get(&t, 5));
	assert_int_equal(kite_table_gen(&t, 5), 1);
	assert_int_equal(kite_table_gen(&t, 6), 0);
	o = kite_table_alloc(&t, 1, &idx);
	assert_int_equal(idx, 5);
	assert_int_equal(o->a, 0);
	assert_int_equal(kite_table_gen(&t, 5), 1);
	o = kite_table_alloc(&t, 1, &idx);
	assert_int_equal(idx, 700);
	o = kite_table_alloc(&t, 1, &idx);
	assert_int_equal(idx, 3 * KITE_TABLE_CHUNK + 1);
	/* Iteration visits exactly what is in use. */
	kite_table_free(&t, 2);
	assert_int_equal(kite_table_next(&t, 0), 1);
	assert_int_equal(kite_table_next(&t, 2), 3);
	assert_int_equal(kite_table_next(&t, 3 * KITE_TABLE_CHUNK + 2),
			 t.size);
	/* A clear gives every chunk back. */
	kite_table_clear(&t);
	assert_int_equal(t.nchunks, 0);
	assert_int_equal(t.used, 0);
	assert_null(kite_table_get(&t, 1));
	assert_int_equal(kite_table_next(&t, 0), t.size);
	kite_table_destroy(&t);
}

/* Every index of a table of the advertised size, then none left. */
static void test_table_full_size(void **state)
{
	const uint32_t size = KITE_DEF_MAX_MR + 1;
	uint32_t bound = cost_bound(size);
	uint32_t idx, i, worst = 0;
	KiteTable t;

	(void)state;
	assert_true(kite_table_init(&t, sizeof(Obj), size));
	for (i = 1; i < size; i++) {
		assert_non_null(kite_table_alloc(&t, 1, &idx));
		assert_int_equal(idx, i);
		if (t.last_cost > worst)
			worst = t.last_cost;
	}
	assert_null(kite_table_alloc(&t, 1, &idx));
	assert_true(t.last_cost <= bound);
	assert_int_equal(t.nchunks, t.ndir);
	/* Free the top index: the next allocation reads the bound at most. */
	kite_table_free(&t, size - 1);
	assert_non_null(kite_table_alloc(&t, 1, &idx));
	assert_int_equal(idx, size - 1);
	if (t.last_cost > worst)
		worst = t.last_cost;
	print_message("table of %u: worst allocation read %u words (bound %u)\n",
		      size, worst, bound);
	assert_true(worst <= bound);
	kite_table_destroy(&t);
}

/*
 * A hostile pattern: everything allocated, then every other index freed
 * from the top down and taken again, so that the lowest free index is
 * always far from the last one handed out.
 */
static void test_table_cost_bounded(void **state)
{
	const uint32_t size = KITE_DEF_MAX_QP + 2;
	uint32_t bound = cost_bound(size);
	uint32_t idx, i;
	KiteTable t;

	(void)state;
	assert_true(kite_table_init(&t, sizeof(Obj), size));
	while (kite_table_alloc(&t, 2, &idx))
		;
	assert_int_equal(t.used, size - 2);
	for (i = size - 1; i >= 2 && i < size; i -= 2) {
		kite_table_free(&t, i);
		assert_non_null(kite_table_alloc(&t, 2, &idx));
		assert_int_equal(idx, i);
		assert_true(t.last_cost <= bound);
	}
	/* The floor's own chunk: indexes below the floor stay untouched. */
	kite_table_free(&t, 2);
	assert_non_null(kite_table_alloc(&t, 2, &idx));
	assert_int_equal(idx, 2);
	assert_null(kite_table_get(&t, 0));
	assert_null(kite_table_get(&t, 1));
	/* alloc_at takes a free index below the floor, refuses a used one. */
	assert_non_null(kite_table_alloc_at(&t, 1));
	assert_null(kite_table_alloc_at(&t, 1));
	assert_null(kite_table_alloc_at(&t, size));
	kite_table_destroy(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_lazy_and_lowest_free),
		cmocka_unit_test(test_table_full_size),
		cmocka_unit_test(test_table_cost_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
