/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Perf events and BPF objects as file descriptors: enough of them (one
 * perf event is one fd), and a quick exit despite them. Releasing the
 * last reference to a tracepoint's perf event waits for an RCU grace
 * period under a kernel mutex, so closing a hundred of them takes
 * seconds; the hand-off gives those last references to a detached
 * grandchild that pays the wait out of everyone's way.
 */
#ifndef KVMSTAT_HANDOFF_H
#define KVMSTAT_HANDOFF_H

/* A hand-off under way: the pipe whose closing lets the holder go. */
struct handoff {
	int fd; /* write end; -1 when none */
};

/* Lifts the soft open-file limit to the hard one (and the hard one to the
 * kernel's maximum when privileged). Best effort. */
void handoff_raise_nofile(void);

/*
 * Forks a detached grandchild (its own session, stdio on /dev/null) that
 * holds a copy of every perf event and BPF object descriptor of this
 * process, and nothing else, until handoff_finish(). Returns 0, or -errno
 * when nothing was handed off (then close as usual). Buffered output is
 * flushed first, so it is not written twice.
 */
int handoff_start(struct handoff *h);
/* Once this process closed its own copies: lets the grandchild exit. */
void handoff_finish(struct handoff *h);
/* In a process about to hold the last references: closes every
 * descriptor but perf events, BPF objects and keep_fd. */
void handoff_keep_only_kernel_fds(int keep_fd);

#endif
