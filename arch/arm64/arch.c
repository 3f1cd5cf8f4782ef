// SPDX-License-Identifier: GPL-2.0-only
/*
 * The arm64 descriptor: kvm_exit's esr_ec becomes child events. Its
 * fallback names, for kernels whose kvm_exit format has no table, are the
 * exception classes of ESR_ELx.EC (Arm ARM, "ESR_EL2, Exception Syndrome
 * Register"). There is one ISA, so detection needs nothing from the host.
 */
#include <stddef.h>

#include "arch.h"
#include "util.h"

static const struct arch_exit_reason arm64_ec_reasons[] = {
	{ 0x00, "UNKNOWN" },	 { 0x01, "WFx" },
	{ 0x03, "CP15_32" },	 { 0x04, "CP15_64" },
	{ 0x05, "CP14_MR" },	 { 0x06, "CP14_LS" },
	{ 0x07, "FP_ASIMD" },	 { 0x08, "CP10_ID" },
	{ 0x09, "PAC" },	 { 0x0a, "LS64" },
	{ 0x0c, "CP14_64" },	 { 0x0d, "BTI" },
	{ 0x0e, "ILL" },	 { 0x11, "SVC32" },
	{ 0x12, "HVC32" },	 { 0x13, "SMC32" },
	{ 0x15, "SVC64" },	 { 0x16, "HVC64" },
	{ 0x17, "SMC64" },	 { 0x18, "SYS64" },
	{ 0x19, "SVE" },	 { 0x1a, "ERET" },
	{ 0x1c, "FPAC" },	 { 0x1d, "SME" },
	{ 0x1f, "IMP_DEF" },	 { 0x20, "IABT_LOW" },
	{ 0x21, "IABT_CUR" },	 { 0x22, "PC_ALIGN" },
	{ 0x24, "DABT_LOW" },	 { 0x25, "DABT_CUR" },
	{ 0x26, "SP_ALIGN" },	 { 0x27, "MOPS" },
	{ 0x28, "FP_EXC32" },	 { 0x2c, "FP_EXC64" },
	{ 0x2d, "GCS" },	 { 0x2f, "SERROR" },
	{ 0x30, "BREAKPT_LOW" }, { 0x31, "BREAKPT_CUR" },
	{ 0x32, "SOFTSTP_LOW" }, { 0x33, "SOFTSTP_CUR" },
	{ 0x34, "WATCHPT_LOW" }, { 0x35, "WATCHPT_CUR" },
	{ 0x38, "BKPT32" },	 { 0x3a, "VECTOR32" },
	{ 0x3c, "BRK64" },
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
