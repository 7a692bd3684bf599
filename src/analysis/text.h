/* SPDX-License-Identifier: MIT */
/* Text for a terminal (text.c): cleaning, cutting, wrapping and table rows. Widths are columns,
 * one per code point of the cleaned text. */
#ifndef IOSTRATA_ANALYSIS_TEXT_H
#define IOSTRATA_ANALYSIS_TEXT_H

#include <stddef.h>
#include <stdio.h>

#define ANA_TEXT_WIDTH 100 /* columns of the text report */

/* Copy s into out as valid UTF-8 with control characters and invalid bytes replaced by '?';
 * returns its width in columns (one per code point). */
size_t ana_text_clean(const char *s, char *out, size_t outlen);
/* Copy s into out cut to at most width columns: the tail is kept, "…" marks the cut. */
void ana_text_tail(const char *s, size_t width, char *out, size_t outlen);
/* The same keeping the head (for a command line the program name matters). */
void ana_text_head(const char *s, size_t width, char *out, size_t outlen);
/* Columns of a clean string. */
size_t ana_text_width(const char *s);
/* Start of the code point after skipping n code points of a clean string. */
const char *ana_text_skip(const char *s, size_t n);
/* Word-wrap s (cleaned) to ANA_TEXT_WIDTH: first line after `first`, the rest indented by
 * `indent` columns. Words longer than a line are cut hard. */
void ana_text_wrap(FILE *f, const char *first, size_t indent, const char *s);

struct ana_col {
	int width;
	int left; /* 1: left-aligned (text), 0: right-aligned (numbers) */
};
/* One table row of n cells, two spaces of margin and between columns. */
void ana_text_row(FILE *f, const struct ana_col *cols, size_t n, const char *const *cells);
/* Columns left for the last cell of a row whose other columns are cols[0..n-1). */
size_t ana_text_rest_width(const struct ana_col *cols, size_t n);

#endif
