/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The stats aggregator: turns raw provider readings into a total and a
 * delta per field, per VM and per vCPU, and builds the const snapshot that
 * front-ends render.
 */
#ifndef KVMSTAT_STATS_H
#define KVMSTAT_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "filter.h"
#include "hashtab.h"
#include "sample.h"

/* One series: a field in one scope (whole selection, a VM, a vCPU). */
struct stat_cell {
	uint64_t raw;		/* last raw reading */
	uint64_t total;		/* counted since kvmstat started (or -i) */
	int64_t delta;		/* change over the last interval */
	bool seen;		/* at least one reading */
	bool fresh;		/* read in the last refresh */
	pid_t tid;		/* thread of a vCPU series, if known */
};

struct stats_key {
	int field;
	pid_t pid;
	int vcpu;
};

struct stats {
	struct field_table fields;
	struct sample_set set;		/* providers fill it each refresh */
	struct stat_cell *sum;		/* by field id: pid 0, all vCPUs */
	size_t nsum;
	/* breakdown series (pid != 0 or a vCPU), hashed by key */
	struct stats_key *keys;
	struct stat_cell *cells;
	size_t nkeys, cap;
	struct hashtab index;
	/* arbitration scratch: (field, pid) the owners served this refresh,
	 * and per field what its owner reported (a total, VMs) */
	struct served_set owned;
	unsigned char *brk;
	size_t capbrk;
	bool include_past;		/* -i: totals include the past */
	unsigned long refreshes;	/* completed updates */
	uint64_t now_ns, interval_ns;	/* monotonic time of the last update */
	struct timespec wall;		/* wall clock of the last update */
};

void stats_init(struct stats *s, bool include_past);
void stats_free(struct stats *s);
/*
 * Folds s->set (then clears it) into the cells; now_ns is CLOCK_MONOTONIC.
 * A field has one owner, the provider that declared it (field_info.
 * provider); samples another provider read (sample.src) only fill in the
 * VMs the owner did not serve in this refresh: they count per VM and vCPU
 * and add to the field's total. An owner that reports a total but no VM
 * breakdown sees every VM, and the others' readings of it are dropped.
 */
void stats_update(struct stats *s, uint64_t now_ns);
/* Sets every shown total to zero from now ('r' in the monitor). */
void stats_reset(struct stats *s);
/* Breakdown cell or NULL. */
const struct stat_cell *stats_cell(const struct stats *s, int field, pid_t pid,
				   int vcpu);

/* One rendered line of the summary. */
struct snap_row {
	int field;
	const char *name;
	int parent;		/* field id or -1 */
	enum field_type type;
	uint64_t total;
	int64_t delta;
	double rate;		/* delta per second */
	bool valid;		/* false: could not be read this time */
};

/* Which series a snapshot's rows come from. */
struct snap_scope {
	pid_t pid;		/* 0: the whole selection; else one VM */
	int vcpu;		/* SAMPLE_ALL_VCPUS or one vCPU index */
	bool per_vcpu;		/* add NAME/vcpuN rows for every vCPU of pid */
};

/* A VM (vcpu < 0) or a vCPU, for the per-guest and per-vCPU views. */
#define SNAP_TOP 3
struct snap_group {
	pid_t pid;
	int vcpu;		/* -1 for a VM */
	pid_t tid;		/* vCPU thread, 0 if unknown */
	uint64_t total;		/* exits ("exits" if known, else all events) */
	int64_t delta;
	double rate;
	bool fresh;		/* read in the last refresh */
	int top[SNAP_TOP];	/* busiest fields by rate, -1 = none */
	double top_rate[SNAP_TOP];
};

/* What front-ends render; built from stats, never touching providers. */
struct snapshot {
	const struct stats *stats;
	struct snap_row *rows;	/* sorted by name */
	size_t nrows;
	uint64_t interval_ns;
	struct timespec wall;
	char **owned;		/* row names made for this snapshot */
	size_t nowned;
};

/* Rows for every field with a reading that the filter keeps; a parent
 * without readings of its own sums its children. Caller frees with
 * snapshot_free. */
void stats_snapshot(const struct stats *s, const struct field_filter *filter,
		    struct snapshot *out);
/* The same for a scope: one VM, one vCPU, or with per-vCPU rows. */
void stats_snapshot_scope(const struct stats *s,
			  const struct field_filter *filter,
			  const struct snap_scope *scope, struct snapshot *out);
void snapshot_free(struct snapshot *snap);
/* vCPU indices with readings for VM pid, ascending; returns the count,
 * *out caller frees. */
size_t stats_vcpus_of(const struct stats *s, pid_t pid, int **out);
/* The VMs (pid 0) or the vCPUs of one VM, sorted by pid or index; caller
 * frees *out. */
size_t stats_groups(const struct stats *s, const struct field_filter *filter,
		    pid_t pid, struct snap_group **out);

#endif
