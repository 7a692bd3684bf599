/* SPDX-License-Identifier: MIT */
/*
 * The query verbs (query.h). Access control is applied here, once, for every front end: a caller
 * who is not an admin is given their own uid as a filter on every query, whatever the options
 * ask, and a job of another user is "no such job", the same answer as for a job that never ran.
 */
#include "store/query.h"

#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/json.h"
#include "iostrata/format.h"
#include "store/diagnosis.h"

int store_parse_time(const char *s, int64_t now_ms, int64_t *ms)
{
	char *end;
	if (!s || !*s)
		return -EINVAL;
	if (s[0] == '@') {
		errno = 0;
		long long v = strtoll(s + 1, &end, 10);
		if (errno || end == s + 1 || *end || v < 0 || v > 100000000000LL)
			return -EINVAL;
		*ms = v * 1000;
		return 0;
	}
	if (s[0] >= '0' && s[0] <= '9' && strchr("smhd", s[strlen(s) - 1]) && !strchr(s, '-')) {
		errno = 0;
		unsigned long long v = strtoull(s, &end, 10);
		if (errno || end == s || end[1] || v > 100000000ULL)
			return -EINVAL;
		int64_t unit = *end == 's' ? 1000 : *end == 'm' ? 60000 : *end == 'h' ? 3600000 : 86400000;
		*ms = now_ms - (int64_t)v * unit;
		return 0;
	}
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	const char *p = strptime(s, "%Y-%m-%d", &tm);
	if (!p)
		return -EINVAL;
	if (*p == 'T' || *p == ' ') {
		const char *q = strptime(p + 1, "%H:%M:%S", &tm);
		if (!q)
			q = strptime(p + 1, "%H:%M", &tm);
		p = q;
	}
	if (!p || *p)
		return -EINVAL;
	tm.tm_isdst = -1;
	time_t t = mktime(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*ms = (int64_t)t * 1000;
	return 0;
}

static void fmt_time(char *buf, size_t len, int64_t ms)
{
	if (!ms) {
		snprintf(buf, len, "-");
		return;
	}
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

static void fmt_bytes(char *buf, size_t len, uint64_t v)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double x = (double)v;
	int u = 0;
	while (x >= 1024.0 && u < 5) {
		x /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 " B", v);
	else
		snprintf(buf, len, "%.1f %s", x, units[u]);
}

/* ---- options ---- */

struct qopts {
	int json, csv, running, devices, dists, again;
	const char *user, *host, *job, *samples;
	int64_t since, until;
};

/* Parses argv[1..argc): 0, or 2 with the error written. want: the options this verb takes. */
static int parse_opts(const char *verb, int argc, char **argv, const char *want, struct qopts *o, FILE *err)
{
	int64_t now;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	memset(o, 0, sizeof *o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;
		char name[32];
		const char *eq = strchr(a, '=');
		if (!strncmp(a, "--", 2) && eq && (size_t)(eq - a) < sizeof name) {
			snprintf(name, sizeof name, "%.*s", (int)(eq - a), a);
			val = eq + 1;
			a = name;
		}
		int takes = !strcmp(a, "--user") || !strcmp(a, "--since") || !strcmp(a, "--until") || !strcmp(a, "--host") ||
			    !strcmp(a, "--samples");
		if (takes && !val) {
			if (i + 1 >= argc) {
				fprintf(err, "iostrata %s: %s needs a value\n", verb, a);
				return 2;
			}
			val = argv[++i];
		}
		char key[40];
		snprintf(key, sizeof key, " %s ", a);
		if (a[0] == '-' && !strstr(want, key)) {
			fprintf(err, "iostrata %s: unknown option '%s' (%s)\n", verb, argv[i], want);
			return 2;
		}
		if (!strcmp(a, "--json"))
			o->json = 1;
		else if (!strcmp(a, "--csv"))
			o->csv = 1;
		else if (!strcmp(a, "--running"))
			o->running = 1;
		else if (!strcmp(a, "--devices"))
			o->devices = 1;
		else if (!strcmp(a, "--dists"))
			o->dists = 1;
		else if (!strcmp(a, "--again"))
			o->again = 1;
		else if (!strcmp(a, "--user"))
			o->user = val;
		else if (!strcmp(a, "--host"))
			o->host = val;
		else if (!strcmp(a, "--samples"))
			o->samples = val;
		else if (!strcmp(a, "--since") || !strcmp(a, "--until")) {
			int64_t *dst = a[2] == 's' ? &o->since : &o->until;
			if (store_parse_time(val, now, dst) < 0) {
				fprintf(err,
					"iostrata %s: %s '%s' is not a time (@EPOCH, YYYY-MM-DD[THH:MM[:SS]], or 90s, 10m, 2h, "
					"3d ago)\n",
					verb, a, val);
				return 2;
			}
		} else if (a[0] != '-' && (!strcmp(verb, "job") || !strcmp(verb, "diagnose")) && !o->job)
			o->job = a;
		else {
			fprintf(err, "iostrata %s: unexpected argument '%s'\n", verb, argv[i]);
			return 2;
		}
	}
	if (o->json && o->csv) {
		fprintf(err, "iostrata %s: --json and --csv exclude each other\n", verb);
		return 2;
	}
	return 0;
}

/* ---- jobs ---- */

struct jobs_ctx {
	FILE *out;
	int json;
	size_t n;
	struct ana_jw w;
};

static const char *job_state(const struct store_job *j)
{
	return j->running ? "running" : "ended";
}

void store_job_json(struct ana_jw *w, const struct store_job *j)
{
	ana_jw_str(w, "job", j->job);
	ana_jw_str(w, "host", j->host);
	ana_jw_u64(w, "uid", j->uid);
	ana_jw_str(w, "user", j->user);
	ana_jw_str(w, "state", job_state(j));
	ana_jw_i64(w, "start_ms", j->start_ms);
	if (j->end_ms)
		ana_jw_i64(w, "end_ms", j->end_ms);
	else
		ana_jw_null(w, "end_ms");
	ana_jw_u64(w, "processes", j->nprocs);
	ana_jw_str(w, "exe", j->exe);
	ana_jw_str(w, "jobdir", j->jobdir);
	ana_jw_u64(w, "bytes_read", j->bytes[STORE_CAT_READ]);
	ana_jw_u64(w, "bytes_written", j->bytes[STORE_CAT_WRITE]);
	ana_jw_u64(w, "reads", j->calls[STORE_CAT_READ]);
	ana_jw_u64(w, "writes", j->calls[STORE_CAT_WRITE]);
	ana_jw_u64(w, "meta_ops", j->calls[STORE_CAT_META]);
	if (j->sched) {
		ana_jw_open(w, "scheduler", '{');
		ana_jw_str(w, "name", j->sched);
		ana_jw_str(w, "job_name", j->sched_name);
		ana_jw_str(w, "state", j->sched_state);
		ana_jw_str(w, "nodes", j->sched_nodes);
		ana_jw_i64(w, "submit_ms", j->submit_ms);
		ana_jw_i64(w, "start_ms", j->sched_start_ms);
		ana_jw_i64(w, "end_ms", j->sched_end_ms);
		ana_jw_close(w, '}');
	} else {
		ana_jw_null(w, "scheduler");
	}
}

static int job_row(const struct store_job *j, void *arg)
{
	struct jobs_ctx *c = arg;
	if (c->json) {
		ana_jw_open(&c->w, NULL, '{');
		store_job_json(&c->w, j);
		ana_jw_close(&c->w, '}');
	} else {
		char st[32], en[32], rd[32], wr[32];
		if (c->n == 0)
			fprintf(c->out, "%-28s %-10s %-12s %-7s %-19s  %-19s %6s %10s %10s %9s  %s\n", "JOB", "USER", "HOST",
				"STATE", "START", "END", "PROCS", "READ", "WRITTEN", "META OPS", "COMMAND");
		fmt_time(st, sizeof st, j->start_ms);
		fmt_time(en, sizeof en, j->end_ms);
		fmt_bytes(rd, sizeof rd, j->bytes[STORE_CAT_READ]);
		fmt_bytes(wr, sizeof wr, j->bytes[STORE_CAT_WRITE]);
		fprintf(c->out, "%-28s %-10s %-12s %-7s %-19s  %-19s %6u %10s %10s %9" PRIu64 "  %s\n", j->job, j->user,
			j->host, job_state(j), st, en, j->nprocs, rd, wr, j->calls[STORE_CAT_META], j->exe);
	}
	c->n++;
	return 0;
}

/* A non-admin's filter is their uid, whatever they asked; an admin's --user is a name. */
static int user_filter(const struct store_caller *caller, const char *verb, const char *user,
		       struct store_job_filter *f, FILE *err)
{
	f->uid = caller->admin ? STORE_ANY_UID : caller->uid;
	if (!user)
		return 0;
	if (caller->admin) {
		f->user = user;
		return 0;
	}
	struct passwd pw, *res = NULL;
	char tmp[4096];
	if (getpwuid_r(caller->uid, &pw, tmp, sizeof tmp, &res) != 0 || !res || strcmp(res->pw_name, user)) {
		fprintf(err, "iostrata %s: --user %s: only an admin sees other users' jobs\n", verb, user);
		return 2;
	}
	return 0;
}

static int q_jobs(struct store *s, const struct store_caller *caller, int argc, char **argv, FILE *out, FILE *err)
{
	struct qopts o;
	int r = parse_opts("jobs", argc, argv, " --user --since --running --json ", &o, err);
	if (r)
		return r;
	struct store_job_filter f = {.since_ms = o.since, .running_only = o.running};
	if ((r = user_filter(caller, "jobs", o.user, &f, err)))
		return r;
	struct jobs_ctx c = {.out = out, .json = o.json, .w = {.f = out}};
	if (o.json) {
		ana_jw_open(&c.w, NULL, '{');
		ana_jw_open(&c.w, "jobs", '[');
	}
	r = store_jobs(s, &f, job_row, &c);
	if (o.json) {
		ana_jw_close(&c.w, ']');
		ana_jw_close(&c.w, '}');
		fputc('\n', out);
	} else if (c.n == 0 && r == 0) {
		fprintf(out, "no jobs\n");
	}
	if (r < 0) {
		fprintf(err, "iostrata jobs: %s\n", store_error(s));
		return 1;
	}
	return 0;
}

/* ---- job ---- */

struct one_ctx {
	struct store_job j;
	char *strs[8];
	size_t n;
	const char *host; /* --host: that host's row of the job only */
};

static int keep_job(const struct store_job *j, void *arg)
{
	struct one_ctx *c = arg;
	if (c->host && strcmp(j->host, c->host))
		return 0;
	c->n++;
	if (c->n > 1)
		return 0; /* counted, not kept */
	c->j = *j;
	const char **fields[] = {&c->j.job, &c->j.host, &c->j.user, &c->j.exe, &c->j.jobdir};
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		*fields[i] = c->strs[i] = strdup(*fields[i] ? *fields[i] : "");
	c->j.sched = c->j.sched_name = c->j.sched_state = c->j.sched_nodes = NULL;
	return 0;
}

/* The job o names (on o->host), as the caller may see it, into c: 0, or 1 with one line said (no
 * such job, a store error). Of several (hosts or users), the first, and a note. */
static int find_one(struct store *s, const struct store_caller *caller, const char *verb, const struct qopts *o,
		    struct one_ctx *c, FILE *err)
{
	struct store_job_filter f = {.uid = caller->admin ? STORE_ANY_UID : caller->uid, .job = o->job};
	memset(c, 0, sizeof *c);
	c->host = o->host;
	if (store_jobs(s, &f, keep_job, c) < 0) {
		fprintf(err, "iostrata %s: %s\n", verb, store_error(s));
		return 1;
	}
	if (c->n == 0) {
		fprintf(err, "iostrata %s: no job '%s'%s%s%s\n", verb, o->job, o->host ? " on " : "", o->host ? o->host : "",
			caller->admin ? "" : " of yours");
		return 1;
	}
	if (c->n > 1)
		fprintf(err, "iostrata %s: %zu jobs named '%s' (hosts or users); showing the first: see iostrata jobs\n",
			verb, c->n, o->job);
	return 0;
}

static int q_job(struct store *s, const struct store_caller *caller, int argc, char **argv, FILE *out, FILE *err)
{
	struct qopts o;
	int r = parse_opts("job", argc, argv, " --json --host ", &o, err);
	if (r)
		return r;
	if (!o.job) {
		fprintf(err, "iostrata job: which job? (iostrata job ID; iostrata jobs lists them)\n");
		return 2;
	}
	struct one_ctx c;
	if ((r = find_one(s, caller, "job", &o, &c, err)))
		goto out;
	char *rep = NULL;
	if ((r = store_job_report(s, c.j.key, o.json, &rep)) < 0) {
		fprintf(err, "iostrata job: %s\n", store_error(s));
		r = 1;
		goto out;
	}
	if (rep) {
		fputs(rep, out);
		free(rep);
		r = 0;
		goto out;
	}
	/* no report yet: the job runs (or its report could not be made); what the intervals say */
	if (o.json) {
		struct jobs_ctx jc = {.out = out, .json = 1, .w = {.f = out}};
		job_row(&c.j, &jc);
		fputc('\n', out);
	} else {
		char rd[32], wr[32];
		fmt_bytes(rd, sizeof rd, c.j.bytes[STORE_CAT_READ]);
		fmt_bytes(wr, sizeof wr, c.j.bytes[STORE_CAT_WRITE]);
		fprintf(out, "job %s on %s (%s): %s, %u processes so far; no report yet\n", c.j.job, c.j.host, c.j.user,
			job_state(&c.j), c.j.nprocs);
		fprintf(out, "  user layers: %" PRIu64 " reads (%s), %" PRIu64 " writes (%s), %" PRIu64 " metadata ops\n",
			c.j.calls[STORE_CAT_READ], rd, c.j.calls[STORE_CAT_WRITE], wr, c.j.calls[STORE_CAT_META]);
	}
	r = 0;
out:
	for (size_t i = 0; i < 8; i++)
		free(c.strs[i]);
	return r;
}

/* ---- diagnose ---- */

static int q_diagnose(struct store *s, const struct store_caller *caller, int argc, char **argv, FILE *out, FILE *err)
{
	struct qopts o;
	int r = parse_opts("diagnose", argc, argv, " --json --host --again ", &o, err);
	if (r)
		return r;
	if (!o.job) {
		fprintf(err, "iostrata diagnose: which job? (iostrata diagnose ID; iostrata jobs lists them)\n");
		return 2;
	}
	struct one_ctx c;
	if ((r = find_one(s, caller, "diagnose", &o, &c, err)))
		goto out;
	/* the diagnosis made when the job ended, unless asked to make it again (a store of an older
	 * schema has none: it is made now) */
	char *stored = NULL;
	if (!o.again && (r = store_diagnosis_get(s, c.j.key, o.json, &stored)) < 0) {
		fprintf(err, "iostrata diagnose: %s\n", r == -ENOMEM ? "out of memory" : store_error(s));
		r = 1;
		goto out;
	}
	if (stored) {
		fputs(stored, out);
		if (o.json)
			fputc('\n', out);
		free(stored);
		r = 0;
		goto out;
	}
	struct store_diagnosis d;
	if ((r = store_diagnose(s, &c.j, &d)) < 0) {
		fprintf(err, "iostrata diagnose: %s\n", r == -ENOMEM ? "out of memory" : store_error(s));
		r = 1;
		goto out;
	}
	if (o.json) {
		struct ana_jw w = {.f = out};
		ana_jw_open(&w, NULL, '{');
		store_diagnosis_json(&w, &c.j, &d);
		ana_jw_close(&w, '}');
		fputc('\n', out);
	} else {
		store_diagnosis_text(out, &c.j, &d);
	}
	store_diagnosis_free(&d);
	r = 0;
out:
	for (size_t i = 0; i < 8; i++)
		free(c.strs[i]);
	return r;
}

/* ---- node ---- */

struct node_ctx {
	FILE *out;
	int json, csv;
	size_t n;
	struct ana_jw w;
};

static void hist_json(struct ana_jw *w, const char *key, const uint64_t *h)
{
	unsigned used = store_hist_used(h);
	ana_jw_open(w, key, '[');
	for (unsigned b = 0; b < used; b++)
		ana_jw_u64(w, NULL, h[b]);
	ana_jw_close(w, ']');
}

static void hist_csv(FILE *f, const uint64_t *h)
{
	unsigned used = store_hist_used(h);
	fputc('"', f);
	for (unsigned b = 0; b < used; b++)
		fprintf(f, "%s%" PRIu64, b ? "," : "", h[b]);
	fputc('"', f);
}

void store_node_sec_json(struct ana_jw *w, const struct store_node_sec *ns)
{
	double secs = ns->dt_ms > 0 ? (double)ns->dt_ms / 1000.0 : 1.0;
	ana_jw_i64(w, "t_ms", ns->t_ms);
	ana_jw_i64(w, "dt_ms", ns->dt_ms);
	ana_jw_str(w, "host", ns->host);
	ana_jw_str(w, "layer", log_layer_name(ns->layer));
	ana_jw_u64(w, "bytes_read", ns->bytes_read);
	ana_jw_u64(w, "bytes_written", ns->bytes_written);
	ana_jw_u64(w, "reads", ns->reads);
	ana_jw_u64(w, "writes", ns->writes);
	ana_jw_u64(w, "meta_ops", ns->meta_ops);
	ana_jw_double(w, "read_bw", (double)ns->bytes_read / secs);
	ana_jw_double(w, "write_bw", (double)ns->bytes_written / secs);
	ana_jw_double(w, "iops", (double)(ns->reads + ns->writes) / secs);
	ana_jw_double(w, "mdops", (double)ns->meta_ops / secs);
	hist_json(w, "read_sizes", ns->read_hist);
	hist_json(w, "write_sizes", ns->write_hist);
}

static int node_row(const struct store_node_sec *ns, void *arg)
{
	struct node_ctx *c = arg;
	double secs = ns->dt_ms > 0 ? (double)ns->dt_ms / 1000.0 : 1.0;
	const char *layer = log_layer_name(ns->layer);
	if (c->json) {
		ana_jw_open(&c->w, NULL, '{');
		store_node_sec_json(&c->w, ns);
		ana_jw_close(&c->w, '}');
	} else if (c->csv) {
		if (c->n == 0)
			fprintf(c->out, "t_ms,dt_ms,host,layer,bytes_read,bytes_written,reads,writes,meta_ops,read_bw,write_bw,"
					"iops,mdops,read_sizes,write_sizes\n");
		fprintf(c->out, "%" PRId64 ",%" PRId64 ",%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%.1f,%.1f,%.1f,%.1f,",
			ns->t_ms, ns->dt_ms, ns->host, layer, ns->bytes_read, ns->bytes_written, ns->reads, ns->writes,
			ns->meta_ops, (double)ns->bytes_read / secs, (double)ns->bytes_written / secs,
			(double)(ns->reads + ns->writes) / secs, (double)ns->meta_ops / secs);
		hist_csv(c->out, ns->read_hist);
		fputc(',', c->out);
		hist_csv(c->out, ns->write_hist);
		fputc('\n', c->out);
	} else {
		char t[32], rb[32], wb[32];
		if (c->n == 0)
			fprintf(c->out, "%-19s %-12s %-9s %12s %12s %9s %9s %9s\n", "TIME", "HOST", "LAYER", "READ/s", "WRITE/s",
				"IOPS", "MDOPS/s", "SECONDS");
		fmt_time(t, sizeof t, ns->t_ms);
		fmt_bytes(rb, sizeof rb, (uint64_t)((double)ns->bytes_read / secs));
		fmt_bytes(wb, sizeof wb, (uint64_t)((double)ns->bytes_written / secs));
		fprintf(c->out, "%-19s %-12s %-9s %12s %12s %9.0f %9.0f %9.3f\n", t, ns->host, layer, rb, wb,
			(double)(ns->reads + ns->writes) / secs, (double)ns->meta_ops / secs, secs);
	}
	c->n++;
	return 0;
}

void store_device_json(struct ana_jw *w, const struct store_device_sample *d)
{
	ana_jw_i64(w, "t_ms", d->t_ms);
	ana_jw_i64(w, "dt_ms", d->dt_ms);
	ana_jw_str(w, "host", d->host);
	ana_jw_str(w, "device", d->device);
	ana_jw_u64(w, "reads", d->reads);
	ana_jw_u64(w, "sectors_read", d->sectors_read);
	ana_jw_u64(w, "ms_reading", d->ms_reading);
	ana_jw_u64(w, "writes", d->writes);
	ana_jw_u64(w, "sectors_written", d->sectors_written);
	ana_jw_u64(w, "ms_writing", d->ms_writing);
	ana_jw_u64(w, "in_flight", d->in_flight);
	ana_jw_u64(w, "ms_io", d->ms_io);
	ana_jw_u64(w, "ms_weighted", d->ms_weighted);
	ana_jw_u64(w, "discards", d->discards);
	ana_jw_u64(w, "flushes", d->flushes);
}

static int device_row(const struct store_device_sample *d, void *arg)
{
	struct node_ctx *c = arg;
	if (c->json) {
		ana_jw_open(&c->w, NULL, '{');
		store_device_json(&c->w, d);
		ana_jw_close(&c->w, '}');
	} else if (c->csv) {
		if (c->n == 0)
			fprintf(c->out, "t_ms,dt_ms,host,device,reads,sectors_read,ms_reading,writes,sectors_written,ms_writing,"
					"in_flight,ms_io,ms_weighted,discards,flushes\n");
		fprintf(c->out,
			"%" PRId64 ",%" PRId64 ",%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
			d->t_ms, d->dt_ms, d->host, d->device, d->reads, d->sectors_read, d->ms_reading, d->writes,
			d->sectors_written, d->ms_writing, d->in_flight, d->ms_io, d->ms_weighted, d->discards, d->flushes);
	} else {
		char t[32];
		if (c->n == 0)
			fprintf(c->out, "%-19s %-12s %-10s %9s %12s %9s %12s %9s %7s\n", "TIME", "HOST", "DEVICE", "READS",
				"READ BYTES", "WRITES", "WRITE BYTES", "BUSY ms", "QUEUE");
		fmt_time(t, sizeof t, d->t_ms);
		fprintf(c->out, "%-19s %-12s %-10s %9" PRIu64 " %12" PRIu64 " %9" PRIu64 " %12" PRIu64 " %9" PRIu64 " %7" PRIu64 "\n",
			t, d->host, d->device, d->reads, d->sectors_read * 512, d->writes, d->sectors_written * 512, d->ms_io,
			d->in_flight);
	}
	c->n++;
	return 0;
}

void store_sample_json(struct ana_jw *w, const struct store_sample *x)
{
	ana_jw_i64(w, "t_ms", x->t_ms);
	ana_jw_i64(w, "dt_ms", x->dt_ms);
	ana_jw_str(w, "host", x->host);
	ana_jw_str(w, "source", x->source);
	ana_jw_str(w, "instance", x->instance);
	ana_jw_str(w, "metric", x->metric);
	ana_jw_i64(w, "value", x->value);
	ana_jw_str(w, "kind", x->gauge ? "gauge" : "delta");
}

static int sample_row(const struct store_sample *x, void *arg)
{
	struct node_ctx *c = arg;
	if (c->json) {
		ana_jw_open(&c->w, NULL, '{');
		store_sample_json(&c->w, x);
		ana_jw_close(&c->w, '}');
	} else if (c->csv) {
		if (c->n == 0)
			fprintf(c->out, "t_ms,dt_ms,host,source,instance,metric,value,kind\n");
		fprintf(c->out, "%" PRId64 ",%" PRId64 ",%s,%s,\"%s\",%s,%" PRId64 ",%s\n", x->t_ms, x->dt_ms, x->host,
			x->source, x->instance, x->metric, x->value, x->gauge ? "gauge" : "delta");
	} else {
		char t[32];
		if (c->n == 0)
			fprintf(c->out, "%-19s %-12s %-7s %-40s %-36s %14s %s\n", "TIME", "HOST", "SOURCE", "INSTANCE",
				"METRIC", "VALUE", "KIND");
		fmt_time(t, sizeof t, x->t_ms);
		fprintf(c->out, "%-19s %-12s %-7s %-40s %-36s %14" PRId64 " %s\n", t, x->host, x->source, x->instance,
			x->metric, x->value, x->gauge ? "gauge" : "delta");
	}
	c->n++;
	return 0;
}

static int dist_row(const struct store_dist *x, void *arg)
{
	struct node_ctx *c = arg;
	if (c->json) {
		struct ana_jw *w = &c->w;
		ana_jw_open(w, NULL, '{');
		ana_jw_i64(w, "t_ms", x->t_ms);
		ana_jw_str(w, "host", x->host);
		ana_jw_str(w, "server", x->server);
		ana_jw_str(w, "op", x->op);
		ana_jw_u64(w, "requests", x->requests);
		ana_jw_u64(w, "timed", x->timed);
		hist_json(w, "wait_ns_log2", x->wait);
		hist_json(w, "service_ns_log2", x->service);
		ana_jw_close(w, '}');
	} else if (c->csv) {
		if (c->n == 0)
			fprintf(c->out, "t_ms,host,server,op,requests,timed,wait_ns_log2,service_ns_log2\n");
		fprintf(c->out, "%" PRId64 ",%s,\"%s\",%s,%" PRIu64 ",%" PRIu64 ",", x->t_ms, x->host, x->server, x->op,
			x->requests, x->timed);
		hist_csv(c->out, x->wait);
		fputc(',', c->out);
		hist_csv(c->out, x->service);
		fputc('\n', c->out);
	} else {
		char t[32];
		if (c->n == 0)
			fprintf(c->out, "%-19s %-12s %-16s %-6s %9s %9s  %s\n", "TIME", "HOST", "SERVER", "OP", "REQUESTS",
				"TIMED", "WAIT p50/p99 < ... SERVICE p50/p99 < (ns, log2 bucket bounds, of the timed)");
		fmt_time(t, sizeof t, x->t_ms);
		uint64_t b[4];
		const uint64_t *h[2] = {x->wait, x->service};
		for (int k = 0; k < 2; k++) {
			uint64_t n = 0, acc = 0;
			for (int i = 0; i < STORE_HIST; i++)
				n += h[k][i];
			b[2 * k] = b[2 * k + 1] = 0;
			for (int i = 0; i < STORE_HIST; i++) {
				acc += h[k][i];
				if (!b[2 * k] && 2 * acc >= n)
					b[2 * k] = 1ull << i;
				if (!b[2 * k + 1] && 100 * acc >= 99 * n) {
					b[2 * k + 1] = 1ull << i;
					break;
				}
			}
		}
		fprintf(c->out, "%-19s %-12s %-16s %-6s %9" PRIu64 " %9" PRIu64 "  %" PRIu64 "/%" PRIu64 " ... %" PRIu64
			"/%" PRIu64 "\n", t, x->host, x->server, x->op, x->requests, x->timed, b[0], b[1], b[2], b[3]);
	}
	c->n++;
	return 0;
}

static int q_node(struct store *s, const struct store_caller *caller, int argc, char **argv, FILE *out, FILE *err)
{
	struct qopts o;
	int r = parse_opts("node", argc, argv, " --since --until --host --json --csv --devices --samples --dists ", &o, err);
	if (r)
		return r;
	const char *which = o.devices ? "--devices" : o.samples ? "--samples" : o.dists ? "--dists" : NULL;
	if (which && !caller->admin) {
		fprintf(err, "iostrata node: %s: the node's own figures are for admins (you see your own I/O)\n", which);
		return 2;
	}
	if (o.devices + !!o.samples + o.dists > 1) {
		fprintf(err, "iostrata node: --devices, --samples and --dists exclude each other\n");
		return 2;
	}
	struct store_node_filter f = {.host = o.host, .since_ms = o.since, .until_ms = o.until};
	struct node_ctx c = {.out = out, .json = o.json, .csv = o.csv, .w = {.f = out}};
	if (o.json) {
		ana_jw_open(&c.w, NULL, '{');
		ana_jw_bool(&c.w, "own_only", !caller->admin);
		ana_jw_open(&c.w, o.devices ? "devices" : o.samples ? "samples" : o.dists ? "distributions" : "seconds", '[');
	}
	if (o.devices)
		r = store_devices(s, &f, device_row, &c);
	else if (o.dists)
		r = store_dists(s, &f, dist_row, &c);
	else if (o.samples)
		r = store_samples(s, &f, strcmp(o.samples, "all") ? o.samples : NULL, sample_row, &c);
	else if (caller->admin)
		r = store_node_secs(s, &f, node_row, &c);
	else
		r = store_user_secs(s, caller->uid, &f, node_row, &c);
	if (o.json) {
		ana_jw_close(&c.w, ']');
		ana_jw_close(&c.w, '}');
		fputc('\n', out);
	} else if (!o.csv && c.n == 0 && r == 0) {
		fprintf(out, "no records%s\n", caller->admin ? "" : " of your processes");
	}
	if (r < 0) {
		fprintf(err, "iostrata node: %s\n", store_error(s));
		return 1;
	}
	return 0;
}

int store_query(struct store *s, const struct store_caller *caller, int argc, char **argv, FILE *out, FILE *err)
{
	if (argc < 1) {
		fprintf(err, "iostrata: no query\n");
		return 2;
	}
	if (!strcmp(argv[0], "jobs"))
		return q_jobs(s, caller, argc, argv, out, err);
	if (!strcmp(argv[0], "job"))
		return q_job(s, caller, argc, argv, out, err);
	if (!strcmp(argv[0], "node"))
		return q_node(s, caller, argc, argv, out, err);
	if (!strcmp(argv[0], "diagnose"))
		return q_diagnose(s, caller, argc, argv, out, err);
	fprintf(err, "iostrata: unknown query '%s' (jobs, job, node, diagnose)\n", argv[0]);
	return 2;
}
