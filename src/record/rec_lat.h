/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Exit latency (--latency) in a recording: the histograms each render
 * read (hist.h's hist_set: per reason, scope and thread) and its header
 * facts (snapshot.h's snap_latency), written as README's lat_read and
 * lat_value say, only the histograms that changed since the read recorded
 * before; and read back into the same set and facts for a refresh of the
 * replay. The recorder and the replay own one each.
 */
#ifndef KVMSTAT_REC_LAT_H
#define KVMSTAT_REC_LAT_H

#include <stdbool.h>
#include <stddef.h>

#include "errmsg.h"
#include "hist.h"
#include "recdb.h"
#include "snapshot.h"

struct rec_lat;

struct rec_lat *rec_lat_new(void);
void rec_lat_free(struct rec_lat *l);
/* A new session: the next write writes every histogram again. */
void rec_lat_restart(struct rec_lat *l);
/* The histograms hs and facts info (NULL: latency off) at refresh, their
 * fields by the db ids field_id gives (by stats field id). 0, or -errno
 * with a line. */
int rec_lat_write(struct rec_lat *l, struct recdb *db, long long refresh,
		  const long long *field_id, const struct hist_set *hs,
		  const struct snap_latency *info, struct errmsg *msg);
/* Whether writing info (NULL: off) would write nothing: off, and said. */
bool rec_lat_idle(const struct rec_lat *l, const struct snap_latency *info);
/* The SQL that carries the state before refresh keep (of the session
 * starting at first) into keep and drops the rows before it; caller
 * frees. */
char *rec_lat_drop_sql(long long keep, long long first);

struct rp_lat;

struct rp_lat *rp_lat_open(struct recdb *db, struct errmsg *msg);
void rp_lat_close(struct rp_lat *l);
/* Brings the state to refresh id: from the rows after prev when it held
 * prev's (prev not 0), else from every row of the session since first. */
int rp_lat_feed(struct rp_lat *l, long long first, long long prev, long long id,
		struct errmsg *msg);
/* The state into hs and info, fields by the stats ids sid gives (by db
 * id, n of them; -1: none): info, or NULL when latency was off. */
const struct snap_latency *rp_lat_read(struct rp_lat *l, const int *sid,
				       size_t n, struct hist_set *hs,
				       struct snap_latency *info);

#endif
