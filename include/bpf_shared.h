/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the BPF counting programs (src/bpf/kvmstat.bpf.c) and their loader
 * (src/sys/bpf_engine.c) agree on: the map keys, the configuration of the
 * programs that read a reason from a trace record, from the vCPU or from
 * the raw arguments, and the sizes of the program sets.
 * Plain C with <linux/types.h> types, so both clang -target bpf and the
 * host compiler take it.
 */
#ifndef KVMSTAT_BPF_SHARED_H
#define KVMSTAT_BPF_SHARED_H

#include <linux/types.h>

#define KS_NPLAIN 256	    /* plain counters: program i counts into slot i */
#define KS_NREC 4	    /* programs on a trace record (reason in a field) */
#define KS_NSRC 4	    /* child sources (tracepoints with reasons) */
#define KS_MAXR 2048	    /* reasons translated by the slot table */
#define KS_NONE 0xffffffffu /* no slot: the parent is not counted */

/* Per-thread count of one slot (ks_threads, a per-CPU hash). */
struct ks_thread_key {
	__u32 tgid;
	__u32 tid;
	__u32 slot;
	__u32 pad;
};

/*
 * The vCPU a thread ran when it first hit kvm_exit (the vcpu_id of the
 * struct kvm_vcpu the tracepoint was given: the N of the VMM's
 * "anon_inode:kvm-vcpu:N" fd and of debugfs's vcpuN), by thread id; with
 * per-thread counting and the vCPU's layout known.
 */
struct ks_tvcpu {
	__u32 tgid;
	__s32 vcpu;
};

/* A reason with no slot: unknown to the tables, or past KS_MAXR. */
struct ks_other_key {
	__u32 src;    /* child source */
	__u32 cls;    /* 1 when the guard field held the guard value */
	__u32 reason; /* the field's raw value */
	__u32 tgid;   /* with per-thread counting, else 0 */
	__u32 tid;
	__u32 pad;
};

/* How a record program finds its reason (and guard) in the trace record. */
struct ks_rec_cfg {
	__u32 parent_slot; /* slot of the tracepoint itself, or KS_NONE */
	__u32 src;	   /* child source index */
	__u32 reason_off;  /* bytes into the record */
	__u32 reason_size; /* 1, 2, 4 or 8 */
	__u32 isa_off;
	__u32 isa_size;	 /* 0: no guard field */
	__s64 isa_guard; /* cls = (guard field == isa_guard) */
	__u32 id_off;	 /* the record's vcpu_id (struct ks_tvcpu) */
	__u32 id_size;	 /* 4; 0: the record has none */
};

/*
 * How the program on a raw tracepoint whose arguments are (struct kvm_vcpu
 * *vcpu, guard) finds its reason in the kernel's structs (the loader reads
 * the offsets from the kernel's BTF; see arch.h, struct arch_vcpu_reason):
 * the struct holding the vCPU starts vcpu_off bytes before it; with
 * ptr_off set, the pointer there is followed; the reason is reason_off
 * bytes into that. Only hits whose guard is the layout's own ISA are read.
 */
struct ks_vcpu_cfg {
	__u32 parent_slot; /* slot of the tracepoint itself, or KS_NONE */
	__u32 src;	   /* child source index */
	__u32 vcpu_off;	   /* the vCPU's offset in its container */
	__s32 ptr_off;	   /* a pointer in the container to follow, or -1 */
	__u32 reason_off;  /* bytes into the container or what ptr points at */
	__u32 reason_size; /* 1, 2, 4 or 8: as many as the record's field */
	__u32 guarded;	   /* the second argument is the guard */
	__s32 id_off;	   /* struct kvm_vcpu's vcpu_id, or -1: unknown */
	__s64 isa_guard;   /* cls = (guard == isa_guard) */
	__s64 layout_isa;  /* the guard value of the ISA of this layout */
};

/*
 * How a program on a raw tracepoint whose arguments hold the reason reads
 * it (arm64's kvm_exit(ret, esr_ec, vcpu_pc); see arch.h, struct
 * arch_raw_reason): argument arg masked with mask; where gate_mask is set,
 * only when argument gate_arg masked with it is gate_value, the reason
 * being 0 otherwise, as the kernel's record has it. Arguments 0 and 1.
 */
struct ks_arg_cfg {
	__u32 parent_slot; /* slot of the tracepoint itself, or KS_NONE */
	__u32 src;	   /* child source index */
	__u32 arg;
	__u32 gate_arg;
	__u64 mask;
	__u64 gate_mask; /* 0: every hit's argument */
	__u64 gate_value;
};

/* Index into ks_slots of (source, guard class, reason < KS_MAXR). */
#define KS_SLOT_KEY(src, cls, reason) (((src)*2u + (cls)) * KS_MAXR + (reason))

#endif
