// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where vCPU time goes in a recording (rec_vt.h). Each refresh it was
 * computed at has a vt_read row (what split which states), a vt_value row
 * per VM (vcpu -1, its vCPUs summed) and per vCPU with every state's total
 * and last interval in ns, and a vt_thread row per other thread of the
 * VMM. A refresh without a vt_read row showed none. A replay reads a
 * refresh's rows back as they were, or over a window sums the intervals.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec_vt.h"
#include "util.h"

/* The columns of vt_value after the row's facts: the totals
 * (STATE_ns), then the last interval's (STATE_delta_ns), in
 * enum vcputime_state's order. */
#define RV_COLS                                                             \
	"refresh, pid, vcpu, tid, name, fresh, interval_ns, merged,"        \
	" measured, guest_ns, kernel_ns, vmm_ns, halted_ns, waiting_ns,"    \
	" guest_kernel_ns, halted_vmm_ns, guest_delta_ns, kernel_delta_ns," \
	" vmm_delta_ns, halted_delta_ns, waiting_delta_ns,"                 \
	" guest_kernel_delta_ns, halted_vmm_delta_ns"
#define RV_TH_COLS \
	"refresh, pid, tid, name, vhost, total_ns, delta_ns, interval_ns"

struct rec_vt {
	sqlite3_stmt *ins_read, *ins_value, *ins_thread;
};

struct rec_vt *rec_vt_new(void)
{
	return xcalloc(1, sizeof(struct rec_vt));
}

void rec_vt_free(struct rec_vt *v)
{
	if (!v)
		return;
	sqlite3_finalize(v->ins_read);
	sqlite3_finalize(v->ins_value);
	sqlite3_finalize(v->ins_thread);
	free(v);
}

static int rv_step(struct recdb *db, sqlite3_stmt *st, struct errmsg *msg)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : recdb_fail(db, rc, "cannot record", msg);
}

/* A vt_value of row r of VM pid (name: a VM's guest, or NULL). */
static int rv_value(struct rec_vt *v, struct recdb *db, long long refresh,
		    pid_t pid, const char *name, const struct vcputime_row *r,
		    struct errmsg *msg)
{
	sqlite3_stmt *st = v->ins_value;
	int col = 10;

	sqlite3_bind_int64(st, 1, refresh);
	sqlite3_bind_int64(st, 2, pid);
	sqlite3_bind_int(st, 3, r->vcpu);
	sqlite3_bind_int64(st, 4, r->tid);
	if (name)
		sqlite3_bind_text(st, 5, name, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 6, r->fresh);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)r->interval_ns);
	sqlite3_bind_int64(st, 8, r->merged);
	sqlite3_bind_int64(st, 9, r->measured);
	for (int s = 0; s < VT_NSTATES; s++)
		sqlite3_bind_int64(st, col++, (sqlite3_int64)r->total_ns[s]);
	for (int s = 0; s < VT_NSTATES; s++)
		sqlite3_bind_int64(st, col++, (sqlite3_int64)r->delta_ns[s]);
	return rv_step(db, st, msg);
}

/* A vt_thread of thread t of VM pid. */
static int rv_thread(struct rec_vt *v, struct recdb *db, long long refresh,
		     pid_t pid, const struct vcputime_thread *t,
		     struct errmsg *msg)
{
	sqlite3_stmt *st = v->ins_thread;

	sqlite3_bind_int64(st, 1, refresh);
	sqlite3_bind_int64(st, 2, pid);
	sqlite3_bind_int64(st, 3, t->tid);
	sqlite3_bind_text(st, 4, t->name, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 5, t->vhost);
	sqlite3_bind_int64(st, 6, (sqlite3_int64)t->total_ns);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)t->delta_ns);
	sqlite3_bind_int64(st, 8, (sqlite3_int64)t->interval_ns);
	return rv_step(db, st, msg);
}

int rec_vt_write(struct rec_vt *v, struct recdb *db, long long refresh,
		 const struct vcputime *vt, struct errmsg *msg)
{
	int rc;

	if (!vt)
		return 0;
	if (!v->ins_read) {
		v->ins_read =
			recdb_prepare(db,
				      "INSERT OR REPLACE INTO vt_read(refresh, source)"
				      " VALUES (?, ?)",
				      msg);
		v->ins_value =
			recdb_prepare(db,
				      "INSERT OR REPLACE INTO vt_value(" RV_COLS
				      ") VALUES"
				      " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
				      " ?, ?, ?, ?, ?)",
				      msg);
		v->ins_thread =
			recdb_prepare(db,
				      "INSERT OR REPLACE INTO vt_thread(" RV_TH_COLS
				      ")"
				      " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
				      msg);
		if (!v->ins_read || !v->ins_value || !v->ins_thread)
			return -EIO;
	}
	sqlite3_bind_int64(v->ins_read, 1, refresh);
	if (vt->source)
		sqlite3_bind_text(v->ins_read, 2, vt->source, -1, SQLITE_STATIC);
	rc = rv_step(db, v->ins_read, msg);
	for (size_t i = 0; !rc && i < vt->nvms; i++) {
		const struct vcputime_vm *vm = &vt->vms[i];

		rc = rv_value(v, db, refresh, vm->pid, vm->guest, &vm->sum, msg);
		for (size_t k = 0; !rc && k < vm->nvcpus; k++)
			rc = rv_value(v, db, refresh, vm->pid, NULL,
				      &vm->vcpus[k], msg);
		for (size_t k = 0; !rc && k < vm->nthreads; k++)
			rc = rv_thread(v, db, refresh, vm->pid, &vm->threads[k],
				       msg);
	}
	return rc;
}

char *rec_vt_drop_sql(long long keep)
{
	return xasprintf("DELETE FROM vt_value WHERE refresh < %lld;"
			 "DELETE FROM vt_thread WHERE refresh < %lld;"
			 "DELETE FROM vt_read WHERE refresh < %lld;",
			 keep, keep, keep);
}

/* The replay's side: one refresh's rows. */
struct rp_vt {
	struct recdb *db;
	sqlite3_stmt *hdr, *any, *get_rows, *get_ths, *sum_rows, *sum_ths;
	bool on;
	char *source;		   /* owned */
	struct vcputime_row *rows; /* by (pid, vcpu), sums first */
	pid_t *row_pid;		   /* each row's VM */
	char **row_name;	   /* each row's guest (owned), or NULL */
	size_t nrows;
	struct vcputime_thread *ths; /* by (pid, tid) */
	pid_t *th_pid;
	size_t nths;
	struct vcputime_vm *vms;
	size_t nvms;
	struct vcputime out;
};

struct rp_vt *rp_vt_open(struct recdb *db, struct errmsg *msg)
{
	struct rp_vt *v = xcalloc(1, sizeof(*v));

	v->db = db;
	/* layout 2 wrote no vCPU time */
	if (!recdb_int(db,
		       "SELECT count(*) FROM sqlite_master WHERE name = 'vt_read'",
		       0))
		return v;
	v->hdr = recdb_prepare(db,
			       "SELECT source FROM vt_read WHERE refresh = ?",
			       msg);
	v->any = recdb_prepare(db,
			       "SELECT 1 FROM vt_read WHERE refresh >= ?1 AND"
			       " refresh <= ?2 LIMIT 1",
			       msg);
	v->get_rows = recdb_prepare(db,
				    "SELECT " RV_COLS
				    " FROM vt_value WHERE refresh"
				    " = ? ORDER BY pid, vcpu",
				    msg);
	v->get_ths = recdb_prepare(db,
				   "SELECT " RV_TH_COLS " FROM vt_thread WHERE"
				   " refresh = ? ORDER BY pid, tid",
				   msg);
	v->sum_rows = recdb_prepare(db,
				    "SELECT " RV_COLS " FROM vt_value WHERE"
				    " refresh > ?1 AND refresh < ?2",
				    msg);
	v->sum_ths = recdb_prepare(db,
				   "SELECT " RV_TH_COLS " FROM vt_thread WHERE"
				   " refresh > ?1 AND refresh < ?2",
				   msg);
	if (!v->hdr || !v->any || !v->get_rows || !v->get_ths || !v->sum_rows ||
	    !v->sum_ths) {
		rp_vt_close(v);
		return NULL;
	}
	return v;
}

/* Forgets the refresh read. */
static void rpv_clear(struct rp_vt *v)
{
	for (size_t i = 0; i < v->nrows; i++)
		free(v->row_name[i]);
	free(v->rows);
	free(v->row_pid);
	free(v->row_name);
	free(v->ths);
	free(v->th_pid);
	free(v->vms);
	free(v->source);
	v->rows = NULL;
	v->row_pid = NULL;
	v->row_name = NULL;
	v->ths = NULL;
	v->th_pid = NULL;
	v->vms = NULL;
	v->source = NULL;
	v->nrows = v->nths = v->nvms = 0;
	v->on = false;
}

void rp_vt_close(struct rp_vt *v)
{
	if (!v)
		return;
	rpv_clear(v);
	sqlite3_finalize(v->hdr);
	sqlite3_finalize(v->any);
	sqlite3_finalize(v->get_rows);
	sqlite3_finalize(v->get_ths);
	sqlite3_finalize(v->sum_rows);
	sqlite3_finalize(v->sum_ths);
	free(v);
}

bool rp_vt_any(struct rp_vt *v, long long lo, long long hi)
{
	bool any;

	if (!v->any)
		return false;
	sqlite3_bind_int64(v->any, 1, lo);
	sqlite3_bind_int64(v->any, 2, hi);
	any = sqlite3_step(v->any) == SQLITE_ROW;
	sqlite3_reset(v->any);
	return any;
}

static uint64_t rpv_u64(sqlite3_stmt *st, int col)
{
	return (uint64_t)sqlite3_column_int64(st, col);
}

/* A vt_value row (RV_COLS) into r. */
static void rpv_row(sqlite3_stmt *st, struct vcputime_row *r)
{
	int col = 9;

	r->vcpu = sqlite3_column_int(st, 2);
	r->tid = (pid_t)sqlite3_column_int64(st, 3);
	r->fresh = sqlite3_column_int(st, 5);
	r->interval_ns = rpv_u64(st, 6);
	r->merged = (unsigned)sqlite3_column_int64(st, 7);
	r->measured = (unsigned)sqlite3_column_int64(st, 8);
	for (int s = 0; s < VT_NSTATES; s++)
		r->total_ns[s] = rpv_u64(st, col++);
	for (int s = 0; s < VT_NSTATES; s++)
		r->delta_ns[s] = rpv_u64(st, col++);
}

/* A vt_thread row (RV_TH_COLS) into t. */
static void rpv_thread(sqlite3_stmt *st, struct vcputime_thread *t)
{
	const unsigned char *name = sqlite3_column_text(st, 3);

	t->tid = (pid_t)sqlite3_column_int64(st, 2);
	snprintf(t->name, sizeof(t->name), "%s", name ? (const char *)name : "");
	t->vhost = sqlite3_column_int(st, 4);
	t->total_ns = rpv_u64(st, 5);
	t->delta_ns = rpv_u64(st, 6);
	t->interval_ns = rpv_u64(st, 7);
}

/* The index of (pid, vcpu) among the rows, or -1. */
static long rpv_find_row(const struct rp_vt *v, pid_t pid, int vcpu)
{
	size_t lo = 0, hi = v->nrows;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (v->row_pid[m] < pid ||
		    (v->row_pid[m] == pid && v->rows[m].vcpu < vcpu))
			lo = m + 1;
		else
			hi = m;
	}
	return lo < v->nrows && v->row_pid[lo] == pid &&
			       v->rows[lo].vcpu == vcpu ?
		       (long)lo :
		       -1;
}

/* The index of thread (pid, tid), or -1. */
static long rpv_find_th(const struct rp_vt *v, pid_t pid, pid_t tid)
{
	size_t lo = 0, hi = v->nths;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (v->th_pid[m] < pid ||
		    (v->th_pid[m] == pid && v->ths[m].tid < tid))
			lo = m + 1;
		else
			hi = m;
	}
	return lo < v->nths && v->th_pid[lo] == pid && v->ths[lo].tid == tid ?
		       (long)lo :
		       -1;
}

/* The refresh's rows and threads (statements bound to it). */
static int rpv_load(struct rp_vt *v, struct errmsg *msg)
{
	size_t cap = 0;
	int rc;

	while ((rc = sqlite3_step(v->get_rows)) == SQLITE_ROW) {
		const unsigned char *name = sqlite3_column_text(v->get_rows, 4);

		if (v->nrows == cap) {
			cap = cap ? 2 * cap : 64;
			v->rows = xrealloc(v->rows, cap * sizeof(*v->rows));
			v->row_pid = xrealloc(v->row_pid,
					      cap * sizeof(*v->row_pid));
			v->row_name = xrealloc(v->row_name,
					       cap * sizeof(*v->row_name));
		}
		memset(&v->rows[v->nrows], 0, sizeof(*v->rows));
		rpv_row(v->get_rows, &v->rows[v->nrows]);
		v->row_pid[v->nrows] = (pid_t)sqlite3_column_int64(v->get_rows,
								   1);
		v->row_name[v->nrows] = name ? xstrdup((const char *)name) :
					       NULL;
		v->nrows++;
	}
	sqlite3_reset(v->get_rows);
	if (rc != SQLITE_DONE)
		return recdb_fail(v->db, rc, "cannot read", msg);
	cap = 0;
	while ((rc = sqlite3_step(v->get_ths)) == SQLITE_ROW) {
		if (v->nths == cap) {
			cap = cap ? 2 * cap : 64;
			v->ths = xrealloc(v->ths, cap * sizeof(*v->ths));
			v->th_pid = xrealloc(v->th_pid,
					     cap * sizeof(*v->th_pid));
		}
		memset(&v->ths[v->nths], 0, sizeof(*v->ths));
		rpv_thread(v->get_ths, &v->ths[v->nths]);
		v->th_pid[v->nths] = (pid_t)sqlite3_column_int64(v->get_ths, 1);
		v->nths++;
	}
	sqlite3_reset(v->get_ths);
	return rc == SQLITE_DONE ? 0 :
				   recdb_fail(v->db, rc, "cannot read", msg);
}

/* The intervals of the refreshes between from and the one read added to
 * its rows (statements bound to them). */
static int rpv_sum(struct rp_vt *v, struct errmsg *msg)
{
	int rc;

	while ((rc = sqlite3_step(v->sum_rows)) == SQLITE_ROW) {
		struct vcputime_row x = { 0 };
		long i = rpv_find_row(v,
				      (pid_t)sqlite3_column_int64(v->sum_rows,
								  1),
				      sqlite3_column_int(v->sum_rows, 2));

		if (i < 0)
			continue;
		rpv_row(v->sum_rows, &x);
		v->rows[i].interval_ns += x.interval_ns;
		v->rows[i].merged |= x.merged;
		for (int s = 0; s < VT_NSTATES; s++)
			v->rows[i].delta_ns[s] += x.delta_ns[s];
	}
	sqlite3_reset(v->sum_rows);
	if (rc != SQLITE_DONE)
		return recdb_fail(v->db, rc, "cannot read", msg);
	while ((rc = sqlite3_step(v->sum_ths)) == SQLITE_ROW) {
		struct vcputime_thread t = { 0 };
		long i = rpv_find_th(v,
				     (pid_t)sqlite3_column_int64(v->sum_ths, 1),
				     (pid_t)sqlite3_column_int64(v->sum_ths, 2));

		if (i < 0)
			continue;
		rpv_thread(v->sum_ths, &t);
		v->ths[i].delta_ns += t.delta_ns;
		v->ths[i].interval_ns += t.interval_ns;
	}
	sqlite3_reset(v->sum_ths);
	return rc == SQLITE_DONE ? 0 :
				   recdb_fail(v->db, rc, "cannot read", msg);
}

/* The VMs of the rows and threads read: each VM's sum row (vcpu -1)
 * sorts before its vCPUs. */
static void rpv_vms(struct rp_vt *v)
{
	size_t t = 0;

	v->vms = xcalloc(v->nrows + 1, sizeof(*v->vms));
	for (size_t i = 0; i < v->nrows;) {
		struct vcputime_vm *vm = &v->vms[v->nvms++];
		pid_t pid = v->row_pid[i];

		*vm = (struct vcputime_vm){ .pid = pid, .sum.vcpu = -1 };
		if (v->rows[i].vcpu < 0) {
			vm->sum = v->rows[i];
			vm->guest = v->row_name[i];
			i++;
		}
		vm->vcpus = &v->rows[i];
		while (i < v->nrows && v->row_pid[i] == pid) {
			vm->nvcpus++;
			i++;
		}
		vm->interval_ns = vm->sum.interval_ns;
		while (t < v->nths && v->th_pid[t] < pid)
			t++;
		vm->threads = &v->ths[t];
		while (t < v->nths && v->th_pid[t] == pid) {
			vm->nthreads++;
			t++;
		}
	}
}

int rp_vt_feed(struct rp_vt *v, long long from, long long id, struct errmsg *msg)
{
	const unsigned char *src;
	int rc;

	rpv_clear(v);
	if (!v->hdr)
		return 0;
	sqlite3_bind_int64(v->hdr, 1, id);
	rc = sqlite3_step(v->hdr);
	if (rc == SQLITE_ROW) {
		v->on = true;
		src = sqlite3_column_text(v->hdr, 0);
		v->source = src ? xstrdup((const char *)src) : NULL;
	}
	sqlite3_reset(v->hdr);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ?
			       0 :
			       recdb_fail(v->db, rc, "cannot read", msg);
	sqlite3_bind_int64(v->get_rows, 1, id);
	sqlite3_bind_int64(v->get_ths, 1, id);
	rc = rpv_load(v, msg);
	if (!rc && from) {
		sqlite3_bind_int64(v->sum_rows, 1, from);
		sqlite3_bind_int64(v->sum_rows, 2, id);
		sqlite3_bind_int64(v->sum_ths, 1, from);
		sqlite3_bind_int64(v->sum_ths, 2, id);
		rc = rpv_sum(v, msg);
	}
	if (rc) {
		rpv_clear(v);
		return rc;
	}
	rpv_vms(v);
	return 0;
}

const struct vcputime *rp_vt_read(struct rp_vt *v, bool per_vcpu)
{
	if (!v || !v->on)
		return NULL;
	v->out = (struct vcputime){ .vms = v->vms,
				    .nvms = v->nvms,
				    .per_vcpu = per_vcpu,
				    .source = v->source };
	return &v->out;
}
