// SPDX-License-Identifier: GPL-2.0-only
/*
 * The recording file: an SQLite database kvmstat marks as its own. Opening
 * checks the mark before anything is written, so a file of another program
 * is refused untouched (no WAL file made beside it); a new or empty file
 * gets the schema. WAL with synchronous=NORMAL: a transaction per refresh
 * that a killed process cannot tear, and one fsync per checkpoint, not per
 * refresh.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recdb.h"
#include "util.h"

/* The layout: README's "Recordings" section describes it. */
static const char recdb_schema[] =
	"CREATE TABLE session(id INTEGER PRIMARY KEY, started REAL,"
	" host TEXT, sources TEXT, delay REAL, kvmstat TEXT);"
	"CREATE TABLE refresh(id INTEGER PRIMARY KEY,"
	" session INTEGER NOT NULL REFERENCES session(id),"
	" time REAL NOT NULL, wall_ns INTEGER NOT NULL,"
	" mono_ns INTEGER NOT NULL, listed INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX refresh_time ON refresh(time);"
	"CREATE TABLE field(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
	" parent INTEGER REFERENCES field(id), kind TEXT NOT NULL,"
	" unit TEXT, exponent INTEGER NOT NULL DEFAULT 0,"
	" base INTEGER NOT NULL DEFAULT 10, hist TEXT, bucket INTEGER,"
	" bucket_lo INTEGER, bucket_hi INTEGER, flags INTEGER NOT NULL"
	" DEFAULT 0, provider TEXT, help TEXT);"
	"CREATE TABLE scope(id INTEGER PRIMARY KEY, pid INTEGER NOT NULL,"
	" vcpu INTEGER NOT NULL, UNIQUE(pid, vcpu));"
	"CREATE TABLE value(refresh INTEGER NOT NULL, scope INTEGER NOT NULL,"
	" field INTEGER NOT NULL, total INTEGER NOT NULL,"
	" delta INTEGER NOT NULL, fresh INTEGER NOT NULL, tid INTEGER,"
	" PRIMARY KEY(refresh, scope, field)) WITHOUT ROWID;"
	"CREATE TABLE vm(refresh INTEGER NOT NULL, pid INTEGER NOT NULL,"
	" name TEXT, flags INTEGER NOT NULL, vcpus TEXT,"
	" PRIMARY KEY(refresh, pid)) WITHOUT ROWID;"
	"CREATE VIEW vm_name(pid, name) AS SELECT pid, name FROM"
	" (SELECT pid, name, max(refresh) FROM vm WHERE name IS NOT NULL"
	" GROUP BY pid);"
	"CREATE VIEW sample(refresh, time, pid, vcpu, field, unit, total,"
	" delta) AS SELECT v.refresh, r.time, s.pid, s.vcpu, f.name, f.unit,"
	" v.total, v.delta FROM value v JOIN refresh r ON r.id = v.refresh"
	" JOIN scope s ON s.id = v.scope JOIN field f ON f.id = v.field;"
	"CREATE TABLE brk_key(id INTEGER PRIMARY KEY, pid INTEGER NOT NULL,"
	" vcpu INTEGER NOT NULL, kind TEXT NOT NULL, event TEXT NOT NULL,"
	" key INTEGER NOT NULL, dir TEXT NOT NULL, other INTEGER NOT NULL,"
	" name TEXT, UNIQUE(pid, vcpu, kind, key, dir, other));"
	"CREATE TABLE brk_read(refresh INTEGER PRIMARY KEY,"
	" kinds INTEGER NOT NULL, timed INTEGER NOT NULL,"
	" top INTEGER NOT NULL, vcpu_series INTEGER NOT NULL, error TEXT);"
	"CREATE TABLE brk_value(refresh INTEGER NOT NULL, key INTEGER NOT NULL,"
	" tid INTEGER NOT NULL, count INTEGER, delta INTEGER NOT NULL,"
	" rate REAL NOT NULL, tcount INTEGER NOT NULL, sum INTEGER NOT NULL,"
	" min INTEGER NOT NULL, max INTEGER NOT NULL, buckets BLOB,"
	" PRIMARY KEY(refresh, key)) WITHOUT ROWID;"
	"CREATE TABLE lat_read(refresh INTEGER PRIMARY KEY,"
	" enabled INTEGER NOT NULL, exit_field INTEGER, vmm_field INTEGER,"
	" exits_timed INTEGER NOT NULL, reentry TEXT, error TEXT);"
	"CREATE TABLE lat_value(refresh INTEGER NOT NULL,"
	" field INTEGER NOT NULL, pid INTEGER NOT NULL, vcpu INTEGER NOT NULL,"
	" tid INTEGER NOT NULL, count INTEGER, sum INTEGER NOT NULL,"
	" min INTEGER NOT NULL, max INTEGER NOT NULL,"
	" bucket_size INTEGER NOT NULL, buckets BLOB,"
	" PRIMARY KEY(refresh, field, pid, vcpu)) WITHOUT ROWID;";

/* What layout 3 added to 2 (vCPU time): a file of layout 2 that is
 * recorded into again gets it. */
static const char recdb_schema_3[] =
	"CREATE TABLE vt_read(refresh INTEGER PRIMARY KEY, source TEXT);"
	"CREATE TABLE vt_value(refresh INTEGER NOT NULL, pid INTEGER NOT NULL,"
	" vcpu INTEGER NOT NULL, tid INTEGER NOT NULL, name TEXT,"
	" fresh INTEGER NOT NULL, interval_ns INTEGER NOT NULL,"
	" merged INTEGER NOT NULL, measured INTEGER NOT NULL,"
	" guest_ns INTEGER NOT NULL, kernel_ns INTEGER NOT NULL,"
	" vmm_ns INTEGER NOT NULL, halted_ns INTEGER NOT NULL,"
	" waiting_ns INTEGER NOT NULL, guest_kernel_ns INTEGER NOT NULL,"
	" halted_vmm_ns INTEGER NOT NULL, guest_delta_ns INTEGER NOT NULL,"
	" kernel_delta_ns INTEGER NOT NULL, vmm_delta_ns INTEGER NOT NULL,"
	" halted_delta_ns INTEGER NOT NULL, waiting_delta_ns INTEGER NOT NULL,"
	" guest_kernel_delta_ns INTEGER NOT NULL,"
	" halted_vmm_delta_ns INTEGER NOT NULL,"
	" PRIMARY KEY(refresh, pid, vcpu)) WITHOUT ROWID;"
	"CREATE TABLE vt_thread(refresh INTEGER NOT NULL, pid INTEGER NOT NULL,"
	" tid INTEGER NOT NULL, name TEXT NOT NULL, vhost INTEGER NOT NULL,"
	" total_ns INTEGER NOT NULL, delta_ns INTEGER NOT NULL,"
	" interval_ns INTEGER NOT NULL,"
	" PRIMARY KEY(refresh, pid, tid)) WITHOUT ROWID;";

/* Layout 4's: who each VM is (its VMM, UUID, unit, pod), once per pid. */
static const char recdb_schema_4[] =
	"CREATE TABLE vm_ident(pid INTEGER PRIMARY KEY, vmm TEXT NOT NULL,"
	" uuid TEXT, unit TEXT, pod TEXT);";

int recdb_fail(struct recdb *r, int rc, const char *what, struct errmsg *msg)
{
	int prim = rc & 0xff;
	const char *why = r->db ? sqlite3_errmsg(r->db) : sqlite3_errstr(rc);

	if (prim == SQLITE_FULL)
		return errmsg_set(msg, -ENOSPC,
				  "%s: %s: the disk is full: free space or give --record-keep",
				  r->path, what);
	if (prim == SQLITE_NOTADB || prim == SQLITE_CORRUPT)
		return errmsg_set(msg, -EINVAL,
				  "%s is not a kvmstat recording (%s): give another file",
				  r->path, why);
	if (prim == SQLITE_CANTOPEN || prim == SQLITE_PERM ||
	    prim == SQLITE_READONLY)
		return errmsg_set(msg,
				  prim == SQLITE_CANTOPEN ? -ENOENT : -EACCES,
				  "%s: %s: %s", r->path, what, why);
	if (prim == SQLITE_BUSY || prim == SQLITE_LOCKED)
		return errmsg_set(msg, -EBUSY,
				  "%s: %s: the file is in use by another program (%s)",
				  r->path, what, why);
	return errmsg_set(msg, -EIO, "%s: %s: %s", r->path, what, why);
}

int recdb_exec(struct recdb *r, const char *sql, struct errmsg *msg)
{
	int rc = sqlite3_exec(r->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : recdb_fail(r, rc, "write", msg);
}

sqlite3_stmt *recdb_prepare(struct recdb *r, const char *sql, struct errmsg *msg)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(r->db, sql, -1, &st, NULL);

	if (rc != SQLITE_OK) {
		recdb_fail(r, rc, "read", msg);
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

long long recdb_int(struct recdb *r, const char *sql, long long fallback)
{
	sqlite3_stmt *st = recdb_prepare(r, sql, NULL);
	long long v = fallback;

	if (st && sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The mark and layout of an opened file: 1 empty (no schema yet), 0 a
 * kvmstat recording this kvmstat reads (*ver its layout), or -errno with
 * a line. */
static int recdb_check(struct recdb *r, long long *ver, struct errmsg *msg)
{
	sqlite3_stmt *st;
	long long app, tables = 0;
	int rc;

	/* the first read: an SQLite file or not */
	st = recdb_prepare(r, "SELECT count(*) FROM sqlite_master", msg);
	if (!st)
		return -EINVAL;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		tables = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return recdb_fail(r, rc, "read", msg);
	app = recdb_int(r, "PRAGMA application_id", 0);
	*ver = recdb_int(r, "PRAGMA user_version", 0);
	if (!tables && !app)
		return 1;
	if (app != RECDB_APP_ID)
		return errmsg_set(msg, -EINVAL,
				  "%s is an SQLite database of another program, not a kvmstat recording: give another file",
				  r->path);
	if (*ver < RECDB_VERSION_OLDEST || *ver > RECDB_VERSION)
		return errmsg_set(msg, -EINVAL,
				  "%s is a kvmstat recording of layout %lld; this kvmstat reads %d to %d: use the kvmstat that wrote it, or give another file",
				  r->path, *ver, RECDB_VERSION_OLDEST,
				  RECDB_VERSION);
	return 0;
}

int recdb_open(struct recdb *r, const char *path, bool create,
	       struct errmsg *msg)
{
	int flags = create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE :
			     SQLITE_OPEN_READONLY;
	long long ver = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	r->path = xstrdup(path);
	if (!create && access(path, R_OK)) {
		rc = errmsg_set(msg, -errno, "cannot read %s: %s", path,
				strerror(errno));
		goto out_close;
	}
	rc = sqlite3_open_v2(path, &r->db, flags | SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc != SQLITE_OK) {
		rc = recdb_fail(r, rc, create ? "cannot create" : "cannot open",
				msg);
		goto out_close;
	}
	sqlite3_busy_timeout(r->db, 2000);
	rc = recdb_check(r, &ver, msg);
	if (rc < 0)
		goto out_close;
	if (rc == 1 && !create) {
		rc = errmsg_set(msg, -EINVAL,
				"%s is an empty file, not a kvmstat recording: give the file --record wrote",
				path);
		goto out_close;
	}
	if (!create)
		return 0;
	if (rc == 1) {
		char *sql = xasprintf("BEGIN;%s%s%sPRAGMA application_id=%d;"
				      "PRAGMA user_version=%d;COMMIT",
				      recdb_schema, recdb_schema_3,
				      recdb_schema_4, RECDB_APP_ID,
				      RECDB_VERSION);

		rc = recdb_exec(r, sql, msg);
		free(sql);
		if (rc)
			goto out_close;
	} else if (ver < RECDB_VERSION) {
		/* recorded into again: the later layouts' tables added */
		char *sql = xasprintf("BEGIN;%s%sPRAGMA user_version=%d;COMMIT",
				      ver < 3 ? recdb_schema_3 : "",
				      recdb_schema_4, RECDB_VERSION);

		rc = recdb_exec(r, sql, msg);
		free(sql);
		if (rc) {
			sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
			goto out_close;
		}
	}
	rc = recdb_exec(r, "PRAGMA journal_mode=WAL;PRAGMA synchronous=NORMAL",
			msg);
	if (rc)
		goto out_close;
	return 0;
out_close:
	recdb_close(r);
	return rc;
}

void recdb_close(struct recdb *r)
{
	if (r->db)
		sqlite3_close_v2(r->db);
	r->db = NULL;
	free(r->path);
	r->path = NULL;
}
