/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The monitor's own parts, shared by its files: tui.c (the front-end:
 * curses on and off, a render, the input), tui_model.c (the display model,
 * strings and numbers built from each snapshot), tui_draw.c (the screen
 * drawn from that model alone) and tui_keys.c (the key table, its
 * handlers, the prompts). Only these files include curses.
 */
#ifndef KVMSTAT_TUI_INT_H
#define KVMSTAT_TUI_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "errmsg.h"
#include "frontend.h"
#include "snapshot.h"
#include "tui_vcputime.h"

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
	PROMPT_TIME,   /* 't': a time of the replay */
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

/* A running guest a prompt offers. */
struct tui_pick {
	pid_t pid;
	char *name; /* owned, or NULL */
	char *vmm;  /* owned ("qemu"...), or NULL */
	char *uuid; /* owned, or NULL */
	char *unit; /* owned, or NULL: its systemd unit or scope */
};

struct tui_priv {
	bool active; /* curses is on */
	bool color;
	enum tui_view view;
	pid_t vm;	      /* VIEW_VCPUS: whose vCPUs */
	char *hist;	      /* VIEW_HIST: which histogram */
	char *hist_summary;   /* its percentiles over the interval */
	int sort;	      /* column sorted by */
	bool help;	      /* help screen shown */
	bool latency;	      /* 'l': the latency view over the others */
	bool brk;	      /* 'k' or Enter: the breakdown view over all */
	const char *brk_kind; /* its kind ("ioport"), NULL: every one */
	unsigned brk_cli;     /* kinds --breakdown asked for (kept on) */
	struct tui_vt vt;     /* 't': where vCPU time goes, over the others */
	bool children;	      /* 'x' */
	bool picking;	      /* events view: arrows moved a selection */
	unsigned int units;   /* units.h's flags: UNITS_ASCII ("us") where
			       * the terminal's locale is not UTF-8 */
	enum tui_prompt prompt;
	char input[256]; /* prompt text being edited */
	char hint[256];	 /* the value it replaces, shown beside */
	/* 'p', 'g': the running guests to pick from, once the loop has
	 * listed them (picks NULL until then) */
	struct tui_pick *picks;
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
	bool dead;	/* the VM watched has exited */
	char *guest;
	double delay;
	char *filter;
	char *providers;
	char *replay; /* --replay: the recording's time and place, or NULL */
	/* the sources' notes ("tracepoint: why"), shown under the header
	 * until 'n' dismisses them or the set changes */
	char **notes;
	size_t nnotes;
	unsigned notes_gen, dismissed_gen;
};

/* Notes shown at the most; the last line says how many more. */
#define TUI_NOTES_MAX 3

/* tui_model.c: the display model from a snapshot */
void tui_free_rows(struct tui_priv *tp);
void tui_free_notes(struct tui_priv *tp);
void tui_free_picks(struct tui_priv *tp);
/* The guests a pid prompt offers, once the loop has listed them. */
void tui_load_picks(struct tui_priv *tp, const struct snapshot *snap);
/* The header's facts and the sources' notes of snap. */
void tui_set_header(struct tui_priv *tp, const struct snapshot *snap);
void tui_set_notes(struct tui_priv *tp, const struct snapshot *snap);
/* The rows of each view; the Total line after sorting. */
void tui_model_events(struct tui_priv *tp, const struct snapshot *snap);
void tui_model_hist(struct tui_priv *tp, const struct snapshot *snap);
void tui_model_groups(struct tui_priv *tp, const struct snapshot *snap);
void tui_add_total(struct tui_priv *tp);
void tui_sort(struct tui_priv *tp);

/* tui_draw.c: the screen from the model */
void tui_draw(struct tui_priv *tp);
/* The columns of the view shown. */
int tui_ncols(const struct tui_priv *tp);

/* tui_keys.c: keys and prompts */
/* One key outside prompts; one while a prompt is open. */
enum ui_action tui_key(struct frontend *fe, int ch);
enum ui_action tui_prompt_key(struct tui_priv *tp, int ch,
			      struct ui_request *req);
/* The help screen, drawn from the key table. */
void tui_draw_help(int cols);

#endif
