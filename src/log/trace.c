/* SPDX-License-Identifier: MIT */
/* Decoding of trace entries (the encoder is inline in trace.h). */
#include "log/trace.h"

static int get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*p >= end)
			return -1;
		uint8_t b = *(*p)++;
		if (shift == 63 && b > 1)
			return -1; /* more than 64 bits */
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

static int64_t unzz(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

size_t log_trace_decode(struct log_trace_ctx *c, const uint8_t *p, size_t n, struct log_trace_run *r)
{
	const uint8_t *q = p, *end = p + n;
	uint64_t v, more = 0;

	if (n == 0)
		return 0;
	uint8_t tag = *q++;
	*r = (struct log_trace_run){.offset = UINT64_MAX, .count = 1};
	if ((tag & LOG_T_MORE) && (get(&q, end, &more) < 0 || more == 0 ||
				   (more & ~(uint64_t)(LOG_M_COUNT | LOG_M_RESULT | LOG_M_ABSOFF))))
		return 0;
	unsigned op = tag & LOG_T_OP_MASK;
	if (op == LOG_TRACE_OP_ESC) {
		if (get(&q, end, &v) < 0 || v < LOG_TRACE_OP_ESC || v >= LOG_NOPS)
			return 0;
		op = (unsigned)v;
	}
	if (op == 0 || op >= LOG_NOPS)
		return 0;
	r->op = (uint8_t)op;
	if (tag & LOG_T_SAME_FILE) {
		if (c->rec == UINT32_MAX)
			return 0;
		r->record = c->rec;
	} else {
		if (get(&q, end, &v) < 0 || v >= UINT32_MAX)
			return 0;
		r->record = (uint32_t)v;
	}
	int data = log_trace_op_has_data(op);
	if (!data && (tag & LOG_T_SAME_SIZE))
		return 0;
	uint64_t offv = 0;
	if (data) {
		if (get(&q, end, &offv) < 0)
			return 0;
		if (tag & LOG_T_SAME_SIZE)
			r->size = c->size;
		else if (get(&q, end, &r->size) < 0)
			return 0;
		if (more & LOG_M_ABSOFF)
			r->offset = offv;
		else if (offv & 1) {
			if (r->size < 2 || (r->size & (r->size - 1)))
				return 0;
			r->offset = c->expect + ((uint64_t)unzz(offv >> 1) << __builtin_ctzll(r->size));
		} else {
			r->offset = c->expect + (uint64_t)unzz(offv >> 1);
		}
	} else if (more & LOG_M_ABSOFF) {
		return 0;
	}
	uint64_t gap, dur;
	if (get(&q, end, &gap) < 0 || get(&q, end, &dur) < 0)
		return 0;
	r->start = c->prev_end + (uint64_t)unzz(gap);
	r->end = r->start + dur;
	r->busy = r->min = dur;
	if (more & LOG_M_COUNT) {
		if (get(&q, end, &v) < 0 || v > UINT64_MAX - 2 || get(&q, end, &r->busy) < 0 ||
		    get(&q, end, &r->min) < 0)
			return 0;
		r->count = v + 2;
	}
	if (more & LOG_M_RESULT) {
		if (get(&q, end, &v) < 0)
			return 0;
		r->result = unzz(v);
		if (r->result == 0)
			return 0;
	}
	if (data) {
		c->size = r->size;
		c->expect = r->offset + r->size * r->count;
	}
	c->rec = r->record;
	c->prev_end = r->end;
	return (size_t)(q - p);
}
