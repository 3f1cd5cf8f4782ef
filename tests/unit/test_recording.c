// SPDX-License-Identifier: GPL-2.0-only
/*
 * The flight recorder and its replay (record/recorder.c, replay.c), the
 * recording file (recdb.c) and metrics over time (om_history.c): stats
 * recorded refresh by refresh come back with the same totals, deltas,
 * freshness, threads, intervals and wall clocks, reached in order, by a
 * jump, as a first sample or folded over an earlier refresh; only changed
 * values are written; a file of another program is refused; expositions
 * gather into one family each with timestamps.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errmsg.h"
#include "om_history.h"
#include "recdb.h"
#include "record/rec_brk.h"
#include "record/rec_vt.h"
#include "recorder.h"
#include "replay.h"
#include "stats.h"
#include "suites.h"
#include "util.h"
#include "vcputime.h"

/* Three refreshes of a counter (host, a VM, two vCPUs, one of them not
 * read at the third), a gauge, and a counter that appears at the second. */
#define NREF 3
static const uint64_t rec_vals[NREF][4] = { { 100, 40, 60, 7 },
					    { 150, 45, 105, 9 },
					    { 180, 70, 105, 4 } };

static void rec_push(struct stats *s, int r)
{
	int c = field_table_intern(&s->fields, "exits", -1, FIELD_CUMULATIVE,
				   "test");
	int g = field_table_intern(&s->fields, "pages", -1, FIELD_INSTANT,
				   "test");

	sample_set_push(&s->set, c, 0, SAMPLE_ALL_VCPUS, 0, rec_vals[r][0], 0);
	sample_set_push(&s->set, c, 42, 0, 4201, rec_vals[r][1], 0);
	if (r < 2)
		sample_set_push(&s->set, c, 42, 1, 4202, rec_vals[r][2], 0);
	sample_set_push(&s->set, g, 42, SAMPLE_ALL_VCPUS, 0, rec_vals[r][3], 0);
	if (r >= 1) {
		int late = field_table_intern(&s->fields, "late", -1,
					      FIELD_CUMULATIVE, "test");

		sample_set_push(&s->set, late, 0, SAMPLE_ALL_VCPUS, 0,
				10 * (uint64_t)r, 0);
	}
	stats_update(s, 1000000000ull * (uint64_t)(r + 1) + 123);
}

/* Whether b holds every cell of a as a does (by name and scope). */
static void rec_same(const struct stats *a, const struct stats *b)
{
	ck_assert_uint_eq(a->interval_ns, b->interval_ns);
	for (size_t i = 0; i < a->nkeys + a->nsum; i++) {
		bool sum = i < a->nsum;
		const struct stat_cell *x = sum ? &a->sum[i] :
						  &a->cells[i - a->nsum];
		int f = sum ? (int)i : a->keys[i - a->nsum].field;
		pid_t pid = sum ? 0 : a->keys[i - a->nsum].pid;
		int vcpu = sum ? SAMPLE_ALL_VCPUS : a->keys[i - a->nsum].vcpu;
		int g = field_table_find(&b->fields, a->fields.v[f].name);
		const struct stat_cell *y;

		if (!x->seen)
			continue;
		ck_assert_int_ge(g, 0);
		y = stats_cell(b, g, pid, vcpu);
		ck_assert_ptr_nonnull(y);
		ck_assert_uint_eq(x->total, y->total);
		ck_assert_int_eq(x->delta, y->delta);
		ck_assert_int_eq(x->fresh, y->fresh);
		ck_assert_int_eq(x->tid, y->tid);
	}
}

/* Records NREF refreshes into path; the live stats of each into live[]
 * (caller frees). */
/* A new empty file's name in path (a mkstemp template). */
static void rec_tmp(char *path)
{
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
}

/* Removes a recording and the WAL files SQLite left beside it (path has
 * room for the suffix). */
static void rec_unlink(char *path)
{
	size_t n = strlen(path);

	unlink(path);
	strcat(path, "-wal");
	unlink(path);
	strcpy(path + n, "-shm");
	unlink(path);
	path[n] = '\0';
}

static void rec_make(const char *path, struct stats live[NREF])
{
	struct recorder_cfg cfg = { .path = path, .delay = 1 };
	struct recorder *rec;
	struct stats s;
	struct vmdir d;
	struct errmsg err;

	unlink(path);
	ck_assert_int_eq(recorder_open(&rec, &cfg, &err), 0);
	stats_init(&s, false);
	vmdir_init(&d);
	vmdir_set_name(vmdir_get(&d, 42), "alpha");
	vmdir_set_ident(vmdir_get(&d, 42), "firecracker", NULL,
			"kvm-alpha.service", NULL);
	for (int r = 0; r < NREF; r++) {
		rec_push(&s, r);
		ck_assert_int_eq(recorder_write(rec, &s, &d, "test", &err), 0);
		/* a copy of the stats as they are now */
		stats_init(&live[r], false);
		for (int k = 0; k <= r; k++)
			rec_push(&live[r], k);
	}
	recorder_close(rec);
	stats_free(&s);
	vmdir_free(&d);
}

START_TEST(test_roundtrip)
{
	char path[64] = "/tmp/kvmstat-rec-XXXXXX"; /* room for -wal */
	struct stats live[NREF], s;
	struct replay *rp;
	struct vmdir d;
	struct errmsg err;

	rec_tmp(path);
	rec_make(path, live);
	ck_assert_int_eq(replay_open(&rp, path, NULL, NULL, &err), 0);
	ck_assert_uint_eq(replay_count(rp), NREF);
	stats_init(&s, true);
	vmdir_init(&d);
	/* in order, from the first */
	for (int r = 0; r < NREF; r++) {
		ck_assert_int_eq(replay_feed(rp, (size_t)r,
					     r ? REPLAY_AS_LIVE : REPLAY_START,
					     &s, &d, &err),
				 0);
		rec_same(&live[r], &s);
	}
	ck_assert_str_eq(vmdir_find(&d, 42)->name, "alpha");
	/* who it is, as recorded */
	ck_assert_str_eq(vmdir_find(&d, 42)->vmm, "firecracker");
	ck_assert_str_eq(vmdir_find(&d, 42)->unit, "kvm-alpha.service");
	ck_assert_ptr_null(vmdir_find(&d, 42)->uuid);
	/* a jump back, as live */
	ck_assert_int_eq(replay_feed(rp, 1, REPLAY_AS_LIVE, &s, &d, &err), 0);
	rec_same(&live[1], &s);
	/* -1 over the window: the deltas from the first to the last */
	ck_assert_int_eq(replay_feed(rp, 0, REPLAY_START, &s, &d, &err), 0);
	ck_assert_int_eq(replay_feed(rp, 2, REPLAY_OVER, &s, &d, &err), 0);
	ck_assert_int_eq(s.sum[field_table_find(&s.fields, "exits")].delta,
			 180 - 100);
	ck_assert_uint_eq(s.interval_ns, 2000000000ull);
	replay_close(rp);
	stats_free(&s);
	vmdir_free(&d);
	for (int r = 0; r < NREF; r++)
		stats_free(&live[r]);
	rec_unlink(path);
}
END_TEST

/* Only what changed: the third refresh writes exits (host, vCPU 0), the
 * gauge, vCPU 1 going stale, and late; nothing of an idle refresh. */
START_TEST(test_changed_only)
{
	char path[64] = "/tmp/kvmstat-rec-XXXXXX"; /* room for -wal */
	struct stats live[NREF];
	struct recdb db;
	struct errmsg err;

	rec_tmp(path);
	rec_make(path, live);
	ck_assert_int_eq(recdb_open(&db, path, false, &err), 0);
	ck_assert_int_eq(recdb_int(&db,
				   "SELECT count(*) FROM value WHERE refresh = 3",
				   -1),
			 5);
	ck_assert_int_eq(recdb_int(&db,
				   "SELECT fresh FROM value v JOIN scope s ON"
				   " s.id = v.scope WHERE refresh = 3 AND"
				   " s.vcpu = 1",
				   -1),
			 0);
	ck_assert_int_eq(recdb_int(&db, "SELECT count(*) FROM vm", -1), 1);
	recdb_close(&db);
	for (int r = 0; r < NREF; r++)
		stats_free(&live[r]);
	rec_unlink(path);
}
END_TEST

/* Wall clocks a double holds to 0.24 us only: the second a window opens
 * at by its own time, the third one it closes at. */
static const int64_t win_wall[NREF] = { 1795911821343462088ll,
					1795911821543457870ll,
					1795911821743457152ll };

/* The replay's refresh count over [from, to] of path, or -1 when it
 * holds none; with -1 over it, the host's exits delta in *delta. */
static long win_count(const char *path, const char *from, const char *to,
		      int64_t *delta)
{
	struct replay *rp;
	struct stats s;
	struct vmdir d;
	struct errmsg err;
	long n;

	if (replay_open(&rp, path, from, to, &err))
		return -1;
	n = (long)replay_count(rp);
	stats_init(&s, true);
	vmdir_init(&d);
	ck_assert_int_eq(replay_feed(rp, 0, REPLAY_START, &s, &d, &err), 0);
	*delta = 0;
	if (n > 1) {
		ck_assert_int_eq(replay_feed(rp, (size_t)n - 1, REPLAY_OVER, &s,
					     &d, &err),
				 0);
		*delta = s.sum[field_table_find(&s.fields, "exits")].delta;
	}
	replay_close(rp);
	stats_free(&s);
	vmdir_free(&d);
	return n;
}

/* --from and --to at a refresh's own time, to the nanosecond or rounded
 * outwards to the microsecond, keep it in, a nanosecond past leaves it
 * out, and -1 gives the deltas between the edges; "@SECONDS" is read in
 * decimal, its digits past the nanosecond rounded as asked. */
START_TEST(test_window_edges)
{
	char path[64] = "/tmp/kvmstat-rec-XXXXXX"; /* room for -wal */
	struct recorder_cfg cfg = { .path = path, .delay = 0.2 };
	struct recorder *rec;
	struct replay *rp;
	struct stats s;
	struct vmdir d;
	struct errmsg err;
	int64_t delta = -1, ns;

	rec_tmp(path);
	unlink(path);
	ck_assert_int_eq(recorder_open(&rec, &cfg, &err), 0);
	stats_init(&s, false);
	vmdir_init(&d);
	for (int r = 0; r < NREF; r++) {
		rec_push(&s, r);
		s.wall.tv_sec = (time_t)(win_wall[r] / 1000000000);
		s.wall.tv_nsec = (long)(win_wall[r] % 1000000000);
		ck_assert_int_eq(recorder_write(rec, &s, &d, "test", &err), 0);
	}
	recorder_close(rec);
	stats_free(&s);
	vmdir_free(&d);

	ck_assert_int_eq(win_count(path, "@1795911821.543457870",
				   "@1795911821.743457152", &delta),
			 2);
	ck_assert_int_eq(delta, 180 - 150);
	ck_assert_int_eq(win_count(path, "@1795911821.543457",
				   "@1795911821.743458", &delta),
			 2);
	ck_assert_int_eq(delta, 180 - 150);
	ck_assert_int_eq(win_count(path, "@1795911821.543457871",
				   "@1795911821.743457152", &delta),
			 1);
	ck_assert_int_eq(win_count(path, "@1795911821.543457870",
				   "@1795911821.743457151", &delta),
			 1);
	/* past the nanosecond: up for --from, down for --to */
	ck_assert_int_eq(win_count(path, "@1795911821.5434578701",
				   "@1795911821.7434571529", &delta),
			 1);
	ck_assert_int_eq(win_count(path, "@1795911821.743457153", NULL, &delta),
			 -1);

	ck_assert_int_eq(replay_open(&rp, path, NULL, NULL, &err), 0);
	ck_assert_int_eq(replay_parse_time(rp, "@1795911821.5434578701", false,
					   &ns),
			 0);
	ck_assert_int_eq(ns, win_wall[1]);
	ck_assert_int_eq(replay_parse_time(rp, "@1795911821.5434578701", true,
					   &ns),
			 0);
	ck_assert_int_eq(ns, win_wall[1] + 1);
	ck_assert_int_eq(replay_parse_time(rp, "@.5", true, &ns), 0);
	ck_assert_int_eq(ns, 500000000);
	ck_assert_int_eq(replay_parse_time(rp, "@-1.0000000001", true, &ns), 0);
	ck_assert_int_eq(ns, -1000000000);
	ck_assert_int_eq(replay_parse_time(rp, "@-1.0000000001", false, &ns), 0);
	ck_assert_int_eq(ns, -1000000001);
	ck_assert_int_eq(replay_parse_time(rp, "@", false, &ns), -EINVAL);
	ck_assert_int_eq(replay_parse_time(rp, "@1e9", false, &ns), -EINVAL);
	ck_assert_int_eq(replay_parse_time(rp, "@99999999999", false, &ns),
			 -ERANGE);
	/* j: the last refresh at or before the time */
	ck_assert_uint_eq(replay_find(rp, win_wall[1]), 1);
	ck_assert_uint_eq(replay_find(rp, win_wall[1] - 1), 0);
	replay_close(rp);
	rec_unlink(path);
}
END_TEST

START_TEST(test_foreign_refused)
{
	char path[64] = "/tmp/kvmstat-rec-XXXXXX"; /* room for -wal */
	struct recdb db;
	struct errmsg err;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "not a database at all, no\n", 26), 26);
	close(fd);
	ck_assert_int_lt(recdb_open(&db, path, true, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.text, "not a kvmstat recording"));
	ck_assert_int_lt(recdb_open(&db, path, false, &err), 0);
	unlink(path);
}
END_TEST

START_TEST(test_om_history)
{
	static const char one[] = "# TYPE a counter\n# HELP a A.\na_total 1\n"
				  "# TYPE b gauge\nb{x=\"1\"} 5\n# EOF\n";
	static const char two[] = "# TYPE a counter\n# HELP a A.\na_total 3\n"
				  "# TYPE b gauge\nb{x=\"1\"} 6\n# EOF\n";
	struct timespec t1 = { 1700000000, 123000000 }, t2 = { 1700000010, 0 };
	struct om_history h;
	struct strbuf b;

	om_history_init(&h);
	om_history_add(&h, one, strlen(one), &t1);
	om_history_add(&h, two, strlen(two), &t2);
	strbuf_init(&b);
	om_history_write(&h, &b);
	ck_assert_str_eq(b.s, "# TYPE a counter\n# HELP a A.\n"
			      "a_total 1 1700000000.123\n"
			      "a_total 3 1700000010.000\n"
			      "# TYPE b gauge\n"
			      "b{x=\"1\"} 5 1700000000.123\n"
			      "b{x=\"1\"} 6 1700000010.000\n# EOF\n");
	strbuf_free(&b);
	om_history_free(&h);

	/* an exposition not after the last (the same ms; a clock stepped
	 * back) is stamped 1 ms after it: a TSDB would drop its samples */
	om_history_init(&h);
	om_history_add(&h, one, strlen(one), &t2);
	t1 = (struct timespec){ 1700000010, 400000 };
	om_history_add(&h, two, strlen(two), &t1);
	t1 = (struct timespec){ 1700000009, 0 };
	om_history_add(&h, one, strlen(one), &t1);
	strbuf_init(&b);
	om_history_write(&h, &b);
	ck_assert_str_eq(b.s, "# TYPE a counter\n# HELP a A.\n"
			      "a_total 1 1700000010.000\n"
			      "a_total 3 1700000010.001\n"
			      "a_total 1 1700000010.002\n"
			      "# TYPE b gauge\n"
			      "b{x=\"1\"} 5 1700000010.000\n"
			      "b{x=\"1\"} 6 1700000010.001\n"
			      "b{x=\"1\"} 5 1700000010.002\n# EOF\n");
	strbuf_free(&b);
	om_history_free(&h);
}
END_TEST

/* Breakdown reads: the whole selection's ioport table (0x71 leaves it at
 * the second), VM 42's, an msr table of other alone, a hypercall table
 * from the second; the third read is the second again; the fourth off. */
static const struct snap_brk_row brk_r1[] = {
	{ .key = 0x70,
	  .dir = "out",
	  .name = "CMOS_INDEX",
	  .count = 10,
	  .delta = 10,
	  .rate = 5 },
	{ .key = 0x71, .dir = "in", .count = 5, .delta = 5, .rate = 2.5 },
};
static const struct snap_brk_row brk_r2[] = {
	{ .key = 0x70,
	  .dir = "out",
	  .name = "CMOS_INDEX",
	  .count = 20,
	  .delta = 10,
	  .rate = 4 },
};
static const struct snap_brk_row brk_vm[] = {
	{ .key = 0x70,
	  .dir = "out",
	  .name = "CMOS_INDEX",
	  .count = 10,
	  .delta = 0 },
};
static const struct snap_brk_row brk_other[] = {
	{ .key = ~0ull, .other = true, .count = 3, .delta = 1, .rate = 0.5 },
};
static const struct snap_brk_row brk_hc[] = {
	{ .key = 0x12345, .count = 7, .delta = 7, .rate = 2.8 },
};

static const struct snap_brk_table brk_t1[] = {
	{ "ioport", "kvm_pio", 0, SAMPLE_ALL_VCPUS, 0, 15, 15, brk_r1, 2 },
	{ "msr", "kvm_msr", 0, SAMPLE_ALL_VCPUS, 0, 3, 1, brk_other, 1 },
	{ "ioport", "kvm_pio", 42, SAMPLE_ALL_VCPUS, 0, 10, 0, brk_vm, 1 },
};
static const struct snap_brk_table brk_t2[] = {
	{ "ioport", "kvm_pio", 0, SAMPLE_ALL_VCPUS, 0, 20, 10, brk_r2, 1 },
	{ "msr", "kvm_msr", 0, SAMPLE_ALL_VCPUS, 0, 3, 1, brk_other, 1 },
	{ "hypercall", "kvm_hypercall", 0, SAMPLE_ALL_VCPUS, 0, 7, 7, brk_hc,
	  1 },
	{ "ioport", "kvm_pio", 42, 0, 4201, 10, 0, brk_vm, 1 },
};

static const struct snap_breakdown brk_reads[] = {
	{ .kinds = 13, .top = 16, .tables = brk_t1, .ntables = 3 },
	{ .kinds = 13, .top = 16, .tables = brk_t2, .ntables = 4 },
	{ .kinds = 13, .top = 16, .tables = brk_t2, .ntables = 4 },
};

/* Whether the tables b are those of a, row by row. */
static void brk_same(const struct snap_breakdown *a,
		     const struct snap_breakdown *b)
{
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(a->kinds, b->kinds);
	ck_assert_uint_eq(a->top, b->top);
	ck_assert_uint_eq(a->ntables, b->ntables);
	for (size_t i = 0; i < a->ntables; i++) {
		const struct snap_brk_table *x = &a->tables[i],
					    *y = &b->tables[i];

		ck_assert_str_eq(x->kind, y->kind);
		ck_assert_str_eq(x->event, y->event);
		ck_assert_int_eq(x->pid, y->pid);
		ck_assert_int_eq(x->vcpu, y->vcpu);
		ck_assert_int_eq(x->tid, y->tid);
		ck_assert_uint_eq(x->total, y->total);
		ck_assert_int_eq(x->delta, y->delta);
		ck_assert_uint_eq(x->nrows, y->nrows);
		for (size_t j = 0; j < x->nrows; j++) {
			const struct snap_brk_row *u = &x->rows[j],
						  *w = &y->rows[j];

			ck_assert_uint_eq(u->key, w->key);
			ck_assert_int_eq(u->other, w->other);
			ck_assert_int_eq(!u->dir, !w->dir);
			if (u->dir)
				ck_assert_str_eq(u->dir, w->dir);
			ck_assert_int_eq(!u->name, !w->name);
			if (u->name)
				ck_assert_str_eq(u->name, w->name);
			ck_assert_uint_eq(u->count, w->count);
			ck_assert_int_eq(u->delta, w->delta);
			ck_assert(u->rate == w->rate);
		}
	}
}

/* Breakdowns recorded read by read (changed rows only, a row that left
 * marked so, off) come back the same by a jump and in order; folded over
 * a window the deltas are the window's; --record-keep's carry keeps the
 * state of the first refresh kept. */
START_TEST(test_breakdown_roundtrip)
{
	char path[64] = "/tmp/kvmstat-rec-XXXXXX"; /* room for -wal */
	struct rec_brk *w = rec_brk_new();
	struct rp_brk *rp;
	struct recdb db;
	struct errmsg err;
	const struct snap_breakdown *got;
	char *sql;

	rec_tmp(path);
	unlink(path);
	ck_assert_int_eq(recdb_open(&db, path, true, &err), 0);
	for (int r = 0; r < 3; r++)
		ck_assert_int_eq(rec_brk_write(w, &db, r + 1, &brk_reads[r],
					       &err),
				 0);
	ck_assert_int_eq(rec_brk_write(w, &db, 4, NULL, &err), 0);
	/* the third read changed nothing; 0x71 left at the second */
	ck_assert_int_eq(recdb_int(&db,
				   "SELECT count(*) FROM brk_value WHERE refresh = 3",
				   -1),
			 0);
	ck_assert_int_eq(recdb_int(&db,
				   "SELECT count(*) FROM brk_value v JOIN brk_key k"
				   " ON k.id = v.key WHERE k.key = 113 AND"
				   " v.refresh = 2 AND v.count IS NULL",
				   -1),
			 1);
	rp = rp_brk_open(&db, &err);
	ck_assert_ptr_nonnull(rp);
	for (int r = 0; r < 3; r++) {
		ck_assert_int_eq(rp_brk_feed(rp, 1, 0, r + 1, false, 0, &err),
				 0);
		brk_same(&brk_reads[r], rp_brk_tables(rp));
	}
	ck_assert_int_eq(rp_brk_feed(rp, 1, 0, 4, false, 0, &err), 0);
	ck_assert_ptr_null(rp_brk_tables(rp));
	/* in order: 1, then 2 from 1's */
	ck_assert_int_eq(rp_brk_feed(rp, 1, 0, 1, false, 0, &err), 0);
	ck_assert_int_eq(rp_brk_feed(rp, 1, 1, 2, false, 0, &err), 0);
	brk_same(&brk_reads[1], rp_brk_tables(rp));
	/* over 1 to 3 in 4 s: 0x70 counted 10, 2.5/s */
	ck_assert_int_eq(rp_brk_feed(rp, 1, 0, 1, false, 0, &err), 0);
	ck_assert_int_eq(rp_brk_feed(rp, 1, 1, 3, true, 4, &err), 0);
	got = rp_brk_tables(rp);
	ck_assert_uint_eq(got->tables[0].rows[0].count, 20);
	ck_assert_int_eq(got->tables[0].rows[0].delta, 10);
	ck_assert(got->tables[0].rows[0].rate == 2.5);
	ck_assert_int_eq(got->tables[1].rows[0].delta, 0); /* other: 3 then 3 */
	rp_brk_close(rp);
	/* drop what is before 3: 3 still holds read 2's tables */
	sql = rec_brk_drop_sql(3, 1);
	ck_assert_int_eq(recdb_exec(&db, sql, &err), 0);
	free(sql);
	ck_assert_int_eq(recdb_int(&db,
				   "SELECT count(*) FROM brk_value WHERE refresh < 3",
				   -1),
			 0);
	rp = rp_brk_open(&db, &err);
	ck_assert_int_eq(rp_brk_feed(rp, 3, 0, 3, false, 0, &err), 0);
	brk_same(&brk_reads[2], rp_brk_tables(rp));
	rp_brk_close(rp);
	rec_brk_free(w);
	recdb_close(&db);
	rec_unlink(path);
}
END_TEST

/* vCPU time of refresh r (0..NREF-1; off at 1 when gap): two VMs, 42
 * with two vCPUs and two other threads (one a vhost worker), 43 with one
 * vCPU and a merged state; every number a function of r. */
struct vt_fix {
	struct vcputime_row rows[3];
	struct vcputime_thread ths[2];
	struct vcputime_vm vms[2];
	struct vcputime vt;
};

static void vt_fill(struct vt_fix *f, int r)
{
	memset(f, 0, sizeof(*f));
	for (int k = 0; k < 3; k++) {
		struct vcputime_row *x = &f->rows[k];

		x->vcpu = k == 2 ? 0 : k;
		x->tid = 4201 + k;
		x->interval_ns = 1000000000ull + (uint64_t)r;
		x->fresh = !(k == 1 && r == 2);
		x->merged = k == 2 ? 1u << VT_GUEST_KERNEL : 0;
		x->measured = k == 2 ? 0x5c : 0x1f;
		for (int st = 0; st < VT_NSTATES; st++) {
			x->delta_ns[st] = (uint64_t)(st + 1) * 1000 +
					  (uint64_t)(r * 100 + k);
			x->total_ns[st] = (uint64_t)(r + 1) * x->delta_ns[st] +
					  (1ull << 40);
		}
	}
	f->ths[0] = (struct vcputime_thread){
		4200, "qemu-kvm", 5000 + r, 100 + r, 1000000000ull + r, false
	};
	f->ths[1] = (struct vcputime_thread){
		4299, "vhost-4200", 7000 + r, 200 + r, 1000000000ull + r, true
	};
	f->vms[0] = (struct vcputime_vm){ .pid = 42,
					  .guest = "alpha",
					  .vcpus = &f->rows[0],
					  .nvcpus = 2,
					  .threads = f->ths,
					  .nthreads = 2 };
	f->vms[1] = (struct vcputime_vm){
		.pid = 43, .guest = NULL, .vcpus = &f->rows[2], .nvcpus = 1
	};
	for (int i = 0; i < 2; i++) {
		f->vms[i].sum.vcpu = -1;
		for (size_t k = 0; k < f->vms[i].nvcpus; k++)
			vcputime_add(&f->vms[i].sum, &f->vms[i].vcpus[k]);
		f->vms[i].interval_ns = f->vms[i].sum.interval_ns;
	}
	f->vt = (struct vcputime){ .vms = f->vms,
				   .nvms = 2,
				   .source = r ? "from schedstat" : NULL };
}

static void vt_row_same(const struct vcputime_row *a,
			const struct vcputime_row *b)
{
	ck_assert_int_eq(a->vcpu, b->vcpu);
	ck_assert_int_eq(a->tid, b->tid);
	ck_assert_uint_eq(a->interval_ns, b->interval_ns);
	ck_assert_uint_eq(a->merged, b->merged);
	ck_assert_uint_eq(a->measured, b->measured);
	ck_assert_int_eq(a->fresh, b->fresh);
	for (int st = 0; st < VT_NSTATES; st++) {
		ck_assert_uint_eq(a->total_ns[st], b->total_ns[st]);
		ck_assert_uint_eq(a->delta_ns[st], b->delta_ns[st]);
	}
}

/* Whether b is what a showed, every number and name. */
static void vt_same(const struct vcputime *a, const struct vcputime *b)
{
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(a->nvms, b->nvms);
	if (a->source)
		ck_assert_str_eq(a->source, b->source);
	else
		ck_assert_ptr_null(b->source);
	for (size_t i = 0; i < a->nvms; i++) {
		const struct vcputime_vm *x = &a->vms[i], *y = &b->vms[i];

		ck_assert_int_eq(x->pid, y->pid);
		if (x->guest)
			ck_assert_str_eq(x->guest, y->guest);
		else
			ck_assert_ptr_null(y->guest);
		ck_assert_uint_eq(x->interval_ns, y->interval_ns);
		vt_row_same(&x->sum, &y->sum);
		ck_assert_uint_eq(x->nvcpus, y->nvcpus);
		for (size_t k = 0; k < x->nvcpus; k++)
			vt_row_same(&x->vcpus[k], &y->vcpus[k]);
		ck_assert_uint_eq(x->nthreads, y->nthreads);
		for (size_t k = 0; k < x->nthreads; k++) {
			ck_assert_int_eq(x->threads[k].tid, y->threads[k].tid);
			ck_assert_str_eq(x->threads[k].name, y->threads[k].name);
			ck_assert_int_eq(x->threads[k].vhost,
					 y->threads[k].vhost);
			ck_assert_uint_eq(x->threads[k].total_ns,
					  y->threads[k].total_ns);
			ck_assert_uint_eq(x->threads[k].delta_ns,
					  y->threads[k].delta_ns);
			ck_assert_uint_eq(x->threads[k].interval_ns,
					  y->threads[k].interval_ns);
		}
	}
}

/* Records NREF refreshes with vCPU time at each (skip: one without). */
static void vt_make(const char *path, int skip)
{
	struct recorder_cfg cfg = { .path = path, .delay = 1 };
	struct recorder *rec;
	struct stats s;
	struct vmdir d;
	struct errmsg err;
	struct vt_fix f;

	unlink(path);
	ck_assert_int_eq(recorder_open(&rec, &cfg, &err), 0);
	stats_init(&s, false);
	vmdir_init(&d);
	for (int r = 0; r < NREF; r++) {
		rec_push(&s, r);
		ck_assert_int_eq(recorder_write(rec, &s, &d, "test", &err), 0);
		vt_fill(&f, r);
		ck_assert_int_eq(recorder_vcputime(rec, r == skip ? NULL : &f.vt,
						   &err),
				 0);
	}
	recorder_close(rec);
	stats_free(&s);
	vmdir_free(&d);
}

/* vCPU time recorded per refresh replays identical, in order, by a jump
 * and over a window (intervals summed); a refresh without it has none. */
START_TEST(test_vcputime_roundtrip)
{
	char path[64] = "/tmp/kvmstat-rec-XXXXXX"; /* room for -wal */
	struct replay *rp;
	struct stats s;
	struct vmdir d;
	struct errmsg err;
	struct vt_fix f, g;
	const struct vcputime *got;
	struct recdb db;
	char *sql;

	rec_tmp(path);
	vt_make(path, -1);
	ck_assert_int_eq(replay_open(&rp, path, NULL, NULL, &err), 0);
	ck_assert(replay_has_vcputime(rp));
	stats_init(&s, true);
	vmdir_init(&d);
	ck_assert_ptr_null(replay_vcputime(rp, false));
	for (int r = 0; r < NREF; r++) {
		ck_assert_int_eq(replay_feed(rp, (size_t)r,
					     r ? REPLAY_AS_LIVE : REPLAY_START,
					     &s, &d, &err),
				 0);
		vt_fill(&f, r);
		vt_same(&f.vt, replay_vcputime(rp, false));
	}
	/* a jump back, and the per-vCPU series asked */
	ck_assert_int_eq(replay_feed(rp, 0, REPLAY_AS_LIVE, &s, &d, &err), 0);
	vt_fill(&f, 0);
	got = replay_vcputime(rp, true);
	vt_same(&f.vt, got);
	ck_assert(got->per_vcpu);
	/* over the window: refresh 3's totals, the intervals of 2 and 3 */
	ck_assert_int_eq(replay_feed(rp, 2, REPLAY_OVER, &s, &d, &err), 0);
	vt_fill(&f, 2);
	vt_fill(&g, 1);
	for (int k = 0; k < 3; k++) {
		f.rows[k].interval_ns += g.rows[k].interval_ns;
		for (int st = 0; st < VT_NSTATES; st++)
			f.rows[k].delta_ns[st] += g.rows[k].delta_ns[st];
	}
	for (int k = 0; k < 2; k++) {
		f.ths[k].delta_ns += g.ths[k].delta_ns;
		f.ths[k].interval_ns += g.ths[k].interval_ns;
	}
	/* a VM's: the intervals its sums showed, summed */
	for (int i = 0; i < 2; i++) {
		f.vms[i].sum.interval_ns += g.vms[i].sum.interval_ns;
		for (int st = 0; st < VT_NSTATES; st++)
			f.vms[i].sum.delta_ns[st] += g.vms[i].sum.delta_ns[st];
		f.vms[i].interval_ns = f.vms[i].sum.interval_ns;
	}
	vt_same(&f.vt, replay_vcputime(rp, false));
	replay_close(rp);

	/* a refresh recorded without: none there, the others as recorded */
	vt_make(path, 1);
	ck_assert_int_eq(replay_open(&rp, path, NULL, NULL, &err), 0);
	for (int r = 0; r < NREF; r++) {
		ck_assert_int_eq(replay_feed(rp, (size_t)r,
					     r ? REPLAY_AS_LIVE : REPLAY_START,
					     &s, &d, &err),
				 0);
		vt_fill(&f, r);
		if (r == 1)
			ck_assert_ptr_null(replay_vcputime(rp, false));
		else
			vt_same(&f.vt, replay_vcputime(rp, false));
	}
	replay_close(rp);
	/* --record-keep's drop: the rows before 3 go, 3's stay whole */
	ck_assert_int_eq(recdb_open(&db, path, true, &err), 0);
	sql = rec_vt_drop_sql(3);
	ck_assert_int_eq(recdb_exec(&db, sql, &err), 0);
	free(sql);
	ck_assert_int_eq(recdb_int(&db,
				   "SELECT (SELECT count(*) FROM vt_value WHERE"
				   " refresh < 3) + (SELECT count(*) FROM"
				   " vt_thread WHERE refresh < 3) + (SELECT"
				   " count(*) FROM vt_read WHERE refresh < 3)",
				   -1),
			 0);
	ck_assert_int_eq(recdb_int(&db,
				   "SELECT count(*) FROM vt_value WHERE refresh = 3",
				   -1),
			 5);
	recdb_close(&db);
	stats_free(&s);
	vmdir_free(&d);
	rec_unlink(path);
}
END_TEST

/* A recording of layout 2 (no vCPU time's tables, no vm_ident) replays as
 * before, with no vCPU time and no VM identities; recording into it again
 * adds them (layout 4); one of layout 3 gets vm_ident. */
START_TEST(test_layout2)
{
	char path[64] = "/tmp/kvmstat-rec-XXXXXX"; /* room for -wal */
	struct stats live[NREF], s;
	struct replay *rp;
	struct recdb db;
	struct vmdir d;
	struct errmsg err;

	rec_tmp(path);
	rec_make(path, live);
	ck_assert_int_eq(recdb_open(&db, path, true, &err), 0);
	ck_assert_int_eq(recdb_exec(&db,
				    "DROP TABLE vt_read; DROP TABLE vt_value;"
				    " DROP TABLE vt_thread; DROP TABLE vm_ident;"
				    " PRAGMA user_version=2",
				    &err),
			 0);
	recdb_close(&db);
	ck_assert_int_eq(replay_open(&rp, path, NULL, NULL, &err), 0);
	ck_assert(!replay_has_vcputime(rp));
	stats_init(&s, true);
	vmdir_init(&d);
	for (int r = 0; r < NREF; r++) {
		ck_assert_int_eq(replay_feed(rp, (size_t)r,
					     r ? REPLAY_AS_LIVE : REPLAY_START,
					     &s, &d, &err),
				 0);
		rec_same(&live[r], &s);
		ck_assert_ptr_null(replay_vcputime(rp, false));
		ck_assert_ptr_null(vmdir_find(&d, 42)->vmm);
	}
	replay_close(rp);
	/* layout 1 is refused, 2 recorded into becomes 4, and so does 3 */
	ck_assert_int_eq(recdb_open(&db, path, true, &err), 0);
	ck_assert_int_eq(recdb_int(&db, "PRAGMA user_version", 0), 4);
	ck_assert_int_eq(recdb_int(&db,
				   "SELECT count(*) FROM sqlite_master WHERE"
				   " name LIKE 'vt_%' OR name = 'vm_ident'",
				   0),
			 4);
	ck_assert_int_eq(recdb_exec(&db,
				    "DROP TABLE vm_ident; PRAGMA user_version=3",
				    &err),
			 0);
	recdb_close(&db);
	ck_assert_int_eq(recdb_open(&db, path, true, &err), 0);
	ck_assert_int_eq(recdb_int(&db, "PRAGMA user_version", 0), 4);
	ck_assert_int_eq(recdb_int(&db,
				   "SELECT count(*) FROM sqlite_master WHERE"
				   " name = 'vm_ident'",
				   0),
			 1);
	ck_assert_int_eq(recdb_exec(&db, "PRAGMA user_version=1", &err), 0);
	recdb_close(&db);
	ck_assert_int_lt(replay_open(&rp, path, NULL, NULL, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.text, "layout 1"));
	stats_free(&s);
	vmdir_free(&d);
	for (int r = 0; r < NREF; r++)
		stats_free(&live[r]);
	rec_unlink(path);
}
END_TEST

Suite *recording_suite(void)
{
	Suite *s = suite_create("recording");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_changed_only);
	tcase_add_test(tc, test_window_edges);
	tcase_add_test(tc, test_breakdown_roundtrip);
	tcase_add_test(tc, test_vcputime_roundtrip);
	tcase_add_test(tc, test_layout2);
	tcase_add_test(tc, test_foreign_refused);
	tcase_add_test(tc, test_om_history);
	suite_add_tcase(s, tc);
	return s;
}
