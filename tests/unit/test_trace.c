/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the trace entry coding (src/log/trace.h, trace.c): every field of every entry
 * comes back exactly, through a block of 200,000 entries of mixed kinds (runs, single calls,
 * aligned and unaligned offsets, offsets near 2^63, backwards time, ops past the tag's 5 bits,
 * errors); the sizes of the common cases; and every prefix and every single-byte corruption of
 * an encoded block decodes to a prefix of the original or stops, never past its input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/trace.h"

static int failures;

#define CHECK_EQ(name, want, got)                                                                       \
	do {                                                                                            \
		unsigned long long w_ = (unsigned long long)(want), g_ = (unsigned long long)(got);     \
		if (w_ == g_)                                                                           \
			printf("ok - %s\n", name);                                                      \
		else {                                                                                  \
			printf("not ok - %s: expected %llu, got %llu\n", name, w_, g_);                 \
			failures++;                                                                     \
		}                                                                                       \
	} while (0)

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A run as the capture library would close it (fields a decoder can reproduce). */
static struct log_trace_run make_run(uint64_t *t, uint64_t *off)
{
	struct log_trace_run r = {0};
	unsigned kind = (unsigned)(next() % 10);
	static const uint8_t meta_ops[] = {LOG_OP_OPEN, LOG_OP_CLOSE, LOG_OP_SEEK, LOG_OP_SYNC, LOG_OP_STAT,
					   LOG_OP_META, LOG_OP_MPI_WRITE /* > 31: escaped */};
	r.record = (uint32_t)(next() % 4);
	r.start = *t + next() % 5000 - (next() % 50 == 0 ? 20000 : 0); /* now and then backwards */
	uint64_t dur = next() % 100000;
	r.end = r.start + dur;
	r.busy = r.min = dur;
	r.count = 1;
	if (kind < 7) {
		r.op = next() % 2 ? LOG_OP_WRITE : LOG_OP_READ;
		r.size = kind < 4 ? 4096 : next() % 70000;
		if (kind == 0)
			*off += r.size; /* contiguous */
		else if (kind < 4)
			*off = (next() % 100000) * 4096; /* aligned random */
		else if (kind == 6 && next() % 20 == 0)
			*off = UINT64_MAX / 2 + next() % 1000; /* near 2^63: written whole */
		else
			*off = next() % (1ull << 40);
		r.offset = *off;
		if (kind == 0 && next() % 3 == 0) {
			r.count = 2 + next() % 5000;
			r.busy = dur / 2 + next() % 100;
			r.min = next() % (r.busy + 1);
			*off += r.size * (r.count - 1);
		}
		if (next() % 40 == 0) {
			r.result = -(int64_t)(1 + next() % 130);
			r.size = 0;
			r.count = 1;
			r.busy = r.min = dur;
		}
	} else {
		r.op = meta_ops[next() % sizeof meta_ops];
		r.offset = UINT64_MAX;
		if (next() % 10 == 0)
			r.result = -(int64_t)(1 + next() % 130);
	}
	*t = r.end > *t ? r.end : *t;
	return r;
}

static int same(const struct log_trace_run *a, const struct log_trace_run *b)
{
	return a->start == b->start && a->end == b->end && a->busy == b->busy && a->min == b->min &&
	       a->offset == b->offset && a->size == b->size && a->result == b->result && a->count == b->count &&
	       a->record == b->record && a->op == b->op;
}

#define N 200000

static void test_roundtrip(void)
{
	static struct log_trace_run runs[N];
	static uint8_t buf[N * LOG_TRACE_ENTRY_MAX];
	struct log_trace_ctx c;
	log_trace_ctx_reset(&c);
	uint64_t t = 1000000000000ull, off = 0;
	size_t pos = 0, maxlen = 0;
	for (int i = 0; i < N; i++) {
		runs[i] = make_run(&t, &off);
		size_t k = log_trace_encode(&c, &runs[i], buf + pos);
		if (k > maxlen)
			maxlen = k;
		pos += k;
	}
	CHECK_EQ("no entry longer than LOG_TRACE_ENTRY_MAX", 1, maxlen <= LOG_TRACE_ENTRY_MAX);
	log_trace_ctx_reset(&c);
	size_t at = 0;
	int good = 0;
	for (int i = 0; i < N; i++) {
		struct log_trace_run r;
		size_t k = log_trace_decode(&c, buf + at, pos - at, &r);
		if (!k || !same(&r, &runs[i])) {
			printf("# entry %d differs (k %zu, op %u/%u offset %llu/%llu)\n", i, k, r.op, runs[i].op,
			       (unsigned long long)r.offset, (unsigned long long)runs[i].offset);
			break;
		}
		at += k;
		good++;
	}
	CHECK_EQ("200000 mixed entries decode exactly", N, good);
	CHECK_EQ("decoding consumes exactly the encoded bytes", pos, at);

	/* every prefix of the first 300 entries: a decode never reads past its input and never
	 * yields an entry that was not encoded */
	size_t end300 = 0;
	log_trace_ctx_reset(&c);
	for (int i = 0; i < 300; i++) {
		struct log_trace_run r;
		end300 += log_trace_decode(&c, buf + end300, pos - end300, &r);
	}
	int bad = 0;
	for (size_t cut = 0; cut <= end300; cut++) {
		log_trace_ctx_reset(&c);
		size_t a = 0;
		int i = 0;
		for (;;) {
			struct log_trace_run r;
			size_t k = log_trace_decode(&c, buf + a, cut - a, &r);
			if (!k)
				break;
			if (a + k > cut || !same(&r, &runs[i]))
				bad++;
			a += k;
			i++;
		}
	}
	CHECK_EQ("every prefix decodes to a prefix of the entries", 0, bad);

	/* every single-byte change in the first 2000 bytes: decoding stops or goes on, but never
	 * reads past the input (run under ASan by make test-san) */
	static uint8_t copy[4096];
	size_t span = pos < 2000 ? pos : 2000;
	int runaway = 0;
	for (size_t b = 0; b < span; b++) {
		memcpy(copy, buf, span);
		copy[b] ^= (uint8_t)(1u << (b % 8));
		log_trace_ctx_reset(&c);
		size_t a = 0;
		for (;;) {
			struct log_trace_run r;
			size_t k = log_trace_decode(&c, copy + a, span - a, &r);
			if (!k)
				break;
			if (a + k > span || r.op == 0 || r.op >= LOG_NOPS)
				runaway++;
			a += k;
		}
	}
	CHECK_EQ("flipped bits never decode past the input or to a bad op", 0, runaway);
}

static void test_sizes(void)
{
	struct log_trace_ctx c;
	uint8_t b[LOG_TRACE_ENTRY_MAX];
	log_trace_ctx_reset(&c);
	struct log_trace_run r = {.op = LOG_OP_WRITE, .record = 3, .offset = 0, .size = 4096, .count = 1,
				  .start = 5000, .end = 6000, .busy = 1000, .min = 1000};
	log_trace_encode(&c, &r, b);
	r.offset = 409600; /* aligned random, same file and size */
	r.start = 6500;
	r.end = 7800;
	/* tag, offset 99 blocks on (2), gap 500 zigzagged (2), duration 1300 (2) */
	CHECK_EQ("aligned 4 KiB write on the same file: 7 bytes", 7, log_trace_encode(&c, &r, b));
	r.offset = 409600 + 4096;
	r.start = 7900;
	r.end = 8000;
	/* tag, offset "next" (1), gap 100 (2), duration 100 (1) */
	CHECK_EQ("the next block, a short call: 5 bytes", 5, log_trace_encode(&c, &r, b));
	struct log_trace_run m = {.op = LOG_OP_CLOSE, .record = 3, .offset = UINT64_MAX, .count = 1, .start = 8100,
				  .end = 8200, .busy = 100, .min = 100};
	/* tag, gap (2), duration (1) */
	CHECK_EQ("close of the same file: 4 bytes", 4, log_trace_encode(&c, &m, b));
	struct log_trace_run s = {.op = LOG_OP_WRITE, .record = 3, .offset = 413696 + 4096, .size = 4096,
				  .count = 1000000, .start = 9000, .end = 5000000000ull, .busy = 4000000000ull,
				  .min = 3000};
	/* tag, flags, offset (1), gap 800 (2), span 5e9 (5), count (3), busy 4e9 (5), min 3000 (2) */
	CHECK_EQ("a run of a million calls: 20 bytes", 20, log_trace_encode(&c, &s, b));
}

int main(void)
{
	test_roundtrip();
	test_sizes();
	return failures ? 1 : 0;
}
