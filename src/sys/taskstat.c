// SPDX-License-Identifier: GPL-2.0-only
/*
 * A thread's CPU accounting from procfs (taskstat.h). The stat file's name
 * field may hold blanks and parentheses: the fields after it are found
 * from its last ')'. schedstat is "run_ns delay_ns timeslices" (kernels
 * with schedstats or sched_info, which every distribution kernel has).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "taskstat.h"

/* The unsigned number at *s (advanced past it): 0 or -EINVAL. */
static int taskstat_num(const char **s, uint64_t *out)
{
	char *end;

	while (**s == ' ')
		(*s)++;
	if (**s < '0' || **s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(*s, &end, 10);
	if (errno)
		return -EINVAL;
	*s = end;
	return 0;
}

int taskstat_parse_stat(const char *text, struct taskstat *t)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	const char *s;
	size_t n;
	int field;

	if (!open || !close || close < open || close[1] != ' ' || !close[2])
		return -EINVAL;
	n = (size_t)(close - open - 1);
	if (n >= sizeof(t->comm))
		n = sizeof(t->comm) - 1;
	memcpy(t->comm, open + 1, n);
	t->comm[n] = '\0';
	t->state = close[2];
	t->gtime = 0;
	s = close + 3;
	/* fields 4 on; guest time (43) is missing on kernels before 2.6.24 */
	for (field = 4; field <= 43; field++) {
		uint64_t v;

		if (taskstat_num(&s, &v)) {
			/* signed fields (priority, nice) and the end */
			while (*s == ' ')
				s++;
			if (*s == '-') {
				s++;
				if (taskstat_num(&s, &v))
					return -EINVAL;
				v = 0;
			} else if (field > 22) {
				break;
			} else {
				return -EINVAL;
			}
		}
		if (field == 9)
			t->flags = v;
		else if (field == 14)
			t->utime = v;
		else if (field == 15)
			t->stime = v;
		else if (field == 22)
			t->start_ticks = v;
		else if (field == 43)
			t->gtime = v;
	}
	return 0;
}

int taskstat_parse_schedstat(const char *text, struct taskstat *t)
{
	const char *s = text;

	if (taskstat_num(&s, &t->run_ns) || taskstat_num(&s, &t->delay_ns))
		return -EINVAL;
	return 0;
}

int taskstat_open(int rootfd, pid_t pid, pid_t tid, bool with_stat,
		  struct taskstat_fds *f)
{
	char path[64];

	f->stat = -1;
	snprintf(path, sizeof(path), "%d/task/%d/schedstat", (int)pid, (int)tid);
	f->sched = fs_open_file(rootfd, path);
	if (f->sched < 0)
		return f->sched;
	if (!with_stat)
		return 0;
	snprintf(path, sizeof(path), "%d/task/%d/stat", (int)pid, (int)tid);
	f->stat = fs_open_file(rootfd, path);
	if (f->stat < 0) {
		int rc = f->stat;

		taskstat_close(f);
		return rc;
	}
	return 0;
}

int taskstat_read(const struct taskstat_fds *f, bool with_stat,
		  struct taskstat *t)
{
	char buf[1024];
	ssize_t n;

	n = fs_pread_fd(f->sched, buf, sizeof(buf));
	/* a thread that exited reads as empty (or ESRCH) */
	if (n <= 0)
		return n < 0 ? (int)n : -ESRCH;
	if (taskstat_parse_schedstat(buf, t))
		return -EINVAL;
	if (f->stat < 0 || !with_stat)
		return 0;
	n = fs_pread_fd(f->stat, buf, sizeof(buf));
	if (n <= 0)
		return n < 0 ? (int)n : -ESRCH;
	return taskstat_parse_stat(buf, t);
}

void taskstat_close(struct taskstat_fds *f)
{
	if (f->stat >= 0)
		close(f->stat);
	if (f->sched >= 0)
		close(f->sched);
	f->stat = f->sched = -1;
}

int taskstat_comm(int rootfd, pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "%d/task/%d/comm", (int)pid, (int)tid);
	n = fs_read_at(rootfd, path, buf, len);
	if (n <= 0)
		return n < 0 ? (int)n : -ESRCH;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

uint64_t taskstat_hz(void)
{
	long hz = sysconf(_SC_CLK_TCK);

	return hz > 0 ? (uint64_t)hz : 100;
}
