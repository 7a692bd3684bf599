/* SPDX-License-Identifier: MIT */
/*
 * The Redis side of the stream transport (docs/STREAM.md): a connection to a node group's Redis
 * (TCP or unix socket, timeouts on connect and on every command, an ACL user whose password
 * comes from a root-only file, never from a command line), the daemon's XADD of a message, and
 * what an ingest worker does with a consumer group (XREADGROUP, XACK, XAUTOCLAIM, the
 * dead-letter stream). Errors are one line, and never hold the password.
 */
#ifndef IOSTRATA_STREAM_REDIS_H
#define IOSTRATA_STREAM_REDIS_H

#include <stddef.h>
#include <stdint.h>

struct strm_redis_conf {
	char addr[4096];      /* HOST:PORT, or unix:PATH */
	char user[64];        /* "" : the default user */
	char password_file[4096]; /* "" : no AUTH */
	int timeout_ms;       /* connect and each command */
};

struct strm_redis;

/* Reads a secret from a file that only its owner (root, or the caller) can read: 0 and the
 * first line in buf, or -errno with one line in err (naming the file, never its contents). */
int strm_secret_read(const char *path, char *buf, size_t len, char *err, size_t errlen);

/* Connects and authenticates: 0, or -errno with one line in err. */
int strm_redis_open(const struct strm_redis_conf *c, struct strm_redis **out, char *err, size_t errlen);
void strm_redis_close(struct strm_redis *r);

/* XADD stream MAXLEN ~ maxlen * node N first F last L n C data MSG: 0 and the entry's id in
 * id (when not NULL), or -errno with err. */
int strm_xadd(struct strm_redis *r, const char *stream, uint32_t maxlen, const char *node, uint64_t first,
	      uint64_t last, size_t n, const void *msg, size_t len, char *id, size_t idlen, char *err, size_t errlen);

/* One entry as a worker reads it. */
struct strm_entry {
	char id[64];
	const char *node;      /* NULL when the entry lacks the field */
	const void *data;
	size_t len;
	int has_data;
};

/* Makes the consumer group on the stream (and the stream), starting at its beginning; an existing
 * group is fine. 0 or -errno. */
int strm_group_create(struct strm_redis *r, const char *stream, const char *group, char *err, size_t errlen);
/* Reads up to count new entries for consumer (blocking up to block_ms), fn per entry (the entry
 * lives until fn returns); returns the number read, or -errno. */
int strm_read_group(struct strm_redis *r, const char *stream, const char *group, const char *consumer, unsigned count,
		    int block_ms, int (*fn)(const struct strm_entry *e, void *ctx), void *ctx, char *err, size_t errlen);
/* Claims entries pending longer than idle_ms for consumer (a dead worker's), fn per entry: the
 * number claimed, or -errno. */
int strm_autoclaim(struct strm_redis *r, const char *stream, const char *group, const char *consumer, int idle_ms,
		   unsigned count, int (*fn)(const struct strm_entry *e, void *ctx), void *ctx, char *err,
		   size_t errlen);
int strm_ack(struct strm_redis *r, const char *stream, const char *group, const char *id, char *err, size_t errlen);
/* XADD to the dead-letter stream: the entry's id, node, why, and its data. */
int strm_dead_letter(struct strm_redis *r, const char *stream, const char *id, const char *node, const char *why,
		     const void *data, size_t len, char *err, size_t errlen);

#endif
