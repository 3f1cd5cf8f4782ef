// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QMP client. The socket is non-blocking and every wait is a poll()
 * bounded by the caller's deadline, so a monitor that hangs costs at most
 * that long. Messages are split at newlines (the server ends each with
 * CRLF and escapes newlines inside strings) and parsed with jansson one at
 * a time; events and late replies to commands given up on are dropped on
 * the way to the reply wanted.
 *
 * A peer cannot hold the caller: the deadline is checked before every
 * read, not only when the socket runs dry, so a monitor that floods
 * events costs at most the time allowed; what it may send per refresh is
 * bounded too (q->budget), and a pending SIGINT or SIGTERM ends any wait.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "errmsg.h"
#include "qmp_client.h"
#include "util.h"

#define QMP_READ_MIN 16384
/* How much of an unparsable message a diagnostic quotes. */
#define QMP_QUOTE_MAX 40
/* The longest single poll(), so a pending stop is seen in time. */
#define QMP_POLL_SLICE_MS 100

void qmp_init(struct qmp *q, unsigned int timeout_ms)
{
	memset(q, 0, sizeof(*q));
	q->fd = -1;
	q->next_id = 1;
	q->timeout_ms = timeout_ms;
	qmp_budget(q, QMP_BUDGET_DEFAULT);
}

void qmp_budget(struct qmp *q, size_t bytes)
{
	q->budget = bytes;
	q->events_left = QMP_EVENTS_MAX;
}

/* Counts an event skipped against the budget: 0, or -ENOBUFS. */
static int qmp_event(struct qmp *q)
{
	q->events++;
	if (q->events_left--)
		return 0;
	q->events_left = 0;
	return errmsg_set(&q->err, -ENOBUFS,
			  "more than %u events in one refresh (a flood?)",
			  QMP_EVENTS_MAX);
}

bool qmp_stop_pending(void)
{
	sigset_t set;

	if (sigpending(&set))
		return false;
	return sigismember(&set, SIGINT) == 1 ||
	       sigismember(&set, SIGTERM) == 1;
}

void qmp_close(struct qmp *q)
{
	if (q->fd >= 0)
		close(q->fd);
	free(q->buf);
	q->fd = -1;
	q->buf = NULL;
	q->len = q->cap = q->scan = q->off = 0;
	q->pid = 0;
}

/* Waits for events on the socket until deadline: 0 when ready, -EINTR
 * when a stop is pending, or -ETIMEDOUT. A deadline in the past still
 * looks once. */
static int qmp_wait(struct qmp *q, short events, uint64_t deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = q->fd, .events = events };
		uint64_t now = util_now_ns();
		int ms = now >= deadline ?
				 0 :
				 (int)((deadline - now + 999999) / 1000000);
		int n;

		if (qmp_stop_pending())
			return -EINTR;
		if (ms > QMP_POLL_SLICE_MS)
			ms = QMP_POLL_SLICE_MS;
		n = poll(&pfd, 1, ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n == 0 && util_now_ns() >= deadline)
			return -ETIMEDOUT;
	}
}

/* The time after which no more is read: the deadline, or a short look
 * when it is already past. */
static uint64_t qmp_stop_at(uint64_t deadline)
{
	uint64_t now = util_now_ns();

	return deadline > now ? deadline : now + QMP_LOOK_NS;
}

/* Quotes the start of a bad message for q->err, without control bytes. */
static void qmp_quote(char *out, size_t outlen, const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n + 1 < outlen && i < QMP_QUOTE_MAX; i++)
		out[n++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	out[n] = '\0';
}

/*
 * Takes the next message off the buffer, reading more until deadline
 * (waits) or stop (reads, see qmp_stop_at()), within q->budget. 0 with
 * *msg (a JSON object, caller decrefs), or -errno.
 */
static int qmp_next(struct qmp *q, uint64_t deadline, uint64_t stop,
		    json_t **msg)
{
	for (;;) {
		char *nl = q->len > q->scan ? memchr(q->buf + q->scan, '\n',
						     q->len - q->scan) :
					      NULL;
		ssize_t n;
		int rc;

		if (nl) {
			const char *start = q->buf + q->off;
			size_t end = (size_t)(nl - start);
			json_error_t jerr;
			json_t *m;

			if (end && start[end - 1] == '\r')
				end--;
			m = end ? json_loadb(start, end, 0, &jerr) : NULL;
			if (!m || !json_is_object(m)) {
				char quote[QMP_QUOTE_MAX + 1];

				qmp_quote(quote, sizeof(quote), start, end);
				if (m)
					errmsg_set(&q->err, -EPROTO,
						   "not a QMP message: \"%s\"",
						   quote);
				else
					errmsg_set(&q->err, -EPROTO,
						   "not JSON (%s): \"%s\"",
						   end ? jerr.text :
							 "empty line",
						   quote);
				json_decref(m);
				return -EPROTO;
			}
			/* taken off the front without moving the rest: a
			 * buffer of many small messages costs linear time */
			q->off = q->scan = (size_t)(nl + 1 - q->buf);
			if (q->off == q->len)
				q->off = q->scan = q->len = 0;
			*msg = m;
			return 0;
		}
		if (q->off) {
			q->len -= q->off;
			memmove(q->buf, q->buf + q->off, q->len);
			q->off = 0;
		}
		q->scan = q->len;
		if (q->len >= QMP_MSG_MAX)
			return errmsg_set(&q->err, -EMSGSIZE,
					  "a message longer than %u bytes",
					  QMP_MSG_MAX);
		if (!q->budget)
			return errmsg_set(&q->err, -ENOBUFS,
					  "more than %zu MiB in one refresh (a flood of events?)",
					  QMP_BUDGET_DEFAULT >> 20);
		if (util_now_ns() >= stop)
			return errmsg_set(&q->err, -ETIMEDOUT,
					  "no reply within %u ms",
					  q->timeout_ms);
		if (q->cap - q->len < QMP_READ_MIN) {
			q->cap = q->cap ? q->cap * 2 : 4 * QMP_READ_MIN;
			q->buf = xrealloc(q->buf, q->cap);
		}
		n = recv(q->fd, q->buf + q->len,
			 q->cap - q->len < q->budget ? q->cap - q->len :
						       q->budget,
			 MSG_DONTWAIT);
		if (n > 0) {
			q->len += (size_t)n;
			q->budget -= (size_t)n;
			continue;
		}
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return errmsg_set(&q->err, -ECONNRESET,
					  "QEMU closed the connection");
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			rc = -errno;
			return errmsg_set(&q->err, rc, "cannot read: %s",
					  strerror(-rc));
		}
		rc = qmp_wait(q, POLLIN, deadline);
		if (rc) {
			if (rc == -ETIMEDOUT)
				errmsg_set(&q->err, rc, "no reply within %u ms",
					   q->timeout_ms);
			else if (rc == -EINTR)
				errmsg_set(&q->err, rc, "interrupted");
			else
				errmsg_set(&q->err, rc, "cannot wait: %s",
					   strerror(-rc));
			return rc;
		}
	}
}

int qmp_send(struct qmp *q, const char *cmd, json_t *args, uint64_t deadline,
	     uint64_t *id)
{
	json_t *m = json_object();
	char *text;
	size_t len, off = 0;
	int rc = 0;

	if (q->fd < 0) {
		json_decref(m);
		return errmsg_set(&q->err, -ENOTCONN, "not connected");
	}
	json_object_set_new(m, "execute", json_string(cmd));
	if (args)
		json_object_set(m, "arguments", args);
	json_object_set_new(m, "id", json_integer((json_int_t)q->next_id));
	/* NULL only when memory runs out, which jansson's allocator (xmalloc,
	 * set in main) never lets happen */
	text = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	len = strlen(text);
	text[len++] = '\n'; /* over the NUL: the length is known */
	while (off < len) {
		ssize_t n = send(q->fd, text + off, len - off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n >= 0) {
			off += (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			rc = qmp_wait(q, POLLOUT, deadline);
			if (rc == -ETIMEDOUT) {
				errmsg_set(&q->err, rc,
					   "cannot send %s within %u ms", cmd,
					   q->timeout_ms);
				break;
			}
			if (!rc)
				continue;
		} else {
			rc = -errno;
		}
		if (rc == -EPIPE || rc == -ECONNRESET) {
			rc = errmsg_set(&q->err, -ECONNRESET,
					"QEMU closed the connection");
		} else {
			errmsg_set(&q->err, rc, "cannot send %s: %s", cmd,
				   strerror(-rc));
		}
		break;
	}
	free(text);
	if (rc)
		return rc;
	*id = q->next_id++;
	return 0;
}

/* Whether a reply's "id" is id; a reply without one (QEMU could not parse
 * the command) answers the command waited for. */
static bool qmp_id_is(json_t *m, uint64_t id)
{
	json_t *v = json_object_get(m, "id");

	if (!v)
		return true;
	return json_is_integer(v) && json_integer_value(v) >= 0 &&
	       (uint64_t)json_integer_value(v) == id;
}

int qmp_recv(struct qmp *q, uint64_t id, uint64_t deadline, json_t **ret)
{
	uint64_t stop = qmp_stop_at(deadline);

	for (;;) {
		json_t *m, *v, *err;
		int rc;

		rc = qmp_next(q, deadline, stop, &m);
		if (rc)
			return rc;
		if (json_object_get(m, "event")) {
			json_decref(m);
			rc = qmp_event(q);
			if (rc)
				return rc;
			continue;
		}
		v = json_object_get(m, "return");
		err = json_object_get(m, "error");
		if (!v && !err) {
			json_decref(m);
			return errmsg_set(
				&q->err, -EPROTO,
				"not a QMP reply (no return, error or event)");
		}
		if (!qmp_id_is(m, id)) {
			json_decref(m); /* late reply to a command given up on */
			continue;
		}
		if (err) {
			const char *cls = json_string_value(
				json_object_get(err, "class"));
			const char *desc = json_string_value(
				json_object_get(err, "desc"));

			errmsg_set(&q->err, -EREMOTEIO, "%s: %s",
				   cls ? cls : "error",
				   desc ? desc : "(no description)");
			json_decref(m);
			return -EREMOTEIO;
		}
		if (ret)
			*ret = json_incref(v);
		json_decref(m);
		return 0;
	}
}

int qmp_command(struct qmp *q, const char *cmd, json_t *args, uint64_t deadline,
		json_t **ret)
{
	uint64_t id;
	int rc = qmp_send(q, cmd, args, deadline, &id);

	return rc ? rc : qmp_recv(q, id, deadline, ret);
}

/* Connects the socket; 0 or -errno with q->err. */
static int qmp_dial(struct qmp *q, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int rc;

	if (strlen(path) >= sizeof(sa.sun_path))
		return errmsg_set(&q->err, -ENAMETOOLONG,
				  "path longer than %zu bytes",
				  sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	q->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (q->fd < 0) {
		rc = -errno;
		return errmsg_set(&q->err, rc, "socket: %s", strerror(-rc));
	}
	if (connect(q->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		rc = -errno;
		if (rc == -EAGAIN)
			errmsg_set(&q->err, rc, "the listen queue is full");
		else
			errmsg_set(&q->err, rc, "%s", strerror(-rc));
		return rc;
	}
	if (!getsockopt(q->fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen))
		q->pid = cred.pid;
	return 0;
}

int qmp_connect(struct qmp *q, const char *path, uint64_t deadline)
{
	uint64_t stop = qmp_stop_at(deadline);
	json_t *m;
	int rc;

	qmp_close(q);
	rc = qmp_dial(q, path);
	if (rc)
		goto out_close;
	/* the greeting comes first; skipping events costs nothing */
	while (!(rc = qmp_next(q, deadline, stop, &m)) &&
	       json_object_get(m, "event")) {
		json_decref(m);
		rc = qmp_event(q);
		if (rc)
			break;
	}
	if (rc) {
		if (rc == -ETIMEDOUT)
			errmsg_set(&q->err, rc,
				   "no greeting within %u ms: is another client connected? (a QMP socket serves one at a time)",
				   q->timeout_ms);
		goto out_close;
	}
	if (!json_is_object(json_object_get(m, "QMP"))) {
		json_decref(m);
		rc = errmsg_set(&q->err, -EPROTO,
				"no QMP greeting: is this a QMP socket?");
		goto out_close;
	}
	json_decref(m);
	rc = qmp_command(q, "qmp_capabilities", NULL, deadline, NULL);
	if (rc) {
		struct errmsg why = q->err;

		errmsg_set(&q->err, rc, "qmp_capabilities: %.200s", why.text);
		goto out_close;
	}
	return 0;

out_close:
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
	q->pid = 0;
	q->len = q->scan = q->off = 0;
	return rc;
}
