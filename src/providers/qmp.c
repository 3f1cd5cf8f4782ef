// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QMP provider: KVM's statistics as QEMU reports them over its monitor
 * (--qmp PATH, repeatable), which needs nothing but access to the socket.
 * Each socket is one VM: its pid comes from SO_PEERCRED (-p is matched
 * against it), its name from query-name (for -g, so neither needs /proc
 * or root), its schema from
 * query-stats-schemas once per connection (names, types, units,
 * histograms), its vCPUs' indices and threads from query-cpus-fast (the
 * QOM path is not the index), and every refresh asks query-stats for the
 * "vm" and "vcpu" targets, pipelined, and keeps what the field filter
 * keeps: names another provider owns too, since its VMs fill in the ones
 * that provider does not see (stats_update() chooses).
 *
 * A reply may take reply_ms (1 s unless the options say otherwise),
 * counted from the start of the refresh for all sockets together, so one
 * refresh never waits longer than that, even while a peer keeps sending;
 * each socket may send QMP_BUDGET_DEFAULT bytes per refresh, and one that
 * sends more (a flood of events) is closed like one that talks garbage.
 * A pending SIGINT or SIGTERM ends the waits at once. A socket that times out keeps its
 * connection: its VM is unavailable until the late replies have arrived,
 * and is read again in the refresh after. One that refuses, closes, talks
 * garbage or answers with an error is closed and tried again every
 * retry_ms (3 s). Each change is one notice naming the socket; the other
 * VMs carry on.
 *
 * Totals (pid 0) sum the VMs (or only -p's). A cumulative counter of a VM
 * that became unavailable keeps its last value in the sum, so the totals
 * neither drop when it goes nor count its past again when it comes back;
 * the refresh that lost it flags SAMPLE_REBASE all the same. Gauges and
 * peaks sum (peaks: the maximum) the VMs read in this refresh only.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "hist.h"
#include "options.h"
#include "provider.h"
#include "qmp_client.h"
#include "reading.h"
#include "util.h"

#define QMP_PROVIDER "qmp"
#define QMP_NAME_MAX 256
/* Buckets a histogram is assumed to have when the filter is matched
 * against bucket names before the first reply says how many (KVM: 32). */
#define QMP_BUCKETS_GUESS 64
/* More buckets than this is not a histogram to take. */
#define QMP_BUCKETS_MAX 1024

enum qmp_target {
	QMP_TARGET_VM = 0,
	QMP_TARGET_VCPU,
	QMP_TARGETS,
};

static const char *const qmp_target_names[QMP_TARGETS] = { "vm", "vcpu" };

/* One statistic of a schema, for one target. */
struct qmp_stat {
	char *name;
	enum qmp_target target;
	enum field_type type;
	enum field_hist hist;
	uint32_t bucket_size; /* linear histograms */
	int field;	      /* the field (a histogram's parent), or -1:
				 * the filter leaves it out */
	int *slots;	      /* a scalar's one slot, or one per bucket */
	size_t nslots;
};

/* One value this provider reports: a scalar or a histogram bucket. */
struct qmp_slot {
	int field;
	enum field_type type;
};

struct qmp_vcpu {
	char *qom;	     /* QOM path, how query-stats names it */
	int index;	     /* cpu-index, -1 until query-cpus-fast tells */
	pid_t tid;	     /* thread-id, 0 if unknown */
	bool present;	     /* in this refresh's reply */
	struct reading *val; /* by slot: read in this refresh */
};

enum qmp_state {
	QMP_DOWN,    /* not connected: retry at retry_ns */
	QMP_PENDING, /* timed out: replies up to owed_id owed */
	QMP_UP,	     /* connected and answering */
};

/* One socket, one VM. */
struct qmp_vm {
	char *path;
	struct qmp q;
	enum qmp_state state;
	pid_t pid;	    /* the VM, from the last connection; 0 never */
	pid_t replaced;	    /* the VM before, when another took its path */
	bool available;	    /* read in this refresh */
	bool was_available; /* read in the previous refresh */
	bool ever_read;	    /* read in some refresh */
	uint64_t retry_ns;  /* DOWN: when to connect again */
	uint64_t owed_id;   /* PENDING: the last command sent */
	uint64_t sent[QMP_TARGETS]; /* ids sent this refresh, 0 none */
	json_t *args[QMP_TARGETS];  /* query-stats arguments, or NULL:
					 * nothing wanted of that target */
	struct qmp_vcpu *vcpus;
	size_t nvcpus;
	uint64_t cpus_ns;     /* last query-cpus-fast */
	size_t nslots;	      /* what the arrays below hold */
	struct reading *val;  /* by slot: this refresh, VM and vCPUs */
	struct reading *last; /* by slot: last value read */
	char *problem;	      /* the last notice about it, or NULL */
};

struct qmp_priv {
	struct qmp_vm *vms;
	size_t nvms;
	pid_t pid;	   /* -p, or 0 */
	const char *guest; /* -g when no -p: the VM's own name (query-name)
			    * must be it; not owned */
	struct qmp_stat *stats;
	size_t nstats;
	int *stat_of[QMP_TARGETS]; /* by field id: stat index or -1 */
	size_t nstat_of;
	struct qmp_slot *slots;
	size_t nslots;
	uint64_t *gone;	       /* by slot: counters of VMs replaced at
				 * their path by another process */
	bool opening;	       /* in open(): failures are not retried yet */
	unsigned int reply_ms; /* how long a refresh waits for replies */
	unsigned int retry_ms; /* how soon a failed socket is tried again */
};

static void qmp_note(struct provider *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Adds a notice, after any not yet shown. */
static void qmp_note(struct provider *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->notice)
		errmsg_clear(&p->msg);
	else if (errmsg_isset(&p->msg))
		errmsg_add(&p->msg, "; ");
	va_start(ap, fmt);
	errmsg_vadd(&p->msg, fmt, ap);
	va_end(ap);
	p->notice = true;
}

/* Reports a VM's problem once: again only when it changes. */
static void qmp_vm_note(struct provider *p, struct qmp_vm *vm, const char *text)
{
	if (vm->problem && !strcmp(vm->problem, text))
		return;
	free(vm->problem);
	vm->problem = xstrdup(text);
	qmp_note(p, "%s", text);
}

static enum field_unit qmp_unit(const char *s)
{
	if (!s)
		return UNIT_NONE;
	if (!strcmp(s, "bytes"))
		return UNIT_BYTES;
	if (!strcmp(s, "seconds"))
		return UNIT_SECONDS;
	if (!strcmp(s, "cycles"))
		return UNIT_CYCLES;
	if (!strcmp(s, "boolean"))
		return UNIT_BOOLEAN;
	return UNIT_NONE;
}

/* The type of a StatsType; false for one this code does not know. */
static bool qmp_type(const char *s, enum field_type *type, enum field_hist *hist)
{
	*hist = HIST_NONE;
	*type = FIELD_CUMULATIVE;
	if (!s)
		return false;
	if (!strcmp(s, "cumulative"))
		return true;
	if (!strcmp(s, "instant")) {
		*type = FIELD_INSTANT;
		return true;
	}
	if (!strcmp(s, "peak")) {
		*type = FIELD_PEAK;
		return true;
	}
	if (!strcmp(s, "linear-histogram")) {
		*hist = HIST_LINEAR;
		return true;
	}
	if (!strcmp(s, "log2-histogram")) {
		*hist = HIST_LOG2;
		return true;
	}
	return false;
}

/* Makes the by-field maps cover every field interned so far. */
static void qmp_fit_fields(struct provider *p)
{
	struct qmp_priv *d = p->priv;
	size_t n = p->fields->n;

	if (n <= d->nstat_of)
		return;
	for (int t = 0; t < QMP_TARGETS; t++) {
		d->stat_of[t] = xrealloc(d->stat_of[t],
					 n * sizeof(*d->stat_of[t]));
		for (size_t i = d->nstat_of; i < n; i++)
			d->stat_of[t][i] = -1;
	}
	d->nstat_of = n;
}

/* A new slot for field; the per-slot arrays grow with it. */
static int qmp_slot_add(struct provider *p, int field, enum field_type type)
{
	struct qmp_priv *d = p->priv;
	size_t n = d->nslots + 1;

	d->slots = xrealloc(d->slots, n * sizeof(*d->slots));
	d->slots[d->nslots] = (struct qmp_slot){ field, type };
	d->gone = xrealloc(d->gone, n * sizeof(*d->gone));
	d->gone[d->nslots] = 0;
	return (int)d->nslots++;
}

/* Grows a VM's and its vCPUs' per-slot arrays to every slot. */
static void qmp_vm_fit(struct qmp_priv *d, struct qmp_vm *vm)
{
	size_t old = vm->nslots, n = d->nslots;

	if (n <= old)
		return;
	vm->val = xrealloc(vm->val, n * sizeof(*vm->val));
	vm->last = xrealloc(vm->last, n * sizeof(*vm->last));
	readings_clear(vm->val + old, n - old);
	readings_clear(vm->last + old, n - old);
	for (size_t i = 0; i < vm->nvcpus; i++) {
		struct qmp_vcpu *c = &vm->vcpus[i];

		c->val = xrealloc(c->val, n * sizeof(*c->val));
		readings_clear(c->val + old, n - old);
	}
	vm->nslots = n;
}

/* Whether the filter keeps a stat or, for a histogram, one of its
 * buckets. */
static bool qmp_wanted(const struct provider *p, const char *name,
		       enum field_hist hist)
{
	char bucket[QMP_NAME_MAX];

	if (provider_keeps(p, name))
		return true;
	for (int i = 0; hist != HIST_NONE && i < QMP_BUCKETS_GUESS; i++) {
		snprintf(bucket, sizeof(bucket), "%s(%d)", name, i);
		if (provider_keeps(p, bucket))
			return true;
	}
	return false;
}

/*
 * Takes one StatsSchemaValue into the provider's stats: interns the field
 * (with its unit and histogram shape) when the filter keeps it. Returns the
 * stat's index, or -1 for an entry this code cannot use.
 */
static int qmp_stat_add(struct provider *p, enum qmp_target target, json_t *s)
{
	struct qmp_priv *d = p->priv;
	const char *name = json_string_value(json_object_get(s, "name"));
	json_t *exp = json_object_get(s, "exponent");
	json_t *base = json_object_get(s, "base");
	json_t *bsize = json_object_get(s, "bucket-size");
	struct qmp_stat *st;
	struct field_info *f;
	enum field_type type;
	enum field_hist hist;

	if (!name || !*name || strlen(name) >= QMP_NAME_MAX - 16 ||
	    strchr(name, '(') ||
	    !qmp_type(json_string_value(json_object_get(s, "type")), &type,
		      &hist))
		return -1;
	for (size_t i = 0; i < d->nstats; i++)
		if (d->stats[i].target == target &&
		    !strcmp(d->stats[i].name, name))
			return (int)i;
	d->stats = xrealloc(d->stats, (d->nstats + 1) * sizeof(*d->stats));
	st = &d->stats[d->nstats];
	*st = (struct qmp_stat){ .name = xstrdup(name),
				 .target = target,
				 .type = type,
				 .hist = hist,
				 .field = -1 };
	if (hist == HIST_LINEAR)
		st->bucket_size = json_is_integer(bsize) && json_integer_value(
								    bsize) > 0 ?
					  (uint32_t)json_integer_value(bsize) :
					  1;
	if (!qmp_wanted(p, name, hist))
		return (int)d->nstats++;
	st->field = field_table_intern(p->fields, name, -1, type, QMP_PROVIDER);
	f = field_table_info(p->fields, st->field);
	/* the units are the owner's to say */
	if (!provider_claimed(p, name)) {
		f->unit = qmp_unit(
			json_string_value(json_object_get(s, "unit")));
		f->exponent = json_is_integer(exp) ?
				      (int)json_integer_value(exp) :
				      0;
		f->base = json_is_integer(base) ?
				  (unsigned int)json_integer_value(base) :
				  10;
		f->hist = hist;
		if (!strcmp(name, FIELD_KVM_EXITS))
			f->flags |= FIELD_EXITS;
	}
	qmp_fit_fields(p);
	d->stat_of[target][st->field] = (int)d->nstats;
	if (hist == HIST_NONE) {
		st->slots = xmalloc(sizeof(*st->slots));
		st->slots[0] = qmp_slot_add(p, st->field, type);
		st->nslots = 1;
	}
	return (int)d->nstats++;
}

/*
 * Interns the buckets of a histogram up to n, as NAME(i) children with the
 * parent's unit and their raw ranges; the last one is open-ended.
 */
static void qmp_hist_grow(struct provider *p, struct qmp_stat *st, size_t n)
{
	struct qmp_priv *d = p->priv;
	char name[QMP_NAME_MAX];

	if (n <= st->nslots)
		return;
	st->slots = xrealloc(st->slots, n * sizeof(*st->slots));
	for (size_t i = st->nslots; i < n; i++) {
		snprintf(name, sizeof(name), "%s(%zu)", st->name, i);
		st->slots[i] = qmp_slot_add(p,
					    field_table_intern(p->fields, name,
							       st->field,
							       FIELD_CUMULATIVE,
							       QMP_PROVIDER),
					    FIELD_CUMULATIVE);
	}
	/* every bucket, as the one that was last is no longer open */
	for (size_t i = 0; i < n; i++) {
		const struct field_info *parent = field_table_info(p->fields,
								   st->field);
		struct field_info *f = field_table_info(p->fields,
							d->slots[st->slots[i]]
								.field);

		if (provider_claimed(p, f->name))
			continue; /* another provider's */
		f->unit = parent->unit;
		f->exponent = parent->exponent;
		f->base = parent->base;
		f->bucket = (int)i;
		hist_bucket_range(st->hist, st->bucket_size, i, n,
				  &f->bucket_lo, &f->bucket_hi);
	}
	st->nslots = n;
	qmp_fit_fields(p);
}

/*
 * Reads a VM's schema: adds its statistics and builds the arguments of its
 * query-stats for each target that has a statistic the filter keeps. The
 * filter is applied here, not with query-stats's "names": QEMU spends
 * about as long on each name it is given as on a whole unfiltered reply.
 * 0, or -EPROTO/-ENOENT with why in q->err.
 */
static int qmp_vm_schema(struct provider *p, struct qmp_vm *vm, json_t *r)
{
	struct qmp_priv *d = p->priv;
	size_t wanted[QMP_TARGETS] = { 0, 0 };
	size_t i, j, total = 0;
	json_t *e;

	if (!json_is_array(r)) {
		return errmsg_set(&vm->q.err, -EPROTO,
				  "query-stats-schemas did not return a list");
	}
	json_array_foreach (r, i, e) {
		const char *prov = json_string_value(
			json_object_get(e, "provider"));
		const char *target = json_string_value(
			json_object_get(e, "target"));
		json_t *stats = json_object_get(e, "stats"), *s;
		int t;

		if (!prov || strcmp(prov, "kvm") || !target)
			continue;
		for (t = 0; t < QMP_TARGETS; t++)
			if (!strcmp(target, qmp_target_names[t]))
				break;
		if (t == QMP_TARGETS || !json_is_array(stats))
			continue;
		json_array_foreach (stats, j, s) {
			int k = qmp_stat_add(p, (enum qmp_target)t, s);

			if (k < 0)
				continue;
			total++;
			wanted[t] += d->stats[k].field >= 0;
		}
	}
	if (!total) {
		return errmsg_set(
			&vm->q.err, -ENOENT,
			"QEMU reports no KVM statistics: is it running with -accel kvm (QEMU 7.1 or later)?");
	}
	for (int t = 0; t < QMP_TARGETS; t++) {
		json_decref(vm->args[t]);
		vm->args[t] = NULL;
		if (wanted[t])
			vm->args[t] = json_pack("{s:s, s:[{s:s}]}", "target",
						qmp_target_names[t],
						"providers", "provider", "kvm");
	}
	return 0;
}

static void qmp_vcpus_free(struct qmp_vm *vm)
{
	for (size_t i = 0; i < vm->nvcpus; i++) {
		free(vm->vcpus[i].qom);
		free(vm->vcpus[i].val);
	}
	free(vm->vcpus);
	vm->vcpus = NULL;
	vm->nvcpus = 0;
}

/* The vCPU with QOM path qom, added when new. */
static struct qmp_vcpu *qmp_vcpu_get(struct qmp_priv *d, struct qmp_vm *vm,
				     const char *qom)
{
	struct qmp_vcpu *c;

	for (size_t i = 0; i < vm->nvcpus; i++)
		if (!strcmp(vm->vcpus[i].qom, qom))
			return &vm->vcpus[i];
	vm->vcpus = xrealloc(vm->vcpus, (vm->nvcpus + 1) * sizeof(*vm->vcpus));
	c = &vm->vcpus[vm->nvcpus++];
	*c = (struct qmp_vcpu){ .qom = xstrdup(qom), .index = -1 };
	c->val = xcalloc(d->nslots ? d->nslots : 1, sizeof(*c->val));
	return c;
}

/* Learns the vCPUs' indices and threads from query-cpus-fast. */
static int qmp_vm_cpus(struct provider *p, struct qmp_vm *vm, uint64_t deadline)
{
	struct qmp_priv *d = p->priv;
	json_t *r, *e;
	size_t i;
	int rc;

	vm->cpus_ns = util_now_ns();
	rc = qmp_command(&vm->q, "query-cpus-fast", NULL, deadline, &r);
	if (rc)
		return rc;
	json_array_foreach (r, i, e) {
		const char *qom = json_string_value(
			json_object_get(e, "qom-path"));
		json_t *idx = json_object_get(e, "cpu-index");
		json_t *tid = json_object_get(e, "thread-id");
		struct qmp_vcpu *c;

		if (!qom || !json_is_integer(idx) ||
		    json_integer_value(idx) < 0 ||
		    json_integer_value(idx) > INT32_MAX)
			continue;
		c = qmp_vcpu_get(d, vm, qom);
		c->index = (int)json_integer_value(idx);
		c->tid = json_is_integer(tid) ? (pid_t)json_integer_value(tid) :
						0;
	}
	json_decref(r);
	return 0;
}

/*
 * Closes a VM's connection after a failure and says so once: what failed,
 * why (vm->q.err) and, when known, what to do.
 */
static void qmp_vm_fail(struct provider *p, struct qmp_vm *vm, const char *what,
			const char *fix)
{
	struct qmp_priv *d = p->priv;
	struct errmsg text;
	char vmid[32] = "";

	if (vm->pid)
		snprintf(vmid, sizeof(vmid), " (VM %d)", (int)vm->pid);
	errmsg_set(&text, 0, "QMP socket %s%s: %s: %s%s%s", vm->path, vmid,
		   what, vm->q.err.text, fix ? ": " : "", fix ? fix : "");
	if (!d->opening)
		errmsg_add(&text, "; %s, retrying every %u s",
			   vm->ever_read ? "VM unavailable" : "not read",
			   (d->retry_ms + 999) / 1000);
	qmp_close(&vm->q);
	vm->state = QMP_DOWN;
	vm->retry_ns = util_now_ns() + d->retry_ms * 1000000ull;
	qmp_vm_note(p, vm, text.text);
}

/*
 * Asks the VMM its guest name (query-name: -name guest=NAME): 0 when it
 * is want, -ESRCH when it is another (or none), or the command's -errno;
 * why in vm->q.err. No /proc read, so -g works without root.
 */
static int qmp_vm_named(struct qmp_vm *vm, const char *want, uint64_t deadline)
{
	json_t *r = NULL;
	const char *name;
	int rc;

	rc = qmp_command(&vm->q, "query-name", NULL, deadline, &r);
	if (rc)
		return rc;
	name = json_string_value(json_object_get(r, "name"));
	if (name && !strcmp(name, want))
		rc = 0;
	else if (name)
		rc = errmsg_set(&vm->q.err, -ESRCH,
				"its guest is \"%.64s\", not -g \"%.64s\"",
				name, want);
	else
		rc = errmsg_set(&vm->q.err, -ESRCH,
				"its guest has no name, not -g \"%.64s\"",
				want);
	json_decref(r);
	return rc;
}

static bool qmp_pid_taken(const struct qmp_priv *d, const struct qmp_vm *vm,
			  pid_t pid)
{
	for (size_t i = 0; i < d->nvms; i++)
		if (&d->vms[i] != vm && d->vms[i].state != QMP_DOWN &&
		    d->vms[i].pid == pid)
			return true;
	return false;
}

/*
 * Connects a VM's socket: greeting, capabilities, schema, vCPUs. A
 * different process at the path is a new VM: the old one's counters stay
 * in the totals. 0, or -errno with the problem noted and the VM DOWN.
 */
static int qmp_vm_connect(struct provider *p, struct qmp_vm *vm,
			  uint64_t deadline)
{
	struct qmp_priv *d = p->priv;
	json_t *r = NULL, *args;
	int rc;

	rc = qmp_connect(&vm->q, vm->path, deadline);
	if (rc) {
		char fix[ERRMSG_MAX / 2];

		if (rc == -ENOENT || rc == -ECONNREFUSED)
			snprintf(fix, sizeof(fix),
				 "is QEMU running with -qmp unix:%s,server=on,wait=off?",
				 vm->path);
		else if (rc == -EACCES || rc == -EPERM)
			snprintf(fix, sizeof(fix),
				 "give this user read and write access to it");
		else
			fix[0] = '\0';
		qmp_vm_fail(p, vm, "cannot connect", fix[0] ? fix : NULL);
		return rc;
	}
	if (d->pid && vm->q.pid && vm->q.pid != d->pid) {
		errmsg_set(&vm->q.err, -ESRCH, "its QEMU is pid %d, not -p %d",
			   (int)vm->q.pid, (int)d->pid);
		qmp_vm_fail(p, vm, "ignored", NULL);
		return -ESRCH;
	}
	if (!d->pid && d->guest) {
		rc = qmp_vm_named(vm, d->guest, deadline);
		if (rc) {
			qmp_vm_fail(p, vm,
				    rc == -ESRCH ? "ignored" : "query-name",
				    NULL);
			return rc;
		}
	}
	if (vm->q.pid && qmp_pid_taken(d, vm, vm->q.pid)) {
		errmsg_set(&vm->q.err, -EEXIST,
			   "another --qmp socket reaches the same VM (pid %d)",
			   (int)vm->q.pid);
		qmp_vm_fail(p, vm, "ignored", NULL);
		return -EEXIST;
	}
	args = json_pack("{s:s}", "provider", "kvm");
	rc = qmp_command(&vm->q, "query-stats-schemas", args, deadline, &r);
	json_decref(args);
	if (!rc)
		rc = qmp_vm_schema(p, vm, r);
	json_decref(r);
	if (rc) {
		qmp_vm_fail(p, vm, "query-stats-schemas", NULL);
		return rc;
	}
	if (vm->pid != vm->q.pid) {
		/* another process: keep what the old one counted */
		for (size_t s = 0; s < vm->nslots; s++)
			if (reading_ok(&vm->last[s]) &&
			    d->slots[s].type == FIELD_CUMULATIVE)
				d->gone[s] += vm->last[s].value;
		readings_clear(vm->last, vm->nslots);
		vm->replaced = vm->pid;
		vm->pid = vm->q.pid;
	}
	qmp_vcpus_free(vm);
	rc = qmp_vm_cpus(p, vm, deadline);
	if (rc) {
		qmp_vm_fail(p, vm, "query-cpus-fast", NULL);
		return rc;
	}
	vm->state = QMP_UP;
	return 0;
}

/* Sends this refresh's query-stats commands. */
static int qmp_vm_send(struct provider *p, struct qmp_vm *vm, uint64_t deadline)
{
	int rc;

	for (int t = 0; t < QMP_TARGETS; t++) {
		vm->sent[t] = 0;
		if (!vm->args[t])
			continue;
		rc = qmp_send(&vm->q, "query-stats", vm->args[t], deadline,
			      &vm->sent[t]);
		if (rc) {
			qmp_vm_fail(p, vm, "query-stats", NULL);
			return rc;
		}
		vm->owed_id = vm->sent[t];
	}
	return 0;
}

/* A StatsValue as a number: an integer or a boolean. */
static bool qmp_scalar(json_t *v, uint64_t *out)
{
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return true;
	}
	if (json_is_boolean(v)) {
		*out = json_is_true(v);
		return true;
	}
	return false;
}

/*
 * Takes one StatsResult's list of values into val (a vCPU's, or the VM's
 * for the vm target), by slot. Values this code does not understand are
 * left unread, never zero.
 */
static void qmp_take_stats(struct provider *p, enum qmp_target target,
			   json_t *stats, struct reading *val)
{
	struct qmp_priv *d = p->priv;
	json_t *e;
	size_t i;

	json_array_foreach (stats, i, e) {
		const char *name = json_string_value(json_object_get(e, "name"));
		json_t *v = json_object_get(e, "value");
		struct qmp_stat *st;
		uint64_t x;
		int field, k;

		if (!name)
			continue;
		field = field_table_find(p->fields, name);
		if (field < 0 || (size_t)field >= d->nstat_of)
			continue;
		k = d->stat_of[target][field];
		if (k < 0)
			continue;
		st = &d->stats[k];
		if (st->hist == HIST_NONE) {
			if (qmp_scalar(v, &x))
				reading_add(&val[st->slots[0]], x,
					    d->slots[st->slots[0]].type);
			continue;
		}
		if (!json_is_array(v))
			continue;
		/* buckets first seen now are interned; arrays grow after */
		if (json_array_size(v) > st->nslots)
			continue;
		for (size_t b = 0; b < json_array_size(v); b++)
			if (qmp_scalar(json_array_get(v, b), &x))
				reading_add(&val[st->slots[b]], x,
					    d->slots[st->slots[b]].type);
	}
}

/* Interns the buckets of every histogram in a reply that has more than
 * known; true when some were added. */
static bool qmp_learn_buckets(struct provider *p, enum qmp_target target,
			      json_t *stats)
{
	struct qmp_priv *d = p->priv;
	bool grew = false;
	json_t *e;
	size_t i;

	json_array_foreach (stats, i, e) {
		const char *name = json_string_value(json_object_get(e, "name"));
		json_t *v = json_object_get(e, "value");
		int field, k;

		if (!name || !json_is_array(v))
			continue;
		field = field_table_find(p->fields, name);
		if (field < 0 || (size_t)field >= d->nstat_of)
			continue;
		k = d->stat_of[target][field];
		if (k < 0 || d->stats[k].hist == HIST_NONE ||
		    json_array_size(v) <= d->stats[k].nslots ||
		    json_array_size(v) > QMP_BUCKETS_MAX)
			continue;
		qmp_hist_grow(p, &d->stats[k], json_array_size(v));
		grew = true;
	}
	return grew;
}

/*
 * Receives one target's reply and takes its values. 0, or -errno (the
 * caller decides: a timeout leaves the connection, others close it).
 * *unknown is set when a vCPU's index is not known.
 */
static int qmp_vm_take(struct provider *p, struct qmp_vm *vm, enum qmp_target t,
		       uint64_t deadline, bool *unknown)
{
	struct qmp_priv *d = p->priv;
	json_t *r, *e;
	size_t i;
	int rc;

	rc = qmp_recv(&vm->q, vm->sent[t], deadline, &r);
	if (rc)
		return rc;
	if (!json_is_array(r)) {
		json_decref(r);
		return errmsg_set(&vm->q.err, -EPROTO,
				  "query-stats did not return a list");
	}
	json_array_foreach (r, i, e) {
		json_t *stats = json_object_get(e, "stats");
		const char *prov = json_string_value(
			json_object_get(e, "provider"));

		if (json_is_array(stats) && prov && !strcmp(prov, "kvm") &&
		    qmp_learn_buckets(p, t, stats))
			qmp_vm_fit(d, vm);
	}
	json_array_foreach (r, i, e) {
		json_t *stats = json_object_get(e, "stats");
		const char *prov = json_string_value(
			json_object_get(e, "provider"));
		const char *qom;
		struct qmp_vcpu *c;

		if (!json_is_array(stats) || !prov || strcmp(prov, "kvm"))
			continue;
		if (t == QMP_TARGET_VM) {
			qmp_take_stats(p, t, stats, vm->val);
			continue;
		}
		qom = json_string_value(json_object_get(e, "qom-path"));
		if (!qom)
			continue;
		c = qmp_vcpu_get(d, vm, qom);
		if (!c->present)
			readings_clear(c->val, d->nslots);
		c->present = true;
		qmp_take_stats(p, t, stats, c->val);
		if (c->index < 0)
			*unknown = true;
	}
	json_decref(r);
	return 0;
}

/*
 * Receives a VM's replies for this refresh and sums them into vm->val.
 * Returns true when the VM was read.
 */
static bool qmp_vm_collect(struct provider *p, struct qmp_vm *vm,
			   uint64_t deadline)
{
	struct qmp_priv *d = p->priv;
	bool unknown = false;
	int rc = 0;

	qmp_vm_fit(d, vm);
	readings_clear(vm->val, d->nslots);
	for (size_t i = 0; i < vm->nvcpus; i++)
		vm->vcpus[i].present = false;
	for (int t = 0; t < QMP_TARGETS && !rc; t++)
		if (vm->sent[t])
			rc = qmp_vm_take(p, vm, (enum qmp_target)t, deadline,
					 &unknown);
	if (rc == -EINTR) {
		vm->state = QMP_PENDING; /* the run is ending */
		return false;
	}
	if (rc == -ETIMEDOUT) {
		struct errmsg text;

		vm->state = QMP_PENDING;
		errmsg_set(&text, 0,
			   "QMP socket %s (VM %d): no reply to query-stats within %u ms: VM unavailable until it answers",
			   vm->path, (int)vm->pid, d->reply_ms);
		qmp_vm_note(p, vm, text.text);
		return false;
	}
	if (rc) {
		qmp_vm_fail(p, vm, "query-stats", NULL);
		return false;
	}
	/* a new QOM path (a hot-plugged vCPU): ask again, not too often */
	if (unknown && util_now_ns() - vm->cpus_ns >= d->retry_ms * 1000000ull) {
		rc = qmp_vm_cpus(p, vm, deadline);
		if (rc == -ETIMEDOUT) {
			vm->owed_id = vm->q.next_id - 1;
			vm->state = QMP_PENDING;
		} else if (rc) {
			qmp_vm_fail(p, vm, "query-cpus-fast", NULL);
			return false;
		}
	}
	for (size_t i = 0; i < vm->nvcpus; i++) {
		const struct qmp_vcpu *c = &vm->vcpus[i];

		if (!c->present)
			continue;
		for (size_t s = 0; s < d->nslots; s++)
			reading_fold(&vm->val[s], &c->val[s], d->slots[s].type);
	}
	return true;
}

/* Pushes a VM's values and its vCPUs', and keeps them for the totals. */
static void qmp_vm_push(struct provider *p, struct qmp_vm *vm,
			struct sample_set *out)
{
	struct qmp_priv *d = p->priv;

	for (size_t s = 0; s < d->nslots; s++) {
		if (!reading_ok(&vm->val[s]))
			continue;
		sample_set_push(out, d->slots[s].field, vm->pid,
				SAMPLE_ALL_VCPUS, 0, vm->val[s].value, 0);
		vm->last[s] = vm->val[s];
	}
	for (size_t i = 0; i < vm->nvcpus; i++) {
		const struct qmp_vcpu *c = &vm->vcpus[i];

		if (!c->present || c->index < 0)
			continue;
		for (size_t s = 0; s < d->nslots; s++)
			if (reading_ok(&c->val[s]))
				sample_set_push(out, d->slots[s].field, vm->pid,
						c->index, c->tid,
						c->val[s].value, 0);
	}
}

/* Pushes the totals: see the top of the file for what they sum. */
static void qmp_push_totals(struct provider *p, struct sample_set *out,
			    unsigned int flags)
{
	struct qmp_priv *d = p->priv;

	for (size_t s = 0; s < d->nslots; s++) {
		enum field_type type = d->slots[s].type;
		bool cumulative = type == FIELD_CUMULATIVE, fresh = false;
		struct reading sum = { 0 };

		if (cumulative)
			reading_add(&sum, d->gone[s], type);
		for (size_t i = 0; i < d->nvms; i++) {
			const struct qmp_vm *vm = &d->vms[i];

			if (s >= vm->nslots || (d->pid && vm->pid != d->pid))
				continue;
			if (vm->available && reading_ok(&vm->val[s]))
				fresh = true;
			if (cumulative)
				reading_fold(&sum, &vm->last[s], type);
			else if (vm->available)
				reading_fold(&sum, &vm->val[s], type);
		}
		if (fresh)
			sample_set_push(out, d->slots[s].field, 0,
					SAMPLE_ALL_VCPUS, 0, sum.value, flags);
	}
}

/*
 * One refresh: late replies first, then every ready VM's query-stats go
 * out together, sockets due for a retry connect, and the replies are read
 * against one deadline.
 */
static int qmp_read(struct provider *p, struct sample_set *out)
{
	struct qmp_priv *d = p->priv;
	uint64_t now = util_now_ns();
	uint64_t deadline = now + d->reply_ms * 1000000ull;
	unsigned int flags = 0;

	for (size_t i = 0; i < d->nvms; i++) {
		struct qmp_vm *vm = &d->vms[i];

		vm->was_available = vm->available;
		vm->available = false;
		vm->sent[QMP_TARGET_VM] = vm->sent[QMP_TARGET_VCPU] = 0;
		qmp_budget(&vm->q, QMP_BUDGET_DEFAULT);
		if (vm->state == QMP_PENDING) {
			int rc = qmp_recv(&vm->q, vm->owed_id, 0, NULL);

			if (rc == -ETIMEDOUT || rc == -EINTR)
				continue; /* still owed: no wait */
			if (rc && rc != -EREMOTEIO) {
				qmp_vm_fail(p, vm, "late reply", NULL);
				continue;
			}
			vm->state = QMP_UP;
		}
		if (vm->state == QMP_UP)
			qmp_vm_send(p, vm, deadline);
	}
	for (size_t i = 0; i < d->nvms; i++) {
		struct qmp_vm *vm = &d->vms[i];

		if (vm->state != QMP_DOWN || now < vm->retry_ns ||
		    util_now_ns() >= deadline)
			continue;
		if (!qmp_vm_connect(p, vm, deadline))
			qmp_vm_send(p, vm, deadline);
	}
	for (size_t i = 0; i < d->nvms; i++) {
		struct qmp_vm *vm = &d->vms[i];

		if (vm->state != QMP_UP ||
		    !(vm->sent[QMP_TARGET_VM] || vm->sent[QMP_TARGET_VCPU]))
			continue;
		vm->available = qmp_vm_collect(p, vm, deadline);
		if (!vm->available)
			continue;
		if (vm->replaced)
			qmp_note(p, "QMP socket %s: now VM %d (VM %d is gone)",
				 vm->path, (int)vm->pid, (int)vm->replaced);
		else if (vm->problem)
			qmp_note(p, "QMP socket %s (VM %d): %s", vm->path,
				 (int)vm->pid,
				 vm->ever_read ? "answers again" : "connected");
		free(vm->problem);
		vm->problem = NULL;
		vm->replaced = 0;
		vm->ever_read = true;
		if (!d->pid || vm->pid == d->pid)
			qmp_vm_push(p, vm, out);
	}
	for (size_t i = 0; i < d->nvms; i++)
		if (d->vms[i].was_available && !d->vms[i].available &&
		    (!d->pid || d->vms[i].pid == d->pid))
			flags = SAMPLE_REBASE;
	qmp_push_totals(p, out, flags);
	return 0;
}

static bool qmp_probe(const struct options *opts)
{
	return opts->nqmp > 0;
}

static void qmp_provider_close(struct provider *p)
{
	struct qmp_priv *d = p->priv;

	if (!d)
		return;
	for (size_t i = 0; i < d->nvms; i++) {
		struct qmp_vm *vm = &d->vms[i];

		qmp_close(&vm->q);
		qmp_vcpus_free(vm);
		for (int t = 0; t < QMP_TARGETS; t++)
			json_decref(vm->args[t]);
		free(vm->path);
		free(vm->val);
		free(vm->last);
		free(vm->problem);
	}
	free(d->vms);
	for (size_t i = 0; i < d->nstats; i++) {
		free(d->stats[i].name);
		free(d->stats[i].slots);
	}
	free(d->stats);
	for (int t = 0; t < QMP_TARGETS; t++)
		free(d->stat_of[t]);
	free(d->slots);
	free(d->gone);
	free(d);
	p->priv = NULL;
}

/*
 * Connects every socket (each with its own reply timeout). Succeeds when
 * at least one VM answers; the others are noted and retried from read().
 */
static int qmp_provider_open(struct provider *p, const struct options *opts)
{
	struct qmp_priv *d;
	size_t up = 0, wanted = 0;
	int rc = -ENOENT;

	errmsg_clear(&p->msg);
	p->notice = false;
	if (!opts->nqmp) {
		provider_msg(p, false,
			     "no QMP socket given: use --qmp PATH (QEMU: -qmp unix:PATH,server=on,wait=off)");
		return -EINVAL;
	}
	d = xcalloc(1, sizeof(*d));
	p->priv = d;
	d->pid = opts->pid;
	d->guest = opts->guest;
	d->reply_ms = opts->qmp_reply_timeout_ms ? opts->qmp_reply_timeout_ms :
						   QMP_REPLY_TIMEOUT_MS_DEFAULT;
	d->retry_ms = opts->qmp_retry_ms ? opts->qmp_retry_ms :
					   QMP_RETRY_MS_DEFAULT;
	d->vms = xcalloc(opts->nqmp, sizeof(*d->vms));
	d->nvms = opts->nqmp;
	d->opening = true;
	for (size_t i = 0; i < d->nvms; i++) {
		struct qmp_vm *vm = &d->vms[i];

		qmp_init(&vm->q, d->reply_ms);
		vm->path = xstrdup(opts->qmp_paths[i]);
		vm->state = QMP_DOWN;
		rc = qmp_vm_connect(p, vm,
				    util_now_ns() + d->reply_ms * 1000000ull);
		if (rc)
			continue;
		up++;
		wanted += vm->args[QMP_TARGET_VM] || vm->args[QMP_TARGET_VCPU];
	}
	if (!up) {
		/* the notes become the reason, one line */
		p->notice = false;
		if (d->nvms > 1) {
			struct errmsg why = p->msg;

			provider_msg(p, false,
				     "no QMP socket could be used: %s",
				     why.text);
		}
		goto out_close;
	}
	if (!wanted) {
		provider_msg(p, false,
			     "no KVM statistic from QMP matches the field filter");
		rc = -ENOENT;
		goto out_close;
	}
	d->opening = false;
	if (up < d->nvms)
		qmp_note(p, "sockets that failed are tried again every %u s",
			 (d->retry_ms + 999) / 1000);
	return 0;

out_close:
	qmp_provider_close(p);
	return rc;
}

static bool qmp_asked(const struct options *o)
{
	return o->nqmp > 0;
}

const struct provider_ops qmp_provider_ops = {
	.name = QMP_PROVIDER,
	.asked = qmp_asked,
	.probe = qmp_probe,
	.open = qmp_provider_open,
	.read = qmp_read,
	.close = qmp_provider_close,
	.own_pid_check = true,
};
