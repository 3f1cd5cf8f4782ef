// SPDX-License-Identifier: GPL-2.0-only
/*
 * The arm64 descriptor: kvm_exit's esr_ec becomes child events. Its
 * fallback names, for kernels whose kvm_exit format has no table, are the
 * exception classes of ESR_ELx.EC (Arm ARM, "ESR_EL2, Exception Syndrome
 * Register"); kvm_stat spells the ones it knows the same way. There is one
 * ISA, so detection needs nothing from the host. kvm_exit's raw arguments
 * hold the class, so no perf event is needed for it; hypercalls are broken
 * down by SMCCC function id.
 */
#include <stddef.h>

#include "arch.h"
#include "util.h"

static const struct arch_exit_reason arm64_ec_reasons[] = {
	{ 0x00, "UNKNOWN", "UNKNOWN" },
	{ 0x01, "WFx", "WFx" },
	{ 0x03, "CP15_32", "CP15_32" },
	{ 0x04, "CP15_64", "CP15_64" },
	{ 0x05, "CP14_MR", "CP14_MR" },
	{ 0x06, "CP14_LS", "CP14_LS" },
	{ 0x07, "FP_ASIMD", "FP_ASIMD" },
	{ 0x08, "CP10_ID", "CP10_ID" },
	{ 0x09, "PAC", "PAC" },
	{ 0x0a, "LS64", NULL },
	{ 0x0c, "CP14_64", "CP14_64" },
	{ 0x0d, "BTI", "BTI" },
	{ 0x0e, "ILL", "ILL" },
	{ 0x11, "SVC32", "SVC32" },
	{ 0x12, "HVC32", "HVC32" },
	{ 0x13, "SMC32", "SMC32" },
	{ 0x15, "SVC64", "SVC64" },
	{ 0x16, "HVC64", "HVC64" },
	{ 0x17, "SMC64", "SMC64" },
	{ 0x18, "SYS64", "SYS64" },
	{ 0x19, "SVE", "SVE" },
	{ 0x1a, "ERET", "ERET" },
	{ 0x1c, "FPAC", "FPAC" },
	{ 0x1d, "SME", "SME" },
	{ 0x1f, "IMP_DEF", "IMP_DEF" },
	{ 0x20, "IABT_LOW", "IABT_LOW" },
	{ 0x21, "IABT_CUR", "IABT_CUR" },
	{ 0x22, "PC_ALIGN", "PC_ALIGN" },
	{ 0x24, "DABT_LOW", "DABT_LOW" },
	{ 0x25, "DABT_CUR", "DABT_CUR" },
	{ 0x26, "SP_ALIGN", "SP_ALIGN" },
	{ 0x27, "MOPS", NULL },
	{ 0x28, "FP_EXC32", "FP_EXC32" },
	{ 0x2c, "FP_EXC64", "FP_EXC64" },
	{ 0x2d, "GCS", NULL },
	{ 0x2f, "SERROR", "SERROR" },
	{ 0x30, "BREAKPT_LOW", "BREAKPT_LOW" },
	{ 0x31, "BREAKPT_CUR", "BREAKPT_CUR" },
	{ 0x32, "SOFTSTP_LOW", "SOFTSTP_LOW" },
	{ 0x33, "SOFTSTP_CUR", "SOFTSTP_CUR" },
	{ 0x34, "WATCHPT_LOW", "WATCHPT_LOW" },
	{ 0x35, "WATCHPT_CUR", "WATCHPT_CUR" },
	{ 0x38, "BKPT32", "BKPT32" },
	{ 0x3a, "VECTOR32", "VECTOR32" },
	{ 0x3c, "BRK64", "BRK64" },
};

static const struct arch_exit_table arm64_ec_table = {
	.isa = "arm64",
	.event = "kvm_exit",
	.field = "esr_ec",
	.mask = 0x3f, /* EC is six bits */
	.n = ARRAY_SIZE(arm64_ec_reasons),
	.reasons = arm64_ec_reasons,
};

static const struct arch_exit_table *const arm64_tables[] = {
	&arm64_ec_table,
	NULL,
};

/*
 * kvm_exit(int ret, unsigned int esr_ec, unsigned long vcpu_pc): the
 * record's esr_ec is argument 1 for a trap and 0 for any other exit (an
 * interrupt, an SError), as arch/arm64/kvm/trace_arm.h assigns it: a trap
 * is ARM_EXCEPTION_TRAP (2) in ret's code, its bits but bit 31
 * (ARM_EXIT_WITH_SERROR_BIT), kvm_asm.h's exit codes.
 */
static const struct arch_source arm64_exit_source = {
	.event = "kvm_exit",
	.field = "esr_ec",
	.raw = { .known = true,
		 .arg = 1,
		 .mask = 0xffffffff,
		 .gate_arg = 0,
		 .gate_mask = 0x7fffffff,
		 .gate_value = 2 },
};

static const struct arch_source *const arm64_sources[] = {
	&arm64_exit_source,
	&arch_source_userspace_exit,
	NULL,
};

/*
 * SMCCC function ids a guest calls with HVC, sorted: the Arm architecture
 * calls (SMCCC, DEN0028), PSCI (DEN0022; the 64-bit calling convention's
 * ids, bit 30 set, spelled with 64), the TRNG interface (DEN0098), the
 * standard hypervisor's paravirtual time (DEN0057) and KVM's own vendor
 * hypervisor calls (include/linux/arm-smccc.h).
 */
static const struct arch_key_name arm64_smccc_names[] = {
	{ 0x80000000, 0x80000000, "SMCCC_VERSION", false },
	{ 0x80000001, 0x80000001, "SMCCC_ARCH_FEATURES", false },
	{ 0x80003fff, 0x80003fff, "ARCH_WORKAROUND_3", false },
	{ 0x80007fff, 0x80007fff, "ARCH_WORKAROUND_2", false },
	{ 0x80008000, 0x80008000, "ARCH_WORKAROUND_1", false },
	{ 0x84000000, 0x84000000, "PSCI_VERSION", false },
	{ 0x84000001, 0x84000001, "CPU_SUSPEND", false },
	{ 0x84000002, 0x84000002, "CPU_OFF", false },
	{ 0x84000003, 0x84000003, "CPU_ON", false },
	{ 0x84000004, 0x84000004, "AFFINITY_INFO", false },
	{ 0x84000006, 0x84000006, "MIGRATE_INFO_TYPE", false },
	{ 0x84000008, 0x84000008, "SYSTEM_OFF", false },
	{ 0x84000009, 0x84000009, "SYSTEM_RESET", false },
	{ 0x8400000a, 0x8400000a, "PSCI_FEATURES", false },
	{ 0x8400000e, 0x8400000e, "SYSTEM_SUSPEND", false },
	{ 0x84000012, 0x84000012, "SYSTEM_RESET2", false },
	{ 0x84000050, 0x84000050, "TRNG_VERSION", false },
	{ 0x84000051, 0x84000051, "TRNG_FEATURES", false },
	{ 0x84000052, 0x84000052, "TRNG_GET_UUID", false },
	{ 0x84000053, 0x84000053, "TRNG_RND32", false },
	{ 0x86000000, 0x86000000, "KVM_FEATURES", false },
	{ 0x86000001, 0x86000001, "KVM_PTP", false },
	{ 0x8600ff01, 0x8600ff01, "VENDOR_HYP_CALL_UID", false },
	{ 0xc4000001, 0xc4000001, "CPU_SUSPEND64", false },
	{ 0xc4000003, 0xc4000003, "CPU_ON64", false },
	{ 0xc4000004, 0xc4000004, "AFFINITY_INFO64", false },
	{ 0xc400000e, 0xc400000e, "SYSTEM_SUSPEND64", false },
	{ 0xc4000012, 0xc4000012, "SYSTEM_RESET2_64", false },
	{ 0xc4000053, 0xc4000053, "TRNG_RND64", false },
	{ 0xc5000020, 0xc5000020, "PV_TIME_FEATURES", false },
	{ 0xc5000021, 0xc5000021, "PV_TIME_ST", false },
};

/*
 * The breakdowns: the generic kvm_mmio(type, len, gpa, val), and HVCs
 * by SMCCC function id from kvm_hvc_arm64(vcpu_pc, r0, imm) (r0 the id),
 * their records keeping the arguments in order. arm64 has no I/O ports,
 * MSRs or kvm_hypercall.
 */
static const struct arch_breakdown arm64_breakdowns[] = {
	ARCH_BREAKDOWN_KVM_MMIO,
	{
		.kind = "hypercall",
		.event = "kvm_hvc_arm64",
		.key = "r0",
		.key_arg = 1,
		.names = arm64_smccc_names,
		.nnames = ARRAY_SIZE(arm64_smccc_names),
	},
	{ .kind = NULL },
};

/* One ISA and no guard: arch_detect_isa() names the ISA of the table. */
const struct arch_desc arch_arm64_desc = {
	.name = "arm64",
	.sources = arm64_sources,
	.tables = arm64_tables,
	.breakdowns = arm64_breakdowns,
	/* struct pt_regs begins as the uapi's user_pt_regs: regs[31], so
	 * the second argument (x1) is regs[1] */
	.syscall_arg1_off = 8,
};
