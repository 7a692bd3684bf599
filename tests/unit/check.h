/* SPDX-License-Identifier: MIT */
/* The unit tests' one check: "ok - NAME" or "not ok - NAME: why" (tests/run counts the lines),
 * and the failures the program's exit status reports. */
#ifndef IOSTRATA_TEST_UNIT_CHECK_H
#define IOSTRATA_TEST_UNIT_CHECK_H

#include <stdarg.h>
#include <stdio.h>

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

#endif
