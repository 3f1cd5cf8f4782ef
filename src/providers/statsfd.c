// SPDX-License-Identifier: GPL-2.0-only
/*
 * The statsfd provider: KVM's binary statistics (KVM_GET_STATS_FD) of each
 * VM, read from the stats fds its VMM keeps open. KVM refuses VM and vCPU
 * ioctls from any process but the VM's owner, so kvmstat cannot make stats
 * fds of its own: it finds the "anon_inode:kvm-vm-stats" and
 * "anon_inode:kvm-vcpu-stats:N" links in /proc/PID/fd of VM processes
 * (those holding an "anon_inode:kvm-vm" fd), copies them with pidfd_getfd,
 * reads each file's header and descriptors once (files with the same
 * layout share one parsed schema) and its data block every refresh: one
 * pread per fd.
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
 * for 2 s for the fds its VMM opens after creating it, so a VM that lives
 * less than one refresh is counted whole. The full scan (new VMs that
 * inotify missed, stats fds opened or closed later) runs at most every
 * STATSFD_RESCAN_NS (2 s), and even then only processes whose fd count
 * changed are listed again (see scan_pid).
 *
 * Samples: each stat per vCPU (pid, N), per VM (pid, SAMPLE_ALL_VCPUS): the
 * sum over its vCPUs plus its VM-scope stats, which have no vCPU breakdown,
 * and for pid 0 the sum over the VMs (or the -p VM). Peaks aggregate as
 * maxima. A histogram is a cumulative parent field with a child per bucket
 * named "NAME(i)", so the default filter hides the buckets.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kvm.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "errmsg.h"
#include "fs.h"
#include "hist.h"
#include "options.h"
#include "provider.h"
#include "reading.h"
#include "statsfd_format.h"
#include "util.h"
#include "vm.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef KVM_CAP_BINARY_STATS_FD
#define KVM_CAP_BINARY_STATS_FD 203
#endif

/* How often /proc is walked again for new VMs and stats fds. */
#define STATSFD_RESCAN_NS 2000000000ull
/* Every how many scans the fd counts are not trusted (see scan_pid). */
#define STATSFD_FULL_SCAN_EVERY 5
/* Pids a notice names before it says "and N more". */
#define STATSFD_NOTE_PIDS 8
/* A VM just created is looked at this often for the stats fds its VMM
 * opens after creating it, for this long: every millisecond at first (a
 * VM may live a few), then every 10 ms. */
#define STATSFD_YOUNG_FAST_NS 1000000ull
#define STATSFD_YOUNG_FAST_FOR_NS 200000000ull
#define STATSFD_YOUNG_EVERY_NS 10000000ull
#define STATSFD_YOUNG_FOR_NS 2000000000ull
/* epoll tags: a VM's pidfd carries its pid above these */
#define STATSFD_EV_INOTIFY 1ull
#define STATSFD_EV_TIMER 2ull
#define STATSFD_EV_PID (1ull << 32)

/* A field this provider pushes. */
struct sfd_local {
	int field;	      /* id in the field table */
	enum field_type type; /* how it aggregates: peaks by maximum */
};

/* A parsed layout and where its values go; shared by files alike and
 * kept while the provider lives (a kernel has two: VM and vCPU). */
struct sfd_schema {
	struct statsfd_schema *s;
	int *first; /* per descriptor: index in items, -1 unused */
	int *items; /* per value item: local index */
};

/* One stats fd copied from a VM process. */
struct sfd_file {
	int fd;	   /* our copy */
	int srcfd; /* its number in the VM process */
	int vcpu;  /* vCPU index, or -1 for the VM's own stats */
	pid_t tid; /* the vCPU's thread, 0 when unknown */
	struct sfd_schema *sc;
	unsigned char *base; /* data block at discovery, subtracted from
				 * cumulative values; NULL: counted from 0 */
	bool mark;	     /* seen by the scan running now */
	unsigned char *last; /* its process closed it or exited: the data
				 * block read last, once the copy was closed
				 * (fd -1) */
};

/* One VM process. */
struct sfd_vm {
	pid_t pid;
	int pidfd;	    /* polled for its exit */
	bool old;	    /* its process started before kvmstat */
	bool noted;	    /* what it lacks was told once */
	bool mark;	    /* seen by the scan running now */
	bool dead;	    /* its process exited: read for the last time
			     * (files hold their last data), then dropped */
	int err;	    /* copying its fds failed: -errno, else 0 */
	off_t nfds;	    /* its open fds when all its stats fds were
				 * last held, 0: list them again */
	size_t nlinks;	    /* stats fds it had at its last listing */
	struct sfd_file *f; /* sorted by vcpu, VM-scope (-1) first */
	size_t nf, capf;
};

/* A process that held no VM fd when its fds were last listed. */
struct sfd_known {
	pid_t pid;
	off_t nfds; /* its open fds then */
};

/* A stats link found in a process's fd directory. */
struct sfd_link {
	int srcfd;
	int vcpu; /* -1: the VM's stats */
};

/* A VM created moments ago, looked at again until its stats fds are
 * open (its VMM opens them after creating the VM). */
struct sfd_young {
	pid_t pid;
	uint64_t until; /* monotonic ns */
};

struct statsfd_priv {
	char *proc_root;
	int rootfd;
	/* KVM's debugfs directory, whose "PID-FD" entries name the VMs
	 * (-1: not readable, or not of the same tree as proc_root) */
	int dbgfd;
	/* its names give pids as the proc root numbers them (not in a pid
	 * namespace of our own): else they only say that a VM came */
	bool names_ok;
	int epfd;  /* pidfds, inotify and the timer: the loop polls it */
	int inofd; /* inotify on dbgfd's directory, or -1 */
	int tfd;   /* timerfd for young VMs, or -1 */
	struct sfd_young *young;
	size_t nyoung, capyoung;
	/* per local index: what exited VMs counted (cumulative fields) */
	struct reading *retired;
	bool rebase_next; /* a VM went without its last reading */
	pid_t pid;	  /* -p, or 0 */
	pid_t self;
	bool include_past;
	unsigned long long self_start; /* our start, ticks after boot */
	struct sfd_vm *vms;	       /* sorted by pid */
	size_t nvms, capvms;
	struct sfd_schema **schemas;
	size_t nschemas;
	struct sfd_local *locals;
	size_t nlocals, caplocals;
	int *local_of; /* field id -> local index or -1 */
	size_t nlocal_of;
	/* per local index: the sum over VMs, over one VM, over one vCPU */
	struct reading *val, *vmval, *vcval;
	unsigned char *data; /* one data block */
	size_t capdata;
	struct pollfd *pfd;
	size_t cappfd;
	struct sfd_link *links;
	size_t caplinks;
	/* processes without a VM, by pid: the last scan's and this one's */
	struct sfd_known *known, *known_next;
	size_t nknown, nknown_next, capknown;
	unsigned int scans;  /* scans so far */
	uint64_t last_scan;  /* monotonic ns */
	unsigned long reads; /* completed refreshes */
	bool vanished;	     /* a VM went without its last reading */
	bool fake_proc;	     /* proc_root is not /proc (tests) */
	bool emfile_noted, denied_noted, gone_noted;
	size_t ndenied;	    /* processes whose fds are hidden */
	struct errmsg note; /* notices gathered in this call */
};

/* Appends one notice to d->note ("; " between them). */
__attribute__((format(printf, 2, 3))) static void
note_add(struct statsfd_priv *d, const char *fmt, ...)
{
	va_list ap;

	if (errmsg_isset(&d->note))
		errmsg_add(&d->note, "; ");
	va_start(ap, fmt);
	errmsg_vadd(&d->note, fmt, ap);
	va_end(ap);
}

/* Hands the gathered notices to main, after any not shown yet. */
static void note_flush(struct provider *p)
{
	struct statsfd_priv *d = p->priv;

	if (!errmsg_isset(&d->note))
		return;
	if (p->notice && errmsg_isset(&p->msg))
		errmsg_add(&p->msg, "; %s", d->note.text);
	else
		provider_msg(p, true, "%s", d->note.text);
	errmsg_clear(&d->note);
}

static bool denied_errno(int err)
{
	return err == -EPERM || err == -EACCES;
}

/* The fix for a permission error on a VM process's fds. */
static const char perm_hint[] =
	"kvmstat needs CAP_SYS_PTRACE over the VM process (root, and ptrace access under Yama and LSM rules) and read access to /proc/PID/fd";

/* Appends a stats link to d->links, which holds *n. */
static void link_add(struct statsfd_priv *d, size_t *n, int srcfd, int vcpu)
{
	if (*n == d->caplinks) {
		d->caplinks = d->caplinks ? d->caplinks * 2 : 64;
		d->links = xrealloc(d->links, d->caplinks * sizeof(*d->links));
	}
	d->links[(*n)++] = (struct sfd_link){ srcfd, vcpu };
}

/* What one process's fd walk found (vm_proc_fds). */
struct sfd_walk {
	struct statsfd_priv *d;
	bool is_vm; /* it holds a VM fd */
	size_t n;   /* stats links in d->links */
};

static int scan_fd(int fd, enum vm_fd_kind kind, int vcpu, void *ctx)
{
	struct sfd_walk *w = ctx;

	if (kind == VM_FD_VM)
		w->is_vm = true;
	else if (kind == VM_FD_STATS)
		link_add(w->d, &w->n, fd, vcpu);
	return 0;
}

/*
 * Reads one process's fd directory: whether it holds a VM fd (*is_vm), and
 * its stats links into d->links (*n of them). 0 or -errno when the
 * directory cannot be opened (gone, or not ours to read).
 */
static int scan_fds(struct statsfd_priv *d, pid_t pid, bool *is_vm, size_t *n)
{
	struct sfd_walk w = { .d = d };
	int rc = vm_proc_fds(d->rootfd, pid, scan_fd, &w);

	*is_vm = w.is_vm;
	*n = w.n;
	return rc;
}

/* The local index of a field, added when new. */
static int local_add(struct statsfd_priv *d, int field, enum field_type type)
{
	/* new entries -1 (every byte 0xff): no local index yet */
	d->local_of = xgrow_index(d->local_of, &d->nlocal_of, (size_t)field,
				  sizeof(*d->local_of), 0xff);
	if (d->local_of[field] >= 0)
		return d->local_of[field];
	if (d->nlocals == d->caplocals) {
		d->caplocals = d->caplocals ? d->caplocals * 2 : 128;
		d->locals = xrealloc(d->locals,
				     d->caplocals * sizeof(*d->locals));
		d->val = xrealloc(d->val, d->caplocals * sizeof(*d->val));
		d->vmval = xrealloc(d->vmval, d->caplocals * sizeof(*d->vmval));
		d->vcval = xrealloc(d->vcval, d->caplocals * sizeof(*d->vcval));
		d->retired = xrealloc(d->retired,
				      d->caplocals * sizeof(*d->retired));
	}
	d->retired[d->nlocals] = (struct reading){ 0 };
	d->locals[d->nlocals] = (struct sfd_local){ field, type };
	d->local_of[field] = (int)d->nlocals;
	return (int)d->nlocals++;
}

/* Sets a field's unit from its descriptor, and the flag of KVM's count of
 * every exit. */
static void field_units(struct field_info *f, const struct statsfd_desc *dsc)
{
	f->unit = dsc->unit;
	f->exponent = dsc->exponent;
	f->base = dsc->base;
	if (!strcmp(dsc->name, FIELD_KVM_EXITS))
		f->flags |= FIELD_EXITS;
}

/* Whether this provider counts the stat or, for a histogram, one bucket:
 * the filter keeps it and no other provider owns it. */
static bool desc_wanted(const struct provider *p, const struct statsfd_desc *dsc)
{
	char name[STATSFD_NAME_SIZE_MAX + 16];

	if (provider_wants(p, dsc->name))
		return true;
	if (dsc->hist == HIST_NONE)
		return false;
	for (unsigned int k = 0; k < dsc->size; k++) {
		snprintf(name, sizeof(name), "%s(%u)", dsc->name, k);
		if (provider_wants(p, name))
			return true;
	}
	return false;
}

/* Interns a histogram's parent and buckets; items[k] gets bucket k's local
 * index. */
static void bind_hist(struct provider *p, const struct statsfd_desc *dsc,
		      int *items)
{
	struct statsfd_priv *d = p->priv;
	char name[STATSFD_NAME_SIZE_MAX + 16];
	struct field_info *f;
	int parent, id;

	parent = field_table_intern(p->fields, dsc->name, -1, FIELD_CUMULATIVE,
				    "statsfd");
	f = field_table_info(p->fields, parent);
	field_units(f, dsc);
	f->hist = dsc->hist;
	for (unsigned int k = 0; k < dsc->size; k++) {
		snprintf(name, sizeof(name), "%s(%u)", dsc->name, k);
		id = field_table_intern(p->fields, name, parent,
					FIELD_CUMULATIVE, "statsfd");
		f = field_table_info(p->fields, id);
		field_units(f, dsc);
		f->bucket = (int)k;
		hist_bucket_range(dsc->hist, dsc->bucket_size, k, dsc->size,
				  &f->bucket_lo, &f->bucket_hi);
		items[k] = local_add(d, id, FIELD_CUMULATIVE);
	}
}

/* Interns the fields of a new schema's wanted stats. */
static struct sfd_schema *schema_bind(struct provider *p,
				      struct statsfd_schema *s)
{
	struct statsfd_priv *d = p->priv;
	struct sfd_schema *sc = xcalloc(1, sizeof(*sc));
	size_t nitems = 0;

	sc->s = s;
	sc->first = xmalloc((s->num_desc ? s->num_desc : 1) *
			    sizeof(*sc->first));
	for (uint32_t i = 0; i < s->num_desc; i++) {
		const struct statsfd_desc *dsc = &s->desc[i];

		sc->first[i] = -1;
		if (dsc->skip != STATSFD_USE || !desc_wanted(p, dsc))
			continue;
		sc->first[i] = (int)nitems;
		nitems += dsc->size;
	}
	sc->items = xmalloc((nitems ? nitems : 1) * sizeof(*sc->items));
	for (uint32_t i = 0; i < s->num_desc; i++) {
		const struct statsfd_desc *dsc = &s->desc[i];
		int id;

		if (sc->first[i] < 0)
			continue;
		if (dsc->hist != HIST_NONE) {
			bind_hist(p, dsc, sc->items + sc->first[i]);
			continue;
		}
		id = field_table_intern(p->fields, dsc->name, -1, dsc->type,
					"statsfd");
		field_units(field_table_info(p->fields, id), dsc);
		sc->items[sc->first[i]] = local_add(d, id, dsc->type);
	}
	d->schemas = xrealloc(d->schemas,
			      (d->nschemas + 1) * sizeof(*d->schemas));
	d->schemas[d->nschemas++] = sc;
	return sc;
}

/* The shared schema for a file just parsed (s is consumed). */
static struct sfd_schema *schema_get(struct provider *p,
				     struct statsfd_schema *s)
{
	struct statsfd_priv *d = p->priv;

	for (size_t i = 0; i < d->nschemas; i++) {
		if (statsfd_schema_equal(d->schemas[i]->s, s)) {
			statsfd_schema_free(s);
			return d->schemas[i];
		}
	}
	return schema_bind(p, s);
}

static void schema_free(struct sfd_schema *sc)
{
	statsfd_schema_free(sc->s);
	free(sc->first);
	free(sc->items);
	free(sc);
}

static void file_close(struct sfd_file *f)
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
static void vm_close(struct sfd_vm *vm)
{
	for (size_t i = 0; i < vm->nf; i++)
		file_close(&vm->f[i]);
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
static void file_retire(struct sfd_file *f)
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
static void vm_finish(struct sfd_vm *vm)
{
	for (size_t i = 0; i < vm->nf; i++)
		file_retire(&vm->f[i]);
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
static bool copy_is(const struct statsfd_priv *d, pid_t pid, int fd,
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

static void note_emfile(struct statsfd_priv *d)
{
	if (d->emfile_noted)
		return;
	d->emfile_noted = true;
	note_add(d,
		 "too many open files: some VMs' stats fds are left out; raise the limit (ulimit -n)");
}

/*
 * Copies one stats fd of vm and reads its layout. 0 with *f filled, or
 * -errno (the VM's err is set for permission errors).
 */
static int file_open(struct provider *p, struct sfd_vm *vm,
		     const struct sfd_link *lk, struct sfd_file *f)
{
	struct statsfd_priv *d = p->priv;
	struct statsfd_schema *s;
	struct errmsg err;
	int fd, rc;

	fd = (int)syscall(SYS_pidfd_getfd, vm->pidfd, lk->srcfd, 0);
	if (fd < 0) {
		rc = -errno;
		if (denied_errno(rc))
			vm->err = rc;
		if (rc == -EMFILE || rc == -ENFILE)
			note_emfile(d);
		return rc;
	}
	if (!copy_is(d, vm->pid, fd, lk)) {
		close(fd);
		return -ESTALE;
	}
	rc = statsfd_schema_read(fd, &s, &err);
	if (rc) {
		note_add(d, "VM %d: stats fd %d left out: %s", (int)vm->pid,
			 lk->srcfd, rc == -EINVAL ? err.text : strerror(-rc));
		close(fd);
		return rc;
	}
	*f = (struct sfd_file){
		.fd = fd, .srcfd = lk->srcfd, .vcpu = lk->vcpu, .mark = true
	};
	f->sc = schema_get(p, s);
	/*
	 * A file found after the first refresh in a VM that was already
	 * running when kvmstat started (its VMM opened the fd lazily, or
	 * kvmstat could not copy it before) counts from now: its past did
	 * not happen during the run. With -i it counts everything.
	 */
	if (d->reads && vm->old && !d->include_past && f->sc->s->data_len) {
		f->base = xmalloc(f->sc->s->data_len);
		if (statsfd_data_read(fd, f->sc->s, f->base)) {
			free(f->base);
			f->base = NULL;
		}
	}
	return 0;
}

static int file_cmp(const void *a, const void *b)
{
	const struct sfd_file *x = a, *y = b;

	if (x->vcpu != y->vcpu)
		return x->vcpu < y->vcpu ? -1 : 1;
	return (x->srcfd > y->srcfd) - (x->srcfd < y->srcfd);
}

/* Threads of the vCPUs whose tid is not known yet. */
static void vm_tids(struct statsfd_priv *d, struct sfd_vm *vm)
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
static struct sfd_file *vm_retired(struct sfd_vm *vm, int vcpu)
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
static bool vm_sync(struct provider *p, struct sfd_vm *vm, size_t n)
{
	struct statsfd_priv *d = p->priv;
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
		if (file_open(p, vm, lk, &nf))
			continue;
		f = vm_retired(vm, lk->vcpu);
		if (f) {
			/* the same stats, counted from where they were */
			free(nf.base);
			nf.base = f->base;
			f->base = NULL;
			file_close(f);
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
			file_retire(&vm->f[i]);
		if (vm->f[i].fd < 0 && !vm->f[i].last) {
			/* not even a last reading: its counts go */
			file_close(&vm->f[i]);
			d->vanished = d->rebase_next = true;
			continue;
		}
		live += vm->f[i].fd >= 0;
		vm->f[kept++] = vm->f[i];
	}
	vm->nf = kept;
	if (added) {
		qsort(vm->f, vm->nf, sizeof(*vm->f), file_cmp);
		vm_tids(d, vm);
	}
	return live == n;
}

/* Starts tracking VM process pid; NULL when it went meanwhile. */
static struct sfd_vm *vm_add(struct statsfd_priv *d, pid_t pid)
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
	*vm = (struct sfd_vm){ .pid = pid, .pidfd = pidfd, .err = err };
	if (pidfd >= 0 && d->epfd >= 0) {
		struct epoll_event ev = {
			.events = EPOLLIN,
			.data.u64 = STATSFD_EV_PID | (uint64_t)pid,
		};

		epoll_ctl(d->epfd, EPOLL_CTL_ADD, pidfd, &ev);
	}
	vm->old = d->self_start &&
		  vm_proc_start_ticks(d->rootfd, pid) < d->self_start;
	return vm;
}

static struct sfd_vm *vm_find(struct statsfd_priv *d, pid_t pid)
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

static int vm_cmp(const void *a, const void *b)
{
	const struct sfd_vm *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The VMs the scan did not find: read a last time (dropped after the
 * next refresh), or forgotten when nothing was copied. */
static void vms_sweep(struct statsfd_priv *d)
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
			vm_finish(&d->vms[i]);
			d->vms[n++] = d->vms[i];
			continue;
		}
		vm_close(&d->vms[i]);
	}
	d->nvms = n;
}

/* Writes "PID PID ... and N more". */
static void note_pids(const pid_t *pids, size_t n, char *buf, size_t len)
{
	size_t pos = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && i < STATSFD_NOTE_PIDS && pos < len; i++)
		pos += (size_t)snprintf(buf + pos, len - pos, "%s%d",
					i ? " " : "", (int)pids[i]);
	if (n > STATSFD_NOTE_PIDS && pos < len)
		snprintf(buf + pos, len - pos, " and %zu more",
			 n - STATSFD_NOTE_PIDS);
}

static bool young_maybe(const struct statsfd_priv *d, pid_t pid);

/* One-time notices about VMs found without stats fds or out of reach. */
static void note_vms(struct statsfd_priv *d)
{
	pid_t *none = xmalloc((d->nvms + 1) * sizeof(*none));
	pid_t *denied = xmalloc((d->nvms + 1) * sizeof(*denied));
	size_t nnone = 0, ndenied = 0;
	int err = -EPERM;
	char list[160];

	for (size_t i = 0; i < d->nvms; i++) {
		struct sfd_vm *vm = &d->vms[i];

		if (vm->noted || vm->nf || vm->dead || young_maybe(d, vm->pid))
			continue;
		if (denied_errno(vm->err)) {
			denied[ndenied++] = vm->pid;
			err = vm->err;
		} else if (!vm->nlinks) {
			none[nnone++] = vm->pid;
		} else {
			continue; /* file_open said why */
		}
		vm->noted = true;
	}
	if (nnone) {
		bool many = nnone > 1;

		note_pids(none, nnone, list, sizeof(list));
		note_add(d,
			 "%s %s %s no binary stats fds open (QEMU before 8.1 keeps none): debugfs fills %s in where the kernel lets it read, or QMP with --qmp SOCKET",
			 many ? "VMs" : "VM", list, many ? "keep" : "keeps",
			 many ? "them" : "it");
	}
	if (ndenied) {
		note_pids(denied, ndenied, list, sizeof(list));
		note_add(d, "cannot copy the stats fds of %s %s: %s: %s",
			 ndenied > 1 ? "VMs" : "VM", list, strerror(-err),
			 perm_hint);
	}
	if (d->ndenied && !d->denied_noted && !d->pid) {
		d->denied_noted = true;
		note_add(d,
			 "cannot read the fds of %zu processes (VMs among them are not shown): %s",
			 d->ndenied, perm_hint);
	}
	free(none);
	free(denied);
}

/* Whether the last scan found pid without a VM and with nfds fds. */
static bool known_same(const struct statsfd_priv *d, pid_t pid, off_t nfds)
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
static void known_keep(struct statsfd_priv *d, pid_t pid, off_t nfds)
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
 * its count; the full scans every STATSFD_FULL_SCAN_EVERY catch the rest
 * (a reused pid, an fd closed and another opened in between).
 */
static void scan_pid(struct provider *p, pid_t pid, bool full)
{
	struct statsfd_priv *d = p->priv;
	/* procfs gives a fd directory's size as its count of fds; another
	 * file system's (a test's proc root) does not */
	off_t nfds = d->fake_proc ? 0 : vm_proc_nfds(d->rootfd, pid);
	struct sfd_vm *vm = vm_find(d, pid);
	size_t n;
	bool is_vm;
	int rc;

	if (vm && vm->dead)
		return;
	/* A young VM's VMM is still opening fds, and may close one between
	 * two looks (QEMU and the test guest close a setup pipe after the
	 * last stats fd): its count could come back to what it was with a
	 * stats fd more. Its links are read every time. */
	if (vm && young_maybe(d, pid))
		full = true;
	if (!full && nfds) {
		if (vm && vm->nfds == nfds) {
			vm->mark = true;
			return;
		}
		if (!vm && known_same(d, pid, nfds)) {
			known_keep(d, pid, nfds);
			return;
		}
	}
	rc = scan_fds(d, pid, &is_vm, &n);
	if (rc) {
		if (denied_errno(rc))
			d->ndenied++;
		/* unreadable now but tracked: keep what was copied */
		if (vm && denied_errno(rc))
			vm->mark = true;
		if (!vm && denied_errno(rc) && d->pid) {
			vm = vm_add(d, pid);
			if (vm) {
				vm->err = rc;
				vm->mark = true;
			}
		}
		return;
	}
	if (!is_vm) {
		known_keep(d, pid, nfds);
		return;
	}
	if (!vm) {
		vm = vm_add(d, pid);
		if (!vm)
			return;
	}
	vm->mark = true;
	vm->nfds = 0;
	vm->nlinks = n;
	if (vm->pidfd >= 0 && vm_sync(p, vm, n))
		vm->nfds = nfds;
}

/*
 * The pids to look at, sorted, but ours: just -p's; else the VM processes
 * KVM's debugfs directory names (no other process's fds are read); else,
 * when it cannot be read, every process under the proc root. Caller frees.
 */
static size_t scan_pids(struct statsfd_priv *d, pid_t **out)
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
static void scan(struct provider *p, uint64_t now)
{
	struct statsfd_priv *d = p->priv;
	size_t n, nold = d->nvms;
	bool full = d->scans++ % STATSFD_FULL_SCAN_EVERY == 0;
	struct sfd_known *k;
	pid_t *pids;

	d->last_scan = now;
	d->ndenied = 0;
	d->nknown_next = 0;
	for (size_t i = 0; i < d->nvms; i++)
		d->vms[i].mark = false;
	n = scan_pids(d, &pids);
	for (size_t i = 0; i < n; i++) {
		/* vm_add may move d->vms; look up again for each pid */
		scan_pid(p, pids[i], full);
		if (d->nvms > nold && d->nvms > 1 &&
		    d->vms[d->nvms - 1].pid < d->vms[d->nvms - 2].pid) {
			qsort(d->vms, d->nvms, sizeof(*d->vms), vm_cmp);
		}
		nold = d->nvms;
	}
	free(pids);
	k = d->known;
	d->known = d->known_next;
	d->known_next = k;
	d->nknown = d->nknown_next;
	vms_sweep(d);
	note_vms(d);
}

/* Without an epoll set (no fd left for one): the VMs whose process
 * exited, by one poll over every pidfd. */
static void reap(struct statsfd_priv *d)
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
			vm_finish(&d->vms[i]);
}

/* Looks at one process now (a VM just created, or a young one again). */
static void scan_one(struct provider *p, pid_t pid)
{
	struct statsfd_priv *d = p->priv;
	size_t nold = d->nvms;

	if (pid == d->self || (d->pid && pid != d->pid))
		return;
	scan_pid(p, pid, false);
	if (d->nvms > nold && d->nvms > 1)
		qsort(d->vms, d->nvms, sizeof(*d->vms), vm_cmp);
	/* a VM seen for the first time between refreshes: not to be swept
	 * by a scan already under way */
	for (size_t i = 0; i < d->nvms; i++)
		if (d->vms[i].pid == pid)
			d->vms[i].mark = true;
}

/* Arms the timer for the young VMs' next look (or disarms it). */
static void young_arm(struct statsfd_priv *d, uint64_t now)
{
	struct itimerspec its = { 0 };
	uint64_t every = STATSFD_YOUNG_EVERY_NS;

	if (d->tfd < 0)
		return;
	for (size_t i = 0; i < d->nyoung; i++)
		if (d->young[i].until > now &&
		    d->young[i].until - now >
			    STATSFD_YOUNG_FOR_NS - STATSFD_YOUNG_FAST_FOR_NS)
			every = STATSFD_YOUNG_FAST_NS;
	if (d->nyoung)
		its.it_value.tv_nsec = (long)every;
	timerfd_settime(d->tfd, 0, &its, NULL);
}

/* Whether pid is a VM created moments ago (its stats fds may come). */
static bool young_has(const struct statsfd_priv *d, pid_t pid)
{
	for (size_t i = 0; i < d->nyoung; i++)
		if (d->young[i].pid == pid)
			return true;
	return false;
}

/* Whether pid may be such a VM: it is, or a VM came whose process could
 * not be told (young pid 0: any may be). */
static bool young_maybe(const struct statsfd_priv *d, pid_t pid)
{
	return young_has(d, pid) || young_has(d, 0);
}

static void young_add(struct statsfd_priv *d, pid_t pid, uint64_t now)
{
	for (size_t i = 0; i < d->nyoung; i++) {
		if (d->young[i].pid == pid) {
			d->young[i].until = now + STATSFD_YOUNG_FOR_NS;
			return;
		}
	}
	if (d->nyoung == d->capyoung) {
		d->capyoung = d->capyoung ? d->capyoung * 2 : 8;
		d->young = xrealloc(d->young, d->capyoung * sizeof(*d->young));
	}
	d->young[d->nyoung++] = (struct sfd_young){ pid,
						    now + STATSFD_YOUNG_FOR_NS };
}

/* Looks at the young VMs again; forgets those old enough or gone. */
static void young_scan(struct provider *p, uint64_t now)
{
	struct statsfd_priv *d = p->priv;
	size_t n = 0;

	for (size_t i = 0; i < d->nyoung; i++) {
		struct sfd_vm *vm;

		if (!d->young[i].pid) {
			scan(p, now);
			if (now < d->young[i].until)
				d->young[n++] = d->young[i];
			continue;
		}
		scan_one(p, d->young[i].pid);
		vm = vm_find(d, d->young[i].pid);
		if (now < d->young[i].until && vm && !vm->dead)
			d->young[n++] = d->young[i];
	}
	d->nyoung = n;
}

/* New entries in KVM's debugfs directory: VMs just created. */
static void inotify_drain(struct provider *p, uint64_t now)
{
	struct statsfd_priv *d = p->priv;
	char buf[4096]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t n;

	while ((n = read(d->inofd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off + (ssize_t)sizeof(*ev) <= n;
		     off += (ssize_t)sizeof(*ev) + ev->len) {
			pid_t pid;

			ev = (const void *)(buf + off);
			if (ev->mask & IN_Q_OVERFLOW)
				scan(p, now); /* events lost: look at all */
			if (!ev->len || vm_debugfs_name(ev->name, &pid))
				continue;
			if (!d->names_ok) {
				/* which process it is cannot be told here:
				 * every one is looked at (young pid 0) */
				scan(p, now);
				young_add(d, 0, now);
				continue;
			}
			pid = vm_proc_tgid(d->rootfd, pid);
			if (pid == d->self || (d->pid && pid != d->pid))
				continue;
			scan_one(p, pid);
			young_add(d, pid, now);
		}
	}
}

/*
 * Whatever happened since the last look, without blocking: VMs whose
 * process exited are read a last time and their copies closed, VMs just
 * created have their stats fds copied, young VMs are looked at again.
 */
static void statsfd_wake(struct provider *p)
{
	struct statsfd_priv *d = p->priv;
	struct epoll_event ev[32];
	bool timer = false;
	uint64_t now;
	int n;

	if (d->epfd < 0) {
		reap(d);
		return;
	}
	while ((n = epoll_wait(d->epfd, ev, ARRAY_SIZE(ev), 0)) > 0) {
		now = util_now_ns();
		for (int i = 0; i < n; i++) {
			uint64_t tag = ev[i].data.u64;
			struct sfd_vm *vm;

			if (tag == STATSFD_EV_INOTIFY) {
				inotify_drain(p, now);
			} else if (tag == STATSFD_EV_TIMER) {
				uint64_t ticks;

				if (read(d->tfd, &ticks, sizeof(ticks)) < 0)
					ticks = 0;
				timer = true;
			} else {
				vm = vm_find(d, (pid_t)(tag & 0xffffffffu));
				if (vm && !vm->dead)
					vm_finish(vm);
			}
		}
		if (n < (int)ARRAY_SIZE(ev))
			break;
	}
	if (timer)
		young_scan(p, util_now_ns());
	if (timer || d->nyoung)
		young_arm(d, util_now_ns());
}

static int statsfd_wake_fd(struct provider *p)
{
	const struct statsfd_priv *d = p->priv;

	return d ? d->epfd : -1;
}

/* Adds one file's values (read into d->data) to the aggregate agg. */
static void file_add(struct statsfd_priv *d, const struct sfd_file *f,
		     const unsigned char *data, struct reading *agg)
{
	const struct statsfd_schema *s = f->sc->s;

	for (uint32_t i = 0; i < s->num_desc; i++) {
		const struct statsfd_desc *dsc = &s->desc[i];
		const int *items;

		if (f->sc->first[i] < 0)
			continue;
		items = f->sc->items + f->sc->first[i];
		for (unsigned int k = 0; k < dsc->size; k++) {
			uint64_t v = statsfd_value(data, dsc, k);
			int l = items[k];

			if (f->base && d->locals[l].type == FIELD_CUMULATIVE) {
				uint64_t b = statsfd_value(f->base, dsc, k);

				v = v >= b ? v - b : 0;
			}
			reading_add(&agg[l], v, d->locals[l].type);
		}
	}
}

/* Marks one file's values unreadable in the aggregate agg: it could not
 * be read this time. */
static void file_bad(const struct sfd_file *f, struct reading *agg)
{
	const struct statsfd_schema *s = f->sc->s;

	for (uint32_t i = 0; i < s->num_desc; i++) {
		const int *items;

		if (f->sc->first[i] < 0)
			continue;
		items = f->sc->items + f->sc->first[i];
		for (unsigned int k = 0; k < s->desc[i].size; k++)
			reading_fail(&agg[items[k]]);
	}
}

/* Folds the aggregate part into whole (a vCPU's into its VM's). */
static void fold(struct statsfd_priv *d, struct reading *whole,
		 const struct reading *part)
{
	for (size_t k = 0; k < d->nlocals; k++)
		reading_fold(&whole[k], &part[k], d->locals[k].type);
}

static void push_all(struct statsfd_priv *d, struct sample_set *out, pid_t pid,
		     int vcpu, pid_t tid, const struct reading *agg,
		     unsigned int flags)
{
	for (size_t k = 0; k < d->nlocals; k++)
		if (reading_ok(&agg[k]))
			sample_set_push(out, d->locals[k].field, pid, vcpu, tid,
					agg[k].value, flags);
}

/* Whether samples per VM and vCPU are wanted. */
static bool want_vms(const struct provider *p)
{
	const struct statsfd_priv *d = p->priv;

	return p->want_vms || d->pid;
}

/*
 * Reads every file of one VM, pushes its own samples, its vCPUs' when
 * wanted, and folds it into the pid-0 sums. A file that cannot be read
 * makes its values unreadable (not pushed) for this refresh, never zero.
 */
static void vm_read(struct provider *p, struct sfd_vm *vm,
		    struct sample_set *out)
{
	struct statsfd_priv *d = p->priv;
	bool breakdown = want_vms(p);

	readings_clear(d->vmval, d->nlocals);
	for (size_t i = 0; i < vm->nf;) {
		int vcpu = vm->f[i].vcpu;
		pid_t tid = vm->f[i].tid;
		size_t j = i;

		readings_clear(d->vcval, d->nlocals);
		for (; j < vm->nf && vm->f[j].vcpu == vcpu; j++) {
			const struct sfd_file *f = &vm->f[j];
			const unsigned char *data = f->last;

			if (f->sc->s->data_len > d->capdata) {
				d->capdata = f->sc->s->data_len;
				d->data = xrealloc(d->data, d->capdata);
			}
			if (f->fd >= 0 &&
			    !statsfd_data_read(f->fd, f->sc->s, d->data))
				data = d->data;
			if (!data) {
				file_bad(f, d->vcval);
				continue;
			}
			file_add(d, f, data, d->vcval);
			if (f->tid != tid)
				tid = 0; /* several VMs: not one thread */
		}
		if (breakdown && vcpu >= 0)
			push_all(d, out, vm->pid, vcpu, tid, d->vcval, 0);
		fold(d, d->vmval, d->vcval);
		i = j;
	}
	/* always: which VMs this provider served is how the stats layer
	 * lets debugfs or QMP fill in the others */
	push_all(d, out, vm->pid, SAMPLE_ALL_VCPUS, 0, d->vmval, 0);
	fold(d, d->val, d->vmval);
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
static void vms_bury(struct statsfd_priv *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nvms; i++) {
		if (!d->vms[i].dead) {
			d->vms[n++] = d->vms[i];
			continue;
		}
		vm_close(&d->vms[i]);
	}
	d->nvms = n;
}

static int statsfd_read(struct provider *p, struct sample_set *out)
{
	struct statsfd_priv *d = p->priv;
	uint64_t now = util_now_ns();
	unsigned int flags;

	d->vanished = d->rebase_next;
	d->rebase_next = false;
	statsfd_wake(p);
	if (d->reads && now - d->last_scan >= STATSFD_RESCAN_NS)
		scan(p, now);
	flags = d->vanished ? SAMPLE_REBASE : 0;
	/* the sums start from what exited VMs counted, so that a VM
	 * leaving never takes its counts with it */
	if (d->nlocals)
		memcpy(d->val, d->retired, d->nlocals * sizeof(*d->val));
	for (size_t i = 0; i < d->nvms; i++)
		vm_read(p, &d->vms[i], out);
	vms_bury(d);
	/* fields known from the schema but no VM yet: 0 */
	for (size_t k = 0; k < d->nlocals; k++)
		if (d->val[k].state == READING_NONE)
			reading_add(&d->val[k], 0, d->locals[k].type);
	push_all(d, out, 0, SAMPLE_ALL_VCPUS, 0, d->val, flags);
	d->reads++;
	if (d->pid && !d->nvms && !d->gone_noted) {
		d->gone_noted = true;
		note_add(d, "VM %d exited: its stats fds are closed",
			 (int)d->pid);
	}
	note_flush(p);
	return 0;
}

/* Host support: the kernel offers KVM_GET_STATS_FD. */
static bool statsfd_probe(const struct options *opts)
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

static void statsfd_close(struct provider *p)
{
	struct statsfd_priv *d = p->priv;

	if (!d)
		return;
	for (size_t i = 0; i < d->nvms; i++)
		vm_close(&d->vms[i]);
	free(d->vms);
	for (size_t i = 0; i < d->nschemas; i++)
		schema_free(d->schemas[i]);
	free(d->schemas);
	free(d->locals);
	free(d->local_of);
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
	free(d);
	p->priv = NULL;
}

/* With -p: why that VM cannot be served, as an error for main. */
static int pid_error(struct provider *p)
{
	struct statsfd_priv *d = p->priv;
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
	if (denied_errno(vm->err)) {
		provider_msg(p, false,
			     "cannot copy the stats fds of VM %d: %s: %s",
			     (int)d->pid, strerror(-vm->err), perm_hint);
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
 * KVM's debugfs directory, when it is of the same tree as the proc root
 * (both the system's, or both injected by a test): its "PID-FD" entries
 * name the VMs to scan, and inotify on it tells of each VM as it is
 * created. Then the epoll set the loop polls: inotify, the timer for
 * young VMs and, as they come, each VM's pidfd.
 */
static void watch_open(struct statsfd_priv *d, const struct options *opts)
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
	ev.data.u64 = STATSFD_EV_TIMER;
	if (d->tfd >= 0 && epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->tfd, &ev)) {
		close(d->tfd);
		d->tfd = -1;
	}
	if (d->dbgfd < 0)
		return;
	d->inofd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (d->inofd < 0)
		return;
	ev.data.u64 = STATSFD_EV_INOTIFY;
	if (inotify_add_watch(d->inofd, dbg, IN_CREATE | IN_MOVED_TO) < 0 ||
	    epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->inofd, &ev)) {
		close(d->inofd);
		d->inofd = -1;
	}
}

/* Reads the layout of the stats fd made by ioctl req on fd and binds it. */
static void scratch_schema(struct provider *p, int fd)
{
	struct statsfd_schema *s;
	struct errmsg err;
	int sfd = ioctl(fd, KVM_GET_STATS_FD, NULL);

	if (sfd < 0)
		return;
	if (!statsfd_schema_read(sfd, &s, &err))
		schema_get(p, s);
	close(sfd);
}

/*
 * The fields of the kernel's binary stats before any VM runs, so that
 * the first sample already has every one (the log's columns are fixed
 * then): a scratch VM and vCPU of our own, made through /dev/kvm, give
 * the kernel's two layouts. Without /dev/kvm access the fields come with
 * the first VM, as before.
 */
static void schema_at_start(struct provider *p)
{
	int kvm, vm, vcpu;

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		return;
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm >= 0) {
		scratch_schema(p, vm);
		vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
		if (vcpu >= 0) {
			scratch_schema(p, vcpu);
			close(vcpu);
		}
		close(vm);
	}
	close(kvm);
}

/*
 * Without -p: no VM's stats fds could be copied for want of privilege
 * (processes whose fds are hidden, or VMs whose fds cannot be copied) is
 * an error, not an empty run.
 */
static int privilege_error(struct provider *p)
{
	struct statsfd_priv *d = p->priv;
	size_t denied = d->ndenied;

	if (d->pid)
		return 0;
	for (size_t i = 0; i < d->nvms; i++) {
		if (d->vms[i].nf)
			return 0;
		denied += denied_errno(d->vms[i].err);
	}
	if (!denied || !geteuid())
		return 0;
	provider_msg(p, false,
		     "cannot copy VMs' stats fds as user %d: run kvmstat as root (%s)",
		     (int)geteuid(), perm_hint);
	return -EPERM;
}

/*
 * Finds the VMs (or the -p VM) and copies their stats fds. Without -p,
 * having no VM is fine: VMs that start later are found by a later scan.
 */
static int statsfd_open(struct provider *p, const struct options *opts)
{
	const char *root = opts->proc_root ? opts->proc_root : "/proc";
	struct statsfd_priv *d;
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
	d->dbgfd = d->epfd = d->inofd = d->tfd = -1;
	d->rootfd = fs_open_dir(AT_FDCWD, root);
	if (d->rootfd < 0) {
		rc = d->rootfd;
		provider_msg(p, false, "cannot read %s: %s", root,
			     strerror(-rc));
		goto out_close;
	}
	d->self_start = vm_proc_start_ticks(d->rootfd, 0);
	watch_open(d, opts);
	if (!d->fake_proc)
		schema_at_start(p);
	scan(p, util_now_ns());
	rc = privilege_error(p);
	if (rc)
		goto out_close;
	if (d->pid) {
		rc = pid_error(p);
		if (rc)
			goto out_close;
	}
	note_flush(p);
	return 0;

out_close:
	statsfd_close(p);
	return rc;
}

static bool statsfd_asked(const struct options *o)
{
	return o->use_statsfd;
}

const struct provider_ops statsfd_provider_ops = {
	.name = "statsfd",
	.asked = statsfd_asked,
	.probe = statsfd_probe,
	.open = statsfd_open,
	.read = statsfd_read,
	.close = statsfd_close,
	.wake_fd = statsfd_wake_fd,
	.wake = statsfd_wake,
};
