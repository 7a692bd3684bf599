/* SPDX-License-Identifier: MIT */
/*
 * store.h's calls, dispatched to the backend the URL chose (backend.h): "sqlite:PATH" or a path
 * is the embedded store (sqlite.c); "postgresql://..." the facility's (pg.c). What every backend
 * shares (category names, URL parsing) lives here too.
 */
#include "store/backend.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/zstd.h"

#define OPS(s) (*(const struct store_ops *const *)(s))

const char *store_cat_name(unsigned cat)
{
	static const char *const names[] = {"read", "write", "metadata"};
	return cat < STORE_NCATS ? names[cat] : "?";
}

void store_hist_text(char *buf, size_t len, const uint64_t *h)
{
	unsigned used = store_hist_used(h);
	size_t n = 0;
	buf[0] = 0;
	for (unsigned b = 0; b < used && n < len; b++)
		n += (size_t)snprintf(buf + n, len - n, "%s%" PRIu64, b ? "," : "", h[b]);
}

void store_hist_parse(const char *t, uint64_t *h)
{
	memset(h, 0, STORE_HIST * sizeof *h);
	for (int b = 0; t && *t && b < STORE_HIST; b++) {
		char *end;
		h[b] = strtoull(t, &end, 10);
		if (*end != ',')
			break;
		t = end + 1;
	}
}

static int is_pg_url(const char *url)
{
	return !strncmp(url, "postgresql://", 13) || !strncmp(url, "postgres://", 11);
}

/* An SQLite file's path (callers find its directory with it); a server's URL has none. */
int store_url_path(const char *url, char *buf, size_t len)
{
	const char *p = url;
	if (!strncmp(url, "sqlite:", 7))
		p = url + 7;
	else if (strstr(url, "://"))
		return -EPROTONOSUPPORT;
	if (!*p || strlen(p) >= len)
		return -EINVAL;
	snprintf(buf, len, "%s", p);
	return 0;
}

int store_open(const char *url, unsigned flags, struct store **out, char *err, size_t errlen)
{
	if (is_pg_url(url))
		return store_pg_open(url, flags, out, err, errlen);
	if (strstr(url, "://")) {
		*out = NULL;
		snprintf(err, errlen, "%.*s: not a store this build reads (sqlite:PATH, a path or postgresql://...)",
			 (int)(strstr(url, "://") - url), url);
		return -EPROTONOSUPPORT;
	}
	return store_sqlite_open(url, flags, out, err, errlen);
}

void store_close(struct store *s)
{
	if (s)
		OPS(s)->close(s);
}

const char *store_error(const struct store *s)
{
	return s ? OPS(s)->error(s) : "no store";
}

int store_begin(struct store *s) { return OPS(s)->begin(s); }
int store_commit(struct store *s) { return OPS(s)->commit(s); }
void store_rollback(struct store *s) { OPS(s)->rollback(s); }
int store_job_put(struct store *s, struct store_job *j) { return OPS(s)->job_put(s, j); }
int store_proc_put(struct store *s, struct store_proc *p) { return OPS(s)->proc_put(s, p); }
int store_file_key(struct store *s, const char *path, int64_t *key) { return OPS(s)->file_key(s, path, key); }
int store_interval_add(struct store *s, const struct store_interval *iv) { return OPS(s)->interval_add(s, iv); }

int store_intervals_add(struct store *s, const struct store_interval *v, size_t n)
{
	if (OPS(s)->intervals_add)
		return OPS(s)->intervals_add(s, v, n);
	int r = 0;
	for (size_t i = 0; i < n && r >= 0; i++)
		r = OPS(s)->interval_add(s, &v[i]);
	return r;
}

int store_job_totals_add(struct store *s, int64_t job_key, const int64_t bytes[STORE_NCATS],
			 const int64_t calls[STORE_NCATS])
{
	return OPS(s)->job_totals_add(s, job_key, bytes, calls);
}

int store_node_sec_add(struct store *s, const struct store_node_sec *ns) { return OPS(s)->node_sec_add(s, ns); }
int store_device_add(struct store *s, const struct store_device_sample *d) { return OPS(s)->device_add(s, d); }
int store_sample_add(struct store *s, const struct store_sample *x) { return OPS(s)->sample_add(s, x); }
int store_dist_add(struct store *s, const struct store_dist *x) { return OPS(s)->dist_add(s, x); }
int store_run_add(struct store *s, const struct store_run *x) { return OPS(s)->run_add(s, x); }

int store_job_report_put(struct store *s, int64_t job_key, const char *text, const char *json)
{
	return OPS(s)->job_report_put(s, job_key, text, json);
}

static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	for (size_t got = 0; got < n;) {
		ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO; /* shorter than it said */
		got += (size_t)k;
	}
	return 0;
}

/* Compressed a frame at a time from fd: what is held is the frames, not the JSON. */
static int report_put_packed(struct store *s, int64_t job_key, const char *text, int fd, uint64_t len)
{
	size_t nframes = (size_t)((len + LOG_ZSTD_FRAME - 1) / LOG_ZSTD_FRAME), zn = 0;
	size_t cap = nframes * log_zstd_bound(LOG_ZSTD_FRAME); /* pages past the frames are never touched */
	unsigned char *z = malloc(cap), *in = malloc(LOG_ZSTD_FRAME);
	int r = z && in ? 0 : -ENOMEM;
	for (uint64_t off = 0; r == 0 && off < len; off += LOG_ZSTD_FRAME) {
		size_t n = len - off < LOG_ZSTD_FRAME ? (size_t)(len - off) : LOG_ZSTD_FRAME, k = 0;
		if ((r = pread_all(fd, in, n, off)) == 0 && !(k = log_zstd_compress(z + zn, cap - zn, in, n)))
			r = -EIO;
		zn += k;
	}
	if (r == 0)
		r = OPS(s)->job_report_put_packed(s, job_key, text, z, zn);
	free(in);
	free(z);
	return r;
}

int store_job_report_put_fd(struct store *s, int64_t job_key, const char *text, int fd, uint64_t len)
{
	char why[256];
	if (len >= SIZE_MAX / 2)
		return -EFBIG;
	if (OPS(s)->job_report_put_packed && len >= STORE_REPORT_PACK_MIN && log_zstd_load(why, sizeof why) == 0)
		return report_put_packed(s, job_key, text, fd, len);
	char *json = malloc((size_t)len + 1);
	int r = json ? pread_all(fd, json, (size_t)len, 0) : -ENOMEM;
	if (r == 0) {
		json[len] = 0;
		r = OPS(s)->job_report_put(s, job_key, text, json);
	}
	free(json);
	return r;
}

int store_job_findings_put(struct store *s, int64_t job_key, const char *const *findings, size_t n)
{
	return OPS(s)->job_findings_put(s, job_key, findings, n);
}

int store_job_sched_put(struct store *s, const struct store_job *j) { return OPS(s)->job_sched_put(s, j); }

int store_diagnosis_put(struct store *s, const struct store_diag_row *d) { return OPS(s)->diagnosis_put(s, d); }

int store_diagnosis_get(struct store *s, int64_t job_key, int json, char **out)
{
	return OPS(s)->diagnosis_get(s, job_key, json, out);
}

int store_diag_similar(struct store *s, const char *app, uint32_t ranks, int64_t before_ms, size_t limit,
		       int (*fn)(int64_t job_key, void *ctx), void *ctx)
{
	return OPS(s)->diag_similar(s, app, ranks, before_ms, limit, fn, ctx);
}

int store_diag_alerts(struct store *s, uint32_t uid, int64_t since_ms, size_t limit,
		      int (*fn)(const struct store_diag_row *d, void *ctx), void *ctx)
{
	return OPS(s)->diag_alerts(s, uid, since_ms, limit, fn, ctx);
}

int store_diag_node(struct store *s, const char *host, int64_t before_ms, size_t limit,
		    int (*fn)(const struct store_diag_row *d, void *ctx), void *ctx)
{
	return OPS(s)->diag_node(s, host, before_ms, limit, fn, ctx);
}

int store_diag_pending(struct store *s, int64_t since_ms, size_t limit, int (*fn)(int64_t job_key, void *ctx),
		       void *ctx)
{
	return OPS(s)->diag_pending(s, since_ms, limit, fn, ctx);
}

int store_diag_peers(struct store *s, int64_t job_key, int (*fn)(const struct store_diag_peer *p, void *ctx),
		     void *ctx)
{
	return OPS(s)->diag_peers(s, job_key, fn, ctx);
}

int store_proc_find(struct store *s, const char *host, int32_t pid, uint64_t start_ns, int64_t *key,
		    enum store_proc_state *state)
{
	return OPS(s)->proc_find(s, host, pid, start_ns, key, state);
}

int store_job_logs(struct store *s, int64_t job_key, const char *host, int (*fn)(const char *path, void *ctx),
		   void *ctx)
{
	return OPS(s)->job_logs(s, job_key, host, fn, ctx);
}

int store_procs_open(struct store *s, const char *host, int (*fn)(const struct store_proc *p, void *ctx), void *ctx)
{
	return OPS(s)->procs_open(s, host, fn, ctx);
}

int store_jobs(struct store *s, const struct store_job_filter *f, int (*fn)(const struct store_job *j, void *ctx),
	       void *ctx)
{
	return OPS(s)->jobs(s, f, fn, ctx);
}

int store_jobs_count(struct store *s, const struct store_job_filter *f, uint64_t *n)
{
	return OPS(s)->jobs_count(s, f, n);
}

int store_job_report(struct store *s, int64_t job_key, int json, char **out)
{
	return OPS(s)->job_report(s, job_key, json, 0, out);
}

int store_job_report_head(struct store *s, int64_t job_key, size_t head, char **out)
{
	return OPS(s)->job_report(s, job_key, 1, head ? head : 1, out);
}

int store_node_secs(struct store *s, const struct store_node_filter *f,
		    int (*fn)(const struct store_node_sec *ns, void *ctx), void *ctx)
{
	return OPS(s)->node_secs(s, f, fn, ctx);
}

int store_devices(struct store *s, const struct store_node_filter *f,
		  int (*fn)(const struct store_device_sample *d, void *ctx), void *ctx)
{
	return OPS(s)->devices(s, f, fn, ctx);
}

int store_samples(struct store *s, const struct store_node_filter *f, const char *source,
		  int (*fn)(const struct store_sample *x, void *ctx), void *ctx)
{
	return OPS(s)->samples(s, f, source, fn, ctx);
}

int store_dists(struct store *s, const struct store_node_filter *f,
		int (*fn)(const struct store_dist *x, void *ctx), void *ctx)
{
	return OPS(s)->dists(s, f, fn, ctx);
}

int store_node_hosts(struct store *s, const struct store_node_filter *f,
		     int (*fn)(const char *host, int64_t first_ms, int64_t last_ms, void *ctx), void *ctx)
{
	return OPS(s)->node_hosts(s, f, fn, ctx);
}

int store_user_secs(struct store *s, uint32_t uid, const struct store_node_filter *f,
		    int (*fn)(const struct store_node_sec *ns, void *ctx), void *ctx)
{
	return OPS(s)->user_secs(s, uid, f, fn, ctx);
}

int store_job_series(struct store *s, int64_t job_key, enum store_series_by by, int64_t resolution_ms,
		     int (*fn)(const struct store_series_point *pt, void *ctx), void *ctx)
{
	if (resolution_ms < 0 || (unsigned)by > STORE_SERIES_RANK)
		return -EINVAL;
	return OPS(s)->job_series(s, job_key, by, resolution_ms, fn, ctx);
}

int store_retain(struct store *s, int64_t before_ms, const char *archive_dir, size_t max_rows, uint64_t *moved)
{
	return OPS(s)->retain(s, before_ms, archive_dir, max_rows, moved);
}

/* The operations a backend may lack. */
#define OPTIONAL(s, op, ...) (OPS(s)->op ? OPS(s)->op(s, __VA_ARGS__) : -EOPNOTSUPP)

int store_batch_seq_next(struct store *s, uint64_t *seq)
{
	return OPTIONAL(s, batch_seq_next, seq);
}

int store_outbox_put(struct store *s, unsigned sink, uint64_t seq, int64_t t_ms, const void *data, size_t len,
		     uint64_t max_bytes)
{
	return OPTIONAL(s, outbox_put, sink, seq, t_ms, data, len, max_bytes);
}

int store_outbox_list(struct store *s, unsigned sink, size_t max_bytes,
		      int (*fn)(uint64_t seq, int64_t t_ms, const void *data, size_t len, void *ctx), void *ctx)
{
	return OPTIONAL(s, outbox_list, sink, max_bytes, fn, ctx);
}

int store_outbox_del(struct store *s, unsigned sink, uint64_t upto_seq)
{
	return OPTIONAL(s, outbox_del, sink, upto_seq);
}

int store_outbox_state(struct store *s, unsigned sink, uint64_t *batches, uint64_t *bytes, uint64_t *dropped)
{
	return OPTIONAL(s, outbox_state, sink, batches, bytes, dropped);
}

int store_batch_mark(struct store *s, const char *host, uint64_t seq)
{
	return OPTIONAL(s, batch_mark, host, seq);
}

int store_node_cursor_put(struct store *s, const char *host, int64_t t_ms, const void *data, size_t len)
{
	return OPS(s)->node_cursor_put(s, host, t_ms, data, len);
}

int store_node_cursor_get(struct store *s, const char *host, void **data, size_t *len)
{
	*data = NULL;
	*len = 0;
	return OPS(s)->node_cursor_get(s, host, data, len);
}
