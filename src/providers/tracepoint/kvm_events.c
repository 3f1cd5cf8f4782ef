// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the BPF collectors beside the counting provider (latency.c,
 * breakdown.c) share: kvm events found under the run's tracefs (in a test
 * tree, the real tracepoints their ids name), where a field sits in a
 * record, and the vCPU index of a thread, kept after the thread exits.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lat_engine.h"
#include "tpformat.h"
#include "tracepoint_int.h"
#include "util.h"

static const char *const tp_real_roots[] = {
	"/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events"
};

const char *tp_real_events(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(tp_real_roots); i++)
		if (!access(tp_real_roots[i], R_OK))
			return tp_real_roots[i];
	return NULL;
}

struct tp_format *tp_kvm_format(const char *tracefs_root, const char *name)
{
	struct tp_format *f = NULL;
	char path[PATH_MAX];
	const char *ev = tp_real_events();

	if (tracefs_root)
		snprintf(path, sizeof(path), "%s/events/kvm/%s/format",
			 tracefs_root, name);
	else if (ev)
		snprintf(path, sizeof(path), "%s/kvm/%s/format", ev, name);
	else
		return NULL;
	if (tp_format_load(path, &f))
		return NULL;
	return f;
}

char *tp_kvm_raw_name(const char *tracefs_root, const struct tp_format *f,
		      const char *name, bool *native)
{
	const char *ev = tp_real_events();
	struct tp_format *real;

	*native = true;
	if (!tracefs_root)
		return xstrdup(name);
	if (!ev || !f)
		return NULL;
	real = tp_kvm_format(NULL, name);
	if (real && real->id == f->id) {
		tp_format_free(real);
		return xstrdup(name);
	}
	tp_format_free(real);
	*native = false;
	return tp_name_by_id(ev, f->id);
}

bool tp_rec_field(const struct tp_format *f, const char *name,
		  struct lat_rec_field *out)
{
	const struct tp_field *x = f ? tp_format_field(f, name) : NULL;

	if (!x || !x->size || x->size > 8 || (x->size & (x->size - 1)))
		return false;
	out->off = x->offset;
	out->size = x->size;
	return true;
}

/* Loads the vCPU threads of VM i, keeping the old ones if it is gone. */
static void tp_vcpumap_load(struct tp_vcpumap *m, size_t i)
{
	struct vm_info v = { .pid = m->vms[i].pid };

	m->loaded_at[i] = m->reads;
	vm_load_vcpu_threads(m->proc_root, m->debugfs_root, &v);
	if (!v.nvcpus)
		return;
	vm_info_clear(&m->vms[i]);
	m->vms[i] = v;
}

int tp_vcpumap_index(struct tp_vcpumap *m, pid_t pid, pid_t tid)
{
	size_t i;

	for (i = 0; i < m->nvms && m->vms[i].pid != pid; i++)
		;
	if (i == m->nvms) {
		m->vms = xrealloc(m->vms, (m->nvms + 1) * sizeof(*m->vms));
		m->loaded_at = xrealloc(m->loaded_at,
					(m->nvms + 1) * sizeof(*m->loaded_at));
		memset(&m->vms[i], 0, sizeof(m->vms[i]));
		m->vms[i].pid = pid;
		m->nvms++;
		tp_vcpumap_load(m, i);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t j = 0; j < m->vms[i].nvcpus; j++)
			if (m->vms[i].vcpus[j].tid == tid)
				return m->vms[i].vcpus[j].index;
		/* a thread it did not have: once per read, load again */
		if (pass || m->loaded_at[i] == m->reads)
			break;
		tp_vcpumap_load(m, i);
	}
	return -1;
}

void tp_vcpumap_tick(struct tp_vcpumap *m)
{
	m->reads++;
}

void tp_vcpumap_free(struct tp_vcpumap *m)
{
	vm_list_free(m->vms, m->nvms);
	free(m->loaded_at);
	m->vms = NULL;
	m->loaded_at = NULL;
	m->nvms = 0;
}
