/* SPDX-License-Identifier: MIT */
/*
 * LEB128 varints and zig-zag: the compact integers of the daemon's cursors and of the node
 * batches (store/batch.h). A reader never trusts its input: get stops at end and refuses more
 * than 10 bytes.
 */
#ifndef IOSTRATA_SYS_VARINT_H
#define IOSTRATA_SYS_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define SYS_VARINT_MAX 10 /* bytes of the longest */

/* Writes v at p (room for SYS_VARINT_MAX bytes): the bytes written. */
static inline size_t sys_varint_put(unsigned char *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* Reads one at *p (advanced) before end: 0, or -1 when cut short or too long. */
static inline int sys_varint_get(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*p >= end)
			return -1;
		unsigned char b = *(*p)++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

static inline uint64_t sys_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t sys_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

#endif
