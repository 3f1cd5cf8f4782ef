/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one histogram model, for every histogram a snapshot holds (the
 * binary stats' halt_wait_hist and friends, exit latency): the ranges of
 * their buckets and percentiles over bucket counts (totals or one
 * interval's deltas). hist_fmt.h writes them in the histogram's unit.
 *
 * Percentile convention: nearest rank over the samples, reported as the
 * bucket that holds it, and written as that bucket's upper bound ("p99 <
 * 8.19 µs": 99% of the samples were below 8.19 µs). No interpolation
 * within a bucket: a log2 bucket spans a factor of two, and a value
 * interpolated inside it would claim a precision the kernel never
 * measured. The open last bucket has no upper bound and is written as its
 * lower one ("p99 >= 2.15 s").
 */
#ifndef KVMSTAT_HIST_H
#define KVMSTAT_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sample.h"
#include "snapshot.h"

/* One bucket: its raw range and how many samples fell in it. */
struct hist_bucket {
	uint64_t lo, hi; /* [lo, hi) in raw units; hi UINT64_MAX: open */
	uint64_t count;
};

/* Percentiles that kvmstat shows, in per mille. */
#define HIST_P50 500u
#define HIST_P90 900u
#define HIST_P99 990u

/*
 * Raw range of bucket i of an n-bucket histogram: log2, bucket 0 is [0, 1)
 * and bucket i [2^(i-1), 2^i); linear, bucket i is [i*size, (i+1)*size).
 * The last bucket is open (hi = UINT64_MAX), as are ranges past 2^64.
 */
void hist_bucket_range(enum field_hist shape, uint64_t bucket_size, size_t i,
		       size_t n, uint64_t *lo, uint64_t *hi);

/*
 * A histogram its source reads whole, each refresh, with what it measures
 * beside the buckets (exit latency): one scope's histogram of one field
 * (a histogram field, or a keyed child of one: "kvm_exit_latency(HLT)").
 * The buckets are the model's ranges for the field's shape; the snapshot
 * builder makes them a histogram of the scope's, as any other.
 */
struct hist_reading {
	int field;		/* a field with hist != HIST_NONE */
	pid_t pid;		/* 0: the whole selection, else a VM */
	int vcpu;		/* SAMPLE_ALL_VCPUS or a vCPU of pid */
	pid_t tid;		/* a vCPU's thread, or 0 */
	uint64_t count;		/* samples */
	uint64_t sum, min, max; /* raw units; min and max with count */
	uint64_t bucket_size;	/* a linear histogram's */
	size_t nbuckets;
	uint64_t *b; /* counts by bucket index; the set owns them */
};

/* The histograms of one read. */
struct hist_set {
	struct hist_reading *v;
	size_t n, cap;
};

void hist_set_init(struct hist_set *s);
/* Empties s, keeping its memory. */
void hist_set_clear(struct hist_set *s);
void hist_set_free(struct hist_set *s);
/* Appends a reading with nbuckets zeroed buckets; the set owns them. */
struct hist_reading *hist_set_add(struct hist_set *s, int field, pid_t pid,
				  int vcpu, pid_t tid, size_t nbuckets);

/* Sum of the counts. */
uint64_t hist_total(const struct hist_bucket *b, size_t n);

/*
 * Index of the bucket holding the given per-mille quantile (1..1000): the
 * first bucket where the running count reaches ceil(total * permille /
 * 1000) (at least 1). -1 when the histogram is empty.
 */
long hist_quantile(const struct hist_bucket *b, size_t n, unsigned int permille);

/*
 * The buckets of a snapshot's histogram as counts: the deltas of the last
 * interval (negative ones count 0) or the totals. Writes up to max
 * buckets, each at its index (buckets not read are empty), and returns
 * how many the histogram has up to the last one read (0: none read yet).
 */
size_t hist_gather(const struct snap_hist *h, bool deltas,
		   struct hist_bucket *out, size_t max);

/* The bucket of a snapshot's histogram holding the per-mille quantile of
 * its totals (or deltas), as hist_quantile, into *out; false when it has
 * no samples. */
bool hist_snap_quantile(const struct snap_hist *h, bool deltas,
			unsigned int permille, struct hist_bucket *out);

/*
 * The histogram of field summed bucket-wise over the scopes sc[0, n) (a
 * VM's vCPUs), for a VM whose source gave it none of its own: buckets
 * matched by index into out (room for max), in the order the first
 * histogram lists them; totals and deltas added, seen and fresh where any
 * is; measured, with count, sum, min and max, when every one is. *h
 * points at out. False, *h empty, when none of the scopes has it.
 */
bool hist_sum_scopes(const struct snap_scope *sc, size_t n, int field,
		     struct snap_hist *h, struct snap_bucket *out, size_t max);

#endif
