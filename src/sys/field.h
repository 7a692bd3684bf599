/* SPDX-License-Identifier: MIT */
/*
 * Strict decimal numbers of /proc text, shared by the parsers of src/sys. Header-only, no
 * allocation, no system call, no locale, so the capture library may use it through
 * sys/procstat.h. A number is one or more digits (and a leading '-' for the signed form) that
 * fit the type: a sign alone, a '+', blanks, hex or an overflow is no number, never a clamped one.
 */
#ifndef IOSTRATA_SYS_FIELD_H
#define IOSTRATA_SYS_FIELD_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/* The unsigned number that is exactly s[0..n): 0, or -EINVAL (not digits) / -ERANGE. */
static inline int sys_field_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';
		if (d > 9)
			return -EINVAL;
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* The signed number that is exactly s[0..n), an optional '-' first: 0, -EINVAL or -ERANGE. */
static inline int sys_field_i64(const char *s, size_t n, int64_t *out)
{
	int neg = n > 0 && s[0] == '-';
	uint64_t v;
	int r = sys_field_u64(s + neg, n - (size_t)neg, &v);
	if (r < 0)
		return r;
	if (v > (uint64_t)INT64_MAX + (uint64_t)neg)
		return -ERANGE;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

/* The same for a 32-bit unsigned field (ids, device numbers). */
static inline int sys_field_u32(const char *s, size_t n, uint32_t *out)
{
	uint64_t v;
	int r = sys_field_u64(s, n, &v);
	if (r < 0)
		return r;
	if (v > UINT32_MAX)
		return -ERANGE;
	*out = (uint32_t)v;
	return 0;
}

#endif
