// SPDX-License-Identifier: GPL-2.0-only
/*
 * --vcpu N against what the VM has: the vCPUs counted, or before any
 * count the ones a fake debugfs tree shows; the usage line lists them.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/vcpu_check.h"
#include "errmsg.h"
#include "suites.h"

START_TEST(test_unset)
{
	struct options o = { .vcpu = -1, .pid = 100 };
	struct stats s;
	struct errmsg err = { "" };

	stats_init(&s, false);
	ck_assert_int_eq(vcpu_check(&s, &o, o.pid, &err), 0);
	ck_assert_str_eq(err.text, "");
	stats_free(&s);
}
END_TEST

/* Counted vCPUs 0, 1 and 2 of VM 100 (and 5 of another VM). */
START_TEST(test_counted)
{
	struct options o = { .pid = 100,
			     .proc_root = "/nonexistent-proc",
			     .debugfs_root = "/nonexistent-debugfs" };
	struct stats s;
	struct errmsg err = { "" };
	int f;

	stats_init(&s, false);
	f = field_table_intern(&s.fields, "exits", -1, FIELD_CUMULATIVE, "test");
	for (int v = 2; v >= 0; v--)
		sample_set_push(&s.set, f, 100, v, 0, 10, 0);
	sample_set_push(&s.set, f, 200, 5, 0, 10, 0);
	stats_update(&s, 1000000000ull);
	for (o.vcpu = 0; o.vcpu <= 2; o.vcpu++)
		ck_assert_int_eq(vcpu_check(&s, &o, o.pid, &err), 0);
	o.vcpu = 5;
	ck_assert_int_eq(vcpu_check(&s, &o, o.pid, &err), -EINVAL);
	ck_assert_str_eq(err.text, "VM 100 has no vCPU 5 (its vCPUs: 0 1 2)");
	stats_free(&s);
}
END_TEST

/* Writes DIR/PID-FD/vcpuN/pid = tid, as KVM's debugfs has it. */
static void vc_debugfs_vcpu(const char *root, int n, int tid)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/100-11", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/100-11/vcpu%d", root, n);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/100-11/vcpu%d/pid", root, n);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%d\n", tid);
	fclose(f);
}

/* Nothing counted: the VM's threads (none in an empty /proc), then
 * debugfs, say which vCPUs exist. */
START_TEST(test_before_counts)
{
	char root[] = "/tmp/kvmstat-vcpu-XXXXXX", proc[64], cmd[128];
	struct options o = { .pid = 100 };
	struct stats s;
	struct errmsg err = { "" };

	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(proc, sizeof(proc), "%s/proc", root);
	ck_assert_int_eq(mkdir(proc, 0755), 0);
	o.proc_root = proc;
	o.debugfs_root = root;
	stats_init(&s, false);

	o.vcpu = 0;
	ck_assert_int_eq(vcpu_check(&s, &o, o.pid, &err), -EINVAL);
	ck_assert_str_eq(
		err.text,
		"VM 100 has no vCPU 0 (no vCPU is known: name its threads or use debugfs)");

	vc_debugfs_vcpu(root, 3, 4242);
	vc_debugfs_vcpu(root, 0, 4241);
	ck_assert_int_eq(vcpu_check(&s, &o, o.pid, &err), 0);
	o.vcpu = 3;
	ck_assert_int_eq(vcpu_check(&s, &o, o.pid, &err), 0);
	o.vcpu = 1;
	ck_assert_int_eq(vcpu_check(&s, &o, o.pid, &err), -EINVAL);
	ck_assert_str_eq(err.text, "VM 100 has no vCPU 1 (its vCPUs: 0 3)");

	stats_free(&s);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *vcpu_check_suite(void)
{
	Suite *s = suite_create("vcpu_check");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_unset);
	tcase_add_test(tc, test_counted);
	tcase_add_test(tc, test_before_counts);
	suite_add_tcase(s, tc);
	return s;
}
