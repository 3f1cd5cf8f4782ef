// SPDX-License-Identifier: GPL-2.0-only
/*
 * The HTTP side of --listen, on libmicrohttpd: one internal polling thread
 * (epoll where available) serves every connection without blocking, so a
 * client that sends nothing only holds its own slot until the timeout.
 * Responses are built once per sample by the main loop and shared by
 * every scrape (libmicrohttpd counts their references), so a scrape costs
 * a lookup and a send, and memory does not grow with the number of
 * clients beyond the per-connection pool. As a front-end (--listen, alone
 * or with -l/-L), it starts the server on open, publishes on render and
 * stops on close.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errmsg.h"
#include "exporter.h"
#include "mhd.h"
#include "openmetrics.h"
#include "options.h"
#include "strbuf.h"
#include "util.h"
#include "webconfig.h"

/* An open connection, for the deadline of the request it carries. */
struct exp_conn {
	struct exp_conn *prev, *next;
	int fd;		   /* our own dup of its socket: shutdown() on it
				 * can never hit a reused descriptor */
	uint64_t since_ns; /* connected, or its last request completed */
};

struct exporter {
	struct MHD_Daemon *daemon;
	pthread_mutex_t lock;	      /* guards resp */
	struct MHD_Response *resp[2]; /* by enum openmetrics_format;
					 * NULL until the first publish */
	/* fixed answers, made once */
	struct MHD_Response *index, *not_found, *not_allowed, *unavailable;
	struct strbuf text;	    /* main thread only */
	pthread_mutex_t conns_lock; /* guards conns */
	struct exp_conn *conns;	    /* open connections */
	struct webconfig wc;	    /* --web-config; users checked on the
				     * server's thread only */
	char *cert, *key;	    /* PEM, kept while the server runs */
	struct MHD_Response *unauthorized;
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

/* Parses a decimal port 1-65535 that is the whole string. */
static int exp_port(const char *s, unsigned int *port)
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
	if (exp_port(port_s, &port))
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

static enum MHD_Result exp_queue(struct MHD_Connection *conn,
				 unsigned int status, struct MHD_Response *r)
{
	return mhd->queue_response(conn, status, r);
}

/*
 * Every request: the published text for /metrics, the index for /, else
 * an error; called on the server's thread, so it only reads what
 * exporter_publish swapped in, under the lock.
 */
static enum MHD_Result exp_handle(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct exporter *e = cls;
	bool get = !strcmp(method, MHD_HTTP_METHOD_GET) ||
		   !strcmp(method, MHD_HTTP_METHOD_HEAD);
	enum MHD_Result rc;
	int fmt;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)req_cls;
	if (webconfig_auth(&e->wc)) {
		char *pass = NULL;
		char *user = mhd->basic_auth_get_username_password(conn, &pass);
		bool ok = user && pass && webconfig_check(&e->wc, user, pass);

		if (pass) {
			explicit_bzero(pass, strlen(pass));
			mhd->free(pass);
		}
		if (user)
			mhd->free(user);
		if (!ok)
			return mhd
				->queue_basic_auth_fail_response(conn,
								 "kvmstat",
								 e->unauthorized);
	}
	if (strcmp(url, "/metrics")) {
		if (strcmp(url, "/"))
			return exp_queue(conn, MHD_HTTP_NOT_FOUND, e->not_found);
		return get ? exp_queue(conn, MHD_HTTP_OK, e->index) :
			     exp_queue(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				       e->not_allowed);
	}
	if (!get)
		return exp_queue(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				 e->not_allowed);
	fmt = openmetrics_negotiate(
		mhd->lookup_connection_value(conn, MHD_HEADER_KIND,
					     MHD_HTTP_HEADER_ACCEPT));
	pthread_mutex_lock(&e->lock);
	if (e->resp[fmt])
		rc = exp_queue(conn, MHD_HTTP_OK, e->resp[fmt]);
	else
		rc = exp_queue(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
			       e->unavailable);
	pthread_mutex_unlock(&e->lock);
	return rc;
}

/* Tracks connections opening and closing (the server's thread). */
static void exp_notify(void *cls, struct MHD_Connection *conn, void **ctx,
		       enum MHD_ConnectionNotificationCode code)
{
	struct exporter *e = cls;
	struct exp_conn *c = *ctx;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			mhd->get_connection_info(conn,
						 MHD_CONNECTION_INFO_CONNECTION_FD);

		c = xcalloc(1, sizeof(*c));
		c->fd = ci ? fcntl(ci->connect_fd, F_DUPFD_CLOEXEC, 0) : -1;
		if (c->fd < 0) {
			free(c);
			return;
		}
		c->since_ns = util_now_ns();
		pthread_mutex_lock(&e->conns_lock);
		c->next = e->conns;
		if (c->next)
			c->next->prev = c;
		e->conns = c;
		pthread_mutex_unlock(&e->conns_lock);
		*ctx = c;
		return;
	}
	if (!c)
		return;
	pthread_mutex_lock(&e->conns_lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		e->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&e->conns_lock);
	close(c->fd);
	free(c);
	*ctx = NULL;
}

/* A request was answered: the next one on the connection starts now. */
static void exp_completed(void *cls, struct MHD_Connection *conn,
			  void **req_cls, enum MHD_RequestTerminationCode toe)
{
	struct exporter *e = cls;
	const union MHD_ConnectionInfo *ci =
		mhd->get_connection_info(conn,
					 MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct exp_conn *c = ci ? ci->socket_context : NULL;

	(void)req_cls;
	(void)toe;
	if (!c)
		return;
	pthread_mutex_lock(&e->conns_lock);
	c->since_ns = util_now_ns();
	pthread_mutex_unlock(&e->conns_lock);
}

/* Cuts off requests older than the deadline: the server's thread sees
 * the socket shut down and closes the connection. */
static void exp_reap(struct exporter *e)
{
	uint64_t now = util_now_ns();

	pthread_mutex_lock(&e->conns_lock);
	for (struct exp_conn *c = e->conns; c; c = c->next)
		if (now - c->since_ns > EXPORTER_DEADLINE_S * 1000000000ull)
			shutdown(c->fd, SHUT_RDWR);
	pthread_mutex_unlock(&e->conns_lock);
}

/* libmicrohttpd fails to make a response or add one of these valid
 * headers only when memory runs out: that ends the program, as xmalloc
 * does (util.h). */
static struct MHD_Response *exp_made(struct MHD_Response *r)
{
	if (!r)
		util_die("out of memory making an HTTP response");
	return r;
}

static void exp_header(struct MHD_Response *r, const char *name,
		       const char *value)
{
	if (mhd->add_response_header(r, name, value) != MHD_YES)
		util_die("out of memory making an HTTP response");
}

/* A fixed answer. */
static struct MHD_Response *exp_fixed(const char *body, const char *type,
				      bool allow)
{
	struct MHD_Response *r = exp_made(
		mhd->create_response_from_buffer(strlen(body), (void *)body,
						 MHD_RESPMEM_PERSISTENT));

	exp_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (allow)
		exp_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	return r;
}

/* Binds and listens on addr: the socket, or -errno. */
static int exp_listen(const struct exporter_addr *addr)
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

static void exp_free(struct exporter *e)
{
	struct MHD_Response **fixed[] = { &e->index,	    &e->not_found,
					  &e->not_allowed,  &e->unavailable,
					  &e->unauthorized, &e->resp[0],
					  &e->resp[1] };

	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++)
		if (*fixed[i])
			mhd->destroy_response(*fixed[i]);
	pthread_mutex_destroy(&e->lock);
	pthread_mutex_destroy(&e->conns_lock);
	strbuf_free(&e->text);
	webconfig_free(&e->wc);
	if (e->key)
		explicit_bzero(e->key, strlen(e->key));
	free(e->key);
	free(e->cert);
	free(e);
}

/* The whole of a PEM file, NUL-terminated: 0 or -errno with msg set. */
static int exp_pem(const char *path, char **out, struct errmsg *msg)
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
static bool exp_loopback(const struct exporter_addr *addr)
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
				       const char *web_config,
				       struct errmsg *msg)
{
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD;
	struct MHD_OptionItem tls[3] = { { MHD_OPTION_END, 0, NULL } };
	struct exporter *e;
	int fd;

	mhd = mhd_load(msg);
	if (!mhd)
		return NULL;
	e = xcalloc(1, sizeof(*e));
	pthread_mutex_init(&e->lock, NULL);
	pthread_mutex_init(&e->conns_lock, NULL);
	strbuf_init(&e->text);
	e->index = exp_fixed(exp_index_html, "text/html; charset=utf-8", false);
	e->not_found = exp_fixed(exp_not_found, "text/plain; charset=utf-8",
				 false);
	e->not_allowed = exp_fixed(exp_not_allowed, "text/plain; charset=utf-8",
				   true);
	e->unavailable = exp_fixed(exp_unavailable, "text/plain; charset=utf-8",
				   false);
	exp_header(e->unavailable, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	e->unauthorized = exp_fixed(exp_unauthorized,
				    "text/plain; charset=utf-8", false);
	if (web_config) {
		if (webconfig_load(web_config, &e->wc, msg))
			goto out_free;
		if (e->wc.cert_file &&
		    (exp_pem(e->wc.cert_file, &e->cert, msg) ||
		     exp_pem(e->wc.key_file, &e->key, msg))) {
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
	} else if (!exp_loopback(addr)) {
		/* the one warning: the front-end prints it once, at start */
		fprintf(stderr,
			"kvmstat: warning: serving metrics on %s without TLS%s: give --web-config with tls_server_config%s\n",
			addr->text,
			webconfig_auth(&e->wc) ? ", passwords in the clear" : "",
			webconfig_auth(&e->wc) ? "" : " and basic_auth_users");
	}
	fd = exp_listen(addr);
	if (fd < 0) {
		errmsg_set(msg, fd,
			   "cannot listen on %s: %s; pick another address or port with --listen",
			   addr->text, strerror(-fd));
		goto out_free;
	}
	if (addr->ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	e->daemon = mhd->start_daemon(flags, 0, NULL, NULL, exp_handle, e,
				      MHD_OPTION_LISTEN_SOCKET, fd,
				      MHD_OPTION_CONNECTION_LIMIT,
				      (unsigned int)EXPORTER_MAX_CONNECTIONS,
				      MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				      (unsigned int)
					      EXPORTER_PER_ADDR_CONNECTIONS,
				      MHD_OPTION_CONNECTION_TIMEOUT,
				      (unsigned int)EXPORTER_TIMEOUT_S,
				      MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				      (size_t)EXPORTER_CONN_MEMORY,
				      MHD_OPTION_NOTIFY_CONNECTION, exp_notify,
				      e, MHD_OPTION_NOTIFY_COMPLETED,
				      exp_completed, e, MHD_OPTION_ARRAY, tls,
				      MHD_OPTION_END);
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
	exp_free(e);
	return NULL;
}

/* A response that owns the text of b (b is emptied). */
static struct MHD_Response *exp_text(struct strbuf *b, const char *type)
{
	struct MHD_Response *r;
	char *s = b->s;
	size_t len = b->len;

	strbuf_init(b);
	r = exp_made(mhd->create_response_from_buffer_with_free_callback(len, s,
									 free));
	exp_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	return r;
}

/* Renders snap (a snapshot of the whole selection, its guest names the
 * guest labels) in both formats and makes them what scrapes get from now
 * on; then cuts off requests past their deadline. */
static void exporter_publish(struct exporter *e, const struct snapshot *snap)
{
	static const char *const types[] = {
		[OPENMETRICS_PROMETHEUS] = OPENMETRICS_TYPE_PROMETHEUS,
		[OPENMETRICS_OPENMETRICS] = OPENMETRICS_TYPE_OPENMETRICS,
	};
	struct MHD_Response *fresh[2], *old[2];

	for (int f = 0; f < 2; f++) {
		strbuf_reset(&e->text);
		openmetrics_render(&e->text, snap, (enum openmetrics_format)f);
		fresh[f] = exp_text(&e->text, types[f]);
	}
	pthread_mutex_lock(&e->lock);
	for (int f = 0; f < 2; f++) {
		old[f] = e->resp[f];
		e->resp[f] = fresh[f];
	}
	pthread_mutex_unlock(&e->lock);
	/* connections still sending an old text hold their own reference */
	for (int f = 0; f < 2; f++)
		if (old[f])
			mhd->destroy_response(old[f]);
	exp_reap(e);
}

/* Stops the server, closes the socket, frees e (NULL is fine). */
static void exporter_stop(struct exporter *e)
{
	if (!e)
		return;
	mhd->stop_daemon(e->daemon);
	exp_free(e);
}

/* Counters a scraper can rate(): totals since each VM started where the
 * source knows them, child events as reason labels, every VM and vCPU of
 * the selection; scrapes get the first sample at once. */
static const struct frontend_view exporter_view = {
	.pace = FRONTEND_EVERY,
	.at_once = true,
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
	fe->priv = exporter_start(&addr, opts->web_config, &fe->msg);
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
	.close = exporter_fe_close,
};
