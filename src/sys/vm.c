// SPDX-License-Identifier: GPL-2.0-only
/*
 * VM discovery. A process runs a KVM VM when one of its fds is the VM fd that
 * KVM_CREATE_VM returned, which procfs shows as the link "anon_inode:kvm-vm".
 * Guest names come from QEMU's -name option on the command line, vCPU
 * threads from their "CPU N/KVM" thread names. All paths are relative to an
 * injectable proc root, opened once per call and walked with *at() calls.
 * The scan over processes and their fd links (vm_proc_pids, vm_proc_fds)
 * is also what the statsfd provider finds stats fds with.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "errmsg.h"
#include "fs.h"
#include "taskstat.h"
#include "util.h"
#include "vm.h"
#include "vm_ident.h"

/* The fd links of KVM files; "kvm-vcpu" is a prefix of "kvm-vcpu-stats",
 * so every match is exact. */
static const char link_vm[] = "anon_inode:kvm-vm";
static const char link_vm_stats[] = "anon_inode:kvm-vm-stats";
static const char link_vcpu_stats[] = "anon_inode:kvm-vcpu-stats:";
static const char link_vcpu[] = "anon_inode:kvm-vcpu:";

/* The N of a link "PREFIX" N (n bytes), or -1. */
static int vm_link_index(const char *link, size_t n, const char *prefix,
			 size_t pre)
{
	long v = 0;

	if (n <= pre || n > pre + 10 || memcmp(link, prefix, pre))
		return -1;
	for (size_t i = pre; i < n; i++) {
		if (link[i] < '0' || link[i] > '9')
			return -1;
		v = v * 10 + (link[i] - '0');
	}
	return v > INT_MAX ? -1 : (int)v;
}

/* KVM's debugfs directory on the running system. */
#define VM_DEBUGFS_KVM "/sys/kernel/debug/kvm"

static int vm_root_open(const char *proc_root)
{
	return fs_open_dir(AT_FDCWD, proc_root);
}

/* A directory entry naming a pid or tid: digits only, positive, fits pid_t. */
static bool vm_parse_id(const char *s, pid_t *out)
{
	long v;

	if (*s < '0' || *s > '9')
		return false;
	if (util_parse_int(s, 1, INT_MAX, &v))
		return false;
	*out = (pid_t)v;
	return true;
}

enum vm_fd_kind vm_fd_kind(const char *link, size_t n, int *vcpu)
{
	int v;

	if (n == sizeof(link_vm) - 1 && !memcmp(link, link_vm, n))
		return VM_FD_VM;
	if (n == sizeof(link_vm_stats) - 1 && !memcmp(link, link_vm_stats, n)) {
		*vcpu = -1;
		return VM_FD_STATS;
	}
	v = vm_link_index(link, n, link_vcpu_stats, sizeof(link_vcpu_stats) - 1);
	if (v >= 0) {
		*vcpu = v;
		return VM_FD_STATS;
	}
	v = vm_link_index(link, n, link_vcpu, sizeof(link_vcpu) - 1);
	if (v >= 0) {
		*vcpu = v;
		return VM_FD_VCPU;
	}
	return VM_FD_OTHER;
}

/*
 * One readlink per fd, each link classified; stops at the first non-zero
 * fn return, so a QEMU with thousands of fds costs one readlink per fd up
 * to what the caller looks for. The listing is raw getdents64 (fs_dir):
 * this runs once per process on the system, where readdir's extra calls
 * and allocation would double its cost.
 */
int vm_proc_fds(int rootfd, pid_t pid, vm_fd_fn fn, void *ctx)
{
	const struct fs_entry *e;
	struct fs_dir dir;
	char path[32], link[64];
	int rc = 0;

	snprintf(path, sizeof(path), "%d/fd", (int)pid);
	if (fs_dir_open(&dir, rootfd, path))
		return dir.err;
	while (!rc && (e = fs_dir_next(&dir))) {
		enum vm_fd_kind kind;
		ssize_t n;
		int vcpu = -1;
		long fd;

		if (e->name[0] < '0' || e->name[0] > '9')
			continue;
		n = readlinkat(e->dirfd, e->name, link, sizeof(link));
		/* a link as long as the buffer may be cut: none of ours */
		if (n <= 0 || n == (ssize_t)sizeof(link))
			continue;
		kind = vm_fd_kind(link, (size_t)n, &vcpu);
		if (kind == VM_FD_OTHER)
			continue;
		if (util_parse_int(e->name, 0, INT_MAX, &fd))
			continue;
		rc = fn((int)fd, kind, vcpu, ctx);
	}
	/* a listing that fails midway means the process went: it holds
	 * nothing more */
	fs_dir_close(&dir);
	return rc;
}

static int vm_pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int vm_proc_pids(int rootfd, pid_t **pids)
{
	const struct fs_entry *e;
	struct fs_dir dir;
	size_t n = 0, cap = 0;
	bool sorted = true;
	pid_t *p = NULL;

	*pids = NULL;
	if (fs_dir_open(&dir, rootfd, "."))
		return dir.err;
	while ((e = fs_dir_next(&dir))) {
		pid_t pid;

		if (!vm_parse_id(e->name, &pid))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			p = xrealloc(p, cap * sizeof(*p));
		}
		sorted &= !n || p[n - 1] < pid;
		p[n++] = pid;
	}
	fs_dir_close(&dir);
	if (dir.err || n > INT_MAX) {
		free(p);
		return dir.err ? dir.err : -EOVERFLOW;
	}
	/* procfs lists in pid order; other trees need sorting */
	if (!sorted)
		qsort(p, n, sizeof(*p), vm_pid_cmp);
	*pids = p;
	return (int)n;
}

/* The inode of the initial pid namespace (the kernel's
 * PROC_PID_INIT_INO). */
#define VM_PIDNS_INIT_INO 0xEFFFFFFCu

bool vm_pidns_is_init(int rootfd)
{
	struct stat st;

	if (fstatat(rootfd, "self/ns/pid", &st, 0))
		return true;
	return st.st_ino == VM_PIDNS_INIT_INO;
}

int vm_debugfs_name(const char *name, pid_t *pid)
{
	const char *dash = strchr(name, '-');
	char num[16];
	long fd;

	if (!dash || dash == name || (size_t)(dash - name) >= sizeof(num))
		return -EINVAL;
	memcpy(num, name, (size_t)(dash - name));
	num[dash - name] = '\0';
	if (!vm_parse_id(num, pid) || dash[1] < '0' || dash[1] > '9' ||
	    util_parse_int(dash + 1, 0, INT_MAX, &fd))
		return -EINVAL;
	return 0;
}

pid_t vm_proc_tgid(int rootfd, pid_t tid)
{
	char path[32], buf[1024], *s, *nl;
	pid_t tgid;

	snprintf(path, sizeof(path), "%d/status", (int)tid);
	if (fs_read_at(rootfd, path, buf, sizeof(buf)) <= 0)
		return tid;
	buf[sizeof(buf) - 1] = '\0';
	s = strstr(buf, "\nTgid:");
	if (!s)
		return tid;
	s += 6;
	s += strspn(s, " \t");
	nl = strchr(s, '\n');
	if (!nl)
		return tid;
	*nl = '\0';
	return vm_parse_id(s, &tgid) ? tgid : tid;
}

int vm_debugfs_pids(int debugfs_dirfd, int rootfd, pid_t **pids)
{
	const struct fs_entry *e;
	struct fs_dir dir;
	size_t n = 0, cap = 0, m = 0;
	pid_t *p = NULL;

	*pids = NULL;
	if (fs_dir_start(&dir, debugfs_dirfd))
		return dir.err;
	while ((e = fs_dir_next(&dir))) {
		pid_t pid;

		if (vm_debugfs_name(e->name, &pid))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			p = xrealloc(p, cap * sizeof(*p));
		}
		p[n++] = vm_proc_tgid(rootfd, pid);
	}
	fs_dir_close(&dir);
	if (dir.err || n > INT_MAX) {
		free(p);
		return dir.err ? dir.err : -EOVERFLOW;
	}
	if (n)
		qsort(p, n, sizeof(*p), vm_pid_cmp);
	for (size_t i = 0; i < n; i++)
		if (!m || p[m - 1] != p[i])
			p[m++] = p[i];
	*pids = p;
	return (int)m;
}

off_t vm_proc_nfds(int rootfd, pid_t pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "%d/fd", (int)pid);
	if (fstatat(rootfd, path, &st, 0) || st.st_size < 0)
		return 0;
	return st.st_size;
}

unsigned long long vm_proc_start_ticks(int rootfd, pid_t pid)
{
	char path[32], buf[4096];
	const char *s;

	if (pid)
		snprintf(path, sizeof(path), "%d/stat", (int)pid);
	else
		snprintf(path, sizeof(path), "self/stat");
	if (fs_read_at(rootfd, path, buf, sizeof(buf)) <= 0)
		return 0;
	s = strrchr(buf, ')');
	if (!s)
		return 0;
	/* field 3 follows ") "; skip to field 22 */
	for (int field = 2; s && field < 22; field++)
		s = strchr(s + 1, ' ');
	return s ? strtoull(s + 1, NULL, 10) : 0;
}

/* Stops a walk over fd links at the VM fd. */
static int vm_is_vm_fd(int fd, enum vm_fd_kind kind, int vcpu, void *ctx)
{
	(void)fd;
	(void)vcpu;
	(void)ctx;
	return kind == VM_FD_VM;
}

/* 1 when pid holds a VM fd, 0 when not, -errno when its fd directory
 * cannot be opened. */
static int vm_pid_has_vm(int root, pid_t pid)
{
	return vm_proc_fds(root, pid, vm_is_vm_fd, NULL);
}

/*
 * One option value of a QEMU "-name" argument starting at s: up to the first
 * lone comma, with ",," standing for a literal comma. Stores a new copy in
 * *out (replacing the old one) when out is not NULL; returns the end.
 */
static const char *vm_opt_value(const char *s, char **out)
{
	size_t n = 0;
	char *v = out ? xmalloc(strlen(s) + 1) : NULL;

	while (*s) {
		if (*s == ',') {
			if (s[1] != ',')
				break;
			s++;
		}
		if (v)
			v[n++] = *s;
		s++;
	}
	if (v) {
		v[n] = '\0';
		free(*out);
		*out = v;
	}
	return s;
}

/*
 * Applies one "-name" argument to *name, as QEMU reads it: comma-separated
 * key=value pairs where a first element without '=' is the guest name, and
 * a later guest= overrides an earlier one. Other keys and flags are skipped.
 */
static void vm_name_opts_apply(const char *s, char **name)
{
	bool first = true;

	while (*s) {
		size_t k = strcspn(s, "=,");

		if (s[k] == '=') {
			bool guest = k == 5 && !memcmp(s, "guest", 5);

			s = vm_opt_value(s + k + 1, guest ? name : NULL);
		} else if (first) {
			s = vm_opt_value(s, name);
		} else {
			s += k; /* a bare flag */
		}
		if (*s == ',')
			s++;
		first = false;
	}
}

char *vm_name_from_cmdline(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	char *name = NULL;

	/* argv[0] is the program, never an option */
	p += strnlen(p, (size_t)(end - p)) + 1;
	while (p < end) {
		const char *arg = p;

		p += strnlen(p, (size_t)(end - p)) + 1;
		if (strcmp(arg, "-name") && strcmp(arg, "--name"))
			continue;
		if (p >= end)
			break;
		vm_name_opts_apply(p, &name);
		p += strnlen(p, (size_t)(end - p)) + 1;
	}
	if (name && !*name) {
		free(name);
		name = NULL;
	}
	return name;
}

static char *vm_guest_name_at(int root, pid_t pid)
{
	char path[32], *buf, *name;
	size_t len;

	snprintf(path, sizeof(path), "%d/cmdline", (int)pid);
	if (fs_read_all_at(root, path, SIZE_MAX, &buf, &len))
		return NULL;
	name = vm_name_from_cmdline(buf, len);
	free(buf);
	return name;
}

/*
 * The names VMMs give their vCPU threads, N the vCPU's index: QEMU's
 * "CPU N/KVM", Firecracker's "fc_vcpu N", cloud-hypervisor's "vcpuN",
 * crosvm's "crosvm_vcpuN", kvmtool's "kvm-vcpu-N" (as a thread's comm
 * holds them: 15 bytes at most).
 */
static const struct {
	const char *prefix, *suffix;
} vm_vcpu_names[] = {
	{ "CPU ", "/KVM" },    { "fc_vcpu ", "" },  { "vcpu", "" },
	{ "crosvm_vcpu", "" }, { "kvm-vcpu-", "" },
};

/* A vCPU thread's name of one of vm_vcpu_names, with an optional trailing
 * newline: N, or -1 for any other name. */
static int vm_vcpu_index_of_comm(const char *comm)
{
	for (size_t i = 0; i < ARRAY_SIZE(vm_vcpu_names); i++) {
		size_t n = strlen(vm_vcpu_names[i].prefix);
		const char *p = comm + n;
		long index = 0;

		if (strncmp(comm, vm_vcpu_names[i].prefix, n) || *p < '0' ||
		    *p > '9')
			continue;
		for (; *p >= '0' && *p <= '9'; p++) {
			index = index * 10 + (*p - '0');
			if (index > INT_MAX)
				return -1;
		}
		if (strncmp(p, vm_vcpu_names[i].suffix,
			    strlen(vm_vcpu_names[i].suffix)))
			continue;
		p += strlen(vm_vcpu_names[i].suffix);
		if (*p && strcmp(p, "\n"))
			continue;
		return (int)index;
	}
	return -1;
}

static int vm_vcpu_cmp(const void *a, const void *b)
{
	const struct vm_vcpu *x = a, *y = b;

	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static void vm_vcpus_clear(struct vm_info *v)
{
	free(v->vcpus);
	v->vcpus = NULL;
	v->nvcpus = 0;
	v->named = false;
	v->nheld = -1;
}

/* Appends what the kernel says: thread tid runs vCPU index. */
static void vm_vcpus_add(struct vm_info *v, int index, pid_t tid)
{
	v->vcpus = xrealloc(v->vcpus, (v->nvcpus + 1) * sizeof(*v->vcpus));
	v->vcpus[v->nvcpus++] = (struct vm_vcpu){ index, tid, true };
}

void vm_vcpus_learn(struct vm_vcpu **v, size_t *n, const struct vm_vcpu *c)
{
	size_t k = 0;

	for (size_t i = 0; i < *n; i++) {
		const struct vm_vcpu *o = &(*v)[i];

		/* known, or said otherwise by the kernel */
		if ((o->tid == c->tid || o->index == c->index) &&
		    (o->kernel || !c->kernel))
			return;
	}
	/* the kernel's word over what names alone said */
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].tid != c->tid && (*v)[i].index != c->index)
			(*v)[k++] = (*v)[i];
	*v = xrealloc(*v, (k + 1) * sizeof(**v));
	(*v)[k++] = *c;
	*n = k;
}

/* KVM_RUN: _IO(KVMIO, 0x80), <linux/kvm.h> */
#define VM_KVM_RUN 0xae80ul

/* PF_IO_WORKER, PF_USER_WORKER (6.4+), PF_KTHREAD of <linux/sched.h>:
 * threads the kernel runs in the process, whose registers were copied
 * from the thread that made them. */
#define VM_PF_WORKER (0x10ul | 0x4000ul | 0x200000ul)

/* Whether thread tid is one of those workers (its stat's flags): KVM's NX huge page recovery thread, made at a vCPU's
 * first KVM_RUN since 6.12's vhost_task, reads as that ioctl forever. */
static bool vm_thread_is_worker(int taskfd, pid_t tid)
{
	char path[48], buf[1024];
	struct taskstat st;

	snprintf(path, sizeof(path), "%d/stat", (int)tid);
	return fs_read_at(taskfd, path, buf, sizeof(buf)) > 0 &&
	       !taskstat_parse_stat(buf, &st) && (st.flags & VM_PF_WORKER);
}

/*
 * The vCPU thread tid of VM pid runs as the kernel says: its system call
 * now (task/TID/syscall: "NR ARG1 ARG2 ...", the arguments in hex) is
 * ioctl(FD, KVM_RUN) and FD is "anon_inode:kvm-vcpu:N", and it is no
 * kernel worker. N, or -1 (not in KVM_RUN now, "running", or not ours to
 * read).
 */
static int vm_vcpu_of_syscall(int root, pid_t pid, int taskfd, pid_t tid)
{
	char path[64], buf[256], link[64];
	unsigned long nr, fd, req;
	ssize_t n;
	int vcpu;

	snprintf(path, sizeof(path), "%d/syscall", (int)tid);
	n = fs_read_at(taskfd, path, buf, sizeof(buf));
	if (n <= 0 || sscanf(buf, "%lu %lx %lx", &nr, &fd, &req) != 3 ||
	    nr != SYS_ioctl || req != VM_KVM_RUN || fd > INT_MAX)
		return -1;
	snprintf(path, sizeof(path), "%d/fd/%lu", (int)pid, fd);
	n = readlinkat(root, path, link, sizeof(link));
	if (n <= 0 || (size_t)n >= sizeof(link) ||
	    vm_fd_kind(link, (size_t)n, &vcpu) != VM_FD_VCPU ||
	    vm_thread_is_worker(taskfd, tid))
		return -1;
	return vcpu;
}

/* One thread of a VM as vm_load_vcpus_at reads it. */
struct vm_thread {
	pid_t tid;
	int named; /* the vCPU its name says, or -1 */
};

static int vm_load_vcpus_at(int root, struct vm_info *v)
{
	char path[48], comm[64];
	const struct fs_entry *e;
	struct fs_dir dir;
	struct vm_thread *t = NULL;
	size_t nt = 0;
	int taskfd;

	vm_vcpus_clear(v);
	snprintf(path, sizeof(path), "%d/task", (int)v->pid);
	if (fs_dir_open(&dir, root, path))
		return dir.err;
	taskfd = -1;
	while ((e = fs_dir_next(&dir))) {
		pid_t tid;

		taskfd = e->dirfd;
		if (!vm_parse_id(e->name, &tid))
			continue;
		snprintf(path, sizeof(path), "%d/comm", (int)tid);
		/* a thread that just exited has no comm: not a vCPU now */
		if (fs_read_at(e->dirfd, path, comm, sizeof(comm)) < 0)
			continue;
		t = xrealloc(t, (nt + 1) * sizeof(*t));
		t[nt].tid = tid;
		t[nt].named = vm_vcpu_index_of_comm(comm);
		v->named |= t[nt++].named >= 0;
	}
	/* the kernel first: of the named threads where there are some (a
	 * VMM that names its vCPU threads names them all), else of all */
	for (size_t i = 0; taskfd >= 0 && i < nt; i++) {
		int index;

		if (v->named && t[i].named < 0)
			continue;
		index = vm_vcpu_of_syscall(root, v->pid, taskfd, t[i].tid);
		if (index >= 0)
			vm_vcpus_learn(&v->vcpus, &v->nvcpus,
				       &(struct vm_vcpu){ index, t[i].tid,
							  true });
	}
	/* then the names, where the kernel showed nothing against them */
	for (size_t i = 0; i < nt; i++)
		if (t[i].named >= 0)
			vm_vcpus_learn(&v->vcpus, &v->nvcpus,
				       &(struct vm_vcpu){ t[i].named, t[i].tid,
							  false });
	fs_dir_close(&dir);
	free(t);
	if (v->nvcpus)
		qsort(v->vcpus, v->nvcpus, sizeof(*v->vcpus), vm_vcpu_cmp);
	return 0;
}

/*
 * The processes that may hold a VM: on the running system, those KVM's
 * debugfs directory names (so no other process's fds are read); under an
 * injected proc root, or when debugfs cannot be read, every process.
 */
static int vm_candidate_pids(int root, pid_t **pids)
{
	struct stat a, b;
	int dbg, n = -1;

	/* root is the system's /proc when it is the same directory */
	if (!fstat(root, &a) && !stat("/proc/self/..", &b) &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
	    vm_pidns_is_init(root)) {
		dbg = fs_open_dir(AT_FDCWD, VM_DEBUGFS_KVM);
		if (dbg >= 0) {
			n = vm_debugfs_pids(dbg, root, pids);
			close(dbg);
		}
	}
	if (n < 0)
		n = vm_proc_pids(root, pids);
	return n;
}

/*
 * Pids of every VM under root, sorted; *ndenied counts the processes whose
 * fds could not be read (other users' processes when not root). Caller frees
 * *pids. Returns the count or -errno.
 */
static int vm_scan_vm_pids(int root, pid_t **pids, size_t *ndenied)
{
	pid_t *p;
	int n, m = 0;

	*ndenied = 0;
	n = vm_candidate_pids(root, &p);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		int rc = vm_pid_has_vm(root, p[i]);

		if (rc == -EACCES || rc == -EPERM)
			(*ndenied)++;
		if (rc > 0)
			p[m++] = p[i];
	}
	*pids = p;
	return m;
}

/* vm_list() on an open root, vCPUs loaded only when asked for. */
static int vm_list_at(int root, bool vcpus, struct vm_info **out, size_t *nout,
		      size_t *ndenied)
{
	struct vm_info *v = NULL;
	pid_t *pids = NULL;
	int n;

	n = vm_scan_vm_pids(root, &pids, ndenied);
	if (n < 0)
		return n;
	if (n)
		v = xcalloc((size_t)n, sizeof(*v));
	for (int i = 0; i < n; i++) {
		v[i].pid = pids[i];
		v[i].name = vm_guest_name_at(root, pids[i]);
		if (vcpus)
			vm_load_vcpus_at(root, &v[i]);
	}
	free(pids);
	*out = v;
	*nout = (size_t)n;
	return 0;
}

int vm_list(const char *proc_root, struct vm_info **out, size_t *n)
{
	size_t ndenied;
	int root, rc;

	*out = NULL;
	*n = 0;
	root = vm_root_open(proc_root);
	if (root < 0)
		return root;
	rc = vm_list_at(root, true, out, n, &ndenied);
	close(root);
	return rc;
}

int vm_list_pids(const char *proc_root, pid_t **pids)
{
	size_t ndenied;
	int root, n;

	*pids = NULL;
	root = vm_root_open(proc_root);
	if (root < 0)
		return root;
	n = vm_scan_vm_pids(root, pids, &ndenied);
	close(root);
	if (n <= 0) {
		free(*pids);
		*pids = NULL;
	}
	return n;
}

void vm_info_clear(struct vm_info *v)
{
	free(v->name);
	v->name = NULL;
	vm_vcpus_clear(v);
}

void vm_list_free(struct vm_info *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		vm_info_clear(&v[i]);
	free(v);
}

bool vm_pid_is_vm(const char *proc_root, pid_t pid)
{
	int root, rc;

	if (pid <= 0)
		return false;
	root = vm_root_open(proc_root);
	if (root < 0)
		return false;
	rc = vm_pid_has_vm(root, pid);
	close(root);
	return rc > 0;
}

char *vm_guest_name(const char *proc_root, pid_t pid)
{
	char *name;
	int root;

	if (pid <= 0)
		return NULL;
	root = vm_root_open(proc_root);
	if (root < 0)
		return NULL;
	name = vm_guest_name_at(root, pid);
	close(root);
	return name;
}

int vm_find_by_name(const char *proc_root, const char *run_root,
		    const char *name, pid_t **pids)
{
	int root, run, n, found = 0;
	size_t ndenied;
	pid_t *p;

	*pids = NULL;
	root = vm_root_open(proc_root);
	if (root < 0)
		return root;
	n = vm_scan_vm_pids(root, &p, &ndenied);
	if (n < 0) {
		close(root);
		return n;
	}
	run = run_root ? fs_open_dir(AT_FDCWD, run_root) : -1;
	for (int i = 0; i < n; i++) {
		struct vm_ident id;

		/* a VM that left meanwhile is no match */
		if (vm_ident_read_at(root, run, p[i], &id))
			continue;
		if (vm_ident_matches(&id, name))
			p[found++] = p[i];
		vm_ident_clear(&id);
	}
	if (run >= 0)
		close(run);
	close(root);
	if (found)
		*pids = p;
	else
		free(p);
	return found;
}

int vm_load_vcpus(const char *proc_root, struct vm_info *v)
{
	int root, rc;

	root = vm_root_open(proc_root);
	if (root < 0) {
		vm_vcpus_clear(v);
		return root;
	}
	rc = vm_load_vcpus_at(root, v);
	close(root);
	return rc;
}

/* Appends a name from a command line or the user, control bytes as '?'. */
static void vm_msg_add_name(struct errmsg *m, const char *name)
{
	char *s = xstrdup(name);

	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	errmsg_add(m, "%s", s);
	free(s);
}

/* Says why nothing was found when some processes could not be inspected. */
static void vm_msg_add_denied(struct errmsg *m, size_t ndenied)
{
	if (ndenied)
		errmsg_add(m,
			   "; %zu processes could not be inspected: run kvmstat as root",
			   ndenied);
}

/* That no VM was found, and why that may be. */
static void vm_msg_add_none(struct errmsg *m, size_t ndenied)
{
	errmsg_add(m, ndenied ? "no KVM VMs found" : "no KVM VMs are running");
	vm_msg_add_denied(m, ndenied);
}

/* "running VMs: 12 (name), 34" for the error messages, or that there are none. */
static void vm_msg_add_vms(struct errmsg *m, int root)
{
	struct vm_info *v;
	size_t n, ndenied;

	if (vm_list_at(root, false, &v, &n, &ndenied))
		return;
	if (!n)
		vm_msg_add_none(m, ndenied);
	else
		errmsg_add(m, "running VMs: ");
	for (size_t i = 0; i < n; i++) {
		errmsg_add(m, "%s%d", i ? ", " : "", (int)v[i].pid);
		if (v[i].name) {
			errmsg_add(m, " (");
			vm_msg_add_name(m, v[i].name);
			errmsg_add(m, ")");
		}
	}
	if (n)
		vm_msg_add_denied(m, ndenied);
	vm_list_free(v, n);
}

int vm_resolve_pid(const char *proc_root, pid_t pid, struct errmsg *msg)
{
	char path[16];
	struct stat st;
	int root, rc;

	errmsg_clear(msg);
	if (pid <= 0)
		return errmsg_set(msg, -EINVAL,
				  "invalid pid %d: give the process id of a running KVM VM",
				  (int)pid);
	root = vm_root_open(proc_root);
	if (root < 0)
		return errmsg_set(msg, root,
				  "cannot read %s: %s; is procfs mounted?",
				  proc_root, strerror(-root));
	snprintf(path, sizeof(path), "%d", (int)pid);
	rc = fstatat(root, path, &st, 0) ? -errno : vm_pid_has_vm(root, pid);
	if (rc > 0) {
		rc = 0;
	} else if (rc == -EACCES || rc == -EPERM) {
		rc = errmsg_set(msg, -EACCES,
				"cannot read the fds of pid %d to check it is a KVM VM: run kvmstat as root or as the VM's owner",
				(int)pid);
	} else if (rc == -ENOENT || rc == -ESRCH) {
		errmsg_set(msg, -ESRCH, "no process with pid %d; ", (int)pid);
		vm_msg_add_vms(msg, root);
		rc = -ESRCH;
	} else {
		errmsg_set(msg, -ENOENT,
			   "pid %d is not a KVM VM (it holds no anon_inode:kvm-vm fd); ",
			   (int)pid);
		vm_msg_add_vms(msg, root);
		rc = -ENOENT;
	}
	close(root);
	return rc;
}

/* Whether v[i]'s name already appeared before it (to list each name once). */
static bool vm_name_seen(const struct vm_info *v, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (v[j].name && !strcmp(v[j].name, v[i].name))
			return true;
	return false;
}

int vm_resolve_guest(const char *proc_root, const char *run_root,
		     const char *name, pid_t *pid, struct errmsg *msg)
{
	size_t n, ndenied, nmatch = 0, nnamed = 0;
	struct vm_info *v;
	bool *match;
	int root, run, rc;

	errmsg_clear(msg);
	if (!name || !*name)
		return errmsg_set(
			msg, -EINVAL,
			"empty guest name: give a running guest's name, UUID or unit");
	root = vm_root_open(proc_root);
	if (root < 0)
		return errmsg_set(msg, root,
				  "cannot read %s: %s; is procfs mounted?",
				  proc_root, strerror(-root));
	rc = vm_list_at(root, false, &v, &n, &ndenied);
	if (rc) {
		close(root);
		return errmsg_set(msg, rc,
				  "cannot list the processes in %s: %s",
				  proc_root, strerror(-rc));
	}
	/* each VM by who it is: its manager's name (which becomes the one
	 * listed), its UUID, its unit */
	match = xcalloc(n ? n : 1, sizeof(*match));
	run = run_root ? fs_open_dir(AT_FDCWD, run_root) : -1;
	for (size_t i = 0; i < n; i++) {
		struct vm_ident id;

		if (vm_ident_read_at(root, run, v[i].pid, &id))
			continue;
		match[i] = vm_ident_matches(&id, name);
		free(v[i].name);
		v[i].name = id.name;
		id.name = NULL;
		vm_ident_clear(&id);
	}
	if (run >= 0)
		close(run);
	close(root);
	for (size_t i = 0; i < n; i++) {
		nnamed += v[i].name != NULL;
		if (match[i]) {
			if (!nmatch)
				*pid = v[i].pid;
			nmatch++;
		}
	}
	if (nmatch == 1) {
		rc = 0;
	} else if (nmatch) {
		errmsg_add(msg, "guest name \"");
		vm_msg_add_name(msg, name);
		errmsg_add(msg, "\" matches several VMs (pids");
		for (size_t i = 0; i < n; i++)
			if (match[i])
				errmsg_add(msg, " %d", (int)v[i].pid);
		errmsg_add(msg, "): use -p PID instead");
		rc = -ENOTUNIQ;
	} else {
		const char *sep = "";

		errmsg_add(msg, "no guest named \"");
		vm_msg_add_name(msg, name);
		errmsg_add(msg, "\" (");
		if (!n)
			vm_msg_add_none(msg, ndenied);
		if (nnamed) {
			errmsg_add(msg, "running guests: ");
			for (size_t i = 0; i < n; i++) {
				if (!v[i].name || vm_name_seen(v, i))
					continue;
				errmsg_add(msg, "%s", sep);
				vm_msg_add_name(msg, v[i].name);
				sep = ", ";
			}
		}
		if (n > nnamed) {
			errmsg_add(msg, "%sVMs without a name: pids",
				   nnamed ? "; " : "");
			for (size_t i = 0; i < n; i++)
				if (!v[i].name)
					errmsg_add(msg, " %d", (int)v[i].pid);
			errmsg_add(msg, ", select them with -p PID");
		}
		if (n)
			vm_msg_add_denied(msg, ndenied);
		errmsg_add(msg, ")");
		rc = -ENOENT;
	}
	free(match);
	vm_list_free(v, n);
	return rc;
}

int vm_load_vcpus_debugfs(const char *debugfs_root, struct vm_info *v)
{
	char prefix[32], path[NAME_MAX + 8], buf[32];
	const struct fs_entry *de, *ce;
	struct fs_dir d, vd;
	long tid, idx;
	int nvcpus = 0;

	vm_vcpus_clear(v);
	if (fs_dir_open(&d, AT_FDCWD, debugfs_root))
		return d.err;
	snprintf(prefix, sizeof(prefix), "%d-", v->pid);
	while ((de = fs_dir_next(&d))) {
		if (strncmp(de->name, prefix, strlen(prefix)))
			continue;
		if (fs_dir_open(&vd, de->dirfd, de->name))
			continue;
		while ((ce = fs_dir_next(&vd))) {
			if (strncmp(ce->name, "vcpu", 4) ||
			    util_parse_int(ce->name + 4, 0, INT_MAX, &idx))
				continue;
			nvcpus++;
			snprintf(path, sizeof(path), "%s/pid", ce->name);
			if (fs_read_at(ce->dirfd, path, buf, sizeof(buf)) <= 0)
				continue;
			buf[strcspn(buf, "\n")] = '\0';
			if (util_parse_int(buf, 1, INT_MAX, &tid))
				continue;
			vm_vcpus_add(v, (int)idx, (pid_t)tid);
		}
		fs_dir_close(&vd);
	}
	fs_dir_close(&d);
	if (v->nvcpus)
		qsort(v->vcpus, v->nvcpus, sizeof(*v->vcpus), vm_vcpu_cmp);
	return nvcpus;
}

struct vm_vcpu_fds {
	int *idx;
	size_t n, cap;
};

static int vm_vcpu_fd(int fd, enum vm_fd_kind kind, int vcpu, void *ctx)
{
	struct vm_vcpu_fds *f = ctx;

	(void)fd;
	if (kind != VM_FD_VCPU)
		return 0;
	if (f->n == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 8;
		f->idx = xrealloc(f->idx, f->cap * sizeof(*f->idx));
	}
	f->idx[f->n++] = vcpu;
	return 0;
}

static int vm_int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int vm_vcpu_fds(const char *proc_root, pid_t pid, int **out)
{
	struct vm_vcpu_fds f = { 0 };
	int root = vm_root_open(proc_root), rc;

	*out = NULL;
	if (root < 0)
		return root;
	rc = vm_proc_fds(root, pid, vm_vcpu_fd, &f);
	close(root);
	if (rc < 0) {
		free(f.idx);
		return rc;
	}
	if (f.n)
		qsort(f.idx, f.n, sizeof(*f.idx), vm_int_cmp);
	*out = f.idx;
	return (int)f.n;
}

unsigned long vm_thread_count(const char *proc_root, pid_t pid)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%d/task",
		 proc_root ? proc_root : "/proc", (int)pid);
	/* a task directory links to itself, its parent and each thread */
	if (stat(path, &st) || st.st_nlink < 3)
		return 0;
	return (unsigned long)st.st_nlink - 2;
}

int vm_load_vcpu_threads(const char *proc_root, const char *debugfs_root,
			 struct vm_info *v)
{
	struct vm_info held = { .pid = v->pid };
	int rc = vm_load_vcpus(proc_root, v), n;
	bool all = v->nvcpus > 0;

	for (size_t i = 0; i < v->nvcpus; i++)
		all &= v->vcpus[i].kernel;
	/* every thread named as a vCPU was seen in KVM_RUN: nothing for
	 * debugfs to tell (an idle VM's usual case, one read less a vCPU) */
	if ((v->named && all) || !debugfs_root)
		return rc;
	n = vm_load_vcpus_debugfs(debugfs_root, &held);
	/* none: not known (arm64's KVM makes no vcpuN directories there) */
	v->nheld = n > 0 ? n : -1;
	for (size_t i = 0; i < held.nvcpus; i++)
		vm_vcpus_learn(&v->vcpus, &v->nvcpus, &held.vcpus[i]);
	vm_info_clear(&held);
	if (v->nvcpus)
		qsort(v->vcpus, v->nvcpus, sizeof(*v->vcpus), vm_vcpu_cmp);
	return n < 0 && !v->nvcpus ? n : rc;
}
