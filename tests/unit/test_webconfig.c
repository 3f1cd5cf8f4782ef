// SPDX-License-Identifier: GPL-2.0-only
/*
 * The --web-config reader: the exporter-toolkit forms it takes (comments,
 * quotes, relative paths, either section alone), what it refuses with the
 * line (other settings, lists, tabs, nesting, half a TLS pair, a password
 * that is not a bcrypt hash) and the bcrypt check itself.
 */
#include <check.h>
#include <crypt.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "errmsg.h"
#include "suites.h"
#include "webconfig.h"

/* bcrypt of "pw", cost 4, made by libxcrypt at the start of the suite */
static char hash[CRYPT_OUTPUT_SIZE];

static void make_hash(void)
{
	struct crypt_data cd;
	const char *salt = crypt_gensalt_rn("$2b$", 4, NULL, 0, hash,
					    sizeof(hash));

	ck_assert_ptr_nonnull(salt);
	memset(&cd, 0, sizeof(cd));
	ck_assert_ptr_nonnull(crypt_r("pw", hash, &cd));
	memcpy(hash, cd.output, sizeof(hash));
	ck_assert_uint_eq(strlen(hash), 60);
}

static int parse(const char *text, struct webconfig *w, struct errmsg *m)
{
	return webconfig_parse(text, strlen(text), "/etc/k", w, m);
}

START_TEST(test_full)
{
	struct webconfig w;
	struct errmsg m;
	char text[1024];

	make_hash();
	snprintf(text, sizeof(text),
		 "---\n# exporter\ntls_server_config:\n  cert_file: c.pem # rel\n"
		 "  key_file: '/abs/k.pem'\n\nbasic_auth_users:\n"
		 "  prom: \"%s\"\n  'o''k': %s\n",
		 hash, hash);
	ck_assert_int_eq(parse(text, &w, &m), 0);
	ck_assert_str_eq(w.cert_file, "/etc/k/c.pem");
	ck_assert_str_eq(w.key_file, "/abs/k.pem");
	ck_assert_uint_eq(w.nusers, 2);
	ck_assert_str_eq(w.users[1].name, "o'k");
	ck_assert(webconfig_auth(&w));
	ck_assert(webconfig_check(&w, "prom", "pw"));
	ck_assert(webconfig_check(&w, "prom", "pw")); /* remembered */
	ck_assert(!webconfig_check(&w, "prom", "pW"));
	ck_assert(!webconfig_check(&w, "prom", ""));
	ck_assert(!webconfig_check(&w, "nobody", "pw"));
	ck_assert(webconfig_check(&w, "o'k", "pw"));
	webconfig_free(&w);
}
END_TEST

START_TEST(test_sections_alone)
{
	struct webconfig w;
	struct errmsg m;

	ck_assert_int_eq(parse("tls_server_config:\n  cert_file: a\n"
			       "  key_file: b\n",
			       &w, &m),
			 0);
	ck_assert(!webconfig_auth(&w));
	webconfig_free(&w);
	ck_assert_int_eq(parse("", &w, &m), 0);
	ck_assert_ptr_null(w.cert_file);
	webconfig_free(&w);
	ck_assert_int_eq(parse("basic_auth_users: {}\n", &w, &m), 0);
	ck_assert(!webconfig_auth(&w));
	webconfig_free(&w);
}
END_TEST

/* Each text is refused with its line and the words given. */
static const struct {
	const char *text, *want;
} bad[] = {
	{ "http_server_config:\n  http2: false\n",
	  "line 1: \"http_server_config\" is not supported" },
	{ "tls_server_config:\n  cert_file: a\n",
	  "needs both cert_file and key_file" },
	{ "tls_server_config:\n", "needs cert_file and key_file" },
	{ "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n",
	  "line 4: tls_server_config: \"min_version\" is not supported" },
	{ "basic_auth_users:\n  u: secret\n",
	  "line 2: the password of \"u\" is not a bcrypt hash" },
	{ "basic_auth_users:\n\tu: x\n", "line 2: a tab in the indentation" },
	{ "basic_auth_users:\n  - u\n", "a list" },
	{ "basic_auth_users:\n  u:\n    v: x\n", "line 2: \"u\" has no value" },
	{ "tls_server_config:\n  cert_file: a\n   key_file: b\n",
	  "line 3: indented 3 spaces" },
	{ "tls_server_config: [a]\n", "'[' starts YAML" },
	{ "tls_server_config:\n  cert_file: \"a\n",
	  "unterminated double quote" },
	{ "tls_server_config:\n  cert_file a\n", "\"key: value\" expected" },
	{ "  cert_file: a\n", "outside any section" },
	{ "tls_server_config:\ntls_server_config:\n",
	  "line 2: tls_server_config twice" },
	{ "tls_server_config:\n  cert_file: a\n  cert_file: b\n",
	  "cert_file twice" },
};

START_TEST(test_refused)
{
	struct webconfig w;
	struct errmsg m;

	errmsg_clear(&m);
	ck_assert_int_eq(parse(bad[_i].text, &w, &m), -EINVAL);
	ck_assert_msg(strstr(m.text, bad[_i].want), "'%s' gave '%s'",
		      bad[_i].text, m.text);
	ck_assert_ptr_null(w.cert_file);
	ck_assert_ptr_null(w.users);
}
END_TEST

START_TEST(test_load_errors)
{
	struct webconfig w;
	struct errmsg m;

	ck_assert_int_eq(webconfig_load("/nonexistent/web.yml", &w, &m),
			 -ENOENT);
	ck_assert(strstr(m.text, "/nonexistent/web.yml"));
	ck_assert_int_eq(webconfig_load("/", &w, &m), -EINVAL);
	ck_assert(strstr(m.text, "not a regular file"));
}
END_TEST

Suite *webconfig_suite(void)
{
	Suite *s = suite_create("webconfig");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_full);
	tcase_add_test(tc, test_sections_alone);
	tcase_add_loop_test(tc, test_refused, 0,
			    (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_load_errors);
	suite_add_tcase(s, tc);
	return s;
}
