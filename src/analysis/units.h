/* SPDX-License-Identifier: MIT */
/*
 * Human units for the text report and the insight sentences: binary byte units (KiB, MiB ...),
 * durations (ns, µs, ms, s, min, h), counts with thousands separators, and a bounded string
 * appender for building sentences. JSON never uses the units: it prints exact integers.
 */
#ifndef IOSTRATA_ANALYSIS_UNITS_H
#define IOSTRATA_ANALYSIS_UNITS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Each writes into buf (at least ANA_UNIT_LEN bytes is always enough) and returns buf. */
#define ANA_UNIT_LEN 32
const char *ana_fmt_bytes(char *buf, size_t len, uint64_t bytes);
const char *ana_fmt_rate(char *buf, size_t len, double bytes_per_s); /* "1.5 GiB/s" */
const char *ana_fmt_ns(char *buf, size_t len, uint64_t ns);
const char *ana_fmt_count(char *buf, size_t len, uint64_t n);         /* "1,234,567" */
const char *ana_fmt_pct(char *buf, size_t len, double share);         /* 0.123 -> "12.3%" */
/* printf at buf + *used, never past len; *used stays <= len - 1 so calls can be chained. */
void ana_appendf(char *buf, size_t len, size_t *used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Append a printf-formatted line to the list (*lines, *n) (warnings, notes): 0 or -ENOMEM. */
int ana_lines_vaddf(char ***lines, size_t *n, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#endif
