/* SPDX-License-Identifier: MIT */
/*
 * Server-sent events (events.h). The store has no notification, so one thread polls it: every
 * poll_ms it lists the jobs (every user's) that run or ended in the last EV_WINDOW_MS as one-line
 * JSON rows and compares each with the row of the previous poll; a new row or a changed one
 * becomes an event, numbered, kept in a
 * ring of the last EV_RING. The first poll only sets what later polls compare with. A stream
 * starts after the newest event (it sees what changes after it connected) and sends, to a
 * caller who is not an admin, only the events of their own jobs. A stream that falls more than
 * EV_RING events behind skips to the oldest kept (the jobs list is there to catch up).
 * Streams run in their own connection threads (server.c) and wait on one condition variable.
 * The same poll reads the diagnoses with anomalies stored since the last one (the daemon's or the
 * ingest's, made when a job ended: docs/DIAGNOSIS.md): each becomes an `alert` event.
 */
#include "web/events.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <microhttpd.h>

#include "analysis/json.h"
#include "store/query.h"

#define EV_RING 256
/* The jobs a poll lists: those running or ended this recently. A job changes while it runs and
 * shortly after (its end, its scheduler's final state: daemon.c asks for 10 minutes); all of a
 * store's jobs, every second, under the store's lock, cost 3 s a poll with 100,000 jobs
 * (docs/BENCHMARKS.md, "Web") and held every API request behind them. */
#define EV_WINDOW_MS (3600 * 1000)

struct ev {
	uint64_t seq;
	uint32_t uid;
	const char *type; /* "job" or "alert" */
	char *data;
};

struct row {
	int64_t key;
	uint32_t uid;
	char *json;
	int64_t job; /* an alert's job */
};

struct web_events {
	struct store *s;
	pthread_mutex_t *store_lock;
	unsigned poll_ms;
	pthread_t thread;
	pthread_mutex_t lock; /* below */
	pthread_cond_t cond;
	int stop;
	uint64_t seq; /* the newest event's */
	struct ev ring[EV_RING];
};

struct web_stream {
	struct web_events *ev;
	struct web_caller who;
	unsigned heartbeat_s;
	uint64_t next; /* the next event to send */
	int greeted;
};

static int cmp_row(const void *a, const void *b)
{
	int64_t x = ((const struct row *)a)->key, y = ((const struct row *)b)->key;
	return x < y ? -1 : x > y;
}

struct rows {
	struct row *v;
	size_t n, cap;
	int oom;
};

/* Room for one more row and a stream for its JSON (*buf once closed), or NULL with rs->oom set. */
static FILE *row_open(struct rows *rs, char **buf, size_t *len)
{
	*buf = NULL;
	FILE *f = open_memstream(buf, len);
	if (f && rs->n == rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 64;
		struct row *v = realloc(rs->v, cap * sizeof *v);
		if (v) {
			rs->v = v;
			rs->cap = cap;
		} else {
			fclose(f);
			f = NULL;
		}
	}
	if (!f) {
		free(*buf);
		rs->oom = 1;
	}
	return f;
}

static int take_row(const struct store_job *j, void *arg)
{
	struct rows *rs = arg;
	char *buf;
	size_t len = 0;
	FILE *f = row_open(rs, &buf, &len);
	if (!f)
		return 1;
	struct ana_jw w = {.f = f, .flat = 1};
	ana_jw_open(&w, NULL, '{');
	ana_jw_i64(&w, "id", j->key);
	store_job_json(&w, j);
	ana_jw_close(&w, '}');
	fclose(f);
	rs->v[rs->n++] = (struct row){.key = j->key, .uid = j->uid, .json = buf};
	return 0;
}

static void rows_free(struct rows *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->v[i].json);
	free(rs->v);
	memset(rs, 0, sizeof *rs);
}

static void push(struct web_events *ev, const struct row *r, const char *type)
{
	pthread_mutex_lock(&ev->lock);
	struct ev *e = &ev->ring[++ev->seq % EV_RING];
	free(e->data);
	*e = (struct ev){.seq = ev->seq, .uid = r->uid, .type = type, .data = strdup(r->json)};
	pthread_cond_broadcast(&ev->cond);
	pthread_mutex_unlock(&ev->lock);
}

/* ---- alerts: diagnoses with anomalies, stored since the last poll ---- */

#define EV_ALERTS_MAX 256 /* a poll's alerts at most: more in one second wait for the next */

static int take_alert(const struct store_diag_row *d, void *arg)
{
	struct rows *rs = arg;
	char *buf;
	size_t len = 0;
	FILE *f = row_open(rs, &buf, &len);
	if (!f)
		return 1;
	struct ana_jw w = {.f = f, .flat = 1};
	ana_jw_open(&w, NULL, '{');
	ana_jw_i64(&w, "id", d->job_key);
	ana_jw_i64(&w, "diagnosed_ms", d->t_ms);
	ana_jw_u64(&w, "anomalies", d->anomalies);
	ana_jw_close(&w, '}');
	fclose(f);
	/* key: when it was diagnosed */
	rs->v[rs->n++] = (struct row){.key = d->t_ms, .uid = d->uid, .json = buf, .job = d->job_key};
	return 0;
}

/* The alerts stored at or after *since (newest first from the store), pushed oldest first; those
 * of the last poll's newest millisecond were pushed then (*seen of them, their jobs in seen_jobs). */
static void poll_alerts(struct web_events *ev, int64_t *since, int64_t *seen_jobs, size_t *nseen)
{
	struct rows cur = {0};
	pthread_mutex_lock(ev->store_lock);
	int rc = store_diag_alerts(ev->s, STORE_ANY_UID, *since, EV_ALERTS_MAX, take_alert, &cur);
	pthread_mutex_unlock(ev->store_lock);
	if (rc < 0 || cur.oom) {
		rows_free(&cur);
		return;
	}
	int64_t newest = *since;
	for (size_t i = cur.n; i-- > 0;) {
		const struct row *r = &cur.v[i];
		int dup = 0;
		for (size_t k = 0; k < *nseen && r->key == *since && !dup; k++)
			dup = seen_jobs[k] == r->job;
		if (!dup)
			push(ev, r, "alert");
		if (r->key > newest) {
			newest = r->key;
			*nseen = 0;
		}
		if (r->key == newest && *nseen < EV_ALERTS_MAX && !dup)
			seen_jobs[(*nseen)++] = r->job;
	}
	*since = newest;
	rows_free(&cur);
}

static void *poll_loop(void *arg)
{
	struct web_events *ev = arg;
	struct rows old = {0};
	int first = 1;
	int64_t alert_since = 0, seen_jobs[EV_ALERTS_MAX];
	size_t nseen = 0;
	for (;;) {
		struct rows cur = {0};
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		struct store_job_filter f = {.uid = STORE_ANY_UID,
					     .since_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 - EV_WINDOW_MS};
		pthread_mutex_lock(ev->store_lock);
		int rc = store_jobs(ev->s, &f, take_row, &cur);
		pthread_mutex_unlock(ev->store_lock);
		if (rc < 0 || cur.oom) {
			rows_free(&cur); /* the next poll compares with the last good one */
		} else {
			if (cur.n) /* no rows: no array (qsort wants one) */
				qsort(cur.v, cur.n, sizeof *cur.v, cmp_row);
			for (size_t i = 0, k = 0; i < cur.n && !first; i++) {
				while (k < old.n && old.v[k].key < cur.v[i].key)
					k++;
				if (k == old.n || old.v[k].key != cur.v[i].key || strcmp(old.v[k].json, cur.v[i].json))
					push(ev, &cur.v[i], "job");
			}
			first = 0;
			rows_free(&old);
			old = cur;
		}
		/* alerts: those stored from the server's first poll on */
		if (!alert_since)
			alert_since = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
		poll_alerts(ev, &alert_since, seen_jobs, &nseen);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += ev->poll_ms / 1000;
		until.tv_nsec += (long)(ev->poll_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L)
			until.tv_sec++, until.tv_nsec -= 1000000000L;
		pthread_mutex_lock(&ev->lock);
		while (!ev->stop && pthread_cond_timedwait(&ev->cond, &ev->lock, &until) != ETIMEDOUT)
			;
		int stop = ev->stop;
		pthread_mutex_unlock(&ev->lock);
		if (stop)
			break;
	}
	rows_free(&old);
	return NULL;
}

int web_events_start(struct store *s, pthread_mutex_t *lock, unsigned poll_ms, struct web_events **out)
{
	struct web_events *ev = calloc(1, sizeof *ev);
	if (!ev)
		return -ENOMEM;
	ev->s = s;
	ev->store_lock = lock;
	ev->poll_ms = poll_ms ? poll_ms : 1000;
	pthread_mutex_init(&ev->lock, NULL);
	pthread_cond_init(&ev->cond, NULL);
	int r = pthread_create(&ev->thread, NULL, poll_loop, ev);
	if (r) {
		free(ev);
		return -r;
	}
	*out = ev;
	return 0;
}

void web_events_stop(struct web_events *ev)
{
	if (!ev)
		return;
	pthread_mutex_lock(&ev->lock);
	ev->stop = 1;
	pthread_cond_broadcast(&ev->cond);
	pthread_mutex_unlock(&ev->lock);
	pthread_join(ev->thread, NULL);
}

void web_events_free(struct web_events *ev)
{
	if (!ev)
		return;
	for (size_t i = 0; i < EV_RING; i++)
		free(ev->ring[i].data);
	pthread_cond_destroy(&ev->cond);
	pthread_mutex_destroy(&ev->lock);
	free(ev);
}

struct web_stream *web_stream_new(struct web_events *ev, const struct web_caller *who, unsigned heartbeat_s)
{
	struct web_stream *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	st->ev = ev;
	st->who = *who;
	st->heartbeat_s = heartbeat_s ? heartbeat_s : 15;
	pthread_mutex_lock(&ev->lock);
	st->next = ev->seq + 1;
	pthread_mutex_unlock(&ev->lock);
	return st;
}

void web_stream_free(void *cls)
{
	free(cls);
}

/* Writes into buf what the stream sends next, at most max bytes: its length, 0 for nothing yet,
 * or -1 at the end. Called with ev->lock held. */
static ssize_t next_chunk(struct web_stream *st, char *buf, size_t max)
{
	struct web_events *ev = st->ev;
	if (ev->stop)
		return -1;
	if (st->next + EV_RING <= ev->seq)
		st->next = ev->seq - EV_RING + 1;
	while (st->next <= ev->seq) {
		struct ev *e = &ev->ring[st->next % EV_RING];
		if (!e->data || (!st->who.admin && e->uid != st->who.uid)) {
			st->next++;
			continue;
		}
		int n = snprintf(buf, max, "id: %" PRIu64 "\nevent: %s\ndata: %s\n\n", e->seq, e->type, e->data);
		if (n < 0 || (size_t)n >= max)
			return 0; /* the next call has room: libmicrohttpd offers its whole buffer again */
		st->next++;
		return n;
	}
	return 0;
}

ssize_t web_stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct web_stream *st = cls;
	struct web_events *ev = st->ev;
	(void)pos;
	if (!st->greeted) {
		st->greeted = 1;
		return snprintf(buf, max, ": iostrata events; heartbeat every %u s\n\n", st->heartbeat_s);
	}
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += st->heartbeat_s;
	ssize_t n;
	pthread_mutex_lock(&ev->lock);
	while ((n = next_chunk(st, buf, max)) == 0)
		if (pthread_cond_timedwait(&ev->cond, &ev->lock, &until) == ETIMEDOUT) {
			n = next_chunk(st, buf, max);
			break;
		}
	pthread_mutex_unlock(&ev->lock);
	if (n < 0)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (n == 0)
		n = snprintf(buf, max, ": heartbeat\n\n");
	return n;
}
