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
	{ 0x100, "SYSTEM_RESET" },
	{ 0x200, "MACHINE_CHECK" },
	{ 0x300, "DATA_STORAGE" },
	{ 0x380, "DATA_SEGMENT" },
	{ 0x400, "INST_STORAGE" },
	{ 0x480, "INST_SEGMENT" },
	{ 0x500, "EXTERNAL" },
	{ 0x600, "ALIGNMENT" },
	{ 0x700, "PROGRAM" },
	{ 0x800, "FP_UNAVAIL" },
	{ 0x900, "DECREMENTER" },
	{ 0x980, "HV_DECREMENTER" },
	{ 0xa00, "DOORBELL" },
	{ 0xc00, "SYSCALL" },
	{ 0xd00, "TRACE" },
	{ 0xe00, "H_DATA_STORAGE" },
	{ 0xe20, "H_INST_STORAGE" },
	{ 0xe40, "H_EMUL_ASSIST" },
	{ 0xe60, "HMI" },
	{ 0xe80, "H_DOORBELL" },
	{ 0xea0, "H_VIRT" },
	{ 0xf00, "PERFMON" },
	{ 0xf20, "ALTIVEC" },
	{ 0xf40, "VSX" },
	{ 0xf60, "FAC_UNAVAIL" },
	{ 0xf80, "H_FAC_UNAVAIL" },
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

/* One ISA and no guard: arch_detect_isa() names the ISA of the table. */
const struct arch_desc arch_powerpc_desc = {
	.name = "powerpc",
	.sources = powerpc_sources,
	.tables = powerpc_tables,
};
