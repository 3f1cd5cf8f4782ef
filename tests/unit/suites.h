/* SPDX-License-Identifier: GPL-2.0-only */
/* The suites the runner in check_main.c collects, one per module. */
#ifndef KVMSTAT_TESTS_SUITES_H
#define KVMSTAT_TESTS_SUITES_H

#include <check.h>

Suite *options_suite(void);
Suite *filter_suite(void);
Suite *stats_suite(void);
Suite *arbiter_suite(void);
Suite *bpf_engine_suite(void);
Suite *snapshot_suite(void);
Suite *snap_keep_suite(void);
Suite *ui_text_suite(void);
Suite *tpformat_suite(void);
Suite *arch_suite(void);
Suite *arch_raw_suite(void);
Suite *breakdown_suite(void);
Suite *brk_engine_suite(void);
Suite *lat_engine_suite(void);
Suite *debugfs_suite(void);
Suite *vm_suite(void);
Suite *vm_ident_suite(void);
Suite *tracepoint_suite(void);
Suite *statsfd_suite(void);
Suite *units_suite(void);
Suite *qmp_suite(void);
Suite *openmetrics_suite(void);
Suite *json_suite(void);
Suite *provider_suite(void);
Suite *frontend_suite(void);
Suite *exporter_suite(void);
Suite *loop_suite(void);
Suite *handoff_suite(void);
Suite *vcpu_check_suite(void);
Suite *testlib_suite(void);
Suite *tui_keys_suite(void);
Suite *hashtab_suite(void);
Suite *fs_suite(void);
Suite *reading_suite(void);
Suite *errmsg_suite(void);
Suite *util_suite(void);
Suite *webconfig_suite(void);
Suite *webauth_suite(void);
Suite *connwatch_suite(void);
Suite *latency_suite(void);
Suite *recording_suite(void);
Suite *vcputime_suite(void);
Suite *mtree_suite(void);
Suite *numfmt_suite(void);
Suite *kbtf_suite(void);

#endif
