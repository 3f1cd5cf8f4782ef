// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exposition text of a snapshot built by hand (tracepoint counters
 * with reasons, a nanosecond counter, a log2 histogram, a base-2 bytes
 * gauge, per-VM and per-vCPU series, a stale field), byte for byte against
 * tests/data/openmetrics/, checked by promtool when it is installed; the
 * number and name helpers; content negotiation. KVMSTAT_UPDATE_FIXTURES=1
 * rewrites the fixtures.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "openmetrics.h"
#include "stats.h"
#include "suites.h"
#include "util.h"

static const char *data_dir(void)
{
	const char *d = getenv("KVMSTAT_TEST_DATA");

	return d && *d ? d : "tests/data";
}

static int om_fid(struct stats *s, const char *name, int parent,
		  enum field_type type, const char *provider)
{
	return field_table_intern(&s->fields, name, parent, type, provider);
}

static void om_push(struct stats *s, int f, pid_t pid, int vcpu, uint64_t v)
{
	sample_set_push(&s->set, f, pid, vcpu, 0, v, 0);
}

/* Guest names of the fixture's VMs: one needs escaping. */
static void om_names(struct guests *g)
{
	guests_init(g, NULL);
	guests_set(g, 100, "alpha");
	guests_set(g, 200, "be\"ta\\x\ny");
}

/* The snapshot the exporter renders of s: its view through filter
 * (NULL: every field), with the fixture's guest names. */
static void om_snapshot(const struct stats *s, const struct field_filter *f,
			struct snapshot *snap)
{
	struct guests names;
	struct snap_request req = { .filter = f, .guests = &names };

	om_names(&names);
	snapshot_build(s, &req, snap);
	guests_free(&names);
}

/*
 * The fixture: two refreshes of a host with VM 100 (vCPUs 0 and 1) and VM
 * 200, totals since the VMs started (-i), as the exporter runs.
 */
static void om_build(struct stats *s)
{
	struct field_info *fi;
	int exit, hlt, io, uexit, uhlt, halt, wait_ns, hist, hb[4], peak,
	    mem, odd, stale, poll;
	static const uint64_t lo[4] = { 0, 1, 2, 4 };
	static const uint64_t hi[4] = { 1, 2, 4, UINT64_MAX };

	stats_init(s, true);
	exit = om_fid(s, "kvm_exit", -1, FIELD_CUMULATIVE, "tracepoint");
	hlt = om_fid(s, "kvm_exit(HLT)", exit, FIELD_CUMULATIVE, "tracepoint");
	io = om_fid(s, "kvm_exit(IO_INSTRUCTION)", exit, FIELD_CUMULATIVE,
		    "tracepoint");
	uexit = om_fid(s, "kvm_userspace_exit", -1, FIELD_CUMULATIVE,
		       "tracepoint");
	uhlt = om_fid(s, "kvm_userspace_exit(HLT)", uexit, FIELD_CUMULATIVE,
		      "tracepoint");
	halt = om_fid(s, "halt_exits", -1, FIELD_CUMULATIVE, "debugfs");
	wait_ns = om_fid(s, "halt_wait_ns", -1, FIELD_CUMULATIVE, "statsfd");
	fi = field_table_info(&s->fields, wait_ns);
	fi->unit = UNIT_SECONDS;
	fi->exponent = -9;
	fi->base = 10;
	hist = om_fid(s, "halt_wait_hist", -1, FIELD_CUMULATIVE, "statsfd");
	fi = field_table_info(&s->fields, hist);
	fi->unit = UNIT_SECONDS;
	fi->exponent = -9;
	fi->base = 10;
	fi->hist = HIST_LOG2;
	for (int i = 0; i < 4; i++) {
		char name[32];

		snprintf(name, sizeof(name), "halt_wait_hist(%d)", i);
		hb[i] = om_fid(s, name, hist, FIELD_CUMULATIVE, "statsfd");
		fi = field_table_info(&s->fields, hb[i]);
		fi->bucket = i;
		fi->bucket_lo = lo[i];
		fi->bucket_hi = hi[i];
	}
	peak = om_fid(s, "max_mmu_page_hash_collisions", -1, FIELD_PEAK,
		      "statsfd");
	mem = om_fid(s, "pages_mapped", -1, FIELD_INSTANT, "statsfd");
	fi = field_table_info(&s->fields, mem);
	fi->unit = UNIT_BYTES;
	fi->exponent = 12;
	fi->base = 2;
	odd = om_fid(s, "remote-tlb.flush", -1, FIELD_CUMULATIVE, "debugfs");
	stale = om_fid(s, "mmio_exits", -1, FIELD_CUMULATIVE, "debugfs");
	/* nanoseconds, as the debugfs provider declares its *_ns files */
	poll = om_fid(s, "halt_poll_success_ns", -1, FIELD_CUMULATIVE,
		      "debugfs");
	fi = field_table_info(&s->fields, poll);
	fi->unit = UNIT_SECONDS;
	fi->exponent = -9;
	fi->base = 10;

	for (int round = 0; round < 2; round++) {
		uint64_t k = round + 1;

		om_push(s, exit, 0, -1, 1000 * k);
		om_push(s, hlt, 0, -1, 600 * k);
		om_push(s, io, 0, -1, 400 * k);
		om_push(s, exit, 100, -1, 700 * k);
		om_push(s, hlt, 100, -1, 500 * k);
		om_push(s, io, 100, -1, 200 * k);
		om_push(s, uhlt, 0, -1, 40 * k);
		om_push(s, uhlt, 100, -1, 30 * k);
		om_push(s, uhlt, 200, -1, 10 * k);
		om_push(s, halt, 0, -1, 50 * k);
		om_push(s, halt, 100, -1, 35 * k);
		om_push(s, halt, 100, 0, 20 * k);
		om_push(s, halt, 100, 1, 15 * k);
		om_push(s, halt, 200, -1, 15 * k);
		om_push(s, wait_ns, 0, -1, 1500000001ull * k);
		om_push(s, wait_ns, 100, 0, 1000000000ull * k);
		for (int i = 0; i < 4; i++) {
			om_push(s, hb[i], 0, -1, (uint64_t)(i + 1) * k);
			om_push(s, hb[i], 100, 0, (uint64_t)i * k);
		}
		om_push(s, peak, 0, -1, 7);
		om_push(s, mem, 0, -1, 3 * k);
		om_push(s, odd, 0, -1, 9 * k);
		om_push(s, poll, 0, -1, 2500 * k);
		if (round == 0)
			om_push(s, stale, 0, -1, 5);
		stats_update(s, (round + 1) * 2000000000ull);
	}
}

/* The whole snapshot the exporter renders: every field, children too. */
static void om_render_fixture(struct strbuf *b, enum openmetrics_format fmt)
{
	struct stats s;
	struct snapshot snap;

	om_build(&s);
	om_snapshot(&s, NULL, &snap);
	strbuf_init(b);
	openmetrics_render(b, &snap, fmt);
	snapshot_free(&snap);
	stats_free(&s);
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

/* Compares b with the fixture file name, or writes it when asked to. */
static void om_check_fixture(const struct strbuf *b, const char *name)
{
	const char *update = getenv("KVMSTAT_UPDATE_FIXTURES");
	char path[4096];
	char *want;

	snprintf(path, sizeof(path), "%s/openmetrics/%s", data_dir(), name);
	if (update && !strcmp(update, "1")) {
		FILE *f = fopen(path, "w");

		ck_assert_msg(f != NULL, "cannot write %s", path);
		fputs(b->s, f);
		fclose(f);
		return;
	}
	want = om_read(path);
	ck_assert_msg(want != NULL, "missing fixture %s", path);
	ck_assert_str_eq(b->s, want);
	free(want);
}

START_TEST(test_prometheus_fixture)
{
	struct strbuf b;

	om_render_fixture(&b, OPENMETRICS_PROMETHEUS);
	om_check_fixture(&b, "fixture.prom");
	strbuf_free(&b);
}
END_TEST

START_TEST(test_openmetrics_fixture)
{
	struct strbuf b;

	om_render_fixture(&b, OPENMETRICS_OPENMETRICS);
	om_check_fixture(&b, "fixture.om");
	strbuf_free(&b);
}
END_TEST

/* The key facts of the fixture, independent of the file. */
START_TEST(test_fixture_facts)
{
	struct strbuf b;

	om_render_fixture(&b, OPENMETRICS_PROMETHEUS);
	/* a parent with reason series is not exported besides them */
	ck_assert_ptr_null(strstr(b.s, "\nkvm_exit_total "));
	ck_assert_ptr_nonnull(strstr(b.s,
		"\nkvm_exit_total{reason=\"HLT\"} 1200\n"));
	ck_assert_ptr_nonnull(strstr(b.s,
		"\nkvm_userspace_exit_total{pid=\"200\",guest=\"be\\\"ta\\\\x\\ny\",reason=\"HLT\"} 20\n"));
	ck_assert_ptr_nonnull(strstr(b.s,
		"\nkvm_halt_exits_total 100\n"));
	ck_assert_ptr_nonnull(strstr(b.s,
		"\nkvm_halt_exits_total{pid=\"100\",guest=\"alpha\",vcpu=\"1\"} 30\n"));
	ck_assert_ptr_nonnull(strstr(b.s,
		"\nkvm_halt_wait_seconds_total 3.000000002\n"));
	ck_assert_ptr_nonnull(strstr(b.s,
		"\nkvm_pages_mapped_bytes 24576\n"));
	ck_assert_ptr_nonnull(strstr(b.s,
		"\nkvm_halt_poll_success_seconds_total 0.000005\n"));
	ck_assert_ptr_nonnull(strstr(b.s,
		"\nkvm_remote_tlb_flush_total 18\n"));
	/* the histogram: cumulative buckets, le = hi - 1 in seconds */
	ck_assert_ptr_nonnull(strstr(b.s,
		"\nkvm_halt_wait_hist_seconds_bucket{le=\"0.0\"} 2\n"
		"kvm_halt_wait_hist_seconds_bucket{le=\"1e-09\"} 6\n"
		"kvm_halt_wait_hist_seconds_bucket{le=\"3e-09\"} 12\n"
		"kvm_halt_wait_hist_seconds_bucket{le=\"+Inf\"} 20\n"
		"kvm_halt_wait_hist_seconds_count 20\n"
		/* 2x0 + 4x1 + 6x2.5 + 8x4 = 51 ns */
		"kvm_halt_wait_hist_seconds_sum 0.000000051\n"));
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
	const char *req = getenv("KVMSTAT_REQUIRE_KVM");
	struct strbuf b;
	char out[4096];
	int rc;

	om_render_fixture(&b, OPENMETRICS_PROMETHEUS);
	rc = om_promtool(b.s, out, sizeof(out));
	if (rc == 77) {
		if (req && !strcmp(req, "1"))
			ck_abort_msg("promtool missing (apt-get install prometheus)");
		printf("SKIP test_promtool: promtool missing (apt-get install prometheus)\n");
		strbuf_free(&b);
		return;
	}
	ck_assert_msg(rc == 0, "promtool check metrics failed: %s", out);
	strbuf_free(&b);
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
	openmetrics_render(&b, &snap, OPENMETRICS_OPENMETRICS);
	ck_assert_str_eq(b.s, "# EOF\n");
	strbuf_reset(&b);
	openmetrics_render(&b, &snap, OPENMETRICS_PROMETHEUS);
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
	char err[128];

	ck_assert_int_eq(filter_set(&f, "halt_", err, sizeof(err)), 0);
	om_build(&s);
	om_snapshot(&s, &f, &snap);
	strbuf_init(&b);
	openmetrics_render(&b, &snap, OPENMETRICS_PROMETHEUS);
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
	a = om_fid(&s, "foo", -1, FIELD_CUMULATIVE, "debugfs");
	c = om_fid(&s, "kvm_foo", -1, FIELD_CUMULATIVE, "tracepoint");
	om_push(&s, a, 0, -1, 1);
	om_push(&s, c, 0, -1, 2);
	stats_update(&s, 1);
	snapshot_build(&s, NULL, &snap);
	strbuf_init(&b);
	openmetrics_render(&b, &snap, OPENMETRICS_OPENMETRICS);
	ck_assert_str_eq(b.s,
		"# TYPE kvm_foo counter\n"
		"# HELP kvm_foo KVM statistic foo (debugfs)\n"
		"kvm_foo_total 1\n"
		"# EOF\n");
	strbuf_free(&b);
	snapshot_free(&snap);
	stats_free(&s);
}
END_TEST

START_TEST(test_names)
{
	struct field_info f = { .name = "halt_wait_ns", .unit = UNIT_SECONDS,
				.exponent = -9, .bucket = -1 };
	char *n;

	n = openmetrics_name(&f);
	ck_assert_str_eq(n, "kvm_halt_wait_seconds");
	free(n);
	/* the unit the provider declared names it, not the name's ending */
	f.name = "halt_poll_ns";
	f.unit = UNIT_NONE;
	f.exponent = 0;
	n = openmetrics_name(&f);
	ck_assert_str_eq(n, "kvm_halt_poll_nsec");	/* not "_ns_total" */
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
		{ 0, "0.0" }, { 0.001, "0.001" }, { 0.95, "0.95" },
		{ 1, "1.0" }, { 1.7, "1.7" }, { 10, "10.0" },
		{ 1e-10, "1e-10" }, { 1e-9, "1e-09" }, { 1e-5, "1e-05" },
		{ 1e-4, "0.0001" }, { 0.1, "0.1" }, { 100000, "100000.0" },
		{ 1e6, "1e+06" }, { 1e10, "1e+10" }, { 1.023e-6, "1.023e-06" },
		{ 1.1e23, "1.1e+23" }, { 4095, "4095.0" }, { 123456, "123456.0" },
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
	ck_assert(OM == openmetrics_negotiate(
		"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"));
	ck_assert(OM == openmetrics_negotiate("application/openmetrics-text"));
	ck_assert(PROM == openmetrics_negotiate(NULL));
	ck_assert(PROM == openmetrics_negotiate("*/*"));
	ck_assert(PROM == openmetrics_negotiate("text/plain"));
	ck_assert(PROM == openmetrics_negotiate(
		"text/plain;version=0.0.4,application/openmetrics-text;q=0.5"));
	ck_assert(PROM == openmetrics_negotiate(
		"application/openmetrics-text; q=0"));
	ck_assert(OM == openmetrics_negotiate(
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
