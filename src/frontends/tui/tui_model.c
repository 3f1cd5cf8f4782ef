// SPDX-License-Identifier: GPL-2.0-only
/*
 * The monitor's display model: at each render the const snapshot becomes
 * rows of text and numbers the monitor owns (the events view as kvm_stat
 * shows it, a histogram's buckets, the per-VM and per-vCPU views), sorted,
 * with the header's facts and the sources' notes, so that a key or a
 * resize redraws without the snapshot.
 */
#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "hist_fmt.h"
#include "tui_int.h"
#include "ui_text.h"
#include "units.h"
#include "util.h"
#include "vmdir.h"

void tui_free_rows(struct tui_priv *tp)
{
	for (size_t i = 0; i < tp->nrows; i++) {
		for (int c = 0; c < TUI_COLS_MAX; c++)
			free(tp->rows[i].text[c]);
		free(tp->rows[i].field);
	}
	free(tp->rows);
	tp->rows = NULL;
	tp->nrows = 0;
	free(tp->sum);
	free(tp->sum_rate);
	tp->sum = tp->sum_rate = NULL;
	tp->total_text = false;
}

void tui_free_notes(struct tui_priv *tp)
{
	for (size_t i = 0; i < tp->nnotes; i++)
		free(tp->notes[i]);
	free(tp->notes);
	tp->notes = NULL;
	tp->nnotes = 0;
}

void tui_free_picks(struct tui_priv *tp)
{
	for (size_t i = 0; i < tp->npicks; i++) {
		free(tp->picks[i].name);
		free(tp->picks[i].vmm);
		free(tp->picks[i].uuid);
		free(tp->picks[i].unit);
	}
	free(tp->picks);
	tp->picks = NULL;
	tp->npicks = 0;
}

/* The running guests, pid and name (as kvm_stat lists), with who each
 * is (VMM, unit, UUID), to pick from: from the snapshot's directory once
 * the loop has listed them all. */
void tui_load_picks(struct tui_priv *tp, const struct snapshot *snap)
{
	const struct vmdir *d = snap->vms;

	if ((tp->prompt != PROMPT_PID && tp->prompt != PROMPT_GUEST) || !d ||
	    !d->listed)
		return;
	tui_free_picks(tp);
	tp->picks = xcalloc(d->n ? d->n : 1, sizeof(*tp->picks));
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].running)
			tp->picks[tp->npicks++] = (struct tui_pick){
				d->v[i].pid,
				d->v[i].name ? xstrdup(d->v[i].name) : NULL,
				d->v[i].vmm ? xstrdup(d->v[i].vmm) : NULL,
				d->v[i].uuid ? xstrdup(d->v[i].uuid) : NULL,
				d->v[i].unit ? xstrdup(d->v[i].unit) : NULL,
			};
}

static struct tui_row *tui_add_row(struct tui_priv *tp)
{
	tp->rows = xrealloc(tp->rows, (tp->nrows + 1) * sizeof(*tp->rows));
	memset(&tp->rows[tp->nrows], 0, sizeof(tp->rows[0]));
	return &tp->rows[tp->nrows++];
}

static void tui_set(struct tui_row *r, int col, double key, const char *fmt,
		    ...) __attribute__((format(printf, 4, 5)));
static void tui_set(struct tui_row *r, int col, double key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	r->text[col] = xvasprintf(fmt, ap);
	va_end(ap);
	r->key[col] = key;
}

/* A plain event count: what the %Total shares and the Total line sum. */
static bool tui_counts_events(const struct snap_row *x,
			      const struct field_info *f)
{
	return f && x->type == FIELD_CUMULATIVE && f->unit == UNIT_NONE &&
	       f->hist == HIST_NONE && f->bucket < 0;
}

/* The parent row of child row x in the view, or NULL. */
static const struct snap_row *tui_parent_row(const struct snapshot *snap,
					     const struct snap_row *x)
{
	for (size_t i = 0; i < snap->nrows; i++)
		if (snap->rows[i].field == x->parent && !snap->rows[i].per_vcpu)
			return &snap->rows[i];
	return NULL;
}

/* Whether a histogram's row holds no sample yet: no total, no bucket
 * that counted. */
static bool tui_hist_empty(const struct snap_row *x)
{
	if (x->total || x->delta || !x->valid)
		return false;
	for (size_t i = 0; x->hist && i < x->hist->nbuckets; i++)
		if (x->hist->buckets[i].total)
			return false;
	return true;
}

/* Whether row x of the view is left out as kvm_stat leaves out what never
 * counted: a counter at zero, a histogram without samples and its
 * buckets (a histogram with samples keeps every bucket: its shape). */
static bool tui_never_counted(const struct snapshot *snap,
			      const struct snap_row *x,
			      const struct field_info *f)
{
	const struct snap_row *par;

	if (f->hist != HIST_NONE)
		return tui_hist_empty(x);
	if (f->bucket >= 0) {
		par = x->parent >= 0 ? tui_parent_row(snap, x) : NULL;
		return par && tui_hist_empty(par);
	}
	return x->valid && !x->total && !x->delta;
}

/*
 * The summary as kvm_stat shows it: events that counted nothing are left
 * out, a parent's %Total is its share of every event, a child's its share
 * of its parent, and a Total line (added after sorting) sums the events.
 */
void tui_model_events(struct tui_priv *tp, const struct snapshot *snap)
{
	static const struct field_info plain = { .bucket = -1 };
	double sum = 0, sum_rate = 0;
	bool any = false;
	char t[32], r[32];

	for (size_t i = 0; i < snap->nrows; i++) {
		const struct snap_row *x = &snap->rows[i];

		if (x->parent < 0 &&
		    tui_counts_events(x, snapshot_row_field(snap, x))) {
			sum += (double)x->total;
			sum_rate += x->rate;
		}
	}
	for (size_t i = 0; i < snap->nrows; i++) {
		const struct snap_row *x = &snap->rows[i];
		const struct field_info *f = snapshot_row_field(snap, x);
		const struct snap_row *par;
		struct tui_row *row;

		if (!f)
			f = &plain;
		if (tui_never_counted(snap, x, f))
			continue;
		row = tui_add_row(tp);
		any |= x->parent < 0 && tui_counts_events(x, f);

		row->child = x->parent >= 0;
		row->field = xstrdup(x->name);
		row->hist = f->hist != HIST_NONE;
		row->bucket = f->bucket;
		tui_set(row, 0, 0, "%s", x->name);
		if (!x->valid) {
			tui_set(row, 1, -1, "-");
			tui_set(row, 2, -1, "-");
			tui_set(row, 3, -1, "-");
			continue;
		}
		if (f->unit != UNIT_NONE && f->hist == HIST_NONE &&
		    f->bucket < 0) {
			/* values in their unit; time counters as a share of
			 * wall time in the %Total column */
			units_format(f, (double)x->total,
				     UNITS_COUNT | tp->units, t, sizeof(t));
			units_format(f, x->rate, UNITS_COUNT | tp->units, r,
				     sizeof(r));
			tui_set(row, 1, (double)x->total, "%s", t);
			if (units_has_share(f) && snap->interval_ns)
				tui_set(row, 2, -1, "%.1f%%w",
					units_share_pct(f, x->delta,
							snap->interval_ns));
			else
				tui_set(row, 2, -1, " ");
			tui_set(row, 3, x->rate, "%s/s", r);
			continue;
		}
		ui_text_scaled(t, sizeof(t), (double)x->total, 10);
		ui_text_scaled(r, sizeof(r), x->rate, 9);
		tui_set(row, 1, (double)x->total, "%s", t);
		par = x->parent >= 0 ? tui_parent_row(snap, x) : NULL;
		if (x->parent < 0 && tui_counts_events(x, f) && sum > 0)
			tui_set(row, 2, 100.0 * x->total / sum, "%.1f",
				100.0 * x->total / sum);
		else if (par && par->total &&
			 tui_counts_events(par, snapshot_row_field(snap, par)))
			tui_set(row, 2, 100.0 * x->total / par->total, "%.1f",
				100.0 * x->total / par->total);
		else
			tui_set(row, 2, -1, " ");
		tui_set(row, 3, x->rate, "%s", r);
	}
	if (!any)
		return;
	tp->total_text = true;
	ui_text_scaled(t, sizeof(t), sum, 10);
	ui_text_scaled(r, sizeof(r), sum_rate, 9);
	tp->sum = xasprintf("%s", t);
	tp->sum_rate = xasprintf("%s", r);
}

/* The Total line, last whatever the order. */
void tui_add_total(struct tui_priv *tp)
{
	struct tui_row *row;

	if (!tp->total_text)
		return;
	row = tui_add_row(tp);
	row->total = true;
	tui_set(row, 0, 0, "Total");
	tui_set(row, 1, 0, "%s", tp->sum);
	tui_set(row, 2, -1, " ");
	tui_set(row, 3, 0, "%s", tp->sum_rate);
}

/* The buckets of one histogram: range, total, share, this interval. */
void tui_model_hist(struct tui_priv *tp, const struct snapshot *snap)
{
	const struct field_info *f = snapshot_field(snap, tp->hist);
	const struct snap_row *row =
		f ? snapshot_scope_row(snap->view, (int)(f - snap->fields)) :
		    NULL;
	struct hist_bucket tot[128], dlt[128];
	char range[128], sum[256];
	uint64_t all;
	size_t n;

	free(tp->hist_summary);
	tp->hist_summary = NULL;
	if (!f)
		return;
	n = hist_gather(row ? row->hist : NULL, false, tot, 128);
	hist_gather(row ? row->hist : NULL, true, dlt, 128);
	if (n > 128)
		n = 128;
	all = hist_total(tot, n);
	hist_format_percentiles(f, hist_total(dlt, n) ? dlt : tot, n, tp->units,
				sum, sizeof(sum));
	tp->hist_summary = xasprintf("%s %s: %s", tp->hist,
				     hist_total(dlt, n) ? "this interval" :
							  "since start",
				     sum);
	for (size_t i = 0; i < n; i++) {
		struct tui_row *r = tui_add_row(tp);

		hist_format_range(f, &tot[i], tp->units, range, sizeof(range));
		tui_set(r, 0, (double)i, "%s", range);
		tui_set(r, 1, (double)tot[i].count, "%llu",
			(unsigned long long)tot[i].count);
		tui_set(r, 2, all ? 100.0 * tot[i].count / all : 0, "%.1f",
			all ? 100.0 * tot[i].count / all : 0.0);
		tui_set(r, 3, (double)dlt[i].count, "%llu",
			(unsigned long long)dlt[i].count);
	}
}

/* The VMs, or the vCPUs of VM pid, from the snapshot's scopes. */
static const struct snap_scope *tui_scopes(const struct snapshot *snap,
					   pid_t pid, size_t *n)
{
	const struct snap_scope *whole = snap->whole;

	*n = 0;
	if (!whole)
		return NULL;
	if (!pid) {
		*n = whole->nchildren;
		return whole->children;
	}
	for (size_t i = 0; i < whole->nchildren; i++)
		if (whole->children[i].pid == pid) {
			*n = whole->children[i].nchildren;
			return whole->children[i].children;
		}
	return NULL;
}

/* Rows of the per-VM or per-vCPU view from the snapshot's scopes. */
void tui_model_groups(struct tui_priv *tp, const struct snapshot *snap)
{
	const struct snap_scope *g;
	char t[32], r[32];
	size_t n;

	g = tui_scopes(snap, tp->view == VIEW_VMS ? 0 : tp->vm, &n);
	for (size_t i = 0; i < n; i++) {
		struct tui_row *row = tui_add_row(tp);
		char top[256] = "";

		row->pid = g[i].pid;
		row->gone = !g[i].fresh;
		if (tp->view == VIEW_VMS) {
			tui_set(row, 0, g[i].pid, "%d", g[i].pid);
			tui_set(row, 1, 0, "%s%s",
				g[i].guest ? g[i].guest : "-",
				row->gone ? " (gone)" : "");
		} else {
			tui_set(row, 0, g[i].vcpu, "%d", g[i].vcpu);
			tui_set(row, 1, g[i].tid, "%s%s", g[i].tid ? "" : "-",
				row->gone ? " (gone)" : "");
			if (g[i].tid) {
				free(row->text[1]);
				tui_set(row, 1, g[i].tid, "%d%s", g[i].tid,
					row->gone ? " (gone)" : "");
			}
		}
		ui_text_scaled(t, sizeof(t), (double)g[i].total, 10);
		ui_text_scaled(r, sizeof(r), g[i].rate, 9);
		tui_set(row, 2, (double)g[i].total, "%s", t);
		tui_set(row, 3, g[i].rate, "%s", r);
		for (int k = 0; k < SNAP_TOP && g[i].top[k] >= 0; k++) {
			ui_text_scaled(r, sizeof(r), g[i].top_rate[k], 9);
			snprintf(top + strlen(top), sizeof(top) - strlen(top),
				 "%s%s %s/s", k ? ", " : "",
				 snap->fields[g[i].top[k]].name, r);
		}
		tui_set(row, 4, 0, "%s", top);
	}
}

static const struct tui_priv *sort_tp;

static int tui_row_cmp(const void *a, const void *b)
{
	const struct tui_row *x = a, *y = b;
	int c = sort_tp->sort;

	/* text columns ascending, numbers descending (as top does) */
	if (sort_tp->view == VIEW_EVENTS ?
		    c == 0 :
		    c == 4 || (sort_tp->view == VIEW_VMS && c == 1)) {
		int d = util_name_cmp(x->text[c] ? x->text[c] : "",
				      y->text[c] ? y->text[c] : "");
		if (d)
			return d;
	} else if (sort_tp->view != VIEW_EVENTS && c == 0) {
		if (x->key[0] != y->key[0])
			return x->key[0] < y->key[0] ? -1 : 1;
	} else if (x->key[c] != y->key[c]) {
		return x->key[c] < y->key[c] ? 1 : -1;
	}
	/* then by total, then by name */
	c = sort_tp->view == VIEW_EVENTS ? 1 : 2;
	if (x->key[c] != y->key[c])
		return x->key[c] < y->key[c] ? 1 : -1;
	return util_name_cmp(x->text[0], y->text[0]);
}

static int tui_bucket_cmp(const void *a, const void *b)
{
	const struct tui_row *x = a, *y = b;

	return x->bucket - y->bucket;
}

static void tui_sort_rows(struct tui_priv *tp);

/* Sorts; in the events view children stay right under their parent and
 * the Total line stays last. */
void tui_sort(struct tui_priv *tp)
{
	struct tui_row total;
	bool has_total = tp->nrows && tp->rows[tp->nrows - 1].total;

	if (has_total)
		total = tp->rows[--tp->nrows];
	tui_sort_rows(tp);
	if (has_total) {
		tp->rows = xrealloc(tp->rows,
				    (tp->nrows + 1) * sizeof(*tp->rows));
		tp->rows[tp->nrows++] = total;
	}
}

static void tui_sort_rows(struct tui_priv *tp)
{
	sort_tp = tp;
	if (tp->view == VIEW_HIST)
		return; /* buckets stay in order */
	if (!tp->nrows)
		return; /* nothing yet (qsort takes no NULL base) */
	if (tp->view != VIEW_EVENTS) {
		qsort(tp->rows, tp->nrows, sizeof(*tp->rows), tui_row_cmp);
		return;
	}
	/* parents first, sorted; then each parent's children after it */
	struct tui_row *all = tp->rows, *out;
	size_t n = tp->nrows, k = 0, np = 0;

	qsort(all, n, sizeof(*all), tui_row_cmp);
	out = xcalloc(n ? n : 1, sizeof(*out));
	for (size_t i = 0; i < n; i++)
		if (!all[i].child)
			np++;
	for (size_t i = 0; i < n; i++) {
		size_t len, first;

		if (all[i].child)
			continue;
		out[k++] = all[i];
		len = strlen(all[i].text[0]);
		first = k;
		for (size_t j = 0; j < n; j++)
			if (all[j].child &&
			    !strncmp(all[j].text[0], all[i].text[0], len) &&
			    all[j].text[0][len] == '(')
				out[k++] = all[j];
		/* a histogram's buckets go in bucket order */
		if (k > first && out[first].bucket >= 0)
			qsort(out + first, k - first, sizeof(*out),
			      tui_bucket_cmp);
	}
	/* children whose parent is not shown */
	for (size_t i = 0; i < n && k < n; i++) {
		bool placed = false;

		if (!all[i].child)
			continue;
		for (size_t j = 0; j < k && !placed; j++)
			placed = out[j].text[0] == all[i].text[0];
		if (!placed)
			out[k++] = all[i];
	}
	(void)np;
	free(all);
	tp->rows = out;
}

void tui_set_header(struct tui_priv *tp, const struct snapshot *snap)
{
	const struct snap_header *h = &snap->header;
	const struct vmdir_vm *vm;

	tp->pid = h->pid;
	free(tp->guest);
	tp->guest = h->guest ? xstrdup(h->guest) : NULL;
	tp->delay = h->delay;
	free(tp->filter);
	tp->filter = h->filter ? xstrdup(h->filter) : NULL;
	free(tp->providers);
	tp->providers = h->sources ? xstrdup(h->sources) : NULL;
	free(tp->replay);
	tp->replay = h->replay ? xstrdup(h->replay) : NULL;
	vm = tp->pid ? vmdir_find(snap->vms, tp->pid) : NULL;
	free(tp->pid_name);
	tp->pid_name = vm && vm->name ? xstrdup(vm->name) : NULL;
	tp->dead = vm && vm->checked && !vm->alive;
}

/* The sources' notes of snap, failures first. */
void tui_set_notes(struct tui_priv *tp, const struct snapshot *snap)
{
	tui_free_notes(tp);
	tp->notes = xcalloc(snap->nnotes + 1, sizeof(*tp->notes));
	for (int failed = 1; failed >= 0; failed--)
		for (size_t i = 0; i < snap->nnotes; i++)
			if (snap->notes[i].failed == (bool)failed)
				tp->notes[tp->nnotes++] =
					xasprintf("%s: %s",
						  snap->notes[i].source,
						  snap->notes[i].text);
	tp->notes_gen = snap->notes_gen;
}
