// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tracepoint provider on this host's real tracefs and KVM: reason
 * names from the kernel's format files, and exact counts of the exits the
 * test guest makes, with BPF and with filtered perf events. Says SKIP with
 * the reason where the host cannot run them (a failure when
 * KVMSTAT_REQUIRE_KVM=1, as in CI).
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errmsg.h"
#include "options.h"
#include "options_parse.h"
#include "provider.h"
#include "stats.h"
#include "suites.h"
#include "testlib.h"

#define GUEST "tests/guest/kvmguest"

/* Whether the host can run the exact counts; if not, skips test. */
static bool host_can_run(const char *test)
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
	test_skip(test, "%s", why);
	return false;
}

/* Root and the kvm tracepoints: enough to parse the kernel's formats; if
 * not there, skips test. */
static bool host_has_tracepoints(const char *test)
{
	const char *why = NULL;

	if (geteuid())
		why = "not root";
	else if (access("/sys/kernel/tracing/events/kvm", R_OK) &&
		 access("/sys/kernel/debug/tracing/events/kvm", R_OK))
		why = "no kvm tracepoints (mount tracefs)";
	if (!why)
		return true;
	test_skip(test, "%s", why);
	return false;
}

struct tp_fixture {
	struct options o;
	struct provider p;
	struct stats s;
};

static void tp_setup(struct tp_fixture *f, const char *regex, bool no_bpf,
		     pid_t pid)
{
	char *argv[8] = { "kvmstat", "-l", "-f", (char *)regex };
	struct errmsg err;
	char pidbuf[16];
	int argc = 4;

	if (no_bpf)
		argv[argc++] = "--no-bpf";
	if (pid) {
		snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
		argv[argc++] = "-p";
		argv[argc++] = pidbuf;
	}
	memset(f, 0, sizeof(*f));
	ck_assert_int_eq(options_parse(argc, argv, &f->o, &err), 0);
	stats_init(&f->s, false);
	f->p.ops = provider_find("tracepoint");
	ck_assert_ptr_nonnull(f->p.ops);
	f->p.fields = &f->s.fields;
	f->p.filter = &f->o.filter;
	f->p.want_vms = true; /* per-VM and per-vCPU breakdowns */
	ck_assert_msg(test_provider_open(&f->p, &f->o) == 0, "open: %s",
		      f->p.msg.text);
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

	if (!host_has_tracepoints("test_reason_names_from_kernel"))
		return;
	tp_setup(&f, "^kvm_userspace_exit", false, 0);
	parent = field_table_find(&f.s.fields, "kvm_userspace_exit");
	child = field_table_find(&f.s.fields, "kvm_userspace_exit(HLT)");
	ck_assert_int_ge(parent, 0);
	ck_assert_int_ge(child, 0);
	ck_assert_int_eq(f.s.fields.v[child].parent, parent);
	ck_assert_int_ge(field_table_find(&f.s.fields,
					  "kvm_userspace_exit(MMIO)"),
			 0);
	ck_assert_int_ge(field_table_find(&f.s.fields, "kvm_userspace_exit(IO)"),
			 0);
	/* the filter keeps other events closed */
	ck_assert_int_lt(field_table_find(&f.s.fields, "kvm_pio"), 0);
	tp_teardown(&f);

#if defined(__x86_64__) || defined(__i386__)
	/* x86: the table of the host's ISA only, in kvm_stat's spelling
	 * (issue 11): HLT, never SVM's kernel name hlt; VMX's IO_INSTRUCTION
	 * or SVM's IOIO, not both. SVM's "DB excp" loses its blank, as
	 * output lines are split on blanks */
	if (access("/sys/kernel/tracing/events/kvm/kvm_exit/format", R_OK))
		return;
	tp_setup(&f, "^kvm_exit", false, 0);
	ck_assert_int_ge(field_table_find(&f.s.fields, "kvm_exit(HLT)"), 0);
	ck_assert_int_lt(field_table_find(&f.s.fields, "kvm_exit(hlt)"), 0);
	ck_assert((field_table_find(&f.s.fields, "kvm_exit(IO_INSTRUCTION)") >=
		   0) != (field_table_find(&f.s.fields, "kvm_exit(IOIO)") >= 0));
	for (size_t i = 0; i < f.s.fields.n; i++)
		ck_assert_msg(!strchr(f.s.fields.v[i].name, ' '),
			      "field \"%s\"", f.s.fields.v[i].name);
	tp_teardown(&f);
#endif
}
END_TEST

static const struct {
	const char *kind, *field;
	bool no_bpf, pid_mode;
} exact[] = {
	{ "hlt", "kvm_userspace_exit(HLT)", false, false },
	{ "hlt", "kvm_userspace_exit(HLT)", true, true },
	{ "hlt", "kvm_userspace_exit(HLT)", false, true },
	{ "mmio", "kvm_userspace_exit(MMIO)", false, false },
	{ "mmio", "kvm_mmio", false, true },
	{ "pio", "kvm_userspace_exit(IO)", false, false },
	{ "pio", "kvm_pio", false, false },
	{ "pio", "kvm_pio", false, true },
};

/* Starts the test guest waiting for SIGUSR1; returns its VM pid. */
static pid_t guest_start(const char *kind, FILE **out)
{
	char cmd[256], line[256];
	pid_t vm = 0;

	snprintf(cmd, sizeof(cmd), GUEST " -w -m 1 -v 2 -n 1500 -k %s -t 0.2",
		 kind);
	*out = popen(cmd, "r");
	ck_assert_ptr_nonnull(*out);
	while (fgets(line, sizeof(line), *out)) {
		if (sscanf(line, "vm %d", &vm) == 1)
			continue;
		if (!strcmp(line, "ready\n"))
			break;
	}
	ck_assert_int_gt(vm, 0);
	return vm;
}

/* Lets the guest run and waits until both vCPUs are done. */
static void guest_run(pid_t vm, FILE *out)
{
	char line[256];
	int done = 0;

	ck_assert_int_eq(kill(vm, SIGUSR1), 0);
	while (done < 2 && fgets(line, sizeof(line), out))
		if (!strncmp(line, "done ", 5))
			done++;
	ck_assert_int_eq(done, 2);
}

/*
 * N exits per vCPU on V vCPUs: the provider counts exactly V x N for that
 * VM, system-wide (its per-VM breakdown, since other VMs may run on the
 * host) and with -p (per-thread groups).
 */
START_TEST(test_exact_counts)
{
	const struct stat_cell *c;
	struct tp_fixture f;
	char line[256], name[64];
	FILE *out;
	pid_t vm;
	int id;

	snprintf(name, sizeof(name), "test_exact_counts (%s%s%s)",
		 exact[_i].field, exact[_i].no_bpf ? " --no-bpf" : "",
		 exact[_i].pid_mode ? " -p" : "");
	if (!host_can_run(name))
		return;
	vm = guest_start(exact[_i].kind, &out);
	tp_setup(&f, "^kvm_(pio|mmio|userspace_exit)", exact[_i].no_bpf,
		 exact[_i].pid_mode ? vm : 0);
	tp_sample(&f);
	guest_run(vm, out);
	tp_sample(&f);
	id = field_table_find(&f.s.fields, exact[_i].field);
	ck_assert_int_ge(id, 0);
	c = stats_cell(&f.s, id, vm, SAMPLE_ALL_VCPUS);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->total, 3000);
	if (exact[_i].pid_mode) {
		ck_assert_uint_eq(total_of(&f, exact[_i].field), 3000);
		/* per vCPU: the guest's threads are named CPU N/KVM */
		for (int v = 0; v < 2; v++) {
			c = stats_cell(&f.s, id, vm, v);
			ck_assert_ptr_nonnull(c);
			ck_assert_uint_eq(c->total, 1500);
		}
	}
	tp_teardown(&f);
	while (fgets(line, sizeof(line), out)) /* to its "exit" */
		;
	ck_assert_int_eq(pclose(out), 0);
}
END_TEST

Suite *tracepoint_suite(void)
{
	Suite *s = suite_create("tracepoint");
	TCase *tc = tcase_create("formats");
	TCase *real = test_kvm_tcase("real-kvm");

	/* the kernel's formats: tracefs and root, no guest */
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_reason_names_from_kernel);
	suite_add_tcase(s, tc);
	tcase_set_timeout(real, 30);
	tcase_add_loop_test(real, test_exact_counts, 0,
			    sizeof(exact) / sizeof(exact[0]));
	suite_add_tcase(s, real);
	return s;
}
