/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the per-access record logic (src/log/record.h): counts, bytes, furthest offset,
 * sequential and consecutive detection, switches, alignment, histograms, common sizes and
 * strides, times — exact values; then the same updates from four threads in locked mode, which
 * must lose nothing (this program is also built with -fsanitize=thread by `make test-tsan`).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/record.h"

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

static uint64_t common_count(const struct log_common *s, int64_t v)
{
	uint64_t n = 0;
	for (int i = 0; i < LOG_COMMON_SLOTS; i++)
		if (s[i].count && s[i].value == v)
			n += s[i].count;
	return n;
}

static void test_sequential(int mt)
{
	static struct log_record r;
	memset(&r, 0, sizeof r);
	/* 10 writes of 4096 B at 0, 4096, ... ; then 10 reads of the same; then one read at 0 of 0 B */
	for (int i = 0; i < 10; i++)
		log_note_access(&r, LOG_KIND_WRITE, (uint64_t)i * 4096, 4096, 0x1000, 100 + i, 110 + i, 4096, 8, mt);
	for (int i = 0; i < 10; i++)
		log_note_access(&r, LOG_KIND_READ, (uint64_t)i * 4096, 4096, 0x1003, 200 + i, 205 + i, 4096, 8, mt);
	log_note_access(&r, LOG_KIND_READ, 40960, 0, 0x1000, 300, 301, 4096, 8, mt);
	const uint64_t *c = r.counters;
	char n[64];
#define NAME(s) (snprintf(n, sizeof n, "%s%s", s, mt ? " (locked)" : ""), n)
	CHECK_EQ(NAME("writes"), 10, c[LOG_C_WRITES]);
	CHECK_EQ(NAME("reads"), 11, c[LOG_C_READS]);
	CHECK_EQ(NAME("bytes_written"), 40960, c[LOG_C_BYTES_WRITTEN]);
	CHECK_EQ(NAME("bytes_read"), 40960, c[LOG_C_BYTES_READ]);
	CHECK_EQ(NAME("max_write_end"), 40960, c[LOG_C_MAX_WRITE_END]);
	CHECK_EQ(NAME("max_read_end"), 40960, c[LOG_C_MAX_READ_END]);
	CHECK_EQ(NAME("seq_writes: first has no predecessor"), 9, c[LOG_C_SEQ_WRITES]);
	CHECK_EQ(NAME("consec_writes"), 9, c[LOG_C_CONSEC_WRITES]);
	CHECK_EQ(NAME("seq_reads: incl. the 0-byte read at the end"), 10, c[LOG_C_SEQ_READS]);
	CHECK_EQ(NAME("consec_reads"), 10, c[LOG_C_CONSEC_READS]);
	CHECK_EQ(NAME("rw_switches"), 1, c[LOG_C_RW_SWITCHES]);
	CHECK_EQ(NAME("file_not_aligned"), 0, c[LOG_C_FILE_NOT_ALIGNED]);
	CHECK_EQ(NAME("mem_not_aligned: the 10 reads into 0x1003"), 10, c[LOG_C_MEM_NOT_ALIGNED]);
	CHECK_EQ(NAME("write_hist[13] (4096 B)"), 10, r.write_hist[13]);
	CHECK_EQ(NAME("read_hist[13]"), 10, r.read_hist[13]);
	CHECK_EQ(NAME("read_hist[0] (0 B)"), 1, r.read_hist[0]);
	CHECK_EQ(NAME("common size 4096"), 20, common_count(r.sizes, 4096));
	CHECK_EQ(NAME("common size 0"), 1, common_count(r.sizes, 0));
	CHECK_EQ(NAME("stride 4096 (writes 9, reads 10)"), 19, common_count(r.strides, 4096));
	CHECK_EQ(NAME("time_write"), 100, c[LOG_C_TIME_WRITE]);
	CHECK_EQ(NAME("time_read"), 51, c[LOG_C_TIME_READ]);
	CHECK_EQ(NAME("write_first"), 100, c[LOG_C_WRITE_FIRST]);
	CHECK_EQ(NAME("write_last"), 119, c[LOG_C_WRITE_LAST]);
	CHECK_EQ(NAME("read_first"), 200, c[LOG_C_READ_FIRST]);
	CHECK_EQ(NAME("read_last"), 301, c[LOG_C_READ_LAST]);
	CHECK_EQ(NAME("slowest_write_time"), 10, c[LOG_C_SLOWEST_WRITE_TIME]);
	CHECK_EQ(NAME("slowest_write_size"), 4096, c[LOG_C_SLOWEST_WRITE_SIZE]);
#undef NAME
}

static void test_patterns(void)
{
	static struct log_record r;
	memset(&r, 0, sizeof r);
	/* backwards, strided and overlapping writes */
	log_note_access(&r, LOG_KIND_WRITE, 8192, 100, 0, 1, 2, 4096, 8, 0);
	log_note_access(&r, LOG_KIND_WRITE, 0, 100, 0, 3, 4, 4096, 8, 0);    /* backwards: not seq */
	log_note_access(&r, LOG_KIND_WRITE, 1000, 100, 0, 5, 6, 4096, 8, 0); /* gap: seq, not consec */
	log_note_access(&r, LOG_KIND_WRITE, 1100, 100, 0, 7, 8, 4096, 8, 0); /* consec */
	log_note_access(&r, LOG_KIND_WRITE, 1150, 10, 0, 9, 9, 4096, 8, 0);  /* overlap: not seq */
	CHECK_EQ("patterns: seq_writes", 2, r.counters[LOG_C_SEQ_WRITES]);
	CHECK_EQ("patterns: consec_writes", 1, r.counters[LOG_C_CONSEC_WRITES]);
	CHECK_EQ("patterns: file_not_aligned", 3, r.counters[LOG_C_FILE_NOT_ALIGNED]);
	CHECK_EQ("patterns: max_write_end", 8292, r.counters[LOG_C_MAX_WRITE_END]);
	CHECK_EQ("patterns: stride -8192", 1, common_count(r.strides, -8192));
	CHECK_EQ("patterns: stride 1000", 1, common_count(r.strides, 1000));
	CHECK_EQ("patterns: stride 100", 1, common_count(r.strides, 100));
	CHECK_EQ("patterns: stride 50", 1, common_count(r.strides, 50));
	CHECK_EQ("patterns: size 100", 4, common_count(r.sizes, 100));
	CHECK_EQ("patterns: write_hist[7] (64-127 B)", 4, r.write_hist[7]);
	CHECK_EQ("patterns: write_hist[4] (8-15 B)", 1, r.write_hist[4]);
	/* more distinct sizes than slots: the rest is counted, not dropped */
	memset(&r, 0, sizeof r);
	for (int i = 1; i <= LOG_COMMON_SLOTS + 5; i++)
		log_note_access(&r, LOG_KIND_READ, 0, (uint64_t)i, 0, 0, 0, 4096, 8, 0);
	CHECK_EQ("common sizes: overflow counted", 5, r.sizes_other);
	CHECK_EQ("common sizes: slot of size 1", 1, common_count(r.sizes, 1));
	/* histogram edges */
	CHECK_EQ("bucket(0)", 0, log_hist_bucket(0));
	CHECK_EQ("bucket(1)", 1, log_hist_bucket(1));
	CHECK_EQ("bucket(4095)", 12, log_hist_bucket(4095));
	CHECK_EQ("bucket(4096)", 13, log_hist_bucket(4096));
	CHECK_EQ("bucket(1 GiB - 1)", 30, log_hist_bucket((1ull << 30) - 1));
	CHECK_EQ("bucket(1 GiB)", 31, log_hist_bucket(1ull << 30));
	CHECK_EQ("bucket(2^63)", 31, log_hist_bucket(1ull << 63));
}

static void test_meta(void)
{
	static struct log_record r;
	memset(&r, 0, sizeof r);
	log_note_meta(&r, LOG_C_OPENS, 10, 15, 0);
	log_note_meta(&r, LOG_C_OPENS, 20, 22, 0);
	log_note_meta(&r, LOG_C_CLOSES, 30, 31, 0);
	log_note_meta(&r, LOG_C_STATS, 40, 44, 0);
	CHECK_EQ("meta: opens", 2, r.counters[LOG_C_OPENS]);
	CHECK_EQ("meta: time_meta", 12, r.counters[LOG_C_TIME_META]);
	CHECK_EQ("meta: open_first", 10, r.counters[LOG_C_OPEN_FIRST]);
	CHECK_EQ("meta: open_last", 22, r.counters[LOG_C_OPEN_LAST]);
	CHECK_EQ("meta: close_first", 30, r.counters[LOG_C_CLOSE_FIRST]);
	CHECK_EQ("meta: stats", 1, r.counters[LOG_C_STATS]);
}

#define MT_THREADS 4
#define MT_OPS 50000
static struct log_record shared;

static void *mt_worker(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg * MT_OPS * 100;
	for (uint64_t i = 0; i < MT_OPS; i++) {
		log_note_access(&shared, (i & 1) ? LOG_KIND_READ : LOG_KIND_WRITE, base + i * 100, 100, 0, i, i + 1,
				4096, 8, 1);
		if (i % 1000 == 0)
			log_note_meta(&shared, LOG_C_SEEKS, i, i + 2, 1);
	}
	return NULL;
}

static void test_threads(void)
{
	pthread_t t[MT_THREADS];
	memset(&shared, 0, sizeof shared);
	for (uintptr_t i = 0; i < MT_THREADS; i++)
		pthread_create(&t[i], NULL, mt_worker, (void *)i);
	for (int i = 0; i < MT_THREADS; i++)
		pthread_join(t[i], NULL);
	const uint64_t *c = shared.counters;
	CHECK_EQ("threads: writes", MT_THREADS * MT_OPS / 2, c[LOG_C_WRITES]);
	CHECK_EQ("threads: reads", MT_THREADS * MT_OPS / 2, c[LOG_C_READS]);
	CHECK_EQ("threads: bytes", (uint64_t)MT_THREADS * MT_OPS * 100, c[LOG_C_BYTES_READ] + c[LOG_C_BYTES_WRITTEN]);
	CHECK_EQ("threads: write_hist[7]", MT_THREADS * MT_OPS / 2, shared.write_hist[7]);
	CHECK_EQ("threads: common size 100", (uint64_t)MT_THREADS * MT_OPS, common_count(shared.sizes, 100));
	CHECK_EQ("threads: seeks", MT_THREADS * (MT_OPS / 1000), c[LOG_C_SEEKS]);
	CHECK_EQ("threads: time_meta", 2 * MT_THREADS * (MT_OPS / 1000), c[LOG_C_TIME_META]);
	CHECK_EQ("threads: time_write+time_read", (uint64_t)MT_THREADS * MT_OPS,
		 c[LOG_C_TIME_WRITE] + c[LOG_C_TIME_READ]);
	CHECK_EQ("threads: max_write_end", (uint64_t)(MT_THREADS - 1) * MT_OPS * 100 + (MT_OPS - 2) * 100 + 100,
		 c[LOG_C_MAX_WRITE_END]);
}

int main(void)
{
	test_sequential(0);
	test_sequential(1);
	test_patterns();
	test_meta();
	test_threads();
	return failures ? 1 : 0;
}
