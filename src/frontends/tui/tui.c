// SPDX-License-Identifier: GPL-2.0-only
/*
 * The interactive monitor: a top-like ncursesw screen with kvm_stat's keys
 * and views per VM and per vCPU. The only file that includes curses. At
 * each render it turns the const snapshot into a display model (strings
 * and numbers it owns), so a resize or a key redraws without touching the
 * stats; it never calls providers, and asks the loop for anything that needs
 * them (filters, pid, delay, child events, per-VM data) through
 * struct ui_request. The terminal is restored on every way out.
 */
#include <curses.h>
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errmsg.h"
#include "filter.h"
#include "frontend.h"
#include "hist_fmt.h"
#include "options.h"
#include "tui_lat.h"
#include "ui_text.h"
#include "units.h"
#include "util.h"
#include "vm.h"

#define KEY_ESC 27
#define TUI_COLS_MAX 6

enum tui_view {
	VIEW_EVENTS, /* the summary, kvm_stat's screen */
	VIEW_VMS,    /* 'b': one row per VM */
	VIEW_VCPUS,  /* Enter on a VM: one row per vCPU */
	VIEW_HIST,   /* Enter on a histogram: its buckets */
};

enum tui_prompt {
	PROMPT_NONE,
	PROMPT_FILTER, /* 'f' */
	PROMPT_PID,    /* 'p' */
	PROMPT_GUEST,  /* 'g' */
	PROMPT_DELAY,  /* 's' */
};

/* One display row: its cells as text, and the numbers it sorts by. */
struct tui_row {
	char *text[TUI_COLS_MAX];
	double key[TUI_COLS_MAX];
	pid_t pid;
	char *field; /* events view: the field's name */
	int bucket;  /* a histogram bucket's index, else -1 */
	bool hist;   /* a histogram (Enter shows its buckets) */
	bool child;  /* indented under its parent */
	bool gone;   /* VM or vCPU no longer read */
	bool total;  /* the events view's Total line, kept last */
};

struct tui_priv {
	const struct options *opts;
	bool active; /* curses is on */
	bool color;
	enum tui_view view;
	pid_t vm;	    /* VIEW_VCPUS: whose vCPUs */
	char *hist;	    /* VIEW_HIST: which histogram */
	char *hist_summary; /* its percentiles over the interval */
	int sort;	    /* column sorted by */
	bool help;	    /* help screen shown */
	bool latency;	    /* 'l': the latency view over the others */
	bool children;	    /* 'x' */
	bool picking;	    /* events view: arrows moved a selection */
	bool ascii;	    /* the terminal's locale is not UTF-8 */
	enum tui_prompt prompt;
	char input[256]; /* prompt text being edited */
	char hint[256];	 /* the value it replaces, shown beside */
	char **picks;	 /* 'p', 'g': the guests to pick ("PID  NAME") */
	size_t npicks;
	struct errmsg error; /* why the last input was refused */
	struct tui_row *rows;
	size_t nrows;
	bool total_text;      /* the Total line's text: */
	char *sum, *sum_rate; /* events and their rate */
	int sel, top;	      /* selected row, first row shown */
	/* header facts */
	pid_t pid;
	char *pid_name; /* guest name of pid, looked up when pid changes */
	pid_t named;	/* the pid pid_name is of */
	bool dead;	/* the VM watched has exited */
	char *guest;
	double delay;
	char *filter;
	char *providers;
	/* the sources' notes ("tracepoint: why"), shown under the header
	 * until 'n' dismisses them or the set changes */
	char **notes;
	size_t nnotes;
	unsigned notes_gen, dismissed_gen;
};

/* Notes shown at the most; the last line says how many more. */
#define TUI_NOTES_MAX 3

static const char *const event_cols[] = { "Event", "Total", "%Total",
					  "CurAvg/s", NULL };
static const char *const vm_cols[] = { "PID",	   "Guest",	     "Total",
				       "CurAvg/s", "Busiest events", NULL };
static const char *const vcpu_cols[] = { "vCPU",	   "TID",
					 "Total",	   "CurAvg/s",
					 "Busiest events", NULL };
static const char *const hist_cols[] = { "Bucket", "Total", "%Total",
					 "Interval", NULL };

static struct tui_priv *tui_current;

/* Ends curses if it is on: safe to call from any exit path. */
static void tui_restore(void)
{
	if (tui_current && tui_current->active) {
		endwin();
		tui_current->active = false;
	}
}

/* A crash: give the terminal back, then die of the same signal. */
static void tui_crash(int sig)
{
	static const char msg[] =
		"kvmstat: internal error (fatal signal); the terminal was restored\n";
	ssize_t n;

	tui_restore();
	n = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)n;
	signal(sig, SIG_DFL);
	raise(sig);
}

static const char *const *tui_cols(const struct tui_priv *tp)
{
	return tp->view == VIEW_EVENTS ? event_cols :
	       tp->view == VIEW_VMS    ? vm_cols :
	       tp->view == VIEW_HIST   ? hist_cols :
					 vcpu_cols;
}

/* The per-VM and per-vCPU views (text in the first two columns). */
static bool tui_groups(const struct tui_priv *tp)
{
	return tp->view == VIEW_VMS || tp->view == VIEW_VCPUS;
}

static int tui_ncols(const struct tui_priv *tp)
{
	const char *const *c = tui_cols(tp);
	int n = 0;

	while (c[n])
		n++;
	return n;
}

/* Before any provider opens: without a terminal the run ends at once. */
static int tui_check(struct frontend *fe, const struct options *opts)
{
	(void)opts;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return errmsg_set(
			&fe->msg, -ENOTTY,
			"the monitor needs a terminal: use -1 or -l for output to a file or pipe");
	return 0;
}

static int tui_open(struct frontend *fe, const struct options *opts)
{
	struct tui_priv *tp;
	int rc = tui_check(fe, opts);

	if (rc)
		return rc;
	tp = xcalloc(1, sizeof(*tp));
	tp->opts = opts;
	tp->sort = 3; /* CurAvg/s, as kvm_stat */
	tui_current = tp;
	util_set_fatal_hook(tui_restore);
	signal(SIGSEGV, tui_crash);
	signal(SIGBUS, tui_crash);
	signal(SIGFPE, tui_crash);
	signal(SIGABRT, tui_crash);
	/* Ctrl-\ is a key like the others: only q (or Ctrl-C, SIGINT, as
	 * in every mode) ends the monitor, never a core dump that leaves
	 * the terminal in curses' state */
	signal(SIGQUIT, SIG_IGN);
	/* wide characters (µs) need the user's character set; without
	 * UTF-8 the units are written in ASCII (us). LC_CTYPE alone: numbers
	 * are read and written in the C locale (0.5, not 0,5) */
	setlocale(LC_CTYPE, "");
	tp->ascii = strcmp(nl_langinfo(CODESET), "UTF-8") != 0;
	if (!newterm(NULL, stdout, stdin)) {
		free(tp);
		tui_current = NULL;
		return errmsg_set(&fe->msg, -ENOTTY,
				  "cannot start curses on this terminal (TERM=%s)",
				  getenv("TERM") ? getenv("TERM") : "");
	}
	tp->active = true;
	cbreak();
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	set_escdelay(50);
	curs_set(0);
	if (has_colors() && !getenv("NO_COLOR")) {
		tp->color = true;
		start_color();
		use_default_colors();
		init_pair(1, COLOR_BLACK, COLOR_CYAN);
		init_pair(2, COLOR_RED, -1);
	}
	fe->priv = tp;
	return 0;
}

static void tui_free_rows(struct tui_priv *tp)
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

static void tui_free_notes(struct tui_priv *tp)
{
	for (size_t i = 0; i < tp->nnotes; i++)
		free(tp->notes[i]);
	free(tp->notes);
	tp->notes = NULL;
	tp->nnotes = 0;
}

static void tui_free_picks(struct tui_priv *tp)
{
	for (size_t i = 0; i < tp->npicks; i++)
		free(tp->picks[i]);
	free(tp->picks);
	tp->picks = NULL;
	tp->npicks = 0;
}

/* The running guests, pid and name, to pick from (as kvm_stat lists). */
static void tui_load_picks(struct tui_priv *tp)
{
	struct vm_info *v = NULL;
	size_t n = 0;

	tui_free_picks(tp);
	if (vm_list(tp->opts->proc_root, &v, &n))
		return;
	tp->picks = xcalloc(n ? n : 1, sizeof(*tp->picks));
	for (size_t i = 0; i < n; i++)
		tp->picks[tp->npicks++] = xasprintf("%8d  %s", v[i].pid,
						    v[i].name ? v[i].name : "-");
	vm_list_free(v, n);
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
static void tui_model_events(struct tui_priv *tp, const struct snapshot *snap)
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
				     UNITS_COUNT | (tp->ascii ? UNITS_ASCII : 0),
				     t, sizeof(t));
			units_format(f, x->rate,
				     UNITS_COUNT | (tp->ascii ? UNITS_ASCII : 0),
				     r, sizeof(r));
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
static void tui_add_total(struct tui_priv *tp)
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
static void tui_model_hist(struct tui_priv *tp, const struct snapshot *snap)
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
	hist_format_percentiles(f, hist_total(dlt, n) ? dlt : tot, n,
				tp->ascii ? UNITS_ASCII : 0, sum, sizeof(sum));
	tp->hist_summary = xasprintf("%s %s: %s", tp->hist,
				     hist_total(dlt, n) ? "this interval" :
							  "since start",
				     sum);
	for (size_t i = 0; i < n; i++) {
		struct tui_row *r = tui_add_row(tp);

		hist_format_range(f, &tot[i], tp->ascii ? UNITS_ASCII : 0,
				  range, sizeof(range));
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
static void tui_model_groups(struct tui_priv *tp, const struct snapshot *snap)
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
static void tui_sort(struct tui_priv *tp)
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

static void tui_attr_header(struct tui_priv *tp, bool on)
{
	if (on) {
		if (tp->color)
			attron(COLOR_PAIR(1));
		attron(A_BOLD);
	} else {
		attroff(A_BOLD);
		if (tp->color)
			attroff(COLOR_PAIR(1));
	}
}

static void tui_draw_footer(struct tui_priv *tp, int rows, int cols);

/* The body while 'p' or 'g' asks: the guests to pick from. */
static void tui_draw_picks(struct tui_priv *tp, int y, int rows, int cols)
{
	attron(A_UNDERLINE);
	mvaddnstr(y++, 0, "     Pid  Guest name", cols);
	attroff(A_UNDERLINE);
	for (size_t i = 0; i < tp->npicks && y < rows - 1; i++)
		mvaddnstr(y++, 0, tp->picks[i], cols);
	if (!tp->npicks && y < rows - 1)
		mvaddnstr(y, 0, "(no running guest found)", cols);
	tui_draw_footer(tp, rows, cols);
}

/* The help screen, drawn from the key table (below, with the keys). */
static void tui_draw_help(int cols);

/* Whether notes are to be shown: some, and not the set 'n' dismissed. */
static bool tui_notes_shown(const struct tui_priv *tp)
{
	return tp->nnotes && tp->notes_gen != tp->dismissed_gen;
}

/* The sources' notes from line y, each on two lines at the most (the
 * fix a note ends with must show), TUI_NOTES_MAX of them; the next free
 * line. */
static int tui_draw_notes(struct tui_priv *tp, int y, int cols)
{
	size_t n;

	if (!tui_notes_shown(tp) || cols <= 0)
		return y;
	n = tp->nnotes > TUI_NOTES_MAX ? TUI_NOTES_MAX : tp->nnotes;
	if (tp->color)
		attron(COLOR_PAIR(2));
	attron(A_BOLD);
	for (size_t i = 0; i < n; i++) {
		char line[ERRMSG_MAX + 64];
		size_t len;

		if (i == n - 1 && tp->nnotes > n)
			snprintf(line, sizeof(line), "%s (and %zu more)",
				 tp->notes[i], tp->nnotes - n);
		else
			snprintf(line, sizeof(line), "%s", tp->notes[i]);
		len = strlen(line);
		mvaddnstr(y++, 0, line, cols);
		if (len > (size_t)cols)
			mvaddnstr(y++, 2, line + cols, cols - 2);
	}
	attroff(A_BOLD);
	if (tp->color)
		attroff(COLOR_PAIR(2));
	return y;
}

static void tui_draw(struct tui_priv *tp)
{
	const char *const *cols_name = tui_cols(tp);
	int rows, cols, y = 0, ncols = tui_ncols(tp), body, namew;
	int w[TUI_COLS_MAX];
	char hdr[ERRMSG_MAX + 512]; /* a line: an input error, a prompt */

	getmaxyx(stdscr, rows, cols);
	if (tp->help) {
		tui_draw_help(cols);
		return;
	}
	erase();
	if (rows < 6 || cols < 50) {
		mvaddnstr(0, 0, "terminal too small for kvmstat", cols);
		refresh();
		return;
	}
	/* header: what is shown, providers, delay, filter */
	if (tp->view == VIEW_HIST)
		snprintf(hdr, sizeof(hdr), "kvm statistics - histogram %s",
			 tp->hist);
	else if (tp->view == VIEW_VCPUS)
		snprintf(hdr, sizeof(hdr), "kvm statistics - vCPUs of pid %d",
			 tp->vm);
	else if (tp->view == VIEW_VMS)
		snprintf(hdr, sizeof(hdr), "kvm statistics - guests");
	else if (tp->pid && tp->pid_name)
		snprintf(hdr, sizeof(hdr), "kvm statistics - pid %d (%s)",
			 tp->pid, tp->pid_name);
	else if (tp->pid)
		snprintf(hdr, sizeof(hdr), "kvm statistics - pid %d", tp->pid);
	else
		snprintf(hdr, sizeof(hdr), "kvm statistics - summary");
	attron(A_BOLD);
	mvaddnstr(y, 0, hdr, cols);
	attroff(A_BOLD);
	if (tp->dead && tp->view == VIEW_EVENTS) {
		/* kvm_stat's mark: the last numbers stay on the screen */
		attron(A_BLINK | A_STANDOUT);
		addnstr("   Guest is DEAD   ", cols - getcurx(stdscr) > 0 ?
						       cols - getcurx(stdscr) :
						       0);
		attroff(A_BLINK | A_STANDOUT);
	}
	snprintf(hdr, sizeof(hdr), "   [%s]  delay %.1fs%s%s%s",
		 tp->providers ? tp->providers : "", tp->delay,
		 tp->filter ? "  filter " : "", tp->filter ? tp->filter : "",
		 tp->children ? "  +children" : "");
	addnstr(hdr, cols - getcurx(stdscr) > 0 ? cols - getcurx(stdscr) : 0);
	y++;
	if (tp->view == VIEW_HIST && tp->hist_summary)
		mvaddnstr(y++, 0, tp->hist_summary, cols);
	y = tui_draw_notes(tp, y, cols);
	if (y < 2)
		y = 2;

	/* columns: the name column takes what the numbers leave */
	for (int c = 0; c < ncols; c++)
		w[c] = c == 0 && tp->view != VIEW_EVENTS ? 7 :
		       c == 1 && tp->view != VIEW_EVENTS &&
				       tp->view != VIEW_HIST ?
							   20 :
		       c == 4 ? 0 :
				10;
	if (tp->view == VIEW_EVENTS || tp->view == VIEW_HIST) {
		w[2] = 7;
		namew = cols - (w[1] + w[2] + w[3] + 3);
		w[0] = namew > 42 ? 42 : namew;
	}
	tui_attr_header(tp, true);
	move(y, 0);
	for (int c = 0; c < ncols; c++) {
		char cell[64];
		bool sorted = c == tp->sort;

		snprintf(cell, sizeof(cell),
			 c == 0 || (c == 1 && tui_groups(tp)) || c == 4 ?
				 "%-*s%s" :
				 "%*s%s",
			 w[c] ? w[c] - (sorted ? 1 : 0) : 0, cols_name[c],
			 sorted ? "*" : "");
		if (c)
			addch(' ');
		addnstr(cell, cols - getcurx(stdscr) > 0 ?
				      cols - getcurx(stdscr) :
				      0);
	}
	tui_attr_header(tp, false);
	y++;

	body = rows - y - 1;
	if (tp->sel >= (int)tp->nrows)
		tp->sel = tp->nrows ? (int)tp->nrows - 1 : 0;
	if (tp->sel < tp->top)
		tp->top = tp->sel;
	if (tp->sel >= tp->top + body)
		tp->top = tp->sel - body + 1;
	if (tp->top > (int)tp->nrows - body)
		tp->top = (int)tp->nrows - body > 0 ? (int)tp->nrows - body : 0;
	if (tp->picks) {
		tui_draw_picks(tp, y, rows, cols);
		return;
	}
	for (int i = tp->top; i < (int)tp->nrows && y < rows - 1; i++, y++) {
		const struct tui_row *r = &tp->rows[i];
		bool selected = i == tp->sel && tp->view != VIEW_HIST &&
				(tp->view != VIEW_EVENTS || tp->picking);

		if (selected)
			attron(A_REVERSE);
		if (r->total)
			attron(A_BOLD);
		if (r->gone && tp->color)
			attron(COLOR_PAIR(2));
		move(y, 0);
		for (int c = 0; c < ncols; c++) {
			char cell[512];
			const char *t = r->text[c] ? r->text[c] : "";

			if (c == 0 && r->child)
				snprintf(cell, sizeof(cell), "  %-*.*s",
					 w[0] - 2, w[0] - 2, t);
			else if (c == 0 || (c == 1 && tui_groups(tp)))
				snprintf(cell, sizeof(cell), "%-*.*s", w[c],
					 w[c], t);
			else if (c == 4)
				snprintf(cell, sizeof(cell), "%s", t);
			else
				snprintf(cell, sizeof(cell), "%*s", w[c], t);
			if (c)
				addch(' ');
			addnstr(cell, cols - getcurx(stdscr) > 0 ?
					      cols - getcurx(stdscr) :
					      0);
		}
		if (r->gone && tp->color)
			attroff(COLOR_PAIR(2));
		if (r->total)
			attroff(A_BOLD);
		if (selected)
			attroff(A_REVERSE);
	}
	if (!tp->nrows)
		mvaddnstr(y, 0,
			  tp->view == VIEW_EVENTS ?
				  "No matching events reported yet" :
				  "(no VM data: the providers report none yet)",
			  cols);

	tui_draw_footer(tp, rows, cols);
}

/* The last line: a prompt, or the most used keys; then the refresh. */
static void tui_draw_footer(struct tui_priv *tp, int rows, int cols)
{
	char hdr[ERRMSG_MAX + 1024];

	move(rows - 1, 0);
	clrtoeol();
	if (tp->prompt != PROMPT_NONE) {
		static const char *const what[] = {
			[PROMPT_FILTER] = "Filter fields (regex, empty = default)",
			[PROMPT_PID] = "Show pid or guest name (empty = all)",
			[PROMPT_GUEST] = "Show guest name or pid (empty = all)",
			[PROMPT_DELAY] =
				"Update interval in seconds (0.1-25.5, empty = 3.0)",
		};

		snprintf(hdr, sizeof(hdr), "%s%s%s [now: %s]: %s",
			 tp->error.text, errmsg_isset(&tp->error) ? " - " : "",
			 what[tp->prompt], tp->hint, tp->input);
		mvaddnstr(rows - 1, 0, hdr, cols);
		curs_set(1);
	} else {
		curs_set(0);
		attron(A_REVERSE);
		mvaddnstr(rows - 1, 0,
			  tp->view == VIEW_EVENTS ?
				  tui_notes_shown(tp) ?
				  " n dismiss  h help  q quit  f filter  p pid  g guest  b guests  x children  o sort  s delay  r reset " :
				  " h help  q quit  f filter  p pid  g guest  b guests  x children  o sort  s delay  r reset  Enter histogram " :
			  tp->view == VIEW_HIST ?
				  " Esc back  h help  q quit " :
				  " Enter/v vCPUs  Esc back  arrows select  h help  q quit  b events ",
			  cols);
		attroff(A_REVERSE);
	}
	refresh();
}

static void tui_set_header(struct tui_priv *tp, const struct frontend *fe)
{
	const struct options *o = tp->opts;

	tp->pid = o->pid;
	free(tp->guest);
	tp->guest = o->guest ? xstrdup(o->guest) : NULL;
	tp->delay = o->delay;
	free(tp->filter);
	tp->filter = o->fields ? xstrdup(o->fields) : NULL;
	free(tp->providers);
	tp->providers = fe->providers ? xstrdup(fe->providers) : NULL;
	if (tp->pid != tp->named) {
		free(tp->pid_name);
		tp->pid_name = tp->pid ? vm_guest_name(o->proc_root, tp->pid) :
					 NULL;
		tp->named = tp->pid;
	}
	tp->dead = tp->pid && !vm_pid_is_vm(o->proc_root, tp->pid);
}

/* The sources' notes of snap, failures first. */
static void tui_set_notes(struct tui_priv *tp, const struct snapshot *snap)
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

static int tui_render(struct frontend *fe, const struct snapshot *snap)
{
	struct tui_priv *tp = fe->priv;

	tui_set_header(tp, fe);
	tui_set_notes(tp, snap);
	if (tp->latency && !tp->help) {
		char title[64];

		if (tp->pid)
			snprintf(title, sizeof(title), "pid %d", tp->pid);
		else
			snprintf(title, sizeof(title), "summary");
		tui_lat_draw(snap, title);
		return 0;
	}
	tui_free_rows(tp);
	if (tp->view == VIEW_EVENTS)
		tui_model_events(tp, snap);
	else if (tp->view == VIEW_HIST)
		tui_model_hist(tp, snap);
	else
		tui_model_groups(tp, snap);
	tui_sort(tp);
	if (tp->view == VIEW_EVENTS)
		tui_add_total(tp);
	tui_draw(tp);
	return 0;
}

static int tui_input_fd(struct frontend *fe)
{
	(void)fe;
	return STDIN_FILENO;
}

/* Checks a finished prompt; fills the request or an error to show. */
static enum ui_action tui_accept(struct tui_priv *tp, struct ui_request *req)
{
	const struct options *o = tp->opts;
	struct field_filter f = { 0 };
	char *end;
	long pid;

	errmsg_clear(&tp->error);
	switch (tp->prompt) {
	case PROMPT_FILTER:
		if (tp->input[0] && filter_set(&f, tp->input, &tp->error))
			return UI_NONE;
		filter_free(&f);
		snprintf(req->filter, sizeof(req->filter), "%s", tp->input);
		return UI_SET_FILTER;
	case PROMPT_PID:
	case PROMPT_GUEST:
		req->guest[0] = '\0';
		if (!tp->input[0]) {
			req->pid = 0;
			return UI_SET_PID;
		}
		pid = strtol(tp->input, &end, 10);
		if (*end || pid <= 0) {
			pid_t p;

			/* a guest name, for 'p' as for 'g' */
			if (vm_resolve_guest(o->proc_root, tp->input, &p,
					     &tp->error))
				return UI_NONE;
			pid = p;
			snprintf(req->guest, sizeof(req->guest), "%s",
				 tp->input);
		} else if (vm_resolve_pid(o->proc_root, (pid_t)pid,
					  &tp->error)) {
			return UI_NONE;
		}
		req->pid = (pid_t)pid;
		return UI_SET_PID;
	case PROMPT_DELAY:
		if (!tp->input[0]) {
			req->delay = DELAY_DEFAULT;
			return UI_SET_DELAY;
		}
		req->delay = strtod(tp->input, &end);
		if (end == tp->input || *end ||
		    !(req->delay >= DELAY_MIN - 1e-9 &&
		      req->delay <= DELAY_MAX + 1e-9)) {
			errmsg_set(&tp->error, -EINVAL,
				   "\"%s\" is not from %.1f to %.1f seconds",
				   tp->input, DELAY_MIN, DELAY_MAX);
			return UI_NONE;
		}
		return UI_SET_DELAY;
	case PROMPT_NONE:
		break;
	}
	return UI_NONE;
}

/* A key while a prompt is open: edit, cancel, or accept. */
static enum ui_action tui_prompt_key(struct tui_priv *tp, int ch,
				     struct ui_request *req)
{
	size_t len = strlen(tp->input);
	enum ui_action act;

	switch (ch) {
	case KEY_ESC:
		tp->prompt = PROMPT_NONE;
		errmsg_clear(&tp->error);
		tui_free_picks(tp);
		break;
	case KEY_BACKSPACE:
	case 127:
	case 8:
		if (len)
			tp->input[len - 1] = '\0';
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		act = tui_accept(tp, req);
		if (act != UI_NONE) {
			tp->prompt = PROMPT_NONE;
			tui_free_picks(tp);
			return act;
		}
		tp->input[0] = '\0'; /* refused: ask again */
		break;
	default:
		if (ch >= 32 && ch < 127 && len + 1 < sizeof(tp->input)) {
			tp->input[len] = (char)ch;
			tp->input[len + 1] = '\0';
		}
		break;
	}
	tui_draw(tp);
	return UI_NONE;
}

/* Opens a prompt: the input starts empty (typing replaces the value),
 * the current value shown beside as a hint. */
static void tui_open_prompt(struct tui_priv *tp, enum tui_prompt p)
{
	const struct options *o = tp->opts;

	tp->prompt = p;
	errmsg_clear(&tp->error);
	tp->input[0] = '\0';
	tp->hint[0] = '\0';
	if (p == PROMPT_FILTER)
		snprintf(tp->hint, sizeof(tp->hint), "%s",
			 o->fields ? o->fields : "default");
	else if (p == PROMPT_DELAY)
		snprintf(tp->hint, sizeof(tp->hint), "%.1f", o->delay);
	else if (o->pid && o->guest)
		snprintf(tp->hint, sizeof(tp->hint), "%s", o->guest);
	else if (o->pid)
		snprintf(tp->hint, sizeof(tp->hint), "%d", o->pid);
	else
		snprintf(tp->hint, sizeof(tp->hint), "all");
	if (p == PROMPT_PID || p == PROMPT_GUEST)
		tui_load_picks(tp);
	tui_draw(tp);
}

static void tui_move(struct tui_priv *tp, int by)
{
	tp->sel += by;
	if (tp->sel < 0)
		tp->sel = 0;
	if (tp->sel >= (int)tp->nrows)
		tp->sel = tp->nrows ? (int)tp->nrows - 1 : 0;
	if (tp->view == VIEW_EVENTS)
		tp->picking = true;
	tui_draw(tp);
}

static void tui_resort(struct tui_priv *tp, int col)
{
	int n = tui_ncols(tp);

	tp->sort = (col % n + n) % n;
	tui_sort(tp);
	tui_draw(tp);
}

/*
 * The keys outside prompts: one const table, in the order of the help
 * screen, drives both dispatch and help (prompt editing is
 * tui_prompt_key's). Each entry's handler gets the entry and the key
 * pressed, so that one handler serves a family of keys.
 */
#define TUI_KEYS_MAX 12

struct tui_key {
	int keys[TUI_KEYS_MAX]; /* the keys it answers, 0-terminated */
	const char *label;	/* how help names them; NULL: not listed */
	const char *help;	/* what they do ('\n' starts a line under) */
	enum ui_action (*run)(struct frontend *fe, const struct tui_key *k,
			      int ch);
	int arg; /* the handler's: a prompt, an action */
};

/* A key that only asks main for something: arg is the ui_action. */
static enum ui_action tui_key_action(struct frontend *fe,
				     const struct tui_key *k, int ch)
{
	(void)fe;
	(void)ch;
	return (enum ui_action)k->arg;
}

static enum ui_action tui_key_help(struct frontend *fe, const struct tui_key *k,
				   int ch)
{
	struct tui_priv *tp = fe->priv;

	(void)k;
	(void)ch;
	tp->help = true;
	tui_draw(tp);
	return UI_NONE;
}

/* Opens the prompt arg names. */
static enum ui_action tui_key_prompt(struct frontend *fe,
				     const struct tui_key *k, int ch)
{
	(void)ch;
	tui_open_prompt(fe->priv, (enum tui_prompt)k->arg);
	return UI_NONE;
}

/* 'b': the summary or the per-guest view. */
static enum ui_action tui_key_guests(struct frontend *fe,
				     const struct tui_key *k, int ch)
{
	struct tui_priv *tp = fe->priv;

	(void)k;
	(void)ch;
	tp->view = tp->view == VIEW_EVENTS ? VIEW_VMS : VIEW_EVENTS;
	tp->sel = tp->top = 0;
	tp->sort = tp->view == VIEW_EVENTS ? 3 : 0;
	fe->req.on = tp->view != VIEW_EVENTS;
	return UI_SET_VMS;
}

static enum ui_action tui_key_children(struct frontend *fe,
				       const struct tui_key *k, int ch)
{
	struct tui_priv *tp = fe->priv;

	(void)k;
	(void)ch;
	/* the providers count them all along: no count restarts */
	tp->children = !tp->children;
	fe->req.on = tp->children;
	return UI_SET_CHILDREN;
}

/* 'o': CurAvg/s or Total. */
static enum ui_action tui_key_order(struct frontend *fe,
				    const struct tui_key *k, int ch)
{
	struct tui_priv *tp = fe->priv;

	(void)k;
	(void)ch;
	tui_resort(tp, tp->view == VIEW_EVENTS ? (tp->sort == 3 ? 1 : 3) :
						 (tp->sort == 3 ? 2 : 3));
	return UI_NONE;
}

/* 1-9 choose a column (one the view has), < and > the one beside. */
static enum ui_action tui_key_sort(struct frontend *fe, const struct tui_key *k,
				   int ch)
{
	struct tui_priv *tp = fe->priv;

	(void)k;
	if (ch == '<')
		tui_resort(tp, tp->sort - 1);
	else if (ch == '>')
		tui_resort(tp, tp->sort + 1);
	else if (ch - '1' < tui_ncols(tp))
		tui_resort(tp, ch - '1');
	return UI_NONE;
}

/* Arrows and pages move the selection; Home and End go to an end. */
static enum ui_action tui_key_move(struct frontend *fe, const struct tui_key *k,
				   int ch)
{
	struct tui_priv *tp = fe->priv;
	int page = LINES - 5;

	(void)k;
	tui_move(tp, ch == KEY_UP    ? -1 :
		     ch == KEY_DOWN  ? 1 :
		     ch == KEY_PPAGE ? -page :
		     ch == KEY_NPAGE ? page :
		     ch == KEY_HOME  ? -(int)tp->nrows :
				       (int)tp->nrows);
	return UI_NONE;
}

/* Enter: a VM's vCPUs, or a histogram's buckets; else a refresh. */
static enum ui_action tui_key_enter(struct frontend *fe,
				    const struct tui_key *k, int ch)
{
	struct tui_priv *tp = fe->priv;

	(void)k;
	(void)ch;
	if (tp->view == VIEW_VMS && tp->nrows) {
		tp->vm = tp->rows[tp->sel].pid;
		tp->view = VIEW_VCPUS;
		tp->sel = tp->top = 0;
		tp->sort = 0;
		return UI_REFRESH;
	}
	if (tp->view == VIEW_EVENTS && tp->nrows && tp->rows[tp->sel].hist) {
		free(tp->hist);
		tp->hist = xstrdup(tp->rows[tp->sel].field);
		tp->view = VIEW_HIST;
		tp->sel = tp->top = 0;
		return UI_REFRESH;
	}
	return UI_REFRESH;
}

/* 'l': the latency view (exit latency turned on), or back from it. */
static enum ui_action tui_key_latency(struct frontend *fe,
				      const struct tui_key *k, int ch)
{
	struct tui_priv *tp = fe->priv;

	(void)k;
	(void)ch;
	tp->latency = !tp->latency;
	fe->req.on = tp->latency;
	return UI_SET_LATENCY;
}

/* Escape: from a histogram to the summary, from vCPUs to the VMs. */
static enum ui_action tui_key_back(struct frontend *fe, const struct tui_key *k,
				   int ch)
{
	struct tui_priv *tp = fe->priv;

	(void)k;
	(void)ch;
	if (tp->latency)
		return tui_key_latency(fe, k, ch);
	if (tp->view == VIEW_HIST) {
		tp->view = VIEW_EVENTS;
		tp->sel = tp->top = 0;
		tp->sort = 3;
		return UI_REFRESH;
	}
	if (tp->view == VIEW_VCPUS) {
		tp->view = VIEW_VMS;
		tp->sel = tp->top = 0;
		tp->sort = 0;
		return UI_REFRESH;
	}
	return UI_NONE;
}

static enum ui_action tui_key_resize(struct frontend *fe,
				     const struct tui_key *k, int ch)
{
	(void)k;
	(void)ch;
	tui_draw(fe->priv);
	return UI_NONE;
}

/* 'n': the notes about the sources go until a new one comes. */
static enum ui_action tui_key_dismiss(struct frontend *fe,
				      const struct tui_key *k, int ch)
{
	struct tui_priv *tp = fe->priv;

	(void)k;
	(void)ch;
	tp->dismissed_gen = tp->notes_gen;
	tui_draw(tp);
	return UI_NONE;
}

static const struct tui_key tui_keys[] = {
	{ { 'b' },
	  "b",
	  "toggle the per-guest view (every VM, its exit rate and busiest events)",
	  tui_key_guests,
	  0 },
	{ { 'c' },
	  "c",
	  "clear filters (fields, pid, guest)",
	  tui_key_action,
	  UI_CLEAR },
	{ { 'f' },
	  "f",
	  "filter fields by regular expression (empty: the default)",
	  tui_key_prompt,
	  PROMPT_FILTER },
	{ { 'g' },
	  "g",
	  "filter by guest name or pid",
	  tui_key_prompt,
	  PROMPT_GUEST },
	{ { 'h', '?' }, "h", "this help", tui_key_help, 0 },
	{ { 'l' },
	  "l",
	  "exit latency per reason (count, time%, min/avg/max, p50/p90/p99),\n"
	  "in the kernel and in the VMM; BPF, on while shown",
	  tui_key_latency,
	  0 },
	{ { 'n' },
	  "n",
	  "dismiss the lines about sources (not started, tracefs mounted)",
	  tui_key_dismiss,
	  0 },
	{ { 'o' }, "o", "toggle sorting (CurAvg/s or Total)", tui_key_order, 0 },
	{ { 'p' },
	  "p",
	  "filter by pid or guest name",
	  tui_key_prompt,
	  PROMPT_PID },
	{ { 'q' }, "q", "quit", tui_key_action, UI_QUIT },
	{ { 'r' },
	  "r",
	  "reset the counters shown to zero from now",
	  tui_key_action,
	  UI_RESET },
	{ { 's' },
	  "s",
	  "set the update interval (0.1 to 25.5 seconds)",
	  tui_key_prompt,
	  PROMPT_DELAY },
	{ { 'x' },
	  "x",
	  "toggle child events, e.g. kvm_exit(HLT) under kvm_exit\n"
	  "(no count restarts)",
	  tui_key_children,
	  0 },
	{ { '1', '2', '3', '4', '5', '6', '7', '8', '9', '<', '>' },
	  "1-9 < >",
	  "choose the sort column",
	  tui_key_sort,
	  0 },
	{ { KEY_UP, KEY_DOWN, KEY_PPAGE, KEY_NPAGE, KEY_HOME, KEY_END },
	  "Up Down PgUp PgDn Home End",
	  "move the selection, scroll",
	  tui_key_move,
	  0 },
	{ { '\n', '\r', KEY_ENTER, 'v' },
	  "Enter or v",
	  "on a VM in the per-guest view: its vCPUs;\n"
	  "on a histogram: its buckets and p50/p90/p99",
	  tui_key_enter,
	  0 },
	{ { KEY_ESC },
	  "Escape",
	  "back to the previous view, or cancel a prompt",
	  tui_key_back,
	  0 },
	{ { KEY_RESIZE }, NULL, NULL, tui_key_resize, 0 },
};

static const char *const tui_help_head[] = { "Interactive commands", "" };
static const char *const tui_help_tail[] = {
	"",
	"Any other key refreshes at once; only q quits. Press any key to go back.",
};

/* The entry a key belongs to, or NULL. */
static const struct tui_key *tui_key_find(int ch)
{
	for (size_t i = 0; i < ARRAY_SIZE(tui_keys); i++)
		for (const int *k = tui_keys[i].keys; *k; k++)
			if (*k == ch)
				return &tui_keys[i];
	return NULL;
}

/*
 * Line n of the help screen into buf: a heading, then each listed entry
 * of the key table, its label in a column as wide as a letter or as the
 * longer labels, its help beside (and under, line by line). False past the
 * last line.
 */
static bool tui_help_line(size_t n, char *buf, size_t len)
{
	if (n < ARRAY_SIZE(tui_help_head)) {
		snprintf(buf, len, "%s", tui_help_head[n]);
		return true;
	}
	n -= ARRAY_SIZE(tui_help_head);
	for (size_t i = 0; i < ARRAY_SIZE(tui_keys); i++) {
		const struct tui_key *k = &tui_keys[i];
		const char *h = k->help;
		int w;

		if (!k->label)
			continue;
		w = (int)strlen(k->label);
		w = w == 1 ? 6 : w + 2 > 16 ? w + 2 : 16;
		for (bool first = true; h; first = false) {
			const char *nl = strchr(h, '\n');
			int hl = nl ? (int)(nl - h) : (int)strlen(h);

			if (!n) {
				snprintf(buf, len, "   %-*s%.*s", w,
					 first ? k->label : "", hl, h);
				return true;
			}
			n--;
			h = nl ? nl + 1 : NULL;
		}
	}
	if (n < ARRAY_SIZE(tui_help_tail)) {
		snprintf(buf, len, "%s", tui_help_tail[n]);
		return true;
	}
	return false;
}

static void tui_draw_help(int cols)
{
	char line[256];

	erase();
	for (size_t i = 0; tui_help_line(i, line, sizeof(line)); i++)
		mvaddnstr((int)i, 0, line, cols);
	refresh();
}

/* One key outside prompts: any key leaves the help screen; a key of the
 * table runs its entry, any other refreshes. */
static enum ui_action tui_key(struct frontend *fe, int ch)
{
	struct tui_priv *tp = fe->priv;
	const struct tui_key *k;

	if (tp->help) {
		tp->help = false;
		tui_draw(tp);
		return UI_NONE;
	}
	k = tui_key_find(ch);
	return k ? k->run(fe, k, ch) : UI_REFRESH;
}

static enum ui_action tui_input(struct frontend *fe)
{
	struct tui_priv *tp = fe->priv;
	enum ui_action act = UI_NONE;
	int ch;

	memset(&fe->req, 0, sizeof(fe->req));
	while ((ch = getch()) != ERR) {
		if (tp->prompt != PROMPT_NONE && ch != KEY_RESIZE)
			act = tui_prompt_key(tp, ch, &fe->req);
		else
			act = tui_key(fe, ch);
		if (act != UI_NONE && act != UI_REFRESH)
			break;
	}
	fe->req.action = act;
	return act;
}

static void tui_close(struct frontend *fe)
{
	struct tui_priv *tp = fe->priv;

	tui_restore();
	if (!tp)
		return;
	tui_free_rows(tp);
	free(tp->hist);
	free(tp->hist_summary);
	free(tp->guest);
	free(tp->pid_name);
	free(tp->filter);
	free(tp->providers);
	tui_free_picks(tp);
	tui_free_notes(tp);
	free(tp);
	tui_current = NULL;
	fe->priv = NULL;
}

/* The default mode: the terminal is the monitor's until it ends. */
static const struct frontend_view tui_view = {
	.pace = FRONTEND_INTERACTIVE,
	.at_once = true,
	.owns_terminal = true,
	.counts_all = true,
};

static const struct frontend_view *tui_select(const struct options *opts)
{
	return opts->mode == MODE_TUI ? &tui_view : NULL;
}

const struct frontend_ops tui_frontend_ops = {
	.name = "tui",
	.select = tui_select,
	.check = tui_check,
	.open = tui_open,
	.render = tui_render,
	.input_fd = tui_input_fd,
	.input = tui_input,
	.close = tui_close,
};
