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

/* Bytes per second of s over its samples in [from, to) that moved bytes (the seconds it was
 * doing I/O there): a node that finished its share early is as fast as it was, not slower for
 * the seconds it then waited. 0 (and *active 0) when none did. */
static double active_rate_over(const struct dgn_series *s, int64_t from, int64_t to, size_t *active)
{
	double b = 0;
	*active = 0;
	for (size_t i = 0; s->dt_ms > 0 && i < s->n; i++) {
		int64_t t = s->t0_ms + (int64_t)i * s->dt_ms;
		double x = (s->read ? s->read[i] : 0) + (s->write ? s->write[i] : 0);
		if (t + s->dt_ms <= from || t >= to || x <= 0)
			continue;
		b += x;
		(*active)++;
	}
	return *active ? b * 1000.0 / ((double)*active * (double)s->dt_ms) : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of v[0..n) (sorted in place); 0 for none. */
static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
}

/* dgn_judge, with the group's expected bandwidth taken over its first `usual` phases: a job's
 * diagnosis judges its own phase (the last) against its history's median, not one it moves. */
static int judge(const struct dgn_group_phase *v, size_t n, size_t usual, unsigned char *abnormal, double *expected);

int dgn_judge(const struct dgn_group_phase *v, size_t n, unsigned char *abnormal, double *expected)
{
	return judge(v, n, n, abnormal, expected);
}

static int judge(const struct dgn_group_phase *v, size_t n, size_t usual, unsigned char *abnormal, double *expected)
{
	double thmin = 0, thmax = 0;
	int first = 1, r = -ENOMEM;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < v[i].n; k++) {
			if (first || v[i].bw[k] < thmin)
				thmin = v[i].bw[k];
			if (first || v[i].bw[k] > thmax)
				thmax = v[i].bw[k];
			first = 0;
		}
	double *pts = calloc(n * DGN_D + 1, sizeof *pts), *means = malloc((n + 1) * sizeof *means);
	enum dgn_point *kind = malloc((n + 1) * sizeof *kind);
	int *cl = malloc((n + 1) * sizeof *cl);
	uint32_t vec[DGN_D];
	if (!pts || !means || !kind || !cl)
		goto out;
	for (size_t i = 0; i < n; i++) {
		dgn_vector(v[i].bw, v[i].n, thmin, thmax, DGN_D, vec);
		/* compared as shares of the phase's samples: phases of one application differ in
		 * length by a sample or two, which must not make them different */
		for (unsigned k = 0; k < DGN_D; k++)
			pts[i * DGN_D + k] = v[i].n ? (double)vec[k] / (double)v[i].n : 0;
	}
	unsigned min_pts = dgn_min_pts(n);
	double eps = dgn_eps_knee(pts, n, DGN_D, min_pts);
	if ((r = dgn_dbscan(pts, n, DGN_D, eps, min_pts, kind, cl)) < 0)
		goto out;
	/* what the group does: the median mean bandwidth of its phases (fewer than half of them
	 * slow cannot move it; DBSCAN's clusters can split or leave the clean ones as noise when
	 * their edges vary, slow runs that recur are alike) */
	size_t m = 0;
	for (size_t i = 0; i < usual; i++)
		means[m++] = v[i].mean_bw;
	*expected = median(means, m);
	double below = (1 - DGN_SLOWER) * *expected;
	/* a cluster whose median is that much slower is slow runs that recur (a device degraded
	 * for several jobs makes one as soon as there are min_pts of them), not a behaviour */
	unsigned char *slow_cl = calloc(n + 1, 1);
	if (!slow_cl) {
		r = -ENOMEM;
		goto out;
	}
	for (int c = 0; c < (int)n; c++) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (cl[i] == c)
				means[k++] = v[i].mean_bw;
		if (!k)
			break; /* clusters are numbered from 0 in the order found */
		slow_cl[c] = median(means, k) < below;
	}
	/* abnormal: noise or in a slow cluster, and slower (a phase faster than usual is nobody's
	 * problem) */
	for (size_t i = 0; i < n; i++)
		abnormal[i] = (cl[i] < 0 || slow_cl[cl[i]]) && v[i].mean_bw < below;
	free(slow_cl);
	r = 0;
out:
	free(pts);
	free(means);
	free(kind);
	free(cl);
	return r;
}

/* The bandwidth samples (bytes/s) of phase p of s: malloc'd, NULL when out of memory. */
static double *phase_bw(const struct dgn_series *s, const struct dgn_phase *p)
{
	double *bw = malloc((p->n ? p->n : 1) * sizeof *bw);
	for (size_t k = 0; bw && k < p->n; k++) {
		size_t at = p->first + k;
		bw[k] = ((s->read ? s->read[at] : 0) + (s->write ? s->write[at] : 0)) * 1000.0 / (double)s->dt_ms;
	}
	return bw;
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
		/* a storm is relative to the server that carries it: one that takes milliseconds a
		 * request sustains far fewer than 1,000 a second, and a neighbour making several
		 * times the phase's own metadata requests there is most of its metadata load */
		int storm = meta >= DGN_HIGH_META ||
			    (meta >= DGN_META_ACTIVE && meta >= DGN_HIGH_META_FACTOR * p->meta_rate);
		unsigned t = (nb->n_to_1 ? DGN_IF_N_TO_1 : 0) | (bw >= DGN_HIGH_BW_SHARE * expected ? DGN_IF_HIGH_BW : 0) |
			     (storm ? DGN_IF_HIGH_META : 0);
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
	int slow_bw_known = 0; /* a degraded node's figures are its own against the others' */
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
			/* each node's bandwidth over its own seconds of I/O in the phase: the job's
			 * nodes that did I/O then are compared, an idle one is not slow */
			double *bw = malloc(j->nnodes * sizeof *bw);
			if (!bw)
				return -ENOMEM;
			size_t lo = j->nnodes, busy = 0, act;
			for (size_t i = 0; i < j->nnodes; i++) {
				bw[i] = active_rate_over(&j->node_series[i], p->start_ms, p->end_ms, &act);
				if (!act)
					continue;
				busy++;
				if (lo == j->nnodes || bw[i] < bw[lo])
					lo = i;
			}
			double sum = 0;
			for (size_t i = 0; busy >= 2 && i < j->nnodes; i++)
				if (i != lo && bw[i] > 0)
					sum += bw[i];
			others = busy >= 2 ? sum / (double)(busy - 1) : 0;
			if (busy >= 2 && bw[lo] < (1 - DGN_NODE_SLOWER) * others) {
				slow = j->node_names[lo];
				slow_bw = bw[lo];
			}
			free(bw);
		}
		unsigned jobs = 0, before = 0;
		if (slow) {
			if (!(f = add(r, cap, DGN_DEGRADED_NODE)))
				return -ENOMEM;
			f->node = slow;
			f->history = ctx->node_slow_before ? ctx->node_slow_before(ctx->ctx, slow, &jobs) : 0;
			f->value = slow_bw;
			f->expected = others;
			f->slower = others > 0 ? 1 - slow_bw / others : 0;
			slow_bw_known = 1;
		} else if (j->host && ctx->node_slow_before &&
			   (before = ctx->node_slow_before(ctx->ctx, j->host, &jobs)) >= DGN_NODE_RECORD_SLOW) {
			/* no other node to compare with (or none slower), but the node was slow for
			 * earlier jobs too, with no neighbour to blame: it, or its device, is degraded */
			if (!(f = add(r, cap, DGN_DEGRADED_NODE)))
				return -ENOMEM;
			f->node = j->host;
			f->history = before;
			f->by_record = 1;
		} else if (!(f = add(r, cap, DGN_UNEXPLAINED))) {
			return -ENOMEM;
		}
	}
	f->phase = index;
	f->start_ms = p->start_ms;
	f->end_ms = p->end_ms;
	if (f->kind != DGN_DEGRADED_NODE || !slow_bw_known) {
		f->value = p->mean_bw;
		f->expected = expected;
		f->slower = expected > 0 ? 1 - p->mean_bw / expected : 0;
	}
	return 0;
}

/* The history's phases, found once per diagnosis, with their bandwidth samples. */
struct hist {
	struct dgn_group_phase *v;
	unsigned *type;
	size_t n, cap;
};

static void hist_free(struct hist *h)
{
	for (size_t i = 0; i < h->n; i++)
		free((double *)h->v[i].bw);
	free(h->v);
	free(h->type);
}

static int hist_add(struct hist *h, const struct dgn_series *s, const struct dgn_phase *p)
{
	if (h->n == h->cap) {
		size_t c = h->cap ? h->cap * 2 : 64;
		struct dgn_group_phase *v = realloc(h->v, (c + 1) * sizeof *v);
		if (v)
			h->v = v;
		unsigned *t = realloc(h->type, (c + 1) * sizeof *t);
		if (t)
			h->type = t;
		if (!v || !t)
			return -ENOMEM;
		h->cap = c;
	}
	double *bw = phase_bw(s, p);
	if (!bw)
		return -ENOMEM;
	h->v[h->n] = (struct dgn_group_phase){bw, p->n, p->mean_bw};
	h->type[h->n++] = p->type;
	return 0;
}

static int hist_load(const struct dgn_job *j, const struct dgn_context *ctx, struct hist *h)
{
	for (size_t i = 0; i < ctx->nhistory; i++) {
		const struct dgn_job *hj = &ctx->history[i];
		struct dgn_phase *ph = NULL;
		size_t nph = 0;
		if (hj->key == j->key || dgn_phases(&hj->series, &ph, &nph) < 0)
			continue;
		for (size_t k = 0; k < nph; k++)
			if (ph[k].n >= DGN_MIN_PHASE && hist_add(h, &hj->series, &ph[k]) < 0) {
				free(ph);
				return -ENOMEM;
			}
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
		f->lack = DGN_LACK_SAMPLES;
		f->start_ms = j->start_ms;
		f->end_ms = j->end_ms;
		return 0;
	}
	int r = dgn_phases(&j->series, &out->phases, &out->nphases);
	if (r < 0)
		goto fail;
	struct hist h = {0};
	if ((r = hist_load(j, ctx, &h)) < 0)
		goto fail;
	struct dgn_group_phase *v = malloc((h.n + 1) * sizeof *v);
	unsigned char *abn = malloc(h.n + 1);
	if (!v || !abn) {
		r = -ENOMEM;
		goto fail_h;
	}
	int said_short = 0;
	size_t judged = 0, longest = 0;
	for (size_t i = 0; i < out->nphases; i++) {
		const struct dgn_phase *p = &out->phases[i];
		/* a phase of a few seconds has no vector to speak of (D bins, 2 or 3 samples): its
		 * level is whatever the last second did, noise of the machine more than of the job */
		longest = p->n > longest ? p->n : longest;
		if (p->n < DGN_MIN_PHASE)
			continue;
		judged++;
		/* the similar phases: the history's of the same type, and this one last */
		size_t n = 0;
		for (size_t k = 0; k < h.n; k++)
			if (h.type[k] == p->type)
				v[n++] = h.v[k];
		double *bw = phase_bw(&j->series, p);
		if (!bw) {
			r = -ENOMEM;
			goto fail_h;
		}
		v[n++] = (struct dgn_group_phase){bw, p->n, p->mean_bw};
		/* too little history: said once, with how much there is and how much is needed */
		if (n - 1 < dgn_min_pts(n)) {
			free(bw);
			if (said_short)
				continue;
			said_short = 1;
			if (!(f = add(out, &cap, DGN_NOT_ENOUGH_DATA))) {
				r = -ENOMEM;
				goto fail_h;
			}
			f->phase = (unsigned)i;
			f->value = (double)(n - 1);
			f->expected = dgn_min_pts(n);
			f->start_ms = p->start_ms;
			f->end_ms = p->end_ms;
			f->history = (unsigned)(n - 1);
			f->lack = DGN_LACK_HISTORY;
			continue;
		}
		double expected = 0;
		r = judge(v, n, n - 1, abn, &expected);
		free(bw);
		if (r < 0)
			goto fail_h;
		if (!abn[n - 1])
			continue;
		if (!(f = add(out, &cap, DGN_ABNORMAL_PHASE))) {
			r = -ENOMEM;
			goto fail_h;
		}
		f->phase = (unsigned)i;
		f->start_ms = p->start_ms;
		f->end_ms = p->end_ms;
		f->value = p->mean_bw;
		f->expected = expected;
		f->slower = expected > 0 ? 1 - p->mean_bw / expected : 0;
		f->history = (unsigned)(n - 1);
		if ((r = find_cause(j, ctx, (unsigned)i, p, expected, out, &cap)) < 0)
			goto fail_h;
	}
	if (out->nphases && !judged) {
		/* phases, all too short to judge: said, with the longest and what is needed */
		if (!(f = add(out, &cap, DGN_NOT_ENOUGH_DATA))) {
			r = -ENOMEM;
			goto fail_h;
		}
		f->value = (double)longest;
		f->expected = DGN_MIN_PHASE;
		f->start_ms = j->start_ms;
		f->end_ms = j->end_ms;
		f->lack = DGN_LACK_PHASE;
	}
	free(v);
	free(abn);
	hist_free(&h);
	return 0;
fail_h:
	free(v);
	free(abn);
	hist_free(&h);
fail:
	dgn_result_free(out);
	return r;
}

/* Groups: phases with equal (app, ranks, type), found by sorting an index. */
static const struct dgn_stored_phase *sort_base;
static int cmp_group(const void *a, const void *b)
{
	const struct dgn_stored_phase *x = &sort_base[*(const size_t *)a], *y = &sort_base[*(const size_t *)b];
	int c = strcmp(x->app, y->app);
	if (c)
		return c;
	if (x->ranks != y->ranks)
		return x->ranks < y->ranks ? -1 : 1;
	return (x->type > y->type) - (x->type < y->type);
}

int dgn_recluster(const struct dgn_stored_phase *p, size_t n, unsigned char *abnormal)
{
	size_t *idx = malloc((n ? n : 1) * sizeof *idx);
	struct dgn_group_phase *v = malloc((n ? n : 1) * sizeof *v);
	unsigned char *abn = malloc(n ? n : 1);
	int r = -ENOMEM;
	if (!idx || !v || !abn)
		goto out;
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	sort_base = p;
	qsort(idx, n, sizeof *idx, cmp_group);
	memset(abnormal, 0, n);
	r = 0;
	for (size_t a = 0; a < n && r == 0;) {
		size_t b = a + 1;
		while (b < n && !cmp_group(&idx[a], &idx[b]))
			b++;
		/* a group smaller than min_pts + 1 cannot be judged: none of it is abnormal */
		if (b - a > dgn_min_pts(b - a)) {
			for (size_t k = a; k < b; k++)
				v[k - a] = (struct dgn_group_phase){p[idx[k]].bw, p[idx[k]].n, p[idx[k]].mean_bw};
			double expected;
			if ((r = dgn_judge(v, b - a, abn, &expected)) == 0)
				for (size_t k = a; k < b; k++)
					abnormal[idx[k]] = abn[k - a];
		}
		a = b;
	}
out:
	free(idx);
	free(v);
	free(abn);
	return r;
}
