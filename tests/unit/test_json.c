// SPDX-License-Identifier: GPL-2.0-only
/*
 * JSON output: a snapshot built by hand (reason children, a nanosecond
 * counter, a log2 histogram, per-VM and per-vCPU series, a stale field)
 * rendered, parsed back with jansson and checked value by value; the
 * front-end's JSON Lines to a -L file, -z, and the reopen after rotation.
 */
#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errmsg.h"
#include "frontend.h"
#include "json_out.h"
#include "json_text.h"
#include "options.h"
#include "stats.h"
#include "suites.h"
#include "testlib.h"
#include "util.h"

/* Until frontend.h declares it with the other front-ends. */
extern const struct frontend_ops json_frontend_ops;

/* Guest names of the fixture's VMs. */
static void jt_names(struct vmdir *g)
{
	vmdir_init(g);
	vmdir_set_name(vmdir_get(g, 100), "alpha");
	/* not UTF-8: written with '?' */
	vmdir_set_name(vmdir_get(g, 200), "b\xff\"c");
}

static int jt_fid(struct stats *s, const char *name, int parent,
		  enum field_type type)
{
	return field_table_intern(&s->fields, name, parent, type, "test");
}

static void jt_push(struct stats *s, int f, pid_t pid, int vcpu, uint64_t v)
{
	sample_set_push(&s->set, f, pid, vcpu, pid ? pid + 10 + vcpu : 0, v, 0);
}

/* Two refreshes 2 s apart, counting from kvmstat's start (no -i). */
static void jt_build(struct stats *s)
{
	struct field_info *fi;
	int exit, hlt, wait_ns, hist, hb[3], stale, gauge, halts;

	stats_init(s, false);
	exit = jt_fid(s, "kvm_exit", -1, FIELD_CUMULATIVE);
	hlt = jt_fid(s, "kvm_exit(HLT)", exit, FIELD_CUMULATIVE);
	wait_ns = jt_fid(s, "halt_wait_ns", -1, FIELD_CUMULATIVE);
	fi = field_table_info(&s->fields, wait_ns);
	fi->unit = UNIT_SECONDS;
	fi->exponent = -9;
	fi->base = 10;
	hist = jt_fid(s, "halt_wait_hist", -1, FIELD_CUMULATIVE);
	fi = field_table_info(&s->fields, hist);
	fi->unit = UNIT_SECONDS;
	fi->exponent = -9;
	fi->hist = HIST_LOG2;
	for (int i = 0; i < 3; i++) {
		char name[32];

		snprintf(name, sizeof(name), "halt_wait_hist(%d)", i);
		hb[i] = jt_fid(s, name, hist, FIELD_CUMULATIVE);
		fi = field_table_info(&s->fields, hb[i]);
		fi->bucket = i;
		fi->bucket_lo = i ? 1ull << (i - 1) : 0;
		fi->bucket_hi = i == 2 ? UINT64_MAX : 1ull << i;
	}
	gauge = jt_fid(s, "pages", -1, FIELD_INSTANT);
	stale = jt_fid(s, "mmio_exits", -1, FIELD_CUMULATIVE);
	halts = jt_fid(s, "halt_exits", -1, FIELD_CUMULATIVE);
	for (uint64_t k = 1; k <= 2; k++) {
		/* VM 100 counts none during the run, VM 200 some */
		jt_push(s, halts, 0, -1, 7 + 3 * k);
		jt_push(s, halts, 100, -1, 7);
		jt_push(s, halts, 200, -1, 3 * k);
		jt_push(s, exit, 0, -1, 100 * k * k);
		jt_push(s, hlt, 0, -1, 60 * k * k);
		jt_push(s, exit, 100, -1, 70 * k * k);
		jt_push(s, exit, 100, 0, 50 * k * k);
		jt_push(s, exit, 100, 1, 20 * k * k);
		jt_push(s, hlt, 200, -1, 9 * k);
		jt_push(s, hlt, 200, 3, 9 * k);
		jt_push(s, wait_ns, 0, -1, 1000000000ull * k);
		for (int i = 0; i < 3; i++) {
			jt_push(s, hb[i], 0, -1, (uint64_t)(i + 1) * k);
			jt_push(s, hb[i], 100, 1, (uint64_t)i * k);
		}
		jt_push(s, gauge, 0, -1, 10 - 3 * k);
		if (k == 1)
			jt_push(s, stale, 0, -1, 5);
		stats_update(s, k * 2000000000ull);
	}
	s->wall.tv_sec = 1700000000;
	s->wall.tv_nsec = 250000000;
}

/* Renders the fixture with every field kept (and with per_vcpu each
 * vCPU), and parses it back. */
static json_t *jt_render(bool pretty, bool per_vcpu)
{
	struct stats s;
	struct snapshot snap;
	struct vmdir names;
	struct snap_request req = { .vms = &names };
	struct strbuf b;
	json_error_t err;
	json_t *j;

	jt_names(&names);
	jt_build(&s);
	snapshot_build(&s, &req, &snap);
	vmdir_free(&names);
	strbuf_init(&b);
	json_out_render(&b, &snap, "tracepoint statsfd", pretty, per_vcpu);
	ck_assert_uint_gt(b.len, 1);
	ck_assert_int_eq(b.s[b.len - 1], '\n');
	if (!pretty)
		ck_assert_ptr_eq(strchr(b.s, '\n'), b.s + b.len - 1);
	j = json_loads(b.s, 0, &err);
	ck_assert_msg(j != NULL, "not JSON (%s): %s", err.text, b.s);
	strbuf_free(&b);
	snapshot_free(&snap);
	stats_free(&s);
	return j;
}

static json_int_t jt_int(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	ck_assert_msg(json_is_integer(v), "%s is not an integer", key);
	return json_integer_value(v);
}

START_TEST(test_header)
{
	json_t *j = jt_render(false, false);

	ck_assert_str_eq(json_string_value(json_object_get(j, "timestamp")),
			 "2023-11-14T22:13:20.250Z");
	ck_assert(json_real_value(json_object_get(j, "epoch")) == 1700000000.25);
	ck_assert(json_real_value(json_object_get(j, "interval")) == 2.0);
	ck_assert_str_eq(json_string_value(
				 json_array_get(json_object_get(j, "providers"),
						1)),
			 "statsfd");
	json_decref(j);
}
END_TEST

START_TEST(test_fields)
{
	json_t *j = jt_render(false, false);
	json_t *fields = json_object_get(j, "fields"), *f;

	f = json_object_get(fields, "kvm_exit");
	ck_assert_str_eq(json_string_value(json_object_get(f, "type")),
			 "cumulative");
	ck_assert_str_eq(json_string_value(json_object_get(f, "unit")), "none");
	ck_assert_ptr_null(json_object_get(f, "exponent"));
	ck_assert(json_is_true(json_object_get(f, "valid")));
	ck_assert_int_eq(jt_int(f, "total"), 300);
	ck_assert_int_eq(jt_int(f, "delta"), 300);
	ck_assert(json_real_value(json_object_get(f, "rate")) == 150.0);

	f = json_object_get(fields, "kvm_exit(HLT)");
	ck_assert_str_eq(json_string_value(json_object_get(f, "parent")),
			 "kvm_exit");
	ck_assert_int_eq(jt_int(f, "total"), 180);

	f = json_object_get(fields, "halt_wait_ns");
	ck_assert_str_eq(json_string_value(json_object_get(f, "unit")),
			 "seconds");
	ck_assert_int_eq(jt_int(f, "exponent"), -9);
	ck_assert_int_eq(jt_int(f, "base"), 10);
	ck_assert_int_eq(jt_int(f, "total"), 1000000000);

	/* a gauge: its value, and a signed change */
	f = json_object_get(fields, "pages");
	ck_assert_str_eq(json_string_value(json_object_get(f, "type")),
			 "instant");
	ck_assert_int_eq(jt_int(f, "total"), 4);
	ck_assert_int_eq(jt_int(f, "delta"), -3);

	/* stale: listed, but no delta or rate */
	f = json_object_get(fields, "mmio_exits");
	ck_assert(json_is_false(json_object_get(f, "valid")));
	ck_assert(json_is_null(json_object_get(f, "delta")));
	ck_assert(json_is_null(json_object_get(f, "rate")));

	/* buckets only in their histogram */
	ck_assert_ptr_null(json_object_get(fields, "halt_wait_hist(0)"));
	json_decref(j);
}
END_TEST

START_TEST(test_histogram)
{
	json_t *j = jt_render(false, true);
	json_t *f = json_object_get(json_object_get(j, "fields"),
				    "halt_wait_hist");
	json_t *b = json_object_get(f, "buckets"), *vcpu;
	/* counted from kvmstat's start: the second reading minus the first */
	static const json_int_t lo[] = { 0, 1, 2 }, total[] = { 1, 2, 3 };

	ck_assert_str_eq(json_string_value(json_object_get(f, "histogram")),
			 "log2");
	ck_assert_int_eq(jt_int(f, "total"), 6);
	ck_assert_int_eq(json_array_size(b), 3);
	for (size_t i = 0; i < 3; i++) {
		json_t *e = json_array_get(b, i);

		ck_assert_int_eq(jt_int(e, "lo"), lo[i]);
		ck_assert_int_eq(jt_int(e, "total"), total[i]);
		ck_assert_int_eq(jt_int(e, "delta"), total[i]);
	}
	ck_assert_int_eq(jt_int(json_array_get(b, 1), "hi"), 2);
	ck_assert(json_is_null(json_object_get(json_array_get(b, 2), "hi")));
	/* per vCPU: VM 100 has no VM-wide histogram, its vCPU 1 has one */
	vcpu = json_array_get(json_object_get(json_array_get(json_object_get(f,
									     "vms"),
							     0),
					      "vcpus"),
			      0);
	ck_assert_int_eq(jt_int(vcpu, "vcpu"), 1);
	ck_assert_int_eq(jt_int(vcpu, "total"), 3);
	ck_assert_int_eq(jt_int(json_array_get(json_object_get(vcpu, "buckets"),
					       2),
				"total"),
			 2);
	json_decref(j);
}
END_TEST

START_TEST(test_breakdowns)
{
	json_t *j = jt_render(true, true);
	json_t *fields = json_object_get(j, "fields");
	json_t *vms, *vm, *vcpus;

	vms = json_object_get(json_object_get(fields, "kvm_exit"), "vms");
	ck_assert_int_eq(json_array_size(vms), 2);
	vm = json_array_get(vms, 0);
	ck_assert_int_eq(jt_int(vm, "pid"), 100);
	ck_assert_str_eq(json_string_value(json_object_get(vm, "guest")),
			 "alpha");
	ck_assert_int_eq(jt_int(vm, "total"), 210);
	vcpus = json_object_get(vm, "vcpus");
	ck_assert_int_eq(json_array_size(vcpus), 2);
	ck_assert_int_eq(jt_int(json_array_get(vcpus, 0), "vcpu"), 0);
	ck_assert_int_eq(jt_int(json_array_get(vcpus, 0), "tid"), 110);
	ck_assert_int_eq(jt_int(json_array_get(vcpus, 0), "total"), 150);
	ck_assert_int_eq(jt_int(json_array_get(vcpus, 1), "total"), 60);
	/* VM 200: only a child event; its parent sums it */
	vm = json_array_get(vms, 1);
	ck_assert_int_eq(jt_int(vm, "pid"), 200);
	ck_assert_str_eq(json_string_value(json_object_get(vm, "guest")),
			 "b?\"c");
	ck_assert_int_eq(jt_int(vm, "total"), 9);
	vm = json_array_get(json_object_get(json_object_get(fields,
							    "kvm_exit(HLT)"),
					    "vms"),
			    0);
	ck_assert_int_eq(jt_int(vm, "pid"), 200);
	ck_assert_int_eq(jt_int(vm, "total"), 9);
	vcpus = json_object_get(vm, "vcpus");
	ck_assert_int_eq(jt_int(json_array_get(vcpus, 0), "vcpu"), 3);
	ck_assert_int_eq(jt_int(json_array_get(vcpus, 0), "total"), 9);
	ck_assert_int_eq(jt_int(json_array_get(vcpus, 0), "delta"), 9);
	/* no breakdowns where no provider gave any */
	ck_assert_ptr_null(
		json_object_get(json_object_get(fields, "halt_wait_ns"), "vms"));
	json_decref(j);
}
END_TEST

/* The default level: each VM, no vCPU; a VM's histogram its source gave
 * only per vCPU is theirs summed; a VM's field that is 0 is left out. */
START_TEST(test_levels)
{
	json_t *j = jt_render(false, false);
	json_t *fields = json_object_get(j, "fields");
	json_t *vms, *vm, *b;
	const char *key;
	json_t *f;

	json_object_foreach (fields, key, f) {
		json_t *e;
		size_t i;

		json_array_foreach (json_object_get(f, "vms"), i, e)
			ck_assert_msg(!json_object_get(e, "vcpus"),
				      "%s has vCPUs at the default level", key);
	}
	/* VM 100's halt_wait_hist: its vCPU 1's, the only one */
	vm = json_array_get(json_object_get(json_object_get(fields,
							    "halt_wait_hist"),
					    "vms"),
			    0);
	ck_assert_int_eq(jt_int(vm, "pid"), 100);
	b = json_object_get(vm, "buckets");
	ck_assert_int_eq(json_array_size(b), 3);
	for (size_t i = 0; i < 3; i++)
		ck_assert_int_eq(jt_int(json_array_get(b, i), "total"),
				 (json_int_t)i);
	/* halt_exits: VM 100 counted none, VM 200 3 */
	vms = json_object_get(json_object_get(fields, "halt_exits"), "vms");
	ck_assert_int_eq(json_array_size(vms), 1);
	ck_assert_int_eq(jt_int(json_array_get(vms, 0), "pid"), 200);
	ck_assert_int_eq(jt_int(json_array_get(vms, 0), "total"), 3);
	ck_assert_int_eq(jt_int(json_object_get(fields, "halt_exits"), "total"),
			 3);
	json_decref(j);
}
END_TEST

/* The filter applies as in the other modes: the default hides children. */
START_TEST(test_filter)
{
	struct field_filter flt = { 0 };
	struct snap_request req = { .filter = &flt };
	struct stats s;
	struct snapshot snap;
	struct strbuf b;
	struct errmsg err;
	json_t *j, *fields;

	ck_assert_int_eq(filter_set(&flt, FILTER_DEFAULT, &err), 0);
	jt_build(&s);
	snapshot_build(&s, &req, &snap);
	strbuf_init(&b);
	json_out_render(&b, &snap, NULL, false, false);
	ck_assert_uint_gt(b.len, 1);
	j = json_loads(b.s, 0, NULL);
	ck_assert_ptr_nonnull(j);
	fields = json_object_get(j, "fields");
	ck_assert_ptr_nonnull(json_object_get(fields, "kvm_exit"));
	ck_assert_ptr_null(json_object_get(fields, "kvm_exit(HLT)"));
	ck_assert_int_eq(json_array_size(
				 json_object_get(json_object_get(fields,
								 "halt_wait_hist"),
						 "buckets")),
			 3);
	ck_assert_int_eq(json_array_size(json_object_get(j, "providers")), 0);
	json_decref(j);
	strbuf_free(&b);
	snapshot_free(&snap);
	stats_free(&s);
	filter_free(&flt);
}
END_TEST

static char *jt_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = xcalloc(1, 1 << 16);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fread(buf, 1, (1 << 16) - 1, f), 0);
	fclose(f);
	return buf;
}

/* -L FILE: one object per line, appended; -z; SIGHUP after rotation. */
START_TEST(test_frontend_lines)
{
	char dir[] = "/tmp/kvmstat-json-XXXXXX", path[256], moved[256];
	struct options o = { .mode = MODE_LOG };
	struct frontend fe = { .ops = &json_frontend_ops };
	struct stats s;
	struct snapshot snap;
	char *text, *nl;
	int lines = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/k.json", dir);
	snprintf(moved, sizeof(moved), "%s/k.json.1", dir);
	o.log_file = path;
	o.skip_zero = true;
	ck_assert_int_eq(fe.ops->open(&fe, &o), 0);
	jt_build(&s);
	snapshot_build(&s, NULL, &snap);
	ck_assert_int_eq(fe.ops->render(&fe, &snap), 0);
	ck_assert_int_eq(fe.ops->render(&fe, &snap), 0);
	snapshot_free(&snap);
	/* an interval where nothing changed (nothing was read): -z skips it */
	stats_update(&s, 6000000000ull);
	snapshot_build(&s, NULL, &snap);
	ck_assert_int_eq(fe.ops->render(&fe, &snap), 0);
	snapshot_free(&snap);
	ck_assert_int_eq(rename(path, moved), 0);
	ck_assert_int_eq(fe.ops->reopen(&fe), 0);
	snapshot_build(&s, NULL, &snap);
	fe.ops->close(&fe);
	snapshot_free(&snap);
	stats_free(&s);

	text = jt_slurp(moved);
	for (char *p = text; (nl = strchr(p, '\n')); p = nl + 1) {
		json_t *j;

		*nl = '\0';
		j = json_loads(p, 0, NULL);
		ck_assert_msg(j != NULL, "line %d is not JSON: %s", lines, p);
		ck_assert_int_eq(json_integer_value(json_object_get(
					 json_object_get(json_object_get(j,
									 "fields"),
							 "kvm_exit"),
					 "total")),
				 300);
		json_decref(j);
		lines++;
	}
	ck_assert_int_eq(lines, 2);
	free(text);
	/* the reopened file exists, empty */
	ck_assert_int_eq(access(path, F_OK), 0);
	unlink(path);
	unlink(moved);
	rmdir(dir);
}
END_TEST

START_TEST(test_frontend_bad_file)
{
	struct options o = { .mode = MODE_LOG,
			     .log_file = "/nonexistent-dir/k.json" };
	struct frontend fe = { .ops = &json_frontend_ops };

	ck_assert_int_lt(fe.ops->open(&fe, &o), 0);
	ck_assert_ptr_nonnull(strstr(fe.msg.text, "/nonexistent-dir/k.json"));
}
END_TEST

/* A random real: every bit pattern that is finite, whole numbers, short
 * decimals, -0 and 0. */
static double jt_real(uint64_t *s)
{
	uint64_t r = test_rand(s), bits = test_rand(s);
	double d;

	switch (r % 5) {
	case 0:
		memcpy(&d, &bits, sizeof(d));
		return isfinite(d) ? d : 1.5;
	case 1:
		return (double)(int64_t)(bits >> (r % 64)) * (r & 64 ? -1 : 1);
	case 2:
		return (double)(bits % 100000) / pow(10, (double)(r % 12));
	case 3:
		return r & 8 ? -0.0 : 0.0;
	default:
		return (double)bits * pow(10, (double)((int)(r % 80) - 40));
	}
}

/* A random string: ASCII, control characters, quotes, backslashes,
 * slashes, DEL and multi-byte UTF-8. */
static json_t *jt_string(uint64_t *s)
{
	static const char *const parts[] = {
		"a",	"Z9",	    "\"",	    "\\",
		"/",	"\n",	    "\t",	    "\r",
		"\b",	"\f",	    "\x01",	    "\x1f",
		"\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
		" "
	};
	char buf[64] = "";
	size_t n = test_rand(s) % 8;

	for (size_t i = 0; i < n; i++)
		strcat(buf, parts[test_rand(s) % ARRAY_SIZE(parts)]);
	return json_string(buf);
}

/* A random tree of depth at most depth. */
static json_t *jt_tree(uint64_t *s, int depth)
{
	uint64_t r = test_rand(s);
	json_t *j;
	size_t n;

	switch (depth > 0 ? r % 9 : r % 7) {
	case 0:
		return json_integer((json_int_t)test_rand(s) >> (r % 64));
	case 1:
		return json_integer(r & 1 ? LLONG_MIN : LLONG_MAX);
	case 2:
		return json_real(jt_real(s));
	case 3:
		return jt_string(s);
	case 4:
		return r & 1 ? json_true() : json_false();
	case 5:
		return json_null();
	case 6:
		return json_integer(-(json_int_t)(r % 1000));
	case 7:
		j = json_array();
		n = test_rand(s) % 5;
		for (size_t i = 0; i < n; i++)
			json_array_append_new(j, jt_tree(s, depth - 1));
		return j;
	default:
		j = json_object();
		n = test_rand(s) % 5;
		for (size_t i = 0; i < n; i++) {
			json_t *k = jt_string(s);

			json_object_set_new(j, json_string_value(k),
					    jt_tree(s, depth - 1));
			json_decref(k);
		}
		return j;
	}
}

/* json_text_write writes what json_dumps writes, compact and pretty. */
START_TEST(test_text_as_jansson)
{
	uint64_t s = 0x853c49e6748fea9bull;

	for (int i = 0; i < 20000; i++) {
		json_t *t = jt_tree(&s, 4);

		for (int pretty = 0; pretty < 2; pretty++) {
			char *want = json_dumps(t,
						JSON_ENCODE_ANY |
							(pretty ?
								 JSON_INDENT(2) :
								 JSON_COMPACT));
			struct strbuf b;

			strbuf_init(&b);
			json_text_write(&b, t, pretty, 0);
			ck_assert_msg(!strcmp(b.s, want), "got\n%s\nwant\n%s",
				      b.s, want);
			strbuf_free(&b);
			free(want);
		}
		json_decref(t);
	}
}
END_TEST

Suite *json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_header);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_histogram);
	tcase_add_test(tc, test_breakdowns);
	tcase_add_test(tc, test_levels);
	tcase_add_test(tc, test_filter);
	tcase_add_test(tc, test_frontend_lines);
	tcase_add_test(tc, test_frontend_bad_file);
	tcase_add_test(tc, test_text_as_jansson);
	suite_add_tcase(s, tc);
	return s;
}
