/* SPDX-License-Identifier: MIT */
/* SQL straight on a store's database, for what store.h cannot say (findings, the schema version,
 * an index, the shape of an older store): the unit tests that take a store URL share it. */
#ifndef IOSTRATA_TEST_UNIT_DIRECT_H
#define IOSTRATA_TEST_UNIT_DIRECT_H

#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One statement of sql on the store at url ("sqlite:PATH", a path, or postgresql://...): its one
 * integer (0 for a statement that returns no row), or -1 on an error (printed as a comment). */
static inline int64_t direct_sql_int(const char *url, const char *sql)
{
	int64_t v = -1;
	if (!strncmp(url, "postgres", 8)) {
		PGconn *c = PQconnectdb(url);
		PGresult *res = PQstatus(c) == CONNECTION_OK ? PQexec(c, sql) : NULL;
		if (res && PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
			v = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		else if (res && PQresultStatus(res) == PGRES_COMMAND_OK)
			v = 0;
		else
			printf("# %s: %s", sql, PQerrorMessage(c));
		PQclear(res);
		PQfinish(c);
		return v;
	}
	sqlite3 *db;
	sqlite3_stmt *st;
	const char *path = strncmp(url, "sqlite:", 7) ? url : url + 7;
	if (sqlite3_open(path, &db) == SQLITE_OK && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		int rc = sqlite3_step(st);
		v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : rc == SQLITE_DONE ? 0 : -1;
		sqlite3_finalize(st);
	} else {
		printf("# %s: %s\n", sql, sqlite3_errmsg(db));
	}
	sqlite3_close(db);
	return v;
}

/* How the database would run sql: the last column of every row of its EXPLAIN (SQLite's EXPLAIN
 * QUERY PLAN; PostgreSQL's, index scans preferred: a table of a few test rows is otherwise read
 * whole), one line each, into buf. 0, or -1 (printed). */
static inline int direct_sql_plan(const char *url, const char *sql, char *buf, size_t len)
{
	char q[4096];
	size_t o = 0;
	int r = -1;
	buf[0] = 0;
	if (!strncmp(url, "postgres", 8)) {
		snprintf(q, sizeof q, "SET enable_seqscan = off; EXPLAIN %s", sql);
		PGconn *c = PQconnectdb(url);
		PGresult *res = PQstatus(c) == CONNECTION_OK ? PQexec(c, q) : NULL;
		if (res && PQresultStatus(res) == PGRES_TUPLES_OK) {
			for (int i = 0; i < PQntuples(res) && o < len; i++)
				o += (size_t)snprintf(buf + o, len - o, "%s\n", PQgetvalue(res, i, PQnfields(res) - 1));
			r = 0;
		} else {
			printf("# %s: %s", q, PQerrorMessage(c));
		}
		PQclear(res);
		PQfinish(c);
		return r;
	}
	sqlite3 *db;
	sqlite3_stmt *st;
	const char *path = strncmp(url, "sqlite:", 7) ? url : url + 7;
	snprintf(q, sizeof q, "EXPLAIN QUERY PLAN %s", sql);
	if (sqlite3_open(path, &db) == SQLITE_OK && sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW && o < len) {
			const unsigned char *t = sqlite3_column_text(st, sqlite3_column_count(st) - 1);
			o += (size_t)snprintf(buf + o, len - o, "%s\n", t ? (const char *)t : "");
		}
		sqlite3_finalize(st);
		r = 0;
	} else {
		printf("# %s: %s\n", q, sqlite3_errmsg(db));
	}
	sqlite3_close(db);
	return r;
}

/* Each of n statements run: 0, or -1 at the first that fails (printed). */
static inline int direct_sql_all(const char *url, const char *const *sql, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (direct_sql_int(url, sql[i]) < 0)
			return -1;
	return 0;
}

/* A store made back into the schema before the distributions' timed requests (SQLite's 16,
 * PostgreSQL's 14). 0, or -1 (printed). */
static inline int direct_back_before_timed(const char *url)
{
	int pg = !strncmp(url, "postgres", 8);
	const char *const back[] = {"ALTER TABLE server_dists DROP COLUMN timed",
				    pg ? "UPDATE schema_version SET version = 14" : "PRAGMA user_version = 16"};
	return direct_sql_all(url, back, sizeof back / sizeof back[0]);
}

/* SQLite's schema 16 made back into 15: the processes' cursors and windows in their rows again. 0, or
 * -1 (printed). */
static inline int direct_sqlite_back_to_15(const char *url)
{
	if (direct_back_before_timed(url) < 0)
		return -1;
	static const char *const back[] = {
		"ALTER TABLE processes ADD COLUMN cursor BLOB",
		"ALTER TABLE processes ADD COLUMN first_ms INTEGER NOT NULL DEFAULT 0",
		"ALTER TABLE processes ADD COLUMN last_ms INTEGER NOT NULL DEFAULT 0",
		"UPDATE processes SET cursor = c.cursor, first_ms = c.first_ms, last_ms = c.last_ms FROM proc_cursors c"
		" WHERE c.proc_id = processes.id",
		"DROP TABLE proc_cursors",
		"PRAGMA user_version = 15",
	};
	return direct_sql_all(url, back, sizeof back / sizeof back[0]);
}

/* An SQLite store of schema 16 made back into schema 14's form (the tests of older schemas' migrations):
 * 15's first, then a row a (process, file, layer, category) in intervals and intervals_minute, schema
 * 4's view. 0, or -1 (printed). */
static inline int direct_sqlite_back_to_14(const char *url)
{
	if (direct_sqlite_back_to_15(url) < 0)
		return -1;
	static const char *const back[] = {
		"CREATE TABLE iv14(t_ms INTEGER NOT NULL, dt_ms INTEGER NOT NULL, proc_id INTEGER NOT NULL,"
		" file_id INTEGER NOT NULL, layer INTEGER NOT NULL, cat INTEGER NOT NULL, bytes INTEGER NOT NULL,"
		" calls INTEGER NOT NULL, dur_ns INTEGER NOT NULL, PRIMARY KEY(t_ms, proc_id, file_id, layer, cat)) WITHOUT ROWID",
		"INSERT INTO iv14 SELECT t_ms, dt_ms, proc_id, file_id, layer, cat, bytes, calls, dur_ns FROM interval_rows",
		"CREATE TABLE ivm14(t_ms INTEGER NOT NULL, proc_id INTEGER NOT NULL, file_id INTEGER NOT NULL,"
		" layer INTEGER NOT NULL, cat INTEGER NOT NULL, bytes INTEGER NOT NULL, calls INTEGER NOT NULL,"
		" dur_ns INTEGER NOT NULL, PRIMARY KEY(t_ms, proc_id, file_id, layer, cat)) WITHOUT ROWID",
		"INSERT INTO ivm14 SELECT t_ms, proc_id, file_id, layer, cat, bytes, calls, dur_ns FROM interval_minute_rows",
		"DROP VIEW interval_stats",
		"DROP VIEW interval_rows",
		"DROP VIEW interval_minute_rows",
		"DROP TABLE proc_minutes",
		"DROP TABLE intervals",
		"DROP TABLE intervals_minute",
		"ALTER TABLE iv14 RENAME TO intervals",
		"ALTER TABLE ivm14 RENAME TO intervals_minute",
		"CREATE INDEX intervals_minute_proc ON intervals_minute(proc_id, t_ms)",
		"CREATE VIEW interval_stats AS SELECT i.t_ms, i.dt_ms, j.job, p.host, j.user, p.uid, p.pid, p.rank, p.exe,"
		" f.path AS file, i.layer, CASE i.cat WHEN 0 THEN 'read' WHEN 1 THEN 'write' ELSE 'metadata' END AS category,"
		" i.bytes, i.calls, i.dur_ns, CASE WHEN i.calls > 0 THEN i.bytes / i.calls ELSE 0 END AS bytes_per_call"
		" FROM intervals i JOIN processes p ON p.id = i.proc_id JOIN jobs j ON j.id = p.job_id"
		" JOIN files f ON f.id = i.file_id",
		"PRAGMA user_version = 14",
	};
	return direct_sql_all(url, back, sizeof back / sizeof back[0]);
}

#endif
