/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared by the layout tests: compare a structure's compiled layout with
 * the one the ABI intends, written as literal numbers in the tests.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_TEST_LAYOUT_H
#define KITE_TEST_LAYOUT_H

#include <stdalign.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct field_check {
	const char *name;
	size_t off;		/* offsetof() as compiled */
	size_t size;		/* sizeof the member as compiled */
	size_t exp_off;		/* what the ABI says */
	size_t exp_size;
};

/* Inside a LAYOUT_TEST body, T is the structure under test. */
#define FLD(field, off, size) \
	{ #field, offsetof(T, field), sizeof(((T *)0)->field), (off), (size) }

/*
 * check_layout() - compare a structure's compiled layout with the ABI
 * @tiled: the listed top-level fields must cover the structure from byte 0
 *	   to its end with no gap and no overlap (false only for unions)
 */
static inline void check_layout(const char *type, size_t size, size_t exp_size,
			 size_t align, size_t exp_align,
			 const struct field_check *f, size_t n, bool tiled)
{
	size_t cursor = 0;
	size_t i;
	int bad = 0;

	if (size != exp_size) {
		print_error("struct %s: sizeof %zu, ABI says %zu\n",
			    type, size, exp_size);
		bad++;
	}
	if (align != exp_align) {
		print_error("struct %s: alignment %zu, ABI says %zu\n",
			    type, align, exp_align);
		bad++;
	}
	for (i = 0; i < n; i++) {
		if (f[i].off != f[i].exp_off) {
			print_error("struct %s: .%s at offset %zu, ABI says %zu\n",
				    type, f[i].name, f[i].off, f[i].exp_off);
			bad++;
		}
		if (f[i].size != f[i].exp_size) {
			print_error("struct %s: .%s is %zu bytes, ABI says %zu\n",
				    type, f[i].name, f[i].size, f[i].exp_size);
			bad++;
		}
		/* scalars (1, 2, 4, 8 bytes) sit at a multiple of their size */
		if (f[i].exp_size <= 8 &&
		    (f[i].exp_size & (f[i].exp_size - 1)) == 0 &&
		    f[i].exp_off % f[i].exp_size) {
			print_error("struct %s: .%s (%zu bytes) not naturally aligned at %zu\n",
				    type, f[i].name, f[i].exp_size, f[i].exp_off);
			bad++;
		}
		/* uAPI rule: reserved_XXX is named after its bit offset (hex) */
		if (!strncmp(f[i].name, "reserved_", 9) &&
		    strtoul(f[i].name + 9, NULL, 16) != f[i].exp_off * 8) {
			print_error("struct %s: .%s is at bit offset %#zx\n",
				    type, f[i].name, f[i].exp_off * 8);
			bad++;
		}
		/* nested views ("out.addr", "out[5]") do not take part in tiling */
		if (tiled && !strpbrk(f[i].name, ".[")) {
			if (f[i].exp_off != cursor) {
				print_error("struct %s: gap or overlap before .%s (%zu, expected %zu)\n",
					    type, f[i].name, f[i].exp_off, cursor);
				bad++;
			}
			cursor = f[i].exp_off + f[i].exp_size;
		} else if (f[i].exp_off + f[i].exp_size > exp_size) {
			print_error("struct %s: .%s ends past the structure\n",
				    type, f[i].name);
			bad++;
		}
	}
	if (tiled && cursor != exp_size) {
		print_error("struct %s: fields end at %zu, structure is %zu (padding?)\n",
			    type, cursor, exp_size);
		bad++;
	}
	if (bad)
		fail_msg("struct %s: %d layout mismatch(es)", type, bad);
}

#define LAYOUT_TEST_X(type, exp_size, exp_align, tiled, ...)		\
static void test_layout_##type(void **state)				\
{									\
	typedef struct type T;						\
	static const struct field_check f[] = { __VA_ARGS__ };		\
	(void)state;							\
	check_layout(#type, sizeof(T), (exp_size), alignof(T),		\
		     (exp_align), f, ARRAY_SIZE(f), (tiled));		\
}
#define LAYOUT_TEST(type, exp_size, exp_align, ...) \
	LAYOUT_TEST_X(type, exp_size, exp_align, true, __VA_ARGS__)

/* Fail for every structure of @header (names in @in_header) not in @tested. */
static inline void check_all_listed(const char *header,
				    const char *const *in_header, size_t n_in,
				    const char *const *tested, size_t n_tested)
{
	size_t i, j;

	assert_true(n_in >= 1);
	for (i = 0; i < n_in; i++) {
		for (j = 0; j < n_tested; j++)
			if (!strcmp(in_header[i], tested[j]))
				break;
		if (j == n_tested)
			fail_msg("struct %s in %s has no layout test",
				 in_header[i], header);
	}
}

#endif /* KITE_TEST_LAYOUT_H */
