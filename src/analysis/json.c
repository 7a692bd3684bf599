/* SPDX-License-Identifier: MIT */
/*
 * The one JSON escaper and writer of every output (report --json, dump --json, top --json, the
 * timeline's Perfetto export). Strings from logs are untrusted; the output always parses:
 *  - valid UTF-8 passes through unchanged;
 *  - '"' and '\\' are escaped, and so are the control characters U+0000..U+001F and DEL (\n, \t,
 *    \r by name, the rest as \u00XX);
 *  - a byte that does not start a valid UTF-8 sequence (overlong forms, surrogates, past U+10FFFF,
 *    a cut sequence) becomes U+FFFD, one per byte: such a path is shown, not recovered exactly.
 * Numbers are written from integers where the value is one (counts, bytes; seconds from integer
 * ns), so no float rounding creeps into exact figures.
 */
#include "analysis/json.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "analysis/utf8.h"

#define ANA_JW_PRETTY 3 /* members this deep or shallower start a new line */

size_t ana_json_quote(char *dst, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	char *o = dst;
	*o++ = '"';
	while (*p) {
		const char *esc = *p == '"' ? "\\\"" : *p == '\\' ? "\\\\" : *p == '\n' ? "\\n" : *p == '\t' ? "\\t"
				: *p == '\r' ? "\\r" : NULL;
		if (esc) {
			memcpy(o, esc, 2);
			o += 2;
			p++;
			continue;
		}
		if (*p < 0x20 || *p == 0x7f) {
			memcpy(o, "\\u00", 4);
			o[4] = hex[*p >> 4];
			o[5] = hex[*p & 15];
			o += 6;
			p++;
			continue;
		}
		size_t n = ana_utf8_len(p);
		if (!n) {
			memcpy(o, "\\ufffd", 6);
			o += 6;
			p++;
			continue;
		}
		memcpy(o, p, n);
		o += n;
		p += n;
	}
	*o++ = '"';
	*o = '\0';
	return (size_t)(o - dst);
}

void ana_json_string(FILE *f, const char *s)
{
	char small[256];
	size_t need = 6 * strlen(s) + 3;
	char *q = need <= sizeof small ? small : malloc(need);
	if (!q) { /* out of memory: still valid JSON, the string is lost and says so */
		fputs("\"\\ufffd\"", f);
		return;
	}
	fwrite(q, 1, ana_json_quote(q, s), f);
	if (q != small)
		free(q);
}

void ana_jw_sep(struct ana_jw *w, const char *key)
{
	if (w->n[w->depth]++)
		fputc(',', w->f);
	if (!w->flat && w->depth && w->depth <= ANA_JW_PRETTY)
		fprintf(w->f, "\n%*s", w->depth, "");
	if (key) {
		ana_json_string(w->f, key);
		fputc(':', w->f);
	}
}

void ana_jw_open(struct ana_jw *w, const char *key, char c)
{
	ana_jw_sep(w, key);
	fputc(c, w->f);
	if (w->depth + 1 < ANA_JW_DEPTH)
		w->depth++;
	w->n[w->depth] = 0;
}

void ana_jw_close(struct ana_jw *w, char c)
{
	int had = w->n[w->depth] != 0;
	w->depth--;
	if (!w->flat && had && w->depth + 1 <= ANA_JW_PRETTY)
		fprintf(w->f, "\n%*s", w->depth, "");
	fputc(c, w->f);
}

void ana_jw_u64(struct ana_jw *w, const char *key, uint64_t v)
{
	ana_jw_sep(w, key);
	fprintf(w->f, "%" PRIu64, v);
}

void ana_jw_i64(struct ana_jw *w, const char *key, int64_t v)
{
	ana_jw_sep(w, key);
	fprintf(w->f, "%" PRId64, v);
}

void ana_jw_str(struct ana_jw *w, const char *key, const char *s)
{
	ana_jw_sep(w, key);
	ana_json_string(w->f, s ? s : "");
}

void ana_jw_bool(struct ana_jw *w, const char *key, int v)
{
	ana_jw_sep(w, key);
	fputs(v ? "true" : "false", w->f);
}

/* Seconds from integer ns, exactly: 123456 ns is 0.000123456. */
void ana_jw_secs(struct ana_jw *w, const char *key, uint64_t ns)
{
	ana_jw_sep(w, key);
	fprintf(w->f, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
}

void ana_jw_double(struct ana_jw *w, const char *key, double v)
{
	ana_jw_sep(w, key);
	/* JSON has no NaN or infinity; a ratio with nothing under it is 0. */
	fprintf(w->f, "%.15g", isfinite(v) ? v : 0.0);
}


void ana_jw_null(struct ana_jw *w, const char *key)
{
	ana_jw_sep(w, key);
	fputs("null", w->f);
}
