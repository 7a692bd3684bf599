/* SPDX-License-Identifier: MIT */
/*
 * A node batch as InfluxDB line protocol (lineproto.h). The batch is decoded into arrays first,
 * then each measurement's points are summed per series and written in key order: a batch may
 * hold several records of one series (the interval rows of one rank's files, or of the many
 * processes of a job that has no ranks), and two points of one series and timestamp would
 * overwrite each other in InfluxDB instead of adding up. Every point carries the batch's time,
 * so a batch delivered twice writes the same points twice: the second overwrites the first.
 *
 * Escaping follows InfluxDB 1.x's parser (checked against influxd 1.6): in a tag key or value
 * and a field key, a comma, a space and an equals sign take a backslash; a backslash is kept as
 * it is, except where 1.x cannot read one (at the end of a value, or right before one of those
 * three), where it becomes a '/'; a newline or carriage return, which no tag can hold, is
 * written as the two characters \n or \r; an empty tag is left out. String field values escape
 * the double quote and the backslash. Integer fields are signed 64-bit in InfluxDB: a counter
 * difference above INT64_MAX (none is) would be left out rather than refuse the whole write.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/lineproto.h"
#include "iostrata/format.h"
#include "store/batch.h"
#include "sys/text.h"

struct lp_job {
	int64_t key;
	char *job, *user, *exe;
};
struct lp_proc {
	int64_t key, job_key;
	int32_t rank;
};
struct lp_row {
	int64_t proc_key, job_key;
	int32_t rank;
	unsigned layer, cat;
	int64_t bytes, calls, dur_ns;
};
struct lp_totals {
	int64_t job_key;
	int64_t bytes[STORE_NCATS], calls[STORE_NCATS];
};
struct lp_node {
	unsigned layer;
	uint64_t v[5]; /* bytes_read, bytes_written, reads, writes, meta_ops */
};
#define LP_NDEV 14
struct lp_dev {
	char *device;
	uint64_t v[LP_NDEV];
};
struct lp_sample {
	char *source, *instance, *metric;
	int64_t value;
	int gauge;
};

/* An array of one of the above: v, n used of cap. */
struct lp_arr {
	void *v;
	size_t n, cap;
};

struct lp_ctx {
	struct dmn_lp_text *out;
	int64_t t_ms;
	char *host;
	struct lp_arr jobs, procs, rows, totals, nodes, devs, samples;
	size_t npoints;
	int nomem;
};

static const char *const node_fields[5] = {"bytes_read", "bytes_written", "reads", "writes", "meta_ops"};
static const char *const dev_fields[LP_NDEV] = {
	"reads", "reads_merged", "sectors_read", "ms_reading", "writes", "writes_merged", "sectors_written",
	"ms_writing", "in_flight", "ms_io", "ms_weighted", "discards", "sectors_discarded", "flushes",
};

/* ---------- the text ---------- */

void dmn_lp_text_free(struct dmn_lp_text *t)
{
	free(t->s);
	*t = (struct dmn_lp_text){0};
}

static void put(struct lp_ctx *c, const char *s, size_t n)
{
	struct dmn_lp_text *t = c->out;
	if (c->nomem)
		return;
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 4096;
		while (cap < t->len + n + 1)
			cap *= 2;
		char *x = realloc(t->s, cap);
		if (!x) {
			c->nomem = 1;
			return;
		}
		t->s = x, t->cap = cap;
	}
	memcpy(t->s + t->len, s, n);
	t->len += n;
	t->s[t->len] = 0;
}

static void puts_(struct lp_ctx *c, const char *s)
{
	put(c, s, strlen(s));
}

/* A tag key or value, or a field key (the header's rules). */
static void put_key(struct lp_ctx *c, const char *s)
{
	for (const char *p = s; *p; p++) {
		const char *run = p;
		while (*p && !strchr(",= \\\n\r", *p))
			p++;
		put(c, run, (size_t)(p - run));
		if (!*p)
			break;
		if (*p == '\n')
			put(c, "\\n", 2);
		else if (*p == '\r')
			put(c, "\\r", 2);
		else if (*p != '\\') {
			put(c, "\\", 1);
			put(c, p, 1);
		} else if (!p[1] || strchr(",= ", p[1]))
			put(c, "/", 1);
		else
			put(c, "\\", 1);
	}
}

/* ",KEY=VALUE", or nothing for an empty value. */
static void put_tag(struct lp_ctx *c, const char *key, const char *value)
{
	if (!value || !*value)
		return;
	put(c, ",", 1);
	puts_(c, key);
	put(c, "=", 1);
	put_key(c, value);
}

/* One field: *first says whether a comma goes before it. */
static void put_int(struct lp_ctx *c, int *first, const char *key, int64_t v)
{
	char num[32];
	int n = snprintf(num, sizeof num, "%" PRId64 "i", v);
	put(c, *first ? " " : ",", 1);
	put_key(c, key);
	put(c, "=", 1);
	put(c, num, (size_t)n);
	*first = 0;
}

static void put_uint(struct lp_ctx *c, int *first, const char *key, uint64_t v)
{
	if (v <= INT64_MAX)
		put_int(c, first, key, (int64_t)v);
}

static void put_string(struct lp_ctx *c, int *first, const char *key, const char *v)
{
	put(c, *first ? " " : ",", 1);
	put_key(c, key);
	put(c, "=\"", 2);
	for (const char *p = v; *p; p++) {
		const char *run = p;
		while (*p && *p != '"' && *p != '\\')
			p++;
		put(c, run, (size_t)(p - run));
		if (!*p)
			break;
		put(c, "\\", 1);
		put(c, p, 1);
	}
	put(c, "\"", 1);
	*first = 0;
}

/* Ends a point begun at mark: its timestamp, or the point taken back when it has no field
 * (a line without one is refused). */
static void end_point(struct lp_ctx *c, size_t mark, int first)
{
	if (c->nomem)
		return;
	if (first) {
		c->out->len = mark;
		if (c->out->s)
			c->out->s[mark] = 0;
		return;
	}
	char ts[32];
	int n = snprintf(ts, sizeof ts, " %" PRId64 "\n", c->t_ms);
	put(c, ts, (size_t)n);
	c->npoints++;
}

/* ---------- collecting the batch ---------- */

static void *add(struct lp_ctx *c, struct lp_arr *a, size_t size)
{
	void *v = sys_text_grow(a->v, &a->cap, a->n, size, 16);
	if (!v) {
		c->nomem = 1;
		return NULL;
	}
	a->v = v;
	void *e = (char *)v + a->n++ * size;
	memset(e, 0, size);
	return e;
}

static char *lp_strdup(struct lp_ctx *c, const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d)
		c->nomem = 1;
	return d;
}

static int v_begin(void *ctx, const char *host, uint64_t seq, int64_t t_ms, int64_t dt_ms)
{
	struct lp_ctx *c = ctx;
	(void)seq, (void)dt_ms;
	c->t_ms = t_ms;
	free(c->host);
	c->host = lp_strdup(c, host);
	return c->nomem ? -ENOMEM : 0;
}

static int v_job(void *ctx, const struct store_job *j)
{
	struct lp_ctx *c = ctx;
	struct lp_job *x = add(c, &c->jobs, sizeof *x);
	if (!x)
		return -ENOMEM;
	char uid[16];
	snprintf(uid, sizeof uid, "%" PRIu32, j->uid);
	x->key = j->key;
	x->job = lp_strdup(c, j->job);
	x->user = lp_strdup(c, j->user && *j->user ? j->user : uid);
	x->exe = lp_strdup(c, j->exe);
	return c->nomem ? -ENOMEM : 0;
}

static int v_proc(void *ctx, const struct store_proc *p)
{
	struct lp_ctx *c = ctx;
	struct lp_proc *x = add(c, &c->procs, sizeof *x);
	if (!x)
		return -ENOMEM;
	*x = (struct lp_proc){p->key, p->job_key, p->rank};
	return 0;
}

static int v_interval(void *ctx, const struct store_interval *iv)
{
	struct lp_ctx *c = ctx;
	struct lp_row *x = add(c, &c->rows, sizeof *x);
	if (!x)
		return -ENOMEM;
	*x = (struct lp_row){.proc_key = iv->proc_key, .layer = iv->layer, .cat = iv->cat, .bytes = iv->bytes,
			     .calls = iv->calls, .dur_ns = iv->dur_ns};
	return 0;
}

static int v_totals(void *ctx, int64_t job_key, const int64_t bytes[STORE_NCATS], const int64_t calls[STORE_NCATS])
{
	struct lp_ctx *c = ctx;
	struct lp_totals *x = add(c, &c->totals, sizeof *x);
	if (!x)
		return -ENOMEM;
	x->job_key = job_key;
	memcpy(x->bytes, bytes, sizeof x->bytes);
	memcpy(x->calls, calls, sizeof x->calls);
	return 0;
}

static int v_node(void *ctx, const struct store_node_sec *ns)
{
	struct lp_ctx *c = ctx;
	struct lp_node *x = add(c, &c->nodes, sizeof *x);
	if (!x)
		return -ENOMEM;
	*x = (struct lp_node){ns->layer, {ns->bytes_read, ns->bytes_written, ns->reads, ns->writes, ns->meta_ops}};
	return 0;
}

static int v_device(void *ctx, const struct store_device_sample *d)
{
	struct lp_ctx *c = ctx;
	struct lp_dev *x = add(c, &c->devs, sizeof *x);
	if (!x)
		return -ENOMEM;
	const uint64_t v[LP_NDEV] = {d->reads, d->reads_merged, d->sectors_read, d->ms_reading, d->writes,
				     d->writes_merged, d->sectors_written, d->ms_writing, d->in_flight, d->ms_io,
				     d->ms_weighted, d->discards, d->sectors_discarded, d->flushes};
	memcpy(x->v, v, sizeof v);
	x->device = lp_strdup(c, d->device);
	return c->nomem ? -ENOMEM : 0;
}

static int v_sample(void *ctx, const struct store_sample *s)
{
	struct lp_ctx *c = ctx;
	struct lp_sample *x = add(c, &c->samples, sizeof *x);
	if (!x)
		return -ENOMEM;
	x->source = lp_strdup(c, s->source);
	x->instance = lp_strdup(c, s->instance);
	x->metric = lp_strdup(c, s->metric);
	x->value = s->value;
	x->gauge = s->gauge;
	return c->nomem ? -ENOMEM : 0;
}

static const struct store_batch_visitor lp_visitor = {
	.begin = v_begin, .job = v_job, .proc = v_proc, .interval = v_interval, .totals = v_totals,
	.node_sec = v_node, .device = v_device, .sample = v_sample,
};

/* ---------- sorting, summing, writing ---------- */

static int cmp_i64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

static int cmp_job(const void *a, const void *b)
{
	return cmp_i64(((const struct lp_job *)a)->key, ((const struct lp_job *)b)->key);
}

static int cmp_proc(const void *a, const void *b)
{
	return cmp_i64(((const struct lp_proc *)a)->key, ((const struct lp_proc *)b)->key);
}

/* a series of iostrata_interval: (job, rank, layer, category) */
static int cmp_row(const void *pa, const void *pb)
{
	const struct lp_row *a = pa, *b = pb;
	int r = cmp_i64(a->job_key, b->job_key);
	if (!r)
		r = cmp_i64(a->rank, b->rank);
	if (!r)
		r = cmp_i64(a->layer, b->layer);
	if (!r)
		r = cmp_i64(a->cat, b->cat);
	return r;
}

static int cmp_totals(const void *a, const void *b)
{
	return cmp_i64(((const struct lp_totals *)a)->job_key, ((const struct lp_totals *)b)->job_key);
}

static int cmp_node(const void *a, const void *b)
{
	return cmp_i64(((const struct lp_node *)a)->layer, ((const struct lp_node *)b)->layer);
}

static int cmp_dev(const void *a, const void *b)
{
	return strcmp(((const struct lp_dev *)a)->device, ((const struct lp_dev *)b)->device);
}

static int cmp_sample(const void *pa, const void *pb)
{
	const struct lp_sample *a = pa, *b = pb;
	int r = strcmp(a->source, b->source);
	if (!r)
		r = strcmp(a->instance, b->instance);
	if (!r)
		r = strcmp(a->metric, b->metric);
	return r;
}

static void sort(struct lp_arr *a, size_t size, int (*cmp)(const void *, const void *))
{
	if (a->n > 1)
		qsort(a->v, a->n, size, cmp);
}

static const struct lp_job *find_job(const struct lp_ctx *c, int64_t key)
{
	struct lp_job k = {.key = key};
	return bsearch(&k, c->jobs.v, c->jobs.n, sizeof k, cmp_job);
}

static void write_nodes(struct lp_ctx *c)
{
	struct lp_node *v = c->nodes.v;
	for (size_t i = 0; i < c->nodes.n;) {
		uint64_t sum[5] = {0};
		size_t j = i;
		for (; j < c->nodes.n && v[j].layer == v[i].layer; j++)
			for (int f = 0; f < 5; f++)
				sum[f] += v[j].v[f];
		size_t mark = c->out->len;
		int first = 1;
		puts_(c, "iostrata_node");
		put_tag(c, "host", c->host);
		put_tag(c, "layer", log_layer_name(v[i].layer));
		for (int f = 0; f < 5; f++)
			put_uint(c, &first, node_fields[f], sum[f]);
		end_point(c, mark, first);
		i = j;
	}
}

static void write_rows(struct lp_ctx *c)
{
	struct lp_row *v = c->rows.v;
	const struct lp_proc *procs = c->procs.v;
	for (size_t i = 0; i < c->rows.n; i++) {
		/* the decoder saw every process defined before its rows */
		struct lp_proc k = {.key = v[i].proc_key};
		const struct lp_proc *p = bsearch(&k, procs, c->procs.n, sizeof k, cmp_proc);
		v[i].job_key = p ? p->job_key : -1;
		v[i].rank = p && p->rank >= 0 ? p->rank : -1;
	}
	sort(&c->rows, sizeof *v, cmp_row);
	for (size_t i = 0; i < c->rows.n;) {
		int64_t bytes = 0, calls = 0, dur = 0;
		size_t j = i;
		for (; j < c->rows.n && !cmp_row(&v[i], &v[j]); j++)
			bytes += v[j].bytes, calls += v[j].calls, dur += v[j].dur_ns;
		const struct lp_job *job = find_job(c, v[i].job_key);
		char rank[16] = "";
		if (v[i].rank >= 0)
			snprintf(rank, sizeof rank, "%" PRId32, v[i].rank);
		size_t mark = c->out->len;
		int first = 1;
		puts_(c, "iostrata_interval");
		put_tag(c, "category", store_cat_name(v[i].cat));
		put_tag(c, "host", c->host);
		put_tag(c, "job", job ? job->job : NULL);
		put_tag(c, "layer", log_layer_name(v[i].layer));
		put_tag(c, "rank", rank);
		put_tag(c, "user", job ? job->user : NULL);
		put_int(c, &first, "bytes", bytes);
		put_int(c, &first, "calls", calls);
		put_int(c, &first, "dur_ns", dur);
		end_point(c, mark, first);
		i = j;
	}
}

static void write_totals(struct lp_ctx *c)
{
	struct lp_totals *v = c->totals.v;
	sort(&c->totals, sizeof *v, cmp_totals);
	for (size_t i = 0; i < c->totals.n;) {
		int64_t b[STORE_NCATS] = {0}, n[STORE_NCATS] = {0};
		size_t j = i;
		for (; j < c->totals.n && v[j].job_key == v[i].job_key; j++)
			for (unsigned k = 0; k < STORE_NCATS; k++)
				b[k] += v[j].bytes[k], n[k] += v[j].calls[k];
		const struct lp_job *job = find_job(c, v[i].job_key);
		size_t mark = c->out->len;
		int first = 1;
		puts_(c, "iostrata_job");
		put_tag(c, "host", c->host);
		put_tag(c, "job", job ? job->job : NULL);
		put_tag(c, "user", job ? job->user : NULL);
		put_int(c, &first, "bytes_read", b[STORE_CAT_READ]);
		put_int(c, &first, "bytes_written", b[STORE_CAT_WRITE]);
		put_int(c, &first, "reads", n[STORE_CAT_READ]);
		put_int(c, &first, "writes", n[STORE_CAT_WRITE]);
		put_int(c, &first, "meta_ops", n[STORE_CAT_META]);
		if (job && *job->exe)
			put_string(c, &first, "exe", job->exe);
		end_point(c, mark, first);
		i = j;
	}
}

static void write_devs(struct lp_ctx *c)
{
	struct lp_dev *v = c->devs.v;
	sort(&c->devs, sizeof *v, cmp_dev);
	for (size_t i = 0; i < c->devs.n;) {
		uint64_t sum[LP_NDEV] = {0};
		size_t j = i;
		for (; j < c->devs.n && !strcmp(v[j].device, v[i].device); j++)
			for (int f = 0; f < LP_NDEV; f++)
				sum[f] += v[j].v[f];
		size_t mark = c->out->len;
		int first = 1;
		puts_(c, "iostrata_device");
		put_tag(c, "device", v[i].device);
		put_tag(c, "host", c->host);
		for (int f = 0; f < LP_NDEV; f++)
			put_uint(c, &first, dev_fields[f], sum[f]);
		end_point(c, mark, first);
		i = j;
	}
}

/* One point per (source, instance), its metrics as fields: a metric met twice adds up (a
 * counter) or keeps its last value (a gauge). */
static void write_samples(struct lp_ctx *c)
{
	struct lp_sample *v = c->samples.v;
	sort(&c->samples, sizeof *v, cmp_sample);
	for (size_t i = 0; i < c->samples.n;) {
		size_t mark = c->out->len;
		int first = 1;
		puts_(c, "iostrata_sample");
		put_tag(c, "host", c->host);
		put_tag(c, "instance", v[i].instance);
		put_tag(c, "source", v[i].source);
		size_t j = i;
		while (j < c->samples.n && !strcmp(v[j].source, v[i].source) && !strcmp(v[j].instance, v[i].instance)) {
			int64_t value = v[j].value;
			size_t k = j + 1;
			for (; k < c->samples.n && !cmp_sample(&v[j], &v[k]); k++)
				value = v[k].gauge ? v[k].value : value + v[k].value;
			if (*v[j].metric)
				put_int(c, &first, v[j].metric, value);
			j = k;
		}
		end_point(c, mark, first);
		i = j;
	}
}

static void ctx_free(struct lp_ctx *c)
{
	struct lp_job *jobs = c->jobs.v;
	for (size_t i = 0; i < c->jobs.n; i++)
		free(jobs[i].job), free(jobs[i].user), free(jobs[i].exe);
	struct lp_dev *devs = c->devs.v;
	for (size_t i = 0; i < c->devs.n; i++)
		free(devs[i].device);
	struct lp_sample *s = c->samples.v;
	for (size_t i = 0; i < c->samples.n; i++)
		free(s[i].source), free(s[i].instance), free(s[i].metric);
	free(c->jobs.v), free(c->procs.v), free(c->rows.v), free(c->totals.v);
	free(c->nodes.v), free(c->devs.v), free(c->samples.v);
	free(c->host);
}

int dmn_lp_batch(struct dmn_lp_text *out, const void *data, size_t len, size_t *npoints, char *err,
		 size_t errlen)
{
	struct lp_ctx c = {.out = out};
	size_t mark = out->len;
	int r = store_batch_decode(data, len, &lp_visitor, &c, err, errlen);
	if (r >= 0 && !c.nomem) {
		sort(&c.jobs, sizeof(struct lp_job), cmp_job);
		sort(&c.procs, sizeof(struct lp_proc), cmp_proc);
		sort(&c.nodes, sizeof(struct lp_node), cmp_node);
		write_nodes(&c);
		write_rows(&c);
		write_totals(&c);
		write_devs(&c);
		write_samples(&c);
	}
	if (r >= 0 && c.nomem)
		r = -ENOMEM;
	if (r < 0) {
		out->len = mark;
		if (out->s)
			out->s[mark] = 0;
		if (r == -ENOMEM)
			snprintf(err, errlen, "out of memory");
	} else if (npoints)
		*npoints += c.npoints;
	ctx_free(&c);
	return r < 0 ? r : 0;
}
