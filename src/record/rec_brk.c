// SPDX-License-Identifier: GPL-2.0-only
/*
 * The breakdowns in a recording (rec_brk.h). A row of a table (one key,
 * or "other", of one kind in one scope) is a brk_key; each render's read
 * writes a brk_value for every row whose count, delta, rate, times or
 * thread differ from the value written before, and a brk_value without a
 * count for a row that left the tables; brk_read says, when it changes,
 * which kinds were on (0: off), timed or not, and why they could not
 * start. A replay keeps each row's last value and builds the tables as
 * the collector ordered them: scopes (whole, VMs, vCPUs), kinds, then
 * rows by count, other last.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "lat_shared.h"
#include "rec_brk.h"
#include "util.h"

/* What a row was when last written. */
struct rb_row {
	long long id; /* brk_key */
	pid_t pid;
	int vcpu;
	const char *kind, *dir; /* the collector's strings */
	uint64_t key;
	bool other;
	bool present;	   /* in the tables at the last write */
	unsigned long gen; /* the write that saw it last */
	pid_t tid;
	uint64_t count, tcount, sum, min, max;
	int64_t delta;
	double rate;
};

struct rec_brk {
	struct rb_row *rows;
	size_t nrows, caprows;
	struct hashtab index;
	unsigned long gen;
	bool hdr_known; /* brk_read written in this session */
	unsigned kinds;
	bool timed, vcpu_series;
	size_t top;
	char *error;
	sqlite3_stmt *ins_key, *ins_read, *ins_value;
};

struct rec_brk *rec_brk_new(void)
{
	struct rec_brk *b = xcalloc(1, sizeof(*b));

	hashtab_init(&b->index);
	return b;
}

void rec_brk_free(struct rec_brk *b)
{
	if (!b)
		return;
	sqlite3_finalize(b->ins_key);
	sqlite3_finalize(b->ins_read);
	sqlite3_finalize(b->ins_value);
	hashtab_free(&b->index);
	free(b->rows);
	free(b->error);
	free(b);
}

void rec_brk_restart(struct rec_brk *b)
{
	b->nrows = 0;
	hashtab_clear(&b->index);
	b->hdr_known = false;
}

bool rec_brk_idle(const struct rec_brk *b, const struct snap_breakdown *brk)
{
	if (brk || !b->hdr_known || b->kinds)
		return false;
	for (size_t i = 0; i < b->nrows; i++)
		if (b->rows[i].present)
			return false;
	return true;
}

static bool rb_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static uint32_t rb_hash(pid_t pid, int vcpu, const char *kind, uint64_t key)
{
	return hashtab_hash3((uint32_t)pid ^ hashtab_hash_str(kind),
			     (uint32_t)vcpu,
			     (uint32_t)key ^ (uint32_t)(key >> 32));
}

/* Runs a bound statement once; 0 or -errno with a line. */
static int rb_step(struct recdb *db, sqlite3_stmt *st, struct errmsg *msg)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ?
		       0 :
		       recdb_fail(db, rc, "cannot record", msg);
}

/* The row of table t's row w, its brk_key made when new. */
static struct rb_row *rb_find(struct rec_brk *b, struct recdb *db,
			      const struct snap_brk_table *t,
			      const struct snap_brk_row *w, struct errmsg *msg)
{
	const char *dir = w->dir ? w->dir : "";
	uint32_t h = rb_hash(t->pid, t->vcpu, t->kind, w->key);
	struct hashtab_iter it = hashtab_iter(&b->index, h);
	struct rb_row *r;
	long i;
	int rc;

	while ((i = hashtab_next(&b->index, &it)) >= 0) {
		r = &b->rows[i];
		if (r->pid == t->pid && r->vcpu == t->vcpu &&
		    r->key == w->key && r->other == w->other &&
		    rb_same(r->kind, t->kind) && rb_same(r->dir, dir))
			return r;
	}
	sqlite3_bind_int64(b->ins_key, 1, t->pid);
	sqlite3_bind_int(b->ins_key, 2, t->vcpu);
	sqlite3_bind_text(b->ins_key, 3, t->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(b->ins_key, 4, t->event, -1, SQLITE_STATIC);
	sqlite3_bind_int64(b->ins_key, 5, (sqlite3_int64)w->key);
	sqlite3_bind_text(b->ins_key, 6, dir, -1, SQLITE_STATIC);
	sqlite3_bind_int(b->ins_key, 7, w->other);
	if (w->name)
		sqlite3_bind_text(b->ins_key, 8, w->name, -1, SQLITE_STATIC);
	if (sqlite3_step(b->ins_key) != SQLITE_ROW) {
		rc = sqlite3_errcode(db->db);
		sqlite3_reset(b->ins_key);
		recdb_fail(db, rc, "cannot record", msg);
		return NULL;
	}
	if (b->nrows == b->caprows) {
		b->caprows = b->caprows ? 2 * b->caprows : 256;
		b->rows = xrealloc(b->rows, b->caprows * sizeof(*b->rows));
	}
	r = &b->rows[b->nrows];
	*r = (struct rb_row){ .id = sqlite3_column_int64(b->ins_key, 0),
			      .pid = t->pid,
			      .vcpu = t->vcpu,
			      .kind = t->kind,
			      .dir = dir,
			      .key = w->key,
			      .other = w->other };
	sqlite3_reset(b->ins_key);
	sqlite3_clear_bindings(b->ins_key);
	hashtab_add(&b->index, h, b->nrows++);
	return r;
}

/* A brk_value of r at refresh: w's values, or none (w NULL: gone). */
static int rb_value(struct rec_brk *b, struct recdb *db, long long refresh,
		    struct rb_row *r, pid_t tid, const struct snap_brk_row *w,
		    struct errmsg *msg)
{
	sqlite3_stmt *st = b->ins_value;

	sqlite3_bind_int64(st, 1, refresh);
	sqlite3_bind_int64(st, 2, r->id);
	sqlite3_bind_int64(st, 3, tid);
	if (w) {
		sqlite3_bind_int64(st, 4, (sqlite3_int64)w->count);
		sqlite3_bind_int64(st, 5, w->delta);
		sqlite3_bind_double(st, 6, w->rate);
		sqlite3_bind_int64(st, 7, (sqlite3_int64)w->tcount);
		sqlite3_bind_int64(st, 8, (sqlite3_int64)w->sum);
		sqlite3_bind_int64(st, 9, (sqlite3_int64)w->min);
		sqlite3_bind_int64(st, 10, (sqlite3_int64)w->max);
		if (w->nbuckets && w->b)
			sqlite3_bind_blob(st, 11, w->b,
					  (int)(w->nbuckets * sizeof(*w->b)),
					  SQLITE_STATIC);
		r->present = true;
		r->tid = tid;
		r->count = w->count;
		r->delta = w->delta;
		r->rate = w->rate;
		r->tcount = w->tcount;
		r->sum = w->sum;
		r->min = w->min;
		r->max = w->max;
	} else {
		for (int i = 5; i <= 10; i++)
			sqlite3_bind_int(st, i, 0);
		r->present = false;
	}
	return rb_step(db, st, msg);
}

/* brk_read, when what is on changed. */
static int rb_header(struct rec_brk *b, struct recdb *db, long long refresh,
		     const struct snap_breakdown *brk, struct errmsg *msg)
{
	unsigned kinds = brk ? brk->kinds : 0;
	bool timed = brk && brk->timed, vs = brk && brk->vcpu_series;
	size_t top = brk ? brk->top : 0;
	const char *error = brk ? brk->error : NULL;
	sqlite3_stmt *st = b->ins_read;

	if (b->hdr_known && kinds == b->kinds && timed == b->timed &&
	    vs == b->vcpu_series && top == b->top && rb_same(error, b->error))
		return 0;
	b->hdr_known = true;
	b->kinds = kinds;
	b->timed = timed;
	b->vcpu_series = vs;
	b->top = top;
	free(b->error);
	b->error = error ? xstrdup(error) : NULL;
	sqlite3_bind_int64(st, 1, refresh);
	sqlite3_bind_int(st, 2, (int)kinds);
	sqlite3_bind_int(st, 3, timed);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)top);
	sqlite3_bind_int(st, 5, vs);
	if (error)
		sqlite3_bind_text(st, 6, error, -1, SQLITE_STATIC);
	return rb_step(db, st, msg);
}

static int rb_prepare(struct rec_brk *b, struct recdb *db, struct errmsg *msg)
{
	if (b->ins_key)
		return 0;
	b->ins_key = recdb_prepare(
		db,
		"INSERT INTO brk_key(pid, vcpu, kind, event, key, dir, other,"
		" name) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT"
		" DO UPDATE SET name = ?8 RETURNING id",
		msg);
	b->ins_read =
		recdb_prepare(db,
			      "INSERT OR REPLACE INTO brk_read(refresh, kinds, timed, top,"
			      " vcpu_series, error) VALUES (?, ?, ?, ?, ?, ?)",
			      msg);
	b->ins_value =
		recdb_prepare(db,
			      "INSERT OR REPLACE INTO brk_value(refresh, key, tid, count,"
			      " delta, rate, tcount, sum, min, max, buckets) VALUES"
			      " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			      msg);
	return b->ins_key && b->ins_read && b->ins_value ? 0 : -EIO;
}

int rec_brk_write(struct rec_brk *b, struct recdb *db, long long refresh,
		  const struct snap_breakdown *brk, struct errmsg *msg)
{
	int rc = rb_prepare(b, db, msg);

	if (!rc)
		rc = rb_header(b, db, refresh, brk, msg);
	b->gen++;
	for (size_t i = 0; !rc && brk && i < brk->ntables; i++) {
		const struct snap_brk_table *t = &brk->tables[i];

		for (size_t j = 0; !rc && j < t->nrows; j++) {
			const struct snap_brk_row *w = &t->rows[j];
			struct rb_row *r = rb_find(b, db, t, w, msg);

			if (!r)
				return -EIO;
			r->gen = b->gen;
			if (r->present && r->tid == t->tid &&
			    r->count == w->count && r->delta == w->delta &&
			    r->rate == w->rate && r->tcount == w->tcount &&
			    r->sum == w->sum && r->min == w->min &&
			    r->max == w->max)
				continue;
			rc = rb_value(b, db, refresh, r, t->tid, w, msg);
		}
	}
	for (size_t i = 0; !rc && i < b->nrows; i++)
		if (b->rows[i].present && b->rows[i].gen != b->gen)
			rc = rb_value(b, db, refresh, &b->rows[i],
				      b->rows[i].tid, NULL, msg);
	return rc;
}

char *rec_brk_drop_sql(long long keep, long long first)
{
	return xasprintf(
		"INSERT OR IGNORE INTO brk_value SELECT %lld, key, tid, count,"
		" delta, rate, tcount, sum, min, max, buckets FROM (SELECT key,"
		" tid, count, delta, rate, tcount, sum, min, max, buckets,"
		" max(refresh) FROM brk_value WHERE refresh < %lld AND"
		" refresh >= %lld GROUP BY key);"
		"INSERT OR IGNORE INTO brk_read SELECT %lld, kinds, timed, top,"
		" vcpu_series, error FROM brk_read WHERE refresh < %lld AND"
		" refresh >= %lld ORDER BY refresh DESC LIMIT 1;"
		"DELETE FROM brk_value WHERE refresh < %lld;"
		"DELETE FROM brk_read WHERE refresh < %lld;",
		keep, keep, first, keep, keep, first, keep, keep);
}

/* The replay's side. */

/* A brk_key. */
struct rpb_key {
	pid_t pid;
	int vcpu;
	int kindno; /* the kinds' order, as --breakdown lists them */
	char *kind, *event, *dir, *name; /* owned; dir NULL: none */
	uint64_t key;
	bool other;
};

/* A row's last value. */
struct rpb_val {
	bool on; /* in the tables */
	pid_t tid;
	uint64_t count, tcount, sum, min, max;
	int64_t delta;
	double rate;
	size_t nb;
	uint64_t b[LAT_NBUCKETS];
};

struct rp_brk {
	struct recdb *db;
	struct rpb_key *keys; /* by brk_key id */
	struct rpb_val *vals; /* by brk_key id */
	uint64_t *before;     /* counts before a fold over, by id */
	size_t nkeys;
	bool on;
	struct snap_breakdown out;
	char *error;
	size_t *order; /* ids of the rows on, as the tables list them */
	struct snap_brk_table *tables;
	struct snap_brk_row *rows;
	sqlite3_stmt *since, *state, *hdr;
};

/* The text of column col, owned, or NULL. */
static char *rpb_text(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);

	return t ? xstrdup((const char *)t) : NULL;
}

struct rp_brk *rp_brk_open(struct recdb *db, struct errmsg *msg)
{
	struct rp_brk *b = xcalloc(1, sizeof(*b));
	sqlite3_stmt *st;
	int rc;

	b->db = db;
	st = recdb_prepare(db,
			   "SELECT id, pid, vcpu, kind, event, key, dir, other,"
			   " name FROM brk_key",
			   msg);
	b->since = recdb_prepare(
		db,
		"SELECT key, tid, count, delta, rate, tcount, sum, min, max,"
		" buckets FROM brk_value WHERE refresh > ?1 AND refresh <= ?2"
		" ORDER BY refresh",
		msg);
	b->state = recdb_prepare(
		db,
		"SELECT key, tid, count, delta, rate, tcount, sum, min, max,"
		" buckets, max(refresh) FROM brk_value WHERE refresh <= ?1 AND"
		" refresh >= ?2 GROUP BY key",
		msg);
	b->hdr = recdb_prepare(
		db,
		"SELECT kinds, timed, top, vcpu_series, error FROM brk_read"
		" WHERE refresh <= ?1 AND refresh >= ?2 ORDER BY refresh DESC"
		" LIMIT 1",
		msg);
	if (!st || !b->since || !b->state || !b->hdr) {
		sqlite3_finalize(st);
		rp_brk_close(b);
		return NULL;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		long long id = sqlite3_column_int64(st, 0);
		struct rpb_key *k;
		const char *pos;
		size_t n = b->nkeys;

		if (id < 0 || id > 1 << 28)
			continue;
		b->keys = xgrow_index(b->keys, &n, (size_t)id, sizeof(*b->keys),
				      0);
		n = b->nkeys;
		b->vals = xgrow_index(b->vals, &n, (size_t)id, sizeof(*b->vals),
				      0);
		b->nkeys = n;
		k = &b->keys[id];
		k->pid = (pid_t)sqlite3_column_int64(st, 1);
		k->vcpu = sqlite3_column_int(st, 2);
		k->kind = rpb_text(st, 3);
		k->event = rpb_text(st, 4);
		k->key = (uint64_t)sqlite3_column_int64(st, 5);
		k->dir = rpb_text(st, 6);
		if (k->dir && !*k->dir) {
			free(k->dir);
			k->dir = NULL;
		}
		k->other = sqlite3_column_int(st, 7);
		k->name = rpb_text(st, 8);
		pos = k->kind ? strstr(BREAKDOWN_KINDS, k->kind) : NULL;
		k->kindno = pos ? (int)(pos - BREAKDOWN_KINDS) : INT32_MAX;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		recdb_fail(db, rc, "cannot read", msg);
		rp_brk_close(b);
		return NULL;
	}
	b->before = xcalloc(b->nkeys + 1, sizeof(*b->before));
	b->order = xcalloc(b->nkeys + 1, sizeof(*b->order));
	b->tables = xcalloc(b->nkeys + 1, sizeof(*b->tables));
	b->rows = xcalloc(b->nkeys + 1, sizeof(*b->rows));
	return b;
}

void rp_brk_close(struct rp_brk *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nkeys; i++) {
		free(b->keys[i].kind);
		free(b->keys[i].event);
		free(b->keys[i].dir);
		free(b->keys[i].name);
	}
	sqlite3_finalize(b->since);
	sqlite3_finalize(b->state);
	sqlite3_finalize(b->hdr);
	free(b->keys);
	free(b->vals);
	free(b->before);
	free(b->order);
	free(b->tables);
	free(b->rows);
	free(b->error);
	free(b);
}

/* Runs st (bound) over its brk_value rows into the values. */
static int rpb_rows(struct rp_brk *b, sqlite3_stmt *st, struct errmsg *msg)
{
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		long long id = sqlite3_column_int64(st, 0);
		struct rpb_val *v;
		int bytes;

		if (id < 0 || (size_t)id >= b->nkeys || !b->keys[id].kind)
			continue;
		v = &b->vals[id];
		v->on = sqlite3_column_type(st, 2) != SQLITE_NULL;
		v->tid = (pid_t)sqlite3_column_int64(st, 1);
		v->count = (uint64_t)sqlite3_column_int64(st, 2);
		v->delta = sqlite3_column_int64(st, 3);
		v->rate = sqlite3_column_double(st, 4);
		v->tcount = (uint64_t)sqlite3_column_int64(st, 5);
		v->sum = (uint64_t)sqlite3_column_int64(st, 6);
		v->min = (uint64_t)sqlite3_column_int64(st, 7);
		v->max = (uint64_t)sqlite3_column_int64(st, 8);
		bytes = sqlite3_column_bytes(st, 9);
		v->nb = (size_t)bytes / sizeof(v->b[0]);
		if (v->nb > LAT_NBUCKETS)
			v->nb = LAT_NBUCKETS;
		if (v->nb)
			memcpy(v->b, sqlite3_column_blob(st, 9),
			       v->nb * sizeof(v->b[0]));
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 :
				   recdb_fail(b->db, rc, "cannot read", msg);
}

/* The collector's order: scope, kind, other last, count (most first),
 * key, direction. */
static int rpb_cmp(const void *pa, const void *pb, void *arg)
{
	const struct rp_brk *b = arg;
	size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
	const struct rpb_key *x = &b->keys[ia], *y = &b->keys[ib];
	const struct rpb_val *u = &b->vals[ia], *w = &b->vals[ib];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->vcpu != y->vcpu)
		return x->vcpu < y->vcpu ? -1 : 1;
	if (x->kindno != y->kindno)
		return x->kindno < y->kindno ? -1 : 1;
	if (x->other != y->other)
		return x->other ? 1 : -1;
	if (u->count != w->count)
		return u->count > w->count ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return strcmp(x->dir ? x->dir : "", y->dir ? y->dir : "");
}

/* The tables from the values. */
static void rpb_build(struct rp_brk *b)
{
	size_t n = 0, nt = 0;

	for (size_t i = 0; i < b->nkeys; i++)
		if (b->keys[i].kind && b->vals[i].on)
			b->order[n++] = i;
	if (n > 1) /* no key: order may be NULL, which qsort_r takes not */
		qsort_r(b->order, n, sizeof(*b->order), rpb_cmp, b);
	for (size_t i = 0; i < n; i++) {
		const struct rpb_key *k = &b->keys[b->order[i]];
		const struct rpb_val *v = &b->vals[b->order[i]];
		struct snap_brk_row *r = &b->rows[i];
		struct snap_brk_table *t = nt ? &b->tables[nt - 1] : NULL;

		if (!t || t->pid != k->pid || t->vcpu != k->vcpu ||
		    strcmp(t->kind, k->kind)) {
			t = &b->tables[nt++];
			*t = (struct snap_brk_table){ .kind = k->kind,
						      .event = k->event,
						      .pid = k->pid,
						      .vcpu = k->vcpu,
						      .tid = v->tid,
						      .rows = r };
		}
		*r = (struct snap_brk_row){ .key = k->key,
					    .dir = k->dir,
					    .other = k->other,
					    .name = k->name,
					    .count = v->count,
					    .delta = v->delta,
					    .rate = v->rate,
					    .nbuckets = b->out.timed ? v->nb : 0,
					    .b = v->b,
					    .tcount = v->tcount,
					    .sum = v->sum,
					    .min = v->min,
					    .max = v->max };
		t->nrows++;
		t->total += v->count;
		t->delta += v->delta;
	}
	b->out.tables = b->tables;
	b->out.ntables = nt;
}

int rp_brk_feed(struct rp_brk *b, long long first, long long prev, long long id,
		bool over, double secs, struct errmsg *msg)
{
	bool was_on = b->on;
	int rc;

	for (size_t i = 0; over && i < b->nkeys; i++)
		b->before[i] = was_on && b->vals[i].on ? b->vals[i].count : 0;
	if (prev) {
		sqlite3_bind_int64(b->since, 1, prev);
		sqlite3_bind_int64(b->since, 2, id);
		rc = rpb_rows(b, b->since, msg);
	} else {
		if (b->nkeys) /* vals is NULL before any key */
			memset(b->vals, 0, b->nkeys * sizeof(*b->vals));
		sqlite3_bind_int64(b->state, 1, id);
		sqlite3_bind_int64(b->state, 2, first);
		rc = rpb_rows(b, b->state, msg);
	}
	if (rc)
		return rc;
	sqlite3_bind_int64(b->hdr, 1, id);
	sqlite3_bind_int64(b->hdr, 2, first);
	rc = sqlite3_step(b->hdr);
	b->on = rc == SQLITE_ROW && sqlite3_column_int(b->hdr, 0);
	free(b->error);
	b->error = NULL;
	if (b->on) {
		b->out = (struct snap_breakdown){
			.kinds = (unsigned)sqlite3_column_int(b->hdr, 0),
			.timed = sqlite3_column_int(b->hdr, 1),
			.top = (size_t)sqlite3_column_int64(b->hdr, 2),
			.vcpu_series = sqlite3_column_int(b->hdr, 3),
		};
		b->error = rpb_text(b->hdr, 4);
		b->out.error = b->error;
	}
	sqlite3_reset(b->hdr);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return recdb_fail(b->db, rc, "cannot read", msg);
	/* over a window: the deltas since the tables before, the rates
	 * over its time; with none before, since the collector started, as
	 * its first read says (the one recorded, when it was that read) */
	for (size_t i = 0; over && i < b->nkeys; i++) {
		struct rpb_val *v = &b->vals[i];
		bool first_read = !was_on && v->delta == (int64_t)v->count;

		v->delta = v->count >= b->before[i] ?
				   (int64_t)(v->count - b->before[i]) :
				   (int64_t)v->count;
		if (!first_read)
			v->rate = secs > 0 ? v->delta / secs : 0;
	}
	if (b->on)
		rpb_build(b);
	return 0;
}

const struct snap_breakdown *rp_brk_tables(struct rp_brk *b)
{
	return b && b->on ? &b->out : NULL;
}
