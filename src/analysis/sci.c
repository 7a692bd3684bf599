/* SPDX-License-Identifier: MIT */
/*
 * Two analyses of the unified timeline (timeline.h), both read-only and linear in its events
 * after one sort of a subset: the SCI score of seed 004 (section 4.3.1: per thread, the time its
 * I/O sequences lost against the fastest similar sequence, over the thread's lifetime) and the
 * per-call layer breakdown (per op class and size bucket of user calls: time in the wrapper, in
 * system calls and on the block device, page-cache hits and misses, bytes at each layer).
 * docs/SCI.md defines every figure. Neither builds, changes nor prints the timeline.
 */
#include "analysis/timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iostrata/format.h"

static int is_user_layer(unsigned layer)
{
	return layer == LOG_LAYER_POSIX || layer == LOG_LAYER_STDIO || layer == LOG_LAYER_MPIIO;
}

static uint32_t layer_bit(unsigned layer)
{
	return layer < 32 ? 1u << layer : 0;
}

static uint64_t ev_count(const struct tl_event *e)
{
	return e->count ? e->count : 1;
}

/* Time inside the calls of an event: busy for a run; end - start for one call (kernel events
 * carry only their interval). */
static uint64_t ev_busy(const struct tl_event *e)
{
	if (e->count > 1)
		return e->busy_ns;
	return e->end_ns > e->start_ns ? e->end_ns - e->start_ns : 0;
}

static uint64_t ev_fastest(const struct tl_event *e)
{
	return e->count > 1 ? e->min_ns : ev_busy(e);
}

static uint64_t ev_len(const struct tl_event *e)
{
	return e->end_ns > e->start_ns ? e->end_ns - e->start_ns : 0;
}

/* ---- SCI ---- */

/* An I/O sequence: a top-level event of a thread track in a user layer, or a top-level system
 * call (a thread without a user trace, or a call the user layer did not see). */
static int is_sequence(const struct timeline *tl, const struct tl_event *e)
{
	if (e->parent != TL_NONE || e->track >= tl->ntracks || tl->tracks[e->track].kind != TL_TRACK_THREAD)
		return 0;
	return is_user_layer(e->layer) || e->layer == LOG_LAYER_SYSCALL;
}

static int cmp_track_thread(const void *a, const void *b, void *ctx)
{
	const struct timeline *tl = ctx;
	const struct tl_track *x = &tl->tracks[*(const uint32_t *)a];
	const struct tl_track *y = &tl->tracks[*(const uint32_t *)b];
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return 0;
}

struct nest_item {
	uint32_t thr, ev;
	uint64_t start, end;
	int outer; /* a top-level system call: the container */
};

/* By thread, then start, containers first, longer first: a container precedes what it holds. */
static int cmp_nest(const void *a, const void *b)
{
	const struct nest_item *x = a, *y = b;
	if (x->thr != y->thr)
		return x->thr < y->thr ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->outer != y->outer)
		return x->outer ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

static int cmp_proc_pid(const void *a, const void *b, void *ctx)
{
	const struct timeline *tl = ctx;
	int32_t x = tl->procs[*(const uint32_t *)a].pid, y = tl->procs[*(const uint32_t *)b].pid;
	return x < y ? -1 : x > y;
}

static int cmp_score(const void *a, const void *b)
{
	const struct tl_sci_thread *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (x->slowdown_ns != y->slowdown_ns)
		return x->slowdown_ns > y->slowdown_ns ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Similar sequences: same op, same size bucket, same layer path: 8 + 5 + 16 bits. */
static uint32_t group_key(const struct tl_event *e, uint32_t path)
{
	return ((uint32_t)e->op << 21) | ((uint32_t)log_hist_bucket(e->size) << 16) | (path & 0xffff);
}

struct group_slot {
	uint32_t key;
	uint32_t used;
	uint64_t dmin;
};

/* The slot of key in an open-addressing table of cap (a power of two) slots. */
static struct group_slot *group_find(struct group_slot *tab, size_t cap, uint32_t key)
{
	uint32_t h = key; /* murmur3's finalizer: the path mask alone would fill the low bits */
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	size_t i = h & (cap - 1);
	while (tab[i].used && tab[i].key != key)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

struct thr_acc {
	int32_t pid, tid;
	uint64_t ios, slowdown, first, last;
};

int tl_sci(const struct timeline *tl, struct tl_sci *out)
{
	int rc = -ENOMEM;
	uint32_t *path = NULL, *track_thr = NULL, *order = NULL, *proc_order = NULL;
	struct nest_item *nest = NULL;
	struct group_slot *groups = NULL;
	struct thr_acc *thr = NULL;
	size_t nthr = 0, nnest = 0, nseq = 0;

	if (!tl || !out)
		return -EINVAL;
	memset(out, 0, sizeof *out);
	if (!tl->nev)
		return 0;

	/* Threads: one per (pid, tid) of the thread tracks; a thread has a track per layer. */
	track_thr = malloc((tl->ntracks ? tl->ntracks : 1) * sizeof *track_thr);
	order = malloc((tl->ntracks ? tl->ntracks : 1) * sizeof *order);
	thr = calloc(tl->ntracks ? tl->ntracks : 1, sizeof *thr);
	if (!track_thr || !order || !thr)
		goto err;
	size_t nthreadtracks = 0;
	for (size_t t = 0; t < tl->ntracks; t++) {
		track_thr[t] = TL_NONE;
		if (tl->tracks[t].kind == TL_TRACK_THREAD)
			order[nthreadtracks++] = (uint32_t)t;
	}
	qsort_r(order, nthreadtracks, sizeof *order, cmp_track_thread, (void *)tl);
	for (size_t k = 0; k < nthreadtracks; k++) {
		const struct tl_track *tr = &tl->tracks[order[k]];
		if (!nthr || thr[nthr - 1].pid != tr->pid || thr[nthr - 1].tid != tr->tid) {
			thr[nthr].pid = tr->pid;
			thr[nthr].tid = tr->tid;
			thr[nthr].first = UINT64_MAX;
			nthr++;
		}
		track_thr[order[k]] = (uint32_t)(nthr - 1);
	}

	/* Layer paths: a sequence's own layer and the layers of the kernel events nested under it.
	 * The merge nests kernel events under user calls (parent); under a top-level system call
	 * they are nested here by interval, on the same thread. */
	path = calloc(tl->nev, sizeof *path);
	if (!path)
		goto err;
	for (size_t i = 0; i < tl->nev; i++) {
		const struct tl_event *e = &tl->ev[i];
		if (e->parent != TL_NONE) {
			if (e->parent < tl->nev)
				path[e->parent] |= layer_bit(e->layer);
			continue;
		}
		if (is_sequence(tl, e)) {
			path[i] |= layer_bit(e->layer);
			nseq++;
		}
		if (e->track < tl->ntracks && track_thr[e->track] != TL_NONE && !is_user_layer(e->layer))
			nnest++;
	}
	nest = malloc((nnest ? nnest : 1) * sizeof *nest);
	if (!nest)
		goto err;
	nnest = 0;
	for (size_t i = 0; i < tl->nev; i++) {
		const struct tl_event *e = &tl->ev[i];
		if (e->parent != TL_NONE || e->track >= tl->ntracks || track_thr[e->track] == TL_NONE ||
		    is_user_layer(e->layer))
			continue;
		nest[nnest++] = (struct nest_item){ .thr = track_thr[e->track], .ev = (uint32_t)i,
						    .start = e->start_ns, .end = e->end_ns,
						    .outer = e->layer == LOG_LAYER_SYSCALL };
	}
	qsort(nest, nnest, sizeof *nest, cmp_nest);
	for (size_t k = 0, cur = SIZE_MAX; k < nnest; k++) {
		if (cur != SIZE_MAX && nest[cur].thr != nest[k].thr)
			cur = SIZE_MAX;
		if (nest[k].outer) {
			/* a thread is in one system call at a time; a call inside another stays with the outer */
			if (cur == SIZE_MAX || nest[k].start >= nest[cur].end)
				cur = k;
			continue;
		}
		if (cur != SIZE_MAX && nest[k].start >= nest[cur].start && nest[k].end <= nest[cur].end)
			path[nest[cur].ev] |= layer_bit(tl->ev[nest[k].ev].layer);
	}

	/* D_min per group: the fastest call of any sequence of the group (a run's min). */
	size_t cap = 16;
	while (cap < 2 * nseq)
		cap *= 2;
	groups = calloc(cap, sizeof *groups);
	if (!groups)
		goto err;
	for (size_t i = 0; i < tl->nev; i++) {
		const struct tl_event *e = &tl->ev[i];
		if (!is_sequence(tl, e))
			continue;
		struct group_slot *g = group_find(groups, cap, group_key(e, path[i]));
		uint64_t d = ev_fastest(e);
		if (!g->used) {
			g->used = 1;
			g->key = group_key(e, path[i]);
			g->dmin = d;
		} else if (d < g->dmin) {
			g->dmin = d;
		}
	}

	/* Per thread: slowdown (a run adds busy - count * D_min, exactly the sum over its calls) and
	 * the span of all its events. */
	for (size_t i = 0; i < tl->nev; i++) {
		const struct tl_event *e = &tl->ev[i];
		if (e->track >= tl->ntracks || track_thr[e->track] == TL_NONE)
			continue;
		struct thr_acc *a = &thr[track_thr[e->track]];
		if (e->start_ns < a->first)
			a->first = e->start_ns;
		if (e->end_ns > a->last)
			a->last = e->end_ns;
		if (!is_sequence(tl, e))
			continue;
		uint64_t dmin = group_find(groups, cap, group_key(e, path[i]))->dmin;
		uint64_t n = ev_count(e), busy = ev_busy(e), base;
		if (__builtin_mul_overflow(n, dmin, &base) || base > busy)
			base = busy; /* only a damaged run (busy < count * min) gets here */
		a->ios += n;
		a->slowdown += busy - base;
	}

	/* Lifetime: the process's span for its main thread, when the user log gave one; else the
	 * span of the thread's own events. */
	proc_order = malloc((tl->nprocs ? tl->nprocs : 1) * sizeof *proc_order);
	if (!proc_order)
		goto err;
	for (size_t p = 0; p < tl->nprocs; p++)
		proc_order[p] = (uint32_t)p;
	qsort_r(proc_order, tl->nprocs, sizeof *proc_order, cmp_proc_pid, (void *)tl);

	size_t nout = 0;
	for (size_t t = 0; t < nthr; t++)
		nout += thr[t].ios > 0;
	if (nout) {
		out->threads = calloc(nout, sizeof *out->threads);
		if (!out->threads)
			goto err;
	}
	for (size_t t = 0; t < nthr; t++) {
		const struct thr_acc *a = &thr[t];
		if (!a->ios)
			continue;
		struct tl_sci_thread *o = &out->threads[out->n++];
		o->pid = a->pid;
		o->tid = a->tid;
		o->ios = a->ios;
		o->slowdown_ns = a->slowdown;
		o->lifetime_ns = a->last > a->first ? a->last - a->first : 0;
		if (a->tid == a->pid) {
			size_t lo = 0, hi = tl->nprocs;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (tl->procs[proc_order[mid]].pid < a->pid)
					lo = mid + 1;
				else
					hi = mid;
			}
			/* a process that exec'd is one thread in several images: its life runs from the first
			 * image's start to the last one's end, as its I/O does (else SCI exceeds 1) */
			uint64_t t0 = 0, t1 = 0;
			for (; lo < tl->nprocs && tl->procs[proc_order[lo]].pid == a->pid; lo++) {
				const struct tl_proc *p = &tl->procs[proc_order[lo]];
				if (!p->start_ns || p->end_ns <= p->start_ns)
					continue;
				if (!t0 || p->start_ns < t0)
					t0 = p->start_ns;
				if (p->end_ns > t1)
					t1 = p->end_ns;
			}
			if (t1 > t0 && t1 - t0 > o->lifetime_ns)
				o->lifetime_ns = t1 - t0;
		}
		o->score = o->lifetime_ns ? (double)o->slowdown_ns / (double)o->lifetime_ns : 0.0;
	}
	if (out->n)
		qsort(out->threads, out->n, sizeof *out->threads, cmp_score);
	out->top = out->n ? out->threads[0].score : 0.0;
	rc = 0;
err:
	if (rc)
		tl_sci_free(out);
	free(path);
	free(track_thr);
	free(order);
	free(proc_order);
	free(nest);
	free(groups);
	free(thr);
	return rc;
}

void tl_sci_free(struct tl_sci *s)
{
	if (!s)
		return;
	free(s->threads);
	memset(s, 0, sizeof *s);
}

/* ---- per-call layer breakdown ---- */

enum { CLASS_READ, CLASS_WRITE, CLASS_META, NCLASSES };
static const uint8_t class_op[NCLASSES] = { LOG_OP_READ, LOG_OP_WRITE, LOG_OP_META };

static unsigned op_class(unsigned op)
{
	if (op == LOG_OP_READ || op == LOG_OP_MPI_READ)
		return CLASS_READ;
	if (op == LOG_OP_WRITE || op == LOG_OP_MPI_WRITE)
		return CLASS_WRITE;
	return CLASS_META;
}

static int is_user_call(const struct tl_event *e)
{
	return e->parent == TL_NONE && is_user_layer(e->layer);
}

/* System calls whose result is a byte count (an open's is a descriptor, a seek's an offset). */
static int returns_bytes(unsigned op)
{
	return op == LOG_OP_READ || op == LOG_OP_WRITE || op == LOG_OP_COPY || op == LOG_OP_SENDFILE;
}

/* what the kernel events under a user call said */
enum { NEST_SEEN = 1, NEST_MISS = 2 };

int tl_breakdown(const struct timeline *tl, struct tl_breakdown *out)
{
	int rc = -ENOMEM;
	uint8_t *nested = NULL;
	struct tl_breakdown_row *acc = NULL;

	if (!tl || !out)
		return -EINVAL;
	memset(out, 0, sizeof *out);
	if (!tl->nev)
		return 0;
	acc = calloc(NCLASSES * LOG_HIST_BUCKETS, sizeof *acc);
	nested = calloc(tl->nev, 1);
	if (!acc || !nested)
		goto err;

	/* The kernel events nested under a user call: their time and bytes go to the call's row. */
	for (size_t i = 0; i < tl->nev; i++) {
		const struct tl_event *k = &tl->ev[i];
		if (k->parent == TL_NONE || k->parent >= tl->nev || !is_user_call(&tl->ev[k->parent]))
			continue;
		const struct tl_event *u = &tl->ev[k->parent];
		struct tl_breakdown_row *r = &acc[op_class(u->op) * LOG_HIST_BUCKETS + log_hist_bucket(u->size)];
		uint8_t *seen = &nested[k->parent];
		*seen |= NEST_SEEN;
		if (k->flags & LOG_E_CACHE_MISS)
			*seen |= NEST_MISS;
		switch (k->layer) {
		case LOG_LAYER_SYSCALL:
			r->syscall_ns += ev_len(k);
			if (returns_bytes(k->op) && k->result > 0)
				r->bytes_syscall += (uint64_t)k->result;
			break;
		case LOG_LAYER_PAGECACHE:
			/* Pages the call brought into the cache. Readahead events are not added: the
			 * pages of a readahead window arrive as page_in events too. */
			if (k->op == LOG_OP_PAGE_IN) {
				r->bytes_pagecache += k->size;
				*seen |= NEST_MISS;
			} else if (k->op == LOG_OP_PAGE_ADD_WRITE) {
				r->bytes_pagecache += k->size;
			}
			break;
		case LOG_LAYER_BLOCK:
			r->block_ns += ev_len(k);
			if (k->op == LOG_OP_BLK_READ || k->op == LOG_OP_BLK_WRITE)
				r->bytes_block += k->size;
			if (k->op == LOG_OP_BLK_READ)
				*seen |= NEST_MISS;
			break;
		default:
			break;
		}
	}

	for (size_t i = 0; i < tl->nev; i++) {
		const struct tl_event *u = &tl->ev[i];
		if (!is_user_call(u))
			continue;
		unsigned c = op_class(u->op);
		struct tl_breakdown_row *r = &acc[c * LOG_HIST_BUCKETS + log_hist_bucket(u->size)];
		uint64_t n = ev_count(u);
		r->calls += n;
		r->user_ns += ev_busy(u);
		if (u->result >= 0)
			r->bytes_user += u->size * n;
		/* seed 004's rule, for successful reads the kernel saw: a miss when pages were read in
		 * or the block device read under it, else a hit. A run's calls are alike: all or none. */
		if (c == CLASS_READ && u->result >= 0 && (nested[i] & NEST_SEEN)) {
			if (nested[i] & NEST_MISS)
				r->misses += n;
			else
				r->hits += n;
		}
	}

	size_t nrows = 0;
	for (size_t j = 0; j < NCLASSES * LOG_HIST_BUCKETS; j++)
		nrows += acc[j].calls > 0;
	if (nrows) {
		out->rows = calloc(nrows, sizeof *out->rows);
		if (!out->rows)
			goto err;
	}
	/* op then bucket: the classes are in op order (read 1, write 2, meta 13) */
	for (size_t j = 0; j < NCLASSES * LOG_HIST_BUCKETS; j++) {
		if (!acc[j].calls)
			continue;
		struct tl_breakdown_row *r = &out->rows[out->n++];
		*r = acc[j];
		r->op = class_op[j / LOG_HIST_BUCKETS];
		r->size_bucket = (uint8_t)(j % LOG_HIST_BUCKETS);
	}
	rc = 0;
err:
	if (rc)
		tl_breakdown_free(out);
	free(acc);
	free(nested);
	return rc;
}

void tl_breakdown_free(struct tl_breakdown *b)
{
	if (!b)
		return;
	free(b->rows);
	memset(b, 0, sizeof *b);
}
