// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hash index over a caller's array: lookups of present and absent keys,
 * keys whose hashes collide, growth with every key still found, clearing,
 * positions out of order, and many keys.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "suites.h"

/* A caller's array: integer keys at dense positions. */
struct table {
	struct hashtab index;
	long *key;
	size_t n, cap;
	uint32_t (*hash)(long key);
};

static uint32_t hash_mixed(long key)
{
	return hashtab_hash3((uint32_t)key, (uint32_t)(key >> 32), 7);
}

/* Every key hashes alike: one long probe run. */
static uint32_t hash_same(long key)
{
	(void)key;
	return 42;
}

/* Only two hashes: colliding full hashes and colliding slots mixed. */
static uint32_t hash_two(long key)
{
	return key & 1 ? 1 : 65;
}

static long table_find(const struct table *t, long key)
{
	struct hashtab_iter it = hashtab_iter(&t->index, t->hash(key));
	long i;

	while ((i = hashtab_next(&t->index, &it)) >= 0)
		if (t->key[i] == key)
			return i;
	return -1;
}

/* Position of key, added when new. */
static long table_intern(struct table *t, long key)
{
	long i = table_find(t, key);

	if (i >= 0)
		return i;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->key = realloc(t->key, t->cap * sizeof(*t->key));
		ck_assert_ptr_nonnull(t->key);
	}
	t->key[t->n] = key;
	hashtab_add(&t->index, t->hash(key), t->n);
	return (long)t->n++;
}

static void table_init(struct table *t, uint32_t (*hash)(long key))
{
	memset(t, 0, sizeof(*t));
	hashtab_init(&t->index);
	t->hash = hash;
}

static void table_free(struct table *t)
{
	hashtab_free(&t->index);
	free(t->key);
	memset(t, 0, sizeof(*t));
}

START_TEST(test_empty)
{
	struct hashtab t;
	struct hashtab_iter it;

	hashtab_init(&t);
	it = hashtab_iter(&t, 123);
	ck_assert_int_eq(hashtab_next(&t, &it), -1);
	hashtab_clear(&t);
	ck_assert_int_eq(hashtab_next(&t, &it), -1);
	hashtab_free(&t);
	hashtab_free(&t);
}
END_TEST

START_TEST(test_find_and_absent)
{
	struct table t;

	table_init(&t, hash_mixed);
	ck_assert_int_eq(table_intern(&t, 10), 0);
	ck_assert_int_eq(table_intern(&t, 20), 1);
	ck_assert_int_eq(table_intern(&t, 10), 0);
	ck_assert_int_eq(table_find(&t, 20), 1);
	ck_assert_int_eq(table_find(&t, 30), -1);
	ck_assert_uint_eq(t.index.n, 2);
	table_free(&t);
}
END_TEST

/* Colliding hashes: every key is still found, each at its own position. */
START_TEST(test_collisions)
{
	uint32_t (*hashes[])(long) = { hash_same, hash_two };

	for (size_t h = 0; h < 2; h++) {
		struct table t;

		table_init(&t, hashes[h]);
		for (long k = 0; k < 200; k++)
			ck_assert_int_eq(table_intern(&t, k * 3), k);
		for (long k = 0; k < 200; k++) {
			ck_assert_int_eq(table_find(&t, k * 3), k);
			ck_assert_int_eq(table_find(&t, k * 3 + 1), -1);
		}
		table_free(&t);
	}
}
END_TEST

/* The table stays at most half full and finds every key after growing. */
START_TEST(test_growth)
{
	struct table t;
	size_t cap = 0, grew = 0;

	table_init(&t, hash_mixed);
	for (long k = 0; k < 5000; k++) {
		table_intern(&t, k * 7919);
		ck_assert_uint_le(t.index.n * 2, t.index.cap);
		ck_assert_uint_eq(t.index.cap & (t.index.cap - 1), 0);
		if (t.index.cap != cap) {
			cap = t.index.cap;
			grew++;
			/* every key so far survives the move */
			for (long j = 0; j <= k; j++)
				ck_assert_int_eq(table_find(&t, j * 7919), j);
		}
	}
	ck_assert_uint_ge(grew, 5);
	table_free(&t);
}
END_TEST

/* Clearing forgets every key but keeps the slots. */
START_TEST(test_clear)
{
	struct table t;
	size_t cap;

	table_init(&t, hash_two);
	for (long k = 0; k < 100; k++)
		table_intern(&t, k);
	cap = t.index.cap;
	hashtab_clear(&t.index);
	t.n = 0;
	ck_assert_uint_eq(t.index.cap, cap);
	ck_assert_uint_eq(t.index.n, 0);
	for (long k = 0; k < 100; k++)
		ck_assert_int_eq(table_find(&t, k), -1);
	ck_assert_int_eq(table_intern(&t, 99), 0);
	ck_assert_int_eq(table_intern(&t, 5), 1);
	ck_assert_int_eq(table_find(&t, 99), 0);
	table_free(&t);
}
END_TEST

/* Positions go in order, as entries are appended to the caller's array:
 * anything else is a bug that must not corrupt the index quietly. */
START_TEST(test_add_out_of_order)
{
	struct hashtab t;

	hashtab_init(&t);
	hashtab_add(&t, 1, 0);
	hashtab_add(&t, 2, 2);
}
END_TEST

/* Strings through the string hash, as the field table keys them. */
START_TEST(test_many_strings)
{
	enum {
		N = 100000
	};
	char(*names)[24] = malloc(N * sizeof(*names));
	struct hashtab t;
	size_t probes = 0;

	ck_assert_ptr_nonnull(names);
	hashtab_init(&t);
	for (size_t i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "kvm_exit(%zu)", i);
		hashtab_add(&t, hashtab_hash_str(names[i]), i);
	}
	for (size_t i = 0; i < N; i++) {
		uint32_t h = hashtab_hash_str(names[i]);
		struct hashtab_iter it = hashtab_iter(&t, h);
		long j, found = -1;

		while ((j = hashtab_next(&t, &it)) >= 0) {
			probes++;
			if (!strcmp(names[j], names[i])) {
				found = j;
				break;
			}
		}
		ck_assert_int_eq(found, (long)i);
	}
	/* at most half full: a hit takes 1.5 probes on average */
	ck_assert_uint_le(probes, 2 * N);
	hashtab_free(&t);
	free(names);
}
END_TEST

/* The hashes are fixed functions of their input. */
START_TEST(test_hash_functions)
{
	ck_assert_uint_eq(hashtab_hash_str(""), 2166136261u);
	ck_assert_uint_eq(hashtab_hash_str("a"), 0xe40c292cu);
	ck_assert_uint_ne(hashtab_hash_str("ab"), hashtab_hash_str("ba"));
	ck_assert_uint_eq(hashtab_hash3(1, 2, 3), hashtab_hash3(1, 2, 3));
	ck_assert_uint_ne(hashtab_hash3(1, 2, 3), hashtab_hash3(3, 2, 1));
	ck_assert_uint_ne(hashtab_hash3(0, 1, 0), hashtab_hash3(0, 0, 1));
}
END_TEST

Suite *hashtab_suite(void)
{
	Suite *s = suite_create("hashtab");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_find_and_absent);
	tcase_add_test(tc, test_collisions);
	tcase_add_test(tc, test_growth);
	tcase_add_test(tc, test_clear);
	tcase_add_exit_test(tc, test_add_out_of_order, 1);
	tcase_add_test(tc, test_many_strings);
	tcase_add_test(tc, test_hash_functions);
	suite_add_tcase(s, tc);
	return s;
}
