/* SPDX-License-Identifier: MIT */
/*
 * Trace mode: every recorded call becomes an entry of its thread's block in the live file's
 * TRACE section (format.h, docs/FORMAT.md "Trace"). A thread owns its block, so nothing here
 * takes a lock or makes a system call except when a block is claimed (one atomic add, and a
 * gettid the first time). A call that continues the open run (same file, op and size, the next
 * offset) costs a compare and four stores; any other call encodes the run it closes (a few
 * dozen instructions) and opens a new one. Claiming a block also asks the kernel to map its
 * pages at once (one madvise per 32 KiB of entries). Everything lives in the shared mapping, the
 * open run included, so a SIGKILL loses nothing that was recorded.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "capture/core.h"
#include "log/trace.h"

struct cap_trace_tls {
	struct log_trace_block *blk; /* the block this thread appends to; NULL before its first call */
	struct log_trace_ctx ctx;    /* the encoder's context in that block */
	uint64_t dropped;            /* calls this thread could not trace */
	uint32_t seq;                /* sequence number of the next block it claims */
	int32_t tid;
	int busy;                    /* inside cap_trace_note: a signal handler's call is dropped */
	int full;                    /* no block was left: stop trying to claim one */
};
static __thread struct cap_trace_tls tt __attribute__((tls_model("initial-exec")));

static inline uint8_t *payload(struct log_trace_block *b)
{
	return (uint8_t *)b + sizeof *b;
}

/* A fresh block for this thread, or NULL when the area is used up. */
static struct log_trace_block *claim(void)
{
	if (tt.full)
		return NULL;
	uint64_t k = __atomic_fetch_add(&cap.hdr->trace_blocks, 1, __ATOMIC_RELAXED);
	if (k >= cap.trace_nblocks) {
		tt.full = 1;
		return NULL;
	}
	if (!tt.tid)
		tt.tid = (int32_t)gettid();
	struct log_trace_block *b = (struct log_trace_block *)(cap.trace_base + k * LOG_TRACE_BLOCK);
	b->pid = cap.hdr->pid;
	b->tid = tt.tid;
	b->seq = tt.seq++;
	b->size = LOG_TRACE_BLOCK - (uint32_t)sizeof *b;
	b->dropped = tt.dropped;
	log_trace_ctx_reset(&tt.ctx);
	__atomic_store_n(&b->magic, LOG_TRACE_MAGIC, __ATOMIC_RELEASE);
	/* The block's other pages in one call here, off the common path, instead of a page fault
	 * per 4 KiB of entries on it (measured: 25 ns per call less when every call closes a run).
	 * Kernels before 5.14 refuse the advice; the faults then happen as before. */
	madvise((char *)b + 4096, LOG_TRACE_BLOCK - 4096, MADV_POPULATE_WRITE);
	return b;
}

static void drop(uint64_t n)
{
	tt.dropped += n;
	if (tt.blk)
		tt.blk->dropped = tt.dropped;
	else
		__atomic_fetch_add(&cap.hdr->trace_dropped, n, __ATOMIC_RELAXED);
}

/* Close the open run of b: encode it into b, or into a new block when b is full. Returns the
 * block the next run opens in. */
static struct log_trace_block *close_run(struct log_trace_block *b)
{
	struct log_trace_run *o = &b->open;
	if (b->used + LOG_TRACE_ENTRY_MAX <= b->size) {
		size_t n = log_trace_encode(&tt.ctx, o, payload(b) + b->used);
		__atomic_store_n(&b->used, b->used + (uint32_t)n, __ATOMIC_RELEASE);
		return b;
	}
	struct log_trace_block *nb = claim();
	if (!nb) {
		drop(o->count);
		o->count = 0;
		return b; /* the next run still opens here: the header holds it */
	}
	size_t n = log_trace_encode(&tt.ctx, o, payload(nb));
	__atomic_store_n(&nb->used, (uint32_t)n, __ATOMIC_RELEASE);
	/* Only after the run is in the new block: a reader takes the open run of a thread's
	 * latest block only, so a kill between the two stores cannot count it twice. */
	__atomic_store_n(&b->open_at, UINT32_MAX, __ATOMIC_RELEASE);
	tt.blk = nb;
	return nb;
}

void cap_trace_note(const struct log_record *rec, unsigned op, uint64_t off, uint64_t size, int64_t result,
		    uint64_t t0, uint64_t t1)
{
	if (CAP_UNLIKELY(tt.busy)) {
		drop(1);
		return;
	}
	tt.busy = 1;
	struct log_trace_block *b = tt.blk;
	if (CAP_UNLIKELY(!b)) {
		b = tt.blk = claim();
		if (!b) {
			drop(1);
			tt.busy = 0;
			return;
		}
	}
	uint32_t ri = (uint32_t)(rec - cap.records);
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
		tt.busy = 0;
		return;
	}
	if (open)
		b = close_run(b);
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
	tt.busy = 0;
}

/* The child of fork: its one thread starts over in the child's own live file. */
void cap_trace_after_fork(void)
{
	tt = (struct cap_trace_tls){0};
}

unsigned cap_meta_op(enum log_counter which)
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

void cap_trace_meta_slow(const struct log_record *rec, enum log_counter which, int failed, uint64_t t0, uint64_t t1)
{
	int e = errno;
	cap_trace_note(rec, cap_meta_op(which), UINT64_MAX, 0, failed ? -(int64_t)(e ? e : EIO) : 0, t0, t1);
	errno = e;
}
