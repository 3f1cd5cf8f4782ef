/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The recording file (--record, --replay): an SQLite database in WAL mode
 * that kvmstat marks as its own (PRAGMA application_id) and lays out as
 * README's "Recordings" section says. This module opens it (creating the
 * schema, or refusing a file of another program in one line), runs
 * statements and turns SQLite's failures into -errno with a line to
 * show. What goes into the tables is the recorder's and the replay's.
 */
#ifndef KVMSTAT_RECDB_H
#define KVMSTAT_RECDB_H

#include <sqlite3.h>
#include <stdbool.h>

#include "errmsg.h"

/* 'KVMR': the application id of a kvmstat recording. */
#define RECDB_APP_ID 0x4b564d52
/* The layout this kvmstat writes (PRAGMA user_version): 3 added vCPU
 * time's tables to 2. It reads both; recording into a file of layout 2
 * adds them. */
#define RECDB_VERSION 4
#define RECDB_VERSION_OLDEST 2

struct recdb {
	sqlite3 *db;
	char *path; /* owned */
};

/*
 * Opens path: for writing (create: made when missing, the schema added to
 * an empty file, WAL), or to read an existing recording. A file that is no
 * SQLite database, another program's database, or a layout this kvmstat
 * does not know is refused: -EINVAL with one line naming the file and the fix.
 */
int recdb_open(struct recdb *r, const char *path, bool create,
	       struct errmsg *msg);
void recdb_close(struct recdb *r);

/* Runs sql (no result rows): 0, or -errno with a line. */
int recdb_exec(struct recdb *r, const char *sql, struct errmsg *msg);
/* A statement of sql, or NULL with a line in msg. */
sqlite3_stmt *recdb_prepare(struct recdb *r, const char *sql,
			    struct errmsg *msg);
/* -errno for SQLite's result rc of what (ENOSPC for a full disk or
 * quota), with a line naming the file, what failed and why. */
int recdb_fail(struct recdb *r, int rc, const char *what, struct errmsg *msg);
/* One integer of a query without parameters, or fallback. */
long long recdb_int(struct recdb *r, const char *sql, long long fallback);

#endif
