/* SPDX-License-Identifier: MIT */
/*
 * A log's cursor: for each of its records, the last cumulative counters the daemon took (bytes,
 * calls and time per category, and the request-size histograms). The difference between a new
 * reading and the cursor is an interval's statistics; the cursor is stored with those statistics
 * in one transaction, so a daemon restarted at any moment starts from exactly what it stored:
 * nothing is counted twice or lost. Records are keyed by (record id, requesting pid): the id is
 * the hash of (layer, path), the same in the live file and the final log. Pure functions.
 */
#ifndef IOSTRATA_DAEMON_CURSOR_H
#define IOSTRATA_DAEMON_CURSOR_H

#include <stddef.h>
#include <stdint.h>

#include "iostrata/format.h"
#include "store/store.h"

/* The values a cursor keeps per record: per category (store_cat) bytes, calls and time. */
enum { DMN_V_BYTES = 0, DMN_V_CALLS = 1, DMN_V_TIME = 2 };
#define DMN_NV (STORE_NCATS * 3)
#define DMN_V(cat, what) ((cat) * 3 + (what))

struct dmn_rec {
	uint64_t id;
	int32_t pid;
	uint16_t layer;
	uint64_t v[DMN_NV];
	uint64_t rh[LOG_HIST_BUCKETS], wh[LOG_HIST_BUCKETS];
};

/* A traced thread's runs taken so far (trace.h): the next one to take is its n-th. */
struct dmn_taken {
	int32_t tid;
	uint64_t n;
};

struct dmn_cursor {
	struct dmn_rec *r; /* sorted by (id, pid) */
	size_t n, cap;
	struct dmn_taken *t; /* sorted by tid */
	size_t nt, capt;
};

/* A record's cumulative values as the cursor keeps them. */
void dmn_rec_from_log(struct dmn_rec *out, const struct log_record *r);
/* The record keyed like r, or NULL. */
const struct dmn_rec *dmn_cursor_find(const struct dmn_cursor *c, uint64_t id, int32_t pid);
/* Sets (inserts or replaces) a record: 0 or -ENOMEM. */
int dmn_cursor_set(struct dmn_cursor *c, const struct dmn_rec *r);
/* The runs of thread tid taken (0 when none), and setting it: 0 or -ENOMEM. */
uint64_t dmn_cursor_taken(const struct dmn_cursor *c, int32_t tid);
int dmn_cursor_set_taken(struct dmn_cursor *c, int32_t tid, uint64_t n);
int dmn_cursor_copy(struct dmn_cursor *dst, const struct dmn_cursor *src);
void dmn_cursor_free(struct dmn_cursor *c);
/* 1 when every value of every record is 0. */
int dmn_cursor_zero(const struct dmn_cursor *c);

/* The stored form: varints, so the zeros of histograms cost a byte each. encode returns a
 * malloc'd buffer (NULL: out of memory); decode returns 0 or -EBADMSG for bytes that are not a
 * cursor (the store is root's, but a cursor is still checked). */
void *dmn_cursor_encode(const struct dmn_cursor *c, size_t *len);
int dmn_cursor_decode(struct dmn_cursor *c, const void *buf, size_t len);

#endif
