/* SPDX-License-Identifier: MIT */
/*
 * `iostrata top`: a live view, like iotop, of the processes under capture on this node. It
 * reads their live logs (the shared mappings the capture library updates) once per interval
 * and prints rates from the difference of two readings. There is no IPC with the programs:
 * a user sees the live directories they own, root sees every user's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/json.h"
#include "cli/cli.h"
#include "cli/opts.h"
#include "iostrata/reader.h"

#define TOP_MAX_PROCS 512
#define TOP_MAX_FILES 4096

struct top_file {
	char path[256];
	uint64_t rd, wr, ops, meta;
	double rate; /* bytes per second, for ordering */
};

struct top_proc {
	int pid, rank;
	uint64_t start_ns;
	char exe[64], job[64];
	uint64_t rd, wr, ops, meta, iotime;
	int nfiles;
	struct top_file *files;
	int seen;
};

struct top_sample {
	int n;
	struct top_proc p[TOP_MAX_PROCS];
};

static uint64_t meta_of(const uint64_t *c)
{
	return c[LOG_C_OPENS] + c[LOG_C_CLOSES] + c[LOG_C_SEEKS] + c[LOG_C_STATS] + c[LOG_C_FSYNCS] +
	       c[LOG_C_RENAMES] + c[LOG_C_DUPS] + c[LOG_C_MMAPS] + c[LOG_C_META_OTHER];
}

static int sample_file(const char *path, void *arg)
{
	struct top_sample *s = arg;
	struct log_file lf;
	char err[512];
	if (s->n >= TOP_MAX_PROCS || log_file_read(path, &lf, err, sizeof err) < 0)
		return 0;
	if (!lf.live || !log_live_alive(lf.hdr.pid, lf.hdr.proc_start_ticks)) {
		log_file_free(&lf);
		return 0;
	}
	struct top_proc *p = &s->p[s->n++];
	memset(p, 0, sizeof *p);
	p->pid = lf.hdr.pid;
	p->rank = lf.hdr.rank;
	p->start_ns = lf.hdr.start_ns;
	const char *exe = log_file_string(&lf, lf.hdr.exe);
	snprintf(p->exe, sizeof p->exe, "%s", strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe);
	snprintf(p->job, sizeof p->job, "%s", log_file_string(&lf, lf.hdr.job));
	p->files = calloc(lf.nrecords ? lf.nrecords : 1, sizeof *p->files);
	for (uint32_t i = 0; i < lf.nrecords && p->files; i++) {
		const struct log_record *r = &lf.records[i];
		if (r->layer != LOG_LAYER_POSIX)
			continue; /* stdio's bytes reach the POSIX layer too: count them once */
		const uint64_t *c = r->counters;
		p->rd += c[LOG_C_BYTES_READ];
		p->wr += c[LOG_C_BYTES_WRITTEN];
		p->ops += c[LOG_C_READS] + c[LOG_C_WRITES];
		p->meta += meta_of(c);
		p->iotime += c[LOG_C_TIME_READ] + c[LOG_C_TIME_WRITE] + c[LOG_C_TIME_META];
		struct top_file *f = &p->files[p->nfiles++];
		snprintf(f->path, sizeof f->path, "%s", log_file_string(&lf, r->path));
		f->rd = c[LOG_C_BYTES_READ];
		f->wr = c[LOG_C_BYTES_WRITTEN];
		f->ops = c[LOG_C_READS] + c[LOG_C_WRITES];
		f->meta = meta_of(c);
	}
	log_file_free(&lf);
	return 0;
}

static void take_sample(struct top_sample *s)
{
	char dirs[16][LOG_LIVE_PATH];
	int nd = log_live_dirs(dirs, 16);
	s->n = 0;
	for (int k = 0; k < nd; k++)
		log_live_scan(dirs[k], LOG_LIVE_IN_LIVEDIR, sample_file, s);
}

static void free_sample(struct top_sample *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->p[i].files);
	s->n = 0;
}

static const struct top_proc *find_proc(const struct top_sample *s, const struct top_proc *p)
{
	for (int i = 0; i < s->n; i++)
		if (s->p[i].pid == p->pid && s->p[i].start_ns == p->start_ns)
			return &s->p[i];
	return NULL;
}

static const struct top_file *find_file(const struct top_proc *p, const char *path)
{
	for (int i = 0; p && i < p->nfiles; i++)
		if (!strcmp(p->files[i].path, path))
			return &p->files[i];
	return NULL;
}

static void rate_str(char *buf, size_t len, double bps)
{
	if (bps >= 1048576.0)
		snprintf(buf, len, "%.1fM", bps / 1048576.0);
	else if (bps >= 1024.0)
		snprintf(buf, len, "%.1fK", bps / 1024.0);
	else
		snprintf(buf, len, "%.0f", bps);
}

static int cmp_rate(const void *a, const void *b)
{
	double x = ((const struct top_file *)a)->rate, y = ((const struct top_file *)b)->rate;
	return x < y ? 1 : x > y ? -1 : 0;
}

static void show(const struct top_sample *prev, struct top_sample *cur, double dt, int batch, int nfiles)
{
	time_t now = time(NULL);
	char ts[32];
	strftime(ts, sizeof ts, "%H:%M:%S", localtime(&now));
	if (!batch)
		printf("\033[H\033[2J");
	printf("iostrata top - %s - %d process%s under capture\n", ts, cur->n, cur->n == 1 ? "" : "es");
	printf("%7s %5s %-16s %-14s %9s %9s %8s %8s %6s\n", "PID", "RANK", "COMMAND", "JOB", "READ/s", "WRITE/s",
	       "OPS/s", "META/s", "IO%");
	for (int i = 0; i < cur->n; i++) {
		struct top_proc *p = &cur->p[i];
		const struct top_proc *q = find_proc(prev, p);
		double rd = q ? (double)(p->rd - q->rd) / dt : 0, wr = q ? (double)(p->wr - q->wr) / dt : 0;
		double ops = q ? (double)(p->ops - q->ops) / dt : 0, meta = q ? (double)(p->meta - q->meta) / dt : 0;
		double io = q ? (double)(p->iotime - q->iotime) / (dt * 1e9) * 100.0 : 0;
		char r1[16], r2[16], rk[8];
		rate_str(r1, sizeof r1, rd);
		rate_str(r2, sizeof r2, wr);
		snprintf(rk, sizeof rk, "%d", p->rank);
		printf("%7d %5s %-16.16s %-14.14s %9s %9s %8.0f %8.0f %5.1f%%\n", p->pid, p->rank < 0 ? "-" : rk, p->exe,
		       p->job, r1, r2, ops, meta, io);
		for (int k = 0; k < p->nfiles; k++) {
			const struct top_file *o = find_file(q, p->files[k].path);
			p->files[k].rate = o ? (double)(p->files[k].rd - o->rd + p->files[k].wr - o->wr) / dt : 0;
		}
		qsort(p->files, (size_t)p->nfiles, sizeof *p->files, cmp_rate);
		for (int k = 0; k < p->nfiles && k < nfiles && p->files[k].rate > 0; k++) {
			const struct top_file *f = &p->files[k], *o = find_file(q, f->path);
			rate_str(r1, sizeof r1, (double)(f->rd - o->rd) / dt);
			rate_str(r2, sizeof r2, (double)(f->wr - o->wr) / dt);
			size_t l = strlen(f->path);
			printf("%7s   %-45s %9s %9s %8.0f\n", "", l > 45 ? f->path + l - 45 : f->path, r1, r2,
			       (double)(f->ops - o->ops) / dt);
		}
	}
	fflush(stdout);
}

/* One JSON line per interval: cumulative exact totals and the rates of the interval. Strings go
 * through the one JSON escaper (analysis/json.c) like every other output. */
static void show_json(const struct top_sample *prev, const struct top_sample *cur, double dt)
{
	struct ana_jw w = {.f = stdout, .flat = 1};
	ana_jw_open(&w, NULL, '{');
	ana_jw_i64(&w, "time", (int64_t)time(NULL));
	ana_jw_double(&w, "interval", dt);
	ana_jw_open(&w, "processes", '[');
	for (int i = 0; i < cur->n; i++) {
		const struct top_proc *p = &cur->p[i], *q = find_proc(prev, p);
		ana_jw_open(&w, NULL, '{');
		ana_jw_i64(&w, "pid", p->pid);
		ana_jw_i64(&w, "rank", p->rank);
		ana_jw_str(&w, "exe", p->exe);
		ana_jw_str(&w, "job", p->job);
		ana_jw_u64(&w, "bytes_read", p->rd);
		ana_jw_u64(&w, "bytes_written", p->wr);
		ana_jw_u64(&w, "ops", p->ops);
		ana_jw_u64(&w, "meta_ops", p->meta);
		ana_jw_u64(&w, "io_ns", p->iotime);
		ana_jw_double(&w, "read_rate", q ? (double)(p->rd - q->rd) / dt : 0.0);
		ana_jw_double(&w, "write_rate", q ? (double)(p->wr - q->wr) / dt : 0.0);
		ana_jw_open(&w, "files", '[');
		for (int k = 0; k < p->nfiles; k++) {
			const struct top_file *f = &p->files[k];
			ana_jw_open(&w, NULL, '{');
			ana_jw_str(&w, "path", f->path);
			ana_jw_u64(&w, "bytes_read", f->rd);
			ana_jw_u64(&w, "bytes_written", f->wr);
			ana_jw_u64(&w, "ops", f->ops);
			ana_jw_u64(&w, "meta_ops", f->meta);
			ana_jw_close(&w, '}');
		}
		ana_jw_close(&w, ']');
		ana_jw_close(&w, '}');
	}
	ana_jw_close(&w, ']');
	ana_jw_close(&w, '}');
	fputc('\n', stdout);
	fflush(stdout);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: iostrata top [-d SECONDS] [-n COUNT] [-b] [--json] [--files N]\n"
		   "  live view of the processes under capture on this node (yours; root sees everyone's)\n"
		   "  -d SECONDS   interval, 0.001 to 86400 (default 1)\n"
		   "  -n COUNT     stop after COUNT intervals (default: until interrupted)\n"
		   "  -b           batch mode: append, do not redraw (the default when stdout is no terminal)\n"
		   "  --json       one JSON object per interval\n"
		   "  --files N    busiest files shown per process, 0 to 1000 (default 3)\n");
}

int cmd_top(int argc, char **argv)
{
	double delay = 1.0;
	long count = -1;
	int batch = !isatty(1), nfiles = 3, json = 0;
	struct cli_opts o;
	enum cli_arg k;
	uint64_t n;
	char q[256];
	cli_opts_init(&o, "top", argc, argv);
	while ((k = cli_opts_next(&o)) != CLI_ARG_END) {
		if (k == CLI_ARG_OPERAND) {
			cli_bad(&o, "unexpected argument %s (top takes options only)", cli_quote(q, sizeof q, o.arg));
		} else if (cli_seconds(&o, "-d", 0.001, 86400, &delay)) {
		} else if (cli_uint(&o, "-n", "a count", 1, 1000000000, &n)) {
			count = (long)n;
		} else if (cli_flag(&o, "-b")) {
			batch = 1;
		} else if (cli_flag(&o, "--json")) {
			json = 1;
		} else if (cli_uint(&o, "--files", "a count", 0, 1000, &n)) {
			nfiles = (int)n;
		} else {
			return cli_help_or_unknown(&o, usage);
		}
	}
	if (o.status)
		return o.status;
	static struct top_sample a, b;
	struct top_sample *prev = &a, *cur = &b;
	take_sample(prev);
	for (long it = 0; count < 0 || it < count; it++) {
		struct timespec ts = {(time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9)};
		nanosleep(&ts, NULL);
		take_sample(cur);
		if (json)
			show_json(prev, cur, delay);
		else
			show(prev, cur, delay, batch, nfiles);
		free_sample(prev);
		struct top_sample *t = prev;
		prev = cur;
		cur = t;
	}
	free_sample(prev);
	return 0;
}
