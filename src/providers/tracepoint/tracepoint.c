// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tracepoint provider: counts every kvm:* tracepoint with perf events
 * in counting mode, one group per CPU system-wide (or per thread of the VM
 * with -p/-g, picking up threads that appear later), read with one read()
 * per group. Child events such as kvm_exit(HLT), of the tracepoints the
 * arch/ descriptor names, come from the exit-reason tables in the running
 * kernel's format files (the descriptor's tables as fallback) and are
 * counted by one small BPF program per tracepoint, which costs the
 * guest one map update per exit whatever the number of reasons; without BPF
 * (or with --no-bpf) they are kvm_stat's filtered perf events, one per
 * reason and CPU.
 */
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch.h"
#include "bpf_count.h"
#include "fs.h"
#include "hashtab.h"
#include "options.h"
#include "provider.h"
#include "tpformat.h"
#include "util.h"
#include "vm.h"

#define TP_BPF_MAX_ENTRIES 65536
#define TP_BPF_EVENT_BASE 256 /* BPF event index of plain event i */

/* One reason of one table: raw value → field id. */
struct tp_reason {
	uint64_t value;
	int field;
};

/* One reason table of a child source, with the guard that selects it. */
struct tp_table {
	uint64_t mask;
	bool guarded, negated; /* applies when isa ==/!= guard */
	int64_t guard;
	struct tp_reason *r; /* sorted by value */
	size_t n;
};

/* A tracepoint with children: decoding tables and how to count them. */
struct tp_source {
	int ev;		 /* index into events */
	int parent;	 /* field id of the parent */
	char prefix[64]; /* "kvm_exit(" … */
	struct tp_format *fmt;
	struct bpf_count_field reason, isa;
	char reason_name[64], isa_name[64];
	struct tp_table tabs[4];
	size_t ntabs;
};

struct tp_event {
	char *name;
	int id;	   /* tracepoint id */
	int field; /* field id when counted itself, else -1 */
};

/* One event in every group: a tracepoint, maybe filtered, and its field. */
struct tp_member {
	int id;
	char *filter; /* NULL: unfiltered */
	int field;
};

struct tp_group {
	int cpu;   /* CPU, or -1 for a thread group */
	pid_t tid; /* thread, or -1 for a CPU group */
	int vcpu;  /* vCPU index of the thread, or -1 */
	int *fds;  /* one per member, leader first */
	size_t nfds;
	uint64_t *final; /* counts of an exited thread, per member */
};

/* vCPU indices of the threads of one VM, from their names. */
struct tp_vm {
	pid_t pid;
	struct vm_info info;
	bool loaded;
	unsigned long loaded_at; /* refresh of the last load */
	bool is_vm;		 /* holds a KVM VM (kernel threads and
					 * helpers fire kvm events too) */
	struct vm_vcpu *known;	 /* every vCPU thread seen */
	size_t nknown;
	bool alive; /* the process exists (checked once
					 * per refresh, at alive_at) */
	unsigned long alive_at;
};

struct tp_priv {
	char events_dir[PATH_MAX]; /* tracefs events/kvm */
	const char *proc_root;
	const char *debugfs_root; /* vcpuN/pid where threads are unnamed */
	pid_t pid;		  /* -p, or 0 */
	struct tp_event *ev;
	size_t nev;
	struct tp_source *src; /* one per child source of the arch
					 * descriptor at most */
	size_t nsrc;
	struct tp_member *mem;
	size_t nmem;
	struct tp_group *groups;
	size_t ngroups;
	size_t fds;	   /* perf fds held by groups */
	uint64_t *buf;	   /* group read buffer */
	uint64_t *acc;	   /* per field id, this refresh */
	uint64_t *retired; /* per field id, from closed groups */
	size_t nacc;
	struct bpf_count *bc;
	/* keys of processes that exited, read for the last time in this
	 * refresh: deleted after it, so the map never fills up */
	struct bpf_count_key *dead;
	size_t ndead, capdead;
	bool want_vms;
	struct tp_vm *vms;
	size_t nvms;
	/* BPF breakdowns collected during one read */
	struct tp_bd {
		pid_t pid;
		int vcpu;
		int field;
		uint64_t v;
		pid_t tid;
	} * bd;
	size_t nbd, capbd;
	struct hashtab bd_index; /* (pid, vcpu, field) -> bd */
	unsigned long refresh;	 /* reads so far */
	int *rep;		 /* field ids reported each refresh */
	size_t nrep;
	struct field_table *fields;
	struct provider *p;
};

static int perf_open(struct perf_event_attr *pa, pid_t pid, int cpu,
		     int group_fd)
{
	return (int)syscall(__NR_perf_event_open, pa, pid, cpu, group_fd,
			    PERF_FLAG_FD_CLOEXEC);
}

/* The kvm events directory under tracefs, wherever it is mounted; out has
 * PATH_MAX bytes. */
static int tp_find_events(const struct options *o, char out[PATH_MAX])
{
	static const char *const roots[] = { "/sys/kernel/tracing",
					     "/sys/kernel/debug/tracing" };
	const char *root;
	struct stat st;

	for (size_t i = 0; i < ARRAY_SIZE(roots) + 1; i++) {
		if (o->tracefs_root && i)
			break;
		root = o->tracefs_root ? o->tracefs_root :
		       i	       ? roots[i - 1] :
					 NULL;
		if (!root)
			continue;
		if (strlen(root) + sizeof("/events/kvm") > PATH_MAX)
			return -ENAMETOOLONG;
		strcpy(out, root);
		strcat(out, "/events/kvm");
		if (!stat(out, &st))
			return 0;
		if (o->tracefs_root)
			return -errno;
	}
	return -ENOENT;
}

static bool tp_probe(const struct options *o)
{
	char dir[PATH_MAX];

	return tp_find_events(o, dir) == 0;
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

static int tp_event_index(const struct tp_priv *tp, const char *name)
{
	for (size_t i = 0; i < tp->nev; i++)
		if (!strcmp(tp->ev[i].name, name))
			return (int)i;
	return -1;
}

static int reason_cmp(const void *a, const void *b)
{
	const struct tp_reason *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

/*
 * Whether t decodes a record whose guard field holds isa (a guard value);
 * with isa unknown (negative), every table does.
 */
static bool tp_table_applies(const struct tp_table *t, int64_t isa)
{
	if (!t->guarded || isa < 0)
		return true;
	return t->negated ? isa != t->guard : isa == t->guard;
}

/*
 * Child field name: prefix + name with the source's strip prefix removed.
 * Blanks, commas, quotes and parentheses in a reason (SVM's "DE excp",
 * s390's "host interruption") become '_': log and batch lines are split
 * on blanks, CSV on commas, and the parent is what precedes the '('.
 */
static void tp_child_name(char *out, size_t len, const struct tp_source *s,
			  const char *strip, const char *name)
{
	size_t n = strip ? strlen(strip) : 0, pre = strlen(s->prefix);

	if (n && !strncmp(name, strip, n) && name[n])
		name += n;
	snprintf(out, len, "%s%s)", s->prefix, name);
	for (char *c = out + pre; *c && c[1]; c++)
		if (*c <= ' ' || *c == 0x7f || strchr(",\"'()", *c))
			*c = '_';
}

/* Adds one table's reasons, interning the children the filter keeps. */
static void tp_add_table(struct tp_priv *tp, struct tp_source *s,
			 const char *strip, uint64_t mask, bool guarded,
			 bool negated, int64_t guard, size_t n,
			 const uint64_t *values, const char *const *names)
{
	struct tp_table *t = &s->tabs[s->ntabs++];
	char name[160];

	t->mask = mask;
	t->guarded = guarded;
	t->negated = negated;
	t->guard = guard;
	t->r = xcalloc(n ? n : 1, sizeof(*t->r));
	for (size_t i = 0; i < n; i++) {
		tp_child_name(name, sizeof(name), s, strip, names[i]);
		t->r[t->n].value = values[i];
		t->r[t->n].field = provider_wants(tp->p, name) ?
					   field_table_intern(tp->fields, name,
							      s->parent,
							      FIELD_CUMULATIVE,
							      "tracepoint") :
					   -1;
		t->n++;
	}
	qsort(t->r, t->n, sizeof(*t->r), reason_cmp);
}

static const char *tp_strip_for(const struct tp_symtab *t, const char *strip)
{
	return t->prefix ? t->prefix : strip;
}

/*
 * Sets up the children of one source of the arch descriptor from the
 * kernel's format file, or from the descriptor's table for the host's ISA
 * when the format names no reasons.
 */
static int tp_setup_source(struct tp_priv *tp, const struct arch_desc *arch,
			   const struct arch_source *src, const char *isa)
{
	const char *ev_name = src->event;
	const char *fname = src->field;
	const char *strip = src->strip;
	struct tp_source *s = &tp->src[tp->nsrc];
	const struct tp_field *f, *g;
	char path[PATH_MAX + 256];
	int ev = tp_event_index(tp, ev_name), rc;

	if (ev < 0)
		return 0;
	memset(s, 0, sizeof(*s));
	snprintf(path, sizeof(path), "%s/%s/format", tp->events_dir, ev_name);
	rc = tp_format_load(path, &s->fmt);
	if (rc)
		return 0;
	f = tp_format_field(s->fmt, fname);
	if (!f) {
		tp_format_free(s->fmt);
		return 0;
	}
	s->ev = ev;
	s->reason.offset = f->offset;
	s->reason.size = f->size;
	snprintf(s->reason_name, sizeof(s->reason_name), "%s", fname);
	snprintf(s->prefix, sizeof(s->prefix), "%s(", ev_name);
	s->parent = field_table_intern(tp->fields, ev_name, -1,
				       FIELD_CUMULATIVE, "tracepoint");
	for (size_t i = 0; i < s->fmt->ntabs && s->ntabs < ARRAY_SIZE(s->tabs);
	     i++) {
		const struct tp_symtab *t = &s->fmt->tabs[i];
		uint64_t *values;
		const char **names;
		struct tp_table probe = { .guarded = t->guard_field != NULL,
					  .negated = t->guard_negated,
					  .guard = t->guard_value };
		int64_t guard = arch_guard_value(arch, t->guard_field, isa);

		if (strcmp(t->field, fname) || !tp_table_applies(&probe, guard))
			continue;
		if (t->guard_field && !s->isa.size) {
			g = tp_format_field(s->fmt, t->guard_field);
			if (!g)
				continue;
			s->isa.offset = g->offset;
			s->isa.size = g->size;
			snprintf(s->isa_name, sizeof(s->isa_name), "%s",
				 t->guard_field);
		}
		values = xcalloc(t->nsyms ? t->nsyms : 1, sizeof(*values));
		names = xcalloc(t->nsyms ? t->nsyms : 1, sizeof(*names));
		for (size_t j = 0; j < t->nsyms; j++) {
			values[j] = t->syms[j].value;
			names[j] = t->syms[j].name;
		}
		tp_add_table(tp, s, tp_strip_for(t, strip), t->mask,
			     probe.guarded, probe.negated, probe.guard,
			     t->nsyms, values, names);
		free(values);
		free(names);
	}
	if (!s->ntabs) {
		const struct arch_exit_table *at = arch_table_for(arch, isa);

		if (at && !strcmp(at->event, ev_name) &&
		    !strcmp(at->field, fname)) {
			uint64_t *values = xcalloc(at->n + 1, sizeof(*values));
			const char **names = xcalloc(at->n + 1, sizeof(*names));

			for (size_t j = 0; j < at->n; j++) {
				values[j] = at->reasons[j].value;
				names[j] = at->reasons[j].name;
			}
			tp_add_table(tp, s, strip, at->mask, false, false, 0,
				     at->n, values, names);
			free(values);
			free(names);
		}
	}
	if (!s->ntabs) {
		tp_format_free(s->fmt);
		return 0;
	}
	tp->nsrc++;
	return 0;
}

static bool tp_source_wanted(const struct tp_source *s)
{
	for (size_t i = 0; i < s->ntabs; i++)
		for (size_t j = 0; j < s->tabs[i].n; j++)
			if (s->tabs[i].r[j].field >= 0)
				return true;
	return false;
}

static void tp_add_member(struct tp_priv *tp, int id, char *filter, int field)
{
	tp->mem = xrealloc(tp->mem, (tp->nmem + 1) * sizeof(*tp->mem));
	tp->mem[tp->nmem].id = id;
	tp->mem[tp->nmem].filter = filter;
	tp->mem[tp->nmem].field = field;
	tp->nmem++;
}

/* kvm_stat's way: one filtered event per wanted reason, in every group. */
static void tp_add_filtered_children(struct tp_priv *tp, struct tp_source *s)
{
	for (size_t i = 0; i < s->ntabs; i++) {
		const struct tp_table *t = &s->tabs[i];

		for (size_t j = 0; j < t->n; j++) {
			char *filter;

			if (t->r[j].field < 0)
				continue;
			if (t->guarded)
				filter = xasprintf("%s %s %lld && %s == %llu",
						   s->isa_name,
						   t->negated ? "!=" : "==",
						   (long long)t->guard,
						   s->reason_name,
						   (unsigned long long)t->r[j]
							   .value);
			else
				filter = xasprintf("%s == %llu", s->reason_name,
						   (unsigned long long)t->r[j]
							   .value);
			tp_add_member(tp, tp->ev[s->ev].id, filter,
				      t->r[j].field);
		}
	}
}

static void tp_close_group(struct tp_priv *tp, struct tp_group *g)
{
	for (size_t i = 0; i < g->nfds; i++)
		if (g->fds[i] >= 0)
			close(g->fds[i]);
	tp->fds -= g->nfds;
	free(g->fds);
	g->fds = NULL;
	g->nfds = 0;
}

/* The error for a perf event that could not be opened, with nopen perf
 * events open at that moment. */
static int tp_perf_error(struct tp_priv *tp, int err, const char *event,
			 size_t nopen)
{
	struct rlimit rl;

	if (err == -EMFILE && !getrlimit(RLIMIT_NOFILE, &rl))
		provider_msg(tp->p, false,
			     "too many open files opening kvm:%s: %zu perf events open, the limit is %llu file descriptors; raise it (ulimit -n) or select fewer fields with -f",
			     event, nopen, (unsigned long long)rl.rlim_cur);
	else if (err == -EMFILE || err == -ENFILE)
		provider_msg(tp->p, false,
			     "too many open files opening kvm:%s (%zu perf events open): raise the limit (ulimit -n) or select fewer fields with -f",
			     event, nopen);
	else if (err == -EACCES || err == -EPERM)
		provider_msg(tp->p, false,
			     "no permission to count kvm:%s: run as root, or allow it with sysctl kernel.perf_event_paranoid=-1",
			     event);
	else if (err == -ENOENT || err == -ENODEV)
		provider_msg(tp->p, false,
			     "kvm:%s cannot be counted on this kernel (perf tracepoints unavailable)",
			     event);
	else
		provider_msg(tp->p, false, "perf_event_open kvm:%s: %s", event,
			     strerror(-err));
	return err;
}

static const char *tp_event_name_by_id(const struct tp_priv *tp, int id)
{
	for (size_t i = 0; i < tp->nev; i++)
		if (tp->ev[i].id == id)
			return tp->ev[i].name;
	return "?";
}

/* Opens one group of every member, on a CPU or for a thread. */
static int tp_open_group(struct tp_priv *tp, int cpu, pid_t tid, int vcpu)
{
	struct tp_group g = { .cpu = cpu, .tid = tid, .vcpu = vcpu };
	int rc;

	if (!tp->nmem)
		return 0;
	g.fds = xmalloc(tp->nmem * sizeof(*g.fds));
	for (size_t i = 0; i < tp->nmem; i++) {
		struct perf_event_attr pa;

		memset(&pa, 0, sizeof(pa));
		pa.type = PERF_TYPE_TRACEPOINT;
		pa.size = sizeof(pa);
		pa.config = (uint64_t)tp->mem[i].id;
		pa.read_format = PERF_FORMAT_GROUP;
		g.fds[i] = perf_open(&pa, tid, cpu, i ? g.fds[0] : -1);
		if (g.fds[i] < 0) {
			size_t nopen = tp->fds + i;

			rc = -errno;
			g.nfds = i;
			tp->fds += i;
			tp_close_group(tp, &g);
			if (rc == -ESRCH) /* the thread is already gone */
				return rc;
			return tp_perf_error(tp, rc,
					     tp_event_name_by_id(tp,
								 tp->mem[i].id),
					     nopen);
		}
		if (tp->mem[i].filter &&
		    ioctl(g.fds[i], PERF_EVENT_IOC_SET_FILTER,
			  tp->mem[i].filter)) {
			rc = -errno;
			g.nfds = i + 1;
			tp->fds += i + 1;
			tp_close_group(tp, &g);
			provider_msg(tp->p, false,
				     "the kernel refused the tracepoint filter \"%s\": %s",
				     tp->mem[i].filter, strerror(-rc));
			return rc;
		}
	}
	g.nfds = tp->nmem;
	tp->fds += g.nfds;
	tp->groups = xrealloc(tp->groups,
			      (tp->ngroups + 1) * sizeof(*tp->groups));
	tp->groups[tp->ngroups++] = g;
	return 0;
}

/* Online CPUs from sysfs ("0-3,8"), falling back to sysconf. */
static int tp_online_cpus(int **cpus)
{
	char buf[4096], *s;
	int n = 0, cap = 64;

	*cpus = xmalloc(cap * sizeof(**cpus));
	if (fs_read_at(AT_FDCWD, "/sys/devices/system/cpu/online", buf,
		       sizeof(buf)) <= 0) {
		long m = sysconf(_SC_NPROCESSORS_ONLN);

		for (long i = 0; i < m; i++) {
			if (n == cap)
				*cpus = xrealloc(*cpus,
						 (cap *= 2) * sizeof(**cpus));
			(*cpus)[n++] = (int)i;
		}
		return n;
	}
	for (s = strtok(buf, ",\n"); s; s = strtok(NULL, ",\n")) {
		int a, b;

		if (sscanf(s, "%d-%d", &a, &b) != 2) {
			if (sscanf(s, "%d", &a) != 1)
				continue;
			b = a;
		}
		for (int c = a; c <= b; c++) {
			if (n == cap)
				*cpus = xrealloc(*cpus,
						 (cap *= 2) * sizeof(**cpus));
			(*cpus)[n++] = c;
		}
	}
	return n;
}

static struct tp_vm *tp_vm_get(struct tp_priv *tp, pid_t pid)
{
	for (size_t i = 0; i < tp->nvms; i++)
		if (tp->vms[i].pid == pid)
			return &tp->vms[i];
	tp->vms = xrealloc(tp->vms, (tp->nvms + 1) * sizeof(*tp->vms));
	memset(&tp->vms[tp->nvms], 0, sizeof(tp->vms[0]));
	tp->vms[tp->nvms].pid = pid;
	tp->vms[tp->nvms].info.pid = pid;
	tp->vms[tp->nvms].is_vm = pid == tp->pid ||
				  vm_pid_is_vm(tp->proc_root, pid);
	return &tp->vms[tp->nvms++];
}

/* Whether a process still exists (looked at once per refresh). */
static bool tp_proc_alive(struct tp_priv *tp, struct tp_vm *vm)
{
	char path[PATH_MAX + 32];
	struct stat st;

	if (vm->alive_at != tp->refresh) {
		snprintf(path, sizeof(path), "%s/%d", tp->proc_root, vm->pid);
		vm->alive = stat(path, &st) == 0;
		vm->alive_at = tp->refresh;
	}
	return vm->alive;
}

/* Whether a VM's breakdowns are live: they go stale (shown as gone) when
 * its process exits, but with -p the VM's last counts stay shown. */
static bool tp_vm_alive(struct tp_priv *tp, struct tp_vm *vm)
{
	return tp->pid || tp_proc_alive(tp, vm);
}

/* Forgets the processes that exited and hold no more map keys. */
static void tp_vms_prune(struct tp_priv *tp)
{
	size_t n = 0;

	for (size_t i = 0; i < tp->nvms; i++) {
		struct tp_vm *vm = &tp->vms[i];

		if (vm->pid != tp->pid && vm->alive_at == tp->refresh &&
		    !vm->alive) {
			free(vm->info.vcpus);
			free(vm->known);
			continue;
		}
		tp->vms[n++] = *vm;
	}
	tp->nvms = n;
}

/* Adds the threads just loaded to those known, so that the counts of a
 * vCPU thread that has exited still go to its vCPU. */
static void tp_vm_remember(struct tp_vm *vm)
{
	for (size_t i = 0; i < vm->info.nvcpus; i++) {
		bool known = false;

		for (size_t j = 0; j < vm->nknown && !known; j++)
			known = vm->known[j].tid == vm->info.vcpus[i].tid;
		if (known)
			continue;
		vm->known = xrealloc(vm->known,
				     (vm->nknown + 1) * sizeof(*vm->known));
		vm->known[vm->nknown++] = vm->info.vcpus[i];
	}
}

/* vCPU index of a thread, from its QEMU-style name (or debugfs); -1 when
 * unknown. The names are loaded again for an unknown thread at most once
 * per VM and refresh, or always when reload is true. */
static int tp_vcpu_of(struct tp_priv *tp, pid_t pid, pid_t tid, bool reload)
{
	struct tp_vm *vm = tp_vm_get(tp, pid);

	for (int pass = 0; pass < 2; pass++) {
		if (!vm->loaded ||
		    (pass && (reload || vm->loaded_at != tp->refresh))) {
			vm_load_vcpus(tp->proc_root, &vm->info);
			if (!vm->info.nvcpus)
				vm_load_vcpus_debugfs(tp->debugfs_root,
						      &vm->info);
			tp_vm_remember(vm);
			vm->loaded = true;
			vm->loaded_at = tp->refresh;
		} else if (pass) {
			break;
		}
		for (size_t i = 0; i < vm->nknown; i++)
			if (vm->known[i].tid == tid)
				return vm->known[i].index;
	}
	return -1;
}

/* Threads named (or first run) after their group opened get their vCPU
 * index now: one reload of the thread names per refresh at most. */
static void tp_assign_vcpus(struct tp_priv *tp)
{
	bool reloaded = false;

	if (!tp->want_vms)
		return;
	for (size_t i = 0; i < tp->ngroups; i++) {
		struct tp_group *g = &tp->groups[i];

		if (g->tid <= 0 || g->vcpu >= 0 || !g->nfds)
			continue;
		g->vcpu = tp_vcpu_of(tp, tp->pid, g->tid, !reloaded);
		reloaded = true;
	}
}

/* Opens a group for every thread of the VM that has none yet. */
static int tp_scan_threads(struct tp_priv *tp)
{
	char path[PATH_MAX + 256];
	const struct fs_entry *e;
	struct fs_dir dir;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/%d/task", tp->proc_root, tp->pid);
	if (fs_dir_open(&dir, AT_FDCWD, path))
		return dir.err;
	while ((e = fs_dir_next(&dir))) {
		long tid;
		bool known = false;

		if (util_parse_int(e->name, 1, INT_MAX, &tid))
			continue;
		for (size_t i = 0; i < tp->ngroups; i++)
			if (tp->groups[i].tid == (pid_t)tid)
				known = true;
		if (known)
			continue;
		rc = tp_open_group(tp, -1, (pid_t)tid,
				   tp_vcpu_of(tp, tp->pid, (pid_t)tid, true));
		if (rc == -ESRCH)
			rc = 0;
		if (rc)
			break;
	}
	fs_dir_close(&dir);
	return rc;
}

static void tp_grow_acc(struct tp_priv *tp)
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
static void tp_report(struct tp_priv *tp, int field)
{
	for (size_t i = 0; i < tp->nrep; i++)
		if (tp->rep[i] == field)
			return;
	tp->rep = xrealloc(tp->rep, (tp->nrep + 1) * sizeof(*tp->rep));
	tp->rep[tp->nrep++] = field;
}

static void tp_free_priv(struct tp_priv *tp)
{
	for (size_t i = 0; i < tp->ngroups; i++) {
		tp_close_group(tp, &tp->groups[i]);
		free(tp->groups[i].final);
	}
	free(tp->groups);
	bpf_count_free(tp->bc);
	for (size_t i = 0; i < tp->nsrc; i++) {
		for (size_t j = 0; j < tp->src[i].ntabs; j++)
			free(tp->src[i].tabs[j].r);
		tp_format_free(tp->src[i].fmt);
	}
	free(tp->src);
	for (size_t i = 0; i < tp->nmem; i++)
		free(tp->mem[i].filter);
	free(tp->mem);
	for (size_t i = 0; i < tp->nev; i++)
		free(tp->ev[i].name);
	free(tp->ev);
	for (size_t i = 0; i < tp->nvms; i++) {
		free(tp->vms[i].info.vcpus);
		free(tp->vms[i].known);
	}
	free(tp->vms);
	free(tp->dead);
	free(tp->buf);
	free(tp->acc);
	free(tp->retired);
	free(tp->bd);
	hashtab_free(&tp->bd_index);
	free(tp->rep);
	free(tp);
}

/* Counts every counted event per thread in BPF; best effort. */
static void tp_attach_all(struct tp_priv *tp)
{
	struct bpf_count_field none = { 0, 0 };
	int rc = 0;

	if (!tp->bc)
		tp->bc = bpf_count_new(TP_BPF_MAX_ENTRIES, &rc);
	if (!tp->bc) {
		provider_msg(tp->p, true,
			     "BPF unavailable (%s): no per-VM tracepoint counts",
			     strerror(-rc));
		return;
	}
	for (size_t i = 0; i < tp->nev; i++) {
		if (tp->ev[i].field < 0)
			continue;
		rc = bpf_count_attach(tp->bc, tp->ev[i].id,
				      (uint16_t)(TP_BPF_EVENT_BASE + i), none,
				      none);
		if (rc) {
			provider_msg(tp->p, true,
				     "BPF program for kvm:%s: %s: per-VM counts incomplete",
				     tp->ev[i].name, strerror(-rc));
			return;
		}
	}
}

static int tp_open(struct provider *p, const struct options *o)
{
	struct tp_priv *tp = xcalloc(1, sizeof(*tp));
	const char *isa;
	bool children = false;
	int *cpus, ncpus, rc;

	tp->p = p;
	tp->fields = p->fields;
	tp->pid = o->pid;
	tp->proc_root = o->proc_root;
	tp->debugfs_root = o->debugfs_root;
	tp->want_vms = p->want_vms;
	rc = tp_find_events(o, tp->events_dir);
	if (rc) {
		provider_msg(p, false,
			     "no kvm tracepoints: mount tracefs (mount -t tracefs none /sys/kernel/tracing) and load the kvm module");
		goto out_free;
	}
	rc = tp_list_events(tp);
	if (rc) {
		provider_msg(p, false,
			     "cannot read the kvm tracepoints in %s: %s (run as root)",
			     tp->events_dir, strerror(-rc));
		goto out_free;
	}
	isa = arch_detect_isa(arch_host, "/sys");
	tp->src = xcalloc(arch_nsources(arch_host) + 1, sizeof(*tp->src));
	for (size_t i = 0; arch_host->sources[i]; i++)
		tp_setup_source(tp, arch_host, arch_host->sources[i], isa);

	/* Parents the filter keeps; a source's parent is counted when its
	 * own name is wanted. */
	for (size_t i = 0; i < tp->nev; i++) {
		if (!provider_wants(p, tp->ev[i].name))
			continue;
		tp->ev[i].field = field_table_intern(p->fields, tp->ev[i].name,
						     -1, FIELD_CUMULATIVE,
						     "tracepoint");
		tp_add_member(tp, tp->ev[i].id, NULL, tp->ev[i].field);
	}
	for (size_t i = 0; i < tp->nsrc; i++)
		children |= tp_source_wanted(&tp->src[i]);
	if (children && !o->no_bpf) {
		tp->bc = bpf_count_new(TP_BPF_MAX_ENTRIES, &rc);
		for (size_t i = 0; tp->bc && i < tp->nsrc; i++) {
			if (!tp_source_wanted(&tp->src[i]))
				continue;
			rc = bpf_count_attach(tp->bc, tp->ev[tp->src[i].ev].id,
					      (uint16_t)i, tp->src[i].reason,
					      tp->src[i].isa);
			if (rc) {
				bpf_count_free(tp->bc);
				tp->bc = NULL;
			}
		}
		if (!tp->bc)
			provider_msg(p, true,
				     "BPF unavailable (%s): counting exit reasons with filtered perf events, which slows busy guests",
				     strerror(-rc));
	}
	if (children && !tp->bc)
		for (size_t i = 0; i < tp->nsrc; i++)
			tp_add_filtered_children(tp, &tp->src[i]);
	if (!tp->nmem && !tp->bc) {
		rc = -ENOENT;
		provider_msg(p, false, "no tracepoint matches the field filter");
		goto out_free;
	}
	for (size_t i = 0; i < tp->nmem; i++)
		if (!tp->mem[i].filter)
			tp_report(tp, tp->mem[i].field);
	for (size_t i = 0; i < tp->nsrc; i++)
		for (size_t j = 0; j < tp->src[i].ntabs; j++)
			for (size_t k = 0; k < tp->src[i].tabs[j].n; k++)
				if (tp->src[i].tabs[j].r[k].field >= 0 &&
				    (tp->bc || children))
					tp_report(tp,
						  tp->src[i].tabs[j].r[k].field);
	tp->buf = xmalloc((tp->nmem + 1) * sizeof(*tp->buf));
	if (tp->pid) {
		rc = tp_scan_threads(tp);
		if (rc)
			goto out_free;
	} else {
		ncpus = tp_online_cpus(&cpus);
		for (int i = 0; i < ncpus; i++) {
			rc = tp_open_group(tp, cpus[i], -1, -1);
			if (rc) {
				free(cpus);
				goto out_free;
			}
		}
		free(cpus);
	}
	/* per-VM and per-vCPU counts of every event for the per-guest view:
	 * one BPF program per tracepoint, only while that view is shown.
	 * Attached after the perf groups count and read before them (see
	 * tp_read), so a VM's count never exceeds the host's */
	if (tp->want_vms && !tp->pid && !o->no_bpf)
		tp_attach_all(tp);
	p->priv = tp;
	return 0;

out_free:
	tp_free_priv(tp);
	return rc;
}

/* Reads one group's counts into tp->buf; false when it cannot be read. */
static bool tp_read_group(struct tp_priv *tp, struct tp_group *g)
{
	size_t want = (1 + g->nfds) * sizeof(uint64_t);
	ssize_t n = read(g->fds[0], tp->buf, want);

	return n == (ssize_t)want && tp->buf[0] == g->nfds;
}

static bool tp_thread_alive(const struct tp_priv *tp, pid_t tid)
{
	char path[PATH_MAX + 256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%d/task/%d", tp->proc_root, tp->pid,
		 tid);
	return stat(path, &st) == 0;
}

/* Adds v to the breakdown (pid, vcpu, field) of this refresh; a hash keeps
 * it linear in the number of BPF keys. Returns the entry. */
static struct tp_bd *tp_bd_add(struct tp_priv *tp, pid_t pid, int vcpu,
			       int field, uint64_t v)
{
	uint32_t h = hashtab_hash3((uint32_t)field, (uint32_t)pid,
				   (uint32_t)(vcpu + 1));
	struct hashtab_iter it = hashtab_iter(&tp->bd_index, h);
	long i;

	while ((i = hashtab_next(&tp->bd_index, &it)) >= 0) {
		struct tp_bd *b = &tp->bd[i];

		if (b->pid == pid && b->vcpu == vcpu && b->field == field) {
			b->v += v;
			return b;
		}
	}
	if (tp->nbd == tp->capbd) {
		tp->capbd = tp->capbd ? tp->capbd * 2 : 256;
		tp->bd = xrealloc(tp->bd, tp->capbd * sizeof(*tp->bd));
	}
	tp->bd[tp->nbd] = (struct tp_bd){ pid, vcpu, field, v, 0 };
	hashtab_add(&tp->bd_index, h, tp->nbd);
	return &tp->bd[tp->nbd++];
}

/* Empties the breakdowns for a new refresh. */
static void tp_bd_clear(struct tp_priv *tp)
{
	hashtab_clear(&tp->bd_index);
	tp->nbd = 0;
}

/* Field id of a BPF key, interning numeric names for unknown reasons. */
static int tp_key_field(struct tp_priv *tp, const struct bpf_count_key *k)
{
	struct tp_source *s;
	char name[160];
	int field;

	if (k->event >= tp->nsrc)
		return -1;
	s = &tp->src[k->event];
	for (size_t i = 0; i < s->ntabs; i++) {
		const struct tp_table *t = &s->tabs[i];
		struct tp_reason key = { .value = k->reason & t->mask }, *r;

		if (!tp_table_applies(t, k->isa))
			continue;
		r = bsearch(&key, t->r, t->n, sizeof(*t->r), reason_cmp);
		if (r)
			return r->field;
	}
	snprintf(name, sizeof(name), "%s%u)", s->prefix, k->reason);
	if (!provider_wants(tp->p, name))
		return -1;
	field = field_table_find(tp->fields, name);
	if (field < 0) {
		field = field_table_intern(tp->fields, name, s->parent,
					   FIELD_CUMULATIVE, "tracepoint");
		tp_report(tp, field);
		tp_grow_acc(tp);
	}
	return field;
}

static void tp_bpf_key(void *ctx, const struct bpf_count_key *k, uint64_t count)
{
	struct tp_priv *tp = ctx;
	struct tp_vm *vm;
	int field, vcpu;

	vm = tp_vm_get(tp, (pid_t)k->tgid);
	if ((pid_t)k->tgid != tp->pid && !tp_proc_alive(tp, vm)) {
		/* the last reading of a process that exited: its counts
		 * stay in the totals, its key leaves the map */
		if (!tp->pid && k->event < TP_BPF_EVENT_BASE) {
			field = tp_key_field(tp, k);
			if (field >= 0)
				tp->retired[field] += count;
		}
		if (tp->ndead == tp->capdead) {
			tp->capdead = tp->capdead ? tp->capdead * 2 : 64;
			tp->dead = xrealloc(tp->dead,
					    tp->capdead * sizeof(*tp->dead));
		}
		tp->dead[tp->ndead++] = *k;
		return;
	}
	if (tp->pid && (pid_t)k->tgid != tp->pid)
		return;
	if (k->event >= TP_BPF_EVENT_BASE) {
		/* a plain event per thread: breakdowns only, the totals come
		 * from the perf groups */
		size_t ev = k->event - TP_BPF_EVENT_BASE;

		if (ev >= tp->nev || tp->ev[ev].field < 0 || !tp->want_vms)
			return;
		if (!vm->is_vm || !tp_vm_alive(tp, vm))
			return;
		field = tp->ev[ev].field;
		tp_bd_add(tp, (pid_t)k->tgid, SAMPLE_ALL_VCPUS, field, count);
		vcpu = tp_vcpu_of(tp, (pid_t)k->tgid, (pid_t)k->tid, false);
		if (vcpu >= 0)
			tp_bd_add(tp, (pid_t)k->tgid, vcpu, field, count)
				->tid = (pid_t)k->tid;
		return;
	}
	field = tp_key_field(tp, k);
	if (field < 0)
		return;
	tp->acc[field] += count;
	if (!tp->want_vms)
		return;
	if (!vm->is_vm || !tp_vm_alive(tp, vm))
		return;
	if (!tp->pid)
		tp_bd_add(tp, (pid_t)k->tgid, SAMPLE_ALL_VCPUS, field, count);
	vcpu = tp_vcpu_of(tp, (pid_t)k->tgid, (pid_t)k->tid, false);
	if (vcpu >= 0)
		tp_bd_add(tp, (pid_t)k->tgid, vcpu, field, count)
			->tid = (pid_t)k->tid;
}

/* Adds a group's counts to the totals; per-vCPU samples for vCPU threads. */
static void tp_account_group(struct tp_priv *tp, const struct tp_group *g,
			     uint64_t *acc, struct sample_set *out)
{
	for (size_t i = 0; i < g->nfds; i++) {
		acc[tp->mem[i].field] += tp->buf[1 + i];
		if (out && g->vcpu >= 0)
			sample_set_push(out, tp->mem[i].field, tp->pid, g->vcpu,
					g->tid, tp->buf[1 + i], 0);
	}
}

static int tp_read(struct provider *p, struct sample_set *out)
{
	struct tp_priv *tp = p->priv;
	int rc = 0;

	tp_grow_acc(tp);
	memset(tp->acc, 0, tp->nacc * sizeof(*tp->acc));
	tp_bd_clear(tp);
	tp->refresh++;
	if (tp->pid)
		tp_scan_threads(tp);
	tp_assign_vcpus(tp);
	/* the BPF map (per-VM counts) before the perf groups (the host's):
	 * both count on, so the host's later reading is never below them */
	tp->ndead = 0;
	if (tp->bc && bpf_count_read(tp->bc, tp_bpf_key, tp))
		rc = -EIO;
	if (tp->bc && tp->ndead) {
		/* a key that stayed would count into retired again */
		if (bpf_count_delete(tp->bc, tp->dead, tp->ndead))
			rc = -EIO;
		tp_vms_prune(tp);
	}
	for (size_t i = 0; i < tp->ngroups; i++) {
		struct tp_group *g = &tp->groups[i];
		bool alive = g->tid <= 0 || tp_thread_alive(tp, g->tid);

		if (!g->nfds) {
			/* an exited vCPU thread: its last counts stay shown */
			for (size_t m = 0; g->final && g->vcpu >= 0 &&
					   tp->want_vms && m < tp->nmem;
			     m++)
				sample_set_push(out, tp->mem[m].field, tp->pid,
						g->vcpu, g->tid, g->final[m],
						0);
			continue;
		}
		if (!tp_read_group(tp, g)) {
			if (alive)
				rc = -EIO;
			continue;
		}
		if (alive) {
			tp_account_group(tp, g, tp->acc,
					 tp->want_vms ? out : NULL);
		} else {
			/* a thread that exited: keep its final counts */
			tp_account_group(tp, g, tp->retired,
					 tp->want_vms ? out : NULL);
			g->final = xmalloc(g->nfds * sizeof(*g->final));
			memcpy(g->final, tp->buf + 1,
			       g->nfds * sizeof(*g->final));
			tp_close_group(tp, g);
		}
	}
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
			     "some perf counters could not be read this time");
	return rc;
}

static void tp_close(struct provider *p)
{
	if (p->priv)
		tp_free_priv(p->priv);
	p->priv = NULL;
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
	.holds_kernel_fds = true,
};
