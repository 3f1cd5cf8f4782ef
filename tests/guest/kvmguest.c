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
 *
 * This file is the x86 guest's own part: its guest code and kinds, the VM
 * and vCPU setup, the exit loop and the options only it has (-k's kinds,
 * -u, -P, -W, --port, --mmio-addr).  The launcher, the VM process around
 * the vCPUs, the output records and the common options are in
 * guest_common.h, shared with kvmguest-arm64.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#define MAX_VCPUS 1024

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

#define KIND_DEFAULT KIND_PIO
#define KIND_NAMES "pio, mmio, hlt, spin or idle"

/* The options only this guest has (opts.arch). */
struct options_arch {
	/* -u: µs each vCPU spends in user space after each exit before it
	 * runs the guest again, by vCPU index (the last repeats) */
	uint64_t user_us[MAX_VCPUS];
	unsigned int nuser_us;
	uint64_t progress_ns; /* "tick" lines this often; 0: none */
	uint64_t port;	      /* --port: the pio kind's port */
	uint64_t mmio_addr;   /* --mmio-addr: the mmio kind's address */
	uint64_t wake_ns;     /* -W: idle vCPUs woken this often; 0: never */
};

#define OPTIONS_ARCH_DEFAULTS \
	.port = GUEST_PIO_PORT, .mmio_addr = GUEST_MMIO_GPA

/* What a vCPU keeps beyond struct vcpu. */
struct vcpu_arch {
	uint64_t other_exits;  /* of other reasons, retried */
	uint64_t spins_per_us; /* -u's spin loop, as last timed (0: not yet) */
};

/* What a VM keeps beyond struct vm: nothing on x86. */
struct vm_arch {
};

static const char short_options[] = "m:v:n:k:t:swP:N:u:c:W:T:C:h";
static const struct option long_options[] = {
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

#include "guest_common.h"

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

/*
 * In the vCPU's thread: creates the vCPU, maps its kvm_run and starts it
 * in flat real mode at GUEST_CODE_GPA, interrupts off; -s: its stats fd.
 */
static int vcpu_setup(struct vcpu *vcpu)
{
	struct vm *vm = vcpu->vm;
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	struct kvm_segment *segs[] = {
		&sregs.cs, &sregs.ds, &sregs.es,
		&sregs.fs, &sregs.gs, &sregs.ss,
	};
	size_t i;
	int err;

	vcpu->fd = ioctl(vm->fd, KVM_CREATE_VCPU, (unsigned long)vcpu->index);
	if (vcpu->fd < 0) {
		err = -errno;
		error_msg("vm %d: KVM_CREATE_VCPU %u: %s", vm->pid, vcpu->index,
			  strerror(-err));
		return err;
	}
	err = vcpu_map_run(vcpu);
	if (err)
		return err;

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
	return vcpu_stats_fd_open(vcpu);
}

/* (nothing to do: x86 vCPUs are created in any order) */
static void vcpu_setup_skipped(struct vcpu *vcpu)
{
	(void)vcpu;
}

/* Checks that an exit of the expected reason is the guest's own access. */
static int check_exit(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	struct kvm_regs regs;

	switch (opts.kind) {
	case KIND_PIO:
		if (run->io.direction == KVM_EXIT_IO_OUT &&
		    run->io.port == opts.arch.port && run->io.size == 1 &&
		    run->io.count == 1)
			return 0;
		error_msg("vm %d: vcpu %u: unexpected port I/O: %s port 0x%x size %u count %u",
			  vcpu->vm->pid, vcpu->index,
			  run->io.direction == KVM_EXIT_IO_OUT ? "out" : "in",
			  run->io.port, run->io.size, run->io.count);
		return -EIO;
	case KIND_MMIO:
		if (run->mmio.is_write &&
		    run->mmio.phys_addr == opts.arch.mmio_addr &&
		    run->mmio.len == 1)
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
	unsigned int i;

	if (!opts.arch.nuser_us)
		return;
	i = vcpu->index < opts.arch.nuser_us ? vcpu->index :
					       opts.arch.nuser_us - 1;
	us = opts.arch.user_us[i];
	if (!us)
		return;
	if (!vcpu->arch.spins_per_us)
		vcpu->arch.spins_per_us = 1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	t = ts_ns(&now);
	end = t + us * 1000;
	while (t < end) {
		left_us = (end - t + 999) / 1000;
		n = vcpu->arch.spins_per_us *
		    (left_us < chunk_us ? left_us : chunk_us);
		spin_user(n);
		clock_gettime(CLOCK_MONOTONIC, &now);
		/* each chunk times the next (one preempted only makes the
		 * next ones shorter for a while) */
		d = ts_ns(&now) - t;
		vcpu->arch.spins_per_us = d ? n * 1000 / d :
					      2 * vcpu->arch.spins_per_us;
		if (!vcpu->arch.spins_per_us)
			vcpu->arch.spins_per_us = 1;
		t = ts_ns(&now);
	}
}

/* ---- spin and idle (kvmstat --vcpu-time's tests) --------------------- */

/* idle: KVM's in-kernel irqchip, so that HLT blocks in the kernel. */
static int idle_irqchip(struct vm *vm)
{
	if (opts.kind != KIND_IDLE || !ioctl(vm->fd, KVM_CREATE_IRQCHIP, 0))
		return 0;
	error_msg("vm %d: KVM_CREATE_IRQCHIP: %s", vm->pid, strerror(errno));
	return -errno;
}

/* SIGUSR2 only interrupts KVM_RUN (vcpus_kick; -W's wakes). */
static void kick_handler(int sig)
{
	(void)sig;
}

/* -W: until the deadline, a signal every wake_ns ends each idle vCPU's
 * halt in the kernel, which KVM counts as one wait (halt_wait_ns,
 * halt_wait_hist); KVM_RUN returns EINTR and the vCPU halts again. */
static void vm_while_running(struct vm *vm, const struct timespec *deadline)
{
	const uint64_t wake_ns = opts.arch.wake_ns;
	struct timespec next, now;

	if (!wake_ns)
		return;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (ts_ns(&now) + wake_ns >= ts_ns(deadline))
			return;
		next.tv_sec = (ts_ns(&now) + wake_ns) / 1000000000ull;
		next.tv_nsec = (ts_ns(&now) + wake_ns) % 1000000000ull;
		sleep_until(&next);
		vcpus_kick(vm);
	}
}

/* ---- the exit loop, the VM ------------------------------------------ */

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
	if (opts.arch.progress_ns)
		next_tick = ts_ns(&t0) + opts.arch.progress_ns;
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
				next_tick = ts_ns(&t1) + opts.arch.progress_ns;
			}
		}
		if (opts.exits ? vcpu->exits >= vcpu_exits(vcpu->index) :
				 atomic_load_explicit(&vm->stop,
						      memory_order_relaxed))
			break;
		err = vcpu_run(vcpu);
		if (err > 0)
			continue;
		if (err)
			return err;
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
			vcpu->arch.other_exits++;
			break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);

	if (vcpu->arch.other_exits)
		error_msg("vm %d: vcpu %u: ignored %" PRIu64
			  " exits of other reasons",
			  vm->pid, vcpu->index, vcpu->arch.other_exits);
	emit_done(vcpu, &t0, &t1, &c0, &c1);
	return 0;
}

/*
 * The VM: /dev/kvm, the VM with its TSS (VMX without unrestricted guest
 * needs it), the code page with the kind's loop (its port or address as
 * asked), the idle kind's irqchip and the stats fd.
 */
static int vm_setup(struct vm *vm)
{
	const struct kind_info *k = &kinds[opts.kind];
	int err;

	err = kvm_open(vm);
	if (err)
		return err;
	if (opts.stats_fds && !has_cap(vm, KVM_CAP_BINARY_STATS_FD)) {
		error_msg("vm %d: this kernel does not support KVM_GET_STATS_FD (KVM_CAP_BINARY_STATS_FD)",
			  vm->pid);
		return -EOPNOTSUPP;
	}
	err = vm_create(vm);
	if (err)
		return err;
	if (has_cap(vm, KVM_CAP_SET_TSS_ADDR) &&
	    ioctl(vm->fd, KVM_SET_TSS_ADDR, (unsigned long)GUEST_TSS_GPA) < 0) {
		err = -errno;
		error_msg("vm %d: KVM_SET_TSS_ADDR: %s", vm->pid,
			  strerror(-err));
		return err;
	}

	err = vm_memory_setup(vm, k->code, k->code_len);
	if (err)
		return err;
	/* the port (mov dx, imm16) or the address (mov [imm16], al) asked */
	if (opts.kind == KIND_PIO || opts.kind == KIND_MMIO) {
		uint64_t a = opts.kind == KIND_PIO ? opts.arch.port :
						     opts.arch.mmio_addr;

		((uint8_t *)vm->mem)[1] = (uint8_t)a;
		((uint8_t *)vm->mem)[2] = (uint8_t)(a >> 8);
	}

	err = idle_irqchip(vm);
	if (err)
		return err;
	return vm_stats_fd_open(vm);
}

/* (nothing to do: the vCPUs need nothing of each other) */
static int vm_setup_after_vcpus(struct vm *vm)
{
	(void)vm;
	return 0;
}

/* (nothing to free: the irqchip goes with the VM fd) */
static void vm_arch_teardown(struct vm *vm)
{
	(void)vm;
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
		"                       the code page (default 32768)\n");
	usage_vmm_options(f);
	fprintf(f,
		"\n"
		"Output, one record per line: \"vm PID\", \"vcpu PID INDEX TID\",\n"
		"\"ready\", \"done PID INDEX EXITS NSEC CPUNSEC\", \"exit\"; with -P,\n"
		"\"tick PID INDEX EXITS NSEC CPUNSEC\" (so far) while the vCPUs run.\n");
}

/* -u, -P, --port, --mmio-addr, -W (parse_options reads the others). */
static int parse_arch_option(int c)
{
	uint64_t v;

	switch (c) {
	case 'u':
		if (parse_u64_list(optarg, 10000000, false, MAX_VCPUS,
				   opts.arch.user_us, &opts.arch.nuser_us)) {
			error_msg("invalid -u '%s' (microseconds "
				  "per vCPU, comma-separated)",
				  optarg);
			return -EINVAL;
		}
		return 0;
	case 'P':
		if (parse_u64(optarg, 60000, &v) || !v) {
			error_msg("invalid progress period '%s' (1-60000 ms)",
				  optarg);
			return -EINVAL;
		}
		opts.arch.progress_ns = v * 1000000;
		return 0;
	case 'p':
		if (parse_u64(optarg, 65535, &opts.arch.port)) {
			error_msg("invalid port '%s' (0-65535)", optarg);
			return -EINVAL;
		}
		return 0;
	case 'A':
		if (parse_u64(optarg, 65535, &opts.arch.mmio_addr) ||
		    opts.arch.mmio_addr < GUEST_CODE_GPA + GUEST_CODE_SIZE) {
			error_msg("invalid MMIO address '%s' (8192-65535)",
				  optarg);
			return -EINVAL;
		}
		return 0;
	case 'W':
		if (parse_u64(optarg, 60000, &v) || !v) {
			error_msg("invalid wake period '%s' (1-60000 ms)",
				  optarg);
			return -EINVAL;
		}
		opts.arch.wake_ns = v * 1000000;
		return 0;
	default:
		usage(stderr);
		return -EINVAL;
	}
}

static int check_arch_options(void)
{
	if (opts.arch.wake_ns && opts.kind != KIND_IDLE) {
		error_msg("-W wakes halted vCPUs: add -k idle -n 0");
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	return guest_main(argc, argv);
}
