// SPDX-License-Identifier: GPL-2.0-only
/*
 * The debugfs provider's VMs (debugfs_int.h): the <pid>-<fd> directories
 * of the root, listed each refresh and merged into the VMs tracked, each
 * opened with its counters and its vcpuN directories when VM counters
 * are wanted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debugfs_int.h"
#include "fs.h"
#include "provider.h"
#include "util.h"

/* "<pid>-<fd>", the name KVM gives a VM's directory. */
static bool debugfs_vm_name(const char *s, pid_t *pid, int *num)
{
	long a, b;

	if (!debugfs_parse_num(s, &s, &a) || *s++ != '-' ||
	    !debugfs_parse_num(s, &s, &b) || *s || a <= 0)
		return false;
	*pid = (pid_t)a;
	*num = (int)b;
	return true;
}

/* "vcpu<N>" */
static bool debugfs_vcpu_name(const char *s, int *index)
{
	long v;

	if (strncmp(s, "vcpu", 4) || !debugfs_parse_num(s + 4, &s, &v) || *s)
		return false;
	*index = (int)v;
	return true;
}

void debugfs_vm_close(struct debugfs_vm *vm)
{
	for (size_t i = 0; i < vm->nvcpu; i++) {
		struct debugfs_vcpu *c = &vm->vcpu[i];

		debugfs_files_close(c->f, c->nf);
		debugfs_close_fd(&c->dirfd);
		debugfs_close_fd(&c->pidfd);
	}
	free(vm->vcpu);
	vm->vcpu = NULL;
	vm->nvcpu = 0;
	debugfs_files_close(vm->f, vm->nf);
	vm->f = NULL;
	vm->nf = 0;
	debugfs_close_fd(&vm->dirfd);
	vm->opened = false;
}

/* Reads a vCPU's thread id; keeps the pid file (or its directory) open
 * while the kernel still says 0, i.e. the vCPU has not run yet. */
void debugfs_vcpu_tid(struct debugfs_vcpu *c)
{
	char buf[DEBUGFS_VALUE_MAX];
	uint64_t v;

	if (debugfs_read_buf(c->dirfd, "pid", c->pidfd, buf, sizeof(buf)) < 0 ||
	    util_parse_u64(buf, &v) || v > INT_MAX)
		return;
	c->tid = (pid_t)v;
	if (c->tid)
		debugfs_close_fd(&c->pidfd);
}

/*
 * Opens one vcpuN directory: its thread id, and those of its files that are
 * numbers named like a counter this provider reports (guest_mode): other
 * arch files (tsc-offset, lapic_timer_advance_ns) are settings, not
 * counters. 0 or -errno.
 */
static int debugfs_vcpu_open(struct provider *p, struct debugfs_vm *vm,
			     const char *dname, int index)
{
	struct debugfs_vcpu c = { .index = index, .dirfd = -1, .pidfd = -1 };
	const struct fs_entry *e;
	bool need_dir = false;
	struct fs_dir dir;
	size_t cap = 0;
	int rc;

	c.dirfd = fs_open_dir(vm->dirfd, dname);
	if (c.dirfd < 0)
		return c.dirfd;
	fs_dir_start(&dir, c.dirfd);
	while ((e = fs_dir_next(&dir))) {
		enum field_type type;
		int fd, k;

		if (fs_entry_type(e) != DT_REG)
			continue;
		if (!strcmp(e->name, "pid")) {
			rc = debugfs_open_counter(c.dirfd, "pid", &fd, &type);
			if (rc == -EMFILE)
				goto out_close;
			if (!rc)
				c.pidfd = fd;
			continue;
		}
		k = debugfs_name_find(p, e->name);
		if (k < 0)
			continue;
		rc = debugfs_open_counter(c.dirfd, e->name, &fd, &type);
		if (rc == -EMFILE)
			goto out_close;
		if (rc)
			continue;
		if (c.nf == cap) {
			cap = cap ? cap * 2 : 4;
			c.f = xrealloc(c.f, cap * sizeof(*c.f));
		}
		c.f[c.nf++] = (struct debugfs_file){ .fd = fd, .name = k };
		need_dir |= fd < 0;
	}
	rc = dir.err;
	if (rc)
		goto out_close;
	debugfs_vcpu_tid(&c);
	if (!c.tid && c.pidfd < 0)
		need_dir = true;
	if (!need_dir)
		debugfs_close_fd(&c.dirfd);
	vm->vcpu = xrealloc(vm->vcpu, (vm->nvcpu + 1) * sizeof(*vm->vcpu));
	vm->vcpu[vm->nvcpu++] = c;
	return 0;

out_close:
	debugfs_files_close(c.f, c.nf);
	debugfs_close_fd(&c.pidfd);
	debugfs_close_fd(&c.dirfd);
	return rc;
}

static bool debugfs_vm_has_vcpu(const struct debugfs_vm *vm, int index)
{
	for (size_t i = 0; i < vm->nvcpu; i++)
		if (vm->vcpu[i].index == index)
			return true;
	return false;
}

/*
 * Lists a VM directory: opens its counter files the first time (first is
 * true; files the kernel hides are counted in vm->hidden) and any vcpuN
 * directory not seen yet. 0 or -errno.
 */
int debugfs_vm_list(struct provider *p, struct debugfs_vm *vm, bool first)
{
	const struct fs_entry *e;
	int *vcpus = NULL;
	size_t nvcpus = 0, cap = 0;
	struct fs_dir dir;
	struct stat st;
	int rc = 0;

	if (fstat(vm->dirfd, &st))
		return -errno;
	vm->nlink = st.st_nlink;
	if (fs_dir_start(&dir, vm->dirfd))
		return dir.err;
	while ((e = fs_dir_next(&dir))) {
		unsigned char type = fs_entry_type(e);
		enum field_type ftype;
		int index, fd;

		if (type == DT_DIR && debugfs_vcpu_name(e->name, &index)) {
			/* opened below, once the listing is done */
			if (!debugfs_vm_has_vcpu(vm, index)) {
				vcpus = xrealloc(vcpus,
						 (nvcpus + 1) * sizeof(*vcpus));
				vcpus[nvcpus++] = index;
			}
			continue;
		}
		if (!first || type != DT_REG || !provider_keeps(p, e->name) ||
		    debugfs_kvm_stat_exempt(p->priv, e->name))
			continue;
		rc = debugfs_open_counter(vm->dirfd, e->name, &fd, &ftype);
		if (rc < 0 && debugfs_hidden_errno(rc)) {
			vm->hidden++;
			debugfs_note_denied(p, rc);
			rc = 0;
			continue;
		}
		if (rc == -EMFILE || (rc < 0 && debugfs_gone_errno(rc)))
			goto out;
		if (rc) {
			rc = 0;
			continue; /* not a counter */
		}
		if (vm->nf == cap) {
			cap = cap ? cap * 2 : 64;
			vm->f = xrealloc(vm->f, cap * sizeof(*vm->f));
		}
		vm->f[vm->nf++] = (struct debugfs_file){
			.fd = fd,
			.name = debugfs_name_add(p, e->name, ftype),
		};
	}
	rc = dir.err;
	if (rc)
		goto out;
	for (size_t i = 0; i < nvcpus; i++) {
		char name[32];

		snprintf(name, sizeof(name), "vcpu%d", vcpus[i]);
		rc = debugfs_vcpu_open(p, vm, name, vcpus[i]);
		/* a vCPU directory that went is no reason to fail */
		if (rc == -EMFILE)
			goto out;
		rc = 0;
	}
out:
	free(vcpus);
	return rc;
}

/* Opens a VM's directory, counters and vCPUs. 0, or -errno (the VM stays
 * unopened). */
int debugfs_vm_open(struct provider *p, struct debugfs_vm *vm)
{
	struct debugfs_priv *d = p->priv;
	char name[64];
	int rc;

	snprintf(name, sizeof(name), "%d-%d", (int)vm->pid, vm->num);
	vm->dirfd = fs_open_dir(d->rootfd, name);
	if (vm->dirfd < 0)
		return vm->dirfd;
	vm->opened = true;
	vm->hidden = 0;
	rc = debugfs_vm_list(p, vm, true);
	if (rc)
		debugfs_vm_close(vm);
	return rc;
}

static int debugfs_ent_cmp(const void *a, const void *b)
{
	const struct debugfs_ent *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->num < y->num ? -1 : x->num > y->num;
}

static int debugfs_vm_key_cmp(const struct debugfs_vm *vm,
			      const struct debugfs_ent *e)
{
	if (vm->pid != e->pid)
		return vm->pid < e->pid ? -1 : 1;
	return vm->num < e->num ? -1 : vm->num > e->num;
}

/* Whether this refresh wants the VMs' own counters. */
bool debugfs_want_vms(const struct provider *p)
{
	const struct debugfs_priv *d = p->priv;

	return p->want_vms || d->pid;
}

void debugfs_note_emfile(struct provider *p)
{
	struct debugfs_priv *d = p->priv;

	if (d->emfile_noted)
		return;
	d->emfile_noted = true;
	provider_msg(p, true,
		     "too many open files: some VMs' debugfs counters are left out; raise the limit (ulimit -n)");
}

/*
 * Lists the root and brings d->vms in line with it: a VM that went is
 * closed and forgotten (d->vanished), a new one is tracked, and opened when
 * VM counters are wanted. With -p only that process's VMs are tracked.
 * 0 or -errno when the root cannot be listed.
 */
int debugfs_scan(struct provider *p)
{
	struct debugfs_priv *d = p->priv;
	const struct fs_entry *e;
	struct debugfs_vm *next;
	struct fs_dir dir;
	size_t i, j, n;
	bool same;

	if (fs_dir_start(&dir, d->rootfd))
		return dir.err;
	d->nents = 0;
	while ((e = fs_dir_next(&dir))) {
		pid_t pid;
		int num;

		if (!debugfs_vm_name(e->name, &pid, &num) ||
		    (d->pid && pid != d->pid) || fs_entry_type(e) != DT_DIR)
			continue;
		if (d->nents == d->capents) {
			d->capents = d->capents ? d->capents * 2 : 64;
			d->ents = xrealloc(d->ents,
					   d->capents * sizeof(*d->ents));
		}
		d->ents[d->nents++] = (struct debugfs_ent){ pid, num, e->ino };
	}
	if (dir.err)
		return dir.err;
	if (d->nents > 1)
		qsort(d->ents, d->nents, sizeof(*d->ents), debugfs_ent_cmp);

	same = d->nents == d->nvms;
	for (i = 0; same && i < d->nvms; i++)
		same = !debugfs_vm_key_cmp(&d->vms[i], &d->ents[i]) &&
		       d->vms[i].ino == d->ents[i].ino;
	if (same)
		return 0;

	if (d->capvms < d->nvms + d->nents) {
		d->capvms = (d->nvms + d->nents) * 2;
		d->vms = xrealloc(d->vms, d->capvms * sizeof(*d->vms));
		d->vms_next = xrealloc(d->vms_next,
				       d->capvms * sizeof(*d->vms_next));
	}
	next = d->vms_next;
	for (i = j = n = 0; i < d->nvms || j < d->nents;) {
		int c = i == d->nvms ?
				1 :
			j == d->nents ?
				-1 :
				debugfs_vm_key_cmp(&d->vms[i], &d->ents[j]);

		if (c == 0 && d->vms[i].ino == d->ents[j].ino) {
			next[n++] = d->vms[i++];
			j++;
			continue;
		}
		if (c <= 0) {
			/* gone, or a new VM under an old name */
			debugfs_vm_close(&d->vms[i++]);
			d->vanished = true;
			if (c < 0)
				continue;
		}
		next[n] = (struct debugfs_vm){
			.pid = d->ents[j].pid,
			.num = d->ents[j].num,
			.ino = d->ents[j].ino,
			.dirfd = -1,
		};
		j++;
		if (debugfs_want_vms(p)) {
			int rc = debugfs_vm_open(p, &next[n]);

			if (rc < 0 && debugfs_gone_errno(rc))
				continue; /* went while we looked */
			if (rc == -EMFILE)
				debugfs_note_emfile(p);
			next[n].failed = rc != 0;
		}
		n++;
	}
	d->vms_next = d->vms;
	d->vms = next;
	d->nvms = n;
	return 0;
}
