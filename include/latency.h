/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Exit latency per reason (--latency, the monitor's 'l'): how long each
 * kind of exit keeps a vCPU out of the guest. Two kinds:
 *  - exit latency: kvm_exit to the next kvm_entry of the same thread, by
 *    kvm_exit's reason (where those tracepoints fire);
 *  - time in the VMM: kvm_userspace_exit until the thread enters the
 *    guest again, by its reason (MMIO, IO, HLT...). Re-entry is
 *    kvm_entry where it fires, and the start of KVM_RUN (fentry on
 *    kvm_arch_vcpu_ioctl_run, or kvm_fpu(load) without BTF) everywhere.
 * The collector finds those tracepoints under the run's tracefs, loads
 * the latency engine (include/lat_engine.h) and reads its per-thread
 * histograms into a lat_snap: rows for the whole selection, each VM and
 * each thread, every one a log2 histogram of nanoseconds with count,
 * total, min and max since latency was turned on (or reset).
 */
#ifndef KVMSTAT_LATENCY_H
#define KVMSTAT_LATENCY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "errmsg.h"
#include "lat_shared.h"

struct latency_cfg {
	const char *tracefs_root; /* NULL: the kernel's */
	const char *proc_root;	  /* vCPU indices of threads: their names, */
	const char *debugfs_root; /* else KVM's vcpuN/pid files */
	pid_t pid;		  /* only this VM; 0: all */
};

/* One histogram: a reason of one kind in one scope. */
struct lat_row {
	enum lat_kind kind;
	char reason[64]; /* "HLT", or the raw number */
	pid_t pid;	 /* 0: the whole selection */
	pid_t tid;	 /* a thread of pid, or 0 for the VM's row */
	int vcpu;	 /* the thread's vCPU index, or -1 */
	uint64_t count, total, min, max; /* ns */
	uint64_t b[LAT_NBUCKETS];	 /* see lat_shared.h */
	uint64_t key;			 /* (cls, reason), for merging */
};

/* What front-ends render; a value of its own. */
struct lat_snap {
	struct lat_row *rows; /* by kind, scope (whole, VMs by pid,
			       * threads), then total time, largest first */
	size_t n;
	const char *mark; /* what marks re-entry after a userspace exit */
	bool exits;	  /* kvm_exit and kvm_entry are timed */
	char error[1024]; /* why latency is off though asked for, or "" */
};

struct latency;

/* Finds the tracepoints and loads the engine. 0, or -errno with a line
 * in msg (what failed and what to do). */
int latency_open(struct latency **out, const struct latency_cfg *cfg,
		 struct errmsg *msg);
/* The histograms now; the caller frees with lat_snap_free. */
struct lat_snap *latency_read(struct latency *l);
/* Empties the histograms (the monitor's reset). */
void latency_reset(struct latency *l);
void latency_close(struct latency *l);
void lat_snap_free(struct lat_snap *s);

/* "exit" or "vmm". */
const char *lat_kind_name(enum lat_kind k);

#endif
