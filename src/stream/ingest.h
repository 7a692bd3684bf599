/* SPDX-License-Identifier: MIT */
/*
 * An ingest worker (`iostrata ingest`, docs/STREAM.md): one consumer of a consumer group on the
 * stream of every node group's Redis, writing what it reads into a store (PostgreSQL at a
 * facility; any store.h backend). For each entry, in one store transaction: the message
 * unpacked once, and each batch checked whole, then (its (node, seq) marked) applied unless it
 * was applied before; a bad message or batch rolls the transaction back and sends the whole entry
 * to the dead-letter stream with the reason (the worker carries on); else the transaction commits,
 * and only then the entry is acknowledged.
 * Delivery is at least once (a worker killed before its XACK leaves the entry pending, and a
 * live worker claims it with XAUTOCLAIM after claim_idle), the effect exactly once. A store that
 * fails (PostgreSQL stopped) is retried with a doubling back-off: the entries wait in Redis.
 */
#ifndef IOSTRATA_STREAM_INGEST_H
#define IOSTRATA_STREAM_INGEST_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "stream/redis.h"

#define STRM_MAX_GROUPS 16

struct strm_ingest_conf {
	char store[4096];                     /* store = URL */
	struct strm_redis_conf redis[STRM_MAX_GROUPS]; /* redis = ADDR (one line per node group) */
	int nredis;
	char stream[256];                     /* stream = iostrata:batches */
	char group[128];                      /* group = iostrata-ingest */
	char consumer[128];                   /* consumer = HOST-PID */
	int claim_idle_ms;                    /* claim_idle = 30: a pending entry older than this is claimed */
	unsigned count;                       /* count = 64: entries per read */
	int exit_idle_ms;                     /* --exit-idle: stop after this long with nothing to read (0: never) */
};

struct strm_ingest_stats {
	uint64_t entries, batches, duplicates, dead, records, claimed, store_failures;
	double seconds;
};

/* Runs until *stop (SIGTERM) or exit_idle: 0, or -errno with one line in err (the store or every
 * Redis cannot be reached at start). Progress and problems go to stderr, once each. */
int strm_ingest_run(const struct strm_ingest_conf *c, volatile sig_atomic_t *stop, struct strm_ingest_stats *st,
		    char *err, size_t errlen);

/* ended jobs an ingest worker diagnoses at most after an entry: the rest after the next ones */
#define STRM_DIAGNOSE_PER_ENTRY 16
/* and while no entry comes, this often (seconds) */
#define STRM_DIAGNOSE_IDLE_S 10

#endif
