// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hand-off of perf events and BPF objects: a process told to keep
 * only them keeps exactly those (and the one descriptor asked for); the
 * detached grandchild holds copies of them and nothing else, in its own
 * session, and exits once the hand-off finishes.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app/handoff.h"
#include "fs.h"
#include "suites.h"
#include "util.h"

/* A software perf event on this process: no hardware or tracefs needed;
 * -1 where perf_event_open is not allowed. */
static int ho_perf(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.disabled = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

/* A small BPF array map; -1 without the privilege. */
static int ho_bpf(void)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 1;
	return (int)syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
}

static bool ho_is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* Run in a child: Check's own descriptors must outlive the test. The exit
 * status has a bit per descriptor that is wrong. */
START_TEST(test_keep_only_kernel_fds)
{
	int perf = ho_perf(), bpf = ho_bpf(), keep, file, pfd[2];
	int status;
	pid_t pid;

	if (perf < 0)
		fprintf(stderr,
			"handoff: no perf event (%s): checked without\n",
			strerror(errno));
	keep = open("/dev/null", O_RDONLY | O_CLOEXEC);
	file = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(keep, 0);
	ck_assert_int_ge(file, 0);
	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int bad = 0;

		handoff_keep_only_kernel_fds(keep);
		bad |= !ho_is_open(keep) << 0;
		bad |= ho_is_open(file) << 1;
		bad |= ho_is_open(pfd[0]) << 2;
		bad |= ho_is_open(pfd[1]) << 3;
		bad |= ho_is_open(STDERR_FILENO) << 4;
		if (perf >= 0)
			bad |= !ho_is_open(perf) << 5;
		if (bpf >= 0)
			bad |= !ho_is_open(bpf) << 6;
		_exit(bad);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_msg(WEXITSTATUS(status) == 0, "wrong descriptors: %#x",
		      WEXITSTATUS(status));
	/* this process keeps them all */
	ck_assert(ho_is_open(file) && ho_is_open(pfd[0]));
}
END_TEST

/* The pid of another process holding an fd whose link reads target. */
static pid_t ho_holder(const char *target)
{
	char path[512], link[128];
	struct dirent *de, *fe;
	DIR *proc = opendir("/proc");
	pid_t found = 0;

	ck_assert_ptr_nonnull(proc);
	while (!found && (de = readdir(proc))) {
		pid_t pid = atoi(de->d_name);
		DIR *fds;

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		fds = opendir(path);
		if (!fds)
			continue;
		while (!found && (fe = readdir(fds))) {
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid,
				 fe->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n < 0)
				continue;
			link[n] = '\0';
			if (!strcmp(link, target))
				found = pid;
		}
		closedir(fds);
	}
	closedir(proc);
	return found;
}

/* Every descriptor of pid is /dev/null, a perf event, a BPF object or the
 * hand-off pipe; none is a regular file. Returns how many perf events. */
static int ho_check_holder(pid_t pid, const char *pipe_link)
{
	char path[512], link[128];
	struct dirent *fe;
	DIR *fds;
	int perf = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	fds = opendir(path);
	ck_assert_ptr_nonnull(fds);
	while ((fe = readdir(fds))) {
		ssize_t n;

		if (fe->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, fe->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		perf += !strcmp(link, "anon_inode:[perf_event]");
		ck_assert_msg(!strcmp(link, "/dev/null") ||
				      !strcmp(link, "anon_inode:[perf_event]") ||
				      !strncmp(link, "anon_inode:bpf", 14) ||
				      !strcmp(link, pipe_link),
			      "the holder keeps fd %s: %s", fe->d_name, link);
	}
	closedir(fds);
	return perf;
}

/* Whether pid has exited (a zombie waiting for init counts). */
static bool ho_gone(pid_t pid)
{
	char path[64], buf[1024], *paren;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	n = fs_read_at(AT_FDCWD, path, buf, sizeof(buf));
	if (n == -ENOENT || n == -ESRCH)
		return true;
	ck_assert_int_gt(n, 0);
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && paren[2] == 'Z';
}

START_TEST(test_start_finish)
{
	int perf = ho_perf(), file;
	char path[64], pipe_link[64];
	struct handoff h;
	pid_t holder;
	ssize_t n;
	int i;

	file = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(file, 0);
	ck_assert_int_eq(handoff_start(&h), 0);
	ck_assert_int_ge(h.fd, 0);
	/* the grandchild holds the read end of the hand-off pipe */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", h.fd);
	n = readlink(path, pipe_link, sizeof(pipe_link) - 1);
	ck_assert_int_gt(n, 0);
	pipe_link[n] = '\0';
	ck_assert_ptr_nonnull(strstr(pipe_link, "pipe:"));
	holder = ho_holder(pipe_link);
	ck_assert_int_gt(holder, 0);
	/* detached: its own session (its last step before it waits, so its
	 * descriptors are final then), not our child */
	for (i = 0; i < 200 && getsid(holder) != holder; i++)
		usleep(10000);
	ck_assert_int_eq(getsid(holder), holder);
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
	ck_assert_int_eq(ho_check_holder(holder, pipe_link), perf >= 0);
	if (perf >= 0)
		close(perf);
	close(file);

	handoff_finish(&h);
	ck_assert_int_eq(h.fd, -1);
	/* it goes once the pipe is closed; its exit releases the last perf
	 * event, which waits for an RCU grace period (the reason it exists),
	 * longer while another process opens or closes tracepoints */
	for (i = 0; i < 1500 && !ho_gone(holder); i++)
		usleep(10000);
	ck_assert_msg(ho_gone(holder), "holder %d still runs", holder);
}
END_TEST

Suite *handoff_suite(void)
{
	Suite *s = suite_create("handoff");
	TCase *tc = tcase_create("core");
	/* the holder's exit may wait out a slow perf-event release */
	tcase_set_timeout(tc, 30);

	tcase_add_test(tc, test_keep_only_kernel_fds);
	tcase_add_test(tc, test_start_finish);
	suite_add_tcase(s, tc);
	return s;
}
