/* SPDX-License-Identifier: MIT */
/*
 * The facility's store on PostgreSQL (store.h, "postgresql://..." or "postgres://..."): the same
 * schema and the same meaning of every operation as sqlite.c, over libpq. What differs is how rows
 * travel: interval statistics, node-seconds, device samples, samples and distributions are kept in
 * memory between store_begin and store_commit and sent with COPY into temporary staging tables,
 * then merged with one INSERT ... ON CONFLICT per table (a round trip per row costs more than the
 * row). intervals and node_seconds are partitioned by UTC day; a day's partition is made before
 * the first row of that day lands, and retention drops whole days. Jobs and processes carry the
 * batch sequence that wrote them (store.h's seq) so that batches applied out of order keep the
 * newest facts. Errors map SQLSTATEs to errno values as sqlite.c maps SQLite's codes. A password
 * never appears in an error: the URL is printed with it redacted. It does not decide what to
 * store, and it makes no role or database: docs/STORE.md says what the administrator creates.
 */
#include "store/backend.h"

#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/archive.h"

#define DAY_MS INT64_C(86400000)
/* Rows kept in memory before a flush inside a transaction: about 10 MB of COPY text. */
#define PG_FLUSH_ROWS 50000

/* The buffered tables, in the order a flush merges them. */
enum pg_buf { BUF_INTERVALS, BUF_NODE_SECONDS, BUF_DEVICES, BUF_SAMPLES, BUF_DISTS, BUF_RUNS, NBUF };

struct copy_buf {
	char *data;
	size_t len, cap;
	size_t rows;
	int64_t *days; /* days of its rows whose partition this connection has not seen yet */
	size_t ndays, capdays;
};

static const struct store_ops store_pg_ops;

struct store {
	const struct store_ops *ops; /* first: backend.h */
	PGconn *db;
	char name[512]; /* the URL, password redacted: what errors print */
	char err[768];
	int readonly, in_tx, staged;
	int64_t ord; /* the order rows were added in: the last of a key wins, as in SQLite */
	struct copy_buf buf[NBUF];
	size_t buffered;
	int64_t *days; /* days whose partitions exist (both partitioned tables) */
	size_t ndays, capdays;
	/* roll-ups: this transaction's latest interval end and node-second per host; where the
	 * minutes stood when last seen (a lower guess only makes a close that finds nothing) */
	int rollup_locked;
	int64_t iv_max_t, iv_upto;
	struct pg_host {
		char *host;
		int64_t max_t, upto;
	} *hosts;
	size_t nhosts, caphosts;
};

/* ---------- schema ---------- */

/* Migrations by the version they make. A new store starts at the first; PostgreSQL's history
 * begins at version 5 (SQLite's versions 1 to 4 never existed here). */
struct migration {
	int version;
	const char *sql;
};

#define INTERVAL_STATS_VIEW                                                                                    \
	"CREATE VIEW interval_stats AS SELECT i.t_ms, i.dt_ms, j.job, p.host, j.\"user\", p.uid, p.pid, p.rank, p.exe," \
	" f.path AS file, i.layer, CASE i.cat WHEN 0 THEN 'read' WHEN 1 THEN 'write' ELSE 'metadata' END AS category," \
	" i.bytes, i.calls, i.dur_ns, CASE WHEN i.calls > 0 THEN i.bytes / i.calls ELSE 0 END AS bytes_per_call"    \
	" FROM intervals i JOIN processes p ON p.id = i.proc_id JOIN jobs j ON j.id = p.job_id"                       \
	" JOIN files f ON f.id = i.file_id;"

static const struct migration migrations[] = {
	{5,
	 "CREATE TABLE jobs("
	 " id bigserial PRIMARY KEY, job text NOT NULL, host text NOT NULL, uid bigint NOT NULL,"
	 " \"user\" text NOT NULL DEFAULT '', exe text NOT NULL DEFAULT '', jobdir text NOT NULL DEFAULT '',"
	 " start_ms bigint NOT NULL DEFAULT 0, end_ms bigint NOT NULL DEFAULT 0, running bigint NOT NULL DEFAULT 1,"
	 " bytes_read bigint NOT NULL DEFAULT 0, bytes_written bigint NOT NULL DEFAULT 0,"
	 " bytes_meta bigint NOT NULL DEFAULT 0, reads bigint NOT NULL DEFAULT 0,"
	 " writes bigint NOT NULL DEFAULT 0, meta_ops bigint NOT NULL DEFAULT 0,"
	 " sched text, sched_name text, sched_state text, sched_nodes text,"
	 " submit_ms bigint, sched_start_ms bigint, sched_end_ms bigint,"
	 " report_text text, report_json text, report_ms bigint, seq bigint NOT NULL DEFAULT 0,"
	 " UNIQUE(job, host, uid));"
	 "CREATE INDEX jobs_uid ON jobs(uid, start_ms);"
	 "CREATE TABLE processes("
	 " id bigserial PRIMARY KEY, job_id bigint NOT NULL REFERENCES jobs(id), host text NOT NULL,"
	 " pid bigint NOT NULL, rank bigint NOT NULL, start_ns bigint NOT NULL, start_ticks bigint NOT NULL,"
	 " uid bigint NOT NULL, exe text NOT NULL, live_path text NOT NULL, final_path text NOT NULL,"
	 " start_ms bigint NOT NULL, end_ms bigint NOT NULL, state bigint NOT NULL, cursor bytea,"
	 " seq bigint NOT NULL DEFAULT 0, UNIQUE(host, pid, start_ns));"
	 "CREATE INDEX processes_job ON processes(job_id);"
	 "CREATE INDEX processes_open ON processes(host) WHERE state = 0;"
	 "CREATE TABLE files(id bigserial PRIMARY KEY, path text NOT NULL UNIQUE);"
	 "CREATE TABLE intervals("
	 " t_ms bigint NOT NULL, dt_ms bigint NOT NULL, proc_id bigint NOT NULL, file_id bigint NOT NULL,"
	 " layer bigint NOT NULL, cat bigint NOT NULL, bytes bigint NOT NULL, calls bigint NOT NULL,"
	 " dur_ns bigint NOT NULL, PRIMARY KEY(t_ms, proc_id, file_id, layer, cat)) PARTITION BY RANGE (t_ms);"
	 "CREATE TABLE intervals_minute("
	 " t_ms bigint NOT NULL, proc_id bigint NOT NULL, file_id bigint NOT NULL, layer bigint NOT NULL,"
	 " cat bigint NOT NULL, bytes bigint NOT NULL, calls bigint NOT NULL, dur_ns bigint NOT NULL,"
	 " PRIMARY KEY(t_ms, proc_id, file_id, layer, cat));"
	 "CREATE TABLE node_seconds("
	 " t_ms bigint NOT NULL, dt_ms bigint NOT NULL, host text NOT NULL, layer bigint NOT NULL,"
	 " bytes_read bigint NOT NULL, bytes_written bigint NOT NULL, reads bigint NOT NULL,"
	 " writes bigint NOT NULL, meta_ops bigint NOT NULL, read_hist text NOT NULL, write_hist text NOT NULL,"
	 " PRIMARY KEY(host, t_ms, layer)) PARTITION BY RANGE (t_ms);"
	 "CREATE TABLE node_minutes("
	 " t_ms bigint NOT NULL, host text NOT NULL, layer bigint NOT NULL,"
	 " bytes_read bigint NOT NULL, bytes_written bigint NOT NULL, reads bigint NOT NULL,"
	 " writes bigint NOT NULL, meta_ops bigint NOT NULL, PRIMARY KEY(host, t_ms, layer));"
	 "CREATE TABLE device_samples("
	 " t_ms bigint NOT NULL, dt_ms bigint NOT NULL, host text NOT NULL, device text NOT NULL,"
	 " major bigint NOT NULL, minor bigint NOT NULL, reads bigint NOT NULL, reads_merged bigint NOT NULL,"
	 " sectors_read bigint NOT NULL, ms_reading bigint NOT NULL, writes bigint NOT NULL,"
	 " writes_merged bigint NOT NULL, sectors_written bigint NOT NULL, ms_writing bigint NOT NULL,"
	 " in_flight bigint NOT NULL, ms_io bigint NOT NULL, ms_weighted bigint NOT NULL,"
	 " discards bigint NOT NULL, sectors_discarded bigint NOT NULL, flushes bigint NOT NULL,"
	 " PRIMARY KEY(host, t_ms, device));"
	 "CREATE TABLE samples("
	 " t_ms bigint NOT NULL, dt_ms bigint NOT NULL, host text NOT NULL, source text NOT NULL,"
	 " instance text NOT NULL, metric text NOT NULL, value bigint NOT NULL, gauge bigint NOT NULL,"
	 " PRIMARY KEY(host, t_ms, source, instance, metric));"
	 "CREATE TABLE server_dists("
	 " t_ms bigint NOT NULL, host text NOT NULL, server text NOT NULL, op text NOT NULL,"
	 " requests bigint NOT NULL, wait_hist text NOT NULL, service_hist text NOT NULL,"
	 " PRIMARY KEY(host, t_ms, server, op));"
	 /* (timed: schema 15) */
	 "CREATE TABLE findings(job_id bigint NOT NULL REFERENCES jobs(id), seq bigint NOT NULL,"
	 " finding text NOT NULL, PRIMARY KEY(job_id, seq));" INTERVAL_STATS_VIEW},
	/* 6: the node batches an ingest applied (SQLite's outbox and counters are the daemon's: not here) */
	{6, "CREATE TABLE batches(host text NOT NULL, seq bigint NOT NULL, PRIMARY KEY(host, seq));"},
	/* 7: traced processes' runs (seed 001's merged records), once each */
	{7, "CREATE TABLE runs(proc_id bigint NOT NULL, tid bigint NOT NULL, idx bigint NOT NULL, t_ms bigint NOT NULL,"
	    " file_id bigint NOT NULL, layer bigint NOT NULL, op bigint NOT NULL, off bigint NOT NULL,"
	    " size bigint NOT NULL, count bigint NOT NULL, start_ns bigint NOT NULL, end_ns bigint NOT NULL,"
	    " busy_ns bigint NOT NULL, min_ns bigint NOT NULL, result bigint NOT NULL,"
	    " PRIMARY KEY(proc_id, tid, idx));"
	    "CREATE INDEX runs_t ON runs(t_ms);"},
	/* 8: the web API's reads, as SQLite's 8 (docs/STORE.md,
	 * "Indexes"); on the partitioned table, every day's partition gets its own */
	{8, "CREATE INDEX IF NOT EXISTS intervals_proc ON intervals(proc_id, t_ms);"
	    "CREATE INDEX IF NOT EXISTS intervals_minute_proc ON intervals_minute(proc_id, t_ms);"
	    "CREATE INDEX IF NOT EXISTS jobs_list ON jobs(start_ms, id) INCLUDE (uid, running, end_ms, \"user\", exe);"
	    "CREATE INDEX IF NOT EXISTS jobs_end ON jobs(end_ms);"},
	/* 9: as SQLite's 9 (docs/STORE.md, "Roll-ups and windows"): the processes' windows instead
	 * of the index on intervals(proc_id, t_ms), the minute roll-ups kept as rows arrive, where
	 * they stand in rollup */
	{9, "ALTER TABLE processes ADD COLUMN first_ms bigint NOT NULL DEFAULT 0,"
	    " ADD COLUMN last_ms bigint NOT NULL DEFAULT 0;"
	    "UPDATE processes p SET first_ms = x.lo, last_ms = x.hi FROM (SELECT proc_id, min(t_ms) AS lo,"
	    " max(t_ms) AS hi FROM intervals GROUP BY proc_id) x WHERE p.id = x.proc_id;"
	    "DROP INDEX IF EXISTS intervals_proc;"
	    "CREATE TABLE rollup(name text PRIMARY KEY, upto_ms bigint NOT NULL);"
	    "INSERT INTO rollup SELECT 'raw:intervals', coalesce(max(t_ms) + 60000, 0) FROM intervals_minute;"
	    "INSERT INTO rollup SELECT 'raw:node_seconds', coalesce(max(t_ms) + 60000, 0) FROM node_minutes;"
	    "INSERT INTO intervals_minute(t_ms, proc_id, file_id, layer, cat, bytes, calls, dur_ns)"
	    " SELECT t_ms / 60000 * 60000, proc_id, file_id, layer, cat, sum(bytes), sum(calls), sum(dur_ns) FROM intervals"
	    " GROUP BY 1, 2, 3, 4, 5 ON CONFLICT(t_ms, proc_id, file_id, layer, cat) DO UPDATE SET"
	    " bytes = intervals_minute.bytes + excluded.bytes, calls = intervals_minute.calls + excluded.calls,"
	    " dur_ns = intervals_minute.dur_ns + excluded.dur_ns;"
	    "INSERT INTO rollup SELECT 'intervals', greatest(coalesce(max(t_ms) / 60000 * 60000 + 60000, 0),"
	    " (SELECT upto_ms FROM rollup WHERE name = 'raw:intervals')) FROM intervals;"
	    "INSERT INTO node_minutes(t_ms, host, layer, bytes_read, bytes_written, reads, writes, meta_ops)"
	    " SELECT t_ms / 60000 * 60000, host, layer, sum(bytes_read), sum(bytes_written), sum(reads), sum(writes),"
	    " sum(meta_ops) FROM node_seconds GROUP BY 1, 2, 3 ON CONFLICT(host, t_ms, layer) DO UPDATE SET"
	    " bytes_read = node_minutes.bytes_read + excluded.bytes_read,"
	    " bytes_written = node_minutes.bytes_written + excluded.bytes_written, reads = node_minutes.reads + excluded.reads,"
	    " writes = node_minutes.writes + excluded.writes, meta_ops = node_minutes.meta_ops + excluded.meta_ops;"
	    "INSERT INTO rollup SELECT 'node:' || host, greatest(max(t_ms) / 60000 * 60000 + 60000,"
	    " (SELECT upto_ms FROM rollup WHERE name = 'raw:node_seconds')) FROM node_seconds GROUP BY host;"},
	/* 10: a job's diagnosis with its application key and scale, as SQLite's 10 */
	{10, "CREATE TABLE diagnoses(job_id bigint PRIMARY KEY REFERENCES jobs(id), app text NOT NULL,"
	     " ranks bigint NOT NULL, start_ms bigint NOT NULL, t_ms bigint NOT NULL, anomalies bigint NOT NULL,"
	     " text text NOT NULL, json text NOT NULL);"
	     "CREATE INDEX diagnoses_app ON diagnoses(app, ranks, start_ms);"
	     "CREATE INDEX diagnoses_alerts ON diagnoses(t_ms) WHERE anomalies > 0;"
	     "CREATE INDEX jobs_reported ON jobs(report_ms) WHERE report_json IS NOT NULL;"},
	/* 11: the node's cursor, as SQLite's 11 (docs/STORE.md, "Two cadences") */
	{11, "CREATE TABLE node_cursor(host text PRIMARY KEY, t_ms bigint NOT NULL, data bytea NOT NULL);"},
	/* 12: a process's interval statistics summed over its files, keyed by the process, as
	 * SQLite's 12 (docs/STORE.md, "A job's series"); not partitioned: retention deletes a
	 * process's rows by its key */
	{12, "CREATE TABLE proc_intervals(proc_id bigint NOT NULL, t_ms bigint NOT NULL, layer bigint NOT NULL,"
	     " cat bigint NOT NULL, bytes bigint NOT NULL, calls bigint NOT NULL, dur_ns bigint NOT NULL,"
	     " PRIMARY KEY(proc_id, t_ms, layer, cat));"
	     "INSERT INTO proc_intervals SELECT proc_id, t_ms, layer, cat, sum(bytes), sum(calls), sum(dur_ns)"
	     " FROM intervals WHERE t_ms >= coalesce((SELECT upto_ms FROM rollup WHERE name = 'raw:intervals'), 0)"
	     " GROUP BY 1, 2, 3, 4;"},
	/* 13: a diagnosis' host and the job rows it saw, as SQLite's 13; job_id ends the index (the
	 * order's tie-break: no sort) */
	{13, "ALTER TABLE diagnoses ADD COLUMN host text NOT NULL DEFAULT '',"
	     " ADD COLUMN job_rows bigint NOT NULL DEFAULT 0;"
	     "UPDATE diagnoses d SET host = j.host, job_rows = (SELECT count(*) FROM jobs k WHERE k.job = j.job"
	     " AND k.uid = j.uid AND k.running = 0 AND k.report_json IS NOT NULL) FROM jobs j WHERE j.id = d.job_id;"
	     "CREATE INDEX diagnoses_host ON diagnoses(host, start_ms, job_id);"},
	/* 14: a process's interval row keeps the interval's length, as SQLite's 14 */
	{14, "ALTER TABLE proc_intervals ADD COLUMN dt_ms bigint NOT NULL DEFAULT 0;"},
	/* 15: a distribution's timed requests, as SQLite's 17 (every record before timed them all) */
	{15, "ALTER TABLE server_dists ADD COLUMN timed bigint NOT NULL DEFAULT 0;"
	     "UPDATE server_dists SET timed = requests;"},
};
#define NMIGRATIONS (sizeof migrations / sizeof migrations[0])

/* A new schema version needs its migration here too: this fails until it has one. */
_Static_assert(STORE_SCHEMA_VERSION == 15, "migrations[] ends at version 15");

/* Any number, so long as every iostrata connection takes the same: schema changes (migrations,
 * a day's partition) are made by one connection at a time. */
#define SCHEMA_LOCK "SELECT pg_advisory_xact_lock(7305916021)"
/* The minute roll-ups (docs/STORE.md, "Roll-ups and windows"): a transaction that writes raw rows
 * holds it shared from its first flush (before it may take SCHEMA_LOCK: one order everywhere) to
 * its end; closing minutes holds it alone, so every raw row of a minute it closes is committed
 * and seen, and a row that comes later finds the minute closed and adds to it itself. */
#define ROLLUP_LOCK_KEY "7305916022"

/* ---------- errors ---------- */

static const char *pg_error(const struct store *s)
{
	return s ? s->err : "no store";
}

/* The URL as errors print it: the password of "user:PASSWORD@" and of "password=..." in its
 * query replaced by "***". */
static void redact_url(char *out, size_t len, const char *url)
{
	const char *auth = strstr(url, "://"), *at = NULL, *colon = NULL;
	size_t n = 0;
	int query = 0;
	if (auth) {
		auth += 3;
		at = memrchr(auth, '@', strcspn(auth, "/?#"));
		colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
	}
	for (const char *p = url; *p && n + 16 < len; p++) {
		out[n++] = *p;
		if (*p == '?')
			query = 1;
		if (p == colon || (query && (*p == '?' || *p == '&') && !strncmp(p + 1, "password=", 9))) {
			if (p != colon) {
				memcpy(out + n, "password=", 9);
				n += 9;
				p += 9;
			}
			memcpy(out + n, "***", 3);
			n += 3;
			/* on to the '@' or the next parameter */
			p = p == colon ? at - 1 : p + strcspn(p + 1, "&#");
		}
	}
	out[n] = 0;
}

/* SQLSTATE classes to the errno values store.h promises. */
static int map_state(const char *st)
{
	if (!st)
		return -EIO;
	if (!strcmp(st, "53100"))
		return -ENOSPC; /* disk_full */
	if (!strcmp(st, "25006"))
		return -EROFS; /* read_only_sql_transaction */
	if (!strcmp(st, "42501") || !strncmp(st, "28", 2))
		return -EACCES; /* insufficient_privilege, invalid authorization */
	if (!strncmp(st, "08", 2) || !strcmp(st, "57P01") || !strcmp(st, "57P02") || !strcmp(st, "57P03"))
		return -ECONNREFUSED; /* connection exceptions, the server shutting down */
	if (!strcmp(st, "53200"))
		return -ENOMEM;
	if (!strcmp(st, "40001") || !strcmp(st, "40P01") || !strcmp(st, "55P03"))
		return -EBUSY;
	if (!strncmp(st, "XX", 2))
		return -EBADMSG;
	return -EIO;
}

/* One line from libpq's text (which may hold several, and tabs). */
static void one_line(char *out, size_t len, const char *msg)
{
	size_t n = 0;
	int space = 0;
	for (; msg && *msg && n + 1 < len; msg++) {
		if (*msg == '\n' || *msg == '\t' || *msg == '\r') {
			space = 1;
			continue;
		}
		if (space && n) {
			out[n++] = ' ';
			if (n + 1 >= len)
				break;
		}
		space = 0;
		out[n++] = *msg;
	}
	out[n] = 0;
}

/* Records what failed (res may be NULL: the connection's error) and returns its errno. */
static int fail(struct store *s, const PGresult *res, const char *what)
{
	char line[512];
	const char *st = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	one_line(line, sizeof line, msg ? msg : PQerrorMessage(s->db));
	snprintf(s->err, sizeof s->err, "%s: %s: %s", s->name, what, line[0] ? line : "no answer from the server");
	if (PQstatus(s->db) == CONNECTION_BAD)
		return -EIO; /* the connection is gone: nothing on it can be retried */
	return map_state(st);
}

/* ---------- statements ---------- */

/* Parameters in libpq's text form: numbers formatted here, strings as they are (NULL: SQL NULL),
 * one binary parameter (a bytea). */
#define PG_MAXPARAM 24
struct params {
	int n;
	const char *v[PG_MAXPARAM];
	int len[PG_MAXPARAM], fmt[PG_MAXPARAM];
	char num[PG_MAXPARAM][24];
};

static void p_i64(struct params *p, int64_t v)
{
	snprintf(p->num[p->n], sizeof p->num[0], "%" PRId64, v);
	p->v[p->n] = p->num[p->n];
	p->n++;
}

/* Counters are stored as bigint (signed): they never reach 2^63. */
static void p_u64(struct params *p, uint64_t v)
{
	p_i64(p, (int64_t)v);
}

static void p_str(struct params *p, const char *t)
{
	p->v[p->n++] = t;
}

static void p_bin(struct params *p, const void *b, size_t n)
{
	p->v[p->n] = b ? b : "";
	p->len[p->n] = (int)n;
	p->fmt[p->n] = 1;
	p->n++;
}

/* Runs sql with p (NULL: none): the result (PQclear it) or NULL with the error recorded in *r. */
static PGresult *run(struct store *s, const char *what, const char *sql, const struct params *p, int *r)
{
	PGresult *res = PQexecParams(s->db, sql, p ? p->n : 0, NULL, p ? p->v : NULL, p ? p->len : NULL,
				     p ? p->fmt : NULL, 0);
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
		*r = 0;
		return res;
	}
	*r = fail(s, res, what);
	PQclear(res);
	return NULL;
}

/* A statement whose rows do not matter: 0 or -errno. */
static int exec_p(struct store *s, const char *what, const char *sql, const struct params *p)
{
	int r;
	PQclear(run(s, what, sql, p, &r));
	return r;
}

/* Several statements without parameters, in one round trip. */
static int exec_sql(struct store *s, const char *what, const char *sql)
{
	PGresult *res = PQexec(s->db, sql);
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	int r = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? 0 : fail(s, res, what);
	PQclear(res);
	return r;
}

static int64_t col_i64(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? 0 : strtoll(PQgetvalue(res, row, col), NULL, 10);
}

static const char *col_text(const PGresult *res, int row, int col)
{
	return PQgetvalue(res, row, col); /* "" for NULL */
}

static const char *col_text_or_null(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);
}

static const char *nz(const char *t)
{
	return t ? t : "";
}

/* ---------- open, schema, transactions ---------- */

static int has_version_table(struct store *s, int *has)
{
	int r;
	PGresult *res = run(s, "reading the schema version", "SELECT to_regclass('schema_version') IS NOT NULL", NULL, &r);
	if (!res)
		return r;
	*has = !strcmp(col_text(res, 0, 0), "t");
	PQclear(res);
	return 0;
}

static int read_version(struct store *s, int *v)
{
	int has = 0, r = has_version_table(s, &has);
	*v = 0;
	if (r < 0 || !has)
		return r;
	PGresult *res = run(s, "reading the schema version", "SELECT max(version) FROM schema_version", NULL, &r);
	if (!res)
		return r;
	*v = (int)col_i64(res, 0, 0);
	PQclear(res);
	return 0;
}

static int migrate(struct store *s)
{
	int v, r = read_version(s, &v);
	if (r < 0)
		return r;
	if (v > STORE_SCHEMA_VERSION) {
		snprintf(s->err, sizeof s->err, "%s: schema version %d is newer than this program's %d", s->name, v,
			 STORE_SCHEMA_VERSION);
		return -EPROTO;
	}
	if (v == STORE_SCHEMA_VERSION)
		return 0;
	if (s->readonly) {
		snprintf(s->err, sizeof s->err, "%s: schema version %d, this program needs %d (open it once read-write)",
			 s->name, v, STORE_SCHEMA_VERSION);
		return -EPROTO;
	}
	/* under the lock, read again: another daemon may have migrated meanwhile */
	if ((r = exec_sql(s, "migrating the schema", "BEGIN; " SCHEMA_LOCK)) < 0)
		goto err;
	if ((r = read_version(s, &v)) < 0)
		goto err;
	if (v == 0 && (r = exec_sql(s, "migrating the schema",
				    "CREATE TABLE IF NOT EXISTS schema_version(version integer NOT NULL);"
				    "INSERT INTO schema_version SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM schema_version)")) < 0)
		goto err;
	for (size_t i = 0; i < NMIGRATIONS; i++) {
		if (migrations[i].version <= v)
			continue;
		struct params p = {0};
		p_i64(&p, migrations[i].version);
		if ((r = exec_sql(s, "migrating the schema", migrations[i].sql)) < 0 ||
		    (r = exec_p(s, "migrating the schema", "UPDATE schema_version SET version = $1", &p)) < 0)
			goto err;
		v = migrations[i].version;
	}
	return exec_sql(s, "migrating the schema", "COMMIT");
err:
	PQclear(PQexec(s->db, "ROLLBACK"));
	return r;
}

static void no_notices(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

static void pg_close(struct store *s);

int store_pg_open(const char *url, unsigned flags, struct store **out, char *err, size_t errlen)
{
	struct store *s = calloc(1, sizeof *s);
	int r;
	*out = NULL;
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->ops = &store_pg_ops;
	s->readonly = !!(flags & STORE_READONLY);
	s->iv_max_t = s->iv_upto = INT64_MIN;
	redact_url(s->name, sizeof s->name, url);
	/* the URL as libpq's dbname: its own parameters (passfile, sslmode ...) stay the user's */
	const char *const keys[] = {"fallback_application_name", "dbname", NULL};
	const char *const vals[] = {"iostrata", url, NULL};
	s->db = PQconnectdbParams(keys, vals, 1);
	if (!s->db || PQstatus(s->db) != CONNECTION_OK) {
		char line[512];
		one_line(line, sizeof line, s->db ? PQerrorMessage(s->db) : "out of memory");
		/* a refused password is the caller's to fix, not the server's state */
		r = s->db && (PQconnectionNeedsPassword(s->db) || strstr(line, "authentication failed")) ? -EACCES
												       : -ECONNREFUSED;
		snprintf(err, errlen, "%s: cannot connect: %s", s->name, line);
		pg_close(s);
		return r;
	}
	PQsetNoticeProcessor(s->db, no_notices, NULL);
	/* no JIT: the planner's costs of a query over the day partitions (most never read: pruned
	 * when it runs) pass jit_above_cost, and compiling took 0.8 s of a 10 ms node series */
	if ((r = exec_sql(s, "setting up the session",
			  s->readonly ? "SET client_min_messages = warning; SET jit = off;"
					"SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY"
				      : "SET client_min_messages = warning; SET jit = off")) < 0 ||
	    (r = migrate(s)) < 0) {
		snprintf(err, errlen, "%s", s->err);
		pg_close(s);
		return r;
	}
	*out = s;
	return 0;
}

static void bufs_clear(struct store *s)
{
	for (int i = 0; i < NBUF; i++) {
		s->buf[i].len = s->buf[i].rows = s->buf[i].ndays = 0;
	}
	s->buffered = 0;
}

static void pg_close(struct store *s)
{
	if (!s)
		return;
	PQfinish(s->db);
	for (int i = 0; i < NBUF; i++) {
		free(s->buf[i].data);
		free(s->buf[i].days);
	}
	free(s->days);
	for (size_t i = 0; i < s->nhosts; i++)
		free(s->hosts[i].host);
	free(s->hosts);
	free(s);
}

/* ---------- day partitions ---------- */

static int64_t day_of(int64_t t_ms)
{
	return t_ms >= 0 ? t_ms / DAY_MS : -((-t_ms + DAY_MS - 1) / DAY_MS);
}

static int day_known(const int64_t *days, size_t n, int64_t day)
{
	for (size_t i = n; i-- > 0;) /* the newest day is the one asked for most */
		if (days[i] == day)
			return 1;
	return 0;
}

static int day_add(int64_t **days, size_t *n, size_t *cap, int64_t day)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		int64_t *d = realloc(*days, c * sizeof *d);
		if (!d)
			return -ENOMEM;
		*days = d;
		*cap = c;
	}
	(*days)[(*n)++] = day;
	return 0;
}

/* A day's partition's name: TABLE_YYYYMMDD (UTC). */
static void part_name(char *buf, size_t len, const char *table, int64_t day)
{
	time_t t = (time_t)(day * 86400);
	struct tm tm;
	gmtime_r(&t, &tm);
	snprintf(buf, len, "%s_%04d%02d%02d", table, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

/* Both partitioned tables get a day's partition together: a node-second and its intervals come
 * in the same batches. */
static int make_days(struct store *s, const int64_t *days, size_t n)
{
	static const char *const tables[] = {"intervals", "node_seconds"};
	int r = 0, locked = 0;
	for (size_t i = 0; r >= 0 && i < n; i++) {
		if (day_known(s->days, s->ndays, days[i]))
			continue;
		if (!locked && (r = exec_sql(s, "making a day's partition", SCHEMA_LOCK)) < 0)
			break;
		locked = 1;
		for (int t = 0; r >= 0 && t < 2; t++) {
			char name[64], sql[256];
			part_name(name, sizeof name, tables[t], days[i]);
			snprintf(sql, sizeof sql,
				 "CREATE TABLE IF NOT EXISTS %s PARTITION OF %s FOR VALUES FROM (%" PRId64 ") TO (%" PRId64 ")",
				 name, tables[t], days[i] * DAY_MS, (days[i] + 1) * DAY_MS);
			r = exec_sql(s, "making a day's partition", sql);
		}
		if (r >= 0)
			r = day_add(&s->days, &s->ndays, &s->capdays, days[i]);
	}
	return r;
}

/* ---------- buffered rows and their COPY ---------- */

static int buf_need(struct copy_buf *b, size_t n)
{
	if (b->len + n <= b->cap)
		return 0;
	size_t c = b->cap ? b->cap : 65536;
	while (c < b->len + n)
		c *= 2;
	char *d = realloc(b->data, c);
	if (!d)
		return -ENOMEM;
	b->data = d;
	b->cap = c;
	return 0;
}

/* Appends one row in COPY's text format from a format: 'i' int64, 'u' uint64, 's' text (escaped:
 * backslash, tab, newline and carriage return are COPY's delimiters). The row's order number ends
 * it. 0 or -ENOMEM. */
static int buf_row(struct store *s, enum pg_buf which, const char *fmt, ...)
{
	struct copy_buf *b = &s->buf[which];
	va_list ap;
	int r = 0;
	size_t start = b->len;
	va_start(ap, fmt);
	for (; *fmt && r == 0; fmt++) {
		if (*fmt == 's') {
			const char *t = nz(va_arg(ap, const char *));
			if ((r = buf_need(b, 2 * strlen(t) + 2)) < 0)
				break;
			for (; *t; t++) {
				char c = *t;
				if (c == '\\' || c == '\t' || c == '\n' || c == '\r') {
					b->data[b->len++] = '\\';
					c = c == '\t' ? 't' : c == '\n' ? 'n' : c == '\r' ? 'r' : '\\';
				}
				b->data[b->len++] = c;
			}
		} else {
			int64_t v = *fmt == 'u' ? (int64_t)va_arg(ap, uint64_t) : va_arg(ap, int64_t);
			if ((r = buf_need(b, 24)) < 0)
				break;
			b->len += (size_t)snprintf(b->data + b->len, 24, "%" PRId64, v);
		}
		b->data[b->len++] = '\t';
	}
	va_end(ap);
	if (r == 0 && (r = buf_need(b, 24)) == 0)
		b->len += (size_t)snprintf(b->data + b->len, 24, "%" PRId64 "\n", s->ord++);
	if (r < 0) {
		b->len = start;
		snprintf(s->err, sizeof s->err, "%s: out of memory buffering rows", s->name);
		return r;
	}
	b->rows++;
	s->buffered++;
	return 0;
}

/* Notes a row's day when this connection has not made its partition yet. */
static int buf_day(struct store *s, enum pg_buf which, int64_t t_ms)
{
	struct copy_buf *b = &s->buf[which];
	int64_t day = day_of(t_ms);
	if (day_known(s->days, s->ndays, day) || day_known(b->days, b->ndays, day))
		return 0;
	return day_add(&b->days, &b->ndays, &b->capdays, day);
}

struct buf_spec {
	const char *stage;  /* the temporary table: the target's columns and the row's order */
	const char *create;
	const char *copy;
	const char *merge;  /* staging to the table, then the staging table emptied */
};

/* A key's rows in one COPY merge as SQLite's statements would have applied them one by one:
 * intervals add up (the first dt_ms stays), the others are replaced by the last. */
static const struct buf_spec buf_specs[NBUF] = {
	[BUF_INTERVALS] = {"stage_intervals",
			   "CREATE TEMP TABLE IF NOT EXISTS stage_intervals(LIKE intervals, ord bigint NOT NULL)",
			   "COPY stage_intervals(t_ms, dt_ms, proc_id, file_id, layer, cat, bytes, calls, dur_ns, ord) FROM STDIN",
			   /* a row of a closed minute adds to it; the processes' windows grow */
			   "INSERT INTO intervals_minute(t_ms, proc_id, file_id, layer, cat, bytes, calls, dur_ns)"
			   " SELECT t_ms / 60000 * 60000, proc_id, file_id, layer, cat, sum(bytes), sum(calls), sum(dur_ns)"
			   " FROM stage_intervals WHERE t_ms < (SELECT upto_ms FROM rollup WHERE name = 'intervals')"
			   " GROUP BY 1, 2, 3, 4, 5 ON CONFLICT(t_ms, proc_id, file_id, layer, cat) DO UPDATE SET"
			   " bytes = intervals_minute.bytes + excluded.bytes, calls = intervals_minute.calls + excluded.calls,"
			   " dur_ns = intervals_minute.dur_ns + excluded.dur_ns;"
			   "UPDATE processes p SET first_ms = CASE WHEN p.first_ms = 0 OR x.lo < p.first_ms THEN x.lo"
			   " ELSE p.first_ms END, last_ms = greatest(p.last_ms, x.hi) FROM (SELECT proc_id, min(t_ms) AS lo,"
			   " max(t_ms) AS hi FROM stage_intervals GROUP BY proc_id) x WHERE p.id = x.proc_id"
			   " AND (p.first_ms = 0 OR x.lo < p.first_ms OR x.hi > p.last_ms);"
			   "INSERT INTO intervals(t_ms, dt_ms, proc_id, file_id, layer, cat, bytes, calls, dur_ns)"
			   " SELECT t_ms, (array_agg(dt_ms ORDER BY ord))[1], proc_id, file_id, layer, cat, sum(bytes),"
			   " sum(calls), sum(dur_ns) FROM stage_intervals GROUP BY t_ms, proc_id, file_id, layer, cat"
			   " ON CONFLICT(t_ms, proc_id, file_id, layer, cat) DO UPDATE SET bytes = intervals.bytes + excluded.bytes,"
			   " calls = intervals.calls + excluded.calls, dur_ns = intervals.dur_ns + excluded.dur_ns;"
			   /* summed over files per process (a row before where the raw rows start: never read) */
			   "INSERT INTO proc_intervals(proc_id, t_ms, layer, cat, bytes, calls, dur_ns, dt_ms)"
			   " SELECT proc_id, t_ms, layer, cat, sum(bytes), sum(calls), sum(dur_ns), max(dt_ms) FROM stage_intervals"
			   " WHERE t_ms >= coalesce((SELECT upto_ms FROM rollup WHERE name = 'raw:intervals'), 0)"
			   " GROUP BY 1, 2, 3, 4 ON CONFLICT(proc_id, t_ms, layer, cat) DO UPDATE SET"
			   " bytes = proc_intervals.bytes + excluded.bytes, calls = proc_intervals.calls + excluded.calls,"
			   " dur_ns = proc_intervals.dur_ns + excluded.dur_ns,"
			   " dt_ms = greatest(proc_intervals.dt_ms, excluded.dt_ms);"
			   "TRUNCATE stage_intervals"},
	[BUF_NODE_SECONDS] = {"stage_node_seconds",
			      "CREATE TEMP TABLE IF NOT EXISTS stage_node_seconds(LIKE node_seconds, ord bigint NOT NULL)",
			      "COPY stage_node_seconds(t_ms, dt_ms, host, layer, bytes_read, bytes_written, reads, writes,"
			      " meta_ops, read_hist, write_hist, ord) FROM STDIN",
			      /* a new host's minutes start where retention left the node-seconds; a row of a
			       * closed minute changes it by what it adds to the row it replaces */
			      "INSERT INTO rollup(name, upto_ms) SELECT DISTINCT 'node:' || host, (SELECT upto_ms FROM rollup"
			      " WHERE name = 'raw:node_seconds') FROM stage_node_seconds ON CONFLICT(name) DO NOTHING;"
			      "INSERT INTO node_minutes(t_ms, host, layer, bytes_read, bytes_written, reads, writes, meta_ops)"
			      " SELECT x.t_ms / 60000 * 60000, x.host, x.layer, sum(x.bytes_read - coalesce(n.bytes_read, 0)),"
			      " sum(x.bytes_written - coalesce(n.bytes_written, 0)), sum(x.reads - coalesce(n.reads, 0)),"
			      " sum(x.writes - coalesce(n.writes, 0)), sum(x.meta_ops - coalesce(n.meta_ops, 0))"
			      " FROM (SELECT DISTINCT ON (host, t_ms, layer) * FROM stage_node_seconds"
			      " ORDER BY host, t_ms, layer, ord DESC) x JOIN rollup r ON r.name = 'node:' || x.host"
			      " LEFT JOIN node_seconds n ON n.host = x.host AND n.t_ms = x.t_ms AND n.layer = x.layer"
			      " WHERE x.t_ms < r.upto_ms GROUP BY 1, 2, 3 ON CONFLICT(host, t_ms, layer) DO UPDATE SET"
			      " bytes_read = node_minutes.bytes_read + excluded.bytes_read,"
			      " bytes_written = node_minutes.bytes_written + excluded.bytes_written,"
			      " reads = node_minutes.reads + excluded.reads, writes = node_minutes.writes + excluded.writes,"
			      " meta_ops = node_minutes.meta_ops + excluded.meta_ops;"
			      "INSERT INTO node_seconds(t_ms, dt_ms, host, layer, bytes_read, bytes_written, reads, writes,"
			      " meta_ops, read_hist, write_hist) SELECT DISTINCT ON (host, t_ms, layer) t_ms, dt_ms, host, layer,"
			      " bytes_read, bytes_written, reads, writes, meta_ops, read_hist, write_hist FROM stage_node_seconds"
			      " ORDER BY host, t_ms, layer, ord DESC ON CONFLICT(host, t_ms, layer) DO UPDATE SET"
			      " dt_ms = excluded.dt_ms, bytes_read = excluded.bytes_read, bytes_written = excluded.bytes_written,"
			      " reads = excluded.reads, writes = excluded.writes, meta_ops = excluded.meta_ops,"
			      " read_hist = excluded.read_hist, write_hist = excluded.write_hist;"
			      "TRUNCATE stage_node_seconds"},
	[BUF_DEVICES] = {"stage_device_samples",
			 "CREATE TEMP TABLE IF NOT EXISTS stage_device_samples(LIKE device_samples, ord bigint NOT NULL)",
			 "COPY stage_device_samples(t_ms, dt_ms, host, device, major, minor, reads, reads_merged, sectors_read,"
			 " ms_reading, writes, writes_merged, sectors_written, ms_writing, in_flight, ms_io, ms_weighted,"
			 " discards, sectors_discarded, flushes, ord) FROM STDIN",
			 "INSERT INTO device_samples SELECT DISTINCT ON (host, t_ms, device) t_ms, dt_ms, host, device, major,"
			 " minor, reads, reads_merged, sectors_read, ms_reading, writes, writes_merged, sectors_written,"
			 " ms_writing, in_flight, ms_io, ms_weighted, discards, sectors_discarded, flushes"
			 " FROM stage_device_samples ORDER BY host, t_ms, device, ord DESC"
			 " ON CONFLICT(host, t_ms, device) DO UPDATE SET dt_ms = excluded.dt_ms, major = excluded.major,"
			 " minor = excluded.minor, reads = excluded.reads, reads_merged = excluded.reads_merged,"
			 " sectors_read = excluded.sectors_read, ms_reading = excluded.ms_reading, writes = excluded.writes,"
			 " writes_merged = excluded.writes_merged, sectors_written = excluded.sectors_written,"
			 " ms_writing = excluded.ms_writing, in_flight = excluded.in_flight, ms_io = excluded.ms_io,"
			 " ms_weighted = excluded.ms_weighted, discards = excluded.discards,"
			 " sectors_discarded = excluded.sectors_discarded, flushes = excluded.flushes;"
			 "TRUNCATE stage_device_samples"},
	[BUF_SAMPLES] = {"stage_samples",
			 "CREATE TEMP TABLE IF NOT EXISTS stage_samples(LIKE samples, ord bigint NOT NULL)",
			 "COPY stage_samples(t_ms, dt_ms, host, source, instance, metric, value, gauge, ord) FROM STDIN",
			 "INSERT INTO samples SELECT DISTINCT ON (host, t_ms, source, instance, metric) t_ms, dt_ms, host,"
			 " source, instance, metric, value, gauge FROM stage_samples"
			 " ORDER BY host, t_ms, source, instance, metric, ord DESC"
			 " ON CONFLICT(host, t_ms, source, instance, metric) DO UPDATE SET dt_ms = excluded.dt_ms,"
			 " value = excluded.value, gauge = excluded.gauge;"
			 "TRUNCATE stage_samples"},
	[BUF_DISTS] = {"stage_server_dists",
		       "CREATE TEMP TABLE IF NOT EXISTS stage_server_dists(LIKE server_dists, ord bigint NOT NULL)",
		       "COPY stage_server_dists(t_ms, host, server, op, requests, timed, wait_hist, service_hist, ord) FROM STDIN",
		       "INSERT INTO server_dists(t_ms, host, server, op, requests, timed, wait_hist, service_hist)"
		       " SELECT DISTINCT ON (host, t_ms, server, op) t_ms, host, server, op, requests, timed, wait_hist,"
		       " service_hist FROM stage_server_dists ORDER BY host, t_ms, server, op, ord DESC"
		       " ON CONFLICT(host, t_ms, server, op) DO UPDATE SET requests = excluded.requests,"
		       " wait_hist = excluded.wait_hist, service_hist = excluded.service_hist;"
		       "TRUNCATE stage_server_dists"},
	/* a run given twice is stored once, the first (as SQLite's INSERT OR IGNORE) */
	[BUF_RUNS] = {"stage_runs", "CREATE TEMP TABLE IF NOT EXISTS stage_runs(LIKE runs, ord bigint NOT NULL)",
		      "COPY stage_runs(proc_id, tid, idx, t_ms, file_id, layer, op, off, size, count, start_ns, end_ns,"
		      " busy_ns, min_ns, result, ord) FROM STDIN",
		      "INSERT INTO runs SELECT DISTINCT ON (proc_id, tid, idx) proc_id, tid, idx, t_ms, file_id, layer, op, off,"
		      " size, count, start_ns, end_ns, busy_ns, min_ns, result FROM stage_runs ORDER BY proc_id, tid, idx, ord"
		      " ON CONFLICT(proc_id, tid, idx) DO NOTHING;"
		      "TRUNCATE stage_runs"},
};

/* Sends one buffer with COPY and merges it: 0 or -errno. */
static int copy_one(struct store *s, enum pg_buf which)
{
	const struct buf_spec *sp = &buf_specs[which];
	struct copy_buf *b = &s->buf[which];
	int r;
	if ((which == BUF_INTERVALS || which == BUF_NODE_SECONDS) && !s->rollup_locked) {
		if ((r = exec_sql(s, "locking the roll-ups", "SELECT pg_advisory_xact_lock_shared(" ROLLUP_LOCK_KEY ")")) < 0)
			return r;
		s->rollup_locked = s->in_tx;
	}
	if ((r = make_days(s, b->days, b->ndays)) < 0)
		return r;
	b->ndays = 0;
	if (!(s->staged & (1 << which))) {
		if ((r = exec_sql(s, "making a staging table", sp->create)) < 0)
			return r;
		s->staged |= 1 << which;
	}
	PGresult *res = PQexec(s->db, sp->copy);
	if (!res || PQresultStatus(res) != PGRES_COPY_IN) {
		r = fail(s, res, "copying rows");
		PQclear(res);
		return r;
	}
	PQclear(res);
	/* libpq queues what it cannot send yet; 1 MB pieces keep its buffer bounded */
	for (size_t off = 0; off < b->len;) {
		size_t n = b->len - off < (1u << 20) ? b->len - off : (1u << 20);
		if (PQputCopyData(s->db, b->data + off, (int)n) != 1)
			return fail(s, NULL, "copying rows");
		off += n;
	}
	if (PQputCopyEnd(s->db, NULL) != 1)
		return fail(s, NULL, "copying rows");
	while ((res = PQgetResult(s->db)) != NULL) {
		if (PQresultStatus(res) != PGRES_COMMAND_OK && r == 0)
			r = fail(s, res, "copying rows");
		PQclear(res);
	}
	if (r < 0)
		return r;
	if ((r = exec_sql(s, "merging copied rows", sp->merge)) < 0)
		return r;
	s->buffered -= b->rows;
	b->len = b->rows = 0;
	return 0;
}

static int flush(struct store *s)
{
	int r = 0;
	for (int i = 0; r >= 0 && i < NBUF; i++)
		if (s->buf[i].rows)
			r = copy_one(s, (enum pg_buf)i);
	return r;
}

/* After a buffered row: outside a transaction it goes at once (each call its own statement, as
 * SQLite's autocommit); inside, when the buffers pass their bound. */
static int pg_begin(struct store *s);
static int pg_commit(struct store *s);

static int buffered(struct store *s, int r)
{
	if (r < 0)
		return r;
	if (!s->in_tx)
		return (r = pg_begin(s)) < 0 ? r : pg_commit(s); /* the row and its day's partition together */
	return s->buffered >= PG_FLUSH_ROWS ? flush(s) : 0;
}

/* Reads of buffered tables see the transaction's own rows, as they do in SQLite. */
static int flush_for_read(struct store *s)
{
	return s->buffered ? flush(s) : 0;
}

static void hosts_reset(struct store *s)
{
	s->iv_max_t = INT64_MIN;
	for (size_t i = 0; i < s->nhosts; i++)
		s->hosts[i].max_t = INT64_MIN;
}

static int pg_begin(struct store *s)
{
	int r = exec_sql(s, "beginning a transaction", "BEGIN");
	if (r == 0) {
		s->in_tx = 1;
		s->ord = 0;
		s->rollup_locked = 0;
		hosts_reset(s);
	}
	return r;
}

static void pg_rollback(struct store *s)
{
	s->rollup_locked = 0;
	hosts_reset(s);
	bufs_clear(s);
	if (PQtransactionStatus(s->db) != PQTRANS_IDLE)
		PQclear(PQexec(s->db, "ROLLBACK"));
	/* what the transaction made is gone with it: partitions (made again IF NOT EXISTS) and the
	 * staging tables */
	s->ndays = 0;
	s->staged = 0;
	s->in_tx = 0;
}

#define MINUTE_MS INT64_C(60000)
static int64_t minute_of(int64_t t_ms)
{
	return t_ms >= 0 ? t_ms / MINUTE_MS * MINUTE_MS : -((-t_ms + MINUTE_MS - 1) / MINUTE_MS) * MINUTE_MS;
}

/* The minutes [where intervals stand, upto) rolled up from their raw rows, 'intervals' moved
 * (the roll-up lock held alone): *now where it stands. */
static int close_intervals(struct store *s, int64_t upto, int64_t *now)
{
	struct params p = {0};
	int r;
	p_i64(&p, upto);
	if ((r = exec_p(s, "rolling up minutes",
			"INSERT INTO intervals_minute(t_ms, proc_id, file_id, layer, cat, bytes, calls, dur_ns)"
			" SELECT t_ms / 60000 * 60000, proc_id, file_id, layer, cat, sum(bytes), sum(calls), sum(dur_ns)"
			" FROM intervals WHERE t_ms >= (SELECT upto_ms FROM rollup WHERE name = 'intervals') AND t_ms < $1"
			" GROUP BY 1, 2, 3, 4, 5 ON CONFLICT(t_ms, proc_id, file_id, layer, cat) DO UPDATE SET"
			" bytes = intervals_minute.bytes + excluded.bytes, calls = intervals_minute.calls + excluded.calls,"
			" dur_ns = intervals_minute.dur_ns + excluded.dur_ns",
			&p)) < 0)
		return r;
	PGresult *res = run(s, "rolling up minutes",
			    "UPDATE rollup SET upto_ms = greatest(upto_ms, $1) WHERE name = 'intervals' RETURNING upto_ms", &p, &r);
	if (!res)
		return r;
	*now = PQntuples(res) ? col_i64(res, 0, 0) : upto;
	PQclear(res);
	return 0;
}

/* The same for the node-seconds of one host (NULL: every host behind upto). */
static int close_nodes(struct store *s, const char *host, int64_t upto, int64_t *now)
{
	struct params p = {0};
	int r;
	p_i64(&p, upto);
	p_str(&p, host);
	if ((r = exec_p(s, "rolling up node minutes",
			"INSERT INTO node_minutes(t_ms, host, layer, bytes_read, bytes_written, reads, writes, meta_ops)"
			" SELECT n.t_ms / 60000 * 60000, n.host, n.layer, sum(n.bytes_read), sum(n.bytes_written), sum(n.reads),"
			" sum(n.writes), sum(n.meta_ops) FROM rollup r JOIN node_seconds n ON r.name = 'node:' || n.host"
			" AND n.t_ms >= r.upto_ms AND n.t_ms < $1 WHERE ($2::text IS NULL OR r.name = 'node:' || $2::text)"
			" AND r.name LIKE 'node:%' GROUP BY 1, 2, 3 ON CONFLICT(host, t_ms, layer) DO UPDATE SET"
			" bytes_read = node_minutes.bytes_read + excluded.bytes_read,"
			" bytes_written = node_minutes.bytes_written + excluded.bytes_written,"
			" reads = node_minutes.reads + excluded.reads, writes = node_minutes.writes + excluded.writes,"
			" meta_ops = node_minutes.meta_ops + excluded.meta_ops",
			&p)) < 0)
		return r;
	PGresult *res = run(s, "rolling up node minutes",
			    "UPDATE rollup SET upto_ms = greatest(upto_ms, $1) WHERE name LIKE 'node:%'"
			    " AND ($2::text IS NULL OR name = 'node:' || $2::text) RETURNING upto_ms",
			    &p, &r);
	if (!res)
		return r;
	*now = PQntuples(res) ? col_i64(res, 0, 0) : upto;
	PQclear(res);
	return 0;
}

/* After a commit: the minutes its rows closed, in a transaction of their own. A failure leaves
 * them to the next commit (the raw rows are in; readers read them until then). */
static void close_minutes(struct store *s)
{
	int64_t iv = s->iv_max_t == INT64_MIN ? INT64_MIN : minute_of(s->iv_max_t);
	int need = iv != INT64_MIN && iv > s->iv_upto;
	for (size_t i = 0; i < s->nhosts && !need; i++)
		need = s->hosts[i].max_t != INT64_MIN && minute_of(s->hosts[i].max_t) > s->hosts[i].upto;
	if (!need)
		return;
	int r = exec_sql(s, "rolling up minutes", "BEGIN; SELECT pg_advisory_xact_lock(" ROLLUP_LOCK_KEY ")");
	int64_t now, iv_now = s->iv_upto;
	if (r >= 0 && iv != INT64_MIN && iv > s->iv_upto)
		r = close_intervals(s, iv, &iv_now);
	for (size_t i = 0; i < s->nhosts && r >= 0; i++) {
		struct pg_host *h = &s->hosts[i];
		if (h->max_t != INT64_MIN && minute_of(h->max_t) > h->upto && (r = close_nodes(s, h->host, minute_of(h->max_t), &now)) >= 0)
			h->upto = now; /* kept only if the commit holds: below */
	}
	if (r >= 0)
		r = exec_sql(s, "rolling up minutes", "COMMIT");
	if (r < 0) {
		PQclear(PQexec(s->db, "ROLLBACK"));
		for (size_t i = 0; i < s->nhosts; i++)
			s->hosts[i].upto = INT64_MIN;
		return;
	}
	s->iv_upto = iv_now;
	hosts_reset(s);
}

/* A failed statement has ended the transaction on the server already: a failed commit rolls back
 * here too, so the caller's rollback finds nothing left (and retrying the commit cannot help). */
static int pg_commit(struct store *s)
{
	int r = flush(s);
	if (r < 0) {
		pg_rollback(s);
		return r;
	}
	PGresult *res = PQexec(s->db, "COMMIT");
	if (!res || PQresultStatus(res) != PGRES_COMMAND_OK)
		r = fail(s, res, "committing");
	else if (!strcmp(PQcmdStatus(res), "ROLLBACK")) {
		/* an earlier statement failed: the server ends the transaction and says ROLLBACK */
		snprintf(s->err, sizeof s->err, "%s: committing: the transaction had failed and was rolled back", s->name);
		r = -EIO;
	}
	PQclear(res);
	if (r < 0) {
		pg_rollback(s);
		return r;
	}
	s->in_tx = 0;
	s->rollup_locked = 0;
	close_minutes(s);
	return 0;
}

/* ---------- writes ---------- */

/* The row's id by its identity (0 when absent): 0 or -errno. */
static int find_id(struct store *s, const char *what, const char *sql, const struct params *p, int64_t *id)
{
	int r;
	PGresult *res = run(s, what, sql, p, &r);
	*id = 0;
	if (!res)
		return r;
	if (PQntuples(res) > 0)
		*id = col_i64(res, 0, 0);
	PQclear(res);
	return 0;
}

/* Found first, inserted when absent (ON CONFLICT DO NOTHING: another writer may insert it
 * between the two) and updated when present: ids stay dense, as SQLite's. The update applies only
 * when seq is 0 or not older than the stored one. */
static int pg_job_put(struct store *s, struct store_job *j)
{
	struct params p = {0};
	int r;
	p_str(&p, j->job);
	p_str(&p, j->host);
	p_i64(&p, j->uid);
	for (int tries = 0; tries < 2; tries++) {
		if ((r = find_id(s, "finding a job", "SELECT id FROM jobs WHERE job = $1 AND host = $2 AND uid = $3", &p,
				 &j->key)) < 0)
			return r;
		if (j->key) {
			struct params u = {0};
			p_i64(&u, j->key);
			p_i64(&u, j->end_ms);
			p_i64(&u, j->running);
			p_i64(&u, j->start_ms);
			p_str(&u, nz(j->exe));
			p_str(&u, nz(j->jobdir));
			p_u64(&u, j->seq);
			return exec_p(s, "updating a job",
				      "UPDATE jobs SET end_ms = $2, running = $3,"
				      " start_ms = CASE WHEN start_ms = 0 OR $4 < start_ms THEN $4 ELSE start_ms END,"
				      " exe = CASE WHEN exe = '' THEN $5 ELSE exe END,"
				      " jobdir = CASE WHEN jobdir = '' THEN $6 ELSE jobdir END, seq = GREATEST(seq, $7)"
				      " WHERE id = $1 AND ($7 = 0 OR $7 >= seq)",
				      &u);
		}
		struct params ins = {0};
		p_str(&ins, j->job);
		p_str(&ins, j->host);
		p_i64(&ins, j->uid);
		p_str(&ins, nz(j->user));
		p_str(&ins, nz(j->exe));
		p_str(&ins, nz(j->jobdir));
		p_i64(&ins, j->start_ms);
		p_i64(&ins, j->end_ms);
		p_i64(&ins, j->running);
		p_u64(&ins, j->seq);
		if ((r = find_id(s, "adding a job",
				 "INSERT INTO jobs(job, host, uid, \"user\", exe, jobdir, start_ms, end_ms, running, seq)"
				 " VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT(job, host, uid) DO NOTHING"
				 " RETURNING id",
				 &ins, &j->key)) < 0 ||
		    j->key)
			return r;
	}
	snprintf(s->err, sizeof s->err, "%s: adding a job: it came and went", s->name);
	return -EIO;
}

/* A process's state never goes back from ended, killed or lost to live: a late batch of its
 * live intervals does not reopen it. */
#define PROC_UPDATE                                                                                     \
	"UPDATE processes SET end_ms = CASE WHEN state <> 0 AND $3 = 0 THEN end_ms ELSE $2 END,"         \
	" state = CASE WHEN state <> 0 AND $3 = 0 THEN state ELSE $3 END, cursor = $4, seq = GREATEST(seq, $5)" \
	" WHERE id = $1 AND ($5 = 0 OR $5 >= seq)"

static int pg_proc_put(struct store *s, struct store_proc *p)
{
	int r;
	for (int tries = 0; tries < 2; tries++) {
		if (!p->key) {
			struct params f = {0};
			p_str(&f, p->host);
			p_i64(&f, p->pid);
			p_u64(&f, p->start_ns);
			if ((r = find_id(s, "finding a process",
					 "SELECT id FROM processes WHERE host = $1 AND pid = $2 AND start_ns = $3", &f,
					 &p->key)) < 0)
				return r;
		}
		if (p->key) {
			struct params u = {0};
			p_i64(&u, p->key);
			p_i64(&u, p->end_ms);
			p_i64(&u, p->state);
			p_bin(&u, p->cursor, p->cursor_len);
			p_u64(&u, p->seq);
			return exec_p(s, "updating a process", PROC_UPDATE, &u);
		}
		struct params ins = {0};
		p_i64(&ins, p->job_key);
		p_str(&ins, p->host);
		p_i64(&ins, p->pid);
		p_i64(&ins, p->rank);
		p_u64(&ins, p->start_ns);
		p_u64(&ins, p->start_ticks);
		p_i64(&ins, p->uid);
		p_str(&ins, nz(p->exe));
		p_str(&ins, nz(p->live_path));
		p_str(&ins, nz(p->final_path));
		p_i64(&ins, p->start_ms);
		p_i64(&ins, p->end_ms);
		p_i64(&ins, p->state);
		p_bin(&ins, p->cursor, p->cursor_len);
		p_u64(&ins, p->seq);
		if ((r = find_id(s, "adding a process",
				 "INSERT INTO processes(job_id, host, pid, rank, start_ns, start_ticks, uid, exe, live_path,"
				 " final_path, start_ms, end_ms, state, cursor, seq)"
				 " VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"
				 " ON CONFLICT(host, pid, start_ns) DO NOTHING RETURNING id",
				 &ins, &p->key)) < 0 ||
		    p->key)
			return r;
	}
	snprintf(s->err, sizeof s->err, "%s: adding a process: it came and went", s->name);
	return -EIO;
}

static int pg_file_key(struct store *s, const char *path, int64_t *key)
{
	struct params p = {0};
	int r;
	p_str(&p, path);
	for (int tries = 0; tries < 2; tries++) {
		if ((r = find_id(s, "finding a file", "SELECT id FROM files WHERE path = $1", &p, key)) < 0 || *key)
			return r;
		if ((r = find_id(s, "adding a file",
				 "INSERT INTO files(path) VALUES($1) ON CONFLICT(path) DO NOTHING RETURNING id", &p, key)) < 0 ||
		    *key)
			return r;
	}
	snprintf(s->err, sizeof s->err, "%s: adding a file: it came and went", s->name);
	return -EIO;
}

static int pg_interval_add(struct store *s, const struct store_interval *iv)
{
	if (iv->t_ms > s->iv_max_t)
		s->iv_max_t = iv->t_ms;
	int r = buf_day(s, BUF_INTERVALS, iv->t_ms);
	if (r == 0)
		r = buf_row(s, BUF_INTERVALS, "iiiiiiiii", iv->t_ms, iv->dt_ms, iv->proc_key, iv->file_key,
			    (int64_t)iv->layer, (int64_t)iv->cat, iv->bytes, iv->calls, iv->dur_ns);
	return buffered(s, r);
}

static int pg_job_totals_add(struct store *s, int64_t job_key, const int64_t bytes[STORE_NCATS],
			     const int64_t calls[STORE_NCATS])
{
	struct params p = {0};
	p_i64(&p, job_key);
	for (int c = 0; c < STORE_NCATS; c++)
		p_i64(&p, bytes[c]);
	for (int c = 0; c < STORE_NCATS; c++)
		p_i64(&p, calls[c]);
	return exec_p(s, "adding to a job's totals",
		      "UPDATE jobs SET bytes_read = bytes_read + $2, bytes_written = bytes_written + $3,"
		      " bytes_meta = bytes_meta + $4, reads = reads + $5, writes = writes + $6,"
		      " meta_ops = meta_ops + $7 WHERE id = $1",
		      &p);
}

/* The host's latest node-second of this transaction (its minutes close after the commit). */
static int host_note(struct store *s, const char *host, int64_t t_ms)
{
	size_t i;
	for (i = 0; i < s->nhosts && strcmp(s->hosts[i].host, host); i++)
		;
	if (i == s->nhosts) {
		if (s->nhosts == s->caphosts) {
			size_t cap = s->caphosts ? 2 * s->caphosts : 8;
			struct pg_host *v = realloc(s->hosts, cap * sizeof *v);
			if (!v)
				return -ENOMEM;
			s->hosts = v;
			s->caphosts = cap;
		}
		if (!(s->hosts[i].host = strdup(host)))
			return -ENOMEM;
		s->hosts[i].max_t = s->hosts[i].upto = INT64_MIN;
		s->nhosts++;
	}
	if (t_ms > s->hosts[i].max_t)
		s->hosts[i].max_t = t_ms;
	return 0;
}

static int pg_node_sec_add(struct store *s, const struct store_node_sec *ns)
{
	char rh[STORE_HIST_TEXT], wh[STORE_HIST_TEXT];
	store_hist_text(rh, sizeof rh, ns->read_hist);
	store_hist_text(wh, sizeof wh, ns->write_hist);
	int r = host_note(s, ns->host, ns->t_ms);
	if (r == 0)
		r = buf_day(s, BUF_NODE_SECONDS, ns->t_ms);
	if (r == 0)
		r = buf_row(s, BUF_NODE_SECONDS, "iisiuuuuuss", ns->t_ms, ns->dt_ms, ns->host, (int64_t)ns->layer,
			    ns->bytes_read, ns->bytes_written, ns->reads, ns->writes, ns->meta_ops, rh, wh);
	return buffered(s, r);
}

static int pg_device_add(struct store *s, const struct store_device_sample *d)
{
	int r = buf_row(s, BUF_DEVICES, "iissiiuuuuuuuuuuuuuu", d->t_ms, d->dt_ms, d->host, d->device,
			(int64_t)d->major, (int64_t)d->minor, d->reads, d->reads_merged, d->sectors_read, d->ms_reading,
			d->writes, d->writes_merged, d->sectors_written, d->ms_writing, d->in_flight, d->ms_io,
			d->ms_weighted, d->discards, d->sectors_discarded, d->flushes);
	return buffered(s, r);
}

static int pg_sample_add(struct store *s, const struct store_sample *x)
{
	int r = buf_row(s, BUF_SAMPLES, "iissssii", x->t_ms, x->dt_ms, x->host, x->source, x->instance, x->metric,
			x->value, (int64_t)x->gauge);
	return buffered(s, r);
}

static int pg_dist_add(struct store *s, const struct store_dist *x)
{
	char wh[STORE_HIST_TEXT], sh[STORE_HIST_TEXT];
	store_hist_text(wh, sizeof wh, x->wait);
	store_hist_text(sh, sizeof sh, x->service);
	int r = buf_row(s, BUF_DISTS, "isssuuss", x->t_ms, x->host, x->server, x->op, x->requests, x->timed, wh, sh);
	return buffered(s, r);
}

static int pg_run_add(struct store *s, const struct store_run *x)
{
	int r = buf_row(s, BUF_RUNS, "iiiiiiiiuuiiuui", x->proc_key, (int64_t)x->tid, (int64_t)x->idx, x->t_ms,
			x->file_key, (int64_t)x->layer, (int64_t)x->op, x->offset, x->size, x->count, x->start_ns,
			x->end_ns, x->busy_ns, x->min_ns, x->result);
	return buffered(s, r);
}

static int pg_job_report_put(struct store *s, int64_t job_key, const char *text, const char *json)
{
	struct params p = {0};
	p_i64(&p, job_key);
	p_str(&p, text);
	p_str(&p, json);
	p_i64(&p, (int64_t)time(NULL) * 1000);
	return exec_p(s, "storing a job's report",
		      "UPDATE jobs SET report_text = $2, report_json = $3, report_ms = $4 WHERE id = $1", &p);
}

static int pg_job_findings_put(struct store *s, int64_t job_key, const char *const *findings, size_t n)
{
	struct params p = {0};
	p_i64(&p, job_key);
	int r = exec_p(s, "replacing a job's findings", "DELETE FROM findings WHERE job_id = $1", &p);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		struct params f = {0};
		p_i64(&f, job_key);
		p_i64(&f, (int64_t)i);
		p_str(&f, findings[i]);
		r = exec_p(s, "storing a finding", "INSERT INTO findings(job_id, seq, finding) VALUES($1, $2, $3)", &f);
	}
	return r;
}

static int pg_job_sched_put(struct store *s, const struct store_job *j)
{
	struct params p = {0};
	p_i64(&p, j->key);
	p_str(&p, j->sched);
	p_str(&p, j->sched_name);
	p_str(&p, j->sched_state);
	p_str(&p, j->sched_nodes);
	p_i64(&p, j->submit_ms);
	p_i64(&p, j->sched_start_ms);
	p_i64(&p, j->sched_end_ms);
	return exec_p(s, "storing a job's scheduler facts",
		      "UPDATE jobs SET sched = $2, sched_name = $3, sched_state = $4, sched_nodes = $5, submit_ms = $6,"
		      " sched_start_ms = $7, sched_end_ms = $8 WHERE id = $1",
		      &p);
}

/* ---------- reads ---------- */

static int pg_proc_find(struct store *s, const char *host, int32_t pid, uint64_t start_ns, int64_t *key,
			enum store_proc_state *state)
{
	struct params p = {0};
	int r;
	p_str(&p, host);
	p_i64(&p, pid);
	p_u64(&p, start_ns);
	PGresult *res = run(s, "finding a process",
			    "SELECT id, state FROM processes WHERE host = $1 AND pid = $2 AND start_ns = $3", &p, &r);
	if (!res)
		return r;
	if (PQntuples(res) > 0) {
		*key = col_i64(res, 0, 0);
		*state = (enum store_proc_state)col_i64(res, 0, 1);
	} else {
		r = -ENOENT;
	}
	PQclear(res);
	return r;
}

static int pg_job_logs(struct store *s, int64_t job_key, const char *host, int (*fn)(const char *path, void *ctx),
		       void *ctx)
{
	struct params p = {0};
	int r;
	p_i64(&p, job_key);
	p_str(&p, host);
	PGresult *res = run(s, "listing a job's logs",
			    "SELECT final_path FROM processes WHERE job_id = $1 AND host = $2 AND final_path <> ''"
			    " ORDER BY final_path COLLATE \"C\"",
			    &p, &r);
	if (!res)
		return r;
	for (int i = 0; i < PQntuples(res); i++)
		if (fn(col_text(res, i, 0), ctx))
			break;
	PQclear(res);
	return 0;
}

static int pg_procs_open(struct store *s, const char *host, int (*fn)(const struct store_proc *p, void *ctx),
			 void *ctx)
{
	struct params q = {0};
	int r;
	p_str(&q, host);
	PGresult *res = run(s, "listing open processes",
			    "SELECT id, job_id, host, pid, rank, start_ns, start_ticks, uid, exe, live_path,"
			    " final_path, start_ms, end_ms, state, cursor FROM processes"
			    " WHERE state = 0 AND host = $1 ORDER BY id",
			    &q, &r);
	if (!res)
		return r;
	for (int i = 0; i < PQntuples(res); i++) {
		size_t clen = 0;
		unsigned char *cursor = NULL;
		if (!PQgetisnull(res, i, 14) &&
		    !(cursor = PQunescapeBytea((const unsigned char *)PQgetvalue(res, i, 14), &clen))) {
			snprintf(s->err, sizeof s->err, "%s: listing open processes: out of memory", s->name);
			r = -ENOMEM;
			break;
		}
		struct store_proc p = {
			.key = col_i64(res, i, 0),
			.job_key = col_i64(res, i, 1),
			.host = col_text(res, i, 2),
			.pid = (int32_t)col_i64(res, i, 3),
			.rank = (int32_t)col_i64(res, i, 4),
			.start_ns = (uint64_t)col_i64(res, i, 5),
			.start_ticks = (uint64_t)col_i64(res, i, 6),
			.uid = (uint32_t)col_i64(res, i, 7),
			.exe = col_text(res, i, 8),
			.live_path = col_text(res, i, 9),
			.final_path = col_text(res, i, 10),
			.start_ms = col_i64(res, i, 11),
			.end_ms = col_i64(res, i, 12),
			.state = (enum store_proc_state)col_i64(res, i, 13),
			.cursor = cursor,
			.cursor_len = clen,
		};
		int stop = fn(&p, ctx);
		PQfreemem(cursor);
		if (stop)
			break;
	}
	PQclear(res);
	return r;
}

/* nprocs: the process images stored (a forked child that exec'd before any counted call is not one) */
#define JOB_COLS                                                                                             \
	"id, job, host, uid, \"user\", exe, jobdir, start_ms, end_ms, running,"                                  \
	" (SELECT count(*) FROM processes p WHERE p.job_id = jobs.id), sched, sched_name, sched_state,"          \
	" sched_nodes, submit_ms, sched_start_ms, sched_end_ms, bytes_read, bytes_written, bytes_meta, reads," \
	" writes, meta_ops"

static void job_from_row(const PGresult *res, int i, struct store_job *j)
{
	memset(j, 0, sizeof *j);
	j->key = col_i64(res, i, 0);
	j->job = col_text(res, i, 1);
	j->host = col_text(res, i, 2);
	j->uid = (uint32_t)col_i64(res, i, 3);
	j->user = col_text(res, i, 4);
	j->exe = col_text(res, i, 5);
	j->jobdir = col_text(res, i, 6);
	j->start_ms = col_i64(res, i, 7);
	j->end_ms = col_i64(res, i, 8);
	j->running = (int)col_i64(res, i, 9);
	j->nprocs = (uint32_t)col_i64(res, i, 10);
	j->sched = col_text_or_null(res, i, 11);
	j->sched_name = col_text_or_null(res, i, 12);
	j->sched_state = col_text_or_null(res, i, 13);
	j->sched_nodes = col_text_or_null(res, i, 14);
	j->submit_ms = col_i64(res, i, 15);
	j->sched_start_ms = col_i64(res, i, 16);
	j->sched_end_ms = col_i64(res, i, 17);
	for (int c = 0; c < STORE_NCATS; c++) {
		j->bytes[c] = (uint64_t)col_i64(res, i, 18 + c);
		j->calls[c] = (uint64_t)col_i64(res, i, 21 + c);
	}
}

/* A job filter's parameters $1 to $10 and its WHERE over them (a condition whose parameter says
 * "any" is folded away when the statement is planned with its values). */
static void jobs_params(struct params *p, const struct store_job_filter *f)
{
	p_i64(p, f->uid == STORE_ANY_UID ? -1 : (int64_t)f->uid);
	p_str(p, f->user);
	p_i64(p, f->since_ms);
	p_i64(p, f->running_only);
	p_str(p, f->job);
	p_i64(p, f->key);
	p_i64(p, f->until_ms);
	p_i64(p, f->ended_only);
	p_str(p, f->app);
	p_i64(p, f->with_findings);
}

#define JOBS_WHERE                                                                                          \
	"($1::bigint < 0 OR uid = $1) AND ($2::text IS NULL OR \"user\" = $2)"                                  \
	" AND ($3::bigint = 0 OR end_ms = 0 OR end_ms >= $3) AND ($4::bigint = 0 OR running = 1)"               \
	" AND ($5::text IS NULL OR job = $5) AND ($6::bigint = 0 OR id = $6) AND ($7::bigint = 0 OR start_ms < $7)" \
	" AND ($8::bigint = 0 OR running = 0)"                                                                  \
	" AND ($9::text IS NULL OR exe = $9 OR (strpos($9, '/') = 0 AND right(exe, length($9) + 1) = '/' || $9))" \
	" AND ($10::bigint = 0 OR EXISTS (SELECT 1 FROM findings WHERE findings.job_id = jobs.id))"

static int pg_jobs(struct store *s, const struct store_job_filter *f, int (*fn)(const struct store_job *j, void *ctx),
		   void *ctx)
{
	struct params p = {0};
	int r;
	jobs_params(&p, f);
	if (f->limit)
		p_i64(&p, (int64_t)f->limit);
	else
		p_str(&p, NULL); /* LIMIT NULL: all */
	p_i64(&p, (int64_t)f->offset);
	/* the page's keys first (the jobs_list index), its rows and their process counts only then:
	 * an offset skips keys, not rows */
	PGresult *res = run(s, "listing jobs",
			    "SELECT " JOB_COLS " FROM jobs WHERE id IN (SELECT id FROM jobs WHERE " JOBS_WHERE
			    " ORDER BY start_ms, id LIMIT $11::bigint OFFSET $12::bigint) ORDER BY start_ms, id",
			    &p, &r);
	if (!res)
		return r;
	for (int i = 0; i < PQntuples(res); i++) {
		struct store_job j;
		job_from_row(res, i, &j);
		if (fn(&j, ctx))
			break;
	}
	PQclear(res);
	return 0;
}

static int pg_jobs_count(struct store *s, const struct store_job_filter *f, uint64_t *n)
{
	struct params p = {0};
	int r;
	jobs_params(&p, f);
	PGresult *res = run(s, "counting jobs", "SELECT count(*) FROM jobs WHERE " JOBS_WHERE, &p, &r);
	if (!res)
		return r;
	*n = (uint64_t)col_i64(res, 0, 0);
	PQclear(res);
	return 0;
}

static int pg_job_report(struct store *s, int64_t job_key, int json, size_t head, char **out)
{
	struct params p = {0};
	int r;
	*out = NULL;
	p_i64(&p, job_key);
	if (json && head)
		p_i64(&p, head > INT32_MAX ? INT32_MAX : (int64_t)head);
	PGresult *res = run(s, "reading a job's report",
			    !json ? "SELECT report_text FROM jobs WHERE id = $1"
			    : head ? "SELECT substr(report_json, 1, $2::integer) FROM jobs WHERE id = $1"
				   : "SELECT report_json FROM jobs WHERE id = $1",
			    &p, &r);
	if (!res)
		return r;
	if (PQntuples(res) > 0 && !PQgetisnull(res, 0, 0) && !(*out = strdup(col_text(res, 0, 0))))
		r = -ENOMEM;
	PQclear(res);
	return r;
}

/* The node filter's parameters: $1 host (NULL: any), $2 since, $3 until. */
static void node_params(struct params *p, const struct store_node_filter *f)
{
	p_str(p, f->host);
	p_i64(p, f->since_ms);
	p_i64(p, f->until_ms);
}

#define NODE_WHERE(t) \
	"($1::text IS NULL OR " t "host = $1) AND ($2::bigint = 0 OR " t "t_ms >= $2) AND ($3::bigint = 0 OR " t "t_ms < $3)"

static int node_query(struct store *s, const char *sql, struct params *p,
		      int (*fn)(const struct store_node_sec *ns, void *ctx), void *ctx)
{
	int r;
	PGresult *res = run(s, "reading node-seconds", sql, p, &r);
	if (!res)
		return r;
	for (int i = 0; i < PQntuples(res); i++) {
		struct store_node_sec ns = {
			.t_ms = col_i64(res, i, 0),
			.dt_ms = col_i64(res, i, 1),
			.host = col_text(res, i, 2),
			.layer = (unsigned)col_i64(res, i, 3),
			.bytes_read = (uint64_t)col_i64(res, i, 4),
			.bytes_written = (uint64_t)col_i64(res, i, 5),
			.reads = (uint64_t)col_i64(res, i, 6),
			.writes = (uint64_t)col_i64(res, i, 7),
			.meta_ops = (uint64_t)col_i64(res, i, 8),
		};
		store_hist_parse(col_text_or_null(res, i, 9), ns.read_hist);
		store_hist_parse(col_text_or_null(res, i, 10), ns.write_hist);
		if (fn(&ns, ctx))
			break;
	}
	PQclear(res);
	return 0;
}

static int pg_node_secs(struct store *s, const struct store_node_filter *f,
			int (*fn)(const struct store_node_sec *ns, void *ctx), void *ctx)
{
	struct params p = {0};
	int r = flush_for_read(s);
	if (r < 0)
		return r;
	node_params(&p, f);
	/* $4: the minutes before it, the node-seconds from it (docs/STORE.md, "Roll-ups and windows"):
	 * a host's series in whole minutes reads its roll-ups as far as they stand, anything else as
	 * far as retention left the raw rows */
	p_str(&p, f->host && f->resolution_ms > 0 && f->resolution_ms % MINUTE_MS == 0 ? f->host : NULL);
#define NODE_SPLIT                                                                                                  \
	"(SELECT greatest(coalesce((SELECT upto_ms FROM rollup WHERE name = 'raw:node_seconds'), 0),"                \
	" coalesce((SELECT upto_ms FROM rollup WHERE $4::text IS NOT NULL AND name = 'node:' || $4::text), 0)))"
	if (f->resolution_ms > 0) { /* summed here, not row by row by the caller: $5 the resolution */
		p_i64(&p, f->resolution_ms);
		return node_query(s,
				  "SELECT b, SUM(dt_ms), host, layer, SUM(bytes_read), SUM(bytes_written), SUM(reads),"
				  " SUM(writes), SUM(meta_ops), NULL::text, NULL::text FROM ("
				  "SELECT t_ms / $5::bigint * $5::bigint AS b, 60000::bigint AS dt_ms, host, layer, bytes_read,"
				  " bytes_written, reads, writes, meta_ops FROM node_minutes WHERE " NODE_WHERE("")
				  " AND t_ms < " NODE_SPLIT " UNION ALL"
				  " SELECT t_ms / $5::bigint * $5::bigint, dt_ms, host, layer, bytes_read, bytes_written, reads,"
				  " writes, meta_ops FROM node_seconds WHERE " NODE_WHERE("") " AND t_ms >= " NODE_SPLIT ") n"
				  " GROUP BY host, b, layer ORDER BY host COLLATE \"C\", b, layer",
				  &p, fn, ctx);
	}
	return node_query(s,
			  "SELECT * FROM (SELECT t_ms, 60000::bigint AS dt_ms, host, layer, bytes_read, bytes_written, reads,"
			  " writes, meta_ops, NULL::text AS read_hist, NULL::text AS write_hist FROM node_minutes"
			  " WHERE t_ms < " NODE_SPLIT " UNION ALL"
			  " SELECT t_ms, dt_ms, host, layer, bytes_read, bytes_written, reads, writes, meta_ops, read_hist,"
			  " write_hist FROM node_seconds WHERE t_ms >= " NODE_SPLIT ") n WHERE " NODE_WHERE("")
			  " ORDER BY host COLLATE \"C\", t_ms, layer",
			  &p, fn, ctx);
#undef NODE_SPLIT
}

/* Host by host from rollup (a host's first node-second adds its row): the first and last t_ms at
 * either end of its minute roll-ups (before retention's split) and of its node-seconds (from it),
 * each an index seek, never a count (a week of 64 nodes is 77 million rows). */
static int pg_node_hosts(struct store *s, const struct store_node_filter *f,
			 int (*fn)(const char *host, int64_t first_ms, int64_t last_ms, void *ctx), void *ctx)
{
	struct params p = {0};
	int r = flush_for_read(s);
	if (r < 0)
		return r;
	node_params(&p, f);
#define HOST_SPLIT "coalesce((SELECT upto_ms FROM rollup WHERE name = 'raw:node_seconds'), 0)"
#define HOST_WHERE "host = h.host AND ($2::bigint = 0 OR t_ms >= $2) AND ($3::bigint = 0 OR t_ms < $3)"
	PGresult *res = run(s, "listing hosts",
			    "SELECT host, coalesce(m0, s0), coalesce(s1, m1) FROM (SELECT h.host,"
			    " (SELECT t_ms FROM node_minutes WHERE " HOST_WHERE " AND t_ms < " HOST_SPLIT
			    " ORDER BY t_ms LIMIT 1) AS m0,"
			    " (SELECT t_ms FROM node_minutes WHERE " HOST_WHERE " AND t_ms < " HOST_SPLIT
			    " ORDER BY t_ms DESC LIMIT 1) AS m1,"
			    " (SELECT t_ms FROM node_seconds WHERE " HOST_WHERE " AND t_ms >= " HOST_SPLIT
			    " ORDER BY t_ms LIMIT 1) AS s0,"
			    " (SELECT t_ms FROM node_seconds WHERE " HOST_WHERE " AND t_ms >= " HOST_SPLIT
			    " ORDER BY t_ms DESC LIMIT 1) AS s1"
			    " FROM (SELECT substr(name, 6) AS host FROM rollup WHERE name LIKE 'node:%') h"
			    " WHERE $1::text IS NULL OR h.host = $1) x"
			    " WHERE coalesce(m0, s0) IS NOT NULL ORDER BY host COLLATE \"C\"",
			    &p, &r);
#undef HOST_WHERE
#undef HOST_SPLIT
	if (!res)
		return r;
	for (int i = 0; i < PQntuples(res); i++)
		if (fn(col_text(res, i, 0), col_i64(res, i, 1), col_i64(res, i, 2), ctx))
			break;
	PQclear(res);
	return 0;
}

/* Where raw interval rows are read from: the minutes before it. */
#define RAW_FROM "coalesce((SELECT upto_ms FROM rollup WHERE name = 'raw:intervals'), 0)"

static int pg_user_secs(struct store *s, uint32_t uid, const struct store_node_filter *f,
			int (*fn)(const struct store_node_sec *ns, void *ctx), void *ctx)
{
	struct params p = {0};
	int r = flush_for_read(s);
	if (r < 0)
		return r;
	node_params(&p, f);
	p_i64(&p, uid);
	return node_query(s,
			  "SELECT i.t_ms, MAX(i.dt_ms), p.host, i.layer,"
			  " SUM(CASE i.cat WHEN 0 THEN i.bytes ELSE 0 END), SUM(CASE i.cat WHEN 1 THEN i.bytes ELSE 0 END),"
			  " SUM(CASE i.cat WHEN 0 THEN i.calls ELSE 0 END), SUM(CASE i.cat WHEN 1 THEN i.calls ELSE 0 END),"
			  " SUM(CASE i.cat WHEN 2 THEN i.calls ELSE 0 END), NULL, NULL"
			  " FROM (SELECT t_ms, dt_ms, proc_id, layer, cat, bytes, calls FROM intervals WHERE t_ms >= " RAW_FROM
			  " UNION ALL SELECT t_ms, 60000, proc_id, layer, cat, bytes, calls FROM intervals_minute"
			  " WHERE t_ms < " RAW_FROM ") i"
			  " JOIN processes p ON p.id = i.proc_id"
			  " WHERE p.uid = $4 AND ($1::text IS NULL OR p.host = $1) AND ($2::bigint = 0 OR i.t_ms >= $2)"
			  " AND ($3::bigint = 0 OR i.t_ms < $3) GROUP BY p.host, i.t_ms, i.layer"
			  " ORDER BY p.host COLLATE \"C\", i.t_ms, i.layer",
			  &p, fn, ctx);
}

static int pg_job_series(struct store *s, int64_t job_key, enum store_series_by by, int64_t resolution_ms,
			 int (*fn)(const struct store_series_point *pt, void *ctx), void *ctx)
{
	struct params p = {0};
	int r = flush_for_read(s);
	if (r < 0)
		return r;
	p_i64(&p, job_key);
	PGresult *res = run(s, "reading a job's series", STORE_SERIES_BOUNDS_SQL("$1::bigint"), &p, &r);
	if (!res)
		return r;
	int64_t b[4], split, lo, hi;
	for (int i = 0; i < 4; i++)
		b[i] = PQntuples(res) && !PQgetisnull(res, 0, i) ? col_i64(res, 0, i) : INT64_MIN;
	PQclear(res);
	store_series_split(b[0], b[1], b[2], b[3], resolution_ms, &split, &lo, &hi);
	p_i64(&p, resolution_ms);
	p_i64(&p, (int64_t)by);
	p_i64(&p, split);
	p_i64(&p, lo);
	p_i64(&p, hi);
	res = run(s, "reading a job's series",
		  STORE_SERIES_SQL("$1::bigint", "$2::bigint", "$3::bigint", "$4::bigint", "$5::bigint", "$6::bigint", "JOIN",
				   " COLLATE \"C\""),
		  &p, &r);
	if (!res)
		return r;
	for (int i = 0; i < PQntuples(res); i++) {
		struct store_series_point pt = {
			.t_ms = col_i64(res, i, 0),
			.host = col_text(res, i, 1),
			.rank = (int32_t)col_i64(res, i, 2),
			.layer = (unsigned)col_i64(res, i, 3),
			.bytes_read = (uint64_t)col_i64(res, i, 4),
			.bytes_written = (uint64_t)col_i64(res, i, 5),
			.reads = (uint64_t)col_i64(res, i, 6),
			.writes = (uint64_t)col_i64(res, i, 7),
			.meta_ops = (uint64_t)col_i64(res, i, 8),
			.dt_ms = col_i64(res, i, 9),
		};
		if (fn(&pt, ctx))
			break;
	}
	PQclear(res);
	return 0;
}

static int pg_devices(struct store *s, const struct store_node_filter *f,
		      int (*fn)(const struct store_device_sample *d, void *ctx), void *ctx)
{
	struct params p = {0};
	int r = flush_for_read(s);
	if (r < 0)
		return r;
	node_params(&p, f);
	PGresult *res = run(s, "reading device samples",
			    "SELECT t_ms, dt_ms, host, device, major, minor, reads, reads_merged, sectors_read,"
			    " ms_reading, writes, writes_merged, sectors_written, ms_writing, in_flight, ms_io,"
			    " ms_weighted, discards, sectors_discarded, flushes FROM device_samples WHERE " NODE_WHERE("")
			    " ORDER BY host COLLATE \"C\", t_ms, device COLLATE \"C\"",
			    &p, &r);
	if (!res)
		return r;
	for (int i = 0; i < PQntuples(res); i++) {
		uint64_t v[14];
		for (int c = 0; c < 14; c++)
			v[c] = (uint64_t)col_i64(res, i, 6 + c);
		struct store_device_sample d = {
			.t_ms = col_i64(res, i, 0), .dt_ms = col_i64(res, i, 1),
			.host = col_text(res, i, 2), .device = col_text(res, i, 3),
			.major = (uint32_t)col_i64(res, i, 4), .minor = (uint32_t)col_i64(res, i, 5),
			.reads = v[0], .reads_merged = v[1], .sectors_read = v[2], .ms_reading = v[3],
			.writes = v[4], .writes_merged = v[5], .sectors_written = v[6], .ms_writing = v[7],
			.in_flight = v[8], .ms_io = v[9], .ms_weighted = v[10], .discards = v[11],
			.sectors_discarded = v[12], .flushes = v[13],
		};
		if (fn(&d, ctx))
			break;
	}
	PQclear(res);
	return 0;
}

static int pg_samples(struct store *s, const struct store_node_filter *f, const char *source,
		      int (*fn)(const struct store_sample *x, void *ctx), void *ctx)
{
	struct params p = {0};
	int r = flush_for_read(s);
	if (r < 0)
		return r;
	node_params(&p, f);
	p_str(&p, source);
	PGresult *res = run(s, "reading samples",
			    "SELECT t_ms, dt_ms, host, source, instance, metric, value, gauge FROM samples WHERE " NODE_WHERE("")
			    " AND ($4::text IS NULL OR source = $4) ORDER BY host COLLATE \"C\", t_ms, source COLLATE \"C\","
			    " instance COLLATE \"C\", metric COLLATE \"C\"",
			    &p, &r);
	if (!res)
		return r;
	for (int i = 0; i < PQntuples(res); i++) {
		struct store_sample x = {
			.t_ms = col_i64(res, i, 0), .dt_ms = col_i64(res, i, 1), .host = col_text(res, i, 2),
			.source = col_text(res, i, 3), .instance = col_text(res, i, 4), .metric = col_text(res, i, 5),
			.value = col_i64(res, i, 6), .gauge = (int)col_i64(res, i, 7),
		};
		if (fn(&x, ctx))
			break;
	}
	PQclear(res);
	return 0;
}

static int pg_dists(struct store *s, const struct store_node_filter *f,
		    int (*fn)(const struct store_dist *x, void *ctx), void *ctx)
{
	struct params p = {0};
	int r = flush_for_read(s);
	if (r < 0)
		return r;
	node_params(&p, f);
	PGresult *res = run(s, "reading distributions",
			    "SELECT t_ms, host, server, op, requests, timed, wait_hist, service_hist FROM server_dists"
			    " WHERE " NODE_WHERE("") " ORDER BY host COLLATE \"C\", t_ms, server COLLATE \"C\", op COLLATE \"C\"",
			    &p, &r);
	if (!res)
		return r;
	for (int i = 0; i < PQntuples(res); i++) {
		struct store_dist x = {
			.t_ms = col_i64(res, i, 0), .host = col_text(res, i, 1), .server = col_text(res, i, 2),
			.op = col_text(res, i, 3), .requests = (uint64_t)col_i64(res, i, 4),
			.timed = (uint64_t)col_i64(res, i, 5),
		};
		store_hist_parse(col_text_or_null(res, i, 6), x.wait);
		store_hist_parse(col_text_or_null(res, i, 7), x.service);
		if (fn(&x, ctx))
			break;
	}
	PQclear(res);
	return 0;
}

/* ---------- retention ---------- */

struct table_spec {
	const char *name;
	const char *columns; /* the archive's second line */
	const char *select;  /* the archive's rows t_ms < $1: names, not keys; ordered by t_ms, then the key */
	const char *rollup;  /* rolled up as its rows came (NULL: not): its raw rows' name in rollup after "raw:" */
	int partitioned;
};

static const struct table_spec tables[] = {
	{"intervals", STORE_ARCHIVE_INTERVALS,
	 "SELECT i.t_ms, i.dt_ms, j.job, p.host, j.\"user\", p.uid, p.pid, p.rank, p.exe, f.path, i.layer, i.cat, i.bytes,"
	 " i.calls, i.dur_ns FROM intervals i JOIN processes p ON p.id = i.proc_id JOIN jobs j ON j.id = p.job_id"
	 " JOIN files f ON f.id = i.file_id WHERE i.t_ms < $1 ORDER BY i.t_ms, i.proc_id, i.file_id, i.layer, i.cat",
	 "intervals", 1},
	{"node_seconds", STORE_ARCHIVE_NODE_SECONDS,
	 "SELECT t_ms, dt_ms, host, layer, bytes_read, bytes_written, reads, writes, meta_ops, read_hist, write_hist"
	 " FROM node_seconds WHERE t_ms < $1 ORDER BY t_ms, host COLLATE \"C\", layer",
	 "node_seconds", 1},
	{"device_samples", STORE_ARCHIVE_DEVICE_SAMPLES,
	 "SELECT t_ms, dt_ms, host, device, major, minor, reads, reads_merged, sectors_read, ms_reading, writes,"
	 " writes_merged, sectors_written, ms_writing, in_flight, ms_io, ms_weighted, discards, sectors_discarded, flushes"
	 " FROM device_samples WHERE t_ms < $1 ORDER BY t_ms, host COLLATE \"C\", device COLLATE \"C\"",
	 NULL, 0},
	{"samples", STORE_ARCHIVE_SAMPLES,
	 "SELECT t_ms, dt_ms, host, source, instance, metric, value, gauge FROM samples WHERE t_ms < $1"
	 " ORDER BY t_ms, host COLLATE \"C\", source COLLATE \"C\", instance COLLATE \"C\", metric COLLATE \"C\"",
	 NULL, 0},
	{"server_dists", STORE_ARCHIVE_SERVER_DISTS,
	 "SELECT t_ms, host, server, op, requests, timed, wait_hist, service_hist FROM server_dists WHERE t_ms < $1"
	 " ORDER BY t_ms, host COLLATE \"C\", server COLLATE \"C\", op COLLATE \"C\"",
	 NULL, 0},
	{"runs", STORE_ARCHIVE_RUNS,
	 "SELECT r.t_ms, j.job, p.host, p.uid, p.pid, p.rank, r.tid, r.idx, f.path, r.layer, r.op, r.off, r.size, r.count,"
	 " r.start_ns, r.end_ns, r.busy_ns, r.min_ns, r.result FROM runs r JOIN processes p ON p.id = r.proc_id"
	 " JOIN jobs j ON j.id = p.job_id JOIN files f ON f.id = r.file_id WHERE r.t_ms < $1"
	 " ORDER BY r.t_ms, p.host COLLATE \"C\", p.pid, p.start_ns, r.tid, r.idx",
	 NULL, 0},
};

/* The cutoff of this call for a table: before_ms, or sooner so that at most max rows (whole
 * intervals) go. 0 with *cut, or -errno. */
static int cutoff(struct store *s, const char *table, int64_t before, size_t max, int64_t *cut)
{
	char sql[256];
	struct params p = {0};
	int r;
	p_i64(&p, before);
	p_i64(&p, (int64_t)max);
	snprintf(sql, sizeof sql, "SELECT t_ms FROM %s WHERE t_ms < $1 ORDER BY t_ms LIMIT 1 OFFSET $2", table);
	PGresult *res = run(s, "retention", sql, &p, &r);
	if (!res)
		return r;
	*cut = PQntuples(res) > 0 ? col_i64(res, 0, 0) : before;
	PQclear(res);
	return 0;
}

/* Writes the rows t_ms < cut of one table to a compressed CSV file, read a row at a time (a
 * million rows need not be in memory twice): 0 with *n rows, or -errno. */
static int archive_table(struct store *s, const struct table_spec *t, int64_t cut, const char *dir, uint64_t *n)
{
	char *csv = NULL;
	size_t len = 0;
	int64_t first = 0, last = 0;
	int r = 0;
	struct params p = {0};
	*n = 0;
	p_i64(&p, cut);
	FILE *f = open_memstream(&csv, &len);
	if (!f)
		return -ENOMEM;
	store_archive_head(f, t->name, t->columns);
	if (!PQsendQueryParams(s->db, t->select, p.n, NULL, p.v, NULL, NULL, 0) || !PQsetSingleRowMode(s->db))
		r = fail(s, NULL, "archiving");
	PGresult *res;
	while ((res = PQgetResult(s->db)) != NULL) {
		ExecStatusType st = PQresultStatus(res);
		if (st == PGRES_SINGLE_TUPLE && r == 0) {
			int64_t tm = col_i64(res, 0, 0);
			if (!*n)
				first = tm;
			last = tm;
			for (int c = 0; c < PQnfields(res); c++) {
				if (c)
					fputc(',', f);
				if (!strcmp(t->name, "intervals") && c == STORE_ARCHIVE_CAT_COLUMN)
					fputs(store_cat_name((unsigned)col_i64(res, 0, c)), f);
				else
					store_csv_field(f, col_text(res, 0, c));
			}
			fputc('\n', f);
			(*n)++;
		} else if (st != PGRES_SINGLE_TUPLE && st != PGRES_TUPLES_OK && r == 0) {
			r = fail(s, res, "archiving");
		}
		PQclear(res);
	}
	if (fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	if (r == 0 && *n)
		r = store_archive_write(dir, t->name, first, last, csv, len, s->err, sizeof s->err);
	free(csv);
	return r;
}

/* Removes the rows t_ms < cut: a day partition wholly before cut is dropped (no dead rows left
 * for vacuum), the rest deleted. 0 with *n rows removed, or -errno. */
static int remove_rows(struct store *s, const struct table_spec *t, int64_t cut, uint64_t *n)
{
	char sql[512];
	struct params p = {0};
	int r;
	*n = 0;
	if (t->partitioned) {
		p_str(&p, t->name);
		PGresult *parts = run(s, "listing partitions",
				      "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
				      " WHERE i.inhparent = $1::regclass ORDER BY 1",
				      &p, &r);
		if (!parts)
			return r;
		for (int i = 0; r >= 0 && i < PQntuples(parts); i++) {
			const char *name = col_text(parts, i, 0);
			size_t nl = strlen(name), tl = strlen(t->name);
			struct tm tm = {0};
			/* TABLE_YYYYMMDD: anything else is not ours to drop */
			if (nl != tl + 9 || strncmp(name, t->name, tl) || name[tl] != '_' ||
			    sscanf(name + tl + 1, "%4d%2d%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday) != 3)
				continue;
			tm.tm_year -= 1900;
			tm.tm_mon -= 1;
			int64_t day = (int64_t)timegm(&tm) / 86400;
			if ((day + 1) * DAY_MS > cut)
				continue;
			snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", name);
			PGresult *cnt = run(s, "counting a day's rows", sql, NULL, &r);
			if (!cnt)
				break;
			*n += (uint64_t)col_i64(cnt, 0, 0);
			PQclear(cnt);
			snprintf(sql, sizeof sql, "DROP TABLE %s", name);
			if ((r = exec_sql(s, "dropping a day's partition", sql)) < 0)
				break;
			/* no longer made: a later row of that day makes it again */
			for (size_t d = 0; d < s->ndays; d++)
				if (s->days[d] == day)
					s->days[d] = s->days[--s->ndays];
		}
		PQclear(parts);
		if (r < 0)
			return r;
	}
	struct params c = {0};
	p_i64(&c, cut);
	snprintf(sql, sizeof sql, "DELETE FROM %s WHERE t_ms < $1", t->name);
	PGresult *res = run(s, "removing raw rows", sql, &c, &r);
	if (!res)
		return r;
	*n += strtoull(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	return 0;
}

/* As sqlite.c's: a rolled-up table's cut moves back to a minute's start unless that takes
 * nothing. */
static int cut_to_minute(struct store *s, const char *table, int64_t *cut)
{
	char name[64];
	struct params p = {0};
	int r;
	snprintf(name, sizeof name, "raw:%s", table);
	p_str(&p, name);
	PGresult *res = run(s, "retention", "SELECT upto_ms FROM rollup WHERE name = $1", &p, &r);
	if (!res)
		return r;
	int64_t raw = PQntuples(res) ? col_i64(res, 0, 0) : 0;
	PQclear(res);
	if (minute_of(*cut) > raw)
		*cut = minute_of(*cut);
	return 0;
}

static int pg_retain(struct store *s, int64_t before_ms, const char *archive_dir, size_t max_rows, uint64_t *moved)
{
	*moved = 0;
	int r = flush_for_read(s);
	if (r < 0 || (r = pg_begin(s)) < 0)
		return r;
	/* minutes closed here (the roll-up lock first, as every writer takes it), partitions
	 * dropped here: one connection at a time changes them */
	r = exec_sql(s, "retention", "SELECT pg_advisory_xact_lock(" ROLLUP_LOCK_KEY "); " SCHEMA_LOCK);
	for (size_t i = 0; r >= 0 && i < sizeof tables / sizeof tables[0]; i++) {
		const struct table_spec *t = &tables[i];
		int64_t cut = before_ms;
		uint64_t n = 0;
		/* the archive is written before the rows go: a crash between the two writes the same
		 * file again next time (its name is its rows' range), never loses them */
		if ((r = cutoff(s, t->name, before_ms, max_rows, &cut)) < 0)
			break;
		if (t->rollup && (r = cut_to_minute(s, t->rollup, &cut)) < 0)
			break;
		if (archive_dir && *archive_dir && (r = archive_table(s, t, cut, archive_dir, &n)) < 0)
			break;
		/* every minute the rows are in is rolled up before they go; raw rows are read from
		 * the minute after cut on */
		int64_t upto = minute_of(cut + MINUTE_MS - 1), now;
		if (t->rollup && (r = *t->rollup == 'i' ? close_intervals(s, upto, &now) : close_nodes(s, NULL, upto, &now)) < 0)
			break;
		/* the per-process sums before where the raw rows will start (never read: a series
		 * reads the minutes there) go, of the processes the last call left rows of (it took
		 * those before where the raw rows then started), by their key; not counted in moved */
		if (!strcmp(t->name, "intervals")) {
			struct params p = {0};
			p_i64(&p, upto);
			if ((r = exec_p(s, "retention",
					"DELETE FROM proc_intervals WHERE proc_id IN (SELECT id FROM processes WHERE first_ms > 0"
					" AND first_ms < $1 AND last_ms >= coalesce((SELECT upto_ms FROM rollup"
					" WHERE name = 'raw:intervals'), 0)) AND t_ms < $1",
					&p)) < 0)
				break;
		}
		if (t->rollup) {
			char name[64];
			struct params p = {0};
			snprintf(name, sizeof name, "raw:%s", t->rollup);
			p_str(&p, name);
			p_i64(&p, upto);
			if ((r = exec_p(s, "retention", "UPDATE rollup SET upto_ms = greatest(upto_ms, $2) WHERE name = $1", &p)) < 0)
				break;
		}
		if ((r = remove_rows(s, t, cut, &n)) < 0)
			break;
		*moved += n;
	}
	if (r >= 0)
		return pg_commit(s);
	pg_rollback(s);
	return r;
}

static int pg_batch_mark(struct store *s, const char *host, uint64_t seq)
{
	struct params p = {0};
	int r;
	p_str(&p, host);
	p_u64(&p, seq);
	PGresult *res = run(s, "marking a batch", "INSERT INTO batches(host, seq) VALUES($1, $2) ON CONFLICT DO NOTHING",
			    &p, &r);
	if (!res)
		return r;
	r = strcmp(PQcmdTuples(res), "1") ? 1 : 0;
	PQclear(res);
	return r;
}

/* ---------- the node's cursor (schema 11) ---------- */

static int pg_node_cursor_put(struct store *s, const char *host, int64_t t_ms, const void *data, size_t len)
{
	struct params p = {0};
	p_str(&p, host);
	p_i64(&p, t_ms);
	p_bin(&p, data, len);
	return exec_p(s, "writing the node's cursor",
		      "INSERT INTO node_cursor(host, t_ms, data) VALUES($1, $2, $3) ON CONFLICT(host) DO UPDATE SET"
		      " t_ms = excluded.t_ms, data = excluded.data",
		      &p);
}

static int pg_node_cursor_get(struct store *s, const char *host, void **data, size_t *len)
{
	struct params p = {0};
	int r;
	p_str(&p, host);
	PGresult *res = run(s, "reading the node's cursor", "SELECT data FROM node_cursor WHERE host = $1", &p, &r);
	if (!res)
		return r;
	r = 0;
	if (PQntuples(res) == 1) {
		size_t n = 0;
		unsigned char *b = PQunescapeBytea((const unsigned char *)PQgetvalue(res, 0, 0), &n);
		if (!b)
			r = -ENOMEM;
		else if (n && !(*data = malloc(n)))
			r = -ENOMEM;
		else if (n) {
			memcpy(*data, b, n);
			*len = n;
		}
		PQfreemem(b);
	}
	PQclear(res);
	return r;
}

/* ---------- diagnoses (schema 10) ---------- */

static int pg_diagnosis_put(struct store *s, const struct store_diag_row *d)
{
	struct params p = {0};
	p_i64(&p, d->job_key);
	p_str(&p, d->app);
	p_i64(&p, d->ranks);
	p_i64(&p, d->start_ms);
	p_i64(&p, d->t_ms);
	p_i64(&p, d->anomalies);
	p_str(&p, d->text);
	p_str(&p, d->json);
	p_i64(&p, d->job_rows);
	return exec_p(s, "storing a diagnosis",
		      "INSERT INTO diagnoses(job_id, app, ranks, start_ms, t_ms, anomalies, text, json, job_rows, host)"
		      " VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, coalesce((SELECT host FROM jobs WHERE id = $1), ''))"
		      " ON CONFLICT(job_id) DO UPDATE SET app = excluded.app,"
		      " ranks = excluded.ranks, start_ms = excluded.start_ms, t_ms = excluded.t_ms,"
		      " anomalies = excluded.anomalies, text = excluded.text, json = excluded.json,"
		      " job_rows = excluded.job_rows, host = excluded.host WHERE excluded.job_rows >= diagnoses.job_rows",
		      &p);
}

static int pg_diagnosis_get(struct store *s, int64_t job_key, int json, char **out)
{
	struct params p = {0};
	int r;
	*out = NULL;
	p_i64(&p, job_key);
	PGresult *res = run(s, "reading a diagnosis",
			    json ? "SELECT json FROM diagnoses WHERE job_id = $1" : "SELECT text FROM diagnoses WHERE job_id = $1",
			    &p, &r);
	if (!res)
		return r;
	if (PQntuples(res) > 0 && !(*out = strdup(col_text(res, 0, 0))))
		r = -ENOMEM;
	PQclear(res);
	return r;
}

/* fn per first column of res's rows until it returns non-zero; res cleared */
static int pg_keys_of(PGresult *res, int (*fn)(int64_t key, void *ctx), void *ctx)
{
	for (int i = 0; i < PQntuples(res); i++)
		if (fn(col_i64(res, i, 0), ctx))
			break;
	PQclear(res);
	return 0;
}

static int pg_diag_similar(struct store *s, const char *app, uint32_t ranks, int64_t before_ms, size_t limit,
			   int (*fn)(int64_t job_key, void *ctx), void *ctx)
{
	struct params p = {0};
	int r;
	p_str(&p, app);
	p_i64(&p, ranks);
	p_i64(&p, before_ms);
	p_i64(&p, (int64_t)limit);
	PGresult *res = run(s, "finding similar jobs",
			    "SELECT job_id FROM diagnoses WHERE app = $1 AND ranks = $2 AND start_ms < $3"
			    " ORDER BY start_ms DESC, job_id DESC LIMIT $4",
			    &p, &r);
	return res ? pg_keys_of(res, fn, ctx) : r;
}

/* The rows of a diagnoses query selecting (job_id, ranks, start_ms, t_ms, anomalies, json, uid),
 * each given to fn; res cleared. 0. */
static int pg_diag_rows(PGresult *res, int (*fn)(const struct store_diag_row *d, void *ctx), void *ctx)
{
	for (int i = 0; i < PQntuples(res); i++) {
		struct store_diag_row d = {.job_key = col_i64(res, i, 0), .ranks = (uint32_t)col_i64(res, i, 1),
					   .start_ms = col_i64(res, i, 2), .t_ms = col_i64(res, i, 3),
					   .anomalies = (unsigned)col_i64(res, i, 4), .json = col_text(res, i, 5),
					   .uid = (uint32_t)col_i64(res, i, 6)};
		if (fn(&d, ctx))
			break;
	}
	PQclear(res);
	return 0;
}

static int pg_diag_alerts(struct store *s, uint32_t uid, int64_t since_ms, size_t limit,
			  int (*fn)(const struct store_diag_row *d, void *ctx), void *ctx)
{
	struct params p = {0};
	int r;
	p_i64(&p, since_ms);
	p_i64(&p, uid == STORE_ANY_UID ? -1 : (int64_t)uid);
	p_i64(&p, (int64_t)limit);
	PGresult *res = run(s, "reading alerts",
			    "SELECT d.job_id, d.ranks, d.start_ms, d.t_ms, d.anomalies, d.json, j.uid FROM diagnoses d"
			    " JOIN jobs j ON j.id = d.job_id WHERE d.anomalies > 0 AND d.t_ms >= $1"
			    " AND ($2::bigint < 0 OR j.uid = $2) ORDER BY d.t_ms DESC, d.job_id DESC LIMIT $3",
			    &p, &r);
	return res ? pg_diag_rows(res, fn, ctx) : r;
}

static int pg_diag_node(struct store *s, const char *host, int64_t before_ms, size_t limit,
			int (*fn)(const struct store_diag_row *d, void *ctx), void *ctx)
{
	struct params p = {0};
	int r;
	p_str(&p, host);
	p_i64(&p, before_ms);
	p_i64(&p, (int64_t)limit);
	PGresult *res = run(s, "reading a node's diagnoses",
			    "SELECT d.job_id, d.ranks, d.start_ms, d.t_ms, d.anomalies, d.json, j.uid FROM diagnoses d"
			    " JOIN jobs j ON j.id = d.job_id WHERE d.host = $1 AND d.start_ms < $2"
			    " ORDER BY d.start_ms DESC, d.job_id DESC LIMIT $3",
			    &p, &r);
	return res ? pg_diag_rows(res, fn, ctx) : r;
}

static int pg_diag_pending(struct store *s, int64_t since_ms, size_t limit, int (*fn)(int64_t job_key, void *ctx),
			   void *ctx)
{
	struct params p = {0};
	int r;
	p_i64(&p, (int64_t)limit);
	p_i64(&p, since_ms);
	PGresult *res = run(s, "finding jobs to diagnose",
			    "SELECT min(j.id) FROM jobs j WHERE j.report_ms >= $2 AND j.report_json IS NOT NULL"
			    " AND j.running = 0 AND NOT EXISTS(SELECT 1 FROM diagnoses d WHERE d.job_id = j.id)"
			    " GROUP BY j.job, j.uid ORDER BY min(j.end_ms), min(j.id) LIMIT $1",
			    &p, &r);
	return res ? pg_keys_of(res, fn, ctx) : r;
}

static int pg_diag_peers(struct store *s, int64_t job_key, int (*fn)(const struct store_diag_peer *p, void *ctx),
			 void *ctx)
{
	struct params p = {0};
	int r;
	p_i64(&p, job_key);
	PGresult *res = run(s, "reading a job's rows",
			    "SELECT k.id, k.host, (k.running = 0 AND k.report_json IS NOT NULL)::int, coalesce(k.report_ms, 0),"
			    " k.sched_nodes, coalesce(d.job_rows, -1) FROM jobs j JOIN jobs k ON k.job = j.job"
			    " AND k.uid = j.uid LEFT JOIN diagnoses d ON d.job_id = k.id WHERE j.id = $1 ORDER BY k.id",
			    &p, &r);
	if (!res)
		return r;
	for (int i = 0; i < PQntuples(res); i++) {
		struct store_diag_peer x = {.key = col_i64(res, i, 0), .host = col_text(res, i, 1),
					    .reported = col_i64(res, i, 2) != 0, .report_ms = col_i64(res, i, 3),
					    .sched_nodes = col_text_or_null(res, i, 4),
					    .diag_rows = col_i64(res, i, 5)};
		if (fn(&x, ctx))
			break;
	}
	PQclear(res);
	return 0;
}

static const struct store_ops store_pg_ops = {
	.name = "postgresql",
	.close = pg_close,
	.error = pg_error,
	.begin = pg_begin,
	.commit = pg_commit,
	.rollback = pg_rollback,
	.job_put = pg_job_put,
	.proc_put = pg_proc_put,
	.file_key = pg_file_key,
	.interval_add = pg_interval_add,
	.job_totals_add = pg_job_totals_add,
	.node_sec_add = pg_node_sec_add,
	.device_add = pg_device_add,
	.sample_add = pg_sample_add,
	.dist_add = pg_dist_add,
	.run_add = pg_run_add,
	.job_report_put = pg_job_report_put,
	.job_findings_put = pg_job_findings_put,
	.job_sched_put = pg_job_sched_put,
	.proc_find = pg_proc_find,
	.job_logs = pg_job_logs,
	.procs_open = pg_procs_open,
	.jobs = pg_jobs,
	.jobs_count = pg_jobs_count,
	.job_report = pg_job_report,
	.node_secs = pg_node_secs,
	.devices = pg_devices,
	.samples = pg_samples,
	.dists = pg_dists,
	.node_hosts = pg_node_hosts,
	.user_secs = pg_user_secs,
	.job_series = pg_job_series,
	.retain = pg_retain,
	.batch_mark = pg_batch_mark,
	.node_cursor_put = pg_node_cursor_put,
	.node_cursor_get = pg_node_cursor_get,
	.diagnosis_put = pg_diagnosis_put,
	.diagnosis_get = pg_diagnosis_get,
	.diag_similar = pg_diag_similar,
	.diag_alerts = pg_diag_alerts,
	.diag_pending = pg_diag_pending,
	.diag_node = pg_diag_node,
	.diag_peers = pg_diag_peers,
};
