/* SPDX-License-Identifier: MIT */
/*
 * The store's diagnoses (schema 10, store.h): stored once per job (a second put replaces), read
 * back as stored, the similar jobs by application and scale in start order with the limit, the
 * alerts (anomalies only, by owner, since, newest first), and the jobs waiting for a diagnosis
 * (ended, reported since a time, none yet). Run on SQLite; given a URL (postgresql://...), on
 * that store (tests/integration/store_pg.sh).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "iostrata/format.h"
#include "store/diagnosis.h"
#include "store/store.h"

struct keys {
	int64_t v[16];
	size_t n;
	uint32_t uid[16];
	int64_t t[16];
};

static int take_key(int64_t key, void *arg)
{
	struct keys *k = arg;
	if (k->n < 16)
		k->v[k->n++] = key;
	return 0;
}

static int take_alert(const struct store_diag_row *d, void *arg)
{
	struct keys *k = arg;
	if (k->n < 16) {
		k->uid[k->n] = d->uid;
		k->t[k->n] = d->t_ms;
		k->v[k->n++] = d->job_key;
	}
	return 0;
}

static void keys_text(const struct keys *k, const int64_t *base, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < k->n && o < len; i++) {
		int64_t x = k->v[i];
		for (int j = 0; j < 8; j++)
			if (base[j] == x)
				x = j;
		o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64, i ? " " : "", x);
	}
}

/* A job of one ended process (pid, its final log final), stored inside an open transaction,
 * the process's fields the job's: 0, or -errno. */
static int put_job_of_one(struct store *s, struct store_job *j, int32_t pid, const char *final,
			  struct store_proc *p)
{
	int r = store_job_put(s, j);
	*p = (struct store_proc){.job_key = j->key, .host = j->host, .pid = pid, .start_ns = (uint64_t)pid,
				 .start_ticks = 1, .uid = j->uid, .exe = j->exe, .live_path = "",
				 .final_path = final, .start_ms = j->start_ms, .end_ms = j->end_ms,
				 .state = STORE_PROC_ENDED};
	return r < 0 ? r : store_proc_put(s, p);
}

/* A diagnosis's phases as "start-end samples bytes[ bytes/s]; ..." (bw: with the mean rate). */
static void phases_text(const struct store_diagnosis *d, int bw, char *buf, size_t len)
{
	buf[0] = 0;
	for (size_t i = 0, o = 0; i < d->res.nphases && o < len; i++) {
		o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64 "-%" PRId64 " %zu %.0f", i ? "; " : "",
				      d->res.phases[i].start_ms, d->res.phases[i].end_ms, d->res.phases[i].n,
				      d->res.phases[i].bytes);
		if (bw && o < len)
			o += (size_t)snprintf(buf + o, len - o, " %.0f", d->res.phases[i].mean_bw);
	}
}

int main(int argc, char **argv)
{
	char dir[64] = "/tmp/iostrata-dgnstore.XXXXXX", file[128], err[512], got[256];
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(file, sizeof file, "sqlite:%s/store.db", dir);
	const char *url = argc > 1 ? argv[1] : file;
	struct store *s = NULL;
	int r = store_open(url, STORE_CREATE, &s, err, sizeof err);
	check("open", r == 0, "%s", err);
	if (r)
		return 1;
	/* 8 jobs: 0-5 one application (4 of 1 rank, 2 of 2 ranks), 6 another, 7 running; uid 1000
	 * for the even ones */
	int64_t key[8];
	r = store_begin(s);
	for (int i = 0; i < 8 && r >= 0; i++) {
		char name[16];
		snprintf(name, sizeof name, "j%d", i);
		struct store_job j = {.job = name, .host = "h", .uid = i % 2 ? 0 : 1000, .user = "u", .exe = "/bin/app",
				      .jobdir = "", .start_ms = 1000 * (i + 1), .end_ms = i == 7 ? 0 : 1000 * (i + 1) + 500,
				      .running = i == 7};
		if ((r = store_job_put(s, &j)) >= 0)
			key[i] = j.key;
		if (r >= 0 && i != 5)
			r = store_job_report_put(s, j.key, "text", "{}");
	}
	if (r >= 0)
		r = store_commit(s);
	check("jobs stored", r == 0, "%s", store_error(s));

	/* waiting for a diagnosis: ended, with a report (not 5, not 7), oldest end first */
	struct keys k = {0};
	r = store_diag_pending(s, 0, 100, take_key, &k);
	keys_text(&k, key, got, sizeof got);
	eq_str("pending: ended jobs with a report, oldest end first", got, "0 1 2 3 4 6");
	memset(&k, 0, sizeof k);
	r = store_diag_pending(s, 0, 2, take_key, &k);
	keys_text(&k, key, got, sizeof got);
	eq_str("pending: the limit", got, "0 1");
	memset(&k, 0, sizeof k);
	r = store_diag_pending(s, INT64_MAX, 100, take_key, &k);
	eq_u64("pending: none reported since a time to come", k.n, 0);

	/* diagnoses: 0-3 app A rank 1, 4 app A rank 2, 6 app B; anomalies on 2 and 6 */
	r = store_begin(s);
	const int which[] = {0, 1, 2, 3, 4, 6};
	for (size_t i = 0; i < 6 && r >= 0; i++) {
		int x = which[i];
		struct store_diag_row d = {.job_key = key[x], .app = x == 6 ? "B" : "A", .ranks = x == 4 ? 2 : 1,
					   .start_ms = 1000 * (x + 1), .t_ms = 50000 + x, .anomalies = x == 2 || x == 6,
					   .text = "first", .json = "{\"n\":1}"};
		r = store_diagnosis_put(s, &d);
	}
	/* job 2 diagnosed again: replaces its row (made twice, stored once) */
	struct store_diag_row again = {.job_key = key[2], .app = "A", .ranks = 1, .start_ms = 3000, .t_ms = 60000,
				       .anomalies = 1, .text = "again", .json = "{\"n\":2}"};
	if (r >= 0)
		r = store_diagnosis_put(s, &again);
	if (r >= 0)
		r = store_commit(s);
	check("diagnoses stored", r == 0, "%s", store_error(s));
	char *out = NULL;
	r = store_diagnosis_get(s, key[2], 1, &out);
	eq_str("get: the second put replaced the first (json)", out ? out : "(none)", "{\"n\":2}");
	free(out);
	r = store_diagnosis_get(s, key[2], 0, &out);
	eq_str("get: text", out ? out : "(none)", "again");
	free(out);
	out = (char *)"x";
	r = store_diagnosis_get(s, key[5], 1, &out);
	check("get: a job without one: NULL", r == 0 && out == NULL, "r %d", r);

	memset(&k, 0, sizeof k);
	store_diag_pending(s, 0, 100, take_key, &k);
	eq_u64("pending: none once all are diagnosed", k.n, 0);

	/* similar: app A, 1 rank, started before job 3's start (4000): 2 1 0, latest first */
	memset(&k, 0, sizeof k);
	r = store_diag_similar(s, "A", 1, 4000, 200, take_key, &k);
	keys_text(&k, key, got, sizeof got);
	eq_str("similar: same app and ranks, started before, latest first", got, "2 1 0");
	memset(&k, 0, sizeof k);
	r = store_diag_similar(s, "A", 1, 1000000, 2, take_key, &k);
	keys_text(&k, key, got, sizeof got);
	eq_str("similar: the limit keeps the latest", got, "3 2");
	memset(&k, 0, sizeof k);
	r = store_diag_similar(s, "A", 2, 1000000, 200, take_key, &k);
	keys_text(&k, key, got, sizeof got);
	eq_str("similar: another scale is another group", got, "4");
	memset(&k, 0, sizeof k);
	r = store_diag_similar(s, "A'; --", 1, 1000000, 200, take_key, &k);
	check("similar: a hostile key is a key", r == 0 && k.n == 0, "r %d n %zu", r, k.n);

	/* alerts: anomalies only, newest diagnosis first; by owner; since */
	memset(&k, 0, sizeof k);
	r = store_diag_alerts(s, STORE_ANY_UID, 0, 100, take_alert, &k);
	keys_text(&k, key, got, sizeof got);
	eq_str("alerts: the diagnoses with anomalies, newest first", got, "2 6");
	check("alerts: with their owners and times", k.n == 2 && k.uid[0] == 1000 && k.uid[1] == 1000 &&
							  k.t[0] == 60000 && k.t[1] == 50006,
	      "uid %u %u t %" PRId64 " %" PRId64, k.uid[0], k.uid[1], k.t[0], k.t[1]);
	memset(&k, 0, sizeof k);
	r = store_diag_alerts(s, 0, 0, 100, take_alert, &k);
	eq_u64("alerts: uid 0 owns none of them", k.n, 0);
	memset(&k, 0, sizeof k);
	r = store_diag_alerts(s, 1000, 55000, 100, take_alert, &k);
	keys_text(&k, key, got, sizeof got);
	eq_str("alerts: since a time", got, "2");
	memset(&k, 0, sizeof k);
	r = store_diag_alerts(s, STORE_ANY_UID, 0, 1, take_alert, &k);
	eq_u64("alerts: the limit", k.n, 1);

	/* a late statistics reading (schema 14): the daemon read the job 2 s after the reading before
	 * (an interval that ran long), so that row holds two seconds of a steady 1.5 MiB/s writer.
	 * The job's series spreads it over the two seconds it covers: one phase of 11 s at exactly
	 * 1.5 MiB/s. (Taken as one second, the series had a second of nothing before a second of
	 * twice the rate, and the steady job was cut into two phases.) */
	struct store_job lj = {.job = "late", .host = "h9", .uid = 1000, .user = "u", .exe = "/bin/late", .jobdir = "",
			       .start_ms = 100000, .end_ms = 112000};
	int64_t lf = 0;
	struct store_proc lp;
	r = store_begin(s);
	if (r >= 0)
		r = put_job_of_one(s, &lj, 42, "/j/42.iost", &lp);
	if (r >= 0)
		r = store_file_key(s, "/data/ckpt", &lf);
	/* readings at 101..104 s, none at 105, then 106..111 s */
	for (int64_t t = 101000; t <= 111000 && r >= 0; t += 1000) {
		if (t == 105000)
			continue;
		int64_t dt = t == 106000 ? 2000 : 1000;
		struct store_interval iv = {.t_ms = t, .dt_ms = dt, .proc_key = lp.key, .file_key = lf,
					    .layer = LOG_LAYER_POSIX, .cat = STORE_CAT_WRITE, .bytes = 1572864 * dt / 1000,
					    .calls = 24 * dt / 1000, .dur_ns = 1000000};
		r = store_interval_add(s, &iv);
	}
	if (r >= 0)
		r = store_commit(s);
	check("a job with a late reading stored", r == 0, "%s", store_error(s));
	struct store_diagnosis ld = {0};
	r = store_diagnose(s, &lj, &ld);
	check("late reading: diagnosed", r == 0, "r %d %s", r, store_error(s));
	char ph[256] = "";
	if (r == 0)
		phases_text(&ld, 1, ph, sizeof ph);
	eq_str("late reading: one phase of 11 s at 1.5 MiB/s (start, end, samples, bytes, bytes/s)", ph,
	       "101000-112000 11 17301504 1572864");
	store_diagnosis_free(&ld);

	/* an interval length no daemon wrote (a garbage batch on a central store: the largest int64)
	 * spreads its row over every sample before it, no further, and nothing overflows: 8 rows of
	 * 3 MB, the last over all 8 samples (7 of 3,375,000 B and a last of 375,000, which joins
	 * them: one phase of 8 samples and 24 MB) */
	struct store_job gj = {.job = "garbage", .host = "h9", .uid = 1000, .user = "u", .exe = "/bin/garbage",
			       .jobdir = "", .start_ms = 200000, .end_ms = 209000};
	struct store_proc gp;
	r = store_begin(s);
	if (r >= 0)
		r = put_job_of_one(s, &gj, 43, "/j/43.iost", &gp);
	for (int64_t t = 201000; t <= 208000 && r >= 0; t += 1000) {
		struct store_interval iv = {.t_ms = t, .dt_ms = t == 208000 ? INT64_MAX : 1000, .proc_key = gp.key,
					    .file_key = lf, .layer = LOG_LAYER_POSIX, .cat = STORE_CAT_WRITE,
					    .bytes = 3000000, .calls = 3, .dur_ns = 1000};
		r = store_interval_add(s, &iv);
	}
	if (r >= 0)
		r = store_commit(s);
	check("a job with a garbage interval length stored", r == 0, "%s", store_error(s));
	r = store_diagnose(s, &gj, &ld);
	ph[0] = 0;
	if (r == 0)
		phases_text(&ld, 0, ph, sizeof ph);
	eq_str("garbage interval length: the row over the 8 samples there are (start, end, samples, bytes)", ph,
	       "201000-209000 8 24000000");
	store_diagnosis_free(&ld);

	store_close(s);
	if (argc <= 1) {
		char path[128];
		snprintf(path, sizeof path, "%s/store.db", dir);
		unlink(path);
		snprintf(path, sizeof path, "%s/store.db-wal", dir);
		unlink(path);
		snprintf(path, sizeof path, "%s/store.db-shm", dir);
		unlink(path);
		rmdir(dir);
	}
	return failures ? 1 : 0;
}
