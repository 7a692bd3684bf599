/* SPDX-License-Identifier: MIT */
/*
 * The entry coding of trace blocks (docs/FORMAT.md, "Trace"): one closed run becomes a tag byte
 * and varints, each field a delta from the previous entry of the same block. The capture library
 * encodes with it on the hot path (so the encoder is inline and touches nothing but its
 * arguments); the reader decodes with it. A block's first entry starts from a zeroed context,
 * so every block decodes on its own.
 */
#ifndef IOSTRATA_LOG_TRACE_H
#define IOSTRATA_LOG_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "iostrata/format.h"

#define LOG_TRACE_ENTRY_MAX 96 /* the longest an encoded entry can be */

/* What the next entry's deltas are taken from. All zero at a block's start. */
struct log_trace_ctx {
	uint64_t expect;   /* offset just after the previous data entry: offset + size * count */
	uint64_t size;     /* size of the previous data entry */
	uint64_t prev_end; /* end time of the previous entry */
	uint32_t rec;      /* record of the previous entry; UINT32_MAX before the first */
	uint32_t pad;
};

static inline void log_trace_ctx_reset(struct log_trace_ctx *c)
{
	c->expect = c->size = c->prev_end = 0;
	c->rec = UINT32_MAX;
	c->pad = 0;
}

/* read and write carry an offset and a size; the other ops carry neither. */
static inline int log_trace_op_has_data(unsigned op)
{
	return op == LOG_OP_READ || op == LOG_OP_WRITE;
}

static inline uint8_t *log_trace_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint64_t log_trace_zz(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* Encode r into out (room for LOG_TRACE_ENTRY_MAX bytes); returns the bytes written. */
static inline size_t log_trace_encode(struct log_trace_ctx *c, const struct log_trace_run *r, uint8_t *out)
{
	uint8_t *p = out + 1;
	unsigned more = (r->count > 1 ? LOG_M_COUNT : 0) | (r->result ? LOG_M_RESULT : 0);
	int data = log_trace_op_has_data(r->op);
	uint8_t tag = (uint8_t)(r->op < LOG_TRACE_OP_ESC ? r->op : LOG_TRACE_OP_ESC);
	uint64_t offv = 0;

	if (data) {
		/* The offset as a distance from where the previous data entry ended; in units of the
		 * size when the size is a power of two that divides it (aligned random access), the
		 * low bit telling which. A distance too large for that (beyond 2^61) is written
		 * whole, as the offset itself. */
		int64_t d = (int64_t)(r->offset - c->expect);
		uint64_t s = r->size, z = log_trace_zz(d);
		if (s > 1 && !(s & (s - 1)) && !((uint64_t)d & (s - 1)) && !(log_trace_zz(d >> __builtin_ctzll(s)) >> 62))
			offv = log_trace_zz(d >> __builtin_ctzll(s)) << 1 | 1;
		else if (!(z >> 62))
			offv = z << 1;
		else
			more |= LOG_M_ABSOFF, offv = r->offset;
		if (s == c->size)
			tag |= LOG_T_SAME_SIZE;
	}
	if (r->record == c->rec)
		tag |= LOG_T_SAME_FILE;
	if (more) {
		tag |= LOG_T_MORE;
		p = log_trace_put(p, more);
	}
	if ((tag & LOG_T_OP_MASK) == LOG_TRACE_OP_ESC)
		p = log_trace_put(p, r->op);
	if (!(tag & LOG_T_SAME_FILE))
		p = log_trace_put(p, r->record);
	if (data) {
		p = log_trace_put(p, offv);
		if (!(tag & LOG_T_SAME_SIZE))
			p = log_trace_put(p, r->size);
		c->size = r->size;
		c->expect = r->offset + r->size * r->count;
	}
	uint64_t end = r->end < r->start ? r->start : r->end;
	p = log_trace_put(p, log_trace_zz((int64_t)(r->start - c->prev_end)));
	p = log_trace_put(p, end - r->start);
	if (more & LOG_M_COUNT) {
		p = log_trace_put(p, r->count - 2);
		p = log_trace_put(p, r->busy);
		p = log_trace_put(p, r->min);
	}
	if (more & LOG_M_RESULT)
		p = log_trace_put(p, log_trace_zz(r->result));
	c->rec = r->record;
	c->prev_end = end;
	out[0] = tag;
	return (size_t)(p - out);
}

/* Decode one entry of n bytes at p into r; returns the bytes it took, or 0 when the bytes are
 * not a valid entry (truncated, a varint too long, an op out of range, "same file" first). */
size_t log_trace_decode(struct log_trace_ctx *c, const uint8_t *p, size_t n, struct log_trace_run *r);

#endif
