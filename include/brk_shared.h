/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the breakdown programs (src/bpf/breakdown.bpf.c) and their loader
 * (src/sys/brk_engine.c) agree on: the kinds of keys, the key of a count
 * and the bounds of the maps. Plain C with <linux/types.h> types, for
 * clang -target bpf and the host compiler.
 */
#ifndef KVMSTAT_BRK_SHARED_H
#define KVMSTAT_BRK_SHARED_H

#include <linux/types.h>

/* What a key is. */
enum brk_kind {
	BRK_IOPORT = 0,	   /* kvm_pio: port; dir 0 in, 1 out */
	BRK_MMIO = 1,	   /* kvm_mmio: guest physical address; 0 read,
			    * 1 write */
	BRK_MSR = 2,	   /* kvm_msr: index; 0 read (rdmsr), 1 write */
	BRK_HYPERCALL = 3, /* kvm_hypercall: number (arm64's kvm_hvc_arm64:
			    * SMCCC function id); dir 0 */
	BRK_NKINDS = 4,
};

/* The raw arguments kind's program reads, its tracepoint's first (which
 * it must have): its key and direction are among them (BRK_NO_ARG: no
 * direction). kvm_mmio's address is its third argument. */
#define BRK_NARGS(kind) ((kind) == BRK_MMIO ? 3u : 2u)
#define BRK_NO_ARG 0xffffffffu

/* Distinct keys counted (all threads, all kinds together); a key first
 * seen once they are taken counts in its thread's BRK_OTHER of its kind
 * and direction, which have BRK_NOTHER slots of their own. */
#define BRK_NKEYS 8192
#define BRK_NOTHER 2048
#define BRK_OTHER (~0ull)

/* One count: a thread's exits of one kind, key and direction. */
struct brk_key {
	__u32 tgid;
	__u32 tid;
	__u64 key;  /* port, address, index, number, or BRK_OTHER */
	__u16 kind; /* enum brk_kind */
	__u16 dir;
	__u32 pad;
};

/* The slot of a thread's last hit, which it tries first, and its hit
 * waiting for its re-entry (timed breakdowns): in an array by thread id
 * modulo BRK_NPEND, each entry the first claimer's (until the reader
 * finds that thread gone and frees it); a thread whose entry another
 * holds keeps its own in a hash instead. */
#define BRK_NPEND 16384
struct brk_pend {
	__u32 tid;     /* the owner; 0: free */
	__u32 slot;    /* its last hit's slot of the counts + 1; 0: none */
	__u32 pend;    /* 1: a hit waits for the re-entry */
	__u32 counted; /* 0: an MMIO read that went to the VMM, counted when
			* the read completes */
	__u64 ts;      /* when the hit came, where no exit start is shared */
};

/* A slot of the counts: its key (all zero while free) and its hits. */
struct brk_slot {
	struct brk_key k;
	__u64 count;
};

#endif
