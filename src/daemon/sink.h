/* SPDX-License-Identifier: MIT */
/*
 * Where the daemon's records go besides its own store: its sinks (docs/DAEMON.md, "Sinks").
 * Every committed interval is one node batch (store/batch.h). A sink either sees each batch in
 * memory as it commits (Prometheus: counters a scrape reads), or sends batches from its spool,
 * the store's outbox, where the interval's transaction put them (InfluxDB, Redis Streams): a
 * batch is removed only once the sink says it was delivered, so a dead server, a cut link or a
 * killed daemon delays a batch and never loses one. A batch may be delivered twice (a daemon
 * killed between the delivery and the removal); each receiver makes that count once.
 */
#ifndef IOSTRATA_DAEMON_SINK_H
#define IOSTRATA_DAEMON_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/config.h"

/* The spools' ids in the outbox (never reuse one: a spool survives the daemon). */
enum { DMN_SPOOL_NONE = 0, DMN_SPOOL_INFLUX = 1, DMN_SPOOL_REDIS = 2 };

struct dmn_sink_batch {
	uint64_t seq;
	int64_t t_ms;
	const void *data;
	size_t len;
};

struct dmn_sink {
	const char *name;
	unsigned spool;          /* DMN_SPOOL_*: NONE sees batches at their commit, else sends its spool */
	uint32_t delay_max_ms;   /* a send waits a random time in (0, delay_max_ms] (0: every interval) */
	size_t send_max_bytes;   /* batches per send, in bytes (one at least) */
	/* NONE: one committed batch */
	void (*committed)(struct dmn_sink *s, const void *data, size_t len);
	/* a spool: sends v[0..n) in seq order; returns how many were delivered from the front (0..n), or
	 * -errno with one line in err (the rest waits, retried after a back-off) */
	int (*send)(struct dmn_sink *s, const struct dmn_sink_batch *v, size_t n, char *err, size_t errlen);
	void (*free)(struct dmn_sink *s);
	void *impl;
	/* the daemon's: when it sends next, its back-off, a failure said once */
	int64_t next_ms, backoff_ms;
	int failing;
	uint64_t sent_batches, sent_msgs, send_failures;
};

/* The sinks a configuration asks for: each constructor returns NULL and says why in err when it
 * cannot start (a bad address, a password file anyone may read ...). */
struct dmn_sink *dmn_sink_influx_new(const struct dmn_config *cfg, const char *host, char *err, size_t errlen);
struct dmn_sink *dmn_sink_redis_new(const struct dmn_config *cfg, const char *host, char *err, size_t errlen);
struct dmn_sink *dmn_sink_prom_new(const struct dmn_config *cfg, const char *host, char *err, size_t errlen);

#endif
