// SPDX-License-Identifier: GPL-2.0-only
/*
 * Log front-end (-l, -L FILE, with -c for CSV): one line per interval,
 * written with a single write() so nothing is lost when the run is stopped.
 * The plain format repeats its header every 20 lines; CSV writes it once
 * (with -L only to an empty file). Both write it again if the set of
 * fields changes. SIGHUP reopens the -L file for logrotate.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errmsg.h"
#include "frontend.h"
#include "options.h"
#include "ui_text.h"
#include "util.h"
#include "writer.h"

#define LOG_HEADER_EVERY 20

struct log_priv {
	int fd;		  /* 1, or the -L file */
	const char *path; /* -L FILE or NULL */
	bool csv, skip_zero;
	bool need_header;    /* CSV: the file has no header yet */
	unsigned long lines; /* data lines since the last header */
	char **names;	     /* fields of the last header */
	size_t nnames;
	struct strbuf b;
};

/* Opens the -L file for appending; tells whether it is empty. */
static int log_open_file(struct log_priv *lp, struct errmsg *msg)
{
	struct stat st;
	int fd;

	fd = open(lp->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;

		return errmsg_set(msg, -e,
				  "cannot write log file %s: %s; pick a writable path for -L",
				  lp->path, strerror(e));
	}
	if (fstat(fd, &st) == 0 && st.st_size > 0)
		lp->need_header = false;
	else
		lp->need_header = true;
	lp->fd = fd;
	return 0;
}

static int log_open(struct frontend *fe, const struct options *opts)
{
	struct log_priv *lp = xcalloc(1, sizeof(*lp));
	int rc;

	lp->fd = 1;
	lp->path = opts->log_file;
	lp->csv = opts->csv;
	lp->skip_zero = opts->skip_zero;
	lp->need_header = true;
	strbuf_init(&lp->b);
	if (lp->path) {
		rc = log_open_file(lp, &fe->msg);
		if (rc) {
			strbuf_free(&lp->b);
			free(lp);
			return rc;
		}
	}
	fe->priv = lp;
	return 0;
}

static void log_forget_names(struct log_priv *lp)
{
	for (size_t i = 0; i < lp->nnames; i++)
		free(lp->names[i]);
	free(lp->names);
	lp->names = NULL;
	lp->nnames = 0;
}

/* True when the snapshot's fields differ from the last header's. */
static bool log_fields_changed(const struct log_priv *lp,
			       const struct snapshot *snap)
{
	if (lp->nnames != snap->nrows)
		return true;
	for (size_t i = 0; i < snap->nrows; i++)
		if (strcmp(lp->names[i], snap->rows[i].name))
			return true;
	return false;
}

static void log_remember_names(struct log_priv *lp, const struct snapshot *snap)
{
	log_forget_names(lp);
	lp->names = xcalloc(snap->nrows, sizeof(*lp->names));
	for (size_t i = 0; i < snap->nrows; i++)
		lp->names[i] = xstrdup(snap->rows[i].name);
	lp->nnames = snap->nrows;
}

static int log_render(struct frontend *fe, const struct snapshot *snap)
{
	struct log_priv *lp = fe->priv;
	bool header;

	if (lp->skip_zero && ui_text_all_zero(snap))
		return 0;
	strbuf_reset(&lp->b);
	/* appending to a CSV file that has its header: take it as ours */
	if (lp->csv && !lp->need_header && !lp->nnames)
		log_remember_names(lp, snap);
	if (lp->csv)
		header = lp->need_header || log_fields_changed(lp, snap);
	else
		header = lp->lines % LOG_HEADER_EVERY == 0 ||
			 log_fields_changed(lp, snap);
	if (header) {
		if (lp->csv)
			ui_text_csv_header(&lp->b, snap);
		else
			ui_text_log_header(&lp->b, snap);
		log_remember_names(lp, snap);
		lp->need_header = false;
		lp->lines = 0;
	}
	if (lp->csv)
		ui_text_csv_line(&lp->b, snap);
	else
		ui_text_log_line(&lp->b, snap);
	lp->lines++;
	return frontend_write_result(fe, writer_all(lp->fd, lp->b.s, lp->b.len));
}

static int log_reopen(struct frontend *fe)
{
	struct log_priv *lp = fe->priv;
	int old = lp->fd, rc;

	if (!lp->path)
		return 0;
	rc = log_open_file(lp, &fe->msg);
	if (rc)
		return rc;
	close(old);
	if (!lp->csv)
		lp->lines = 0;
	return 0;
}

static void log_close(struct frontend *fe)
{
	struct log_priv *lp = fe->priv;

	if (!lp)
		return;
	if (lp->path && lp->fd >= 0)
		close(lp->fd);
	log_forget_names(lp);
	strbuf_free(&lp->b);
	free(lp);
	fe->priv = NULL;
}

/* A line every interval until stopped. */
static const struct frontend_view log_view = {
	.pace = FRONTEND_EVERY,
};

static const struct frontend_view *log_select(const struct options *opts)
{
	return opts->mode == MODE_LOG && !opts->json ? &log_view : NULL;
}

const struct frontend_ops log_frontend_ops = {
	.name = "log",
	.select = log_select,
	.open = log_open,
	.render = log_render,
	.reopen = log_reopen,
	.close = log_close,
};
