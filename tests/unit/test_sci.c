/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of src/analysis/sci.c: the SCI score (seed 004, 4.3.1) and the per-call layer
 * breakdown, on timelines built by hand (tracks, processes and events with parent indices), so
 * that every expected figure is worked out in the comments: the seed's definition on a tiny case,
 * a thread delayed by a known sleep, runs, layer paths that split groups, threads only the kernel
 * saw, an empty timeline, and the breakdown's columns. Output: one "ok - name" / "not ok - name:
 * detail" line per check; exit 1 on failure.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/timeline.h"

#include "check.h"

static void check_u64(const char *name, uint64_t got, uint64_t want)
{
	check(name, got == want, "expected %" PRIu64 ", got %" PRIu64, want, got);
}

static void check_i64(const char *name, int64_t got, int64_t want)
{
	check(name, got == want, "expected %" PRId64 ", got %" PRId64, want, got);
}

static void check_dbl(const char *name, double got, double want, double tol)
{
	check(name, fabs(got - want) <= tol, "expected %.17g, got %.17g", want, got);
}

/* ---- building a timeline by hand ---- */

#define CAP 4096

static struct tl_event evs[CAP];
static struct tl_track tracks[64];
static struct tl_proc procs[16];
static struct timeline tl;

static void tl_reset(void)
{
	memset(&tl, 0, sizeof tl);
	memset(evs, 0, sizeof evs);
	memset(tracks, 0, sizeof tracks);
	memset(procs, 0, sizeof procs);
	tl.ev = evs;
	tl.tracks = tracks;
	tl.procs = procs;
}

static uint32_t track(int pid, int tid, unsigned layer, unsigned kind)
{
	struct tl_track *t = &tracks[tl.ntracks];
	t->pid = pid;
	t->tid = tid;
	t->layer = (uint8_t)layer;
	t->kind = (uint8_t)kind;
	snprintf(t->name, sizeof t->name, "%s", log_layer_name(layer));
	return (uint32_t)tl.ntracks++;
}

static void proc(int pid, uint64_t start, uint64_t end)
{
	struct tl_proc *p = &procs[tl.nprocs++];
	p->pid = pid;
	p->ppid = 1;
	p->start_ns = start;
	p->end_ns = end;
}

/* One call (or one kernel event) on track t, nested under parent. */
static uint32_t ev(uint32_t t, unsigned op, uint64_t start, uint64_t end, uint64_t size, int64_t result,
		   uint32_t parent)
{
	if (tl.nev == CAP) {
		fprintf(stderr, "test timeline full\n");
		exit(2);
	}
	struct tl_event *e = &evs[tl.nev];
	e->start_ns = start;
	e->end_ns = end;
	e->busy_ns = end - start;
	e->min_ns = end - start;
	e->count = 1;
	e->offset = UINT64_MAX;
	e->size = size;
	e->result = result;
	e->pid = tracks[t].pid;
	e->tid = tracks[t].tid;
	e->layer = tracks[t].layer;
	e->op = (uint8_t)op;
	e->file = TL_NONE;
	e->track = t;
	e->parent = parent;
	return (uint32_t)tl.nev++;
}

/* A user-layer run of count calls between start and end. */
static uint32_t run(uint32_t t, unsigned op, uint64_t start, uint64_t end, uint64_t size, uint64_t count,
		    uint64_t busy, uint64_t min)
{
	uint32_t i = ev(t, op, start, end, size, 0, TL_NONE);
	evs[i].count = count;
	evs[i].busy_ns = busy;
	evs[i].min_ns = min;
	evs[i].flags = TL_F_RUN;
	return i;
}

static const struct tl_sci_thread *sci_thread(const struct tl_sci *s, int pid, int tid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->threads[i].pid == pid && s->threads[i].tid == tid)
			return &s->threads[i];
	return NULL;
}

static void check_thread(const char *name, const struct tl_sci *s, int pid, int tid, uint64_t ios,
			 uint64_t slowdown, uint64_t lifetime)
{
	char n[160];
	const struct tl_sci_thread *t = sci_thread(s, pid, tid);
	snprintf(n, sizeof n, "%s: thread %d/%d reported", name, pid, tid);
	check(n, t != NULL, "missing");
	if (!t)
		return;
	snprintf(n, sizeof n, "%s: thread %d/%d ios", name, pid, tid);
	check_u64(n, t->ios, ios);
	snprintf(n, sizeof n, "%s: thread %d/%d slowdown_ns", name, pid, tid);
	check_u64(n, t->slowdown_ns, slowdown);
	snprintf(n, sizeof n, "%s: thread %d/%d lifetime_ns", name, pid, tid);
	check_u64(n, t->lifetime_ns, lifetime);
	snprintf(n, sizeof n, "%s: thread %d/%d score", name, pid, tid);
	check_dbl(n, t->score, lifetime ? (double)slowdown / (double)lifetime : 0.0, 1e-15);
}

/* ---- SCI ---- */

/*
 * Seed 004's definition on a tiny case. Process 10 ran from 1,000,000 to 2,000,000 ns (its main
 * thread's lifetime: 1,000,000). Groups and D_min (all POSIX, no kernel events):
 *   write 4 KiB:  10/10: 100, 150, 400;  10/11: 120, 100   -> D_min 100
 *   read 8 KiB:   10/11: 300, 500                          -> D_min 300
 *   write 1 MiB:  10/10: 5000 (alone)                      -> D_min 5000
 *   write 5 KiB:  10/11: 90; 5120 is in [4096, 8192), bucket 13 like 4096
 * so the 5 KiB write joins the 4 KiB group and becomes its D_min: 90. Then
 *   10/10: (100-90) + (150-90) + (400-90) + 0            = 380, lifetime 1,000,000
 *   10/11: (120-90) + (100-90) + (90-90) + 0 + (500-300) = 240, lifetime = its span
 *          1,100,000 .. 1,301,000 = 201,000
 * The buckets are log2: "similar" is the same op, the same size class and the same layers.
 */
static void test_seed_definition(void)
{
	tl_reset();
	proc(10, 1000000, 2000000);
	uint32_t a = track(10, 10, LOG_LAYER_POSIX, TL_TRACK_THREAD);
	uint32_t b = track(10, 11, LOG_LAYER_POSIX, TL_TRACK_THREAD);
	ev(a, LOG_OP_WRITE, 1100000, 1100100, 4096, 0, TL_NONE);
	ev(a, LOG_OP_WRITE, 1200000, 1200150, 4096, 0, TL_NONE);
	ev(a, LOG_OP_WRITE, 1300000, 1300400, 4096, 0, TL_NONE);
	ev(a, LOG_OP_WRITE, 1400000, 1405000, 1 << 20, 0, TL_NONE);
	ev(b, LOG_OP_WRITE, 1100000, 1100120, 4096, 0, TL_NONE);
	ev(b, LOG_OP_WRITE, 1150000, 1150100, 4096, 0, TL_NONE);
	ev(b, LOG_OP_WRITE, 1160000, 1160090, 5120, 0, TL_NONE);
	ev(b, LOG_OP_READ, 1200000, 1200300, 8192, 0, TL_NONE);
	ev(b, LOG_OP_READ, 1300500, 1301000, 8192, 0, TL_NONE);

	struct tl_sci s;
	int rc = tl_sci(&tl, &s);
	check_i64("seed: tl_sci returns 0", rc, 0);
	check_u64("seed: threads", s.n, 2);
	check_thread("seed", &s, 10, 10, 4, 380, 1000000);
	check_thread("seed", &s, 10, 11, 5, 240, 201000);
	/* 240 / 201000 > 380 / 1000000 */
	check("seed: sorted by score", s.n == 2 && s.threads[0].tid == 11 && s.threads[1].tid == 10,
	      "expected tid 11 then 10");
	check_dbl("seed: top", s.top, 240.0 / 201000.0, 1e-15);
	tl_sci_free(&s);
	check("seed: free clears", s.threads == NULL && s.n == 0, "not cleared");
}

/*
 * Two threads of process 100 (neither is its main thread, so their lifetimes are their spans),
 * each 100 writes of 4 KiB at 10 us, one every 20 us from t = 1 s. Thread 102's 51st write also
 * sleeps 50 ms inside the call, and everything after it comes 50 ms later.
 *   101: slowdown 0, lifetime 99 * 20,000 + 10,000 = 1,990,000
 *   102: slowdown 50,000,000, lifetime 1,990,000 + 50,000,000 = 51,990,000
 */
static void test_delayed_thread(void)
{
	tl_reset();
	proc(100, 1, 10000000000ull);
	uint32_t a = track(100, 101, LOG_LAYER_POSIX, TL_TRACK_THREAD);
	uint32_t b = track(100, 102, LOG_LAYER_POSIX, TL_TRACK_THREAD);
	const uint64_t t0 = 1000000000ull, sleep = 50000000ull;
	for (uint64_t k = 0; k < 100; k++)
		ev(a, LOG_OP_WRITE, t0 + k * 20000, t0 + k * 20000 + 10000, 4096, 0, TL_NONE);
	for (uint64_t k = 0; k < 100; k++) {
		uint64_t s = t0 + k * 20000 + (k > 50 ? sleep : 0);
		ev(b, LOG_OP_WRITE, s, s + 10000 + (k == 50 ? sleep : 0), 4096, 0, TL_NONE);
	}

	struct tl_sci s;
	check_i64("delay: tl_sci returns 0", tl_sci(&tl, &s), 0);
	check_u64("delay: threads", s.n, 2);
	check_thread("delay", &s, 100, 101, 100, 0, 1990000);
	check_thread("delay", &s, 100, 102, 100, sleep, 1990000 + sleep);
	check("delay: delayed thread first", s.n == 2 && s.threads[0].tid == 102, "expected tid 102 first");
	check_dbl("delay: top = 0.05 s / lifetime", s.top, 0.05 / 0.05199, 1e-9);
	check_dbl("delay: undelayed thread scores 0", s.n == 2 ? s.threads[1].score : -1, 0.0, 0.0);
	tl_sci_free(&s);
}

/*
 * A process that exec'd (git clone, tar: a shell image, then the program): pid 400 ran one image
 * from 1,000,000 to 2,000,000 ns and the next from 2,000,000 to 11,000,000 ns, with a slow 4 KiB
 * write in each (D 1,000 and 500,000 against a fastest of 100 in the second image). The thread's
 * life spans both images, 10,000,000 ns, so SCI = (900 + 499,900) / 10,000,000 = 0.05008; taking
 * the first image's life (1,000,000 ns) made it 0.5008, and 50.2 for tar.
 */
static void test_exec_chain(void)
{
	tl_reset();
	proc(400, 1000000, 2000000);
	proc(400, 2000000, 11000000);
	uint32_t a = track(400, 400, LOG_LAYER_POSIX, TL_TRACK_THREAD);
	ev(a, LOG_OP_WRITE, 1500000, 1501000, 4096, 0, TL_NONE);
	ev(a, LOG_OP_WRITE, 3000000, 3000100, 4096, 0, TL_NONE);
	ev(a, LOG_OP_WRITE, 5000000, 5500000, 4096, 0, TL_NONE);

	struct tl_sci s;
	check_i64("exec: tl_sci returns 0", tl_sci(&tl, &s), 0);
	check_thread("exec", &s, 400, 400, 3, 900 + 499900, 10000000);
	check("exec: SCI stays at most 1", s.top <= 1.0, "top %g", s.top);
	tl_sci_free(&s);
}

/*
 * Runs: process 300's main thread (lifetime 1 s from its process) writes a run of 1000 × 4 KiB
 * with busy 10,007,777 ns and fastest call 9,000 ns; thread 301 writes one 4 KiB in 9,500 ns.
 * D_min = 9,000 (the run's min). Run: busy - 1000 × 9,000 = 1,007,777 (the sum over its calls of
 * D - D_min). Thread 301: 500, lifetime 9,500. A second run of 1000 whose min (8,000) is the
 * group's fastest would lower D_min for everyone: checked on a copy.
 */
static void test_runs(void)
{
	tl_reset();
	proc(300, 1000, 1000001000ull);
	uint32_t a = track(300, 300, LOG_LAYER_POSIX, TL_TRACK_THREAD);
	uint32_t b = track(300, 301, LOG_LAYER_POSIX, TL_TRACK_THREAD);
	run(a, LOG_OP_WRITE, 1000, 1000 + 20000000, 4096, 1000, 10007777, 9000);
	ev(b, LOG_OP_WRITE, 5000, 14500, 4096, 0, TL_NONE);

	struct tl_sci s;
	check_i64("runs: tl_sci returns 0", tl_sci(&tl, &s), 0);
	check_thread("runs", &s, 300, 300, 1000, 1007777, 1000000000ull);
	check_thread("runs", &s, 300, 301, 1, 500, 9500);
	tl_sci_free(&s);

	/* thread 301 gets a run of 1000 whose fastest call took 8,000 ns: D_min = 8,000
	 *   300: 10,007,777 - 8,000,000 = 2,007,777
	 *   301: (9,500 - 8,000) + (9,000,000 - 1000 × 8,000) = 1,001,500; span 5,000 .. 20,000,000 */
	run(b, LOG_OP_WRITE, 100000, 20000000, 4096, 1000, 9000000, 8000);
	check_i64("runs: tl_sci returns 0 (2)", tl_sci(&tl, &s), 0);
	check_thread("runs 2", &s, 300, 300, 1000, 2007777, 1000000000ull);
	check_thread("runs 2", &s, 300, 301, 1001, 1001500, 20000000 - 5000);
	tl_sci_free(&s);
}

/*
 * Layer paths split groups. Thread 400/400 (process span 0 .. 10,000,000) reads 4 KiB:
 *   hit path posix -> syscall:                      2,000 and 3,000 ns      D_min 2,000
 *   miss path posix -> syscall -> pagecache -> block: 100,000 and 150,000   D_min 100,000
 *   a run of 10 (posix -> syscall on each call): busy 25,000, min 2,200 -> hit group:
 *                                                  25,000 - 10 × 2,000 = 5,000
 * slowdown = 1,000 + 50,000 + 5,000 = 56,000. One group for all would give
 * 0 + 1,000 + 98,000 + 148,000 + 5,000 = 252,000.
 */
static void test_layer_paths(void)
{
	tl_reset();
	proc(400, 1, 10000001);
	uint32_t u = track(400, 400, LOG_LAYER_POSIX, TL_TRACK_THREAD);
	uint32_t sc = track(400, 400, LOG_LAYER_SYSCALL, TL_TRACK_THREAD);
	uint32_t pc = track(400, 400, LOG_LAYER_PAGECACHE, TL_TRACK_THREAD);
	uint32_t bl = track(400, 400, LOG_LAYER_BLOCK, TL_TRACK_THREAD);
	uint32_t h1 = ev(u, LOG_OP_READ, 1000, 3000, 4096, 4096, TL_NONE);
	uint32_t m1 = ev(u, LOG_OP_READ, 10000, 110000, 4096, 4096, TL_NONE);
	uint32_t h2 = ev(u, LOG_OP_READ, 200000, 203000, 4096, 4096, TL_NONE);
	uint32_t m2 = ev(u, LOG_OP_READ, 300000, 450000, 4096, 4096, TL_NONE);
	uint32_t r = run(u, LOG_OP_READ, 500000, 600000, 4096, 10, 25000, 2200);
	ev(sc, LOG_OP_READ, 1100, 2900, 4096, 4096, h1);
	ev(sc, LOG_OP_READ, 10100, 109900, 4096, 4096, m1);
	ev(sc, LOG_OP_READ, 200100, 202900, 4096, 4096, h2);
	ev(sc, LOG_OP_READ, 300100, 449900, 4096, 4096, m2);
	for (uint64_t k = 0; k < 10; k++)
		ev(sc, LOG_OP_READ, 500000 + k * 10000 + 100, 500000 + k * 10000 + 2100, 4096, 4096, r);
	ev(pc, LOG_OP_PAGE_IN, 20000, 20000, 16384, 4, m1);
	ev(pc, LOG_OP_PAGE_IN, 310000, 310000, 16384, 4, m2);
	ev(bl, LOG_OP_BLK_READ, 30000, 100000, 16384, 16384, m1);
	ev(bl, LOG_OP_BLK_READ, 320000, 440000, 16384, 16384, m2);

	struct tl_sci s;
	check_i64("paths: tl_sci returns 0", tl_sci(&tl, &s), 0);
	check_u64("paths: one thread (its four tracks)", s.n, 1);
	check_thread("paths", &s, 400, 400, 14, 56000, 10000000);
	tl_sci_free(&s);
}

/*
 * A process only the kernel saw (no user log: its tl_proc has no start/end), main thread 500:
 * its top-level system calls are its sequences; a page-cache event of the same thread inside a
 * call's interval joins that call's layer path. Writes of 4 KiB:
 *   syscall only: 1,000, 1,500              D_min 1,000 -> 500
 *   syscall -> pagecache: 4,000, 7,000      D_min 4,000 -> 3,000
 * Lifetime: the span of its events, 0 .. 100,000 (a start of 0 in tl_proc means "unknown"). A
 * block event on a device track is nobody's. A user-traced thread's system call outside any user
 * call (600/600, a 3,000 ns write) is a sequence too, with the path {syscall}: it joins 500's
 * syscall-only group (groups span the whole job), slowdown 3,000 - 1,000 = 2,000; its user call
 * (path {posix, syscall}) is alone in its group: 0.
 */
static void test_kernel_only(void)
{
	tl_reset();
	proc(500, 0, 0);
	proc(600, 1, 1000001);
	uint32_t sc = track(500, 500, LOG_LAYER_SYSCALL, TL_TRACK_THREAD);
	uint32_t pc = track(500, 500, LOG_LAYER_PAGECACHE, TL_TRACK_THREAD);
	uint32_t dv = track(0, 0, LOG_LAYER_BLOCK, TL_TRACK_DEVICE);
	uint32_t u6 = track(600, 600, LOG_LAYER_POSIX, TL_TRACK_THREAD);
	uint32_t s6 = track(600, 600, LOG_LAYER_SYSCALL, TL_TRACK_THREAD);
	ev(sc, LOG_OP_WRITE, 0, 1000, 4096, 4096, TL_NONE);
	ev(sc, LOG_OP_WRITE, 10000, 14000, 4096, 4096, TL_NONE);
	ev(sc, LOG_OP_WRITE, 20000, 21500, 4096, 4096, TL_NONE);
	ev(sc, LOG_OP_WRITE, 93000, 100000, 4096, 4096, TL_NONE);
	ev(pc, LOG_OP_PAGE_ADD_WRITE, 12000, 12000, 4096, 1, TL_NONE);
	ev(pc, LOG_OP_PAGE_ADD_WRITE, 95000, 95000, 4096, 1, TL_NONE);
	ev(pc, LOG_OP_PAGE_DIRTY, 50000, 50000, 4096, 1, TL_NONE); /* outside every call */
	ev(dv, LOG_OP_BLK_WRITE, 200000, 900000, 1 << 20, 1 << 20, TL_NONE);
	uint32_t w = ev(u6, LOG_OP_WRITE, 1000, 3000, 4096, 0, TL_NONE);
	ev(s6, LOG_OP_WRITE, 1100, 2900, 4096, 4096, w);
	ev(s6, LOG_OP_WRITE, 5000, 8000, 4096, 4096, TL_NONE);

	struct tl_sci s;
	check_i64("kernel-only: tl_sci returns 0", tl_sci(&tl, &s), 0);
	check_u64("kernel-only: threads (no device track)", s.n, 2);
	check_thread("kernel-only", &s, 500, 500, 4, 3500, 100000);
	check_thread("kernel-only", &s, 600, 600, 2, 2000, 1000000);
	check_dbl("kernel-only: top", s.top, 3500.0 / 100000.0, 1e-15);
	tl_sci_free(&s);
}

static void test_empty(void)
{
	tl_reset();
	struct tl_sci s;
	memset(&s, 0xff, sizeof s);
	check_i64("empty: tl_sci returns 0", tl_sci(&tl, &s), 0);
	check_u64("empty: no thread", s.n, 0);
	check("empty: no array", s.threads == NULL, "threads not NULL");
	check_dbl("empty: top 0", s.top, 0.0, 0.0);
	tl_sci_free(&s);
	struct tl_breakdown b;
	memset(&b, 0xff, sizeof b);
	check_i64("empty: tl_breakdown returns 0", tl_breakdown(&tl, &b), 0);
	check_u64("empty: no row", b.n, 0);
	check("empty: no rows array", b.rows == NULL, "rows not NULL");
	tl_breakdown_free(&b);

	/* tracks but only kernel events nobody nests: no sequence, no row */
	uint32_t dv = track(0, 0, LOG_LAYER_BLOCK, TL_TRACK_DEVICE);
	ev(dv, LOG_OP_BLK_WRITE, 0, 100, 4096, 4096, TL_NONE);
	check_i64("empty: device-only tl_sci returns 0", tl_sci(&tl, &s), 0);
	check_u64("empty: device-only no thread", s.n, 0);
	tl_sci_free(&s);
	check_i64("empty: device-only tl_breakdown returns 0", tl_breakdown(&tl, &b), 0);
	check_u64("empty: device-only no row", b.n, 0);
	tl_breakdown_free(&b);
}

/* ---- breakdown ---- */

static void check_row(const char *name, const struct tl_breakdown_row *r, unsigned op, unsigned bucket,
		      const uint64_t want[10])
{
	static const char *const col[10] = { "calls",  "user_ns",  "syscall_ns",    "block_ns",
					     "hits",   "misses",   "bytes_user",    "bytes_syscall",
					     "bytes_pagecache", "bytes_block" };
	const uint64_t got[10] = { r->calls,	  r->user_ns,	    r->syscall_ns,	r->block_ns,
				   r->hits,	  r->misses,	    r->bytes_user,	r->bytes_syscall,
				   r->bytes_pagecache, r->bytes_block };
	char n[160];
	snprintf(n, sizeof n, "%s: op", name);
	check_u64(n, r->op, op);
	snprintf(n, sizeof n, "%s: size bucket", name);
	check_u64(n, r->size_bucket, bucket);
	for (int c = 0; c < 10; c++) {
		snprintf(n, sizeof n, "%s: %s", name, col[c]);
		check_u64(n, got[c], want[c]);
	}
}

/*
 * Thread 700/700's calls, with what the kernel saw under them:
 *   read 4 KiB  [0, 10,000]         syscall [1,000, 9,000] -> 4096                    hit
 *   read 4 KiB  [20,000, 120,000]   syscall [21,000, 119,000] -> 4096, page_in 16 KiB,
 *                                   readahead 16 KiB, block read [40,000, 100,000] 16 KiB  miss
 *   read 4 KiB  run of 5, busy 7,500 [200,000, 250,000]: 5 syscalls of 1,000 -> 4096     5 hits
 *   fread 4 KiB [260,000, 260,500]  (stdio, nothing under it: never reached the kernel)
 *   read 4 KiB  [270,000, 273,000] failed -EIO; syscall [270,500, 272,500] -> -EIO    neither
 *   read 4 KiB  [280,000, 290,000]  syscall [280,100, 289,900] -> 4096, LOG_E_CACHE_MISS  miss
 *   write 1 MiB [300,000, 400,000]  syscall [301,000, 399,000] -> 1 MiB, page_add_write 1 MiB
 *   fsync       [500,000, 600,000]  syscall [501,000, 599,000] -> 0, block write
 *                                   [510,000, 590,000] 1 MiB, block flush [590,000, 595,000]
 *   open        [700,000, 702,000]  syscall [700,500, 701,500] -> 3 (a descriptor, not bytes)
 * plus a block write on a device track (nobody's) and one on a kernel-only thread (700/701).
 * Rows:
 *   read/13:  calls 10; user 10,000 + 100,000 + 7,500 + 500 + 3,000 + 10,000 = 131,000;
 *             syscall 8,000 + 98,000 + 5,000 + 2,000 + 9,800 = 122,800; block 60,000;
 *             hits 6, misses 2; bytes user 4096 × 9 = 36,864 (not the failed call),
 *             syscall 4096 × 8 = 32,768, page cache 16,384 (readahead not added), block 16,384
 *   write/21: 1 call, 100,000, 98,000, 0, -, -, 1 MiB, 1 MiB, 1 MiB, 0
 *   meta/0:   2 calls, 102,000, 98,000 + 1,000 = 99,000, 80,000 + 5,000 = 85,000, -, -, 0, 0, 0, 1 MiB
 */
static void test_breakdown(void)
{
	tl_reset();
	proc(700, 0, 1000000);
	uint32_t u = track(700, 700, LOG_LAYER_POSIX, TL_TRACK_THREAD);
	uint32_t st = track(700, 700, LOG_LAYER_STDIO, TL_TRACK_THREAD);
	uint32_t sc = track(700, 700, LOG_LAYER_SYSCALL, TL_TRACK_THREAD);
	uint32_t pc = track(700, 700, LOG_LAYER_PAGECACHE, TL_TRACK_THREAD);
	uint32_t bl = track(700, 700, LOG_LAYER_BLOCK, TL_TRACK_THREAD);
	uint32_t dv = track(0, 0, LOG_LAYER_BLOCK, TL_TRACK_DEVICE);
	uint32_t ko = track(700, 701, LOG_LAYER_SYSCALL, TL_TRACK_THREAD);
	const uint64_t MiB = 1 << 20;

	uint32_t r1 = ev(u, LOG_OP_READ, 0, 10000, 4096, 0, TL_NONE);
	uint32_t r2 = ev(u, LOG_OP_READ, 20000, 120000, 4096, 0, TL_NONE);
	uint32_t r3 = run(u, LOG_OP_READ, 200000, 250000, 4096, 5, 7500, 1400);
	uint32_t r5 = ev(u, LOG_OP_READ, 270000, 273000, 4096, -5, TL_NONE);
	uint32_t r6 = ev(u, LOG_OP_READ, 280000, 290000, 4096, 0, TL_NONE);
	uint32_t w1 = ev(u, LOG_OP_WRITE, 300000, 400000, MiB, 0, TL_NONE);
	uint32_t fs = ev(u, LOG_OP_SYNC, 500000, 600000, 0, 0, TL_NONE);
	uint32_t op = ev(u, LOG_OP_OPEN, 700000, 702000, 0, 0, TL_NONE);
	ev(st, LOG_OP_READ, 260000, 260500, 4096, 0, TL_NONE);
	ev(sc, LOG_OP_READ, 1000, 9000, 4096, 4096, r1);
	ev(sc, LOG_OP_READ, 21000, 119000, 4096, 4096, r2);
	for (uint64_t k = 0; k < 5; k++)
		ev(sc, LOG_OP_READ, 200000 + k * 10000, 201000 + k * 10000, 4096, 4096, r3);
	ev(sc, LOG_OP_READ, 270500, 272500, 4096, -5, r5);
	uint32_t s6 = ev(sc, LOG_OP_READ, 280100, 289900, 4096, 4096, r6);
	evs[s6].flags = LOG_E_CACHE_MISS;
	ev(sc, LOG_OP_WRITE, 301000, 399000, MiB, (int64_t)MiB, w1);
	ev(sc, LOG_OP_SYNC, 501000, 599000, 0, 0, fs);
	ev(sc, LOG_OP_OPEN, 700500, 701500, 0, 3, op);
	ev(pc, LOG_OP_READAHEAD, 25000, 25000, 16384, 4, r2);
	ev(pc, LOG_OP_PAGE_IN, 26000, 26000, 16384, 4, r2);
	ev(pc, LOG_OP_PAGE_ADD_WRITE, 310000, 310000, MiB, 256, w1);
	ev(bl, LOG_OP_BLK_READ, 40000, 100000, 16384, 16384, r2);
	ev(bl, LOG_OP_BLK_WRITE, 510000, 590000, MiB, (int64_t)MiB, fs);
	ev(bl, LOG_OP_BLK_FLUSH, 590000, 595000, 0, 0, fs);
	ev(dv, LOG_OP_BLK_WRITE, 800000, 900000, MiB, (int64_t)MiB, TL_NONE);
	ev(ko, LOG_OP_WRITE, 800000, 900000, 4096, 4096, TL_NONE);

	struct tl_breakdown b;
	check_i64("breakdown: returns 0", tl_breakdown(&tl, &b), 0);
	check_u64("breakdown: rows", b.n, 3);
	if (b.n == 3) {
		check_row("breakdown read/4KiB", &b.rows[0], LOG_OP_READ, 13,
			  (const uint64_t[10]){ 10, 131000, 122800, 60000, 6, 2, 36864, 32768, 16384, 16384 });
		check_row("breakdown write/1MiB", &b.rows[1], LOG_OP_WRITE, 21,
			  (const uint64_t[10]){ 1, 100000, 98000, 0, 0, 0, MiB, MiB, MiB, 0 });
		check_row("breakdown meta/0", &b.rows[2], LOG_OP_META, 0,
			  (const uint64_t[10]){ 2, 102000, 99000, 85000, 0, 0, 0, 0, 0, MiB });
	}
	tl_breakdown_free(&b);
	check("breakdown: free clears", b.rows == NULL && b.n == 0, "not cleared");

	/* one more read in a smaller bucket and an MPI write: rows stay in (op, bucket) order and
	 * MPI_File_write counts as a write */
	uint32_t m = track(700, 700, LOG_LAYER_MPIIO, TL_TRACK_THREAD);
	ev(u, LOG_OP_READ, 800000, 801000, 100, 0, TL_NONE);
	ev(m, LOG_OP_MPI_WRITE, 810000, 811000, 4096, 0, TL_NONE);
	check_i64("breakdown: returns 0 (2)", tl_breakdown(&tl, &b), 0);
	check_u64("breakdown: rows (2)", b.n, 5);
	if (b.n == 5) {
		unsigned want[5][2] = { { LOG_OP_READ, 7 },   { LOG_OP_READ, 13 }, { LOG_OP_WRITE, 13 },
					{ LOG_OP_WRITE, 21 }, { LOG_OP_META, 0 } };
		int ordered = 1;
		for (int k = 0; k < 5; k++)
			ordered &= b.rows[k].op == want[k][0] && b.rows[k].size_bucket == want[k][1];
		check("breakdown: rows ordered by op then bucket", ordered, "wrong order");
		check_u64("breakdown: 100 B read: no kernel event, neither hit nor miss",
			  b.rows[0].hits + b.rows[0].misses, 0);
		check_u64("breakdown: MPI write bytes", b.rows[2].bytes_user, 4096);
	}
	tl_breakdown_free(&b);
}

int main(void)
{
	test_seed_definition();
	test_delayed_thread();
	test_runs();
	test_exec_chain();
	test_layer_paths();
	test_kernel_only();
	test_empty();
	test_breakdown();
	if (failures)
		printf("# %d check%s failed\n", failures, failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}
