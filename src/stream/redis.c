/* SPDX-License-Identifier: MIT */
/*
 * Redis for the stream transport (redis.h), over hiredis: blocking calls with timeouts, which
 * suits both ends (the daemon sends once per delay; a worker blocks in XREADGROUP).
 */
#include "stream/redis.h"

#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

struct strm_redis {
	redisContext *c;
	char addr[4096];
};

int strm_secret_read(const char *path, char *buf, size_t len, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot read the password file: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(err, errlen, "%s: not a regular file", path);
		return -EINVAL;
	}
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 077)) {
		close(fd);
		snprintf(err, errlen, "%s: a password file must be owned by root (or this user) and readable by its owner "
			 "alone (chmod 600)", path);
		return -EPERM;
	}
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	buf[n] = 0;
	buf[strcspn(buf, "\r\n")] = 0;
	if (!buf[0]) {
		snprintf(err, errlen, "%s: empty password file", path);
		return -EINVAL;
	}
	return 0;
}

/* A reply's failure as -errno with err: NULL reply (connection), or an error reply. */
static int reply_fail(struct strm_redis *r, redisReply *rep, const char *what, char *err, size_t errlen)
{
	if (!rep) {
		snprintf(err, errlen, "redis %s: %s: %s", r->addr, what, r->c->errstr[0] ? r->c->errstr : "no reply");
		return r->c->err == REDIS_ERR_IO || r->c->err == REDIS_ERR_EOF ? -ECONNRESET : -EIO;
	}
	snprintf(err, errlen, "redis %s: %s: %.*s", r->addr, what, (int)rep->len, rep->str ? rep->str : "");
	freeReplyObject(rep);
	return -EPROTO;
}

int strm_redis_open(const struct strm_redis_conf *c, struct strm_redis **out, char *err, size_t errlen)
{
	struct strm_redis *r = calloc(1, sizeof *r);
	*out = NULL;
	if (!r)
		return -ENOMEM;
	snprintf(r->addr, sizeof r->addr, "%s", c->addr);
	struct timeval tv = {c->timeout_ms / 1000, (c->timeout_ms % 1000) * 1000};
	if (!strncmp(c->addr, "unix:", 5))
		r->c = redisConnectUnixWithTimeout(c->addr + 5, tv);
	else {
		char host[256];
		const char *colon = strrchr(c->addr, ':');
		char *end;
		long port = colon ? strtol(colon + 1, &end, 10) : 0;
		if (!colon || colon == c->addr || (size_t)(colon - c->addr) >= sizeof host || *end || port < 1 ||
		    port > 65535) {
			snprintf(err, errlen, "redis '%s': expected HOST:PORT or unix:PATH", c->addr);
			free(r);
			return -EINVAL;
		}
		snprintf(host, sizeof host, "%.*s", (int)(colon - c->addr), c->addr);
		r->c = redisConnectWithTimeout(host, (int)port, tv);
	}
	if (!r->c || r->c->err) {
		snprintf(err, errlen, "redis %s: cannot connect: %s", c->addr, r->c ? r->c->errstr : "out of memory");
		strm_redis_close(r);
		return -ECONNREFUSED;
	}
	redisSetTimeout(r->c, tv);
	if (c->password_file[0]) {
		char pw[512];
		int e = strm_secret_read(c->password_file, pw, sizeof pw, err, errlen);
		if (e < 0) {
			strm_redis_close(r);
			return e;
		}
		redisReply *rep = c->user[0] ? redisCommand(r->c, "AUTH %s %s", c->user, pw) : redisCommand(r->c, "AUTH %s", pw);
		memset(pw, 0, sizeof pw);
		if (!rep || rep->type == REDIS_REPLY_ERROR) {
			e = reply_fail(r, rep, c->user[0] ? "AUTH as the configured user" : "AUTH", err, errlen);
			strm_redis_close(r);
			return e == -EPROTO ? -EACCES : e;
		}
		freeReplyObject(rep);
	}
	*out = r;
	return 0;
}

void strm_redis_close(struct strm_redis *r)
{
	if (!r)
		return;
	if (r->c)
		redisFree(r->c);
	free(r);
}

int strm_xadd(struct strm_redis *r, const char *stream, uint32_t maxlen, const char *node, uint64_t first,
	      uint64_t last, size_t n, const void *msg, size_t len, char *id, size_t idlen, char *err, size_t errlen)
{
	redisReply *rep = redisCommand(r->c, "XADD %s MAXLEN ~ %u * node %s first %llu last %llu n %llu data %b", stream,
				       maxlen, node, (unsigned long long)first, (unsigned long long)last, (unsigned long long)n, msg, len);
	if (!rep || rep->type != REDIS_REPLY_STRING)
		return reply_fail(r, rep, "XADD", err, errlen);
	if (id)
		snprintf(id, idlen, "%s", rep->str);
	freeReplyObject(rep);
	return 0;
}

int strm_group_create(struct strm_redis *r, const char *stream, const char *group, char *err, size_t errlen)
{
	redisReply *rep = redisCommand(r->c, "XGROUP CREATE %s %s 0 MKSTREAM", stream, group);
	if (rep && rep->type == REDIS_REPLY_ERROR && rep->str && !strncmp(rep->str, "BUSYGROUP", 9)) {
		freeReplyObject(rep);
		return 0;
	}
	if (!rep || rep->type == REDIS_REPLY_ERROR)
		return reply_fail(r, rep, "XGROUP CREATE", err, errlen);
	freeReplyObject(rep);
	return 0;
}

/* Visits an array of entries [id, [field, value, ...]]: the number visited, or fn's non-zero
 * return (negative) / -EPROTO for a shape Redis does not send. */
static int visit_entries(const redisReply *arr, int (*fn)(const struct strm_entry *e, void *ctx), void *ctx)
{
	int n = 0;
	if (!arr || arr->type != REDIS_REPLY_ARRAY)
		return -EPROTO;
	for (size_t i = 0; i < arr->elements; i++) {
		const redisReply *ent = arr->element[i];
		struct strm_entry e = {0};
		if (ent->type != REDIS_REPLY_ARRAY || ent->elements != 2 || ent->element[0]->type != REDIS_REPLY_STRING)
			return -EPROTO;
		snprintf(e.id, sizeof e.id, "%s", ent->element[0]->str);
		const redisReply *fv = ent->element[1];
		if (fv->type == REDIS_REPLY_ARRAY)
			for (size_t k = 0; k + 1 < fv->elements; k += 2) {
				const redisReply *f = fv->element[k], *v = fv->element[k + 1];
				if (f->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
					continue;
				if (!strcmp(f->str, "node"))
					e.node = v->str;
				else if (!strcmp(f->str, "data")) {
					e.data = v->str;
					e.len = v->len;
					e.has_data = 1;
				}
			}
		/* an entry deleted while pending (trimmed) comes back as [id, nil]: passed on with no data */
		int rc = fn(&e, ctx);
		if (rc)
			return rc < 0 ? rc : -ECANCELED;
		n++;
	}
	return n;
}

int strm_read_group(struct strm_redis *r, const char *stream, const char *group, const char *consumer, unsigned count,
		    int block_ms, int (*fn)(const struct strm_entry *e, void *ctx), void *ctx, char *err, size_t errlen)
{
	redisReply *rep = redisCommand(r->c, "XREADGROUP GROUP %s %s COUNT %u BLOCK %d STREAMS %s >", group, consumer,
				       count, block_ms, stream);
	if (!rep || rep->type == REDIS_REPLY_ERROR)
		return reply_fail(r, rep, "XREADGROUP", err, errlen);
	int n = 0;
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 1 && rep->element[0]->type == REDIS_REPLY_ARRAY &&
	    rep->element[0]->elements == 2)
		n = visit_entries(rep->element[0]->element[1], fn, ctx);
	else if (rep->type != REDIS_REPLY_NIL)
		n = -EPROTO;
	if (n == -EPROTO)
		snprintf(err, errlen, "redis %s: XREADGROUP: a reply of an unexpected shape", r->addr);
	freeReplyObject(rep);
	return n;
}

int strm_autoclaim(struct strm_redis *r, const char *stream, const char *group, const char *consumer, int idle_ms,
		   unsigned count, int (*fn)(const struct strm_entry *e, void *ctx), void *ctx, char *err,
		   size_t errlen)
{
	redisReply *rep = redisCommand(r->c, "XAUTOCLAIM %s %s %s %d 0-0 COUNT %u", stream, group, consumer, idle_ms,
				       count);
	if (!rep || rep->type == REDIS_REPLY_ERROR)
		return reply_fail(r, rep, "XAUTOCLAIM", err, errlen);
	int n = -EPROTO;
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements >= 2)
		n = visit_entries(rep->element[1], fn, ctx);
	if (n == -EPROTO)
		snprintf(err, errlen, "redis %s: XAUTOCLAIM: a reply of an unexpected shape", r->addr);
	freeReplyObject(rep);
	return n;
}

int strm_ack(struct strm_redis *r, const char *stream, const char *group, const char *id, char *err, size_t errlen)
{
	redisReply *rep = redisCommand(r->c, "XACK %s %s %s", stream, group, id);
	if (!rep || rep->type != REDIS_REPLY_INTEGER)
		return reply_fail(r, rep, "XACK", err, errlen);
	freeReplyObject(rep);
	return 0;
}

int strm_dead_letter(struct strm_redis *r, const char *stream, const char *id, const char *node, const char *why,
		     const void *data, size_t len, char *err, size_t errlen)
{
	char dead[512];
	snprintf(dead, sizeof dead, "%s:dead", stream);
	redisReply *rep = redisCommand(r->c, "XADD %s * id %s node %s why %s data %b", dead, id, node ? node : "",
				       why, data ? data : "", data ? len : (size_t)0);
	if (!rep || rep->type != REDIS_REPLY_STRING)
		return reply_fail(r, rep, "XADD to the dead-letter stream", err, errlen);
	freeReplyObject(rep);
	return 0;
}
