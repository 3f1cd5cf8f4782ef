// SPDX-License-Identifier: GPL-2.0-only
/*
 * The generic descriptor, for architectures kvmstat has nothing specific
 * for: no fallback tables and no ISA, so only the kernel's own format tables
 * name exit reasons. Its one child source, kvm_userspace_exit's reason (why
 * KVM_RUN returned to the VMM), is common to every architecture, so it lives
 * here and every descriptor lists it. Its one breakdown is the generic
 * kvm_mmio's. Always linked.
 */
#include <stddef.h>

#include "arch.h"
#include "util.h"

/*
 * Why KVM_RUN returned to the VMM: every KVM_EXIT_* reason of the uapi
 * header <linux/kvm.h>, without the prefix. kvm_stat 6.12 knows 0 to 37;
 * the later ones are the kernel's newer reasons. All are listed, whether or
 * not the running kernel's format file names them (an older kernel's names
 * fewer); a unit test holds the table to the build host's header.
 */
static const struct arch_exit_reason userspace_exit_reasons[] = {
	{ 0, "UNKNOWN", "UNKNOWN" },
	{ 1, "EXCEPTION", "EXCEPTION" },
	{ 2, "IO", "IO" },
	{ 3, "HYPERCALL", "HYPERCALL" },
	{ 4, "DEBUG", "DEBUG" },
	{ 5, "HLT", "HLT" },
	{ 6, "MMIO", "MMIO" },
	{ 7, "IRQ_WINDOW_OPEN", "IRQ_WINDOW_OPEN" },
	{ 8, "SHUTDOWN", "SHUTDOWN" },
	{ 9, "FAIL_ENTRY", "FAIL_ENTRY" },
	{ 10, "INTR", "INTR" },
	{ 11, "SET_TPR", "SET_TPR" },
	{ 12, "TPR_ACCESS", "TPR_ACCESS" },
	{ 13, "S390_SIEIC", "S390_SIEIC" },
	{ 14, "S390_RESET", "S390_RESET" },
	{ 15, "DCR", "DCR" },
	{ 16, "NMI", "NMI" },
	{ 17, "INTERNAL_ERROR", "INTERNAL_ERROR" },
	{ 18, "OSI", "OSI" },
	{ 19, "PAPR_HCALL", "PAPR_HCALL" },
	{ 20, "S390_UCONTROL", "S390_UCONTROL" },
	{ 21, "WATCHDOG", "WATCHDOG" },
	{ 22, "S390_TSCH", "S390_TSCH" },
	{ 23, "EPR", "EPR" },
	{ 24, "SYSTEM_EVENT", "SYSTEM_EVENT" },
	{ 25, "S390_STSI", "S390_STSI" },
	{ 26, "IOAPIC_EOI", "IOAPIC_EOI" },
	{ 27, "HYPERV", "HYPERV" },
	{ 28, "ARM_NISV", "ARM_NISV" },
	{ 29, "X86_RDMSR", "X86_RDMSR" },
	{ 30, "X86_WRMSR", "X86_WRMSR" },
	{ 31, "DIRTY_RING_FULL", "DIRTY_RING_FULL" },
	{ 32, "AP_RESET_HOLD", "AP_RESET_HOLD" },
	{ 33, "X86_BUS_LOCK", "X86_BUS_LOCK" },
	{ 34, "XEN", "XEN" },
	{ 35, "RISCV_SBI", "RISCV_SBI" },
	{ 36, "RISCV_CSR", "RISCV_CSR" },
	{ 37, "NOTIFY", "NOTIFY" },
	{ 38, "LOONGARCH_IOCSR", NULL },
	{ 39, "MEMORY_FAULT", NULL },
	{ 40, "TDX", NULL },
};

static const struct arch_exit_table userspace_exit_table = {
	.isa = "any",
	.event = "kvm_userspace_exit",
	.field = "reason",
	.mask = ~0ULL,
	.listed = true,
	.n = ARRAY_SIZE(userspace_exit_reasons),
	.reasons = userspace_exit_reasons,
};

/* kvm_userspace_exit(u32 reason, int errno): the reason is argument 0. */
const struct arch_source arch_source_userspace_exit = {
	.event = "kvm_userspace_exit",
	.field = "reason",
	.strip = "KVM_EXIT_",
	.table = &userspace_exit_table,
	.raw = { .known = true, .arg = 0, .mask = 0xffffffff },
};

static const struct arch_source *const generic_sources[] = {
	&arch_source_userspace_exit,
	NULL,
};

static const struct arch_exit_table *const generic_tables[] = {
	NULL,
};

/* The breakdown of the generic kvm_mmio(type, len, gpa, val), which the
 * kernel's record keeps in that order. */
static const struct arch_breakdown generic_breakdowns[] = {
	ARCH_BREAKDOWN_KVM_MMIO,
	{ .kind = NULL },
};

const struct arch_desc arch_generic_desc = {
	.name = "generic",
	.sources = generic_sources,
	.tables = generic_tables,
	.breakdowns = generic_breakdowns,
};
