/* SPDX-License-Identifier: MIT */
/*
 * The store of the web benchmark (bench/web, docs/BENCHMARKS.md "Web"): a store filled through
 * the store interface (store.h), as the daemon fills it, with a facility's week:
 *   - JOBS job rows over DAYS days (default 100,000 over 7), 20 users, 12 applications, NODES
 *     hosts (node01 ...); every 10th job also runs on a second host (a second row, same job id);
 *     1 to 4 processes each, every 500th job a big one (16 ranks, 2 h); a job still running at
 *     the end of the week has no end, no report;
 *   - per job its interval statistics: K interval ends over its run (K = run / 10 s, at most 30;
 *     a big job every 5 s), each process reading its input and writing its output at the POSIX
 *     and the system-call layer, a metadata call now and then: 4 or 5 rows per process and
 *     interval; its user-layer totals; a JSON report (the report's shape: job, layers, files,
 *     findings, warnings; a few KiB) and its findings (0 to 3) in the findings table;
 *   - NODES x DAYS x 86,400 node-seconds (1 s) for two layers (POSIX and system calls), each with
 *     a size histogram, host by host.
 * With --report FILE (a real `iostrata report --json`, bench/web makes one of 16 processes), every
 * big job's stored report is that report with the job's start (job.start_wall_ns) put in, so
 * that the application view draws it as any real job (the synthetic reports lack members it draws).
 * Values come from a fixed pseudo-random sequence (--seed): two runs make the same store. Rows are
 * committed every 100,000 (one transaction per batch, prepared statements inside the store). The
 * last day ends at the start of the current UTC day, so "since 1d" means something.
 *
 *   web STORE_URL [--jobs N] [--nodes N] [--days N] [--seed N] [--report FILE]
 * One line of key=value on stdout: counts, the time range, and the keys of a big and a small job.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/json.h"
#include "iostrata/format.h"
#include "store/store.h"

#define DAY_MS INT64_C(86400000)
#define COMMIT_ROWS 100000
#define NUSERS 20
#define NAPPS 12

static const char *const apps[NAPPS] = {
	"/opt/apps/lammps/bin/lmp",   "/opt/apps/gromacs/bin/gmx_mpi", "/usr/bin/python3",
	"/opt/apps/wrf/main/wrf.exe", "/opt/apps/openfoam/bin/simpleFoam", "/opt/apps/namd/namd2",
	"/home/shared/bin/ior",       "/opt/apps/cp2k/bin/cp2k.psmp",  "/opt/apps/quantum-espresso/bin/pw.x",
	"/usr/bin/Rscript",           "/opt/apps/vasp/bin/vasp_std",   "/home/shared/bin/h5bench",
};

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}
static uint64_t rnd_in(uint64_t lo, uint64_t hi) /* [lo, hi] */
{
	return lo + rnd() % (hi - lo + 1);
}

struct gen {
	struct store *s;
	const char *tpl; /* the big jobs' report (--report), NULL: synthetic */
	uint64_t pending; /* rows since the last commit */
	uint64_t jobs, procs, intervals, node_rows, findings;
	int64_t t0, t1;
	int64_t big_key, small_key;
};

static int die(struct gen *g, const char *what, int r)
{
	fprintf(stderr, "web: %s: %s (%s)\n", what, g->s ? store_error(g->s) : "", strerror(-r));
	return 1;
}

/* Commits every COMMIT_ROWS rows and begins the next transaction. */
static int tick(struct gen *g, uint64_t rows)
{
	g->pending += rows;
	if (g->pending < COMMIT_ROWS)
		return 0;
	g->pending = 0;
	int r = store_commit(g->s);
	return r < 0 ? r : store_begin(g->s);
}

/* A finding in the report's form (w: pretty inside the report, flat for the findings table). */
static void finding(struct ana_jw *w, unsigned kind, const char *path, int rank, uint64_t v)
{
	static const char *const ids[] = {"small-writes", "metadata-heavy", "rank-imbalance"};
	static const char *const texts[] = {
		"Most writes are smaller than 64 KiB: the file system sees many small requests.",
		"Metadata calls outnumber reads and writes: opens and stats dominate the run.",
		"One rank moves far more bytes than the median rank: the others wait for it.",
	};
	ana_jw_open(w, NULL, '{');
	ana_jw_str(w, "id", ids[kind]);
	ana_jw_str(w, "severity", kind == 2 ? "warning" : "info");
	ana_jw_str(w, "layer", "posix");
	ana_jw_str(w, "path", path);
	if (kind == 2)
		ana_jw_i64(w, "rank", rank);
	else
		ana_jw_null(w, "rank");
	ana_jw_null(w, "pid");
	ana_jw_open(w, "figures", '[');
	ana_jw_open(w, NULL, '{');
	ana_jw_str(w, "name", "value");
	ana_jw_u64(w, "value", v);
	ana_jw_str(w, "unit", "count");
	ana_jw_close(w, '}');
	ana_jw_close(w, ']');
	ana_jw_null(w, "threshold");
	ana_jw_str(w, "text", texts[kind]);
	ana_jw_str(w, "recommendation", "See docs/FINDINGS.md for what to change.");
	ana_jw_close(w, '}');
}

/* A real report with the job's start put in (its "start_wall_ns": the view's time axis). */
static char *report_from(const char *tpl, int64_t start_ms)
{
	const char *k = strstr(tpl, "\"start_wall_ns\":");
	char *out = NULL;
	if (!k)
		return strdup(tpl);
	const char *v = k + strlen("\"start_wall_ns\":");
	v += strspn(v, " ");
	const char *e = v + strspn(v, "0123456789");
	if (asprintf(&out, "%.*s%" PRId64 "%s", (int)(v - tpl), tpl, start_ms * 1000000, e) < 0)
		return NULL;
	return out;
}

/* One job row: its processes, files, intervals, totals, report and findings. */
static int one_job(struct gen *g, uint64_t i, const char *jobid, const char *host, unsigned user, unsigned app,
		   int big, int64_t start, int64_t dur)
{
	char uname[32], jobdir[128], out[160], in[96];
	snprintf(uname, sizeof uname, "user%02u", user);
	snprintf(jobdir, sizeof jobdir, "/scratch/%s/job-%s", uname, jobid);
	snprintf(out, sizeof out, "%s/%s-out.dat", jobdir, host);
	snprintf(in, sizeof in, "/project/inputs/set-%03u.dat", (unsigned)(i % 500));
	int running = start + dur > g->t1;
	struct store_job j = {.job = jobid, .host = host, .uid = 2000 + user, .user = uname, .exe = apps[app],
			      .jobdir = jobdir, .start_ms = start, .end_ms = running ? 0 : start + dur,
			      .running = running};
	int r = store_job_put(g->s, &j);
	if (r < 0)
		return r;
	g->jobs++;
	if (big && !g->big_key && !running)
		g->big_key = j.key;
	if (!big && !g->small_key && !running && dur >= 300000)
		g->small_key = j.key;
	int64_t fin, fout;
	if ((r = store_file_key(g->s, in, &fin)) < 0 || (r = store_file_key(g->s, out, &fout)) < 0)
		return r;
	unsigned np = big ? 16 : (unsigned)rnd_in(1, 4);
	int64_t pkeys[16];
	for (unsigned p = 0; p < np; p++) {
		char live[160], fin_path[160];
		snprintf(live, sizeof live, "/dev/shm/iostrata-%u/%" PRIu64 ".live", 2000 + user, g->procs);
		snprintf(fin_path, sizeof fin_path, "%s/%s-%" PRIu64 ".iostr", jobdir, host, g->procs);
		struct store_proc sp = {.job_key = j.key, .host = host, .pid = (int32_t)(1000 + g->procs % 4000000),
					.rank = (int32_t)p, .start_ns = g->procs * 1000003ull, .start_ticks = g->procs,
					.uid = 2000 + user, .exe = apps[app], .live_path = running ? live : "",
					.final_path = running ? "" : fin_path, .start_ms = start,
					.end_ms = running ? 0 : start + dur, .state = running ? STORE_PROC_LIVE : STORE_PROC_ENDED};
		if ((r = store_proc_put(g->s, &sp)) < 0)
			return r;
		pkeys[p] = sp.key;
		g->procs++;
	}
	/* interval ends over the run (up to the week's end for a running job) */
	int64_t span = running ? g->t1 - start : dur;
	int64_t step = big ? 5000 : 10000;
	uint64_t k = (uint64_t)(span / step);
	if (!big && k > 30) {
		k = 30;
		step = span / 30 / 1000 * 1000;
	}
	if (k == 0)
		k = 1;
	int64_t bytes[STORE_NCATS] = {0}, calls[STORE_NCATS] = {0};
	uint64_t wsize = (uint64_t)1 << rnd_in(12, 22), rsize = (uint64_t)1 << rnd_in(12, 22);
	for (uint64_t t = 1; t <= k; t++) {
		int64_t tm = start / 1000 * 1000 + (int64_t)t * step;
		for (unsigned p = 0; p < np; p++) {
			uint64_t nw = rnd_in(1, 64), nr = rnd_in(0, 64);
			struct store_interval rows[5] = {
				{tm, 1000, pkeys[p], fout, LOG_LAYER_POSIX, STORE_CAT_WRITE, (int64_t)(nw * wsize), (int64_t)nw, (int64_t)(nw * 20000)},
				{tm, 1000, pkeys[p], fin, LOG_LAYER_POSIX, STORE_CAT_READ, (int64_t)(nr * rsize), (int64_t)nr, (int64_t)(nr * 15000)},
				{tm, 1000, pkeys[p], fout, LOG_LAYER_SYSCALL, STORE_CAT_WRITE, (int64_t)(nw * wsize), (int64_t)nw, (int64_t)(nw * 18000)},
				{tm, 1000, pkeys[p], fin, LOG_LAYER_SYSCALL, STORE_CAT_READ, (int64_t)(nr * rsize), (int64_t)nr, (int64_t)(nr * 14000)},
				{tm, 1000, pkeys[p], fout, LOG_LAYER_POSIX, STORE_CAT_META, 0, (int64_t)rnd_in(1, 8), 5000},
			};
			unsigned n = t % 4 == 1 ? 5 : 4;
			for (unsigned x = 0; x < n; x++) {
				if ((r = store_interval_add(g->s, &rows[x])) < 0)
					return r;
				if (rows[x].layer == LOG_LAYER_POSIX) {
					bytes[rows[x].cat] += rows[x].bytes;
					calls[rows[x].cat] += rows[x].calls;
				}
			}
			g->intervals += n;
			if ((r = tick(g, n)) < 0)
				return r;
		}
	}
	if ((r = store_job_totals_add(g->s, j.key, bytes, calls)) < 0)
		return r;
	if (running)
		return tick(g, 1 + np);
	if (big && g->tpl) {
		char *rep = report_from(g->tpl, start);
		if (!rep)
			return -ENOMEM;
		r = store_job_report_put(g->s, j.key, "(the text report)\n", rep);
		free(rep);
		return r < 0 ? r : tick(g, 2 + np);
	}
	/* the report and its findings */
	unsigned nf = (unsigned)(rnd() % 7);
	nf = nf > 3 ? 0 : nf;
	char *rep = NULL, *flat[3] = {NULL};
	size_t len = 0, flen[3];
	FILE *f = open_memstream(&rep, &len);
	if (!f)
		return -ENOMEM;
	struct ana_jw w = {.f = f};
	ana_jw_open(&w, NULL, '{');
	ana_jw_u64(&w, "report_version", 1);
	ana_jw_open(&w, "job", '{');
	ana_jw_str(&w, "id", jobid);
	ana_jw_str(&w, "user", uname);
	ana_jw_str(&w, "exe", apps[app]);
	ana_jw_u64(&w, "processes", np);
	ana_jw_i64(&w, "start_ms", start);
	ana_jw_i64(&w, "end_ms", start + dur);
	ana_jw_str(&w, "io_mode", np > 1 ? "file-per-process" : "single-process");
	ana_jw_close(&w, '}');
	ana_jw_open(&w, "layers", '{');
	ana_jw_open(&w, "posix", '{');
	ana_jw_u64(&w, "bytes_read", (uint64_t)bytes[0]);
	ana_jw_u64(&w, "bytes_written", (uint64_t)bytes[1]);
	ana_jw_u64(&w, "reads", (uint64_t)calls[0]);
	ana_jw_u64(&w, "writes", (uint64_t)calls[1]);
	ana_jw_u64(&w, "meta_ops", (uint64_t)calls[2]);
	ana_jw_close(&w, '}');
	ana_jw_close(&w, '}');
	ana_jw_open(&w, "processes", '[');
	for (unsigned p = 0; p < np; p++) {
		ana_jw_open(&w, NULL, '{');
		ana_jw_i64(&w, "rank", p);
		ana_jw_str(&w, "host", host);
		ana_jw_u64(&w, "bytes_written", (uint64_t)bytes[1] / np);
		ana_jw_u64(&w, "bytes_read", (uint64_t)bytes[0] / np);
		ana_jw_open(&w, "write_sizes", '[');
		for (unsigned b = 0; b < 24; b++)
			ana_jw_u64(&w, NULL, b == 12 ? (uint64_t)calls[1] / np : b);
		ana_jw_close(&w, ']');
		ana_jw_open(&w, "read_sizes", '[');
		for (unsigned b = 0; b < 24; b++)
			ana_jw_u64(&w, NULL, b == 16 ? (uint64_t)calls[0] / np : b);
		ana_jw_close(&w, ']');
		ana_jw_close(&w, '}');
	}
	ana_jw_close(&w, ']');
	ana_jw_open(&w, "files", '[');
	const char *paths[2] = {in, out};
	for (unsigned x = 0; x < 2; x++) {
		ana_jw_open(&w, NULL, '{');
		ana_jw_str(&w, "path", paths[x]);
		ana_jw_u64(&w, "bytes_read", x ? 0 : (uint64_t)bytes[0]);
		ana_jw_u64(&w, "bytes_written", x ? (uint64_t)bytes[1] : 0);
		ana_jw_u64(&w, "reads", x ? 0 : (uint64_t)calls[0]);
		ana_jw_u64(&w, "writes", x ? (uint64_t)calls[1] : 0);
		ana_jw_open(&w, "sizes", '[');
		for (unsigned b = 0; b < 24; b++)
			ana_jw_u64(&w, NULL, b == 12 ? (uint64_t)calls[x] : 0);
		ana_jw_close(&w, ']');
		ana_jw_close(&w, '}');
	}
	ana_jw_close(&w, ']');
	ana_jw_open(&w, "findings", '[');
	for (unsigned x = 0; x < nf; x++) {
		finding(&w, x, out, (int)(np - 1), (uint64_t)calls[1]);
		FILE *ff = open_memstream(&flat[x], &flen[x]);
		if (ff) {
			struct ana_jw fw = {.f = ff, .flat = 1};
			finding(&fw, x, out, (int)(np - 1), (uint64_t)calls[1]);
			fclose(ff);
		}
	}
	ana_jw_close(&w, ']');
	ana_jw_open(&w, "warnings", '[');
	ana_jw_close(&w, ']');
	ana_jw_close(&w, '}');
	fputc('\n', f);
	fclose(f);
	r = store_job_report_put(g->s, j.key, "(the text report)\n", rep);
	for (unsigned x = 0; x < nf && r >= 0; x++)
		if (!flat[x])
			r = -ENOMEM;
	if (r >= 0)
		r = store_job_findings_put(g->s, j.key, (const char *const *)flat, nf);
	g->findings += nf;
	free(rep);
	for (unsigned x = 0; x < nf; x++)
		free(flat[x]);
	return r < 0 ? r : tick(g, 2 + np + nf);
}

static int jobs(struct gen *g, uint64_t n, unsigned nodes)
{
	int64_t week = g->t1 - g->t0;
	for (uint64_t i = 0; i < n; i++) {
		char jobid[32], host[16];
		int big = i % 500 == 255;
		int64_t start = g->t0 + (int64_t)(i * (uint64_t)week / n) + (int64_t)rnd_in(0, 59999);
		uint64_t c = rnd() % 100;
		int64_t dur = big ? 7200000
				  : (int64_t)(c < 60 ? rnd_in(60, 600) : c < 90 ? rnd_in(600, 3600) : rnd_in(3600, 14400)) * 1000;
		unsigned user = (unsigned)(rnd() % 100 < 50 ? rnd() % 4 : rnd() % NUSERS); /* a few heavy users */
		unsigned app = (unsigned)(rnd() % NAPPS);
		unsigned h = (unsigned)(rnd() % nodes);
		snprintf(jobid, sizeof jobid, "%" PRIu64, 4000000 + i);
		snprintf(host, sizeof host, "node%02u", h + 1);
		int r = one_job(g, i, jobid, host, user, app, big, start, dur);
		if (r < 0)
			return r;
		/* every 10th job also on the next node: a second row with the same id */
		if (i % 10 == 9 && ++i < n) {
			snprintf(host, sizeof host, "node%02u", (h + 1) % nodes + 1);
			if ((r = one_job(g, i, jobid, host, user, app, 0, start, dur)) < 0)
				return r;
		}
	}
	return 0;
}

static int node_seconds(struct gen *g, unsigned nodes)
{
	static const unsigned layers[2] = {LOG_LAYER_POSIX, LOG_LAYER_SYSCALL};
	int64_t secs = (g->t1 - g->t0) / 1000;
	for (unsigned h = 0; h < nodes; h++) {
		char host[16];
		snprintf(host, sizeof host, "node%02u", h + 1);
		for (int64_t s = 1; s <= secs; s++) {
			for (unsigned l = 0; l < 2; l++) {
				uint64_t x = rnd();
				struct store_node_sec ns = {.t_ms = g->t0 + s * 1000, .dt_ms = 1000, .host = host,
							    .layer = layers[l], .reads = x & 0xff, .writes = (x >> 8) & 0xff,
							    .meta_ops = (x >> 16) & 0x1f};
				ns.bytes_read = ns.reads << 16;
				ns.bytes_written = ns.writes << 14;
				ns.read_hist[16] = ns.reads;
				ns.write_hist[12] = ns.writes / 2;
				ns.write_hist[14] = ns.writes - ns.writes / 2;
				int r = store_node_sec_add(g->s, &ns);
				if (r < 0)
					return r;
			}
			g->node_rows += 2;
			int r = tick(g, 2);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t njobs = 100000;
	const char *tpl = NULL;
	unsigned nodes = 64, days = 7;
	char err[512];
	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: web STORE_URL [--jobs N] [--nodes N] [--days N] [--seed N] [--report FILE]\n");
		return 2;
	}
	for (int i = 2; i + 1 < argc; i += 2) {
		unsigned long long v = strtoull(argv[i + 1], NULL, 10);
		if (!strcmp(argv[i], "--jobs"))
			njobs = v;
		else if (!strcmp(argv[i], "--nodes") && v > 0 && v < 100)
			nodes = (unsigned)v;
		else if (!strcmp(argv[i], "--days") && v > 0)
			days = (unsigned)v;
		else if (!strcmp(argv[i], "--seed") && v)
			rng = v;
		else if (!strcmp(argv[i], "--report")) {
			FILE *f = fopen(argv[i + 1], "r");
			size_t n = 0;
			char *t = NULL;
			if (!f || getdelim(&t, &n, 0, f) < 0) {
				fprintf(stderr, "web: %s: cannot read it\n", argv[i + 1]);
				return 2;
			}
			fclose(f);
			tpl = t;
		}
		else {
			fprintf(stderr, "web: bad option %s %s\n", argv[i], argv[i + 1]);
			return 2;
		}
	}
	struct gen g = {.tpl = tpl};
	g.t1 = (int64_t)time(NULL) * 1000 / DAY_MS * DAY_MS;
	g.t0 = g.t1 - (int64_t)days * DAY_MS;
	if (store_open(argv[1], STORE_CREATE, &g.s, err, sizeof err) < 0) {
		fprintf(stderr, "web: %s\n", err);
		return 1;
	}
	struct timespec a, b, c;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int r = store_begin(g.s);
	if (r < 0 || (r = jobs(&g, njobs, nodes)) < 0)
		return die(&g, "jobs", r);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if ((r = node_seconds(&g, nodes)) < 0 || (r = store_commit(g.s)) < 0)
		return die(&g, "node-seconds", r);
	clock_gettime(CLOCK_MONOTONIC, &c);
	store_close(g.s);
	printf("jobs=%" PRIu64 " processes=%" PRIu64 " interval_rows=%" PRIu64 " findings=%" PRIu64
	       " node_rows=%" PRIu64 " t0_ms=%" PRId64 " t1_ms=%" PRId64 " big_job=%" PRId64 " small_job=%" PRId64
	       " jobs_s=%.1f nodes_s=%.1f big_report=%s\n",
	       g.jobs, g.procs, g.intervals, g.findings, g.node_rows, g.t0, g.t1, g.big_key, g.small_key,
	       (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9,
	       (double)(c.tv_sec - b.tv_sec) + (double)(c.tv_nsec - b.tv_nsec) / 1e9, tpl ? "real" : "synthetic");
	return 0;
}
