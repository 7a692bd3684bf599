/* SPDX-License-Identifier: MIT */
/* JSON string literals for the strict-JSON outputs (dump --json, the timeline's Perfetto export). */
#ifndef IOSTRATA_ANALYSIS_JSON_H
#define IOSTRATA_ANALYSIS_JSON_H

#include <stddef.h>

/* The JSON string literal of s, quotes included, into dst, which must have room for
 * 6 * strlen(s) + 3 bytes; NUL-terminated; returns its length. Control bytes and bytes that are
 * not valid UTF-8 (overlong forms, surrogates, past U+10FFFF) become \u00XX, the byte's value as a
 * code point: lossy for such paths, but the output is strict JSON whatever the path holds. */
size_t ana_json_quote(char *dst, const char *s);

#endif
