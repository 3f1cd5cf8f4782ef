// SPDX-License-Identifier: GPL-2.0-only
/*
 * The descriptors of perf events and BPF objects: the open-file limit
 * raised for them, and the fork hand-off that lets the run end at once
 * while a detached grandchild waits out their slow last close.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fs.h"
#include "handoff.h"
#include "util.h"

void handoff_raise_nofile(void)
{
	struct rlimit rl;
	char buf[32];
	uint64_t max;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (fs_read_at(AT_FDCWD, "/proc/sys/fs/nr_open", buf, sizeof(buf)) > 0 &&
	    !util_parse_u64(buf, &max) && max > rl.rlim_max) {
		struct rlimit want = { max, max };

		if (!setrlimit(RLIMIT_NOFILE, &want))
			return;
	}
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

void handoff_keep_only_kernel_fds(int keep_fd)
{
	struct fs_dir dir;
	const struct fs_entry *e;
	char link[64];

	if (fs_dir_open(&dir, AT_FDCWD, "/proc/self/fd"))
		return;
	while ((e = fs_dir_next(&dir))) {
		int fd = atoi(e->name);
		ssize_t n;

		if (fd == keep_fd || fd == dir.fd)
			continue;
		n = readlinkat(e->dirfd, e->name, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, "anon_inode:[perf_event]") &&
		    strncmp(link, "anon_inode:bpf", 14))
			close(fd);
	}
	fs_dir_close(&dir);
}

/*
 * The grandchild holds a copy of every kernel descriptor until this
 * process has closed its own (fast, as they are not the last), then
 * exits, with nothing of the terminal or of the output pipe open.
 */
int handoff_start(struct handoff *h)
{
	int pfd[2], null;
	pid_t pid;
	char c;

	h->fd = -1;
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (fork() != 0)
			_exit(0);
		handoff_keep_only_kernel_fds(pfd[0]);
		null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		setsid();
		while (read(pfd[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(pfd[0]);
	if (pid < 0) {
		int e = errno;

		close(pfd[1]);
		return -e;
	}
	waitpid(pid, NULL, 0);
	h->fd = pfd[1];
	return 0;
}

void handoff_finish(struct handoff *h)
{
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
}
