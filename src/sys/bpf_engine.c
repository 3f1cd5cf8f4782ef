// SPDX-License-Identifier: GPL-2.0-only
/*
 * The user side of the BPF counting engine (see include/bpf_engine.h):
 * opens the skeleton bpftool generated from src/bpf/kvmstat.bpf.c, turns
 * on only the programs a run needs, fixes their read-only configuration,
 * loads and attaches them, and reads the per-CPU counters with batched
 * map lookups. libbpf's own messages are kept (the last one) instead of
 * printed, since nothing below main prints.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_engine.h"
#include "kvmstat.skel.h"
#include "util.h"

#define BPF_ENGINE_BATCH 256

/* One attachment to make. */
struct bpf_hook {
	struct bpf_program *prog;
	char *tp_name; /* raw tracepoint, or NULL for a record program */
	int tp_id;     /* record program: tracepoint id */
	int perf_fd;   /* its perf event until the link holds it, or -1 */
	struct bpf_link *link;
	bool cookie; /* attach with attach_cookie (one shared program) */
	uint64_t attach_cookie; /* the slot, for ks_plain_cookie */
	int link_fd;		/* a link made here (with a cookie), or -1 */
};

struct bpf_engine {
	struct kvmstat_bpf *skel;
	struct bpf_engine_cfg cfg;
	int ncpus; /* possible CPUs: values per key of per-CPU maps */
	struct bpf_hook *hooks;
	size_t nhooks;
	size_t nrec;
	bool loaded;
	bool cookies;	 /* plain events share ks_plain_cookie */
	bool no_batch;	 /* kernel without BPF_MAP_LOOKUP_BATCH */
	uint32_t stride; /* slots per CPU: nslots + 1, to 64 bytes */
	const volatile uint64_t *counts; /* ks_counts mapped, or NULL */
	size_t counts_len;
	uint32_t *keys;	     /* stride * ncpus, 0.. */
	uint64_t *vals;	     /* as many */
	uint64_t other_hits; /* of ks_other, at the last read */
	uint64_t other_seen; /* other_hits when the cache was filled */
	bool other_valid;
	uint64_t tvcpu_seen; /* ks_tvcpu_adds at the last walk of ks_tvcpus */
	struct ks_other_key *okeys; /* ks_other as last walked */
	uint64_t *ovals;
	size_t nother, capother;
	uint32_t *rkeys, *rvals; /* reason slots to write at attach */
	size_t nreasons, capreasons;
	void *tkeys;	 /* batch buffers of the hashes */
	uint64_t *tvals; /* BPF_ENGINE_BATCH * ncpus */
};

static char bpf_engine_log[256];

/* libbpf's messages: the last warning is kept for an error line. */
static int bpf_engine_print(enum libbpf_print_level level, const char *fmt,
			    va_list ap)
{
	size_t n;

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(bpf_engine_log, sizeof(bpf_engine_log), fmt, ap);
	n = strlen(bpf_engine_log);
	while (n && bpf_engine_log[n - 1] == '\n')
		bpf_engine_log[--n] = '\0';
	return 0;
}

const char *bpf_engine_last_log(void)
{
	return bpf_engine_log;
}

struct bpf_engine *bpf_engine_new(const struct bpf_engine_cfg *cfg, int *err)
{
	struct bpf_engine *e;
	struct bpf_program *prog;
	int rc;

	libbpf_set_print(bpf_engine_print);
	if (!cfg->nslots) {
		*err = -EINVAL;
		return NULL;
	}
	e = xcalloc(1, sizeof(*e));
	e->cfg = *cfg;
	e->ncpus = libbpf_num_possible_cpus();
	if (e->ncpus <= 0) {
		*err = e->ncpus ? e->ncpus : -EINVAL;
		goto out_free;
	}
	e->skel = kvmstat_bpf__open();
	if (!e->skel) {
		*err = -errno ? -errno : -EINVAL;
		goto out_free;
	}
	bpf_object__for_each_program(prog, e->skel->obj)
		bpf_program__set_autoload(prog, false);
	/* raw tracepoint attach cookies: kernels 6.10+ (probed once) */
	e->cookies = !cfg->no_cookie &&
		     libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT,
					     BPF_FUNC_get_attach_cookie,
					     NULL) == 1;
	e->skel->rodata->ks_tgid = cfg->tgid;
	e->skel->rodata->ks_per_thread = cfg->per_thread;
	e->skel->rodata->ks_other_slot = cfg->nslots;
	e->stride = (cfg->nslots + 1 + 7) / 8 * 8;
	e->skel->rodata->ks_stride = e->stride;
	rc = bpf_map__set_max_entries(e->skel->maps.ks_counts,
				      e->stride * e->ncpus);
	if (!rc && cfg->per_thread)
		rc = bpf_map__set_max_entries(e->skel->maps.ks_threads,
					      cfg->thread_entries ?
						      cfg->thread_entries :
						      65536);
	/* the vCPU of each thread: per-thread counting only */
	if (!rc && !cfg->per_thread)
		rc = bpf_map__set_max_entries(e->skel->maps.ks_tvcpus, 1);
	if (rc) {
		*err = rc;
		goto out_destroy;
	}
	e->keys = xmalloc((size_t)e->stride * e->ncpus * sizeof(*e->keys));
	for (uint32_t i = 0; i < e->stride * e->ncpus; i++)
		e->keys[i] = i;
	e->vals = xmalloc((size_t)e->stride * e->ncpus * sizeof(*e->vals));
	e->tkeys = xmalloc(BPF_ENGINE_BATCH * sizeof(struct ks_other_key));
	e->tvals = xmalloc((size_t)BPF_ENGINE_BATCH * e->ncpus *
			   sizeof(*e->tvals));
	return e;

out_destroy:
	kvmstat_bpf__destroy(e->skel);
out_free:
	free(e);
	return NULL;
}

static struct bpf_hook *bpf_engine_hook(struct bpf_engine *e,
					struct bpf_program *prog)
{
	struct bpf_hook *h;

	e->hooks = xrealloc(e->hooks, (e->nhooks + 1) * sizeof(*e->hooks));
	h = &e->hooks[e->nhooks++];
	memset(h, 0, sizeof(*h));
	h->prog = prog;
	h->perf_fd = -1;
	h->link_fd = -1;
	bpf_program__set_autoload(prog, true);
	return h;
}

int bpf_engine_plain(struct bpf_engine *e, uint32_t slot, const char *tp_name)
{
	struct bpf_program *prog;
	char name[32];

	struct bpf_hook *h;

	if (slot >= KS_NPLAIN || slot >= e->cfg.nslots)
		return -ENOSPC;
	if (e->cookies) {
		h = bpf_engine_hook(e, e->skel->progs.ks_plain_cookie);
		h->tp_name = xstrdup(tp_name);
		h->cookie = true;
		h->attach_cookie = slot;
		return 0;
	}
	snprintf(name, sizeof(name), "ks_plain_%u%u%u%u", slot / 64,
		 slot / 16 % 4, slot / 4 % 4, slot % 4);
	prog = bpf_object__find_program_by_name(e->skel->obj, name);
	if (!prog)
		return -ENOENT;
	bpf_engine_hook(e, prog)->tp_name = xstrdup(tp_name);
	return 0;
}

int bpf_engine_plain_vcpu(struct bpf_engine *e, uint32_t slot,
			  const char *tp_name, int32_t id_off)
{
	struct bpf_program *prog = e->skel->progs.ks_plain_vcpu;

	if (bpf_program__autoload(prog))
		return -EBUSY;
	e->skel->rodata->ks_pv_slot = slot;
	e->skel->rodata->ks_pv_id_off = id_off;
	bpf_engine_hook(e, prog)->tp_name = xstrdup(tp_name);
	return 0;
}

int bpf_engine_uexit(struct bpf_engine *e, const char *tp_name,
		     uint32_t parent_slot, uint32_t src)
{
	if (bpf_program__autoload(e->skel->progs.ks_uexit))
		return -EBUSY;
	e->skel->rodata->ks_uexit_parent = parent_slot;
	e->skel->rodata->ks_uexit_src = src;
	bpf_engine_hook(e, e->skel->progs.ks_uexit)->tp_name = xstrdup(tp_name);
	return 0;
}

int bpf_engine_vcpu(struct bpf_engine *e, const char *tp_name,
		    const struct ks_vcpu_cfg *cfg)
{
	struct bpf_program *prog = e->skel->progs.ks_exit_vcpu;

	if (bpf_program__autoload(prog))
		return -EBUSY;
	memcpy((void *)&e->skel->rodata->ks_vcpu, cfg, sizeof(*cfg));
	bpf_engine_hook(e, prog)->tp_name = xstrdup(tp_name);
	return 0;
}

int bpf_engine_arg(struct bpf_engine *e, const char *tp_name,
		   const struct ks_arg_cfg *cfg)
{
	struct bpf_program *prog = e->skel->progs.ks_exit_arg;

	if (cfg->arg > 1 || cfg->gate_arg > 1)
		return -EINVAL;
	if (bpf_program__autoload(prog))
		return -EBUSY;
	memcpy((void *)&e->skel->rodata->ks_earg, cfg, sizeof(*cfg));
	bpf_engine_hook(e, prog)->tp_name = xstrdup(tp_name);
	return 0;
}

int bpf_engine_record(struct bpf_engine *e, int tp_id,
		      const struct ks_rec_cfg *cfg)
{
	struct bpf_program *const progs[KS_NREC] = { e->skel->progs.ks_rec_0,
						     e->skel->progs.ks_rec_1,
						     e->skel->progs.ks_rec_2,
						     e->skel->progs.ks_rec_3 };

	if (e->nrec >= KS_NREC)
		return -ENOSPC;
	memcpy((void *)&e->skel->rodata->ks_rec[e->nrec], cfg, sizeof(*cfg));
	bpf_engine_hook(e, progs[e->nrec++])->tp_id = tp_id;
	return 0;
}

int bpf_engine_load(struct bpf_engine *e)
{
	int rc = kvmstat_bpf__load(e->skel);
	void *m;

	if (rc)
		return rc;
	e->loaded = true;
	/* read in place; kernels that cannot map it are read in a batch */
	e->counts_len = (size_t)e->stride * e->ncpus * sizeof(uint64_t);
	m = mmap(NULL, e->counts_len, PROT_READ, MAP_SHARED,
		 bpf_map__fd(e->skel->maps.ks_counts), 0);
	e->counts = m == MAP_FAILED ? NULL : m;
	return 0;
}

int bpf_engine_set_reason(struct bpf_engine *e, uint32_t src, uint32_t cls,
			  uint32_t reason, uint32_t slot)
{
	if (src >= KS_NSRC || cls > 1 || reason >= KS_MAXR)
		return -ERANGE;
	if (!e->loaded)
		return -EINVAL;
	if (e->nreasons == e->capreasons) {
		e->capreasons = e->capreasons ? e->capreasons * 2 : 256;
		e->rkeys = xrealloc(e->rkeys, e->capreasons * sizeof(*e->rkeys));
		e->rvals = xrealloc(e->rvals, e->capreasons * sizeof(*e->rvals));
	}
	e->rkeys[e->nreasons] = KS_SLOT_KEY(src, cls, reason);
	e->rvals[e->nreasons++] = slot + 1;
	return 0;
}

/* Writes the reason slots: one batched update (one by one on kernels
 * without batches). */
static int bpf_engine_write_reasons(struct bpf_engine *e)
{
	int fd = bpf_map__fd(e->skel->maps.ks_slots), rc;
	uint32_t n = (uint32_t)e->nreasons;

	if (!n)
		return 0;
	rc = bpf_map_update_batch(fd, e->rkeys, e->rvals, &n, NULL);
	if (!rc && n == e->nreasons)
		goto out_done;
	for (size_t i = 0; i < e->nreasons; i++)
		if (bpf_map_update_elem(fd, &e->rkeys[i], &e->rvals[i], BPF_ANY))
			return -errno;
out_done:
	e->nreasons = 0;
	return 0;
}

/*
 * BPF_RAW_TRACEPOINT_OPEN with an attach cookie, which libbpf 1.1 cannot
 * pass: the attr as the kernel's uapi <linux/bpf.h> lays it out since
 * 6.10 (name, prog_fd, 32 bits of padding, cookie). The link's fd, or
 * -errno.
 */
static int bpf_engine_raw_tp_open(int prog_fd, const char *name, uint64_t cookie)
{
	union {
		struct {
			uint64_t name;
			uint32_t prog_fd;
			uint32_t pad;
			uint64_t cookie;
		} raw_tp;
		char size[128]; /* the rest is zero, as the kernel wants */
	} attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.raw_tp.name = (uint64_t)(uintptr_t)name;
	attr.raw_tp.prog_fd = (uint32_t)prog_fd;
	attr.raw_tp.cookie = cookie;
	fd = syscall(__NR_bpf, BPF_RAW_TRACEPOINT_OPEN, &attr,
		     sizeof(attr.raw_tp));
	return fd < 0 ? -errno : (int)fd;
}

int bpf_engine_perf_open(int tp_id)
{
	struct perf_event_attr pa;

	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_TRACEPOINT;
	pa.size = sizeof(pa);
	pa.config = (uint64_t)tp_id;
	pa.sample_period = 1;
	pa.wakeup_events = 1;
	return (int)syscall(__NR_perf_event_open, &pa, -1, 0, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

int bpf_engine_attach(struct bpf_engine *e, const char **what)
{
	int err;

	*what = "the reason table";
	err = bpf_engine_write_reasons(e);
	if (err)
		return err;
	for (size_t i = 0; i < e->nhooks; i++) {
		struct bpf_hook *h = &e->hooks[i];
		int rc;

		*what = h->tp_name ? h->tp_name : "a tracepoint record";
		if (h->cookie) {
			h->link_fd = bpf_engine_raw_tp_open(bpf_program__fd(
								    h->prog),
							    h->tp_name,
							    h->attach_cookie);
			if (h->link_fd < 0)
				return h->link_fd;
			continue;
		} else if (h->tp_name) {
			h->link = bpf_program__attach_raw_tracepoint(h->prog,
								     h->tp_name);
		} else {
			h->perf_fd = bpf_engine_perf_open(h->tp_id);
			if (h->perf_fd < 0)
				return -errno;
			h->link = bpf_program__attach_perf_event(h->prog,
								 h->perf_fd);
		}
		rc = libbpf_get_error(h->link);
		if (rc) {
			h->link = NULL;
			if (h->perf_fd >= 0)
				close(h->perf_fd);
			h->perf_fd = -1;
			return rc;
		}
		h->perf_fd = -1; /* the link holds it now */
	}
	*what = NULL;
	return 0;
}

/* Sums the per-CPU values of n keys in vals into out. */
static void bpf_engine_sum(const struct bpf_engine *e, const uint64_t *vals,
			   size_t n, uint64_t *out)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t s = 0;

		for (int c = 0; c < e->ncpus; c++)
			s += vals[i * e->ncpus + c];
		out[i] = s;
	}
}

/* Sums slot s of every CPU in v (stride apart). */
static uint64_t bpf_engine_slot(const struct bpf_engine *e,
				const volatile uint64_t *v, uint32_t s)
{
	uint64_t sum = 0;

	for (int c = 0; c < e->ncpus; c++)
		sum += v[(size_t)c * e->stride + s];
	return sum;
}

int bpf_engine_read(struct bpf_engine *e, uint64_t *counts)
{
	int fd = bpf_map__fd(e->skel->maps.ks_counts);
	uint32_t all = e->stride * e->ncpus, n = all, out;
	const volatile uint64_t *v = e->counts;
	int rc;

	if (v)
		goto out_sum;
	v = e->vals;
	if (!e->no_batch) {
		rc = bpf_map_lookup_batch(fd, NULL, &out, e->keys, e->vals, &n,
					  NULL);
		if ((!rc || rc == -ENOENT) && n == all)
			goto out_sum;
		if (rc != -EINVAL && rc != -ENOTSUP && rc != -EOPNOTSUPP)
			return rc ? rc : -EIO;
		e->no_batch = true;
	}
	for (uint32_t i = 0; i < all; i++)
		if (bpf_map_lookup_elem(fd, &i, &e->vals[i]))
			return -errno;
out_sum:
	for (uint32_t s = 0; s < e->cfg.nslots; s++)
		counts[s] = bpf_engine_slot(e, v, s);
	e->other_hits = bpf_engine_slot(e, v, e->cfg.nslots);
	return 0;
}

/*
 * Every key and per-CPU-summed (percpu) or plain value of a hash map,
 * in batches (one key at a time on kernels without them).
 */
static int bpf_engine_walk(struct bpf_engine *e, struct bpf_map *map,
			   size_t ksize, bool percpu,
			   void (*fn)(void *ctx, const void *key, uint64_t v),
			   void *ctx)
{
	int fd = bpf_map__fd(map), nv = percpu ? e->ncpus : 1;
	uint64_t token[4], sum;
	bool first = true;
	char key[sizeof(struct ks_other_key)], next[sizeof(key)];

	while (!e->no_batch) {
		uint32_t n = BPF_ENGINE_BATCH;
		int rc = bpf_map_lookup_batch(fd, first ? NULL : token, token,
					      e->tkeys, e->tvals, &n, NULL);

		if (rc && rc != -ENOENT) {
			if (first && (rc == -EINVAL || rc == -ENOTSUP ||
				      rc == -EOPNOTSUPP)) {
				e->no_batch = true;
				break;
			}
			return rc;
		}
		for (uint32_t i = 0; i < n; i++) {
			sum = e->tvals[i];
			if (percpu)
				bpf_engine_sum(e, e->tvals + (size_t)i * nv, 1,
					       &sum);
			fn(ctx, (char *)e->tkeys + i * ksize, sum);
		}
		if (rc == -ENOENT)
			return 0;
		first = false;
	}
	for (int rc = bpf_map_get_next_key(fd, NULL, next); !rc;
	     rc = bpf_map_get_next_key(fd, key, next)) {
		memcpy(key, next, ksize);
		if (bpf_map_lookup_elem(fd, key, e->tvals))
			continue; /* deleted meanwhile */
		sum = e->tvals[0];
		if (percpu)
			bpf_engine_sum(e, e->tvals, 1, &sum);
		fn(ctx, key, sum);
	}
	return 0;
}

struct bpf_engine_cb {
	void (*thread)(void *ctx, const struct ks_thread_key *k, uint64_t v);
	void *ctx;
};

static void bpf_engine_thread_cb(void *ctx, const void *key, uint64_t v)
{
	struct bpf_engine_cb *cb = ctx;

	cb->thread(cb->ctx, key, v);
}

int bpf_engine_threads(struct bpf_engine *e,
		       void (*fn)(void *ctx, const struct ks_thread_key *k,
				  uint64_t count),
		       void *ctx)
{
	struct bpf_engine_cb cb = { .thread = fn, .ctx = ctx };

	if (!e->cfg.per_thread)
		return 0;
	return bpf_engine_walk(e, e->skel->maps.ks_threads,
			       sizeof(struct ks_thread_key), true,
			       bpf_engine_thread_cb, &cb);
}

struct bpf_engine_tvcpu_cb {
	void (*fn)(void *ctx, uint32_t tid, const struct ks_tvcpu *t);
	void *ctx;
};

static void bpf_engine_tvcpu_cb(void *ctx, const void *key, uint64_t v)
{
	struct bpf_engine_tvcpu_cb *cb = ctx;
	struct ks_tvcpu t;
	uint32_t tid;

	memcpy(&tid, key, sizeof(tid));
	memcpy(&t, &v, sizeof(t));
	cb->fn(cb->ctx, tid, &t);
}

int bpf_engine_vcpu_threads(struct bpf_engine *e,
			    void (*fn)(void *ctx, uint32_t tid,
				       const struct ks_tvcpu *t),
			    void *ctx)
{
	struct bpf_engine_tvcpu_cb cb = { fn, ctx };
	uint64_t adds;
	int rc;

	if (!e->cfg.per_thread || !e->skel->bss)
		return 0;
	adds = __atomic_load_n(&e->skel->bss->ks_tvcpu_adds, __ATOMIC_ACQUIRE);
	if (adds == e->tvcpu_seen)
		return 0;
	rc = bpf_engine_walk(e, e->skel->maps.ks_tvcpus, sizeof(uint32_t),
			     false, bpf_engine_tvcpu_cb, &cb);
	if (!rc)
		e->tvcpu_seen = adds;
	return rc;
}

/* Keeps one walked key of ks_other. */
static void bpf_engine_other_keep(void *ctx, const void *key, uint64_t v)
{
	struct bpf_engine *e = ctx;

	if (e->nother == e->capother) {
		e->capother = e->capother ? e->capother * 2 : 64;
		e->okeys = xrealloc(e->okeys, e->capother * sizeof(*e->okeys));
		e->ovals = xrealloc(e->ovals, e->capother * sizeof(*e->ovals));
	}
	memcpy(&e->okeys[e->nother], key, sizeof(*e->okeys));
	e->ovals[e->nother++] = v;
}

/*
 * ks_other is walked again only when its hit counter moved since the
 * last walk: walking a hash costs its every bucket, and reasons without
 * a slot are rare. Otherwise the last walk's keys are replayed.
 */
int bpf_engine_others(struct bpf_engine *e,
		      void (*fn)(void *ctx, const struct ks_other_key *k,
				 uint64_t count),
		      void *ctx)
{
	if (!e->other_valid || e->other_hits != e->other_seen) {
		uint64_t hits = e->other_hits;
		int rc;

		e->nother = 0;
		e->other_valid = false;
		rc = bpf_engine_walk(e, e->skel->maps.ks_other,
				     sizeof(struct ks_other_key), false,
				     bpf_engine_other_keep, e);
		if (rc)
			return rc;
		e->other_valid = true;
		e->other_seen = hits;
	}
	for (size_t i = 0; i < e->nother; i++)
		fn(ctx, &e->okeys[i], e->ovals[i]);
	return 0;
}

static int bpf_engine_delete(struct bpf_map *map, const void *keys,
			     size_t ksize, size_t n)
{
	int fd = bpf_map__fd(map), err = 0;

	for (size_t i = 0; i < n; i++)
		if (bpf_map_delete_elem(fd, (const char *)keys + i * ksize) &&
		    errno != ENOENT && !err)
			err = -errno;
	return err;
}

int bpf_engine_forget_threads(struct bpf_engine *e,
			      const struct ks_thread_key *keys, size_t n)
{
	return bpf_engine_delete(e->skel->maps.ks_threads, keys, sizeof(*keys),
				 n);
}

int bpf_engine_forget_others(struct bpf_engine *e,
			     const struct ks_other_key *keys, size_t n)
{
	if (n)
		e->other_valid = false;
	return bpf_engine_delete(e->skel->maps.ks_other, keys, sizeof(*keys), n);
}

int bpf_engine_forget_vcpu_threads(struct bpf_engine *e, const uint32_t *tids,
				   size_t n)
{
	return bpf_engine_delete(e->skel->maps.ks_tvcpus, tids, sizeof(*tids),
				 n);
}

size_t bpf_engine_fds(const struct bpf_engine *e)
{
	size_t n = 0;
	struct bpf_map *map;
	struct bpf_program *prog;

	if (!e->loaded)
		return 0;
	bpf_object__for_each_map(map, e->skel->obj) n += bpf_map__fd(map) >= 0;
	bpf_object__for_each_program(prog, e->skel->obj)
		n += bpf_program__fd(prog) >= 0;
	for (size_t i = 0; i < e->nhooks; i++)
		n += e->hooks[i].link != NULL || e->hooks[i].link_fd >= 0;
	return n;
}

void bpf_engine_free(struct bpf_engine *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nhooks; i++) {
		bpf_link__destroy(e->hooks[i].link);
		if (e->hooks[i].link_fd >= 0)
			close(e->hooks[i].link_fd);
		free(e->hooks[i].tp_name);
	}
	free(e->hooks);
	if (e->counts)
		munmap((void *)e->counts, e->counts_len);
	kvmstat_bpf__destroy(e->skel);
	free(e->keys);
	free(e->vals);
	free(e->tkeys);
	free(e->tvals);
	free(e->okeys);
	free(e->ovals);
	free(e->rkeys);
	free(e->rvals);
	free(e);
}
