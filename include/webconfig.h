/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The exporter's --web-config FILE, in the format of the Prometheus
 * exporter-toolkit: TLS (tls_server_config: cert_file, key_file) and
 * basic authentication (basic_auth_users: USER: BCRYPT-HASH). Only that
 * subset of YAML is read: one document (a byte-order mark, "---" and
 * "..." markers allowed), block mappings indented with spaces, plain or
 * quoted scalars, null, comments, blank lines; anything else is refused
 * with the line and what is wrong, never guessed at. A null reads as the
 * toolkit reads it: an empty file, a document that is {} or null, a null
 * section (http_server_config and rate_limit only so), and a null
 * tls_server_config key the toolkit takes as unset all set nothing; no
 * cert_file and key_file means plain HTTP. Passwords are checked with
 * libxcrypt's crypt_r against $2y$/$2b$/$2a$ hashes.
 */
#ifndef KVMSTAT_WEBCONFIG_H
#define KVMSTAT_WEBCONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct errmsg;

/* Longest file accepted. */
#define WEBCONFIG_MAX (64u * 1024)
/* A bcrypt hash's length, and the costs crypt accepts. */
#define WEBCONFIG_HASH_LEN 60
#define WEBCONFIG_COST_MIN 4
#define WEBCONFIG_COST_MAX 31

/* One user of basic_auth_users. */
struct webconfig_user {
	char *name;
	char *hash; /* bcrypt */
};

struct webconfig {
	char *cert_file, *key_file; /* both (TLS) or neither (plain HTTP);
				     * paths relative to the file's
				     * directory are resolved */
	struct webconfig_user *users;
	size_t nusers;
	int cost; /* the highest bcrypt cost of users, 0 without */
};

/*
 * Parses the text of a web config (len bytes, no NUL needed); dir is
 * where relative paths point (NULL: leave them). 0, or -EINVAL with the
 * line number and the problem in msg; *out is then empty.
 */
int webconfig_parse(const char *text, size_t len, const char *dir,
		    struct webconfig *out, struct errmsg *msg);
/* Reads and parses path: 0, or -errno with one line in msg. */
int webconfig_load(const char *path, struct webconfig *out, struct errmsg *msg);
void webconfig_free(struct webconfig *w);
/* Whether basic authentication is asked for. */
bool webconfig_auth(const struct webconfig *w);
/*
 * Whether user and password match a user of w: one bcrypt run (tens of
 * milliseconds at cost 10), whether the user exists or not, and nothing
 * remembered. Thread-safe; webauth.h runs it off the HTTP thread and
 * caches its verdicts.
 */
bool webconfig_check(const struct webconfig *w, const char *user,
		     const char *password);

#endif
