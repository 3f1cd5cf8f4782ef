// SPDX-License-Identifier: GPL-2.0-only
/*
 * The statsfd provider: KVM's binary statistics (KVM_GET_STATS_FD) of each
 * VM, read from the stats fds its VMM keeps open. KVM refuses VM and vCPU
 * ioctls from any process but the VM's owner, so kvmstat cannot make stats
 * fds of its own: it finds the "anon_inode:kvm-vm-stats" and
 * "anon_inode:kvm-vcpu-stats:N" links in /proc/PID/fd of VM processes
 * (those holding an "anon_inode:kvm-vm" fd), copies them with pidfd_getfd,
 * reads each file's header and descriptors once (files with the same
 * layout share one parsed schema) and, every refresh, the part of its
 * data block that holds the wanted stats: one pread per fd, none for a
 * file of which no stat is wanted.
 *
 * VM processes are found from the "PID-FD" directories KVM's debugfs has
 * for each VM (listed even under lockdown), so only their fds are read;
 * every process under /proc only when debugfs cannot be read. The layouts
 * are read at open from a scratch VM and vCPU of our own, so every field
 * is there from the first sample (0 until a VM exists).
 *
 * Between refreshes the loop polls one epoll fd of ours (wake_fd): each
 * VM's pidfd, inotify on the debugfs directory and a timer. A VM whose
 * process exits is read one last time through the copies (they still
 * read) and they are closed at once, which lets the kernel free the VM;
 * what it counted stays in the sums. A VM created between refreshes has
 * its stats fds copied as it appears, and is looked at again every 10 ms
 * for 2 s for the fds its VMM opens after creating it (KVM names it in
 * debugfs even before its own fd is in the VMM's fd table), so a VM that
 * lives less than one refresh is counted whole. Each VM's own debugfs
 * directory is watched too: a vCPU created later makes its VM young
 * again. The full scan (new VMs that inotify missed, stats fds opened or
 * closed later) runs at most every SFD_RESCAN_NS (2 s), only every
 * SFD_RESCAN_WATCHED_NS (30 s) while every VM is watched: discovery
 * costs nothing per refresh while no VM comes or goes. Even then only
 * processes whose fd count changed are listed again (see sfd_scan_pid).
 *
 * Samples: each stat per vCPU (pid, N), per VM (pid, SAMPLE_ALL_VCPUS): the
 * sum over its vCPUs plus its VM-scope stats, which have no vCPU breakdown,
 * and for pid 0 the sum over the VMs (or the -p VM). Peaks aggregate as
 * maxima. A histogram is a cumulative parent field with a child per bucket
 * named "NAME(i)", so the default filter hides the buckets.
 *
 * This file is the provider itself (open, read, close); the rest of
 * src/providers/statsfd/ gathers its notices (notes.c), finds the VMs
 * (scan.c), copies and tracks their stats fds (copies.c), watches for
 * VMs between refreshes (watch.c) and binds the layouts to fields
 * (schema.c), all through statsfd_int.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "errmsg.h"
#include "fs.h"
#include "options.h"
#include "provider.h"
#include "reading.h"
#include "statsfd_format.h"
#include "statsfd_int.h"
#include "util.h"
#include "vm.h"

#ifndef KVM_CAP_BINARY_STATS_FD
#define KVM_CAP_BINARY_STATS_FD 203
#endif

/* Adds one file's values (its range, read into data) to the aggregate
 * agg. */
static void sfd_file_add(const struct sfd_file *f, const unsigned char *data,
			 struct reading *agg)
{
	const struct sfd_schema *sc = f->sc;

	for (size_t k = 0; k < sc->nitem; k++) {
		const struct sfd_item *it = &sc->item[k];
		uint64_t v;

		memcpy(&v, data + it->off, sizeof(v));
		if (f->base && it->type == FIELD_CUMULATIVE) {
			uint64_t b;

			memcpy(&b, f->base + it->off, sizeof(b));
			v = v >= b ? v - b : 0;
		}
		reading_add(&agg[it->local], v, it->type);
	}
}

/* Marks one file's values unreadable in the aggregate agg: it could not
 * be read this time. */
static void sfd_file_bad(const struct sfd_file *f, struct reading *agg)
{
	for (size_t k = 0; k < f->sc->nitem; k++)
		reading_fail(&agg[f->sc->item[k].local]);
}

/* Folds the aggregate part into whole (a vCPU's into its VM's). */
static void sfd_fold(struct sfd_priv *d, struct reading *whole,
		     const struct reading *part)
{
	for (size_t k = 0; k < d->nlocals; k++)
		reading_fold(&whole[k], &part[k], d->locals[k].type);
}

/* The local indexes by field id, again when locals were added. */
static void sfd_order(struct sfd_priv *d)
{
	if (d->norder == d->nlocals)
		return;
	d->order = xrealloc(d->order, d->nlocals * sizeof(*d->order));
	d->norder = 0;
	/* local_of is indexed by field id: walking it gives the order */
	for (size_t f = 0; f < d->nlocal_of; f++)
		if (d->local_of[f] >= 0)
			d->order[d->norder++] = d->local_of[f];
}

/* Pushes the readable values of agg, by field id. */
static void sfd_push_all(struct sfd_priv *d, struct sample_set *out, pid_t pid,
			 int vcpu, pid_t tid, const struct reading *agg,
			 unsigned int flags)
{
	for (size_t i = 0; i < d->norder; i++) {
		int k = d->order[i];

		if (reading_ok(&agg[k]))
			sample_set_push(out, d->locals[k].field, pid, vcpu, tid,
					agg[k].value, flags);
	}
}

/* Whether samples per vCPU are wanted (per VM there always are). */
static bool sfd_want_vcpus(const struct provider *p)
{
	const struct sfd_priv *d = p->priv;

	return (p->want_vms && p->want_vcpus) || d->pid;
}

/*
 * Reads every file of one VM, pushes its own samples, its vCPUs' when
 * wanted, and folds it into the pid-0 sums. A file that cannot be read
 * makes its values unreadable (not pushed) for this refresh, never zero.
 */
static void sfd_vm_read(struct provider *p, struct sfd_vm *vm,
			struct sample_set *out)
{
	struct sfd_priv *d = p->priv;
	bool breakdown = sfd_want_vcpus(p);
	/* without the per-vCPU breakdown, files add straight into their
	 * VM's sums (folding a vCPU's sum in is the same addition) */
	struct reading *agg = breakdown ? d->vcval : d->vmval;

	readings_clear(d->vmval, d->nlocals);
	for (size_t i = 0; i < vm->nf;) {
		int vcpu = vm->f[i].vcpu;
		pid_t tid = vm->f[i].tid;
		size_t j = i;

		if (breakdown)
			readings_clear(d->vcval, d->nlocals);
		for (; j < vm->nf && vm->f[j].vcpu == vcpu; j++) {
			const struct sfd_file *f = &vm->f[j];
			const unsigned char *data = f->last;
			size_t len = sfd_range_len(f->sc);

			if (f->tid != tid)
				tid = 0; /* several VMs: not one thread */
			if (!len)
				continue; /* nothing wanted: not read */
			if (len > d->capdata) {
				d->capdata = len;
				d->data = xrealloc(d->data, d->capdata);
			}
			if (f->fd >= 0 && !sfd_file_fetch(f->sc, f->fd, d->data))
				data = d->data;
			/* counted from the first refresh, as the stats count
			 * every series read in it */
			if (data == d->data && f->base && !d->reads)
				memcpy(f->base, data, len);
			if (!data) {
				sfd_file_bad(f, agg);
				continue;
			}
			sfd_file_add(f, data, agg);
		}
		i = j;
		if (!breakdown)
			continue;
		if (vcpu >= 0)
			sfd_push_all(d, out, vm->pid, vcpu, tid, d->vcval,
				     d->vcpus_told ? 0 : SAMPLE_BASELINE);
		sfd_fold(d, d->vmval, d->vcval);
	}
	/* always: which VMs this provider served is how the stats layer
	 * lets debugfs or QMP fill in the others */
	sfd_push_all(d, out, vm->pid, SAMPLE_ALL_VCPUS, 0, d->vmval, 0);
	sfd_fold(d, d->val, d->vmval);
	if (!vm->dead)
		return;
	/* what it counted stays in the pid-0 sums after it is dropped */
	for (size_t k = 0; k < d->nlocals; k++) {
		if (d->locals[k].type != FIELD_CUMULATIVE)
			continue;
		if (reading_ok(&d->vmval[k]))
			reading_add(&d->retired[k], d->vmval[k].value,
				    FIELD_CUMULATIVE);
		else if (vm->nf)
			d->rebase_next = true;
	}
}

/* Drops the VMs read for the last time. */
static void sfd_vms_bury(struct sfd_priv *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nvms; i++) {
		if (!d->vms[i].dead) {
			d->vms[n++] = d->vms[i];
			continue;
		}
		sfd_unwatch(d, &d->vms[i]);
		sfd_vm_close(&d->vms[i]);
	}
	d->nvms = n;
}

static int sfd_read(struct provider *p, struct sample_set *out)
{
	struct sfd_priv *d = p->priv;
	uint64_t now = util_now_ns();
	unsigned int flags;

	d->vanished = d->rebase_next;
	d->rebase_next = false;
	sfd_wake(p);
	if (d->reads &&
	    now - d->last_scan >=
		    (d->all_watched ? SFD_RESCAN_WATCHED_NS : SFD_RESCAN_NS))
		sfd_scan(p, now);
	else if (!d->all_watched)
		sfd_watch_vms(d); /* a VM found between refreshes */
	flags = d->vanished ? SAMPLE_REBASE : 0;
	sfd_order(d);
	/* the sums start from what exited VMs counted, so that a VM
	 * leaving never takes its counts with it */
	if (d->nlocals)
		memcpy(d->val, d->retired, d->nlocals * sizeof(*d->val));
	for (size_t i = 0; i < d->nvms; i++)
		sfd_vm_read(p, &d->vms[i], out);
	/* a breakdown turned on later starts from where its files stand */
	d->vcpus_told = sfd_want_vcpus(p);
	sfd_vms_bury(d);
	/* fields known from the schema but no VM yet: 0 */
	for (size_t k = 0; k < d->nlocals; k++)
		if (d->val[k].state == READING_NONE)
			reading_add(&d->val[k], 0, d->locals[k].type);
	sfd_push_all(d, out, 0, SAMPLE_ALL_VCPUS, 0, d->val, flags);
	d->reads++;
	if (d->pid && !d->nvms && !d->gone_noted) {
		d->gone_noted = true;
		sfd_note_add(d, "VM %d exited: its stats fds are closed",
			     (int)d->pid);
	}
	sfd_note_flush(p);
	return 0;
}

/* Host support: the kernel offers KVM_GET_STATS_FD. */
static bool sfd_probe(const struct provider_cfg *opts)
{
	int fd, rc;

	(void)opts;
	fd = open("/dev/kvm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	rc = ioctl(fd, KVM_CHECK_EXTENSION, KVM_CAP_BINARY_STATS_FD);
	close(fd);
	return rc > 0;
}

static void sfd_close(struct provider *p)
{
	struct sfd_priv *d = p->priv;

	if (!d)
		return;
	for (size_t i = 0; i < d->nvms; i++)
		sfd_vm_close(&d->vms[i]);
	free(d->vms);
	for (size_t i = 0; i < d->nschemas; i++)
		sfd_schema_free(d->schemas[i]);
	free(d->schemas);
	free(d->locals);
	free(d->local_of);
	free(d->order);
	free(d->val);
	free(d->vmval);
	free(d->vcval);
	free(d->data);
	free(d->pfd);
	free(d->links);
	free(d->known);
	free(d->known_next);
	free(d->retired);
	free(d->young);
	if (d->inofd >= 0)
		close(d->inofd);
	if (d->tfd >= 0)
		close(d->tfd);
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->dbgfd >= 0)
		close(d->dbgfd);
	if (d->rootfd >= 0)
		close(d->rootfd);
	free(d->proc_root);
	free(d->dbg_path);
	free(d);
	p->priv = NULL;
}

/* With -p: why that VM cannot be served, as an error for main. */
static int sfd_pid_error(struct provider *p)
{
	struct sfd_priv *d = p->priv;
	struct sfd_vm *vm = d->nvms ? &d->vms[0] : NULL;
	char path[48];

	snprintf(path, sizeof(path), "%s/%d/fd", d->proc_root, (int)d->pid);
	if (!vm) {
		provider_msg(p, false,
			     "process %d holds no KVM VM (no anon_inode:kvm-vm link in %s)",
			     (int)d->pid, path);
		return -ESRCH;
	}
	if (vm->nf)
		return 0;
	if (sfd_denied_errno(vm->err)) {
		provider_msg(p, false,
			     "cannot copy the stats fds of VM %d: %s: %s",
			     (int)d->pid, strerror(-vm->err), sfd_perm_hint);
		return vm->err;
	}
	if (vm->err) {
		provider_msg(p, false, "cannot copy the stats fds of VM %d: %s",
			     (int)d->pid, strerror(-vm->err));
		return vm->err;
	}
	provider_msg(p, false,
		     "VM %d keeps no binary stats fds open (QEMU before 8.1 keeps none): use debugfs (-d) or tracepoints (-t)",
		     (int)d->pid);
	return -ENOENT;
}

/*
 * Without -p: no VM's stats fds could be copied for want of privilege
 * (processes whose fds are hidden, or VMs whose fds cannot be copied) is
 * an error, not an empty run.
 */
static int sfd_privilege_error(struct provider *p)
{
	struct sfd_priv *d = p->priv;
	size_t denied = d->ndenied;

	if (d->pid)
		return 0;
	for (size_t i = 0; i < d->nvms; i++) {
		if (d->vms[i].nf)
			return 0;
		denied += sfd_denied_errno(d->vms[i].err);
	}
	if (!denied || !geteuid())
		return 0;
	provider_msg(p, false,
		     "cannot copy VMs' stats fds as user %d: run kvmstat as root (%s)",
		     (int)geteuid(), sfd_perm_hint);
	return -EPERM;
}

/*
 * Finds the VMs (or the -p VM) and copies their stats fds. Without -p,
 * having no VM is fine: VMs that start later are found by a later scan.
 */
static int sfd_open(struct provider *p, const struct provider_cfg *opts)
{
	const char *root = opts->proc_root ? opts->proc_root : "/proc";
	struct sfd_priv *d;
	int rc;

	d = xcalloc(1, sizeof(*d));
	p->priv = d;
	errmsg_clear(&p->msg);
	p->notice = false;
	d->proc_root = xstrdup(root);
	d->fake_proc = strcmp(root, "/proc") != 0;
	d->pid = opts->pid;
	d->include_past = opts->include_past;
	d->self = getpid();
	d->dbgfd = d->epfd = d->inofd = d->tfd = d->dbgwd = -1;
	d->vcpus_told = true;
	d->rootfd = fs_open_dir(AT_FDCWD, root);
	if (d->rootfd < 0) {
		rc = d->rootfd;
		provider_msg(p, false, "cannot read %s: %s", root,
			     strerror(-rc));
		goto out_close;
	}
	d->self_start = vm_proc_start_ticks(d->rootfd, 0);
	sfd_watch_open(d, opts);
	if (!d->fake_proc)
		sfd_schema_at_start(p);
	sfd_scan(p, util_now_ns());
	rc = sfd_privilege_error(p);
	if (rc)
		goto out_close;
	if (d->pid) {
		rc = sfd_pid_error(p);
		if (rc)
			goto out_close;
	}
	sfd_note_flush(p);
	return 0;

out_close:
	sfd_close(p);
	return rc;
}

static bool sfd_asked(const struct options *o)
{
	return o->use_statsfd;
}

const struct provider_ops statsfd_provider_ops = {
	.name = "statsfd",
	.asked = sfd_asked,
	.probe = sfd_probe,
	.open = sfd_open,
	.read = sfd_read,
	.close = sfd_close,
	.wake_fd = sfd_wake_fd,
	.wake = sfd_wake,
	.vms_live = true,
};
