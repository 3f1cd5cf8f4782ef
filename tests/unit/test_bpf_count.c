// SPDX-License-Identifier: GPL-2.0-only
/*
 * The in-kernel BPF counter on a tracepoint that fires on demand with no
 * KVM: task:task_rename, one hit per prctl(PR_SET_NAME). The counts of
 * this thread's key must be exact; a deleted key is gone from the map and
 * counts afresh. Needs root (bpf(2), perf_event_open) and tracefs; says
 * SKIP otherwise (a failure when KVMSTAT_REQUIRE_KVM=1, as in CI).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpf_count.h"
#include "fs.h"
#include "suites.h"
#include "testlib.h"
#include "util.h"

#define EVENT 7

struct found {
	uint32_t tgid, tid;
	uint64_t count; /* of this thread's key */
	size_t keys;	/* of this thread */
	struct bpf_count_key key;
};

static void on_key(void *ctx, const struct bpf_count_key *k, uint64_t count)
{
	struct found *f = ctx;

	if (k->tgid != f->tgid || k->tid != f->tid || k->event != EVENT)
		return;
	f->count += count;
	f->keys++;
	f->key = *k;
}

static struct found count_mine(struct bpf_count *bc)
{
	struct found f = { .tgid = (uint32_t)getpid(),
			   .tid = (uint32_t)syscall(SYS_gettid) };

	ck_assert_int_eq(bpf_count_read(bc, on_key, &f), 0);
	return f;
}

static void renames(int n)
{
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(prctl(PR_SET_NAME,
				       i & 1 ? "kvmst-a" : "kvmst-b", 0, 0, 0),
				 0);
}

/* The tracepoint's id, or -1 with the reason to skip. */
static int rename_id(const char **why)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing/events/task/task_rename/id",
		"/sys/kernel/debug/tracing/events/task/task_rename/id",
	};
	char buf[32];
	uint64_t v;

	*why = "no task:task_rename in tracefs (mount -t tracefs none /sys/kernel/tracing)";
	if (geteuid()) {
		*why = "needs root for bpf(2) and perf_event_open";
		return -1;
	}
	for (size_t i = 0; i < 2; i++)
		if (fs_read_at(AT_FDCWD, paths[i], buf, sizeof(buf)) > 0 &&
		    !util_parse_u64(buf, &v) && v < 1u << 30)
			return (int)v;
	return -1;
}

START_TEST(test_exact_and_delete)
{
	struct bpf_count_field none = { 0, 0 };
	struct bpf_count *bc;
	struct found f;
	const char *why;
	int id = rename_id(&why), err = 0;

	if (id < 0) {
		test_skip("test_exact_and_delete", "%s", why);
		return;
	}
	bc = bpf_count_new(1024, &err);
	ck_assert_msg(bc, "bpf_count_new: %s", strerror(-err));
	ck_assert_int_eq(bpf_count_attach(bc, id, EVENT, none, none), 0);
	ck_assert_uint_eq(bpf_count_fds(bc), 3);

	renames(1000);
	f = count_mine(bc);
	ck_assert_uint_eq(f.keys, 1);
	ck_assert_uint_eq(f.count, 1000);
	renames(234);
	ck_assert_uint_eq(count_mine(bc).count, 1234);

	/* deleted: gone, then counting again from zero */
	ck_assert_int_eq(bpf_count_delete(bc, &f.key, 1), 0);
	ck_assert_uint_eq(count_mine(bc).keys, 0);
	ck_assert_int_eq(bpf_count_delete(bc, &f.key, 1), 0); /* ENOENT */
	renames(17);
	f = count_mine(bc);
	ck_assert_uint_eq(f.keys, 1);
	ck_assert_uint_eq(f.count, 17);
	bpf_count_free(bc);
}
END_TEST

Suite *bpf_count_suite(void)
{
	Suite *s = suite_create("bpf_count");
	TCase *tc = tcase_create("rename");

	tcase_add_test(tc, test_exact_and_delete);
	suite_add_tcase(s, tc);
	return s;
}
