/* SPDX-License-Identifier: MIT */
/*
 * Node batches (batch.h): the encoder the daemon fills in its interval, the decoder every sink
 * and the ingest workers read with, and the application of a batch to a store. The format is
 * docs/STREAM.md's.
 */
#include "store/batch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/record.h"
#include "log/zstd.h"
#include "sys/sorted.h"
#include "sys/varint.h"

enum rec_type {
	R_END = 0,
	R_JOB = 1,
	R_SCHED = 2,
	R_PROC = 3,
	R_FILE = 4,
	R_INTERVAL = 5,
	R_TOTALS = 6,
	R_NODE = 7,
	R_DEVICE = 8,
	R_SAMPLE = 9,
	R_DIST = 10,
	R_REPORT = 11,
	R_FINDINGS = 12,
	R_RUN = 13,
	R_SPAN = 14, /* version 2: the interval rows after it span dt_ms (a statistics interval) */
};

/* ---------- a set of keys (the keys a batch has defined) ---------- */

struct keyset {
	int64_t *k; /* 0: empty (keys are row ids: > 0) */
	size_t n, cap;
};

static size_t key_slot(const struct keyset *s, int64_t key)
{
	size_t i = ((uint64_t)key * 0x9e3779b97f4a7c15ull) >> 20 & (s->cap - 1);
	while (s->k[i] && s->k[i] != key)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static int keyset_has(const struct keyset *s, int64_t key)
{
	return s->cap && s->k[key_slot(s, key)] == key;
}

/* 1 when added, 0 when there already, -ENOMEM. */
static int keyset_add(struct keyset *s, int64_t key)
{
	if ((s->n + 1) * 2 > s->cap) {
		struct keyset t = {calloc(s->cap ? s->cap * 2 : 64, sizeof *t.k), 0, s->cap ? s->cap * 2 : 64};
		if (!t.k)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++)
			if (s->k[i])
				t.k[key_slot(&t, s->k[i])] = s->k[i], t.n++;
		free(s->k);
		*s = t;
	}
	size_t i = key_slot(s, key);
	if (s->k[i])
		return 0;
	s->k[i] = key;
	s->n++;
	return 1;
}

static void keyset_clear(struct keyset *s)
{
	if (s->k)
		memset(s->k, 0, s->cap * sizeof *s->k);
	s->n = 0;
}

/* ---------- runs: each a delta from the batch's previous run ---------- */

/* What a run is written against: the previous run of the batch (the first: zeros, and the
 * batch's interval as the previous end), as the trace's entries are (docs/FORMAT.md). */
struct run_ctx {
	int64_t proc, file, tid;
	uint64_t next_idx;  /* the previous run's idx + 1 */
	int64_t expect;     /* offset + size * count of the previous run that had an offset */
	int64_t end_ns;
};

static void run_ctx_start(struct run_ctx *c, int64_t t_ms)
{
	memset(c, 0, sizeof *c);
	c->end_ns = (int64_t)((uint64_t)t_ms * 1000000u);
}

static void run_ctx_after(struct run_ctx *c, const struct store_run *x)
{
	c->proc = x->proc_key;
	c->file = x->file_key;
	c->tid = x->tid;
	c->next_idx = x->idx + 1;
	if (x->offset >= 0)
		c->expect = (int64_t)((uint64_t)x->offset + x->size * x->count);
	c->end_ns = x->end_ns;
}

/* ---------- encoding ---------- */

struct store_batch {
	unsigned char *p;
	size_t n, cap;
	int failed;
	uint64_t records;
	struct run_ctx run; /* the previous run, what the next is written against */
	struct keyset files;
	int64_t dt_ms, span_ms; /* the batch's interval, and what its interval rows span now */
	/* jobs given lazily: their encoded records, written before the first record that uses them */
	struct lazy {
		int64_t key;
		unsigned char *rec;
		size_t len;
		int written;
	} *lazy;
	size_t nlazy, caplazy;
};

struct store_batch *store_batch_new(void)
{
	return calloc(1, sizeof(struct store_batch));
}

static void lazy_clear(struct store_batch *b)
{
	for (size_t i = 0; i < b->nlazy; i++)
		free(b->lazy[i].rec);
	b->nlazy = 0;
}

void store_batch_free(struct store_batch *b)
{
	if (!b)
		return;
	lazy_clear(b);
	free(b->lazy);
	free(b->p);
	free(b->files.k);
	free(b);
}

/* Room for need more bytes: 0, or the batch marked failed. */
static int room(struct store_batch *b, size_t need)
{
	if (b->failed)
		return -1;
	if (need > STORE_BATCH_MAX - b->n) {
		b->failed = -EFBIG;
		return -1;
	}
	if (b->n + need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->n + need)
		cap *= 2;
	unsigned char *p = realloc(b->p, cap);
	if (!p) {
		b->failed = -ENOMEM;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

static void put_u(struct store_batch *b, uint64_t v)
{
	if (room(b, SYS_VARINT_MAX) == 0)
		b->n += sys_varint_put(b->p + b->n, v);
}

static void put_i(struct store_batch *b, int64_t v)
{
	put_u(b, sys_zigzag(v));
}

/* A string: its length + 1 (0: NULL), then its bytes. */
static void put_s(struct store_batch *b, const char *s)
{
	size_t len = s ? strlen(s) : 0;
	put_u(b, s ? len + 1 : 0);
	if (s && room(b, len) == 0) {
		memcpy(b->p + b->n, s, len);
		b->n += len;
	}
}

static void put_hist(struct store_batch *b, const uint64_t h[STORE_HIST])
{
	unsigned used = store_hist_used(h);
	put_u(b, used);
	for (unsigned i = 0; i < used; i++)
		put_u(b, h[i]);
}

static int done(struct store_batch *b)
{
	return b->failed ? b->failed : 0;
}

void store_batch_start(struct store_batch *b, const char *host, uint64_t seq, int64_t t_ms, int64_t dt_ms)
{
	b->n = 0;
	b->failed = 0;
	b->records = 0;
	run_ctx_start(&b->run, t_ms);
	keyset_clear(&b->files);
	lazy_clear(b);
	if (room(b, 5) == 0) {
		memcpy(b->p, STORE_BATCH_MAGIC, 4);
		b->p[4] = STORE_BATCH_VERSION;
		b->n = 5;
	}
	put_u(b, seq);
	put_i(b, t_ms);
	put_i(b, dt_ms);
	put_s(b, host);
	b->dt_ms = b->span_ms = dt_ms;
}

/* A lazy job's record, written now if a record about to be written uses it. */
static void need_job(struct store_batch *b, int64_t key)
{
	for (size_t i = 0; i < b->nlazy; i++)
		if (b->lazy[i].key == key && !b->lazy[i].written) {
			if (room(b, b->lazy[i].len) == 0) {
				memcpy(b->p + b->n, b->lazy[i].rec, b->lazy[i].len);
				b->n += b->lazy[i].len;
				b->records++;
			}
			b->lazy[i].written = 1;
		}
}

int store_batch_job_lazy(struct store_batch *b, const struct store_job *j)
{
	size_t at = b->n;
	int r = store_batch_job(b, j);
	if (r < 0)
		return r;
	b->records--;
	if (b->nlazy == b->caplazy) {
		size_t cap = b->caplazy ? b->caplazy * 2 : 64;
		struct lazy *v = realloc(b->lazy, cap * sizeof *v);
		if (!v)
			return b->failed = -ENOMEM;
		b->lazy = v;
		b->caplazy = cap;
	}
	struct lazy *l = &b->lazy[b->nlazy];
	if (!(l->rec = malloc(b->n - at)))
		return b->failed = -ENOMEM;
	memcpy(l->rec, b->p + at, b->n - at);
	l->len = b->n - at;
	l->key = j->key;
	l->written = 0;
	b->nlazy++;
	b->n = at;
	return 0;
}

uint64_t store_batch_records(const struct store_batch *b)
{
	return b->records;
}

int store_batch_job(struct store_batch *b, const struct store_job *j)
{
	b->records++;
	put_u(b, R_JOB);
	put_i(b, j->key);
	put_s(b, j->job);
	put_u(b, j->uid);
	put_s(b, j->user);
	put_s(b, j->exe);
	put_s(b, j->jobdir);
	put_i(b, j->start_ms);
	put_i(b, j->end_ms);
	put_u(b, !!j->running);
	return done(b);
}

int store_batch_sched(struct store_batch *b, const struct store_job *j)
{
	need_job(b, j->key);
	b->records++;
	put_u(b, R_SCHED);
	put_i(b, j->key);
	put_s(b, j->sched);
	put_s(b, j->sched_name);
	put_s(b, j->sched_state);
	put_s(b, j->sched_nodes);
	put_i(b, j->submit_ms);
	put_i(b, j->sched_start_ms);
	put_i(b, j->sched_end_ms);
	return done(b);
}

int store_batch_proc(struct store_batch *b, const struct store_proc *p)
{
	need_job(b, p->job_key);
	b->records++;
	put_u(b, R_PROC);
	put_i(b, p->key);
	put_i(b, p->job_key);
	put_i(b, p->pid);
	put_i(b, p->rank);
	put_u(b, p->start_ns);
	put_u(b, p->start_ticks);
	put_u(b, p->uid);
	put_s(b, p->exe);
	put_s(b, p->live_path);
	put_s(b, p->final_path);
	put_i(b, p->start_ms);
	put_i(b, p->end_ms);
	put_u(b, p->state);
	return done(b);
}

int store_batch_interval(struct store_batch *b, const struct store_interval *iv, const char *path)
{
	b->records++;
	int r = keyset_add(&b->files, iv->file_key);
	if (r < 0)
		return b->failed = r;
	if (r) {
		put_u(b, R_FILE);
		put_i(b, iv->file_key);
		put_s(b, path);
	}
	if (iv->dt_ms != b->span_ms) { /* statistics stored every stats_interval (docs/STREAM.md) */
		put_u(b, R_SPAN);
		put_i(b, iv->dt_ms);
		b->span_ms = iv->dt_ms;
	}
	put_u(b, R_INTERVAL);
	put_i(b, iv->proc_key);
	put_i(b, iv->file_key);
	put_u(b, iv->layer);
	put_u(b, iv->cat);
	put_i(b, iv->bytes);
	put_i(b, iv->calls);
	put_i(b, iv->dur_ns);
	return done(b);
}

/* A run: its file defined once per batch as an interval's is; every field a delta from the
 * batch's previous run, so that a run takes a few bytes (docs/STREAM.md, record 13). */
int store_batch_run(struct store_batch *b, const struct store_run *x, const char *path)
{
	struct run_ctx *c = &b->run;
	b->records++;
	int r = keyset_add(&b->files, x->file_key);
	if (r < 0)
		return b->failed = r;
	if (r) {
		put_u(b, R_FILE);
		put_i(b, x->file_key);
		put_s(b, path);
	}
	put_u(b, R_RUN);
	put_i(b, x->proc_key - c->proc);
	put_i(b, x->file_key - c->file);
	put_i(b, x->tid - c->tid);
	put_i(b, (int64_t)(x->idx - c->next_idx));
	put_u(b, x->layer);
	put_u(b, x->op);
	/* the offset: 0 for none, else 1 + zigzag of its distance from where the previous run ended */
	put_u(b, x->offset < 0 ? 0 : 1 + sys_zigzag((int64_t)((uint64_t)x->offset - (uint64_t)c->expect)));
	put_u(b, x->size);
	put_u(b, x->count);
	put_i(b, (int64_t)((uint64_t)x->start_ns - (uint64_t)c->end_ns));
	put_i(b, (int64_t)((uint64_t)x->end_ns - (uint64_t)x->start_ns));
	if (x->count > 1) { /* one call: its busy and fastest time are its span */
		put_u(b, x->busy_ns);
		put_u(b, x->min_ns);
	}
	put_i(b, x->result);
	run_ctx_after(c, x);
	return done(b);
}

int store_batch_totals(struct store_batch *b, int64_t job_key, const int64_t bytes[STORE_NCATS],
		       const int64_t calls[STORE_NCATS])
{
	need_job(b, job_key);
	b->records++;
	put_u(b, R_TOTALS);
	put_i(b, job_key);
	for (unsigned c = 0; c < STORE_NCATS; c++) {
		put_i(b, bytes[c]);
		put_i(b, calls[c]);
	}
	return done(b);
}

int store_batch_node_sec(struct store_batch *b, const struct store_node_sec *ns)
{
	b->records++;
	put_u(b, R_NODE);
	put_u(b, ns->layer);
	put_u(b, ns->bytes_read);
	put_u(b, ns->bytes_written);
	put_u(b, ns->reads);
	put_u(b, ns->writes);
	put_u(b, ns->meta_ops);
	put_hist(b, ns->read_hist);
	put_hist(b, ns->write_hist);
	return done(b);
}

int store_batch_device(struct store_batch *b, const struct store_device_sample *d)
{
	b->records++;
	put_u(b, R_DEVICE);
	put_s(b, d->device);
	put_u(b, d->major);
	put_u(b, d->minor);
	const uint64_t v[] = {d->reads,     d->reads_merged,    d->sectors_read, d->ms_reading, d->writes,
			      d->writes_merged, d->sectors_written, d->ms_writing,   d->in_flight,  d->ms_io,
			      d->ms_weighted, d->discards,        d->sectors_discarded, d->flushes};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		put_u(b, v[i]);
	return done(b);
}

int store_batch_sample(struct store_batch *b, const struct store_sample *x)
{
	b->records++;
	put_u(b, R_SAMPLE);
	put_s(b, x->source);
	put_s(b, x->instance);
	put_s(b, x->metric);
	put_i(b, x->value);
	put_u(b, !!x->gauge);
	return done(b);
}

int store_batch_dist(struct store_batch *b, const struct store_dist *x)
{
	b->records++;
	put_u(b, R_DIST);
	put_i(b, x->t_ms);
	put_s(b, x->server);
	put_s(b, x->op);
	put_u(b, x->requests);
	put_u(b, x->timed);
	put_hist(b, x->wait);
	put_hist(b, x->service);
	return done(b);
}

int store_batch_report(struct store_batch *b, int64_t job_key, const char *text, const char *json)
{
	need_job(b, job_key);
	b->records++;
	put_u(b, R_REPORT);
	put_i(b, job_key);
	put_s(b, text);
	put_s(b, json);
	return done(b);
}

int store_batch_findings(struct store_batch *b, int64_t job_key, const char *const *findings, size_t n)
{
	need_job(b, job_key);
	b->records++;
	put_u(b, R_FINDINGS);
	put_i(b, job_key);
	put_u(b, n);
	for (size_t i = 0; i < n; i++)
		put_s(b, findings[i]);
	return done(b);
}

const void *store_batch_finish(struct store_batch *b, size_t *len)
{
	put_u(b, R_END);
	if (b->failed)
		return NULL;
	*len = b->n;
	return b->p;
}

/* ---------- decoding ---------- */

struct rd {
	const unsigned char *p, *start, *end;
	char *err;
	size_t errlen;
	int bad;
	/* strings are cut into a copy: each one NUL-terminated in place of its length's successor */
	char *copy;
};

static void fault(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fault(struct rd *r, const char *fmt, ...)
{
	if (r->bad)
		return;
	r->bad = 1;
	int n = snprintf(r->err, r->errlen, "batch byte %zu: ", (size_t)(r->p - r->start));
	va_list ap;
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < r->errlen)
		vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

static uint64_t get_u(struct rd *r)
{
	uint64_t v = 0;
	if (!r->bad && sys_varint_get(&r->p, r->end, &v) < 0)
		fault(r, "a number cut short");
	return r->bad ? 0 : v;
}

static int64_t get_i(struct rd *r)
{
	return sys_unzigzag(get_u(r));
}

/* A number that must be at most max (what it is, for the message). */
static uint64_t get_max(struct rd *r, uint64_t max, const char *what)
{
	uint64_t v = get_u(r);
	if (!r->bad && v > max)
		fault(r, "%s %llu out of range (at most %llu)", what, (unsigned long long)v, (unsigned long long)max);
	return r->bad ? 0 : v;
}

/* A string, NUL-terminated in the decoder's copy of the batch (NULL for a NULL string). */
static const char *get_s(struct rd *r)
{
	uint64_t n = get_u(r);
	if (r->bad || !n)
		return NULL;
	n--;
	if (n > (uint64_t)(r->end - r->p)) {
		fault(r, "a string of %llu bytes past the end", (unsigned long long)n);
		return NULL;
	}
	if (memchr(r->p, 0, n)) {
		fault(r, "a string holds a NUL");
		return NULL;
	}
	/* the copy is one byte longer than the batch: the byte after a string in it is free to be
	 * its NUL, since the decoder has already read that byte's value from the original */
	char *s = r->copy + (r->p - r->start);
	memcpy(s, r->p, n);
	s[n] = 0;
	r->p += n;
	return s;
}

/* A string that must be there (not NULL). */
static const char *get_s_req(struct rd *r, const char *what)
{
	const char *s = get_s(r);
	if (!r->bad && !s)
		fault(r, "%s missing", what);
	return s;
}

static void get_hist(struct rd *r, uint64_t h[STORE_HIST])
{
	unsigned used = (unsigned)get_max(r, STORE_HIST, "histogram length");
	memset(h, 0, STORE_HIST * sizeof *h);
	for (unsigned i = 0; i < used && !r->bad; i++)
		h[i] = get_u(r);
}

static int64_t get_key(struct rd *r, const char *what)
{
	int64_t k = get_i(r);
	if (!r->bad && k <= 0)
		fault(r, "%s key %lld not a row id", what, (long long)k);
	return k;
}

/* A key used: it must have been defined before in this batch. */
static int64_t get_ref(struct rd *r, const struct keyset *defined, const char *what)
{
	int64_t k = get_key(r, what);
	if (!r->bad && !keyset_has(defined, k))
		fault(r, "%s key %lld used before the batch defines it", what, (long long)k);
	return k;
}

#define CALL(fn, ...) (v && v->fn ? v->fn(ctx, __VA_ARGS__) : 0)

/* One walk over the batch: visiting (v set) or only checking (v NULL). */
static int walk(struct rd *r, const struct store_batch_visitor *v, void *ctx)
{
	struct keyset jobs = {0}, procs = {0}, files = {0};
	const char **list = NULL;
	int rc = 0;
	if (r->end - r->p < 5 || memcmp(r->p, STORE_BATCH_MAGIC, 4)) {
		fault(r, "not a node batch (no \"" STORE_BATCH_MAGIC "\")");
		return -EBADMSG;
	}
	if (r->p[4] < STORE_BATCH_VERSION_MIN || r->p[4] > STORE_BATCH_VERSION) {
		fault(r, "batch version %u, this program reads %u to %u", r->p[4], STORE_BATCH_VERSION_MIN,
		      STORE_BATCH_VERSION);
		return -EBADMSG;
	}
	r->p += 5;
	uint64_t seq = get_u(r);
	unsigned version = r->start[4];
	int64_t t_ms = get_i(r), dt_ms = get_i(r), span_ms = dt_ms;
	const char *host = get_s_req(r, "host");
	struct run_ctx run;
	run_ctx_start(&run, t_ms);
	if (!r->bad && (rc = CALL(begin, host, seq, t_ms, dt_ms)))
		goto out;
	for (;;) {
		if (r->bad)
			break;
		uint64_t type = get_u(r);
		if (r->bad || type == R_END)
			break;
		switch (type) {
		case R_SPAN:
			span_ms = get_i(r);
			if (!r->bad && version < 2)
				fault(r, "a span record in a batch of version %u", version);
			else if (!r->bad && span_ms < 0)
				fault(r, "a span of %lld ms", (long long)span_ms);
			break;
		case R_JOB: {
			struct store_job j = {.host = host, .seq = seq};
			j.key = get_key(r, "job");
			j.job = get_s_req(r, "job id");
			j.uid = (uint32_t)get_max(r, UINT32_MAX, "uid");
			j.user = get_s(r);
			j.exe = get_s(r);
			j.jobdir = get_s(r);
			j.start_ms = get_i(r);
			j.end_ms = get_i(r);
			j.running = (int)get_max(r, 1, "running");
			if (!r->bad && keyset_add(&jobs, j.key) < 0)
				rc = -ENOMEM;
			if (!r->bad && !rc)
				rc = CALL(job, &j);
			break;
		}
		case R_SCHED: {
			struct store_job j = {.host = host, .seq = seq};
			j.key = get_ref(r, &jobs, "job");
			j.sched = get_s(r);
			j.sched_name = get_s(r);
			j.sched_state = get_s(r);
			j.sched_nodes = get_s(r);
			j.submit_ms = get_i(r);
			j.sched_start_ms = get_i(r);
			j.sched_end_ms = get_i(r);
			if (!r->bad)
				rc = CALL(sched, &j);
			break;
		}
		case R_PROC: {
			struct store_proc p = {.host = host, .seq = seq};
			p.key = get_key(r, "process");
			p.job_key = get_ref(r, &jobs, "job");
			p.pid = (int32_t)get_i(r);
			p.rank = (int32_t)get_i(r);
			p.start_ns = get_u(r);
			p.start_ticks = get_u(r);
			p.uid = (uint32_t)get_max(r, UINT32_MAX, "uid");
			p.exe = get_s(r);
			p.live_path = get_s(r);
			p.final_path = get_s(r);
			p.start_ms = get_i(r);
			p.end_ms = get_i(r);
			p.state = (enum store_proc_state)get_max(r, STORE_PROC_LOST, "process state");
			if (!r->bad && keyset_add(&procs, p.key) < 0)
				rc = -ENOMEM;
			if (!r->bad && !rc)
				rc = CALL(proc, &p);
			break;
		}
		case R_FILE: {
			int64_t key = get_key(r, "file");
			const char *path = get_s_req(r, "file path");
			if (!r->bad && keyset_add(&files, key) < 0)
				rc = -ENOMEM;
			if (!r->bad && !rc)
				rc = CALL(file, key, path);
			break;
		}
		case R_INTERVAL: {
			struct store_interval iv = {.t_ms = t_ms, .dt_ms = span_ms};
			iv.proc_key = get_ref(r, &procs, "process");
			iv.file_key = get_ref(r, &files, "file");
			iv.layer = (unsigned)get_max(r, LOG_LAYER_MAX, "layer");
			iv.cat = (unsigned)get_max(r, STORE_NCATS - 1, "category");
			iv.bytes = get_i(r);
			iv.calls = get_i(r);
			iv.dur_ns = get_i(r);
			if (!r->bad)
				rc = CALL(interval, &iv);
			break;
		}
		case R_RUN: {
			struct store_run x = {.t_ms = t_ms};
			x.proc_key = (int64_t)((uint64_t)run.proc + (uint64_t)get_i(r));
			if (!r->bad && !keyset_has(&procs, x.proc_key))
				fault(r, "process key %lld used before the batch defines it", (long long)x.proc_key);
			x.file_key = (int64_t)((uint64_t)run.file + (uint64_t)get_i(r));
			if (!r->bad && !keyset_has(&files, x.file_key))
				fault(r, "file key %lld used before the batch defines it", (long long)x.file_key);
			int64_t tid = (int64_t)((uint64_t)run.tid + (uint64_t)get_i(r));
			if (!r->bad && (tid <= 0 || tid > INT32_MAX))
				fault(r, "thread id %lld out of range", (long long)tid);
			x.tid = (int32_t)tid;
			x.idx = run.next_idx + (uint64_t)get_i(r);
			x.layer = (unsigned)get_max(r, LOG_LAYER_MAX, "layer");
			x.op = (unsigned)get_max(r, LOG_NOPS - 1, "op");
			uint64_t off = get_u(r);
			x.offset = off ? (int64_t)((uint64_t)run.expect + (uint64_t)sys_unzigzag(off - 1)) : -1;
			if (!r->bad && off && x.offset < 0)
				fault(r, "run offset %lld", (long long)x.offset);
			x.size = get_u(r);
			x.count = get_u(r);
			if (!r->bad && x.count == 0)
				fault(r, "a run of no calls");
			x.start_ns = (int64_t)((uint64_t)run.end_ns + (uint64_t)get_i(r));
			x.end_ns = (int64_t)((uint64_t)x.start_ns + (uint64_t)get_i(r));
			if (x.count > 1) {
				x.busy_ns = get_u(r);
				x.min_ns = get_u(r);
			} else {
				x.busy_ns = x.min_ns = (uint64_t)(x.end_ns - x.start_ns);
			}
			x.result = get_i(r);
			if (!r->bad) {
				run_ctx_after(&run, &x);
				rc = CALL(run, &x);
			}
			break;
		}
		case R_TOTALS: {
			int64_t key = get_ref(r, &jobs, "job"), bytes[STORE_NCATS], calls[STORE_NCATS];
			for (unsigned c = 0; c < STORE_NCATS; c++) {
				bytes[c] = get_i(r);
				calls[c] = get_i(r);
			}
			if (!r->bad)
				rc = CALL(totals, key, bytes, calls);
			break;
		}
		case R_NODE: {
			struct store_node_sec ns = {.t_ms = t_ms, .dt_ms = dt_ms, .host = host};
			ns.layer = (unsigned)get_max(r, LOG_LAYER_MAX, "layer");
			ns.bytes_read = get_u(r);
			ns.bytes_written = get_u(r);
			ns.reads = get_u(r);
			ns.writes = get_u(r);
			ns.meta_ops = get_u(r);
			get_hist(r, ns.read_hist);
			get_hist(r, ns.write_hist);
			if (!r->bad)
				rc = CALL(node_sec, &ns);
			break;
		}
		case R_DEVICE: {
			struct store_device_sample d = {.t_ms = t_ms, .dt_ms = dt_ms, .host = host};
			d.device = get_s_req(r, "device");
			d.major = (uint32_t)get_max(r, UINT32_MAX, "major");
			d.minor = (uint32_t)get_max(r, UINT32_MAX, "minor");
			uint64_t *f[] = {&d.reads,     &d.reads_merged,    &d.sectors_read, &d.ms_reading, &d.writes,
					 &d.writes_merged, &d.sectors_written, &d.ms_writing,   &d.in_flight,  &d.ms_io,
					 &d.ms_weighted, &d.discards,        &d.sectors_discarded, &d.flushes};
			for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
				*f[i] = get_u(r);
			if (!r->bad)
				rc = CALL(device, &d);
			break;
		}
		case R_SAMPLE: {
			struct store_sample x = {.t_ms = t_ms, .dt_ms = dt_ms, .host = host};
			x.source = get_s_req(r, "sample source");
			x.instance = get_s_req(r, "sample instance");
			x.metric = get_s_req(r, "sample metric");
			x.value = get_i(r);
			x.gauge = (int)get_max(r, 1, "gauge");
			if (!r->bad)
				rc = CALL(sample, &x);
			break;
		}
		case R_DIST: {
			struct store_dist x = {.host = host};
			x.t_ms = get_i(r);
			x.server = get_s_req(r, "server");
			x.op = get_s_req(r, "operation");
			x.requests = get_u(r);
			/* before 3 every request was timed; never more than were made */
			x.timed = version < 3 ? x.requests : get_max(r, x.requests, "timed requests");
			get_hist(r, x.wait);
			get_hist(r, x.service);
			if (!r->bad)
				rc = CALL(dist, &x);
			break;
		}
		case R_REPORT: {
			int64_t key = get_ref(r, &jobs, "job");
			const char *text = get_s_req(r, "report text"), *json = get_s(r);
			if (!r->bad)
				rc = CALL(report, key, text, json);
			break;
		}
		case R_FINDINGS: {
			int64_t key = get_ref(r, &jobs, "job");
			/* each finding takes one byte at least: a count past the end is a lie */
			uint64_t n = get_max(r, (uint64_t)(r->end - r->p), "finding count");
			free(list);
			list = n ? calloc(n, sizeof *list) : NULL;
			if (n && !list) {
				rc = -ENOMEM;
				break;
			}
			for (uint64_t i = 0; i < n && !r->bad; i++)
				list[i] = get_s_req(r, "finding");
			if (!r->bad)
				rc = CALL(findings, key, list, n);
			break;
		}
		default:
			fault(r, "unknown record type %llu", (unsigned long long)type);
		}
		if (rc)
			break;
	}
	if (!r->bad && !rc && r->p != r->end)
		fault(r, "%zu bytes after the end record", (size_t)(r->end - r->p));
out:
	free(list);
	free(jobs.k);
	free(procs.k);
	free(files.k);
	if (rc)
		return rc;
	return r->bad ? -EBADMSG : 0;
}

int store_batch_decode(const void *data, size_t len, const struct store_batch_visitor *v, void *ctx, char *err,
		       size_t errlen)
{
	char dummy[8];
	if (!err || !errlen)
		err = dummy, errlen = sizeof dummy;
	err[0] = 0;
	if (len > STORE_BATCH_MAX) {
		snprintf(err, errlen, "batch of %zu bytes: more than %u", len, STORE_BATCH_MAX);
		return -EBADMSG;
	}
	char *copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	struct rd r = {data, data, (const unsigned char *)data + len, err, errlen, 0, copy};
	int rc = walk(&r, NULL, NULL);
	if (!rc && v) {
		r.p = r.start;
		rc = walk(&r, v, ctx);
	}
	free(copy);
	return rc;
}

int store_batch_peek(const void *data, size_t len, char *host, size_t hostlen, uint64_t *seq)
{
	char err[8], *copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	struct rd r = {data, data, (const unsigned char *)data + len, err, sizeof err, 0, copy};
	int rc = -EBADMSG;
	if (len >= 5 && !memcmp(data, STORE_BATCH_MAGIC, 4) && r.p[4] >= STORE_BATCH_VERSION_MIN &&
	    r.p[4] <= STORE_BATCH_VERSION) {
		r.p += 5;
		*seq = get_u(&r);
		get_i(&r);
		get_i(&r);
		const char *h = get_s_req(&r, "host");
		if (!r.bad && strlen(h) < hostlen) {
			memcpy(host, h, strlen(h) + 1);
			rc = 0;
		}
	}
	free(copy);
	return rc;
}

/* ---------- messages ---------- */

int store_msg_pack(const struct store_batch_ref *v, size_t n, void **out, size_t *len)
{
	char err[128];
	if (log_zstd_load(err, sizeof err) < 0)
		return -ENOTSUP;
	size_t raw = 5 + SYS_VARINT_MAX;
	for (size_t i = 0; i < n; i++)
		raw += SYS_VARINT_MAX + v[i].len;
	unsigned char *p = malloc(raw), *q = p;
	size_t cap = log_zstd_bound(raw);
	void *z = malloc(cap ? cap : 1);
	if (!p || !z) {
		free(p);
		free(z);
		return -ENOMEM;
	}
	memcpy(q, STORE_MSG_MAGIC, 4);
	q[4] = 1;
	q += 5;
	q += sys_varint_put(q, n);
	for (size_t i = 0; i < n; i++) {
		q += sys_varint_put(q, v[i].len);
		memcpy(q, v[i].data, v[i].len);
		q += v[i].len;
	}
	*len = log_zstd_compress(z, cap, p, (size_t)(q - p));
	free(p);
	if (!*len) {
		free(z);
		return -ENOMEM;
	}
	*out = z;
	return 0;
}

int store_msg_unpack(const void *msg, size_t len, int (*fn)(const void *batch, size_t len, void *ctx), void *ctx,
		     char *err, size_t errlen)
{
	void *raw = NULL;
	size_t n = 0;
	int zr = log_zstd_decompress_max(msg, len, STORE_MSG_MAX, &raw, &n, err, errlen);
	if (zr) {
		free(raw);
		if (zr < 0)
			return -ENOTSUP;
		return -EBADMSG;
	}
	const unsigned char *p = raw, *end = p + n;
	uint64_t count = 0;
	int rc = 0;
	if (n < 5 || memcmp(p, STORE_MSG_MAGIC, 4) || p[4] != 1) {
		snprintf(err, errlen, "not a message of node batches (no \"" STORE_MSG_MAGIC "\" 1)");
		rc = -EBADMSG;
		goto out;
	}
	p += 5;
	if (sys_varint_get(&p, end, &count) < 0 || count > (uint64_t)(end - p)) {
		snprintf(err, errlen, "message: a bad batch count");
		rc = -EBADMSG;
		goto out;
	}
	/* the lengths first: a message cut or padded passes nothing on */
	const unsigned char *q = p;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t bl;
		if (sys_varint_get(&q, end, &bl) < 0 || bl > (uint64_t)(end - q)) {
			snprintf(err, errlen, "message: batch %llu of %llu is cut short", (unsigned long long)i + 1,
				 (unsigned long long)count);
			rc = -EBADMSG;
			goto out;
		}
		q += bl;
	}
	if (q != end) {
		snprintf(err, errlen, "message: %zu bytes after its %llu batches", (size_t)(end - q),
			 (unsigned long long)count);
		rc = -EBADMSG;
		goto out;
	}
	for (uint64_t i = 0; i < count && !rc; i++) {
		uint64_t bl = 0;
		sys_varint_get(&p, end, &bl);
		rc = fn(p, (size_t)bl, ctx);
		p += bl;
	}
out:
	free(raw);
	return rc;
}

/* ---------- applying a batch to a store ---------- */

/* The node's keys mapped to the store's: a sorted array per kind (a batch defines each key before
 * its use, so every lookup finds one). */
struct keymap {
	struct kv {
		int64_t from, to;
	} *v;
	size_t n, cap;
};

static int keymap_put(struct keymap *m, int64_t from, int64_t to)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct kv *v = realloc(m->v, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		m->v = v;
		m->cap = cap;
	}
	/* batches define keys mostly in ascending order: insert from the back */
	size_t i = m->n;
	while (i && m->v[i - 1].from > from) {
		m->v[i] = m->v[i - 1];
		i--;
	}
	if (i && m->v[i - 1].from == from) { /* defined again: the later wins */
		memmove(&m->v[i], &m->v[i + 1], (m->n - i) * sizeof *m->v);
		m->v[i - 1].to = to;
		return 0;
	}
	m->v[i] = (struct kv){from, to};
	m->n++;
	return 0;
}

static int kv_before(const void *elem, const void *key)
{
	return ((const struct kv *)elem)->from < *(const int64_t *)key;
}

static int64_t keymap_get(const struct keymap *m, int64_t from)
{
	size_t lo = sys_lower_bound(m->v, m->n, sizeof *m->v, &from, kv_before);
	return lo < m->n && m->v[lo].from == from ? m->v[lo].to : 0;
}

struct apply {
	struct store *s;
	struct keymap jobs, procs, files;
	uint64_t records;
};



static int ap_job(void *ctx, const struct store_job *j)
{
	((struct apply *)ctx)->records++;
	struct apply *a = ctx;
	struct store_job x = *j;
	x.key = 0;
	int r = store_job_put(a->s, &x);
	return r < 0 ? r : keymap_put(&a->jobs, j->key, x.key);
}

static int ap_sched(void *ctx, const struct store_job *j)
{
	((struct apply *)ctx)->records++;
	struct apply *a = ctx;
	struct store_job x = *j;
	x.key = keymap_get(&a->jobs, j->key);
	return store_job_sched_put(a->s, &x);
}

static int ap_proc(void *ctx, const struct store_proc *p)
{
	((struct apply *)ctx)->records++;
	struct apply *a = ctx;
	struct store_proc x = *p;
	x.key = 0;
	x.job_key = keymap_get(&a->jobs, p->job_key);
	int r = store_proc_put(a->s, &x);
	return r < 0 ? r : keymap_put(&a->procs, p->key, x.key);
}

static int ap_file(void *ctx, int64_t key, const char *path)
{
	((struct apply *)ctx)->records++;
	struct apply *a = ctx;
	int64_t to;
	int r = store_file_key(a->s, path, &to);
	return r < 0 ? r : keymap_put(&a->files, key, to);
}

static int ap_interval(void *ctx, const struct store_interval *iv)
{
	((struct apply *)ctx)->records++;
	struct apply *a = ctx;
	struct store_interval x = *iv;
	x.proc_key = keymap_get(&a->procs, iv->proc_key);
	x.file_key = keymap_get(&a->files, iv->file_key);
	return store_interval_add(a->s, &x);
}

static int ap_run(void *ctx, const struct store_run *x)
{
	((struct apply *)ctx)->records++;
	struct apply *a = ctx;
	struct store_run y = *x;
	y.proc_key = keymap_get(&a->procs, x->proc_key);
	y.file_key = keymap_get(&a->files, x->file_key);
	return store_run_add(a->s, &y);
}

static int ap_totals(void *ctx, int64_t job_key, const int64_t bytes[STORE_NCATS], const int64_t calls[STORE_NCATS])
{
	((struct apply *)ctx)->records++;
	struct apply *a = ctx;
	return store_job_totals_add(a->s, keymap_get(&a->jobs, job_key), bytes, calls);
}

static int ap_node_sec(void *ctx, const struct store_node_sec *ns)
{
	((struct apply *)ctx)->records++;
	return store_node_sec_add(((struct apply *)ctx)->s, ns);
}

static int ap_device(void *ctx, const struct store_device_sample *d)
{
	((struct apply *)ctx)->records++;
	return store_device_add(((struct apply *)ctx)->s, d);
}

static int ap_sample(void *ctx, const struct store_sample *x)
{
	((struct apply *)ctx)->records++;
	return store_sample_add(((struct apply *)ctx)->s, x);
}

static int ap_dist(void *ctx, const struct store_dist *x)
{
	((struct apply *)ctx)->records++;
	return store_dist_add(((struct apply *)ctx)->s, x);
}

static int ap_report(void *ctx, int64_t job_key, const char *text, const char *json)
{
	((struct apply *)ctx)->records++;
	struct apply *a = ctx;
	return store_job_report_put(a->s, keymap_get(&a->jobs, job_key), text, json);
}

static int ap_findings(void *ctx, int64_t job_key, const char *const *findings, size_t n)
{
	((struct apply *)ctx)->records++;
	struct apply *a = ctx;
	return store_job_findings_put(a->s, keymap_get(&a->jobs, job_key), findings, n);
}

int store_batch_apply(struct store *s, const void *data, size_t len, uint64_t *records, char *err, size_t errlen)
{
	static const struct store_batch_visitor v = {
		.job = ap_job, .sched = ap_sched, .proc = ap_proc, .file = ap_file, .interval = ap_interval,
		.totals = ap_totals, .node_sec = ap_node_sec, .device = ap_device, .sample = ap_sample,
		.dist = ap_dist, .report = ap_report, .findings = ap_findings, .run = ap_run,
	};
	struct apply a = {.s = s};
	int r = store_batch_decode(data, len, &v, &a, err, errlen);
	if (records)
		*records = r == 0 ? a.records : 0;
	if (r < 0 && r != -EBADMSG && err && errlen)
		snprintf(err, errlen, "%s", store_error(s));
	free(a.jobs.v);
	free(a.procs.v);
	free(a.files.v);
	return r;
}
