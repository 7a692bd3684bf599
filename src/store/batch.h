/* SPDX-License-Identifier: MIT */
/*
 * A node batch: one committed interval of the daemon's store writes, in a compact binary form
 * that leaves the node (Redis Streams, InfluxDB, Prometheus all read it) and that an ingest
 * worker applies to another store (PostgreSQL). docs/STREAM.md gives it byte by byte:
 *
 *   "IOSB" 1 | seq | t_ms | host | records ... | END
 *
 * with only the key fields of each record, as varints, and keys that are the node's own (its
 * store's row ids). A batch is self-contained: every job, process and file it refers to is
 * defined in it before its first use (the encoder writes a file's path the first time a batch
 * uses it), so batches can be applied in any order and by any worker. The decoder trusts
 * nothing: a cut, a key never defined, a value out of range or a trailing byte is an error
 * naming the offset, and no callback has run past it.
 */
#ifndef IOSTRATA_STORE_BATCH_H
#define IOSTRATA_STORE_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

#define STORE_BATCH_MAGIC "IOSB"
#define STORE_BATCH_VERSION 3 /* 2: span records (interval rows that span a statistics interval);
				* 3: a distribution's timed requests */
#define STORE_BATCH_VERSION_MIN 1 /* the oldest a decoder still reads (a spool made before 2) */
#define STORE_BATCH_MAX (64u << 20) /* bytes of one batch, and of one string in it */

/* ---- encoding (the daemon, inside its interval's transaction) ---- */
struct store_batch;
struct store_batch *store_batch_new(void);
void store_batch_free(struct store_batch *b);
/* Starts a new batch (what was in b is dropped). */
void store_batch_start(struct store_batch *b, const char *host, uint64_t seq, int64_t t_ms, int64_t dt_ms);
/* Each appends one record: 0, or -ENOMEM / -EFBIG (past STORE_BATCH_MAX; the batch is then
 * unusable until the next start). The host of every record is the batch's. */
int store_batch_job(struct store_batch *b, const struct store_job *j);
/* A job the batch carries only if a later record uses it (a process, totals, facts, a report):
 * the daemon gives every job each interval, and an unchanged job nothing uses is not sent. */
int store_batch_job_lazy(struct store_batch *b, const struct store_job *j);
int store_batch_sched(struct store_batch *b, const struct store_job *j);
int store_batch_proc(struct store_batch *b, const struct store_proc *p); /* the cursor stays home */
/* An interval row; path is its file's (written once per batch). */
int store_batch_interval(struct store_batch *b, const struct store_interval *iv, const char *path);
/* A traced process's run; path is its file's (written once per batch, as for intervals). */
int store_batch_run(struct store_batch *b, const struct store_run *x, const char *path);
int store_batch_totals(struct store_batch *b, int64_t job_key, const int64_t bytes[STORE_NCATS],
		       const int64_t calls[STORE_NCATS]);
int store_batch_node_sec(struct store_batch *b, const struct store_node_sec *ns);
int store_batch_device(struct store_batch *b, const struct store_device_sample *d);
int store_batch_sample(struct store_batch *b, const struct store_sample *x);
int store_batch_dist(struct store_batch *b, const struct store_dist *x);
int store_batch_report(struct store_batch *b, int64_t job_key, const char *text, const char *json);
int store_batch_findings(struct store_batch *b, int64_t job_key, const char *const *findings, size_t n);
/* The records written so far (a batch of none need not be sent). */
uint64_t store_batch_records(const struct store_batch *b);
/* Ends the batch: its bytes (valid until the next start or free), or NULL after a failed append. */
const void *store_batch_finish(struct store_batch *b, size_t *len);

/* ---- decoding ---- */
/* One callback per record kind, NULL to skip the kind; a non-zero return stops the decoding and
 * is returned. Strings and structs live until the callback returns; the records' host is the
 * batch's, their t_ms/dt_ms the batch's. Keys are the node's. */
struct store_batch_visitor {
	int (*begin)(void *ctx, const char *host, uint64_t seq, int64_t t_ms, int64_t dt_ms);
	int (*job)(void *ctx, const struct store_job *j);
	int (*sched)(void *ctx, const struct store_job *j);
	int (*proc)(void *ctx, const struct store_proc *p);
	int (*file)(void *ctx, int64_t key, const char *path);
	int (*interval)(void *ctx, const struct store_interval *iv);
	int (*totals)(void *ctx, int64_t job_key, const int64_t bytes[STORE_NCATS], const int64_t calls[STORE_NCATS]);
	int (*node_sec)(void *ctx, const struct store_node_sec *ns);
	int (*device)(void *ctx, const struct store_device_sample *d);
	int (*sample)(void *ctx, const struct store_sample *x);
	int (*dist)(void *ctx, const struct store_dist *x);
	int (*report)(void *ctx, int64_t job_key, const char *text, const char *json);
	int (*findings)(void *ctx, int64_t job_key, const char *const *findings, size_t n);
	int (*run)(void *ctx, const struct store_run *x);
};

/* Checks the whole batch first (a bad one calls nothing: 0 callbacks, -EBADMSG, err names the
 * offset and the fault), then visits it: 0, -EBADMSG, -ENOMEM, or a callback's return. */
int store_batch_decode(const void *data, size_t len, const struct store_batch_visitor *v, void *ctx, char *err,
		       size_t errlen);
/* The header alone: host (into buf), seq. 0 or -EBADMSG. */
int store_batch_peek(const void *data, size_t len, char *host, size_t hostlen, uint64_t *seq);

/* ---- messages: the batches of one send, one node's, in one zstd-compressed block ----
 *   zstd( "IOSM" 1 | count | (length | batch) ... )
 * A message is hostile input to its reader: it decompresses to at most STORE_MSG_MAX bytes. */
#define STORE_MSG_MAGIC "IOSM"
#define STORE_MSG_MAX (256u << 20)
struct store_batch_ref {
	const void *data;
	size_t len;
};
/* The message of v[0..n): 0 and *out (malloc'd, *len bytes), or -ENOMEM / -ENOTSUP (no zstd). */
int store_msg_pack(const struct store_batch_ref *v, size_t n, void **out, size_t *len);
/* The batches of a message, fn per batch (not yet checked: decode each) until fn returns
 * non-zero (returned). -EBADMSG with err when the message itself is bad (nothing passed on). */
int store_msg_unpack(const void *msg, size_t len, int (*fn)(const void *batch, size_t len, void *ctx), void *ctx,
		     char *err, size_t errlen);

/* Applies a batch to a store inside the caller's transaction, the node's keys mapped to the
 * store's (job by (job, host, uid), process by (host, pid, start_ns), file by path), jobs and
 * processes written with the batch's seq; *records (when not NULL) counts the records applied. 0,
 * -EBADMSG (err says why, nothing applied), or the store's -errno (err says why). */
int store_batch_apply(struct store *s, const void *data, size_t len, uint64_t *records, char *err, size_t errlen);

#endif
