/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small QMP client for QEMU's monitor on a unix socket: connect, read the
 * greeting, negotiate capabilities, then send commands and wait for their
 * replies with a deadline, skipping asynchronous events and replies to
 * commands given up on earlier. JSON is jansson's; the server ends every
 * message with CRLF (QMP specification), which is how messages are framed.
 * Nothing here prints: failures return -errno and leave a line in q->err
 * (errmsg.h).
 */
#ifndef KVMSTAT_QMP_CLIENT_H
#define KVMSTAT_QMP_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "errmsg.h"

/* Longest message accepted from the server. */
#define QMP_MSG_MAX (8u << 20)
/* What one client may receive between two qmp_budget() calls (one
 * refresh) unless told otherwise: a peer that sends more bytes or more
 * asynchronous events (a flood) is refused with -ENOBUFS instead of
 * holding the caller. QEMU sends a few events a second at most. */
#define QMP_BUDGET_DEFAULT (2 * (size_t)QMP_MSG_MAX)
#define QMP_EVENTS_MAX 4096
/* How long a wait whose deadline is already past may still take what
 * keeps arriving. */
#define QMP_LOOK_NS (20 * 1000000ull)

/* How long a reply may take, and how soon a socket that failed is tried
 * again, unless struct options says otherwise (its fields are 0). */
#define QMP_REPLY_TIMEOUT_MS_DEFAULT 1000
#define QMP_RETRY_MS_DEFAULT 3000

struct qmp {
	int fd;	   /* -1 when closed */
	pid_t pid; /* the server (QEMU) from SO_PEERCRED, or 0 */
	char *buf; /* bytes received and not yet parsed */
	size_t len, cap;
	size_t off;		 /* buf[off, len) is not parsed yet */
	size_t scan;		 /* buf[off, scan) holds no newline */
	size_t events_left;	 /* events it may still send */
	uint64_t next_id;	 /* id of the next command, from 1 */
	uint64_t events;	 /* asynchronous events skipped so far */
	size_t budget;		 /* bytes it may still receive */
	unsigned int timeout_ms; /* what the caller's deadlines allow a
					 * reply: the messages say it */
	struct errmsg err;	 /* what went wrong last */
};

/* A closed client; timeout_ms is only quoted in messages (the deadlines
 * passed in are what bound each wait). */
void qmp_init(struct qmp *q, unsigned int timeout_ms);
/*
 * Connects to the socket at path, reads the greeting and sends
 * qmp_capabilities, all before deadline (CLOCK_MONOTONIC ns). 0, or -errno
 * with q->err: -ENOENT, -ECONNREFUSED, -EACCES from connect, -ETIMEDOUT,
 * -ECONNRESET (closed), -EPROTO (not QMP), -EREMOTEIO (an error reply).
 */
int qmp_connect(struct qmp *q, const char *path, uint64_t deadline);
void qmp_close(struct qmp *q);
/* Allows q to receive bytes and QMP_EVENTS_MAX events more from now on
 * (see QMP_BUDGET_DEFAULT). */
void qmp_budget(struct qmp *q, size_t bytes);
/* Whether SIGINT or SIGTERM is pending (blocked, for a signalfd): every
 * wait here ends with -EINTR within 100 ms of one, so no peer holds up the
 * end of a run. */
bool qmp_stop_pending(void);

/* Sends a command; args (may be NULL) is borrowed. 0 with its id in *id,
 * or -errno. */
int qmp_send(struct qmp *q, const char *cmd, json_t *args, uint64_t deadline,
	     uint64_t *id);
/*
 * Waits until deadline for the reply to id; events and replies to other ids
 * are skipped. The deadline holds while data keeps coming; one already
 * past only takes what has arrived, for at most QMP_LOOK_NS. 0 with the
 * "return" value in *ret (a new reference the caller json_decref()s; ret
 * may be NULL), or -ETIMEDOUT, -ECONNRESET, -EPROTO, -EMSGSIZE,
 * -ENOBUFS (the budget is spent), -EINTR (a stop is pending), -EREMOTEIO
 * (the error's class and text in q->err) or another -errno.
 */
int qmp_recv(struct qmp *q, uint64_t id, uint64_t deadline, json_t **ret);
/* qmp_send, then qmp_recv. */
int qmp_command(struct qmp *q, const char *cmd, json_t *args, uint64_t deadline,
		json_t **ret);

#endif
