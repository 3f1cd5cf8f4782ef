// SPDX-License-Identifier: GPL-2.0-only
/*
 * The --web-config reader: the exporter-toolkit forms it takes (comments,
 * quotes, relative paths, either section alone, a byte-order mark, "---"
 * after comments, nulls read as the toolkit reads them: a null or empty
 * section, document or unset TLS key sets nothing, so no TLS), what it
 * refuses with the line (other settings, lists, tabs, nesting, half a TLS
 * pair, ": " in a plain value, a null password, a value for a TLS key
 * kvmstat does not read, a password that is not a bcrypt hash or has a
 * cost crypt refuses) and the bcrypt check itself, as slow for an unknown
 * user as for a known one.
 */
#include <check.h>
#include <crypt.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "errmsg.h"
#include "suites.h"
#include "webconfig.h"

/* bcrypt of "pw", cost 4, made by libxcrypt at the start of the suite */
static char hash[CRYPT_OUTPUT_SIZE];

/* bcrypt of pw at cost into out (CRYPT_OUTPUT_SIZE bytes), by libxcrypt */
static void bcrypt_of(const char *pw, int cost, char *out)
{
	struct crypt_data cd;
	const char *salt = crypt_gensalt_rn("$2b$", (unsigned long)cost, NULL,
					    0, out, CRYPT_OUTPUT_SIZE);

	ck_assert_ptr_nonnull(salt);
	memset(&cd, 0, sizeof(cd));
	ck_assert_ptr_nonnull(crypt_r(pw, out, &cd));
	memcpy(out, cd.output, CRYPT_OUTPUT_SIZE);
	ck_assert_uint_eq(strlen(out), 60);
}

static void make_hash(void)
{
	bcrypt_of("pw", 4, hash);
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
	ck_assert_int_eq(w.cost, 4);
	ck_assert(webconfig_check(&w, "prom", "pw"));
	ck_assert(webconfig_check(&w, "prom", "pw"));
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

/*
 * Nulls as the exporter-toolkit reads them: a null, empty or {} section,
 * a document that is {} or null (or nothing), the toolkit's other
 * sections when null, and null TLS keys that the toolkit takes as unset
 * all set nothing: no TLS (plain HTTP), and no auth unless users are
 * given.
 */
static const char *const empty_configs[] = {
	"",
	"# nothing\n",
	"---\n",
	"{}\n",
	"{} # no TLS, no users\n",
	"null\n",
	"~\n",
	"--- {}\n",
	"--- null\n...\n",
	"tls_server_config: null\n",
	"tls_server_config: ~\n",
	"tls_server_config: NULL # off\n",
	"tls_server_config:\n",
	"tls_server_config: {}\n",
	"tls_server_config:\n  cert_file: null\n  key_file: ~\n",
	"tls_server_config:\n  cert_file:\n  key_file: Null\n"
	"  client_auth_type: null\n  client_ca_file: ~\n  cert: null\n"
	"  key: null\n  client_ca: null\n  cipher_suites: null\n"
	"  curve_preferences: ~\n  client_allowed_sans: null\n",
	"http_server_config: null\nrate_limit: ~\n",
	"http_server_config: {}\nrate_limit:\n",
	"tls_server_config: null\nbasic_auth_users: null\n"
	"http_server_config: null\n",
};

START_TEST(test_nulls)
{
	struct webconfig w;
	struct errmsg m;

	errmsg_clear(&m);
	ck_assert_msg(!parse(empty_configs[_i], &w, &m), "'%s' gave '%s'",
		      empty_configs[_i], m.text);
	ck_assert_ptr_null(w.cert_file);
	ck_assert_ptr_null(w.key_file);
	ck_assert(!webconfig_auth(&w));
	webconfig_free(&w);
}
END_TEST

/* A null tls_server_config beside users: basic auth over plain HTTP. */
START_TEST(test_null_tls_with_users)
{
	struct webconfig w;
	struct errmsg m;
	char text[CRYPT_OUTPUT_SIZE + 64];

	make_hash();
	snprintf(text, sizeof(text),
		 "tls_server_config: null\nbasic_auth_users:\n  prom: %s\n",
		 hash);
	ck_assert_int_eq(parse(text, &w, &m), 0);
	ck_assert_ptr_null(w.cert_file);
	ck_assert(webconfig_auth(&w));
	ck_assert(webconfig_check(&w, "prom", "pw"));
	webconfig_free(&w);
	/* a null key beside a pair: TLS with the pair */
	ck_assert_int_eq(parse("tls_server_config:\n  client_ca_file: null\n"
			       "  cert_file: a\n  key_file: b\n",
			       &w, &m),
			 0);
	ck_assert_str_eq(w.cert_file, "/etc/k/a");
	ck_assert_str_eq(w.key_file, "/etc/k/b");
	webconfig_free(&w);
}
END_TEST

/*
 * YAML a user may write, read as it means: a byte-order mark, "---" after
 * comments or with one, "..." at the end, quoted text that looks like a
 * null or holds ": ", a colon inside a plain value.
 */
START_TEST(test_yaml_forms)
{
	struct webconfig w;
	struct errmsg m;

	ck_assert_int_eq(parse("\xef\xbb\xbftls_server_config:\n"
			       "  cert_file: a\n  key_file: b\n",
			       &w, &m),
			 0);
	ck_assert_str_eq(w.cert_file, "/etc/k/a");
	webconfig_free(&w);
	ck_assert_int_eq(parse("# web config\n\n--- # kvmstat\n"
			       "tls_server_config:\n  cert_file: a\n"
			       "  key_file: b\n...\n# done\n",
			       &w, &m),
			 0);
	ck_assert_str_eq(w.key_file, "/etc/k/b");
	webconfig_free(&w);
	ck_assert_int_eq(parse("\xef\xbb\xbf---\ntls_server_config:\n"
			       "  cert_file: 'null'\n  key_file: \"a: b\"\n",
			       &w, &m),
			 0);
	ck_assert_str_eq(w.cert_file, "/etc/k/null");
	ck_assert_str_eq(w.key_file, "/etc/k/a: b");
	webconfig_free(&w);
	ck_assert_int_eq(parse("tls_server_config:\n  cert_file: /a:b\n"
			       "  key_file: c:\\d #x\nbasic_auth_users: ~\n",
			       &w, &m),
			 0);
	ck_assert_str_eq(w.cert_file, "/a:b");
	ck_assert_str_eq(w.key_file, "/etc/k/c:\\d");
	ck_assert(!webconfig_auth(&w));
	webconfig_free(&w);
	ck_assert_int_eq(parse("basic_auth_users: null\n", &w, &m), 0);
	ck_assert(!webconfig_auth(&w));
	webconfig_free(&w);
	/* UTF-8 in a plain name */
	ck_assert_int_eq(parse("basic_auth_users:\n  j\xc3\xbcrgen: "
			       "$2b$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234\n",
			       &w, &m),
			 0);
	ck_assert_str_eq(w.users[0].name, "j\xc3\xbcrgen");
	webconfig_free(&w);
}
END_TEST

/* Each text is refused with its line and the words given. */
static const struct {
	const char *text, *want;
} bad[] = {
	{ "http_server_config:\n  http2: false\n",
	  "line 2: http_server_config: \"http2\" is not supported" },
	{ "http_server_config: x\n",
	  "line 1: \"http_server_config\" is not supported" },
	{ "rate_limit:\n  burst: ~\n",
	  "line 2: rate_limit: \"burst\" is not supported" },
	{ "http_server_config: ~\nhttp_server_config: ~\n",
	  "line 2: http_server_config twice" },
	{ "tls_server_config:\n  cert_file: a\n",
	  "needs both cert_file and key_file" },
	/* null is unset only where the toolkit reads it so: a null
	 * min_version is a minimum of its own */
	{ "tls_server_config:\n  min_version: null\n",
	  "line 2: tls_server_config: \"min_version\" is not supported" },
	{ "tls_server_config:\n  cert_fiel: null\n",
	  "line 2: tls_server_config: \"cert_fiel\" is not supported" },
	{ "tls_server_config:\n  client_auth_type: RequireAnyClientCert\n",
	  "line 2: tls_server_config: \"client_auth_type\" is not supported" },
	{ "tls_server_config:\n  cert_file: null\n  cert_file: a\n",
	  "line 3: cert_file twice" },
	{ "tls_server_config:\n  cert_file: \"\"\n  key_file: b\n",
	  "line 2: \"cert_file\" has no value" },
	{ "{}\ntls_server_config: null\n",
	  "line 2: an entry in a document that is \"{}\" or null" },
	{ "basic_auth_users: null\n~\n", "line 2: \"~\" (an empty document)" },
	{ "--- tls_server_config: null\n",
	  "line 1: only {} or null may follow \"---\"" },
	{ "'null'\n", "line 1: \"key: value\" expected" },
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
	/* invalid YAML that a lax reader would take */
	{ "tls_server_config:\n  cert_file: a: b\n  key_file: c\n",
	  "line 2: a ': ' inside a value" },
	{ "tls_server_config:\n  cert_file: a:\n  key_file: c\n",
	  "line 2: a ': ' inside a value" },
	/* a null file is unset: half a pair */
	{ "tls_server_config:\n  cert_file: null\n  key_file: c\n",
	  "needs both cert_file and key_file" },
	{ "tls_server_config:\n  cert_file: a\n  key_file: ~\n",
	  "needs both cert_file and key_file" },
	{ "tls_server_config:\n  cert_file: NULL # none\n  key_file: c\n",
	  "needs both cert_file and key_file" },
	{ "tls_server_config:\n  cert_file: {}\n  key_file: c\n",
	  "line 2: \"cert_file\" is a mapping" },
	{ "basic_auth_users:\n  prom: Null\n", "line 2: \"prom\" has no value" },
	{ "---\ntls_server_config:\n---\n", "line 3: one YAML document only" },
	{ "# a\n---\n---\n", "line 3: one YAML document only" },
	{ "basic_auth_users: {}\n...\nbasic_auth_users: {}\n",
	  "line 3: text after the document's end" },
	{ "\xef\xbb\xbf\xef\xbb\xbf"
	  "basic_auth_users: {}\n",
	  "is not supported" },
	/* bcrypt hashes crypt would refuse: every login would fail */
	{ "basic_auth_users:\n"
	  "  u: $2y$99$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234\n",
	  "line 2: the password of \"u\" has bcrypt cost 99: the cost must be 4-31" },
	{ "basic_auth_users:\n"
	  "  u: $2b$03$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234\n",
	  "has bcrypt cost 3: the cost must be 4-31" },
	{ "basic_auth_users:\n"
	  "  u: $2b$1x$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234\n",
	  "not a bcrypt hash" },
	{ "basic_auth_users:\n"
	  "  u: $2b$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ0123+\n",
	  "not a bcrypt hash" },
	{ "basic_auth_users:\n"
	  "  u: $2b$10a$bcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234\n",
	  "not a bcrypt hash" },
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

/* Costs 4 and 31, the ends of the range, are taken; the highest cost is
 * the file's. */
START_TEST(test_costs)
{
	struct webconfig w;
	struct errmsg m;

	ck_assert_int_eq(
		parse("basic_auth_users:\n"
		      "  a: $2y$04$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234\n"
		      "  b: $2a$31$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234\n"
		      "  c: $2b$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234\n",
		      &w, &m),
		0);
	ck_assert_uint_eq(w.nusers, 3);
	ck_assert_int_eq(w.cost, 31);
	webconfig_free(&w);
}
END_TEST

/* The CPU time (this thread's: the machine's load does not count) of one
 * refusal of user by webconfig_check, in ns. */
static uint64_t check_ns(const struct webconfig *w, const char *user)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	ck_assert(!webconfig_check(w, user, "guess"));
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	return (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ull +
	       (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* An unknown user takes as long as a known one with a wrong password: a
 * bcrypt run of the file's cost, so the time does not tell who exists.
 * Medians of seven each, taken in turn. */
START_TEST(test_unknown_user_time)
{
	char h8[CRYPT_OUTPUT_SIZE], text[CRYPT_OUTPUT_SIZE + 64];
	uint64_t known[7], unknown[7];
	struct webconfig w;
	struct errmsg m;

	bcrypt_of("pw", 8, h8);
	snprintf(text, sizeof(text), "basic_auth_users:\n  prom: %s\n", h8);
	ck_assert_int_eq(parse(text, &w, &m), 0);
	ck_assert(webconfig_check(&w, "prom", "pw"));
	for (int i = 0; i < 7; i++) {
		known[i] = check_ns(&w, "prom");
		unknown[i] = check_ns(&w, "nobody");
	}
	qsort(known, 7, sizeof(known[0]), cmp_u64);
	qsort(unknown, 7, sizeof(unknown[0]), cmp_u64);
	/* cost 8 is milliseconds; the two within a factor of 1.5 */
	ck_assert_msg(known[3] > 1000000, "a cost-8 check took %llu ns",
		      (unsigned long long)known[3]);
	ck_assert_msg(unknown[3] * 3 > known[3] * 2 &&
			      unknown[3] * 2 < known[3] * 3,
		      "known user %llu ns, unknown %llu ns",
		      (unsigned long long)known[3],
		      (unsigned long long)unknown[3]);
	webconfig_free(&w);
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
	tcase_add_test(tc, test_yaml_forms);
	tcase_add_loop_test(tc, test_nulls, 0,
			    (int)(sizeof(empty_configs) /
				  sizeof(empty_configs[0])));
	tcase_add_test(tc, test_null_tls_with_users);
	tcase_add_test(tc, test_costs);
	tcase_add_test(tc, test_unknown_user_time);
	tcase_add_loop_test(tc, test_refused, 0,
			    (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_load_errors);
	suite_add_tcase(s, tc);
	return s;
}
