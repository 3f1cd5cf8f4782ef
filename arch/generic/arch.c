// SPDX-License-Identifier: GPL-2.0-only
/*
 * Architectures without exit-reason names of their own: no fallback tables
 * and no ISA, so only the kernel's own format tables name exit reasons.
 */
#include <stddef.h>

#include "arch.h"

const char *const arch_name = "generic";

static const struct arch_exit_table *const generic_tables[] = {
	NULL,
};

const struct arch_exit_table *const *arch_exit_tables(void)
{
	return generic_tables;
}

const struct arch_exit_table *arch_exit_table_for(const char *isa)
{
	(void)isa;
	return NULL;
}

const char *arch_detect_isa(const char *sysfs_root)
{
	(void)sysfs_root;
	return NULL;
}
