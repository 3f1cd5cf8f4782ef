/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The breakdowns (--breakdown) in a recording: the tables each render
 * read (snapshot.h's snap_breakdown) written as README's brk_key,
 * brk_read and brk_value say, only the rows that changed since the read
 * recorded before; and read back into the same tables for a refresh of
 * the replay. The recorder (recorder.c) and the replay (replay.c) own one
 * each and run it inside their own transactions and feeds.
 */
#ifndef KVMSTAT_REC_BRK_H
#define KVMSTAT_REC_BRK_H

#include <stdbool.h>
#include <stddef.h>

#include "errmsg.h"
#include "recdb.h"
#include "snapshot.h"

/* The recorder's side: what was written last, per key. */
struct rec_brk;

struct rec_brk *rec_brk_new(void);
void rec_brk_free(struct rec_brk *b);
/* A new session: the next write writes every row again. */
void rec_brk_restart(struct rec_brk *b);
/* The tables of brk (NULL: breakdowns off) as read at refresh, rows that
 * changed only. 0, or -errno with a line. */
int rec_brk_write(struct rec_brk *b, struct recdb *db, long long refresh,
		  const struct snap_breakdown *brk, struct errmsg *msg);
/* Whether writing brk (NULL: off) would write nothing: off, and said. */
bool rec_brk_idle(const struct rec_brk *b, const struct snap_breakdown *brk);
/* The SQL that carries the breakdowns' state before refresh keep (of the
 * session starting at refresh first) into keep, then drops the rows
 * before it; the caller frees it. */
char *rec_brk_drop_sql(long long keep, long long first);

/* The replay's side: the tables at the refresh the replay holds. */
struct rp_brk;

/* Reads the keys of the recording; NULL with a line in msg. */
struct rp_brk *rp_brk_open(struct recdb *db, struct errmsg *msg);
void rp_brk_close(struct rp_brk *b);
/*
 * Brings the tables to refresh id: from the rows of id alone when the
 * ones before were those of prev (a fold on), else from every row of the
 * session since first. With over, the deltas are since prev's tables and
 * the rates over secs (with no tables at prev: since the collector
 * started, over secs unless id holds its first read). 0, or -errno with a
 * line.
 */
int rp_brk_feed(struct rp_brk *b, long long first, long long prev, long long id,
		bool over, double secs, struct errmsg *msg);
/* The tables of the last feed, or NULL when breakdowns were off; the
 * replay's, valid until the next feed. */
const struct snap_breakdown *rp_brk_tables(struct rp_brk *b);

#endif
