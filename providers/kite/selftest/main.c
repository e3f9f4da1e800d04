// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Provider self-test: runs the cases (see selftest.h).
 *
 *   kite-provider-selftest [GLOB]
 *
 * runs every case, or those whose name matches the shell glob GLOB. One
 * result line per case, "ok NAME" or "FAIL NAME: ..." after the failed
 * checks ("# NAME: file:line: condition"); last line of stdout
 * "kite-provider-selftest: N passed, N failed". Exit status 1 when a case
 * failed or GLOB selected none.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <fnmatch.h>

#include "selftest.h"

const char *cur_test;

static const struct {
	const char *name;
	int (*fn)(void);
} cases[] = {
	{ "post_send_layout", test_post_send_layout },
	{ "post_send_errors", test_post_send_errors },
	{ "recv", test_recv },
	{ "cq_wrap", test_cq_wrap },
	{ "cq_forget", test_cq_forget },
	{ "cq_stale_slot", test_cq_stale_slot },
	{ "cq_half_depth", test_cq_half_depth },
	{ "cq_old_ring", test_cq_old_ring },
	{ "two_qps", test_two_qps },
	{ "qp_table", test_qp_table },
	{ "ah_create", test_ah_create },
	{ "ah_errors", test_ah_errors },
	{ "ud_post_send", test_ud_post_send },
	{ "ud_post_errors", test_ud_post_errors },
	{ "ud_poll", test_ud_poll },
	{ "stress_one_thread", test_stress_one_thread },
	{ "stress_two_threads", test_stress_two_threads },
	{ "dbrec_post", test_dbrec_post },
	{ "dbrec_cq", test_dbrec_cq },
	{ "mw_post_layout", test_mw_post_layout },
	{ "mw_post_errors", test_mw_post_errors },
	{ "mw_bind_type1", test_mw_bind_type1 },
	{ "mw_poll", test_mw_poll },
	{ "cq_ex_create", test_cq_ex_create },
	{ "cq_ex_poll", test_cq_ex_poll },
	{ "cq_ex_same_as_poll_cq", test_cq_ex_same_as_poll_cq },
	{ "qp_ex_create", test_qp_ex_create },
	{ "qp_ex_same_wqes", test_qp_ex_same_wqes },
	{ "qp_ex_ud", test_qp_ex_ud },
	{ "qp_ex_errors", test_qp_ex_errors },
	{ "srq_post", test_srq_post },
	{ "srq_poll", test_srq_poll },
	{ "srq_refused", test_srq_refused },
};

int main(int argc, char **argv)
{
	const char *glob = argc > 1 ? argv[1] : NULL;
	int passed = 0, failed = 0;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (glob && fnmatch(glob, cases[i].name, 0))
			continue;
		cur_test = cases[i].name;
		if (cases[i].fn()) {
			passed++;
			printf("ok %s\n", cur_test);
		} else {
			failed++;
			printf("FAIL %s: a check failed (lines above)\n",
			       cur_test);
		}
		fflush(stdout);
	}
	if (glob && !passed && !failed)
		printf("# no case matches '%s'\n", glob);
	printf("kite-provider-selftest: %d passed, %d failed\n", passed,
	       failed);
	return failed || (!passed && !failed) ? 1 : 0;
}
