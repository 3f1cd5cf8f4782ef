// SPDX-License-Identifier: GPL-2.0-only
/*
 * The breakdown collector (include/breakdown.h): finds the tracepoints the
 * architecture's descriptor names for the kinds asked (x86's kvm_pio,
 * kvm_mmio, kvm_msr and kvm_hypercall; arm64's kvm_mmio and kvm_hvc_arm64)
 * under the run's tracefs (in a test tree, the real tracepoints their ids
 * name, read from their records at the places the tree's format files
 * say), and with latency kvm_entry and kvm_fpu,
 * the re-entry marks; loads the breakdown engine, and each read turns its
 * per-thread counts into keyed tables of the whole selection, each VM and
 * (asked for) each vCPU: the top keys of a table by count, the rest summed
 * as "other", with deltas and rates since the read before and names from
 * the architecture's tables, looked up once per key, and for MMIO
 * addresses from the VMs' memory maps (cfg.gpa_name), asked at each read
 * for the rows shown, copied only when they change.
 *
 * Bounds: the kernel counts at most BRK_NKEYS distinct keys (all threads
 * and kinds together; later ones count as their kind's other) in a map of
 * fixed size, and every table here has at most top rows and other, so
 * neither a guest sweeping its address space nor many vCPUs grow what is
 * read, kept or written past those.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "bpf_engine.h"
#include "breakdown.h"
#include "brk_engine.h"
#include "hashtab.h"
#include "tpformat.h"
#include "tracepoint_int.h"
#include "util.h"

/* Each kind: its name, its directions' names, whether the VMs name its
 * keys (cfg.gpa_name), and where it is, said to a host without it. Its
 * tracepoint, fields, raw arguments and names of keys are the
 * architecture's (arch_breakdown_for). */
static const struct {
	const char *name;
	const char *dirs[2];
	bool gpa_names;
	const char *only;
} bd_kinds[BRK_NKINDS] = {
	[BRK_IOPORT] = { "ioport",
			 { "in", "out" },
			 false,
			 "I/O ports are x86 only" },
	[BRK_MMIO] = { "mmio",
		       { "read", "write" },
		       true,
		       "kvm_mmio is not this architecture's" },
	[BRK_MSR] = { "msr", { "read", "write" }, false, "MSRs are x86 only" },
	[BRK_HYPERCALL] = { "hypercall",
			    { NULL, NULL },
			    false,
			    "hypercalls are broken down on x86 and arm64 only" },
};

/* A key in one scope, this read. */
struct bd_ent {
	pid_t pid;
	int vcpu; /* SAMPLE_ALL_VCPUS, or a vCPU of pid */
	pid_t tid;
	pid_t from; /* the VM whose hits it sums; -1: several */
	int kind, dir;
	uint64_t key; /* BRK_OTHER: the keys past the kernel's bound */
	uint64_t count;
	int64_t delta;
	uint64_t tcount, sum, min, max;
	size_t h; /* its buckets in hpool, when timed */
};

/* A key's count at the read before. */
struct bd_prev {
	pid_t pid;
	int vcpu, kind, dir;
	uint64_t key, count;
};

/* A key's name in a scope (pid 0 but for MMIO addresses, whose names
 * are each VM's), kept from one read to the next. */
struct bd_name {
	int kind;
	pid_t pid;
	uint64_t key;
	char *name; /* NULL: none */
};

/* Names kept at most: past that, they are forgotten and asked again. */
#define BD_NAMES_MAX 4096

struct breakdown {
	struct breakdown_cfg cfg;
	/* each kind's tracepoint and names here, or NULL */
	const struct arch_breakdown *arch[BRK_NKINDS];
	struct brk_engine *eng;
	struct tp_vcpumap vcpus;
	struct bd_ent *ent;
	size_t nent, capent;
	struct hashtab ent_index;
	uint64_t (*hpool)[LAT_NBUCKETS]; /* buckets of ents, then others */
	size_t nh, caph;
	struct bd_prev *prev;
	size_t nprev, capprev;
	struct hashtab prev_index;
	struct bd_name *names;
	size_t nnames, capnames;
	struct hashtab name_index;
	uint64_t last_ns; /* the read before, or 0 */
	/* what the last read gives */
	struct snap_brk_table *tables;
	size_t ntables, captables;
	struct snap_brk_row *rows;
	size_t nrows, caprows;
	struct snap_breakdown out;
};

unsigned breakdown_kinds_on(const struct arch_desc *d)
{
	unsigned kinds = 0;

	for (int k = 0; k < BRK_NKINDS; k++)
		if (arch_breakdown_for(d, bd_kinds[k].name))
			kinds |= 1u << k;
	return kinds;
}

/* d's kinds, "mmio, hypercall" ("none" when it has none), into buf. */
static const char *bd_kinds_text(const struct arch_desc *d, char *buf,
				 size_t len)
{
	unsigned kinds = breakdown_kinds_on(d);

	snprintf(buf, len, "%s", kinds ? "" : "none");
	for (int k = 0; k < BRK_NKINDS; k++)
		if (kinds & 1u << k)
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
				 *buf ? ", " : "", bd_kinds[k].name);
	return buf;
}

int breakdown_parse_on(const struct arch_desc *d, const char *list,
		       unsigned *kinds, struct errmsg *msg)
{
	char *copy = xstrdup(list), *save = NULL, have[64];
	int rc = 0;

	*kinds = 0;
	bd_kinds_text(d, have, sizeof(have));
	for (char *w = strtok_r(copy, ", ", &save); w && !rc;
	     w = strtok_r(NULL, ", ", &save)) {
		int k;

		if (!strcmp(w, "all")) {
			*kinds |= breakdown_kinds_on(d);
			continue;
		}
		for (k = 0; k < BRK_NKINDS && strcmp(w, bd_kinds[k].name); k++)
			;
		if (k == BRK_NKINDS)
			rc = errmsg_set(msg, -EINVAL,
					"--breakdown: no kind '%s' (one or more "
					"of %s, or all)",
					w, have);
		else if (!arch_breakdown_for(d, w))
			rc = errmsg_set(msg, -EINVAL,
					"--breakdown %s: %s; on %s: %s", w,
					bd_kinds[k].only, d->name, have);
		else
			*kinds |= 1u << k;
	}
	if (!rc && !*kinds)
		rc = errmsg_set(msg, -EINVAL,
				"--breakdown: an empty list (one or more of "
				"%s, or all)",
				have);
	free(copy);
	return rc;
}

int breakdown_parse(const char *list, unsigned *kinds, struct errmsg *msg)
{
	return breakdown_parse_on(arch_host, list, kinds, msg);
}

/* Kind k's source: its raw tracepoint, or (a test tree standing another
 * tracepoint in for it) its record; false when it has none. */
static bool bd_source(const struct breakdown_cfg *cfg,
		      const struct arch_breakdown *a, struct brk_source *src)
{
	struct tp_format *f = tp_kvm_format(cfg->tracefs_root, a->event);
	char *raw;
	bool native, ok = false;

	src->raw = NULL;
	src->id = -1;
	src->event = a->event;
	src->key_arg = a->key_arg;
	src->dir_arg = a->dir ? a->dir_arg : BRK_NO_ARG;
	if (!f)
		return false;
	raw = tp_kvm_raw_name(cfg->tracefs_root, f, a->event, &native);
	if (raw && native) {
		src->raw = raw;
		ok = true;
	} else if (raw && tp_rec_field(f, a->key, &src->key)) {
		if (!a->dir || !tp_rec_field(f, a->dir, &src->dir))
			src->dir = (struct lat_rec_field){ 0, 0 };
		src->id = f->id;
		ok = true;
	}
	if (!src->raw)
		free(raw);
	tp_format_free(f);
	return ok;
}

/* A re-entry mark's raw tracepoint, or NULL; caller frees. */
static char *bd_mark(const struct breakdown_cfg *cfg, const char *event)
{
	struct tp_format *f = tp_kvm_format(cfg->tracefs_root, event);
	bool native;
	char *raw = f ? tp_kvm_raw_name(cfg->tracefs_root, f, event, &native) :
			NULL;

	tp_format_free(f);
	return raw;
}

int breakdown_open(struct breakdown **out, const struct breakdown_cfg *cfg,
		   struct errmsg *msg)
{
	struct breakdown *b = xcalloc(1, sizeof(*b));
	struct brk_engine_cfg ec = { .tgid = (uint32_t)cfg->pid,
				     .timed = cfg->timed };
	const char *what = NULL;
	const char *ev[BRK_NKINDS];
	char events[128] = "";
	unsigned found = 0;
	int err = 0, nev = 0;

	*out = NULL;
	b->cfg = *cfg;
	b->cfg.lat = NULL; /* used here only: it may close first */
	b->last_ns = util_now_ns();
	if (!b->cfg.top)
		b->cfg.top = BREAKDOWN_TOP;
	b->vcpus.proc_root = cfg->proc_root;
	b->vcpus.debugfs_root = cfg->debugfs_root;
	hashtab_init(&b->ent_index);
	hashtab_init(&b->prev_index);
	hashtab_init(&b->name_index);
	/* the kinds this architecture has: the monitor's 'k' asks all */
	b->cfg.kinds &= breakdown_kinds_on(arch_host);
	for (int k = 0; k < BRK_NKINDS; k++) {
		ec.src[k] = (struct brk_source){ .id = -1 };
		b->arch[k] = arch_breakdown_for(arch_host, bd_kinds[k].name);
		if (!(b->cfg.kinds & 1u << k))
			continue;
		ev[nev++] = b->arch[k]->event;
		if (bd_source(cfg, b->arch[k], &ec.src[k]))
			found |= 1u << k;
	}
	/* "kvm_pio, kvm_mmio, kvm_msr or kvm_hypercall" */
	for (int i = 0; i < nev; i++)
		snprintf(events + strlen(events),
			 sizeof(events) - strlen(events), "%s%s",
			 !i	     ? "" :
			 i + 1 < nev ? ", " :
				       " or ",
			 ev[i]);
	if (!found) {
		err = errmsg_set(msg, -ENOENT,
				 "--breakdown: no %s tracepoint under %s; load "
				 "the kvm module and mount tracefs",
				 *events ? events : "kvm",
				 cfg->tracefs_root ? cfg->tracefs_root :
						     "/sys/kernel/tracing");
		goto out;
	}
	if (cfg->timed) {
		ec.entry_raw = bd_mark(cfg, "kvm_entry");
		ec.fpu_raw = bd_mark(cfg, "kvm_fpu");
		ec.lat = latency_engine(cfg->lat);
	}
	/* tests: threads made to share the entries of their last slots */
	if (getenv("KVMSTAT_BREAKDOWN_PENDS"))
		ec.pend_entries = (uint32_t)
			strtoul(getenv("KVMSTAT_BREAKDOWN_PENDS"), NULL, 10);
	b->eng = brk_engine_open(&ec, &err, &what);
	if (!b->eng) {
		const char *log = bpf_engine_last_log();

		errmsg_set(msg, err,
			   "--breakdown needs BPF, which could not load here "
			   "(%s: %s%s%s); run as root (CAP_BPF and CAP_PERFMON)",
			   what ? what : "load", strerror(-err),
			   *log ? "; " : "", log);
	}
out:
	for (int k = 0; k < BRK_NKINDS; k++)
		free((char *)ec.src[k].raw);
	free((char *)ec.entry_raw);
	free((char *)ec.fpu_raw);
	if (err) {
		breakdown_close(b);
		return err;
	}
	b->out.kinds = b->cfg.kinds;
	b->out.timed = cfg->timed;
	b->out.top = b->cfg.top;
	b->out.vcpu_series = cfg->per_vcpu;
	*out = b;
	return 0;
}

static uint32_t bd_hash(pid_t pid, int vcpu, int kind, int dir, uint64_t key)
{
	return hashtab_hash3((uint32_t)pid ^ (uint32_t)kind << 24,
			     (uint32_t)vcpu ^ (uint32_t)dir << 30,
			     (uint32_t)key ^ (uint32_t)(key >> 32));
}

/* A new bucket array in the pool, zeroed: its index. */
static size_t bd_hnew(struct breakdown *b)
{
	if (b->nh == b->caph) {
		b->caph = b->caph ? 2 * b->caph : 64;
		b->hpool = xrealloc(b->hpool, b->caph * sizeof(*b->hpool));
	}
	memset(b->hpool[b->nh], 0, sizeof(b->hpool[0]));
	return b->nh++;
}

/* Adds a count (and its histogram) into its entry in scope (pid, vcpu). */
static void bd_add(struct breakdown *b, const struct brk_key *k, uint64_t c,
		   const struct lat_val *h, pid_t pid, int vcpu, pid_t tid)
{
	pid_t from = (pid_t)k->tgid;
	uint32_t hash = bd_hash(pid, vcpu, k->kind, k->dir, k->key);
	struct hashtab_iter it = hashtab_iter(&b->ent_index, hash);
	struct bd_ent *e = NULL;
	long i;

	while ((i = hashtab_next(&b->ent_index, &it)) >= 0) {
		struct bd_ent *x = &b->ent[i];

		if (x->pid == pid && x->vcpu == vcpu && x->kind == k->kind &&
		    x->dir == k->dir && x->key == k->key) {
			e = x;
			break;
		}
	}
	if (!e) {
		if (b->nent == b->capent) {
			b->capent = b->capent ? 2 * b->capent : 256;
			b->ent = xrealloc(b->ent, b->capent * sizeof(*b->ent));
		}
		hashtab_add(&b->ent_index, hash, b->nent);
		e = &b->ent[b->nent++];
		*e = (struct bd_ent){ .pid = pid,
				      .vcpu = vcpu,
				      .tid = tid,
				      .kind = k->kind,
				      .dir = k->dir,
				      .key = k->key,
				      .from = from,
				      .min = UINT64_MAX,
				      .h = b->cfg.timed ? bd_hnew(b) : 0 };
	}
	if (e->from != from)
		e->from = -1;
	e->count += c;
	if (!h || !h->count)
		return;
	e->tcount += h->count;
	e->sum += h->total;
	if (h->min < e->min)
		e->min = h->min;
	if (h->max > e->max)
		e->max = h->max;
	for (size_t j = 0; j < LAT_NBUCKETS; j++)
		b->hpool[e->h][j] += h->b[j];
}

static void bd_walk(void *ctx, const struct brk_key *k, uint64_t count,
		    const struct lat_val *h)
{
	struct breakdown *b = ctx;
	int vcpu;

	if (k->kind >= BRK_NKINDS)
		return;
	bd_add(b, k, count, h, 0, SAMPLE_ALL_VCPUS, 0);
	bd_add(b, k, count, h, (pid_t)k->tgid, SAMPLE_ALL_VCPUS, 0);
	/* threads without a vCPU index stay in their VM's */
	vcpu = tp_vcpumap_index(&b->vcpus, (pid_t)k->tgid, (pid_t)k->tid);
	if (vcpu >= 0)
		bd_add(b, k, count, h, (pid_t)k->tgid, vcpu, (pid_t)k->tid);
}

/* The count of e at the read before (0: none). */
static uint64_t bd_prev_count(const struct breakdown *b, const struct bd_ent *e)
{
	uint32_t hash = bd_hash(e->pid, e->vcpu, e->kind, e->dir, e->key);
	struct hashtab_iter it = hashtab_iter(&b->prev_index, hash);
	long i;

	while ((i = hashtab_next(&b->prev_index, &it)) >= 0) {
		const struct bd_prev *p = &b->prev[i];

		if (p->pid == e->pid && p->vcpu == e->vcpu &&
		    p->kind == e->kind && p->dir == e->dir && p->key == e->key)
			return p->count;
	}
	return 0;
}

/* This read's counts become the ones before. */
static void bd_keep(struct breakdown *b)
{
	hashtab_clear(&b->prev_index);
	if (b->nent > b->capprev) {
		b->capprev = b->nent;
		b->prev = xrealloc(b->prev, b->capprev * sizeof(*b->prev));
	}
	b->nprev = b->nent;
	for (size_t i = 0; i < b->nent; i++) {
		const struct bd_ent *e = &b->ent[i];

		b->prev[i] = (struct bd_prev){ e->pid, e->vcpu, e->kind,
					       e->dir, e->key,	e->count };
		hashtab_add(&b->prev_index,
			    bd_hash(e->pid, e->vcpu, e->kind, e->dir, e->key),
			    i);
	}
}

/* Scopes in order (whole, then VMs by pid, each then its vCPUs), kinds in
 * order; within a table, by count, most first, other last. */
static int bd_cmp(const void *pa, const void *pb)
{
	const struct bd_ent *a = pa, *b = pb;
	bool ao = a->key == BRK_OTHER, bo = b->key == BRK_OTHER;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->vcpu != b->vcpu)
		return a->vcpu < b->vcpu ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind - b->kind;
	if (ao != bo)
		return ao ? 1 : -1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->dir - b->dir;
}

/* The kept name of key of kind in scope pid: its entry, added (name NULL)
 * when new. */
static struct bd_name *bd_name_entry(struct breakdown *b, int kind, pid_t pid,
				     uint64_t key, bool *added)
{
	uint32_t hash = hashtab_hash3((uint32_t)kind ^ (uint32_t)pid << 4,
				      (uint32_t)key, (uint32_t)(key >> 32));
	struct hashtab_iter it = hashtab_iter(&b->name_index, hash);
	long i;

	*added = false;
	while ((i = hashtab_next(&b->name_index, &it)) >= 0)
		if (b->names[i].kind == kind && b->names[i].pid == pid &&
		    b->names[i].key == key)
			return &b->names[i];
	if (b->nnames == b->capnames) {
		b->capnames = b->capnames ? 2 * b->capnames : 64;
		b->names = xrealloc(b->names, b->capnames * sizeof(*b->names));
	}
	hashtab_add(&b->name_index, hash, b->nnames);
	b->names[b->nnames] = (struct bd_name){ kind, pid, key, NULL };
	*added = true;
	return &b->names[b->nnames++];
}

/* Forgets the names kept (their strings are the last read's: done). */
static void bd_names_clear(struct breakdown *b)
{
	for (size_t i = 0; i < b->nnames; i++)
		free(b->names[i].name);
	b->nnames = 0;
	hashtab_clear(&b->name_index);
}

/* The name the VMs give e's address: the one VM's whose hits it sums, or
 * when several, theirs if they all give the same; NULL else. */
static const char *bd_gpa_ask(struct breakdown *b, const struct bd_ent *e)
{
	const char *name = NULL;

	if (e->from > 0)
		return b->cfg.gpa_name(b->cfg.gpa_ctx, e->from, e->key);
	/* the whole selection's row: each VM's row of the key */
	for (size_t i = 0; i < b->nent; i++) {
		const struct bd_ent *x = &b->ent[i];
		const char *n;

		if (!x->pid || x->vcpu != SAMPLE_ALL_VCPUS ||
		    x->kind != e->kind || x->dir != e->dir || x->key != e->key)
			continue;
		n = b->cfg.gpa_name(b->cfg.gpa_ctx, x->pid, e->key);
		if (!n || (name && strcmp(n, name)))
			return NULL;
		name = n;
	}
	return name;
}

/* The name of e's key: the architecture's (a port, an MSR), looked up
 * once, or the VMs' (an MMIO address), asked at each read (a VM's map
 * can change) and copied when it changed; NULL when none. */
static const char *bd_name(struct breakdown *b, const struct bd_ent *e)
{
	bool gpa = bd_kinds[e->kind].gpa_names, added;
	struct bd_name *n;
	const char *name;
	char buf[64];

	if (gpa && !b->cfg.gpa_name)
		return NULL;
	if (!gpa && (!b->arch[e->kind] || !b->arch[e->kind]->names))
		return NULL;
	n = bd_name_entry(b, e->kind, gpa ? e->pid : 0, e->key, &added);
	if (!added && !gpa)
		return n->name;
	name = gpa ? bd_gpa_ask(b, e) :
		     arch_key_name(b->arch[e->kind], e->key, buf, sizeof(buf));
	if (name && n->name && !strcmp(name, n->name))
		return n->name;
	free(n->name);
	n->name = name ? xstrdup(name) : NULL;
	return n->name;
}

static struct snap_brk_row *bd_row(struct breakdown *b)
{
	if (b->nrows == b->caprows) {
		b->caprows = b->caprows ? 2 * b->caprows : 64;
		b->rows = xrealloc(b->rows, b->caprows * sizeof(*b->rows));
	}
	memset(&b->rows[b->nrows], 0, sizeof(b->rows[0]));
	return &b->rows[b->nrows++];
}

/* Adds e's count and times to row r (its buckets at hpool[*h]). */
static void bd_fold(struct breakdown *b, struct snap_brk_row *r, size_t h,
		    const struct bd_ent *e)
{
	r->count += e->count;
	r->delta += e->delta;
	if (!b->cfg.timed || !e->tcount)
		return;
	if (!r->tcount || e->min < r->min)
		r->min = e->min;
	if (e->max > r->max)
		r->max = e->max;
	r->tcount += e->tcount;
	r->sum += e->sum;
	for (size_t j = 0; j < LAT_NBUCKETS; j++)
		b->hpool[h][j] += b->hpool[e->h][j];
}

/* The table of ents [i, j) (one scope and kind). */
static void bd_table(struct breakdown *b, size_t i, size_t j)
{
	const struct bd_ent *e0 = &b->ent[i];
	struct snap_brk_table *t;
	struct snap_brk_row *other = NULL;
	size_t oh = 0, shown = 0;

	if (b->ntables == b->captables) {
		b->captables = b->captables ? 2 * b->captables : 16;
		b->tables = xrealloc(b->tables,
				     b->captables * sizeof(*b->tables));
	}
	t = &b->tables[b->ntables++];
	*t = (struct snap_brk_table){
		.kind = bd_kinds[e0->kind].name,
		.event = b->arch[e0->kind] ? b->arch[e0->kind]->event : NULL,
		.pid = e0->pid,
		.vcpu = e0->vcpu,
		.tid = e0->tid
	};
	/* rows go to b->rows; t->rows is set once they are all there */
	t->nrows = b->nrows;
	for (size_t x = i; x < j; x++) {
		const struct bd_ent *e = &b->ent[x];
		struct snap_brk_row *r;

		t->total += e->count;
		t->delta += e->delta;
		if (e->key != BRK_OTHER && shown < b->cfg.top) {
			r = bd_row(b);
			shown++;
			r->key = e->key;
			r->dir = bd_kinds[e->kind].dirs[e->dir & 1];
			r->name = bd_name(b, e);
			r->count = e->count;
			r->delta = e->delta;
			r->tcount = e->tcount;
			r->sum = e->sum;
			r->min = e->min;
			r->max = e->max;
			if (b->cfg.timed)
				r->b = b->hpool[e->h];
			continue;
		}
		if (!other) {
			other = bd_row(b);
			other->other = true;
			other->key = BRK_OTHER;
			if (b->cfg.timed) {
				oh = bd_hnew(b);
				other->b = b->hpool[oh];
			}
		}
		bd_fold(b, other, oh, e);
	}
	t->rows = NULL; /* set once b->rows stops moving */
	t->nrows = b->nrows - t->nrows;
}

const struct snap_breakdown *breakdown_read(struct breakdown *b)
{
	uint64_t now = util_now_ns();
	double secs = b->last_ns ? (now - b->last_ns) / 1e9 : 0;
	size_t first;

	/* names are kept for the keys shown; a guest sweeping its address
	 * space makes new ones: bounded */
	if (b->nnames > BD_NAMES_MAX)
		bd_names_clear(b);
	b->nent = 0;
	b->nh = 0;
	b->nrows = 0;
	b->ntables = 0;
	hashtab_clear(&b->ent_index);
	tp_vcpumap_tick(&b->vcpus);
	brk_engine_walk(b->eng, bd_walk, b);
	for (size_t i = 0; i < b->nent; i++) {
		uint64_t p = bd_prev_count(b, &b->ent[i]);

		b->ent[i].delta = b->ent[i].count >= p ?
					  (int64_t)(b->ent[i].count - p) :
					  (int64_t)b->ent[i].count;
	}
	bd_keep(b);
	if (b->nent) /* ent is NULL before any hit */
		qsort(b->ent, b->nent, sizeof(*b->ent), bd_cmp);
	/* room for an other per table: the rows' buckets stay put */
	if (b->cfg.timed && b->nh + b->nent > b->caph) {
		b->caph = b->nh + b->nent;
		b->hpool = xrealloc(b->hpool, b->caph * sizeof(*b->hpool));
	}
	for (size_t i = 0, j; i < b->nent; i = j) {
		for (j = i + 1; j < b->nent && b->ent[j].pid == b->ent[i].pid &&
				b->ent[j].vcpu == b->ent[i].vcpu &&
				b->ent[j].kind == b->ent[i].kind;
		     j++)
			;
		bd_table(b, i, j);
	}
	/* the rows and buckets have stopped moving: point at them */
	first = 0;
	for (size_t i = 0; i < b->ntables; i++) {
		struct snap_brk_table *t = &b->tables[i];

		t->rows = &b->rows[first];
		first += t->nrows;
	}
	for (size_t i = 0; i < b->nrows; i++) {
		struct snap_brk_row *r = &b->rows[i];

		r->rate = secs > 0 ? r->delta / secs : 0;
		if (b->cfg.timed)
			r->nbuckets = LAT_NBUCKETS;
	}
	b->last_ns = now;
	b->out.tables = b->tables;
	b->out.ntables = b->ntables;
	return &b->out;
}

void breakdown_reset(struct breakdown *b)
{
	brk_engine_clear(b->eng);
	b->nprev = 0;
	hashtab_clear(&b->prev_index);
}

void breakdown_close(struct breakdown *b)
{
	if (!b)
		return;
	brk_engine_free(b->eng);
	tp_vcpumap_free(&b->vcpus);
	hashtab_free(&b->ent_index);
	hashtab_free(&b->prev_index);
	hashtab_free(&b->name_index);
	bd_names_clear(b);
	free(b->names);
	free(b->ent);
	free(b->hpool);
	free(b->prev);
	free(b->tables);
	free(b->rows);
	free(b);
}
