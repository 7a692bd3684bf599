/* SPDX-License-Identifier: MIT */
/*
 * The diagnosis's cost (`make bench-diagnose-perf`, docs/DIAGNOSIS.md "Cost"): on synthetic data
 * of the sizes, timed with CLOCK_MONOTONIC, best of PERF_REPS (3).
 *  1. One 1,000-node, 24-hour job (1 s samples: 86,400 per node, the job's series their sum) that
 *     writes a 10-minute checkpoint every hour (24 phases; the 13th at a third of the speed, on
 *     one node a tenth), against a history of 20 such jobs: dgn_diagnose, and as the baseline in
 *     the same run one pass over the 86.4 million node samples (summing them: reading the data
 *     the diagnosis is given can cost no less).
 *  2. Re-clustering 100,000 stored jobs: one phase each (60 samples), 200 applications of 500
 *     jobs: dgn_recluster, and as the baseline one pass of Algorithm 2 over every phase (the
 *     vectors alone, without DBSCAN).
 * It prints figures and ratios (against the target and the baseline); it never fails on one.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diagnose/diagnose.h"

#define NODES 1000
#define SECS 86400
#define HIST 20
#define JOBS 100000
#define APPS 200
#define PHASE 60

static uint32_t rng = 2463534242u;
static double jitter(double v)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return v * (0.97 + 0.06 * (double)(rng % 1000) / 1000.0);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A job's series: a checkpoint of 600 s at `level` B/s each hour */
static void job_series(double *w, double level, int slow_hour)
{
	memset(w, 0, SECS * sizeof *w);
	for (int h = 0; h < 24; h++)
		for (int s = 0; s < 600; s++)
			w[h * 3600 + 60 + s] = jitter(h == slow_hour ? level / 3 : level);
}

int main(void)
{
	int reps = getenv("PERF_REPS") ? atoi(getenv("PERF_REPS")) : 3;
	if (reps < 1)
		reps = 1;
	printf("bench/diagnose_perf: best of %d\n", reps);

	/* ---- 1. a 1,000-node, 24-hour job ---- */
	double *nodes = malloc((size_t)NODES * SECS * sizeof *nodes), *job = calloc(SECS, sizeof *job);
	double *hist = malloc((size_t)HIST * SECS * sizeof *hist);
	struct dgn_series *ns = malloc(NODES * sizeof *ns);
	char (*names)[16] = malloc(NODES * sizeof *names);
	const char **np = malloc(NODES * sizeof *np);
	if (!nodes || !job || !hist || !ns || !names || !np) {
		fprintf(stderr, "bench/diagnose_perf: out of memory\n");
		return 1;
	}
	for (int n = 0; n < NODES; n++) {
		double *w = nodes + (size_t)n * SECS;
		job_series(w, n == 123 ? 1e6 : 10e6, 12);
		for (int i = 0; i < SECS; i++)
			job[i] += w[i];
		ns[n] = (struct dgn_series){.t0_ms = 0, .dt_ms = 1000, .n = SECS, .write = w};
		snprintf(names[n], sizeof names[n], "node%04d", n);
		np[n] = names[n];
	}
	struct dgn_job hj[HIST];
	static const char *const res[] = {"host x"};
	for (int h = 0; h < HIST; h++) {
		job_series(hist + (size_t)h * SECS, 10e9, -1);
		hj[h] = (struct dgn_job){.key = 100 + h, .app = "sim", .nodes = NODES, .start_ms = 0, .end_ms = SECS * 1000,
					 .series = {.dt_ms = 1000, .n = SECS, .write = hist + (size_t)h * SECS},
					 .resources = res, .nresources = 1};
	}
	struct dgn_job j = {.key = 1, .app = "sim", .nodes = NODES, .start_ms = 0, .end_ms = SECS * 1000,
			    .series = {.dt_ms = 1000, .n = SECS, .write = job}, .node_names = np, .node_series = ns,
			    .nnodes = NODES, .resources = res, .nresources = 1};
	struct dgn_context ctx = {.history = hj, .nhistory = HIST};
	double best = 1e9, base = 1e9, sink = 0;
	struct dgn_result r = {0};
	for (int k = 0; k < reps; k++) {
		double t0 = now_s();
		for (size_t i = 0; i < (size_t)NODES * SECS; i++)
			sink += nodes[i];
		double t1 = now_s();
		dgn_result_free(&r);
		if (dgn_diagnose(&j, &ctx, &r) < 0) {
			fprintf(stderr, "bench/diagnose_perf: diagnose failed\n");
			return 1;
		}
		double t2 = now_s();
		base = t1 - t0 < base ? t1 - t0 : base;
		best = t2 - t1 < best ? t2 - t1 : best;
	}
	size_t abn = 0, deg = 0;
	for (size_t i = 0; i < r.n; i++) {
		abn += r.f[i].kind == DGN_ABNORMAL_PHASE;
		deg += r.f[i].kind == DGN_DEGRADED_NODE && r.f[i].node && !strcmp(r.f[i].node, "node0123");
	}
	printf("1,000 nodes x 24 h (86.4 M samples), %d similar jobs: %.3f s (target <= 2 s: %.2fx of it); "
	       "one pass over the samples %.3f s (%.1fx)\n",
	       HIST, best, best / 2.0, base, best / base);
	printf("  %zu phases, %zu abnormal (the slow hour), degraded node node0123 named: %s (checksum %.0f)\n", r.nphases,
	       abn, deg ? "yes" : "no", sink > 0 ? 1.0 : 0.0);
	dgn_result_free(&r);
	free(nodes);
	free(hist);
	free(ns);
	free(names);
	free(np);
	free(job);

	/* ---- 2. re-clustering 100,000 stored jobs ---- */
	double *bw = malloc((size_t)JOBS * PHASE * sizeof *bw);
	struct dgn_stored_phase *p = malloc(JOBS * sizeof *p);
	unsigned char *ab = malloc(JOBS);
	char (*apps)[16] = malloc(APPS * sizeof *apps);
	if (!bw || !p || !ab || !apps) {
		fprintf(stderr, "bench/diagnose_perf: out of memory\n");
		return 1;
	}
	for (int a = 0; a < APPS; a++)
		snprintf(apps[a], sizeof apps[a], "app%03d", a);
	size_t slow = 0;
	for (size_t i = 0; i < JOBS; i++) {
		int a = (int)(i % APPS), is_slow = i % 97 == 0;
		double level = (1 + a % 10) * 1e8 * (is_slow ? 0.4 : 1), sum = 0;
		slow += is_slow;
		for (int k = 0; k < PHASE; k++)
			sum += bw[i * PHASE + k] = jitter(level);
		p[i] = (struct dgn_stored_phase){apps[a], 64, DGN_WRITE, bw + i * PHASE, PHASE, sum / PHASE};
	}
	best = base = 1e9;
	for (int k = 0; k < reps; k++) {
		double t0 = now_s();
		uint32_t vec[DGN_D];
		for (size_t i = 0; i < JOBS; i++) {
			dgn_vector(p[i].bw, p[i].n, 0, 1e9, DGN_D, vec);
			sink += vec[0];
		}
		double t1 = now_s();
		if (dgn_recluster(p, JOBS, ab) < 0) {
			fprintf(stderr, "bench/diagnose_perf: recluster failed\n");
			return 1;
		}
		double t2 = now_s();
		base = t1 - t0 < base ? t1 - t0 : base;
		best = t2 - t1 < best ? t2 - t1 : best;
	}
	size_t tp = 0, fp = 0;
	for (size_t i = 0; i < JOBS; i++) {
		tp += ab[i] && i % 97 == 0;
		fp += ab[i] && i % 97 != 0;
	}
	printf("re-clustering 100,000 jobs (%d applications of %d): %.3f s (target <= 60 s: %.3fx of it); "
	       "Algorithm 2 alone over them %.3f s (%.0fx)\n",
	       APPS, JOBS / APPS, best, best / 60.0, base, best / base);
	printf("  %zu slow phases planted: %zu flagged, %zu others flagged\n", slow, tp, fp);
	free(bw);
	free(p);
	free(ab);
	free(apps);
	return 0;
}
