/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one way kvmstat reports a failure. A fallible action returns 0 or
 * -errno; for a failure the user can fix it also leaves one line in a
 * struct errmsg: what is wrong and what to do ("mount debugfs: mount -t
 * debugfs none /sys/kernel/debug"). Objects embed one (provider.msg,
 * frontend.msg, loop.msg, qmp.err); free functions take a struct errmsg *
 * (NULL when the caller does not want the line). errmsg_set returns the
 * error it is given, so a failure reads
 *
 *	return errmsg_set(msg, -EINVAL, "-c/--csv needs a log mode: ...");
 *
 * A provider sets its line with provider_msg(), which also says whether
 * it is a notice to show once rather than a failure. Only main.c and the
 * front-ends print the line. A line that does not fit ends in "...".
 * Running out of memory is not an error anyone returns: allocation never
 * fails (util.h).
 */
#ifndef KVMSTAT_ERRMSG_H
#define KVMSTAT_ERRMSG_H

#include <stdarg.h>
#include <stdbool.h>

/*
 * Fits the longest line in use with room to spare: the loop's "no
 * statistics source could be opened (...)" quotes every provider that
 * failed, and four of the longest provider lines (under 200 bytes with
 * the provider's name, the tracepoint's file-limit advice; a line that
 * quotes a path grows with it) fit in it.
 */
#define ERRMSG_MAX 1024

struct errmsg {
	char text[ERRMSG_MAX]; /* one line, "" when nothing was said */
};

/* Replaces m's line with the formatted one and returns err. m may be
 * NULL: the line is dropped, err still returned. */
int errmsg_set(struct errmsg *m, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int errmsg_vset(struct errmsg *m, int err, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* Appends to m's line (to compose one from parts); m may be NULL. */
void errmsg_add(struct errmsg *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void errmsg_vadd(struct errmsg *m, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
void errmsg_clear(struct errmsg *m);
/* Whether m holds a line. */
bool errmsg_isset(const struct errmsg *m);

#endif
