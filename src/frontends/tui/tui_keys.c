// SPDX-License-Identifier: GPL-2.0-only
/*
 * The monitor's keys: one const table of (keys, label, help, handler) that
 * both dispatches and draws the help screen, the handlers, and the prompts
 * (filter, pid or guest, delay) with their checks. What needs the
 * providers goes to the loop as a struct ui_request.
 */
#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakdown_render.h"
#include "errmsg.h"
#include "filter.h"
#include "options.h"
#include "tui_int.h"
#include "util.h"

/* The pick of pid, or NULL. */
static const struct tui_pick *tui_pick_find(const struct tui_priv *tp, pid_t pid)
{
	for (size_t i = 0; i < tp->npicks; i++)
		if (tp->picks[i].pid == pid)
			return &tp->picks[i];
	return NULL;
}

/* The one running guest called name into *pid: 0, or -errno with the
 * line in tp->error. Before the guests are listed, none is known. */
static int tui_pick_guest(struct tui_priv *tp, const char *name, pid_t *pid)
{
	size_t n = 0;

	for (size_t i = 0; i < tp->npicks; i++)
		if (tp->picks[i].name && !strcmp(tp->picks[i].name, name) &&
		    !n++)
			*pid = tp->picks[i].pid;
	if (n == 1)
		return 0;
	if (!n)
		return errmsg_set(&tp->error, -ENOENT,
				  "no guest named \"%s\" among the running guests listed",
				  name);
	return errmsg_set(&tp->error, -ENOTUNIQ,
			  "guest name \"%s\" matches several VMs: type a pid",
			  name);
}

/* Checks a finished prompt; fills the request or an error to show. */
static enum ui_action tui_accept(struct tui_priv *tp, struct ui_request *req)
{
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
			/* a guest name, for 'p' as for 'g' */
			if (tui_pick_guest(tp, tp->input, &req->pid))
				return UI_NONE;
			snprintf(req->guest, sizeof(req->guest), "%s",
				 tp->input);
			return UI_SET_PID;
		}
		if (tp->picks && !tui_pick_find(tp, (pid_t)pid)) {
			errmsg_set(&tp->error, -ENOENT,
				   "pid %ld is not a KVM VM (not among the running guests listed)",
				   pid);
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
	case PROMPT_TIME:
		snprintf(req->when, sizeof(req->when), "%s", tp->input);
		return tp->input[0] ? UI_REPLAY_JUMP : UI_NONE;
	case PROMPT_NONE:
		break;
	}
	return UI_NONE;
}

/* A key while a prompt is open: edit, cancel, or accept. */
enum ui_action tui_prompt_key(struct tui_priv *tp, int ch,
			      struct ui_request *req)
{
	size_t len = strlen(tp->input);
	enum ui_action act;

	switch (ch) {
	case KEY_ESC:
		/* the loop lists guests for a pid prompt until told */
		act = tp->prompt == PROMPT_PID || tp->prompt == PROMPT_GUEST ?
			      UI_REFRESH :
			      UI_NONE;
		tp->prompt = PROMPT_NONE;
		errmsg_clear(&tp->error);
		tui_free_picks(tp);
		tui_draw(tp);
		return act;
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
	tp->prompt = p;
	errmsg_clear(&tp->error);
	tp->input[0] = '\0';
	tp->hint[0] = '\0';
	if (p == PROMPT_FILTER)
		snprintf(tp->hint, sizeof(tp->hint), "%s",
			 tp->filter ? tp->filter : "default");
	else if (p == PROMPT_DELAY)
		snprintf(tp->hint, sizeof(tp->hint), "%.1f", tp->delay);
	else if (p == PROMPT_TIME)
		snprintf(tp->hint, sizeof(tp->hint), "%s", tp->replay);
	else if (tp->pid && tp->guest)
		snprintf(tp->hint, sizeof(tp->hint), "%s", tp->guest);
	else if (tp->pid)
		snprintf(tp->hint, sizeof(tp->hint), "%d", tp->pid);
	else
		snprintf(tp->hint, sizeof(tp->hint), "all");
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
	/* the guests to pick from: the loop lists them */
	return k->arg == PROMPT_PID || k->arg == PROMPT_GUEST ? UI_LIST_VMS :
								UI_NONE;
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

/* The breakdown view of kind (NULL: every kind), its kinds counted. */
static enum ui_action tui_brk_open(struct frontend *fe, const char *kind,
				   unsigned bit)
{
	struct tui_priv *tp = fe->priv;

	tp->brk = true;
	tp->brk_kind = kind;
	fe->req.kinds = tp->brk_cli | bit;
	return UI_SET_BREAKDOWN;
}

/* Enter: a VM's vCPUs, an event's breakdown by key, or a histogram's
 * buckets; else a refresh. */
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
	if (tp->view == VIEW_EVENTS && tp->nrows && tp->rows[tp->sel].field) {
		unsigned bit;
		const char *kind =
			breakdown_render_kind_of(tp->rows[tp->sel].field, &bit);

		if (kind)
			return tui_brk_open(fe, kind, bit);
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

/* 'k': the breakdown view of every kind, or back from it (the kinds
 * --breakdown did not ask for stop counting). */
static enum ui_action tui_key_breakdown(struct frontend *fe,
					const struct tui_key *k, int ch)
{
	struct tui_priv *tp = fe->priv;

	(void)k;
	(void)ch;
	if (!tp->brk)
		return tui_brk_open(fe, NULL, BREAKDOWN_RENDER_ALL_KINDS);
	tp->brk = false;
	fe->req.kinds = tp->brk_cli;
	return UI_SET_BREAKDOWN;
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

/* 't': the view of where vCPU time goes (its collector on), or back. */
static enum ui_action tui_key_vcputime(struct frontend *fe,
				       const struct tui_key *k, int ch)
{
	struct tui_priv *tp = fe->priv;

	(void)k;
	(void)ch;
	tp->vt.on = !tp->vt.on;
	tp->vt.vm = 0;
	tp->vt.sel = tp->vt.top = 0;
	tp->vt.sort = 6; /* waiting */
	fe->req.on = tp->vt.on;
	tui_draw(tp);
	return UI_SET_VCPUTIME;
}

/* Escape: from a histogram to the summary, from vCPUs to the VMs. */
static enum ui_action tui_key_back(struct frontend *fe, const struct tui_key *k,
				   int ch)
{
	struct tui_priv *tp = fe->priv;

	(void)k;
	(void)ch;
	if (tp->brk)
		return tui_key_breakdown(fe, k, ch);
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

/* --replay's time keys: Space pauses or plays on, [ and ] step back and
 * on, j asks for a time to jump to; without a replay, a refresh. */
static enum ui_action tui_key_time(struct frontend *fe, const struct tui_key *k,
				   int ch)
{
	struct tui_priv *tp = fe->priv;

	(void)k;
	if (!tp->replay)
		return UI_REFRESH;
	if (ch == 'j') {
		tui_open_prompt(tp, PROMPT_TIME);
		return UI_NONE;
	}
	if (ch == ' ')
		return UI_REPLAY_PAUSE;
	fe->req.step = ch == '[' ? -1 : ch == ']' ? 1 : ch == '{' ? -10 : 10;
	return UI_REPLAY_STEP;
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
	{ { 'k' },
	  "k",
	  "exits by key (port, address, MSR, hypercall); BPF, on while shown",
	  tui_key_breakdown,
	  0 },
	{ { 'l' },
	  "l",
	  "exit latency per reason, in the kernel and VMM; BPF, on while shown",
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
	{ { 't' },
	  "t",
	  "where vCPU time goes: guest, kernel, vmm, halted, waiting (per VM)",
	  tui_key_vcputime,
	  0 },
	{ { 'x' },
	  "x",
	  "toggle child events, e.g. kvm_exit(HLT); no count restarts",
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
	  "on a VM: vCPUs; histogram: buckets; kvm_pio...: exits by key",
	  tui_key_enter,
	  0 },
	{ { ' ', '[', ']', '{', '}', 'j' },
	  "Space [ ] { } j",
	  "replay: pause/play; step back/on by 1 or 10; jump to a time",
	  tui_key_time,
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

void tui_draw_help(int cols)
{
	char line[256];

	erase();
	for (size_t i = 0; tui_help_line(i, line, sizeof(line)); i++)
		mvaddnstr((int)i, 0, line, cols);
	refresh();
}

/* One key outside prompts: any key leaves the help screen; a key of the
 * table runs its entry, any other refreshes. */
enum ui_action tui_key(struct frontend *fe, int ch)
{
	struct tui_priv *tp = fe->priv;
	const struct tui_key *k;

	if (tp->help) {
		tp->help = false;
		tui_draw(tp);
		return UI_NONE;
	}
	if (tp->vt.on && ch != 't') {
		enum ui_action act;

		if (tui_vt_key(&tp->vt, fe, ch, &act))
			return act;
	}
	k = tui_key_find(ch);
	return k ? k->run(fe, k, ch) : UI_REFRESH;
}
