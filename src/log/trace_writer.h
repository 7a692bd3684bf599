/* SPDX-License-Identifier: MIT */
/*
 * Writing trace blocks into a live log's TRACE section (format.h, docs/FORMAT.md "Trace"): what a
 * writing thread keeps (its block, the encoder's context, its drop count) and how one call is
 * added — extending the open run (same record, op and size, the next offset) or closing it into
 * the block and opening a new one, claiming a fresh block (one atomic add) when the block is full.
 * Every thread owns its block, so nothing here takes a lock. Inline, because the capture library
 * calls it on the application's hot path; the mount monitor uses it too. Callers keep one
 * struct log_trace_writer per thread and guard against re-entry themselves.
 */
#ifndef IOSTRATA_LOG_TRACE_WRITER_H
#define IOSTRATA_LOG_TRACE_WRITER_H

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "iostrata/format.h"
#include "log/trace.h"

/* The TRACE section of a live log. */
struct log_trace_area {
	struct log_header *hdr;
	char *base;       /* the section's first block */
	uint64_t nblocks; /* its capacity in blocks of LOG_TRACE_BLOCK bytes */
};

struct log_trace_writer {
	struct log_trace_block *blk; /* the block this thread appends to; NULL before its first call */
	struct log_trace_ctx ctx;    /* the encoder's context in that block */
	uint64_t dropped;            /* calls this thread could not trace */
	uint32_t seq;                /* sequence number of the next block it claims */
	int32_t tid;
	int busy;                    /* for the caller's re-entry guard */
	int full;                    /* no block was left: stop trying to claim one */
};

static inline uint8_t *log_trace_payload(struct log_trace_block *b)
{
	return (uint8_t *)b + sizeof *b;
}

/* A fresh block for w, or NULL when the area is used up. */
static inline struct log_trace_block *log_trace_claim(const struct log_trace_area *a, struct log_trace_writer *w)
{
	if (w->full)
		return NULL;
	uint64_t k = __atomic_fetch_add(&a->hdr->trace_blocks, 1, __ATOMIC_RELAXED);
	if (k >= a->nblocks) {
		w->full = 1;
		return NULL;
	}
	if (!w->tid)
		w->tid = (int32_t)gettid();
	struct log_trace_block *b = (struct log_trace_block *)(a->base + k * LOG_TRACE_BLOCK);
	b->pid = a->hdr->pid;
	b->tid = w->tid;
	b->seq = w->seq++;
	b->size = LOG_TRACE_BLOCK - (uint32_t)sizeof *b;
	b->dropped = w->dropped;
	log_trace_ctx_reset(&w->ctx);
	__atomic_store_n(&b->magic, LOG_TRACE_MAGIC, __ATOMIC_RELEASE);
	/* The block's other pages in one call here, off the common path, instead of a page fault
	 * per 4 KiB of entries on it (measured: 25 ns per call less when every call closes a run).
	 * Kernels before 5.14 refuse the advice; the faults then happen as before. A refusal must
	 * not reach the application's errno: this runs inside its read or write. */
	int e = errno;
	madvise((char *)b + 4096, LOG_TRACE_BLOCK - 4096, MADV_POPULATE_WRITE);
	errno = e;
	return b;
}

static inline void log_trace_drop(const struct log_trace_area *a, struct log_trace_writer *w, uint64_t n)
{
	w->dropped += n;
	if (w->blk)
		w->blk->dropped = w->dropped;
	else
		__atomic_fetch_add(&a->hdr->trace_dropped, n, __ATOMIC_RELAXED);
}

/* Close the open run of b: encode it into b, or into a new block when b is full. Returns the
 * block the next run opens in. */
static inline struct log_trace_block *log_trace_close_run(const struct log_trace_area *a,
							  struct log_trace_writer *w, struct log_trace_block *b)
{
	struct log_trace_run *o = &b->open;
	if (b->used + LOG_TRACE_ENTRY_MAX <= b->size) {
		size_t n = log_trace_encode(&w->ctx, o, log_trace_payload(b) + b->used);
		__atomic_store_n(&b->used, b->used + (uint32_t)n, __ATOMIC_RELEASE);
		return b;
	}
	struct log_trace_block *nb = log_trace_claim(a, w);
	if (!nb) {
		log_trace_drop(a, w, o->count);
		o->count = 0;
		return b; /* the next run still opens here: the header holds it */
	}
	size_t n = log_trace_encode(&w->ctx, o, log_trace_payload(nb));
	__atomic_store_n(&nb->used, (uint32_t)n, __ATOMIC_RELEASE);
	/* Only after the run is in the new block: a reader takes the open run of a thread's
	 * latest block only, so a kill between the two stores cannot count it twice. */
	__atomic_store_n(&b->open_at, UINT32_MAX, __ATOMIC_RELEASE);
	w->blk = nb;
	return nb;
}

/* One call on record slot ri: op, file offset and size (UINT64_MAX and 0 for ops without
 * data), result (0 or -errno), start and end in the log's clock. */
static inline void log_trace_write(const struct log_trace_area *a, struct log_trace_writer *w, uint32_t ri,
				   unsigned op, uint64_t off, uint64_t size, int64_t result, uint64_t t0, uint64_t t1)
{
	struct log_trace_block *b = w->blk;
	if (__builtin_expect(!b, 0)) {
		b = w->blk = log_trace_claim(a, w);
		if (!b) {
			log_trace_drop(a, w, 1);
			return;
		}
	}
	uint64_t d = t1 - t0;
	struct log_trace_run *o = &b->open;
	int data = log_trace_op_has_data(op);
	int open = o->count && b->open_at == b->used;
	if (open && data && result == 0 && size && o->record == ri && o->op == op && o->size == size &&
	    o->result == 0 && off == o->offset + size * o->count) {
		o->count++;
		o->end = t1;
		o->busy += d;
		if (d < o->min)
			o->min = d;
		return;
	}
	if (open)
		b = log_trace_close_run(a, w, b);
	o = &b->open;
	o->start = t0;
	o->end = t1;
	o->busy = o->min = d;
	o->offset = data ? off : UINT64_MAX;
	o->size = data ? size : 0;
	o->result = result;
	o->record = ri;
	o->op = (uint8_t)op;
	o->count = 1;
	__atomic_store_n(&b->open_at, b->used, __ATOMIC_RELEASE);
}

/* The op a metadata counter's call is traced as. */
static inline unsigned log_meta_op(enum log_counter which)
{
	switch (which) {
	case LOG_C_OPENS:
	case LOG_C_ERR_OPENS:
		return LOG_OP_OPEN;
	case LOG_C_CLOSES:
		return LOG_OP_CLOSE;
	case LOG_C_SEEKS:
	case LOG_C_ERR_SEEKS:
		return LOG_OP_SEEK;
	case LOG_C_STATS:
		return LOG_OP_STAT;
	case LOG_C_FSYNCS:
	case LOG_C_ERR_SYNCS:
		return LOG_OP_SYNC;
	case LOG_C_MMAPS:
		return LOG_OP_MMAP;
	default:
		return LOG_OP_META;
	}
}

#endif
