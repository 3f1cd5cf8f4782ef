// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tracepoint provider's fallback where BPF cannot load (no CAP_BPF, an
 * old kernel, lockdown) or with --no-bpf: perf events in counting mode,
 * one group per CPU system-wide (or per thread of the VM with -p/-g,
 * picking up threads that appear later), read with one read() per group;
 * child events are kvm_stat's filtered events, one per reason and CPU.
 * Same fields and counts as the BPF engine, at a higher cost per hit.
 * A CPU that goes offline takes its events away for good (the kernel
 * stops them and splits the group, and they stay stopped when the CPU
 * comes back): each refresh reads their counts a last time, and opens a
 * new group on each CPU online without one. Between refreshes the kernel's
 * uevents say when a CPU goes or comes (tp_perf_hotplug), so that a CPU
 * that comes online is counted from then on, not from the next refresh.
 */
#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs.h"
#include "provider.h"
#include "tracepoint_int.h"
#include "util.h"
#include "vm.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38 /* Linux 5.8 */
#endif

static int perf_open(struct perf_event_attr *pa, pid_t pid, int cpu,
		     int group_fd)
{
	return (int)syscall(__NR_perf_event_open, pa, pid, cpu, group_fd,
			    PERF_FLAG_FD_CLOEXEC);
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

/* Whether this process holds capability cap in its effective set. */
static bool tp_has_cap(unsigned int cap)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d))
		return false;
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* kernel.perf_event_paranoid into *level; false where it cannot be read. */
static bool tp_paranoid(long *level)
{
	char buf[32];

	if (fs_read_at(AT_FDCWD, "/proc/sys/kernel/perf_event_paranoid", buf,
		       sizeof(buf)) <= 0)
		return false;
	buf[strcspn(buf, "\n")] = '\0';
	return !util_parse_int(buf, LONG_MIN, LONG_MAX, level);
}

/*
 * The kernel refused a perf event (-EACCES or -EPERM): what lets kvmstat
 * open it, by the kernel's rules. At kernel.perf_event_paranoid 2 and
 * below, CAP_PERFMON (or CAP_SYS_ADMIN, before Linux 5.8 the only one)
 * opens any; without it a thread's kernel events need the sysctl at 1 or
 * below and ptrace access to the thread, a CPU's at 0 or below. Above 2,
 * a level Debian and Ubuntu add and default to (3 and 4), only
 * CAP_SYS_ADMIN opens perf events at all, CAP_PERFMON or not. Root whose
 * capabilities were cut (a container, a service's bounding set) lacks
 * them as any user does: the capability is named, not the user.
 */
static void tp_perf_denied(struct tp_priv *tp, const char *event)
{
	bool admin = tp_has_cap(CAP_SYS_ADMIN);
	bool perfmon = admin || tp_has_cap(CAP_PERFMON);
	int need = tp->pid ? 1 : 0; /* a VM's threads, or every CPU */
	long level;

	if (!tp_paranoid(&level))
		provider_msg(tp->p, false,
			     "no permission to count kvm:%s: it needs CAP_PERFMON, or CAP_SYS_ADMIN where kernel.perf_event_paranoid is above 2",
			     event);
	else if (level > 2 && !admin)
		provider_msg(tp->p, false,
			     "no permission to count kvm:%s: kernel.perf_event_paranoid is %ld, where only CAP_SYS_ADMIN may open perf events (CAP_PERFMON is not enough): run with CAP_SYS_ADMIN, or lower it with sysctl kernel.perf_event_paranoid=2%s",
			     event, level,
			     perfmon ? " (CAP_PERFMON then suffices)" :
				       " and give kvmstat CAP_PERFMON");
	else if (!perfmon && level > need)
		provider_msg(tp->p, false,
			     "no permission to count kvm:%s: it needs CAP_PERFMON (or CAP_SYS_ADMIN), which this process lacks, or sysctl kernel.perf_event_paranoid=%d (it is %ld) to let processes without it count%s",
			     event, need, level,
			     tp->pid ? " the threads they may ptrace" : "");
	else if (!perfmon && tp->pid)
		provider_msg(tp->p, false,
			     "no permission to count kvm:%s in VM %d's threads: without CAP_PERFMON it needs ptrace access to them (the VM's own user, or CAP_SYS_PTRACE)",
			     event, (int)tp->pid);
	else
		provider_msg(tp->p, false,
			     "no permission to count kvm:%s, though %s and kernel.perf_event_paranoid is %ld: a security module (SELinux, AppArmor) or a seccomp filter refuses perf events",
			     event,
			     admin   ? "kvmstat has CAP_SYS_ADMIN" :
			     perfmon ? "kvmstat has CAP_PERFMON" :
				       "the sysctl allows it",
			     level);
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
		tp_perf_denied(tp, event);
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

/* The online CPU list ("0-3,8") into buf; false where sysfs has none. */
static bool tp_read_online(char *buf, size_t len)
{
	ssize_t n = fs_read_at(AT_FDCWD, "/sys/devices/system/cpu/online", buf,
			       len);

	if (n <= 0)
		return false;
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

/* Online CPUs from sysfs, falling back to sysconf; caller frees *cpus. */
static int tp_online_cpus(int **cpus)
{
	char buf[4096], *s, *save;
	int n = 0, cap = 64;

	*cpus = xmalloc(cap * sizeof(**cpus));
	if (!tp_read_online(buf, sizeof(buf))) {
		long m = sysconf(_SC_NPROCESSORS_ONLN);

		for (long i = 0; i < m; i++) {
			if (n == cap)
				*cpus = xrealloc(*cpus,
						 (cap *= 2) * sizeof(**cpus));
			(*cpus)[n++] = (int)i;
		}
		return n;
	}
	for (s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
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

/* Opens one group of every member, on a CPU or for a thread. -ENODEV,
 * said nowhere, for a CPU perf does not count on: offline, or coming or
 * going (the online list shows a CPU before perf takes it, and after). */
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
		pa.read_format = PERF_FORMAT_GROUP |
				 PERF_FORMAT_TOTAL_TIME_ENABLED;
		g.fds[i] = perf_open(&pa, tid, cpu, i ? g.fds[0] : -1);
		if (g.fds[i] < 0) {
			size_t nopen = tp->fds + i;

			rc = -errno;
			g.nfds = i;
			tp->fds += i;
			tp_close_group(tp, &g);
			if (rc == -ESRCH) /* the thread is already gone */
				return rc;
			if (rc == -ENODEV && cpu >= 0)
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

/* Reads one group's counts into tp->buf (number of members, time enabled,
 * a count per member); false when it cannot be read whole. */
static bool tp_read_group(struct tp_priv *tp, struct tp_group *g)
{
	size_t want = (2 + g->nfds) * sizeof(uint64_t);
	ssize_t n = read(g->fds[0], tp->buf, want);

	return n == (ssize_t)want && tp->buf[0] == g->nfds;
}

/*
 * A CPU group that stopped counting (its CPU went offline, maybe to come
 * back since): every member's count, read a last time, joins the retired
 * totals, and the group is closed. The kernel has split the group then, so
 * each member is read alone unless the group still reads whole. -EIO when
 * a count could not be read.
 */
static int tp_retire_cpu_group(struct tp_priv *tp, struct tp_group *g)
{
	int rc = 0;

	if (tp_read_group(tp, g)) {
		for (size_t i = 0; i < g->nfds; i++)
			tp->retired[tp->mem[i].field] += tp->buf[2 + i];
		goto out_close;
	}
	for (size_t i = 0; i < g->nfds; i++) {
		uint64_t v[3]; /* 1, time enabled, count */

		if (read(g->fds[i], v, sizeof(v)) == (ssize_t)sizeof(v) &&
		    v[0] == 1)
			tp->retired[tp->mem[i].field] += v[2];
		else
			rc = -EIO;
	}
out_close:
	tp_close_group(tp, g);
	return rc;
}

/*
 * Opens a group on each online CPU without one: a CPU offline at the start
 * or whose group retired. Looks only when the online list changed since
 * the last look or a group retired (retired), one small read otherwise.
 * Stops at the first error.
 */
static int tp_open_online(struct tp_priv *tp, bool retired)
{
	char now[4096];
	int *cpus, ncpus, rc = 0;
	bool missed = false;

	if (tp_read_online(now, sizeof(now))) {
		if (!retired && tp->online && !strcmp(tp->online, now))
			return 0;
	} else if (!retired && tp->online) {
		return 0; /* no list to watch: the sysconf count at the start */
	} else {
		now[0] = '\0';
	}
	free(tp->online);
	tp->online = NULL;
	ncpus = tp_online_cpus(&cpus);
	for (int i = 0; i < ncpus; i++) {
		bool has = false;

		for (size_t j = 0; j < tp->ngroups && !has; j++)
			has = tp->groups[j].cpu == cpus[i] &&
			      tp->groups[j].nfds;
		if (has)
			continue;
		rc = tp_open_group(tp, cpus[i], -1, -1);
		if (rc == -ENODEV) { /* coming or going: next time */
			missed = true;
			rc = 0;
		}
		if (rc)
			break;
	}
	free(cpus);
	if (!rc && !tp->ngroups) /* not one CPU */
		return tp_perf_error(tp, -ENODEV,
				     tp_event_name_by_id(tp, tp->mem[0].id), 0);
	/* a CPU without its group: look again next time */
	if (!rc && !missed)
		tp->online = xstrdup(now);
	return rc;
}

static bool tp_thread_alive(const struct tp_priv *tp, pid_t tid)
{
	char path[PATH_MAX + 256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%d/task/%d", tp->proc_root, tp->pid,
		 tid);
	return stat(path, &st) == 0;
}

/* Adds a group's counts to the totals; per-vCPU samples for vCPU threads. */
static void tp_account_group(struct tp_priv *tp, const struct tp_group *g,
			     uint64_t *acc, struct sample_set *out)
{
	for (size_t i = 0; i < g->nfds; i++) {
		acc[tp->mem[i].field] += tp->buf[2 + i];
		if (out && g->vcpu >= 0)
			sample_set_push(out, tp->mem[i].field, tp->pid, g->vcpu,
					g->tid, tp->buf[2 + i], 0);
	}
}

/* The kernel's uevents (CPU hotplug among them) on tp->uevent_fd; where
 * they cannot be had (a network namespace of its own, a filter), -1: the
 * refreshes still catch up, later. */
static void tp_uevent_open(struct tp_priv *tp)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_groups = 1, /* the kernel's own uevents */
	};
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			NETLINK_KOBJECT_UEVENT);

	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		fd = -1;
	}
	tp->uevent_fd = fd;
}

/* The CPU of a uevent "ACTION@/devices/system/cpu/cpuN" whose action is
 * online or offline: N, with *online; -1 for any other. */
static int tp_uevent_cpu(const char *msg, bool *online)
{
	static const char dev[] = "@/devices/system/cpu/cpu";
	const char *at = strchr(msg, '@');
	long cpu;

	if (!at || strncmp(at, dev, sizeof(dev) - 1) ||
	    util_parse_int(at + sizeof(dev) - 1, 0, INT_MAX, &cpu))
		return -1;
	if (!strncmp(msg, "online@", 7))
		*online = true;
	else if (!strncmp(msg, "offline@", 8))
		*online = false;
	else
		return -1;
	return (int)cpu;
}

void tp_perf_hotplug(struct tp_priv *tp)
{
	char msg[8192];
	bool came = false;
	ssize_t n;

	while ((n = recv(tp->uevent_fd, msg, sizeof(msg) - 1, 0)) >= 0 ||
	       errno == EINTR || errno == ENOBUFS) {
		bool online;
		int cpu;

		if (n < 0) {
			came = true; /* some were lost: look at them all */
			continue;
		}
		msg[n] = '\0'; /* the header comes first, NUL-terminated */
		cpu = tp_uevent_cpu(msg, &online);
		if (cpu < 0)
			continue;
		came |= online;
		if (online)
			continue;
		/* gone: its group's counts a last time, now */
		for (size_t i = 0; i < tp->ngroups; i++) {
			if (tp->groups[i].cpu != cpu)
				continue;
			tp_retire_cpu_group(tp, &tp->groups[i]);
			tp->groups[i] = tp->groups[--tp->ngroups];
			break;
		}
	}
	if (came)
		tp_open_online(tp, true);
}

/* Opens the perf events of every wanted event and child: per CPU, or per
 * thread of the -p VM. */
int tp_perf_open(struct tp_priv *tp)
{
	for (size_t i = 0; i < tp->nev; i++)
		if (tp->ev[i].field >= 0)
			tp_add_member(tp, tp->ev[i].id, NULL, tp->ev[i].field);
	if (tp->children)
		for (size_t i = 0; i < tp->nsrc; i++)
			tp_add_filtered_children(tp, &tp->src[i]);
	if (!tp->nmem) {
		provider_msg(tp->p, false,
			     "no tracepoint matches the field filter");
		return -ENOENT;
	}
	tp->buf = xmalloc((tp->nmem + 2) * sizeof(*tp->buf));
	if (tp->pid)
		return tp_scan_threads(tp);
	tp_uevent_open(tp);
	return tp_open_online(tp, false);
}

/*
 * Reads every CPU group into tp->acc; one that stopped, its CPU gone
 * offline, retires (and leaves the array). Then opens groups on CPUs that
 * are online without one.
 */
static int tp_read_cpus(struct tp_priv *tp)
{
	bool retired = false;
	size_t kept = 0;
	int rc = 0, r;

	for (size_t i = 0; i < tp->ngroups; i++) {
		struct tp_group *g = &tp->groups[i];

		/* time enabled stands still only for a stopped event */
		if (tp_read_group(tp, g) && tp->buf[1] != g->enabled) {
			g->enabled = tp->buf[1];
			tp_account_group(tp, g, tp->acc, NULL);
			tp->groups[kept++] = *g;
			continue;
		}
		r = tp_retire_cpu_group(tp, g);
		if (r && !rc)
			rc = r;
		retired = true;
	}
	tp->ngroups = kept;
	r = tp_open_online(tp, retired);
	return rc ? rc : r;
}

/* Reads every group into tp->acc (and per-vCPU samples into out). */
int tp_perf_read(struct tp_priv *tp, struct sample_set *out)
{
	int rc = 0;

	if (!tp->pid)
		return tp_read_cpus(tp);
	tp_scan_threads(tp);
	tp_assign_vcpus(tp);
	for (size_t i = 0; i < tp->ngroups; i++) {
		struct tp_group *g = &tp->groups[i];
		bool alive = tp_thread_alive(tp, g->tid);

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
			memcpy(g->final, tp->buf + 2,
			       g->nfds * sizeof(*g->final));
			tp_close_group(tp, g);
		}
	}
	return rc;
}

void tp_perf_close(struct tp_priv *tp)
{
	for (size_t i = 0; i < tp->ngroups; i++) {
		tp_close_group(tp, &tp->groups[i]);
		free(tp->groups[i].final);
	}
	free(tp->groups);
	free(tp->online);
	if (tp->uevent_fd >= 0)
		close(tp->uevent_fd);
	tp->uevent_fd = -1;
	for (size_t i = 0; i < tp->nmem; i++)
		free(tp->mem[i].filter);
	free(tp->mem);
	free(tp->buf);
}
