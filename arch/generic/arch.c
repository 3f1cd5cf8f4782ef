// SPDX-License-Identifier: GPL-2.0-only
/*
 * The generic descriptor, for architectures kvmstat has nothing specific
 * for: no fallback tables and no ISA, so only the kernel's own format tables
 * name exit reasons. Its one child source, kvm_userspace_exit's reason (why
 * KVM_RUN returned to the VMM), is common to every architecture, so it lives
 * here and every descriptor lists it. Always linked.
 */
#include <stddef.h>

#include "arch.h"

const struct arch_source arch_source_userspace_exit = {
	.event = "kvm_userspace_exit",
	.field = "reason",
	.strip = "KVM_EXIT_",
};

static const struct arch_source *const generic_sources[] = {
	&arch_source_userspace_exit,
	NULL,
};

static const struct arch_exit_table *const generic_tables[] = {
	NULL,
};

const struct arch_desc arch_generic_desc = {
	.name = "generic",
	.sources = generic_sources,
	.tables = generic_tables,
};
