/* SPDX-License-Identifier: MIT */
/*
 * The store's conformance checks (store.h), one program for every backend: every operation with
 * the exact values it must give back. Without an argument it runs on a new SQLite file (a unit
 * test); tests/integration/store_pg.sh runs it on a PostgreSQL database:
 *   test_store_ops [URL]             the checks (URL: an empty store)
 *   test_store_ops --fill URL        the fixed operations store_pg.sh reads back with the CLI from
 *                                    an SQLite and a PostgreSQL store, to compare the outputs
 *   test_store_ops --unwritable URL  a write through URL must be refused (-EACCES or -EROFS) with
 *                                    one line that holds no password
 * Where the backends differ by design, each is checked for its own rule: PostgreSQL keeps the
 * facts of the highest batch sequence (ingest applies batches out of order) and never reopens an
 * ended process; SQLite, the daemon's own store written in order, takes every write.
 */
#include <errno.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "direct.h"
#include "iostrata/counters.h"
#include "store/archive.h"
#include "store/store.h"

#define STR_(x) #x
#define STR(x) STR_(x)

#define DAY INT64_C(86400000)
/* 2023-11-14 22:13:20 UTC: a day's partition starts at T0 - 80000000 */
#define T0 INT64_C(1700000000000)
#define D1 (T0 - DAY) /* the day retention removes */

static const char *url;
static int is_pg;
/* Where the interval rows are read one a (process, file, layer, category), as before SQLite's
 * schema 15: PostgreSQL's tables, SQLite's views that unpack a process's row (docs/STORE.md). */
static const char *IV = "intervals", *IVM = "intervals_minute";

static int ok_r(const char *name, int r, struct store *s)
{
	check(name, r == 0, "returned %d: %s", r, s ? store_error(s) : "");
	return r == 0;
}

/* ---- direct access, for what store.h cannot say (findings, the schema version) ---- */

/* One integer from sql on the store itself, -1 on an error (printed). */
static int64_t direct_int(const char *sql)
{
	return direct_sql_int(url, sql);
}

/* ---- callbacks that keep what they are given ---- */

struct jobs_seen {
	size_t n;
	struct store_job j[8];
	char job[8][32], user[8][32], exe[8][64], sched_name[8][32];
};

static int keep_job(const struct store_job *j, void *arg)
{
	struct jobs_seen *c = arg;
	if (c->n < 8) {
		c->j[c->n] = *j;
		snprintf(c->job[c->n], sizeof c->job[0], "%s", j->job);
		snprintf(c->user[c->n], sizeof c->user[0], "%s", j->user);
		snprintf(c->exe[c->n], sizeof c->exe[0], "%s", j->exe);
		snprintf(c->sched_name[c->n], sizeof c->sched_name[0], "%s", j->sched_name ? j->sched_name : "(null)");
	}
	c->n++;
	return 0;
}

static struct jobs_seen jobs_of(struct store *s, struct store_job_filter f)
{
	struct jobs_seen c = {0};
	int r = store_jobs(s, &f, keep_job, &c);
	if (r < 0)
		check("store_jobs", 0, "returned %d: %s", r, store_error(s));
	return c;
}

struct secs_seen {
	size_t n;
	struct store_node_sec ns[8];
	uint64_t bytes_read, bytes_written, reads, writes, meta_ops, rows_60s;
};

static int keep_sec(const struct store_node_sec *ns, void *arg)
{
	struct secs_seen *c = arg;
	if (c->n < 8) {
		c->ns[c->n] = *ns;
		c->ns[c->n].host = NULL;
	}
	c->n++;
	c->bytes_read += ns->bytes_read;
	c->bytes_written += ns->bytes_written;
	c->reads += ns->reads;
	c->writes += ns->writes;
	c->meta_ops += ns->meta_ops;
	c->rows_60s += ns->dt_ms == 60000;
	return 0;
}

struct strs_seen {
	size_t n;
	char v[8][128];
	int64_t num[8];
	struct store_device_sample d;
	struct store_dist x;
};

static int keep_path(const char *path, void *arg)
{
	struct strs_seen *c = arg;
	if (c->n < 8)
		snprintf(c->v[c->n], sizeof c->v[0], "%s", path);
	c->n++;
	return 0;
}

static int keep_proc(const struct store_proc *p, void *arg)
{
	struct strs_seen *c = arg;
	if (c->n < 8 && p->cursor_len < 100) {
		int n = snprintf(c->v[c->n], sizeof c->v[0], "%d:", p->pid);
		memcpy(c->v[c->n] + n, p->cursor, p->cursor_len); /* bytes, NUL among them */
		c->num[c->n] = (int64_t)p->cursor_len;
	}
	c->n++;
	return 0;
}

static int keep_device(const struct store_device_sample *d, void *arg)
{
	struct strs_seen *c = arg;
	if (c->n < 8)
		snprintf(c->v[c->n], sizeof c->v[0], "%s %s %u:%u", d->host, d->device, d->major, d->minor);
	c->d = *d;
	c->n++;
	return 0;
}

static int keep_sample(const struct store_sample *x, void *arg)
{
	struct strs_seen *c = arg;
	if (c->n < 8) {
		snprintf(c->v[c->n], sizeof c->v[0], "%s|%s|%s|%s|%d", x->host, x->source, x->instance, x->metric, x->gauge);
		c->num[c->n] = x->value;
	}
	c->n++;
	return 0;
}

static int keep_dist(const struct store_dist *x, void *arg)
{
	struct strs_seen *c = arg;
	if (c->n < 8)
		snprintf(c->v[c->n], sizeof c->v[0], "%s|%s|%s", x->host, x->server, x->op);
	c->x = *x;
	c->x.host = c->x.server = c->x.op = NULL;
	c->n++;
	return 0;
}

/* ---- the fixed rows ---- */

static struct store_job job(const char *id, const char *host, uint32_t uid, const char *user, int64_t start)
{
	return (struct store_job){.job = id, .host = host, .uid = uid, .user = user, .exe = "/bin/app",
				  .jobdir = "/jobs/x", .start_ms = start, .running = 1};
}

static struct store_proc proc(int64_t job_key, int32_t pid, uint32_t uid, const char *final, enum store_proc_state st)
{
	return (struct store_proc){.job_key = job_key, .host = "n1", .pid = pid, .rank = pid % 4,
				   .start_ns = 1000000u + (uint64_t)pid, .start_ticks = 77, .uid = uid, .exe = "/bin/app",
				   .live_path = "/live/x.iost", .final_path = final, .start_ms = T0 - DAY, .state = st,
				   .cursor = "c\0ur", .cursor_len = 4};
}

static struct store_node_sec node_sec(int64_t t, unsigned layer, uint64_t base)
{
	struct store_node_sec ns = {.t_ms = t, .dt_ms = 1000, .host = "n1", .layer = layer, .bytes_read = base,
				    .bytes_written = base * 2, .reads = base / 10, .writes = base / 5, .meta_ops = 3};
	ns.read_hist[1] = 3;
	ns.read_hist[3] = base;
	ns.write_hist[0] = 1;
	return ns;
}

static struct store_interval interval(int64_t t, int64_t proc_key, int64_t file_key, unsigned cat, int64_t bytes)
{
	return (struct store_interval){.t_ms = t, .dt_ms = 1000, .proc_key = proc_key, .file_key = file_key, .layer = 1,
				       .cat = cat, .bytes = bytes, .calls = 2, .dur_ns = 50};
}

/* The operations --fill makes (the CLI comparison in store_pg.sh reads them back). */
static int fill(struct store *s)
{
	int r = store_begin(s);
	struct store_job a = job("100", "n1", 1000, "alice", T0 - 5000), b = job("200", "n1", 2000, "bob", T0 - 4000);
	int64_t f1 = 0, f2 = 0;
	if (r == 0 && (r = store_job_put(s, &a)) == 0 && (r = store_job_put(s, &b)) == 0 &&
	    (r = store_file_key(s, "/data/in.dat", &f1)) == 0)
		r = store_file_key(s, "/data/out, \"two\".dat", &f2);
	struct store_proc pa = proc(a.key, 10, 1000, "/jobs/100/10.iost", STORE_PROC_ENDED);
	struct store_proc pb = proc(b.key, 20, 2000, "", STORE_PROC_LIVE);
	if (r == 0 && (r = store_proc_put(s, &pa)) == 0)
		r = store_proc_put(s, &pb);
	for (int i = 0; r == 0 && i < 3; i++) {
		int64_t t = T0 + i * 1000;
		struct store_interval iv = interval(t, pa.key, f1, STORE_CAT_READ, 4096 * (i + 1));
		struct store_interval iw = interval(t, pb.key, f2, STORE_CAT_WRITE, 512 * (i + 1));
		struct store_node_sec ns = node_sec(t, 1, 100 + (uint64_t)i);
		struct store_device_sample d = {.t_ms = t, .dt_ms = 1000, .host = "n1", .device = "sda", .major = 8,
						.reads = 5 + (uint64_t)i, .sectors_read = 40, .in_flight = 1};
		struct store_sample x = {.t_ms = t, .dt_ms = 1000, .host = "n1", .source = "nfs", .instance = "/mnt/a",
					 .metric = "ops", .value = 7 * i};
		struct store_dist ds = {.t_ms = t, .host = "n1", .server = "block sda", .op = "read", .requests = 64};
		ds.wait[2] = 60;
		ds.service[5] = 64;
		int64_t bytes[STORE_NCATS] = {iv.bytes, 0, 0}, calls[STORE_NCATS] = {iv.calls, 0, 0};
		if ((r = store_interval_add(s, &iv)) || (r = store_interval_add(s, &iw)) ||
		    (r = store_job_totals_add(s, a.key, bytes, calls)) || (r = store_node_sec_add(s, &ns)) ||
		    (r = store_device_add(s, &d)) || (r = store_sample_add(s, &x)) || (r = store_dist_add(s, &ds)))
			break;
	}
	a.end_ms = T0 + 3000;
	a.running = 0;
	if (r == 0 && (r = store_job_put(s, &a)) == 0)
		r = store_job_report_put(s, a.key, "job 100: 3 reads\n", "{\"job\":\"100\"}");
	if (r == 0)
		r = store_commit(s);
	else
		store_rollback(s);
	return r;
}

/* ---- the checks ---- */

static void check_jobs(struct store *s, int64_t *ka, int64_t *kb)
{
	struct store_job a = job("100", "n1", 1000, "alice", 1000), b = job("200", "n1", 2000, "bob", 2000);
	struct store_job c = job("100", "n1", 2000, "bob", 3000);
	ok_r("begin", store_begin(s), s);
	ok_r("job_put: a new job", store_job_put(s, &a), s);
	struct store_job a2 = job("100", "n1", 1000, "alice", 900);
	a2.exe = "/bin/other";
	a2.end_ms = 5000;
	a2.running = 0;
	ok_r("job_put: the same job again", store_job_put(s, &a2), s);
	eq_i64("job_put: the same job keeps its key", a2.key, a.key);
	ok_r("job_put: another user's job", store_job_put(s, &b), s);
	ok_r("job_put: the same job id of another uid", store_job_put(s, &c), s);
	check("job_put: another uid is another job", c.key != a.key && c.key != b.key && b.key != a.key, "keys %lld %lld %lld",
	      (long long)a.key, (long long)b.key, (long long)c.key);
	int64_t bytes[STORE_NCATS] = {10, 20, 30}, calls[STORE_NCATS] = {1, 2, 3};
	ok_r("job_totals_add", store_job_totals_add(s, a.key, bytes, calls), s);
	ok_r("job_totals_add again", store_job_totals_add(s, a.key, bytes, calls), s);
	struct store_job sched = a;
	sched.sched = "slurm";
	sched.sched_name = "train";
	sched.sched_state = "COMPLETED";
	sched.sched_nodes = "n[1-2]";
	sched.submit_ms = 800;
	sched.sched_start_ms = 850;
	sched.sched_end_ms = 5100;
	ok_r("job_sched_put", store_job_sched_put(s, &sched), s);
	ok_r("commit", store_commit(s), s);

	struct jobs_seen all = jobs_of(s, (struct store_job_filter){.uid = STORE_ANY_UID});
	eq_u64("jobs: an admin sees every job", all.n, 3);
	eq_str("jobs: in start order, first", all.job[0], "100");
	eq_i64("jobs: the earliest start stays", all.j[0].start_ms, 900);
	eq_str("jobs: the first exe stays", all.exe[0], "/bin/app");
	eq_i64("jobs: the end is the last put's", all.j[0].end_ms, 5000);
	eq_i64("jobs: running is the last put's", all.j[0].running, 0);
	eq_u64("jobs: bytes read add up", all.j[0].bytes[STORE_CAT_READ], 20);
	eq_u64("jobs: bytes written add up", all.j[0].bytes[STORE_CAT_WRITE], 40);
	eq_u64("jobs: metadata bytes add up", all.j[0].bytes[STORE_CAT_META], 60);
	eq_u64("jobs: reads add up", all.j[0].calls[STORE_CAT_READ], 2);
	eq_u64("jobs: writes add up", all.j[0].calls[STORE_CAT_WRITE], 4);
	eq_u64("jobs: metadata calls add up", all.j[0].calls[STORE_CAT_META], 6);
	eq_str("jobs: scheduler name", all.sched_name[0], "train");
	eq_i64("jobs: scheduler end", all.j[0].sched_end_ms, 5100);
	eq_str("jobs: no scheduler facts: NULL", all.sched_name[1], "(null)");

	struct jobs_seen own = jobs_of(s, (struct store_job_filter){.uid = 1000});
	eq_u64("jobs: uid 1000 sees only its own", own.n, 1);
	eq_str("jobs: uid 1000's job is alice's", own.user[0], "alice");
	own = jobs_of(s, (struct store_job_filter){.uid = 2000});
	eq_u64("jobs: uid 2000 sees its two", own.n, 2);
	eq_u64("jobs: uid 2000 never sees uid 1000's job", own.j[0].uid + own.j[1].uid, 4000);
	own = jobs_of(s, (struct store_job_filter){.uid = 4242});
	eq_u64("jobs: a uid without jobs sees none", own.n, 0);
	own = jobs_of(s, (struct store_job_filter){.uid = STORE_ANY_UID, .user = "bob"});
	eq_u64("jobs: by user", own.n, 2);
	own = jobs_of(s, (struct store_job_filter){.uid = STORE_ANY_UID, .running_only = 1});
	eq_u64("jobs: running only", own.n, 2);
	own = jobs_of(s, (struct store_job_filter){.uid = STORE_ANY_UID, .since_ms = 6000});
	eq_u64("jobs: since (an ended job before it is out)", own.n, 2);
	own = jobs_of(s, (struct store_job_filter){.uid = STORE_ANY_UID, .job = "100"});
	eq_u64("jobs: by job id (two uids)", own.n, 2);
	own = jobs_of(s, (struct store_job_filter){.uid = STORE_ANY_UID, .key = b.key});
	eq_str("jobs: by key", own.n == 1 ? own.job[0] : "", "200");
	own = jobs_of(s, (struct store_job_filter){.uid = STORE_ANY_UID, .limit = 1});
	eq_u64("jobs: limit", own.n, 1);
	*ka = a.key;
	*kb = b.key;
}

static void check_procs(struct store *s, int64_t ka, int64_t *pk, int64_t *fk)
{
	struct store_proc p1 = proc(ka, 10, 1000, "", STORE_PROC_LIVE);
	struct store_proc p2 = proc(ka, 11, 1000, "/jobs/100/11.iost", STORE_PROC_ENDED);
	struct store_proc p3 = proc(ka, 12, 1000, "/jobs/100/12 b.iost", STORE_PROC_LIVE);
	p3.cursor = "\x00\x01\xff\\\n";
	p3.cursor_len = 5;
	ok_r("begin", store_begin(s), s);
	ok_r("proc_put: three processes",
	     store_proc_put(s, &p1) | store_proc_put(s, &p2) | store_proc_put(s, &p3), s);
	struct store_proc again = proc(ka, 10, 1000, "", STORE_PROC_ENDED);
	again.end_ms = T0;
	ok_r("proc_put: found by identity", store_proc_put(s, &again), s);
	eq_i64("proc_put: the same process keeps its key", again.key, p1.key);
	int64_t f1 = 0, f1b = 0, f2 = 0;
	ok_r("file_key", store_file_key(s, "/data/in.dat", &f1) | store_file_key(s, "/data/in.dat", &f1b) |
				 store_file_key(s, "/data/out,\"q\".dat", &f2), s);
	eq_i64("file_key: a path has one key", f1b, f1);
	check("file_key: another path another key", f2 != f1 && f1 > 0, "%lld %lld", (long long)f1, (long long)f2);
	ok_r("commit", store_commit(s), s);

	int64_t key = 0;
	enum store_proc_state st = STORE_PROC_LIVE;
	ok_r("proc_find", store_proc_find(s, "n1", 10, 1000010, &key, &st), s);
	eq_i64("proc_find: its key", key, p1.key);
	eq_i64("proc_find: its state", st, STORE_PROC_ENDED);
	eq_i64("proc_find: an unknown process", store_proc_find(s, "n1", 10, 999, &key, &st), -ENOENT);

	struct strs_seen open = {0};
	ok_r("procs_open", store_procs_open(s, "n1", keep_proc, &open), s);
	eq_u64("procs_open: the live one", open.n, 1);
	eq_i64("procs_open: its cursor's length", open.num[0], 5);
	check("procs_open: its cursor byte for byte", open.n == 1 && !memcmp(open.v[0], "12:\x00\x01\xff\\\n", 8),
	      "got \"%s\"", open.v[0]);
	struct strs_seen none = {0};
	ok_r("procs_open: another host", store_procs_open(s, "n2", keep_proc, &none), s);
	eq_u64("procs_open: another host has none", none.n, 0);

	struct strs_seen logs = {0};
	ok_r("job_logs", store_job_logs(s, ka, "n1", keep_path, &logs), s);
	eq_u64("job_logs: the final logs", logs.n, 2);
	eq_str("job_logs: sorted, first", logs.v[0], "/jobs/100/11.iost");
	eq_str("job_logs: sorted, second", logs.v[1], "/jobs/100/12 b.iost");
	struct jobs_seen j = jobs_of(s, (struct store_job_filter){.uid = STORE_ANY_UID, .key = ka});
	eq_u64("jobs: nprocs counts its processes", j.n ? j.j[0].nprocs : 0, 3);
	pk[0] = p1.key;
	pk[1] = p3.key;
	fk[0] = f1;
	fk[1] = f2;
}

static void check_rows(struct store *s, const int64_t *pk, const int64_t *fk)
{
	struct store_node_filter all = {0}, day2 = {.since_ms = T0};
	ok_r("begin", store_begin(s), s);
	int r = 0;
	/* interval statistics on two days: the same key twice in one transaction adds up */
	for (int d = 0; d < 2; d++) {
		int64_t t = d ? T0 + 1000 : D1 + 1000;
		struct store_interval iv = interval(t, pk[0], fk[0], STORE_CAT_READ, 100);
		struct store_interval iw = interval(t, pk[0], fk[1], STORE_CAT_WRITE, 30);
		struct store_interval im = interval(t + 61000, pk[1], fk[0], STORE_CAT_META, 0);
		r |= store_interval_add(s, &iv) | store_interval_add(s, &iv) | store_interval_add(s, &iw) |
		     store_interval_add(s, &im);
		struct store_node_sec first = node_sec(t, 1, 999), ns = node_sec(t, 1, 100), ns2 = node_sec(t + 61000, 1, 50);
		r |= store_node_sec_add(s, &first) | store_node_sec_add(s, &ns) | store_node_sec_add(s, &ns2);
		struct store_device_sample dv = {.t_ms = t, .dt_ms = 1000, .host = "n1", .device = "nvme0n1", .major = 259,
						 .reads = 1, .reads_merged = 2, .sectors_read = 3, .ms_reading = 4,
						 .writes = 5, .writes_merged = 6, .sectors_written = 7, .ms_writing = 8,
						 .in_flight = 9, .ms_io = 10, .ms_weighted = 11, .discards = 12,
						 .sectors_discarded = 13, .flushes = 14};
		struct store_device_sample old = dv;
		old.reads = 1000;
		r |= store_device_add(s, &old) | store_device_add(s, &dv);
		struct store_sample x = {.t_ms = t, .dt_ms = 1000, .host = "n1", .source = "nfs",
					 .instance = "/mnt/a\tb\\c\nd", .metric = "retrans", .value = -5, .gauge = 1};
		struct store_sample y = {.t_ms = t, .dt_ms = 1000, .host = "n1", .source = "lustre", .instance = "ost0",
					 .metric = "read_bytes", .value = 1 << 20};
		r |= store_sample_add(s, &x) | store_sample_add(s, &y);
		struct store_dist ds = {.t_ms = t, .host = "n1", .server = "mount /mnt/a", .op = "write", .requests = 128,
					.timed = 127};
		ds.wait[0] = 1;
		ds.wait[31] = 2;
		ds.service[4] = 128;
		r |= store_dist_add(s, &ds);
		/* runs: one given twice is stored once */
		struct store_run ru = {.t_ms = t, .proc_key = pk[0], .file_key = fk[0], .tid = 77, .idx = (uint64_t)d * 10,
				       .layer = 1, .op = LOG_OP_WRITE, .offset = 4096, .size = 4096, .count = 8,
				       .start_ns = t * 1000000 - 500000000, .end_ns = t * 1000000 - 100000000,
				       .busy_ns = 300000000, .min_ns = 30000000};
		r |= store_run_add(s, &ru) | store_run_add(s, &ru);
		ru.idx++, ru.op = LOG_OP_CLOSE, ru.offset = -1, ru.size = 0, ru.count = 1, ru.result = -EIO;
		r |= store_run_add(s, &ru);
	}
	ok_r("adds: every row buffered or written", r, s);
	struct secs_seen own = {0};
	ok_r("user_secs inside the transaction", store_user_secs(s, 1000, &day2, keep_sec, &own), s);
	eq_u64("user_secs: a transaction sees its own rows", own.bytes_read, 200);
	ok_r("commit", store_commit(s), s);
	eq_i64("runs: 4 rows, the one given twice once", direct_int("SELECT count(*) FROM runs"), 4);
	eq_i64("runs: their calls", direct_int("SELECT sum(count) FROM runs"), 18);

	/* the same key in a later transaction adds up too */
	ok_r("begin", store_begin(s), s);
	struct store_interval more = interval(T0 + 1000, pk[0], fk[0], STORE_CAT_READ, 100);
	ok_r("interval_add in a new transaction", store_interval_add(s, &more), s);
	ok_r("commit", store_commit(s), s);

	own = (struct secs_seen){0};
	ok_r("user_secs", store_user_secs(s, 1000, &day2, keep_sec, &own), s);
	eq_u64("user_secs: rows (interval x layer)", own.n, 2);
	eq_u64("user_secs: bytes read added up (3 x 100)", own.bytes_read, 300);
	eq_u64("user_secs: reads added up (3 x 2)", own.reads, 6);
	eq_u64("user_secs: bytes written", own.bytes_written, 30);
	eq_u64("user_secs: writes", own.writes, 2);
	eq_u64("user_secs: metadata calls", own.meta_ops, 2);
	own = (struct secs_seen){0};
	ok_r("user_secs: another uid", store_user_secs(s, 2000, &all, keep_sec, &own), s);
	eq_u64("user_secs: another uid sees none of it", own.n, 0);

	struct secs_seen ns = {0};
	struct store_node_filter host = {.host = "n1", .since_ms = T0, .until_ms = T0 + 2000};
	ok_r("node_secs", store_node_secs(s, &host, keep_sec, &ns), s);
	eq_u64("node_secs: one row (the last put of a key wins)", ns.n, 1);
	eq_u64("node_secs: bytes read", ns.bytes_read, 100);
	eq_u64("node_secs: bytes written", ns.bytes_written, 200);
	eq_u64("node_secs: reads", ns.reads, 10);
	eq_u64("node_secs: writes", ns.writes, 20);
	eq_u64("node_secs: dt", (uint64_t)ns.ns[0].dt_ms, 1000);
	eq_u64("node_secs: read histogram length", store_hist_used(ns.ns[0].read_hist), 4);
	eq_u64("node_secs: read histogram bucket 1", ns.ns[0].read_hist[1], 3);
	eq_u64("node_secs: read histogram bucket 3", ns.ns[0].read_hist[3], 100);
	eq_u64("node_secs: write histogram", ns.ns[0].write_hist[0] * 10 + store_hist_used(ns.ns[0].write_hist), 11);
	struct store_node_filter other = {.host = "n2"};
	ns = (struct secs_seen){0};
	ok_r("node_secs: another host", store_node_secs(s, &other, keep_sec, &ns), s);
	eq_u64("node_secs: another host has none", ns.n, 0);

	struct strs_seen dv = {0};
	ok_r("devices", store_devices(s, &day2, keep_device, &dv), s);
	eq_u64("devices: one per interval (the last put wins)", dv.n, 1);
	eq_str("devices: its names", dv.v[0], "n1 nvme0n1 259:0");
	eq_u64("devices: every counter in its place",
	       dv.d.reads + dv.d.reads_merged * 10 + dv.d.sectors_read * 100 + dv.d.ms_reading * 1000 +
		       dv.d.writes * 10000 + dv.d.flushes * 100000 + dv.d.sectors_discarded * 1000000 +
		       dv.d.in_flight * 10000000,
	       1 + 20 + 300 + 4000 + 50000 + 1400000 + 13000000 + 90000000);
	eq_u64("devices: the rest", dv.d.writes_merged + dv.d.sectors_written + dv.d.ms_writing + dv.d.ms_io +
					    dv.d.ms_weighted + dv.d.discards, 6 + 7 + 8 + 10 + 11 + 12);

	struct strs_seen sm = {0};
	ok_r("samples: one source", store_samples(s, &day2, "nfs", keep_sample, &sm), s);
	eq_u64("samples: one source's rows", sm.n, 1);
	eq_str("samples: text with tab, backslash and newline", sm.v[0], "n1|nfs|/mnt/a\tb\\c\nd|retrans|1");
	eq_i64("samples: a negative value", sm.num[0], -5);
	sm = (struct strs_seen){0};
	ok_r("samples: every source", store_samples(s, &day2, NULL, keep_sample, &sm), s);
	eq_u64("samples: every source's rows", sm.n, 2);
	eq_str("samples: ordered by source", sm.v[0], "n1|lustre|ost0|read_bytes|0");
	eq_i64("samples: a counter's value", sm.num[0], 1 << 20);

	struct strs_seen di = {0};
	ok_r("dists", store_dists(s, &day2, keep_dist, &di), s);
	eq_u64("dists: rows", di.n, 1);
	eq_str("dists: names", di.v[0], "n1|mount /mnt/a|write");
	eq_u64("dists: requests", di.x.requests, 128);
	eq_u64("dists: timed", di.x.timed, 127);
	eq_u64("dists: wait histogram, all 32 buckets", di.x.wait[0] + di.x.wait[31] * 10 + store_hist_used(di.x.wait) * 100,
	       3221);
	eq_u64("dists: service histogram", di.x.service[4] * 100 + store_hist_used(di.x.service), 12805);

	/* a rollback leaves nothing of its transaction */
	ok_r("begin", store_begin(s), s);
	struct store_interval gone = interval(T0 + 9000, pk[0], fk[0], STORE_CAT_READ, 7);
	struct store_node_sec gone_ns = node_sec(T0 + 9000, 2, 7);
	ok_r("adds before a rollback", store_interval_add(s, &gone) | store_node_sec_add(s, &gone_ns), s);
	store_rollback(s);
	ns = (struct secs_seen){0};
	struct store_node_filter later = {.since_ms = T0 + 9000, .until_ms = T0 + 10000};
	ok_r("node_secs after a rollback", store_node_secs(s, &later, keep_sec, &ns), s);
	own = (struct secs_seen){0};
	ok_r("user_secs after a rollback", store_user_secs(s, 1000, &later, keep_sec, &own), s);
	eq_u64("rollback: no row of it stays", ns.n + own.n, 0);
}

/* A job's series: its interval rows summed per bucket and layer, by rank when asked. */
struct series_seen {
	char text[1024];
	size_t len;
};

static int keep_point(const struct store_series_point *pt, void *ctx)
{
	struct series_seen *x = ctx;
	int n = snprintf(x->text + x->len, sizeof x->text - x->len, "%lld/%s/%d/%u:%llu,%llu,%llu,%llu,%llu;",
			 (long long)(pt->t_ms - T0), pt->host, pt->rank, pt->layer, (unsigned long long)pt->bytes_read,
			 (unsigned long long)pt->bytes_written, (unsigned long long)pt->reads,
			 (unsigned long long)pt->writes, (unsigned long long)pt->meta_ops);
	if (n > 0 && (size_t)n < sizeof x->text - x->len)
		x->len += (size_t)n;
	return 0;
}

static void check_series(struct store *s, int64_t ka)
{
	/* check_rows gave job ka, on two days, at t and t + 61 s: rank 2 read 100 twice (2 calls each)
	 * and wrote 30 (2 calls) at t; rank 0 made 2 metadata calls at t + 61 s; and on the second day
	 * rank 2 read 100 more (2 calls) at t in a second transaction */
	struct series_seen every = {{0}, 0}, hours = {{0}, 0};
	ok_r("job_series: every interval, by layer", store_job_series(s, ka, STORE_SERIES_LAYER, 0, keep_point, &every), s);
	eq_str("job_series: four intervals, exact sums", every.text,
	       "-86399000//-1/1:200,30,4,2,0;-86338000//-1/1:0,0,0,0,2;1000//-1/1:300,30,6,2,0;62000//-1/1:0,0,0,0,2;");
	ok_r("job_series: hourly, by rank", store_job_series(s, ka, STORE_SERIES_RANK, 3600000, keep_point, &hours), s);
	eq_str("job_series: two hours, two ranks each, rounded down to the hour", hours.text,
	       "-87200000//0/1:0,0,0,0,2;-87200000//2/1:200,30,4,2,0;-800000//0/1:0,0,0,0,2;-800000//2/1:300,30,6,2,0;");
}

static void check_bulk(struct store *s, int64_t kb, int64_t fk)
{
	/* more rows than a PostgreSQL transaction keeps in memory (50,000): flushed mid-way, merged
	 * with the same key again after */
	struct store_proc p = proc(kb, 30, 3000, "", STORE_PROC_LIVE);
	int r = store_begin(s);
	r |= store_proc_put(s, &p);
	int64_t base = T0 + 2 * DAY;
	for (int i = 0; i < 60000; i++) {
		struct store_interval iv = interval(base + i, p.key, fk, STORE_CAT_WRITE, i % 7);
		r |= store_interval_add(s, &iv);
	}
	for (int i = 0; i < 60000; i += 10000) {
		struct store_interval iv = interval(base + i, p.key, fk, STORE_CAT_WRITE, 1000);
		r |= store_interval_add(s, &iv);
	}
	ok_r("bulk: 60,006 interval rows in one transaction", r, s);
	ok_r("bulk: commit", store_commit(s), s);
	struct secs_seen c = {0};
	struct store_node_filter f = {.since_ms = base};
	ok_r("bulk: user_secs", store_user_secs(s, 3000, &f, keep_sec, &c), s);
	eq_u64("bulk: one row per interval", c.n, 60000);
	/* sum of i % 7 over 0..59999: 8571 full cycles of 21, then 0+1+2 */
	eq_u64("bulk: bytes written add up", c.bytes_written, 8571 * 21 + 3 + 6 * 1000);
	eq_u64("bulk: writes add up", c.writes, 60006 * 2);
}

/* The rows of process at (stored at once) and of process one (the same rows one by one) are the
 * same rows, both ways, in intervals and in proc_intervals (pcols: the columns compared there). */
static void same_tables(const char *what, int64_t at, int64_t one, const char *pcols)
{
	const char *const tables[] = {IV, "proc_intervals"};
	char sql[1024], name[128];
	for (int t = 0; t < 2; t++)
		for (int d = 0; d < 2; d++) {
			const char *cols = t ? pcols : "t_ms, dt_ms, file_id, layer, cat, bytes, calls, dur_ns";
			snprintf(sql, sizeof sql,
				 "SELECT count(*) FROM (SELECT %s FROM %s WHERE proc_id = %lld EXCEPT SELECT %s FROM %s"
				 " WHERE proc_id = %lld) x",
				 cols, tables[t], (long long)(d ? one : at), cols, tables[t], (long long)(d ? at : one));
			snprintf(name, sizeof name, "%s: %s of %s the same as the other's", what, tables[t],
				 d ? "one by one" : "at once");
			eq_i64(name, direct_int(sql), 0);
		}
}

/* A transaction begun with processes pid and pid + 1 (a, b) and five files /dir/fileN (fk). */
static int two_procs(struct store *s, int64_t kb, int32_t pid, const char *dir, struct store_proc *a,
		     struct store_proc *b, int64_t fk[5])
{
	*a = proc(kb, pid, 3000, "", STORE_PROC_LIVE);
	*b = proc(kb, pid + 1, 3000, "", STORE_PROC_LIVE);
	int r = store_begin(s);
	r |= store_proc_put(s, a);
	r |= store_proc_put(s, b);
	for (int f = 0; f < 5 && r == 0; f++) {
		char path[64];
		snprintf(path, sizeof path, "/%s/file%d", dir, f);
		r |= store_file_key(s, path, &fk[f]);
	}
	return r;
}

/* An intervals row's bytes * 1000 + calls. */
static int64_t key_row(int64_t proc, int64_t t, int64_t file, unsigned cat)
{
	char sql[256];
	snprintf(sql, sizeof sql,
		 "SELECT bytes * 1000 + calls FROM %s WHERE proc_id = %lld AND t_ms = %lld AND file_id = %lld"
		 " AND cat = %u",
		 IV, (long long)proc, (long long)t, (long long)file, cat);
	return direct_int(sql);
}

/* The rows v stored one by one for process one, then at once as they are. */
static int store_both(struct store *s, const struct store_interval *v, size_t n, int64_t one)
{
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		struct store_interval x = v[i];
		x.proc_key = one;
		r |= store_interval_add(s, &x);
	}
	return r | store_intervals_add(s, v, n);
}

/* Rows handed over at once (store_intervals_add: SQLite writes them 64 to a statement) store
 * what the same rows one by one store: keys repeated inside a group of 64 and across groups add
 * up, a tail shorter than a group, one transaction. Process A takes them at once, B one by one. */
static void check_grouped(struct store *s, int64_t kb)
{
	enum { N = 1000 };
	struct store_proc a, b;
	int64_t fk[5];
	static struct store_interval va[N];
	int r = two_procs(s, kb, 41, "grouped", &a, &b, fk);
	int64_t base = T0 + 2 * DAY + 3600000; /* the bulk rows' day: no partition of its own */
	for (int i = 0; i < N && r == 0; i++) {
		/* 5 times x 5 files x 3 categories: 75 keys, a key again 15 rows later */
		va[i] = interval(base + (i / 200) * 10000, a.key, fk[i % 5], (unsigned)(i % 3), i);
		va[i].calls = 1;
		va[i].dur_ns = 2 * i;
	}
	r |= store_both(s, va, N, b.key);
	ok_r("grouped: 1,000 rows at once and one by one", r, s);
	ok_r("grouped: commit", store_commit(s), s);
	char sql[1024];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE proc_id = %lld", IV, (long long)a.key);
	eq_i64("grouped: one row per key", direct_int(sql), 75);
	snprintf(sql, sizeof sql, "SELECT sum(bytes) + 1000000 * sum(calls) FROM %s WHERE proc_id = %lld", IV,
		 (long long)a.key);
	eq_i64("grouped: bytes and calls add up", direct_int(sql), N * (N - 1) / 2 + 1000000 * N);
	/* i = 0, 15, ..., 195: 15 * (0 + ... + 13) */
	eq_i64("grouped: a key repeated inside groups", key_row(a.key, base, fk[0], 0), 1365 * 1000 + 14);
	same_tables("grouped", a.key, b.key, "t_ms, layer, cat, bytes, calls, dur_ns");
	snprintf(sql, sizeof sql, "SELECT count(*) FROM proc_intervals WHERE proc_id = %lld", (long long)a.key);
	eq_i64("grouped: proc_intervals, one row per time and category", direct_int(sql), 15);
}

/* Rows handed over in key order, as the daemon hands them (a process's files in order, a group
 * of one interval: SQLite neither sorts them nor binds their time but once a group), a key
 * repeated on adjacent rows: the same tables as the same rows one by one. C takes them at once,
 * D one by one. */
static void check_grouped_sorted(struct store *s, int64_t kb)
{
	enum { N = 1000 };
	struct store_proc c, d;
	int64_t fk[5];
	static struct store_interval va[N];
	int r = two_procs(s, kb, 43, "sorted", &c, &d, fk);
	int64_t base = T0 + 2 * DAY + 3600000;
	for (int i = 0; i < N && r == 0; i++) {
		/* 75 rows an interval: 5 files x 3 categories, each key on 5 rows in a row; the
		 * groups of 64 straddle the intervals (13 of 15 hold one interval alone) */
		int j = i % 75;
		va[i] = interval(base + (i / 75) * 10000, c.key, fk[j / 15], (unsigned)(j / 5 % 3), i);
		va[i].calls = 1;
		va[i].dur_ns = 3 * i;
	}
	r |= store_both(s, va, N, d.key);
	ok_r("sorted groups: 1,000 rows at once and one by one", r, s);
	ok_r("sorted groups: commit", store_commit(s), s);
	char sql[1024];
	snprintf(sql, sizeof sql, "SELECT count(*) * 1000000000 + sum(bytes) FROM %s WHERE proc_id = %lld", IV,
		 (long long)c.key);
	eq_i64("sorted groups: one row per key, bytes add up", direct_int(sql), 200 * 1000000000ll + N * (N - 1) / 2);
	/* the first interval's file 0, category 1: rows 5..9 */
	eq_i64("sorted groups: a key on adjacent rows", key_row(c.key, base, fk[0], 1), 35 * 1000 + 5);
	same_tables("sorted groups", c.key, d.key, "t_ms, layer, cat, bytes, calls, dur_ns, dt_ms");
	/* 14 intervals (the last of 25 rows: files 0 and 1), 3 categories each */
	snprintf(sql, sizeof sql, "SELECT count(*) FROM proc_intervals WHERE proc_id = %lld", (long long)c.key);
	eq_i64("sorted groups: proc_intervals, one row per time and category", direct_int(sql), 42);
}

/* A key handed over in two transactions (the daemon restarted, or a process's end in the
 * interval its statistics were just stored in): its figures add up and its first interval length
 * stays; a key new in the second keeps its own length. SQLite merges the process's row of the
 * interval (iostrata_merge) and keeps one row. */
static void check_key_twice(struct store *s, int64_t kb)
{
	struct store_proc p = proc(kb, 53, 3000, "", STORE_PROC_LIVE);
	int64_t fk[3] = {0};
	const int64_t t = T0 + 4 * DAY + 5000;
	int r = store_begin(s);
	r |= store_proc_put(s, &p);
	for (int f = 0; f < 3 && r == 0; f++) {
		char path[64];
		snprintf(path, sizeof path, "/twice/file%d", f);
		r |= store_file_key(s, path, &fk[f]);
	}
	const struct store_interval first[2] = {interval(t, p.key, fk[0], STORE_CAT_READ, 100),
						interval(t, p.key, fk[1], STORE_CAT_WRITE, 200)};
	r |= store_intervals_add(s, first, 2);
	r |= store_commit(s);
	ok_r("key twice: the first transaction", r, s);
	struct store_interval again[2] = {interval(t, p.key, fk[2], STORE_CAT_META, 0),
					  interval(t, p.key, fk[0], STORE_CAT_READ, 11)};
	again[0].dt_ms = again[1].dt_ms = 400;
	again[1].calls = 1;
	r = store_begin(s);
	r |= store_intervals_add(s, again, 2);
	r |= store_commit(s);
	ok_r("key twice: the second transaction", r, s);
	char sql[512];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE proc_id = %lld", IV, (long long)p.key);
	eq_i64("key twice: three keys", direct_int(sql), 3);
	eq_i64("key twice: the key given twice adds up", key_row(p.key, t, fk[0], STORE_CAT_READ), 111 * 1000 + 3);
	eq_i64("key twice: the other key as given", key_row(p.key, t, fk[1], STORE_CAT_WRITE), 200 * 1000 + 2);
	snprintf(sql, sizeof sql, "SELECT sum(CASE file_id WHEN %lld THEN dt_ms * 1000000 WHEN %lld THEN dt_ms * 1000"
		 " ELSE dt_ms END) FROM %s WHERE proc_id = %lld", (long long)fk[0], (long long)fk[1], IV, (long long)p.key);
	eq_i64("key twice: its first interval length stays, the new key's is its own", direct_int(sql),
	       1000 * 1000000 + 1000 * 1000 + 400);
	if (is_pg)
		return;
	snprintf(sql, sizeof sql, "SELECT stats = '[[%lld,1,0,111,3,100],[%lld,1,1,200,2,50],[%lld,1,2,0,2,50,400]]'"
		 " FROM intervals WHERE proc_id = %lld AND t_ms = %lld", (long long)fk[0], (long long)fk[1], (long long)fk[2],
		 (long long)p.key, (long long)t);
	eq_i64("key twice: one row, its entries in key order, the new key's length its own", direct_int(sql), 1);
}

/* An interval of one process with many files (2,000, on two layers): the view interval_stats
 * gives every row with its file's name and exact figures; SQLite keeps one row. */
static void check_many_files(struct store *s, int64_t kb)
{
	enum { NF = 2000 };
	static struct store_interval v[2 * NF];
	struct store_proc p = proc(kb, 55, 3000, "", STORE_PROC_LIVE);
	const int64_t t = T0 + 4 * DAY + 9000;
	int r = store_begin(s);
	r |= store_proc_put(s, &p);
	for (int f = 0; f < NF && r == 0; f++) {
		char path[64];
		int64_t key;
		snprintf(path, sizeof path, "/many/f%04d", f);
		r |= store_file_key(s, path, &key);
		v[2 * f] = interval(t, p.key, key, STORE_CAT_READ, f);
		v[2 * f + 1] = interval(t, p.key, key, STORE_CAT_WRITE, 2 * f);
		v[2 * f + 1].layer = 2;
		v[2 * f + 1].calls = 4;
	}
	r |= store_intervals_add(s, v, 2 * NF);
	r |= store_commit(s);
	ok_r("many files: 4,000 rows of one interval", r, s);
	char sql[512];
	snprintf(sql, sizeof sql, "SELECT count(*) * 1000000000000 + sum(bytes) FROM interval_stats WHERE pid = 55 AND t_ms = %lld",
		 (long long)t);
	eq_i64("many files: interval_stats, every row and its bytes", direct_int(sql),
	       2 * NF * INT64_C(1000000000000) + 3 * (int64_t)NF * (NF - 1) / 2);
	snprintf(sql, sizeof sql, "SELECT count(DISTINCT file) * 1000000 + sum(calls) * 100 + sum(layer) FROM interval_stats"
		 " WHERE pid = 55 AND category = 'write' AND file LIKE '/many/f%%'");
	eq_i64("many files: the writes' files, calls and layer", direct_int(sql), NF * 1000000 + NF * 4 * 100 + 2 * NF);
	snprintf(sql, sizeof sql, "SELECT sum(bytes_per_call) FROM interval_stats WHERE pid = 55 AND category = 'write'");
	/* (2 f) / 4, rounded down as the view divides */
	eq_i64("many files: bytes per call", direct_int(sql), (int64_t)(NF / 2) * (NF / 2 - 1));
	if (is_pg)
		return;
	snprintf(sql, sizeof sql, "SELECT count(*) * 1000000 + sum(json_array_length(stats)) FROM intervals WHERE proc_id = %lld",
		 (long long)p.key);
	eq_i64("many files: one row a process and interval, an entry a row", direct_int(sql), 1000000 + 2 * NF);
}

/* The beginning of a report: a short text cut where asked; a long one (packed by SQLite) given
 * from its first frames, the same bytes as the whole report's start, far fewer of them. */
/* A process put again inside a transaction (SQLite holds its row's update until the commit and
 * writes it with the window its rows give, one UPDATE): a read inside the transaction sees the
 * update, the last one given is stored, and the window holds the rows before and after the read. */
static void check_put_in_tx(struct store *s, int64_t kb, int64_t fk)
{
	struct store_proc p = proc(kb, 51, 3000, "", STORE_PROC_LIVE);
	int r = store_begin(s);
	r |= store_proc_put(s, &p);
	r |= store_commit(s);
	ok_r("put in a transaction: a process", r, s);
	int64_t t = T0 + 3 * DAY;
	struct store_proc q = p;
	q.cursor = "first";
	q.cursor_len = 5;
	struct store_interval iv = interval(t, p.key, fk, STORE_CAT_WRITE, 10);
	r = store_begin(s);
	r |= store_proc_put(s, &q);
	r |= store_interval_add(s, &iv);
	q.state = STORE_PROC_ENDED;
	q.end_ms = t + 1000;
	q.cursor = "second";
	q.cursor_len = 6;
	r |= store_proc_put(s, &q);
	iv.t_ms = t + 1000;
	r |= store_interval_add(s, &iv);
	ok_r("put in a transaction: two puts, two rows", r, s);
	int64_t key = 0;
	enum store_proc_state st = STORE_PROC_LIVE;
	ok_r("put in a transaction: found inside it", store_proc_find(s, "n1", 51, p.start_ns, &key, &st), s);
	eq_i64("put in a transaction: its last state, seen inside it", st, STORE_PROC_ENDED);
	iv.t_ms = t + 2000;
	ok_r("put in a transaction: a row after the read", store_interval_add(s, &iv), s);
	ok_r("put in a transaction: commit", store_commit(s), s);
	char sql[160];
	/* SQLite's schema 16 keeps a process's window and cursor in proc_cursors */
	const char *pc = is_pg ? "processes WHERE id" : "proc_cursors WHERE proc_id";
	snprintf(sql, sizeof sql, "SELECT first_ms FROM %s = %lld", pc, (long long)p.key);
	eq_i64("put in a transaction: window's first end", direct_int(sql), t);
	snprintf(sql, sizeof sql, "SELECT last_ms FROM %s = %lld", pc, (long long)p.key);
	eq_i64("put in a transaction: window's last end", direct_int(sql), t + 2000);
	snprintf(sql, sizeof sql, "SELECT length(cursor) FROM %s = %lld", pc, (long long)p.key);
	eq_i64("put in a transaction: the last cursor given", direct_int(sql), 6);
	snprintf(sql, sizeof sql, "SELECT end_ms FROM processes WHERE id = %lld AND state = %d", (long long)p.key,
		 (int)STORE_PROC_ENDED);
	eq_i64("put in a transaction: the last end and state given", direct_int(sql), t + 1000);
	/* a rollback forgets what was held */
	q.cursor = "third!!";
	q.cursor_len = 7;
	r = store_begin(s);
	r |= store_proc_put(s, &q);
	ok_r("put in a transaction: a put rolled back", r, s);
	store_rollback(s);
	snprintf(sql, sizeof sql, "SELECT length(cursor) FROM %s = %lld", pc, (long long)p.key);
	eq_i64("put in a transaction: a rollback keeps the stored cursor", direct_int(sql), 6);
}

/* Many processes put in one transaction, each with its rows (SQLite writes their cursors and
 * windows 32 to a statement, their ends and states 32 to one that changes only what changed):
 * every process's cursor, window, end and state as given, over two transactions, some processes
 * ending in the second, one with a cursor and no rows, one with rows and no cursor. */
static void check_puts_grouped(struct store *s, int64_t kb, int64_t fk)
{
	enum { NP = 75, PID0 = 800 };
	static struct store_proc p[NP];
	static char cur[NP][32];
	const int64_t t = T0 + 5 * DAY;
	int r = store_begin(s);
	for (int i = 0; i < NP; i++) {
		p[i] = proc(kb, PID0 + i, 3000, "", STORE_PROC_LIVE);
		r |= store_proc_put(s, &p[i]);
	}
	r |= store_commit(s);
	ok_r("grouped puts: the processes", r, s);
	for (int k = 0; k < 2; k++) {
		r = store_begin(s);
		for (int i = 0; i < NP; i++) {
			struct store_interval iv = interval(t + k * 10000, p[i].key, fk, STORE_CAT_WRITE, 100 + i);
			if (!(k == 1 && i == 40)) /* a cursor and no rows */
				r |= store_interval_add(s, &iv);
			if (k == 1 && i == 41) /* rows and no cursor */
				continue;
			snprintf(cur[i], sizeof cur[i], "cursor %d of %d", k, PID0 + i);
			p[i].cursor = cur[i];
			p[i].cursor_len = strlen(cur[i]);
			if (k == 1 && i % 7 == 3) {
				p[i].state = STORE_PROC_ENDED;
				p[i].end_ms = t + 10000 + i;
			}
			r |= store_proc_put(s, &p[i]);
		}
		r |= store_commit(s);
		ok_r(k ? "grouped puts: the second transaction" : "grouped puts: the first transaction", r, s);
	}
	/* SQLite's schema 16 keeps windows and cursors in proc_cursors, PostgreSQL in processes */
	const char *from = is_pg ? "processes p JOIN processes c ON c.id = p.id"
				 : "processes p JOIN proc_cursors c ON c.proc_id = p.id";
	char sql[1024];
	snprintf(sql, sizeof sql,
		 "SELECT count(*) FROM %s WHERE p.job_id = %lld AND p.pid >= %d AND p.pid < %d AND c.first_ms = %lld"
		 " AND c.last_ms = CASE p.pid - %d WHEN 40 THEN %lld ELSE %lld END"
		 " AND c.cursor = %s'cursor ' || CASE p.pid - %d WHEN 41 THEN 0 ELSE 1 END || ' of ' || p.pid%s"
		 " AND p.state = CASE (p.pid - %d) %% 7 WHEN 3 THEN 1 ELSE 0 END"
		 " AND p.end_ms = CASE (p.pid - %d) %% 7 WHEN 3 THEN %lld + p.pid - %d ELSE 0 END",
		 from, (long long)kb, PID0, PID0 + NP, (long long)t, PID0, (long long)t, (long long)(t + 10000),
		 is_pg ? "convert_to(" : "CAST(", PID0, is_pg ? ", 'UTF8')" : " AS BLOB)", PID0, PID0,
		 (long long)(t + 10000), PID0);
	eq_i64("grouped puts: every process's window, cursor, end and state as given", direct_int(sql), NP);
	snprintf(sql, sizeof sql, "SELECT count(*) FROM processes WHERE job_id = %lld AND pid >= %d AND pid < %d AND state = 1",
		 (long long)kb, PID0, PID0 + NP);
	eq_i64("grouped puts: the ones that ended", direct_int(sql), (NP + 3) / 7);
}

static void check_report_head(struct store *s, int64_t key)
{
	char *h = NULL;
	ok_r("job_report_head: a short report", store_job_report_head(s, key, 5, &h), s);
	eq_str("job_report_head: its first 5 bytes", h, "{\"job");
	free(h);
	h = NULL;
	ok_r("job_report_head: more than there is", store_job_report_head(s, key, 1000, &h), s);
	eq_str("job_report_head: all of it", h, "{\"job\":\"100\"}");
	free(h);

	/* 3 MiB of JSON, not repetitive enough to be one frame's worth */
	size_t len = (size_t)3 << 20;
	char *big = malloc(len + 1);
	check("job_report_head: memory", big != NULL, "malloc");
	if (!big)
		return;
	uint64_t x = 88172645463325252ull;
	size_t o = (size_t)snprintf(big, len, "{\"job\":{\"argv\":[\"a\"]},\"files\":[");
	while (o < len - 32) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		o += (size_t)snprintf(big + o, len - o, "%llu,", (unsigned long long)(x % 1000000));
	}
	memset(big + o, ' ', len - o);
	big[len - 2] = ']', big[len - 1] = '}', big[len] = 0;
	int fd = memfd_create("report", 0);
	check("job_report_head: a report file", fd >= 0 && write(fd, big, len) == (ssize_t)len, "memfd");
	ok_r("begin", store_begin(s), s);
	ok_r("job_report_put_fd: 3 MiB", store_job_report_put_fd(s, key, "job 100\n", fd, len), s);
	ok_r("commit", store_commit(s), s);
	close(fd);
	h = NULL;
	size_t want = 100000;
	ok_r("job_report_head: a long report", store_job_report_head(s, key, want, &h), s);
	size_t got = h ? strlen(h) : 0;
	check("job_report_head: at least what was asked", got >= want, "%zu bytes", got);
	check("job_report_head: not the whole report", got < want + ((size_t)1 << 20), "%zu bytes", got);
	check("job_report_head: the report's first bytes", h && !memcmp(h, big, got < len ? got : len), "differ");
	free(h);
	char *whole = NULL;
	ok_r("job_report: the long report whole", store_job_report(s, key, 1, &whole), s);
	check("job_report: the same bytes", whole && strlen(whole) == len && !memcmp(whole, big, len), "differ");
	free(whole);
	free(big);
	/* the short one back, for the checks that follow */
	ok_r("begin", store_begin(s), s);
	ok_r("job_report_put", store_job_report_put(s, key, "job 100\n  reads: 2\n", "{\"job\":\"100\"}"), s);
	ok_r("commit", store_commit(s), s);
}

static void check_report(struct store *s, int64_t ka, int64_t kb)
{
	const char *findings[] = {"{\"id\":\"small_writes\"}", "{\"id\":\"metadata\"}"};
	ok_r("begin", store_begin(s), s);
	ok_r("job_report_put", store_job_report_put(s, ka, "job 100\n  reads: 2\n", "{\"job\":\"100\"}"), s);
	ok_r("job_findings_put", store_job_findings_put(s, ka, findings, 2), s);
	ok_r("job_findings_put again (replaces)", store_job_findings_put(s, ka, findings + 1, 1), s);
	ok_r("commit", store_commit(s), s);
	char *text = NULL, *json = NULL, *none = (char *)"x";
	ok_r("job_report: text", store_job_report(s, ka, 0, &text), s);
	ok_r("job_report: json", store_job_report(s, ka, 1, &json), s);
	ok_r("job_report: none stored", store_job_report(s, kb, 0, &none), s);
	eq_str("job_report: the text", text, "job 100\n  reads: 2\n");
	eq_str("job_report: the JSON", json, "{\"job\":\"100\"}");
	check("job_report: NULL when none was stored", none == NULL, "got \"%s\"", none ? none : "");
	free(text);
	free(json);
	check_report_head(s, ka);
	eq_i64("findings: replaced, not added", direct_int("SELECT count(*) FROM findings"), 1);
	eq_i64("findings: the one kept is the second", direct_int("SELECT count(*) FROM findings WHERE finding LIKE '%metadata%'"), 1);
}

/* PostgreSQL keeps the newest batch's facts; SQLite (seq always 0 from the daemon) takes each. */
static void check_seq(struct store *s, int64_t ka)
{
	struct store_job j = job("300", "n9", 1000, "alice", 100);
	j.seq = 5;
	j.end_ms = 500;
	ok_r("begin", store_begin(s), s);
	ok_r("seq: job put at 5", store_job_put(s, &j), s);
	struct store_job late = j;
	late.seq = 3;
	late.end_ms = 300;
	ok_r("seq: job put at 3", store_job_put(s, &late), s);
	ok_r("commit", store_commit(s), s);
	struct jobs_seen c = jobs_of(s, (struct store_job_filter){.uid = STORE_ANY_UID, .job = "300"});
	eq_i64(is_pg ? "seq: an older batch does not overwrite a job" : "seq: sqlite takes every write", c.j[0].end_ms,
	       is_pg ? 500 : 300);
	late.seq = 0;
	late.end_ms = 301;
	ok_r("seq: job put at 0", store_job_put(s, &late), s);
	c = jobs_of(s, (struct store_job_filter){.uid = STORE_ANY_UID, .job = "300"});
	eq_i64("seq: 0 always writes", c.j[0].end_ms, 301);
	late.seq = 7;
	late.end_ms = 700;
	ok_r("seq: job put at 7", store_job_put(s, &late), s);
	late.seq = 6;
	late.end_ms = 600;
	ok_r("seq: job put at 6", store_job_put(s, &late), s);
	c = jobs_of(s, (struct store_job_filter){.uid = STORE_ANY_UID, .job = "300"});
	eq_i64(is_pg ? "seq: the highest batch's end stays" : "seq: sqlite, the last write's end", c.j[0].end_ms,
	       is_pg ? 700 : 600);

	struct store_proc p = proc(ka, 40, 1000, "", STORE_PROC_KILLED);
	p.seq = 5;
	p.end_ms = 40;
	ok_r("seq: a killed process", store_proc_put(s, &p), s);
	struct store_proc back = proc(ka, 40, 1000, "", STORE_PROC_LIVE);
	back.seq = 6;
	ok_r("seq: the same process put live at a later batch", store_proc_put(s, &back), s);
	int64_t key;
	enum store_proc_state st;
	ok_r("proc_find", store_proc_find(s, "n1", 40, p.start_ns, &key, &st), s);
	eq_i64(is_pg ? "seq: a killed process never goes back to live" : "seq: sqlite, the last state", st,
	       is_pg ? STORE_PROC_KILLED : STORE_PROC_LIVE);
	struct store_proc older = proc(ka, 40, 1000, "", STORE_PROC_ENDED);
	older.seq = 2;
	older.key = key;
	ok_r("seq: an older batch's state", store_proc_put(s, &older), s);
	ok_r("proc_find", store_proc_find(s, "n1", 40, p.start_ns, &key, &st), s);
	eq_i64(is_pg ? "seq: an older batch does not change a process" : "seq: sqlite, the last state", st,
	       is_pg ? STORE_PROC_KILLED : STORE_PROC_ENDED);
}

static int keep_csv_line(const char *csv, size_t len, int line, char *out, size_t outlen)
{
	const char *p = csv, *end = csv + len;
	for (int i = 0; i < line && p < end; i++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return -1;
		p = nl + 1;
	}
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	snprintf(out, outlen, "%.*s", (int)((nl ? nl : end) - p), p);
	return 0;
}

static void check_retention(struct store *s, const char *dir)
{
	struct store_node_filter d1 = {.since_ms = D1 - 60000, .until_ms = T0}, all = {0}; /* a minute starts before */
	struct secs_seen before = {0}, after = {0}, ubefore = {0}, uafter = {0};
	ok_r("node_secs before retention", store_node_secs(s, &d1, keep_sec, &before), s);
	ok_r("user_secs before retention", store_user_secs(s, 1000, &d1, keep_sec, &ubefore), s);
	eq_u64("retention: raw node-seconds of day 1", before.n, 2);
	uint64_t moved = 0;
	ok_r("retain", store_retain(s, T0, dir, 1000000, &moved), s);
	/* day 1: 3 intervals rows, 2 node-seconds, 1 device, 2 samples, 1 distribution, 2 runs */
	eq_u64("retain: raw rows moved", moved, 3 + 2 + 1 + 2 + 1 + 2);
	ok_r("node_secs after retention", store_node_secs(s, &d1, keep_sec, &after), s);
	ok_r("user_secs after retention", store_user_secs(s, 1000, &d1, keep_sec, &uafter), s);
	eq_u64("retention: node minutes of day 1", after.n, 2);
	eq_u64("retention: all are minute roll-ups", after.rows_60s, 2);
	eq_u64("retention: roll-up bytes read = raw", after.bytes_read, before.bytes_read);
	eq_u64("retention: roll-up bytes written = raw", after.bytes_written, before.bytes_written);
	eq_u64("retention: roll-up reads/writes/meta = raw", after.reads + after.writes + after.meta_ops,
	       before.reads + before.writes + before.meta_ops);
	eq_u64("retention: roll-up has no histogram", store_hist_used(after.ns[0].read_hist), 0);
	eq_u64("retention: user roll-up bytes = raw", uafter.bytes_read + uafter.bytes_written,
	       ubefore.bytes_read + ubefore.bytes_written);
	eq_u64("retention: user roll-up calls = raw", uafter.reads + uafter.writes + uafter.meta_ops,
	       ubefore.reads + ubefore.writes + ubefore.meta_ops);
	struct strs_seen dv = {0};
	ok_r("devices after retention", store_devices(s, &all, keep_device, &dv), s);
	eq_u64("retention: devices of day 2 stay", dv.n, 1);

	char path[512], *csv = NULL, err[256], line[256];
	size_t len = 0;
	snprintf(path, sizeof path, "%s/node_seconds-%lld-%lld.csv.zst", dir, (long long)(D1 + 1000),
		 (long long)(D1 + 62000));
	int r = store_archive_read(path, &csv, &len, err, sizeof err);
	check("retention: the node-seconds archive, named by its range", r == 0, "%s", err);
	if (r == 0) {
		keep_csv_line(csv, len, 0, line, sizeof line);
		eq_str("archive: first line", line, "# iostrata archive 1 node_seconds");
		keep_csv_line(csv, len, 2, line, sizeof line);
		eq_str("archive: a row", line, "1699913601000,1000,n1,1,100,200,10,20,3,\"0,3,0,100\",1");
		free(csv);
	}
	snprintf(path, sizeof path, "%s/intervals-%lld-%lld.csv.zst", dir, (long long)(D1 + 1000), (long long)(D1 + 62000));
	r = store_archive_read(path, &csv, &len, err, sizeof err);
	check("retention: the intervals archive", r == 0, "%s", err);
	if (r == 0) {
		keep_csv_line(csv, len, 2, line, sizeof line);
		eq_str("archive: an interval row, names not keys", line,
		       "1699913601000,1000,100,n1,alice,1000,10,2,/bin/app,/data/in.dat,1,read,200,4,100");
		keep_csv_line(csv, len, 3, line, sizeof line);
		eq_str("archive: a quoted file name", line,
		       "1699913601000,1000,100,n1,alice,1000,10,2,/bin/app,\"/data/out,\"\"q\"\".dat\",1,write,30,2,50");
		free(csv);
	}
	snprintf(path, sizeof path, "%s/runs-%lld-%lld.csv.zst", dir, (long long)(D1 + 1000), (long long)(D1 + 1000));
	r = store_archive_read(path, &csv, &len, err, sizeof err);
	check("retention: the runs archive", r == 0, "%s", err);
	if (r == 0) {
		char want[512];
		keep_csv_line(csv, len, 1, line, sizeof line);
		eq_str("archive: the runs' columns", line, STORE_ARCHIVE_RUNS);
		keep_csv_line(csv, len, 2, line, sizeof line);
		snprintf(want, sizeof want,
			 "1699913601000,100,n1,1000,10,2,77,0,/data/in.dat,1,%d,4096,4096,8,1699913600500000000,"
			 "1699913600900000000,300000000,30000000,0",
			 LOG_OP_WRITE);
		eq_str("archive: a run, names not keys", line, want);
		keep_csv_line(csv, len, 3, line, sizeof line);
		snprintf(want, sizeof want,
			 "1699913601000,100,n1,1000,10,2,77,1,/data/in.dat,1,%d,-1,0,1,1699913600500000000,"
			 "1699913600900000000,300000000,30000000,%d",
			 LOG_OP_CLOSE, -EIO);
		eq_str("archive: a failed close, no offset", line, want);
		free(csv);
	}
	eq_i64("retention: day 1's runs gone, day 2's stay", direct_int("SELECT count(*) FROM runs"), 2);
	snprintf(path, sizeof path, "%s/samples-%lld-%lld.csv.zst", dir, (long long)(D1 + 1000), (long long)(D1 + 1000));
	r = store_archive_read(path, &csv, &len, err, sizeof err);
	check("retention: the samples archive", r == 0, "%s", err);
	if (r == 0) {
		eq_u64("archive: samples, a quoted field with a newline", strstr(csv, "\"/mnt/a\tb\\c\nd\"") != NULL, 1);
		free(csv);
	}
	if (is_pg)
		eq_i64("retention: day 1's partitions dropped, day 2's and 3's stay",
		       direct_int("SELECT count(*) FROM pg_inherits WHERE inhparent IN ('intervals'::regclass,"
				  " 'node_seconds'::regclass)"),
		       4);
	moved = 1;
	ok_r("retain again", store_retain(s, T0, dir, 1000000, &moved), s);
	eq_u64("retain again: nothing left to move", moved, 0);
}


/* ---- minute roll-ups kept as rows arrive (docs/STORE.md, "Roll-ups and windows") ---- */

/* Where the raw rows start (retention's cut, after a minute's roll-up). */
#define RAW_SPLIT "coalesce((SELECT upto_ms FROM rollup WHERE name = 'raw:intervals'), 0)"

/* Ten days after T0, a minute's start: a range no other check writes. */
#define RM (T0 + 10 * DAY - T0 % 60000 + 60000)

/* One interval of job 900's process (pid 90) and its node (n9): 4 rows, a node-second. */
static int rollup_interval(struct store *s, int64_t pk, int64_t f1, int64_t f2, int64_t t, int64_t k)
{
	struct store_interval rd = interval(t, pk, f1, STORE_CAT_READ, 100 + k), wr = interval(t, pk, f2, STORE_CAT_WRITE, 7 * k);
	struct store_interval meta = interval(t, pk, f1, STORE_CAT_META, 0), sys = rd;
	sys.layer = 2;
	struct store_node_sec ns = node_sec(t, 1, 10 + (uint64_t)k);
	ns.host = "n9";
	int r = store_begin(s);
	if (r == 0 && (r = store_interval_add(s, &rd)) == 0 && (r = store_interval_add(s, &wr)) == 0 &&
	    (r = store_interval_add(s, &meta)) == 0 && (r = store_interval_add(s, &sys)) == 0 &&
	    (r = store_node_sec_add(s, &ns)) == 0)
		r = store_commit(s);
	else
		store_rollback(s);
	return r;
}

/* The minute roll-ups of [RM + from, RM + to) against the raw rows of the same minutes: the
 * differences of every sum (0 when equal), and the roll-ups' own bytes. */
static void rollup_compare(const char *what, int64_t from, int64_t to, int64_t want_bytes)
{
	char sql[1024], name[160];
	snprintf(sql, sizeof sql,
		 "SELECT (SELECT coalesce(sum(bytes), 0) + coalesce(sum(calls), 0) * 1000000 + coalesce(sum(dur_ns), 0) * 7"
		 " FROM %s WHERE t_ms >= %lld AND t_ms < %lld) - (SELECT coalesce(sum(bytes), 0) +"
		 " coalesce(sum(calls), 0) * 1000000 + coalesce(sum(dur_ns), 0) * 7 FROM %s WHERE t_ms >= %lld AND t_ms < %lld)",
		 IVM, (long long)(RM + from), (long long)(RM + to), IV, (long long)(RM + from), (long long)(RM + to));
	snprintf(name, sizeof name, "%s: interval minutes = their raw rows", what);
	eq_i64(name, direct_int(sql), 0);
	snprintf(sql, sizeof sql, "SELECT coalesce(sum(bytes), 0) FROM %s WHERE t_ms >= %lld AND t_ms < %lld", IVM,
		 (long long)(RM + from), (long long)(RM + to));
	snprintf(name, sizeof name, "%s: interval minutes hold their bytes", what);
	eq_i64(name, direct_int(sql), want_bytes);
	if (!is_pg) { /* SQLite's per-process minute sums (schema 15), what a series in minutes reads */
		static const char *const both[2] = {
			"SELECT count(*) FROM (SELECT proc_id, t_ms, layer, cat, sum(bytes), sum(calls), sum(dur_ns)"
			" FROM interval_minute_rows GROUP BY 1, 2, 3, 4 EXCEPT SELECT proc_id, t_ms, layer, cat, bytes, calls,"
			" dur_ns FROM proc_minutes)",
			"SELECT count(*) FROM (SELECT proc_id, t_ms, layer, cat, bytes, calls, dur_ns FROM proc_minutes EXCEPT"
			" SELECT proc_id, t_ms, layer, cat, sum(bytes), sum(calls), sum(dur_ns) FROM interval_minute_rows"
			" GROUP BY 1, 2, 3, 4)"};
		for (int i = 0; i < 2; i++) {
			snprintf(name, sizeof name, "%s: proc_minutes: %s", what,
				 i ? "every row is a minute's sum" : "every minute's sum has its row");
			eq_i64(name, direct_int(both[i]), 0);
		}
	}
	snprintf(sql, sizeof sql,
		 "SELECT (SELECT coalesce(sum(bytes_read + 3 * bytes_written + 5 * reads + 7 * writes + 11 * meta_ops), 0)"
		 " FROM node_minutes WHERE host = 'n9' AND t_ms >= %lld AND t_ms < %lld) - (SELECT coalesce(sum(bytes_read +"
		 " 3 * bytes_written + 5 * reads + 7 * writes + 11 * meta_ops), 0) FROM node_seconds WHERE host = 'n9'"
		 " AND t_ms >= %lld AND t_ms < %lld)",
		 (long long)(RM + from), (long long)(RM + to), (long long)(RM + from), (long long)(RM + to));
	snprintf(name, sizeof name, "%s: node minutes = their node-seconds", what);
	eq_i64(name, direct_int(sql), 0);
}

/* proc_intervals (schema 12) against the raw rows it sums over files, from where the raw rows
 * start ('raw:intervals'): no row of either without its twin, every sum equal, none before it. */
static void proc_sums_compare(const char *what)
{
	static const char *const sql[] = {
		"SELECT count(*) FROM (SELECT proc_id, t_ms, layer, cat, sum(bytes), sum(calls), sum(dur_ns) FROM %s"
		" WHERE t_ms >= " RAW_SPLIT " GROUP BY 1, 2, 3, 4 EXCEPT SELECT proc_id, t_ms, layer, cat, bytes, calls, dur_ns"
		" FROM proc_intervals) x",
		"SELECT count(*) FROM (SELECT proc_id, t_ms, layer, cat, bytes, calls, dur_ns FROM proc_intervals EXCEPT"
		" SELECT proc_id, t_ms, layer, cat, sum(bytes), sum(calls), sum(dur_ns) FROM %s WHERE t_ms >= " RAW_SPLIT
		" GROUP BY 1, 2, 3, 4) x",
		"SELECT count(*) FROM proc_intervals WHERE t_ms < " RAW_SPLIT,
	};
	static const char *const says[] = {"every raw sum has its row", "every row is a raw sum",
					   "none before where the raw rows start"};
	for (size_t i = 0; i < 3; i++) {
		char name[200], q[1024];
		snprintf(name, sizeof name, "%s: proc_intervals: %s", what, says[i]);
		snprintf(q, sizeof q, sql[i], IV);
		eq_i64(name, direct_int(q), 0);
	}
}

/* A job's series per minute summed here from its raw rows (every interval), to compare with the
 * store's own at a resolution of a minute (read from the roll-ups). */
struct minutes_seen {
	struct store_series_point p[32];
	size_t n;
};

static int keep_minute(const struct store_series_point *pt, void *ctx)
{
	struct minutes_seen *x = ctx;
	int64_t m = pt->t_ms / 60000 * 60000;
	size_t i;
	for (i = 0; i < x->n && (x->p[i].t_ms != m || x->p[i].layer != pt->layer); i++)
		;
	if (i == x->n) {
		if (x->n == 32)
			return 1;
		x->p[x->n++] = (struct store_series_point){.t_ms = m, .host = "", .rank = -1, .layer = pt->layer};
	}
	x->p[i].bytes_read += pt->bytes_read;
	x->p[i].bytes_written += pt->bytes_written;
	x->p[i].reads += pt->reads;
	x->p[i].writes += pt->writes;
	x->p[i].meta_ops += pt->meta_ops;
	return 0;
}

static void check_series_minutes(struct store *s, int64_t key, const char *what)
{
	struct minutes_seen m = {0};
	struct series_seen raw = {{0}, 0}, minutes = {{0}, 0};
	char name[160];
	snprintf(name, sizeof name, "%s: the series, every interval", what);
	ok_r(name, store_job_series(s, key, STORE_SERIES_LAYER, 0, keep_minute, &m), s);
	for (size_t i = 0; i < m.n; i++)
		keep_point(&m.p[i], &raw);
	snprintf(name, sizeof name, "%s: the series in minutes (roll-ups)", what);
	ok_r(name, store_job_series(s, key, STORE_SERIES_LAYER, 60000, keep_point, &minutes), s);
	snprintf(name, sizeof name, "%s: the series in minutes = its intervals summed per minute", what);
	eq_str(name, minutes.text, raw.text);
}

struct hosts_seen {
	char text[256];
};

static int keep_host(const char *host, int64_t first_ms, int64_t last_ms, void *ctx)
{
	struct hosts_seen *x = ctx;
	size_t n = strlen(x->text);
	snprintf(x->text + n, sizeof x->text - n, "%s%s %lld-%lld", n ? ";" : "", host, (long long)first_ms,
		 (long long)last_ms);
	return 0;
}

static void check_rollups(void)
{
	struct store *s = NULL;
	char err[512];
	int64_t pk = 0, f1 = 0, f2 = 0;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		/* the daemon: minute 0 closed by a row of minute 1, then two rows of minute 1, then
		 * SIGKILL (nothing flushed, nothing closed) */
		if (store_open(url, STORE_CREATE, &s, err, sizeof err) < 0)
			_exit(3);
		struct store_job j = job("900", "n9", 1000, "alice", RM);
		struct store_proc p = proc(0, 90, 1000, "", STORE_PROC_LIVE);
		p.host = "n9";
		if (store_begin(s) || store_job_put(s, &j) || (p.job_key = j.key, store_proc_put(s, &p)) ||
		    store_file_key(s, "/data/r1", &f1) || store_file_key(s, "/data/r2", &f2) || store_commit(s))
			_exit(4);
		for (int64_t k = 1; k <= 5; k++)
			if (rollup_interval(s, p.key, f1, f2, RM + k * 1000, k))
				_exit(5);
		for (int64_t k = 61; k <= 63; k++)
			if (rollup_interval(s, p.key, f1, f2, RM + k * 1000, k))
				_exit(6);
		raise(SIGKILL);
		_exit(7);
	}
	int st = 0;
	check("roll-ups: the writer was SIGKILLed mid-minute", pid > 0 && waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
	      WTERMSIG(st) == SIGKILL, "status %#x", st);
	/* an interval k moves 2 x (100 + k) bytes read (two layers) and 7 k written */
	rollup_compare("roll-ups after SIGKILL, minute 0 (closed)", 0, 60000, 5 * 200 + 9 * (1 + 2 + 3 + 4 + 5));
	proc_sums_compare("roll-ups after SIGKILL");
	char q[160];
	snprintf(q, sizeof q, "SELECT count(*) FROM %s WHERE t_ms = %lld", IVM, (long long)(RM + 60000));
	eq_i64("roll-ups after SIGKILL: minute 1 not rolled up yet", direct_int(q), 0);
	if (!ok_r("roll-ups: reopened", store_open(url, STORE_CREATE, &s, err, sizeof err), NULL))
		return;
	enum store_proc_state ps;
	ok_r("roll-ups: the process", store_proc_find(s, "n9", 90, 1000090, &pk, &ps), s);
	struct store_job_filter f = {.uid = STORE_ANY_UID, .job = "900"};
	struct jobs_seen js = jobs_of(s, f);
	ok_r("roll-ups: its files", store_file_key(s, "/data/r1", &f1) | store_file_key(s, "/data/r2", &f2), s);
	/* the restarted daemon: the rest of minute 1, then minute 2 closes it */
	for (int64_t k = 64; k <= 66; k++)
		ok_r("roll-ups: an interval after the restart", rollup_interval(s, pk, f1, f2, RM + k * 1000, k), s);
	ok_r("roll-ups: minute 2", rollup_interval(s, pk, f1, f2, RM + 121000, 121), s);
	rollup_compare("roll-ups after the restart, minute 1", 60000, 120000, 6 * 200 + 9 * (61 + 62 + 63 + 64 + 65 + 66));
	if (js.n == 1)
		check_series_minutes(s, js.j[0].key, "roll-ups after the restart");
	/* a late row: its minute was closed; the roll-up grows by it */
	ok_r("roll-ups: a late interval", rollup_interval(s, pk, f1, f2, RM + 6000, 6), s);
	rollup_compare("roll-ups after a late row, minute 0", 0, 60000, 6 * 200 + 9 * (1 + 2 + 3 + 4 + 5 + 6));
	proc_sums_compare("roll-ups after a late row");
	/* a late node-second that replaces one: the minute changes by the difference */
	struct store_node_sec ns = node_sec(RM + 3000, 1, 999);
	ns.host = "n9";
	ok_r("roll-ups: a node-second given again", store_begin(s) | store_node_sec_add(s, &ns) | store_commit(s), s);
	rollup_compare("roll-ups after a node-second replaced", 0, 60000, 6 * 200 + 9 * 21);
	struct hosts_seen hs = {0};
	struct store_node_filter n9 = {.host = "n9"};
	ok_r("node_hosts", store_node_hosts(s, &n9, keep_host, &hs), s);
	snprintf(q, sizeof q, "n9 %lld-%lld", (long long)(RM + 1000), (long long)(RM + 121000));
	eq_str("node_hosts: the host, its first and last second", hs.text, q);
	/* a range: the first and last second in it, every host (one here) */
	struct store_node_filter nr = {.since_ms = RM + 7000, .until_ms = RM + 65000};
	memset(&hs, 0, sizeof hs);
	ok_r("node_hosts in a range", store_node_hosts(s, &nr, keep_host, &hs), s);
	snprintf(q, sizeof q, "n9 %lld-%lld", (long long)(RM + 61000), (long long)(RM + 64000));
	eq_str("node_hosts in a range: its first and last second in it", hs.text, q);
	nr.until_ms = RM + 60000;
	memset(&hs, 0, sizeof hs);
	ok_r("node_hosts in an empty range", store_node_hosts(s, &nr, keep_host, &hs), s);
	eq_str("node_hosts in an empty range: no host", hs.text, "");
	eq_u64("roll-ups: job 900 found", js.n, 1);
	if (js.n == 1)
		check_series_minutes(s, js.j[0].key, "roll-ups after a late row");
	/* retention takes minute 0's raw rows: the host's first time is then its minute's start */
	uint64_t moved = 0;
	ok_r("roll-ups: retention of minute 0", store_retain(s, RM + 60000, NULL, 1000000, &moved), s);
	proc_sums_compare("roll-ups after retention of minute 0");
	char rq[160];
	snprintf(rq, sizeof rq, "SELECT count(*) FROM proc_intervals WHERE t_ms >= %lld AND t_ms < %lld", (long long)RM,
		 (long long)(RM + 60000));
	eq_i64("roll-ups after retention: minute 0's per-process rows gone", direct_int(rq), 0);
	snprintf(rq, sizeof rq, "SELECT count(*) FROM proc_intervals WHERE t_ms >= %lld", (long long)(RM + 60000));
	/* minute 1: 6 intervals, minute 2: 1; each 4 rows of 2 layers and 3 categories summed over
	 * its two files: (layer 1: read, write, metadata) + (layer 2: read) */
	eq_i64("roll-ups after retention: the later minutes' per-process rows kept", direct_int(rq), 7 * 4);
	if (js.n == 1)
		check_series_minutes(s, js.j[0].key, "roll-ups after retention");
	memset(&hs, 0, sizeof hs);
	ok_r("node_hosts after retention", store_node_hosts(s, &n9, keep_host, &hs), s);
	snprintf(q, sizeof q, "n9 %lld-%lld", (long long)RM, (long long)(RM + 121000));
	eq_str("node_hosts after retention: the first minute's start, the last second", hs.text, q);
	store_close(s);
}

/* Many keys in several open minutes at once: each minute's table grown past its first size, the
 * next minute's made at the size of the last one closed, two minutes closed by one commit, a
 * rollback between (the open minutes made again from the store): every minute = its raw rows. */
#define WIDE_FILES 3000
static int wide_minute(struct store *s, int64_t pk, const int64_t *fk, int64_t t, unsigned cat, int64_t mul, int commit)
{
	int r = store_begin(s);
	for (int64_t i = 0; i < WIDE_FILES && r == 0; i++) {
		struct store_interval iv = interval(t, pk, fk[i], cat, mul * (i + 1));
		r = store_interval_add(s, &iv);
	}
	if (r == 0 && commit)
		return store_commit(s);
	store_rollback(s);
	return r;
}

static void check_rollups_wide(void)
{
	struct store *s = NULL;
	char err[512], path[64];
	static int64_t fk[WIDE_FILES];
	if (!ok_r("wide roll-ups: opened", store_open(url, STORE_CREATE, &s, err, sizeof err), NULL))
		return;
	/* job 900's process (check_rollups): store_pg.sh counts the jobs this program leaves */
	struct store_proc p = {0};
	enum store_proc_state ps;
	int r = store_proc_find(s, "n9", 90, 1000090, &p.key, &ps);
	if (r == 0 && (r = store_begin(s)) == 0)
		for (int i = 0; i < WIDE_FILES && r == 0; i++) {
			snprintf(path, sizeof path, "/wide/f%04d", i);
			r = store_file_key(s, path, &fk[i]);
		}
	if (r == 0)
		r = store_commit(s);
	if (!ok_r("wide roll-ups: a process and its files", r, s))
		return;
	/* minutes 3 and 4 in one transaction: 6,000 open entries, their tables grown from 4,096 */
	r = store_begin(s);
	for (int64_t m = 3; m <= 4 && r == 0; m++)
		for (int64_t i = 0; i < WIDE_FILES && r == 0; i++) {
			struct store_interval iv = interval(RM + m * 60000 + 1000, p.key, fk[i], STORE_CAT_WRITE, i + 1);
			r = store_interval_add(s, &iv);
		}
	if (r == 0)
		r = store_commit(s);
	ok_r("wide roll-ups: minutes 3 and 4 in one transaction", r, s);
	/* minute 5 (written, then read: 6,000 entries) closes both */
	ok_r("wide roll-ups: minute 5 written", wide_minute(s, p.key, fk, RM + 5 * 60000 + 1000, STORE_CAT_WRITE, 2, 1), s);
	ok_r("wide roll-ups: minute 5 read", wide_minute(s, p.key, fk, RM + 5 * 60000 + 2000, STORE_CAT_READ, 3, 1), s);
	/* minute 6 rolled back, then given again; minute 7 closes 5 and 6 */
	ok_r("wide roll-ups: minute 6 rolled back", wide_minute(s, p.key, fk, RM + 6 * 60000 + 1000, STORE_CAT_WRITE, 1000, 0), s);
	ok_r("wide roll-ups: minute 6", wide_minute(s, p.key, fk, RM + 6 * 60000 + 1000, STORE_CAT_WRITE, 5, 1), s);
	ok_r("wide roll-ups: minute 7", wide_minute(s, p.key, fk, RM + 7 * 60000 + 1000, STORE_CAT_META, 0, 1), s);
	const int64_t sum = (int64_t)WIDE_FILES * (WIDE_FILES + 1) / 2;
	rollup_compare("wide roll-ups, minutes 3 and 4", 180000, 300000, 2 * sum);
	rollup_compare("wide roll-ups, minute 5", 300000, 360000, 5 * sum);
	rollup_compare("wide roll-ups, minute 6", 360000, 420000, 5 * sum);
	char q[200];
	snprintf(q, sizeof q, "SELECT count(*) FROM %s WHERE t_ms >= %lld AND t_ms < %lld", IVM, (long long)(RM + 180000),
		 (long long)(RM + 420000));
	eq_i64("wide roll-ups: one minute row per file, category and minute", direct_int(q), 5 * WIDE_FILES);
	proc_sums_compare("wide roll-ups");
	store_close(s);
}

static void check_newer(void)
{
	struct store *s = NULL;
	char err[512];
	int64_t set = direct_int(is_pg ? "UPDATE schema_version SET version = 99" : "PRAGMA user_version = 99");
	eq_i64("newer schema: set", set, 0);
	int r = store_open(url, STORE_CREATE, &s, err, sizeof err);
	eq_i64("newer schema: refused with -EPROTO", r, -EPROTO);
	check("newer schema: one line that says so", strstr(err, "newer") && !strchr(err, '\n'), "got \"%s\"", err);
	store_close(s);
	direct_int(is_pg ? "UPDATE schema_version SET version = " STR(STORE_SCHEMA_VERSION)
			 : "PRAGMA user_version = " STR(STORE_SQLITE_SCHEMA_VERSION));
	r = store_open(url, STORE_READONLY, &s, err, sizeof err);
	check("schema back at this version: opens read-only", r == 0, "%s", err);
	store_close(s);
}

/* A store made back into schema old: refused read-only, migrated by a read-write open to this
 * program's version. */
static void reopen_migrates(const char *what, int old)
{
	struct store *s = NULL;
	char err[512], name[160];
	int r = store_open(url, STORE_READONLY, &s, err, sizeof err);
	snprintf(name, sizeof name, "%s: a read-only open of schema %d is refused", what, old);
	eq_i64(name, r, -EPROTO);
	store_close(s);
	s = NULL;
	r = store_open(url, STORE_CREATE, &s, err, sizeof err);
	snprintf(name, sizeof name, "%s: a read-write open migrates", what);
	check(name, r == 0, "%s", err);
	store_close(s);
	snprintf(name, sizeof name, "%s: the version", what);
	eq_i64(name, direct_int(is_pg ? "SELECT max(version) FROM schema_version" : "PRAGMA user_version"),
	       is_pg ? STORE_SCHEMA_VERSION : STORE_SQLITE_SCHEMA_VERSION);
}

/* Every series point of a job (any resolution) folded into one number. */
static int hash_point(const struct store_series_point *pt, void *ctx)
{
	uint64_t *h = ctx;
	const uint64_t v[] = {(uint64_t)pt->t_ms, (uint64_t)pt->rank, pt->layer, pt->bytes_read, pt->bytes_written,
			      pt->reads, pt->writes, pt->meta_ops, (uint64_t)pt->dt_ms};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		*h = (*h ^ v[i]) * 0x100000001b3ull;
	for (const char *c = pt->host; c && *c; c++)
		*h = (*h ^ (unsigned char)*c) * 0x100000001b3ull;
	return 0;
}

/* The store opened read-only (NULL, printed, on an error). */
static struct store *open_ro(void)
{
	struct store *s = NULL;
	char err[512];
	if (store_open(url, STORE_READONLY, &s, err, sizeof err) < 0) {
		printf("# %s\n", err);
		store_close(s);
		return NULL;
	}
	return s;
}

/* The series of every job at every interval, by minute and by hour and rank, hashed (0 on an error). */
static uint64_t series_hash(void)
{
	uint64_t h = 0xcbf29ce484222325ull;
	struct store *s = open_ro();
	if (!s)
		return 0;
	int64_t n = direct_int("SELECT max(id) FROM jobs");
	for (int64_t k = 1; k <= n; k++)
		if (store_job_series(s, k, STORE_SERIES_LAYER, 0, hash_point, &h) < 0 ||
		    store_job_series(s, k, STORE_SERIES_LAYER, 60000, hash_point, &h) < 0 ||
		    store_job_series(s, k, STORE_SERIES_RANK, 3600000, hash_point, &h) < 0) {
			printf("# %s\n", store_error(s));
			h = 0;
			break;
		}
	store_close(s);
	return h;
}

/* Each of n (name, query) pairs: the query's number is 0, checked as "WHAT: name". */
static void each_zero(const char *what, const char *const (*q)[2], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char name[160];
		snprintf(name, sizeof name, "%s: %s", what, q[i][0]);
		eq_i64(name, direct_int(q[i][1]), 0);
	}
}

/* Schema 15's migration (SQLite: one row a process and interval) on this program's rows made back
 * into schema 14's form, an entry of another interval length among them: the view interval_stats
 * and the minutes give the same rows as schema 14's tables did, every series is the same, and
 * each packed row is the text the writer made (its entries in key order: what the archive walks),
 * but the row whose entry was given another length. */
static void check_migration_15(void)
{
	if (is_pg)
		return;
	uint64_t before = series_hash();
	check("migration 15: the series before", before != 0, "none");
	eq_i64("migration 15: the writer's rows kept",
	       direct_int("CREATE TABLE m15_rows AS SELECT t_ms, proc_id, dt_ms, stats FROM intervals"), 0);
	eq_i64("migration 15: back to schema 14", direct_sqlite_back_to_14(url), 0);
	/* the last entry of a row given another interval length than its row's others */
	eq_i64("migration 15: an entry of its own length",
	       direct_int("UPDATE intervals SET dt_ms = dt_ms + 500 WHERE (t_ms, proc_id, file_id, layer, cat) ="
			  " (SELECT t_ms, proc_id, file_id, layer, cat FROM intervals WHERE (t_ms, proc_id) IN"
			  " (SELECT t_ms, proc_id FROM intervals GROUP BY 1, 2 HAVING count(*) > 3)"
			  " ORDER BY t_ms, proc_id, file_id DESC, layer DESC, cat DESC LIMIT 1)"),
	       0);
	eq_i64("migration 15: schema 14's view kept",
	       direct_int("CREATE TABLE m15_stats AS SELECT * FROM interval_stats"), 0);
	eq_i64("migration 15: schema 14's minutes kept",
	       direct_int("CREATE TABLE m15_minutes AS SELECT * FROM intervals_minute"), 0);
	int64_t rows = direct_int("SELECT count(*) FROM m15_stats"), minutes = direct_int("SELECT count(*) FROM m15_minutes");
	check("migration 15: rows of both", rows > 1000 && minutes > 1000, "%lld, %lld", (long long)rows, (long long)minutes);
	reopen_migrates("migration 15", 14);
	static const char *const same[][2] = {
		{"interval_stats: every row of schema 14's", "SELECT count(*) FROM (SELECT * FROM m15_stats EXCEPT SELECT * FROM interval_stats)"},
		{"interval_stats: no other row", "SELECT count(*) FROM (SELECT * FROM interval_stats EXCEPT SELECT * FROM m15_stats)"},
		{"interval_stats: as many rows", "SELECT (SELECT count(*) FROM interval_stats) - (SELECT count(*) FROM m15_stats)"},
		{"minutes: every row of schema 14's", "SELECT count(*) FROM (SELECT * FROM m15_minutes EXCEPT SELECT * FROM interval_minute_rows)"},
		{"minutes: no other row", "SELECT count(*) FROM (SELECT * FROM interval_minute_rows EXCEPT SELECT * FROM m15_minutes)"},
		{"minutes: as many rows", "SELECT (SELECT count(*) FROM interval_minute_rows) - (SELECT count(*) FROM m15_minutes)"},
		{"one row a process and interval", "SELECT (SELECT count(*) FROM intervals) - (SELECT count(*) FROM m15_rows)"},
		{"each row the writer's text but the one given another length",
		 "SELECT count(*) - 1 FROM (SELECT * FROM m15_rows EXCEPT SELECT t_ms, proc_id, dt_ms, stats FROM intervals)"},
		{"that row's entry keeps its length, as a seventh number",
		 "SELECT (SELECT count(*) FROM intervals i, json_each(i.stats) e WHERE json_array_length(e.value) = 7) -"
		 " (SELECT count(*) FROM m15_rows i, json_each(i.stats) e WHERE json_array_length(e.value) = 7) - 1"},
	};
	each_zero("migration 15", same, sizeof same / sizeof same[0]);
	eq_i64("migration 15: every series the same", (int64_t)(series_hash() == before), 1);
	for (const char *t = "m15_rows\0m15_stats\0m15_minutes\0"; *t; t += strlen(t) + 1) {
		char q[64];
		snprintf(q, sizeof q, "DROP TABLE %s", t);
		direct_int(q);
	}
}

/* Schema 16's migration (SQLite: the processes' cursors and windows in proc_cursors) on this program's
 * store made back into schema 15's form: every process's cursor (byte for byte) and window move,
 * the processes' rows lose the three columns, the open processes read back with their cursors,
 * and every series is the same. */
static int keep_open(const struct store_proc *p, void *ctx)
{
	uint64_t *h = ctx;
	*h = (*h ^ (uint64_t)p->key) * 0x100000001b3ull;
	for (size_t i = 0; i < p->cursor_len; i++)
		*h = (*h ^ ((const unsigned char *)p->cursor)[i]) * 0x100000001b3ull;
	*h = (*h ^ p->cursor_len) * 0x100000001b3ull;
	return 0;
}

static uint64_t open_hash(void)
{
	uint64_t h = 0xcbf29ce484222325ull;
	struct store *s = open_ro();
	if (!s)
		return 0;
	if (store_procs_open(s, "n1", keep_open, &h) < 0 || store_procs_open(s, "n2", keep_open, &h) < 0) {
		printf("# %s\n", store_error(s));
		h = 0;
	}
	store_close(s);
	return h;
}

static void check_migration_16(void)
{
	if (is_pg)
		return;
	uint64_t before = series_hash(), open_before = open_hash();
	check("migration 16: the series before", before != 0, "none");
	eq_i64("migration 16: the cursors and windows kept",
	       direct_int("CREATE TABLE m16 AS SELECT proc_id, first_ms, last_ms, cursor FROM proc_cursors"), 0);
	check("migration 16: windows and cursors to move",
	      direct_int("SELECT count(*) FROM m16 WHERE last_ms > 0") > 0 &&
		      direct_int("SELECT count(*) FROM m16 WHERE length(cursor) > 0") > 0,
	      "none");
	eq_i64("migration 16: back to schema 15", direct_sqlite_back_to_15(url), 0);
	eq_i64("migration 16: schema 15's rows hold them",
	       direct_int("SELECT count(*) FROM (SELECT id, first_ms, last_ms, cursor FROM processes EXCEPT"
			  " SELECT * FROM m16)"),
	       0);
	reopen_migrates("migration 16", 15);
	static const char *const same[][2] = {
		{"every process's row", "SELECT count(*) FROM (SELECT * FROM m16 EXCEPT SELECT * FROM proc_cursors)"},
		{"no other row", "SELECT count(*) FROM (SELECT * FROM proc_cursors EXCEPT SELECT * FROM m16)"},
		{"a row a process", "SELECT (SELECT count(*) FROM processes) - (SELECT count(*) FROM proc_cursors)"},
		{"the processes' rows without them",
		 "SELECT count(*) FROM pragma_table_info('processes') WHERE name IN ('cursor', 'first_ms', 'last_ms')"},
	};
	each_zero("migration 16", same, sizeof same / sizeof same[0]);
	eq_i64("migration 16: the open processes and their cursors the same", (int64_t)(open_hash() == open_before), 1);
	eq_i64("migration 16: every series the same", (int64_t)(series_hash() == before), 1);
	direct_int("DROP TABLE m16");
}

/* The timed requests' migration (SQLite's 17, PostgreSQL's 15) on a store made back into the
 * schema before it: its distributions kept, each with every request timed, as every record before
 * it was (one row added first that said otherwise, which the old schema could not keep). */
static void check_migration_timed(void)
{
	const char *what = is_pg ? "migration 15 (timed)" : "migration 17";
	char name[160];
	struct store *s = NULL;
	char err[512];
	int r = store_open(url, STORE_CREATE, &s, err, sizeof err);
	struct store_dist ds = {.t_ms = T0 + 7 * 86400000ll, .host = "n2", .server = "block loop3", .op = "write",
				.requests = 1000, .timed = 16};
	ds.wait[3] = ds.service[9] = 16;
	if (r == 0 && (r = store_begin(s)) == 0 && (r = store_dist_add(s, &ds)) == 0)
		r = store_commit(s);
	snprintf(name, sizeof name, "%s: a row of 16 timed of 1,000", what);
	check(name, r == 0, "%s", r ? store_error(s) : "");
	store_close(s);
	snprintf(name, sizeof name, "%s: rows to migrate", what);
	check(name, direct_int("SELECT count(*) FROM server_dists") > 0, "none");
	snprintf(name, sizeof name, "%s: the rows kept", what);
	eq_i64(name, direct_int("CREATE TABLE m17 AS SELECT t_ms, host, server, op, requests, wait_hist, service_hist"
				" FROM server_dists"), 0);
	snprintf(name, sizeof name, "%s: back to schema %d", what, is_pg ? 14 : 16);
	eq_i64(name, direct_back_before_timed(url), 0);
	reopen_migrates(what, is_pg ? 14 : 16);
	static const char *const same[][2] = {
		{"every row", "SELECT count(*) FROM (SELECT * FROM m17 EXCEPT SELECT t_ms, host, server, op, requests,"
			      " wait_hist, service_hist FROM server_dists) x"},
		{"no other row", "SELECT count(*) FROM (SELECT t_ms, host, server, op, requests, wait_hist, service_hist"
				 " FROM server_dists EXCEPT SELECT * FROM m17) x"},
		{"every request timed", "SELECT count(*) FROM server_dists WHERE timed <> requests"},
	};
	each_zero(what, same, sizeof same / sizeof same[0]);
	direct_int("DROP TABLE m17");
}

/* Schema 12's migration on a store of schema 11 (its table dropped, the version put back): the
 * per-process sums made from the raw rows there, as the writers make them; and 13's after it. */
static void check_migration_12(void)
{
	/* SQLite: schema 15's rows made back into 14's first (migration 15 packs them again) */
	if (!is_pg)
		eq_i64("migration 12: back to schema 14", direct_sqlite_back_to_14(url), 0);
	int64_t raw = direct_int("SELECT count(*) FROM intervals WHERE t_ms >= " RAW_SPLIT);
	check("migration 12: raw rows to sum", raw > 0, "%lld", (long long)raw);
	/* back to schema 11: 13's diagnosis columns and index go too (test_diagnose_nodes checks 13) */
	if (is_pg)
		eq_i64("migration 12: back before the timed requests", direct_back_before_timed(url), 0);
	static const char *const back[] = {"DROP TABLE proc_intervals", "DROP INDEX diagnoses_host",
					   "ALTER TABLE diagnoses DROP COLUMN host", "ALTER TABLE diagnoses DROP COLUMN job_rows"};
	for (size_t i = 0; i < sizeof back / sizeof back[0]; i++)
		eq_i64(back[i], direct_int(back[i]), 0);
	direct_int(is_pg ? "UPDATE schema_version SET version = 11" : "PRAGMA user_version = 11");
	reopen_migrates("migration 12", 11);
	proc_sums_compare("migration 12");
	check("migration 12: rows made", direct_int("SELECT count(*) FROM proc_intervals") > 0, "none");
}

static int unwritable(void)
{
	struct store *s = NULL;
	char err[512];
	int r = store_open(url, 0, &s, err, sizeof err);
	if (!ok_r("unwritable: opens", r, NULL)) {
		printf("# %s\n", err);
		return 1;
	}
	struct store_job j = job("999", "n1", 1, "x", 1);
	r = store_begin(s);
	if (r == 0)
		r = store_job_put(s, &j);
	check("unwritable: a write is refused (-EACCES or -EROFS)", r == -EACCES || r == -EROFS, "returned %d: %s", r,
	      store_error(s));
	check("unwritable: one line", !strchr(store_error(s), '\n'), "%s", store_error(s));
	store_rollback(s);
	store_close(s);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	char dir[64] = "/tmp/iostrata-store.XXXXXX", file[128], archive[128];
	const char *mode = argc > 2 ? argv[1] : "";
	url = argc > 2 ? argv[2] : argc > 1 ? argv[1] : NULL;
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(file, sizeof file, "sqlite:%s/store.db", dir);
	snprintf(archive, sizeof archive, "%s/archive", dir);
	if (!url)
		url = file;
	is_pg = !strncmp(url, "postgres", 8);
	if (!is_pg)
		IV = "interval_rows", IVM = "interval_minute_rows";
	struct store *s = NULL;
	char err[512];
	int r;
	if (!strcmp(mode, "--unwritable")) {
		r = unwritable();
		goto out;
	}
	r = store_open(url, STORE_CREATE, &s, err, sizeof err);
	if (!ok_r("open (create)", r, NULL)) {
		printf("# %s\n", err);
		r = 1;
		goto out;
	}
	if (!strcmp(mode, "--fill")) {
		r = fill(s);
		ok_r("fill", r, s);
		store_close(s);
		goto out;
	}
	int64_t ka = 0, kb = 0, pk[2] = {0}, fk[2] = {0};
	check_jobs(s, &ka, &kb);
	check_procs(s, ka, pk, fk);
	check_rows(s, pk, fk);
	check_series(s, ka);
	proc_sums_compare("after the rows");
	check_bulk(s, kb, fk[1]);
	proc_sums_compare("after the bulk rows");
	check_grouped(s, kb);
	check_grouped_sorted(s, kb);
	proc_sums_compare("after the grouped rows");
	check_report(s, ka, kb);
	check_seq(s, ka);
	check_retention(s, archive);
	proc_sums_compare("after retention");
	check_put_in_tx(s, kb, fk[1]);
	proc_sums_compare("after a process put in a transaction");
	check_key_twice(s, kb);
	check_many_files(s, kb);
	proc_sums_compare("after a key twice and many files");
	check_puts_grouped(s, kb, fk[1]);
	proc_sums_compare("after many processes put at once");
	store_close(s);
	check_rollups();
	check_rollups_wide();
	check_migration_timed();
	check_migration_16();
	check_migration_15();
	check_migration_12();
	check_newer();
	r = failures ? 1 : 0;
out:;
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return r;
}
