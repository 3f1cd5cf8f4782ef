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
 */
#include <dirent.h>
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

#include "errmsg.h"
#include "fs.h"
#include "mounts.h"
#include "options.h"
#include "provider.h"
#include "reading.h"
#include "util.h"

/* A counter is at most 20 digits and a newline; anything longer is not. */
#define DEBUGFS_VALUE_MAX 32
/* Refreshes that carry SAMPLE_REBASE once a VM directory went: the one that
 * saw it go and the next, since the kernel removes the directory just
 * before it drops the VM from the totals. */
#define DEBUGFS_REBASE_REFRESHES 2

/* A counter name this provider reports, and its field. */
struct debugfs_name {
	char *name;
	int field;
	bool claimed; /* another provider owns it: fill-in only */
};

/* One counter file in one directory. */
struct debugfs_file {
	int fd;	  /* kept open for pread, or -1: reopened */
	int name; /* index in debugfs_priv.names */
};

struct debugfs_vcpu {
	int index; /* N of vcpuN */
	pid_t tid; /* vCPU thread, 0 until the vCPU first ran */
	int dirfd; /* kept while something must be reopened */
	int pidfd; /* pid file kept while tid is 0, if preadable */
	struct debugfs_file *f;
	size_t nf;
};

/* One <pid>-<fd> directory: tracked always, opened when its counters are
 * wanted (want_vms or -p). */
struct debugfs_vm {
	pid_t pid;
	int num;       /* the fd number of the name */
	ino_t ino;     /* tells a new VM from a gone one of that name */
	bool opened;   /* files and vCPUs open */
	bool failed;   /* could not be opened: tracked only */
	int dirfd;     /* -1 unless opened */
	nlink_t nlink; /* when vCPU directories were last listed */
	size_t hidden; /* files the kernel hid when it was opened */
	struct debugfs_file *f;
	size_t nf;
	struct debugfs_vcpu *vcpu;
	size_t nvcpu;
};

/* One vCPU counter read in this refresh. */
struct debugfs_vcval {
	int vcpu;
	int name;
	pid_t tid;
	uint64_t value;
};

/* A VM directory seen by one listing of the root. */
struct debugfs_ent {
	pid_t pid;
	int num;
	ino_t ino;
};

struct debugfs_priv {
	char *root; /* owned copy of opts->debugfs_root */
	int rootfd; /* listed each refresh; openat base */
	pid_t pid;  /* -p, or 0 */
	/* of the hidden files, those refused with EACCES (file permissions,
	 * not lockdown, which refuses with EPERM) */
	size_t denied;
	struct debugfs_name *names; /* every counter name reported */
	size_t nnames, capnames;
	struct reading *val;	  /* per name: sum in this refresh */
	struct debugfs_file *top; /* top-level totals (not with -p) */
	size_t ntop;
	struct reading *topval; /* per top file, this refresh */
	struct debugfs_vm *vms; /* sorted by (pid, num) */
	size_t nvms;
	struct debugfs_vm *vms_next; /* merge scratch, capvms too */
	size_t capvms;
	struct debugfs_ent *ents; /* one listing of the root */
	size_t nents, capents;
	struct debugfs_vcval *vc; /* one process's vCPU readings */
	size_t nvc, capvc;
	int rebase_left; /* refreshes still to flag REBASE */
	bool vanished;	 /* a VM went during this refresh */
	bool emfile_noted, gone_noted;
	/* names another provider owns: read per VM, for the VMs it did not
	 * serve (no top-level file for them) */
	bool fallback;
};

bool debugfs_hidden_errno(int err);

/*
 * Exposed for tests. Errors that mean the kernel hides the file from us
 * (lockdown refuses writable debugfs files with EPERM; EACCES for plain
 * permissions) rather than that it is broken or gone.
 */
bool debugfs_hidden_errno(int err)
{
	if (err < 0)
		err = -err;
	return err == EPERM || err == EACCES;
}

/* Counts a file refused for its permissions (EACCES), as opposed to one
 * kernel lockdown hides (EPERM). */
static void p_denied(struct provider *p, int err)
{
	struct debugfs_priv *d = p->priv;

	if (err == -EACCES || err == EACCES)
		d->denied++;
}

/*
 * Says why hidden counters cannot be read: kernel lockdown (EPERM), or
 * file permissions (EACCES), or both. A failure when all are hidden.
 */
static void hidden_msg(struct provider *p, size_t hidden, bool all)
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

/* Errors reading a VM's file that mean the VM is going away. */
static bool debugfs_gone_errno(int err)
{
	if (err < 0)
		err = -err;
	return err == ENOENT || err == ENODEV || err == EIO;
}

static void debugfs_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Parses a decimal that ends at the first non-digit into *end. */
static bool debugfs_parse_num(const char *s, const char **end, long *out)
{
	long v = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (INT_MAX - 9) / 10)
			return false;
		v = v * 10 + (*s - '0');
	}
	*end = s;
	*out = v;
	return true;
}

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

/* One read of a small file from its start, through fd if it can be pread,
 * else by opening name in dirfd: bytes (NUL-terminated) or -errno. */
static ssize_t debugfs_read_buf(int dirfd, const char *name, int fd, char *buf,
				size_t len)
{
	return fd >= 0 ? fs_pread_fd(fd, buf, len) :
			 fs_read_at(dirfd, name, buf, len);
}

/* Reads one counter: 0, -errno, or -EINVAL when it is not one number. */
static int debugfs_read_value(int dirfd, const char *name, int fd, uint64_t *v)
{
	char buf[DEBUGFS_VALUE_MAX];
	ssize_t n = debugfs_read_buf(dirfd, name, fd, buf, sizeof(buf));

	if (n == -EFBIG)
		return -EINVAL;
	if (n < 0)
		return (int)n;
	return util_parse_u64(buf, v);
}

/*
 * Opens name in dirfd and checks that it holds one unsigned decimal. Returns
 * 0 with *fdp (an fd to pread, or -1 when the file must be reopened each
 * time) and *type, 1 when the file is not a counter, or -errno when it
 * cannot be opened or read (debugfs_hidden_errno() tells lockdown apart).
 */
static int debugfs_open_counter(int dirfd, const char *name, int *fdp,
				enum field_type *type)
{
	char buf[DEBUGFS_VALUE_MAX];
	struct stat st;
	uint64_t v;
	ssize_t n;
	int fd, rc;

	/* O_NONBLOCK: a FIFO in the tree is refused below, not waited on */
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		rc = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = 1;
		goto out_close;
	}
	n = fs_pread_fd(fd, buf, sizeof(buf));
	if (n == -ESPIPE) {
		/* a seq/attr file: read once now, reopen on every refresh */
		n = fs_read_fd(fd, buf, sizeof(buf));
		if (n >= 0 || n == -EFBIG) {
			close(fd);
			fd = -1;
		}
	}
	if (n == -EFBIG || (n >= 0 && util_parse_u64(buf, &v))) {
		rc = 1;
		goto out_close;
	}
	if (n < 0) {
		rc = (int)n;
		goto out_close;
	}
	*fdp = fd;
	/* the kernel makes only cumulative stats writable (to clear them);
	 * its peaks are named max_* even where the file is writable */
	if (!strncmp(name, "max_", 4))
		*type = FIELD_PEAK;
	else
		*type = st.st_mode & 0222 ? FIELD_CUMULATIVE : FIELD_INSTANT;
	return 0;

out_close:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Index of a reported name, or -1. */
static int debugfs_name_find(const struct provider *p, const char *name)
{
	const struct debugfs_priv *d = p->priv;
	int field = field_table_find(p->fields, name);

	if (field < 0)
		return -1;
	for (size_t i = 0; i < d->nnames; i++)
		if (d->names[i].field == field)
			return (int)i;
	return -1;
}

/*
 * Declares the field of a counter file: the files carry no units, but KVM
 * names its time counters by their unit (halt_wait_ns: nanoseconds), and
 * its count of every exit "exits". A name another provider declared first
 * keeps that provider's declaration.
 */
static int debugfs_declare(struct provider *p, const char *name,
			   enum field_type type)
{
	static const struct {
		const char *suffix;
		int exponent;
	} times[] = { { "_ns", -9 }, { "_us", -6 }, { "_ms", -3 } };
	int id = field_table_intern(p->fields, name, -1, type, "debugfs");
	struct field_info *f = field_table_info(p->fields, id);
	size_t len = strlen(name);

	if (!f || !f->provider || strcmp(f->provider, "debugfs"))
		return id;
	for (size_t i = 0; i < ARRAY_SIZE(times); i++) {
		size_t n = strlen(times[i].suffix);

		if (len > n && !strcmp(name + len - n, times[i].suffix)) {
			f->unit = UNIT_SECONDS;
			f->exponent = times[i].exponent;
			f->base = 10;
		}
	}
	if (!strcmp(name, FIELD_KVM_EXITS))
		f->flags |= FIELD_EXITS;
	return id;
}

/* Index of name, interning its field when it is new to this provider. */
static int debugfs_name_add(struct provider *p, const char *name,
			    enum field_type type)
{
	struct debugfs_priv *d = p->priv;
	int i = debugfs_name_find(p, name);

	if (i >= 0)
		return i;
	if (d->nnames == d->capnames) {
		d->capnames = d->capnames ? d->capnames * 2 : 64;
		d->names = xrealloc(d->names, d->capnames * sizeof(*d->names));
		d->val = xrealloc(d->val, d->capnames * sizeof(*d->val));
	}
	readings_clear(&d->val[d->nnames], 1);
	d->names[d->nnames].name = xstrdup(name);
	d->names[d->nnames].field = debugfs_declare(p, name, type);
	d->names[d->nnames].claimed = provider_claimed(p, name);
	return (int)d->nnames++;
}

static void debugfs_files_close(struct debugfs_file *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		debugfs_close_fd(&f[i].fd);
	free(f);
}

static void debugfs_vm_close(struct debugfs_vm *vm)
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
static void debugfs_vcpu_tid(struct debugfs_vcpu *c)
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
static int debugfs_vm_list(struct provider *p, struct debugfs_vm *vm, bool first)
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
		if (!first || type != DT_REG || !provider_keeps(p, e->name))
			continue;
		rc = debugfs_open_counter(vm->dirfd, e->name, &fd, &ftype);
		if (rc < 0 && debugfs_hidden_errno(rc)) {
			vm->hidden++;
			p_denied(p, rc);
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
static int debugfs_vm_open(struct provider *p, struct debugfs_vm *vm)
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
static bool debugfs_want_vms(const struct provider *p)
{
	const struct debugfs_priv *d = p->priv;

	return p->want_vms || d->pid;
}

static void debugfs_note_emfile(struct provider *p)
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
static int debugfs_scan(struct provider *p)
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

static bool debugfs_probe(const struct options *opts)
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
		if (!provider_keeps(p, e->name)) {
			(*filtered)++;
			continue;
		}
		rc = debugfs_open_counter(d->rootfd, e->name, &fd, &type);
		if (rc < 0 && debugfs_hidden_errno(rc)) {
			(*hidden)++;
			p_denied(p, rc);
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
static int debugfs_open(struct provider *p, const struct options *opts)
{
	const char *root = opts->debugfs_root ? opts->debugfs_root :
						DEBUGFS_KVM_DEFAULT;
	struct debugfs_priv *d;
	size_t hidden = 0, filtered = 0;
	int rc;

	d = xcalloc(1, sizeof(*d));
	d->root = xstrdup(root);
	d->pid = opts->pid;
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
			hidden_msg(p, hidden, true);
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
		hidden_msg(p, hidden, false);
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
