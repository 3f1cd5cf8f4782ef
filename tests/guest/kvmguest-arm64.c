// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmguest (arm64): a tiny VMM, without QEMU, that starts real arm64 KVM
 * guests whose exits are exactly known; the arm64 counterpart of kvmguest.c,
 * with the same process model, stdout records and exit statuses.  A launcher
 * forks one process per VM; each VM runs its vCPUs in threads named like
 * QEMU's ("CPU N/KVM"), and every vCPU runs a few A64 instructions, written
 * here into guest memory, that make MMIO exits to userspace or HVC, system
 * register or WFI traps that KVM handles in the kernel.  Each vCPU makes
 * N of them; for the kinds KVM handles itself the guest counts and reports
 * with one last MMIO write.  The output format and the exact count of
 * every exit class a run makes are described in README.md next to this file.
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
#include <stddef.h>
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

#if !defined(__aarch64__)
#error "kvmguest-arm64.c is built for arm64 (aarch64-linux-gnu-gcc)"
#endif

#define PROG "kvmguest"
#define MAX_VMS 1024
#define MAX_VCPUS 512 /* KVM's limit on arm64 (and the GICv3 layout's) */
#define MAX_HOLD (7 * 24 * 3600.0)
#define MAX_HVC_IDS 8 /* -f: one guest register keeps each one's answer */

/*
 * Guest-physical layout.  One memory slot of 64 KiB (a host page on every
 * arm64 page size) holds the code; the MMIO addresses are in no slot.  The
 * vGICv3 (wfi kind only) sits where QEMU's virt machine has it; its
 * redistributors take 128 KiB per vCPU.
 */
#define GUEST_CODE_GPA 0x10000ull
#define GUEST_CODE_SIZE 0x10000ull
#define GUEST_MMIO_GPA 0x80000000ull /* the mmio kind's stores (4 bytes) */
#define GUEST_STOP_GPA 0x80000008ull /* the last report (8 bytes) */
#define GIC_DIST_GPA 0x08000000ull
#define GIC_REDIST_GPA 0x080a0000ull

/* GICv3 registers set from userspace (the guest never touches the GIC) */
#define GICD_CTLR 0x0000
#define GICD_CTLR_ENABLE_G1A (1u << 1)
#define GICR_SGI_ISENABLER0 0x10100 /* SGI_base (RD_base + 64K) + 0x100 */
/* ICC_PMR_EL1 as KVM_DEV_ARM_VGIC_GRP_CPU_SYSREGS names it: op0 3, op1 0,
 * CRn 4, CRm 6, op2 0 */
#define ICC_PMR_EL1_ATTR ((3u << 14) | (0u << 11) | (4u << 7) | (6u << 3) | 0u)
#define VTIMER_PPI_DEFAULT 27

/* Guest registers: the loop's count, its end and the MMIO address. */
#define REG_END 19    /* x19: N (0: never ends) */
#define REG_COUNT 20  /* x20: traps made so far */
#define REG_ADDR 21   /* x21: GUEST_MMIO_GPA or GUEST_STOP_GPA */
#define REG_ANSWER 22 /* x22..x29: the last answer to each -f id */

/* The PSCI/SMCCC function id hvc calls by default: PSCI_VERSION. */
#define HVC_DEFAULT_ID 0x84000000u

enum kind {
	KIND_MMIO,
	KIND_HVC,
	KIND_WFI,
	KIND_SYSREG,
	KIND_SPIN, /* no exits: see "spin and idle" below */
	KIND_IDLE,
};

static const struct kind_info {
	const char *name;
	bool in_kernel; /* KVM handles the trap: the guest counts */
	bool vgic;	/* needs the in-kernel vGICv3 */
} kinds[] = {
	[KIND_MMIO] = { "mmio", false, false },
	[KIND_HVC] = { "hvc", true, false },
	[KIND_WFI] = { "wfi", true, true },
	[KIND_SYSREG] = { "sysreg", true, false },
	[KIND_SPIN] = { "spin", false, false },
	[KIND_IDLE] = { "idle", false, false },
};

static struct options {
	unsigned int vms;
	unsigned int vcpus;
	uint64_t exits; /* per vCPU; 0 = until the hold time ends */
	/* -n N,N...: the exits of each vCPU by index (the last repeats) */
	uint64_t exits_by[MAX_VCPUS];
	unsigned int nexits_by;
	enum kind kind;
	/* -f: the SMCCC function ids hvc calls in turn */
	uint64_t hvc_ids[MAX_HVC_IDS];
	unsigned int nhvc_ids;
	double hold; /* seconds */
	bool stats_fds;
	bool wait_signal;
	const char *name;    /* -N: the guest name QEMU's -name would give */
	const char *cmdline; /* -C: the command line a VMM's would read */
	int cpu;	     /* -c: the host CPU of every vCPU thread, or -1 */
	/* -T: vCPU thread names as a VMM gives them (printf with the
	 * index), or NULL: unnamed, the process's name */
	const char *thread_fmt;
	bool names_reversed; /* -T qemu-reversed: vCPU i named V-1-i */
} opts = {
	.thread_fmt = "CPU %u/KVM",
	.cpu = -1,
	.vms = 1,
	.vcpus = 1,
	.exits = 1000,
	.kind = KIND_MMIO,
	.hvc_ids = { HVC_DEFAULT_ID },
	.nhvc_ids = 1,
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
	uint64_t mpidr; /* MPIDR_EL1, which names its redistributor */
	pid_t tid;
	uint64_t exits;
	/* hvc, -n 0: the -f id whose answer is still in x0 (stopped between
	 * the call and its count), or -1 */
	int answer_in_x0;
	int err;
};

struct vm {
	pid_t pid;
	int kvm_fd;
	int fd;
	int stats_fd;
	int gic_fd; /* the vGICv3 device (wfi), or -1 */
	size_t run_size;
	void *mem;
	struct kvm_vcpu_init init; /* target and features of every vCPU */
	struct vcpu *vcpus;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int nr_created; /* vCPUs created, in index order */
	unsigned int nr_setup;	 /* vCPU threads done with setup */
	unsigned int nr_done;	 /* vCPU threads done running */
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
		[KVM_EXIT_HYPERCALL] = "HYPERCALL",
		[KVM_EXIT_DEBUG] = "DEBUG",
		[KVM_EXIT_MMIO] = "MMIO",
		[KVM_EXIT_SHUTDOWN] = "SHUTDOWN",
		[KVM_EXIT_FAIL_ENTRY] = "FAIL_ENTRY",
		[KVM_EXIT_INTR] = "INTR",
		[KVM_EXIT_INTERNAL_ERROR] = "INTERNAL_ERROR",
		[KVM_EXIT_SYSTEM_EVENT] = "SYSTEM_EVENT",
		[KVM_EXIT_ARM_NISV] = "ARM_NISV",
	};

	if (reason < sizeof(names) / sizeof(names[0]) && names[reason])
		return names[reason];
	return "?";
}

/* ---- guest code ------------------------------------------------------ */

/*
 * The guest's instructions, encoded here from the A64 encodings in the Arm
 * ARM (no assembler at build time: the file is built alone).  Registers are
 * numbers 0-30 (X0-X30); offsets count instructions.
 */
#define A64_WFI 0xd503207fu

static uint32_t a64_movz(unsigned int rd, uint16_t imm, unsigned int shift)
{
	return 0xd2800000u | (shift / 16) << 21 | (uint32_t)imm << 5 | rd;
}

static uint32_t a64_movk(unsigned int rd, uint16_t imm, unsigned int shift)
{
	return 0xf2800000u | (shift / 16) << 21 | (uint32_t)imm << 5 | rd;
}

/* mov xd, xm (orr xd, xzr, xm) */
static uint32_t a64_mov(unsigned int rd, unsigned int rm)
{
	return 0xaa0003e0u | rm << 16 | rd;
}

/* add xd, xn, #imm12 */
static uint32_t a64_add_imm(unsigned int rd, unsigned int rn, uint32_t imm)
{
	return 0x91000000u | imm << 10 | rn << 5 | rd;
}

/* cmp xn, xm (subs xzr, xn, xm) */
static uint32_t a64_cmp(unsigned int rn, unsigned int rm)
{
	return 0xeb00001fu | rm << 16 | rn << 5;
}

#define A64_EQ 0x0
#define A64_NE 0x1

/* b.cond to offset (in instructions, from this one) */
static uint32_t a64_bcond(unsigned int cond, int32_t offset)
{
	return 0x54000000u | ((uint32_t)offset & 0x7ffff) << 5 | cond;
}

static uint32_t a64_b(int32_t offset)
{
	return 0x14000000u | ((uint32_t)offset & 0x3ffffff);
}

/* str wt, [xn] */
static uint32_t a64_str_w(unsigned int rt, unsigned int rn)
{
	return 0xb9000000u | rn << 5 | rt;
}

/* str xt, [xn] */
static uint32_t a64_str_x(unsigned int rt, unsigned int rn)
{
	return 0xf9000000u | rn << 5 | rt;
}

static uint32_t a64_hvc(uint16_t imm)
{
	return 0xd4000002u | (uint32_t)imm << 5;
}

/* mrs xt, ID_AA64PFR0_EL1 (op0 3, op1 0, CRn 0, CRm 4, op2 0): trapped by
 * HCR_EL2.TID3, which KVM always sets */
static uint32_t a64_mrs_id_aa64pfr0(unsigned int rt)
{
	return 0xd5380400u | rt;
}

/* A guest program: its instructions, where each trap's count is missed. */
struct code {
	uint32_t insn[8 * MAX_HVC_IDS + 8]; /* hvc's is the longest */
	unsigned int len;
	/* where the PC is when a trap is done and not yet counted (after the
	 * trapping instruction, before the add): -n 0 counts it there */
	unsigned int uncounted[MAX_HVC_IDS];
	unsigned int nuncounted;
};

static void code_put(struct code *c, uint32_t insn)
{
	c->insn[c->len++] = insn;
}

/* mov x0, #id (an SMCCC function id: 32 bits) */
static void code_put_id(struct code *c, uint64_t id)
{
	code_put(c, a64_movz(0, id & 0xffff, 0));
	if (id >> 16)
		code_put(c, a64_movk(0, id >> 16, 16));
}

/*
 * Writes the guest's program for the kind.  The mmio kind stores to
 * x21 = GUEST_MMIO_GPA forever (userspace counts); the in-kernel kinds
 * make one trap, count it in x20 and, when x20 reaches x19, store x20 to
 * x21 = GUEST_STOP_GPA, their only exit to userspace.  hvc calls the
 * -f ids in turn and keeps the last answer to id j in x(22+j).
 */
static void code_build(struct code *c)
{
	unsigned int loop, j, fix[MAX_HVC_IDS], nfix = 0;

	memset(c, 0, sizeof(*c));
	switch (opts.kind) {
	case KIND_MMIO:
		code_put(c, a64_str_w(REG_COUNT, REG_ADDR)); /* 0: str w20 */
		code_put(c, a64_b(-1));			     /* b 0 */
		return;
	case KIND_SPIN:
		code_put(c, a64_b(0)); /* b . */
		return;
	case KIND_IDLE:
		code_put(c, A64_WFI);	/* 0: wfi (no irqchip: blocks) */
		code_put(c, a64_b(-1)); /* b 0 */
		return;
	case KIND_HVC:
		for (j = 0; j < opts.nhvc_ids; j++) {
			code_put_id(c, opts.hvc_ids[j]);
			code_put(c, a64_hvc(0));
			c->uncounted[c->nuncounted++] = c->len;
			code_put(c, a64_mov(REG_ANSWER + j, 0));
			code_put(c, a64_add_imm(REG_COUNT, REG_COUNT, 1));
			code_put(c, a64_cmp(REG_COUNT, REG_END));
			fix[nfix++] = c->len; /* b.eq stop */
			code_put(c, 0);
		}
		code_put(c, a64_b(-(int32_t)c->len));
		for (j = 0; j < nfix; j++)
			c->insn[fix[j]] = a64_bcond(A64_EQ, c->len - fix[j]);
		break;
	case KIND_WFI:
	case KIND_SYSREG:
		loop = c->len;
		code_put(c, opts.kind == KIND_WFI ? A64_WFI :
						    a64_mrs_id_aa64pfr0(0));
		c->uncounted[c->nuncounted++] = c->len;
		code_put(c, a64_add_imm(REG_COUNT, REG_COUNT, 1));
		code_put(c, a64_cmp(REG_COUNT, REG_END));
		code_put(c, a64_bcond(A64_NE, (int32_t)loop - (int32_t)c->len));
		break;
	}
	/* stop: the report, then nothing (the VMM runs it no more) */
	code_put(c, a64_str_x(REG_COUNT, REG_ADDR));
	code_put(c, a64_b(0));
}

/* ---- vCPU registers -------------------------------------------------- */

#define CORE_REG(x)                                            \
	(KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | \
	 KVM_REG_ARM_CORE_REG(x))
#define REG_MPIDR_EL1 ARM64_SYS_REG(3, 0, 0, 0, 5)

static uint64_t xreg_id(unsigned int n)
{
	return CORE_REG(regs.regs[0]) + 2 * n; /* ids count 32-bit words */
}

static int one_reg(struct vcpu *vcpu, unsigned long req, uint64_t id,
		   uint64_t *val, const char *what)
{
	struct kvm_one_reg reg = { .id = id, .addr = (uintptr_t)val };

	if (!ioctl(vcpu->fd, req, &reg))
		return 0;
	error_msg("vm %d: vcpu %u: %s %s: %s", vcpu->vm->pid, vcpu->index,
		  req == KVM_SET_ONE_REG ? "KVM_SET_ONE_REG" : "KVM_GET_ONE_REG",
		  what, strerror(errno));
	return -errno;
}

static int set_reg(struct vcpu *vcpu, uint64_t id, uint64_t val,
		   const char *what)
{
	return one_reg(vcpu, KVM_SET_ONE_REG, id, &val, what);
}

static int get_reg(struct vcpu *vcpu, uint64_t id, uint64_t *val,
		   const char *what)
{
	return one_reg(vcpu, KVM_GET_ONE_REG, id, val, what);
}

/* ---- VM process ---------------------------------------------------- */

/*
 * Creates the vCPU of this thread, in index order: as QEMU's threads do,
 * one after the other.  KVM numbers vCPUs in the order they are created
 * and 6.1's vGIC finds the target of a PPI (the timer's) by that number
 * though it is given the vCPU id: created out of order, a vCPU's timer
 * interrupt goes to another vCPU, which drops it, and a WFI never ends.
 */
static int vcpu_create(struct vcpu *vcpu, bool create)
{
	struct vm *vm = vcpu->vm;
	int err = 0;

	pthread_mutex_lock(&vm->lock);
	while (vm->nr_created < vcpu->index)
		pthread_cond_wait(&vm->cond, &vm->lock);
	/* (a thread that failed before takes its turn all the same) */
	if (create)
		vcpu->fd = ioctl(vm->fd, KVM_CREATE_VCPU,
				 (unsigned long)vcpu->index);
	if (create && vcpu->fd < 0)
		err = -errno;
	vm->nr_created++;
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	return err;
}

static int vcpu_setup(struct vcpu *vcpu)
{
	struct vm *vm = vcpu->vm;
	void *run;
	int err;

	err = vcpu_create(vcpu, true);
	if (err) {
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

	/* reset: EL1h, interrupts masked, MMU off, x0-x30 zero */
	if (ioctl(vcpu->fd, KVM_ARM_VCPU_INIT, &vm->init) < 0) {
		err = -errno;
		error_msg("vm %d: vcpu %u: KVM_ARM_VCPU_INIT: %s", vm->pid,
			  vcpu->index, strerror(-err));
		return err;
	}
	err = set_reg(vcpu, CORE_REG(regs.pc), GUEST_CODE_GPA, "pc");
	if (!err)
		err = set_reg(vcpu, xreg_id(REG_END), vcpu_exits(vcpu->index),
			      "x19");
	if (!err)
		err = set_reg(vcpu, xreg_id(REG_ADDR),
			      opts.kind == KIND_MMIO ? GUEST_MMIO_GPA :
						       GUEST_STOP_GPA,
			      "x21");
	if (!err)
		err = get_reg(vcpu, REG_MPIDR_EL1, &vcpu->mpidr, "MPIDR_EL1");
	/* wfi: the virtual timer enabled, unmasked and due from the start
	 * (CVAL 0), so its interrupt is always pending (vgic_setup) */
	if (!err && opts.kind == KIND_WFI)
		err = set_reg(vcpu, KVM_REG_ARM_TIMER_CVAL, 0, "CNTV_CVAL_EL0");
	if (!err && opts.kind == KIND_WFI)
		err = set_reg(vcpu, KVM_REG_ARM_TIMER_CTL, 1, "CNTV_CTL_EL0");
	if (err)
		return err;

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

/* ---- the vGICv3 (wfi) -------------------------------------------------- */

static int gic_attr(struct vm *vm, uint32_t group, uint64_t attr, void *val,
		    const char *what)
{
	struct kvm_device_attr a = {
		.group = group,
		.attr = attr,
		.addr = (uintptr_t)val,
	};

	if (!ioctl(vm->gic_fd, KVM_SET_DEVICE_ATTR, &a))
		return 0;
	error_msg("vm %d: vGICv3: %s: %s", vm->pid, what, strerror(errno));
	return -errno;
}

/* A vCPU's redistributor and CPU interface, as the vGIC's attributes name
 * it: Aff3.Aff2.Aff1.Aff0 of its MPIDR_EL1 in bits 63:32. */
static uint64_t gic_mpidr_attr(const struct vcpu *vcpu)
{
	uint64_t m = vcpu->mpidr;
	uint64_t aff = (m & 0xffffff) | (m >> 32 & 0xff) << 24;

	return aff << KVM_DEV_ARM_VGIC_V3_MPIDR_SHIFT;
}

/* wfi: creates the in-kernel vGICv3 and places it, before the vCPUs. */
static int vgic_create(struct vm *vm)
{
	struct kvm_create_device cd = { .type = KVM_DEV_TYPE_ARM_VGIC_V3 };
	uint64_t dist = GIC_DIST_GPA, redist = GIC_REDIST_GPA;
	int err;

	if (ioctl(vm->fd, KVM_CREATE_DEVICE, &cd) < 0) {
		err = -errno;
		error_msg("vm %d: KVM_CREATE_DEVICE vGICv3: %s (-k wfi needs a GICv3 host)",
			  vm->pid, strerror(-err));
		return err;
	}
	vm->gic_fd = cd.fd;
	err = gic_attr(vm, KVM_DEV_ARM_VGIC_GRP_ADDR,
		       KVM_VGIC_V3_ADDR_TYPE_DIST, &dist,
		       "distributor address");
	if (!err)
		err = gic_attr(vm, KVM_DEV_ARM_VGIC_GRP_ADDR,
			       KVM_VGIC_V3_ADDR_TYPE_REDIST, &redist,
			       "redistributor address");
	return err;
}

/*
 * wfi, once all vCPUs exist: initializes the vGIC and, from userspace, so
 * that the guest makes no GIC access (each would be an MMIO exit or a
 * system register trap): enables group 1 in the distributor, each vCPU's
 * virtual timer PPI in its redistributor and priority mask 0xff in its
 * CPU interface.  The timer's interrupt is then always pending for KVM,
 * which ends a WFI's halt at once; the guest's ICC_IGRPEN1_EL1 stays 0
 * (and PSTATE.I set), so it is never delivered and each WFI traps again.
 */
static int vgic_setup(struct vm *vm)
{
	uint32_t ctlr = GICD_CTLR_ENABLE_G1A, enable;
	uint64_t pmr = 0xff;
	unsigned int i;
	int err;

	err = gic_attr(vm, KVM_DEV_ARM_VGIC_GRP_CTRL,
		       KVM_DEV_ARM_VGIC_CTRL_INIT, NULL, "init");
	if (!err)
		err = gic_attr(vm, KVM_DEV_ARM_VGIC_GRP_DIST_REGS, GICD_CTLR,
			       &ctlr, "GICD_CTLR");
	for (i = 0; !err && i < opts.vcpus; i++) {
		struct vcpu *vcpu = &vm->vcpus[i];
		uint32_t ppi = VTIMER_PPI_DEFAULT;
		struct kvm_device_attr a = {
			.group = KVM_ARM_VCPU_TIMER_CTRL,
			.attr = KVM_ARM_VCPU_TIMER_IRQ_VTIMER,
			.addr = (uintptr_t)&ppi,
		};

		/* the PPI KVM gave the timer (27 unless a VMM moved it) */
		if (ioctl(vcpu->fd, KVM_GET_DEVICE_ATTR, &a) < 0 || ppi > 31)
			ppi = VTIMER_PPI_DEFAULT;
		enable = 1u << ppi;
		err = gic_attr(vm, KVM_DEV_ARM_VGIC_GRP_REDIST_REGS,
			       gic_mpidr_attr(vcpu) | GICR_SGI_ISENABLER0,
			       &enable, "GICR_ISENABLER0");
		if (!err)
			err = gic_attr(vm, KVM_DEV_ARM_VGIC_GRP_CPU_SYSREGS,
				       gic_mpidr_attr(vcpu) | ICC_PMR_EL1_ATTR,
				       &pmr, "ICC_PMR_EL1");
	}
	return err;
}

/* ---------------------------------------------------------------------- */

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
 * An MMIO exit: the mmio kind's store (0), an in-kernel kind's report
 * (1, the guest's count in vcpu->exits), or not the guest's (-EIO).
 */
static int check_mmio(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint64_t val = 0;

	if (opts.kind == KIND_MMIO && run->mmio.is_write &&
	    run->mmio.phys_addr == GUEST_MMIO_GPA && run->mmio.len == 4)
		return 0;
	if (kinds[opts.kind].in_kernel && run->mmio.is_write &&
	    run->mmio.phys_addr == GUEST_STOP_GPA && run->mmio.len == 8) {
		memcpy(&val, run->mmio.data, sizeof(val));
		vcpu->exits = val;
		if (val == vcpu_exits(vcpu->index))
			return 1;
		error_msg("vm %d: vcpu %u: the guest made %" PRIu64
			  " %s traps, not %" PRIu64,
			  vcpu->vm->pid, vcpu->index, val,
			  kinds[opts.kind].name, vcpu_exits(vcpu->index));
		return -EIO;
	}
	error_msg("vm %d: vcpu %u: unexpected MMIO: %s 0x%llx len %u",
		  vcpu->vm->pid, vcpu->index,
		  run->mmio.is_write ? "write" : "read",
		  (unsigned long long)run->mmio.phys_addr, run->mmio.len);
	return -EIO;
}

/*
 * -n 0, an in-kernel kind stopped by a signal: its traps, from the guest's
 * count and, if it stopped between a trap and its count, that one too.
 */
static int count_stopped(struct vcpu *vcpu, const struct code *code)
{
	uint64_t count, pc;
	unsigned int i;
	int err;

	err = get_reg(vcpu, xreg_id(REG_COUNT), &count, "x20");
	if (!err)
		err = get_reg(vcpu, CORE_REG(regs.pc), &pc, "pc");
	if (err)
		return err;
	for (i = 0; i < code->nuncounted; i++) {
		if (pc != GUEST_CODE_GPA + 4ull * code->uncounted[i])
			continue;
		count++;
		vcpu->answer_in_x0 = i;
	}
	vcpu->exits = count;
	return 0;
}

/*
 * A cumulative vCPU statistic (such as "wfi_exit_stat") from a binary stats
 * fd: its value into *val, or -errno (-ENOENT: no such statistic).
 */
static int stats_read(int fd, const char *name, uint64_t *val)
{
	struct kvm_stats_header h;
	struct kvm_stats_desc *d;
	size_t size;
	char *descs;
	int err = -ENOENT;

	if (pread(fd, &h, sizeof(h), 0) != sizeof(h))
		return -EIO;
	size = sizeof(*d) + h.name_size;
	descs = calloc(h.num_desc, size);
	if (!descs)
		return -ENOMEM;
	if (pread(fd, descs, size * h.num_desc, h.desc_offset) !=
	    (ssize_t)(size * h.num_desc)) {
		free(descs);
		return -EIO;
	}
	for (uint32_t i = 0; i < h.num_desc && err == -ENOENT; i++) {
		d = (struct kvm_stats_desc *)(descs + i * size);
		if (strncmp(d->name, name, h.name_size))
			continue;
		err = 0;
		if (pread(fd, val, sizeof(*val), h.data_offset + d->offset) !=
		    sizeof(*val))
			err = -EIO;
	}
	free(descs);
	return err;
}

/*
 * wfi: the WFIs that trapped, as KVM counted them (wfi_exit_stat).  A WFI
 * traps only if it would wait: one made while a host interrupt is already
 * pending completes at once, without an exit (rarely: about 1 in 15000
 * under TCG), so the guest's count can exceed the traps by a few.
 */
static int count_wfi(struct vcpu *vcpu)
{
	int fd = vcpu->stats_fd, err;
	uint64_t n;

	if (fd < 0)
		fd = ioctl(vcpu->fd, KVM_GET_STATS_FD, NULL);
	if (fd < 0) {
		err = -errno;
		error_msg("vm %d: vcpu %u: KVM_GET_STATS_FD: %s", vcpu->vm->pid,
			  vcpu->index, strerror(-err));
		return err;
	}
	err = stats_read(fd, "wfi_exit_stat", &n);
	if (fd != vcpu->stats_fd)
		close(fd);
	if (err) {
		error_msg("vm %d: vcpu %u: reading wfi_exit_stat: %s",
			  vcpu->vm->pid, vcpu->index, strerror(-err));
		return err;
	}
	if (n > vcpu->exits) {
		error_msg("vm %d: vcpu %u: %" PRIu64
			  " WFI traps, more than the %" PRIu64 " WFIs made",
			  vcpu->vm->pid, vcpu->index, n, vcpu->exits);
		return -EIO;
	}
	vcpu->exits = n;
	return 0;
}

/* hvc: how many calls of each -f id the vCPU made, and the last answer. */
static void report_hvc(struct vcpu *vcpu)
{
	uint64_t n = vcpu->exits, k = opts.nhvc_ids, count, answer;
	unsigned int j, reg;
	char ans[32];

	for (j = 0; j < k; j++) {
		count = n / k + (j < n % k);
		reg = (int)j == vcpu->answer_in_x0 ? 0 : REG_ANSWER + j;
		if (!count || get_reg(vcpu, xreg_id(reg), &answer, "answer"))
			snprintf(ans, sizeof(ans), "-");
		else
			snprintf(ans, sizeof(ans), "0x%" PRIx64, answer);
		emit("hvc %d %u 0x%08" PRIx64 " %" PRIu64 " %s", vcpu->vm->pid,
		     vcpu->index, opts.hvc_ids[j], count, ans);
	}
}

/* The kvm_run of the thread's vCPU, for kick_handler. */
static __thread struct kvm_run *thread_run;

/* -n 0 ends: KVM_RUN returns at once now (immediate_exit) and, if the
 * vCPU is in the guest, returns EINTR (the signal takes it out). */
static void kick_handler(int sig)
{
	(void)sig;
	if (thread_run)
		thread_run->immediate_exit = 1;
}

/* Runs until N exits of the chosen kind (or until stopped with -n 0). */
static int vcpu_loop(struct vcpu *vcpu, const struct code *code)
{
	const bool in_kernel = kinds[opts.kind].in_kernel;
	struct kvm_run *run = vcpu->run;
	struct vm *vm = vcpu->vm;
	struct timespec t0, t1, c0, c1;
	bool reported = false;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	for (;;) {
		if (opts.exits ? (in_kernel ? reported :
					      vcpu->exits >=
						      vcpu_exits(vcpu->index)) :
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
		switch (run->exit_reason) {
		case KVM_EXIT_MMIO:
			err = check_mmio(vcpu);
			if (err < 0)
				return err;
			if (err)
				reported = true;
			else
				vcpu->exits++;
			break;
		case KVM_EXIT_INTR:
			break;
		default:
			report_bad_exit(vcpu);
			return -EIO;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);

	if (!opts.exits && in_kernel) {
		err = count_stopped(vcpu, code);
		if (err)
			return err;
	}
	if (opts.kind == KIND_WFI) {
		err = count_wfi(vcpu);
		if (err)
			return err;
	}
	if (opts.kind == KIND_HVC)
		report_hvc(vcpu);
	emit("done %d %u %" PRIu64 " %" PRIu64 " %" PRIu64, vm->pid,
	     vcpu->index, vcpu->exits, ts_ns(&t1) - ts_ns(&t0),
	     ts_ns(&c1) - ts_ns(&c0));
	return 0;
}

/* The program of every vCPU (the same in every VM). */
static struct code guest_code;

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

/* -n 0 ends: a signal takes each vCPU out of KVM_RUN (the in-kernel
 * kinds, spin and idle never exit to userspace by themselves). */
static void vcpus_kick(struct vm *vm)
{
	for (unsigned int i = 0; i < opts.vcpus; i++)
		if (vm->vcpus[i].thread_started)
			pthread_kill(vm->vcpus[i].thread, SIGUSR2);
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
	else
		vcpu_create(vcpu, false);
	if (!err)
		thread_run = vcpu->run;
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
		err = vcpu_loop(vcpu, &guest_code);
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

/* Does the kernel have capability cap (on /dev/kvm)? */
static bool has_cap(struct vm *vm, long cap)
{
	return ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, cap) > 0;
}

static int vm_setup(struct vm *vm)
{
	struct kvm_userspace_memory_region region;
	struct sigaction sa = { .sa_handler = kick_handler };
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
	if ((opts.stats_fds || opts.kind == KIND_WFI) &&
	    !has_cap(vm, KVM_CAP_BINARY_STATS_FD)) {
		error_msg("vm %d: this kernel does not support KVM_GET_STATS_FD (KVM_CAP_BINARY_STATS_FD)%s",
			  vm->pid,
			  opts.stats_fds ? "" : ", which -k wfi reads");
		return -EOPNOTSUPP;
	}
	if (!has_cap(vm, KVM_CAP_ONE_REG) ||
	    !has_cap(vm, KVM_CAP_ARM_PSCI_0_2) ||
	    (kinds[opts.kind].vgic && !has_cap(vm, KVM_CAP_DEVICE_CTRL))) {
		error_msg("vm %d: this kernel lacks KVM_CAP_ONE_REG, KVM_CAP_ARM_PSCI_0_2 or KVM_CAP_DEVICE_CTRL",
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
	/* every vCPU: the host's own CPU type, PSCI 0.2 or later (the
	 * SMCCC calls hvc makes are answered in the kernel) */
	if (ioctl(vm->fd, KVM_ARM_PREFERRED_TARGET, &vm->init) < 0) {
		err = -errno;
		error_msg("vm %d: KVM_ARM_PREFERRED_TARGET: %s", vm->pid,
			  strerror(-err));
		return err;
	}
	vm->init.features[0] |= 1u << KVM_ARM_VCPU_PSCI_0_2;

	vm->mem = mmap(NULL, GUEST_CODE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->mem == MAP_FAILED) {
		err = -errno;
		vm->mem = NULL;
		error_msg("vm %d: mmap guest memory: %s", vm->pid,
			  strerror(-err));
		return err;
	}
	memcpy(vm->mem, guest_code.insn, 4 * guest_code.len);
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

	if (kinds[opts.kind].vgic) {
		err = vgic_create(vm);
		if (err)
			return err;
	}
	if (opts.stats_fds) {
		vm->stats_fd = ioctl(vm->fd, KVM_GET_STATS_FD, NULL);
		if (vm->stats_fd < 0) {
			err = -errno;
			error_msg("vm %d: KVM_GET_STATS_FD: %s", vm->pid,
				  strerror(-err));
			return err;
		}
	}
	/* -n 0's kick (before any vCPU thread exists) */
	sigaction(SIGUSR2, &sa, NULL);
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
	if (vm->gic_fd >= 0)
		close(vm->gic_fd);
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
		.gic_fd = -1,
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
		vm.vcpus[i].answer_in_x0 = -1;
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
	if (vm.gic_fd >= 0 && vgic_setup(&vm))
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
		"Start arm64 KVM guests whose exits are exactly known (kvmstat tests).\n"
		"\n"
		"  -m, --vms M          number of VM processes (default 1)\n"
		"  -v, --vcpus V        vCPU threads per VM (default 1, at most %d)\n"
		"  -n, --exits N[,N]... exits per vCPU (default 1000), or by vCPU\n"
		"                       index (the last repeats); 0 = run until\n"
		"                       the hold time ends\n"
		"  -k, --kind KIND      mmio (default: MMIO exits to userspace), or\n"
		"                       traps KVM handles: hvc (SMCCC calls), wfi\n"
		"                       (with a vGICv3), sysreg (ID register reads);\n"
		"                       spin (guest code, no exits) or idle (WFI\n"
		"                       blocked in the kernel), both with -n 0\n"
		"  -f, --hvc-ids ID[,ID]...  with -k hvc, the SMCCC function ids to\n"
		"                       call in turn, at most %d (default 0x%08x,\n"
		"                       PSCI_VERSION); ids the kernel answers\n"
		"  -c, --cpu CPU        pin every vCPU thread to host CPU CPU\n"
		"  -t, --hold SECONDS   keep the VMs alive this long after the exits;\n"
		"                       with -n 0, run this long (default 2)\n"
		"  -s, --stats-fds      open the KVM binary stats fds of VM and vCPUs\n"
		"  -w, --wait-signal    start the vCPUs only on SIGUSR1\n"
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
		"\"ready\", \"done PID INDEX EXITS NSEC CPUNSEC\", \"exit\"; with\n"
		"-k hvc, before each \"done\", \"hvc PID INDEX ID COUNT ANSWER\" per id.\n"
		"The in-kernel kinds make one more MMIO exit per vCPU: the report.\n",
		MAX_VCPUS, MAX_HVC_IDS, HVC_DEFAULT_ID);
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

/* A comma-separated list of at most max_n numbers up to max (decimal, or
 * hexadecimal after 0x with hex), into v[*n]. 0, or -EINVAL. argv stays as
 * it is (it is run again: -C, -N). */
static int parse_u64_list(const char *arg, uint64_t max, bool hex,
			  unsigned int max_n, uint64_t *v, unsigned int *n)
{
	char *list = strdup(arg), *s = list, *tok, *end;
	int rc = list ? 0 : -ENOMEM;

	*n = 0;
	while (!rc && s && (tok = strsep(&s, ","))) {
		if (*n == max_n) {
			rc = -EINVAL;
		} else if (hex && !strncasecmp(tok, "0x", 2)) {
			errno = 0;
			v[*n] = strtoull(tok + 2, &end, 16);
			if (errno || end == tok + 2 || *end || v[*n] > max)
				rc = -EINVAL;
			else
				(*n)++;
		} else if (parse_u64(tok, max, &v[*n])) {
			rc = -EINVAL;
		} else {
			(*n)++;
		}
	}
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
		{ "hvc-ids", required_argument, NULL, 'f' },
		{ "hold", required_argument, NULL, 't' },
		{ "stats-fds", no_argument, NULL, 's' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "name", required_argument, NULL, 'N' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "thread-names", required_argument, NULL, 'T' },
		{ "cmdline", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool ids_given = false;
	uint64_t v;
	char *end;
	size_t i;
	int c;

	while ((c = getopt_long(argc, argv, "m:v:n:k:f:t:swN:c:T:C:h", longopts,
				NULL)) != -1) {
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
			bool bad = parse_u64_list(optarg, UINT64_MAX, false,
						  MAX_VCPUS, opts.exits_by,
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
		case 'k':
			for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
				if (!strcmp(optarg, kinds[i].name))
					break;
			if (i == sizeof(kinds) / sizeof(kinds[0])) {
				error_msg("invalid exit kind '%s' (mmio, hvc, wfi, sysreg, spin or idle)",
					  optarg);
				return -EINVAL;
			}
			opts.kind = i;
			break;
		case 'f':
			if (parse_u64_list(optarg, UINT32_MAX, true, MAX_HVC_IDS,
					   opts.hvc_ids, &opts.nhvc_ids) ||
			    !opts.nhvc_ids) {
				error_msg("invalid SMCCC function ids '%s' (1-%d, 32 bits each, comma-separated)",
					  optarg, MAX_HVC_IDS);
				return -EINVAL;
			}
			ids_given = true;
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
		case 'c':
			if (parse_u64(optarg, CPU_SETSIZE - 1, &v)) {
				error_msg("invalid CPU '%s' (0-%d)", optarg,
					  CPU_SETSIZE - 1);
				return -EINVAL;
			}
			opts.cpu = (int)v;
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
	if (ids_given && opts.kind != KIND_HVC) {
		error_msg("-f gives the function ids of -k hvc");
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
	/* the launcher's says "-Name": only the VM processes, in their own
	 * copy of the argument memory, say "-name", so that a lookup by
	 * name never finds the launcher, which has no VM */
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
		 * after, are blanked once read */
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
	code_build(&guest_code);
	return launch();
}
