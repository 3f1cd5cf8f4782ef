/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one way the BPF programs add a time to a log2 histogram of
 * nanoseconds (struct lat_val of lat_shared.h): the exit-latency programs
 * and the breakdown's. For clang -target bpf only.
 */
#ifndef KVMSTAT_LAT_HIST_H
#define KVMSTAT_LAT_HIST_H

#include "lat_shared.h"

/* The bucket of d ns: its bit length (0 for 0, i for [2^(i-1), 2^i)),
 * the last bucket open. */
static __always_inline __u32 lat_hist_bucket(__u64 d)
{
	__u32 i = 0;

#pragma unroll
	for (int s = 32; s; s >>= 1)
		if (d >> s) {
			d >>= s;
			i += s;
		}
	i += (__u32)d;
	return i < LAT_NBUCKETS ? i : LAT_NBUCKETS - 1;
}

/* Adds d ns to v, which only the calling thread writes. */
static __always_inline void lat_hist_add(struct lat_val *v, __u64 d)
{
	__u32 b;

	if (!v->count || d < v->min)
		v->min = d;
	if (d > v->max)
		v->max = d;
	v->total += d;
	b = lat_hist_bucket(d);
	if (b < LAT_NBUCKETS)
		v->b[b] += 1;
	/* last: a reader that sees the count sees the rest */
	__sync_fetch_and_add(&v->count, 1);
}

#endif
