/* SPDX-License-Identifier: MIT */
/*
 * How one access updates a per-file record: counts, bytes, furthest offset, sequential and
 * consecutive detection, read/write switches, alignment, log2 size histogram, common sizes and
 * strides, time and slowest op. Every capture layer (preload library, mount monitor, kernel
 * collector) calls these so the counters mean the same everywhere.
 *
 * These run on the application's hot path: O(1), no locks, no calls. `mt` selects between
 * locked read-modify-write instructions (several threads may update the record) and plain
 * single-instruction updates; a plain `add` to memory is still atomic with respect to a signal
 * handler on the same thread, which is all a single-threaded process needs.
 */
#ifndef IOSTRATA_LOG_RECORD_H
#define IOSTRATA_LOG_RECORD_H

#include <stdint.h>

#include "iostrata/format.h"

enum { LOG_KIND_READ = 1, LOG_KIND_WRITE = 2 };

static inline __attribute__((always_inline)) void log_add(uint64_t *p, uint64_t v, int mt)
{
	if (mt) {
		__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
	} else {
#if defined(__x86_64__)
		__asm__ volatile("addq %1, %0" : "+m"(*p) : "er"(v));
#else
		__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
	}
}

static inline __attribute__((always_inline)) void log_inc(uint64_t *p, int mt)
{
	log_add(p, 1, mt);
}

static inline __attribute__((always_inline)) uint64_t log_xchg(uint64_t *p, uint64_t v, int mt)
{
	if (mt)
		return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
	uint64_t old = *(volatile uint64_t *)p;
	*(volatile uint64_t *)p = v;
	return old;
}

static inline __attribute__((always_inline)) void log_max(uint64_t *p, uint64_t v, int mt)
{
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
	if (v <= cur)
		return;
	if (!mt) {
		__atomic_store_n(p, v, __ATOMIC_RELAXED);
		return;
	}
	while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* First non-zero timestamp wins. */
static inline __attribute__((always_inline)) void log_first(uint64_t *p, uint64_t v)
{
	if (__atomic_load_n(p, __ATOMIC_RELAXED) == 0) {
		uint64_t zero = 0;
		__atomic_compare_exchange_n(p, &zero, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
}

/*
 * Count value in a small table of (value, count) slots: exact for the first LOG_COMMON_SLOTS
 * distinct values, the rest counted in *other. A slot is claimed by moving its count from 0
 * to 1; a racing thread may see the count before the value and claim a second slot for the
 * same value, which readers merge (they sum equal values).
 */
static inline __attribute__((always_inline)) void log_common_add(struct log_common *s, uint64_t *other,
								 int64_t value, int mt)
{
	for (int i = 0; i < LOG_COMMON_SLOTS; i++) {
		uint64_t c = __atomic_load_n(&s[i].count, __ATOMIC_RELAXED);
		if (c && __atomic_load_n(&s[i].value, __ATOMIC_RELAXED) == value) {
			log_inc(&s[i].count, mt);
			return;
		}
		if (c == 0) {
			if (mt) {
				uint64_t zero = 0;
				if (!__atomic_compare_exchange_n(&s[i].count, &zero, 1, 0, __ATOMIC_RELAXED,
								 __ATOMIC_RELAXED))
					continue;
				__atomic_store_n(&s[i].value, value, __ATOMIC_RELAXED);
			} else {
				__atomic_store_n(&s[i].value, value, __ATOMIC_RELAXED);
				__atomic_store_n(&s[i].count, 1, __ATOMIC_RELAXED);
			}
			return;
		}
	}
	log_inc(other, mt);
}

/*
 * One read or write of len bytes at file offset off, from buffer address mem, that ran from
 * t0 to t1 (clock ticks). file_align and mem_align are powers of two.
 */
static inline __attribute__((always_inline)) void
log_note_access(struct log_record *r, int kind, uint64_t off, uint64_t len, uintptr_t mem, uint64_t t0,
		uint64_t t1, uint64_t file_align, uint64_t mem_align, int mt)
{
	uint64_t *c = r->counters;
	const int w = kind == LOG_KIND_WRITE;
	uint64_t end = off + len;

	log_inc(&c[w ? LOG_C_WRITES : LOG_C_READS], mt);
	log_add(&c[w ? LOG_C_BYTES_WRITTEN : LOG_C_BYTES_READ], len, mt);
	log_inc(w ? &r->write_hist[log_hist_bucket(len)] : &r->read_hist[log_hist_bucket(len)], mt);
	if (len)
		log_max(&c[w ? LOG_C_MAX_WRITE_END : LOG_C_MAX_READ_END], end, mt);

	/* last_*_end holds end + 1 so that 0 means "no previous access" */
	uint64_t prev_end1 = log_xchg(w ? &r->last_write_end : &r->last_read_end, end + 1, mt);
	uint64_t prev_off = log_xchg(w ? &r->last_write_off : &r->last_read_off, off, mt);
	if (prev_end1) {
		if (off >= prev_end1 - 1)
			log_inc(&c[w ? LOG_C_SEQ_WRITES : LOG_C_SEQ_READS], mt);
		if (off == prev_end1 - 1)
			log_inc(&c[w ? LOG_C_CONSEC_WRITES : LOG_C_CONSEC_READS], mt);
		log_common_add(r->strides, &r->strides_other, (int64_t)(off - prev_off), mt);
	}
	uint64_t prev_kind = log_xchg(&r->last_kind, (uint64_t)kind, mt);
	if (prev_kind && prev_kind != (uint64_t)kind)
		log_inc(&c[LOG_C_RW_SWITCHES], mt);
	if (off & (file_align - 1))
		log_inc(&c[LOG_C_FILE_NOT_ALIGNED], mt);
	if (mem & (mem_align - 1))
		log_inc(&c[LOG_C_MEM_NOT_ALIGNED], mt);
	log_common_add(r->sizes, &r->sizes_other, (int64_t)len, mt);

	uint64_t d = t1 - t0;
	log_add(&c[w ? LOG_C_TIME_WRITE : LOG_C_TIME_READ], d, mt);
	log_first(&c[w ? LOG_C_WRITE_FIRST : LOG_C_READ_FIRST], t0);
	log_max(&c[w ? LOG_C_WRITE_LAST : LOG_C_READ_LAST], t1, mt);
	/* time and size of the slowest op are two stores: a racing thread may pair them wrongly,
	 * which costs nothing exact (both are "about the slowest op") */
	if (d > __atomic_load_n(&c[w ? LOG_C_SLOWEST_WRITE_TIME : LOG_C_SLOWEST_READ_TIME], __ATOMIC_RELAXED)) {
		__atomic_store_n(&c[w ? LOG_C_SLOWEST_WRITE_TIME : LOG_C_SLOWEST_READ_TIME], d, __ATOMIC_RELAXED);
		__atomic_store_n(&c[w ? LOG_C_SLOWEST_WRITE_SIZE : LOG_C_SLOWEST_READ_SIZE], len, __ATOMIC_RELAXED);
	}
}

/* A metadata operation (open, close, seek, stat, sync, other): its counter and its time. */
static inline void log_note_meta(struct log_record *r, enum log_counter which, uint64_t t0, uint64_t t1,
				 int mt)
{
	uint64_t *c = r->counters;
	log_inc(&c[which], mt);
	log_add(&c[LOG_C_TIME_META], t1 - t0, mt);
	if (which == LOG_C_OPENS) {
		log_first(&c[LOG_C_OPEN_FIRST], t0);
		log_max(&c[LOG_C_OPEN_LAST], t1, mt);
	} else if (which == LOG_C_CLOSES) {
		log_first(&c[LOG_C_CLOSE_FIRST], t0);
		log_max(&c[LOG_C_CLOSE_LAST], t1, mt);
	}
}

/* 1 when a process image counted something: a counter of one of its n records (every counted
 * call, a failed one too, adds to one), or what its tables could not hold (the header's overflow
 * counters). An image that counted nothing leaves no log at an exec (docs/FORMAT.md, "Forked
 * children that exec"). Not for the hot path. */
static inline int log_image_counted(const struct log_header *h, const struct log_record *r, uint32_t n)
{
	if (h->overflow_opens || h->untracked_ops || h->mmap_table_full || h->aio_table_full || h->trace_blocks ||
	    h->trace_dropped || (h->flags & LOG_F_OVERFLOW))
		return 1;
	for (uint32_t i = 0; i < n; i++)
		for (unsigned c = 0; c < LOG_NCOUNTERS; c++)
			if (r[i].counters[c])
				return 1;
	return 0;
}

#endif
