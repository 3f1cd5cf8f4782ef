/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the exit-latency programs (src/bpf/latency.bpf.c) and their loader
 * (src/sys/lat_engine.c) agree on: the histogram key and value. Plain C
 * with <linux/types.h> types, for clang -target bpf and the host compiler.
 */
#ifndef KVMSTAT_LAT_SHARED_H
#define KVMSTAT_LAT_SHARED_H

#include <linux/types.h>

/* log2 buckets of nanoseconds: 0 holds 0, i holds [2^(i-1), 2^i); the
 * last one is open (from 2^(LAT_NBUCKETS-2) ns, about 275 s). */
#define LAT_NBUCKETS 40

/* Histograms at most (threads x kinds x reasons seen). */
#define LAT_NSLOTS 16384

/* What a histogram times. */
enum lat_kind {
	LAT_EXIT = 0, /* kvm_exit to the next kvm_entry of the thread */
	LAT_VMM = 1,  /* kvm_userspace_exit until the thread runs the
		       * guest again (re-enters KVM_RUN) */
	LAT_NKINDS = 2,
};

/* One histogram: a thread's exits of one kind and reason. */
struct lat_key {
	__u32 tgid;
	__u32 tid;
	__u16 kind;   /* enum lat_kind */
	__u16 cls;    /* 1 when kvm_exit's guard field held the guard */
	__u32 reason; /* the raw reason */
};

struct lat_val {
	__u64 count;
	__u64 total; /* ns */
	__u64 min, max;
	__u64 b[LAT_NBUCKETS];
};

/* A thread's exits in flight, one per kind: when (0: none) and why it
 * left. An exit to user space is in both: kvm_exit starts the exit,
 * kvm_userspace_exit the time in the VMM. */
struct lat_start {
	__u64 ts[LAT_NKINDS];
	__u32 reason[LAT_NKINDS];
	__u16 cls[LAT_NKINDS];
	__u32 pad;
	/* per kind, the histogram of its last exit: slot + 1 (0: none),
	 * for that reason and class */
	__u32 hslot[LAT_NKINDS];
	__u32 hreason[LAT_NKINDS];
	__u16 hcls[LAT_NKINDS];
	__u32 pad2;
	/* The time of the exit last closed (kvm_exit to kvm_entry, 0 from
	 * the next kvm_exit on: none yet): what the breakdown programs
	 * (src/bpf/breakdown.bpf.c, --breakdown with --latency), which share
	 * this state, give the key of that exit's hit, reading no clock. */
	__u64 exit_last;
};

#endif
