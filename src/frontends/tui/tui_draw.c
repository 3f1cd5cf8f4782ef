// SPDX-License-Identifier: GPL-2.0-only
/*
 * The monitor's screen, drawn from its display model alone: the header,
 * the sources' notes, the columns, the rows, the pick list of a prompt,
 * the footer with the prompt or the most used keys.
 */
#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "tui_int.h"
#include "util.h"

static const char *const event_cols[] = { "Event", "Total", "%Total",
					  "CurAvg/s", NULL };
static const char *const vm_cols[] = { "PID",	   "Guest",	     "Total",
				       "CurAvg/s", "Busiest events", NULL };
static const char *const vcpu_cols[] = { "vCPU",	   "TID",
					 "Total",	   "CurAvg/s",
					 "Busiest events", NULL };
static const char *const hist_cols[] = { "Bucket", "Total", "%Total",
					 "Interval", NULL };

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

int tui_ncols(const struct tui_priv *tp)
{
	const char *const *c = tui_cols(tp);
	int n = 0;

	while (c[n])
		n++;
	return n;
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
	/* kvm_stat's two columns, then who each VM is */
	mvaddnstr(y++, 0,
		  "     Pid  Guest name                VMM               Unit / UUID",
		  cols);
	attroff(A_UNDERLINE);
	for (size_t i = 0; i < tp->npicks && y < rows - 1; i++) {
		const struct tui_pick *p = &tp->picks[i];
		char line[512];

		snprintf(line, sizeof(line), "%8d  %-24s  %-16s  %s%s%s",
			 (int)p->pid, p->name ? p->name : "-",
			 p->vmm ? p->vmm : "-", p->unit ? p->unit : "",
			 p->unit && p->uuid ? "  " : "",
			 p->uuid ? p->uuid : (p->unit ? "" : "-"));
		mvaddnstr(y++, 0, line, cols);
	}
	if (!tp->npicks && y < rows - 1)
		mvaddnstr(y, 0, "(no running guest found)", cols);
	tui_draw_footer(tp, rows, cols);
}

/* The help screen, drawn from the key table (below, with the keys). */
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

void tui_draw(struct tui_priv *tp)
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
	if (tp->vt.on) {
		tui_vt_draw(&tp->vt, tp->replay, tp->providers, tp->delay);
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
	snprintf(hdr, sizeof(hdr), "   %s%s[%s]  delay %.1fs%s%s%s",
		 tp->replay ? tp->replay : "", tp->replay ? "  " : "",
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
			[PROMPT_TIME] = "Jump to the time",
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
