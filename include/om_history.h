/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Metrics over time (--replay FILE --export openmetrics): the OpenMetrics
 * expositions of many refreshes (openmetrics.h writes each), gathered
 * into one OpenMetrics text whose samples carry their refresh's
 * timestamp, as promtool tsdb create-blocks-from openmetrics imports it.
 * OpenMetrics lets a family appear once: each family's metadata is
 * written once, followed by its samples of every refresh in time order.
 */
#ifndef KVMSTAT_OM_HISTORY_H
#define KVMSTAT_OM_HISTORY_H

#include <stddef.h>
#include <time.h>

#include "hashtab.h"
#include "strbuf.h"

struct om_history_family {
	char *name;	     /* owned */
	struct strbuf meta;  /* its # lines, from its first exposition */
	struct strbuf lines; /* its samples with their timestamps */
};

struct om_history {
	struct om_history_family *v; /* in order of first appearance */
	size_t n, cap;
	struct hashtab index; /* by name */
	long long last_ms;    /* the last exposition's stamp; 0: none */
};

void om_history_init(struct om_history *h);
void om_history_free(struct om_history *h);
/* Adds the samples of one exposition (OpenMetrics text, "# EOF" and
 * all), stamped with ts in ms: 1 ms after the last exposition's where ts
 * is not after it (two refreshes in one ms, a clock stepped back), as a
 * TSDB drops a series' sample whose time is not after its last. */
void om_history_add(struct om_history *h, const char *text, size_t len,
		    const struct timespec *ts);
/* Appends every family gathered, then "# EOF". */
void om_history_write(const struct om_history *h, struct strbuf *out);

#endif
