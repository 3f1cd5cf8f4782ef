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
	BRK_HYPERCALL = 3, /* kvm_hypercall: number; dir 0 */
	BRK_NKINDS = 4,
};

/* Distinct keys counted (all threads, all kinds together); a key first
 * seen once they are taken counts in its thread's BRK_OTHER of its kind
 * and direction, which have BRK_NOTHER entries of their own. */
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

#endif
