// SPDX-License-Identifier: GPL-2.0-only
/*
 * Shared helpers: allocation that never returns NULL (it restores the
 * terminal and dies instead, util.h says how), clocks and number parsing.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static void (*fatal_hook)(void);

void util_set_fatal_hook(void (*hook)(void))
{
	fatal_hook = hook;
}

/* Runs the hook once: a second fatal error while restoring must not loop. */
void util_run_fatal_hook(void)
{
	void (*hook)(void) = fatal_hook;

	fatal_hook = NULL;
	if (hook)
		hook();
}

/* The main thread's id is the process id. */
static bool util_on_main_thread(void)
{
	return (pid_t)syscall(SYS_gettid) == getpid();
}

/* Death on another thread: no hook, no exit handlers, one write (util.h). */
static void __attribute__((noreturn))
util_die_off_main(const char *fmt, va_list ap)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "kvmstat: ");
	ssize_t w;

	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	n = (int)strlen(line);
	line[n++] = '\n';
	w = write(STDERR_FILENO, line, (size_t)n);
	(void)w;
	_exit(1);
}

void util_die(const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	if (!util_on_main_thread()) {
		va_start(ap, fmt);
		util_die_off_main(fmt, ap);
	}
	util_run_fatal_hook();
	errno = saved;
	fputs("kvmstat: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		util_die("out of memory allocating %zu bytes", size);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		util_die("out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		util_die("out of memory allocating %zu bytes", size);
	return p;
}

void *xgrow_index(void *p, size_t *n, size_t i, size_t size, int fill)
{
	size_t want = i + 64;

	if (i < *n)
		return p;
	p = xrealloc(p, want * size);
	memset((char *)p + *n * size, fill, (want - *n) * size);
	*n = want;
	return p;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		util_die("out of memory");
	return d;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		util_die("out of memory");
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

uint64_t util_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t util_serial(void)
{
	static uint64_t last;

	return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

int util_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int util_parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* Length of the run of digits at s. */
static size_t digit_run(const char *s)
{
	size_t n = 0;

	while (s[n] >= '0' && s[n] <= '9')
		n++;
	return n;
}

static int name_cmp(const char *a, const char *b)
{
	size_t i = 0;

	while (a[i] && a[i] == b[i]) {
		i++;
		if (a[i - 1] == '(') {
			size_t na = digit_run(a + i), nb = digit_run(b + i);
			const char *x = a + i, *y = b + i;
			int d;

			if (!na || !nb)
				continue;
			/* by value: skip leading zeros, then the longer run
			 * is larger, then the digits decide */
			while (na > 1 && *x == '0')
				x++, na--;
			while (nb > 1 && *y == '0')
				y++, nb--;
			if (na != nb)
				return na < nb ? -1 : 1;
			d = memcmp(x, y, na);
			if (d)
				return d;
			return name_cmp(x + na, y + nb);
		}
	}
	return (unsigned char)a[i] - (unsigned char)b[i];
}

int util_name_cmp(const char *a, const char *b)
{
	int d = name_cmp(a, b);

	/* "(07)" and "(7)" have one value but stay two names */
	return d ? d : strcmp(a, b);
}

const char *util_next_word(const char **s, size_t *n)
{
	const char *w;

	if (!*s)
		return NULL;
	w = *s + strspn(*s, " ");
	if (!*w)
		return NULL;
	*n = strcspn(w, " ");
	*s = w + *n;
	return w;
}
