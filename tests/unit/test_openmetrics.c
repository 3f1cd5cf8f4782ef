// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exposition text of a snapshot built by hand (tracepoint counters
 * with reasons, a nanosecond counter, a log2 histogram, a base-2 bytes
 * gauge, per-VM and per-vCPU series, a stale field), byte for byte against
 * tests/data/openmetrics/, checked by promtool when it is installed; the
 * number and name helpers; content negotiation. The snapshot is built in
 * om_fixture.c; the golden files are only read here (make
 * openmetrics-fixtures writes new ones for review, to copy by hand).
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errmsg.h"
#include "om_fixture.h"
#include "openmetrics.h"
#include "stats.h"
#include "suites.h"
#include "testlib.h"
#include "util.h"

static const char *data_dir(void)
{
	const char *d = getenv("KVMSTAT_TEST_DATA");

	return d && *d ? d : "tests/data";
}

static char *om_read(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = xmalloc((size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Compares b with the golden file name, which it only reads; a mismatch
 * names the first line that differs (the whole text is too long for a
 * Check message). */
static void om_check_fixture(const struct strbuf *b, const char *name)
{
	char path[4096];
	const char *g, *w;
	char *want;
	int line = 1;

	snprintf(path, sizeof(path), "%s/openmetrics/%s", data_dir(), name);
	want = om_read(path);
	ck_assert_msg(want != NULL,
		      "missing fixture %s (make openmetrics-fixtures writes one to review)",
		      path);
	for (g = b->s, w = want; *g && *g == *w; g++, w++)
		if (*g == '\n')
			line++;
	if (*g || *w) {
		while (g > b->s && g[-1] != '\n')
			g--, w--;
		ck_abort_msg("%s differs from line %d:\n got: %.*s\nwant: %.*s\n(make openmetrics-fixtures shows the whole diff)",
			     path, line, (int)strcspn(g, "\n"), g,
			     (int)strcspn(w, "\n"), w);
	}
	ck_assert_str_eq(b->s, want);
	free(want);
}

START_TEST(test_prometheus_fixture)
{
	struct strbuf b;

	om_fixture_render(&b, OPENMETRICS_PROMETHEUS, false);
	om_check_fixture(&b, "fixture.prom");
	strbuf_free(&b);
}
END_TEST

START_TEST(test_per_vcpu_fixture)
{
	struct strbuf b;

	om_fixture_render(&b, OPENMETRICS_PROMETHEUS, true);
	om_check_fixture(&b, "fixture-per-vcpu.prom");
	strbuf_free(&b);
}
END_TEST

START_TEST(test_openmetrics_fixture)
{
	struct strbuf b;

	om_fixture_render(&b, OPENMETRICS_OPENMETRICS, false);
	om_check_fixture(&b, "fixture.om");
	strbuf_free(&b);
}
END_TEST

/* The key facts of the fixture, independent of the file. */
START_TEST(test_fixture_facts)
{
	struct strbuf b;

	om_fixture_render(&b, OPENMETRICS_PROMETHEUS, true);
	/* a parent with reason series is not exported besides them */
	ck_assert_ptr_null(strstr(b.s, "\nkvm_exit_total "));
	/* no name holds an aggregate beside its parts: the whole
	 * selection's series only for fields no VM has, each vCPU's under
	 * kvm_vcpu_... */
	ck_assert_ptr_null(strstr(b.s, "\nkvm_exit_total{reason="));
	ck_assert_ptr_nonnull(strstr(
		b.s,
		"\nkvm_exit_total{pid=\"100\",guest=\"alpha\",reason=\"HLT\"} 1000\n"));
	ck_assert_ptr_nonnull(strstr(
		b.s,
		"\nkvm_userspace_exit_total{pid=\"200\",guest=\"be\\\"ta\\\\x\\ny\",reason=\"HLT\"} 20\n"));
	ck_assert_ptr_null(strstr(b.s, "\nkvm_halt_exits_total "));
	ck_assert_ptr_null(strstr(b.s, "vcpu=\"1\"} 30\nkvm_halt_exits"));
	ck_assert_ptr_null(
		strstr(b.s,
		       "\nkvm_halt_exits_total{pid=\"100\",guest=\"alpha\",vcpu="));
	ck_assert_ptr_nonnull(strstr(
		b.s,
		"\nkvm_vcpu_halt_exits_total{pid=\"100\",guest=\"alpha\",vcpu=\"1\"} 30\n"));
	ck_assert_ptr_nonnull(
		strstr(b.s, "\n# TYPE kvm_vcpu_halt_exits_total counter\n"));
	ck_assert_ptr_null(strstr(b.s, "\nkvm_halt_wait_seconds_total 3"));
	ck_assert_ptr_nonnull(strstr(b.s, "\nkvm_pages_mapped_bytes 24576\n"));
	ck_assert_ptr_nonnull(
		strstr(b.s, "\nkvm_halt_poll_success_seconds_total 0.000005\n"));
	ck_assert_ptr_nonnull(strstr(b.s, "\nkvm_remote_tlb_flush_total 18\n"));
	/* the histogram: cumulative buckets, le = hi - 1 in seconds */
	ck_assert_ptr_null(
		strstr(b.s, "\nkvm_halt_wait_hist_seconds_bucket{le="));
	ck_assert_ptr_nonnull(strstr(
		b.s,
		"\nkvm_vcpu_halt_wait_hist_seconds_bucket{pid=\"100\",guest=\"alpha\",vcpu=\"0\",le=\"0.0\"} 0\n"
		"kvm_vcpu_halt_wait_hist_seconds_bucket{pid=\"100\",guest=\"alpha\",vcpu=\"0\",le=\"1e-09\"} 2\n"
		"kvm_vcpu_halt_wait_hist_seconds_bucket{pid=\"100\",guest=\"alpha\",vcpu=\"0\",le=\"3e-09\"} 6\n"
		"kvm_vcpu_halt_wait_hist_seconds_bucket{pid=\"100\",guest=\"alpha\",vcpu=\"0\",le=\"+Inf\"} 12\n"
		"kvm_vcpu_halt_wait_hist_seconds_count{pid=\"100\",guest=\"alpha\",vcpu=\"0\"} 12\n"
		/* 0x0 + 2x1 + 4x2.5 + 6x4 = 36 ns */
		"kvm_vcpu_halt_wait_hist_seconds_sum{pid=\"100\",guest=\"alpha\",vcpu=\"0\"} 0.000000036\n"));
	/* stale: read once, not in the last refresh */
	ck_assert_ptr_null(strstr(b.s, "mmio_exits"));
	strbuf_free(&b);
}
END_TEST

/* Runs promtool check metrics on text; 0 ok, 77 no promtool, else fail. */
static int om_promtool(const char *text, char *out, size_t outlen)
{
	char path[] = "/tmp/kvmstat-om-XXXXXX";
	char cmd[256];
	FILE *p;
	size_t n;
	int fd, rc;

	if (system("command -v promtool >/dev/null 2>&1"))
		return 77;
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(cmd, sizeof(cmd), "promtool check metrics <%s 2>&1", path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	n = fread(out, 1, outlen - 1, p);
	out[n] = '\0';
	rc = pclose(p);
	unlink(path);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
}

START_TEST(test_promtool)
{
	struct strbuf b;
	char out[4096];
	int rc;

	for (int level = 0; level < 2; level++) {
		om_fixture_render(&b, OPENMETRICS_PROMETHEUS, level);
		rc = om_promtool(b.s, out, sizeof(out));
		if (rc == 77) {
			/* not a KVM matter, but CI runs everything: it has
			 * prometheus */
			strbuf_free(&b);
			test_skip("test_promtool",
				  "promtool missing (apt-get install prometheus)");
			return;
		}
		ck_assert_msg(rc == 0, "promtool check metrics failed: %s", out);
		strbuf_free(&b);
	}
}
END_TEST

/* Nothing read yet: an empty exposition, still valid. */
START_TEST(test_empty)
{
	struct stats s;
	struct snapshot snap;
	struct strbuf b;

	stats_init(&s, true);
	stats_update(&s, 1);
	snapshot_build(&s, NULL, &snap);
	strbuf_init(&b);
	openmetrics_render(&b, &snap, OPENMETRICS_OPENMETRICS, false);
	ck_assert_str_eq(b.s, "# EOF\n");
	strbuf_reset(&b);
	openmetrics_render(&b, &snap, OPENMETRICS_PROMETHEUS, false);
	ck_assert_str_eq(b.s, "");
	strbuf_free(&b);
	snapshot_free(&snap);
	stats_free(&s);
}
END_TEST

/* The default filter with children on: what the exporter keeps. */
START_TEST(test_filter_applies)
{
	struct field_filter f = { 0 };
	struct stats s;
	struct snapshot snap;
	struct strbuf b;
	struct errmsg err;

	ck_assert_int_eq(filter_set(&f, "halt_", &err), 0);
	om_fixture_build(&s);
	om_fixture_snapshot(&s, &f, &snap);
	strbuf_init(&b);
	openmetrics_render(&b, &snap, OPENMETRICS_PROMETHEUS, false);
	ck_assert_ptr_null(strstr(b.s, "kvm_exit"));
	ck_assert_ptr_nonnull(strstr(b.s, "kvm_halt_exits_total{pid=\"200\""));
	/* the histogram keeps its buckets though its children's names are
	 * not what the pattern names */
	ck_assert_ptr_nonnull(strstr(b.s, "kvm_halt_wait_hist_seconds_bucket"));
	strbuf_free(&b);
	snapshot_free(&snap);
	stats_free(&s);
	filter_free(&f);
}
END_TEST

/* Two fields with one metric name: the first (by name) is kept. */
START_TEST(test_name_collision)
{
	struct stats s;
	struct snapshot snap;
	struct strbuf b;
	int a, c;

	stats_init(&s, true);
	a = field_table_intern(&s.fields, "foo", -1, FIELD_CUMULATIVE,
			       "debugfs");
	c = field_table_intern(&s.fields, "kvm_foo", -1, FIELD_CUMULATIVE,
			       "tracepoint");
	sample_set_push(&s.set, a, 0, -1, 0, 1, 0);
	sample_set_push(&s.set, c, 0, -1, 0, 2, 0);
	stats_update(&s, 1);
	snapshot_build(&s, NULL, &snap);
	strbuf_init(&b);
	openmetrics_render(&b, &snap, OPENMETRICS_OPENMETRICS, false);
	ck_assert_str_eq(b.s, "# TYPE kvm_foo counter\n"
			      "# HELP kvm_foo KVM statistic foo (debugfs)\n"
			      "kvm_foo_total 1\n"
			      "# EOF\n");
	strbuf_free(&b);
	snapshot_free(&snap);
	stats_free(&s);
}
END_TEST

/* The default level: the host and each VM, no vCPU; a VM's histogram and
 * counter its source gave only per vCPU are theirs summed. */
START_TEST(test_levels)
{
	struct strbuf b;

	om_fixture_render(&b, OPENMETRICS_PROMETHEUS, false);
	ck_assert_msg(!strstr(b.s, "vcpu=\""), "%s", b.s);
	/* VM 100's vCPU 0 alone has them: buckets 0, 2, 4, 6 */
	ck_assert_ptr_nonnull(strstr(
		b.s,
		"\nkvm_halt_wait_hist_seconds_bucket{pid=\"100\",guest=\"alpha\",le=\"0.0\"} 0\n"
		"kvm_halt_wait_hist_seconds_bucket{pid=\"100\",guest=\"alpha\",le=\"1e-09\"} 2\n"
		"kvm_halt_wait_hist_seconds_bucket{pid=\"100\",guest=\"alpha\",le=\"3e-09\"} 6\n"
		"kvm_halt_wait_hist_seconds_bucket{pid=\"100\",guest=\"alpha\",le=\"+Inf\"} 12\n"
		"kvm_halt_wait_hist_seconds_count{pid=\"100\",guest=\"alpha\"} 12\n"));
	ck_assert_ptr_nonnull(strstr(
		b.s,
		"\nkvm_halt_wait_seconds_total{pid=\"100\",guest=\"alpha\"} 2\n"));
	/* its own row where it has one, not its vCPUs' sum */
	ck_assert_ptr_nonnull(
		strstr(b.s,
		       "\nkvm_halt_exits_total{pid=\"100\",guest=\"alpha\"} 70\n"));
	strbuf_free(&b);
}
END_TEST

/* A VM's histogram its source gave per vCPU only: their sum, bucket by
 * bucket (vCPU 0: 1 2 0 0 0, vCPU 1: 4 0 0 0 8), written once per VM,
 * without the bucket nothing counted in (the host's has it), but with the
 * one below a counted bucket (its lower edge for histogram_quantile()). */
START_TEST(test_vm_hist_sum)
{
	static const uint64_t v[2][5] = { { 1, 2, 0, 0, 0 }, { 4, 0, 0, 0, 8 } };
	struct field_info *fi;
	struct stats s;
	struct snapshot snap;
	struct strbuf b;
	int h, hb[5];

	stats_init(&s, true);
	h = field_table_intern(&s.fields, "w", -1, FIELD_CUMULATIVE, "test");
	field_table_info(&s.fields, h)->hist = HIST_LOG2;
	for (int i = 0; i < 5; i++) {
		char name[16];

		snprintf(name, sizeof(name), "w(%d)", i);
		hb[i] = field_table_intern(&s.fields, name, h, FIELD_CUMULATIVE,
					   "test");
		fi = field_table_info(&s.fields, hb[i]);
		fi->bucket = i;
		fi->bucket_lo = i ? 1ull << (i - 1) : 0;
		fi->bucket_hi = i == 4 ? UINT64_MAX : 1ull << i;
		for (int c = 0; c < 2; c++)
			sample_set_push(&s.set, hb[i], 7, c, 0, v[c][i], 0);
		sample_set_push(&s.set, hb[i], 0, -1, 0, v[0][i] + v[1][i], 0);
	}
	stats_update(&s, 1);
	snapshot_build(&s, NULL, &snap);
	strbuf_init(&b);
	openmetrics_render(&b, &snap, OPENMETRICS_PROMETHEUS, false);
	ck_assert_msg(strstr(b.s, "kvm_w_bucket{pid=\"7\",le=\"0.0\"} 5\n"
				  "kvm_w_bucket{pid=\"7\",le=\"1.0\"} 7\n"
				  "kvm_w_bucket{pid=\"7\",le=\"7.0\"} 7\n"
				  "kvm_w_bucket{pid=\"7\",le=\"+Inf\"} 15\n"
				  "kvm_w_count{pid=\"7\"} 15\n"),
		      "%s", b.s);
	/* the host's is the sum over VMs: not written beside them */
	ck_assert_msg(!strstr(b.s, "kvm_w_bucket{le="), "%s", b.s);
	strbuf_free(&b);
	snapshot_free(&snap);
	stats_free(&s);
}
END_TEST

/* A stats of VM 42 (and the host) where counter c reads v and gauge g 0. */
static void om_sticky_read(struct stats *s, int c, int g, bool vm, uint64_t v,
			   uint64_t now)
{
	sample_set_push(&s->set, c, 0, -1, 0, v, 0);
	sample_set_push(&s->set, g, 0, -1, 0, 0, 0);
	if (vm) {
		sample_set_push(&s->set, c, 42, -1, 0, v, 0);
		sample_set_push(&s->set, g, 42, -1, 0, 0, 0);
	}
	stats_update(s, now);
}

/* Renders s with w into b (emptied first). */
static void om_sticky_render(struct openmetrics_writer *w,
			     const struct stats *s, struct strbuf *b)
{
	struct snapshot snap;

	snapshot_build(s, NULL, &snap);
	strbuf_reset(b);
	openmetrics_write(w, b, &snap, OPENMETRICS_PROMETHEUS);
	snapshot_free(&snap);
}

/*
 * A VM's counter that is still 0 is no series; once it counts it is one,
 * and stays one while the VM lives, even when it reads 0 again (a reset);
 * a VM's gauge at 0 is always one; the host has the fields no VM has
 * (sum() over VMs is the host's value of the others). A VM gone
 * from a render is forgotten.
 */
START_TEST(test_sticky)
{
	struct openmetrics_writer *w = openmetrics_writer_new(false);
	static const char vmc[] = "\nkvm_c_total{pid=\"42\"} ";
	struct stats s;
	struct strbuf b;
	int c, g;

	stats_init(&s, true);
	c = field_table_intern(&s.fields, "c", -1, FIELD_CUMULATIVE, "test");
	g = field_table_intern(&s.fields, "g", -1, FIELD_INSTANT, "test");
	strbuf_init(&b);
	om_sticky_read(&s, c, g, true, 0, 1);
	om_sticky_render(w, &s, &b);
	ck_assert_msg(!strstr(b.s, vmc), "%s", b.s);
	/* nor the host's: a VM has the field */
	ck_assert_msg(!strstr(b.s, "\nkvm_c_total"), "%s", b.s);
	ck_assert_ptr_nonnull(strstr(b.s, "\nkvm_g{pid=\"42\"} 0\n"));
	om_sticky_read(&s, c, g, true, 5, 2);
	om_sticky_render(w, &s, &b);
	ck_assert_ptr_nonnull(strstr(b.s, "\nkvm_c_total{pid=\"42\"} 5\n"));
	/* reset to 0: still a series, for this writer only */
	stats_reset(&s);
	om_sticky_read(&s, c, g, true, 5, 3);
	om_sticky_render(w, &s, &b);
	ck_assert_ptr_nonnull(strstr(b.s, "\nkvm_c_total{pid=\"42\"} 0\n"));
	{
		struct openmetrics_writer *fresh = openmetrics_writer_new(false);

		om_sticky_render(fresh, &s, &b);
		ck_assert_msg(!strstr(b.s, vmc), "%s", b.s);
		openmetrics_writer_free(fresh);
	}
	stats_free(&s);
	/* the VM gone, then a VM of that pid again: a new one, forgotten */
	stats_init(&s, true);
	c = field_table_intern(&s.fields, "c", -1, FIELD_CUMULATIVE, "test");
	g = field_table_intern(&s.fields, "g", -1, FIELD_INSTANT, "test");
	om_sticky_read(&s, c, g, false, 0, 1);
	om_sticky_render(w, &s, &b);
	ck_assert_msg(!strstr(b.s, "pid="), "%s", b.s);
	/* no VM has it: the host's series */
	ck_assert_msg(strstr(b.s, "\nkvm_c_total 0\n"), "%s", b.s);
	om_sticky_read(&s, c, g, true, 0, 2);
	om_sticky_render(w, &s, &b);
	ck_assert_msg(!strstr(b.s, vmc), "%s", b.s);
	stats_free(&s);
	strbuf_free(&b);
	openmetrics_writer_free(w);
}
END_TEST

START_TEST(test_names)
{
	struct field_info f = { .name = "halt_wait_ns",
				.unit = UNIT_SECONDS,
				.exponent = -9,
				.bucket = -1 };
	char *n;

	n = openmetrics_name(&f);
	ck_assert_str_eq(n, "kvm_halt_wait_seconds");
	free(n);
	/* the unit the provider declared names it, not the name's ending */
	f.name = "halt_poll_ns";
	f.unit = UNIT_NONE;
	f.exponent = 0;
	n = openmetrics_name(&f);
	ck_assert_str_eq(n, "kvm_halt_poll_nsec"); /* not "_ns_total" */
	free(n);
	f.name = "kvm_a_ms_us_b_ns2_xus";
	n = openmetrics_name(&f);
	ck_assert_str_eq(n, "kvm_a_msec_usec_b_ns2_xus");
	free(n);
	f.name = "halt_poll_ns";
	f.unit = UNIT_SECONDS;
	f.exponent = -9;
	n = openmetrics_name(&f);
	ck_assert_str_eq(n, "kvm_halt_poll_seconds");
	free(n);
	f.exponent = 0;
	f.name = "kvm_exit(HLT)";
	f.unit = UNIT_NONE;
	n = openmetrics_name(&f);
	ck_assert_str_eq(n, "kvm_exit_HLT_");
	free(n);
	f.name = "exits_total";
	n = openmetrics_name(&f);
	ck_assert_str_eq(n, "kvm_exits");
	free(n);
	f.name = "guest_mem";
	f.unit = UNIT_BYTES;
	f.type = FIELD_INSTANT;
	n = openmetrics_name(&f);
	ck_assert_str_eq(n, "kvm_guest_mem_bytes");
	free(n);
}
END_TEST

START_TEST(test_canonical)
{
	static const struct {
		double v;
		const char *want;
	} cases[] = {
		{ 0, "0.0" },
		{ 0.001, "0.001" },
		{ 0.95, "0.95" },
		{ 1, "1.0" },
		{ 1.7, "1.7" },
		{ 10, "10.0" },
		{ 1e-10, "1e-10" },
		{ 1e-9, "1e-09" },
		{ 1e-5, "1e-05" },
		{ 1e-4, "0.0001" },
		{ 0.1, "0.1" },
		{ 100000, "100000.0" },
		{ 1e6, "1e+06" },
		{ 1e10, "1e+10" },
		{ 1.023e-6, "1.023e-06" },
		{ 1.1e23, "1.1e+23" },
		{ 4095, "4095.0" },
		{ 123456, "123456.0" },
		{ 1234567, "1.234567e+06" },
	};
	char buf[40];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		openmetrics_canonical(cases[i].v, buf, sizeof(buf));
		ck_assert_str_eq(buf, cases[i].want);
	}
	openmetrics_canonical(INFINITY, buf, sizeof(buf));
	ck_assert_str_eq(buf, "+Inf");
}
END_TEST

#define OM OPENMETRICS_OPENMETRICS
#define PROM OPENMETRICS_PROMETHEUS

START_TEST(test_accept)
{
	/* what Prometheus 2.x sends */
	ck_assert(
		OM ==
		openmetrics_negotiate(
			"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"));
	ck_assert(OM == openmetrics_negotiate("application/openmetrics-text"));
	ck_assert(PROM == openmetrics_negotiate(NULL));
	ck_assert(PROM == openmetrics_negotiate("*/*"));
	ck_assert(PROM == openmetrics_negotiate("text/plain"));
	ck_assert(
		PROM ==
		openmetrics_negotiate(
			"text/plain;version=0.0.4,application/openmetrics-text;q=0.5"));
	ck_assert(PROM ==
		  openmetrics_negotiate("application/openmetrics-text; q=0"));
	ck_assert(
		OM ==
		openmetrics_negotiate(
			"Application/OpenMetrics-Text ; Version=1.0.0 ; q=0.9, text/plain;q=0.8"));
	/* a version this exporter does not write */
	ck_assert(PROM == openmetrics_negotiate(
				  "application/openmetrics-text;version=2.0.0"));
}
END_TEST

Suite *openmetrics_suite(void)
{
	Suite *s = suite_create("openmetrics");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_prometheus_fixture);
	tcase_add_test(tc, test_openmetrics_fixture);
	tcase_add_test(tc, test_per_vcpu_fixture);
	tcase_add_test(tc, test_levels);
	tcase_add_test(tc, test_sticky);
	tcase_add_test(tc, test_vm_hist_sum);
	tcase_add_test(tc, test_fixture_facts);
	tcase_add_test(tc, test_promtool);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_filter_applies);
	tcase_add_test(tc, test_name_collision);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_canonical);
	tcase_add_test(tc, test_accept);
	suite_add_tcase(s, tc);
	return s;
}
