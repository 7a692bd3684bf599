/* SPDX-License-Identifier: MIT */
/*
 * The endpoints of /api/v1 (docs/API.md): each reads the store through store.h for a caller and
 * answers JSON, or an error {"error": "..."} with its status. No HTTP here: server.c hands over
 * the path, the query arguments and the caller, and sends the reply.
 */
#ifndef IOSTRATA_WEB_API_H
#define IOSTRATA_WEB_API_H

#include <pthread.h>
#include <stddef.h>

#include "store/store.h"
#include "web/auth.h"
#include "web/diagnoses.h"

#define WEB_ARGS_MAX 16
struct web_args {
	size_t n;
	int too_many;
	const char *key[WEB_ARGS_MAX], *val[WEB_ARGS_MAX];
};

struct web_reply {
	unsigned status;
	char *body; /* malloc'd */
	size_t len;
};

/* The store as the endpoints reach it: its handle, the lock that every call on the handle holds,
 * and the diagnoses' worker (an endpoint that waits for it lets go of the lock meanwhile). */
struct web_store {
	struct store *s;
	pthread_mutex_t *lock;
	struct web_diag *diag;
};

/* path: what follows /api/v1 ("/jobs", "/jobs/12/series" ...). The caller holds ws->lock. */
void web_api(const struct web_store *ws, const struct web_caller *who, const char *path, const struct web_args *a,
	     struct web_reply *out);
/* An error reply: {"error": "..."}. */
void web_reply_error(struct web_reply *out, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
