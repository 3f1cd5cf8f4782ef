/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The OpenMetrics fixture: stats built by hand that exercise every kind of
 * series the exporter writes. test_openmetrics.c checks their rendering
 * against tests/data/openmetrics/; om_fixture_write.c (make
 * openmetrics-fixtures) writes the same rendering elsewhere for review.
 */
#ifndef KVMSTAT_TESTS_OM_FIXTURE_H
#define KVMSTAT_TESTS_OM_FIXTURE_H

#include <stdbool.h>

#include "filter.h"
#include "openmetrics.h"
#include "snapshot.h"
#include "stats.h"
#include "strbuf.h"

/* Initialises s with the fixture's two refreshes; the caller
 * stats_free()s it. */
void om_fixture_build(struct stats *s);
/* The snapshot the exporter renders of s: its view through filter (NULL:
 * every field), with the fixture's guest names (one needs escaping). The
 * caller snapshot_free()s it. */
void om_fixture_snapshot(const struct stats *s, const struct field_filter *f,
			 struct snapshot *snap);
/* The whole snapshot the exporter renders, every field and child, in fmt,
 * at the default level or with per_vcpu; initialises b, which the caller
 * strbuf_free()s. */
void om_fixture_render(struct strbuf *b, enum openmetrics_format fmt,
		       bool per_vcpu);

#endif
