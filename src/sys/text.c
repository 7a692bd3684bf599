/* SPDX-License-Identifier: MIT */
/*
 * Reading a /proc or /sys file whole, with a bound (text.h).
 */
#include "sys/text.h"

#include <errno.h>
#include <stdlib.h>

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
