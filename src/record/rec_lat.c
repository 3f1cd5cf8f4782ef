// SPDX-License-Identifier: GPL-2.0-only
/*
 * Exit latency in a recording (rec_lat.h). Each render's read writes a
 * lat_value for every histogram (a reason's field in one scope) whose
 * count, sum, extremes or thread differ from the value written before,
 * its buckets whole, and one without a count for a histogram the read no
 * longer has; lat_read says, when they change, whether latency was on and
 * its header facts. A replay keeps each histogram's last value.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "lat_shared.h"
#include "rec_lat.h"
#include "util.h"

/* A histogram's place: its field (db id) in a scope. */
struct rl_key {
	long long field;
	pid_t pid;
	int vcpu;
};

/* A histogram when last written. */
struct rl_hist {
	struct rl_key k; /* first: rl_slot's */
	bool present;
	unsigned long gen;
	pid_t tid;
	uint64_t count, sum, min, max;
};

struct rec_lat {
	struct rl_hist *h;
	size_t nh, caph;
	struct hashtab index;
	unsigned long gen;
	bool known, on, timed;
	long long exit_field, vmm_field; /* db ids, or 0 */
	char *reentry, *error;
	sqlite3_stmt *ins_read, *ins_value;
};

struct rec_lat *rec_lat_new(void)
{
	struct rec_lat *l = xcalloc(1, sizeof(*l));

	hashtab_init(&l->index);
	return l;
}

void rec_lat_free(struct rec_lat *l)
{
	if (!l)
		return;
	sqlite3_finalize(l->ins_read);
	sqlite3_finalize(l->ins_value);
	hashtab_free(&l->index);
	free(l->h);
	free(l->reentry);
	free(l->error);
	free(l);
}

void rec_lat_restart(struct rec_lat *l)
{
	l->nh = 0;
	hashtab_clear(&l->index);
	l->known = false;
}

bool rec_lat_idle(const struct rec_lat *l, const struct snap_latency *info)
{
	if (info || !l->known || l->on)
		return false;
	for (size_t i = 0; i < l->nh; i++)
		if (l->h[i].present)
			return false;
	return true;
}

static bool rl_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int rl_step(struct recdb *db, sqlite3_stmt *st, struct errmsg *msg)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : recdb_fail(db, rc, "cannot record", msg);
}

/* The db id of stats field f, or 0. */
static long long rl_field(const long long *field_id, int f)
{
	return f >= 0 ? field_id[f] : 0;
}

/* lat_read, when what it says changed. */
static int rl_header(struct rec_lat *l, struct recdb *db, long long refresh,
		     const long long *field_id, const struct snap_latency *info,
		     struct errmsg *msg)
{
	bool on = info, timed = info && info->exits_timed;
	long long ef = info ? rl_field(field_id, info->exit_field) : 0;
	long long vf = info ? rl_field(field_id, info->vmm_field) : 0;
	const char *re = info ? info->reentry : NULL;
	const char *er = info ? info->error : NULL;
	sqlite3_stmt *st = l->ins_read;

	if (l->known && on == l->on && timed == l->timed &&
	    ef == l->exit_field && vf == l->vmm_field &&
	    rl_same(re, l->reentry) && rl_same(er, l->error))
		return 0;
	l->known = true;
	l->on = on;
	l->timed = timed;
	l->exit_field = ef;
	l->vmm_field = vf;
	free(l->reentry);
	free(l->error);
	l->reentry = re ? xstrdup(re) : NULL;
	l->error = er ? xstrdup(er) : NULL;
	sqlite3_bind_int64(st, 1, refresh);
	sqlite3_bind_int(st, 2, on);
	if (ef)
		sqlite3_bind_int64(st, 3, ef);
	if (vf)
		sqlite3_bind_int64(st, 4, vf);
	sqlite3_bind_int(st, 5, timed);
	if (re)
		sqlite3_bind_text(st, 6, re, -1, SQLITE_STATIC);
	if (er)
		sqlite3_bind_text(st, 7, er, -1, SQLITE_STATIC);
	return rl_step(db, st, msg);
}

/*
 * The index of k among the *n entries of size bytes at *arr (each opening
 * with its struct rl_key) that idx indexes; a zeroed entry with k added
 * (the array grown) when none has it.
 */
static size_t rl_slot(void **arr, size_t *n, size_t *cap, size_t size,
		      struct hashtab *idx, struct rl_key k)
{
	uint32_t hash = hashtab_hash3((uint32_t)k.field, (uint32_t)k.pid,
				      (uint32_t)k.vcpu);
	struct hashtab_iter it = hashtab_iter(idx, hash);
	struct rl_key *e;
	long i;

	while ((i = hashtab_next(idx, &it)) >= 0) {
		e = (struct rl_key *)((char *)*arr + (size_t)i * size);
		if (e->field == k.field && e->pid == k.pid && e->vcpu == k.vcpu)
			return (size_t)i;
	}
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*arr = xrealloc(*arr, *cap * size);
	}
	e = (struct rl_key *)((char *)*arr + *n * size);
	memset(e, 0, size);
	*e = k;
	hashtab_add(idx, hash, *n);
	return (*n)++;
}

/* A lat_value of h at refresh: x's, or none (x NULL: gone). */
static int rl_value(struct rec_lat *l, struct recdb *db, long long refresh,
		    struct rl_hist *h, const struct hist_reading *x,
		    struct errmsg *msg)
{
	sqlite3_stmt *st = l->ins_value;

	sqlite3_bind_int64(st, 1, refresh);
	sqlite3_bind_int64(st, 2, h->k.field);
	sqlite3_bind_int64(st, 3, h->k.pid);
	sqlite3_bind_int(st, 4, h->k.vcpu);
	h->present = x;
	if (x) {
		sqlite3_bind_int64(st, 5, x->tid);
		sqlite3_bind_int64(st, 6, (sqlite3_int64)x->count);
		sqlite3_bind_int64(st, 7, (sqlite3_int64)x->sum);
		sqlite3_bind_int64(st, 8, (sqlite3_int64)x->min);
		sqlite3_bind_int64(st, 9, (sqlite3_int64)x->max);
		sqlite3_bind_int64(st, 10, (sqlite3_int64)x->bucket_size);
		sqlite3_bind_blob(st, 11, x->b,
				  (int)(x->nbuckets * sizeof(*x->b)),
				  SQLITE_STATIC);
		h->tid = x->tid;
		h->count = x->count;
		h->sum = x->sum;
		h->min = x->min;
		h->max = x->max;
	} else {
		sqlite3_bind_int(st, 5, 0);
		for (int i = 7; i <= 10; i++)
			sqlite3_bind_int(st, i, 0);
	}
	return rl_step(db, st, msg);
}

int rec_lat_write(struct rec_lat *l, struct recdb *db, long long refresh,
		  const long long *field_id, const struct hist_set *hs,
		  const struct snap_latency *info, struct errmsg *msg)
{
	int rc = 0;

	if (!l->ins_read) {
		l->ins_read = recdb_prepare(
			db,
			"INSERT OR REPLACE INTO lat_read(refresh, enabled, exit_field,"
			" vmm_field, exits_timed, reentry, error) VALUES"
			" (?, ?, ?, ?, ?, ?, ?)",
			msg);
		l->ins_value = recdb_prepare(
			db,
			"INSERT OR REPLACE INTO lat_value(refresh, field, pid,"
			" vcpu, tid, count, sum, min, max, bucket_size, buckets)"
			" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			msg);
		if (!l->ins_read || !l->ins_value)
			return -EIO;
	}
	rc = rl_header(l, db, refresh, field_id, info, msg);
	l->gen++;
	for (size_t i = 0; !rc && info && hs && i < hs->n; i++) {
		const struct hist_reading *x = &hs->v[i];
		struct rl_hist *h;
		size_t slot;

		if (x->field < 0)
			continue;
		/* the index first: rl_slot may move l->h */
		slot = rl_slot((void **)&l->h, &l->nh, &l->caph, sizeof(*l->h),
			       &l->index,
			       (struct rl_key){ field_id[x->field], x->pid,
						x->vcpu });
		h = &l->h[slot];
		h->gen = l->gen;
		if (h->present && h->tid == x->tid && h->count == x->count &&
		    h->sum == x->sum && h->min == x->min && h->max == x->max)
			continue;
		rc = rl_value(l, db, refresh, h, x, msg);
	}
	for (size_t i = 0; !rc && i < l->nh; i++)
		if (l->h[i].present && l->h[i].gen != l->gen)
			rc = rl_value(l, db, refresh, &l->h[i], NULL, msg);
	return rc;
}

char *rec_lat_drop_sql(long long keep, long long first)
{
	return xasprintf(
		"INSERT OR IGNORE INTO lat_value SELECT %lld, field, pid, vcpu,"
		" tid, count, sum, min, max, bucket_size, buckets FROM (SELECT"
		" field, pid, vcpu, tid, count, sum, min, max, bucket_size,"
		" buckets, max(refresh) FROM lat_value WHERE refresh < %lld AND"
		" refresh >= %lld GROUP BY field, pid, vcpu);"
		"INSERT OR IGNORE INTO lat_read SELECT %lld, enabled, exit_field,"
		" vmm_field, exits_timed, reentry, error FROM lat_read WHERE"
		" refresh < %lld AND refresh >= %lld ORDER BY refresh DESC"
		" LIMIT 1;"
		"DELETE FROM lat_value WHERE refresh < %lld;"
		"DELETE FROM lat_read WHERE refresh < %lld;",
		keep, keep, first, keep, keep, first, keep, keep);
}

/* The replay's side: a histogram's last value. */
struct rpl_hist {
	struct rl_key k; /* first: rl_slot's */
	bool on;
	pid_t tid;
	uint64_t count, sum, min, max, bucket_size;
	size_t nb;
	uint64_t *b; /* owned */
};

struct rp_lat {
	struct recdb *db;
	struct rpl_hist *h;
	size_t nh, caph;
	struct hashtab index;
	bool on, timed;
	long long exit_field, vmm_field;
	char *reentry, *error;
	sqlite3_stmt *since, *state, *hdr;
};

struct rp_lat *rp_lat_open(struct recdb *db, struct errmsg *msg)
{
	struct rp_lat *l = xcalloc(1, sizeof(*l));

	l->db = db;
	hashtab_init(&l->index);
	l->since =
		recdb_prepare(db,
			      "SELECT field, pid, vcpu, tid, count, sum, min, max,"
			      " bucket_size, buckets FROM lat_value WHERE refresh > ?1 AND"
			      " refresh <= ?2 ORDER BY refresh",
			      msg);
	l->state = recdb_prepare(
		db,
		"SELECT field, pid, vcpu, tid, count, sum, min, max,"
		" bucket_size, buckets, max(refresh) FROM lat_value WHERE"
		" refresh <= ?1 AND refresh >= ?2 GROUP BY field, pid, vcpu",
		msg);
	l->hdr = recdb_prepare(
		db,
		"SELECT enabled, exit_field, vmm_field, exits_timed, reentry, error"
		" FROM lat_read WHERE refresh <= ?1 AND refresh >= ?2 ORDER BY"
		" refresh DESC LIMIT 1",
		msg);
	if (!l->since || !l->state || !l->hdr) {
		rp_lat_close(l);
		return NULL;
	}
	return l;
}

void rp_lat_close(struct rp_lat *l)
{
	if (!l)
		return;
	sqlite3_finalize(l->since);
	sqlite3_finalize(l->state);
	sqlite3_finalize(l->hdr);
	for (size_t i = 0; i < l->nh; i++)
		free(l->h[i].b);
	free(l->h);
	hashtab_free(&l->index);
	free(l->reentry);
	free(l->error);
	free(l);
}

/* The histogram of a row (field, pid, vcpu first), made when new. */
static struct rpl_hist *rpl_find(struct rp_lat *l, sqlite3_stmt *st)
{
	struct rl_key k = { sqlite3_column_int64(st, 0),
			    (pid_t)sqlite3_column_int64(st, 1),
			    sqlite3_column_int(st, 2) };

	size_t slot = rl_slot((void **)&l->h, &l->nh, &l->caph, sizeof(*l->h),
			      &l->index, k);

	return &l->h[slot]; /* after: rl_slot may move l->h */
}

static int rpl_rows(struct rp_lat *l, sqlite3_stmt *st, struct errmsg *msg)
{
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rpl_hist *h = rpl_find(l, st);
		int bytes = sqlite3_column_bytes(st, 9);

		h->on = sqlite3_column_type(st, 4) != SQLITE_NULL;
		h->tid = (pid_t)sqlite3_column_int64(st, 3);
		h->count = (uint64_t)sqlite3_column_int64(st, 4);
		h->sum = (uint64_t)sqlite3_column_int64(st, 5);
		h->min = (uint64_t)sqlite3_column_int64(st, 6);
		h->max = (uint64_t)sqlite3_column_int64(st, 7);
		h->bucket_size = (uint64_t)sqlite3_column_int64(st, 8);
		free(h->b);
		h->nb = (size_t)bytes / sizeof(*h->b);
		h->b = xcalloc(h->nb + 1, sizeof(*h->b));
		if (h->nb)
			memcpy(h->b, sqlite3_column_blob(st, 9),
			       h->nb * sizeof(*h->b));
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 :
				   recdb_fail(l->db, rc, "cannot read", msg);
}

int rp_lat_feed(struct rp_lat *l, long long first, long long prev, long long id,
		struct errmsg *msg)
{
	int rc;

	if (prev) {
		sqlite3_bind_int64(l->since, 1, prev);
		sqlite3_bind_int64(l->since, 2, id);
		rc = rpl_rows(l, l->since, msg);
	} else {
		for (size_t i = 0; i < l->nh; i++)
			l->h[i].on = false;
		sqlite3_bind_int64(l->state, 1, id);
		sqlite3_bind_int64(l->state, 2, first);
		rc = rpl_rows(l, l->state, msg);
	}
	if (rc)
		return rc;
	sqlite3_bind_int64(l->hdr, 1, id);
	sqlite3_bind_int64(l->hdr, 2, first);
	rc = sqlite3_step(l->hdr);
	l->on = rc == SQLITE_ROW && sqlite3_column_int(l->hdr, 0);
	free(l->reentry);
	free(l->error);
	l->reentry = l->error = NULL;
	if (l->on) {
		l->exit_field = sqlite3_column_int64(l->hdr, 1);
		l->vmm_field = sqlite3_column_int64(l->hdr, 2);
		l->timed = sqlite3_column_int(l->hdr, 3);
		if (sqlite3_column_type(l->hdr, 4) != SQLITE_NULL)
			l->reentry = xstrdup(
				(const char *)sqlite3_column_text(l->hdr, 4));
		if (sqlite3_column_type(l->hdr, 5) != SQLITE_NULL)
			l->error = xstrdup(
				(const char *)sqlite3_column_text(l->hdr, 5));
	}
	sqlite3_reset(l->hdr);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ?
		       0 :
		       recdb_fail(l->db, rc, "cannot read", msg);
}

/* The stats id of db field id, or -1. */
static int rpl_sid(const int *sid, size_t n, long long id)
{
	return id > 0 && (size_t)id < n ? sid[id] : -1;
}

const struct snap_latency *rp_lat_read(struct rp_lat *l, const int *sid,
				       size_t n, struct hist_set *hs,
				       struct snap_latency *info)
{
	if (!l || !l->on)
		return NULL;
	for (size_t i = 0; i < l->nh; i++) {
		const struct rpl_hist *h = &l->h[i];
		int f = rpl_sid(sid, n, h->k.field);
		struct hist_reading *x;

		if (!h->on || f < 0)
			continue;
		x = hist_set_add(hs, f, h->k.pid, h->k.vcpu, h->tid, h->nb);
		x->count = h->count;
		x->sum = h->sum;
		x->min = h->min;
		x->max = h->max;
		x->bucket_size = h->bucket_size;
		if (h->nb)
			memcpy(x->b, h->b, h->nb * sizeof(*x->b));
	}
	*info = (struct snap_latency){
		.exit_field = rpl_sid(sid, n, l->exit_field),
		.vmm_field = rpl_sid(sid, n, l->vmm_field),
		.exits_timed = l->timed,
		.reentry = l->reentry,
		.error = l->error,
	};
	return info;
}
