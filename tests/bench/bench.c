// SPDX-License-Identifier: GPL-2.0-only
/*
 * Provider benchmark: opens one provider as kvmstat would and measures the
 * CPU time (user + system) of each refresh (read + aggregate + snapshot)
 * and the file descriptors held. Prints figures; it is not a pass/fail test.
 *
 *   bench tracepoint [REGEX] [want_vms|no_bpf]   the kvm tracepoints
 *   bench debugfs ROOT [want_vms]      a debugfs tree (e.g. a fixture)
 *   bench hit                          added CPU per tracepoint hit
 *   bench hit_breakdown                its breakdown part alone
 *   bench mincount                     the minimal counter on every kvm
 *                                      tracepoint, until SIGTERM
 *   bench reads [N]                    N small files read each refresh:
 *                                      one pread per file, or one io_uring
 *                                      submission for them all
 *
 * For tracepoint it also prints the time from open to the end of the
 * first read (startup) and the CPU per refresh split into its stages
 * (provider read, stats update, snapshot build).
 *
 * hit: the CPU cost a tracepoint hit gains when counted, measured as the
 * issue describes: a loop of prctl(PR_SET_NAME) (each fires
 * task:task_rename) in blocks, counted and not counted alternating in one
 * thread, thread CPU time, median over pairs. KVMSTAT_TRACEFS_ROOT names
 * a fake tracefs (run.sh builds it) whose kvm_pio and kvm_userspace_exit
 * are task_rename. Compared: the minimal raw-tracepoint counter built
 * here (mincount.bpf.c), kvmstat on a plain event, kvmstat with per-VM
 * rows, kvmstat's record program (what kvm_exit's children use), and
 * the perf fallback; then, in a block of its own, the breakdown's keyed
 * program (--breakdown, issue 23) on sys_enter's raw arguments as on
 * kvm_pio's (one key per thread: its CPU's hint and the slot checked
 * against it, two array lookups and an add per hit), the same timed as
 * with --latency (the thread's pending hit found by its id, its slot the
 * hint, marked waiting; the exit-latency engine beside, whose time of the
 * exit the re-entry takes), and timed from a clock read of its own (where
 * exit latency does not run), the ways alternating round by round,
 * against the minimal counter on sys_enter.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/io_uring.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "brk_engine.h"
#include "errmsg.h"
#include "options.h"
#include "options_parse.h"
#include "provider.h"
#include "snapshot.h"
#include "stats.h"
#include "util.h"

#include "mincount.skel.h"

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static double thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), dbl_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define HIT_BLOCK 20000
#define HIT_PAIRS 40

/* Thread CPU ns of one block of renames. */
static double hit_block(void)
{
	double t0 = thread_ns();

	for (int i = 0; i < HIT_BLOCK; i++)
		prctl(PR_SET_NAME, i & 1 ? "bench-a" : "bench-b", 0, 0, 0);
	return thread_ns() - t0;
}

/* One way of counting task_rename: attach, detach. */
struct hit_way {
	const char *name;
	const char *regex; /* kvmstat's -f; NULL: the minimal counter */
	bool want_vms, no_bpf;
};

struct hit_state {
	struct mincount_bpf *mc;
	struct bpf_link *link;
	struct options o;
	struct provider_cfg cfg;
	struct provider p;
	struct stats s;
};

static int hit_attach(const struct hit_way *w, struct hit_state *h)
{
	char *args[8] = { "kvmstat", "-l", "-t", "-f", (char *)w->regex };
	struct errmsg err;
	int n = 5;

	if (!w->regex) {
		h->mc = mincount_bpf__open_and_load();
		if (!h->mc)
			return -1;
		h->link = bpf_program__attach_raw_tracepoint(h->mc->progs
								     .mincount,
							     "task_rename");
		return libbpf_get_error(h->link) ? -1 : 0;
	}
	if (w->no_bpf)
		args[n++] = "--no-bpf";
	if (options_parse(n, args, &h->o, &err))
		return -1;
	stats_init(&h->s, false);
	memset(&h->p, 0, sizeof(h->p));
	h->p.ops = provider_find("tracepoint");
	h->p.fields = &h->s.fields;
	h->p.filter = &h->o.filter;
	h->p.want_vms = w->want_vms;
	provider_cfg_init(&h->cfg, &h->o);
	if (h->p.ops->open(&h->p, &h->cfg)) {
		fprintf(stderr, "bench: %s: %s\n", w->name, h->p.msg.text);
		return -1;
	}
	if (errmsg_isset(&h->p.msg))
		fprintf(stderr, "bench: %s: %s\n", w->name, h->p.msg.text);
	return 0;
}

static void hit_detach(const struct hit_way *w, struct hit_state *h)
{
	if (!w->regex) {
		bpf_link__destroy(h->link);
		mincount_bpf__destroy(h->mc);
		return;
	}
	h->p.ops->close(&h->p);
	stats_free(&h->s);
	options_free(&h->o);
}

static int bench_hit_breakdown(void);

static int bench_hit(void)
{
	static const struct hit_way ways[] = {
		{ "minimal raw-tracepoint counter", NULL, false, false },
		{ "kvmstat, plain event", "^kvm_pio$", false, false },
		{ "kvmstat, plain event, per-VM rows", "^kvm_pio$", true,
		  false },
		{ "kvmstat, record program (children)",
		  "^kvm_userspace_exit\\(", false, false },
		{ "kvmstat --no-bpf, plain event (perf)", "^kvm_pio$", false,
		  true },
	};
	double added[ARRAY_SIZE(ways)], v[HIT_PAIRS];

	printf("== added CPU per tracepoint hit (prctl loop, %d renames per block, median of %d pairs)\n",
	       HIT_BLOCK, HIT_PAIRS);
	for (size_t w = 0; w < ARRAY_SIZE(ways); w++) {
		for (int i = 0; i < HIT_PAIRS; i++) {
			struct hit_state h;
			double off = hit_block(), on;

			if (hit_attach(&ways[w], &h))
				return 1;
			on = hit_block();
			hit_detach(&ways[w], &h);
			off = (off + hit_block()) / 2;
			v[i] = (on - off) / HIT_BLOCK;
		}
		added[w] = median(v, HIT_PAIRS);
		printf("%-42s %7.1f ns/hit  %5.2fx the minimal counter\n",
		       ways[w].name, added[w], added[w] / added[0]);
	}
	return bench_hit_breakdown();
}

/*
 * The breakdown's keyed program per hit (issue 23: at most 1.3x the
 * minimal counter, issue 31: with --latency too): its engine attached by
 * itself, raw, as it attaches to kvm_pio, untimed, timed as with
 * --latency and timed alone, against the minimal counter, both on
 * raw_syscalls:sys_enter, whose arguments (the registers, the system call's
 * number) give each thread one key, as a vCPU has one port it keeps
 * hitting (task_rename's second argument, a buffer on a kernel stack
 * whose offset is random at each system call, would make every hit a new
 * key). The ways alternate within each round (minimal, keyed, timed,
 * minimal, keyed...), each a pair of blocks without around one with, so
 * that a change in the machine's load falls on all of them alike.
 */
static int bench_hit_breakdown(void)
{
	static const char *const names[] = {
		"minimal raw-tracepoint counter",
		"breakdown keyed program (--breakdown)",
		"breakdown keyed program, timed (+--latency)",
		"  timed, each hit reading the clock",
	};
	enum {
		NW = ARRAY_SIZE(names)
	};
	double added[NW], v[NW][HIT_PAIRS];

	printf("== breakdown: added CPU per hit of its keyed program (sys_enter of a prctl loop, ways alternating, median of %d rounds)\n",
	       HIT_PAIRS);
	for (int i = 0; i < HIT_PAIRS; i++) {
		for (size_t w = 0; w < NW; w++) {
			struct brk_engine_cfg cfg = { .timed = w >= 2 };
			struct lat_engine_cfg lc = { .exit_id = -1,
						     .uexit_id = -1 };
			struct lat_engine *lat = NULL;
			struct mincount_bpf *mc = NULL;
			struct bpf_link *link = NULL;
			struct brk_engine *e = NULL;
			double off = hit_block(), on;
			const char *what = "the minimal counter";
			int err = -EINVAL;

			for (int k = 0; k < BRK_NKINDS; k++)
				cfg.src[k] = (struct brk_source){ .id = -1 };
			cfg.src[BRK_IOPORT].raw = "sys_enter";
			/* sys_enter(regs, id): the id as a port */
			cfg.src[BRK_IOPORT].key_arg = 1;
			cfg.src[BRK_IOPORT].dir_arg = 0;
			if (w) {
				/* --latency's engine (its maps; no
				 * tracepoint of its own here) */
				if (w == 2)
					cfg.lat = lat = lat_engine_open(&lc,
									&err,
									&what);
				if (w != 2 || lat)
					e = brk_engine_open(&cfg, &err, &what);
			} else {
				mc = mincount_bpf__open_and_load();
				link = mc ? bpf_program__attach_raw_tracepoint(
						    mc->progs.mincount,
						    "sys_enter") :
					    NULL;
				if (libbpf_get_error(link))
					link = NULL;
			}
			if (w ? !e : !link) {
				fprintf(stderr, "bench: breakdown: %s: %s\n",
					what, strerror(-err));
				mincount_bpf__destroy(mc);
				lat_engine_free(lat);
				return 1;
			}
			on = hit_block();
			if (w) {
				brk_engine_free(e);
				lat_engine_free(lat);
			} else {
				bpf_link__destroy(link);
				mincount_bpf__destroy(mc);
			}
			off = (off + hit_block()) / 2;
			v[w][i] = (on - off) / HIT_BLOCK;
		}
	}
	for (size_t w = 0; w < NW; w++) {
		added[w] = median(v[w], HIT_PAIRS);
		printf("%-46s %7.1f ns/hit  %5.2fx the minimal counter\n",
		       names[w], added[w], added[w] / added[0]);
	}
	return 0;
}

static volatile sig_atomic_t stop_now;

static void on_term(int sig)
{
	(void)sig;
	stop_now = 1;
}

/* The minimal counter on every kvm tracepoint, until SIGTERM. */
static int bench_mincount(void)
{
	struct mincount_bpf *mc = mincount_bpf__open_and_load();
	struct dirent *de;
	DIR *d = opendir("/sys/kernel/tracing/events/kvm");
	int n = 0;

	if (!mc || !d) {
		fprintf(stderr, "bench: mincount: cannot load or no tracefs\n");
		return 1;
	}
	while ((de = readdir(d))) {
		struct bpf_link *l;

		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		l = bpf_program__attach_raw_tracepoint(mc->progs.mincount,
						       de->d_name);
		n += !libbpf_get_error(l);
	}
	closedir(d);
	signal(SIGTERM, on_term);
	fprintf(stderr, "mincount: %d tracepoints\n", n);
	while (!stop_now)
		pause();
	mincount_bpf__destroy(mc);
	return 0;
}

/* Entries of a /proc/self directory. */
static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	if (d)
		closedir(d);
	return n;
}

static int count_fds(void)
{
	return count_entries("/proc/self/fd") - 1; /* the directory itself */
}

static int count_threads(void)
{
	return count_entries("/proc/self/task");
}

/*
 * bench reads: what a refresh of N stats fds costs by how they are read
 * (issue 22: at most 2 us per fd). N memfds hold a 288-byte data block (a
 * fake vCPU's); each round reads all N once by pread, then once by one
 * io_uring submission (IORING_OP_READ on registered files, the ring as
 * large as N), A B A B, a 32 MB walk and 20 ms of sleep before each (a
 * refresh finds the caches cold). Median per fd of the calling thread's
 * CPU and of the process's (every thread: io_uring hands a read of a file
 * without FMODE_NOWAIT, as memfds and KVM's stats fds are, to a kernel
 * worker thread of the process), and one system call's own cost.
 */
#define READS_LEN 288

struct reads_ring {
	int fd;
	unsigned int *sq_tail, *sq_mask, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	unsigned int entries;
};

static double clock_us(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int reads_ring_open(struct reads_ring *r, unsigned int n, int *fds)
{
	struct io_uring_params p = { 0 };
	unsigned char *sq, *cq;
	unsigned int *array;

	r->fd = (int)syscall(__NR_io_uring_setup, n, &p);
	if (r->fd < 0)
		return -errno;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned int),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		  IORING_OFF_SQ_RING);
	cq = mmap(NULL,
		  p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		  IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		       IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED)
		return -ENOMEM;
	r->sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	array = (unsigned int *)(sq + p.sq_off.array);
	r->cq_head = (unsigned int *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned int *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	r->entries = p.sq_entries;
	for (unsigned int i = 0; i < p.sq_entries; i++)
		array[i] = i;
	if (syscall(__NR_io_uring_register, r->fd, IORING_REGISTER_FILES, fds,
		    n))
		return -errno;
	return 0;
}

/* Reads file i of n into buf + i * READS_LEN, a ring-full per enter. */
static int reads_ring_round(struct reads_ring *r, unsigned int n,
			    unsigned char *buf)
{
	unsigned int next = 0, done = 0;

	while (done < n) {
		unsigned int tail = *r->sq_tail, k = 0, head;

		for (; next < n && k < r->entries; next++, k++, tail++) {
			struct io_uring_sqe *e = &r->sqes[tail & *r->sq_mask];

			memset(e, 0, sizeof(*e));
			e->opcode = IORING_OP_READ;
			e->flags = IOSQE_FIXED_FILE;
			e->fd = (int)next;
			e->addr = (uintptr_t)(buf + (size_t)next * READS_LEN);
			e->len = READS_LEN;
		}
		atomic_store_explicit((_Atomic unsigned int *)r->sq_tail, tail,
				      memory_order_release);
		if (syscall(__NR_io_uring_enter, r->fd, k, k,
			    IORING_ENTER_GETEVENTS, NULL, 0) < 0)
			return -errno;
		head = *r->cq_head;
		for (; head !=
		       atomic_load_explicit((_Atomic unsigned int *)r->cq_tail,
					    memory_order_acquire);
		     head++, done++)
			if (r->cqes[head & *r->cq_mask].res != READS_LEN)
				return -EIO;
		atomic_store_explicit((_Atomic unsigned int *)r->cq_head, head,
				      memory_order_release);
	}
	return 0;
}

static int bench_reads(unsigned int n)
{
	enum {
		ROUNDS = 31
	};
	double t[4][ROUNDS], a, b, nul;
	unsigned char data[READS_LEN], *buf = xmalloc((size_t)n * READS_LEN);
	size_t cool_len = 32u << 20;
	unsigned char *cool = xcalloc(1, cool_len);
	int *fds = xmalloc(n * sizeof(*fds)), rc;
	struct reads_ring r = { 0 };

	memset(data, 1, sizeof(data));
	for (unsigned int i = 0; i < n; i++) {
		fds[i] = memfd_create("bench-stats", MFD_CLOEXEC);
		if (fds[i] < 0 ||
		    write(fds[i], data, sizeof(data)) != READS_LEN) {
			perror("bench reads: memfd");
			return 1;
		}
	}
	a = clock_us(CLOCK_THREAD_CPUTIME_ID);
	for (int i = 0; i < 100000; i++)
		syscall(SYS_getppid);
	nul = (clock_us(CLOCK_THREAD_CPUTIME_ID) - a) / 100000;
	rc = reads_ring_open(&r, n, fds);
	for (int k = 0; k < ROUNDS; k++) {
		for (int m = 0; m < (rc ? 1 : 2); m++) {
			for (size_t i = 0; i < cool_len; i += 64)
				cool[i]++;
			usleep(20000);
			a = clock_us(CLOCK_THREAD_CPUTIME_ID);
			b = clock_us(CLOCK_PROCESS_CPUTIME_ID);
			if (m) {
				if (reads_ring_round(&r, n, buf)) {
					perror("bench reads: io_uring");
					return 1;
				}
			} else {
				for (unsigned int i = 0; i < n; i++)
					if (pread(fds[i],
						  buf + (size_t)i * READS_LEN,
						  READS_LEN, 0) != READS_LEN)
						return 1;
			}
			t[2 * m][k] = clock_us(CLOCK_THREAD_CPUTIME_ID) - a;
			t[2 * m + 1][k] = clock_us(CLOCK_PROCESS_CPUTIME_ID) -
					  b;
		}
	}
	printf("reads of %u stats-sized memfds, us per fd (median of %d, alternating): one system call %.2f; pread: thread %.2f, process %.2f",
	       n, ROUNDS, nul, median(t[0], ROUNDS) / n,
	       median(t[1], ROUNDS) / n);
	if (rc)
		printf("; io_uring: unavailable (%s)\n", strerror(-rc));
	else
		printf("; io_uring: thread %.2f, process %.2f (%d threads: io_uring's workers besides this one)\n",
		       median(t[2], ROUNDS) / n, median(t[3], ROUNDS) / n,
		       count_threads());
	return 0;
}

int main(int argc, char **argv)
{
	char *args[8] = { "kvmstat", "-l" };
	struct errmsg err;
	struct options o;
	struct provider_cfg cfg;
	struct provider p = { 0 };
	struct stats s;
	struct snapshot snap;
	struct snap_request req = { .vcpu = SAMPLE_ALL_VCPUS };
	int nargs = 2, iters = 2000, fds0, rc;
	double t0, t1, w0, startup, ph[3] = { 0 };
	bool tp;

	if (argc < 2) {
		fprintf(stderr,
			"usage: bench tracepoint [REGEX] [want_vms|no_bpf] | debugfs ROOT [want_vms] | hit | hit_breakdown | mincount | reads [N]\n");
		return 2;
	}
	if (!strcmp(argv[1], "hit_breakdown"))
		return bench_hit_breakdown();
	if (!strcmp(argv[1], "hit"))
		return bench_hit();
	if (!strcmp(argv[1], "mincount"))
		return bench_mincount();
	if (!strcmp(argv[1], "reads"))
		return bench_reads(argc > 2 ? (unsigned int)atoi(argv[2]) :
					      1500);
	tp = !strcmp(argv[1], "tracepoint");
	if (tp && argc > 2) {
		args[nargs++] = "-f";
		args[nargs++] = argv[2];
	}
	/* without a REGEX the monitor's field set, children left out (-l
	 * alone would count every child event, as kvm_stat's log does) */
	if (nargs == 2) {
		args[nargs++] = "-f";
		args[nargs++] = FILTER_DEFAULT;
	}
	if (tp && argc > 3 && !strcmp(argv[3], "no_bpf"))
		args[nargs++] = "--no-bpf";
	/* the root is an environment setting only, as for kvmstat */
	if (!strcmp(argv[1], "debugfs") && argc > 2)
		setenv("KVMSTAT_DEBUGFS_ROOT", argv[2], 1);
	if (options_parse(nargs, args, &o, &err)) {
		fprintf(stderr, "bench: %s\n", err.text);
		return 2;
	}
	p.ops = provider_find(argv[1]);
	if (!p.ops) {
		fprintf(stderr, "bench: no provider %s\n", argv[1]);
		return 2;
	}
	{
		struct rlimit rl;

		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	stats_init(&s, false);
	req.filter = &o.filter;
	p.fields = &s.fields;
	p.filter = &o.filter;
	p.want_vms = argc > 3 && !strcmp(argv[3], "want_vms");
	fds0 = count_fds();
	w0 = wall_ns();
	provider_cfg_init(&cfg, &o);
	rc = p.ops->open(&p, &cfg);
	if (rc) {
		fprintf(stderr, "bench: open %s: %s\n", argv[1], p.msg.text);
		return 1;
	}
	p.ops->read(&p, &s.set);
	startup = (wall_ns() - w0) / 1e6;
	t0 = cpu_seconds();
	for (int i = 0; i < iters; i++) {
		double a = thread_ns(), b, c;

		p.ops->read(&p, &s.set);
		b = thread_ns();
		stats_update(&s, util_now_ns());
		c = thread_ns();
		snapshot_build(&s, &req, &snap);
		snapshot_free(&snap);
		ph[0] += b - a;
		ph[1] += c - b;
		ph[2] += thread_ns() - c;
	}
	t1 = cpu_seconds();
	printf("%-10s %-30s fields %4zu  fds %5d  cpu/refresh %7.1f us",
	       argv[1],
	       !strcmp(argv[1], "debugfs") ?
		       (p.want_vms ? "tree, per-VM breakdowns" :
				     "tree, totals") :
	       argc > 3 ? argv[3] :
	       argc > 2 ? argv[2] :
			  "(default fields)",
	       s.fields.n, count_fds() - fds0, (t1 - t0) / iters * 1e6);
	if (tp)
		printf(" (read %.1f, stats %.1f, snapshot %.1f)  startup %.1f ms",
		       ph[0] / iters / 1e3, ph[1] / iters / 1e3,
		       ph[2] / iters / 1e3, startup);
	printf("\n");
	p.ops->close(&p);
	stats_free(&s);
	options_free(&o);
	return 0;
}
