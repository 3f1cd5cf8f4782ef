// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness of the QMP provider: what QEMU answers (schemas,
 * vCPU lists, statistics, errors, events) comes from the input, and the
 * provider opens and reads twice as kvmstat does, wanting the VM's memory
 * map (info mtree -f) and asking names from it. A fake monitor on a
 * thread sends a fixed greeting, then for each command it receives the
 * next part of the input (parts are separated by NUL bytes; a part may
 * hold several lines, or none), then closes. Whatever it sends, open and
 * read return (a reply that never comes costs the 20 ms reply timeout)
 * and every value pushed belongs to a field the provider interned. With no
 * filter and no arbiter the provider keeps every name and no other
 * provider claims any.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "options.h"
#include "provider.h"
#include "sample.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern const struct provider_ops qmp_provider_ops;

static int listen_fd = -1;
static char sock_path[108];

struct serve_arg {
	const uint8_t *data;
	size_t size;
};

/* The fake monitor: one connection, one part of the input per command. */
static void *serve(void *arg)
{
	const struct serve_arg *a = arg;
	static const char greeting[] =
		"{\"QMP\": {\"version\": {}, \"capabilities\": []}}\r\n";
	size_t off = 0;
	char buf[4096];
	int c = accept(listen_fd, NULL, NULL);

	if (c < 0)
		return NULL;
	if (send(c, greeting, sizeof(greeting) - 1, MSG_NOSIGNAL) < 0)
		goto out;
	while (off <= a->size) {
		const uint8_t *end = memchr(a->data + off, 0, a->size - off);
		size_t len = end ? (size_t)(end - a->data) - off :
				   a->size - off;
		ssize_t n = recv(c, buf, sizeof(buf), 0);

		if (n <= 0)
			break;
		/* one part per command line received */
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n')
				continue;
			if (len && send(c, a->data + off, len, MSG_NOSIGNAL) < 0)
				goto out;
			off += len + 1;
			if (off > a->size)
				break;
			end = memchr(a->data + off, 0, a->size - off);
			len = end ? (size_t)(end - a->data) - off :
				    a->size - off;
		}
	}
out:
	close(c);
	return NULL;
}

static void cleanup(void)
{
	unlink(sock_path);
}

static void setup(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(sock_path, sizeof(sock_path), "/tmp/fuzz-qmp-%d.sock",
		 (int)getpid());
	unlink(sock_path);
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 ||
	    bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(listen_fd, 4))
		abort();
	atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct provider_cfg cfg;
	struct serve_arg a = { data, size };
	const char *paths[1];
	struct options o;
	struct field_table fields;
	struct sample_set set;
	struct provider p;
	pthread_t t;

	if (size > 32768)
		return 0;
	if (listen_fd < 0)
		setup();
	memset(&o, 0, sizeof(o));
	paths[0] = sock_path;
	o.qmp_paths = paths;
	o.nqmp = 1;
	o.qmp_reply_timeout_ms = 20;
	o.qmp_retry_ms = 1;
	field_table_init(&fields);
	sample_set_init(&set, &fields);
	memset(&p, 0, sizeof(p));
	p.ops = &qmp_provider_ops;
	p.fields = &fields;
	p.want_vms = true;
	p.want_gpa_names = true; /* its memory map asked too */
	p.children = true;
	if (pthread_create(&t, NULL, serve, &a))
		abort();
	provider_cfg_init(&cfg, &o);
	if (!qmp_provider_ops.open(&p, &cfg)) {
		for (int r = 0; r < 2; r++) {
			qmp_provider_ops.read(&p, &set);
			/* the fake monitor is this process: the VM's pid */
			qmp_provider_ops.gpa_name(&p, getpid(), 0xfed00000);
			qmp_provider_ops.gpa_name(&p, getpid(), 0);
			for (size_t i = 0; i < set.n; i++)
				if (set.v[i].field < 0 ||
				    (size_t)set.v[i].field >= fields.n)
					abort();
			sample_set_clear(&set);
		}
		qmp_provider_ops.close(&p);
	}
	pthread_join(t, NULL);
	sample_set_free(&set);
	field_table_free(&fields);
	return 0;
}
