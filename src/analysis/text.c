/* SPDX-License-Identifier: MIT */
/*
 * Text for a terminal: strings from logs cleaned (control characters and invalid UTF-8 replaced,
 * so a path cannot move the reader's cursor), cut to a width from the left or the right, wrapped
 * to the report's width without parting a number from its unit, and table rows. Knows nothing of
 * profiles or jobs.
 */
#include "analysis/text.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/utf8.h"

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, one column */

size_t ana_text_clean(const char *s, char *out, size_t outlen)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t o = 0, width = 0;

	if (!outlen)
		return 0;
	while (*u) {
		size_t n = ana_utf8_len(u);
		/* C0, DEL and C1 controls (U+0080..U+009F, which some terminals obey) become '?'. */
		int bad = n == 0 || *u < 0x20 || *u == 0x7f || (n == 2 && u[0] == 0xc2 && u[1] < 0xa0);
		size_t k = bad ? 1 : n;
		if (o + k >= outlen)
			break;
		if (bad) {
			out[o++] = '?';
		} else {
			memcpy(out + o, u, n);
			o += n;
		}
		u += k;
		width++;
	}
	out[o] = '\0';
	return width;
}

size_t ana_text_width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* Start of the code point after skipping n code points of a clean string. */
const char *ana_text_skip(const char *s, size_t n)
{
	while (*s && n) {
		s++;
		while (((unsigned char)*s & 0xc0) == 0x80)
			s++;
		n--;
	}
	return s;
}

void ana_text_tail(const char *s, size_t width, char *out, size_t outlen)
{
	size_t len = strlen(s) + 1;
	char *clean = malloc(len);

	if (!outlen)
		return;
	out[0] = '\0';
	if (!clean)
		return;
	size_t w = ana_text_clean(s, clean, len);
	if (w <= width)
		snprintf(out, outlen, "%s", clean);
	else if (width > 0)
		snprintf(out, outlen, ELLIPSIS "%s", ana_text_skip(clean, w - (width - 1)));
	free(clean);
}

/* The head of s in at most width columns: for a command line the program name matters. */
void ana_text_head(const char *s, size_t width, char *out, size_t outlen)
{
	size_t len = strlen(s) + 1;
	char *clean = malloc(len);

	out[0] = '\0';
	if (!clean)
		return;
	size_t w = ana_text_clean(s, clean, len);
	if (w <= width) {
		snprintf(out, outlen, "%s", clean);
	} else if (width > 0) {
		size_t n = (size_t)(ana_text_skip(clean, width - 1) - clean);
		snprintf(out, outlen, "%.*s" ELLIPSIS, (int)n, clean);
	}
	free(clean);
}

/* 1 when the space at sp joins a number to its unit ("4.0 KiB", "12 ms"): no line break there. */
static int unit_follows(const char *start, const char *sp)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ns", "\xc2\xb5s",
					    "ms", "s", "min", "h"};
	if (sp == start || sp[-1] < '0' || sp[-1] > '9')
		return 0;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		size_t n = strlen(units[i]);
		char after = sp[1 + n];
		if (!strncmp(sp + 1, units[i], n) && (after == '\0' || strchr(" ,;:)./", after)))
			return 1;
	}
	return 0;
}

/* Word-wrap s (cleaned) to ANA_TEXT_WIDTH: first line after `first`, the rest indented by
 * `indent` columns. Words longer than a line are cut hard. */
void ana_text_wrap(FILE *f, const char *first, size_t indent, const char *s)
{
	size_t len = strlen(s) + 1;
	char *clean = malloc(len);
	size_t avail = ANA_TEXT_WIDTH - indent;

	if (!clean)
		return;
	ana_text_clean(s, clean, len);
	fputs(first, f);
	const char *p = clean;
	int line = 0;
	while (*p) {
		if (line)
			fprintf(f, "\n%*s", (int)indent, "");
		line = 1;
		const char *end = ana_text_skip(p, avail);
		if (*end && *end != ' ') {
			/* break at the last space that fits, not between a number and its unit */
			const char *sp = NULL;
			for (const char *q = p; q < end; q++)
				if (*q == ' ' && !unit_follows(clean, q))
					sp = q;
			if (sp && sp > p)
				end = sp;
		}
		fwrite(p, 1, (size_t)(end - p), f);
		p = end;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
	free(clean);
}

/* ---- tables ---- */


void ana_text_row(FILE *f, const struct ana_col *cols, size_t n, const char *const *cells)
{
	fputs("  ", f);
	for (size_t i = 0; i < n; i++) {
		size_t w = ana_text_width(cells[i]);
		size_t pad = w < (size_t)cols[i].width ? (size_t)cols[i].width - w : 0;
		if (i)
			fputs("  ", f);
		if (!cols[i].left)
			fprintf(f, "%*s", (int)pad, "");
		fputs(cells[i], f);
		if (cols[i].left && i + 1 < n)
			fprintf(f, "%*s", (int)pad, "");
	}
	fputc('\n', f);
}

/* Columns left for the last cell of a row whose other columns are cols[0..n-1). */
size_t ana_text_rest_width(const struct ana_col *cols, size_t n)
{
	size_t used = 2;
	for (size_t i = 0; i < n; i++)
		used += (size_t)cols[i].width + 2;
	return used < ANA_TEXT_WIDTH ? ANA_TEXT_WIDTH - used : 8;
}
