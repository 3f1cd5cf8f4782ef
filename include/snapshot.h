/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Snapshots: what front-ends render, built from the stats once per
 * refresh and from then on a value of its own. It copies what it shows
 * (the field declarations and names, the numbers, guest names) and keeps
 * no pointer into the stats, so renderers never reach back into the
 * aggregator or the providers.
 *
 * A snapshot holds
 *  - fields: a copy of the field table, ids as in the stats, with the
 *    units, histogram shapes and flags the providers declared;
 *  - a tree of scopes: the whole selection, each VM with a reading (by
 *    pid), each of its vCPUs with one (by index). Each scope has its rows
 *    (every field read in it, whatever the filter says, by field id), its
 *    histograms with their buckets (those of the binary stats, whose
 *    buckets are fields and which are rows too, and those read whole,
 *    exit latency's, which are not rows of kvm_stat's list), and the
 *    summary the per-guest views show (exits, the busiest events);
 *  - the view: the rows a front-end lists, from one scope (the whole
 *    selection, one VM, one vCPU), only those the filter keeps, with
 *    NAME/vcpuN rows for every vCPU with --per-vcpu; sorted by name.
 * Without per-VM breakdowns the tree is the whole selection alone.
 */
#ifndef KVMSTAT_SNAPSHOT_H
#define KVMSTAT_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "filter.h"
#include "sample.h"
#include "vmdir.h"

struct stats;
struct hist_set;
struct vcputime;

/* One bucket of a histogram in one scope. */
struct snap_bucket {
	int index;	 /* the bucket's number (field_info.bucket) */
	uint64_t lo, hi; /* raw range [lo, hi); hi UINT64_MAX: open */
	uint64_t total;	 /* samples counted (0 when not seen) */
	int64_t delta;	 /* in the last interval */
	bool seen;	 /* read in this scope at least once */
	bool fresh;	 /* read in the last refresh */
};

/* A histogram in one scope: every bucket its provider declared, in index
 * order (the one histogram-bucket index; hist.h has the model). */
struct snap_hist {
	int field; /* the histogram's own (parent) field, or a keyed
		    * child of one ("kvm_exit_latency(HLT)") */
	const struct snap_bucket *buckets;
	size_t nbuckets;
	bool fresh; /* read in the last refresh */
	/* read whole by its source (exit latency), which measured count,
	 * sum, min and max too (raw units); else only the buckets are
	 * known, and a sum is an estimate from them */
	bool measured;
	uint64_t count, sum, min, max;
};

/* One field in one scope, or one line of the view. */
struct snap_row {
	int field;	  /* id in snapshot.fields */
	const char *name; /* the field's name, or "NAME/vcpuN" */
	int parent;	  /* field id, or -1 (also for a parent that
				 * sums children without readings of its own) */
	enum field_type type;
	bool per_vcpu; /* a NAME/vcpuN line of the per-vCPU view */
	uint64_t total;
	int64_t delta;
	double rate;		      /* delta per second */
	bool valid;		      /* false: could not be read this time */
	const struct snap_hist *hist; /* a histogram's buckets in the
					 * row's scope, else NULL */
};

/* A scope's busiest events, kept for the per-guest views. */
#define SNAP_TOP 3

/* The whole selection, a VM or a vCPU, with its rows and its summary. */
struct snap_scope {
	pid_t pid;	   /* 0: the whole selection; else a VM */
	int vcpu;	   /* SAMPLE_ALL_VCPUS, or a vCPU of pid */
	pid_t tid;	   /* a vCPU's thread, 0 if unknown */
	const char *guest; /* guest name of the VM (its vCPUs too), or
				 * NULL */
	bool fresh;	   /* something of its own read in the last
				 * refresh (a VM: not only its vCPUs) */
	/* Exits: the total of the field its provider flags FIELD_EXITS when
	 * that was read here, else the sum of every event (fields without
	 * a parent, unit or histogram). */
	uint64_t total;
	int64_t delta;
	double rate;
	int top[SNAP_TOP]; /* busiest fields the filter keeps, by rate
				 * (a kept child event stands for its parent,
				 * buckets never count); -1 = none */
	double top_rate[SNAP_TOP];
	const struct snap_row *rows; /* every field read here, by id */
	size_t nrows;
	const struct snap_hist *hists; /* every histogram here, by field
					* id (a row's hist is one) */
	size_t nhists;
	const struct snap_scope *children; /* the whole selection: VMs
						 * by pid; a VM: its vCPUs
						 * by index */
	size_t nchildren;
};

struct snap_store;

/* A line about a source for the front-ends to show: one that could not
 * start (shown until it starts), or what one did that the user should
 * hear of (it mounted tracefs, it fell back to perf events). */
struct snap_note {
	const char *source; /* the provider's name */
	bool failed;	    /* could not start */
	const char *text;   /* why, or what it did */
};

/* The facts a front-end's header shows, as the run has them now (the
 * loop's, which the monitor's keys change). */
struct snap_header {
	pid_t pid;	     /* the VM watched, or 0: every VM */
	const char *guest;   /* its guest name when chosen by name, or NULL */
	const char *filter;  /* -f or the monitor's f, or NULL: the default */
	double delay;	     /* seconds between refreshes */
	bool children;	     /* child events shown where hidden by default */
	const char *sources; /* the open sources ("tracepoint statsfd"), or
			      * "no source: why" */
	const char *replay;  /* --replay: the recording's time and place
			      * ("replay 2026-11-27 03:00:00  5/120"), or
			      * NULL */
};

/* The header facts of exit latency (--latency, the monitor's 'l'); its
 * histograms are the scopes'. */
struct snap_latency {
	int exit_field;	     /* the histogram fields whose keyed children are */
	int vmm_field;	     /* the reasons: kvm_exit to kvm_entry, and time in
			 * the VMM; -1 when not declared */
	bool exits_timed;    /* kvm_exit and kvm_entry are timed */
	const char *reentry; /* what marks re-entry after a userspace exit */
	const char *error;   /* why latency is off though asked for, or
			      * NULL */
};

/* One key of a breakdown table (--breakdown): exits of one kind below
 * the reason, by port, address, MSR or hypercall number. */
struct snap_brk_row {
	uint64_t key;	  /* port, guest physical address, index, number */
	const char *dir;  /* "in", "out", "read", "write"; NULL: none
			   * (hypercalls) */
	bool other;	  /* the keys past the table's top, summed */
	const char *name; /* "COM1", "TSC_DEADLINE", a QEMU region; or NULL */
	uint64_t count;
	int64_t delta;	 /* in the last interval */
	double rate;	 /* per second */
	size_t nbuckets; /* with latency: log2 buckets of ns (hist.h's model),
			  * else 0 */
	const uint64_t *b;
	uint64_t tcount, sum, min, max; /* times to re-entry, ns */
};

/* The kinds, as --breakdown names them, in their order. */
#define BREAKDOWN_KINDS "ioport, mmio, msr, hypercall"

/* A kind's table in one scope, its rows by count (other last). */
struct snap_brk_table {
	const char *kind;  /* "ioport", "mmio", "msr", "hypercall" */
	const char *event; /* its tracepoint: "kvm_pio", "kvm_hvc_arm64"... */
	pid_t pid;	   /* 0: the whole selection; else a VM */
	int vcpu;	   /* SAMPLE_ALL_VCPUS, or a vCPU of pid */
	pid_t tid;
	uint64_t total; /* every key's, other's too */
	int64_t delta;
	const struct snap_brk_row *rows;
	size_t nrows;
};

/* The breakdowns of this refresh (--breakdown, the monitor's 'k'). */
struct snap_breakdown {
	unsigned kinds;	  /* 1 << kind, for each kind asked for */
	bool timed;	  /* rows have latency histograms */
	size_t top;	  /* rows per table at most, other aside */
	bool vcpu_series; /* the exporter writes vCPUs' too (--per-vcpu) */
	const struct snap_brk_table *tables; /* whole, then VMs, each then
					      * its vCPUs */
	size_t ntables;
	const char *error; /* why it is off though asked for, or NULL */
};

/* What front-ends render. Everything in it belongs to it. */
struct snapshot {
	const struct field_info *fields; /* by id; the snapshot's names */
	size_t nfields;
	const struct snap_row *rows; /* the view, sorted by name */
	size_t nrows;
	const struct snap_scope *whole; /* the tree; NULL in one made by
					 * hand */
	const struct snap_scope *view;	/* where the view's rows are from,
					 * or NULL when it has none */
	uint64_t interval_ns;		/* since the refresh before */
	struct timespec wall;		/* wall clock of the refresh */
	struct snap_store *store;	/* what snapshot_free frees */
	/* exit latency's header facts (--latency, the monitor's 'l'), or
	 * NULL when off; the loop's, not freed by snapshot_free */
	const struct snap_latency *latency;
	/* the breakdowns (--breakdown), or NULL when off; the loop's */
	const struct snap_breakdown *breakdown;
	/* the sources' notes, the loop's (not freed by snapshot_free);
	 * notes_gen changes whenever they do, so that a front-end can tell
	 * a set it dismissed from a new one */
	const struct snap_note *notes;
	size_t nnotes;
	unsigned notes_gen;
	/* the directory of VMs this refresh (names, vCPU threads, whether
	 * the VM watched runs, every running VM where listed), the loop's;
	 * NULL when the run looked none up */
	const struct vmdir *vms;
	/* where each vCPU's time goes (--vcpu-time, the monitor's 't'), the
	 * loop's; NULL when not asked for */
	const struct vcputime *vcputime;
	/* what the header shows; set by the loop (its strings are the
	 * loop's, as the notes) */
	struct snap_header header;
};

/* What to build. Zeroed, it is the whole selection, every field, no
 * guest names. */
struct snap_request {
	const struct field_filter *filter; /* the view's rows and the
						 * busiest events; NULL
						 * keeps every field */
	bool children; /* also NAME(...) of the rows filter keeps */
	pid_t pid;     /* the view: 0 the whole selection, else VM */
	int vcpu;      /* with pid: SAMPLE_ALL_VCPUS or one vCPU */
	bool per_vcpu; /* with pid: NAME/vcpuN rows for its vCPUs */
	/* the VMs' names and vCPU threads (idle vCPUs get a scope too), or
	 * NULL: none */
	const struct vmdir *vms;
	/* histograms read whole this refresh (exit latency), or NULL:
	 * copied into their scopes, which they add where new */
	const struct hist_set *hists;
};

/*
 * Builds the snapshot of s's last refresh into out (caller frees with
 * snapshot_free). A row is a field read in its scope; a parent field
 * without readings of its own there that has children with some gets a
 * row summing them.
 */
void snapshot_build(const struct stats *s, const struct snap_request *req,
		    struct snapshot *out);
/*
 * The same into a snapshot built before (or zeroed), reusing its arrays:
 * what it showed is gone, and once the VMs and fields stay the same a
 * refresh allocates nothing. For the loop, which keeps one snapshot per
 * front-end; snapshot_free frees it at the end.
 *
 * When nothing came or went since the build before (no field, no series
 * read for the first time: stats.gen and the field table's gen; the same
 * request, filter pattern, guest names and vCPU threads of its VMs, and
 * histograms read whole), the layout is kept: fields, names, scopes, rows
 * and their order, and only the numbers, summaries and busiest events
 * are made again. The result is the same as snapshot_build's.
 */
void snapshot_rebuild(const struct stats *s, const struct snap_request *req,
		      struct snapshot *snap);
/* Whether the last snapshot_rebuild of snap kept its layout (for tests
 * and benchmarks). */
bool snapshot_layout_kept(const struct snapshot *snap);
void snapshot_free(struct snapshot *snap);

/* The histogram of field in scope sc, or NULL when it has none. */
const struct snap_hist *snapshot_scope_hist(const struct snap_scope *sc,
					    int field);
/* The row of field in scope sc, or NULL when it has none. */
const struct snap_row *snapshot_scope_row(const struct snap_scope *sc,
					  int field);
/* The field called name, or NULL. */
const struct field_info *snapshot_field(const struct snapshot *snap,
					const char *name);
/* The field of a row, or NULL (in a snapshot made by hand). */
const struct field_info *snapshot_row_field(const struct snapshot *snap,
					    const struct snap_row *r);
/* Whether field id is a histogram's bucket: it has a bucket number, or a
 * histogram for its parent. */
bool snapshot_is_bucket(const struct snapshot *snap, int field);

#endif
