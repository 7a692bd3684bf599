/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of src/analysis/otf2.c: timelines built by hand (tracks, files, processes, events
 * with parents; nothing from tl_build), exported to a temporary directory and read back with
 * Debian's `otf2-print -A -Werror`, which must exit 0 with nothing on stderr. The checks count
 * the exact records per type it prints (2 per event, 4 with an I/O operation, docs/OTF2.md), the
 * definitions (locations, groups, regions, paradigms, files, handles), the bytes of runs and
 * failed calls, the per-location record counts and the order of timestamps on each location;
 * and the errors: an existing archive, directories that cannot be created, with one line in err
 * and nothing from the OTF2 library on stderr. Output: one "ok - name" / "not ok - name:
 * detail" line per check; exit 1 on failure.
 */
#include <errno.h>
#include <fcntl.h>
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

static void check_u64(const char *name, uint64_t got, uint64_t want)
{
	check(name, got == want, "expected %" PRIu64 ", got %" PRIu64, want, got);
}

static void check_i64(const char *name, int64_t got, int64_t want)
{
	check(name, got == want, "expected %" PRId64 ", got %" PRId64, want, got);
}

/* ---- building a timeline by hand ---- */

#define CAP 40000

static struct tl_event evs[CAP];
static struct tl_track tracks[64];
static struct tl_file files[16];
static struct tl_proc procs[16];
static struct timeline tl;

static void tl_reset(void)
{
	memset(&tl, 0, sizeof tl);
	memset(evs, 0, sizeof evs);
	memset(tracks, 0, sizeof tracks);
	memset(files, 0, sizeof files);
	memset(procs, 0, sizeof procs);
	tl.ev = evs;
	tl.tracks = tracks;
	tl.files = files;
	tl.procs = procs;
}

static uint32_t track(int pid, int tid, unsigned layer, unsigned kind, const char *name)
{
	struct tl_track *t = &tracks[tl.ntracks];
	t->pid = pid;
	t->tid = tid;
	t->layer = (uint8_t)layer;
	t->kind = (uint8_t)kind;
	snprintf(t->name, sizeof t->name, "%s", name ? name : log_layer_name(layer));
	return (uint32_t)tl.ntracks++;
}

static uint32_t file(const char *path, uint64_t dev, uint64_t ino)
{
	files[tl.nfiles] = (struct tl_file){ .path = (char *)path, .dev = dev, .ino = ino };
	return (uint32_t)tl.nfiles++;
}

static void proc(int pid, int ppid, const char *exe)
{
	procs[tl.nprocs++] = (struct tl_proc){ .pid = pid, .ppid = ppid, .exe = (char *)exe, .start_ns = 1,
					       .end_ns = 2 };
}

/* One call or kernel event on track t, on file f, nested under parent. */
static uint32_t ev(uint32_t t, unsigned op, uint32_t f, uint64_t start, uint64_t end, uint64_t size, int64_t result,
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
	e->file = f;
	e->track = t;
	e->parent = parent;
	if (!tl.nev || start < tl.t0_ns)
		tl.t0_ns = start;
	if (end > tl.t1_ns)
		tl.t1_ns = end;
	return (uint32_t)tl.nev++;
}

/* ---- exporting and reading back ---- */

static char tmp[64];

static void make_tmp(void)
{
	snprintf(tmp, sizeof tmp, "/tmp/iostrata-test-otf2.XXXXXX");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		exit(2);
	}
}

/* IOSTRATA_TEST_KEEP=1 keeps the archives (their directories are printed) for a look. */
static void remove_tmp(void)
{
	char cmd[128];
	if (getenv("IOSTRATA_TEST_KEEP")) {
		printf("# kept %s\n", tmp);
		return;
	}
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmp);
}

/* What otf2-print -A -Werror printed: its exit status, its stdout and stderr. */
struct printed {
	int status;
	char *out, *errout;
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return strdup("");
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	for (size_t r; buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
		n += r;
		if (n + 1 == cap) {
			char *b = realloc(buf, cap *= 2);
			if (!b) {
				free(buf);
				buf = NULL;
			}
			buf = b;
		}
	}
	fclose(f);
	if (!buf) {
		fprintf(stderr, "out of memory reading %s\n", path);
		exit(2);
	}
	buf[n] = 0;
	return buf;
}

static struct printed otf2_print(const char *archive)
{
	char cmd[512], out[128], err[128];
	snprintf(out, sizeof out, "%s/print.out", tmp);
	snprintf(err, sizeof err, "%s/print.err", tmp);
	snprintf(cmd, sizeof cmd, "otf2-print -A -Werror '%s/traces.otf2' >'%s' 2>'%s'", archive, out, err);
	int st = system(cmd);
	struct printed p = { .status = st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 };
	p.out = slurp(out);
	p.errout = slurp(err);
	return p;
}

static void printed_free(struct printed *p)
{
	free(p->out);
	free(p->errout);
}

/* Lines whose first word is word (a record or definition type, as otf2-print names them). */
static uint64_t count_lines(const char *text, const char *word)
{
	uint64_t n = 0;
	size_t len = strlen(word);
	for (const char *l = text; *l; ) {
		if (!strncmp(l, word, len) && (l[len] == ' ' || l[len] == '\n'))
			n++;
		const char *nl = strchr(l, '\n');
		if (!nl)
			break;
		l = nl + 1;
	}
	return n;
}

/* Lines starting with word that also contain needle. */
static uint64_t count_with(const char *text, const char *word, const char *needle)
{
	uint64_t n = 0;
	size_t len = strlen(word);
	for (const char *l = text; *l; ) {
		const char *nl = strchr(l, '\n');
		size_t ll = nl ? (size_t)(nl - l) : strlen(l);
		if (!strncmp(l, word, len) && l[len] == ' ') {
			char *line = strndup(l, ll);
			if (line && strstr(line, needle))
				n++;
			free(line);
		}
		if (!nl)
			break;
		l = nl + 1;
	}
	return n;
}

/* Occurrences of needle anywhere. */
static uint64_t count_substr(const char *text, const char *needle)
{
	uint64_t n = 0;
	for (const char *q = text; (q = strstr(q, needle)); q += strlen(needle))
		n++;
	return n;
}

/* Attributes printed as ("name" <id>; TYPE; value): those of this name, type and value. */
static uint64_t count_attr(const char *text, const char *name, const char *type_value)
{
	char head[80];
	uint64_t n = 0;
	snprintf(head, sizeof head, "(\"%s\" <", name);
	for (const char *q = text; (q = strstr(q, head)); q += strlen(head)) {
		const char *gt = strchr(q + strlen(head), '>');
		if (gt && !strncmp(gt + 1, type_value, strlen(type_value)))
			n++;
	}
	return n;
}

/* The "# Events" of the location named name; UINT64_MAX when there is no such location. */
static uint64_t location_records(const char *text, const char *name)
{
	char needle[96];
	snprintf(needle, sizeof needle, "Name: \"%s\" <", name);
	for (const char *l = text; *l; ) {
		const char *nl = strchr(l, '\n');
		size_t ll = nl ? (size_t)(nl - l) : strlen(l);
		char *line = strndup(l, ll);
		const char *ev = NULL;
		if (line && !strncmp(line, "LOCATION ", 9) && strstr(line, needle))
			ev = strstr(line, "# Events: ");
		uint64_t got = ev ? strtoull(ev + 10, NULL, 10) : UINT64_MAX;
		free(line);
		if (got != UINT64_MAX)
			return got;
		if (!nl)
			break;
		l = nl + 1;
	}
	return UINT64_MAX;
}

/* Event lines ("TYPE  LOCATION  TIMESTAMP ..."): every location's timestamps must not decrease,
 * and every ENTER must be matched by a LEAVE on its location. Returns the number of violations;
 * *lines: the event lines read (so a check can see that the parse found them all). */
static int order_violations(const char *text, uint64_t *lines)
{
	enum { NLOC = 64 };
	uint64_t last[NLOC] = { 0 };
	long depth[NLOC] = { 0 };
	int bad = 0, in_events = 0;
	*lines = 0;
	for (const char *l = text; *l; ) {
		const char *nl = strchr(l, '\n');
		if (!strncmp(l, "=== Events", 10))
			in_events = 1;
		else if (!strncmp(l, "=== ", 4))
			in_events = 0;
		/* sscanf on a copy of the line: on the whole text it would measure all of it each time */
		char line[128], type[64];
		size_t ll = nl ? (size_t)(nl - l) : strlen(l);
		snprintf(line, sizeof line, "%.*s", (int)(ll < sizeof line - 1 ? ll : sizeof line - 1), l);
		unsigned long long loc, ts;
		if (in_events && l[0] >= 'A' && l[0] <= 'Z' && sscanf(line, "%63s %llu %llu", type, &loc, &ts) == 3) {
			++*lines;
			if (loc >= NLOC || ts < last[loc])
				bad++;
			else
				last[loc] = ts;
			if (loc < NLOC && !strcmp(type, "ENTER"))
				depth[loc]++;
			if (loc < NLOC && !strcmp(type, "LEAVE") && --depth[loc] < 0)
				bad++;
		}
		if (!nl)
			break;
		l = nl + 1;
	}
	for (int k = 0; k < NLOC; k++)
		if (depth[k])
			bad++;
	return bad;
}

static void check_clean_print(const char *name, const struct printed *p)
{
	char n[160];
	snprintf(n, sizeof n, "%s: otf2-print exits 0", name);
	check(n, p->status == 0, "expected 0, got %d (stderr: %.300s)", p->status, p->errout);
	snprintf(n, sizeof n, "%s: otf2-print says nothing on stderr", name);
	check(n, p->errout[0] == 0, "expected nothing, got '%.300s'", p->errout);
}

static void check_count(const char *name, const struct printed *p, const char *word, uint64_t want)
{
	char n[160];
	snprintf(n, sizeof n, "%s: %s records", name, word);
	check_u64(n, count_lines(p->out, word), want);
}

/* ---- the mapping on a timeline with every kind of track ---- */

/*
 * Process 200 (app) with threads 200 and 201, its child 150 (worker; a lower pid, so its group
 * comes first and names its creator ahead), process 300 that only the kernel saw, a device track
 * and an async track. 18 events, given out of track order (the exporter orders them itself):
 *
 *   event                                         records  why
 *   e0  200/200 posix open /data/in                  2      open: a region visit only
 *   e1  200/200 posix read /data/in, run of 8 x 4K   4      one operation of 32768 bytes
 *   e2  200/200 syscall read /data/in under e1       4      4096 asked, 4096 done
 *   e3  200/200 pagecache page_in under e1           2      page cache: no I/O paradigm
 *   e4  200/200 syscall read under e1 (EOF)          4      4096 asked, 0 done
 *   e5  200/200 posix write /data/out, -ENOSPC       4      100 asked, 0 done
 *   e6  200/200 posix sync /data/out                 4      mode FLUSH
 *   e7  200/200 posix close /data/in                 2
 *   e8  200/200 posix stat, no file                  2
 *   e9  200/201 posix read /data/out                 4      same handle as e5 (same process)
 *   e10 150/150 stdio write /data/out                4      ISOC paradigm
 *   e11 150/150 fs fs_write /data/out under e10      4
 *   e12 device block_write, no file                  2      no file: no handle
 *   e13 device block_flush inside e12, no file       2      nested on its own track
 *   e14 async block_write [8:1 ino 77], writeback    4      kernel group's handle
 *   e15 300/300 syscall write /data/out              4
 *   e16 200/200 syscall open /data/in                2
 *   e17 200/200 posix read /data/in, 1 call          4
 *
 * ENTER = LEAVE = 18; IO_OPERATION_BEGIN = IO_OPERATION_COMPLETE = 11 (e1 e2 e4 e5 e6 e9 e10
 * e11 e14 e15 e17); 58 event records in all.
 * Handles (group, paradigm, file): (200 POSIX in) (200 POSIX out) (200 syscall in) (150 ISOC out)
 * (150 fs out) (300 syscall out) (kernel block ino 77): 7. Paradigms: POSIX ISOC syscall fs
 * block: 5. Regions (layer:op): posix open read write sync close stat, syscall read open write,
 * pagecache page_in, stdio write, fs fs_write, block block_write block_flush: 14.
 */
static void test_mapping(void)
{
	tl_reset();
	proc(200, 1, "/usr/bin/app");
	proc(150, 200, "/opt/bin/worker");
	uint32_t in = file("/data/in", makedev(8, 1), 11), out = file("/data/out", makedev(8, 1), 12);
	uint32_t noname = file(NULL, makedev(8, 1), 77);
	uint32_t p200 = track(200, 200, LOG_LAYER_POSIX, TL_TRACK_THREAD, NULL);
	uint32_t s200 = track(200, 200, LOG_LAYER_SYSCALL, TL_TRACK_THREAD, NULL);
	uint32_t p201 = track(200, 201, LOG_LAYER_POSIX, TL_TRACK_THREAD, NULL);
	uint32_t c200 = track(200, 200, LOG_LAYER_PAGECACHE, TL_TRACK_THREAD, NULL);
	uint32_t i150 = track(150, 150, LOG_LAYER_STDIO, TL_TRACK_THREAD, NULL);
	uint32_t f150 = track(150, 150, LOG_LAYER_FS, TL_TRACK_THREAD, NULL);
	uint32_t dev = track(0, 0, LOG_LAYER_BLOCK, TL_TRACK_DEVICE, "block sda 8:0");
	uint32_t async = track(0, 0, LOG_LAYER_BLOCK, TL_TRACK_ASYNC, "writeback");
	uint32_t s300 = track(300, 300, LOG_LAYER_SYSCALL, TL_TRACK_THREAD, NULL);
	uint32_t empty = track(200, 202, LOG_LAYER_POSIX, TL_TRACK_THREAD, NULL); /* no events */
	(void)empty;

	uint32_t e0 = ev(p200, LOG_OP_OPEN, in, 1000, 1100, 0, 0, TL_NONE);
	uint32_t e1 = ev(p200, LOG_OP_READ, in, 2000, 10000, 4096, 0, TL_NONE);
	evs[e1].count = 8;
	evs[e1].busy_ns = 6000;
	evs[e1].min_ns = 500;
	evs[e1].offset = 0;
	evs[e1].flags = TL_F_RUN | TL_F_MISS;
	ev(s200, LOG_OP_READ, in, 2100, 2600, 4096, 4096, e1);
	ev(c200, LOG_OP_PAGE_IN, in, 2200, 2200, 4096, 0, e1);
	ev(s200, LOG_OP_READ, in, 2700, 2900, 4096, 0, e1);
	ev(p200, LOG_OP_WRITE, out, 11000, 12000, 100, -28, TL_NONE);
	ev(p200, LOG_OP_SYNC, out, 12500, 13000, 0, 0, TL_NONE);
	ev(p200, LOG_OP_CLOSE, in, 13100, 13200, 0, 0, TL_NONE);
	ev(p200, LOG_OP_STAT, TL_NONE, 13300, 13400, 0, 0, TL_NONE);
	ev(p201, LOG_OP_READ, out, 3000, 3500, 10, 0, TL_NONE);
	uint32_t e10 = ev(i150, LOG_OP_WRITE, out, 4000, 4100, 50, 0, TL_NONE);
	ev(f150, LOG_OP_FS_WRITE, out, 4010, 4050, 50, 50, e10);
	ev(dev, LOG_OP_BLK_WRITE, TL_NONE, 20000, 21000, 8192, 8192, TL_NONE);
	ev(dev, LOG_OP_BLK_FLUSH, TL_NONE, 20100, 20200, 0, 0, TL_NONE);
	uint32_t e14 = ev(async, LOG_OP_BLK_WRITE, noname, 22000, 23000, 16384, 16384, TL_NONE);
	evs[e14].flags = LOG_E_WRITEBACK;
	ev(s300, LOG_OP_WRITE, out, 5000, 5200, 300, 300, TL_NONE);
	ev(s200, LOG_OP_OPEN, in, 900, 950, 0, 3, TL_NONE);
	ev(p200, LOG_OP_READ, in, 14000, 14100, 512, 0, TL_NONE);
	(void)e0;

	make_tmp();
	char dir[128], err[256] = "untouched";
	snprintf(dir, sizeof dir, "%s/a/b", tmp); /* parents are created too */
	int rc = tl_export_otf2(&tl, dir, err, sizeof err);
	check_i64("mapping: tl_export_otf2 returns 0", rc, 0);
	check("mapping: err empty on success", err[0] == 0, "got '%s'", err);

	struct printed p = otf2_print(dir);
	check_clean_print("mapping", &p);
	check_count("mapping", &p, "ENTER", 18);
	check_count("mapping", &p, "LEAVE", 18);
	check_count("mapping", &p, "IO_OPERATION_BEGIN", 11);
	check_count("mapping", &p, "IO_OPERATION_COMPLETE", 11);
	check_count("mapping", &p, "IO_CREATE_HANDLE", 0);
	check_count("mapping", &p, "IO_DESTROY_HANDLE", 0);
	check_count("mapping", &p, "BUFFER_FLUSH", 0);
	check_count("mapping", &p, "LOCATION", 10);
	check_count("mapping", &p, "LOCATION_GROUP", 4);
	check_count("mapping", &p, "SYSTEM_TREE_NODE", 1);
	check_count("mapping", &p, "REGION", 14);
	check_count("mapping", &p, "IO_PARADIGM", 5);
	check_count("mapping", &p, "IO_REGULAR_FILE", 3);
	check_count("mapping", &p, "IO_HANDLE", 7);
	check_count("mapping", &p, "IO_PRE_CREATED_HANDLE_STATE", 7);
	check_count("mapping", &p, "ATTRIBUTE", 11);
	check_count("mapping", &p, "CLOCK_PROPERTIES", 1);
	check_u64("mapping: clock in ns, offset t0 (900), length t1 - t0 (22100)",
		  count_with(p.out, "CLOCK_PROPERTIES",
			     "Ticks per Seconds: 1000000000, Global Offset: 900, Length: 22100,"), 1);

	/* records per location (= the location's "# Events"): 200/200 posix has e0 e1 e5 e6 e7 e8
	 * e17: 2+4+4+4+2+2+4; syscall: e2 e4 e16: 4+4+2; pagecache 2; 201: 4; stdio and fs of 150:
	 * 4 each; device: 2+2; async: 4; 300: 4; the track without events: 0 */
	static const struct {
		const char *name;
		uint64_t records;
	} locs[] = {
		{ "tid 200 posix", 22 }, { "tid 200 syscall", 10 }, { "tid 200 pagecache", 2 }, { "tid 201 posix", 4 },
		{ "tid 150 stdio", 4 }, { "tid 150 fs", 4 }, { "block sda 8:0", 4 }, { "writeback", 4 },
		{ "tid 300 syscall", 4 }, { "tid 202 posix", 0 },
	};
	for (size_t k = 0; k < sizeof locs / sizeof locs[0]; k++) {
		char n[128];
		snprintf(n, sizeof n, "mapping: location '%s' records", locs[k].name);
		check_u64(n, location_records(p.out, locs[k].name), locs[k].records);
	}
	check_u64("mapping: thread tracks in their process's group",
		  count_with(p.out, "LOCATION", "Group: \"app (pid 200)\""), 5);
	check_u64("mapping: device and async tracks in the kernel group",
		  count_with(p.out, "LOCATION", "Group: \"kernel (no thread)\""), 2);
	check_u64("mapping: a process only the kernel saw is named by its pid",
		  count_with(p.out, "LOCATION_GROUP", "Name: \"pid 300\""), 1);
	check_u64("mapping: the child names its creator",
		  count_with(p.out, "LOCATION_GROUP", "Name: \"worker (pid 150)\" <"), 1);
	check_u64("mapping: creator", count_with(p.out, "LOCATION_GROUP", "Creator: \"app (pid 200)\""), 1);

	/* the run: one operation of 8 x 4096 bytes, its count in "calls" */
	check_u64("mapping: run's request is size x count",
		  count_with(p.out, "IO_OPERATION_BEGIN",
			     "Mode: READ, Operation Flags: NONE, Bytes Request: 32768, Matching Id: 1"), 1);
	check_u64("mapping: run's result is size x count",
		  count_with(p.out, "IO_OPERATION_COMPLETE", "Bytes Result: 32768, Matching Id: 1"), 1);
	check_u64("mapping: run's calls attribute", count_attr(p.out, "calls", "; UINT64; 8)"), 1);
	check_u64("mapping: only runs have calls", count_substr(p.out, "(\"calls\" <"), 1);
	check_u64("mapping: run's busy_ns attribute", count_attr(p.out, "busy_ns", "; UINT64; 6000)"), 1);
	check_u64("mapping: run's min_ns attribute", count_attr(p.out, "min_ns", "; UINT64; 500)"), 1);
	check_u64("mapping: a miss is named", count_attr(p.out, "page_cache", "; STRING; \"miss\""), 1);
	check_u64("mapping: nested kernel events name their user call", count_attr(p.out, "parent", "; UINT64; 1)"), 3);
	check_u64("mapping: every event's index", count_substr(p.out, "(\"event\" <"), 18);
	check_u64("mapping: the path of an open", count_attr(p.out, "file", "; STRING; \"/data/in\""), 8);
	/* failed and short operations: 0 bytes done */
	check_u64("mapping: EOF read: 4096 asked",
		  count_with(p.out, "IO_OPERATION_BEGIN", "Bytes Request: 4096, Matching Id: 4"), 1);
	check_u64("mapping: EOF read: 0 done",
		  count_with(p.out, "IO_OPERATION_COMPLETE", "Bytes Result: 0, Matching Id: 4"), 1);
	check_u64("mapping: failed write: 0 done",
		  count_with(p.out, "IO_OPERATION_COMPLETE", "Bytes Result: 0, Matching Id: 5"), 1);
	check_u64("mapping: failed write's -errno", count_attr(p.out, "result", "; INT64; -28)"), 1);
	check_u64("mapping: sync is a FLUSH", count_with(p.out, "IO_OPERATION_BEGIN", "Mode: FLUSH"), 1);
	check_u64("mapping: writes", count_with(p.out, "IO_OPERATION_BEGIN", "Mode: WRITE"), 5);
	check_u64("mapping: reads", count_with(p.out, "IO_OPERATION_BEGIN", "Mode: READ"), 5);
	check_u64("mapping: a file without a path is named by device and inode",
		  count_with(p.out, "IO_REGULAR_FILE", "Name: \"<dev 8:1 ino 77>\""), 1);
	check_u64("mapping: POSIX is OTF2's known paradigm",
		  count_with(p.out, "IO_PARADIGM", "Identification: \"POSIX\" <"), 1);
	check_u64("mapping: handles are pre-created", count_with(p.out, "IO_HANDLE", "Flags: {PRE_CREATED}"), 7);
	check_u64("mapping: regions are named layer:op", count_with(p.out, "REGION", "Name: \"syscall:read\""), 1);
	uint64_t lines;
	int bad = order_violations(p.out, &lines);
	check("mapping: timestamps ordered and regions balanced per location", bad == 0, "%d violations", bad);
	check_u64("mapping: event lines seen by the order check", lines, 58);

	/* a second export into the same directory is refused, the archive left alone */
	err[0] = 0;
	rc = tl_export_otf2(&tl, dir, err, sizeof err);
	check_i64("existing archive: refused", rc, -EEXIST);
	check("existing archive: says so",
	      strstr(err, "already holds an archive") && strstr(err, dir) && !strchr(err, '\n'), "got '%s'", err);
	printed_free(&p);
	p = otf2_print(dir);
	check_count("existing archive: still whole", &p, "ENTER", 18);
	printed_free(&p);
	remove_tmp();
}

/* An empty timeline: a valid archive with no record, and one location "(no events)" (readers
 * refuse an archive without locations). */
static void test_empty(void)
{
	tl_reset();
	make_tmp();
	char err[256];
	int rc = tl_export_otf2(&tl, tmp, err, sizeof err);
	check_i64("empty: returns 0", rc, 0);
	struct printed p = otf2_print(tmp);
	check_clean_print("empty", &p);
	check_count("empty", &p, "ENTER", 0);
	check_count("empty", &p, "LOCATION", 1);
	check_u64("empty: the placeholder location", location_records(p.out, "(no events)"), 0);
	check_count("empty", &p, "CLOCK_PROPERTIES", 1);
	printed_free(&p);
	remove_tmp();
}

/*
 * Many events on few tracks, beyond one 1 MiB event chunk, so OTF2 flushes chunks during the
 * export: 12,000 posix writes of thread 7/7 with a syscall write nested under each (4 records
 * apiece) and 6,000 stat calls of thread 7/8 (2 records). ENTER = LEAVE = 30,000;
 * IO_OPERATION_BEGIN = COMPLETE = 24,000. Then a track whose events overlap without nesting
 * (the model never makes one; the export still keeps each location's time in order).
 */
static void test_many(void)
{
	tl_reset();
	uint32_t f = file("/scratch/big", makedev(8, 2), 5);
	uint32_t pw = track(7, 7, LOG_LAYER_POSIX, TL_TRACK_THREAD, NULL);
	uint32_t sw = track(7, 7, LOG_LAYER_SYSCALL, TL_TRACK_THREAD, NULL);
	uint32_t ps = track(7, 8, LOG_LAYER_POSIX, TL_TRACK_THREAD, NULL);
	for (uint64_t k = 0; k < 12000; k++) {
		uint64_t s = 1000000 + k * 1000;
		uint32_t u = ev(pw, LOG_OP_WRITE, f, s, s + 500, 4096, 0, TL_NONE);
		evs[u].offset = k * 4096;
		ev(sw, LOG_OP_WRITE, f, s + 10, s + 490, 4096, 4096, u);
	}
	for (uint64_t k = 0; k < 6000; k++)
		ev(ps, LOG_OP_STAT, f, 1000000 + k * 2000, 1000000 + k * 2000 + 100, 0, 0, TL_NONE);
	make_tmp();
	char err[256];
	int rc = tl_export_otf2(&tl, tmp, err, sizeof err);
	check_i64("many: returns 0", rc, 0);
	struct printed p = otf2_print(tmp);
	check_clean_print("many", &p);
	check_count("many", &p, "ENTER", 30000);
	check_count("many", &p, "LEAVE", 30000);
	check_count("many", &p, "IO_OPERATION_BEGIN", 24000);
	check_count("many", &p, "IO_OPERATION_COMPLETE", 24000);
	check_count("many", &p, "BUFFER_FLUSH", 0);
	check_u64("many: the posix location's count", count_with(p.out, "LOCATION", "# Events: 48000,"), 2);
	check_u64("many: the stat location's count", count_with(p.out, "LOCATION", "# Events: 12000,"), 1);
	uint64_t lines;
	int bad = order_violations(p.out, &lines);
	check("many: timestamps ordered per location", bad == 0, "%d violations", bad);
	check_u64("many: event lines seen by the order check", lines, 108000);
	printed_free(&p);
	remove_tmp();

	/* overlapping, not nested: [100, 300] and [200, 400] on one track */
	tl_reset();
	uint32_t t = track(9, 9, LOG_LAYER_SYSCALL, TL_TRACK_THREAD, NULL);
	ev(t, LOG_OP_READ, TL_NONE, 100, 300, 1, 1, TL_NONE);
	ev(t, LOG_OP_READ, TL_NONE, 200, 400, 1, 1, TL_NONE);
	ev(t, LOG_OP_READ, TL_NONE, 500, 600, 1, 1, TL_NONE);
	make_tmp();
	rc = tl_export_otf2(&tl, tmp, err, sizeof err);
	check_i64("overlap: returns 0", rc, 0);
	p = otf2_print(tmp);
	check_clean_print("overlap", &p);
	check_count("overlap", &p, "ENTER", 3);
	check_count("overlap", &p, "LEAVE", 3);
	bad = order_violations(p.out, &lines);
	check("overlap: timestamps ordered", bad == 0, "%d violations", bad);
	check_u64("overlap: event lines seen by the order check", lines, 6);
	printed_free(&p);
	remove_tmp();
}

/* Run one export with stderr sent to a file: what did the OTF2 library print? */
static int export_quiet(const char *dir, char *err, size_t errlen, char **printed)
{
	char path[128];
	snprintf(path, sizeof path, "%s/stderr", tmp);
	fflush(stderr);
	int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (saved < 0 || fd < 0 || dup2(fd, 2) < 0) {
		perror("redirecting stderr");
		exit(2);
	}
	close(fd);
	int rc = tl_export_otf2(&tl, dir, err, errlen);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	*printed = slurp(path);
	return rc;
}

/* Directories that cannot be created, for root too: under a regular file, and in /proc. */
static void test_unwritable(void)
{
	tl_reset();
	uint32_t t = track(1, 1, LOG_LAYER_POSIX, TL_TRACK_THREAD, NULL);
	ev(t, LOG_OP_READ, TL_NONE, 10, 20, 1, 0, TL_NONE);
	make_tmp();
	char plain[128], dir[160], err[256], *noise;
	snprintf(plain, sizeof plain, "%s/plain", tmp);
	FILE *f = fopen(plain, "w");
	if (f)
		fclose(f);
	snprintf(dir, sizeof dir, "%s/sub/archive", plain);
	int rc = export_quiet(dir, err, sizeof err, &noise);
	check_i64("under a file: -ENOTDIR", rc, -ENOTDIR);
	check("under a file: one line naming the directory and the cause",
	      strstr(err, dir) && strstr(err, "cannot create the directory: Not a directory") && !strchr(err, '\n'),
	      "got '%s'", err);
	check("under a file: nothing on stderr", noise[0] == 0, "got '%s'", noise);
	free(noise);

	rc = export_quiet("/proc/iostrata-otf2-test", err, sizeof err, &noise);
	check("in /proc: fails", rc < 0, "expected an error, got %d", rc);
	check("in /proc: one line naming the directory", strstr(err, "/proc/iostrata-otf2-test") &&
	      strstr(err, "cannot create the directory") && !strchr(err, '\n'), "got '%s'", err);
	check("in /proc: nothing on stderr", noise[0] == 0, "got '%s'", noise);
	free(noise);

	/* a bad model: an event on a track that does not exist */
	evs[0].track = 5;
	snprintf(dir, sizeof dir, "%s/bad", tmp);
	rc = export_quiet(dir, err, sizeof err, &noise);
	check_i64("bad track: -EINVAL", rc, -EINVAL);
	check("bad track: says which event", strstr(err, "event 0 is on track 5 of 1") != NULL, "got '%s'", err);
	free(noise);
	struct stat st;
	check("bad track: nothing created", stat(dir, &st) < 0 && errno == ENOENT, "%s exists", dir);
	remove_tmp();
}

int main(void)
{
	if (system("command -v otf2-print >/dev/null 2>&1") != 0) {
		printf("not ok - otf2-print found: install otf2-tools (scripts/install-deps)\n");
		return 1;
	}
	test_mapping();
	test_empty();
	test_many();
	test_unwritable();
	if (failures)
		printf("# %d check%s failed\n", failures, failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}
