/* SPDX-License-Identifier: MIT */
/*
 * The diagnoses `iostrata serve` makes itself (diagnoses.h): one worker thread with its own store
 * handle takes the jobs asked for, one at a time, in the order asked; the callers wait on a
 * condition variable, holding no store lock. The diagnosis itself is the store's
 * (store_diagnosis_save, store_diagnose: src/store/diagnosis.c); this file only decides where it
 * runs and where it goes. It does not diagnose jobs nobody asked for: the daemon and the ingest
 * workers do that when jobs end.
 */
#include "web/diagnoses.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/json.h"
#include "store/diagnosis.h"

/* A job asked for: made once for every caller waiting on it. */
struct want {
	int64_t key;
	const struct store_job *j; /* the first caller's row (it waits until done) */
	int done, rc;
	int final;                 /* the job ended and its report is in: its diagnosis will not change */
	char *json;                /* rc 1: the object */
	char err[256];
	unsigned waiters;
	struct want *next;
};

struct web_diag {
	char *url;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake, done;
	struct want *queue;        /* asked, not started, in order */
	struct want *busy;         /* the one being made */
	int stop, stopped;
	/* the worker's own (only it touches these) */
	struct store *st;
	int readonly;              /* writes refused: diagnoses kept in memory */
	/* a read-only store's diagnoses, the latest WEB_DIAG_KEPT (under lock) */
	struct {
		int64_t key;
		char *json;
	} kept[WEB_DIAG_KEPT];
	size_t nkept;
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The diagnosis as the store keeps its JSON (an object), made on the worker's handle. */
static int diagnose_json(struct web_diag *d, const struct store_job *j, char **json)
{
	struct store_diagnosis res;
	size_t len = 0;
	int r = store_diagnose(d->st, j, &res);
	if (r < 0)
		return r;
	FILE *f = open_memstream(json, &len);
	if (!f) {
		store_diagnosis_free(&res);
		return -ENOMEM;
	}
	struct ana_jw w = {.f = f};
	ana_jw_open(&w, NULL, '{');
	store_diagnosis_json(&w, j, &res);
	ana_jw_close(&w, '}');
	r = ferror(f) ? -ENOMEM : 1;
	fclose(f);
	store_diagnosis_free(&res);
	if (r < 0) {
		free(*json);
		*json = NULL;
	}
	return r;
}

/* Makes w (on the worker's thread, no lock held): 0 stored, 1 with w->json, or -errno. */
static int make(struct web_diag *d, struct want *w)
{
	char err[512];
	int r;
	if (!d->st) {
		/* read-write to store what it makes (a store opened read-only by serve is current:
		 * nothing to migrate); a store this user may not write is read as serve reads it */
		if (store_open(d->url, 0, &d->st, err, sizeof err) < 0) {
			if ((r = store_open(d->url, STORE_READONLY, &d->st, err, sizeof err)) < 0) {
				d->st = NULL; /* tried again for the next job (a server that was down) */
				snprintf(w->err, sizeof w->err, "%s", err);
				return r;
			}
			d->readonly = 1;
		}
	}
	/* stored only when it is final: the job ended and its report is in (the daemon's own rule,
	 * store_diag_pending: a row stored earlier would keep the job from being diagnosed at its
	 * end) */
	w->final = !w->j->running;
	if (w->final) {
		char *text = NULL;
		if ((r = store_job_report(d->st, w->key, 0, &text)) < 0)
			goto fail;
		w->final = text != NULL;
		free(text);
	}
	if (w->final && !d->readonly) {
		r = store_diagnosis_save(d->st, w->key, now_ms());
		if (r != -EACCES && r != -EROFS && r != -EPERM) {
			if (r < 0)
				goto fail;
			return 0;
		}
		d->readonly = 1; /* this user may read the store, not write it: kept in memory */
	}
	if ((r = diagnose_json(d, w->j, &w->json)) < 0)
		goto fail;
	return 1;
fail:
	snprintf(w->err, sizeof w->err, "%s", r == -ENOMEM ? "out of memory" : store_error(d->st));
	return r;
}

/* Under lock: a read-only store's diagnosis of key kept from before (a copy), or NULL. */
static char *kept_find(struct web_diag *d, int64_t key)
{
	for (size_t i = 0; i < d->nkept; i++)
		if (d->kept[i].key == key)
			return strdup(d->kept[i].json);
	return NULL;
}

/* Under lock: keeps json (a copy) as key's, the oldest leaving when full. */
static void kept_add(struct web_diag *d, int64_t key, const char *json)
{
	char *copy = strdup(json);
	if (!copy)
		return;
	if (d->nkept == WEB_DIAG_KEPT) {
		free(d->kept[0].json);
		memmove(&d->kept[0], &d->kept[1], (WEB_DIAG_KEPT - 1) * sizeof d->kept[0]);
		d->nkept--;
	}
	d->kept[d->nkept].key = key;
	d->kept[d->nkept++].json = copy;
}

static void *worker(void *arg)
{
	struct web_diag *d = arg;
	pthread_mutex_lock(&d->lock);
	for (;;) {
		while (!d->stop && !d->queue)
			pthread_cond_wait(&d->wake, &d->lock);
		if (d->stop)
			break;
		struct want *w = d->queue;
		d->queue = w->next;
		d->busy = w;
		pthread_mutex_unlock(&d->lock);
		int r = make(d, w);
		pthread_mutex_lock(&d->lock);
		/* a final diagnosis that could not be stored is kept (a running job's is not: it changes) */
		if (r == 1 && d->readonly && w->final)
			kept_add(d, w->key, w->json);
		w->rc = r;
		w->done = 1;
		d->busy = NULL;
		pthread_cond_broadcast(&d->done);
	}
	/* stopping: whoever still waits is told */
	for (struct want *w = d->queue; w; w = w->next) {
		w->rc = -ECANCELED;
		snprintf(w->err, sizeof w->err, "the server is stopping");
		w->done = 1;
	}
	d->queue = NULL;
	pthread_cond_broadcast(&d->done);
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int web_diag_start(const char *store_url, struct web_diag **out)
{
	struct web_diag *d = calloc(1, sizeof *d);
	if (!d || !(d->url = strdup(store_url))) {
		free(d);
		return -ENOMEM;
	}
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->wake, NULL);
	pthread_cond_init(&d->done, NULL);
	int r = pthread_create(&d->thread, NULL, worker, d);
	if (r) {
		pthread_cond_destroy(&d->wake);
		pthread_cond_destroy(&d->done);
		pthread_mutex_destroy(&d->lock);
		free(d->url);
		free(d);
		return -r;
	}
	*out = d;
	return 0;
}

void web_diag_stop(struct web_diag *d)
{
	if (!d || d->stopped)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = 1;
	pthread_cond_broadcast(&d->wake);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	d->stopped = 1;
}

void web_diag_free(struct web_diag *d)
{
	if (!d)
		return;
	web_diag_stop(d);
	for (size_t i = 0; i < d->nkept; i++)
		free(d->kept[i].json);
	if (d->st)
		store_close(d->st);
	pthread_cond_destroy(&d->wake);
	pthread_cond_destroy(&d->done);
	pthread_mutex_destroy(&d->lock);
	free(d->url);
	free(d);
}

int web_diag_make(struct web_diag *d, const struct store_job *j, char **json, char *err, size_t errlen)
{
	*json = NULL;
	pthread_mutex_lock(&d->lock);
	if (!j->running && (*json = kept_find(d, j->key))) {
		pthread_mutex_unlock(&d->lock);
		return 1;
	}
	/* the same job asked already (queued or being made): wait for that one */
	struct want *w = d->busy && d->busy->key == j->key ? d->busy : NULL, **tail = &d->queue;
	for (; *tail; tail = &(*tail)->next)
		if (!w && (*tail)->key == j->key)
			w = *tail;
	if (!w) {
		if (d->stop || !(w = calloc(1, sizeof *w))) {
			pthread_mutex_unlock(&d->lock);
			snprintf(err, errlen, "%s", d->stop ? "the server is stopping" : "out of memory");
			return d->stop ? -ECANCELED : -ENOMEM;
		}
		w->key = j->key;
		w->j = j;
		*tail = w;
		pthread_cond_signal(&d->wake);
	}
	w->waiters++;
	while (!w->done)
		pthread_cond_wait(&d->done, &d->lock);
	int r = w->rc;
	if (r == 1 && !(*json = strdup(w->json)))
		r = -ENOMEM;
	if (r < 0)
		snprintf(err, errlen, "%s", r == -ENOMEM && !w->err[0] ? "out of memory" : w->err);
	if (--w->waiters == 0) {
		free(w->json);
		free(w);
	}
	pthread_mutex_unlock(&d->lock);
	return r;
}
