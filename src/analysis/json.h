/* SPDX-License-Identifier: MIT */
/* The one JSON escaper and writer of every output (json.c says how strings are escaped). */
#ifndef IOSTRATA_ANALYSIS_JSON_H
#define IOSTRATA_ANALYSIS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The JSON string literal of s, quotes included, into dst, which must have room for
 * 6 * strlen(s) + 3 bytes; NUL-terminated; returns its length. */
size_t ana_json_quote(char *dst, const char *s);
/* The same written to f. */
void ana_json_string(FILE *f, const char *s);

/* A streaming writer: objects and arrays nest up to ANA_JW_DEPTH; members at depth <= 3 start a
 * new line, deeper ones stay on one, so a report is readable and a large array stays compact
 * (flat: no line breaks at all).
 * Errors show in ferror(f). */
#define ANA_JW_DEPTH 16
struct ana_jw {
	FILE *f;
	int flat; /* 1: everything on one line (dump's one object per log) */
	int depth;
	unsigned n[ANA_JW_DEPTH]; /* members written so far at each depth */
};

/* key is NULL inside arrays. */
void ana_jw_sep(struct ana_jw *w, const char *key);
void ana_jw_open(struct ana_jw *w, const char *key, char c); /* '{' or '[' */
void ana_jw_close(struct ana_jw *w, char c);                 /* '}' or ']' */
void ana_jw_u64(struct ana_jw *w, const char *key, uint64_t v);
void ana_jw_i64(struct ana_jw *w, const char *key, int64_t v);
void ana_jw_str(struct ana_jw *w, const char *key, const char *s); /* NULL: "" */
void ana_jw_null(struct ana_jw *w, const char *key);
void ana_jw_bool(struct ana_jw *w, const char *key, int v);
/* Seconds from integer ns, exactly: 123456 ns is 0.000123456. */
void ana_jw_secs(struct ana_jw *w, const char *key, uint64_t ns);
/* A ratio or rate; NaN and infinity (no JSON for them) are written as 0. */
void ana_jw_double(struct ana_jw *w, const char *key, double v);

#endif
