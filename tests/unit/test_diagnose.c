/* SPDX-License-Identifier: MIT */
/*
 * The diagnosis (src/diagnose/): phases found by the Haar DWT on series with known steps (with
 * and without noise), Algorithm 2's vectors worked by hand, DBSCAN on a textbook point set (core,
 * border and noise points exact), and whole diagnoses of synthetic jobs: a clean job against its
 * history (no finding), a slow phase with a metadata storm beside it (interference, the
 * neighbour named), a slow node (named), too little history, one sample, a constant bandwidth.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "diagnose/diagnose.h"

#define MB 1000000.0

static uint32_t rng = 2463534242u;
static double noise(double v, double share) /* v * (1 +- share), deterministic */
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return v * (1 + share * ((double)(rng % 2001) / 1000.0 - 1));
}

/* a write series of n seconds: level[i] MB/s at second i */
static struct dgn_series series(double *w, size_t n, int64_t t0)
{
	return (struct dgn_series){.t0_ms = t0, .dt_ms = 1000, .n = n, .write = w};
}

static void steps(void)
{
	double w[70] = {0};
	for (int i = 10; i < 30; i++)
		w[i] = 100 * MB;
	for (int i = 40; i < 70; i++)
		w[i] = 50 * MB;
	struct dgn_series s = series(w, 70, 1000000);
	struct dgn_phase *p;
	size_t n;
	int r = dgn_phases(&s, &p, &n);
	check("two steps: two phases", r == 0 && n == 2, "r %d n %zu", r, n);
	if (n == 2) {
		check("phase 1: seconds 10-30, 2 GB, 100 MB/s, a write phase",
		      p[0].first == 10 && p[0].n == 20 && p[0].bytes == 2000 * MB && p[0].mean_bw == 100 * MB &&
			      p[0].type == DGN_WRITE && p[0].start_ms == 1010000 && p[0].end_ms == 1030000,
		      "%zu+%zu %g %g type %u", p[0].first, p[0].n, p[0].bytes, p[0].mean_bw, p[0].type);
		check("phase 2: seconds 40-70, 50 MB/s", p[1].first == 40 && p[1].n == 30 && p[1].mean_bw == 50 * MB,
		      "%zu+%zu %g", p[1].first, p[1].n, p[1].mean_bw);
	}
	free(p);

	/* the same with 5 % noise on every active second: the same boundaries */
	for (int i = 0; i < 70; i++)
		w[i] = w[i] ? noise(w[i], 0.05) : 0;
	r = dgn_phases(&s, &p, &n);
	check("with 5 % noise: the same two phases", r == 0 && n == 2 && p[0].first == 10 && p[0].n == 20 &&
	      p[1].first == 40 && p[1].n == 30, "n %zu: %zu+%zu", n, n ? p[0].first : 0, n ? p[0].n : 0);
	free(p);

	/* a level step inside activity: 20 s at 100 MB/s then 20 s at 30 MB/s */
	double v[48] = {0};
	for (int i = 3; i < 23; i++)
		v[i] = 100 * MB;
	for (int i = 23; i < 43; i++)
		v[i] = 30 * MB;
	s = series(v, 48, 0);
	r = dgn_phases(&s, &p, &n);
	check("a step from 100 to 30 MB/s: two phases, cut at the step", r == 0 && n == 2 && p[0].first == 3 &&
	      p[0].n == 20 && p[1].first == 23 && p[1].n == 20, "n %zu", n);
	free(p);

	/* a phase's first and last seconds partly idle (a job starting and ending within them):
	 * the same phase, not phases of their own */
	double e[10] = {0, 0, 1.4 * MB, 3.8 * MB, 3.8 * MB, 3.8 * MB, 3.8 * MB, 0.5 * MB, 0, 0};
	s = series(e, 10, 0);
	r = dgn_phases(&s, &p, &n);
	check("partial first and last seconds: one phase of 6 s", r == 0 && n == 1 && p[0].first == 2 && p[0].n == 6,
	      "n %zu: %zu+%zu", n, n ? p[0].first : 0, n ? p[0].n : 0);
	free(p);

	/* a job that computes before its I/O (bench/diagnose's ckpt-272: fio's start delay, its
	 * status reads of a few bytes and metadata calls meanwhile, then 12 MiB written): the
	 * denoised series spreads the rise over the idle seconds before it, which made a slow
	 * phase of 4 s of them (0.2 MB/s) an abnormal one; a phase starts and ends on seconds
	 * that did I/O */
	double kr[8] = {0, 24, 32, 32, 48, 48, 48, 1}, km[8] = {1, 6, 0, 1, 0, 0, 0, 3};
	double kw[8] = {0, 0, 0, 819200, 3833856, 3801088, 3801088, 327680};
	s = (struct dgn_series){.dt_ms = 1000, .n = 8, .read = kr, .write = kw, .meta = km};
	r = dgn_phases(&s, &p, &n);
	check("compute before the I/O: one phase, seconds 3-8, none in the idle seconds", r == 0 && n == 1 &&
	      p[0].first == 3 && p[0].n == 5, "r %d n %zu: %zu+%zu", r, n, n ? p[0].first : 0, n ? p[0].n : 0);
	free(p);
	/* the same at every offset in the transform's blocks (1 to 8 idle seconds before it) */
	for (int lead = 1; lead <= 8; lead++) {
		double lw[24] = {0}, lr[24] = {0};
		for (int i = 0; i < 5; i++)
			lw[lead + i] = kw[3 + i], lr[lead + i] = kr[3 + i];
		for (int i = 0; i < lead; i++)
			lr[i] = 32;
		s = (struct dgn_series){.dt_ms = 1000, .n = 24, .read = lr, .write = lw};
		r = dgn_phases(&s, &p, &n);
		check("compute of 1-8 s before the I/O: one phase of its 5 s", r == 0 && n == 1 && p[0].first == (size_t)lead &&
		      p[0].n == 5, "lead %d: r %d n %zu: %zu+%zu", lead, r, n, n ? p[0].first : 0, n ? p[0].n : 0);
		free(p);
	}

	/* constant bandwidth: one phase, the whole series */
	double c[16];
	for (int i = 0; i < 16; i++)
		c[i] = 7 * MB;
	s = series(c, 16, 0);
	r = dgn_phases(&s, &p, &n);
	check("constant: one phase of 16 s at 7 MB/s", r == 0 && n == 1 && p[0].n == 16 && p[0].mean_bw == 7 * MB,
	      "n %zu", n);
	free(p);

	/* metadata alone: a metadata phase */
	double m[8] = {0, 0, 500, 500, 500, 0, 0, 0};
	s = (struct dgn_series){.dt_ms = 1000, .n = 8, .meta = m};
	r = dgn_phases(&s, &p, &n);
	check("a metadata storm: one metadata phase, 500 ops/s", r == 0 && n == 1 && p[0].first == 2 && p[0].n == 3 &&
	      p[0].type == DGN_META && p[0].meta_rate == 500, "n %zu type %u", n, n ? p[0].type : 0);
	free(p);

	/* a level step at nearly every sample (a daemon's jittered ticks once put two rows in one
	 * sample and none in the next: 116, 57, 0, 115, 0, 114 MB): one stretch a sample, twice
	 * the stretches an alternation gives, written past the cuts' end; the one-sample stretches
	 * join their neighbours, one phase */
	double jr[9] = {16, 48, 96, 48, 0, 96, 0, 96, 17}, jm[9] = {18, 0, 0, 0, 0, 0, 0, 0, 6};
	double jw[9] = {42991616, 101711872, 116391936, 57671680, 0, 115343360, 0, 114294784, 11534337};
	s = (struct dgn_series){.dt_ms = 1000, .n = 9, .read = jr, .write = jw, .meta = jm};
	r = dgn_phases(&s, &p, &n);
	check("a step at every sample: one phase over the 9 samples", r == 0 && n == 1 && p[0].first == 0 && p[0].n == 9,
	      "r %d n %zu: %zu+%zu", r, n, n ? p[0].first : 0, n ? p[0].n : 0);
	free(p);

	/* nothing at all, and bad input */
	double z[10] = {0};
	s = series(z, 10, 0);
	r = dgn_phases(&s, &p, &n);
	check("no I/O: no phase", r == 0 && n == 0, "n %zu", n);
	s.n = 0;
	check("no samples: -EINVAL", dgn_phases(&s, &p, &n) == -EINVAL, "accepted");
	s.n = 10, s.dt_ms = 0;
	check("no sample length: -EINVAL", dgn_phases(&s, &p, &n) == -EINVAL, "accepted");
}

static void vectors(void)
{
	const double bw[] = {0, 5, 10, 15, 20, 25, 30, 35, 40, 100};
	uint32_t v[10];
	dgn_vector(bw, 10, 0, 100, 10, v);
	const uint32_t want[10] = {2, 2, 2, 2, 1, 0, 0, 0, 0, 1};
	check("Algorithm 2 by hand: bins of 10 over [0, 100], 100 in the last", !memcmp(v, want, sizeof want),
	      "%u %u %u %u %u %u %u %u %u %u", v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]);
	const double b2[] = {3, 3, 3};
	dgn_vector(b2, 3, 3, 3, 10, v);
	check("THmin = THmax: every sample in bin 0", v[0] == 3 && v[9] == 0, "%u", v[0]);
	const double b3[] = {-1, 50, 200};
	dgn_vector(b3, 3, 0, 100, 4, v);
	check("outside [THmin, THmax]: the end bins (D = 4, I = 25)", v[0] == 1 && v[2] == 1 && v[3] == 1 && v[1] == 0,
	      "%u %u %u %u", v[0], v[1], v[2], v[3]);
}

static void dbscan(void)
{
	/* two clusters of four, a border point of the first, a noise point */
	const double pts[] = {1, 1, 1, 2, 2, 1, 2, 2, 8, 8, 8, 9, 9, 8, 9, 9, 3, 2, 5, 5};
	enum dgn_point kind[10];
	int cl[10];
	int r = dgn_dbscan(pts, 10, 2, 1.5, 4, kind, cl);
	int ok = r == 0;
	for (int i = 0; i < 8; i++)
		ok &= kind[i] == DGN_CORE && cl[i] == i / 4;
	check("textbook set: 8 core points in clusters 0 and 1", ok, "r %d", r);
	check("(3, 2): a border point of cluster 0", kind[8] == DGN_BORDER && cl[8] == 0, "kind %d cluster %d", kind[8],
	      cl[8]);
	check("(5, 5): noise", kind[9] == DGN_NOISE && cl[9] == -1, "kind %d cluster %d", kind[9], cl[9]);
	/* the knee of the 3-distance curve: the clusters' points lie within 1.414 of 3 others, the
	 * border point 2.236, the noise point 4.243 */
	double eps = dgn_eps_knee(pts, 10, 2, 4);
	check("k-distance knee: the clusters' 3-distance", fabs(eps - sqrt(2)) < 1e-12, "%.6f", eps);
	check("min_pts: 4 for small groups, more for large", dgn_min_pts(10) == 4 && dgn_min_pts(300) == 9 &&
	      dgn_min_pts(100000) == 16, "%u %u %u", dgn_min_pts(10), dgn_min_pts(300), dgn_min_pts(100000));
}

/* ---- whole diagnoses ---- */

#define HN 12
static double hist_w[HN][40], job_w[40], node_w[4][40], nb_m[40];

static struct dgn_job job_of(int64_t key, double *w, int64_t t0)
{
	static const char *const res[] = {"mount /scratch"};
	return (struct dgn_job){.key = key, .app = "ckpt", .nodes = 1, .ranks = 4, .start_ms = t0,
				.end_ms = t0 + 40000, .series = series(w, 40, t0), .resources = res, .nresources = 1};
}

static unsigned slow_before(void *ctx, const char *node, unsigned *jobs)
{
	(void)ctx;
	*jobs = 3;
	return !strcmp(node, "n3") ? 2 : !strcmp(node, "n1") ? 1 : 0;
}

static void diagnoses(void)
{
	/* history: 12 runs, one write phase of 20 s at 100 MB/s +- 3 % */
	struct dgn_job hist[HN];
	for (int h = 0; h < HN; h++) {
		for (int i = 10; i < 30; i++)
			hist_w[h][i] = noise(100 * MB, 0.03);
		hist[h] = job_of(100 + h, hist_w[h], (int64_t)h * 100000);
	}
	struct dgn_context ctx = {.history = hist, .nhistory = HN};
	struct dgn_result res;

	/* a clean run: no finding */
	for (int i = 10; i < 30; i++)
		job_w[i] = noise(100 * MB, 0.03);
	struct dgn_job j = job_of(1, job_w, 5000000);
	int r = dgn_diagnose(&j, &ctx, &res);
	check("a clean run with history: one phase, no finding", r == 0 && res.nphases == 1 && res.n == 0, "n %zu",
	      res.n);
	dgn_result_free(&res);

	/* the same run at 40 MB/s, a metadata storm beside it on the same mount */
	for (int i = 10; i < 30; i++)
		job_w[i] = noise(40 * MB, 0.03);
	for (int i = 5; i < 35; i++)
		nb_m[i] = 5000;
	struct dgn_job nb = {.key = 77, .start_ms = 5000000, .end_ms = 5040000,
			     .series = (struct dgn_series){.t0_ms = 5000000, .dt_ms = 1000, .n = 40, .meta = nb_m},
			     .resources = j.resources, .nresources = 1};
	ctx.neighbours = &nb;
	ctx.nneighbours = 1;
	r = dgn_diagnose(&j, &ctx, &res);
	check("a slow phase: abnormal, then its cause", r == 0 && res.n == 2 && res.f[0].kind == DGN_ABNORMAL_PHASE &&
	      res.f[1].kind == DGN_INTERFERENCE, "n %zu kinds %d %d", res.n, res.n ? (int)res.f[0].kind : -1,
	      res.n > 1 ? (int)res.f[1].kind : -1);
	if (res.n == 2) {
		check("abnormal: its time range, 12 similar phases, ~60 % slower",
		      res.f[0].start_ms == 5010000 && res.f[0].end_ms == 5030000 && res.f[0].history == HN &&
			      res.f[0].slower > 0.55 && res.f[0].slower < 0.65,
		      "%lld-%lld history %u slower %.3f", (long long)res.f[0].start_ms, (long long)res.f[0].end_ms,
		      res.f[0].history, res.f[0].slower);
		check("interference: a metadata storm, job 77, on mount /scratch",
		      res.f[1].types == DGN_IF_HIGH_META && res.f[1].njobs == 1 && res.f[1].jobs[0] == 77 &&
			      res.f[1].resource && !strcmp(res.f[1].resource, "mount /scratch"),
		      "types %u njobs %zu", res.f[1].types, res.f[1].njobs);
	}
	dgn_result_free(&res);

	/* a storm of a slow server: 200 ops/s beside a phase of 5 ops/s: high metadata (relative);
	 * 15 ops/s beside it (3x): no storm, and alone on the mount not many jobs: unexplained */
	double job_m[40] = {0};
	j.series.meta = job_m;
	for (int i = 10; i < 30; i++)
		job_m[i] = 5;
	for (int i = 5; i < 35; i++)
		nb_m[i] = 200;
	r = dgn_diagnose(&j, &ctx, &res);
	check("200 ops/s beside 5: a metadata storm (relative)", r == 0 && res.n == 2 &&
	      res.f[1].kind == DGN_INTERFERENCE && res.f[1].types == DGN_IF_HIGH_META, "n %zu", res.n);
	dgn_result_free(&res);
	for (int i = 5; i < 35; i++)
		nb_m[i] = 15;
	r = dgn_diagnose(&j, &ctx, &res);
	check("15 ops/s beside 5: no storm, unexplained", r == 0 && res.n == 2 && res.f[1].kind == DGN_UNEXPLAINED,
	      "n %zu kind %d", res.n, res.n > 1 ? (int)res.f[1].kind : -1);
	dgn_result_free(&res);
	j.series.meta = NULL;
	for (int i = 5; i < 35; i++)
		nb_m[i] = 5000;

	/* the neighbour on another mount: no interference; one node of four slow: that node */
	static const char *const other[] = {"mount /home"};
	nb.resources = other;
	static const char *const names[] = {"n1", "n2", "n3", "n4"};
	struct dgn_series ns[4];
	for (int k = 0; k < 4; k++) {
		for (int i = 10; i < 30; i++)
			node_w[k][i] = k == 2 ? 4 * MB : 12 * MB;
		ns[k] = series(node_w[k], 40, 5000000);
	}
	j.nnodes = 4;
	j.node_names = names;
	j.node_series = ns;
	ctx.node_slow_before = slow_before;
	r = dgn_diagnose(&j, &ctx, &res);
	check("a slow node: abnormal phase, degraded node n3 (slow in 2 jobs before)",
	      r == 0 && res.n == 2 && res.f[1].kind == DGN_DEGRADED_NODE && res.f[1].node &&
		      !strcmp(res.f[1].node, "n3") && res.f[1].history == 2 && res.f[1].value == 4 * MB &&
		      res.f[1].expected == 12 * MB,
	      "n %zu kind %d", res.n, res.n > 1 ? (int)res.f[1].kind : -1);
	dgn_result_free(&res);
	/* the other nodes wrote their share at 12 MB/s in 8 s and waited; n3 took the phase's 20 s
	 * at 4 MB/s: compared over each node's own seconds of I/O, n3 is the slow one (over the
	 * phase's 20 s the others' 4.8 MB/s would hide it) */
	for (int k = 0; k < 4; k++)
		for (int i = 10; i < 30; i++)
			node_w[k][i] = k == 2 ? 4 * MB : i < 18 ? 12 * MB : 0;
	r = dgn_diagnose(&j, &ctx, &res);
	check("the others done early: still n3, 4 against 12 MB/s", r == 0 && res.n == 2 &&
	      res.f[1].kind == DGN_DEGRADED_NODE && res.f[1].node && !strcmp(res.f[1].node, "n3") &&
	      res.f[1].value == 4 * MB && res.f[1].expected == 12 * MB,
	      "n %zu kind %d value %.0f expected %.0f", res.n, res.n > 1 ? (int)res.f[1].kind : -1,
	      res.n > 1 ? res.f[1].value : 0, res.n > 1 ? res.f[1].expected : 0);
	dgn_result_free(&res);
	/* only n3 did I/O in the phase: nobody to compare it with, no degraded node from there */
	for (int k = 0; k < 4; k++)
		for (int i = 10; i < 30; i++)
			node_w[k][i] = k == 2 ? 4 * MB : 0;
	r = dgn_diagnose(&j, &ctx, &res);
	check("the other nodes idle: no degraded node among them, unexplained", r == 0 && res.n == 2 &&
	      res.f[1].kind == DGN_UNEXPLAINED, "n %zu kind %d", res.n, res.n > 1 ? (int)res.f[1].kind : -1);
	dgn_result_free(&res);
	j.nnodes = 0;
	r = dgn_diagnose(&j, &ctx, &res);
	check("no cause found: unexplained", r == 0 && res.n == 2 && res.f[1].kind == DGN_UNEXPLAINED, "n %zu", res.n);
	dgn_result_free(&res);

	/* alone on its node, the node slow for 2 of its latest jobs before: the node named (from
	 * its record: the phase's figures); slow for 1 (n1 in slow_before): unexplained */
	j.host = "n3";
	r = dgn_diagnose(&j, &ctx, &res);
	check("alone on n3, slow in 2 jobs before: degraded node n3 by its record",
	      r == 0 && res.n == 2 && res.f[1].kind == DGN_DEGRADED_NODE && res.f[1].by_record &&
		      res.f[1].node == j.host && res.f[1].history == 2 && res.f[1].value == res.f[0].value &&
		      res.f[1].expected == res.f[0].expected,
	      "n %zu kind %d", res.n, res.n > 1 ? (int)res.f[1].kind : -1);
	dgn_result_free(&res);
	j.host = "n1";
	r = dgn_diagnose(&j, &ctx, &res);
	check("alone on n1, slow in 1 job before: unexplained", r == 0 && res.n == 2 &&
	      res.f[1].kind == DGN_UNEXPLAINED, "n %zu kind %d", res.n, res.n > 1 ? (int)res.f[1].kind : -1);
	dgn_result_free(&res);
	j.host = "n3";
	for (int i = 10; i < 30; i++)
		job_w[i] = noise(100 * MB, 0.03);
	r = dgn_diagnose(&j, &ctx, &res);
	check("a normal run on the degraded node: no finding", r == 0 && res.n == 0, "n %zu", res.n);
	dgn_result_free(&res);
	for (int i = 10; i < 30; i++)
		job_w[i] = noise(40 * MB, 0.03);
	/* the same slow run in phases of 3 s (idle seconds between): too short to judge, said */
	double short_w[40] = {0};
	for (int i = 10; i < 30; i++)
		short_w[i] = (i - 10) % 4 == 3 ? 0 : 40 * MB;
	struct dgn_job js = job_of(4, short_w, 5000000);
	r = dgn_diagnose(&js, &ctx, &res);
	check("phases of 3 s: not enough data (3 of 4 seconds), no judgement",
	      r == 0 && res.nphases == 5 && res.n == 1 && res.f[0].kind == DGN_NOT_ENOUGH_DATA &&
		      res.f[0].lack == DGN_LACK_PHASE && res.f[0].value == 3 && res.f[0].expected == DGN_MIN_PHASE,
	      "phases %zu n %zu kind %d value %.0f", res.nphases, res.n, res.n ? (int)res.f[0].kind : -1,
	      res.n ? res.f[0].value : -1);
	dgn_result_free(&res);
	j.host = NULL;

	/* the device degraded for the 4 latest runs before: 4 slow phases make a cluster of their
	 * own (min_pts 4), which is not what the application does: the slow run is abnormal, against
	 * the largest cluster's 100 MB/s */
	{
		static double slow_h[4][40];
		struct dgn_job h2[HN + 4];
		memcpy(h2, hist, sizeof hist);
		for (int h = 0; h < 4; h++) {
			for (int i = 10; i < 30; i++)
				slow_h[h][i] = noise(40 * MB, 0.03);
			h2[HN + h] = job_of(300 + h, slow_h[h], 3000000 + (int64_t)h * 100000);
		}
		struct dgn_context c2 = {.history = h2, .nhistory = HN + 4};
		r = dgn_diagnose(&j, &c2, &res);
		check("slow after 4 slow runs (a cluster of their own): abnormal against the largest cluster",
		      r == 0 && res.n == 2 && res.f[0].kind == DGN_ABNORMAL_PHASE && res.f[0].expected > 95 * MB &&
			      res.f[0].history == HN + 4,
		      "n %zu expected %.0f", res.n, res.n ? res.f[0].expected : 0);
		dgn_result_free(&res);
	}

	/* two runs of history: not enough to judge, said once with the figures */
	ctx.nhistory = 2;
	r = dgn_diagnose(&j, &ctx, &res);
	check("2 similar phases: not enough data (2 of 4)", r == 0 && res.n == 1 && res.f[0].kind == DGN_NOT_ENOUGH_DATA &&
	      res.f[0].value == 2 && res.f[0].expected == 4 && res.f[0].lack == DGN_LACK_HISTORY, "n %zu", res.n);
	dgn_result_free(&res);
	ctx.nhistory = 0;
	r = dgn_diagnose(&j, &ctx, &res);
	check("no history: not enough data", r == 0 && res.n == 1 && res.f[0].kind == DGN_NOT_ENOUGH_DATA &&
	      res.f[0].value == 0, "n %zu", res.n);
	dgn_result_free(&res);

	/* one sample */
	double one[1] = {5 * MB};
	struct dgn_job j1 = job_of(2, one, 0);
	j1.series.n = 1;
	ctx.nhistory = HN;
	r = dgn_diagnose(&j1, &ctx, &res);
	check("one sample: not enough data (1 of 4 samples), no phase", r == 0 && res.n == 1 &&
	      res.f[0].kind == DGN_NOT_ENOUGH_DATA && res.f[0].value == 1 && res.nphases == 0, "n %zu", res.n);
	dgn_result_free(&res);

	/* a history of identical constant runs, and the same run: no finding */
	static double flat[HN + 1][40];
	struct dgn_job fh[HN];
	for (int h = 0; h <= HN; h++)
		for (int i = 10; i < 30; i++)
			flat[h][i] = 50 * MB;
	for (int h = 0; h < HN; h++)
		fh[h] = job_of(200 + h, flat[h], 0);
	struct dgn_context fc = {.history = fh, .nhistory = HN};
	struct dgn_job jf = job_of(3, flat[HN], 0);
	r = dgn_diagnose(&jf, &fc, &res);
	check("constant bandwidth, as always: no finding", r == 0 && res.n == 0 && res.nphases == 1, "n %zu", res.n);
	dgn_result_free(&res);
	check("kind names", !strcmp(dgn_kind_name(DGN_DEGRADED_NODE), "degraded_node") &&
	      !strcmp(dgn_kind_name(DGN_NOT_ENOUGH_DATA), "not_enough_data"), "names");
}

static void recluster(void)
{
	/* app a: 10 phases near 100 MB/s and one at 40; app b: 3 phases (too few to judge); app a
	 * with 8 ranks: a group of its own, 1 phase */
	static double bw[15][20];
	struct dgn_stored_phase p[15];
	for (int i = 0; i < 15; i++) {
		double level = i == 10 ? 40 * MB : 100 * MB, sum = 0;
		for (int k = 0; k < 20; k++)
			sum += bw[i][k] = noise(level, 0.03);
		p[i] = (struct dgn_stored_phase){i < 11 || i == 14 ? "a" : "b", i == 14 ? 8 : 4, DGN_WRITE, bw[i], 20, sum / 20};
	}
	p[11].bw = p[12].bw = p[13].bw = bw[10]; /* b's slow-looking phases: never judged */
	p[11].mean_bw = p[12].mean_bw = p[13].mean_bw = p[10].mean_bw;
	unsigned char abn[15];
	int r = dgn_recluster(p, 15, abn);
	int others = 0;
	for (int i = 0; i < 15; i++)
		others += i != 10 && abn[i];
	check("re-clustering: the slow phase of app a, nothing else (b too small, a/8 ranks alone)",
	      r == 0 && abn[10] == 1 && others == 0, "r %d abn[10] %u others %d", r, abn[10], others);
}

int main(void)
{
	steps();
	vectors();
	dbscan();
	diagnoses();
	recluster();
	return failures ? 1 : 0;
}
