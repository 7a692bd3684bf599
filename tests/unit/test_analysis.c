/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of src/analysis: the profile merge (layer totals, merge rules per counter kind,
 * ranks, wall time, duplicates), the I/O mode, imbalance, top-N ordering, common sizes,
 * insights, warnings and both renderings. Every input is a struct log_file built in memory, so
 * no test depends on the reader or on the capture library; the JSON is checked by Python's
 * parser. Output: one "ok - name" / "not ok - name: detail" line per check; exit 1 on failure.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/profile.h"
#include "analysis/report_out.h"

static int failures;

static void check(const char *name, int ok, const char *fmt, ...)
{
	if (ok) {
		printf("ok - %s\n", name);
		return;
	}
	va_list ap;
	printf("not ok - %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failures++;
}

static void check_u64(const char *name, uint64_t got, uint64_t want)
{
	check(name, got == want, "got %" PRIu64 ", want %" PRIu64, got, want);
}

static void check_dbl(const char *name, double got, double want)
{
	check(name, fabs(got - want) <= 1e-12 * (fabs(want) > 1 ? fabs(want) : 1), "got %.17g, want %.17g", got,
	      want);
}

static void check_str(const char *name, const char *got, const char *want)
{
	check(name, got && !strcmp(got, want), "got '%s', want '%s'", got ? got : "(null)", want);
}

/* ---- building logs in memory ---- */

#define MAX_LOGS 256
#define STR_CAP 65536
#define REC_CAP 512

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

/* A finished process of job "job42" on host "node1": start and end in ns. */
static struct log_file *mk_log(int pid, int rank, uint64_t start, uint64_t end, const char *exe)
{
	if (nlogs == MAX_LOGS)
		exit(2);
	struct log_file *lf = &logs[nlogs++];
	memset(lf, 0, sizeof *lf);
	lf->strings = calloc(1, STR_CAP);
	lf->records = calloc(REC_CAP, sizeof *lf->records);
	if (!lf->strings || !lf->records)
		exit(2);
	lf->strings_size = 1; /* offset 0 is "" */
	char name[64];
	snprintf(name, sizeof name, "test-%d-%zu.iost", pid, nlogs);
	lf->path = strdup(name);
	struct log_header *h = &lf->hdr;
	h->pid = pid;
	h->ppid = 1;
	h->rank = rank;
	h->nprocs = -1;
	h->host = add_str(lf, "node1");
	h->exe = add_str(lf, exe);
	h->argv = add_str(lf, exe);
	add_str(lf, "--in");
	add_str(lf, "data file.bin");
	h->argc = 3;
	h->job = add_str(lf, "job42");
	h->start_ns = start;
	h->end_ns = end;
	h->start_wall_ns = 1795331969000000000ull + start;
	h->flags = LOG_F_FINISHED;
	h->exit_status = 0;
	h->file_alignment = 4096;
	h->mem_alignment = 8;
	return lf;
}

static struct log_record *add_rec(struct log_file *lf, unsigned layer, const char *path, uint16_t flags)
{
	if (lf->nrecords == REC_CAP)
		exit(2);
	struct log_record *r = &lf->records[lf->nrecords++];
	memset(r, 0, sizeof *r);
	r->layer = (uint16_t)layer;
	r->flags = (uint16_t)(LOG_R_USED | flags);
	r->path = add_str(lf, path);
	r->rank = -1;
	return r;
}

/* n accesses of size bytes each, sequential, taking t ns in all. */
static void io(struct log_record *r, int write, uint64_t n, uint64_t size, uint64_t t)
{
	uint64_t *c = r->counters;
	c[write ? LOG_C_WRITES : LOG_C_READS] += n;
	c[write ? LOG_C_BYTES_WRITTEN : LOG_C_BYTES_READ] += n * size;
	c[write ? LOG_C_TIME_WRITE : LOG_C_TIME_READ] += t;
	c[write ? LOG_C_SEQ_WRITES : LOG_C_SEQ_READS] += n ? n - 1 : 0;
	c[write ? LOG_C_CONSEC_WRITES : LOG_C_CONSEC_READS] += n ? n - 1 : 0;
	uint64_t *end = &c[write ? LOG_C_MAX_WRITE_END : LOG_C_MAX_READ_END];
	if (n * size > *end)
		*end = n * size;
	(write ? r->write_hist : r->read_hist)[log_hist_bucket(size)] += n;
	if (!r->counters[LOG_C_OPENS])
		r->counters[LOG_C_OPENS] = 1;
}

static void reset_logs(void)
{
	for (size_t i = 0; i < nlogs; i++) {
		free(logs[i].path);
		free(logs[i].strings);
		free(logs[i].records);
	}
	nlogs = 0;
}

static int build(struct ana_profile *p)
{
	int r = ana_profile_build(logs, nlogs, p);
	if (r < 0) {
		printf("not ok - ana_profile_build: %d\n", r);
		failures++;
	}
	return r;
}

static const struct ana_insight *find_insight(const struct ana_profile *p, const char *id)
{
	for (size_t i = 0; i < p->ninsights; i++)
		if (!strcmp(p->insights[i].id, id))
			return &p->insights[i];
	return NULL;
}

static int has_warning(const struct ana_profile *p, const char *needle)
{
	for (size_t i = 0; i < p->nwarnings; i++)
		if (strstr(p->warnings[i], needle))
			return 1;
	return 0;
}

/* ---- tests ---- */

static void test_merge_rules(void)
{
	uint64_t d[LOG_NCOUNTERS] = {0}, s[LOG_NCOUNTERS] = {0};

	d[LOG_C_READS] = 3, s[LOG_C_READS] = 4;                   /* SUM */
	d[LOG_C_TIME_READ] = 100, s[LOG_C_TIME_READ] = 23;        /* TIME */
	d[LOG_C_MAX_READ_END] = 50, s[LOG_C_MAX_READ_END] = 70;   /* MAX */
	d[LOG_C_MAX_WRITE_END] = 90, s[LOG_C_MAX_WRITE_END] = 10; /* MAX, dst wins */
	d[LOG_C_SLOWEST_READ_TIME] = 5, d[LOG_C_SLOWEST_READ_SIZE] = 111;
	s[LOG_C_SLOWEST_READ_TIME] = 9, s[LOG_C_SLOWEST_READ_SIZE] = 222;   /* TMAX: src wins, size follows */
	d[LOG_C_SLOWEST_WRITE_TIME] = 9, d[LOG_C_SLOWEST_WRITE_SIZE] = 333;
	s[LOG_C_SLOWEST_WRITE_TIME] = 5, s[LOG_C_SLOWEST_WRITE_SIZE] = 444; /* TMAX: dst keeps its size */
	d[LOG_C_OPEN_FIRST] = 0, s[LOG_C_OPEN_FIRST] = 700;       /* FIRST: 0 is "never" */
	d[LOG_C_READ_FIRST] = 300, s[LOG_C_READ_FIRST] = 0;       /* FIRST: src 0 ignored */
	d[LOG_C_WRITE_FIRST] = 300, s[LOG_C_WRITE_FIRST] = 200;   /* FIRST: min */
	d[LOG_C_READ_LAST] = 300, s[LOG_C_READ_LAST] = 800;       /* LAST: max */
	d[LOG_C_WRITE_LAST] = 900, s[LOG_C_WRITE_LAST] = 0;
	ana_counters_merge(d, s);
	check_u64("merge SUM adds", d[LOG_C_READS], 7);
	check_u64("merge TIME adds", d[LOG_C_TIME_READ], 123);
	check_u64("merge MAX takes the larger", d[LOG_C_MAX_READ_END], 70);
	check_u64("merge MAX keeps the larger dst", d[LOG_C_MAX_WRITE_END], 90);
	check_u64("merge TMAX takes the slower op", d[LOG_C_SLOWEST_READ_TIME], 9);
	check_u64("merge TMAX brings its SIZE", d[LOG_C_SLOWEST_READ_SIZE], 222);
	check_u64("merge TMAX keeps the slower dst", d[LOG_C_SLOWEST_WRITE_TIME], 9);
	check_u64("merge SIZE stays with its TMAX", d[LOG_C_SLOWEST_WRITE_SIZE], 333);
	check_u64("merge FIRST from zero", d[LOG_C_OPEN_FIRST], 700);
	check_u64("merge FIRST ignores a zero source", d[LOG_C_READ_FIRST], 300);
	check_u64("merge FIRST minimum", d[LOG_C_WRITE_FIRST], 200);
	check_u64("merge LAST maximum", d[LOG_C_READ_LAST], 800);
	check_u64("merge LAST keeps dst over zero", d[LOG_C_WRITE_LAST], 900);
}

static void test_layer_totals(void)
{
	struct ana_profile p;
	struct log_file *lf = mk_log(100, -1, 1000, 11000, "/bin/app");
	struct log_record *a = add_rec(lf, LOG_LAYER_POSIX, "/data/a", 0);
	uint64_t *c = a->counters;
	c[LOG_C_OPENS] = 2, c[LOG_C_CLOSES] = 2, c[LOG_C_SEEKS] = 3, c[LOG_C_STATS] = 1, c[LOG_C_FSYNCS] = 1;
	c[LOG_C_RENAMES] = 1, c[LOG_C_DUPS] = 1, c[LOG_C_MMAPS] = 1, c[LOG_C_META_OTHER] = 1;
	c[LOG_C_FLUSHES] = 5; /* not metadata */
	c[LOG_C_TIME_META] = 4000;
	io(a, 1, 10, 4096, 1000);
	struct log_record *b = add_rec(lf, LOG_LAYER_POSIX, "/data/b", 0);
	io(b, 0, 4, 1000, 500);
	b->counters[LOG_C_CLOSES] = 1;
	struct log_record *s = add_rec(lf, LOG_LAYER_STDIO, "/data/b", 0);
	io(s, 0, 8, 500, 300);
	add_rec(lf, LOG_LAYER_POSIX, "<overflow>", LOG_R_OVERFLOW | LOG_R_PSEUDO); /* untouched catch-all */
	add_rec(lf, LOG_LAYER_POSIX, "<STDIN>", LOG_R_PSEUDO);                      /* untouched */
	if (build(&p) < 0)
		goto out;
	const struct ana_layer *P = &p.layers[LOG_LAYER_POSIX], *S = &p.layers[LOG_LAYER_STDIO];
	check_u64("ana_meta_ops leaves flushes out", ana_meta_ops(c), 13);
	check_u64("posix meta_ops", P->meta_ops, 13 + 1 + 1); /* b: open from io() + close */
	check_u64("posix opens", P->c[LOG_C_OPENS], 3);
	check_u64("posix reads", P->c[LOG_C_READS], 4);
	check_u64("posix writes", P->c[LOG_C_WRITES], 10);
	check_u64("posix bytes_read", P->c[LOG_C_BYTES_READ], 4000);
	check_u64("posix bytes_written", P->c[LOG_C_BYTES_WRITTEN], 40960);
	check_u64("posix time_read", P->c[LOG_C_TIME_READ], 500);
	check_u64("posix time_write", P->c[LOG_C_TIME_WRITE], 1000);
	check_u64("posix time_meta", P->c[LOG_C_TIME_META], 4000);
	check_u64("posix records (untouched ones skipped)", P->nrecords, 2);
	check_u64("posix files", P->nfiles, 2);
	check_u64("stdio bytes_read", S->c[LOG_C_BYTES_READ], 4000);
	check_u64("stdio meta_ops", S->meta_ops, 1);
	check_u64("write hist bucket of 4096", P->write_hist[13], 10);
	check_u64("files entries", p.nfiles, 3);
	check_u64("wall time", p.wall_ns, 10000);
	struct ana_rates r = ana_layer_rates(P, p.wall_ns);
	check_dbl("bandwidth in I/O", r.bw_io, 44960.0 / 1500e-9);
	check_dbl("bandwidth over wall", r.bw_wall, 44960.0 / 10000e-9);
	check_dbl("IOPS", r.iops, 14 / 10000e-9);
	check_dbl("MDOPS", r.mdops, 15 / 10000e-9);
	check_str("job id", p.job_id, "job42");
	check_u64("one rank for one unranked process", p.nranks, 1);
	check("process finished", p.finished == 1, "finished=%d", p.finished);
	check_u64("no warnings for a clean log", p.nwarnings, 0);
	ana_profile_free(&p);
out:
	reset_logs();
}

static void test_same_rank_merge(void)
{
	struct ana_profile p;
	/* Rank 0's two processes (a parent and its child) both touched /data/x. */
	struct log_file *a = mk_log(10, 0, 1000, 5000, "/bin/app");
	struct log_file *b = mk_log(11, 0, 2000, 4000, "/bin/app");
	struct log_record *ra = add_rec(a, LOG_LAYER_POSIX, "/data/x", 0);
	struct log_record *rb = add_rec(b, LOG_LAYER_POSIX, "/data/x", 0);
	io(ra, 0, 2, 100, 10);
	io(rb, 0, 3, 100, 20);
	ra->counters[LOG_C_READ_FIRST] = 1500, ra->counters[LOG_C_READ_LAST] = 1600;
	rb->counters[LOG_C_READ_FIRST] = 2500, rb->counters[LOG_C_READ_LAST] = 3500;
	ra->counters[LOG_C_SLOWEST_READ_TIME] = 7, ra->counters[LOG_C_SLOWEST_READ_SIZE] = 100;
	rb->counters[LOG_C_SLOWEST_READ_TIME] = 9, rb->counters[LOG_C_SLOWEST_READ_SIZE] = 50;
	if (build(&p) < 0)
		goto out;
	check_u64("same rank: one files entry", p.nfiles, 1);
	check_u64("same rank: one rank", p.nranks, 1);
	check_u64("same rank: nprocs merged", p.files[0].nprocs, 2);
	check_u64("same rank: pid of the first process", (uint64_t)p.files[0].pid, 10);
	check_u64("same rank: reads summed", p.files[0].c[LOG_C_READS], 5);
	check_u64("same rank: READ_FIRST min", p.files[0].c[LOG_C_READ_FIRST], 1500);
	check_u64("same rank: READ_LAST max", p.files[0].c[LOG_C_READ_LAST], 3500);
	check_u64("same rank: slowest read size follows", p.files[0].c[LOG_C_SLOWEST_READ_SIZE], 50);
	check_u64("same rank: rank bytes", p.ranks[0].bytes_read, 500);
	ana_profile_free(&p);
out:
	reset_logs();
}

static void test_wall_and_live(void)
{
	struct ana_profile p;
	mk_log(1, 0, 1000, 5000, "/bin/app");
	struct log_file *b = mk_log(2, 1, 2000, 0, "/bin/app");
	b->live = 1;
	b->hdr.flags = LOG_F_LIVE;
	b->hdr.exit_status = -1;
	struct log_record *r = add_rec(b, LOG_LAYER_POSIX, "/data/y", 0);
	io(r, 1, 1, 10, 5);
	r->counters[LOG_C_WRITE_LAST] = 9000;
	r->counters[LOG_C_OPEN_LAST] = 3000;
	struct log_file *c = mk_log(3, 2, 1500, 0, "/bin/app");
	c->live = 1;
	c->hdr.flags = LOG_F_LIVE | LOG_F_OVERFLOW;
	c->hdr.overflow_opens = 12;
	c->hdr.untracked_ops = 3;
	struct log_file *d = mk_log(4, 3, 1200, 4000, "/bin/app");
	d->hdr.flags |= LOG_F_CRASHED;
	d->hdr.term_signal = 9;
	if (build(&p) < 0)
		goto out;
	check_u64("wall: latest LAST of a live process - first start", p.wall_ns, 8000);
	check_u64("live process without records ends at its start", p.procs[2].end_ns, 1500);
	check("job not finished", p.finished == 0, "finished=%d", p.finished);
	check("warning: did not finish",
	      has_warning(&p, "pid 2 (app) did not finish: counters as they stood when read"),
	      "missing");
	check("warning: overflow names the tables and <overflow>",
	      has_warning(&p, "pid 3 (app): tables overflowed (12 opens beyond the file table, 3 ops on fds beyond "
			      "the fd table)") && has_warning(&p, "\"<overflow>\""), "missing");
	check("warning: crashed", has_warning(&p, "pid 4 (app): log recovered after the process died (signal 9)"),
	      "missing");
	check_str("first process is the command", p.first->exe, "/bin/app");
	check_u64("first process by start", (uint64_t)p.first->pid, 1);
	ana_profile_free(&p);
out:
	reset_logs();
}

static void test_duplicates_and_exec(void)
{
	struct ana_profile p;
	struct log_file *fin = mk_log(7, -1, 1000, 3000, "/bin/app");
	io(add_rec(fin, LOG_LAYER_POSIX, "/data/z", 0), 1, 2, 10, 4);
	struct log_file *live = mk_log(7, -1, 1000, 0, "/bin/app");
	live->live = 1;
	io(add_rec(live, LOG_LAYER_POSIX, "/data/z", 0), 1, 1, 10, 2);
	/* pid 8 exec'd: two images, one process */
	struct log_file *e1 = mk_log(8, -1, 1100, 1500, "/bin/sh");
	e1->hdr.flags |= LOG_F_EXEC;
	struct log_file *e2 = mk_log(8, -1, 1500, 2500, "/bin/app");
	io(add_rec(e1, LOG_LAYER_POSIX, "/data/e", 0), 0, 1, 10, 1);
	io(add_rec(e2, LOG_LAYER_POSIX, "/data/e", 0), 0, 1, 10, 1);
	/* a launcher's child (pid 9) exec'd rank 5's program: its first image has no rank */
	struct log_file *l1 = mk_log(9, -1, 1200, 1300, "/bin/sh");
	l1->hdr.flags |= LOG_F_EXEC;
	io(add_rec(l1, LOG_LAYER_POSIX, "/data/l", 0), 0, 1, 10, 1);
	io(add_rec(mk_log(9, 5, 1300, 2000, "/bin/app"), LOG_LAYER_POSIX, "/data/l", 0), 0, 1, 10, 1);
	if (build(&p) < 0)
		goto out;
	check_u64("duplicate live log of a finished process dropped", p.nprocs, 5);
	check("the final log wins", p.finished == 1, "finished=%d", p.finished);
	check_u64("exec chain is one rank", p.nranks, 3);
	check("an unranked image joins its pid's rank", p.ranks[0].rank == 5 && p.ranks[0].nprocs == 2 &&
	      p.ranks[0].bytes_read == 20, "rank %d nprocs %u bytes %" PRIu64, p.ranks[0].rank, p.ranks[0].nprocs,
	      p.ranks[0].bytes_read);
	check_u64("pid 7 bytes once", p.ranks[1].bytes_written, 20);
	check_u64("exec chain merged bytes", p.ranks[2].bytes_read, 20);
	ana_profile_free(&p);
out:
	reset_logs();
}

static void test_stdio_not_double_counted(void)
{
	struct ana_profile p;
	struct log_file *a = mk_log(20, -1, 0, 100, "/bin/app");
	a->hdr.flags |= LOG_F_STDIO_SYSCALLS;
	io(add_rec(a, LOG_LAYER_STDIO, "/data/s", 0), 1, 100, 10, 50);
	io(add_rec(a, LOG_LAYER_POSIX, "/data/s", 0), 1, 1, 1000, 20);
	struct log_file *b = mk_log(21, -1, 0, 100, "/bin/app");
	io(add_rec(b, LOG_LAYER_STDIO, "/data/t", 0), 1, 100, 10, 50);
	if (build(&p) < 0)
		goto out;
	check_u64("stdio bytes left out when its syscalls are in posix", p.ranks[0].bytes_written, 1000);
	check_u64("stdio writes left out when its syscalls are in posix", p.ranks[0].writes, 1);
	check_u64("stdio bytes counted when posix lacks them", p.ranks[1].bytes_written, 1000);
	check_u64("layer totals keep both layers", p.layers[LOG_LAYER_STDIO].c[LOG_C_BYTES_WRITTEN], 2000);
	ana_profile_free(&p);
out:
	reset_logs();
}

static void mode_case(const char *name, const char *want, size_t P, size_t F, size_t N)
{
	struct ana_profile p;
	char buf[128];

	if (build(&p) < 0)
		goto out;
	snprintf(buf, sizeof buf, "io mode %s", name);
	check_str(buf, ana_io_mode_name(p.io_mode.mode), want);
	snprintf(buf, sizeof buf, "io mode %s: P F N", name);
	check(buf, p.io_mode.ranks_with_data == P && p.io_mode.data_files == F && p.io_mode.ranks == N,
	      "P=%zu F=%zu N=%zu, want %zu %zu %zu", p.io_mode.ranks_with_data, p.io_mode.data_files,
	      p.io_mode.ranks,
	      P, F, N);
	ana_profile_free(&p);
out:
	reset_logs();
}

static void test_io_modes(void)
{
	/* 1 process, one file */
	io(add_rec(mk_log(1, -1, 0, 10, "/bin/app"), LOG_LAYER_POSIX, "/data/out", 0), 1, 1, 100, 1);
	mode_case("1 process 1 file", "1-1", 1, 1, 1);

	/* 4 ranks, one writer; the others touch only system files and stdout */
	for (int k = 0; k < 4; k++) {
		struct log_file *lf = mk_log(10 + k, k, 0, 10, "/bin/app");
		io(add_rec(lf, LOG_LAYER_POSIX, "/usr/lib/libfoo.so", 0), 0, 1, 832, 1);
		io(add_rec(lf, LOG_LAYER_POSIX, "<STDOUT>", LOG_R_PSEUDO), 1, 1, 20, 1);
		if (k == 0)
			io(add_rec(lf, LOG_LAYER_POSIX, "/data/out", 0), 1, 4, 100, 1);
	}
	mode_case("4 ranks 1 writer", "1-1", 1, 1, 4);

	/* 4 ranks, one shared file (one of them through stdio) */
	for (int k = 0; k < 4; k++)
		io(add_rec(mk_log(10 + k, k, 0, 10, "/bin/app"), k == 3 ? LOG_LAYER_STDIO : LOG_LAYER_POSIX,
			   "/scratch/shared.dat", 0),
		   1, 1, 100, 1);
	mode_case("4 ranks 1 shared file", "N-1", 4, 1, 4);

	/* 4 ranks, 4 files; /dev/shm counts as data */
	for (int k = 0; k < 4; k++) {
		char path[64];
		snprintf(path, sizeof path, k == 2 ? "/dev/shm/part.%d" : "/scratch/part.%d", k);
		io(add_rec(mk_log(10 + k, k, 0, 10, "/bin/app"), LOG_LAYER_POSIX, path, 0), 1, 1, 100, 1);
	}
	mode_case("4 ranks 4 files", "N-N", 4, 4, 4);

	/* 4 ranks, 2 files */
	for (int k = 0; k < 4; k++) {
		char path[64];
		snprintf(path, sizeof path, "/scratch/group.%d", k / 2);
		io(add_rec(mk_log(10 + k, k, 0, 10, "/bin/app"), LOG_LAYER_POSIX, path, 0), 1, 1, 100, 1);
	}
	mode_case("4 ranks 2 files", "N-M", 4, 2, 4);

	/* only system files: none */
	{
		struct log_file *lf = mk_log(1, -1, 0, 10, "/bin/app");
		io(add_rec(lf, LOG_LAYER_POSIX, "/usr/share/zoneinfo/UTC", 0), 0, 1, 100, 1);
		io(add_rec(lf, LOG_LAYER_POSIX, "/etc/passwd", 0), 0, 1, 100, 1);
		io(add_rec(lf, LOG_LAYER_POSIX, "/lib64/ld.so", 0), 0, 1, 100, 1);
		io(add_rec(lf, LOG_LAYER_POSIX, "/dev/null", 0), 1, 1, 100, 1);
		io(add_rec(lf, LOG_LAYER_POSIX, "/proc/self/maps", 0), 0, 1, 100, 1);
		io(add_rec(lf, LOG_LAYER_POSIX, "<overflow>", LOG_R_OVERFLOW | LOG_R_PSEUDO), 0, 1, 100, 1);
		add_rec(lf, LOG_LAYER_POSIX, "/data/opened-only", 0)->counters[LOG_C_OPENS] = 1;
	}
	mode_case("only system files", "none", 0, 0, 1);

	check("data path /usr/lib", !ana_is_data_path("/usr/lib/x.so"), "classified as data");
	check("data path /usr exact", !ana_is_data_path("/usr"), "classified as data");
	check("data path /usrdata", ana_is_data_path("/usrdata/x"), "classified as system");
	check("data path /library", ana_is_data_path("/library/x"), "classified as system");
	check("data path /dev/shm", ana_is_data_path("/dev/shm/x"), "classified as system");
	check("data path /dev/shmx", !ana_is_data_path("/dev/shmx"), "classified as data");
	check("data path relative", ana_is_data_path("out.dat"), "classified as system");
}

static void test_imbalance(void)
{
	struct ana_profile p;
	static const uint64_t bytes[4] = {100, 100, 100, 500};
	for (int k = 0; k < 4; k++)
		io(add_rec(mk_log(30 + k, k, 0, 100, "/bin/app"), LOG_LAYER_POSIX, "/scratch/f", 0), 1, 1, bytes[k],
		   10);
	/* rank 4 only opened a file: it does not count as doing I/O */
	add_rec(mk_log(34, 4, 0, 100, "/bin/app"), LOG_LAYER_POSIX, "/scratch/g", 0)->counters[LOG_C_OPENS] = 1;
	if (build(&p) < 0)
		goto out;
	check_u64("imbalance: ranks with I/O", p.ranks_with_io, 4);
	check_dbl("imbalance of bytes = max/mean", p.imbalance_bytes, 2.5);
	check_dbl("imbalance of time = max/mean", p.imbalance_time, 1.0);
	const struct ana_insight *in = find_insight(&p, "rank_imbalance");
	check("imbalance insight", in && strstr(in->text, "rank 3 moved 2.50x the mean bytes"), "text: %s",
	      in ? in->text : "(none)");
	ana_profile_free(&p);
out:
	reset_logs();
}

static void test_top_order(void)
{
	struct ana_profile p;
	struct log_file *lf = mk_log(1, -1, 0, 100, "/bin/app");
	io(add_rec(lf, LOG_LAYER_POSIX, "/d/small", 0), 1, 1, 5, 900);
	io(add_rec(lf, LOG_LAYER_POSIX, "/d/bbb", 0), 1, 1, 50, 10);
	io(add_rec(lf, LOG_LAYER_POSIX, "/d/aaa", 0), 0, 1, 50, 20);
	add_rec(lf, LOG_LAYER_POSIX, "/d/none", 0)->counters[LOG_C_STATS] = 1; /* no bytes, no time */
	struct log_file *lf2 = mk_log(2, -1, 0, 100, "/bin/app");
	io(add_rec(lf2, LOG_LAYER_POSIX, "/d/small", 0), 1, 1, 5, 100);
	if (build(&p) < 0)
		goto out;
	check_u64("top by bytes leaves zero rows out", p.nby_bytes, 3);
	check_str("top by bytes #1 (tie broken by path)", p.paths[p.by_bytes[0]].path, "/d/aaa");
	check_str("top by bytes #2", p.paths[p.by_bytes[1]].path, "/d/bbb");
	check_str("top by bytes #3", p.paths[p.by_bytes[2]].path, "/d/small");
	check_u64("per-path row merges ranks", p.paths[p.by_bytes[2]].nranks, 2);
	check_str("top by time #1 (merged over ranks)", p.paths[p.by_time[0]].path, "/d/small");
	check_u64("top by time #1 time", p.paths[p.by_time[0]].c[LOG_C_TIME_WRITE], 1000);
	check_str("top by time #2", p.paths[p.by_time[1]].path, "/d/aaa");
	ana_profile_free(&p);
out:
	reset_logs();
}

static void test_common_sizes(void)
{
	struct ana_profile p;
	struct log_file *lf = mk_log(1, -1, 0, 100, "/bin/app");
	struct log_record *a = add_rec(lf, LOG_LAYER_POSIX, "/d/a", 0);
	struct log_record *b = add_rec(lf, LOG_LAYER_POSIX, "/d/b", 0);
	io(a, 1, 1, 1, 1);
	io(b, 1, 1, 1, 1);
	/* 4096 twice in one record: two racing threads claimed two slots for it */
	a->sizes[0] = (struct log_common){4096, 10};
	a->sizes[1] = (struct log_common){100, 3};
	a->sizes[2] = (struct log_common){4096, 2};
	a->sizes_other = 5;
	b->sizes[0] = (struct log_common){100, 20};
	b->sizes[1] = (struct log_common){8, 1};
	b->sizes[2] = (struct log_common){4096, 1};
	b->sizes[3] = (struct log_common){7, 1};
	b->sizes[4] = (struct log_common){9, 1};
	b->strides[0] = (struct log_common){-4096, 4};
	b->strides[1] = (struct log_common){4096, 4};
	if (build(&p) < 0)
		goto out;
	const struct ana_layer *L = &p.layers[LOG_LAYER_POSIX];
	check_u64("common sizes: top 4 kept", L->nsizes, 4);
	check("common sizes #1 = 100 x23", L->sizes[0].value == 100 && L->sizes[0].count == 23,
	      "%" PRId64 " x%" PRIu64,
	      L->sizes[0].value, L->sizes[0].count);
	check("common sizes #2 = 4096 x13", L->sizes[1].value == 4096 && L->sizes[1].count == 13,
	      "%" PRId64 " x%" PRIu64,
	      L->sizes[1].value, L->sizes[1].count);
	check("common sizes ties by value", L->sizes[2].value == 7 && L->sizes[3].value == 8,
	      "%" PRId64 ", %" PRId64,
	      L->sizes[2].value, L->sizes[3].value);
	check_u64("common sizes: untracked summed", L->sizes_other, 5);
	check("common strides: negative stride kept",
	      L->nstrides == 2 && L->strides[0].value == -4096 && L->strides[1].value == 4096, "n=%zu", L->nstrides);
	ana_profile_free(&p);
out:
	reset_logs();
}

static void test_insights(void)
{
	struct ana_profile p;
	struct log_file *lf = mk_log(1, -1, 0, 1000000000, "/bin/app");
	/* 1000 writes of 100 B taking all the time, 10 of 1 MiB taking little */
	struct log_record *w = add_rec(lf, LOG_LAYER_POSIX, "/d/log.txt", 0);
	io(w, 1, 1000, 100, 900000);
	io(w, 1, 10, 1 << 20, 100000);
	/* re-read: 4 MiB read of a 1 MiB file */
	struct log_record *rr = add_rec(lf, LOG_LAYER_POSIX, "/d/input", 0);
	io(rr, 0, 4, 1 << 20, 1000);
	rr->counters[LOG_C_MAX_READ_END] = 1 << 20;
	/* opened, never used */
	add_rec(lf, LOG_LAYER_POSIX, "/d/unused.cfg", 0)->counters[LOG_C_OPENS] = 2;
	/* failed opens */
	add_rec(lf, LOG_LAYER_POSIX, "/d/missing", 0)->counters[LOG_C_ERR_OPENS] = 3;
	/* tiny fwrites */
	io(add_rec(lf, LOG_LAYER_STDIO, "/d/log.txt", 0), 1, 2000, 12, 1000);
	/* 101 small files */
	for (int i = 0; i < 101; i++) {
		char path[64];
		snprintf(path, sizeof path, "/d/many/f%03d", i);
		io(add_rec(lf, LOG_LAYER_POSIX, path, 0), 1, 1, 1000, 1);
	}
	if (build(&p) < 0)
		goto out;
	const struct ana_insight *in;
	in = find_insight(&p, "small_writes");
	check("insight small_writes", in && strstr(in->text, "larger writes") && strstr(in->text, "posix writes"),
	      "%s", in ? in->text : "(none)");
	in = find_insight(&p, "rereads");
	check("insight rereads", in && strstr(in->text, "/d/input") && strstr(in->text, "4.0x"), "%s",
	      in ? in->text : "(none)");
	in = find_insight(&p, "unused_opens");
	check("insight unused_opens", in && strstr(in->text, "/d/unused.cfg"), "%s", in ? in->text : "(none)");
	in = find_insight(&p, "errors");
	check("insight errors names counter and file", in && strstr(in->text, "err_opens = 3") &&
	      strstr(in->text, "/d/missing"), "%s", in ? in->text : "(none)");
	in = find_insight(&p, "tiny_fwrites");
	check("insight tiny_fwrites", in && strstr(in->text, "setvbuf"), "%s", in ? in->text : "(none)");
	in = find_insight(&p, "small_files");
	check("insight small_files", in && strstr(in->text, "10") && strstr(in->text, "1 MiB"), "%s",
	      in ? in->text : "(none)");
	check("no random insight for sequential I/O", !find_insight(&p, "random_writes"), "present");
	ana_profile_free(&p);
	reset_logs();

	/* a quiet, healthy job says nothing */
	io(add_rec(mk_log(1, -1, 0, 1000, "/bin/app"), LOG_LAYER_POSIX, "/d/big", 0), 1, 200, 1 << 20, 1000);
	if (build(&p) < 0)
		goto out;
	check_u64("healthy job: no insights", p.ninsights, 0);
	ana_profile_free(&p);
out:
	reset_logs();
}

static void test_text_helpers(void)
{
	char out[256];
	ana_text_tail("/a/very/long/path/to/some/file.dat", 12, out, sizeof out);
	check_str("tail keeps the end behind an ellipsis", out, "\xe2\x80\xa6" "me/file.dat");
	ana_text_tail("short", 12, out, sizeof out);
	check_str("tail leaves short strings", out, "short");
	size_t w = ana_text_clean("a\x1b[2Jb\xff\xc3\xa9", out, sizeof out);
	check_str("clean replaces controls and invalid bytes", out, "a?[2Jb?\xc3\xa9");
	check_u64("clean counts columns", w, 8);
}

/* Run a Python snippet on the JSON file; the snippet exits non-zero on a failed assertion. */
static void check_python(const char *name, const char *json_path, const char *code)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd,
		 "python3 -c 'import json,sys\nd=json.load(open(sys.argv[1]))\n%s' %s >/dev/null 2>&1", code,
		 json_path);
	int r = system(cmd);
	check(name, r == 0, "python exit %d (%s)", r, code);
}

static void test_renderings(void)
{
	struct ana_profile p;
	struct ana_report_opts o = {.top_n = 2};
	char json_path[] = "/tmp/iostrata-test-XXXXXX";
	char longpath[400];

	struct log_file *a = mk_log(100, 0, 1000, 1000000, "/bin/app");
	struct log_record *r = add_rec(a, LOG_LAYER_POSIX, "/scratch/out.dat", 0);
	io(r, 1, 3, 4096, 123456);
	r->counters[LOG_C_TIME_META] = 1000000001;
	io(add_rec(a, LOG_LAYER_POSIX, "/scratch/bad\n\x01\xff\"name", 0), 0, 1, 7, 3);
	memset(longpath, 'x', sizeof longpath - 1);
	longpath[0] = '/';
	longpath[sizeof longpath - 1] = '\0';
	memcpy(longpath + sizeof longpath - 12, "/tail.h5", 9);
	io(add_rec(a, LOG_LAYER_STDIO, longpath, 0), 1, 2, 10, 5);
	struct log_file *b = mk_log(101, 1, 2000, 0, "/bin/app");
	b->live = 1;
	b->hdr.flags = LOG_F_LIVE;
	io(add_rec(b, LOG_LAYER_POSIX, "/scratch/out.dat", 0), 1, 1, 4096, 10);
	/* 25 ranks so the rank table collapses */
	for (int k = 2; k < 25; k++)
		io(add_rec(mk_log(100 + k, k, 1000, 2000, "/bin/app"), LOG_LAYER_POSIX, "/scratch/out.dat", 0), 1, 1,
		   (uint64_t)k, 1);
	if (build(&p) < 0)
		goto out;

	/* text: every line fits 100 columns; the long path shows its tail */
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	int rc = ana_report_text(m, &p, &o);
	fclose(m);
	check("text report renders", rc == 0 && text && len > 0, "rc=%d", rc);
	size_t widest = 0, line_w = 0;
	for (const char *s = text; s && *s; s++) {
		if (*s == '\n') {
			widest = line_w > widest ? line_w : widest;
			line_w = 0;
		} else if (((unsigned char)*s & 0xc0) != 0x80) {
			line_w++;
		}
	}
	if (getenv("TEST_ANALYSIS_SHOW"))
		fputs(text, stderr);
	check("text fits 100 columns", widest <= ANA_TEXT_WIDTH, "widest line %zu", widest);
	check("text cuts long paths from the left",
	      text && strstr(text, "\xe2\x80\xa6" "xxxxxxxx") && strstr(text, "x/tail.h5"), "missing");
	check("text has no control characters", text && !strchr(text, '\x01'), "found one");
	check("text says a process did not finish",
	      text && strstr(text, "pid 101 (app) did not finish: counters as they stood when read"), "missing");
	check("text collapses the rank table", text && strstr(text, "20 heaviest ranks"), "missing");
	check("text names the I/O mode", text && strstr(text, "N-M: 25 ranks share 3 data files (M = 3)"),
	      "missing");
	free(text);

	int fd = mkstemp(json_path);
	FILE *jf = fd >= 0 ? fdopen(fd, "w") : NULL;
	check("json temp file", jf != NULL, "mkstemp failed");
	if (!jf)
		goto done;
	rc = ana_report_json(jf, &p, &o);
	fclose(jf);
	check("json report renders", rc == 0, "rc=%d", rc);
	check_python("json parses", json_path, "pass");
	check_python("json layers.posix.bytes_written", json_path,
		     "assert d[\"layers\"][\"posix\"][\"bytes_written\"] == 4*4096 + sum(range(2,25))");
	check_python("json layers.stdio present", json_path, "assert d[\"layers\"][\"stdio\"][\"writes\"] == 2");
	check_python("json job fields", json_path,
		     "j=d[\"job\"]\nassert j[\"id\"]==\"job42\" and j[\"io_mode\"]==\"N-M\" and j[\"nprocs\"]==25 "
		     "and j[\"finished\"] is False and j[\"command\"]==\"/bin/app --in \\x27data file.bin\\x27\"");
	check_python("json per-process finished", json_path,
		     "f={x[\"pid\"]: x[\"finished\"] for x in d[\"processes\"]}\n"
		     "assert f[101] is False and f[100] is True");
	check_python("json files carry rank, pid and counters", json_path,
		     "f=[x for x in d[\"files\"] if x[\"path\"]==\"/scratch/out.dat\" and x[\"rank\"]==0][0]\n"
		     "assert f[\"pid\"]==100 and f[\"layer\"]==\"posix\" and f[\"counters\"][\"bytes_written\"]==12288 "
		     "and f[\"counters\"][\"time_meta\"]==1000000001");
	check_python("json escapes control chars and invalid UTF-8", json_path,
		     "assert any(x[\"path\"]==\"/scratch/bad\\n\\x01\\ufffd\\x22name\" for x in d[\"files\"])");
	check_python("json top_files_by_bytes obeys --top", json_path,
		     "t=d[\"top_files_by_bytes\"]\nassert len(t)==2 and t[0][\"path\"]==\"/scratch/out.dat\"");
	check_python("json ranks and imbalance", json_path,
		     "assert len(d[\"ranks\"])==25 and d[\"imbalance\"][\"ranks_with_io\"]==25");
	check_python("json keys present", json_path,
		     "assert all(k in d for k in (\"sizes\",\"patterns\",\"common_sizes\",\"common_strides\","
		     "\"top_files_by_time\",\"insights\",\"warnings\"))");

	/* times are printed from integer ns: check the exact text, not a float */
	FILE *rf = fopen(json_path, "r");
	char *raw = NULL;
	size_t rawlen = 0;
	if (rf && getdelim(&raw, &rawlen, '\0', rf) > 0) {
		check("json time with ns precision", strstr(raw, "\"time_write\":0.000123456") != NULL, "missing");
		check("json time over a second", strstr(raw, "\"time_meta\":1.000000001") != NULL, "missing");
	} else {
		check("json read back", 0, "failed");
	}
	free(raw);
	if (rf)
		fclose(rf);
done:
	unlink(json_path);
	ana_profile_free(&p);
out:
	reset_logs();
}

static void test_empty_job(void)
{
	struct ana_profile p;
	if (build(&p) < 0)
		return;
	check_str("empty job: mode none", ana_io_mode_name(p.io_mode.mode), "none");
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	int rc = ana_report_text(m, &p, NULL) | ana_report_json(m, &p, NULL);
	fclose(m);
	check("empty job renders", rc == 0, "rc=%d", rc);
	free(text);
	ana_profile_free(&p);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	test_merge_rules();
	test_layer_totals();
	test_same_rank_merge();
	test_wall_and_live();
	test_duplicates_and_exec();
	test_stdio_not_double_counted();
	test_io_modes();
	test_imbalance();
	test_top_order();
	test_common_sizes();
	test_insights();
	test_text_helpers();
	test_renderings();
	test_empty_job();
	if (failures)
		printf("# %d check%s failed\n", failures, failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}
