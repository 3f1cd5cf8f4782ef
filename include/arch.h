/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Exit-reason names for the architecture kvmstat was built for, written from
 * the architecture manuals. They are only a fallback for kernels whose
 * tracepoint format files carry no __print_symbolic() table for the exit
 * reason; the running kernel's own table always wins. The build compiles
 * exactly one arch/<arch>/arch.c, each defining every symbol below.
 */
#ifndef KVMSTAT_ARCH_H
#define KVMSTAT_ARCH_H

#include <stddef.h>
#include <stdint.h>

struct arch_exit_reason {
	uint64_t value;
	const char *name;
};

/* The names of one tracepoint field's values for one ISA. */
struct arch_exit_table {
	const char *isa;		/* "vmx", "svm", "arm64", "powerpc", "s390" */
	const char *event;		/* tracepoint it decodes: "kvm_exit" */
	const char *field;		/* its field: "exit_reason", "esr_ec", ... */
	uint64_t mask;			/* applied to the field before lookup */
	size_t n;
	const struct arch_exit_reason *reasons;	/* sorted by value, unique */
};

/* "x86", "arm64", "powerpc", "s390" or "generic". */
extern const char *const arch_name;

/* Every table of this architecture, NULL-terminated (just NULL for generic). */
const struct arch_exit_table *const *arch_exit_tables(void);

/* The table of the ISA called isa, or NULL (also for a NULL isa). */
const struct arch_exit_table *arch_exit_table_for(const char *isa);

/*
 * Which ISA's table applies on this host, found without CPU flags (nested
 * and paravirtualised hosts show neither vmx nor svm): on x86 from the KVM
 * vendor module under sysfs_root ("/sys"; module/kvm_intel → "vmx",
 * module/kvm_amd → "svm"), NULL when that is unknown; on the other
 * architectures their one ISA; NULL for generic.
 */
const char *arch_detect_isa(const char *sysfs_root);

#endif
