// SPDX-License-Identifier: GPL-2.0-only
/*
 * The debugfs provider: KVM's counters as files under debugfs/kvm. The
 * top-level files are host totals (the kernel sums them over live VMs),
 * each <pid>-<fd> directory holds the same counters for one VM, and its
 * vcpuN directories hold a few per-vCPU values and the vCPU thread id.
 *
 * Files are opened once. Where the file system allows it they stay open and
 * are re-read with pread(); KVM's own stat files refuse to seek (ESPIPE),
 * so those are reopened by name relative to a kept directory fd each
 * refresh instead, which costs no path building. The root is listed every
 * refresh (fs_dir over a kept fd) to see VMs come and go: when one goes,
 * the kernel's totals drop, and the samples say so with SAMPLE_REBASE.
 * Under kernel lockdown the writable files cannot be opened or read: they
 * are left out and counted in a notice, never reported as zero.
 *
 * A name another provider owns (statsfd declared it first) gets no total
 * here: it is read per VM, for the processes that provider did not serve
 * in this refresh (provider_served()), so that VMs without stats fds still
 * count (the arbiter lets them fill in).
 *
 * This file is the provider itself (open, read, close); the rest of
 * src/providers/debugfs/ opens and reads the counter files (counters.c)
 * and tracks the VM and vCPU directories (vm_dirs.c), all through
 * debugfs_int.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "debugfs_int.h"
#include "errmsg.h"
#include "fs.h"
#include "mounts.h"
#include "options.h"
#include "provider.h"
#include "reading.h"
#include "util.h"

/*
 * Says why hidden counters cannot be read: kernel lockdown (EPERM), or
 * file permissions (EACCES), or both. A failure when all are hidden.
 */
static void debugfs_hidden_msg(struct provider *p, size_t hidden, bool all)
{
	struct debugfs_priv *d = p->priv;
	size_t denied = d->denied < hidden ? d->denied : hidden;
	size_t locked = hidden - denied;
	const char *some = all ? "all " : "";

	if (!denied)
		provider_msg(p, !all,
			     "kernel lockdown hides %s%zu debugfs counters; use the stats-fd provider",
			     some, locked);
	else if (!locked)
		provider_msg(p, !all,
			     "permission denied reading %s%zu debugfs counters in %s: run kvmstat as root",
			     some, denied, d->root);
	else
		provider_msg(p, !all,
			     "kernel lockdown hides %zu debugfs counters (use the stats-fd provider) and %zu are not readable (permission denied in %s: run kvmstat as root)",
			     locked, denied, d->root);
}

/* The fix for a root directory that cannot be opened. */
static void debugfs_root_msg(struct provider *p, const char *root, int err)
{
	char parent[PATH_MAX];
	struct statfs sf;

	if (err == -ENOENT) {
		snprintf(parent, sizeof(parent), "%s", root);
		dirname(parent);
		if (!statfs(parent, &sf) && sf.f_type == DEBUGFS_MAGIC)
			provider_msg(p, false,
				     "no KVM debugfs directory at %s: is the kvm module loaded?",
				     root);
		else
			provider_msg(p, false,
				     "mount debugfs: mount -t debugfs none %s",
				     parent);
	} else if (debugfs_hidden_errno(err)) {
		provider_msg(p, false,
			     "cannot read %s: %s: run kvmstat as root", root,
			     strerror(-err));
	} else {
		provider_msg(p, false, "cannot read %s: %s", root,
			     strerror(-err));
	}
}

static bool debugfs_probe(const struct provider_cfg *opts)
{
	const char *root = opts->debugfs_root ? opts->debugfs_root :
						DEBUGFS_KVM_DEFAULT;
	struct stat st;

	return !stat(root, &st) && S_ISDIR(st.st_mode) &&
	       !access(root, R_OK | X_OK);
}

/*
 * Opens the top-level counter files the filter keeps. Names another
 * provider owns get no file, only a name for the VMs to fill in
 * (d->fallback), when the kernel lets them be read. 0 with the number of
 * hidden files in *hidden and of files the filter left out in *filtered,
 * or -errno.
 */
static int debugfs_open_top(struct provider *p, size_t *hidden, size_t *filtered)
{
	struct debugfs_priv *d = p->priv;
	const struct fs_entry *e;
	struct fs_dir dir;
	size_t cap = 0;

	if (fs_dir_start(&dir, d->rootfd))
		return dir.err;
	while ((e = fs_dir_next(&dir))) {
		enum field_type type;
		int fd, rc;

		if (fs_entry_type(e) != DT_REG)
			continue;
		if (!provider_keeps(p, e->name) ||
		    debugfs_kvm_stat_exempt(d, e->name)) {
			(*filtered)++;
			continue;
		}
		rc = debugfs_open_counter(d->rootfd, e->name, &fd, &type);
		if (rc < 0 && debugfs_hidden_errno(rc)) {
			(*hidden)++;
			debugfs_note_denied(p, rc);
			continue;
		}
		if (rc == -EMFILE)
			return rc;
		if (rc)
			continue;
		if (provider_claimed(p, e->name)) {
			debugfs_close_fd(&fd);
			debugfs_name_add(p, e->name, type);
			d->fallback = true;
			continue;
		}
		if (d->ntop == cap) {
			cap = cap ? cap * 2 : 64;
			d->top = xrealloc(d->top, cap * sizeof(*d->top));
		}
		d->top[d->ntop++] = (struct debugfs_file){
			.fd = fd,
			.name = debugfs_name_add(p, e->name, type),
		};
	}
	if (dir.err)
		return dir.err;
	d->topval = xcalloc(d->ntop, sizeof(*d->topval));
	return 0;
}

static void debugfs_close(struct provider *p)
{
	struct debugfs_priv *d = p->priv;

	if (!d)
		return;
	for (size_t i = 0; i < d->nvms; i++)
		debugfs_vm_close(&d->vms[i]);
	free(d->vms);
	free(d->vms_next);
	debugfs_files_close(d->top, d->ntop);
	free(d->topval);
	for (size_t i = 0; i < d->nnames; i++)
		free(d->names[i].name);
	free(d->names);
	free(d->val);
	free(d->ents);
	free(d->vc);
	debugfs_close_fd(&d->rootfd);
	free(d->root);
	free(d);
	p->priv = NULL;
}

/*
 * Opens the root, the counter files the filter keeps (the top-level totals,
 * or with -p that VM's directories) and, when VM counters are wanted, every
 * VM directory. Files the kernel hides are left out and counted in a
 * notice.
 */
static int debugfs_open(struct provider *p, const struct provider_cfg *opts)
{
	const char *root = opts->debugfs_root ? opts->debugfs_root :
						DEBUGFS_KVM_DEFAULT;
	struct debugfs_priv *d;
	size_t hidden = 0, filtered = 0;
	int rc;

	d = xcalloc(1, sizeof(*d));
	d->root = xstrdup(root);
	d->pid = opts->pid;
	d->kvm_stat_columns = opts->kvm_stat_columns;
	p->priv = d;
	errmsg_clear(&p->msg);
	p->notice = false;
	d->rootfd = -1;
	/* -d on a host that has not mounted debugfs yet */
	if (!strcmp(root, DEBUGFS_KVM_DEFAULT)) {
		rc = mounts_ensure(MOUNTS_DEBUGFS, &p->did, &p->msg);
		if (rc < 0)
			goto out_close;
	}
	d->rootfd = fs_open_dir(AT_FDCWD, root);
	if (d->rootfd < 0) {
		rc = d->rootfd;
		debugfs_root_msg(p, root, rc);
		goto out_close;
	}
	if (!d->pid) {
		rc = debugfs_open_top(p, &hidden, &filtered);
		if (rc)
			goto out_fail;
	}
	rc = debugfs_scan(p);
	if (rc)
		goto out_fail;
	d->vanished = false;
	if (d->emfile_noted) {
		rc = -EMFILE;
		goto out_fail;
	}
	if (d->pid) {
		if (!d->nvms) {
			rc = -ESRCH;
			provider_msg(p, false,
				     "no KVM debugfs directory for pid %d in %s: is it a running VM?",
				     (int)d->pid, root);
			goto out_close;
		}
		/* the first VM's directory stands for what the kernel hides */
		hidden = d->vms[0].hidden;
	}

	if (d->pid ? !d->nnames : !d->ntop && !d->fallback) {
		rc = -ENOENT;
		if (hidden) {
			rc = d->denied ? -EACCES : -EPERM;
			debugfs_hidden_msg(p, hidden, true);
		} else if (d->pid) {
			provider_msg(p, false,
				     "no debugfs counter of VM %d in %s can be read or matches the field filter",
				     (int)d->pid, root);
		} else if (filtered) {
			provider_msg(p, false,
				     "no debugfs counter in %s matches the field filter",
				     root);
		} else {
			provider_msg(p, false,
				     "no KVM counters in %s: is the kvm module loaded?",
				     root);
		}
		goto out_close;
	}
	if (hidden)
		debugfs_hidden_msg(p, hidden, false);
	return 0;

out_fail:
	if (rc == -EMFILE)
		provider_msg(p, false,
			     "too many open files reading %s: raise the limit (ulimit -n)",
			     root);
	else
		provider_msg(p, false, "cannot read %s: %s", root,
			     strerror(-rc));
out_close:
	debugfs_close(p);
	return rc;
}

/*
 * Reads one VM's counters into d->val (summed with the other VMs
 * of the same process) and its vCPUs' into d->vc; with fill_only just the
 * names another provider owns, and no vCPUs. 0, or -errno when the VM
 * went.
 */
static int debugfs_vm_read(struct provider *p, struct debugfs_vm *vm,
			   bool fill_only)
{
	struct debugfs_priv *d = p->priv;
	struct stat st;
	uint64_t v;
	int rc;

	for (size_t i = 0; i < vm->nf; i++) {
		const struct debugfs_file *f = &vm->f[i];

		if (fill_only && !d->names[f->name].claimed)
			continue;
		rc = debugfs_read_value(vm->dirfd, d->names[f->name].name,
					f->fd, &v);
		if (rc < 0 && debugfs_gone_errno(rc)) {
			/* no partial sums for its process this time */
			for (size_t j = 0; j < vm->nf; j++)
				reading_fail(&d->val[vm->f[j].name]);
			return rc;
		}
		if (rc) {
			reading_fail(&d->val[f->name]);
		} else {
			int field = d->names[f->name].field;

			reading_add(&d->val[f->name], v,
				    p->fields->v[field].type);
		}
	}
	if (fill_only)
		return 0;
	/* each vCPU directory adds a link: list it again only then */
	if (!fstat(vm->dirfd, &st) &&
	    (st.st_nlink != vm->nlink || st.st_nlink < 2)) {
		rc = debugfs_vm_list(p, vm, false);
		if (rc == -EMFILE)
			debugfs_note_emfile(p);
	}
	for (size_t i = 0; i < vm->nvcpu; i++) {
		struct debugfs_vcpu *c = &vm->vcpu[i];

		if (!c->tid)
			debugfs_vcpu_tid(c);
		for (size_t j = 0; j < c->nf; j++) {
			const struct debugfs_file *f = &c->f[j];

			if (debugfs_read_value(c->dirfd, d->names[f->name].name,
					       f->fd, &v))
				continue;
			if (d->nvc == d->capvc) {
				d->capvc = d->capvc ? d->capvc * 2 : 256;
				d->vc = xrealloc(d->vc,
						 d->capvc * sizeof(*d->vc));
			}
			d->vc[d->nvc++] = (struct debugfs_vcval){
				.vcpu = c->index,
				.name = f->name,
				.tid = c->tid,
				.value = v,
			};
		}
	}
	return 0;
}

static int debugfs_vcval_cmp(const void *a, const void *b)
{
	const struct debugfs_vcval *x = a, *y = b;

	if (x->vcpu != y->vcpu)
		return x->vcpu < y->vcpu ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/*
 * Pushes the sums of one process's VMs (with -p also as pid 0) and its
 * vCPUs' values. A process with several VMs has several vCPUs of each
 * index: samples are keyed by pid and index, so those add up too.
 */
static void debugfs_push_group(struct provider *p, pid_t pid, size_t nvms,
			       struct sample_set *out, unsigned int flags)
{
	struct debugfs_priv *d = p->priv;

	for (size_t k = 0; k < d->nnames; k++) {
		if (!reading_ok(&d->val[k]))
			continue;
		sample_set_push(out, d->names[k].field, pid, SAMPLE_ALL_VCPUS,
				0, d->val[k].value, flags);
		if (d->pid)
			sample_set_push(out, d->names[k].field, 0,
					SAMPLE_ALL_VCPUS, 0, d->val[k].value,
					flags);
	}
	if (nvms > 1 && d->nvc > 1)
		qsort(d->vc, d->nvc, sizeof(*d->vc), debugfs_vcval_cmp);
	for (size_t i = 0; i < d->nvc;) {
		struct debugfs_vcval x = d->vc[i++];

		for (; nvms > 1 && i < d->nvc &&
		       !debugfs_vcval_cmp(&x, &d->vc[i]);
		     i++) {
			x.value += d->vc[i].value;
			if (x.tid != d->vc[i].tid)
				x.tid = 0; /* not one thread */
		}
		sample_set_push(out, d->names[x.name].field, pid, x.vcpu, x.tid,
				x.value, 0);
	}
}

/* Whether a provider read earlier served this process's VMs (the names
 * another provider owns). */
static bool debugfs_served(const struct provider *p, pid_t pid)
{
	const struct debugfs_priv *d = p->priv;

	for (size_t k = 0; k < d->nnames; k++)
		if (d->names[k].claimed &&
		    provider_served(p, d->names[k].field, pid))
			return true;
	return false;
}

/* Reads the wanted VMs in order, one process at a time, and drops the ones
 * that went. With fill_only, only the names another provider owns, of the
 * processes no earlier provider served. */
static void debugfs_read_vms(struct provider *p, struct sample_set *out,
			     bool fill_only)
{
	struct debugfs_priv *d = p->priv;
	size_t i = 0, n = 0;

	while (i < d->nvms) {
		pid_t pid = d->vms[i].pid;
		bool skip = fill_only && debugfs_served(p, pid);
		size_t nread = 0;

		readings_clear(d->val, d->nnames);
		d->nvc = 0;
		for (; i < d->nvms && d->vms[i].pid == pid; i++) {
			struct debugfs_vm *vm = &d->vms[i];

			if (skip) {
				d->vms[n++] = *vm;
				continue;
			}
			if (!vm->opened && !vm->failed) {
				int rc = debugfs_vm_open(p, vm);

				if (rc == -EMFILE)
					debugfs_note_emfile(p);
				vm->failed = rc != 0;
			}
			if (vm->opened && debugfs_vm_read(p, vm, fill_only)) {
				debugfs_vm_close(vm);
				d->vanished = true;
				continue;
			}
			nread += vm->opened;
			d->vms[n++] = *vm;
		}
		if (nread)
			debugfs_push_group(p, pid, nread, out,
					   d->vanished || d->rebase_left ?
						   SAMPLE_REBASE :
						   0);
	}
	d->nvms = n;
}

/*
 * One refresh: the totals (or with -p that VM's counters), the list of VMs
 * and, when wanted, every VM's and vCPU's counters. Totals are read before
 * the listing so that a VM seen gone in this refresh flags them.
 */
static int debugfs_read(struct provider *p, struct sample_set *out)
{
	struct debugfs_priv *d = p->priv;
	unsigned int flags;
	uint64_t v;

	for (size_t i = 0; i < d->ntop; i++) {
		const struct debugfs_file *f = &d->top[i];

		if (debugfs_read_value(d->rootfd, d->names[f->name].name, f->fd,
				       &v))
			d->topval[i] = (struct reading){
				.state = READING_UNREADABLE
			};
		else
			d->topval[i] = (struct reading){ v, READING_OK };
	}
	d->vanished = false;
	debugfs_scan(p);
	if (debugfs_want_vms(p))
		debugfs_read_vms(p, out, false);
	else if (d->fallback)
		debugfs_read_vms(p, out, true);
	if (d->vanished)
		d->rebase_left = DEBUGFS_REBASE_REFRESHES;
	flags = d->rebase_left ? SAMPLE_REBASE : 0;
	if (d->rebase_left)
		d->rebase_left--;
	for (size_t i = 0; i < d->ntop; i++)
		if (reading_ok(&d->topval[i]))
			sample_set_push(out, d->names[d->top[i].name].field, 0,
					SAMPLE_ALL_VCPUS, 0, d->topval[i].value,
					flags);
	if (d->pid && !d->nvms && !d->gone_noted) {
		d->gone_noted = true;
		provider_msg(p, true,
			     "VM %d has no KVM debugfs directory any more: it exited",
			     (int)d->pid);
	}
	return 0;
}

static bool debugfs_asked(const struct options *o)
{
	return o->use_debugfs;
}

const struct provider_ops debugfs_provider_ops = {
	.name = "debugfs",
	.asked = debugfs_asked,
	.probe = debugfs_probe,
	.open = debugfs_open,
	.read = debugfs_read,
	.close = debugfs_close,
};
