// SPDX-License-Identifier: GPL-2.0-only
/*
 * The snapshot builder's view: one scope's rows (and with per_vcpu
 * its vCPUs', named with a /vcpuN suffix) in the order a front-end
 * lists them: by name, or in the field order of one scope.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"
#include "snapshot_int.h"
#include "util.h"

/* The scope (pid, vcpu), or NULL. */
static const struct snap_scope *sb_find(const struct snap_scope *whole,
					pid_t pid, int vcpu)
{
	const struct snap_scope *v = whole->children, *c;
	size_t lo = 0, hi = whole->nchildren;

	if (!pid)
		return whole;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == whole->nchildren || v[lo].pid != pid)
		return NULL;
	if (vcpu == SAMPLE_ALL_VCPUS)
		return &v[lo];
	c = v[lo].children;
	for (size_t i = 0; i < v[lo].nchildren; i++)
		if (c[i].vcpu == vcpu)
			return &c[i];
	return NULL;
}

/* View rows by name, their places (the index into arg's rows) kept. */
static int sb_view_cmp(const void *a, const void *c, void *arg)
{
	const struct snap_row *rows = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)c;
	int d = util_name_cmp(rows[i].name, rows[j].name);

	if (d)
		return d;
	return i < j ? -1 : i > j;
}

/* The same order for the rows of one scope (one per field at most): the
 * names' places in the field table, which keeps them as the fields come,
 * so a refresh sorts no names; placed by place, in linear time. False
 * when the rows are not one per field. */
static bool sb_view_by_order(struct snap_builder *b,
			     const struct snap_row *rows, size_t n,
			     size_t *perm)
{
	const struct field_info *v = b->fields;
	long *at = sb_reserve(&b->st->at, b->nf + 1, sizeof(*at));
	size_t k = 0;

	memset(at, 0xff, (b->nf + 1) * sizeof(*at));
	for (size_t i = 0; i < n; i++) {
		int o = v[rows[i].field].order;

		if (o < 0 || (size_t)o >= b->nf || at[o] >= 0)
			return false;
		at[o] = (long)i;
	}
	for (size_t o = 0; o < b->nf; o++)
		if (at[o] >= 0)
			perm[k++] = (size_t)at[o];
	return true;
}

/* Sorts the view's n rows by name, their sources along. */
static void sb_view_sort(struct snap_builder *b, bool by_order, size_t n)
{
	size_t *perm = sb_reserve(&b->st->perm, 2 * n, sizeof(*perm));
	size_t *src = perm + n;
	struct snap_row *was = sb_reserve(&b->st->vtmp, n, sizeof(*was));

	if (!by_order || !sb_view_by_order(b, b->view, n, perm)) {
		for (size_t i = 0; i < n; i++)
			perm[i] = i;
		qsort_r(perm, n, sizeof(*perm), sb_view_cmp, b->view);
	}
	memcpy(was, b->view, n * sizeof(*was));
	memcpy(src, b->view_src, n * sizeof(*src));
	for (size_t i = 0; i < n; i++) {
		b->view[i] = was[perm[i]];
		b->view_src[i] = src[perm[i]];
	}
}

/* Appends the rows of g the filter keeps to the view; suffix names them
 * NAME/vcpuN. */
static void sb_view_rows(struct snap_builder *b, const struct snap_scope *g,
			 const char *suffix, size_t *n)
{
	for (size_t i = 0; i < g->nrows; i++) {
		struct snap_row r = g->rows[i];

		if (!b->match[r.field])
			continue;
		if (suffix) {
			r.name = sb_own(b->st,
					xasprintf("%s%s", r.name, suffix));
			r.per_vcpu = true;
		}
		b->view_src[*n] = (size_t)(&g->rows[i] - b->rows);
		b->view[(*n)++] = r;
	}
}

/* The view: one scope's rows, and with per_vcpu its vCPUs' too. */
void sb_view(struct snap_builder *b, const struct snap_request *req)
{
	const struct snap_scope *g = sb_find(b->out->whole, req->pid,
					     req->pid ? req->vcpu :
							SAMPLE_ALL_VCPUS);
	const struct snap_scope *vm = req->per_vcpu && req->pid ?
					      sb_find(b->out->whole, req->pid,
						      SAMPLE_ALL_VCPUS) :
					      NULL;
	size_t cap = 1, n = 0;

	b->out->view = g;
	if (g)
		cap += g->nrows;
	for (size_t i = 0; vm && i < vm->nchildren; i++)
		cap += vm->children[i].nrows;
	b->view = sb_reserve(&b->st->view, cap, sizeof(*b->view));
	b->view_src = sb_reserve(&b->st->view_src, cap, sizeof(*b->view_src));
	if (g)
		sb_view_rows(b, g, NULL, &n);
	for (size_t i = 0; vm && i < vm->nchildren; i++) {
		char suffix[32];

		snprintf(suffix, sizeof(suffix), "/vcpu%d",
			 vm->children[i].vcpu);
		sb_view_rows(b, &vm->children[i], suffix, &n);
	}
	if (n > 1)
		sb_view_sort(b, !(vm && vm->nchildren), n);
	b->out->rows = b->view;
	b->out->nrows = n;
	b->st->nview = n;
}
