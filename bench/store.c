/* SPDX-License-Identifier: MIT */
/*
 * What storing interval statistics costs (issue 13: >= 1,000,000 metric values stored per second
 * per core; a row of interval statistics holds 3: bytes, calls, duration). The store interface
 * alone (src/store/store.h), no daemon: a fresh SQLite store in a temporary directory, one job,
 * K processes and K x F files, then ROWS rows through store_interval_add in transactions of one
 * interval's size (K x F rows: every file of every process wrote in that interval). Four ways,
 * each in a fresh child process, medians of RUNS, the order rotating from run to run:
 *   bare     one prepared INSERT into a table of the same nine columns and no index: what SQLite
 *            itself costs on this machine (the baseline)
 *   indexed  the same INSERT into a table with the store's two indexes on intervals (proc_id,
 *            t_ms): what the indexes add
 *   kernel   store_interval_add of rows of a kernel layer (LOG_LAYER_SYSCALL)
 *   store    store_interval_add of POSIX rows, as the daemon stores them (schema 9): the row, its
 *            minute roll-up summed in memory and written once a minute, its process's window
 *            (first and last interval end) updated once a transaction
 *   store+index  the same with schema 8's index on intervals(proc_id, t_ms) added: what schema 9
 *            saves (docs/STORE.md, "Roll-ups and windows")
 *   grouped  the store's rows handed over 64 at a time (store_intervals_add), as the daemon does:
 *            SQLite writes them 16 to a statement (docs/STORE.md, "The statistics' transaction")
 * All three open their file the way the store does (WAL, synchronous=NORMAL). Only the rows are
 * timed, not the setup: CPU time of the process (CLOCK_PROCESS_CPUTIME_ID, one core: it is
 * single-threaded) and wall time. Also printed: the file's bytes per row once closed (table and
 * indexes, after the last checkpoint). It prints; it never fails on a figure.
 *
 *   store [ROWS [RUNS [K [F]]]]   (defaults 1600000 5 1000 16; BENCH_DIR: where, default /tmp)
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "iostrata/format.h"
#include "store/store.h"

#define TARGET_VALUES_PER_S 1e6
#define VALUES_PER_ROW 3

enum mode { BARE, INDEXED, KERNEL, STORE, STORE_INDEX, GROUPED, NMODES };
static const char *const mode_names[NMODES] = {"bare", "indexed", "kernel", "store", "store+index", "grouped"};

struct cfg {
	long rows, k, f;
	const char *dir;
};

struct result {
	double cpu_s, wall_s;
	int64_t file_bytes, empty_bytes; /* the file after the rows, and after the setup alone */
	long rows;
};

static double clock_s(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A row's figures, as a steady writer's: about 20 calls of 64 bytes per second per file. */
static void row_values(uint64_t *seed, int64_t *bytes, int64_t *calls, int64_t *dur)
{
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	*calls = 15 + (int64_t)((*seed >> 33) % 11);
	*bytes = *calls * 64;
	*dur = *calls * (800 + (int64_t)((*seed >> 20) % 1200));
}

static int64_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

static int sql(sqlite3 *db, const char *q)
{
	char *msg = NULL;
	if (sqlite3_exec(db, q, NULL, NULL, &msg) != SQLITE_OK) {
		fprintf(stderr, "bench/store: %s: %s\n", q, msg ? msg : "?");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* bare and indexed: plain SQLite, the statement prepared once. */
static int run_sqlite(enum mode m, const struct cfg *c, const char *path, struct result *res)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK)
		goto err;
	if (sql(db, "PRAGMA journal_mode=WAL") < 0 || sql(db, "PRAGMA synchronous=NORMAL") < 0 ||
	    sql(db, "CREATE TABLE intervals(t_ms INTEGER NOT NULL, dt_ms INTEGER NOT NULL, proc_id INTEGER NOT NULL,"
		    " file_id INTEGER NOT NULL, layer INTEGER NOT NULL, cat INTEGER NOT NULL, bytes INTEGER NOT NULL,"
		    " calls INTEGER NOT NULL, dur_ns INTEGER NOT NULL)") < 0)
		goto err;
	if (m == INDEXED && (sql(db, "CREATE INDEX intervals_proc ON intervals(proc_id)") < 0 ||
			     sql(db, "CREATE INDEX intervals_t ON intervals(t_ms)") < 0))
		goto err;
	if (sqlite3_prepare_v3(db,
			       "INSERT INTO intervals(t_ms, dt_ms, proc_id, file_id, layer, cat, bytes, calls, dur_ns)"
			       " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
			       -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
		goto err;
	sql(db, "PRAGMA wal_checkpoint(TRUNCATE)");
	res->empty_bytes = file_size(path);
	uint64_t seed = 1;
	long per_tx = c->k * c->f, done = 0;
	int64_t t_ms = 1795000000000;
	double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), w0 = clock_s(CLOCK_MONOTONIC);
	while (done < c->rows) {
		if (sql(db, "BEGIN IMMEDIATE") < 0)
			goto err;
		t_ms += 1000;
		for (long i = 0; i < per_tx && done < c->rows; i++, done++) {
			int64_t bytes, calls, dur;
			row_values(&seed, &bytes, &calls, &dur);
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, t_ms);
			sqlite3_bind_int64(st, 2, 1000);
			sqlite3_bind_int64(st, 3, 1 + i / c->f);
			sqlite3_bind_int64(st, 4, 1 + i);
			sqlite3_bind_int64(st, 5, LOG_LAYER_POSIX);
			sqlite3_bind_int64(st, 6, STORE_CAT_WRITE);
			sqlite3_bind_int64(st, 7, bytes);
			sqlite3_bind_int64(st, 8, calls);
			sqlite3_bind_int64(st, 9, dur);
			if (sqlite3_step(st) != SQLITE_DONE)
				goto err;
		}
		if (sql(db, "COMMIT") < 0)
			goto err;
	}
	res->cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	res->wall_s = clock_s(CLOCK_MONOTONIC) - w0;
	res->rows = done;
	rc = 0;
err:
	if (rc < 0 && db)
		fprintf(stderr, "bench/store: %s: %s\n", path, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	sqlite3_close(db); /* the last connection: checkpoints and removes the WAL */
	if (rc == 0)
		res->file_bytes = file_size(path);
	return rc;
}

/* kernel and store: through store.h, as the daemon stores an interval's rows of that layer. */
static int run_store(const struct cfg *c, unsigned layer, int index, int group, const char *path, struct result *res)
{
	struct store *s = NULL;
	char err[1024], url[4200];
	int64_t *proc_key = calloc((size_t)c->k, sizeof *proc_key);
	int64_t *file_key = calloc((size_t)(c->k * c->f), sizeof *file_key);
	int rc = -1;
	snprintf(url, sizeof url, "sqlite:%s", path);
	if (!proc_key || !file_key)
		goto err;
	if (store_open(url, STORE_CREATE, &s, err, sizeof err) < 0) {
		fprintf(stderr, "bench/store: %s\n", err);
		goto err;
	}
	/* the setup, not timed: one job, its processes, their files */
	struct store_job j = {.job = "bench", .host = "node0", .uid = 1000, .user = "bench", .exe = "/bin/worker",
			      .jobdir = "/scratch/bench/job", .start_ms = 1795000000000, .running = 1,
			      .nprocs = (uint32_t)c->k};
	if (store_begin(s) < 0 || store_job_put(s, &j) < 0)
		goto err_store;
	for (long p = 0; p < c->k; p++) {
		char live[128];
		snprintf(live, sizeof live, "/dev/shm/iostrata-1000/node0-%ld-1.iost", 100000 + p);
		struct store_proc sp = {.job_key = j.key, .host = "node0", .pid = (int32_t)(100000 + p),
					.rank = (int32_t)p, .start_ns = 1000 + (uint64_t)p, .start_ticks = 1,
					.uid = 1000, .exe = "/bin/worker", .live_path = live,
					.final_path = "/scratch/bench/job/x.iost", .start_ms = 1795000000000,
					.state = STORE_PROC_LIVE};
		if (store_proc_put(s, &sp) < 0)
			goto err_store;
		proc_key[p] = sp.key;
		for (long f = 0; f < c->f; f++) {
			char fp[128];
			snprintf(fp, sizeof fp, "/scratch/bench/job/rank%04ld/file%02ld.dat", p, f);
			if (store_file_key(s, fp, &file_key[p * c->f + f]) < 0)
				goto err_store;
		}
	}
	if (store_commit(s) < 0)
		goto err_store;
	store_close(s);
	s = NULL;
	if (index) { /* schema 8's index, on the same file */
		sqlite3 *db;
		int ok = sqlite3_open(path, &db) == SQLITE_OK &&
			 sql(db, "CREATE INDEX intervals_proc ON intervals(proc_id, t_ms)") == 0;
		sqlite3_close(db);
		if (!ok)
			goto err;
	}
	res->empty_bytes = file_size(path);
	if (store_open(url, STORE_CREATE, &s, err, sizeof err) < 0) {
		fprintf(stderr, "bench/store: %s\n", err);
		goto err;
	}
	uint64_t seed = 1;
	struct store_interval grp[64];
	size_t ng = 0;
	long per_tx = c->k * c->f, done = 0;
	int64_t t_ms = 1795000000000;
	double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), w0 = clock_s(CLOCK_MONOTONIC);
	while (done < c->rows) {
		if (store_begin(s) < 0)
			goto err_store;
		t_ms += 1000;
		for (long i = 0; i < per_tx && done < c->rows; i++, done++) {
			struct store_interval iv = {.t_ms = t_ms, .dt_ms = 1000, .proc_key = proc_key[i / c->f],
						    .file_key = file_key[i], .layer = layer,
						    .cat = STORE_CAT_WRITE};
			row_values(&seed, &iv.bytes, &iv.calls, &iv.dur_ns);
			if (group) {
				grp[ng++] = iv;
				if (ng == 64 || i + 1 == per_tx || done + 1 == c->rows) {
					if (store_intervals_add(s, grp, ng) < 0)
						goto err_store;
					ng = 0;
				}
			} else if (store_interval_add(s, &iv) < 0)
				goto err_store;
		}
		if (store_commit(s) < 0)
			goto err_store;
	}
	res->cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	res->wall_s = clock_s(CLOCK_MONOTONIC) - w0;
	res->rows = done;
	store_close(s);
	s = NULL;
	res->file_bytes = file_size(path);
	rc = 0;
	goto err;
err_store:
	fprintf(stderr, "bench/store: %s\n", store_error(s));
err:
	store_close(s);
	free(proc_key);
	free(file_key);
	return rc;
}

/* One run in a child, in its own temporary directory. */
static int measure(enum mode m, const struct cfg *c, struct result *res)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/iostrata-bench-store.XXXXXX", c->dir);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "bench/store: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	int fd[2];
	if (pipe(fd) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char path[4200];
		struct result r = {0};
		close(fd[0]);
		snprintf(path, sizeof path, "%s/store.db", dir);
		int rc = m == STORE	    ? run_store(c, LOG_LAYER_POSIX, 0, 0, path, &r)
			 : m == STORE_INDEX ? run_store(c, LOG_LAYER_POSIX, 1, 0, path, &r)
			 : m == GROUPED	    ? run_store(c, LOG_LAYER_POSIX, 0, 1, path, &r)
			 : m == KERNEL	    ? run_store(c, LOG_LAYER_SYSCALL, 0, 0, path, &r)
					    : run_sqlite(m, c, path, &r);
		if (write(fd[1], &r, sizeof r) != sizeof r)
			rc = -1;
		_exit(rc == 0 ? 0 : 1);
	}
	close(fd[1]);
	ssize_t n = read(fd[0], res, sizeof *res);
	close(fd[0]);
	int st;
	int ok = waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 && n == sizeof *res;
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench/store: cannot remove %s\n", dir);
	return ok ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	struct cfg c = {.rows = argc > 1 ? atol(argv[1]) : 1600000, .k = argc > 3 ? atol(argv[3]) : 1000,
			.f = argc > 4 ? atol(argv[4]) : 16};
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	c.dir = getenv("BENCH_DIR") && *getenv("BENCH_DIR") ? getenv("BENCH_DIR") : "/tmp";
	if (c.rows < 1 || runs < 1 || runs > 99 || c.k < 1 || c.f < 1 || c.k * c.f > 10000000) {
		fprintf(stderr, "usage: store [ROWS [RUNS(1..99) [PROCESSES [FILES]]]]\n");
		return 2;
	}
	double cpu[NMODES][99], wall[NMODES][99], bpr[NMODES][99];
	double m_cpu[NMODES], m_wall[NMODES], m_bpr[NMODES];
	for (int r = 0; r < runs; r++)
		for (int i = 0; i < NMODES; i++) {
			/* the order rotates from run to run: a drifting machine hits every way alike */
			int m = (i + r) % NMODES;
			struct result res;
			if (measure((enum mode)m, &c, &res) < 0) {
				fprintf(stderr, "bench/store: the %s run failed\n", mode_names[m]);
				return 1;
			}
			cpu[m][r] = res.cpu_s;
			wall[m][r] = res.wall_s;
			bpr[m][r] = (double)(res.file_bytes - res.empty_bytes) / (double)res.rows;
		}
	for (int m = 0; m < NMODES; m++) {
		m_cpu[m] = median(cpu[m], runs);
		m_wall[m] = median(wall[m], runs);
		m_bpr[m] = median(bpr[m], runs);
	}
	long per_tx = c.k * c.f;
	printf("%ld interval rows in transactions of %ld (%ld processes x %ld files), %d values a row; medians of %d "
	       "runs, each in a fresh process; SQLite %s, WAL, synchronous=NORMAL, in %s\n",
	       c.rows, per_tx, c.k, c.f, VALUES_PER_ROW, runs, sqlite3_libversion(), c.dir);
	printf("%-8s %8s %8s %14s %16s %16s %10s %10s\n", "way", "cpu s", "wall s", "rows/s (cpu)", "values/s (cpu)",
	       "values/s (wall)", "bytes/row", "x bare");
	for (int m = 0; m < NMODES; m++)
		printf("%-8s %8.3f %8.3f %14.0f %16.0f %16.0f %10.1f %9.2fx\n", mode_names[m], m_cpu[m], m_wall[m],
		       c.rows / m_cpu[m], VALUES_PER_ROW * c.rows / m_cpu[m], VALUES_PER_ROW * c.rows / m_wall[m], m_bpr[m],
		       m_cpu[m] / m_cpu[BARE]);
	printf("CPU per row: bare %.2f us; two plain indexes %+.2f; store %.2f us (%+.2f over bare: key, roll-up,"
	       " window); schema 8's index on (proc_id, t_ms) %+.2f (store+index %.2f us)\n",
	       1e6 * m_cpu[BARE] / c.rows, 1e6 * (m_cpu[INDEXED] - m_cpu[BARE]) / c.rows, 1e6 * m_cpu[STORE] / c.rows,
	       1e6 * (m_cpu[STORE] - m_cpu[BARE]) / c.rows, 1e6 * (m_cpu[STORE_INDEX] - m_cpu[STORE]) / c.rows,
	       1e6 * m_cpu[STORE_INDEX] / c.rows);
	double v = VALUES_PER_ROW * c.rows / m_cpu[STORE];
	printf("grouped (store_intervals_add, 16 rows a statement): %.2f us a row, %.2fx the store's one by one\n",
	       1e6 * m_cpu[GROUPED] / c.rows, m_cpu[GROUPED] / m_cpu[STORE]);
	printf("target: >= %.0f metric values stored per second per core (store_interval_add, CPU time): %.0f "
	       "(%.2fx the target; bare SQLite %.0f) -> %s\n",
	       TARGET_VALUES_PER_S, v, v / TARGET_VALUES_PER_S, VALUES_PER_ROW * c.rows / m_cpu[BARE],
	       v >= TARGET_VALUES_PER_S ? "MET" : "NOT MET");
	double vi = VALUES_PER_ROW * c.rows / m_cpu[STORE_INDEX];
	printf("with schema 8's index (store+index): %.0f (%.2fx the target) -> %s\n", vi, vi / TARGET_VALUES_PER_S,
	       vi >= TARGET_VALUES_PER_S ? "MET" : "NOT MET");
	return 0;
}
