// SPDX-License-Identifier: GPL-2.0-only
/*
 * The arm64 descriptor: kvm_exit's esr_ec becomes child events. Its
 * fallback names, for kernels whose kvm_exit format has no table, are the
 * exception classes of ESR_ELx.EC (Arm ARM, "ESR_EL2, Exception Syndrome
 * Register"); kvm_stat spells the ones it knows the same way. There is one
 * ISA, so detection needs nothing from the host.
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

static const struct arch_source arm64_exit_source = {
	.event = "kvm_exit",
	.field = "esr_ec",
};

static const struct arch_source *const arm64_sources[] = {
	&arm64_exit_source,
	&arch_source_userspace_exit,
	NULL,
};

/* One ISA and no guard: arch_detect_isa() names the ISA of the table. */
const struct arch_desc arch_arm64_desc = {
	.name = "arm64",
	.sources = arm64_sources,
	.tables = arm64_tables,
};
