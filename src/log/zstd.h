/* SPDX-License-Identifier: MIT */
/*
 * zstd for log sections, loaded on first use with dlopen("libzstd.so.1") (Debian's libzstd1, part
 * of every installation): a process that never traces never maps it. Compression runs in a
 * workspace mapped once (ZSTD_initStaticCCtx), with no malloc, so the capture library can
 * compress on its exit path, which may be a signal handler's _exit.
 */
#ifndef IOSTRATA_LOG_ZSTD_H
#define IOSTRATA_LOG_ZSTD_H

#include <stddef.h>
#include <stdint.h>

/* 0 when zstd is usable, else -1 with a reason in err. Safe to call again; loads once. */
int log_zstd_load(char *err, size_t errlen);
#define LOG_ZSTD_FRAME (1u << 16) /* input bytes per frame: what a damaged byte can cost */

/* 1 when zstd is loaded (log_zstd_load succeeded before); never loads it: async-signal-safe. */
int log_zstd_loaded(void);

/* Bytes dst needs to hold the compression of n bytes (0 when zstd is not loaded). */
size_t log_zstd_bound(size_t n);
/* Compress n bytes at src into dst (cap bytes) as frames of LOG_ZSTD_FRAME input bytes each; the
 * compressed size, or 0 on failure. */
size_t log_zstd_compress(void *dst, size_t cap, const void *src, size_t n);
/* Decompress the frames at src into a malloc'ed *out: 0 when every byte decoded; 1 when a frame
 * is damaged or cut short (*out then holds what the frames before it gave, err says where);
 * -1 when zstd cannot be loaded. */
int log_zstd_decompress(const void *src, size_t n, void **out, size_t *outlen, char *err, size_t errlen);
/* The same, refusing (1, err said) frames that decompress to more than max bytes: input that
 * others wrote (a stream message) cannot make it take unbounded memory. */
int log_zstd_decompress_max(const void *src, size_t n, size_t max, void **out, size_t *outlen, char *err,
			    size_t errlen);
/* The same, stopping at the end of the first frame that brings the bytes decompressed to want or
 * more (*outlen may exceed want by less than a frame's LOG_ZSTD_FRAME bytes): the beginning of a
 * long text without decompressing all of it. */
int log_zstd_decompress_head(const void *src, size_t n, size_t want, void **out, size_t *outlen, char *err,
			     size_t errlen);
/* Decompress the frames at src into dst, which they must fill exactly (len bytes): 0, or -1 with
 * err saying what is wrong (zstd missing, a damaged frame, a failed checksum, another size). It
 * never writes past dst + len, whatever the frames claim. */
int log_zstd_decompress_exact(const void *src, size_t n, void *dst, size_t len, char *err, size_t errlen);

#endif
