// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one Check runner: every module's suite, forked per test so a crash
 * fails one test and not the run.
 */
#include <check.h>
#include <stdlib.h>

#include "suites.h"

int main(void)
{
	SRunner *sr = srunner_create(options_suite());
	int failed;

	srunner_add_suite(sr, stats_suite());
	srunner_add_suite(sr, ui_text_suite());
	srunner_add_suite(sr, tpformat_suite());
	srunner_add_suite(sr, arch_suite());
	srunner_add_suite(sr, debugfs_suite());
	srunner_add_suite(sr, vm_suite());
	srunner_add_suite(sr, tracepoint_suite());
	srunner_add_suite(sr, statsfd_suite());
	srunner_add_suite(sr, units_suite());
	srunner_add_suite(sr, qmp_suite());
	srunner_add_suite(sr, openmetrics_suite());
	srunner_add_suite(sr, json_suite());
	srunner_add_suite(sr, bpf_count_suite());
	srunner_add_suite(sr, hashtab_suite());
	srunner_add_suite(sr, fs_suite());
	srunner_add_suite(sr, reading_suite());
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
