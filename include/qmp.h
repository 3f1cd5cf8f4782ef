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
#ifndef KVMSTAT_QMP_H
#define KVMSTAT_QMP_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

#include "errmsg.h"

/* Longest message accepted from the server. */
#define QMP_MSG_MAX (16u << 20)

/* How long a reply may take, and how soon a socket that failed is tried
 * again, unless struct options says otherwise (its fields are 0). */
#define QMP_REPLY_TIMEOUT_MS_DEFAULT 1000
#define QMP_RETRY_MS_DEFAULT 3000

struct qmp {
	int fd;	   /* -1 when closed */
	pid_t pid; /* the server (QEMU) from SO_PEERCRED, or 0 */
	char *buf; /* bytes received and not yet parsed */
	size_t len, cap;
	size_t scan;		 /* buf[0, scan) holds no newline */
	uint64_t next_id;	 /* id of the next command, from 1 */
	uint64_t events;	 /* asynchronous events skipped so far */
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

/* Sends a command; args (may be NULL) is borrowed. 0 with its id in *id,
 * or -errno. */
int qmp_send(struct qmp *q, const char *cmd, json_t *args, uint64_t deadline,
	     uint64_t *id);
/*
 * Waits until deadline for the reply to id; events and replies to other ids
 * are skipped. A deadline already past only takes what has arrived. 0 with
 * the "return" value in *ret (a new reference the caller json_decref()s;
 * ret may be NULL), or -ETIMEDOUT, -ECONNRESET, -EPROTO, -EMSGSIZE,
 * -EREMOTEIO (the error's class and text in q->err) or another -errno.
 */
int qmp_recv(struct qmp *q, uint64_t id, uint64_t deadline, json_t **ret);
/* qmp_send, then qmp_recv. */
int qmp_command(struct qmp *q, const char *cmd, json_t *args, uint64_t deadline,
		json_t **ret);

#endif
