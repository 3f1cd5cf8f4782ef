// SPDX-License-Identifier: GPL-2.0-only
/*
 * Field filter: compile a user regex once with PCRE2, anchored at the
 * start of the name (Python's re.match, which kvm_stat's -f uses), and
 * match field names against it.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "filter.h"
#include "util.h"

/* One field's verdicts: known[c] says verdict[c] (c: children) is set. */
struct filter_verdict {
	char *copy; /* the name it was made for, owned */
	bool known[2], verdict[2];
};

struct filter_cache {
	struct filter_verdict *v; /* by field id */
	size_t n;
};

static void filter_cache_free(struct filter_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].copy);
	free(c->v);
	free(c);
}

int filter_set(struct field_filter *f, const char *pattern, struct errmsg *msg)
{
	PCRE2_UCHAR why[128];
	PCRE2_SIZE at;
	pcre2_code *code;
	int err;

	code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
			     PCRE2_ANCHORED, &err, &at, NULL);
	if (!code) {
		if (err == PCRE2_ERROR_HEAPLIMIT || err == PCRE2_ERROR_NOMEMORY)
			util_die("out of memory compiling the field filter");
		if (pcre2_get_error_message(err, why, sizeof(why)) < 0)
			snprintf((char *)why, sizeof(why), "error %d", err);
		return errmsg_set(msg, -EINVAL,
				  "invalid regular expression \"%s\": %s at offset %zu",
				  pattern, (const char *)why, (size_t)at);
	}
	filter_free(f);
	f->code = code;
	f->pattern = xstrdup(pattern);
	f->cache = xcalloc(1, sizeof(*f->cache));
	f->serial = util_serial();
	return 0;
}

void filter_free(struct field_filter *f)
{
	pcre2_code_free(f->code);
	f->code = NULL;
	free(f->pattern);
	f->pattern = NULL;
	filter_cache_free(f->cache);
	f->cache = NULL;
	f->serial = 0;
}

uint64_t filter_serial(const struct field_filter *f)
{
	return f && f->pattern ? f->serial : 0;
}

/* pcre2_match() of the first len bytes of name with opts: its result. */
static int filter_run(const struct field_filter *f, const char *name,
		      size_t len, uint32_t opts)
{
	pcre2_match_data *md;
	int rc;

	md = pcre2_match_data_create(1, NULL);
	if (!md)
		util_die("out of memory matching the field filter");
	rc = pcre2_match(f->code, (PCRE2_SPTR)name, len, 0, opts, md, NULL);
	pcre2_match_data_free(md);
	if (rc == PCRE2_ERROR_NOMEMORY)
		util_die("out of memory matching the field filter");
	return rc;
}

static bool filter_match_start(const struct field_filter *f, const char *name,
			       size_t len)
{
	return filter_run(f, name, len, 0) >= 0;
}

bool filter_match(const struct field_filter *f, const char *name)
{
	return !f || !f->pattern || filter_match_start(f, name, strlen(name));
}

bool filter_keeps(const struct field_filter *f, const char *name, bool children)
{
	const char *paren;

	if (filter_match(f, name))
		return true;
	/* the monitor's 'x': child events of a shown event are shown too */
	paren = strchr(name, '(');
	if (!children || !paren)
		return false;
	return filter_match_start(f, name, (size_t)(paren - name));
}

bool filter_keeps_field(const struct field_filter *f, int id, const char *name,
			bool children)
{
	struct filter_cache *c = f ? f->cache : NULL;
	struct filter_verdict *v;

	if (!f || !f->pattern)
		return true;
	if (!c || id < 0)
		return filter_keeps(f, name, children);
	c->v = xgrow_index(c->v, &c->n, (size_t)id, sizeof(*c->v), 0);
	v = &c->v[id];
	if (!v->copy || strcmp(v->copy, name)) {
		free(v->copy);
		*v = (struct filter_verdict){ .copy = xstrdup(name) };
	}
	if (!v->known[children]) {
		v->verdict[children] = filter_keeps(f, name, children);
		v->known[children] = true;
	}
	return v->verdict[children];
}

/* "name(" matched or could be extended into a match (a partial match). */
bool filter_may_keep_children(const struct field_filter *f, const char *name)
{
	char *open;
	int rc;

	if (!f || !f->pattern)
		return true;
	if (strchr(name, '('))
		return false; /* a child has no children */
	open = xasprintf("%s(", name);
	rc = filter_run(f, open, strlen(open), PCRE2_PARTIAL_HARD);
	free(open);
	return rc >= 0 || rc == PCRE2_ERROR_PARTIAL;
}
