/* SPDX-License-Identifier: MIT */
/*
 * Parts of a stored JSON text, picked without parsing it into values: the API serves a job's
 * report (written by analysis/report_json.c) or one member of it byte for byte, so a figure in
 * the API is the report's own text and never a re-formatted copy.
 */
#ifndef IOSTRATA_WEB_JSONPICK_H
#define IOSTRATA_WEB_JSONPICK_H

#include <stddef.h>

/* The value of member key of the object in [s, s+len): 0 with its span, -ENOENT, or -EINVAL for
 * text that is not an object. */
int web_json_member(const char *s, size_t len, const char *key, const char **val, size_t *vlen);
/* The members of the object in [s, s+len), one per call: *pos starts at 0; 1 with the next
 * member's key (its characters between the quotes, escapes as written) and value spans, 0 at the
 * end, -EINVAL for text that is not an object. */
int web_json_next_member(const char *s, size_t len, size_t *pos, const char **key, size_t *klen, const char **val,
			 size_t *vlen);
/* The elements of the array in [s, s+len), one per call: *pos starts at 0; 1 with the next
 * element's span, 0 at the end, -EINVAL for text that is not an array. */
int web_json_next(const char *s, size_t len, size_t *pos, const char **val, size_t *vlen);

#endif
