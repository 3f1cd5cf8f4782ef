// SPDX-License-Identifier: GPL-2.0-only
/*
 * The statsfd provider's scan (statsfd_int.h): which processes hold a VM
 * and which stats fds, from their fd directories (the ones KVM's debugfs
 * names, or every process under the proc root), listing again only those
 * whose fd count changed (a young VM's, whose VMM is still opening its
 * stats fds, every time); the one-time notices about VMs found without
 * stats fds or out of reach.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider.h"
#include "statsfd_int.h"
#include "util.h"
#include "vm.h"

/* Whether pid is a VM created moments ago (its stats fds may come). */
static bool sfd_young_has(const struct sfd_priv *d, pid_t pid)
{
	for (size_t i = 0; i < d->nyoung; i++)
		if (d->young[i].pid == pid)
			return true;
	return false;
}

/* Whether pid may be such a VM: it is, or a VM came whose process could
 * not be told (young pid 0: any may be). */
bool sfd_young_maybe(const struct sfd_priv *d, pid_t pid)
{
	return sfd_young_has(d, pid) || sfd_young_has(d, 0);
}

/* Appends a stats link to d->links, which holds *n. */
static void sfd_link_add(struct sfd_priv *d, size_t *n, int srcfd, int vcpu)
{
	if (*n == d->caplinks) {
		d->caplinks = d->caplinks ? d->caplinks * 2 : 64;
		d->links = xrealloc(d->links, d->caplinks * sizeof(*d->links));
	}
	d->links[(*n)++] = (struct sfd_link){ srcfd, vcpu };
}

/* What one process's fd walk found (vm_proc_fds). */
struct sfd_walk {
	struct sfd_priv *d;
	bool is_vm; /* it holds a VM fd */
	size_t n;   /* stats links in d->links */
};

static int sfd_scan_fd(int fd, enum vm_fd_kind kind, int vcpu, void *ctx)
{
	struct sfd_walk *w = ctx;

	if (kind == VM_FD_VM)
		w->is_vm = true;
	else if (kind == VM_FD_STATS)
		sfd_link_add(w->d, &w->n, fd, vcpu);
	return 0;
}

/*
 * Reads one process's fd directory: whether it holds a VM fd (*is_vm), and
 * its stats links into d->links (*n of them). 0 or -errno when the
 * directory cannot be opened (gone, or not ours to read).
 */
static int sfd_scan_fds(struct sfd_priv *d, pid_t pid, bool *is_vm, size_t *n)
{
	struct sfd_walk w = { .d = d };
	int rc = vm_proc_fds(d->rootfd, pid, sfd_scan_fd, &w);

	*is_vm = w.is_vm;
	*n = w.n;
	return rc;
}

/* Writes "PID PID ... and N more". */
static void sfd_note_pids(const pid_t *pids, size_t n, char *buf, size_t len)
{
	size_t pos = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && i < SFD_NOTE_PIDS && pos < len; i++)
		pos += (size_t)snprintf(buf + pos, len - pos, "%s%d",
					i ? " " : "", (int)pids[i]);
	if (n > SFD_NOTE_PIDS && pos < len)
		snprintf(buf + pos, len - pos, " and %zu more",
			 n - SFD_NOTE_PIDS);
}

/* One-time notices about VMs found without stats fds or out of reach. */
static void sfd_note_vms(struct sfd_priv *d)
{
	pid_t *none = xmalloc((d->nvms + 1) * sizeof(*none));
	pid_t *denied = xmalloc((d->nvms + 1) * sizeof(*denied));
	size_t nnone = 0, ndenied = 0;
	int err = -EPERM;
	char list[160];

	for (size_t i = 0; i < d->nvms; i++) {
		struct sfd_vm *vm = &d->vms[i];

		if (vm->noted || vm->nf || vm->dead ||
		    sfd_young_maybe(d, vm->pid))
			continue;
		if (sfd_denied_errno(vm->err)) {
			denied[ndenied++] = vm->pid;
			err = vm->err;
		} else if (!vm->nlinks) {
			none[nnone++] = vm->pid;
		} else {
			continue; /* sfd_file_open said why */
		}
		vm->noted = true;
	}
	if (nnone) {
		bool many = nnone > 1;

		sfd_note_pids(none, nnone, list, sizeof(list));
		sfd_note_add(d,
			     "%s %s %s no binary stats fds open (QEMU before 8.1 keeps none): debugfs fills %s in where the kernel lets it read, or QMP with --qmp SOCKET",
			     many ? "VMs" : "VM", list, many ? "keep" : "keeps",
			     many ? "them" : "it");
	}
	if (ndenied) {
		sfd_note_pids(denied, ndenied, list, sizeof(list));
		sfd_note_add(d, "cannot copy the stats fds of %s %s: %s: %s",
			     ndenied > 1 ? "VMs" : "VM", list, strerror(-err),
			     sfd_perm_hint);
	}
	if (d->ndenied && !d->denied_noted && !d->pid) {
		d->denied_noted = true;
		sfd_note_add(d,
			     "cannot read the fds of %zu processes (VMs among them are not shown): %s",
			     d->ndenied, sfd_perm_hint);
	}
	free(none);
	free(denied);
}

/* Whether the last scan found pid without a VM and with nfds fds. */
static bool sfd_known_same(const struct sfd_priv *d, pid_t pid, off_t nfds)
{
	size_t lo = 0, hi = d->nknown;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (d->known[mid].pid == pid)
			return d->known[mid].nfds == nfds;
		if (d->known[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Notes for the next scan that pid holds no VM (pids come in order). */
static void sfd_known_keep(struct sfd_priv *d, pid_t pid, off_t nfds)
{
	if (!nfds)
		return;
	if (d->nknown_next == d->capknown) {
		d->capknown = d->capknown ? d->capknown * 2 : 256;
		d->known = xrealloc(d->known, d->capknown * sizeof(*d->known));
		d->known_next = xrealloc(d->known_next,
					 d->capknown * sizeof(*d->known_next));
	}
	d->known_next[d->nknown_next++] = (struct sfd_known){ pid, nfds };
}

/*
 * Looks at one process: tracks it if it holds a VM fd, syncs its files.
 * Reading every fd link of every process is what a scan costs, so unless
 * full is set a process whose fd count (from one fstat) is what it was at
 * its last listing is taken to be unchanged: no VM still, or a VM with the
 * same stats fds. A process that creates a VM or opens a stats fd changes
 * its count; the full scans every SFD_FULL_SCAN_EVERY catch the rest
 * (a reused pid, an fd closed and another opened in between). 0, or
 * -errno when its fd directory could not be read (gone, or hidden).
 */
static int sfd_scan_pid(struct provider *p, pid_t pid, bool full)
{
	struct sfd_priv *d = p->priv;
	/* procfs gives a fd directory's size as its count of fds; another
	 * file system's (a test's proc root) does not */
	off_t nfds = d->fake_proc ? 0 : vm_proc_nfds(d->rootfd, pid);
	struct sfd_vm *vm = sfd_vm_find(d, pid);
	size_t n;
	bool is_vm;
	int rc;

	if (vm && vm->dead)
		return 0;
	/* A young VM's VMM is still opening fds, and may close one between
	 * two looks (QEMU and the test guest close a setup pipe after the
	 * last stats fd): its count could come back to what it was with a
	 * stats fd more. Its links are read every time; so are those of a
	 * process KVM just named that holds no VM fd yet (see
	 * sfd_young_scan). */
	if (vm ? sfd_young_maybe(d, pid) : sfd_young_has(d, pid))
		full = true;
	if (!full && nfds) {
		if (vm && vm->nfds == nfds) {
			vm->mark = true;
			return 0;
		}
		if (!vm && sfd_known_same(d, pid, nfds)) {
			sfd_known_keep(d, pid, nfds);
			return 0;
		}
	}
	rc = sfd_scan_fds(d, pid, &is_vm, &n);
	if (rc) {
		if (sfd_denied_errno(rc))
			d->ndenied++;
		/* unreadable now but tracked: keep what was copied */
		if (vm && sfd_denied_errno(rc))
			vm->mark = true;
		if (!vm && sfd_denied_errno(rc) && d->pid) {
			vm = sfd_vm_add(d, pid);
			if (vm) {
				vm->err = rc;
				vm->mark = true;
			}
		}
		return rc;
	}
	if (!is_vm) {
		sfd_known_keep(d, pid, nfds);
		return 0;
	}
	if (!vm) {
		vm = sfd_vm_add(d, pid);
		if (!vm)
			return -ESRCH;
	}
	vm->mark = true;
	vm->nfds = 0;
	vm->nlinks = n;
	if (vm->pidfd >= 0 && sfd_vm_sync(p, vm, n))
		vm->nfds = nfds;
	return 0;
}

/*
 * The pids to look at, sorted, but ours: just -p's; else the VM processes
 * KVM's debugfs directory names (no other process's fds are read); else,
 * when it cannot be read, every process under the proc root. Caller frees.
 */
static size_t sfd_scan_pids(struct sfd_priv *d, pid_t **out)
{
	size_t m = 0;
	int n = -1;

	if (d->pid) {
		*out = xmalloc(sizeof(**out));
		(*out)[0] = d->pid;
		return 1;
	}
	if (d->dbgfd >= 0 && d->names_ok)
		n = vm_debugfs_pids(d->dbgfd, d->rootfd, out);
	if (n < 0)
		n = vm_proc_pids(d->rootfd, out);
	for (int i = 0; i < n; i++)
		if ((*out)[i] != d->self)
			(*out)[m++] = (*out)[i];
	return m;
}

/*
 * Walks the proc root: new VM processes are tracked, their stats fds
 * copied; fds the VMMs closed are closed here too, and VMs that are no
 * longer VMs (or no longer there) are dropped.
 */
void sfd_scan(struct provider *p, uint64_t now)
{
	struct sfd_priv *d = p->priv;
	size_t n, nold = d->nvms;
	bool full = d->scans++ % SFD_FULL_SCAN_EVERY == 0;
	struct sfd_known *k;
	pid_t *pids;

	d->last_scan = now;
	d->ndenied = 0;
	d->nknown_next = 0;
	for (size_t i = 0; i < d->nvms; i++)
		d->vms[i].mark = false;
	n = sfd_scan_pids(d, &pids);
	for (size_t i = 0; i < n; i++) {
		/* sfd_vm_add may move d->vms; look up again for each pid */
		sfd_scan_pid(p, pids[i], full);
		if (d->nvms > nold && d->nvms > 1 &&
		    d->vms[d->nvms - 1].pid < d->vms[d->nvms - 2].pid) {
			qsort(d->vms, d->nvms, sizeof(*d->vms), sfd_vm_cmp);
		}
		nold = d->nvms;
	}
	free(pids);
	k = d->known;
	d->known = d->known_next;
	d->known_next = k;
	d->nknown = d->nknown_next;
	sfd_vms_sweep(d);
	sfd_watch_vms(d);
	sfd_note_vms(d);
}

/* Without an epoll set (no fd left for one): the VMs whose process
 * exited, by one poll over every pidfd. */
void sfd_reap(struct sfd_priv *d)
{
	if (!d->nvms)
		return;
	if (d->cappfd < d->nvms) {
		d->cappfd = d->nvms * 2;
		d->pfd = xrealloc(d->pfd, d->cappfd * sizeof(*d->pfd));
	}
	for (size_t i = 0; i < d->nvms; i++)
		d->pfd[i] = (struct pollfd){ .fd = d->vms[i].pidfd,
					     .events = POLLIN };
	if (poll(d->pfd, d->nvms, 0) <= 0)
		return;
	for (size_t i = 0; i < d->nvms; i++)
		if (d->pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
			sfd_vm_finish(&d->vms[i]);
}

/* Looks at one process now (a VM just created, or a young one again).
 * 0, or -errno when its fd directory could not be read. */
int sfd_scan_one(struct provider *p, pid_t pid)
{
	struct sfd_priv *d = p->priv;
	size_t nold = d->nvms, nknown = d->nknown_next;
	int rc;

	if (pid == d->self || (d->pid && pid != d->pid))
		return -ESRCH;
	rc = sfd_scan_pid(p, pid, false);
	/* the processes without a VM are the next scan's to note (it starts
	 * their list afresh): a young one looked at every tick adds none */
	d->nknown_next = nknown;
	if (d->nvms > nold && d->nvms > 1)
		qsort(d->vms, d->nvms, sizeof(*d->vms), sfd_vm_cmp);
	if (d->nvms > nold)
		d->all_watched = false; /* sfd_watch_vms at the next look */
	/* a VM seen for the first time between refreshes: not to be swept
	 * by a scan already under way */
	for (size_t i = 0; i < d->nvms; i++)
		if (d->vms[i].pid == pid)
			d->vms[i].mark = true;
	return rc;
}
