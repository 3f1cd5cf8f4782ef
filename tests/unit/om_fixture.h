/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The OpenMetrics fixture: stats built by hand that exercise every kind of
 * series the exporter writes. test_openmetrics.c checks their rendering
 * against tests/data/openmetrics/; om_fixture_write.c (make
 * openmetrics-fixtures) writes the same rendering elsewhere for review.
 */
#ifndef KVMSTAT_TESTS_OM_FIXTURE_H
#define KVMSTAT_TESTS_OM_FIXTURE_H

#include "frontend.h"
#include "openmetrics.h"
#include "stats.h"
#include "strbuf.h"

#define OM_FIXTURE_NNAMES 2

/* Guest names of the fixture's VMs: one needs escaping. */
extern const struct ui_name om_fixture_names[OM_FIXTURE_NNAMES];

/* Initialises s with the fixture's two refreshes; the caller
 * stats_free()s it. */
void om_fixture_build(struct stats *s);
/* The whole snapshot the exporter renders, every field and child, in fmt;
 * initialises b, which the caller strbuf_free()s. */
void om_fixture_render(struct strbuf *b, enum openmetrics_format fmt);

#endif
