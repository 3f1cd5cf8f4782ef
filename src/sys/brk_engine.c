// SPDX-License-Identifier: GPL-2.0-only
/*
 * The user side of the breakdown engine (see include/brk_engine.h): opens
 * the skeleton of src/bpf/breakdown.bpf.c, turns on the programs of the
 * kinds asked for (raw, or on a record in a test tree), sizes the
 * histogram map down to one entry when untimed (else takes the latency
 * engine's state map when it runs), loads, attaches,
 * maps the arrays of counts, histograms and pending hits, walks them, and
 * frees the pending hits' entries of threads gone. libbpf's messages go
 * where the counting engine keeps them (bpf_engine_last_log).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_engine.h"
#include "breakdown.skel.h"
#include "brk_engine.h"
#include "util.h"

/* a program per kind, and two re-entry marks */
#define BRK_MAX_LINKS (BRK_NKINDS + 2)

/* The slots of the counts (brk_shared.h). */
#define BRK_NSLOTS (BRK_NKEYS + BRK_NOTHER)

struct brk_engine {
	struct breakdown_bpf *skel;
	struct bpf_link *links[BRK_MAX_LINKS];
	size_t nlinks;
	bool timed;
	bool task; /* the latency state in task storage, not the LRU hash */
	struct brk_slot *slots; /* brk_slots, mapped; NULL until loaded */
	size_t slots_len;
	struct lat_val *hvals; /* brk_hvals, mapped when timed, else NULL */
	size_t hvals_len;
	struct brk_pend *pends; /* brk_pends, mapped; NULL until loaded */
	size_t pends_len;
	unsigned walks; /* of brk_engine_walk: every BRK_GC_EVERY, a sweep */
};

/* The walks between two sweeps of the pending hits' entries. */
#define BRK_GC_EVERY 32

struct brk_att {
	struct bpf_program *prog;
	const char *raw; /* raw tracepoint, or NULL */
	int id;		 /* record program's tracepoint */
	const char *what;
};

/* A program of the set in use: reading the latency state in task
 * storage, or in the hash (_h). */
#define BRK_PROG(e, name) \
	((e)->task ? (e)->skel->progs.name : (e)->skel->progs.name##_h)

/* The program of kind k for its source. */
static bool brk_pick(struct brk_engine *e, const struct brk_engine_cfg *cfg,
		     int k, struct brk_att *a)
{
	struct breakdown_bpf *s = e->skel;
	struct bpf_program *raw[BRK_NKINDS] = { BRK_PROG(e, brk_pio_raw),
						BRK_PROG(e, brk_mmio_raw),
						BRK_PROG(e, brk_msr_raw),
						BRK_PROG(e, brk_hc_raw) };
	struct bpf_program *rec[BRK_NKINDS] = { BRK_PROG(e, brk_pio_rec),
						BRK_PROG(e, brk_mmio_rec),
						BRK_PROG(e, brk_msr_rec),
						BRK_PROG(e, brk_hc_rec) };
	const struct brk_source *src = &cfg->src[k];

	if (src->raw) {
		if (src->key_arg >= BRK_NARGS(k) ||
		    (src->dir_arg >= BRK_NARGS(k) && src->dir_arg != BRK_NO_ARG))
			return false;
		s->rodata->brk_key_arg[k] = src->key_arg;
		s->rodata->brk_dir_arg[k] = src->dir_arg;
		*a = (struct brk_att){ raw[k], src->raw, -1, src->event };
		return true;
	}
	if (src->id < 0)
		return false;
	s->rodata->brk_key_off[k] = src->key.off;
	s->rodata->brk_key_size[k] = src->key.size;
	s->rodata->brk_dir_off[k] = src->dir.off;
	s->rodata->brk_dir_size[k] = src->dir.size;
	*a = (struct brk_att){ rec[k], NULL, src->id, src->event };
	return true;
}

/* The array map m mapped, len bytes; NULL with *err = -errno. */
static void *brk_map(const struct bpf_map *m, size_t len, int *err)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(m), 0);

	if (p != MAP_FAILED)
		return p;
	*err = -errno;
	return NULL;
}

static struct brk_engine *brk_open(const struct brk_engine_cfg *cfg, bool task,
				   int *err, const char **what)
{
	struct brk_engine *e = xcalloc(1, sizeof(*e));
	struct brk_att att[BRK_MAX_LINKS];
	struct bpf_program *prog;
	size_t n = 0;

	*what = "the breakdown programs";
	e->timed = cfg->timed;
	e->task = task;
	e->skel = breakdown_bpf__open();
	if (!e->skel) {
		*err = errno ? -errno : -EINVAL;
		free(e);
		return NULL;
	}
	bpf_object__for_each_program(prog, e->skel->obj)
		bpf_program__set_autoload(prog, false);
	bpf_map__set_autocreate(e->task ? e->skel->maps.lat_starts :
					  e->skel->maps.lat_task,
				false);
	e->skel->rodata->brk_tgid = cfg->tgid;
	e->skel->rodata->brk_timed = cfg->timed;
	e->skel->rodata->brk_shared = cfg->timed && cfg->lat;
	if (cfg->pend_entries && cfg->pend_entries <= BRK_NPEND &&
	    !(cfg->pend_entries & (cfg->pend_entries - 1)))
		e->skel->rodata->brk_pend_mask = cfg->pend_entries - 1;
	if (!cfg->timed)
		bpf_map__set_max_entries(e->skel->maps.brk_hvals, 1);
	if (!cfg->timed || !cfg->lat) {
		/* no latency state to read: the hash's set, its map unused */
		bpf_map__set_max_entries(e->skel->maps.lat_starts, 1);
	} else {
		bool lat_task;
		int fd = lat_engine_state_fd(cfg->lat, &lat_task);

		/* brk_engine_open picked the latency engine's set */
		*what = "the latency programs' thread state";
		*err = bpf_map__reuse_fd(e->task ? e->skel->maps.lat_task :
						   e->skel->maps.lat_starts,
					 fd);
		if (*err)
			goto out_free;
		*what = "the breakdown programs";
	}
	for (int k = 0; k < BRK_NKINDS; k++)
		if (brk_pick(e, cfg, k, &att[n]))
			n++;
	if (cfg->timed && cfg->entry_raw)
		att[n++] = (struct brk_att){ BRK_PROG(e, brk_entry_raw),
					     cfg->entry_raw, -1, "kvm_entry" };
	if (cfg->timed && cfg->fpu_raw)
		att[n++] = (struct brk_att){ BRK_PROG(e, brk_fpu_raw),
					     cfg->fpu_raw, -1, "kvm_fpu" };
	for (size_t i = 0; i < n; i++)
		bpf_program__set_autoload(att[i].prog, true);
	*err = breakdown_bpf__load(e->skel);
	if (*err)
		goto out_free;
	e->slots_len = BRK_NSLOTS * sizeof(*e->slots);
	e->pends_len = BRK_NPEND * sizeof(*e->pends);
	e->hvals_len = cfg->timed ? BRK_NSLOTS * sizeof(*e->hvals) : 0;
	*what = "mapping the breakdown's counts";
	e->slots = brk_map(e->skel->maps.brk_slots, e->slots_len, err);
	if (!e->slots)
		goto out_free;
	*what = "mapping the breakdown's threads";
	e->pends = brk_map(e->skel->maps.brk_pends, e->pends_len, err);
	if (!e->pends)
		goto out_free;
	*what = "mapping the breakdown's histograms";
	e->hvals = cfg->timed ?
			   brk_map(e->skel->maps.brk_hvals, e->hvals_len, err) :
			   NULL;
	if (cfg->timed && !e->hvals)
		goto out_free;
	for (size_t i = 0; i < n; i++) {
		struct bpf_link *l;

		*what = att[i].what;
		if (att[i].raw) {
			l = bpf_program__attach_raw_tracepoint(att[i].prog,
							       att[i].raw);
		} else {
			int fd = bpf_engine_perf_open(att[i].id);

			l = fd < 0 ? NULL :
				     bpf_program__attach_perf_event(att[i].prog,
								    fd);
			if (!l && fd >= 0)
				close(fd);
		}
		if (!l) {
			*err = errno ? -errno : -EINVAL;
			goto out_free;
		}
		e->links[e->nlinks++] = l;
	}
	*what = NULL;
	return e;

out_free:
	brk_engine_free(e);
	return NULL;
}

struct brk_engine *brk_engine_open(const struct brk_engine_cfg *cfg, int *err,
				   const char **what)
{
	bool task = false;

	/* reading the latency engine's state: its set (task storage or
	 * hash); else no state to read, the hash's set */
	if (cfg->timed && cfg->lat)
		lat_engine_state_fd(cfg->lat, &task);
	return brk_open(cfg, task, err, what);
}

/*
 * Frees the pending-hit entries of threads gone, so that the entries of
 * threads long dead do not push new threads into the hash: each entry's
 * tag cleared first (a thread that finds it free then tries to claim it,
 * which the claim's record still refuses), its record in brk_powner
 * deleted after. A thread gone is one kill(2) no longer finds.
 */
static void brk_sweep(struct brk_engine *e)
{
	int owner = bpf_map__fd(e->skel->maps.brk_powner);

	for (uint32_t i = 0; i < BRK_NPEND; i++) {
		uint32_t tid = __atomic_load_n(&e->pends[i].tid,
					       __ATOMIC_RELAXED);

		if (!tid || kill((pid_t)tid, 0) == 0 || errno != ESRCH)
			continue;
		__atomic_store_n(&e->pends[i].tid, 0, __ATOMIC_RELAXED);
		bpf_map_delete_elem(owner, &i);
	}
}

int brk_engine_walk(struct brk_engine *e,
		    void (*fn)(void *ctx, const struct brk_key *k,
			       uint64_t count, const struct lat_val *h),
		    void *ctx)
{
	struct lat_val *v = xmalloc(sizeof(*v));

	if (e->pends && ++e->walks % BRK_GC_EVERY == 0)
		brk_sweep(e);
	for (size_t i = 0; i < BRK_NSLOTS; i++) {
		/* copies: the kernel goes on adding */
		struct brk_slot s = e->slots[i];

		if (!s.count)
			continue;
		if (e->hvals)
			*v = e->hvals[i];
		fn(ctx, &s.k, s.count, e->hvals && v->count ? v : NULL);
	}
	free(v);
	return 0;
}

void brk_engine_clear(struct brk_engine *e)
{
	/* the slots keep their keys: the bound's count stays right */
	for (size_t i = 0; i < BRK_NSLOTS; i++)
		e->slots[i].count = 0;
	if (e->hvals)
		memset(e->hvals, 0, e->hvals_len);
}

void brk_engine_free(struct brk_engine *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nlinks; i++)
		bpf_link__destroy(e->links[i]);
	if (e->slots)
		munmap(e->slots, e->slots_len);
	if (e->hvals)
		munmap(e->hvals, e->hvals_len);
	if (e->pends)
		munmap(e->pends, e->pends_len);
	breakdown_bpf__destroy(e->skel);
	free(e);
}
