// SPDX-License-Identifier: GPL-2.0-only
/*
 * The s390 descriptor: kvm_s390_sie_exit's icptcode becomes child events.
 * Its fallback names, for kernels whose SIE exit format has no table, are
 * the interception codes SIE stores when it gives control back to the host.
 * There is one ISA, so detection needs nothing from the host.
 */
#include <stddef.h>

#include "arch.h"
#include "util.h"

static const struct arch_exit_reason s390_icpt_reasons[] = {
	{ 0x00, "host interruption", NULL },
	{ 0x04, "instruction", NULL },
	{ 0x08, "program interruption", NULL },
	{ 0x0c, "instruction and program interruption", NULL },
	{ 0x10, "external request", NULL },
	{ 0x14, "external interruption", NULL },
	{ 0x18, "I/O request", NULL },
	{ 0x1c, "wait state", NULL },
	{ 0x20, "validity", NULL },
	{ 0x28, "stop request", NULL },
	{ 0x2c, "operation exception", NULL },
	{ 0x38, "partial execution", NULL },
	{ 0x40, "I/O interruption", NULL },
	{ 0x44, "I/O instruction", NULL },
};

static const struct arch_exit_table s390_icpt_table = {
	.isa = "s390",
	.event = "kvm_s390_sie_exit",
	.field = "icptcode",
	.mask = 0xff, /* a one-byte code */
	.n = ARRAY_SIZE(s390_icpt_reasons),
	.reasons = s390_icpt_reasons,
};

static const struct arch_exit_table *const s390_tables[] = {
	&s390_icpt_table,
	NULL,
};

static const struct arch_source s390_exit_source = {
	.event = "kvm_s390_sie_exit",
	.field = "icptcode",
};

static const struct arch_source *const s390_sources[] = {
	&s390_exit_source,
	&arch_source_userspace_exit,
	NULL,
};

/* The breakdown of the generic kvm_mmio(type, len, gpa, val), which the
 * kernel's record keeps in that order. */
static const struct arch_breakdown s390_breakdowns[] = {
	ARCH_BREAKDOWN_KVM_MMIO,
	{ .kind = NULL },
};

/* One ISA and no guard: arch_detect_isa() names the ISA of the table. */
const struct arch_desc arch_s390_desc = {
	.name = "s390",
	.sources = s390_sources,
	.tables = s390_tables,
	.breakdowns = s390_breakdowns,
};
