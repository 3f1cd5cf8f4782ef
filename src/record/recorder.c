// SPDX-License-Identifier: GPL-2.0-only
/*
 * The flight recorder. Each refresh is one transaction: a row in refresh,
 * the fields that are new, and a row in value for every cell (a field in
 * one scope) whose state (total, delta, read this refresh, thread) is not
 * the one it had at the refresh before; a VM whose name, vCPU threads or
 * liveness changed gets a row in vm. A missing row therefore means "as at
 * the refresh before", so idle VMs cost nothing per refresh, and summing
 * delta over the rows of a window is exact. --record-keep drops the
 * oldest refreshes, first carrying the state they held forward into the
 * first refresh kept, so the recording always starts with whole state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hashtab.h"
#include "rec_brk.h"
#include "rec_lat.h"
#include "rec_vt.h"
#include "recdb.h"
#include "recorder.h"
#include "util.h"

/* What a cell was at the last refresh recorded. */
struct rec_cell {
	uint64_t total;
	int64_t delta;
	pid_t tid;
	bool seen, fresh;
};

/* What a VM was at the last refresh recorded. */
struct rec_vm {
	pid_t pid;
	char *name;	    /* owned, or NULL */
	unsigned int flags; /* RECORDER_VM_* */
	char *vcpus;	    /* "INDEX:TID ...", owned, or NULL */
	bool mark;	    /* still in the directory this refresh */
	bool ident;	    /* who it is is written (vm_ident) */
};

/* How often the size or age bound is looked at, in refreshes. */
#define REC_KEEP_EVERY 16

struct recorder {
	struct recdb db;
	struct recorder_cfg cfg;
	long long session;
	long long *field_id; /* db id by stats field id */
	size_t nfields;
	/* scopes: (pid, vcpu) -> db id */
	struct {
		pid_t pid;
		int vcpu;
		long long id;
	} * scopes;
	size_t nscopes, capscopes;
	struct hashtab scope_index;
	long long *key_scope;	      /* db scope by stats key index */
	struct rec_cell *sum, *cells; /* last state, by field / key */
	size_t nsum, ncells;
	struct rec_vm *vms;
	size_t nvms;
	unsigned long writes;
	bool restart;	     /* the stats started afresh: a new session */
	long long refresh;   /* the last refresh written, or 0 */
	struct rec_brk *brk; /* the breakdowns written last */
	struct rec_lat *lat; /* exit latency written last */
	struct rec_vt *vt;   /* vCPU time's statements */
	sqlite3_stmt *ins_refresh, *ins_field, *get_field, *ins_scope,
		*ins_value, *ins_vm, *ins_ident;
};

const char *const recorder_kinds[3] = { "counter", "gauge", "peak" };
const char *const recorder_units[5] = { NULL, "bytes", "seconds", "cycles",
					"boolean" };
const char *const recorder_hists[3] = { NULL, "linear", "log2" };

static int rec_session(struct recorder *r, struct errmsg *msg);

/* Binds text or NULL. */
static void rec_bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/* Runs a prepared insert once; 0 or -errno with a line. */
static int rec_step(struct recorder *r, sqlite3_stmt *st, struct errmsg *msg)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ?
		       0 :
		       recdb_fail(&r->db, rc, "cannot record", msg);
}

/* The db id of every field of t not recorded yet (inserted when new). */
static int rec_fields(struct recorder *r, const struct field_table *t,
		      struct errmsg *msg)
{
	if (t->n <= r->nfields)
		return 0;
	r->field_id = xrealloc(r->field_id, t->n * sizeof(*r->field_id));
	for (size_t i = r->nfields; i < t->n; i++) {
		const struct field_info *f = &t->v[i];
		sqlite3_stmt *st = r->ins_field;
		int rc;

		rec_bind_text(st, 1, f->name);
		if (f->parent >= 0 && (size_t)f->parent < i)
			sqlite3_bind_int64(st, 2, r->field_id[f->parent]);
		rec_bind_text(st, 3,
			      recorder_kinds[f->type <= FIELD_PEAK ? f->type :
								     0]);
		rec_bind_text(st, 4,
			      f->unit <= UNIT_BOOLEAN ?
				      recorder_units[f->unit] :
				      NULL);
		sqlite3_bind_int(st, 5, f->exponent);
		sqlite3_bind_int(st, 6, f->base ? (int)f->base : 10);
		rec_bind_text(st, 7,
			      f->hist <= HIST_LOG2 ? recorder_hists[f->hist] :
						     NULL);
		if (f->bucket >= 0) {
			sqlite3_bind_int(st, 8, f->bucket);
			sqlite3_bind_int64(st, 9, (sqlite3_int64)f->bucket_lo);
			if (f->bucket_hi != UINT64_MAX)
				sqlite3_bind_int64(st, 10,
						   (sqlite3_int64)f->bucket_hi);
		}
		sqlite3_bind_int(st, 11, (int)f->flags);
		rec_bind_text(st, 12, f->provider);
		rec_bind_text(st, 13, f->help);
		rc = rec_step(r, st, msg);
		if (rc)
			return rc;
		/* new, or recorded by an earlier session of the file */
		rec_bind_text(r->get_field, 1, f->name);
		if (sqlite3_step(r->get_field) != SQLITE_ROW) {
			sqlite3_reset(r->get_field);
			return recdb_fail(&r->db, sqlite3_errcode(r->db.db),
					  "cannot record", msg);
		}
		r->field_id[i] = sqlite3_column_int64(r->get_field, 0);
		sqlite3_reset(r->get_field);
		r->nfields = i + 1;
	}
	return 0;
}

/* The db id of scope (pid, vcpu), inserted when new; -1 on a failure. */
static long long rec_scope(struct recorder *r, pid_t pid, int vcpu,
			   struct errmsg *msg)
{
	uint32_t h = hashtab_hash3((uint32_t)pid, (uint32_t)vcpu, 7);
	struct hashtab_iter it = hashtab_iter(&r->scope_index, h);
	long i;

	while ((i = hashtab_next(&r->scope_index, &it)) >= 0)
		if (r->scopes[i].pid == pid && r->scopes[i].vcpu == vcpu)
			return r->scopes[i].id;
	sqlite3_bind_int64(r->ins_scope, 1, pid);
	sqlite3_bind_int(r->ins_scope, 2, vcpu);
	if (sqlite3_step(r->ins_scope) != SQLITE_ROW) {
		recdb_fail(&r->db, sqlite3_errcode(r->db.db), "cannot record",
			   msg);
		sqlite3_reset(r->ins_scope);
		return -1;
	}
	if (r->nscopes == r->capscopes) {
		r->capscopes = r->capscopes ? 2 * r->capscopes : 256;
		r->scopes = xrealloc(r->scopes,
				     r->capscopes * sizeof(*r->scopes));
	}
	r->scopes[r->nscopes].pid = pid;
	r->scopes[r->nscopes].vcpu = vcpu;
	r->scopes[r->nscopes].id = sqlite3_column_int64(r->ins_scope, 0);
	sqlite3_reset(r->ins_scope);
	hashtab_add(&r->scope_index, h, r->nscopes);
	return r->scopes[r->nscopes++].id;
}

/* Records cell c of a field in a scope when its state changed. */
static int rec_cell(struct recorder *r, struct rec_cell *last,
		    long long refresh, long long scope, long long field,
		    const struct stat_cell *c, struct errmsg *msg)
{
	sqlite3_stmt *st = r->ins_value;

	if (!c->seen ||
	    (last->seen && last->total == c->total && last->delta == c->delta &&
	     last->fresh == c->fresh && last->tid == c->tid))
		return 0;
	*last = (struct rec_cell){ .total = c->total,
				   .delta = c->delta,
				   .tid = c->tid,
				   .seen = true,
				   .fresh = c->fresh };
	sqlite3_bind_int64(st, 1, refresh);
	sqlite3_bind_int64(st, 2, scope);
	sqlite3_bind_int64(st, 3, field);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)c->total);
	sqlite3_bind_int64(st, 5, c->delta);
	sqlite3_bind_int(st, 6, c->fresh);
	if (c->tid)
		sqlite3_bind_int64(st, 7, c->tid);
	return rec_step(r, st, msg);
}

/* Every cell of s whose state changed. */
static int rec_cells(struct recorder *r, const struct stats *s,
		     long long refresh, struct errmsg *msg)
{
	long long host;
	int rc;

	if (s->nsum > r->nsum) {
		r->sum = xrealloc(r->sum, s->nsum * sizeof(*r->sum));
		memset(r->sum + r->nsum, 0,
		       (s->nsum - r->nsum) * sizeof(*r->sum));
		r->nsum = s->nsum;
	}
	if (s->nkeys > r->ncells) {
		r->cells = xrealloc(r->cells, s->nkeys * sizeof(*r->cells));
		r->key_scope = xrealloc(r->key_scope,
					s->nkeys * sizeof(*r->key_scope));
		memset(r->cells + r->ncells, 0,
		       (s->nkeys - r->ncells) * sizeof(*r->cells));
		for (size_t i = r->ncells; i < s->nkeys; i++)
			r->key_scope[i] = -1;
		r->ncells = s->nkeys;
	}
	host = rec_scope(r, 0, SAMPLE_ALL_VCPUS, msg);
	if (host < 0)
		return -EIO;
	for (size_t f = 0; f < s->nsum && f < r->nfields; f++) {
		rc = rec_cell(r, &r->sum[f], refresh, host, r->field_id[f],
			      &s->sum[f], msg);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < s->nkeys; i++) {
		const struct stats_key *k = &s->keys[i];

		if (!s->cells[i].seen || k->field < 0 ||
		    (size_t)k->field >= r->nfields)
			continue;
		if (r->key_scope[i] < 0) {
			r->key_scope[i] = rec_scope(r, k->pid, k->vcpu, msg);
			if (r->key_scope[i] < 0)
				return -EIO;
		}
		rc = rec_cell(r, &r->cells[i], refresh, r->key_scope[i],
			      r->field_id[k->field], &s->cells[i], msg);
		if (rc)
			return rc;
	}
	return 0;
}

/* "INDEX:TID ..." of a VM's vCPU threads (caller frees), or NULL. */
static char *rec_vcpus(const struct vmdir_vm *vm)
{
	struct {
		char *p;
		size_t len;
	} b = { NULL, 0 };
	FILE *f;

	if (!vm->nvcpus)
		return NULL;
	f = open_memstream(&b.p, &b.len);
	if (!f)
		util_die("out of memory");
	for (size_t i = 0; i < vm->nvcpus; i++)
		fprintf(f, "%s%d:%d", i ? " " : "", vm->vcpus[i].index,
			(int)vm->vcpus[i].tid);
	fclose(f);
	return b.p;
}

static bool rec_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* One row of vm. */
static int rec_vm_row(struct recorder *r, long long refresh,
		      const struct rec_vm *v, struct errmsg *msg)
{
	sqlite3_bind_int64(r->ins_vm, 1, refresh);
	sqlite3_bind_int64(r->ins_vm, 2, v->pid);
	rec_bind_text(r->ins_vm, 3, v->name);
	sqlite3_bind_int(r->ins_vm, 4, (int)v->flags);
	rec_bind_text(r->ins_vm, 5, v->vcpus);
	return rec_step(r, r->ins_vm, msg);
}

/* Who VM vm is, once per pid (a pid is one VM while it runs). */
static int rec_ident_row(struct recorder *r, const struct vmdir_vm *vm,
			 struct errmsg *msg)
{
	sqlite3_bind_int64(r->ins_ident, 1, vm->pid);
	rec_bind_text(r->ins_ident, 2, vm->vmm);
	rec_bind_text(r->ins_ident, 3, vm->uuid);
	rec_bind_text(r->ins_ident, 4, vm->unit);
	rec_bind_text(r->ins_ident, 5, vm->pod);
	return rec_step(r, r->ins_ident, msg);
}

/* The VMs whose entry changed, and those that left the directory. */
static int rec_vms(struct recorder *r, const struct vmdir *d, long long refresh,
		   struct errmsg *msg)
{
	int rc;

	for (size_t i = 0; i < r->nvms; i++)
		r->vms[i].mark = false;
	for (size_t i = 0; d && i < d->n; i++) {
		const struct vmdir_vm *vm = &d->v[i];
		struct rec_vm now = {
			.pid = vm->pid,
			.name = vm->name,
			.flags = (vm->named ? RECORDER_VM_NAMED : 0) |
				 (vm->checked ? RECORDER_VM_CHECKED : 0) |
				 (vm->alive ? RECORDER_VM_ALIVE : 0) |
				 (vm->running ? RECORDER_VM_RUNNING : 0) |
				 (vm->vcpus_read ? RECORDER_VM_VCPUS_READ : 0),
		};
		struct rec_vm *last = NULL;

		for (size_t j = 0; j < r->nvms && !last; j++)
			if (r->vms[j].pid == vm->pid)
				last = &r->vms[j];
		now.vcpus = rec_vcpus(vm);
		now.ident = last && last->ident;
		if (vm->vmm && !now.ident) {
			rc = rec_ident_row(r, vm, msg);
			if (rc) {
				free(now.vcpus);
				return rc;
			}
			now.ident = true;
			if (last)
				last->ident = true;
		}
		if (last && last->flags == now.flags &&
		    rec_same(last->name, now.name) &&
		    rec_same(last->vcpus, now.vcpus)) {
			last->mark = true;
			free(now.vcpus);
			continue;
		}
		rc = rec_vm_row(r, refresh, &now, msg);
		if (!last) {
			r->vms = xrealloc(r->vms,
					  (r->nvms + 1) * sizeof(*r->vms));
			last = &r->vms[r->nvms++];
			memset(last, 0, sizeof(*last));
		}
		free(last->name);
		free(last->vcpus);
		*last = now;
		last->name = now.name ? xstrdup(now.name) : NULL;
		last->mark = true;
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < r->nvms;) {
		struct rec_vm *v = &r->vms[i];

		if (v->mark) {
			i++;
			continue;
		}
		free(v->name);
		free(v->vcpus);
		*v = (struct rec_vm){ .pid = v->pid, .flags = RECORDER_VM_GONE };
		rc = rec_vm_row(r, refresh, v, msg);
		if (rc)
			return rc;
		r->vms[i] = r->vms[--r->nvms];
	}
	return 0;
}

/*
 * Drops the refreshes before keep (of the current session): the state
 * each cell and VM had there is first carried into refresh keep, where it
 * had no row, so the recording still starts with whole state.
 */
static int rec_drop_before(struct recorder *r, long long keep,
			   struct errmsg *msg)
{
	char *sess = xasprintf("SELECT min(id) FROM refresh WHERE session = %lld",
			       r->session);
	long long first = recdb_int(&r->db, sess, keep);
	char *brk = rec_brk_drop_sql(keep, first);
	char *lat = rec_lat_drop_sql(keep, first);
	char *vt = rec_vt_drop_sql(keep);
	char *sql = xasprintf(
		"BEGIN;%s%s%s"
		"INSERT OR IGNORE INTO value SELECT %lld, scope, field, total,"
		" delta, fresh, tid FROM (SELECT scope, field, total, delta,"
		" fresh, tid, max(refresh) FROM value WHERE refresh < %lld"
		" AND refresh >= (SELECT min(id) FROM refresh WHERE session ="
		" %lld) GROUP BY scope, field);"
		"INSERT OR IGNORE INTO vm SELECT %lld, pid, name, flags, vcpus"
		" FROM (SELECT pid, name, flags, vcpus, max(refresh) FROM vm"
		" WHERE refresh < %lld AND refresh >= (SELECT min(id) FROM"
		" refresh WHERE session = %lld) GROUP BY pid);"
		"DELETE FROM vm WHERE refresh < %lld;"
		"DELETE FROM value WHERE refresh < %lld;"
		"DELETE FROM refresh WHERE id < %lld;"
		"DELETE FROM session WHERE id <> %lld AND id NOT IN"
		" (SELECT session FROM refresh);"
		"COMMIT",
		brk, lat, vt, keep, keep, r->session, keep, keep, r->session,
		keep, keep, keep, r->session);
	int rc = recdb_exec(&r->db, sql, msg);

	free(sql);
	free(brk);
	free(lat);
	free(vt);
	free(sess);
	if (rc)
		sqlite3_exec(r->db.db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* --record-keep: drops what is older than the duration, or the oldest
 * tenth while the pages in use exceed the size. */
static int rec_keep(struct recorder *r, const struct stats *s,
		    struct errmsg *msg)
{
	long long keep = -1;

	if (r->cfg.keep_ns) {
		double cutoff = s->wall.tv_sec + s->wall.tv_nsec / 1e9 -
				r->cfg.keep_ns / 1e9;
		char *sql =
			xasprintf("SELECT min(id) FROM refresh WHERE time >= %.9f",
				  cutoff);

		keep = recdb_int(&r->db, sql, -1);
		free(sql);
	}
	if (r->cfg.keep_bytes) {
		long long used = (recdb_int(&r->db, "PRAGMA page_count", 0) -
				  recdb_int(&r->db, "PRAGMA freelist_count",
					    0)) *
				 recdb_int(&r->db, "PRAGMA page_size", 4096);

		if (used > (long long)r->cfg.keep_bytes) {
			long long lo = recdb_int(&r->db,
						 "SELECT min(id) FROM refresh",
						 0);
			long long hi = recdb_int(&r->db,
						 "SELECT max(id) FROM refresh",
						 0);
			long long k = lo + (hi - lo + 9) / 10;

			keep = keep > k ? keep : k;
		}
	}
	if (keep <= recdb_int(&r->db, "SELECT min(id) FROM refresh", keep))
		return 0;
	return rec_drop_before(r, keep, msg);
}

/* The session's sources, when they changed (the monitor reopened them). */
static int rec_sources(struct recorder *r, const char *sources,
		       struct errmsg *msg)
{
	sqlite3_stmt *st;
	int rc;

	if (!sources || rec_same(sources, r->cfg.sources))
		return 0;
	st = recdb_prepare(&r->db,
			   "UPDATE session SET sources = ? WHERE id = ?", msg);
	if (!st)
		return -EIO;
	rec_bind_text(st, 1, sources);
	sqlite3_bind_int64(st, 2, r->session);
	rc = rec_step(r, st, msg);
	sqlite3_finalize(st);
	free((char *)r->cfg.sources);
	r->cfg.sources = xstrdup(sources);
	return rc;
}

int recorder_write(struct recorder *r, const struct stats *s,
		   const struct vmdir *vms, const char *sources,
		   struct errmsg *msg)
{
	long long refresh;
	int rc;

	rc = recdb_exec(&r->db, "BEGIN", msg);
	if (!rc && r->restart) {
		rc = rec_session(r, msg);
		r->restart = false;
	}
	if (!rc)
		rc = rec_sources(r, sources, msg);
	if (rc) {
		sqlite3_exec(r->db.db, "ROLLBACK", NULL, NULL, NULL);
		return rc;
	}
	sqlite3_bind_int64(r->ins_refresh, 1, r->session);
	sqlite3_bind_double(r->ins_refresh, 2,
			    s->wall.tv_sec + s->wall.tv_nsec / 1e9);
	sqlite3_bind_int64(r->ins_refresh, 3,
			   (sqlite3_int64)s->wall.tv_sec * 1000000000ll +
				   s->wall.tv_nsec);
	sqlite3_bind_int64(r->ins_refresh, 4, (sqlite3_int64)s->now_ns);
	sqlite3_bind_int(r->ins_refresh, 5, vms && vms->listed);
	rc = rec_step(r, r->ins_refresh, msg);
	refresh = sqlite3_last_insert_rowid(r->db.db);
	r->refresh = refresh;
	if (!rc)
		rc = rec_fields(r, &s->fields, msg);
	if (!rc)
		rc = rec_cells(r, s, refresh, msg);
	if (!rc)
		rc = rec_vms(r, vms, refresh, msg);
	if (!rc)
		rc = recdb_exec(&r->db, "COMMIT", msg);
	if (rc) {
		sqlite3_exec(r->db.db, "ROLLBACK", NULL, NULL, NULL);
		return rc;
	}
	if (++r->writes % REC_KEEP_EVERY == 0 &&
	    (r->cfg.keep_ns || r->cfg.keep_bytes))
		return rec_keep(r, s, msg);
	return 0;
}

/* The statements of every refresh, then a session. */
static int rec_prepare(struct recorder *r, struct errmsg *msg)
{
	r->ins_refresh =
		recdb_prepare(&r->db,
			      "INSERT INTO refresh(session, time, wall_ns, mono_ns, listed)"
			      " VALUES (?, ?, ?, ?, ?)",
			      msg);
	r->ins_field = recdb_prepare(
		&r->db,
		"INSERT OR IGNORE INTO field(name, parent, kind, unit,"
		" exponent, base, hist, bucket, bucket_lo, bucket_hi, flags,"
		" provider, help) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
		msg);
	r->get_field = recdb_prepare(&r->db,
				     "SELECT id FROM field WHERE name = ?",
				     msg);
	r->ins_scope =
		recdb_prepare(&r->db,
			      "INSERT INTO scope(pid, vcpu) VALUES (?1, ?2) ON CONFLICT"
			      " DO UPDATE SET pid = ?1 RETURNING id",
			      msg);
	r->ins_value =
		recdb_prepare(&r->db,
			      "INSERT INTO value(refresh, scope, field, total, delta,"
			      " fresh, tid) VALUES (?, ?, ?, ?, ?, ?, ?)",
			      msg);
	r->ins_vm = recdb_prepare(&r->db,
				  "INSERT INTO vm(refresh, pid, name, flags,"
				  " vcpus) VALUES (?, ?, ?, ?, ?)",
				  msg);
	r->ins_ident = recdb_prepare(&r->db,
				     "INSERT OR REPLACE INTO vm_ident(pid, vmm,"
				     " uuid, unit, pod) VALUES (?, ?, ?, ?, ?)",
				     msg);
	if (!r->ins_refresh || !r->ins_field || !r->get_field ||
	    !r->ins_scope || !r->ins_value || !r->ins_vm || !r->ins_ident)
		return -EIO;
	return rec_session(r, msg);
}

/* A new session: the run's stats start afresh (its first refresh writes
 * every value again, and a replay starts its stats afresh there too). */
static int rec_session(struct recorder *r, struct errmsg *msg)
{
	sqlite3_stmt *st;
	char host[256] = ""; /* bound to st until its step */

	r->nfields = 0;
	r->refresh = 0;
	rec_brk_restart(r->brk);
	rec_lat_restart(r->lat);
	r->nsum = 0;
	r->ncells = 0;
	for (size_t i = 0; i < r->nvms; i++) {
		free(r->vms[i].name);
		free(r->vms[i].vcpus);
	}
	r->nvms = 0;
	st = recdb_prepare(&r->db,
			   "INSERT INTO session(started, host, sources, delay,"
			   " kvmstat) VALUES ((julianday('now') - 2440587.5) *"
			   " 86400.0, ?, ?, ?, 'kvmstat')",
			   msg);
	if (!st)
		return -EIO;
	gethostname(host, sizeof(host) - 1);
	rec_bind_text(st, 1, host);
	rec_bind_text(st, 2, r->cfg.sources);
	sqlite3_bind_double(st, 3, r->cfg.delay);
	if (sqlite3_step(st) != SQLITE_DONE) {
		int rc = recdb_fail(&r->db, sqlite3_errcode(r->db.db),
				    "cannot record", msg);

		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	r->session = sqlite3_last_insert_rowid(r->db.db);
	return 0;
}

int recorder_open(struct recorder **out, const struct recorder_cfg *cfg,
		  struct errmsg *msg)
{
	struct recorder *r = xcalloc(1, sizeof(*r));
	int rc;

	r->cfg = *cfg;
	r->cfg.path = xstrdup(cfg->path);
	r->cfg.sources = cfg->sources ? xstrdup(cfg->sources) : NULL;
	hashtab_init(&r->scope_index);
	r->brk = rec_brk_new();
	r->lat = rec_lat_new();
	r->vt = rec_vt_new();
	rc = recdb_open(&r->db, cfg->path, true, msg);
	if (!rc)
		rc = rec_prepare(r, msg);
	if (rc) {
		recorder_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

int recorder_breakdown(struct recorder *r, const struct snap_breakdown *brk,
		       struct errmsg *msg)
{
	int rc;

	if (!r->refresh || rec_brk_idle(r->brk, brk))
		return 0;
	rc = recdb_exec(&r->db, "BEGIN", msg);
	if (!rc)
		rc = rec_brk_write(r->brk, &r->db, r->refresh, brk, msg);
	if (!rc)
		rc = recdb_exec(&r->db, "COMMIT", msg);
	if (rc)
		sqlite3_exec(r->db.db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int recorder_latency(struct recorder *r, const struct field_table *fields,
		     const struct hist_set *hs, const struct snap_latency *info,
		     struct errmsg *msg)
{
	int rc;

	if (!r->refresh || rec_lat_idle(r->lat, info))
		return 0;
	rc = recdb_exec(&r->db, "BEGIN", msg);
	if (!rc)
		rc = rec_fields(r, fields, msg);
	if (!rc)
		rc = rec_lat_write(r->lat, &r->db, r->refresh, r->field_id, hs,
				   info, msg);
	if (!rc)
		rc = recdb_exec(&r->db, "COMMIT", msg);
	if (rc)
		sqlite3_exec(r->db.db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int recorder_vcputime(struct recorder *r, const struct vcputime *vt,
		      struct errmsg *msg)
{
	int rc;

	if (!r->refresh || !vt)
		return 0;
	rc = recdb_exec(&r->db, "BEGIN", msg);
	if (!rc)
		rc = rec_vt_write(r->vt, &r->db, r->refresh, vt, msg);
	if (!rc)
		rc = recdb_exec(&r->db, "COMMIT", msg);
	if (rc)
		sqlite3_exec(r->db.db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

void recorder_restart(struct recorder *r)
{
	if (r)
		r->restart = true;
}

void recorder_close(struct recorder *r)
{
	if (!r)
		return;
	sqlite3_finalize(r->ins_refresh);
	sqlite3_finalize(r->ins_field);
	sqlite3_finalize(r->get_field);
	sqlite3_finalize(r->ins_scope);
	sqlite3_finalize(r->ins_value);
	sqlite3_finalize(r->ins_vm);
	sqlite3_finalize(r->ins_ident);
	rec_brk_free(r->brk);
	rec_lat_free(r->lat);
	rec_vt_free(r->vt);
	recdb_close(&r->db);
	for (size_t i = 0; i < r->nvms; i++) {
		free(r->vms[i].name);
		free(r->vms[i].vcpus);
	}
	free(r->vms);
	free(r->field_id);
	free(r->scopes);
	hashtab_free(&r->scope_index);
	free(r->key_scope);
	free(r->sum);
	free(r->cells);
	free((char *)r->cfg.path);
	free((char *)r->cfg.sources);
	free(r);
}
