/* SPDX-License-Identifier: MIT */
/*
 * Live updates (docs/API.md, "Events"): a thread reads the jobs list every poll interval and
 * keeps the changes (a job that appeared or whose row changed) as numbered events; each
 * /api/v1/events stream sends the ones its caller may see, and a comment line as a heartbeat.
 */
#ifndef IOSTRATA_WEB_EVENTS_H
#define IOSTRATA_WEB_EVENTS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "store/store.h"
#include "web/auth.h"

struct web_events;

/* Starts the thread; store access under *lock. 0, or -errno. */
int web_events_start(struct store *s, pthread_mutex_t *lock, unsigned poll_ms, struct web_events **out);
/* Ends the thread and every stream (they return their end at their next read); the streams'
 * threads must be gone before web_events_free. */
void web_events_stop(struct web_events *ev);
void web_events_free(struct web_events *ev);

/* One stream of one caller. */
struct web_stream;
struct web_stream *web_stream_new(struct web_events *ev, const struct web_caller *who, unsigned heartbeat_s);
/* libmicrohttpd's content reader: blocks until an event, a heartbeat or the end. */
ssize_t web_stream_read(void *cls, uint64_t pos, char *buf, size_t max);
void web_stream_free(void *cls);

#endif
