// SPDX-License-Identifier: GPL-2.0-only
/*
 * JSON front-end (--json): with -1 one indented document, with -l or -L
 * one JSON object per interval per line (JSON Lines) to stdout or
 * appended to the -L file, each line written with a single write() so a
 * reader never sees half an object. -z skips intervals whose deltas are
 * all zero. SIGHUP reopens the -L file for logrotate.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errmsg.h"
#include "frontend.h"
#include "json_out.h"
#include "logfile.h"
#include "options.h"
#include "ui_text.h"
#include "util.h"
#include "writer.h"

struct json_priv {
	int fd;		  /* 1, or the -L file */
	const char *path; /* -L FILE or NULL */
	bool lines;	  /* JSON Lines (-l/-L), else one document */
	bool skip_zero;	  /* -z */
	bool per_vcpu;	  /* --per-vcpu: each vCPU too */
	struct strbuf b;  /* the text, reused from sample to sample */
};

/* Opens the -L file for appending (see logfile.h: no links, no FIFOs). */
static int json_open_file(struct json_priv *jp, struct errmsg *msg)
{
	int fd = logfile_open(jp->path, false, msg);

	if (fd < 0)
		return fd;
	jp->fd = fd;
	return 0;
}

static int json_open(struct frontend *fe, const struct options *opts)
{
	struct json_priv *jp = xcalloc(1, sizeof(*jp));
	int rc;

	jp->fd = 1;
	jp->lines = opts->mode != MODE_BATCH;
	jp->path = jp->lines ? opts->log_file : NULL;
	jp->skip_zero = jp->lines && opts->skip_zero;
	jp->per_vcpu = opts->per_vcpu;
	strbuf_init(&jp->b);
	if (jp->path) {
		rc = json_open_file(jp, &fe->msg);
		if (rc) {
			strbuf_free(&jp->b);
			free(jp);
			return rc;
		}
	}
	fe->priv = jp;
	return 0;
}

static int json_render(struct frontend *fe, const struct snapshot *snap)
{
	struct json_priv *jp = fe->priv;

	if (jp->skip_zero && ui_text_all_zero(snap))
		return 0;
	strbuf_reset(&jp->b);
	json_out_render(&jp->b, snap, snap->header.sources, !jp->lines,
			jp->per_vcpu);
	return frontend_write_result(fe, writer_all(jp->fd, jp->b.s, jp->b.len));
}

static int json_reopen(struct frontend *fe)
{
	struct json_priv *jp = fe->priv;
	int old = jp->fd, rc;

	if (!jp->path)
		return 0;
	rc = json_open_file(jp, &fe->msg);
	if (rc)
		return rc;
	close(old);
	return 0;
}

static void json_close(struct frontend *fe)
{
	struct json_priv *jp = fe->priv;

	if (!jp)
		return;
	if (jp->path && jp->fd >= 0)
		close(jp->fd);
	strbuf_free(&jp->b);
	free(jp);
	fe->priv = NULL;
}

/* Both carry the per-VM breakdowns (per vCPU with --per-vcpu). */
static const struct frontend_view json_document_view = {
	.pace = FRONTEND_ONCE,
	.vms = true,
};

static const struct frontend_view json_lines_view = {
	.pace = FRONTEND_EVERY,
	.vms = true,
};

/* --json: a document with -1, JSON Lines with -l/-L. */
static const struct frontend_view *json_select(const struct options *opts)
{
	if (!opts->json)
		return NULL;
	return opts->mode == MODE_BATCH ? &json_document_view :
					  &json_lines_view;
}

const struct frontend_ops json_frontend_ops = {
	.name = "json",
	.select = json_select,
	.open = json_open,
	.render = json_render,
	.reopen = json_reopen,
	.close = json_close,
};
