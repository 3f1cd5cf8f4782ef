// SPDX-License-Identifier: GPL-2.0-only
/*
 * The statsfd provider between refreshes (statsfd_int.h): one epoll set
 * the loop polls (wake_fd) holds each VM's pidfd, inotify on KVM's debugfs
 * directory and a timer; a VM created meanwhile is looked at as it
 * appears, then again (young) until its VMM has opened its stats fds.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "fs.h"
#include "options.h"
#include "provider.h"
#include "statsfd_int.h"
#include "util.h"
#include "vm.h"

/* Arms the timer for the young VMs' next look (or disarms it). */
static void sfd_young_arm(struct sfd_priv *d, uint64_t now)
{
	struct itimerspec its = { 0 };
	uint64_t every = SFD_YOUNG_EVERY_NS;

	if (d->tfd < 0)
		return;
	for (size_t i = 0; i < d->nyoung; i++)
		if (d->young[i].until > now &&
		    d->young[i].until - now >
			    SFD_YOUNG_FOR_NS - SFD_YOUNG_FAST_FOR_NS)
			every = SFD_YOUNG_FAST_NS;
	if (d->nyoung)
		its.it_value.tv_nsec = (long)every;
	timerfd_settime(d->tfd, 0, &its, NULL);
}

static void sfd_young_add(struct sfd_priv *d, pid_t pid, uint64_t now)
{
	for (size_t i = 0; i < d->nyoung; i++) {
		if (d->young[i].pid == pid) {
			d->young[i].until = now + SFD_YOUNG_FOR_NS;
			return;
		}
	}
	if (d->nyoung == d->capyoung) {
		d->capyoung = d->capyoung ? d->capyoung * 2 : 8;
		d->young = xrealloc(d->young, d->capyoung * sizeof(*d->young));
	}
	d->young[d->nyoung++] = (struct sfd_young){ pid,
						    now + SFD_YOUNG_FOR_NS };
}

/*
 * Looks at the young VMs again; forgets those old enough or gone. KVM
 * names a VM in debugfs while KVM_CREATE_VM runs, before the VM fd is in
 * its VMM's fd table: a process told of that way may hold no VM fd yet,
 * and is looked at again, as long as it is there, until it does (else a
 * VM made during the run waited for the next full scan, 30 s on).
 */
static void sfd_young_scan(struct provider *p, uint64_t now)
{
	struct sfd_priv *d = p->priv;
	bool found = false;
	size_t n = 0;

	for (size_t i = 0; i < d->nyoung; i++) {
		pid_t pid = d->young[i].pid;
		struct sfd_vm *vm;
		bool tracked, there;
		int rc;

		if (!pid) {
			sfd_scan(p, now);
			if (now < d->young[i].until)
				d->young[n++] = d->young[i];
			continue;
		}
		tracked = sfd_vm_find(d, pid) != NULL;
		rc = sfd_scan_one(p, pid);
		vm = sfd_vm_find(d, pid);
		there = vm ? !vm->dead : !rc;
		if (now < d->young[i].until && there)
			d->young[n++] = d->young[i];
		found |= !tracked && vm && !vm->dead;
	}
	d->nyoung = n;
	/* a VM found now: its vCPUs are told as they come */
	if (found)
		sfd_watch_vms(d);
}

/* Watches vm's debugfs directory NAME ("PID-FD") for its vCPUs. */
static void sfd_watch_one(struct sfd_priv *d, struct sfd_vm *vm,
			  const char *name)
{
	char path[PATH_MAX];
	int wd;

	if (vm->wd >= 0 || vm->dead)
		return;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", d->dbg_path, name) >=
	    sizeof(path))
		return;
	wd = inotify_add_watch(d->inofd, path, IN_CREATE | IN_ONLYDIR);
	if (wd >= 0)
		vm->wd = wd;
}

/* The VM a debugfs entry name is of, when it is tracked and unwatched. */
static struct sfd_vm *sfd_name_vm(struct sfd_priv *d, const char *name)
{
	struct sfd_vm *vm;
	pid_t pid;

	if (vm_debugfs_name(name, &pid))
		return NULL;
	vm = sfd_vm_find(d, pid);
	if (!vm) /* made by a thread of the VMM: its process's */
		vm = sfd_vm_find(d, vm_proc_tgid(d->rootfd, pid));
	return vm && vm->wd < 0 && !vm->dead ? vm : NULL;
}

/* Whether every live VM has a watch. */
static bool sfd_all_watched(const struct sfd_priv *d)
{
	for (size_t i = 0; i < d->nvms; i++)
		if (d->vms[i].wd < 0 && !d->vms[i].dead)
			return false;
	return true;
}

void sfd_watch_vms(struct sfd_priv *d)
{
	const struct fs_entry *e;
	struct fs_dir dir;

	d->all_watched = false;
	if (d->inofd < 0 || !d->names_ok || !d->dbg_path)
		return;
	if (sfd_all_watched(d)) {
		d->all_watched = true;
		return;
	}
	if (fs_dir_start(&dir, d->dbgfd))
		return;
	while ((e = fs_dir_next(&dir))) {
		struct sfd_vm *vm = sfd_name_vm(d, e->name);

		if (vm)
			sfd_watch_one(d, vm, e->name);
	}
	fs_dir_close(&dir);
	d->all_watched = sfd_all_watched(d);
}

void sfd_unwatch(struct sfd_priv *d, struct sfd_vm *vm)
{
	if (vm->wd >= 0 && d->inofd >= 0)
		inotify_rm_watch(d->inofd, vm->wd);
	vm->wd = -1;
}

/* An event in a VM's debugfs directory: a vCPU just created, whose stats
 * fd its VMM opens next; or the watch went (the directory did). */
static void sfd_vm_event(struct provider *p, const struct inotify_event *ev,
			 uint64_t now)
{
	struct sfd_priv *d = p->priv;
	struct sfd_vm *vm = NULL;

	for (size_t i = 0; i < d->nvms && !vm; i++)
		if (d->vms[i].wd == ev->wd)
			vm = &d->vms[i];
	if (!vm)
		return;
	if (ev->mask & IN_IGNORED) {
		vm->wd = -1;
		if (!vm->dead)
			d->all_watched = false;
		return;
	}
	if (ev->len && !strncmp(ev->name, "vcpu", 4)) {
		pid_t pid = vm->pid;

		sfd_scan_one(p, pid);
		sfd_young_add(d, pid, now);
	}
}

/* New entries in KVM's debugfs directory: VMs just created. */
static void sfd_inotify_drain(struct provider *p, uint64_t now)
{
	struct sfd_priv *d = p->priv;
	char buf[4096]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	struct sfd_vm *vm;
	ssize_t n;

	while ((n = read(d->inofd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off + (ssize_t)sizeof(*ev) <= n;
		     off += (ssize_t)sizeof(*ev) + ev->len) {
			pid_t pid;

			ev = (const void *)(buf + off);
			if (ev->mask & IN_Q_OVERFLOW)
				sfd_scan(p, now); /* events lost: look at all */
			if (ev->wd != d->dbgwd) {
				sfd_vm_event(p, ev, now);
				continue;
			}
			if (!ev->len || vm_debugfs_name(ev->name, &pid))
				continue;
			if (!d->names_ok) {
				/* which process it is cannot be told here:
				 * every one is looked at (young pid 0) */
				sfd_scan(p, now);
				sfd_young_add(d, 0, now);
				continue;
			}
			pid = vm_proc_tgid(d->rootfd, pid);
			if (pid == d->self || (d->pid && pid != d->pid))
				continue;
			sfd_scan_one(p, pid);
			sfd_young_add(d, pid, now);
			vm = sfd_vm_find(d, pid);
			if (vm)
				sfd_watch_one(d, vm, ev->name);
			d->all_watched = d->all_watched && vm && vm->wd >= 0;
		}
	}
}

/*
 * Whatever happened since the last look, without blocking: VMs whose
 * process exited are read a last time and their copies closed, VMs just
 * created have their stats fds copied, young VMs are looked at again.
 */
void sfd_wake(struct provider *p)
{
	struct sfd_priv *d = p->priv;
	struct epoll_event ev[32];
	bool timer = false;
	uint64_t now;
	int n;

	if (d->epfd < 0) {
		sfd_reap(d);
		return;
	}
	while ((n = epoll_wait(d->epfd, ev, ARRAY_SIZE(ev), 0)) > 0) {
		now = util_now_ns();
		for (int i = 0; i < n; i++) {
			uint64_t tag = ev[i].data.u64;
			struct sfd_vm *vm;

			if (tag == SFD_EV_INOTIFY) {
				sfd_inotify_drain(p, now);
			} else if (tag == SFD_EV_TIMER) {
				uint64_t ticks;

				if (read(d->tfd, &ticks, sizeof(ticks)) < 0)
					ticks = 0;
				timer = true;
			} else {
				vm = sfd_vm_find(d, (pid_t)(tag & 0xffffffffu));
				if (vm && !vm->dead)
					sfd_vm_finish(vm);
			}
		}
		if (n < (int)ARRAY_SIZE(ev))
			break;
	}
	if (timer)
		sfd_young_scan(p, util_now_ns());
	if (timer || d->nyoung)
		sfd_young_arm(d, util_now_ns());
}

int sfd_wake_fd(struct provider *p)
{
	const struct sfd_priv *d = p->priv;

	return d ? d->epfd : -1;
}

/*
 * KVM's debugfs directory, when it is of the same tree as the proc root
 * (both the system's, or both injected by a test): its "PID-FD" entries
 * name the VMs to scan, and inotify on it tells of each VM as it is
 * created. Then the epoll set the loop polls: inotify, the timer for
 * young VMs and, as they come, each VM's pidfd.
 */
void sfd_watch_open(struct sfd_priv *d, const struct provider_cfg *opts)
{
	const char *dbg = opts->debugfs_root ? opts->debugfs_root :
					       DEBUGFS_KVM_DEFAULT;
	bool fake_dbg = strcmp(dbg, DEBUGFS_KVM_DEFAULT) != 0;
	struct epoll_event ev = { .events = EPOLLIN };

	/* in a pid namespace of its own, debugfs names pids we cannot see
	 * by those numbers: /proc is scanned instead */
	d->names_ok = vm_pidns_is_init(d->rootfd);
	if (fake_dbg == d->fake_proc)
		d->dbgfd = fs_open_dir(AT_FDCWD, dbg);
	if (d->dbgfd < 0)
		d->dbgfd = -1;
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd < 0)
		return;
	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	ev.data.u64 = SFD_EV_TIMER;
	if (d->tfd >= 0 && epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->tfd, &ev)) {
		close(d->tfd);
		d->tfd = -1;
	}
	if (d->dbgfd < 0)
		return;
	d->inofd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (d->inofd < 0)
		return;
	ev.data.u64 = SFD_EV_INOTIFY;
	d->dbgwd = inotify_add_watch(d->inofd, dbg, IN_CREATE | IN_MOVED_TO);
	if (d->dbgwd < 0 || epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->inofd, &ev)) {
		close(d->inofd);
		d->inofd = -1;
		return;
	}
	d->dbg_path = xstrdup(dbg);
}
