/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Front-ends: what renders snapshots (batch, log, CSV, the monitor), behind
 * one const ops table like the providers. Front-ends may print; they never
 * call providers.
 */
#ifndef KVMSTAT_FRONTEND_H
#define KVMSTAT_FRONTEND_H

#include <stdbool.h>

#include "snapshot.h"

struct options;
struct frontend;

/* What a key press asks main to do. */
enum ui_action {
	UI_NONE,	/* nothing (the front-end handled it) */
	UI_QUIT,
	UI_REFRESH,	/* sample and render now */
	UI_RESET,	/* totals to zero from now */
	UI_SET_FILTER,	/* req.filter ("" = the default) */
	UI_SET_PID,	/* req.pid (0 = every VM) */
	UI_SET_DELAY,	/* req.delay */
	UI_SET_CHILDREN, /* req.on: show child events */
	UI_SET_VMS,	/* req.on: per-VM breakdowns wanted */
	UI_CLEAR,	/* default filter, every VM */
};

/* An action with its value, filled by frontend_ops.input. */
struct ui_request {
	enum ui_action action;
	char filter[256];
	pid_t pid;
	char guest[128];	/* UI_SET_PID by guest name: the name, or "" */
	double delay;
	bool on;
};

struct frontend_ops {
	const char *name;
	/* 0, or -errno with a one-line reason in fe->msg (usage problems). */
	int (*open)(struct frontend *fe, const struct options *opts);
	/* 0; -EPIPE when the reader went away (a quiet, successful end). */
	int (*render)(struct frontend *fe, const struct snapshot *snap);
	/* SIGHUP: reopen the output file (NULL when not applicable). */
	int (*reopen)(struct frontend *fe);
	/* Interactive front-ends: fd to poll for input (else NULL op), and
	 * what the pending input asks for. */
	int (*input_fd)(struct frontend *fe);
	enum ui_action (*input)(struct frontend *fe);
	void (*close)(struct frontend *fe);
};

struct frontend {
	const struct frontend_ops *ops;
	void *priv;
	char msg[512];
	struct ui_request req;		/* the last request of input() */
	const char *providers;		/* "tracepoint debugfs", for headers */
};

extern const struct frontend_ops batch_frontend_ops;
extern const struct frontend_ops log_frontend_ops;
extern const struct frontend_ops json_frontend_ops;
extern const struct frontend_ops tui_frontend_ops;

#endif
