/* SPDX-License-Identifier: MIT */
#include "log/zstd.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define ZSTD_LEVEL 3

static struct {
	int state; /* 0 not tried, 1 loaded, -1 unavailable */
	char why[160];
	size_t (*bound)(size_t);
	unsigned (*is_error)(size_t);
	const char *(*error_name)(size_t);
	size_t (*estimate_cctx)(int);
	void *(*init_static_cctx)(void *, size_t);
	size_t (*compress_cctx)(void *, void *, size_t, const void *, size_t, int);
	unsigned long long (*find_size)(const void *, size_t);
	unsigned long long (*frame_size)(const void *, size_t);
	size_t (*frame_csize)(const void *, size_t);
	size_t (*decompress)(void *, size_t, const void *, size_t);
	void *cctx;
} z;

int log_zstd_load(char *err, size_t errlen)
{
	if (z.state == 0) {
		void *h = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
		z.state = -1;
		if (!h) {
			snprintf(z.why, sizeof z.why, "cannot load libzstd.so.1: %s", dlerror());
			goto out;
		}
#define SYM(field, name)                                                                  \
	if (!(*(void **)&z.field = dlsym(h, name))) {                                     \
		snprintf(z.why, sizeof z.why, "libzstd.so.1 lacks %s", name);              \
		goto out;                                                                 \
	}
		SYM(bound, "ZSTD_compressBound")
		SYM(is_error, "ZSTD_isError")
		SYM(error_name, "ZSTD_getErrorName")
		SYM(estimate_cctx, "ZSTD_estimateCCtxSize")
		SYM(init_static_cctx, "ZSTD_initStaticCCtx")
		SYM(compress_cctx, "ZSTD_compressCCtx")
		SYM(find_size, "ZSTD_findDecompressedSize")
		SYM(frame_size, "ZSTD_getFrameContentSize")
		SYM(frame_csize, "ZSTD_findFrameCompressedSize")
		SYM(decompress, "ZSTD_decompress")
#undef SYM
		size_t ws = z.estimate_cctx(ZSTD_LEVEL);
		void *m = mmap(NULL, ws, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED || !(z.cctx = z.init_static_cctx(m, ws))) {
			snprintf(z.why, sizeof z.why, "cannot set up a zstd workspace of %zu bytes", ws);
			goto out;
		}
		z.state = 1;
	}
out:
	if (z.state < 0 && err && errlen)
		snprintf(err, errlen, "%s", z.why);
	return z.state > 0 ? 0 : -1;
}

size_t log_zstd_compress(void *dst, size_t cap, const void *src, size_t n)
{
	if (z.state <= 0)
		return 0;
	/* Frames of LOG_ZSTD_FRAME input bytes: a truncated file loses only its last frame. */
	size_t out = 0;
	for (size_t off = 0; off < n; off += LOG_ZSTD_FRAME) {
		size_t len = n - off < LOG_ZSTD_FRAME ? n - off : LOG_ZSTD_FRAME;
		size_t r = z.compress_cctx(z.cctx, (char *)dst + out, cap - out, (const char *)src + off, len, ZSTD_LEVEL);
		if (z.is_error(r))
			return 0;
		out += r;
	}
	return out;
}

size_t log_zstd_bound(size_t n)
{
	return z.state > 0 ? z.bound(n) + (n / LOG_ZSTD_FRAME + 1) * 32 : 0;
}

int log_zstd_decompress(const void *src, size_t n, void **out, size_t *outlen, char *err, size_t errlen)
{
	*out = NULL;
	*outlen = 0;
	if (log_zstd_load(err, errlen) < 0)
		return -1;
	/* Frame by frame, so that what precedes a damaged or missing frame is kept. */
	size_t total = 0, off = 0;
	unsigned char *buf = NULL;
	while (off < n) {
		const char *f = (const char *)src + off;
		size_t cs = z.frame_csize(f, n - off);
		unsigned long long raw = z.frame_size(f, n - off);
		if (z.is_error(cs) || raw >= (0ULL - 2) || raw > ((size_t)1 << 34)) {
			snprintf(err, errlen, "zstd frame at byte %zu is %s", off,
				 z.is_error(cs) ? "truncated or corrupt" : "without a valid size");
			break;
		}
		unsigned char *nb = realloc(buf, total + (size_t)raw + 1);
		if (!nb) {
			snprintf(err, errlen, "out of memory");
			break;
		}
		buf = nb;
		size_t r = z.decompress(buf + total, (size_t)raw, f, cs);
		if (z.is_error(r) || r != raw) {
			snprintf(err, errlen, "zstd frame at byte %zu: %s", off,
				 z.is_error(r) ? z.error_name(r) : "shorter than its header says");
			break;
		}
		total += r;
		off += cs;
	}
	*out = buf;
	*outlen = total;
	return off < n ? 1 : 0;
}
