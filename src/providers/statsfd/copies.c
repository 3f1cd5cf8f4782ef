// SPDX-License-Identifier: GPL-2.0-only
/*
 * The statsfd provider's VMs (statsfd_int.h): each VM process tracked by
 * its pidfd, the stats fds copied from it with pidfd_getfd and kept in
 * line with what its VMM holds, each read a last time when the VMM closes
 * it or exits, so the kernel can free the VM.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "errmsg.h"
#include "provider.h"
#include "statsfd_format.h"
#include "statsfd_int.h"
#include "util.h"
#include "vm.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

static void sfd_file_close(struct sfd_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	f->sc = NULL;
	free(f->base);
	f->base = NULL;
	free(f->last);
	f->last = NULL;
}

/* Closes everything copied from a VM: its kernel memory can go. */
void sfd_vm_close(struct sfd_vm *vm)
{
	for (size_t i = 0; i < vm->nf; i++)
		sfd_file_close(&vm->f[i]);
	free(vm->f);
	vm->f = NULL;
	vm->nf = vm->capf = 0;
	if (vm->pidfd >= 0)
		close(vm->pidfd);
	vm->pidfd = -1;
}

/*
 * The VM process closed its stats fd, or exited: the copy still reads (it
 * holds the kernel's VM), so the data block is read one last time and the
 * copy closed at once. The file keeps counting its last values.
 */
static void sfd_file_retire(struct sfd_file *f)
{
	const struct statsfd_schema *s;

	if (f->fd < 0 || !f->sc)
		return;
	s = f->sc->s;
	free(f->last);
	f->last = xmalloc(s->data_len ? s->data_len : 1);
	if (statsfd_data_read(f->fd, s, f->last)) {
		free(f->last);
		f->last = NULL;
	}
	close(f->fd);
	f->fd = -1;
}

/*
 * vm's process exited, or holds no VM any more: each file is read one
 * last time and its copy closed (the kernel can free the VM). The next
 * refresh counts those last values, then drops the VM.
 */
void sfd_vm_finish(struct sfd_vm *vm)
{
	for (size_t i = 0; i < vm->nf; i++)
		sfd_file_retire(&vm->f[i]);
	if (vm->pidfd >= 0)
		close(vm->pidfd);
	vm->pidfd = -1;
	vm->dead = true;
}

/*
 * Whether a copied fd is the stats file the link named: the VM process
 * may have closed and reused the number meanwhile. Under an injected proc
 * root (tests without KVM), the copy is a stand-in file whose own link
 * names no KVM file: the link there is read again instead.
 */
static bool sfd_copy_is(const struct sfd_priv *d, pid_t pid, int fd,
			const struct sfd_link *want)
{
	char path[48], l[64];
	ssize_t n;
	int vcpu = -2;

	if (d->fake_proc) {
		snprintf(path, sizeof(path), "%d/fd/%d", (int)pid, want->srcfd);
		n = readlinkat(d->rootfd, path, l, sizeof(l));
	} else {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, l, sizeof(l));
	}
	if (n <= 0 || n == (ssize_t)sizeof(l))
		return false;
	return vm_fd_kind(l, (size_t)n, &vcpu) == VM_FD_STATS &&
	       vcpu == want->vcpu;
}

/* Once: the fd limit (raised at start as far as the host lets it) is
 * below what the VMs' stats fds need. */
static void sfd_note_emfile(struct sfd_priv *d)
{
	struct rlimit rl;
	size_t held = 0;

	if (d->emfile_noted)
		return;
	d->emfile_noted = true;
	for (size_t i = 0; i < d->nvms; i++)
		held += d->vms[i].nf;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY) {
		sfd_note_add(d,
			     "too many open files: some VMs' stats fds are left out (%zu held); raise the limit (ulimit -n)",
			     held);
		return;
	}
	sfd_note_add(d,
		     "too many open files: some VMs' stats fds are left out (%zu held, the limit is %llu file descriptors); raise it (ulimit -n, or the hard limit as root)",
		     held, (unsigned long long)rl.rlim_cur);
}

/*
 * Copies one stats fd of vm and reads its layout. 0 with *f filled, or
 * -errno (the VM's err is set for permission errors).
 */
static int sfd_file_open(struct provider *p, struct sfd_vm *vm,
			 const struct sfd_link *lk, struct sfd_file *f)
{
	struct sfd_priv *d = p->priv;
	struct statsfd_schema *s;
	struct errmsg err;
	int fd, rc;

	fd = (int)syscall(SYS_pidfd_getfd, vm->pidfd, lk->srcfd, 0);
	if (fd < 0) {
		rc = -errno;
		if (sfd_denied_errno(rc))
			vm->err = rc;
		if (rc == -EMFILE || rc == -ENFILE)
			sfd_note_emfile(d);
		return rc;
	}
	if (!sfd_copy_is(d, vm->pid, fd, lk)) {
		close(fd);
		return -ESTALE;
	}
	rc = statsfd_schema_read(fd, &s, &err);
	if (rc) {
		sfd_note_add(d, "VM %d: stats fd %d left out: %s", (int)vm->pid,
			     lk->srcfd,
			     rc == -EINVAL ? err.text : strerror(-rc));
		close(fd);
		return rc;
	}
	*f = (struct sfd_file){
		.fd = fd, .srcfd = lk->srcfd, .vcpu = lk->vcpu, .mark = true
	};
	f->sc = sfd_schema_get(p, s);
	/*
	 * A file of a VM that was already running when kvmstat started
	 * counts from when it was found: its past did not happen during the
	 * run (found after the first refresh: its VMM opened the fd lazily,
	 * or kvmstat could not copy it before). So does one found at the
	 * start, from the first refresh (sfd_vm_read takes its base again
	 * then), which the stats count from zero anyway: a vCPU breakdown
	 * turned on later (the monitor's guests view) then reports what each
	 * vCPU counted during the run. With -i it counts everything.
	 */
	if (vm->old && !d->include_past && f->sc->s->data_len) {
		f->base = xmalloc(f->sc->s->data_len);
		if (statsfd_data_read(fd, f->sc->s, f->base)) {
			free(f->base);
			f->base = NULL;
		}
	}
	return 0;
}

static int sfd_file_cmp(const void *a, const void *b)
{
	const struct sfd_file *x = a, *y = b;

	if (x->vcpu != y->vcpu)
		return x->vcpu < y->vcpu ? -1 : 1;
	return (x->srcfd > y->srcfd) - (x->srcfd < y->srcfd);
}

/* Threads of the vCPUs whose tid is not known yet. */
static void sfd_vm_tids(struct sfd_priv *d, struct sfd_vm *vm)
{
	struct vm_info info = { .pid = vm->pid };
	bool need = false;

	for (size_t i = 0; i < vm->nf; i++)
		need |= vm->f[i].vcpu >= 0 && !vm->f[i].tid;
	if (!need || vm_load_vcpus(d->proc_root, &info))
		return;
	for (size_t i = 0; i < vm->nf; i++) {
		for (size_t j = 0; j < info.nvcpus && !vm->f[i].tid; j++)
			if (info.vcpus[j].index == vm->f[i].vcpu)
				vm->f[i].tid = info.vcpus[j].tid;
	}
	vm_info_clear(&info);
}

/* A file of vm for vcpu whose copy was retired (its VMM closed the fd),
 * or NULL. */
static struct sfd_file *sfd_vm_retired(struct sfd_vm *vm, int vcpu)
{
	for (size_t j = 0; j < vm->nf; j++)
		if (vm->f[j].vcpu == vcpu && vm->f[j].fd < 0)
			return &vm->f[j];
	return NULL;
}

/*
 * Brings vm's files in line with the n stats links just found: new ones
 * are copied; one the VMM closed is read a last time and keeps those
 * values (a VMM tearing down closes its vCPUs' stats fds before it exits)
 * until the same vCPU's stats come back under another fd, which then
 * count on from where the kernel is. Whether every link is now held.
 */
bool sfd_vm_sync(struct provider *p, struct sfd_vm *vm, size_t n)
{
	struct sfd_priv *d = p->priv;
	size_t live = 0, kept = 0;
	bool added = false;

	for (size_t i = 0; i < vm->nf; i++)
		vm->f[i].mark = false;
	vm->err = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sfd_link *lk = &d->links[i];
		struct sfd_file *f = NULL, nf;

		for (size_t j = 0; j < vm->nf && !f; j++)
			if (vm->f[j].srcfd == lk->srcfd &&
			    vm->f[j].vcpu == lk->vcpu && vm->f[j].fd >= 0)
				f = &vm->f[j];
		if (f) {
			f->mark = true;
			continue;
		}
		if (sfd_file_open(p, vm, lk, &nf))
			continue;
		f = sfd_vm_retired(vm, lk->vcpu);
		if (f) {
			/* the same stats, counted from where they were */
			free(nf.base);
			nf.base = f->base;
			f->base = NULL;
			sfd_file_close(f);
		} else {
			if (vm->nf == vm->capf) {
				vm->capf = vm->capf ? vm->capf * 2 : 8;
				vm->f = xrealloc(vm->f,
						 vm->capf * sizeof(*vm->f));
			}
			f = &vm->f[vm->nf++];
		}
		*f = nf;
		added = true;
	}
	for (size_t i = 0; i < vm->nf; i++) {
		if (!vm->f[i].mark)
			sfd_file_retire(&vm->f[i]);
		if (vm->f[i].fd < 0 && !vm->f[i].last) {
			/* not even a last reading: its counts go */
			sfd_file_close(&vm->f[i]);
			d->vanished = d->rebase_next = true;
			continue;
		}
		live += vm->f[i].fd >= 0;
		vm->f[kept++] = vm->f[i];
	}
	vm->nf = kept;
	if (added) {
		qsort(vm->f, vm->nf, sizeof(*vm->f), sfd_file_cmp);
		sfd_vm_tids(d, vm);
	}
	return live == n;
}

/* Starts tracking VM process pid; NULL when it went meanwhile. */
struct sfd_vm *sfd_vm_add(struct sfd_priv *d, pid_t pid)
{
	struct sfd_vm *vm;
	int pidfd, err;

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	err = pidfd < 0 ? -errno : 0;
	if (err == -ESRCH)
		return NULL;
	if (d->nvms == d->capvms) {
		d->capvms = d->capvms ? d->capvms * 2 : 16;
		d->vms = xrealloc(d->vms, d->capvms * sizeof(*d->vms));
	}
	vm = &d->vms[d->nvms++];
	*vm = (struct sfd_vm){
		.pid = pid, .pidfd = pidfd, .err = err, .wd = -1
	};
	if (pidfd >= 0 && d->epfd >= 0) {
		struct epoll_event ev = {
			.events = EPOLLIN,
			.data.u64 = SFD_EV_PID | (uint64_t)pid,
		};

		epoll_ctl(d->epfd, EPOLL_CTL_ADD, pidfd, &ev);
	}
	vm->old = d->self_start &&
		  vm_proc_start_ticks(d->rootfd, pid) < d->self_start;
	return vm;
}

struct sfd_vm *sfd_vm_find(struct sfd_priv *d, pid_t pid)
{
	size_t lo = 0, hi = d->nvms;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (d->vms[mid].pid == pid)
			return &d->vms[mid];
		if (d->vms[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int sfd_vm_cmp(const void *a, const void *b)
{
	const struct sfd_vm *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The VMs the scan did not find: read a last time (dropped after the
 * next refresh), or forgotten when nothing was copied. */
void sfd_vms_sweep(struct sfd_priv *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nvms; i++) {
		if (d->vms[i].mark || d->vms[i].dead) {
			d->vms[n++] = d->vms[i];
			continue;
		}
		if (d->vms[i].nf) {
			/* gone, or holds no VM: read once more, then
			 * dropped after the next refresh counted it */
			sfd_vm_finish(&d->vms[i]);
			d->vms[n++] = d->vms[i];
			continue;
		}
		sfd_unwatch(d, &d->vms[i]);
		sfd_vm_close(&d->vms[i]);
	}
	d->nvms = n;
}
