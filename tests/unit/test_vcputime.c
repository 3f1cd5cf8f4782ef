// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where each vCPU's time goes: the state arithmetic (core/vcputime.c) on
 * readings made by hand, exact to the nanosecond, merged states included,
 * an ongoing halt counted once; the /proc parsers (sys/taskstat.c); and
 * the collector (app/vtscan.c) on a fake proc root of crafted schedstat
 * and stat files, rewritten in place between updates as the kernel's
 * change under kept fds.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/vtscan.h"
#include "suites.h"
#include "taskstat.h"
#include "vcputime.h"

#define MS 1000000ull
#define SEC 1000000000ull

/* The five states and the merged ones add up to the interval. */
static void check_sum(const struct vcputime_row *r)
{
	uint64_t sum = 0;

	for (int s = 0; s < VT_NSTATES; s++)
		sum += r->delta_ns[s];
	ck_assert_uint_eq(sum, r->interval_ns);
}

/* A host that reports guest time: every state apart. */
START_TEST(test_guest_time_host)
{
	struct vcputime_acc a = { 0 };
	struct vcputime_row r = { 0 };
	struct vcputime_in in = {
		.now_ns = 1 * SEC,
		.run_ns = 600 * MS,
		.delay_ns = 100 * MS,
		.utime = 30, /* 20 of them guest */
		.stime = 30,
		.gtime = 20,
		.state = 'R',
	};
	double v;

	vcputime_step(&a, &in, 0, &r);
	ck_assert_uint_eq(r.interval_ns, 1 * SEC);
	ck_assert_uint_eq(r.delta_ns[VT_WAITING], 100 * MS);
	/* run 600 ms by ticks 10 user : 30 system : 20 guest */
	ck_assert_uint_eq(r.delta_ns[VT_GUEST], 200 * MS);
	ck_assert_uint_eq(r.delta_ns[VT_KERNEL], 300 * MS);
	/* no halt statistics: the 300 ms asleep and 100 ms of user are one */
	ck_assert_uint_eq(r.delta_ns[VT_HALTED_VMM], 400 * MS);
	ck_assert_uint_eq(r.merged, 1u << VT_HALTED_VMM);
	ck_assert(!vcputime_rate(&r, VT_HALTED, &v));
	ck_assert(!vcputime_rate(&r, VT_VMM, &v));
	ck_assert(vcputime_rate(&r, VT_HALTED_VMM, &v));
	ck_assert(v > 0.3999 && v < 0.4001);
	ck_assert(vcputime_rate(&r, VT_GUEST, &v));
	ck_assert(!vcputime_rate(&r, VT_GUEST_KERNEL, &v));
	check_sum(&r);
}
END_TEST

/* This host's kind: guest time shows as system time (gtime 0), so guest
 * and kernel are one merged state; halt statistics split the sleep. */
START_TEST(test_merged_guest_kernel)
{
	struct vcputime_acc a = { 0 };
	struct vcputime_row r = { 0 };
	struct vcputime_in in = {
		.now_ns = 1 * SEC,
		.run_ns = 600 * MS,
		.delay_ns = 100 * MS,
		.utime = 10,
		.stime = 50,
		.state = 'R',
		.halt_known = true,
		.halt_wait_ns = 250 * MS,
		.halt_poll_ns = 50 * MS,
	};
	double v;

	vcputime_step(&a, &in, 0, &r);
	ck_assert_uint_eq(r.delta_ns[VT_WAITING], 100 * MS);
	/* 50 ms polling on a CPU, 250 ms blocked of the 300 ms asleep */
	ck_assert_uint_eq(r.delta_ns[VT_HALTED], 300 * MS);
	/* 100 ms user by ticks, 50 ms asleep outside a halt */
	ck_assert_uint_eq(r.delta_ns[VT_VMM], 150 * MS);
	ck_assert_uint_eq(r.delta_ns[VT_GUEST_KERNEL], 450 * MS);
	ck_assert_uint_eq(r.delta_ns[VT_GUEST], 0);
	ck_assert_uint_eq(r.merged, 1u << VT_GUEST_KERNEL);
	ck_assert(!vcputime_rate(&r, VT_GUEST, &v));
	ck_assert(!vcputime_rate(&r, VT_KERNEL, &v));
	ck_assert(vcputime_rate(&r, VT_HALTED, &v));
	ck_assert(!(r.measured & (1u << VT_GUEST)));
	check_sum(&r);
}
END_TEST

/* A halt that lasts over refreshes: halt_wait_ns grows only when it ends;
 * blocking and the thread's state count it while it goes on, and what it
 * adds at the end is not counted twice. */
START_TEST(test_ongoing_halt)
{
	struct vcputime_acc a = { 0 };
	struct vcputime_row r = { 0 };
	struct vcputime_in in = {
		.now_ns = 1 * SEC,
		.run_ns = 1 * SEC,
		.stime = 100,
		.state = 'R',
		.halt_known = true,
		.blocking_known = true,
	};

	vcputime_step(&a, &in, 0, &r);
	ck_assert_uint_eq(r.delta_ns[VT_GUEST_KERNEL], 1 * SEC);
	/* halted for the whole next second: nothing in halt_wait_ns yet */
	in.now_ns = 2 * SEC;
	in.blocking = true;
	in.state = 'S';
	vcputime_step(&a, &in, 0, &r);
	ck_assert_uint_eq(r.delta_ns[VT_HALTED], 1 * SEC);
	ck_assert_uint_eq(r.delta_ns[VT_VMM], 0);
	check_sum(&r);
	/* the halt ends at once (halt_wait_ns + 1 s); the thread then runs
	 * 500 ms and sleeps 500 ms in the VMM: not halted */
	in.now_ns = 3 * SEC;
	in.halt_wait_ns = 1 * SEC;
	in.run_ns += 500 * MS;
	in.stime += 50;
	in.blocking = false;
	in.state = 'S';
	vcputime_step(&a, &in, 0, &r);
	ck_assert_uint_eq(r.delta_ns[VT_HALTED], 0);
	ck_assert_uint_eq(r.delta_ns[VT_VMM], 500 * MS);
	ck_assert_uint_eq(r.delta_ns[VT_GUEST_KERNEL], 500 * MS);
	check_sum(&r);
	ck_assert_uint_eq(r.total_ns[VT_HALTED], 1 * SEC);
	ck_assert_uint_eq(a.ahead_ns, 0);
	/* a runnable thread with blocking set is waking: not halted on */
	in.now_ns = 4 * SEC;
	in.blocking = true;
	in.state = 'R';
	in.delay_ns += 1 * SEC;
	vcputime_step(&a, &in, 0, &r);
	ck_assert_uint_eq(r.delta_ns[VT_WAITING], 1 * SEC);
	ck_assert_uint_eq(r.delta_ns[VT_HALTED], 0);
	check_sum(&r);
}
END_TEST

/* Exit latency's times split guest from kernel where kvm_exit is timed. */
START_TEST(test_latency_split)
{
	struct vcputime_acc a = { 0 };
	struct vcputime_row r = { 0 };
	struct vcputime_in in = {
		.now_ns = 1 * SEC,
		.run_ns = 0,
		.state = 'R',
		.halt_known = true,
		.vmm_known = true,
		.exit_known = true,
		.exit_ns = 5 * SEC,
		.vmm_ns = 1 * SEC,
	};

	vcputime_step(&a, &in, 0, &r);
	/* the first reading has no latency before it: merged */
	ck_assert_uint_eq(r.merged, 1u << VT_GUEST_KERNEL);
	in.now_ns = 2 * SEC;
	in.run_ns = 1 * SEC;
	in.stime = 90;
	in.utime = 10;
	in.exit_ns += 400 * MS; /* 300 ms in the kernel, 100 in the VMM */
	in.vmm_ns += 100 * MS;
	vcputime_step(&a, &in, 0, &r);
	ck_assert_uint_eq(r.merged, 0);
	ck_assert_uint_eq(r.delta_ns[VT_VMM], 100 * MS);
	ck_assert_uint_eq(r.delta_ns[VT_KERNEL], 300 * MS);
	ck_assert_uint_eq(r.delta_ns[VT_GUEST], 600 * MS);
	check_sum(&r);
}
END_TEST

/* The first reading splits the thread's life; a skew that makes run and
 * wait longer than the interval stretches it; counters that go back
 * count nothing. */
START_TEST(test_edges)
{
	struct vcputime_acc a = { 0 };
	struct vcputime_row r = { 0 }, sum = { .vcpu = -1 };
	struct vcputime_in in = {
		.now_ns = 3 * SEC,
		.run_ns = 1 * SEC,
		.delay_ns = 1 * SEC,
		.stime = 10,
		.state = 'S',
	};

	vcputime_step(&a, &in, 1 * SEC, &r);
	ck_assert_uint_eq(r.interval_ns, 2 * SEC);
	ck_assert_uint_eq(r.delta_ns[VT_HALTED_VMM], 0);
	check_sum(&r);
	in.now_ns += 100 * MS;
	in.run_ns += 150 * MS;
	vcputime_step(&a, &in, 0, &r);
	ck_assert_uint_eq(r.interval_ns, 150 * MS);
	check_sum(&r);
	in.now_ns += 1 * SEC;
	in.run_ns = 0;
	in.delay_ns = 0;
	vcputime_step(&a, &in, 0, &r);
	ck_assert_uint_eq(r.delta_ns[VT_HALTED_VMM], 1 * SEC);
	check_sum(&r);
	/* a VM's sum: totals and deltas added, the longest interval */
	vcputime_add(&sum, &r);
	vcputime_add(&sum, &r);
	ck_assert_uint_eq(sum.delta_ns[VT_HALTED_VMM], 2 * SEC);
	ck_assert_uint_eq(sum.interval_ns, 1 * SEC);
	ck_assert_uint_eq(sum.merged, r.merged);
	ck_assert_str_eq(vcputime_state_name(VT_GUEST_KERNEL), "guest+kernel");
}
END_TEST

START_TEST(test_parse)
{
	struct taskstat t = { 0 };
	const char *stat =
		"4242 (CPU 0/KVM) S 1 4240 4240 0 -1 4194560 100 0 0 0 "
		"310 205 0 0 20 -5 9 0 123456 1000 200 18446744073709551615 "
		"1 1 0 0 0 0 0 4096 0 0 0 0 -1 3 0 0 0 150 0 0 0";

	ck_assert_int_eq(taskstat_parse_stat(stat, &t), 0);
	ck_assert_str_eq(t.comm, "CPU 0/KVM");
	ck_assert_int_eq(t.state, 'S');
	ck_assert_uint_eq(t.flags, 4194560);
	ck_assert_uint_eq(t.utime, 310);
	ck_assert_uint_eq(t.stime, 205);
	ck_assert_uint_eq(t.start_ticks, 123456);
	ck_assert_uint_eq(t.gtime, 150);
	/* a name with ") (" in it */
	ck_assert_int_eq(taskstat_parse_stat("7 (a) (b) R 1 1 1 0 -1 0 0 0 0 0 "
					     "4 5 0 0 20 0 1 0 99 0 0",
					     &t),
			 0);
	ck_assert_str_eq(t.comm, "a) (b");
	ck_assert_uint_eq(t.stime, 5);
	ck_assert_uint_eq(t.gtime, 0);
	ck_assert_int_eq(taskstat_parse_stat("7 (x", &t), -EINVAL);
	ck_assert_int_eq(taskstat_parse_stat("7 (x) R 1 2 zz", &t), -EINVAL);
	ck_assert_int_eq(taskstat_parse_stat("", &t), -EINVAL);
	ck_assert_int_eq(taskstat_parse_schedstat("12345 678 9\n", &t), 0);
	ck_assert_uint_eq(t.run_ns, 12345);
	ck_assert_uint_eq(t.delay_ns, 678);
	ck_assert_int_eq(taskstat_parse_schedstat("12345\n", &t), -EINVAL);
	ck_assert_int_eq(taskstat_parse_schedstat("x 1", &t), -EINVAL);
}
END_TEST

/* A fake thread's files under root, rewritten in place (kept fds see the
 * new text). */
static void put(const char *root, int pid, int tid, const char *file,
		const char *text)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/task", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/task/%d", root, pid, tid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/task/%d/%s", root, pid, tid, file);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* A thread: its name, state, ticks (user, system, guest), start tick,
 * run and wait in ns. */
static void thread(const char *root, int pid, int tid, const char *comm,
		   char state, int ut, int st, int gt, int start,
		   unsigned long long run, unsigned long long delay)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "%d (%s) %c 1 1 1 0 -1 0 0 0 0 0 %d %d 0 0 20 0 1 0 %d 0 0 0 0 "
		 "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 %d 0\n",
		 tid, comm, state, ut, st, start, gt);
	put(root, pid, tid, "stat", text);
	snprintf(text, sizeof(text), "%llu %llu 7\n", run, delay);
	put(root, pid, tid, "schedstat", text);
	snprintf(text, sizeof(text), "%s\n", comm);
	put(root, pid, tid, "comm", text);
}

static const struct vcputime_vm *find_vm(const struct vcputime *vt, pid_t pid)
{
	for (size_t i = 0; i < vt->nvms; i++)
		if (vt->vms[i].pid == pid)
			return &vt->vms[i];
	return NULL;
}

/* The collector over a fake /proc: VM 100 with two vCPU threads and a
 * main thread, a kernel vhost worker of it (pid 200), exact deltas, a
 * thread that goes, a malformed file. */
START_TEST(test_vtscan_fake_root)
{
	char root[] = "/tmp/kvmstat-vt.XXXXXX", path[600];
	uint64_t hz = taskstat_hz(), t0;
	const struct vcputime_vm *vm;
	const struct vcputime *vt;
	struct vtscan v;
	struct vmdir dir;
	struct vtscan_req req = { .watched = 100, .vms = &dir };

	vmdir_init(&dir);
	ck_assert_ptr_nonnull(mkdtemp(root));
	/* started at tick hz (1 s after boot) */
	thread(root, 100, 100, "qemu-system-x86", 'S', 5, 5, 0, (int)hz, 0, 0);
	thread(root, 100, 101, "CPU 0/KVM", 'R', 0, 0, 0, (int)hz, 0, 0);
	thread(root, 100, 102, "CPU 1/KVM", 'S', 0, 0, 0, (int)hz, 0, 0);
	thread(root, 200, 200, "vhost-100", 'S', 0, 1, 0, (int)hz, 0, 0);
	snprintf(path, sizeof(path), "%s/200/comm", root);
	{
		FILE *f = fopen(path, "w");

		ck_assert_ptr_nonnull(f);
		fputs("vhost-100\n", f);
		fclose(f);
	}
	/* its name, as every output gives it (Firecracker's --id) */
	snprintf(path, sizeof(path), "%s/100/cmdline", root);
	{
		FILE *f = fopen(path, "w");

		ck_assert_ptr_nonnull(f);
		fwrite("firecracker\0--id\0fc7\0", 1, 22, f);
		fclose(f);
	}
	ck_assert_int_eq(vtscan_open(&v, root, NULL), 0);
	t0 = 11 * SEC; /* 10 s after the threads started */
	req.now_ns = t0;
	vtscan_update(&v, &req);
	vt = vtscan_result(&v);
	vm = find_vm(vt, 100);
	ck_assert_ptr_nonnull(vm);
	ck_assert_uint_eq(vm->nvcpus, 2);
	ck_assert_pstr_eq(vm->guest, "fc7");
	ck_assert_str_eq(vmdir_find(&dir, 100)->vmm, "firecracker");
	ck_assert_int_eq(vm->vcpus[0].vcpu, 0);
	ck_assert_int_eq(vm->vcpus[0].tid, 101);
	ck_assert_int_eq(vm->vcpus[1].tid, 102);
	/* their lives: 10 s asleep each (no halt statistics: merged) */
	ck_assert_uint_eq(vm->vcpus[1].interval_ns, 10 * SEC);
	ck_assert_uint_eq(vm->vcpus[1].delta_ns[VT_HALTED_VMM], 10 * SEC);
	ck_assert_uint_eq(vm->nthreads, 2);
	ck_assert_int_eq(vm->threads[0].tid, 100);
	ck_assert_int_eq(vm->threads[1].tid, 200);
	ck_assert(vm->threads[1].vhost);
	ck_assert_str_eq(vm->threads[1].name, "vhost-100");

	/* one second: vCPU 0 runs 600 ms (ticks all system), waits 300 ms;
	 * vCPU 1 waits the whole second; the main thread runs 250 ms */
	thread(root, 100, 101, "CPU 0/KVM", 'R', 0, 60, 0, (int)hz, 600 * MS,
	       300 * MS);
	thread(root, 100, 102, "CPU 1/KVM", 'R', 0, 0, 0, (int)hz, 0, 1 * SEC);
	thread(root, 100, 100, "qemu-system-x86", 'S', 5, 5, 0, (int)hz,
	       250 * MS, 0);
	req.now_ns = t0 + 1 * SEC;
	vtscan_update(&v, &req);
	vt = vtscan_result(&v);
	vm = find_vm(vt, 100);
	ck_assert_ptr_nonnull(vm);
	ck_assert_uint_eq(vm->vcpus[0].interval_ns, 1 * SEC);
	ck_assert_uint_eq(vm->vcpus[0].delta_ns[VT_WAITING], 300 * MS);
	ck_assert_uint_eq(vm->vcpus[0].delta_ns[VT_GUEST_KERNEL], 600 * MS);
	ck_assert_uint_eq(vm->vcpus[0].delta_ns[VT_HALTED_VMM], 100 * MS);
	ck_assert_uint_eq(vm->vcpus[1].delta_ns[VT_WAITING], 1 * SEC);
	ck_assert_uint_eq(vm->sum.delta_ns[VT_WAITING], 1300 * MS);
	ck_assert_uint_eq(vm->sum.interval_ns, 1 * SEC);
	ck_assert_uint_eq(vm->threads[0].delta_ns, 250 * MS);
	ck_assert_uint_eq(vm->threads[0].interval_ns, 1 * SEC);
	ck_assert_uint_eq(vm->threads[0].total_ns, 250 * MS);

	/* vCPU 1 goes; the main thread's stat is malformed: both dropped */
	snprintf(path, sizeof(path), "rm -rf %s/100/task/102", root);
	ck_assert_int_eq(system(path), 0);
	put(root, 100, 100, "stat", "garbage\n");
	req.now_ns = t0 + 2 * SEC;
	vtscan_update(&v, &req);
	vm = find_vm(vtscan_result(&v), 100);
	ck_assert_ptr_nonnull(vm);
	ck_assert_uint_eq(vm->nvcpus, 1);
	ck_assert_uint_eq(vm->nthreads, 1);
	ck_assert_int_eq(vm->threads[0].tid, 200);

	/* the VM goes */
	snprintf(path, sizeof(path), "rm -rf %s/100", root);
	ck_assert_int_eq(system(path), 0);
	req.now_ns = t0 + 3 * SEC;
	vtscan_update(&v, &req);
	ck_assert_uint_eq(vtscan_result(&v)->nvms, 0);
	vtscan_close(&v);
	vmdir_free(&dir);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

Suite *vcputime_suite(void)
{
	Suite *s = suite_create("vcputime");
	TCase *tc = tcase_create("arithmetic");
	TCase *tp = tcase_create("proc");

	tcase_add_test(tc, test_guest_time_host);
	tcase_add_test(tc, test_merged_guest_kernel);
	tcase_add_test(tc, test_ongoing_halt);
	tcase_add_test(tc, test_latency_split);
	tcase_add_test(tc, test_edges);
	suite_add_tcase(s, tc);
	tcase_add_test(tp, test_parse);
	tcase_add_test(tp, test_vtscan_fake_root);
	suite_add_tcase(s, tp);
	return s;
}
