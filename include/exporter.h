/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The metrics exporter (--listen): an HTTP server (libmicrohttpd, one
 * internal epoll thread) that answers GET /metrics with the exposition of
 * the last sample. The loop renders a sample into text when a scrape
 * asks (the front-end's input, UI_RENDER) and hands it over with
 * exporter_publish() (exporter_frontend_ops in frontend.h wraps start,
 * publish and stop); scrapes only ever see those finished
 * texts, swapped under a mutex, so HTTP threads never touch the stats.
 *
 * Bounds, so that slow or hostile clients, from any address (the
 * scraper's own included), can neither block other scrapes nor make
 * memory grow: up to EXPORTER_MAX_CONNECTIONS connections (fewer where
 * the open-file limit, whose soft limit is raised toward the hard one,
 * cannot fit two descriptors each and EXPORTER_FD_SPARE more; more wait
 * in the listen backlog), and from EXPORTER_EVICT_SPARE short of that, a
 * new connection cuts the one that has waited longest for its request
 * header, so slow clients give way; a request header must be in
 * EXPORTER_HEADER_S seconds after the connection opened (or its last
 * answer was sent), and the answer sent in full within
 * EXPORTER_DEADLINE_S seconds of the header, both watched by a thread of
 * their own (connwatch.h); a connection idle EXPORTER_TIMEOUT_S seconds
 * is closed; each has at most EXPORTER_CONN_MEMORY bytes for its request
 * (larger headers get 431, longer URLs 414). A response is the shared
 * published text, never a copy. With basic auth, passwords are checked
 * off the server's thread (webauth.h): a request with a password not
 * seen lately waits, suspended, for a worker; one that finds the queue
 * full gets 503.
 *
 * Answers: GET or HEAD /metrics: 200 with the Prometheus text format, or
 * OpenMetrics when the Accept header prefers application/openmetrics-text;
 * 503 before the first sample. / : a small HTML page linking /metrics.
 * Other paths: 404. Other methods on those two: 405 with Allow.
 */
#ifndef KVMSTAT_EXPORTER_H
#define KVMSTAT_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "frontend.h"
#include "snapshot.h"

struct errmsg;

#define EXPORTER_DEFAULT_ADDR "127.0.0.1"
#define EXPORTER_DEFAULT_PORT 9712
#define EXPORTER_MAX_CONNECTIONS 2048u
#define EXPORTER_MIN_CONNECTIONS 32u
#define EXPORTER_FD_SPARE 256u
#define EXPORTER_EVICT_SPARE 64u
#define EXPORTER_TIMEOUT_S 5u
#define EXPORTER_HEADER_S 10u
#define EXPORTER_DEADLINE_S 30u
#define EXPORTER_CONN_MEMORY (16u * 1024)
#define EXPORTER_BACKLOG 512

/* Where to listen, parsed from --listen. */
struct exporter_addr {
	struct sockaddr_storage ss;
	socklen_t len;
	char text[64]; /* "127.0.0.1:9712", "[::1]:9712" */
};

/*
 * Parses "[ADDR:]PORT": PORT 1-65535; ADDR a numeric IPv4 address, an
 * IPv6 one in brackets, or "localhost"; no ADDR is 127.0.0.1. 0, or
 * -EINVAL with one line in msg.
 */
int exporter_parse_listen(const char *spec, struct exporter_addr *out,
			  struct errmsg *msg);

#endif
