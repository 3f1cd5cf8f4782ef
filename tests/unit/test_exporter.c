// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exporter: --listen specs good and bad (port only, IPv4:port,
 * [IPv6]:port, localhost, ports out of range, junk), and the exporter as
 * a front-end: a bad spec is a usage error, a port in use a runtime one,
 * 503 before the first render and 200 with the exposition after it.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "errmsg.h"
#include "exporter.h"
#include "frontend.h"
#include "options.h"
#include "stats.h"
#include "suites.h"

START_TEST(test_parse_good)
{
	static const struct {
		const char *spec;
		int family;
		const char *text;
		unsigned int port;
	} cases[] = {
		{ "9712", AF_INET, "127.0.0.1:9712", 9712 },
		{ "1", AF_INET, "127.0.0.1:1", 1 },
		{ "65535", AF_INET, "127.0.0.1:65535", 65535 },
		{ "0.0.0.0:80", AF_INET, "0.0.0.0:80", 80 },
		{ "192.168.1.20:9100", AF_INET, "192.168.1.20:9100", 9100 },
		{ "localhost:8080", AF_INET, "127.0.0.1:8080", 8080 },
		{ "[::1]:9712", AF_INET6, "[::1]:9712", 9712 },
		{ "[::]:443", AF_INET6, "[::]:443", 443 },
		{ "[fe80::1]:65535", AF_INET6, "[fe80::1]:65535", 65535 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct exporter_addr a;
		struct errmsg err = { "" };

		ck_assert_msg(!exporter_parse_listen(cases[i].spec, &a, &err),
			      "%s: %s", cases[i].spec, err.text);
		ck_assert_int_eq(a.ss.ss_family, cases[i].family);
		ck_assert_str_eq(a.text, cases[i].text);
		if (cases[i].family == AF_INET) {
			const struct sockaddr_in *in = (const void *)&a.ss;

			ck_assert_uint_eq(a.len, sizeof(*in));
			ck_assert_uint_eq(ntohs(in->sin_port), cases[i].port);
		} else {
			const struct sockaddr_in6 *in6 = (const void *)&a.ss;

			ck_assert_uint_eq(a.len, sizeof(*in6));
			ck_assert_uint_eq(ntohs(in6->sin6_port), cases[i].port);
		}
	}
}
END_TEST

START_TEST(test_parse_loopback_default)
{
	struct exporter_addr a;
	const struct sockaddr_in *in = (const void *)&a.ss;
	struct errmsg err;

	ck_assert_int_eq(exporter_parse_listen("9712", &a, &err), 0);
	ck_assert_uint_eq(ntohl(in->sin_addr.s_addr), INADDR_LOOPBACK);
}
END_TEST

START_TEST(test_parse_bad)
{
	static const char *const bad[] = {
		"",
		"0",
		"65536",
		"70000",
		"-1",
		"99999999999999999999",
		"abc",
		"80x",
		":80",
		"127.0.0.1:",
		"127.0.0.1:0",
		"127.0.0.1:65536",
		"1.2.3:80",
		"256.1.1.1:80",
		"example.com:80",
		"::1:80",
		"[::1]",
		"[::1]9712",
		"[::1:9712",
		"::1]:9712",
		"[1.2.3.4]:80",
		"[::1]:",
		"[::1]:http",
		"[]:80",
		"[::1]:80:80",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct exporter_addr a;
		struct errmsg err = { "" };
		char want[128];

		ck_assert_msg(exporter_parse_listen(bad[i], &a, &err) == -EINVAL,
			      "\"%s\" was accepted", bad[i]);
		ck_assert_ptr_nonnull(
			strstr(err.text, "--listen needs [ADDR:]PORT"));
		snprintf(want, sizeof(want), "not \"%s\"", bad[i]);
		ck_assert_msg(strstr(err.text, want) != NULL, "%s", err.text);
	}
}
END_TEST

/* A listening socket on 127.0.0.1 at a port the kernel picks. */
static int ex_listener(unsigned int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fd, 1), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* GET path on 127.0.0.1:port: the status code. */
static int ex_get(unsigned int port, const char *path, char *body,
		  size_t bodylen)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	char req[256], resp[8192];
	size_t got = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), status = -1;
	const char *b;

	ck_assert_int_ge(fd, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)port);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	snprintf(req, sizeof(req),
		 "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		 path);
	ck_assert_int_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	while (got < sizeof(resp) - 1 &&
	       (n = read(fd, resp + got, sizeof(resp) - 1 - got)) > 0)
		got += (size_t)n;
	resp[got] = '\0';
	close(fd);
	ck_assert_int_eq(sscanf(resp, "HTTP/1.%*d %d", &status), 1);
	b = strstr(resp, "\r\n\r\n");
	snprintf(body, bodylen, "%s", b ? b + 4 : "");
	return status;
}

/* One field counted over two refreshes. */
static void ex_stats(struct stats *s)
{
	int f;

	stats_init(s, false);
	f = field_table_intern(&s->fields, "kvm_exit", -1, FIELD_CUMULATIVE,
			       "test");
	sample_set_push(&s->set, f, 0, -1, 0, 100, 0);
	stats_update(s, 1000000000ull);
	sample_set_push(&s->set, f, 0, -1, 0, 350, 0);
	stats_update(s, 2000000000ull);
}

START_TEST(test_frontend)
{
	struct frontend fe = { .ops = &exporter_frontend_ops };
	struct options o = { .listen = NULL };
	struct snapshot snap;
	struct stats s;
	char spec[32], body[8192];
	unsigned int port;
	int busy;

	/* selected by --listen alone */
	ck_assert_ptr_null(fe.ops->select(&o));
	o.listen = "9712";
	fe.view = fe.ops->select(&o);
	ck_assert_ptr_nonnull(fe.view);

	/* a bad spec: a usage error */
	o.listen = "1.2.3:80";
	ck_assert_int_eq(fe.ops->open(&fe, &o), -EINVAL);
	ck_assert(!fe.runtime);
	ck_assert_ptr_nonnull(strstr(fe.msg.text, "--listen needs"));

	/* a port someone listens on: a runtime failure that says what to do */
	busy = ex_listener(&port);
	snprintf(spec, sizeof(spec), "127.0.0.1:%u", port);
	o.listen = spec;
	ck_assert_int_lt(fe.ops->open(&fe, &o), 0);
	ck_assert(fe.runtime);
	ck_assert_ptr_nonnull(strstr(fe.msg.text, "cannot listen on"));
	ck_assert_ptr_nonnull(strstr(fe.msg.text, spec));
	close(busy);

	/* free again: serves, 503 until the first render */
	fe.runtime = false;
	ck_assert_int_eq(fe.ops->open(&fe, &o), 0);
	ck_assert_int_eq(ex_get(port, "/metrics", body, sizeof(body)), 503);
	ex_stats(&s);
	snapshot_build(&s, NULL, &snap);
	ck_assert_int_eq(fe.ops->render(&fe, &snap), 0);
	snapshot_free(&snap);
	ck_assert_int_eq(ex_get(port, "/metrics", body, sizeof(body)), 200);
	ck_assert_msg(strstr(body, "kvm_exit") != NULL, "%s", body);
	ck_assert_int_eq(ex_get(port, "/nothing", body, sizeof(body)), 404);
	fe.ops->close(&fe);
	ck_assert_ptr_null(fe.priv);
	stats_free(&s);
}
END_TEST

Suite *exporter_suite(void)
{
	Suite *s = suite_create("exporter");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_parse_good);
	tcase_add_test(tc, test_parse_loopback_default);
	tcase_add_test(tc, test_parse_bad);
	tcase_add_test(tc, test_frontend);
	suite_add_tcase(s, tc);
	return s;
}
