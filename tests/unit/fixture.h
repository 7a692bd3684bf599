/* SPDX-License-Identifier: MIT */
/* A fixture file's text for the parser tests: define FIX (the fixture directory, from the source
 * tree's root, where tests/run runs them) before including it. */
#ifndef IOSTRATA_TEST_UNIT_FIXTURE_H
#define IOSTRATA_TEST_UNIT_FIXTURE_H

#include <string.h>

#include "check.h"
#include "sys/text.h"

/* A fixture's text, or NULL with a failed check naming it. */
static inline char *fixture(const char *name, size_t *len)
{
	char path[512], *buf = NULL;
	snprintf(path, sizeof path, FIX "%s", name);
	int r = sys_text_load(path, 1 << 20, &buf, len);
	check(path, r == 0, "cannot read (%s): run from the source tree", strerror(-r));
	return r == 0 ? buf : NULL;
}

#endif
