/* SPDX-License-Identifier: MIT */
/*
 * A node's record across jobs (docs/DIAGNOSIS.md, "Causes"), on a temporary SQLite store: the
 * stored diagnoses of a host's job rows, latest first (store_diag_node); which of them found the
 * node slow (store_diag_found_slow: a degraded_node finding naming it, or an unexplained abnormal
 * phase; hostile and broken JSON); and whole diagnoses (store_diagnose) of a slow job on a node
 * slow for 2 of its latest jobs (degraded, named), on a node with no such record (unexplained),
 * on a node slow once (unexplained), and a normal job on the degraded node (no finding). Given a
 * URL (postgresql://...), on that store (tests/integration/store_pg.sh).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/json.h"
#include "check.h"
#include "direct.h"
#include "iostrata/format.h"
#include "store/diagnosis.h"
#include "store/store.h"

#define T0 1700000000000LL
#define MB 1000000.0

static struct store *s;
static int64_t step = 1000; /* the rows' interval (the daemon's stats_interval) */
static int jitter;           /* row i's time 1 ms early when i % 3 == 1 (a daemon's tick) */

/* A job on host of one process writing per second bytes[i] for n seconds from start: its rows,
 * with a report (so it can be diagnosed). The job's key, or -1. */
static int64_t put_job(const char *name, const char *host, const char *exe, int64_t start, const double *bytes,
		       size_t n, struct store_job *out)
{
	static int32_t pid = 100;
	int64_t file = 0;
	struct store_job j = {.job = name, .host = host, .uid = 1000, .user = "u", .exe = exe, .jobdir = "",
			      .start_ms = start, .end_ms = start + (int64_t)(n + 1) * step};
	int r = store_begin(s);
	if (r >= 0)
		r = store_job_put(s, &j);
	if (r >= 0)
		r = store_file_key(s, "/scratch/out.dat", &file);
	struct store_proc p = {.job_key = j.key, .host = host, .pid = ++pid, .start_ns = (uint64_t)pid * 1000, .uid = 1000,
			       .exe = exe, .live_path = "", .final_path = "", .start_ms = start, .end_ms = j.end_ms,
			       .state = STORE_PROC_ENDED};
	if (r >= 0)
		r = store_proc_put(s, &p);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		int64_t late = jitter && i % 3 == 1 ? -1 : 0;
		struct store_interval iv = {.t_ms = start + (int64_t)(i + 1) * step + late, .dt_ms = step, .proc_key = p.key,
					    .file_key = file, .layer = LOG_LAYER_POSIX, .cat = STORE_CAT_WRITE,
					    .bytes = (int64_t)bytes[i], .calls = 10, .dur_ns = 1000};
		r = store_interval_add(s, &iv);
	}
	if (r >= 0)
		r = store_job_report_put(s, j.key, "text", "{}");
	if (r >= 0)
		r = store_commit(s);
	if (r < 0) {
		store_rollback(s);
		return -1;
	}
	j.nprocs = 1;
	if (out)
		*out = j;
	return j.key;
}

/* put_job with the scheduler's node list (NULL: none) and no job name (the application stays
 * the executable's) */
static int64_t put_row(const char *name, const char *host, int64_t start, const double *bytes, size_t n,
		       const char *nodes)
{
	struct store_job j;
	int64_t key = put_job(name, host, "/bin/multi", start, bytes, n, &j);
	if (key < 0 || !nodes)
		return key;
	j.sched = "slurm";
	j.sched_name = "";
	j.sched_state = "COMPLETED";
	j.sched_nodes = nodes;
	int r = store_begin(s);
	if (r >= 0)
		r = store_job_sched_put(s, &j);
	if (r >= 0)
		r = store_commit(s);
	if (r < 0)
		store_rollback(s);
	return r < 0 ? -1 : key;
}

/* A stored diagnosis of job key with this JSON (as store_diagnosis_save stores it). */
static int put_diag(int64_t key, int64_t start, const char *json)
{
	struct store_diag_row d = {.job_key = key, .app = "other", .ranks = 1, .start_ms = start, .t_ms = start + 60000,
				   .anomalies = strstr(json, "abnormal_phase") != NULL, .text = "t", .json = json};
	int r = store_begin(s);
	if (r >= 0)
		r = store_diagnosis_put(s, &d);
	if (r >= 0)
		r = store_commit(s);
	return r;
}

struct rows {
	int64_t key[8];
	size_t n;
};

static int take_row(const struct store_diag_row *d, void *arg)
{
	struct rows *k = arg;
	if (k->n < 8)
		k->key[k->n++] = d->job_key;
	return 0;
}

static int slow(const char *json, const char *node)
{
	char q[256];
	ana_json_quote(q, node);
	return store_diag_found_slow(json, q);
}

/* The kinds of d's findings, and its degraded node, as one string: "abnormal_phase degraded_node:n2". */
static void kinds(const struct store_diagnosis *d, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < d->res.n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s%s%s", i ? " " : "", dgn_kind_name(d->res.f[i].kind),
				      d->res.f[i].node ? ":" : "", d->res.f[i].node ? d->res.f[i].node : "");
}

static void found_slow(void)
{
	const char *deg = "{\"job\":\"a\",\"findings\":[\n {\"kind\":\"abnormal_phase\",\"phase\":0},\n"
			  " {\"kind\":\"degraded_node\",\"phase\":0,\"node\":\"n2\"}]}";
	check("found slow: degraded_node naming it", slow(deg, "n2") == 1, "no");
	check("found slow: degraded_node naming another node", slow(deg, "n3") == 0, "yes");
	check("found slow: a node whose name the other's starts with", slow(deg, "n") == 0, "yes");
	const char *unex = "{\"findings\":[{\"kind\":\"abnormal_phase\"},{\"kind\":\"unexplained\",\"start_ms\":5}]}";
	check("found slow: an unexplained abnormal phase", slow(unex, "n9") == 1, "no");
	const char *inter = "{\"findings\":[{\"kind\":\"abnormal_phase\"},{\"kind\":\"interference\",\"types\":"
			    "[\"n_to_1\"],\"jobs\":[\"x]}{\\\"kind\\\":\\\"unexplained\\\"\"],\"resource\":\"host n2\"}]}";
	check("found slow: interference (a job name holding brackets and a kind) is not", slow(inter, "n2") == 0,
	      "yes");
	check("found slow: a normal job, no findings", slow("{\"findings\":[]}", "n2") == 0, "yes");
	const char *nenough = "{\"findings\":[{\"kind\":\"not_enough_data\",\"value\":2}]}";
	check("found slow: not enough data is not", slow(nenough, "n2") == 0, "yes");
	const char *odd = "{\"findings\":[{\"kind\":\"degraded_node\",\"node\":\"a\\\"b]}\"}]}";
	check("found slow: a node name with a quote and brackets", slow(odd, "a\"b]}") == 1 && slow(odd, "a") == 0,
	      "no");
	check("found slow: broken JSON, NULL, no findings: not, no crash",
	      slow("{\"findings\":[{\"kind\":\"unexpl", "n2") == 0 && slow("{\"findings\":[{\"kind\":", "n2") == 0 &&
		      slow(NULL, "n2") == 0 && slow("{\"phases\":[]}", "n2") == 0 && slow("", "n2") == 0 &&
		      slow("{\"findings\":[{\"kind\":\"degraded_node\",\"node\":\"n2", "n2") == 0,
	      "yes");
}

/* ---- the waiting rule (docs/DIAGNOSIS.md, "When it runs") ---- */

static int64_t now_real(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What is stored of a row: its diagnosis' JSON (NULL: none), when it was made, the job rows it saw. */
struct stored {
	char *json;
	int64_t t_ms, job_rows;
};

struct find_row {
	int64_t key, t_ms;
};

static int row_t(const struct store_diag_row *d, void *arg)
{
	struct find_row *f = arg;
	if (d->job_key == f->key)
		f->t_ms = d->t_ms;
	return 0;
}

struct find_peer {
	int64_t key, diag_rows;
};

static int peer_rows(const struct store_diag_peer *p, void *arg)
{
	struct find_peer *f = arg;
	if (p->key == f->key)
		f->diag_rows = p->diag_rows;
	return 0;
}

static struct stored stored_of(int64_t key, const char *host)
{
	struct stored x = {.t_ms = -1, .job_rows = -1};
	struct find_row fr = {key, -1};
	struct find_peer fp = {key, -2};
	if (store_diagnosis_get(s, key, 1, &x.json) < 0 || store_diag_node(s, host, INT64_MAX, 100, row_t, &fr) < 0 ||
	    store_diag_peers(s, key, peer_rows, &fp) < 0)
		printf("# stored_of: %s\n", store_error(s));
	x.t_ms = fr.t_ms;
	x.job_rows = fp.diag_rows;
	return x;
}

/* "-" when the row has no diagnosis, "ok" for one without a finding, else its degraded node
 * ("degraded:m2") or "abnormal"; with the history it counted and the job rows it saw */
static void describe(int64_t key, const char *host, char *buf, size_t len)
{
	struct stored x = stored_of(key, host);
	const char *h = x.json ? strstr(x.json, "\"history\":") : NULL;
	const char *n = x.json ? strstr(x.json, "\"kind\":\"degraded_node\"") : NULL;
	const char *node = n ? strstr(n, "\"node\":\"") : NULL;
	char what[64] = "-";
	if (x.json && !strstr(x.json, "\"kind\""))
		snprintf(what, sizeof what, "ok");
	else if (node)
		snprintf(what, sizeof what, "degraded:%.*s", (int)strcspn(node + 8, "\""), node + 8);
	else if (x.json)
		snprintf(what, sizeof what, "abnormal");
	if (x.json)
		snprintf(buf, len, "%s h%ld r%ld", what, h ? strtol(h + 10, NULL, 10) : -1L, (long)x.job_rows);
	else
		snprintf(buf, len, "-");
	free(x.json);
}

/* pending with the ingest's flag (STORE_DIAG_WAIT_NODES) at now: how many were stored */
static size_t pending(int64_t *since, size_t max, int64_t now, unsigned flags)
{
	size_t done = 0;
	int r = store_diagnose_pending(s, since, max, now, flags, &done);
	if (r < 0)
		printf("# pending: %s\n", store_error(s));
	return done;
}

static void waiting_rule(const char *url)
{
	char a[64], b[64], c[64], err[512];
	int64_t since = 0;
	double bw[20], slow_bw[20];
	step = 1000;

	eq_u64("ready: no list", (uint64_t)store_diag_ready(1, NULL, 0, 1), 1);
	eq_u64("ready: an empty list", (uint64_t)store_diag_ready(1, "", 0, 1), 1);
	eq_u64("ready: 2 rows of node[1-3]", (uint64_t)store_diag_ready(2, "node[1-3]", 0, 1), 0);
	eq_u64("ready: 3 rows of node[1-3]", (uint64_t)store_diag_ready(3, "node[1-3]", 0, 1), 1);
	eq_u64("ready: 2 rows of a,b", (uint64_t)store_diag_ready(2, "a,b", 0, 1), 1);
	eq_u64("ready: a list that cannot be read is no list", (uint64_t)store_diag_ready(1, "n[3-1]", 0, 1), 1);
	eq_u64("ready: 2 of 3, a moment before the bound",
	       (uint64_t)store_diag_ready(2, "node[1-3]", 1000, 1000 + STORE_DIAG_NODES_WAIT_MS - 1), 0);
	eq_u64("ready: 2 of 3, at the bound",
	       (uint64_t)store_diag_ready(2, "node[1-3]", 1000, 1000 + STORE_DIAG_NODES_WAIT_MS), 1);

	/* the history of /bin/multi: 8 single-node runs on hx at 10 MB/s, diagnosed */
	int ok = 1;
	for (int h = 0; h < 8; h++) {
		char name[16];
		snprintf(name, sizeof name, "mh%d", h);
		for (int i = 0; i < 20; i++)
			bw[i] = 10 * MB * (1 + 0.02 * (((i + h) * 7) % 5 - 2) / 2);
		int64_t k = put_row(name, "hx", T0 + 5000000 + h * 100000, bw, 20, NULL);
		ok = ok && k > 0 && store_diagnosis_save(s, k, T0 + 5000000 + h * 100000 + 50000) == 0;
	}
	check("waiting: the history stored and diagnosed", ok, "%s", store_error(s));
	/* the jobs above that were diagnosed but not stored (s2 ...), stored now: one row each */
	size_t done = pending(&since, 1000, now_real(), STORE_DIAG_WAIT_NODES);
	eq_u64("waiting: the 4 single-node jobs above left undiagnosed, diagnosed at once", done, 4);
	done = pending(&since, 16, now_real(), STORE_DIAG_WAIT_NODES);
	eq_u64("waiting: then nothing pending", done, 0);
	for (int i = 0; i < 20; i++) {
		bw[i] = 10 * MB * (1 + 0.02 * ((i * 3) % 5 - 2) / 2);
		slow_bw[i] = 3 * MB * (1 + 0.02 * ((i * 7) % 5 - 2) / 2);
	}

	/* job J1 on m[1-3] (Slurm's list), m2 slow; its rows come one by one, m1 first (its
	 * daemon's Redis taken first), each followed by the ingest's pass */
	int64_t t = T0 + 7000000;
	int64_t k1 = put_row("J1", "m1", t, bw, 20, "m[1-3]");
	done = pending(&since, 16, now_real(), STORE_DIAG_WAIT_NODES);
	describe(k1, "m1", a, sizeof a);
	check("list: a row before its peers is not diagnosed", done == 0 && !strcmp(a, "-"), "done %zu, m1 %s", done, a);
	int64_t k2 = put_row("J1", "m2", t + 5, slow_bw, 20, "m[1-3]");
	done = pending(&since, 16, now_real(), STORE_DIAG_WAIT_NODES);
	eq_u64("list: 2 rows of 3: none diagnosed", done, 0);
	/* the worker restarts: a new handle, its window from the start */
	store_close(s);
	s = NULL;
	int r = store_open(url, STORE_CREATE, &s, err, sizeof err);
	check("restart: the store opened again", r == 0, "%s", err);
	if (r)
		exit(1);
	since = 0;
	done = pending(&since, 16, now_real(), STORE_DIAG_WAIT_NODES);
	eq_u64("restart: 2 rows of 3: none diagnosed", done, 0);
	int64_t k3 = put_row("J1", "m3", t + 10, bw, 20, "m[1-3]");
	int64_t at = now_real();
	done = pending(&since, 16, at, STORE_DIAG_WAIT_NODES);
	describe(k1, "m1", a, sizeof a);
	describe(k2, "m2", b, sizeof b);
	describe(k3, "m3", c, sizeof c);
	eq_u64("list: the last peer: the job's 3 rows diagnosed", done, 3);
	eq_str("list: m1 normal, 8 similar jobs (not its peers), 3 rows seen", a, "ok h8 r3");
	eq_str("list: m2 named degraded against m1 and m3", b, "degraded:m2 h8 r3");
	eq_str("list: m3 normal, 8 similar jobs (its peers started before it: not history)", c, "ok h8 r3");
	struct stored x = stored_of(k2, "m2");
	eq_i64("list: made at the last peer's pass", x.t_ms, at);
	free(x.json);
	done = pending(&since, 16, at + 1000, STORE_DIAG_WAIT_NODES);
	x = stored_of(k2, "m2");
	check("list: diagnosed once (the next pass: none, m2's row as made)", done == 0 && x.t_ms == at,
	      "done %zu t %" PRId64, done, x.t_ms);
	free(x.json);

	/* job J2 on m[1-3], m3 slow: the worker stops after one row of the three (max 1), then
	 * restarts: the two others, each once */
	t += 100000;
	k1 = put_row("J2", "m1", t, bw, 20, "m[1-3]");
	k2 = put_row("J2", "m2", t, bw, 20, "m[1-3]");
	k3 = put_row("J2", "m3", t, slow_bw, 20, "m[1-3]");
	int64_t t1 = now_real();
	done = pending(&since, 1, t1, STORE_DIAG_WAIT_NODES);
	eq_u64("stopped: one row of the job diagnosed", done, 1);
	x = stored_of(k1, "m1");
	eq_i64("stopped: the job's first row", x.t_ms, t1);
	free(x.json);
	store_close(s);
	s = NULL;
	r = store_open(url, STORE_CREATE, &s, err, sizeof err);
	if (r) {
		check("restart: the store opened again", 0, "%s", err);
		exit(1);
	}
	since = 0;
	done = pending(&since, 16, t1 + 1000, STORE_DIAG_WAIT_NODES);
	eq_u64("restarted: the two others", done, 2);
	x = stored_of(k1, "m1");
	eq_i64("restarted: the first row not made again", x.t_ms, t1);
	free(x.json);
	describe(k3, "m3", c, sizeof c);
	eq_str("restarted: m3 named degraded (J1's 3 rows now history too)", c, "degraded:m3 h11 r3");

	/* job J3 without a node list (no scheduler): a row is diagnosed at once, and again when a
	 * later row of its job comes (replacing it), the later one with it */
	t += 100000;
	k1 = put_row("J3", "m1", t, bw, 20, NULL);
	done = pending(&since, 16, now_real(), STORE_DIAG_WAIT_NODES);
	describe(k1, "m1", a, sizeof a);
	check("no list: diagnosed at once, alone", done == 1 && !strcmp(a, "ok h14 r1"), "done %zu, m1 %s", done, a);
	k2 = put_row("J3", "m2", t, slow_bw, 20, NULL);
	done = pending(&since, 16, now_real(), STORE_DIAG_WAIT_NODES);
	describe(k1, "m1", a, sizeof a);
	describe(k2, "m2", b, sizeof b);
	eq_u64("no list: the later row and the earlier one again", done, 2);
	eq_str("no list: m1 made again with 2 rows", a, "ok h14 r2");
	eq_str("no list: m2 named degraded against m1", b, "degraded:m2 h14 r2");
	/* a diagnosis that saw fewer rows (another worker, late) does not replace it */
	struct store_diag_row older = {.job_key = k2, .app = "x", .ranks = 1, .start_ms = t, .t_ms = 1, .anomalies = 0,
				       .text = "older", .json = "{\"findings\":[]}", .job_rows = 1};
	r = store_begin(s);
	if (r >= 0)
		r = store_diagnosis_put(s, &older);
	if (r >= 0)
		r = store_commit(s);
	describe(k2, "m2", b, sizeof b);
	check("no list: a diagnosis of fewer rows leaves the stored one", r == 0 && !strcmp(b, "degraded:m2 h14 r2"),
	      "r %d, m2 %s", r, b);

	/* job J4: a list of 3, 2 rows: waits until STORE_DIAG_NODES_WAIT_MS after its first report */
	t += 100000;
	int64_t rep = now_real();
	k1 = put_row("J4", "m1", t, bw, 20, "m[1-3]");
	k2 = put_row("J4", "m2", t, slow_bw, 20, "m[1-3]");
	done = pending(&since, 16, rep + STORE_DIAG_NODES_WAIT_MS - 2000, STORE_DIAG_WAIT_NODES);
	eq_u64("bound: 2 rows of 3, before the bound: none", done, 0);
	done = pending(&since, 16, now_real() + STORE_DIAG_NODES_WAIT_MS + 1000, STORE_DIAG_WAIT_NODES);
	describe(k2, "m2", b, sizeof b);
	eq_u64("bound: after it, the 2 rows", done, 2);
	eq_str("bound: m2 named against m1", b, "degraded:m2 h16 r2");

	/* job J5: a node's own store (the daemon, no flag) does not wait for the list */
	t += 100000;
	k1 = put_row("J5", "m1", t, bw, 20, "m[1-3]");
	done = pending(&since, 16, now_real(), 0);
	describe(k1, "m1", a, sizeof a);
	check("daemon: a row of a 3-node list diagnosed at once", done == 1 && !strcmp(a, "ok h18 r1"), "done %zu, m1 %s",
	      done, a);
}

/* An older store (schema 12: diagnoses without host and job_rows, no index on the host) opened by
 * this program: migrated, its diagnoses' hosts and rows filled in, the node's record read by the
 * index. On the store at url, whose diagnoses it changes back first. */
static void migrated(const char *url)
{
	int pg = !strncmp(url, "postgres", 8);
	char err[512];
	struct rows k = {0};
	int64_t key = put_job("old", "mo", "/bin/old", T0 + 9000000, (const double[]){1, 1, 1, 1}, 4, NULL);
	int r = key > 0 ? put_diag(key, T0 + 9000000, "{\"findings\":[]}") : -1;
	store_close(s);
	s = NULL;
	/* as version 12 made it (its diagnoses table is version 10's; proc_intervals without 14's
	 * interval length) */
	const char *back[] = {"DROP INDEX diagnoses_host", "ALTER TABLE diagnoses DROP COLUMN host",
			      "ALTER TABLE diagnoses DROP COLUMN job_rows", "ALTER TABLE proc_intervals DROP COLUMN dt_ms",
			      pg ? "UPDATE schema_version SET version = 12" : "PRAGMA user_version = 12"};
	/* SQLite: schema 15's interval rows a process made back into 14's a file first (and 17's
	 * timed requests before it); PostgreSQL: its 15's timed requests */
	if (!pg && r >= 0)
		r = direct_sqlite_back_to_14(url);
	else if (r >= 0)
		r = direct_back_before_timed(url);
	for (size_t i = 0; i < sizeof back / sizeof back[0] && r >= 0; i++)
		r = direct_sql_int(url, back[i]) < 0 ? -1 : 0;
	check("old store: made back into schema 12", r == 0, "see above");
	r = store_open(url, STORE_CREATE, &s, err, sizeof err);
	check("old store: opened and migrated", r == 0, "%s", err);
	if (r)
		exit(1);
	eq_i64("old store: at the program's schema",
	       direct_sql_int(url, pg ? "SELECT max(version) FROM schema_version" : "PRAGMA user_version"),
	       pg ? STORE_SCHEMA_VERSION : STORE_SQLITE_SCHEMA_VERSION);
	int64_t rows = direct_sql_int(url, "SELECT count(*) FROM proc_intervals");
	eq_i64("old store: proc_intervals' interval length added, 0 in its rows there were",
	       direct_sql_int(url, "SELECT count(*) FROM proc_intervals WHERE dt_ms = 0"), rows > 0 ? rows : -1);
	eq_i64("old store: the host copied from the job row",
	       direct_sql_int(url, "SELECT count(*) FROM diagnoses WHERE host = 'mo'"), 1);
	eq_i64("old store: every diagnosis has its host",
	       direct_sql_int(url, "SELECT count(*) FROM diagnoses d JOIN jobs j ON j.id = d.job_id WHERE d.host <> j.host"), 0);
	eq_i64("old store: job_rows counts the job's reported rows (J1: 3)",
	       direct_sql_int(url, "SELECT min(d.job_rows) FROM diagnoses d JOIN jobs j ON j.id = d.job_id WHERE j.job = 'J1'"), 3);
	eq_i64("old store: the index on diagnoses(host, start_ms)",
	       direct_sql_int(url, pg ? "SELECT count(*) FROM pg_indexes WHERE indexname = 'diagnoses_host'"
				      : "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'diagnoses_host'"), 1);
	r = store_diag_node(s, "mo", INT64_MAX, 5, take_row, &k);
	check("old store: the node's record", r == 0 && k.n == 1 && k.key[0] == key, "r %d n %zu", r, k.n);
	/* the record's query (sqlite.c's and pg.c's, a host and a time put in) walks the index in
	 * its order: no sort */
	char plan[2048];
	r = direct_sql_plan(url,
			    "SELECT d.job_id, d.ranks, d.start_ms, d.t_ms, d.anomalies, d.json, j.uid FROM diagnoses d"
			    " JOIN jobs j ON j.id = d.job_id WHERE d.host = 'mo' AND d.start_ms < 1800000000000"
			    " ORDER BY d.start_ms DESC, d.job_id DESC LIMIT 5",
			    plan, sizeof plan);
	check("old store: the record's query reads diagnoses_host in order",
	      r == 0 && strstr(plan, "diagnoses_host") && !strstr(plan, "TEMP B-TREE") && !strstr(plan, "Sort"), "%s",
	      plan);
	size_t done = 0;
	int64_t since = 0;
	r = store_diagnose_pending(s, &since, 16, now_real(), STORE_DIAG_WAIT_NODES, &done);
	check("old store: nothing made again after the migration", r == 0 && done == 0, "r %d done %zu", r, done);
}

int main(int argc, char **argv)
{
	char dir[64] = "/tmp/iostrata-dgnnodes.XXXXXX", file[128], err[512], got[256];
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(file, sizeof file, "sqlite:%s/store.db", dir);
	/* given a URL (postgresql://...: tests/integration/store_pg.sh, an empty database), on it */
	const char *url = argc > 1 ? argv[1] : file;
	int r = store_open(url, STORE_CREATE, &s, err, sizeof err);
	check("open", r == 0, "%s", err);
	if (r)
		return 1;
	found_slow();

	/* the history: 8 runs of /bin/ckpt on n1, 20 s at 10 MB/s +- 2 %, each diagnosed in turn */
	double bw[20], slow_bw[20];
	for (int i = 0; i < 20; i++)
		slow_bw[i] = 3 * MB * (1 + 0.02 * ((i * 7) % 5 - 2) / 2);
	int ok = 1;
	for (int h = 0; h < 8; h++) {
		char name[16];
		snprintf(name, sizeof name, "h%d", h);
		for (int i = 0; i < 20; i++)
			bw[i] = 10 * MB * (1 + 0.02 * (((i + h) * 7) % 5 - 2) / 2);
		int64_t k = put_job(name, "n1", "/bin/ckpt", T0 + h * 100000, bw, 20, NULL);
		ok = ok && k > 0 && store_diagnosis_save(s, k, T0 + h * 100000 + 50000) == 0;
	}
	check("history stored and diagnosed", ok, "%s", store_error(s));

	/* records: n2 slow in 2 of its latest (an unexplained phase, then named degraded), after
	 * one normal job; n3 slow once (named by another node's job row: not its own) and
	 * interfered with once; n4 slow once */
	const double one[4] = {1, 1, 1, 1};
	int64_t t = T0 + 1000000;
	int64_t x[6];
	x[0] = put_job("x0", "n2", "/bin/other", t, one, 4, NULL);
	x[1] = put_job("x1", "n2", "/bin/other", t + 10000, one, 4, NULL);
	x[2] = put_job("x2", "n2", "/bin/other", t + 20000, one, 4, NULL);
	x[3] = put_job("x3", "n3", "/bin/other", t + 30000, one, 4, NULL);
	x[4] = put_job("x4", "n3", "/bin/other", t + 40000, one, 4, NULL);
	x[5] = put_job("x5", "n4", "/bin/other", t + 50000, one, 4, NULL);
	r = put_diag(x[0], t, "{\"findings\":[]}") | put_diag(x[1], t + 10000,
		"{\"findings\":[{\"kind\":\"abnormal_phase\"},{\"kind\":\"unexplained\"}]}") |
	    put_diag(x[2], t + 20000, "{\"findings\":[{\"kind\":\"abnormal_phase\"},{\"kind\":\"degraded_node\",\"node\":\"n2\"}]}") |
	    put_diag(x[3], t + 30000, "{\"findings\":[{\"kind\":\"abnormal_phase\"},{\"kind\":\"degraded_node\",\"node\":\"n2\"}]}") |
	    put_diag(x[4], t + 40000, "{\"findings\":[{\"kind\":\"abnormal_phase\"},{\"kind\":\"interference\",\"resource\":\"host n3\"}]}") |
	    put_diag(x[5], t + 50000, "{\"findings\":[{\"kind\":\"abnormal_phase\"},{\"kind\":\"unexplained\"}]}");
	check("records stored", r == 0, "%s", store_error(s));

	/* the record's rows: the host's, started before, latest first, at most the limit */
	struct rows k = {0};
	r = store_diag_node(s, "n2", t + 100000, 5, take_row, &k);
	check("node rows: n2's three, latest first", r == 0 && k.n == 3 && k.key[0] == x[2] && k.key[1] == x[1] &&
							 k.key[2] == x[0], "r %d n %zu", r, k.n);
	memset(&k, 0, sizeof k);
	r = store_diag_node(s, "n2", t + 100000, 2, take_row, &k);
	check("node rows: the limit keeps the latest", r == 0 && k.n == 2 && k.key[0] == x[2], "n %zu", k.n);
	memset(&k, 0, sizeof k);
	r = store_diag_node(s, "n2", t + 15000, 5, take_row, &k);
	check("node rows: only those that started before", r == 0 && k.n == 2 && k.key[0] == x[1], "n %zu", k.n);
	memset(&k, 0, sizeof k);
	r = store_diag_node(s, "n2'; --", t + 100000, 5, take_row, &k);
	check("node rows: a hostile host is a name", r == 0 && k.n == 0, "r %d n %zu", r, k.n);

	/* whole diagnoses, each job of /bin/ckpt after the history */
	struct store_job j;
	struct store_diagnosis d;
	int64_t at = T0 + 2000000;
	put_job("s2", "n2", "/bin/ckpt", at, slow_bw, 20, &j);
	r = store_diagnose(s, &j, &d);
	kinds(&d, got, sizeof got);
	eq_str("slow on n2 (slow in 2 of its latest 3): the node degraded", r == 0 ? got : "(failed)",
	       "abnormal_phase degraded_node:n2");
	if (r == 0 && d.res.n == 2)
		check("... from its record: 2 jobs, the phase's figures", d.res.f[1].by_record == 1 &&
		      d.res.f[1].history == 2 && d.res.f[1].value == d.res.f[0].value && d.res.f[1].slower > 0.6,
		      "by_record %d history %u", d.res.f[1].by_record, d.res.f[1].history);
	if (r == 0) {
		char *text = NULL;
		size_t tl = 0;
		FILE *tf = open_memstream(&text, &tl);
		store_diagnosis_text(tf, &j, &d);
		fclose(tf);
		check("text: the node named with its record", text && strstr(text, "cause: node n2 degraded: no interfering"
								    " neighbour, and slow in 2 of its latest 5 jobs before"),
		      "%s", text ? text : "");
		free(text);
		store_diagnosis_free(&d);
	}
	put_job("s3", "n3", "/bin/ckpt", at + 100000, slow_bw, 20, &j);
	r = store_diagnose(s, &j, &d);
	kinds(&d, got, sizeof got);
	eq_str("slow on n3 (named by another node's row, interfered once): unexplained", r == 0 ? got : "(failed)",
	       "abnormal_phase unexplained");
	if (r == 0)
		store_diagnosis_free(&d);
	put_job("s4", "n4", "/bin/ckpt", at + 200000, slow_bw, 20, &j);
	r = store_diagnose(s, &j, &d);
	kinds(&d, got, sizeof got);
	eq_str("slow on n4 (slow once): unexplained", r == 0 ? got : "(failed)", "abnormal_phase unexplained");
	if (r == 0)
		store_diagnosis_free(&d);
	for (int i = 0; i < 20; i++)
		bw[i] = 10 * MB * (1 + 0.02 * ((i * 3) % 5 - 2) / 2);
	put_job("c2", "n2", "/bin/ckpt", at + 300000, bw, 20, &j);
	r = store_diagnose(s, &j, &d);
	kinds(&d, got, sizeof got);
	eq_str("a normal job on the degraded node: no finding", r == 0 ? got : "(failed)", "");
	if (r == 0)
		store_diagnosis_free(&d);

	/* stored in turn: s2's diagnosis counts for n2's next job */
	int64_t s5 = put_job("s5", "n2", "/bin/ckpt", at + 400000, slow_bw, 20, &j);
	r = store_diagnosis_save(s, j.key, at + 500000);
	char *json = NULL;
	if (r == 0)
		r = store_diagnosis_get(s, s5, 1, &json);
	check("stored: the degraded node in the stored JSON", r == 0 && json && slow(json, "n2") &&
	      strstr(json, "\"kind\":\"degraded_node\""), "%s", json ? json : store_error(s));
	free(json);

	waiting_rule(url);
	migrated(url);

	/* rows every 10 s (the daemon's default stats_interval): samples of 10 s, one phase over
	 * the job's 12 rows, not 12 one-second bursts between zeros */
	step = 10000;
	double flat[12];
	for (int i = 0; i < 12; i++)
		flat[i] = 40 * MB;
	put_job("ten", "n8", "/bin/tenfold", at + 600000, flat, 12, &j);
	r = store_diagnose(s, &j, &d);
	check("10 s rows: one phase of 12 samples, 120 s long",
	      r == 0 && d.res.nphases == 1 && d.res.phases[0].n == 12 &&
		      d.res.phases[0].end_ms - d.res.phases[0].start_ms == 120000,
	      "r %d phases %zu n %zu", r, r == 0 ? d.res.nphases : 0, r == 0 && d.res.nphases ? d.res.phases[0].n : 0);
	check("10 s rows: 4 MB/s, the phase's bandwidth", r == 0 && d.res.nphases == 1 &&
	      d.res.phases[0].mean_bw > 3.99 * MB && d.res.phases[0].mean_bw < 4.01 * MB,
	      "%.0f", r == 0 && d.res.nphases ? d.res.phases[0].mean_bw : 0);
	if (r == 0)
		store_diagnosis_free(&d);

	/* 1 s rows whose ticks come 1 ms early now and then (999 and 1001 ms apart): a sample per
	 * row, none empty, none doubled (floor((t - t0) / 1000) put two in one and zero in the
	 * next: steps at every sample that once overran the phases' cuts) */
	step = 1000;
	jitter = 1;
	put_job("jit", "n8", "/bin/jitter", at + 800000, flat, 12, &j);
	jitter = 0;
	r = store_diagnose(s, &j, &d);
	check("jittered 1 s rows: one phase of 12 samples at 40 MB/s",
	      r == 0 && d.res.nphases == 1 && d.res.phases[0].n == 12 && d.res.phases[0].mean_bw > 39.99 * MB &&
		      d.res.phases[0].mean_bw < 40.01 * MB && d.res.phases[0].peak_bw < 40.01 * MB,
	      "r %d phases %zu n %zu bw %.0f peak %.0f", r, r == 0 ? d.res.nphases : 0,
	      r == 0 && d.res.nphases ? d.res.phases[0].n : 0, r == 0 && d.res.nphases ? d.res.phases[0].mean_bw : 0,
	      r == 0 && d.res.nphases ? d.res.phases[0].peak_bw : 0);
	if (r == 0)
		store_diagnosis_free(&d);

	store_close(s);
	char path[128];
	const char *const files[] = {"store.db", "store.db-wal", "store.db-shm"};
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
	return failures ? 1 : 0;
}
