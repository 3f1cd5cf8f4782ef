// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exit-latency engine's kvm_exit program that reads the reason from
 * the raw arguments, as arm64's kvm_exit(ret, esr_ec, vcpu_pc) is read:
 * on raw_syscalls:sys_enter(regs, id) as the exit (the id its reason,
 * argument 1, as the arm64 descriptor's esr_ec) and sys_exit as the
 * re-entry, each getppid() is one exit of getppid's reason, timed,
 * exactly, per thread. Needs root; says SKIP otherwise (a failure when
 * KVMSTAT_REQUIRE_KVM=1).
 */
#include <check.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch.h"
#include "lat_engine.h"
#include "suites.h"
#include "testlib.h"

struct timed {
	uint32_t tgid, tid;
	uint64_t count, total;
};

static void on_hist(void *ctx, const struct lat_key *k, const struct lat_val *v)
{
	struct timed *t = ctx;

	if (k->tgid == t->tgid && k->tid == t->tid && k->kind == LAT_EXIT &&
	    k->reason == SYS_getppid) {
		t->count += v->count;
		t->total += v->total;
	}
}

START_TEST(test_exit_by_arg)
{
	const struct arch_source *a = arch_source_find(&arch_arm64_desc,
						       "kvm_exit", "esr_ec");
	struct lat_engine_cfg cfg = { .tgid = (uint32_t)getpid(),
				      .exit_id = 0,
				      .exit_raw = "sys_enter",
				      .exit_by_arg = true,
				      .uexit_id = -1,
				      .entry_raw = "sys_exit" };
	struct timed t = { .tgid = (uint32_t)getpid(),
			   .tid = (uint32_t)syscall(SYS_gettid) };
	struct lat_engine *e;
	const char *what = NULL;
	int err = 0;

	if (geteuid()) {
		test_skip("test_exit_by_arg", "needs root for bpf(2)");
		return;
	}
	/* the arm64 descriptor's argument, ungated: every call counts */
	cfg.exit_arg.arg = a->raw.arg;
	cfg.exit_arg.mask = a->raw.mask;
	e = lat_engine_open(&cfg, &err, &what);
	ck_assert_msg(e, "%s: %s", what ? what : "open", strerror(-err));
	for (int i = 0; i < 300; i++)
		syscall(SYS_getppid);
	ck_assert_int_eq(lat_engine_walk(e, on_hist, &t), 0);
	ck_assert_uint_eq(t.count, 300);
	ck_assert_uint_gt(t.total, 0);
	lat_engine_free(e);
}
END_TEST

Suite *lat_engine_suite(void)
{
	Suite *s = suite_create("lat_engine");
	TCase *tc = tcase_create("sys_enter");

	tcase_add_test(tc, test_exit_by_arg);
	suite_add_tcase(s, tc);
	return s;
}
