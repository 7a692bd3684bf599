/* SPDX-License-Identifier: MIT */
/* The unit tests' one check: "ok - NAME" or "not ok - NAME: why" (tests/run counts the lines),
 * and the failures the program's exit status reports. */
#ifndef IOSTRATA_TEST_UNIT_CHECK_H
#define IOSTRATA_TEST_UNIT_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int failures;

static inline __attribute__((format(printf, 3, 4))) void check(const char *name, int ok, const char *fmt, ...)
{
	if (ok) {
		printf("ok - %s\n", name);
		return;
	}
	va_list ap;
	printf("not ok - %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failures++;
}

static inline void eq_u64(const char *name, uint64_t got, uint64_t want)
{
	check(name, got == want, "got %" PRIu64 ", want %" PRIu64, got, want);
}

static inline void eq_i64(const char *name, int64_t got, int64_t want)
{
	check(name, got == want, "got %" PRId64 ", want %" PRId64, got, want);
}

static inline void eq_str(const char *name, const char *got, const char *want)
{
	check(name, got && !strcmp(got, want), "got \"%s\", want \"%s\"", got ? got : "(null)", want);
}

#endif
