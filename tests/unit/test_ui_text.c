// SPDX-License-Identifier: GPL-2.0-only
/* Batch, log and CSV text byte for byte, and the log front-end's files. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend.h"
#include "options.h"
#include "stats.h"
#include "suites.h"
#include "ui_text.h"
#include "units.h"

static struct snap_row rows[] = {
	{ .name = "exits", .total = 123456, .delta = 42, .valid = true },
	{ .name = "kvm_exit(EXTERNAL_INTERRUPT)",
	  .field = 1,
	  .total = 7,
	  .delta = -3,
	  .valid = true },
	{ .name = "stale", .field = 2, .valid = false },
	{ .name = "wide_ns",
	  .field = 3,
	  .total = 6444793915611025420ull,
	  .delta = 1234567890123ll,
	  .valid = true },
};

static struct snapshot snap(void)
{
	struct snapshot s = { .rows = rows, .nrows = 4 };

	setenv("TZ", "UTC", 1);
	tzset();
	s.wall.tv_sec = 1700000000; /* 2023-11-14 22:13:20 UTC */
	s.interval_ns = 1000000000; /* not the first sample */
	return s;
}

START_TEST(test_batch)
{
	struct snapshot s = snap();
	struct strbuf b;

	strbuf_init(&b);
	ui_text_batch(&b, &s, true, 0);
	ck_assert_str_eq(
		b.s,
		"exits                                         123456        42\n"
		"kvm_exit(EXTERNAL_INTERRUPT)                       7        -3\n"
		"stale                                              -         -\n"
		"wide_ns                                    6444793915611025420 1234567890123\n");
	/* kvm_stat's lines: what could not be read is left out */
	strbuf_reset(&b);
	ui_text_batch(&b, &s, false, 0);
	ck_assert_str_eq(
		b.s,
		"exits                                         123456        42\n"
		"kvm_exit(EXTERNAL_INTERRUPT)                       7        -3\n"
		"wide_ns                                    6444793915611025420 1234567890123\n");
	strbuf_free(&b);
}
END_TEST

static char *col_names[] = { "exits", "kvm_exit(EXTERNAL_INTERRUPT)", "gone",
			     "wide_ns" };
static const int64_t col_deltas[] = { 42, -3, 0, 1234567890123ll };

START_TEST(test_log)
{
	struct snapshot s = snap();
	struct strbuf b;

	strbuf_init(&b);
	ui_text_log_header(&b, col_names, 4);
	ui_text_log_line(&b, &s.wall, col_deltas, 4);
	ck_assert_str_eq(
		b.s,
		"exits kvm_exit(EXTERNAL_INTERRUPT) gone wide_ns \n"
		"2023-11-14 22:13:20        42        -3         0 1234567890123\n");
	strbuf_free(&b);
}
END_TEST

START_TEST(test_csv)
{
	struct snapshot s = snap();
	struct strbuf b;

	strbuf_init(&b);
	ui_text_csv_header(&b, col_names, 4);
	ui_text_csv_line(&b, &s.wall, col_deltas, 4);
	ck_assert_str_eq(b.s,
			 "timestamp,exits,kvm_exit(EXTERNAL_INTERRUPT),gone,wide_ns\n"
			 "2023-11-14 22:13:20,42,-3,0,1234567890123\n");
	strbuf_free(&b);
}
END_TEST

/* Names from the kernel or a VMM cannot split a column or a line. */
START_TEST(test_log_escape)
{
	char *odd[] = { "a b,c\td\ne\\f\x7fg", "kvm_exit(HLT)" };
	struct strbuf b;

	strbuf_init(&b);
	ui_text_csv_header(&b, odd, 2);
	ck_assert_str_eq(
		b.s,
		"timestamp,a\\x20b\\x2cc\\x09d\\x0ae\\x5cf\\x7fg,kvm_exit(HLT)\n");
	strbuf_reset(&b);
	ui_text_log_header(&b, odd, 2);
	ck_assert_str_eq(b.s,
			 "a\\x20b\\x2cc\\x09d\\x0ae\\x5cf\\x7fg kvm_exit(HLT) \n");
	strbuf_free(&b);
}
END_TEST

START_TEST(test_all_zero)
{
	struct snap_row z[] = { { .name = "a", .valid = true },
				{ .name = "b", .valid = false, .delta = 5 } };
	struct snapshot s = { .rows = z, .nrows = 2 };

	ck_assert(ui_text_all_zero(&s));
	z[0].delta = 1;
	ck_assert(!ui_text_all_zero(&s));
}
END_TEST

static char *slurp(const char *path)
{
	static char buf[8192];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

static int count(const char *s, const char *needle)
{
	int n = 0;

	while ((s = strstr(s, needle))) {
		n++;
		s++;
	}
	return n;
}

/* CSV to a file: header only into an empty file; SIGHUP-style reopen
 * starts a new file with its own header. */
START_TEST(test_log_file_csv_reopen)
{
	char dir[] = "/tmp/kvmstat-logXXXXXX", path[256], moved[256];
	struct options o = { .mode = MODE_LOG, .csv = true };
	struct frontend fe = { .ops = &log_frontend_ops };
	struct snapshot s = snap();

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/k.csv", dir);
	snprintf(moved, sizeof(moved), "%s/k.csv.1", dir);
	o.log_file = path;
	ck_assert_int_eq(fe.ops->open(&fe, &o), 0);
	for (int i = 0; i < 25; i++)
		ck_assert_int_eq(fe.ops->render(&fe, &s), 0);
	fe.ops->close(&fe);
	ck_assert_int_eq(count(slurp(path), "timestamp,"), 1);
	ck_assert_int_eq(count(slurp(path), "\n"), 26);
	/* appending to a non-empty file writes no second header */
	ck_assert_int_eq(fe.ops->open(&fe, &o), 0);
	ck_assert_int_eq(fe.ops->render(&fe, &s), 0);
	ck_assert_int_eq(count(slurp(path), "timestamp,"), 1);
	ck_assert_int_eq(count(slurp(path), "\n"), 27);
	/* logrotate moves the file, SIGHUP reopens: new file, new header */
	ck_assert_int_eq(rename(path, moved), 0);
	ck_assert_int_eq(fe.ops->reopen(&fe), 0);
	ck_assert_int_eq(fe.ops->render(&fe, &s), 0);
	fe.ops->close(&fe);
	ck_assert_str_eq(slurp(path),
			 "timestamp,exits,kvm_exit(EXTERNAL_INTERRUPT),stale,wide_ns\n"
			 "2023-11-14 22:13:20,42,-3,0,1234567890123\n");
	ck_assert_int_eq(count(slurp(moved), "\n"), 27);
	unlink(path);
	unlink(moved);
	rmdir(dir);
}
END_TEST

/* The plain log repeats its header every 20 lines; -z skips zero lines. */
START_TEST(test_log_header_repeat_and_skip_zero)
{
	char dir[] = "/tmp/kvmstat-logXXXXXX", path[256];
	struct options o = { .mode = MODE_LOG, .skip_zero = true };
	struct frontend fe = { .ops = &log_frontend_ops };
	struct snapshot s = snap();
	struct snap_row zero[] = { { .name = "exits", .valid = true } };
	struct snapshot z = s;

	z.rows = zero;
	z.nrows = 1;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/k.log", dir);
	o.log_file = path;
	ck_assert_int_eq(fe.ops->open(&fe, &o), 0);
	for (int i = 0; i < 41; i++)
		ck_assert_int_eq(fe.ops->render(&fe, &s), 0);
	ck_assert_int_eq(fe.ops->render(&fe, &z), 0); /* skipped */
	fe.ops->close(&fe);
	ck_assert_int_eq(count(slurp(path), "exits kvm_exit"), 3);
	ck_assert_int_eq(count(slurp(path), "2023-11-14"), 41);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* The columns are those of the first sample, whose header is written at
 * once (-z too): a field gone later logs 0, one that appears later is
 * left out, and the header is never written again. */
START_TEST(test_log_columns_fixed)
{
	char dir[] = "/tmp/kvmstat-logXXXXXX", path[256], err[256];
	int saved, efd;
	struct options o = { .mode = MODE_LOG, .csv = true, .skip_zero = true };
	struct frontend fe = { .ops = &log_frontend_ops };
	/* field ids as the stats layer gives them: one per name */
	struct snap_row first[] = { { .name = "a", .valid = true },
				    { .name = "b", .field = 1, .valid = true } };
	struct snap_row later[] = {
		{ .name = "a", .delta = 5, .valid = true },
		{ .name = "c", .field = 2, .delta = 7, .valid = true },
		{ .name = "c/vcpu1",
		  .field = 2,
		  .delta = 7,
		  .valid = true,
		  .per_vcpu = true }
	};
	struct snap_row stale[] = { { .name = "b", .field = 1, .delta = 9 } };
	struct snapshot s0 = snap(), s1, s2;

	s0.rows = first;
	s0.nrows = 2;
	s0.interval_ns = 0;
	s1 = snap();
	s1.rows = later;
	s1.nrows = 3;
	s2 = s1;
	s2.rows = stale;
	s2.nrows = 1;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/k.csv", dir);
	o.log_file = path;
	snprintf(err, sizeof(err), "%s/err", dir);
	ck_assert_int_eq(fe.ops->open(&fe, &o), 0);
	ck_assert_int_eq(fe.ops->render(&fe, &s0), 0);
	ck_assert_str_eq(slurp(path), "timestamp,a,b\n");
	/* what the log says on stderr, into err */
	fflush(stderr);
	saved = dup(2);
	efd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(efd, 0);
	dup2(efd, 2);
	ck_assert_int_eq(fe.ops->render(&fe, &s1), 0);
	ck_assert_int_eq(fe.ops->render(&fe, &s2), 0); /* all 0: -z */
	ck_assert_int_eq(fe.ops->render(&fe, &s1), 0);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(efd);
	fe.ops->close(&fe);
	ck_assert_str_eq(slurp(path), "timestamp,a,b\n"
				      "2023-11-14 22:13:20,5,0\n"
				      "2023-11-14 22:13:20,5,0\n");
	/* the vCPU that appeared later is said once */
	ck_assert_int_eq(count(slurp(err), "\n"), 1);
	ck_assert_ptr_nonnull(
		strstr(slurp(err),
		       "c/vcpu1: per-vCPU columns that appeared after the start"));
	unlink(err);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* Appending CSV to a file with another header is refused (status 2),
 * naming both headers and the fix; the file is left as it was. */
START_TEST(test_log_csv_other_header)
{
	char dir[] = "/tmp/kvmstat-logXXXXXX", path[256];
	struct options o = { .mode = MODE_LOG, .csv = true };
	struct frontend fe = { .ops = &log_frontend_ops };
	struct snapshot s = snap();
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/k.csv", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("timestamp,exits\n2023-11-14 22:13:20,1\n", f);
	fclose(f);
	o.log_file = path;
	ck_assert_int_eq(fe.ops->open(&fe, &o), 0);
	ck_assert_int_eq(fe.ops->render(&fe, &s), -EINVAL);
	ck_assert(fe.usage);
	ck_assert_msg(strstr(fe.msg.text, "'timestamp,exits'") &&
			      strstr(fe.msg.text,
				     "'timestamp,exits,kvm_exit(EXTERNAL_INTERRUPT),stale,wide_ns'") &&
			      strstr(fe.msg.text, "rotate the file"),
		      "%s", fe.msg.text);
	fe.ops->close(&fe);
	ck_assert_str_eq(slurp(path),
			 "timestamp,exits\n2023-11-14 22:13:20,1\n");
	unlink(path);
	rmdir(dir);
}
END_TEST

/* -L never follows a symbolic link, never opens a FIFO (nor blocks on
 * one), and creates its file with mode 0640. */
START_TEST(test_log_file_safe_open)
{
	char dir[] = "/tmp/kvmstat-logXXXXXX", path[256], target[256];
	struct options o = { .mode = MODE_LOG };
	struct frontend fe = { .ops = &log_frontend_ops };
	struct stat st;
	mode_t old = umask(022);

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/k.log", dir);
	snprintf(target, sizeof(target), "%s/target", dir);
	o.log_file = path;
	ck_assert_int_eq(fe.ops->open(&fe, &o), 0);
	fe.ops->close(&fe);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0640);
	unlink(path);
	ck_assert_int_eq(close(open(target, O_CREAT | O_WRONLY, 0600)), 0);
	ck_assert_int_eq(symlink(target, path), 0);
	ck_assert_int_eq(fe.ops->open(&fe, &o), -ELOOP);
	ck_assert_ptr_nonnull(strstr(fe.msg.text, "is a symbolic link"));
	unlink(path);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(fe.ops->open(&fe, &o), -EINVAL);
	ck_assert_ptr_nonnull(strstr(fe.msg.text, "is a FIFO"));
	unlink(path);
	unlink(target);
	rmdir(dir);
	umask(old);
}
END_TEST

START_TEST(test_log_file_unwritable)
{
	struct options o = { .mode = MODE_LOG,
			     .log_file = "/nonexistent-dir/k.log" };
	struct frontend fe = { .ops = &log_frontend_ops };

	ck_assert_int_eq(fe.ops->open(&fe, &o), -ENOENT);
	ck_assert_ptr_nonnull(
		strstr(fe.msg.text,
		       "cannot write log file /nonexistent-dir/k.log"));
}
END_TEST

START_TEST(test_scaled)
{
	char b[32];

	ui_text_scaled(b, sizeof(b), 123456789, 10);
	ck_assert_str_eq(b, "123456789");
	ui_text_scaled(b, sizeof(b), 12345678901.0, 10);
	ck_assert_str_eq(b, "12345679k");
	ui_text_scaled(b, sizeof(b), 12345678901.0, 5);
	ck_assert_str_eq(b, "12G");
	ui_text_scaled(b, sizeof(b), 1234567, 3);
	ck_assert_str_eq(b, "1.2M"); /* never cut: wider than asked */
	ui_text_scaled(b, sizeof(b), 0, 3);
	ck_assert_str_eq(b, "0");
}
END_TEST

/* Batch rows of fields with units and histograms get their unit, share
 * of wall time, percentiles and bucket ranges after kvm_stat's columns;
 * microseconds as "µs", or "us" with UNITS_ASCII (a locale that is not
 * UTF-8), never the bare "s" a terminal leaves of a µ it cannot show. */
START_TEST(test_batch_units_and_histograms)
{
	struct snapshot snap;
	struct strbuf b;
	struct stats s;
	struct field_info *fi;
	int ns, us, h, b0, b1, b2, plain, yes, no;

	stats_init(&s, false);
	plain = field_table_intern(&s.fields, "exits", -1, FIELD_CUMULATIVE,
				   "t");
	ns = field_table_intern(&s.fields, "halt_wait_ns", -1, FIELD_CUMULATIVE,
				"t");
	fi = field_table_info(&s.fields, ns);
	fi->unit = UNIT_SECONDS;
	fi->exponent = -9;
	us = field_table_intern(&s.fields, "halt_poll_fail_ns", -1,
				FIELD_CUMULATIVE, "t");
	fi = field_table_info(&s.fields, us);
	fi->unit = UNIT_SECONDS;
	fi->exponent = -9;
	h = field_table_intern(&s.fields, "halt_wait_hist", -1,
			       FIELD_CUMULATIVE, "t");
	fi = field_table_info(&s.fields, h);
	fi->unit = UNIT_SECONDS;
	fi->exponent = -9;
	fi->hist = HIST_LOG2;
	b0 = field_table_intern(&s.fields, "halt_wait_hist(0)", h,
				FIELD_CUMULATIVE, "t");
	b1 = field_table_intern(&s.fields, "halt_wait_hist(1)", h,
				FIELD_CUMULATIVE, "t");
	b2 = field_table_intern(&s.fields, "halt_wait_hist(2)", h,
				FIELD_CUMULATIVE, "t");
	for (int i = 0; i < 3; i++) {
		fi = field_table_info(&s.fields, b0 + i);
		fi->unit = UNIT_SECONDS;
		fi->exponent = -9;
		fi->bucket = i;
		fi->bucket_lo = i ? 1ull << (i - 1) : 0;
		fi->bucket_hi = i == 2 ? UINT64_MAX : 1ull << i;
	}
	yes = field_table_intern(&s.fields, "guest_mode", -1, FIELD_INSTANT,
				 "t");
	field_table_info(&s.fields, yes)->unit = UNIT_BOOLEAN;
	no = field_table_intern(&s.fields, "guest_off", -1, FIELD_INSTANT, "t");
	field_table_info(&s.fields, no)->unit = UNIT_BOOLEAN;
	for (int round = 0; round < 2; round++) {
		/* two vCPUs in guest mode, one not; the total is theirs */
		for (int c = 0; c < 3; c++)
			sample_set_push(&s.set, yes, 7, c, 0, c < 2, 0);
		sample_set_push(&s.set, yes, 0, -1, 0, 2, 0);
		sample_set_push(&s.set, no, 0, -1, 0, 0, 0);
		sample_set_push(&s.set, plain, 0, -1, 0, 10 + 5 * round, 0);
		sample_set_push(&s.set, ns, 0, -1, 0, 500000000ull * round, 0);
		sample_set_push(&s.set, us, 0, -1, 0, 21700ull * round, 0);
		sample_set_push(&s.set, b0, 0, -1, 0, 0, 0);
		sample_set_push(&s.set, b1, 0, -1, 0, 98 * round, 0);
		sample_set_push(&s.set, b2, 0, -1, 0, 2 * round, 0);
		stats_update(&s, (round + 1) * 1000000000ull);
	}
	snapshot_build(&s, NULL, &snap);
	strbuf_init(&b);
	ui_text_batch(&b, &snap, false, 0);
	/* without --units: kvm_stat's columns alone, integers */
	ck_assert_msg(strstr(b.s,
			     "halt_wait_ns                               500000000 500000000\n"),
		      "%s", b.s);
	ck_assert_msg(strstr(b.s,
			     "guest_mode                                         2         0\n"),
		      "%s", b.s);
	ck_assert_msg(!strstr(b.s, " ms") && !strstr(b.s, "p50") &&
			      !strstr(b.s, "yes") && !strstr(b.s, "no\n"),
		      "%s", b.s);
	strbuf_reset(&b);
	ui_text_batch(&b, &snap, true, 0);
	/* plain counters keep kvm_stat's bytes exactly */
	ck_assert_ptr_nonnull(strstr(
		b.s,
		"exits                                              5         5\n"));
	ck_assert_msg(strstr(b.s, "  500 ms  +500 ms  50.0%\n"), "%s", b.s);
	ck_assert_msg(strstr(b.s,
			     "halt_wait_hist                                   100       100  p50 < "),
		      "%s", b.s);
	ck_assert_msg(strstr(b.s, "p99 >= "), "%s", b.s);
	ck_assert_msg(strstr(b.s,
			     "halt_wait_hist(1)                                 98        98  [1 ns, 2 ns)\n"),
		      "%s", b.s);
	ck_assert_msg(strstr(b.s,
			     "guest_mode                                         2         0  yes on 2\n"),
		      "%s", b.s);
	ck_assert_msg(strstr(b.s,
			     "guest_off                                          0         0  no\n"),
		      "%s", b.s);
	ck_assert_msg(strstr(b.s, "  21.7 \xc2\xb5s  +21.7 \xc2\xb5s  0.0%\n"),
		      "%s", b.s);
	strbuf_reset(&b);
	ui_text_batch(&b, &snap, true, UNITS_ASCII);
	ck_assert_msg(strstr(b.s, "  21.7 us  +21.7 us  0.0%\n"), "%s", b.s);
	ck_assert_msg(strstr(b.s, "  500 ms  +500 ms  50.0%\n"), "%s", b.s);
	ck_assert_msg(!strchr(b.s, '\xc2') && !strstr(b.s, "21.7  "), "%s", b.s);
	strbuf_free(&b);
	snapshot_free(&snap);
	stats_free(&s);
}
END_TEST

/* Names from the kernel or a VMM cannot break a line, a column or a CSV
 * cell: control characters, blanks, commas and the backslash become \xHH,
 * everything else (UTF-8 too) stays. */
START_TEST(test_escape_name)
{
	struct strbuf b;

	strbuf_init(&b);
	ui_text_escape_name(&b, "kvm_exit(HLT)");
	ck_assert_str_eq(b.s, "kvm_exit(HLT)");
	strbuf_reset(&b);
	ui_text_escape_name(&b, "a b,c\td\n\x7f\\e\xc3\xa9");
	ck_assert_str_eq(b.s, "a\\x20b\\x2cc\\x09d\\x0a\\x7f\\x5ce\xc3\xa9");
	strbuf_reset(&b);
	ui_text_escape_name(&b, "");
	ck_assert_str_eq(b.s, "");
	strbuf_reset(&b);
	ui_text_escape_name(&b, " ");
	ck_assert_str_eq(b.s, "\\x20");
	strbuf_free(&b);
}
END_TEST

Suite *ui_text_suite(void)
{
	Suite *s = suite_create("ui_text");
	TCase *tc = tcase_create("formats");

	tcase_add_test(tc, test_batch);
	tcase_add_test(tc, test_log);
	tcase_add_test(tc, test_csv);
	tcase_add_test(tc, test_all_zero);
	tcase_add_test(tc, test_log_file_csv_reopen);
	tcase_add_test(tc, test_log_header_repeat_and_skip_zero);
	tcase_add_test(tc, test_log_file_unwritable);
	tcase_add_test(tc, test_log_columns_fixed);
	tcase_add_test(tc, test_log_csv_other_header);
	tcase_add_test(tc, test_log_file_safe_open);
	tcase_add_test(tc, test_log_escape);
	tcase_add_test(tc, test_scaled);
	tcase_add_test(tc, test_batch_units_and_histograms);
	tcase_add_test(tc, test_escape_name);
	suite_add_tcase(s, tc);
	return s;
}
