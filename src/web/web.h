/* SPDX-License-Identifier: MIT */
/*
 * `iostrata serve`: the HTTP server of the JSON API (docs/API.md) over a store (store.h), with
 * its access rule (auth.h). This header is what the command line needs to start it; the parts
 * live in server.c (HTTP, routing, headers, static files), api.c (the endpoints), auth.c
 * (callers and tokens) and events.c (server-sent events).
 */
#ifndef IOSTRATA_WEB_WEB_H
#define IOSTRATA_WEB_WEB_H

#include <stddef.h>
#include <stdint.h>

#define WEB_DEFAULT_LISTEN "127.0.0.1:8470"

struct web_config {
	const char *listen;        /* ADDR:PORT, [V6ADDR]:PORT */
	const char *store_url;
	const char *tokens_path;   /* NULL: no tokens (only loopback callers, as loopback_user) */
	const char *loopback_user; /* NULL: the serve process's own user; "none": tokens on loopback too */
	unsigned heartbeat_s;      /* SSE comment every so many seconds without an event */
	unsigned poll_ms;          /* how often the events thread reads the jobs list */
};

/* Runs the server until SIGINT or SIGTERM. 0, or 1 (2 for bad input) with one line on stderr. */
int web_serve(const struct web_config *cfg);

#endif
