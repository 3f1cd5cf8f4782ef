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
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "options.h"
#include "tui_breakdown.h"
#include "tui_int.h"
#include "tui_lat.h"
#include "units.h"
#include "util.h"

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
	tp->sort = 3; /* CurAvg/s, as kvm_stat */
	tp->brk_cli = opts->breakdown;
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
	tp->units = units_locale_flags();
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

/* The latency and breakdown views' title: the scope, and in a replay
 * the recording's time and place, as the summary's header says them. */
static void tui_view_title(const struct tui_priv *tp, char *title, size_t n)
{
	if (tp->pid)
		snprintf(title, n, "pid %d", tp->pid);
	else
		snprintf(title, n, "summary");
	if (tp->replay)
		snprintf(title + strlen(title), n - strlen(title), "   %s",
			 tp->replay);
}

static int tui_render(struct frontend *fe, const struct snapshot *snap)
{
	struct tui_priv *tp = fe->priv;

	tui_set_header(tp, snap);
	tui_set_notes(tp, snap);
	tui_load_picks(tp, snap);
	if (tp->brk && !tp->help) {
		char title[160];

		tui_view_title(tp, title, sizeof(title));
		tui_brk_draw(snap, title, tp->brk_kind, tp->units);
		return 0;
	}
	if (tp->vt.on) {
		tui_vt_model(&tp->vt, snap);
		if (!tp->help) {
			tui_draw(tp);
			return 0;
		}
	}
	if (tp->latency && !tp->help) {
		char title[160];

		tui_view_title(tp, title, sizeof(title));
		tui_lat_draw(snap, title, tp->units);
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
	tui_vt_free(&tp->vt);
	free(tp->hist);
	free(tp->hist_summary);
	free(tp->guest);
	free(tp->pid_name);
	free(tp->filter);
	free(tp->providers);
	free(tp->replay);
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
