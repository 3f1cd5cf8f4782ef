/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A thread's CPU accounting from procfs, for where vCPU time goes
 * (vcputime.h): /proc/PID/task/TID/schedstat (time on a CPU and time
 * runnable waiting for one, ns) and /proc/PID/task/TID/stat (name,
 * state, user, system and guest ticks, start time). The files are opened
 * once and read again with pread at each refresh.
 */
#ifndef KVMSTAT_TASKSTAT_H
#define KVMSTAT_TASKSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* One reading of a thread. */
struct taskstat {
	char comm[20];		      /* its name (stat's field 2) */
	char state;		      /* R, S, D, ... (field 3) */
	uint64_t flags;		      /* the kernel's PF_* (field 9) */
	uint64_t utime, stime, gtime; /* clock ticks (fields 14, 15, 43) */
	uint64_t start_ticks;	      /* after boot, clock ticks (22) */
	uint64_t run_ns, delay_ns;    /* schedstat's first two */
};

/* A thread's files, kept open; -1 where not open. */
struct taskstat_fds {
	int stat, sched;
};

/* Parses a stat file's text into t: 0, or -EINVAL when malformed. */
int taskstat_parse_stat(const char *text, struct taskstat *t);
/* Parses a schedstat file's text into t: 0, or -EINVAL. */
int taskstat_parse_schedstat(const char *text, struct taskstat *t);

/* Opens rootfd/PID/task/TID's files (stat only when with_stat is false:
 * then only schedstat): 0 or -errno (nothing left open). */
int taskstat_open(int rootfd, pid_t pid, pid_t tid, bool with_stat,
		  struct taskstat_fds *f);
/* Reads the open files into t (schedstat alone unless with_stat): 0, or
 * -errno (the thread is gone: -ESRCH or what pread said; -EINVAL for a
 * malformed file). */
int taskstat_read(const struct taskstat_fds *f, bool with_stat,
		  struct taskstat *t);
void taskstat_close(struct taskstat_fds *f);
/* Reads rootfd/PID/task/TID/comm once: 0 or -errno. */
int taskstat_comm(int rootfd, pid_t pid, pid_t tid, char *buf, size_t len);

/* Clock ticks per second (sysconf _SC_CLK_TCK). */
uint64_t taskstat_hz(void);

#endif
