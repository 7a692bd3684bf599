/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of src/analysis: the profile merge (layer totals, merge rules per counter kind,
 * ranks, wall time, duplicates), the I/O mode, imbalance, top-N ordering, common sizes,
 * insights, warnings and both renderings, and jobs with a kernel log (the kernel log is no
 * process; its layers join below the user layers; processes only the kernel saw stand in with
 * their system calls; "Down the stack" figures). Every input is a struct log_file built in memory, so
 * no test depends on the reader or on the capture library; the JSON is checked by Python's
 * parser. Output: one "ok - name" / "not ok - name: detail" line per check; exit 1 on failure.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/sysmacros.h>

#include "analysis/profile.h"
#include "analysis/job.h"
#include "analysis/report.h"
#include "analysis/text.h"
#include "analysis/stack.h"

#include "check.h"

static void check_u64(const char *name, uint64_t got, uint64_t want)
{
	check(name, got == want, "got %" PRIu64 ", want %" PRIu64, got, want);
}

static void check_i64(const char *name, int64_t got, int64_t want)
{
	check(name, got == want, "got %" PRId64 ", want %" PRId64, got, want);
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

/* The job of the logs made so far, through the one pipeline (job.c); *p is its profile (a view:
 * free with free_job). */
static struct ana_job cur_job;

static int build_mounts(struct ana_profile *p, const struct ana_mount *m, size_t nm)
{
	int r = ana_job_build(&cur_job, logs, nlogs, 0, m, nm);
	if (r < 0) {
		printf("not ok - ana_job_build: %d\n", r);
		failures++;
		return r;
	}
	*p = cur_job.prof;
	return r;
}

static int build(struct ana_profile *p)
{
	return build_mounts(p, NULL, 0);
}

static void free_job(void)
{
	ana_job_free(&cur_job);
}

/* A finding as the tests read it: its id and its two sentences joined. */
struct found {
	const char *id;
	char text[2048];
};

static const struct found *find_insight(const struct ana_profile *p, const char *id)
{
	static struct found f;
	(void)p;
	for (size_t i = 0; i < cur_job.findings.n; i++) {
		const struct ana_finding *x = &cur_job.findings.v[i];
		if (!strcmp(x->id, id)) {
			f.id = x->id;
			snprintf(f.text, sizeof f.text, "%s %s", x->text, x->recommendation);
			return &f;
		}
	}
	return NULL;
}

static size_t count_findings(const char *id)
{
	size_t n = 0;
	for (size_t i = 0; i < cur_job.findings.n; i++)
		n += !strcmp(cur_job.findings.v[i].id, id);
	return n;
}

/* The figure `name` of the first finding `id`, or -1 when either is missing. */
static double figure(const char *id, const char *name)
{
	for (size_t i = 0; i < cur_job.findings.n; i++) {
		const struct ana_finding *x = &cur_job.findings.v[i];
		if (strcmp(x->id, id))
			continue;
		for (unsigned k = 0; k < x->nfigures; k++)
			if (!strcmp(x->figures[k].name, name))
				return x->figures[k].value;
		return -1;
	}
	return -1;
}

static const char *severity_of(const char *id)
{
	for (size_t i = 0; i < cur_job.findings.n; i++)
		if (!strcmp(cur_job.findings.v[i].id, id))
			return ana_severity_name(cur_job.findings.v[i].severity);
	return "(none)";
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
	free_job();
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
	free_job();
out:
	reset_logs();
}

/* A file by path and rank label (-2: merged over ranks), or NULL. */
static const struct ana_file *file_of(const struct ana_profile *p, const char *path, int32_t rank)
{
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ana_file *f = &p->files[i];
		if (strcmp(f->path, path))
			continue;
		if (rank == -2 ? f->rank_index == ANA_RANKS_ALL
			       : f->rank_index != ANA_RANKS_ALL && p->ranks[f->rank_index].rank == rank)
			return f;
	}
	return NULL;
}

/* Runtime files (libraries, pipes, /proc) are merged over ranks; data files keep a rank each. */
static void test_runtime_over_ranks(void)
{
	struct ana_profile p;
	struct log_file *l = mk_log(19, -1, 1000, 9000, "/usr/bin/mpiexec");
	io(add_rec(l, LOG_LAYER_POSIX, "pipe:[77]", LOG_R_PSEUDO), 0, 9, 10, 90);
	for (int r = 0; r < 3; r++) {
		struct log_file *a = mk_log(20 + r, r, 2000 + (uint64_t)r * 10, 8000, "/bin/app");
		io(add_rec(a, LOG_LAYER_POSIX, "/usr/lib/x86_64-linux-gnu/libc.so.6", 0), 0, 1, 832, 5);
		io(add_rec(a, LOG_LAYER_POSIX, "pipe:[77]", LOG_R_PSEUDO), 1, 3, 10, 30);
		char data[32];
		snprintf(data, sizeof data, "/data/out.%d", r);
		io(add_rec(a, LOG_LAYER_POSIX, data, 0), 1, 4, 1000, 400);
		if (r == 2)
			io(add_rec(a, LOG_LAYER_POSIX, "/proc/self/maps", 0), 0, 2, 100, 2);
	}
	if (build(&p) < 0)
		goto out;
	check_u64("over ranks: files (libc, pipe, /proc once; 3 data files)", p.nfiles, 6);
	const struct ana_file *libc = file_of(&p, "/usr/lib/x86_64-linux-gnu/libc.so.6", -2);
	check("over ranks: libc is one entry over ranks", libc != NULL, "missing");
	if (libc) {
		check_u64("over ranks: libc ranks", libc->nranks, 3);
		check_u64("over ranks: libc processes", libc->nprocs, 3);
		check_u64("over ranks: libc reads", libc->c[LOG_C_READS], 3);
		check_u64("over ranks: libc bytes", libc->c[LOG_C_BYTES_READ], 3 * 832);
		check_u64("over ranks: libc pid of the first process", (uint64_t)libc->pid, 20);
	}
	const struct ana_file *pipe = file_of(&p, "pipe:[77]", -2);
	check("over ranks: the pipe is one entry over ranks", pipe != NULL, "missing");
	if (pipe) {
		check_u64("over ranks: pipe ranks (3 ranks and the launcher)", pipe->nranks, 4);
		check_u64("over ranks: pipe writes", pipe->c[LOG_C_WRITES], 9);
		check_u64("over ranks: pipe reads", pipe->c[LOG_C_READS], 9);
		check_u64("over ranks: pipe pid (the launcher started first)", (uint64_t)pipe->pid, 19);
	}
	const struct ana_file *maps = file_of(&p, "/proc/self/maps", 2);
	check("over ranks: a runtime file of one rank keeps that rank", maps != NULL, "missing");
	if (maps)
		check_u64("over ranks: its ranks", maps->nranks, 1);
	for (int r = 0; r < 3; r++) {
		char data[32], name[64];
		snprintf(data, sizeof data, "/data/out.%d", r);
		snprintf(name, sizeof name, "over ranks: data file of rank %d has its rank", r);
		const struct ana_file *d = file_of(&p, data, r);
		check(name, d && d->nranks == 1 && d->c[LOG_C_BYTES_WRITTEN] == 4000, "%p", (const void *)d);
	}
	for (size_t i = 0; i < p.npaths; i++)
		if (!strcmp(p.paths[i].path, "/usr/lib/x86_64-linux-gnu/libc.so.6"))
			check_u64("over ranks: the path row counts 3 ranks", p.paths[i].nranks, 3);
	/* rank totals still hold each rank's share of the merged files */
	check_i64("over ranks: ranks[0] is rank 0", p.ranks[0].rank, 0);
	check_u64("over ranks: rank 0 bytes read (libc)", p.ranks[0].bytes_read, 832);
	check_u64("over ranks: rank 0 bytes written (pipe + data)", p.ranks[0].bytes_written, 30 + 4000);
	check_u64("over ranks: rank 2 bytes read (libc + /proc)", p.ranks[2].bytes_read, 832 + 200);
	check_u64("over ranks: launcher bytes read (pipe)", p.ranks[3].bytes_read, 90);
	check_str("over ranks: I/O mode from the data files", ana_io_mode_name(p.io_mode.mode), "N-N");
	free_job();
out:
	reset_logs();
}

/* The steps of a build (profile.h) in another input order give the same profile; the images of an
 * exec chain (one pid) come together however the inputs were ordered, so a runtime file counts
 * their rank once. */
static void test_profile_steps(void)
{
	struct ana_profile whole, steps;
	struct log_file *sh = mk_log(30, -1, 1000, 2000, "/bin/sh");
	sh->hdr.flags |= LOG_F_EXEC;
	io(add_rec(sh, LOG_LAYER_POSIX, "/etc/ld.so.cache", 0), 0, 1, 4000, 3);
	struct log_file *other = mk_log(31, -1, 1500, 2500, "/bin/cat");
	io(add_rec(other, LOG_LAYER_POSIX, "/etc/ld.so.cache", 0), 0, 1, 4000, 3);
	io(add_rec(other, LOG_LAYER_POSIX, "/etc/hostname", 0), 0, 2, 7, 3);
	struct log_file *cat = mk_log(30, -1, 2000, 3000, "/bin/cat");
	io(add_rec(cat, LOG_LAYER_POSIX, "/etc/ld.so.cache", 0), 0, 1, 4000, 3);
	io(add_rec(cat, LOG_LAYER_POSIX, "/etc/hostname", 0), 0, 2, 7, 3);
	if (ana_profile_build(logs, nlogs, &whole) < 0) {
		check("steps: build", 0, "failed");
		goto out;
	}
	int r = ana_profile_begin(&steps, nlogs);
	for (size_t i = nlogs; r == 0 && i-- > 0;)
		r = ana_profile_add_header(&steps, &logs[i], i);
	if (r == 0)
		r = ana_profile_index(&steps);
	const size_t *order = NULL;
	size_t n = r == 0 ? ana_profile_order(&steps, &order) : 0;
	check_u64("steps: every input in the order", n, 3);
	if (n == 3) {
		check("steps: the images of pid 30 are adjacent in the order",
		      (order[0] != 1 && order[1] != 1) || (order[1] != 1 && order[2] != 1), "%zu %zu %zu", order[0],
		      order[1], order[2]);
		check("steps: input_proc names the image read", ana_profile_input_proc(&steps, 2) &&
		      !strcmp(ana_profile_input_proc(&steps, 2)->exe, "/bin/cat") &&
		      ana_profile_input_proc(&steps, 2)->pid == 30, "wrong");
	}
	check_i64("steps: records of an unknown input refused", ana_profile_add_records(&steps, &logs[0], 7), -EINVAL);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = ana_profile_add_records(&steps, &logs[order[i]], order[i]);
	if (r == 0)
		r = ana_profile_finish(&steps);
	check_i64("steps: built", r, 0);
	if (r == 0) {
		check_u64("steps: same files", steps.nfiles, whole.nfiles);
		check_u64("steps: same ranks", steps.nranks, whole.nranks);
		for (size_t i = 0; i < steps.nfiles && i < whole.nfiles; i++) {
			char name[96];
			snprintf(name, sizeof name, "steps: file %zu same path, rank, counters", i);
			check(name, !strcmp(steps.files[i].path, whole.files[i].path) &&
			      steps.files[i].rank_index == whole.files[i].rank_index &&
			      !memcmp(steps.files[i].c, whole.files[i].c, sizeof whole.files[i].c), "%s", steps.files[i].path);
		}
		const struct ana_file *cache = file_of(&steps, "/etc/ld.so.cache", -2);
		check("steps: ld.so.cache merged over ranks", cache != NULL, "missing");
		if (cache) {
			check_u64("steps: ld.so.cache ranks (pid 30's two images are one)", cache->nranks, 2);
			check_u64("steps: ld.so.cache processes", cache->nprocs, 3);
		}
	}
	ana_profile_free(&steps);
	ana_profile_free(&whole);
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
	free_job();
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
	free_job();
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
	free_job();
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
	free_job();
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
	check("data path: a header a program reads is data", ana_is_data_path("/usr/include/stdio.h"), "classified as system");
	check("data path: the loader's cache", !ana_is_data_path("/etc/ld.so.cache"), "classified as data");
	check("data path: a versioned shared object", !ana_is_data_path("/opt/x/lib/libfoo.so.1.2"), "classified as data");
	check("data path: locales", !ana_is_data_path("/usr/lib/locale/C.utf8/LC_CTYPE"), "classified as data");
	check("data path: name service", !ana_is_data_path("/etc/passwd"), "classified as data");
	check("data path: python's library", !ana_is_data_path("/usr/lib/python3.11/os.py"), "classified as data");
	check("data path: a config file a program reads is data", ana_is_data_path("/etc/app/app.conf"),
	      "classified as system");
	check("data path: a pipe", !ana_is_data_path("pipe:[1234]"), "classified as data");
	check("data path: a std stream", !ana_is_data_path("<STDOUT>"), "classified as data");
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
	const struct found *in = find_insight(&p, "rank_imbalance");
	check("imbalance insight", in && strstr(in->text, "rank 3 moved 2.50x the mean bytes"), "text: %s",
	      in ? in->text : "(none)");
	free_job();
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
	free_job();
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
	free_job();
out:
	reset_logs();
}

/* Sizes merge as records come (profile.c, common_acc): 20 processes with 8 sizes each fill and
 * fold the table more than once. The first 8 processes' 64 sizes are all distinct, so the first
 * fold leaves the table full; the last 10 share one size, which adds up across them. */
static void test_common_sizes_many(void)
{
	struct ana_profile p;
	for (int i = 0; i < 20; i++) {
		struct log_file *lf = mk_log(100 + i, -1, 1000 + (uint64_t)i, 5000, "/bin/app");
		struct log_record *r = add_rec(lf, LOG_LAYER_POSIX, "/d/many", 0);
		io(r, 1, 1, 1, 1);
		for (int s = 0; s < LOG_COMMON_SLOTS; s++) {
			int64_t v = i * LOG_COMMON_SLOTS + s + 1; /* 1 .. 160, each once, count = value */
			r->sizes[s] = (struct log_common){v, (uint64_t)v};
		}
		if (i >= 10)
			r->sizes[0] = (struct log_common){65536, 30};
	}
	if (build(&p) < 0)
		goto out;
	const struct ana_layer *L = &p.layers[LOG_LAYER_POSIX];
	check_u64("many sizes: top 4 kept", L->nsizes, 4);
	check("many sizes #1 = 65536 x300 (30 in each of 10 records)", L->sizes[0].value == 65536 && L->sizes[0].count == 300,
	      "%" PRId64 " x%" PRIu64, L->sizes[0].value, L->sizes[0].count);
	check("many sizes #2..#4 = 160, 159, 158", L->sizes[1].value == 160 && L->sizes[1].count == 160 &&
	      L->sizes[2].value == 159 && L->sizes[3].value == 158,
	      "%" PRId64 ", %" PRId64 ", %" PRId64, L->sizes[1].value, L->sizes[2].value, L->sizes[3].value);
	free_job();
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
	/* a file that opened once and failed three times: an error; a path that only ever failed to open
	 * is a lookup (a compiler's include path), not worth a word */
	struct log_record *miss = add_rec(lf, LOG_LAYER_POSIX, "/d/missing", 0);
	miss->counters[LOG_C_ERR_OPENS] = 3;
	miss->counters[LOG_C_OPENS] = 1;
	io(miss, 0, 1, 100, 10);
	for (int k = 0; k < 50; k++) {
		char inc[64];
		snprintf(inc, sizeof inc, "/usr/include/x%d/stdio.h", k);
		add_rec(lf, LOG_LAYER_POSIX, inc, 0)->counters[LOG_C_ERR_OPENS] = 1;
	}
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
	const struct found *in;
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
	check_u64("failed lookups of never-opened paths are no error", count_findings("errors"), 1);
	in = find_insight(&p, "tiny_fwrites");
	check("insight tiny_fwrites", in && strstr(in->text, "setvbuf"), "%s", in ? in->text : "(none)");
	in = find_insight(&p, "small_files");
	check("insight small_files", in && strstr(in->text, "10") && strstr(in->text, "1 MiB"), "%s",
	      in ? in->text : "(none)");
	check("no random insight for sequential I/O", !find_insight(&p, "random_writes"), "present");
	free_job();
	reset_logs();

	/* a quiet, healthy job says nothing */
	io(add_rec(mk_log(1, -1, 0, 1000, "/bin/app"), LOG_LAYER_POSIX, "/d/big", 0), 1, 200, 1 << 20, 1000);
	if (build(&p) < 0)
		goto out;
	check_u64("healthy job: no findings", cur_job.findings.n, 0);
	free_job();
out:
	reset_logs();
}

static char *render_text(const struct ana_profile *p, const struct ana_report_opts *o);

/* The advice fits the program (docs/REAL_PROGRAMS.md, "Defects seen"): each case is the shape of
 * a real program's I/O that got wrong advice, with exact figures. */
static void test_findings_fit(void)
{
	struct ana_profile p;
	const struct found *in;

	/* make/gcc/git: a parent blocked 300 ms reading its child's pipe, 200 fast small reads of a
	 * data file, 2,000 stats. The pipe's wait is not small-read cost. */
	struct log_file *lf = mk_log(1, -1, 0, 1000000000, "/usr/bin/make");
	io(add_rec(lf, LOG_LAYER_POSIX, "/d/Makefile", 0), 0, 200, 100, 200000);
	struct log_record *st = add_rec(lf, LOG_LAYER_POSIX, "/d/src.c", 0);
	st->counters[LOG_C_STATS] = 2000;
	st->counters[LOG_C_TIME_META] = 2000000;
	io(add_rec(lf, LOG_LAYER_POSIX, "pipe:[77]", LOG_R_PSEUDO), 0, 5, 1, 300000000);
	if (build(&p) < 0)
		goto out;
	check("pipe wait: no small_reads", !find_insight(&p, "small_reads"), "%s",
	      find_insight(&p, "small_reads") ? find_insight(&p, "small_reads")->text : "");
	free_job();
	reset_logs();
	/* the same without the stats: the small reads are all of the I/O time that is not waiting */
	lf = mk_log(1, -1, 0, 1000000000, "/usr/bin/make");
	io(add_rec(lf, LOG_LAYER_POSIX, "/d/Makefile", 0), 0, 200, 100, 200000);
	io(add_rec(lf, LOG_LAYER_POSIX, "pipe:[77]", LOG_R_PSEUDO), 0, 5, 1, 300000000);
	if (build(&p) < 0)
		goto out;
	check_dbl("pipe left out: small reads take all the rest", figure("small_reads", "small_time_share"), 1.0);
	check_dbl("pipe left out: 200 small data reads", figure("small_reads", "small_data_ops"), 200);
	in = find_insight(&p, "small_reads");
	check("small_reads says pipes are left out", in && strstr(in->text, "(pipes and sockets left out)"), "%s",
	      in ? in->text : "(none)");
	free_job();
	reset_logs();

	/* python / cp: 300 files written whole in one write of 1,000 B each: no call could be larger */
	lf = mk_log(1, -1, 0, 1000000000, "/usr/bin/python3");
	for (int i = 0; i < 300; i++) {
		char path[64];
		snprintf(path, sizeof path, "/d/out/f%03d", i);
		io(add_rec(lf, LOG_LAYER_POSIX, path, 0), 1, 1, 1000, 1000);
	}
	if (build(&p) < 0)
		goto out;
	check("whole-file writes: no small_writes", !find_insight(&p, "small_writes"), "fired");
	check_str("written small files: small_files is a warning", severity_of("small_files"), "warning");
	check_dbl("small_files: 300 written", figure("small_files", "files_written"), 300);
	free_job();
	reset_logs();

	/* cp -r: 150 files read whole (a read and the read at the end) and 150 written whole */
	lf = mk_log(1, -1, 0, 1000000000, "/usr/bin/cp");
	for (int i = 0; i < 150; i++) {
		char path[64];
		snprintf(path, sizeof path, "/d/src/f%03d", i);
		struct log_record *r = add_rec(lf, LOG_LAYER_POSIX, path, 0);
		io(r, 0, 1, 1000, 1000);
		io(r, 0, 1, 0, 1000);
		snprintf(path, sizeof path, "/d/dst/f%03d", i);
		struct log_record *w = add_rec(lf, LOG_LAYER_POSIX, path, 0);
		io(w, 1, 1, 1000, 1000); /* copy_file_range: the data, then 0 at the end */
		io(w, 1, 1, 0, 1000);
	}
	if (build(&p) < 0)
		goto out;
	check("copy: no small_reads", !find_insight(&p, "small_reads"), "fired");
	check("copy: no small_writes", !find_insight(&p, "small_writes"), "fired");
	check_str("copy: small_files is information", severity_of("small_files"), "info");
	in = find_insight(&p, "small_files");
	check("copy: small_files says it copies", in && strstr(in->text, "the job copies them"), "%s",
	      in ? in->text : "(none)");
	check("copy: 150 only read, 150 written",
	      figure("small_files", "files_only_read") == 150 && figure("small_files", "files_written") == 150, "%g %g",
	      figure("small_files", "files_only_read"), figure("small_files", "files_written"));
	free_job();
	reset_logs();

	/* tar c: 150 small files read into one archive written in 150 records of 10 KiB */
	lf = mk_log(1, -1, 0, 1000000000, "/usr/bin/tar");
	for (int i = 0; i < 150; i++) {
		char path[64];
		snprintf(path, sizeof path, "/d/tree/f%03d", i);
		io(add_rec(lf, LOG_LAYER_POSIX, path, 0), 0, 1, 5000, 1000);
	}
	io(add_rec(lf, LOG_LAYER_POSIX, "/d/tree.tar", 0), 1, 150, 10240, 150000);
	if (build(&p) < 0)
		goto out;
	in = find_insight(&p, "small_files");
	check("archiver: small_files says it packs them",
	      in && strstr(in->text, "reads them into larger files") && !strcmp(severity_of("small_files"), "info"), "%s",
	      in ? in->text : "(none)");
	check_dbl("archiver: one large file written", figure("small_files", "large_files_written"), 1);
	check("archiver: no aggregate_writes for a stream of 10 KiB records", !find_insight(&p, "aggregate_writes"),
	      "fired");
	free_job();
	reset_logs();

	/* find: a directory opened with O_DIRECTORY and listed, a lock file made by its open (touch),
	 * and a file opened for nothing */
	lf = mk_log(1, -1, 0, 1000000000, "/usr/bin/find");
	add_rec(lf, LOG_LAYER_POSIX, "/d/tree/sub", LOG_R_DIR)->counters[LOG_C_OPENS] = 1;
	add_rec(lf, LOG_LAYER_POSIX, "/d/app.cfg", 0)->counters[LOG_C_OPENS] = 1;
	add_rec(lf, LOG_LAYER_POSIX, "/d/made.lock", LOG_R_CREAT)->counters[LOG_C_OPENS] = 1;
	if (build(&p) < 0)
		goto out;
	check_dbl("directory: one unused open", figure("unused_opens", "files"), 1);
	in = find_insight(&p, "unused_opens");
	check("directory: the example is the file", in && strstr(in->text, "/d/app.cfg"), "%s", in ? in->text : "(none)");
	free_job();
	reset_logs();

	/* expected failures: EAGAIN on a non-blocking pipe, a hot-journal check per transaction;
	 * faults: a write that failed once with EIO on a file that also failed with ENOENT */
	lf = mk_log(1, -1, 0, 1000000000, "/usr/bin/sqlite3");
	struct log_record *pr = add_rec(lf, LOG_LAYER_POSIX, "pipe:[5]", LOG_R_PSEUDO | LOG_R_ERR_EXPECTED);
	io(pr, 0, 10, 100, 100);
	pr->counters[LOG_C_ERR_READS] = 22;
	struct log_record *jr = add_rec(lf, LOG_LAYER_POSIX, "/d/db-journal", LOG_R_ERR_EXPECTED);
	io(jr, 1, 10, 512, 100);
	jr->counters[LOG_C_ERR_META] = 1004;
	struct log_record *bad = add_rec(lf, LOG_LAYER_POSIX, "/d/bad", LOG_R_ERR_EXPECTED | LOG_R_ERR_FAULT);
	io(bad, 1, 10, 512, 100);
	bad->counters[LOG_C_ERR_WRITES] = 2;
	bad->counters[LOG_C_ERR_META] = 1;
	if (build(&p) < 0)
		goto out;
	check_u64("expected failures: one errors finding (the fault)", count_findings("errors"), 1);
	check_dbl("the fault: err_writes 2", figure("errors", "err_writes"), 2);
	check_str("the fault is an error", severity_of("errors"), "error");
	check_dbl("the probes: 1,004 failed lookups", figure("failed_lookups", "failed_lookups"), 1004);
	check_str("the probes are information", severity_of("failed_lookups"), "info");
	free_job();
	reset_logs();

	/* dd oflag=direct: 10,000 writes of 4 KiB with O_DIRECT; the buffered one gets aggregation */
	for (int direct = 0; direct < 2; direct++) {
		lf = mk_log(1, -1, 0, 1000000000, "/usr/bin/dd");
		io(add_rec(lf, LOG_LAYER_POSIX, "/d/out", direct ? LOG_R_DIRECT : 0), 1, 10000, 4096, 900000000);
		if (build(&p) < 0)
			goto out;
		if (direct) {
			check_dbl("O_DIRECT: small_direct_io over 10,000 calls", figure("small_direct_io", "ops"), 10000);
			check_dbl("O_DIRECT: mean request 4 KiB", figure("small_direct_io", "mean_request"), 4096);
			check("O_DIRECT: no aggregate_writes", !find_insight(&p, "aggregate_writes"), "fired");
		} else {
			check("buffered: aggregate_writes", find_insight(&p, "aggregate_writes") != NULL, "missing");
			check("buffered: no small_direct_io", !find_insight(&p, "small_direct_io"), "fired");
		}
		free_job();
		reset_logs();
	}

	/* sqlite: 8,000 journal writes separated by 2,000 fsyncs: buffering them gains nothing */
	lf = mk_log(1, -1, 0, 1000000000, "/usr/bin/sqlite3");
	struct log_record *js = add_rec(lf, LOG_LAYER_POSIX, "/d/sq.db-journal", 0);
	io(js, 1, 8000, 512, 8000000);
	js->counters[LOG_C_FSYNCS] = 2000;
	js->counters[LOG_C_TIME_META] = 400000000;
	if (build(&p) < 0)
		goto out;
	check("synced writes: no aggregate_writes", !find_insight(&p, "aggregate_writes"), "fired");
	check_dbl("synced writes: many_syncs", figure("many_syncs", "fsyncs"), 2000);
	free_job();
	reset_logs();

	/* git clone: two processes, one writes 3 files and reads 1 the other writes */
	lf = mk_log(1, -1, 0, 1000000000, "/usr/bin/git");
	io(add_rec(lf, LOG_LAYER_POSIX, "/d/a", 0), 1, 1, 100, 1);
	io(add_rec(lf, LOG_LAYER_POSIX, "/d/b", 0), 1, 1, 100, 1);
	io(add_rec(lf, LOG_LAYER_POSIX, "/d/c", 0), 1, 1, 100, 1);
	struct log_file *lf2 = mk_log(2, -1, 0, 1000000000, "/usr/lib/git-core/git");
	io(add_rec(lf2, LOG_LAYER_POSIX, "/d/c", 0), 0, 1, 100, 1);
	io(add_rec(lf2, LOG_LAYER_POSIX, "/d/e", 0), 1, 1, 100, 1);
	if (build(&p) < 0)
		goto out;
	check_str("two processes: N-M", ana_io_mode_name(p.io_mode.mode), "N-M");
	check_u64("two processes: 4 data files, 1 shared", p.io_mode.data_files * 10 + p.io_mode.shared_files, 41);
	struct ana_report_opts o = {0};
	char *text = render_text(&p, &o);
	check("non-MPI: processes, not ranks",
	      text && strstr(text, "N-M: 2 processes use 4 data files (M), 1 of them shared by more than one; 2 processes "
				   "in the") &&
		      strstr(text, ", 2 processes, 2 logs, ") && strstr(text, "\nProcesses (2, by pid;") &&
		      !strstr(text, "rank"),
	      "%s", text ? text : "");
	free(text);
	check("non-MPI: no mpiio_not_captured", !find_insight(&p, "mpiio_not_captured"), "fired");
	free_job();
	reset_logs();

	/* mpich: ranks 0 and 1 both write mpi.dat and posix.dat: N-1, twice */
	for (int k = 0; k < 2; k++) {
		lf = mk_log(10 + k, k, 0, 1000000000, "/d/mpiprog");
		io(add_rec(lf, LOG_LAYER_POSIX, "/d/mpi.dat", 0), 1, 4, 4096, 1000);
		io(add_rec(lf, LOG_LAYER_POSIX, "/d/posix.dat", 0), 1, 4, 4096, 1000);
	}
	if (build(&p) < 0)
		goto out;
	check_str("two shared files: N-1", ana_io_mode_name(p.io_mode.mode), "N-1");
	check_u64("two shared files: both shared", p.io_mode.shared_files, 2);
	check_dbl("two shared files: io_mode_n_1 with 2 writers", figure("io_mode_n_1", "writing_ranks"), 2);
	in = find_insight(&p, "io_mode_n_1");
	check("two shared files: io_mode_n_1 says so",
	      in && strstr(in->text, "2 ranks write to files every rank shares (mode N-1, 2 shared files)."), "%s",
	      in ? in->text : "(none)");
	check_str("MPI without a kernel log: mpiio_not_captured", severity_of("mpiio_not_captured"), "info");
	text = render_text(&p, &o);
	check("N-1 over two files in words", text && strstr(text, "N-1: 2 ranks share each of their 2 data files"), "%s",
	      text ? text : "");
	free(text);
	free_job();
	reset_logs();

	/* xargs: 5,000 stdio reads of one byte from its input pipe */
	lf = mk_log(1, -1, 0, 1000000000, "/usr/bin/xargs");
	io(add_rec(lf, LOG_LAYER_STDIO, "pipe:[9]", LOG_R_PSEUDO), 0, 5000, 1, 500000);
	if (build(&p) < 0)
		goto out;
	check_dbl("one-byte freads: tiny_freads", figure("tiny_freads", "reads_of_file"), 5000);
	check_dbl("one-byte freads: mean 1 B", figure("tiny_freads", "mean_read"), 1);
	free_job();
	reset_logs();

	/* sqlite3 reading its script with fgets, a line of 38 B a call: lines are the unit */
	lf = mk_log(1, -1, 0, 1000000000, "/usr/bin/sqlite3");
	io(add_rec(lf, LOG_LAYER_STDIO, "/d/script.sql", 0), 0, 5000, 38, 500000);
	if (build(&p) < 0)
		goto out;
	check("line reads: no tiny_freads", !find_insight(&p, "tiny_freads"), "fired");
	free_job();
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
	int rc = ana_report_text(m, &cur_job, &o);
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
	check("text names the I/O mode", text && strstr(text, "N-M: 25 ranks use 3 data files (M), 1 of them shared by more than one; 25 ranks in the"),
	      "missing");
	free(text);

	int fd = mkstemp(json_path);
	FILE *jf = fd >= 0 ? fdopen(fd, "w") : NULL;
	check("json temp file", jf != NULL, "mkstemp failed");
	if (!jf)
		goto done;
	rc = ana_report_json(jf, &cur_job, &o);
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
		     "\"top_files_by_time\",\"findings\",\"warnings\"))");

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
	free_job();
out:
	reset_logs();
}

/* ---- jobs with a kernel log ---- */

#define KLAYERS ((1u << LOG_LAYER_SYSCALL) | (1u << LOG_LAYER_PAGECACHE) | (1u << LOG_LAYER_FS) | \
		 (1u << LOG_LAYER_BLOCK))

/* The kernel log of `run --kernel`: header pid = the traced command's. */
static struct log_file *mk_klog(int pid, uint64_t start, uint64_t end, const char *exe)
{
	struct log_file *lf = mk_log(pid, -1, start, end, exe);
	lf->hdr.kernel_layers = KLAYERS;
	return lf;
}

/* A kernel record of process pid (0: no process context) on file (dev, ino). */
static struct log_record *add_krec(struct log_file *lf, unsigned layer, const char *path, int pid, uint64_t dev,
				   uint64_t ino)
{
	struct log_record *r = add_rec(lf, layer, path, 0);
	r->pid = pid;
	r->dev = dev;
	r->ino = ino;
	return r;
}

/* n system calls of size bytes each, latency lat ns each, starting at time t0. */
static void kio(struct log_record *r, int write, uint64_t n, uint64_t size, uint64_t lat, uint64_t t0)
{
	io(r, write, n, size, n * lat);
	uint64_t *c = r->counters;
	/* the kernel layers compute no patterns */
	c[write ? LOG_C_SEQ_WRITES : LOG_C_SEQ_READS] = 0;
	c[write ? LOG_C_CONSEC_WRITES : LOG_C_CONSEC_READS] = 0;
	(write ? r->write_lat_hist : r->read_lat_hist)[log_hist_bucket(lat)] += n;
	uint64_t *first = &c[write ? LOG_C_WRITE_FIRST : LOG_C_READ_FIRST];
	if (!*first || t0 < *first)
		*first = t0;
	if (!c[LOG_C_OPEN_FIRST] || t0 < c[LOG_C_OPEN_FIRST])
		c[LOG_C_OPEN_FIRST] = t0;
	uint64_t end = t0 + n * lat;
	if (end > c[write ? LOG_C_WRITE_LAST : LOG_C_READ_LAST])
		c[write ? LOG_C_WRITE_LAST : LOG_C_READ_LAST] = end;
}

/* n block requests of size bytes, queue q and device d ns each. */
static void kblock(struct log_record *r, int write, uint64_t n, uint64_t size, uint64_t q, uint64_t d)
{
	uint64_t *c = r->counters;
	c[write ? LOG_C_WRITES : LOG_C_READS] += n;
	c[write ? LOG_C_BYTES_WRITTEN : LOG_C_BYTES_READ] += n * size;
	c[write ? LOG_C_TIME_WRITE : LOG_C_TIME_READ] += n * (q + d);
	c[LOG_C_TIME_QUEUE] += n * q;
	c[LOG_C_TIME_DEVICE] += n * d;
	(write ? r->write_hist : r->read_hist)[log_hist_bucket(size)] += n;
	(write ? r->write_lat_hist : r->read_lat_hist)[log_hist_bucket(d)] += n;
}

static char *render_text(const struct ana_profile *p, const struct ana_report_opts *o)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	(void)p;
	int rc = m ? ana_report_text(m, &cur_job, o) : -1;
	if (m)
		fclose(m);
	check("text report renders", rc == 0 && text, "rc=%d", rc);
	if (getenv("TEST_ANALYSIS_SHOW") && text)
		fputs(text, stderr);
	return text;
}

static size_t widest_line(const char *text)
{
	size_t widest = 0, w = 0;
	for (const char *s = text; s && *s; s++) {
		if (*s == '\n') {
			widest = w > widest ? w : widest;
			w = 0;
		} else if (((unsigned char)*s & 0xc0) != 0x80) {
			w++;
		}
	}
	return w > widest ? w : widest;
}

/* The JSON report into a temporary file (name in path, to unlink); 0 on success. */
static int render_json(const struct ana_profile *p, const struct ana_report_opts *o, char *path)
{
	int fd = mkstemp(path);
	FILE *jf = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!jf) {
		check("json temp file", 0, "mkstemp failed");
		return -1;
	}
	(void)p;
	int rc = ana_report_json(jf, &cur_job, o);
	fclose(jf);
	check("json report renders", rc == 0, "rc=%d", rc);
	return rc;
}

/*
 * One process seen by both layers (pid 100) and its kernel log: an O_DIRECT-style file written
 * in 4 KiB calls, a stdio log file buffered into few system calls, an input read twice whose
 * second pass missed the cache, a library read by the loader; a loop device with its totals and
 * per-file requests.
 */
static void test_kernel_join(void)
{
	struct ana_profile p;
	char json_path[] = "/tmp/iostrata-test-XXXXXX";
	const uint64_t dev = makedev(7, 3);
	const uint64_t MiB = 1 << 20;

	struct log_file *u = mk_log(100, -1, 1000, 9000000, "/bin/app");
	u->hdr.flags |= LOG_F_STDIO_SYSCALLS;
	io(add_rec(u, LOG_LAYER_POSIX, "/scratch/out", 0), 1, 100, 4096, 100000);
	io(add_rec(u, LOG_LAYER_STDIO, "/scratch/log", 0), 1, 1000, 10, 5000);
	io(add_rec(u, LOG_LAYER_POSIX, "/scratch/log", 0), 1, 4, 2500, 4000);
	struct log_record *ui = add_rec(u, LOG_LAYER_POSIX, "/scratch/in", 0);
	io(ui, 0, 3072, 4096, 900000); /* 12 MiB read of a 4 MiB file: three passes */
	ui->counters[LOG_C_MAX_READ_END] = 4 * MiB;

	struct log_file *k = mk_klog(100, 900, 9000100, "/bin/app");
	kio(add_krec(k, LOG_LAYER_SYSCALL, "/scratch/out", 100, dev, 12), 1, 100, 4096, 1000, 2000);
	kio(add_krec(k, LOG_LAYER_SYSCALL, "/scratch/log", 100, dev, 13), 1, 4, 2500, 1000, 2000);
	struct log_record *ki = add_krec(k, LOG_LAYER_SYSCALL, "/scratch/in", 100, dev, 14);
	kio(ki, 0, 3072, 4096, 400, 3000);
	ki->counters[LOG_C_MAX_READ_END] = 4 * MiB;
	ki->counters[LOG_C_CACHE_HIT_READS] = 2304;
	ki->counters[LOG_C_CACHE_MISS_READS] = 768;
	kio(add_krec(k, LOG_LAYER_SYSCALL, "/usr/lib/libc.so.6", 100, dev, 15), 0, 1, 832, 500, 1500);
	/* the input's pages came from storage at every pass: the cache did not keep them */
	struct log_record *pi = add_krec(k, LOG_LAYER_PAGECACHE, "/scratch/in", 0, dev, 14);
	pi->counters[LOG_C_PAGES_READ_IN] = 3072;
	pi->counters[LOG_C_READAHEAD_PAGES] = 3072;
	pi->counters[LOG_C_PAGES_EVICTED] = 1024;
	add_krec(k, LOG_LAYER_PAGECACHE, "/scratch/log", 100, dev, 13)->counters[LOG_C_PAGES_DIRTIED] = 3;
	add_krec(k, LOG_LAYER_PAGECACHE, "/scratch/log", 100, dev, 13)->counters[LOG_C_PAGES_ADDED_WRITE] = 3;
	kio(add_krec(k, LOG_LAYER_FS, "/scratch/log", 100, dev, 13), 1, 3, 3333, 0, 2000);
	/* the device: every request once; the per-file records are a view of the same requests */
	struct log_record *bd = add_krec(k, LOG_LAYER_BLOCK, "<device loop3 7:3>", 0, dev, 0);
	bd->flags |= LOG_R_PSEUDO;
	kblock(bd, 1, 100, 4096, 1000, 20000);
	kblock(bd, 1, 10, 4096, 3000, 40000);
	kblock(bd, 0, 96, 128 * 1024, 2000, 300000);
	kblock(add_krec(k, LOG_LAYER_BLOCK, "/scratch/out", 100, dev, 12), 1, 100, 4096, 1000, 20000);
	kblock(add_krec(k, LOG_LAYER_BLOCK, "/scratch/log", 0, dev, 13), 1, 10, 4096, 3000, 40000);
	kblock(add_krec(k, LOG_LAYER_BLOCK, "/scratch/in", 100, dev, 14), 0, 96, 128 * 1024, 2000, 300000);
	if (build(&p) < 0)
		goto out;

	/* the kernel log is no process: one process, one rank, figures of the user layers */
	check_u64("kernel: one process (the kernel log is none)", p.nprocs, 1);
	check_u64("kernel: no kernel-only process", p.nkernel_procs, 0);
	check_u64("kernel: one kernel log", p.nklogs, 1);
	check("kernel: not a kernel-only job", !p.kernel_only, "kernel_only=%d", p.kernel_only);
	check_u64("kernel: one rank", p.nranks, 1);
	check_u64("kernel: rank bytes written from the user layers", p.ranks[0].bytes_written, 409600 + 10000);
	check_u64("kernel: rank writes (stdio's calls are posix's)", p.ranks[0].writes, 104);
	check_u64("kernel: rank bytes read", p.ranks[0].bytes_read, 12 * MiB);
	check_u64("kernel: rank reads (no loader read of the syscall layer)", p.ranks[0].reads, 3072);
	check("kernel: I/O mode 1-1 over 3 data files", p.io_mode.mode == ANA_IO_1_1 && p.io_mode.data_files == 3 &&
	      p.io_mode.ranks_with_data == 1 && p.io_mode.ranks == 1, "mode %s F=%zu P=%zu",
	      ana_io_mode_name(p.io_mode.mode), p.io_mode.data_files, p.io_mode.ranks_with_data);
	check("kernel: imbalance over one rank", p.ranks_with_io == 1 && p.imbalance_bytes == 1.0, "%zu %.3f",
	      p.ranks_with_io, p.imbalance_bytes);
	/* layers: the same counter names, each layer its own totals */
	const uint64_t *sc = p.layers[LOG_LAYER_SYSCALL].c, *bc = p.layers[LOG_LAYER_BLOCK].c;
	check_u64("kernel: syscall writes", sc[LOG_C_WRITES], 104);
	check_u64("kernel: syscall bytes written", sc[LOG_C_BYTES_WRITTEN], 409600 + 10000);
	check_u64("kernel: syscall bytes read (with the loader's)", sc[LOG_C_BYTES_READ], 12 * MiB + 832);
	check_u64("kernel: syscall write latency histogram", p.layers[LOG_LAYER_SYSCALL].write_lat_hist[log_hist_bucket(1000)], 104);
	check_u64("kernel: block writes counted once (devices)", bc[LOG_C_WRITES], 110);
	check_u64("kernel: block bytes written counted once", bc[LOG_C_BYTES_WRITTEN], 110 * 4096);
	check_u64("kernel: block bytes read", bc[LOG_C_BYTES_READ], 12 * MiB);
	check_u64("kernel: block records (device and files)", p.layers[LOG_LAYER_BLOCK].nrecords, 4);
	check_u64("kernel: pagecache pages read in", p.layers[LOG_LAYER_PAGECACHE].c[LOG_C_PAGES_READ_IN], 3072);
	check_u64("kernel: the user layers have no latency histograms",
		  p.layers[LOG_LAYER_POSIX].write_lat_hist[log_hist_bucket(1000)], 0);
	/* files: kernel entries next to the user ones, named by the kernel */
	const struct ana_file *fo = NULL, *fb = NULL;
	for (size_t i = 0; i < p.nfiles; i++) {
		if (!strcmp(p.files[i].path, "/scratch/out") && p.files[i].layer == LOG_LAYER_SYSCALL)
			fo = &p.files[i];
		if (!strcmp(p.files[i].path, "<device loop3 7:3>"))
			fb = &p.files[i];
	}
	check("kernel: syscall file entry", fo && fo->c[LOG_C_WRITES] == 100 && fo->c[LOG_C_BYTES_WRITTEN] == 409600 &&
	      fo->pid == 100 && fo->dev == dev && fo->ino == 12 && !fo->job_view, "missing or wrong");
	check("kernel: device entry is pseudo", fb && (fb->rflags & LOG_R_PSEUDO) && !ana_is_data_file(fb), "missing");

	/* down the stack */
	struct ana_mount mnt = {dev, "/mnt/scratch", "ext4"};
	struct ana_stack st;
	if (ana_stack_build(&p, &mnt, 1, &st) < 0) {
		check("stack builds", 0, "ENOMEM");
		goto done;
	}
	check_u64("stack: hit reads", st.hit_reads, 2304);
	check_u64("stack: miss reads", st.miss_reads, 768);
	check_u64("stack: bytes read in = pages x page size", st.bytes_read_in, 3072ull * p.page_size);
	check_u64("stack: bytes asked", st.bytes_requested, 12 * MiB + 832);
	check_u64("stack: pages dirtied", st.pages_dirtied, 3);
	check_u64("stack: block bytes read (devices)", st.block_bytes_read, 12 * MiB);
	check_u64("stack: block bytes written (devices)", st.block_bytes_written, 110 * 4096);
	check_dbl("stack: read amplification", st.read_amplification, (double)(12 * MiB) / (double)(12 * MiB + 832));
	check_dbl("stack: write amplification", st.write_amplification, 110.0 * 4096 / 419600.0);
	check_dbl("stack: data-file write amplification", st.file_write_amplification, 110.0 * 4096 / 419600.0);
	check_u64("stack: data-file syscall bytes read (no library)", st.file_syscall_bytes[0], 12 * MiB);
	check_u64("stack: one device", st.ndevices, 1);
	if (st.ndevices)
		check("stack: device named, numbered and mounted", !strcmp(st.devices[0].name, "loop3") &&
		      st.devices[0].major == 7 && st.devices[0].minor == 3 && st.devices[0].mount == &mnt,
		      "%s %u:%u", st.devices[0].name, st.devices[0].major, st.devices[0].minor);
	check_u64("stack: data files", st.nfiles, 3);
	if (st.nfiles == 3) {
		check_str("stack: most syscall bytes first", st.files[0].path, "/scratch/in");
		check_str("stack: then", st.files[1].path, "/scratch/out");
		const struct ana_stack_file *lg = &st.files[2];
		check("stack: the log's topmost user layer is stdio", lg->user_layer == LOG_LAYER_STDIO &&
		      lg->ops[ANA_SL_USER][1] == 1000 && lg->ops[ANA_SL_SYSCALL][1] == 4 &&
		      lg->bytes[ANA_SL_BLOCK][1] == 40960 && lg->pages_dirtied == 3, "layer %u ops %" PRIu64,
		      lg->user_layer, lg->ops[ANA_SL_USER][1]);
	}
	check_u64("stack: user write calls on data files", st.user_calls[0][1], 1100);
	check_u64("stack: stdio write calls", st.user_calls[LOG_LAYER_STDIO][1], 1000);
	check_u64("stack: write system calls on data files", st.syscalls[1], 104);
	check_u64("stack: percentile bucket of device time", (uint64_t)ana_hist_percentile(st.devices[0].write_lat_hist, 0.99),
		  log_hist_bucket(40000));
	ana_stack_free(&st);

	/* insights: the user rules once, on the user layers; the kernel's on the cache */
	const struct found *in = find_insight(&p, "cache_misses");
	check("insight cache_misses names the re-read file", in && strstr(in->text, "/scratch/in") &&
	      strstr(in->text, "8.0 MiB fetched again"), "%s", in ? in->text : "(none)");
	in = find_insight(&p, "tiny_fwrites");
	check("insight tiny_fwrites says stdio's buffer worked", in && strstr(in->text, "stdio's buffer already turned "
	      "1,000 of them into 4 write system calls"), "%s", in ? in->text : "(none)");
	check("no write amplification at 1.07x", !find_insight(&p, "write_amplification"), "present");
	check("no small block requests at 206 requests", !find_insight(&p, "small_block_requests"), "present");
	size_t rereads = 0;
	rereads = count_findings("rereads");
	check_u64("rereads judged once (user layer, not syscall)", rereads, 1);

	/* text */
	/* the report names the device by the mount the caller knows */
	free_job();
	if (build_mounts(&p, &mnt, 1) < 0)
		goto out;
	struct ana_report_opts o = {.top_n = 5};
	char *text = render_text(&p, &o);
	check("text fits 100 columns with a kernel log", widest_line(text) <= ANA_TEXT_WIDTH, "widest %zu",
	      widest_line(text));
	check("text header: 1 log + kernel log", text && strstr(text, "1 process, 1 log + kernel log,"), "missing");
	check("text job: processes are logs only", text && strstr(text, "processes   1 log, all exited 0"),
	      "missing");
	check("text has Down the stack", text && strstr(text, "\nDown the stack ("), "missing");
	check("text: hit estimate", text && strstr(text, "page cache: 75.0% of 3,072 read calls served from the cache"),
	      "missing");
	check("text: buffering line", text && strstr(text, "calls on data files: reads 3,072 posix calls -> 3,072 "
						      "system calls; writes 1,100 calls (1,000"), "missing");
	check("text: device with mount point", text && strstr(text, "device loop3 7:3 on /mnt/scratch (ext4): 96 reads"
							       " 12.0 MiB, 110 writes 440.0 KiB"), "missing");
	check("text: device queue time", text && strstr(text, "queue 1.6 µs, device 151.5 µs (p50 ~32.8 µs, p99 "
							   "~262.1 µs)"), "missing");
	char *pat = text ? strstr(text, "\nAccess patterns") : NULL, *pat_end = pat ? strstr(pat, "\nMost common") : NULL;
	if (pat_end)
		*pat_end = '\0';
	check("text: no kernel layer in the pattern table", pat && !strstr(pat, "\n  syscall ") &&
	      !strstr(pat, "\n  block "), "present");
	check("text: patterns n/a for the kernel layers", text && strstr(text, "n/a (the kernel layers do not compute"),
	      "missing");
	check("text: kernel sizes table", text && strstr(text, "syscall reads  syscall writes"), "missing");
	free(text);

	/* JSON */
	if (render_json(&p, &o, json_path) == 0) {
		check_python("json kernel: parses", json_path, "pass");
		check_python("json kernel: one process", json_path,
			     "assert len(d[\"processes\"])==1 and d[\"job\"][\"nprocs\"]==1");
		check_python("json kernel: layers.syscall with the user keys", json_path,
			     "l=d[\"layers\"][\"syscall\"]\nassert l[\"writes\"]==104 and l[\"bytes_written\"]==419600 "
			     "and l[\"counters\"][\"cache_miss_reads\"]==768 and len(l[\"write_lat_hist\"])==32");
		check_python("json kernel: layers.block and layers.pagecache", json_path,
			     "assert d[\"layers\"][\"block\"][\"bytes_written\"]==450560 and "
			     "d[\"layers\"][\"pagecache\"][\"counters\"][\"pages_read_in\"]==3072");
		check_python("json kernel: no latency histograms in user layers", json_path,
			     "assert \"write_lat_hist\" not in d[\"layers\"][\"posix\"]");
		check_python("json kernel: files[] syscall entry", json_path,
			     "f=[x for x in d[\"files\"] if x[\"layer\"]==\"syscall\" and x[\"path\"]==\"/scratch/out\"][0]\n"
			     "assert f[\"writes\"]==100 and f[\"bytes_written\"]==409600 and f[\"pid\"]==100 and "
			     "f[\"ino\"]==12 and f[\"job_view\"] is False and sum(f[\"write_lat_hist\"])==100");
		check_python("json kernel: files[] device entry flagged pseudo", json_path,
			     "f=[x for x in d[\"files\"] if x[\"path\"]==\"<device loop3 7:3>\"][0]\n"
			     "assert f[\"layer\"]==\"block\" and f[\"pseudo\"] is True and f[\"data_file\"] is False");
		check_python("json kernel: pagecache figures", json_path,
			     "c=d[\"kernel\"][\"pagecache\"]\nassert c[\"hit_reads\"]==2304 and c[\"miss_reads\"]==768 "
			     "and c[\"hit_ratio\"]==0.75 and c[\"bytes_read_in\"]==3072*d[\"kernel\"][\"page_size\"]");
		check_python("json kernel: devices", json_path,
			     "v=d[\"kernel\"][\"devices\"][0]\nassert v[\"name\"]==\"loop3\" and v[\"major\"]==7 and "
			     "v[\"minor\"]==3 and v[\"mount_point\"]==\"/mnt/scratch\" and v[\"ops\"]==206 and "
			     "v[\"bytes_written\"]==450560 and v[\"time_queue\"]==0.000322 and "
			     "sum(v[\"write_lat_hist\"])==110 and v[\"device_p99_ns\"]==262144");
		check_python("json kernel: amplification", json_path,
			     "a=d[\"kernel\"][\"amplification\"]\nassert a[\"block_bytes_written\"]==450560 and "
			     "a[\"syscall_bytes_written\"]==419600 and a[\"data_files\"][\"syscall_bytes_read\"]==12*1048576");
		check_python("json kernel: calls", json_path,
			     "c=d[\"kernel\"][\"calls\"][\"writes\"]\nassert c[\"user\"]==1100 and c[\"stdio\"]==1000 "
			     "and c[\"posix\"]==100 and c[\"syscall\"]==104");
		check_python("json kernel: per-file view", json_path,
			     "f=[x for x in d[\"kernel\"][\"files\"] if x[\"path\"]==\"/scratch/log\"][0]\n"
			     "assert f[\"user_layer\"]==\"stdio\" and f[\"user\"][\"writes\"]==1000 and "
			     "f[\"syscall\"][\"writes\"]==4 and f[\"block\"][\"bytes_written\"]==40960 and f[\"pages_dirtied\"]==3");
		check_python("json kernel: no patterns or common sizes for kernel layers", json_path,
			     "assert \"syscall\" not in d[\"patterns\"] and \"block\" not in d[\"common_sizes\"] and "
			     "\"posix\" in d[\"patterns\"] and \"syscall\" in d[\"sizes\"] and \"pagecache\" not in d[\"sizes\"]");
		check_python("json kernel: layers attached and log", json_path,
			     "k=d[\"kernel\"]\nassert k[\"layers_attached\"]==[\"syscall\",\"pagecache\",\"fs\",\"block\"] and "
			     "k[\"events_dropped\"]==0 and k[\"kernel_table_full\"]==0 and len(k[\"logs\"])==1 and "
			     "k[\"logs\"][0][\"pid\"]==100");
	}
	unlink(json_path);
done:
	free_job();
out:
	reset_logs();
}

/* A statically linked program and its child: no user-layer log at all. */
static void test_kernel_only(void)
{
	struct ana_profile p;
	char json_path[] = "/tmp/iostrata-test-XXXXXX";
	const uint64_t dev = makedev(254, 1);

	struct log_file *k = mk_klog(50, 1000, 5000000, "/bin/static");
	/* 200 writes of 100 B taking most of the time: small writes, judged on the system calls */
	struct log_record *o = add_krec(k, LOG_LAYER_SYSCALL, "/d/out", 50, dev, 21);
	kio(o, 1, 200, 100, 5000, 2000);
	kio(o, 0, 5, 4000, 1000, 1100000);
	o->counters[LOG_C_CACHE_HIT_READS] = 5;
	kio(add_krec(k, LOG_LAYER_SYSCALL, "/d/child", 51, dev, 22), 1, 11, 10, 1000, 3000000);
	kio(add_krec(k, LOG_LAYER_SYSCALL, "/sys/devices/system/cpu/online", 50, makedev(0, 22), 5), 0, 1, 6, 800, 1500);
	struct log_record *bd = add_krec(k, LOG_LAYER_BLOCK, "<device vda1 254:1>", 0, dev, 0);
	bd->flags |= LOG_R_PSEUDO;
	kblock(bd, 1, 6, 4096, 1000, 30000);
	kblock(add_krec(k, LOG_LAYER_BLOCK, "/d/out", 0, dev, 21), 1, 6, 4096, 1000, 30000);
	if (build(&p) < 0)
		goto out;
	check("kernel-only: a kernel-only job", p.kernel_only == 1, "kernel_only=%d", p.kernel_only);
	check_u64("kernel-only: the command and its child are processes", p.nprocs, 2);
	check_u64("kernel-only: both seen by the kernel only", p.nkernel_procs, 2);
	check_u64("kernel-only: two ranks", p.nranks, 2);
	if (p.nprocs == 2) {
		check("kernel-only: the command keeps its header", p.procs[0].pid == 50 && p.procs[0].kernel_only &&
		      !strcmp(p.procs[0].exe, "/bin/static") && p.procs[0].exit_status == 0 &&
		      p.procs[0].start_ns == 1000 && p.procs[0].end_ns == 5000000, "pid %d exe %s", p.procs[0].pid,
		      p.procs[0].exe);
		check("kernel-only: the child by its records", p.procs[1].pid == 51 && !p.procs[1].exe[0] &&
		      p.procs[1].exit_status == -1 && p.procs[1].start_ns == 3000000 &&
		      p.procs[1].end_ns == 3000000 + 11 * 1000, "pid %d start %" PRIu64 " end %" PRIu64, p.procs[1].pid,
		      p.procs[1].start_ns, p.procs[1].end_ns);
	}
	check_str("kernel-only: command from the kernel log", p.first ? p.first->exe : NULL, "/bin/static");
	check_u64("kernel-only: rank of the command, writes", p.ranks[0].writes, 200);
	check_u64("kernel-only: rank of the command, bytes written", p.ranks[0].bytes_written, 20000);
	check_u64("kernel-only: rank of the command, reads (system file too)", p.ranks[0].reads, 6);
	check_u64("kernel-only: rank of the child, bytes written", p.ranks[1].bytes_written, 110);
	check("kernel-only: I/O mode from the system calls", p.io_mode.mode == ANA_IO_N_N && p.io_mode.data_files == 2 &&
	      p.io_mode.ranks_with_data == 2, "mode %s F=%zu P=%zu", ana_io_mode_name(p.io_mode.mode),
	      p.io_mode.data_files, p.io_mode.ranks_with_data);
	check_u64("kernel-only: stand-in layer writes", p.standin.c[LOG_C_WRITES], 211);
	const struct found *in = find_insight(&p, "small_writes");
	check("kernel-only: small writes judged on the system calls", in && strstr(in->text, "of 211 system-call writes"),
	      "%s", in ? in->text : "(none)");
	char *text = render_text(&p, NULL);
	check("kernel-only text: header", text && strstr(text, "2 processes, kernel log only,"), "missing");
	check("kernel-only text: processes", text && strstr(text, "2 processes seen only by the kernel layer, "),
	      "missing");
	check("kernel-only text: per-file row without a user layer", text &&
	      strstr(text, "    writes             -           -        200    19.5 KiB"), "missing");
	check("kernel-only text fits 100 columns", widest_line(text) <= ANA_TEXT_WIDTH, "widest %zu", widest_line(text));
	free(text);
	if (render_json(&p, NULL, json_path) == 0) {
		check_python("kernel-only json: processes", json_path,
			     "v=d[\"processes\"]\nassert len(v)==2 and all(x[\"kernel_only\"] for x in v) and "
			     "v[0][\"exe\"]==\"/bin/static\" and v[1][\"pid\"]==51");
		check_python("kernel-only json: syscall file entries in the job view", json_path,
			     "f=[x for x in d[\"files\"] if x[\"layer\"]==\"syscall\" and x[\"path\"]==\"/d/child\"][0]\n"
			     "assert f[\"writes\"]==11 and f[\"job_view\"] is True and f[\"pid\"]==51");
		check_python("kernel-only json: kernel object", json_path,
			     "assert d[\"kernel\"][\"kernel_only\"] is True and d[\"kernel\"][\"kernel_only_processes\"]==2 "
			     "and d[\"kernel\"][\"files\"][0][\"user_layer\"]==\"\"");
	}
	unlink(json_path);
	free_job();
out:
	reset_logs();
}

/* A launcher's child exec'd a static program: the user layer saw the first image only. */
static void test_kernel_exec(void)
{
	struct ana_profile p;
	const uint64_t dev = makedev(254, 1);

	struct log_file *sh = mk_log(60, -1, 1000, 2000, "/bin/sh");
	sh->hdr.flags |= LOG_F_EXEC;
	sh->hdr.exit_status = -1;
	io(add_rec(sh, LOG_LAYER_POSIX, "/d/in.cfg", 0), 0, 1, 300, 10);
	struct log_file *k = mk_klog(60, 900, 9000, "/bin/sh");
	/* the shell's read, before its exec: the user layer has it */
	kio(add_krec(k, LOG_LAYER_SYSCALL, "/d/in.cfg", 60, dev, 30), 0, 1, 300, 10, 1500);
	/* the static image's writes, after the exec */
	kio(add_krec(k, LOG_LAYER_SYSCALL, "/d/data", 60, dev, 31), 1, 7, 1000, 100, 3000);
	if (build(&p) < 0)
		goto out;
	check_u64("exec: the shell and the image it exec'd", p.nprocs, 2);
	check_u64("exec: one kernel-only image", p.nkernel_procs, 1);
	check_u64("exec: one rank (one pid)", p.nranks, 1);
	if (p.nprocs == 2)
		check("exec: the unseen image starts at the exec and ends with the command", p.procs[1].kernel_only &&
		      p.procs[1].start_ns == 2000 && p.procs[1].end_ns == 9000 && p.procs[1].exit_status == 0,
		      "start %" PRIu64 " end %" PRIu64, p.procs[1].start_ns, p.procs[1].end_ns);
	check_u64("exec: rank bytes written from the unseen image's system calls", p.ranks[0].bytes_written, 7000);
	check_u64("exec: rank bytes read once (user layer, not its system call again)", p.ranks[0].bytes_read, 300);
	check("exec: I/O mode counts both files", p.io_mode.mode == ANA_IO_1_1 && p.io_mode.data_files == 2,
	      "mode %s F=%zu", ana_io_mode_name(p.io_mode.mode), p.io_mode.data_files);
	free_job();
out:
	reset_logs();
}

/* The kernel insights fire on their figures, and a healthy job says nothing. */
static void test_kernel_insights(void)
{
	struct ana_profile p;
	const uint64_t dev = makedev(259, 0);

	/* 2000 appends of 100 B, each synced: the device rewrites a 4 KiB block every time */
	struct log_file *u = mk_log(70, -1, 1000, 100000000, "/bin/db");
	struct log_record *w = add_rec(u, LOG_LAYER_POSIX, "/d/journal", 0);
	io(w, 1, 2000, 100, 1000000);
	w->counters[LOG_C_FSYNCS] = 2000;
	w->counters[LOG_C_TIME_META] = 100000;
	struct log_file *k = mk_klog(70, 900, 100000100, "/bin/db");
	struct log_record *ks = add_krec(k, LOG_LAYER_SYSCALL, "/d/journal", 70, dev, 40);
	kio(ks, 1, 2000, 100, 500, 2000);
	ks->counters[LOG_C_FSYNCS] = 2000;
	struct log_record *bd = add_krec(k, LOG_LAYER_BLOCK, "<device nvme0n1 259:0>", 0, dev, 0);
	bd->flags |= LOG_R_PSEUDO;
	kblock(bd, 1, 2000, 4096, 2000, 20000);
	kblock(add_krec(k, LOG_LAYER_BLOCK, "/d/journal", 70, dev, 40), 1, 2000, 4096, 2000, 20000);
	if (build(&p) < 0)
		goto out;
	const struct found *in = find_insight(&p, "write_amplification");
	check("insight write_amplification", in && strstr(in->text, "wrote 7.8 MiB") && strstr(in->text, "(41.0x; most on "
	      "/d/journal; 2,000 syncs)"), "%s", in ? in->text : "(none)");
	in = find_insight(&p, "small_block_requests");
	check("insight small_block_requests", in && strstr(in->text, "device nvme0n1 served 2,000 requests of 4.0 KiB"),
	      "%s", in ? in->text : "(none)");
	size_t small = 0;
	small = count_findings("small_writes");
	check_u64("small writes judged once (posix), not again on the system calls", small, 1);
	check("no cache insight without reads", !find_insight(&p, "cache_misses"), "present");
	free_job();
	reset_logs();

	/* an unbuffered stream: every tiny fwrite a system call */
	u = mk_log(75, -1, 1000, 100000000, "/bin/app");
	io(add_rec(u, LOG_LAYER_STDIO, "/d/trace", 0), 1, 2000, 12, 100000);
	io(add_rec(u, LOG_LAYER_POSIX, "/d/trace", 0), 1, 2000, 12, 1000000);
	k = mk_klog(75, 900, 100000100, "/bin/app");
	kio(add_krec(k, LOG_LAYER_SYSCALL, "/d/trace", 75, dev, 42), 1, 2000, 12, 400, 2000);
	if (build(&p) < 0)
		goto out;
	in = find_insight(&p, "tiny_fwrites");
	check("insight tiny_fwrites: an unbuffered stream", in && strstr(in->text, "the stream does not buffer them: "
	      "their 2,000 calls reached the kernel as 2,000 write system calls"), "%s", in ? in->text : "(none)");
	free_job();
	reset_logs();

	/* O_DIRECT re-reads of a 4 MiB file, one request of which the kernel never showed completing
	 * (docs/KERNEL.md, "Known gap"): the device still fetched it, so the insight counts it */
	u = mk_log(85, -1, 1000, 100000000, "/bin/app");
	struct log_record *ur = add_rec(u, LOG_LAYER_POSIX, "/d/big", 0);
	io(ur, 0, 12, 1 << 20, 1000000);
	ur->counters[LOG_C_MAX_READ_END] = 4 << 20;
	k = mk_klog(85, 900, 100000100, "/bin/app");
	ks = add_krec(k, LOG_LAYER_SYSCALL, "/d/big", 85, dev, 43);
	kio(ks, 0, 12, 1 << 20, 10000, 2000);
	ks->counters[LOG_C_MAX_READ_END] = 4 << 20;
	bd = add_krec(k, LOG_LAYER_BLOCK, "<device nvme0n1 259:0>", 0, dev, 0);
	bd->flags |= LOG_R_PSEUDO;
	kblock(bd, 0, 11, 1 << 20, 2000, 100000);
	bd->unseen_requests = 1;
	bd->unseen_bytes_read = 1 << 20;
	struct log_record *bf = add_krec(k, LOG_LAYER_BLOCK, "/d/big", 85, dev, 43);
	kblock(bf, 0, 11, 1 << 20, 2000, 100000);
	bf->unseen_requests = 1;
	bf->unseen_bytes_read = 1 << 20;
	if (build(&p) < 0)
		goto out;
	in = find_insight(&p, "cache_misses");
	check("insight cache_misses counts the unseen request", in && strstr(in->text, "/d/big was read for 12.0 MiB over "
	      "a 4.0 MiB extent and 12.0 MiB of it came from the device (8.0 MiB fetched again over 1 file). O_DIRECT"),
	      "%s", in ? in->text : "(none)");
	struct ana_stack st;
	if (ana_stack_build(&p, NULL, 0, &st) == 0) {
		check_u64("unseen: devices moved 12 MiB (seen + unseen)", st.block_bytes_read, 12 << 20);
		check_dbl("unseen: data-file read amplification 1", st.file_read_amplification, 1.0);
		check("unseen: the file's row carries its unseen request", st.nfiles == 1 && st.files[0].unseen[0] == 1 &&
		      st.files[0].unseen[1] == 1 << 20 && st.files[0].bytes[ANA_SL_BLOCK][0] == 11 << 20, "%zu files",
		      st.nfiles);
		ana_stack_free(&st);
	} else {
		check("unseen: stack builds", 0, "ENOMEM");
	}
	free_job();
	reset_logs();

	/* large sequential writes straight to the device */
	u = mk_log(80, -1, 1000, 100000000, "/bin/app");
	io(add_rec(u, LOG_LAYER_POSIX, "/d/big", 0), 1, 64, 1 << 20, 1000000);
	k = mk_klog(80, 900, 100000100, "/bin/app");
	kio(add_krec(k, LOG_LAYER_SYSCALL, "/d/big", 80, dev, 41), 1, 64, 1 << 20, 10000, 2000);
	bd = add_krec(k, LOG_LAYER_BLOCK, "<device nvme0n1 259:0>", 0, dev, 0);
	bd->flags |= LOG_R_PSEUDO;
	kblock(bd, 1, 512, 128 * 1024, 2000, 100000);
	kblock(add_krec(k, LOG_LAYER_BLOCK, "/d/big", 80, dev, 41), 1, 512, 128 * 1024, 2000, 100000);
	if (build(&p) < 0)
		goto out;
	check_u64("healthy kernel job: no findings", cur_job.findings.n, 0);
	for (size_t i = 0; i < cur_job.findings.n; i++)
		printf("# unexpected finding: %s\n", cur_job.findings.v[i].text);
	free_job();
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
	(void)p;
	int rc = ana_report_text(m, &cur_job, NULL) | ana_report_json(m, &cur_job, NULL);
	fclose(m);
	check("empty job renders", rc == 0, "rc=%d", rc);
	free(text);
	free_job();
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	test_merge_rules();
	test_layer_totals();
	test_same_rank_merge();
	test_runtime_over_ranks();
	test_profile_steps();
	test_wall_and_live();
	test_duplicates_and_exec();
	test_stdio_not_double_counted();
	test_io_modes();
	test_imbalance();
	test_top_order();
	test_common_sizes();
	test_common_sizes_many();
	test_insights();
	test_findings_fit();
	test_text_helpers();
	test_renderings();
	test_kernel_join();
	test_kernel_only();
	test_kernel_exec();
	test_kernel_insights();
	test_empty_job();
	if (failures)
		printf("# %d check%s failed\n", failures, failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}
