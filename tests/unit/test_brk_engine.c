// SPDX-License-Identifier: GPL-2.0-only
/*
 * The breakdown engine's raw programs read the arguments each
 * architecture's descriptor names: on raw_syscalls:sys_enter(regs, id),
 * x86's ioport program (key argument 1, direction argument 0) and the
 * hypercall program as arm64 has it (kvm_hvc_arm64's r0 is argument 1)
 * both count getppid()'s id as a key, exactly, per thread; its direction
 * (the regs pointer) is "out" for the port, none for the hypercall.
 * Needs root; says SKIP otherwise (a failure when KVMSTAT_REQUIRE_KVM=1).
 */
#include <check.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch.h"
#include "brk_engine.h"
#include "suites.h"
#include "testlib.h"

struct hits {
	uint32_t tgid, tid;
	uint64_t port, port_dir0, hc, hc_dir1;
};

static void on_key(void *ctx, const struct brk_key *k, uint64_t count,
		   const struct lat_val *h)
{
	struct hits *x = ctx;

	(void)h;
	if (k->tgid != x->tgid || k->tid != x->tid || k->key != SYS_getppid)
		return;
	if (k->kind == BRK_IOPORT) {
		x->port += count;
		x->port_dir0 += k->dir ? 0 : count;
	} else if (k->kind == BRK_HYPERCALL) {
		x->hc += count;
		x->hc_dir1 += k->dir ? count : 0;
	}
}

/* Kind k's source on sys_enter as descriptor d's breakdown of it says. */
static struct brk_source sys_enter_as(const struct arch_desc *d, const char *k)
{
	const struct arch_breakdown *b = arch_breakdown_for(d, k);

	ck_assert_ptr_nonnull(b);
	return (struct brk_source){ .event = b->event,
				    .raw = "sys_enter",
				    .key_arg = b->key_arg,
				    .dir_arg = b->dir ? b->dir_arg : BRK_NO_ARG,
				    .id = -1 };
}

START_TEST(test_args_per_arch)
{
	struct brk_engine_cfg cfg = { .tgid = (uint32_t)getpid() };
	struct hits x = { .tgid = (uint32_t)getpid(),
			  .tid = (uint32_t)syscall(SYS_gettid) };
	struct brk_engine *e;
	const char *what = NULL;
	int err = 0;

	if (geteuid()) {
		test_skip("test_args_per_arch", "needs root for bpf(2)");
		return;
	}
	for (int k = 0; k < BRK_NKINDS; k++)
		cfg.src[k] = (struct brk_source){ .id = -1 };
	cfg.src[BRK_IOPORT] = sys_enter_as(&arch_x86_desc, "ioport");
	cfg.src[BRK_HYPERCALL] = sys_enter_as(&arch_arm64_desc, "hypercall");
	e = brk_engine_open(&cfg, &err, &what);
	ck_assert_msg(e, "%s: %s", what ? what : "open", strerror(-err));
	for (int i = 0; i < 200; i++)
		syscall(SYS_getppid);
	ck_assert_int_eq(brk_engine_walk(e, on_key, &x), 0);
	ck_assert_uint_eq(x.port, 200);
	ck_assert_uint_eq(x.port_dir0, 0);
	ck_assert_uint_eq(x.hc, 200);
	ck_assert_uint_eq(x.hc_dir1, 0);
	brk_engine_free(e);
}
END_TEST

Suite *brk_engine_suite(void)
{
	Suite *s = suite_create("brk_engine");
	TCase *tc = tcase_create("sys_enter");

	tcase_add_test(tc, test_args_per_arch);
	suite_add_tcase(s, tc);
	return s;
}
