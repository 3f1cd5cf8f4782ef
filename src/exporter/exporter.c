// SPDX-License-Identifier: GPL-2.0-only
/*
 * The HTTP side of --listen, on libmicrohttpd: one internal polling thread
 * (epoll where available) serves every connection without blocking, so a
 * client that sends nothing only holds its own slot until the timeout.
 * Responses are built by the main loop, on demand: a scrape that finds
 * none for the current sample waits suspended and wakes the loop (an
 * eventfd, the front-end's input), which renders the formats asked for
 * once for every scrape waiting; nobody scraping, nothing is rendered.
 * They are shared by every scrape of that sample (libmicrohttpd counts
 * their references), so a further scrape costs a lookup and a send, and
 * memory does not grow with the number of clients beyond the
 * per-connection pool; the texts are rendered into buffers libmicrohttpd
 * hands back once sent, and the writer keeps its own memory (and which
 * per-VM series it has written) from render to render. Each connection's steps are
 * reported to connwatch, whose thread cuts off slow ones; with basic
 * auth, a request whose password webauth has no verdict on waits
 * suspended for its worker. As a front-end (--listen, alone or with
 * -l/-L), it starts the server on open, publishes on render and stops on
 * close.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "connwatch.h"
#include "errmsg.h"
#include "exporter.h"
#include "mhd.h"
#include "openmetrics.h"
#include "options.h"
#include "strbuf.h"
#include "util.h"
#include "webauth.h"
#include "webconfig.h"

/* A request's state from its header on: its password check (basic auth). */
struct exp_req {
	struct webauth_job job;
	struct MHD_Connection *conn;
	bool asked; /* its credentials went to webauth */
};

/*
 * The text of one render, reused: libmicrohttpd sends it from this buffer
 * and calls back when the last connection is done with it, which gives it
 * back to the exporter's idle ones. Its callback gets the text alone, so
 * the buffer starts with a pointer to its exp_text (EXP_TEXT_HEAD bytes);
 * the text follows.
 */
struct exp_text {
	struct exporter *e;
	struct strbuf b;
	struct exp_text *next; /* among the idle ones */
};

#define EXP_TEXT_HEAD 16
/* Idle texts kept: one per format, another of each while the last ones
 * are still being sent */
#define EXP_TEXT_IDLE 4

/* A scrape suspended until its format is rendered from the sample. */
struct exp_wait {
	struct MHD_Connection *conn;
	int fmt;
};

struct exporter {
	struct MHD_Daemon *daemon;
	pthread_mutex_t lock;	      /* guards resp to nwait */
	struct MHD_Response *resp[2]; /* by enum openmetrics_format; NULL
				       * until rendered from this sample */
	bool sampled;		      /* there is a sample to render */
	bool stopping;		      /* no more waiting: 503 */
	unsigned int wanted;	      /* 1 << format: asked for, unrendered */
	struct exp_wait *wait;	      /* the scrapes waiting for them */
	size_t nwait, waitcap;
	int efd; /* eventfd: the loop's UI_RENDER */
	/* fixed answers, made once */
	struct MHD_Response *index, *not_found, *not_allowed, *unavailable;
	struct MHD_Response *unauthorized, *busy;
	struct openmetrics_writer *writer; /* main thread only */
	struct exp_text *idle;		   /* texts to render into (lock) */
	unsigned int nidle;
	struct connwatch *watch; /* the connections' deadlines */
	struct webconfig wc;	 /* --web-config */
	struct webauth *auth;	 /* basic auth's checks, or NULL */
	char *cert, *key;	 /* PEM, kept while the server runs */
};

/* libmicrohttpd's functions, loaded when the first exporter starts. */
static const struct mhd_api *mhd;

static const char exp_index_html[] =
	"<!DOCTYPE html>\n<html><head><title>kvmstat exporter</title></head>\n"
	"<body><h1>kvmstat exporter</h1>\n"
	"<p>KVM statistics: <a href=\"/metrics\">/metrics</a></p></body></html>\n";
static const char exp_not_found[] = "not found: the metrics are at /metrics\n";
static const char exp_not_allowed[] = "method not allowed: use GET\n";
static const char exp_unavailable[] = "no sample yet: try again shortly\n";
static const char exp_unauthorized[] = "unauthorized\n";
static const char exp_busy[] =
	"too many password checks at once: try again shortly\n";

/* Parses a decimal port 1-65535 that is the whole string. */
static int exporter_port(const char *s, unsigned int *port)
{
	long v;

	if (util_parse_int(s, 1, 65535, &v))
		return -EINVAL;
	*port = (unsigned int)v;
	return 0;
}

int exporter_parse_listen(const char *spec, struct exporter_addr *out,
			  struct errmsg *msg)
{
	char host[INET6_ADDRSTRLEN];
	const char *port_s, *colon = strrchr(spec, ':');
	unsigned int port;

	memset(out, 0, sizeof(*out));
	if (!colon) {
		snprintf(host, sizeof(host), "%s", EXPORTER_DEFAULT_ADDR);
		port_s = spec;
	} else if (spec[0] == '[') {
		const char *close = strchr(spec, ']');

		if (!close || close + 1 != colon ||
		    (size_t)(close - spec - 1) >= sizeof(host))
			goto bad;
		snprintf(host, sizeof(host), "%.*s", (int)(close - spec - 1),
			 spec + 1);
		port_s = colon + 1;
	} else {
		if ((size_t)(colon - spec) >= sizeof(host) ||
		    memchr(spec, ':', (size_t)(colon - spec)))
			goto bad;
		snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
		port_s = colon + 1;
	}
	if (exporter_port(port_s, &port))
		goto bad;
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	if (spec[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&out->ss;

		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			goto bad;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		out->len = sizeof(*a);
		snprintf(out->text, sizeof(out->text), "[%s]:%u", host, port);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&out->ss;

		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			goto bad;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		out->len = sizeof(*a);
		snprintf(out->text, sizeof(out->text), "%s:%u", host, port);
	}
	return 0;
bad:
	return errmsg_set(msg, -EINVAL,
			  "--listen needs [ADDR:]PORT (PORT 1-65535, ADDR an IPv4 address, [IPv6] or localhost), not \"%s\"",
			  spec);
}

static enum MHD_Result exporter_queue(struct MHD_Connection *conn,
				      unsigned int status,
				      struct MHD_Response *r)
{
	return mhd->queue_response(conn, status, r);
}

/* The deadlines of the connection conn is on, or NULL. */
static struct connwatch_conn *exporter_watched(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		mhd->get_connection_info(conn,
					 MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* Parks a request while its password is checked (under webauth's
 * lock, on the server's thread). */
static void exporter_hold(void *arg)
{
	struct exp_req *r = arg;

	mhd->suspend_connection(r->conn);
}

/* Takes a request up again: its verdict is in (a worker thread). */
static void exporter_release(void *arg)
{
	struct exp_req *r = arg;

	mhd->resume_connection(r->conn);
}

/*
 * The verdict on a request's credentials. On its first call, a request
 * without them is DENIED at once; others are checked by webauth, from its
 * cache or, for a password it has not seen, by a worker while the
 * connection is suspended (PENDING); the call after the resume reads that
 * verdict.
 */
static enum webauth_verdict exporter_auth(struct exporter *e,
					  struct MHD_Connection *conn,
					  struct exp_req *r)
{
	enum webauth_verdict v = WEBAUTH_DENIED;
	char *user, *pass = NULL;

	if (r->asked)
		return webauth_verdict(&r->job);
	r->asked = true;
	user = mhd->basic_auth_get_username_password(conn, &pass);
	if (user && pass)
		v = webauth_check(e->auth, user, pass, &r->job, r);
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		mhd->free(pass);
	}
	if (user)
		mhd->free(user);
	return v;
}

/*
 * /metrics in format fmt, under e->lock: the text rendered from this
 * sample; else, once there is a sample, the request waits suspended and
 * the loop is asked to render (one render serves every scrape waiting);
 * 503 before the first sample.
 */
static enum MHD_Result exporter_metrics(struct exporter *e,
					struct MHD_Connection *conn, int fmt)
{
	uint64_t one = 1;

	if (e->resp[fmt])
		return exporter_queue(conn, MHD_HTTP_OK, e->resp[fmt]);
	if (!e->sampled || e->stopping)
		return exporter_queue(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				      e->unavailable);
	if (e->nwait == e->waitcap) {
		e->waitcap = e->waitcap ? 2 * e->waitcap : 16;
		e->wait = xrealloc(e->wait, e->waitcap * sizeof(*e->wait));
	}
	e->wait[e->nwait++] = (struct exp_wait){ conn, fmt };
	mhd->suspend_connection(conn);
	/* a format not asked for yet wakes the loop (one already asked
	 * for is in a render that will resume this scrape too) */
	if (!(e->wanted & (1u << fmt))) {
		ssize_t n = write(e->efd, &one, sizeof(one));

		(void)n; /* cannot fail: the counter stays far below max */
	}
	e->wanted |= 1u << fmt;
	return MHD_YES;
}

/*
 * Every request: the text rendered for /metrics, the index for /, else
 * an error; called on the server's thread, so it only reads what
 * exporter_publish swapped in, under the lock. With basic auth, called
 * again once a suspended request's password is checked.
 */
static enum MHD_Result exporter_handle(void *cls, struct MHD_Connection *conn,
				       const char *url, const char *method,
				       const char *version,
				       const char *upload_data,
				       size_t *upload_data_size, void **req_cls)
{
	struct exporter *e = cls;
	bool get = !strcmp(method, MHD_HTTP_METHOD_GET) ||
		   !strcmp(method, MHD_HTTP_METHOD_HEAD);
	enum MHD_Result rc;
	int fmt;

	(void)version;
	(void)upload_data;
	/* the header is in: the header deadline is met */
	if (!*req_cls) {
		struct exp_req *r = xcalloc(1, sizeof(*r));

		r->conn = conn;
		*req_cls = r;
		connwatch_header(e->watch, exporter_watched(conn));
	}
	if (e->auth) {
		enum webauth_verdict v = exporter_auth(e, conn, *req_cls);

		if (v == WEBAUTH_PENDING)
			return MHD_YES; /* suspended */
		if (*upload_data_size) {
			*upload_data_size = 0; /* a body: read, unused */
			return MHD_YES;
		}
		if (v == WEBAUTH_BUSY)
			return exporter_queue(conn,
					      MHD_HTTP_SERVICE_UNAVAILABLE,
					      e->busy);
		if (v != WEBAUTH_OK)
			return exporter_queue(conn, MHD_HTTP_UNAUTHORIZED,
					      e->unauthorized);
	}
	if (strcmp(url, "/metrics")) {
		if (strcmp(url, "/"))
			return exporter_queue(conn, MHD_HTTP_NOT_FOUND,
					      e->not_found);
		return get ? exporter_queue(conn, MHD_HTTP_OK, e->index) :
			     exporter_queue(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
					    e->not_allowed);
	}
	if (!get)
		return exporter_queue(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				      e->not_allowed);
	fmt = openmetrics_negotiate(
		mhd->lookup_connection_value(conn, MHD_HEADER_KIND,
					     MHD_HTTP_HEADER_ACCEPT));
	pthread_mutex_lock(&e->lock);
	rc = exporter_metrics(e, conn, fmt);
	pthread_mutex_unlock(&e->lock);
	return rc;
}

/* Tracks connections opening and closing (the server's thread). */
static void exporter_notify(void *cls, struct MHD_Connection *conn, void **ctx,
			    enum MHD_ConnectionNotificationCode code)
{
	struct exporter *e = cls;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			mhd->get_connection_info(conn,
						 MHD_CONNECTION_INFO_CONNECTION_FD);

		*ctx = ci ? connwatch_add(e->watch, ci->connect_fd) : NULL;
		return;
	}
	connwatch_del(e->watch, *ctx);
	*ctx = NULL;
}

/* A request ended: the next one on the connection waits for its header
 * from now; its check state, if any, goes. */
static void exporter_completed(void *cls, struct MHD_Connection *conn,
			       void **req_cls,
			       enum MHD_RequestTerminationCode toe)
{
	struct exporter *e = cls;

	(void)toe;
	free(*req_cls);
	*req_cls = NULL;
	connwatch_answered(e->watch, exporter_watched(conn));
}

/* libmicrohttpd fails to make a response or add one of these valid
 * headers only when memory runs out: that ends the program, as xmalloc
 * does (util.h). */
static struct MHD_Response *exporter_made(struct MHD_Response *r)
{
	if (!r)
		util_die("out of memory making an HTTP response");
	return r;
}

static void exporter_header(struct MHD_Response *r, const char *name,
			    const char *value)
{
	if (mhd->add_response_header(r, name, value) != MHD_YES)
		util_die("out of memory making an HTTP response");
}

/* A fixed answer. */
static struct MHD_Response *exporter_fixed(const char *body, const char *type,
					   bool allow)
{
	struct MHD_Response *r = exporter_made(
		mhd->create_response_from_buffer(strlen(body), (void *)body,
						 MHD_RESPMEM_PERSISTENT));

	exporter_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (allow)
		exporter_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	return r;
}

/* Binds and listens on addr: the socket, or -errno. */
static int exporter_listen(const struct exporter_addr *addr)
{
	int one = 1, fd, e;

	fd = socket(addr->ss.ss_family,
		    SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr->ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&addr->ss, addr->len) ||
	    listen(fd, EXPORTER_BACKLOG)) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* Frees e, its server stopped or never started. */
static void exporter_free(struct exporter *e)
{
	struct MHD_Response **fixed[] = {
		&e->index, &e->not_found,    &e->not_allowed, &e->unavailable,
		&e->busy,  &e->unauthorized, &e->resp[0],     &e->resp[1],
	};

	connwatch_free(e->watch);
	webauth_free(e->auth);
	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++)
		if (*fixed[i])
			mhd->destroy_response(*fixed[i]);
	pthread_mutex_destroy(&e->lock);
	while (e->idle) {
		struct exp_text *t = e->idle;

		e->idle = t->next;
		strbuf_free(&t->b);
		free(t);
	}
	openmetrics_writer_free(e->writer);
	free(e->wait);
	if (e->efd >= 0)
		close(e->efd);
	webconfig_free(&e->wc);
	if (e->key)
		explicit_bzero(e->key, strlen(e->key));
	free(e->key);
	free(e->cert);
	free(e);
}

/* The whole of a PEM file, NUL-terminated: 0 or -errno with msg set. */
static int exporter_pem(const char *path, char **out, struct errmsg *msg)
{
	size_t len = 0, cap = 8192;
	char *buf = xmalloc(cap);
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), rc;

	if (fd < 0) {
		rc = -errno;
		free(buf);
		return errmsg_set(msg, rc, "cannot read %s: %s", path,
				  strerror(-rc));
	}
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (len + 1 == cap) {
			if (cap >= (1u << 20))
				break;
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
	}
	rc = n < 0 ? -errno : 0;
	close(fd);
	if (rc || !len) {
		free(buf);
		return errmsg_set(msg, rc ? rc : -EINVAL, "cannot read %s: %s",
				  path, rc ? strerror(-rc) : "empty");
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

/* Whether addr is a loopback address (127.0.0.0/8, ::1). */
static bool exporter_loopback(const struct exporter_addr *addr)
{
	if (addr->ss.ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&addr
						      ->ss;

		return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	return IN6_IS_ADDR_LOOPBACK(
		&((const struct sockaddr_in6 *)&addr->ss)->sin6_addr);
}

/*
 * Binds addr and starts serving (503 until the first publish). NULL on
 * failure with one line in msg saying what to do. Start it after signals
 * are blocked: its thread inherits the mask.
 */
static struct exporter *exporter_start(const struct exporter_addr *addr,
				       const char *web_config, bool per_vcpu,
				       struct errmsg *msg)
{
	/* scrapes wait suspended for their render, and with basic auth
	 * for their password check */
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD |
			     MHD_ALLOW_SUSPEND_RESUME,
		     limit;
	struct MHD_OptionItem tls[3] = { { MHD_OPTION_END, 0, NULL } };
	struct exporter *e;
	int fd;

	mhd = mhd_load(msg);
	if (!mhd)
		return NULL;
	e = xcalloc(1, sizeof(*e));
	pthread_mutex_init(&e->lock, NULL);
	e->writer = openmetrics_writer_new(per_vcpu);
	e->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (e->efd < 0) {
		errmsg_set(msg, -errno, "cannot make an eventfd: %s",
			   strerror(errno));
		goto out_free;
	}
	e->index = exporter_fixed(exp_index_html, "text/html; charset=utf-8",
				  false);
	e->not_found = exporter_fixed(exp_not_found,
				      "text/plain; charset=utf-8", false);
	e->not_allowed = exporter_fixed(exp_not_allowed,
					"text/plain; charset=utf-8", true);
	e->unavailable = exporter_fixed(exp_unavailable,
					"text/plain; charset=utf-8", false);
	exporter_header(e->unavailable, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	/* its challenge made once: libmicrohttpd's
	 * MHD_queue_basic_auth_fail_response adds one more to the response
	 * at every call, so a shared response would grow without end */
	e->unauthorized = exporter_fixed(exp_unauthorized,
					 "text/plain; charset=utf-8", false);
	exporter_header(e->unauthorized, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
			"Basic realm=\"kvmstat\", charset=\"UTF-8\"");
	e->busy = exporter_fixed(exp_busy, "text/plain; charset=utf-8", false);
	exporter_header(e->busy, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	if (web_config) {
		if (webconfig_load(web_config, &e->wc, msg))
			goto out_free;
		if (e->wc.cert_file &&
		    (exporter_pem(e->wc.cert_file, &e->cert, msg) ||
		     exporter_pem(e->wc.key_file, &e->key, msg))) {
			struct errmsg why = *msg;

			errmsg_set(msg, -EINVAL, "%s: tls_server_config: %s",
				   web_config, why.text);
			goto out_free;
		}
	}
	if (e->cert) {
		if (mhd->is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			errmsg_set(msg, -ENOTSUP,
				   "this libmicrohttpd has no TLS: drop tls_server_config from %s",
				   web_config);
			goto out_free;
		}
		flags |= MHD_USE_TLS;
		tls[0] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0,
						  e->cert };
		tls[1] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0,
						  e->key };
	} else if (!exporter_loopback(addr)) {
		/* the one warning: the front-end prints it once, at start */
		fprintf(stderr,
			"kvmstat: warning: serving metrics on %s without TLS%s: give --web-config with tls_server_config%s\n",
			addr->text,
			webconfig_auth(&e->wc) ? ", passwords in the clear" : "",
			webconfig_auth(&e->wc) ? "" : " and basic_auth_users");
	}
	fd = exporter_listen(addr);
	if (fd < 0) {
		errmsg_set(msg, fd,
			   "cannot listen on %s: %s; pick another address or port with --listen",
			   addr->text, strerror(-fd));
		goto out_free;
	}
	if (addr->ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (webconfig_auth(&e->wc)) {
		e->auth = webauth_new(&e->wc, exporter_hold, exporter_release);
	}
	limit = connwatch_limit(EXPORTER_MAX_CONNECTIONS,
				EXPORTER_MIN_CONNECTIONS, EXPORTER_FD_SPARE);
	e->watch = connwatch_new(EXPORTER_HEADER_S * 1000000000ull,
				 EXPORTER_DEADLINE_S * 1000000000ull,
				 limit - (limit / 4 < EXPORTER_EVICT_SPARE ?
						  limit / 4 :
						  EXPORTER_EVICT_SPARE));
	e->daemon = mhd->start_daemon(flags, 0, NULL, NULL, exporter_handle, e,
				      MHD_OPTION_LISTEN_SOCKET, fd,
				      MHD_OPTION_CONNECTION_LIMIT, limit,
				      MHD_OPTION_CONNECTION_TIMEOUT,
				      (unsigned int)EXPORTER_TIMEOUT_S,
				      MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				      (size_t)EXPORTER_CONN_MEMORY,
				      MHD_OPTION_NOTIFY_CONNECTION,
				      exporter_notify, e,
				      MHD_OPTION_NOTIFY_COMPLETED,
				      exporter_completed, e, MHD_OPTION_ARRAY,
				      tls, MHD_OPTION_END);
	if (!e->daemon) {
		close(fd);
		errmsg_set(msg, -EIO,
			   "cannot start the HTTP server on %s (libmicrohttpd refused its options%s)",
			   addr->text,
			   e->cert ?
				   "; are cert_file and key_file a matching PEM certificate and key?" :
				   "");
		goto out_free;
	}
	return e;
out_free:
	exporter_free(e);
	return NULL;
}

/* libmicrohttpd is done with a text: it goes back to the idle ones, or
 * is freed when there are enough (any thread). */
static void exporter_text_done(void *cls)
{
	struct exp_text *t;
	struct exporter *e;

	memcpy(&t, (char *)cls - EXP_TEXT_HEAD, sizeof(t));
	e = t->e;
	pthread_mutex_lock(&e->lock);
	if (e->nidle < EXP_TEXT_IDLE) {
		t->next = e->idle;
		e->idle = t;
		e->nidle++;
		t = NULL;
	}
	pthread_mutex_unlock(&e->lock);
	if (t) {
		strbuf_free(&t->b);
		free(t);
	}
}

/* An idle text, emptied but for its head, to render into. */
static struct exp_text *exporter_text_get(struct exporter *e)
{
	static const char zero[EXP_TEXT_HEAD];
	struct exp_text *t;

	pthread_mutex_lock(&e->lock);
	t = e->idle;
	if (t) {
		e->idle = t->next;
		e->nidle--;
	}
	pthread_mutex_unlock(&e->lock);
	if (!t) {
		t = xcalloc(1, sizeof(*t));
		t->e = e;
		strbuf_init(&t->b);
	}
	strbuf_reset(&t->b);
	strbuf_addn(&t->b, (const char *)&t, sizeof(t));
	strbuf_addn(&t->b, zero, EXP_TEXT_HEAD - sizeof(t));
	return t;
}

/* A response sending t's text from its buffer; t comes back to the idle
 * ones when the last connection is done with it. */
static struct MHD_Response *exporter_text(struct exp_text *t, const char *type)
{
	struct MHD_Response *r = exporter_made(
		mhd->create_response_from_buffer_with_free_callback(
			t->b.len - EXP_TEXT_HEAD, t->b.s + EXP_TEXT_HEAD,
			exporter_text_done));

	exporter_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	return r;
}

/* Takes up the scrapes whose format is rendered now (under e->lock);
 * all of them when stopping. */
static void exporter_resume(struct exporter *e)
{
	size_t kept = 0;

	for (size_t i = 0; i < e->nwait; i++) {
		if (e->stopping || e->resp[e->wait[i].fmt])
			mhd->resume_connection(e->wait[i].conn);
		else
			e->wait[kept++] = e->wait[i];
	}
	e->nwait = kept;
}

/* Renders snap (a snapshot of the whole selection, its guest names the
 * guest labels) in the formats scrapes asked for since the last sample
 * (both when none did), makes them what scrapes get until the next
 * sample, and takes up the scrapes that waited for them. */
static void exporter_publish(struct exporter *e, const struct snapshot *snap)
{
	static const char *const types[] = {
		[OPENMETRICS_PROMETHEUS] = OPENMETRICS_TYPE_PROMETHEUS,
		[OPENMETRICS_OPENMETRICS] = OPENMETRICS_TYPE_OPENMETRICS,
	};
	struct MHD_Response *fresh[2] = { NULL, NULL }, *old[2];
	unsigned int want;

	pthread_mutex_lock(&e->lock);
	want = e->wanted ? e->wanted : 3u;
	pthread_mutex_unlock(&e->lock);
	for (int f = 0; f < 2; f++) {
		struct exp_text *t;

		if (!(want & (1u << f)))
			continue;
		t = exporter_text_get(e);
		openmetrics_write(e->writer, &t->b, snap,
				  (enum openmetrics_format)f);
		fresh[f] = exporter_text(t, types[f]);
	}
	pthread_mutex_lock(&e->lock);
	for (int f = 0; f < 2; f++) {
		old[f] = fresh[f] ? e->resp[f] : NULL;
		if (fresh[f])
			e->resp[f] = fresh[f];
	}
	e->sampled = true;
	e->wanted &= ~want;
	exporter_resume(e);
	pthread_mutex_unlock(&e->lock);
	/* connections still sending an old text hold their own reference */
	for (int f = 0; f < 2; f++)
		if (old[f])
			mhd->destroy_response(old[f]);
}

/* A new sample: the texts rendered from the last one go (their
 * connections keep their references); the next scrape asks for one. */
static void exporter_sampled(struct exporter *e)
{
	struct MHD_Response *old[2];

	pthread_mutex_lock(&e->lock);
	for (int f = 0; f < 2; f++) {
		old[f] = e->resp[f];
		e->resp[f] = NULL;
	}
	e->sampled = true;
	pthread_mutex_unlock(&e->lock);
	for (int f = 0; f < 2; f++)
		if (old[f])
			mhd->destroy_response(old[f]);
}

/* Stops the server, closes the socket, frees e (NULL is fine). Requests
 * waiting for a password check are answered first (503): the server may
 * not stop with a connection suspended. */
static void exporter_stop(struct exporter *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	e->stopping = true;
	exporter_resume(e);
	pthread_mutex_unlock(&e->lock);
	if (e->auth)
		webauth_stop(e->auth);
	mhd->stop_daemon(e->daemon);
	exporter_free(e);
}

/* Counters a scraper can rate(): totals since each VM started where the
 * source knows them, child events as reason labels, every VM of the
 * selection (each vCPU too with --per-vcpu: the writer's level); scrapes
 * get the first sample at once. Rendered when a
 * scrape asks, at most once per sample, never when nobody scrapes. */
static const struct frontend_view exporter_view = {
	.pace = FRONTEND_EVERY,
	.at_once = true,
	.on_demand = true,
	.vms = true,
	.children = true,
	.past = true,
	.whole = true,
};

static const struct frontend_view *exporter_select(const struct options *opts)
{
	return opts->listen ? &exporter_view : NULL;
}

/* Open it after signals are blocked: the server's thread inherits the
 * mask, so they all reach the loop's signalfd. */
static int exporter_fe_open(struct frontend *fe, const struct options *opts)
{
	struct exporter_addr addr;

	if (exporter_parse_listen(opts->listen, &addr, &fe->msg))
		return -EINVAL;
	fe->priv = exporter_start(&addr, opts->web_config, opts->per_vcpu,
				  &fe->msg);
	if (!fe->priv) {
		fe->runtime = true;
		return -EIO;
	}
	return 0;
}

static int exporter_fe_render(struct frontend *fe, const struct snapshot *snap)
{
	exporter_publish(fe->priv, snap);
	return 0;
}

static void exporter_fe_sampled(struct frontend *fe)
{
	exporter_sampled(fe->priv);
}

static int exporter_fe_input_fd(struct frontend *fe)
{
	return ((struct exporter *)fe->priv)->efd;
}

/* UI_RENDER when a scrape waits for a format not rendered yet. */
static enum ui_action exporter_fe_input(struct frontend *fe)
{
	struct exporter *e = fe->priv;
	uint64_t n;
	unsigned int wanted;

	if (read(e->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return UI_NONE;
	pthread_mutex_lock(&e->lock);
	wanted = e->wanted;
	pthread_mutex_unlock(&e->lock);
	fe->req.action = wanted ? UI_RENDER : UI_NONE;
	return fe->req.action;
}

static void exporter_fe_close(struct frontend *fe)
{
	exporter_stop(fe->priv);
	fe->priv = NULL;
}

const struct frontend_ops exporter_frontend_ops = {
	.name = "exporter",
	.select = exporter_select,
	.open = exporter_fe_open,
	.render = exporter_fe_render,
	.input_fd = exporter_fe_input_fd,
	.input = exporter_fe_input,
	.sampled = exporter_fe_sampled,
	.close = exporter_fe_close,
};
