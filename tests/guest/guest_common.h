// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the two test guests share: kvmguest.c (x86) and kvmguest-arm64.c
 * (arm64) each include this file, so that each is still built by one
 * compiler invocation of its .c file.  Here are the stdout records and
 * error lines and the VM process (vCPU threads named as a VMM names them,
 * started on SIGUSR1, kept for the hold time, torn down); guest_launch.h,
 * included at the end, has the launcher (VM processes forked, signals
 * forwarded, children reaped, "ready" and "exit" printed), the options
 * both guests take and the -N/-C runs again with another command line.  A guest's own file keeps its guest code, its
 * kinds, its vCPU setup and exit loop, and its own options: the contract
 * is written below ("What a guest defines").  README.md next to this file
 * describes the tool.
 */
#ifndef KVMSTAT_GUEST_COMMON_H
#define KVMSTAT_GUEST_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/kvm.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * What a guest defines before it includes this file (with _GNU_SOURCE
 * defined before its first #include):
 *
 *   MAX_VCPUS                   the most vCPUs -v takes
 *   GUEST_CODE_GPA, GUEST_CODE_SIZE   its one memory slot
 *   enum kind                   with KIND_SPIN and KIND_IDLE (no exits)
 *   kinds[]                     one entry per kind, .name (as -k takes it)
 *   KIND_DEFAULT, KIND_NAMES    -k's default; the kinds as a message says
 *                               them ("pio, mmio, hlt, spin or idle")
 *   struct options_arch, OPTIONS_ARCH_DEFAULTS
 *                               its own options (opts.arch), their defaults
 *   struct vcpu_arch, struct vm_arch
 *                               what it keeps per vCPU and per VM
 *   short_options, long_options getopt_long's tables, common options
 *                               included (the order its errors list them)
 *
 * and after it, the functions declared under "What a guest defines" below.
 */

#define PROG "kvmguest"
#define MAX_VMS 1024
#define MAX_HOLD (7 * 24 * 3600.0)

static struct options {
	unsigned int vms;
	unsigned int vcpus;
	uint64_t exits; /* per vCPU; 0 = until the hold time ends */
	/* -n N,N...: the exits of each vCPU by index (the last repeats) */
	uint64_t exits_by[MAX_VCPUS];
	unsigned int nexits_by;
	enum kind kind;
	double hold; /* seconds */
	bool stats_fds;
	bool wait_signal;
	const char *name;    /* -N: the guest name QEMU's -name would give */
	const char *cmdline; /* -C: the command line a VMM's would read */
	int cpu;	     /* -c: the host CPU of every vCPU thread, or -1 */
	/* -T: vCPU thread names as a VMM gives them (printf with the
	 * index), or NULL: unnamed, the process's name */
	const char *thread_fmt;
	bool names_reversed;	  /* -T qemu-reversed: vCPU i named V-1-i */
	struct options_arch arch; /* the options only this guest has */
} opts = {
	.thread_fmt = "CPU %u/KVM",
	.cpu = -1,
	.vms = 1,
	.vcpus = 1,
	.exits = 1000,
	.kind = KIND_DEFAULT,
	.hold = 2.0,
	.arch = { OPTIONS_ARCH_DEFAULTS },
};

struct vm;

struct vcpu {
	struct vm *vm;
	unsigned int index;
	pthread_t thread;
	bool thread_started;
	int fd;
	int stats_fd;
	struct kvm_run *run;
	pid_t tid;
	uint64_t exits; /* of the kind, for the "done" record */
	int err;
	struct vcpu_arch arch;
};

struct vm {
	pid_t pid;
	int kvm_fd;
	int fd;
	int stats_fd;
	size_t run_size;
	void *mem;
	struct vcpu *vcpus;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int nr_setup; /* vCPU threads done with setup */
	unsigned int nr_done;  /* vCPU threads done running */
	bool setup_failed;
	bool started;	  /* vCPUs may run */
	bool quit;	  /* vCPU threads may return */
	atomic_bool stop; /* -n 0: stop running */
	struct vm_arch arch;
};

/* ---- What a guest defines ------------------------------------------ */

/* --help (f = stdout) or a bad command line's help (f = stderr). */
static void usage(FILE *f);

/* One of the guest's own options, c as getopt_long returned it, with
 * optarg: 0, or -EINVAL once it said what is wrong. */
static int parse_arch_option(int c);

/* Once all options are read: 0, or -EINVAL once it said what is wrong
 * (checked before the spin and idle kinds' -n 0). */
static int check_arch_options(void);

/* Makes the VM of a VM process (its kvm, VM and stats fds, memory and
 * irqchip), mostly with the helpers below; 0 or -errno, said on stderr. */
static int vm_setup(struct vm *vm);

/* Once every vCPU is set up, before the VM says it is ready: 0 or -errno. */
static int vm_setup_after_vcpus(struct vm *vm);

/* -n 0: what the VM process does while its vCPUs run, returning by
 * deadline (then the vCPUs are kicked). */
static void vm_while_running(struct vm *vm, const struct timespec *deadline);

/* Frees what vm_setup made beyond struct vm's shared fields. */
static void vm_arch_teardown(struct vm *vm);

/* In the vCPU's thread, named and pinned: creates and sets up the vCPU
 * (registers, kvm_run, stats fd); 0 or -errno, said on stderr. */
static int vcpu_setup(struct vcpu *vcpu);

/* In the vCPU's thread, instead of vcpu_setup when naming or pinning
 * it failed. */
static void vcpu_setup_skipped(struct vcpu *vcpu);

/* Runs the vCPU until its exits are made (or, with -n 0, until vm->stop
 * and a kick) and prints its "done" record: 0 or -errno, said on stderr. */
static int vcpu_loop(struct vcpu *vcpu);

/* The SIGUSR2 handler of vcpus_kick, installed before any vCPU thread
 * exists. */
static void kick_handler(int sig);

/* The name of exit reason KVM_EXIT_<name>, of those this architecture's
 * KVM gives, or "?". */
static const char *exit_reason_name(uint32_t reason);

/* ---- stdout records and stderr lines -------------------------------- */

/* Writes all of buf; one write() for anything shorter than PIPE_BUF. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= n;
	}
	return 0;
}

/* Formats prefix, fmt and a newline into one write(), so lines never mix. */
static void vwrite_line(int fd, const char *prefix, const char *fmt, va_list ap)
{
	char buf[512];
	int len, n;

	len = snprintf(buf, sizeof(buf), "%s", prefix);
	n = vsnprintf(buf + len, sizeof(buf) - len, fmt, ap);
	if (n < 0)
		return;
	len += n;
	if (len > (int)sizeof(buf) - 1)
		len = sizeof(buf) - 1;
	buf[len++] = '\n';
	write_all(fd, buf, len);
}

/* One stdout record (one line). */
__attribute__((format(printf, 1, 2))) static void emit(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwrite_line(STDOUT_FILENO, "", fmt, ap);
	va_end(ap);
}

/* One line on stderr, prefixed with the program name. */
__attribute__((format(printf, 1, 2))) static void error_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwrite_line(STDERR_FILENO, PROG ": ", fmt, ap);
	va_end(ap);
}

/* ---- time ------------------------------------------------------------ */

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + ts->tv_nsec;
}

/* CLOCK_MONOTONIC's time seconds from now. */
static struct timespec deadline_after(double seconds)
{
	struct timespec ts;
	uint64_t ns;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ns = ts_ns(&ts) + (uint64_t)(seconds * 1e9 + 0.5);
	ts.tv_sec = ns / 1000000000ull;
	ts.tv_nsec = ns % 1000000000ull;
	return ts;
}

static void sleep_until(const struct timespec *deadline)
{
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, deadline,
			       NULL) == EINTR)
		;
}

/* ---- VM process: the guest's VM setup calls these -------------------- */

/* The exits vCPU index makes (-n), 0: until the hold time ends. */
static uint64_t vcpu_exits(unsigned int index)
{
	if (!opts.nexits_by)
		return opts.exits;
	return opts.exits_by[index < opts.nexits_by ? index : opts.nexits_by - 1];
}

/* Does the kernel have capability cap (on /dev/kvm)? */
static bool has_cap(struct vm *vm, long cap)
{
	return ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, cap) > 0;
}

/* Opens /dev/kvm (vm->kvm_fd) and checks its API version. */
static int kvm_open(struct vm *vm)
{
	int ret, err;

	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0) {
		err = -errno;
		error_msg("vm %d: open /dev/kvm: %s", vm->pid, strerror(-err));
		return err;
	}
	ret = ioctl(vm->kvm_fd, KVM_GET_API_VERSION, NULL);
	if (ret < 0) {
		err = -errno;
		error_msg("vm %d: KVM_GET_API_VERSION on /dev/kvm: %s", vm->pid,
			  strerror(-err));
		return err;
	}
	if (ret != KVM_API_VERSION) {
		error_msg("vm %d: KVM API version %d, expected %d", vm->pid,
			  ret, KVM_API_VERSION);
		return -EINVAL;
	}
	return 0;
}

/* The size of a vCPU's kvm_run (vm->run_size), then the VM (vm->fd). */
static int vm_create(struct vm *vm)
{
	int ret, err;

	ret = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, NULL);
	if (ret < (int)sizeof(struct kvm_run)) {
		err = ret < 0 ? -errno : -EINVAL;
		error_msg("vm %d: KVM_GET_VCPU_MMAP_SIZE: %s", vm->pid,
			  ret < 0 ? strerror(-err) : "too small");
		return err;
	}
	vm->run_size = ret;

	do {
		vm->fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0UL);
	} while (vm->fd < 0 && errno == EINTR);
	if (vm->fd < 0) {
		err = -errno;
		error_msg("vm %d: KVM_CREATE_VM: %s", vm->pid, strerror(-err));
		return err;
	}
	return 0;
}

/* The VM's one memory slot (vm->mem, GUEST_CODE_SIZE bytes at
 * GUEST_CODE_GPA) with the len bytes of code at its start. */
static int vm_memory_setup(struct vm *vm, const void *code, size_t len)
{
	struct kvm_userspace_memory_region region;
	int err;

	vm->mem = mmap(NULL, GUEST_CODE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->mem == MAP_FAILED) {
		err = -errno;
		vm->mem = NULL;
		error_msg("vm %d: mmap guest memory: %s", vm->pid,
			  strerror(-err));
		return err;
	}
	memcpy(vm->mem, code, len);
	memset(&region, 0, sizeof(region));
	region.slot = 0;
	region.guest_phys_addr = GUEST_CODE_GPA;
	region.memory_size = GUEST_CODE_SIZE;
	region.userspace_addr = (uintptr_t)vm->mem;
	if (ioctl(vm->fd, KVM_SET_USER_MEMORY_REGION, &region) < 0) {
		err = -errno;
		error_msg("vm %d: KVM_SET_USER_MEMORY_REGION: %s", vm->pid,
			  strerror(-err));
		return err;
	}
	return 0;
}

/* -s: the VM's binary stats fd, kept open as QEMU 8.1+ keeps it. */
static int vm_stats_fd_open(struct vm *vm)
{
	int err;

	if (!opts.stats_fds)
		return 0;
	vm->stats_fd = ioctl(vm->fd, KVM_GET_STATS_FD, NULL);
	if (vm->stats_fd < 0) {
		err = -errno;
		error_msg("vm %d: KVM_GET_STATS_FD: %s", vm->pid,
			  strerror(-err));
		return err;
	}
	return 0;
}

/* Maps the vCPU's kvm_run (vcpu->run). */
static int vcpu_map_run(struct vcpu *vcpu)
{
	struct vm *vm = vcpu->vm;
	void *run;
	int err;

	run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   vcpu->fd, 0);
	if (run == MAP_FAILED) {
		err = -errno;
		error_msg("vm %d: vcpu %u: mmap kvm_run: %s", vm->pid,
			  vcpu->index, strerror(-err));
		return err;
	}
	vcpu->run = run;
	return 0;
}

/* -s: the vCPU's binary stats fd, kept open as QEMU 8.1+ keeps it. */
static int vcpu_stats_fd_open(struct vcpu *vcpu)
{
	int err;

	if (!opts.stats_fds)
		return 0;
	vcpu->stats_fd = ioctl(vcpu->fd, KVM_GET_STATS_FD, NULL);
	if (vcpu->stats_fd < 0) {
		err = -errno;
		error_msg("vm %d: vcpu %u: KVM_GET_STATS_FD: %s", vcpu->vm->pid,
			  vcpu->index, strerror(-err));
		return err;
	}
	return 0;
}

/* ---- vCPU run: the guest's exit loop calls these --------------------- */

/* One KVM_RUN: 0 when the vCPU exited to userspace (run->exit_reason says
 * why), 1 when it is to run again (a signal, EAGAIN), or -errno, said on
 * stderr. */
static int vcpu_run(struct vcpu *vcpu)
{
	int err;

	if (ioctl(vcpu->fd, KVM_RUN, NULL) >= 0)
		return 0;
	if (errno == EINTR || errno == EAGAIN)
		return 1;
	err = -errno;
	error_msg("vm %d: vcpu %u: KVM_RUN: %s", vcpu->vm->pid, vcpu->index,
		  strerror(-err));
	return err;
}

/* Says on stderr which exit the loop did not expect (the VM then fails),
 * with what KVM tells of it and the exits made before. */
static void report_bad_exit(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint32_t reason = run->exit_reason;
	char detail[96] = "";

	if (reason == KVM_EXIT_FAIL_ENTRY)
		snprintf(detail, sizeof(detail),
			 ", hardware entry failure reason 0x%llx",
			 (unsigned long long)
				 run->fail_entry.hardware_entry_failure_reason);
	else if (reason == KVM_EXIT_INTERNAL_ERROR)
		snprintf(detail, sizeof(detail), ", suberror %u",
			 run->internal.suberror);
	else if (reason == KVM_EXIT_SYSTEM_EVENT)
		snprintf(detail, sizeof(detail), ", type %u",
			 run->system_event.type);
	error_msg("vm %d: vcpu %u: unexpected exit reason %u (KVM_EXIT_%s)%s after %" PRIu64
		  " exits",
		  vcpu->vm->pid, vcpu->index, reason, exit_reason_name(reason),
		  detail, vcpu->exits);
}

/*
 * The "done" record of a vCPU: its exits, the ns from t0 to t1
 * (CLOCK_MONOTONIC, its first KVM_RUN to its last exit) and its thread's
 * CPU time from c0 to c1 (guest and KVM included: exits per CPU second
 * measure what monitoring costs the guest even on a loaded host, where
 * wall-clock rates mostly measure the load).
 */
static void emit_done(const struct vcpu *vcpu, const struct timespec *t0,
		      const struct timespec *t1, const struct timespec *c0,
		      const struct timespec *c1)
{
	emit("done %d %u %" PRIu64 " %" PRIu64 " %" PRIu64, vcpu->vm->pid,
	     vcpu->index, vcpu->exits, ts_ns(t1) - ts_ns(t0),
	     ts_ns(c1) - ts_ns(c0));
}

/* ---- VM process: vCPU threads, start, hold, teardown ----------------- */

/* -c: the vCPU's thread on one host CPU. */
static int vcpu_pin(struct vcpu *vcpu)
{
	cpu_set_t set;
	int err;

	if (opts.cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(opts.cpu, &set);
	err = -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err)
		error_msg("vm %d: vcpu %u: pinning to CPU %d: %s",
			  vcpu->vm->pid, vcpu->index, opts.cpu, strerror(-err));
	return err;
}

/* -n 0 ends: SIGUSR2 (kick_handler) takes each vCPU out of KVM_RUN, as
 * kinds that make no exits to userspace never leave it by themselves. */
static void vcpus_kick(struct vm *vm)
{
	for (unsigned int i = 0; i < opts.vcpus; i++)
		if (vm->vcpus[i].thread_started)
			pthread_kill(vm->vcpus[i].thread, SIGUSR2);
}

/*
 * A vCPU thread: named as -T says (QEMU's "CPU N/KVM" by default), pinned
 * (-c), its vCPU set up and announced ("vcpu" record); then it waits for
 * the VM's start, runs the vCPU and stays, with its vCPU, until the VM is
 * torn down.
 */
static void *vcpu_thread(void *arg)
{
	struct vcpu *vcpu = arg;
	struct vm *vm = vcpu->vm;
	char name[16];
	bool go;
	int err;

	vcpu->tid = gettid();
	err = 0;
	if (opts.thread_fmt) {
		/* qemu-reversed: names that lie, vCPU 0 as the last */
		snprintf(name, sizeof(name), opts.thread_fmt,
			 opts.names_reversed ? opts.vcpus - 1 - vcpu->index :
					       vcpu->index);
		err = -pthread_setname_np(pthread_self(), name);
	}
	if (err)
		error_msg("vm %d: vcpu %u: pthread_setname_np: %s", vm->pid,
			  vcpu->index, strerror(-err));
	else
		err = vcpu_pin(vcpu);
	if (!err)
		err = vcpu_setup(vcpu);
	else
		vcpu_setup_skipped(vcpu);
	if (!err)
		emit("vcpu %d %u %d", vm->pid, vcpu->index, vcpu->tid);

	pthread_mutex_lock(&vm->lock);
	if (err)
		vm->setup_failed = true;
	vm->nr_setup++;
	pthread_cond_broadcast(&vm->cond);
	while (!vm->started && !vm->quit)
		pthread_cond_wait(&vm->cond, &vm->lock);
	go = vm->started && !vm->quit && !err;
	pthread_mutex_unlock(&vm->lock);

	if (go)
		err = vcpu_loop(vcpu);
	vcpu->err = err;

	/* Keep the thread (and its vCPU) alive until the VM is torn down. */
	pthread_mutex_lock(&vm->lock);
	vm->nr_done++;
	pthread_cond_broadcast(&vm->cond);
	while (!vm->quit)
		pthread_cond_wait(&vm->cond, &vm->lock);
	pthread_mutex_unlock(&vm->lock);
	return NULL;
}

/* Ends the vCPU threads and closes what the VM opened. */
static void vm_teardown(struct vm *vm)
{
	unsigned int i;

	pthread_mutex_lock(&vm->lock);
	vm->quit = true;
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);

	for (i = 0; i < opts.vcpus; i++) {
		struct vcpu *vcpu = &vm->vcpus[i];

		if (vcpu->thread_started)
			pthread_join(vcpu->thread, NULL);
		if (vcpu->stats_fd >= 0)
			close(vcpu->stats_fd);
		if (vcpu->run)
			munmap(vcpu->run, vm->run_size);
		if (vcpu->fd >= 0)
			close(vcpu->fd);
	}
	free(vm->vcpus);
	vm_arch_teardown(vm);
	if (vm->stats_fd >= 0)
		close(vm->stats_fd);
	if (vm->fd >= 0)
		close(vm->fd);
	if (vm->mem)
		munmap(vm->mem, GUEST_CODE_SIZE);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	pthread_cond_destroy(&vm->cond);
	pthread_mutex_destroy(&vm->lock);
}

/* Waits, with vm->lock held, until *count reaches opts.vcpus. */
static void vm_wait_count(struct vm *vm, unsigned int *count)
{
	while (*count < opts.vcpus)
		pthread_cond_wait(&vm->cond, &vm->lock);
}

/* The body of one VM process; returns its exit status. */
static int vm_main(int ready_fd)
{
	struct vm vm = {
		.pid = getpid(),
		.kvm_fd = -1,
		.fd = -1,
		.stats_fd = -1,
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	struct sigaction kick = { .sa_handler = kick_handler };
	struct timespec deadline;
	sigset_t usr1;
	unsigned int i;
	bool failed;
	int err, sig;

	atomic_init(&vm.stop, false);
	vm.vcpus = calloc(opts.vcpus, sizeof(*vm.vcpus));
	if (!vm.vcpus) {
		error_msg("vm %d: out of memory", vm.pid);
		close(ready_fd);
		return 1;
	}
	for (i = 0; i < opts.vcpus; i++) {
		vm.vcpus[i].vm = &vm;
		vm.vcpus[i].index = i;
		vm.vcpus[i].fd = -1;
		vm.vcpus[i].stats_fd = -1;
	}

	err = vm_setup(&vm);
	if (err)
		goto fail;
	/* -n 0's kick (vcpus_kick), before any vCPU thread exists */
	sigaction(SIGUSR2, &kick, NULL);
	emit("vm %d", vm.pid);

	for (i = 0; i < opts.vcpus; i++) {
		struct vcpu *vcpu = &vm.vcpus[i];

		err = -pthread_create(&vcpu->thread, NULL, vcpu_thread, vcpu);
		if (err) {
			error_msg("vm %d: pthread_create: %s", vm.pid,
				  strerror(-err));
			goto fail;
		}
		vcpu->thread_started = true;
	}
	pthread_mutex_lock(&vm.lock);
	vm_wait_count(&vm, &vm.nr_setup);
	failed = vm.setup_failed;
	pthread_mutex_unlock(&vm.lock);
	if (failed || vm_setup_after_vcpus(&vm))
		goto fail;

	/* Set up: wait for SIGUSR1 (blocked since the fork) and start. */
	err = write_all(ready_fd, (const char *)&vm.pid, sizeof(vm.pid));
	close(ready_fd);
	ready_fd = -1;
	if (err) {
		error_msg("vm %d: readiness pipe: %s", vm.pid, strerror(-err));
		goto fail;
	}
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	do {
		sig = sigwaitinfo(&usr1, NULL);
	} while (sig < 0 && errno == EINTR);

	pthread_mutex_lock(&vm.lock);
	vm.started = true;
	pthread_cond_broadcast(&vm.cond);
	pthread_mutex_unlock(&vm.lock);

	if (!opts.exits) {
		deadline = deadline_after(opts.hold);
		vm_while_running(&vm, &deadline);
		sleep_until(&deadline);
		atomic_store(&vm.stop, true);
		vcpus_kick(&vm);
	}
	pthread_mutex_lock(&vm.lock);
	vm_wait_count(&vm, &vm.nr_done);
	pthread_mutex_unlock(&vm.lock);

	failed = false;
	for (i = 0; i < opts.vcpus; i++)
		failed |= vm.vcpus[i].err != 0;
	if (opts.exits && !failed) {
		deadline = deadline_after(opts.hold);
		sleep_until(&deadline);
	}
	vm_teardown(&vm);
	return failed ? 1 : 0;

fail:
	if (ready_fd >= 0)
		close(ready_fd);
	vm_teardown(&vm);
	return 1;
}

/* the launcher and the options: guest_launch.h */
#include "guest_launch.h"

#endif /* KVMSTAT_GUEST_COMMON_H */
