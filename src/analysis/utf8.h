/* SPDX-License-Identifier: MIT */
/* The one UTF-8 validity test of the renderers (text cleaning, the JSON escaper). */
#ifndef IOSTRATA_ANALYSIS_UTF8_H
#define IOSTRATA_ANALYSIS_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (1..4), 0 when s does not start one (overlongs,
 * surrogates and code points past U+10FFFF are invalid). Never reads past a NUL: every
 * continuation check fails on it before the next byte is looked at. */
static inline size_t ana_utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

#endif
