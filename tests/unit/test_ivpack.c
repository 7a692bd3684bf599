/* SPDX-License-Identifier: MIT */
/*
 * A process's interval statistics packed in one column (src/store/ivpack.c, SQLite's schema 15):
 * every number written as printf would write it (the view unpacks it with json_each), read back
 * exactly, to the limits of int64; entries summed by key in a stable order, the first length
 * kept; and the parser against damage: every truncation of a packed text, texts not of the form,
 * numbers out of range. Damage is -EINVAL, never a crash (run it under ASan: make test-san).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "store/ivpack.h"

static void test_numbers(void)
{
	static const int64_t vals[] = {0, 1, 9, 10, 99, 100, 101, 999, 1000, 65535, 99999, 100000, 999999999,
				       1000000000, 4294967295, 4294967296, 9999999999, 10000000000, 1234567890123456789,
				       INT64_MAX, -1, -9, -10, -4294967296, INT64_MIN + 1, INT64_MIN};
	int bad = 0, back = 0;
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		const struct ivp_ent e = {.file = vals[i], .layer = 1, .cat = 2, .bytes = vals[i], .calls = 3, .dur = vals[i], .dt = 7};
		char buf[IVP_ENT_MAX + 3], want[IVP_ENT_MAX + 3];
		ivp_encode(buf, &e, 1, 7);
		snprintf(want, sizeof want, "[[%" PRId64 ",1,2,%" PRId64 ",3,%" PRId64 "]]", vals[i], vals[i], vals[i]);
		bad += strcmp(buf, want) != 0;
		struct ivp_ent *v = NULL;
		size_t n = 0, cap = 0;
		back += ivp_parse(buf, strlen(buf), 7, &v, &n, &cap) == 0 && n == 1 && !memcmp(&v[0], &e, sizeof e);
		free(v);
	}
	eq_i64("numbers: written as printf writes them", bad, 0);
	eq_i64("numbers: read back exactly", back, (int64_t)(sizeof vals / sizeof vals[0]));
	bad = 0;
	for (int64_t x = 0; x < 3000000; x += 3) {
		const struct ivp_ent e = {.bytes = x};
		char buf[IVP_ENT_MAX + 3], want[64];
		ivp_encode(buf, &e, 1, 0);
		snprintf(want, sizeof want, "[[0,0,0,%" PRId64 ",0,0]]", x);
		bad += strcmp(buf, want) != 0;
	}
	eq_i64("numbers: every third up to 3,000,000", bad, 0);
}

static void test_lengths(void)
{
	const struct ivp_ent v[2] = {{.file = 5, .layer = 1, .cat = 0, .bytes = 10, .calls = 1, .dur = 2, .dt = 10000},
				     {.file = 6, .layer = 2, .cat = 1, .bytes = 20, .calls = 2, .dur = 4, .dt = 3000}};
	char buf[2 * IVP_ENT_MAX + 3];
	size_t len = ivp_encode(buf, v, 2, 10000);
	eq_str("lengths: an entry of another interval length carries it", buf, "[[5,1,0,10,1,2],[6,2,1,20,2,4,3000]]");
	eq_u64("lengths: the length returned", len, strlen(buf));
	struct ivp_ent *w = NULL;
	size_t n = 0, cap = 0;
	int r = ivp_parse(buf, len, 10000, &w, &n, &cap);
	check("lengths: read back, each its own", r == 0 && n == 2 && w[0].dt == 10000 && w[1].dt == 3000, "r %d n %zu", r, n);
	ivp_encode(buf, v, 0, 0);
	eq_str("lengths: no entry", buf, "[]");
	free(w);
}

static void test_sort_sum(void)
{
	/* keys handed out of order and twice: summed into the first given, its length kept */
	struct ivp_ent v[6] = {
		{.file = 9, .layer = 1, .cat = 1, .bytes = 1, .calls = 1, .dur = 1, .dt = 100},
		{.file = 2, .layer = 5, .cat = 0, .bytes = 2, .calls = 1, .dur = 1, .dt = 100},
		{.file = 9, .layer = 1, .cat = 1, .bytes = 40, .calls = 4, .dur = 4, .dt = 999},
		{.file = 2, .layer = 1, .cat = 2, .bytes = 0, .calls = 3, .dur = 3, .dt = 100},
		{.file = 2, .layer = 5, .cat = 0, .bytes = 500, .calls = 5, .dur = 5, .dt = 7},
		{.file = 1, .layer = 9, .cat = 9, .bytes = 6, .calls = 6, .dur = 6, .dt = 100},
	};
	size_t n = 6;
	char buf[6 * IVP_ENT_MAX + 3];
	check("sort: done", ivp_sort_sum(v, &n) == 0, "failed");
	ivp_encode(buf, v, n, 100);
	eq_str("sort: key order, a key twice summed, its first length kept", buf,
	       "[[1,9,9,6,6,6],[2,1,2,0,3,3],[2,5,0,502,6,6],[9,1,1,41,5,5]]");
	/* many, reversed: the merge sort, stable */
	enum { N = 5000 };
	static struct ivp_ent w[N];
	for (int i = 0; i < N; i++)
		w[i] = (struct ivp_ent){.file = (N - 1 - i) / 2, .bytes = i, .calls = 1, .dt = i};
	n = N;
	check("sort: 5,000 reversed", ivp_sort_sum(w, &n) == 0, "failed");
	int ok = n == N / 2;
	for (size_t i = 0; ok && i < n; i++)
		ok = w[i].file == (int64_t)i && w[i].calls == 2 && w[i].dt == N - 2 - 2 * (int64_t)i &&
		     w[i].bytes == 2 * (N - 1 - 2 * (int64_t)i) - 1;
	check("sort: 5,000 reversed, pairs summed into the first given", ok, "n %zu", n);
}

static void test_damage(void)
{
	static const char *const bad[] = {
		"", " ", "[", "]", "[[", "[[]]", "[[1,2,3,4,5]]", "[[1,2,3,4,5,6,7,8]]", "[[1,2,3,4,5,6],]",
		"[[1,2,3,4,5,6]] x", "[[1,2,3,4,5,6.5]]", "[[1,2,3,4,5,1e3]]", "[[1,2,3,4,5,\"6\"]]",
		"[[1,2,3,4,5,9223372036854775808]]", "[[1,2,3,4,5,-9223372036854775809]]",
		"[[1,2,3,4,5,99999999999999999999]]", "[[1,2147483648,3,4,5,6]]", "[[1,2,-2147483649,4,5,6]]",
		"{}", "[1]", "[[1,2,3,4,5,6][1,2,3,4,5,6]]", "[[1,,3,4,5,6]]", "[[-,2,3,4,5,6]]", "null",
	};
	int accepted = 0;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct ivp_ent *v = NULL;
		size_t n = 0, cap = 0;
		if (ivp_parse(bad[i], strlen(bad[i]), 0, &v, &n, &cap) != -EINVAL) {
			printf("# accepted: %s\n", bad[i]);
			accepted++;
		}
		free(v);
	}
	eq_i64("damage: texts not of the form refused", accepted, 0);
	/* every proper prefix of a packed text is refused; the whole, with spaces, is read */
	const char *good = " [ [1, 2,3 ,4,5,6] ,\n[7,8,9,10,11,12,13]\t] ";
	int prefixes = 0;
	for (size_t len = 0; len < strlen(good) - 1; len++) {
		struct ivp_ent *v = NULL;
		size_t n = 0, cap = 0;
		char *copy = malloc(len ? len : 1); /* no terminator: the parser reads len bytes only */
		memcpy(copy, good, len);
		prefixes += ivp_parse(copy, len, 0, &v, &n, &cap) == -EINVAL;
		free(copy);
		free(v);
	}
	eq_i64("damage: every truncation refused", prefixes, (int64_t)strlen(good) - 1);
	struct ivp_ent *v = NULL;
	size_t n = 0, cap = 0;
	int r = ivp_parse(good, strlen(good), 100, &v, &n, &cap);
	check("damage: white space read", r == 0 && n == 2 && v[0].file == 1 && v[0].dt == 100 && v[1].cat == 9 && v[1].dt == 13,
	      "r %d n %zu", r, n);
	free(v);
}

int main(void)
{
	test_numbers();
	test_lengths();
	test_sort_sum();
	test_damage();
	return failures ? 1 : 0;
}
