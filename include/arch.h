/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What kvmstat knows about one architecture's KVM, as one const descriptor:
 * the tracepoints whose exit reasons become child events, the field the
 * kernel's kvm_exit uses to tell its ISAs apart and the value each ISA puts
 * there, exit-reason names written from the architecture manuals, how
 * to tell which ISA the host runs, the kinds of --breakdown it has (their
 * tracepoints and names of keys) and where a system call's argument sits
 * in its struct pt_regs. arch/<arch>/arch.c defines the
 * descriptor of one architecture (arch_x86_desc, ...); the Makefile links
 * the one it builds for plus arch/generic, and arch/common.c points
 * arch_host at it and holds the one lookup over any descriptor.
 *
 * The exit-reason tables are only a fallback for kernels whose tracepoint
 * format files carry no __print_symbolic() table for the reason field: the
 * running kernel's own table always wins.
 */
#ifndef KVMSTAT_ARCH_H
#define KVMSTAT_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct arch_exit_reason {
	uint64_t value;
	const char *name; /* as the kernel's tracepoint format names it */
	/* kvm_stat's spelling ("IOIO" where the kernel says "io"), NULL for
	 * a reason kvm_stat does not know: such reasons are listed under
	 * this name even when the kernel's format does not name them */
	const char *kvm_stat;
};

/* The names of one tracepoint field's values for one ISA. */
struct arch_exit_table {
	const char *isa;   /* "vmx", "svm", "arm64", "powerpc", "s390" */
	const char *event; /* tracepoint it decodes: "kvm_exit" */
	const char *field; /* its field: "exit_reason", "esr_ec", ... */
	uint64_t mask;	   /* applied to the field before lookup */
	size_t n;
	const struct arch_exit_reason *reasons; /* sorted by value, unique */
	bool listed; /* every reason is listed, named or not by the
		      * kernel (the uapi header's KVM_EXIT_*) */
};

/*
 * Where a tracepoint's raw arguments (the order of the kernel's TP_PROTO)
 * carry the reason its record copies, for a BPF program on the raw
 * tracepoint, which takes no perf event: argument arg, masked with mask;
 * where gate_mask is set, only a hit whose argument gate_arg masked with
 * it is gate_value, the record holding 0 for the others (as the kernel's
 * TP_fast_assign does). The programs read the first two arguments.
 */
struct arch_raw_reason {
	bool known; /* false: the arguments do not hold the reason (x86's
		     * kvm_exit(vcpu, isa): it is in the vCPU's structs) */
	unsigned int arg, gate_arg; /* 0 or 1 */
	uint64_t mask, gate_mask, gate_value;
};

/* A tracepoint whose field's values become child events: kvm_exit(HLT). */
struct arch_source {
	const char *event; /* "kvm_exit" */
	const char *field; /* "exit_reason" */
	const char *strip; /* prefix dropped from reason names
					 * ("KVM_EXIT_"), or NULL */
	/* the reasons when they do not depend on the ISA, or NULL: then
	 * they are the table of the host's ISA (arch_table_for) */
	const struct arch_exit_table *table;
	struct arch_raw_reason raw; /* the reason in the raw arguments */
};

/* The value one ISA puts in the kernel's guard field (KVM_ISA_VMX is 1). */
struct arch_guard {
	const char *isa; /* "vmx"; NULL ends a list */
	int64_t value;	 /* 1 */
};

/*
 * Where one ISA's KVM keeps a tracepoint's reason while the tracepoint
 * fires, for a BPF program on the raw tracepoint, whose arguments are
 * (struct kvm_vcpu *vcpu, guard) and not the reason: the vendor's struct
 * that holds the vCPU, maybe a pointer in it to follow, and the member
 * the kernel's own trace record copies the reason from. Names only: the
 * offsets come from the running kernel's BTF, so no layout is frozen.
 * That spares the trace record, which a program can only reach through a
 * perf event (CAP_SYS_ADMIN where kernel.perf_event_paranoid is above 2).
 */
struct arch_vcpu_reason {
	const char *isa;       /* "svm"; NULL ends a list */
	const char *event;     /* the tracepoint: "kvm_exit" */
	const char *module;    /* whose BTF has the structs: "kvm_amd" (else
				* vmlinux's, the module built in) */
	const char *container; /* the struct holding the vCPU: "vcpu_svm" */
	const char *vcpu;      /* its struct kvm_vcpu member: "vcpu" */
	const char *pointer;   /* a pointer member of container to follow
				* ("vmcb"), or NULL: the reason is in it */
	/* the reason's member in the struct pointer points at (else in
	 * container), dotted, the first the kernel has: "control.exit_code" */
	const char *paths[4];
};

/* A name for a range of keys of a breakdown (--breakdown): MSR indices,
 * I/O ports, hypercall function ids. */
struct arch_key_name {
	uint64_t lo, hi;  /* [lo, hi] */
	const char *name; /* "COM1", "X2APIC_ICR", "PMC", "PSCI_VERSION" */
	bool indexed;	  /* the key's offset from lo appended: "PMC3" */
};

/*
 * Where one kind of --breakdown finds its keys on an architecture: a kvm
 * tracepoint, its record's fields holding the key and the direction, the
 * same as arguments of its raw tracepoint (the order of the kernel's
 * TP_PROTO), which the BPF programs read, and names of keys.
 */
struct arch_breakdown {
	/* "ioport", "mmio", "msr", "hypercall"; NULL ends a list */
	const char *kind;
	const char *event;    /* "kvm_pio", "kvm_hvc_arm64" */
	const char *key;      /* the key's field: "port", "r0" */
	const char *dir;      /* the direction's field, or NULL: none */
	unsigned int key_arg; /* its raw argument (the programs read the
			       * first two, kvm_mmio's three) */
	unsigned int dir_arg; /* the direction's, when dir */
	/* names of keys, the first range holding a key naming it (a
	 * narrower one listed before a wider one around it); NULL: none */
	const struct arch_key_name *names;
	size_t nnames;
};

/* The generic kvm_mmio(type, len, gpa, val) (virt/kvm), every
 * architecture's: by guest physical address, read or write. */
#define ARCH_BREAKDOWN_KVM_MMIO                                    \
	{                                                          \
		.kind = "mmio", .event = "kvm_mmio", .key = "gpa", \
		.dir = "type", .key_arg = 2, .dir_arg = 0,         \
	}

struct arch_desc {
	const char *name; /* "x86", "arm64", "powerpc", "s390",
					 * "generic" */
	/* child sources, NULL-terminated: the architecture's own, then
	 * arch_source_userspace_exit, which every architecture has */
	const struct arch_source *const *sources;
	/* the field a tracepoint's format tests to pick an ISA's table
	 * ("REC->isa == 1 ?"), or NULL with no guards */
	const char *guard_field;
	const struct arch_guard *guards; /* ended by isa NULL, or NULL */
	const struct arch_exit_table *const *tables; /* NULL-terminated */
	/* where reasons sit in the kernel's structs, per ISA and event
	 * (ended by isa NULL), or NULL */
	const struct arch_vcpu_reason *vcpu_reasons;
	/*
	 * Which ISA the host runs, from sysfs_root ("/sys"), NULL when
	 * unknown; NULL where the architecture has at most one ISA (that
	 * of its tables, see arch_detect_isa()).
	 */
	const char *(*detect_isa)(const char *sysfs_root);
	/* The ISA of CPUs of the vendor_id /proc/cpuinfo shows
	 * ("GenuineIntel"), NULL when unknown or not needed. */
	const char *(*vendor_isa)(const char *vendor_id);
	/* the kinds of --breakdown it has, ended by kind NULL, or NULL */
	const struct arch_breakdown *breakdowns;
	/* where a system call's second argument sits in the kernel's
	 * struct pt_regs (raw_syscalls:sys_enter's first argument: the
	 * exit-latency programs find ioctl(fd, KVM_RUN) there, their
	 * last-resort mark of a return to the guest); 0: not known */
	unsigned int syscall_arg1_off;
};

/* kvm_userspace_exit's reason (KVM_EXIT_HLT, ...): every architecture's. */
extern const struct arch_source arch_source_userspace_exit;

extern const struct arch_desc arch_x86_desc;
extern const struct arch_desc arch_arm64_desc;
extern const struct arch_desc arch_powerpc_desc;
extern const struct arch_desc arch_s390_desc;
extern const struct arch_desc arch_generic_desc;

/* The descriptor of the architecture kvmstat was built for. */
extern const struct arch_desc *const arch_host;

/* How many child sources d lists. */
size_t arch_nsources(const struct arch_desc *d);

/* d's table for the ISA called isa, or NULL (also for a NULL isa). */
const struct arch_exit_table *arch_table_for(const struct arch_desc *d,
					     const char *isa);

/* d's description of where event's reason sits on a host running isa,
 * or NULL (also for a NULL isa). */
const struct arch_vcpu_reason *arch_vcpu_reason_for(const struct arch_desc *d,
						    const char *event,
						    const char *isa);

/* Whether d describes where event's reason sits for any ISA (nothing
 * read: what arch_vcpu_reason_for needs the host's ISA for). */
bool arch_vcpu_reason_any(const struct arch_desc *d, const char *event);

/* The name t gives value (masked by t->mask), or NULL. */
const char *arch_reason_name(const struct arch_exit_table *t, uint64_t value);

/*
 * The value a format's guard field holds on a host running isa, or -1 when
 * that is unknown: no isa, no guard for it in d, or field (the guard field
 * a format's table names, maybe NULL) is not d's guard field.
 */
int64_t arch_guard_value(const struct arch_desc *d, const char *field,
			 const char *isa);

/*
 * Which of d's ISAs the host runs, found without CPU flags (nested and
 * paravirtualised hosts show neither vmx nor svm): d's detect_isa() given
 * sysfs_root (x86 asks the loaded vendor module), else the one ISA of all
 * d's tables; NULL when unknown, or where d has no table.
 */
const char *arch_detect_isa(const struct arch_desc *d, const char *sysfs_root);

/*
 * As arch_detect_isa(), then, if that does not know, the CPU vendor of
 * proc_root/cpuinfo ("/proc", NULL for "/proc") through d's vendor_isa():
 * "GenuineIntel" runs VMX, "AuthenticAMD" SVM. The vendor module wins
 * because a paravirtual or nested KVM need not be the CPU's own kind.
 */
const char *arch_detect_isa_at(const struct arch_desc *d,
			       const char *sysfs_root, const char *proc_root);

/* src's reasons on a host running isa: src->table, else d's table for isa
 * when it decodes src's event and field; NULL when there is none. */
const struct arch_exit_table *arch_source_table(const struct arch_desc *d,
						const struct arch_source *src,
						const char *isa);

/* The name kvmstat shows for r: kvm_stat's spelling, else the kernel's. */
const char *arch_reason_display(const struct arch_exit_reason *r);

/* d's child source of event's field, or NULL. */
const struct arch_source *arch_source_find(const struct arch_desc *d,
					   const char *event,
					   const char *field);

/* Where d's breakdown kind ("mmio") finds its keys, or NULL when d has
 * no such kind. */
const struct arch_breakdown *arch_breakdown_for(const struct arch_desc *d,
						const char *kind);

/* The name b gives key ("TSC_DEADLINE", "COM1", "PMC3", "PSCI_VERSION")
 * into buf, or NULL when it has none. */
const char *arch_key_name(const struct arch_breakdown *b, uint64_t key,
			  char *buf, size_t len);

struct tp_format;

/*
 * Makes the reason tables of fmt, the parsed format of src's event, name
 * what kvm_stat users expect, so that the children of src are those of the
 * host's ISA only, spelled as kvm_stat spells them:
 * - of fmt's tables decoding src's field, only the first that applies to
 *   isa is kept (none of the guarded ones when isa is NULL or unknown to d:
 *   VMX and SVM names are never listed side by side);
 * - in it, each reason kvm_stat knows gets kvm_stat's name and is added if
 *   the kernel does not name it; a reason only the kernel knows keeps the
 *   kernel's name; a table marked listed adds every reason it has;
 * - with no such table in fmt, one is made from arch_source_table().
 * 0, or -ENOENT when src's reasons have no name at all (no table).
 */
int arch_name_reasons(const struct arch_desc *d, const struct arch_source *src,
		      const char *isa, struct tp_format *fmt);

#endif
