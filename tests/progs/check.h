/* SPDX-License-Identifier: MIT */
/* The test programs' one assertion: a failed check prints where and why and exits 1, so a test
 * script sees the program fail instead of asserting on counters of a half-done run. */
#ifndef IOSTRATA_TEST_CHECK_H
#define IOSTRATA_TEST_CHECK_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c)                                                                                          \
	do {                                                                                              \
		if (!(c)) {                                                                               \
			fprintf(stderr, "%s:%d: %s failed (errno %d)\n", __FILE__, __LINE__, #c, errno);  \
			exit(1);                                                                          \
		}                                                                                         \
	} while (0)

#endif
