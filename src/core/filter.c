// SPDX-License-Identifier: GPL-2.0-only
/*
 * Field filter: compile a user regex once and match field names against it
 * anchored at the start of the name, the way kvm_stat's -f behaves.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "filter.h"
#include "util.h"

/*
 * The regex is compiled where it lives (a regex_t is not promised to
 * survive a copy); a trial compile first leaves f as it was when the
 * pattern is bad.
 */
int filter_set(struct field_filter *f, const char *pattern, struct errmsg *msg)
{
	regex_t trial;
	char why[128];
	int rc;

	rc = regcomp(&trial, pattern, REG_EXTENDED);
	if (rc) {
		regerror(rc, &trial, why, sizeof(why));
		return errmsg_set(msg, -EINVAL,
				  "invalid regular expression \"%s\": %s",
				  pattern, why);
	}
	regfree(&trial);
	filter_free(f);
	/* it compiled a moment ago: only memory can be short, and running
	 * out of memory ends the program (util.h) */
	if (regcomp(&f->re, pattern, REG_EXTENDED))
		util_die("out of memory compiling the field filter");
	f->pattern = xstrdup(pattern);
	return 0;
}

void filter_free(struct field_filter *f)
{
	if (f->pattern)
		regfree(&f->re);
	free(f->pattern);
	f->pattern = NULL;
}

static bool filter_match_start(const struct field_filter *f, const char *name)
{
	regmatch_t m;

	if (regexec(&f->re, name, 1, &m, 0))
		return false;
	/* leftmost match: one starting at 0 exists iff the leftmost starts there */
	return m.rm_so == 0;
}

bool filter_match(const struct field_filter *f, const char *name)
{
	return !f || !f->pattern || filter_match_start(f, name);
}

bool filter_keeps(const struct field_filter *f, const char *name, bool children)
{
	const char *paren;
	char parent[128];

	if (filter_match(f, name))
		return true;
	/* the monitor's 'x': child events of a shown event are shown too */
	paren = strchr(name, '(');
	if (!children || !paren || (size_t)(paren - name) >= sizeof(parent))
		return false;
	memcpy(parent, name, (size_t)(paren - name));
	parent[paren - name] = '\0';
	return filter_match_start(f, parent);
}
