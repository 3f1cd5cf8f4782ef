// SPDX-License-Identifier: GPL-2.0-only
/*
 * Makes exact "exits" with chosen keys for the breakdown tests where no
 * guest can run: a fake tracefs (tests/system/breakdown_lib.sh) names
 * real syscall tracepoints kvm_pio, kvm_mmio, kvm_msr and kvm_hypercall,
 * their key and direction fields laid over the system call's arguments,
 * and oom:oom_score_adj_update kvm_entry. Each hit here is that system
 * call with the key and direction as arguments, failing at once on an
 * argument no call accepts (nothing changes):
 *   ioport: getpriority(PORT, DIR)          EINVAL (PORT > 2)
 *   mmio:   madvise(GPA, TYPE, -1)          EINVAL (bad advice)
 *   msr:    ioprio_get(WRITE, INDEX)        EINVAL (WRITE 0), ESRCH or a
 *                                           priority (a query only)
 *   hc:     dup(NR)                         EBADF (NR past any fd)
 * then, with GAP_US, a busy wait of GAP_US and a write to
 * /proc/self/oom_score_adj (the re-entry). With EXIT_US, each hit has an
 * exit before it: the thread renames itself to its own name (task_rename,
 * the fake kvm_exit of lib.sh's fake_kvm_exit) and waits EXIT_US busily.
 *
 * Usage: tpkeys VCPU:KIND:KEY:DIR:COUNT[:GAP_US[:NKEYS[:EXIT_US]]]...
 * (NKEYS: COUNT hits on each of KEY, KEY+1... KEY+NKEYS-1); each VCPU is a
 * thread named "CPU N/KVM" (as QEMU names vCPU threads) running its specs
 * in order. Prints "ready PID", waits for a line on stdin, runs them,
 * prints "done" and stays, threads and all, until a second line or the
 * end of stdin (so kvmstat can still tell its vCPU threads apart when it
 * reads).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_SPECS 64

struct spec {
	int vcpu;
	char kind[16];
	unsigned long long key;
	unsigned dir;
	unsigned long count;
	unsigned gap_us;
	unsigned long nkeys; /* COUNT hits on each of KEY..KEY+NKEYS-1 */
	unsigned exit_us;    /* an exit this long before each hit; 0: none */
};

static struct spec specs[MAX_SPECS];
static int nspecs;
static pthread_barrier_t ready, go, done, end;

static unsigned long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

/* Busy for us microseconds (a vCPU thread does not sleep in an exit). */
static void busy_us(unsigned us)
{
	unsigned long long t = now_ns() + us * 1000ull;

	while (now_ns() < t)
		;
}

static void hit(const struct spec *spec, unsigned long long key, int adj,
		const char *name)
{
	struct spec one = *spec, *s = &one;

	one.key = key;
	if (s->exit_us) {
		prctl(PR_SET_NAME, name);
		busy_us(s->exit_us);
	}
	if (!strcmp(s->kind, "ioport"))
		syscall(SYS_getpriority, (long)s->key, (long)s->dir);
	else if (!strcmp(s->kind, "mmio"))
		syscall(SYS_madvise, (long)s->key, (long)s->dir, -1L);
	else if (!strcmp(s->kind, "msr"))
		syscall(SYS_ioprio_get, (long)s->dir, (long)s->key);
	else
		syscall(SYS_dup, (long)s->key);
	if (s->gap_us) {
		busy_us(s->gap_us);
		if (pwrite(adj, "0", 1, 0) != 1)
			perror("oom_score_adj");
	}
}

static void *vcpu_run(void *arg)
{
	int vcpu = (int)(long)arg;
	int adj = open("/proc/self/oom_score_adj", O_WRONLY);
	char name[16];

	snprintf(name, sizeof(name), "CPU %d/KVM", vcpu);
	prctl(PR_SET_NAME, name);
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&go);
	for (int i = 0; i < nspecs; i++)
		for (unsigned long k = 0;
		     specs[i].vcpu == vcpu && k < specs[i].nkeys; k++)
			for (unsigned long n = 0; n < specs[i].count; n++)
				hit(&specs[i], specs[i].key + k, adj, name);
	close(adj);
	pthread_barrier_wait(&done);
	/* alive, under its name, until stdin ends */
	pthread_barrier_wait(&end);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_SPECS];
	int vcpus[MAX_SPECS], nv = 0;
	char line[16];

	for (int a = 1; a < argc && nspecs < MAX_SPECS; a++) {
		struct spec *s = &specs[nspecs++];

		s->nkeys = 1;
		if (sscanf(argv[a], "%d:%15[a-z]:%lli:%u:%lu:%u:%lu:%u",
			   &s->vcpu, s->kind, &s->key, &s->dir, &s->count,
			   &s->gap_us, &s->nkeys, &s->exit_us) < 5) {
			fprintf(stderr, "tpkeys: bad spec %s\n", argv[a]);
			return 2;
		}
		int seen = 0;

		for (int i = 0; i < nv; i++)
			seen |= vcpus[i] == s->vcpu;
		if (!seen)
			vcpus[nv++] = s->vcpu;
	}
	if (!nspecs) {
		fprintf(stderr,
			"usage: tpkeys VCPU:KIND:KEY:DIR:COUNT[:GAP_US[:NKEYS[:EXIT_US]]]...\n");
		return 2;
	}
	pthread_barrier_init(&ready, NULL, nv + 1);
	pthread_barrier_init(&go, NULL, nv + 1);
	pthread_barrier_init(&done, NULL, nv + 1);
	pthread_barrier_init(&end, NULL, nv + 1);
	for (int i = 0; i < nv; i++)
		pthread_create(&th[i], NULL, vcpu_run, (void *)(long)vcpus[i]);
	pthread_barrier_wait(&ready);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	pthread_barrier_wait(&go);
	pthread_barrier_wait(&done);
	printf("done\n");
	fflush(stdout);
	/* a line or the end of stdin (a writer's copy of the fifo can live
	 * on in another child of the test) */
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	pthread_barrier_wait(&end);
	for (int i = 0; i < nv; i++)
		pthread_join(th[i], NULL);
	return 0;
}
