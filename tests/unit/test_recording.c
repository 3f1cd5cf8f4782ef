// SPDX-License-Identifier: GPL-2.0-only
/*
 * The flight recorder and its replay (app/recorder.c, app/replay.c), the
 * recording file (recdb.c) and metrics over time (om_history.c): stats
 * recorded refresh by refresh come back with the same totals, deltas,
 * freshness, threads, intervals and wall clocks, reached in order, by a
 * jump, as a first sample or folded over an earlier refresh; only changed
 * values are written; a file of another program is refused; expositions
 * gather into one family each with timestamps.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/recorder.h"
#include "app/replay.h"
#include "errmsg.h"
#include "om_history.h"
#include "recdb.h"
#include "stats.h"
#include "suites.h"
#include "util.h"

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
	char path[] = "/tmp/kvmstat-rec-XXXXXX";
	struct stats live[NREF], s;
	struct replay *rp;
	struct vmdir d;
	struct errmsg err;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
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
	unlink(path);
	strcat(path, "-wal");
	unlink(path);
	path[strlen(path) - 4] = '\0';
	strcat(path, "-shm");
	unlink(path);
}
END_TEST

/* Only what changed: the third refresh writes exits (host, vCPU 0), the
 * gauge, vCPU 1 going stale, and late; nothing of an idle refresh. */
START_TEST(test_changed_only)
{
	char path[] = "/tmp/kvmstat-rec-XXXXXX";
	struct stats live[NREF];
	struct recdb db;
	struct errmsg err;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
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
	unlink(path);
}
END_TEST

START_TEST(test_foreign_refused)
{
	char path[] = "/tmp/kvmstat-rec-XXXXXX";
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
}
END_TEST

Suite *recording_suite(void)
{
	Suite *s = suite_create("recording");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_changed_only);
	tcase_add_test(tc, test_foreign_refused);
	tcase_add_test(tc, test_om_history);
	suite_add_tcase(s, tc);
	return s;
}
