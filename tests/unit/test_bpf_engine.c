// SPDX-License-Identifier: GPL-2.0-only
/*
 * The BPF counting engine on a tracepoint that fires on demand with no
 * KVM: task:task_rename, one hit per prctl(PR_SET_NAME). Only this
 * process's hits count (the tgid filter), exactly, in the slot of a plain
 * raw-tracepoint program and per thread; a forgotten thread key is gone
 * and counts afresh. A program on the trace record takes its "reason"
 * from the record (the renamer's oom_score_adj): a known reason counts in
 * its slot, an unknown one in the other-reasons hash; so does the program
 * that reads it from the task's structs, as kvm_exit's is read from the
 * vCPU's, at offsets from the kernel's BTF, and the one that reads it
 * from the raw arguments, as arm64's kvm_exit's is (on
 * raw_syscalls:sys_enter, each getppid() a hit). Needs root and
 * tracefs; says SKIP otherwise (a failure when KVMSTAT_REQUIRE_KVM=1).
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpf_engine.h"
#include "fs.h"
#include "kbtf.h"
#include "suites.h"
#include "testlib.h"
#include "tpformat.h"
#include "util.h"

#define RENAME_DIR "/sys/kernel/tracing/events/task/task_rename"

struct found {
	uint32_t tgid, tid;
	uint64_t count; /* of this thread's keys */
	size_t keys;
	struct ks_thread_key tkey;
	struct ks_other_key okey;
};

static void on_thread(void *ctx, const struct ks_thread_key *k, uint64_t v)
{
	struct found *f = ctx;

	if (k->tgid != f->tgid || k->tid != f->tid)
		return;
	f->count += v;
	f->keys++;
	f->tkey = *k;
}

static void on_other(void *ctx, const struct ks_other_key *k, uint64_t v)
{
	struct found *f = ctx;

	if (k->tgid != f->tgid || k->tid != f->tid)
		return;
	f->count += v;
	f->keys++;
	f->okey = *k;
}

static struct found me(void)
{
	struct found f = { .tgid = (uint32_t)getpid(),
			   .tid = (uint32_t)syscall(SYS_gettid) };
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
	char buf[32];
	uint64_t v;

	*why = "no task:task_rename in tracefs (mount -t tracefs none /sys/kernel/tracing)";
	if (geteuid()) {
		*why = "needs root for bpf(2) and perf_event_open";
		return -1;
	}
	if (fs_read_at(AT_FDCWD, RENAME_DIR "/id", buf, sizeof(buf)) > 0 &&
	    !util_parse_u64(buf, &v) && v < 1u << 30)
		return (int)v;
	return -1;
}

/* Which way plain events are attached: 0 one program with attach
 * cookies where the kernel has them, 1 one program per event. */
static int plain_way;

static struct bpf_engine *engine(uint32_t nslots)
{
	struct bpf_engine_cfg cfg = { .nslots = nslots,
				      .tgid = (uint32_t)getpid(),
				      .per_thread = true,
				      .thread_entries = 1024,
				      .no_cookie = plain_way == 1 };
	struct bpf_engine *e;
	int err = 0;

	e = bpf_engine_new(&cfg, &err);
	ck_assert_msg(e, "bpf_engine_new: %s", strerror(-err));
	return e;
}

static void load_attach(struct bpf_engine *e)
{
	const char *what;

	ck_assert_msg(bpf_engine_load(e) == 0, "load: %s",
		      bpf_engine_last_log());
	ck_assert_int_eq(bpf_engine_attach(e, &what), 0);
}

START_TEST(test_plain_exact_per_thread)
{
	struct bpf_engine *e;
	uint64_t counts[4];
	struct found f;
	const char *why;

	plain_way = _i;
	if (rename_id(&why) < 0) {
		test_skip("test_plain_exact_per_thread", "%s", why);
		return;
	}
	e = engine(4);
	ck_assert_int_eq(bpf_engine_plain(e, 1, "task_rename"), 0);
	ck_assert_int_eq(bpf_engine_plain(e, KS_NPLAIN, "task_rename"), -ENOSPC);
	load_attach(e);
	/* per event, not per CPU: the 5 maps, the read-only data and the
	 * .bss (ks_tvcpu_adds), 1 program and its link */
	ck_assert_uint_le(bpf_engine_fds(e), 9);
	bpf_engine_free(e);

	/* two events on one tracepoint each count every hit, in its slot
	 * (with cookies: one program, told apart by the cookie) */
	e = engine(4);
	ck_assert_int_eq(bpf_engine_plain(e, 1, "task_rename"), 0);
	ck_assert_int_eq(bpf_engine_plain(e, 3, "task_rename"), 0);
	load_attach(e);
	/* one program more without cookies (asked, or a kernel before
	 * 6.10 without them for raw tracepoints) */
	ck_assert_uint_eq(bpf_engine_fds(e),
			  10 + (plain_way == 1 ||
				libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT,
							BPF_FUNC_get_attach_cookie,
							NULL) != 1));
	renames(1000);
	ck_assert_int_eq(bpf_engine_read(e, counts), 0);
	ck_assert_uint_eq(counts[0], 0);
	ck_assert_uint_eq(counts[1], 1000);
	ck_assert_uint_eq(counts[2], 0);
	ck_assert_uint_eq(counts[3], 1000);
	bpf_engine_free(e);

	e = engine(4);
	ck_assert_int_eq(bpf_engine_plain(e, 1, "task_rename"), 0);
	load_attach(e);
	renames(1000);
	ck_assert_int_eq(bpf_engine_read(e, counts), 0);
	ck_assert_uint_eq(counts[0], 0);
	ck_assert_uint_eq(counts[1], 1000);
	f = me();
	ck_assert_int_eq(bpf_engine_threads(e, on_thread, &f), 0);
	ck_assert_uint_eq(f.keys, 1);
	ck_assert_uint_eq(f.count, 1000);
	ck_assert_uint_eq(f.tkey.slot, 1);
	renames(234);
	ck_assert_int_eq(bpf_engine_read(e, counts), 0);
	ck_assert_uint_eq(counts[1], 1234);

	/* forgotten: gone, then counting again from zero */
	ck_assert_int_eq(bpf_engine_forget_threads(e, &f.tkey, 1), 0);
	f = me();
	ck_assert_int_eq(bpf_engine_threads(e, on_thread, &f), 0);
	ck_assert_uint_eq(f.keys, 0);
	ck_assert_int_eq(bpf_engine_forget_threads(e, &f.tkey, 1), 0);
	renames(17);
	f = me();
	ck_assert_int_eq(bpf_engine_threads(e, on_thread, &f), 0);
	ck_assert_uint_eq(f.count, 17);
	bpf_engine_free(e);
}
END_TEST

static void set_oom(int v)
{
	FILE *fp = fopen("/proc/self/oom_score_adj", "w");

	ck_assert_ptr_nonnull(fp);
	fprintf(fp, "%d\n", v);
	ck_assert_int_eq(fclose(fp), 0);
}

/*
 * Reason 5 of source 1 in slot 2, attached: 300 renames with
 * oom_score_adj 5 count there and 40 with 7 as an "other" of the parent
 * (slot 0, every hit); frees e.
 */
static void reason_hits(struct bpf_engine *e)
{
	uint64_t counts[3];
	const char *why;
	struct found f;

	ck_assert_int_eq(bpf_engine_set_reason(e, 1, 0, 5, 2), 0);
	ck_assert_int_eq(bpf_engine_attach(e, &why), 0);
	set_oom(5);
	renames(300);
	set_oom(7); /* no slot */
	renames(40);
	ck_assert_int_eq(bpf_engine_read(e, counts), 0);
	ck_assert_uint_eq(counts[0], 340);
	ck_assert_uint_eq(counts[2], 300);
	f = me();
	ck_assert_int_eq(bpf_engine_others(e, on_other, &f), 0);
	ck_assert_uint_eq(f.keys, 1);
	ck_assert_uint_eq(f.count, 40);
	ck_assert_uint_eq(f.okey.src, 1);
	ck_assert_uint_eq(f.okey.reason, 7);
	bpf_engine_free(e);
}

START_TEST(test_record_reasons)
{
	struct ks_rec_cfg rc = { .parent_slot = 0, .src = 1 };
	const struct tp_field *field;
	struct tp_format *fmt = NULL;
	struct bpf_engine *e;
	const char *why;
	int id = rename_id(&why);

	if (id < 0 || tp_format_load(RENAME_DIR "/format", &fmt)) {
		test_skip("test_record_reasons", "%s", why);
		return;
	}
	field = tp_format_field(fmt, "oom_score_adj");
	ck_assert_ptr_nonnull(field);
	rc.reason_off = field->offset;
	rc.reason_size = field->size;
	tp_format_free(fmt);

	e = engine(3);
	ck_assert_int_eq(bpf_engine_record(e, id, &rc), 0);
	ck_assert_int_eq(bpf_engine_load(e), 0);
	ck_assert_int_eq(bpf_engine_set_reason(e, 1, 0, KS_MAXR, 2), -ERANGE);
	reason_hits(e);
}
END_TEST

/*
 * The program that reads a reason from the vCPU's structs, on the same
 * tracepoint: task_rename's raw first argument is the task, as kvm_exit's
 * is the vCPU, and its record's oom_score_adj is task->signal's, found by
 * kbtf in the kernel's BTF: the pointer followed, the value read, counts
 * as the record program's.
 */
START_TEST(test_vcpu_reasons)
{
	struct ks_vcpu_cfg vc = { .parent_slot = 0, .src = 1 };
	struct kbtf_member m;
	struct bpf_engine *e;
	struct kbtf *k;
	const char *why;
	int err = 0;

	if (rename_id(&why) < 0) {
		test_skip("test_vcpu_reasons", "%s", why);
		return;
	}
	k = kbtf_open(NULL, NULL, &err);
	if (!k) {
		test_skip("test_vcpu_reasons", "no kernel BTF: %s",
			  strerror(-err));
		return;
	}
	ck_assert_int_eq(kbtf_member(k, "task_struct", "signal", &m), 0);
	ck_assert_str_eq(m.pointee, "signal_struct");
	vc.ptr_off = (int32_t)m.offset;
	ck_assert_int_eq(kbtf_member(k, "signal_struct", "oom_score_adj", &m),
			 0);
	ck_assert(m.integer);
	vc.reason_off = m.offset;
	vc.reason_size = m.size;
	kbtf_close(k);

	e = engine(3);
	ck_assert_int_eq(bpf_engine_vcpu(e, "task_rename", &vc), 0);
	ck_assert_int_eq(bpf_engine_vcpu(e, "task_rename", &vc), -EBUSY);
	ck_assert_msg(bpf_engine_load(e) == 0, "load: %s",
		      bpf_engine_last_log());
	reason_hits(e);
}
END_TEST

/* Whether any other reason of this thread was not 0, and their count. */
struct others {
	uint32_t tgid, tid;
	uint64_t count;
	bool nonzero;
};

static void on_other_reason(void *ctx, const struct ks_other_key *k, uint64_t v)
{
	struct others *o = ctx;

	if (k->tgid != o->tgid || k->tid != o->tid)
		return;
	o->count += v;
	o->nonzero |= k->reason != 0;
}

/*
 * The program that reads a reason from the raw arguments, as arm64's
 * kvm_exit(ret, esr_ec, vcpu_pc) is read, on raw_syscalls:sys_enter(regs,
 * id): the id as the reason (argument 1), slot 2 for getppid's. Gated on
 * the id being getppid's (0: every other call's reason is 0), on the
 * pointer's low bits being 1 (argument 0, never: no getppid counts), and
 * not gated (the other calls' reasons are theirs).
 */
START_TEST(test_arg_reasons)
{
	struct ks_arg_cfg ac = {
		.parent_slot = 0, .src = 1, .arg = 1, .mask = 0xffffffff
	};
	struct others o = { .tgid = (uint32_t)getpid(),
			    .tid = (uint32_t)syscall(SYS_gettid) };
	struct bpf_engine *e;
	uint64_t counts[3];
	const char *why;

	if (geteuid()) {
		test_skip("test_arg_reasons", "needs root for bpf(2)");
		return;
	}
	if (_i == 0) {
		ac.gate_arg = 1;
		ac.gate_mask = 0xffffffff;
		ac.gate_value = SYS_getppid;
	} else if (_i == 1) {
		ac.gate_arg = 0;
		ac.gate_mask = 7; /* struct pt_regs is 8-byte aligned */
		ac.gate_value = 1;
	}
	e = engine(3);
	ac.arg = 2;
	ck_assert_int_eq(bpf_engine_arg(e, "sys_enter", &ac), -EINVAL);
	ac.arg = 1;
	ck_assert_int_eq(bpf_engine_arg(e, "sys_enter", &ac), 0);
	ck_assert_int_eq(bpf_engine_arg(e, "sys_enter", &ac), -EBUSY);
	ck_assert_msg(bpf_engine_load(e) == 0, "load: %s",
		      bpf_engine_last_log());
	ck_assert_int_eq(bpf_engine_set_reason(e, 1, 0, SYS_getppid, 2), 0);
	ck_assert_int_eq(bpf_engine_attach(e, &why), 0);
	for (int i = 0; i < 300; i++)
		syscall(SYS_getppid);
	for (int i = 0; i < 50; i++)
		syscall(SYS_getpid);
	ck_assert_int_eq(bpf_engine_read(e, counts), 0);
	ck_assert_uint_eq(counts[2], _i == 1 ? 0 : 300);
	ck_assert_uint_ge(counts[0], 350);
	ck_assert_int_eq(bpf_engine_others(e, on_other_reason, &o), 0);
	ck_assert_uint_ge(o.count, _i == 1 ? 350 : 50);
	ck_assert(o.nonzero == (_i == 2));
	bpf_engine_free(e);
}
END_TEST

Suite *bpf_engine_suite(void)
{
	Suite *s = suite_create("bpf_engine");
	TCase *tc = tcase_create("rename");

	tcase_add_loop_test(tc, test_plain_exact_per_thread, 0, 2);
	tcase_add_test(tc, test_record_reasons);
	tcase_add_test(tc, test_vcpu_reasons);
	tcase_add_loop_test(tc, test_arg_reasons, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}
