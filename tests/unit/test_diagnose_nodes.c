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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/json.h"
#include "check.h"
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
