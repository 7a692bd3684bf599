/* SPDX-License-Identifier: MIT */
/*
 * Formatting of bytes, durations, rates, counts and shares for people. Binary units because
 * file systems, page sizes and access sizes are powers of two: "4.0 KiB" says more than
 * "4.1 kB". One decimal is enough to compare rows of a table; exact values are in the JSON.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/units.h"

static const char *const byte_units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

static const char *scaled(char *buf, size_t len, double v, const char *suffix)
{
	unsigned u = 0;

	while (v >= 1024 && u + 1 < sizeof byte_units / sizeof byte_units[0]) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%.0f %s%s", v, byte_units[u], suffix);
	else
		snprintf(buf, len, "%.1f %s%s", v, byte_units[u], suffix);
	return buf;
}

const char *ana_fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	if (bytes < 1024) {
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	return scaled(buf, len, (double)bytes, "");
}

const char *ana_fmt_rate(char *buf, size_t len, double bytes_per_s)
{
	return scaled(buf, len, bytes_per_s > 0 ? bytes_per_s : 0, "/s");
}

const char *ana_fmt_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f µs", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
	else if (ns < 60000000000ull)
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
	else if (ns < 3600000000000ull)
		snprintf(buf, len, "%llu min %02llu s", (unsigned long long)(ns / 60000000000ull),
			 (unsigned long long)(ns / 1000000000ull % 60));
	else
		snprintf(buf, len, "%llu h %02llu min", (unsigned long long)(ns / 3600000000000ull),
			 (unsigned long long)(ns / 60000000000ull % 60));
	return buf;
}

const char *ana_fmt_count(char *buf, size_t len, uint64_t n)
{
	char tmp[32];
	int k = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)n);
	size_t o = 0;

	for (int i = 0; i < k && o + 1 < len; i++) {
		if (i && (k - i) % 3 == 0 && o + 2 < len)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	if (len)
		buf[o < len ? o : len - 1] = '\0';
	return buf;
}

const char *ana_fmt_pct(char *buf, size_t len, double share)
{
	snprintf(buf, len, "%.1f%%", share * 100);
	return buf;
}

void ana_appendf(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;

	if (!len || *used >= len - 1)
		return;
	va_start(ap, fmt);
	int r = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (r > 0)
		*used = *used + (size_t)r < len - 1 ? *used + (size_t)r : len - 1;
}

int ana_lines_vaddf(char ***lines, size_t *n, const char *fmt, va_list ap)
{
	char **v = realloc(*lines, (*n + 1) * sizeof *v);
	if (!v)
		return -ENOMEM;
	*lines = v;
	if (vasprintf(&v[*n], fmt, ap) < 0)
		return -ENOMEM;
	(*n)++;
	return 0;
}
