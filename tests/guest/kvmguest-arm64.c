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
 *
 * This file is the arm64 guest's own part: its guest code and kinds, the VM
 * and vCPU setup (vCPUs created in index order, the vGICv3 of -k wfi), the
 * exit loop and -f.  The launcher, the VM process around the vCPUs, the
 * output records and the common options are in guest_common.h, shared with
 * kvmguest.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#if !defined(__aarch64__)
#error "kvmguest-arm64.c is built for arm64 (aarch64-linux-gnu-gcc)"
#endif

#define MAX_VCPUS 512 /* KVM's limit on arm64 (and the GICv3 layout's) */
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

#define KIND_DEFAULT KIND_MMIO
#define KIND_NAMES "mmio, hvc, wfi, sysreg, spin or idle"

/* The options only this guest has (opts.arch). */
struct options_arch {
	/* -f: the SMCCC function ids hvc calls in turn */
	uint64_t hvc_ids[MAX_HVC_IDS];
	unsigned int nhvc_ids;
	bool hvc_ids_given; /* -f was given (it needs -k hvc) */
};

#define OPTIONS_ARCH_DEFAULTS .hvc_ids = { HVC_DEFAULT_ID }, .nhvc_ids = 1

/* What a vCPU keeps beyond struct vcpu. */
struct vcpu_arch {
	uint64_t mpidr; /* MPIDR_EL1, which names its redistributor */
	/* hvc, -n 0: the -f id whose answer is still in x0 (stopped between
	 * the call and its count), or -1 */
	int answer_in_x0;
};

/* What a VM keeps beyond struct vm. */
struct vm_arch {
	int gic_fd;		   /* the vGICv3 device (wfi), or -1 */
	struct kvm_vcpu_init init; /* target and features of every vCPU */
	unsigned int nr_created;   /* vCPUs created, in index order */
};

/* The options, common ones included (guest_common.h reads them). */
static const char short_options[] = "m:v:n:k:f:t:swN:c:T:C:h";
static const struct option long_options[] = {
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

#include "guest_common.h"

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
		for (j = 0; j < opts.arch.nhvc_ids; j++) {
			code_put_id(c, opts.arch.hvc_ids[j]);
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

/* The program of every vCPU (the same in every VM; vm_setup builds it). */
static struct code guest_code;

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
	while (vm->arch.nr_created < vcpu->index)
		pthread_cond_wait(&vm->cond, &vm->lock);
	/* (a thread that failed before takes its turn all the same) */
	if (create)
		vcpu->fd = ioctl(vm->fd, KVM_CREATE_VCPU,
				 (unsigned long)vcpu->index);
	if (create && vcpu->fd < 0)
		err = -errno;
	vm->arch.nr_created++;
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	return err;
}

/* The kvm_run of the thread's vCPU, for kick_handler. */
static __thread struct kvm_run *thread_run;

/*
 * In the vCPU's thread: creates the vCPU (in index order), maps its
 * kvm_run, resets it at EL1 and sets the registers the guest code reads
 * (pc, x19, x21; wfi: the virtual timer); -s: its stats fd.
 */
static int vcpu_setup(struct vcpu *vcpu)
{
	struct vm *vm = vcpu->vm;
	int err;

	vcpu->arch.answer_in_x0 = -1;
	err = vcpu_create(vcpu, true);
	if (err) {
		error_msg("vm %d: KVM_CREATE_VCPU %u: %s", vm->pid, vcpu->index,
			  strerror(-err));
		return err;
	}
	err = vcpu_map_run(vcpu);
	if (err)
		return err;

	/* reset: EL1h, interrupts masked, MMU off, x0-x30 zero */
	if (ioctl(vcpu->fd, KVM_ARM_VCPU_INIT, &vm->arch.init) < 0) {
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
		err = get_reg(vcpu, REG_MPIDR_EL1, &vcpu->arch.mpidr,
			      "MPIDR_EL1");
	/* wfi: the virtual timer enabled, unmasked and due from the start
	 * (CVAL 0), so its interrupt is always pending (vgic_setup) */
	if (!err && opts.kind == KIND_WFI)
		err = set_reg(vcpu, KVM_REG_ARM_TIMER_CVAL, 0, "CNTV_CVAL_EL0");
	if (!err && opts.kind == KIND_WFI)
		err = set_reg(vcpu, KVM_REG_ARM_TIMER_CTL, 1, "CNTV_CTL_EL0");
	if (err)
		return err;

	err = vcpu_stats_fd_open(vcpu);
	if (!err)
		thread_run = vcpu->run;
	return err;
}

/* Naming or pinning failed: the thread takes its turn all the same, so
 * that the vCPUs after it are created. */
static void vcpu_setup_skipped(struct vcpu *vcpu)
{
	vcpu_create(vcpu, false);
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

	if (!ioctl(vm->arch.gic_fd, KVM_SET_DEVICE_ATTR, &a))
		return 0;
	error_msg("vm %d: vGICv3: %s: %s", vm->pid, what, strerror(errno));
	return -errno;
}

/* A vCPU's redistributor and CPU interface, as the vGIC's attributes name
 * it: Aff3.Aff2.Aff1.Aff0 of its MPIDR_EL1 in bits 63:32. */
static uint64_t gic_mpidr_attr(const struct vcpu *vcpu)
{
	uint64_t m = vcpu->arch.mpidr;
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
	vm->arch.gic_fd = cd.fd;
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

/* ---- the exit loop and what it counts --------------------------------- */

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
		vcpu->arch.answer_in_x0 = i;
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
	uint64_t n = vcpu->exits, k = opts.arch.nhvc_ids, count, answer;
	unsigned int j, reg;
	char ans[32];

	for (j = 0; j < k; j++) {
		count = n / k + (j < n % k);
		reg = (int)j == vcpu->arch.answer_in_x0 ? 0 : REG_ANSWER + j;
		if (!count || get_reg(vcpu, xreg_id(reg), &answer, "answer"))
			snprintf(ans, sizeof(ans), "-");
		else
			snprintf(ans, sizeof(ans), "0x%" PRIx64, answer);
		emit("hvc %d %u 0x%08" PRIx64 " %" PRIu64 " %s", vcpu->vm->pid,
		     vcpu->index, opts.arch.hvc_ids[j], count, ans);
	}
}

/* -n 0 ends: KVM_RUN returns at once now (immediate_exit) and, if the
 * vCPU is in the guest, returns EINTR (the signal takes it out). */
static void kick_handler(int sig)
{
	(void)sig;
	if (thread_run)
		thread_run->immediate_exit = 1;
}

/* Runs until N exits of the chosen kind (or until stopped with -n 0). */
static int vcpu_loop(struct vcpu *vcpu)
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
		err = vcpu_run(vcpu);
		if (err > 0)
			continue;
		if (err)
			return err;
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
		err = count_stopped(vcpu, &guest_code);
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
	emit_done(vcpu, &t0, &t1, &c0, &c1);
	return 0;
}

/*
 * The VM: /dev/kvm and the capabilities the kind needs, the VM and its
 * vCPUs' target, the code slot with the kind's program, the vGICv3 of
 * -k wfi and the stats fd.
 */
static int vm_setup(struct vm *vm)
{
	int err;

	vm->arch.gic_fd = -1; /* (vm_arch_teardown: none yet) */
	err = kvm_open(vm);
	if (err)
		return err;
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
	err = vm_create(vm);
	if (err)
		return err;
	/* every vCPU: the host's own CPU type, PSCI 0.2 or later (the
	 * SMCCC calls hvc makes are answered in the kernel) */
	if (ioctl(vm->fd, KVM_ARM_PREFERRED_TARGET, &vm->arch.init) < 0) {
		err = -errno;
		error_msg("vm %d: KVM_ARM_PREFERRED_TARGET: %s", vm->pid,
			  strerror(-err));
		return err;
	}
	vm->arch.init.features[0] |= 1u << KVM_ARM_VCPU_PSCI_0_2;

	code_build(&guest_code);
	err = vm_memory_setup(vm, guest_code.insn, 4 * guest_code.len);
	if (err)
		return err;

	if (kinds[opts.kind].vgic) {
		err = vgic_create(vm);
		if (err)
			return err;
	}
	return vm_stats_fd_open(vm);
}

/* wfi: the vGIC, set up once all vCPUs exist. */
static int vm_setup_after_vcpus(struct vm *vm)
{
	return vm->arch.gic_fd >= 0 ? vgic_setup(vm) : 0;
}

/* (nothing to do: the vCPUs run until the deadline's kick) */
static void vm_while_running(struct vm *vm, const struct timespec *deadline)
{
	(void)vm;
	(void)deadline;
}

static void vm_arch_teardown(struct vm *vm)
{
	if (vm->arch.gic_fd >= 0)
		close(vm->arch.gic_fd);
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
		"  -w, --wait-signal    start the vCPUs only on SIGUSR1\n",
		MAX_VCPUS, MAX_HVC_IDS, HVC_DEFAULT_ID);
	usage_vmm_options(f);
	fprintf(f,
		"\n"
		"Output, one record per line: \"vm PID\", \"vcpu PID INDEX TID\",\n"
		"\"ready\", \"done PID INDEX EXITS NSEC CPUNSEC\", \"exit\"; with\n"
		"-k hvc, before each \"done\", \"hvc PID INDEX ID COUNT ANSWER\" per id.\n"
		"The in-kernel kinds make one more MMIO exit per vCPU: the report.\n");
}

/* -f (parse_options reads the others). */
static int parse_arch_option(int c)
{
	switch (c) {
	case 'f':
		if (parse_u64_list(optarg, UINT32_MAX, true, MAX_HVC_IDS,
				   opts.arch.hvc_ids, &opts.arch.nhvc_ids) ||
		    !opts.arch.nhvc_ids) {
			error_msg("invalid SMCCC function ids '%s' (1-%d, 32 bits each, comma-separated)",
				  optarg, MAX_HVC_IDS);
			return -EINVAL;
		}
		opts.arch.hvc_ids_given = true;
		return 0;
	default:
		usage(stderr);
		return -EINVAL;
	}
}

static int check_arch_options(void)
{
	if (opts.arch.hvc_ids_given && opts.kind != KIND_HVC) {
		error_msg("-f gives the function ids of -k hvc");
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	return guest_main(argc, argv);
}
