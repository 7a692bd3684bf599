/* SPDX-License-Identifier: MIT */
/*
 * The load generator of the scale benchmark (bench/scale, docs/BENCHMARKS.md "Scale"): recorded
 * daemon output replayed as N simulated nodes in the real wire format. The recording is a real
 * iostratad's Redis spool (its store's outbox, sink DMN_SPOOL_REDIS), one batch per interval.
 * Simulated node i (host node00001 ...) starts at a random point of the recording and plays it
 * in a loop, one batch per simulated second, each batch's header patched with the node's host,
 * its own seq (1, 2, ...) and the simulated second's end as t_ms; the records after the header
 * are the recording's bytes. Each node sends as the daemon does (src/daemon/redis.c): one message
 * per random delay in (0, delay], holding the batches of the seconds since its last send,
 * store_msg_pack'd and added with strm_xadd as the node's ACL user, fields and all.
 *
 * With --speed 0 simulated time runs as fast as the machine goes (a backlog: the rates of the
 * sends are then the generator's and Redis's, not the nodes'); with --speed 1 in real time, the
 * batches' t_ms being wall-clock ms, and --lag-file gets "host seq write_ms" per batch sent
 * (those whose interval ended at least one delay before the end, which every node has sent), the
 * write taken at the start of the batch's interval (the earliest write it can hold), so that
 * the time from a write to its row is an upper bound.
 *
 * It does not start Redis nor read anything back: the driver does (INFO, the store).
 *
 *   scale OUTBOX.db --nodes N --seconds T [--delay S] [--warmup S] [--speed X] [--max-entries M]
 *         [--redis ADDR --user U --password-file F --stream S --maxlen L] [--lag-file F] [--seed X]
 * Without --redis it only packs (the sizes, no sends). One line of key=value on stdout.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/sink.h"
#include "iostrata/format.h"
#include "store/batch.h"
#include "stream/redis.h"
#include "sys/varint.h"

/* One recorded batch: the bytes after its header, and what it holds. */
struct rec {
	unsigned char *body;
	size_t body_len, full_len;
	int64_t dt_ms;
	uint64_t records, rows, calls;
};

struct count_ctx {
	uint64_t records, rows, calls;
};

static int count_rec(void *ctx)
{
	((struct count_ctx *)ctx)->records++;
	return 0;
}
static int v_job(void *c, const struct store_job *j) { (void)j; return count_rec(c); }
static int v_proc(void *c, const struct store_proc *p) { (void)p; return count_rec(c); }
static int v_file(void *c, int64_t k, const char *p) { (void)k; (void)p; return count_rec(c); }
static int v_totals(void *c, int64_t k, const int64_t b[STORE_NCATS], const int64_t n[STORE_NCATS])
{
	(void)k; (void)b; (void)n;
	return count_rec(c);
}
static int v_node_sec(void *c, const struct store_node_sec *x) { (void)x; return count_rec(c); }
static int v_device(void *c, const struct store_device_sample *x) { (void)x; return count_rec(c); }
static int v_sample(void *c, const struct store_sample *x) { (void)x; return count_rec(c); }
static int v_dist(void *c, const struct store_dist *x) { (void)x; return count_rec(c); }
static int v_report(void *c, int64_t k, const char *t, const char *j) { (void)k; (void)t; (void)j; return count_rec(c); }
static int v_findings(void *c, int64_t k, const char *const *f, size_t n) { (void)k; (void)f; (void)n; return count_rec(c); }
static int v_interval(void *ctx, const struct store_interval *iv)
{
	struct count_ctx *c = ctx;
	c->records++;
	c->rows++;
	/* the application's calls: the capture layers (a kernel layer sees the same calls again) */
	if (iv->layer == LOG_LAYER_POSIX || iv->layer == LOG_LAYER_STDIO || iv->layer == LOG_LAYER_MPIIO)
		c->calls += (uint64_t)iv->calls;
	return 0;
}

static const struct store_batch_visitor counter = {
	.job = v_job, .sched = v_job, .proc = v_proc, .file = v_file, .interval = v_interval, .totals = v_totals,
	.node_sec = v_node_sec, .device = v_device, .sample = v_sample, .dist = v_dist, .report = v_report,
	.findings = v_findings,
};

/* The header's end: "IOSB" 1 | seq | t_ms | dt_ms | host. 0 and *body_off, or -EBADMSG. */
static int header_end(const unsigned char *p, size_t len, size_t *body_off, int64_t *dt_ms)
{
	const unsigned char *q = p + 5, *end = p + len;
	uint64_t seq, t, dt, hl;
	if (len < 5 || memcmp(p, STORE_BATCH_MAGIC, 4) || p[4] != STORE_BATCH_VERSION)
		return -EBADMSG;
	if (sys_varint_get(&q, end, &seq) || sys_varint_get(&q, end, &t) || sys_varint_get(&q, end, &dt) ||
	    sys_varint_get(&q, end, &hl) || hl == 0 || hl - 1 > (uint64_t)(end - q))
		return -EBADMSG;
	*dt_ms = sys_unzigzag(dt);
	*body_off = (size_t)(q - p) + (size_t)(hl - 1);
	return 0;
}

static int load(const char *path, struct rec **out, size_t *n)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	struct rec *v = NULL;
	size_t cap = 0, k = 0;
	int r = -EIO;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT data FROM outbox WHERE sink = ?1 ORDER BY seq", -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "scale: %s: %s\n", path, db ? sqlite3_errmsg(db) : "cannot open");
		goto err;
	}
	sqlite3_bind_int(st, 1, DMN_SPOOL_REDIS);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *d = sqlite3_column_blob(st, 0);
		size_t len = (size_t)sqlite3_column_bytes(st, 0), off;
		struct rec x = {0};
		char e[256];
		struct count_ctx c = {0};
		if (header_end(d, len, &off, &x.dt_ms) < 0 || store_batch_decode(d, len, &counter, &c, e, sizeof e) < 0) {
			fprintf(stderr, "scale: %s: recorded batch %zu is bad\n", path, k + 1);
			goto err;
		}
		x.body_len = len - off;
		x.full_len = len;
		x.records = c.records;
		x.rows = c.rows;
		x.calls = c.calls;
		if (!(x.body = malloc(x.body_len)))
			goto err;
		memcpy(x.body, d + off, x.body_len);
		if (k == cap) {
			cap = cap ? 2 * cap : 256;
			struct rec *nv = realloc(v, cap * sizeof *v);
			if (!nv) {
				free(x.body);
				goto err;
			}
			v = nv;
		}
		v[k++] = x;
	}
	if (!k) {
		fprintf(stderr, "scale: %s: no recorded batch in the Redis spool\n", path);
		goto err;
	}
	*out = v;
	*n = k;
	v = NULL;
	r = 0;
err:
	if (v)
		for (size_t i = 0; i < k; i++)
			free(v[i].body);
	free(v);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return r;
}

/* The batch of a node's second: the recording's body under a header of its own, in buf. */
static size_t patch(unsigned char *buf, const struct rec *x, const char *host, uint64_t seq, int64_t t_ms)
{
	size_t n = 0, hl = strlen(host);
	memcpy(buf, STORE_BATCH_MAGIC, 4);
	buf[4] = STORE_BATCH_VERSION;
	n = 5;
	n += sys_varint_put(buf + n, seq);
	n += sys_varint_put(buf + n, sys_zigzag(t_ms));
	n += sys_varint_put(buf + n, sys_zigzag(x->dt_ms));
	n += sys_varint_put(buf + n, hl + 1);
	memcpy(buf + n, host, hl);
	n += hl;
	memcpy(buf + n, x->body, x->body_len);
	return n + x->body_len;
}

/* A message read back as a worker reads it: n batches of host, seqs from first, each decoding. */
struct check_ctx {
	const char *host;
	uint64_t seq;
	size_t n;
};
static int check_batch(const void *b, size_t len, void *ctx)
{
	struct check_ctx *c = ctx;
	struct count_ctx cc = {0};
	char host[64], e[256];
	uint64_t seq;
	if (store_batch_peek(b, len, host, sizeof host, &seq) < 0 || strcmp(host, c->host) || seq != c->seq + c->n ||
	    store_batch_decode(b, len, &counter, &cc, e, sizeof e) < 0)
		return -EBADMSG;
	c->n++;
	return 0;
}
static int check_msg(const void *m, size_t len, const char *host, uint64_t first, size_t n)
{
	struct check_ctx c = {host, first, 0};
	char e[256];
	int r = store_msg_unpack(m, len, check_batch, &c, e, sizeof e);
	return r < 0 ? r : c.n == n ? 0 : -EBADMSG;
}

struct node {
	double next_s;   /* simulated time of its next send */
	uint64_t sent_s; /* seconds whose batch it has sent */
	uint64_t seq;
	uint32_t off; /* where in the recording it started */
};

static uint64_t rng = 88172645463325252ull;
static double uniform01(void) /* (0, 1] */
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)((rng >> 11) + 1) / 9007199254740992.0;
}

/* a min-heap of node indexes by next_s */
static struct node *nodes;
static uint32_t *heap;
static size_t heap_n;
static void heap_down(size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < heap_n && nodes[heap[l]].next_s < nodes[heap[m]].next_s)
			m = l;
		if (l + 1 < heap_n && nodes[heap[l + 1]].next_s < nodes[heap[m]].next_s)
			m = l + 1;
		if (m == i)
			return;
		uint32_t t = heap[i];
		heap[i] = heap[m];
		heap[m] = t;
		i = m;
	}
}

static double now_s(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void)
{
	fprintf(stderr, "usage: scale OUTBOX.db --nodes N --seconds T [--delay S] [--warmup S] [--speed X] [--max-entries M]\n"
			"       [--redis ADDR --user U --password-file F --stream S --maxlen L] [--lag-file F] [--seed X]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *db = NULL, *lag_path = NULL;
	struct strm_redis_conf rc = {.timeout_ms = 10000};
	char stream[256] = "iostrata:batches";
	unsigned long nnodes = 0, maxlen = 1000000000ul, max_entries = 0;
	double seconds = 0, delay = 30, speed = 0, warmup = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (a[0] != '-') {
			db = a;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--nodes"))
			nnodes = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--seconds"))
			seconds = strtod(v, NULL);
		else if (!strcmp(a, "--delay"))
			delay = strtod(v, NULL);
		else if (!strcmp(a, "--warmup"))
			warmup = strtod(v, NULL);
		else if (!strcmp(a, "--speed"))
			speed = strtod(v, NULL);
		else if (!strcmp(a, "--max-entries"))
			max_entries = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--redis"))
			snprintf(rc.addr, sizeof rc.addr, "%s", v);
		else if (!strcmp(a, "--user"))
			snprintf(rc.user, sizeof rc.user, "%s", v);
		else if (!strcmp(a, "--password-file"))
			snprintf(rc.password_file, sizeof rc.password_file, "%s", v);
		else if (!strcmp(a, "--stream"))
			snprintf(stream, sizeof stream, "%s", v);
		else if (!strcmp(a, "--maxlen"))
			maxlen = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--lag-file"))
			lag_path = v;
		else if (!strcmp(a, "--seed"))
			rng = strtoull(v, NULL, 10) * 2654435761u + 1;
		else
			usage();
	}
	if (!db || nnodes < 1 || nnodes > 999999 || seconds < 1 || delay <= 0 || speed < 0 || maxlen > UINT32_MAX)
		usage();

	struct rec *recs;
	size_t nrec;
	if (load(db, &recs, &nrec) < 0)
		return 1;
	size_t max_body = 0;
	for (size_t i = 0; i < nrec; i++)
		max_body = recs[i].body_len > max_body ? recs[i].body_len : max_body;

	/* the baseline of one message per interval: every recorded batch packed alone */
	uint64_t alone_bytes = 0, rec_calls = 0, rec_records = 0, rec_rows = 0, rec_raw = 0;
	for (size_t i = 0; i < nrec; i++) {
		unsigned char *b = malloc(max_body + 64);
		void *m;
		size_t bl, ml;
		if (!b)
			return 1;
		bl = patch(b, &recs[i], "node00001", i + 1, 1);
		struct store_batch_ref ref = {b, bl};
		if (store_msg_pack(&ref, 1, &m, &ml) < 0) {
			fprintf(stderr, "scale: cannot pack a message (zstd?)\n");
			return 1;
		}
		alone_bytes += ml;
		rec_raw += recs[i].full_len;
		rec_calls += recs[i].calls;
		rec_records += recs[i].records;
		rec_rows += recs[i].rows;
		free(m);
		free(b);
	}

	struct strm_redis *conn = NULL;
	char err[1024];
	if (rc.addr[0] && strm_redis_open(&rc, &conn, err, sizeof err) < 0) {
		fprintf(stderr, "scale: %s: %s\n", rc.addr, err);
		return 1;
	}
	FILE *lag = NULL;
	if (lag_path && !(lag = fopen(lag_path, "w"))) {
		fprintf(stderr, "scale: %s: %s\n", lag_path, strerror(errno));
		return 1;
	}

	nodes = calloc(nnodes, sizeof *nodes);
	heap = calloc(nnodes, sizeof *heap);
	size_t maxb = (size_t)(delay + 2) + 1;
	unsigned char *buf = malloc(maxb * (max_body + 64));
	struct store_batch_ref *refs = calloc(maxb, sizeof *refs);
	if (!nodes || !heap || !buf || !refs)
		return 1;
	for (size_t i = 0; i < nnodes; i++) {
		nodes[i].next_s = delay * uniform01();
		nodes[i].off = (uint32_t)(uniform01() * (double)nrec) % (uint32_t)nrec;
		heap[i] = (uint32_t)i;
	}
	heap_n = nnodes;
	for (size_t i = heap_n / 2 + 1; i-- > 0;)
		heap_down(i);

	/* simulated second j of the run ends at base_ms + j * 1000 */
	int64_t base_ms = (int64_t)((now_s(CLOCK_REALTIME) - warmup / (speed > 0 ? speed : 1)) * 1000);
	double t0 = now_s(CLOCK_MONOTONIC), late_max = 0;
	uint64_t msgs = 0, batches = 0, bytes = 0, calls = 0, records = 0, rows = 0;
	while (heap_n) {
		struct node *nd = &nodes[heap[0]];
		if (nd->next_s > seconds || (max_entries && msgs == max_entries))
			break;
		/* before the warm-up's end a node's sends are not made, so that every node has been
		 * through one full delay: the first message of a run starts at second 0 and is short */
		int send = nd->next_s >= warmup;
		if (speed > 0 && send) {
			double due = t0 + (nd->next_s - warmup) / speed, now = now_s(CLOCK_MONOTONIC);
			if (due > now) {
				struct timespec ts = {(time_t)(due - now), (long)(fmod(due - now, 1.0) * 1e9)};
				nanosleep(&ts, NULL);
			} else if (now - due > late_max)
				late_max = now - due;
		}
		char host[16];
		snprintf(host, sizeof host, "node%05u", heap[0] + 1);
		uint64_t upto = (uint64_t)floor(nd->next_s), first = nd->seq + 1;
		size_t n = 0, at = 0;
		uint64_t j;
		for (j = nd->sent_s + 1; j <= upto && n < maxb; j++, n++) {
			const struct rec *x = &recs[(nd->off + j) % nrec];
			int64_t t_ms = base_ms + (int64_t)j * 1000;
			size_t len = patch(buf + at, x, host, ++nd->seq, t_ms);
			refs[n] = (struct store_batch_ref){buf + at, len};
			at += len;
			if (send) {
				calls += x->calls;
				records += x->records;
				rows += x->rows;
			}
			/* only the batches every node has sent by the end: a later one waits for a send
			 * past the end, and leaving out only those would bias the lag down */
			if (lag && send && (double)j + delay + 1 <= seconds)
				fprintf(lag, "%s\t%" PRIu64 "\t%" PRId64 "\n", host, nd->seq, t_ms - x->dt_ms);
		}
		nd->sent_s = j - 1;
		if (n && send) { /* the daemon sends no empty message */
			void *m;
			size_t ml;
			if (store_msg_pack(refs, n, &m, &ml) < 0)
				return 1;
			if (msgs % 997 == 0 && check_msg(m, ml, host, first, n) < 0) {
				fprintf(stderr, "scale: a message of %s does not read back as sent\n", host);
				return 1;
			}
			if (conn && strm_xadd(conn, stream, (uint32_t)maxlen, host, first, nd->seq, n, m, ml, NULL, 0, err,
					      sizeof err) < 0) {
				fprintf(stderr, "scale: XADD: %s\n", err);
				return 1;
			}
			free(m);
			msgs++;
			batches += n;
			bytes += ml;
		}
		nd->next_s += delay * uniform01();
		heap_down(0);
	}
	double wall = now_s(CLOCK_MONOTONIC) - t0, cpu = now_s(CLOCK_PROCESS_CPUTIME_ID);
	if (lag && fclose(lag)) {
		fprintf(stderr, "scale: %s: %s\n", lag_path, strerror(errno));
		return 1;
	}
	strm_redis_close(conn);
	/* the recording (one node, one loop), then the run */
	/* --warmup: only what was sent is counted above; what it covers is the seconds after it */
	printf("rec_batches=%zu rec_calls=%" PRIu64 " rec_records=%" PRIu64 " rec_rows=%" PRIu64 " rec_raw_bytes=%" PRIu64
	       " rec_alone_bytes=%" PRIu64 " nodes=%lu sim_s=%g delay_s=%g speed=%g messages=%" PRIu64
	       " batches=%" PRIu64 " bytes=%" PRIu64 " calls=%" PRIu64 " records=%" PRIu64 " rows=%" PRIu64
	       " wall_s=%.3f cpu_s=%.3f late_max_s=%.3f base_ms=%" PRId64 "\n",
	       nrec, rec_calls, rec_records, rec_rows, rec_raw, alone_bytes, nnodes, seconds, delay, speed, msgs, batches,
	       bytes, calls, records, rows, wall, cpu, late_max, base_ms);
	return 0;
}
