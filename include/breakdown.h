/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Exits broken down below the reason (--breakdown, the monitor's 'k'):
 * which I/O port, MMIO address, MSR or hypercall, counted in the kernel
 * from the tracepoints the architecture has (x86's kvm_pio, kvm_mmio,
 * kvm_msr and kvm_hypercall; arm64's kvm_mmio, and kvm_hvc_arm64 by SMCCC
 * function id), per VM and vCPU, with a log2 histogram of the time to
 * re-entry per key when timed (--latency). The collector finds those
 * tracepoints under the run's tracefs, loads the breakdown engine
 * (include/brk_engine.h) and turns its per-thread counts into the
 * snapshot's keyed tables: the whole selection, each VM and (per_vcpu)
 * each vCPU, each table its top keys by count and the rest summed as
 * "other", keys named where they can be (the architecture's tables of
 * ports, MSRs and SMCCC function ids; MMIO addresses by the VMs' own
 * memory maps, asked through cfg.gpa_name).
 */
#ifndef KVMSTAT_BREAKDOWN_H
#define KVMSTAT_BREAKDOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "errmsg.h"
#include "latency.h"
#include "snapshot.h"

/* Rows of a table at most, "other" aside. */
#define BREAKDOWN_TOP 16

struct breakdown_cfg {
	const char *tracefs_root; /* NULL: the kernel's */
	const char *proc_root;	  /* vCPU indices of threads: their names, */
	const char *debugfs_root; /* else KVM's vcpuN/pid files */
	pid_t pid;		  /* only this VM; 0: all */
	/* 1 << kind, for each kind; those the architecture has not are
	 * left out (the monitor's 'k' asks for all) */
	unsigned kinds;
	bool timed; /* latency histograms per key */
	/* when timed, exit latency running beside (--latency): the hits
	 * take their exit's start from its programs' state; NULL: each
	 * hit is timed from itself */
	const struct latency *lat;
	bool per_vcpu; /* vCPUs' series in the exporter too */
	size_t top;    /* rows per table; 0: BREAKDOWN_TOP */
	/* The name VM pid gives guest physical address gpa, or NULL (valid
	 * until the next breakdown_read: copied); NULL: MMIO addresses go
	 * unnamed. */
	const char *(*gpa_name)(void *ctx, pid_t pid, uint64_t gpa);
	void *gpa_ctx;
};

struct breakdown;

struct arch_desc;

/* The kinds (1 << kind each) architecture d has: x86 every one, arm64
 * mmio and hypercall. */
unsigned breakdown_kinds_on(const struct arch_desc *d);
/*
 * The kinds of a --breakdown list ("ioport,msr", "all": d's kinds) on
 * architecture d into *kinds: 0, or -EINVAL with one line in msg, for a
 * word it does not know, or a kind d has not ("--breakdown ioport: I/O
 * ports are x86 only; on arm64: mmio, hypercall").
 */
int breakdown_parse_on(const struct arch_desc *d, const char *list,
		       unsigned *kinds, struct errmsg *msg);
/* breakdown_parse_on for the architecture kvmstat was built for. */
int breakdown_parse(const char *list, unsigned *kinds, struct errmsg *msg);

/* Finds the tracepoints and loads the engine. 0, or -errno with one line
 * in msg (what failed and what to do). */
int breakdown_open(struct breakdown **out, const struct breakdown_cfg *cfg,
		   struct errmsg *msg);
/* The tables now; the breakdown's, valid until the next read or close. */
const struct snap_breakdown *breakdown_read(struct breakdown *b);
/* Empties the counts (the monitor's reset). */
void breakdown_reset(struct breakdown *b);
void breakdown_close(struct breakdown *b);

#endif
