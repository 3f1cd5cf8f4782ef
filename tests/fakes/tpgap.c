// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fires two real tracepoints with a known gap, for the exit-latency tests
 * where kvm_exit and kvm_entry never fire: a fake tracefs names
 * task:task_rename kvm_exit (its exit_reason laid over the renamer's
 * oom_score_adj, its isa over the first bytes of the old name) and
 * oom:oom_score_adj_update kvm_entry. Each "exit" is a rename to "\1"
 * (so the old name, after the first, reads isa 1: VMX's table), a busy
 * wait of GAP µs, then a write of REASON to /proc/self/oom_score_adj
 * (the "entry", which also keeps the reason for the next exit).
 *
 * Usage: tpgap REASON:GAP_US:COUNT[:MARK_US]... ; prints "ready PID",
 * waits for a line on stdin, runs the phases in order, prints "done".
 * With MARK_US, each gap also calls ioctl(KVM_RUN) on /dev/null (it
 * fails, ENOTTY) MARK_US into the gap: a system call that looks like
 * KVM_RUN to a raw_syscalls:sys_enter program.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/kvm.h>

static unsigned long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

static int set_adj(int fd, int reason)
{
	char buf[16];
	int n = snprintf(buf, sizeof(buf), "%d", reason);

	return pwrite(fd, buf, n, 0) == n ? 0 : -1;
}

int main(int argc, char **argv)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY);
	int null = open("/dev/null", O_RDONLY);
	char line[16];

	if (fd < 0 || argc < 2) {
		fprintf(stderr, "usage: tpgap REASON:GAP_US:COUNT...\n");
		return 2;
	}
	prctl(PR_SET_NAME, "\1");
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (int a = 1; a < argc; a++) {
		int reason, gap, count, mark = -1;

		if (sscanf(argv[a], "%d:%d:%d:%d", &reason, &gap, &count,
			   &mark) < 3)
			return 2;
		/* the reason of the next exits; no exit is in flight */
		if (set_adj(fd, reason))
			return 1;
		for (int i = 0; i < count; i++) {
			unsigned long long end;

			prctl(PR_SET_NAME, "\1");
			end = now_ns() + gap * 1000ull;
			if (mark >= 0) {
				unsigned long long at = end - gap * 1000ull +
							mark * 1000ull;

				while (now_ns() < at)
					;
				ioctl(null, KVM_RUN, 0);
			}
			while (now_ns() < end)
				;
			if (set_adj(fd, reason))
				return 1;
		}
	}
	printf("done\n");
	return 0;
}
