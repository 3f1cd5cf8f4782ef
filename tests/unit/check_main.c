// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one Check runner: every module's suite, forked per test so a crash
 * fails one test and not the run. Checks the host cannot run say SKIP
 * (testlib.h); the runner lists them again at the end.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "suites.h"
#include "testlib.h"
#include "util.h"

#ifdef __SANITIZE_ADDRESS__
/* Under AddressSanitizer too, a failed allocation returns NULL to
 * xmalloc, whose dying the util suite checks. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}
#endif

int main(void)
{
	SRunner *sr;
	int failed;

	/* the allocation policy the program runs with (main.c) */
	json_set_alloc_funcs(xmalloc, free);
	sr = srunner_create(options_suite());
	srunner_add_suite(sr, filter_suite());

	srunner_add_suite(sr, stats_suite());
	srunner_add_suite(sr, arbiter_suite());
	srunner_add_suite(sr, bpf_engine_suite());
	srunner_add_suite(sr, snapshot_suite());
	srunner_add_suite(sr, snap_keep_suite());
	srunner_add_suite(sr, ui_text_suite());
	srunner_add_suite(sr, tpformat_suite());
	srunner_add_suite(sr, arch_suite());
	srunner_add_suite(sr, debugfs_suite());
	srunner_add_suite(sr, vm_suite());
	srunner_add_suite(sr, vm_ident_suite());
	srunner_add_suite(sr, tracepoint_suite());
	srunner_add_suite(sr, statsfd_suite());
	srunner_add_suite(sr, units_suite());
	srunner_add_suite(sr, qmp_suite());
	srunner_add_suite(sr, openmetrics_suite());
	srunner_add_suite(sr, json_suite());
	srunner_add_suite(sr, provider_suite());
	srunner_add_suite(sr, frontend_suite());
	srunner_add_suite(sr, exporter_suite());
	srunner_add_suite(sr, loop_suite());
	srunner_add_suite(sr, handoff_suite());
	srunner_add_suite(sr, vcpu_check_suite());
	srunner_add_suite(sr, testlib_suite());
	srunner_add_suite(sr, tui_keys_suite());
	srunner_add_suite(sr, hashtab_suite());
	srunner_add_suite(sr, fs_suite());
	srunner_add_suite(sr, reading_suite());
	srunner_add_suite(sr, errmsg_suite());
	srunner_add_suite(sr, util_suite());
	srunner_add_suite(sr, webconfig_suite());
	srunner_add_suite(sr, webauth_suite());
	srunner_add_suite(sr, connwatch_suite());
	srunner_add_suite(sr, latency_suite());
	srunner_add_suite(sr, recording_suite());
	srunner_add_suite(sr, vcputime_suite());
	srunner_add_suite(sr, mtree_suite());
	srunner_add_suite(sr, numfmt_suite());
	srunner_add_suite(sr, kbtf_suite());
	srunner_add_suite(sr, arch_raw_suite());
	srunner_add_suite(sr, breakdown_suite());
	srunner_add_suite(sr, brk_engine_suite());
	srunner_add_suite(sr, lat_engine_suite());
	srunner_set_fork_status(sr, CK_FORK);
	test_skip_init();
	srunner_run_all(sr, CK_NORMAL);
	test_skip_summary(stdout);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
