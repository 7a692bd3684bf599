/* SPDX-License-Identifier: MIT */
#include "analysis/json.h"

#include <string.h>

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when the bytes there are not one. The NUL
 * ending the string stops every multi-byte check before it reads past the end. */
static int utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
		return p[1] < lo || p[1] > hi || (p[2] & 0xc0) != 0x80 ? 0 : 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
		return p[1] < lo || p[1] > hi || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80 ? 0 : 4;
	}
	return 0;
}

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
		int n = *p < 0x20 || *p == 0x7f ? 0 : utf8_len(p);
		if (!n) {
			memcpy(o, "\\u00", 4);
			o[4] = hex[*p >> 4];
			o[5] = hex[*p & 15];
			o += 6;
			p++;
			continue;
		}
		memcpy(o, p, (size_t)n);
		o += n;
		p += n;
	}
	*o++ = '"';
	*o = '\0';
	return (size_t)(o - dst);
}
