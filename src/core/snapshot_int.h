/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Inside the snapshot builder: what a snapshot owns (its store) and the
 * scratch of one build, shared by the store's buffers (snapshot.c), the
 * full build (snap_build.c, which calls snap_scopes.c, snap_rows.c and
 * snap_view.c in turn) and the refresh that keeps a layout and copies
 * numbers (snap_keep.c).
 */
#ifndef KVMSTAT_SNAPSHOT_INT_H
#define KVMSTAT_SNAPSHOT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hashtab.h"
#include "hist.h"
#include "snapshot.h"
#include "stats.h"

/* A scope while it is being found: its key and summary sums. */
struct sb_scope {
	pid_t pid;
	int vcpu;
	size_t slot;	   /* final index in store.scopes */
	pid_t tid;	   /* a vCPU's thread, found in /proc */
	bool exits_seen;   /* a FIELD_EXITS field was read */
	uint64_t ev_total; /* sum of the events */
	int64_t ev_delta;
};

/* What a layout was built from: while all of it stays (and the VMs and
 * histograms read whole, checked apart), the next build keeps the layout
 * and copies numbers. */
struct sb_basis {
	const struct stats *s;
	uint64_t stats_gen;  /* stats.gen: series first read */
	uint64_t fields_gen; /* field_table.gen */
	uint64_t filter;     /* filter_serial() */
	size_t nf, nsum, nkeys;
	bool children, per_vcpu, vms;
	pid_t pid;
	int vcpu;
};

/* A histogram read whole, as far as the layout goes. */
struct sb_hkey {
	int field;
	pid_t pid;
	int vcpu;
	pid_t tid;
	size_t nbuckets;
};

/* What the directory of VMs said of a VM scope's vCPUs at the build. */
struct sb_vmsaw {
	bool read;	 /* vcpus_read */
	size_t first, n; /* its vCPUs in snap_store.vmvcpus */
};

/* A row that sums a child's: rows[parent] += rows[child]. */
struct sb_pair {
	size_t child, parent;
};

/* A row's source (snap_store.row_src): >= 0 the stats' cell, SB_SYNTH a
 * parent summing its children, else SB_SUM(field) the field's total. */
#define SB_SYNTH (-1L)
#define SB_SUM(f) (-2L - (long)(f))

/* An array a build fills, kept for the next build of the same snapshot
 * (snapshot_rebuild): grown when too small, never shrunk. */
struct sb_buf {
	void *p;
	size_t cap; /* in elements */
};

/*
 * What a snapshot owns: what it shows, and the builder's scratch. Rebuilt
 * every refresh into the same arrays, a snapshot allocates nothing once
 * the host's VMs and fields stay as they are (fresh arrays each refresh
 * would be fresh pages each refresh: page faults, and a heap that grows
 * with the largest sample).
 */
struct snap_store {
	struct sb_buf fields;
	struct sb_buf names;   /* field and provider names */
	struct sb_buf scopes;  /* [0] whole, then VMs, then vCPUs */
	struct sb_buf rows;    /* every scope's rows */
	struct sb_buf hists;   /* every scope's histograms */
	struct sb_buf buckets; /* their buckets */
	struct sb_buf view;    /* the view's rows */
	char **owned;	       /* view row and guest names */
	size_t nowned, capowned;
	/* scratch: see struct snap_builder */
	struct sb_buf match, split, bucket_first, bucket_count, bucket_child;
	struct sb_buf sc, key_scope, row_of, hs_scope, hs_order, sorted;
	struct sb_buf start, fstart, byfield, byscope, by, at, perm, vtmp;
	struct hashtab index;
	/*
	 * The layout of the last build, kept by the next one while its basis
	 * stays: the snapshot's arrays (shape), and where each number comes
	 * from: a row's cell (row_src, pairs), a histogram's row or reading
	 * (hist_src: a row, or -1 - the reading's index) and a bucket's row
	 * (bucket_src, -1 none), a view row's row (view_src).
	 */
	bool kept;
	bool last_kept; /* the last build kept it */
	struct sb_basis basis;
	struct snapshot shape;
	size_t nsc, nrows, nhists, nview, npairs, nhkeys;
	struct sb_buf row_src, pairs, hist_src, bucket_src, view_src;
	struct sb_buf hkeys;	      /* struct sb_hkey, the request's */
	struct sb_buf vmsaw, vmvcpus; /* by VM scope, what the VMs said */
	/* by final scope: its index in sc, and its cells in the stats'
	 * order (those of scope i end at kend[i]) */
	struct sb_buf slot_sc, kend, skeys;
};

/* Scratch of one build. */
struct snap_builder {
	const struct stats *s;
	struct snapshot *out;
	struct snap_store *st; /* where the arrays below are kept */
	size_t nf;	       /* fields */
	double secs;	       /* the interval */
	/* what the snapshot shows, in st */
	struct field_info *fields;
	struct snap_scope *scopes;
	struct snap_row *rows;
	struct snap_hist *hists;
	struct snap_bucket *buckets;
	struct snap_row *view;
	bool *match; /* by field: the filter keeps it */
	bool *split; /* by field: a kept child stands for it */
	/* bucket fields by (parent, bucket): first[parent], count[parent] */
	int *bucket_first, *bucket_count, *bucket_child;
	/* scopes found in the cells, in order of appearance */
	struct sb_scope *sc;
	size_t nsc;
	struct hashtab *index; /* (pid, vcpu) -> index in sc */
	int *key_scope;	       /* by cell: index in sc, or -1 */
	int *row_of;	       /* by field: row in the scope built */
	/* histograms read whole: the request's, each one's scope (index in
	 * sc, -1 the whole selection, -2 left out), and their indices by
	 * (final scope, field) */
	const struct hist_set *hs;
	int *hs_scope;
	size_t *hs_order;
	size_t nrows;	  /* rows of every scope */
	long *hist_src;	  /* by histogram: see snap_store */
	long *bucket_src; /* by bucket */
	size_t *view_src; /* by view row */
};

/* At least n elements (one when n is 0) of size bytes in buf, reused
 * when they fit; their contents are stale. */
void *sb_reserve(struct sb_buf *buf, size_t n, size_t size);
/* The same, zeroed. */
void *sb_reserve_zero(struct sb_buf *buf, size_t n, size_t size);
/* Keeps s (allocated) for snapshot_free; returns it. */
char *sb_own(struct snap_store *st, char *s);
/* Frees what a store owns that is the snapshot's own (names): the next
 * build makes them again. */
void sb_disown(struct snap_store *st);

/* The scopes (snap_scopes.c): those of the cells, of the histograms read
 * whole and the directory's idle vCPUs found, then laid out as a tree
 * with their summaries. */
void sb_find_scopes(struct snap_builder *b);
void sb_find_hist_scopes(struct snap_builder *b);
void sb_find_vcpus(struct snap_builder *b, const struct vmdir *d);
void sb_layout(struct snap_builder *b);
void sb_summaries(struct snap_builder *b);
/* Folds one cell of field into the summary of its scope g (sums in x). */
void sb_summary_add(struct snap_builder *b, struct snap_scope *g,
		    struct sb_scope *x, int field, const struct stat_cell *c);
/* The whole selection's summary, from the fields' totals. */
void sb_summary_whole(struct snap_builder *b);
/* Ends the summary of scope x, its cells added. */
void sb_summary_scope_end(struct snap_builder *b, struct sb_scope *x);
/* The histogram of a reading: its buckets in the model's ranges; k:
 * buckets used so far. */
void sb_hist_of_reading(struct snap_builder *b, const struct hist_reading *r,
			struct snap_hist *hist, size_t *k);

/* The rows of every scope, in field order (snap_rows.c). */
void sb_rows(struct snap_builder *b);
/* Every scope's histograms: its histogram rows' and those read whole. */
void sb_hists(struct snap_builder *b);
/* The view a front-end lists: req's scope, and its vCPUs' rows with
 * per_vcpu (snap_view.c). */
void sb_view(struct snap_builder *b, const struct snap_request *req);

/* Keeps what the layout of a full build for req was made from, and where
 * each number comes from, for the next build (snap_keep.c). */
void sb_remember(struct snap_builder *b, const struct snap_request *req);
/* Whether the layout kept in st is the one a full build of s for req
 * would make: nothing came or went since. */
bool sb_same_layout(const struct snap_store *st, const struct stats *s,
		    const struct snap_request *req);
/* A refresh in the layout kept in b->st: the numbers, summaries and
 * busiest events made again. */
void sb_refill(struct snap_builder *b);

#endif
