// SPDX-License-Identifier: GPL-2.0-only
/*
 * The user side of the breakdown engine (see include/brk_engine.h): opens
 * the skeleton of src/bpf/breakdown.bpf.c, turns on the programs of the
 * kinds asked for (raw, or on a record in a test tree), sizes the
 * histogram and pending maps down to one entry when untimed, loads,
 * attaches, maps the array of counts and walks it. libbpf's messages go
 * where the counting engine keeps them (bpf_engine_last_log).
 */
#include <errno.h>
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
	bool task; /* pending hits in task storage, not the LRU hash */
	struct brk_slot *slots; /* brk_slots, mapped; NULL until loaded */
	size_t slots_len;
};

struct brk_att {
	struct bpf_program *prog;
	const char *raw; /* raw tracepoint, or NULL */
	int id;		 /* record program's tracepoint */
	const char *what;
};

/* A program of the set in use: task storage's, or the hash's (_h). */
#define BRK_PROG(e, name) \
	((e)->task ? (e)->skel->progs.name : (e)->skel->progs.name##_h)

/* The program of kind k for its source. */
static bool brk_pick(struct brk_engine *e, const struct brk_engine_cfg *cfg,
		     int k, struct brk_att *a)
{
	static const char *const names[BRK_NKINDS] = { "kvm_pio", "kvm_mmio",
						       "kvm_msr",
						       "kvm_hypercall" };
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
		*a = (struct brk_att){ raw[k], src->raw, -1, names[k] };
		return true;
	}
	if (src->id < 0)
		return false;
	s->rodata->brk_key_off[k] = src->key.off;
	s->rodata->brk_key_size[k] = src->key.size;
	s->rodata->brk_dir_off[k] = src->dir.off;
	s->rodata->brk_dir_size[k] = src->dir.size;
	*a = (struct brk_att){ rec[k], NULL, src->id, names[k] };
	return true;
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
	bpf_map__set_autocreate(e->task ? e->skel->maps.brk_pend :
					  e->skel->maps.brk_task,
				false);
	e->skel->rodata->brk_tgid = cfg->tgid;
	e->skel->rodata->brk_timed = cfg->timed;
	if (!cfg->timed) {
		bpf_map__set_max_entries(e->skel->maps.brk_hists, 1);
		bpf_map__set_max_entries(e->skel->maps.brk_pend, 1);
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
	e->slots = mmap(NULL, e->slots_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			bpf_map__fd(e->skel->maps.brk_slots), 0);
	if (e->slots == MAP_FAILED) {
		e->slots = NULL;
		*err = -errno;
		*what = "mapping the breakdown's counts";
		goto out_free;
	}
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
	struct brk_engine *e = NULL;

	/* untimed, no program keeps a pending hit: the hash's set, sized 1 */
	if (cfg->timed && !cfg->hash_state && lat_engine_has_task_storage())
		e = brk_open(cfg, true, err, what);
	/* refused (a verifier that does not take the helpers from these
	 * program types): the hash, as on kernels without task storage */
	if (!e)
		e = brk_open(cfg, false, err, what);
	return e;
}

int brk_engine_walk(struct brk_engine *e,
		    void (*fn)(void *ctx, const struct brk_key *k,
			       uint64_t count, const struct lat_val *h),
		    void *ctx)
{
	int hists = bpf_map__fd(e->skel->maps.brk_hists);
	struct lat_val *v = xmalloc(sizeof(*v));

	for (size_t i = 0; i < BRK_NSLOTS; i++) {
		/* a copy: the kernel goes on adding */
		struct brk_slot s = e->slots[i];

		if (!s.count)
			continue;
		fn(ctx, &s.k, s.count,
		   e->timed && !bpf_map_lookup_elem(hists, &s.k, v) ? v : NULL);
	}
	free(v);
	return 0;
}

/* Zeroes every value of map fd in place (vsize bytes, on each CPU of a
 * per-CPU map), keys kept (the bound's count of keys taken stays right). */
static void brk_zero(int fd, size_t vsize)
{
	struct brk_key k, next;
	void *zero = xcalloc(1, vsize);
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		bpf_map_update_elem(fd, &k, zero, BPF_EXIST);
	}
	free(zero);
}

void brk_engine_clear(struct brk_engine *e)
{
	/* the slots keep their keys: the bound's count stays right */
	for (size_t i = 0; i < BRK_NSLOTS; i++)
		e->slots[i].count = 0;
	if (e->timed)
		brk_zero(bpf_map__fd(e->skel->maps.brk_hists),
			 sizeof(struct lat_val));
}

void brk_engine_free(struct brk_engine *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nlinks; i++)
		bpf_link__destroy(e->links[i]);
	if (e->slots)
		munmap(e->slots, e->slots_len);
	breakdown_bpf__destroy(e->skel);
	free(e);
}
