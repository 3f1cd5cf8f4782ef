// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmguest: a tiny VMM, without QEMU, that starts real KVM guests whose exits
 * are exactly known.  It is the workload of the whole-program tests and the
 * benchmarks of kvmstat.  A launcher forks one process per VM; each VM runs
 * its vCPUs in threads named like QEMU's ("CPU N/KVM"), and every vCPU runs a
 * few bytes of 16-bit real-mode code that makes port I/O, MMIO or HLT exits to
 * userspace.  Each vCPU stops after exactly N exits of the chosen kind, so the
 * counts kvmstat reports can be compared with the ones printed here.  The
 * output format is described in README.md next to this file.
 */
#define _GNU_SOURCE
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

#define PROG "kvmguest"
#define MAX_VMS 1024
#define MAX_VCPUS 1024
#define MAX_HOLD (7 * 24 * 3600.0)

/* Guest-physical layout: one page of code; the MMIO target is in no slot. */
#define GUEST_CODE_GPA 0x1000
#define GUEST_CODE_SIZE 0x1000
#define GUEST_MMIO_GPA 0x8000
#define GUEST_PIO_PORT 0x10
/* Only used by VMX without unrestricted guest; harmless elsewhere. */
#define GUEST_TSS_GPA 0xfffbd000

enum kind {
	KIND_PIO,
	KIND_MMIO,
	KIND_HLT,
	KIND_SPIN, /* no exits: see "spin and idle" below */
	KIND_IDLE,
};

/* 16-bit real-mode loops; each iteration makes one exit of the kind. */
static const uint8_t code_pio[] = {
	0xba, GUEST_PIO_PORT, 0, /* 0: mov dx, port (--port patches it) */
	0xee,			 /* 3: out dx, al */
	0xeb, 0xfd,		 /* 4: jmp 3 */
};
static const uint8_t code_mmio[] = {
	0xa2,
	GUEST_MMIO_GPA & 0xff, /* 0: mov [GUEST_MMIO_GPA], al */
	GUEST_MMIO_GPA >> 8,
	0xeb,
	0xfb, /* 3: jmp 0 */
};
static const uint8_t code_hlt[] = {
	0xf4,	    /* 0: hlt */
	0xeb, 0xfd, /* 1: jmp 0 */
};

/* spin: runs guest code, never exits; idle: halts with interrupts off,
 * in the kernel (an in-kernel irqchip), never woken */
static const uint8_t code_spin[] = {
	0xeb, 0xfe, /* 0: jmp 0 */
};
static const uint8_t code_idle[] = {
	0xfa,	    /* 0: cli */
	0xf4,	    /* 1: hlt */
	0xeb, 0xfd, /* 2: jmp 1 */
};

static const struct kind_info {
	const char *name;
	uint32_t exit_reason;
	const uint8_t *code;
	size_t code_len;
} kinds[] = {
	[KIND_PIO] = { "pio", KVM_EXIT_IO, code_pio, sizeof(code_pio) },
	[KIND_MMIO] = { "mmio", KVM_EXIT_MMIO, code_mmio, sizeof(code_mmio) },
	[KIND_HLT] = { "hlt", KVM_EXIT_HLT, code_hlt, sizeof(code_hlt) },
	[KIND_SPIN] = { "spin", UINT32_MAX, code_spin, sizeof(code_spin) },
	[KIND_IDLE] = { "idle", UINT32_MAX, code_idle, sizeof(code_idle) },
};

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
	/* -u: µs each vCPU spends in user space after each exit before it
	 * runs the guest again, by vCPU index (the last repeats) */
	uint64_t user_us[MAX_VCPUS];
	unsigned int nuser_us;
	uint64_t progress_ns; /* "tick" lines this often; 0: none */
	uint64_t port;	      /* --port: the pio kind's port */
	uint64_t mmio_addr;   /* --mmio-addr: the mmio kind's address */
	int cpu;	      /* -c: the host CPU of every vCPU thread, or -1 */
	uint64_t wake_ns;     /* -W: idle vCPUs woken this often; 0: never */
	/* -T: vCPU thread names as a VMM gives them (printf with the
	 * index), or NULL: unnamed, the process's name */
	const char *thread_fmt;
	bool names_reversed; /* -T qemu-reversed: vCPU i named V-1-i */
} opts = {
	.thread_fmt = "CPU %u/KVM",
	.cpu = -1,
	.port = GUEST_PIO_PORT,
	.mmio_addr = GUEST_MMIO_GPA,
	.vms = 1,
	.vcpus = 1,
	.exits = 1000,
	.kind = KIND_PIO,
	.hold = 2.0,
};

struct vm;

/* The exits vCPU index makes (-n), 0: until the hold time ends. */
static uint64_t vcpu_exits(unsigned int index)
{
	if (!opts.nexits_by)
		return opts.exits;
	return opts.exits_by[index < opts.nexits_by ? index : opts.nexits_by - 1];
}

struct vcpu {
	struct vm *vm;
	unsigned int index;
	pthread_t thread;
	bool thread_started;
	int fd;
	int stats_fd;
	struct kvm_run *run;
	pid_t tid;
	uint64_t exits;
	uint64_t other_exits;
	uint64_t spins_per_us; /* -u's spin loop, as last timed (0: not yet) */
	int err;
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
};

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

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + ts->tv_nsec;
}

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

static const char *exit_reason_name(uint32_t reason)
{
	static const char *const names[] = {
		[KVM_EXIT_UNKNOWN] = "UNKNOWN",
		[KVM_EXIT_EXCEPTION] = "EXCEPTION",
		[KVM_EXIT_IO] = "IO",
		[KVM_EXIT_HYPERCALL] = "HYPERCALL",
		[KVM_EXIT_DEBUG] = "DEBUG",
		[KVM_EXIT_HLT] = "HLT",
		[KVM_EXIT_MMIO] = "MMIO",
		[KVM_EXIT_IRQ_WINDOW_OPEN] = "IRQ_WINDOW_OPEN",
		[KVM_EXIT_SHUTDOWN] = "SHUTDOWN",
		[KVM_EXIT_FAIL_ENTRY] = "FAIL_ENTRY",
		[KVM_EXIT_INTR] = "INTR",
		[KVM_EXIT_SET_TPR] = "SET_TPR",
		[KVM_EXIT_TPR_ACCESS] = "TPR_ACCESS",
		[KVM_EXIT_NMI] = "NMI",
		[KVM_EXIT_INTERNAL_ERROR] = "INTERNAL_ERROR",
		[KVM_EXIT_SYSTEM_EVENT] = "SYSTEM_EVENT",
	};

	if (reason < sizeof(names) / sizeof(names[0]) && names[reason])
		return names[reason];
	return "?";
}

/* ---- VM process ---------------------------------------------------- */

static int vcpu_setup(struct vcpu *vcpu)
{
	struct vm *vm = vcpu->vm;
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	struct kvm_segment *segs[] = {
		&sregs.cs, &sregs.ds, &sregs.es,
		&sregs.fs, &sregs.gs, &sregs.ss,
	};
	void *run;
	size_t i;
	int err;

	vcpu->fd = ioctl(vm->fd, KVM_CREATE_VCPU, (unsigned long)vcpu->index);
	if (vcpu->fd < 0) {
		err = -errno;
		error_msg("vm %d: KVM_CREATE_VCPU %u: %s", vm->pid, vcpu->index,
			  strerror(-err));
		return err;
	}
	run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   vcpu->fd, 0);
	if (run == MAP_FAILED) {
		err = -errno;
		error_msg("vm %d: vcpu %u: mmap kvm_run: %s", vm->pid,
			  vcpu->index, strerror(-err));
		return err;
	}
	vcpu->run = run;

	/* Flat real mode: all segments at 0, so CS:IP = GUEST_CODE_GPA. */
	if (ioctl(vcpu->fd, KVM_GET_SREGS, &sregs) < 0) {
		err = -errno;
		error_msg("vm %d: vcpu %u: KVM_GET_SREGS: %s", vm->pid,
			  vcpu->index, strerror(-err));
		return err;
	}
	for (i = 0; i < sizeof(segs) / sizeof(segs[0]); i++) {
		segs[i]->base = 0;
		segs[i]->selector = 0;
	}
	if (ioctl(vcpu->fd, KVM_SET_SREGS, &sregs) < 0) {
		err = -errno;
		error_msg("vm %d: vcpu %u: KVM_SET_SREGS: %s", vm->pid,
			  vcpu->index, strerror(-err));
		return err;
	}
	memset(&regs, 0, sizeof(regs));
	regs.rip = GUEST_CODE_GPA;
	regs.rflags = 0x2; /* reserved bit 1; interrupts off */
	if (ioctl(vcpu->fd, KVM_SET_REGS, &regs) < 0) {
		err = -errno;
		error_msg("vm %d: vcpu %u: KVM_SET_REGS: %s", vm->pid,
			  vcpu->index, strerror(-err));
		return err;
	}

	if (opts.stats_fds) {
		vcpu->stats_fd = ioctl(vcpu->fd, KVM_GET_STATS_FD, NULL);
		if (vcpu->stats_fd < 0) {
			err = -errno;
			error_msg("vm %d: vcpu %u: KVM_GET_STATS_FD: %s",
				  vm->pid, vcpu->index, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* Checks that an exit of the expected reason is the guest's own access. */
static int check_exit(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	struct kvm_regs regs;

	switch (opts.kind) {
	case KIND_PIO:
		if (run->io.direction == KVM_EXIT_IO_OUT &&
		    run->io.port == opts.port && run->io.size == 1 &&
		    run->io.count == 1)
			return 0;
		error_msg("vm %d: vcpu %u: unexpected port I/O: %s port 0x%x size %u count %u",
			  vcpu->vm->pid, vcpu->index,
			  run->io.direction == KVM_EXIT_IO_OUT ? "out" : "in",
			  run->io.port, run->io.size, run->io.count);
		return -EIO;
	case KIND_MMIO:
		if (run->mmio.is_write &&
		    run->mmio.phys_addr == opts.mmio_addr && run->mmio.len == 1)
			return 0;
		error_msg("vm %d: vcpu %u: unexpected MMIO: %s 0x%llx len %u",
			  vcpu->vm->pid, vcpu->index,
			  run->mmio.is_write ? "write" : "read",
			  (unsigned long long)run->mmio.phys_addr,
			  run->mmio.len);
		return -EIO;
	case KIND_HLT:
		/* Once: KVM_RUN must resume after the hlt, so the guest loops. */
		if (vcpu->exits)
			return 0;
		if (ioctl(vcpu->fd, KVM_GET_REGS, &regs) < 0) {
			error_msg("vm %d: vcpu %u: KVM_GET_REGS: %s",
				  vcpu->vm->pid, vcpu->index, strerror(errno));
			return -errno;
		}
		if (regs.rip == GUEST_CODE_GPA + 1)
			return 0;
		error_msg("vm %d: vcpu %u: after the HLT exit RIP is 0x%llx, not 0x%x",
			  vcpu->vm->pid, vcpu->index,
			  (unsigned long long)regs.rip, GUEST_CODE_GPA + 1);
		return -EIO;
	case KIND_SPIN:
	case KIND_IDLE:
		break; /* no exit is theirs */
	}
	return -EINVAL;
}

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
	error_msg("vm %d: vcpu %u: unexpected exit reason %u (KVM_EXIT_%s)%s after %" PRIu64
		  " exits",
		  vcpu->vm->pid, vcpu->index, reason, exit_reason_name(reason),
		  detail, vcpu->exits);
}

/* Spins n times in user space, making no system call. */
static void spin_user(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		__asm__ volatile("" ::: "memory");
}

/*
 * -u: busy in user space for us µs, as a VMM handling an exit would be.
 * The clock is read only every 50 µs or so, between runs of a spin loop
 * timed as it goes: where the clock is read by a system call (a kernel
 * that found the TSC unstable reads the HPET, which the vDSO cannot), a
 * loop of clock reads would spend most of its time in the kernel.
 */
static void spend_user(struct vcpu *vcpu)
{
	const uint64_t chunk_us = 50;
	struct timespec now;
	uint64_t us, end, t, left_us, n, d;

	if (!opts.nuser_us)
		return;
	us = opts.user_us[vcpu->index < opts.nuser_us ? vcpu->index :
							opts.nuser_us - 1];
	if (!us)
		return;
	if (!vcpu->spins_per_us)
		vcpu->spins_per_us = 1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	t = ts_ns(&now);
	end = t + us * 1000;
	while (t < end) {
		left_us = (end - t + 999) / 1000;
		n = vcpu->spins_per_us *
		    (left_us < chunk_us ? left_us : chunk_us);
		spin_user(n);
		clock_gettime(CLOCK_MONOTONIC, &now);
		/* each chunk times the next (one preempted only makes the
		 * next ones shorter for a while) */
		d = ts_ns(&now) - t;
		vcpu->spins_per_us = d ? n * 1000 / d : 2 * vcpu->spins_per_us;
		if (!vcpu->spins_per_us)
			vcpu->spins_per_us = 1;
		t = ts_ns(&now);
	}
}

/* ---- spin and idle, pinning (kvmstat --vcpu-time's tests) ------------ */

/* idle: KVM's in-kernel irqchip, so that HLT blocks in the kernel. */
static int idle_irqchip(struct vm *vm)
{
	if (opts.kind != KIND_IDLE || !ioctl(vm->fd, KVM_CREATE_IRQCHIP, 0))
		return 0;
	error_msg("vm %d: KVM_CREATE_IRQCHIP: %s", vm->pid, strerror(errno));
	return -errno;
}

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

static void kick_handler(int sig)
{
	(void)sig;
}

/* -n 0 ends: a signal takes each vCPU out of KVM_RUN (spin and idle
 * never exit by themselves). */
static void vcpus_kick(struct vm *vm)
{
	struct sigaction sa = { .sa_handler = kick_handler };

	sigaction(SIGUSR2, &sa, NULL);
	for (unsigned int i = 0; i < opts.vcpus; i++)
		if (vm->vcpus[i].thread_started)
			pthread_kill(vm->vcpus[i].thread, SIGUSR2);
}

/* -W: until the deadline, a signal every wake_ns ends each idle vCPU's
 * halt in the kernel, which KVM counts as one wait (halt_wait_ns,
 * halt_wait_hist); KVM_RUN returns EINTR and the vCPU halts again. */
static void vcpus_wake(struct vm *vm, const struct timespec *deadline)
{
	struct timespec next, now;

	if (!opts.wake_ns)
		return;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (ts_ns(&now) + opts.wake_ns >= ts_ns(deadline))
			return;
		next.tv_sec = (ts_ns(&now) + opts.wake_ns) / 1000000000ull;
		next.tv_nsec = (ts_ns(&now) + opts.wake_ns) % 1000000000ull;
		sleep_until(&next);
		vcpus_kick(vm);
	}
}

/* ---------------------------------------------------------------------- */

/* Runs until N exits of the chosen kind (or until stopped with -n 0). */
static int vcpu_loop(struct vcpu *vcpu)
{
	const uint32_t want = kinds[opts.kind].exit_reason;
	struct kvm_run *run = vcpu->run;
	struct vm *vm = vcpu->vm;
	struct timespec t0, t1, c0, c1;
	uint64_t next_tick = 0;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	if (opts.progress_ns)
		next_tick = ts_ns(&t0) + opts.progress_ns;
	for (;;) {
		/* every 1024 exits, a look at the clock (as cheap in every
		 * block a bench compares) */
		if (next_tick && !(vcpu->exits & 1023)) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			if (ts_ns(&t1) >= next_tick) {
				clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
				emit("tick %d %u %" PRIu64 " %" PRIu64
				     " %" PRIu64,
				     vm->pid, vcpu->index, vcpu->exits,
				     ts_ns(&t1) - ts_ns(&t0),
				     ts_ns(&c1) - ts_ns(&c0));
				next_tick = ts_ns(&t1) + opts.progress_ns;
			}
		}
		if (opts.exits ? vcpu->exits >= vcpu_exits(vcpu->index) :
				 atomic_load_explicit(&vm->stop,
						      memory_order_relaxed))
			break;
		if (ioctl(vcpu->fd, KVM_RUN, NULL) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			err = -errno;
			error_msg("vm %d: vcpu %u: KVM_RUN: %s", vm->pid,
				  vcpu->index, strerror(-err));
			return err;
		}
		if (run->exit_reason == want) {
			err = check_exit(vcpu);
			if (err)
				return err;
			vcpu->exits++;
			if (!opts.exits || vcpu->exits < vcpu_exits(vcpu->index))
				spend_user(vcpu);
			continue;
		}
		switch (run->exit_reason) {
		case KVM_EXIT_INTR:
			break;
		case KVM_EXIT_UNKNOWN:
		case KVM_EXIT_EXCEPTION:
		case KVM_EXIT_SHUTDOWN:
		case KVM_EXIT_FAIL_ENTRY:
		case KVM_EXIT_INTERNAL_ERROR:
		case KVM_EXIT_SYSTEM_EVENT:
			report_bad_exit(vcpu);
			return -EIO;
		default:
			vcpu->other_exits++;
			break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);

	if (vcpu->other_exits)
		error_msg("vm %d: vcpu %u: ignored %" PRIu64
			  " exits of other reasons",
			  vm->pid, vcpu->index, vcpu->other_exits);
	/* CPUNSEC: the thread's CPU time, guest and KVM included; exits per
	 * CPU second measure what monitoring costs the guest even on a
	 * loaded host, where wall-clock rates mostly measure the load */
	emit("done %d %u %" PRIu64 " %" PRIu64 " %" PRIu64, vm->pid,
	     vcpu->index, vcpu->exits, ts_ns(&t1) - ts_ns(&t0),
	     ts_ns(&c1) - ts_ns(&c0));
	return 0;
}

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

static int vm_setup(struct vm *vm)
{
	const struct kind_info *k = &kinds[opts.kind];
	struct kvm_userspace_memory_region region;
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
	if (opts.stats_fds && ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION,
				    KVM_CAP_BINARY_STATS_FD) <= 0) {
		error_msg("vm %d: this kernel does not support KVM_GET_STATS_FD (KVM_CAP_BINARY_STATS_FD)",
			  vm->pid);
		return -EOPNOTSUPP;
	}
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
	if (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SET_TSS_ADDR) > 0 &&
	    ioctl(vm->fd, KVM_SET_TSS_ADDR, (unsigned long)GUEST_TSS_GPA) < 0) {
		err = -errno;
		error_msg("vm %d: KVM_SET_TSS_ADDR: %s", vm->pid,
			  strerror(-err));
		return err;
	}

	vm->mem = mmap(NULL, GUEST_CODE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->mem == MAP_FAILED) {
		err = -errno;
		vm->mem = NULL;
		error_msg("vm %d: mmap guest memory: %s", vm->pid,
			  strerror(-err));
		return err;
	}
	memcpy(vm->mem, k->code, k->code_len);
	/* the port (mov dx, imm16) or the address (mov [imm16], al) asked */
	if (opts.kind == KIND_PIO || opts.kind == KIND_MMIO) {
		uint64_t a = opts.kind == KIND_PIO ? opts.port : opts.mmio_addr;

		((uint8_t *)vm->mem)[1] = (uint8_t)a;
		((uint8_t *)vm->mem)[2] = (uint8_t)(a >> 8);
	}
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

	err = idle_irqchip(vm);
	if (err)
		return err;
	if (opts.stats_fds) {
		vm->stats_fd = ioctl(vm->fd, KVM_GET_STATS_FD, NULL);
		if (vm->stats_fd < 0) {
			err = -errno;
			error_msg("vm %d: KVM_GET_STATS_FD: %s", vm->pid,
				  strerror(-err));
			return err;
		}
	}
	return 0;
}

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
	if (failed)
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
		vcpus_wake(&vm, &deadline);
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

/* ---- launcher -------------------------------------------------------- */

struct child {
	pid_t pid;
	bool alive;
	bool ready;
};

struct launcher {
	struct child *children;
	unsigned int nr_children; /* forked */
	unsigned int nr_alive;
	unsigned int nr_ready;
	int ready_fd; /* read end; -1 after EOF */
	bool printed_ready;
	bool failed;
	bool aborting; /* a VM failed its setup */
	int term_sig;  /* SIGTERM/SIGINT/SIGHUP received */
};

static void signal_children(struct launcher *l, int sig)
{
	unsigned int i;

	for (i = 0; i < l->nr_children; i++)
		if (l->children[i].alive)
			kill(l->children[i].pid, sig);
}

static struct child *find_child(struct launcher *l, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < l->nr_children; i++)
		if (l->children[i].pid == pid)
			return &l->children[i];
	return NULL;
}

static void check_all_ready(struct launcher *l)
{
	if (l->printed_ready || l->nr_ready < opts.vms)
		return;
	emit("ready");
	l->printed_ready = true;
	if (!opts.wait_signal)
		signal_children(l, SIGUSR1);
}

static void read_ready(struct launcher *l)
{
	pid_t pids[64];
	ssize_t n, i;

	while (l->ready_fd >= 0) {
		n = read(l->ready_fd, pids, sizeof(pids));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				error_msg("readiness pipe: %s", strerror(errno));
			break;
		}
		if (n == 0) {
			close(l->ready_fd);
			l->ready_fd = -1;
			break;
		}
		/* Each record is one write() of less than PIPE_BUF. */
		for (i = 0; i < n / (ssize_t)sizeof(pid_t); i++) {
			struct child *c = find_child(l, pids[i]);

			if (c && !c->ready) {
				c->ready = true;
				l->nr_ready++;
			}
		}
	}
	check_all_ready(l);
}

static void reap_children(struct launcher *l)
{
	struct child *c;
	int status;
	pid_t pid;

	/* A VM may have said it is ready just before it exited. */
	read_ready(l);
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		c = find_child(l, pid);
		if (!c || !c->alive)
			continue;
		c->alive = false;
		l->nr_alive--;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			continue;
		l->failed = true;
		if (WIFEXITED(status))
			error_msg("VM process %d exited with status %d", pid,
				  WEXITSTATUS(status));
		else if (WIFSIGNALED(status) && !l->term_sig && !l->aborting)
			error_msg("VM process %d killed by signal %d", pid,
				  WTERMSIG(status));
		if (!c->ready && !l->printed_ready && !l->aborting &&
		    !l->term_sig) {
			error_msg("VM process %d failed during setup, stopping the others",
				  pid);
			l->aborting = true;
			signal_children(l, SIGTERM);
		}
	}
}

static int launcher_loop(struct launcher *l, int sfd)
{
	struct signalfd_siginfo si;
	struct pollfd pfd[2];
	ssize_t n;

	while (l->nr_alive) {
		pfd[0].fd = sfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = l->ready_fd; /* ignored when -1 */
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			error_msg("poll: %s", strerror(errno));
			return -errno;
		}
		if (pfd[1].revents)
			read_ready(l);
		if (!(pfd[0].revents & POLLIN))
			continue;
		n = read(sfd, &si, sizeof(si));
		if (n != sizeof(si))
			continue;
		switch (si.ssi_signo) {
		case SIGCHLD:
			reap_children(l);
			break;
		case SIGUSR1:
			signal_children(l, SIGUSR1);
			break;
		default: /* SIGTERM, SIGINT, SIGHUP */
			if (!l->term_sig)
				l->term_sig = si.ssi_signo;
			signal_children(l, si.ssi_signo);
			break;
		}
	}
	return 0;
}

/* The "-Name" word of a run by exec_named (a VM process makes it
 * "-name"), or NULL. */
static char *name_word;

static int launch(void)
{
	struct launcher l = { .ready_fd = -1 };
	sigset_t mask, child_mask;
	pid_t parent = getpid();
	int pipefd[2], sfd, status, sig;
	unsigned int i;
	pid_t pid;

	/*
	 * Blocked before the fork: the VMs then keep an early SIGUSR1 pending
	 * until they are set up, and the launcher reads signals from a signalfd.
	 * Default actions, since a shell starts background jobs with SIGINT
	 * ignored: the VMs must die of the SIGINT the launcher forwards, and
	 * an ignored SIGCHLD would reap them behind the launcher's back.
	 */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(&mask, sig) == 1)
			signal(sig, SIG_DFL);
	sigemptyset(&child_mask);
	sigaddset(&child_mask, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0) {
		error_msg("sigprocmask: %s", strerror(errno));
		return 1;
	}
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		error_msg("signalfd: %s", strerror(errno));
		return 1;
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		error_msg("pipe: %s", strerror(errno));
		return 1;
	}
	l.children = calloc(opts.vms, sizeof(*l.children));
	if (!l.children) {
		error_msg("out of memory");
		return 1;
	}

	for (i = 0; i < opts.vms; i++) {
		pid = fork();
		if (pid < 0) {
			error_msg("fork: %s", strerror(errno));
			l.failed = true;
			l.aborting = true;
			signal_children(&l, SIGTERM);
			break;
		}
		if (pid == 0) {
			close(sfd);
			close(pipefd[0]);
			free(l.children);
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ||
			    getppid() != parent)
				_exit(1);
			sigprocmask(SIG_SETMASK, &child_mask, NULL);
			/* a VM process says "-name", as a QEMU process does */
			if (name_word)
				name_word[1] = 'n';
			exit(vm_main(pipefd[1]));
		}
		l.children[i].pid = pid;
		l.children[i].alive = true;
		l.nr_children++;
		l.nr_alive++;
	}
	close(pipefd[1]);
	l.ready_fd = pipefd[0];
	if (fcntl(l.ready_fd, F_SETFL, O_NONBLOCK) < 0)
		error_msg("fcntl: %s", strerror(errno));

	if (launcher_loop(&l, sfd) < 0) {
		/* Cannot wait for events: stop and reap the VMs the plain way. */
		l.failed = true;
		signal_children(&l, SIGKILL);
		while (wait(&status) > 0 || errno == EINTR)
			;
	}
	emit("exit");

	if (l.ready_fd >= 0)
		close(l.ready_fd);
	close(sfd);
	free(l.children);
	if (l.term_sig)
		return 128 + l.term_sig;
	return l.failed ? 1 : 0;
}

/* ---- options --------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [OPTION]...\n"
		"Start KVM guests whose exits are exactly known (kvmstat tests).\n"
		"\n"
		"  -m, --vms M          number of VM processes (default 1)\n"
		"  -v, --vcpus V        vCPU threads per VM (default 1)\n"
		"  -n, --exits N[,N]... exits per vCPU (default 1000), or by vCPU\n"
		"                       index (the last repeats); 0 = run until\n"
		"                       the hold time ends\n"
		"  -k, --kind KIND      pio, mmio or hlt (default pio); spin (guest\n"
		"                       code, no exits) or idle (HLT in the kernel\n"
		"                       with interrupts off), both with -n 0\n"
		"  -c, --cpu CPU        pin every vCPU thread to host CPU CPU\n"
		"  -W, --wake MS        with -k idle, end each vCPU's halt every MS\n"
		"                       milliseconds (a signal; KVM counts the wait\n"
		"                       in halt_wait_ns and halt_wait_hist)\n"
		"  -t, --hold SECONDS   keep the VMs alive this long after the exits;\n"
		"                       with -n 0, run this long (default 2)\n"
		"  -s, --stats-fds      open the KVM binary stats fds of VM and vCPUs\n"
		"  -w, --wait-signal    start the vCPUs only on SIGUSR1\n"
		"  -u, --user-us US[,US]...  after each exit, spend US microseconds in\n"
		"                       user space before running the guest again\n"
		"                       (by vCPU index; the last one repeats)\n"
		"  -P, --progress MS    every MS milliseconds, a \"tick\" line per vCPU\n"
		"      --port PORT      the pio kind's I/O port (default 16)\n"
		"      --mmio-addr ADDR the mmio kind's address, 8192-65535 outside\n"
		"                       the code page (default 32768)\n"
		"  -N, --name NAME      run with \"-name guest=NAME\" in the command\n"
		"                       line, where QEMU users have it (for -g)\n"
		"  -C, --cmdline WORDS  run with the command line WORDS (split at\n"
		"                       spaces) and the process name of the first,\n"
		"                       as a VMM's reads (\"firecracker --id fc7\")\n"
		"  -T, --thread-names VMM  name the vCPU threads as VMM does: qemu\n"
		"                       (\"CPU 0/KVM\", the default), firecracker\n"
		"                       (\"fc_vcpu 0\"), cloud-hypervisor (\"vcpu0\"),\n"
		"                       crosvm (\"crosvm_vcpu0\"), kvmtool\n"
		"                       (\"kvm-vcpu-0\"), none (not named), or\n"
		"                       qemu-reversed (QEMU's, but vCPU 0 named\n"
		"                       as the last: names that lie)\n"
		"  -h, --help           show this help\n"
		"\n"
		"Output, one record per line: \"vm PID\", \"vcpu PID INDEX TID\",\n"
		"\"ready\", \"done PID INDEX EXITS NSEC CPUNSEC\", \"exit\"; with -P,\n"
		"\"tick PID INDEX EXITS NSEC CPUNSEC\" (so far) while the vCPUs run.\n");
}

static int parse_u64(const char *s, uint64_t max, uint64_t *val)
{
	unsigned long long v;
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -ERANGE;
	*val = v;
	return 0;
}

/* A comma-separated list of at most MAX_VCPUS numbers up to max, into
 * v[*n]. 0, or -EINVAL. argv stays as it is (it is run again: -C, -N). */
static int parse_u64_list(const char *arg, uint64_t max, uint64_t *v,
			  unsigned int *n)
{
	char *list = strdup(arg), *s = list, *tok;
	int rc = list ? 0 : -ENOMEM;

	*n = 0;
	while (!rc && s && (tok = strsep(&s, ",")))
		if (*n == MAX_VCPUS || parse_u64(tok, max, &v[*n]))
			rc = -EINVAL;
		else
			(*n)++;
	free(list);
	return rc;
}

static int parse_options(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "vms", required_argument, NULL, 'm' },
		{ "vcpus", required_argument, NULL, 'v' },
		{ "exits", required_argument, NULL, 'n' },
		{ "kind", required_argument, NULL, 'k' },
		{ "hold", required_argument, NULL, 't' },
		{ "stats-fds", no_argument, NULL, 's' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "progress", required_argument, NULL, 'P' },
		{ "name", required_argument, NULL, 'N' },
		{ "user-us", required_argument, NULL, 'u' },
		{ "port", required_argument, NULL, 'p' },
		{ "mmio-addr", required_argument, NULL, 'A' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "wake", required_argument, NULL, 'W' },
		{ "thread-names", required_argument, NULL, 'T' },
		{ "cmdline", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	char *end;
	size_t i;
	int c;

	while ((c = getopt_long(argc, argv, "m:v:n:k:t:swP:N:u:c:W:T:C:h",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (parse_u64(optarg, MAX_VMS, &v) || !v) {
				error_msg("invalid number of VMs '%s' (1-%d)",
					  optarg, MAX_VMS);
				return -EINVAL;
			}
			opts.vms = v;
			break;
		case 'v':
			if (parse_u64(optarg, MAX_VCPUS, &v) || !v) {
				error_msg("invalid number of vCPUs '%s' (1-%d)",
					  optarg, MAX_VCPUS);
				return -EINVAL;
			}
			opts.vcpus = v;
			break;
		case 'n': {
			/* all 0 (until the hold time ends) or none */
			bool bad = parse_u64_list(optarg, UINT64_MAX,
						  opts.exits_by,
						  &opts.nexits_by) != 0;

			opts.exits = opts.exits_by[0];
			for (i = 1; !bad && i < opts.nexits_by; i++)
				bad = !opts.exits_by[i] != !opts.exits;
			if (bad) {
				error_msg("invalid number of exits '%s' (N, or "
					  "N,N... by vCPU, all 0 or none)",
					  optarg);
				return -EINVAL;
			}
			break;
		}
		case 'u':
			if (parse_u64_list(optarg, 10000000, opts.user_us,
					   &opts.nuser_us)) {
				error_msg("invalid -u '%s' (microseconds "
					  "per vCPU, comma-separated)",
					  optarg);
				return -EINVAL;
			}
			break;
		case 'k':
			for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
				if (!strcmp(optarg, kinds[i].name))
					break;
			if (i == sizeof(kinds) / sizeof(kinds[0])) {
				error_msg("invalid exit kind '%s' (pio, mmio, hlt, spin or idle)",
					  optarg);
				return -EINVAL;
			}
			opts.kind = i;
			break;
		case 't':
			errno = 0;
			opts.hold = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !isfinite(opts.hold) || opts.hold < 0 ||
			    opts.hold > MAX_HOLD) {
				error_msg("invalid hold time '%s' (seconds, 0-%.0f)",
					  optarg, MAX_HOLD);
				return -EINVAL;
			}
			break;
		case 's':
			opts.stats_fds = true;
			break;
		case 'w':
			opts.wait_signal = true;
			break;
		case 'P':
			if (parse_u64(optarg, 60000, &v) || !v) {
				error_msg("invalid progress period '%s' (1-60000 ms)",
					  optarg);
				return -EINVAL;
			}
			opts.progress_ns = v * 1000000;
			break;
		case 'N':
			opts.name = optarg;
			break;
		case 'C':
			opts.cmdline = optarg;
			break;
		case 'T': {
			static const char *const styles[][2] = {
				{ "qemu", "CPU %u/KVM" },
				{ "firecracker", "fc_vcpu %u" },
				{ "cloud-hypervisor", "vcpu%u" },
				{ "crosvm", "crosvm_vcpu%u" },
				{ "kvmtool", "kvm-vcpu-%u" },
				{ "none", NULL },
				{ "qemu-reversed", "CPU %u/KVM" },
			};
			size_t k = 0;

			while (k < sizeof(styles) / sizeof(styles[0]) &&
			       strcmp(optarg, styles[k][0]))
				k++;
			if (k == sizeof(styles) / sizeof(styles[0])) {
				error_msg("unknown thread names '%s' (qemu, firecracker, cloud-hypervisor, crosvm, kvmtool, none or qemu-reversed)",
					  optarg);
				return -EINVAL;
			}
			opts.thread_fmt = styles[k][1];
			opts.names_reversed = !strcmp(optarg, "qemu-reversed");
			break;
		}
		case 'p':
			if (parse_u64(optarg, 65535, &opts.port)) {
				error_msg("invalid port '%s' (0-65535)", optarg);
				return -EINVAL;
			}
			break;
		case 'A':
			if (parse_u64(optarg, 65535, &opts.mmio_addr) ||
			    opts.mmio_addr < GUEST_CODE_GPA + GUEST_CODE_SIZE) {
				error_msg("invalid MMIO address '%s' (8192-65535)",
					  optarg);
				return -EINVAL;
			}
			break;
		case 'c':
			if (parse_u64(optarg, CPU_SETSIZE - 1, &v)) {
				error_msg("invalid CPU '%s' (0-%d)", optarg,
					  CPU_SETSIZE - 1);
				return -EINVAL;
			}
			opts.cpu = (int)v;
			break;
		case 'W':
			if (parse_u64(optarg, 60000, &v) || !v) {
				error_msg("invalid wake period '%s' (1-60000 ms)",
					  optarg);
				return -EINVAL;
			}
			opts.wake_ns = v * 1000000;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		error_msg("unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	if (opts.wake_ns && opts.kind != KIND_IDLE) {
		error_msg("-W wakes halted vCPUs: add -k idle -n 0");
		return -EINVAL;
	}
	if ((opts.kind == KIND_SPIN || opts.kind == KIND_IDLE) && opts.exits) {
		error_msg("-k %s makes no exits: add -n 0 (run for -t seconds)",
			  kinds[opts.kind].name);
		return -EINVAL;
	}
	return 0;
}

/*
 * -N NAME: runs this program again with "-Name guest=NAME" (a comma
 * doubled, as QEMU escapes it; a NAME that starts with "guest=" is taken
 * as the whole -name value) right after the program name; each VM
 * process makes it "-name", so that its command line reads as a QEMU
 * guest's does. The new run drops those two words before parsing the
 * options. Returns only when exec fails.
 */
static int exec_named(int argc, char **argv)
{
	char **av = calloc((size_t)argc + 3, sizeof(*av));
	size_t len = strlen(opts.name), k;
	char *val = malloc(2 * len + sizeof("guest="));

	if (!av || !val) {
		error_msg("out of memory");
		return 1;
	}
	if (!strncmp(opts.name, "guest=", 6)) {
		/* "guest=NAME,debug-threads=on": a -name value already */
		strcpy(val, opts.name);
	} else {
		k = (size_t)sprintf(val, "guest=");
		for (size_t i = 0; i < len; i++) {
			val[k++] = opts.name[i];
			if (opts.name[i] == ',')
				val[k++] = ',';
		}
		val[k] = '\0';
	}
	av[0] = argv[0];
	/* the launcher's: only the VM processes, in their own copy of the
	 * argument memory, say "-name" (as one QEMU process has it), so
	 * that a lookup by name (kvm_stat's through ps) never finds the
	 * launcher; it once did, between the exec and the fork, and kept
	 * following a process with no VM */
	av[1] = "-Name";
	av[2] = val;
	for (int i = 1; i < argc; i++)
		av[i + 2] = argv[i];
	execv("/proc/self/exe", av);
	error_msg("cannot run again with -name: %s", strerror(errno));
	return 1;
}

/* The word that ends a command line -C gave (exec_cmdline). */
#define CMDLINE_END "--kvmguest"

/*
 * -C WORDS: runs this program again with WORDS (split at spaces) as its
 * command line, then CMDLINE_END and its own options, so that its command
 * line and its VM processes' read as a VMM's; the new run takes its own
 * options from after CMDLINE_END, names itself as the first word and
 * blanks the rest. Returns only when exec fails.
 */
static int exec_cmdline(int argc, char **argv)
{
	char *words = strdup(opts.cmdline);
	char **av = calloc((size_t)argc + strlen(opts.cmdline) + 3, sizeof(*av));
	int n = 0;

	if (!av || !words) {
		error_msg("out of memory");
		return 1;
	}
	for (char *w = strtok(words, " "); w; w = strtok(NULL, " "))
		av[n++] = w;
	if (!n) {
		error_msg("-C: no command line");
		return 2;
	}
	av[n++] = CMDLINE_END;
	/* ours, but -C: "-C WORDS", "--cmdline WORDS", "-CWORDS",
	 * "--cmdline=WORDS" */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-C") || !strcmp(argv[i], "--cmdline")) {
			i++;
			continue;
		}
		if (!strncmp(argv[i], "-C", 2) ||
		    !strncmp(argv[i], "--cmdline=", 10))
			continue;
		av[n++] = argv[i];
	}
	execv("/proc/self/exe", av);
	error_msg("cannot run again with -C: %s", strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	char *blank = NULL, *blank_end = NULL;
	bool named = false;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* (a -C command line may hold "-name" too: CMDLINE_END decides) */
	for (int i = 1; i < argc; i++) {
		const char *base;

		if (strcmp(argv[i], CMDLINE_END))
			continue;
		/* run by exec_cmdline: the words before are a VMM's; ours,
		 * after, are blanked once read (a VMM's options, such as
		 * kvmtool's -n, must not meet ours) */
		base = strrchr(argv[0], '/');
		prctl(PR_SET_NAME, base ? base + 1 : argv[0]);
		blank = argv[i];
		blank_end = argv[argc - 1] + strlen(argv[argc - 1]);
		argv[i] = argv[0];
		argv += i;
		argc -= i;
		break;
	}
	named = !blank && argc > 2 && !strcmp(argv[1], "-Name");
	if (named) {
		/* run by exec_named: "-name guest=NAME" is for others */
		name_word = argv[1];
		argv[2] = argv[0];
		argv += 2;
		argc -= 2;
	}
	if (parse_options(argc, argv))
		return 2;
	if (opts.cmdline && opts.name) {
		error_msg("-C and -N together: give -name in -C's words");
		return 2;
	}
	if (opts.cmdline && !blank)
		return exec_cmdline(argc, argv);
	if (blank)
		memset(blank, 0, (size_t)(blank_end - blank));
	if (opts.name && !named)
		return exec_named(argc, argv);
	return launch();
}
