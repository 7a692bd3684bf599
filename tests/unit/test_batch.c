/* SPDX-License-Identifier: MIT */
/*
 * Node batches (src/store/batch.c), what leaves a node for Redis, InfluxDB and Prometheus and
 * what an ingest worker applies: every record kind survives the format exactly (decoding and
 * encoding again gives the same bytes); every cut, every flipped byte and every key used before
 * its definition is refused whole, with no callback run and the offset named; applying a batch
 * to a store gives the store the batch's exact figures under the store's own keys.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "check.h"
#include "iostrata/counters.h"
#include "store/batch.h"

/* ---- a visitor that encodes what it sees into a second batch ---- */
struct again {
	struct store_batch *b;
	char *path[16];
	int64_t key[16];
	size_t nfiles;
	unsigned calls;
};

static int ag_begin(void *ctx, const char *host, uint64_t seq, int64_t t_ms, int64_t dt_ms)
{
	struct again *a = ctx;
	store_batch_start(a->b, host, seq, t_ms, dt_ms);
	a->calls++;
	return 0;
}
static int ag_job(void *ctx, const struct store_job *j) { ((struct again *)ctx)->calls++; return store_batch_job(((struct again *)ctx)->b, j); }
static int ag_sched(void *ctx, const struct store_job *j) { ((struct again *)ctx)->calls++; return store_batch_sched(((struct again *)ctx)->b, j); }
static int ag_proc(void *ctx, const struct store_proc *p) { ((struct again *)ctx)->calls++; return store_batch_proc(((struct again *)ctx)->b, p); }
static int ag_file(void *ctx, int64_t key, const char *path)
{
	struct again *a = ctx;
	a->calls++;
	if (a->nfiles < 16) {
		a->key[a->nfiles] = key;
		a->path[a->nfiles++] = strdup(path);
	}
	return 0;
}
static int ag_interval(void *ctx, const struct store_interval *iv)
{
	struct again *a = ctx;
	a->calls++;
	for (size_t i = 0; i < a->nfiles; i++)
		if (a->key[i] == iv->file_key)
			return store_batch_interval(a->b, iv, a->path[i]);
	return -1;
}
static int ag_totals(void *ctx, int64_t k, const int64_t b[STORE_NCATS], const int64_t c[STORE_NCATS])
{
	((struct again *)ctx)->calls++;
	return store_batch_totals(((struct again *)ctx)->b, k, b, c);
}
static int ag_node(void *ctx, const struct store_node_sec *ns) { ((struct again *)ctx)->calls++; return store_batch_node_sec(((struct again *)ctx)->b, ns); }
static int ag_device(void *ctx, const struct store_device_sample *d) { ((struct again *)ctx)->calls++; return store_batch_device(((struct again *)ctx)->b, d); }
static int ag_sample(void *ctx, const struct store_sample *x) { ((struct again *)ctx)->calls++; return store_batch_sample(((struct again *)ctx)->b, x); }
static int ag_dist(void *ctx, const struct store_dist *x) { ((struct again *)ctx)->calls++; return store_batch_dist(((struct again *)ctx)->b, x); }
static int ag_report(void *ctx, int64_t k, const char *t, const char *j) { ((struct again *)ctx)->calls++; return store_batch_report(((struct again *)ctx)->b, k, t, j); }
static int ag_findings(void *ctx, int64_t k, const char *const *f, size_t n) { ((struct again *)ctx)->calls++; return store_batch_findings(((struct again *)ctx)->b, k, f, n); }

static int ag_run(void *ctx, const struct store_run *x)
{
	struct again *a = ctx;
	a->calls++;
	for (size_t i = 0; i < a->nfiles; i++)
		if (a->key[i] == x->file_key)
			return store_batch_run(a->b, x, a->path[i]);
	return -1;
}

static const struct store_batch_visitor again_v = {
	ag_begin, ag_job, ag_sched, ag_proc, ag_file, ag_interval, ag_totals, ag_node, ag_device, ag_sample, ag_dist,
	ag_report, ag_findings, ag_run,
};

/* The batch of sample_batch in the form of version v < 3 (its distribution without its timed
 * count, the one byte 77 after its requests): its new length, 0 when the record is not found. */
static size_t before_timed(unsigned char *m, size_t len, unsigned v)
{
	static const char rec[] = "write\xe8\x07\x4d"; /* op, requests 1000, timed 77 */
	unsigned char *at = memmem(m, len, rec, sizeof rec - 1);
	if (!at)
		return 0;
	at += sizeof rec - 2;
	memmove(at, at + 1, len - (size_t)(at + 1 - m));
	m[4] = (unsigned char)v;
	return len - 1;
}

static struct store_dist got_dist;
static int keep_dist(void *ctx, const struct store_dist *x)
{
	(void)ctx;
	got_dist = *x;
	return 0;
}

/* One batch of every kind: job 7 (two processes 11, 12), files 3 and 5; seq. */
static const void *sample_batch(struct store_batch *b, uint64_t seq, int64_t t_ms, int64_t bytes, size_t *len)
{
	store_batch_start(b, "node-a", seq, t_ms, 1000);
	struct store_job j = {.key = 7, .job = "slurm-42", .uid = 1000, .user = "ann", .exe = "/bin/app",
			      .jobdir = "/scratch/j", .start_ms = t_ms - 5000, .running = 1};
	store_batch_job(b, &j);
	j.sched = "slurm", j.sched_name = "ckpt", j.sched_state = "RUNNING", j.sched_nodes = "n[1-4]";
	j.submit_ms = 1, j.sched_start_ms = 2, j.sched_end_ms = 0;
	store_batch_sched(b, &j);
	struct store_proc p = {.key = 11, .job_key = 7, .pid = 4242, .rank = 0, .start_ns = 123456789012345ull,
			       .start_ticks = 99, .uid = 1000, .exe = "/bin/app", .live_path = "/dev/shm/x",
			       .start_ms = t_ms - 5000, .state = STORE_PROC_LIVE};
	store_batch_proc(b, &p);
	p.key = 12, p.pid = -1, p.rank = 1, p.start_ns = 5, p.final_path = "/scratch/j/y.iost", p.end_ms = t_ms,
	p.state = STORE_PROC_KILLED;
	store_batch_proc(b, &p);
	struct store_interval iv = {.t_ms = t_ms, .dt_ms = 1000, .proc_key = 11, .file_key = 3, .layer = 1,
				    .cat = STORE_CAT_WRITE, .bytes = bytes, .calls = 16, .dur_ns = 777};
	store_batch_interval(b, &iv, "/scratch/j/out.dat");
	iv.proc_key = 12, iv.cat = STORE_CAT_READ, iv.bytes = 4096, iv.calls = 1;
	store_batch_interval(b, &iv, "/scratch/j/out.dat");
	iv.file_key = 5, iv.cat = STORE_CAT_META, iv.bytes = 0, iv.calls = 3, iv.dur_ns = -40; /* a correction */
	store_batch_interval(b, &iv, "/scratch/j/in.dat");
	/* runs: 16 contiguous 1 MiB writes merged into one; a failed close (no offset) */
	struct store_run run = {.proc_key = 11, .file_key = 3, .tid = 4242, .idx = 0, .layer = 1, .op = LOG_OP_WRITE,
				.offset = 0, .size = 1048576, .count = 16, .start_ns = t_ms * 1000000 - 900000000,
				.end_ns = t_ms * 1000000 - 100000000, .busy_ns = 700000000, .min_ns = 40000000};
	store_batch_run(b, &run, "/scratch/j/out.dat");
	run.proc_key = 12, run.file_key = 5, run.tid = 7, run.idx = 41, run.op = LOG_OP_CLOSE, run.offset = -1;
	run.size = 0, run.count = 1, run.start_ns = t_ms * 1000000 + 5, run.end_ns = run.start_ns + 10;
	run.busy_ns = run.min_ns = 10, run.result = -EBADF;
	store_batch_run(b, &run, "/scratch/j/in.dat");
	int64_t tb[STORE_NCATS] = {4096, bytes, 0}, tc[STORE_NCATS] = {1, 16, 3};
	store_batch_totals(b, 7, tb, tc);
	struct store_node_sec ns = {.layer = 1, .bytes_read = 4096, .bytes_written = (uint64_t)bytes, .reads = 1,
				    .writes = 16, .meta_ops = 3};
	ns.read_hist[12] = 1, ns.write_hist[16] = 16, ns.write_hist[31] = 1ull << 62;
	store_batch_node_sec(b, &ns);
	struct store_device_sample d = {.device = "loop7", .major = 7, .minor = 7, .reads = 1, .sectors_read = 8,
					.writes = 2, .sectors_written = 1024, .in_flight = 3, .flushes = 1};
	store_batch_device(b, &d);
	struct store_sample x = {.source = "nfs", .instance = "/home", .metric = "rtt_ms", .value = -3, .gauge = 1};
	store_batch_sample(b, &x);
	struct store_dist ds = {.t_ms = t_ms - 10, .server = "block loop7", .op = "write", .requests = 1000, .timed = 77};
	ds.wait[3] = 76, ds.service[20] = 1;
	store_batch_dist(b, &ds);
	store_batch_report(b, 7, "report text\n", "{\"a\":1}");
	const char *f[] = {"{\"id\":\"small-writes\"}", "{\"id\":\"x\"}"};
	store_batch_findings(b, 7, f, 2);
	return store_batch_finish(b, len);
}

static unsigned counted;
static int count_any(void *ctx, const struct store_job *j)
{
	(void)ctx, (void)j;
	counted++;
	return 0;
}

struct sums {
	uint64_t written, whist16;
	unsigned n;
};

static int node_row(const struct store_node_sec *ns, void *ctx)
{
	struct sums *x = ctx;
	x->written += ns->bytes_written;
	x->whist16 += ns->write_hist[16];
	x->n++;
	return 0;
}

struct seqs {
	uint64_t v[8];
	unsigned n;
};

static int list_row(uint64_t seq, int64_t t_ms, const void *data, size_t len, void *ctx)
{
	struct seqs *x = ctx;
	(void)t_ms, (void)data, (void)len;
	if (x->n < 8)
		x->v[x->n++] = seq;
	return 0;
}

static int total_row(const struct store_job *j, void *ctx)
{
	struct store_job *out = ctx;
	*out = *j;
	out->job = out->host = out->user = out->exe = out->jobdir = NULL;
	out->sched = out->sched_name = out->sched_state = out->sched_nodes = NULL;
	return 0;
}

int main(void)
{
	struct store_batch *b = store_batch_new(), *b2 = store_batch_new();
	size_t len = 0, len2 = 0;
	const void *data = sample_batch(b, 9, 1700000000000, 16 * 1048576, &len);
	check("a batch of every kind encodes", data != NULL && len > 0, "finish failed");

	/* IOSTRATA_FUZZ_SEEDS=DIR: this batch and a message of it become the batch fuzzer's seeds */
	const char *seeds = getenv("IOSTRATA_FUZZ_SEEDS");
	if (seeds) {
		char p[512];
		struct store_batch_ref ref = {data, len};
		void *msg;
		size_t mlen;
		snprintf(p, sizeof p, "%s/batch", seeds);
		FILE *f = fopen(p, "w");
		if (f) {
			fwrite(data, 1, len, f);
			fclose(f);
		}
		if (store_msg_pack(&ref, 1, &msg, &mlen) == 0) {
			snprintf(p, sizeof p, "%s/message", seeds);
			if ((f = fopen(p, "w"))) {
				fwrite(msg, 1, mlen, f);
				fclose(f);
			}
			free(msg);
		}
	}
	struct again a = {.b = b2};
	char err[256];
	int r = store_batch_decode(data, len, &again_v, &a, err, sizeof err);
	check("it decodes", r == 0, "%d %s", r, err);
	eq_u64("one callback per record (begin, 1 job, 1 sched, 2 procs, 2 files, 3 intervals, 2 runs, 7 more)",
	       a.calls, 19);
	const void *data2 = store_batch_finish(b2, &len2);
	check("decoded and encoded again: the same bytes", data2 && len2 == len && !memcmp(data, data2, len),
	      "%zu vs %zu bytes", len2, len);
	for (size_t i = 0; i < a.nfiles; i++)
		free(a.path[i]);

	char host[64];
	uint64_t seq = 0;
	check("peek: host and seq", store_batch_peek(data, len, host, sizeof host, &seq) == 0 && seq == 9 &&
	      !strcmp(host, "node-a"), "seq %llu", (unsigned long long)seq);

	/* every cut is refused whole: no callback runs */
	struct store_batch_visitor cv = {.job = count_any};
	int cuts_ok = 1;
	counted = 0;
	for (size_t n = 0; n < len; n++)
		cuts_ok &= store_batch_decode(data, n, &cv, NULL, err, sizeof err) == -EBADMSG;
	check("every cut of the batch refused", cuts_ok, "a cut decoded");
	eq_u64("and no callback ran for any", counted, 0);
	r = store_batch_decode(data, len - 3, NULL, NULL, err, sizeof err);
	check("the error names a byte offset", strstr(err, "batch byte ") == err, "\"%s\"", err);

	/* flipped bytes: refused or decoded, never a crash (under ASan in make test-san) */
	unsigned char *m = malloc(len);
	unsigned decoded = 0, refused = 0;
	for (size_t i = 0; i < len; i++)
		for (unsigned v = 0; v < 4; v++) {
			static const unsigned char pat[] = {0x01, 0x80, 0xff, 0x7f};
			memcpy(m, data, len);
			m[i] ^= pat[v];
			r = store_batch_decode(m, len, &cv, NULL, err, sizeof err);
			decoded += r == 0;
			refused += r == -EBADMSG;
		}
	eq_u64("every flipped byte: refused or decoded, nothing else", decoded + refused, 4 * (uint64_t)len);
	check("flips in the magic or the version refused", refused >= 4 * 5, "%u refused", refused);
	memcpy(m, data, len);
	m[0] = 'X';
	r = store_batch_decode(m, len, NULL, NULL, err, sizeof err);
	check("not a batch: said so", r == -EBADMSG && strstr(err, "not a node batch"), "%s", err);
	memcpy(m, data, len);
	m[4] = STORE_BATCH_VERSION + 1;
	r = store_batch_decode(m, len, NULL, NULL, err, sizeof err);
	check("another version: said so", r == -EBADMSG && strstr(err, "batch version 4"), "%s", err);
	struct store_batch_visitor dv = {.dist = keep_dist};
	r = store_batch_decode(data, len, &dv, NULL, err, sizeof err);
	check("a distribution's requests and timed requests", r == 0 && got_dist.requests == 1000 && got_dist.timed == 77,
	      "%s: %llu, %llu", err, (unsigned long long)got_dist.requests, (unsigned long long)got_dist.timed);
	for (unsigned v = 1; v < 3; v++) {
		memcpy(m, data, len);
		size_t n = before_timed(m, len, v);
		memset(&got_dist, 0, sizeof got_dist);
		r = n ? store_batch_decode(m, n, &dv, NULL, err, sizeof err) : -1;
		char name[160];
		snprintf(name, sizeof name, "a batch of version %u (a spool made before %s) still decodes, its distribution's "
			 "requests all timed", v, v == 1 ? "span records" : "timed requests");
		check(name, r == 0 && got_dist.requests == 1000 && got_dist.timed == 1000 && got_dist.wait[3] == 76 &&
			      got_dist.service[20] == 1, "%s", n ? err : "the record not found");
	}
	struct store_batch *bt = store_batch_new();
	store_batch_start(bt, "n1", 1, 1000, 1000);
	struct store_dist over = {.t_ms = 990, .server = "block loop7", .op = "write", .requests = 1000, .timed = 1001};
	store_batch_dist(bt, &over);
	size_t lt;
	const void *dt = store_batch_finish(bt, &lt);
	memset(&got_dist, 0, sizeof got_dist);
	r = store_batch_decode(dt, lt, &dv, NULL, err, sizeof err);
	check("a distribution with more timed requests than requests: refused, said so, nothing taken",
	      r == -EBADMSG && strstr(err, "timed requests 1001 out of range (at most 1000)") && !strchr(err, '\n') &&
		      got_dist.requests == 0,
	      "%d %s", r, err);
	store_batch_free(bt);
	free(m);
	unsigned char *longer = malloc(len + 1);
	memcpy(longer, data, len);
	longer[len] = 0;
	r = store_batch_decode(longer, len + 1, NULL, NULL, err, sizeof err);
	check("a byte after the end record: refused", r == -EBADMSG && strstr(err, "after the end"), "%s", err);
	free(longer);

	/* lazy jobs: carried only when a record uses them */
	store_batch_start(b2, "node-a", 2, 0, 1000);
	struct store_job lj = {.key = 7, .job = "used", .uid = 1};
	store_batch_job_lazy(b2, &lj);
	lj.key = 8, lj.job = "idle";
	store_batch_job_lazy(b2, &lj);
	struct store_proc lp = {.key = 3, .job_key = 7, .pid = 1};
	store_batch_proc(b2, &lp);
	eq_u64("lazy jobs: 2 records (the used job, its process)", store_batch_records(b2), 2);
	data2 = store_batch_finish(b2, &len2);
	struct store_batch *b3 = store_batch_new();
	struct again a2 = {.b = b3};
	r = store_batch_decode(data2, len2, &again_v, &a2, err, sizeof err);
	check("lazy jobs: the batch decodes (the job before its process)", r == 0, "%s", err);
	eq_u64("lazy jobs: begin, 1 job, 1 process", a2.calls, 3);
	store_batch_free(b3);
	store_batch_start(b2, "node-a", 3, 0, 1000);
	store_batch_job_lazy(b2, &lj);
	eq_u64("an interval where nothing used a job: no record", store_batch_records(b2), 0);

	/* interval rows of a statistics interval (10 s) in the batch of a 1 s interval: one span
	 * record before the first, their dt_ms given back to each; node-seconds keep the batch's */
	store_batch_start(b2, "node-a", 4, 5000, 1000);
	struct store_job sj = {.key = 1, .job = "j", .uid = 1};
	struct store_proc spr = {.key = 2, .job_key = 1, .pid = 1};
	store_batch_job(b2, &sj);
	store_batch_proc(b2, &spr);
	struct store_interval siv = {.t_ms = 5000, .dt_ms = 10000, .proc_key = 2, .file_key = 4, .layer = 1, .cat = 1,
				     .bytes = 7, .calls = 1};
	store_batch_interval(b2, &siv, "/span");
	siv.cat = 0;
	store_batch_interval(b2, &siv, "/span");
	size_t nospan = 0;
	data2 = store_batch_finish(b2, &len2);
	struct store_batch *b4 = store_batch_new();
	struct again a4 = {.b = b4};
	r = store_batch_decode(data2, len2, &again_v, &a4, err, sizeof err);
	check("span: the batch decodes", r == 0, "%s", err);
	const void *data4 = store_batch_finish(b4, &nospan);
	check("span: decoded and encoded again, the same bytes (each row's dt_ms given back, or no span)",
	      data4 && nospan == len2 && !memcmp(data2, data4, len2), "%zu vs %zu bytes", nospan, len2);
	for (size_t i = 0; i < a4.nfiles; i++)
		free(a4.path[i]);
	unsigned char *v1 = malloc(len2);
	memcpy(v1, data2, len2);
	v1[4] = 1;
	r = store_batch_decode(v1, len2, NULL, NULL, err, sizeof err);
	check("span: refused in a batch of version 1", r == -EBADMSG && strstr(err, "span record in a batch of version 1"),
	      "%s", err);
	free(v1);
	store_batch_free(b4);

	/* a key used before it is defined */
	store_batch_start(b2, "node-a", 1, 0, 1000);
	struct store_interval iv = {.proc_key = 99, .file_key = 1, .layer = 1, .bytes = 1, .calls = 1};
	store_batch_interval(b2, &iv, "/f");
	data2 = store_batch_finish(b2, &len2);
	r = store_batch_decode(data2, len2, NULL, NULL, err, sizeof err);
	check("an undefined process key: refused", r == -EBADMSG && strstr(err, "process key 99 used before"), "%s",
	      err);

	/* applied to a store: the figures, under the store's keys; a second batch adds */
	char dir[] = "/tmp/iostrata-batch.XXXXXX", path[256];
	check("temp dir", mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(path, sizeof path, "sqlite:%s/s.db", dir);
	struct store *s = NULL;
	r = store_open(path, STORE_CREATE, &s, err, sizeof err);
	check("store opens", r == 0, "%s", err);
	/* the store's keys differ from the node's: a job stored first takes key 1 */
	struct store_job other = {.job = "other", .host = "node-b", .uid = 5};
	store_begin(s);
	store_job_put(s, &other);
	r = store_batch_apply(s, data, len, NULL, err, sizeof err);
	check("batch 9 applies", r == 0, "%s", err);
	data = sample_batch(b, 10, 1700000001000, 1000, &len);
	uint64_t nrec = 0;
	r = store_batch_apply(s, data, len, &nrec, err, sizeof err);
	check("batch 10 applies", r == 0, "%s", err);
	eq_u64("its 18 records counted", nrec, 18);
	store_commit(s);
	struct store_job got = {0};
	struct store_job_filter f = {.uid = STORE_ANY_UID, .job = "slurm-42"};
	store_jobs(s, &f, total_row, &got);
	eq_u64("job written: the two batches' bytes", got.bytes[STORE_CAT_WRITE], 16 * 1048576 + 1000);
	eq_u64("job read bytes", got.bytes[STORE_CAT_READ], 8192);
	eq_u64("job writes", got.calls[STORE_CAT_WRITE], 32);
	eq_u64("job metadata ops", got.calls[STORE_CAT_META], 6);
	eq_u64("its two processes", got.nprocs, 2);
	check("its key is the store's", got.key == 2, "key %lld", (long long)got.key);
	char *rep = NULL;
	store_job_report(s, got.key, 0, &rep);
	eq_str("its report", rep, "report text\n");
	free(rep);
	struct store_node_filter nf = {.host = "node-a"};
	struct sums sums = {0};
	store_node_secs(s, &nf, node_row, &sums);
	eq_u64("node-seconds: two rows", sums.n, 2);
	eq_u64("node-seconds: bytes written", sums.written, 16 * 1048576 + 1000);
	eq_u64("node-seconds: a histogram bucket", sums.whist16, 32);

	/* runs: batch 10 gave batch 9's two runs again: stored once, exactly as sent */
	{
		sqlite3 *db = NULL;
		sqlite3_stmt *st = NULL;
		char q[512];
		snprintf(q, sizeof q, "%s/s.db", dir);
		sqlite3_open_v2(q, &db, SQLITE_OPEN_READONLY, NULL);
		sqlite3_prepare_v2(db,
				   "SELECT count(*), group_concat(printf('%s:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d', f.path, r.tid,"
				   " r.idx, r.op, r.off, r.size, r.count, r.end_ns - r.start_ns, r.busy_ns, r.min_ns, r.result,"
				   " r.t_ms), ' ') FROM (SELECT * FROM runs ORDER BY tid DESC) r JOIN files f ON f.id = r.file_id",
				   -1, &st, NULL);
		int have = st && sqlite3_step(st) == SQLITE_ROW;
		eq_u64("runs: two rows after both batches", have ? (uint64_t)sqlite3_column_int64(st, 0) : 0, 2);
		snprintf(q, sizeof q, "/scratch/j/out.dat:4242:0:%d:0:1048576:16:800000000:700000000:40000000:0:1700000000000 "
				      "/scratch/j/in.dat:7:41:%d:-1:0:1:10:10:10:%d:1700000000000",
			 LOG_OP_WRITE, LOG_OP_CLOSE, -EBADF);
		eq_str("runs: the first batch's, field for field", have ? (const char *)sqlite3_column_text(st, 1) : "", q);
		sqlite3_finalize(st);
		sqlite3_close(db);
	}

	/* the outbox: sequences, a bounded spool that counts what it drops, delivery */
	uint64_t q1 = 0, q2 = 0, nb, bytes, dropped;
	store_begin(s);
	store_batch_seq_next(s, &q1);
	store_batch_seq_next(s, &q2);
	check("batch sequences 1, 2", q1 == 1 && q2 == 2, "%llu %llu", (unsigned long long)q1, (unsigned long long)q2);
	char blob[100] = {0};
	for (uint64_t q = 1; q <= 5; q++)
		store_outbox_put(s, 2, q, (int64_t)q, blob, sizeof blob, 350);
	store_outbox_put(s, 1, 1, 1, blob, 10, 350);
	store_commit(s);
	store_outbox_state(s, 2, &nb, &bytes, &dropped);
	check("a spool of 350 bytes keeps the last 3 of 5 batches of 100, counts 2 dropped",
	      nb == 3 && bytes == 300 && dropped == 2, "%llu batches %llu bytes %llu dropped", (unsigned long long)nb,
	      (unsigned long long)bytes, (unsigned long long)dropped);
	struct seqs seqs = {{0}, 0};
	store_outbox_list(s, 2, 250, list_row, &seqs);
	check("list: in order, up to the byte bound", seqs.n == 2 && seqs.v[0] == 3 && seqs.v[1] == 4, "%u: %llu %llu",
	      seqs.n, (unsigned long long)seqs.v[0], (unsigned long long)seqs.v[1]);
	store_begin(s);
	store_outbox_del(s, 2, 4);
	store_commit(s);
	store_outbox_state(s, 2, &nb, &bytes, &dropped);
	check("delivered up to 4: batch 5 waits", nb == 1 && bytes == 100 && dropped == 2, "%llu %llu",
	      (unsigned long long)nb, (unsigned long long)bytes);
	store_outbox_state(s, 1, &nb, &bytes, &dropped);
	check("another sink's spool apart", nb == 1 && bytes == 10 && dropped == 0, "%llu", (unsigned long long)nb);
	store_begin(s);
	int m1 = store_batch_mark(s, "node-a", 9), m2 = store_batch_mark(s, "node-a", 9),
	    m3 = store_batch_mark(s, "node-b", 9);
	store_commit(s);
	check("a batch marked once: new, then seen; another host's is new", m1 == 0 && m2 == 1 && m3 == 0,
	      "%d %d %d", m1, m2, m3);
	store_close(s);
	snprintf(path, sizeof path, "%s/s.db", dir);
	unlink(path);
	strcat(path, "-wal");
	unlink(path);
	path[strlen(path) - 4] = 0;
	strcat(path, "-shm");
	unlink(path);
	rmdir(dir);
	store_batch_free(b);
	store_batch_free(b2);
	return failures ? 1 : 0;
}
