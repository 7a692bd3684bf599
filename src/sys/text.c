/* SPDX-License-Identifier: MIT */
/*
 * Reading a /proc or /sys file whole, with a bound, walking it line by line, growing the arrays
 * the parsers fill, and the in-place cuts the parsers of src/sys share (text.h).
 */
#include "sys/text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int sys_text_read(FILE *f, size_t max, char **buf, size_t *len)
{
	size_t cap = 0, n = 0;
	char *b = NULL;
	int r = 0;

	for (;;) {
		if (n + 1 >= cap) {
			/* at most max bytes of text, one more to tell a longer file, and the NUL */
			size_t want = cap ? 2 * cap : 16384;
			if (want > max + 2)
				want = max + 2;
			char *nb = realloc(b, want);
			if (!nb) {
				r = -ENOMEM;
				goto err;
			}
			b = nb;
			cap = want;
		}
		size_t k = fread(b + n, 1, cap - n - 1, f);
		n += k;
		if (n > max) {
			r = -EFBIG;
			goto err;
		}
		if (k == 0) {
			if (ferror(f)) {
				r = errno ? -errno : -EIO;
				goto err;
			}
			break;
		}
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
err:
	free(b);
	return r;
}

int sys_text_load(const char *path, size_t max, char **buf, size_t *len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	int r = sys_text_read(f, max, buf, len);
	fclose(f);
	return r;
}

int sys_text_lines(FILE *f, const char *buf, size_t len, size_t max, char **textp,
		   int (*line)(char *line, size_t len, void *ctx), void *ctx, size_t *skipped)
{
	char *text;
	int r = 0;

	if (f) {
		if ((r = sys_text_read(f, max, &text, &len)) < 0)
			return r;
	} else {
		if (len > max)
			return -EFBIG;
		if (!(text = malloc(len + 1)))
			return -ENOMEM;
		memcpy(text, buf, len);
		text[len] = 0;
	}
	if (textp)
		*textp = text;
	for (char *s = text, *end = text + len; s < end;) {
		char *nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl) {
			(*skipped)++; /* the last line, cut short */
			break;
		}
		*nl = 0;
		if (memchr(s, 0, (size_t)(nl - s)))
			(*skipped)++;
		else if ((r = line(s, (size_t)(nl - s), ctx)) < 0)
			break;
		s = nl + 1;
	}
	if (!textp)
		free(text);
	return r;
}

void *sys_text_grow(void *v, size_t *cap, size_t n, size_t size, size_t first)
{
	if (n < *cap)
		return v;
	size_t ncap = *cap ? 2 * *cap : first;
	void *nv = realloc(v, ncap * size);
	if (nv)
		*cap = ncap;
	return nv;
}

size_t sys_text_decode_octal(char *s)
{
	char *o = s, *start = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7' && (s[1] != '0' || s[2] != '0' || s[3] != '0')) {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
	return (size_t)(o - start);
}

int sys_text_split_blanks(char *s, char **f, int max)
{
	int n = 0;
	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return n;
		if (n == max)
			return -1;
		f[n++] = s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
		if (*s)
			*s++ = 0;
	}
}

int sys_text_copy_name(char *dst, size_t cap, const char *src, size_t n)
{
	if (n == 0 || n >= cap || memchr(src, 0, n))
		return -1;
	memcpy(dst, src, n);
	dst[n] = 0;
	return 0;
}
