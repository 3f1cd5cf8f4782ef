// SPDX-License-Identifier: GPL-2.0-only
/*
 * s390 exit-reason names, the fallback for kernels whose SIE exit format has
 * no table: the interception codes SIE stores when it gives control back to
 * the host, which kvm_s390_sie_exit records as icptcode. There is one ISA,
 * so detection needs nothing from the host.
 */
#include <stddef.h>
#include <string.h>

#include "arch.h"
#include "util.h"

const char *const arch_name = "s390";

static const struct arch_exit_reason s390_icpt_reasons[] = {
	{ 0x00, "host interruption" },
	{ 0x04, "instruction" },
	{ 0x08, "program interruption" },
	{ 0x0c, "instruction and program interruption" },
	{ 0x10, "external request" },
	{ 0x14, "external interruption" },
	{ 0x18, "I/O request" },
	{ 0x1c, "wait state" },
	{ 0x20, "validity" },
	{ 0x28, "stop request" },
	{ 0x2c, "operation exception" },
	{ 0x38, "partial execution" },
	{ 0x40, "I/O interruption" },
	{ 0x44, "I/O instruction" },
};

static const struct arch_exit_table s390_icpt_table = {
	.isa = "s390",
	.event = "kvm_s390_sie_exit",
	.field = "icptcode",
	.mask = 0xff,		/* a one-byte code */
	.n = ARRAY_SIZE(s390_icpt_reasons),
	.reasons = s390_icpt_reasons,
};

static const struct arch_exit_table *const s390_tables[] = {
	&s390_icpt_table,
	NULL,
};

const struct arch_exit_table *const *arch_exit_tables(void)
{
	return s390_tables;
}

const struct arch_exit_table *arch_exit_table_for(const char *isa)
{
	for (size_t i = 0; isa && s390_tables[i]; i++)
		if (!strcmp(s390_tables[i]->isa, isa))
			return s390_tables[i];
	return NULL;
}

const char *arch_detect_isa(const char *sysfs_root)
{
	(void)sysfs_root;
	return "s390";
}
