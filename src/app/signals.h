/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Signals as events: SIGINT and SIGTERM (stop) and SIGHUP (reopen the
 * output) are blocked and read from a signalfd that the loop polls along
 * with its timer and the monitor's input, so no handler ever runs in the
 * middle of a refresh.
 */
#ifndef KVMSTAT_SIGNALS_H
#define KVMSTAT_SIGNALS_H

#include <signal.h>

/* What the next pending signal asks for. */
enum signals_event {
	SIGNALS_NONE, /* nothing pending */
	SIGNALS_HUP,  /* SIGHUP: reopen the output files */
	SIGNALS_STOP, /* SIGINT or SIGTERM: end the run */
};

/*
 * Takes the default action back for SIGINT, SIGTERM and SIGHUP (a shell
 * starts background jobs with SIGINT ignored, and an ignored signal never
 * reaches a signalfd), blocks them in the calling thread (threads started
 * later inherit the mask) and ignores SIGPIPE, so a write to a reader
 * that went away fails with EPIPE. Returns the signalfd (non-blocking,
 * close-on-exec) or -errno.
 */
int signals_open(void);
/*
 * SIGWINCH is blocked too, outside the loop's wait: the monitor's
 * curses handler runs only there (a resize while sampling interrupts the
 * next wait at once). Sets *mask to the one to wait with: the caller's
 * mask without SIGWINCH.
 */
void signals_wait_mask(sigset_t *mask);
/* Reads the next pending signal from fd. */
enum signals_event signals_next(int fd);

#endif
