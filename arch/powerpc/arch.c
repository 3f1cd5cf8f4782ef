// SPDX-License-Identifier: GPL-2.0-only
/*
 * The powerpc descriptor: kvm_exit's exit_nr becomes child events. Its
 * fallback names, for kernels whose kvm_exit format has no table, are the
 * Book3S interrupt vector offsets (Power ISA Book III, "Interrupt
 * Vectors"). One table serves both KVM flavours (PR and HV), so detection
 * needs nothing from the host.
 */
#include <stddef.h>

#include "arch.h"
#include "util.h"

static const struct arch_exit_reason powerpc_vector_reasons[] = {
	{ 0x100, "SYSTEM_RESET", NULL },
	{ 0x200, "MACHINE_CHECK", NULL },
	{ 0x300, "DATA_STORAGE", NULL },
	{ 0x380, "DATA_SEGMENT", NULL },
	{ 0x400, "INST_STORAGE", NULL },
	{ 0x480, "INST_SEGMENT", NULL },
	{ 0x500, "EXTERNAL", NULL },
	{ 0x600, "ALIGNMENT", NULL },
	{ 0x700, "PROGRAM", NULL },
	{ 0x800, "FP_UNAVAIL", NULL },
	{ 0x900, "DECREMENTER", NULL },
	{ 0x980, "HV_DECREMENTER", NULL },
	{ 0xa00, "DOORBELL", NULL },
	{ 0xc00, "SYSCALL", NULL },
	{ 0xd00, "TRACE", NULL },
	{ 0xe00, "H_DATA_STORAGE", NULL },
	{ 0xe20, "H_INST_STORAGE", NULL },
	{ 0xe40, "H_EMUL_ASSIST", NULL },
	{ 0xe60, "HMI", NULL },
	{ 0xe80, "H_DOORBELL", NULL },
	{ 0xea0, "H_VIRT", NULL },
	{ 0xf00, "PERFMON", NULL },
	{ 0xf20, "ALTIVEC", NULL },
	{ 0xf40, "VSX", NULL },
	{ 0xf60, "FAC_UNAVAIL", NULL },
	{ 0xf80, "H_FAC_UNAVAIL", NULL },
};

static const struct arch_exit_table powerpc_vector_table = {
	.isa = "powerpc",
	.event = "kvm_exit",
	.field = "exit_nr",
	.mask = ~0ULL,
	.n = ARRAY_SIZE(powerpc_vector_reasons),
	.reasons = powerpc_vector_reasons,
};

static const struct arch_exit_table *const powerpc_tables[] = {
	&powerpc_vector_table,
	NULL,
};

static const struct arch_source powerpc_exit_source = {
	.event = "kvm_exit",
	.field = "exit_nr",
};

static const struct arch_source *const powerpc_sources[] = {
	&powerpc_exit_source,
	&arch_source_userspace_exit,
	NULL,
};

/* The breakdown of the generic kvm_mmio(type, len, gpa, val), which the
 * kernel's record keeps in that order. */
static const struct arch_breakdown powerpc_breakdowns[] = {
	ARCH_BREAKDOWN_KVM_MMIO,
	{ .kind = NULL },
};

/* One ISA and no guard: arch_detect_isa() names the ISA of the table. */
const struct arch_desc arch_powerpc_desc = {
	.name = "powerpc",
	.sources = powerpc_sources,
	.tables = powerpc_tables,
	.breakdowns = powerpc_breakdowns,
};
