/* SPDX-License-Identifier: MIT */
/*
 * The ingest worker's loop (ingest.h).
 */
#include "stream/ingest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/batch.h"
#include "store/diagnosis.h"
#include "store/store.h"

struct worker {
	const struct strm_ingest_conf *c;
	struct store *st;
	struct strm_redis *r[STRM_MAX_GROUPS];
	int down[STRM_MAX_GROUPS];          /* said once while a Redis cannot be reached */
	struct strm_ingest_stats *stats;
	volatile sig_atomic_t *stop;
	int store_down;
	int64_t diag_since; /* the diagnosis of ended jobs: reports from then on (0: all, once) */
	int diag_failing;
	double diag_last;   /* when it last looked (now_s) */
};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("iostrata ingest: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleeps ms, or less when asked to stop. */
static void nap(const struct worker *w, int ms)
{
	for (; ms > 0 && !*w->stop; ms -= 100)
		usleep((useconds_t)(ms < 100 ? ms : 100) * 1000);
}

/* ---- one entry ---- */

/* Each batch of a message, inside the entry's transaction: checked whole first (a bad one makes
 * the entry a dead letter, and the transaction's rollback takes back the batches before it), then
 * marked, then applied. The message is decompressed once. */
struct apply_ctx {
	struct worker *w;
	char *err;
	size_t errlen;
	size_t n;
	int store_failed; /* the store, not the message, failed: the entry waits */
};

static int apply_batch(const void *batch, size_t len, void *ctx)
{
	struct apply_ctx *ac = ctx;
	struct worker *w = ac->w;
	char host[256], e[256];
	uint64_t seq, records = 0;
	ac->n++;
	if (store_batch_decode(batch, len, NULL, NULL, e, sizeof e) < 0 ||
	    store_batch_peek(batch, len, host, sizeof host, &seq) < 0) {
		snprintf(ac->err, ac->errlen, "batch %zu: %s", ac->n, e);
		return -EBADMSG;
	}
	int r = store_batch_mark(w->st, host, seq);
	if (r == 0)
		r = store_batch_apply(w->st, batch, len, &records, ac->err, ac->errlen);
	if (r < 0) {
		snprintf(ac->err, ac->errlen, "%s", store_error(w->st));
		ac->store_failed = 1;
		return r;
	}
	w->stats->batches++;
	if (r == 1) /* applied before: delivered twice, counted once */
		w->stats->duplicates++;
	w->stats->records += records;
	return 0;
}

/* The jobs whose end (and report) an entry brought are diagnosed and their results stored
 * (docs/DIAGNOSIS.md), after the entry's commit, once the rows of every node of the job are in
 * (STORE_DIAG_WAIT_NODES: the worker writes a central store); a failure is said once and does not
 * keep the entry from being acknowledged: the job stays pending and is diagnosed after the next
 * entry. Also every STRM_DIAGNOSE_IDLE_S while no entry comes: a job waiting for a node that
 * never reports is due by the clock, not by an entry. */
static void diagnose_ended(struct worker *w)
{
	struct timespec ts;
	size_t done = 0;
	if (!w->st)
		return;
	w->diag_last = now_s();
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	int r = store_diagnose_pending(w->st, &w->diag_since, STRM_DIAGNOSE_PER_ENTRY, now, STORE_DIAG_WAIT_NODES,
				       &done);
	if (r < 0 && !w->diag_failing)
		say("diagnosing ended jobs: %s", r == -ENOMEM ? strerror(-r) : store_error(w->st));
	w->diag_failing = r < 0;
}

/* 0 when the entry is done (applied, or a dead letter): it may be acknowledged; -errno when the
 * store failed (the entry waits). */
static int take_entry(struct worker *w, int g, const struct strm_entry *e)
{
	char err[512] = "";
	const struct strm_ingest_conf *c = w->c;
	if (!e->has_data) {
		/* trimmed from the stream while pending: nothing left to apply */
		snprintf(err, sizeof err, "entry without data (trimmed while pending, or not the daemon's)");
		goto dead;
	}
	int r, bad = 0;
	struct apply_ctx ac = {w, err, sizeof err, 0, 0};
	/* a store whose connection broke is opened again (the server came back) */
	if (!w->st && (r = store_open(c->store, STORE_CREATE, &w->st, err, sizeof err)) < 0)
		w->st = NULL;
	else if ((r = store_begin(w->st)) >= 0) {
		r = store_msg_unpack(e->data, e->len, apply_batch, &ac, err, sizeof err);
		/* the message, or one of its batches, is bad (not the store) */
		bad = r == -EBADMSG && !ac.store_failed;
		if (r == -ENOTSUP) {
			store_rollback(w->st);
			snprintf(err, sizeof err, "zstd cannot be loaded: messages cannot be read");
			return -ENOTSUP;
		}
		if (r >= 0)
			r = store_commit(w->st);
	} else
		snprintf(err, sizeof err, "%s", store_error(w->st));
	if (bad) {
		store_rollback(w->st);
		goto dead;
	}
	if (r < 0) {
		if (w->st) {
			store_rollback(w->st);
			store_close(w->st); /* whatever broke, the next try starts from a new connection */
			w->st = NULL;
		}
		w->stats->store_failures++;
		if (!w->store_down)
			say("the store cannot be written (%s); entries wait in Redis, retried", err);
		w->store_down = 1;
		return r;
	}
	if (w->store_down)
		say("the store: writing again");
	w->store_down = 0;
	w->stats->entries++;
	diagnose_ended(w);
	return 0;
dead:
	w->stats->dead++;
	say("entry %s of %s (node %s) to the dead-letter stream: %s", e->id, c->redis[g].addr, e->node ? e->node : "?",
	    err);
	{
		char e2[512];
		if (strm_dead_letter(w->r[g], c->stream, e->id, e->node, err, e->data, e->len, e2, sizeof e2) < 0) {
			say("%s", e2);
			return -EIO; /* not acknowledged: it stays pending, and is looked at again */
		}
	}
	return 0;
}

struct group_ctx {
	struct worker *w;
	int g;
	int failed;
};

static int on_entry(const struct strm_entry *e, void *ctx)
{
	struct group_ctx *gc = ctx;
	struct worker *w = gc->w;
	char err[512];
	int r;
	/* the store failing: the same entry again after a back-off (it is this consumer's) */
	for (int backoff = 250; (r = take_entry(w, gc->g, e)) < 0 && !*w->stop;) {
		if (r == -ENOTSUP)
			return r;
		nap(w, backoff);
		backoff = backoff < 16000 ? backoff * 2 : 30000;
	}
	if (r < 0)
		return r; /* stopping: left pending, claimed later */
	if (strm_ack(w->r[gc->g], w->c->stream, w->c->group, e->id, err, sizeof err) < 0) {
		say("%s", err);
		gc->failed = 1;
		return -EIO;
	}
	return 0;
}

/* Connects group g when it is not: 0 or -1 (said once). */
static int connect_group(struct worker *w, int g)
{
	char err[512];
	if (w->r[g])
		return 0;
	if (strm_redis_open(&w->c->redis[g], &w->r[g], err, sizeof err) < 0 ||
	    strm_group_create(w->r[g], w->c->stream, w->c->group, err, sizeof err) < 0) {
		strm_redis_close(w->r[g]);
		w->r[g] = NULL;
		if (!w->down[g])
			say("%s; tried again", err);
		w->down[g] = 1;
		return -1;
	}
	if (w->down[g])
		say("redis %s: reading again", w->c->redis[g].addr);
	w->down[g] = 0;
	return 0;
}

/* One pass over group g: claim a dead worker's entries, then read new ones. The number of
 * entries taken, or -1 (the connection was dropped). */
static int pass(struct worker *w, int g, int block_ms)
{
	char err[512];
	struct group_ctx gc = {w, g, 0};
	if (connect_group(w, g) < 0)
		return -1;
	int n = strm_autoclaim(w->r[g], w->c->stream, w->c->group, w->c->consumer, w->c->claim_idle_ms, w->c->count,
			       on_entry, &gc, err, sizeof err);
	if (n > 0)
		w->stats->claimed += (uint64_t)n;
	int m = n < 0 ? n
		      : strm_read_group(w->r[g], w->c->stream, w->c->group, w->c->consumer, w->c->count, block_ms,
					on_entry, &gc, err, sizeof err);
	if (n < 0 || m < 0) {
		if (*w->stop)
			return 0;
		if (!gc.failed && (n < 0 ? n : m) != -ENOTSUP)
			say("%s", err);
		strm_redis_close(w->r[g]);
		w->r[g] = NULL;
		return -1;
	}
	return n + m;
}

int strm_ingest_run(const struct strm_ingest_conf *c, volatile sig_atomic_t *stop, struct strm_ingest_stats *st,
		    char *err, size_t errlen)
{
	struct worker w = {.c = c, .stats = st, .stop = stop};
	memset(st, 0, sizeof *st);
	int r = store_open(c->store, STORE_CREATE, &w.st, err, errlen);
	if (r < 0)
		return r;
	int any = 0;
	for (int g = 0; g < c->nredis; g++)
		any |= connect_group(&w, g) == 0;
	if (!any) {
		snprintf(err, errlen, "no Redis of the %d configured can be reached", c->nredis);
		store_close(w.st);
		return -ECONNREFUSED;
	}
	double t0 = now_s(), idle_since = t0;
	/* with several groups, a short block each, so none waits on another */
	int block_ms = c->nredis > 1 ? 200 : 1000;
	while (!*stop) {
		int got = 0, failed = 0;
		for (int g = 0; g < c->nredis && !*stop; g++) {
			int n = pass(&w, g, block_ms);
			if (n < 0)
				failed++;
			else
				got += n;
		}
		if (got)
			idle_since = now_s();
		else if (c->exit_idle_ms && (now_s() - idle_since) * 1000 >= c->exit_idle_ms)
			break;
		else if (now_s() - w.diag_last >= STRM_DIAGNOSE_IDLE_S)
			diagnose_ended(&w);
		if (failed == c->nredis)
			nap(&w, 1000);
	}
	st->seconds = now_s() - t0;
	for (int g = 0; g < c->nredis; g++)
		strm_redis_close(w.r[g]);
	store_close(w.st);
	return 0;
}
