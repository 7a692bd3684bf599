/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus sink (sink.h; docs/DAEMON.md, "Prometheus"): each committed interval's batch is
 * added to counters in memory, and an HTTP server (libmicrohttpd, in its own thread) answers
 * GET /metrics with them in the text exposition format 0.0.4, named as node_exporter names its
 * own (iostrata_ prefix, _bytes_total, _seconds_total). Counters start at zero with the daemon:
 * Prometheus takes the restart as a counter reset. A job's series exist while it runs, for at
 * most prometheus_max_jobs jobs at once. Nothing is kept of the past and nothing is sent: a
 * scrape reads what the committed intervals added up to.
 *
 * The daemon's loop and the server thread share the figures under one mutex, which the loop
 * holds while it adds one batch and the server while it formats the text into memory; a slow or
 * stalled scraper holds nothing (libmicrohttpd sends the finished text). The server starts at
 * the first committed interval, not in the constructor: the daemon forks to detach after its
 * sinks are made, and a thread does not survive a fork; the listening socket, made in the
 * constructor, does, so a bad or busy address still stops the daemon at its start.
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "daemon/prom.h"
#include "daemon/sink.h"
#include "iostrata/format.h"
#include "store/batch.h"

/* Every metric family: its name, its type, the divisor that turns the unit it is counted in into
 * the unit shown (ms and ns become seconds, exactly, in decimal), and its HELP text. */
#define PROM_FAMILIES(X)                                                                                            \
	X(LAYER_READ_BYTES, "iostrata_layer_read_bytes_total", 0, 1,                                                \
	  "Bytes read through an I/O layer by the node's monitored processes.")                                     \
	X(LAYER_WRITTEN_BYTES, "iostrata_layer_written_bytes_total", 0, 1,                                          \
	  "Bytes written through an I/O layer by the node's monitored processes.")                                  \
	X(LAYER_OPS, "iostrata_layer_operations_total", 0, 1,                                                       \
	  "Calls through an I/O layer by the node's monitored processes, by operation (read, write, metadata).")    \
	X(DEV_READS, "iostrata_device_reads_completed_total", 0, 1, "Reads a block device completed (/proc/diskstats).") \
	X(DEV_READS_MERGED, "iostrata_device_reads_merged_total", 0, 1, "Reads a block device merged.")             \
	X(DEV_READ_BYTES, "iostrata_device_read_bytes_total", 0, 1, "Bytes a block device read (512-byte sectors).") \
	X(DEV_READ_TIME, "iostrata_device_read_time_seconds_total", 0, 1000, "Time a block device spent on reads.")  \
	X(DEV_WRITES, "iostrata_device_writes_completed_total", 0, 1, "Writes a block device completed.")           \
	X(DEV_WRITES_MERGED, "iostrata_device_writes_merged_total", 0, 1, "Writes a block device merged.")          \
	X(DEV_WRITTEN_BYTES, "iostrata_device_written_bytes_total", 0, 1,                                           \
	  "Bytes a block device wrote (512-byte sectors).")                                                         \
	X(DEV_WRITE_TIME, "iostrata_device_write_time_seconds_total", 0, 1000, "Time a block device spent on writes.") \
	X(DEV_IO_NOW, "iostrata_device_io_now", 1, 1, "Requests in flight on a block device at the last reading.")  \
	X(DEV_IO_TIME, "iostrata_device_io_time_seconds_total", 0, 1000, "Time a block device had requests in flight.") \
	X(DEV_IO_WEIGHTED, "iostrata_device_io_time_weighted_seconds_total", 0, 1000,                               \
	  "Time a block device had requests in flight, times their number.")                                        \
	X(DEV_DISCARDS, "iostrata_device_discards_completed_total", 0, 1, "Discards a block device completed.")     \
	X(DEV_DISCARDED_BYTES, "iostrata_device_discarded_bytes_total", 0, 1, "Bytes a block device discarded.")    \
	X(DEV_FLUSHES, "iostrata_device_flush_requests_total", 0, 1, "Flushes a block device completed.")           \
	X(FS_OPS, "iostrata_fs_operations_total", 0, 1,                                                             \
	  "Requests the kernel layer saw per mounted file system, by operation (iostrata kernel --pin).")           \
	X(FS_BYTES, "iostrata_fs_bytes_total", 0, 1, "Bytes of the kernel layer's requests per file system.")       \
	X(FS_TIME, "iostrata_fs_time_seconds_total", 0, 1000000000,                                                 \
	  "Time of the kernel layer's requests per file system.")                                                   \
	X(FS_ERRORS, "iostrata_fs_errors_total", 0, 1, "Kernel layer requests per file system that failed.")        \
	X(SAMPLE_COUNTER, "iostrata_sample_total", 0, 1,                                                            \
	  "A sampler's counter (NFS, Lustre, NVMe, kernel), its differences summed since the daemon started.")      \
	X(SAMPLE_GAUGE, "iostrata_sample", 1, 1, "A sampler's gauge (NFS, Lustre, NVMe, kernel) as last read.")    \
	X(SERVER_REQUESTS, "iostrata_server_requests_total", 0, 1,                                                  \
	  "Requests of a server-side wait/service distribution (a block device, a mount monitor), by operation.")   \
	X(SERVER_TIMED, "iostrata_server_requests_timed_total", 0, 1,                                               \
	  "Of those, the requests whose wait and service times the distribution holds (sampled at the default depth).") \
	X(JOB_READ_BYTES, "iostrata_job_read_bytes_total", 0, 1,                                                    \
	  "Bytes a running job read through its user layers (POSIX, stdio) on this node.")                          \
	X(JOB_WRITTEN_BYTES, "iostrata_job_written_bytes_total", 0, 1,                                              \
	  "Bytes a running job wrote through its user layers (POSIX, stdio) on this node.")                         \
	X(JOB_OPS, "iostrata_job_operations_total", 0, 1,                                                           \
	  "Calls of a running job through its user layers on this node, by operation (read, write, metadata).")     \
	X(JOBS_RUNNING, "iostrata_jobs_running", 1, 1, "Jobs running on the node at the last interval.")            \
	X(JOB_DROPPED, "iostrata_job_series_dropped_total", 0, 1,                                                   \
	  "Running jobs given no series because prometheus_max_jobs other running jobs had them.")                  \
	X(INTERVALS, "iostrata_intervals_total", 0, 1, "Intervals the daemon stored (committed batches).")          \
	X(BATCH_BYTES, "iostrata_batch_bytes_total", 0, 1, "Bytes of the committed intervals' node batches.")       \
	X(BATCH_SEQ, "iostrata_batch_sequence", 1, 1, "Sequence number of the last committed batch.")               \
	X(LAST_INTERVAL, "iostrata_last_interval_timestamp_seconds", 1, 1000,                                       \
	  "When the last committed interval ended (Unix time).")                                                    \
	X(ROWS, "iostrata_interval_rows_total", 0, 1,                                                               \
	  "Rows of interval statistics stored (process, file, layer, category).")                                   \
	X(BAD_BATCHES, "iostrata_batch_errors_total", 0, 1, "Committed batches this exporter could not read.")

enum prom_family {
#define X(id, name, gauge, div, help) PF_##id,
	PROM_FAMILIES(X)
#undef X
	PF_COUNT
};

static const struct {
	const char *name, *help;
	int gauge;
	int64_t div;
} family_def[PF_COUNT] = {
#define X(id, name, gauge, div, help) {name, help, gauge, div},
	PROM_FAMILIES(X)
#undef X
};

/* One series: its labels as exposed ("{a=\"x\"}", or "" for none) and its value in the family's
 * counting unit. A family's series are kept sorted by their labels. */
struct series {
	char *labels;
	int64_t value;
};

struct family {
	struct series *v;
	size_t n, cap;
};

/* A job seen running: its key in the node's store, its labels (job_id="...",user="..." without
 * braces; not "job": Prometheus gives every series of a target its own job and instance labels),
 * whether it has series (within prometheus_max_jobs), whether this batch ended it. */
struct pjob {
	int64_t key;
	char *labels;
	int exposed, ending;
};

struct psink {
	struct dmn_sink base;
	int listen_fd;
	struct MHD_Daemon *mhd;
	int start_failed;
	uint32_t max_jobs;
	pthread_mutex_t lock; /* everything below */
	struct family fam[PF_COUNT];
	struct pjob *jobs; /* sorted by key */
	size_t njobs, capjobs, nexposed;
};

/* ---- a growing string ---- */
struct buf {
	char *p;
	size_t n, cap;
	int oom;
};

static void buf_put(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p, b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void buf_puts(struct buf *b, const char *s)
{
	buf_put(b, s, strlen(s));
}

/* key="value", the value escaped as the text format wants: backslash, double quote, line feed. */
static void buf_label(struct buf *b, const char *key, const char *value)
{
	if (b->n && b->p[b->n - 1] != '{')
		buf_put(b, ",", 1);
	buf_puts(b, key);
	buf_put(b, "=\"", 2);
	for (const char *s = value ? value : ""; *s; s++) {
		if (*s == '\\')
			buf_put(b, "\\\\", 2);
		else if (*s == '"')
			buf_put(b, "\\\"", 2);
		else if (*s == '\n')
			buf_put(b, "\\n", 2);
		else
			buf_put(b, s, 1);
	}
	buf_put(b, "\"", 1);
}

/* A value in its family's unit, shown divided by div: exact decimals (ms -> 0.001 s). */
static void buf_value(struct buf *b, int64_t v, int64_t div)
{
	char s[48];
	if (div == 1) {
		snprintf(s, sizeof s, "%" PRId64, v);
	} else {
		uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
		int digits = 0;
		for (int64_t d = div; d > 1; d /= 10)
			digits++;
		snprintf(s, sizeof s, "%s%" PRIu64 ".%0*" PRIu64, v < 0 ? "-" : "", u / (uint64_t)div, digits,
			 u % (uint64_t)div);
	}
	buf_puts(b, s);
}

/* ---- series ---- */

/* The series of f with these labels, or NULL and where it would go (*at). */
static struct series *series_find(const struct family *f, const char *labels, size_t *at)
{
	size_t lo = 0, hi = f->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(f->v[mid].labels, labels);
		if (!c)
			return &f->v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return NULL;
}

/* The series of f with these labels, made (at 0) when missing: NULL when out of memory. */
static struct series *series_get(struct family *f, const char *labels)
{
	size_t lo = 0;
	struct series *x = series_find(f, labels, &lo);
	if (x)
		return x;
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 16;
		struct series *v = realloc(f->v, cap * sizeof *v);
		if (!v)
			return NULL;
		f->v = v, f->cap = cap;
	}
	char *copy = strdup(labels);
	if (!copy)
		return NULL;
	memmove(&f->v[lo + 1], &f->v[lo], (f->n - lo) * sizeof *f->v);
	f->v[lo] = (struct series){copy, 0};
	f->n++;
	return &f->v[lo];
}

static void series_del(struct family *f, const char *labels)
{
	size_t at;
	struct series *x = series_find(f, labels, &at);
	if (!x)
		return;
	size_t i = (size_t)(x - f->v);
	free(x->labels);
	memmove(&f->v[i], &f->v[i + 1], (f->n - i - 1) * sizeof *f->v);
	f->n--;
}

/* Adds delta to a series (a gauge: sets it). Out of memory, the figure is lost: a scrape never
 * fails for it, and the daemon's own store has it. */
static void series_add(struct psink *ps, enum prom_family id, const struct buf *labels, int64_t delta)
{
	if (labels->oom)
		return;
	struct series *x = series_get(&ps->fam[id], labels->n ? labels->p : "");
	if (!x)
		return;
	if (family_def[id].gauge)
		x->value = delta;
	else
		x->value += delta;
}

/* Labels "{k1=\"v1\",...}" from NULL-terminated key, value pairs, into b (emptied first). */
static const struct buf *labels_of(struct buf *b, ...)
{
	va_list ap;
	b->n = 0;
	if (b->p)
		b->p[0] = 0;
	buf_put(b, "{", 1);
	va_start(ap, b);
	for (const char *k; (k = va_arg(ap, const char *));)
		buf_label(b, k, va_arg(ap, const char *));
	va_end(ap);
	buf_put(b, "}", 1);
	return b;
}

/* ---- jobs ---- */

static struct pjob *job_find(struct psink *ps, int64_t key, size_t *at)
{
	size_t lo = 0, hi = ps->njobs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ps->jobs[mid].key == key)
			return &ps->jobs[mid];
		if (ps->jobs[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return NULL;
}

/* The labels of one of a job's series: {job_id=...,user=...}, with operation=... when given. */
static const struct buf *job_labels(struct buf *b, const struct pjob *j, const char *op)
{
	b->n = 0;
	buf_put(b, "{", 1);
	buf_puts(b, j->labels);
	if (op)
		buf_label(b, "operation", op);
	buf_put(b, "}", 1);
	return b;
}

static void job_series(struct psink *ps, const struct pjob *j, int del)
{
	struct buf b = {0};
	static const enum prom_family fams[] = {PF_JOB_READ_BYTES, PF_JOB_WRITTEN_BYTES};
	for (unsigned i = 0; i < 2; i++) {
		job_labels(&b, j, NULL);
		if (b.oom)
			continue;
		if (del)
			series_del(&ps->fam[fams[i]], b.p);
		else
			series_add(ps, fams[i], &b, 0);
	}
	for (unsigned c = 0; c < STORE_NCATS; c++) {
		job_labels(&b, j, store_cat_name(c));
		if (b.oom)
			continue;
		if (del)
			series_del(&ps->fam[PF_JOB_OPS], b.p);
		else
			series_add(ps, PF_JOB_OPS, &b, 0);
	}
	free(b.p);
}

/* ---- the batch visitor ---- */

static int v_begin(void *ctx, const char *host, uint64_t seq, int64_t t_ms, int64_t dt_ms)
{
	struct psink *ps = ctx;
	(void)host, (void)dt_ms;
	struct buf none = {0};
	series_add(ps, PF_BATCH_SEQ, &none, (int64_t)seq);
	series_add(ps, PF_LAST_INTERVAL, &none, t_ms);
	return 0;
}

static int v_job(void *ctx, const struct store_job *j)
{
	struct psink *ps = ctx;
	size_t at = 0;
	struct pjob *pj = job_find(ps, j->key, &at);
	/* an ending job's place is free at once (its series leave after the batch, before a scrape
	 * can see both): a job starting in the same batch takes it */
	if (!j->running) {
		if (pj && !pj->ending && pj->exposed)
			ps->nexposed--;
		if (pj)
			pj->ending = 1;
		return 0;
	}
	if (pj) {
		if (pj->ending && pj->exposed)
			ps->nexposed++;
		pj->ending = 0;
		return 0;
	}
	struct buf b = {0};
	char uid[16];
	snprintf(uid, sizeof uid, "%u", (unsigned)j->uid);
	buf_label(&b, "job_id", j->job);
	buf_label(&b, "user", j->user && *j->user ? j->user : uid);
	if (b.oom) {
		free(b.p);
		return 0;
	}
	if (ps->njobs == ps->capjobs) {
		size_t cap = ps->capjobs ? ps->capjobs * 2 : 64;
		struct pjob *v = realloc(ps->jobs, cap * sizeof *v);
		if (!v) {
			free(b.p);
			return 0;
		}
		ps->jobs = v, ps->capjobs = cap;
	}
	struct pjob *v = ps->jobs;
	memmove(&v[at + 1], &v[at], (ps->njobs - at) * sizeof *v);
	v[at] = (struct pjob){.key = j->key, .labels = b.p, .exposed = ps->nexposed < ps->max_jobs};
	ps->njobs++;
	if (v[at].exposed) {
		ps->nexposed++;
		job_series(ps, &v[at], 0);
	} else {
		struct buf none = {0};
		series_add(ps, PF_JOB_DROPPED, &none, 1);
	}
	return 0;
}

static int v_totals(void *ctx, int64_t job_key, const int64_t bytes[STORE_NCATS], const int64_t calls[STORE_NCATS])
{
	struct psink *ps = ctx;
	size_t at;
	struct pjob *pj = job_find(ps, job_key, &at);
	if (!pj || !pj->exposed)
		return 0;
	struct buf b = {0};
	series_add(ps, PF_JOB_READ_BYTES, job_labels(&b, pj, NULL), bytes[STORE_CAT_READ]);
	series_add(ps, PF_JOB_WRITTEN_BYTES, job_labels(&b, pj, NULL), bytes[STORE_CAT_WRITE]);
	for (unsigned c = 0; c < STORE_NCATS; c++)
		series_add(ps, PF_JOB_OPS, job_labels(&b, pj, store_cat_name(c)), calls[c]);
	free(b.p);
	return 0;
}

static int v_interval(void *ctx, const struct store_interval *iv)
{
	struct psink *ps = ctx;
	(void)iv;
	struct buf none = {0};
	series_add(ps, PF_ROWS, &none, 1);
	return 0;
}

static int v_node_sec(void *ctx, const struct store_node_sec *ns)
{
	struct psink *ps = ctx;
	const char *layer = log_layer_name(ns->layer);
	struct buf b = {0};
	series_add(ps, PF_LAYER_READ_BYTES, labels_of(&b, "layer", layer, NULL), (int64_t)ns->bytes_read);
	series_add(ps, PF_LAYER_WRITTEN_BYTES, labels_of(&b, "layer", layer, NULL), (int64_t)ns->bytes_written);
	series_add(ps, PF_LAYER_OPS, labels_of(&b, "layer", layer, "operation", "read", NULL), (int64_t)ns->reads);
	series_add(ps, PF_LAYER_OPS, labels_of(&b, "layer", layer, "operation", "write", NULL), (int64_t)ns->writes);
	series_add(ps, PF_LAYER_OPS, labels_of(&b, "layer", layer, "operation", "metadata", NULL),
		   (int64_t)ns->meta_ops);
	free(b.p);
	return 0;
}

static int v_device(void *ctx, const struct store_device_sample *d)
{
	struct psink *ps = ctx;
	struct buf b = {0};
	labels_of(&b, "device", d->device, NULL);
	const struct {
		enum prom_family id;
		uint64_t v;
	} f[] = {
		{PF_DEV_READS, d->reads}, {PF_DEV_READS_MERGED, d->reads_merged},
		{PF_DEV_READ_BYTES, d->sectors_read * 512}, {PF_DEV_READ_TIME, d->ms_reading},
		{PF_DEV_WRITES, d->writes}, {PF_DEV_WRITES_MERGED, d->writes_merged},
		{PF_DEV_WRITTEN_BYTES, d->sectors_written * 512}, {PF_DEV_WRITE_TIME, d->ms_writing},
		{PF_DEV_IO_NOW, d->in_flight}, {PF_DEV_IO_TIME, d->ms_io}, {PF_DEV_IO_WEIGHTED, d->ms_weighted},
		{PF_DEV_DISCARDS, d->discards}, {PF_DEV_DISCARDED_BYTES, d->sectors_discarded * 512},
		{PF_DEV_FLUSHES, d->flushes},
	};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		series_add(ps, f[i].id, &b, (int64_t)f[i].v);
	free(b.p);
	return 0;
}

/* The kernel sampler's per-file-system figures (instance "FSTYPE MOUNT", metric
 * "OP.SIZE.WHAT"): summed over the size buckets into their own families, with fstype, mount and
 * operation labels. 1 when x was one of them. */
static int fs_sample(struct psink *ps, const struct store_sample *x)
{
	static const struct {
		const char *what;
		enum prom_family id;
	} whats[] = {{"count", PF_FS_OPS}, {"bytes", PF_FS_BYTES}, {"time_ns", PF_FS_TIME}, {"errors", PF_FS_ERRORS}};
	const char *sp = strchr(x->instance, ' '), *dot = strchr(x->metric, '.'), *last = strrchr(x->metric, '.');
	if (strcmp(x->source, "kernel") || x->gauge || !sp || sp == x->instance || !strncmp(x->instance, "? ", 2) ||
	    !dot || dot == last)
		return 0;
	for (size_t i = 0; i < sizeof whats / sizeof whats[0]; i++) {
		if (strcmp(last + 1, whats[i].what))
			continue;
		char fstype[64], op[64];
		snprintf(fstype, sizeof fstype, "%.*s", (int)(sp - x->instance), x->instance);
		snprintf(op, sizeof op, "%.*s", (int)(dot - x->metric), x->metric);
		struct buf b = {0};
		series_add(ps, whats[i].id, labels_of(&b, "fstype", fstype, "mount", sp + 1, "operation", op, NULL),
			   x->value);
		free(b.p);
		return 1;
	}
	return 0;
}

static int v_sample(void *ctx, const struct store_sample *x)
{
	struct psink *ps = ctx;
	/* a counter's difference below zero is a source that started again: nothing to add */
	if (!x->gauge && x->value < 0)
		return 0;
	if (fs_sample(ps, x))
		return 0;
	struct buf b = {0};
	labels_of(&b, "source", x->source, "object", x->instance, "metric", x->metric, NULL);
	series_add(ps, x->gauge ? PF_SAMPLE_GAUGE : PF_SAMPLE_COUNTER, &b, x->value);
	free(b.p);
	return 0;
}

static int v_dist(void *ctx, const struct store_dist *x)
{
	struct psink *ps = ctx;
	struct buf b = {0};
	labels_of(&b, "server", x->server, "operation", x->op, NULL);
	series_add(ps, PF_SERVER_REQUESTS, &b, (int64_t)x->requests);
	series_add(ps, PF_SERVER_TIMED, &b, (int64_t)x->timed);
	free(b.p);
	return 0;
}

static const struct store_batch_visitor visitor = {
	.begin = v_begin, .job = v_job, .interval = v_interval, .totals = v_totals, .node_sec = v_node_sec,
	.device = v_device, .sample = v_sample, .dist = v_dist,
};

/* ---- the exposition ---- */

static char *render(struct psink *ps, size_t *len)
{
	struct buf b = {0};
	for (unsigned f = 0; f < PF_COUNT; f++) {
		const struct family *fam = &ps->fam[f];
		if (!fam->n)
			continue;
		buf_puts(&b, "# HELP ");
		buf_puts(&b, family_def[f].name);
		buf_puts(&b, " ");
		buf_puts(&b, family_def[f].help);
		buf_puts(&b, "\n# TYPE ");
		buf_puts(&b, family_def[f].name);
		buf_puts(&b, family_def[f].gauge ? " gauge\n" : " counter\n");
		for (size_t i = 0; i < fam->n; i++) {
			buf_puts(&b, family_def[f].name);
			buf_puts(&b, fam->v[i].labels);
			buf_puts(&b, " ");
			buf_value(&b, fam->v[i].value, family_def[f].div);
			buf_puts(&b, "\n");
		}
	}
	if (b.oom || !b.p) {
		free(b.p);
		return NULL;
	}
	*len = b.n;
	return b.p;
}

char *dmn_prom_text(struct dmn_sink *s, size_t *len)
{
	struct psink *ps = s->impl;
	pthread_mutex_lock(&ps->lock);
	char *text = render(ps, len);
	pthread_mutex_unlock(&ps->lock);
	return text;
}

/* ---- the HTTP server ---- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* One request: GET (or HEAD) /metrics; 405 for another method, 404 for another path. A request
 * with a body is answered at its first call, before the body is read. */
static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_len, void **req)
{
	struct psink *ps = cls;
	(void)version, (void)upload, (void)upload_len, (void)req;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: GET /metrics\n");
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, "not found: GET /metrics\n");
	size_t len = 0;
	char *text = dmn_prom_text(&ps->base, &len);
	if (!text)
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, DMN_PROM_CONTENT_TYPE);
	enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* Scrapers at once (Prometheus uses one kept-alive connection; a pair of them, two), how long an
 * idle or stalled connection is kept, and the memory of one request's headers. */
#define PROM_CONNECTIONS 16
#define PROM_TIMEOUT_S 10
#define PROM_REQUEST_MEMORY (16u << 10)

static void server_start(struct psink *ps)
{
	ps->mhd = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD, 0, NULL, NULL, answer, ps, MHD_OPTION_LISTEN_SOCKET,
				   ps->listen_fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned)PROM_CONNECTIONS,
				   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)PROM_TIMEOUT_S,
				   MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)PROM_REQUEST_MEMORY, MHD_OPTION_END);
	if (!ps->mhd) {
		ps->start_failed = 1;
		fprintf(stderr, "iostratad: prometheus: the HTTP server did not start; /metrics is not served\n");
	}
}

/* ---- the sink ---- */

static void prom_committed(struct dmn_sink *s, const void *data, size_t len)
{
	struct psink *ps = s->impl;
	char err[256];
	if (!ps->mhd && !ps->start_failed && ps->listen_fd >= 0)
		server_start(ps);
	pthread_mutex_lock(&ps->lock);
	struct buf none = {0};
	if (store_batch_decode(data, len, &visitor, ps, err, sizeof err) < 0) {
		series_add(ps, PF_BAD_BATCHES, &none, 1);
	} else {
		series_add(ps, PF_INTERVALS, &none, 1);
		series_add(ps, PF_BATCH_BYTES, &none, (int64_t)len);
	}
	/* the jobs this batch ended leave, with their series */
	size_t w = 0;
	for (size_t i = 0; i < ps->njobs; i++) {
		struct pjob *j = &ps->jobs[i];
		if (!j->ending) {
			ps->jobs[w++] = *j;
			continue;
		}
		if (j->exposed)
			job_series(ps, j, 1);
		free(j->labels);
	}
	ps->njobs = w;
	series_add(ps, PF_JOBS_RUNNING, &none, (int64_t)ps->njobs);
	pthread_mutex_unlock(&ps->lock);
}

static void prom_free(struct dmn_sink *s)
{
	struct psink *ps = s->impl;
	/* a started server owns the listening socket: MHD_stop_daemon closes it */
	if (ps->mhd)
		MHD_stop_daemon(ps->mhd);
	else if (ps->listen_fd >= 0)
		close(ps->listen_fd);
	for (unsigned f = 0; f < PF_COUNT; f++) {
		for (size_t i = 0; i < ps->fam[f].n; i++)
			free(ps->fam[f].v[i].labels);
		free(ps->fam[f].v);
	}
	for (size_t i = 0; i < ps->njobs; i++)
		free(ps->jobs[i].labels);
	free(ps->jobs);
	pthread_mutex_destroy(&ps->lock);
	free(ps);
}

/* "ADDR:PORT" ("[V6]:PORT" too) -> a listening TCP socket: the fd, or -errno with err. */
static int listen_on(const char *spec, char *err, size_t errlen)
{
	char host[256];
	const char *colon = strrchr(spec, ':');
	if (!colon || colon == spec || !colon[1] || (size_t)(colon - spec) >= sizeof host) {
		snprintf(err, errlen, "prometheus = %s: expected ADDR:PORT (127.0.0.1:9464)", spec);
		return -EINVAL;
	}
	snprintf(host, sizeof host, "%.*s", (int)(colon - spec), spec);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = 0;
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV}, *res;
	int g = getaddrinfo(host, colon + 1, &hints, &res);
	if (g) {
		snprintf(err, errlen, "prometheus = %s: %s", spec, gai_strerror(g));
		return -EINVAL;
	}
	int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), e = 0, one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 64) < 0) {
		e = errno;
		snprintf(err, errlen, "prometheus = %s: %s", spec, strerror(e));
		if (fd >= 0)
			close(fd);
		fd = -e;
	}
	freeaddrinfo(res);
	return fd;
}

struct dmn_sink *dmn_sink_prom_new(const struct dmn_config *cfg, const char *host, char *err, size_t errlen)
{
	(void)host; /* Prometheus gives every series its target's instance label */
	struct psink *ps = calloc(1, sizeof *ps);
	if (!ps) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ps->listen_fd = -1;
	pthread_mutex_init(&ps->lock, NULL);
	ps->max_jobs = cfg->prometheus_max_jobs;
	ps->base = (struct dmn_sink){
		.name = "prometheus", .spool = DMN_SPOOL_NONE, .committed = prom_committed, .free = prom_free, .impl = ps,
	};
	/* every layer's series from the start, at 0: a first interval's bytes are then an increase */
	struct buf b = {0};
	static const char *const ops[] = {"read", "write", "metadata"};
	for (unsigned l = 1; l <= LOG_LAYER_MAX; l++) {
		const char *layer = log_layer_name(l);
		series_add(ps, PF_LAYER_READ_BYTES, labels_of(&b, "layer", layer, NULL), 0);
		series_add(ps, PF_LAYER_WRITTEN_BYTES, labels_of(&b, "layer", layer, NULL), 0);
		for (unsigned o = 0; o < 3; o++)
			series_add(ps, PF_LAYER_OPS, labels_of(&b, "layer", layer, "operation", ops[o], NULL), 0);
	}
	free(b.p);
	struct buf none = {0};
	series_add(ps, PF_INTERVALS, &none, 0);
	series_add(ps, PF_JOBS_RUNNING, &none, 0);
	series_add(ps, PF_JOB_DROPPED, &none, 0);
	series_add(ps, PF_BAD_BATCHES, &none, 0);
	if (cfg->prometheus[0] && (ps->listen_fd = listen_on(cfg->prometheus, err, errlen)) < 0) {
		ps->listen_fd = -1;
		prom_free(&ps->base);
		return NULL;
	}
	return &ps->base;
}
