// SPDX-License-Identifier: GPL-2.0-only
/*
 * The interactive monitor: a top-like ncursesw screen of the current
 * snapshot, sorted by rate. The only file that includes curses. It renders
 * const snapshots and turns key presses into requests for main; it never
 * calls providers. The terminal is restored on every way out.
 */
#include <curses.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontend.h"
#include "options.h"
#include "util.h"

struct tui_priv {
	bool active;		/* curses is on */
	bool sort_total;	/* 'o': by Total instead of CurAvg/s */
	double delay;
	pid_t pid;
	const char *filter;
	struct snapshot last;	/* copy of the rows for a redraw */
};

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
	tui_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int tui_open(struct frontend *fe, const struct options *opts)
{
	struct tui_priv *tp;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		snprintf(fe->msg, sizeof(fe->msg),
			 "the monitor needs a terminal: use -1 or -l for output to a file or pipe");
		return -ENOTTY;
	}
	tp = xcalloc(1, sizeof(*tp));
	tp->delay = opts->delay;
	tp->pid = opts->pid;
	tp->filter = opts->fields;
	tui_current = tp;
	util_set_fatal_hook(tui_restore);
	signal(SIGSEGV, tui_crash);
	signal(SIGBUS, tui_crash);
	signal(SIGFPE, tui_crash);
	signal(SIGABRT, tui_crash);
	if (!initscr()) {
		snprintf(fe->msg, sizeof(fe->msg), "cannot start curses on this terminal (TERM=%s)",
			 getenv("TERM") ? getenv("TERM") : "");
		free(tp);
		tui_current = NULL;
		return -ENOTTY;
	}
	tp->active = true;
	cbreak();
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	curs_set(0);
	if (has_colors() && !getenv("NO_COLOR")) {
		start_color();
		use_default_colors();
		init_pair(1, COLOR_BLACK, COLOR_CYAN);
	}
	fe->priv = tp;
	return 0;
}

/* Scales a number that does not fit its column: k, M, G, never cut. */
static void tui_num(char *buf, size_t len, double v, int width)
{
	static const char units[] = " kMGTP";
	int u = 0;

	snprintf(buf, len, "%.0f", v);
	while ((int)strlen(buf) > width && u < 5) {
		v /= 1000;
		u++;
		snprintf(buf, len, "%.*f%c", v < 10 ? 1 : 0, v, units[u]);
	}
}

static int row_by_rate(const void *a, const void *b)
{
	const struct snap_row *x = a, *y = b;

	if (x->rate != y->rate)
		return x->rate < y->rate ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int row_by_total(const void *a, const void *b)
{
	const struct snap_row *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return row_by_rate(a, b);
}

static void tui_draw(struct tui_priv *tp)
{
	const struct snapshot *snap = &tp->last;
	int rows, cols, y = 0;
	double sum = 0;
	char t[32], r[32];

	getmaxyx(stdscr, rows, cols);
	erase();
	if (rows < 5 || cols < 40) {
		mvaddnstr(0, 0, "terminal too small for kvmstat", cols);
		refresh();
		return;
	}
	attron(A_BOLD);
	if (tp->pid)
		mvprintw(y, 0, "kvm statistics - pid %d", tp->pid);
	else
		mvprintw(y, 0, "kvm statistics - summary");
	attroff(A_BOLD);
	printw("  (delay %.1fs%s%s)", tp->delay, tp->filter ? ", filter " : "",
	       tp->filter ? tp->filter : "");
	y += 2;
	if (has_colors() && !getenv("NO_COLOR"))
		attron(COLOR_PAIR(1));
	attron(A_BOLD);
	mvprintw(y, 0, "%-*s %10s %7s %9s", cols - 30 > 40 ? 40 : cols - 30,
		 "Event", "Total", "%Total", "CurAvg/s");
	attroff(A_BOLD);
	if (has_colors() && !getenv("NO_COLOR"))
		attroff(COLOR_PAIR(1));
	y++;
	for (size_t i = 0; i < snap->nrows; i++)
		if (snap->rows[i].parent < 0)
			sum += (double)snap->rows[i].total;
	for (size_t i = 0; i < snap->nrows && y < rows - 1; i++) {
		const struct snap_row *x = &snap->rows[i];
		int w = cols - 30 > 40 ? 40 : cols - 30;

		if (!x->valid) {
			mvprintw(y++, 0, "%-*.*s %10s %7s %9s", w, w, x->name,
				 "-", "-", "-");
			continue;
		}
		tui_num(t, sizeof(t), (double)x->total, 10);
		tui_num(r, sizeof(r), x->rate, 9);
		mvprintw(y++, 0, "%-*.*s %10s %7.1f %9s", w, w, x->name, t,
			 sum > 0 ? 100.0 * (double)x->total / sum : 0.0, r);
	}
	attron(A_REVERSE);
	mvaddnstr(rows - 1, 0, " q quit  r reset  o sort  other keys refresh ",
		  cols);
	attroff(A_REVERSE);
	refresh();
}

static int tui_render(struct frontend *fe, const struct snapshot *snap)
{
	struct tui_priv *tp = fe->priv;

	free(tp->last.rows);
	tp->last = *snap;
	tp->last.rows = xcalloc(snap->nrows ? snap->nrows : 1,
				sizeof(*snap->rows));
	memcpy(tp->last.rows, snap->rows, snap->nrows * sizeof(*snap->rows));
	qsort(tp->last.rows, tp->last.nrows, sizeof(*tp->last.rows),
	      tp->sort_total ? row_by_total : row_by_rate);
	tui_draw(tp);
	return 0;
}

static int tui_input_fd(struct frontend *fe)
{
	(void)fe;
	return STDIN_FILENO;
}

static enum ui_action tui_input(struct frontend *fe)
{
	struct tui_priv *tp = fe->priv;
	enum ui_action act = UI_NONE;
	int ch;

	while ((ch = getch()) != ERR) {
		switch (ch) {
		case 'q':
			return UI_QUIT;
		case 'r':
			act = UI_RESET;
			break;
		case 'o':
			tp->sort_total = !tp->sort_total;
			act = UI_REDRAW;
			break;
		case KEY_RESIZE:
			if (act == UI_NONE)
				act = UI_REDRAW;
			break;
		default:
			act = UI_REFRESH;
			break;
		}
	}
	if (act == UI_REDRAW) {
		qsort(tp->last.rows, tp->last.nrows, sizeof(*tp->last.rows),
		      tp->sort_total ? row_by_total : row_by_rate);
		tui_draw(tp);
		return UI_NONE;
	}
	return act;
}

static void tui_close(struct frontend *fe)
{
	struct tui_priv *tp = fe->priv;

	tui_restore();
	if (!tp)
		return;
	free(tp->last.rows);
	free(tp);
	tui_current = NULL;
	fe->priv = NULL;
}

const struct frontend_ops tui_frontend_ops = {
	.name = "tui",
	.open = tui_open,
	.render = tui_render,
	.input_fd = tui_input_fd,
	.input = tui_input,
	.close = tui_close,
};
