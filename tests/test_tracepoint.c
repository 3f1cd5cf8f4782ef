// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tracepoint provider on this host's real tracefs and KVM: reason
 * names from the kernel's format files, and exact counts of the exits the
 * test guest makes, with BPF and with filtered perf events. Says SKIP with
 * the reason where the host cannot run them (a failure when
 * KVMSTAT_REQUIRE_KVM=1, as in CI).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "provider.h"
#include "stats.h"
#include "suites.h"

#define GUEST "tests/guest/kvmguest"

static bool host_can_run(void)
{
	const char *why = NULL;

	if (geteuid())
		why = "not root";
	else if (access("/dev/kvm", R_OK | W_OK))
		why = "no /dev/kvm";
	else if (access("/sys/kernel/tracing/events/kvm", R_OK) &&
		 access("/sys/kernel/debug/tracing/events/kvm", R_OK))
		why = "no kvm tracepoints (mount tracefs)";
	else if (access(GUEST, X_OK))
		why = "test guest not built";
	if (!why)
		return true;
	if (getenv("KVMSTAT_REQUIRE_KVM") &&
	    !strcmp(getenv("KVMSTAT_REQUIRE_KVM"), "1"))
		ck_abort_msg("required host feature missing: %s", why);
	printf("SKIP tracepoint tests: %s\n", why);
	return false;
}

struct tp_fixture {
	struct options o;
	struct provider p;
	struct stats s;
};

static void tp_setup(struct tp_fixture *f, const char *regex, bool no_bpf)
{
	char *argv[6] = { "kvmstat", "-l", "-f", (char *)regex, NULL, NULL };
	char err[256];
	int argc = 4;

	if (no_bpf)
		argv[argc++] = "--no-bpf";
	memset(f, 0, sizeof(*f));
	ck_assert_int_eq(options_parse(argc, argv, &f->o, err, sizeof(err)), 0);
	stats_init(&f->s, false);
	f->p.ops = provider_find("tracepoint");
	ck_assert_ptr_nonnull(f->p.ops);
	f->p.fields = &f->s.fields;
	f->p.filter = &f->o.filter;
	ck_assert_msg(f->p.ops->open(&f->p, &f->o) == 0, "open: %s", f->p.msg);
}

static void tp_teardown(struct tp_fixture *f)
{
	f->p.ops->close(&f->p);
	stats_free(&f->s);
	options_free(&f->o);
}

static void tp_sample(struct tp_fixture *f)
{
	ck_assert_int_eq(f->p.ops->read(&f->p, &f->s.set), 0);
	stats_update(&f->s, 1);
}

static uint64_t total_of(struct tp_fixture *f, const char *name)
{
	int id = field_table_find(&f->s.fields, name);

	ck_assert_msg(id >= 0, "no field %s", name);
	ck_assert(f->s.sum[id].fresh);
	return f->s.sum[id].total;
}

START_TEST(test_reason_names_from_kernel)
{
	struct tp_fixture f;
	int parent, child;

	if (!host_can_run())
		return;
	tp_setup(&f, "^kvm_userspace_exit", false);
	parent = field_table_find(&f.s.fields, "kvm_userspace_exit");
	child = field_table_find(&f.s.fields, "kvm_userspace_exit(HLT)");
	ck_assert_int_ge(parent, 0);
	ck_assert_int_ge(child, 0);
	ck_assert_int_eq(f.s.fields.v[child].parent, parent);
	ck_assert_int_ge(field_table_find(&f.s.fields, "kvm_userspace_exit(MMIO)"), 0);
	ck_assert_int_ge(field_table_find(&f.s.fields, "kvm_userspace_exit(IO)"), 0);
	/* the filter keeps other events closed */
	ck_assert_int_lt(field_table_find(&f.s.fields, "kvm_pio"), 0);
	tp_teardown(&f);
}
END_TEST

static const struct {
	const char *kind, *field;
	bool no_bpf;
} exact[] = {
	{ "hlt", "kvm_userspace_exit(HLT)", false },
	{ "hlt", "kvm_userspace_exit(HLT)", true },
	{ "mmio", "kvm_userspace_exit(MMIO)", false },
	{ "pio", "kvm_userspace_exit(IO)", false },
	{ "pio", "kvm_pio", false },
};

/* N exits per vCPU on V vCPUs: the provider counts exactly V x N. */
START_TEST(test_exact_counts)
{
	struct tp_fixture f;
	char cmd[256];

	if (!host_can_run())
		return;
	tp_setup(&f, "^kvm_(pio|userspace_exit)", exact[_i].no_bpf);
	tp_sample(&f);
	snprintf(cmd, sizeof(cmd), GUEST " -m 1 -v 2 -n 1500 -k %s -t 0 >/dev/null",
		 exact[_i].kind);
	ck_assert_int_eq(system(cmd), 0);
	tp_sample(&f);
	ck_assert_uint_eq(total_of(&f, exact[_i].field), 3000);
	tp_teardown(&f);
}
END_TEST

Suite *tracepoint_suite(void)
{
	Suite *s = suite_create("tracepoint");
	TCase *tc = tcase_create("real-kvm");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_reason_names_from_kernel);
	tcase_add_loop_test(tc, test_exact_counts, 0,
			    sizeof(exact) / sizeof(exact[0]));
	suite_add_tcase(s, tc);
	return s;
}
