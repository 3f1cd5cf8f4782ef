/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The stats aggregator: turns raw provider readings into a total and a
 * delta per field, per VM and per vCPU. Front-ends see them through a
 * snapshot (snapshot.h), built from here once per refresh.
 */
#ifndef KVMSTAT_STATS_H
#define KVMSTAT_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "arbiter.h"
#include "filter.h"
#include "hashtab.h"
#include "sample.h"

/* One series: a field in one scope (whole selection, a VM, a vCPU). */
struct stat_cell {
	uint64_t raw;	/* last raw reading */
	uint64_t total; /* counted since kvmstat started (or -i) */
	int64_t delta;	/* change over the last interval */
	bool seen;	/* at least one reading */
	bool fresh;	/* read in the last refresh */
	pid_t tid;	/* thread of a vCPU series, if known */
};

struct stats_key {
	int field;
	pid_t pid;
	int vcpu;
};

struct stats {
	struct field_table fields;
	struct sample_set set; /* providers fill it each refresh */
	struct stat_cell *sum; /* by field id: pid 0, all vCPUs */
	size_t nsum;
	/* breakdown series (pid != 0 or a vCPU), hashed by key */
	struct stats_key *keys;
	struct stat_cell *cells;
	size_t nkeys, cap;
	struct hashtab index;
	/* by position in set: the cell its reading went to last refresh
	 * (index in cells, -1 none), checked against the key before use, so
	 * that a refresh like the one before hashes nothing */
	long *memo;
	size_t nmemo;
	/* util_serial() of the last change to what the stats hold beyond
	 * numbers: a series read for the first time (a new key, a field's
	 * first total); snapshots keep their layout while it and the field
	 * table's gen stay */
	uint64_t gen;
	/* which provider's readings count; providers ask it during a
	 * refresh (provider.arbiter), stats_update() ends its refresh */
	struct arbiter arbiter;
	bool include_past;	      /* -i: totals include the past */
	unsigned long refreshes;      /* completed updates */
	uint64_t now_ns, interval_ns; /* monotonic time of the last update */
	struct timespec wall;	      /* wall clock of the last update */
};

void stats_init(struct stats *s, bool include_past);
void stats_free(struct stats *s);
/*
 * Folds s->set (then clears it) into the cells; now_ns is CLOCK_MONOTONIC.
 * Only what s->arbiter keeps is folded: the owners' readings as they are,
 * then the fill-ins, which count per VM and vCPU and add their VM-wide
 * values to the field's total (a counter by what it counted, a gauge by
 * its value, a peak by the largest). Ends the arbiter's refresh.
 */
void stats_update(struct stats *s, uint64_t now_ns);
/* Sets every shown total to zero from now ('r' in the monitor). */
void stats_reset(struct stats *s);
/* Breakdown cell or NULL. */
const struct stat_cell *stats_cell(const struct stats *s, int field, pid_t pid,
				   int vcpu);

/* vCPU indices with readings for VM pid, ascending; returns the count,
 * *out caller frees. */
size_t stats_vcpus_of(const struct stats *s, pid_t pid, int **out);

#endif
