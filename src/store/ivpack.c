/* SPDX-License-Identifier: MIT */
/*
 * The packed form of a process's interval statistics (ivpack.h): written by hand, not with
 * printf or a JSON library, because the statistics' transaction encodes 16,000 entries every 10 s
 * on bench/daemon (snprintf costs about a thousand instructions a number). The parser reads only
 * this form (what the writer and the migration make); anything else is -EINVAL, never a crash.
 */
#include "store/ivpack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				  "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				  "8081828384858687888990919293949596979899";

/* A number of 2 to 10 digits: two a step, written from the last, their count found first by
 * compares (32-bit arithmetic: a file key, a count of bytes or calls in 10 s, as a rule). */
static char *put_u32(char *p, uint32_t u)
{
	int n = u < 100 ? 2 : u < 1000 ? 3 : u < 10000 ? 4 : u < 100000 ? 5 : u < 1000000 ? 6 : u < 10000000 ? 7
		: u < 100000000 ? 8 : u < 1000000000 ? 9 : 10;
	char *e = p + n;
	for (; u >= 100; u /= 100) {
		e -= 2;
		memcpy(e, &pairs[2 * (u % 100)], 2);
	}
	if (u >= 10)
		memcpy(e - 2, &pairs[2 * u], 2);
	else
		e[-1] = (char)('0' + u);
	return p + n;
}

/* Written by hand: the statistics' transaction encodes 96,000 numbers every 10 s on bench/daemon
 * (snprintf: about a thousand instructions a number; a digit a step with a reversal: 94). */
static char *put_int(char *p, int64_t v)
{
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	if (v < 0)
		*p++ = '-';
	if (u < 10) {
		*p++ = (char)('0' + u);
		return p;
	}
	if (u <= UINT32_MAX)
		return put_u32(p, (uint32_t)u);
	/* the digits above the last nine first, then those nine (leading zeros kept) */
	uint32_t low = (uint32_t)(u % 1000000000);
	u /= 1000000000;
	p = u < 10 ? (*p = (char)('0' + u), p + 1) : u <= UINT32_MAX ? put_u32(p, (uint32_t)u) : put_int(p, (int64_t)u);
	for (int i = 8; i >= 0; i--, low /= 10)
		p[i] = (char)('0' + low % 10);
	return p + 9;
}

size_t ivp_encode(char *buf, const struct ivp_ent *v, size_t n, int64_t row_dt)
{
	char *p = buf;
	*p++ = '[';
	for (size_t i = 0; i < n; i++) {
		const struct ivp_ent *e = &v[i];
		if (i)
			*p++ = ',';
		*p++ = '[';
		p = put_int(p, e->file);
		*p++ = ',';
		p = put_int(p, e->layer);
		*p++ = ',';
		p = put_int(p, e->cat);
		*p++ = ',';
		p = put_int(p, e->bytes);
		*p++ = ',';
		p = put_int(p, e->calls);
		*p++ = ',';
		p = put_int(p, e->dur);
		if (e->dt != row_dt) {
			*p++ = ',';
			p = put_int(p, e->dt);
		}
		*p++ = ']';
	}
	*p++ = ']';
	*p = 0;
	return (size_t)(p - buf);
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* An integer of JSON (no fraction, no exponent) that fits int64: the character after it, or NULL. */
static const char *get_int(const char *p, const char *end, int64_t *out)
{
	int neg = 0;
	uint64_t u = 0;
	if (p < end && *p == '-')
		neg = 1, p++;
	const char *d = p;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (u > (UINT64_MAX - 9) / 10)
			return NULL;
		u = u * 10 + (uint64_t)(*p - '0');
	}
	if (p == d || u > (uint64_t)INT64_MAX + (uint64_t)neg)
		return NULL;
	*out = neg ? (int64_t)(0 - u) : (int64_t)u;
	return p;
}

int ivp_parse(const char *text, size_t len, int64_t row_dt, struct ivp_ent **v, size_t *n, size_t *cap)
{
	const char *p = text, *end = text + len;
	p = skip_ws(p, end);
	if (p == end || *p++ != '[')
		return -EINVAL;
	p = skip_ws(p, end);
	if (p < end && *p == ']')
		return skip_ws(p + 1, end) == end ? 0 : -EINVAL;
	for (;;) {
		int64_t x[7];
		int k = 0;
		p = skip_ws(p, end);
		if (p == end || *p++ != '[')
			return -EINVAL;
		for (;; k++) {
			if (k == 7 || !(p = get_int(skip_ws(p, end), end, &x[k])))
				return -EINVAL;
			p = skip_ws(p, end);
			if (p < end && *p == ',') {
				p++;
				continue;
			}
			if (p < end && *p == ']') {
				p++;
				break;
			}
			return -EINVAL;
		}
		if (k + 1 < 6 || x[1] < INT32_MIN || x[1] > INT32_MAX || x[2] < INT32_MIN || x[2] > INT32_MAX)
			return -EINVAL;
		if (*n == *cap) {
			size_t c = *cap ? 2 * *cap : 32;
			struct ivp_ent *w = realloc(*v, c * sizeof *w);
			if (!w)
				return -ENOMEM;
			*v = w;
			*cap = c;
		}
		(*v)[(*n)++] = (struct ivp_ent){.file = x[0], .layer = (int32_t)x[1], .cat = (int32_t)x[2], .bytes = x[3],
						.calls = x[4], .dur = x[5], .dt = k == 6 ? x[6] : row_dt};
		p = skip_ws(p, end);
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == ']')
			return skip_ws(p + 1, end) == end ? 0 : -EINVAL;
		return -EINVAL;
	}
}

/* A stable merge sort of v[0..n) by key (tmp: n entries). */
static void merge_sort(struct ivp_ent *v, struct ivp_ent *tmp, size_t n)
{
	if (n < 2)
		return;
	size_t h = n / 2;
	merge_sort(v, tmp, h);
	merge_sort(v + h, tmp, n - h);
	if (ivp_key_cmp(&v[h - 1], &v[h]) <= 0)
		return;
	size_t i = 0, j = h, k = 0;
	while (i < h && j < n)
		tmp[k++] = ivp_key_cmp(&v[j], &v[i]) < 0 ? v[j++] : v[i++];
	while (i < h)
		tmp[k++] = v[i++];
	memcpy(v, tmp, k * sizeof *v); /* the rest of the right half is in place */
}

int ivp_sort_sum(struct ivp_ent *v, size_t *n)
{
	size_t i = 1;
	while (i < *n && ivp_key_cmp(&v[i - 1], &v[i]) < 0)
		i++;
	if (i < *n) { /* not strictly in key order: a process's entries as the daemon hands them are */
		struct ivp_ent *tmp = malloc(*n * sizeof *tmp);
		if (!tmp)
			return -ENOMEM;
		merge_sort(v, tmp, *n);
		free(tmp);
	}
	size_t m = 0;
	for (i = 0; i < *n; i++) {
		if (m && !ivp_key_cmp(&v[m - 1], &v[i])) {
			v[m - 1].bytes += v[i].bytes;
			v[m - 1].calls += v[i].calls;
			v[m - 1].dur += v[i].dur;
		} else {
			v[m++] = v[i];
		}
	}
	*n = m;
	return 0;
}
