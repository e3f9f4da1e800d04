// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Linked into every host test program: runs only the test cases whose name
 * matches the glob in KITE_CMOCKA_FILTER ('*' and '?', cmocka's own
 * matching), so that run-tests.sh can select cases without each program's
 * main() knowing about it. cmocka 1.1.5 reads no such variable itself.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

__attribute__((constructor)) static void kite_cmocka_select(void)
{
	const char *glob = getenv("KITE_CMOCKA_FILTER");

	if (glob && *glob)
		cmocka_set_test_filter(glob);
}
