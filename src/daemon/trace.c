/* SPDX-License-Identifier: MIT */
/*
 * Runs of traced processes (trace.h): a live file's TRACE area decoded a block at a time, and a
 * final log's trace from where the live file left off.
 */
#include "daemon/trace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/trace.h"
#include "sys/sorted.h"
#include "sys/text.h"

#define PAYLOAD (LOG_TRACE_BLOCK - sizeof(struct log_trace_block))
#define SCAN_MAX 4096   /* new blocks looked at per interval: 128 MiB of trace */
#define PENDING_MAX 64  /* claimed blocks whose header is not made yet, looked at again */

struct tblk {
	uint64_t k;   /* its index in the area */
	uint32_t seq; /* its place in the thread's claims */
};

struct tthr {
	int32_t tid;
	struct tblk *b; /* in claim order */
	size_t nb, capb;
	size_t cur;     /* the block being decoded */
	uint32_t at;    /* its bytes decoded */
	struct log_trace_ctx ctx;
	uint64_t decoded; /* runs decoded from the thread's start (taken or skipped as taken before) */
	int open_done;
};

struct dmn_trace {
	struct tthr *t; /* sorted by tid */
	size_t nt, capt;
	uint64_t scanned; /* blocks [0, scanned) looked at, the pending ones apart */
	uint64_t pending[PENDING_MAX];
	unsigned npending;
};

void dmn_trace_free(struct dmn_trace *tr)
{
	if (!tr)
		return;
	for (size_t i = 0; i < tr->nt; i++)
		free(tr->t[i].b);
	free(tr->t);
	free(tr);
}

static int thread_before(const void *elem, const void *key)
{
	return ((const struct tthr *)elem)->tid < *(const int32_t *)key;
}

static struct tthr *thread_get(struct dmn_trace *tr, int32_t tid)
{
	size_t lo = sys_lower_bound(tr->t, tr->nt, sizeof *tr->t, &tid, thread_before);
	if (lo < tr->nt && tr->t[lo].tid == tid)
		return &tr->t[lo];
	struct tthr *nv = sys_text_grow(tr->t, &tr->capt, tr->nt, sizeof *nv, 8);
	if (!nv)
		return NULL;
	tr->t = nv;
	memmove(&tr->t[lo + 1], &tr->t[lo], (tr->nt - lo) * sizeof *tr->t);
	memset(&tr->t[lo], 0, sizeof tr->t[lo]);
	tr->t[lo].tid = tid;
	log_trace_ctx_reset(&tr->t[lo].ctx);
	tr->nt++;
	return &tr->t[lo];
}

static int read_block_header(const struct dmn_trace_area *ta, uint64_t k, struct log_trace_block *bh)
{
	return dmn_pread(ta->fd, bh, sizeof *bh, ta->off + k * LOG_TRACE_BLOCK);
}

static void say(char *warn, size_t warnlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *warn, size_t warnlen, const char *fmt, ...)
{
	if (!warn || !warnlen || warn[0])
		return; /* the first problem is the one said */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(warn, warnlen, fmt, ap);
	va_end(ap);
}

/* Block k joins its thread: 1, or 0 when its header is not made yet, -1 when it is not a block of
 * this process's (said), -ENOMEM. */
static int add_block(struct dmn_trace *tr, const struct dmn_trace_area *ta, uint64_t k, char *warn, size_t warnlen)
{
	struct log_trace_block bh;
	if (read_block_header(ta, k, &bh) < 0 || bh.magic == 0)
		return 0;
	if (bh.magic != LOG_TRACE_MAGIC || bh.pid != ta->h.pid || bh.tid <= 0) {
		say(warn, warnlen, "trace block %llu is not a block of pid %d: skipped", (unsigned long long)k,
		    (int)ta->h.pid);
		return -1;
	}
	struct tthr *t = thread_get(tr, bh.tid);
	if (!t)
		return -ENOMEM;
	/* a thread claims its blocks one after another and makes each one's header before it
	 * claims the next: a block out of that order is not the writer's */
	if (t->nb && bh.seq <= t->b[t->nb - 1].seq) {
		say(warn, warnlen, "trace block %llu (tid %d) is out of its thread's order: skipped", (unsigned long long)k,
		    (int)bh.tid);
		return -1;
	}
	struct tblk *nv = sys_text_grow(t->b, &t->capb, t->nb, sizeof *nv, 4);
	if (!nv)
		return -ENOMEM;
	t->b = nv;
	t->b[t->nb++] = (struct tblk){k, bh.seq};
	return 1;
}

/* The blocks claimed since the last look (and those whose header was not made then). */
static int scan_blocks(struct dmn_trace *tr, const struct dmn_trace_area *ta, char *warn, size_t warnlen)
{
	uint64_t claimed = ta->h.trace_blocks < ta->count ? ta->h.trace_blocks : ta->count;
	uint64_t fits = (ta->fsize - ta->off) / LOG_TRACE_BLOCK;
	if (claimed > fits)
		claimed = fits;
	unsigned keep = 0;
	for (unsigned i = 0; i < tr->npending; i++) {
		int r = add_block(tr, ta, tr->pending[i], warn, warnlen);
		if (r == -ENOMEM)
			return r;
		if (r == 0)
			tr->pending[keep++] = tr->pending[i];
	}
	tr->npending = keep;
	for (unsigned n = 0; tr->scanned < claimed && n < SCAN_MAX; n++, tr->scanned++) {
		int r = add_block(tr, ta, tr->scanned, warn, warnlen);
		if (r == -ENOMEM)
			return r;
		/* a block still being claimed: looked at again; a thread that died claiming it
		 * leaves it empty for good, and once the list is full such blocks are let go */
		if (r == 0 && tr->npending < PENDING_MAX)
			tr->pending[tr->npending++] = tr->scanned;
	}
	return 0;
}

static int slot_before(const void *elem, const void *key)
{
	return *(const uint32_t *)elem < *(const uint32_t *)key;
}

/* The index in lf->records of the record in slot, or UINT32_MAX. */
static uint32_t record_of(const struct log_file *lf, uint32_t slot)
{
	if (!lf->record_slots)
		return UINT32_MAX;
	size_t lo = sys_lower_bound(lf->record_slots, lf->nrecords, sizeof *lf->record_slots, &slot, slot_before);
	return lo < lf->nrecords && lf->record_slots[lo] == slot ? lo : UINT32_MAX;
}

struct take {
	const struct dmn_trace_area *ta;
	const struct log_file *lf;
	struct dmn_cursor *c;
	int final;
	uint64_t max, taken;
	dmn_run_fn fn;
	void *ctx;
};

/* One decoded run, the idx-th of thread t: taken when not taken before. 0 (taken, or skipped),
 * 1 (not now: its record is not in lf yet), or <0. */
static int take_run(struct take *k, int32_t tid, const struct log_trace_run *r, uint64_t idx)
{
	if (idx < dmn_cursor_taken(k->c, tid))
		return 0;
	uint32_t rec = record_of(k->lf, r->record);
	if (rec == UINT32_MAX && !k->final)
		return 1; /* a file opened after its records were read: next time */
	if (rec != UINT32_MAX) {
		struct log_trace_entry e;
		log_trace_entry_of(&k->ta->h, r, k->ta->h.pid, tid, &e);
		e.record = rec;
		e.layer = (uint8_t)k->lf->records[rec].layer;
		int x = k->fn(k->ctx, k->lf, &e, idx);
		if (x)
			return x;
		k->taken++;
	}
	/* a run naming no record of a process that is gone cannot be placed: passed over */
	return dmn_cursor_set_taken(k->c, tid, idx + 1);
}

/* Thread t's new runs, block after block. 0, or <0. */
static int take_thread(struct take *k, struct tthr *t, char *warn, size_t warnlen)
{
	static __thread unsigned char buf[PAYLOAD];
	const struct dmn_trace_area *ta = k->ta;
	while (t->cur < t->nb) {
		const struct tblk *b = &t->b[t->cur];
		struct log_trace_block bh;
		if (read_block_header(ta, b->k, &bh) < 0)
			return 0;
		if (bh.magic != LOG_TRACE_MAGIC || bh.tid != t->tid || bh.seq != b->seq) {
			say(warn, warnlen, "trace block %llu changed under the reader: the rest of tid %d is skipped",
			    (unsigned long long)b->k, (int)t->tid);
			t->cur = t->nb;
			return 0;
		}
		uint32_t used = bh.used <= PAYLOAD ? bh.used : (uint32_t)PAYLOAD;
		int last = t->cur + 1 == t->nb;
		if (used > t->at) {
			size_t n = used - t->at;
			if (dmn_pread(ta->fd, buf, n, ta->off + b->k * LOG_TRACE_BLOCK + sizeof bh + t->at) < 0)
				return 0;
			size_t pos = 0;
			while (pos < n) {
				if (k->max && k->taken >= k->max)
					return 0;
				struct log_trace_ctx c2 = t->ctx;
				struct log_trace_run r;
				size_t q = log_trace_decode(&c2, buf + pos, n - pos, &r);
				if (!q) {
					say(warn, warnlen, "trace of tid %d, block %llu: byte %u does not decode; the rest of the block is skipped",
					    (int)t->tid, (unsigned long long)b->k, (unsigned)(t->at + pos));
					t->at = used;
					break;
				}
				int x = take_run(k, t->tid, &r, t->decoded);
				if (x < 0)
					return x;
				if (x == 1)
					return 0;
				t->ctx = c2;
				t->decoded++;
				pos += q;
				t->at += (uint32_t)q;
			}
		}
		if (!last) {
			t->cur++;
			t->at = 0;
			log_trace_ctx_reset(&t->ctx);
			continue;
		}
		/* the thread's latest block: its open run once the process is gone */
		if (k->final && !t->open_done && bh.open.count && bh.open_at == bh.used && t->at == used &&
		    bh.open.op != 0 && bh.open.op < LOG_NOPS) {
			int x = take_run(k, t->tid, &bh.open, t->decoded);
			if (x < 0)
				return x;
			t->decoded++;
			t->open_done = 1;
		}
		return 0;
	}
	return 0;
}

int64_t dmn_trace_take_live(struct dmn_trace **tr, const struct dmn_trace_area *ta, const struct log_file *lf,
			    struct dmn_cursor *c, int final, uint64_t max, dmn_run_fn fn, void *ctx, char *warn,
			    size_t warnlen)
{
	if (ta->fd < 0)
		return 0;
	if (!*tr && !(*tr = calloc(1, sizeof **tr)))
		return -ENOMEM;
	int r = scan_blocks(*tr, ta, warn, warnlen);
	if (r < 0)
		return r;
	struct take k = {ta, lf, c, final, max, 0, fn, ctx};
	for (size_t i = 0; i < (*tr)->nt; i++)
		if ((r = take_thread(&k, &(*tr)->t[i], warn, warnlen)) < 0)
			return r;
	return (int64_t)k.taken;
}

int64_t dmn_trace_take_final(const struct log_file *lf, struct dmn_cursor *c, dmn_run_fn fn, void *ctx)
{
	int64_t taken = 0;
	for (uint32_t i = 0; i < lf->ntrace_threads; i++) {
		const struct log_trace_thread *t = &lf->trace_threads[i];
		for (uint64_t j = dmn_cursor_taken(c, t->tid); j < t->n; j++) {
			const struct log_trace_entry *e = &lf->trace[t->first + j];
			if (e->record != UINT32_MAX) {
				int x = fn(ctx, lf, e, j);
				if (x < 0)
					return x;
				taken += x == 0;
			}
			if (dmn_cursor_set_taken(c, t->tid, j + 1) < 0)
				return -ENOMEM;
		}
	}
	return taken;
}
