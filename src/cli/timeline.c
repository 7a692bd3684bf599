/* SPDX-License-Identifier: MIT */
/*
 * `iostrata timeline [--perfetto FILE[.gz]] [--csv FILE|-] [--otf2 DIR] [--summary] DIR`: builds
 * the unified timeline of a job directory (user traces and kernel events merged per thread,
 * src/analysis/timeline.c) and writes the exports asked for (src/analysis/export.c), or, with
 * none, a short summary. It only parses arguments, reports and sets the exit status: 0, 1 when a
 * log was damaged (what could be read is still exported) or an output could not be written, 2 for
 * bad usage or a directory without readable logs. docs/TIMELINE.md describes the outputs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/job.h"
#include "analysis/timeline.h"
#include "cli/cli.h"
#include "cli/opts.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: iostrata timeline [--perfetto FILE[.gz]] [--csv FILE|-] [--otf2 DIR] [--summary] DIR\n"
		   "  DIR                a job directory (iostrata run --trace [--kernel] -o DIR)\n"
		   "  --perfetto FILE    Perfetto / Chrome trace JSON (ui.perfetto.dev); gzip when FILE ends in .gz\n"
		   "  --csv FILE|-       one row per event\n"
		   "  --otf2 DIR         OTF2 archive\n"
		   "  --summary          print the summary also when exporting (default without an export)\n");
}

static int is_user_layer(unsigned layer)
{
	return layer == LOG_LAYER_POSIX || layer == LOG_LAYER_STDIO || layer == LOG_LAYER_MPIIO;
}

static int cmp_thread(const void *a, const void *b)
{
	const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Events, nested events and tracks per layer; threads (and those only the kernel saw); reads. */
static int print_summary(FILE *f, const char *dir, const struct timeline *tl)
{
	uint64_t events[LOG_LAYER_MAX + 2] = { 0 }, nested[LOG_LAYER_MAX + 2] = { 0 };
	uint64_t tracks[LOG_LAYER_MAX + 2] = { 0 }, kinds[3] = { 0 }, hits = 0, misses = 0;
	for (size_t k = 0; k < tl->nev; k++) {
		const struct tl_event *e = &tl->ev[k];
		unsigned l = e->layer <= LOG_LAYER_MAX ? e->layer : LOG_LAYER_MAX + 1;
		events[l]++;
		nested[l] += e->parent != TL_NONE;
		if (e->flags & TL_F_HIT)
			hits += e->count;
		if (e->flags & TL_F_MISS)
			misses += e->count;
	}
	/* threads: (pid, tid) of thread tracks, 1 in the low bit when one of its tracks is a user layer */
	int64_t *thr = malloc((tl->ntracks ? tl->ntracks : 1) * sizeof *thr);
	if (!thr)
		return -ENOMEM;
	size_t nthr = 0;
	for (size_t t = 0; t < tl->ntracks; t++) {
		const struct tl_track *tr = &tl->tracks[t];
		tracks[tr->layer <= LOG_LAYER_MAX ? tr->layer : LOG_LAYER_MAX + 1]++;
		kinds[tr->kind < 3 ? tr->kind : 2]++;
		if (tr->kind == TL_TRACK_THREAD)
			thr[nthr++] = ((int64_t)tr->pid << 33) | ((int64_t)(uint32_t)tr->tid << 1) |
				      is_user_layer(tr->layer);
	}
	qsort(thr, nthr, sizeof *thr, cmp_thread);
	size_t threads = 0, kernel_only = 0;
	for (size_t i = 0; i < nthr;) {
		size_t j = i;
		int user = 0;
		while (j < nthr && (thr[j] >> 1) == (thr[i] >> 1))
			user |= (int)(thr[j++] & 1);
		threads++;
		kernel_only += !user;
		i = j;
	}
	free(thr);

	fprintf(f, "timeline of %s\n", dir);
	fprintf(f, "  processes  %zu\n", tl->nprocs);
	fprintf(f, "  threads    %zu (%zu seen only by the kernel)\n", threads, kernel_only);
	fprintf(f, "  events     %zu: %" PRIu64 " user (%" PRIu64 " calls), %" PRIu64 " kernel; %" PRIu64 " dropped\n",
		tl->nev, tl->user_events, tl->user_calls, tl->kernel_events, tl->dropped);
	if (tl->nev)
		fprintf(f, "  span       %" PRIu64 " .. %" PRIu64 " ns (%.9f s)\n", tl->t0_ns, tl->t1_ns,
			(double)(tl->t1_ns - tl->t0_ns) / 1e9);
	fprintf(f, "  tracks     %zu: %" PRIu64 " thread, %" PRIu64 " device, %" PRIu64 " async\n", tl->ntracks, kinds[0],
		kinds[1], kinds[2]);
	fprintf(f, "  %-10s %10s %10s %7s\n", "layer", "events", "nested", "tracks");
	for (unsigned l = 0; l <= LOG_LAYER_MAX + 1; l++) {
		if (!events[l])
			continue;
		const char *name = l <= LOG_LAYER_MAX ? log_layer_name(l) : "other";
		if (is_user_layer(l))
			fprintf(f, "  %-10s %10" PRIu64 " %10s %7" PRIu64 "\n", name, events[l], "-", tracks[l]);
		else
			fprintf(f, "  %-10s %10" PRIu64 " %10" PRIu64 " %7" PRIu64 "\n", name, events[l], nested[l], tracks[l]);
	}
	fprintf(f, "  user reads %" PRIu64 " page-cache hits, %" PRIu64 " misses (calls)\n", hits, misses);
	if (tl->warning)
		fprintf(f, "  warnings   %u: %s\n", tl->nwarnings, tl->warning);
	return 0;
}

int cmd_timeline(int argc, char **argv)
{
	const char *dir = NULL, *perfetto = NULL, *csv = NULL, *otf2 = NULL;
	int summary = 0, status = 0;
	char err[1024] = "";
	struct cli_opts o;
	enum cli_arg k;

	cli_opts_init(&o, "timeline", argc, argv);
	while ((k = cli_opts_next(&o)) != CLI_ARG_END) {
		if (k == CLI_ARG_OPERAND) {
			if (dir) {
				char q1[256], q2[256];
				return cli_bad(&o, "one job directory only (%s and %s)", cli_quote(q1, sizeof q1, dir),
					       cli_quote(q2, sizeof q2, o.arg));
			}
			dir = o.arg;
		} else if (cli_str(&o, "--perfetto", &perfetto) || cli_str(&o, "--csv", &csv) ||
			   cli_str(&o, "--otf2", &otf2)) {
		} else if (cli_flag(&o, "--summary")) {
			summary = 1;
		} else {
			return cli_help_or_unknown(&o, usage);
		}
	}
	if (o.status)
		return o.status;
	if (!dir) {
		usage(stderr);
		return 2;
	}
	if (perfetto && csv && !strcmp(perfetto, "-") && !strcmp(csv, "-")) {
		fprintf(stderr, "iostrata timeline: --perfetto and --csv cannot both write to stdout\n");
		return 2;
	}

	struct ana_job job;
	int rc = ana_job_load(&job, &dir, 1, ANA_JOB_TIMELINE | ANA_JOB_NO_PROFILE, err, sizeof err);
	if (rc < 0) {
		fprintf(stderr, "iostrata timeline: %s\n", err);
		return rc == -ENOMEM ? 1 : 2;
	}
	if (!job.traced) {
		/* nothing to order in time: no export, and say what to record */
		fprintf(stderr, "iostrata timeline: %s: the job was recorded without --trace (and without "
				"--kernel-events): no calls in order to put on a timeline; record it with `iostrata "
				"run --trace [--kernel] -o DIR -- CMD`, or see its totals with `iostrata report %s`\n",
			dir, dir);
		ana_job_free(&job);
		return 2;
	}
	const struct timeline tl = job.tl;
	if (job.nunreadable + job.ndamaged || tl.warning) {
		size_t bad = job.nunreadable + job.ndamaged;
		fflush(stdout);
		fprintf(stderr, "iostrata timeline: %s%s; what could be read is exported\n",
			bad ? job.first_problem : tl.warning, bad > 1 || tl.nwarnings > 1 ? " (and more damage after it)" : "");
		status = 1;
	}
	if (perfetto && tl_export_perfetto(&tl, perfetto, err, sizeof err) < 0) {
		fprintf(stderr, "iostrata timeline: %s\n", err);
		status = 1;
	}
	if (otf2 && tl_export_otf2(&tl, otf2, err, sizeof err) < 0) {
		fprintf(stderr, "iostrata timeline: %s\n", err);
		status = 1;
	}
	if (csv) {
		int to_stdout = !strcmp(csv, "-");
		FILE *f = to_stdout ? stdout : fopen(csv, "w");
		if (!f) {
			fprintf(stderr, "iostrata timeline: %s: cannot create: %s\n", csv, strerror(errno));
			status = 1;
		} else {
			int r = tl_export_csv(&tl, f);
			if (!to_stdout && fclose(f) != 0 && !r)
				r = -errno;
			if (r < 0) {
				fprintf(stderr, "iostrata timeline: %s: cannot write: %s\n", to_stdout ? "stdout" : csv,
					strerror(-r));
				status = 1;
			}
		}
	}
	if (summary || (!perfetto && !csv && !otf2)) {
		/* the summary keeps out of a CSV or JSON going to stdout */
		int busy = (csv && !strcmp(csv, "-")) || (perfetto && !strcmp(perfetto, "-"));
		FILE *f = busy ? stderr : stdout;
		if (print_summary(f, dir, &tl) < 0) {
			fprintf(stderr, "iostrata timeline: out of memory\n");
			status = 1;
		}
	}
	ana_job_free(&job);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "iostrata timeline: cannot write to stdout: %s\n", strerror(errno));
		status = 1;
	}
	return status;
}
