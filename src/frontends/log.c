// SPDX-License-Identifier: GPL-2.0-only
/*
 * Log front-end (-l, -L FILE, with -c for CSV): one line per interval,
 * written with a single write() so nothing is lost when the run is stopped.
 *
 * The columns are fixed when the run starts, as kvm_stat's: the fields of
 * the first sample, whose header is written at once (with -z too). A field
 * that is gone later (its VM exited) logs 0; one that appears later (a new
 * VM's, a new vCPU's with --per-vcpu) is left out, and a new vCPU is said
 * once on stderr. The plain format repeats its header every 20 lines; CSV
 * writes it once, and with -L only to an empty file: appending to a CSV
 * file whose header is not this run's is refused.
 *
 * A full disk (or quota) never leaves part of a record in a regular file:
 * a record that does not fit is cut off again with ftruncate(), the run
 * goes on (said once on stderr), and its deltas are kept. The deltas of
 * the intervals that could not be written add up, column by column, and
 * the first record that fits again carries them all: the sums of the
 * columns stay exact, at the cost of the missed intervals' own lines.
 *
 * SIGHUP reopens the -L file for logrotate.
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
#include "hashtab.h"
#include "logfile.h"
#include "options.h"
#include "ui_text.h"
#include "util.h"
#include "vcputime_render.h"
#include "writer.h"

#define LOG_HEADER_EVERY 20
/* The longest CSV header an existing file is compared by. */
#define LOG_HEADER_MAX (256 * 1024)

struct log_priv {
	int fd;		  /* 1, or the -L file */
	const char *path; /* -L FILE or NULL */
	bool csv, skip_zero;
	bool regular;	     /* fd is a regular file: a record that does not fit
			 * can be cut off again */
	bool append;	     /* fd has O_APPEND */
	bool need_header;    /* the header is still to be written */
	char *file_header;   /* CSV -L: the first line of the file we append
			    * to, without its newline; NULL when empty */
	bool started;	     /* the columns are fixed */
	unsigned long lines; /* data lines since the last header */
	char **names;	     /* the columns, fixed at the start */
	size_t nnames;
	struct hashtab index; /* names by hash */
	int64_t *acc;	      /* per column: deltas not written yet */
	int *col_of;	      /* per field id: its column + 1, 0 unknown
			       * yet, -1 none (per-vCPU rows go by name) */
	size_t ncol_of;
	bool said_full, said_vcpus;
	struct strbuf b;
};

/* The first line of the file fd (opened for reading), without its
 * newline, or NULL when the file is empty. Caller frees. */
static char *log_first_line(int fd)
{
	char *buf = xmalloc(LOG_HEADER_MAX + 1);
	size_t len = 0;
	ssize_t n;

	while (len < LOG_HEADER_MAX) {
		n = pread(fd, buf + len, LOG_HEADER_MAX - len, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (memchr(buf + len, '\n', (size_t)n)) {
			len += (size_t)n;
			break;
		}
		len += (size_t)n;
	}
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (!len) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Opens the -L file for appending: whether it needs a header, and for CSV
 * the header it already has. */
static int log_open_file(struct log_priv *lp, struct errmsg *msg)
{
	struct stat st;
	int fd;

	fd = logfile_open(lp->path, lp->csv, msg);
	if (fd < 0)
		return fd;
	free(lp->file_header);
	lp->file_header = NULL;
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		lp->need_header = false;
		if (lp->csv) {
			lp->file_header = log_first_line(fd);
			if (!lp->file_header)
				lp->file_header = xstrdup("");
		}
	} else {
		lp->need_header = true;
	}
	lp->fd = fd;
	lp->regular = true;
	lp->append = true;
	return 0;
}

/* Where the output goes when it is stdout: a regular file (kvmstat -l
 * >file) gets the same whole records as -L. */
static void log_probe_stdout(struct log_priv *lp)
{
	struct stat st;
	int fl = fcntl(1, F_GETFL);

	lp->regular = fstat(1, &st) == 0 && S_ISREG(st.st_mode);
	lp->append = fl >= 0 && (fl & O_APPEND);
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
	hashtab_init(&lp->index);
	strbuf_init(&lp->b);
	if (lp->path) {
		rc = log_open_file(lp, &fe->msg);
		if (rc) {
			hashtab_free(&lp->index);
			strbuf_free(&lp->b);
			free(lp);
			return rc;
		}
	} else {
		log_probe_stdout(lp);
	}
	fe->priv = lp;
	return 0;
}

/* The column of name, or -1. */
static long log_column(const struct log_priv *lp, const char *name)
{
	struct hashtab_iter it = hashtab_iter(&lp->index,
					      hashtab_hash_str(name));
	long i;

	while ((i = hashtab_next(&lp->index, &it)) >= 0)
		if (!strcmp(lp->names[i], name))
			return i;
	return -1;
}

/* The column of a snapshot row, or -1: by its field id, looked up by
 * name once (a field's name never changes); per-vCPU rows by name. */
static long log_column_of(struct log_priv *lp, const struct snap_row *r)
{
	size_t f = (size_t)r->field;

	if (r->per_vcpu || r->field < 0)
		return log_column(lp, r->name);
	lp->col_of = xgrow_index(lp->col_of, &lp->ncol_of, f,
				 sizeof(*lp->col_of), 0);
	if (!lp->col_of[f]) {
		long c = log_column(lp, r->name);

		lp->col_of[f] = c < 0 ? -1 : (int)c + 1;
	}
	return lp->col_of[f] < 0 ? -1 : lp->col_of[f] - 1;
}

/* The run's columns: the rows of its first snapshot. */
static void log_fix_columns(struct log_priv *lp, const struct snapshot *snap)
{
	lp->names = xcalloc(snap->nrows ? snap->nrows : 1, sizeof(*lp->names));
	lp->acc = xcalloc(snap->nrows ? snap->nrows : 1, sizeof(*lp->acc));
	for (size_t i = 0; i < snap->nrows; i++) {
		const char *name = snap->rows[i].name;

		if (log_column(lp, name) >= 0)
			continue;
		hashtab_add(&lp->index, hashtab_hash_str(name), lp->nnames);
		lp->names[lp->nnames++] = xstrdup(name);
	}
	lp->started = true;
}

/* The header this run writes, into b. */
static void log_header(struct log_priv *lp, struct strbuf *b)
{
	if (lp->csv)
		ui_text_csv_header(b, lp->names, lp->nnames);
	else
		ui_text_log_header(b, lp->names, lp->nnames);
}

/* CSV appended to a file: its header must be this run's, or the values
 * would land under other names. */
static int log_check_file_header(struct frontend *fe, struct log_priv *lp)
{
	struct strbuf h, had;
	int rc = 0;

	if (!lp->csv || !lp->file_header)
		return 0;
	strbuf_init(&h);
	strbuf_init(&had);
	log_header(lp, &h);
	h.s[h.len - 1] = '\0'; /* the newline */
	/* the file's line, its control characters shown as '?': the
	 * message stays one line whatever the file holds */
	strbuf_add(&had, lp->file_header);
	for (char *p = had.s; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			*p = '?';
	if (strcmp(h.s, lp->file_header))
		rc = errmsg_set(&fe->msg, -EINVAL,
				"log file %s has the CSV header '%s' but this run writes '%s': rotate the file (move it away) or log the same fields (-f)",
				lp->path, had.s, h.s);
	strbuf_free(&had);
	strbuf_free(&h);
	return rc;
}

/* Folds a snapshot's deltas into the columns; says once that per-vCPU
 * rows which appeared after the start are left out. */
static void log_accumulate(struct log_priv *lp, const struct snapshot *snap)
{
	for (size_t i = 0; i < snap->nrows; i++) {
		const struct snap_row *r = &snap->rows[i];
		long c = log_column_of(lp, r);

		if (c >= 0) {
			if (r->valid)
				lp->acc[c] += r->delta;
		} else if (r->per_vcpu && !lp->said_vcpus) {
			struct strbuf name;

			strbuf_init(&name);
			ui_text_escape_name(&name, r->name);
			fprintf(stderr,
				"kvmstat: %s: per-vCPU columns that appeared after the start (a new vCPU, a new event of one) are left out of the log, whose columns are fixed at the start; restart kvmstat to log them\n",
				name.s);
			strbuf_free(&name);
			lp->said_vcpus = true;
		}
	}
}

static bool log_acc_zero(const struct log_priv *lp)
{
	for (size_t i = 0; i < lp->nnames; i++)
		if (lp->acc[i])
			return false;
	return true;
}

/*
 * Writes lp->b as one record. In a regular file, a record cut short by a
 * full disk or quota is cut off again (the file ends at the record's start)
 * and -ENOSPC (or -EDQUOT) returned: nothing partial stays behind. Other
 * errors as writer_all's.
 */
static int log_write_record(struct log_priv *lp)
{
	off_t start = -1;
	int rc;

	if (lp->regular)
		start = lseek(lp->fd, 0, lp->append ? SEEK_END : SEEK_CUR);
	rc = writer_all(lp->fd, lp->b.s, lp->b.len);
	if (!rc || (rc != -ENOSPC && rc != -EDQUOT) || start < 0)
		return rc;
	if (ftruncate(lp->fd, start) < 0 ||
	    (!lp->append && lseek(lp->fd, start, SEEK_SET) < 0))
		return -errno;
	return rc;
}

/* A record did not fit: said once, and the run goes on. */
static void log_say_full(struct log_priv *lp, int rc)
{
	if (lp->said_full)
		return;
	fprintf(stderr,
		"kvmstat: %s: %s; logging goes on, and the first record that fits again carries the deltas of the intervals left out\n",
		lp->path ? lp->path : "the log", strerror(-rc));
	lp->said_full = true;
}

static int log_render(struct frontend *fe, const struct snapshot *snap)
{
	struct log_priv *lp = fe->priv;
	bool header, line;
	int rc;

	if (!lp->started) {
		/* the first sample (interval 0) fixes the columns, and its
		 * render writes the header at once, -z or not */
		log_fix_columns(lp, snap);
		rc = log_check_file_header(fe, lp);
		if (rc) {
			fe->usage = true;
			return rc;
		}
	}
	if (snap->interval_ns)
		log_accumulate(lp, snap);
	line = snap->interval_ns && !(lp->skip_zero && log_acc_zero(lp));
	if (line && !lp->csv && lp->lines >= LOG_HEADER_EVERY)
		lp->need_header = true;
	header = lp->need_header;
	if (!header && !line)
		return 0;
	strbuf_reset(&lp->b);
	if (header)
		log_header(lp, &lp->b);
	if (line && lp->csv)
		ui_text_csv_line(&lp->b, &snap->wall, lp->acc, lp->nnames);
	else if (line)
		ui_text_log_line(&lp->b, &snap->wall, lp->acc, lp->nnames);
	if (line && snap->vcputime)
		vcputime_render_text(&lp->b, snap->vcputime, snap->header.pid);
	rc = log_write_record(lp);
	if (rc == -ENOSPC || rc == -EDQUOT) {
		/* the deltas stay in acc for the next record */
		log_say_full(lp, rc);
		return 0;
	}
	if (rc)
		return frontend_write_result(fe, rc);
	if (header) {
		lp->need_header = false;
		lp->lines = 0;
	}
	if (line) {
		memset(lp->acc, 0, lp->nnames * sizeof(*lp->acc));
		lp->lines++;
	}
	return 0;
}

static int log_reopen(struct frontend *fe)
{
	struct log_priv *lp = fe->priv;
	int old = lp->fd, rc;
	bool need = lp->need_header;
	char *had = lp->file_header;

	if (!lp->path)
		return 0;
	lp->file_header = NULL;
	rc = log_open_file(lp, &fe->msg);
	if (!rc && lp->started)
		rc = log_check_file_header(fe, lp);
	if (rc) {
		if (lp->fd != old)
			close(lp->fd);
		lp->fd = old;
		lp->need_header = need;
		free(lp->file_header);
		lp->file_header = had;
		return rc;
	}
	free(had);
	close(old);
	if (!lp->csv) {
		/* a new file starts with the header, as at the start */
		lp->need_header = true;
		lp->lines = 0;
	}
	return 0;
}

static void log_close(struct frontend *fe)
{
	struct log_priv *lp = fe->priv;

	if (!lp)
		return;
	if (lp->path && lp->fd >= 0)
		close(lp->fd);
	for (size_t i = 0; i < lp->nnames; i++)
		free(lp->names[i]);
	free(lp->names);
	free(lp->acc);
	free(lp->col_of);
	free(lp->file_header);
	hashtab_free(&lp->index);
	strbuf_free(&lp->b);
	free(lp);
	fe->priv = NULL;
}

/* A line every interval until stopped; the first sample at once, for the
 * columns and the header. */
static const struct frontend_view log_view = {
	.pace = FRONTEND_EVERY,
	.at_once = true,
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
