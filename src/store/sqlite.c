/* SPDX-License-Identifier: MIT */
/*
 * The embedded store on SQLite (store.h): one file, WAL journal, prepared statements kept for
 * the life of the handle, schema versions migrated forward in one transaction each. The schema
 * is docs/STORE.md's; the first lines of migrations[] are version 1. Errors map SQLite's codes to
 * errno values (SQLITE_FULL: -ENOSPC, SQLITE_READONLY: -EROFS ...) so the daemon can tell a full
 * disk, which it waits out, from a broken file. It does not decide what to store.
 */
#include "store/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log/zstd.h"
#include "store/archive.h"
#include "store/ivpack.h"

enum stmt_id {
	ST_JOB_FIND,
	ST_JOB_INSERT,
	ST_JOB_UPDATE,
	ST_PROC_FIND,
	ST_PROC_INSERT,
	ST_PROC_UPDATE,
	ST_PROC_UPDATES,
	ST_PROC_CURSOR,
	ST_PROC_CURSORS,
	ST_FILE_FIND,
	ST_FILE_INSERT,
	ST_IV_ROW,
	ST_IV_ROWS,
	ST_NODE_SEC,
	ST_DEVICE,
	ST_JOB_TOTALS,
	ST_SAMPLE,
	ST_DIST,
	ST_RUN,
	ST_MINUTE_ROW,
	ST_MINUTE_ROWS,
	ST_PROC_IV_ADD,
	ST_PROC_MIN_ADD,
	ST_NODE_OLD,
	ST_NODE_MINUTE_ADD,
	ST_NODE_CLOSE,
	ST_ROLLUP_SET,
	ST_ROLLUP_GET,
	ST_NODE_CURSOR,
	ST_NSTMT
};

/* Rows of intervals and intervals_minute (one a process and interval, schema 15) go PK_GROUP to a
 * statement: SQLite's cost of a statement's step (its program's start, the upsert's set-up, the
 * reset) is then paid once for 32 rows, not once a row (docs/STORE.md, "The statistics'
 * transaction"). 32 rows of a process of 16 files are about 15 KB: a few pages, so that the
 * statement journal of a multi-row upsert stays in memory (struct pk_batch). */
#define PK_GROUP 32
#define PK4 "(?,?,?,?)"
#define PK4_4 PK4 "," PK4 "," PK4 "," PK4
#define PK4_16 PK4_4 "," PK4_4 "," PK4_4 "," PK4_4
#define PK4_32 PK4_16 "," PK4_16
#define PK3 "(?,?,?)"
#define PK3_4 PK3 "," PK3 "," PK3 "," PK3
#define PK3_16 PK3_4 "," PK3_4 "," PK3_4 "," PK3_4
#define PK3_32 PK3_16 "," PK3_16
/* A row of a key stored already (a late row, the same interval in two transactions, a daemon
 * restarted) adds its entries to the stored ones, as the per-file rows' upsert added: the
 * writer's function iostrata_merge (sql_merge below) sums the two texts by (file, layer, cat). */
#define PK_IV_UPSERT " ON CONFLICT(t_ms, proc_id) DO UPDATE SET stats = iostrata_merge(stats, dt_ms, excluded.stats, excluded.dt_ms)"
#define PK_MIN_UPSERT " ON CONFLICT(t_ms, proc_id) DO UPDATE SET stats = iostrata_merge(stats, 0, excluded.stats, 0)"

/* An entry of a packed column (ivpack.h) in SQL: json_each(stats) AS e, its Nth number (the 7th,
 * an interval length other than its row's, absent as a rule). */
#define JX(n) "json_extract(e.value, '$[" #n "]')"
#define JX_DT(row) "coalesce(" JX(6) ", " row ")"

static const char *const stmt_sql[ST_NSTMT] = {
	[ST_JOB_FIND] = "SELECT id FROM jobs WHERE job = ?1 AND host = ?2 AND uid = ?3",
	[ST_JOB_INSERT] = "INSERT INTO jobs(job, host, uid, user, exe, jobdir, start_ms, end_ms, running, app) "
			  "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	[ST_JOB_UPDATE] = "UPDATE jobs SET end_ms = ?2, running = ?3, "
			  "start_ms = CASE WHEN start_ms = 0 OR ?4 < start_ms THEN ?4 ELSE start_ms END, "
			  "exe = CASE WHEN exe = '' THEN ?5 ELSE exe END, app = CASE WHEN exe = '' THEN ?7 ELSE app END, "
			  "jobdir = CASE WHEN jobdir = '' THEN ?6 ELSE jobdir END WHERE id = ?1",
	[ST_PROC_FIND] = "SELECT id FROM processes WHERE host = ?1 AND pid = ?2 AND start_ns = ?3",
	[ST_PROC_INSERT] = "INSERT INTO processes(job_id, host, pid, rank, start_ns, start_ticks, uid, exe, live_path, "
			   "final_path, start_ms, end_ms, state) "
			   "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
	/* only when they changed (schema 16): SQLite rewrites the row and the entry of processes_state
	 * for an UPDATE that names state, even to the value it has */
	[ST_PROC_UPDATE] = "UPDATE processes SET end_ms = ?2, state = ?3 WHERE id = ?1 AND (end_ms <> ?2 OR state <> ?3)",
	/* what changes every statistics, in a row of its own a process (schema 16): its window grown
	 * (?5: the transaction had rows of it; the window's first end moves back, its last forward) and
	 * its cursor replaced (?6: the transaction gave one) */
	[ST_PROC_CURSOR] = "INSERT INTO proc_cursors(proc_id, first_ms, last_ms, cursor) VALUES(?1, ?2, ?3, ?4)"
			   " ON CONFLICT(proc_id) DO UPDATE SET"
			   " first_ms = CASE WHEN ?5 AND (first_ms = 0 OR ?2 < first_ms) THEN ?2 ELSE first_ms END,"
			   " last_ms = CASE WHEN ?5 THEN max(last_ms, ?3) ELSE last_ms END,"
			   " cursor = CASE WHEN ?6 THEN ?4 ELSE cursor END",
	/* the same, PK_GROUP processes to a statement (win_flush): ST_PROC_UPDATE's (id, end_ms, state),
	 * and ST_PROC_CURSOR's (proc_id, first_ms, last_ms, cursor) of processes with a window and a
	 * cursor (the daemon's statistics: every live process) */
	[ST_PROC_UPDATES] = "UPDATE processes SET end_ms = v.column2, state = v.column3 FROM (VALUES" PK3_32 ") AS v"
			    " WHERE processes.id = v.column1 AND (processes.end_ms <> v.column2 OR processes.state <> v.column3)",
	[ST_PROC_CURSORS] = "INSERT INTO proc_cursors(proc_id, first_ms, last_ms, cursor) VALUES" PK4_32
			    " ON CONFLICT(proc_id) DO UPDATE SET first_ms = CASE WHEN first_ms = 0 OR excluded.first_ms < first_ms"
			    " THEN excluded.first_ms ELSE first_ms END, last_ms = max(last_ms, excluded.last_ms),"
			    " cursor = excluded.cursor",
	[ST_FILE_FIND] = "SELECT id FROM files WHERE path = ?1",
	[ST_FILE_INSERT] = "INSERT INTO files(path) VALUES(?1)",
	[ST_IV_ROW] = "INSERT INTO intervals(t_ms, proc_id, dt_ms, stats) VALUES" PK4 PK_IV_UPSERT,
	[ST_IV_ROWS] = "INSERT INTO intervals(t_ms, proc_id, dt_ms, stats) VALUES" PK4_32 PK_IV_UPSERT,
	[ST_NODE_SEC] = "INSERT OR REPLACE INTO node_seconds(t_ms, dt_ms, host, layer, bytes_read, bytes_written, reads, "
			"writes, meta_ops, read_hist, write_hist) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	[ST_DEVICE] = "INSERT OR REPLACE INTO device_samples(t_ms, dt_ms, host, device, major, minor, reads, "
		      "reads_merged, sectors_read, ms_reading, writes, writes_merged, sectors_written, ms_writing, "
		      "in_flight, ms_io, ms_weighted, discards, sectors_discarded, flushes) "
		      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
	[ST_SAMPLE] = "INSERT OR REPLACE INTO samples(t_ms, dt_ms, host, source, instance, metric, value, gauge) "
		      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[ST_DIST] = "INSERT OR REPLACE INTO server_dists(t_ms, host, server, op, requests, timed, wait_hist, service_hist) "
		    "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[ST_RUN] = "INSERT OR IGNORE INTO runs(proc_id, tid, idx, t_ms, file_id, layer, op, off, size, count, start_ns, "
		   "end_ns, busy_ns, min_ns, result) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
	[ST_MINUTE_ROW] = "INSERT INTO intervals_minute(t_ms, proc_id, stats) VALUES" PK3 PK_MIN_UPSERT,
	[ST_MINUTE_ROWS] = "INSERT INTO intervals_minute(t_ms, proc_id, stats) VALUES" PK3_32 PK_MIN_UPSERT,
	[ST_PROC_IV_ADD] = "INSERT INTO proc_intervals(proc_id, t_ms, layer, cat, bytes, calls, dur_ns, dt_ms)"
			   " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT(proc_id, t_ms, layer, cat) DO UPDATE"
			   " SET bytes = bytes + excluded.bytes, calls = calls + excluded.calls, dur_ns = dur_ns + excluded.dur_ns,"
			   " dt_ms = max(dt_ms, excluded.dt_ms)",
	[ST_PROC_MIN_ADD] = "INSERT INTO proc_minutes(proc_id, t_ms, layer, cat, bytes, calls, dur_ns)"
			    " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(proc_id, t_ms, layer, cat) DO UPDATE"
			    " SET bytes = bytes + excluded.bytes, calls = calls + excluded.calls, dur_ns = dur_ns + excluded.dur_ns",
	[ST_NODE_OLD] = "SELECT bytes_read, bytes_written, reads, writes, meta_ops FROM node_seconds"
			" WHERE host = ?1 AND t_ms = ?2 AND layer = ?3",
	[ST_NODE_MINUTE_ADD] = "INSERT INTO node_minutes(t_ms, host, layer, bytes_read, bytes_written, reads, writes, meta_ops)"
			       " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT(host, t_ms, layer) DO UPDATE SET"
			       " bytes_read = bytes_read + excluded.bytes_read, bytes_written = bytes_written + excluded.bytes_written,"
			       " reads = reads + excluded.reads, writes = writes + excluded.writes, meta_ops = meta_ops + excluded.meta_ops",
	/* a host's minutes [?2, ?3) from its node-seconds (read by the key: host, t_ms) */
	[ST_NODE_CLOSE] = "INSERT INTO node_minutes(t_ms, host, layer, bytes_read, bytes_written, reads, writes, meta_ops)"
			  " SELECT t_ms / 60000 * 60000, host, layer, sum(bytes_read), sum(bytes_written), sum(reads), sum(writes),"
			  " sum(meta_ops) FROM node_seconds WHERE host = ?1 AND t_ms >= ?2 AND t_ms < ?3 GROUP BY 1, 3"
			  " ON CONFLICT(host, t_ms, layer) DO UPDATE SET bytes_read = bytes_read + excluded.bytes_read,"
			  " bytes_written = bytes_written + excluded.bytes_written, reads = reads + excluded.reads,"
			  " writes = writes + excluded.writes, meta_ops = meta_ops + excluded.meta_ops",
	[ST_ROLLUP_SET] = "INSERT INTO rollup(name, upto_ms) VALUES(?1, ?2) ON CONFLICT(name) DO UPDATE SET"
			  " upto_ms = max(upto_ms, excluded.upto_ms)",
	[ST_ROLLUP_GET] = "SELECT upto_ms FROM rollup WHERE name = ?1",
	[ST_NODE_CURSOR] = "INSERT OR REPLACE INTO node_cursor(host, t_ms, data) VALUES(?1, ?2, ?3)",
	[ST_JOB_TOTALS] = "UPDATE jobs SET bytes_read = bytes_read + ?2, bytes_written = bytes_written + ?3, "
			  "bytes_meta = bytes_meta + ?4, reads = reads + ?5, writes = writes + ?6, "
			  "meta_ops = meta_ops + ?7 WHERE id = ?1",
};

/* A writer's transaction keeps up to this many dirty pages in memory before it writes any to the
 * WAL (SQLite's default: its cache_size, 2 MiB). A page spilled mid-transaction and changed again
 * is rewritten in place, and the commit then reads back every frame after it and writes each
 * frame's header again (its checksum): on bench/daemon the statistics' transaction (16,000 rows,
 * 1,000 cursors) spilled, and a quarter of the daemon's WAL writes were such headers (893 of
 * 3,411 in 21 s; docs/STORE.md, "The statistics' transaction"). 8 MiB holds it; a larger one
 * (retention's deletes) still spills past it. */
#define SPILL_PAGES 2048
#define STR_(x) #x
#define STR(x) STR_(x)

static void sq_close(struct store *s);
static const struct store_ops store_sqlite_ops;

/* The open minutes of interval statistics, summed in memory as rows arrive and written once
 * when a later minute's row arrives (docs/STORE.md, "Roll-ups and windows"): one entry per
 * (minute, process, file, layer, category). */
struct acc_ent {
	int64_t minute, proc, file;
	int64_t bytes, calls, dur;
	int64_t dt; /* the longest interval added (proc_intervals' dt_ms; 0 in the minutes' table) */
	int16_t layer, cat;
	int32_t used;
};
/* A table of them: open addressing, at most half full. */
struct acc_tab {
	struct acc_ent *v;
	size_t cap, n;
};
/* One open minute's table. Each minute has its own, so that a minute that closes is written and
 * freed whole, with no table made again for the minutes still open: one table for all made a
 * new one at each close while the old was held (4.7 and 2.4 MB on bench/daemon), and a
 * job's end that closes 16,000 files (a new metadata row each) in a new minute held three
 * minutes' entries in one table of 131,072 (docs/STORE.md, "Roll-ups and windows"). */
struct acc_min {
	int64_t minute;
	struct acc_tab t;
};
/* A process's interval ends in this transaction (its window grows at the commit), and its row's
 * update (end, state, cursor: a copy) when the transaction gave one: at the commit its window and
 * cursor go in its row of proc_cursors, its end and state in its row of processes where they
 * changed (win_puts_write; docs/STORE.md, "A process's cursor and window (schema 16)"). */
struct win_ent {
	int64_t proc, lo, hi;
	int has_win, has_put;
	int64_t end_ms, state;
	void *cursor;
	size_t cursor_len;
};
/* An interval row handed over, waiting for its process's row of that interval (iv_flush). */
struct iv_pend {
	int64_t t, proc;
	struct ivp_ent e;
};
/* Rows that wait at most: 256 KB. The daemon hands a process's rows one after another, so a
 * flush of all but the last process's rows writes each process's row once. */
#define PEND_MAX 4096

/* A host's node-seconds: where its minutes stand, the latest row of this transaction. */
struct node_host {
	char *host;
	int64_t upto, max_t;
	int touched;
};

struct store {
	const struct store_ops *ops; /* first: backend.h */
	sqlite3 *db;
	sqlite3_stmt *st[ST_NSTMT];
	char path[4096];
	char err[512];
	int readonly;
	/* roll-ups as the rows arrive (a writer only): the open minutes, in no order */
	struct acc_min *mins;
	size_t nmins, capmins;
	size_t acc_hint; /* the table the last minute closed needed for its entries: a new minute's starts there */
	/* this transaction's rows summed per (t_ms, process, layer, category), file 0: what goes to
	 * proc_intervals at the commit (or before a series is read) */
	struct acc_tab pacc;
	int acc_stale;      /* memory no longer matches the store (a rollback): rebuilt at the next write */
	int64_t iv_upto;    /* minutes before it are in intervals_minute */
	int64_t iv_max_t;   /* the latest interval end in memory */
	int64_t node_raw;   /* 'raw:node_seconds' */
	int64_t iv_raw;     /* 'raw:intervals': a row before it is not added to proc_intervals (never read) */
	struct win_ent *win;
	size_t win_cap, win_n;
	/* the entries the last row found (its process's window, its process's sum): the next row of
	 * the same process takes them without a lookup (checked against the tables as they are) */
	struct win_ent *win_memo;
	struct acc_ent *pacc_memo;
	struct node_host *nh;
	size_t nh_n, nh_cap;
	/* this transaction's interval rows, written one row a process and interval at the commit
	 * (or before a read, or when PEND_MAX wait: iv_flush) */
	struct iv_pend *pend;
	size_t pend_n, pend_cap;
};

/* Version n's statements: migrations[n - 1] takes a store from version n - 1 to n. */
static const char *const migrations[] = {
	/* 1 */
	"CREATE TABLE jobs("
	" id INTEGER PRIMARY KEY, job TEXT NOT NULL, host TEXT NOT NULL, uid INTEGER NOT NULL,"
	" user TEXT NOT NULL DEFAULT '', exe TEXT NOT NULL DEFAULT '', jobdir TEXT NOT NULL DEFAULT '',"
	" start_ms INTEGER NOT NULL DEFAULT 0, end_ms INTEGER NOT NULL DEFAULT 0,"
	" running INTEGER NOT NULL DEFAULT 1, nprocs INTEGER NOT NULL DEFAULT 0,"
	" bytes_read INTEGER NOT NULL DEFAULT 0, bytes_written INTEGER NOT NULL DEFAULT 0,"
	" bytes_meta INTEGER NOT NULL DEFAULT 0, reads INTEGER NOT NULL DEFAULT 0,"
	" writes INTEGER NOT NULL DEFAULT 0, meta_ops INTEGER NOT NULL DEFAULT 0,"
	" sched TEXT, sched_name TEXT, sched_state TEXT, sched_nodes TEXT,"
	" submit_ms INTEGER, sched_start_ms INTEGER, sched_end_ms INTEGER,"
	" report_text TEXT, report_json TEXT, report_ms INTEGER,"
	" UNIQUE(job, host, uid));"
	"CREATE INDEX jobs_uid ON jobs(uid, start_ms);"
	"CREATE TABLE processes("
	" id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL REFERENCES jobs(id), host TEXT NOT NULL,"
	" pid INTEGER NOT NULL, rank INTEGER NOT NULL, start_ns INTEGER NOT NULL, start_ticks INTEGER NOT NULL,"
	" uid INTEGER NOT NULL, exe TEXT NOT NULL, live_path TEXT NOT NULL, final_path TEXT NOT NULL,"
	" start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL, state INTEGER NOT NULL, cursor BLOB,"
	" UNIQUE(host, pid, start_ns));"
	"CREATE INDEX processes_job ON processes(job_id);"
	"CREATE INDEX processes_state ON processes(state) WHERE state = 0;"
	"CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);"
	"CREATE TABLE intervals("
	" t_ms INTEGER NOT NULL, dt_ms INTEGER NOT NULL, proc_id INTEGER NOT NULL, file_id INTEGER NOT NULL,"
	" layer INTEGER NOT NULL, cat INTEGER NOT NULL, bytes INTEGER NOT NULL, calls INTEGER NOT NULL,"
	" dur_ns INTEGER NOT NULL);"
	"CREATE INDEX intervals_proc ON intervals(proc_id);"
	"CREATE INDEX intervals_t ON intervals(t_ms);"
	"CREATE TABLE intervals_minute("
	" t_ms INTEGER NOT NULL, proc_id INTEGER NOT NULL, file_id INTEGER NOT NULL, layer INTEGER NOT NULL,"
	" cat INTEGER NOT NULL, bytes INTEGER NOT NULL, calls INTEGER NOT NULL, dur_ns INTEGER NOT NULL,"
	" PRIMARY KEY(t_ms, proc_id, file_id, layer, cat)) WITHOUT ROWID;"
	"CREATE TABLE node_seconds("
	" t_ms INTEGER NOT NULL, dt_ms INTEGER NOT NULL, host TEXT NOT NULL, layer INTEGER NOT NULL,"
	" bytes_read INTEGER NOT NULL, bytes_written INTEGER NOT NULL, reads INTEGER NOT NULL,"
	" writes INTEGER NOT NULL, meta_ops INTEGER NOT NULL, read_hist TEXT NOT NULL, write_hist TEXT NOT NULL,"
	" PRIMARY KEY(host, t_ms, layer)) WITHOUT ROWID;"
	"CREATE TABLE node_minutes("
	" t_ms INTEGER NOT NULL, host TEXT NOT NULL, layer INTEGER NOT NULL,"
	" bytes_read INTEGER NOT NULL, bytes_written INTEGER NOT NULL, reads INTEGER NOT NULL,"
	" writes INTEGER NOT NULL, meta_ops INTEGER NOT NULL,"
	" PRIMARY KEY(host, t_ms, layer)) WITHOUT ROWID;"
	"CREATE TABLE device_samples("
	" t_ms INTEGER NOT NULL, dt_ms INTEGER NOT NULL, host TEXT NOT NULL, device TEXT NOT NULL,"
	" major INTEGER NOT NULL, minor INTEGER NOT NULL, reads INTEGER NOT NULL, reads_merged INTEGER NOT NULL,"
	" sectors_read INTEGER NOT NULL, ms_reading INTEGER NOT NULL, writes INTEGER NOT NULL,"
	" writes_merged INTEGER NOT NULL, sectors_written INTEGER NOT NULL, ms_writing INTEGER NOT NULL,"
	" in_flight INTEGER NOT NULL, ms_io INTEGER NOT NULL, ms_weighted INTEGER NOT NULL,"
	" discards INTEGER NOT NULL, sectors_discarded INTEGER NOT NULL, flushes INTEGER NOT NULL,"
	" PRIMARY KEY(host, t_ms, device)) WITHOUT ROWID;"
	"CREATE TABLE findings(job_id INTEGER NOT NULL REFERENCES jobs(id), seq INTEGER NOT NULL,"
	" finding TEXT NOT NULL, PRIMARY KEY(job_id, seq));"
	"CREATE VIEW interval_stats AS SELECT i.t_ms, i.dt_ms, j.job, p.host, j.user, p.uid, p.pid, p.rank, p.exe,"
	" f.path AS file, i.layer, CASE i.cat WHEN 0 THEN 'read' WHEN 1 THEN 'write' ELSE 'metadata' END AS category,"
	" i.bytes, i.calls, i.dur_ns, CASE WHEN i.calls > 0 THEN i.bytes / i.calls ELSE 0 END AS bytes_per_call"
	" FROM intervals i JOIN processes p ON p.id = i.proc_id JOIN jobs j ON j.id = p.job_id"
	" JOIN files f ON f.id = i.file_id;",
	/* 2: the samplers' dynamic metric set */
	"CREATE TABLE samples("
	" t_ms INTEGER NOT NULL, dt_ms INTEGER NOT NULL, host TEXT NOT NULL, source TEXT NOT NULL,"
	" instance TEXT NOT NULL, metric TEXT NOT NULL, value INTEGER NOT NULL, gauge INTEGER NOT NULL,"
	" PRIMARY KEY(host, t_ms, source, instance, metric)) WITHOUT ROWID;",
	/* 3: server-side distributions per N requests */
	"CREATE TABLE server_dists("
	" t_ms INTEGER NOT NULL, host TEXT NOT NULL, server TEXT NOT NULL, op TEXT NOT NULL,"
	" requests INTEGER NOT NULL, wait_hist TEXT NOT NULL, service_hist TEXT NOT NULL,"
	" PRIMARY KEY(host, t_ms, server, op)) WITHOUT ROWID;",
	/* 4: interval statistics keyed by their interval (no rowid, no second index: 2.5x fewer
	 * microseconds a row, docs/BENCHMARKS.md "Daemon"); a job's rows are found through its
	 * processes, a time range through the key */
	"CREATE TABLE intervals_v4("
	" t_ms INTEGER NOT NULL, dt_ms INTEGER NOT NULL, proc_id INTEGER NOT NULL, file_id INTEGER NOT NULL,"
	" layer INTEGER NOT NULL, cat INTEGER NOT NULL, bytes INTEGER NOT NULL, calls INTEGER NOT NULL,"
	" dur_ns INTEGER NOT NULL, PRIMARY KEY(t_ms, proc_id, file_id, layer, cat)) WITHOUT ROWID;"
	"INSERT INTO intervals_v4 SELECT t_ms, max(dt_ms), proc_id, file_id, layer, cat, sum(bytes), sum(calls), sum(dur_ns)"
	" FROM intervals GROUP BY t_ms, proc_id, file_id, layer, cat;"
	"DROP VIEW interval_stats;"
	"DROP TABLE intervals;"
	"ALTER TABLE intervals_v4 RENAME TO intervals;"
	"CREATE VIEW interval_stats AS SELECT i.t_ms, i.dt_ms, j.job, p.host, j.user, p.uid, p.pid, p.rank, p.exe,"
	" f.path AS file, i.layer, CASE i.cat WHEN 0 THEN 'read' WHEN 1 THEN 'write' ELSE 'metadata' END AS category,"
	" i.bytes, i.calls, i.dur_ns, CASE WHEN i.calls > 0 THEN i.bytes / i.calls ELSE 0 END AS bytes_per_call"
	" FROM intervals i JOIN processes p ON p.id = i.proc_id JOIN jobs j ON j.id = p.job_id"
	" JOIN files f ON f.id = i.file_id;",
	/* 5: a job's process count is counted from its processes, never kept */
	"ALTER TABLE jobs DROP COLUMN nprocs;",
	/* 6: the daemon's outgoing batches per sink, its counters, the batches an ingest applied */
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;"
	"CREATE TABLE outbox(sink INTEGER NOT NULL, seq INTEGER NOT NULL, t_ms INTEGER NOT NULL, data BLOB NOT NULL,"
	" PRIMARY KEY(sink, seq)) WITHOUT ROWID;"
	"CREATE TABLE batches(host TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY(host, seq)) WITHOUT ROWID;",
	/* 7: traced processes' runs (seed 001's merged records), once each */
	"CREATE TABLE runs(proc_id INTEGER NOT NULL, tid INTEGER NOT NULL, idx INTEGER NOT NULL, t_ms INTEGER NOT NULL,"
	" file_id INTEGER NOT NULL, layer INTEGER NOT NULL, op INTEGER NOT NULL, off INTEGER NOT NULL,"
	" size INTEGER NOT NULL, count INTEGER NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,"
	" busy_ns INTEGER NOT NULL, min_ns INTEGER NOT NULL, result INTEGER NOT NULL,"
	" PRIMARY KEY(proc_id, tid, idx)) WITHOUT ROWID;"
	"CREATE INDEX runs_t ON runs(t_ms);",
	/* 8: the web API's reads (docs/STORE.md, "Indexes"): a job's interval rows by its processes
	 * (a series read 92,000 rows of 49 million, not all of them), the jobs list walked in its
	 * order with every filter's column at hand (a page and its count without the rows' reports),
	 * and the jobs running or ended since a time (the event stream's poll, every second).
	 * IF NOT EXISTS: a migration that only adds indexes may move to another version number. */
	"CREATE INDEX IF NOT EXISTS intervals_proc ON intervals(proc_id, t_ms);"
	"CREATE INDEX IF NOT EXISTS intervals_minute_proc ON intervals_minute(proc_id, t_ms);"
	"CREATE INDEX IF NOT EXISTS jobs_list ON jobs(start_ms, uid, running, end_ms, user, exe);"
	"CREATE INDEX IF NOT EXISTS jobs_end ON jobs(end_ms);",
	/* 9: the index on intervals(proc_id, t_ms) cost 2.5 us of 3.4 a row (docs/STORE.md,
	 * "Roll-ups and windows (schema 9)"): gone. A process's first and last interval end say
	 * where its raw rows lie (a job's series scans that time range of the key), and the minute
	 * roll-ups are kept as the rows arrive (the writer closes a minute once), so a coarse series
	 * reads them. rollup holds where each roll-up stands: 'intervals' and 'node:HOST' (the
	 * minutes before it are rolled up), 'raw:intervals' and 'raw:node_seconds' (retention took
	 * the raw rows before it). The roll-ups of a migrated store are made here from its raw rows. */
	"ALTER TABLE processes ADD COLUMN first_ms INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE processes ADD COLUMN last_ms INTEGER NOT NULL DEFAULT 0;"
	"UPDATE processes SET first_ms = coalesce((SELECT min(t_ms) FROM intervals WHERE proc_id = processes.id), 0),"
	" last_ms = coalesce((SELECT max(t_ms) FROM intervals WHERE proc_id = processes.id), 0);"
	"DROP INDEX IF EXISTS intervals_proc;"
	"CREATE TABLE rollup(name TEXT PRIMARY KEY, upto_ms INTEGER NOT NULL) WITHOUT ROWID;"
	"INSERT INTO rollup SELECT 'raw:intervals', coalesce(max(t_ms) + 60000, 0) FROM intervals_minute;"
	"INSERT INTO rollup SELECT 'raw:node_seconds', coalesce(max(t_ms) + 60000, 0) FROM node_minutes;"
	"INSERT INTO intervals_minute(t_ms, proc_id, file_id, layer, cat, bytes, calls, dur_ns)"
	" SELECT t_ms / 60000 * 60000, proc_id, file_id, layer, cat, sum(bytes), sum(calls), sum(dur_ns) FROM intervals"
	" WHERE 1 GROUP BY 1, 2, 3, 4, 5 ON CONFLICT(t_ms, proc_id, file_id, layer, cat) DO UPDATE SET"
	" bytes = bytes + excluded.bytes, calls = calls + excluded.calls, dur_ns = dur_ns + excluded.dur_ns;"
	"INSERT INTO rollup SELECT 'intervals', max(coalesce((SELECT max(t_ms) FROM intervals) / 60000 * 60000 + 60000, 0),"
	" (SELECT upto_ms FROM rollup WHERE name = 'raw:intervals'));"
	"INSERT INTO node_minutes(t_ms, host, layer, bytes_read, bytes_written, reads, writes, meta_ops)"
	" SELECT t_ms / 60000 * 60000, host, layer, sum(bytes_read), sum(bytes_written), sum(reads), sum(writes),"
	" sum(meta_ops) FROM node_seconds WHERE 1 GROUP BY 2, 1, 3 ON CONFLICT(host, t_ms, layer) DO UPDATE SET"
	" bytes_read = bytes_read + excluded.bytes_read, bytes_written = bytes_written + excluded.bytes_written,"
	" reads = reads + excluded.reads, writes = writes + excluded.writes, meta_ops = meta_ops + excluded.meta_ops;"
	"INSERT INTO rollup SELECT 'node:' || host, max(max(t_ms) / 60000 * 60000 + 60000,"
	" (SELECT upto_ms FROM rollup WHERE name = 'raw:node_seconds')) FROM node_seconds GROUP BY host;"
	/* the jobs list (docs/STORE.md, "Indexes"): an application's jobs by the command's file name
	 * (kept in app; SQLite's jobs_list scan called substr() on every row), the running jobs, and
	 * a user's (with the other filters' columns: a heavy user's rows are not read one by one);
	 * the order itself (start, then key: no sorter for an offset) with the jobs' ends, narrower
	 * than jobs_list for a page or a time range */
	"ALTER TABLE jobs ADD COLUMN app TEXT NOT NULL DEFAULT '';"
	"UPDATE jobs SET app = substr(exe, length(rtrim(exe, replace(exe, '/', ''))) + 1);"
	"CREATE INDEX jobs_app ON jobs(app, start_ms, end_ms, running, user, uid);"
	"CREATE INDEX jobs_running ON jobs(start_ms) WHERE running = 1;"
	"CREATE INDEX jobs_user ON jobs(user, start_ms, end_ms, running, app, uid);"
	"CREATE INDEX jobs_start ON jobs(start_ms, id, end_ms);",
	/* 10: a job's diagnosis, made when it ended, with its application key and scale: a
	 * diagnosis finds the similar jobs of the past by the key's index, and the alerts are the
	 * diagnoses with anomalies, newest first (docs/DIAGNOSIS.md, docs/STORE.md) */
	"CREATE TABLE diagnoses(job_id INTEGER PRIMARY KEY REFERENCES jobs(id), app TEXT NOT NULL,"
	" ranks INTEGER NOT NULL, start_ms INTEGER NOT NULL, t_ms INTEGER NOT NULL, anomalies INTEGER NOT NULL,"
	" text TEXT NOT NULL, json TEXT NOT NULL);"
	"CREATE INDEX diagnoses_app ON diagnoses(app, ranks, start_ms);"
	"CREATE INDEX diagnoses_alerts ON diagnoses(t_ms) WHERE anomalies > 0;"
	"CREATE INDEX jobs_reported ON jobs(report_ms) WHERE report_json IS NOT NULL;",
	/* 11: the node's cursor (docs/STORE.md, "Two cadences"): the per-file statistics and the
	 * processes' cursors are written every stats_interval, the node-seconds every interval; what
	 * the node-seconds counted beyond the stored cursors is kept here, one row per host replaced
	 * in every interval's transaction, so a restarted daemon counts it once */
	"CREATE TABLE node_cursor(host TEXT PRIMARY KEY, t_ms INTEGER NOT NULL, data BLOB NOT NULL) WITHOUT ROWID;",
	/* 12: a process's interval statistics summed over its files, keyed by the process (docs/STORE.md,
	 * "A job's series"): a job's fine series reads its own rows, one range of the key per process,
	 * where the intervals' key (time first) made it read every job's rows of its time range (bench/
	 * web's 2 h job of 16 ranks: 570,000 rows for its 92,000). Written at each commit from the
	 * transaction's rows summed in memory; retention takes them with the raw rows. */
	"CREATE TABLE proc_intervals(proc_id INTEGER NOT NULL, t_ms INTEGER NOT NULL, layer INTEGER NOT NULL,"
	" cat INTEGER NOT NULL, bytes INTEGER NOT NULL, calls INTEGER NOT NULL, dur_ns INTEGER NOT NULL,"
	" PRIMARY KEY(proc_id, t_ms, layer, cat)) WITHOUT ROWID;"
	"INSERT INTO proc_intervals SELECT proc_id, t_ms, layer, cat, sum(bytes), sum(calls), sum(dur_ns) FROM intervals"
	" WHERE t_ms >= coalesce((SELECT upto_ms FROM rollup WHERE name = 'raw:intervals'), 0) GROUP BY 1, 2, 3, 4;",
	/* 13: a diagnosis keeps its job row's host, so a node's record walks diagnoses(host,
	 * start_ms) (the rowid, job_id, ends the index: its order's tie-break too), and the number
	 * of its job's reported rows it saw: a row of the job that comes later makes it stale
	 * (docs/DIAGNOSIS.md, "When it runs"). A migrated diagnosis counts the rows its job has now:
	 * the store's old diagnoses are not all made again. */
	"ALTER TABLE diagnoses ADD COLUMN host TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE diagnoses ADD COLUMN job_rows INTEGER NOT NULL DEFAULT 0;"
	"UPDATE diagnoses SET host = coalesce((SELECT j.host FROM jobs j WHERE j.id = diagnoses.job_id), ''),"
	" job_rows = (SELECT count(*) FROM jobs j JOIN jobs k ON k.job = j.job AND k.uid = j.uid"
	" WHERE j.id = diagnoses.job_id AND k.running = 0 AND k.report_json IS NOT NULL);"
	"CREATE INDEX diagnoses_host ON diagnoses(host, start_ms);",
	/* 14: a process's interval row keeps the interval's length, so a job's series spreads a late
	 * reading (the daemon's interval ran long: two seconds in one row) over the seconds it covers
	 * (docs/STORE.md, "A job's series"). Rows stored before say 0: one step, as before. */
	"ALTER TABLE proc_intervals ADD COLUMN dt_ms INTEGER NOT NULL DEFAULT 0;",
	/* 15: one row a process and interval (docs/STORE.md, "One row a process"): its rows of the
	 * interval, one per (file, layer, category), packed in stats as JSON text in key order
	 * (ivpack.h), which json_each unpacks; the views interval_rows and interval_minute_rows give
	 * the rows as the tables had them, interval_stats its columns as before. 16,000 rows a
	 * statistics on bench/daemon became 1,000 (and as many a minute in intervals_minute). A row's
	 * dt_ms is its first entry's; an entry of another length keeps its own, so that every row
	 * reads back as it was. The entries are in the old key's order (a window's ORDER BY, which
	 * group_concat as a window function follows; GROUP BY's would not promise one), as the writer
	 * puts them and the archive walks them. A job's series in whole minutes reads proc_minutes,
	 * the minutes summed per (process, layer, category) as proc_intervals sums the intervals:
	 * unpacking the minute rows took 1.4x its instructions, and intervals_minute_proc goes. */
	"DROP VIEW interval_stats;"
	"CREATE TABLE intervals_v15(t_ms INTEGER NOT NULL, proc_id INTEGER NOT NULL, dt_ms INTEGER NOT NULL,"
	" stats TEXT NOT NULL, PRIMARY KEY(t_ms, proc_id)) WITHOUT ROWID;"
	"INSERT INTO intervals_v15 SELECT t_ms, proc_id, d, '[' || e || ']' FROM (SELECT t_ms, proc_id, d,"
	" row_number() OVER w AS n, group_concat('[' || file_id || ',' || layer || ',' || cat || ',' || bytes || ','"
	" || calls || ',' || dur_ns || CASE WHEN dt_ms <> d THEN ',' || dt_ms ELSE '' END || ']', ',')"
	" OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS e FROM (SELECT *, first_value(dt_ms)"
	" OVER (PARTITION BY t_ms, proc_id ORDER BY file_id, layer, cat) AS d FROM intervals)"
	" WINDOW w AS (PARTITION BY t_ms, proc_id ORDER BY file_id, layer, cat)) WHERE n = 1;"
	"DROP TABLE intervals;"
	"ALTER TABLE intervals_v15 RENAME TO intervals;"
	"CREATE TABLE proc_minutes(proc_id INTEGER NOT NULL, t_ms INTEGER NOT NULL, layer INTEGER NOT NULL,"
	" cat INTEGER NOT NULL, bytes INTEGER NOT NULL, calls INTEGER NOT NULL, dur_ns INTEGER NOT NULL,"
	" PRIMARY KEY(proc_id, t_ms, layer, cat)) WITHOUT ROWID;"
	"INSERT INTO proc_minutes SELECT proc_id, t_ms, layer, cat, sum(bytes), sum(calls), sum(dur_ns)"
	" FROM intervals_minute GROUP BY 1, 2, 3, 4;"
	"CREATE TABLE intervals_minute_v15(t_ms INTEGER NOT NULL, proc_id INTEGER NOT NULL, stats TEXT NOT NULL,"
	" PRIMARY KEY(t_ms, proc_id)) WITHOUT ROWID;"
	"INSERT INTO intervals_minute_v15 SELECT t_ms, proc_id, '[' || e || ']' FROM (SELECT t_ms, proc_id,"
	" row_number() OVER w AS n, group_concat('[' || file_id || ',' || layer || ',' || cat || ',' || bytes || ','"
	" || calls || ',' || dur_ns || ']', ',') OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS e"
	" FROM intervals_minute WINDOW w AS (PARTITION BY t_ms, proc_id ORDER BY file_id, layer, cat)) WHERE n = 1;"
	"DROP INDEX IF EXISTS intervals_minute_proc;"
	"DROP TABLE intervals_minute;"
	"ALTER TABLE intervals_minute_v15 RENAME TO intervals_minute;"
	"CREATE VIEW interval_rows AS SELECT i.t_ms, " JX_DT("i.dt_ms") " AS dt_ms, i.proc_id, " JX(0) " AS file_id,"
	" " JX(1) " AS layer, " JX(2) " AS cat, " JX(3) " AS bytes, " JX(4) " AS calls, " JX(5) " AS dur_ns"
	" FROM intervals i, json_each(i.stats) e;"
	"CREATE VIEW interval_minute_rows AS SELECT i.t_ms, i.proc_id, " JX(0) " AS file_id, " JX(1) " AS layer,"
	" " JX(2) " AS cat, " JX(3) " AS bytes, " JX(4) " AS calls, " JX(5) " AS dur_ns"
	" FROM intervals_minute i, json_each(i.stats) e;"
	"CREATE VIEW interval_stats AS SELECT i.t_ms, i.dt_ms, j.job, p.host, j.user, p.uid, p.pid, p.rank, p.exe,"
	" f.path AS file, i.layer, CASE i.cat WHEN 0 THEN 'read' WHEN 1 THEN 'write' ELSE 'metadata' END AS category,"
	" i.bytes, i.calls, i.dur_ns, CASE WHEN i.calls > 0 THEN i.bytes / i.calls ELSE 0 END AS bytes_per_call"
	" FROM interval_rows i JOIN processes p ON p.id = i.proc_id JOIN jobs j ON j.id = p.job_id"
	" JOIN files f ON f.id = i.file_id;",
	/* 16: what changes in a process every statistics, its cursor (the last cumulative counters
	 * stored, up to a KB) and its window (first_ms, last_ms), in a narrow row of its own keyed by
	 * the process (docs/STORE.md, "A process's cursor and window"): the statistics' transaction
	 * updated every live process's row, and SQLite rewrote the whole row, paths and all, and its
	 * entry in processes_state (the UPDATE named state): 18.8 of its 55.5 million instructions
	 * (docs/BENCHMARKS.md "dmn15"). A process's row now changes with its end and state only. */
	"CREATE TABLE proc_cursors(proc_id INTEGER PRIMARY KEY, first_ms INTEGER NOT NULL DEFAULT 0,"
	" last_ms INTEGER NOT NULL DEFAULT 0, cursor BLOB);"
	"INSERT INTO proc_cursors SELECT id, first_ms, last_ms, cursor FROM processes;"
	"ALTER TABLE processes DROP COLUMN cursor;"
	"ALTER TABLE processes DROP COLUMN first_ms;"
	"ALTER TABLE processes DROP COLUMN last_ms;",
	/* 17: a server-side distribution says how many of its requests were timed (its histograms'
	 * count): a block device's, from the kernel layer's default depth, are those begun in a
	 * sampling window, its requests /proc/diskstats' count (docs/DAEMON.md). Every record before
	 * timed all of its requests. */
	"ALTER TABLE server_dists ADD COLUMN timed INTEGER NOT NULL DEFAULT 0;"
	"UPDATE server_dists SET timed = requests;",
};
#define NMIGRATIONS (sizeof migrations / sizeof migrations[0])

_Static_assert(NMIGRATIONS == STORE_SQLITE_SCHEMA_VERSION, "one migration per schema version");

static const char *sq_error(const struct store *s)
{
	return s ? s->err : "no store";
}

static int map_rc(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return 0;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_PERM:
	case SQLITE_AUTH:
	case SQLITE_CANTOPEN:
		return -EACCES;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return -EBADMSG;
	default:
		return -EIO;
	}
}

static int fail(struct store *s, int rc, const char *what)
{
	snprintf(s->err, sizeof s->err, "%s: %s: %s", s->path, what, s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
	return map_rc(rc) ? map_rc(rc) : -EIO;
}

static int exec_sql(struct store *s, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		snprintf(s->err, sizeof s->err, "%s: %s", s->path, msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		return map_rc(rc) ? map_rc(rc) : -EIO;
	}
	return 0;
}

static int schema_version(struct store *s, int *v)
{
	sqlite3_stmt *st;
	*v = 0;
	int rc = sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading the schema version");
	if (sqlite3_step(st) == SQLITE_ROW)
		*v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return 0;
}

static int migrate(struct store *s)
{
	int v, r = schema_version(s, &v);
	if (r < 0)
		return r;
	if (v > STORE_SQLITE_SCHEMA_VERSION) {
		snprintf(s->err, sizeof s->err, "%s: schema version %d is newer than this program's %d", s->path, v,
			 STORE_SQLITE_SCHEMA_VERSION);
		return -EPROTO;
	}
	for (; v < STORE_SQLITE_SCHEMA_VERSION; v++) {
		if (s->readonly) {
			snprintf(s->err, sizeof s->err, "%s: schema version %d, this program needs %d (open it once read-write)",
				 s->path, v, STORE_SQLITE_SCHEMA_VERSION);
			return -EPROTO;
		}
		char sql[64];
		if ((r = exec_sql(s, "BEGIN IMMEDIATE")) < 0)
			return r;
		snprintf(sql, sizeof sql, "PRAGMA user_version = %d", v + 1);
		if ((r = exec_sql(s, migrations[v])) < 0 || (r = exec_sql(s, sql)) < 0) {
			exec_sql(s, "ROLLBACK");
			return r;
		}
		if ((r = exec_sql(s, "COMMIT")) < 0)
			return r;
	}
	return 0;
}

/* iostrata_merge(old, old_dt, new, new_dt): two packed texts of one row's key summed entry by
 * entry (ivpack.h), as the stored row's (its dt_ms stays); the writer's upsert of intervals and
 * intervals_minute. A text not of the packed form is an error, never a guess. */
static void sql_merge(sqlite3_context *cx, int argc, sqlite3_value **a)
{
	struct ivp_ent *v = NULL;
	size_t n = 0, cap = 0;
	(void)argc;
	int64_t old_dt = sqlite3_value_int64(a[1]);
	const char *t0 = (const char *)sqlite3_value_text(a[0]);
	int len0 = sqlite3_value_bytes(a[0]);
	const char *t1 = (const char *)sqlite3_value_text(a[2]);
	int len1 = sqlite3_value_bytes(a[2]);
	int r = !t0 || !t1 ? -EINVAL : ivp_parse(t0, (size_t)len0, old_dt, &v, &n, &cap);
	if (r >= 0)
		r = ivp_parse(t1, (size_t)len1, sqlite3_value_int64(a[3]), &v, &n, &cap);
	if (r >= 0)
		r = ivp_sort_sum(v, &n);
	char *out = r >= 0 ? malloc(ivp_text_max(n)) : NULL;
	if (out) {
		size_t len = ivp_encode(out, v, n, old_dt);
		sqlite3_result_text(cx, out, (int)len, free);
	} else if (r == -EINVAL) {
		sqlite3_result_error(cx, "iostrata_merge: a stats column not of the packed form", -1);
	} else {
		sqlite3_result_error_nomem(cx);
	}
	free(v);
}

int store_sqlite_open(const char *url, unsigned flags, struct store **out, char *err, size_t errlen)
{
	struct store *s = calloc(1, sizeof *s);
	int r;
	*out = NULL;
	if (!s) {
		snprintf(err, errlen, "%s: out of memory", url);
		return -ENOMEM;
	}
	s->ops = &store_sqlite_ops;
	r = store_url_path(url, s->path, sizeof s->path);
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", url,
			 r == -EPROTONOSUPPORT ? "not a store this build reads (sqlite:PATH or a path)" : "no path");
		free(s);
		return r;
	}
	s->readonly = !!(flags & STORE_READONLY);
	if (flags & STORE_CREATE) {
		/* made 0600 before SQLite opens it: the store holds every user's paths */
		int fd = open(s->path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			r = -errno;
			snprintf(err, errlen, "%s: cannot create the store: %s", s->path, strerror(errno));
			free(s);
			return r;
		}
		close(fd);
	}
	int oflags = (s->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOFOLLOW |
		     SQLITE_OPEN_NOMUTEX;
	int rc = sqlite3_open_v2(s->path, &s->db, oflags, NULL);
	if (rc != SQLITE_OK) {
		r = map_rc(rc);
		snprintf(err, errlen, "%s: cannot open the store: %s", s->path,
			 s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
		sq_close(s);
		return r ? r : -EIO;
	}
	sqlite3_busy_timeout(s->db, 5000);
	if ((rc = sqlite3_create_function_v2(s->db, "iostrata_merge", 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY,
					     NULL, sql_merge, NULL, NULL, NULL)) != SQLITE_OK) {
		r = fail(s, rc, "registering a function");
		snprintf(err, errlen, "%s", s->err);
		sq_close(s);
		return r;
	}
	/* a reader (serve) keeps its connection: 64 MiB of pages (the jobs' indexes, recent rows)
	 * stay with it instead of SQLite's 2 MiB */
	if (s->readonly)
		exec_sql(s, "PRAGMA cache_size = -65536");
	if ((!s->readonly && ((r = exec_sql(s, "PRAGMA journal_mode=WAL")) < 0 ||
			      (r = exec_sql(s, "PRAGMA synchronous=NORMAL")) < 0 ||
			      (r = exec_sql(s, "PRAGMA cache_spill = " STR(SPILL_PAGES))) < 0)) ||
	    (r = migrate(s)) < 0) {
		snprintf(err, errlen, "%s", s->err);
		sq_close(s);
		return r;
	}
	for (int i = 0; i < ST_NSTMT; i++) {
		if (s->readonly && i != ST_JOB_FIND && i != ST_PROC_FIND && i != ST_FILE_FIND)
			continue;
		rc = sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL);
		if (rc != SQLITE_OK) {
			r = fail(s, rc, "preparing a statement");
			snprintf(err, errlen, "%s", s->err);
			sq_close(s);
			return r;
		}
	}
	s->acc_stale = 1; /* the open minutes are read at the first transaction */
	s->iv_max_t = INT64_MIN;
	*out = s;
	return 0;
}

static void acc_mins_free(struct store *s);

static void sq_close(struct store *s)
{
	if (!s)
		return;
	acc_mins_free(s);
	free(s->mins);
	free(s->pacc.v);
	for (size_t i = 0; i < s->win_cap; i++)
		free(s->win[i].cursor); /* (a transaction never committed) */
	free(s->win);
	for (size_t i = 0; i < s->nh_n; i++)
		free(s->nh[i].host);
	free(s->nh);
	free(s->pend);
	for (int i = 0; i < ST_NSTMT; i++)
		sqlite3_finalize(s->st[i]);
	sqlite3_close(s->db);
	free(s);
}

static int rollups_commit(struct store *s);
static int acc_rebuild(struct store *s);
static void win_clear(struct store *s);
static int win_flush(struct store *s);

static int sq_begin(struct store *s)
{
	win_clear(s);
	int r = exec_sql(s, "BEGIN IMMEDIATE");
	if (r >= 0 && s->acc_stale && (r = acc_rebuild(s)) < 0)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

static void sq_rollback(struct store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	win_clear(s);
	s->acc_stale = 1; /* what memory took from the transaction is gone from the store */
}

static int sq_commit(struct store *s)
{
	int r = s->readonly || sqlite3_get_autocommit(s->db) ? 0 : rollups_commit(s);
	if (r >= 0 && (r = exec_sql(s, "COMMIT")) >= 0)
		return 0;
	sq_rollback(s);
	return r;
}

/* Binds ?1.. from a format: 'i' int64, 'u' uint64 (stored as int64: SQLite's integers are
 * signed; counters never reach 2^63), 's' text (NULL as NULL), 'b' blob (pointer, size_t). */
static void bind(sqlite3_stmt *st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sqlite3_reset(st);
	for (int i = 1; *fmt; fmt++, i++) {
		switch (*fmt) {
		case 'i':
			sqlite3_bind_int64(st, i, va_arg(ap, int64_t));
			break;
		case 'u':
			sqlite3_bind_int64(st, i, (int64_t)va_arg(ap, uint64_t));
			break;
		case 's': {
			const char *t = va_arg(ap, const char *);
			if (t)
				sqlite3_bind_text(st, i, t, -1, SQLITE_STATIC);
			else
				sqlite3_bind_null(st, i);
			break;
		}
		case 'b': {
			const void *p = va_arg(ap, const void *);
			size_t n = va_arg(ap, size_t);
			sqlite3_bind_blob64(st, i, p ? p : "", n, SQLITE_STATIC);
			break;
		}
		}
	}
	va_end(ap);
}

/* Steps a statement that returns no row (or one id): 0, 1 when a row came, or -errno. */
static int step(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc != SQLITE_DONE) {
		int r = fail(s, rc, what);
		sqlite3_reset(st);
		return r;
	}
	return 0;
}

static int find_id(struct store *s, sqlite3_stmt *st, int64_t *id, const char *what)
{
	int r = step(s, st, what);
	if (r == 1)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return r;
}

static const char *col_text(sqlite3_stmt *st, int i);
static const char *col_text_or_null(sqlite3_stmt *st, int i);

static const char *nz(const char *t)
{
	return t ? t : "";
}

/* The command's file name (what follows its last '/'): the jobs list's app filter. */
static const char *app_of(const char *exe)
{
	const char *slash = exe ? strrchr(exe, '/') : NULL;
	return slash ? slash + 1 : nz(exe);
}

static int sq_job_put(struct store *s, struct store_job *j)
{
	int r;
	bind(s->st[ST_JOB_FIND], "ssi", j->job, j->host, (int64_t)j->uid);
	if ((r = find_id(s, s->st[ST_JOB_FIND], &j->key, "finding a job")) < 0)
		return r;
	if (r == 0) {
		bind(s->st[ST_JOB_INSERT], "ssisssiiis", j->job, j->host, (int64_t)j->uid, nz(j->user), nz(j->exe),
		     nz(j->jobdir), j->start_ms, j->end_ms, (int64_t)j->running, app_of(j->exe));
		if ((r = step(s, s->st[ST_JOB_INSERT], "adding a job")) < 0)
			return r;
		j->key = sqlite3_last_insert_rowid(s->db);
		return 0;
	}
	bind(s->st[ST_JOB_UPDATE], "iiiisss", j->key, j->end_ms, (int64_t)j->running, j->start_ms, nz(j->exe),
	     nz(j->jobdir), app_of(j->exe));
	r = step(s, s->st[ST_JOB_UPDATE], "updating a job");
	return r < 0 ? r : 0;
}

static int win_put(struct store *s, const struct store_proc *p);

static int sq_proc_put(struct store *s, struct store_proc *p)
{
	int r;
	if (!p->key) {
		bind(s->st[ST_PROC_FIND], "sii", p->host, (int64_t)p->pid, (int64_t)p->start_ns);
		if ((r = find_id(s, s->st[ST_PROC_FIND], &p->key, "finding a process")) < 0)
			return r;
	}
	/* inside a transaction, an update: at its commit, with the window its rows give (win_flush) */
	if (p->key && !sqlite3_get_autocommit(s->db))
		return win_put(s, p);
	/* the process's row and its cursor's (schema 16) together: outside a transaction, in one of
	 * their own */
	int own = sqlite3_get_autocommit(s->db);
	if (own && (r = exec_sql(s, "SAVEPOINT proc_put")) < 0)
		return r;
	if (!p->key) {
		bind(s->st[ST_PROC_INSERT], "isiiuuisssiii", p->job_key, p->host, (int64_t)p->pid, (int64_t)p->rank,
		     p->start_ns, p->start_ticks, (int64_t)p->uid, nz(p->exe), nz(p->live_path), nz(p->final_path),
		     p->start_ms, p->end_ms, (int64_t)p->state);
		if ((r = step(s, s->st[ST_PROC_INSERT], "adding a process")) >= 0)
			p->key = sqlite3_last_insert_rowid(s->db);
	} else {
		bind(s->st[ST_PROC_UPDATE], "iii", p->key, p->end_ms, (int64_t)p->state);
		r = step(s, s->st[ST_PROC_UPDATE], "updating a process");
	}
	if (r >= 0) {
		bind(s->st[ST_PROC_CURSOR], "iiibii", p->key, INT64_C(0), INT64_C(0), p->cursor, p->cursor_len,
		     INT64_C(0), INT64_C(1));
		r = step(s, s->st[ST_PROC_CURSOR], "storing a process's cursor");
	}
	if (own && r < 0) {
		sqlite3_exec(s->db, "ROLLBACK TO proc_put; RELEASE proc_put", NULL, NULL, NULL);
		return r;
	}
	if (own && (r = exec_sql(s, "RELEASE proc_put")) < 0)
		return r;
	return r < 0 ? r : 0;
}

static int sq_file_key(struct store *s, const char *path, int64_t *key)
{
	int r;
	bind(s->st[ST_FILE_FIND], "s", path);
	if ((r = find_id(s, s->st[ST_FILE_FIND], key, "finding a file")) != 0)
		return r < 0 ? r : 0;
	bind(s->st[ST_FILE_INSERT], "s", path);
	if ((r = step(s, s->st[ST_FILE_INSERT], "adding a file")) < 0)
		return r;
	*key = sqlite3_last_insert_rowid(s->db);
	return 0;
}

/* ---------- roll-ups as the rows arrive, and the processes' windows ---------- */

/* Packed rows (one a process and interval: ivpack.h) gathered PK_GROUP at a time: a full group
 * goes in one statement (grp), the last ones one by one (one); ncols 4 (t_ms, proc_id, dt_ms,
 * stats: intervals) or 3 (t_ms, proc_id, stats: intervals_minute). A statement of several rows
 * that may fail part-way has SQLite copy every page it changes to a statement journal first, in
 * memory up to 64 KiB and then, for the rest of the transaction, into a temporary file (12,000
 * writes in 21 s of bench/daemon when a group's rows lay on 16 pages). So the rows go in key
 * order and a group is a few pages: the journal stays in memory. */
struct pk_batch {
	sqlite3_stmt *one, *grp;
	int ncols, n;
	const char *what;
	int64_t t[PK_GROUP], proc[PK_GROUP], dt[PK_GROUP];
	size_t off[PK_GROUP], len[PK_GROUP];
	char *txt;
	size_t txt_n, txt_cap;
};

static int pk_step(struct store *s, struct pk_batch *b, sqlite3_stmt *st, int from, int nrows)
{
	sqlite3_reset(st);
	for (int i = 0, c = 1; i < nrows; i++) {
		sqlite3_bind_int64(st, c++, b->t[from + i]);
		sqlite3_bind_int64(st, c++, b->proc[from + i]);
		if (b->ncols == 4)
			sqlite3_bind_int64(st, c++, b->dt[from + i]);
		sqlite3_bind_text(st, c++, b->txt + b->off[from + i], (int)b->len[from + i], SQLITE_STATIC);
	}
	int r = step(s, st, b->what);
	return r < 0 ? r : 0;
}

/* The rows gathered, written: a full group in one statement, fewer one by one. */
static int pk_flush(struct store *s, struct pk_batch *b)
{
	int r = 0;
	if (b->n == PK_GROUP)
		r = pk_step(s, b, b->grp, 0, PK_GROUP);
	else
		for (int i = 0; i < b->n && r >= 0; i++)
			r = pk_step(s, b, b->one, i, 1);
	b->n = 0;
	b->txt_n = 0;
	return r;
}

/* A process's row of an interval (its n entries in key order, each key once) gathered. */
static int pk_put(struct store *s, struct pk_batch *b, int64_t t, int64_t proc, int64_t dt, const struct ivp_ent *v,
		  size_t n)
{
	size_t need = ivp_text_max(n);
	if (b->txt_cap - b->txt_n < need) {
		size_t cap = b->txt_cap ? 2 * b->txt_cap : 65536;
		while (cap - b->txt_n < need)
			cap *= 2;
		char *x = realloc(b->txt, cap);
		if (!x)
			return -ENOMEM;
		b->txt = x;
		b->txt_cap = cap;
	}
	b->t[b->n] = t, b->proc[b->n] = proc, b->dt[b->n] = dt;
	b->off[b->n] = b->txt_n;
	b->len[b->n] = ivp_encode(b->txt + b->txt_n, v, n, dt);
	b->txt_n += b->len[b->n] + 1;
	return ++b->n == PK_GROUP ? pk_flush(s, b) : 0;
}

static void pk_free(struct pk_batch *b)
{
	free(b->txt);
}

/* Two keys of five integers, in order. */
static int key5_cmp(const int64_t a[5], const int64_t b[5])
{
	for (int i = 0; i < 5; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* The minutes' key order: (minute, process, file, layer, category). */
static int acc_ent_cmp(const void *pa, const void *pb)
{
	const struct acc_ent *a = *(const struct acc_ent *const *)pa, *b = *(const struct acc_ent *const *)pb;
	const int64_t ka[5] = {a->minute, a->proc, a->file, a->layer, a->cat},
		      kb[5] = {b->minute, b->proc, b->file, b->layer, b->cat};
	return key5_cmp(ka, kb);
}

/* A run of pending rows of one (t_ms, process), where it starts among them. */
struct iv_run {
	int64_t t, proc;
	size_t at, len;
};

static int iv_run_cmp(const void *pa, const void *pb)
{
	const struct iv_run *a = pa, *b = pb;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return a->at < b->at ? -1 : a->at > b->at;
}

/* The pending interval rows written, one row a (t_ms, process): its entries summed by key (a key
 * handed twice adds up, its first dt_ms kept), the row's dt_ms its first row's. All of them, or
 * (keep_last) all but the last process's run, which the next rows handed over may continue. */
static int iv_flush(struct store *s, int keep_last)
{
	size_t lim = s->pend_n;
	if (keep_last)
		while (lim && s->pend[lim - 1].t == s->pend[s->pend_n - 1].t && s->pend[lim - 1].proc == s->pend[s->pend_n - 1].proc)
			lim--;
	if (!lim)
		return 0;
	struct pk_batch b = {.one = s->st[ST_IV_ROW], .grp = s->st[ST_IV_ROWS], .ncols = 4,
			     .what = "adding interval statistics"};
	struct iv_run *run = NULL;
	struct ivp_ent *ent = NULL;
	size_t nrun = 0, cap_ent = 0;
	int sorted = 1, r = 0;
	for (size_t i = 0; i < lim; i++) {
		const struct iv_pend *p = &s->pend[i];
		if (nrun && run[nrun - 1].t == p->t && run[nrun - 1].proc == p->proc) {
			run[nrun - 1].len++;
			continue;
		}
		if (!run && !(run = malloc(lim * sizeof *run))) {
			r = -ENOMEM;
			goto out;
		}
		run[nrun] = (struct iv_run){.t = p->t, .proc = p->proc, .at = i, .len = 1};
		nrun++;
	}
	/* the daemon's processes come in their keys' order as a rule; two runs of one key (its rows
	 * handed apart) sort together, in the order handed */
	for (size_t i = 1; i < nrun && sorted; i++)
		if (run[i - 1].t > run[i].t || (run[i - 1].t == run[i].t && run[i - 1].proc >= run[i].proc))
			sorted = 0;
	if (!sorted)
		qsort(run, nrun, sizeof *run, iv_run_cmp);
	for (size_t i = 0; i < nrun && r >= 0;) {
		size_t j = i, n = 0;
		for (; j < nrun && run[j].t == run[i].t && run[j].proc == run[i].proc; j++)
			n += run[j].len;
		if (n > cap_ent) {
			struct ivp_ent *x = realloc(ent, n * sizeof *x);
			if (!x) {
				r = -ENOMEM;
				break;
			}
			ent = x;
			cap_ent = n;
		}
		n = 0;
		for (size_t k = i; k < j; k++)
			for (size_t q = 0; q < run[k].len; q++)
				ent[n++] = s->pend[run[k].at + q].e;
		int64_t dt = ent[0].dt;
		if ((r = ivp_sort_sum(ent, &n)) >= 0)
			r = pk_put(s, &b, run[i].t, run[i].proc, dt, ent, n);
		i = j;
	}
	if (r >= 0)
		r = pk_flush(s, &b);
out:
	free(run);
	free(ent);
	pk_free(&b);
	memmove(s->pend, s->pend + lim, (s->pend_n - lim) * sizeof *s->pend);
	s->pend_n -= lim;
	return r;
}

#define MINUTE_MS INT64_C(60000)
static int64_t minute_of(int64_t t_ms)
{
	return t_ms >= 0 ? t_ms / MINUTE_MS * MINUTE_MS : -((-t_ms + MINUTE_MS - 1) / MINUTE_MS) * MINUTE_MS;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

/* The entry of a key (a free one when absent), the table grown to stay at most half full. */
static struct acc_ent *acc_slot(struct acc_tab *t, int64_t minute, int64_t proc, int64_t file, int32_t layer,
				int32_t cat)
{
	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 4096;
		struct acc_ent *old = t->v, *v = calloc(cap, sizeof *v);
		if (!v)
			return NULL;
		size_t oldcap = t->cap;
		t->v = v;
		t->cap = cap;
		t->n = 0;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].used) {
				struct acc_ent *e = acc_slot(t, old[i].minute, old[i].proc, old[i].file, old[i].layer, old[i].cat);
				*e = old[i]; /* cannot fail: the table has room */
				t->n++;
			}
		free(old);
	}
	uint64_t h = mix(mix(mix(mix(mix(0, (uint64_t)minute), (uint64_t)proc), (uint64_t)file), (uint64_t)layer),
			 (uint64_t)cat);
	for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct acc_ent *e = &t->v[i];
		if (!e->used || (e->minute == minute && e->proc == proc && e->file == file && e->layer == layer &&
				 e->cat == cat))
			return e;
	}
}

/* A row's figures added to its key's entry; *memo the entry the last call found, taken again
 * without the hash when it is an entry of t as t is now with the same key (t holds one entry a
 * key), then the entry used (a process's rows of one interval come one after another). */
static int acc_add_memo(struct acc_tab *t, struct acc_ent **memo, int64_t minute, int64_t proc, int64_t file,
			int32_t layer, int32_t cat, int64_t bytes, int64_t calls, int64_t dur, int64_t dt)
{
	struct acc_ent *e = *memo;
	if (!e || e < t->v || e >= t->v + t->cap || !e->used || e->minute != minute || e->proc != proc ||
	    e->file != file || e->layer != layer || e->cat != cat) {
		if (!(e = acc_slot(t, minute, proc, file, layer, cat))) {
			*memo = NULL;
			return -ENOMEM;
		}
		if (!e->used) {
			*e = (struct acc_ent){.minute = minute, .proc = proc, .file = file, .layer = layer, .cat = cat,
					      .used = 1};
			t->n++;
		}
		*memo = e;
	}
	e->bytes += bytes;
	e->calls += calls;
	e->dur += dur;
	if (dt > e->dt)
		e->dt = dt;
	return 0;
}

static int acc_add(struct acc_tab *t, int64_t minute, int64_t proc, int64_t file, int32_t layer, int32_t cat,
		   int64_t bytes, int64_t calls, int64_t dur, int64_t dt)
{
	struct acc_ent *memo = NULL;
	return acc_add_memo(t, &memo, minute, proc, file, layer, cat, bytes, calls, dur, dt);
}

static void acc_clear(struct acc_tab *t)
{
	if (t->n)
		memset(t->v, 0, t->cap * sizeof *t->v);
	t->n = 0;
}

static void acc_mins_free(struct store *s)
{
	for (size_t i = 0; i < s->nmins; i++)
		free(s->mins[i].t.v);
	s->nmins = 0;
}

/* The table of a minute, made when absent (as large as the last minute closed needed for its
 * entries, so that a steady load does not grow it table by table, and a minute of many does not
 * make every later one as large); NULL when out of memory. */
static struct acc_tab *acc_min(struct store *s, int64_t minute)
{
	for (size_t i = 0; i < s->nmins; i++)
		if (s->mins[i].minute == minute)
			return &s->mins[i].t;
	if (s->nmins == s->capmins) {
		size_t cap = s->capmins ? 2 * s->capmins : 4;
		struct acc_min *v = realloc(s->mins, cap * sizeof *v);
		if (!v)
			return NULL;
		s->mins = v;
		s->capmins = cap;
	}
	struct acc_min *m = &s->mins[s->nmins];
	*m = (struct acc_min){.minute = minute};
	if (s->acc_hint > 4096 && (m->t.v = calloc(s->acc_hint, sizeof *m->t.v)))
		m->t.cap = s->acc_hint;
	s->nmins++;
	return &m->t;
}

static int acc_min_add(struct store *s, int64_t minute, int64_t proc, int64_t file, int32_t layer, int32_t cat,
		       int64_t bytes, int64_t calls, int64_t dur)
{
	struct acc_tab *t = acc_min(s, minute);
	return t ? acc_add(t, minute, proc, file, layer, cat, bytes, calls, dur, 0) : -ENOMEM;
}

static int acc_min_cmp(const void *pa, const void *pb)
{
	const struct acc_min *a = pa, *b = pb;
	return a->minute < b->minute ? -1 : a->minute > b->minute;
}

static int rollup_get(struct store *s, const char *name, int64_t dflt, int64_t *v)
{
	bind(s->st[ST_ROLLUP_GET], "s", name);
	*v = dflt;
	int r = find_id(s, s->st[ST_ROLLUP_GET], v, "reading the roll-ups' state");
	return r < 0 ? r : 0;
}

static int rollup_set(struct store *s, const char *name, int64_t v)
{
	bind(s->st[ST_ROLLUP_SET], "si", name, v);
	int r = step(s, s->st[ST_ROLLUP_SET], "writing the roll-ups' state");
	return r < 0 ? r : 0;
}

/* Memory made again from the store: the raw rows of the minutes not rolled up yet (after a
 * daemon killed mid-minute, or a rollback). */
static int acc_rebuild(struct store *s)
{
	int r;
	acc_mins_free(s);
	s->iv_max_t = INT64_MIN;
	for (size_t i = 0; i < s->nh_n; i++)
		free(s->nh[i].host);
	s->nh_n = 0;
	if ((r = rollup_get(s, "intervals", 0, &s->iv_upto)) < 0 || (r = rollup_get(s, "raw:node_seconds", 0, &s->node_raw)) < 0 ||
	    (r = rollup_get(s, "raw:intervals", 0, &s->iv_raw)) < 0)
		return r;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db,
				    "SELECT i.t_ms / 60000 * 60000, i.proc_id, " JX(0) ", " JX(1) ", " JX(2) ", sum(" JX(3) "),"
				    " sum(" JX(4) "), sum(" JX(5) "), max(i.t_ms) FROM intervals i, json_each(i.stats) e"
				    " WHERE i.t_ms >= ?1 GROUP BY 1, 2, 3, 4, 5",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading the open minutes");
	sqlite3_bind_int64(st, 1, s->iv_upto);
	while ((r = step(s, st, "reading the open minutes")) == 1) {
		int64_t t = sqlite3_column_int64(st, 8);
		if (t > s->iv_max_t)
			s->iv_max_t = t;
		if ((r = acc_min_add(s, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
				     sqlite3_column_int(st, 3), sqlite3_column_int(st, 4), sqlite3_column_int64(st, 5),
				     sqlite3_column_int64(st, 6), sqlite3_column_int64(st, 7))) < 0)
			break;
	}
	sqlite3_finalize(st);
	if (r >= 0)
		s->acc_stale = 0;
	return r < 0 ? r : 0;
}

/* A process's entries of a closed minute summed per (layer, category) into proc_minutes (what a
 * job's series in whole minutes reads), one row a statement: a process's rows lie apart in its
 * key, as proc_intervals' do (win_flush). The entries are few kinds: a linear search. */
static int proc_minute_put(struct store *s, int64_t minute, int64_t proc, struct ivp_ent *v, size_t n)
{
	int r = 0;
	for (size_t i = 0; i < n && r >= 0; i++) {
		if (v[i].dt) /* summed into an earlier entry's already */
			continue;
		int64_t bytes = v[i].bytes, calls = v[i].calls, dur = v[i].dur;
		for (size_t k = i + 1; k < n; k++)
			if (!v[k].dt && v[k].layer == v[i].layer && v[k].cat == v[i].cat) {
				bytes += v[k].bytes, calls += v[k].calls, dur += v[k].dur;
				v[k].dt = 1;
			}
		bind(s->st[ST_PROC_MIN_ADD], "iiiiiii", proc, minute, (int64_t)v[i].layer, (int64_t)v[i].cat, bytes, calls,
		     dur);
		r = step(s, s->st[ST_PROC_MIN_ADD], "rolling up a minute");
	}
	return r < 0 ? r : 0;
}

/* Writes the minutes before upto (once each; ON CONFLICT adds to what late rows put there) and
 * moves 'intervals' to upto; their tables leave memory. Inside the writer's transaction. */
static int acc_close(struct store *s, int64_t upto)
{
	int r = 0;
	if (upto <= s->iv_upto)
		return 0;
	struct pk_batch pb = {.one = s->st[ST_MINUTE_ROW], .grp = s->st[ST_MINUTE_ROWS], .ncols = 3,
			      .what = "rolling up a minute"};
	struct ivp_ent *ent = NULL;
	size_t cap_ent = 0;
	/* in key order: minute by minute, each minute's entries sorted */
	if (s->nmins) /* (none open: no table at all, which qsort may not be given) */
		qsort(s->mins, s->nmins, sizeof *s->mins, acc_min_cmp);
	size_t nclosed = 0;
	for (; nclosed < s->nmins && s->mins[nclosed].minute < upto && r >= 0; nclosed++) {
		const struct acc_tab *t = &s->mins[nclosed].t;
		size_t n = 0;
		struct acc_ent **closed = malloc((t->n ? t->n : 1) * sizeof *closed);
		if (!closed) {
			r = -ENOMEM;
			break;
		}
		for (size_t i = 0; i < t->cap; i++)
			if (t->v[i].used)
				closed[n++] = &t->v[i];
		qsort(closed, n, sizeof *closed, acc_ent_cmp);
		/* a process's entries of the minute in one row */
		for (size_t i = 0, j; i < n && r >= 0; i = j) {
			for (j = i; j < n && closed[j]->proc == closed[i]->proc; j++)
				;
			if (j - i > cap_ent) {
				struct ivp_ent *x = realloc(ent, (j - i) * sizeof *x);
				if (!x) {
					r = -ENOMEM;
					break;
				}
				ent = x;
				cap_ent = j - i;
			}
			for (size_t k = i; k < j; k++)
				ent[k - i] = (struct ivp_ent){.file = closed[k]->file, .layer = closed[k]->layer,
							      .cat = closed[k]->cat, .bytes = closed[k]->bytes,
							      .calls = closed[k]->calls, .dur = closed[k]->dur};
			r = pk_put(s, &pb, closed[i]->minute, closed[i]->proc, 0, ent, j - i);
			if (r >= 0)
				r = proc_minute_put(s, closed[i]->minute, closed[i]->proc, ent, j - i);
		}
		free(closed);
	}
	free(ent);
	if (r >= 0)
		r = pk_flush(s, &pb);
	pk_free(&pb);
	if (r < 0 || (r = rollup_set(s, "intervals", upto)) < 0) {
		s->acc_stale = 1;
		return r;
	}
	/* the open minutes stay as they are */
	for (size_t i = 0; i < nclosed; i++) {
		for (s->acc_hint = 4096; 2 * (s->mins[i].t.n + 1) > s->acc_hint;)
			s->acc_hint *= 2;
		free(s->mins[i].t.v);
	}
	if (nclosed)
		memmove(s->mins, s->mins + nclosed, (s->nmins - nclosed) * sizeof *s->mins);
	s->nmins -= nclosed;
	s->iv_upto = upto;
	return 0;
}

static struct win_ent *win_slot(struct store *s, int64_t proc)
{
	if (2 * (s->win_n + 1) > s->win_cap) {
		size_t cap = s->win_cap ? 2 * s->win_cap : 1024;
		struct win_ent *old = s->win, *v = calloc(cap, sizeof *v);
		if (!v)
			return NULL;
		size_t oldcap = s->win_cap;
		s->win = v;
		s->win_cap = cap;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].proc)
				*win_slot(s, old[i].proc) = old[i];
		free(old);
	}
	for (size_t i = mix(0, (uint64_t)proc) & (s->win_cap - 1);; i = (i + 1) & (s->win_cap - 1))
		if (!s->win[i].proc || s->win[i].proc == proc)
			return &s->win[i];
}

static int win_note(struct store *s, int64_t proc, int64_t t)
{
	struct win_ent *w = s->win_memo;
	/* (an entry of the table as it is now, of that process: the table holds one) */
	if (!w || w < s->win || w >= s->win + s->win_cap || w->proc != proc)
		w = win_slot(s, proc);
	if (!w)
		return -ENOMEM;
	s->win_memo = w;
	if (!w->proc) {
		*w = (struct win_ent){.proc = proc};
		s->win_n++;
	}
	if (!w->has_win) {
		w->lo = w->hi = t;
		w->has_win = 1;
	} else {
		w->lo = t < w->lo ? t : w->lo;
		w->hi = t > w->hi ? t : w->hi;
	}
	return 0;
}

/* A process's row update, held until the commit (the last one given wins, as two UPDATEs would). */
static int win_put(struct store *s, const struct store_proc *p)
{
	void *c = malloc(p->cursor_len ? p->cursor_len : 1);
	if (!c)
		return -ENOMEM;
	if (p->cursor_len)
		memcpy(c, p->cursor, p->cursor_len);
	struct win_ent *w = win_slot(s, p->key);
	if (!w) {
		free(c);
		return -ENOMEM;
	}
	if (!w->proc) {
		*w = (struct win_ent){.proc = p->key};
		s->win_n++;
	}
	free(w->cursor);
	w->has_put = 1;
	w->end_ms = p->end_ms;
	w->state = (int64_t)p->state;
	w->cursor = c;
	w->cursor_len = p->cursor_len;
	return 0;
}

static void win_clear(struct store *s)
{
	if (s->win_n) {
		for (size_t i = 0; i < s->win_cap; i++)
			free(s->win[i].cursor);
		memset(s->win, 0, s->win_cap * sizeof *s->win);
	}
	s->win_n = 0;
	acc_clear(&s->pacc);
	s->pend_n = 0;
}

/* The host's state (loaded from rollup the first time; a new host starts where retention left
 * the node-seconds). */
static int node_host(struct store *s, const char *host, struct node_host **out)
{
	for (size_t i = 0; i < s->nh_n; i++)
		if (!strcmp(s->nh[i].host, host)) {
			*out = &s->nh[i];
			return 0;
		}
	if (s->nh_n == s->nh_cap) {
		size_t cap = s->nh_cap ? 2 * s->nh_cap : 8;
		struct node_host *v = realloc(s->nh, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		s->nh = v;
		s->nh_cap = cap;
	}
	char name[300];
	snprintf(name, sizeof name, "node:%s", host);
	int64_t upto;
	int r = rollup_get(s, name, INT64_MIN, &upto);
	if (r < 0)
		return r;
	if (upto == INT64_MIN && ((upto = s->node_raw), (r = rollup_set(s, name, upto)) < 0))
		return r;
	struct node_host *h = &s->nh[s->nh_n];
	if (!(h->host = strdup(host)))
		return -ENOMEM;
	h->upto = upto;
	h->max_t = INT64_MIN;
	h->touched = 0;
	s->nh_n++;
	*out = h;
	return 0;
}

/* A host's minutes [its upto, upto) from its node-seconds, and its upto moved. */
static int node_close(struct store *s, struct node_host *h, int64_t upto)
{
	char name[300];
	if (upto <= h->upto)
		return 0;
	snprintf(name, sizeof name, "node:%s", h->host);
	bind(s->st[ST_NODE_CLOSE], "sii", h->host, h->upto, upto);
	int r = step(s, s->st[ST_NODE_CLOSE], "rolling up node-seconds");
	if (r < 0 || (r = rollup_set(s, name, upto)) < 0)
		return r;
	h->upto = upto;
	return 0;
}

static int win_proc_cmp(const void *pa, const void *pb)
{
	const struct win_ent *a = *(const struct win_ent *const *)pa, *b = *(const struct win_ent *const *)pb;
	return a->proc < b->proc ? -1 : a->proc > b->proc;
}

/* A process's cursor and window (proc_cursors), alone. */
static int win_cursor_one(struct store *s, const struct win_ent *w)
{
	sqlite3_stmt *st = s->st[ST_PROC_CURSOR];
	bind(st, "iii", w->proc, w->has_win ? w->lo : 0, w->has_win ? w->hi : 0);
	if (w->has_put)
		sqlite3_bind_blob64(st, 4, w->cursor ? w->cursor : "", w->cursor_len, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 4);
	sqlite3_bind_int64(st, 5, w->has_win);
	sqlite3_bind_int64(st, 6, w->has_put);
	return step(s, st, "updating a process's cursor and window");
}

/* Held updates of processes' end and state (n == PK_GROUP: one statement for all of them). */
static int proc_updates_put(struct store *s, struct win_ent *const *g, int n)
{
	int r = 0;
	if (n < PK_GROUP) {
		for (int k = 0; k < n && r >= 0; k++) {
			bind(s->st[ST_PROC_UPDATE], "iii", g[k]->proc, g[k]->end_ms, g[k]->state);
			r = step(s, s->st[ST_PROC_UPDATE], "updating a process");
		}
		return r;
	}
	sqlite3_stmt *st = s->st[ST_PROC_UPDATES];
	sqlite3_reset(st);
	for (int k = 0; k < n; k++) {
		sqlite3_bind_int64(st, 3 * k + 1, g[k]->proc);
		sqlite3_bind_int64(st, 3 * k + 2, g[k]->end_ms);
		sqlite3_bind_int64(st, 3 * k + 3, g[k]->state);
	}
	return step(s, st, "updating processes");
}

/* Processes' cursors and windows, each with both (n == PK_GROUP: one multi-row upsert). */
static int proc_cursors_put(struct store *s, struct win_ent *const *g, int n)
{
	int r = 0;
	if (n < PK_GROUP) {
		for (int k = 0; k < n && r >= 0; k++)
			r = win_cursor_one(s, g[k]);
		return r;
	}
	sqlite3_stmt *st = s->st[ST_PROC_CURSORS];
	sqlite3_reset(st);
	for (int k = 0; k < n; k++) {
		sqlite3_bind_int64(st, 4 * k + 1, g[k]->proc);
		sqlite3_bind_int64(st, 4 * k + 2, g[k]->lo);
		sqlite3_bind_int64(st, 4 * k + 3, g[k]->hi);
		sqlite3_bind_blob64(st, 4 * k + 4, g[k]->cursor ? g[k]->cursor : "", g[k]->cursor_len, SQLITE_STATIC);
	}
	return step(s, st, "updating processes' cursors and windows");
}

/* The held updates of n processes, in their keys' order: their end and state where they changed,
 * their cursors and windows. Statements of PK_GROUP rows (a statement's own cost, about 4,400
 * instructions, paid once for 32; docs/BENCHMARKS.md "dmn15"); 32 rows of proc_cursors lie on a
 * few pages (its rowid is the process's key), so the statement journal of a multi-row upsert
 * stays in memory (struct pk_batch), and processes' rows change only at a process's end. A
 * cursor without a window, or a window without a cursor, is written alone. */
static int win_puts_write(struct store *s, struct win_ent **v, size_t n)
{
	struct win_ent *upd[PK_GROUP], *cur[PK_GROUP];
	int nu = 0, nc = 0, r = 0;
	for (size_t i = 0; i < n && r >= 0; i++) {
		struct win_ent *w = v[i];
		if (w->has_put && (upd[nu++] = w, nu == PK_GROUP)) {
			r = proc_updates_put(s, upd, nu);
			nu = 0;
		}
		if (r < 0)
			break;
		if (!w->has_put || !w->has_win)
			r = win_cursor_one(s, w);
		else if ((cur[nc++] = w, nc == PK_GROUP)) {
			r = proc_cursors_put(s, cur, nc);
			nc = 0;
		}
	}
	if (r >= 0 && nu)
		r = proc_updates_put(s, upd, nu);
	if (r >= 0 && nc)
		r = proc_cursors_put(s, cur, nc);
	return r < 0 ? r : 0;
}

/* The processes' windows grown by this transaction's rows, their held updates, and its rows summed
 * per process into proc_intervals (at the commit, or before a read). */
static int win_flush(struct store *s)
{
	int r = iv_flush(s, 0);
	struct win_ent **v = NULL;
	size_t n = 0;
	if (r >= 0 && s->win_n) {
		if (!(v = malloc(s->win_n * sizeof *v)))
			r = -ENOMEM;
		for (size_t i = 0; i < s->win_cap && v; i++)
			if (s->win[i].proc)
				v[n++] = &s->win[i];
		if (v) {
			qsort(v, n, sizeof *v, win_proc_cmp);
			r = win_puts_write(s, v, n);
		}
		free(v);
	}
	/* one by one: each process's row lies elsewhere in the key, so 16 to a statement would
	 * touch 16 pages, and a statement of many rows journals every page it touches (below) */
	for (size_t i = 0; i < s->pacc.cap && s->pacc.n && r >= 0; i++) {
		struct acc_ent *e = &s->pacc.v[i];
		if (!e->used)
			continue;
		bind(s->st[ST_PROC_IV_ADD], "iiiiiiii", e->proc, e->minute, (int64_t)e->layer, (int64_t)e->cat, e->bytes,
		     e->calls, e->dur, e->dt);
		r = step(s, s->st[ST_PROC_IV_ADD], "adding a process's interval statistics");
	}
	win_clear(s);
	return r < 0 ? r : 0;
}

/* Before a read inside a transaction: the process updates and windows it holds, written (a
 * read sees what its transaction wrote). */
static int puts_flush(struct store *s)
{
	return s->win_n ? win_flush(s) : 0;
}

/* At the commit: the processes' windows, the minutes that closed. */
static int rollups_commit(struct store *s)
{
	int r = win_flush(s);
	if (r >= 0 && s->iv_max_t != INT64_MIN)
		r = acc_close(s, minute_of(s->iv_max_t));
	for (size_t i = 0; i < s->nh_n && r >= 0; i++) {
		struct node_host *h = &s->nh[i];
		if (h->touched && h->max_t != INT64_MIN)
			r = node_close(s, h, minute_of(h->max_t));
		h->touched = 0;
	}
	return r;
}

/* What a row stored in intervals adds to memory: its process's window, its process's sum, its
 * minute (or, late, the minute's row). */
static int interval_note(struct store *s, const struct store_interval *iv)
{
	int r;
	if ((r = win_note(s, iv->proc_key, iv->t_ms)) < 0 ||
	    (iv->t_ms >= s->iv_raw && (r = acc_add_memo(&s->pacc, &s->pacc_memo, iv->t_ms, iv->proc_key, 0,
							(int32_t)iv->layer, (int32_t)iv->cat, iv->bytes, iv->calls,
							iv->dur_ns, iv->dt_ms)) < 0) ||
	    (sqlite3_get_autocommit(s->db) && (r = win_flush(s)) < 0))
		return r; /* a row outside a transaction is a transaction of its own */
	int64_t m = minute_of(iv->t_ms);
	if (m < s->iv_upto) { /* a late row: its minute was written already */
		const struct ivp_ent e = {.file = iv->file_key, .layer = (int32_t)iv->layer, .cat = (int32_t)iv->cat,
					  .bytes = iv->bytes, .calls = iv->calls, .dur = iv->dur_ns};
		char txt[IVP_ENT_MAX + 3];
		ivp_encode(txt, &e, 1, 0);
		bind(s->st[ST_MINUTE_ROW], "iis", m, iv->proc_key, txt);
		if ((r = step(s, s->st[ST_MINUTE_ROW], "adding to a minute")) < 0)
			return r;
		bind(s->st[ST_PROC_MIN_ADD], "iiiiiii", iv->proc_key, m, (int64_t)iv->layer, (int64_t)iv->cat, iv->bytes,
		     iv->calls, iv->dur_ns);
		r = step(s, s->st[ST_PROC_MIN_ADD], "adding to a minute");
		return r < 0 ? r : 0;
	}
	if (iv->t_ms > s->iv_max_t)
		s->iv_max_t = iv->t_ms;
	return acc_min_add(s, m, iv->proc_key, iv->file_key, (int32_t)iv->layer, (int32_t)iv->cat, iv->bytes, iv->calls,
			   iv->dur_ns);
}

/* A row handed over waits for its process's other rows of the interval (iv_flush: at the commit,
 * before a read, or when PEND_MAX wait); outside a transaction it is written at once. */
static int iv_pend_add(struct store *s, const struct store_interval *iv)
{
	if (s->pend_n == s->pend_cap) {
		size_t cap = s->pend_cap ? 2 * s->pend_cap : 1024;
		struct iv_pend *v = realloc(s->pend, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		s->pend = v;
		s->pend_cap = cap;
	}
	s->pend[s->pend_n++] = (struct iv_pend){
		.t = iv->t_ms, .proc = iv->proc_key,
		.e = {.file = iv->file_key, .layer = (int32_t)iv->layer, .cat = (int32_t)iv->cat, .bytes = iv->bytes,
		      .calls = iv->calls, .dur = iv->dur_ns, .dt = iv->dt_ms}};
	return 0;
}

static int sq_intervals_add(struct store *s, const struct store_interval *v, size_t n)
{
	int r = 0;
	for (size_t i = 0; i < n && r >= 0; i++)
		if ((r = iv_pend_add(s, &v[i])) >= 0)
			r = interval_note(s, &v[i]);
	if (r >= 0 && s->pend_n >= PEND_MAX)
		r = iv_flush(s, 1);
	return r < 0 ? r : 0;
}

static int sq_interval_add(struct store *s, const struct store_interval *iv)
{
	return sq_intervals_add(s, iv, 1);
}

static int sq_job_totals_add(struct store *s, int64_t job_key, const int64_t bytes[STORE_NCATS],
			 const int64_t calls[STORE_NCATS])
{
	bind(s->st[ST_JOB_TOTALS], "iiiiiii", job_key, bytes[0], bytes[1], bytes[2], calls[0], calls[1], calls[2]);
	int r = step(s, s->st[ST_JOB_TOTALS], "adding to a job's totals");
	return r < 0 ? r : 0;
}

static int sq_node_sec_add(struct store *s, const struct store_node_sec *ns)
{
	char rh[STORE_HIST * 21 + 1], wh[STORE_HIST * 21 + 1];
	struct node_host *h;
	int r;
	if ((r = node_host(s, ns->host, &h)) < 0)
		return r;
	if (minute_of(ns->t_ms) < h->upto) {
		/* a late row: its minute was written already, and the row replaces one that may be in it */
		int64_t old[5] = {0};
		bind(s->st[ST_NODE_OLD], "sii", ns->host, ns->t_ms, (int64_t)ns->layer);
		if ((r = step(s, s->st[ST_NODE_OLD], "reading a node-second")) == 1)
			for (int i = 0; i < 5; i++)
				old[i] = sqlite3_column_int64(s->st[ST_NODE_OLD], i);
		sqlite3_reset(s->st[ST_NODE_OLD]);
		if (r < 0)
			return r;
		bind(s->st[ST_NODE_MINUTE_ADD], "isiiiiii", minute_of(ns->t_ms), ns->host, (int64_t)ns->layer,
		     (int64_t)ns->bytes_read - old[0], (int64_t)ns->bytes_written - old[1], (int64_t)ns->reads - old[2],
		     (int64_t)ns->writes - old[3], (int64_t)ns->meta_ops - old[4]);
		if ((r = step(s, s->st[ST_NODE_MINUTE_ADD], "adding to a node minute")) < 0)
			return r;
	} else {
		h->touched = 1;
		if (ns->t_ms > h->max_t)
			h->max_t = ns->t_ms;
	}
	store_hist_text(rh, sizeof rh, ns->read_hist);
	store_hist_text(wh, sizeof wh, ns->write_hist);
	bind(s->st[ST_NODE_SEC], "iisiuuuuuss", ns->t_ms, ns->dt_ms, ns->host, (int64_t)ns->layer, ns->bytes_read,
	     ns->bytes_written, ns->reads, ns->writes, ns->meta_ops, rh, wh);
	r = step(s, s->st[ST_NODE_SEC], "adding a node-second");
	return r < 0 ? r : 0;
}

static int sq_device_add(struct store *s, const struct store_device_sample *d)
{
	bind(s->st[ST_DEVICE], "iissiiuuuuuuuuuuuuuu", d->t_ms, d->dt_ms, d->host, d->device, (int64_t)d->major,
	     (int64_t)d->minor, d->reads, d->reads_merged, d->sectors_read, d->ms_reading, d->writes,
	     d->writes_merged, d->sectors_written, d->ms_writing, d->in_flight, d->ms_io, d->ms_weighted,
	     d->discards, d->sectors_discarded, d->flushes);
	int r = step(s, s->st[ST_DEVICE], "adding a device sample");
	return r < 0 ? r : 0;
}

static int sq_sample_add(struct store *s, const struct store_sample *x)
{
	bind(s->st[ST_SAMPLE], "iissssii", x->t_ms, x->dt_ms, x->host, x->source, x->instance, x->metric, x->value,
	     (int64_t)x->gauge);
	int r = step(s, s->st[ST_SAMPLE], "adding a sample");
	return r < 0 ? r : 0;
}

static int sq_dist_add(struct store *s, const struct store_dist *x)
{
	char wh[STORE_HIST * 21 + 1], sh[STORE_HIST * 21 + 1];
	store_hist_text(wh, sizeof wh, x->wait);
	store_hist_text(sh, sizeof sh, x->service);
	bind(s->st[ST_DIST], "isssuuss", x->t_ms, x->host, x->server, x->op, x->requests, x->timed, wh, sh);
	int r = step(s, s->st[ST_DIST], "adding a distribution");
	return r < 0 ? r : 0;
}

/* The WHERE of a node filter: only its conditions (an "?1 IS NULL OR host = ?1" keeps SQLite from
 * the tables' (host, t_ms) keys: a host's week read all hosts' rows); ?1 host, ?2 since, ?3 until.
 * h and t: the host's and the time's column. */
static void node_where(char *buf, size_t len, const struct store_node_filter *f, const char *h, const char *t)
{
	snprintf(buf, len, "%s%s%s%s%s%s%s%s%s", f->host ? h : "", f->host ? " = ?1" : "1", f->since_ms ? " AND " : "",
		 f->since_ms ? t : "", f->since_ms ? " >= ?2" : "", f->until_ms ? " AND " : "", f->until_ms ? t : "",
		 f->until_ms ? " < ?3" : "", "");
}

static int sq_run_add(struct store *s, const struct store_run *x)
{
	bind(s->st[ST_RUN], "iiiiiiiiuuiiuui", x->proc_key, (int64_t)x->tid, (int64_t)x->idx, x->t_ms, x->file_key,
	     (int64_t)x->layer, (int64_t)x->op, x->offset, x->size, x->count, x->start_ns, x->end_ns, x->busy_ns,
	     x->min_ns, x->result);
	int r = step(s, s->st[ST_RUN], "adding a run");
	return r < 0 ? r : 0;
}

static int sq_dists(struct store *s, const struct store_node_filter *f,
		int (*fn)(const struct store_dist *x, void *ctx), void *ctx)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	sqlite3_stmt *st;
	char w[128], sql[512];
	node_where(w, sizeof w, f, "host", "t_ms");
	snprintf(sql, sizeof sql, "SELECT t_ms, host, server, op, requests, timed, wait_hist, service_hist FROM server_dists"
		 " WHERE %s ORDER BY host, t_ms, server, op", w);
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading distributions");
	if (f->host)
		sqlite3_bind_text(st, 1, f->host, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, f->since_ms);
	sqlite3_bind_int64(st, 3, f->until_ms);
	int r;
	while ((r = step(s, st, "reading distributions")) == 1) {
		struct store_dist x = {
			.t_ms = sqlite3_column_int64(st, 0), .host = col_text(st, 1), .server = col_text(st, 2),
			.op = col_text(st, 3), .requests = (uint64_t)sqlite3_column_int64(st, 4),
			.timed = (uint64_t)sqlite3_column_int64(st, 5),
		};
		store_hist_parse(col_text_or_null(st, 6), x.wait);
		store_hist_parse(col_text_or_null(st, 7), x.service);
		if (fn(&x, ctx)) {
			r = 0;
			break;
		}
	}
	sqlite3_finalize(st);
	return r;
}

static int sq_samples(struct store *s, const struct store_node_filter *f, const char *source,
		  int (*fn)(const struct store_sample *x, void *ctx), void *ctx)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	sqlite3_stmt *st;
	char w[128], sql[512];
	node_where(w, sizeof w, f, "host", "t_ms");
	snprintf(sql, sizeof sql, "SELECT t_ms, dt_ms, host, source, instance, metric, value, gauge FROM samples"
		 " WHERE %s AND (?4 IS NULL OR source = ?4) ORDER BY host, t_ms, source, instance, metric", w);
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading samples");
	if (f->host)
		sqlite3_bind_text(st, 1, f->host, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, f->since_ms);
	sqlite3_bind_int64(st, 3, f->until_ms);
	if (source)
		sqlite3_bind_text(st, 4, source, -1, SQLITE_STATIC);
	int r;
	while ((r = step(s, st, "reading samples")) == 1) {
		struct store_sample x = {
			.t_ms = sqlite3_column_int64(st, 0), .dt_ms = sqlite3_column_int64(st, 1),
			.host = col_text(st, 2), .source = col_text(st, 3), .instance = col_text(st, 4),
			.metric = col_text(st, 5), .value = sqlite3_column_int64(st, 6), .gauge = sqlite3_column_int(st, 7),
		};
		if (fn(&x, ctx)) {
			r = 0;
			break;
		}
	}
	sqlite3_finalize(st);
	return r;
}

/* A one-off statement: prepared, bound by bind()'s format, stepped to its end. */
static int run_once(struct store *s, const char *sql, const char *what, const char *fmt, ...)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, what);
	va_list ap;
	va_start(ap, fmt);
	for (int i = 1; *fmt; fmt++, i++) {
		if (*fmt == 'i')
			sqlite3_bind_int64(st, i, va_arg(ap, int64_t));
		else if (*fmt == 's') {
			const char *t = va_arg(ap, const char *);
			if (t)
				sqlite3_bind_text(st, i, t, -1, SQLITE_STATIC);
		} else if (*fmt == 'b') { /* a blob: its pointer, then its size_t length */
			const void *b = va_arg(ap, const void *);
			size_t n = va_arg(ap, size_t);
			sqlite3_bind_blob64(st, i, b, n, SQLITE_STATIC);
		}
	}
	va_end(ap);
	int r;
	while ((r = step(s, st, what)) == 1)
		;
	sqlite3_finalize(st);
	return r;
}

static int sq_job_report_put(struct store *s, int64_t job_key, const char *text, const char *json)
{
	return run_once(s, "UPDATE jobs SET report_text = ?2, report_json = ?3, report_ms = ?4 WHERE id = ?1",
			"storing a job's report", "issi", job_key, text, json, (int64_t)time(NULL) * 1000);
}

/* A long report's JSON as zstd frames: a BLOB where a report is otherwise TEXT (sq_job_report
 * tells them apart by their type). */
static int sq_job_report_put_packed(struct store *s, int64_t job_key, const char *text, const void *z, size_t zlen)
{
	return run_once(s, "UPDATE jobs SET report_text = ?2, report_json = ?3, report_ms = ?4 WHERE id = ?1",
			"storing a job's report", "isbi", job_key, text, z, zlen, (int64_t)time(NULL) * 1000);
}

static int sq_job_findings_put(struct store *s, int64_t job_key, const char *const *findings, size_t n)
{
	int r = run_once(s, "DELETE FROM findings WHERE job_id = ?1", "replacing a job's findings", "i", job_key);
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = run_once(s, "INSERT INTO findings(job_id, seq, finding) VALUES(?1, ?2, ?3)", "storing a finding",
			     "iis", job_key, (int64_t)i, findings[i]);
	return r;
}

static int sq_job_sched_put(struct store *s, const struct store_job *j)
{
	return run_once(s,
			"UPDATE jobs SET sched = ?2, sched_name = ?3, sched_state = ?4, sched_nodes = ?5, submit_ms = ?6,"
			" sched_start_ms = ?7, sched_end_ms = ?8 WHERE id = ?1",
			"storing a job's scheduler facts", "issssiii", j->key, j->sched, j->sched_name, j->sched_state,
			j->sched_nodes, j->submit_ms, j->sched_start_ms, j->sched_end_ms);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? (const char *)t : "";
}

static const char *col_text_or_null(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NULL : col_text(st, i);
}

static int sq_proc_find(struct store *s, const char *host, int32_t pid, uint64_t start_ns, int64_t *key,
		    enum store_proc_state *state)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "SELECT id, state FROM processes WHERE host = ?1 AND pid = ?2 AND start_ns = ?3",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "finding a process");
	sqlite3_bind_text(st, 1, host, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, pid);
	sqlite3_bind_int64(st, 3, (int64_t)start_ns);
	int r = step(s, st, "finding a process");
	if (r == 1) {
		*key = sqlite3_column_int64(st, 0);
		*state = (enum store_proc_state)sqlite3_column_int(st, 1);
		r = 0;
	} else if (r == 0) {
		r = -ENOENT;
	}
	sqlite3_finalize(st);
	return r;
}

static int sq_job_logs(struct store *s, int64_t job_key, const char *host, int (*fn)(const char *path, void *ctx), void *ctx)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db,
				    "SELECT final_path FROM processes WHERE job_id = ?1 AND host = ?2 AND final_path != ''"
				    " ORDER BY final_path",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "listing a job's logs");
	sqlite3_bind_int64(st, 1, job_key);
	sqlite3_bind_text(st, 2, host, -1, SQLITE_STATIC);
	int r;
	while ((r = step(s, st, "listing a job's logs")) == 1)
		if (fn(col_text(st, 0), ctx)) {
			r = 0;
			break;
		}
	sqlite3_finalize(st);
	return r;
}

static int sq_procs_open(struct store *s, const char *host, int (*fn)(const struct store_proc *p, void *ctx), void *ctx)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db,
				    "SELECT id, job_id, host, pid, rank, start_ns, start_ticks, uid, exe, live_path,"
				    " final_path, start_ms, end_ms, state, c.cursor FROM processes"
				    " LEFT JOIN proc_cursors c ON c.proc_id = processes.id WHERE state = 0 AND host = ?1 ORDER BY id",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "listing open processes");
	sqlite3_bind_text(st, 1, host, -1, SQLITE_STATIC);
	int r;
	while ((r = step(s, st, "listing open processes")) == 1) {
		struct store_proc p = {
			.key = sqlite3_column_int64(st, 0),
			.job_key = sqlite3_column_int64(st, 1),
			.host = col_text(st, 2),
			.pid = sqlite3_column_int(st, 3),
			.rank = sqlite3_column_int(st, 4),
			.start_ns = (uint64_t)sqlite3_column_int64(st, 5),
			.start_ticks = (uint64_t)sqlite3_column_int64(st, 6),
			.uid = (uint32_t)sqlite3_column_int64(st, 7),
			.exe = col_text(st, 8),
			.live_path = col_text(st, 9),
			.final_path = col_text(st, 10),
			.start_ms = sqlite3_column_int64(st, 11),
			.end_ms = sqlite3_column_int64(st, 12),
			.state = (enum store_proc_state)sqlite3_column_int(st, 13),
			.cursor = sqlite3_column_blob(st, 14),
			.cursor_len = (size_t)sqlite3_column_bytes(st, 14),
		};
		if (fn(&p, ctx)) {
			r = 0;
			break;
		}
	}
	sqlite3_finalize(st);
	return r;
}

/* nprocs: the process images stored (a forked child that exec'd before any counted call is not one) */
#define JOB_COLS                                                                                           \
	"id, job, host, uid, user, exe, jobdir, start_ms, end_ms, running,"                                    \
	" (SELECT count(*) FROM processes p WHERE p.job_id = jobs.id), sched, sched_name, sched_state," \
	" sched_nodes, submit_ms, sched_start_ms, sched_end_ms, bytes_read, bytes_written, bytes_meta, reads,"   \
	" writes, meta_ops"

static void job_from_row(sqlite3_stmt *st, struct store_job *j)
{
	memset(j, 0, sizeof *j);
	j->key = sqlite3_column_int64(st, 0);
	j->job = col_text(st, 1);
	j->host = col_text(st, 2);
	j->uid = (uint32_t)sqlite3_column_int64(st, 3);
	j->user = col_text(st, 4);
	j->exe = col_text(st, 5);
	j->jobdir = col_text(st, 6);
	j->start_ms = sqlite3_column_int64(st, 7);
	j->end_ms = sqlite3_column_int64(st, 8);
	j->running = sqlite3_column_int(st, 9);
	j->nprocs = (uint32_t)sqlite3_column_int64(st, 10);
	j->sched = col_text_or_null(st, 11);
	j->sched_name = col_text_or_null(st, 12);
	j->sched_state = col_text_or_null(st, 13);
	j->sched_nodes = col_text_or_null(st, 14);
	j->submit_ms = sqlite3_column_int64(st, 15);
	j->sched_start_ms = sqlite3_column_int64(st, 16);
	j->sched_end_ms = sqlite3_column_int64(st, 17);
	for (int c = 0; c < STORE_NCATS; c++) {
		j->bytes[c] = (uint64_t)sqlite3_column_int64(st, 18 + c);
		j->calls[c] = (uint64_t)sqlite3_column_int64(st, 21 + c);
	}
}

/* The WHERE of a job filter (only the conditions it sets: a condition "?N = 0 OR ..." would keep
 * SQLite from any index), its parameters numbered as jobs_bind binds them. */
static void jobs_where(char *buf, size_t len, const struct store_job_filter *f)
{
	size_t n = (size_t)snprintf(buf, len, "1");
#define AND(cond) n += (size_t)snprintf(buf + n, n < len ? len - n : 0, " AND %s", cond)
	if (f->uid != STORE_ANY_UID)
		AND("uid = ?1");
	if (f->user)
		AND("user = ?2");
	if (f->since_ms)
		AND("(end_ms = 0 OR end_ms >= ?3)");
	if (f->until_ms)
		AND("start_ms < ?4");
	if (f->running_only)
		AND("running = 1");
	if (f->ended_only)
		AND("running = 0");
	if (f->job)
		AND("job = ?5");
	if (f->key)
		AND("id = ?6");
	/* the command's path, or its file name: what follows its last '/' */
	if (f->app)
		AND(strchr(f->app, '/') ? "exe = ?7" : "app = ?7");
	if (f->with_findings)
		AND("EXISTS (SELECT 1 FROM findings WHERE findings.job_id = jobs.id)");
#undef AND
}

/* Binds a filter's parameters (those its WHERE does not use are refused by SQLite: ignored). */
static void jobs_bind(sqlite3_stmt *st, const struct store_job_filter *f)
{
	sqlite3_bind_int64(st, 1, f->uid == STORE_ANY_UID ? -1 : (int64_t)f->uid);
	if (f->user)
		sqlite3_bind_text(st, 2, f->user, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, f->since_ms);
	sqlite3_bind_int64(st, 4, f->until_ms);
	if (f->job)
		sqlite3_bind_text(st, 5, f->job, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, f->key);
	if (f->app)
		sqlite3_bind_text(st, 7, f->app, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 8, f->limit ? (int64_t)f->limit : -1);
	sqlite3_bind_int64(st, 9, (int64_t)f->offset);
}

static int sq_jobs(struct store *s, const struct store_job_filter *f, int (*fn)(const struct store_job *j, void *ctx),
	       void *ctx)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	char where[1024], sql[2048];
	sqlite3_stmt *st;
	jobs_where(where, sizeof where, f);
	/* the page's keys first, from the jobs_list index alone; its rows (and their process counts)
	 * only then: an offset skips keys, not rows */
	snprintf(sql, sizeof sql,
		 "SELECT " JOB_COLS " FROM jobs WHERE id IN (SELECT id FROM jobs WHERE %s ORDER BY start_ms, id"
		 " LIMIT ?8 OFFSET ?9) ORDER BY start_ms, id",
		 where);
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "listing jobs");
	jobs_bind(st, f);
	int r;
	while ((r = step(s, st, "listing jobs")) == 1) {
		struct store_job j;
		job_from_row(st, &j);
		if (fn(&j, ctx)) {
			r = 0;
			break;
		}
	}
	sqlite3_finalize(st);
	return r;
}

static int sq_jobs_count(struct store *s, const struct store_job_filter *f, uint64_t *n)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	char where[1024], sql[1200];
	sqlite3_stmt *st;
	jobs_where(where, sizeof where, f);
	snprintf(sql, sizeof sql, "SELECT count(*) FROM jobs WHERE %s", where);
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "counting jobs");
	jobs_bind(st, f);
	int r = step(s, st, "counting jobs");
	*n = r == 1 ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return r < 0 ? r : 0;
}

/* A packed report (sq_job_report_put_packed) as the text it was (its first head bytes or more
 * when head is not 0): 0, or -EBADMSG said. */
static int unpack_report(struct store *s, const void *z, size_t n, size_t head, char **out)
{
	char why[256];
	void *raw = NULL;
	size_t len = 0;
	int zr = head ? log_zstd_decompress_head(z, n, head, &raw, &len, why, sizeof why)
		      : log_zstd_decompress(z, n, &raw, &len, why, sizeof why);
	char *t = zr == 0 ? realloc(raw, len + 1) : NULL;
	if (!t) {
		free(raw);
		if (zr == 0)
			return -ENOMEM;
		snprintf(s->err, sizeof s->err, "%s: reading a job's report: its zstd frames: %s", s->path, why);
		return -EBADMSG;
	}
	t[len] = 0;
	*out = t;
	return 0;
}

static int sq_job_report(struct store *s, int64_t job_key, int json, size_t head, char **out)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	sqlite3_stmt *st;
	*out = NULL;
	/* a text's head cut by SQLite (whole characters), a packed one's by its frames */
	const char *sql = !json ? "SELECT report_text FROM jobs WHERE id = ?1"
		: head ? "SELECT CASE typeof(report_json) WHEN 'text' THEN substr(report_json, 1, ?2) "
			 "ELSE report_json END FROM jobs WHERE id = ?1"
		       : "SELECT report_json FROM jobs WHERE id = ?1";
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading a job's report");
	sqlite3_bind_int64(st, 1, job_key);
	if (json && head)
		sqlite3_bind_int64(st, 2, head > INT32_MAX ? INT32_MAX : (int64_t)head);
	int r = step(s, st, "reading a job's report");
	if (r == 1 && sqlite3_column_type(st, 0) == SQLITE_BLOB) {
		r = unpack_report(s, sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), json ? head : 0,
				  out);
	} else if (r == 1 && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		*out = strdup(col_text(st, 0));
		r = *out ? 0 : -ENOMEM;
	}
	sqlite3_finalize(st);
	return r < 0 ? r : 0;
}

static int node_query(struct store *s, const char *sql, const struct store_node_filter *f, int64_t uid, int64_t split,
		      int (*fn)(const struct store_node_sec *ns, void *ctx), void *ctx)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading node-seconds");
	if (f->host)
		sqlite3_bind_text(st, 1, f->host, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, f->since_ms);
	sqlite3_bind_int64(st, 3, f->until_ms);
	sqlite3_bind_int64(st, 4, uid);
	sqlite3_bind_int64(st, 5, f->resolution_ms); /* refused where unused */
	sqlite3_bind_int64(st, 6, split);
	int r;
	while ((r = step(s, st, "reading node-seconds")) == 1) {
		struct store_node_sec ns = {
			.t_ms = sqlite3_column_int64(st, 0),
			.dt_ms = sqlite3_column_int64(st, 1),
			.host = col_text(st, 2),
			.layer = (unsigned)sqlite3_column_int(st, 3),
			.bytes_read = (uint64_t)sqlite3_column_int64(st, 4),
			.bytes_written = (uint64_t)sqlite3_column_int64(st, 5),
			.reads = (uint64_t)sqlite3_column_int64(st, 6),
			.writes = (uint64_t)sqlite3_column_int64(st, 7),
			.meta_ops = (uint64_t)sqlite3_column_int64(st, 8),
		};
		store_hist_parse(col_text_or_null(st, 9), ns.read_hist);
		store_hist_parse(col_text_or_null(st, 10), ns.write_hist);
		if (fn(&ns, ctx)) {
			r = 0;
			break;
		}
	}
	sqlite3_finalize(st);
	return r;
}

/* A roll-up's state as a reader sees it (0 when absent), on any handle. */
static int rollup_read(struct store *s, const char *name, int64_t *v)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "SELECT upto_ms FROM rollup WHERE name = ?1", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading the roll-ups' state");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	*v = 0;
	int r = step(s, st, "reading the roll-ups' state");
	if (r == 1)
		*v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return r < 0 ? r : 0;
}

/* Where node-seconds are read from (store_node_filter): a host's series in whole minutes reads
 * its minute roll-ups as far as they stand, anything else as far as retention left the raw rows. */
static int node_split(struct store *s, const struct store_node_filter *f, int64_t *split)
{
	char name[300];
	int r = rollup_read(s, "raw:node_seconds", split);
	if (r < 0 || !f->host || f->resolution_ms <= 0 || f->resolution_ms % MINUTE_MS)
		return r;
	int64_t raw = *split;
	snprintf(name, sizeof name, "node:%s", f->host);
	if ((r = rollup_read(s, name, split)) < 0)
		return r;
	if (*split < raw)
		*split = raw;
	return 0;
}

static int sq_node_secs(struct store *s, const struct store_node_filter *f,
		    int (*fn)(const struct store_node_sec *ns, void *ctx), void *ctx)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	char w[128], sql[1536];
	int64_t split;
	int r = node_split(s, f, &split);
	if (r < 0)
		return r;
	node_where(w, sizeof w, f, "host", "t_ms");
	/* the minutes before ?6, the node-seconds from it: one lower bound (two would leave SQLite
	 * to range over the weaker one) */
	char w2[128];
	struct store_node_filter g = *f;
	g.since_ms = 0;
	node_where(w2, sizeof w2, &g, "host", "t_ms");
	if (f->resolution_ms > 0) /* summed here, not row by row by the caller: ?5 the resolution */
		snprintf(sql, sizeof sql,
			 "SELECT b, SUM(dt_ms), host, layer, SUM(bytes_read), SUM(bytes_written), SUM(reads), SUM(writes),"
			 " SUM(meta_ops), NULL, NULL FROM (SELECT t_ms / ?5 * ?5 AS b, 60000 AS dt_ms, host, layer, bytes_read,"
			 " bytes_written, reads, writes, meta_ops FROM node_minutes WHERE %s AND t_ms < ?6 UNION ALL"
			 " SELECT t_ms / ?5 * ?5, dt_ms, host, layer, bytes_read, bytes_written, reads, writes, meta_ops"
			 " FROM node_seconds WHERE %s AND t_ms >= max(?2, ?6)) GROUP BY host, b, layer ORDER BY host, b, layer",
			 w, w2);
	else
		snprintf(sql, sizeof sql,
			 "SELECT * FROM (SELECT t_ms, 60000 AS dt_ms, host, layer, bytes_read, bytes_written, reads, writes,"
			 " meta_ops, NULL AS read_hist, NULL AS write_hist FROM node_minutes WHERE %s AND t_ms < ?6 UNION ALL"
			 " SELECT t_ms, dt_ms, host, layer, bytes_read, bytes_written, reads, writes, meta_ops, read_hist,"
			 " write_hist FROM node_seconds WHERE %s AND t_ms >= max(?2, ?6)) ORDER BY host, t_ms, layer",
			 w, w2);
	return node_query(s, sql, f, -1, split, fn, ctx);
}

/* Every host with node-seconds has its row in rollup (its first row adds it): per host, its first
 * and last time in f's range, each an index seek by (host, t_ms) at either end of its minute
 * roll-ups (before retention's split) and of its node-seconds (from it); never a count of its rows
 * (a week is 1.2 million a host), nor a time range over every host's rows. */
static int sq_node_hosts(struct store *s, const struct store_node_filter *f,
			 int (*fn)(const char *host, int64_t first_ms, int64_t last_ms, void *ctx), void *ctx)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	char w[128], w2[128], sql[1536];
	sqlite3_stmt *st;
	int64_t split;
	struct store_node_filter g = *f;
	g.resolution_ms = 0;
	int r = node_split(s, &g, &split);
	if (r < 0)
		return r;
	g.host = NULL; /* each host's rows by the key: host = h.name */
	node_where(w, sizeof w, &g, "host", "t_ms");
	g.since_ms = 0;
	node_where(w2, sizeof w2, &g, "host", "t_ms");
	snprintf(sql, sizeof sql,
		 "SELECT h.name, (SELECT t_ms FROM node_minutes WHERE host = h.name AND %s AND t_ms < ?6 ORDER BY t_ms"
		 " LIMIT 1), (SELECT t_ms FROM node_minutes WHERE host = h.name AND %s AND t_ms < ?6 ORDER BY t_ms DESC"
		 " LIMIT 1), (SELECT t_ms FROM node_seconds WHERE host = h.name AND %s AND t_ms >= max(?2, ?6) ORDER BY"
		 " t_ms LIMIT 1), (SELECT t_ms FROM node_seconds WHERE host = h.name AND %s AND t_ms >= max(?2, ?6)"
		 " ORDER BY t_ms DESC LIMIT 1)"
		 " FROM (SELECT substr(name, 6) AS name FROM rollup WHERE name LIKE 'node:%%'"
		 " AND (?1 IS NULL OR name = 'node:' || ?1)) h ORDER BY 1",
		 w, w, w2, w2);
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "listing hosts");
	sqlite3_bind_text(st, 1, f->host, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, f->since_ms);
	sqlite3_bind_int64(st, 3, f->until_ms);
	sqlite3_bind_int64(st, 6, split);
	while ((r = step(s, st, "listing hosts")) == 1) {
		/* the minutes come before the node-seconds: the first from them when there are any */
		int mins = sqlite3_column_type(st, 1) != SQLITE_NULL, secs = sqlite3_column_type(st, 3) != SQLITE_NULL;
		if ((mins || secs) &&
		    fn(col_text(st, 0), sqlite3_column_int64(st, mins ? 1 : 3), sqlite3_column_int64(st, secs ? 4 : 2), ctx))
			break;
	}
	sqlite3_finalize(st);
	return r < 0 ? r : 0;
}

static int sq_user_secs(struct store *s, uint32_t uid, const struct store_node_filter *f,
		    int (*fn)(const struct store_node_sec *ns, void *ctx), void *ctx)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	char w[128], sql[2048];
	node_where(w, sizeof w, f, "p.host", "i.t_ms");
	snprintf(sql, sizeof sql,
		 "SELECT i.t_ms, MAX(i.dt_ms), p.host, i.layer,"
		 " SUM(CASE i.cat WHEN 0 THEN i.bytes ELSE 0 END), SUM(CASE i.cat WHEN 1 THEN i.bytes ELSE 0 END),"
		 " SUM(CASE i.cat WHEN 0 THEN i.calls ELSE 0 END), SUM(CASE i.cat WHEN 1 THEN i.calls ELSE 0 END),"
		 " SUM(CASE i.cat WHEN 2 THEN i.calls ELSE 0 END), NULL, NULL"
		 " FROM (SELECT i.t_ms, " JX_DT("i.dt_ms") " AS dt_ms, i.proc_id, " JX(1) " AS layer, " JX(2) " AS cat,"
		 " " JX(3) " AS bytes, " JX(4) " AS calls FROM intervals i, json_each(i.stats) e WHERE i.t_ms >= ?6 UNION ALL"
		 " SELECT i.t_ms, 60000, i.proc_id, " JX(1) ", " JX(2) ", " JX(3) ", " JX(4) " FROM intervals_minute i,"
		 " json_each(i.stats) e WHERE i.t_ms < ?6) i"
		 " JOIN processes p ON p.id = i.proc_id"
		 " WHERE p.uid = ?4 AND %s GROUP BY p.host, i.t_ms, i.layer ORDER BY p.host, i.t_ms, i.layer",
		 w);
	int64_t split;
	int r = rollup_read(s, "raw:intervals", &split);
	return r < 0 ? r : node_query(s, sql, f, (int64_t)uid, split, fn, ctx);
}

/* A job's minute roll-ups (schema 15): its processes' minute sums, one range of proc_minutes' key
 * a process (the processes the outer loop), not their packed rows unpacked (1.4x the
 * instructions, docs/BENCHMARKS.md "dmn14"). */
#define SERIES_MINUTES                                                                                       \
	" SELECT i.t_ms, p.host, p.rank, i.layer, i.cat, i.bytes, i.calls, 0 AS dt_ms FROM processes p"         \
	" CROSS JOIN proc_minutes i ON i.proc_id = p.id WHERE p.job_id = ?1 AND i.t_ms < ?4"

static int sq_job_series(struct store *s, int64_t job_key, enum store_series_by by, int64_t resolution_ms,
			 int (*fn)(const struct store_series_point *pt, void *ctx), void *ctx)
{
	sqlite3_stmt *st;
	int64_t b[4], split, lo, hi;
	int r = win_flush(s);
	if (r < 0)
		return r;
	/* STORE_SERIES_BOUNDS_SQL, the windows read from proc_cursors (schema 16) */
	int rc = sqlite3_prepare_v2(s->db,
				    "SELECT (SELECT upto_ms FROM rollup WHERE name = 'intervals'),"
				    " (SELECT upto_ms FROM rollup WHERE name = 'raw:intervals'),"
				    " min(CASE WHEN c.first_ms > 0 THEN c.first_ms END), max(c.last_ms)"
				    " FROM processes p JOIN proc_cursors c ON c.proc_id = p.id WHERE p.job_id = ?1",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading a job's series");
	sqlite3_bind_int64(st, 1, job_key);
	if ((r = step(s, st, "reading a job's series")) == 1)
		for (int i = 0; i < 4; i++)
			b[i] = sqlite3_column_type(st, i) == SQLITE_NULL ? INT64_MIN : sqlite3_column_int64(st, i);
	sqlite3_finalize(st);
	if (r != 1)
		return r < 0 ? r : -EIO;
	store_series_split(b[0], b[1], b[2], b[3], resolution_ms, &split, &lo, &hi);
	rc = sqlite3_prepare_v2(s->db, STORE_SERIES_SQL_M("?1", "?2", "?3", "?4", "?5", "?6", "CROSS JOIN", "", SERIES_MINUTES),
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading a job's series");
	sqlite3_bind_int64(st, 1, job_key);
	sqlite3_bind_int64(st, 2, resolution_ms);
	sqlite3_bind_int(st, 3, (int)by);
	sqlite3_bind_int64(st, 4, split);
	sqlite3_bind_int64(st, 5, lo);
	sqlite3_bind_int64(st, 6, hi);
	while ((r = step(s, st, "reading a job's series")) == 1) {
		struct store_series_point pt = {
			.t_ms = sqlite3_column_int64(st, 0),
			.host = col_text(st, 1),
			.rank = sqlite3_column_int(st, 2),
			.layer = (unsigned)sqlite3_column_int(st, 3),
			.bytes_read = (uint64_t)sqlite3_column_int64(st, 4),
			.bytes_written = (uint64_t)sqlite3_column_int64(st, 5),
			.reads = (uint64_t)sqlite3_column_int64(st, 6),
			.writes = (uint64_t)sqlite3_column_int64(st, 7),
			.meta_ops = (uint64_t)sqlite3_column_int64(st, 8),
			.dt_ms = sqlite3_column_int64(st, 9),
		};
		if (fn(&pt, ctx)) {
			r = 0;
			break;
		}
	}
	sqlite3_finalize(st);
	return r;
}

static int sq_devices(struct store *s, const struct store_node_filter *f,
		  int (*fn)(const struct store_device_sample *d, void *ctx), void *ctx)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	sqlite3_stmt *st;
	char w[128], sql[640];
	node_where(w, sizeof w, f, "host", "t_ms");
	snprintf(sql, sizeof sql,
		 "SELECT t_ms, dt_ms, host, device, major, minor, reads, reads_merged, sectors_read,"
		 " ms_reading, writes, writes_merged, sectors_written, ms_writing, in_flight, ms_io,"
		 " ms_weighted, discards, sectors_discarded, flushes FROM device_samples WHERE %s ORDER BY host, t_ms, device", w);
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading device samples");
	if (f->host)
		sqlite3_bind_text(st, 1, f->host, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, f->since_ms);
	sqlite3_bind_int64(st, 3, f->until_ms);
	int r;
	while ((r = step(s, st, "reading device samples")) == 1) {
		uint64_t v[14];
		for (int i = 0; i < 14; i++)
			v[i] = (uint64_t)sqlite3_column_int64(st, 6 + i);
		struct store_device_sample d = {
			.t_ms = sqlite3_column_int64(st, 0), .dt_ms = sqlite3_column_int64(st, 1),
			.host = col_text(st, 2), .device = col_text(st, 3),
			.major = (uint32_t)sqlite3_column_int64(st, 4), .minor = (uint32_t)sqlite3_column_int64(st, 5),
			.reads = v[0], .reads_merged = v[1], .sectors_read = v[2], .ms_reading = v[3],
			.writes = v[4], .writes_merged = v[5], .sectors_written = v[6], .ms_writing = v[7],
			.in_flight = v[8], .ms_io = v[9], .ms_weighted = v[10], .discards = v[11],
			.sectors_discarded = v[12], .flushes = v[13],
		};
		if (fn(&d, ctx)) {
			r = 0;
			break;
		}
	}
	sqlite3_finalize(st);
	return r;
}

/* ---------- retention and archives ---------- */

struct table_spec {
	const char *name;
	const char *rows;    /* where its rows are counted for the limit (intervals: a view, a row per file) */
	const char *count;   /* its rows t_ms < ?1 (NULL: the deleted rows SQLite counts) */
	const char *select;  /* the archive's columns, self-contained (names, not keys); ?1: before, ?2: limit */
	const char *header;
	const char *rollup;  /* its raw rows' name in rollup ("raw:" ...; NULL: none): rolled up as they came */
	const char *del;     /* delete t_ms < ?1 */
};

static const struct table_spec tables[] = {
	{"intervals", "interval_rows", "SELECT coalesce(sum(json_array_length(stats)), 0) FROM intervals WHERE t_ms < ?1",
	 /* one line a file row, as before schema 15: each process's entries in their key's order */
	 "SELECT i.t_ms, " JX_DT("i.dt_ms") ", j.job, p.host, j.user, p.uid, p.pid, p.rank, p.exe, f.path, " JX(1) ","
	 " " JX(2) ", " JX(3) ", " JX(4) ", " JX(5) " FROM intervals i CROSS JOIN json_each(i.stats) e"
	 " JOIN processes p ON p.id = i.proc_id JOIN jobs j ON j.id = p.job_id JOIN files f ON f.id = " JX(0)
	 " WHERE i.t_ms < ?1 ORDER BY i.t_ms",
	 STORE_ARCHIVE_INTERVALS, "intervals", "DELETE FROM intervals WHERE t_ms < ?1"},
	{"node_seconds", "node_seconds", NULL,
	 "SELECT t_ms, dt_ms, host, layer, bytes_read, bytes_written, reads, writes, meta_ops, read_hist, write_hist"
	 " FROM node_seconds WHERE t_ms < ?1 ORDER BY t_ms",
	 STORE_ARCHIVE_NODE_SECONDS, "node_seconds", "DELETE FROM node_seconds WHERE t_ms < ?1"},
	{"device_samples", "device_samples", NULL,
	 "SELECT t_ms, dt_ms, host, device, major, minor, reads, reads_merged, sectors_read, ms_reading, writes,"
	 " writes_merged, sectors_written, ms_writing, in_flight, ms_io, ms_weighted, discards, sectors_discarded, flushes"
	 " FROM device_samples WHERE t_ms < ?1 ORDER BY t_ms",
	 STORE_ARCHIVE_DEVICE_SAMPLES,
	 NULL, "DELETE FROM device_samples WHERE t_ms < ?1"},
	{"samples", "samples", NULL,
	 "SELECT t_ms, dt_ms, host, source, instance, metric, value, gauge FROM samples WHERE t_ms < ?1 ORDER BY t_ms",
	 STORE_ARCHIVE_SAMPLES, NULL, "DELETE FROM samples WHERE t_ms < ?1"},
	{"server_dists", "server_dists", NULL,
	 "SELECT t_ms, host, server, op, requests, timed, wait_hist, service_hist FROM server_dists WHERE t_ms < ?1"
	 " ORDER BY t_ms",
	 STORE_ARCHIVE_SERVER_DISTS, NULL, "DELETE FROM server_dists WHERE t_ms < ?1"},
	{"runs", "runs", NULL,
	 "SELECT r.t_ms, j.job, p.host, p.uid, p.pid, p.rank, r.tid, r.idx, f.path, r.layer, r.op, r.off, r.size, r.count,"
	 " r.start_ns, r.end_ns, r.busy_ns, r.min_ns, r.result FROM runs r JOIN processes p ON p.id = r.proc_id"
	 " JOIN jobs j ON j.id = p.job_id JOIN files f ON f.id = r.file_id WHERE r.t_ms < ?1"
	 " ORDER BY r.t_ms, r.proc_id, r.tid, r.idx",
	 STORE_ARCHIVE_RUNS, NULL, "DELETE FROM runs WHERE t_ms < ?1"},
};

/* The cutoff of this call for a table: before_ms, or sooner so that at most max rows (whole
 * intervals) go. 0 with *cut, or -errno. */
static int cutoff(struct store *s, const char *table, int64_t before, size_t max, int64_t *cut)
{
	char sql[256];
	sqlite3_stmt *st;
	snprintf(sql, sizeof sql, "SELECT t_ms FROM %s WHERE t_ms < ?1 ORDER BY t_ms LIMIT 1 OFFSET ?2", table);
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "retention");
	sqlite3_bind_int64(st, 1, before);
	sqlite3_bind_int64(st, 2, (int64_t)max);
	*cut = before;
	int r = step(s, st, "retention");
	if (r == 1) {
		*cut = sqlite3_column_int64(st, 0);
		r = 0;
	}
	sqlite3_finalize(st);
	return r;
}

/* Writes the rows t_ms < cut of one table to a compressed CSV file: 0 with *n rows, or -errno. */
static int archive_table(struct store *s, const struct table_spec *t, int64_t cut, const char *dir, uint64_t *n)
{
	sqlite3_stmt *st;
	char *csv = NULL;
	size_t len = 0;
	int64_t first = 0, last = 0;
	*n = 0;
	int rc = sqlite3_prepare_v2(s->db, t->select, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "archiving");
	sqlite3_bind_int64(st, 1, cut);
	FILE *f = open_memstream(&csv, &len);
	if (!f) {
		sqlite3_finalize(st);
		return -ENOMEM;
	}
	store_archive_head(f, t->name, t->header);
	int r;
	while ((r = step(s, st, "archiving")) == 1) {
		int nc = sqlite3_column_count(st);
		int64_t tm = sqlite3_column_int64(st, 0);
		if (!*n)
			first = tm;
		last = tm;
		for (int c = 0; c < nc; c++) {
			if (c)
				fputc(',', f);
			if (!strcmp(t->name, "intervals") && c == STORE_ARCHIVE_CAT_COLUMN)
				fputs(store_cat_name((unsigned)sqlite3_column_int(st, c)), f);
			else if (sqlite3_column_type(st, c) == SQLITE_INTEGER)
				fprintf(f, "%lld", (long long)sqlite3_column_int64(st, c));
			else
				store_csv_field(f, col_text(st, c));
		}
		fputc('\n', f);
		(*n)++;
	}
	sqlite3_finalize(st);
	if (fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	if (r < 0 || !*n) {
		free(csv);
		return r;
	}
	r = store_archive_write(dir, t->name, first, last, csv, len, s->err, sizeof s->err);
	free(csv);
	return r;
}

/* Before the raw rows t_ms < cut leave: every minute they are in is rolled up (closed up to the
 * minute after cut, which is where the raw rows read from now on start: 'raw:TABLE'). */
static int close_before(struct store *s, const char *table, int64_t cut)
{
	char name[64];
	int64_t upto = minute_of(cut + MINUTE_MS - 1);
	int r = 0;
	if (!strcmp(table, "intervals")) {
		r = acc_close(s, upto);
		s->iv_raw = s->iv_raw > upto ? s->iv_raw : upto;
	} else {
		sqlite3_stmt *st;
		int rc = sqlite3_prepare_v2(s->db, "SELECT substr(name, 6) FROM rollup WHERE name LIKE 'node:%' AND upto_ms < ?1",
					    -1, &st, NULL);
		if (rc != SQLITE_OK)
			return fail(s, rc, "retention");
		sqlite3_bind_int64(st, 1, upto);
		char **hosts = NULL;
		size_t n = 0;
		while ((r = step(s, st, "retention")) == 1) {
			char **v = realloc(hosts, (n + 1) * sizeof *v);
			if (!v || !(v[n] = strdup(col_text(st, 0)))) {
				hosts = v ? v : hosts;
				r = -ENOMEM;
				break;
			}
			hosts = v;
			n++;
		}
		sqlite3_finalize(st);
		for (size_t i = 0; i < n; i++) {
			struct node_host *h;
			if (r >= 0 && (r = node_host(s, hosts[i], &h)) >= 0)
				r = node_close(s, h, upto);
			free(hosts[i]);
		}
		free(hosts);
	}
	snprintf(name, sizeof name, "raw:%s", table);
	return r < 0 ? r : rollup_set(s, name, upto);
}

/* A rolled-up table's cut moves back to a minute's start, so that no minute keeps raw rows on
 * both sides (a series reads the minutes before the cut, the raw rows after it: each as it was);
 * unless that would take nothing (more than the limit in one minute): then the minute is read
 * whole from its roll-up. */
static int cut_to_minute(struct store *s, const char *table, int64_t *cut)
{
	char name[64];
	int64_t raw;
	snprintf(name, sizeof name, "raw:%s", table);
	int r = rollup_get(s, name, 0, &raw);
	if (r >= 0 && minute_of(*cut) > raw)
		*cut = minute_of(*cut);
	return r;
}

/* A count of a table's rows t_ms < cut (sql: ?1 the cut). */
static int count_rows(struct store *s, const char *sql, int64_t cut, int64_t *n)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "retention");
	sqlite3_bind_int64(st, 1, cut);
	*n = 0;
	int r = find_id(s, st, n, "retention");
	sqlite3_finalize(st);
	return r < 0 ? r : 0;
}

static int sq_retain(struct store *s, int64_t before_ms, const char *archive_dir, size_t max_rows, uint64_t *moved)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	*moved = 0;
	int r = sq_begin(s);
	if (r < 0)
		return r;
	for (size_t i = 0; r >= 0 && i < sizeof tables / sizeof tables[0]; i++) {
		const struct table_spec *t = &tables[i];
		int64_t cut = before_ms;
		uint64_t n = 0;
		/* the archive is written before the rows go: a crash between the two writes the same
		 * file again next time (its name is its rows' range), never loses them */
		if ((r = cutoff(s, t->rows, before_ms, max_rows, &cut)) < 0)
			break;
		if (t->rollup && (r = cut_to_minute(s, t->rollup, &cut)) < 0)
			break;
		if (archive_dir && *archive_dir && (r = archive_table(s, t, cut, archive_dir, &n)) < 0)
			break;
		int64_t raw_before = 0;
		if (t->rollup && ((r = rollup_get(s, "raw:intervals", 0, &raw_before)) < 0 ||
				  (r = close_before(s, t->rollup, cut)) < 0))
			break;
		int64_t rows = 0;
		if (t->count && (r = count_rows(s, t->count, cut, &rows)) < 0)
			break;
		if ((r = run_once(s, t->del, "removing raw rows", "i", cut)) < 0)
			break;
		*moved += t->count ? (uint64_t)rows : (uint64_t)sqlite3_changes(s->db);
		/* the per-process sums before where the raw rows now start (never read: a series reads
		 * the minutes there) go too, of the processes the last call left rows of (it took
		 * those before where the raw rows then started), by their key; not counted in moved */
		if (!strcmp(t->name, "intervals") &&
		    (r = run_once(s,
				  "DELETE FROM proc_intervals WHERE proc_id IN (SELECT proc_id FROM proc_cursors WHERE first_ms > 0"
				  " AND first_ms < ?1 AND last_ms >= ?2) AND t_ms < ?1",
				  "removing raw rows", "ii", s->iv_raw, raw_before)) < 0)
			break;
		if (t->rollup && *t->rollup == 'n')
			s->node_raw = s->node_raw > minute_of(cut + MINUTE_MS - 1) ? s->node_raw : minute_of(cut + MINUTE_MS - 1);
	}
	if (r >= 0)
		r = sq_commit(s);
	if (r < 0)
		sq_rollback(s);
	return r;
}

/* ---------- the outbox (store.h): batches waiting for a sink ---------- */

/* A counter in meta: *v (0 when absent). */
static int meta_get(struct store *s, const char *key, int64_t *v)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = ?1", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading a counter");
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	*v = 0;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : fail(s, rc, "reading a counter");
}

static int meta_add(struct store *s, const char *key, int64_t add)
{
	return run_once(s, "INSERT INTO meta(key, value) VALUES(?1, ?2) "
			   "ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
			"writing a counter", "si", key, add);
}

static int sq_batch_seq_next(struct store *s, uint64_t *seq)
{
	int64_t v;
	int r = meta_add(s, "batch_seq", 1);
	if (r >= 0 && (r = meta_get(s, "batch_seq", &v)) >= 0)
		*seq = (uint64_t)v;
	return r < 0 ? r : 0;
}

static int sq_outbox_state(struct store *s, unsigned sink, uint64_t *batches, uint64_t *bytes, uint64_t *dropped)
{
	char key[48];
	int64_t v = 0;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "SELECT count(*), coalesce(sum(length(data)), 0) FROM outbox WHERE sink = ?1",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading the outbox");
	sqlite3_bind_int64(st, 1, sink);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*batches = (uint64_t)sqlite3_column_int64(st, 0);
		*bytes = (uint64_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return fail(s, rc, "reading the outbox");
	snprintf(key, sizeof key, "outbox_dropped_%u", sink);
	int r = meta_get(s, key, &v);
	*dropped = (uint64_t)v;
	return r;
}

static int sq_outbox_put(struct store *s, unsigned sink, uint64_t seq, int64_t t_ms, const void *data, size_t len,
			 uint64_t max_bytes)
{
	char key[48];
	int64_t held;
	snprintf(key, sizeof key, "outbox_bytes_%u", sink);
	int r = meta_get(s, key, &held);
	/* full: the oldest batches leave, counted, until this one fits */
	while (r >= 0 && held > 0 && (uint64_t)held + len > max_bytes) {
		sqlite3_stmt *st;
		int rc = sqlite3_prepare_v2(s->db, "DELETE FROM outbox WHERE sink = ?1 AND seq = "
						   "(SELECT min(seq) FROM outbox WHERE sink = ?1) RETURNING length(data)",
					    -1, &st, NULL);
		if (rc != SQLITE_OK)
			return fail(s, rc, "trimming the outbox");
		sqlite3_bind_int64(st, 1, sink);
		rc = sqlite3_step(st);
		int64_t n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
		sqlite3_finalize(st);
		if (n < 0) { /* the counter said more than there is: believe the table */
			held = 0;
			r = run_once(s, "UPDATE meta SET value = 0 WHERE key = ?1", "trimming the outbox", "s", key);
			break;
		}
		held -= n;
		char dkey[48];
		snprintf(dkey, sizeof dkey, "outbox_dropped_%u", sink);
		if ((r = meta_add(s, key, -n)) >= 0)
			r = meta_add(s, dkey, 1);
	}
	if (r < 0)
		return r;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO outbox(sink, seq, t_ms, data) VALUES(?1, ?2, ?3, ?4)",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "spooling a batch");
	bind(st, "iiib", (int64_t)sink, (int64_t)seq, t_ms, data, len);
	r = step(s, st, "spooling a batch");
	sqlite3_finalize(st);
	return r < 0 ? r : meta_add(s, key, (int64_t)len);
}

static int sq_outbox_list(struct store *s, unsigned sink, size_t max_bytes,
			  int (*fn)(uint64_t seq, int64_t t_ms, const void *data, size_t len, void *ctx), void *ctx)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "SELECT seq, t_ms, data FROM outbox WHERE sink = ?1 ORDER BY seq", -1, &st,
				    NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading the outbox");
	sqlite3_bind_int64(st, 1, sink);
	size_t taken = 0;
	int r = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t n = (size_t)sqlite3_column_bytes(st, 2);
		if (taken && taken + n > max_bytes)
			break;
		taken += n;
		if (fn((uint64_t)sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_blob(st, 2), n,
		       ctx))
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		r = fail(s, rc, "reading the outbox");
	sqlite3_finalize(st);
	return r;
}

static int sq_outbox_del(struct store *s, unsigned sink, uint64_t upto_seq)
{
	char key[48];
	snprintf(key, sizeof key, "outbox_bytes_%u", sink);
	int r = run_once(s, "UPDATE meta SET value = value - (SELECT coalesce(sum(length(data)), 0) FROM outbox "
			    "WHERE sink = ?2 AND seq <= ?3) WHERE key = ?1",
			 "removing delivered batches", "sii", key, (int64_t)sink, (int64_t)upto_seq);
	if (r >= 0)
		r = run_once(s, "DELETE FROM outbox WHERE sink = ?1 AND seq <= ?2", "removing delivered batches", "ii",
			     (int64_t)sink, (int64_t)upto_seq);
	return r < 0 ? r : 0;
}

static int sq_batch_mark(struct store *s, const char *host, uint64_t seq)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "INSERT INTO batches(host, seq) VALUES(?1, ?2) ON CONFLICT DO NOTHING", -1,
				    &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "marking a batch");
	bind(st, "si", host, (int64_t)seq);
	int r = step(s, st, "marking a batch");
	sqlite3_finalize(st);
	if (r < 0)
		return r;
	return sqlite3_changes(s->db) ? 0 : 1;
}

/* ---- the node's cursor (schema 11) ---- */

static int sq_node_cursor_put(struct store *s, const char *host, int64_t t_ms, const void *data, size_t len)
{
	sqlite3_stmt *st = s->st[ST_NODE_CURSOR];
	bind(st, "sib", host, t_ms, data, len);
	int r = step(s, st, "writing the node's cursor");
	sqlite3_reset(st);
	return r < 0 ? r : 0;
}

static int sq_node_cursor_get(struct store *s, const char *host, void **data, size_t *len)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "SELECT data FROM node_cursor WHERE host = ?1", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading the node's cursor");
	bind(st, "s", host);
	int r = 0;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t n = (size_t)sqlite3_column_bytes(st, 0);
		const void *b = sqlite3_column_blob(st, 0);
		if (n && !(*data = malloc(n)))
			r = -ENOMEM;
		else if (n) {
			memcpy(*data, b, n);
			*len = n;
		}
	} else if (rc != SQLITE_DONE) {
		r = fail(s, rc, "reading the node's cursor");
	}
	sqlite3_finalize(st);
	return r;
}

/* ---- diagnoses (schema 10) ---- */

static int sq_diagnosis_put(struct store *s, const struct store_diag_row *d)
{
	return run_once(s,
			"INSERT INTO diagnoses(job_id, app, ranks, start_ms, t_ms, anomalies, text, json, job_rows, host)"
			" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, coalesce((SELECT host FROM jobs WHERE id = ?1), ''))"
			" ON CONFLICT(job_id) DO UPDATE SET app = excluded.app,"
			" ranks = excluded.ranks, start_ms = excluded.start_ms, t_ms = excluded.t_ms,"
			" anomalies = excluded.anomalies, text = excluded.text, json = excluded.json,"
			" job_rows = excluded.job_rows, host = excluded.host WHERE excluded.job_rows >= diagnoses.job_rows",
			"storing a diagnosis", "isiiiissi", d->job_key, d->app, (int64_t)d->ranks, d->start_ms, d->t_ms,
			(int64_t)d->anomalies, d->text, d->json, (int64_t)d->job_rows);
}

static int sq_diagnosis_get(struct store *s, int64_t job_key, int json, char **out)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	sqlite3_stmt *st;
	*out = NULL;
	int rc = sqlite3_prepare_v2(s->db, json ? "SELECT json FROM diagnoses WHERE job_id = ?1"
						: "SELECT text FROM diagnoses WHERE job_id = ?1",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading a diagnosis");
	sqlite3_bind_int64(st, 1, job_key);
	int r = step(s, st, "reading a diagnosis");
	if (r == 1) {
		*out = strdup(col_text(st, 0));
		r = *out ? 0 : -ENOMEM;
	}
	sqlite3_finalize(st);
	return r < 0 ? r : 0;
}

/* Rows of one key column: fn per key until it returns non-zero. */
static int keys_of(struct store *s, sqlite3_stmt *st, const char *what, int (*fn)(int64_t key, void *ctx), void *ctx)
{
	int r;
	while ((r = step(s, st, what)) == 1)
		if (fn(sqlite3_column_int64(st, 0), ctx))
			break;
	sqlite3_finalize(st);
	return r < 0 ? r : 0;
}

static int sq_diag_similar(struct store *s, const char *app, uint32_t ranks, int64_t before_ms, size_t limit,
			   int (*fn)(int64_t job_key, void *ctx), void *ctx)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db,
				    "SELECT job_id FROM diagnoses WHERE app = ?1 AND ranks = ?2 AND start_ms < ?3"
				    " ORDER BY start_ms DESC, job_id DESC LIMIT ?4",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "finding similar jobs");
	sqlite3_bind_text(st, 1, app, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, ranks);
	sqlite3_bind_int64(st, 3, before_ms);
	sqlite3_bind_int64(st, 4, (int64_t)limit);
	return keys_of(s, st, "finding similar jobs", fn, ctx);
}

/* The rows of a diagnoses query selecting (job_id, ranks, start_ms, t_ms, anomalies, json, uid),
 * each given to fn; st finalized. 0 or -errno. */
static int diag_rows(struct store *s, sqlite3_stmt *st, const char *what,
		     int (*fn)(const struct store_diag_row *d, void *ctx), void *ctx)
{
	int r;
	while ((r = step(s, st, what)) == 1) {
		struct store_diag_row d = {.job_key = sqlite3_column_int64(st, 0),
					   .ranks = (uint32_t)sqlite3_column_int64(st, 1),
					   .start_ms = sqlite3_column_int64(st, 2),
					   .t_ms = sqlite3_column_int64(st, 3),
					   .anomalies = (unsigned)sqlite3_column_int64(st, 4),
					   .json = col_text(st, 5),
					   .uid = (uint32_t)sqlite3_column_int64(st, 6)};
		if (fn(&d, ctx))
			break;
	}
	sqlite3_finalize(st);
	return r < 0 ? r : 0;
}

static int sq_diag_alerts(struct store *s, uint32_t uid, int64_t since_ms, size_t limit,
			  int (*fn)(const struct store_diag_row *d, void *ctx), void *ctx)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db,
				    "SELECT d.job_id, d.ranks, d.start_ms, d.t_ms, d.anomalies, d.json, j.uid FROM diagnoses d"
				    " JOIN jobs j ON j.id = d.job_id WHERE d.anomalies > 0 AND d.t_ms >= ?1"
				    " AND (?2 < 0 OR j.uid = ?2) ORDER BY d.t_ms DESC, d.job_id DESC LIMIT ?3",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading alerts");
	sqlite3_bind_int64(st, 1, since_ms);
	sqlite3_bind_int64(st, 2, uid == STORE_ANY_UID ? -1 : (int64_t)uid);
	sqlite3_bind_int64(st, 3, (int64_t)limit);
	return diag_rows(s, st, "reading alerts", fn, ctx);
}

static int sq_diag_node(struct store *s, const char *host, int64_t before_ms, size_t limit,
			int (*fn)(const struct store_diag_row *d, void *ctx), void *ctx)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db,
				    "SELECT d.job_id, d.ranks, d.start_ms, d.t_ms, d.anomalies, d.json, j.uid FROM diagnoses d"
				    " JOIN jobs j ON j.id = d.job_id WHERE d.host = ?1 AND d.start_ms < ?2"
				    " ORDER BY d.start_ms DESC, d.job_id DESC LIMIT ?3",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading a node's diagnoses");
	sqlite3_bind_text(st, 1, host, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, before_ms);
	sqlite3_bind_int64(st, 3, (int64_t)limit);
	return diag_rows(s, st, "reading a node's diagnoses", fn, ctx);
}

static int sq_diag_pending(struct store *s, int64_t since_ms, size_t limit, int (*fn)(int64_t job_key, void *ctx),
			   void *ctx)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db,
				    "SELECT min(j.id) FROM jobs j WHERE j.report_ms >= ?2 AND j.report_json IS NOT NULL"
				    " AND j.running = 0 AND NOT EXISTS(SELECT 1 FROM diagnoses d WHERE d.job_id = j.id)"
				    " GROUP BY j.job, j.uid ORDER BY min(j.end_ms), min(j.id) LIMIT ?1",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "finding jobs to diagnose");
	sqlite3_bind_int64(st, 1, (int64_t)limit);
	sqlite3_bind_int64(st, 2, since_ms);
	return keys_of(s, st, "finding jobs to diagnose", fn, ctx);
}

static int sq_diag_peers(struct store *s, int64_t job_key, int (*fn)(const struct store_diag_peer *p, void *ctx),
			 void *ctx)
{
	int held = puts_flush(s);
	if (held < 0)
		return held;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db,
				    "SELECT k.id, k.host, k.running = 0 AND k.report_json IS NOT NULL, coalesce(k.report_ms, 0),"
				    " k.sched_nodes, coalesce(d.job_rows, -1) FROM jobs j JOIN jobs k ON k.job = j.job"
				    " AND k.uid = j.uid LEFT JOIN diagnoses d ON d.job_id = k.id WHERE j.id = ?1 ORDER BY k.id",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "reading a job's rows");
	sqlite3_bind_int64(st, 1, job_key);
	int r;
	while ((r = step(s, st, "reading a job's rows")) == 1) {
		struct store_diag_peer p = {.key = sqlite3_column_int64(st, 0), .host = col_text(st, 1),
					    .reported = sqlite3_column_int(st, 2) != 0,
					    .report_ms = sqlite3_column_int64(st, 3), .sched_nodes = col_text_or_null(st, 4),
					    .diag_rows = sqlite3_column_int64(st, 5)};
		if (fn(&p, ctx))
			break;
	}
	sqlite3_finalize(st);
	return r < 0 ? r : 0;
}

static const struct store_ops store_sqlite_ops = {
	.name = "sqlite",
	.close = sq_close,
	.error = sq_error,
	.begin = sq_begin,
	.commit = sq_commit,
	.rollback = sq_rollback,
	.job_put = sq_job_put,
	.proc_put = sq_proc_put,
	.file_key = sq_file_key,
	.interval_add = sq_interval_add,
	.intervals_add = sq_intervals_add,
	.job_totals_add = sq_job_totals_add,
	.node_sec_add = sq_node_sec_add,
	.device_add = sq_device_add,
	.sample_add = sq_sample_add,
	.dist_add = sq_dist_add,
	.run_add = sq_run_add,
	.job_report_put = sq_job_report_put,
	.job_report_put_packed = sq_job_report_put_packed,
	.job_findings_put = sq_job_findings_put,
	.job_sched_put = sq_job_sched_put,
	.proc_find = sq_proc_find,
	.job_logs = sq_job_logs,
	.procs_open = sq_procs_open,
	.jobs = sq_jobs,
	.jobs_count = sq_jobs_count,
	.job_report = sq_job_report,
	.node_secs = sq_node_secs,
	.devices = sq_devices,
	.samples = sq_samples,
	.dists = sq_dists,
	.node_hosts = sq_node_hosts,
	.user_secs = sq_user_secs,
	.job_series = sq_job_series,
	.retain = sq_retain,
	.batch_seq_next = sq_batch_seq_next,
	.outbox_put = sq_outbox_put,
	.outbox_list = sq_outbox_list,
	.outbox_del = sq_outbox_del,
	.outbox_state = sq_outbox_state,
	.batch_mark = sq_batch_mark,
	.node_cursor_put = sq_node_cursor_put,
	.node_cursor_get = sq_node_cursor_get,
	.diagnosis_put = sq_diagnosis_put,
	.diagnosis_get = sq_diagnosis_get,
	.diag_similar = sq_diag_similar,
	.diag_alerts = sq_diag_alerts,
	.diag_pending = sq_diag_pending,
	.diag_node = sq_diag_node,
	.diag_peers = sq_diag_peers,
};
