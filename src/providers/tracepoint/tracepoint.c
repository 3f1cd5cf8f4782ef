// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tracepoint provider: every kvm:* tracepoint of the host's tracefs,
 * and child events such as kvm_exit(HLT) for the sources the arch/
 * descriptor names (reasons.c). Counted in the kernel by the BPF engine
 * (bpf.c): one program per tracepoint, per-CPU counters, one batched read
 * per refresh; where BPF cannot load, or with --no-bpf, by perf events
 * (perf.c), said once, with the same fields and counts. threads.c keeps
 * the per-VM and per-vCPU rows. This file holds what both ways share:
 * the events, open, read and close.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch.h"
#include "fs.h"
#include "mounts.h"
#include "options.h"
#include "provider.h"
#include "tracepoint_int.h"
#include "util.h"

/* The kvm events directory under tracefs (root, or wherever the kernel's
 * is mounted); out has PATH_MAX bytes. -EACCES when one exists that this
 * user may not enter (tracefs is 0700). */
static int tp_find_events(const char *tracefs_root, char out[PATH_MAX])
{
	static const char *const roots[] = { "/sys/kernel/tracing",
					     "/sys/kernel/debug/tracing" };
	char denied[PATH_MAX] = "";
	struct stat st;

	for (size_t i = 0; i < ARRAY_SIZE(roots); i++) {
		const char *root = tracefs_root ? tracefs_root : roots[i];

		if (strlen(root) + sizeof("/events/kvm") > PATH_MAX)
			return -ENAMETOOLONG;
		strcpy(out, root);
		strcat(out, "/events/kvm");
		if (!stat(out, &st))
			return 0;
		if ((errno == EACCES || errno == EPERM) && !denied[0])
			strcpy(denied, out);
		if (tracefs_root)
			break;
	}
	if (!denied[0])
		return tracefs_root ? -errno : -ENOENT;
	strcpy(out, denied); /* the one this user may not enter */
	return -EACCES;
}

/* Always worth trying on the host: open mounts tracefs, or says why the
 * kvm tracepoints cannot be had (no root, no kvm module); under an
 * injected root, once it is a directory. */
static bool tp_probe(const struct provider_cfg *o)
{
	struct stat st;

	return !o->tracefs_root ||
	       (!stat(o->tracefs_root, &st) && S_ISDIR(st.st_mode));
}

/* The id of an event, from its directory in dirfd; -1 when unreadable. */
static int tp_read_id(int dirfd, const char *event)
{
	char path[NAME_MAX + 8], buf[32];
	long id;

	snprintf(path, sizeof(path), "%s/id", event);
	if (fs_read_at(dirfd, path, buf, sizeof(buf)) <= 0)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	if (util_parse_int(buf, 0, INT_MAX, &id))
		return -1;
	return (int)id;
}

static int tp_name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct tp_event *)a)->name,
		      ((const struct tp_event *)b)->name);
}

/* Every event under events/kvm with a readable id. */
static int tp_list_events(struct tp_priv *tp)
{
	const struct fs_entry *e;
	struct fs_dir dir;
	size_t cap = 0;

	if (fs_dir_open(&dir, AT_FDCWD, tp->events_dir))
		return dir.err;
	while ((e = fs_dir_next(&dir))) {
		int id;

		if (e->name[0] == '.')
			continue;
		id = tp_read_id(e->dirfd, e->name);
		if (id < 0)
			continue;
		if (tp->nev == cap) {
			cap = cap ? cap * 2 : 128;
			tp->ev = xrealloc(tp->ev, cap * sizeof(*tp->ev));
		}
		tp->ev[tp->nev].name = xstrdup(e->name);
		tp->ev[tp->nev].id = id;
		tp->ev[tp->nev].field = -1;
		tp->nev++;
	}
	fs_dir_close(&dir);
	qsort(tp->ev, tp->nev, sizeof(*tp->ev), tp_name_cmp);
	return tp->nev ? 0 : -ENOENT;
}

int tp_event_index(const struct tp_priv *tp, const char *name)
{
	for (size_t i = 0; i < tp->nev; i++)
		if (!strcmp(tp->ev[i].name, name))
			return (int)i;
	return -1;
}

void tp_grow_acc(struct tp_priv *tp)
{
	size_t n = tp->fields->n;

	if (tp->nacc >= n)
		return;
	tp->acc = xrealloc(tp->acc, n * sizeof(*tp->acc));
	tp->retired = xrealloc(tp->retired, n * sizeof(*tp->retired));
	memset(tp->retired + tp->nacc, 0, (n - tp->nacc) * sizeof(*tp->retired));
	tp->nacc = n;
}

/* Adds a field to those reported every refresh (once). */
void tp_report(struct tp_priv *tp, int field)
{
	for (size_t i = 0; i < tp->nrep; i++)
		if (tp->rep[i] == field)
			return;
	tp->rep = xrealloc(tp->rep, (tp->nrep + 1) * sizeof(*tp->rep));
	tp->rep[tp->nrep++] = field;
}

static void tp_free_priv(struct tp_priv *tp)
{
	tp_perf_close(tp);
	tp_bpf_close(tp);
	tp_sources_free(tp);
	for (size_t i = 0; i < tp->nev; i++)
		free(tp->ev[i].name);
	free(tp->ev);
	tp_threads_free(tp);
	free(tp->acc);
	free(tp->retired);
	free(tp->rep);
	free(tp);
}

/* Reports every wanted event and child field each refresh. */
static void tp_report_wanted(struct tp_priv *tp)
{
	for (size_t i = 0; i < tp->nev; i++)
		if (tp->ev[i].field >= 0)
			tp_report(tp, tp->ev[i].field);
	for (size_t i = 0; tp->children && i < tp->nsrc; i++)
		for (size_t j = 0; j < tp->src[i].ntabs; j++)
			for (size_t k = 0; k < tp->src[i].tabs[j].n; k++)
				if (tp->src[i].tabs[j].r[k].field >= 0)
					tp_report(tp,
						  tp->src[i].tabs[j].r[k].field);
}

static int tp_open(struct provider *p, const struct provider_cfg *o)
{
	struct tp_priv *tp = xcalloc(1, sizeof(*tp));
	const char *isa;
	int rc;

	tp->uevent_fd = -1;
	tp->p = p;
	tp->fields = p->fields;
	tp->pid = o->pid;
	tp->tracefs_root = o->tracefs_root;
	tp->proc_root = o->proc_root;
	tp->debugfs_root = o->debugfs_root;
	tp->want_vms = p->want_vms;
	if (!o->tracefs_root) {
		rc = mounts_ensure(MOUNTS_TRACEFS, &p->did, &p->msg);
		if (rc < 0)
			goto out_free;
	}
	rc = tp_find_events(o->tracefs_root, tp->events_dir);
	if (rc == -EACCES) {
		provider_msg(p, false,
			     "cannot read the kvm tracepoints in %s: needs root (or CAP_PERFMON and read access to tracefs)",
			     tp->events_dir);
		goto out_free;
	}
	if (rc && o->tracefs_root) {
		provider_msg(p, false, "no kvm tracepoints under %s",
			     o->tracefs_root);
		goto out_free;
	}
	if (rc) {
		provider_msg(p, false,
			     "no kvm tracepoints in tracefs: load the kvm module (modprobe kvm_intel, kvm_amd or your host's)");
		goto out_free;
	}
	rc = tp_list_events(tp);
	if (rc) {
		provider_msg(p, false,
			     "cannot read the kvm tracepoints in %s: %s: needs root (or CAP_PERFMON and read access to tracefs)",
			     tp->events_dir, strerror(-rc));
		goto out_free;
	}
	isa = arch_detect_isa_at(arch_host, "/sys", o->proc_root);
	tp->src = xcalloc(arch_nsources(arch_host) + 1, sizeof(*tp->src));
	for (size_t i = 0; arch_host->sources[i]; i++)
		tp_setup_source(tp, arch_host, arch_host->sources[i], isa);

	/* the events the filter keeps; a source's parent is counted when
	 * its own name is wanted */
	for (size_t i = 0; i < tp->nev; i++)
		if (provider_wants(p, tp->ev[i].name))
			tp->ev[i].field = field_table_intern(p->fields,
							     tp->ev[i].name, -1,
							     FIELD_CUMULATIVE,
							     "tracepoint");
	for (size_t i = 0; i < tp->nsrc; i++)
		tp->children |= tp_source_wanted(&tp->src[i]);
	tp_report_wanted(tp);
	if (!tp->nrep) {
		rc = -ENOENT;
		provider_msg(p, false, "no tracepoint matches the field filter");
		goto out_free;
	}
	if (!o->no_bpf && tp_bpf_open(tp))
		tp_bpf_close(tp); /* the notice says why, once */
	if (!tp->be) {
		rc = tp_perf_open(tp);
		if (rc)
			goto out_free;
	}
	p->priv = tp;
	return 0;

out_free:
	tp_free_priv(tp);
	return rc;
}

static int tp_read(struct provider *p, struct sample_set *out)
{
	struct tp_priv *tp = p->priv;
	int rc;

	tp_grow_acc(tp);
	memset(tp->acc, 0, tp->nacc * sizeof(*tp->acc));
	tp_bd_clear(tp);
	tp->refresh++;
	rc = tp->be ? tp_bpf_read(tp) : tp_perf_read(tp, out);
	for (size_t i = 0; i < tp->nrep; i++) {
		int f = tp->rep[i];
		uint64_t v = tp->acc[f] + tp->retired[f];

		sample_set_push(out, f, 0, SAMPLE_ALL_VCPUS, 0, v, 0);
		if (tp->pid)
			sample_set_push(out, f, tp->pid, SAMPLE_ALL_VCPUS, 0, v,
					0);
	}
	for (size_t i = 0; i < tp->nbd; i++)
		sample_set_push(out, tp->bd[i].field, tp->bd[i].pid,
				tp->bd[i].vcpu, tp->bd[i].tid, tp->bd[i].v, 0);
	if (rc)
		provider_msg(p, false,
			     "some tracepoint counters could not be read this time");
	return rc;
}

static void tp_close(struct provider *p)
{
	if (p->priv)
		tp_free_priv(p->priv);
	p->priv = NULL;
}

/* The perf fallback, system-wide: the kernel's uevents, to follow CPU
 * hotplug between refreshes (the BPF engine's counters need none). */
static int tp_wake_fd(struct provider *p)
{
	const struct tp_priv *tp = p->priv;

	return tp && !tp->be ? tp->uevent_fd : -1;
}

static void tp_wake(struct provider *p)
{
	struct tp_priv *tp = p->priv;

	if (tp && !tp->be && tp->uevent_fd >= 0)
		tp_perf_hotplug(tp);
}

static bool tp_asked(const struct options *o)
{
	return o->use_tracepoints;
}

const struct provider_ops tracepoint_provider_ops = {
	.name = "tracepoint",
	.asked = tp_asked,
	.probe = tp_probe,
	.open = tp_open,
	.read = tp_read,
	.close = tp_close,
	.wake_fd = tp_wake_fd,
	.wake = tp_wake,
	.holds_kernel_fds = true,
};
