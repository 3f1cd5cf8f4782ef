// SPDX-License-Identifier: GPL-2.0-only
/*
 * The --web-config reader: a line-at-a-time parser of the few YAML forms
 * exporter-toolkit web configs use (two levels of block mappings, plain,
 * single- and double-quoted scalars, comments), strict about everything
 * else so that a setting it does not understand is an error, not a TLS or
 * password setting silently dropped; and the bcrypt check of basic auth.
 * A null reads as the toolkit reads it: a null (or empty) section, or a
 * whole document that is null or {}, sets nothing, and so does a null
 * tls_server_config key whose null the toolkit takes as unset; TLS is on
 * when cert_file and key_file are given, plain HTTP when neither is.
 */
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errmsg.h"
#include "util.h"
#include "webconfig.h"

#define WC_VALUE_MAX 4096

enum wc_section {
	WC_NONE,
	WC_TLS,	  /* tls_server_config */
	WC_USERS, /* basic_auth_users */
	WC_OTHER, /* a toolkit section kvmstat has no use for: only empty */
};

/* The toolkit's other sections, taken when null or empty: they set
 * nothing then (kvmstat serves HTTP/1.1 with its own headers, unlimited). */
static const char *const wc_other_sections[] = { "http_server_config",
						 "rate_limit" };

/*
 * The keys of tls_server_config whose null the toolkit reads as unset (an
 * empty string, an empty list): a null one is taken and sets nothing.
 * kvmstat reads the first two; a value for any other is refused. Not here:
 * min_version, max_version and prefer_server_cipher_suites, whose null is
 * not unset but zero or false, a setting of its own.
 */
static const char *const wc_tls_keys[] = {
	"cert_file",
	"key_file",
	"cert",
	"key",
	"client_ca",
	"client_ca_file",
	"client_auth_type",
	"cipher_suites",
	"curve_preferences",
	"client_allowed_sans",
};

/* The parser's position. */
struct wc_parse {
	struct webconfig *w;
	struct errmsg *msg;
	const char *dir;
	unsigned int line;    /* 1-based */
	enum wc_section sect; /* the mapping lines are added to */
	const char *other;    /* its name, when WC_OTHER */
	int child_indent;     /* its entries' indentation, -1 unknown */
	bool seen_tls, seen_users;
	unsigned int seen_other; /* bit i: wc_other_sections[i] was read */
	unsigned int seen_keys;	 /* bit i: wc_tls_keys[i] was read */
	bool content; /* a "---" or an entry was read: no "---" from here */
	bool entries; /* a "key: value" was read */
	bool empty;   /* the document is "{}" or a null: nothing may follow */
	bool ended;   /* "..." ended the document: only comments follow */
};

static int webconfig_err(struct wc_parse *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int webconfig_err(struct wc_parse *p, const char *fmt, ...)
{
	va_list ap;

	errmsg_set(p->msg, -EINVAL, "line %u: ", p->line);
	va_start(ap, fmt);
	errmsg_vadd(p->msg, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool webconfig_blank(const char *s, const char *end);

/*
 * Reads one scalar at s (up to end): quoted ('..', ".." with \-escapes of
 * " \ / n t) or plain (to a " #" comment, trailing blanks trimmed; a key
 * ends at its ": ", a value may hold none). Writes it to out
 * (NUL-terminated), whether it was plain to *plain, and the rest of the
 * line to *rest. 0 or -EINVAL.
 */
static int webconfig_scalar(struct wc_parse *p, const char *s, const char *end,
			    bool key, char *out, size_t outlen, bool *plain,
			    const char **rest)
{
	size_t n = 0;

	*plain = !(s < end && (*s == '\'' || *s == '"'));
	if (!*plain) {
		char q = *s++;

		for (;;) {
			char c;

			if (s >= end)
				return webconfig_err(p, "unterminated %s quote",
						     q == '"' ? "double" :
								"single");
			c = *s++;
			if (c == q) {
				if (q == '\'' && s < end && *s == '\'') {
					s++; /* '' is one ' */
				} else {
					break;
				}
			} else if (q == '"' && c == '\\') {
				if (s >= end)
					return webconfig_err(p,
							     "a \\ ends the line");
				c = *s++;
				if (c == 'n')
					c = '\n';
				else if (c == 't')
					c = '\t';
				else if (c != '"' && c != '\\' && c != '/')
					return webconfig_err(p,
							     "unsupported escape \\%c",
							     c >= 0x20 && c < 0x7f ?
								     c :
								     '?');
			}
			if (c == '\0')
				return webconfig_err(p,
						     "a NUL byte in a string");
			if (n + 1 >= outlen)
				return webconfig_err(p,
						     "a value longer than %zu bytes",
						     outlen - 1);
			out[n++] = c;
		}
		out[n] = '\0';
		*rest = s;
		return 0;
	}
	if (!key && end - s >= 2 && s[0] == '{' && s[1] == '}' &&
	    webconfig_blank(s + 2, end)) {
		snprintf(out, outlen, "{}"); /* an empty mapping */
		*rest = s + 2;
		return 0;
	}
	while (s < end) {
		char c = *s;

		if (c == ':' && (s + 1 == end || s[1] == ' ' || s[1] == '\t')) {
			if (key)
				break;
			return webconfig_err(
				p,
				"a ': ' inside a value (YAML reads a mapping there): quote the value");
		}
		if (c == '#' && n && (out[n - 1] == ' ' || out[n - 1] == '\t'))
			break;
		if (c == '\0' || ((unsigned char)c < 0x20 && c != '\t'))
			return webconfig_err(p, "a control character");
		if (!n && strchr("[]{}&*!|>%@`,?-", c) && !key &&
		    !(c == '-' && s + 1 < end && s[1] != ' '))
			return webconfig_err(
				p,
				"'%c' starts YAML kvmstat does not read: write the value plainly or quote it",
				c);
		if (n + 1 >= outlen)
			return webconfig_err(p, "a value longer than %zu bytes",
					     outlen - 1);
		out[n++] = c;
		s++;
	}
	while (n && (out[n - 1] == ' ' || out[n - 1] == '\t'))
		n--;
	out[n] = '\0';
	*rest = s;
	return 0;
}

/* Whether only blanks and a comment are left. */
static bool webconfig_blank(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s == end || *s == '#';
}

/* Whether a plain scalar is YAML's null. */
static bool webconfig_null(const char *v)
{
	return !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	       !strcmp(v, "NULL");
}

/* A path from the file, made relative to its directory. */
static char *webconfig_path(const struct wc_parse *p, const char *v)
{
	if (v[0] == '/' || !p->dir)
		return xstrdup(v);
	return xasprintf("%s/%s", p->dir, v);
}

/*
 * Whether h is a bcrypt hash: $2a$, $2b$ or $2y$, a two-digit cost, '$',
 * 22 characters of salt and 31 of hash in bcrypt's base-64 alphabet. 0;
 * -ERANGE with the cost in *cost when it is outside 4-31 (crypt refuses
 * those, so every password would fail); -EINVAL otherwise.
 */
static int webconfig_bcrypt(const char *h, int *cost)
{
	static const char b64[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "abcdefghijklmnopqrstuvwxyz0123456789";

	if (strlen(h) != WEBCONFIG_HASH_LEN || h[0] != '$' || h[1] != '2' ||
	    !strchr("aby", h[2]) || h[3] != '$' || h[6] != '$' || h[4] < '0' ||
	    h[4] > '9' || h[5] < '0' || h[5] > '9')
		return -EINVAL;
	for (const char *c = h + 7; *c; c++)
		if (!strchr(b64, *c))
			return -EINVAL;
	*cost = (h[4] - '0') * 10 + (h[5] - '0');
	if (*cost < WEBCONFIG_COST_MIN || *cost > WEBCONFIG_COST_MAX)
		return -ERANGE;
	return 0;
}

/*
 * Takes a key of tls_server_config: a path for cert_file and key_file; a
 * null for the keys whose null the toolkit reads as unset, which sets
 * nothing. Each key once.
 */
static int webconfig_tls_key(struct wc_parse *p, const char *key,
			     const char *val, bool has_val)
{
	size_t i = 0;
	char **slot;

	while (i < ARRAY_SIZE(wc_tls_keys) && strcmp(key, wc_tls_keys[i]))
		i++;
	if (i == ARRAY_SIZE(wc_tls_keys) || (has_val && i > 1))
		return webconfig_err(
			p,
			"tls_server_config: \"%.64s\" is not supported (kvmstat reads cert_file and key_file)",
			key);
	if (p->seen_keys & 1u << i)
		return webconfig_err(p, "%s twice", key);
	p->seen_keys |= 1u << i;
	if (!has_val)
		return 0; /* null: unset */
	if (!*val)
		return webconfig_err(p, "\"%.64s\" has no value", key);
	slot = i == 0 ? &p->w->cert_file : &p->w->key_file;
	*slot = webconfig_path(p, val);
	return 0;
}

/* Takes "key: value" at indentation indent. */
static int webconfig_entry(struct wc_parse *p, int indent, const char *key,
			   const char *val, bool has_val)
{
	struct webconfig *w = p->w;
	int cost, rc;

	if (p->empty)
		return webconfig_err(p,
				     "an entry in a document that is \"{}\" or null");
	p->entries = true;
	if (indent == 0) {
		bool empty = !has_val;

		p->child_indent = -1;
		for (size_t i = 0; i < ARRAY_SIZE(wc_other_sections); i++) {
			if (strcmp(key, wc_other_sections[i]))
				continue;
			if (p->seen_other & 1u << i)
				return webconfig_err(p, "%s twice", key);
			p->seen_other |= 1u << i;
			p->sect = WC_OTHER;
			p->other = wc_other_sections[i];
			if (!empty)
				return webconfig_err(
					p,
					"\"%s\" is not supported: kvmstat reads tls_server_config and basic_auth_users (%s may only be null or empty)",
					key, key);
			return 0;
		}
		if (!strcmp(key, "tls_server_config")) {
			if (p->seen_tls)
				return webconfig_err(p,
						     "tls_server_config twice");
			p->seen_tls = true;
			p->sect = WC_TLS;
		} else if (!strcmp(key, "basic_auth_users")) {
			if (p->seen_users)
				return webconfig_err(p,
						     "basic_auth_users twice");
			p->seen_users = true;
			p->sect = WC_USERS;
		} else {
			return webconfig_err(
				p,
				"\"%.64s\" is not supported: kvmstat reads tls_server_config and basic_auth_users",
				key);
		}
		if (!empty)
			return webconfig_err(
				p,
				"%s must be a mapping (its entries on the lines below, indented)",
				key);
		return 0;
	}
	if (p->sect == WC_NONE)
		return webconfig_err(p, "an indented line outside any section");
	if (p->child_indent < 0)
		p->child_indent = indent;
	if (indent != p->child_indent)
		return webconfig_err(
			p,
			"indented %d spaces where the section's entries have %d (nested mappings are not supported)",
			indent, p->child_indent);
	if (p->sect == WC_OTHER)
		return webconfig_err(
			p,
			"%s: \"%.64s\" is not supported (kvmstat reads tls_server_config and basic_auth_users; %s may only be null or empty)",
			p->other, key, p->other);
	if (p->sect == WC_TLS)
		return webconfig_tls_key(p, key, val, has_val);
	if (!has_val || !*val)
		return webconfig_err(p, "\"%.64s\" has no value", key);
	if (!*key || strchr(key, ':'))
		return webconfig_err(p,
				     "a user name must be non-empty, without ':'");
	for (size_t i = 0; i < w->nusers; i++)
		if (!strcmp(w->users[i].name, key))
			return webconfig_err(p, "user \"%.64s\" twice", key);
	rc = webconfig_bcrypt(val, &cost);
	if (rc == -ERANGE)
		return webconfig_err(
			p,
			"the password of \"%.64s\" has bcrypt cost %d: the cost must be %d-%d (htpasswd -nBC 10 \"\" makes one of cost 10)",
			key, cost, WEBCONFIG_COST_MIN, WEBCONFIG_COST_MAX);
	if (rc)
		return webconfig_err(
			p,
			"the password of \"%.64s\" is not a bcrypt hash ($2y$..., 60 characters): make one with htpasswd -nBC 10 \"\" or mkpasswd -m bcrypt",
			key);
	if (cost > w->cost)
		w->cost = cost;
	w->users = xrealloc(w->users, (w->nusers + 1) * sizeof(*w->users));
	w->users[w->nusers++] = (struct webconfig_user){ .name = xstrdup(key),
							 .hash = xstrdup(val) };
	return 0;
}

/*
 * Takes a document that is one node at s (on its own line, or after
 * "---"): "{}" or a plain null, an empty configuration (no TLS, no users).
 * 0, 1 when s is something else (an entry, probably), or -EINVAL.
 */
static int webconfig_empty_doc(struct wc_parse *p, const char *s,
			       const char *end)
{
	char v[WC_VALUE_MAX];
	const char *rest;
	bool plain;

	/* as a key: up to a ": ", where an entry would go on */
	if (webconfig_scalar(p, s, end, true, v, sizeof(v), &plain, &rest) ||
	    !plain || !webconfig_blank(rest, end) ||
	    (strcmp(v, "{}") && !webconfig_null(v)))
		return 1;
	if (p->entries || p->empty)
		return webconfig_err(p,
				     "\"%s\" (an empty document) after other content",
				     v);
	p->empty = true;
	return 0;
}

/* One line (without its newline). */
static int webconfig_line(struct wc_parse *p, const char *s, const char *end)
{
	char key[WC_VALUE_MAX], val[WC_VALUE_MAX];
	const char *rest;
	int indent = 0, rc;
	bool has_val = false, plain;

	if (end > s && end[-1] == '\r')
		end--;
	while (s < end && *s == ' ') {
		s++;
		indent++;
	}
	if (webconfig_blank(s, end))
		return 0;
	if (*s == '\t')
		return webconfig_err(p,
				     "a tab in the indentation: indent with spaces");
	if (!indent && end - s >= 3 && !memcmp(s, "---", 3) &&
	    (end - s == 3 || s[3] == ' ' || s[3] == '\t')) {
		/* the start of the document: after comments, not after
		 * entries or another "---" */
		if (p->content || p->ended)
			return webconfig_err(p, "one YAML document only");
		p->content = true;
		s += 3;
		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		if (webconfig_blank(s, end))
			return 0;
		/* "--- {}": a node may share the marker's line, a
		 * block mapping may not */
		rc = webconfig_empty_doc(p, s, end);
		if (rc > 0)
			return webconfig_err(
				p,
				"only {} or null may follow \"---\" on its line: start the entries on the next line");
		return rc;
	}
	if (p->ended)
		return webconfig_err(p,
				     "text after the document's end (\"...\")");
	if (!indent && end - s >= 3 && !memcmp(s, "...", 3) &&
	    webconfig_blank(s + 3, end)) {
		p->ended = true;
		return 0;
	}
	p->content = true;
	if (*s == '-')
		return webconfig_err(p, "a list where a mapping is expected");
	if (!indent) {
		rc = webconfig_empty_doc(p, s, end);
		if (rc <= 0)
			return rc;
	}
	rc = webconfig_scalar(p, s, end, true, key, sizeof(key), &plain, &rest);
	if (rc)
		return rc;
	while (rest < end && *rest == ' ')
		rest++;
	if (rest >= end || *rest != ':')
		return webconfig_err(p, "\"key: value\" expected");
	rest++;
	if (rest < end && *rest != ' ' && *rest != '\t')
		return webconfig_err(p, "a blank must follow the ':'");
	while (rest < end && (*rest == ' ' || *rest == '\t'))
		rest++;
	if (!webconfig_blank(rest, end)) {
		rc = webconfig_scalar(p, rest, end, false, val, sizeof(val),
				      &plain, &rest);
		if (rc)
			return rc;
		if (!webconfig_blank(rest, end))
			return webconfig_err(p, "text after the value");
		/* YAML's plain nulls are no value; quoted, they are text */
		has_val = !plain || !webconfig_null(val);
		if (plain && !strcmp(val, "{}")) {
			if (indent)
				return webconfig_err(
					p,
					"\"%.64s\" is a mapping where text is expected",
					key);
			has_val = false; /* an empty section */
		}
	}
	if (!has_val)
		val[0] = '\0';
	return webconfig_entry(p, indent, key, val, has_val);
}

void webconfig_free(struct webconfig *w)
{
	free(w->cert_file);
	free(w->key_file);
	for (size_t i = 0; i < w->nusers; i++) {
		free(w->users[i].name);
		free(w->users[i].hash);
	}
	free(w->users);
	memset(w, 0, sizeof(*w));
}

int webconfig_parse(const char *text, size_t len, const char *dir,
		    struct webconfig *out, struct errmsg *msg)
{
	struct wc_parse p = {
		.w = out, .msg = msg, .dir = dir, .child_indent = -1
	};
	const char *s = text, *end = text + len;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (len > WEBCONFIG_MAX)
		return errmsg_set(msg, -EINVAL, "larger than %u KiB",
				  WEBCONFIG_MAX / 1024);
	/* a UTF-8 byte-order mark may open a YAML stream */
	if (len >= 3 && !memcmp(s, "\xef\xbb\xbf", 3))
		s += 3;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *eol = nl ? nl : end;

		p.line++;
		rc = webconfig_line(&p, s, eol);
		if (rc)
			goto out_free;
		s = nl ? nl + 1 : end;
	}
	if (!out->cert_file != !out->key_file) {
		p.line++;
		rc = errmsg_set(msg, -EINVAL,
				"tls_server_config needs both cert_file and key_file");
		goto out_free;
	}
	return 0;

out_free:
	webconfig_free(out);
	return rc;
}

int webconfig_load(const char *path, struct webconfig *out, struct errmsg *msg)
{
	char *buf = NULL, *dir, *slash;
	struct stat st;
	ssize_t n;
	size_t len = 0;
	int fd, rc;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		return errmsg_set(msg, rc, "cannot open %s: %s", path,
				  strerror(-rc));
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		rc = errmsg_set(msg, -EINVAL, "%s is not a regular file", path);
		goto out_close;
	}
	buf = xmalloc(WEBCONFIG_MAX + 1);
	while ((n = read(fd, buf + len, WEBCONFIG_MAX + 1 - len)) > 0)
		len += (size_t)n;
	if (n < 0) {
		rc = -errno;
		errmsg_set(msg, rc, "cannot read %s: %s", path, strerror(-rc));
		goto out_close;
	}
	dir = xstrdup(path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	rc = webconfig_parse(buf, len, slash ? (*dir ? dir : "/") : NULL, out,
			     msg);
	free(dir);
	if (rc) {
		struct errmsg why = *msg;

		errmsg_set(msg, rc, "%s: %s", path, why.text);
	}
out_close:
	free(buf);
	close(fd);
	return rc;
}

bool webconfig_auth(const struct webconfig *w)
{
	return w->nusers > 0;
}

/* Compares without stopping at the first difference. */
static bool webconfig_same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;

	for (size_t i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return !d;
}

bool webconfig_check(const struct webconfig *w, const char *user,
		     const char *password)
{
	const struct webconfig_user *u = NULL;
	char dummy[WEBCONFIG_HASH_LEN + 1];
	struct crypt_data cd; /* 32 KiB: callers' stacks have room */
	const char *h;
	bool ok;

	for (size_t i = 0; i < w->nusers; i++)
		if (!strcmp(w->users[i].name, user))
			u = &w->users[i];
	/* an unknown user costs a bcrypt run too, at the highest cost of
	 * the file, so that the time taken does not tell who exists */
	snprintf(dummy, sizeof(dummy), "$2b$%02d$%s", w->cost ? w->cost : 10,
		 "......................"
		 "...............................");
	memset(&cd, 0, sizeof(cd));
	h = crypt_r(password, u ? u->hash : dummy, &cd);
	ok = u && h && h[0] == '$' && webconfig_same(h, u->hash);
	explicit_bzero(&cd, sizeof(cd));
	return ok;
}
