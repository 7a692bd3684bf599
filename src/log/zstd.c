/* SPDX-License-Identifier: MIT */
#include "log/zstd.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <zstd.h> /* constants only: the functions come through dlsym */

#define ZSTD_LEVEL 3

static struct {
	int state; /* 0 not tried, 1 loaded, -1 unavailable */
	char why[160];
	size_t (*bound)(size_t);
	unsigned (*is_error)(size_t);
	const char *(*error_name)(size_t);
	size_t (*estimate_cctx)(int);
	void *(*init_static_cctx)(void *, size_t);
	size_t (*set_param)(void *, int, int);
	size_t (*compress2)(void *, void *, size_t, const void *, size_t);
	unsigned long long (*find_size)(const void *, size_t);
	ZSTD_DStream *(*create_ds)(void);
	size_t (*free_ds)(ZSTD_DStream *);
	size_t (*init_ds)(ZSTD_DStream *);
	size_t (*decompress_stream)(ZSTD_DStream *, ZSTD_outBuffer *, ZSTD_inBuffer *);
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
		SYM(set_param, "ZSTD_CCtx_setParameter")
		SYM(compress2, "ZSTD_compress2")
		SYM(find_size, "ZSTD_findDecompressedSize")
		SYM(create_ds, "ZSTD_createDStream")
		SYM(free_ds, "ZSTD_freeDStream")
		SYM(init_ds, "ZSTD_initDStream")
		SYM(decompress_stream, "ZSTD_decompressStream")
		SYM(decompress, "ZSTD_decompress")
#undef SYM
		size_t ws = z.estimate_cctx(ZSTD_LEVEL);
		void *m = mmap(NULL, ws, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED || !(z.cctx = z.init_static_cctx(m, ws))) {
			snprintf(z.why, sizeof z.why, "cannot set up a zstd workspace of %zu bytes", ws);
			goto out;
		}
		/* a checksum per frame: damage must fail the frame, not decode into wrong entries.
		 * A frame holds at most 64 KiB (windowLog 16), and small match tables (2^12 entries)
		 * halve the first compression of a process, which zeroes them: ~125 instead of ~260
		 * us for a `cat` log's records, for 360 instead of 364 bytes. */
		if (z.is_error(z.set_param(z.cctx, ZSTD_c_compressionLevel, ZSTD_LEVEL)) ||
		    z.is_error(z.set_param(z.cctx, ZSTD_c_checksumFlag, 1)) ||
		    z.is_error(z.set_param(z.cctx, ZSTD_c_windowLog, 16)) ||
		    z.is_error(z.set_param(z.cctx, ZSTD_c_hashLog, 12)) ||
		    z.is_error(z.set_param(z.cctx, ZSTD_c_chainLog, 12))) {
			snprintf(z.why, sizeof z.why, "cannot set the zstd level and checksum");
			goto out;
		}
		z.state = 1;
	}
out:
	if (z.state < 0 && err && errlen)
		snprintf(err, errlen, "%s", z.why);
	return z.state > 0 ? 0 : -1;
}

int log_zstd_loaded(void)
{
	return z.state > 0;
}

int log_zstd_decompress_exact(const void *src, size_t n, void *dst, size_t len, char *err, size_t errlen)
{
	if (log_zstd_load(err, errlen) < 0)
		return -1;
	/* One call over every frame; it checks each frame's content checksum and fails with
	 * "destination buffer too small" rather than writing past len. */
	size_t r = z.decompress(dst, len, src, n);
	if (z.is_error(r)) {
		snprintf(err, errlen, "zstd: %s", z.error_name(r));
		return -1;
	}
	if (r != len) {
		snprintf(err, errlen, "zstd: %zu bytes decompressed, %zu expected", r, len);
		return -1;
	}
	return 0;
}

size_t log_zstd_compress(void *dst, size_t cap, const void *src, size_t n)
{
	if (z.state <= 0)
		return 0;
	/* Frames of LOG_ZSTD_FRAME input bytes: a truncated file loses only its last frame. */
	size_t out = 0;
	for (size_t off = 0; off < n; off += LOG_ZSTD_FRAME) {
		size_t len = n - off < LOG_ZSTD_FRAME ? n - off : LOG_ZSTD_FRAME;
		size_t r = z.compress2(z.cctx, (char *)dst + out, cap - out, (const char *)src + off, len);
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

/* The frames at src into *out, refusing more than max bytes, stopping at the end of the first
 * frame that brings the bytes to enough or more. */
static int decompress_frames(const void *src, size_t n, size_t max, size_t enough, void **out, size_t *outlen,
			     char *err, size_t errlen)
{
	*out = NULL;
	*outlen = 0;
	if (log_zstd_load(err, errlen) < 0)
		return -1;
	ZSTD_DStream *ds = z.create_ds();
	if (!ds || z.is_error(z.init_ds(ds))) {
		snprintf(err, errlen, "cannot create a zstd stream");
		if (ds)
			z.free_ds(ds);
		return -1;
	}
	/* Streamed, but a frame's bytes count only once the frame has ended and its checksum
	 * matched: what precedes a damaged or missing frame is kept, nothing of the frame itself. */
	unsigned char *buf = NULL;
	size_t committed = 0, have = 0, cap = 0, frame_start = 0;
	ZSTD_inBuffer in = {src, n, 0};
	int rc = 0;
	for (;;) {
		if (cap - have < 65536) {
			size_t ncap = cap ? cap * 2 : 262144;
			unsigned char *nb = realloc(buf, ncap);
			if (!nb) {
				snprintf(err, errlen, "out of memory");
				rc = 1;
				break;
			}
			buf = nb;
			cap = ncap;
		}
		ZSTD_outBuffer o = {buf, cap, have};
		size_t r = z.decompress_stream(ds, &o, &in);
		have = o.pos;
		if (have > max) {
			snprintf(err, errlen, "zstd frames decompress to more than %zu bytes", max);
			rc = 1;
			break;
		}
		if (z.is_error(r)) {
			snprintf(err, errlen, "zstd frame at byte %zu: %s", frame_start, z.error_name(r));
			rc = 1;
			break;
		}
		if (r == 0) { /* a frame ended, checksum verified */
			committed = have;
			frame_start = in.pos;
			if (in.pos == in.size || committed >= enough)
				break;
			continue;
		}
		if (in.pos == in.size && o.pos < o.size) {
			snprintf(err, errlen, "zstd frame at byte %zu is cut short", frame_start);
			rc = 1;
			break;
		}
	}
	z.free_ds(ds);
	*out = buf;
	*outlen = committed;
	return rc;
}

int log_zstd_decompress(const void *src, size_t n, void **out, size_t *outlen, char *err, size_t errlen)
{
	return decompress_frames(src, n, SIZE_MAX, SIZE_MAX, out, outlen, err, errlen);
}

int log_zstd_decompress_max(const void *src, size_t n, size_t max, void **out, size_t *outlen, char *err,
			    size_t errlen)
{
	return decompress_frames(src, n, max, SIZE_MAX, out, outlen, err, errlen);
}

int log_zstd_decompress_head(const void *src, size_t n, size_t want, void **out, size_t *outlen, char *err,
			     size_t errlen)
{
	return decompress_frames(src, n, SIZE_MAX, want, out, outlen, err, errlen);
}
