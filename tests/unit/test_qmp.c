// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QMP client and provider against a fake QEMU monitor: a child process
 * that listens on a unix socket in a temporary directory and answers
 * qmp_capabilities, query-stats-schemas, query-cpus-fast and query-stats
 * for a VM with two vCPUs, with values that follow how many queries it has
 * answered. Each test sets up the server's faults: no server at all, a
 * close right after the greeting, garbage, an error reply, a reply later
 * than the timeout, events before every reply.
 */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arbiter.h"
#include "errmsg.h"
#include "filter.h"
#include "options.h"
#include "provider.h"
#include "qmp_client.h"
#include "sample.h"
#include "suites.h"
#include "testlib.h"
#include "util.h"

extern const struct provider_ops qmp_provider_ops;

enum fake_greet {
	GREET_OK,
	GREET_CLOSE,   /* greeting, then close */
	GREET_GARBAGE, /* not JSON instead of the greeting */
};

enum fake_fault {
	FAULT_NONE,
	FAULT_CLOSE,   /* close instead of replying */
	FAULT_GARBAGE, /* a line that is not JSON */
	FAULT_ERROR,   /* an error reply */
	FAULT_SLOW,    /* reply after slow_ms */
};

/* What the fake server does; faults hit vcpu query-stats number
 * fault_at .. fault_at + fault_n - 1 (counted from 1 over connections). */
struct fake_cfg {
	enum fake_greet greet;
	enum fake_fault fault;
	int fault_at, fault_n;
	int slow_ms;
	int events; /* events sent before every message */
};

struct fake {
	char dir[64];
	char path[100];
	pid_t pid;
};

static const char *const fake_qom[2] = { "/machine/unattached/device[0]",
					 "/machine/unattached/device[3]" };
#define FAKE_TID 5000

static void fake_send(int fd, json_t *m)
{
	char *s = json_dumps(m, JSON_COMPACT);

	dprintf(fd, "%s\r\n", s);
	free(s);
	json_decref(m);
}

static void fake_events(int fd, int n)
{
	for (int i = 0; i < n; i++)
		dprintf(fd,
			"{\"timestamp\": {\"seconds\": 1700000000, \"microseconds\": %d}, \"event\": \"RTC_CHANGE\", \"data\": {\"offset\": %d, \"qom-path\": \"/machine/unattached/device[9]\"}}\r\n",
			i, i);
}

static json_t *fake_schema(void)
{
	return json_pack("[{s:s, s:s, s:[{s:s, s:s, s:i}, {s:s, s:s, s:i},"
			 " {s:s, s:s, s:i}, {s:s, s:s, s:i, s:i}]},"
			 " {s:s, s:s, s:[{s:s, s:s, s:i}, {s:s, s:s, s:s, s:i, s:i},"
			 " {s:s, s:s, s:s, s:i}, {s:s, s:s, s:s, s:i, s:i},"
			 " {s:s, s:s, s:s, s:i, s:i}, {s:s, s:s, s:s, s:i}]}]",
			 "provider", "kvm", "target", "vm", "stats", "name",
			 "remote_tlb_flush", "type", "cumulative", "exponent",
			 0, "name", "max_mmu_rmap_size", "type", "peak",
			 "exponent", 0, "name", "pages_4k", "type", "instant",
			 "exponent", 0, "name", "lin_hist", "type",
			 "linear-histogram", "exponent", 0, "bucket-size", 8,
			 "provider", "kvm", "target", "vcpu", "stats", "name",
			 "exits", "type", "cumulative", "exponent", 0, "name",
			 "halt_wait_ns", "type", "cumulative", "unit",
			 "seconds", "base", 10, "exponent", -9, "name",
			 "guest_mode", "type", "instant", "unit", "boolean",
			 "exponent", 0, "name", "halt_wait_hist", "type",
			 "log2-histogram", "unit", "seconds", "base", 10,
			 "exponent", -9, "name", "test_bytes", "type",
			 "instant", "unit", "bytes", "base", 2, "exponent", 10,
			 "name", "test_cycles", "type", "cumulative", "unit",
			 "cycles", "exponent", 0);
}

/* Whether the request's names (none: all) include name. */
static bool fake_wants(json_t *names, const char *name)
{
	json_t *e;
	size_t i;

	if (!names)
		return true;
	json_array_foreach (names, i, e)
		if (!strcmp(json_string_value(e), name))
			return true;
	return false;
}

static void fake_add(json_t *list, json_t *names, const char *name, json_t *v)
{
	if (fake_wants(names, name))
		json_array_append_new(list, json_pack("{s:s, s:o}", "name",
						      name, "value", v));
	else
		json_decref(v);
}

/* query-stats's return for a target at query number k. */
static json_t *fake_stats(bool vcpu, int k, json_t *names)
{
	json_t *r = json_array();

	if (!vcpu) {
		json_t *l = json_array();

		fake_add(l, names, "remote_tlb_flush", json_integer(7 + k));
		fake_add(l, names, "max_mmu_rmap_size", json_integer(3));
		fake_add(l, names, "pages_4k", json_integer(100));
		fake_add(l, names, "lin_hist", json_pack("[i,i,i]", 1, 2, 3));
		json_array_append_new(r, json_pack("{s:s, s:o}", "provider",
						   "kvm", "stats", l));
		return r;
	}
	/* in reverse order, as QEMU lists them */
	for (int i = 1; i >= 0; i--) {
		json_t *l = json_array();

		fake_add(l, names, "exits",
			 json_integer(1000 * (i + 1) + 10 * k));
		fake_add(l, names, "halt_wait_ns",
			 json_integer(500 * (i + 1) * k));
		fake_add(l, names, "guest_mode", json_boolean(i == 1));
		fake_add(l, names, "halt_wait_hist",
			 json_pack("[i,i,i,i]", k, i + 1, 0, 2));
		fake_add(l, names, "test_bytes", json_integer(4));
		fake_add(l, names, "test_cycles", json_integer(77));
		json_array_append_new(r, json_pack("{s:s, s:o, s:s}",
						   "provider", "kvm", "stats",
						   l, "qom-path", fake_qom[i]));
	}
	return r;
}

static json_t *fake_error(const char *cls, const char *desc)
{
	return json_pack("{s:{s:s, s:s}}", "error", "class", cls, "desc", desc);
}

/* Serves one connection until it closes or a fault closes it. */
static void fake_conn(int fd, const struct fake_cfg *cfg, int *kvcpu, int *kvm)
{
	bool caps = false;
	char *line = NULL;
	size_t cap = 0;
	FILE *in;

	if (cfg->greet == GREET_GARBAGE) {
		dprintf(fd, "Welcome! this is not a QMP greeting\r\n");
		return;
	}
	fake_events(fd, cfg->events);
	dprintf(fd,
		"{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 0, \"minor\": 2, \"major\": 7}, \"package\": \"fake\"}, \"capabilities\": [\"oob\"]}}\r\n");
	if (cfg->greet == GREET_CLOSE)
		return;
	in = fdopen(dup(fd), "r");
	while (in && getline(&line, &cap, in) > 0) {
		json_t *req = json_loads(line, 0, NULL);
		const char *cmd = json_string_value(
			json_object_get(req, "execute"));
		json_t *id = json_object_get(req, "id");
		json_t *args = json_object_get(req, "arguments");
		json_t *reply = NULL;

		if (!cmd) {
			reply = fake_error("GenericError", "bad request");
		} else if (!strcmp(cmd, "qmp_capabilities")) {
			caps = true;
			reply = json_pack("{s:{}}", "return");
		} else if (!caps) {
			reply = fake_error("CommandNotFound",
					   "Expecting capabilities negotiation");
		} else if (!strcmp(cmd, "query-stats-schemas")) {
			reply = json_pack("{s:o}", "return", fake_schema());
		} else if (!strcmp(cmd, "query-cpus-fast")) {
			reply = json_pack("{s:[{s:i, s:s, s:i, s:s}, {s:i, s:s, s:i, s:s}]}",
					  "return", "cpu-index", 0, "qom-path",
					  fake_qom[0], "thread-id", FAKE_TID,
					  "target", "x86_64", "cpu-index", 1,
					  "qom-path", fake_qom[1], "thread-id",
					  FAKE_TID + 1, "target", "x86_64");
		} else if (!strcmp(cmd, "query-stats")) {
			const char *target = json_string_value(
				json_object_get(args, "target"));
			bool vcpu = target && !strcmp(target, "vcpu");
			json_t *names = json_object_get(
				json_array_get(json_object_get(args,
							       "providers"),
					       0),
				"names");
			int k = vcpu ? ++*kvcpu : ++*kvm;
			bool fault = vcpu && cfg->fault_at &&
				     k >= cfg->fault_at &&
				     k < cfg->fault_at + cfg->fault_n;

			if (fault && cfg->fault == FAULT_CLOSE) {
				json_decref(req);
				break;
			}
			if (fault && cfg->fault == FAULT_GARBAGE) {
				dprintf(fd, "}} this is not JSON {{\r\n");
				json_decref(req);
				continue;
			}
			if (fault && cfg->fault == FAULT_SLOW)
				usleep((useconds_t)cfg->slow_ms * 1000);
			if (fault && cfg->fault == FAULT_ERROR)
				reply = fake_error("GenericError",
						   "stats are broken");
			else
				reply = json_pack("{s:o}", "return",
						  fake_stats(vcpu, k, names));
		} else {
			reply = fake_error("CommandNotFound", "no such command");
		}
		if (id)
			json_object_set(reply, "id", id);
		fake_events(fd, cfg->events);
		fake_send(fd, reply);
		json_decref(req);
	}
	free(line);
	if (in)
		fclose(in);
}

/* Starts the fake server on dir/name (it listens before this returns). */
static void fake_start(struct fake *f, const struct fake_cfg *cfg)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int pfd[2];
	char c;

	ck_assert_int_eq(pipe(pfd), 0);
	f->pid = fork();
	ck_assert_int_ge(f->pid, 0);
	if (f->pid == 0) {
		int kvcpu = 0, kvm = 0, lfd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGPIPE, SIG_IGN);
		close(pfd[0]);
		lfd = socket(AF_UNIX, SOCK_STREAM, 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
		if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
		    listen(lfd, 4))
			_exit(1);
		if (write(pfd[1], "r", 1) != 1)
			_exit(1);
		for (;;) {
			int fd = accept(lfd, NULL, NULL);

			if (fd < 0)
				continue;
			fake_conn(fd, cfg, &kvcpu, &kvm);
			close(fd);
		}
	}
	close(pfd[1]);
	ck_assert_int_eq(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
}

static void fake_stop(struct fake *f)
{
	if (f->pid > 0) {
		kill(f->pid, SIGKILL);
		waitpid(f->pid, NULL, 0);
		f->pid = 0;
	}
}

/* One provider over up to four sockets in one temporary directory. */
struct qfx {
	char dir[64];
	struct fake srv[4];
	const char *paths[4];
	struct options o;
	struct field_filter filter;
	struct field_table fields;
	struct arbiter arb; /* who owns what, as main sets it up */
	struct sample_set set;
	struct provider p;
	bool opened;
};

static struct qfx fx;

static void setup(void)
{
	char dir[sizeof(fx.dir)] = "/tmp/kvmstat-qmp.XXXXXX";

	memset(&fx, 0, sizeof(fx));
	ck_assert_ptr_nonnull(mkdtemp(dir));
	memcpy(fx.dir, dir, sizeof(dir));
	for (int i = 0; i < 4; i++) {
		snprintf(fx.srv[i].path, sizeof(fx.srv[i].path), "%s/vm%d.sock",
			 dir, i);
		fx.paths[i] = fx.srv[i].path;
	}
	field_table_init(&fx.fields);
	arbiter_init(&fx.arb, &fx.fields);
	sample_set_init(&fx.set, &fx.fields);
	fx.o.qmp_reply_timeout_ms = 300;
	fx.o.qmp_retry_ms = 200;
}

static void teardown(void)
{
	if (fx.opened)
		fx.p.ops->close(&fx.p);
	for (int i = 0; i < 4; i++) {
		fake_stop(&fx.srv[i]);
		unlink(fx.srv[i].path);
	}
	rmdir(fx.dir);
	sample_set_free(&fx.set);
	arbiter_free(&fx.arb);
	field_table_free(&fx.fields);
	filter_free(&fx.filter);
}

/* Opens the provider on the first n sockets; pattern NULL: all fields. */
static int qfx_open(size_t n, const char *pattern)
{
	struct errmsg err;
	int rc;

	fx.o.qmp_paths = fx.paths;
	fx.o.nqmp = n;
	fx.p.ops = &qmp_provider_ops;
	fx.p.fields = &fx.fields;
	fx.p.arbiter = &fx.arb;
	if (pattern) {
		ck_assert_int_eq(filter_set(&fx.filter, pattern, &err), 0);
		fx.p.filter = &fx.filter;
	}
	rc = test_provider_open(&fx.p, &fx.o);
	fx.opened = rc == 0;
	return rc;
}

static void qfx_read(void)
{
	sample_set_clear(&fx.set);
	ck_assert_int_eq(fx.p.ops->read(&fx.p, &fx.set), 0);
}

/* The sample of name in a scope; false when there is none. */
static bool qfx_get(const char *name, pid_t pid, int vcpu, uint64_t *v,
		    const struct sample **out)
{
	int field = field_table_find(&fx.fields, name);

	for (size_t i = 0; field >= 0 && i < fx.set.n; i++) {
		const struct sample *s = &fx.set.v[i];

		if (s->field == field && s->pid == pid && s->vcpu == vcpu) {
			*v = s->value;
			if (out)
				*out = s;
			return true;
		}
	}
	return false;
}

static uint64_t qfx_val(const char *name, pid_t pid, int vcpu)
{
	uint64_t v = 0;

	ck_assert_msg(qfx_get(name, pid, vcpu, &v, NULL),
		      "no sample %s pid %d vcpu %d", name, (int)pid, vcpu);
	return v;
}

static size_t qfx_count(pid_t pid)
{
	size_t n = 0;

	for (size_t i = 0; i < fx.set.n; i++)
		n += fx.set.v[i].pid == pid;
	return n;
}

static void qfx_clear_msg(void)
{
	errmsg_clear(&fx.p.msg);
	fx.p.notice = false;
}

static const struct field_info *qfx_info(const char *name)
{
	int id = field_table_find(&fx.fields, name);

	ck_assert_msg(id >= 0, "no field %s", name);
	return field_table_info(&fx.fields, id);
}

START_TEST(test_session)
{
	struct fake_cfg cfg = { 0 };
	const struct field_info *f;
	const struct sample *s;
	pid_t pid;
	uint64_t v;

	fake_start(&fx.srv[0], &cfg);
	pid = fx.srv[0].pid;
	ck_assert_int_eq(qfx_open(1, NULL), 0);
	ck_assert_str_eq(fx.p.msg.text, "");
	qfx_read();

	/* vCPU index from query-cpus-fast (device[3] is vCPU 1), tid */
	ck_assert(qfx_get("exits", pid, 0, &v, &s));
	ck_assert_uint_eq(v, 1010);
	ck_assert_int_eq(s->tid, FAKE_TID);
	ck_assert(qfx_get("exits", pid, 1, &v, &s));
	ck_assert_uint_eq(v, 2010);
	ck_assert_int_eq(s->tid, FAKE_TID + 1);
	ck_assert_uint_eq(qfx_val("exits", pid, SAMPLE_ALL_VCPUS), 3020);
	ck_assert(qfx_get("exits", 0, SAMPLE_ALL_VCPUS, &v, &s));
	ck_assert_uint_eq(v, 3020);
	ck_assert_uint_eq(s->flags, 0);
	ck_assert_int_eq(s->tid, 0);
	ck_assert_uint_eq(qfx_val("halt_wait_ns", pid, 1), 1000);
	ck_assert_uint_eq(qfx_val("halt_wait_ns", 0, SAMPLE_ALL_VCPUS), 1500);
	/* booleans are 0/1 and sum to the vCPUs in guest mode */
	ck_assert_uint_eq(qfx_val("guest_mode", pid, 0), 0);
	ck_assert_uint_eq(qfx_val("guest_mode", pid, 1), 1);
	ck_assert_uint_eq(qfx_val("guest_mode", 0, SAMPLE_ALL_VCPUS), 1);
	/* VM-target stats: per VM and in the totals, not per vCPU */
	ck_assert_uint_eq(qfx_val("remote_tlb_flush", pid, SAMPLE_ALL_VCPUS), 8);
	ck_assert_uint_eq(qfx_val("remote_tlb_flush", 0, SAMPLE_ALL_VCPUS), 8);
	ck_assert(!qfx_get("remote_tlb_flush", pid, 0, &v, NULL));
	ck_assert_uint_eq(qfx_val("max_mmu_rmap_size", 0, SAMPLE_ALL_VCPUS), 3);

	/* types and units from the schema */
	f = qfx_info("exits");
	ck_assert_int_eq(f->type, FIELD_CUMULATIVE);
	ck_assert_int_eq(f->unit, UNIT_NONE);
	ck_assert_str_eq(f->provider, "qmp");
	ck_assert_uint_eq(f->flags & FIELD_EXITS, FIELD_EXITS);
	f = qfx_info("halt_wait_ns");
	ck_assert_uint_eq(f->flags & FIELD_EXITS, 0);
	ck_assert_int_eq(f->unit, UNIT_SECONDS);
	ck_assert_int_eq(f->exponent, -9);
	ck_assert_uint_eq(f->base, 10);
	f = qfx_info("guest_mode");
	ck_assert_int_eq(f->type, FIELD_INSTANT);
	ck_assert_int_eq(f->unit, UNIT_BOOLEAN);
	f = qfx_info("max_mmu_rmap_size");
	ck_assert_int_eq(f->type, FIELD_PEAK);
	f = qfx_info("pages_4k");
	ck_assert_int_eq(f->type, FIELD_INSTANT);
	f = qfx_info("test_bytes");
	ck_assert_int_eq(f->unit, UNIT_BYTES);
	ck_assert_int_eq(f->exponent, 10);
	ck_assert_uint_eq(f->base, 2);
	f = qfx_info("test_cycles");
	ck_assert_int_eq(f->unit, UNIT_CYCLES);

	/* a log2 histogram: parent with the unit, NAME(i) bucket children */
	f = qfx_info("halt_wait_hist");
	ck_assert_int_eq(f->hist, HIST_LOG2);
	ck_assert_int_eq(f->unit, UNIT_SECONDS);
	ck_assert_int_eq(f->exponent, -9);
	ck_assert_int_eq(f->bucket, -1);
	for (int b = 0; b < 4; b++) {
		static const uint64_t lo[] = { 0, 1, 2, 4 };
		static const uint64_t hi[] = { 1, 2, 4, UINT64_MAX };
		char name[64];

		snprintf(name, sizeof(name), "halt_wait_hist(%d)", b);
		f = qfx_info(name);
		ck_assert_int_eq(f->parent, field_table_find(&fx.fields,
							     "halt_wait_hist"));
		ck_assert_int_eq(f->bucket, b);
		ck_assert_uint_eq(f->bucket_lo, lo[b]);
		ck_assert_uint_eq(f->bucket_hi, hi[b]);
		ck_assert_int_eq(f->type, FIELD_CUMULATIVE);
		ck_assert_int_eq(f->unit, UNIT_SECONDS);
		ck_assert_int_eq(f->exponent, -9);
	}
	ck_assert_int_lt(field_table_find(&fx.fields, "halt_wait_hist(4)"), 0);
	/* [k, i + 1, 0, 2] per vCPU i, at k = 1 */
	ck_assert_uint_eq(qfx_val("halt_wait_hist(0)", pid, 0), 1);
	ck_assert_uint_eq(qfx_val("halt_wait_hist(1)", pid, 1), 2);
	ck_assert_uint_eq(qfx_val("halt_wait_hist(1)", pid, SAMPLE_ALL_VCPUS),
			  3);
	ck_assert_uint_eq(qfx_val("halt_wait_hist(2)", 0, SAMPLE_ALL_VCPUS), 0);
	ck_assert_uint_eq(qfx_val("halt_wait_hist(3)", 0, SAMPLE_ALL_VCPUS), 4);
	ck_assert(!qfx_get("halt_wait_hist", pid, 0, &v, NULL));
	/* a linear histogram: buckets of bucket-size 8 */
	f = qfx_info("lin_hist");
	ck_assert_int_eq(f->hist, HIST_LINEAR);
	f = qfx_info("lin_hist(1)");
	ck_assert_uint_eq(f->bucket_lo, 8);
	ck_assert_uint_eq(f->bucket_hi, 16);
	f = qfx_info("lin_hist(2)");
	ck_assert_uint_eq(f->bucket_lo, 16);
	ck_assert_uint_eq(f->bucket_hi, UINT64_MAX);
	ck_assert_uint_eq(qfx_val("lin_hist(2)", pid, SAMPLE_ALL_VCPUS), 3);

	/* the next refresh reads the next values */
	qfx_read();
	ck_assert_uint_eq(qfx_val("exits", pid, 0), 1020);
	ck_assert_uint_eq(qfx_val("exits", 0, SAMPLE_ALL_VCPUS), 3040);
	ck_assert_uint_eq(qfx_val("remote_tlb_flush", 0, SAMPLE_ALL_VCPUS), 9);
	ck_assert_uint_eq(qfx_val("halt_wait_hist(0)", pid, SAMPLE_ALL_VCPUS),
			  4);
	ck_assert_str_eq(fx.p.msg.text, "");
}
END_TEST

/* The filter limits what is interned and pushed. */
START_TEST(test_filter)
{
	struct fake_cfg cfg = { 0 };
	pid_t pid;

	fake_start(&fx.srv[0], &cfg);
	pid = fx.srv[0].pid;
	ck_assert_int_eq(qfx_open(1, "^(exits|halt_wait_hist)$"), 0);
	qfx_read();
	ck_assert_uint_eq(qfx_val("exits", pid, 1), 2010);
	ck_assert_uint_eq(qfx_val("halt_wait_hist(3)", pid, 1), 2);
	ck_assert_int_lt(field_table_find(&fx.fields, "halt_wait_ns"), 0);
	ck_assert_int_lt(field_table_find(&fx.fields, "remote_tlb_flush"), 0);
	/* exits and 4 buckets, for 2 vCPUs, the VM and the totals */
	ck_assert_uint_eq(fx.set.n, 5 * 4);
}
END_TEST

/* A name another provider owns (statsfd declared it first) is read all
 * the same, per VM and vCPU, to fill in the VMs that provider lacks. */
START_TEST(test_claimed_name_read)
{
	struct fake_cfg cfg = { 0 };
	struct errmsg err;
	pid_t pid;
	int id;

	fake_start(&fx.srv[0], &cfg);
	pid = fx.srv[0].pid;
	id = field_table_intern(&fx.fields, "exits", -1, FIELD_CUMULATIVE,
				"statsfd");
	ck_assert_int_eq(filter_set(&fx.filter, "^exits$", &err), 0);
	fx.p.filter = &fx.filter;
	ck_assert_int_eq(qfx_open(1, NULL), 0);
	qfx_read();
	ck_assert_uint_eq(qfx_val("exits", pid, 1), 2010);
	ck_assert(qfx_val("exits", pid, SAMPLE_ALL_VCPUS) > 2010);
	ck_assert_str_eq(fx.fields.v[id].provider, "statsfd");
	ck_assert_int_lt(field_table_find(&fx.fields, "remote_tlb_flush"), 0);
}
END_TEST

/* The units of a name another provider owns are that provider's to say:
 * QMP leaves them, and the shape of a bucket it did not declare, alone. */
START_TEST(test_claimed_units_left)
{
	struct fake_cfg cfg = { 0 };
	const struct field_info *f;
	int ns, hist, b1;

	fake_start(&fx.srv[0], &cfg);
	ns = field_table_intern(&fx.fields, "halt_wait_ns", -1,
				FIELD_CUMULATIVE, "statsfd");
	hist = field_table_intern(&fx.fields, "halt_wait_hist", -1,
				  FIELD_CUMULATIVE, "statsfd");
	b1 = field_table_intern(&fx.fields, "halt_wait_hist(1)", hist,
				FIELD_CUMULATIVE, "statsfd");
	ck_assert_int_eq(qfx_open(1, "^(halt_wait|test_bytes)"), 0);
	qfx_read();
	f = &fx.fields.v[ns];
	ck_assert_int_eq(f->unit, UNIT_NONE);
	ck_assert_int_eq(f->exponent, 0);
	f = &fx.fields.v[hist];
	ck_assert_int_eq(f->hist, HIST_NONE);
	f = &fx.fields.v[b1];
	ck_assert_int_eq(f->unit, UNIT_NONE);
	ck_assert_int_eq(f->bucket, -1);
	/* its own, beside them, get theirs */
	ck_assert_int_eq(qfx_info("test_bytes")->unit, UNIT_BYTES);
	f = qfx_info("halt_wait_hist(2)"); /* its parent's unit */
	ck_assert_int_eq(f->unit, fx.fields.v[hist].unit);
	ck_assert_int_eq(f->bucket, 2);
	ck_assert_str_eq(f->provider, "qmp");
}
END_TEST

/* A filter that names one bucket keeps its histogram. */
START_TEST(test_filter_bucket)
{
	struct fake_cfg cfg = { 0 };

	fake_start(&fx.srv[0], &cfg);
	ck_assert_int_eq(qfx_open(1, "^halt_wait_hist\\(3\\)$"), 0);
	qfx_read();
	ck_assert_uint_eq(qfx_val("halt_wait_hist(3)", 0, SAMPLE_ALL_VCPUS), 4);
	ck_assert_int_lt(field_table_find(&fx.fields, "exits"), 0);
	ck_assert_int_eq(qfx_info("halt_wait_hist")->hist, HIST_LOG2);
}
END_TEST

START_TEST(test_filter_none)
{
	struct fake_cfg cfg = { 0 };

	fake_start(&fx.srv[0], &cfg);
	ck_assert_int_eq(qfx_open(1, "^nothing_like_this$"), -ENOENT);
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, "field filter"));
}
END_TEST

/* No server: a socket file nobody listens on, and no file at all. */
START_TEST(test_refused)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", fx.paths[0]);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	ck_assert_int_eq(qfx_open(1, NULL), -ECONNREFUSED);
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, fx.paths[0]));
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, "refused"));
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, "server=on"));
	ck_assert_ptr_null(strchr(fx.p.msg.text, '\n'));
	ck_assert(!fx.p.notice);
}
END_TEST

START_TEST(test_missing)
{
	ck_assert_int_eq(qfx_open(1, NULL), -ENOENT);
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, fx.paths[0]));
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, "-qmp unix:"));
}
END_TEST

START_TEST(test_close_after_greeting)
{
	struct fake_cfg cfg = { .greet = GREET_CLOSE };

	fake_start(&fx.srv[0], &cfg);
	ck_assert_int_eq(qfx_open(1, NULL), -ECONNRESET);
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, fx.paths[0]));
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, "closed the connection"));
}
END_TEST

START_TEST(test_garbage_greeting)
{
	struct fake_cfg cfg = { .greet = GREET_GARBAGE };

	fake_start(&fx.srv[0], &cfg);
	ck_assert_int_eq(qfx_open(1, NULL), -EPROTO);
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, fx.paths[0]));
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, "not JSON"));
}
END_TEST

/* Every socket failing: one line naming each. */
START_TEST(test_all_fail)
{
	ck_assert_int_eq(qfx_open(2, NULL), -ENOENT);
	ck_assert_ptr_nonnull(
		strstr(fx.p.msg.text, "no QMP socket could be used"));
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, fx.paths[0]));
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, fx.paths[1]));
}
END_TEST

/* One socket of two answers: open succeeds with a notice; the other is
 * read once it comes up. */
START_TEST(test_partial)
{
	struct fake_cfg cfg = { 0 };
	pid_t a, b;

	fake_start(&fx.srv[0], &cfg);
	a = fx.srv[0].pid;
	ck_assert_int_eq(qfx_open(2, NULL), 0);
	ck_assert(fx.p.notice);
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, fx.paths[1]));
	ck_assert_ptr_null(strstr(fx.p.msg.text, fx.paths[0]));
	qfx_clear_msg();
	qfx_read();
	ck_assert_uint_eq(qfx_val("exits", 0, SAMPLE_ALL_VCPUS), 3020);

	fake_start(&fx.srv[1], &cfg);
	b = fx.srv[1].pid;
	usleep(fx.o.qmp_retry_ms * 1000 + 50000);
	qfx_read();
	ck_assert_uint_eq(qfx_val("exits", a, SAMPLE_ALL_VCPUS), 3040);
	ck_assert_uint_eq(qfx_val("exits", b, SAMPLE_ALL_VCPUS), 3020);
	ck_assert_uint_eq(qfx_val("exits", b, 1), 2010);
	ck_assert_uint_eq(qfx_val("exits", 0, SAMPLE_ALL_VCPUS), 6060);
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, "connected"));
}
END_TEST

/*
 * A fault during a refresh: read() returns 0 with a notice naming the
 * socket, the VM has no samples, the other VM carries on, the totals keep
 * the lost VM's counters (flagged SAMPLE_REBASE), and after the retry
 * interval the VM is back.
 */
static void check_fault(enum fake_fault fault, const char *why)
{
	struct fake_cfg good = { 0 };
	struct fake_cfg bad = { .fault = fault, .fault_at = 2, .fault_n = 1 };
	const struct sample *s;
	pid_t a, b;
	uint64_t v;

	fake_start(&fx.srv[0], &good);
	fake_start(&fx.srv[1], &bad);
	a = fx.srv[0].pid;
	b = fx.srv[1].pid;
	ck_assert_int_eq(qfx_open(2, NULL), 0);
	qfx_read();
	ck_assert_uint_eq(qfx_val("exits", 0, SAMPLE_ALL_VCPUS), 6040);
	ck_assert(!fx.p.notice);

	qfx_read();
	ck_assert_msg(fx.p.notice, "no notice");
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, fx.paths[1]));
	ck_assert_msg(strstr(fx.p.msg.text, why), "\"%s\" not in \"%s\"", why,
		      fx.p.msg.text);
	ck_assert_ptr_null(strstr(fx.p.msg.text, fx.paths[0]));
	ck_assert_uint_eq(qfx_count(b), 0);
	ck_assert_uint_eq(qfx_val("exits", a, SAMPLE_ALL_VCPUS), 3040);
	/* b's last 3020 stays in the totals */
	ck_assert(qfx_get("exits", 0, SAMPLE_ALL_VCPUS, &v, &s));
	ck_assert_uint_eq(v, 3040 + 3020);
	ck_assert_uint_eq(s->flags, SAMPLE_REBASE);
	/* instant values sum the VMs read now */
	ck_assert_uint_eq(qfx_val("guest_mode", 0, SAMPLE_ALL_VCPUS), 1);
	qfx_clear_msg();

	/* not retried before the interval: no wait, no notice */
	qfx_read();
	ck_assert_uint_eq(qfx_count(b), 0);
	ck_assert(!fx.p.notice);
	ck_assert(qfx_get("exits", 0, SAMPLE_ALL_VCPUS, &v, &s));
	ck_assert_uint_eq(v, 3060 + 3020);
	ck_assert_uint_eq(s->flags, 0);

	usleep(fx.o.qmp_retry_ms * 1000 + 50000);
	qfx_read();
	ck_assert_uint_eq(qfx_val("exits", b, 0), 1030);
	ck_assert_uint_eq(qfx_val("exits", 0, SAMPLE_ALL_VCPUS), 3080 + 3060);
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, "answers again"));
}

START_TEST(test_close_mid_session)
{
	check_fault(FAULT_CLOSE, "closed the connection");
}
END_TEST

START_TEST(test_garbage_reply)
{
	check_fault(FAULT_GARBAGE, "not JSON");
}
END_TEST

START_TEST(test_error_reply)
{
	check_fault(FAULT_ERROR, "GenericError: stats are broken");
}
END_TEST

/*
 * A reply later than the timeout: read() returns after the timeout, the VM
 * is unavailable, the next refresh does not wait for it and the one after
 * the late reply reads it again on the same connection.
 */
START_TEST(test_slow)
{
	struct fake_cfg cfg = {
		.fault = FAULT_SLOW, .fault_at = 2, .fault_n = 1, .slow_ms = 700
	};
	uint64_t t0, ms;
	pid_t pid;

	fake_start(&fx.srv[0], &cfg);
	pid = fx.srv[0].pid;
	ck_assert_int_eq(qfx_open(1, NULL), 0);
	qfx_read();
	ck_assert_uint_eq(qfx_val("exits", pid, 0), 1010);

	t0 = util_now_ns();
	qfx_read();
	ms = (util_now_ns() - t0) / 1000000;
	ck_assert_msg(ms >= fx.o.qmp_reply_timeout_ms - 10 &&
			      ms < fx.o.qmp_reply_timeout_ms + 150,
		      "read took %llu ms", (unsigned long long)ms);
	ck_assert_uint_eq(qfx_count(pid), 0);
	ck_assert_uint_eq(qfx_count(0), 0);
	ck_assert(fx.p.notice);
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, fx.paths[0]));
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, "no reply"));
	ck_assert_msg(strstr(fx.p.msg.text, "within 300 ms"), "msg: %s",
		      fx.p.msg.text);
	qfx_clear_msg();

	/* still owed: this refresh does not wait */
	t0 = util_now_ns();
	qfx_read();
	ck_assert_uint_lt((util_now_ns() - t0) / 1000000, 50);
	ck_assert_uint_eq(qfx_count(pid), 0);
	ck_assert(!fx.p.notice);

	usleep(500 * 1000); /* the late reply has come */
	t0 = util_now_ns();
	qfx_read();
	ck_assert_uint_lt((util_now_ns() - t0) / 1000000, 100);
	ck_assert_uint_eq(qfx_val("exits", pid, 0), 1030);
	ck_assert_uint_eq(qfx_val("exits", 0, SAMPLE_ALL_VCPUS), 3060);
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, "answers again"));
}
END_TEST

/*
 * Options that leave the timing at 0 get the defaults: a refresh waits
 * QMP_REPLY_TIMEOUT_MS_DEFAULT for a slow reply, and failed sockets are
 * tried again every QMP_RETRY_MS_DEFAULT (said rounded up to seconds).
 */
START_TEST(test_default_timing)
{
	struct fake_cfg cfg = { .fault = FAULT_SLOW,
				.fault_at = 2,
				.fault_n = 1,
				.slow_ms = 1500 };
	uint64_t t0, ms;

	fx.o.qmp_reply_timeout_ms = 0;
	fx.o.qmp_retry_ms = 0;
	fake_start(&fx.srv[0], &cfg);
	ck_assert_int_eq(qfx_open(2, NULL), 0);
	ck_assert_msg(strstr(fx.p.msg.text, "tried again every 3 s"), "msg: %s",
		      fx.p.msg.text);
	qfx_clear_msg();
	qfx_read();
	t0 = util_now_ns();
	qfx_read();
	ms = (util_now_ns() - t0) / 1000000;
	ck_assert_msg(ms >= QMP_REPLY_TIMEOUT_MS_DEFAULT - 10 &&
			      ms < QMP_REPLY_TIMEOUT_MS_DEFAULT + 150,
		      "read took %llu ms", (unsigned long long)ms);
	ck_assert_msg(strstr(fx.p.msg.text, "within 1000 ms"), "msg: %s",
		      fx.p.msg.text);
}
END_TEST

/* Events before the greeting and before every reply are skipped. */
START_TEST(test_events)
{
	struct fake_cfg cfg = { .events = 3 };
	pid_t pid;

	fake_start(&fx.srv[0], &cfg);
	pid = fx.srv[0].pid;
	ck_assert_int_eq(qfx_open(1, NULL), 0);
	qfx_read();
	ck_assert_uint_eq(qfx_val("exits", pid, 1), 2010);
	ck_assert_uint_eq(qfx_val("halt_wait_hist(0)", 0, SAMPLE_ALL_VCPUS), 2);
	qfx_read();
	ck_assert_uint_eq(qfx_val("exits", 0, SAMPLE_ALL_VCPUS), 3040);
	ck_assert_str_eq(fx.p.msg.text, "");
}
END_TEST

/* -p keeps only that VM's socket. */
START_TEST(test_pid)
{
	struct fake_cfg cfg = { 0 };

	fake_start(&fx.srv[0], &cfg);
	fake_start(&fx.srv[1], &cfg);
	fx.o.pid = fx.srv[1].pid;
	ck_assert_int_eq(qfx_open(2, NULL), 0);
	ck_assert_ptr_nonnull(strstr(fx.p.msg.text, "not -p"));
	qfx_read();
	ck_assert_uint_eq(qfx_count(fx.srv[0].pid), 0);
	ck_assert_uint_eq(qfx_val("exits", fx.srv[1].pid, 0), 1010);
	ck_assert_uint_eq(qfx_val("exits", 0, SAMPLE_ALL_VCPUS), 3020);
}
END_TEST

/* The client alone: stale replies to commands given up on are skipped,
 * a timeout is prompt, an error reply says its class and text. */
START_TEST(test_client)
{
	struct fake_cfg cfg = { .fault = FAULT_SLOW,
				.fault_at = 1,
				.fault_n = 1,
				.slow_ms = 400,
				.events = 1 };
	json_t *args = json_pack("{s:s}", "target", "vcpu"), *r = NULL;
	struct qmp q;
	uint64_t id, t0;

	fake_start(&fx.srv[0], &cfg);
	qmp_init(&q, 100);
	ck_assert_int_eq(qmp_connect(&q, fx.paths[0],
				     util_now_ns() + 1000000000ull),
			 0);
	ck_assert_int_eq(q.pid, fx.srv[0].pid);
	ck_assert_int_eq(qmp_send(&q, "query-stats", args,
				  util_now_ns() + 1000000000ull, &id),
			 0);
	t0 = util_now_ns();
	ck_assert_int_eq(qmp_recv(&q, id, t0 + 100000000ull, &r), -ETIMEDOUT);
	ck_assert_uint_lt(util_now_ns() - t0, 200000000ull);
	/* the message quotes the timeout given to qmp_init() */
	ck_assert_str_eq(q.err.text, "no reply within 100 ms");
	/* the late reply is skipped on the way to the next one */
	ck_assert_int_eq(qmp_command(&q, "query-stats", args,
				     util_now_ns() + 1000000000ull, &r),
			 0);
	ck_assert(json_is_array(r));
	ck_assert_int_eq(json_integer_value(json_object_get(
				 json_array_get(json_object_get(json_array_get(r,
									       1),
								"stats"),
						0),
				 "value")),
			 1020);
	json_decref(r);
	ck_assert_int_eq(qmp_command(&q, "no-such-command", NULL,
				     util_now_ns() + 1000000000ull, NULL),
			 -EREMOTEIO);
	ck_assert_str_eq(q.err.text, "CommandNotFound: no such command");
	ck_assert_uint_ge(q.events, 4);
	json_decref(args);
	qmp_close(&q);
}
END_TEST

Suite *qmp_suite(void)
{
	Suite *s = suite_create("qmp");
	TCase *tc = tcase_create("qmp");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_session);
	tcase_add_test(tc, test_filter);
	tcase_add_test(tc, test_claimed_name_read);
	tcase_add_test(tc, test_claimed_units_left);
	tcase_add_test(tc, test_filter_bucket);
	tcase_add_test(tc, test_filter_none);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_missing);
	tcase_add_test(tc, test_close_after_greeting);
	tcase_add_test(tc, test_garbage_greeting);
	tcase_add_test(tc, test_all_fail);
	tcase_add_test(tc, test_partial);
	tcase_add_test(tc, test_close_mid_session);
	tcase_add_test(tc, test_garbage_reply);
	tcase_add_test(tc, test_error_reply);
	tcase_add_test(tc, test_slow);
	tcase_add_test(tc, test_default_timing);
	tcase_add_test(tc, test_events);
	tcase_add_test(tc, test_pid);
	tcase_add_test(tc, test_client);
	suite_add_tcase(s, tc);
	return s;
}
