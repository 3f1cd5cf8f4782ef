// SPDX-License-Identifier: GPL-2.0-only
/*
 * The snapshot builder's rows and histograms: each scope's cells put in
 * field order by counting sorts, parents summed from their children,
 * rates; then each histogram row's buckets found in its scope's rows
 * through the bucket index, and the histograms read whole joined to
 * their scopes.
 */

#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "snapshot.h"
#include "snapshot_int.h"
#include "stats.h"
#include "util.h"

/* Appends the row of one cell of field to the scope being built. */
static void sb_row(struct snap_builder *b, struct snap_row *r, int field,
		   const struct stat_cell *c)
{
	const struct field_info *f = &b->fields[field];

	*r = (struct snap_row){ .field = field,
				.name = f->name,
				.parent = f->parent,
				.type = f->type,
				.total = c->total,
				.delta = c->delta,
				.valid = c->fresh };
}

static int sb_row_cmp(const void *a, const void *c)
{
	return ((const struct snap_row *)a)->field -
	       ((const struct snap_row *)c)->field;
}

/*
 * Ends the rows [first, *n) of one scope, its own cells in field order:
 * parents without readings of their own sum their children; rates.
 */
static void sb_rows_end(struct snap_builder *b, struct snap_scope *g,
			size_t first, size_t *n)
{
	struct snap_row *rows = b->rows;
	size_t own = *n;

	for (size_t i = first; i < own; i++)
		b->row_of[rows[i].field] = (int)i;
	for (size_t i = first; i < own; i++) {
		int p = rows[i].parent, at;

		if (p < 0 || (size_t)p >= b->nf)
			continue;
		at = b->row_of[p];
		if (at >= 0 && (size_t)at < own)
			continue; /* read itself */
		if (at < 0) {
			const struct field_info *f = &b->fields[p];

			at = (int)(*n)++;
			rows[at] = (struct snap_row){ .field = p,
						      .name = f->name,
						      .parent = -1,
						      .type = f->type,
						      .valid = true };
			b->row_of[p] = at;
		}
		rows[at].total += rows[i].total;
		rows[at].delta += rows[i].delta;
		rows[at].valid &= rows[i].valid;
	}
	for (size_t i = first; i < *n; i++) {
		b->row_of[rows[i].field] = -1;
		rows[i].rate = b->secs > 0 ? rows[i].delta / b->secs : 0;
	}
	if (*n > own)
		qsort(rows + first, *n - first, sizeof(*rows), sb_row_cmp);
	g->rows = rows + first;
	g->nrows = *n - first;
}

/*
 * Where each row's numbers come from, for the builds that keep the layout:
 * the whole selection's from the fields' totals, a scope's from its cells
 * (byscope, each scope's ending at end[slot]), both in field order as the
 * rows are; the others are parents summing the children that pairs list.
 */
static void sb_row_sources(struct snap_builder *b, const size_t *end,
			   const int *byscope)
{
	const struct stats *s = b->s;
	const struct snap_scope *all = b->scopes;
	long *src = sb_reserve(&b->st->row_src, b->nrows, sizeof(*src));
	struct sb_pair *pairs = sb_reserve(&b->st->pairs, b->nrows,
					   sizeof(*pairs));
	size_t np = 0, j = 0;

	for (size_t i = 0; i <= b->nsc; i++) {
		size_t base = (size_t)(all[i].rows - b->rows);

		for (size_t x = 0; x < all[i].nrows; x++) {
			int f = all[i].rows[x].field;

			if (!i)
				src[base + x] = (size_t)f < s->nsum &&
								s->sum[f].seen ?
							SB_SUM(f) :
							SB_SYNTH;
			else if (j < end[i] && s->keys[byscope[j]].field == f)
				src[base + x] = byscope[j++];
			else
				src[base + x] = SB_SYNTH;
		}
	}
	for (size_t i = 0; i <= b->nsc; i++) {
		size_t base = (size_t)(all[i].rows - b->rows);

		for (size_t x = 0; x < all[i].nrows; x++) {
			int p = all[i].rows[x].parent;
			const struct snap_row *pr;

			if (src[base + x] == SB_SYNTH || p < 0 ||
			    (size_t)p >= b->nf)
				continue;
			pr = snapshot_scope_row(&all[i], p);
			if (pr && src[pr - b->rows] == SB_SYNTH)
				pairs[np++] = (struct sb_pair){
					base + x, (size_t)(pr - b->rows)
				};
		}
	}
	b->st->nrows = b->nrows;
	b->st->npairs = np;
}

/* The rows of every scope: the cells of each in field order, by two
 * stable counting sorts (by field, then by scope). */
void sb_rows(struct snap_builder *b)
{
	const struct stats *s = b->s;
	size_t nscopes = b->nsc + 1, ncells = 0, n = 0;
	struct snap_scope *all = b->scopes;
	size_t *start = sb_reserve_zero(&b->st->start, nscopes + 1,
					sizeof(*start));
	size_t *fstart = sb_reserve_zero(&b->st->fstart, b->nf + 1,
					 sizeof(*fstart));
	int *byfield, *byscope;

	for (size_t f = 0; f < s->nsum && f < b->nf; f++)
		ncells += s->sum[f].seen;
	for (size_t i = 0; i < s->nkeys; i++) {
		if (b->key_scope[i] < 0)
			continue;
		fstart[s->keys[i].field + 1]++;
		start[b->sc[b->key_scope[i]].slot + 1]++;
	}
	for (size_t f = 0; f < b->nf; f++)
		fstart[f + 1] += fstart[f];
	for (size_t i = 0; i < nscopes; i++)
		start[i + 1] += start[i];
	ncells += start[nscopes];
	byfield = sb_reserve(&b->st->byfield, start[nscopes] + 1,
			     sizeof(*byfield));
	byscope = sb_reserve(&b->st->byscope, start[nscopes] + 1,
			     sizeof(*byscope));
	for (size_t i = 0; i < s->nkeys; i++)
		if (b->key_scope[i] >= 0)
			byfield[fstart[s->keys[i].field]++] = (int)i;
	for (size_t j = 0; j < start[nscopes]; j++) {
		int k = byfield[j];

		byscope[start[b->sc[b->key_scope[k]].slot]++] = k;
	}
	/* start[i] is now the end of scope i's cells */

	/* at most one parent row per child row */
	b->rows = sb_reserve(&b->st->rows, 2 * ncells + 1, sizeof(*b->rows));
	b->row_of = sb_reserve(&b->st->row_of, b->nf + 1, sizeof(*b->row_of));
	memset(b->row_of, 0xff, (b->nf + 1) * sizeof(*b->row_of));
	for (size_t f = 0; f < s->nsum && f < b->nf; f++)
		if (s->sum[f].seen)
			sb_row(b, &b->rows[n++], (int)f, &s->sum[f]);
	sb_rows_end(b, &all[0], 0, &n);
	for (size_t i = 1, j = 0; i < nscopes; i++) {
		size_t first = n;

		for (; j < start[i]; j++)
			sb_row(b, &b->rows[n++], s->keys[byscope[j]].field,
			       &s->cells[byscope[j]]);
		sb_rows_end(b, &all[i], first, &n);
	}
	b->nrows = n;
	sb_row_sources(b, start, byscope);
}

/* The final scope of histogram reading i, or SIZE_MAX when left out. */
static size_t sb_hs_slot(const struct snap_builder *b, size_t i)
{
	int k = b->hs_scope[i];

	return k == -1 ? 0 : k < 0 ? SIZE_MAX : b->sc[k].slot;
}

static int sb_hs_cmp(const void *x, const void *y, void *arg)
{
	const struct snap_builder *b = arg;
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	size_t si = sb_hs_slot(b, i), sj = sb_hs_slot(b, j);
	int fi = b->hs->v[i].field, fj = b->hs->v[j].field;

	if (si != sj)
		return si < sj ? -1 : 1;
	if (fi != fj)
		return fi < fj ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* The histogram of a histogram row of scope g, its buckets from the
 * scope's rows (the bucket fields); k: buckets used so far. */
static void sb_hist_of_row(struct snap_builder *b, const struct snap_scope *g,
			   struct snap_row *row, struct snap_hist *hist,
			   size_t *k)
{
	const struct field_info *v = b->fields;
	int p = row->field;

	*hist = (struct snap_hist){ .field = p,
				    .buckets = &b->buckets[*k],
				    .nbuckets = (size_t)b->bucket_count[p],
				    .fresh = row->valid };
	b->hist_src[hist - b->hists] = row - b->rows;
	for (int c = 0; c < b->bucket_count[p]; c++) {
		int id = b->bucket_child[b->bucket_first[p] + c];
		const struct snap_row *br = snapshot_scope_row(g, id);

		b->bucket_src[*k] = br ? br - b->rows : -1;
		b->buckets[(*k)++] = (struct snap_bucket){
			.index = v[id].bucket,
			.lo = v[id].bucket_lo,
			.hi = v[id].bucket_hi,
			.total = br ? br->total : 0,
			.delta = br ? br->delta : 0,
			.seen = br != NULL,
			.fresh = br && br->valid
		};
	}
	row->hist = hist;
}

/* The histogram of a reading: its buckets in the model's ranges. */
void sb_hist_of_reading(struct snap_builder *b, const struct hist_reading *r,
			struct snap_hist *hist, size_t *k)
{
	const struct field_info *f = &b->fields[r->field];

	*hist = (struct snap_hist){ .field = r->field,
				    .buckets = &b->buckets[*k],
				    .nbuckets = r->nbuckets,
				    .fresh = true,
				    .measured = true,
				    .count = r->count,
				    .sum = r->sum,
				    .min = r->min,
				    .max = r->max };
	for (size_t i = 0; i < r->nbuckets; i++) {
		struct snap_bucket *bk = &b->buckets[(*k)++];

		*bk = (struct snap_bucket){ .index = (int)i,
					    .total = r->b[i],
					    .seen = true,
					    .fresh = true };
		hist_bucket_range(f->hist, r->bucket_size, i, r->nbuckets,
				  &bk->lo, &bk->hi);
	}
}

/*
 * Every scope's histograms, by field: each histogram row's, its buckets
 * from the rows of its scope, and the readings of histograms read whole.
 */
void sb_hists(struct snap_builder *b)
{
	const struct field_info *v = b->fields;
	struct snap_scope *all = b->scopes;
	size_t nh = 0, nb = 0, h = 0, k = 0, nr = 0, j = 0;

	for (size_t i = 0; i <= b->nsc; i++)
		for (size_t r = 0; r < all[i].nrows; r++)
			if (v[all[i].rows[r].field].hist != HIST_NONE) {
				nh++;
				nb += b->bucket_count[all[i].rows[r].field];
			}
	b->hs_order = sb_reserve(&b->st->hs_order, (b->hs ? b->hs->n : 0) + 1,
				 sizeof(*b->hs_order));
	for (size_t i = 0; b->hs && i < b->hs->n; i++) {
		if (b->hs_scope[i] == -2)
			continue;
		b->hs_order[nr++] = i;
		nh++;
		nb += b->hs->v[i].nbuckets;
	}
	b->st->nhists = nh;
	if (!nh)
		return;
	if (nr > 1)
		qsort_r(b->hs_order, nr, sizeof(*b->hs_order), sb_hs_cmp, b);
	b->hists = sb_reserve(&b->st->hists, nh, sizeof(*b->hists));
	b->buckets = sb_reserve(&b->st->buckets, nb + 1, sizeof(*b->buckets));
	b->hist_src = sb_reserve(&b->st->hist_src, nh, sizeof(*b->hist_src));
	b->bucket_src = sb_reserve(&b->st->bucket_src, nb + 1,
				   sizeof(*b->bucket_src));
	for (size_t i = 0; i <= b->nsc; i++) {
		size_t first = h, r = 0;

		/* rows and readings, both in field order, merged */
		for (;;) {
			const struct hist_reading *x =
				j < nr && sb_hs_slot(b, b->hs_order[j]) == i ?
					&b->hs->v[b->hs_order[j]] :
					NULL;
			struct snap_row *row = NULL;

			while (r < all[i].nrows &&
			       v[all[i].rows[r].field].hist == HIST_NONE)
				r++;
			if (r < all[i].nrows)
				row = (struct snap_row *)&all[i].rows[r];
			if (!row && !x)
				break;
			if (row && (!x || row->field <= x->field)) {
				sb_hist_of_row(b, &all[i], row, &b->hists[h++],
					       &k);
				r++;
			} else {
				b->hist_src[h] = -1 - (long)b->hs_order[j];
				sb_hist_of_reading(b, x, &b->hists[h++], &k);
				j++;
			}
		}
		all[i].hists = h > first ? &b->hists[first] : NULL;
		all[i].nhists = h - first;
	}
}
