// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmstat: the composition root. Parse the options, build the run (the
 * front-ends they select and the providers they ask for), run it, and
 * turn the result into output and an exit status. Only this file and the
 * front-ends print or exit.
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "loop.h"
#include "options.h"
#include "options_parse.h"
#include "util.h"

#ifndef KVMSTAT_VERSION
#define KVMSTAT_VERSION "0.1"
#endif

/* A line for the user from the run. */
static void main_say(const char *msg)
{
	fprintf(stderr, "kvmstat: %s\n", msg);
}

/* The run cannot go on: the terminal back first, then why, then the
 * status (2 for a usage error, 1 otherwise). Nothing is closed: the
 * process is ending. */
static void __attribute__((noreturn)) main_fail(const char *msg, bool usage)
{
	util_run_fatal_hook();
	main_say(msg);
	exit(usage ? EXIT_USAGE : EXIT_FAILURE);
}

/* What main printed through stdio (--help, --version, -f help) must reach
 * its reader: a write error such as a full disk is the run's failure, a
 * reader that went away is not. A write that failed while printing left
 * its errno (the caller cleared errno before printing). */
static void main_finish_stdout(void)
{
	char msg[128];
	int err = 0;

	if (fflush(stdout))
		err = errno;
	else if (ferror(stdout))
		err = errno ? errno : EIO;
	if (!err || err == EPIPE)
		return;
	snprintf(msg, sizeof(msg), "cannot write the output: %s", strerror(err));
	main_fail(msg, false);
}

static int main_cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* -f help: as kvm_stat, every event the providers offer, child events
 * named by their parent, each once, sorted, one a line. */
static int main_list_fields(struct loop *l)
{
	struct snapshot snap;
	char **names;
	size_t n = 0;
	int rc = loop_list_fields(l, &snap);

	if (rc)
		return rc;
	names = xcalloc(snap.nrows + 1, sizeof(*names));
	for (size_t i = 0; i < snap.nrows; i++)
		names[n++] = xasprintf("%.*s",
				       (int)strcspn(snap.rows[i].name, "("),
				       snap.rows[i].name);
	qsort(names, n, sizeof(*names), main_cmp_names);
	errno = 0;
	for (size_t i = 0; i < n; i++) {
		if (!i || strcmp(names[i], names[i - 1]))
			printf("  %s\n", names[i]);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	snapshot_free(&snap);
	return 0;
}

int main(int argc, char **argv)
{
	static struct options opts;
	static struct loop l;
	struct errmsg err;
	int rc;

	/* jansson allocates through xmalloc too: out of memory ends the
	 * program there as everywhere (util.h) */
	json_set_alloc_funcs(xmalloc, free);
	/* a reader that goes away is an EPIPE to end quietly on, in every
	 * mode (--help | head too), not a signal that kills */
	signal(SIGPIPE, SIG_IGN);
	if (options_parse(argc, argv, &opts, &err))
		main_fail(err.text, true);
	if (opts.help) {
		errno = 0;
		options_usage(stdout);
		main_finish_stdout();
		return 0;
	}
	if (opts.version) {
		errno = 0;
		printf("kvmstat %s\n", KVMSTAT_VERSION);
		main_finish_stdout();
		return 0;
	}
	rc = loop_open(&l, &opts, main_say);
	if (!rc)
		rc = opts.fields_help ? main_list_fields(&l) : loop_run(&l);
	if (rc)
		main_fail(l.msg.text, l.usage);
	main_finish_stdout();
	loop_close(&l);
	options_free(&opts);
	return 0;
}
