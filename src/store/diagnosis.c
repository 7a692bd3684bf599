/* SPDX-License-Identifier: MIT */
/*
 * A stored job's diagnosis (diagnosis.h): what src/diagnose/ needs, read from a store.
 *  - The bandwidth: the user layers' (POSIX and stdio) bytes read and written and metadata
 *    operations per second of the job's interval statistics (the report's layer totals, spread
 *    over time).
 *  - "Similar" (seed 001): the same application (its executable and its arguments with every run
 *    of digits made one '#', from the stored report; a scheduler's job name when it has one) and
 *    the same scale (processes); the latest STORE_DIAG_HISTORY such ended jobs are the history.
 *  - Neighbours: jobs of any user on the same node whose time overlaps the job's; their resource
 *    is the node ("host H": its devices and local file systems), N-1 from their report.
 *  - Nodes: the job's rows on other hosts (a central store keeps one per node).
 */
#include "store/diagnosis.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/json.h"
#include "iostrata/format.h"
#include "sys/slurm.h"

struct store_diag_job {
	struct store_job j;
	char *strs[6];
	char *app;
	double *rd, *wr, *md;
	size_t n;
	int64_t t0, dt;
	char resource[300];
	const char *res[1];
	struct dgn_job dj;
};

static void djob_free(struct store_diag_job *x)
{
	for (size_t i = 0; i < 6; i++)
		free(x->strs[i]);
	free(x->app);
	free(x->rd);
	free(x->wr);
	free(x->md);
	memset(x, 0, sizeof *x);
}

void store_diagnosis_free(struct store_diagnosis *d)
{
	dgn_result_free(&d->res);
	for (size_t i = 0; i < d->njobs; i++)
		djob_free(&d->jobs[i]);
	free(d->jobs);
	memset(d, 0, sizeof *d);
}

/* ---- every job row, kept (strings copied) ---- */

struct all_jobs {
	struct store_diag_job *v;
	size_t n, cap;
	int nomem;
};

static int keep_row(const struct store_job *j, void *arg)
{
	struct all_jobs *a = arg;
	if (a->n == a->cap) {
		size_t c = a->cap ? a->cap * 2 : 256;
		struct store_diag_job *v = realloc(a->v, c * sizeof *v);
		if (!v) {
			a->nomem = 1;
			return 1;
		}
		a->v = v;
		a->cap = c;
	}
	struct store_diag_job *x = &a->v[a->n];
	memset(x, 0, sizeof *x);
	x->j = *j;
	const char **f[] = {&x->j.job, &x->j.host, &x->j.user, &x->j.exe, &x->j.jobdir, &x->j.sched_name};
	for (size_t i = 0; i < 6; i++)
		if (!(*f[i] = x->strs[i] = strdup(*f[i] ? *f[i] : ""))) {
			djob_free(x);
			a->nomem = 1;
			return 1;
		}
	x->j.sched = x->j.sched_state = x->j.sched_nodes = NULL;
	a->n++;
	return 0;
}

/* ---- a job's series ---- */

struct pts {
	struct store_series_point *v;
	size_t n, cap;
};

static int keep_point(const struct store_series_point *pt, void *arg)
{
	struct pts *p = arg;
	if (pt->layer != LOG_LAYER_POSIX && pt->layer != LOG_LAYER_STDIO)
		return 0;
	if (p->n == p->cap) {
		size_t c = p->cap ? p->cap * 2 : 64;
		struct store_series_point *v = realloc(p->v, c * sizeof *v);
		if (!v)
			return 1;
		p->v = v;
		p->cap = c;
	}
	p->v[p->n] = *pt;
	p->v[p->n++].host = NULL;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* The step of a job's stored times: the most frequent gap between two successive times to the
 * nearest 10 ms (the daemon's stats_interval: 10 s by default, its ticks a millisecond or two
 * early or late, a process's end between two ticks aside), 1 s at least. t is sorted in place. */
static int64_t series_step(int64_t *t, size_t n)
{
	qsort(t, n, sizeof *t, cmp_i64);
	size_t m = 0;
	for (size_t i = 1; i < n; i++)
		if (t[i] > t[i - 1])
			t[m++] = (t[i] - t[i - 1] + 5) / 10 * 10;
	if (!m)
		return 1000;
	qsort(t, m, sizeof *t, cmp_i64);
	int64_t best = t[0];
	size_t run = 0, most = 0;
	for (size_t i = 0; i < m; i++) {
		run = i && t[i] == t[i - 1] ? run + 1 : 1;
		if (run > most) {
			most = run;
			best = t[i];
		}
	}
	return best < 1000 ? 1000 : best;
}

/* The job's series into x, one sample per step of its stored rows (series_step): 0 or -errno.
 * A time's sample counts from the first time of the sample before it, in whole steps to the
 * nearest (a tick a millisecond early is not the sample before; a process's end 300 ms after a
 * tick is that tick's), so neither the ticks' jitter nor their drift over a long job puts two
 * ticks in one sample and none in the next. A late reading (the daemon's interval ran long: its
 * row covers two steps or more, schema 14's dt_ms) is spread evenly over the samples it covers,
 * never before the first: read as one sample, a steady job had a sample of nothing before one of
 * twice its rate, and its phase was cut in two. */
static int load_series(struct store *s, struct store_diag_job *x)
{
	struct pts p = {0};
	int64_t *t = NULL;
	size_t *slot = NULL;
	int r = store_job_series(s, x->j.key, STORE_SERIES_LAYER, 0, keep_point, &p);
	if (r < 0 || !p.n)
		goto out;
	if (!(t = malloc(p.n * sizeof *t)) || !(slot = malloc(p.n * sizeof *slot))) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p.n; i++)
		t[i] = p.v[i].t_ms;
	x->dt = series_step(t, p.n);
	/* the points come in time order (store_job_series: by bucket, then layer) */
	int64_t anchor = p.v[0].t_ms;
	size_t k = 0;
	for (size_t i = 0; i < p.n; i++) {
		int64_t d = p.v[i].t_ms - anchor;
		size_t ahead = d > 0 ? (size_t)((d + x->dt / 2) / x->dt) : 0;
		if (ahead) {
			k += ahead;
			anchor = p.v[i].t_ms;
		}
		slot[i] = k;
	}
	x->n = k + 1;
	x->t0 = p.v[0].t_ms;
	x->rd = calloc(x->n, sizeof *x->rd);
	x->wr = calloc(x->n, sizeof *x->wr);
	x->md = calloc(x->n, sizeof *x->md);
	if (!x->rd || !x->wr || !x->md) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p.n; i++) {
		int64_t dt = p.v[i].dt_ms;
		/* whole steps to the nearest, without adding to dt (a garbage length from a batch
		 * may be the largest int64) */
		size_t span = dt > x->dt ? (size_t)(dt / x->dt + (dt % x->dt >= (x->dt + 1) / 2)) : 1;
		if (span > slot[i] + 1)
			span = slot[i] + 1;
		for (size_t c = slot[i] + 1 - span; c <= slot[i]; c++) {
			x->rd[c] += (double)p.v[i].bytes_read / (double)span;
			x->wr[c] += (double)p.v[i].bytes_written / (double)span;
			x->md[c] += (double)p.v[i].meta_ops / (double)span;
		}
	}
out:
	free(slot);
	free(t);
	free(p.v);
	return r;
}

/* ---- the application, from the stored report ---- */

/* exe and argv of the report JSON, every run of digits one '#': malloc'd (NULL: out of memory) */
static char *app_of(struct store *s, const struct store_diag_job *x, int *n_to_1)
{
	if (x->j.sched_name && *x->j.sched_name)
		return strdup(x->j.sched_name);
	char *rep = NULL;
	*n_to_1 = 0;
	if (store_job_report_head(s, x->j.key, STORE_DIAG_REPORT_HEAD, &rep) < 0 || !rep)
		return strdup(x->j.exe);
	/* one cut for a text and for a packed report (whose head ends with a frame) */
	if (strlen(rep) > STORE_DIAG_REPORT_HEAD)
		rep[STORE_DIAG_REPORT_HEAD] = 0;
	*n_to_1 = strstr(rep, "\"io_mode\":\"N-1\"") != NULL;
	const char *a = strstr(rep, "\"argv\":[");
	size_t len = strlen(x->j.exe);
	char *out = malloc(len + (a ? strlen(a) : 0) + 2);
	if (out) {
		memcpy(out, x->j.exe, len);
		char *o = out + len;
		if (a) {
			/* the array's text up to its closing bracket outside a string */
			int in = 0, esc = 0;
			*o++ = ' ';
			for (const char *c = a + 8; *c; c++) {
				if (!in && *c == ']')
					break;
				if (in && !esc && *c == '"')
					in = 0;
				else if (!in && *c == '"')
					in = 1;
				else if (!in && isspace((unsigned char)*c))
					continue; /* the report's indentation */
				esc = in && !esc && *c == '\\';
				if (isdigit((unsigned char)*c)) {
					if (o[-1] != '#')
						*o++ = '#';
					continue;
				}
				*o++ = *c;
			}
		}
		*o = 0;
	}
	free(rep);
	return out;
}

static int64_t end_of(const struct store_job *j)
{
	if (!j->running && j->end_ms)
		return j->end_ms;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void fill_dgn(struct store_diag_job *x)
{
	snprintf(x->resource, sizeof x->resource, "host %s", x->j.host);
	x->res[0] = x->resource;
	x->dj = (struct dgn_job){
		.key = x->j.key, .app = x->app, .nodes = 1, .ranks = x->j.nprocs, .start_ms = x->j.start_ms,
		.end_ms = end_of(&x->j),
		.series = {.t0_ms = x->t0, .dt_ms = x->dt ? x->dt : 1000, .n = x->n, .read = x->rd, .write = x->wr, .meta = x->md},
		.resources = x->res, .nresources = 1, .host = x->j.host,
	};
	double secs = x->dj.end_ms > x->dj.start_ms ? (double)(x->dj.end_ms - x->dj.start_ms) / 1000.0 : 1;
	x->dj.bandwidth = (double)(x->j.bytes[STORE_CAT_READ] + x->j.bytes[STORE_CAT_WRITE]) / secs;
	x->dj.meta_rate = (double)x->j.calls[STORE_CAT_META] / secs;
}

/* ---- a node's record, from the stored diagnoses ---- */

/* The value of the string member key of the JSON object text [o, end), raw (escapes kept), or
 * NULL: *len its length. Members whose values are arrays or objects are skipped whole. */
static const char *member_str(const char *o, const char *end, const char *key, size_t *len)
{
	size_t klen = strlen(key);
	int depth = 0;
	for (const char *c = o; c < end; c++) {
		if (*c == '{' || *c == '[') {
			depth++;
			continue;
		}
		if (*c == '}' || *c == ']') {
			depth--;
			continue;
		}
		if (*c != '"')
			continue;
		/* a string: a key when a ':' follows it at the object's own level */
		const char *s = ++c;
		while (c < end && *c != '"')
			c += *c == '\\' ? 2 : 1;
		if (c >= end)
			return NULL;
		size_t n = (size_t)(c - s);
		const char *a = c + 1;
		while (a < end && isspace((unsigned char)*a))
			a++;
		if (depth != 1 || a >= end || *a != ':' || n != klen || memcmp(s, key, n))
			continue;
		for (a++; a < end && isspace((unsigned char)*a); a++)
			;
		if (a >= end || *a != '"')
			return NULL;
		const char *v = ++a;
		while (a < end && *a != '"')
			a += *a == '\\' ? 2 : 1;
		if (a >= end)
			return NULL;
		*len = (size_t)(a - v);
		return v;
	}
	return NULL;
}

/* Whether a stored diagnosis (its JSON) found the node slow: a degraded_node finding naming it
 * (quoted: the node's JSON string literal), or an unexplained abnormal phase (the row is the
 * node's own). */
int store_diag_found_slow(const char *json, const char *quoted)
{
	const char *c = json ? strstr(json, "\"findings\"") : NULL;
	size_t qlen = strlen(quoted);
	if (!c || !(c = strchr(c, '[')))
		return 0;
	/* each finding is an object of the array; strings may hold brackets */
	for (c++; *c && *c != ']';) {
		if (*c != '{') {
			c++;
			continue;
		}
		const char *o = c;
		int depth = 0, in = 0;
		for (; *c; c++) {
			if (in) {
				if (*c == '\\' && c[1])
					c++;
				else if (*c == '"')
					in = 0;
			} else if (*c == '"') {
				in = 1;
			} else if (*c == '{' || *c == '[') {
				depth++;
			} else if ((*c == '}' || *c == ']') && --depth == 0) {
				break;
			}
		}
		if (!*c)
			return 0;
		const char *end = ++c, *v, *node;
		size_t n, nn;
		if (!(v = member_str(o, end, "kind", &n)))
			continue;
		if (n == 11 && !memcmp(v, "unexplained", 11))
			return 1;
		if (n == 13 && !memcmp(v, "degraded_node", 13) && (node = member_str(o, end, "node", &nn)) &&
		    nn + 2 == qlen && !memcmp(node, quoted + 1, nn))
			return 1;
	}
	return 0;
}

struct record {
	struct store *s;
	int64_t before_ms;
	char *quoted;
	unsigned jobs, slow;
};

static int record_row(const struct store_diag_row *d, void *arg)
{
	struct record *rc = arg;
	rc->jobs++;
	rc->slow += (unsigned)store_diag_found_slow(d->json, rc->quoted);
	return 0;
}

/* dgn_context's node_slow_before: the node's latest DGN_NODE_RECORD diagnosed jobs (its job
 * rows: a job over several nodes has one on each) before the job's start. A store that cannot
 * say has no record (0 of 0). */
static unsigned node_record(void *arg, const char *node, unsigned *jobs)
{
	struct record *rc = arg;
	char *q = malloc(6 * strlen(node) + 3);
	*jobs = 0;
	if (!q)
		return 0;
	ana_json_quote(q, node);
	struct record one = {.s = rc->s, .before_ms = rc->before_ms, .quoted = q};
	if (store_diag_node(rc->s, node, rc->before_ms, DGN_NODE_RECORD, record_row, &one) < 0)
		one.jobs = one.slow = 0;
	free(q);
	*jobs = one.jobs;
	return one.slow;
}

/* ---- the jobs a diagnosis reads, found by indexes ---- */

/* keys collected from a store query */
struct keys {
	int64_t *v;
	size_t n, cap;
	int nomem;
};

static int keep_key(int64_t key, void *arg)
{
	struct keys *k = arg;
	if (k->n == k->cap) {
		size_t c = k->cap ? k->cap * 2 : 64;
		int64_t *v = realloc(k->v, c * sizeof *v);
		if (!v) {
			k->nomem = 1;
			return 1;
		}
		k->v = v;
		k->cap = c;
	}
	k->v[k->n++] = key;
	return 0;
}

/* Adds the rows f selects to a (role: 1 history, 2 neighbour, 3 the job on another node),
 * skipping jobs already there. 0 or -errno. */
static int add_rows(struct store *s, struct all_jobs *a, const struct store_job_filter *f)
{
	size_t first = a->n;
	int r = store_jobs(s, f, keep_row, a);
	if (r >= 0 && a->nomem)
		r = -ENOMEM;
	if (r < 0)
		return r;
	/* drop the rows already taken (a neighbour that is also a similar job is one job) */
	size_t w = first;
	for (size_t i = first; i < a->n; i++) {
		int dup = 0;
		for (size_t k = 0; k < first && !dup; k++)
			dup = a->v[k].j.key == a->v[i].j.key;
		if (dup)
			djob_free(&a->v[i]);
		else
			a->v[w++] = a->v[i];
	}
	a->n = w;
	return 0;
}

int store_diagnose(struct store *s, const struct store_job *j, struct store_diagnosis *d)
{
	struct all_jobs all = {0};
	struct keys similar = {0};
	struct store_diag_job *v = NULL;
	size_t n = 0;
	memset(d, 0, sizeof *d);
	/* the job itself first */
	keep_row(j, &all);
	int r = all.nomem ? -ENOMEM : 0;
	if (r < 0)
		goto fail;
	int n_to_1 = 0;
	if (!(all.v[0].app = app_of(s, &all.v[0], &n_to_1))) {
		r = -ENOMEM;
		goto fail;
	}
	all.v[0].dj.n_to_1 = n_to_1;
	int64_t start = all.v[0].j.start_ms, end = end_of(&all.v[0].j);
	/* the job's rows on its other nodes (a central store), first: none of them is history */
	size_t before = all.n;
	struct store_job_filter jf = {.uid = j->uid, .job = j->job};
	if ((r = add_rows(s, &all, &jf)) < 0)
		goto fail;
	int64_t first = start; /* the job's earliest start on any node */
	for (size_t k = before; k < all.n; k++) {
		struct store_diag_job *x = &all.v[k];
		x->dj.nodes = 3;
		first = x->j.start_ms < first ? x->j.start_ms : first;
		if (!(x->app = strdup(all.v[0].app))) {
			r = -ENOMEM;
			goto fail;
		}
	}
	/* its history: the latest ended jobs of the same application and scale that started before
	 * the job did on any node (the diagnoses' index; the job's own rows, diagnosed one after
	 * another, are not its history), each read by its key */
	if ((r = store_diag_similar(s, all.v[0].app, j->nprocs, first, STORE_DIAG_HISTORY, keep_key, &similar)) < 0)
		goto fail;
	if (similar.nomem) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < similar.n; i++) {
		struct store_job_filter f = {.uid = STORE_ANY_UID, .key = similar.v[i], .ended_only = 1};
		size_t before = all.n;
		if ((r = add_rows(s, &all, &f)) < 0)
			goto fail;
		for (size_t k = before; k < all.n; k++) {
			all.v[k].dj.nodes = 1;
			if (!(all.v[k].app = strdup(all.v[0].app))) {
				r = -ENOMEM;
				goto fail;
			}
		}
	}
	/* its neighbours: the jobs that overlapped it (the jobs' end index), on its host */
	before = all.n;
	struct store_job_filter nf = {.uid = STORE_ANY_UID, .since_ms = start, .until_ms = end};
	if ((r = add_rows(s, &all, &nf)) < 0)
		goto fail;
	for (size_t k = before; k < all.n; k++) {
		struct store_diag_job *x = &all.v[k];
		if (strcmp(x->j.host, all.v[0].j.host) || end_of(&x->j) <= start) {
			djob_free(x); /* dropped below: no strings left */
			continue;
		}
		x->dj.nodes = 2;
		if (!(x->app = app_of(s, x, &x->dj.n_to_1))) {
			r = -ENOMEM;
			goto fail;
		}
	}
	v = calloc(all.n + 1, sizeof *v);
	if (!v) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < all.n; i++)
		if (all.v[i].strs[0])
			v[n++] = all.v[i];
	free(all.v);
	all.v = NULL;
	all.n = 0;
	for (size_t i = 0; i < n; i++) {
		int nt = v[i].dj.n_to_1;
		if ((r = load_series(s, &v[i])) < 0)
			goto fail_v;
		unsigned role = i ? v[i].dj.nodes : 0;
		fill_dgn(&v[i]);
		v[i].dj.n_to_1 = nt;
		v[i].dj.nodes = role; /* kept for the split below */
	}
	/* the context: history and neighbours as arrays of dgn_job, the nodes as series */
	struct dgn_job *h = calloc(n, sizeof *h), *nb = calloc(n, sizeof *nb);
	const char **names = calloc(n, sizeof *names);
	struct dgn_series *ns = calloc(n, sizeof *ns);
	if (!h || !nb || !names || !ns) {
		free(h);
		free(nb);
		free(names);
		free(ns);
		r = -ENOMEM;
		goto fail_v;
	}
	size_t nh = 0, nn = 0, nnodes = 0;
	for (size_t i = 1; i < n; i++) {
		if (v[i].dj.nodes == 1)
			h[nh++] = v[i].dj;
		else if (v[i].dj.nodes == 2)
			nb[nn++] = v[i].dj;
		else {
			names[nnodes + 1] = v[i].j.host;
			ns[nnodes + 1] = v[i].dj.series;
			nnodes++;
		}
	}
	for (size_t i = 1; i < n; i++)
		v[i].dj.nodes = 1;
	v[0].dj.nodes = 1;
	if (nnodes) { /* the job on every host: this one first */
		names[0] = v[0].j.host;
		ns[0] = v[0].dj.series;
		v[0].dj.node_names = names;
		v[0].dj.node_series = ns;
		v[0].dj.nnodes = nnodes + 1;
		v[0].dj.nodes = (uint32_t)(nnodes + 1);
	}
	struct record rec = {.s = s, .before_ms = v[0].j.start_ms};
	struct dgn_context ctx = {.history = h, .nhistory = nh, .neighbours = nb, .nneighbours = nn,
				  .node_slow_before = node_record, .ctx = &rec};
	r = dgn_diagnose(&v[0].dj, &ctx, &d->res);
	free(h);
	free(nb);
	free(names);
	free(ns);
	v[0].dj.node_names = NULL;
	v[0].dj.node_series = NULL;
	if (r < 0)
		goto fail_v;
	d->jobs = v;
	d->njobs = n;
	d->nhistory = nh;
	d->nneighbours = nn;
	d->host = v[0].j.host;
	d->app = v[0].app;
	free(similar.v);
	return 0;
fail_v:
	for (size_t i = 0; i < n; i++)
		djob_free(&v[i]);
	free(v);
fail:
	for (size_t i = 0; i < all.n; i++)
		djob_free(&all.v[i]);
	free(all.v);
	free(similar.v);
	return r;
}

/* ---- output ---- */

static const char *job_name(const struct store_diagnosis *d, int64_t key)
{
	for (size_t i = 0; i < d->njobs; i++)
		if (d->jobs[i].j.key == key)
			return d->jobs[i].j.job;
	return "?";
}

static void types_json(struct ana_jw *w, const char *key, unsigned t, const char *const *names, unsigned n)
{
	ana_jw_open(w, key, '[');
	for (unsigned i = 0; i < n; i++)
		if (t & (1u << i))
			ana_jw_str(w, NULL, names[i]);
	ana_jw_close(w, ']');
}

static const char *const io_types[] = {"read", "write", "metadata"};
static const char *const if_types[] = {"n_to_1", "high_bandwidth", "high_metadata", "many_jobs"};

void store_diagnosis_json(struct ana_jw *w, const struct store_job *j, const struct store_diagnosis *d)
{
	ana_jw_str(w, "job", j->job);
	ana_jw_str(w, "host", j->host);
	ana_jw_str(w, "app", d->app);
	ana_jw_u64(w, "history", d->nhistory);
	ana_jw_u64(w, "neighbours", d->nneighbours);
	ana_jw_open(w, "phases", '[');
	for (size_t i = 0; i < d->res.nphases; i++) {
		const struct dgn_phase *p = &d->res.phases[i];
		ana_jw_open(w, NULL, '{');
		ana_jw_i64(w, "start_ms", p->start_ms);
		ana_jw_i64(w, "end_ms", p->end_ms);
		ana_jw_double(w, "bytes", p->bytes);
		ana_jw_double(w, "mean_bw", p->mean_bw);
		ana_jw_double(w, "peak_bw", p->peak_bw);
		ana_jw_double(w, "meta_rate", p->meta_rate);
		types_json(w, "type", p->type, io_types, 3);
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, ']');
	ana_jw_open(w, "findings", '[');
	for (size_t i = 0; i < d->res.n; i++) {
		const struct dgn_finding *f = &d->res.f[i];
		ana_jw_open(w, NULL, '{');
		ana_jw_str(w, "kind", dgn_kind_name(f->kind));
		ana_jw_u64(w, "phase", f->phase);
		ana_jw_i64(w, "start_ms", f->start_ms);
		ana_jw_i64(w, "end_ms", f->end_ms);
		ana_jw_double(w, "value", f->value);
		ana_jw_double(w, "expected", f->expected);
		ana_jw_double(w, "slower", f->slower);
		ana_jw_u64(w, "history", f->history);
		if (f->kind == DGN_INTERFERENCE) {
			types_json(w, "types", f->types, if_types, 4);
			ana_jw_open(w, "jobs", '[');
			for (size_t k = 0; k < f->njobs; k++)
				ana_jw_str(w, NULL, job_name(d, f->jobs[k]));
			ana_jw_close(w, ']');
		}
		if (f->resource)
			ana_jw_str(w, "resource", f->resource);
		if (f->node)
			ana_jw_str(w, "node", f->node);
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, ']');
}

static void clock_of(char *buf, size_t len, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
}

void store_diagnosis_text(FILE *out, const struct store_job *j, const struct store_diagnosis *d)
{
	fprintf(out, "job %s on %s: %zu I/O phase%s; %zu similar job%s before (%s), %zu neighbour%s\n", j->job, j->host,
		d->res.nphases, d->res.nphases == 1 ? "" : "s", d->nhistory, d->nhistory == 1 ? "" : "s", d->app,
		d->nneighbours, d->nneighbours == 1 ? "" : "s");
	if (!d->res.n)
		fprintf(out, "  no anomaly\n");
	for (size_t i = 0; i < d->res.n; i++) {
		const struct dgn_finding *f = &d->res.f[i];
		char a[16], b[16];
		clock_of(a, sizeof a, f->start_ms);
		clock_of(b, sizeof b, f->end_ms);
		switch (f->kind) {
		case DGN_NOT_ENOUGH_DATA:
			fprintf(out, "  not enough data: %.0f %s of %.0f needed to judge\n", f->value,
				f->lack == DGN_LACK_HISTORY ? "similar phases"
				: f->lack == DGN_LACK_PHASE ? "seconds in its longest I/O phase"
							    : "seconds of I/O",
				f->expected);
			break;
		case DGN_ABNORMAL_PHASE:
			fprintf(out, "  abnormal phase %u (%s-%s): %.1f MB/s, %.0f%% slower than %.1f MB/s in %u similar phases\n",
				f->phase + 1, a, b, f->value / 1e6, 100 * f->slower, f->expected / 1e6, f->history);
			break;
		case DGN_INTERFERENCE:
			fprintf(out, "    cause: interference on %s:", f->resource ? f->resource : "?");
			for (unsigned k = 0; k < 4; k++)
				if (f->types & (1u << k))
					fprintf(out, " %s", if_types[k]);
			fprintf(out, " (");
			for (size_t k = 0; k < f->njobs; k++)
				fprintf(out, "%sjob %s", k ? ", " : "", job_name(d, f->jobs[k]));
			fprintf(out, ")\n");
			break;
		case DGN_DEGRADED_NODE:
			if (f->by_record)
				fprintf(out, "    cause: node %s degraded: no interfering neighbour, and slow in %u of its latest %d jobs before\n",
					f->node, f->history, DGN_NODE_RECORD);
			else
				fprintf(out, "    cause: node %s degraded: %.1f MB/s against %.1f MB/s on the job's other nodes; slow in %u of its latest %d jobs before\n",
					f->node, f->value / 1e6, f->expected / 1e6, f->history, DGN_NODE_RECORD);
			break;
		case DGN_UNEXPLAINED:
			fprintf(out, "    cause: none found (no interfering neighbour, no slower node)\n");
			break;
		}
	}
}

/* ---- made when a job ends, and stored (schema 10) ---- */

static unsigned anomalies_of(const struct dgn_result *res)
{
	unsigned n = 0;
	for (size_t i = 0; i < res->n; i++)
		n += res->f[i].kind == DGN_ABNORMAL_PHASE;
	return n;
}

/* store_diagnosis_save with the job's reported rows already counted */
static int save_row(struct store *s, int64_t job_key, int64_t now_ms, uint32_t job_rows)
{
	struct all_jobs one = {0};
	struct store_job_filter f = {.uid = STORE_ANY_UID, .key = job_key};
	struct store_diagnosis d;
	char *text = NULL, *json = NULL;
	size_t tlen = 0, jlen = 0;
	int r = store_jobs(s, &f, keep_row, &one);
	if (r >= 0 && one.nomem)
		r = -ENOMEM;
	if (r >= 0 && !one.n)
		r = -ENOENT;
	if (r < 0)
		goto out;
	if ((r = store_diagnose(s, &one.v[0].j, &d)) < 0)
		goto out;
	FILE *tf = open_memstream(&text, &tlen), *jf = open_memstream(&json, &jlen);
	if (tf) {
		store_diagnosis_text(tf, &one.v[0].j, &d);
		fclose(tf);
	}
	if (jf) {
		struct ana_jw w = {.f = jf};
		ana_jw_open(&w, NULL, '{');
		store_diagnosis_json(&w, &one.v[0].j, &d);
		ana_jw_close(&w, '}');
		fclose(jf);
	}
	if (!tf || !jf || !text || !json) {
		r = -ENOMEM;
	} else {
		struct store_diag_row row = {.job_key = job_key, .app = d.app, .ranks = one.v[0].j.nprocs,
					     .start_ms = one.v[0].j.start_ms, .t_ms = now_ms,
					     .anomalies = anomalies_of(&d.res), .text = text, .json = json,
					     .job_rows = job_rows};
		if ((r = store_begin(s)) >= 0 && (r = store_diagnosis_put(s, &row)) >= 0)
			r = store_commit(s);
		if (r < 0)
			store_rollback(s);
	}
	store_diagnosis_free(&d);
out:
	free(text);
	free(json);
	for (size_t i = 0; i < one.n; i++)
		djob_free(&one.v[i]);
	free(one.v);
	return r;
}

/* ---- when a job's rows are complete (docs/DIAGNOSIS.md, "When it runs") ---- */

/* A job's rows as the waiting rule reads them. */
struct peers {
	struct {
		int64_t key, diag_rows;
		int reported;
	} *v;
	size_t n, cap;
	uint32_t reported;       /* ended rows with a report */
	int64_t first_report_ms; /* the earliest of their reports */
	char *nodes;             /* the first node list a row carries (malloc'd), or NULL */
	int nomem;
};

static int keep_peer(const struct store_diag_peer *p, void *arg)
{
	struct peers *x = arg;
	if (x->n == x->cap) {
		size_t c = x->cap ? x->cap * 2 : 16;
		void *v = realloc(x->v, c * sizeof *x->v);
		if (!v) {
			x->nomem = 1;
			return 1;
		}
		x->v = v;
		x->cap = c;
	}
	x->v[x->n].key = p->key;
	x->v[x->n].diag_rows = p->diag_rows;
	x->v[x->n++].reported = p->reported;
	if (p->reported) {
		if (!x->reported || p->report_ms < x->first_report_ms)
			x->first_report_ms = p->report_ms;
		x->reported++;
	}
	if (!x->nodes && p->sched_nodes && *p->sched_nodes && !(x->nodes = strdup(p->sched_nodes))) {
		x->nomem = 1;
		return 1;
	}
	return 0;
}

static int read_peers(struct store *s, int64_t job_key, struct peers *x)
{
	memset(x, 0, sizeof *x);
	int r = store_diag_peers(s, job_key, keep_peer, x);
	return r >= 0 && x->nomem ? -ENOMEM : r;
}

static void peers_free(struct peers *x)
{
	free(x->v);
	free(x->nodes);
}

/* The nodes a scheduler's node list names (a Slurm hostlist); 0 when it names none or cannot be
 * read: no list. */
static size_t list_nodes(const char *expr)
{
	struct sys_slurm_hosts h;
	if (!expr || sys_slurm_hostlist_expand(expr, strlen(expr), SYS_SLURM_HOSTS_MAX, &h) < 0)
		return 0;
	size_t n = h.n;
	sys_slurm_hosts_free(&h);
	return n;
}

int store_diag_ready(uint32_t reported, const char *nodes, int64_t first_report_ms, int64_t now_ms)
{
	size_t want = list_nodes(nodes);
	return !want || reported >= want || now_ms - first_report_ms >= STORE_DIAG_NODES_WAIT_MS;
}

int store_diagnosis_save(struct store *s, int64_t job_key, int64_t now_ms)
{
	struct peers x;
	int r = read_peers(s, job_key, &x);
	if (r >= 0)
		r = save_row(s, job_key, now_ms, x.reported);
	peers_free(&x);
	return r;
}

/* The rows of job_key's job that need a diagnosis, when the job is ready: first those whose
 * diagnosis saw fewer of the job's rows than it has now, then those with none (a worker stopped
 * between two leaves the job pending: its undiagnosed rows keep it so), until *done is max. */
static int diagnose_job(struct store *s, int64_t job_key, int64_t now_ms, unsigned flags, size_t max, size_t *done)
{
	struct peers x;
	int r = read_peers(s, job_key, &x);
	if (r < 0 || ((flags & STORE_DIAG_WAIT_NODES) && !store_diag_ready(x.reported, x.nodes, x.first_report_ms, now_ms)))
		goto out;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < x.n && *done < max; i++) {
			int stale = x.v[i].diag_rows >= 0 && x.v[i].diag_rows < (int64_t)x.reported;
			if (!x.v[i].reported || (pass == 0 ? !stale : x.v[i].diag_rows >= 0))
				continue;
			if ((r = save_row(s, x.v[i].key, now_ms, x.reported)) < 0)
				goto out;
			(*done)++;
		}
out:
	peers_free(&x);
	return r;
}

int store_diagnose_pending(struct store *s, int64_t *since_ms, size_t max, int64_t now_ms, unsigned flags,
			   size_t *done)
{
	struct keys k = {0};
	*done = 0;
	int r = store_diag_pending(s, *since_ms, STORE_DIAG_PENDING_JOBS, keep_key, &k);
	if (r >= 0 && k.nomem)
		r = -ENOMEM;
	for (size_t i = 0; r >= 0 && i < k.n && *done < max; i++)
		r = diagnose_job(s, k.v[i], now_ms, flags, max, done);
	/* next time from a while before now (a report committed late by another writer, an ingest
	 * worker's transaction, may carry an earlier time), once every pending job was looked at
	 * and none was left for lack of time: a job still waiting for its nodes has its reports
	 * within that while (STORE_DIAG_NODES_WAIT_MS < STORE_DIAG_REPORT_LAG_MS) */
	if (r >= 0 && k.n < STORE_DIAG_PENDING_JOBS && *done < max && now_ms - STORE_DIAG_REPORT_LAG_MS > *since_ms)
		*since_ms = now_ms - STORE_DIAG_REPORT_LAG_MS;
	free(k.v);
	return r;
}
