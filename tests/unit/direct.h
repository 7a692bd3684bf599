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

#endif
