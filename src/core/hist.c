// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one histogram model: bucket ranges as the KVM binary stats define
 * them (log2 exit latency uses the same), nearest-rank percentiles in
 * integer arithmetic (so p99 of 100 samples is the 99th, never the 100th
 * by a rounding slip), and a snapshot histogram's buckets as counts.
 * hist.h states the percentile convention; hist_fmt.c writes them out.
 */
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "util.h"

void hist_bucket_range(enum field_hist shape, uint64_t bucket_size, size_t i,
		       size_t n, uint64_t *lo, uint64_t *hi)
{
	if (shape == HIST_LOG2) {
		*lo = !i ? 0 : i - 1 < 64 ? (uint64_t)1 << (i - 1) : UINT64_MAX;
		*hi = i < 64 ? (uint64_t)1 << i : UINT64_MAX;
	} else {
		*lo = bucket_size && i > UINT64_MAX / bucket_size ?
			      UINT64_MAX :
			      i * bucket_size;
		*hi = bucket_size && i + 1 > UINT64_MAX / bucket_size ?
			      UINT64_MAX :
			      (i + 1) * bucket_size;
	}
	if (i + 1 >= n)
		*hi = UINT64_MAX;
}

uint64_t hist_total(const struct hist_bucket *b, size_t n)
{
	uint64_t t = 0;

	for (size_t i = 0; i < n; i++)
		t += b[i].count;
	return t;
}

long hist_quantile(const struct hist_bucket *b, size_t n, unsigned int permille)
{
	uint64_t total = hist_total(b, n), rank, run = 0;

	if (!total)
		return -1;
	if (permille > 1000)
		permille = 1000;
	/* ceil(total * permille / 1000) without overflow */
	rank = total / 1000 * permille +
	       ((total % 1000) * permille + 999) / 1000;
	if (!rank)
		rank = 1;
	for (size_t i = 0; i < n; i++) {
		run += b[i].count;
		if (run >= rank)
			return (long)i;
	}
	return (long)n - 1;
}

size_t hist_gather(const struct snap_hist *h, bool deltas,
		   struct hist_bucket *out, size_t max)
{
	size_t n = 0;

	if (max)
		memset(out, 0, max * sizeof(*out));
	for (size_t i = 0; h && i < h->nbuckets; i++) {
		const struct snap_bucket *b = &h->buckets[i];
		size_t k;

		if (!b->seen || b->index < 0)
			continue;
		k = (size_t)b->index;
		if (k + 1 > n)
			n = k + 1;
		if (k >= max)
			continue;
		out[k].lo = b->lo;
		out[k].hi = b->hi;
		out[k].count = deltas ?
				       (b->delta > 0 ? (uint64_t)b->delta : 0) :
				       b->total;
	}
	return n;
}

bool hist_snap_quantile(const struct snap_hist *h, bool deltas,
			unsigned int permille, struct hist_bucket *out)
{
	size_t max = h ? h->nbuckets : 0;
	struct hist_bucket *hb = xmalloc((max + 1) * sizeof(*hb));
	size_t n = hist_gather(h, deltas, hb, max);
	long i = hist_quantile(hb, n < max ? n : max, permille);

	if (i >= 0)
		*out = hb[i];
	free(hb);
	return i >= 0;
}

void hist_set_init(struct hist_set *s)
{
	memset(s, 0, sizeof(*s));
}

void hist_set_clear(struct hist_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].b);
	s->n = 0;
}

void hist_set_free(struct hist_set *s)
{
	hist_set_clear(s);
	free(s->v);
	hist_set_init(s);
}

struct hist_reading *hist_set_add(struct hist_set *s, int field, pid_t pid,
				  int vcpu, pid_t tid, size_t nbuckets)
{
	struct hist_reading *r;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 32;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	r = &s->v[s->n++];
	*r = (struct hist_reading){ .field = field,
				    .pid = pid,
				    .vcpu = vcpu,
				    .tid = tid,
				    .nbuckets = nbuckets,
				    .b = xcalloc(nbuckets ? nbuckets : 1,
						 sizeof(*r->b)) };
	return r;
}

/* Adds bucket b into the buckets out[0, *n) by index, appending it where
 * it is new and there is room. */
static void hist_sum_bucket(struct snap_bucket *out, size_t *n, size_t max,
			    const struct snap_bucket *b, size_t hint)
{
	size_t k = hint;

	if (k >= *n || out[k].index != b->index)
		for (k = 0; k < *n && out[k].index != b->index; k++)
			;
	if (k == *n) {
		if (*n == max)
			return;
		out[(*n)++] = (struct snap_bucket){ .index = b->index,
						    .lo = b->lo,
						    .hi = b->hi };
	}
	out[k].total += b->total;
	out[k].delta += b->delta;
	out[k].seen |= b->seen;
	out[k].fresh |= b->fresh;
}

bool hist_sum_scopes(const struct snap_scope *sc, size_t n, int field,
		     struct snap_hist *h, struct snap_bucket *out, size_t max)
{
	size_t nb = 0, found = 0;

	*h = (struct snap_hist){ .field = field,
				 .buckets = out,
				 .measured = true,
				 .min = UINT64_MAX };
	for (size_t i = 0; i < n; i++) {
		const struct snap_hist *x = snapshot_scope_hist(&sc[i], field);

		if (!x)
			continue;
		found++;
		for (size_t j = 0; j < x->nbuckets; j++)
			hist_sum_bucket(out, &nb, max, &x->buckets[j], j);
		h->fresh |= x->fresh;
		h->measured &= x->measured;
		h->count += x->count;
		h->sum += x->sum;
		if (x->count && x->min < h->min)
			h->min = x->min;
		if (x->max > h->max)
			h->max = x->max;
	}
	h->nbuckets = nb;
	if (!found || !h->measured) {
		h->measured = false;
		h->count = h->sum = h->max = 0;
		h->min = 0;
	} else if (!h->count) {
		h->min = 0;
	}
	return found > 0;
}
