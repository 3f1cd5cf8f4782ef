/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Front-ends: what renders snapshots (batch, log, CSV, JSON, the monitor,
 * the metrics exporter), behind one const ops table like the providers,
 * listed in one registry. Each says when the options select it and what
 * it needs from the run (a const view), so the loop runs every selected
 * one without knowing which is which. Front-ends may print; they never
 * call providers.
 */
#ifndef KVMSTAT_FRONTEND_H
#define KVMSTAT_FRONTEND_H

#include <stdbool.h>

#include "errmsg.h"
#include "snapshot.h"

struct options;
struct frontend;

/* What a key press asks the loop to do. */
enum ui_action {
	UI_NONE, /* nothing (the front-end handled it) */
	UI_QUIT,
	UI_REFRESH,	  /* sample and render now */
	UI_RESET,	  /* totals to zero from now */
	UI_SET_FILTER,	  /* req.filter ("" = the default) */
	UI_SET_PID,	  /* req.pid (0 = every VM) */
	UI_SET_DELAY,	  /* req.delay */
	UI_SET_CHILDREN,  /* req.on: show child events */
	UI_SET_VMS,	  /* req.on: per-VM breakdowns wanted */
	UI_CLEAR,	  /* default filter, every VM */
	UI_SET_LATENCY,	  /* req.on: time exits (the latency view) */
	UI_SET_BREAKDOWN, /* req.kinds: exits by key (the breakdown view) */
	UI_SET_VCPUTIME,  /* req.on: where vCPU time goes (its view) */
	UI_LIST_VMS,	  /* every running VM in the snapshots' directory
			  * until the next request (a prompt for a pid) */
	UI_RENDER,	  /* render this front-end now, from the last
			  * sample (an on_demand one); the pace goes on */
	UI_REPLAY_PAUSE,  /* --replay: pause, or play on when paused */
	UI_REPLAY_STEP,	  /* --replay: req.step refreshes on (or back),
			  * paused */
	UI_REPLAY_JUMP,	  /* --replay: to the time req.when, paused */
};

/* An action with its value, filled by frontend_ops.input. */
struct ui_request {
	enum ui_action action;
	char filter[256];
	pid_t pid;
	char guest[128]; /* UI_SET_PID by guest name: the name, or "" */
	double delay;
	bool on;
	int step;	/* UI_REPLAY_STEP */
	char when[64];	/* UI_REPLAY_JUMP: a time, as --from takes */
	unsigned kinds; /* UI_SET_BREAKDOWN: 1 << kind for each */
};

/* How a front-end paces the run; with several, the highest wins. */
enum frontend_pace {
	FRONTEND_EVERY,	      /* a render every interval until stopped */
	FRONTEND_ONCE,	      /* one interval, one render, then the end */
	FRONTEND_INTERACTIVE, /* renders at once, then on its input too */
};

/* What a front-end needs from the run: the loop builds the providers and
 * each snapshot from this, never from the front-end's name. */
struct frontend_view {
	enum frontend_pace pace;
	bool at_once;	    /* also gets the first sample at once, not
				 * only after one interval */
	bool owns_terminal; /* opens once the providers are up; what the
				 * run has to say waits until it closes */
	bool vms;	    /* per-VM and per-vCPU breakdowns, guest names */
	bool children;	    /* child events: the providers count them,
				 * its snapshots keep them (others do not) */
	bool counts_all;    /* the providers count every field and child
				 * event from the start; its snapshots keep
				 * what -f and its requests ask, so changing
				 * the filter or showing child events resets
				 * no count */
	bool past;	    /* totals since each VM started, as -i */
	bool whole;	    /* the whole selection, not the rows
				 * --vcpu/--per-vcpu pick */
	bool on_demand;	    /* renders when its input asks (UI_RENDER),
				 * not every refresh: each sample only calls
				 * its sampled op */
};

struct frontend_ops {
	const char *name;
	/* The view the options select this front-end with (a static const
	 * one), or NULL when they do not select it. */
	const struct frontend_view *(*select)(const struct options *opts);
	/* Optional, before any provider opens: 0 when open can succeed, or
	 * -errno with a one-line reason in fe->msg (a usage problem), so
	 * that what cannot run fails at once. */
	int (*check)(struct frontend *fe, const struct options *opts);
	/* 0, or -errno with a one-line reason in fe->msg: a usage problem,
	 * unless the op sets fe->runtime. */
	int (*open)(struct frontend *fe, const struct options *opts);
	/* 0; -EPIPE when the reader went away (a quiet, successful end);
	 * another -errno with a one-line reason in fe->msg. */
	int (*render)(struct frontend *fe, const struct snapshot *snap);
	/* SIGHUP: reopen the output file (NULL when not applicable). */
	int (*reopen)(struct frontend *fe);
	/* Interactive front-ends: fd to poll for input (else NULL op), and
	 * what the pending input asks for. */
	int (*input_fd)(struct frontend *fe);
	enum ui_action (*input)(struct frontend *fe);
	/* on_demand front-ends: a new sample was taken (what was rendered
	 * before is stale); called instead of render every refresh. */
	void (*sampled)(struct frontend *fe);
	/* Optional: the run came to its end (not a failure); writes what
	 * waited for it. 0, or as render. */
	int (*finish)(struct frontend *fe);
	void (*close)(struct frontend *fe);
};

struct frontend {
	const struct frontend_ops *ops;
	const struct frontend_view *view; /* what select() returned */
	void *priv;
	struct errmsg msg;     /* why open, render or reopen failed */
	bool runtime;	       /* open failed, but not on a bad option
					 * value (exit status 1, not 2) */
	bool usage;	       /* render failed on what the user asked
				* for (exit status 2, not 1) */
	struct ui_request req; /* the last request of input() */
};

extern const struct frontend_ops batch_frontend_ops;
extern const struct frontend_ops log_frontend_ops;
extern const struct frontend_ops json_frontend_ops;
extern const struct frontend_ops tui_frontend_ops;
extern const struct frontend_ops exporter_frontend_ops;
extern const struct frontend_ops history_frontend_ops;

/* NULL-terminated, in the order they open and render. */
extern const struct frontend_ops *const frontend_registry[];

/*
 * The front-ends the options select, in registry order: up to max of them
 * into out[], each with its ops and view set (the rest zeroed). Returns
 * how many.
 */
size_t frontend_select(const struct options *opts, struct frontend *out,
		       size_t max);
/* What n front-ends need together: the highest pace, each flag set when
 * one of them sets it. */
void frontend_needs(const struct frontend *fes, size_t n,
		    struct frontend_view *out);
/* For render ops that write a log: rc as given, and for a failure other
 * than -EPIPE "cannot write the log: REASON" in fe->msg. */
int frontend_write_result(struct frontend *fe, int rc);

#endif
