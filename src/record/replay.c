// SPDX-License-Identifier: GPL-2.0-only
/*
 * The replay. The recording keeps, per refresh, the cells whose state
 * changed (recorder.c); here the state of every cell is kept as the
 * refreshes go by, and each refresh hands the stats the total of every
 * cell read in it, at the recorded monotonic time. Totals never go down
 * between two refreshes of a counter unless the live run's did, so the
 * stats' deltas are the recorded ones and their interval the live one;
 * the wall clock is set to the recorded one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hashtab.h"
#include "rec_brk.h"
#include "rec_lat.h"
#include "rec_vt.h"
#include "recdb.h"
#include "recorder.h"
#include "replay.h"
#include "util.h"

struct rp_refresh {
	long long id, session;
	int64_t wall_ns, mono_ns;
	bool listed;
};

struct rp_session {
	long long id;
	char *sources;
	double delay;
};

struct rp_field {
	char *name, *provider, *help; /* owned */
	long long parent;	      /* db id, or 0 */
	struct field_info info;	      /* units, shape, flags */
	int sid;		      /* id in the stats' table */
};

/* One cell's state: the last row recorded of it. */
struct rp_cell {
	long long scope, field;
	uint64_t total;
	pid_t tid;
	bool fresh;
};

struct rp_vm {
	pid_t pid;
	char *name, *vcpus; /* owned */
	unsigned int flags; /* enum recorder_vm_flags */
};

/* Who a VM was (layout 4's vm_ident), by pid. */
struct rp_ident {
	pid_t pid;
	char *vmm, *uuid, *unit, *pod; /* owned */
};

struct replay {
	struct recdb db;
	struct rp_refresh *refs; /* every refresh of the file */
	size_t nrefs, lo, hi;	 /* the window: [lo, hi) */
	struct rp_session *sessions;
	size_t nsessions;
	struct rp_field *fields; /* by db id */
	size_t nfields;
	struct {
		pid_t pid;
		int vcpu;
	} * scopes; /* by db id */
	size_t nscopes;
	struct rp_cell *cells;
	size_t ncells, capcells;
	struct hashtab index; /* (scope, field) -> cell */
	struct rp_vm *vms;
	size_t nvms;
	struct rp_ident *idents; /* none in a file of layout 2 or 3 */
	size_t nidents;
	size_t cur; /* index in refs the stats hold, or SIZE_MAX */
	sqlite3_stmt *rows, *state, *vm_rows, *vm_state;
	struct rp_brk *brk; /* the breakdowns' tables */
	struct rp_lat *lat; /* exit latency's histograms */
	struct rp_vt *vt;   /* where vCPU time went */
	int *sids;	    /* stats field id by db id */
};

static char *rp_text(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);

	return t ? xstrdup((const char *)t) : NULL;
}

static int rp_enum(const char *s, const char *const *names, int n)
{
	for (int i = 0; s && i < n; i++)
		if (names[i] && !strcmp(s, names[i]))
			return i;
	return 0;
}

/* Who each VM was, where the file's layout keeps it (4 on). */
static void rp_load_idents(struct replay *r)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(r->db.db,
			       "SELECT pid, vmm, uuid, unit, pod FROM vm_ident",
			       -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		r->idents = xrealloc(r->idents,
				     (r->nidents + 1) * sizeof(*r->idents));
		r->idents[r->nidents++] = (struct rp_ident){
			.pid = (pid_t)sqlite3_column_int64(st, 0),
			.vmm = rp_text(st, 1),
			.uuid = rp_text(st, 2),
			.unit = rp_text(st, 3),
			.pod = rp_text(st, 4),
		};
	}
	sqlite3_finalize(st);
}

/* The refreshes, sessions, fields and scopes of the file. */
static int rp_load(struct replay *r, struct errmsg *msg)
{
	sqlite3_stmt *st;
	int rc;

	st = recdb_prepare(&r->db,
			   "SELECT id, session, wall_ns, mono_ns, listed FROM"
			   " refresh ORDER BY id",
			   msg);
	if (!st)
		return -EINVAL;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->refs = xrealloc(r->refs, (r->nrefs + 1) * sizeof(*r->refs));
		r->refs[r->nrefs++] = (struct rp_refresh){
			.id = sqlite3_column_int64(st, 0),
			.session = sqlite3_column_int64(st, 1),
			.wall_ns = sqlite3_column_int64(st, 2),
			.mono_ns = sqlite3_column_int64(st, 3),
			.listed = sqlite3_column_int(st, 4),
		};
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return recdb_fail(&r->db, rc, "cannot read", msg);

	st = recdb_prepare(&r->db, "SELECT id, sources, delay FROM session",
			   msg);
	if (!st)
		return -EINVAL;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->sessions = xrealloc(r->sessions, (r->nsessions +
						     1) * sizeof(*r->sessions));
		r->sessions[r->nsessions++] = (struct rp_session){
			.id = sqlite3_column_int64(st, 0),
			.sources = rp_text(st, 1),
			.delay = sqlite3_column_double(st, 2),
		};
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return recdb_fail(&r->db, rc, "cannot read", msg);

	st = recdb_prepare(&r->db,
			   "SELECT id, name, parent, kind, unit, exponent, base,"
			   " hist, bucket, bucket_lo, bucket_hi, flags,"
			   " provider, help FROM field ORDER BY id",
			   msg);
	if (!st)
		return -EINVAL;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		long long id = sqlite3_column_int64(st, 0);
		struct rp_field *f;

		if (id < 1 || id > 1000000)
			continue;
		r->fields = xgrow_index(r->fields, &r->nfields, (size_t)id,
					sizeof(*r->fields), 0);
		f = &r->fields[id];
		f->name = rp_text(st, 1);
		f->parent = sqlite3_column_int64(st, 2);
		f->info.type = (enum field_type)
			rp_enum((const char *)sqlite3_column_text(st, 3),
				recorder_kinds, 3);
		f->info.unit = (enum field_unit)
			rp_enum((const char *)sqlite3_column_text(st, 4),
				recorder_units, 5);
		f->info.exponent = sqlite3_column_int(st, 5);
		f->info.base = (unsigned int)sqlite3_column_int(st, 6);
		f->info.hist = (enum field_hist)
			rp_enum((const char *)sqlite3_column_text(st, 7),
				recorder_hists, 3);
		f->info.bucket = sqlite3_column_type(st, 8) == SQLITE_NULL ?
					 -1 :
					 sqlite3_column_int(st, 8);
		f->info.bucket_lo = (uint64_t)sqlite3_column_int64(st, 9);
		f->info.bucket_hi = sqlite3_column_type(st, 10) == SQLITE_NULL ?
					    UINT64_MAX :
					    (uint64_t)sqlite3_column_int64(st,
									   10);
		f->info.flags = (unsigned int)sqlite3_column_int(st, 11);
		f->provider = rp_text(st, 12);
		f->help = rp_text(st, 13);
		f->sid = -1;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return recdb_fail(&r->db, rc, "cannot read", msg);

	st = recdb_prepare(&r->db, "SELECT id, pid, vcpu FROM scope", msg);
	if (!st)
		return -EINVAL;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		long long id = sqlite3_column_int64(st, 0);

		if (id < 0 || id > 100000000)
			continue;
		r->scopes = xgrow_index(r->scopes, &r->nscopes, (size_t)id,
					sizeof(*r->scopes), 0);
		r->scopes[id].pid = (pid_t)sqlite3_column_int64(st, 1);
		r->scopes[id].vcpu = sqlite3_column_int(st, 2);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return recdb_fail(&r->db, rc, "cannot read", msg);
	return 0;
}

const struct snap_breakdown *replay_breakdown(const struct replay *r)
{
	return r->cur == SIZE_MAX ? NULL : rp_brk_tables(r->brk);
}

const struct snap_latency *replay_latency(const struct replay *r,
					  struct hist_set *hs,
					  struct snap_latency *info)
{
	if (r->cur == SIZE_MAX || !r->sids)
		return NULL;
	return rp_lat_read(r->lat, r->sids, r->nfields, hs, info);
}

const struct vcputime *replay_vcputime(const struct replay *r, bool per_vcpu)
{
	return r->cur == SIZE_MAX ? NULL : rp_vt_read(r->vt, per_vcpu);
}

bool replay_has_vcputime(const struct replay *r)
{
	return rp_vt_any(r->vt, r->refs[r->lo].id, r->refs[r->hi - 1].id);
}

void replay_fields(const struct replay *r, struct field_table *t)
{
	struct replay *w = (struct replay *)r;

	if (!w->sids) {
		w->sids = xcalloc(r->nfields + 1, sizeof(*w->sids));
		for (size_t i = 0; i <= r->nfields; i++)
			w->sids[i] = -1;
	}
	for (size_t i = 1; i < r->nfields; i++) {
		struct rp_field *f = &((struct replay *)r)->fields[i];
		int parent = -1, id;
		struct field_info *info;

		if (!f->name)
			continue;
		if (f->parent > 0 && (size_t)f->parent < i)
			parent = r->fields[f->parent].sid;
		id = field_table_intern(t, f->name, parent, f->info.type,
					f->provider);
		info = field_table_info(t, id);
		info->unit = f->info.unit;
		info->exponent = f->info.exponent;
		info->base = f->info.base;
		info->hist = f->info.hist;
		info->bucket = f->info.bucket;
		info->bucket_lo = f->info.bucket_lo;
		info->bucket_hi = f->info.bucket_hi;
		info->flags = f->info.flags;
		info->help = f->help;
		f->sid = id;
		w->sids[i] = id;
	}
}

/* "SECONDS[.FRACTION]" (or with a '-') in ns, read in decimal: a double
 * holds today's seconds to 0.24 us only, so a refresh's own time to the
 * microsecond or nanosecond could land past it. The digits past the
 * nanosecond round up with up, else down. */
static int rp_parse_seconds(const char *s, bool up, int64_t *ns)
{
	const int64_t max_sec = INT64_MAX / 1000000000 - 1;
	bool neg = *s == '-', rest = false;
	int64_t sec = 0, frac = 0;
	int digits = 0, nfrac = 0;

	for (s += neg; *s >= '0' && *s <= '9'; s++, digits++) {
		if (sec > (max_sec - (*s - '0')) / 10)
			return -ERANGE;
		sec = sec * 10 + (*s - '0');
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, digits++) {
			if (nfrac < 9) {
				frac = frac * 10 + (*s - '0');
				nfrac++;
			} else if (*s != '0') {
				rest = true;
			}
		}
	}
	if (!digits || *s)
		return -EINVAL;
	for (; nfrac < 9; nfrac++)
		frac *= 10;
	*ns = sec * 1000000000 + frac;
	/* the magnitude grows when rounding away from zero */
	if (rest && up != neg)
		*ns += 1;
	if (neg)
		*ns = -*ns;
	return 0;
}

int replay_parse_time(const struct replay *r, const char *text, bool up,
		      int64_t *ns)
{
	static const char *const formats[] = { "%Y-%m-%d %H:%M:%S",
					       "%Y-%m-%dT%H:%M:%S",
					       "%Y-%m-%d %H:%M",
					       "%Y-%m-%dT%H:%M", NULL };
	struct tm tm;
	const char *end;

	if (text[0] == '@')
		return rp_parse_seconds(text + 1, up, ns);
	for (size_t i = 0; formats[i]; i++) {
		memset(&tm, 0, sizeof(tm));
		end = strptime(text, formats[i], &tm);
		if (end && !*end)
			goto found;
	}
	/* a time of day, on the day the recording starts */
	if (r->nrefs) {
		time_t t0 = (time_t)(r->refs[0].wall_ns / 1000000000ll);

		localtime_r(&t0, &tm);
	} else {
		memset(&tm, 0, sizeof(tm));
	}
	tm.tm_sec = 0;
	end = strptime(text, "%H:%M:%S", &tm);
	if (!end || *end) {
		tm.tm_sec = 0;
		end = strptime(text, "%H:%M", &tm);
	}
	if (!end || *end)
		return -EINVAL;
found:
	tm.tm_isdst = -1;
	*ns = (int64_t)mktime(&tm) * 1000000000;
	return 0;
}

int replay_open(struct replay **out, const char *path, const char *from,
		const char *to, struct errmsg *msg)
{
	struct replay *r = xcalloc(1, sizeof(*r));
	int64_t t;
	int rc;

	hashtab_init(&r->index);
	r->cur = SIZE_MAX;
	rc = recdb_open(&r->db, path, false, msg);
	if (!rc)
		rc = rp_load(r, msg);
	if (rc)
		goto out_close;
	rp_load_idents(r);
	r->rows = recdb_prepare(&r->db,
				"SELECT scope, field, total, fresh, tid FROM"
				" value WHERE refresh = ?",
				msg);
	r->state = recdb_prepare(
		&r->db,
		"SELECT scope, field, total, fresh, tid, max(refresh) FROM"
		" value WHERE refresh <= ?1 AND refresh >= ?2 GROUP BY scope,"
		" field",
		msg);
	r->vm_rows = recdb_prepare(&r->db,
				   "SELECT pid, name, flags, vcpus FROM vm"
				   " WHERE refresh = ?",
				   msg);
	r->vm_state =
		recdb_prepare(&r->db,
			      "SELECT pid, name, flags, vcpus, max(refresh) FROM vm WHERE"
			      " refresh <= ?1 AND refresh >= ?2 GROUP BY pid",
			      msg);
	r->brk = rp_brk_open(&r->db, msg);
	r->lat = rp_lat_open(&r->db, msg);
	r->vt = rp_vt_open(&r->db, msg);
	if (!r->rows || !r->state || !r->vm_rows || !r->vm_state || !r->brk ||
	    !r->lat || !r->vt) {
		rc = -EINVAL;
		goto out_close;
	}
	r->hi = r->nrefs;
	if (from) {
		if (replay_parse_time(r, from, true, &t)) {
			rc = errmsg_set(msg, -EINVAL,
					"--from needs a time (YYYY-MM-DD HH:MM[:SS], HH:MM[:SS] or @SECONDS), not \"%s\"",
					from);
			goto out_close;
		}
		while (r->lo < r->nrefs && r->refs[r->lo].wall_ns < t)
			r->lo++;
	}
	if (to) {
		if (replay_parse_time(r, to, false, &t)) {
			rc = errmsg_set(msg, -EINVAL,
					"--to needs a time (YYYY-MM-DD HH:MM[:SS], HH:MM[:SS] or @SECONDS), not \"%s\"",
					to);
			goto out_close;
		}
		while (r->hi > r->lo && r->refs[r->hi - 1].wall_ns > t)
			r->hi--;
	}
	if (r->hi <= r->lo) {
		rc = errmsg_set(
			msg, -ENOENT,
			r->nrefs ?
				"%s holds no refresh between --from and --to: see its times with sqlite3 %s 'SELECT datetime(min(time), ''unixepoch'', ''localtime''), datetime(max(time), ''unixepoch'', ''localtime'') FROM refresh'" :
				"%s holds no refresh yet: record with kvmstat --record %s",
			path, path);
		goto out_close;
	}
	*out = r;
	return 0;
out_close:
	replay_close(r);
	return rc;
}

void replay_close(struct replay *r)
{
	if (!r)
		return;
	sqlite3_finalize(r->rows);
	sqlite3_finalize(r->state);
	sqlite3_finalize(r->vm_rows);
	sqlite3_finalize(r->vm_state);
	rp_brk_close(r->brk);
	rp_lat_close(r->lat);
	rp_vt_close(r->vt);
	free(r->sids);
	recdb_close(&r->db);
	for (size_t i = 0; i < r->nsessions; i++)
		free(r->sessions[i].sources);
	for (size_t i = 0; i < r->nfields; i++) {
		free(r->fields[i].name);
		free(r->fields[i].provider);
		free(r->fields[i].help);
	}
	for (size_t i = 0; i < r->nvms; i++) {
		free(r->vms[i].name);
		free(r->vms[i].vcpus);
	}
	free(r->vms);
	for (size_t i = 0; i < r->nidents; i++) {
		free(r->idents[i].vmm);
		free(r->idents[i].uuid);
		free(r->idents[i].unit);
		free(r->idents[i].pod);
	}
	free(r->idents);
	free(r->refs);
	free(r->sessions);
	free(r->fields);
	free(r->scopes);
	free(r->cells);
	hashtab_free(&r->index);
	free(r);
}

size_t replay_count(const struct replay *r)
{
	return r->hi - r->lo;
}

size_t replay_pos(const struct replay *r)
{
	return r->cur == SIZE_MAX ? SIZE_MAX : r->cur - r->lo;
}

struct timespec replay_wall(const struct replay *r, size_t i)
{
	int64_t ns = r->refs[r->lo + i].wall_ns;

	return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000ll),
				  .tv_nsec = (long)(ns % 1000000000ll) };
}

size_t replay_find(const struct replay *r, int64_t ns)
{
	size_t i = 0;

	while (i + 1 < replay_count(r) && r->refs[r->lo + i + 1].wall_ns <= ns)
		i++;
	return i;
}

static const struct rp_session *rp_session(const struct replay *r, size_t i)
{
	for (size_t s = 0; s < r->nsessions; s++)
		if (r->sessions[s].id == r->refs[r->lo + i].session)
			return &r->sessions[s];
	return NULL;
}

const char *replay_sources(const struct replay *r, size_t i)
{
	const struct rp_session *s = rp_session(r, i);

	return s && s->sources ? s->sources : "";
}

double replay_delay(const struct replay *r, size_t i)
{
	const struct rp_session *s = rp_session(r, i);

	return s ? s->delay : 0;
}

/* Sets the state of a cell from a row (scope, field, total, fresh, tid). */
static void rp_cell_row(struct replay *r, sqlite3_stmt *st)
{
	long long scope = sqlite3_column_int64(st, 0);
	long long field = sqlite3_column_int64(st, 1);
	uint32_t h = hashtab_hash3((uint32_t)scope, (uint32_t)field, 3);
	struct hashtab_iter it = hashtab_iter(&r->index, h);
	struct rp_cell *c = NULL;
	long i;

	if (scope < 0 || (size_t)scope >= r->nscopes || field < 1 ||
	    (size_t)field >= r->nfields || !r->fields[field].name)
		return;
	while (!c && (i = hashtab_next(&r->index, &it)) >= 0)
		if (r->cells[i].scope == scope && r->cells[i].field == field)
			c = &r->cells[i];
	if (!c) {
		if (r->ncells == r->capcells) {
			r->capcells = r->capcells ? 2 * r->capcells : 1024;
			r->cells = xrealloc(r->cells,
					    r->capcells * sizeof(*r->cells));
		}
		hashtab_add(&r->index, h, r->ncells);
		c = &r->cells[r->ncells++];
		c->scope = scope;
		c->field = field;
	}
	c->total = (uint64_t)sqlite3_column_int64(st, 2);
	c->fresh = sqlite3_column_int(st, 3);
	c->tid = (pid_t)sqlite3_column_int64(st, 4);
}

/* Sets a VM's state from a row (pid, name, flags, vcpus). */
static void rp_vm_row(struct replay *r, sqlite3_stmt *st)
{
	pid_t pid = (pid_t)sqlite3_column_int64(st, 0);
	struct rp_vm *v = NULL;

	for (size_t i = 0; i < r->nvms && !v; i++)
		if (r->vms[i].pid == pid)
			v = &r->vms[i];
	if (!v) {
		r->vms = xrealloc(r->vms, (r->nvms + 1) * sizeof(*r->vms));
		v = &r->vms[r->nvms++];
		memset(v, 0, sizeof(*v));
		v->pid = pid;
	}
	free(v->name);
	free(v->vcpus);
	v->name = rp_text(st, 1);
	v->flags = (unsigned int)sqlite3_column_int(st, 2);
	v->vcpus = rp_text(st, 3);
}

/* Runs st (bound) over its rows with row(). */
static int rp_rows(struct replay *r, sqlite3_stmt *st,
		   void (*row)(struct replay *, sqlite3_stmt *),
		   struct errmsg *msg)
{
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		row(r, st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 :
				   recdb_fail(&r->db, rc, "cannot read", msg);
}

/* The rows of refresh k into the state. */
static int rp_apply(struct replay *r, size_t k, struct errmsg *msg)
{
	int rc;

	sqlite3_bind_int64(r->rows, 1, r->refs[k].id);
	rc = rp_rows(r, r->rows, rp_cell_row, msg);
	sqlite3_bind_int64(r->vm_rows, 1, r->refs[k].id);
	return rc ? rc : rp_rows(r, r->vm_rows, rp_vm_row, msg);
}

/* The first refresh of k's session. */
static size_t rp_session_start(const struct replay *r, size_t k)
{
	while (k > 0 && r->refs[k - 1].session == r->refs[k].session)
		k--;
	return k;
}

/* The refresh a fold over to k counts the breakdowns' rates from: the
 * one held (from), or with no tables there the session's first. */
static size_t rp_brk_since(const struct replay *r, long long from, size_t k)
{
	if (from && rp_brk_tables(r->brk))
		return r->cur;
	return rp_session_start(r, k);
}

/* The whole state at refresh k, from nothing. */
static int rp_state_at(struct replay *r, size_t k, struct errmsg *msg)
{
	long long first = r->refs[rp_session_start(r, k)].id;
	int rc;

	r->ncells = 0;
	hashtab_clear(&r->index);
	for (size_t i = 0; i < r->nvms; i++) {
		free(r->vms[i].name);
		free(r->vms[i].vcpus);
	}
	r->nvms = 0;
	sqlite3_bind_int64(r->state, 1, r->refs[k].id);
	sqlite3_bind_int64(r->state, 2, first);
	rc = rp_rows(r, r->state, rp_cell_row, msg);
	sqlite3_bind_int64(r->vm_state, 1, r->refs[k].id);
	sqlite3_bind_int64(r->vm_state, 2, first);
	return rc ? rc : rp_rows(r, r->vm_state, rp_vm_row, msg);
}

/* One fold: the total of every cell (read at the refresh, or all) as
 * readings at mono. */
static void rp_fold(struct replay *r, struct stats *s, bool all, int64_t mono)
{
	for (size_t i = 0; i < r->ncells; i++) {
		const struct rp_cell *c = &r->cells[i];

		if (!all && !c->fresh)
			continue;
		sample_set_push(&s->set, r->fields[c->field].sid,
				r->scopes[c->scope].pid,
				r->scopes[c->scope].vcpu, c->tid, c->total, 0);
	}
	s->set.src = NULL;
	stats_update(s, (uint64_t)mono);
}

/* The directory of VMs as recorded. */
static void rp_vmdir(const struct replay *r, struct vmdir *d, bool listed)
{
	vmdir_free(d);
	vmdir_init(d);
	for (size_t i = 0; i < r->nvms; i++) {
		const struct rp_vm *v = &r->vms[i];
		struct vmdir_vm *vm;
		struct vmdir_vcpu *vc = NULL;
		size_t n = 0;
		const char *p = v->vcpus;

		if (v->flags & RECORDER_VM_GONE)
			continue;
		vm = vmdir_get(d, v->pid);
		if (v->flags & RECORDER_VM_NAMED)
			vmdir_set_name(vm, v->name);
		for (size_t k = 0; k < r->nidents; k++)
			if (r->idents[k].pid == v->pid && r->idents[k].vmm)
				vmdir_set_ident(vm, r->idents[k].vmm,
						r->idents[k].uuid,
						r->idents[k].unit,
						r->idents[k].pod);
		while (p && *p) {
			int idx, tid, used;

			if (sscanf(p, "%d:%d%n", &idx, &tid, &used) != 2)
				break;
			vc = xrealloc(vc, (n + 1) * sizeof(*vc));
			vc[n++] = (struct vmdir_vcpu){ idx, tid };
			p += used;
			p += strspn(p, " ");
		}
		if (v->flags & RECORDER_VM_VCPUS_READ)
			vmdir_set_vcpus(vm, vc, n);
		free(vc);
		vm->checked = v->flags & RECORDER_VM_CHECKED;
		vm->alive = v->flags & RECORDER_VM_ALIVE;
		vm->running = v->flags & RECORDER_VM_RUNNING;
	}
	d->listed = listed;
}

int replay_feed(struct replay *r, size_t i, enum replay_how how,
		struct stats *s, struct vmdir *d, struct errmsg *msg)
{
	size_t k = r->lo + i;
	long long from = 0; /* the refresh the breakdowns fold on from */
	int rc = 0;

	if (k >= r->hi)
		return errmsg_set(msg, -ERANGE, "no such refresh");
	if (how != REPLAY_START && r->cur != SIZE_MAX && k > r->cur &&
	    (k == r->cur + 1 || how == REPLAY_OVER) &&
	    r->refs[k].session == r->refs[r->cur].session) {
		from = r->refs[r->cur].id;
		for (size_t j = r->cur + 1; j <= k && !rc; j++)
			rc = rp_apply(r, j, msg);
		if (rc)
			return rc;
	} else {
		bool include_past = true;

		stats_free(s);
		stats_init(s, include_past);
		replay_fields(r, &s->fields);
		if (how != REPLAY_START && k > 0 &&
		    r->refs[k - 1].session == r->refs[k].session) {
			rc = rp_state_at(r, k - 1, msg);
			if (rc)
				return rc;
			/* every cell seen, then the ones read there */
			rp_fold(r, s, true, r->refs[k - 1].mono_ns - 1);
			rp_fold(r, s, false, r->refs[k - 1].mono_ns);
			rc = rp_apply(r, k, msg);
		} else {
			rc = rp_state_at(r, k, msg);
		}
		if (rc)
			return rc;
	}
	rc = rp_brk_feed(r->brk, r->refs[rp_session_start(r, k)].id, from,
			 r->refs[k].id, how == REPLAY_OVER && from,
			 (r->refs[k].wall_ns -
			  r->refs[rp_brk_since(r, from, k)].wall_ns) /
				 1e9,
			 msg);
	if (!rc)
		rc = rp_lat_feed(r->lat, r->refs[rp_session_start(r, k)].id,
				 from, r->refs[k].id, msg);
	/* over a window, vCPU time's intervals summed from its first */
	if (!rc)
		rc = rp_vt_feed(r->vt, how == REPLAY_OVER ? from : 0,
				r->refs[k].id, msg);
	if (rc)
		return rc;
	rp_fold(r, s, false, r->refs[k].mono_ns);
	s->wall = replay_wall(r, i);
	rp_vmdir(r, d, r->refs[k].listed);
	r->cur = k;
	return 0;
}
