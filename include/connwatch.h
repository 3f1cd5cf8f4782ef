/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Deadlines for a server's connections, so that slow clients cost little
 * and give way: a connection must send its request header within
 * header_ns of opening (or of its last answer), and have its answer sent
 * within answer_ns of the header; a thread of its own sleeps until the
 * next deadline and cuts off (shutdown) the connections past theirs. From
 * evict_at connections on, a new one cuts the one that has waited longest
 * for its header. Each connection is tracked through a dup of its socket,
 * so a shutdown never hits a descriptor reused meanwhile. The server
 * reports each connection's steps; cut ones are its to close.
 *
 *	c = connwatch_add(w, fd);		(connected)
 *	connwatch_header(w, c);			(its request header is in)
 *	connwatch_answered(w, c);		(answered: the next header)
 *	connwatch_del(w, c);			(closed)
 */
#ifndef KVMSTAT_CONNWATCH_H
#define KVMSTAT_CONNWATCH_H

#include <stddef.h>
#include <stdint.h>

struct connwatch;
struct connwatch_conn;

/* Starts the watch (its thread inherits the caller's signal mask). */
struct connwatch *connwatch_new(uint64_t header_ns, uint64_t answer_ns,
				size_t evict_at);
/* Stops the thread and frees w, whose connections were all deleted
 * (NULL is fine). */
void connwatch_free(struct connwatch *w);
/*
 * Tracks the connection on socket fd, waiting for its header: its handle,
 * or NULL when no descriptor was left to dup (fd is then shut down, as no
 * deadline could reach it).
 */
struct connwatch_conn *connwatch_add(struct connwatch *w, int fd);
/* c's request header is in; then its answer was sent (both: NULL is
 * fine). */
void connwatch_header(struct connwatch *w, struct connwatch_conn *c);
void connwatch_answered(struct connwatch *w, struct connwatch_conn *c);
/* c was closed: forgets and frees it (NULL is fine). */
void connwatch_del(struct connwatch *w, struct connwatch_conn *c);
/* Connections tracked and not cut. */
size_t connwatch_count(struct connwatch *w);
/*
 * How many connections fit the open-file limit at two descriptors each
 * (a socket and its dup) with spare left for the rest of the program: up
 * to max, after raising the soft limit toward the hard one as needed; at
 * least min.
 */
unsigned int connwatch_limit(unsigned int max, unsigned int min,
			     unsigned int spare);

#endif
