// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run's signals, blocked and turned into events on a signalfd: the
 * loop learns of a stop or a log rotation between two refreshes.
 */
#include <errno.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "signals.h"

int signals_open(void)
{
	sigset_t set;
	int fd;

	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	/* blocked right after the defaults are back: they only queue */
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	/* not read from the signalfd: delivered in the wait only */
	sigemptyset(&set);
	sigaddset(&set, SIGWINCH);
	if (sigprocmask(SIG_BLOCK, &set, NULL)) {
		close(fd);
		return -errno;
	}
	return fd;
}

void signals_wait_mask(sigset_t *mask)
{
	sigprocmask(SIG_SETMASK, NULL, mask);
	sigdelset(mask, SIGWINCH);
}

enum signals_event signals_next(int fd)
{
	struct signalfd_siginfo si;

	if (read(fd, &si, sizeof(si)) != sizeof(si))
		return SIGNALS_NONE;
	return si.ssi_signo == SIGHUP ? SIGNALS_HUP : SIGNALS_STOP;
}
