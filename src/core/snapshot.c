// SPDX-License-Identifier: GPL-2.0-only
/*
 * The snapshot, the self-contained value front-ends render: the growable
 * buffers of its store (the builder, snap_build.c, fills them; a refresh
 * in the same layout reuses them), its freeing, and the lookups
 * front-ends read it with: a scope's row or histogram of a field, a
 * field's description.
 */
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "snapshot.h"
#include "snapshot_int.h"
#include "util.h"

/* At least n elements (one when n is 0) of size bytes in buf, reused
 * when they fit; their contents are stale. */
void *sb_reserve(struct sb_buf *buf, size_t n, size_t size)
{
	if (!n)
		n = 1;
	if (n > buf->cap) {
		free(buf->p);
		buf->cap = n + n / 4;
		buf->p = xmalloc(buf->cap * size);
	}
	return buf->p;
}

/* The same, zeroed. */
void *sb_reserve_zero(struct sb_buf *buf, size_t n, size_t size)
{
	void *p = sb_reserve(buf, n, size);

	memset(p, 0, (n ? n : 1) * size);
	return p;
}

/* Keeps s (allocated) for snapshot_free; returns it. */
char *sb_own(struct snap_store *st, char *s)
{
	if (st->nowned == st->capowned) {
		st->capowned = st->capowned ? st->capowned * 2 : 16;
		st->owned = xrealloc(st->owned,
				     st->capowned * sizeof(*st->owned));
	}
	st->owned[st->nowned++] = s;
	return s;
}

/* Frees what a store owns that is the snapshot's own (names): the next
 * build makes them again. */
void sb_disown(struct snap_store *st)
{
	for (size_t i = 0; i < st->nowned; i++)
		free(st->owned[i]);
	st->nowned = 0;
}

void snapshot_free(struct snapshot *snap)
{
	struct snap_store *st = snap->store;

	if (st) {
		struct sb_buf *bufs[] = {
			&st->fields,	   &st->names,	      &st->scopes,
			&st->rows,	   &st->hists,	      &st->buckets,
			&st->view,	   &st->match,	      &st->split,
			&st->bucket_first, &st->bucket_count, &st->bucket_child,
			&st->sc,	   &st->key_scope,    &st->row_of,
			&st->hs_scope,	   &st->hs_order,     &st->sorted,
			&st->start,	   &st->fstart,	      &st->byfield,
			&st->byscope,	   &st->by,	      &st->at,
			&st->perm,	   &st->vtmp,	      &st->row_src,
			&st->pairs,	   &st->hist_src,     &st->bucket_src,
			&st->view_src,	   &st->hkeys,	      &st->vmsaw,
			&st->vmvcpus,	   &st->slot_sc,      &st->kend,
			&st->skeys,
		};

		sb_disown(st);
		free(st->owned);
		for (size_t i = 0; i < ARRAY_SIZE(bufs); i++)
			free(bufs[i]->p);
		hashtab_free(&st->index);
		free(st);
	}
	memset(snap, 0, sizeof(*snap));
}

const struct snap_row *snapshot_scope_row(const struct snap_scope *sc, int field)
{
	size_t lo = 0, hi = sc ? sc->nrows : 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (sc->rows[mid].field < field)
			lo = mid + 1;
		else
			hi = mid;
	}
	return sc && lo < sc->nrows && sc->rows[lo].field == field ?
		       &sc->rows[lo] :
		       NULL;
}

const struct snap_hist *snapshot_scope_hist(const struct snap_scope *sc,
					    int field)
{
	size_t lo = 0, hi = sc ? sc->nhists : 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (sc->hists[mid].field < field)
			lo = mid + 1;
		else
			hi = mid;
	}
	return sc && lo < sc->nhists && sc->hists[lo].field == field ?
		       &sc->hists[lo] :
		       NULL;
}

const struct field_info *snapshot_field(const struct snapshot *snap,
					const char *name)
{
	for (size_t i = 0; name && i < snap->nfields; i++)
		if (!strcmp(snap->fields[i].name, name))
			return &snap->fields[i];
	return NULL;
}

const struct field_info *snapshot_row_field(const struct snapshot *snap,
					    const struct snap_row *r)
{
	return r->field >= 0 && (size_t)r->field < snap->nfields ?
		       &snap->fields[r->field] :
		       NULL;
}

bool snapshot_is_bucket(const struct snapshot *snap, int field)
{
	const struct field_info *f;

	if (field < 0 || (size_t)field >= snap->nfields)
		return false;
	f = &snap->fields[field];
	return f->bucket >= 0 ||
	       (f->parent >= 0 && (size_t)f->parent < snap->nfields &&
		snap->fields[f->parent].hist != HIST_NONE);
}
