/* SPDX-License-Identifier: MIT */
/*
 * The Redis Streams sink (sink.h; seed 001's stream buffer): each send is one message, the
 * spooled batches since the last send packed and compressed (store_msg_pack), added to the node
 * group's stream with its node name and batch range, the stream trimmed to about redis_maxlen
 * entries. Sends wait a random time in (0, send_delay] (the daemon's), so a group's nodes do not
 * send at once, and one message carries many intervals. A connection is made when needed and
 * dropped on an error: the next send connects again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sink.h"
#include "store/batch.h"
#include "stream/redis.h"

struct rsink {
	struct dmn_sink base;
	struct strm_redis_conf conf;
	struct strm_redis *conn;
	char stream[256], node[256];
	uint32_t maxlen;
};

static int redis_send(struct dmn_sink *s, const struct dmn_sink_batch *v, size_t n, char *err, size_t errlen)
{
	struct rsink *rs = s->impl;
	int r;
	if (!rs->conn && (r = strm_redis_open(&rs->conf, &rs->conn, err, errlen)) < 0)
		return r;
	struct store_batch_ref *refs = calloc(n, sizeof *refs);
	if (!refs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		refs[i] = (struct store_batch_ref){v[i].data, v[i].len};
	void *msg;
	size_t len;
	r = store_msg_pack(refs, n, &msg, &len);
	free(refs);
	if (r < 0) {
		snprintf(err, errlen, "cannot pack a message: %s", strerror(-r));
		return r;
	}
	r = strm_xadd(rs->conn, rs->stream, rs->maxlen, rs->node, v[0].seq, v[n - 1].seq, n, msg, len, NULL, 0, err,
		      errlen);
	free(msg);
	if (r < 0) {
		strm_redis_close(rs->conn);
		rs->conn = NULL;
		return r;
	}
	return (int)n;
}

static void redis_free(struct dmn_sink *s)
{
	struct rsink *rs = s->impl;
	strm_redis_close(rs->conn);
	free(rs);
}

struct dmn_sink *dmn_sink_redis_new(const struct dmn_config *cfg, const char *host, char *err, size_t errlen)
{
	struct rsink *rs = calloc(1, sizeof *rs);
	if (!rs) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(rs->conf.addr, sizeof rs->conf.addr, "%s", cfg->redis);
	snprintf(rs->conf.user, sizeof rs->conf.user, "%s", cfg->redis_user);
	snprintf(rs->conf.password_file, sizeof rs->conf.password_file, "%s", cfg->redis_password_file);
	rs->conf.timeout_ms = 2000;
	snprintf(rs->stream, sizeof rs->stream, "%s", cfg->redis_stream);
	snprintf(rs->node, sizeof rs->node, "%s", host);
	rs->maxlen = cfg->redis_maxlen;
	/* a password file that is not safe stops the daemon now, not at its first send */
	if (cfg->redis_password_file[0]) {
		char pw[512];
		int r = strm_secret_read(cfg->redis_password_file, pw, sizeof pw, err, errlen);
		memset(pw, 0, sizeof pw);
		if (r < 0) {
			free(rs);
			return NULL;
		}
	}
	rs->base = (struct dmn_sink){
		.name = "redis", .spool = DMN_SPOOL_REDIS, .delay_max_ms = cfg->send_delay_ms,
		.send_max_bytes = 16u << 20, .send = redis_send, .free = redis_free, .impl = rs,
	};
	return &rs->base;
}
