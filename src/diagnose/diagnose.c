/* SPDX-License-Identifier: MIT */
/*
 * A job's diagnosis (diagnose.h): its phases against the similar phases of its application's
 * history (Algorithm 2 vectors, DBSCAN), and for each abnormal one a cause: neighbours of an
 * interfering type or many at once on a resource it shares, or one of its nodes slower than the
 * others. The caller chose the history (same application and scale) and the neighbours (jobs
 * that ran at the same time); this file decides, with the thresholds of diagnose.h.
 */
#include "diagnose/diagnose.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *dgn_kind_name(enum dgn_kind k)
{
	switch (k) {
	case DGN_NOT_ENOUGH_DATA:
		return "not_enough_data";
	case DGN_ABNORMAL_PHASE:
		return "abnormal_phase";
	case DGN_INTERFERENCE:
		return "interference";
	case DGN_DEGRADED_NODE:
		return "degraded_node";
	case DGN_UNEXPLAINED:
		return "unexplained";
	}
	return "?";
}

void dgn_result_free(struct dgn_result *r)
{
	free(r->phases);
	free(r->f);
	memset(r, 0, sizeof *r);
}

static struct dgn_finding *add(struct dgn_result *r, size_t *cap, enum dgn_kind kind)
{
	if (r->n == *cap) {
		size_t c = *cap ? *cap * 2 : 4;
		struct dgn_finding *v = realloc(r->f, c * sizeof *v);
		if (!v)
			return NULL;
		r->f = v;
		*cap = c;
	}
	struct dgn_finding *f = &r->f[r->n++];
	memset(f, 0, sizeof *f);
	f->kind = kind;
	return f;
}

/* Bytes per second of s over [from, to) ms (its samples there), and its metadata rate. */
static void rate_over(const struct dgn_series *s, int64_t from, int64_t to, double *bw, double *meta)
{
	double b = 0, m = 0;
	*bw = *meta = 0;
	if (s->dt_ms <= 0 || to <= from)
		return;
	for (size_t i = 0; i < s->n; i++) {
		int64_t t = s->t0_ms + (int64_t)i * s->dt_ms;
		if (t + s->dt_ms <= from || t >= to)
			continue;
		b += (s->read ? s->read[i] : 0) + (s->write ? s->write[i] : 0);
		m += s->meta ? s->meta[i] : 0;
	}
	double secs = (double)(to - from) / 1000.0;
	*bw = b / secs;
	*meta = m / secs;
}

/* A similar phase: its job's series and the phase. */
struct sim {
	const struct dgn_series *s;
	struct dgn_phase p;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Is phase me (the last of v) abnormal among v[0..n)? *expected: the group's typical mean
 * bandwidth. 1 abnormal, 0 not, <0 -ENOMEM. */
static int judge(const struct sim *v, size_t n, double *expected)
{
	double thmin = 0, thmax = 0;
	int first = 1, r = -ENOMEM;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < v[i].p.n; k++) {
			const struct dgn_series *s = v[i].s;
			size_t at = v[i].p.first + k;
			double bw = ((s->read ? s->read[at] : 0) + (s->write ? s->write[at] : 0)) * 1000.0 / (double)s->dt_ms;
			if (first || bw < thmin)
				thmin = bw;
			if (first || bw > thmax)
				thmax = bw;
			first = 0;
		}
	double *pts = calloc(n * DGN_D, sizeof *pts), *bw = NULL, *means = malloc(n * sizeof *means);
	enum dgn_point *kind = malloc(n * sizeof *kind);
	int *cl = malloc(n * sizeof *cl);
	uint32_t vec[DGN_D];
	if (!pts || !means || !kind || !cl)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct dgn_series *s = v[i].s;
		free(bw);
		if (!(bw = malloc((v[i].p.n ? v[i].p.n : 1) * sizeof *bw)))
			goto out;
		for (size_t k = 0; k < v[i].p.n; k++) {
			size_t at = v[i].p.first + k;
			bw[k] = ((s->read ? s->read[at] : 0) + (s->write ? s->write[at] : 0)) * 1000.0 / (double)s->dt_ms;
		}
		dgn_vector(bw, v[i].p.n, thmin, thmax, DGN_D, vec);
		/* compared as shares of the phase's samples: phases of one application differ in
		 * length by a sample or two, which must not make them different */
		for (unsigned k = 0; k < DGN_D; k++)
			pts[i * DGN_D + k] = v[i].p.n ? (double)vec[k] / (double)v[i].p.n : 0;
	}
	unsigned min_pts = dgn_min_pts(n);
	double eps = dgn_eps_knee(pts, n, DGN_D, min_pts);
	if ((r = dgn_dbscan(pts, n, DGN_D, eps, min_pts, kind, cl)) < 0)
		goto out;
	/* what the group does: the median mean bandwidth of its clustered phases (all of them when
	 * DBSCAN found no cluster) */
	size_t m = 0;
	for (size_t i = 0; i + 1 < n; i++)
		if (kind[i] != DGN_NOISE)
			means[m++] = v[i].p.mean_bw;
	if (!m)
		for (size_t i = 0; i + 1 < n; i++)
			means[m++] = v[i].p.mean_bw;
	qsort(means, m, sizeof *means, cmp_double);
	*expected = m % 2 ? means[m / 2] : (means[m / 2 - 1] + means[m / 2]) / 2;
	/* abnormal: DBSCAN's noise, and slower (a phase faster than usual is nobody's problem) */
	r = kind[n - 1] == DGN_NOISE && v[n - 1].p.mean_bw < (1 - DGN_SLOWER) * *expected;
out:
	free(pts);
	free(bw);
	free(means);
	free(kind);
	free(cl);
	return r;
}

static int shares(const struct dgn_job *a, const struct dgn_job *b, const char **which)
{
	for (size_t i = 0; i < a->nresources; i++)
		for (size_t k = 0; k < b->nresources; k++)
			if (!strcmp(a->resources[i], b->resources[k])) {
				*which = a->resources[i];
				return 1;
			}
	return 0;
}

/* The cause of abnormal phase p of j: 0 with a finding added, or -ENOMEM. */
static int find_cause(const struct dgn_job *j, const struct dgn_context *ctx, unsigned index,
		      const struct dgn_phase *p, double expected, struct dgn_result *r, size_t *cap)
{
	/* neighbours on a shared resource during the phase */
	unsigned types = 0;
	size_t sharing = 0;
	int64_t typed[DGN_EVIDENCE_JOBS], all[DGN_EVIDENCE_JOBS];
	size_t ntyped = 0;
	const char *res = NULL, *typed_res = NULL;
	for (size_t i = 0; i < ctx->nneighbours; i++) {
		const struct dgn_job *nb = &ctx->neighbours[i];
		const char *which;
		if (nb->key == j->key || nb->end_ms <= p->start_ms || nb->start_ms >= p->end_ms || !shares(j, nb, &which))
			continue;
		double bw = nb->bandwidth, meta = nb->meta_rate;
		if (nb->series.n)
			rate_over(&nb->series, p->start_ms, p->end_ms, &bw, &meta);
		unsigned t = (nb->n_to_1 ? DGN_IF_N_TO_1 : 0) | (bw >= DGN_HIGH_BW_SHARE * expected ? DGN_IF_HIGH_BW : 0) |
			     (meta >= DGN_HIGH_META ? DGN_IF_HIGH_META : 0);
		if (sharing < DGN_EVIDENCE_JOBS)
			all[sharing] = nb->key;
		sharing++;
		res = res ? res : which;
		if (t) {
			types |= t;
			typed_res = typed_res ? typed_res : which;
			if (ntyped < DGN_EVIDENCE_JOBS)
				typed[ntyped++] = nb->key;
		}
	}
	struct dgn_finding *f;
	if (types || sharing + 1 >= DGN_MANY_JOBS) {
		if (!(f = add(r, cap, DGN_INTERFERENCE)))
			return -ENOMEM;
		f->types = types ? types : DGN_IF_MANY;
		f->resource = types ? typed_res : res;
		f->njobs = types ? ntyped : (sharing < DGN_EVIDENCE_JOBS ? sharing : DGN_EVIDENCE_JOBS);
		memcpy(f->jobs, types ? typed : all, f->njobs * sizeof *f->jobs);
		f->history = (unsigned)sharing;
	} else {
		/* one node slower than the job's others over the phase */
		const char *slow = NULL;
		double slow_bw = 0, others = 0;
		if (j->nnodes >= 2) {
			double *bw = malloc(j->nnodes * sizeof *bw), meta;
			if (!bw)
				return -ENOMEM;
			for (size_t i = 0; i < j->nnodes; i++)
				rate_over(&j->node_series[i], p->start_ms, p->end_ms, &bw[i], &meta);
			size_t lo = 0;
			for (size_t i = 1; i < j->nnodes; i++)
				if (bw[i] < bw[lo])
					lo = i;
			double sum = 0;
			for (size_t i = 0; i < j->nnodes; i++)
				if (i != lo)
					sum += bw[i];
			others = sum / (double)(j->nnodes - 1);
			if (bw[lo] < (1 - DGN_NODE_SLOWER) * others) {
				slow = j->node_names[lo];
				slow_bw = bw[lo];
			}
			free(bw);
		}
		if (slow) {
			if (!(f = add(r, cap, DGN_DEGRADED_NODE)))
				return -ENOMEM;
			unsigned jobs = 0;
			f->node = slow;
			f->history = ctx->node_slow_before ? ctx->node_slow_before(ctx->ctx, slow, &jobs) : 0;
			f->value = slow_bw;
			f->expected = others;
			f->slower = others > 0 ? 1 - slow_bw / others : 0;
		} else if (!(f = add(r, cap, DGN_UNEXPLAINED))) {
			return -ENOMEM;
		}
	}
	f->phase = index;
	f->start_ms = p->start_ms;
	f->end_ms = p->end_ms;
	if (f->kind != DGN_DEGRADED_NODE) {
		f->value = p->mean_bw;
		f->expected = expected;
		f->slower = expected > 0 ? 1 - p->mean_bw / expected : 0;
	}
	return 0;
}

/* The history's phases of type flags `type`, and p last: into *v (n). */
static int similar(const struct dgn_job *j, const struct dgn_context *ctx, const struct dgn_phase *p,
		   struct sim **v, size_t *n)
{
	size_t cap = 16;
	*n = 0;
	if (!(*v = malloc(cap * sizeof **v)))
		return -ENOMEM;
	for (size_t h = 0; h <= ctx->nhistory; h++) {
		const struct dgn_job *hj = h < ctx->nhistory ? &ctx->history[h] : NULL;
		struct dgn_phase *ph = NULL;
		size_t nph = 0;
		if (hj && (hj->key == j->key || dgn_phases(&hj->series, &ph, &nph) < 0))
			continue;
		if (!hj) { /* the phase itself, last */
			ph = (struct dgn_phase *)p;
			nph = 1;
		}
		for (size_t i = 0; i < nph; i++) {
			if (ph[i].type != p->type)
				continue;
			if (*n == cap) {
				struct sim *nv = realloc(*v, (cap *= 2) * sizeof *nv);
				if (!nv) {
					if (hj)
						free(ph);
					return -ENOMEM;
				}
				*v = nv;
			}
			(*v)[(*n)++] = (struct sim){hj ? &hj->series : &j->series, ph[i]};
		}
		if (hj)
			free(ph);
	}
	return 0;
}

int dgn_diagnose(const struct dgn_job *j, const struct dgn_context *ctx, struct dgn_result *out)
{
	size_t cap = 0;
	memset(out, 0, sizeof *out);
	struct dgn_finding *f;
	if (j->series.n < 4 || j->series.dt_ms <= 0) {
		/* a bandwidth over fewer than 4 samples has no phases to speak of */
		if (!(f = add(out, &cap, DGN_NOT_ENOUGH_DATA)))
			return -ENOMEM;
		f->value = (double)j->series.n;
		f->expected = 4;
		f->start_ms = j->start_ms;
		f->end_ms = j->end_ms;
		return 0;
	}
	int r = dgn_phases(&j->series, &out->phases, &out->nphases);
	if (r < 0)
		goto fail;
	int said_short = 0;
	for (size_t i = 0; i < out->nphases; i++) {
		const struct dgn_phase *p = &out->phases[i];
		struct sim *v = NULL;
		size_t n = 0;
		if ((r = similar(j, ctx, p, &v, &n)) < 0) {
			free(v);
			goto fail;
		}
		/* too little history: said once, with how much there is and how much is needed */
		if (n - 1 < dgn_min_pts(n)) {
			free(v);
			if (said_short)
				continue;
			said_short = 1;
			if (!(f = add(out, &cap, DGN_NOT_ENOUGH_DATA))) {
				r = -ENOMEM;
				goto fail;
			}
			f->phase = (unsigned)i;
			f->value = (double)(n - 1);
			f->expected = dgn_min_pts(n);
			f->start_ms = p->start_ms;
			f->end_ms = p->end_ms;
			f->history = (unsigned)(n - 1);
			continue;
		}
		double expected = 0;
		r = judge(v, n, &expected);
		free(v);
		if (r < 0)
			goto fail;
		if (!r)
			continue;
		if (!(f = add(out, &cap, DGN_ABNORMAL_PHASE))) {
			r = -ENOMEM;
			goto fail;
		}
		f->phase = (unsigned)i;
		f->start_ms = p->start_ms;
		f->end_ms = p->end_ms;
		f->value = p->mean_bw;
		f->expected = expected;
		f->slower = expected > 0 ? 1 - p->mean_bw / expected : 0;
		f->history = (unsigned)(n - 1);
		if ((r = find_cause(j, ctx, (unsigned)i, p, expected, out, &cap)) < 0)
			goto fail;
	}
	return 0;
fail:
	dgn_result_free(out);
	return r;
}
