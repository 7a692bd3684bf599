/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the unified timeline (src/analysis/timeline.c) and its exports
 * (src/analysis/export.c), on user and kernel logs built in memory as struct log_file, so that
 * every expected figure follows from the input written here: nesting of kernel events under the
 * user call that holds them (and only then), a run of 1000 calls with its 1000 system calls, work
 * without a thread on device and async tracks linked to its file by inode, seed 004's hit/miss
 * flags, threads only the kernel saw, empty and odd inputs (damaged intervals, unknown records and
 * layers, overlapping events split into lanes, a log's warning), a randomized input against a
 * brute-force nesting, and the Perfetto JSON and CSV outputs byte for byte where it matters
 * (escaping of hostile paths, microsecond formatting, event counts, gzip). Output: one
 * "ok - name" / "not ok - name: detail" line per check; exit 1 on failure.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "analysis/timeline.h"

#include "check.h"

static char tmpdir[64];

static void check_u64(const char *name, uint64_t got, uint64_t want)
{
	check(name, got == want, "expected %" PRIu64 ", got %" PRIu64, want, got);
}

static void check_i64(const char *name, int64_t got, int64_t want)
{
	check(name, got == want, "expected %" PRId64 ", got %" PRId64, want, got);
}

static void check_str(const char *name, const char *got, const char *want)
{
	check(name, got && !strcmp(got, want), "expected '%s', got '%s'", want, got ? got : "(null)");
}

/* ---- logs in memory ---- */

#define MAX_LOGS 16
#define STR_CAP 65536
#define REC_CAP 64
#define ENT_CAP 40000

static struct log_file logs[MAX_LOGS];
static size_t nlogs;

static uint32_t add_str(struct log_file *lf, const char *s)
{
	size_t n = strlen(s) + 1;
	uint32_t off = lf->strings_size;
	if (off + n > STR_CAP) {
		fprintf(stderr, "test string table full\n");
		exit(2);
	}
	memcpy(lf->strings + off, s, n);
	lf->strings_size += (uint32_t)n;
	return off;
}

static struct log_file *mk_log(const char *host, int pid, int ppid, const char *exe, uint64_t start, uint64_t end,
			       int kernel)
{
	if (nlogs == MAX_LOGS)
		exit(2);
	struct log_file *lf = &logs[nlogs++];
	memset(lf, 0, sizeof *lf);
	lf->strings = calloc(1, STR_CAP);
	lf->records = calloc(REC_CAP, sizeof *lf->records);
	lf->trace = calloc(ENT_CAP, sizeof *lf->trace);
	lf->events = calloc(ENT_CAP, sizeof *lf->events);
	if (!lf->strings || !lf->records || !lf->trace || !lf->events)
		exit(2);
	lf->strings_size = 1;
	lf->path = strdup(kernel ? "kernel-test.iost" : "test.iost");
	lf->hdr.pid = pid;
	lf->hdr.ppid = ppid;
	lf->hdr.host = add_str(lf, host);
	lf->hdr.exe = add_str(lf, exe);
	lf->hdr.start_ns = start;
	lf->hdr.end_ns = end;
	lf->hdr.flags = LOG_F_FINISHED;
	if (kernel)
		lf->hdr.kernel_layers = (1u << LOG_LAYER_SYSCALL) | (1u << LOG_LAYER_PAGECACHE) | (1u << LOG_LAYER_FS) |
					(1u << LOG_LAYER_BLOCK);
	return lf;
}

static uint32_t add_rec(struct log_file *lf, unsigned layer, const char *path, uint64_t dev, uint64_t ino,
			uint16_t flags)
{
	if (lf->nrecords == REC_CAP)
		exit(2);
	struct log_record *r = &lf->records[lf->nrecords];
	memset(r, 0, sizeof *r);
	r->layer = (uint16_t)layer;
	r->flags = (uint16_t)(LOG_R_USED | flags);
	r->path = add_str(lf, path);
	r->dev = dev;
	r->ino = ino;
	r->rank = -1;
	return lf->nrecords++;
}

/* A user trace entry: one call when count == 1 (busy = min = end - start). */
static struct log_trace_entry *entry(struct log_file *lf, int pid, int tid, uint32_t rec, unsigned layer, unsigned op,
				     uint64_t start, uint64_t end, uint64_t offset, uint64_t size)
{
	if (lf->ntrace == ENT_CAP)
		exit(2);
	struct log_trace_entry *e = &lf->trace[lf->ntrace++];
	*e = (struct log_trace_entry){ .start_ns = start, .end_ns = end, .busy_ns = end - start,
				       .min_ns = end - start, .offset = offset, .size = size, .count = 1,
				       .pid = pid, .tid = tid, .record = rec, .layer = (uint8_t)layer,
				       .op = (uint8_t)op };
	return e;
}

static struct log_event *kev(struct log_file *lf, int pid, int tid, unsigned layer, unsigned op, uint16_t flags,
			     uint64_t start, uint64_t dur, uint64_t dev, uint64_t ino, uint64_t offset, uint64_t size,
			     int64_t result)
{
	if (lf->nevents == ENT_CAP)
		exit(2);
	struct log_event *e = &lf->events[lf->nevents++];
	*e = (struct log_event){ .start_ns = start, .dur_ns = dur, .pid = pid, .tid = tid, .layer = (uint8_t)layer,
				 .op = (uint8_t)op, .flags = flags, .dev = (uint32_t)dev, .ino = ino,
				 .offset = offset, .size = size, .result = result };
	return e;
}

static void reset_logs(void)
{
	for (size_t i = 0; i < nlogs; i++) {
		free(logs[i].path);
		free(logs[i].strings);
		free(logs[i].records);
		free(logs[i].trace);
		free(logs[i].events);
		free(logs[i].warning);
	}
	nlogs = 0;
}

static int build(struct timeline *tl)
{
	char err[256] = "";
	int rc = tl_build_from(logs, nlogs, tl, err, sizeof err);
	check("tl_build_from returns 0", rc == 0, "%d (%s)", rc, err);
	return rc;
}

/* ---- looking things up in a timeline ---- */

/* The index of the only event of (layer, op) starting at start, or TL_NONE. */
static uint32_t find(const struct timeline *tl, unsigned layer, unsigned op, uint64_t start)
{
	uint32_t found = TL_NONE;
	for (size_t k = 0; k < tl->nev; k++) {
		const struct tl_event *e = &tl->ev[k];
		if (e->layer == layer && e->op == op && e->start_ns == start) {
			if (found != TL_NONE)
				return TL_NONE - 1; /* ambiguous: a test bug */
			found = (uint32_t)k;
		}
	}
	return found;
}

static void check_parent(const char *name, const struct timeline *tl, uint32_t child, uint32_t want)
{
	char n[200];
	snprintf(n, sizeof n, "%s: event found", name);
	check(n, child < tl->nev, "missing");
	if (child >= tl->nev)
		return;
	snprintf(n, sizeof n, "%s: parent", name);
	check_u64(n, tl->ev[child].parent, want);
}

static uint32_t track_named(const struct timeline *tl, int pid, int tid, const char *name)
{
	for (size_t t = 0; t < tl->ntracks; t++)
		if (tl->tracks[t].pid == pid && tl->tracks[t].tid == tid && !strcmp(tl->tracks[t].name, name))
			return (uint32_t)t;
	return TL_NONE;
}

static uint64_t events_on(const struct timeline *tl, uint32_t track)
{
	uint64_t n = 0;
	for (size_t k = 0; k < tl->nev; k++)
		n += tl->ev[k].track == track;
	return n;
}

static int is_user_layer(unsigned l)
{
	return l == LOG_LAYER_POSIX || l == LOG_LAYER_STDIO || l == LOG_LAYER_MPIIO;
}

/*
 * What every timeline must satisfy (timeline.h): events ordered by track, start, longer first;
 * on a track, any two events are disjoint or one holds the other; an event's layer (and thread)
 * is its track's; a parent is a user-layer event of the same thread holding the child, which is a
 * kernel-layer event; counts and t0/t1 agree with the events. Returns the problems found.
 */
static unsigned model_problems(const struct timeline *tl, char *why, size_t len)
{
	unsigned bad = 0;
	uint64_t t0 = UINT64_MAX, t1 = 0, *stk = malloc((tl->nev + 1) * sizeof *stk);
	size_t depth = 0;
	why[0] = '\0';
#define BAD(...)                                                   \
	do {                                                       \
		if (!bad++)                                        \
			snprintf(why, len, __VA_ARGS__);           \
	} while (0)
	for (size_t k = 0; k < tl->nev; k++) {
		const struct tl_event *e = &tl->ev[k];
		if (e->track >= tl->ntracks) {
			BAD("event %zu: track %u out of range", k, e->track);
			continue;
		}
		const struct tl_track *tr = &tl->tracks[e->track];
		if (e->end_ns < e->start_ns)
			BAD("event %zu ends before it starts", k);
		if (e->start_ns < t0)
			t0 = e->start_ns;
		if (e->end_ns > t1)
			t1 = e->end_ns;
		if (tr->layer != e->layer)
			BAD("event %zu: layer %u on a track of layer %u", k, e->layer, tr->layer);
		if (tr->kind == TL_TRACK_THREAD && (tr->pid != e->pid || tr->tid != e->tid))
			BAD("event %zu: thread %d/%d on track of %d/%d", k, e->pid, e->tid, tr->pid, tr->tid);
		if (k && tl->ev[k - 1].track == e->track) {
			const struct tl_event *p = &tl->ev[k - 1];
			if (p->start_ns > e->start_ns || (p->start_ns == e->start_ns && p->end_ns < e->end_ns))
				BAD("events %zu, %zu out of order", k - 1, k);
		} else {
			if (k && tl->ev[k - 1].track > e->track)
				BAD("event %zu: tracks out of order", k);
			depth = 0;
		}
		while (depth && stk[depth - 1] <= e->start_ns && stk[depth - 1] < e->end_ns)
			depth--;
		if (depth && stk[depth - 1] < e->end_ns)
			BAD("event %zu overlaps an event of its track without nesting", k);
		stk[depth++] = e->end_ns;
		if (e->parent != TL_NONE) {
			const struct tl_event *p = e->parent < tl->nev ? &tl->ev[e->parent] : NULL;
			if (!p || !is_user_layer(p->layer) || is_user_layer(e->layer) || p->tid != e->tid ||
			    p->pid != e->pid || p->start_ns > e->start_ns || p->end_ns < e->end_ns)
				BAD("event %zu: parent %u is not a user call of its thread holding it", k, e->parent);
		}
	}
	if (tl->nev != tl->user_events + tl->kernel_events)
		BAD("nev %zu != user %" PRIu64 " + kernel %" PRIu64, tl->nev, tl->user_events, tl->kernel_events);
	if (tl->nev && (tl->t0_ns != t0 || tl->t1_ns != t1))
		BAD("t0/t1 %" PRIu64 "/%" PRIu64 ", events say %" PRIu64 "/%" PRIu64, tl->t0_ns, tl->t1_ns, t0, t1);
#undef BAD
	free(stk);
	return bad;
}

static void check_model(const char *name, const struct timeline *tl)
{
	char why[256], n[160];
	unsigned bad = model_problems(tl, why, sizeof why);
	snprintf(n, sizeof n, "%s: model invariants", name);
	check(n, bad == 0, "%u problems, first: %s", bad, why);
}

/* ---- nesting ---- */

#define DEV_A makedev(254, 0)

/*
 * Process 100 (one thread) on host n1: open, write, read, close of /data/a (ino 7). The kernel
 * saw, inside each call, its system call; inside the write a page added, an fs write and an
 * O_DIRECT-like block write of the same thread; inside the read a page read in and a block
 * read; before the trace an mmap of the loader, after it a write to stdout: those two nest
 * under nothing. 4 user + 12 kernel events.
 */
static void test_nesting(void)
{
	reset_logs();
	struct log_file *u = mk_log("n1", 100, 1, "/usr/bin/app", 100, 100000, 0);
	uint32_t ra = add_rec(u, LOG_LAYER_POSIX, "/data/a", 0, 0, 0);
	entry(u, 100, 100, ra, LOG_LAYER_POSIX, LOG_OP_OPEN, 1000, 2000, UINT64_MAX, 0);
	entry(u, 100, 100, ra, LOG_LAYER_POSIX, LOG_OP_WRITE, 10000, 20000, 0, 4096);
	entry(u, 100, 100, ra, LOG_LAYER_POSIX, LOG_OP_READ, 30000, 40000, 0, 4096);
	entry(u, 100, 100, ra, LOG_LAYER_POSIX, LOG_OP_CLOSE, 50000, 51000, UINT64_MAX, 0);
	struct log_file *k = mk_log("n1", 100, 1, "app", 0, 0, 1);
	add_rec(k, LOG_LAYER_SYSCALL, "/data/a", DEV_A, 7, 0);
	add_rec(k, LOG_LAYER_SYSCALL, "/dev/pts/0", DEV_A, 99, 0);
	/* out of order as the ring buffer delivers them: a call's event comes at its exit */
	kev(k, 100, 100, LOG_LAYER_SYSCALL, LOG_OP_MMAP, 0, 500, 100, DEV_A, 8, 0, 4096, 0);
	kev(k, 100, 100, LOG_LAYER_SYSCALL, LOG_OP_OPEN, 0, 1100, 800, DEV_A, 7, UINT64_MAX, 0, 3);
	kev(k, 100, 100, LOG_LAYER_PAGECACHE, LOG_OP_PAGE_ADD_WRITE, 0, 12000, 0, DEV_A, 7, 0, 4096, 1);
	kev(k, 100, 100, LOG_LAYER_BLOCK, LOG_OP_BLK_WRITE, 0, 13000, 5000, DEV_A, 7, 1 << 20, 4096, 4096);
	kev(k, 100, 100, LOG_LAYER_FS, LOG_OP_FS_WRITE, 0, 11000, 8000, DEV_A, 7, 0, 4096, 4096);
	kev(k, 100, 100, LOG_LAYER_SYSCALL, LOG_OP_WRITE, 0, 10100, 9800, DEV_A, 7, 0, 4096, 4096);
	kev(k, 100, 100, LOG_LAYER_PAGECACHE, LOG_OP_PAGE_IN, 0, 31000, 0, DEV_A, 7, 0, 4096, 1);
	kev(k, 100, 100, LOG_LAYER_BLOCK, LOG_OP_BLK_READ, 0, 32000, 6000, DEV_A, 7, 2 << 20, 4096, 4096);
	kev(k, 100, 100, LOG_LAYER_SYSCALL, LOG_OP_READ, 0, 30100, 9800, DEV_A, 7, 0, 4096, 4096);
	kev(k, 100, 100, LOG_LAYER_SYSCALL, LOG_OP_CLOSE, 0, 50100, 800, DEV_A, 7, UINT64_MAX, 0, 0);
	kev(k, 100, 100, LOG_LAYER_SYSCALL, LOG_OP_WRITE, 0, 60000, 1000, DEV_A, 99, UINT64_MAX, 10, 10);
	/* exactly at a call's bounds: [2000, 2000] is inside the open, [51000, 51001] is not */
	kev(k, 100, 100, LOG_LAYER_PAGECACHE, LOG_OP_PAGE_DIRTY, 0, 2000, 0, DEV_A, 7, 0, 4096, 1);

	struct timeline tl;
	if (build(&tl))
		return;
	check_model("nesting", &tl);
	check_u64("nesting: events", tl.nev, 16);
	check_u64("nesting: user events", tl.user_events, 4);
	check_u64("nesting: user calls", tl.user_calls, 4);
	check_u64("nesting: kernel events", tl.kernel_events, 12);
	check_u64("nesting: t0 (the loader's mmap)", tl.t0_ns, 500);
	check_u64("nesting: t1 (the write to stdout)", tl.t1_ns, 61000);
	uint32_t open = find(&tl, LOG_LAYER_POSIX, LOG_OP_OPEN, 1000);
	uint32_t wr = find(&tl, LOG_LAYER_POSIX, LOG_OP_WRITE, 10000);
	uint32_t rd = find(&tl, LOG_LAYER_POSIX, LOG_OP_READ, 30000);
	uint32_t cl = find(&tl, LOG_LAYER_POSIX, LOG_OP_CLOSE, 50000);
	check("nesting: user events found", open < tl.nev && wr < tl.nev && rd < tl.nev && cl < tl.nev, "missing");
	check_parent("nesting: mmap before the trace", &tl, find(&tl, LOG_LAYER_SYSCALL, LOG_OP_MMAP, 500), TL_NONE);
	check_parent("nesting: open syscall", &tl, find(&tl, LOG_LAYER_SYSCALL, LOG_OP_OPEN, 1100), open);
	check_parent("nesting: page dirtied at the open's end", &tl, find(&tl, LOG_LAYER_PAGECACHE, LOG_OP_PAGE_DIRTY, 2000),
		     open);
	check_parent("nesting: write syscall", &tl, find(&tl, LOG_LAYER_SYSCALL, LOG_OP_WRITE, 10100), wr);
	check_parent("nesting: fs write", &tl, find(&tl, LOG_LAYER_FS, LOG_OP_FS_WRITE, 11000), wr);
	check_parent("nesting: page added", &tl, find(&tl, LOG_LAYER_PAGECACHE, LOG_OP_PAGE_ADD_WRITE, 12000), wr);
	check_parent("nesting: block write of the thread", &tl, find(&tl, LOG_LAYER_BLOCK, LOG_OP_BLK_WRITE, 13000), wr);
	check_parent("nesting: read syscall", &tl, find(&tl, LOG_LAYER_SYSCALL, LOG_OP_READ, 30100), rd);
	check_parent("nesting: page read in", &tl, find(&tl, LOG_LAYER_PAGECACHE, LOG_OP_PAGE_IN, 31000), rd);
	check_parent("nesting: block read", &tl, find(&tl, LOG_LAYER_BLOCK, LOG_OP_BLK_READ, 32000), rd);
	check_parent("nesting: close syscall", &tl, find(&tl, LOG_LAYER_SYSCALL, LOG_OP_CLOSE, 50100), cl);
	check_parent("nesting: write after the trace", &tl, find(&tl, LOG_LAYER_SYSCALL, LOG_OP_WRITE, 60000), TL_NONE);
	check_parent("nesting: user event", &tl, wr, TL_NONE);
	if (wr < tl.nev && rd < tl.nev) {
		check_u64("nesting: the read is a miss", tl.ev[rd].flags, TL_F_MISS);
		check_u64("nesting: a write gets no hit/miss flag", tl.ev[wr].flags, 0);
	}

	/* one track per layer of the thread, ordered by layer */
	check_u64("nesting: tracks", tl.ntracks, 5);
	static const unsigned layers[] = { LOG_LAYER_POSIX, LOG_LAYER_SYSCALL, LOG_LAYER_PAGECACHE, LOG_LAYER_FS,
					   LOG_LAYER_BLOCK };
	for (size_t t = 0; t < 5 && t < tl.ntracks; t++) {
		char n[96];
		snprintf(n, sizeof n, "nesting: track %zu is %s of 100/100", t, log_layer_name(layers[t]));
		check(n, tl.tracks[t].layer == layers[t] && tl.tracks[t].kind == TL_TRACK_THREAD &&
				 tl.tracks[t].pid == 100 && tl.tracks[t].tid == 100 &&
				 !strcmp(tl.tracks[t].name, log_layer_name(layers[t])),
		      "layer %u kind %u %d/%d '%s'", tl.tracks[t].layer, tl.tracks[t].kind, tl.tracks[t].pid,
		      tl.tracks[t].tid, tl.tracks[t].name);
	}
	check_u64("nesting: syscall track events", events_on(&tl, 1), 6);

	/* one file for /data/a, user and kernel layers joined by path; the kernel gave its identity */
	uint32_t fa = wr < tl.nev ? tl.ev[wr].file : TL_NONE;
	check("nesting: user write has a file", fa < tl.nfiles, "file %u", fa);
	if (fa < tl.nfiles) {
		check_str("nesting: file path", tl.files[fa].path, "/data/a");
		check_u64("nesting: file dev", tl.files[fa].dev, DEV_A);
		check_u64("nesting: file ino", tl.files[fa].ino, 7);
		check_u64("nesting: user event carries the identity", tl.ev[wr].ino, 7);
		uint64_t same = 0;
		for (size_t i = 0; i < tl.nev; i++)
			same += tl.ev[i].file == fa;
		check_u64("nesting: events of /data/a (4 user + 10 kernel)", same, 14);
		uint32_t mm = find(&tl, LOG_LAYER_SYSCALL, LOG_OP_MMAP, 500);
		if (mm < tl.nev && tl.ev[mm].file < tl.nfiles)
			check_str("nesting: an inode no record names", tl.files[tl.ev[mm].file].path, "<dev 254:0 ino 8>");
		else
			check("nesting: an inode no record names", 0, "no file");
	}
	check_u64("nesting: processes (the kernel log is none)", tl.nprocs, 1);
	if (tl.nprocs) {
		check_i64("nesting: process pid", tl.procs[0].pid, 100);
		check_str("nesting: process exe", tl.procs[0].exe, "/usr/bin/app");
		check_u64("nesting: process span", tl.procs[0].end_ns - tl.procs[0].start_ns, 99900);
	}
	tl_free(&tl);
	check("nesting: tl_free clears", tl.ev == NULL && tl.nev == 0 && tl.files == NULL, "not cleared");
}

/*
 * A run of 1000 writes of 4 KiB from 1,000,000 to 2,000,000 ns (busy 900,000, fastest 800): its
 * 1000 system calls, one per call at k * 1000 + 50 .. + 950, all nest under the run; a system
 * call before and one after the run nest under nothing; so do the thread's calls in the 100 us
 * gap after it, up to the next user call.
 */
static void test_run(void)
{
	reset_logs();
	struct log_file *u = mk_log("n1", 300, 1, "/bin/w", 1, 5000000, 0);
	uint32_t rf = add_rec(u, LOG_LAYER_POSIX, "/data/run", 0, 0, 0);
	struct log_trace_entry *r = entry(u, 300, 300, rf, LOG_LAYER_POSIX, LOG_OP_WRITE, 1000000, 2000000, 0, 4096);
	r->count = 1000;
	r->busy_ns = 900000;
	r->min_ns = 800;
	entry(u, 300, 300, rf, LOG_LAYER_POSIX, LOG_OP_CLOSE, 2100000, 2101000, UINT64_MAX, 0);
	struct log_file *k = mk_log("n1", 300, 1, "w", 0, 0, 1);
	add_rec(k, LOG_LAYER_SYSCALL, "/data/run", DEV_A, 11, 0);
	kev(k, 300, 300, LOG_LAYER_SYSCALL, LOG_OP_WRITE, 0, 900000, 500, DEV_A, 11, 0, 4096, 4096);
	for (uint64_t c = 0; c < 1000; c++)
		kev(k, 300, 300, LOG_LAYER_SYSCALL, LOG_OP_WRITE, 0, 1000000 + c * 1000 + 50, 900, DEV_A, 11, c * 4096,
		    4096, 4096);
	kev(k, 300, 300, LOG_LAYER_SYSCALL, LOG_OP_META, 0, 2050000, 100, DEV_A, 11, UINT64_MAX, 0, 0);
	kev(k, 300, 300, LOG_LAYER_SYSCALL, LOG_OP_CLOSE, 0, 2100100, 800, DEV_A, 11, UINT64_MAX, 0, 0);

	struct timeline tl;
	if (build(&tl))
		return;
	check_model("run", &tl);
	check_u64("run: events", tl.nev, 2 + 1003);
	check_u64("run: user events", tl.user_events, 2);
	check_u64("run: user calls", tl.user_calls, 1001);
	uint32_t run = find(&tl, LOG_LAYER_POSIX, LOG_OP_WRITE, 1000000);
	check("run: found", run < tl.nev, "missing");
	if (run >= tl.nev)
		return;
	const struct tl_event *e = &tl.ev[run];
	check_u64("run: count", e->count, 1000);
	check_u64("run: busy", e->busy_ns, 900000);
	check_u64("run: min", e->min_ns, 800);
	check_u64("run: flags", e->flags, TL_F_RUN);
	check_u64("run: offset", e->offset, 0);
	uint64_t under = 0, under_right = 0;
	for (size_t i = 0; i < tl.nev; i++) {
		if (tl.ev[i].parent == run) {
			under++;
			under_right += tl.ev[i].layer == LOG_LAYER_SYSCALL && tl.ev[i].op == LOG_OP_WRITE &&
				       tl.ev[i].start_ns == 1000050 + tl.ev[i].offset / 4096 * 1000;
		}
	}
	check_u64("run: system calls under the run", under, 1000);
	check_u64("run: each call's write under it", under_right, 1000);
	check_parent("run: write before the run", &tl, find(&tl, LOG_LAYER_SYSCALL, LOG_OP_WRITE, 900000), TL_NONE);
	check_parent("run: call in the gap after the run", &tl, find(&tl, LOG_LAYER_SYSCALL, LOG_OP_META, 2050000),
		     TL_NONE);
	check_parent("run: close under the close", &tl, find(&tl, LOG_LAYER_SYSCALL, LOG_OP_CLOSE, 2100100),
		     find(&tl, LOG_LAYER_POSIX, LOG_OP_CLOSE, 2100000));
	tl_free(&tl);
}

/* ---- work without a thread ---- */

/*
 * Writeback of /data/x (ino 77 on vda 254:0) by a kernel thread: two block writes in flight at
 * once (pid 0, LOG_E_WRITEBACK) go on the device's track and a second lane of it; a flush without
 * an inode on the same device's track; a page evicted by no one (pid 0) on the async track of
 * its device; a page dirtied without device on "pagecache async"; a block write flagged
 * writeback although a pid is set goes on the device too. The process's write of /data/x and the
 * writeback share one file: the user record has only the path, the kernel's the identity.
 */
static void test_devices(void)
{
	reset_logs();
	struct log_file *u = mk_log("n1", 400, 1, "/bin/x", 1, 1000000, 0);
	uint32_t rx = add_rec(u, LOG_LAYER_POSIX, "/data/x", 0, 0, 0);
	entry(u, 400, 400, rx, LOG_LAYER_POSIX, LOG_OP_WRITE, 1000, 2000, 0, 8192);
	struct log_file *k = mk_log("n1", 400, 1, "x", 0, 0, 1);
	add_rec(k, LOG_LAYER_BLOCK, "<device vda 254:0>", DEV_A, 0, LOG_R_PSEUDO);
	add_rec(k, LOG_LAYER_PAGECACHE, "<dev 254:0 ino 77>", DEV_A, 77, LOG_R_PSEUDO); /* pseudo: not a path */
	add_rec(k, LOG_LAYER_SYSCALL, "/data/x", DEV_A, 77, 0);
	kev(k, 0, 0, LOG_LAYER_BLOCK, LOG_OP_BLK_WRITE, LOG_E_WRITEBACK, 5000, 4000, DEV_A, 77, 0, 4096, 4096);
	kev(k, 0, 0, LOG_LAYER_BLOCK, LOG_OP_BLK_WRITE, LOG_E_WRITEBACK, 6000, 4000, DEV_A, 77, 4096, 4096, 4096);
	kev(k, 0, 0, LOG_LAYER_BLOCK, LOG_OP_BLK_FLUSH, 0, 20000, 100, DEV_A, 0, UINT64_MAX, 0, 0);
	kev(k, 0, 0, LOG_LAYER_PAGECACHE, LOG_OP_PAGE_EVICT, 0, 7000, 0, DEV_A, 77, 0, 4096, 1);
	kev(k, 0, 0, LOG_LAYER_PAGECACHE, LOG_OP_PAGE_DIRTY, 0, 8000, 0, 0, 0, UINT64_MAX, 4096, 1);
	kev(k, 400, 400, LOG_LAYER_BLOCK, LOG_OP_BLK_WRITE, LOG_E_WRITEBACK, 1500, 100, DEV_A, 77, 8192, 4096, 4096);

	struct timeline tl;
	if (build(&tl))
		return;
	check_model("devices", &tl);
	check_u64("devices: events", tl.nev, 7);
	uint32_t dev1 = track_named(&tl, 0, 0, "block vda 254:0");
	uint32_t dev2 = track_named(&tl, 0, 0, "block vda 254:0 #2");
	uint32_t pc = track_named(&tl, 0, 0, "pagecache vda 254:0");
	uint32_t pca = track_named(&tl, 0, 0, "pagecache async");
	check("devices: device track", dev1 < tl.ntracks, "missing");
	check("devices: its second lane", dev2 < tl.ntracks, "missing");
	check("devices: async page-cache track of the device", pc < tl.ntracks, "missing");
	check("devices: async page-cache track without device", pca < tl.ntracks, "missing");
	if (dev1 >= tl.ntracks || dev2 >= tl.ntracks || pc >= tl.ntracks || pca >= tl.ntracks)
		return;
	check_u64("devices: device track kind", tl.tracks[dev1].kind, TL_TRACK_DEVICE);
	check_u64("devices: device track dev", tl.tracks[dev1].dev, DEV_A);
	check_u64("devices: async track kind", tl.tracks[pc].kind, TL_TRACK_ASYNC);
	check_u64("devices: first lane: 2 writes and the flush", events_on(&tl, dev1), 3);
	check_u64("devices: second lane: the overlapping write", events_on(&tl, dev2), 1);
	check_u64("devices: tracks (posix + 4)", tl.ntracks, 5);
	check_u64("devices: thread track first", tl.tracks[0].kind, TL_TRACK_THREAD);
	check("devices: device tracks before async ones", dev1 < pc && dev2 < pc && dev1 < dev2, "order %u %u %u", dev1,
	      dev2, pc);
	uint32_t w = find(&tl, LOG_LAYER_POSIX, LOG_OP_WRITE, 1000);
	uint32_t wb = find(&tl, LOG_LAYER_BLOCK, LOG_OP_BLK_WRITE, 5000);
	uint32_t wb_pid = find(&tl, LOG_LAYER_BLOCK, LOG_OP_BLK_WRITE, 1500);
	uint32_t fl = find(&tl, LOG_LAYER_BLOCK, LOG_OP_BLK_FLUSH, 20000);
	if (w >= tl.nev || wb >= tl.nev || wb_pid >= tl.nev || fl >= tl.nev) {
		check("devices: events found", 0, "missing");
		return;
	}
	check("devices: writeback linked to the file by inode", tl.ev[wb].file == tl.ev[w].file && tl.ev[w].file < tl.nfiles,
	      "files %u and %u", tl.ev[wb].file, tl.ev[w].file);
	check_str("devices: that file's path", tl.files[tl.ev[w].file].path, "/data/x");
	check_u64("devices: that file's inode", tl.files[tl.ev[w].file].ino, 77);
	check_u64("devices: writeback nests under nothing", tl.ev[wb].parent, TL_NONE);
	check_u64("devices: writeback keeps its flag", tl.ev[wb].flags, LOG_E_WRITEBACK);
	check_u64("devices: writeback with a pid is on the device track", tl.ev[wb_pid].track, dev1);
	check_u64("devices: ... and not nested under the call it falls in", tl.ev[wb_pid].parent, TL_NONE);
	check_u64("devices: flush has no file", tl.ev[fl].file, TL_NONE);
	tl_free(&tl);
}

/* ---- hit and miss ---- */

/*
 * Reads of thread 500/500: with only a system call under it (hit); with a page read in (miss); a
 * block read (miss); a system call flagged LOG_E_CACHE_MISS (miss); nothing the kernel saw (no
 * flag); a failed read (no flag); a run of 10 reads, one of whose calls read a page in (miss:
 * the run's calls are one event); a stdio read holding a posix read holding the system call (the
 * posix read is the innermost: hit; the stdio read has nothing directly: no flag); a write with
 * a page read in (writes get no flag).
 */
static void test_hit_miss(void)
{
	reset_logs();
	struct log_file *u = mk_log("n1", 500, 1, "/bin/r", 1, 1000000, 0);
	uint32_t rf = add_rec(u, LOG_LAYER_POSIX, "/data/r", 0, 0, 0);
	uint32_t sf = add_rec(u, LOG_LAYER_STDIO, "/data/r", 0, 0, 0);
	static const uint64_t at[] = { 1000, 3000, 5000, 7000, 9000, 11000 };
	for (size_t i = 0; i < 6; i++)
		entry(u, 500, 500, rf, LOG_LAYER_POSIX, LOG_OP_READ, at[i], at[i] + 1000, i * 4096, 4096);
	u->trace[5].result = -EIO;
	struct log_trace_entry *r = entry(u, 500, 500, rf, LOG_LAYER_POSIX, LOG_OP_READ, 13000, 23000, 6 * 4096, 4096);
	r->count = 10;
	r->busy_ns = 9000;
	r->min_ns = 800;
	entry(u, 500, 500, sf, LOG_LAYER_STDIO, LOG_OP_READ, 25000, 30000, 0, 100);
	entry(u, 500, 500, rf, LOG_LAYER_POSIX, LOG_OP_READ, 26000, 29000, 16 * 4096, 4096);
	entry(u, 500, 500, rf, LOG_LAYER_POSIX, LOG_OP_WRITE, 31000, 32000, 0, 4096);
	struct log_file *k = mk_log("n1", 500, 1, "r", 0, 0, 1);
	add_rec(k, LOG_LAYER_SYSCALL, "/data/r", DEV_A, 5, 0);
	for (size_t i = 0; i < 6; i++)
		if (i != 4)
			kev(k, 500, 500, LOG_LAYER_SYSCALL, LOG_OP_READ, i == 3 ? LOG_E_CACHE_MISS : 0, at[i] + 100, 800,
			    DEV_A, 5, i * 4096, 4096, 4096);
	kev(k, 500, 500, LOG_LAYER_PAGECACHE, LOG_OP_PAGE_IN, 0, 3500, 0, DEV_A, 5, 4096, 4096, 1);
	kev(k, 500, 500, LOG_LAYER_BLOCK, LOG_OP_BLK_READ, 0, 5200, 500, DEV_A, 5, 8192, 4096, 4096);
	for (uint64_t c = 0; c < 10; c++)
		kev(k, 500, 500, LOG_LAYER_SYSCALL, LOG_OP_READ, 0, 13000 + c * 1000 + 100, 800, DEV_A, 5,
		    (6 + c) * 4096, 4096, 4096);
	kev(k, 500, 500, LOG_LAYER_PAGECACHE, LOG_OP_PAGE_IN, 0, 17500, 0, DEV_A, 5, 10 * 4096, 4096, 1);
	kev(k, 500, 500, LOG_LAYER_SYSCALL, LOG_OP_READ, 0, 26500, 2000, DEV_A, 5, 16 * 4096, 4096, 4096);
	kev(k, 500, 500, LOG_LAYER_PAGECACHE, LOG_OP_PAGE_IN, 0, 31500, 0, DEV_A, 5, 0, 4096, 1);

	struct timeline tl;
	if (build(&tl))
		return;
	check_model("hit/miss", &tl);
	static const struct {
		const char *name;
		unsigned layer;
		uint64_t start, flags;
	} want[] = {
		{ "syscall only: hit", LOG_LAYER_POSIX, 1000, TL_F_HIT },
		{ "page read in: miss", LOG_LAYER_POSIX, 3000, TL_F_MISS },
		{ "block read: miss", LOG_LAYER_POSIX, 5000, TL_F_MISS },
		{ "syscall flagged cache miss: miss", LOG_LAYER_POSIX, 7000, TL_F_MISS },
		{ "nothing under it: no flag", LOG_LAYER_POSIX, 9000, 0 },
		{ "failed read: no flag", LOG_LAYER_POSIX, 11000, 0 },
		{ "run with one page read in: miss", LOG_LAYER_POSIX, 13000, TL_F_RUN | TL_F_MISS },
		{ "stdio read around the posix read: no flag", LOG_LAYER_STDIO, 25000, 0 },
		{ "posix read inside stdio: hit", LOG_LAYER_POSIX, 26000, TL_F_HIT },
		{ "write with a page read in: no flag", LOG_LAYER_POSIX, 31000, 0 },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		char n[128];
		unsigned op = want[i].start == 31000 ? LOG_OP_WRITE : LOG_OP_READ;
		uint32_t e = find(&tl, want[i].layer, op, want[i].start);
		snprintf(n, sizeof n, "hit/miss: %s", want[i].name);
		if (e >= tl.nev)
			check(n, 0, "event missing");
		else
			check_u64(n, tl.ev[e].flags, want[i].flags);
	}
	check_parent("hit/miss: syscall under the innermost user call", &tl,
		     find(&tl, LOG_LAYER_SYSCALL, LOG_OP_READ, 26500), find(&tl, LOG_LAYER_POSIX, LOG_OP_READ, 26000));
	tl_free(&tl);
}

/* ---- threads only the kernel saw ---- */

/*
 * A static program (root of the kernel log, pid 600, no user log) with two threads, its child 602
 * (no user log either), and a traced process 700 whose second thread 701 has no user trace: every
 * one of them gets its own thread tracks, nothing nests, and the processes only the kernel saw are
 * listed, the root named after the kernel log's executable.
 */
static void test_kernel_only(void)
{
	reset_logs();
	struct log_file *k = mk_log("n1", 600, 55, "static_prog", 0, 0, 1);
	add_rec(k, LOG_LAYER_SYSCALL, "/data/s", DEV_A, 3, 0);
	kev(k, 600, 600, LOG_LAYER_SYSCALL, LOG_OP_WRITE, 0, 1000, 100, DEV_A, 3, 0, 10, 10);
	kev(k, 600, 601, LOG_LAYER_SYSCALL, LOG_OP_WRITE, 0, 1050, 100, DEV_A, 3, 10, 10, 10);
	kev(k, 602, 602, LOG_LAYER_SYSCALL, LOG_OP_READ, 0, 2000, 100, DEV_A, 3, 0, 10, 10);
	kev(k, 700, 701, LOG_LAYER_SYSCALL, LOG_OP_READ, 0, 3000, 100, DEV_A, 3, 0, 10, 10);
	kev(k, 700, 700, LOG_LAYER_SYSCALL, LOG_OP_READ, 0, 4100, 100, DEV_A, 3, 0, 10, 10);
	struct log_file *u = mk_log("n1", 700, 1, "/bin/t", 10, 100000, 0);
	uint32_t rf = add_rec(u, LOG_LAYER_POSIX, "/data/s", 0, 0, 0);
	entry(u, 700, 700, rf, LOG_LAYER_POSIX, LOG_OP_READ, 4000, 5000, 0, 10);

	struct timeline tl;
	if (build(&tl))
		return;
	check_model("kernel-only", &tl);
	static const int thr[][2] = { { 600, 600 }, { 600, 601 }, { 602, 602 }, { 700, 701 } };
	for (size_t i = 0; i < 4; i++) {
		char n[96];
		uint32_t t = track_named(&tl, thr[i][0], thr[i][1], "syscall");
		snprintf(n, sizeof n, "kernel-only: %d/%d has its syscall track", thr[i][0], thr[i][1]);
		check(n, t < tl.ntracks && tl.tracks[t].kind == TL_TRACK_THREAD, "missing");
		snprintf(n, sizeof n, "kernel-only: %d/%d: one event", thr[i][0], thr[i][1]);
		check_u64(n, t < tl.ntracks ? events_on(&tl, t) : 0, 1);
	}
	check_u64("kernel-only: tracks (4 + 700/700 posix and syscall)", tl.ntracks, 6);
	uint64_t nested = 0;
	for (size_t i = 0; i < tl.nev; i++)
		nested += tl.ev[i].parent != TL_NONE;
	check_u64("kernel-only: only 700/700's read nests", nested, 1);
	check_u64("kernel-only: processes", tl.nprocs, 3);
	if (tl.nprocs == 3) {
		check("kernel-only: sorted by pid", tl.procs[0].pid == 600 && tl.procs[1].pid == 602 && tl.procs[2].pid == 700,
		      "%d %d %d", tl.procs[0].pid, tl.procs[1].pid, tl.procs[2].pid);
		check_str("kernel-only: root named by the kernel log", tl.procs[0].exe, "static_prog");
		check_i64("kernel-only: root's parent", tl.procs[0].ppid, 55);
		check_u64("kernel-only: root has no user-log span", tl.procs[0].start_ns | tl.procs[0].end_ns, 0);
		check("kernel-only: child has no name", tl.procs[1].exe == NULL, "'%s'", tl.procs[1].exe);
		check_str("kernel-only: traced process", tl.procs[2].exe, "/bin/t");
	}
	tl_free(&tl);
}

/* ---- empty and odd inputs ---- */

static void test_empty(void)
{
	reset_logs();
	struct timeline tl;
	memset(&tl, 0xff, sizeof tl);
	char err[128] = "";
	check_i64("empty: no logs returns 0", tl_build_from(NULL, 0, &tl, err, sizeof err), 0);
	check("empty: nothing", tl.nev == 0 && tl.ntracks == 0 && tl.nfiles == 0 && tl.nprocs == 0 && tl.t0_ns == 0 &&
				   tl.t1_ns == 0 && tl.warning == NULL,
	      "nev %zu tracks %zu", tl.nev, tl.ntracks);
	tl_free(&tl);
	check_i64("empty: logs NULL with a count", tl_build_from(NULL, 2, &tl, err, sizeof err), -EINVAL);
	check_i64("empty: timeline NULL", tl_build_from(logs, 0, NULL, err, sizeof err), -EINVAL);

	/* a user log without trace: a process, no event */
	mk_log("n1", 800, 1, "/bin/quiet", 5, 10, 0);
	if (build(&tl))
		return;
	check("empty: a process and no event", tl.nprocs == 1 && tl.nev == 0 && tl.ntracks == 0, "procs %zu nev %zu",
	      tl.nprocs, tl.nev);
	tl_free(&tl);
}

/*
 * Damaged or unusual input is kept, one event each: an entry ending before it starts (its end
 * becomes its start), entries with no record or a record without path (no file), a kernel event
 * of an unknown layer (a track of its own), one whose duration overflows (ends at UINT64_MAX),
 * user events with pid or tid 0 (work without a thread), a kernel event with a pid but tid 0;
 * overlapping block requests of one thread split into lanes; two user calls of one layer that
 * overlap without nesting (damage) each hold what starts inside them last; a log's warning.
 */
static void test_odd(void)
{
	reset_logs();
	struct log_file *u = mk_log("n1", 900, 1, "/bin/odd", 1, 10, 0);
	uint32_t rf = add_rec(u, LOG_LAYER_POSIX, "/data/o", 0, 0, 0);
	uint32_t rn = add_rec(u, LOG_LAYER_POSIX, "", 0, 0, 0);
	entry(u, 900, 900, rf, LOG_LAYER_POSIX, LOG_OP_WRITE, 5000, 4000, 0, 1);
	entry(u, 900, 900, UINT32_MAX, LOG_LAYER_POSIX, LOG_OP_WRITE, 6000, 6100, 0, 1);
	entry(u, 900, 900, rn, LOG_LAYER_POSIX, LOG_OP_WRITE, 6200, 6300, 0, 1);
	entry(u, 0, 0, rf, LOG_LAYER_POSIX, LOG_OP_WRITE, 6400, 6500, 0, 1);
	entry(u, 900, 900, rf, LOG_LAYER_POSIX, LOG_OP_READ, 10000, 30000, 0, 1);
	entry(u, 900, 900, rf, LOG_LAYER_POSIX, LOG_OP_READ, 20000, 40000, 0, 1);
	/* a stdio call and the posix call it makes starting at the same ns: the shorter is inside */
	uint32_t rs = add_rec(u, LOG_LAYER_STDIO, "/data/o", 0, 0, 0);
	entry(u, 900, 900, rf, LOG_LAYER_POSIX, LOG_OP_READ, 50000, 59000, 0, 1);
	entry(u, 900, 900, rs, LOG_LAYER_STDIO, LOG_OP_READ, 50000, 60000, 0, 1);
	u->warning = strdup("test.iost: trace block 3 cut short");
	u->nwarnings = 2;
	struct log_file *k = mk_log("n1", 900, 1, "odd", 0, 0, 1);
	kev(k, 900, 900, 200, 99, 0, 7000, 10, 0, 0, UINT64_MAX, 0, 0);
	kev(k, 900, 900, LOG_LAYER_SYSCALL, LOG_OP_SYNC, 0, 8000, UINT64_MAX, 0, 0, UINT64_MAX, 0, 0);
	kev(k, 900, 0, LOG_LAYER_SYSCALL, LOG_OP_SYNC, 0, 8100, 10, 0, 0, UINT64_MAX, 0, 0);
	kev(k, 900, 900, LOG_LAYER_BLOCK, LOG_OP_BLK_WRITE, 0, 100, 200, DEV_A, 0, 0, 512, 512);
	kev(k, 900, 900, LOG_LAYER_BLOCK, LOG_OP_BLK_WRITE, 0, 200, 200, DEV_A, 0, 0, 512, 512);
	kev(k, 900, 900, LOG_LAYER_BLOCK, LOG_OP_BLK_WRITE, 0, 250, 10, DEV_A, 0, 0, 512, 512);
	kev(k, 900, 900, LOG_LAYER_BLOCK, LOG_OP_BLK_WRITE, 0, 350, 150, DEV_A, 0, 0, 512, 512);
	kev(k, 900, 900, LOG_LAYER_BLOCK, LOG_OP_BLK_WRITE, 0, 600, 100, DEV_A, 0, 0, 512, 512);
	kev(k, 900, 900, LOG_LAYER_BLOCK, LOG_OP_BLK_WRITE, 0, 600, 300, DEV_A, 0, 0, 512, 512);
	kev(k, 900, 900, LOG_LAYER_SYSCALL, LOG_OP_READ, 0, 50100, 7900, 0, 0, 0, 1, 1);
	kev(k, 900, 900, LOG_LAYER_SYSCALL, LOG_OP_READ, 0, 11000, 100, 0, 0, 0, 1, 1);
	kev(k, 900, 900, LOG_LAYER_SYSCALL, LOG_OP_READ, 0, 25000, 100, 0, 0, 0, 1, 1);
	kev(k, 900, 900, LOG_LAYER_SYSCALL, LOG_OP_READ, 0, 35000, 100, 0, 0, 0, 1, 1);
	kev(k, 900, 900, LOG_LAYER_SYSCALL, LOG_OP_READ, 0, 29000, 2000, 0, 0, 0, 1, 1);

	struct timeline tl;
	if (build(&tl))
		return;
	check_model("odd", &tl);
	check_u64("odd: every entry and event is one event", tl.nev, 8 + 14);
	uint32_t e;
	e = find(&tl, LOG_LAYER_POSIX, LOG_OP_WRITE, 5000);
	check_u64("odd: end before start becomes start", e < tl.nev ? tl.ev[e].end_ns : 0, 5000);
	e = find(&tl, LOG_LAYER_POSIX, LOG_OP_WRITE, 6000);
	check_u64("odd: entry without record has no file", e < tl.nev ? tl.ev[e].file : 0, TL_NONE);
	e = find(&tl, LOG_LAYER_POSIX, LOG_OP_WRITE, 6200);
	check_u64("odd: record without path has no file", e < tl.nev ? tl.ev[e].file : 0, TL_NONE);
	e = find(&tl, LOG_LAYER_POSIX, LOG_OP_WRITE, 6400);
	check("odd: user event without thread on an async track",
	      e < tl.nev && tl.tracks[tl.ev[e].track].kind == TL_TRACK_ASYNC && !strcmp(tl.tracks[tl.ev[e].track].name, "posix async"),
	      "track '%s'", e < tl.nev ? tl.tracks[tl.ev[e].track].name : "?");
	e = find(&tl, 200, 99, 7000);
	check("odd: unknown layer on its own track", e < tl.nev && tl.tracks[tl.ev[e].track].layer == 200 &&
						     !strcmp(tl.tracks[tl.ev[e].track].name, "?"),
	      "missing");
	e = find(&tl, LOG_LAYER_SYSCALL, LOG_OP_SYNC, 8000);
	check_u64("odd: overflowing duration ends at UINT64_MAX", e < tl.nev ? tl.ev[e].end_ns : 0, UINT64_MAX);
	check_u64("odd: t1", tl.t1_ns, UINT64_MAX);
	e = find(&tl, LOG_LAYER_SYSCALL, LOG_OP_SYNC, 8100);
	check("odd: tid 0 is work without a thread", e < tl.nev && tl.tracks[tl.ev[e].track].kind == TL_TRACK_ASYNC,
	      "not async");
	uint32_t b1 = track_named(&tl, 900, 900, "block"), b2 = track_named(&tl, 900, 900, "block #2");
	check_u64("odd: block lane 1: [100,300], [250,260] inside, [350,500], [600,900] holding [600,700]",
		  b1 < tl.ntracks ? events_on(&tl, b1) : 0, 5);
	check_u64("odd: block lane 2: [200,400]", b2 < tl.ntracks ? events_on(&tl, b2) : 0, 1);
	check("odd: no third lane", track_named(&tl, 900, 900, "block #3") == TL_NONE, "there is one");
	uint32_t r1 = find(&tl, LOG_LAYER_POSIX, LOG_OP_READ, 10000), r2 = find(&tl, LOG_LAYER_POSIX, LOG_OP_READ, 20000);
	check("odd: overlapping user calls on two lanes", r1 < tl.nev && r2 < tl.nev && tl.ev[r1].track != tl.ev[r2].track,
	      "same track");
	check_parent("odd: inside the first call only", &tl, find(&tl, LOG_LAYER_SYSCALL, LOG_OP_READ, 11000), r1);
	check_parent("odd: inside both: the later one", &tl, find(&tl, LOG_LAYER_SYSCALL, LOG_OP_READ, 25000), r2);
	check_parent("odd: inside the second call only", &tl, find(&tl, LOG_LAYER_SYSCALL, LOG_OP_READ, 35000), r2);
	check_parent("odd: across the first call's end", &tl, find(&tl, LOG_LAYER_SYSCALL, LOG_OP_READ, 29000), r2);
	check_parent("odd: same start: under the shorter call", &tl, find(&tl, LOG_LAYER_SYSCALL, LOG_OP_READ, 50100),
		     find(&tl, LOG_LAYER_POSIX, LOG_OP_READ, 50000));
	check_str("odd: warning kept", tl.warning, "test.iost: trace block 3 cut short");
	check_u64("odd: warnings counted", tl.nwarnings, 2);
	tl_free(&tl);
}

/* ---- many events against a brute-force nesting ---- */

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

/*
 * Three threads of one process (and a kernel-only fourth): user calls one after another with gaps,
 * sometimes a stdio call holding a posix call; kernel events anywhere (inside, across a call's
 * edge, in the gaps), block requests overlapping; some writeback. The expected parent of every
 * kernel event of a traced thread is found by looking at every user call of the thread: the
 * innermost (latest starting) one holding it.
 */
static void test_random(void)
{
	reset_logs();
	struct log_file *u = mk_log("n1", 1000, 1, "/bin/rand", 1, 1ull << 40, 0);
	struct log_file *k = mk_log("n1", 1000, 1, "rand", 0, 0, 1);
	uint32_t rf = add_rec(u, LOG_LAYER_POSIX, "/data/rand", 0, 0, 0);
	uint32_t sf = add_rec(u, LOG_LAYER_STDIO, "/data/rand", 0, 0, 0);
	add_rec(k, LOG_LAYER_SYSCALL, "/data/rand", DEV_A, 42, 0);
	for (int tid = 1000; tid < 1003; tid++) {
		uint64_t t = 1000;
		for (int c = 0; c < 600; c++) {
			uint64_t len = 100 + rnd(5000), s = t + rnd(3000);
			if (rnd(8) == 0 && len > 400) {
				entry(u, 1000, tid, sf, LOG_LAYER_STDIO, LOG_OP_WRITE, s, s + len, 0, 10);
				entry(u, 1000, tid, rf, LOG_LAYER_POSIX, LOG_OP_WRITE, s + 100, s + len - 100, 0, 4096);
			} else {
				struct log_trace_entry *e =
					entry(u, 1000, tid, rf, LOG_LAYER_POSIX, rnd(2) ? LOG_OP_READ : LOG_OP_WRITE, s, s + len, 0, 4096);
				if (rnd(4) == 0) {
					e->count = 2 + rnd(100);
					e->busy_ns = len / 2;
					e->min_ns = 10;
				}
			}
			t = s + len;
		}
		for (int c = 0; c < 3000; c++) {
			static const unsigned ly[] = { LOG_LAYER_SYSCALL, LOG_LAYER_PAGECACHE, LOG_LAYER_FS, LOG_LAYER_BLOCK };
			unsigned l = ly[rnd(4)];
			uint64_t s = rnd(t + 2000), dur = l == LOG_LAYER_PAGECACHE ? 0 : rnd(3000);
			kev(k, 1000, tid, l, l == LOG_LAYER_BLOCK ? LOG_OP_BLK_READ : LOG_OP_READ, 0, s, dur, DEV_A, 42, 0, 4096,
			    4096);
		}
	}
	for (int c = 0; c < 500; c++)
		kev(k, rnd(2) ? 1003 : 0, rnd(2) ? 1003 : 0, LOG_LAYER_BLOCK, LOG_OP_BLK_WRITE, rnd(2) ? LOG_E_WRITEBACK : 0,
		    rnd(4000000), rnd(20000), DEV_A, 42, 0, 4096, 4096);

	struct timeline tl;
	if (build(&tl))
		return;
	check_model("random", &tl);
	check_u64("random: events", tl.nev, u->ntrace + k->nevents);
	uint64_t wrong = 0, nested = 0, first_bad = UINT64_MAX;
	for (size_t i = 0; i < tl.nev; i++) {
		const struct tl_event *e = &tl.ev[i];
		if (is_user_layer(e->layer) || tl.tracks[e->track].kind != TL_TRACK_THREAD)
			continue;
		uint32_t want = TL_NONE;
		for (size_t j = 0; j < tl.nev; j++) {
			const struct tl_event *c = &tl.ev[j];
			if (!is_user_layer(c->layer) || c->tid != e->tid || c->start_ns > e->start_ns || c->end_ns < e->end_ns)
				continue;
			if (want == TL_NONE || c->start_ns > tl.ev[want].start_ns ||
			    (c->start_ns == tl.ev[want].start_ns && c->end_ns < tl.ev[want].end_ns))
				want = (uint32_t)j;
		}
		nested += want != TL_NONE;
		if (e->parent != want) {
			if (!wrong++)
				first_bad = i;
		}
	}
	check("random: parents equal the brute-force innermost holder", wrong == 0,
	      "%" PRIu64 " differ, first event %" PRIu64, wrong, first_bad);
	check("random: a good share nests", nested > 1000, "only %" PRIu64, nested);
	tl_free(&tl);
}

/* ---- exports ---- */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	size_t r;
	while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			char *b = realloc(buf, 2 * cap + 1);
			if (!b) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = b;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

static void check_file(const char *name, const char *path, const char *want)
{
	size_t n = 0;
	char *got = slurp(path, &n);
	if (!got) {
		check(name, 0, "cannot read %s", path);
		return;
	}
	size_t i = 0, w = strlen(want);
	while (i < n && i < w && got[i] == want[i])
		i++;
	check(name, n == w && i == w, "differs at byte %zu (lengths %zu, %zu): got '%.60s', expected '%.60s'", i, n, w,
	      got + (i < n ? i : n), want + (i < w ? i : w));
	free(got);
}

/* Run a Python snippet on the JSON file (d: the document); it exits non-zero on a failed assert. */
static void check_python(const char *name, const char *json_path, const char *code)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd,
		 "python3 -c 'import json,sys\nd=json.load(open(sys.argv[1], encoding=\"utf-8\"))\n%s' %s >/dev/null 2>&1",
		 code, json_path);
	int r = system(cmd);
	check(name, r == 0, "python exit %d (%s)", r, code);
}

/* A path with everything JSON and CSV must escape: a quote, a backslash, a newline, a control
 * byte, an invalid UTF-8 byte, a valid two-byte character and a comma. */
#define HOSTILE "/d/q\"uo\\te\n\x01\xff\xc3\xa9,x.dat"
#define HOSTILE_JSON "\"/d/q\\\"uo\\\\te\\n\\u0001\\ufffd\xc3\xa9,x.dat\""
#define HOSTILE_CSV "\"/d/q\"\"uo\\te\n\x01\xff\xc3\xa9,x.dat\""

static void build_export_input(void)
{
	reset_logs();
	struct log_file *u = mk_log("n1", 100, 1, "/usr/bin/app", 1000, 9000000, 0);
	uint32_t rf = add_rec(u, LOG_LAYER_POSIX, HOSTILE, 0, 0, 0);
	entry(u, 100, 100, rf, LOG_LAYER_POSIX, LOG_OP_WRITE, 1234567, 2234567, 0, 4096);
	struct log_trace_entry *r = entry(u, 100, 100, rf, LOG_LAYER_POSIX, LOG_OP_READ, 3000000, 4000005, 4096, 100);
	r->count = 3;
	r->busy_ns = 999;
	r->min_ns = 300;
	struct log_file *k = mk_log("n1", 100, 1, "app", 0, 0, 1);
	add_rec(k, LOG_LAYER_BLOCK, "<device vda 254:0>", DEV_A, 0, LOG_R_PSEUDO);
	add_rec(k, LOG_LAYER_SYSCALL, HOSTILE, DEV_A, 9, 0);
	kev(k, 100, 100, LOG_LAYER_SYSCALL, LOG_OP_WRITE, 0, 1300000, 5, DEV_A, 9, 0, 4096, 4096);
	kev(k, 0, 0, LOG_LAYER_BLOCK, LOG_OP_BLK_WRITE, LOG_E_WRITEBACK, 5000000, 1000, DEV_A, 9, 1 << 20, 4096, 4096);
}

static void test_perfetto(void)
{
	build_export_input();
	struct timeline tl;
	if (build(&tl))
		return;
	char path[128], gz[140], err[512] = "", cmd[512];
	snprintf(path, sizeof path, "%s/t.json", tmpdir);
	snprintf(gz, sizeof gz, "%s/t.json.gz", tmpdir);
	int rc = tl_export_perfetto(&tl, path, err, sizeof err);
	check("perfetto: export returns 0", rc == 0, "%d (%s)", rc, err);
	check_file("perfetto: the whole document", path,
		   "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"iostrata timeline\",\"t0_ns\":1234567,"
		   "\"t1_ns\":5001000,\"events\":4,\"metadata_events\":5,\"tracks\":3,\"user_events\":2,\"user_calls\":4,"
		   "\"kernel_events\":2,\"dropped\":0,\"warnings\":0},\"traceEvents\":[\n"
		   "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":100,\"tid\":0,\"args\":{\"name\":\"app\"}},\n"
		   "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":9999999,\"tid\":0,\"args\":{\"name\":\"devices\"}},\n"
		   "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":100,\"tid\":10000000,\"args\":{\"name\":\"100 posix\"}},\n"
		   "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":100,\"tid\":10000001,\"args\":{\"name\":\"100 syscall\"}},\n"
		   "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":9999999,\"tid\":10000002,\"args\":{\"name\":\"block vda 254:0\"}},\n"
		   "{\"ph\":\"X\",\"name\":\"write\",\"cat\":\"posix\",\"pid\":100,\"tid\":10000000,\"ts\":1234.567,"
		   "\"dur\":1000.000,\"args\":{\"id\":0,\"file\":" HOSTILE_JSON ",\"offset\":0,\"size\":4096,\"result\":0}},\n"
		   "{\"ph\":\"X\",\"name\":\"read\",\"cat\":\"posix\",\"pid\":100,\"tid\":10000000,\"ts\":3000.000,"
		   "\"dur\":1000.005,\"args\":{\"id\":1,\"file\":" HOSTILE_JSON ",\"offset\":4096,\"size\":100,\"count\":3,"
		   "\"busy_ns\":999,\"min_ns\":300,\"result\":0,\"flags\":256}},\n"
		   "{\"ph\":\"X\",\"name\":\"write\",\"cat\":\"syscall\",\"pid\":100,\"tid\":10000001,\"ts\":1300.000,"
		   "\"dur\":0.005,\"args\":{\"id\":2,\"parent\":0,\"file\":" HOSTILE_JSON ",\"offset\":0,\"size\":4096,"
		   "\"result\":4096}},\n"
		   "{\"ph\":\"X\",\"name\":\"block_write\",\"cat\":\"block\",\"pid\":9999999,\"tid\":10000002,\"ts\":5000.000,"
		   "\"dur\":1.000,\"args\":{\"id\":3,\"file\":" HOSTILE_JSON ",\"offset\":1048576,\"size\":4096,"
		   "\"result\":4096,\"flags\":1}}\n"
		   "]}\n");
	check_python("perfetto: strict JSON with the counts it states", path,
		     "ev=d[\"traceEvents\"]\n"
		     "assert sum(e[\"ph\"]==\"X\" for e in ev)==d[\"otherData\"][\"events\"]==4\n"
		     "assert sum(e[\"ph\"]==\"M\" for e in ev)==d[\"otherData\"][\"metadata_events\"]==5");
	check_python("perfetto: the path survives the round trip (an invalid byte as U+FFFD)", path,
		     "assert d[\"traceEvents\"][5][\"args\"][\"file\"]==\"/d/q\\\"uo\\\\te\\n\\x01\\ufffd\\xe9,x.dat\"");

	rc = tl_export_perfetto(&tl, gz, err, sizeof err);
	check("perfetto: gzip export returns 0", rc == 0, "%d (%s)", rc, err);
	snprintf(cmd, sizeof cmd, "gzip -t '%s' && gzip -dc '%s' | cmp -s - '%s'", gz, gz, path);
	check("perfetto: gzip output inflates to the plain document", system(cmd) == 0, "%s", cmd);

	rc = tl_export_perfetto(&tl, "/nonexistent-iostrata-dir/t.json", err, sizeof err);
	check_i64("perfetto: unwritable path fails", rc, -ENOENT);
	check_str("perfetto: one line naming the file", err,
		  "/nonexistent-iostrata-dir/t.json: cannot create: No such file or directory");
	rc = tl_export_perfetto(&tl, "/nonexistent-iostrata-dir/t.json.gz", err, sizeof err);
	check_i64("perfetto: unwritable gzip path fails", rc, -ENOENT);
	if (access("/dev/full", W_OK) == 0) {
		rc = tl_export_perfetto(&tl, "/dev/full", err, sizeof err);
		check_i64("perfetto: a full device fails", rc, -ENOSPC);
		check_str("perfetto: ... saying so", err, "/dev/full: cannot write: No space left on device");
	}
	tl_free(&tl);

	/* an empty timeline is a valid document without events */
	struct timeline empty;
	tl_build_from(NULL, 0, &empty, err, sizeof err);
	rc = tl_export_perfetto(&empty, path, err, sizeof err);
	check("perfetto: empty export returns 0", rc == 0, "%d (%s)", rc, err);
	check_file("perfetto: empty document", path,
		   "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"iostrata timeline\",\"t0_ns\":0,"
		   "\"t1_ns\":0,\"events\":0,\"metadata_events\":0,\"tracks\":0,\"user_events\":0,\"user_calls\":0,"
		   "\"kernel_events\":0,\"dropped\":0,\"warnings\":0},\"traceEvents\":[\n]}\n");
	check_python("perfetto: empty document parses", path, "assert d[\"traceEvents\"]==[]");
	tl_free(&empty);
}

static void test_csv(void)
{
	build_export_input();
	logs[0].warning = strdup("x.iost: damaged");
	struct timeline tl;
	if (build(&tl))
		return;
	char path[128], err[512];
	snprintf(path, sizeof path, "%s/t.csv", tmpdir);
	FILE *f = fopen(path, "w");
	check("csv: temp file", f != NULL, "%s", strerror(errno));
	if (!f)
		return;
	check_i64("csv: export returns 0", tl_export_csv(&tl, f), 0);
	fclose(f);
	check_file("csv: the whole file", path,
		   "id,parent,track,track_kind,track_name,pid,tid,layer,op,start_ns,end_ns,dur_ns,busy_ns,min_ns,count,"
		   "offset,size,result,flags,cache,dev,ino,file\n"
		   "0,-1,0,thread,posix,100,100,posix,write,1234567,2234567,1000000,1000000,1000000,1,0,4096,0,0,,65024,9,"
		   HOSTILE_CSV "\n"
		   "1,-1,0,thread,posix,100,100,posix,read,3000000,4000005,1000005,999,300,3,4096,100,0,256,,65024,9,"
		   HOSTILE_CSV "\n"
		   "2,0,1,thread,syscall,100,100,syscall,write,1300000,1300005,5,5,5,1,0,4096,4096,0,,65024,9,"
		   HOSTILE_CSV "\n"
		   "3,-1,2,device,block vda 254:0,0,0,block,block_write,5000000,5001000,1000,1000,1000,1,1048576,4096,4096,1,,"
		   "65024,9," HOSTILE_CSV "\n");
	/* the warning goes to the JSON's otherData */
	snprintf(path, sizeof path, "%s/w.json", tmpdir);
	check_i64("csv: warned export returns 0", tl_export_perfetto(&tl, path, err, sizeof err), 0);
	check_python("csv: JSON carries the warning", path,
		     "assert d[\"otherData\"][\"warning\"]==\"x.iost: damaged\" and d[\"otherData\"][\"warnings\"]==1");
	f = fopen("/dev/full", "w");
	if (f) {
		setvbuf(f, NULL, _IONBF, 0);
		check_i64("csv: a full device fails", tl_export_csv(&tl, f), -ENOSPC);
		fclose(f);
	}
	tl_free(&tl);
}

int main(void)
{
	strcpy(tmpdir, "/tmp/test_timeline.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		printf("not ok - mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_nesting();
	test_run();
	test_devices();
	test_hit_miss();
	test_kernel_only();
	test_empty();
	test_odd();
	test_random();
	test_perfetto();
	test_csv();
	reset_logs();
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
	return failures ? 1 : 0;
}
