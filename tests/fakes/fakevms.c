// SPDX-License-Identifier: GPL-2.0-only
/*
 * Many fake KVM VM processes at once, for the scale bench on hosts without
 * KVM (fakevm.py is one VM per Python process: too heavy by the hundred).
 * Usage: fakevms ROOT NVMS NVCPU [DEBUGFS]
 *
 * Forks NVMS processes; each holds one memfd per binary stats file (the
 * VM's and one per vCPU) laid out as fakevm.py lays them out (as the
 * kernel's KVM_GET_STATS_FD files: header, id, descriptors in no offset
 * order, data) and publishes itself under the fake proc root ROOT as a
 * QEMU would appear in /proc: ROOT/PID/fd links "anon_inode:kvm-vm",
 * "anon_inode:kvm-vm-stats" and "anon_inode:kvm-vcpu-stats:N" whose
 * numbers are the memfds' own (pidfd_getfd copies them), its command line
 * "-name guest=vmI", its real stat file and task/PID/comm. With DEBUGFS
 * (kvmstat's KVMSTAT_DEBUGFS_ROOT), each VM also has its directory there
 * as KVM makes it: "PID-FD" with a "vcpuN" directory per vCPU.
 *
 * Every vCPU starts with halt_exits 1; with FAKEVMS_FULL=1 in the
 * environment, every value of every file (histogram buckets too) starts at
 * 1 (series and histograms nothing leaves out). VM 0 is busy: its vCPU 0 adds 1 to
 * halt_exits every 100 us, from its start and after each "go", until
 * "stop". Prints "ready" once every VM is in ROOT. Commands on stdin:
 *   stop   VM 0 stops; answered "busy N": how many it added since its
 *          start
 *   go     VM 0 adds again
 *   vcpu   (stopped) VM 0 creates one more vCPU as KVM and a VMM do: its
 *          "vcpuN" directory in DEBUGFS, 5 ms later its stats fd;
 *          answered "vcpu N"
 *   quit   (or end of input) every VM leaves ROOT and exits
 *
 * With FAKEVMS_THREADS=idle or spin, each VM also runs one thread per vCPU
 * named as QEMU names them ("CPU N/KVM"), blocked or spinning in user
 * space, and FAKEVMS_PIN=CPU pins them to that host CPU; ROOT/PID/task is
 * then a link to the real /proc/PID/task, whose schedstat and stat files
 * kvmstat --vcpu-time reads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NAME_SIZE 48
#define DESC_LEN (16 + NAME_SIZE)
#define HIST_BUCKETS 32

struct stat_def {
	const char *name;
	uint32_t flags;
	int16_t exp;
	uint16_t size;
};

/* as fakevm.py: listed out of offset order; data in name order */
static const struct stat_def vcpu_stats[] = {
	{ "halt_wait_hist", 4 | 0x20, -9, HIST_BUCKETS },
	{ "halt_exits", 0, 0, 1 },
	{ "mmio_exits", 0, 0, 1 },
	{ "halt_wait_ns", 0x20, -9, 1 },
	{ "guest_mode", 1 | 0x40, 0, 1 },
};

static const struct stat_def vm_stats[] = {
	{ "max_mmu_page_hash_collisions", 2, 0, 1 },
	{ "remote_tlb_flush", 0, 0, 1 },
	{ "pages_4k", 1, 0, 1 },
};

static volatile sig_atomic_t stop_busy, go_busy, add_vcpu, quit;
static sigset_t idle_mask; /* while waiting: every signal */
static sigset_t busy_mask; /* blocked but while waiting */

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		stop_busy = 1;
	else if (sig == SIGUSR2)
		go_busy = 1;
	else if (sig == SIGHUP)
		add_vcpu = 1;
	else
		quit = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "fakevms: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct stat_def *)a)->name,
		      ((const struct stat_def *)b)->name);
}

/* Writes one stats file into a new memfd; *halt gets the file offset of
 * halt_exits' data (0 when it has none). */
static int stats_file(const char *ident, const struct stat_def *defs, size_t n,
		      off_t *halt)
{
	struct stat_def sorted[8];
	uint32_t where[8], off = 0;
	uint32_t desc_off = 24 + NAME_SIZE;
	uint32_t data_off = desc_off + DESC_LEN * (uint32_t)n;
	uint32_t hdr[6] = { 0, NAME_SIZE, (uint32_t)n, 24, desc_off, data_off };
	unsigned char blob[4096];
	uint64_t one = 1;
	int fd;

	memcpy(sorted, defs, n * sizeof(*defs));
	qsort(sorted, n, sizeof(*sorted), name_cmp);
	memset(blob, 0, sizeof(blob));
	*halt = 0;
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < n; j++)
			if (!strcmp(defs[j].name, sorted[i].name))
				where[j] = off;
		off += 8u * sorted[i].size;
	}
	memcpy(blob, hdr, sizeof(hdr));
	strncpy((char *)blob + 24, ident, NAME_SIZE - 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char *d = blob + desc_off + i * DESC_LEN;

		memcpy(d, &defs[i].flags, 4);
		memcpy(d + 4, &defs[i].exp, 2);
		memcpy(d + 6, &defs[i].size, 2);
		memcpy(d + 8, &where[i], 4);
		strcpy((char *)d + 16, defs[i].name);
		if (!strcmp(defs[i].name, "halt_exits")) {
			*halt = data_off + where[i];
			memcpy(blob + *halt, &one, sizeof(one));
		}
	}
	if (getenv("FAKEVMS_FULL") && !strcmp(getenv("FAKEVMS_FULL"), "1"))
		for (uint32_t at = 0; at < off; at += 8)
			memcpy(blob + data_off + at, &one, sizeof(one));
	fd = memfd_create("kvm-stats", 0);
	if (fd < 0 || pwrite(fd, blob, data_off + off, 0) != data_off + off)
		die("memfd");
	return fd;
}

static void put_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		die(path);
	close(fd);
}

static void link_fd(const char *dir, int fd, const char *target)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/fd/%d", dir, fd);
	if (symlink(target, path))
		die(path);
}

/* vCPU n of the VM whose proc directory is dir, as KVM_CREATE_VCPU makes
 * it (its debugfs directory), then its stats fd, as its VMM opens it. */
static void new_vcpu(const char *dir, const char *dbgdir, int n)
{
	struct timespec ts = { 0, 5000000 };
	char ident[64], path[4200];
	off_t halt;
	int fd;

	if (dbgdir[0]) {
		snprintf(path, sizeof(path), "%s/vcpu%d", dbgdir, n);
		if (mkdir(path, 0755))
			die(path);
	}
	nanosleep(&ts, NULL);
	snprintf(ident, sizeof(ident), "kvm-%d/vcpu-%d", (int)getpid(), n);
	fd = stats_file(ident, vcpu_stats, 5, &halt);
	snprintf(ident, sizeof(ident), "anon_inode:kvm-vcpu-stats:%d", n);
	link_fd(dir, fd, ident);
}

/* FAKEVMS_THREADS: a "vCPU" thread, blocked or spinning in user space. */
static void *fake_vcpu_thread(void *arg)
{
	volatile unsigned long spins = 0;

	if (!arg)
		for (;;)
			pause(); /* every signal blocked: the main thread's */
	while (!quit)
		spins++;
	return NULL;
}

/* FAKEVMS_THREADS=idle|spin: starts the vCPU threads (pinned with
 * FAKEVMS_PIN) and links dir/task to the real one; false when unset. */
static int fake_vcpu_threads(const char *dir, int nvcpu)
{
	const char *mode = getenv("FAKEVMS_THREADS"),
		   *pin = getenv("FAKEVMS_PIN");
	char path[4200], target[64];

	if (!mode || !*mode)
		return 0;
	for (int c = 0; c < nvcpu; c++) {
		pthread_t t;
		char name[20];

		if (pthread_create(&t, NULL, fake_vcpu_thread,
				   strcmp(mode, "spin") ? NULL : (void *)1))
			die("pthread_create");
		snprintf(name, sizeof(name), "CPU %d/KVM", c);
		pthread_setname_np(t, name);
		if (pin && *pin) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(atoi(pin), &set);
			if (pthread_setaffinity_np(t, sizeof(set), &set))
				die("FAKEVMS_PIN");
		}
	}
	snprintf(path, sizeof(path), "%s/task", dir);
	snprintf(target, sizeof(target), "/proc/%d/task", (int)getpid());
	if (symlink(target, path))
		die(path);
	return 1;
}

/* One VM process: never returns. */
static void vm_main(const char *root, const char *dbg, int index, int nvcpu,
		    int readyfd, int busyfd)
{
	char tmp[4096], final[4096], path[4200], ident[64], stat[1024];
	char dbgdir[4096] = "";
	off_t halt, halt0 = 0;
	uint64_t v = 1;
	int vmfd, *vcpu = calloc((size_t)nvcpu, sizeof(*vcpu));
	pid_t pid = getpid();
	ssize_t n;
	int fd, kvmfd;

	snprintf(ident, sizeof(ident), "kvm-%d", (int)pid);
	vmfd = stats_file(ident, vm_stats, 3, &halt);
	for (int c = 0; c < nvcpu; c++) {
		snprintf(ident, sizeof(ident), "kvm-%d/vcpu-%d", (int)pid, c);
		vcpu[c] = stats_file(ident, vcpu_stats, 5, &halt);
		if (!c)
			halt0 = halt;
	}
	kvmfd = open("/dev/null", O_RDONLY);
	snprintf(tmp, sizeof(tmp), "%s/.%d", root, (int)pid);
	snprintf(final, sizeof(final), "%s/%d", root, (int)pid);
	snprintf(path, sizeof(path), "%s/fd", tmp);
	if (mkdir(tmp, 0755) || mkdir(path, 0755))
		die(tmp);
	link_fd(tmp, kvmfd, "anon_inode:kvm-vm");
	link_fd(tmp, vmfd, "anon_inode:kvm-vm-stats");
	for (int c = 0; c < nvcpu; c++) {
		snprintf(ident, sizeof(ident), "anon_inode:kvm-vcpu-stats:%d",
			 c);
		link_fd(tmp, vcpu[c], ident);
	}
	n = snprintf(ident, sizeof(ident),
		     "qemu-system-x86_64%c-name%cguest=vm%d", 0, 0, index);
	snprintf(path, sizeof(path), "%s/cmdline", tmp);
	put_file(path, ident, (size_t)n + 1);
	fd = open("/proc/self/stat", O_RDONLY);
	n = fd >= 0 ? read(fd, stat, sizeof(stat)) : -1;
	if (n <= 0)
		die("/proc/self/stat");
	close(fd);
	snprintf(path, sizeof(path), "%s/stat", tmp);
	put_file(path, stat, (size_t)n);
	if (!fake_vcpu_threads(tmp, nvcpu)) {
		snprintf(path, sizeof(path), "%s/task", tmp);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/task/%d", tmp, (int)pid);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/task/%d/comm", tmp, (int)pid);
		put_file(path, "qemu-system-x86\n", 16);
	}
	if (rename(tmp, final))
		die(final);
	if (dbg) {
		snprintf(dbgdir, sizeof(dbgdir), "%s/%d-%d", dbg, (int)pid,
			 kvmfd);
		if (mkdir(dbgdir, 0755))
			die(dbgdir);
		for (int c = 0; c < nvcpu; c++) {
			snprintf(path, sizeof(path), "%s/vcpu%d", dbgdir, c);
			if (mkdir(path, 0755))
				die(path);
		}
	}
	if (write(readyfd, "r", 1) != 1)
		die("ready");
	close(readyfd);
	while (busyfd >= 0 && !quit) {
		struct timespec ts = { 0, 100000 };
		uint64_t added;

		sigprocmask(SIG_SETMASK, &idle_mask, NULL);
		while (!stop_busy && !quit) {
			v++;
			if (pwrite(vcpu[0], &v, sizeof(v), halt0) != sizeof(v))
				die("pwrite");
			nanosleep(&ts, NULL);
		}
		sigprocmask(SIG_BLOCK, &busy_mask, NULL);
		stop_busy = 0;
		added = v - 1;
		if (write(busyfd, &added, sizeof(added)) != sizeof(added))
			die("busy");
		while (!go_busy && !quit) {
			sigsuspend(&idle_mask);
			if (!add_vcpu)
				continue;
			add_vcpu = 0;
			new_vcpu(final, dbgdir, nvcpu);
			added = (uint64_t)nvcpu++;
			if (write(busyfd, &added, sizeof(added)) !=
			    sizeof(added))
				die("vcpu");
		}
		go_busy = 0;
	}
	while (!quit)
		sigsuspend(&idle_mask);
	/* as procfs does, the directory goes with the process */
	nftw(final, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	if (dbgdir[0])
		nftw(dbgdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	_exit(0);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int nvms, nvcpu, ready[2], busy[2];
	char line[64];
	pid_t *pids;

	if (argc < 4 || argc > 5 || (nvms = atoi(argv[2])) < 1 ||
	    (nvcpu = atoi(argv[3])) < 1) {
		fprintf(stderr, "usage: fakevms ROOT NVMS NVCPU [DEBUGFS]\n");
		return 2;
	}
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigemptyset(&busy_mask);
	sigaddset(&busy_mask, SIGHUP);
	sigaddset(&busy_mask, SIGUSR1);
	sigaddset(&busy_mask, SIGUSR2);
	sigaddset(&busy_mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &busy_mask, &idle_mask);
	if (pipe(ready) || pipe(busy))
		die("pipe");
	pids = calloc((size_t)nvms, sizeof(*pids));
	for (int i = 0; i < nvms; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork");
		if (!pids[i]) {
			close(ready[0]);
			close(busy[0]);
			if (i)
				close(busy[1]);
			vm_main(argv[1], argc > 4 ? argv[4] : NULL, i, nvcpu,
				ready[1], i ? -1 : busy[1]);
		}
	}
	close(ready[1]);
	close(busy[1]);
	/* SIGTERM ends the wait for input as "quit" does */
	sigprocmask(SIG_SETMASK, &idle_mask, NULL);
	for (int i = 0; i < nvms; i++) {
		char c;

		if (read(ready[0], &c, 1) != 1)
			die("a VM failed");
	}
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "stop", 4)) {
			uint64_t total;

			kill(pids[0], SIGUSR1);
			if (read(busy[0], &total, sizeof(total)) !=
			    sizeof(total))
				die("busy VM");
			printf("busy %llu\n", (unsigned long long)total);
			fflush(stdout);
		} else if (!strncmp(line, "go", 2)) {
			kill(pids[0], SIGUSR2);
		} else if (!strncmp(line, "vcpu", 4)) {
			uint64_t n;

			kill(pids[0], SIGHUP);
			if (read(busy[0], &n, sizeof(n)) != sizeof(n))
				die("busy VM");
			printf("vcpu %llu\n", (unsigned long long)n);
			fflush(stdout);
		} else if (!strncmp(line, "quit", 4)) {
			break;
		}
	}
	for (int i = 0; i < nvms; i++)
		kill(pids[i], SIGTERM);
	for (int i = 0; i < nvms; i++)
		waitpid(pids[i], NULL, 0);
	return 0;
}
