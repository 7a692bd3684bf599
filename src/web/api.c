/* SPDX-License-Identifier: MIT */
/*
 * The /api/v1 endpoints (api.h; docs/API.md and docs/openapi.json describe each). The access
 * rule is query.c's: a caller who is not an admin sees their own uid's jobs and I/O only, and a
 * job of another user is "no such job", the answer for a job that never existed. A job's report
 * is served as the job pipeline stored it (store_job_report), whole or one member picked out
 * byte for byte (jsonpick.h): the API never recomputes what `iostrata report` printed. Every
 * parameter is checked: an unknown or malformed one is a 400 naming it.
 */
#include "web/api.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/json.h"
#include "iostrata/format.h"
#include "store/diagnosis.h"
#include "store/query.h"
#include "web/jsonpick.h"

#define PAGE_DEFAULT 100
#define PAGE_MAX 1000
#define RESOLUTION_MAX_MS (86400LL * 1000)

/* A reply being written: a memory stream and the JSON writer over it. */
struct out {
	FILE *f;
	char *buf;
	size_t len;
	struct ana_jw w;
};

static int out_open(struct out *o)
{
	memset(o, 0, sizeof *o);
	o->f = open_memstream(&o->buf, &o->len);
	o->w.f = o->f;
	return o->f ? 0 : -ENOMEM;
}

static void out_finish(struct out *o, struct web_reply *r)
{
	fputc('\n', o->f);
	int bad = ferror(o->f);
	fclose(o->f);
	if (bad) {
		free(o->buf);
		web_reply_error(r, 500, "out of memory");
		return;
	}
	r->status = 200;
	r->body = o->buf;
	r->len = o->len;
}

void web_reply_error(struct web_reply *out, unsigned status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	out->status = status;
	if (!f) {
		out->body = NULL;
		out->len = 0;
		return;
	}
	fputs("{\"error\": ", f);
	ana_json_string(f, msg);
	fputs("}\n", f);
	fclose(f);
	out->body = buf;
	out->len = len;
}

/* ---- parameters ---- */

/* 0 when every argument is one of allowed (" a b c "), each at most once; else a 400 written. */
static int args_check(const struct web_args *a, const char *allowed, struct web_reply *r)
{
	if (a->too_many) {
		web_reply_error(r, 400, "more than %d query parameters", WEB_ARGS_MAX);
		return -1;
	}
	for (size_t i = 0; i < a->n; i++) {
		char key[64];
		if (strlen(a->key[i]) > 40 || (snprintf(key, sizeof key, " %s ", a->key[i]), !strstr(allowed, key))) {
			web_reply_error(r, 400, "unknown parameter '%.40s' (this endpoint takes:%s)", a->key[i], allowed);
			return -1;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(a->key[i], a->key[j])) {
				web_reply_error(r, 400, "parameter '%s' given twice", a->key[i]);
				return -1;
			}
	}
	return 0;
}

static const char *arg(const struct web_args *a, const char *key)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->key[i], key))
			return a->val[i] ? a->val[i] : "";
	return NULL;
}

/* An unsigned decimal in [0, max] (absent: def): 0, or a 400 written. */
static int arg_u64(const struct web_args *a, const char *key, uint64_t def, uint64_t max, uint64_t *v,
		   struct web_reply *r)
{
	const char *s = arg(a, key);
	*v = def;
	if (!s)
		return 0;
	uint64_t x = 0;
	size_t n = 0;
	for (; s[n]; n++) {
		if (s[n] < '0' || s[n] > '9' || n >= 15)
			break;
		x = x * 10 + (uint64_t)(s[n] - '0');
	}
	if (!n || s[n] || x > max) {
		web_reply_error(r, 400, "%s: '%.40s' is not a number from 0 to %" PRIu64, key, s, max);
		return -1;
	}
	*v = x;
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int arg_time(const struct web_args *a, const char *key, int64_t *ms, struct web_reply *r)
{
	const char *s = arg(a, key);
	*ms = 0;
	if (!s)
		return 0;
	if (store_parse_time(s, now_ms(), ms) < 0) {
		web_reply_error(r, 400, "%s: '%.40s' is not a time (@EPOCH, YYYY-MM-DD[THH:MM[:SS]], or 90s, 10m, 2h, 3d ago)",
				key, s);
		return -1;
	}
	return 0;
}

/* ---- jobs ---- */

static void job_object(struct ana_jw *w, const char *key, const struct store_job *j)
{
	ana_jw_open(w, key, '{');
	ana_jw_i64(w, "id", j->key);
	store_job_json(w, j);
	ana_jw_close(w, '}');
}

struct list_ctx {
	struct out *o;
};

static int list_row(const struct store_job *j, void *arg)
{
	struct list_ctx *c = arg;
	job_object(&c->o->w, NULL, j);
	return 0;
}

/* The page and the total are the store's: a filtered, ordered and counted query each (every
 * filter of this endpoint is one of store_job_filter's), so a page costs its rows, not the
 * store's jobs. */
static void get_jobs(struct store *s, const struct web_caller *who, const struct web_args *a, struct web_reply *r)
{
	struct store_job_filter f = {.uid = who->admin ? STORE_ANY_UID : who->uid};
	struct list_ctx c = {0};
	struct out o;
	uint64_t limit, offset, total = 0;
	const char *state = arg(a, "state");
	if (args_check(a, " user state since until app limit offset ", r) || arg_time(a, "since", &f.since_ms, r) ||
	    arg_time(a, "until", &f.until_ms, r) || arg_u64(a, "limit", PAGE_DEFAULT, PAGE_MAX, &limit, r) ||
	    arg_u64(a, "offset", 0, UINT32_MAX, &offset, r))
		return;
	if (state && strcmp(state, "running") && strcmp(state, "ended")) {
		web_reply_error(r, 400, "state: '%.40s' is not running or ended", state);
		return;
	}
	if (limit == 0) {
		web_reply_error(r, 400, "limit: from 1 to %d", PAGE_MAX);
		return;
	}
	f.running_only = state && !strcmp(state, "running");
	f.ended_only = state && !strcmp(state, "ended");
	f.app = arg(a, "app");
	f.user = arg(a, "user");
	if (f.user && !who->admin && strcmp(f.user, who->user)) {
		web_reply_error(r, 403, "user: only an admin sees other users' jobs");
		return;
	}
	if (out_open(&o) < 0) {
		web_reply_error(r, 500, "out of memory");
		return;
	}
	c.o = &o;
	ana_jw_open(&o.w, NULL, '{');
	ana_jw_open(&o.w, "jobs", '[');
	int rc = store_jobs_count(s, &f, &total);
	f.offset = (size_t)offset;
	f.limit = (size_t)limit;
	if (rc >= 0 && offset < total)
		rc = store_jobs(s, &f, list_row, &c);
	ana_jw_close(&o.w, ']');
	ana_jw_u64(&o.w, "total", total);
	ana_jw_u64(&o.w, "offset", offset);
	ana_jw_u64(&o.w, "limit", limit);
	ana_jw_close(&o.w, '}');
	if (rc < 0) {
		fclose(o.f);
		free(o.buf);
		web_reply_error(r, 500, "store: %s", store_error(s));
		return;
	}
	out_finish(&o, r);
}

/* One job the caller may see, by its id, with copies of its strings. */
struct one {
	struct store_job j;
	char *strs[6];
	int found;
};

static int keep_one(const struct store_job *j, void *arg)
{
	struct one *c = arg;
	c->j = *j;
	const char **fields[] = {&c->j.job, &c->j.host, &c->j.user, &c->j.exe, &c->j.jobdir};
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		*fields[i] = c->strs[i] = strdup(*fields[i] ? *fields[i] : "");
	c->j.sched = c->j.sched_name = c->j.sched_state = c->j.sched_nodes = NULL;
	c->found = 1;
	return 1;
}

static void one_free(struct one *c)
{
	for (size_t i = 0; i < 6; i++)
		free(c->strs[i]);
}

/* 0 with the job, or a 404/500 written. */
static int find_job(struct store *s, const struct web_caller *who, const char *id, struct one *c,
		    struct web_reply *r)
{
	memset(c, 0, sizeof *c);
	char *end;
	errno = 0;
	long long key = strtoll(id, &end, 10);
	if (errno || end == id || *end || key <= 0 || id[0] == '+') {
		web_reply_error(r, 400, "job id: '%.40s' is not a job's id (a positive number: the \"id\" of /api/v1/jobs)", id);
		return -1;
	}
	struct store_job_filter f = {.uid = who->admin ? STORE_ANY_UID : who->uid, .key = key};
	/* a filter by key alone would be "0: any", so a key is always given here */
	if (store_jobs(s, &f, keep_one, c) < 0) {
		one_free(c);
		web_reply_error(r, 500, "store: %s", store_error(s));
		return -1;
	}
	if (!c->found) {
		one_free(c);
		web_reply_error(r, 404, "no job %lld%s", key, who->admin ? "" : " of yours");
		return -1;
	}
	return 0;
}

/* Members of the report that a part serves: the part's name, its path in the report (one or
 * two member names), and the key it is served under. */
static const struct {
	const char *part, *m1, *m2, *key;
} parts[] = {
	{"profile", "job", NULL, "profile"},
	{"layers", "layers", NULL, "layers"},
	{"files", "files", NULL, "files"},
	{"findings", "findings", NULL, "findings"},
	{"ranks", "ranks", NULL, "ranks"},
	{"processes", "processes", NULL, "processes"},
	{"io_mode", "job", "io_mode", "io_mode"},
};

static void put_raw(struct out *o, const char *key, const char *v, size_t n)
{
	ana_jw_sep(&o->w, key);
	fwrite(v, 1, n, o->f);
}

/* The report's summary as the member "report": its members in order, each byte for byte, but
 * "files" and "processes". 0, or -EINVAL for a report that is not an object. */
static int put_summary(struct out *o, const char *rep)
{
	size_t pos = 0, kl, vl, len = strlen(rep);
	const char *k, *v;
	char key[64];
	int rc;
	ana_jw_open(&o->w, "report", '{');
	while ((rc = web_json_next_member(rep, len, &pos, &k, &kl, &v, &vl)) == 1) {
		if (kl >= sizeof key || memchr(k, '\\', kl))
			return -EINVAL; /* the report's keys are short names */
		memcpy(key, k, kl);
		key[kl] = 0;
		if (strcmp(key, "files") && strcmp(key, "processes"))
			put_raw(o, key, v, vl);
	}
	ana_jw_close(&o->w, '}');
	return rc;
}

static void get_job_part(struct store *s, const struct web_caller *who, const char *id, const char *part,
			 const struct web_args *a, struct web_reply *r)
{
	struct one c;
	char *rep = NULL;
	struct out o;
	size_t p;
	/* the job with its report whole, or its summary: every member but the per-file and
	 * per-process arrays (what the application view draws; a job of 1,000 processes has a
	 * report of tens of MB, nearly all of it those two) */
	const char *want = NULL;
	if (args_check(a, part ? " " : " report ", r))
		return;
	if (!part && (want = arg(a, "report")) && strcmp(want, "whole") && strcmp(want, "summary")) {
		web_reply_error(r, 400, "report: '%.40s' is not whole or summary", want);
		return;
	}
	int summary = want && !strcmp(want, "summary");
	for (p = 0; part && p < sizeof parts / sizeof parts[0]; p++)
		if (!strcmp(parts[p].part, part))
			break;
	if (part && strcmp(part, "report") && p == sizeof parts / sizeof parts[0]) {
		web_reply_error(r, 404, "no such part of a job: '%.40s'", part);
		return;
	}
	if (find_job(s, who, id, &c, r))
		return;
	if (store_job_report(s, c.j.key, 1, &rep) < 0) {
		web_reply_error(r, 500, "store: %s", store_error(s));
		goto out;
	}
	if (part && !rep) {
		web_reply_error(r, 404, "job %" PRId64 " has no report yet (it runs, or its report could not be made)", c.j.key);
		goto out;
	}
	if (part && !strcmp(part, "report")) { /* as stored: `iostrata report --json` byte for byte */
		r->status = 200;
		r->body = rep;
		r->len = strlen(rep);
		rep = NULL;
		goto out;
	}
	if (out_open(&o) < 0) {
		web_reply_error(r, 500, "out of memory");
		goto out;
	}
	ana_jw_open(&o.w, NULL, '{');
	if (!part) {
		job_object(&o.w, "job", &c.j);
		if (rep && summary) {
			if (put_summary(&o, rep) < 0) {
				fclose(o.f);
				free(o.buf);
				web_reply_error(r, 500, "job %" PRId64 ": its stored report is not a JSON object", c.j.key);
				goto out;
			}
		} else if (rep) {
			put_raw(&o, "report", rep, strlen(rep) - (rep[strlen(rep) - 1] == '\n'));
		} else {
			ana_jw_null(&o.w, "report");
		}
	} else {
		const char *v;
		size_t n;
		ana_jw_i64(&o.w, "id", c.j.key);
		int rc = web_json_member(rep, strlen(rep), parts[p].m1, &v, &n);
		if (!rc && parts[p].m2) {
			const char *v2;
			size_t n2;
			rc = web_json_member(v, n, parts[p].m2, &v2, &n2);
			if (!rc)
				put_raw(&o, "io_mode", v2, n2);
			if (!rc && !web_json_member(v, n, "io_mode_detail", &v2, &n2))
				put_raw(&o, "io_mode_detail", v2, n2);
		} else if (!rc) {
			put_raw(&o, parts[p].key, v, n);
		}
		if (rc == -ENOENT)
			ana_jw_null(&o.w, parts[p].key);
		else if (rc < 0) {
			fclose(o.f);
			free(o.buf);
			web_reply_error(r, 500, "job %" PRId64 ": its stored report is not a JSON object", c.j.key);
			goto out;
		}
	}
	ana_jw_close(&o.w, '}');
	out_finish(&o, r);
out:
	free(rep);
	one_free(&c);
}

/* The job's rows on every host (a job id with the same owner on several nodes). */
struct nodes_ctx {
	struct out *o;
};

static int node_of_job(const struct store_job *j, void *arg)
{
	struct nodes_ctx *c = arg;
	job_object(&c->o->w, NULL, j);
	return 0;
}

static void get_job_nodes(struct store *s, const struct web_caller *who, const char *id, const struct web_args *a,
			  struct web_reply *r)
{
	struct one c;
	struct out o;
	if (args_check(a, " ", r) || find_job(s, who, id, &c, r))
		return;
	struct store_job_filter f = {.uid = c.j.uid, .job = c.j.job};
	struct nodes_ctx nc = {.o = &o};
	if (out_open(&o) < 0) {
		web_reply_error(r, 500, "out of memory");
		goto out;
	}
	ana_jw_open(&o.w, NULL, '{');
	ana_jw_i64(&o.w, "id", c.j.key);
	ana_jw_open(&o.w, "nodes", '[');
	int rc = store_jobs(s, &f, node_of_job, &nc);
	ana_jw_close(&o.w, ']');
	ana_jw_close(&o.w, '}');
	if (rc < 0) {
		fclose(o.f);
		free(o.buf);
		web_reply_error(r, 500, "store: %s", store_error(s));
		goto out;
	}
	out_finish(&o, r);
out:
	one_free(&c);
}

/* The job's diagnosis (docs/DIAGNOSIS.md), the same JSON as `iostrata diagnose --json` with the
 * job's id first: the one stored when the job ended, or (a job that ended before the store kept
 * them, or one still running) made by the diagnoses' worker while this request lets go of the
 * store's lock, so that other requests go on (diagnoses.h); an ended job's is stored then. */
static void get_job_diagnosis(const struct web_store *ws, const struct web_caller *who, const char *id,
			      const struct web_args *a, struct web_reply *r)
{
	struct one c;
	struct out o;
	struct store *s = ws->s;
	char err[256];
	if (args_check(a, " ", r) || find_job(s, who, id, &c, r))
		return;
	char *stored = NULL;
	int rc = store_diagnosis_get(s, c.j.key, 1, &stored);
	if (rc >= 0 && !stored) {
		pthread_mutex_unlock(ws->lock);
		rc = web_diag_make(ws->diag, &c.j, &stored, err, sizeof err);
		pthread_mutex_lock(ws->lock);
		if (rc == 0 && (rc = store_diagnosis_get(s, c.j.key, 1, &stored)) < 0) /* stored now */
			snprintf(err, sizeof err, "%s", store_error(s));
	} else if (rc < 0) {
		snprintf(err, sizeof err, "%s", store_error(s));
	}
	if (rc >= 0 && (!stored || stored[0] != '{')) {
		rc = -EIO;
		snprintf(err, sizeof err, "the diagnosis of job %" PRId64 " was not stored", c.j.key);
	}
	if (rc < 0) {
		web_reply_error(r, 500, "%s", rc == -ENOMEM ? "out of memory" : err);
	} else if (out_open(&o) < 0) {
		web_reply_error(r, 500, "out of memory");
	} else {
		/* the stored object with the job's id first */
		fprintf(o.f, "{\"id\":%" PRId64 "%s%s", c.j.key, stored[1] == '}' ? "" : ",", stored + 1);
		out_finish(&o, r);
	}
	free(stored);
	one_free(&c);
}

struct series_ctx {
	struct out *o;
	enum store_series_by by;
};

static int series_point(const struct store_series_point *pt, void *arg)
{
	struct series_ctx *c = arg;
	struct ana_jw *w = &c->o->w;
	ana_jw_open(w, NULL, '{');
	ana_jw_i64(w, "t_ms", pt->t_ms);
	ana_jw_str(w, "layer", log_layer_name(pt->layer));
	if (c->by == STORE_SERIES_HOST)
		ana_jw_str(w, "host", pt->host);
	if (c->by == STORE_SERIES_RANK)
		ana_jw_i64(w, "rank", pt->rank);
	ana_jw_u64(w, "bytes_read", pt->bytes_read);
	ana_jw_u64(w, "bytes_written", pt->bytes_written);
	ana_jw_u64(w, "reads", pt->reads);
	ana_jw_u64(w, "writes", pt->writes);
	ana_jw_u64(w, "meta_ops", pt->meta_ops);
	ana_jw_close(w, '}');
	return 0;
}

static const char *const series_by_name[] = {"layer", "host", "rank"};

/* "by": layer (default), host or rank: 0, or a 400 written. */
static int arg_by(const struct web_args *a, enum store_series_by *by, struct web_reply *r)
{
	const char *s = arg(a, "by");
	*by = STORE_SERIES_LAYER;
	if (!s)
		return 0;
	for (unsigned i = 0; i < 3; i++)
		if (!strcmp(s, series_by_name[i])) {
			*by = (enum store_series_by)i;
			return 0;
		}
	web_reply_error(r, 400, "by: '%.40s' is not layer, host or rank", s);
	return -1;
}

static void get_job_series(struct store *s, const struct web_caller *who, const char *id, const struct web_args *a,
			   struct web_reply *r)
{
	struct one c;
	struct out o;
	uint64_t res;
	struct series_ctx sc = {.o = &o};
	if (args_check(a, " by resolution ", r) || arg_by(a, &sc.by, r) ||
	    arg_u64(a, "resolution", 0, RESOLUTION_MAX_MS, &res, r) || find_job(s, who, id, &c, r))
		return;
	if (out_open(&o) < 0) {
		web_reply_error(r, 500, "out of memory");
		goto out;
	}
	ana_jw_open(&o.w, NULL, '{');
	ana_jw_i64(&o.w, "id", c.j.key);
	ana_jw_str(&o.w, "by", series_by_name[sc.by]);
	ana_jw_u64(&o.w, "resolution_ms", res);
	ana_jw_open(&o.w, "points", '[');
	int rc = store_job_series(s, c.j.key, sc.by, (int64_t)res, series_point, &sc);
	ana_jw_close(&o.w, ']');
	ana_jw_close(&o.w, '}');
	if (rc < 0) {
		fclose(o.f);
		free(o.buf);
		web_reply_error(r, 500, "store: %s", store_error(s));
		goto out;
	}
	out_finish(&o, r);
out:
	one_free(&c);
}

/* ---- nodes ---- */

/* Node-seconds summed per (bucket, layer); rows arrive ordered by host, t_ms, layer. */
struct nsec_ctx {
	struct out *o;
	const char *host; /* NULL: the list of hosts */
	int64_t res;
	/* list: the current host's summary */
	char cur[256];
	int64_t first_ms, last_ms;
	uint64_t rows;
	/* series: the current bucket per layer */
	int64_t bucket;
	int have[LOG_LAYER_MAX + 1];
	struct store_node_sec acc[LOG_LAYER_MAX + 1];
};

static void flush_bucket(struct nsec_ctx *c)
{
	for (unsigned l = 0; l <= LOG_LAYER_MAX; l++) {
		if (!c->have[l])
			continue;
		struct ana_jw *w = &c->o->w;
		ana_jw_open(w, NULL, '{');
		ana_jw_i64(w, "t_ms", c->bucket);
		ana_jw_i64(w, "dt_ms", c->acc[l].dt_ms);
		ana_jw_str(w, "layer", log_layer_name(l));
		ana_jw_u64(w, "bytes_read", c->acc[l].bytes_read);
		ana_jw_u64(w, "bytes_written", c->acc[l].bytes_written);
		ana_jw_u64(w, "reads", c->acc[l].reads);
		ana_jw_u64(w, "writes", c->acc[l].writes);
		ana_jw_u64(w, "meta_ops", c->acc[l].meta_ops);
		ana_jw_close(w, '}');
		c->have[l] = 0;
		memset(&c->acc[l], 0, sizeof c->acc[l]);
	}
}

static void flush_host(struct nsec_ctx *c)
{
	if (!c->rows)
		return;
	struct ana_jw *w = &c->o->w;
	ana_jw_open(w, NULL, '{');
	ana_jw_str(w, "host", c->cur);
	ana_jw_i64(w, "first_ms", c->first_ms);
	ana_jw_i64(w, "last_ms", c->last_ms);
	ana_jw_close(w, '}');
	c->rows = 0;
}

static int nsec_row(const struct store_node_sec *ns, void *arg)
{
	struct nsec_ctx *c = arg;
	if (!c->host) {
		if (c->rows && strcmp(c->cur, ns->host))
			flush_host(c);
		if (!c->rows) {
			snprintf(c->cur, sizeof c->cur, "%s", ns->host);
			c->first_ms = ns->t_ms;
		}
		c->last_ms = ns->t_ms;
		c->rows++;
		return 0;
	}
	if (ns->layer > LOG_LAYER_MAX)
		return 0;
	int64_t b = c->res ? ns->t_ms / c->res * c->res : ns->t_ms;
	if (b != c->bucket)
		flush_bucket(c);
	c->bucket = b;
	struct store_node_sec *x = &c->acc[ns->layer];
	c->have[ns->layer] = 1;
	x->dt_ms += ns->dt_ms;
	x->bytes_read += ns->bytes_read;
	x->bytes_written += ns->bytes_written;
	x->reads += ns->reads;
	x->writes += ns->writes;
	x->meta_ops += ns->meta_ops;
	return 0;
}

static int host_row(const char *host, int64_t first_ms, int64_t last_ms, void *arg)
{
	struct nsec_ctx *c = arg;
	snprintf(c->cur, sizeof c->cur, "%s", host);
	c->first_ms = first_ms;
	c->last_ms = last_ms;
	c->rows = 1;
	flush_host(c);
	return 0;
}

static void get_nodes(struct store *s, const struct web_caller *who, const char *host, const struct web_args *a,
		      struct web_reply *r)
{
	struct store_node_filter f = {.host = host};
	struct nsec_ctx c = {.host = host};
	struct out o;
	uint64_t res = 0;
	if (args_check(a, host ? " since until resolution " : " since until ", r) || arg_time(a, "since", &f.since_ms, r) ||
	    arg_time(a, "until", &f.until_ms, r) || arg_u64(a, "resolution", 0, RESOLUTION_MAX_MS, &res, r))
		return;
	c.res = (int64_t)res;
	if (host)
		f.resolution_ms = c.res; /* the store sums the buckets (store_user_secs leaves them to us) */
	if (out_open(&o) < 0) {
		web_reply_error(r, 500, "out of memory");
		return;
	}
	c.o = &o;
	ana_jw_open(&o.w, NULL, '{');
	ana_jw_bool(&o.w, "own_only", !who->admin);
	if (host) {
		ana_jw_str(&o.w, "host", host);
		ana_jw_u64(&o.w, "resolution_ms", res);
	}
	ana_jw_open(&o.w, host ? "points" : "nodes", '[');
	/* an admin's list of hosts is summed by the store (a week of 64 nodes is 77 million rows) */
	int rc = who->admin && !host ? store_node_hosts(s, &f, host_row, &c)
		 : who->admin	    ? store_node_secs(s, &f, nsec_row, &c)
				    : store_user_secs(s, who->uid, &f, nsec_row, &c);
	if (host)
		flush_bucket(&c);
	else
		flush_host(&c);
	ana_jw_close(&o.w, ']');
	ana_jw_close(&o.w, '}');
	if (rc < 0) {
		fclose(o.f);
		free(o.buf);
		web_reply_error(r, 500, "store: %s", store_error(s));
		return;
	}
	out_finish(&o, r);
}

/* ---- devices, mounts (the node's own figures: admins) ---- */

struct dev_ctx {
	struct out *o;
	int mounts;
};

static int dev_row(const struct store_device_sample *d, void *arg)
{
	struct dev_ctx *c = arg;
	ana_jw_open(&c->o->w, NULL, '{');
	store_device_json(&c->o->w, d);
	ana_jw_close(&c->o->w, '}');
	return 0;
}

static int mount_row(const struct store_sample *x, void *arg)
{
	struct dev_ctx *c = arg;
	if (strcmp(x->source, "nfs") && strcmp(x->source, "lustre"))
		return 0;
	ana_jw_open(&c->o->w, NULL, '{');
	store_sample_json(&c->o->w, x);
	ana_jw_close(&c->o->w, '}');
	return 0;
}

static void get_devices(struct store *s, const struct web_caller *who, int mounts, const struct web_args *a,
			struct web_reply *r)
{
	struct store_node_filter f = {.host = arg(a, "host")};
	struct dev_ctx c = {.mounts = mounts};
	struct out o;
	if (args_check(a, " host since until ", r) || arg_time(a, "since", &f.since_ms, r) ||
	    arg_time(a, "until", &f.until_ms, r))
		return;
	if (!who->admin) {
		web_reply_error(r, 403, "%s: the node's own figures are for admins (your own I/O: /api/v1/nodes)",
				mounts ? "mounts" : "devices");
		return;
	}
	if (out_open(&o) < 0) {
		web_reply_error(r, 500, "out of memory");
		return;
	}
	c.o = &o;
	ana_jw_open(&o.w, NULL, '{');
	ana_jw_open(&o.w, mounts ? "mounts" : "devices", '[');
	int rc = mounts ? store_samples(s, &f, NULL, mount_row, &c) : store_devices(s, &f, dev_row, &c);
	ana_jw_close(&o.w, ']');
	ana_jw_close(&o.w, '}');
	if (rc < 0) {
		fclose(o.f);
		free(o.buf);
		web_reply_error(r, 500, "store: %s", store_error(s));
		return;
	}
	out_finish(&o, r);
}

/* ---- alerts: the findings of the caller's jobs' reports ---- */

struct alert_ctx {
	struct store *s;
	struct out *o;
	int rc;
	uint64_t n, limit;
};

static int alert_job(const struct store_job *j, void *arg)
{
	struct alert_ctx *c = arg;
	char *rep = NULL;
	const char *v, *e;
	size_t n, en, pos = 0;
	if (j->running)
		return 0;
	if (c->n >= c->limit)
		return 1;
	/* reading a report inside the listing's callback: both backends hold the listing's rows
	 * already (SQLite steps its own statement; libpq has the whole result) */
	if ((c->rc = store_job_report(c->s, j->key, 1, &rep)) < 0)
		return 1;
	if (rep && !web_json_member(rep, strlen(rep), "findings", &v, &n)) {
		while (c->n < c->limit && web_json_next(v, n, &pos, &e, &en) == 1) {
			struct ana_jw *w = &c->o->w;
			ana_jw_open(w, NULL, '{');
			ana_jw_i64(w, "id", j->key);
			ana_jw_str(w, "job", j->job);
			ana_jw_str(w, "host", j->host);
			ana_jw_str(w, "user", j->user);
			ana_jw_i64(w, "end_ms", j->end_ms);
			ana_jw_sep(w, "finding");
			fwrite(e, 1, en, c->o->f);
			ana_jw_close(w, '}');
			c->n++;
		}
	}
	free(rep);
	return 0;
}

/* ---- alerts: the anomalies the diagnoses of ended jobs found (docs/DIAGNOSIS.md) ---- */

struct anomaly_ctx {
	struct store *s;
	struct out *o;
	int rc;
};

/* One alert per cause a diagnosis named (interference, a degraded node, unexplained), with the
 * job's identity and the finding as the diagnosis has it; the abnormal phase it explains is the
 * finding before it. */
static int anomaly_row(const struct store_diag_row *d, void *arg)
{
	struct anomaly_ctx *c = arg;
	struct one j;
	const char *v, *e, *k;
	size_t n, en, kn, pos = 0;
	struct store_job_filter f = {.uid = STORE_ANY_UID, .key = d->job_key};
	memset(&j, 0, sizeof j);
	if ((c->rc = store_jobs(c->s, &f, keep_one, &j)) < 0)
		return 1;
	if (!j.found || web_json_member(d->json, strlen(d->json), "findings", &v, &n)) {
		one_free(&j);
		return 0;
	}
	while (web_json_next(v, n, &pos, &e, &en) == 1) {
		if (web_json_member(e, en, "kind", &k, &kn))
			continue;
		int cause = (kn == 14 && !memcmp(k, "\"interference\"", 14)) ||
			    (kn == 15 && !memcmp(k, "\"degraded_node\"", 15)) || (kn == 13 && !memcmp(k, "\"unexplained\"", 13));
		if (!cause)
			continue;
		struct ana_jw *w = &c->o->w;
		ana_jw_open(w, NULL, '{');
		ana_jw_i64(w, "id", d->job_key);
		ana_jw_str(w, "job", j.j.job);
		ana_jw_str(w, "host", j.j.host);
		ana_jw_str(w, "user", j.j.user);
		ana_jw_i64(w, "diagnosed_ms", d->t_ms);
		ana_jw_sep(w, "finding");
		fwrite(e, 1, en, c->o->f);
		ana_jw_close(w, '}');
	}
	one_free(&j);
	return 0;
}

static void get_alerts(struct store *s, const struct web_caller *who, const struct web_args *a, struct web_reply *r)
{
	/* only ended jobs with stored findings, and no more of them than alerts asked: a job's findings
	 * and its report are stored together (store.h), so each such job gives at least one */
	struct store_job_filter f = {.uid = who->admin ? STORE_ANY_UID : who->uid, .ended_only = 1, .with_findings = 1};
	struct alert_ctx c = {.s = s};
	struct out o;
	if (args_check(a, " since limit ", r) || arg_time(a, "since", &f.since_ms, r) ||
	    arg_u64(a, "limit", PAGE_DEFAULT, PAGE_MAX, &c.limit, r))
		return;
	f.limit = (size_t)c.limit;
	if (out_open(&o) < 0) {
		web_reply_error(r, 500, "out of memory");
		return;
	}
	c.o = &o;
	ana_jw_open(&o.w, NULL, '{');
	ana_jw_open(&o.w, "alerts", '[');
	int rc = store_jobs(s, &f, alert_job, &c);
	ana_jw_close(&o.w, ']');
	struct anomaly_ctx ac = {.s = s, .o = &o};
	ana_jw_open(&o.w, "anomalies", '[');
	if (rc >= 0 && c.rc >= 0)
		rc = store_diag_alerts(s, f.uid, f.since_ms, f.limit, anomaly_row, &ac);
	ana_jw_close(&o.w, ']');
	ana_jw_close(&o.w, '}');
	if (rc < 0 || c.rc < 0 || ac.rc < 0) {
		fclose(o.f);
		free(o.buf);
		web_reply_error(r, 500, "store: %s", store_error(s));
		return;
	}
	out_finish(&o, r);
}

static void get_whoami(const struct web_caller *who, const struct web_args *a, struct web_reply *r)
{
	struct out o;
	if (args_check(a, " ", r))
		return;
	if (out_open(&o) < 0) {
		web_reply_error(r, 500, "out of memory");
		return;
	}
	ana_jw_open(&o.w, NULL, '{');
	ana_jw_str(&o.w, "user", who->user);
	ana_jw_u64(&o.w, "uid", who->uid);
	ana_jw_bool(&o.w, "admin", who->admin);
	ana_jw_close(&o.w, '}');
	out_finish(&o, r);
}

/* ---- routing ---- */

/* Splits path ("/a/b/c") into at most max segments: their number, or -1 for more, an empty
 * segment or a trailing slash. */
static int split(char *path, char **seg, int max)
{
	int n = 0;
	char *p = path;
	if (*p++ != '/')
		return -1;
	if (!*p)
		return 0;
	for (;;) {
		char *e = strchr(p, '/');
		if (n == max || e == p)
			return -1;
		seg[n++] = p;
		if (!e)
			return n;
		*e = 0;
		p = e + 1;
		if (!*p)
			return -1;
	}
}

void web_api(const struct web_store *ws, const struct web_caller *who, const char *path, const struct web_args *a,
	     struct web_reply *r)
{
	struct store *s = ws->s;
	char buf[512];
	char *seg[4];
	int n;
	memset(r, 0, sizeof *r);
	if (strlen(path) >= sizeof buf || (snprintf(buf, sizeof buf, "%s", path), n = split(buf, seg, 4)) < 1) {
		web_reply_error(r, 404, "no such endpoint: /api/v1%.200s", path);
		return;
	}
	if (!strcmp(seg[0], "jobs")) {
		if (n == 1)
			return get_jobs(s, who, a, r);
		if (n == 2)
			return get_job_part(s, who, seg[1], NULL, a, r);
		if (n == 3 && !strcmp(seg[2], "series"))
			return get_job_series(s, who, seg[1], a, r);
		if (n == 3 && !strcmp(seg[2], "nodes"))
			return get_job_nodes(s, who, seg[1], a, r);
		if (n == 3 && !strcmp(seg[2], "diagnosis"))
			return get_job_diagnosis(ws, who, seg[1], a, r);
		if (n == 3)
			return get_job_part(s, who, seg[1], seg[2], a, r);
	} else if (!strcmp(seg[0], "nodes")) {
		if (n == 1)
			return get_nodes(s, who, NULL, a, r);
		if (n == 3 && !strcmp(seg[2], "series"))
			return get_nodes(s, who, seg[1], a, r);
	} else if (n == 1 && !strcmp(seg[0], "devices")) {
		return get_devices(s, who, 0, a, r);
	} else if (n == 1 && !strcmp(seg[0], "mounts")) {
		return get_devices(s, who, 1, a, r);
	} else if (n == 1 && !strcmp(seg[0], "alerts")) {
		return get_alerts(s, who, a, r);
	} else if (n == 1 && !strcmp(seg[0], "whoami")) {
		return get_whoami(who, a, r);
	}
	web_reply_error(r, 404, "no such endpoint: /api/v1%.200s", path);
}
